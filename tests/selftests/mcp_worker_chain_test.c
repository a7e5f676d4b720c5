// SPDX-License-Identifier: GPL-2.0-only
/*
 * Worker chains through raw ioctls (uapi/linux/mcp.h, "struct
 * mcp_worker_chain", MCP_IOC_CHAIN_DONE, MCP_FEAT_JOB_CHAINS): one read on
 * a MCP_WORKER_CHAINS fd returns a chain of nodes with the execution's
 * buffer handles, one report applies them all with the worker's times,
 * clamped; a short buffer takes part of the chain; forks, kernel nodes
 * and nodes routed to another NUMA node end a chain, and a join waits for
 * its last branch; a partial report hands the rest on, a failure cancels
 * it; a closed worker fd hands the chain to another; a time-out makes the
 * report -ECANCELED; JOB_DONE and JOBS_DONE report one node; CHAIN_DONE's
 * bad arguments apply nothing; two threads reporting one chain apply it
 * once.  The test thread is the worker.
 */
#include "mcp_bo.h"
#include "mcp_fence.h"
#include "mcp_graph.h"

#include <poll.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#define PAGE		4096UL
#define ROOM		64
#define CHAIN_HDR	offsetof(struct mcp_worker_chain, nodes)
#define CHAIN_BYTES(k)	(CHAIN_HDR + 4 * (size_t)(k))
#define POISON		0xa5a5a5a5u

static const char * const chain_counters[] = {
	"graph_objects", "graph_execs_in_flight", "graph_workers", "bo_objects",
};

/* What a chain read fills: the header and room for ROOM nodes. */
union chain_room {
	struct mcp_worker_chain c;
	__u8 bytes[CHAIN_BYTES(ROOM)];
};

/* Room for ROOM nodes, every byte 0xa5 so that what a read leaves shows. */
static struct mcp_worker_chain *chain_buf(void)
{
	union chain_room *r = malloc(sizeof(*r));

	if (!r)
		return NULL;
	memset(r, 0xa5, sizeof(*r));
	return &r->c;
}

/* A worker fd with flags for node (-1: the caller's), non-blocking; -errno. */
static int worker_open(int fd, int node, __u32 flags)
{
	struct mcp_worker_register r = {
		.size = sizeof(r), .flags = flags, .node = node, .fd = -1,
	};
	int ret = mcp_ioctl(fd, MCP_IOC_WORKER_REGISTER, &r);

	if (ret)
		return ret;
	fcntl(r.fd, F_SETFL, fcntl(r.fd, F_GETFL) | O_NONBLOCK);
	return r.fd;
}

/*
 * A chain worker fd of node 0, where the tests put their BOs: every job
 * routes to it wherever the test thread runs.
 */
static int chain_worker(int fd)
{
	return worker_open(fd, 0, MCP_WORKER_CHAINS);
}

/*
 * read() of bytes into c: the chain's node count, -EPROTO when the read's
 * length is not offsetof(nodes) + 4 * n_nodes, or -errno.
 */
static int read_chain_bytes(int wfd, struct mcp_worker_chain *c, size_t bytes)
{
	ssize_t n = read(wfd, c, bytes);

	if (n < 0)
		return -errno;
	if (n < (ssize_t)CHAIN_HDR || (size_t)n != CHAIN_BYTES(c->n_nodes))
		return -EPROTO;
	return c->n_nodes;
}

static int read_chain(int wfd, struct mcp_worker_chain *c, size_t room)
{
	return read_chain_bytes(wfd, c, CHAIN_BYTES(room));
}

/* Waits up to 5 s for a chain: its node count, or -errno. */
static int read_chain_wait(int wfd, struct mcp_worker_chain *c, size_t room)
{
	int n = -EAGAIN;

	for (int i = 0; i < 500 && n == -EAGAIN; i++) {
		n = read_chain(wfd, c, room);
		if (n == -EAGAIN)
			usleep(10000);
	}
	return n;
}

static int chain_done(int wfd, __u64 job_id, __u64 start_ns, const __u64 *ends,
		      __u32 n_ran, int result)
{
	struct mcp_chain_done d = {
		.size = sizeof(d), .job_id = job_id, .start_ns = start_ns,
		.ends = (__u64)(uintptr_t)ends, .n_ran = n_ran, .result = result,
	};

	return mcp_ioctl(wfd, MCP_IOC_CHAIN_DONE, &d);
}

/* All n nodes ran, with the kernel's times. */
static int chain_done_all(int wfd, const struct mcp_worker_chain *c)
{
	return chain_done(wfd, c->job_id, 0, NULL, c->n_nodes, 0);
}

static int job_done(int wfd, __u64 job_id, int result)
{
	struct mcp_job_done d = {
		.size = sizeof(d), .job_id = job_id, .result = result,
	};

	return mcp_ioctl(wfd, MCP_IOC_JOB_DONE, &d);
}

/* Submits graph with bindings and a time-out (0: the knob's): the fence. */
static int exec_bound(int fd, __u32 graph, const struct mcp_graph_binding *b,
		      __u32 n_bindings, __u32 timeout_ms, __u64 *exec_id)
{
	struct mcp_graph_exec e = {
		.size = sizeof(e), .graph = graph, .timeout_ms = timeout_ms,
		.bindings = (__u64)(uintptr_t)b, .n_bindings = n_bindings,
		.in_fence = -1, .out_fence = -1,
	};
	int ret = mcp_ioctl(fd, MCP_IOC_GRAPH_EXEC, &e);

	*exec_id = e.exec_id;
	return ret ? ret : e.out_fence;
}

/* A chain of n made into a graph on bo and executed once: the fence. */
static int chain_exec(int fd, const __u32 *bo, int n, __u32 timeout_ms,
		      __u64 *exec_id)
{
	int graph;

	graph = chain_graph_create(fd, bo, n);
	if (graph < 0)
		return graph;
	return exec_bound(fd, graph, NULL, 0, timeout_ms, exec_id);
}

/* c names nodes first .. first + n - 1 of exec_id, in order. */
static void expect_nodes(struct __test_metadata *_metadata,
			 const struct mcp_worker_chain *c, __u64 exec_id,
			 int first, int n)
{
	EXPECT_EQ(exec_id, c->exec_id);
	EXPECT_EQ(n, c->n_nodes);
	EXPECT_EQ(0, c->flags);
	for (int i = 0; i < n && i < (int)c->n_nodes; i++) {
		EXPECT_EQ(first + i, c->nodes[i]) TH_LOG("entry %d", i);
	}
}

/*
 * Execution exec_id of n nodes is done: every node ran on a worker thread
 * tid after t0, each starting no earlier than the one before it ended
 * (a chain's nodes are in index order here).
 */
static void expect_all_ran(struct __test_metadata *_metadata, int fd,
			   __u64 exec_id, int n, pid_t tid, __u64 t0)
{
	struct mcp_graph_node_status ns[ROOM];
	struct mcp_graph_status st;

	ASSERT_GE(ROOM, n);
	ASSERT_EQ(0, graph_status(fd, exec_id, ns, n, &st));
	EXPECT_EQ(MCP_GRAPH_STATE_DONE, st.state);
	EXPECT_EQ(0, st.result);
	EXPECT_EQ(-1, st.failed_node);
	EXPECT_EQ(n, st.n_nodes);
	for (int i = 0; i < n; i++) {
		EXPECT_EQ(0, ns[i].result) TH_LOG("node %d", i);
		EXPECT_EQ(MCP_GRAPH_ENGINE_WORKER, ns[i].engine) TH_LOG("node %d", i);
		EXPECT_LE(0, ns[i].numa_node) TH_LOG("node %d", i);
		EXPECT_EQ(tid, ns[i].worker_tid) TH_LOG("node %d", i);
		EXPECT_LE(t0, ns[i].start_ns) TH_LOG("node %d", i);
		EXPECT_LE(ns[i].start_ns, ns[i].end_ns) TH_LOG("node %d", i);
		if (i)
			EXPECT_LE(ns[i - 1].end_ns, ns[i].start_ns) TH_LOG("node %d", i);
	}
	EXPECT_LE(ns[n - 1].end_ns, st.end_ns);
}

FIXTURE(chain) {
	int fd;
	__u32 bo[2];
	long long start[ARRAY_SIZE(chain_counters)];
};

