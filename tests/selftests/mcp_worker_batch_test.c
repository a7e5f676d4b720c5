// SPDX-License-Identifier: GPL-2.0-only
/*
 * Batched worker jobs through raw ioctls (uapi/linux/mcp.h, "struct
 * mcp_worker_register", MCP_IOC_JOBS_DONE, MCP_FEAT_JOB_BATCH): a chain
 * comes back from one read in order with MCP_WORKER_JOB_CHAINED; forks,
 * joins and jobs routed to another node are not chained; a failure or a
 * time-out cancels the chained rest; closing a worker fd mid-chain
 * re-queues the running job and puts the others back; one-job reads are
 * unchanged; JOBS_DONE's bad arguments, per-report statuses and clamped
 * timestamps; a read into a buffer that faults hands its chain back, also
 * after a report by a guessed id started part of it.  The
 * test thread is the worker: every step is explicit, but for the races:
 * two threads reporting one chain, two threads reading one worker fd.
 */
#include "mcp_bo.h"
#include "mcp_fence.h"
#include "mcp_graph.h"
#include "../graph_cases/mcp_graph_cases.h"

#include <pthread.h>
#include <stdint.h>
#include <time.h>

#define PAGE		4096UL
#define CHAIN_MAX	16
#define JOB_SZ		sizeof(struct mcp_worker_job)

static const char * const batch_counters[] = {
	"graph_objects", "graph_execs_in_flight", "graph_workers", "bo_objects",
};

/* Submits graph with a time-out (0: the knob's): the fence, or -errno. */
static int graph_exec(int fd, __u32 graph, __u32 timeout_ms, __u64 *exec_id)
{
	struct mcp_graph_exec e = {
		.size = sizeof(e), .graph = graph, .timeout_ms = timeout_ms,
		.in_fence = -1, .out_fence = -1,
	};
	int ret = mcp_ioctl(fd, MCP_IOC_GRAPH_EXEC, &e);

	*exec_id = e.exec_id;
	return ret ? ret : e.out_fence;
}

/* A worker fd for node (-1: the caller's), non-blocking; -errno. */
static int worker_open(int fd, int node)
{
	struct mcp_worker_register r = {
		.size = sizeof(r), .node = node, .fd = -1,
	};
	int ret = mcp_ioctl(fd, MCP_IOC_WORKER_REGISTER, &r);

	if (ret)
		return ret;
	fcntl(r.fd, F_SETFL, fcntl(r.fd, F_GETFL) | O_NONBLOCK);
	return r.fd;
}

/* read() with room for room jobs: jobs read, or -errno. */
static int read_jobs(int wfd, struct mcp_worker_job *jobs, size_t room)
{
	ssize_t n = read(wfd, jobs, room);

	if (n < 0)
		return -errno;
	return n % JOB_SZ ? -EPROTO : (int)(n / JOB_SZ);
}

/* Waits up to 5 s for at least one job: jobs read, or -errno. */
static int read_jobs_wait(int wfd, struct mcp_worker_job *jobs, size_t room)
{
	int n = -EAGAIN;

	for (int i = 0; i < 500 && n == -EAGAIN; i++) {
		n = read_jobs(wfd, jobs, room);
		if (n == -EAGAIN)
			usleep(10000);
	}
	return n;
}

static int job_done(int wfd, __u64 job_id, int result)
{
	struct mcp_job_done d = {
		.size = sizeof(d), .job_id = job_id, .result = result,
	};

	return mcp_ioctl(wfd, MCP_IOC_JOB_DONE, &d);
}

static int jobs_done(int wfd, struct mcp_job_report *r, __u32 n)
{
	struct mcp_jobs_done d = {
		.size = sizeof(d), .reports = (__u64)(uintptr_t)r, .n_reports = n,
	};

	return mcp_ioctl(wfd, MCP_IOC_JOBS_DONE, &d);
}

/* Reports jobs[0..n-1] with result 0 and the kernel's times. */
static void reports_of(struct mcp_job_report *r, const struct mcp_worker_job *jobs,
		       int n)
{
	memset(r, 0, n * sizeof(*r));
	for (int i = 0; i < n; i++)
		r[i].job_id = jobs[i].job_id;
}

/*
 * A chain of n WNOP nodes made into a graph on bo, a worker fd for the
 * caller's node in *wfd, and one execution of it: its fence, or -errno.
 */
static int chain_exec(int fd, const __u32 *bo, int n, int *wfd, __u64 *exec_id)
{
	int graph;

	graph = chain_graph_create(fd, bo, n);
	if (graph < 0)
		return graph;
	*wfd = worker_open(fd, -1);
	if (*wfd < 0)
		return *wfd;
	return graph_exec(fd, graph, 0, exec_id);
}

FIXTURE(batch) {
	int fd;
	__u32 bo[2];
	long long start[ARRAY_SIZE(batch_counters)];
};

FIXTURE_SETUP(batch)
{
	struct mcp_version v = { .size = sizeof(v) };

	ASSERT_EQ(0, mcp_ensure_loaded());
	for (size_t i = 0; i < ARRAY_SIZE(batch_counters); i++)
		self->start[i] = mcp_counter(batch_counters[i]);
	self->fd = mcp_open();
	ASSERT_LE(0, self->fd) TH_LOG("open %s: %s", MCP_DEV_PATH, strerror(errno));
	ASSERT_EQ(0, mcp_ioctl(self->fd, MCP_IOC_GET_VERSION, &v));
	if (!(v.features & MCP_FEAT_JOB_BATCH))
		SKIP(return, "MCP_FEAT_JOB_BATCH not reported");
	self->bo[0] = bo_new(self->fd, -1);
	ASSERT_NE(0, self->bo[0]);
}

