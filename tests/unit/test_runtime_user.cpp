// SPDX-License-Identifier: GPL-2.0-only
// The userspace executor (Executor::userspace, no /dev/mcp): every
// imported test model against ONNX Runtime, the routing rule it shares
// with mcp.ko (kmod/mcp_route.h), dependency order, a failing operator, a
// time-out, bad bindings and options, the choice of Executor::automatic,
// the C API and mcpctl graph run --executor.
#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <dirent.h>
#include <set>
#include <string>
#include <unistd.h>
#include <vector>

#include <criterion/criterion.h>

#include <mcp/runtime.hpp>

#include "helpers.hpp"
#include "onnx_compare.hpp"
#include "runtime_user.hpp"

#include "../../kmod/mcp_route.h"

namespace {

const std::string models = MCP_ONNX_DIR;

mcp::Runtime user_runtime()
{
	mcp::RuntimeOptions o;
	o.executor = mcp::Executor::userspace;
	return mcp::Runtime(o);
}

template <typename T>
std::vector<std::byte> param_bytes(const T &p)
{
	const auto *b = reinterpret_cast<const std::byte *>(&p);
	return {b, b + sizeof(p)};
}

std::uint32_t add_buffer(mcp::GraphDef &d, const std::string &name, std::uint64_t length,
			 std::uint32_t flags = 0)
{
	mcp::GraphBuffer b;
	b.name = name;
	b.length = (length + 63) / 64 * 64;
	b.flags = flags;
	d.buffers.push_back(b);
	return static_cast<std::uint32_t>(d.buffers.size() - 1);
}

std::uint32_t add_tensor(mcp::GraphDef &d, const std::string &name, std::uint32_t buffer,
			 mcp::DType dtype, std::vector<std::uint32_t> dims)
{
	mcp::GraphTensor t;
	t.name = name;
	t.buffer = buffer;
	t.dtype = dtype;
	t.dims = std::move(dims);
	d.tensors.push_back(t);
	return static_cast<std::uint32_t>(d.tensors.size() - 1);
}

std::uint32_t add_node(mcp::GraphDef &d, const std::string &name, mcp::Op op,
		       std::vector<std::uint32_t> in, std::vector<std::uint32_t> out,
		       std::vector<std::byte> param = {},
		       mcp::EngineClass engine = mcp::EngineClass::worker)
{
	mcp::GraphNode n;
	n.name = name;
	n.op = op;
	n.engine = engine;
	n.inputs = std::move(in);
	n.outputs = std::move(out);
	n.param = std::move(param);
	d.nodes.push_back(n);
	return static_cast<std::uint32_t>(d.nodes.size() - 1);
}

// data[4] -> GATHER(idx[2]) -> g -> RELU -> y, and data -> RELU -> z
// beside it: an index out of range fails the gather at run time.
mcp::GraphDef gather_graph()
{
	mcp::GraphDef d;
	d.name = "gather_fail";
	const auto bd = add_buffer(d, "data", 16, mcp::graph_buffer_input);
	const auto bi = add_buffer(d, "idx", 8, mcp::graph_buffer_input);
	const auto bg = add_buffer(d, "g", 8);
	const auto by = add_buffer(d, "y", 8, mcp::graph_buffer_output);
	const auto bz = add_buffer(d, "z", 16, mcp::graph_buffer_output);
	const auto td = add_tensor(d, "data", bd, mcp::DType::f32, {4});
	const auto ti = add_tensor(d, "idx", bi, mcp::DType::i32, {2});
	const auto tg = add_tensor(d, "g", bg, mcp::DType::f32, {2});
	const auto ty = add_tensor(d, "y", by, mcp::DType::f32, {2});
	const auto tz = add_tensor(d, "z", bz, mcp::DType::f32, {4});
	struct mcp_graph_axis axis = {0, 0};
	add_node(d, "pick", mcp::Op::gather, {td, ti}, {tg}, param_bytes(axis));
	add_node(d, "after", mcp::Op::relu, {tg}, {ty});
	add_node(d, "beside", mcp::Op::relu, {td}, {tz});
	return d;
}

// A chain of @n GELUs over @elems floats: a -> b, then b in place.
mcp::GraphDef gelu_chain(std::uint32_t n, std::uint32_t elems)
{
	mcp::GraphDef d;
	d.name = "gelu_chain";
	const auto ba = add_buffer(d, "a", std::uint64_t{elems} * 4, mcp::graph_buffer_input);
	const auto bb = add_buffer(d, "b", std::uint64_t{elems} * 4, mcp::graph_buffer_output);
	const auto ta = add_tensor(d, "a", ba, mcp::DType::f32, {elems});
	const auto tb = add_tensor(d, "b", bb, mcp::DType::f32, {elems});
	for (std::uint32_t i = 0; i < n; i++) {
		add_node(d, "gelu" + std::to_string(i), mcp::Op::gelu, {i ? tb : ta}, {tb});
		if (i)
			d.nodes.back().flags = mcp::graph_node_inplace;
	}
	return d;
}

struct Model {
	const char *file;
	const char *input;
	const char *dims;	// --input NAME=DIMS, or null
	unsigned outputs;
};

// The pairs of test::compare_with_ort()'s callers (test_onnx*.cpp).
const Model named_models[] = {
	{"mlp.onnx", "x_mlp.npy", "x=3x16", 0},
	{"bert14.onnx", "x_bert.npy", nullptr, 0},
	{"bert17.onnx", "x_bert.npy", nullptr, 0},
	{"consts.onnx", "x_small.npy", nullptr, 0},
	{"resnet.onnx", "x_resnet.npy", "x=2x3x32x32", 0},
	{"shapes.onnx", "x_shapes1.npy", nullptr, 2},
	{"shapes.onnx", "x_shapes3.npy", "x=3x4x6", 2},
	{"ops9.onnx", "x_ops.npy", nullptr, 7},
	{"ops13.onnx", "x_ops.npy", nullptr, 30},
	{"ops14.onnx", "x_ops.npy", nullptr, 2},
};

bool starts_with(const std::string &s, const char *prefix)
{
	return s.rfind(prefix, 0) == 0;
}

} // namespace

