// SPDX-License-Identifier: GPL-2.0-only
// The elementwise, reduce and shape operators (graph_ops_elementwise.cpp,
// onnx_import_ops.cpp) against ONNX Runtime: shapes.onnx (a dynamic batch
// whose reshapes come from shape sub-graphs folded at import) at batch 1
// and 3, and ops9/13/14.onnx (every operator in the semantics of each
// opset, broadcasting and odd dims) run inline and compared output by
// output with what tests/onnx/ort_run.js writes: |mcp - ort| <= 1e-4 *
// max(1, |ort|), NaN where ORT has NaN.  Then the operators' rules
// (validator and worker) and the refusals that name the node.
#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <dirent.h>
#include <string>
#include <vector>

#include <criterion/criterion.h>
#include <unistd.h>

#include <mcp/npy.hpp>
#include <mcp/onnx.hpp>
#include <mcp/runtime.hpp>

#include "graph_internal.hpp"
#include "graph_ops_elementwise.hpp"
#include "helpers.hpp"
#include "onnx_compare.hpp"

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wshadow"
#include <linux/mcp.h>
#pragma GCC diagnostic pop

namespace {

const std::string dir = MCP_ONNX_DIR;

bool has(const std::string &s, const std::string &part)
{
	return s.find(part) != std::string::npos;
}

std::string import_error(const std::string &model)
{
	try {
		mcp::onnx::import(dir + "/" + model);
	} catch (const mcp::Error &e) {
		cr_expect_eq(e.errnum(), EINVAL, "%s", e.what());
		return e.what();
	}
	cr_assert_fail("%s imported, but it should not", model.c_str());
	return {};
}

} // namespace

Test(onnx_ops, shapes_model_batch_1_matches_onnx_runtime, .timeout = 30)
{
	const mcp::GraphDef def = test::compare_with_ort(dir, "shapes.onnx", "x_shapes1.npy", {}, 2);
	cr_expect(has(def.notes, "input x: dim 0 ('N') is dynamic, set to 1"), "%s", def.notes.c_str());
	// The shape sub-graphs folded: only run-time operators are left.
	unsigned n = 0;
	for (const auto &node : def.nodes) {
		n++;
		cr_expect(node.op != mcp::Op::copy, "node %s copies", node.name.c_str());
	}
	cr_expect_eq(n, 12u, "%u nodes", n);
}

Test(onnx_ops, shapes_model_batch_3_matches_onnx_runtime, .timeout = 30)
{
	mcp::onnx::ImportOptions o;
	o.inputs.push_back(mcp::onnx::parse_input_spec("x=3x4x6"));
	const mcp::GraphDef def = test::compare_with_ort(dir, "shapes.onnx", "x_shapes3.npy", o, 2);
	const auto y = def.find_buffer("y");
	cr_assert(y.has_value());
	const auto t = mcp::npy::buffer_tensor(def, *y);
	cr_expect(def.tensors[*t].dims == (std::vector<std::uint32_t>{3, 36}));
}

Test(onnx_ops, opset9_attributes_and_coerced_softmax_match_onnx_runtime, .timeout = 30)
{
	test::compare_with_ort(dir, "ops9.onnx", "x_ops.npy", {}, 7);
}

Test(onnx_ops, opset13_operators_match_onnx_runtime, .timeout = 30)
{
	const mcp::GraphDef def = test::compare_with_ort(dir, "ops13.onnx", "x_ops.npy", {}, 30);
	// Five inputs: two chained concats; the scalar exponent is UNARY.
	unsigned concat = 0, unary_pow = 0, pow = 0;
	for (const auto &n : def.nodes) {
		concat += n.op == mcp::Op::concat;
		pow += n.op == mcp::Op::pow;
		if (n.op == mcp::Op::unary && n.param.size() == 16 && n.param[0] == std::byte{MCP_UNARY_POW})
			unary_pow++;
	}
	cr_expect_eq(concat, 3u);
	cr_expect_eq(unary_pow, 2u);
	cr_expect_eq(pow, 3u);
}

