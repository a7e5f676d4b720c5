// SPDX-License-Identifier: GPL-2.0-only
/*
 * CPU work done for a task is charged to it (kmod/mcp_charge.c): the cpu
 * DMA engine's copies and a graph's CPU COPY nodes run on a kernel thread
 * "mcp_cpu/PID" in the submitter's cgroups, so
 *  - the cgroup's cpu.stat usage_usec grows by the copy time, not only by
 *    the submitter's own CPU time (which is ~0: it sleeps on the fence);
 *  - the thread is listed in the cgroup's cgroup.threads and runs only on
 *    CPUs its cpuset allows, even for memory on a node the cpuset has no
 *    CPU of;
 *  - it goes when the fd closes.
 * Each case runs in a child moved into a fresh cgroup v2 group (cpu and
 * cpuset controllers enabled at the root) and skips without them.
 */
#include "mcp_test.h"
#include "mcp_graph.h"
#include "mcp_fence.h"

#include <dirent.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>

#define CG_ROOT		"/sys/fs/cgroup"
#define CG_DIR		CG_ROOT "/mcp_charge_test"
#define MIB		(1ULL << 20)
#define COPY_LEN	(16 * MIB)

/* CG_DIR with +cpu +cpuset below the root: NULL, or why not. */
static const char *cgroup_make(void)
{
	char buf[4096];

	if (mcp_read_file(CG_ROOT "/cgroup.controllers", buf, sizeof(buf)) <= 0)
		return "cgroup v2 is not mounted at " CG_ROOT;
	if (!strstr(buf, "cpu ") && !strstr(buf, "cpu\n"))
		return "cgroup v2 has no cpu controller";
	if (!strstr(buf, "cpuset"))
		return "cgroup v2 has no cpuset controller";
	if (mcp_write_file(CG_ROOT "/cgroup.subtree_control", "+cpu +cpuset"))
		return "cannot enable cpu and cpuset at " CG_ROOT;
	rmdir(CG_DIR);
	if (mkdir(CG_DIR, 0755))
		return "cannot create " CG_DIR;
	return NULL;
}

static long long usage_usec(void)
{
	char buf[1024], *p;

	if (mcp_read_file(CG_DIR "/cpu.stat", buf, sizeof(buf)) <= 0)
		return -1;
	p = strstr(buf, "usage_usec ");
	return p ? atoll(p + strlen("usage_usec ")) : -1;
}

/* Moves the caller into CG_DIR. */
static int cgroup_enter(void)
{
	char pid[32];

	snprintf(pid, sizeof(pid), "%d", getpid());
	return mcp_write_file(CG_DIR "/cgroup.procs", pid);
}

/*
 * The thread of CG_DIR named "mcp_cpu/@owner": its tid, 0 when there is
 * none, and its allowed CPUs in @allowed.
 */
static pid_t charged_thread(pid_t owner, char *allowed, size_t len)
{
	char buf[4096], path[96], comm[64], want[32], *line, *save = NULL;
	pid_t found = 0;

	snprintf(want, sizeof(want), "mcp_cpu/%d", owner);
	if (mcp_read_file(CG_DIR "/cgroup.threads", buf, sizeof(buf)) < 0)
		return 0;
	for (line = strtok_r(buf, "\n", &save); line && !found;
	     line = strtok_r(NULL, "\n", &save)) {
		snprintf(path, sizeof(path), "/proc/%s/comm", line);
		if (mcp_read_file(path, comm, sizeof(comm)) <= 0)
			continue;
		comm[strcspn(comm, "\n")] = '\0';
		if (!strcmp(comm, want))
			found = atoi(line);
	}
	if (found && allowed) {
		char status[4096], *p;

		snprintf(path, sizeof(path), "/proc/%d/status", found);
		allowed[0] = '\0';
		if (mcp_read_file(path, status, sizeof(status)) > 0 &&
		    (p = strstr(status, "Cpus_allowed_list:\t"))) {
			p += strlen("Cpus_allowed_list:\t");
			snprintf(allowed, len, "%.*s", (int)strcspn(p, "\n"), p);
		}
	}
	return found;
}

