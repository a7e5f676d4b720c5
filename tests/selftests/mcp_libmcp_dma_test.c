// SPDX-License-Identifier: GPL-2.0-only
/*
 * libmcp's buffer, DMA and fence API (the C API over mcp::Dma, Buffer and
 * Fence) and mcpctl bo/dma against the real module inside the test VM:
 * engines of the host and edu contexts, verified copies through the cpu
 * and edu engines, fences (wait, poll, status, merge, in-fence chains),
 * user-pointer buffers and the RLIMIT_MEMLOCK sentence, dma-buf export
 * and import, fault-injected failures and time-outs, and mcpctl's output.
 */
#define _GNU_SOURCE
#include <poll.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>

/* The selftest helpers and libmcp both have an mcp_open() and an
 * mcp_bar_map(): the helpers' are renamed here.
 */
#define mcp_open mcp_selftest_open
#define mcp_bar_map mcp_selftest_bar_map
#include "mcp_dev.h"
#undef mcp_open
#undef mcp_bar_map

#include <mcp/mcp.h>

#define MCPCTL_PATH	MCP_MCPCTL_PATH
#define CPU_FAULT	"/sys/kernel/debug/mcp/cpu_engine_fault"

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static void fill(unsigned char *p, size_t len, unsigned int seed)
{
	size_t i;

	for (i = 0; i < len; i++)
		p[i] = (unsigned char)(i * 131 + seed + (i >> 12));
}

static int check(const unsigned char *p, size_t len, unsigned int seed)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (p[i] != (unsigned char)(i * 131 + seed + (i >> 12)))
			return 0;
	return 1;
}

FIXTURE(dma) {
	struct mcp_device *dev;
	struct mcp_dma *host;
};

FIXTURE_SETUP(dma)
{
	ASSERT_EQ(0, mcp_ensure_loaded());
	ASSERT_EQ(0, mcp_open(NULL, &self->dev)) TH_LOG("%s", mcp_strerror_last());
	ASSERT_EQ(0, mcp_dma_open_host(self->dev, &self->host)) TH_LOG("%s", mcp_strerror_last());
}

FIXTURE_TEARDOWN(dma)
{
	mcp_write_file(CPU_FAULT, "none");
	mcp_dma_close(self->host);
	mcp_close(self->dev);
}

/* The buffer and its mapping, or a failed test. */
static struct mcp_buffer *make(struct __test_metadata *_metadata, struct mcp_dma *dma,
			       uint64_t len, unsigned char **data)
{
	struct mcp_buffer *b = NULL;
	void *p = NULL;

	EXPECT_EQ(0, mcp_buffer_create(dma, len, 0, 0, &b)) TH_LOG("%s", mcp_strerror_last());
	if (!b)
		return NULL;
	EXPECT_EQ(0, mcp_buffer_data(b, &p)) TH_LOG("%s", mcp_strerror_last());
	*data = p;
	return b;
}

TEST_F(dma, host_has_the_cpu_engine_only)
{
	struct mcp_dma_engine_info e = { .size = sizeof(e) };
	uint32_t idx = 99;

	ASSERT_EQ(0, mcp_dma_get_engine_info(self->host, MCP_DMA_ENGINE_CPU, &e));
	EXPECT_STREQ("cpu", e.name);
	EXPECT_EQ(0, e.index);
	EXPECT_LE(1, e.wc_depth);
	EXPECT_EQ(-ENOENT, mcp_dma_get_engine_info(self->host, MCP_DMA_ENGINE_DEVICE, &e));
	EXPECT_NE(NULL, strstr(mcp_strerror_last(), "has no engine 1"));
	EXPECT_EQ(0, mcp_dma_find_engine(self->host, "cpu", &idx));
	EXPECT_EQ(0, idx);
	EXPECT_EQ(-ENOENT, mcp_dma_find_engine(self->host, "edu", &idx));
	EXPECT_NE(NULL, strstr(mcp_strerror_last(), "it has cpu")) TH_LOG("%s", mcp_strerror_last());
}

