// SPDX-License-Identifier: GPL-2.0-only
/*
 * libmcp's graph runtime (the C API over mcp::Runtime) and mcpctl graph
 * against the real module inside the test VM: the demo attention block
 * through the kernel and the worker threads equals a plain C reference
 * written here (max abs error <= 1e-3 after the layer norm; the tiled
 * hand-off copy bit for bit), a diamond, re-execution with other input
 * and output bindings, a chain of worker nodes in each worker mode, run_inline, mcpctl graph build/show/run --json with
 * every documented key, a bad graph file refused with its reason, the
 * kernel and libmcp agreeing on mutated compact graphs, and imported ONNX
 * models (/opt/mcp/onnx) through the kernel equal to run_inline.
 */
#define _GNU_SOURCE
#include <math.h>
#include <poll.h>
#include <sys/wait.h>
#include <time.h>

#include <jansson.h>

/* The selftest helpers and libmcp both have an mcp_open() and an
 * mcp_bar_map(): the helpers' are renamed here.
 */
#define mcp_open mcp_selftest_open
#define mcp_bar_map mcp_selftest_bar_map
#include "mcp_dev.h"
#undef mcp_open
#undef mcp_bar_map

#include <mcp/mcp.h>

/* What the demo's output may differ by: float sums in another order
 * (OpenBLAS vs the loops here) normalised by the layer norm.
 */
#define DEMO_TOLERANCE	1e-3
#define DIAMOND_TOLERANCE 1e-5
#define WAIT_NS		60000000000LL	/* TCG is slow */

FIXTURE(graph) {
	struct mcp_device *dev;
	struct mcp_dma *host;
	struct mcp_runtime *rt;
};

FIXTURE_SETUP(graph)
{
	ASSERT_EQ(0, mcp_ensure_loaded());
	ASSERT_EQ(0, mcp_open(NULL, &self->dev)) TH_LOG("%s", mcp_strerror_last());
	ASSERT_EQ(0, mcp_dma_open_host(self->dev, &self->host)) TH_LOG("%s", mcp_strerror_last());
	ASSERT_EQ(0, mcp_runtime_new(self->host, NULL, &self->rt)) TH_LOG("%s", mcp_strerror_last());
}

FIXTURE_TEARDOWN(graph)
{
	mcp_runtime_free(self->rt);
	mcp_dma_close(self->host);
	mcp_close(self->dev);
}

/* ---- the plain C reference ---- */

static int find_tensor(const struct mcp_graph_def *g, const char *name,
		       struct mcp_graph_tensor_info *t)
{
	uint32_t i, n = mcp_graph_tensor_count(g);

	for (i = 0; i < n; i++) {
		t->size = sizeof(*t);
		if (!mcp_graph_get_tensor(g, i, t) && !strcmp(t->name, name))
			return 0;
	}
	return -1;
}

/* Buffer @index filled from its init, in memory of its own. */
static void *filled_copy(const struct mcp_graph_def *g, uint32_t index)
{
	struct mcp_graph_buffer_info b = { .size = sizeof(b) };
	void *p;

	if (mcp_graph_get_buffer(g, index, &b))
		return NULL;
	p = calloc(1, b.length);
	if (p && b.has_init)
		mcp_graph_fill(&b.init, b.init.kind == MCP_GRAPH_INIT_UNIFORM_I8 ?
			       MCP_GRAPH_DTYPE_I8 : MCP_GRAPH_DTYPE_F32, p, b.length);
	return p;
}

/* Tensor @name of the demo in the reference's copies of the buffers. */
static float *ref_tensor(const struct mcp_graph_def *g, void **bufs, const char *name)
{
	struct mcp_graph_tensor_info t;

	if (find_tensor(g, name, &t))
		return NULL;
	return (float *)((char *)bufs[t.buffer] + t.offset);
}

/* c[m][n] = alpha * a[m][k] x (tb ? b[n][k]^T : b[k][n]) (+ bias[n]) */
static void ref_matmul(const float *a, const float *b, const float *bias, float *c, int m,
		       int k, int n, int tb, float alpha)
{
	int i, j, p;

	for (i = 0; i < m; i++)
		for (j = 0; j < n; j++) {
			double s = 0;

			for (p = 0; p < k; p++)
				s += (double)a[i * k + p] * (tb ? b[j * k + p] : b[p * n + j]);
			c[i * n + j] = (float)(alpha * s + (bias ? bias[j] : 0));
		}
}

/*
 * The demo block of graphs.rst ("Demo block") from its definition:
 * X through int8 and back (scale 1/127), per head Q/K/V projections with
 * bias, scores Q K^T / sqrt(dh), softmax, context, output projection (the
 * bias once), the heads summed, the residual X, layer norm (eps 1e-5).
 * Writes out[S][Dm] and tiled[S/16][Dm][16].
 */
static void ref_demo(const struct mcp_graph_def *g, int S, int Dm, int H, int dh, float *out,
		     float *tiled)
{
	uint32_t i, nb = mcp_graph_buffer_count(g);
	void *bufs[16] = { 0 };
	const float *x, *gamma, *beta, *bo;
	float *xdq, *q, *k, *v, *sc, *ctx, *proj, *sum;
	char name[32];
	int h, r, c;

	for (i = 0; i < nb && i < 16; i++)
		bufs[i] = filled_copy(g, i);
	x = ref_tensor(g, bufs, "x");
	gamma = ref_tensor(g, bufs, "gamma");
	beta = ref_tensor(g, bufs, "beta");
	bo = ref_tensor(g, bufs, "bo");
	xdq = calloc(S * Dm, sizeof(float));
	q = calloc(S * dh, sizeof(float));
	k = calloc(S * dh, sizeof(float));
	v = calloc(S * dh, sizeof(float));
	sc = calloc(S * S, sizeof(float));
	ctx = calloc(S * dh, sizeof(float));
	proj = calloc(S * Dm, sizeof(float));
	sum = calloc(S * Dm, sizeof(float));
	for (i = 0; i < (uint32_t)(S * Dm); i++) {
		/* the quotient by the f32 scale, as the kernel rounds it */
		double qv = rint((double)x[i] / (double)(1.0f / 127.0f));

		qv = qv < -128 ? -128 : qv > 127 ? 127 : qv;
		/* through int8 as the graph does: no -0.0 */
		xdq[i] = (float)(int8_t)qv * (1.0f / 127.0f);
	}
	/* NHWC [1][16][S/16][Dm] tiled: out[0][s][d][h] = in[0][h][s][d] */
	for (h = 0; h < 16; h++)
		for (r = 0; r < S / 16; r++)
			for (c = 0; c < Dm; c++)
				tiled[(r * Dm + c) * 16 + h] = xdq[(h * (S / 16) + r) * Dm + c];
	for (h = 0; h < H; h++) {
		snprintf(name, sizeof(name), "wq%d", h);
		const float *wq = ref_tensor(g, bufs, name);
		snprintf(name, sizeof(name), "bq%d", h);
		const float *bq = ref_tensor(g, bufs, name);
		snprintf(name, sizeof(name), "wk%d", h);
		const float *wk = ref_tensor(g, bufs, name);
		snprintf(name, sizeof(name), "bk%d", h);
		const float *bk = ref_tensor(g, bufs, name);
		snprintf(name, sizeof(name), "wv%d", h);
		const float *wv = ref_tensor(g, bufs, name);
		snprintf(name, sizeof(name), "bv%d", h);
		const float *bv = ref_tensor(g, bufs, name);
		snprintf(name, sizeof(name), "wo%d", h);
		const float *wo = ref_tensor(g, bufs, name);

		ref_matmul(xdq, wq, bq, q, S, Dm, dh, 0, 1.0f);
		ref_matmul(xdq, wk, bk, k, S, Dm, dh, 0, 1.0f);
		ref_matmul(xdq, wv, bv, v, S, Dm, dh, 0, 1.0f);
		ref_matmul(q, k, NULL, sc, S, dh, S, 1, 1.0f / sqrtf((float)dh));
		for (r = 0; r < S; r++) {
			float *row = sc + r * S, max = row[0];
			double tot = 0;

			for (c = 1; c < S; c++)
				max = row[c] > max ? row[c] : max;
			for (c = 0; c < S; c++) {
				row[c] = expf(row[c] - max);
				tot += row[c];
			}
			for (c = 0; c < S; c++)
				row[c] = (float)(row[c] / tot);
		}
		ref_matmul(sc, v, NULL, ctx, S, S, dh, 0, 1.0f);
		ref_matmul(ctx, wo, h == 0 ? bo : NULL, proj, S, dh, Dm, 0, 1.0f);
		for (i = 0; i < (uint32_t)(S * Dm); i++)
			sum[i] += proj[i];
	}
	for (r = 0; r < S; r++) {
		double mean = 0, var = 0;
		float *row = sum + r * Dm;

		for (c = 0; c < Dm; c++) {
			row[c] += xdq[r * Dm + c];
			mean += row[c];
		}
		mean /= Dm;
		for (c = 0; c < Dm; c++)
			var += (row[c] - mean) * (row[c] - mean);
		var /= Dm;
		for (c = 0; c < Dm; c++)
			out[r * Dm + c] = (float)((row[c] - mean) / sqrt(var + 1e-5)) * gamma[c] +
					  beta[c];
	}
	for (i = 0; i < nb && i < 16; i++)
		free(bufs[i]);
	free(xdq); free(q); free(k); free(v); free(sc); free(ctx); free(proj); free(sum);
}

static double max_abs_diff(const float *a, const float *b, size_t n)
{
	double worst = 0;
	size_t i;

	for (i = 0; i < n; i++) {
		double d = fabs((double)a[i] - b[i]);

		if (isnan(d))
			return INFINITY;
		worst = d > worst ? d : worst;
	}
	return worst;
}

/* Executes @lg with @binds and waits; the status (nodes at @nodes). */
static int exec_wait(struct __test_metadata *_metadata, struct mcp_runtime *rt,
		     struct mcp_loaded_graph *lg, const struct mcp_graph_bind *binds,
		     uint32_t n_binds, struct mcp_exec_status *st, struct mcp_exec_node *nodes,
		     uint32_t cap)
{
	struct mcp_fence *f = NULL;
	uint64_t id = 0;
	int job_error = -1, ret;

	ret = mcp_runtime_execute(rt, lg, binds, n_binds, NULL, &id, &f);
	EXPECT_EQ(0, ret) TH_LOG("%s", mcp_strerror_last());
	if (ret)
		return ret;
	EXPECT_LT(0, id);
	EXPECT_EQ(0, mcp_fence_wait(f, WAIT_NS, &job_error)) TH_LOG("%s", mcp_strerror_last());
	EXPECT_EQ(0, job_error);
	mcp_fence_free(f);
	st->size = sizeof(*st);
	ret = mcp_runtime_status(rt, id, st, nodes, cap);
	EXPECT_EQ(0, ret) TH_LOG("%s", mcp_strerror_last());
	return ret;
}