FIXTURE_SETUP(chain)
{
	struct mcp_version v = { .size = sizeof(v) };

	ASSERT_EQ(0, mcp_ensure_loaded());
	for (size_t i = 0; i < ARRAY_SIZE(chain_counters); i++)
		self->start[i] = mcp_counter(chain_counters[i]);
	self->fd = mcp_open();
	ASSERT_LE(0, self->fd) TH_LOG("open %s: %s", MCP_DEV_PATH, strerror(errno));
	ASSERT_EQ(0, mcp_ioctl(self->fd, MCP_IOC_GET_VERSION, &v));
	if (!(v.features & MCP_FEAT_JOB_CHAINS))
		SKIP(return, "MCP_FEAT_JOB_CHAINS not reported");
	self->bo[0] = bo_new(self->fd, 0);
	ASSERT_NE(0, self->bo[0]);
}

/* Everything a test made is gone once its fds are. */
FIXTURE_TEARDOWN(chain)
{
	if (self->fd >= 0)
		close(self->fd);
	for (size_t i = 0; i < ARRAY_SIZE(chain_counters); i++) {
		EXPECT_EQ(self->start[i],
			  mcp_counter_settles(chain_counters[i], self->start[i]))
			TH_LOG("debugfs counter %s", chain_counters[i]);
	}
}

#define LONG_CHAIN	40

/*
 * A chain of 40 over two buffers, the second rebound at GRAPH_EXEC: one
 * read returns all of it with the bound handles; one report with the
 * worker's per-node end times applies them, clamped into [read, now].
 */
TEST_F_TIMEOUT(chain, long_chain_in_one_read, 60)
{
	struct mcp_graph_node_status ns[LONG_CHAIN];
	struct mcp_graph_binding bind;
	struct mcp_graph_status st;
	struct mcp_graph_case_graph g;
	struct mcp_worker_chain *c = chain_buf(), *other = chain_buf();
	struct mcp_worker_job job;
	__u64 ends[LONG_CHAIN], exec_id, t_read, t_mid, t_mid2, t_call, t_done;
	pid_t tid = syscall(SYS_gettid);
	int graph, wfd, w2, plain, fence;
	__u32 bound;

	ASSERT_NE(NULL, c);
	ASSERT_NE(NULL, other);
	self->bo[1] = bo_new(self->fd, 0);
	bound = bo_new(self->fd, 0);
	ASSERT_NE(0, self->bo[1]);
	ASSERT_NE(0, bound);

	/* Tensor i in buffer i % 2: the chain runs over both buffers. */
	mcp_graph_case_init(&g);
	mcp_graph_case_buffer(&g, PAGE, 0);
	mcp_graph_case_buffer(&g, PAGE, 0);
	for (int i = 0; i <= LONG_CHAIN; i++)
		mcp_graph_case_tensor(&g, i % 2, MCP_DTYPE_F32, 64 * (i / 2), 1, 16);
	for (int i = 0; i < LONG_CHAIN; i++)
		mcp_graph_case_node(&g, MCP_OP_WNOP, MCP_GRAPH_ENGINE_WORKER, 1, 1,
				    i, i + 1);
	graph = graph_create(self->fd, &g, self->bo);
	ASSERT_LT(0, graph);
	wfd = chain_worker(self->fd);
	w2 = chain_worker(self->fd);
	plain = worker_open(self->fd, 0, 0);
	ASSERT_LE(0, wfd);
	ASSERT_LE(0, w2);
	ASSERT_LE(0, plain);

	bind = (struct mcp_graph_binding){ .buffer = 1, .handle = bound };
	t_read = now_ns();
	fence = exec_bound(self->fd, graph, &bind, 1, 0, &exec_id);
	ASSERT_LE(0, fence);
	ASSERT_EQ(LONG_CHAIN, read_chain_wait(wfd, c, ROOM));
	expect_nodes(_metadata, c, exec_id, 0, LONG_CHAIN);
	EXPECT_EQ(graph, c->graph);
	EXPECT_EQ(2, c->n_buffers);
	EXPECT_EQ(self->bo[0], c->handles[0]);
	EXPECT_EQ(bound, c->handles[1]);
	/* Past n_buffers and past n_nodes: left as they were. */
	EXPECT_EQ(POISON, c->handles[2]);
	EXPECT_EQ(POISON, c->handles[MCP_GRAPH_MAX_BUFFERS - 1]);
	EXPECT_EQ(POISON, c->nodes[LONG_CHAIN]);

	/* All of it is claimed: nothing for another worker of either kind. */
	EXPECT_EQ(-EAGAIN, read_chain(w2, other, ROOM));
	EXPECT_EQ(-EAGAIN, read(plain, &job, sizeof(job)) < 0 ? -errno : 0);
	/* The first node runs from the read, the others wait for the report. */
	ASSERT_EQ(0, graph_status(self->fd, exec_id, ns, LONG_CHAIN, &st));
	EXPECT_EQ(MCP_GRAPH_STATE_RUNNING, st.state);
	EXPECT_LE(t_read, ns[0].start_ns);
	EXPECT_EQ(0, ns[0].end_ns);
	for (int i = 1; i < LONG_CHAIN; i++) {
		EXPECT_EQ(0, ns[i].start_ns) TH_LOG("node %d", i);
	}

	usleep(1000);
	t_mid = now_ns();
	usleep(1000);
	t_mid2 = now_ns();
	/*
	 * Nodes 0-19 end 1 ns apart from t_mid; 20 ends before its start
	 * (it ends at its start); 21-38 at the report's time (0); 39 in the
	 * future (now).  The start is before the read (the read's time).
	 */
	for (int i = 0; i < 20; i++)
		ends[i] = t_mid + i;
	ends[20] = 1;
	for (int i = 21; i < LONG_CHAIN - 1; i++)
		ends[i] = 0;
	ends[LONG_CHAIN - 1] = UINT64_MAX / 2;
	t_call = now_ns();
	ASSERT_EQ(0, chain_done(wfd, c->job_id, 1, ends, LONG_CHAIN, 0));
	t_done = now_ns();
	EXPECT_EQ(1, fence_finish(fence, 10000));

	expect_all_ran(_metadata, self->fd, exec_id, LONG_CHAIN, tid, t_read);
	ASSERT_EQ(0, graph_status(self->fd, exec_id, ns, LONG_CHAIN, &st));
	EXPECT_GT(t_mid, ns[0].start_ns);
	for (int i = 0; i < 20; i++) {
		EXPECT_EQ(t_mid + i, ns[i].end_ns) TH_LOG("node %d", i);
		if (i)
			EXPECT_EQ(ns[i - 1].end_ns, ns[i].start_ns) TH_LOG("node %d", i);
	}
	EXPECT_GT(t_mid2, ns[19].end_ns);
	EXPECT_EQ(ns[19].end_ns, ns[20].start_ns);
	EXPECT_EQ(ns[20].start_ns, ns[20].end_ns);
	for (int i = 21; i < LONG_CHAIN; i++) {
		EXPECT_EQ(ns[i - 1].end_ns, ns[i].start_ns) TH_LOG("node %d", i);
		EXPECT_LE(t_call, ns[i].end_ns) TH_LOG("node %d", i);
		EXPECT_GE(t_done, ns[i].end_ns) TH_LOG("node %d", i);
	}
	/* Reported: a second report finds nothing. */
	EXPECT_EQ(-ENOENT, chain_done(wfd, c->job_id, 0, NULL, LONG_CHAIN, 0));
	close(plain);
	close(w2);
	close(wfd);
	free(other);
	free(c);
}

/*
 * Room for k nodes: a chain of k; the rest is the next chain, ready once
 * the first is reported.  Room is counted in whole nodes.
 */
