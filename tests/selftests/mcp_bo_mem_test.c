// SPDX-License-Identifier: GPL-2.0-only
/*
 * Memory of kernel buffer objects, seen from outside (issue #24):
 *
 *  - requests that cannot be had fail fast: four concurrent 4 GiB
 *    MCP_IOC_BO_CREATEs in the 2 GiB test VM each return -ENOMEM within a
 *    second, MemFree never drops by more than a small tolerance while they
 *    run, and no OOM kill happens (/proc/vmstat oom_kill);
 *  - /proc/PID/fdinfo of a context fd reports its buffers with DRM's
 *    client usage keys (drm-driver, drm-client-id, drm-pdev,
 *    drm-total/resident/memory-system, drm-total/resident-userptr);
 *  - BO memory is charged to the caller's memory cgroup (cgroup v2
 *    memory.current), and a BO larger than the cgroup's memory.max is
 *    refused at once.
 *
 * On the host context (/dev/mcp) and on the edu device fd.
 */
#include "mcp_bo.h"
#include "mcp_dev.h"

#include <pthread.h>
#include <time.h>

#define MIB		(1ULL << 20)
#define BIG_LEN		(4ULL << 30)	/* MCP_BO_MAX_LENGTH, twice the VM */
#define NR_BIG		4
/* MemFree may wander by this much for reasons of its own. */
#define MEMFREE_SLACK	(64 * MIB)
#define CGROUP_ROOT	"/sys/fs/cgroup"
#define CGROUP_DIR	CGROUP_ROOT "/mcp_bo_mem_test"

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* A "Key: N kB" line of /proc/meminfo in bytes; -1 when missing. */
static long long meminfo(const char *key)
{
	char buf[8192], *p;
	size_t klen = strlen(key);

	if (mcp_read_file("/proc/meminfo", buf, sizeof(buf)) <= 0)
		return -1;
	for (p = buf; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
		if (!strncmp(p, key, klen) && p[klen] == ':')
			return strtoll(p + klen + 1, NULL, 10) * 1024;
	return -1;
}

/* A "key N" line of /proc/vmstat; -1 when missing. */
static long long vmstat(const char *key)
{
	char buf[16384], *p;
	size_t klen = strlen(key);

	if (mcp_read_file("/proc/vmstat", buf, sizeof(buf)) <= 0)
		return -1;
	for (p = buf; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
		if (!strncmp(p, key, klen) && p[klen] == ' ')
			return strtoll(p + klen + 1, NULL, 10);
	return -1;
}

/*
 * The value of "key:\tVALUE" in /proc/self/fdinfo/fd, copied into val;
 * 0, or -ENOENT when the key is missing.
 */
static int fdinfo_str(int fd, const char *key, char *val, size_t len)
{
	char path[64], buf[4096], *p;
	size_t klen = strlen(key);

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	if (mcp_read_file(path, buf, sizeof(buf)) <= 0)
		return -EIO;
	for (p = buf; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
		if (strncmp(p, key, klen) || p[klen] != ':')
			continue;
		p += klen + 1;
		p += strspn(p, " \t");
		snprintf(val, len, "%.*s", (int)strcspn(p, "\n"), p);
		return 0;
	}
	return -ENOENT;
}

/* A "key: N KiB" fdinfo value in KiB, or "key: N" as is; -1 when missing. */
static long long fdinfo_num(int fd, const char *key)
{
	char val[128];

	if (fdinfo_str(fd, key, val, sizeof(val)))
		return -1;
	return strtoll(val, NULL, 10);
}

FIXTURE(mem) {
	int fd;		/* /dev/mcp */
	int ctx;	/* the context under test: fd, or an edu device fd */
	__u32 idx;
	char addr[MCP_PCI_ADDR_LEN];
};

FIXTURE_VARIANT(mem) {
	int device;
};

FIXTURE_VARIANT_ADD(mem, host) {
	.device = 0,
};

FIXTURE_VARIANT_ADD(mem, edu) {
	.device = 1,
};

static int open_ctx(FIXTURE_DATA(mem) *self, const FIXTURE_VARIANT(mem) *variant)
{
	return variant->device ? mcp_dev_open(self->fd, self->idx) : mcp_open();
}

FIXTURE_SETUP(mem)
{
	struct mcp_dev_info info;

	self->ctx = -1;
	ASSERT_EQ(0, mcp_ensure_loaded());
	self->fd = mcp_open();
	ASSERT_LE(0, self->fd) TH_LOG("open %s: %s", MCP_DEV_PATH, strerror(errno));
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
}

FIXTURE_TEARDOWN(mem)
{
	if (self->ctx >= 0 && self->ctx != self->fd)
		close(self->ctx);
	if (self->fd >= 0)
		close(self->fd);
}

/* ---- fail fast ---- */

struct big_req {
	int ctx;
	pthread_barrier_t *start;
	int ret;
	double seconds;
};

static void *big_create(void *arg)
{
	struct big_req *r = arg;
	double t0;
	__u32 h = 0;

	pthread_barrier_wait(r->start);
	t0 = now_s();
	r->ret = bo_create_node(r->ctx, BIG_LEN, 0, 0, &h);
	r->seconds = now_s() - t0;
	if (!r->ret)
		bo_destroy(r->ctx, h);
	return NULL;
}

struct memfree_watch {
	volatile int stop;
	long long min;
};

/* The lowest MemFree seen while the requests run, every millisecond. */
static void *watch_memfree(void *arg)
{
	struct memfree_watch *w = arg;

	while (!w->stop) {
		long long v = meminfo("MemFree");

		if (v >= 0 && v < w->min)
			w->min = v;
		usleep(1000);
	}
	return NULL;
}

/*
 * Four 4 GiB requests at once, each on a context of its own and with no
 * node (a device context's device has none in the VM; the host context
 * takes the caller's): each is refused within a second, memory is never
 * drained on the way, and nobody is OOM-killed.
 */
TEST_F(mem, concurrent_4g_fail_fast)
{
	long long total = meminfo("MemTotal");
	long long free0, free1, oom0, oom1;
	struct memfree_watch watch = { 0 };
	struct big_req req[NR_BIG];
	pthread_barrier_t start;
	pthread_t tid[NR_BIG], wt;
	int i;

	ASSERT_LT(0, total);
	if ((unsigned long long)total >= BIG_LEN)
		SKIP(return, "%lld MiB of RAM: a 4 GiB BO might fit", total >> 20);
	oom0 = vmstat("oom_kill");
	ASSERT_LE(0, oom0) TH_LOG("/proc/vmstat has no oom_kill");
	free0 = meminfo("MemFree");
	ASSERT_LT(0, free0);

	ASSERT_EQ(0, pthread_barrier_init(&start, NULL, NR_BIG));
	for (i = 0; i < NR_BIG; i++) {
		req[i] = (struct big_req){ .ctx = open_ctx(self, variant), .start = &start };
		ASSERT_LE(0, req[i].ctx);
	}
	watch.min = free0;
	ASSERT_EQ(0, pthread_create(&wt, NULL, watch_memfree, &watch));
	for (i = 0; i < NR_BIG; i++)
		ASSERT_EQ(0, pthread_create(&tid[i], NULL, big_create, &req[i]));
	for (i = 0; i < NR_BIG; i++)
		pthread_join(tid[i], NULL);
	watch.stop = 1;
	pthread_join(wt, NULL);
	pthread_barrier_destroy(&start);
	free1 = meminfo("MemFree");
	oom1 = vmstat("oom_kill");

	for (i = 0; i < NR_BIG; i++) {
		TH_LOG("request %d: %s in %.3f s", i, strerror(-req[i].ret),
		       req[i].seconds);
		EXPECT_EQ(-ENOMEM, req[i].ret);
		EXPECT_GT(1.0, req[i].seconds);
		close(req[i].ctx);
	}
	TH_LOG("MemFree %lld MiB before, lowest %lld MiB, %lld MiB after; oom_kill %lld -> %lld",
	       free0 >> 20, watch.min >> 20, free1 >> 20, oom0, oom1);
	EXPECT_EQ(oom0, oom1);
	EXPECT_GT(MEMFREE_SLACK, free0 - watch.min);
	EXPECT_GT(MEMFREE_SLACK, llabs(free0 - free1));
	EXPECT_EQ(0, mcp_counter("bo_kernel_pages"));
}

/*
 * What fits still works: an eighth of MemAvailable (on the host context
 * all of it from the caller's node, which on the 4-node VM holds a
 * quarter of the RAM), then freed.
 */
TEST_F(mem, fitting_request_succeeds)
{
	long long avail = meminfo("MemAvailable");
	__u64 len;
	__u32 h = 0;

	ASSERT_LT(0, avail);
	len = (avail / 8) & ~(2 * MIB - 1);
	ASSERT_LT(0, len);
	ASSERT_EQ(0, bo_create_node(self->ctx, len, 0, 0, &h)) TH_LOG("%llu MiB", len >> 20);
	EXPECT_EQ(len >> 12, mcp_counter("bo_kernel_pages"));
	EXPECT_EQ(0, bo_destroy(self->ctx, h));
	EXPECT_EQ(0, mcp_counter("bo_kernel_pages"));
}

/* ---- fdinfo ---- */

TEST_F(mem, fdinfo_keys)
{
	long pg = sysconf(_SC_PAGESIZE);
	char val[128];
	__u32 h[3], u;
	void *p;
	int i;

	ASSERT_EQ(0, fdinfo_str(self->ctx, "drm-driver", val, sizeof(val)));
	EXPECT_STREQ("mcp", val);
	EXPECT_LT(0, fdinfo_num(self->ctx, "drm-client-id"));
	if (variant->device) {
		ASSERT_EQ(0, fdinfo_str(self->ctx, "drm-pdev", val, sizeof(val)));
		EXPECT_STREQ(self->addr, val);
	} else {
		EXPECT_EQ(-ENOENT, fdinfo_str(self->ctx, "drm-pdev", val, sizeof(val)));
	}
	ASSERT_EQ(0, fdinfo_str(self->ctx, "drm-total-system", val, sizeof(val)));
	EXPECT_STREQ("0 KiB", val);

	for (i = 0; i < 3; i++)
		ASSERT_EQ(0, bo_create_node(self->ctx, 4 * MIB, 0, 0, &h[i]));
	EXPECT_EQ(12288, fdinfo_num(self->ctx, "drm-total-system"));
	EXPECT_EQ(12288, fdinfo_num(self->ctx, "drm-resident-system"));
	EXPECT_EQ(12288, fdinfo_num(self->ctx, "drm-memory-system"));
	EXPECT_EQ(0, fdinfo_num(self->ctx, "drm-total-userptr"));

	p = mmap(NULL, 16 * pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, p);
	ASSERT_EQ(0, bo_userptr(self->ctx, p, 16 * pg, MCP_BO_USERPTR_WRITE, &u));
	EXPECT_EQ(16 * pg / 1024, fdinfo_num(self->ctx, "drm-total-userptr"));
	EXPECT_EQ(16 * pg / 1024, fdinfo_num(self->ctx, "drm-resident-userptr"));
	EXPECT_EQ(12288, fdinfo_num(self->ctx, "drm-total-system"));

	EXPECT_EQ(0, bo_destroy(self->ctx, h[1]));
	EXPECT_EQ(8192, fdinfo_num(self->ctx, "drm-total-system"));
	EXPECT_EQ(0, bo_destroy(self->ctx, u));
	EXPECT_EQ(0, fdinfo_num(self->ctx, "drm-total-userptr"));
	EXPECT_EQ(0, bo_destroy(self->ctx, h[0]));
	EXPECT_EQ(0, bo_destroy(self->ctx, h[2]));
	EXPECT_EQ(0, fdinfo_num(self->ctx, "drm-total-system"));
	munmap(p, 16 * pg);
}

/* One id per context: another context has another, a dup() the same. */
TEST_F(mem, fdinfo_client_id)
{
	int other = open_ctx(self, variant), dup_fd = dup(self->ctx);
	long long id = fdinfo_num(self->ctx, "drm-client-id");
	__u32 h;

	ASSERT_LE(0, other);
	ASSERT_LE(0, dup_fd);
	ASSERT_LT(0, id);
	EXPECT_NE(id, fdinfo_num(other, "drm-client-id"));
	EXPECT_EQ(id, fdinfo_num(dup_fd, "drm-client-id"));
	/* Another context's buffers are not this one's. */
	ASSERT_EQ(0, bo_create_node(other, 4 * MIB, 0, 0, &h));
	EXPECT_EQ(4096, fdinfo_num(other, "drm-total-system"));
	EXPECT_EQ(0, fdinfo_num(self->ctx, "drm-total-system"));
	close(dup_fd);
	close(other);
}

/* ---- memory cgroup ---- */

/* Makes CGROUP_DIR with the memory controller; 0, or a reason to skip. */
static const char *cgroup_setup(void)
{
	char buf[512];

	if (mcp_read_file(CGROUP_ROOT "/cgroup.controllers", buf, sizeof(buf)) <= 0)
		return "cgroup v2 is not mounted at " CGROUP_ROOT;
	if (!strstr(buf, "memory"))
		return "cgroup v2 has no memory controller";
	if (mcp_write_file(CGROUP_ROOT "/cgroup.subtree_control", "+memory"))
		return "cannot enable the memory controller for child groups";
	if (mkdir(CGROUP_DIR, 0755) && errno != EEXIST)
		return "cannot make " CGROUP_DIR;
	return NULL;
}

static void cgroup_cleanup(void)
{
	rmdir(CGROUP_DIR);
}

/*
 * Runs fn(ctx) in a child that has joined CGROUP_DIR, on a new context of
 * its own; the child's exit status is fn's result (0: passed).
 */
static int in_cgroup(FIXTURE_DATA(mem) *self, const FIXTURE_VARIANT(mem) *variant,
		     int (*fn)(int ctx))
{
	int status, ctx;
	char pid[32];
	pid_t child;

	child = fork();
	if (child < 0)
		return -errno;
	if (child == 0) {
		snprintf(pid, sizeof(pid), "%d", getpid());
		if (mcp_write_file(CGROUP_DIR "/cgroup.procs", pid))
			_exit(90);
		ctx = open_ctx(self, variant);
		if (ctx < 0)
			_exit(91);
		_exit(fn(ctx));
	}
	if (waitpid(child, &status, 0) != child)
		return -errno;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* memory.current grows by about the BO (64 MiB) and shrinks back. */
static int charge_check(int ctx)
{
	long long before, during, after;
	__u32 h;

	before = mcp_read_ll(CGROUP_DIR "/memory.current");
	if (before < 0)
		return 1;
	if (bo_create_node(ctx, 64 * MIB, 0, 0, &h))
		return 2;
	during = mcp_read_ll(CGROUP_DIR "/memory.current");
	if (bo_destroy(ctx, h))
		return 3;
	after = mcp_read_ll(CGROUP_DIR "/memory.current");
	fprintf(stderr, "# memory.current %lld KiB, with a 64 MiB BO %lld KiB, after %lld KiB\n",
		before >> 10, during >> 10, after >> 10);
	/* The page array (128 KiB) and slab objects come on top. */
	if (during - before < (long long)(64 * MIB) ||
	    during - before > (long long)(64 * MIB + 4 * MIB))
		return 4;
	if (during - after < (long long)(60 * MIB))
		return 5;
	return 0;
}

TEST_F(mem, memcg_charge)
{
	const char *why = cgroup_setup();

	if (why)
		SKIP(return, "%s", why);
	EXPECT_EQ(0, in_cgroup(self, variant, charge_check));
	cgroup_cleanup();
}

/* Above memory.max (32 MiB): refused at once, no OOM kill in the group. */
static int limit_check(int ctx)
{
	long long oom0 = vmstat("oom_kill");
	double t0 = now_s(), dt;
	int ret;
	__u32 h;

	ret = bo_create_node(ctx, 64 * MIB, 0, 0, &h);
	dt = now_s() - t0;
	fprintf(stderr, "# 64 MiB BO under memory.max 32M: %s in %.3f s\n",
		strerror(-ret), dt);
	if (ret != -ENOMEM)
		return 1;
	if (dt >= 1.0)
		return 2;
	if (vmstat("oom_kill") != oom0)
		return 3;
	/* What fits the limit still works. */
	if (bo_create_node(ctx, 8 * MIB, 0, 0, &h) || bo_destroy(ctx, h))
		return 4;
	return 0;
}

TEST_F(mem, memcg_limit)
{
	const char *why = cgroup_setup();

	if (why)
		SKIP(return, "%s", why);
	ASSERT_EQ(0, mcp_write_file(CGROUP_DIR "/memory.max", "32M"));
	EXPECT_EQ(0, in_cgroup(self, variant, limit_check));
	mcp_write_file(CGROUP_DIR "/memory.max", "max");
	cgroup_cleanup();
}

MCP_TEST_MAIN
