// SPDX-License-Identifier: GPL-2.0-only
/*
 * Inference graphs through raw ioctls (uapi/linux/mcp.h, "Inference
 * graphs"): every case of tests/graph_cases/mcp_graph_cases.h through
 * MCP_IOC_GRAPH_CREATE with its (reason, kind, index), bad arguments of
 * every graph ioctl, the knobs, graphs dying with their fd; executions of
 * the cpu engine's operators checked against plain C, STATUS timings and
 * ordering; compute workers implemented here (WNOP, ADD): re-binding,
 * failing nodes, time-outs, killed workers (re-queued once, then -EPIPE),
 * closing the fd mid-execution, executions in flight together, threads,
 * in-fences from DMA jobs, and jobs placed on the node of their data;
 * worker operators opaque to the kernel (MCP_FEAT_WORKER_OPS); what
 * GRAPH_CREATE costs (a memory cgroup, a fatal signal, the work bound);
 * COPY on the edu device's DMA engine from its device fd.
 */
#include "mcp_bo.h"
#include "mcp_dev.h"
#include "mcp_fence.h"
#include "mcp_graph.h"
#include "../graph_cases/mcp_graph_cases.h"

#include <limits.h>
#include <math.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <time.h>

#include <linux/sync_file.h>

#define GRAPH_KNOBS		MCP_SYSFS_DIR "/graph"
#define PAGE			4096UL
#define MIB			(1UL << 20)

static const char * const graph_counters[] = {
	"graph_objects", "graph_execs_in_flight", "graph_workers",
	"bo_objects", "dma_jobs_in_flight",
};

static int has_graphs(int fd)
{
	struct mcp_version v = { .size = sizeof(v) };

	return !mcp_ioctl(fd, MCP_IOC_GET_VERSION, &v) &&
	       (v.features & MCP_FEAT_GRAPHS);
}

static int knob_write(const char *knob, long long val)
{
	char path[PATH_MAX], buf[32];

	snprintf(path, sizeof(path), "%s/%s", GRAPH_KNOBS, knob);
	snprintf(buf, sizeof(buf), "%lld", val);
	return mcp_write_file(path, buf);
}

static long long knob_read(const char *knob)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/%s", GRAPH_KNOBS, knob);
	return mcp_read_ll(path);
}

/* ---- buffer objects ---- */

static int bo_create_on(int fd, __u64 len, int node, __u32 *handle)
{
	struct mcp_bo_create c = {
		.size = sizeof(c), .length = len,
		.flags = node >= 0 ? MCP_BO_NODE : 0, .node = node,
	};
	int ret = mcp_ioctl(fd, MCP_IOC_BO_CREATE, &c);

	if (!ret)
		*handle = c.handle;
	return ret;
}

static __u64 page_round(__u64 len)
{
	return (len + PAGE - 1) & ~(PAGE - 1);
}

/*
 * The BOs of one test, mapped: the workers find a job's tensors here by
 * handle.  Filled before the executions that use them are submitted.
 */
#define MAX_BOS 64

struct bos {
	int fd;
	int n;
	struct {
		__u32 handle;
		void *p;
		size_t len;
	} m[MAX_BOS];
};

/* A new mapped BO of len bytes (on node, or the caller's: -1); NULL. */
static void *bos_add(struct bos *b, __u64 len, int node, __u32 *handle)
{
	struct mcp_bo_info info;
	void *p;

	len = page_round(len);
	if (b->n == MAX_BOS || bo_create_on(b->fd, len, node, handle))
		return NULL;
	if (bo_info(b->fd, *handle, &info) || info.mmap_offset == MCP_BO_NO_MMAP)
		return NULL;
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, b->fd,
		 info.mmap_offset);
	if (p == MAP_FAILED)
		return NULL;
	b->m[b->n].handle = *handle;
	b->m[b->n].p = p;
	b->m[b->n].len = len;
	b->n++;
	return p;
}

static void *bos_ptr(const struct bos *b, __u32 handle, __u64 offset)
{
	for (int i = 0; i < b->n; i++)
		if (b->m[i].handle == handle && offset < b->m[i].len)
			return (char *)b->m[i].p + offset;
	return NULL;
}

static void bos_release(struct bos *b)
{
	for (int i = 0; i < b->n; i++) {
		munmap(b->m[i].p, b->m[i].len);
		bo_destroy(b->fd, b->m[i].handle);
	}
	b->n = 0;
}

/* ---- graph ioctls ---- */

static void create_arg(struct mcp_graph_create *c, const void *graph,
		       size_t len, const __u32 *handles, __u32 n)
{
	memset(c, 0, sizeof(*c));
	c->size = sizeof(*c);
	c->graph = (__u64)(uintptr_t)graph;
	c->graph_len = len;
	c->handles = (__u64)(uintptr_t)handles;
	c->n_handles = n;
}

static int graph_destroy(int fd, __u32 handle)
{
	struct mcp_graph_destroy d = { .size = sizeof(d), .handle = handle };

	return mcp_ioctl(fd, MCP_IOC_GRAPH_DESTROY, &d);
}

static void exec_arg(struct mcp_graph_exec *e, __u32 graph,
		     const struct mcp_graph_binding *bind, __u32 n_bind)
{
	memset(e, 0, sizeof(*e));
	e->size = sizeof(*e);
	e->graph = graph;
	e->bindings = (__u64)(uintptr_t)bind;
	e->n_bindings = n_bind;
	e->in_fence = -1;
	e->out_fence = -1;
}

/* Submits; the out-fence fd, or -errno. */
static int graph_exec(int fd, struct mcp_graph_exec *e)
{
	int ret = mcp_ioctl(fd, MCP_IOC_GRAPH_EXEC, e);

	return ret ? ret : e->out_fence;
}

/*
 * Creates the graph g with one BO per buffer (made and mapped into b);
 * bo[] receives the handles.  0 or -errno; c has the error fields.
 */
static int create_graph(struct bos *b, struct mcp_graph_case_graph *g,
			__u32 *bo, struct mcp_graph_create *c)
{
	static uint8_t bytes[MCP_GRAPH_CASE_MAX_BYTES];
	size_t len = mcp_graph_case_emit(g, bytes, sizeof(bytes));

	for (__u32 i = 0; i < g->n_buffers; i++)
		if (!bos_add(b, g->buffers[i].length, -1, &bo[i]))
			return -ENOMEM;
	create_arg(c, bytes, len, bo, g->n_buffers);
	return mcp_ioctl(b->fd, MCP_IOC_GRAPH_CREATE, c);
}

/* ---- compute workers ---- */

/*
 * A worker thread: registers on fd, serves WNOP and ADD (float adds on
 * the mapped BOs) until stopped or detached.  fail_node makes that node
 * fail with fail_errno; hold keeps one claimed job unreported.
 */
struct worker {
	int fd;
	int node;
	const struct bos *bos;
	int fail_node;
	int fail_errno;
	int hold;
	pthread_t thread;
	pid_t tid;
	atomic_int ready;	/* 1 registered, <0 -errno */
	atomic_int stop;
	atomic_int jobs;
	atomic_int detached;	/* read() returned 0 */
	atomic_int held;	/* a job is claimed and kept */
	atomic_int read_errors;	/* read() failures other than EAGAIN */
	int reg_node;
};

static __u64 tensor_elems(const struct mcp_worker_tensor *t)
{
	__u64 n = 1;

	for (int k = 0; k < t->rank; k++)
		n *= t->dims[k];
	return n;
}

static int worker_run(struct worker *w, const struct mcp_worker_job *job)
{
	const float *a, *b;
	float *out;
	__u64 n;

	if ((int)job->node == w->fail_node)
		return -w->fail_errno;
	switch (job->op) {
	case MCP_OP_WNOP:
		return 0;
	case MCP_OP_ADD:
		if (job->n_inputs != 2 || job->n_outputs != 1)
			return -EINVAL;
		a = bos_ptr(w->bos, job->inputs[0].handle, job->inputs[0].offset);
		b = bos_ptr(w->bos, job->inputs[1].handle, job->inputs[1].offset);
		out = bos_ptr(w->bos, job->outputs[0].handle, job->outputs[0].offset);
		if (!a || !b || !out)
			return -EFAULT;
		n = tensor_elems(&job->outputs[0]);
		for (__u64 i = 0; i < n; i++)
			out[i] = a[i] + b[i];
		return 0;
	default:
		return -EOPNOTSUPP;
	}
}

static int job_done(int wfd, __u64 job_id, int result)
{
	struct mcp_job_done d = {
		.size = sizeof(d), .job_id = job_id, .result = result,
	};

	return mcp_ioctl(wfd, MCP_IOC_JOB_DONE, &d);
}

static int worker_register(int fd, int node, int *reg_node)
{
	struct mcp_worker_register r = {
		.size = sizeof(r), .node = node, .fd = -1,
	};
	int ret = mcp_ioctl(fd, MCP_IOC_WORKER_REGISTER, &r);

	if (ret)
		return ret;
	if (reg_node)
		*reg_node = r.node;
	return r.fd;
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	struct mcp_worker_job job;
	int wfd;

	w->tid = syscall(SYS_gettid);
	wfd = worker_register(w->fd, w->node, &w->reg_node);
	if (wfd < 0) {
		atomic_store(&w->ready, wfd);
		return NULL;
	}
	/*
	 * Non-blocking: another worker of the node may claim the job poll()
	 * announced, and a blocked read() would never see the stop flag.
	 */
	fcntl(wfd, F_SETFL, O_NONBLOCK);
	atomic_store(&w->ready, 1);
	while (!atomic_load(&w->stop)) {
		struct pollfd p = { .fd = wfd, .events = POLLIN };
		ssize_t n;

		if (poll(&p, 1, 20) <= 0 || !(p.revents & (POLLIN | POLLHUP)))
			continue;
		n = read(wfd, &job, sizeof(job));
		if (n < 0 && errno != EAGAIN && errno != EINTR)
			atomic_fetch_add(&w->read_errors, 1);
		if (n == 0) {
			atomic_store(&w->detached, 1);
			break;
		}
		if (n != sizeof(job))
			continue;
		if (w->hold) {
			atomic_store(&w->held, 1);
			while (!atomic_load(&w->stop))
				usleep(1000);
			break;
		}
		job_done(wfd, job.job_id, worker_run(w, &job));
		atomic_fetch_add(&w->jobs, 1);
	}
	close(wfd);
	return NULL;
}

/* Starts w (fd, bos, node set by the caller); 0 once it is registered. */
static int worker_start(struct worker *w)
{
	atomic_store(&w->ready, 0);
	atomic_store(&w->stop, 0);
	if (pthread_create(&w->thread, NULL, worker_main, w))
		return -EAGAIN;
	for (int i = 0; i < 1000 && !atomic_load(&w->ready); i++)
		usleep(5000);
	if (atomic_load(&w->ready) != 1) {
		atomic_store(&w->stop, 1);
		pthread_join(w->thread, NULL);
		return atomic_load(&w->ready) ? atomic_load(&w->ready) : -ETIMEDOUT;
	}
	return 0;
}

static void worker_stop(struct worker *w)
{
	atomic_store(&w->stop, 1);
	pthread_join(w->thread, NULL);
}

static void worker_init(struct worker *w, int fd, const struct bos *b, int node)
{
	memset(w, 0, sizeof(*w));
	w->fd = fd;
	w->bos = b;
	w->node = node;
	w->fail_node = -1;
}

/*
 * A child process that registers on the inherited fd, claims one job,
 * writes the job's node index to the pipe and waits to be killed.
 */
static pid_t claim_child(int fd, int *pipe_rd)
{
	int p[2];
	pid_t pid;

	if (pipe(p))
		return -1;
	pid = fork();
	if (pid == 0) {
		struct mcp_worker_job job;
		int wfd = worker_register(fd, -1, NULL);
		__u32 node;

		close(p[0]);
		if (wfd < 0 || read(wfd, &job, sizeof(job)) != sizeof(job))
			_exit(1);
		node = job.node;
		if (write(p[1], &node, sizeof(node)) != sizeof(node))
			_exit(1);
		for (;;)
			pause();
	}
	close(p[1]);
	*pipe_rd = p[0];
	return pid;
}

/* The node index the child claimed, or -1 after ms without one. */
static int claim_wait(int pipe_rd, int ms)
{
	struct pollfd p = { .fd = pipe_rd, .events = POLLIN };
	__u32 node;

	if (poll(&p, 1, ms) != 1 || read(pipe_rd, &node, sizeof(node)) != sizeof(node))
		return -1;
	return (int)node;
}

static void kill_child(pid_t pid, int pipe_rd)
{
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	close(pipe_rd);
}

/* ---- references ---- */

static float f32_of(uint32_t bits)
{
	float f;

	memcpy(&f, &bits, sizeof(f));
	return f;
}

static uint32_t bits32(float f)
{
	uint32_t b;

	memcpy(&b, &f, sizeof(b));
	return b;
}

/* q = clamp(round_half_even(x / scale) + zp): rint() of the double quotient
 * rounds as the exact quotient (tests/unit/test_graph_ops.c says why). */
static int8_t ref_quant(float x, float scale, int zp)
{
	double q;

	if (isnan(x))
		return (int8_t)zp;
	q = rint((double)x / (double)scale) + zp;
	return q < -128 ? -128 : q > 127 ? 127 : (int8_t)q;
}

static float ref_dequant(int8_t q, float scale, int zp)
{
	return (float)(q - zp) * scale;
}

/* Inputs with ties, saturation, zeros and NaN among random values. */
static void fill_input(float *x, size_t n, unsigned int seed)
{
	srand(seed);
	for (size_t i = 0; i < n; i++) {
		switch (i % 8) {
		case 0:
			x[i] = ((int)(rand() % 41) - 20 + 0.5f) * 0.0625f;
			break;
		case 1:
			x[i] = (float)(rand() % 4000) - 2000.0f;
			break;
		case 2:
			x[i] = i % 16 == 2 ? -0.0f : NAN;
			break;
		default:
			x[i] = ((float)rand() / (float)RAND_MAX - 0.5f) * 20.0f;
		}
	}
}

/* ---- the graphs that run ---- */

#define KQ_SCALE	0.0625f
#define KQ_ZP		3

/*
 * Kernel operators only, a diamond: in F32 NHWC [1][32][2][8] (buffer 0);
 * node 0 COPY in -> a (buffer 1), node 1 TILE16 a -> tiled (buffer 2),
 * node 2 QUANT a -> q, node 3 DEQUANT q -> dq (buffer 2), node 4 NOP
 * joining tiled and dq.  Edges 0->1, 0->2, 2->3, 1->4, 3->4.
 */
#define KD_H	32
#define KD_S	2
#define KD_D	8
#define KD_N	(KD_H * KD_S * KD_D)

static void build_kernel_diamond(struct mcp_graph_case_graph *g)
{
	mcp_graph_case_init(g);
	mcp_graph_case_buffer(g, 4096, MCP_GRAPH_BUF_INPUT);
	mcp_graph_case_buffer(g, 4096, 0);
	mcp_graph_case_buffer(g, 8192, MCP_GRAPH_BUF_OUTPUT);
	mcp_graph_case_tensor(g, 0, MCP_DTYPE_F32, 0, 4, 1, KD_H, KD_S, KD_D);
	g->tensors[0].layout = MCP_LAYOUT_NHWC;
	mcp_graph_case_tensor(g, 1, MCP_DTYPE_F32, 0, 4, 1, KD_H, KD_S, KD_D);
	g->tensors[1].layout = MCP_LAYOUT_NHWC;
	mcp_graph_case_tensor(g, 1, MCP_DTYPE_F32, 0, 1, KD_N);		/* 2 a */
	mcp_graph_case_tensor(g, 1, MCP_DTYPE_I8, 2048, 1, KD_N);	/* 3 q */
	mcp_graph_case_tensor(g, 2, MCP_DTYPE_F32, 0, 1, KD_N);		/* 4 dq */
	mcp_graph_case_tensor(g, 2, MCP_DTYPE_F32, 4096, 5,
			      1, KD_H / 16, KD_S, KD_D, 16);		/* 5 tiled */
	g->tensors[5].layout = MCP_LAYOUT_TILED16;
	/* 6: the tiles seen as DENSE, for the NOP (only TILE16 takes others) */
	mcp_graph_case_tensor(g, 2, MCP_DTYPE_F32, 4096, 5,
			      1, KD_H / 16, KD_S, KD_D, 16);
	mcp_graph_case_node(g, MCP_OP_COPY, MCP_GRAPH_ENGINE_CPU, 1, 1, 0, 1);
	mcp_graph_case_node(g, MCP_OP_TILE16, MCP_GRAPH_ENGINE_CPU, 1, 1, 1, 5);
	mcp_graph_case_node(g, MCP_OP_QUANT_I8, MCP_GRAPH_ENGINE_CPU, 1, 1, 2, 3);
	mcp_graph_case_quant(g, 2, KQ_SCALE, KQ_ZP);
	mcp_graph_case_node(g, MCP_OP_DEQUANT_I8, MCP_GRAPH_ENGINE_CPU, 1, 1, 3, 4);
	mcp_graph_case_quant(g, 3, KQ_SCALE, KQ_ZP);
	mcp_graph_case_node(g, MCP_OP_NOP, MCP_GRAPH_ENGINE_CPU, 2, 0, 4, 6);
}