TEST_F_TIMEOUT(chain, short_buffer_splits_chain, 60)
{
	struct mcp_worker_chain *c = chain_buf(), *other = chain_buf();
	pid_t tid = syscall(SYS_gettid);
	__u64 exec_id, t0, first_id;
	int wfd, fence;

	ASSERT_NE(NULL, c);
	ASSERT_NE(NULL, other);
	wfd = chain_worker(self->fd);
	ASSERT_LE(0, wfd);
	t0 = now_ns();
	fence = chain_exec(self->fd, self->bo, 10, 0, &exec_id);
	ASSERT_LE(0, fence);

	/* No room for a node: refused, and nothing is claimed. */
	EXPECT_EQ(-EINVAL, read_chain_bytes(wfd, c, CHAIN_BYTES(1) - 1));
	EXPECT_EQ(-EINVAL, read_chain_bytes(wfd, c, CHAIN_HDR));
	EXPECT_EQ(-EINVAL, read_chain_bytes(wfd, c, 4));

	ASSERT_EQ(1, read_chain_wait(wfd, c, 1));
	expect_nodes(_metadata, c, exec_id, 0, 1);
	first_id = c->job_id;
	/* Node 1 waits for node 0's report. */
	EXPECT_EQ(-EAGAIN, read_chain(wfd, c, ROOM));
	ASSERT_EQ(0, chain_done(wfd, first_id, 0, NULL, 1, 0));

	memset(c, 0xa5, CHAIN_BYTES(ROOM));
	ASSERT_EQ(4, read_chain_bytes(wfd, c, CHAIN_BYTES(4) + 2));
	expect_nodes(_metadata, c, exec_id, 1, 4);
	EXPECT_EQ(POISON, c->nodes[4]);
	EXPECT_NE(first_id, c->job_id);
	EXPECT_EQ(-EAGAIN, read_chain(wfd, other, ROOM));
	ASSERT_EQ(0, chain_done_all(wfd, c));

	ASSERT_EQ(4, read_chain_wait(wfd, c, 4));
	expect_nodes(_metadata, c, exec_id, 5, 4);
	ASSERT_EQ(0, chain_done_all(wfd, c));
	ASSERT_EQ(1, read_chain_wait(wfd, c, ROOM));
	expect_nodes(_metadata, c, exec_id, 9, 1);
	ASSERT_EQ(0, chain_done_all(wfd, c));
	EXPECT_EQ(1, fence_finish(fence, 10000));
	expect_all_ran(_metadata, self->fd, exec_id, 10, tid, t0);
	close(wfd);
	free(other);
	free(c);
}

/*
 * 0 -> 1 -> {2, 3} -> 4 -> 5: node 1 has two successors, so a chain ends
 * there; the join 4 follows the branch that finishes last, never one
 * whose sibling is unfinished.
 */
TEST_F_TIMEOUT(chain, fork_ends_chain_join_waits, 60)
{
	struct mcp_worker_chain *a = chain_buf(), *b = chain_buf();
	struct mcp_graph_node_status ns[6];
	struct mcp_graph_status st;
	struct mcp_graph_case_graph g;
	pid_t tid = syscall(SYS_gettid);
	int graph, w1, w2, fence;
	__u64 exec_id, t0;

	ASSERT_NE(NULL, a);
	ASSERT_NE(NULL, b);
	mcp_graph_case_init(&g);
	mcp_graph_case_buffer(&g, PAGE, 0);
	for (int i = 0; i < 7; i++)
		mcp_graph_case_tensor(&g, 0, MCP_DTYPE_F32, 64 * i, 1, 16);
	mcp_graph_case_node(&g, MCP_OP_WNOP, MCP_GRAPH_ENGINE_WORKER, 1, 1, 0, 1);
	mcp_graph_case_node(&g, MCP_OP_WNOP, MCP_GRAPH_ENGINE_WORKER, 1, 1, 1, 2);
	mcp_graph_case_node(&g, MCP_OP_WNOP, MCP_GRAPH_ENGINE_WORKER, 1, 1, 2, 3);
	mcp_graph_case_node(&g, MCP_OP_WNOP, MCP_GRAPH_ENGINE_WORKER, 1, 1, 2, 4);
	mcp_graph_case_node(&g, MCP_OP_WNOP, MCP_GRAPH_ENGINE_WORKER, 2, 1, 3, 4, 5);
	mcp_graph_case_node(&g, MCP_OP_WNOP, MCP_GRAPH_ENGINE_WORKER, 1, 1, 5, 6);
	graph = graph_create(self->fd, &g, self->bo);
	ASSERT_LT(0, graph);
	w1 = chain_worker(self->fd);
	w2 = chain_worker(self->fd);
	ASSERT_LE(0, w1);
	ASSERT_LE(0, w2);

	/* Two workers hold one branch each: the join waits for both. */
	t0 = now_ns();
	fence = exec_bound(self->fd, graph, NULL, 0, 0, &exec_id);
	ASSERT_LE(0, fence);
	ASSERT_EQ(2, read_chain_wait(w1, a, ROOM));
	expect_nodes(_metadata, a, exec_id, 0, 2);
	ASSERT_EQ(0, chain_done_all(w1, a));
	ASSERT_EQ(1, read_chain_wait(w1, a, ROOM));
	ASSERT_EQ(1, read_chain_wait(w2, b, ROOM));
	EXPECT_EQ(5, a->nodes[0] + b->nodes[0]);
	ASSERT_EQ(0, chain_done_all(w1, a));
	EXPECT_EQ(-EAGAIN, read_chain(w1, a, ROOM));
	EXPECT_EQ(-EAGAIN, read_chain(w2, a, ROOM));
	ASSERT_EQ(0, chain_done_all(w2, b));
	ASSERT_EQ(2, read_chain_wait(w1, a, ROOM));
	expect_nodes(_metadata, a, exec_id, 4, 2);
	ASSERT_EQ(0, chain_done_all(w1, a));
	EXPECT_EQ(1, fence_finish(fence, 10000));
	/* Branches 2 and 3 ran side by side: ordered by the edges only. */
	ASSERT_EQ(0, graph_status(self->fd, exec_id, ns, 6, &st));
	EXPECT_EQ(MCP_GRAPH_STATE_DONE, st.state);
	EXPECT_EQ(-1, st.failed_node);
	for (int i = 0; i < 6; i++) {
		EXPECT_EQ(0, ns[i].result) TH_LOG("node %d", i);
		EXPECT_EQ(MCP_GRAPH_ENGINE_WORKER, ns[i].engine) TH_LOG("node %d", i);
		EXPECT_EQ(tid, ns[i].worker_tid) TH_LOG("node %d", i);
		EXPECT_LE(t0, ns[i].start_ns) TH_LOG("node %d", i);
		EXPECT_LE(ns[i].start_ns, ns[i].end_ns) TH_LOG("node %d", i);
	}
	EXPECT_LE(ns[0].end_ns, ns[1].start_ns);
	EXPECT_LE(ns[1].end_ns, ns[2].start_ns);
	EXPECT_LE(ns[1].end_ns, ns[3].start_ns);
	EXPECT_LE(ns[2].end_ns, ns[4].start_ns);
	EXPECT_LE(ns[3].end_ns, ns[4].start_ns);
	EXPECT_LE(ns[4].end_ns, ns[5].start_ns);

	/* One worker: the branch it reads last carries the join and after. */
	fence = exec_bound(self->fd, graph, NULL, 0, 0, &exec_id);
	ASSERT_LE(0, fence);
	ASSERT_EQ(2, read_chain_wait(w1, a, ROOM));
	ASSERT_EQ(0, chain_done_all(w1, a));
	ASSERT_EQ(1, read_chain_wait(w1, a, ROOM));
	EXPECT_TRUE(a->nodes[0] == 2 || a->nodes[0] == 3);
	ASSERT_EQ(0, chain_done_all(w1, a));
	ASSERT_EQ(3, read_chain_wait(w1, b, ROOM));
	EXPECT_EQ(5 - a->nodes[0], b->nodes[0]);
	EXPECT_EQ(4, b->nodes[1]);
	EXPECT_EQ(5, b->nodes[2]);
	ASSERT_EQ(0, chain_done_all(w1, b));
	EXPECT_EQ(1, fence_finish(fence, 10000));
	close(w2);
	close(w1);
	free(b);
	free(a);
}

#define HUGE_CHAIN	(MCP_WORKER_CHAIN_MAX + 76)
#define HUGE_ROOM	(MCP_WORKER_CHAIN_MAX + 200)

/*
 * A chain of n WNOP nodes in version 1 binary form (more nodes than the
 * case builder holds), tensor i at 64 * i of buffer 0: its bytes, which
 * the caller frees, and their count in *len.
 */
