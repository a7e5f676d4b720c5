// SPDX-License-Identifier: GPL-2.0-only
/*
 * Buffer objects (uapi/linux/mcp.h, "Buffer objects and DMA"):
 * MCP_IOC_BO_CREATE / USERPTR / INFO / EXPORT / IMPORT / DESTROY and
 * mmap() of BOs, on the host context (/dev/mcp) and on the edu device fd:
 * argument checks, handles of other fds and destroyed ones, pinning under
 * RLIMIT_MEMLOCK, contents seen through every mapping, dma-buf sharing
 * with another fd, another process (SCM_RIGHTS) and vgem (libdrm PRIME),
 * concurrency, and the debugfs counters returning to zero.
 */
#include "mcp_bo.h"
#include "mcp_dev.h"

#include <linux/dma-buf.h>
#include <linux/memfd.h>
#include <pthread.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>

#ifdef MCP_HAVE_LIBDRM
#include <xf86drm.h>
#include <drm.h>
#include <drm_mode.h>
#endif

#define PAT8		0xa5
#define HUGE_LEN	(2UL << 20)

/*
 * mcp.ko's BO mmap window of a handle (kmod/mcp_ctx.h).  Not ABI, BO_INFO
 * gives the offsets: only to probe handles BO_INFO will not describe.
 */
#define BO_MMAP_OFFSET(h)	(1ULL << 60 | (__u64)(h) << 32)

/* Kernel modules vgem needs, in load order (tests/vm/build-initramfs.sh). */
#define VGEM_MODULES_DIR	"/lib/modules/vgem"

static const char * const bo_counters[] = {
	"bo_objects", "bo_kernel_pages", "bo_pinned_pages", "bo_mappings",
	"bo_exports", "bo_imports",
};

static int bo_import(int fd, int dmabuf, __u32 *handle, __u64 *len)
{
	struct mcp_bo_import i = { .size = sizeof(i), .fd = dmabuf };
	int ret = mcp_ioctl(fd, MCP_IOC_BO_IMPORT, &i);

	if (!ret) {
		*handle = i.handle;
		if (len)
			*len = i.length;
	}
	return ret;
}

/* Maps len bytes of the BO from byte off (MAP_SHARED); NULL on failure. */
static void *bo_map(int fd, __u32 handle, size_t len, size_t off)
{
	struct mcp_bo_info info;
	void *p;

	if (bo_info(fd, handle, &info) || info.mmap_offset == MCP_BO_NO_MMAP)
		return NULL;
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
		 info.mmap_offset + off);
	return p == MAP_FAILED ? NULL : p;
}

static int all_bytes(const void *p, size_t len, unsigned char v)
{
	const unsigned char *c = p;

	for (size_t i = 0; i < len; i++)
		if (c[i] != v)
			return 0;
	return 1;
}

/* Byte i of pattern seed: distinct per page and per seed. */
static void fill(void *p, size_t len, unsigned int seed)
{
	unsigned char *c = p;

	for (size_t i = 0; i < len; i++)
		c[i] = (unsigned char)(i * 31 + (i >> 12) + seed);
}

static int check(const void *p, size_t len, unsigned int seed)
{
	const unsigned char *c = p;

	for (size_t i = 0; i < len; i++)
		if (c[i] != (unsigned char)(i * 31 + (i >> 12) + seed))
			return 0;
	return 1;
}

static int has_buffers(int fd)
{
	struct mcp_version v = { .size = sizeof(v) };

	return !mcp_ioctl(fd, MCP_IOC_GET_VERSION, &v) &&
	       (v.features & MCP_FEAT_BUFFERS);
}

/* Every BO counter of debugfs is zero. */
static int counters_zero(struct __test_metadata *_metadata)
{
	int ok = 1;

	for (size_t i = 0; i < ARRAY_SIZE(bo_counters); i++) {
		long long v = mcp_counter(bo_counters[i]);

		if (v) {
			TH_LOG("debugfs %s is %lld, want 0", bo_counters[i], v);
			ok = 0;
		}
	}
	return ok;
}

/* Highest node in /sys/devices/system/node/online; -1 when unreadable. */
static int max_online_node(void)
{
	unsigned char set[64] = { 0 };
	char buf[256];
	int n = -1;

	if (mcp_read_file("/sys/devices/system/node/online", buf, sizeof(buf)) <= 0)
		return -1;
	if (mcp_parse_list(buf, set, 64) < 0)
		return -1;
	for (int i = 0; i < 64; i++)
		if (set[i])
			n = i;
	return n;
}

/* First byte of node n's memory (its lowest memory block); ~0 if unknown. */
static __u64 node_mem_start(int n)
{
	char path[128], buf[64];
	unsigned long long block, lowest = ~0ULL;
	struct dirent *de;
	DIR *d;

	if (mcp_read_file("/sys/devices/system/memory/block_size_bytes", buf, sizeof(buf)) <= 0)
		return ~0ULL;
	block = strtoull(buf, NULL, 16);
	snprintf(path, sizeof(path), "/sys/devices/system/node/node%d", n);
	d = opendir(path);
	if (!d)
		return ~0ULL;
	while ((de = readdir(d))) {
		unsigned long long m;

		if (sscanf(de->d_name, "memory%llu", &m) == 1 && m * block < lowest)
			lowest = m * block;
	}
	closedir(d);
	return lowest;
}

/* Last byte of RAM ("System RAM" in /proc/iomem); 0 when unknown. */
static __u64 ram_end(void)
{
	FILE *f = fopen("/proc/iomem", "re");
	unsigned long long start, end, last = 0;
	char line[256];

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		if (line[0] != ' ' && strstr(line, "System RAM") &&
		    sscanf(line, "%llx-%llx", &start, &end) == 2 && end > last)
			last = end;
	}
	fclose(f);
	return last;
}

/*
 * A device whose DMA mask does not cover all RAM (edu's 28 bits in the
 * 2 GiB VM) and that has no IOMMU or bounce buffers: MCP refuses imports
 * on it and user pointers to memory beyond its mask with -EIO
 * (Documentation/buffers.rst).
 */
static int dev_narrow(const struct mcp_dev_info *info)
{
	return info->dma_mask < ram_end();
}

/* Physical frame of a mapped user address (/proc/self/pagemap); 0 if none. */
static __u64 user_pfn(const void *addr)
{
	long pg = sysconf(_SC_PAGESIZE);
	__u64 entry = 0;
	int fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return 0;
	if (pread(fd, &entry, sizeof(entry), (uintptr_t)addr / pg * sizeof(entry)) !=
	    sizeof(entry))
		entry = 0;
	close(fd);
	return (entry & (1ULL << 63)) ? entry & ((1ULL << 55) - 1) : 0;
}

/* Every (present) page of [mem, mem + len) lies below mask. */
static int user_below(const void *mem, size_t len, __u64 mask)
{
	long pg = sysconf(_SC_PAGESIZE);

	for (size_t off = 0; off < len; off += pg) {
		__u64 pfn = user_pfn((const char *)mem + off);

		if (!pfn || pfn * pg + pg - 1 > mask)
			return 0;
	}
	return 1;
}

/*
 * The context under test: /dev/mcp itself (host) or an edu device fd;
 * fd is /dev/mcp either way.  narrow: see dev_narrow().
 */
FIXTURE(bo) {
	int fd;
	int ctx;
	long pg;
	int idx;
	char addr[MCP_PCI_ADDR_LEN];
	int narrow;
	__u64 dma_mask;
};

/*
 * On a narrow device, a user pointer to memory beyond its mask is -EIO:
 * checks that and ends the test.  The memory must have been touched.
 */
#define USERPTR_OR_SKIP(mem, len)						\
	do {									\
		__u32 _h;							\
										\
		if (self->narrow && !user_below(mem, len, self->dma_mask)) {	\
			EXPECT_EQ(-EIO, bo_userptr(self->ctx, mem, len, 0, &_h));	\
			SKIP(return, "edu's DMA mask 0x%llx does not reach the test's memory: -EIO, as documented", \
			     (unsigned long long)self->dma_mask);		\
		}								\
	} while (0)

/* On a narrow device every import is -EIO: checks that and ends the test. */
#define IMPORT_OR_SKIP(ctx, dmabuf, narrow)					\
	do {									\
		__u32 _h;							\
										\
		if (narrow) {							\
			EXPECT_EQ(-EIO, bo_import(ctx, dmabuf, &_h, NULL));	\
			SKIP(return, "edu's DMA mask does not cover all RAM: imports are -EIO, as documented"); \
		}								\
	} while (0)

FIXTURE_VARIANT(bo) {
	int device;
};

FIXTURE_VARIANT_ADD(bo, host) {
	.device = 0,
};

FIXTURE_VARIANT_ADD(bo, edu) {
	.device = 1,
};

/* Another context of the same kind as self->ctx; -errno on failure. */
static int open_ctx(FIXTURE_DATA(bo) *self, const FIXTURE_VARIANT(bo) *variant)
{
	return variant->device ? mcp_dev_open(self->fd, self->idx) : mcp_open();
}

FIXTURE_SETUP(bo)
{
	struct mcp_dev_info info;

	self->pg = sysconf(_SC_PAGESIZE);
	self->ctx = -1;
	ASSERT_EQ(0, mcp_ensure_loaded());
	self->fd = mcp_open();
	ASSERT_LE(0, self->fd) TH_LOG("open %s: %s", MCP_DEV_PATH, strerror(errno));
	ASSERT_TRUE(has_buffers(self->fd)) TH_LOG("MCP_FEAT_BUFFERS not reported");
	if (!variant->device) {
		self->ctx = self->fd;
		return;
	}
	ASSERT_EQ(0, mcp_pci_find(EDU_VENDOR, EDU_DEVICE, self->addr))
		TH_LOG("no edu device (1234:11e8): is the VM command line right?");
	self->idx = mcp_dev_ensure_listed(self->fd, self->addr, &info);
	ASSERT_LE(0, self->idx) TH_LOG("edu %s not listed", self->addr);
	self->ctx = mcp_dev_open(self->fd, self->idx);
	ASSERT_LE(0, self->ctx) TH_LOG("DEV_OPEN: %s", strerror(-self->ctx));
	self->dma_mask = info.dma_mask;
	self->narrow = dev_narrow(&info);
}

FIXTURE_TEARDOWN(bo)
{
	if (self->ctx >= 0 && self->ctx != self->fd)
		close(self->ctx);
	if (self->fd >= 0)
		close(self->fd);
}