TEST_F(graph, demo_block_matches_the_c_reference)
{
	const int S = 64, Dm = 128, H = 4, dh = 32;
	struct mcp_graph_def *def = NULL;
	struct mcp_loaded_graph *lg = NULL;
	struct mcp_graph_invalid err = { .size = sizeof(err) };
	struct mcp_exec_status st;
	struct mcp_exec_node nodes[64];
	float *ref_out, *ref_tiled, *out, *tiled;
	uint64_t len = 0;
	uint32_t i, n, workers = 0, kernel = 0;
	double e;

	ASSERT_EQ(0, mcp_graph_demo_attention(NULL, &def)) TH_LOG("%s", mcp_strerror_last());
	ASSERT_EQ(0, mcp_runtime_load(self->rt, def, &lg, &err))
		TH_LOG("%s / %s", mcp_strerror_last(), err.message);
	EXPECT_LT(0, mcp_loaded_graph_handle(lg));
	ASSERT_EQ(0, exec_wait(_metadata, self->rt, lg, NULL, 0, &st, nodes, 64));
	EXPECT_EQ(MCP_EXEC_DONE, st.state);
	EXPECT_EQ(0, st.result);
	EXPECT_EQ(-1, st.failed_node);
	n = mcp_graph_node_count(def);
	EXPECT_EQ(n, st.n_nodes);
	for (i = 0; i < n && i < 64; i++) {
		struct mcp_graph_node_info ni = { .size = sizeof(ni) };

		ASSERT_EQ(0, mcp_graph_get_node(def, i, &ni));
		EXPECT_EQ(ni.engine, nodes[i].engine) TH_LOG("node %u", i);
		EXPECT_EQ(0, nodes[i].result);
		EXPECT_LE(0, nodes[i].numa_node);
		EXPECT_LT(0, nodes[i].start_ns);
		EXPECT_LE(nodes[i].start_ns, nodes[i].end_ns);
		if (ni.engine == MCP_GRAPH_CLASS_WORKER) {
			EXPECT_LT(0, nodes[i].worker_tid);
			workers++;
		} else {
			kernel++;
		}
	}
	EXPECT_EQ(3, kernel);	/* quantize, dequantize, tile */
	EXPECT_LT(30, workers);

	ref_out = calloc(S * Dm, sizeof(float));
	ref_tiled = calloc(S * Dm, sizeof(float));
	ASSERT_TRUE(ref_out && ref_tiled);
	ref_demo(def, S, Dm, H, dh, ref_out, ref_tiled);
	ASSERT_EQ(0, mcp_loaded_graph_buffer_by_name(lg, "out", (void **)&out, &len));
	ASSERT_LE(S * Dm * sizeof(float), len);
	e = max_abs_diff(out, ref_out, S * Dm);
	EXPECT_LE(e, DEMO_TOLERANCE) TH_LOG("max abs error after layer norm %g", e);
	TH_LOG("demo: max abs error vs the C reference %g (tolerance %g)", e, DEMO_TOLERANCE);
	ASSERT_EQ(0, mcp_loaded_graph_buffer_by_name(lg, "tiled", (void **)&tiled, &len));
	EXPECT_EQ(0, memcmp(tiled, ref_tiled, S * Dm * sizeof(float)));

	mcp_loaded_graph_free(lg);
	mcp_graph_free(def);
	free(ref_out);
	free(ref_tiled);
}

/* in -> relu -> b, in -> gelu -> c, b + c -> out */
static struct mcp_graph_def *diamond(struct __test_metadata *_metadata, uint32_t n)
{
	struct mcp_graph_def *g = NULL;
	uint32_t bin, bmid, bout, a, b, c, d, node, ins[2], outs[1];
	uint32_t dims[1] = { n };

	EXPECT_EQ(0, mcp_graph_new("diamond", &g));
	if (!g)
		return NULL;
	EXPECT_EQ(0, mcp_graph_add_buffer(g, "in", MCP_GRAPH_BUFFER_INPUT, NULL, &bin));
	EXPECT_EQ(0, mcp_graph_add_buffer(g, "mid", 0, NULL, &bmid));
	EXPECT_EQ(0, mcp_graph_add_buffer(g, "out", MCP_GRAPH_BUFFER_OUTPUT, NULL, &bout));
	EXPECT_EQ(0, mcp_graph_add_tensor(g, "a", bin, MCP_GRAPH_DTYPE_F32, dims, 1,
					  MCP_GRAPH_LAYOUT_DENSE, &a));
	EXPECT_EQ(0, mcp_graph_add_tensor(g, "b", bmid, MCP_GRAPH_DTYPE_F32, dims, 1,
					  MCP_GRAPH_LAYOUT_DENSE, &b));
	EXPECT_EQ(0, mcp_graph_add_tensor(g, "c", bmid, MCP_GRAPH_DTYPE_F32, dims, 1,
					  MCP_GRAPH_LAYOUT_DENSE, &c));
	EXPECT_EQ(0, mcp_graph_add_tensor(g, "d", bout, MCP_GRAPH_DTYPE_F32, dims, 1,
					  MCP_GRAPH_LAYOUT_DENSE, &d));
	ins[0] = a;
	outs[0] = b;
	EXPECT_EQ(0, mcp_graph_add_node(g, "relu", MCP_GRAPH_OP_RELU, MCP_GRAPH_CLASS_WORKER, ins,
					1, outs, 1, NULL, 0, 0, &node));
	outs[0] = c;
	EXPECT_EQ(0, mcp_graph_add_node(g, "gelu", MCP_GRAPH_OP_GELU, MCP_GRAPH_CLASS_WORKER, ins,
					1, outs, 1, NULL, 0, 0, &node));
	ins[0] = b;
	ins[1] = c;
	outs[0] = d;
	EXPECT_EQ(0, mcp_graph_add_node(g, "add", MCP_GRAPH_OP_ADD, MCP_GRAPH_CLASS_WORKER, ins, 2,
					outs, 1, NULL, 0, 0, &node));
	EXPECT_EQ(0, mcp_graph_validate(g, NULL, NULL)) TH_LOG("%s", mcp_strerror_last());
	return g;
}

static float diamond_ref(float x)
{
	float gelu = 0.5f * x * (1.0f + tanhf(0.7978845608028654f * (x + 0.044715f * x * x * x)));

	return (x > 0 ? x : 0) + gelu;
}

static void fill_input(float *p, uint32_t n, float phase)
{
	uint32_t i;

	for (i = 0; i < n; i++)
		p[i] = sinf((float)i * 0.37f + phase) * 3.0f;
}

static double diamond_error(const float *in, const float *out, uint32_t n)
{
	double worst = 0;
	uint32_t i;

	for (i = 0; i < n; i++) {
		double d = fabs((double)out[i] - diamond_ref(in[i]));

		worst = d > worst ? d : worst;
	}
	return worst;
}

TEST_F(graph, diamond_runs_in_dependency_order)
{
	const uint32_t n = 1000;
	struct mcp_graph_def *def = diamond(_metadata, n);
	struct mcp_loaded_graph *lg = NULL;
	struct mcp_exec_status st;
	struct mcp_exec_node nodes[3];
	float *in, *out;
	uint64_t len;

	ASSERT_NE(NULL, def);
	ASSERT_EQ(0, mcp_runtime_load(self->rt, def, &lg, NULL)) TH_LOG("%s", mcp_strerror_last());
	ASSERT_EQ(0, mcp_loaded_graph_buffer(lg, 0, (void **)&in, &len));
	fill_input(in, n, 0.0f);
	ASSERT_EQ(0, exec_wait(_metadata, self->rt, lg, NULL, 0, &st, nodes, 3));
	EXPECT_EQ(MCP_EXEC_DONE, st.state);
	ASSERT_EQ(0, mcp_loaded_graph_buffer(lg, 2, (void **)&out, &len));
	EXPECT_LE(diamond_error(in, out, n), DIAMOND_TOLERANCE);
	/* add waits for both branches */
	EXPECT_LE(nodes[0].end_ns, nodes[2].start_ns);
	EXPECT_LE(nodes[1].end_ns, nodes[2].start_ns);
	mcp_loaded_graph_free(lg);
	mcp_graph_free(def);
}

TEST_F(graph, reexecution_with_other_bindings)
{
	const uint32_t n = 4096;
	struct mcp_graph_def *def = diamond(_metadata, n);
	struct mcp_loaded_graph *lg = NULL;
	struct mcp_buffer *in[2] = { 0 }, *out[2] = { 0 };
	float *pin[2], *pout[2], *own_out;
	struct mcp_exec_status st;
	uint64_t len;
	int k;

	ASSERT_NE(NULL, def);
	ASSERT_EQ(0, mcp_runtime_load(self->rt, def, &lg, NULL)) TH_LOG("%s", mcp_strerror_last());
	for (k = 0; k < 2; k++) {
		ASSERT_EQ(0, mcp_buffer_create(self->host, n * sizeof(float), 0, 0, &in[k]));
		ASSERT_EQ(0, mcp_buffer_create(self->host, n * sizeof(float), 0, 0, &out[k]));
		ASSERT_EQ(0, mcp_buffer_data(in[k], (void **)&pin[k]));
		ASSERT_EQ(0, mcp_buffer_data(out[k], (void **)&pout[k]));
		fill_input(pin[k], n, 1.0f + k);
	}
	for (k = 0; k < 2; k++) {
		struct mcp_graph_bind binds[2] = {
			{ .buffer = 0, .with = in[k] },
			{ .buffer = 2, .with = out[k] },
		};

		ASSERT_EQ(0, exec_wait(_metadata, self->rt, lg, binds, 2, &st, NULL, 0));
		EXPECT_EQ(MCP_EXEC_DONE, st.state);
	}
	EXPECT_LE(diamond_error(pin[0], pout[0], n), DIAMOND_TOLERANCE);
	EXPECT_LE(diamond_error(pin[1], pout[1], n), DIAMOND_TOLERANCE);
	EXPECT_NE(0, memcmp(pout[0], pout[1], n * sizeof(float)));
	/* the graph's own output buffer was not written */
	ASSERT_EQ(0, mcp_loaded_graph_buffer(lg, 2, (void **)&own_out, &len));
	EXPECT_EQ(0.0f, own_out[0]);
	EXPECT_EQ(0.0f, own_out[n - 1]);
	for (k = 0; k < 2; k++) {
		mcp_buffer_free(in[k]);
		mcp_buffer_free(out[k]);
	}
	mcp_loaded_graph_free(lg);
	mcp_graph_free(def);
}

TEST_F(graph, loaded_graph_outlives_its_runtime)
{
	const uint32_t n = 256;
	struct mcp_graph_def *def = diamond(_metadata, n);
	struct mcp_loaded_graph *lg = NULL;
	struct mcp_exec_status st;
	float *in, *out;
	uint64_t len;

	ASSERT_NE(NULL, def);
	ASSERT_EQ(0, mcp_runtime_load(self->rt, def, &lg, NULL)) TH_LOG("%s", mcp_strerror_last());
	ASSERT_EQ(0, mcp_loaded_graph_buffer(lg, 0, (void **)&in, &len));
	fill_input(in, n, 3.0f);
	ASSERT_EQ(0, exec_wait(_metadata, self->rt, lg, NULL, 0, &st, NULL, 0));
	EXPECT_EQ(MCP_EXEC_DONE, st.state);
	EXPECT_LE(1, mcp_runtime_worker_count(self->rt));
	/* the workers stop with the runtime; the graph and its memory stay */
	mcp_runtime_free(self->rt);
	self->rt = NULL;
	ASSERT_EQ(0, mcp_loaded_graph_buffer(lg, 2, (void **)&out, &len));
	EXPECT_LE(diamond_error(in, out, n), DIAMOND_TOLERANCE);
	mcp_loaded_graph_free(lg);
	mcp_graph_free(def);
}