static void *huge_chain_graph(int n, size_t *len)
{
	struct mcp_graph_header *h;
	struct mcp_graph_buffer *buf;
	struct mcp_graph_tensor *t;
	struct mcp_graph_node *nd;

	*len = sizeof(*h) + sizeof(*buf) + (n + 1) * sizeof(*t) + n * sizeof(*nd);
	h = calloc(1, *len);
	if (!h)
		return NULL;
	*h = (struct mcp_graph_header){
		.magic = MCP_GRAPH_MAGIC, .version = MCP_GRAPH_VERSION,
		.header_size = sizeof(*h), .n_buffers = 1, .n_tensors = n + 1,
		.n_nodes = n, .total_len = *len,
	};
	buf = (void *)(h + 1);
	buf->length = 64 * (n + 1);
	t = (void *)(buf + 1);
	for (int i = 0; i <= n; i++)
		t[i] = (struct mcp_graph_tensor){
			.dtype = MCP_DTYPE_F32, .rank = 1, .offset = 64 * i,
			.dims = { 16 },
		};
	nd = (void *)(t + n + 1);
	for (int i = 0; i < n; i++)
		nd[i] = (struct mcp_graph_node){
			.op = MCP_OP_WNOP, .engine = MCP_GRAPH_ENGINE_WORKER,
			.n_inputs = 1, .n_outputs = 1,
			.inputs = { i }, .outputs = { i + 1 },
		};
	return h;
}

/*
 * A chain longer than MCP_WORKER_CHAIN_MAX: a read with more room returns
 * MCP_WORKER_CHAIN_MAX nodes, the rest comes after their report.
 */
TEST_F_TIMEOUT(chain, longest_chain_is_capped, 120)
{
	static union {
		struct mcp_worker_chain c;
		__u8 bytes[CHAIN_BYTES(HUGE_ROOM)];
	} room;
	static struct mcp_graph_node_status ns[HUGE_CHAIN];
	static __u64 ends[MCP_WORKER_CHAIN_MAX];
	struct mcp_worker_chain *c = &room.c;
	struct mcp_bo_create bc = {
		.size = sizeof(bc),
		.length = (64 * (HUGE_CHAIN + 1) + PAGE - 1) & ~(PAGE - 1),
		.flags = MCP_BO_NODE, .node = 0,
	};
	struct mcp_graph_create gc = { .size = sizeof(gc) };
	struct mcp_graph_status st;
	pid_t tid = syscall(SYS_gettid);
	__u64 exec_id, t0;
	int wfd, fence;
	void *bytes;
	size_t len;

	ASSERT_EQ(0, mcp_ioctl(self->fd, MCP_IOC_BO_CREATE, &bc));
	bytes = huge_chain_graph(HUGE_CHAIN, &len);
	ASSERT_NE(NULL, bytes);
	gc.graph = (__u64)(uintptr_t)bytes;
	gc.graph_len = len;
	gc.handles = (__u64)(uintptr_t)&bc.handle;
	gc.n_handles = 1;
	ASSERT_EQ(0, mcp_ioctl(self->fd, MCP_IOC_GRAPH_CREATE, &gc))
		TH_LOG("refused: reason %u kind %u index %u", gc.error_reason,
		       gc.error_kind, gc.error_index);
	free(bytes);
	wfd = chain_worker(self->fd);
	ASSERT_LE(0, wfd);
	t0 = now_ns();
	fence = exec_bound(self->fd, gc.handle, NULL, 0, 0, &exec_id);
	ASSERT_LE(0, fence);

	ASSERT_EQ(MCP_WORKER_CHAIN_MAX, read_chain_wait(wfd, c, HUGE_ROOM));
	for (int i = 0; i < MCP_WORKER_CHAIN_MAX; i++) {
		if (c->nodes[i] != (__u32)i) {
			EXPECT_EQ(i, c->nodes[i]) TH_LOG("entry %d", i);
			break;
		}
	}
	ASSERT_EQ(0, chain_done(wfd, c->job_id, 0, ends, MCP_WORKER_CHAIN_MAX, 0));
	ASSERT_EQ(HUGE_CHAIN - MCP_WORKER_CHAIN_MAX,
		  read_chain_wait(wfd, c, HUGE_ROOM));
	EXPECT_EQ(MCP_WORKER_CHAIN_MAX, c->nodes[0]);
	EXPECT_EQ(HUGE_CHAIN - 1, c->nodes[HUGE_CHAIN - MCP_WORKER_CHAIN_MAX - 1]);
	ASSERT_EQ(0, chain_done_all(wfd, c));
	EXPECT_EQ(1, fence_finish(fence, 30000));

	ASSERT_EQ(0, graph_status(self->fd, exec_id, ns, HUGE_CHAIN, &st));
	EXPECT_EQ(MCP_GRAPH_STATE_DONE, st.state);
	EXPECT_EQ(HUGE_CHAIN, st.n_nodes);
	for (int i = 0; i < HUGE_CHAIN; i++) {
		int bad = ns[i].result || ns[i].worker_tid != tid ||
			  ns[i].start_ns < t0 || ns[i].end_ns < ns[i].start_ns ||
			  (i && ns[i].start_ns < ns[i - 1].end_ns);

		if (bad) {
			EXPECT_EQ(0, bad)
				TH_LOG("node %d: result %d tid %d start %llu end %llu",
				       i, ns[i].result, ns[i].worker_tid,
				       (unsigned long long)ns[i].start_ns,
				       (unsigned long long)ns[i].end_ns);
			break;
		}
	}
	close(wfd);
}

/*
 * WNOP -> COPY on the kernel's CPU engine -> WNOP: a chain holds worker
 * nodes only, so each WNOP is a chain of one and the copy runs between.
 */
TEST_F_TIMEOUT(chain, kernel_node_ends_chain, 60)
{
	struct mcp_worker_chain *c = chain_buf();
	struct mcp_graph_node_status ns[3];
	struct mcp_graph_status st;
	struct mcp_graph_case_graph g;
	pid_t tid = syscall(SYS_gettid);
	int graph, wfd, fence;
	__u64 exec_id;

	ASSERT_NE(NULL, c);
	mcp_graph_case_init(&g);
	mcp_graph_case_buffer(&g, PAGE, 0);
	for (int i = 0; i < 4; i++)
		mcp_graph_case_tensor(&g, 0, MCP_DTYPE_F32, 64 * i, 1, 16);
	mcp_graph_case_node(&g, MCP_OP_WNOP, MCP_GRAPH_ENGINE_WORKER, 1, 1, 0, 1);
	mcp_graph_case_node(&g, MCP_OP_COPY, MCP_GRAPH_ENGINE_CPU, 1, 1, 1, 2);
	mcp_graph_case_node(&g, MCP_OP_WNOP, MCP_GRAPH_ENGINE_WORKER, 1, 1, 2, 3);
	graph = graph_create(self->fd, &g, self->bo);
	ASSERT_LT(0, graph);
	wfd = chain_worker(self->fd);
	ASSERT_LE(0, wfd);
	fence = exec_bound(self->fd, graph, NULL, 0, 0, &exec_id);
	ASSERT_LE(0, fence);

	ASSERT_EQ(1, read_chain_wait(wfd, c, ROOM));
	expect_nodes(_metadata, c, exec_id, 0, 1);
	ASSERT_EQ(0, chain_done_all(wfd, c));
	ASSERT_EQ(1, read_chain_wait(wfd, c, ROOM));
	expect_nodes(_metadata, c, exec_id, 2, 1);
	ASSERT_EQ(0, chain_done_all(wfd, c));
	EXPECT_EQ(1, fence_finish(fence, 10000));

	ASSERT_EQ(0, graph_status(self->fd, exec_id, ns, 3, &st));
	EXPECT_EQ(MCP_GRAPH_STATE_DONE, st.state);
	EXPECT_EQ(MCP_GRAPH_ENGINE_CPU, ns[1].engine);
	for (int i = 0; i < 3; i++) {
		EXPECT_EQ(0, ns[i].result) TH_LOG("node %d", i);
		EXPECT_LE(ns[i].start_ns, ns[i].end_ns) TH_LOG("node %d", i);
		if (i)
			EXPECT_LE(ns[i - 1].end_ns, ns[i].start_ns) TH_LOG("node %d", i);
		if (i != 1) {
			EXPECT_EQ(MCP_GRAPH_ENGINE_WORKER, ns[i].engine) TH_LOG("node %d", i);
			EXPECT_EQ(tid, ns[i].worker_tid) TH_LOG("node %d", i);
		}
	}
	close(wfd);
	free(c);
}