Test(runtime_user, every_imported_test_model_matches_onnx_runtime, .timeout = 300)
{
	std::set<std::string> done;
	for (const Model &m : named_models) {
		mcp::onnx::ImportOptions o;
		if (m.dims)
			o.inputs.push_back(mcp::onnx::parse_input_spec(m.dims));
		test::compare_with_ort(models, m.file, m.input, o, m.outputs, test::RunOn::userspace);
		done.insert(m.file);
	}
	// Every other model of tests/onnx: a CNN case or refused by design.
	DIR *dir = opendir(models.c_str());
	cr_assert_not_null(dir, "%s", models.c_str());
	std::vector<std::string> cnn;
	while (const dirent *e = readdir(dir)) {
		const std::string f = e->d_name;
		if (f.size() < 5 || f.compare(f.size() - 5, 5, ".onnx") != 0 || done.count(f))
			continue;
		if (starts_with(f, "cnn_")) {
			cnn.push_back(f);
			continue;
		}
		cr_assert(starts_with(f, "bad_") || starts_with(f, "cnnbad_") || f == "opset18.onnx" ||
				  f == "unsupported.onnx",
			  "%s: a test model this test does not run: add it to named_models", f.c_str());
	}
	closedir(dir);
	cr_assert_gt(cnn.size(), 10u);
	for (const std::string &f : cnn)
		test::compare_with_ort(models, f, "x_" + f.substr(0, f.size() - 5) + ".npy", {}, 0,
				       test::RunOn::userspace);
}