/* A chain of @len RELU worker nodes, t0 (buffer "in") to t@len ("out"). */
static struct mcp_graph_def *relu_chain(struct __test_metadata *_metadata, uint32_t n,
					uint32_t len)
{
	struct mcp_graph_def *g = NULL;
	uint32_t bin, bmid, bout, prev, next, node, i;
	uint32_t dims[1] = { n };
	char name[16];

	EXPECT_EQ(0, mcp_graph_new("relu_chain", &g));
	if (!g)
		return NULL;
	EXPECT_EQ(0, mcp_graph_add_buffer(g, "in", MCP_GRAPH_BUFFER_INPUT, NULL, &bin));
	EXPECT_EQ(0, mcp_graph_add_buffer(g, "mid", 0, NULL, &bmid));
	EXPECT_EQ(0, mcp_graph_add_buffer(g, "out", MCP_GRAPH_BUFFER_OUTPUT, NULL, &bout));
	EXPECT_EQ(0, mcp_graph_add_tensor(g, "t0", bin, MCP_GRAPH_DTYPE_F32, dims, 1,
					  MCP_GRAPH_LAYOUT_DENSE, &prev));
	for (i = 1; i <= len; i++) {
		snprintf(name, sizeof(name), "t%u", i);
		EXPECT_EQ(0, mcp_graph_add_tensor(g, name, i == len ? bout : bmid,
						  MCP_GRAPH_DTYPE_F32, dims, 1,
						  MCP_GRAPH_LAYOUT_DENSE, &next));
		EXPECT_EQ(0, mcp_graph_add_node(g, NULL, MCP_GRAPH_OP_RELU, MCP_GRAPH_CLASS_WORKER,
						&prev, 1, &next, 1, NULL, 0, 0, &node));
		prev = next;
	}
	EXPECT_EQ(0, mcp_graph_validate(g, NULL, NULL)) TH_LOG("%s", mcp_strerror_last());
	return g;
}

/* Test hook of libmcp (c_api_runtime.cpp): graphs with chain descriptors. */
uint32_t mcp_runtime_test_graph_descs(const struct mcp_runtime *rt);

/*
 * Each worker mode (a chain per read where the module has job-chains,
 * jobs per read, one job per read) runs a 40-node chain of worker nodes
 * with the same result, in order, each node starting when the one before
 * it ended; mcp_runtime_worker_info() says which mode; the graph's chain
 * descriptors are kept (chain mode only) until the loaded graph goes; the opts' version
 * 0 size, unknown flags and a worker index past the end.
 */
TEST(worker_modes_run_a_chain_alike)
{
	const uint32_t n = 64, len = 40;
	static const struct {
		uint32_t flags, batch, mode;
	} modes[] = {
		{ 0, 0, MCP_RUNTIME_WORKER_CHAINS },
		{ MCP_RUNTIME_NO_CHAINS, 0, MCP_RUNTIME_WORKER_BATCH },
		{ MCP_RUNTIME_NO_CHAINS, 1, MCP_RUNTIME_WORKER_ONE_JOB },
	};
	struct mcp_graph_def *def = relu_chain(_metadata, n, len);
	struct mcp_runtime_worker w = { .size = sizeof(w) };
	struct mcp_exec_node nodes[40];
	struct mcp_exec_status st;
	struct mcp_device *dev = NULL;
	struct mcp_dma *host = NULL;
	uint64_t features = 0, done = 0, blen;
	float *in, *out;
	uint32_t m, i, k;

	ASSERT_NE(NULL, def);
	ASSERT_EQ(0, mcp_ensure_loaded());
	ASSERT_EQ(0, mcp_open(NULL, &dev)) TH_LOG("%s", mcp_strerror_last());
	ASSERT_EQ(0, mcp_get_version(dev, NULL, NULL, &features, NULL, 0));
	ASSERT_EQ(0, mcp_dma_open_host(dev, &host)) TH_LOG("%s", mcp_strerror_last());
	for (m = 0; m < sizeof(modes) / sizeof(modes[0]); m++) {
		struct mcp_runtime_opts o = { .size = sizeof(o), .flags = modes[m].flags,
					      .worker_batch = modes[m].batch };
		struct mcp_loaded_graph *lg = NULL;
		struct mcp_runtime *rt = NULL;
		uint32_t want = modes[m].mode;

		if (want == MCP_RUNTIME_WORKER_CHAINS && !(features & MCP_FEATURE_JOB_CHAINS))
			want = MCP_RUNTIME_WORKER_BATCH;
		ASSERT_EQ(0, mcp_runtime_new(host, &o, &rt)) TH_LOG("%s", mcp_strerror_last());
		for (k = 0; k < mcp_runtime_worker_count(rt); k++) {
			ASSERT_EQ(0, mcp_runtime_worker_info(rt, k, &w)) TH_LOG("%s", mcp_strerror_last());
			EXPECT_EQ(want, w.mode) TH_LOG("mode %u worker %u", m, k);
			/* 0: the mode's default, the longest chain or 32 jobs. */
			EXPECT_EQ(modes[m].batch ?: want == MCP_RUNTIME_WORKER_CHAINS ?
				  MCP_RUNTIME_CHAIN_MAX : 32, w.batch);
			EXPECT_LT(0, w.tid);
		}
		EXPECT_EQ(-EINVAL, mcp_runtime_worker_info(rt, k, &w));
		EXPECT_EQ(0, mcp_runtime_test_graph_descs(rt));
		ASSERT_EQ(0, mcp_runtime_load(rt, def, &lg, NULL)) TH_LOG("%s", mcp_strerror_last());
		EXPECT_EQ(want == MCP_RUNTIME_WORKER_CHAINS, mcp_runtime_test_graph_descs(rt));
		ASSERT_EQ(0, mcp_loaded_graph_buffer(lg, 0, (void **)&in, &blen));
		fill_input(in, n, 1.0f + (float)m);
		ASSERT_EQ(0, exec_wait(_metadata, rt, lg, NULL, 0, &st, nodes, len));
		EXPECT_EQ(MCP_EXEC_DONE, st.state) TH_LOG("mode %u", m);
		ASSERT_EQ(0, mcp_loaded_graph_buffer(lg, 2, (void **)&out, &blen));
		for (i = 0; i < n; i++)
			EXPECT_EQ(in[i] > 0 ? in[i] : 0.0f, out[i]) TH_LOG("mode %u [%u]", m, i);
		for (i = 0; i < len; i++) {
			EXPECT_EQ(0, nodes[i].result) TH_LOG("mode %u node %u", m, i);
			EXPECT_LT(0, nodes[i].worker_tid) TH_LOG("mode %u node %u", m, i);
			EXPECT_LE(nodes[i].start_ns, nodes[i].end_ns) TH_LOG("mode %u node %u", m, i);
			if (i)
				EXPECT_LE(nodes[i - 1].end_ns, nodes[i].start_ns)
					TH_LOG("mode %u node %u", m, i);
		}
		for (k = 0, done = 0; k < mcp_runtime_worker_count(rt); k++)
			if (!mcp_runtime_worker_info(rt, k, &w))
				done += w.jobs;
		EXPECT_EQ(len, done) TH_LOG("mode %u", m);
		mcp_loaded_graph_free(lg);
		EXPECT_EQ(0, mcp_runtime_test_graph_descs(rt));
		mcp_runtime_free(rt);
	}
	{
		struct mcp_runtime_opts o = { .size = MCP_RUNTIME_OPTS_SIZE_VER0,
					      .flags = 0xdead };
		struct mcp_runtime *rt = NULL;

		/* the fields past a version 0 size are not read */
		ASSERT_EQ(0, mcp_runtime_new(host, &o, &rt)) TH_LOG("%s", mcp_strerror_last());
		ASSERT_EQ(0, mcp_runtime_worker_info(rt, 0, &w));
		EXPECT_EQ(features & MCP_FEATURE_JOB_CHAINS ? MCP_RUNTIME_WORKER_CHAINS
							     : MCP_RUNTIME_WORKER_BATCH, w.mode);
		mcp_runtime_free(rt);
		o.size = sizeof(o);
		EXPECT_EQ(-EINVAL, mcp_runtime_new(host, &o, &rt));
		o.flags = 0;
		o.reserved = 1;
		EXPECT_EQ(-EINVAL, mcp_runtime_new(host, &o, &rt));
		o.size = MCP_RUNTIME_OPTS_SIZE_VER0 - 4;
		EXPECT_EQ(-EINVAL, mcp_runtime_new(host, &o, &rt));
		w.size = sizeof(w) - 1;
		EXPECT_EQ(-EINVAL, mcp_runtime_worker_info(NULL, 0, &w));
	}
	mcp_graph_free(def);
	mcp_dma_close(host);
	mcp_close(dev);
}

TEST(run_inline_matches_the_c_reference)
{
	const uint32_t n = 777;
	struct mcp_graph_def *def = diamond(_metadata, n);
	float *bufs[3];
	uint32_t i;

	ASSERT_NE(NULL, def);
	for (i = 0; i < 3; i++) {
		struct mcp_graph_buffer_info b = { .size = sizeof(b) };

		ASSERT_EQ(0, mcp_graph_get_buffer(def, i, &b));
		bufs[i] = calloc(1, b.length);
	}
	fill_input(bufs[0], n, 0.5f);
	ASSERT_EQ(0, mcp_runtime_run_inline(def, (void *const *)bufs, 3))
		TH_LOG("%s", mcp_strerror_last());
	EXPECT_LE(diamond_error(bufs[0], bufs[2], n), DIAMOND_TOLERANCE);
	EXPECT_EQ(-EINVAL, mcp_runtime_run_inline(def, (void *const *)bufs, 2));
	for (i = 0; i < 3; i++)
		free(bufs[i]);
	mcp_graph_free(def);
}

/*
 * An imported ONNX model (tests/onnx/gen_models.py, packed into the image
 * by build-initramfs.sh) through the kernel and the workers gives what
 * run_inline gives (which the host's unit tests compare with ONNX
 * Runtime): the same operators on the same inputs, so within 1e-5
 * relative.  Needs MCP_FEAT_WORKER_OPS: the importer's operators are ones
 * only libmcp checks.
 */