/* The second NUMA node's id, or -1 with one node only. */
static int second_numa_node(void)
{
	int seen = 0;

	for (int node = 0; node < 64; node++) {
		char path[64];

		snprintf(path, sizeof(path), "/sys/devices/system/node/node%d", node);
		if (!access(path, F_OK) && seen++)
			return node;
	}
	return -1;
}

/*
 * Node 1 reads mostly a BO on another NUMA node: it routes to that node's
 * worker, so the chain on node 0's worker ends before it.
 */
TEST_F_TIMEOUT(chain, routed_elsewhere_ends_chain, 60)
{
	struct mcp_worker_chain *a = chain_buf(), *b = chain_buf();
	struct mcp_graph_node_status ns[3];
	struct mcp_graph_status st;
	struct mcp_graph_case_graph g;
	int graph, w0, w1, fence, other = second_numa_node();
	__u64 exec_id;

	ASSERT_NE(NULL, a);
	ASSERT_NE(NULL, b);
	if (other < 0)
		SKIP(return, "one NUMA node only");
	self->bo[1] = bo_new(self->fd, other);
	ASSERT_NE(0, self->bo[1]);

	mcp_graph_case_init(&g);
	mcp_graph_case_buffer(&g, PAGE, 0);
	mcp_graph_case_buffer(&g, PAGE, 0);
	mcp_graph_case_tensor(&g, 0, MCP_DTYPE_F32, 0, 1, 16);	/* 0: node 0 */
	mcp_graph_case_tensor(&g, 0, MCP_DTYPE_F32, 64, 1, 16);	/* 1: node 0 */
	mcp_graph_case_tensor(&g, 1, MCP_DTYPE_F32, 0, 1, 512);	/* 2: 2 KiB, other */
	mcp_graph_case_tensor(&g, 1, MCP_DTYPE_F32, 2048, 1, 16);	/* 3: other */
	mcp_graph_case_tensor(&g, 1, MCP_DTYPE_F32, 2112, 1, 16);	/* 4: other */
	mcp_graph_case_node(&g, MCP_OP_WNOP, MCP_GRAPH_ENGINE_WORKER, 1, 1, 0, 1);
	mcp_graph_case_node(&g, MCP_OP_WNOP, MCP_GRAPH_ENGINE_WORKER, 2, 1, 1, 2, 3);
	mcp_graph_case_node(&g, MCP_OP_WNOP, MCP_GRAPH_ENGINE_WORKER, 1, 1, 3, 4);
	graph = graph_create(self->fd, &g, self->bo);
	ASSERT_LT(0, graph);
	w0 = chain_worker(self->fd);
	w1 = worker_open(self->fd, other, MCP_WORKER_CHAINS);
	ASSERT_LE(0, w0);
	ASSERT_LE(0, w1);
	fence = exec_bound(self->fd, graph, NULL, 0, 0, &exec_id);
	ASSERT_LE(0, fence);

	ASSERT_EQ(1, read_chain_wait(w0, a, ROOM));
	expect_nodes(_metadata, a, exec_id, 0, 1);
	EXPECT_EQ(-EAGAIN, read_chain(w1, b, ROOM));
	ASSERT_EQ(0, chain_done_all(w0, a));
	EXPECT_EQ(-EAGAIN, read_chain(w0, a, ROOM));
	/* On the other node, 1 and 2 are one chain. */
	ASSERT_EQ(2, read_chain_wait(w1, b, ROOM));
	expect_nodes(_metadata, b, exec_id, 1, 2);
	ASSERT_EQ(0, chain_done_all(w1, b));
	EXPECT_EQ(1, fence_finish(fence, 10000));
	ASSERT_EQ(0, graph_status(self->fd, exec_id, ns, 3, &st));
	EXPECT_EQ(MCP_GRAPH_STATE_DONE, st.state);
	EXPECT_EQ(0, ns[0].numa_node);
	EXPECT_EQ(other, ns[1].numa_node);
	EXPECT_EQ(other, ns[2].numa_node);
	close(w1);
	close(w0);
	free(b);
	free(a);
}

/*
 * A report of the first 3 of 8 nodes, all well: the other 5 go back to
 * the queue, not started, and another worker reads them as a chain.
 */
TEST_F_TIMEOUT(chain, partial_report_hands_rest_on, 60)
{
	struct mcp_worker_chain *c = chain_buf(), *other = chain_buf();
	struct mcp_graph_node_status ns[8];
	struct mcp_graph_status st;
	pid_t tid = syscall(SYS_gettid);
	__u64 exec_id, t0, first_id;
	int w1, w2, fence;

	ASSERT_NE(NULL, c);
	ASSERT_NE(NULL, other);
	w1 = chain_worker(self->fd);
	w2 = chain_worker(self->fd);
	ASSERT_LE(0, w1);
	ASSERT_LE(0, w2);
	t0 = now_ns();
	fence = chain_exec(self->fd, self->bo, 8, 0, &exec_id);
	ASSERT_LE(0, fence);
	ASSERT_EQ(8, read_chain_wait(w1, c, ROOM));
	first_id = c->job_id;
	ASSERT_EQ(0, chain_done(w1, first_id, 0, NULL, 3, 0));
	/* Reported once: the id is gone, even for the nodes not run. */
	EXPECT_EQ(-ENOENT, chain_done(w1, first_id, 0, NULL, 5, 0));

	ASSERT_EQ(0, graph_status(self->fd, exec_id, ns, 8, &st));
	EXPECT_EQ(MCP_GRAPH_STATE_RUNNING, st.state);
	for (int i = 0; i < 3; i++) {
		EXPECT_EQ(0, ns[i].result) TH_LOG("node %d", i);
		EXPECT_NE(0, ns[i].end_ns) TH_LOG("node %d", i);
	}
	for (int i = 3; i < 8; i++) {
		EXPECT_EQ(0, ns[i].start_ns) TH_LOG("node %d", i);
	}

	ASSERT_EQ(5, read_chain_wait(w2, c, ROOM));
	expect_nodes(_metadata, c, exec_id, 3, 5);
	EXPECT_NE(first_id, c->job_id);
	EXPECT_EQ(-EAGAIN, read_chain(w1, other, ROOM));
	ASSERT_EQ(0, chain_done_all(w2, c));
	EXPECT_EQ(1, fence_finish(fence, 10000));
	expect_all_ran(_metadata, self->fd, exec_id, 8, tid, t0);
	close(w2);
	close(w1);
	free(other);
	free(c);
}

/*
 * Three of six ran and the third failed: it is the failed node, the ones
 * after it are cancelled without starting, the execution fails with it.
 */
TEST_F_TIMEOUT(chain, failure_cancels_rest, 60)
{
	struct mcp_worker_chain *c = chain_buf();
	struct mcp_graph_node_status ns[6];
	struct mcp_graph_status st;
	pid_t tid = syscall(SYS_gettid);
	__u64 exec_id;
	int wfd, fence;

	ASSERT_NE(NULL, c);
	wfd = chain_worker(self->fd);
	ASSERT_LE(0, wfd);
	fence = chain_exec(self->fd, self->bo, 6, 0, &exec_id);
	ASSERT_LE(0, fence);
	ASSERT_EQ(6, read_chain_wait(wfd, c, ROOM));
	ASSERT_EQ(0, chain_done(wfd, c->job_id, 0, NULL, 3, -EIO));
	EXPECT_EQ(-EIO, fence_finish(fence, 10000));

	ASSERT_EQ(0, graph_status(self->fd, exec_id, ns, 6, &st));
	EXPECT_EQ(MCP_GRAPH_STATE_FAILED, st.state);
	EXPECT_EQ(-EIO, st.result);
	EXPECT_EQ(2, st.failed_node);
	for (int i = 0; i < 3; i++) {
		EXPECT_EQ(i == 2 ? -EIO : 0, ns[i].result) TH_LOG("node %d", i);
		EXPECT_EQ(tid, ns[i].worker_tid) TH_LOG("node %d", i);
		EXPECT_NE(0, ns[i].start_ns) TH_LOG("node %d", i);
		EXPECT_LE(ns[i].start_ns, ns[i].end_ns) TH_LOG("node %d", i);
		if (i)
			EXPECT_EQ(ns[i - 1].end_ns, ns[i].start_ns) TH_LOG("node %d", i);
	}
	for (int i = 3; i < 6; i++) {
		EXPECT_EQ(-ECANCELED, ns[i].result) TH_LOG("node %d", i);
		EXPECT_EQ(0, ns[i].start_ns) TH_LOG("node %d", i);
	}
	EXPECT_EQ(-ENOENT, chain_done_all(wfd, c));
	EXPECT_EQ(-EAGAIN, read_chain(wfd, c, ROOM));

	/* The head fails: it is the failed node. */
	fence = chain_exec(self->fd, self->bo, 3, 0, &exec_id);
	ASSERT_LE(0, fence);
	ASSERT_EQ(3, read_chain_wait(wfd, c, ROOM));
	ASSERT_EQ(0, chain_done(wfd, c->job_id, 0, NULL, 1, -ENOMEM));
	EXPECT_EQ(-ENOMEM, fence_finish(fence, 10000));
	ASSERT_EQ(0, graph_status(self->fd, exec_id, ns, 3, &st));
	EXPECT_EQ(0, st.failed_node);
	EXPECT_EQ(-ENOMEM, ns[0].result);
	EXPECT_EQ(-ECANCELED, ns[1].result);
	EXPECT_EQ(-ECANCELED, ns[2].result);
	close(wfd);
	free(c);
}