Test(runtime_user, the_shared_routing_rule)
{
	// Most input bytes win; inputs on one node add up; ties: the lowest.
	const int nodes[] = {1, 0, 1, -1};
	const __u64 bytes[] = {100, 150, 60, 1000};
	cr_expect_eq(mcp_route_target(nodes, bytes, 4), 1);
	const __u64 tie[] = {50, 100, 50, 0};
	cr_expect_eq(mcp_route_target(nodes, tie, 4), 0);
	const int unknown[] = {-1, -1};
	cr_expect_eq(mcp_route_target(unknown, bytes, 2), MCP_ROUTE_NO_NODE);
	cr_expect_eq(mcp_route_target(nodes, bytes, 0), MCP_ROUTE_NO_NODE);

	// Node 1 without workers: the nearest node with workers takes its jobs.
	const __u32 workers[] = {1, 0, 2, 1};
	static const int dist[4][4] = {{10, 30, 20, 20}, {30, 10, 25, 21}, {20, 25, 10, 20},
				       {20, 21, 20, 10}};
	auto d = [](int a, int b, const void *) { return dist[a][b]; };
	cr_expect_eq(mcp_route_node(2, workers, 4, d, nullptr), 2);
	cr_expect_eq(mcp_route_node(1, workers, 4, d, nullptr), 3);
	cr_expect_eq(mcp_route_node(MCP_ROUTE_NO_NODE, workers, 4, d, nullptr), 0);
	const __u32 none[] = {0, 0, 0, 0};
	cr_expect_eq(mcp_route_node(0, none, 4, d, nullptr), MCP_ROUTE_NO_NODE);
}

Test(runtime_user, buffer_is_refused_and_memory_is_placed, .timeout = 30)
{
	mcp::Runtime rt = user_runtime();
	mcp::LoadedGraph g = rt.load(gelu_chain(3, 1024));
	try {
		(void)g.buffer(0u);
		cr_assert_fail("buffer() on the userspace executor");
	} catch (const mcp::Error &e) {
		cr_expect_eq(e.errnum(), EOPNOTSUPP, "%s", e.what());
	}
	// Loaded pages are where the loading thread's first touch put them.
	unsigned cpu = 0, node = 0;
	cr_assert_eq(getcpu(&cpu, &node), 0);
	const int where = g.buffer_node(0);
	cr_expect(where == static_cast<int>(node) || where == -1, "buffer on node %d", where);
	cr_expect_eq(g.memory(0u).size(), 4096u);
	cr_expect_eq(g.memory("b").size(), 4096u);

	float *a = reinterpret_cast<float *>(g.memory("a").data());
	for (int i = 0; i < 1024; i++)
		a[i] = static_cast<float>(i % 17) * 0.25f - 2.0f;
	std::vector<std::byte> ref0(g.memory(0u).begin(), g.memory(0u).end());
	std::vector<std::byte> ref1(g.memory(1u).begin(), g.memory(1u).end());
	std::vector<std::span<std::byte>> spans = {ref0, ref1};
	mcp::Runtime::run_inline(g.def(), spans);

	const mcp::ExecStatus st = rt.run(g);
	cr_assert_eq(st.state, mcp::ExecState::done, "%s", mcp::exec_failure_message(st, g.def()).c_str());
	cr_expect_eq(st.result, 0);
	cr_expect_eq(st.failed_node, -1);
	cr_expect_eq(st.graph, g.handle());
	cr_expect_neq(st.end_ns, 0u);
	cr_assert_eq(st.nodes.size(), 3u);
	std::vector<int> tids;
	for (const auto &w : rt.workers())
		tids.push_back(w.tid);
	for (std::size_t i = 0; i < 3; i++) {
		const mcp::NodeStatus &n = st.nodes[i];
		cr_expect_eq(n.result, 0);
		cr_expect_eq(n.engine, mcp::EngineClass::worker);
		cr_expect(std::find(tids.begin(), tids.end(), n.worker_tid) != tids.end());
		cr_expect(n.start_ns >= st.submit_ns && n.end_ns >= n.start_ns);
		// The chain runs in order: each node after the one before.
		if (i)
			cr_expect_geq(n.start_ns, st.nodes[i - 1].end_ns);
		if (where >= 0)
			cr_expect_eq(n.numa_node, where, "node %zu ran on %d", i, n.numa_node);
	}
	cr_expect(std::memcmp(g.memory(0u).data(), ref0.data(), ref0.size()) == 0);
	cr_expect(std::memcmp(g.memory(1u).data(), ref1.data(), ref1.size()) == 0);
	std::uint64_t jobs = 0;
	for (const auto &w : rt.workers())
		jobs += w.jobs;
	cr_expect_eq(jobs, 3u);
}