/* ---- MCP_IOC_BO_CREATE / INFO / DESTROY ---- */

TEST_F(bo, create_info_destroy)
{
	struct mcp_bo_info info;
	__u32 h = 0;

	ASSERT_EQ(0, bo_create_node(self->ctx, self->pg, 0, 0, &h));
	EXPECT_NE(0, h);
	ASSERT_EQ(0, bo_info(self->ctx, h, &info));
	EXPECT_EQ(MCP_BO_KIND_KERNEL, info.kind);
	EXPECT_EQ(self->pg, info.length);
	EXPECT_EQ(0, info.bo_flags);
	EXPECT_LE(0, info.node);
	EXPECT_NE(MCP_BO_NO_MMAP, info.mmap_offset);
	EXPECT_EQ(0, info.jobs);
	EXPECT_EQ(1, mcp_counter("bo_objects"));
	EXPECT_EQ(1, mcp_counter("bo_kernel_pages"));

	ASSERT_EQ(0, bo_destroy(self->ctx, h));
	/* A destroyed handle names nothing any more. */
	EXPECT_EQ(-ENOENT, bo_info(self->ctx, h, &info));
	EXPECT_EQ(-ENOENT, bo_destroy(self->ctx, h));
	EXPECT_EQ(-ENOENT, bo_export(self->ctx, h));
	EXPECT_EQ(-EINVAL, mcp_try_mmap(self->ctx, self->pg, PROT_READ, MAP_SHARED,
					BO_MMAP_OFFSET(h)));
	EXPECT_TRUE(counters_zero(_metadata));
}

/*
 * BO handles are given out cyclically, as graph handles: a destroyed
 * BO's handle is not handed out again at once, so a worker job that
 * names a BO by handle cannot reach a new BO that took the old one's.
 */
TEST_F(bo, handles_not_reused_at_once)
{
	__u32 h[8], again;

	for (int i = 0; i < 8; i++)
		ASSERT_EQ(0, bo_create_node(self->ctx, self->pg, 0, 0, &h[i]));
	for (int i = 0; i < 8; i++) {
		EXPECT_EQ(0, bo_destroy(self->ctx, h[i]));
		ASSERT_EQ(0, bo_create_node(self->ctx, self->pg, 0, 0, &again));
		for (int j = 0; j <= i; j++)
			EXPECT_NE(h[j], again) TH_LOG("handle %u of a destroyed BO came back", again);
		for (int j = i + 1; j < 8; j++)
			EXPECT_NE(h[j], again);
		EXPECT_LT(h[7], again);
		h[i] = again;
	}
	for (int i = 0; i < 8; i++)
		EXPECT_EQ(0, bo_destroy(self->ctx, h[i]));
	EXPECT_TRUE(counters_zero(_metadata));
}

TEST_F(bo, create_lengths_rounded_up)
{
	static const __u64 in[] = { 1, 4095, 4096, 4097, 3 * 4096 + 1 };
	struct mcp_bo_info info;
	__u32 h;

	for (size_t i = 0; i < ARRAY_SIZE(in); i++) {
		ASSERT_EQ(0, bo_create_node(self->ctx, in[i], 0, 0, &h));
		ASSERT_EQ(0, bo_info(self->ctx, h, &info));
		EXPECT_EQ((in[i] + self->pg - 1) / self->pg * self->pg, info.length)
			TH_LOG("length %llu", (unsigned long long)in[i]);
		EXPECT_EQ(0, bo_destroy(self->ctx, h));
	}
}

TEST_F(bo, create_bad_input)
{
	struct mcp_bo_create c = { .size = sizeof(c), .length = 4096 };
	static const __u64 lens[] = { 0, MCP_BO_MAX_LENGTH + 1, ~0ULL,
				      MCP_BO_MAX_LENGTH + 4096 };
	__u32 h;

	for (size_t i = 0; i < ARRAY_SIZE(lens); i++) {
		EXPECT_EQ(-EINVAL, bo_create_node(self->ctx, lens[i], 0, 0, &h))
			TH_LOG("length %llu", (unsigned long long)lens[i]);
	}
	for (__u32 f = 1U << 3; f; f <<= 1) {
		EXPECT_EQ(-EINVAL, bo_create_node(self->ctx, 4096, f, 0, &h))
			TH_LOG("flags 0x%x", f);
	}
	EXPECT_EQ(-EINVAL, bo_create_node(self->ctx, 4096, MCP_BO_NODE, -1, &h));
	EXPECT_EQ(-EINVAL, bo_create_node(self->ctx, 4096, MCP_BO_NODE, 1 << 20, &h));
	EXPECT_EQ(-EINVAL, bo_create_node(self->ctx, 4096, MCP_BO_NODE,
					  max_online_node() + 1, &h));

	c.reserved = 1;
	EXPECT_EQ(-EINVAL, mcp_ioctl(self->ctx, MCP_IOC_BO_CREATE, &c));
	c.reserved = 0;
	c.size = MCP_BO_CREATE_SIZE_VER0 - 1;
	EXPECT_EQ(-EINVAL, mcp_ioctl(self->ctx, MCP_IOC_BO_CREATE, &c));
	EXPECT_EQ(-EFAULT, mcp_ioctl(self->ctx, MCP_IOC_BO_CREATE, NULL));
	EXPECT_EQ(-EFAULT, mcp_ioctl(self->ctx, MCP_IOC_BO_CREATE, mcp_unmapped_addr()));
	EXPECT_TRUE(counters_zero(_metadata));
}

/*
 * A struct whose tail (the handle) cannot be written back: the ioctl fails
 * with -EFAULT and no BO or handle is left behind.
 */
TEST_F(bo, create_failed_copy_leaks_nothing)
{
	char *page = mcp_guarded_page();
	struct mcp_bo_create *c;
	struct mcp_bo_info info;
	__u32 h;

	ASSERT_NE(NULL, page);
	ASSERT_EQ(0, mprotect(page, self->pg, PROT_READ | PROT_WRITE));
	c = (struct mcp_bo_create *)page;
	memset(c, 0, sizeof(*c));
	c->size = sizeof(*c);
	c->length = 4096;
	/* Readable but not writable: the copy in works, the copy back fails. */
	ASSERT_EQ(0, mprotect(page, self->pg, PROT_READ));
	EXPECT_EQ(-EFAULT, mcp_ioctl(self->ctx, MCP_IOC_BO_CREATE, c));
	EXPECT_TRUE(counters_zero(_metadata));
	/*
	 * Handle 1 was reserved and dropped: nothing is behind it, and (handles
	 * being cyclic) the next BO gets handle 2.
	 */
	EXPECT_EQ(-ENOENT, bo_info(self->ctx, 1, &info));
	ASSERT_EQ(0, bo_create_node(self->ctx, 4096, 0, 0, &h));
	EXPECT_EQ(2, h);
	EXPECT_EQ(-ENOENT, bo_info(self->ctx, 1, &info));
	EXPECT_EQ(0, bo_destroy(self->ctx, h));
	munmap(page, 2 * self->pg);
}

TEST_F(bo, create_on_every_node)
{
	int max = max_online_node();
	struct mcp_bo_info info;
	__u32 h;

	ASSERT_LE(0, max);
	for (int n = 0; n <= max; n++) {
		/* A memoryless node cannot hold a buffer (memless topology). */
		if (!mcp_node_has_memory(n)) {
			EXPECT_EQ(-EINVAL, bo_create_node(self->ctx, 16 * self->pg, MCP_BO_NODE,
							  n, &h))
				TH_LOG("node %d", n);
			continue;
		}
		/* A narrow device reaches no memory of a node above its mask. */
		if (self->narrow && node_mem_start(n) > self->dma_mask) {
			EXPECT_EQ(-ENOMEM, bo_create_node(self->ctx, 16 * self->pg, MCP_BO_NODE,
							  n, &h))
				TH_LOG("node %d", n);
			continue;
		}
		ASSERT_EQ(0, bo_create_node(self->ctx, 16 * self->pg, MCP_BO_NODE, n, &h))
			TH_LOG("node %d", n);
		ASSERT_EQ(0, bo_info(self->ctx, h, &info));
		EXPECT_EQ(n, info.node);
		EXPECT_EQ(MCP_BO_NODE, info.bo_flags);
		EXPECT_EQ(0, bo_destroy(self->ctx, h));
	}
}

/*
 * Order-9 pages: the length rounds up to 2 MiB and 512 pages are counted.
 * (Their contiguity cannot be seen from here: /proc/self/pagemap skips
 * PFN mappings.)
 */
TEST_F(bo, create_hugepage)
{
	struct mcp_bo_info info;
	unsigned char *p;
	__u32 h, h2;

	ASSERT_EQ(0, bo_create_node(self->ctx, 1, MCP_BO_HUGEPAGE, 0, &h))
		TH_LOG("no free 2 MiB page in a fresh VM?");
	ASSERT_EQ(0, bo_info(self->ctx, h, &info));
	EXPECT_EQ(HUGE_LEN, info.length);
	EXPECT_EQ(MCP_BO_HUGEPAGE, info.bo_flags);
	EXPECT_EQ(0, info.mmap_offset % self->pg);
	p = bo_map(self->ctx, h, HUGE_LEN, 0);
	ASSERT_NE(NULL, p);
	EXPECT_TRUE(all_bytes(p, HUGE_LEN, 0));
	EXPECT_EQ(HUGE_LEN / self->pg, mcp_counter("bo_kernel_pages"));
	fill(p, HUGE_LEN, 17);
	EXPECT_TRUE(check(p, HUGE_LEN, 17));
	munmap(p, HUGE_LEN);
	/* 2 MiB and one byte: two huge pages. */
	ASSERT_EQ(0, bo_create_node(self->ctx, HUGE_LEN + 1, MCP_BO_HUGEPAGE, 0, &h2));
	ASSERT_EQ(0, bo_info(self->ctx, h2, &info));
	EXPECT_EQ(2 * HUGE_LEN, info.length);
	EXPECT_EQ(0, bo_destroy(self->ctx, h2));
	EXPECT_EQ(0, bo_destroy(self->ctx, h));
	EXPECT_TRUE(counters_zero(_metadata));
}