static const int kd_edges[][2] = { { 0, 1 }, { 0, 2 }, { 2, 3 }, { 1, 4 }, { 3, 4 } };

/* Index of the first wrong output element (dq then tiled), or -1. */
static long check_kernel_diamond(const float *in, const void *work, const float *out)
{
	const int8_t *q = (const int8_t *)((const char *)work + 2048);
	const float *tiled = (const float *)((const char *)out + 4096);

	for (long i = 0; i < KD_N; i++) {
		int8_t want_q = ref_quant(in[i], KQ_SCALE, KQ_ZP);

		if (q[i] != want_q ||
		    bits32(out[i]) != bits32(ref_dequant(want_q, KQ_SCALE, KQ_ZP)))
			return i;
	}
	for (long h = 0; h < KD_H; h++)
		for (long s = 0; s < KD_S; s++)
			for (long d = 0; d < KD_D; d++) {
				long src = (h * KD_S + s) * KD_D + d;
				long dst = (((h / 16) * KD_S + s) * KD_D + d) * 16 + h % 16;

				if (bits32(tiled[dst]) != bits32(in[src]))
					return KD_N + dst;
			}
	return -1;
}

/*
 * With a worker: in F32 [256] (buffer 0); node 0 COPY in -> a, node 1
 * QUANT a -> q, node 2 DEQUANT q -> dq (buffer 1), node 3 ADD (a, dq) ->
 * out (buffer 2) on a worker, node 4 WNOP reading out.
 */
#define WD_N	256

static void build_worker_diamond(struct mcp_graph_case_graph *g)
{
	mcp_graph_case_init(g);
	mcp_graph_case_buffer(g, 4096, MCP_GRAPH_BUF_INPUT);
	mcp_graph_case_buffer(g, 4096, 0);
	mcp_graph_case_buffer(g, 4096, MCP_GRAPH_BUF_OUTPUT);
	mcp_graph_case_tensor(g, 0, MCP_DTYPE_F32, 0, 1, WD_N);	/* 0 in */
	mcp_graph_case_tensor(g, 1, MCP_DTYPE_F32, 0, 1, WD_N);	/* 1 a */
	mcp_graph_case_tensor(g, 1, MCP_DTYPE_I8, 1024, 1, WD_N);	/* 2 q */
	mcp_graph_case_tensor(g, 1, MCP_DTYPE_F32, 2048, 1, WD_N);	/* 3 dq */
	mcp_graph_case_tensor(g, 2, MCP_DTYPE_F32, 0, 1, WD_N);	/* 4 out */
	mcp_graph_case_node(g, MCP_OP_COPY, MCP_GRAPH_ENGINE_CPU, 1, 1, 0, 1);
	mcp_graph_case_node(g, MCP_OP_QUANT_I8, MCP_GRAPH_ENGINE_CPU, 1, 1, 1, 2);
	mcp_graph_case_quant(g, 1, KQ_SCALE, KQ_ZP);
	mcp_graph_case_node(g, MCP_OP_DEQUANT_I8, MCP_GRAPH_ENGINE_CPU, 1, 1, 2, 3);
	mcp_graph_case_quant(g, 2, KQ_SCALE, KQ_ZP);
	mcp_graph_case_node(g, MCP_OP_ADD, MCP_GRAPH_ENGINE_WORKER, 2, 1, 1, 3, 4);
	mcp_graph_case_node(g, MCP_OP_WNOP, MCP_GRAPH_ENGINE_WORKER, 1, 0, 4);
}

static long check_worker_diamond(const float *in, const float *out)
{
	for (long i = 0; i < WD_N; i++) {
		float dq = ref_dequant(ref_quant(in[i], KQ_SCALE, KQ_ZP),
				       KQ_SCALE, KQ_ZP);
		float want = in[i] + dq;

		if (bits32(out[i]) != bits32(want) && !(isnan(want) && isnan(out[i])))
			return i;
	}
	return -1;
}

/* One WNOP node on a 4 KiB buffer. */
static void build_wnop(struct mcp_graph_case_graph *g)
{
	mcp_graph_case_init(g);
	mcp_graph_case_buffer(g, 4096, 0);
	mcp_graph_case_tensor(g, 0, MCP_DTYPE_F32, 0, 1, 16);
	mcp_graph_case_node(g, MCP_OP_WNOP, MCP_GRAPH_ENGINE_WORKER, 1, 0, 0);
}

/* Bindings of buffers 0..n-1 to handles[]. */
static void bind_all(struct mcp_graph_binding *bind, const __u32 *handles, int n)
{
	for (int i = 0; i < n; i++) {
		bind[i].buffer = i;
		bind[i].handle = handles[i];
	}
}

/* ---- fixture ---- */

FIXTURE(graph) {
	int fd;
	struct bos bos;
	long long start[ARRAY_SIZE(graph_counters)];
	long long max_nodes;
	long long history;
};

FIXTURE_SETUP(graph)
{
	ASSERT_EQ(0, mcp_ensure_loaded());
	self->fd = mcp_open();
	ASSERT_LE(0, self->fd) TH_LOG("open %s: %s", MCP_DEV_PATH, strerror(errno));
	ASSERT_TRUE(has_graphs(self->fd)) TH_LOG("MCP_FEAT_GRAPHS not reported");
	memset(&self->bos, 0, sizeof(self->bos));
	self->bos.fd = self->fd;
	self->max_nodes = knob_read("max_nodes");
	self->history = knob_read("exec_history_len");
	for (size_t i = 0; i < ARRAY_SIZE(graph_counters); i++)
		self->start[i] = mcp_counter(graph_counters[i]);
}

/* Everything a test made is gone once its fds are. */
FIXTURE_TEARDOWN(graph)
{
	if (self->max_nodes > 0)
		knob_write("max_nodes", self->max_nodes);
	if (self->history > 0)
		knob_write("exec_history_len", self->history);
	bos_release(&self->bos);
	if (self->fd >= 0)
		close(self->fd);
	for (size_t i = 0; i < ARRAY_SIZE(graph_counters); i++) {
		EXPECT_EQ(self->start[i],
			  mcp_counter_settles(graph_counters[i], self->start[i]))
			TH_LOG("debugfs counter %s", graph_counters[i]);
	}
}

/*
 * Every case of the shared table through GRAPH_CREATE, as built or (with
 * @compact) re-encoded in format version 2 where that says the same:
 * refused with its (reason, kind, index).  The count of cases sent.
 */
static unsigned int run_table(struct __test_metadata *_metadata, int fd,
			      int compact)
{
	static uint8_t bytes[MCP_GRAPH_CASE_MAX_BYTES];
	struct mcp_version v = { .size = sizeof(v) };
	struct mcp_graph_case_graph g;
	unsigned int valid = 0, refused = 0;
	int opaque;

	ASSERT_EQ(0, mcp_ioctl(fd, MCP_IOC_GET_VERSION, &v));
	opaque = !!(v.features & MCP_FEAT_WORKER_OPS);
	for (size_t i = 0; i < MCP_GRAPH_N_CASES; i++) {
		const struct mcp_graph_case *c = &mcp_graph_cases[i];
		/* Worker operator rules are libmcp's with MCP_FEAT_WORKER_OPS. */
		__u32 reason = opaque && (c->flags & MCP_GRAPH_CASE_WORKER_RULE) ?
			       MCP_GRAPH_OK : c->reason;
		size_t len;
		struct mcp_graph_create arg;
		__u32 bo[MCP_GRAPH_CASE_MAX_BUFFERS];
		int ret;

		if (compact) {
			len = mcp_graph_case_build_compact(c, &g, bytes,
							   sizeof(bytes));
			if (!len)
				continue;
		} else {
			len = mcp_graph_case_build(c, &g, bytes, sizeof(bytes));
			ASSERT_NE(0, len) TH_LOG("%s: does not fit", c->name);
		}
		for (__u32 k = 0; k < g.n_buffers; k++) {
			__u64 blen = g.buffers[k].length ? g.buffers[k].length : 1;

			if ((c->flags & MCP_GRAPH_CASE_SHORT_BO) && k == c->index)
				blen = page_round(blen) / 2;
			ASSERT_EQ(0, bo_create_on(fd, blen, -1, &bo[k]))
				TH_LOG("%s: BO %u", c->name, k);
		}
		create_arg(&arg, bytes, len, bo, g.n_buffers);
		arg.error_reason = arg.error_kind = arg.error_index = 0xdead;
		ret = mcp_ioctl(fd, MCP_IOC_GRAPH_CREATE, &arg);
		if (reason == MCP_GRAPH_OK) {
			EXPECT_EQ(0, ret) TH_LOG("%s%s: %s (reason %u kind %u index %u)",
						 c->name, compact ? " (v2)" : "",
						 strerror(-ret), arg.error_reason,
						 arg.error_kind, arg.error_index);
			if (!ret) {
				EXPECT_NE(0, arg.handle) TH_LOG("%s", c->name);
				EXPECT_EQ(0, arg.error_reason) TH_LOG("%s", c->name);
				EXPECT_EQ(0, graph_destroy(fd, arg.handle));
				EXPECT_EQ(-ENOENT, graph_destroy(fd, arg.handle));
				valid++;
			}
		} else {
			EXPECT_EQ(-EINVAL, ret) TH_LOG("%s: %s", c->name, strerror(-ret));
			EXPECT_EQ(reason, arg.error_reason) TH_LOG("%s", c->name);
			EXPECT_EQ(c->kind, arg.error_kind) TH_LOG("%s", c->name);
			EXPECT_EQ(c->index, arg.error_index) TH_LOG("%s", c->name);
			EXPECT_EQ(0, arg.handle) TH_LOG("%s", c->name);
			if (!ret)
				graph_destroy(fd, arg.handle);
			else
				refused++;
		}
		for (__u32 k = 0; k < g.n_buffers; k++)
			bo_destroy(fd, bo[k]);
	}
	TH_LOG("format version %d: %u valid graphs created, %u refused as expected, of %zu cases",
	       compact ? 2 : 1, valid, refused, MCP_GRAPH_N_CASES);
	return valid + refused;
}

TEST_F_TIMEOUT(graph, malformed_table, 120)
{
	run_table(_metadata, self->fd, 0);
}

/* The same cases in format version 2: the same verdicts. */
TEST_F_TIMEOUT(graph, malformed_table_compact, 120)
{
	struct mcp_version v = { .size = sizeof(v) };

	ASSERT_EQ(0, mcp_ioctl(self->fd, MCP_IOC_GET_VERSION, &v));
	ASSERT_TRUE(v.features & MCP_FEAT_GRAPH_COMPACT)
		TH_LOG("MCP_FEAT_GRAPH_COMPACT not reported");
	EXPECT_LE(100, run_table(_metadata, self->fd, 1));
}

/*
 * Counts that the bytes given cannot hold (at least 6, 8 and 9 bytes per
 * buffer, tensor and node) are refused by the header check, which runs
 * before anything is allocated: 65536 tensors and nodes claimed by a
 * 120-byte graph.  What userspace can observe: the HEADER verdict (for a
 * header that does not change under it, only mcp_graph_check_header()
 * gives it, before mcp_graph_alloc()), a thousand times, and no graph
 * object counted; the allocation itself is not observed.
 */
TEST_F_TIMEOUT(graph, compact_huge_counts_refused_early, 60)
{
	static uint8_t bytes[MCP_GRAPH_CASE_MAX_BYTES];
	struct mcp_graph_case_graph g;
	struct mcp_graph_create arg;
	long long tensors = knob_read("max_tensors");
	__u32 bo;
	size_t len;

	ASSERT_LT(0, tensors);
	ASSERT_EQ(0, knob_write("max_tensors", 65536));
	ASSERT_EQ(0, knob_write("max_nodes", 65536));
	mcp_graph_case_init(&g);
	mcp_graph_case_counts(&g);
	g.compact = 1;
	g.hdr.n_tensors = 65536;
	g.hdr.n_nodes = 65536;
	len = mcp_graph_case_emit_compact(&g, bytes, sizeof(bytes));
	ASSERT_EQ(sizeof(struct mcp_graph_header) + 72, len);
	ASSERT_EQ(0, bo_create_on(self->fd, 4096, -1, &bo));
	for (int k = 0; k < 1000; k++) {
		create_arg(&arg, bytes, len, &bo, 1);
		ASSERT_EQ(-EINVAL, mcp_ioctl(self->fd, MCP_IOC_GRAPH_CREATE, &arg));
		ASSERT_EQ(MCP_GRAPH_ERR_HEADER, arg.error_reason);
		ASSERT_EQ(MCP_GRAPH_AT_HEADER, arg.error_kind);
	}
	EXPECT_EQ(self->start[0], mcp_counter("graph_objects"));
	EXPECT_EQ(0, bo_destroy(self->fd, bo));
	knob_write("max_tensors", tensors);
}

