// SPDX-License-Identifier: GPL-2.0-only
/*
 * DMA jobs and fences (uapi/linux/mcp.h, "Buffer objects and DMA"):
 * MCP_IOC_ENGINE_INFO and MCP_IOC_DMA_SUBMIT on the host context
 * (/dev/mcp, cpu engine) and on the edu device fd (cpu and edu engines):
 * copies between kernel, user-pointer and imported BOs, edu round trips,
 * out-fences (poll, SYNC_IOC_FILE_INFO), in-fence chains, the cpu
 * engine's fault injection (debugfs cpu_engine_fault), time-outs, every
 * bad argument, closing and SIGKILL with jobs in flight, unbinding edu
 * with a job running, concurrency, the coalescing knobs, and the debugfs
 * counters returning to zero.  Documentation/dma.rst describes it all.
 */
#include "mcp_bo.h"
#include "mcp_dev.h"
#include "mcp_fence.h"

#include <pthread.h>
#include <signal.h>
#include <time.h>
#include <sys/mount.h>
#include <sys/wait.h>

#include <linux/sync_file.h>

#define CPU_FAULT		"/sys/kernel/debug/mcp/cpu_engine_fault"
#define HOST_KNOBS		MCP_SYSFS_DIR "/dma"
#define MIB			(1UL << 20)
#define MS			1000000ULL

static const char * const dma_counters[] = {
	"dma_jobs_in_flight", "bo_objects", "bo_pinned_pages", "bo_mappings",
};

static __u64 now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static int bo_create(int fd, __u64 len, __u32 *handle)
{
	struct mcp_bo_create c = { .size = sizeof(c), .length = len };
	int ret = mcp_ioctl(fd, MCP_IOC_BO_CREATE, &c);

	if (!ret)
		*handle = c.handle;
	return ret;
}

static int bo_import(int fd, int dmabuf, __u32 *handle)
{
	struct mcp_bo_import i = { .size = sizeof(i), .fd = dmabuf };
	int ret = mcp_ioctl(fd, MCP_IOC_BO_IMPORT, &i);

	if (!ret)
		*handle = i.handle;
	return ret;
}

/* Byte i of pattern seed: distinct per page and per seed. */
static void fill(void *p, size_t len, unsigned int seed)
{
	unsigned char *c = p;

	for (size_t i = 0; i < len; i++)
		c[i] = (unsigned char)(i * 31 + (i >> 12) + seed);
}

/* Index of the first byte that differs from the pattern, or -1. */
static long check(const void *p, size_t len, unsigned int seed)
{
	const unsigned char *c = p;

	for (size_t i = 0; i < len; i++)
		if (c[i] != (unsigned char)(i * 31 + (i >> 12) + seed))
			return (long)i;
	return -1;
}


/* A synchronous copy of len bytes from offset 0 to offset 0. */
static int dma_copy(int fd, __u32 engine, __u32 src, __u32 dst, __u64 len)
{
	struct mcp_dma_submit s;

	dma_arg(&s, engine, src, dst, len);
	return mcp_ioctl(fd, MCP_IOC_DMA_SUBMIT, &s);
}

/* An asynchronous job: its out-fence fd, or -errno. */
static int dma_async(int fd, struct mcp_dma_submit *s)
{
	int ret;

	s->flags |= MCP_DMA_ASYNC;
	ret = mcp_ioctl(fd, MCP_IOC_DMA_SUBMIT, s);
	return ret ? ret : s->out_fence;
}

static int engine_info(int fd, __u32 engine, struct mcp_engine_info *info)
{
	memset(info, 0, sizeof(*info));
	info->size = sizeof(*info);
	info->engine = engine;
	return mcp_ioctl(fd, MCP_IOC_ENGINE_INFO, info);
}

static int set_fault(const char *what)
{
	return mcp_write_file(CPU_FAULT, what);
}

/*
 * Runs the caller on the first CPU of the node holding BO @handle, next to
 * the worker that runs its cpu engine jobs for that node (one per context
 * and node, in submission order).  A node without CPUs leaves the
 * affinity alone.
 */
static int pin_to_bo_node(int fd, __u32 handle)
{
	struct mcp_bo_info info;
	int ret = bo_info(fd, handle, &info), cpu;

	if (ret)
		return ret;
	cpu = mcp_node_first_cpu(info.node);
	return cpu < 0 ? 0 : mcp_pin_to_cpu(cpu);
}

static void read_fault(char *buf, size_t len)
{
	if (mcp_read_file(CPU_FAULT, buf, len) < 0)
		snprintf(buf, len, "unreadable");
	buf[strcspn(buf, "\n")] = '\0';
}

static int knob_write(const char *dir, const char *knob, unsigned int val)
{
	char path[PATH_MAX], buf[32];

	snprintf(path, sizeof(path), "%s/%s", dir, knob);
	snprintf(buf, sizeof(buf), "%u", val);
	return mcp_write_file(path, buf);
}

static long long knob_read(const char *dir, const char *knob)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/%s", dir, knob);
	return mcp_read_ll(path);
}

static int has_dma(int fd)
{
	struct mcp_version v = { .size = sizeof(v) };

	return !mcp_ioctl(fd, MCP_IOC_GET_VERSION, &v) &&
	       (v.features & MCP_FEAT_DMA) && (v.features & MCP_FEAT_BUFFERS);
}

/* ---- The host context: the cpu engine ---- */

FIXTURE(host) {
	int fd;
	long long start[ARRAY_SIZE(dma_counters)];
};

FIXTURE_SETUP(host)
{
	ASSERT_EQ(0, mcp_ensure_loaded());
	self->fd = mcp_open();
	ASSERT_LE(0, self->fd) TH_LOG("open %s: %s", MCP_DEV_PATH, strerror(errno));
	ASSERT_TRUE(has_dma(self->fd)) TH_LOG("MCP_FEAT_DMA not reported");
	ASSERT_EQ(0, set_fault("none"));
	for (size_t i = 0; i < ARRAY_SIZE(dma_counters); i++)
		self->start[i] = mcp_counter(dma_counters[i]);
}

/* Everything a test made is gone once its fds are. */
FIXTURE_TEARDOWN(host)
{
	set_fault("none");
	knob_write(HOST_KNOBS, "wc_depth", 1);
	knob_write(HOST_KNOBS, "wc_timeout_us", 50);
	knob_write(HOST_KNOBS, "job_timeout_ms", 10000);
	if (self->fd >= 0)
		close(self->fd);
	for (size_t i = 0; i < ARRAY_SIZE(dma_counters); i++) {
		EXPECT_EQ(self->start[i],
			  mcp_counter_settles(dma_counters[i], self->start[i]))
			TH_LOG("debugfs counter %s", dma_counters[i]);
	}
}