TEST_F(bo, create_coherent)
{
	struct mcp_bo_info info;
	unsigned char *p;
	__u32 h;

	ASSERT_EQ(0, bo_create_node(self->ctx, 8 * self->pg, MCP_BO_COHERENT, 0, &h));
	ASSERT_EQ(0, bo_info(self->ctx, h, &info));
	EXPECT_EQ(MCP_BO_COHERENT, info.bo_flags);
	EXPECT_EQ(8 * self->pg, info.length);
	p = bo_map(self->ctx, h, 8 * self->pg, 0);
	ASSERT_NE(NULL, p);
	EXPECT_TRUE(all_bytes(p, 8 * self->pg, 0));
	fill(p, 8 * self->pg, 3);
	EXPECT_TRUE(check(p, 8 * self->pg, 3));
	munmap(p, 8 * self->pg);
	EXPECT_EQ(0, bo_destroy(self->ctx, h));
	EXPECT_TRUE(counters_zero(_metadata));
}

/*
 * A coherent BO is mapped the DMA API's way: dma_mmap_coherent() maps the
 * whole VMA at mmap(), with the protection the platform needs, and the
 * kernel never looks its memory up with virt_to_page().  The difference
 * that matters (remapped or uncached coherent memory) does not exist on
 * x86; what shows here is that reading a fresh mapping, at any offset,
 * takes no page fault.  A mapping of pages faults them in instead.
 */
TEST_F(bo, coherent_mapped_whole_at_mmap)
{
	size_t len = 16 * self->pg;
	unsigned char *a, *b, *tail;
	struct rusage r0, r1;
	int whole, at_off;
	__u32 h;

	if (!variant->device)
		SKIP(return, "coherent BOs need a device context");
	ASSERT_EQ(0, bo_create_node(self->ctx, len, MCP_BO_COHERENT, 0, &h));
	a = bo_map(self->ctx, h, len, 0);
	ASSERT_NE(NULL, a);
	fill(a, len, 7);
	/* check() has run, over memory already mapped: no fault of its own. */
	ASSERT_TRUE(check(a, len, 7));
	b = bo_map(self->ctx, h, len, 0);
	tail = bo_map(self->ctx, h, len - 3 * self->pg, 3 * self->pg);
	ASSERT_NE(NULL, b);
	ASSERT_NE(NULL, tail);

	ASSERT_EQ(0, getrusage(RUSAGE_THREAD, &r0));
	whole = check(b, len, 7);
	at_off = !memcmp(tail, a + 3 * self->pg, len - 3 * self->pg);
	ASSERT_EQ(0, getrusage(RUSAGE_THREAD, &r1));
	EXPECT_TRUE(whole);
	EXPECT_TRUE(at_off);
	EXPECT_EQ(r0.ru_minflt, r1.ru_minflt)
		TH_LOG("%ld page faults reading fresh mappings of a coherent BO: not mapped at mmap()",
		       r1.ru_minflt - r0.ru_minflt);
	EXPECT_EQ(r0.ru_majflt, r1.ru_majflt);
	munmap(tail, len - 3 * self->pg);
	munmap(b, len);
	munmap(a, len);
	EXPECT_EQ(0, bo_destroy(self->ctx, h));
	EXPECT_TRUE(counters_zero(_metadata));
}

/*
 * Mappings of a coherent BO keep the rules of every BO mapping: the range
 * must lie inside the BO, MAP_SHARED only, no growing with mremap(); a
 * child shares it, its exported dma-buf maps the same bytes and, imported
 * on the device, is what the device engine reads; the cpu engine's
 * writes show in the mapping.
 */
TEST_F(bo, coherent_mapping_rules)
{
	size_t len = 4 * self->pg;
	int rw = PROT_READ | PROT_WRITE, status, dmabuf, ret;
	struct mcp_dma_submit s;
	struct mcp_bo_info info;
	unsigned char *a, *x, *p;
	__u32 h, hi, plain;
	pid_t pid;
	void *m;

	if (!variant->device)
		SKIP(return, "coherent BOs need a device context");
	ASSERT_EQ(0, bo_create_node(self->ctx, len, MCP_BO_COHERENT, 0, &h));
	ASSERT_EQ(0, bo_info(self->ctx, h, &info));
	/* Crossing the end, past the end, longer than the BO, private. */
	EXPECT_EQ(-EINVAL, mcp_try_mmap(self->ctx, 2 * self->pg, rw, MAP_SHARED,
					info.mmap_offset + 3 * self->pg));
	EXPECT_EQ(-EINVAL, mcp_try_mmap(self->ctx, self->pg, rw, MAP_SHARED,
					info.mmap_offset + len));
	EXPECT_EQ(-EINVAL, mcp_try_mmap(self->ctx, len + self->pg, rw, MAP_SHARED,
					info.mmap_offset));
	EXPECT_EQ(-EINVAL, mcp_try_mmap(self->ctx, self->pg, rw, MAP_PRIVATE,
					info.mmap_offset));
	EXPECT_EQ(0, mcp_counter("bo_mappings"));

	a = bo_map(self->ctx, h, len, 0);
	ASSERT_NE(NULL, a);
	fill(a, len, 9);
	m = mremap(a, len, len + self->pg, MREMAP_MAYMOVE);
	EXPECT_EQ(MAP_FAILED, m);
	EXPECT_EQ(EFAULT, errno);

	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		if (!check(a, len, 9))
			_exit(1);
		fill(a, len, 10);
		_exit(0);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	EXPECT_TRUE(check(a, len, 10));

	/* The exported dma-buf, from its second page: the same bytes. */
	dmabuf = bo_export(self->ctx, h);
	ASSERT_LE(0, dmabuf);
	x = mmap(NULL, len - self->pg, PROT_READ, MAP_SHARED, dmabuf, self->pg);
	ASSERT_NE(MAP_FAILED, x);
	EXPECT_EQ(0, memcmp(x, a + self->pg, len - self->pg));
	munmap(x, len - self->pg);

	/*
	 * Imported on the device (map_dma_buf: dma_get_sgtable() and a DMA
	 * mapping), read by the device engine; written by the cpu engine.
	 */
	ASSERT_EQ(0, bo_create_node(self->ctx, len, 0, 0, &plain));
	p = bo_map(self->ctx, plain, len, 0);
	ASSERT_NE(NULL, p);
	ret = bo_import(self->ctx, dmabuf, &hi, NULL);
	if (self->narrow) {
		EXPECT_EQ(-EIO, ret);
	} else {
		ASSERT_EQ(0, ret);
		dma_arg(&s, MCP_ENGINE_DEVICE, hi, plain, self->pg);
		EXPECT_EQ(0, mcp_ioctl(self->ctx, MCP_IOC_DMA_SUBMIT, &s));
		EXPECT_EQ(0, memcmp(p, a, self->pg));
		EXPECT_EQ(0, bo_destroy(self->ctx, hi));
	}
	fill(p, len, 11);
	dma_arg(&s, MCP_ENGINE_CPU, plain, h, len);
	EXPECT_EQ(0, mcp_ioctl(self->ctx, MCP_IOC_DMA_SUBMIT, &s));
	EXPECT_TRUE(check(a, len, 11));
	munmap(p, len);
	EXPECT_EQ(0, bo_destroy(self->ctx, plain));
	close(dmabuf);

	munmap(a, len);
	EXPECT_EQ(0, bo_destroy(self->ctx, h));
	EXPECT_TRUE(counters_zero(_metadata));
}

TEST_F(bo, info_destroy_bad_input)
{
	struct mcp_bo_destroy d = { .size = sizeof(d) };
	struct mcp_bo_info info;
	__u32 h;

	ASSERT_EQ(0, bo_create_node(self->ctx, 4096, 0, 0, &h));
	EXPECT_EQ(-ENOENT, bo_info(self->ctx, 0, &info));
	EXPECT_EQ(-ENOENT, bo_info(self->ctx, h + 1, &info));
	EXPECT_EQ(-ENOENT, bo_info(self->ctx, ~0U, &info));
	memset(&info, 0, sizeof(info));
	info.size = sizeof(info);
	info.handle = h;
	info.flags = 1;
	EXPECT_EQ(-EINVAL, mcp_ioctl(self->ctx, MCP_IOC_BO_INFO, &info));
	info.flags = 0;
	info.reserved = 1;
	EXPECT_EQ(-EINVAL, mcp_ioctl(self->ctx, MCP_IOC_BO_INFO, &info));
	info.reserved = 0;
	info.size = MCP_BO_INFO_SIZE_VER0 - 1;
	EXPECT_EQ(-EINVAL, mcp_ioctl(self->ctx, MCP_IOC_BO_INFO, &info));
	EXPECT_EQ(-EFAULT, mcp_ioctl(self->ctx, MCP_IOC_BO_INFO, NULL));

	d.handle = h;
	d.flags = 1;
	EXPECT_EQ(-EINVAL, mcp_ioctl(self->ctx, MCP_IOC_BO_DESTROY, &d));
	d.flags = 0;
	d.reserved = 1;
	EXPECT_EQ(-EINVAL, mcp_ioctl(self->ctx, MCP_IOC_BO_DESTROY, &d));
	d.reserved = 0;
	EXPECT_EQ(-EFAULT, mcp_ioctl(self->ctx, MCP_IOC_BO_DESTROY, NULL));
	EXPECT_EQ(-ENOENT, bo_destroy(self->ctx, 0));
	/* Every refusal left the BO alone. */
	EXPECT_EQ(0, bo_info(self->ctx, h, &info));
	EXPECT_EQ(0, bo_destroy(self->ctx, h));
}

/*
 * An _IOW ioctl only reads its argument: one in read-only memory works,
 * instead of acting and then failing -EFAULT on a copy back.
 */
TEST_F(bo, iow_argument_in_read_only_memory)
{
	struct mcp_bo_destroy *d;
	struct mcp_bo_info info;
	__u32 h;

	d = mmap(NULL, self->pg, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, d);
	ASSERT_EQ(0, bo_create_node(self->ctx, self->pg, 0, 0, &h));
	d->size = sizeof(*d);
	d->handle = h;
	ASSERT_EQ(0, mprotect(d, self->pg, PROT_READ));
	EXPECT_EQ(0, mcp_ioctl(self->ctx, MCP_IOC_BO_DESTROY, d));
	EXPECT_EQ(-ENOENT, bo_info(self->ctx, h, &info));
	EXPECT_EQ(-ENOENT, mcp_ioctl(self->ctx, MCP_IOC_BO_DESTROY, d));
	munmap(d, self->pg);
	EXPECT_TRUE(counters_zero(_metadata));
}