/* Sizes, flags, reserved fields, pointers and handles of GRAPH_CREATE. */
TEST_F(graph, create_bad_arguments)
{
	static uint8_t bytes[MCP_GRAPH_CASE_MAX_BYTES];
	struct mcp_graph_case_graph g;
	struct mcp_graph_create c;
	__u32 bo[1], two[2];
	char *page;
	size_t len;

	mcp_graph_case_init(&g);
	mcp_gc_valid_base(&g);
	len = mcp_graph_case_emit(&g, bytes, sizeof(bytes));
	ASSERT_NE(NULL, bos_add(&self->bos, 4096, -1, &bo[0]));

	create_arg(&c, bytes, len, bo, 1);
	c.size = MCP_GRAPH_CREATE_SIZE_VER0 - 4;
	EXPECT_EQ(-EINVAL, mcp_ioctl(self->fd, MCP_IOC_GRAPH_CREATE, &c));
	c.size = MCP_ARG_SIZE_MAX + 8;
	EXPECT_EQ(-E2BIG, mcp_ioctl(self->fd, MCP_IOC_GRAPH_CREATE, &c));
	create_arg(&c, bytes, len, bo, 1);
	c.flags = 1;
	EXPECT_EQ(-EINVAL, mcp_ioctl(self->fd, MCP_IOC_GRAPH_CREATE, &c));
	create_arg(&c, bytes, len, bo, 1);
	c.reserved = 1;
	EXPECT_EQ(-EINVAL, mcp_ioctl(self->fd, MCP_IOC_GRAPH_CREATE, &c));

	create_arg(&c, mcp_unmapped_addr(), len, bo, 1);
	EXPECT_EQ(-EFAULT, mcp_ioctl(self->fd, MCP_IOC_GRAPH_CREATE, &c));
	create_arg(&c, NULL, len, bo, 1);
	EXPECT_EQ(-EFAULT, mcp_ioctl(self->fd, MCP_IOC_GRAPH_CREATE, &c));
	create_arg(&c, bytes, len, mcp_unmapped_addr(), 1);
	EXPECT_EQ(-EFAULT, mcp_ioctl(self->fd, MCP_IOC_GRAPH_CREATE, &c));
	/* The graph runs past the end of the caller's memory. */
	page = mcp_guarded_page();
	ASSERT_NE(NULL, page);
	memcpy(page + PAGE - 64, bytes, 64);
	create_arg(&c, page + PAGE - 64, len, bo, 1);
	EXPECT_EQ(-EFAULT, mcp_ioctl(self->fd, MCP_IOC_GRAPH_CREATE, &c));
	munmap(page, 2 * PAGE);

	/* n_handles must equal n_buffers: HEADER. */
	two[0] = two[1] = bo[0];
	create_arg(&c, bytes, len, two, 2);
	EXPECT_EQ(-EINVAL, mcp_ioctl(self->fd, MCP_IOC_GRAPH_CREATE, &c));
	EXPECT_EQ(MCP_GRAPH_ERR_HEADER, c.error_reason);
	EXPECT_EQ(MCP_GRAPH_AT_HEADER, c.error_kind);
	create_arg(&c, bytes, len, bo, 0);
	EXPECT_EQ(-EINVAL, mcp_ioctl(self->fd, MCP_IOC_GRAPH_CREATE, &c));
	EXPECT_EQ(MCP_GRAPH_ERR_HEADER, c.error_reason);

	/* A huge graph_len is refused from the header, nothing allocated. */
	create_arg(&c, bytes, len, bo, 1);
	c.graph_len = 1ULL << 40;
	EXPECT_EQ(-EINVAL, mcp_ioctl(self->fd, MCP_IOC_GRAPH_CREATE, &c));
	EXPECT_EQ(MCP_GRAPH_ERR_HEADER, c.error_reason);

	/* Unknown BO handles: -ENOENT, no reason. */
	two[0] = bo[0] + 1000;
	create_arg(&c, bytes, len, two, 1);
	EXPECT_EQ(-ENOENT, mcp_ioctl(self->fd, MCP_IOC_GRAPH_CREATE, &c));
	two[0] = 0;
	EXPECT_EQ(-ENOENT, mcp_ioctl(self->fd, MCP_IOC_GRAPH_CREATE, &c));

	/* And the same arguments, right, work. */
	create_arg(&c, bytes, len, bo, 1);
	ASSERT_EQ(0, mcp_ioctl(self->fd, MCP_IOC_GRAPH_CREATE, &c));
	EXPECT_EQ(0, graph_destroy(self->fd, c.handle));
}

/* A BO of another fd is unknown here; a graph of another fd too. */
TEST_F(graph, handles_are_per_fd)
{
	static uint8_t bytes[MCP_GRAPH_CASE_MAX_BYTES];
	struct mcp_graph_case_graph g;
	struct mcp_graph_create c;
	struct mcp_graph_exec e;
	int fd2 = mcp_open();
	__u32 bo, bo2;
	size_t len;

	ASSERT_LE(0, fd2);
	mcp_graph_case_init(&g);
	mcp_gc_valid_base(&g);
	len = mcp_graph_case_emit(&g, bytes, sizeof(bytes));
	ASSERT_EQ(0, bo_create_on(fd2, 4096, -1, &bo2));
	ASSERT_NE(NULL, bos_add(&self->bos, 4096, -1, &bo));
	create_arg(&c, bytes, len, &bo2, 1);
	if (bo2 != bo)
		EXPECT_EQ(-ENOENT, mcp_ioctl(self->fd, MCP_IOC_GRAPH_CREATE, &c));
	ASSERT_EQ(0, mcp_ioctl(fd2, MCP_IOC_GRAPH_CREATE, &c));
	exec_arg(&e, c.handle, NULL, 0);
	EXPECT_EQ(-ENOENT, graph_exec(self->fd, &e));
	EXPECT_EQ(-ENOENT, graph_destroy(self->fd, c.handle));
	EXPECT_EQ(0, graph_destroy(fd2, c.handle));
	close(fd2);
}

/* Graphs die with their fd: the counter goes back. */
TEST_F(graph, graphs_die_with_fd)
{
	static uint8_t bytes[MCP_GRAPH_CASE_MAX_BYTES];
	struct mcp_graph_case_graph g;
	struct mcp_graph_create c;
	long long before = mcp_counter("graph_objects");
	int fd2 = mcp_open();
	__u32 bo;
	size_t len;

	ASSERT_LE(0, fd2);
	mcp_graph_case_init(&g);
	mcp_gc_valid_base(&g);
	len = mcp_graph_case_emit(&g, bytes, sizeof(bytes));
	ASSERT_EQ(0, bo_create_on(fd2, 4096, -1, &bo));
	for (int i = 0; i < 10; i++) {
		create_arg(&c, bytes, len, &bo, 1);
		ASSERT_EQ(0, mcp_ioctl(fd2, MCP_IOC_GRAPH_CREATE, &c));
	}
	/* The graphs hold the BO: destroying the handle does not free it. */
	EXPECT_EQ(0, bo_destroy(fd2, bo));
	EXPECT_EQ(before + 10, mcp_counter("graph_objects"));
	close(fd2);
	EXPECT_EQ(before, mcp_counter_settles("graph_objects", before));
}

/* max_nodes: over it is LIMIT; the knobs refuse values over their caps. */
TEST_F(graph, knob_limits)
{
	static uint8_t bytes[MCP_GRAPH_CASE_MAX_BYTES];
	struct mcp_graph_case_graph g;
	struct mcp_graph_create c;
	__u32 bo[1];
	size_t len;

	ASSERT_LT(0, self->max_nodes);
	mcp_graph_case_init(&g);
	mcp_gc_valid_base(&g);	/* two nodes */
	len = mcp_graph_case_emit(&g, bytes, sizeof(bytes));
	ASSERT_NE(NULL, bos_add(&self->bos, 4096, -1, &bo[0]));

	ASSERT_EQ(0, knob_write("max_nodes", 1));
	EXPECT_EQ(1, knob_read("max_nodes"));
	create_arg(&c, bytes, len, bo, 1);
	EXPECT_EQ(-EINVAL, mcp_ioctl(self->fd, MCP_IOC_GRAPH_CREATE, &c));
	EXPECT_EQ(MCP_GRAPH_ERR_LIMIT, c.error_reason);
	EXPECT_EQ(MCP_GRAPH_AT_HEADER, c.error_kind);
	ASSERT_EQ(0, knob_write("max_nodes", 2));
	create_arg(&c, bytes, len, bo, 1);
	ASSERT_EQ(0, mcp_ioctl(self->fd, MCP_IOC_GRAPH_CREATE, &c));
	EXPECT_EQ(0, graph_destroy(self->fd, c.handle));

	EXPECT_EQ(-EINVAL, knob_write("max_nodes", 65537));
	EXPECT_EQ(-EINVAL, knob_write("max_nodes", 0));
	EXPECT_EQ(-EINVAL, knob_write("max_tensors", 65537));
	EXPECT_EQ(-EINVAL, knob_write("max_blob", (16LL << 20) + 1));
	EXPECT_EQ(2, knob_read("max_nodes"));
	ASSERT_EQ(0, knob_write("max_nodes", self->max_nodes));
}

/* Bad arguments of GRAPH_EXEC, GRAPH_STATUS and GRAPH_DESTROY. */
TEST_F(graph, exec_status_destroy_bad_arguments)
{
	struct mcp_graph_case_graph g;
	struct mcp_graph_create c;
	struct mcp_graph_exec e;
	struct mcp_graph_status st;
	struct mcp_graph_destroy d;
	struct mcp_graph_binding bind[4];
	struct mcp_graph_node_status ns[5];
	__u32 bo[3], small;
	int fence;

	build_kernel_diamond(&g);
	ASSERT_EQ(0, create_graph(&self->bos, &g, bo, &c));
	ASSERT_NE(NULL, bos_add(&self->bos, 4096, -1, &small));

	exec_arg(&e, c.handle + 1, NULL, 0);
	EXPECT_EQ(-ENOENT, graph_exec(self->fd, &e));
	exec_arg(&e, c.handle, NULL, 0);
	e.flags = 2;
	EXPECT_EQ(-EINVAL, graph_exec(self->fd, &e));
	exec_arg(&e, c.handle, NULL, 0);
	e.reserved = 1;
	EXPECT_EQ(-EINVAL, graph_exec(self->fd, &e));
	exec_arg(&e, c.handle, NULL, 0);
	e.size = MCP_GRAPH_EXEC_SIZE_VER0 - 8;
	EXPECT_EQ(-EINVAL, graph_exec(self->fd, &e));
	exec_arg(&e, c.handle, mcp_unmapped_addr(), 1);
	EXPECT_EQ(-EFAULT, graph_exec(self->fd, &e));
	/* Buffer index out of range, twice the same index, too many. */
	bind[0].buffer = 3;
	bind[0].handle = bo[0];
	exec_arg(&e, c.handle, bind, 1);
	EXPECT_EQ(-EINVAL, graph_exec(self->fd, &e));
	bind_all(bind, bo, 3);
	bind[1].buffer = 0;
	exec_arg(&e, c.handle, bind, 2);
	EXPECT_EQ(-EINVAL, graph_exec(self->fd, &e));
	bind_all(bind, bo, 3);
	bind[3] = bind[2];
	exec_arg(&e, c.handle, bind, 4);
	EXPECT_EQ(-EINVAL, graph_exec(self->fd, &e));
	/* Unknown BO, BO shorter than the buffer (8 KiB). */
	bind[0].buffer = 2;
	bind[0].handle = 0;
	exec_arg(&e, c.handle, bind, 1);
	EXPECT_EQ(-ENOENT, graph_exec(self->fd, &e));
	bind[0].handle = small;
	exec_arg(&e, c.handle, bind, 1);
	EXPECT_EQ(-EINVAL, graph_exec(self->fd, &e));
	/* An in-fence that is not a fence. */
	exec_arg(&e, c.handle, NULL, 0);
	e.flags = MCP_GRAPH_EXEC_IN_FENCE;
	e.in_fence = -1;
	fence = graph_exec(self->fd, &e);
	EXPECT_TRUE(fence == -EBADF || fence == -EINVAL) TH_LOG("%d", fence);
	e.in_fence = self->fd;
	fence = graph_exec(self->fd, &e);
	EXPECT_TRUE(fence == -EBADF || fence == -EINVAL) TH_LOG("%d", fence);

	/* A good one, then STATUS's arguments. */
	exec_arg(&e, c.handle, NULL, 0);
	fence = graph_exec(self->fd, &e);
	ASSERT_LE(0, fence);
	EXPECT_EQ(1, fence_finish(fence, 10000));
	EXPECT_EQ(-ENOENT, graph_status(self->fd, e.exec_id + 1000, NULL, 0, &st));
	EXPECT_EQ(-ENOENT, graph_status(self->fd, 0, NULL, 0, &st));
	EXPECT_EQ(-EFAULT, graph_status(self->fd, e.exec_id, mcp_unmapped_addr(),
					5, &st));
	graph_status(self->fd, e.exec_id, ns, 5, &st);
	st.flags = 1;
	EXPECT_EQ(-EINVAL, mcp_ioctl(self->fd, MCP_IOC_GRAPH_STATUS, &st));
	graph_status(self->fd, e.exec_id, ns, 5, &st);
	st.reserved = 1;
	EXPECT_EQ(-EINVAL, mcp_ioctl(self->fd, MCP_IOC_GRAPH_STATUS, &st));
	/* Fewer entries than nodes: n_nodes says how many there are. */
	memset(ns, 0xff, sizeof(ns));
	ASSERT_EQ(0, graph_status(self->fd, e.exec_id, ns, 2, &st));
	EXPECT_EQ(5, st.n_nodes);
	EXPECT_EQ(-1, ns[2].result) TH_LOG("entry 2 written");
	ASSERT_EQ(0, graph_status(self->fd, e.exec_id, NULL, 0, &st));
	EXPECT_EQ(5, st.n_nodes);
	EXPECT_EQ(MCP_GRAPH_STATE_DONE, st.state);

	d = (struct mcp_graph_destroy){ .size = sizeof(d), .handle = c.handle, .flags = 1 };
	EXPECT_EQ(-EINVAL, mcp_ioctl(self->fd, MCP_IOC_GRAPH_DESTROY, &d));
	d = (struct mcp_graph_destroy){ .size = sizeof(d), .handle = c.handle, .reserved = 1 };
	EXPECT_EQ(-EINVAL, mcp_ioctl(self->fd, MCP_IOC_GRAPH_DESTROY, &d));
	EXPECT_EQ(-ENOENT, graph_destroy(self->fd, 0));
	EXPECT_EQ(0, graph_destroy(self->fd, c.handle));
	/* STATUS outlives the graph; EXEC does not. */
	ASSERT_EQ(0, graph_status(self->fd, e.exec_id, NULL, 0, &st));
	EXPECT_EQ(c.handle, st.graph);
	exec_arg(&e, c.handle, NULL, 0);
	EXPECT_EQ(-ENOENT, graph_exec(self->fd, &e));
}

/* Checks one finished execution of the kernel diamond through STATUS. */
static void check_kd_status(struct __test_metadata *_metadata, int fd, __u64 exec_id)
{
	struct mcp_graph_node_status ns[5];
	struct mcp_graph_status st;

	ASSERT_EQ(0, graph_status(fd, exec_id, ns, 5, &st));
	EXPECT_EQ(MCP_GRAPH_STATE_DONE, st.state);
	EXPECT_EQ(0, st.result);
	EXPECT_EQ(-1, st.failed_node);
	EXPECT_EQ(5, st.n_nodes);
	EXPECT_LT(0, st.submit_ns);
	EXPECT_LE(st.submit_ns, st.end_ns);
	for (int i = 0; i < 5; i++) {
		EXPECT_EQ(MCP_GRAPH_ENGINE_CPU, ns[i].engine) TH_LOG("node %d", i);
		EXPECT_LE(0, ns[i].numa_node) TH_LOG("node %d", i);
		EXPECT_EQ(0, ns[i].result) TH_LOG("node %d", i);
		EXPECT_LE(st.submit_ns, ns[i].start_ns) TH_LOG("node %d", i);
		EXPECT_LE(ns[i].start_ns, ns[i].end_ns) TH_LOG("node %d", i);
		EXPECT_LE(ns[i].end_ns, st.end_ns) TH_LOG("node %d", i);
	}
	for (size_t k = 0; k < ARRAY_SIZE(kd_edges); k++) {
		int a = kd_edges[k][0], b = kd_edges[k][1];

		EXPECT_LE(ns[a].end_ns, ns[b].start_ns)
			TH_LOG("node %d ended after node %d started", a, b);
	}
}

/* COPY, TILE16, QUANT_I8, DEQUANT_I8 on the cpu engine, against plain C. */
TEST_F_TIMEOUT(graph, kernel_ops_diamond, 60)
{
	struct mcp_graph_case_graph g;
	struct mcp_graph_create c;
	struct mcp_graph_exec e;
	__u32 bo[3];
	float *in, *out;
	void *work;
	long bad;
	int fence;

	build_kernel_diamond(&g);
	ASSERT_EQ(0, create_graph(&self->bos, &g, bo, &c))
		TH_LOG("reason %u kind %u index %u", c.error_reason, c.error_kind,
		       c.error_index);
	in = bos_ptr(&self->bos, bo[0], 0);
	work = bos_ptr(&self->bos, bo[1], 0);
	out = bos_ptr(&self->bos, bo[2], 0);
	fill_input(in, KD_N, 1);

	exec_arg(&e, c.handle, NULL, 0);
	fence = graph_exec(self->fd, &e);
	ASSERT_LE(0, fence) TH_LOG("%s", strerror(-fence));
	EXPECT_LT(0, e.exec_id);
	EXPECT_EQ(1, fence_finish(fence, 10000));
	bad = check_kernel_diamond(in, work, out);
	EXPECT_EQ(-1, bad) TH_LOG("element %ld", bad);
	check_kd_status(_metadata, self->fd, e.exec_id);
	EXPECT_EQ(0, graph_destroy(self->fd, c.handle));
}