TEST_F(host, engine_info)
{
	struct mcp_engine_info info;
	__u32 a, b;

	ASSERT_EQ(0, engine_info(self->fd, MCP_ENGINE_CPU, &info));
	EXPECT_STREQ("cpu", info.name);
	EXPECT_EQ(-1, info.node);
	EXPECT_EQ(0, info.max_chunk);
	EXPECT_LE(1, info.inflight);
	EXPECT_EQ(0, info.submitted);
	EXPECT_EQ(knob_read(HOST_KNOBS, "wc_depth"), info.wc_depth);
	EXPECT_EQ(knob_read(HOST_KNOBS, "wc_timeout_us"), info.wc_timeout_us);

	/* The host context has no device engine. */
	EXPECT_EQ(-ENOENT, engine_info(self->fd, MCP_ENGINE_DEVICE, &info));
	EXPECT_EQ(-ENOENT, engine_info(self->fd, 7, &info));
	info.size = sizeof(info);
	info.engine = MCP_ENGINE_CPU;
	info.flags = 1;
	EXPECT_EQ(-EINVAL, mcp_ioctl(self->fd, MCP_IOC_ENGINE_INFO, &info));

	/* Counters: one good, one failed job. */
	ASSERT_EQ(0, bo_create(self->fd, 4096, &a));
	ASSERT_EQ(0, bo_create(self->fd, 4096, &b));
	ASSERT_EQ(0, dma_copy(self->fd, MCP_ENGINE_CPU, a, b, 4096));
	ASSERT_EQ(0, set_fault("fail 1"));
	ASSERT_EQ(-EIO, dma_copy(self->fd, MCP_ENGINE_CPU, a, b, 4096));
	ASSERT_EQ(0, engine_info(self->fd, MCP_ENGINE_CPU, &info));
	EXPECT_EQ(2, info.submitted);
	EXPECT_EQ(1, info.completed);
	EXPECT_EQ(1, info.failed);
	EXPECT_EQ(0, info.timed_out);
}

/* Kernel BOs of 1 B .. 64 MiB, offsets inside them, length 0. */
TEST_F_TIMEOUT(host, cpu_copy_kernel_bos, 120)
{
	static const size_t sizes[] = { 1, 4096, 65536, MIB, 64 * MIB };

	for (size_t i = 0; i < ARRAY_SIZE(sizes); i++) {
		size_t len = sizes[i], bolen = (len + 4095) & ~4095UL;
		__u32 a, b;
		char *pa, *pb;

		ASSERT_EQ(0, bo_create(self->fd, bolen, &a));
		ASSERT_EQ(0, bo_create(self->fd, bolen, &b));
		pa = bo_mmap(self->fd, a, bolen);
		pb = bo_mmap(self->fd, b, bolen);
		ASSERT_NE(NULL, pa);
		ASSERT_NE(NULL, pb);
		fill(pa, len, i);
		ASSERT_EQ(0, dma_copy(self->fd, MCP_ENGINE_CPU, a, b, len))
			TH_LOG("%zu bytes", len);
		EXPECT_EQ(-1, check(pb, len, i)) TH_LOG("%zu bytes", len);
		munmap(pa, bolen);
		munmap(pb, bolen);
		ASSERT_EQ(0, bo_destroy(self->fd, a));
		ASSERT_EQ(0, bo_destroy(self->fd, b));
	}
}

TEST_F(host, cpu_copy_offsets_and_empty)
{
	struct mcp_dma_submit s;
	__u32 a;
	char *p;

	ASSERT_EQ(0, bo_create(self->fd, 3 * 4096, &a));
	p = bo_mmap(self->fd, a, 3 * 4096);
	ASSERT_NE(NULL, p);
	fill(p, 4096, 7);

	/* Within one BO, not overlapping, across a page boundary. */
	dma_arg(&s, MCP_ENGINE_CPU, a, a, 4000);
	s.src_offset = 10;
	s.dst_offset = 5000;
	ASSERT_EQ(0, mcp_ioctl(self->fd, MCP_IOC_DMA_SUBMIT, &s));
	EXPECT_LT(0, s.seqno);
	EXPECT_EQ(-1, s.out_fence);
	for (int i = 0; i < 4000; i++) {
		ASSERT_EQ(p[10 + i], p[5000 + i]) TH_LOG("byte %d", i);
	}

	/* A deadline as far as it gets is no time-out. */
	dma_arg(&s, MCP_ENGINE_CPU, a, a, 4096);
	s.dst_offset = 4096;
	s.deadline_ns = ~0ULL;
	EXPECT_EQ(0, mcp_ioctl(self->fd, MCP_IOC_DMA_SUBMIT, &s));

	/* Length 0, even at the very end, is a valid empty job. */
	dma_arg(&s, MCP_ENGINE_CPU, a, a, 0);
	s.src_offset = 3 * 4096;
	s.dst_offset = 3 * 4096;
	EXPECT_EQ(0, mcp_ioctl(self->fd, MCP_IOC_DMA_SUBMIT, &s));
	munmap(p, 3 * 4096);
}