static void import_runs_like_inline(struct __test_metadata *_metadata, struct mcp_runtime *rt,
				    const char *model)
{
	struct mcp_graph_def *def = NULL;
	struct mcp_loaded_graph *lg = NULL;
	struct mcp_exec_status st;
	void *bufs[64] = { NULL };
	char path[256];
	uint32_t i, n, outputs = 0;

	snprintf(path, sizeof(path), "/opt/mcp/onnx/%s", model);
	ASSERT_EQ(0, mcp_graph_import_onnx(path, NULL, &def)) TH_LOG("%s", mcp_strerror_last());
	n = mcp_graph_buffer_count(def);
	ASSERT_LE(n, 64);
	ASSERT_EQ(0, mcp_runtime_load(rt, def, &lg, NULL)) TH_LOG("%s", mcp_strerror_last());
	for (i = 0; i < n; i++) {
		struct mcp_graph_buffer_info b = { .size = sizeof(b) };
		uint64_t len, k;
		void *kbuf;

		ASSERT_EQ(0, mcp_graph_get_buffer(def, i, &b));
		bufs[i] = calloc(1, b.length);
		ASSERT_NE(NULL, bufs[i]);
		if (!(b.flags & MCP_GRAPH_BUFFER_INPUT))
			continue;
		ASSERT_EQ(0, mcp_loaded_graph_buffer(lg, i, &kbuf, &len));
		ASSERT_LE(b.length, len);
		for (k = 0; k < b.length / sizeof(float); k++)
			((float *)bufs[i])[k] = (float)((k * 37 + i) % 101) / 50.0f - 1.0f;
		memcpy(kbuf, bufs[i], b.length);
	}
	ASSERT_EQ(0, mcp_runtime_run_inline(def, bufs, n)) TH_LOG("%s", mcp_strerror_last());
	ASSERT_EQ(0, exec_wait(_metadata, rt, lg, NULL, 0, &st, NULL, 0));
	EXPECT_EQ(MCP_EXEC_DONE, st.state);
	for (i = 0; i < n; i++) {
		struct mcp_graph_buffer_info b = { .size = sizeof(b) };
		const float *want = bufs[i];
		uint64_t len, k, nonzero = 0;
		double worst = 0;
		float *got;

		ASSERT_EQ(0, mcp_graph_get_buffer(def, i, &b));
		if (!(b.flags & MCP_GRAPH_BUFFER_OUTPUT))
			continue;
		outputs++;
		ASSERT_EQ(0, mcp_loaded_graph_buffer(lg, i, (void **)&got, &len));
		for (k = 0; k < b.length / sizeof(float); k++) {
			double e = fabs((double)got[k] - want[k]) / fmax(1.0, fabs(want[k]));

			if (e > worst)
				worst = e;
			nonzero += want[k] != 0;
		}
		TH_LOG("%s: output %s, %llu floats, worst relative error %.3g", model, b.name,
		       (unsigned long long)(b.length / sizeof(float)), worst);
		EXPECT_LE(worst, 1e-5);
		EXPECT_LT(0, nonzero);	/* not two untouched buffers */
	}
	EXPECT_LT(0, outputs);
	for (i = 0; i < n; i++)
		free(bufs[i]);
	mcp_loaded_graph_free(lg);
	mcp_graph_free(def);
}

TEST_F(graph, imported_onnx_models_run_through_the_kernel_like_inline)
{
	import_runs_like_inline(_metadata, self->rt, "mlp.onnx");
	import_runs_like_inline(_metadata, self->rt, "bert14.onnx");
	import_runs_like_inline(_metadata, self->rt, "bert17.onnx");
	import_runs_like_inline(_metadata, self->rt, "resnet.onnx");
	/* Shape sub-graphs folded, then the elementwise/shape operators. */
	import_runs_like_inline(_metadata, self->rt, "shapes.onnx");
	import_runs_like_inline(_metadata, self->rt, "ops9.onnx");
	import_runs_like_inline(_metadata, self->rt, "ops13.onnx");
	import_runs_like_inline(_metadata, self->rt, "ops14.onnx");
}

/* ---- the two executors ---- */

static struct mcp_runtime *userspace_runtime(struct __test_metadata *_metadata)
{
	struct mcp_runtime_opts o = { .size = sizeof(o),
				      .executor = MCP_RUNTIME_EXECUTOR_USERSPACE };
	struct mcp_runtime *rt = NULL;

	EXPECT_EQ(0, mcp_runtime_new(NULL, &o, &rt)) TH_LOG("%s", mcp_strerror_last());
	if (rt)
		EXPECT_EQ(MCP_RUNTIME_EXECUTOR_USERSPACE, mcp_runtime_executor(rt));
	return rt;
}

/* Executes @lg on @rt (either executor) and reads its status. */
static void run_either(struct __test_metadata *_metadata, struct mcp_runtime *rt,
		       struct mcp_loaded_graph *lg, struct mcp_exec_status *st,
		       struct mcp_exec_node *nodes, uint32_t cap)
{
	struct mcp_fence *f = NULL;
	uint64_t id = 0;
	int job_error = 0;

	ASSERT_EQ(0, mcp_runtime_execute(rt, lg, NULL, 0, NULL, &id, &f))
		TH_LOG("%s", mcp_strerror_last());
	if (f) {
		EXPECT_EQ(0, mcp_fence_wait(f, WAIT_NS, &job_error)) TH_LOG("%s", mcp_strerror_last());
		mcp_fence_free(f);
	} else {
		EXPECT_EQ(0, mcp_runtime_wait(rt, id, WAIT_NS)) TH_LOG("%s", mcp_strerror_last());
	}
	st->size = sizeof(*st);
	ASSERT_EQ(0, mcp_runtime_status(rt, id, st, nodes, cap)) TH_LOG("%s", mcp_strerror_last());
}

/*
 * @model through the kernel executor (@krt) and the userspace one, on the
 * same inputs: the same operators, so the outputs are equal bit for bit.
 */
static void model_runs_alike_on_both(struct __test_metadata *_metadata, struct mcp_runtime *krt,
				     const char *model)
{
	struct mcp_runtime *urt = userspace_runtime(_metadata);
	struct mcp_loaded_graph *kg = NULL, *ug = NULL;
	struct mcp_graph_def *def = NULL;
	struct mcp_exec_status ks, us;
	uint32_t i, n, outputs = 0;
	char path[256];

	ASSERT_NE(NULL, urt);
	snprintf(path, sizeof(path), "/opt/mcp/onnx/%s", model);
	ASSERT_EQ(0, mcp_graph_import_onnx(path, NULL, &def)) TH_LOG("%s", mcp_strerror_last());
	ASSERT_EQ(0, mcp_runtime_load(krt, def, &kg, NULL)) TH_LOG("%s", mcp_strerror_last());
	ASSERT_EQ(0, mcp_runtime_load(urt, def, &ug, NULL)) TH_LOG("%s", mcp_strerror_last());
	n = mcp_graph_buffer_count(def);
	for (i = 0; i < n; i++) {
		struct mcp_graph_buffer_info b = { .size = sizeof(b) };
		uint64_t klen, ulen, k;
		float *kb, *ub;

		ASSERT_EQ(0, mcp_graph_get_buffer(def, i, &b));
		if (!(b.flags & MCP_GRAPH_BUFFER_INPUT))
			continue;
		ASSERT_EQ(0, mcp_loaded_graph_buffer(kg, i, (void **)&kb, &klen));
		ASSERT_EQ(0, mcp_loaded_graph_buffer(ug, i, (void **)&ub, &ulen));
		for (k = 0; k < b.length / sizeof(float); k++)
			kb[k] = ub[k] = (float)((k * 37 + i) % 101) / 50.0f - 1.0f;
	}
	run_either(_metadata, krt, kg, &ks, NULL, 0);
	run_either(_metadata, urt, ug, &us, NULL, 0);
	EXPECT_EQ(MCP_EXEC_DONE, ks.state);
	EXPECT_EQ(MCP_EXEC_DONE, us.state);
	for (i = 0; i < n; i++) {
		struct mcp_graph_buffer_info b = { .size = sizeof(b) };
		uint64_t klen, ulen;
		void *kb, *ub;

		ASSERT_EQ(0, mcp_graph_get_buffer(def, i, &b));
		if (!(b.flags & MCP_GRAPH_BUFFER_OUTPUT))
			continue;
		outputs++;
		ASSERT_EQ(0, mcp_loaded_graph_buffer(kg, i, &kb, &klen));
		ASSERT_EQ(0, mcp_loaded_graph_buffer(ug, i, &ub, &ulen));
		EXPECT_EQ(0, memcmp(kb, ub, b.length)) TH_LOG("%s: output %s differs", model, b.name);
	}
	EXPECT_LT(0, outputs);
	mcp_loaded_graph_free(ug);
	mcp_loaded_graph_free(kg);
	mcp_graph_free(def);
	mcp_runtime_free(urt);
}

TEST_F(graph, imported_models_run_alike_on_the_kernel_and_userspace_executors)
{
	struct mcp_runtime_opts o = { .size = sizeof(o), .executor = MCP_RUNTIME_EXECUTOR_AUTO };
	struct mcp_runtime *art = NULL;

	EXPECT_EQ(MCP_RUNTIME_EXECUTOR_KERNEL, mcp_runtime_executor(self->rt));
	/* The module is loaded and runs graphs: auto is the kernel. */
	ASSERT_EQ(0, mcp_runtime_new(NULL, &o, &art)) TH_LOG("%s", mcp_strerror_last());
	EXPECT_EQ(MCP_RUNTIME_EXECUTOR_KERNEL, mcp_runtime_executor(art));
	mcp_runtime_free(art);
	model_runs_alike_on_both(_metadata, self->rt, "mlp.onnx");
	model_runs_alike_on_both(_metadata, self->rt, "bert17.onnx");
	model_runs_alike_on_both(_metadata, self->rt, "resnet.onnx");
	model_runs_alike_on_both(_metadata, self->rt, "ops13.onnx");
}

/* data[4] -> GATHER(idx[2]) -> RELU, and data -> RELU beside. */
static struct mcp_graph_def *gather_graph(struct __test_metadata *_metadata)
{
	const struct mcp_graph_axis axis = { 0, 0 };
	struct mcp_graph_def *g = NULL;
	uint32_t bd, bi, bg, by, bz, td, ti, tg, ty, tz, node;
	uint32_t d4[1] = { 4 }, d2[1] = { 2 };