Test(runtime_user, a_failing_operator_fails_the_execution_and_cancels_its_dependents,
     .timeout = 30)
{
	mcp::Runtime rt = user_runtime();
	const mcp::GraphDef def = gather_graph();
	mcp::LoadedGraph g = rt.load(def);
	auto *idx = reinterpret_cast<std::int32_t *>(g.memory("idx").data());
	idx[0] = 1;
	idx[1] = 7;	// past data's 4 elements: refused at run time

	const mcp::ExecStatus st = rt.run(g);
	cr_assert_eq(st.state, mcp::ExecState::failed);
	cr_expect_eq(st.result, -EINVAL);
	cr_expect_eq(st.failed_node, 0);
	cr_assert_eq(st.nodes.size(), 3u);
	cr_expect_eq(st.nodes[0].result, -EINVAL);
	cr_expect_neq(st.nodes[0].start_ns, 0u);
	// Its dependent never starts.
	cr_expect_eq(st.nodes[1].result, -ECANCELED);
	cr_expect_eq(st.nodes[1].start_ns, 0u);
	const std::string msg = mcp::exec_failure_message(st, def);
	cr_expect(msg.find("node 0 (gather 'pick') failed") != std::string::npos, "%s", msg.c_str());

	// The next execution with a good index runs.
	idx[1] = -1;
	const mcp::ExecStatus ok = rt.run(g);
	cr_expect_eq(ok.state, mcp::ExecState::done, "%s", mcp::exec_failure_message(ok, def).c_str());
	cr_expect_gt(ok.exec_id, st.exec_id);
	std::uint64_t failed = 0;
	for (const auto &w : rt.workers())
		failed += w.failed;
	cr_expect_eq(failed, 1u);
}

Test(runtime_user, a_time_out_abandons_the_running_node_and_cancels_the_rest, .timeout = 60)
{
	mcp::Runtime rt = user_runtime();
	const mcp::GraphDef def = gelu_chain(8, 4u << 20);	// 16 MiB per GELU
	mcp::LoadedGraph g = rt.load(def);
	mcp::ExecOptions eo;
	eo.timeout = std::chrono::milliseconds(10);

	const auto t0 = std::chrono::steady_clock::now();
	const mcp::ExecStatus st = rt.run(g, {}, eo);
	const auto took = std::chrono::steady_clock::now() - t0;
	cr_assert_eq(st.state, mcp::ExecState::failed);
	cr_expect_eq(st.result, -ETIMEDOUT);
	cr_assert_eq(st.nodes.size(), 8u);
	// The node running at the deadline is failed_node and ends with the
	// time-out; every node after it is cancelled.
	cr_assert_geq(st.failed_node, 0);
	const auto f = static_cast<std::size_t>(st.failed_node);
	cr_expect_eq(st.nodes[f].result, -ETIMEDOUT);
	cr_expect_neq(st.nodes[f].start_ns, 0u);
	for (std::size_t i = f + 1; i < 8; i++) {
		cr_expect_eq(st.nodes[i].result, -ECANCELED, "node %zu: %d", i, st.nodes[i].result);
		cr_expect_eq(st.nodes[i].start_ns, 0u);
	}
	const std::string msg = mcp::exec_failure_message(st, def);
	cr_expect(msg.find("failed") != std::string::npos, "%s", msg.c_str());
	// Not the 8 GELUs' time: they would take far longer than one.
	cr_expect_lt(std::chrono::duration_cast<std::chrono::milliseconds>(took).count(), 5000);

	// The graph runs to its end without the time-out.
	const mcp::ExecStatus ok = rt.run(g);
	cr_expect_eq(ok.state, mcp::ExecState::done, "%s", mcp::exec_failure_message(ok, def).c_str());
}