/* User-pointer BOs: read-only source, writable destination. */
TEST_F_TIMEOUT(host, cpu_copy_userptr, 60)
{
	size_t len = 16 * MIB;
	char *src = mmap(NULL, len, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	char *dst = mmap(NULL, len, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	__u32 a, b;

	ASSERT_NE(MAP_FAILED, src);
	ASSERT_NE(MAP_FAILED, dst);
	fill(src, len, 3);
	memset(dst, 0, len);
	ASSERT_EQ(0, bo_userptr(self->fd, src, len, 0, &a));
	ASSERT_EQ(0, bo_userptr(self->fd, dst, len, MCP_BO_USERPTR_WRITE, &b));
	ASSERT_EQ(0, dma_copy(self->fd, MCP_ENGINE_CPU, a, b, len));
	EXPECT_EQ(-1, check(dst, len, 3));

	/* A BO pinned read-only is no destination. */
	EXPECT_EQ(-EACCES, dma_copy(self->fd, MCP_ENGINE_CPU, b, a, 4096));
	ASSERT_EQ(0, bo_destroy(self->fd, a));
	ASSERT_EQ(0, bo_destroy(self->fd, b));
	munmap(src, len);
	munmap(dst, len);
}

/* An exported BO imported on another fd, both ways. */
TEST_F(host, cpu_copy_imported_dmabuf)
{
	size_t len = 4 * MIB;
	int other = mcp_open(), dmabuf;
	__u32 a, b, imp;
	char *pa, *pb;

	ASSERT_LE(0, other);
	ASSERT_EQ(0, bo_create(other, len, &a));
	pa = bo_mmap(other, a, len);
	ASSERT_NE(NULL, pa);
	fill(pa, len, 11);
	dmabuf = bo_export(other, a);
	ASSERT_LE(0, dmabuf);
	ASSERT_EQ(0, bo_import(self->fd, dmabuf, &imp));
	close(dmabuf);

	ASSERT_EQ(0, bo_create(self->fd, len, &b));
	pb = bo_mmap(self->fd, b, len);
	ASSERT_NE(NULL, pb);
	ASSERT_EQ(0, dma_copy(self->fd, MCP_ENGINE_CPU, imp, b, len));
	EXPECT_EQ(-1, check(pb, len, 11));

	fill(pb, len, 12);
	ASSERT_EQ(0, dma_copy(self->fd, MCP_ENGINE_CPU, b, imp, len));
	EXPECT_EQ(-1, check(pa, len, 12));
	munmap(pa, len);
	munmap(pb, len);
	close(other);
}

TEST_F(host, bad_arguments)
{
	int other = mcp_open(), efd = eventfd(0, EFD_CLOEXEC);
	struct mcp_dma_submit s;
	__u32 a, b, foreign;

	ASSERT_LE(0, other);
	ASSERT_LE(0, efd);
	ASSERT_EQ(0, bo_create(self->fd, 8192, &a));
	ASSERT_EQ(0, bo_create(self->fd, 8192, &b));
	ASSERT_EQ(0, bo_create(other, 8192, &foreign));

	dma_arg(&s, MCP_ENGINE_CPU, a, b, 4096);
	s.flags = 1 << 7;
	EXPECT_EQ(-EINVAL, mcp_ioctl(self->fd, MCP_IOC_DMA_SUBMIT, &s));
	dma_arg(&s, MCP_ENGINE_CPU, a, b, 4096);
	s.reserved = 1;
	EXPECT_EQ(-EINVAL, mcp_ioctl(self->fd, MCP_IOC_DMA_SUBMIT, &s));

	dma_arg(&s, MCP_ENGINE_DEVICE, a, b, 4096);
	EXPECT_EQ(-ENOENT, mcp_ioctl(self->fd, MCP_IOC_DMA_SUBMIT, &s));
	dma_arg(&s, 2, a, b, 4096);
	EXPECT_EQ(-ENOENT, mcp_ioctl(self->fd, MCP_IOC_DMA_SUBMIT, &s));

	/* Unknown, foreign and destroyed handles. */
	EXPECT_EQ(-ENOENT, dma_copy(self->fd, MCP_ENGINE_CPU, 0, b, 1));
	EXPECT_EQ(-ENOENT, dma_copy(self->fd, MCP_ENGINE_CPU, a, 12345, 1));
	if (foreign != a && foreign != b)
		EXPECT_EQ(-ENOENT,
			  dma_copy(self->fd, MCP_ENGINE_CPU, foreign, b, 1));

	/* Past the end, and offsets that would overflow. */
	EXPECT_EQ(-EINVAL, dma_copy(self->fd, MCP_ENGINE_CPU, a, b, 8193));
	dma_arg(&s, MCP_ENGINE_CPU, a, b, 4096);
	s.src_offset = 4097;
	EXPECT_EQ(-EINVAL, mcp_ioctl(self->fd, MCP_IOC_DMA_SUBMIT, &s));
	dma_arg(&s, MCP_ENGINE_CPU, a, b, 2);
	s.dst_offset = ~0ULL;
	EXPECT_EQ(-EINVAL, mcp_ioctl(self->fd, MCP_IOC_DMA_SUBMIT, &s));
	dma_arg(&s, MCP_ENGINE_CPU, a, b, ~0ULL);
	s.src_offset = 2;
	EXPECT_EQ(-EINVAL, mcp_ioctl(self->fd, MCP_IOC_DMA_SUBMIT, &s));
	dma_arg(&s, MCP_ENGINE_CPU, a, b, 0);
	s.src_offset = 8193;
	EXPECT_EQ(-EINVAL, mcp_ioctl(self->fd, MCP_IOC_DMA_SUBMIT, &s));

	/* Overlapping ranges of one BO, by one byte. */
	dma_arg(&s, MCP_ENGINE_CPU, a, a, 4096);
	s.dst_offset = 4095;
	EXPECT_EQ(-EINVAL, mcp_ioctl(self->fd, MCP_IOC_DMA_SUBMIT, &s));
	s.dst_offset = 4096;
	EXPECT_EQ(0, mcp_ioctl(self->fd, MCP_IOC_DMA_SUBMIT, &s));

	/* In-fences that are not sync_files. */
	dma_arg(&s, MCP_ENGINE_CPU, a, b, 1);
	s.flags = MCP_DMA_IN_FENCE;
	s.in_fence = efd;
	EXPECT_EQ(-EINVAL, mcp_ioctl(self->fd, MCP_IOC_DMA_SUBMIT, &s));
	s.in_fence = -1;
	EXPECT_EQ(-EINVAL, mcp_ioctl(self->fd, MCP_IOC_DMA_SUBMIT, &s));
	s.in_fence = 4000;
	EXPECT_EQ(-EINVAL, mcp_ioctl(self->fd, MCP_IOC_DMA_SUBMIT, &s));

	/* A deadline already past fails at once, async or not. */
	dma_arg(&s, MCP_ENGINE_CPU, a, b, 1);
	s.deadline_ns = now_ns() - 1;
	EXPECT_EQ(-ETIMEDOUT, mcp_ioctl(self->fd, MCP_IOC_DMA_SUBMIT, &s));
	s.flags = MCP_DMA_ASYNC;
	s.deadline_ns = 1;
	EXPECT_EQ(-ETIMEDOUT, mcp_ioctl(self->fd, MCP_IOC_DMA_SUBMIT, &s));
	EXPECT_EQ(-1, s.out_fence);

	/* A bad argument pointer, and an async job whose copy-back fails. */
	EXPECT_EQ(-EFAULT, mcp_ioctl(self->fd, MCP_IOC_DMA_SUBMIT, NULL));
	close(efd);
	close(other);
}

/* An async job whose out-fence cannot reach the caller leaks no fd. */
TEST_F(host, async_copy_back_fault)
{
	struct mcp_dma_submit *s;
	char *page;
	__u32 a, b;
	int before, after;

	ASSERT_EQ(0, bo_create(self->fd, 4096, &a));
	ASSERT_EQ(0, bo_create(self->fd, 4096, &b));
	/* The struct readable, its page then read-only: copy-back fails. */
	page = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, page);
	s = (void *)page;
	dma_arg(s, MCP_ENGINE_CPU, a, b, 4096);
	s->flags = MCP_DMA_ASYNC;
	ASSERT_EQ(0, mprotect(page, 4096, PROT_READ));
	before = dup(0);
	close(before);
	EXPECT_EQ(-EFAULT, mcp_ioctl(self->fd, MCP_IOC_DMA_SUBMIT, s));
	after = dup(0);
	close(after);
	EXPECT_EQ(before, after) TH_LOG("an fd was left installed");
	munmap(page, 4096);
}

TEST_F(host, async_fence_poll_and_info)
{
	struct mcp_dma_submit s;
	struct sync_file_info info = { 0 };
	__u32 a, b;
	int fence;

	ASSERT_EQ(0, bo_create(self->fd, MIB, &a));
	ASSERT_EQ(0, bo_create(self->fd, MIB, &b));
	dma_arg(&s, MCP_ENGINE_CPU, a, b, MIB);
	fence = dma_async(self->fd, &s);
	ASSERT_LE(0, fence);
	EXPECT_EQ(FD_CLOEXEC, fcntl(fence, F_GETFD) & FD_CLOEXEC);
	EXPECT_EQ(1, fence_wait(fence, 5000));
	ASSERT_EQ(0, ioctl(fence, SYNC_IOC_FILE_INFO, &info));
	EXPECT_EQ(1, info.status);
	EXPECT_EQ(1, info.num_fences);

	close(fence);

	/*
	 * The farthest deadline while waiting for an in-fence is no time-out
	 * at all: the first job is held back by coalescing for 200 ms.
	 */
	ASSERT_EQ(0, knob_write(HOST_KNOBS, "wc_depth", 4));
	ASSERT_EQ(0, knob_write(HOST_KNOBS, "wc_timeout_us", 200000));
	dma_arg(&s, MCP_ENGINE_CPU, a, b, MIB);
	fence = dma_async(self->fd, &s);
	ASSERT_LE(0, fence);
	dma_arg(&s, MCP_ENGINE_CPU, b, a, MIB);
	s.flags = MCP_DMA_IN_FENCE;
	s.in_fence = fence;
	s.deadline_ns = ~0ULL;
	EXPECT_EQ(0, mcp_ioctl(self->fd, MCP_IOC_DMA_SUBMIT, &s));
	EXPECT_EQ(1, fence_status(fence));
	close(fence);
}

/* The second online node, or the first when there is one. */
static int other_node(void)
{
	unsigned char online[64] = { 0 };
	char buf[256];

	if (mcp_read_file("/sys/devices/system/node/has_cpu", buf,
			  sizeof(buf)) > 0 &&
	    mcp_parse_list(buf, online, 64) >= 0)
		for (int n = 1; n < 64; n++)
			if (online[n])
				return n;
	return 0;
}

static int bo_create_on(int fd, __u64 len, int node, __u32 *handle)
{
	struct mcp_bo_create c = {
		.size = sizeof(c), .flags = MCP_BO_NODE, .length = len,
		.node = node,
	};
	int ret = mcp_ioctl(fd, MCP_IOC_BO_CREATE, &c);

	if (!ret)
		*handle = c.handle;
	return ret;
}

/*
 * 100 jobs, each waiting for the one before: job i copies slot i to slot
 * i + 1, alternating between a BO on node 0 and one on another node, so
 * the jobs run on two cpu workers and only the fences order them.  The
 * first waits for a 64 MiB copy on node 0's worker, and a job that ran
 * early would copy a zero.
 */
TEST_F_TIMEOUT(host, in_fence_chain_of_100, 60)
{
	const int n = 100;
	int node = other_node(), prev, fence;
	struct mcp_dma_submit s;
	__u64 *slots[2];
	__u32 bo[2], g1, g2;

	if (!node)
		TH_LOG("one node with CPUs: both BOs on node 0, one worker");
	ASSERT_EQ(0, bo_create_on(self->fd, 4096, 0, &bo[0]));
	ASSERT_EQ(0, bo_create_on(self->fd, 4096, node, &bo[1]));
	ASSERT_EQ(0, bo_create_on(self->fd, 64 * MIB, 0, &g1));
	ASSERT_EQ(0, bo_create_on(self->fd, 64 * MIB, 0, &g2));
	for (int i = 0; i < 2; i++) {
		slots[i] = bo_mmap(self->fd, bo[i], 4096);
		ASSERT_NE(NULL, slots[i]);
	}
	slots[0][0] = 0x1122334455667788ULL;

	dma_arg(&s, MCP_ENGINE_CPU, g1, g2, 64 * MIB);
	prev = dma_async(self->fd, &s);
	ASSERT_LE(0, prev);
	for (int i = 0; i < n; i++) {
		dma_arg(&s, MCP_ENGINE_CPU, bo[i % 2], bo[(i + 1) % 2], 8);
		s.src_offset = 8 * i;
		s.dst_offset = 8 * (i + 1);
		s.flags = MCP_DMA_IN_FENCE;
		s.in_fence = prev;
		fence = dma_async(self->fd, &s);
		ASSERT_LE(0, fence) TH_LOG("job %d: %s", i, strerror(-fence));
		close(prev);
		prev = fence;
	}
	EXPECT_EQ(1, fence_wait(prev, 20000));
	EXPECT_EQ(1, fence_status(prev));
	close(prev);
	for (int i = 1; i <= n; i++) {
		ASSERT_EQ(slots[0][0], slots[i % 2][i]) TH_LOG("slot %d", i);
	}
	munmap(slots[0], 4096);
	munmap(slots[1], 4096);
}

/* A failed in-fence cancels the job that waits for it. */
TEST_F(host, in_fence_error_cancels)
{
	struct mcp_dma_submit s;
	int first, second;
	__u32 a, b;

	ASSERT_EQ(0, bo_create(self->fd, 4096, &a));
	ASSERT_EQ(0, bo_create(self->fd, 4096, &b));
	ASSERT_EQ(0, set_fault("fail 1"));
	dma_arg(&s, MCP_ENGINE_CPU, a, b, 4096);
	first = dma_async(self->fd, &s);
	ASSERT_LE(0, first);
	dma_arg(&s, MCP_ENGINE_CPU, a, b, 4096);
	s.flags = MCP_DMA_IN_FENCE;
	s.in_fence = first;
	second = dma_async(self->fd, &s);
	ASSERT_LE(0, second);
	EXPECT_EQ(1, fence_wait(second, 5000));
	EXPECT_EQ(-EIO, fence_status(first));
	EXPECT_EQ(-ECANCELED, fence_status(second));
	close(first);
	close(second);
	/* Sync: the in-fence's error is the job's. */
	dma_arg(&s, MCP_ENGINE_CPU, a, b, 4096);
	ASSERT_EQ(0, set_fault("fail 1"));
	first = dma_async(self->fd, &s);
	ASSERT_LE(0, first);
	dma_arg(&s, MCP_ENGINE_CPU, a, b, 4096);
	s.flags = MCP_DMA_IN_FENCE;
	s.in_fence = first;
	EXPECT_EQ(-ECANCELED, mcp_ioctl(self->fd, MCP_IOC_DMA_SUBMIT, &s));
	close(first);
}

/* A job whose in-fence is late fails at its own deadline. */
TEST_F(host, in_fence_past_deadline)
{
	struct mcp_dma_submit s;
	int first, second;
	__u64 t0;
	__u32 a, b;

	ASSERT_EQ(0, bo_create(self->fd, 4096, &a));
	ASSERT_EQ(0, bo_create(self->fd, 4096, &b));
	ASSERT_EQ(0, set_fault("stall 1"));
	dma_arg(&s, MCP_ENGINE_CPU, a, b, 4096);
	s.deadline_ns = now_ns() + 5000 * MS;
	first = dma_async(self->fd, &s);
	ASSERT_LE(0, first);

	dma_arg(&s, MCP_ENGINE_CPU, a, b, 4096);
	s.flags = MCP_DMA_IN_FENCE;
	s.in_fence = first;
	t0 = now_ns();
	s.deadline_ns = t0 + 200 * MS;
	second = dma_async(self->fd, &s);
	ASSERT_LE(0, second);
	EXPECT_EQ(1, fence_wait(second, 3000));
	EXPECT_LE(190 * MS, now_ns() - t0);
	EXPECT_GT(2000 * MS, now_ns() - t0);
	EXPECT_EQ(-ETIMEDOUT, fence_status(second));
	EXPECT_EQ(0, fence_status(first)) TH_LOG("the stalled job ended early");

	/* Synchronous, the same. */
	dma_arg(&s, MCP_ENGINE_CPU, a, b, 4096);
	s.flags = MCP_DMA_IN_FENCE;
	s.in_fence = first;
	s.deadline_ns = now_ns() + 100 * MS;
	EXPECT_EQ(-ETIMEDOUT, mcp_ioctl(self->fd, MCP_IOC_DMA_SUBMIT, &s));
	close(second);
	close(first);
}

TEST_F(host, fault_injection_fail_stall_recover)
{
	struct mcp_engine_info info;
	struct mcp_dma_submit s;
	char state[64];
	__u64 t0, took;
	__u32 a, b;

	ASSERT_EQ(0, bo_create(self->fd, 4096, &a));
	ASSERT_EQ(0, bo_create(self->fd, 4096, &b));

	EXPECT_EQ(-EINVAL, set_fault("bogus"));
	EXPECT_EQ(-EINVAL, set_fault("fail 0"));
	EXPECT_EQ(-EINVAL, set_fault("fail"));
	EXPECT_EQ(-EINVAL, set_fault("none 3"));
	ASSERT_EQ(0, set_fault("fail 2"));
	read_fault(state, sizeof(state));
	EXPECT_STREQ("fail 2", state);
	/* The second job from now fails, then all is well. */
	EXPECT_EQ(0, dma_copy(self->fd, MCP_ENGINE_CPU, a, b, 4096));
	read_fault(state, sizeof(state));
	EXPECT_STREQ("fail 1", state);
	EXPECT_EQ(-EIO, dma_copy(self->fd, MCP_ENGINE_CPU, a, b, 4096));
	read_fault(state, sizeof(state));
	EXPECT_STREQ("none", state);
	EXPECT_EQ(0, dma_copy(self->fd, MCP_ENGINE_CPU, a, b, 4096));

	/* A stalled job times out at its deadline; the next one runs. */
	ASSERT_EQ(0, set_fault("stall 1"));
	dma_arg(&s, MCP_ENGINE_CPU, a, b, 4096);
	t0 = now_ns();
	s.deadline_ns = t0 + 200 * MS;
	EXPECT_EQ(-ETIMEDOUT, mcp_ioctl(self->fd, MCP_IOC_DMA_SUBMIT, &s));
	took = now_ns() - t0;
	EXPECT_LE(190 * MS, took);
	EXPECT_GT(3000 * MS, took);
	EXPECT_EQ(0, dma_copy(self->fd, MCP_ENGINE_CPU, a, b, 4096));

	/* The default deadline is job_timeout_ms. */
	ASSERT_EQ(0, knob_write(HOST_KNOBS, "job_timeout_ms", 300));
	ASSERT_EQ(0, set_fault("stall 1"));
	t0 = now_ns();
	EXPECT_EQ(-ETIMEDOUT, dma_copy(self->fd, MCP_ENGINE_CPU, a, b, 4096));
	took = now_ns() - t0;
	EXPECT_LE(290 * MS, took);
	EXPECT_GT(3000 * MS, took);

	ASSERT_EQ(0, engine_info(self->fd, MCP_ENGINE_CPU, &info));
	EXPECT_EQ(6, info.submitted);
	EXPECT_EQ(3, info.completed);
	EXPECT_EQ(3, info.failed);
	EXPECT_EQ(2, info.timed_out);
}

/* BOs destroyed while a job uses them: the job keeps the memory. */
TEST_F(host, destroy_bo_in_flight)
{
	struct mcp_dma_submit s;
	struct mcp_bo_info info;
	__u32 a, b;
	int fence;

	ASSERT_EQ(0, bo_create(self->fd, MIB, &a));
	ASSERT_EQ(0, bo_create(self->fd, MIB, &b));
	ASSERT_EQ(0, set_fault("stall 1"));
	dma_arg(&s, MCP_ENGINE_CPU, a, b, MIB);
	s.deadline_ns = now_ns() + 500 * MS;
	fence = dma_async(self->fd, &s);
	ASSERT_LE(0, fence);
	ASSERT_EQ(0, bo_info(self->fd, a, &info));
	EXPECT_EQ(1, info.jobs);
	ASSERT_EQ(0, bo_destroy(self->fd, a));
	ASSERT_EQ(0, bo_destroy(self->fd, b));
	EXPECT_EQ(-ENOENT, dma_copy(self->fd, MCP_ENGINE_CPU, a, b, 1));
	EXPECT_EQ(1, fence_wait(fence, 5000));
	EXPECT_EQ(-ETIMEDOUT, fence_status(fence));
	close(fence);
}

/* Closing the fd cancels what waits and ends what runs, at once. */
TEST_F(host, close_with_jobs_in_flight)
{
	int fences[20], n = 0;
	struct mcp_dma_submit s;
	__u64 t0;
	__u32 a, b;

	ASSERT_EQ(0, bo_create(self->fd, MIB, &a));
	ASSERT_EQ(0, bo_create(self->fd, MIB, &b));
	/* The first job submitted must be the first to run: the stall. */
	ASSERT_EQ(0, pin_to_bo_node(self->fd, a));
	ASSERT_EQ(0, set_fault("stall 1"));
	/* A long stall, and jobs behind it on its worker and its fence. */
	dma_arg(&s, MCP_ENGINE_CPU, a, b, MIB);
	s.deadline_ns = now_ns() + 60000 * MS;
	fences[n++] = dma_async(self->fd, &s);
	ASSERT_LE(0, fences[0]);
	while (n < 20) {
		dma_arg(&s, MCP_ENGINE_CPU, a, b, MIB);
		if (n % 2) {
			s.flags = MCP_DMA_IN_FENCE;
			s.in_fence = fences[0];
		}
		fences[n] = dma_async(self->fd, &s);
		ASSERT_LE(0, fences[n]);
		n++;
	}
	usleep(50000);
	t0 = now_ns();
	close(self->fd);
	self->fd = -1;
	EXPECT_GT(2000 * MS, now_ns() - t0) TH_LOG("close waited for the stall");
	/*
	 * The stall and the jobs waiting for it are cancelled; the others
	 * ran, or were cancelled if they queued behind the stall (on the
	 * worker of the CPU the test ran on).
	 */
	for (int i = 0; i < n; i++) {
		int status;

		EXPECT_EQ(1, fence_wait(fences[i], 1000)) TH_LOG("fence %d", i);
		status = fence_status(fences[i]);
		if (i == 0 || i % 2) {
			EXPECT_EQ(-ECANCELED, status) TH_LOG("fence %d", i);
		} else {
			EXPECT_TRUE(status == 1 || status == -ECANCELED)
				TH_LOG("fence %d: status %d", i, status);
		}
		close(fences[i]);
	}
	EXPECT_EQ(0, mcp_counter_settles("dma_jobs_in_flight", 0));
}

/* A process killed in a synchronous wait: the wait ends, nothing leaks. */
TEST_F(host, sigkill_in_sync_wait)
{
	int ready[2], status;
	__u64 t0;
	pid_t pid;
	char c;

	ASSERT_EQ(0, pipe(ready));
	ASSERT_EQ(0, set_fault("stall 1"));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		int fd = mcp_open();
		struct mcp_dma_submit s;
		__u32 a, b;

		if (fd < 0 || bo_create(fd, MIB, &a) || bo_create(fd, MIB, &b))
			_exit(1);
		dma_arg(&s, MCP_ENGINE_CPU, a, b, MIB);
		s.deadline_ns = now_ns() + 60000 * MS;
		if (write(ready[1], "r", 1) != 1)
			_exit(1);
		mcp_ioctl(fd, MCP_IOC_DMA_SUBMIT, &s);
		_exit(2);
	}
	close(ready[1]);
	ASSERT_EQ(1, read(ready[0], &c, 1));
	usleep(200000);
	t0 = now_ns();
	kill(pid, SIGKILL);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFSIGNALED(status));
	EXPECT_GT(3000 * MS, now_ns() - t0) TH_LOG("the killed wait lingered");
	close(ready[0]);
}