/* Everything a test made is gone once its fds are. */
FIXTURE_TEARDOWN(batch)
{
	if (self->fd >= 0)
		close(self->fd);
	for (size_t i = 0; i < ARRAY_SIZE(batch_counters); i++) {
		EXPECT_EQ(self->start[i],
			  mcp_counter_settles(batch_counters[i], self->start[i]))
			TH_LOG("debugfs counter %s", batch_counters[i]);
	}
}

/* A chain of 8 comes back from one read, in order, the rest chained. */
TEST_F_TIMEOUT(batch, chain_in_one_read, 60)
{
	struct mcp_worker_job jobs[CHAIN_MAX];
	struct mcp_job_report r[CHAIN_MAX];
	struct mcp_graph_node_status ns[8];
	struct mcp_graph_status st;
	int graph, wfd, other, fence, n;
	pid_t tid = syscall(SYS_gettid);
	__u64 exec_id, t0;

	graph = chain_graph_create(self->fd, self->bo, 8);
	ASSERT_LT(0, graph);
	wfd = worker_open(self->fd, -1);
	ASSERT_LE(0, wfd);
	other = worker_open(self->fd, -1);
	ASSERT_LE(0, other);

	t0 = now_ns();
	fence = graph_exec(self->fd, graph, 0, &exec_id);
	ASSERT_LE(0, fence);
	memset(jobs, 0xa5, sizeof(jobs));
	n = read_jobs_wait(wfd, jobs, sizeof(jobs));
	ASSERT_EQ(8, n);
	for (int i = 0; i < n; i++) {
		/* Only the used entries are written. */
		EXPECT_EQ(1, jobs[i].n_inputs);
		EXPECT_EQ(0xa5a5a5a5u, jobs[i].inputs[1].handle);
		EXPECT_EQ(0xa5, jobs[i].param[0]);
		EXPECT_EQ(0, jobs[i].inputs[0].reserved);
		EXPECT_EQ(i, jobs[i].node);
		EXPECT_EQ(exec_id, jobs[i].exec_id);
		EXPECT_EQ(MCP_OP_WNOP, jobs[i].op);
		EXPECT_EQ(i ? MCP_WORKER_JOB_CHAINED : 0, jobs[i].flags) TH_LOG("job %d", i);
		EXPECT_EQ(0, jobs[i].reserved);
		if (i)
			EXPECT_NE(jobs[i - 1].job_id, jobs[i].job_id);
	}
	/* Every job is claimed: nothing for another worker. */
	EXPECT_EQ(-EAGAIN, read_jobs(other, jobs + 8, JOB_SZ));
	/* A chained job before its predecessor: not started. */
	EXPECT_EQ(-EBUSY, job_done(wfd, jobs[1].job_id, 0));
	ASSERT_EQ(0, graph_status(self->fd, exec_id, ns, 8, &st));
	EXPECT_NE(0, ns[0].start_ns);
	EXPECT_EQ(0, ns[1].start_ns);

	reports_of(r, jobs, n);
	ASSERT_EQ(0, jobs_done(wfd, r, n));
	for (int i = 0; i < n; i++) {
		EXPECT_EQ(0, r[i].status) TH_LOG("report %d", i);
	}
	EXPECT_EQ(1, fence_finish(fence, 10000));

	ASSERT_EQ(0, graph_status(self->fd, exec_id, ns, 8, &st));
	EXPECT_EQ(MCP_GRAPH_STATE_DONE, st.state);
	for (int i = 0; i < 8; i++) {
		EXPECT_EQ(0, ns[i].result);
		EXPECT_EQ(tid, ns[i].worker_tid) TH_LOG("node %d", i);
		EXPECT_LE(0, ns[i].numa_node);
		EXPECT_LE(t0, ns[i].start_ns);
		EXPECT_LE(ns[i].start_ns, ns[i].end_ns) TH_LOG("node %d", i);
		if (i)
			EXPECT_LE(ns[i - 1].end_ns, ns[i].start_ns) TH_LOG("node %d", i);
	}
	EXPECT_LE(ns[7].end_ns, st.end_ns);
	close(other);
	close(wfd);
}

/* One job of room per read: exactly the one-job protocol. */
TEST_F_TIMEOUT(batch, one_job_reads_unchanged, 60)
{
	struct mcp_worker_job jobs[2];
	int wfd, fence;
	__u64 exec_id;

	fence = chain_exec(self->fd, self->bo, 4, &wfd, &exec_id);
	ASSERT_LE(0, fence);

	EXPECT_EQ(-EINVAL, read_jobs(wfd, jobs, JOB_SZ - 1));
	for (int i = 0; i < 4; i++) {
		/* Room for one and a half: one, whole, unused entries zero. */
		memset(jobs, 0xa5, sizeof(jobs));
		ASSERT_EQ(1, read_jobs_wait(wfd, jobs, JOB_SZ + JOB_SZ / 2));
		EXPECT_EQ(i, jobs[0].node);
		EXPECT_EQ(0, jobs[0].flags);
		EXPECT_EQ(0, jobs[0].inputs[1].handle);
		EXPECT_EQ(0, jobs[0].param[0]);
		EXPECT_EQ(0xa5, ((unsigned char *)jobs)[JOB_SZ]);
		/* The next one is not ready before this one is reported. */
		EXPECT_EQ(-EAGAIN, read_jobs(wfd, jobs + 1, JOB_SZ));
		EXPECT_EQ(0, job_done(wfd, jobs[0].job_id, 0));
	}
	EXPECT_EQ(1, fence_finish(fence, 10000));
	close(wfd);
}