	EXPECT_EQ(0, mcp_graph_new("gather_fail", &g));
	if (!g)
		return NULL;
	EXPECT_EQ(0, mcp_graph_add_buffer(g, "data", MCP_GRAPH_BUFFER_INPUT, NULL, &bd));
	EXPECT_EQ(0, mcp_graph_add_buffer(g, "idx", MCP_GRAPH_BUFFER_INPUT, NULL, &bi));
	EXPECT_EQ(0, mcp_graph_add_buffer(g, "g", 0, NULL, &bg));
	EXPECT_EQ(0, mcp_graph_add_buffer(g, "y", MCP_GRAPH_BUFFER_OUTPUT, NULL, &by));
	EXPECT_EQ(0, mcp_graph_add_buffer(g, "z", MCP_GRAPH_BUFFER_OUTPUT, NULL, &bz));
	EXPECT_EQ(0, mcp_graph_add_tensor(g, "data", bd, MCP_GRAPH_DTYPE_F32, d4, 1,
					  MCP_GRAPH_LAYOUT_DENSE, &td));
	EXPECT_EQ(0, mcp_graph_add_tensor(g, "idx", bi, MCP_GRAPH_DTYPE_I32, d2, 1,
					  MCP_GRAPH_LAYOUT_DENSE, &ti));
	EXPECT_EQ(0, mcp_graph_add_tensor(g, "g", bg, MCP_GRAPH_DTYPE_F32, d2, 1,
					  MCP_GRAPH_LAYOUT_DENSE, &tg));
	EXPECT_EQ(0, mcp_graph_add_tensor(g, "y", by, MCP_GRAPH_DTYPE_F32, d2, 1,
					  MCP_GRAPH_LAYOUT_DENSE, &ty));
	EXPECT_EQ(0, mcp_graph_add_tensor(g, "z", bz, MCP_GRAPH_DTYPE_F32, d4, 1,
					  MCP_GRAPH_LAYOUT_DENSE, &tz));
	{
		const uint32_t in[2] = { td, ti };

		EXPECT_EQ(0, mcp_graph_add_node(g, "pick", MCP_GRAPH_OP_GATHER,
						MCP_GRAPH_CLASS_WORKER, in, 2, &tg, 1, &axis,
						sizeof(axis), 0, &node));
	}
	EXPECT_EQ(0, mcp_graph_add_node(g, "after", MCP_GRAPH_OP_RELU, MCP_GRAPH_CLASS_WORKER,
					&tg, 1, &ty, 1, NULL, 0, 0, &node));
	EXPECT_EQ(0, mcp_graph_add_node(g, "beside", MCP_GRAPH_OP_RELU, MCP_GRAPH_CLASS_WORKER,
					&td, 1, &tz, 1, NULL, 0, 0, &node));
	return g;
}

/* The same failing operator gives the same errors on both executors. */
TEST_F(graph, a_failing_operator_fails_alike_on_both_executors)
{
	struct mcp_graph_def *def = gather_graph(_metadata);
	struct mcp_runtime *urt = userspace_runtime(_metadata);
	struct mcp_runtime *rts[2] = { self->rt, urt };
	struct mcp_exec_status st[2];
	struct mcp_exec_node nodes[2][3];
	int k;

	ASSERT_NE(NULL, def);
	ASSERT_NE(NULL, urt);
	for (k = 0; k < 2; k++) {
		struct mcp_loaded_graph *lg = NULL;
		uint64_t len;
		int32_t *idx;

		ASSERT_EQ(0, mcp_runtime_load(rts[k], def, &lg, NULL)) TH_LOG("%s", mcp_strerror_last());
		ASSERT_EQ(0, mcp_loaded_graph_buffer_by_name(lg, "idx", (void **)&idx, &len));
		idx[0] = 1;
		idx[1] = 7;	/* past data's 4 elements */
		run_either(_metadata, rts[k], lg, &st[k], nodes[k], 3);
		mcp_loaded_graph_free(lg);
	}
	for (k = 0; k < 2; k++) {
		EXPECT_EQ(MCP_EXEC_FAILED, st[k].state) TH_LOG("executor %d", k);
		EXPECT_EQ(-EINVAL, st[k].result) TH_LOG("executor %d", k);
		EXPECT_EQ(0, st[k].failed_node) TH_LOG("executor %d", k);
		EXPECT_EQ(-EINVAL, nodes[k][0].result) TH_LOG("executor %d", k);
		EXPECT_EQ(-ECANCELED, nodes[k][1].result) TH_LOG("executor %d", k);
	}
	mcp_runtime_free(urt);
	mcp_graph_free(def);
}

/* in -> COPY on the device's DMA engine -> staged -> RELU (worker) -> out */
static struct mcp_graph_def *device_copy_graph(struct __test_metadata *_metadata, uint32_t n)
{
	struct mcp_graph_def *g = NULL;
	uint32_t bin, bst, bout, a, b, c, node, dims[1] = { n };

	EXPECT_EQ(0, mcp_graph_new("device_copy", &g));
	if (!g)
		return NULL;
	EXPECT_EQ(0, mcp_graph_add_buffer(g, "in", MCP_GRAPH_BUFFER_INPUT, NULL, &bin));
	EXPECT_EQ(0, mcp_graph_add_buffer(g, "staged", 0, NULL, &bst));
	EXPECT_EQ(0, mcp_graph_add_buffer(g, "out", MCP_GRAPH_BUFFER_OUTPUT, NULL, &bout));
	EXPECT_EQ(0, mcp_graph_add_tensor(g, "a", bin, MCP_GRAPH_DTYPE_F32, dims, 1,
					  MCP_GRAPH_LAYOUT_DENSE, &a));
	EXPECT_EQ(0, mcp_graph_add_tensor(g, "b", bst, MCP_GRAPH_DTYPE_F32, dims, 1,
					  MCP_GRAPH_LAYOUT_DENSE, &b));
	EXPECT_EQ(0, mcp_graph_add_tensor(g, "c", bout, MCP_GRAPH_DTYPE_F32, dims, 1,
					  MCP_GRAPH_LAYOUT_DENSE, &c));
	EXPECT_EQ(0, mcp_graph_add_node(g, "to_device", MCP_GRAPH_OP_COPY, MCP_GRAPH_CLASS_DEVICE,
					&a, 1, &b, 1, NULL, 0, 0, &node));
	EXPECT_EQ(0, mcp_graph_add_node(g, "relu", MCP_GRAPH_OP_RELU, MCP_GRAPH_CLASS_WORKER,
					&b, 1, &c, 1, NULL, 0, 0, &node));
	return g;
}

TEST_F(graph, device_engine_is_refused_on_the_host_context)
{
	struct mcp_graph_def *def = device_copy_graph(_metadata, 64);
	struct mcp_graph_invalid err = { .size = sizeof(err) };
	struct mcp_loaded_graph *lg = NULL;

	ASSERT_NE(NULL, def);
	EXPECT_EQ(-EINVAL, mcp_runtime_load(self->rt, def, &lg, &err));
	EXPECT_EQ(MCP_GRAPH_ERROR_ENGINE, err.reason);
	EXPECT_EQ(MCP_GRAPH_AT_NODE_ENTRY, err.kind);
	EXPECT_EQ(0, err.index);
	EXPECT_NE(NULL, strstr(err.message, "node 0")) TH_LOG("%s", err.message);
	EXPECT_NE(NULL, strstr(mcp_strerror_last(), "engine")) TH_LOG("%s", mcp_strerror_last());
	mcp_graph_free(def);
}

TEST(runtime_on_a_device_context_copies_through_its_dma_engine)
{
	const uint32_t n = 64;	/* 256 bytes: one edu transfer */
	char addr[MCP_PCI_ADDR_LEN];
	struct mcp_device *dev = NULL;
	struct mcp_accel *accel = NULL;
	struct mcp_dma *dma = NULL;
	struct mcp_runtime *rt = NULL;
	struct mcp_graph_def *def = device_copy_graph(_metadata, n);
	struct mcp_loaded_graph *lg = NULL;
	struct mcp_exec_status st;
	struct mcp_exec_node nodes[2];
	float *in, *out;
	uint64_t len;
	uint32_t index, i;

	ASSERT_NE(NULL, def);
	ASSERT_EQ(0, mcp_ensure_loaded());
	ASSERT_EQ(0, mcp_pci_find(EDU_VENDOR, EDU_DEVICE, addr));
	if (!mcp_pci_bound(addr))
		ASSERT_EQ(0, mcp_pci_bind(addr));
	ASSERT_EQ(0, mcp_open(NULL, &dev));
	ASSERT_EQ(0, mcp_accel_find(dev, addr, &index));
	ASSERT_EQ(0, mcp_accel_open(dev, index, &accel));
	ASSERT_EQ(0, mcp_dma_open_accel(accel, &dma)) TH_LOG("%s", mcp_strerror_last());
	ASSERT_EQ(0, mcp_runtime_new(dma, NULL, &rt)) TH_LOG("%s", mcp_strerror_last());
	ASSERT_EQ(0, mcp_runtime_load(rt, def, &lg, NULL)) TH_LOG("%s", mcp_strerror_last());
	ASSERT_EQ(0, mcp_loaded_graph_buffer(lg, 0, (void **)&in, &len));
	fill_input(in, n, 2.0f);
	ASSERT_EQ(0, exec_wait(_metadata, rt, lg, NULL, 0, &st, nodes, 2));
	EXPECT_EQ(MCP_EXEC_DONE, st.state);
	EXPECT_EQ(MCP_GRAPH_CLASS_DEVICE, nodes[0].engine);
	EXPECT_EQ(MCP_GRAPH_CLASS_WORKER, nodes[1].engine);
	EXPECT_LT(0, nodes[1].worker_tid);
	EXPECT_LE(nodes[0].end_ns, nodes[1].start_ns);
	ASSERT_EQ(0, mcp_loaded_graph_buffer(lg, 2, (void **)&out, &len));
	for (i = 0; i < n; i++)
		EXPECT_EQ(in[i] > 0 ? in[i] : 0.0f, out[i]) TH_LOG("element %u", i);
	mcp_loaded_graph_free(lg);
	mcp_runtime_free(rt);
	mcp_dma_close(dma);
	mcp_accel_close(accel);
	mcp_close(dev);
	mcp_graph_free(def);
}

/* ---- the handle registry ---- */

/* libmcp's test hook (lib/src/runtime_internal.hpp), in no installed header. */
uint32_t mcp_runtime_test_registry_size(const struct mcp_runtime *rt, uint32_t *pending);

/*
 * Executions with fresh binding buffers leave the runtime's handle
 * registry as it was once they ended: sequentially (each buffer freed and
 * its handle free for the next), and four in flight at once, all reading
 * one input buffer.
 */