struct worker_arg {
	int fd;
	int jobs;
	int failed;
	unsigned int seed;
};

static void *copy_worker(void *p)
{
	struct worker_arg *w = p;
	__u32 a, b;
	char *pa, *pb;

	if (bo_create(w->fd, 4096, &a) || bo_create(w->fd, 4096, &b)) {
		w->failed = w->jobs;
		return NULL;
	}
	pa = bo_mmap(w->fd, a, 4096);
	pb = bo_mmap(w->fd, b, 4096);
	if (!pa || !pb) {
		w->failed = w->jobs;
		return NULL;
	}
	for (int i = 0; i < w->jobs; i++) {
		fill(pa, 4096, w->seed + i);
		if (dma_copy(w->fd, MCP_ENGINE_CPU, a, b, 4096) ||
		    check(pb, 4096, w->seed + i) != -1)
			w->failed++;
	}
	munmap(pa, 4096);
	munmap(pb, 4096);
	bo_destroy(w->fd, a);
	bo_destroy(w->fd, b);
	return NULL;
}

TEST_F_TIMEOUT(host, threads_8_by_1000, 300)
{
	struct worker_arg w[8];
	pthread_t t[8];
	struct mcp_engine_info info;

	for (int i = 0; i < 8; i++) {
		w[i] = (struct worker_arg){ .fd = self->fd, .jobs = 1000,
					    .seed = i * 1000 };
		ASSERT_EQ(0, pthread_create(&t[i], NULL, copy_worker, &w[i]));
	}
	for (int i = 0; i < 8; i++) {
		pthread_join(t[i], NULL);
		EXPECT_EQ(0, w[i].failed) TH_LOG("thread %d", i);
	}
	ASSERT_EQ(0, engine_info(self->fd, MCP_ENGINE_CPU, &info));
	EXPECT_EQ(8000, info.submitted);
	EXPECT_EQ(8000, info.completed);
}