/* Record once, submit many: other BOs bound per execution. */
TEST_F_TIMEOUT(graph, rebind_per_exec, 60)
{
	struct mcp_graph_case_graph g;
	struct mcp_graph_create c;
	struct mcp_graph_exec e;
	struct mcp_graph_binding bind[3];
	__u32 bo[3], alt[3];
	float *in[2], *out[2];
	void *work[2];
	__u64 first;
	int fence;

	build_kernel_diamond(&g);
	ASSERT_EQ(0, create_graph(&self->bos, &g, bo, &c));
	for (int i = 0; i < 3; i++)
		ASSERT_NE(NULL, bos_add(&self->bos, g.buffers[i].length, -1, &alt[i]));
	for (int v = 0; v < 2; v++) {
		const __u32 *h = v ? alt : bo;

		in[v] = bos_ptr(&self->bos, h[0], 0);
		work[v] = bos_ptr(&self->bos, h[1], 0);
		out[v] = bos_ptr(&self->bos, h[2], 0);
		fill_input(in[v], KD_N, 10 + v);
	}

	exec_arg(&e, c.handle, NULL, 0);
	fence = graph_exec(self->fd, &e);
	ASSERT_LE(0, fence);
	EXPECT_EQ(1, fence_finish(fence, 10000));
	first = e.exec_id;
	EXPECT_EQ(-1, check_kernel_diamond(in[0], work[0], out[0]));

	/* All three rebound: the bound BOs are untouched. */
	memset(out[0], 0, 8192);
	bind_all(bind, alt, 3);
	exec_arg(&e, c.handle, bind, 3);
	fence = graph_exec(self->fd, &e);
	ASSERT_LE(0, fence);
	EXPECT_EQ(1, fence_finish(fence, 10000));
	EXPECT_LT(first, e.exec_id);
	EXPECT_EQ(-1, check_kernel_diamond(in[1], work[1], out[1]));
	for (int i = 0; i < 2048; i++) {
		ASSERT_EQ(0, ((uint32_t *)out[0])[i]) TH_LOG("bound BO written at %d", i);
	}

	/* Only the input rebound: the results land in the bound output. */
	bind[0].buffer = 0;
	bind[0].handle = alt[0];
	exec_arg(&e, c.handle, bind, 1);
	fence = graph_exec(self->fd, &e);
	ASSERT_LE(0, fence);
	EXPECT_EQ(1, fence_finish(fence, 10000));
	EXPECT_EQ(-1, check_kernel_diamond(in[1], work[0], out[0]));
	check_kd_status(_metadata, self->fd, e.exec_id);
	EXPECT_EQ(0, graph_destroy(self->fd, c.handle));
}

/*
 * Big enough that the engine works in slices: TILE16 of F32 NHWC
 * [4][2048][8][8] (2 MiB, 512 tiles of 4 KiB), QUANT and DEQUANT of its
 * 512 Ki elements.
 */
#define BIG_B	4
#define BIG_H	2048
#define BIG_S	8
#define BIG_D	8
#define BIG_N	(BIG_B * BIG_H * BIG_S * BIG_D)

static void build_big(struct mcp_graph_case_graph *g)
{
	mcp_graph_case_init(g);
	mcp_graph_case_buffer(g, BIG_N * 4, MCP_GRAPH_BUF_INPUT);
	mcp_graph_case_buffer(g, BIG_N * 4, MCP_GRAPH_BUF_OUTPUT);
	mcp_graph_case_buffer(g, BIG_N, MCP_GRAPH_BUF_OUTPUT);
	mcp_graph_case_buffer(g, BIG_N * 4, MCP_GRAPH_BUF_OUTPUT);
	mcp_graph_case_tensor(g, 0, MCP_DTYPE_F32, 0, 4, BIG_B, BIG_H, BIG_S, BIG_D);
	g->tensors[0].layout = MCP_LAYOUT_NHWC;
	mcp_graph_case_tensor(g, 0, MCP_DTYPE_F32, 0, 1, BIG_N);
	mcp_graph_case_tensor(g, 1, MCP_DTYPE_F32, 0, 5, BIG_B, BIG_H / 16,
			      BIG_S, BIG_D, 16);
	g->tensors[2].layout = MCP_LAYOUT_TILED16;
	mcp_graph_case_tensor(g, 2, MCP_DTYPE_I8, 0, 1, BIG_N);
	mcp_graph_case_tensor(g, 3, MCP_DTYPE_F32, 0, 1, BIG_N);
	mcp_graph_case_node(g, MCP_OP_TILE16, MCP_GRAPH_ENGINE_CPU, 1, 1, 0, 2);
	mcp_graph_case_node(g, MCP_OP_QUANT_I8, MCP_GRAPH_ENGINE_CPU, 1, 1, 1, 3);
	mcp_graph_case_quant(g, 1, KQ_SCALE, KQ_ZP);
	mcp_graph_case_node(g, MCP_OP_DEQUANT_I8, MCP_GRAPH_ENGINE_CPU, 1, 1, 3, 4);
	mcp_graph_case_quant(g, 2, KQ_SCALE, KQ_ZP);
}

TEST_F_TIMEOUT(graph, kernel_ops_large, 180)
{
	struct mcp_graph_case_graph g;
	struct mcp_graph_create c;
	struct mcp_graph_exec e;
	__u32 bo[4];
	float *in, *tiled, *dq;
	int8_t *q;
	long bad = -1;
	int fence;

	build_big(&g);
	ASSERT_EQ(0, create_graph(&self->bos, &g, bo, &c))
		TH_LOG("reason %u kind %u index %u", c.error_reason, c.error_kind,
		       c.error_index);
	in = bos_ptr(&self->bos, bo[0], 0);
	tiled = bos_ptr(&self->bos, bo[1], 0);
	q = bos_ptr(&self->bos, bo[2], 0);
	dq = bos_ptr(&self->bos, bo[3], 0);
	fill_input(in, BIG_N, 5);

	exec_arg(&e, c.handle, NULL, 0);
	fence = graph_exec(self->fd, &e);
	ASSERT_LE(0, fence);
	EXPECT_EQ(1, fence_finish(fence, 60000));
	for (long i = 0; i < BIG_N && bad < 0; i++) {
		int8_t want = ref_quant(in[i], KQ_SCALE, KQ_ZP);

		if (q[i] != want ||
		    bits32(dq[i]) != bits32(ref_dequant(want, KQ_SCALE, KQ_ZP)))
			bad = i;
	}
	EXPECT_EQ(-1, bad) TH_LOG("quant/dequant element %ld", bad);
	for (long b = 0; b < BIG_B && bad < 0; b++)
		for (long h = 0; h < BIG_H && bad < 0; h++)
			for (long s = 0; s < BIG_S; s++)
				for (long d = 0; d < BIG_D; d++) {
					long src = ((b * BIG_H + h) * BIG_S + s) * BIG_D + d;
					long dst = ((((b * (BIG_H / 16) + h / 16) * BIG_S + s) *
						     BIG_D + d) * 16) + h % 16;

					if (bits32(tiled[dst]) != bits32(in[src]))
						bad = dst;
				}
	EXPECT_EQ(-1, bad) TH_LOG("tiled element %ld", bad);
	EXPECT_EQ(0, graph_destroy(self->fd, c.handle));
}

/*
 * One COPY of STOP_BYTES on the cpu engine: longer than the first
 * deadlines tried below on any host (2.7 ms at 25 GB/s, far more under
 * TCG), in 256 slices.  Two buffers of it fit a 512 MiB node (4node).
 */
#define STOP_BYTES	(64U << 20)
#define STOP_MAX_MS	64

static void build_long_copy(struct mcp_graph_case_graph *g)
{
	mcp_graph_case_init(g);
	mcp_graph_case_buffer(g, STOP_BYTES, MCP_GRAPH_BUF_INPUT);
	mcp_graph_case_buffer(g, STOP_BYTES, MCP_GRAPH_BUF_OUTPUT);
	mcp_graph_case_tensor(g, 0, MCP_DTYPE_F32, 0, 1, STOP_BYTES / 4);
	mcp_graph_case_tensor(g, 1, MCP_DTYPE_F32, 0, 1, STOP_BYTES / 4);
	mcp_graph_case_node(g, MCP_OP_COPY, MCP_GRAPH_ENGINE_CPU, 1, 1, 0, 1);
}

/*
 * Running kernel jobs stop between slices.  Deadlines of 1, 2, 4 ... ms
 * until one finds the copy running (a shorter one may drop it while still
 * queued): that execution fails with -ETIMEDOUT at the copy, which started
 * and ended well before a full copy would have (a stop checked only after
 * the last slice fails this).  A copy done within its deadline fails the
 * test: it would prove nothing.  The next execution is fine.  Closing the
 * fd with one running signals its fence with an error (or success, when
 * the graph ended before the close), never leaving it pending.
 */
TEST_F_TIMEOUT(graph, stop_running_kernel_ops, 300)
{
	struct mcp_graph_node_status node, full;
	struct mcp_graph_case_graph g;
	struct mcp_graph_create c;
	struct mcp_graph_exec e;
	struct mcp_graph_status st;
	struct bos b = { 0 };
	__u64 full_ns, stopped_ns;
	__u32 bo[2], big_bo[4], timeout_ms;
	int fence, ret;

	build_long_copy(&g);
	ASSERT_EQ(0, create_graph(&self->bos, &g, bo, &c));
	exec_arg(&e, c.handle, NULL, 0);
	fence = graph_exec(self->fd, &e);
	ASSERT_LE(0, fence);
	ASSERT_EQ(1, fence_finish(fence, 120000));
	ASSERT_EQ(0, graph_status(self->fd, e.exec_id, &full, 1, &st));
	full_ns = full.end_ns - full.start_ns;

	for (timeout_ms = 1; timeout_ms <= STOP_MAX_MS; timeout_ms *= 2) {
		exec_arg(&e, c.handle, NULL, 0);
		e.timeout_ms = timeout_ms;
		fence = graph_exec(self->fd, &e);
		ASSERT_LE(0, fence);
		ret = fence_finish(fence, 120000);
		ASSERT_NE(1, ret)
			TH_LOG("%u MiB copied within %u ms: STOP_BYTES is too small for this host",
			       STOP_BYTES >> 20, timeout_ms);
		ASSERT_EQ(-ETIMEDOUT, ret) TH_LOG("fence status %d", ret);
		ASSERT_EQ(0, graph_status(self->fd, e.exec_id, &node, 1, &st));
		EXPECT_EQ(MCP_GRAPH_STATE_FAILED, st.state);
		EXPECT_EQ(-ETIMEDOUT, st.result);
		if (node.start_ns)
			break;
		TH_LOG("a %u ms deadline found the copy still queued", timeout_ms);
	}
	ASSERT_NE(0, node.start_ns)
		TH_LOG("the copy never started within %u ms of its submission", STOP_MAX_MS);
	stopped_ns = node.end_ns - node.start_ns;
	TH_LOG("stopped after %llu us of a %llu us copy (deadline %u ms)",
	       (unsigned long long)stopped_ns / 1000, (unsigned long long)full_ns / 1000,
	       timeout_ms);
	EXPECT_EQ(0, st.failed_node);
	EXPECT_EQ(-ETIMEDOUT, node.result);
	EXPECT_LT(stopped_ns, full_ns * 3 / 4)
		TH_LOG("the copy was not stopped in the middle");

	exec_arg(&e, c.handle, NULL, 0);
	fence = graph_exec(self->fd, &e);
	ASSERT_LE(0, fence);
	EXPECT_EQ(1, fence_finish(fence, 120000));
	EXPECT_EQ(0, graph_destroy(self->fd, c.handle));

	b.fd = mcp_open();
	ASSERT_LE(0, b.fd);
	build_big(&g);
	ASSERT_EQ(0, create_graph(&b, &g, big_bo, &c));
	for (int i = 0; i < b.n; i++)
		munmap(b.m[i].p, b.m[i].len);
	exec_arg(&e, c.handle, NULL, 0);
	fence = graph_exec(b.fd, &e);
	ASSERT_LE(0, fence);
	close(b.fd);
	ret = fence_finish(fence, 120000);
	/*
	 * The close races with the graph's end: on a fast host it may finish
	 * first (1).  What must never happen is a fence left unsignalled.
	 */
	EXPECT_NE(-9999, ret) TH_LOG("fence not signalled");
	EXPECT_TRUE(ret == 1 || ret == -ECANCELED)
		TH_LOG("status %d", ret);
	TH_LOG("closed with the graph %s", ret == 1 ? "already finished" : "running");
}

/* The table's QUANT -> COPY -> TILE16 (I8) -> DEQUANT chain, run. */
TEST_F_TIMEOUT(graph, table_tile16_quant_chain_runs, 60)
{
	struct mcp_graph_case_graph g;
	struct mcp_graph_create c;
	struct mcp_graph_exec e;
	const struct mcp_graph_quant *p;
	float *x, *out, scale;
	__u32 bo[2];
	long bad = -1;
	int fence;

	mcp_graph_case_init(&g);
	mcp_gc_valid_tile16_quant_chain(&g);
	ASSERT_EQ(0, create_graph(&self->bos, &g, bo, &c));
	p = (const void *)(g.blob + g.nodes[0].param_offset);
	scale = f32_of(p->scale);
	x = bos_ptr(&self->bos, bo[0], 0);
	out = bos_ptr(&self->bos, bo[1], 4096);
	fill_input(x, 16 * 2 * 32, 9);

	exec_arg(&e, c.handle, NULL, 0);
	fence = graph_exec(self->fd, &e);
	ASSERT_LE(0, fence);
	EXPECT_EQ(1, fence_finish(fence, 10000));
	/* x [1][16][2][32] -> out [1][1][2][32][16] */
	for (int h = 0; h < 16; h++)
		for (int s = 0; s < 2; s++)
			for (int d = 0; d < 32; d++) {
				float v = x[(h * 2 + s) * 32 + d];
				float want = ref_dequant(ref_quant(v, scale, p->zero_point),
							 scale, p->zero_point);

				if (bad < 0 && bits32(out[(s * 32 + d) * 16 + h]) != bits32(want))
					bad = (h * 2 + s) * 32 + d;
			}
	EXPECT_EQ(-1, bad) TH_LOG("element %ld", bad);
	EXPECT_EQ(0, graph_destroy(self->fd, c.handle));
}

/* Only the last exec_history_len ended executions are kept. */
TEST_F_TIMEOUT(graph, exec_history_len, 60)
{
	struct mcp_graph_case_graph g;
	struct mcp_graph_create c;
	struct mcp_graph_exec e;
	struct mcp_graph_status st;
	__u64 ids[3];
	__u32 bo[3];

	ASSERT_LT(0, self->history);
	build_kernel_diamond(&g);
	ASSERT_EQ(0, create_graph(&self->bos, &g, bo, &c));
	ASSERT_EQ(0, knob_write("exec_history_len", 2));
	EXPECT_EQ(-EINVAL, knob_write("exec_history_len", 0));
	for (int i = 0; i < 3; i++) {
		int fence;

		exec_arg(&e, c.handle, NULL, 0);
		fence = graph_exec(self->fd, &e);
		ASSERT_LE(0, fence);
		EXPECT_EQ(1, fence_finish(fence, 10000));
		ids[i] = e.exec_id;
	}
	EXPECT_EQ(-ENOENT, graph_status(self->fd, ids[0], NULL, 0, &st));
	EXPECT_EQ(0, graph_status(self->fd, ids[1], NULL, 0, &st));
	EXPECT_EQ(0, graph_status(self->fd, ids[2], NULL, 0, &st));
	EXPECT_EQ(MCP_GRAPH_STATE_DONE, st.state);
	EXPECT_EQ(0, graph_destroy(self->fd, c.handle));
}