/*
 * The worker fd closes with a chain claimed: another worker reads the
 * same chain from its head and the execution succeeds; a second close
 * fails the head with -EPIPE and cancels the rest.
 */
TEST_F_TIMEOUT(chain, close_hands_chain_on, 60)
{
	struct mcp_worker_chain *c = chain_buf();
	struct mcp_graph_node_status ns[5];
	struct mcp_graph_status st;
	pid_t tid = syscall(SYS_gettid);
	__u64 exec_id, t0;
	int w1, w2, fence;

	ASSERT_NE(NULL, c);
	w1 = chain_worker(self->fd);
	w2 = chain_worker(self->fd);
	ASSERT_LE(0, w1);
	ASSERT_LE(0, w2);
	t0 = now_ns();
	fence = chain_exec(self->fd, self->bo, 5, 0, &exec_id);
	ASSERT_LE(0, fence);
	ASSERT_EQ(5, read_chain_wait(w1, c, ROOM));
	close(w1);
	ASSERT_EQ(5, read_chain_wait(w2, c, ROOM));
	expect_nodes(_metadata, c, exec_id, 0, 5);
	ASSERT_EQ(0, chain_done_all(w2, c));
	EXPECT_EQ(1, fence_finish(fence, 10000));
	expect_all_ran(_metadata, self->fd, exec_id, 5, tid, t0);
	close(w2);

	fence = chain_exec(self->fd, self->bo, 5, 0, &exec_id);
	ASSERT_LE(0, fence);
	for (int round = 0; round < 2; round++) {
		w1 = chain_worker(self->fd);
		ASSERT_LE(0, w1);
		ASSERT_EQ(5, read_chain_wait(w1, c, ROOM)) TH_LOG("round %d", round);
		EXPECT_EQ(0, c->nodes[0]);
		close(w1);
	}
	EXPECT_EQ(-EPIPE, fence_finish(fence, 10000));
	ASSERT_EQ(0, graph_status(self->fd, exec_id, ns, 5, &st));
	EXPECT_EQ(MCP_GRAPH_STATE_FAILED, st.state);
	EXPECT_EQ(0, st.failed_node);
	EXPECT_EQ(-EPIPE, ns[0].result);
	for (int i = 1; i < 5; i++) {
		EXPECT_EQ(-ECANCELED, ns[i].result) TH_LOG("node %d", i);
		EXPECT_EQ(0, ns[i].start_ns) TH_LOG("node %d", i);
	}
	free(c);
}

/* The execution times out with the chain claimed: its report is -ECANCELED. */
TEST_F_TIMEOUT(chain, timeout_cancels_claimed_chain, 60)
{
	struct mcp_worker_chain *c = chain_buf();
	struct mcp_graph_node_status ns[3];
	struct mcp_graph_status st;
	__u64 exec_id;
	int wfd, fence;

	ASSERT_NE(NULL, c);
	wfd = chain_worker(self->fd);
	ASSERT_LE(0, wfd);
	fence = chain_exec(self->fd, self->bo, 3, 200, &exec_id);
	ASSERT_LE(0, fence);
	ASSERT_EQ(3, read_chain_wait(wfd, c, ROOM));
	EXPECT_EQ(-ETIMEDOUT, fence_finish(fence, 10000));
	EXPECT_EQ(-ECANCELED, chain_done_all(wfd, c));

	ASSERT_EQ(0, graph_status(self->fd, exec_id, ns, 3, &st));
	EXPECT_EQ(MCP_GRAPH_STATE_FAILED, st.state);
	EXPECT_EQ(-ETIMEDOUT, st.result);
	EXPECT_EQ(0, st.failed_node);
	EXPECT_EQ(-ETIMEDOUT, ns[0].result);
	EXPECT_NE(0, ns[0].start_ns);
	for (int i = 1; i < 3; i++) {
		EXPECT_EQ(-ECANCELED, ns[i].result) TH_LOG("node %d", i);
		EXPECT_EQ(0, ns[i].start_ns) TH_LOG("node %d", i);
	}
	EXPECT_EQ(-EAGAIN, read_chain(wfd, c, ROOM));
	close(wfd);
	free(c);
}

static int graph_destroy(int fd, __u32 graph)
{
	struct mcp_graph_destroy d = { .size = sizeof(d), .handle = graph };

	return mcp_ioctl(fd, MCP_IOC_GRAPH_DESTROY, &d);
}

/*
 * The graph is destroyed while its chain is claimed: the execution runs
 * to its end and the report applies; after a time-out the report is
 * -ECANCELED, and so is a close of the worker fd instead of a report.
 */
TEST_F_TIMEOUT(chain, destroyed_graph_chain_runs_out, 60)
{
	struct mcp_worker_chain *c = chain_buf();
	struct mcp_graph_case_graph g;
	pid_t tid = syscall(SYS_gettid);
	__u64 exec_id, t0;
	int graph, wfd, fence;

	ASSERT_NE(NULL, c);
	build_chain(&g, 4);
	wfd = chain_worker(self->fd);
	ASSERT_LE(0, wfd);

	graph = graph_create(self->fd, &g, self->bo);
	ASSERT_LT(0, graph);
	t0 = now_ns();
	fence = exec_bound(self->fd, graph, NULL, 0, 0, &exec_id);
	ASSERT_LE(0, fence);
	ASSERT_EQ(4, read_chain_wait(wfd, c, ROOM));
	ASSERT_EQ(0, graph_destroy(self->fd, graph));
	ASSERT_EQ(0, chain_done_all(wfd, c));
	EXPECT_EQ(1, fence_finish(fence, 10000));
	expect_all_ran(_metadata, self->fd, exec_id, 4, tid, t0);

	graph = graph_create(self->fd, &g, self->bo);
	ASSERT_LT(0, graph);
	fence = exec_bound(self->fd, graph, NULL, 0, 200, &exec_id);
	ASSERT_LE(0, fence);
	ASSERT_EQ(4, read_chain_wait(wfd, c, ROOM));
	ASSERT_EQ(0, graph_destroy(self->fd, graph));
	EXPECT_EQ(-ETIMEDOUT, fence_finish(fence, 10000));
	EXPECT_EQ(-ECANCELED, chain_done_all(wfd, c));

	graph = graph_create(self->fd, &g, self->bo);
	ASSERT_LT(0, graph);
	fence = exec_bound(self->fd, graph, NULL, 0, 200, &exec_id);
	ASSERT_LE(0, fence);
	ASSERT_EQ(4, read_chain_wait(wfd, c, ROOM));
	ASSERT_EQ(0, graph_destroy(self->fd, graph));
	EXPECT_EQ(-ETIMEDOUT, fence_finish(fence, 10000));
	close(wfd);
	free(c);
}

/*
 * JOB_DONE, or one JOBS_DONE entry, on a chain's id is CHAIN_DONE of its
 * first node: the rest goes back to the queue; a failure cancels it.
 */