TEST_F(host, coalescing_knobs)
{
	struct mcp_engine_info info;
	struct mcp_dma_submit s;
	int fences[4];
	__u64 t0;
	__u32 a, b;

	/* Ranges: 1 .. 256 jobs, 1 us .. 1 s, 1 ms .. 10 min. */
	EXPECT_NE(0, knob_write(HOST_KNOBS, "wc_depth", 0));
	EXPECT_NE(0, knob_write(HOST_KNOBS, "wc_depth", 257));
	EXPECT_NE(0, knob_write(HOST_KNOBS, "wc_timeout_us", 0));
	EXPECT_NE(0, knob_write(HOST_KNOBS, "wc_timeout_us", 1000001));
	EXPECT_NE(0, knob_write(HOST_KNOBS, "job_timeout_ms", 0));
	EXPECT_NE(0, mcp_write_file(HOST_KNOBS "/wc_depth", "four"));
	EXPECT_EQ(1, knob_read(HOST_KNOBS, "wc_depth"));

	ASSERT_EQ(0, knob_write(HOST_KNOBS, "wc_depth", 4));
	ASSERT_EQ(0, knob_write(HOST_KNOBS, "wc_timeout_us", 1000000));
	ASSERT_EQ(0, engine_info(self->fd, MCP_ENGINE_CPU, &info));
	EXPECT_EQ(4, info.wc_depth);
	EXPECT_EQ(1000000, info.wc_timeout_us);

	ASSERT_EQ(0, bo_create(self->fd, 4096, &a));
	ASSERT_EQ(0, bo_create(self->fd, 4096, &b));
	/* Three jobs stay queued; the fourth hands all four over. */
	for (int i = 0; i < 3; i++) {
		dma_arg(&s, MCP_ENGINE_CPU, a, b, 4096);
		fences[i] = dma_async(self->fd, &s);
		ASSERT_LE(0, fences[i]);
	}
	usleep(200000);
	for (int i = 0; i < 3; i++) {
		EXPECT_EQ(0, fence_status(fences[i])) TH_LOG("job %d ran early", i);
	}
	dma_arg(&s, MCP_ENGINE_CPU, a, b, 4096);
	fences[3] = dma_async(self->fd, &s);
	ASSERT_LE(0, fences[3]);
	for (int i = 0; i < 4; i++) {
		EXPECT_EQ(1, fence_wait(fences[i], 500)) TH_LOG("job %d", i);
		close(fences[i]);
	}

	/* One job alone waits for the time-out. */
	ASSERT_EQ(0, knob_write(HOST_KNOBS, "wc_timeout_us", 300000));
	t0 = now_ns();
	EXPECT_EQ(0, dma_copy(self->fd, MCP_ENGINE_CPU, a, b, 4096));
	EXPECT_LE(290 * MS, now_ns() - t0);

	/* Depth 1: no waiting. */
	ASSERT_EQ(0, knob_write(HOST_KNOBS, "wc_depth", 1));
	t0 = now_ns();
	EXPECT_EQ(0, dma_copy(self->fd, MCP_ENGINE_CPU, a, b, 4096));
	EXPECT_GT(250 * MS, now_ns() - t0);
}