/* An execution waiting for its in-fence is QUEUED, then runs after it. */
TEST_F_TIMEOUT(graph, queued_behind_in_fence, 60)
{
	struct mcp_graph_case_graph g;
	struct mcp_graph_create c;
	struct mcp_graph_exec e;
	struct mcp_graph_node_status a_ns[1], b_ns[1];
	struct mcp_graph_status st;
	struct worker w;
	__u64 a_id, b_id;
	__u32 bo[1];
	int a, b;

	build_wnop(&g);
	ASSERT_EQ(0, create_graph(&self->bos, &g, bo, &c));
	exec_arg(&e, c.handle, NULL, 0);
	a = graph_exec(self->fd, &e);
	ASSERT_LE(0, a);
	a_id = e.exec_id;
	exec_arg(&e, c.handle, NULL, 0);
	e.flags = MCP_GRAPH_EXEC_IN_FENCE;
	e.in_fence = a;
	b = graph_exec(self->fd, &e);
	ASSERT_LE(0, b);
	b_id = e.exec_id;

	ASSERT_EQ(0, graph_status(self->fd, a_id, NULL, 0, &st));
	EXPECT_EQ(MCP_GRAPH_STATE_RUNNING, st.state);
	ASSERT_EQ(0, graph_status(self->fd, b_id, NULL, 0, &st));
	EXPECT_EQ(MCP_GRAPH_STATE_QUEUED, st.state);

	worker_init(&w, self->fd, &self->bos, -1);
	ASSERT_EQ(0, worker_start(&w));
	EXPECT_EQ(1, fence_finish(b, 10000));
	EXPECT_EQ(1, fence_finish(a, 10000));
	worker_stop(&w);
	ASSERT_EQ(0, graph_status(self->fd, a_id, a_ns, 1, &st));
	EXPECT_EQ(MCP_GRAPH_STATE_DONE, st.state);
	ASSERT_EQ(0, graph_status(self->fd, b_id, b_ns, 1, &st));
	EXPECT_EQ(MCP_GRAPH_STATE_DONE, st.state);
	EXPECT_LE(a_ns[0].end_ns, b_ns[0].start_ns);
	EXPECT_EQ(0, graph_destroy(self->fd, c.handle));
}

/* The graph is destroyed while executions of it are queued: they finish. */
TEST_F_TIMEOUT(graph, destroy_while_in_flight, 60)
{
	struct mcp_graph_case_graph g;
	struct mcp_graph_create c;
	struct mcp_graph_exec e;
	struct worker w;
	__u32 bo[1];
	int fence[4];

	build_wnop(&g);
	ASSERT_EQ(0, create_graph(&self->bos, &g, bo, &c));
	for (int i = 0; i < 4; i++) {
		exec_arg(&e, c.handle, NULL, 0);
		fence[i] = graph_exec(self->fd, &e);
		ASSERT_LE(0, fence[i]);
	}
	EXPECT_EQ(0, graph_destroy(self->fd, c.handle));
	worker_init(&w, self->fd, &self->bos, -1);
	ASSERT_EQ(0, worker_start(&w));
	for (int i = 0; i < 4; i++) {
		EXPECT_EQ(1, fence_finish(fence[i], 10000)) TH_LOG("exec %d", i);
	}
	worker_stop(&w);
	EXPECT_EQ(4, atomic_load(&w.jobs));
}

/* Worker nodes in a diamond; STATUS names the worker thread. */
TEST_F_TIMEOUT(graph, worker_diamond_and_rebind, 60)
{
	struct mcp_graph_case_graph g;
	struct mcp_graph_create c;
	struct mcp_graph_exec e;
	struct mcp_graph_binding bind[3];
	struct mcp_graph_node_status ns[5];
	struct mcp_graph_status st;
	struct worker w[2];
	__u32 bo[3], alt[3];
	float *in, *out, *in2, *out2;
	int fence;

	build_worker_diamond(&g);
	ASSERT_EQ(0, create_graph(&self->bos, &g, bo, &c))
		TH_LOG("reason %u kind %u index %u", c.error_reason, c.error_kind,
		       c.error_index);
	for (int i = 0; i < 3; i++)
		ASSERT_NE(NULL, bos_add(&self->bos, 4096, -1, &alt[i]));
	in = bos_ptr(&self->bos, bo[0], 0);
	out = bos_ptr(&self->bos, bo[2], 0);
	in2 = bos_ptr(&self->bos, alt[0], 0);
	out2 = bos_ptr(&self->bos, alt[2], 0);
	fill_input(in, WD_N, 3);
	fill_input(in2, WD_N, 4);
	for (int i = 0; i < 2; i++) {
		worker_init(&w[i], self->fd, &self->bos, -1);
		ASSERT_EQ(0, worker_start(&w[i]));
	}
	EXPECT_LE(self->start[2] + 2, mcp_counter("graph_workers"));

	exec_arg(&e, c.handle, NULL, 0);
	fence = graph_exec(self->fd, &e);
	ASSERT_LE(0, fence);
	EXPECT_EQ(1, fence_finish(fence, 10000));
	EXPECT_EQ(-1, check_worker_diamond(in, out));
	ASSERT_EQ(0, graph_status(self->fd, e.exec_id, ns, 5, &st));
	EXPECT_EQ(MCP_GRAPH_STATE_DONE, st.state);
	for (int i = 0; i < 5; i++) {
		int worker_node = i >= 3;

		EXPECT_EQ(worker_node ? MCP_GRAPH_ENGINE_WORKER : MCP_GRAPH_ENGINE_CPU,
			  ns[i].engine) TH_LOG("node %d", i);
		if (worker_node) {
			EXPECT_TRUE(ns[i].worker_tid == w[0].tid ||
				    ns[i].worker_tid == w[1].tid)
				TH_LOG("node %d: tid %d", i, ns[i].worker_tid);
		}
		EXPECT_LE(ns[i].start_ns, ns[i].end_ns);
	}
	EXPECT_LE(ns[0].end_ns, ns[1].start_ns);
	EXPECT_LE(ns[2].end_ns, ns[3].start_ns);
	EXPECT_LE(ns[3].end_ns, ns[4].start_ns);

	/* Other input and output, same work buffer. */
	bind[0] = (struct mcp_graph_binding){ .buffer = 0, .handle = alt[0] };
	bind[1] = (struct mcp_graph_binding){ .buffer = 2, .handle = alt[2] };
	exec_arg(&e, c.handle, bind, 2);
	fence = graph_exec(self->fd, &e);
	ASSERT_LE(0, fence);
	EXPECT_EQ(1, fence_finish(fence, 10000));
	EXPECT_EQ(-1, check_worker_diamond(in2, out2));
	EXPECT_EQ(-1, check_worker_diamond(in, out)) TH_LOG("first output changed");
	for (int i = 0; i < 2; i++)
		worker_stop(&w[i]);
	EXPECT_EQ(4, atomic_load(&w[0].jobs) + atomic_load(&w[1].jobs));
	EXPECT_EQ(0, graph_destroy(self->fd, c.handle));
}

/* A worker's error fails the execution at that node; dependents are skipped. */
TEST_F_TIMEOUT(graph, worker_error_skips_dependents, 60)
{
	struct mcp_graph_case_graph g;
	struct mcp_graph_create c;
	struct mcp_graph_exec e;
	struct mcp_graph_node_status ns[5];
	struct mcp_graph_status st;
	struct worker w;
	__u32 bo[3];
	int fence;

	build_worker_diamond(&g);
	ASSERT_EQ(0, create_graph(&self->bos, &g, bo, &c));
	worker_init(&w, self->fd, &self->bos, -1);
	w.fail_node = 3;
	w.fail_errno = EIO;
	ASSERT_EQ(0, worker_start(&w));

	exec_arg(&e, c.handle, NULL, 0);
	fence = graph_exec(self->fd, &e);
	ASSERT_LE(0, fence);
	EXPECT_EQ(-EIO, fence_finish(fence, 10000));
	ASSERT_EQ(0, graph_status(self->fd, e.exec_id, ns, 5, &st));
	EXPECT_EQ(MCP_GRAPH_STATE_FAILED, st.state);
	EXPECT_EQ(-EIO, st.result);
	EXPECT_EQ(3, st.failed_node);
	for (int i = 0; i < 3; i++) {
		EXPECT_EQ(0, ns[i].result) TH_LOG("node %d", i);
	}
	EXPECT_EQ(-EIO, ns[3].result);
	EXPECT_EQ(-ECANCELED, ns[4].result);
	EXPECT_EQ(0, ns[4].start_ns);
	EXPECT_EQ(-1, ns[4].numa_node);

	/* The next execution, with a worker that does not fail, succeeds. */
	w.fail_node = -1;
	exec_arg(&e, c.handle, NULL, 0);
	fence = graph_exec(self->fd, &e);
	ASSERT_LE(0, fence);
	EXPECT_EQ(1, fence_finish(fence, 10000));
	worker_stop(&w);
	EXPECT_EQ(0, graph_destroy(self->fd, c.handle));
}