/*
 * Diamond 0 -> {1, 2} -> 3: nothing is chained; the branches go to two
 * workers.
 */
TEST_F_TIMEOUT(batch, fork_and_join_not_chained, 60)
{
	struct mcp_worker_job a[CHAIN_MAX], b[CHAIN_MAX];
	struct mcp_graph_case_graph g;
	int graph, w1, w2, fence;
	__u64 exec_id;

	mcp_graph_case_init(&g);
	mcp_graph_case_buffer(&g, PAGE, 0);
	for (int i = 0; i < 5; i++)
		mcp_graph_case_tensor(&g, 0, MCP_DTYPE_F32, 64 * i, 1, 16);
	mcp_graph_case_node(&g, MCP_OP_WNOP, MCP_GRAPH_ENGINE_WORKER, 1, 1, 0, 1);
	mcp_graph_case_node(&g, MCP_OP_WNOP, MCP_GRAPH_ENGINE_WORKER, 1, 1, 1, 2);
	mcp_graph_case_node(&g, MCP_OP_WNOP, MCP_GRAPH_ENGINE_WORKER, 1, 1, 1, 3);
	mcp_graph_case_node(&g, MCP_OP_WNOP, MCP_GRAPH_ENGINE_WORKER, 2, 1, 2, 3, 4);
	graph = graph_create(self->fd, &g, self->bo);
	ASSERT_LT(0, graph);
	w1 = worker_open(self->fd, -1);
	w2 = worker_open(self->fd, -1);
	ASSERT_LE(0, w1);
	ASSERT_LE(0, w2);
	fence = graph_exec(self->fd, graph, 0, &exec_id);
	ASSERT_LE(0, fence);

	ASSERT_EQ(1, read_jobs_wait(w1, a, sizeof(a)));
	EXPECT_EQ(0, a[0].node);
	EXPECT_EQ(0, job_done(w1, a[0].job_id, 0));
	/* Each branch alone, claimable by a different worker. */
	ASSERT_EQ(1, read_jobs_wait(w1, a, sizeof(a)));
	ASSERT_EQ(1, read_jobs_wait(w2, b, sizeof(b)));
	EXPECT_EQ(3, a[0].node + b[0].node);
	EXPECT_EQ(0, a[0].flags);
	EXPECT_EQ(0, b[0].flags);
	EXPECT_EQ(0, job_done(w1, a[0].job_id, 0));
	/* The join waits for the other branch. */
	EXPECT_EQ(-EAGAIN, read_jobs(w1, a, sizeof(a)));
	EXPECT_EQ(0, job_done(w2, b[0].job_id, 0));
	ASSERT_EQ(1, read_jobs_wait(w1, a, sizeof(a)));
	EXPECT_EQ(3, a[0].node);
	EXPECT_EQ(0, job_done(w1, a[0].job_id, 0));
	EXPECT_EQ(1, fence_finish(fence, 10000));
	close(w2);
	close(w1);
}

/* Node 1 reads mostly a BO on another node: it is not chained after 0. */
TEST_F_TIMEOUT(batch, routed_elsewhere_not_chained, 60)
{
	struct mcp_worker_job a[CHAIN_MAX], b[CHAIN_MAX];
	struct mcp_graph_case_graph g;
	int graph, w0, w1, fence, node0 = -1, node1 = -1;
	__u64 exec_id;
	__u32 bo[2];

	for (int node = 0; node < 64; node++) {
		char path[64];

		snprintf(path, sizeof(path), "/sys/devices/system/node/node%d", node);
		if (access(path, F_OK))
			continue;
		if (node0 < 0)
			node0 = node;
		else if (node1 < 0)
			node1 = node;
	}
	if (node1 < 0)
		SKIP(return, "one NUMA node only");
	bo[0] = bo_new(self->fd, node0);
	bo[1] = bo_new(self->fd, node1);
	ASSERT_NE(0, bo[0]);
	ASSERT_NE(0, bo[1]);

	mcp_graph_case_init(&g);
	mcp_graph_case_buffer(&g, PAGE, 0);
	mcp_graph_case_buffer(&g, PAGE, 0);
	mcp_graph_case_tensor(&g, 0, MCP_DTYPE_F32, 0, 1, 16);	/* 0: in, node0 */
	mcp_graph_case_tensor(&g, 0, MCP_DTYPE_F32, 64, 1, 16);	/* 1: node0 */
	mcp_graph_case_tensor(&g, 1, MCP_DTYPE_F32, 0, 1, 512);	/* 2: 2 KiB, node1 */
	mcp_graph_case_tensor(&g, 1, MCP_DTYPE_F32, 2048, 1, 16);	/* 3: out, node1 */
	mcp_graph_case_node(&g, MCP_OP_WNOP, MCP_GRAPH_ENGINE_WORKER, 1, 1, 0, 1);
	mcp_graph_case_node(&g, MCP_OP_WNOP, MCP_GRAPH_ENGINE_WORKER, 2, 1, 1, 2, 3);
	graph = graph_create(self->fd, &g, bo);
	ASSERT_LT(0, graph);
	w0 = worker_open(self->fd, node0);
	w1 = worker_open(self->fd, node1);
	ASSERT_LE(0, w0);
	ASSERT_LE(0, w1);
	fence = graph_exec(self->fd, graph, 0, &exec_id);
	ASSERT_LE(0, fence);

	ASSERT_EQ(1, read_jobs_wait(w0, a, sizeof(a)));
	EXPECT_EQ(0, a[0].node);
	EXPECT_EQ(-EAGAIN, read_jobs(w1, b, sizeof(b)));
	EXPECT_EQ(0, job_done(w0, a[0].job_id, 0));
	EXPECT_EQ(-EAGAIN, read_jobs(w0, a, sizeof(a)));
	ASSERT_EQ(1, read_jobs_wait(w1, b, sizeof(b)));
	EXPECT_EQ(1, b[0].node);
	EXPECT_EQ(0, b[0].flags);
	EXPECT_EQ(0, job_done(w1, b[0].job_id, 0));
	EXPECT_EQ(1, fence_finish(fence, 10000));
	close(w1);
	close(w0);
	EXPECT_EQ(0, bo_destroy(self->fd, bo[0]));
	EXPECT_EQ(0, bo_destroy(self->fd, bo[1]));
}