/* A handle names a BO on its own fd only. */
TEST_F(bo, foreign_handles)
{
	struct mcp_bo_info info;
	int other = open_ctx(self, variant);
	__u32 h, h2;

	ASSERT_LE(0, other);
	ASSERT_EQ(0, bo_create_node(self->ctx, 4096, 0, 0, &h));
	EXPECT_EQ(-ENOENT, bo_info(other, h, &info));
	EXPECT_EQ(-ENOENT, bo_destroy(other, h));
	EXPECT_EQ(-ENOENT, bo_export(other, h));
	EXPECT_EQ(-EINVAL, mcp_try_mmap(other, self->pg, PROT_READ, MAP_SHARED,
					BO_MMAP_OFFSET(h)));
	/* Same number, different BO: each fd sees its own. */
	ASSERT_EQ(0, bo_create_node(other, 3 * self->pg, 0, 0, &h2));
	EXPECT_EQ(h, h2);
	ASSERT_EQ(0, bo_info(other, h2, &info));
	EXPECT_EQ(3 * self->pg, info.length);
	ASSERT_EQ(0, bo_info(self->ctx, h, &info));
	EXPECT_EQ(self->pg, info.length);
	/* Closing the other fd destroys its BO only. */
	close(other);
	EXPECT_EQ(1, mcp_counter("bo_objects"));
	EXPECT_EQ(0, bo_destroy(self->ctx, h));
	EXPECT_TRUE(counters_zero(_metadata));
}

/* Every BO of an fd dies with it. */
TEST_F(bo, close_destroys_bos)
{
	int other = open_ctx(self, variant);
	__u32 h;

	ASSERT_LE(0, other);
	for (int i = 0; i < 10; i++)
		ASSERT_EQ(0, bo_create_node(other, (i + 1) * self->pg, 0, 0, &h));
	EXPECT_EQ(10, mcp_counter("bo_objects"));
	EXPECT_EQ(55, mcp_counter("bo_kernel_pages"));
	close(other);
	EXPECT_TRUE(counters_zero(_metadata));
}

/* ---- mmap ---- */

TEST_F(bo, mmap_zeroed_and_shared)
{
	size_t len = 3 * self->pg;
	unsigned char *a, *b, *tail;
	__u32 h;

	ASSERT_EQ(0, bo_create_node(self->ctx, len, 0, 0, &h));
	a = bo_map(self->ctx, h, len, 0);
	ASSERT_NE(NULL, a);
	EXPECT_TRUE(all_bytes(a, len, 0));
	EXPECT_EQ(1, mcp_counter("bo_mappings"));
	fill(a, len, 1);
	b = bo_map(self->ctx, h, len, 0);
	ASSERT_NE(NULL, b);
	EXPECT_NE(a, b);
	EXPECT_TRUE(check(b, len, 1));
	fill(b, len, 2);
	EXPECT_TRUE(check(a, len, 2));
	/* A mapping from the second page sees the same bytes there. */
	tail = bo_map(self->ctx, h, 2 * self->pg, self->pg);
	ASSERT_NE(NULL, tail);
	EXPECT_EQ(0, memcmp(tail, a + self->pg, 2 * self->pg));
	EXPECT_EQ(3, mcp_counter("bo_mappings"));
	munmap(tail, 2 * self->pg);
	munmap(b, len);

	/* The mapping outlives the handle; the BO dies with the last one. */
	EXPECT_EQ(0, bo_destroy(self->ctx, h));
	EXPECT_EQ(1, mcp_counter("bo_objects"));
	EXPECT_TRUE(check(a, len, 2));
	fill(a, len, 4);
	EXPECT_TRUE(check(a, len, 4));
	munmap(a, len);
	EXPECT_TRUE(counters_zero(_metadata));
}

/* A forked child shares the mapping; its copy holds a reference too. */
TEST_F(bo, mmap_shared_with_child)
{
	size_t len = 2 * self->pg;
	unsigned char *a;
	int status;
	pid_t pid;
	__u32 h;

	ASSERT_EQ(0, bo_create_node(self->ctx, len, 0, 0, &h));
	a = bo_map(self->ctx, h, len, 0);
	ASSERT_NE(NULL, a);
	fill(a, len, 5);
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		if (!check(a, len, 5))
			_exit(1);
		fill(a, len, 6);
		_exit(0);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	EXPECT_TRUE(check(a, len, 6));
	munmap(a, len);
	EXPECT_EQ(0, bo_destroy(self->ctx, h));
	EXPECT_TRUE(counters_zero(_metadata));
}

TEST_F(bo, mmap_refused)
{
	struct mcp_bo_info info;
	int rw = PROT_READ | PROT_WRITE;
	__u32 h;

	ASSERT_EQ(0, bo_create_node(self->ctx, 2 * self->pg, 0, 0, &h));
	ASSERT_EQ(0, bo_info(self->ctx, h, &info));
	EXPECT_EQ(-EINVAL, mcp_try_mmap(self->ctx, self->pg, rw, MAP_PRIVATE, info.mmap_offset));
	EXPECT_EQ(-EINVAL, mcp_try_mmap(self->ctx, 3 * self->pg, rw, MAP_SHARED, info.mmap_offset));
	EXPECT_EQ(-EINVAL, mcp_try_mmap(self->ctx, self->pg, rw, MAP_SHARED,
					info.mmap_offset + 2 * self->pg));
	/* The next handle's window, and no handle at all. */
	EXPECT_EQ(-EINVAL, mcp_try_mmap(self->ctx, self->pg, rw, MAP_SHARED,
					info.mmap_offset + (1ULL << 32)));
	EXPECT_EQ(-EINVAL, mcp_try_mmap(self->ctx, self->pg, rw, MAP_SHARED, BO_MMAP_OFFSET(0)));
	/* Past the last handle's window, and the last page offset there is. */
	EXPECT_EQ(-EINVAL, mcp_try_mmap(self->ctx, self->pg, rw, MAP_SHARED,
					BO_MMAP_OFFSET(1U << 24)));
	EXPECT_EQ(-EINVAL, mcp_try_mmap(self->ctx, self->pg, rw, MAP_SHARED,
					0x7ffffffffffff000ULL));
	EXPECT_EQ(0, bo_destroy(self->ctx, h));
	/* A destroyed handle maps nothing. */
	EXPECT_EQ(-EINVAL, mcp_try_mmap(self->ctx, self->pg, rw, MAP_SHARED, info.mmap_offset));
	EXPECT_TRUE(counters_zero(_metadata));
}

/* ---- MCP_IOC_BO_USERPTR ---- */

TEST_F(bo, userptr_pins_and_unpins)
{
	size_t len = 16 * self->pg;
	struct mcp_bo_info info;
	unsigned char *mem;
	__u32 h, ro;

	mem = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, mem);
	fill(mem, len, 7);
	USERPTR_OR_SKIP(mem, len);
	ASSERT_EQ(0, bo_userptr(self->ctx, mem, len, MCP_BO_USERPTR_WRITE, &h));
	ASSERT_EQ(0, bo_info(self->ctx, h, &info));
	EXPECT_EQ(MCP_BO_KIND_USERPTR, info.kind);
	EXPECT_EQ(len, info.length);
	EXPECT_EQ(MCP_BO_USERPTR_WRITE, info.bo_flags);
	EXPECT_EQ(MCP_BO_NO_MMAP, info.mmap_offset);
	EXPECT_EQ(16, mcp_counter("bo_pinned_pages"));
	/* The same memory twice, read-only the second time. */
	ASSERT_EQ(0, bo_userptr(self->ctx, mem, len, 0, &ro));
	EXPECT_EQ(32, mcp_counter("bo_pinned_pages"));
	/* Not mappable through the fd, not exportable. */
	EXPECT_EQ(-EINVAL, mcp_try_mmap(self->ctx, self->pg, PROT_READ, MAP_SHARED,
					BO_MMAP_OFFSET(h)));
	EXPECT_EQ(-EINVAL, bo_export(self->ctx, h));
	EXPECT_EQ(0, bo_destroy(self->ctx, h));
	EXPECT_EQ(16, mcp_counter("bo_pinned_pages"));
	/* The memory is the process's still, and unchanged. */
	EXPECT_TRUE(check(mem, len, 7));
	munmap(mem, len);
	/* Pinned pages outlive the munmap until the BO goes. */
	EXPECT_EQ(16, mcp_counter("bo_pinned_pages"));
	EXPECT_EQ(0, bo_destroy(self->ctx, ro));
	EXPECT_TRUE(counters_zero(_metadata));
}

TEST_F(bo, userptr_read_only_memory)
{
	unsigned char *mem;
	__u32 h;

	mem = mmap(NULL, 4 * self->pg, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, mem);
	memset(mem, PAT8, 4 * self->pg);
	ASSERT_EQ(0, mprotect(mem, 4 * self->pg, PROT_READ));
	/* Readable memory pins for reading, not for writing. */
	EXPECT_EQ(-EFAULT, bo_userptr(self->ctx, mem, 4 * self->pg,
				      MCP_BO_USERPTR_WRITE, &h));
	EXPECT_EQ(0, mcp_counter("bo_pinned_pages"));
	USERPTR_OR_SKIP(mem, 4 * self->pg);
	ASSERT_EQ(0, bo_userptr(self->ctx, mem, 4 * self->pg, 0, &h));
	EXPECT_EQ(4, mcp_counter("bo_pinned_pages"));
	EXPECT_EQ(0, bo_destroy(self->ctx, h));
	munmap(mem, 4 * self->pg);
	EXPECT_TRUE(counters_zero(_metadata));
}

/*
 * Long-term pins only of anonymous, shmem and hugetlbfs memory, as
 * io_uring: a shared or private mapping of a regular file on a file
 * system with writeback (ramfs here, as the VM's root is tmpfs) is
 * -EOPNOTSUPP, for reading and for writing; memfd (shmem) and anonymous
 * shared memory pin.
 */