Test(runtime_user, bad_bindings_and_options_are_refused, .timeout = 30)
{
	mcp::Runtime rt = user_runtime();
	const mcp::GraphDef def = gelu_chain(2, 1024);
	mcp::LoadedGraph g = rt.load(def);
	std::vector<std::byte> small(1024), big(8192), other(8192);
	auto errno_of = [&](std::span<const mcp::GraphBinding> b, const mcp::ExecOptions &o = {}) {
		try {
			rt.execute(g, b, o);
		} catch (const mcp::Error &e) {
			return e.errnum();
		}
		return 0;
	};
	const mcp::GraphBinding short_one[] = {{0, nullptr, small}};
	cr_expect_eq(errno_of(short_one), EINVAL);
	const mcp::GraphBinding past[] = {{2, nullptr, big}};
	cr_expect_eq(errno_of(past), EINVAL);
	const mcp::GraphBinding twice[] = {{0, nullptr, big}, {0, nullptr, other}};
	cr_expect_eq(errno_of(twice), EINVAL);
	const mcp::GraphBinding none[] = {{0, nullptr, {}}};
	cr_expect_eq(errno_of(none), EINVAL);
	mcp::Fence f;
	mcp::ExecOptions with_fence;
	with_fence.in_fence = &f;
	cr_expect_eq(errno_of({}, with_fence), EOPNOTSUPP);

	// A good binding replaces the buffer for that execution only.
	float *in = reinterpret_cast<float *>(big.data());
	for (int i = 0; i < 1024; i++)
		in[i] = 1.0f;
	const mcp::GraphBinding good[] = {{0, nullptr, big}};
	const mcp::ExecStatus st = rt.run(g, good);
	cr_expect_eq(st.state, mcp::ExecState::done);
	// The graph's own input buffer was not read: it is all zero.
	cr_expect(std::all_of(g.memory(0u).begin(), g.memory(0u).end(),
			      [](std::byte b) { return b == std::byte{0}; }));
	const float *out = reinterpret_cast<const float *>(g.memory(1u).data());
	cr_expect_gt(out[0], 0.66f, "%g", double(out[0]));	// GELU(GELU(1)) = 0.673
	cr_expect_lt(out[0], 0.69f, "%g", double(out[0]));

	try {
		(void)rt.status(999999);
		cr_assert_fail("status of an unknown execution");
	} catch (const mcp::Error &e) {
		cr_expect_eq(e.errnum(), ENOENT);
	}
}

Test(runtime_user, invalid_and_device_graphs_are_refused_at_load)
{
	mcp::Runtime rt = user_runtime();
	mcp::GraphDef bad = gelu_chain(1, 1024);
	bad.nodes[0].inputs[0] = 99;	// no such tensor: the same validator
	try {
		(void)rt.load(bad);
		cr_assert_fail("an invalid graph loaded");
	} catch (const mcp::GraphInvalid &e) {
		cr_expect_eq(e.error().kind, mcp::GraphErrorKind::node);
	}
	mcp::GraphDef dev = gelu_chain(1, 1024);
	const auto bc = add_buffer(dev, "c", 4096);
	const auto tc = add_tensor(dev, "c", bc, mcp::DType::f32, {1024});
	add_node(dev, "to_device", mcp::Op::copy, {1}, {tc}, {}, mcp::EngineClass::device);
	try {
		(void)rt.load(dev);
		cr_assert_fail("a device node loaded");
	} catch (const mcp::GraphInvalid &e) {
		cr_assert_fail("refused by the validator: %s", e.what());
	} catch (const mcp::Error &e) {
		cr_expect_eq(e.errnum(), EOPNOTSUPP, "%s", e.what());
		cr_expect(std::strstr(e.what(), "node 1 (copy 'to_device')") != nullptr, "%s", e.what());
	}
	mcp::RuntimeOptions o;
	o.executor = mcp::Executor::userspace;
	o.nodes = {4096};
	try {
		mcp::Runtime bad_rt(o);
		cr_assert_fail("a runtime on node 4096");
	} catch (const mcp::Error &e) {
		cr_expect_eq(e.errnum(), EINVAL, "%s", e.what());
	}
	mcp::LoadOptions lo;
	lo.node = 4096;
	try {
		(void)rt.load(gelu_chain(1, 64), lo);
		cr_assert_fail("buffers on node 4096");
	} catch (const mcp::Error &e) {
		cr_expect_eq(e.errnum(), EINVAL, "%s", e.what());
	}
}