TEST_F_TIMEOUT(chain, job_done_reports_first_node, 60)
{
	struct mcp_worker_chain *c = chain_buf();
	struct mcp_graph_node_status ns[4];
	struct mcp_graph_status st;
	struct mcp_job_report r = { 0 };
	struct mcp_jobs_done d = {
		.size = sizeof(d), .reports = (__u64)(uintptr_t)&r, .n_reports = 1,
	};
	pid_t tid = syscall(SYS_gettid);
	__u64 exec_id, t0;
	int wfd, fence;

	ASSERT_NE(NULL, c);
	wfd = chain_worker(self->fd);
	ASSERT_LE(0, wfd);
	t0 = now_ns();
	fence = chain_exec(self->fd, self->bo, 4, 0, &exec_id);
	ASSERT_LE(0, fence);
	ASSERT_EQ(4, read_chain_wait(wfd, c, ROOM));
	ASSERT_EQ(0, job_done(wfd, c->job_id, 0));
	EXPECT_EQ(-ENOENT, job_done(wfd, c->job_id, 0));

	ASSERT_EQ(3, read_chain_wait(wfd, c, ROOM));
	expect_nodes(_metadata, c, exec_id, 1, 3);
	r.job_id = c->job_id;
	ASSERT_EQ(0, mcp_ioctl(wfd, MCP_IOC_JOBS_DONE, &d));
	EXPECT_EQ(0, r.status);

	ASSERT_EQ(2, read_chain_wait(wfd, c, ROOM));
	expect_nodes(_metadata, c, exec_id, 2, 2);
	r = (struct mcp_job_report){ .job_id = c->job_id, .result = -EIO };
	ASSERT_EQ(0, mcp_ioctl(wfd, MCP_IOC_JOBS_DONE, &d));
	EXPECT_EQ(0, r.status);
	EXPECT_EQ(-EIO, fence_finish(fence, 10000));

	ASSERT_EQ(0, graph_status(self->fd, exec_id, ns, 4, &st));
	EXPECT_EQ(MCP_GRAPH_STATE_FAILED, st.state);
	EXPECT_EQ(2, st.failed_node);
	for (int i = 0; i < 3; i++) {
		EXPECT_EQ(i == 2 ? -EIO : 0, ns[i].result) TH_LOG("node %d", i);
		EXPECT_EQ(tid, ns[i].worker_tid) TH_LOG("node %d", i);
		EXPECT_LE(t0, ns[i].start_ns) TH_LOG("node %d", i);
		EXPECT_LE(ns[i].start_ns, ns[i].end_ns) TH_LOG("node %d", i);
		if (i)
			EXPECT_LE(ns[i - 1].end_ns, ns[i].start_ns) TH_LOG("node %d", i);
	}
	EXPECT_EQ(-ECANCELED, ns[3].result);
	EXPECT_EQ(0, ns[3].start_ns);
	close(wfd);
	free(c);
}

/* poll() of a worker fd: 1 when a chain is ready, 0 when not, -errno. */
static int chain_ready(int wfd, int ms)
{
	struct pollfd p = { .fd = wfd, .events = POLLIN };
	int n = poll(&p, 1, ms);

	if (n < 0)
		return -errno;
	return n && (p.revents & POLLIN);
}

/* poll() says POLLIN while a chain, or the rest of one, is ready. */
TEST_F_TIMEOUT(chain, poll_follows_chains, 60)
{
	struct mcp_worker_chain *c = chain_buf();
	__u64 exec_id;
	int wfd, fence;

	ASSERT_NE(NULL, c);
	wfd = chain_worker(self->fd);
	ASSERT_LE(0, wfd);
	EXPECT_EQ(0, chain_ready(wfd, 0));
	fence = chain_exec(self->fd, self->bo, 3, 0, &exec_id);
	ASSERT_LE(0, fence);
	ASSERT_EQ(1, chain_ready(wfd, 5000));
	ASSERT_EQ(3, read_chain(wfd, c, ROOM));
	EXPECT_EQ(0, chain_ready(wfd, 0));
	ASSERT_EQ(0, chain_done(wfd, c->job_id, 0, NULL, 1, 0));
	ASSERT_EQ(1, chain_ready(wfd, 5000));
	ASSERT_EQ(2, read_chain(wfd, c, ROOM));
	expect_nodes(_metadata, c, exec_id, 1, 2);
	EXPECT_EQ(0, chain_ready(wfd, 0));
	ASSERT_EQ(0, chain_done_all(wfd, c));
	EXPECT_EQ(1, fence_finish(fence, 10000));
	EXPECT_EQ(0, chain_ready(wfd, 0));
	close(wfd);
	free(c);
}

/* An unknown register flag, alone or with MCP_WORKER_CHAINS. */
TEST_F(chain, register_flags)
{
	EXPECT_EQ(-EINVAL, worker_open(self->fd, -1, 1U << 1));
	EXPECT_EQ(-EINVAL, worker_open(self->fd, -1, MCP_WORKER_CHAINS | 1U << 31));
}

/*
 * CHAIN_DONE's bad arguments fail the call and apply nothing: the chain
 * is still claimed and one correct report ends it.
 */
TEST_F_TIMEOUT(chain, chain_done_arguments, 60)
{
	struct mcp_worker_chain *c = chain_buf();
	struct mcp_graph_node_status ns[3];
	struct mcp_graph_status st;
	struct {
		struct mcp_chain_done d;
		__u64 tail;
	} big;
	struct mcp_chain_done d;
	long pg = sysconf(_SC_PAGESIZE);
	pid_t tid = syscall(SYS_gettid);
	__u64 exec_id, t0, *ends;
	char *page;
	int wfd, fence;

	ASSERT_NE(NULL, c);
	page = mcp_guarded_page();
	ASSERT_NE(NULL, page);
	wfd = chain_worker(self->fd);
	ASSERT_LE(0, wfd);
	t0 = now_ns();
	fence = chain_exec(self->fd, self->bo, 3, 0, &exec_id);
	ASSERT_LE(0, fence);
	ASSERT_EQ(3, read_chain_wait(wfd, c, ROOM));

	d = (struct mcp_chain_done){ .size = MCP_CHAIN_DONE_SIZE_VER0 - 1,
				     .job_id = c->job_id, .n_ran = 3 };
	EXPECT_EQ(-EINVAL, mcp_ioctl(wfd, MCP_IOC_CHAIN_DONE, &d));
	d.size = MCP_ARG_SIZE_MAX + 1;
	EXPECT_EQ(-E2BIG, mcp_ioctl(wfd, MCP_IOC_CHAIN_DONE, &d));
	/* Longer than the kernel knows: the tail must be zero. */
	big = (typeof(big)){ .d = { .size = sizeof(big), .job_id = c->job_id,
				    .n_ran = 3 }, .tail = 1 };
	EXPECT_EQ(-E2BIG, mcp_ioctl(wfd, MCP_IOC_CHAIN_DONE, &big));
	d.size = sizeof(d);
	d.flags = 1;
	EXPECT_EQ(-EINVAL, mcp_ioctl(wfd, MCP_IOC_CHAIN_DONE, &d));
	d.flags = 0;
	EXPECT_EQ(-EINVAL, chain_done(wfd, c->job_id, 0, NULL, 0, 0));
	EXPECT_EQ(-EINVAL, chain_done(wfd, c->job_id, 0, NULL, 4, 0));
	EXPECT_EQ(-EINVAL, chain_done(wfd, c->job_id, 0, NULL, 3, 1));
	EXPECT_EQ(-EINVAL, chain_done(wfd, c->job_id, 0, NULL, 3, -4096));
	EXPECT_EQ(-EINVAL, chain_done(wfd, c->job_id, 0, NULL, 3, INT32_MIN));
	EXPECT_EQ(-EFAULT, chain_done(wfd, c->job_id, 0, mcp_unmapped_addr(), 3, 0));
	/* Two ends readable, the third in the hole. */
	ends = (__u64 *)(page + pg - 2 * sizeof(__u64));
	ends[0] = ends[1] = 0;
	EXPECT_EQ(-EFAULT, chain_done(wfd, c->job_id, 0, ends, 3, 0));
	EXPECT_EQ(-ENOENT, chain_done(wfd, c->job_id + 1000, 0, NULL, 3, 0));
	EXPECT_EQ(-ENOENT, chain_done(wfd, 0, 0, NULL, 1, 0));
	/* On the context's fd it is no ioctl. */
	EXPECT_EQ(-ENOTTY, mcp_ioctl(self->fd, MCP_IOC_CHAIN_DONE, &d));

	/* Nothing was applied. */
	ASSERT_EQ(0, graph_status(self->fd, exec_id, ns, 3, &st));
	EXPECT_EQ(MCP_GRAPH_STATE_RUNNING, st.state);
	EXPECT_NE(0, ns[0].start_ns);
	EXPECT_EQ(0, ns[0].end_ns);
	EXPECT_EQ(0, ns[1].start_ns);
	EXPECT_EQ(0, ns[2].start_ns);

	/* Longer with a zero tail is fine; the error-free report applies. */
	big = (typeof(big)){ .d = { .size = sizeof(big), .job_id = c->job_id,
				    .n_ran = 3, .result = 0 } };
	ASSERT_EQ(0, mcp_ioctl(wfd, MCP_IOC_CHAIN_DONE, &big));
	EXPECT_EQ(-ENOENT, chain_done_all(wfd, c));
	EXPECT_EQ(1, fence_finish(fence, 10000));
	expect_all_ran(_metadata, self->fd, exec_id, 3, tid, t0);
	munmap(page, 2 * pg);
	close(wfd);
	free(c);
}