/* The first job fails: the chained rest is cancelled, not run. */
TEST_F_TIMEOUT(batch, failure_cancels_chain, 60)
{
	struct mcp_worker_job jobs[CHAIN_MAX];
	struct mcp_job_report r[CHAIN_MAX];
	struct mcp_graph_node_status ns[4];
	struct mcp_graph_status st;
	int wfd, fence;
	__u64 exec_id;

	fence = chain_exec(self->fd, self->bo, 4, &wfd, &exec_id);
	ASSERT_LE(0, fence);
	ASSERT_EQ(4, read_jobs_wait(wfd, jobs, sizeof(jobs)));

	reports_of(r, jobs, 4);
	r[0].result = -EIO;
	ASSERT_EQ(0, jobs_done(wfd, r, 4));
	EXPECT_EQ(0, r[0].status);
	for (int i = 1; i < 4; i++) {
		EXPECT_EQ(-ECANCELED, r[i].status) TH_LOG("report %d", i);
	}
	EXPECT_EQ(-EIO, fence_finish(fence, 10000));

	ASSERT_EQ(0, graph_status(self->fd, exec_id, ns, 4, &st));
	EXPECT_EQ(MCP_GRAPH_STATE_FAILED, st.state);
	EXPECT_EQ(-EIO, st.result);
	EXPECT_EQ(0, st.failed_node);
	EXPECT_EQ(-EIO, ns[0].result);
	for (int i = 1; i < 4; i++) {
		EXPECT_EQ(-ECANCELED, ns[i].result) TH_LOG("node %d", i);
		EXPECT_EQ(0, ns[i].start_ns);
	}
	/* Released: a second report finds nothing. */
	EXPECT_EQ(-ENOENT, job_done(wfd, jobs[3].job_id, 0));
	close(wfd);
}

/* A time-out while a chain is claimed cancels all of it. */
TEST_F_TIMEOUT(batch, timeout_cancels_chain, 60)
{
	struct mcp_worker_job jobs[CHAIN_MAX];
	struct mcp_job_report r[CHAIN_MAX];
	int graph, wfd, fence;
	__u64 exec_id;

	graph = chain_graph_create(self->fd, self->bo, 3);
	ASSERT_LT(0, graph);
	wfd = worker_open(self->fd, -1);
	ASSERT_LE(0, wfd);
	fence = graph_exec(self->fd, graph, 200, &exec_id);
	ASSERT_LE(0, fence);
	ASSERT_EQ(3, read_jobs_wait(wfd, jobs, sizeof(jobs)));
	EXPECT_EQ(-ETIMEDOUT, fence_finish(fence, 10000));

	reports_of(r, jobs, 3);
	ASSERT_EQ(0, jobs_done(wfd, r, 3));
	for (int i = 0; i < 3; i++) {
		EXPECT_EQ(-ECANCELED, r[i].status) TH_LOG("report %d", i);
	}
	close(wfd);
}

/*
 * The worker fd closes after its first job: the running one is re-queued,
 * the not started ones wait again, and another worker finishes the chain.
 */