Test(runtime_user, auto_is_the_kernel_only_where_dev_mcp_runs_graphs)
{
	mcp::RuntimeOptions o;
	o.executor = mcp::Executor::automatic;
	mcp::Runtime rt(o);
	if (::access("/dev/mcp", F_OK) != 0)
		cr_expect_eq(rt.executor(), mcp::Executor::userspace);
	cr_expect_str_eq(mcp::to_string(rt.executor()),
			 rt.executor() == mcp::Executor::kernel ? "kernel" : "userspace");
	cr_expect_eq(mcp::parse_executor("auto"), mcp::Executor::automatic);
	cr_expect_eq(mcp::parse_executor("userspace"), mcp::Executor::userspace);
	try {
		(void)mcp::parse_executor("gpu");
		cr_assert_fail("executor 'gpu'");
	} catch (const mcp::Error &e) {
		cr_expect_eq(e.errnum(), EINVAL);
	}
	if (::access("/dev/mcp", F_OK) == 0)
		return;
	o.executor = mcp::Executor::kernel;
	try {
		mcp::Runtime k(o);
		cr_assert_fail("the kernel executor without /dev/mcp");
	} catch (const mcp::Error &e) {
		cr_expect_eq(e.errnum(), ENOENT, "%s", e.what());
	}
}

Test(runtime_user, c_api_runs_without_a_context, .timeout = 30)
{
	struct mcp_runtime_opts o = {};
	o.size = sizeof(o);
	o.executor = MCP_RUNTIME_EXECUTOR_USERSPACE;
	struct mcp_runtime *rt = nullptr;
	cr_assert_eq(mcp_runtime_new(nullptr, &o, &rt), 0, "%s", mcp_strerror_last());
	cr_expect_eq(mcp_runtime_executor(rt), MCP_RUNTIME_EXECUTOR_USERSPACE);
	cr_expect_gt(mcp_runtime_worker_count(rt), 0u);

	struct mcp_runtime_opts k = {};
	k.size = MCP_RUNTIME_OPTS_SIZE_VER1;	// before executor: the kernel
	struct mcp_runtime *none = nullptr;
	cr_expect_eq(mcp_runtime_new(nullptr, &k, &none), -EINVAL);
	o.executor = 7;
	cr_expect_eq(mcp_runtime_new(nullptr, &o, &none), -EINVAL);

	struct mcp_graph_def *def = nullptr;
	const std::vector<std::byte> bytes = gather_graph().serialize();
	cr_assert_eq(mcp_graph_parse(bytes.data(), bytes.size(), &def, nullptr), 0, "%s",
		     mcp_strerror_last());
	struct mcp_loaded_graph *lg = nullptr;
	cr_assert_eq(mcp_runtime_load(rt, def, &lg, nullptr), 0, "%s", mcp_strerror_last());
	void *idx = nullptr;
	std::uint64_t len = 0;
	cr_assert_eq(mcp_loaded_graph_buffer_by_name(lg, "idx", &idx, &len), 0);
	cr_expect_eq(len, 64u);
	static_cast<std::int32_t *>(idx)[0] = 0;
	static_cast<std::int32_t *>(idx)[1] = 3;
	struct mcp_buffer_info info = {};
	info.size = sizeof(info);
	cr_expect_eq(mcp_loaded_graph_buffer_info(lg, 0, &info), -EOPNOTSUPP);

	std::uint64_t id = 0;
	struct mcp_fence *fence = reinterpret_cast<struct mcp_fence *>(1);
	cr_assert_eq(mcp_runtime_execute(rt, lg, nullptr, 0, nullptr, &id, &fence), 0, "%s",
		     mcp_strerror_last());
	cr_expect_null(fence);
	cr_expect_eq(mcp_runtime_wait(rt, id, 5000000000LL), 0, "%s", mcp_strerror_last());
	struct mcp_exec_status st = {};
	st.size = sizeof(st);
	struct mcp_exec_node nodes[3];
	cr_assert_eq(mcp_runtime_status(rt, id, &st, nodes, 3), 0);
	cr_expect_eq(st.state, MCP_EXEC_DONE);
	cr_expect_eq(st.n_nodes, 3u);
	cr_expect_neq(nodes[0].worker_tid, 0);
	cr_expect_eq(mcp_runtime_wait(rt, id + 100, 0), -ENOENT);
	mcp_loaded_graph_free(lg);
	mcp_graph_free(def);
	mcp_runtime_free(rt);
}