/* No worker: the execution times out, per exec and by the knob. */
TEST_F_TIMEOUT(graph, timeout_without_worker, 60)
{
	struct mcp_graph_case_graph g;
	struct mcp_graph_create c;
	struct mcp_graph_exec e;
	struct mcp_graph_status st;
	long long knob = knob_read("exec_timeout_ms");
	struct timespec t0, t1;
	__u32 bo[1];
	int fence;
	long ms;

	ASSERT_LT(0, knob);
	build_wnop(&g);
	ASSERT_EQ(0, create_graph(&self->bos, &g, bo, &c));
	clock_gettime(CLOCK_MONOTONIC, &t0);
	exec_arg(&e, c.handle, NULL, 0);
	e.timeout_ms = 200;
	fence = graph_exec(self->fd, &e);
	ASSERT_LE(0, fence);
	EXPECT_EQ(-ETIMEDOUT, fence_finish(fence, 10000));
	clock_gettime(CLOCK_MONOTONIC, &t1);
	ms = (t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000;
	EXPECT_LE(190, ms);
	ASSERT_EQ(0, graph_status(self->fd, e.exec_id, NULL, 0, &st));
	EXPECT_EQ(MCP_GRAPH_STATE_FAILED, st.state);
	EXPECT_EQ(-ETIMEDOUT, st.result);

	ASSERT_EQ(0, knob_write("exec_timeout_ms", 150));
	exec_arg(&e, c.handle, NULL, 0);
	fence = graph_exec(self->fd, &e);
	knob_write("exec_timeout_ms", knob);
	ASSERT_LE(0, fence);
	EXPECT_EQ(-ETIMEDOUT, fence_finish(fence, 10000));
	EXPECT_EQ(0, graph_destroy(self->fd, c.handle));
}

/*
 * The per-fd bounds: a time-out above exec_timeout_max_ms is refused,
 * and so is an execution past max_execs_in_flight until one ends.
 */
TEST_F_TIMEOUT(graph, exec_bounds, 60)
{
	long long max_ms = knob_read("exec_timeout_max_ms");
	long long max_execs = knob_read("max_execs_in_flight");
	struct mcp_graph_case_graph g;
	struct mcp_graph_create c;
	struct mcp_graph_exec e;
	int fence[3];
	__u32 bo[1];

	ASSERT_EQ(600000, max_ms);
	ASSERT_EQ(256, max_execs);
	build_wnop(&g);
	ASSERT_EQ(0, create_graph(&self->bos, &g, bo, &c));

	exec_arg(&e, c.handle, NULL, 0);
	e.timeout_ms = max_ms + 1;
	EXPECT_EQ(-EINVAL, graph_exec(self->fd, &e));
	EXPECT_EQ(-EINVAL, knob_write("exec_timeout_max_ms", 3600001));
	EXPECT_EQ(-EINVAL, knob_write("max_execs_in_flight", 0));

	/* No worker: both stay in flight until their time-out. */
	ASSERT_EQ(0, knob_write("max_execs_in_flight", 2));
	for (int i = 0; i < 2; i++) {
		exec_arg(&e, c.handle, NULL, 0);
		e.timeout_ms = 300;
		fence[i] = graph_exec(self->fd, &e);
		EXPECT_LE(0, fence[i]);
	}
	exec_arg(&e, c.handle, NULL, 0);
	EXPECT_EQ(-EAGAIN, graph_exec(self->fd, &e));
	for (int i = 0; i < 2; i++)
		EXPECT_EQ(-ETIMEDOUT, fence_finish(fence[i], 10000));
	exec_arg(&e, c.handle, NULL, 0);
	e.timeout_ms = 100;
	fence[2] = graph_exec(self->fd, &e);
	EXPECT_LE(0, fence[2]);
	EXPECT_EQ(-ETIMEDOUT, fence_finish(fence[2], 10000));
	knob_write("max_execs_in_flight", max_execs);
	EXPECT_EQ(0, graph_destroy(self->fd, c.handle));
}

/* A worker process killed with a job claimed: the job runs elsewhere. */
TEST_F_TIMEOUT(graph, killed_worker_requeues_once, 60)
{
	struct mcp_graph_case_graph g;
	struct mcp_graph_create c;
	struct mcp_graph_exec e;
	struct mcp_graph_node_status ns[1];
	struct mcp_graph_status st;
	struct worker w;
	__u32 bo[1];
	int fence, rd;
	pid_t child;

	build_wnop(&g);
	ASSERT_EQ(0, create_graph(&self->bos, &g, bo, &c));
	exec_arg(&e, c.handle, NULL, 0);
	fence = graph_exec(self->fd, &e);
	ASSERT_LE(0, fence);
	child = claim_child(self->fd, &rd);
	ASSERT_LT(0, child);
	EXPECT_EQ(0, claim_wait(rd, 10000));
	kill_child(child, rd);
	EXPECT_EQ(0, fence_wait(fence, 100)) TH_LOG("failed at the first death");

	worker_init(&w, self->fd, &self->bos, -1);
	ASSERT_EQ(0, worker_start(&w));
	EXPECT_EQ(1, fence_finish(fence, 10000));
	worker_stop(&w);
	EXPECT_EQ(1, atomic_load(&w.jobs));
	ASSERT_EQ(0, graph_status(self->fd, e.exec_id, ns, 1, &st));
	EXPECT_EQ(MCP_GRAPH_STATE_DONE, st.state);
	EXPECT_EQ(w.tid, ns[0].worker_tid);

	/* Killed twice: -EPIPE at that node. */
	exec_arg(&e, c.handle, NULL, 0);
	fence = graph_exec(self->fd, &e);
	ASSERT_LE(0, fence);
	for (int i = 0; i < 2; i++) {
		child = claim_child(self->fd, &rd);
		ASSERT_LT(0, child);
		EXPECT_EQ(0, claim_wait(rd, 10000)) TH_LOG("death %d", i);
		kill_child(child, rd);
	}
	EXPECT_EQ(-EPIPE, fence_finish(fence, 10000));
	ASSERT_EQ(0, graph_status(self->fd, e.exec_id, ns, 1, &st));
	EXPECT_EQ(MCP_GRAPH_STATE_FAILED, st.state);
	EXPECT_EQ(-EPIPE, st.result);
	EXPECT_EQ(0, st.failed_node);
	EXPECT_EQ(-EPIPE, ns[0].result);
	EXPECT_EQ(0, graph_destroy(self->fd, c.handle));
}

/* Closing the fd mid-execution: the fence signals with an error. */
TEST_F_TIMEOUT(graph, close_fd_mid_exec, 60)
{
	struct mcp_graph_case_graph g;
	struct mcp_graph_create c;
	struct mcp_graph_exec e;
	struct bos b = { 0 };
	struct worker w;
	__u32 bo[1];
	int fence[3], st;

	/* Queued with no worker. */
	b.fd = mcp_open();
	ASSERT_LE(0, b.fd);
	build_wnop(&g);
	ASSERT_EQ(0, create_graph(&b, &g, bo, &c));
	exec_arg(&e, c.handle, NULL, 0);
	fence[0] = graph_exec(b.fd, &e);
	ASSERT_LE(0, fence[0]);
	bos_release(&b);
	close(b.fd);
	st = fence_finish(fence[0], 5000);
	EXPECT_GT(0, st) TH_LOG("status %d", st);
	EXPECT_NE(-9999, st) TH_LOG("fence not signalled");

	/* A worker holds the job; another execution waits behind it. */
	b.fd = mcp_open();
	ASSERT_LE(0, b.fd);
	build_wnop(&g);
	ASSERT_EQ(0, create_graph(&b, &g, bo, &c));
	worker_init(&w, b.fd, &b, -1);
	w.hold = 1;
	ASSERT_EQ(0, worker_start(&w));
	for (int i = 1; i < 3; i++) {
		exec_arg(&e, c.handle, NULL, 0);
		fence[i] = graph_exec(b.fd, &e);
		ASSERT_LE(0, fence[i]);
	}
	for (int i = 0; i < 500 && !atomic_load(&w.held); i++)
		usleep(10000);
	EXPECT_TRUE(atomic_load(&w.held));
	for (int i = 0; i < b.n; i++)
		munmap(b.m[i].p, b.m[i].len);
	close(b.fd);
	for (int i = 1; i < 3; i++) {
		st = fence_finish(fence[i], 5000);
		EXPECT_GT(0, st) TH_LOG("exec %d: status %d", i, st);
		EXPECT_NE(-9999, st) TH_LOG("exec %d: fence not signalled", i);
	}
	worker_stop(&w);
}

/* WORKER_REGISTER and the worker fd's read() and JOB_DONE refuse nonsense. */
TEST_F_TIMEOUT(graph, worker_fd_bad_arguments, 60)
{
	struct mcp_worker_register r = { .size = sizeof(r), .node = -1, .fd = -1 };
	struct mcp_graph_case_graph g;
	struct mcp_graph_create c;
	struct mcp_graph_exec e;
	struct mcp_worker_job job;
	struct mcp_job_done d;
	struct pollfd p;
	__u32 bo[1];
	int wfd, fence;
	char small[8];

	r.flags = ~MCP_WORKER_CHAINS;	/* no such flag */
	EXPECT_EQ(-EINVAL, mcp_ioctl(self->fd, MCP_IOC_WORKER_REGISTER, &r));
	r.flags = 0;
	r.node = 4096;
	EXPECT_EQ(-EINVAL, mcp_ioctl(self->fd, MCP_IOC_WORKER_REGISTER, &r));
	r.node = -2;
	EXPECT_EQ(-EINVAL, mcp_ioctl(self->fd, MCP_IOC_WORKER_REGISTER, &r));
	r.size = MCP_WORKER_REGISTER_SIZE_VER0 - 4;
	r.node = -1;
	EXPECT_EQ(-EINVAL, mcp_ioctl(self->fd, MCP_IOC_WORKER_REGISTER, &r));

	wfd = worker_register(self->fd, -1, NULL);
	ASSERT_LE(0, wfd);
	EXPECT_EQ(FD_CLOEXEC, fcntl(wfd, F_GETFD) & FD_CLOEXEC);
	EXPECT_EQ(self->start[2] + 1, mcp_counter("graph_workers"));
	/* Nothing queued: not readable, and a non-blocking read says so. */
	p = (struct pollfd){ .fd = wfd, .events = POLLIN };
	EXPECT_EQ(0, poll(&p, 1, 0));
	fcntl(wfd, F_SETFL, O_NONBLOCK);
	EXPECT_EQ(-1, read(wfd, &job, sizeof(job)));
	EXPECT_EQ(EAGAIN, errno);
	/* The graph fd's ioctls are not the worker fd's. */
	EXPECT_EQ(-ENOTTY, mcp_ioctl(wfd, MCP_IOC_GET_VERSION, &r));

	build_wnop(&g);
	ASSERT_EQ(0, create_graph(&self->bos, &g, bo, &c));
	exec_arg(&e, c.handle, NULL, 0);
	fence = graph_exec(self->fd, &e);
	ASSERT_LE(0, fence);
	EXPECT_EQ(1, poll(&p, 1, 5000));
	EXPECT_EQ(-1, read(wfd, small, sizeof(small)));
	EXPECT_EQ(EINVAL, errno);
	ASSERT_EQ(sizeof(job), read(wfd, &job, sizeof(job)));
	EXPECT_EQ(e.exec_id, job.exec_id);
	EXPECT_EQ(c.handle, job.graph);
	EXPECT_EQ(0, job.node);
	EXPECT_EQ(MCP_OP_WNOP, job.op);
	EXPECT_EQ(1, job.n_inputs);
	EXPECT_EQ(0, job.n_outputs);
	EXPECT_EQ(bo[0], job.inputs[0].handle);
	EXPECT_EQ(MCP_DTYPE_F32, job.inputs[0].dtype);
	EXPECT_EQ(16, job.inputs[0].dims[0]);

	d = (struct mcp_job_done){ .size = sizeof(d), .job_id = job.job_id + 1 };
	EXPECT_EQ(-ENOENT, mcp_ioctl(wfd, MCP_IOC_JOB_DONE, &d));
	d = (struct mcp_job_done){ .size = sizeof(d), .job_id = job.job_id, .flags = 1 };
	EXPECT_EQ(-EINVAL, mcp_ioctl(wfd, MCP_IOC_JOB_DONE, &d));
	d = (struct mcp_job_done){ .size = sizeof(d), .job_id = job.job_id, .reserved = 1 };
	EXPECT_EQ(-EINVAL, mcp_ioctl(wfd, MCP_IOC_JOB_DONE, &d));
	d = (struct mcp_job_done){ .size = sizeof(d), .job_id = job.job_id, .result = 1 };
	EXPECT_EQ(-EINVAL, mcp_ioctl(wfd, MCP_IOC_JOB_DONE, &d));
	EXPECT_EQ(0, fence_wait(fence, 0));
	d = (struct mcp_job_done){ .size = sizeof(d), .job_id = job.job_id };
	EXPECT_EQ(0, mcp_ioctl(wfd, MCP_IOC_JOB_DONE, &d));
	/* Reported once only. */
	EXPECT_EQ(-ENOENT, mcp_ioctl(wfd, MCP_IOC_JOB_DONE, &d));
	EXPECT_EQ(1, fence_finish(fence, 5000));
	close(wfd);
	EXPECT_EQ(self->start[2], mcp_counter_settles("graph_workers", self->start[2]));
	EXPECT_EQ(0, graph_destroy(self->fd, c.handle));
}

/* A worker that is reading when the fd closes sees end of file. */
TEST_F_TIMEOUT(graph, close_fd_detaches_workers, 60)
{
	struct worker w;
	struct bos b = { 0 };

	b.fd = mcp_open();
	ASSERT_LE(0, b.fd);
	worker_init(&w, b.fd, &b, -1);
	ASSERT_EQ(0, worker_start(&w));
	close(b.fd);
	for (int i = 0; i < 500 && !atomic_load(&w.detached); i++)
		usleep(10000);
	EXPECT_TRUE(atomic_load(&w.detached));
	worker_stop(&w);
}

/* Several executions in flight at once, each on its own BOs. */
TEST_F_TIMEOUT(graph, executions_in_flight, 120)
{
	enum { N = 8 };
	struct mcp_graph_case_graph g;
	struct mcp_graph_create c;
	struct mcp_graph_exec e;
	struct mcp_graph_binding bind[N][3];
	struct mcp_graph_status st;
	struct worker w[2];
	__u32 bo[3], h[N][3];
	__u64 ids[N];
	int fence[N];

	build_worker_diamond(&g);
	ASSERT_EQ(0, create_graph(&self->bos, &g, bo, &c));
	for (int k = 0; k < N; k++) {
		for (int i = 0; i < 3; i++)
			ASSERT_NE(NULL, bos_add(&self->bos, 4096, -1, &h[k][i]));
		fill_input(bos_ptr(&self->bos, h[k][0], 0), WD_N, 100 + k);
		bind_all(bind[k], h[k], 3);
		exec_arg(&e, c.handle, bind[k], 3);
		fence[k] = graph_exec(self->fd, &e);
		ASSERT_LE(0, fence[k]);
		ids[k] = e.exec_id;
	}
	/* Nothing can finish yet: the ADD nodes wait for a worker. */
	EXPECT_LE(self->start[1] + N, mcp_counter("graph_execs_in_flight"));
	ASSERT_EQ(0, graph_status(self->fd, ids[0], NULL, 0, &st));
	EXPECT_EQ(MCP_GRAPH_STATE_RUNNING, st.state);
	EXPECT_EQ(0, st.end_ns);
	for (int i = 0; i < 2; i++) {
		worker_init(&w[i], self->fd, &self->bos, -1);
		ASSERT_EQ(0, worker_start(&w[i]));
	}
	for (int k = 0; k < N; k++) {
		EXPECT_EQ(1, fence_finish(fence[k], 20000)) TH_LOG("exec %d", k);
		EXPECT_EQ(-1, check_worker_diamond(bos_ptr(&self->bos, h[k][0], 0),
						   bos_ptr(&self->bos, h[k][2], 0)))
			TH_LOG("exec %d", k);
	}
	for (int i = 0; i < 2; i++)
		worker_stop(&w[i]);
	EXPECT_EQ(0, graph_destroy(self->fd, c.handle));
}

struct exec_thread {
	int fd;
	__u32 graph;
	__u32 h[3];
	const struct bos *bos;
	int ok;
	int failed;
	__u64 failed_id;	/* the first failed execution */
	int failed_ret;		/* its submit or fence result */
};

static void *exec_thread_main(void *arg)
{
	struct exec_thread *t = arg;
	struct mcp_graph_binding bind[3];
	struct mcp_graph_exec e;
	float *in = bos_ptr(t->bos, t->h[0], 0);
	float *out = bos_ptr(t->bos, t->h[2], 0);

	bind_all(bind, t->h, 3);
	for (int i = 0; i < 200; i++) {
		int fence;

		int ret;

		in[i % WD_N] += 1.0f;
		exec_arg(&e, t->graph, bind, 3);
		fence = graph_exec(t->fd, &e);
		ret = fence < 0 ? fence : fence_finish(fence, 20000);
		if (ret == 1 && check_worker_diamond(in, out) == -1) {
			t->ok++;
			continue;
		}
		/* Stop at the first failure: say which and why. */
		t->failed++;
		t->failed_id = e.exec_id;
		t->failed_ret = ret == 1 ? -EIO : ret;
		break;
	}
	return NULL;
}

/* 4 threads x 200 executions of the worker diamond, 2 workers. */
TEST_F_TIMEOUT(graph, threads_4_by_200, 300)
{
	struct mcp_graph_case_graph g;
	struct mcp_graph_create c;
	struct exec_thread t[4];
	pthread_t th[4];
	struct worker w[2];
	__u32 bo[3];
	int ok = 0;

	build_worker_diamond(&g);
	ASSERT_EQ(0, create_graph(&self->bos, &g, bo, &c));
	for (int k = 0; k < 4; k++) {
		memset(&t[k], 0, sizeof(t[k]));
		t[k].fd = self->fd;
		t[k].graph = c.handle;
		t[k].bos = &self->bos;
		for (int i = 0; i < 3; i++)
			ASSERT_NE(NULL, bos_add(&self->bos, 4096, -1, &t[k].h[i]));
		fill_input(bos_ptr(&self->bos, t[k].h[0], 0), WD_N, 200 + k);
	}
	for (int i = 0; i < 2; i++) {
		worker_init(&w[i], self->fd, &self->bos, -1);
		ASSERT_EQ(0, worker_start(&w[i]));
	}
	for (int k = 0; k < 4; k++)
		ASSERT_EQ(0, pthread_create(&th[k], NULL, exec_thread_main, &t[k]));
	for (int k = 0; k < 4; k++) {
		struct mcp_graph_node_status ns[5];
		struct mcp_graph_status st;

		pthread_join(th[k], NULL);
		ok += t[k].ok;
		if (!t[k].failed)
			continue;
		/* -9999: the fence did not signal within 20 s. */
		EXPECT_EQ(0, t[k].failed) TH_LOG("thread %d: exec %llu after %d: %d",
						  k, (unsigned long long)t[k].failed_id,
						  t[k].ok, t[k].failed_ret);
		for (int i = 0; i < 2; i++)
			TH_LOG("worker %d (node %d): %d jobs%s", i, w[i].reg_node,
			       atomic_load(&w[i].jobs),
			       atomic_load(&w[i].detached) ? ", detached" : "");
		if (graph_status(self->fd, t[k].failed_id, ns, 5, &st))
			continue;
		TH_LOG("state %u result %d failed_node %d", st.state, st.result,
		       st.failed_node);
		for (int i = 0; i < 5; i++)
			TH_LOG("node %d: engine %u result %d start %llu end %llu", i,
			       ns[i].engine, ns[i].result,
			       (unsigned long long)ns[i].start_ns,
			       (unsigned long long)ns[i].end_ns);
	}
	for (int i = 0; i < 2; i++) {
		worker_stop(&w[i]);
		EXPECT_EQ(0, atomic_load(&w[i].read_errors));
	}
	EXPECT_EQ(800, ok);
	EXPECT_EQ(1600, atomic_load(&w[0].jobs) + atomic_load(&w[1].jobs));
	EXPECT_EQ(0, graph_destroy(self->fd, c.handle));
}

/* An execution waits for its in-fence: a DMA job filling its input. */
TEST_F_TIMEOUT(graph, in_fence_from_dma, 60)
{
	struct mcp_graph_case_graph g;
	struct mcp_graph_create c;
	struct mcp_graph_exec e;
	struct mcp_dma_submit s;
	__u32 bo[3], src, big[2];
	float *in, *out, *data;
	void *work;
	int dma[2], fence;

	build_kernel_diamond(&g);
	ASSERT_EQ(0, create_graph(&self->bos, &g, bo, &c));
	in = bos_ptr(&self->bos, bo[0], 0);
	work = bos_ptr(&self->bos, bo[1], 0);
	out = bos_ptr(&self->bos, bo[2], 0);
	data = bos_add(&self->bos, 4096, -1, &src);
	ASSERT_NE(NULL, data);
	fill_input(data, KD_N, 7);
	memset(in, 0, 4096);
	ASSERT_EQ(0, bo_create_on(self->fd, 32 * MIB, -1, &big[0]));
	ASSERT_EQ(0, bo_create_on(self->fd, 32 * MIB, -1, &big[1]));

	/* A long copy first, then the input copy waiting for it. */
	memset(&s, 0, sizeof(s));
	s.size = sizeof(s);
	s.engine = MCP_ENGINE_CPU;
	s.flags = MCP_DMA_ASYNC;
	s.src_handle = big[0];
	s.dst_handle = big[1];
	s.length = 32 * MIB;
	s.out_fence = -1;
	ASSERT_EQ(0, mcp_ioctl(self->fd, MCP_IOC_DMA_SUBMIT, &s));
	dma[0] = s.out_fence;
	s.flags = MCP_DMA_ASYNC | MCP_DMA_IN_FENCE;
	s.in_fence = dma[0];
	s.src_handle = src;
	s.dst_handle = bo[0];
	s.length = 4096;
	s.out_fence = -1;
	ASSERT_EQ(0, mcp_ioctl(self->fd, MCP_IOC_DMA_SUBMIT, &s));
	dma[1] = s.out_fence;

	exec_arg(&e, c.handle, NULL, 0);
	e.flags = MCP_GRAPH_EXEC_IN_FENCE;
	e.in_fence = dma[1];
	fence = graph_exec(self->fd, &e);
	ASSERT_LE(0, fence) TH_LOG("%s", strerror(-fence));
	EXPECT_EQ(1, fence_finish(fence, 20000));
	EXPECT_EQ(1, fence_status(dma[1]));
	EXPECT_EQ(-1, check_kernel_diamond(data, work, out));
	check_kd_status(_metadata, self->fd, e.exec_id);
	close(dma[0]);
	close(dma[1]);
	bo_destroy(self->fd, big[0]);
	bo_destroy(self->fd, big[1]);
	EXPECT_EQ(0, graph_destroy(self->fd, c.handle));
}

/*
 * The table's in-place ordering case run: node 0 COPY t1 -> t2, node 1
 * ADD (t1, t2) -> t1 in place.  Index order (0 then 1) gives t1 = 2 x;
 * the data edge alone (node 1 writes what node 0 reads) would run node 1
 * first and leave t1 = x + 0.
 */
TEST_F_TIMEOUT(graph, inplace_order_runs, 60)
{
	struct mcp_graph_case_graph g;
	struct mcp_graph_create c;
	struct mcp_graph_exec e;
	struct mcp_graph_node_status ns[2];
	struct mcp_graph_status st;
	struct worker w;
	float *t1, *t2;
	__u32 bo[1];
	int fence;

	mcp_graph_case_init(&g);
	mcp_gc_valid_inplace_order(&g);
	ASSERT_EQ(0, create_graph(&self->bos, &g, bo, &c));
	t1 = bos_ptr(&self->bos, bo[0], 64);
	t2 = bos_ptr(&self->bos, bo[0], 128);
	for (int i = 0; i < 16; i++)
		t1[i] = (float)(i + 1);
	worker_init(&w, self->fd, &self->bos, -1);
	ASSERT_EQ(0, worker_start(&w));
	exec_arg(&e, c.handle, NULL, 0);
	fence = graph_exec(self->fd, &e);
	ASSERT_LE(0, fence);
	EXPECT_EQ(1, fence_finish(fence, 10000));
	worker_stop(&w);
	for (int i = 0; i < 16; i++) {
		EXPECT_EQ((float)(i + 1), t2[i]) TH_LOG("t2[%d]", i);
		EXPECT_EQ((float)(2 * (i + 1)), t1[i]) TH_LOG("t1[%d]", i);
	}
	ASSERT_EQ(0, graph_status(self->fd, e.exec_id, ns, 2, &st));
	EXPECT_LE(ns[0].end_ns, ns[1].start_ns);
	EXPECT_EQ(0, graph_destroy(self->fd, c.handle));
}

/* A failed in-fence fails the execution before any node runs. */
TEST_F_TIMEOUT(graph, in_fence_error_fails_exec, 60)
{
	struct mcp_graph_case_graph g;
	struct mcp_graph_create c;
	struct mcp_graph_exec e;
	struct mcp_graph_node_status ns[1];
	struct mcp_graph_status st;
	__u32 bo[1];
	int first, fence;

	build_wnop(&g);
	ASSERT_EQ(0, create_graph(&self->bos, &g, bo, &c));
	exec_arg(&e, c.handle, NULL, 0);
	e.timeout_ms = 100;
	first = graph_exec(self->fd, &e);
	ASSERT_LE(0, first);
	exec_arg(&e, c.handle, NULL, 0);
	e.flags = MCP_GRAPH_EXEC_IN_FENCE;
	e.in_fence = first;
	fence = graph_exec(self->fd, &e);
	ASSERT_LE(0, fence);
	EXPECT_EQ(-ETIMEDOUT, fence_finish(first, 10000));
	EXPECT_GT(0, fence_finish(fence, 10000));
	ASSERT_EQ(0, graph_status(self->fd, e.exec_id, ns, 1, &st));
	EXPECT_EQ(MCP_GRAPH_STATE_FAILED, st.state);
	EXPECT_EQ(0, ns[0].start_ns);
	EXPECT_EQ(0, graph_destroy(self->fd, c.handle));
}

/* ---- NUMA placement of worker jobs (4node VM) ---- */

/* Nodes with CPUs into nodes[]: their count. */
static int cpu_nodes(int *nodes, int max)
{
	unsigned char set[64] = { 0 };
	char buf[256];
	int n = 0;

	if (mcp_read_file("/sys/devices/system/node/has_cpu", buf, sizeof(buf)) <= 0 ||
	    mcp_parse_list(buf, set, 64) < 0)
		return 0;
	for (int i = 0; i < 64 && n < max; i++)
		if (set[i])
			nodes[n++] = i;
	return n;
}

/* SLIT distance from node a to b, or -1. */
static int node_distance(int a, int b)
{
	char path[128], buf[256], *p = buf, *end;
	int i = 0;

	snprintf(path, sizeof(path), "/sys/devices/system/node/node%d/distance", a);
	if (mcp_read_file(path, buf, sizeof(buf)) <= 0)
		return -1;
	for (;;) {
		long v = strtol(p, &end, 10);

		if (end == p)
			return -1;
		if (i++ == b)
			return (int)v;
		p = end;
	}
}

/* One ADD worker node reading and writing a BO on node @node. */
static int run_on_node(struct __test_metadata *_metadata, struct bos *b,
		       int node, struct mcp_graph_node_status *ns)
{
	struct mcp_graph_case_graph g;
	struct mcp_graph_create c;
	struct mcp_graph_exec e;
	struct mcp_graph_status st;
	float *p;
	__u32 bo;
	int fence, ret;

	mcp_graph_case_init(&g);
	mcp_graph_case_buffer(&g, 4096, 0);
	mcp_graph_case_tensor(&g, 0, MCP_DTYPE_F32, 0, 1, 64);
	mcp_graph_case_tensor(&g, 0, MCP_DTYPE_F32, 256, 1, 64);
	mcp_graph_case_node(&g, MCP_OP_ADD, MCP_GRAPH_ENGINE_WORKER, 2, 1, 0, 0, 1);
	p = bos_add(b, 4096, node, &bo);
	if (!p)
		return -ENOMEM;
	for (int i = 0; i < 64; i++)
		p[i] = (float)i;
	{
		static uint8_t bytes[MCP_GRAPH_CASE_MAX_BYTES];
		size_t len = mcp_graph_case_emit(&g, bytes, sizeof(bytes));

		create_arg(&c, bytes, len, &bo, 1);
		ret = mcp_ioctl(b->fd, MCP_IOC_GRAPH_CREATE, &c);
		if (ret)
			return ret;
	}
	exec_arg(&e, c.handle, NULL, 0);
	fence = graph_exec(b->fd, &e);
	if (fence < 0)
		return fence;
	ret = fence_finish(fence, 10000);
	if (ret == 1)
		ret = graph_status(b->fd, e.exec_id, ns, 1, &st);
	graph_destroy(b->fd, c.handle);
	if (!ret && p[64 + 10] != 20.0f)
		ret = -EIO;
	return ret;
}

TEST_F_TIMEOUT(graph, jobs_run_on_data_node, 120)
{
	int nodes[8], n = cpu_nodes(nodes, 8);
	struct worker w[8];
	struct mcp_graph_node_status ns;

	if (n < 2)
		SKIP(return, "one node with CPUs: no placement to check");
	for (int i = 0; i < n; i++) {
		worker_init(&w[i], self->fd, &self->bos, nodes[i]);
		ASSERT_EQ(0, worker_start(&w[i])) TH_LOG("node %d", nodes[i]);
		EXPECT_EQ(nodes[i], w[i].reg_node);
	}
	/*
	 * Workers everywhere: the job runs where its data is.  Data only on
	 * nodes with memory; a memoryless node's workers still serve.
	 */
	for (int i = 0; i < n; i++) {
		if (!mcp_node_has_memory(nodes[i]))
			continue;
		ASSERT_EQ(0, run_on_node(_metadata, &self->bos, nodes[i], &ns))
			TH_LOG("node %d", nodes[i]);
		EXPECT_EQ(nodes[i], ns.numa_node);
		EXPECT_EQ(w[i].tid, ns.worker_tid) TH_LOG("data on node %d", nodes[i]);
	}
	/* No worker on the data's node: the nearest one with workers. */
	for (int i = 0; i < n; i++) {
		int best = -1;

		if (!mcp_node_has_memory(nodes[i]))
			continue;
		worker_stop(&w[i]);
		for (int k = 0; k < n; k++) {
			int d = node_distance(nodes[i], nodes[k]);

			if (k != i && (best < 0 || d < node_distance(nodes[i], nodes[best])))
				best = k;
		}
		ASSERT_EQ(0, run_on_node(_metadata, &self->bos, nodes[i], &ns))
			TH_LOG("node %d", nodes[i]);
		/* Any node at the nearest distance will do. */
		EXPECT_EQ(node_distance(nodes[i], nodes[best]),
			  node_distance(nodes[i], ns.numa_node))
			TH_LOG("data on node %d ran on node %d", nodes[i], ns.numa_node);
		EXPECT_NE(nodes[i], ns.numa_node);
		ASSERT_EQ(0, worker_start(&w[i]));
	}
	for (int i = 0; i < n; i++)
		worker_stop(&w[i]);
}

/*
 * An op the kernel has never heard of, in the worker range, on a WORKER
 * node: with MCP_FEAT_WORKER_OPS, GRAPH_CREATE takes it with any slot
 * counts, shapes and parameters that stay inside their buffers and blob,
 * and a worker's read delivers it as given (op code, tensors, parameter
 * bytes).  Still refused: an op outside the worker range, a worker op on
 * the cpu engine, parameters over MCP_GRAPH_MAX_PARAM, aliasing.
 */
TEST_F_TIMEOUT(graph, unknown_worker_op_is_opaque, 60)
{
	static const uint8_t param[12] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12 };
	struct mcp_version v = { .size = sizeof(v) };
	struct mcp_graph_case_graph g;
	struct mcp_worker_job job;
	struct mcp_graph_create c;
	struct mcp_graph_exec e;
	__u32 bo[1];
	int wfd, fence;

	ASSERT_EQ(0, mcp_ioctl(self->fd, MCP_IOC_GET_VERSION, &v));
	EXPECT_TRUE(v.features & MCP_FEAT_WORKER_OPS);
	/* Op 4000 over an I8 [3] and an F32 [2][5]: no worker rule holds. */
	mcp_graph_case_init(&g);
	mcp_graph_case_buffer(&g, 4096, 0);
	mcp_graph_case_tensor(&g, 0, MCP_DTYPE_I8, 0, 1, 3);
	mcp_graph_case_tensor(&g, 0, MCP_DTYPE_F32, 64, 2, 2, 5);
	mcp_graph_case_tensor(&g, 0, MCP_DTYPE_U8, 128, 1, 7);
	mcp_graph_case_node(&g, 4000, MCP_GRAPH_ENGINE_WORKER, 2, 1, 0, 1, 2);
	mcp_graph_case_param(&g, 0, param, sizeof(param));
	ASSERT_EQ(0, create_graph(&self->bos, &g, bo, &c))
		TH_LOG("op 4000 refused: reason %u kind %u index %u",
		       c.error_reason, c.error_kind, c.error_index);

	wfd = worker_register(self->fd, -1, NULL);
	ASSERT_LE(0, wfd);
	exec_arg(&e, c.handle, NULL, 0);
	fence = graph_exec(self->fd, &e);
	ASSERT_LE(0, fence);
	ASSERT_EQ(sizeof(job), read(wfd, &job, sizeof(job)));
	EXPECT_EQ(4000, job.op);
	EXPECT_EQ(0, job.node);
	EXPECT_EQ(2, job.n_inputs);
	EXPECT_EQ(1, job.n_outputs);
	EXPECT_EQ(MCP_DTYPE_I8, job.inputs[0].dtype);
	EXPECT_EQ(3, job.inputs[0].dims[0]);
	EXPECT_EQ(2, job.inputs[1].rank);
	EXPECT_EQ(5, job.inputs[1].dims[1]);
	EXPECT_EQ(128, job.outputs[0].offset);
	EXPECT_EQ(sizeof(param), job.param_len);
	EXPECT_EQ(0, memcmp(job.param, param, sizeof(param)));
	EXPECT_EQ(0, job_done(wfd, job.job_id, 0));
	EXPECT_EQ(1, fence_finish(fence, 5000));
	close(wfd);
	EXPECT_EQ(0, graph_destroy(self->fd, c.handle));

	/* The highest op of the range; refusals the kernel keeps. */
	g.nodes[0].op = 65535;
	ASSERT_EQ(0, create_graph(&self->bos, &g, bo, &c));
	EXPECT_EQ(0, graph_destroy(self->fd, c.handle));
	g.nodes[0].op = 63;
	EXPECT_EQ(-EINVAL, create_graph(&self->bos, &g, bo, &c));
	EXPECT_EQ(MCP_GRAPH_ERR_OP, c.error_reason);
	g.nodes[0].op = 4000;
	g.nodes[0].engine = MCP_GRAPH_ENGINE_CPU;
	EXPECT_EQ(-EINVAL, create_graph(&self->bos, &g, bo, &c));
	EXPECT_EQ(MCP_GRAPH_ERR_ENGINE, c.error_reason);
	g.nodes[0].engine = MCP_GRAPH_ENGINE_WORKER;
	g.nodes[0].outputs[0] = 0;	/* onto in0, not in place */
	EXPECT_EQ(-EINVAL, create_graph(&self->bos, &g, bo, &c));
	EXPECT_EQ(MCP_GRAPH_ERR_ALIAS, c.error_reason);
	g.nodes[0].outputs[0] = 2;
	g.tensors[2].offset = 4096 - 64 + 8;	/* past the buffer (unaligned) */
	EXPECT_EQ(-EINVAL, create_graph(&self->bos, &g, bo, &c));
	EXPECT_EQ(MCP_GRAPH_ERR_TENSOR, c.error_reason);
	g.tensors[2].offset = 4096;
	EXPECT_EQ(-EINVAL, create_graph(&self->bos, &g, bo, &c));
	EXPECT_EQ(MCP_GRAPH_ERR_BOUNDS, c.error_reason);
}