TEST_F_TIMEOUT(batch, close_mid_chain_requeues, 60)
{
	struct mcp_worker_job jobs[CHAIN_MAX];
	struct mcp_job_report r[CHAIN_MAX];
	struct mcp_graph_node_status ns[4];
	struct mcp_graph_status st;
	int graph, w1, w2, fence;
	__u64 exec_id;

	graph = chain_graph_create(self->fd, self->bo, 4);
	ASSERT_LT(0, graph);
	w1 = worker_open(self->fd, -1);
	w2 = worker_open(self->fd, -1);
	ASSERT_LE(0, w1);
	ASSERT_LE(0, w2);
	fence = graph_exec(self->fd, graph, 0, &exec_id);
	ASSERT_LE(0, fence);
	ASSERT_EQ(4, read_jobs_wait(w1, jobs, sizeof(jobs)));
	EXPECT_EQ(0, job_done(w1, jobs[0].job_id, 0));
	/* Node 1 runs now, on w1. */
	ASSERT_EQ(0, graph_status(self->fd, exec_id, ns, 4, &st));
	EXPECT_NE(0, ns[1].start_ns);
	EXPECT_EQ(0, ns[2].start_ns);
	close(w1);

	ASSERT_EQ(3, read_jobs_wait(w2, jobs, sizeof(jobs)));
	for (int i = 0; i < 3; i++) {
		EXPECT_EQ(i + 1, jobs[i].node);
		EXPECT_EQ(i ? MCP_WORKER_JOB_CHAINED : 0, jobs[i].flags);
	}
	reports_of(r, jobs, 3);
	ASSERT_EQ(0, jobs_done(w2, r, 3));
	for (int i = 0; i < 3; i++) {
		EXPECT_EQ(0, r[i].status) TH_LOG("report %d", i);
	}
	EXPECT_EQ(1, fence_finish(fence, 10000));
	ASSERT_EQ(0, graph_status(self->fd, exec_id, ns, 4, &st));
	EXPECT_EQ(MCP_GRAPH_STATE_DONE, st.state);
	close(w2);
}

/* Closed twice mid-chain: the running job's second loss is -EPIPE. */
TEST_F_TIMEOUT(batch, close_twice_fails_running_job, 60)
{
	struct mcp_worker_job jobs[CHAIN_MAX];
	struct mcp_graph_node_status ns[3];
	struct mcp_graph_status st;
	int graph, wfd, fence;
	__u64 exec_id;

	graph = chain_graph_create(self->fd, self->bo, 3);
	ASSERT_LT(0, graph);
	fence = graph_exec(self->fd, graph, 0, &exec_id);
	ASSERT_LE(0, fence);
	for (int round = 0; round < 2; round++) {
		wfd = worker_open(self->fd, -1);
		ASSERT_LE(0, wfd);
		ASSERT_EQ(3, read_jobs_wait(wfd, jobs, sizeof(jobs)));
		EXPECT_EQ(0, jobs[0].node);
		close(wfd);
	}
	EXPECT_EQ(-EPIPE, fence_finish(fence, 10000));
	ASSERT_EQ(0, graph_status(self->fd, exec_id, ns, 3, &st));
	EXPECT_EQ(0, st.failed_node);
	EXPECT_EQ(-ECANCELED, ns[1].result);
	EXPECT_EQ(-ECANCELED, ns[2].result);
}

/* JOBS_DONE: bad arguments fail the call; bad reports only themselves. */
TEST_F_TIMEOUT(batch, jobs_done_arguments, 60)
{
	struct mcp_worker_job jobs[CHAIN_MAX];
	struct mcp_job_report r[4];
	struct mcp_jobs_done d;
	int wfd, fence;
	__u64 exec_id;

	fence = chain_exec(self->fd, self->bo, 3, &wfd, &exec_id);
	ASSERT_LE(0, fence);
	ASSERT_EQ(3, read_jobs_wait(wfd, jobs, sizeof(jobs)));

	memset(r, 0, sizeof(r));
	r[0].job_id = jobs[0].job_id;
	d = (struct mcp_jobs_done){ .size = MCP_JOBS_DONE_SIZE_VER0 - 1,
				    .reports = (__u64)(uintptr_t)r, .n_reports = 1 };
	EXPECT_EQ(-EINVAL, mcp_ioctl(wfd, MCP_IOC_JOBS_DONE, &d));
	d.size = sizeof(d);
	d.flags = 1;
	EXPECT_EQ(-EINVAL, mcp_ioctl(wfd, MCP_IOC_JOBS_DONE, &d));
	d.flags = 0;
	d.reserved = 1;
	EXPECT_EQ(-EINVAL, mcp_ioctl(wfd, MCP_IOC_JOBS_DONE, &d));
	d.reserved = 0;
	d.n_reports = MCP_JOBS_DONE_MAX + 1;
	EXPECT_EQ(-E2BIG, mcp_ioctl(wfd, MCP_IOC_JOBS_DONE, &d));
	d.n_reports = 1;
	d.reports = 8;
	EXPECT_EQ(-EFAULT, mcp_ioctl(wfd, MCP_IOC_JOBS_DONE, &d));
	d.n_reports = 0;
	EXPECT_EQ(0, mcp_ioctl(wfd, MCP_IOC_JOBS_DONE, &d));
	/* On the context's fd it is no ioctl. */
	d.reports = (__u64)(uintptr_t)r;
	d.n_reports = 1;
	EXPECT_EQ(-ENOTTY, mcp_ioctl(self->fd, MCP_IOC_JOBS_DONE, &d));
	/* Nothing was applied: node 1 has not started. */
	EXPECT_EQ(-EBUSY, job_done(wfd, jobs[1].job_id, 0));

	/* Unknown id, result out of range, job 0, the same again, job 1. */
	memset(r, 0, sizeof(r));
	r[0].job_id = jobs[2].job_id + 1000;
	r[1].job_id = jobs[0].job_id;
	r[1].result = 1;
	r[2].job_id = jobs[0].job_id;
	r[3].job_id = jobs[1].job_id;
	ASSERT_EQ(0, jobs_done(wfd, r, 4));
	EXPECT_EQ(-ENOENT, r[0].status);
	EXPECT_EQ(-EINVAL, r[1].status);
	EXPECT_EQ(0, r[2].status);
	EXPECT_EQ(0, r[3].status);
	/* Double reports. */
	memset(r, 0, sizeof(r));
	r[0].job_id = jobs[1].job_id;
	r[1].job_id = jobs[2].job_id;
	r[2].job_id = jobs[2].job_id;
	ASSERT_EQ(0, jobs_done(wfd, r, 3));
	EXPECT_EQ(-ENOENT, r[0].status);
	EXPECT_EQ(0, r[1].status);
	EXPECT_EQ(-ENOENT, r[2].status);
	EXPECT_EQ(1, fence_finish(fence, 10000));
	close(wfd);
}