TEST_F(dma, cpu_copies_kernel_buffers_sync_and_async)
{
	const uint64_t len = 4 << 20;
	struct mcp_buffer_info info = { .size = sizeof(info) };
	struct mcp_buffer *src, *dst;
	struct mcp_fence *f = NULL;
	unsigned char *s, *d;
	uint64_t seq = 0;
	int job_error = 1, status = 0;
	struct pollfd pfd;

	src = make(_metadata, self->host, len, &s);
	dst = make(_metadata, self->host, len, &d);
	ASSERT_TRUE(src && dst);
	ASSERT_EQ(0, mcp_buffer_get_info(src, &info));
	EXPECT_EQ(MCP_BUFFER_KIND_KERNEL, info.kind);
	EXPECT_EQ(len, info.length);
	EXPECT_EQ(1, info.mappable);
	fill(s, len, 1);
	ASSERT_EQ(0, mcp_dma_copy(self->host, MCP_DMA_ENGINE_CPU, src, 0, dst, 0, len, NULL, &seq))
		TH_LOG("%s", mcp_strerror_last());
	EXPECT_LT(0, seq);
	EXPECT_TRUE(check(d, len, 1));

	fill(s, len, 2);
	ASSERT_EQ(0, mcp_dma_copy_async(self->host, MCP_DMA_ENGINE_CPU, src, 4096, dst, 0,
					len - 4096, NULL, &f))
		TH_LOG("%s", mcp_strerror_last());
	pfd.fd = mcp_fence_fd(f);
	pfd.events = POLLIN;
	EXPECT_EQ(1, poll(&pfd, 1, 10000));
	EXPECT_EQ(0, mcp_fence_wait(f, 10000000000LL, &job_error));
	EXPECT_EQ(0, job_error);
	EXPECT_EQ(0, mcp_fence_status(f, &status));
	EXPECT_EQ(1, status);
	EXPECT_EQ(0, memcmp(s + 4096, d, len - 4096));
	mcp_fence_free(f);

	/* Past the end: refused by libmcp before the kernel sees it. */
	EXPECT_EQ(-EINVAL, mcp_dma_copy(self->host, 0, src, 1, dst, 0, len, NULL, NULL));
	EXPECT_NE(NULL, strstr(mcp_strerror_last(), "past a buffer's end"));
	/* Overlap in one buffer: refused by the kernel, explained by libmcp. */
	EXPECT_EQ(-EINVAL, mcp_dma_copy(self->host, 0, src, 0, src, 4096, 8192, NULL, NULL));
	EXPECT_NE(NULL, strstr(mcp_strerror_last(), "overlap")) TH_LOG("%s", mcp_strerror_last());
	mcp_buffer_free(src);
	mcp_buffer_free(dst);
}

TEST_F(dma, in_fence_chain_and_merge)
{
	const uint64_t len = 1 << 20;
	struct mcp_buffer *a, *b, *c;
	struct mcp_fence *f1 = NULL, *f2 = NULL, *m = NULL;
	struct mcp_dma_copy_opts o = { .size = sizeof(o) };
	unsigned char *pa, *pb, *pc;
	int job_error = 1;

	a = make(_metadata, self->host, len, &pa);
	b = make(_metadata, self->host, len, &pb);
	c = make(_metadata, self->host, len, &pc);
	ASSERT_TRUE(a && b && c);
	fill(pa, len, 3);
	ASSERT_EQ(0, mcp_dma_copy_async(self->host, 0, a, 0, b, 0, len, NULL, &f1));
	o.in_fence = f1;
	ASSERT_EQ(0, mcp_dma_copy_async(self->host, 0, b, 0, c, 0, len, &o, &f2))
		TH_LOG("%s", mcp_strerror_last());
	ASSERT_EQ(0, mcp_fence_merge(f1, f2, &m)) TH_LOG("%s", mcp_strerror_last());
	EXPECT_EQ(0, mcp_fence_wait(m, 10000000000LL, &job_error));
	EXPECT_EQ(0, job_error);
	EXPECT_TRUE(check(pc, len, 3)); /* b -> c ran after a -> b */
	mcp_fence_free(m);
	mcp_fence_free(f2);
	mcp_fence_free(f1);
	mcp_buffer_free(a);
	mcp_buffer_free(b);
	mcp_buffer_free(c);
}