TEST_F(graph, fresh_bindings_leave_the_handle_registry_as_it_was)
{
	const uint32_t n = 256;
	struct mcp_graph_def *def = diamond(_metadata, n);
	struct mcp_loaded_graph *lg = NULL;
	struct mcp_buffer *in = NULL, *out[4] = { 0 };
	struct mcp_fence *fence[4] = { 0 };
	struct mcp_exec_status st;
	uint32_t base, pending = 99, size;
	uint64_t ids[4];
	float *pin, *pout;
	int k, job_error;

	ASSERT_NE(NULL, def);
	ASSERT_EQ(0, mcp_runtime_load(self->rt, def, &lg, NULL)) TH_LOG("%s", mcp_strerror_last());
	base = mcp_runtime_test_registry_size(self->rt, &pending);
	EXPECT_EQ(3, base) TH_LOG("the graph's three buffers");
	EXPECT_EQ(0, pending);
	for (k = 0; k < 20; k++) {
		struct mcp_graph_bind binds[2] = { { .buffer = 0 }, { .buffer = 2 } };

		ASSERT_EQ(0, mcp_buffer_create(self->host, n * sizeof(float), 0, 0, &in));
		ASSERT_EQ(0, mcp_buffer_create(self->host, n * sizeof(float), 0, 0, &out[0]));
		ASSERT_EQ(0, mcp_buffer_data(in, (void **)&pin));
		ASSERT_EQ(0, mcp_buffer_data(out[0], (void **)&pout));
		fill_input(pin, n, (float)k);
		binds[0].with = in;
		binds[1].with = out[0];
		ASSERT_EQ(0, exec_wait(_metadata, self->rt, lg, binds, 2, &st, NULL, 0));
		EXPECT_EQ(MCP_EXEC_DONE, st.state);
		/* a reused handle resolved to this iteration's memory */
		EXPECT_LE(diamond_error(pin, pout, n), DIAMOND_TOLERANCE) TH_LOG("iteration %d", k);
		EXPECT_EQ(base, mcp_runtime_test_registry_size(self->rt, &pending)) TH_LOG("iteration %d", k);
		EXPECT_EQ(0, pending);
		mcp_buffer_free(in);
		mcp_buffer_free(out[0]);
	}

	ASSERT_EQ(0, mcp_buffer_create(self->host, n * sizeof(float), 0, 0, &in));
	ASSERT_EQ(0, mcp_buffer_data(in, (void **)&pin));
	fill_input(pin, n, 0.5f);
	for (k = 0; k < 4; k++) {
		struct mcp_graph_bind binds[2] = { { .buffer = 0, .with = in }, { .buffer = 2 } };

		ASSERT_EQ(0, mcp_buffer_create(self->host, n * sizeof(float), 0, 0, &out[k]));
		binds[1].with = out[k];
		ASSERT_EQ(0, mcp_runtime_execute(self->rt, lg, binds, 2, NULL, &ids[k], &fence[k]))
			TH_LOG("%s", mcp_strerror_last());
	}
	/* at most the shared input and four outputs more, never fewer than the graph's */
	size = mcp_runtime_test_registry_size(self->rt, &pending);
	EXPECT_LE(base, size);
	EXPECT_GE(base + 5, size);
	EXPECT_GE(4, pending);
	for (k = 0; k < 4; k++) {
		job_error = -1;
		EXPECT_EQ(0, mcp_fence_wait(fence[k], WAIT_NS, &job_error)) TH_LOG("%s", mcp_strerror_last());
		EXPECT_EQ(0, job_error);
		mcp_fence_free(fence[k]);
	}
	st.size = sizeof(st);
	ASSERT_EQ(0, mcp_runtime_status(self->rt, ids[3], &st, NULL, 0));
	EXPECT_EQ(MCP_EXEC_DONE, st.state);
	EXPECT_EQ(base, mcp_runtime_test_registry_size(self->rt, &pending));
	EXPECT_EQ(0, pending);
	for (k = 0; k < 4; k++) {
		ASSERT_EQ(0, mcp_buffer_data(out[k], (void **)&pout));
		EXPECT_LE(diamond_error(pin, pout, n), DIAMOND_TOLERANCE) TH_LOG("execution %d", k);
		mcp_buffer_free(out[k]);
	}
	mcp_buffer_free(in);
	/* the graph's own entries go with it */
	mcp_loaded_graph_free(lg);
	EXPECT_EQ(0, mcp_runtime_test_registry_size(self->rt, NULL));
	mcp_graph_free(def);
}

/*
 * A worker job still running when its execution timed out keeps its
 * tensors' memory: the test frees the graph and its buffers at once, the
 * GELU over 32 MiB goes on writing for a while (seconds under TCG), and
 * the process lives to run the next graph (the registry maps kernel
 * buffers for itself).
 */
TEST_F(graph, a_job_outlives_its_timed_out_graph)
{
	const uint32_t n = 8u << 20;	/* floats: 32 MiB in, 32 MiB out */
	struct mcp_graph_def *big = NULL, *def;
	struct mcp_loaded_graph *lg = NULL;
	struct mcp_exec_opts opts = { .size = sizeof(opts), .timeout_ms = 20 };
	struct mcp_exec_node nodes[1];
	struct mcp_exec_status st;
	struct mcp_fence *f = NULL;
	uint32_t bin, bout, a, b, node, dims[1] = { n };
	uint64_t id = 0;
	int job_error = 0;

	ASSERT_EQ(0, mcp_graph_new("long_gelu", &big));
	ASSERT_EQ(0, mcp_graph_add_buffer(big, "in", MCP_GRAPH_BUFFER_INPUT, NULL, &bin));
	ASSERT_EQ(0, mcp_graph_add_buffer(big, "out", MCP_GRAPH_BUFFER_OUTPUT, NULL, &bout));
	ASSERT_EQ(0, mcp_graph_add_tensor(big, "a", bin, MCP_GRAPH_DTYPE_F32, dims, 1,
					  MCP_GRAPH_LAYOUT_DENSE, &a));
	ASSERT_EQ(0, mcp_graph_add_tensor(big, "b", bout, MCP_GRAPH_DTYPE_F32, dims, 1,
					  MCP_GRAPH_LAYOUT_DENSE, &b));
	ASSERT_EQ(0, mcp_graph_add_node(big, "gelu", MCP_GRAPH_OP_GELU, MCP_GRAPH_CLASS_WORKER,
					&a, 1, &b, 1, NULL, 0, 0, &node));
	ASSERT_EQ(0, mcp_runtime_load(self->rt, big, &lg, NULL)) TH_LOG("%s", mcp_strerror_last());

	ASSERT_EQ(0, mcp_runtime_execute(self->rt, lg, NULL, 0, &opts, &id, &f))
		TH_LOG("%s", mcp_strerror_last());
	EXPECT_EQ(0, mcp_fence_wait(f, WAIT_NS, &job_error)) TH_LOG("%s", mcp_strerror_last());
	EXPECT_EQ(-ETIMEDOUT, job_error);
	mcp_fence_free(f);
	st.size = sizeof(st);
	ASSERT_EQ(0, mcp_runtime_status(self->rt, id, &st, nodes, 1));
	EXPECT_EQ(-ETIMEDOUT, nodes[0].result);
	/* It had started: the worker was running it when the time ran out. */
	EXPECT_NE(0, nodes[0].start_ns);
	mcp_loaded_graph_free(lg);

	def = diamond(_metadata, 256);
	ASSERT_NE(NULL, def);
	ASSERT_EQ(0, mcp_runtime_load(self->rt, def, &lg, NULL)) TH_LOG("%s", mcp_strerror_last());
	ASSERT_EQ(0, exec_wait(_metadata, self->rt, lg, NULL, 0, &st, NULL, 0));
	EXPECT_EQ(MCP_EXEC_DONE, st.state);
	mcp_loaded_graph_free(lg);
	EXPECT_EQ(0, mcp_runtime_test_registry_size(self->rt, NULL));
	mcp_graph_free(def);
	mcp_graph_free(big);
}

/* ---- buffer placement at load ---- */

/* The online node ids, ascending; their count. */
static unsigned int online_nodes(struct __test_metadata *_metadata, struct mcp_device *dev,
				 unsigned int *ids, unsigned int cap)
{
	struct mcp_topo *topo = NULL;
	unsigned int i, n;

	EXPECT_EQ(0, mcp_topo_get(dev, &topo)) TH_LOG("%s", mcp_strerror_last());
	n = mcp_topo_nr_nodes(topo);
	for (i = 0; i < n && i < cap; i++)
		EXPECT_EQ(0, mcp_topo_node_id(topo, i, &ids[i]));
	mcp_topo_free(topo);
	return n < cap ? n : cap;
}

/* Every buffer of @lg on node @node (MCP_IOC_BO_INFO). */
static void expect_buffers_on(struct __test_metadata *_metadata, struct mcp_loaded_graph *lg,
			      uint32_t n_buffers, int node)
{
	uint32_t i;

	for (i = 0; i < n_buffers; i++) {
		struct mcp_buffer_info info = { .size = sizeof(info) };

		ASSERT_EQ(0, mcp_loaded_graph_buffer_info(lg, i, &info)) TH_LOG("%s", mcp_strerror_last());
		EXPECT_EQ(node, info.node) TH_LOG("buffer %u", i);
	}
}

/*
 * Buffers loaded on a node put the graph's worker jobs there: every node
 * in turn (jobs go to the worker on the node holding their input bytes).
 */
TEST_F(graph, load_on_a_node_runs_the_worker_jobs_there)
{
	const uint32_t n = 1000;
	struct mcp_graph_def *def = diamond(_metadata, n);
	struct mcp_exec_node nodes[3];
	struct mcp_exec_status st;
	unsigned int ids[8], nr, k, j;
	float *in, *out;
	uint64_t len;

	ASSERT_NE(NULL, def);
	nr = online_nodes(_metadata, self->dev, ids, 8);
	if (nr < 2)
		SKIP(return, "one NUMA node: nothing to choose from");
	for (k = 0; k < nr; k++) {
		struct mcp_load_opts lo = {
			.size = sizeof(lo), .flags = MCP_LOAD_NODE, .node = (int32_t)ids[k],
		};
		struct mcp_loaded_graph *lg = NULL;

		ASSERT_EQ(0, mcp_runtime_load_opts(self->rt, def, &lo, &lg, NULL))
			TH_LOG("node %u: %s", ids[k], mcp_strerror_last());
		expect_buffers_on(_metadata, lg, 3, (int)ids[k]);
		ASSERT_EQ(0, mcp_loaded_graph_buffer(lg, 0, (void **)&in, &len));
		fill_input(in, n, (float)k);
		ASSERT_EQ(0, exec_wait(_metadata, self->rt, lg, NULL, 0, &st, nodes, 3));
		EXPECT_EQ(MCP_EXEC_DONE, st.state);
		for (j = 0; j < 3; j++) {
			EXPECT_EQ(MCP_GRAPH_CLASS_WORKER, nodes[j].engine);
			EXPECT_EQ((int32_t)ids[k], nodes[j].numa_node)
				TH_LOG("graph node %u with its buffers on node %u", j, ids[k]);
		}
		ASSERT_EQ(0, mcp_loaded_graph_buffer(lg, 2, (void **)&out, &len));
		EXPECT_LE(diamond_error(in, out, n), DIAMOND_TOLERANCE);
		mcp_loaded_graph_free(lg);
	}
	mcp_graph_free(def);
}

/*
 * One buffer placed apart: relu and gelu read "in" (the last node), add
 * reads "mid" (the first node); so they run.
 */
TEST_F(graph, load_places_a_buffer_by_name)
{
	const uint32_t n = 1000;
	struct mcp_graph_def *def = diamond(_metadata, n);
	struct mcp_loaded_graph *lg = NULL;
	struct mcp_buffer_info info = { .size = sizeof(info) };
	struct mcp_exec_node nodes[3];
	struct mcp_exec_status st;
	unsigned int ids[8], nr;
	struct mcp_load_buffer_node apart = { .name = "in" };
	struct mcp_load_opts lo = {
		.size = sizeof(lo), .flags = MCP_LOAD_NODE, .n_buffer_nodes = 1,
		.buffer_nodes = &apart,
	};

	ASSERT_NE(NULL, def);
	nr = online_nodes(_metadata, self->dev, ids, 8);
	if (nr < 2)
		SKIP(return, "one NUMA node: nothing to choose from");
	lo.node = (int32_t)ids[0];
	apart.node = (int32_t)ids[nr - 1];
	ASSERT_EQ(0, mcp_runtime_load_opts(self->rt, def, &lo, &lg, NULL)) TH_LOG("%s", mcp_strerror_last());
	ASSERT_EQ(0, mcp_loaded_graph_buffer_info(lg, 0, &info));
	EXPECT_EQ(apart.node, info.node);
	ASSERT_EQ(0, mcp_loaded_graph_buffer_info(lg, 1, &info));
	EXPECT_EQ(lo.node, info.node);
	ASSERT_EQ(0, exec_wait(_metadata, self->rt, lg, NULL, 0, &st, nodes, 3));
	EXPECT_EQ(MCP_EXEC_DONE, st.state);
	EXPECT_EQ(apart.node, nodes[0].numa_node);
	EXPECT_EQ(apart.node, nodes[1].numa_node);
	EXPECT_EQ(lo.node, nodes[2].numa_node);
	mcp_loaded_graph_free(lg);
	mcp_graph_free(def);
}