TEST_F(bo, userptr_file_backed_refused)
{
	char dir[] = "/tmp/mcp_bo_ramfs.XXXXXX", path[64];
	size_t len = 4 * self->pg;
	unsigned char *mem;
	int fd, mfd;
	__u32 h;

	ASSERT_NE(NULL, mkdtemp(dir));
	if (mount("none", dir, "ramfs", 0, NULL)) {
		rmdir(dir);
		SKIP(return, "cannot mount ramfs: %s", strerror(errno));
	}
	snprintf(path, sizeof(path), "%s/file", dir);
	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, ftruncate(fd, len));
	for (int shared = 0; shared < 2; shared++) {
		mem = mmap(NULL, len, PROT_READ | PROT_WRITE,
			   shared ? MAP_SHARED : MAP_PRIVATE, fd, 0);
		ASSERT_NE(MAP_FAILED, mem);
		memset(mem, PAT8, len);
		for (__u32 f = 0; f <= MCP_BO_USERPTR_WRITE; f += MCP_BO_USERPTR_WRITE) {
			int ret = bo_userptr(self->ctx, mem, len, f, &h);

			EXPECT_EQ(-EOPNOTSUPP, ret)
				TH_LOG("%s file mapping, flags 0x%x", shared ? "shared" : "private", f);
			if (!ret)
				bo_destroy(self->ctx, h);
		}
		munmap(mem, len);
	}
	close(fd);
	EXPECT_EQ(0, umount(dir));
	rmdir(dir);
	EXPECT_EQ(0, mcp_counter("bo_pinned_pages"));

	/* memfd and shared anonymous memory are shmem: they pin. */
	mfd = syscall(SYS_memfd_create, "mcp_bo_test", MFD_CLOEXEC);
	ASSERT_LE(0, mfd);
	ASSERT_EQ(0, ftruncate(mfd, len));
	mem = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, mfd, 0);
	ASSERT_NE(MAP_FAILED, mem);
	memset(mem, PAT8, len);
	USERPTR_OR_SKIP(mem, len);
	ASSERT_EQ(0, bo_userptr(self->ctx, mem, len, MCP_BO_USERPTR_WRITE, &h));
	EXPECT_EQ(0, bo_destroy(self->ctx, h));
	munmap(mem, len);
	close(mfd);
	mem = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, mem);
	memset(mem, PAT8, len);
	USERPTR_OR_SKIP(mem, len);
	ASSERT_EQ(0, bo_userptr(self->ctx, mem, len, MCP_BO_USERPTR_WRITE, &h));
	EXPECT_EQ(0, bo_destroy(self->ctx, h));
	munmap(mem, len);
	EXPECT_TRUE(counters_zero(_metadata));
}

TEST_F(bo, userptr_bad_input)
{
	struct mcp_bo_userptr u = { .size = sizeof(u) };
	unsigned char *mem, *hole;
	__u32 h, kh;
	void *bo_mem;

	mem = mmap(NULL, 4 * self->pg, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, mem);
	EXPECT_EQ(-EINVAL, bo_userptr(self->ctx, mem, 0, 0, &h));
	EXPECT_EQ(-EINVAL, bo_userptr(self->ctx, mem + 1, self->pg, 0, &h));
	EXPECT_EQ(-EINVAL, bo_userptr(self->ctx, mem, self->pg + 1, 0, &h));
	EXPECT_EQ(-EINVAL, bo_userptr(self->ctx, mem, 100, 0, &h));
	EXPECT_EQ(-EINVAL, bo_userptr(self->ctx, mem, MCP_BO_MAX_LENGTH + self->pg, 0, &h));
	for (__u32 f = 1U << 1; f; f <<= 1) {
		EXPECT_EQ(-EINVAL, bo_userptr(self->ctx, mem, self->pg, f, &h))
			TH_LOG("flags 0x%x", f);
	}
	u.addr = (__u64)(uintptr_t)mem;
	u.length = self->pg;
	u.reserved = 1;
	EXPECT_EQ(-EINVAL, mcp_ioctl(self->ctx, MCP_IOC_BO_USERPTR, &u));
	u.reserved = 0;
	u.size = MCP_BO_USERPTR_SIZE_VER0 - 1;
	EXPECT_EQ(-EINVAL, mcp_ioctl(self->ctx, MCP_IOC_BO_USERPTR, &u));
	EXPECT_EQ(-EFAULT, mcp_ioctl(self->ctx, MCP_IOC_BO_USERPTR, NULL));

	/* Nothing mapped, part of the range unmapped, kernel addresses. */
	hole = mcp_unmapped_addr();
	EXPECT_EQ(-EFAULT, bo_userptr(self->ctx, hole, self->pg, 0, &h));
	ASSERT_EQ(0, munmap(mem + 3 * self->pg, self->pg));
	EXPECT_EQ(-EFAULT, bo_userptr(self->ctx, mem, 4 * self->pg, 0, &h));
	EXPECT_EQ(-EFAULT, bo_userptr(self->ctx, (void *)0xffff888000000000ULL,
				      self->pg, 0, &h));
	/* Wrapping around the address space. */
	EXPECT_NE(0, bo_userptr(self->ctx, (void *)(uintptr_t)(-self->pg),
				2 * self->pg, 0, &h));
	/* A BO's own mapping is not user memory that can be pinned. */
	ASSERT_EQ(0, bo_create_node(self->ctx, self->pg, 0, 0, &kh));
	bo_mem = bo_map(self->ctx, kh, self->pg, 0);
	ASSERT_NE(NULL, bo_mem);
	EXPECT_EQ(-EFAULT, bo_userptr(self->ctx, bo_mem, self->pg, 0, &h));
	munmap(bo_mem, self->pg);
	EXPECT_EQ(0, bo_destroy(self->ctx, kh));
	munmap(mem, 3 * self->pg);
	EXPECT_TRUE(counters_zero(_metadata));
}

/*
 * Without CAP_IPC_LOCK, pinned pages count against RLIMIT_MEMLOCK: over
 * it is -ENOMEM, destroying a BO gives the room back.
 */
TEST_F(bo, userptr_rlimit_memlock)
{
	size_t len = 64 * self->pg;
	int status;
	pid_t pid;

	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		struct rlimit rl = { 16 * self->pg, 16 * self->pg };
		unsigned char *mem;
		__u32 a, b, c;

		mem = mmap(NULL, len, PROT_READ | PROT_WRITE,
			   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (mem == MAP_FAILED)
			_exit(90);
		memset(mem, PAT8, len);
		if (self->narrow && !user_below(mem, 16 * self->pg, self->dma_mask))
			_exit(80);
		if (mcp_drop_cap(CAP_IPC_LOCK) || setrlimit(RLIMIT_MEMLOCK, &rl))
			_exit(91);
		if (bo_userptr(self->ctx, mem, len, 0, &a) != -ENOMEM)
			_exit(1);
		if (mcp_counter("bo_pinned_pages") != 0)
			_exit(2);
		if (bo_userptr(self->ctx, mem, 8 * self->pg, 0, &a) ||
		    bo_userptr(self->ctx, mem + 8 * self->pg, 8 * self->pg,
			       MCP_BO_USERPTR_WRITE, &b))
			_exit(3);
		if (bo_userptr(self->ctx, mem, self->pg, 0, &c) != -ENOMEM)
			_exit(4);
		if (bo_destroy(self->ctx, a) ||
		    bo_userptr(self->ctx, mem, 8 * self->pg, 0, &c))
			_exit(5);
		_exit(0);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	if (WEXITSTATUS(status) == 80)
		SKIP(return, "edu's DMA mask 0x%llx does not reach the child's memory",
		     (unsigned long long)self->dma_mask);
	EXPECT_EQ(0, WEXITSTATUS(status));
	/* The child's BOs live on this fd (shared): destroy them by closing. */
	if (!variant->device) {
		close(self->fd);
		self->fd = -1;
		self->ctx = -1;
	} else {
		close(self->ctx);
		self->ctx = -1;
	}
	EXPECT_TRUE(counters_zero(_metadata));
}

/*
 * Coherent DMA memory is not charged to the memory cgroup by
 * dma_alloc_coherent(), so it is charged to RLIMIT_MEMLOCK, as pinned
 * user pages are: over the limit without CAP_IPC_LOCK is -ENOMEM,
 * destroying a BO gives the room back.
 */
TEST_F(bo, coherent_charged_to_memlock)
{
	struct rlimit rl = { 16 * self->pg, 16 * self->pg };
	int status;
	pid_t pid;

	if (!variant->device)
		SKIP(return, "coherent BOs need a device context");
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		__u32 a, b, c;

		if (mcp_drop_cap(CAP_IPC_LOCK) || setrlimit(RLIMIT_MEMLOCK, &rl))
			_exit(91);
		if (bo_create_node(self->ctx, 32 * self->pg, MCP_BO_COHERENT, 0, &a) != -ENOMEM)
			_exit(1);
		if (bo_create_node(self->ctx, 8 * self->pg, MCP_BO_COHERENT, 0, &a) ||
		    bo_create_node(self->ctx, 8 * self->pg, MCP_BO_COHERENT, 0, &b))
			_exit(2);
		if (bo_create_node(self->ctx, self->pg, MCP_BO_COHERENT, 0, &c) != -ENOMEM)
			_exit(3);
		/* Plain kernel BOs are charged to the memory cgroup instead. */
		if (bo_create_node(self->ctx, 32 * self->pg, 0, 0, &c) || bo_destroy(self->ctx, c))
			_exit(4);
		if (bo_destroy(self->ctx, a) ||
		    bo_create_node(self->ctx, 8 * self->pg, MCP_BO_COHERENT, 0, &c))
			_exit(5);
		_exit(0);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status))
		TH_LOG("step %d: %s", WEXITSTATUS(status),
		       WEXITSTATUS(status) == 1 ? "32 pages of coherent memory over a 16-page RLIMIT_MEMLOCK were not refused" :
		       WEXITSTATUS(status) == 3 ? "a page over the limit was not refused" : "see the test");
	/* The child's BOs live on this fd (shared): destroy them by closing. */
	close(self->ctx);
	self->ctx = -1;
	EXPECT_TRUE(counters_zero(_metadata));
}

/* With CAP_IPC_LOCK the limit does not apply. */
TEST_F(bo, userptr_cap_ipc_lock_bypasses_limit)
{
	size_t len = 64 * self->pg;
	struct rlimit old, rl = { 16 * self->pg, 16 * self->pg };
	unsigned char *mem;
	__u32 h = 0;
	int ret;

	mem = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, mem);
	memset(mem, PAT8, len);
	USERPTR_OR_SKIP(mem, len);
	ASSERT_EQ(0, getrlimit(RLIMIT_MEMLOCK, &old));
	ASSERT_EQ(0, setrlimit(RLIMIT_MEMLOCK, &rl));
	ret = bo_userptr(self->ctx, mem, len, MCP_BO_USERPTR_WRITE, &h);
	setrlimit(RLIMIT_MEMLOCK, &old);
	ASSERT_EQ(0, ret);
	EXPECT_EQ(0, bo_destroy(self->ctx, h));
	munmap(mem, len);
}

/* ---- MCP_IOC_BO_EXPORT / MCP_IOC_BO_IMPORT ---- */