TEST_F(dma, fault_injection_fails_and_times_out_then_recovers)
{
	const uint64_t len = 65536;
	struct mcp_buffer *a, *b;
	struct mcp_fence *f = NULL;
	struct mcp_dma_copy_opts o = { .size = sizeof(o) };
	unsigned char *pa, *pb;
	int job_error = 0, status = 0;

	if (access(CPU_FAULT, W_OK))
		SKIP(return, "%s not available", CPU_FAULT);
	a = make(_metadata, self->host, len, &pa);
	b = make(_metadata, self->host, len, &pb);
	ASSERT_TRUE(a && b);
	fill(pa, len, 4);

	ASSERT_EQ(0, mcp_write_file(CPU_FAULT, "fail 1"));
	ASSERT_EQ(0, mcp_dma_copy_async(self->host, 0, a, 0, b, 0, len, NULL, &f));
	EXPECT_EQ(0, mcp_fence_wait(f, 10000000000LL, &job_error));
	EXPECT_EQ(-EIO, job_error);
	EXPECT_EQ(0, mcp_fence_status(f, &status));
	EXPECT_EQ(-EIO, status);
	mcp_fence_free(f);

	ASSERT_EQ(0, mcp_write_file(CPU_FAULT, "stall 1"));
	o.deadline_ns = mono_ns() + 200000000ULL;
	EXPECT_EQ(-ETIMEDOUT, mcp_dma_copy(self->host, 0, a, 0, b, 0, len, &o, NULL));
	EXPECT_NE(NULL, strstr(mcp_strerror_last(), "deadline")) TH_LOG("%s", mcp_strerror_last());

	/* A fence wait shorter than the job: -ETIME, not the job's error. */
	ASSERT_EQ(0, mcp_write_file(CPU_FAULT, "stall 1"));
	o.deadline_ns = mono_ns() + 500000000ULL;
	ASSERT_EQ(0, mcp_dma_copy_async(self->host, 0, a, 0, b, 0, len, &o, &f));
	EXPECT_EQ(-ETIME, mcp_fence_wait(f, 10000000LL, &job_error));
	EXPECT_EQ(0, mcp_fence_wait(f, 10000000000LL, &job_error));
	EXPECT_EQ(-ETIMEDOUT, job_error);
	mcp_fence_free(f);

	/* The next job runs. */
	EXPECT_EQ(0, mcp_dma_copy(self->host, 0, a, 0, b, 0, len, NULL, NULL))
		TH_LOG("%s", mcp_strerror_last());
	EXPECT_TRUE(check(pb, len, 4));
	mcp_buffer_free(a);
	mcp_buffer_free(b);
}