/* Cancelling queued jobs on close: they never reach the engine. */
TEST_F(host, close_cancels_coalesced_jobs)
{
	struct mcp_dma_submit s;
	int fences[3];
	__u32 a, b;

	ASSERT_EQ(0, knob_write(HOST_KNOBS, "wc_depth", 8));
	ASSERT_EQ(0, knob_write(HOST_KNOBS, "wc_timeout_us", 1000000));
	ASSERT_EQ(0, bo_create(self->fd, 4096, &a));
	ASSERT_EQ(0, bo_create(self->fd, 4096, &b));
	for (int i = 0; i < 3; i++) {
		dma_arg(&s, MCP_ENGINE_CPU, a, b, 4096);
		fences[i] = dma_async(self->fd, &s);
		ASSERT_LE(0, fences[i]);
	}
	close(self->fd);
	self->fd = -1;
	for (int i = 0; i < 3; i++) {
		EXPECT_EQ(-ECANCELED, fence_status(fences[i]));
		close(fences[i]);
	}
}

/* mcp:mcp_dma_submit and mcp:mcp_dma_done fire with the job's numbers. */
TEST_F(host, tracepoints_fire)
{
	const char *dir = "/sys/kernel/tracing";
	static const char * const events[] = { "mcp_dma_submit", "mcp_dma_done" };
	char path[256], want[128], *buf = malloc(1 << 16);
	struct mcp_dma_submit s;
	__u32 a, b;

	ASSERT_NE(NULL, buf);
	snprintf(path, sizeof(path), "%s/events/mcp/mcp_dma_done/enable", dir);
	if (access(path, F_OK))
		mount("tracefs", dir, "tracefs", 0, NULL);
	if (access(path, F_OK))
		SKIP(free(buf); return, "no tracefs at %s", dir);
	for (int i = 0; i < 2; i++) {
		snprintf(path, sizeof(path), "%s/events/mcp/%s/enable", dir,
			 events[i]);
		ASSERT_EQ(0, mcp_write_file(path, "1")) TH_LOG("%s", path);
	}
	snprintf(path, sizeof(path), "%s/trace", dir);
	close(open(path, O_WRONLY | O_TRUNC | O_CLOEXEC));

	ASSERT_EQ(0, bo_create(self->fd, 4096, &a));
	ASSERT_EQ(0, bo_create(self->fd, 4096, &b));
	dma_arg(&s, MCP_ENGINE_CPU, a, b, 4096);
	ASSERT_EQ(0, mcp_ioctl(self->fd, MCP_IOC_DMA_SUBMIT, &s));
	ASSERT_EQ(0, set_fault("fail 1"));
	EXPECT_EQ(-EIO, dma_copy(self->fd, MCP_ENGINE_CPU, a, b, 100));
	for (int i = 0; i < 2; i++) {
		snprintf(path, sizeof(path), "%s/events/mcp/%s/enable", dir,
			 events[i]);
		mcp_write_file(path, "0");
	}

	snprintf(path, sizeof(path), "%s/trace", dir);
	ASSERT_LT(0, mcp_read_file(path, buf, 1 << 16));
	snprintf(want, sizeof(want),
		 "mcp_dma_submit: dev=-1 engine=0 seqno=%llu length=4096 ",
		 (unsigned long long)s.seqno);
	EXPECT_NE(NULL, strstr(buf, want)) TH_LOG("no '%s' in the trace", want);
	snprintf(want, sizeof(want),
		 "mcp_dma_done: dev=-1 engine=0 seqno=%llu length=4096 error=0 ",
		 (unsigned long long)s.seqno);
	EXPECT_NE(NULL, strstr(buf, want)) TH_LOG("no '%s' in the trace", want);
	snprintf(want, sizeof(want),
		 "mcp_dma_done: dev=-1 engine=0 seqno=%llu length=100 error=-5 ",
		 (unsigned long long)s.seqno + 1);
	EXPECT_NE(NULL, strstr(buf, want)) TH_LOG("no '%s' in the trace", want);
	free(buf);
}