TEST_F(bo, export_import_same_bytes)
{
	struct dma_buf_sync sync = { 0 };
	size_t len = 5 * self->pg;
	unsigned char *a, *d, *m;
	struct mcp_bo_info info;
	int dmabuf, other;
	__u32 h, ih;
	__u64 ilen;

	ASSERT_EQ(0, bo_create_node(self->ctx, len, 0, 0, &h));
	a = bo_map(self->ctx, h, len, 0);
	ASSERT_NE(NULL, a);
	fill(a, len, 8);
	dmabuf = bo_export(self->ctx, h);
	ASSERT_LE(0, dmabuf) TH_LOG("export: %s", strerror(-dmabuf));
	EXPECT_EQ(FD_CLOEXEC, fcntl(dmabuf, F_GETFD));
	EXPECT_EQ(1, mcp_counter("bo_exports"));

	/* The dma-buf maps directly, with CPU access bracketed as for any. */
	d = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, dmabuf, 0);
	ASSERT_NE(MAP_FAILED, d);
	sync.flags = DMA_BUF_SYNC_START | DMA_BUF_SYNC_RW;
	EXPECT_EQ(0, mcp_ioctl(dmabuf, DMA_BUF_IOCTL_SYNC, &sync));
	EXPECT_TRUE(check(d, len, 8));
	sync.flags = DMA_BUF_SYNC_END | DMA_BUF_SYNC_RW;
	EXPECT_EQ(0, mcp_ioctl(dmabuf, DMA_BUF_IOCTL_SYNC, &sync));

	/* ... and through another context that imported it. */
	other = open_ctx(self, variant);
	ASSERT_LE(0, other);
	IMPORT_OR_SKIP(other, dmabuf, self->narrow);
	ASSERT_EQ(0, bo_import(other, dmabuf, &ih, &ilen));
	EXPECT_EQ(len, ilen);
	ASSERT_EQ(0, bo_info(other, ih, &info));
	EXPECT_EQ(MCP_BO_KIND_IMPORT, info.kind);
	EXPECT_EQ(len, info.length);
	EXPECT_NE(MCP_BO_NO_MMAP, info.mmap_offset);
	EXPECT_EQ(1, mcp_counter("bo_imports"));
	m = bo_map(other, ih, len, 0);
	ASSERT_NE(NULL, m);
	EXPECT_TRUE(check(m, len, 8));
	fill(m, len, 9);
	EXPECT_TRUE(check(a, len, 9));
	EXPECT_TRUE(check(d, len, 9));
	/* An import is not re-exported, and it is not a user pointer. */
	EXPECT_EQ(-EINVAL, bo_export(other, ih));

	/* Every user keeps the memory: drop the exporter's handle first. */
	close(dmabuf);
	EXPECT_EQ(0, bo_destroy(self->ctx, h));
	EXPECT_EQ(1, mcp_counter("bo_exports"));
	EXPECT_TRUE(check(m, len, 9));
	munmap(a, len);
	munmap(d, len);
	EXPECT_EQ(0, bo_destroy(other, ih));
	EXPECT_TRUE(check(m, len, 9));
	munmap(m, len);
	close(other);
	EXPECT_TRUE(counters_zero(_metadata));
}

/* The edu device fd imports a host context's export and vice versa. */
TEST_F(bo, export_import_across_context_kinds)
{
	size_t len = 2 * self->pg;
	int other, dmabuf, other_narrow = 0;
	unsigned char *a, *m;
	__u32 h, ih;

	/* The other kind: a device fd for the host variant and /dev/mcp for edu. */
	if (variant->device) {
		other = mcp_open();
	} else {
		struct mcp_dev_info info;

		ASSERT_EQ(0, mcp_pci_find(EDU_VENDOR, EDU_DEVICE, self->addr));
		self->idx = mcp_dev_ensure_listed(self->fd, self->addr, &info);
		ASSERT_LE(0, self->idx);
		other = mcp_dev_open(self->fd, self->idx);
		other_narrow = dev_narrow(&info);
	}
	ASSERT_LE(0, other);
	ASSERT_EQ(0, bo_create_node(self->ctx, len, 0, 0, &h));
	a = bo_map(self->ctx, h, len, 0);
	ASSERT_NE(NULL, a);
	fill(a, len, 10);
	dmabuf = bo_export(self->ctx, h);
	ASSERT_LE(0, dmabuf);
	IMPORT_OR_SKIP(other, dmabuf, other_narrow);
	ASSERT_EQ(0, bo_import(other, dmabuf, &ih, NULL));
	close(dmabuf);
	m = bo_map(other, ih, len, 0);
	ASSERT_NE(NULL, m);
	EXPECT_TRUE(check(m, len, 10));
	munmap(m, len);
	munmap(a, len);
	close(other);
	EXPECT_EQ(0, bo_destroy(self->ctx, h));
	EXPECT_TRUE(counters_zero(_metadata));
}

TEST_F(bo, export_import_bad_input)
{
	struct mcp_bo_export e = { .size = sizeof(e) };
	struct mcp_bo_import i = { .size = sizeof(i) };
	int efd, nullfd;
	__u32 h, ih;

	ASSERT_EQ(0, bo_create_node(self->ctx, self->pg, 0, 0, &h));
	EXPECT_EQ(-ENOENT, bo_export(self->ctx, h + 1));
	EXPECT_EQ(-ENOENT, bo_export(self->ctx, 0));
	e.handle = h;
	e.flags = 1;
	EXPECT_EQ(-EINVAL, mcp_ioctl(self->ctx, MCP_IOC_BO_EXPORT, &e));
	e.flags = 0;
	e.size = MCP_BO_EXPORT_SIZE_VER0 - 1;
	EXPECT_EQ(-EINVAL, mcp_ioctl(self->ctx, MCP_IOC_BO_EXPORT, &e));
	EXPECT_EQ(-EFAULT, mcp_ioctl(self->ctx, MCP_IOC_BO_EXPORT, NULL));

	EXPECT_EQ(-EBADF, bo_import(self->ctx, -1, &ih, NULL));
	EXPECT_EQ(-EBADF, bo_import(self->ctx, 1 << 20, &ih, NULL));
	efd = eventfd(0, EFD_CLOEXEC);
	ASSERT_LE(0, efd);
	EXPECT_EQ(-EINVAL, bo_import(self->ctx, efd, &ih, NULL));
	close(efd);
	EXPECT_EQ(-EBADF, bo_import(self->ctx, efd, &ih, NULL));
	nullfd = open("/dev/null", O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, nullfd);
	EXPECT_EQ(-EINVAL, bo_import(self->ctx, nullfd, &ih, NULL));
	close(nullfd);
	/* The context's own fd is not a dma-buf either. */
	EXPECT_EQ(-EINVAL, bo_import(self->ctx, self->ctx, &ih, NULL));
	i.fd = 0;
	i.flags = 1;
	EXPECT_EQ(-EINVAL, mcp_ioctl(self->ctx, MCP_IOC_BO_IMPORT, &i));
	i.flags = 0;
	i.size = MCP_BO_IMPORT_SIZE_VER0 - 1;
	EXPECT_EQ(-EINVAL, mcp_ioctl(self->ctx, MCP_IOC_BO_IMPORT, &i));
	EXPECT_EQ(-EFAULT, mcp_ioctl(self->ctx, MCP_IOC_BO_IMPORT, NULL));
	EXPECT_EQ(0, bo_destroy(self->ctx, h));
	EXPECT_TRUE(counters_zero(_metadata));
}

/* A failed copy back of BO_EXPORT installs no fd and leaves no dma-buf. */
TEST_F(bo, export_failed_copy_leaks_nothing)
{
	char *page = mcp_guarded_page();
	struct mcp_bo_export *e;
	int before, after;
	__u32 h;

	ASSERT_NE(NULL, page);
	ASSERT_EQ(0, bo_create_node(self->ctx, self->pg, 0, 0, &h));
	e = (struct mcp_bo_export *)page;
	memset(e, 0, sizeof(*e));
	e->size = sizeof(*e);
	e->handle = h;
	ASSERT_EQ(0, mprotect(page, self->pg, PROT_READ));
	before = dup(0);
	ASSERT_LE(0, before);
	close(before);
	EXPECT_EQ(-EFAULT, mcp_ioctl(self->ctx, MCP_IOC_BO_EXPORT, e));
	EXPECT_EQ(0, mcp_counter("bo_exports"));
	/* The fd number it reserved is free again. */
	after = dup(0);
	EXPECT_EQ(before, after);
	close(after);
	EXPECT_EQ(0, bo_destroy(self->ctx, h));
	munmap(page, 2 * self->pg);
	EXPECT_TRUE(counters_zero(_metadata));
}

static int send_fd(int sock, int fd)
{
	char byte = 'x', buf[CMSG_SPACE(sizeof(int))] = { 0 };
	struct iovec iov = { .iov_base = &byte, .iov_len = 1 };
	struct msghdr msg = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = buf, .msg_controllen = sizeof(buf),
	};
	struct cmsghdr *cm = CMSG_FIRSTHDR(&msg);

	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(cm), &fd, sizeof(int));
	return sendmsg(sock, &msg, 0) == 1 ? 0 : -errno;
}

static int recv_fd(int sock)
{
	char byte, buf[CMSG_SPACE(sizeof(int))] = { 0 };
	struct iovec iov = { .iov_base = &byte, .iov_len = 1 };
	struct msghdr msg = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = buf, .msg_controllen = sizeof(buf),
	};
	struct cmsghdr *cm;
	int fd;

	if (recvmsg(sock, &msg, MSG_CMSG_CLOEXEC) != 1)
		return -errno;
	cm = CMSG_FIRSTHDR(&msg);
	if (!cm || cm->cmsg_type != SCM_RIGHTS)
		return -EPROTO;
	memcpy(&fd, CMSG_DATA(cm), sizeof(int));
	return fd;
}

/*
 * A second process gets the dma-buf over a Unix socket, imports it into
 * its own context, sees the bytes and writes new ones the first sees.
 */