TEST_F(dma, user_buffers_and_read_only_destination)
{
	const size_t len = 16 * 4096;
	struct mcp_buffer *k, *ro, *rw;
	struct mcp_buffer_info info = { .size = sizeof(info) };
	unsigned char *pk, *mem;
	void *p;

	mem = mmap(NULL, 2 * len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, mem);
	memset(mem, 0, 2 * len);
	k = make(_metadata, self->host, len, &pk);
	ASSERT_TRUE(k != NULL);
	ASSERT_EQ(0, mcp_buffer_from_user(self->host, mem, len, 0, &ro))
		TH_LOG("%s", mcp_strerror_last());
	ASSERT_EQ(0, mcp_buffer_from_user(self->host, mem + len, len, MCP_BUFFER_USER_WRITE, &rw));
	ASSERT_EQ(0, mcp_buffer_get_info(rw, &info));
	EXPECT_EQ(MCP_BUFFER_KIND_USER, info.kind);
	ASSERT_EQ(0, mcp_buffer_data(rw, &p));
	EXPECT_EQ(mem + len, p); /* a user buffer's data is its own memory */
	fill(pk, len, 5);
	EXPECT_EQ(0, mcp_dma_copy(self->host, 0, k, 0, rw, 0, len, NULL, NULL))
		TH_LOG("%s", mcp_strerror_last());
	EXPECT_TRUE(check(mem + len, len, 5));
	EXPECT_EQ(-EACCES, mcp_dma_copy(self->host, 0, k, 0, ro, 0, len, NULL, NULL));
	EXPECT_NE(NULL, strstr(mcp_strerror_last(), "read-only")) TH_LOG("%s", mcp_strerror_last());
	EXPECT_EQ(-EINVAL, mcp_buffer_from_user(self->host, mem + 1, len, 0, &ro));
	EXPECT_NE(NULL, strstr(mcp_strerror_last(), "page-aligned"));
	mcp_buffer_free(ro);
	mcp_buffer_free(rw);
	mcp_buffer_free(k);
	munmap(mem, 2 * len);
}

/* Over RLIMIT_MEMLOCK without CAP_IPC_LOCK: the sentence names the limit. */
TEST_F(dma, memlock_limit_is_explained)
{
	int status;
	pid_t pid = fork();

	ASSERT_LE(0, pid);
	if (pid == 0) {
		struct rlimit rl = { 8 * 4096, 8 * 4096 };
		struct mcp_buffer *b = NULL;
		size_t len = 64 * 4096;
		void *mem = mmap(NULL, len, PROT_READ | PROT_WRITE,
				 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (mem == MAP_FAILED)
			_exit(90);
		memset(mem, 1, len);
		if (mcp_drop_cap(CAP_IPC_LOCK) || setrlimit(RLIMIT_MEMLOCK, &rl))
			_exit(91);
		if (mcp_buffer_from_user(self->host, mem, len, 0, &b) != -ENOMEM)
			_exit(1);
		if (!strstr(mcp_strerror_last(), "RLIMIT_MEMLOCK (32 KiB") ||
		    !strstr(mcp_strerror_last(), "ulimit -l") ||
		    !strstr(mcp_strerror_last(), "CAP_IPC_LOCK"))
			_exit(2);
		_exit(0);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status));
}

TEST_F(dma, export_and_import_share_the_bytes)
{
	const uint64_t len = 1 << 20;
	struct mcp_device *dev2 = NULL;
	struct mcp_dma *other = NULL;
	struct mcp_buffer *a, *imp = NULL, *b;
	struct mcp_buffer_info info = { .size = sizeof(info) };
	unsigned char *pa, *pb, *pi;
	void *p;
	int fd = -1;

	a = make(_metadata, self->host, len, &pa);
	ASSERT_TRUE(a != NULL);
	fill(pa, len, 6);
	ASSERT_EQ(0, mcp_buffer_export(a, &fd)) TH_LOG("%s", mcp_strerror_last());
	ASSERT_EQ(0, mcp_open(NULL, &dev2));
	ASSERT_EQ(0, mcp_dma_open_host(dev2, &other));
	ASSERT_EQ(0, mcp_buffer_import(other, fd, &imp)) TH_LOG("%s", mcp_strerror_last());
	close(fd); /* the buffer keeps its own */
	ASSERT_EQ(0, mcp_buffer_get_info(imp, &info));
	EXPECT_EQ(MCP_BUFFER_KIND_IMPORTED, info.kind);
	EXPECT_EQ(len, info.length);
	ASSERT_EQ(0, mcp_buffer_data(imp, &p)) TH_LOG("%s", mcp_strerror_last());
	pi = p;
	EXPECT_TRUE(check(pi, len, 6));
	b = make(_metadata, other, len, &pb);
	ASSERT_TRUE(b != NULL);
	EXPECT_EQ(0, mcp_dma_copy(other, 0, imp, 0, b, 0, len, NULL, NULL))
		TH_LOG("%s", mcp_strerror_last());
	EXPECT_TRUE(check(pb, len, 6));
	/* Handles are per context: a buffer of another one is refused. */
	EXPECT_EQ(-EINVAL, mcp_dma_copy(self->host, 0, a, 0, b, 0, len, NULL, NULL));
	EXPECT_NE(NULL, strstr(mcp_strerror_last(), "buffers of that context"));
	EXPECT_EQ(-EINVAL, mcp_buffer_import(other, 0, &b));
	mcp_buffer_free(b);
	mcp_buffer_free(imp);
	mcp_dma_close(other);
	mcp_close(dev2);
	mcp_buffer_free(a);
}