TEST_F(graph, load_refuses_bad_placement)
{
	struct mcp_graph_def *def = diamond(_metadata, 64);
	struct mcp_loaded_graph *lg = NULL;
	struct mcp_load_buffer_node entry = { .name = "no_such_buffer", .node = 0 };
	struct mcp_load_opts lo = { .size = sizeof(lo), .flags = MCP_LOAD_NODE, .node = 64 };

	ASSERT_NE(NULL, def);
	EXPECT_EQ(-EINVAL, mcp_runtime_load_opts(self->rt, def, &lo, &lg, NULL));
	EXPECT_NE(NULL, strstr(mcp_strerror_last(), "node 64 is not an online NUMA node"))
		TH_LOG("%s", mcp_strerror_last());
	EXPECT_NE(NULL, strstr(mcp_strerror_last(), "buffers can go on node 0"))
		TH_LOG("%s", mcp_strerror_last());
	lo.node = -2;
	EXPECT_EQ(-EINVAL, mcp_runtime_load_opts(self->rt, def, &lo, &lg, NULL));
	lo.node = 0;
	lo.flags = 1U << 7;
	EXPECT_EQ(-EINVAL, mcp_runtime_load_opts(self->rt, def, &lo, &lg, NULL));
	lo.flags = 0;
	lo.size = sizeof(lo) - 1;
	EXPECT_EQ(-EINVAL, mcp_runtime_load_opts(self->rt, def, &lo, &lg, NULL));
	lo.size = sizeof(lo);
	lo.n_buffer_nodes = 1;
	EXPECT_EQ(-EINVAL, mcp_runtime_load_opts(self->rt, def, &lo, &lg, NULL));
	lo.buffer_nodes = &entry;
	EXPECT_EQ(-ENOENT, mcp_runtime_load_opts(self->rt, def, &lo, &lg, NULL));
	EXPECT_NE(NULL, strstr(mcp_strerror_last(), "no_such_buffer")) TH_LOG("%s", mcp_strerror_last());
	entry.name = "mid";
	entry.node = 64;
	EXPECT_EQ(-EINVAL, mcp_runtime_load_opts(self->rt, def, &lo, &lg, NULL));
	EXPECT_NE(NULL, strstr(mcp_strerror_last(), "buffer 'mid'")) TH_LOG("%s", mcp_strerror_last());
	EXPECT_EQ(NULL, lg);
	/* without MCP_LOAD_NODE, node is ignored: the default placement */
	lo.n_buffer_nodes = 0;
	lo.node = 64;
	ASSERT_EQ(0, mcp_runtime_load_opts(self->rt, def, &lo, &lg, NULL)) TH_LOG("%s", mcp_strerror_last());
	mcp_loaded_graph_free(lg);
	mcp_graph_free(def);
}

/* ---- mcpctl graph ---- */

static char cli_out[1 << 20];

static json_t *parse_json(struct __test_metadata *_metadata, const char *text)
{
	json_error_t error;
	json_t *doc = json_loads(text, 0, &error);

	EXPECT_NE(NULL, doc) TH_LOG("not JSON (%s): %.400s", error.text, text);
	return doc;
}

static int has_keys(json_t *obj, const char *const *keys, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!json_object_get(obj, keys[i]))
			return 0;
	return 1;
}

/* Whether the module has MCP_FEATURE_JOB_CHAINS. */
static int module_has_chains(void)
{
	struct mcp_device *dev = NULL;
	uint64_t features = 0;

	if (mcp_open(NULL, &dev))
		return 0;
	mcp_get_version(dev, NULL, NULL, &features, NULL, 0);
	mcp_close(dev);
	return !!(features & MCP_FEATURE_JOB_CHAINS);
}

#define HAS_KEYS(obj, ...) \
	has_keys(obj, (const char *const[]){ __VA_ARGS__ }, \
		 sizeof((const char *const[]){ __VA_ARGS__ }) / sizeof(const char *))

TEST(mcpctl_graph_build_show_run_json)
{
	json_t *doc, *nodes, *node, *workers, *w, *lat, *chk;
	size_t i;
	int chains;

	ASSERT_EQ(0, mcp_ensure_loaded());
	chains = module_has_chains();
	ASSERT_EQ(0, MCP_MCPCTL(cli_out, "-j", "graph", "build", "--demo", "attention", "-o",
				"/tmp/demo.mgph")) TH_LOG("%s", cli_out);
	doc = parse_json(_metadata, cli_out);
	ASSERT_NE(NULL, doc);
	EXPECT_TRUE(HAS_KEYS(doc, "output", "name", "binary_bytes", "json_bytes", "nodes"));
	EXPECT_LT(json_integer_value(json_object_get(doc, "binary_bytes")),
		  json_integer_value(json_object_get(doc, "json_bytes")));
	json_decref(doc);

	ASSERT_EQ(0, MCP_MCPCTL(cli_out, "-j", "graph", "show", "/tmp/demo.mgph")) TH_LOG("%s", cli_out);
	doc = parse_json(_metadata, cli_out);
	ASSERT_NE(NULL, doc);
	EXPECT_TRUE(HAS_KEYS(doc, "name", "binary_bytes", "json_bytes", "buffer_bytes", "buffers",
			     "tensors", "nodes", "edges"));
	EXPECT_EQ(36, json_array_size(json_object_get(doc, "nodes")));
	EXPECT_LT(0, json_array_size(json_object_get(doc, "edges")));
	json_decref(doc);

	ASSERT_EQ(0, MCP_MCPCTL(cli_out, "-j", "graph", "run", "/tmp/demo.mgph", "--iterations",
				"3", "--warmup", "1", "--inline")) TH_LOG("%s", cli_out);
	doc = parse_json(_metadata, cli_out);
	ASSERT_NE(NULL, doc);
	EXPECT_TRUE(HAS_KEYS(doc, "graph", "context", "iterations", "warmup", "workers",
			     "latency_us", "nodes", "inline_check"));
	EXPECT_STREQ("host", json_string_value(json_object_get(doc, "context")));
	EXPECT_EQ(3, json_integer_value(json_object_get(doc, "iterations")));
	EXPECT_EQ(1, json_integer_value(json_object_get(doc, "warmup")));
	lat = json_object_get(doc, "latency_us");
	EXPECT_TRUE(HAS_KEYS(lat, "p50", "p99", "max"));
	EXPECT_LT(0.0, json_number_value(json_object_get(lat, "p50")));
	EXPECT_LE(json_number_value(json_object_get(lat, "p50")),
		  json_number_value(json_object_get(lat, "max")));
	workers = json_object_get(doc, "workers");
	EXPECT_LE(1, json_array_size(workers));
	json_array_foreach(workers, i, w) {
		EXPECT_TRUE(HAS_KEYS(w, "node", "tid", "jobs", "failed", "mode", "batch"));
		EXPECT_STREQ(chains ? "chains" : "batch",
			     json_string_value(json_object_get(w, "mode")));
	}
	nodes = json_object_get(doc, "nodes");
	EXPECT_EQ(36, json_array_size(nodes));
	json_array_foreach(nodes, i, node) {
		EXPECT_TRUE(HAS_KEYS(node, "index", "name", "op", "engine", "numa_node",
				     "worker_tid", "p50_us", "p99_us", "max_us"));
		if (!strcmp(json_string_value(json_object_get(node, "engine")) ?: "", "worker"))
			EXPECT_LT(0, json_integer_value(json_object_get(node, "worker_tid")));
		EXPECT_LE(0, json_integer_value(json_object_get(node, "numa_node")));
	}
	chk = json_object_get(doc, "inline_check");
	EXPECT_TRUE(HAS_KEYS(chk, "max_abs_error", "tolerance", "ok"));
	EXPECT_TRUE(json_is_true(json_object_get(chk, "ok"))) TH_LOG("%s", cli_out);
	json_decref(doc);

	/* the text form names every node's engine */
	ASSERT_EQ(0, MCP_MCPCTL(cli_out, "graph", "run", "/tmp/demo.mgph", "--iterations", "1"));
	EXPECT_NE(NULL, strstr(cli_out, "p50")) TH_LOG("%s", cli_out);
	EXPECT_NE(NULL, strstr(cli_out, "layernorm"));
	EXPECT_NE(NULL, strstr(cli_out, "worker"));

	/* jobs per read, and one job per read, give the same numbers */
	EXPECT_EQ(0, MCP_MCPCTL(cli_out, "graph", "run", "/tmp/demo.mgph", "--iterations", "1",
				"--no-chains", "--inline")) TH_LOG("%s", cli_out);
	EXPECT_NE(NULL, strstr(cli_out, " batch")) TH_LOG("%s", cli_out);
	EXPECT_EQ(0, MCP_MCPCTL(cli_out, "graph", "run", "/tmp/demo.mgph", "--iterations", "1",
				"--worker-batch", "1", "--no-chains", "--inline")) TH_LOG("%s", cli_out);
	EXPECT_NE(NULL, strstr(cli_out, " one-job")) TH_LOG("%s", cli_out);
	unlink("/tmp/demo.mgph");
}