TEST_F(bo, export_to_second_process_scm_rights)
{
	size_t len = 4 * self->pg;
	unsigned char *a;
	int sv[2], dmabuf, status;
	pid_t pid;
	__u32 h;

	ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		int fd, ctx, got, ret;
		unsigned char *m;
		__u32 ih;

		close(sv[0]);
		/* A context of its own, not one inherited from the parent. */
		close(self->ctx);
		if (self->fd != self->ctx)
			close(self->fd);
		fd = mcp_open();
		ctx = variant->device ? mcp_dev_open(fd, self->idx) : fd;
		got = recv_fd(sv[1]);
		if (fd < 0 || ctx < 0 || got < 0)
			_exit(90);
		ret = bo_import(ctx, got, &ih, NULL);
		if (self->narrow)
			_exit(ret == -EIO ? 80 : 1);
		if (ret)
			_exit(1);
		close(got);
		m = bo_map(ctx, ih, len, 0);
		if (!m)
			_exit(2);
		if (!check(m, len, 11))
			_exit(3);
		fill(m, len, 12);
		_exit(0);
	}
	close(sv[1]);
	ASSERT_EQ(0, bo_create_node(self->ctx, len, 0, 0, &h));
	a = bo_map(self->ctx, h, len, 0);
	ASSERT_NE(NULL, a);
	fill(a, len, 11);
	dmabuf = bo_export(self->ctx, h);
	ASSERT_LE(0, dmabuf);
	ASSERT_EQ(0, send_fd(sv[0], dmabuf));
	close(dmabuf);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	if (WEXITSTATUS(status) == 80)
		SKIP(return, "edu's DMA mask does not cover all RAM: the import was -EIO, as documented");
	EXPECT_EQ(0, WEXITSTATUS(status));
	EXPECT_TRUE(check(a, len, 12));
	munmap(a, len);
	close(sv[0]);
	EXPECT_EQ(0, bo_destroy(self->ctx, h));
	EXPECT_TRUE(counters_zero(_metadata));
}

#ifdef MCP_HAVE_LIBDRM
/* Loads the modules listed in VGEM_MODULES_DIR/order; 0 or -errno. */
static int load_vgem(void)
{
	char order[512], path[PATH_MAX], *name, *save = NULL;
	int ret = 0;

	/* Loaded, or built in (the debug kernel): its platform device. */
	if (access("/sys/module/vgem", F_OK) == 0 ||
	    access("/sys/bus/platform/devices/vgem", F_OK) == 0)
		return 0;
	if (mcp_read_file(VGEM_MODULES_DIR "/order", order, sizeof(order)) <= 0)
		return -ENOENT;
	for (name = strtok_r(order, "\n", &save); name && !ret;
	     name = strtok_r(NULL, "\n", &save)) {
		int fd;

		snprintf(path, sizeof(path), VGEM_MODULES_DIR "/%s", name);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			return -errno;
		ret = syscall(SYS_finit_module, fd, "", 0) ? -errno : 0;
		close(fd);
		if (ret == -EEXIST)
			ret = 0;
	}
	return ret;
}

/* Maps a dumb buffer through the DRM fd; NULL on failure. */
static unsigned char *vgem_map(int drm, __u32 handle, size_t len)
{
	struct drm_mode_map_dumb md = { .handle = handle };
	void *p;

	if (drmIoctl(drm, DRM_IOCTL_MODE_MAP_DUMB, &md))
		return NULL;
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, drm, md.offset);
	return p == MAP_FAILED ? NULL : p;
}

/*
 * vgem's dumb buffer imported into MCP, and an MCP BO imported into vgem:
 * the same bytes through every mapping, both ways.
 */
TEST_F(bo, vgem_prime_both_ways)
{
	struct drm_mode_create_dumb cd = { .width = 1024, .height = 8, .bpp = 32 };
	struct stat st_mcp, st_vgem;
	unsigned char *m, *a, *v, *back;
	int drm, ret, pfd, dmabuf;
	__u32 ih, h, vh;
	__u64 ilen;
	size_t len;

	ret = load_vgem();
	if (ret)
		SKIP(return, "vgem cannot be loaded (%s): the image lacks %s",
		     strerror(-ret), VGEM_MODULES_DIR);
	for (int i = 0; i < 100 && (drm = drmOpen("vgem", NULL)) < 0; i++)
		usleep(20000);
	ASSERT_LE(0, drm) TH_LOG("vgem is loaded but drmOpen(\"vgem\") fails");

	/* vgem -> MCP */
	ASSERT_EQ(0, drmIoctl(drm, DRM_IOCTL_MODE_CREATE_DUMB, &cd));
	len = cd.size;
	v = vgem_map(drm, cd.handle, len);
	ASSERT_NE(NULL, v);
	fill(v, len, 13);
	ASSERT_EQ(0, drmPrimeHandleToFD(drm, cd.handle, DRM_CLOEXEC | DRM_RDWR, &pfd));
	IMPORT_OR_SKIP(self->ctx, pfd, self->narrow);
	ASSERT_EQ(0, bo_import(self->ctx, pfd, &ih, &ilen));
	EXPECT_EQ(len, ilen);
	close(pfd);
	m = bo_map(self->ctx, ih, len, 0);
	ASSERT_NE(NULL, m);
	EXPECT_TRUE(check(m, len, 13));
	fill(m, len, 14);
	EXPECT_TRUE(check(v, len, 14));
	munmap(m, len);
	munmap(v, len);
	EXPECT_EQ(0, bo_destroy(self->ctx, ih));

	/* MCP -> vgem */
	ASSERT_EQ(0, bo_create_node(self->ctx, 6 * self->pg, 0, 0, &h));
	a = bo_map(self->ctx, h, 6 * self->pg, 0);
	ASSERT_NE(NULL, a);
	fill(a, 6 * self->pg, 15);
	dmabuf = bo_export(self->ctx, h);
	ASSERT_LE(0, dmabuf);
	ASSERT_EQ(0, drmPrimeFDToHandle(drm, dmabuf, &vh));
	ASSERT_EQ(0, fstat(dmabuf, &st_mcp));
	close(dmabuf);
	/*
	 * vgem attached and mapped it (DRM does at import).  DRM maps no
	 * imported dumb buffer (MODE_MAP_DUMB: -EINVAL), so the bytes are
	 * read back through vgem's own export of its handle: the same
	 * dma-buf, mapped by MCP.
	 */
	ASSERT_EQ(0, drmPrimeHandleToFD(drm, vh, DRM_CLOEXEC | DRM_RDWR, &pfd));
	ASSERT_EQ(0, fstat(pfd, &st_vgem));
	EXPECT_EQ(st_mcp.st_ino, st_vgem.st_ino);
	back = mmap(NULL, 6 * self->pg, PROT_READ | PROT_WRITE, MAP_SHARED, pfd, 0);
	ASSERT_NE(MAP_FAILED, back);
	close(pfd);
	EXPECT_TRUE(check(back, 6 * self->pg, 15));
	fill(back, 6 * self->pg, 16);
	EXPECT_TRUE(check(a, 6 * self->pg, 16));
	munmap(back, 6 * self->pg);
	munmap(a, 6 * self->pg);
	EXPECT_EQ(0, bo_destroy(self->ctx, h));
	/* vgem still holds the dma-buf through its handle, until it closes it. */
	EXPECT_EQ(1, mcp_counter("bo_exports"));
	EXPECT_EQ(1, mcp_counter("bo_objects"));
	ASSERT_EQ(0, drmCloseBufferHandle(drm, vh));
	EXPECT_EQ(0, mcp_counter("bo_exports"));
	close(drm);
	EXPECT_TRUE(counters_zero(_metadata));
}

/*
 * A dma-buf exported read-only (PRIME without DRM_RDWR) stays read-only
 * through MCP: mmap(PROT_WRITE) and mprotect() to writable are -EACCES,
 * as for the dma-buf fd itself, and it is no DMA destination (-EACCES);
 * reading it works.  Imported on the host context, which takes any
 * dma-buf.
 */
TEST_F(bo, vgem_read_only_import_stays_read_only)
{
	struct drm_mode_create_dumb cd = { .width = 1024, .height = 4, .bpp = 32 };
	struct mcp_dma_submit s;
	struct mcp_bo_info info;
	unsigned char *v, *m;
	int drm, ret, pfd;
	__u32 ih, h;
	size_t len;

	ret = load_vgem();
	if (ret)
		SKIP(return, "vgem cannot be loaded (%s): the image lacks %s",
		     strerror(-ret), VGEM_MODULES_DIR);
	for (int i = 0; i < 100 && (drm = drmOpen("vgem", NULL)) < 0; i++)
		usleep(20000);
	ASSERT_LE(0, drm) TH_LOG("vgem is loaded but drmOpen(\"vgem\") fails");
	ASSERT_EQ(0, drmIoctl(drm, DRM_IOCTL_MODE_CREATE_DUMB, &cd));
	len = cd.size;
	v = vgem_map(drm, cd.handle, len);
	ASSERT_NE(NULL, v);
	fill(v, len, 21);
	ASSERT_EQ(0, drmPrimeHandleToFD(drm, cd.handle, DRM_CLOEXEC, &pfd));
	ASSERT_EQ(O_RDONLY, fcntl(pfd, F_GETFL) & O_ACCMODE);
	/* The kernel's rule for the dma-buf fd itself. */
	EXPECT_EQ(MAP_FAILED, mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, pfd, 0));
	EXPECT_EQ(EACCES, errno);

	ASSERT_EQ(0, bo_import(self->fd, pfd, &ih, NULL));
	close(pfd);
	ASSERT_EQ(0, bo_info(self->fd, ih, &info));
	ASSERT_NE(MCP_BO_NO_MMAP, info.mmap_offset);
	m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, self->fd, info.mmap_offset);
	EXPECT_EQ(MAP_FAILED, m) {
		m[0] = 0;
		munmap(m, len);
		TH_LOG("a read-only dma-buf was mapped writable (and written)");
	}
	if (m == MAP_FAILED)
		EXPECT_EQ(EACCES, errno);
	m = mmap(NULL, len, PROT_READ, MAP_SHARED, self->fd, info.mmap_offset);
	ASSERT_NE(MAP_FAILED, m);
	EXPECT_TRUE(check(m, len, 21));
	EXPECT_EQ(-1, mprotect(m, len, PROT_READ | PROT_WRITE));
	EXPECT_EQ(EACCES, errno);
	munmap(m, len);

	/* No DMA into it; out of it is fine. */
	ASSERT_EQ(0, bo_create_node(self->fd, len, 0, 0, &h));
	memset(&s, 0, sizeof(s));
	s.size = sizeof(s);
	s.engine = MCP_ENGINE_CPU;
	s.src_handle = h;
	s.dst_handle = ih;
	s.length = len;
	s.out_fence = -1;
	EXPECT_EQ(-EACCES, mcp_ioctl(self->fd, MCP_IOC_DMA_SUBMIT, &s));
	s.src_handle = ih;
	s.dst_handle = h;
	EXPECT_EQ(0, mcp_ioctl(self->fd, MCP_IOC_DMA_SUBMIT, &s));
	EXPECT_TRUE(check(v, len, 21));
	EXPECT_EQ(0, bo_destroy(self->fd, h));
	EXPECT_EQ(0, bo_destroy(self->fd, ih));
	munmap(v, len);
	close(drm);
	EXPECT_TRUE(counters_zero(_metadata));
}
#else
TEST_F(bo, vgem_prime_both_ways)
{
	SKIP(return, "built without libdrm (scripts/install-deps.sh installs libdrm-dev)");
}