/* A device whose backend has no DMA engine (pci-testdev): cpu only. */
TEST_F(host, generic_device_cpu_engine_only)
{
	struct mcp_engine_info info;
	struct mcp_dev_info dinfo;
	char addr[MCP_PCI_ADDR_LEN];
	int idx, devfd;
	__u32 a, b;
	char *pa, *pb;

	if (mcp_pci_find(TESTDEV_VENDOR, TESTDEV_DEVICE, addr))
		SKIP(return, "no pci-testdev (1b36:0005) in this VM");
	ASSERT_EQ(0, mcp_testdev_bind(addr));
	idx = mcp_dev_find(self->fd, addr, &dinfo);
	ASSERT_LE(0, idx);
	devfd = mcp_dev_open(self->fd, idx);
	ASSERT_LE(0, devfd);

	EXPECT_EQ(-ENOENT, engine_info(devfd, MCP_ENGINE_DEVICE, &info));
	ASSERT_EQ(0, engine_info(devfd, MCP_ENGINE_CPU, &info));
	EXPECT_STREQ("cpu", info.name);
	ASSERT_EQ(0, bo_create(devfd, 8192, &a));
	ASSERT_EQ(0, bo_create(devfd, 8192, &b));
	EXPECT_EQ(-ENOENT, dma_copy(devfd, MCP_ENGINE_DEVICE, a, b, 8192));
	pa = bo_mmap(devfd, a, 8192);
	pb = bo_mmap(devfd, b, 8192);
	ASSERT_NE(NULL, pa);
	ASSERT_NE(NULL, pb);
	fill(pa, 8192, 77);
	EXPECT_EQ(0, dma_copy(devfd, MCP_ENGINE_CPU, a, b, 8192));
	EXPECT_EQ(-1, check(pb, 8192, 77));
	munmap(pa, 8192);
	munmap(pb, 8192);
	close(devfd);
	mcp_testdev_release(addr);
}

/* ---- The edu device fd: its DMA engine ---- */

FIXTURE(edu) {
	int fd;
	int devfd;
	int idx;
	char addr[MCP_PCI_ADDR_LEN];
	char knobs[PATH_MAX];
	struct mcp_dev_info info;
};

FIXTURE_SETUP(edu)
{
	ASSERT_EQ(0, mcp_ensure_loaded());
	self->devfd = -1;
	self->fd = mcp_open();
	ASSERT_LE(0, self->fd);
	ASSERT_TRUE(has_dma(self->fd)) TH_LOG("MCP_FEAT_DMA not reported");
	ASSERT_EQ(0, mcp_pci_find(EDU_VENDOR, EDU_DEVICE, self->addr))
		TH_LOG("no edu device in the VM");
	self->idx = mcp_dev_ensure_listed(self->fd, self->addr, &self->info);
	ASSERT_LE(0, self->idx);
	self->devfd = mcp_dev_open(self->fd, self->idx);
	ASSERT_LE(0, self->devfd);
	snprintf(self->knobs, sizeof(self->knobs), MCP_PCI_DEVICES "/%s/mcp",
		 self->addr);
}

FIXTURE_TEARDOWN(edu)
{
	knob_write(self->knobs, "wc_depth", 1);
	knob_write(self->knobs, "job_timeout_ms", 10000);
	if (self->devfd >= 0)
		close(self->devfd);
	if (self->fd >= 0)
		close(self->fd);
	EXPECT_EQ(0, mcp_counter_settles("dma_jobs_in_flight", 0));
}

TEST_F(edu, engine_info_and_knobs)
{
	struct mcp_engine_info info;
	struct stat st;
	char path[PATH_MAX + 32];

	ASSERT_EQ(0, engine_info(self->devfd, MCP_ENGINE_DEVICE, &info));
	EXPECT_STREQ("edu", info.name);
	/* Half its buffer: QEMU rejects transfers that reach its end. */
	EXPECT_EQ(2048, info.max_chunk);
	EXPECT_EQ(1, info.inflight);
	ASSERT_EQ(0, engine_info(self->devfd, MCP_ENGINE_CPU, &info));
	EXPECT_STREQ("cpu", info.name);
	EXPECT_EQ(-ENOENT, engine_info(self->devfd, 2, &info));

	for (int i = 0; i < 3; i++) {
		static const char * const knobs[] = {
			"wc_depth", "wc_timeout_us", "job_timeout_ms",
		};

		snprintf(path, sizeof(path), "%s/%s", self->knobs, knobs[i]);
		ASSERT_EQ(0, stat(path, &st)) TH_LOG("%s", path);
		EXPECT_EQ(0644, st.st_mode & 0777) TH_LOG("%s", path);
	}
	ASSERT_EQ(0, knob_write(self->knobs, "wc_depth", 3));
	ASSERT_EQ(0, engine_info(self->devfd, MCP_ENGINE_DEVICE, &info));
	EXPECT_EQ(3, info.wc_depth);
	EXPECT_NE(0, knob_write(self->knobs, "wc_depth", 0));
	EXPECT_EQ(3, knob_read(self->knobs, "wc_depth"));
}

/* RAM -> edu -> RAM: 1 B, one page (two chunks), and 32 chunks. */
TEST_F_TIMEOUT(edu, round_trips, 120)
{
	static const size_t sizes[] = { 1, 4096, 65536 };
	struct mcp_engine_info info;

	for (size_t i = 0; i < ARRAY_SIZE(sizes); i++) {
		size_t len = sizes[i], bolen = (len + 4095) & ~4095UL;
		__u32 a, b;
		char *pa, *pb;

		ASSERT_EQ(0, bo_create(self->devfd, bolen, &a));
		ASSERT_EQ(0, bo_create(self->devfd, bolen, &b));
		pa = bo_mmap(self->devfd, a, bolen);
		pb = bo_mmap(self->devfd, b, bolen);
		ASSERT_NE(NULL, pa);
		ASSERT_NE(NULL, pb);
		fill(pa, bolen, 40 + i);
		memset(pb, 0, bolen);
		ASSERT_EQ(0, dma_copy(self->devfd, MCP_ENGINE_DEVICE, a, b, len))
			TH_LOG("%zu bytes", len);
		EXPECT_EQ(-1, check(pb, len, 40 + i)) TH_LOG("%zu bytes", len);
		/* Not a byte more. */
		if (len < bolen)
			EXPECT_EQ(0, pb[len]);
		munmap(pa, bolen);
		munmap(pb, bolen);
		ASSERT_EQ(0, bo_destroy(self->devfd, a));
		ASSERT_EQ(0, bo_destroy(self->devfd, b));
	}
	ASSERT_EQ(0, engine_info(self->devfd, MCP_ENGINE_DEVICE, &info));
	EXPECT_EQ(3, info.completed);
}