/* The worker's times are kept inside [claim, report] and in order. */
TEST_F_TIMEOUT(batch, timestamps_clamped, 60)
{
	struct mcp_worker_job jobs[CHAIN_MAX];
	struct mcp_job_report r[CHAIN_MAX];
	struct mcp_graph_node_status ns[3];
	struct mcp_graph_status st;
	int wfd, fence;
	__u64 exec_id, t_read, t_mid, t_mid2, t_done;

	fence = chain_exec(self->fd, self->bo, 3, &wfd, &exec_id);
	ASSERT_LE(0, fence);
	t_read = now_ns();
	ASSERT_EQ(3, read_jobs_wait(wfd, jobs, sizeof(jobs)));
	usleep(1000);
	t_mid = now_ns();
	usleep(1000);
	t_mid2 = now_ns();

	reports_of(r, jobs, 3);
	r[0].start_ns = 1;			/* before the claim */
	r[0].end_ns = t_mid;
	r[1].start_ns = t_mid;
	r[1].end_ns = t_mid2;
	r[2].start_ns = t_mid2;
	r[2].end_ns = UINT64_MAX / 2;		/* in the future */
	ASSERT_EQ(0, jobs_done(wfd, r, 3));
	t_done = now_ns();
	for (int i = 0; i < 3; i++)
		EXPECT_EQ(0, r[i].status);
	EXPECT_EQ(1, fence_finish(fence, 10000));

	ASSERT_EQ(0, graph_status(self->fd, exec_id, ns, 3, &st));
	EXPECT_LE(t_read, ns[0].start_ns);
	EXPECT_GT(t_mid, ns[0].start_ns);
	EXPECT_EQ(t_mid, ns[0].end_ns);
	EXPECT_EQ(t_mid, ns[1].start_ns);
	EXPECT_EQ(t_mid2, ns[1].end_ns);
	EXPECT_EQ(t_mid2, ns[2].start_ns);
	EXPECT_LT(t_mid2, ns[2].end_ns);
	EXPECT_GE(t_done, ns[2].end_ns);
	close(wfd);
}

/* A read whose buffer faults part-way hands the whole chain back. */
TEST_F_TIMEOUT(batch, read_fault_hands_chain_back, 60)
{
	struct mcp_worker_job jobs[CHAIN_MAX];
	struct mcp_job_report r[CHAIN_MAX];
	long pg = sysconf(_SC_PAGESIZE);
	int wfd, fence, n = -EAGAIN;
	char *page, *fresh;
	__u64 exec_id;

	page = mcp_guarded_page();
	ASSERT_NE(NULL, page);
	fence = chain_exec(self->fd, self->bo, 4, &wfd, &exec_id);
	ASSERT_LE(0, fence);

	/* Entry 0 fits before the hole; entry 1 runs into it after 16 bytes. */
	for (int i = 0; i < 500 && n == -EAGAIN; i++) {
		n = read_jobs(wfd, (void *)(page + pg - JOB_SZ - 16), 4 * JOB_SZ);
		if (n == -EAGAIN)
			usleep(10000);
	}
	EXPECT_EQ(-EFAULT, n);
	/* Read-only memory: refused too, and nothing is lost. */
	ASSERT_EQ(0, mprotect(page, pg, PROT_READ));
	EXPECT_EQ(-EFAULT, read_jobs(wfd, (void *)page, 2 * JOB_SZ));
	munmap(page, 2 * pg);

	/* A buffer never touched before is faulted in as usual. */
	fresh = mmap(NULL, CHAIN_MAX * JOB_SZ, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, fresh);
	n = read_jobs_wait(wfd, (void *)fresh, CHAIN_MAX * JOB_SZ);
	ASSERT_EQ(4, n);
	memcpy(jobs, fresh, n * JOB_SZ);
	munmap(fresh, CHAIN_MAX * JOB_SZ);
	for (int i = 0; i < n; i++) {
		EXPECT_EQ(i, jobs[i].node);
		EXPECT_EQ(i ? MCP_WORKER_JOB_CHAINED : 0, jobs[i].flags);
	}
	reports_of(r, jobs, n);
	ASSERT_EQ(0, jobs_done(wfd, r, n));
	for (int i = 0; i < n; i++) {
		EXPECT_EQ(0, r[i].status) TH_LOG("report %d", i);
	}
	EXPECT_EQ(1, fence_finish(fence, 10000));
	close(wfd);
}

struct blocked_read {
	int wfd;
	void *buf;
	size_t room;
	int ret;
};