static double cpu_seconds(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_utime.tv_sec + ru.ru_stime.tv_sec +
	       (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

/* What the child in CG_DIR measured, in memory shared with the test. */
struct seen {
	int err;		/* first failing step's -errno */
	int step;
	double own_s;		/* its CPU time over the copies */
	double wall_s;		/* their wall time */
	pid_t thread;		/* mcp_cpu/PID while the fd was open */
	char allowed[256];	/* that thread's Cpus_allowed_list */
};

static struct seen *seen_map(void)
{
	struct seen *s = mmap(NULL, sizeof(*s), PROT_READ | PROT_WRITE,
			      MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	return s == MAP_FAILED ? NULL : s;
}

static __u32 big_bo(int fd, int node)
{
	struct mcp_bo_create c = {
		.size = sizeof(c), .length = COPY_LEN,
		.flags = node >= 0 ? MCP_BO_NODE : 0, .node = node,
	};

	return mcp_ioctl(fd, MCP_IOC_BO_CREATE, &c) ? 0 : c.handle;
}

/* What the child saw since @c0 / @t0, the thread with @fd open; exits. */
static void child_done(struct seen *s, double c0, __u64 t0, int fd)
{
	s->wall_s = (now_ns() - t0) / 1e9;
	s->own_s = cpu_seconds() - c0;
	s->thread = charged_thread(getpid(), s->allowed, sizeof(s->allowed));
	close(fd);
	_exit(0);
}

#define FAIL(s, n, e)	do { (s)->step = (n); (s)->err = (e); _exit(1); } while (0)

/*
 * The child moves into CG_DIR and opens a context with a source BO and
 * a destination BO on @node (@bo[0], @bo[1]): the context's fd.
 */
static int child_start(struct seen *s, int node, __u32 *bo)
{
	int fd, ret = cgroup_enter();

	if (ret)
		FAIL(s, 1, ret);
	fd = mcp_open();
	if (fd < 0)
		FAIL(s, 2, fd);
	bo[0] = big_bo(fd, -1);
	bo[1] = big_bo(fd, node);
	if (!bo[0] || !bo[1])
		FAIL(s, 3, -ENOMEM);
	return fd;
}

/* @rounds synchronous cpu-engine copies into a BO on @node. */
static void child_dma(struct seen *s, int node, int rounds)
{
	struct mcp_dma_submit d;
	__u32 bo[2];
	double c0;
	__u64 t0;
	int fd = child_start(s, node, bo), ret;

	c0 = cpu_seconds();
	t0 = now_ns();
	for (int i = 0; i < rounds; i++) {
		memset(&d, 0, sizeof(d));
		d.size = sizeof(d);
		d.engine = MCP_ENGINE_CPU;
		d.src_handle = bo[0];
		d.dst_handle = bo[1];
		d.length = COPY_LEN;
		d.in_fence = -1;
		ret = mcp_ioctl(fd, MCP_IOC_DMA_SUBMIT, &d);
		if (ret)
			FAIL(s, 4, ret);
	}
	child_done(s, c0, t0, fd);
}

/* @rounds executions of a one-node graph: a CPU COPY into a BO on @node. */
static void child_graph(struct seen *s, int node, int rounds)
{
	struct mcp_graph_case_graph g;
	struct mcp_graph_exec e;
	__u32 bo[2];
	double c0;
	__u64 t0;
	int fd = child_start(s, node, bo), graph, fence, ret;

	mcp_graph_case_init(&g);
	mcp_graph_case_buffer(&g, COPY_LEN, MCP_GRAPH_BUF_INPUT);
	mcp_graph_case_buffer(&g, COPY_LEN, MCP_GRAPH_BUF_OUTPUT);
	mcp_graph_case_tensor(&g, 0, MCP_DTYPE_F32, 0, 1, (unsigned int)(COPY_LEN / 4));
	mcp_graph_case_tensor(&g, 1, MCP_DTYPE_F32, 0, 1, (unsigned int)(COPY_LEN / 4));
	mcp_graph_case_node(&g, MCP_OP_COPY, MCP_GRAPH_ENGINE_CPU, 1, 1, 0, 1);
	graph = graph_create(fd, &g, bo);
	if (graph < 0)
		FAIL(s, 4, graph);
	c0 = cpu_seconds();
	t0 = now_ns();
	for (int i = 0; i < rounds; i++) {
		memset(&e, 0, sizeof(e));
		e.size = sizeof(e);
		e.graph = graph;
		e.in_fence = -1;
		e.out_fence = -1;
		ret = mcp_ioctl(fd, MCP_IOC_GRAPH_EXEC, &e);
		if (ret)
			FAIL(s, 5, ret);
		fence = e.out_fence;
		ret = fence_finish(fence, 60000);
		if (ret != 1)
			FAIL(s, 6, ret);
	}
	child_done(s, c0, t0, fd);
}

FIXTURE(charge) {
	struct seen *s;
	int n_nodes;
};

FIXTURE_SETUP(charge)
{
	const char *why;
	char list[64];

	ASSERT_EQ(0, mcp_ensure_loaded());
	self->s = seen_map();
	ASSERT_NE(NULL, self->s);
	why = cgroup_make();
	if (why)
		SKIP(return, "%s", why);
	self->n_nodes = 0;
	for (int n = 0; n < 64; n++) {
		snprintf(list, sizeof(list), "/sys/devices/system/node/node%d", n);
		if (!access(list, F_OK))
			self->n_nodes = n + 1;
	}
}

FIXTURE_TEARDOWN(charge)
{
	/* The thread goes with the fd: the group empties and is removed. */
	for (int i = 0; i < 100 && rmdir(CG_DIR) && errno == EBUSY; i++)
		usleep(50000);
	if (self->s)
		munmap(self->s, sizeof(*self->s));
}

/* Runs @fn in a child in CG_DIR; the CPU time the group was charged. */
static double run_charged(struct __test_metadata *_metadata, struct seen *s,
			  void (*fn)(struct seen *, int, int), int node, int rounds)
{
	long long u0 = usage_usec(), u1;
	int status;
	pid_t child;

	memset(s, 0, sizeof(*s));
	child = fork();
	if (!child)
		fn(s, node, rounds);
	EXPECT_LT(0, child);
	EXPECT_EQ(child, waitpid(child, &status, 0));
	EXPECT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status))
		TH_LOG("child failed at step %d: %s", s->step, strerror(-s->err));
	u1 = usage_usec();
	EXPECT_LE(0, u0);
	return (u1 - u0) / 1e6;
}

static void expect_charged(struct __test_metadata *_metadata, struct seen *s,
			   double charged)
{
	TH_LOG("copies: %.3f s wall; the child's own CPU %.3f s; the group's %.3f s",
	       s->wall_s, s->own_s, charged);
	EXPECT_NE(0, s->thread) TH_LOG("no mcp_cpu/PID thread in " CG_DIR);
	/*
	 * The copies keep one CPU busy for most of their wall time; on
	 * shared threads the group would see only the child's own time.
	 */
	EXPECT_LT(s->own_s + 0.5 * s->wall_s, charged);
}

TEST_F_TIMEOUT(charge, dma_copies_charged_to_the_submitters_cgroup, 300)
{
	double charged = run_charged(_metadata, self->s, child_dma, -1, 32);

	expect_charged(_metadata, self->s, charged);
}

TEST_F_TIMEOUT(charge, graph_copies_charged_to_the_submitters_cgroup, 300)
{
	double charged = run_charged(_metadata, self->s, child_graph, -1, 32);

	expect_charged(_metadata, self->s, charged);
}

/*
 * Memory on the last node, a cpuset of node 0's first CPU: the copy runs
 * inside the cpuset (the shared per-CPU threads ran it on the last node).
 */
static void cpuset_case(struct __test_metadata *_metadata, struct seen *s,
			int n_nodes, void (*fn)(struct seen *, int, int))
{
	char cpu[16];
	int first = mcp_node_first_cpu(0), node = n_nodes - 1;

	if (n_nodes < 2 || first < 0 || !mcp_node_has_memory(node))
		SKIP(return, "needs node 0 with a CPU and another node with memory");
	snprintf(cpu, sizeof(cpu), "%d", first);
	ASSERT_EQ(0, mcp_write_file(CG_DIR "/cpuset.cpus", cpu));
	run_charged(_metadata, s, fn, node, 2);
	EXPECT_NE(0, s->thread);
	EXPECT_STREQ(cpu, s->allowed) TH_LOG("the copy thread may run outside the cpuset");
}

TEST_F_TIMEOUT(charge, dma_copy_thread_stays_in_the_cpuset, 120)
{
	cpuset_case(_metadata, self->s, self->n_nodes, child_dma);
}

TEST_F_TIMEOUT(charge, graph_copy_thread_stays_in_the_cpuset, 120)
{
	cpuset_case(_metadata, self->s, self->n_nodes, child_graph);
}

/* Memory on node 1, the cpuset all CPUs: the thread runs on node 1's. */
TEST_F_TIMEOUT(charge, copy_thread_runs_on_the_memory_node, 120)
{
	char want[256];

	if (self->n_nodes < 2 || mcp_node_first_cpu(1) < 0)
		SKIP(return, "needs node 1 with CPUs");
	ASSERT_LT(0, mcp_read_file("/sys/devices/system/node/node1/cpulist",
				   want, sizeof(want)));
	want[strcspn(want, "\n")] = '\0';
	run_charged(_metadata, self->s, child_dma, 1, 2);
	EXPECT_STREQ(want, self->s->allowed);
}

/* Closing the fd ends the thread: nothing stays behind in the group. */
TEST_F_TIMEOUT(charge, thread_goes_with_the_fd, 120)
{
	char buf[256] = "";

	run_charged(_metadata, self->s, child_dma, -1, 1);
	EXPECT_NE(0, self->s->thread);
	for (int i = 0; i < 100; i++) {
		if (mcp_read_file(CG_DIR "/cgroup.threads", buf, sizeof(buf)) == 0)
			break;
		usleep(50000);
	}
	EXPECT_STREQ("", buf) TH_LOG("left in the group: %s", buf);
}

MCP_TEST_MAIN