FIXTURE(edu) {
	char addr[MCP_PCI_ADDR_LEN];
	struct mcp_device *dev;
	struct mcp_accel *accel;
	struct mcp_dma *dma;
};

FIXTURE_SETUP(edu)
{
	uint32_t index;

	ASSERT_EQ(0, mcp_ensure_loaded());
	ASSERT_EQ(0, mcp_pci_find(EDU_VENDOR, EDU_DEVICE, self->addr));
	if (!mcp_pci_bound(self->addr))
		ASSERT_EQ(0, mcp_pci_bind(self->addr));
	ASSERT_EQ(0, mcp_open(NULL, &self->dev));
	ASSERT_EQ(0, mcp_accel_find(self->dev, self->addr, &index));
	ASSERT_EQ(0, mcp_accel_open(self->dev, index, &self->accel));
	ASSERT_EQ(0, mcp_dma_open_accel(self->accel, &self->dma)) TH_LOG("%s", mcp_strerror_last());
}

FIXTURE_TEARDOWN(edu)
{
	mcp_dma_close(self->dma);
	mcp_accel_close(self->accel);
	mcp_close(self->dev);
}

TEST_F(edu, engines_and_round_trips)
{
	static const uint64_t sizes[] = { 1, 4096, 65536 };
	struct mcp_dma_engine_info e = { .size = sizeof(e) };
	uint32_t idx = 0;
	unsigned int i;

	ASSERT_EQ(0, mcp_dma_get_engine_info(self->dma, MCP_DMA_ENGINE_DEVICE, &e));
	EXPECT_STREQ("edu", e.name);
	EXPECT_LT(0, e.max_chunk);
	EXPECT_GE(4096, e.max_chunk); /* the window of edu is 4 KiB */
	ASSERT_EQ(0, mcp_dma_find_engine(self->dma, "edu", &idx));
	EXPECT_EQ(MCP_DMA_ENGINE_DEVICE, idx);
	EXPECT_EQ(-ENOENT, mcp_dma_get_engine_info(self->dma, 2, &e));
	for (i = 0; i < 3; i++) {
		struct mcp_buffer *src, *dst;
		unsigned char *s, *d;
		struct mcp_fence *f = NULL;
		int job_error = 1;

		src = make(_metadata, self->dma, sizes[i], &s);
		dst = make(_metadata, self->dma, sizes[i], &d);
		ASSERT_TRUE(src && dst);
		fill(s, sizes[i], 7 + i);
		EXPECT_EQ(0, mcp_dma_copy(self->dma, idx, src, 0, dst, 0, sizes[i], NULL, NULL))
			TH_LOG("%llu bytes: %s", (unsigned long long)sizes[i], mcp_strerror_last());
		EXPECT_TRUE(check(d, sizes[i], 7 + i));
		memset(d, 0, sizes[i]);
		ASSERT_EQ(0, mcp_dma_copy_async(self->dma, idx, src, 0, dst, 0, sizes[i], NULL, &f));
		EXPECT_EQ(0, mcp_fence_wait(f, 30000000000LL, &job_error));
		EXPECT_EQ(0, job_error);
		EXPECT_TRUE(check(d, sizes[i], 7 + i));
		mcp_fence_free(f);
		mcp_buffer_free(src);
		mcp_buffer_free(dst);
	}
}

/* ---- mcpctl bo / dma, as users run them ---- */