Test(onnx_ops, opset14_hardswish_and_clip_match_onnx_runtime, .timeout = 30)
{
	test::compare_with_ort(dir, "ops14.onnx", "x_ops.npy", {}, 2);
}

Test(onnx_ops, bad_gather_index_is_refused_naming_the_node)
{
	const std::string e = import_error("bad_gather.onnx");
	cr_expect(has(e, "bad_gather.onnx: ") && has(e, "node 'gather_oob' (Gather): index 5 is "
							  "outside -5..4"),
		  "%s", e.c_str());
}

Test(onnx_ops, bad_slice_step_is_refused_naming_the_node)
{
	const std::string e = import_error("bad_slice.onnx");
	cr_expect(has(e, "bad_slice.onnx: ") && has(e, "slice_step0"), "%s", e.c_str());
}

Test(onnx_ops, bad_pow_exponent_is_refused_naming_the_node)
{
	const std::string e = import_error("bad_pow.onnx");
	cr_expect(has(e, "bad_pow.onnx: ") && has(e, "pow_bad"), "%s", e.c_str());
}

// ---- the rules: the validator at load, the worker on each job ----

namespace {

using mcp::detail::OpTensor;

OpTensor tensor(void *data, std::uint8_t dtype, std::vector<std::uint32_t> dims)
{
	OpTensor t;
	t.data = static_cast<std::byte *>(data);
	t.dtype = dtype;
	t.rank = static_cast<std::uint8_t>(dims.size());
	std::copy(dims.begin(), dims.end(), t.dims);
	t.bytes = mcp::detail::tensor_bytes(t);
	return t;
}

template <typename T>
std::vector<std::byte> param_of(const T &p)
{
	std::vector<std::byte> b(sizeof(p));
	std::memcpy(b.data(), &p, sizeof(p));
	return b;
}

// x f32 [2 x 3] -> one worker node of @op -> y of @dtype @dims.
mcp::GraphDef one_node(mcp::Op op, std::vector<std::uint32_t> dims, std::vector<std::byte> param,
		       mcp::DType dtype = mcp::DType::f32)
{
	mcp::GraphDef g;
	g.name = "one";
	g.buffers = {{"x", 64, mcp::graph_buffer_input, std::nullopt, {}},
		     {"y", 256, mcp::graph_buffer_output, std::nullopt, {}}};
	mcp::GraphTensor x, y;
	x.name = "x";
	x.dims = {2, 3};
	y.name = "y";
	y.buffer = 1;
	y.dtype = dtype;
	y.dims = std::move(dims);
	g.tensors = {x, y};
	mcp::GraphNode n;
	n.name = "the_node";
	n.op = op;
	n.engine = mcp::EngineClass::worker;
	n.inputs = {0};
	n.outputs = {1};
	n.param = std::move(param);
	g.nodes = {n};
	return g;
}

std::string refusal(const mcp::GraphDef &g, mcp::GraphErrorReason want)
{
	const auto e = g.validate();
	cr_assert(e.has_value(), "accepted");
	cr_expect_eq(e->reason, want, "%s", e->message.c_str());
	cr_expect(has(e->message, "the_node"), "%s", e->message.c_str());
	return e->message;
}

} // namespace