static void *blocked_reader(void *arg)
{
	struct blocked_read *br = arg;

	br->ret = read_jobs(br->wfd, br->buf, br->room);
	return NULL;
}

/*
 * A read of a chain whose copy fails after a report by a guessed id ended
 * the first job (and so started the second): the started job goes back
 * to the queue, not to waiting, and the execution ends once the rest is
 * run.  The copy is held in a userfaultfd until the report is made.
 * Before the fix the started job was left running on no list: no read
 * saw it again, and closing the context waited for it in D state.
 */
TEST_F_TIMEOUT(batch, read_fault_after_report_requeues_started, 60)
{
	struct mcp_worker_job jobs[CHAIN_MAX], first;
	struct mcp_job_report r[CHAIN_MAX];
	struct blocked_read br = { 0 };
	long pg = sysconf(_SC_PAGESIZE);
	int wfd, fence, uffd, n;
	pthread_t reader;
	char *buf;
	__u64 exec_id;

	/* Entry 0 in the first page, faulted in; entry 1 in the second. */
	buf = mcp_uffd_pages(2, 1, &uffd);
	ASSERT_NE(NULL, buf) TH_LOG("userfaultfd: %s", strerror(errno));
	fence = chain_exec(self->fd, self->bo, 4, &wfd, &exec_id);
	ASSERT_LE(0, fence);
	fcntl(wfd, F_SETFL, fcntl(wfd, F_GETFL) & ~O_NONBLOCK);

	br.wfd = wfd;
	br.buf = buf + pg - JOB_SZ;
	br.room = 4 * JOB_SZ;
	ASSERT_EQ(0, pthread_create(&reader, NULL, blocked_reader, &br));
	ASSERT_NE(0, mcp_uffd_wait_fault(uffd, 5000));

	/* The first job is copied: report it, which starts the second. */
	memcpy(&first, br.buf, JOB_SZ);
	EXPECT_EQ(0, first.node);
	EXPECT_EQ(0, job_done(wfd, first.job_id, 0));

	/* The second page goes, then the copy into it fails. */
	ASSERT_EQ(0, munmap(buf + pg, pg));
	close(uffd);
	pthread_join(reader, NULL);
	EXPECT_EQ(-EFAULT, br.ret);
	munmap(buf, pg);

	/* Node 1 is queued again, with the chain after it. */
	fcntl(wfd, F_SETFL, fcntl(wfd, F_GETFL) | O_NONBLOCK);
	n = read_jobs_wait(wfd, jobs, CHAIN_MAX * JOB_SZ);
	ASSERT_EQ(3, n);
	for (int i = 0; i < n; i++)
		EXPECT_EQ(i + 1, jobs[i].node);
	reports_of(r, jobs, n);
	ASSERT_EQ(0, jobs_done(wfd, r, n));
	EXPECT_EQ(1, fence_finish(fence, 10000));
	close(wfd);
}

#define RACE_CHAIN	40
#define RACE_ROUNDS	30

struct report_race {
	int wfd;
	int *ready;	/* shared: racers at the start line */
	struct mcp_job_report r[RACE_CHAIN];
	int ret;
};

/* Spins until both racers are there, so they start together. */
static void *report_racer(void *arg)
{
	struct report_race *rr = arg;

	__atomic_add_fetch(rr->ready, 1, __ATOMIC_SEQ_CST);
	while (__atomic_load_n(rr->ready, __ATOMIC_SEQ_CST) < 2)
		;
	rr->ret = jobs_done(rr->wfd, rr->r, RACE_CHAIN);
	return NULL;
}

/*
 * Two threads report the same 40-job chain at once, in groups of 16 taken
 * under the lock in turn: each job is applied by exactly one of them, the
 * other is told -ENOENT, and the execution ends well.  The first to take
 * the lock usually stays ahead and wins every group; round 0 splits the
 * chain by hand.
 */