/*
 * On a plain worker fd each job read is a chain of one node: CHAIN_DONE
 * reports it (n_ran 1 only, its end time kept); a chained job not started
 * is -EBUSY.  A chain fd's read needs room for one node.
 */
TEST_F_TIMEOUT(chain, plain_job_is_chain_of_one, 60)
{
	struct mcp_worker_chain *c = chain_buf();
	struct mcp_graph_node_status ns[3];
	struct mcp_graph_status st;
	struct mcp_worker_job jobs[2];
	pid_t tid = syscall(SYS_gettid);
	__u64 exec_id, t0, t_end;
	ssize_t n = -1;
	int plain, wfd, fence;

	ASSERT_NE(NULL, c);
	plain = worker_open(self->fd, 0, 0);
	ASSERT_LE(0, plain);
	t0 = now_ns();
	fence = chain_exec(self->fd, self->bo, 3, 0, &exec_id);
	ASSERT_LE(0, fence);
	/* Room for two jobs: node 0, and node 1 chained after it. */
	for (int i = 0; i < 500 && n < 0; i++) {
		n = read(plain, jobs, sizeof(jobs));
		if (n < 0)
			usleep(10000);
	}
	ASSERT_EQ(sizeof(jobs), n);
	EXPECT_EQ(0, jobs[0].node);
	EXPECT_EQ(1, jobs[1].node);
	EXPECT_EQ(MCP_WORKER_JOB_CHAINED, jobs[1].flags);

	EXPECT_EQ(-EBUSY, chain_done(plain, jobs[1].job_id, 0, NULL, 1, 0));
	EXPECT_EQ(-EINVAL, chain_done(plain, jobs[0].job_id, 0, NULL, 2, 0));
	usleep(1000);
	t_end = now_ns();
	ASSERT_EQ(0, chain_done(plain, jobs[0].job_id, 0, &t_end, 1, 0));
	EXPECT_EQ(-ENOENT, job_done(plain, jobs[0].job_id, 0));
	ASSERT_EQ(0, graph_status(self->fd, exec_id, ns, 3, &st));
	EXPECT_EQ(t_end, ns[0].end_ns);
	EXPECT_EQ(t_end, ns[1].start_ns);
	ASSERT_EQ(0, chain_done(plain, jobs[1].job_id, 0, NULL, 1, 0));
	close(plain);

	/* The last node, on a chain fd: too little room is -EINVAL. */
	wfd = chain_worker(self->fd);
	ASSERT_LE(0, wfd);
	for (int i = 0; i < 100; i++) {
		int r = read_chain_bytes(wfd, c, CHAIN_BYTES(1) - 1);

		if (r != -EAGAIN) {
			EXPECT_EQ(-EINVAL, r);
			break;
		}
		usleep(10000);
	}
	ASSERT_EQ(1, read_chain_wait(wfd, c, ROOM));
	expect_nodes(_metadata, c, exec_id, 2, 1);
	ASSERT_EQ(0, chain_done_all(wfd, c));
	EXPECT_EQ(1, fence_finish(fence, 10000));
	expect_all_ran(_metadata, self->fd, exec_id, 3, tid, t0);
	close(wfd);
	free(c);
}

/* The context closes with a chain claimed: -ENODEV, and reads return 0. */
TEST_F_TIMEOUT(chain, context_gone, 60)
{
	struct mcp_worker_chain *c = chain_buf();
	__u64 exec_id;
	__u32 bo;
	int ctx, wfd, fence;

	ASSERT_NE(NULL, c);
	ctx = mcp_open();
	ASSERT_LE(0, ctx);
	bo = bo_new(ctx, 0);
	ASSERT_NE(0, bo);
	wfd = chain_worker(ctx);
	ASSERT_LE(0, wfd);
	fence = chain_exec(ctx, &bo, 4, 0, &exec_id);
	ASSERT_LE(0, fence);
	ASSERT_EQ(4, read_chain_wait(wfd, c, ROOM));
	close(ctx);

	EXPECT_EQ(-ENODEV, chain_done_all(wfd, c));
	EXPECT_EQ(0, read(wfd, c, CHAIN_BYTES(ROOM)));
	EXPECT_EQ(-ECANCELED, fence_finish(fence, 10000));
	close(wfd);
	free(c);
}

/* Graph handles go round: a destroyed graph's handle is not the next one. */
TEST_F(chain, graph_handles_not_reused)
{
	struct mcp_graph_case_graph g;
	int first, second;

	build_chain(&g, 1);
	first = graph_create(self->fd, &g, self->bo);
	ASSERT_LT(0, first);
	ASSERT_EQ(0, graph_destroy(self->fd, first));
	second = graph_create(self->fd, &g, self->bo);
	ASSERT_LT(0, second);
	EXPECT_NE(first, second);
}

#define RACE_ROUNDS	20

struct done_race {
	int wfd;
	__u64 job_id;
	__u32 n_ran;
	int *ready;	/* shared: racers at the start line */
	int ret;
};

/* Spins until both racers are there, so they report together. */
static void *done_racer(void *arg)
{
	struct done_race *dr = arg;

	__atomic_add_fetch(dr->ready, 1, __ATOMIC_SEQ_CST);
	while (__atomic_load_n(dr->ready, __ATOMIC_SEQ_CST) < 2)
		;
	dr->ret = chain_done(dr->wfd, dr->job_id, 0, NULL, dr->n_ran, 0);
	return NULL;
}

/*
 * Two threads report the same chain of 40 at once: exactly one of them
 * applies it, the other is told -ENOENT, and the execution ends well.
 */
TEST_F_TIMEOUT(chain, racing_reports_apply_once, 120)
{
	struct mcp_worker_chain *c = chain_buf();
	struct done_race a = { 0 }, b = { 0 };
	pid_t tid = syscall(SYS_gettid);
	int graph, wfd, ready, a_won = 0;
	pthread_t ta, tb;

	ASSERT_NE(NULL, c);
	graph = chain_graph_create(self->fd, self->bo, LONG_CHAIN);
	ASSERT_LT(0, graph);
	wfd = chain_worker(self->fd);
	ASSERT_LE(0, wfd);
	a.wfd = b.wfd = wfd;
	a.ready = b.ready = &ready;
	a.n_ran = b.n_ran = LONG_CHAIN;

	for (int round = 0; round < RACE_ROUNDS; round++) {
		__u64 exec_id, t0 = now_ns();
		int fence = exec_bound(self->fd, graph, NULL, 0, 0, &exec_id);

		ASSERT_LE(0, fence);
		ASSERT_EQ(LONG_CHAIN, read_chain_wait(wfd, c, ROOM));
		a.job_id = b.job_id = c->job_id;
		ready = 0;
		ASSERT_EQ(0, pthread_create(&ta, NULL, done_racer, &a));
		ASSERT_EQ(0, pthread_create(&tb, NULL, done_racer, &b));
		pthread_join(ta, NULL);
		pthread_join(tb, NULL);
		EXPECT_TRUE((a.ret == 0 && b.ret == -ENOENT) ||
			    (a.ret == -ENOENT && b.ret == 0))
			TH_LOG("round %d: %d and %d", round, a.ret, b.ret);
		a_won += a.ret == 0;
		EXPECT_EQ(1, fence_finish(fence, 10000));
		expect_all_ran(_metadata, self->fd, exec_id, LONG_CHAIN, tid, t0);
	}
	ksft_print_msg("the first thread won %d of %d rounds\n", a_won, RACE_ROUNDS);
	close(wfd);
	free(c);
}

MCP_TEST_MAIN