/* Offsets into user-pointer BOs that straddle pages. */
TEST_F_TIMEOUT(edu, userptr_offsets, 60)
{
	size_t len = 4 * 4096;
	char *src = mmap(NULL, len, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	char *dst = mmap(NULL, len, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct mcp_dma_submit s;
	__u32 a, b;

	ASSERT_NE(MAP_FAILED, src);
	ASSERT_NE(MAP_FAILED, dst);
	fill(src, len, 5);
	memset(dst, 0, len);
	ASSERT_EQ(0, bo_userptr(self->devfd, src, len, 0, &a));
	ASSERT_EQ(0, bo_userptr(self->devfd, dst, len, MCP_BO_USERPTR_WRITE, &b));
	dma_arg(&s, MCP_ENGINE_DEVICE, a, b, 6000);
	s.src_offset = 3000;
	s.dst_offset = 5000;
	ASSERT_EQ(0, mcp_ioctl(self->devfd, MCP_IOC_DMA_SUBMIT, &s));
	for (int i = 0; i < 6000; i++) {
		ASSERT_EQ(src[3000 + i], dst[5000 + i]) TH_LOG("byte %d", i);
	}
	EXPECT_EQ(0, dst[4999]);
	EXPECT_EQ(0, dst[11000]);
	bo_destroy(self->devfd, a);
	bo_destroy(self->devfd, b);
	munmap(src, len);
	munmap(dst, len);
}

/*
 * edu takes ~100 ms per transfer: a 30 ms deadline expires mid-transfer,
 * the engine is reset, and the next job runs.
 */
TEST_F_TIMEOUT(edu, timeout_resets_engine, 60)
{
	struct mcp_engine_info info;
	struct mcp_dma_submit s;
	__u32 a, b;
	char *pa, *pb;

	ASSERT_EQ(0, bo_create(self->devfd, 4096, &a));
	ASSERT_EQ(0, bo_create(self->devfd, 4096, &b));
	pa = bo_mmap(self->devfd, a, 4096);
	pb = bo_mmap(self->devfd, b, 4096);
	ASSERT_NE(NULL, pa);
	ASSERT_NE(NULL, pb);
	dma_arg(&s, MCP_ENGINE_DEVICE, a, b, 4096);
	s.deadline_ns = now_ns() + 30 * MS;
	EXPECT_EQ(-ETIMEDOUT, mcp_ioctl(self->devfd, MCP_IOC_DMA_SUBMIT, &s));

	fill(pa, 4096, 9);
	ASSERT_EQ(0, dma_copy(self->devfd, MCP_ENGINE_DEVICE, a, b, 4096));
	EXPECT_EQ(-1, check(pb, 4096, 9));
	ASSERT_EQ(0, engine_info(self->devfd, MCP_ENGINE_DEVICE, &info));
	EXPECT_EQ(1, info.timed_out);
	EXPECT_EQ(1, info.completed);
	munmap(pa, 4096);
	munmap(pb, 4096);
}

/* Both engines of one context, chained by a fence. */
TEST_F_TIMEOUT(edu, cpu_then_edu_chain, 60)
{
	struct mcp_dma_submit s;
	__u32 a, b, c;
	char *pa, *pc;
	int f1, f2;

	ASSERT_EQ(0, bo_create(self->devfd, 8192, &a));
	ASSERT_EQ(0, bo_create(self->devfd, 8192, &b));
	ASSERT_EQ(0, bo_create(self->devfd, 8192, &c));
	pa = bo_mmap(self->devfd, a, 8192);
	pc = bo_mmap(self->devfd, c, 8192);
	ASSERT_NE(NULL, pa);
	ASSERT_NE(NULL, pc);
	fill(pa, 8192, 21);
	dma_arg(&s, MCP_ENGINE_CPU, a, b, 8192);
	f1 = dma_async(self->devfd, &s);
	ASSERT_LE(0, f1);
	dma_arg(&s, MCP_ENGINE_DEVICE, b, c, 8192);
	s.flags = MCP_DMA_IN_FENCE;
	s.in_fence = f1;
	f2 = dma_async(self->devfd, &s);
	ASSERT_LE(0, f2);
	EXPECT_EQ(1, fence_wait(f2, 10000));
	EXPECT_EQ(1, fence_status(f2));
	EXPECT_EQ(-1, check(pc, 8192, 21));
	close(f1);
	close(f2);
	munmap(pa, 8192);
	munmap(pc, 8192);
}

/* Closing the device fd stops a long edu copy between chunks. */
TEST_F_TIMEOUT(edu, close_stops_long_copy, 60)
{
	struct mcp_dma_submit s;
	__u64 t0;
	__u32 a, b;
	int fence;

	ASSERT_EQ(0, bo_create(self->devfd, 65536, &a));
	ASSERT_EQ(0, bo_create(self->devfd, 65536, &b));
	dma_arg(&s, MCP_ENGINE_DEVICE, a, b, 65536);
	fence = dma_async(self->devfd, &s);
	ASSERT_LE(0, fence);
	usleep(300000);
	t0 = now_ns();
	close(self->devfd);
	self->devfd = -1;
	/* 64 transfers of ~100 ms: the whole copy would take ~6 s. */
	EXPECT_GT(2000 * MS, now_ns() - t0) TH_LOG("close waited for the copy");
	EXPECT_EQ(1, fence_wait(fence, 1000));
	EXPECT_EQ(-ECANCELED, fence_status(fence));
	close(fence);
}

/*
 * Another context's long copy holds the shared edu engine; this one's
 * small job is queued behind it.  Closing this fd returns at once (it
 * waited for the other context's job before), the small job is cancelled
 * when the engine reaches it, and the other job is not disturbed.
 */
TEST_F_TIMEOUT(edu, close_does_not_wait_for_other_contexts, 60)
{
	struct mcp_dma_submit s;
	__u32 a, b, c, d;
	int other, long_fence, fence;
	__u64 t0;

	other = mcp_dev_open(self->fd, self->idx);
	ASSERT_LE(0, other);
	ASSERT_EQ(0, bo_create(other, 65536, &a));
	ASSERT_EQ(0, bo_create(other, 65536, &b));
	ASSERT_EQ(0, bo_create(self->devfd, 4096, &c));
	ASSERT_EQ(0, bo_create(self->devfd, 4096, &d));
	/* 16 transfers of ~100 ms each, then ours. */
	dma_arg(&s, MCP_ENGINE_DEVICE, a, b, 65536);
	long_fence = dma_async(other, &s);
	ASSERT_LE(0, long_fence);
	dma_arg(&s, MCP_ENGINE_DEVICE, c, d, 4096);
	fence = dma_async(self->devfd, &s);
	ASSERT_LE(0, fence);
	usleep(200000);

	t0 = now_ns();
	close(self->devfd);
	self->devfd = -1;
	EXPECT_GT(500 * MS, now_ns() - t0) TH_LOG("close waited for another context's job");
	EXPECT_EQ(0, fence_status(long_fence)) TH_LOG("the other job ended early");
	EXPECT_EQ(1, fence_wait(long_fence, 10000));
	EXPECT_EQ(1, fence_wait(fence, 2000));
	EXPECT_EQ(-ECANCELED, fence_status(fence));
	EXPECT_EQ(1, fence_status(long_fence));
	close(fence);
	close(long_fence);
	close(other);
}

/*
 * Unbinding edu with a job running and one queued: both fail -ENODEV,
 * the fences still answer, the device comes back.
 */
TEST_F_TIMEOUT(edu, unbind_with_jobs_in_flight, 120)
{
	struct mcp_dma_submit s;
	int f1, f2;
	__u32 a, b;

	ASSERT_EQ(0, bo_create(self->devfd, 65536, &a));
	ASSERT_EQ(0, bo_create(self->devfd, 65536, &b));
	dma_arg(&s, MCP_ENGINE_DEVICE, a, b, 65536);
	f1 = dma_async(self->devfd, &s);
	ASSERT_LE(0, f1);
	dma_arg(&s, MCP_ENGINE_DEVICE, a, b, 65536);
	f2 = dma_async(self->devfd, &s);
	ASSERT_LE(0, f2);
	usleep(300000);
	ASSERT_EQ(0, mcp_pci_unbind(self->addr));
	EXPECT_EQ(1, fence_wait(f1, 5000));
	EXPECT_EQ(1, fence_wait(f2, 5000));
	EXPECT_EQ(-ENODEV, fence_status(f1));
	EXPECT_EQ(-ENODEV, fence_status(f2));
	EXPECT_EQ(-ENODEV, dma_copy(self->devfd, MCP_ENGINE_DEVICE, a, b, 1));
	close(f1);
	close(f2);
	close(self->devfd);
	self->devfd = -1;
	ASSERT_EQ(0, mcp_pci_bind(self->addr));
	ASSERT_LE(0, mcp_dev_ensure_listed(self->fd, self->addr, &self->info));
}

MCP_TEST_MAIN