Test(onnx_ops, validator_checks_the_new_operators_naming_the_node)
{
	using R = mcp::GraphErrorReason;
	struct mcp_graph_unary u = {MCP_UNARY_SIGMOID, 0, 0, 0};
	cr_expect(!one_node(mcp::Op::unary, {2, 3}, param_of(u)).validate());
	u.fn = MCP_UNARY_COUNT;
	cr_expect(has(refusal(one_node(mcp::Op::unary, {2, 3}, param_of(u)), R::param),
		      "unknown unary function 9"));
	u.fn = MCP_UNARY_SIGMOID;
	cr_expect(has(refusal(one_node(mcp::Op::unary, {3, 2}, param_of(u)), R::shape),
		      "should be [2 x 3]"));
	cr_expect(has(refusal(one_node(mcp::Op::unary, {2, 3}, {}), R::param), "it takes 16"));

	struct mcp_graph_reduce r = {MCP_REDUCE_SUM, 2};
	cr_expect(!one_node(mcp::Op::reduce, {2}, param_of(r)).validate());
	cr_expect(!one_node(mcp::Op::reduce, {2, 1}, param_of(r)).validate());
	cr_expect(has(refusal(one_node(mcp::Op::reduce, {3}, param_of(r)), R::shape),
		      "(keepdims) or [2]"));
	r.axes = 4;
	cr_expect(has(refusal(one_node(mcp::Op::reduce, {2, 3}, param_of(r)), R::param),
		      "past rank 2"));

	struct mcp_graph_slice s = {};
	s.start[1] = 2;
	s.step[0] = 1;
	s.step[1] = -1;
	cr_expect(!one_node(mcp::Op::slice, {2, 3}, param_of(s)).validate());
	s.step[1] = 0;
	cr_expect(has(refusal(one_node(mcp::Op::slice, {2, 3}, param_of(s)), R::param),
		      "step of dim 1 is 0"));
	s.step[1] = -2;
	cr_expect(has(refusal(one_node(mcp::Op::slice, {2, 3}, param_of(s)), R::param),
		      "3 elements from 2 by -2 leave 0..2"));

	struct mcp_graph_cast c = {MCP_CAST_BOOL, 0};
	cr_expect(!one_node(mcp::Op::cast, {2, 3}, param_of(c), mcp::DType::u8).validate());
	cr_expect(has(refusal(one_node(mcp::Op::cast, {2, 3}, param_of(c), mcp::DType::i32), R::shape),
		      "cast to bool is not u8"));

	struct mcp_graph_axis a = {2, 0};
	cr_expect(has(refusal(one_node(mcp::Op::softmax_axis, {2, 3}, param_of(a)), R::param),
		      "axis 2 is past rank 2"));
	auto g = one_node(mcp::Op::where, {2, 3}, {});
	cr_expect(has(refusal(g, R::arity), "it takes 3 input(s)"));
}