/* graph run --node N: the buffers and the worker nodes on N. */
TEST(mcpctl_graph_run_on_a_node)
{
	json_t *doc, *nodes, *node, *buffers, *b;
	int target = -1;
	size_t i;

	ASSERT_EQ(0, mcp_ensure_loaded());
	if (access("/sys/devices/system/node/node1", F_OK))
		SKIP(return, "no NUMA node 1");
	ASSERT_EQ(0, MCP_MCPCTL(cli_out, "graph", "build", "--demo", "attention", "-o",
				"/tmp/demo-node.mgph")) TH_LOG("%s", cli_out);
	ASSERT_EQ(0, MCP_MCPCTL(cli_out, "-j", "graph", "run", "/tmp/demo-node.mgph", "--node",
				"1", "--iterations", "1", "--warmup", "0")) TH_LOG("%s", cli_out);
	doc = parse_json(_metadata, cli_out);
	ASSERT_NE(NULL, doc);
	EXPECT_EQ(1, json_integer_value(json_object_get(doc, "node_asked")));
	buffers = json_object_get(doc, "buffers");
	EXPECT_LT(0, json_array_size(buffers));
	json_array_foreach(buffers, i, b) {
		EXPECT_TRUE(HAS_KEYS(b, "index", "name", "node"));
		EXPECT_EQ(1, json_integer_value(json_object_get(b, "node"))) TH_LOG("buffer %zu", i);
	}
	nodes = json_object_get(doc, "nodes");
	EXPECT_EQ(36, json_array_size(nodes));
	json_array_foreach(nodes, i, node) {
		if (strcmp(json_string_value(json_object_get(node, "engine")) ?: "", "worker"))
			continue;
		target = (int)json_integer_value(json_object_get(node, "numa_node"));
		EXPECT_EQ(1, target) TH_LOG("node %zu", i);
	}
	EXPECT_EQ(1, target) TH_LOG("no worker node in the demo");
	json_decref(doc);

	/* the text form says where the buffers are */
	ASSERT_EQ(0, MCP_MCPCTL(cli_out, "graph", "run", "/tmp/demo-node.mgph", "--node", "1",
				"--iterations", "1", "--warmup", "0")) TH_LOG("%s", cli_out);
	EXPECT_NE(NULL, strstr(cli_out, "on node 1 (asked node 1)")) TH_LOG("%s", cli_out);

	/* a node that is not there: exit 1, naming it; a negative one: usage */
	EXPECT_EQ(1, MCP_MCPCTL(cli_out, "graph", "run", "/tmp/demo-node.mgph", "--node", "64",
				"--iterations", "1"));
	EXPECT_NE(NULL, strstr(cli_out, "node 64 is not an online NUMA node")) TH_LOG("%s", cli_out);
	EXPECT_EQ(2, MCP_MCPCTL(cli_out, "graph", "run", "/tmp/demo-node.mgph", "--node", "-5"));
	unlink("/tmp/demo-node.mgph");
}

TEST(mcpctl_graph_refuses_a_bad_graph_file)
{
	struct mcp_graph_def *def = diamond(_metadata, 64);
	unsigned char buf[4096];
	size_t len = 0;
	uint16_t bad_op = 999;
	FILE *f;

	ASSERT_NE(NULL, def);
	ASSERT_EQ(0, mcp_graph_serialize_as(def, MCP_GRAPH_ENCODING_FIXED, buf, sizeof(buf), &len));
	mcp_graph_free(def);
	/* node 1's op: header 48 + 3 buffers x 32 + 4 tensors x 48 + 48 */
	memcpy(buf + 48 + 3 * 32 + 4 * 48 + 48, &bad_op, sizeof(bad_op));
	f = fopen("/tmp/bad.mgph", "wb");
	ASSERT_NE(NULL, f);
	ASSERT_EQ(len, fwrite(buf, 1, len, f));
	fclose(f);

	EXPECT_EQ(1, MCP_MCPCTL(cli_out, "graph", "run", "/tmp/bad.mgph")) TH_LOG("%s", cli_out);
	EXPECT_NE(NULL, strstr(cli_out, "node 1")) TH_LOG("%s", cli_out);
	EXPECT_EQ(1, MCP_MCPCTL(cli_out, "graph", "show", "/tmp/bad.mgph")) TH_LOG("%s", cli_out);
	EXPECT_NE(NULL, strstr(cli_out, "node 1")) TH_LOG("%s", cli_out);
	EXPECT_EQ(1, MCP_MCPCTL(cli_out, "graph", "run", "/tmp/no-such-graph")) TH_LOG("%s", cli_out);
	EXPECT_EQ(2, MCP_MCPCTL(cli_out, "graph", "run", "/tmp/bad.mgph", "--iterations", "0"));
	EXPECT_EQ(2, MCP_MCPCTL(cli_out, "graph", "run", "/tmp/bad.mgph", "--bind", "noequals"));
	EXPECT_EQ(2, MCP_MCPCTL(cli_out, "graph", "run", "/tmp/bad.mgph", "--worker-batch", "1025"));
	unlink("/tmp/bad.mgph");
}

/*
 * The kernel and libmcp on the same mutated compact graphs: the demo
 * block in format version 2 with 1 to 3 bytes changed (mostly in its
 * varint tables), through GRAPH_CREATE and mcp_graph_check().  Both must
 * give the same (reason, kind, index) except where only the kernel can
 * tell: a bound BO shorter than a (mutated) buffer length (BUFFER) and the
 * DEVICE engine on a context without one (ENGINE); libmcp's verdict must
 * then come later in the checking order, or be none.  And, on a module
 * with MCP_FEAT_WORKER_OPS, where only libmcp can tell: a worker
 * operator's rule (op, arity, param, shape at a node), which the kernel
 * leaves to libmcp; the kernel's verdict must then come later, or be none.
 */
static int verdict_later(const struct mcp_graph_invalid *lib,
			 const struct mcp_graph_create *k)
{
	if (lib->reason == MCP_GRAPH_ERROR_NONE)
		return 1;
	if (lib->kind != k->error_kind)
		return lib->kind > k->error_kind;
	return lib->index > k->error_index ||
	       (lib->index == k->error_index && k->error_reason == MCP_GRAPH_ERR_ENGINE);
}

/* The kernel's verdict (@kret, @k) comes after libmcp's node verdict @lib. */
static int kernel_later(const struct mcp_graph_invalid *lib, int kret,
			const struct mcp_graph_create *k)
{
	if (!kret || k->error_reason == MCP_GRAPH_ERR_WRITERS ||
	    k->error_reason == MCP_GRAPH_ERR_CYCLE)
		return 1;
	if (k->error_kind != MCP_GRAPH_AT_NODE)
		return 0;
	return k->error_index > lib->index ||
	       (k->error_index == lib->index && k->error_reason == MCP_GRAPH_ERR_ALIAS);
}

static int worker_rule(const struct mcp_graph_invalid *lib, int kret,
		       const struct mcp_graph_create *k)
{
	if (lib->kind != MCP_GRAPH_AT_NODE_ENTRY)
		return 0;
	switch (lib->reason) {
	case MCP_GRAPH_ERROR_OP:
	case MCP_GRAPH_ERROR_ARITY:
	case MCP_GRAPH_ERROR_PARAM:
	case MCP_GRAPH_ERROR_SHAPE:
		return kernel_later(lib, kret, k);
	default:
		return 0;
	}
}

TEST(kernel_and_libmcp_agree_on_mutated_compact_graphs)
{
	static unsigned char good[8192], bytes[8192];
	struct mcp_graph_def *def = NULL;
	__u32 bo[64];
	size_t len = 0;
	unsigned int same = 0, kernel_only = 0, accepted = 0, encoding = 0, libmcp_only = 0;
	struct mcp_version v = { .size = sizeof(v) };
	uint64_t s = 2026;
	int fd, opaque;

	ASSERT_EQ(0, mcp_ensure_loaded());
	fd = mcp_selftest_open();
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, mcp_ioctl(fd, MCP_IOC_GET_VERSION, &v));
	opaque = !!(v.features & MCP_FEAT_WORKER_OPS);
	ASSERT_EQ(0, mcp_graph_demo_attention(NULL, &def));
	ASSERT_EQ(0, mcp_graph_serialize_as(def, MCP_GRAPH_ENCODING_COMPACT, good, sizeof(good),
					    &len));
	mcp_graph_free(def);
	/* Every buffer index bound to a 1 MiB BO: the demo's fit. */
	for (int k = 0; k < 64; k++) {
		struct mcp_bo_create c = { .size = sizeof(c), .length = 1 << 20 };

		ASSERT_EQ(0, mcp_ioctl(fd, MCP_IOC_BO_CREATE, &c));
		bo[k] = c.handle;
	}
	for (int round = 0; round < 600; round++) {
		struct mcp_graph_invalid err = { .size = sizeof(err) };
		struct mcp_graph_header hdr;
		struct mcp_graph_create arg = { .size = sizeof(arg) };
		int kret, lret;

		memcpy(bytes, good, len);
		for (int f = 0; f <= round % 3; f++) {
			s = s * 6364136223846793005ULL + 1442695040888963407ULL;
			/* Three in four in the tables, where the varints are. */
			size_t at = (s >> 33) % 4 ? 48 + (s >> 33) % 1500 : (s >> 33) % len;

			bytes[at] = (unsigned char)(s >> 24);
		}
		memcpy(&hdr, bytes, sizeof(hdr));
		arg.graph = (__u64)(uintptr_t)bytes;
		arg.graph_len = len;
		arg.handles = (__u64)(uintptr_t)bo;
		arg.n_handles = hdr.n_buffers <= 64 ? hdr.n_buffers : 64;
		kret = mcp_ioctl(fd, MCP_IOC_GRAPH_CREATE, &arg);
		lret = mcp_graph_check(bytes, len, NULL, &err);
		if (opaque && lret && worker_rule(&err, kret, &arg)) {
			if (!kret) {
				struct mcp_graph_destroy d = { .size = sizeof(d),
							       .handle = arg.handle };

				EXPECT_EQ(0, mcp_ioctl(fd, MCP_IOC_GRAPH_DESTROY, &d));
			}
			libmcp_only++;
			continue;
		}
		if (!kret) {
			struct mcp_graph_destroy d = { .size = sizeof(d), .handle = arg.handle };

			EXPECT_EQ(0, lret) TH_LOG("round %d: kernel accepts, libmcp: %s", round,
						  err.message);
			EXPECT_EQ(0, mcp_ioctl(fd, MCP_IOC_GRAPH_DESTROY, &d));
			accepted++;
			continue;
		}
		ASSERT_EQ(-EINVAL, kret) TH_LOG("round %d: %s", round, strerror(-kret));
		if ((arg.error_reason == MCP_GRAPH_ERR_BUFFER ||
		     arg.error_reason == MCP_GRAPH_ERR_ENGINE) && verdict_later(&err, &arg)) {
			kernel_only++;
			continue;
		}
		EXPECT_EQ(-EINVAL, lret) TH_LOG("round %d: the kernel refuses (%u, %u, %u)", round,
						arg.error_reason, arg.error_kind, arg.error_index);
		EXPECT_EQ(arg.error_reason, err.reason)
			TH_LOG("round %d: kernel (%u, %u, %u), libmcp (%u, %u, %u): %s", round,
			       arg.error_reason, arg.error_kind, arg.error_index, err.reason,
			       err.kind, err.index, err.message);
		EXPECT_EQ(arg.error_kind, err.kind) TH_LOG("round %d: %s", round, err.message);
		EXPECT_EQ(arg.error_index, err.index) TH_LOG("round %d: %s", round, err.message);
		same++;
		encoding += arg.error_reason == MCP_GRAPH_ERR_ENCODING;
	}
	TH_LOG("600 mutated compact graphs: %u same refusal (%u encoding), %u accepted by both, "
	       "%u kernel-only refusals, %u worker operator rules (libmcp's)", same, encoding,
	       accepted, kernel_only, libmcp_only);
	EXPECT_LE(300, same);
	EXPECT_LE(50, encoding);
	for (int k = 0; k < 64; k++) {
		struct mcp_bo_destroy d = { .size = sizeof(d), .handle = bo[k] };

		EXPECT_EQ(0, mcp_ioctl(fd, MCP_IOC_BO_DESTROY, &d));
	}
	close(fd);
}

TEST_HARNESS_MAIN