FIXTURE(mcpctl_dma) {
	char addr[MCP_PCI_ADDR_LEN];
};

FIXTURE_SETUP(mcpctl_dma)
{
	if (access(MCPCTL_PATH, X_OK))
		SKIP(return, "%s not in this image", MCPCTL_PATH);
	ASSERT_EQ(0, mcp_ensure_loaded());
	ASSERT_EQ(0, mcp_pci_find(EDU_VENDOR, EDU_DEVICE, self->addr));
	if (!mcp_pci_bound(self->addr))
		ASSERT_EQ(0, mcp_pci_bind(self->addr));
}

FIXTURE_TEARDOWN(mcpctl_dma)
{
}

TEST_F(mcpctl_dma, copy_through_edu_and_cpu)
{
	char out[4096];

	ASSERT_EQ(0, MCP_MCPCTL(out, "dma", "copy", self->addr, "--engine", "edu", "--size", "64K", "--json"))
		TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "\"engine\":\"edu\"")) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "\"bytes\":65536"));
	EXPECT_NE(NULL, strstr(out, "\"verified\":true"));
	ASSERT_EQ(0, MCP_MCPCTL(out, "dma", "copy", "host", "--size", "1M")) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "copied 1 MiB on host engine cpu")) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "verified: destination matches the source"));
	EXPECT_EQ(1, MCP_MCPCTL(out, "dma", "copy", "host", "--engine", "edu"));
	EXPECT_NE(NULL, strstr(out, "has no engine 'edu': it has cpu")) TH_LOG("%s", out);
}

TEST_F(mcpctl_dma, engines_and_bench)
{
	char out[8192];

	ASSERT_EQ(0, MCP_MCPCTL(out, "dma", "engines", self->addr, "--json")) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "\"name\":\"cpu\""));
	EXPECT_NE(NULL, strstr(out, "\"name\":\"edu\""));
	ASSERT_EQ(0, MCP_MCPCTL(out, "dma", "bench", "host", "--sizes", "64K,1M", "--jobs", "200",
			    "--reps", "2", "--json"))
		TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "\"bytes\":1048576"));
	EXPECT_NE(NULL, strstr(out, "\"count\":200"));
	EXPECT_NE(NULL, strstr(out, "\"async_jobs_per_sec\":"));
}

TEST_F(mcpctl_dma, bo_create_on_each_node_and_pin)
{
	char out[4096], node[8], want[64];
	int n;

	for (n = 0; n < 2; n++) {
		snprintf(node, sizeof(node), "%d", n);
		snprintf(want, sizeof(want), "\"node\":%d,\"node_asked\":%d", n, n);
		ASSERT_EQ(0, MCP_MCPCTL(out, "bo", "create", "host", "--size", "4M", "--node", node, "--json"))
			TH_LOG("%s", out);
		EXPECT_NE(NULL, strstr(out, want)) TH_LOG("%s", out);
		EXPECT_NE(NULL, strstr(out, "\"length\":4194304"));
	}
	ASSERT_EQ(0, MCP_MCPCTL(out, "bo", "pin", "host", "--size", "1M", "--read-only")) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "1 MiB user")) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "flags:       read-only"));
	EXPECT_EQ(1, MCP_MCPCTL(out, "bo", "create", "host", "--size", "4M", "--node", "7"));
	EXPECT_NE(NULL, strstr(out, "mcpctl: ")) TH_LOG("%s", out);
}

/*
 * Huge-page BOs are 2 MiB blocks of the page allocator: a request the
 * VM cannot hold is refused pointing at compaction, not at the hugetlbfs
 * pool (nr_hugepages), which the module never uses.
 */
TEST_F(mcpctl_dma, hugepage_bo_too_large_names_compaction)
{
	char out[4096];

	EXPECT_EQ(1, MCP_MCPCTL(out, "bo", "create", "host", "--size", "4G", "--hugepage"));
	EXPECT_NE(NULL, strstr(out, "2 MiB blocks")) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "compact_memory")) TH_LOG("%s", out);
}

MCP_TEST_MAIN