/* ---- GRAPH_CREATE's cost: memory charged, time, fatal signals ---- */

/* A version 1 graph of one buffer built in place, for graphs over 64 nodes */
struct raw_graph {
	uint8_t *bytes;
	size_t len;
	struct mcp_graph_tensor *t;
	struct mcp_graph_node *n;
};

static int raw_graph_init(struct raw_graph *r, __u64 buf_len, __u32 n_tensors,
			  __u32 n_nodes)
{
	struct mcp_graph_header *h;
	struct mcp_graph_buffer *b;

	r->len = sizeof(*h) + sizeof(*b) + n_tensors * sizeof(*r->t) +
		 n_nodes * sizeof(*r->n);
	r->bytes = calloc(1, r->len);
	if (!r->bytes)
		return -ENOMEM;
	h = (struct mcp_graph_header *)r->bytes;
	h->magic = MCP_GRAPH_MAGIC;
	h->version = MCP_GRAPH_VERSION;
	h->header_size = sizeof(*h);
	h->n_buffers = 1;
	h->n_tensors = n_tensors;
	h->n_nodes = n_nodes;
	h->total_len = r->len;
	b = (struct mcp_graph_buffer *)(h + 1);
	b->length = buf_len;
	r->t = (struct mcp_graph_tensor *)(b + 1);
	r->n = (struct mcp_graph_node *)(r->t + n_tensors);
	return 0;
}

/* Tensor @i: @elems f32 at @offset of the buffer. */
static void raw_tensor(struct raw_graph *r, __u32 i, __u64 offset, __u32 elems)
{
	r->t[i].dtype = MCP_DTYPE_F32;
	r->t[i].rank = 1;
	r->t[i].layout = MCP_LAYOUT_DENSE;
	r->t[i].offset = offset;
	r->t[i].dims[0] = elems;
}

/* Node @i: a WNOP worker node reading @in and writing @out (-1: none). */
static void raw_node(struct raw_graph *r, __u32 i, int in, int out,
		     __u8 flags)
{
	r->n[i].op = MCP_OP_WNOP;
	r->n[i].engine = MCP_GRAPH_ENGINE_WORKER;
	r->n[i].flags = flags;
	r->n[i].n_inputs = in >= 0;
	r->n[i].inputs[0] = in >= 0 ? in : 0;
	r->n[i].n_outputs = out >= 0;
	r->n[i].outputs[0] = out >= 0 ? out : 0;
}

/* @n in-place nodes on one 64-byte tensor: k * (k - 1) / 2 ordered pairs. */
static int build_inplace_pile(struct raw_graph *r, __u32 n)
{
	if (raw_graph_init(r, 4096, 1, n))
		return -ENOMEM;
	raw_tensor(r, 0, 0, 16);
	for (__u32 i = 0; i < n; i++)
		raw_node(r, i, 0, 0, MCP_GRAPH_NODE_INPLACE);
	return 0;
}