Test(runtime_user, mcpctl_graph_run_reports_the_executor, .timeout = 120)
{
	char tmpl[] = "/tmp/mcp-uexec-XXXXXX";
	cr_assert_not_null(mkdtemp(tmpl));
	const std::string out = tmpl;
	const test::RunResult r =
		test::run({MCPCTL_PATH, "--json", "graph", "run", models + "/mlp.onnx", "--executor",
			   "userspace", "--iterations", "3", "--input", "x=" + models + "/x_mlp.npy",
			   "--save-outputs", out});
	cr_assert_eq(r.exit_code, 0, "%s", r.err.c_str());
	cr_expect(r.out.find("\"executor\":\"userspace\"") != std::string::npos, "%s",
		  r.out.c_str());
	cr_expect(r.out.find("\"context\":\"userspace\"") != std::string::npos, "%s", r.out.c_str());
	cr_expect_eq(access((out + "/y.npy").c_str(), R_OK), 0);
	const test::RunResult a = test::run({MCPCTL_PATH, "graph", "run", models + "/mlp.onnx",
					     "--executor", "auto", "--iterations", "1", "--input",
					     "x=" + models + "/x_mlp.npy"});
	cr_assert_eq(a.exit_code, 0, "%s", a.err.c_str());
	if (::access("/dev/mcp", F_OK) != 0)
		cr_expect(a.out.find("(userspace executor)") != std::string::npos, "%s", a.out.c_str());
	const test::RunResult bad = test::run({MCPCTL_PATH, "graph", "run", models + "/mlp.onnx",
					       "--executor", "gpu"});
	cr_expect_eq(bad.exit_code, 2, "%s", bad.err.c_str());
	std::system(("rm -rf " + out).c_str());
}

Test(runtime_user, sixteen_executions_in_flight_and_a_history_of_sixteen, .timeout = 120)
{
	mcp::Runtime rt = user_runtime();
	const mcp::GraphDef def = gelu_chain(4, 1u << 20);	// 4 MiB per GELU
	mcp::LoadedGraph g = rt.load(def);
	std::vector<mcp::Execution> e;

	for (unsigned i = 0; i < mcp::detail::UserGraph::max_in_flight; i++)
		e.push_back(rt.execute(g));
	try {
		(void)rt.execute(g);
		cr_assert_fail("a 17th execution in flight");
	} catch (const mcp::Error &err) {
		cr_expect_eq(err.errnum(), EAGAIN, "%s", err.what());
	}
	for (const mcp::Execution &x : e) {
		cr_expect(!x.fence, "the userspace executor has no fences");
		cr_assert(rt.wait(x, std::chrono::seconds(30)));
		cr_expect_eq(rt.status(x.exec_id).state, mcp::ExecState::done);
	}
	// Each new execution reuses the oldest ended record.
	std::uint64_t last = 0;
	for (unsigned i = 0; i < mcp::detail::UserGraph::max_in_flight; i++)
		last = rt.run(g).exec_id;
	cr_expect_eq(rt.status(last).state, mcp::ExecState::done);
	try {
		(void)rt.status(e[0].exec_id);
		cr_assert_fail("execution %llu is still known",
			       static_cast<unsigned long long>(e[0].exec_id));
	} catch (const mcp::Error &err) {
		cr_expect_eq(err.errnum(), ENOENT);
	}
}