TEST_F(bo, vgem_read_only_import_stays_read_only)
{
	SKIP(return, "built without libdrm (scripts/install-deps.sh installs libdrm-dev)");
}
#endif

/* ---- concurrency and the counters ---- */

struct churn {
	int fd;
	long pg;
	int errors;
};

static void *churn_thread(void *arg)
{
	struct churn *c = arg;
	struct mcp_bo_info info;
	__u32 h;

	for (int i = 0; i < 300; i++) {
		int ret = bo_create_node(c->fd, (i % 4 + 1) * c->pg, 0, 0, &h);

		if (ret) {
			c->errors++;
			continue;
		}
		if (bo_info(c->fd, h, &info) || info.length != (i % 4 + 1) * c->pg)
			c->errors++;
		/* Someone else's handle, maybe destroyed already: never a crash. */
		bo_info(c->fd, h ^ 1, &info);
		if (bo_destroy(c->fd, h))
			c->errors++;
	}
	return NULL;
}

TEST_F(bo, threads_create_destroy_one_fd)
{
	struct churn c[4];
	pthread_t t[4];

	for (int i = 0; i < 4; i++) {
		c[i] = (struct churn){ .fd = self->ctx, .pg = self->pg };
		ASSERT_EQ(0, pthread_create(&t[i], NULL, churn_thread, &c[i]));
	}
	for (int i = 0; i < 4; i++) {
		pthread_join(t[i], NULL);
		EXPECT_EQ(0, c[i].errors) TH_LOG("thread %d", i);
	}
	EXPECT_TRUE(counters_zero(_metadata));
}

/*
 * Unbinding the device with BOs of every kind alive on its fd: the BOs and
 * their mappings keep working (they are RAM), what would make a new BO
 * is -ENODEV, and everything is freed when the fd goes
 * (Documentation/buffers.rst, "Device removal").
 */
TEST_F_TIMEOUT(bo, unbind_with_live_bos, 120)
{
	size_t len = 4 * self->pg;
	int host, dmabuf, exported, ret;
	unsigned char *a, *c, *x, *mem;
	struct mcp_bo_info info;
	__u32 h, hc, hu = 0, hi = 0, hh, tmp;

	if (!variant->device)
		SKIP(return, "the host context has no device to remove");

	ASSERT_EQ(0, bo_create_node(self->ctx, len, 0, 0, &h));
	ASSERT_EQ(0, bo_create_node(self->ctx, len, MCP_BO_COHERENT, 0, &hc));
	a = bo_map(self->ctx, h, len, 0);
	c = bo_map(self->ctx, hc, len, 0);
	ASSERT_NE(NULL, a);
	ASSERT_NE(NULL, c);
	fill(a, len, 18);
	fill(c, len, 19);
	mem = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, mem);
	memset(mem, PAT8, len);
	if (!self->narrow || user_below(mem, len, self->dma_mask))
		ASSERT_EQ(0, bo_userptr(self->ctx, mem, len, MCP_BO_USERPTR_WRITE, &hu));
	/* An import of a host context's export. */
	host = mcp_open();
	ASSERT_LE(0, host);
	ASSERT_EQ(0, bo_create_node(host, len, 0, 0, &hh));
	dmabuf = bo_export(host, hh);
	ASSERT_LE(0, dmabuf);
	ret = bo_import(self->ctx, dmabuf, &hi, NULL);
	ASSERT_EQ(self->narrow ? -EIO : 0, ret);

	ASSERT_EQ(0, mcp_pci_unbind(self->addr));
	ASSERT_FALSE(mcp_pci_bound(self->addr));

	/* Revoking the BARs left the BO mappings alone: they are RAM. */
	EXPECT_TRUE(check(a, len, 18));
	EXPECT_TRUE(check(c, len, 19));
	fill(a, len, 20);
	EXPECT_TRUE(check(a, len, 20));
	/* Nothing new on a removed device ... */
	EXPECT_EQ(-ENODEV, bo_create_node(self->ctx, len, 0, 0, &tmp));
	EXPECT_EQ(-ENODEV, bo_userptr(self->ctx, mem, len, 0, &tmp));
	EXPECT_EQ(-ENODEV, bo_import(self->ctx, dmabuf, &tmp, NULL));
	/* ... but what is there can still be read out and shared. */
	ASSERT_EQ(0, bo_info(self->ctx, h, &info));
	EXPECT_EQ(len, info.length);
	exported = bo_export(self->ctx, h);
	ASSERT_LE(0, exported);
	x = mmap(NULL, len, PROT_READ, MAP_SHARED, exported, 0);
	ASSERT_NE(MAP_FAILED, x);
	EXPECT_TRUE(check(x, len, 20));
	munmap(x, len);
	close(exported);
	EXPECT_EQ(0, bo_destroy(self->ctx, hc));
	if (hu)
		EXPECT_EQ(0, bo_destroy(self->ctx, hu));
	if (!ret)
		EXPECT_EQ(0, bo_destroy(self->ctx, hi));

	/* The fd and the mappings go: everything is freed. */
	close(dmabuf);
	close(host);
	close(self->ctx);
	self->ctx = -1;
	munmap(a, len);
	munmap(c, len);
	munmap(mem, len);
	EXPECT_TRUE(counters_zero(_metadata));
	EXPECT_EQ(0, mcp_counter("device_files"));

	/* Bound again for the tests after this one. */
	EXPECT_EQ(0, mcp_pci_bind(self->addr));
	EXPECT_LE(0, mcp_dev_ensure_listed(self->fd, self->addr, &(struct mcp_dev_info){ 0 }));
}

/* Everything at once, then closed: every counter back to zero. */
TEST_F(bo, counters_back_to_zero_after_close)
{
	int other = open_ctx(self, variant), dmabuf;
	unsigned char *mem, *a;
	__u32 h, u, ih;

	ASSERT_LE(0, other);
	mem = mmap(NULL, 8 * self->pg, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, mem);
	memset(mem, PAT8, 8 * self->pg);
	USERPTR_OR_SKIP(mem, 8 * self->pg);
	ASSERT_EQ(0, bo_create_node(other, 4 * self->pg, 0, 0, &h));
	ASSERT_EQ(0, bo_userptr(other, mem, 8 * self->pg, MCP_BO_USERPTR_WRITE, &u));
	a = bo_map(other, h, 4 * self->pg, 0);
	ASSERT_NE(NULL, a);
	dmabuf = bo_export(other, h);
	ASSERT_LE(0, dmabuf);
	IMPORT_OR_SKIP(other, dmabuf, self->narrow);
	ASSERT_EQ(0, bo_import(other, dmabuf, &ih, NULL));
	/* The kernel BO, the user pointer and the import of the first. */
	EXPECT_EQ(3, mcp_counter("bo_objects"));
	EXPECT_EQ(4, mcp_counter("bo_kernel_pages"));
	EXPECT_EQ(8, mcp_counter("bo_pinned_pages"));
	EXPECT_EQ(1, mcp_counter("bo_mappings"));
	EXPECT_EQ(1, mcp_counter("bo_exports"));
	EXPECT_EQ(1, mcp_counter("bo_imports"));
	close(dmabuf);
	close(other);
	/* The mapping holds the fd, so its context and every BO, alive. */
	EXPECT_EQ(3, mcp_counter("bo_objects"));
	EXPECT_EQ(8, mcp_counter("bo_pinned_pages"));
	munmap(a, 4 * self->pg);
	munmap(mem, 8 * self->pg);
	EXPECT_TRUE(counters_zero(_metadata));
}

/*
 * rmmod is refused while anything still runs mcp.ko code for a BO: a
 * mapping (it holds the fd), an exported dma-buf (it holds the module), a
 * mapping of that dma-buf.  With the last one gone the module unloads.
 */
FIXTURE(unload) {
	int unused;
};

FIXTURE_SETUP(unload)
{
	ASSERT_EQ(0, mcp_ensure_loaded());
}

FIXTURE_TEARDOWN(unload)
{
	if (!mcp_module_loaded())
		mcp_ensure_loaded();
}

TEST_F_TIMEOUT(unload, rmmod_refused_while_bo_in_use, 120)
{
	long pg = sysconf(_SC_PAGESIZE);
	unsigned char *a, *m;
	int fd, dmabuf;
	__u32 h;

	fd = mcp_open();
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, bo_create_node(fd, 2 * pg, 0, 0, &h));
	a = bo_map(fd, h, 2 * pg, 0);
	ASSERT_NE(NULL, a);
	fill(a, 2 * pg, 21);
	dmabuf = bo_export(fd, h);
	ASSERT_LE(0, dmabuf);
	close(fd);

	EXPECT_EQ(-EWOULDBLOCK, mcp_unload_module(O_NONBLOCK)) TH_LOG("with a BO mapping");
	munmap(a, 2 * pg);
	EXPECT_EQ(-EWOULDBLOCK, mcp_unload_module(O_NONBLOCK)) TH_LOG("with a dma-buf");
	m = mmap(NULL, 2 * pg, PROT_READ | PROT_WRITE, MAP_SHARED, dmabuf, 0);
	ASSERT_NE(MAP_FAILED, m);
	close(dmabuf);
	EXPECT_EQ(-EWOULDBLOCK, mcp_unload_module(O_NONBLOCK)) TH_LOG("with a dma-buf mapping");
	ASSERT_TRUE(mcp_module_loaded());
	EXPECT_TRUE(check(m, 2 * pg, 21));
	munmap(m, 2 * pg);
	EXPECT_TRUE(counters_zero(_metadata));

	EXPECT_EQ(0, mcp_unload_module(O_NONBLOCK));
	EXPECT_FALSE(mcp_module_loaded());
	ASSERT_EQ(0, mcp_ensure_loaded());
}

MCP_TEST_MAIN