/*
 * @n writers of 64 bytes each and @n readers of all of them: n * n real
 * edges, the most work a graph of 2n nodes can ask for.
 */
static int build_all_read_all(struct raw_graph *r, __u32 n)
{
	if (raw_graph_init(r, 64ULL * n, n + 1, 2 * n))
		return -ENOMEM;
	for (__u32 i = 0; i < n; i++) {
		raw_tensor(r, i, 64ULL * i, 16);
		raw_node(r, i, -1, i, 0);
		raw_node(r, n + i, n, -1, 0);
	}
	raw_tensor(r, n, 0, 16 * n);
	return 0;
}

static int raw_create(int fd, const struct raw_graph *r, __u32 bo,
		      __u32 *handle)
{
	struct mcp_graph_create c;
	int ret;

	create_arg(&c, r->bytes, r->len, &bo, 1);
	ret = mcp_ioctl(fd, MCP_IOC_GRAPH_CREATE, &c);
	*handle = c.handle;
	return ret;
}

#define GRAPH_CG_ROOT	"/sys/fs/cgroup"
#define GRAPH_CG_DIR	GRAPH_CG_ROOT "/mcp_graph_test"

/* Child exit codes of inplace_pile_in_small_memcg */
enum { PILE_OK, PILE_ENOMEM, PILE_SETUP, PILE_ERROR, PILE_SLOW };

/*
 * 2048 in-place nodes on the same bytes (a 98 KB graph): the pairwise
 * rule orders 2 million pairs.  Inside a memory cgroup of 16 MiB the
 * create must be done within 2 s (with the graph, or with -ENOMEM
 * charged to the cgroup), never stall.  The old sweep took 41 s, an RCU
 * stall and 66 MB that the cgroup did not see.
 */
TEST_F_TIMEOUT(graph, inplace_pile_in_small_memcg, 180)
{
	char buf[4096];
	struct raw_graph r;
	int status, ret;
	pid_t pid;

	if (mcp_read_file(GRAPH_CG_ROOT "/cgroup.controllers", buf, sizeof(buf)) <= 0 ||
	    !strstr(buf, "memory"))
		SKIP(return, "needs cgroup v2 with the memory controller");
	ASSERT_EQ(0, mcp_write_file(GRAPH_CG_ROOT "/cgroup.subtree_control", "+memory"));
	ASSERT_TRUE(mkdir(GRAPH_CG_DIR, 0755) == 0 || errno == EEXIST);
	ASSERT_EQ(0, mcp_write_file(GRAPH_CG_DIR "/memory.max", "16777216"));
	ASSERT_EQ(0, build_inplace_pile(&r, 2048));

	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		__u32 bo, handle;
		__u64 t0, ns;
		int fd;

		if (mcp_write_file(GRAPH_CG_DIR "/cgroup.procs", "0"))
			_exit(PILE_SETUP);
		fd = mcp_open();
		if (fd < 0 || bo_create_on(fd, 4096, -1, &bo))
			_exit(PILE_SETUP);
		t0 = now_ns();
		ret = raw_create(fd, &r, bo, &handle);
		ns = now_ns() - t0;
		fprintf(stderr, "# 2048 in-place nodes: %d in %llu ms\n", ret,
			(unsigned long long)(ns / 1000000));
		if (ns > 2000000000ULL)
			_exit(PILE_SLOW);
		_exit(!ret ? PILE_OK : ret == -ENOMEM ? PILE_ENOMEM : PILE_ERROR);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	free(r.bytes);
	if (mcp_read_file(GRAPH_CG_DIR "/memory.events", buf, sizeof(buf)) > 0)
		TH_LOG("memory.events: %s", buf);
	rmdir(GRAPH_CG_DIR);
	ASSERT_TRUE(WIFEXITED(status)) TH_LOG("child killed by signal %d",
					      WTERMSIG(status));
	/*
	 * -ENOMEM charged to the cgroup would be a correct answer too, but
	 * this graph needs a chain of 2047 edges: it fits.
	 */
	EXPECT_EQ(PILE_OK, WEXITSTATUS(status))
		TH_LOG("child: %s", WEXITSTATUS(status) == PILE_SLOW ? "over 2 s" :
		       WEXITSTATUS(status) == PILE_SETUP ? "setup failed" :
		       WEXITSTATUS(status) == PILE_ENOMEM ? "-ENOMEM" :
		       "GRAPH_CREATE failed");
}

/*
 * A graph that takes a while to validate (1024 readers of 1024 writers:
 * a million edges; max_dep_work raised for it): SIGKILL of a task inside
 * GRAPH_CREATE ends it promptly, not when the validation is done.  One
 * create, timed, says how long "a while" is; the child is killed half-way
 * into one and must be gone within a quarter of it.
 */
TEST_F_TIMEOUT(graph, sigkill_ends_a_long_create, 300)
{
	long long work = knob_read("max_dep_work");
	__u64 t0, create_ns, reap_ns;
	int go[2], status, ret;
	struct raw_graph r;
	__u32 bo, handle;
	pid_t pid;
	char c;

	/* An old module has no such knob and no bound: nothing to raise. */
	if (work > 0)
		ASSERT_EQ(0, knob_write("max_dep_work", 1 << 22));
	ASSERT_EQ(0, build_all_read_all(&r, 1024));
	ASSERT_NE(NULL, bos_add(&self->bos, 64 * 1024, -1, &bo));
	t0 = now_ns();
	ret = raw_create(self->fd, &r, bo, &handle);
	create_ns = now_ns() - t0;
	ASSERT_EQ(0, ret);
	EXPECT_EQ(0, graph_destroy(self->fd, handle));
	TH_LOG("one create: %llu ms", (unsigned long long)(create_ns / 1000000));

	ASSERT_EQ(0, pipe(go));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		close(go[0]);
		for (;;) {
			if (write(go[1], "x", 1) != 1)
				_exit(1);
			if (raw_create(self->fd, &r, bo, &handle) ||
			    graph_destroy(self->fd, handle))
				_exit(2);
		}
	}
	close(go[1]);
	ASSERT_EQ(1, read(go[0], &c, 1));
	usleep(create_ns / 2000);
	t0 = now_ns();
	ASSERT_EQ(0, kill(pid, SIGKILL));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	reap_ns = now_ns() - t0;
	close(go[0]);
	free(r.bytes);
	if (work > 0)
		knob_write("max_dep_work", work);
	ASSERT_TRUE(WIFSIGNALED(status));
	TH_LOG("killed half-way into a %llu ms create, gone after %llu ms",
	       (unsigned long long)(create_ns / 1000000),
	       (unsigned long long)(reap_ns / 1000000));
	EXPECT_LT(reap_ns, create_ns / 4);
}

/* The work bound: one over it is refused as a limit, the knob's range. */
TEST_F(graph, dep_work_bound)
{
	long long work = knob_read("max_dep_work");
	struct mcp_graph_create c;
	struct raw_graph r;
	__u32 bo;

	ASSERT_LT(0, work) TH_LOG("max_dep_work not readable");
	/* 32 writers, 32 readers: each reader covers 32 ranges; 32 + 32 * 32. */
	ASSERT_EQ(0, build_all_read_all(&r, 32));
	ASSERT_NE(NULL, bos_add(&self->bos, 64 * 32, -1, &bo));
	ASSERT_EQ(0, knob_write("max_dep_work", 32 + 32 * 32 - 1));
	create_arg(&c, r.bytes, r.len, &bo, 1);
	EXPECT_EQ(-EINVAL, mcp_ioctl(self->fd, MCP_IOC_GRAPH_CREATE, &c));
	EXPECT_EQ(MCP_GRAPH_ERR_LIMIT, c.error_reason);
	EXPECT_EQ(MCP_GRAPH_AT_HEADER, c.error_kind);
	ASSERT_EQ(0, knob_write("max_dep_work", 32 + 32 * 32));
	create_arg(&c, r.bytes, r.len, &bo, 1);
	EXPECT_EQ(0, mcp_ioctl(self->fd, MCP_IOC_GRAPH_CREATE, &c));
	EXPECT_EQ(0, graph_destroy(self->fd, c.handle));
	EXPECT_EQ(-EINVAL, knob_write("max_dep_work", 0));
	EXPECT_EQ(-EINVAL, knob_write("max_dep_work", (1LL << 26) + 1));
	EXPECT_EQ(0, knob_write("max_dep_work", work));
	free(r.bytes);
}

/* ---- The edu device fd: COPY on its DMA engine ---- */

FIXTURE(edu_graph) {
	int fd;
	struct bos bos;
	char addr[MCP_PCI_ADDR_LEN];
	struct mcp_dev_info info;
};

FIXTURE_SETUP(edu_graph)
{
	int idx;

	ASSERT_EQ(0, mcp_ensure_loaded());
	self->bos.fd = -1;
	self->fd = mcp_open();
	ASSERT_LE(0, self->fd);
	ASSERT_TRUE(has_graphs(self->fd)) TH_LOG("MCP_FEAT_GRAPHS not reported");
	ASSERT_EQ(0, mcp_pci_find(EDU_VENDOR, EDU_DEVICE, self->addr))
		TH_LOG("no edu device in the VM");
	idx = mcp_dev_ensure_listed(self->fd, self->addr, &self->info);
	ASSERT_LE(0, idx);
	self->bos.fd = mcp_dev_open(self->fd, idx);
	ASSERT_LE(0, self->bos.fd);
}

FIXTURE_TEARDOWN(edu_graph)
{
	if (self->bos.fd >= 0) {
		bos_release(&self->bos);
		close(self->bos.fd);
	}
	if (self->fd >= 0)
		close(self->fd);
	EXPECT_EQ(0, mcp_counter_settles("graph_execs_in_flight", 0));
	EXPECT_EQ(0, mcp_counter_settles("dma_jobs_in_flight", 0));
}

/*
 * in (U8 [6000], buffer 0) -> COPY on the device engine -> mid (buffer 1)
 * -> COPY on the cpu engine -> out (buffer 1 at 8 KiB).
 */
TEST_F_TIMEOUT(edu_graph, device_copy, 60)
{
	struct mcp_graph_case_graph g;
	struct mcp_graph_create c;
	struct mcp_graph_exec e;
	struct mcp_graph_node_status ns[2];
	struct mcp_graph_status st;
	unsigned char *in, *mid;
	__u32 bo[2];
	int fence;

	mcp_graph_case_init(&g);
	mcp_graph_case_buffer(&g, 8192, MCP_GRAPH_BUF_INPUT);
	mcp_graph_case_buffer(&g, 16384, MCP_GRAPH_BUF_OUTPUT);
	mcp_graph_case_tensor(&g, 0, MCP_DTYPE_U8, 0, 1, 6000);
	mcp_graph_case_tensor(&g, 1, MCP_DTYPE_U8, 0, 1, 6000);
	mcp_graph_case_tensor(&g, 1, MCP_DTYPE_U8, 8192, 1, 6000);
	mcp_graph_case_node(&g, MCP_OP_COPY, MCP_GRAPH_ENGINE_DEVICE, 1, 1, 0, 1);
	mcp_graph_case_node(&g, MCP_OP_COPY, MCP_GRAPH_ENGINE_CPU, 1, 1, 1, 2);
	ASSERT_EQ(0, create_graph(&self->bos, &g, bo, &c))
		TH_LOG("reason %u kind %u index %u", c.error_reason, c.error_kind,
		       c.error_index);
	in = bos_ptr(&self->bos, bo[0], 0);
	mid = bos_ptr(&self->bos, bo[1], 0);
	for (int i = 0; i < 6000; i++)
		in[i] = (unsigned char)(i * 7 + 3);

	exec_arg(&e, c.handle, NULL, 0);
	fence = graph_exec(self->bos.fd, &e);
	ASSERT_LE(0, fence) TH_LOG("%s", strerror(-fence));
	EXPECT_EQ(1, fence_finish(fence, 20000));
	EXPECT_EQ(0, memcmp(in, mid, 6000));
	EXPECT_EQ(0, memcmp(in, mid + 8192, 6000));
	ASSERT_EQ(0, graph_status(self->bos.fd, e.exec_id, ns, 2, &st));
	EXPECT_EQ(MCP_GRAPH_STATE_DONE, st.state);
	EXPECT_EQ(MCP_GRAPH_ENGINE_DEVICE, ns[0].engine);
	EXPECT_EQ(MCP_GRAPH_ENGINE_CPU, ns[1].engine);
	EXPECT_LE(ns[0].end_ns, ns[1].start_ns);
	EXPECT_EQ(0, graph_destroy(self->bos.fd, c.handle));
}

/*
 * A DEVICE copy of this fd's graph waits on the shared edu engine behind
 * another context's long DMA job.  Closing the fd stops the execution
 * and returns at once: the node is abandoned and its DMA job cancelled
 * when the engine reaches it.  Before, the close waited in D state for
 * the other context's job, and a worker thread slept on the DMA fence
 * the whole time.
 */
TEST_F_TIMEOUT(edu_graph, close_does_not_wait_on_shared_engine, 60)
{
	struct mcp_graph_case_graph g;
	struct mcp_graph_create c;
	struct mcp_graph_exec e;
	struct mcp_dma_submit s = { .size = sizeof(s) };
	struct mcp_bo_create bc = { .size = sizeof(bc), .length = 65536 };
	__u32 bo[2], src, dst;
	int other, fence, long_fence;
	__u64 t0;

	other = mcp_dev_open(self->fd, self->info.index);
	ASSERT_LE(0, other);
	ASSERT_EQ(0, mcp_ioctl(other, MCP_IOC_BO_CREATE, &bc));
	src = bc.handle;
	ASSERT_EQ(0, mcp_ioctl(other, MCP_IOC_BO_CREATE, &bc));
	dst = bc.handle;
	s.engine = MCP_ENGINE_DEVICE;
	s.src_handle = src;
	s.dst_handle = dst;
	s.length = 65536;
	s.flags = MCP_DMA_ASYNC;
	s.in_fence = -1;
	ASSERT_EQ(0, mcp_ioctl(other, MCP_IOC_DMA_SUBMIT, &s));
	long_fence = s.out_fence;

	mcp_graph_case_init(&g);
	mcp_graph_case_buffer(&g, 4096, MCP_GRAPH_BUF_INPUT);
	mcp_graph_case_buffer(&g, 4096, MCP_GRAPH_BUF_OUTPUT);
	mcp_graph_case_tensor(&g, 0, MCP_DTYPE_U8, 0, 1, 4096);
	mcp_graph_case_tensor(&g, 1, MCP_DTYPE_U8, 0, 1, 4096);
	mcp_graph_case_node(&g, MCP_OP_COPY, MCP_GRAPH_ENGINE_DEVICE, 1, 1, 0, 1);
	ASSERT_EQ(0, create_graph(&self->bos, &g, bo, &c));
	exec_arg(&e, c.handle, NULL, 0);
	fence = graph_exec(self->bos.fd, &e);
	ASSERT_LE(0, fence);
	usleep(300000);

	bos_release(&self->bos);
	t0 = now_ns();
	close(self->bos.fd);
	self->bos.fd = -1;
	EXPECT_GT(500000000ULL, now_ns() - t0)
		TH_LOG("close waited %llu ms", (now_ns() - t0) / 1000000);
	EXPECT_EQ(-ECANCELED, fence_finish(fence, 2000));
	EXPECT_EQ(0, fence_status(long_fence)) TH_LOG("the other job ended early");
	EXPECT_EQ(1, fence_finish(long_fence, 10000));
	close(other);
}

/* The table's device-engine case is valid on a device fd. */
TEST_F(edu_graph, device_engine_accepted)
{
	struct mcp_graph_case_graph g;
	struct mcp_graph_create c;
	__u32 bo[1];

	mcp_graph_case_init(&g);
	mcp_gc_eng_copy_device(&g);
	ASSERT_EQ(0, create_graph(&self->bos, &g, bo, &c))
		TH_LOG("reason %u kind %u index %u", c.error_reason, c.error_kind,
		       c.error_index);
	EXPECT_EQ(0, graph_destroy(self->bos.fd, c.handle));
}

MCP_TEST_MAIN