Test(onnx_ops, worker_refuses_a_runtime_index_out_of_range_and_bad_params)
{
	std::vector<float> x = {1, 2, 3, 4, 5, 6}, y(4);
	std::vector<std::int32_t> idx = {-1, 0};
	OpTensor in[2] = {tensor(x.data(), MCP_DTYPE_F32, {2, 3}), tensor(idx.data(), MCP_DTYPE_I32, {2})};
	OpTensor out = tensor(y.data(), MCP_DTYPE_F32, {2, 2});
	struct mcp_graph_axis a = {1, 0};
	cr_assert_eq(mcp::detail::run_op(MCP_OP_GATHER, in, std::span(&out, 1), param_of(a), false), 0);
	cr_expect(y == (std::vector<float>{3, 1, 6, 4}));
	idx[1] = 3;
	cr_expect_eq(mcp::detail::run_op(MCP_OP_GATHER, in, std::span(&out, 1), param_of(a), false),
		     -EINVAL);
	idx[1] = -4;
	cr_expect_eq(mcp::detail::run_op(MCP_OP_GATHER, in, std::span(&out, 1), param_of(a), false),
		     -EINVAL);

	// Slice in place of its own input goes through scratch memory.
	struct mcp_graph_slice s = {};
	s.start[0] = 1;
	s.start[1] = 2;
	s.step[0] = -1;
	s.step[1] = -1;
	OpTensor sx = tensor(x.data(), MCP_DTYPE_F32, {2, 3}), sy = tensor(x.data(), MCP_DTYPE_F32, {2, 3});
	cr_assert_eq(mcp::detail::run_op(MCP_OP_SLICE, std::span(&sx, 1), std::span(&sy, 1), param_of(s),
					 false), 0);
	cr_expect(x == (std::vector<float>{6, 5, 4, 3, 2, 1}));
	s.step[1] = 0;
	cr_expect_eq(mcp::detail::run_op(MCP_OP_SLICE, std::span(&sx, 1), std::span(&sy, 1), param_of(s),
					 false), -EINVAL);

	// Cast: truncation toward 0, saturation, NaN 0; to bool x != 0.
	std::vector<float> f = {-1.9f, 2.9f, 300.0f, -300.0f, NAN, 0.0f};
	std::vector<std::int8_t> q(6);
	OpTensor cf = tensor(f.data(), MCP_DTYPE_F32, {6}), cq = tensor(q.data(), MCP_DTYPE_I8, {6});
	struct mcp_graph_cast c = {0, 0};
	cr_assert_eq(mcp::detail::run_op(MCP_OP_CAST, std::span(&cf, 1), std::span(&cq, 1), param_of(c),
					 false), 0);
	cr_expect(q == (std::vector<std::int8_t>{-1, 2, 127, -128, 0, 0}));
	std::vector<std::uint8_t> b(6);
	OpTensor cb = tensor(b.data(), MCP_DTYPE_U8, {6});
	c.flags = MCP_CAST_BOOL;
	cr_assert_eq(mcp::detail::run_op(MCP_OP_CAST, std::span(&cf, 1), std::span(&cb, 1), param_of(c),
					 false), 0);
	cr_expect(b == (std::vector<std::uint8_t>{1, 1, 1, 1, 1, 0}));

	// Every unary function of the table, against libm.
	std::vector<float> ux = {-2.5f, -0.5f, 0.0f, 0.75f, 3.5f}, uy(5);
	OpTensor ui = tensor(ux.data(), MCP_DTYPE_F32, {5}), uo = tensor(uy.data(), MCP_DTYPE_F32, {5});
	for (std::uint32_t fn = 0; fn < MCP_UNARY_COUNT; fn++) {
		const float alpha = fn == MCP_UNARY_CLIP ? -1.0f : 2.0f, beta = 0.5f;
		struct mcp_graph_unary u = {fn, 0, 0, 0};
		std::memcpy(&u.alpha, &alpha, 4);
		std::memcpy(&u.beta, &beta, 4);
		cr_assert_eq(mcp::detail::run_op(MCP_OP_UNARY, std::span(&ui, 1), std::span(&uo, 1),
						 param_of(u), false), 0, "fn %u", fn);
		for (std::size_t i = 0; i < ux.size(); i++) {
			const double v = ux[i];
			double want = 0;
			switch (fn) {
			case MCP_UNARY_SIGMOID: want = 1 / (1 + std::exp(-v)); break;
			case MCP_UNARY_HARDSIGMOID: want = std::clamp(2 * v + 0.5, 0.0, 1.0); break;
			case MCP_UNARY_HARDSWISH: want = v * std::clamp(v / 6 + 0.5, 0.0, 1.0); break;
			case MCP_UNARY_TANH: want = std::tanh(v); break;
			case MCP_UNARY_EXP: want = std::exp(v); break;
			case MCP_UNARY_SQRT: want = std::sqrt(v); break;
			case MCP_UNARY_ERF: want = std::erf(v); break;
			case MCP_UNARY_CLIP: want = std::clamp(v, -1.0, 0.5); break;
			default: want = std::pow(v, 2.0); break;
			}
			if (std::isnan(want))
				cr_expect(std::isnan(uy[i]), "fn %u x %g", fn, v);
			else
				cr_expect_float_eq(uy[i], want, 1e-6 * std::max(1.0, std::fabs(want)),
						   "fn %u (%s) x %g: %g vs %g", fn,
						   mcp::detail::ew::unary_fn(fn)->name, v, double(uy[i]), want);
		}
	}
}