TEST_F_TIMEOUT(batch, racing_reports_apply_once, 120)
{
	struct mcp_worker_job jobs[RACE_CHAIN];
	struct mcp_graph_node_status ns[RACE_CHAIN];
	struct mcp_graph_status st;
	struct report_race a = { 0 }, b = { 0 };
	int ready;
	pthread_t ta, tb;
	int graph, wfd, split = 0;

	graph = chain_graph_create(self->fd, self->bo, RACE_CHAIN);
	ASSERT_LT(0, graph);
	wfd = worker_open(self->fd, -1);
	ASSERT_LE(0, wfd);
	a.wfd = b.wfd = wfd;
	a.ready = b.ready = &ready;

	/*
	 * Round 0 interleaves by hand (one host thread runs all vCPUs in the
	 * test VM, so the threads below rarely overlap there): 16 reports,
	 * then all 40, then the other 24.
	 */
	for (int round = 0; round < RACE_ROUNDS; round++) {
		__u64 exec_id;
		int fence = graph_exec(self->fd, graph, 0, &exec_id);

		ASSERT_LE(0, fence);
		ASSERT_EQ(RACE_CHAIN, read_jobs_wait(wfd, jobs, sizeof(jobs)));
		if (!round) {
			reports_of(a.r, jobs, RACE_CHAIN);
			reports_of(b.r, jobs, RACE_CHAIN);
			ASSERT_EQ(0, jobs_done(wfd, a.r, 16));
			ASSERT_EQ(0, jobs_done(wfd, b.r, RACE_CHAIN));
			ASSERT_EQ(0, jobs_done(wfd, a.r + 16, RACE_CHAIN - 16));
			goto check;
		}
		reports_of(a.r, jobs, RACE_CHAIN);
		reports_of(b.r, jobs, RACE_CHAIN);
		ready = 0;
		ASSERT_EQ(0, pthread_create(&ta, NULL, report_racer, &a));
		ASSERT_EQ(0, pthread_create(&tb, NULL, report_racer, &b));
		pthread_join(ta, NULL);
		pthread_join(tb, NULL);
		ASSERT_EQ(0, a.ret);
		ASSERT_EQ(0, b.ret);
check:
		/* Both won some: the chain was split between them. */
		split += a.r[0].status != a.r[RACE_CHAIN - 1].status;
		for (int i = 0; i < RACE_CHAIN; i++) {
			int sa = a.r[i].status, sb = b.r[i].status;

			EXPECT_TRUE((sa == 0 && sb == -ENOENT) || (sa == -ENOENT && sb == 0))
				TH_LOG("round %d job %d: statuses %d and %d", round, i, sa, sb);
		}
		EXPECT_EQ(1, fence_finish(fence, 10000));
		ASSERT_EQ(0, graph_status(self->fd, exec_id, ns, RACE_CHAIN, &st));
		EXPECT_EQ(MCP_GRAPH_STATE_DONE, st.state);
		for (int i = 0; i < RACE_CHAIN; i++) {
			EXPECT_EQ(0, ns[i].result) TH_LOG("round %d node %d", round, i);
		}
	}
	EXPECT_LE(1, split);
	ksft_print_msg("%d of %d rounds split the chain between the reporters (round 0 by hand)\n",
		       split, RACE_ROUNDS);
	close(wfd);
}

#define WIDE		32

struct reader_race {
	int wfd;
	int *taken;	/* shared: jobs read by both */
	int got;
	__u32 nodes[WIDE];
	int err;
};

/* Reads and reports until it sees -EAGAIN with every job taken. */
static void *reader_racer(void *arg)
{
	struct reader_race *rr = arg;
	struct mcp_worker_job jobs[4];
	struct mcp_job_report r[4];

	while (__atomic_load_n(rr->taken, __ATOMIC_SEQ_CST) < WIDE) {
		int n = read_jobs(rr->wfd, jobs, sizeof(jobs));

		if (n == -EAGAIN) {
			usleep(100);
			continue;
		}
		if (n <= 0 || rr->got + n > WIDE) {
			rr->err = n <= 0 ? n : -E2BIG;
			break;
		}
		for (int i = 0; i < n; i++)
			rr->nodes[rr->got++] = jobs[i].node;
		__atomic_add_fetch(rr->taken, n, __ATOMIC_SEQ_CST);
		reports_of(r, jobs, n);
		rr->err = jobs_done(rr->wfd, r, n);
		for (int i = 0; i < n && !rr->err; i++)
			rr->err = r[i].status;
		if (rr->err)
			break;
	}
	return NULL;
}

/*
 * Two threads read one worker fd at once (32 independent jobs, room for
 * 4 each time): every job goes to exactly one of them.
 */
TEST_F_TIMEOUT(batch, racing_readers_share_jobs, 120)
{
	struct mcp_graph_case_graph g;
	struct reader_race a, b;
	pthread_t ta, tb;
	int graph, wfd, fence, taken = 0;
	__u64 exec_id;
	int seen[WIDE] = { 0 };

	mcp_graph_case_init(&g);
	mcp_graph_case_buffer(&g, PAGE, 0);
	for (int i = 0; i < 2 * WIDE; i++)
		mcp_graph_case_tensor(&g, 0, MCP_DTYPE_F32, 64 * i, 1, 16);
	for (int i = 0; i < WIDE; i++)
		mcp_graph_case_node(&g, MCP_OP_WNOP, MCP_GRAPH_ENGINE_WORKER, 1, 1,
				    i, WIDE + i);
	graph = graph_create(self->fd, &g, self->bo);
	ASSERT_LT(0, graph);
	wfd = worker_open(self->fd, -1);
	ASSERT_LE(0, wfd);
	fence = graph_exec(self->fd, graph, 0, &exec_id);
	ASSERT_LE(0, fence);

	memset(&a, 0, sizeof(a));
	memset(&b, 0, sizeof(b));
	a.wfd = b.wfd = wfd;
	a.taken = b.taken = &taken;
	ASSERT_EQ(0, pthread_create(&ta, NULL, reader_racer, &a));
	ASSERT_EQ(0, pthread_create(&tb, NULL, reader_racer, &b));
	pthread_join(ta, NULL);
	pthread_join(tb, NULL);
	EXPECT_EQ(0, a.err);
	EXPECT_EQ(0, b.err);
	EXPECT_EQ(WIDE, a.got + b.got);
	for (int i = 0; i < a.got; i++)
		seen[a.nodes[i] % WIDE]++;
	for (int i = 0; i < b.got; i++)
		seen[b.nodes[i] % WIDE]++;
	for (int i = 0; i < WIDE; i++) {
		EXPECT_EQ(1, seen[i]) TH_LOG("node %d", i);
	}
	EXPECT_EQ(1, fence_finish(fence, 10000));
	close(wfd);
}

TEST_HARNESS_MAIN
