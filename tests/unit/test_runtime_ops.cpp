// SPDX-License-Identifier: GPL-2.0-only
// The graph runtime without a kernel: the compute operators against naive
// references (MATMUL with its flags, alpha and bias through OpenBLAS,
// MATMUL_I8, ADD, RELU, GELU, SOFTMAX, LAYERNORM), in-place operation,
// shape and parameter refusals, the kernel's data-movement operators in
// C++ (quantize ties to even, NaN, tile16), a worker's job resolution
// (unknown handles, tensors past their buffer), run_inline, and the
// refusal of a MATMUL graph when OpenBLAS cannot be loaded.
#include <cerrno>
#include <cmath>
#include <cstring>
#include <vector>

#include <criterion/criterion.h>

#include <mcp/runtime.hpp>

#include "runtime_internal.hpp"

using mcp::detail::OpTensor;
using mcp::detail::run_op;

namespace {

OpTensor tensor(void *p, std::uint8_t dtype, std::vector<std::uint32_t> dims,
		std::uint8_t layout = MCP_LAYOUT_DENSE)
{
	OpTensor t;

	t.data = static_cast<std::byte *>(p);
	t.dtype = dtype;
	t.rank = static_cast<std::uint8_t>(dims.size());
	t.layout = layout;
	for (std::size_t i = 0; i < dims.size(); i++)
		t.dims[i] = dims[i];
	t.bytes = mcp::detail::tensor_bytes(t);
	return t;
}

template <typename T>
std::span<const std::byte> param(const T &p)
{
	return std::as_bytes(std::span(&p, 1));
}

std::uint32_t bits(float f)
{
	std::uint32_t b;

	std::memcpy(&b, &f, sizeof(b));
	return b;
}

std::vector<float> ramp(std::size_t n, float step, float start)
{
	std::vector<float> v(n);

	for (std::size_t i = 0; i < n; i++)
		v[i] = start + step * static_cast<float>(i % 23) - 0.01f * static_cast<float>(i % 7);
	return v;
}

} // namespace

Test(runtime_ops, matmul_every_flag_with_alpha_and_bias)
{
	const std::uint32_t M = 5, K = 7, N = 3;
	std::vector<float> a = ramp(M * K, 0.1f, -1.0f), b = ramp(K * N, 0.07f, -0.5f);
	std::vector<float> bias = {0.5f, -1.0f, 2.0f};

	cr_assert(mcp::detail::blas_available(), "libopenblas.so.0 (libopenblas-dev) is missing");
	for (std::uint32_t flags = 0; flags <= MCP_MATMUL_FLAGS; flags++) {
		bool ta = flags & MCP_MATMUL_TRANS_A, tb = flags & MCP_MATMUL_TRANS_B;
		// Store A (B) transposed when the flag says op() transposes it.
		std::vector<float> as(M * K), bs(K * N), c(M * N, -99.0f);
		for (std::uint32_t i = 0; i < M; i++)
			for (std::uint32_t p = 0; p < K; p++)
				as[ta ? p * M + i : i * K + p] = a[i * K + p];
		for (std::uint32_t p = 0; p < K; p++)
			for (std::uint32_t j = 0; j < N; j++)
				bs[tb ? j * K + p : p * N + j] = b[p * N + j];
		OpTensor in[3] = {tensor(as.data(), MCP_DTYPE_F32, ta ? std::vector<std::uint32_t>{K, M}
								       : std::vector<std::uint32_t>{M, K}),
				  tensor(bs.data(), MCP_DTYPE_F32, tb ? std::vector<std::uint32_t>{N, K}
								       : std::vector<std::uint32_t>{K, N}),
				  tensor(bias.data(), MCP_DTYPE_F32, {N})};
		OpTensor out = tensor(c.data(), MCP_DTYPE_F32, {M, N});
		struct mcp_graph_matmul p = {flags, bits(-0.5f)};

		cr_assert_eq(run_op(MCP_OP_MATMUL, in, std::span(&out, 1), param(p), false), 0);
		for (std::uint32_t i = 0; i < M; i++)
			for (std::uint32_t j = 0; j < N; j++) {
				double s = 0;
				for (std::uint32_t q = 0; q < K; q++)
					s += static_cast<double>(a[i * K + q]) * b[q * N + j];
				cr_expect_float_eq(c[i * N + j], -0.5 * s + bias[j], 1e-5,
						   "flags %u [%u][%u]", flags, i, j);
			}
	}
}

Test(runtime_ops, matmul_refuses_bad_shapes_and_params)
{
	std::vector<float> a(12), b(12), c(16);
	OpTensor in[2] = {tensor(a.data(), MCP_DTYPE_F32, {3, 4}), tensor(b.data(), MCP_DTYPE_F32, {4, 3})};
	OpTensor wrong = tensor(c.data(), MCP_DTYPE_F32, {4, 4});
	OpTensor right = tensor(c.data(), MCP_DTYPE_F32, {3, 3});
	struct mcp_graph_matmul bad_flags = {4, bits(1.0f)}, nan_alpha = {0, bits(NAN)};

	cr_expect_eq(run_op(MCP_OP_MATMUL, in, std::span(&wrong, 1), {}, false), -EINVAL);
	cr_expect_eq(run_op(MCP_OP_MATMUL, in, std::span(&right, 1), param(bad_flags), false), -EINVAL);
	cr_expect_eq(run_op(MCP_OP_MATMUL, in, std::span(&right, 1), param(nan_alpha), false), -EINVAL);
	cr_expect_eq(run_op(MCP_OP_MATMUL, std::span(in, 1), std::span(&right, 1), {}, false), -EINVAL);
	cr_expect_eq(run_op(MCP_OP_MATMUL, in, std::span(&right, 1), {}, false), 0);
	cr_expect_eq(run_op(999, in, std::span(&right, 1), {}, false), -EOPNOTSUPP);
}

Test(runtime_ops, matmul_in_place_goes_through_scratch)
{
	// [2][2] x [2][2] written over A: the result must not see half-written A.
	std::vector<float> a = {1, 2, 3, 4}, b = {5, 6, 7, 8};
	OpTensor in[2] = {tensor(a.data(), MCP_DTYPE_F32, {2, 2}), tensor(b.data(), MCP_DTYPE_F32, {2, 2})};
	OpTensor out = in[0];

	cr_assert_eq(run_op(MCP_OP_MATMUL, in, std::span(&out, 1), {}, false), 0);
	cr_expect_float_eq(a[0], 19.0f, 1e-6);
	cr_expect_float_eq(a[1], 22.0f, 1e-6);
	cr_expect_float_eq(a[2], 43.0f, 1e-6);
	cr_expect_float_eq(a[3], 50.0f, 1e-6);
}

Test(runtime_ops, matmul_i8_dequantizes_with_zero_points)
{
	std::vector<std::int8_t> a = {1, 2, 3, 4, -5, 6}, b = {5, 6, 7, 8, -9, 10};
	std::vector<float> c(4);
	OpTensor in[2] = {tensor(a.data(), MCP_DTYPE_I8, {2, 3}), tensor(b.data(), MCP_DTYPE_I8, {3, 2})};
	OpTensor out = tensor(c.data(), MCP_DTYPE_F32, {2, 2});
	struct mcp_graph_matmul_i8 p = {bits(0.5f), 1, bits(0.25f), -2};

	cr_assert_eq(run_op(MCP_OP_MATMUL_I8, in, std::span(&out, 1), param(p), false), 0);
	for (int i = 0; i < 2; i++)
		for (int j = 0; j < 2; j++) {
			int acc = 0;
			for (int k = 0; k < 3; k++)
				acc += (a[i * 3 + k] - 1) * (b[k * 2 + j] + 2);
			cr_expect_float_eq(c[i * 2 + j], acc * 0.125f, 1e-6);
		}
	p.zero_a = 128;
	cr_expect_eq(run_op(MCP_OP_MATMUL_I8, in, std::span(&out, 1), param(p), false), -EINVAL);
}

Test(runtime_ops, elementwise_softmax_layernorm)
{
	std::vector<float> x = {-2.0f, -0.5f, 0.0f, 0.5f, 1.0f, 3.0f}, y(6), z(6);
	OpTensor tx = tensor(x.data(), MCP_DTYPE_F32, {2, 3}), ty = tensor(y.data(), MCP_DTYPE_F32, {2, 3});
	OpTensor add_in[2] = {tx, tx};

	cr_assert_eq(run_op(MCP_OP_RELU, std::span(&tx, 1), std::span(&ty, 1), {}, false), 0);
	cr_expect_float_eq(y[0], 0.0f, 0);
	cr_expect_float_eq(y[5], 3.0f, 0);
	cr_assert_eq(run_op(MCP_OP_GELU, std::span(&tx, 1), std::span(&ty, 1), {}, false), 0);
	cr_expect_float_eq(y[4], 0.841192f, 1e-5);	// gelu_tanh(1)
	cr_expect_float_eq(y[0], -0.045402f, 1e-5);	// gelu_tanh(-2)
	cr_assert_eq(run_op(MCP_OP_ADD, add_in, std::span(&ty, 1), {}, false), 0);
	cr_expect_float_eq(y[5], 6.0f, 0);

	z = x;
	OpTensor tz = tensor(z.data(), MCP_DTYPE_F32, {2, 3});
	cr_assert_eq(run_op(MCP_OP_SOFTMAX, std::span(&tz, 1), std::span(&tz, 1), {}, false), 0);
	for (int r = 0; r < 2; r++)
		cr_expect_float_eq(z[r * 3] + z[r * 3 + 1] + z[r * 3 + 2], 1.0f, 1e-6);
	cr_expect_float_eq(z[2] / z[1], std::exp(0.5f), 1e-5);

	std::vector<float> gamma = {1.0f, 2.0f, 1.0f}, beta = {0.0f, 0.0f, 1.0f};
	OpTensor ln_in[3] = {tx, tensor(gamma.data(), MCP_DTYPE_F32, {3}),
			     tensor(beta.data(), MCP_DTYPE_F32, {3})};
	struct mcp_graph_norm n = {bits(1e-5f), 0};
	cr_assert_eq(run_op(MCP_OP_LAYERNORM, ln_in, std::span(&ty, 1), param(n), false), 0);
	for (int r = 0; r < 2; r++) {
		double mean = (x[r * 3] + x[r * 3 + 1] + x[r * 3 + 2]) / 3.0, var = 0;
		for (int i = 0; i < 3; i++)
			var += (x[r * 3 + i] - mean) * (x[r * 3 + i] - mean) / 3.0;
		for (int i = 0; i < 3; i++)
			cr_expect_float_eq(y[r * 3 + i],
					   (x[r * 3 + i] - mean) / std::sqrt(var + 1e-5) * gamma[i] + beta[i],
					   1e-5);
	}
	n.eps = bits(0.0f);
	cr_expect_eq(run_op(MCP_OP_LAYERNORM, ln_in, std::span(&ty, 1), param(n), false), -EINVAL);
	OpTensor short_out = tensor(y.data(), MCP_DTYPE_F32, {3, 2});
	cr_expect_eq(run_op(MCP_OP_RELU, std::span(&tx, 1), std::span(&short_out, 1), {}, false), -EINVAL);
}

Test(runtime_ops, kernel_ops_only_inline)
{
	std::vector<float> x = {0.5f, 1.5f, 2.5f, -2.5f, NAN, 1000.0f, -1000.0f, 0.49f};
	std::vector<std::int8_t> q(8);
	std::vector<float> back(8);
	OpTensor tx = tensor(x.data(), MCP_DTYPE_F32, {8}), tq = tensor(q.data(), MCP_DTYPE_I8, {8});
	OpTensor tb = tensor(back.data(), MCP_DTYPE_F32, {8});
	struct mcp_graph_quant p = {bits(1.0f), 3};

	cr_expect_eq(run_op(MCP_OP_QUANT_I8, std::span(&tx, 1), std::span(&tq, 1), param(p), false),
		     -EOPNOTSUPP);
	cr_assert_eq(run_op(MCP_OP_QUANT_I8, std::span(&tx, 1), std::span(&tq, 1), param(p), true), 0);
	// ties to even, then + zero point; NaN is the zero point; clamped
	std::int8_t want[8] = {3, 5, 5, 1, 3, 127, -128, 3};
	for (int i = 0; i < 8; i++)
		cr_expect_eq(q[i], want[i], "element %d: %d", i, q[i]);
	cr_assert_eq(run_op(MCP_OP_DEQUANT_I8, std::span(&tq, 1), std::span(&tb, 1), param(p), true), 0);
	cr_expect_float_eq(back[1], 2.0f, 0);
	cr_expect_float_eq(back[6], -131.0f, 0);

	// TILE16 of NHWC [1][32][2][8] f32 (32 bytes a row)
	std::vector<float> nhwc(32 * 2 * 8), tiled(32 * 2 * 8);
	for (std::size_t i = 0; i < nhwc.size(); i++)
		nhwc[i] = static_cast<float>(i);
	OpTensor tin = tensor(nhwc.data(), MCP_DTYPE_F32, {1, 32, 2, 8}, MCP_LAYOUT_NHWC);
	OpTensor tout = tensor(tiled.data(), MCP_DTYPE_F32, {1, 2, 2, 8, 16}, MCP_LAYOUT_TILED16);
	cr_assert_eq(run_op(MCP_OP_TILE16, std::span(&tin, 1), std::span(&tout, 1), {}, true), 0);
	for (std::uint32_t h = 0; h < 32; h++)
		for (std::uint32_t s = 0; s < 2; s++)
			for (std::uint32_t d = 0; d < 8; d++)
				cr_expect_eq(tiled[(((h / 16) * 2 + s) * 8 + d) * 16 + h % 16],
					     nhwc[(h * 2 + s) * 8 + d]);
	OpTensor bad_out = tensor(tiled.data(), MCP_DTYPE_F32, {1, 2, 2, 8, 16}, MCP_LAYOUT_DENSE);
	cr_expect_eq(run_op(MCP_OP_TILE16, std::span(&tin, 1), std::span(&bad_out, 1), {}, true), -EINVAL);
}

Test(runtime_ops, worker_jobs_resolve_through_the_registry)
{
	mcp::detail::HandleRegistry reg;
	std::vector<float> mem(64, 2.0f);
	struct mcp_worker_job job = {};

	job.op = MCP_OP_RELU;
	job.n_inputs = 1;
	job.n_outputs = 1;
	job.inputs[0] = {7, MCP_DTYPE_F32, 1, MCP_LAYOUT_DENSE, 0, 0, {16, 0, 0, 0, 0, 0}};
	job.outputs[0] = {7, MCP_DTYPE_F32, 1, MCP_LAYOUT_DENSE, 0, 64, {16, 0, 0, 0, 0, 0}};
	cr_expect_eq(mcp::detail::run_job(reg, job), -ENOENT);
	reg.acquire(7, std::as_writable_bytes(std::span(mem)));
	cr_expect_eq(mcp::detail::run_job(reg, job), 0);
	job.outputs[0].offset = 256 - 32;	// past the 256-byte mapping
	cr_expect_eq(mcp::detail::run_job(reg, job), -EINVAL);
	job.outputs[0].offset = ~0ULL;
	cr_expect_eq(mcp::detail::run_job(reg, job), -EINVAL);
	job.outputs[0].offset = 64;
	job.op = MCP_OP_SOFTMAX;	// a zero dimension must not divide by zero
	job.inputs[0].dims[0] = 0;
	job.outputs[0].dims[0] = 0;
	cr_expect_eq(mcp::detail::run_job(reg, job), -EINVAL);
	job.inputs[0].dims[0] = 16;
	job.outputs[0].dims[0] = 16;
	job.inputs[0].dtype = 99;
	cr_expect_eq(mcp::detail::run_job(reg, job), -EINVAL);
	job.inputs[0].dtype = MCP_DTYPE_F32;
	cr_expect_eq(mcp::detail::run_job(reg, job), 0);
	job.op = MCP_OP_RELU;
	job.outputs[0].offset = ~0ULL;
	job.n_inputs = 9;
	cr_expect_eq(mcp::detail::run_job(reg, job), -EINVAL);
	job.op = MCP_OP_WNOP;
	cr_expect_eq(mcp::detail::run_job(reg, job), 0);
	job.op = MCP_OP_COPY;	// a kernel operator never reaches a worker
	job.n_inputs = 1;
	job.outputs[0].offset = 64;
	cr_expect_eq(mcp::detail::run_job(reg, job), -EOPNOTSUPP);
	reg.release(7);
	job.op = MCP_OP_RELU;
	cr_expect_eq(mcp::detail::run_job(reg, job), -ENOENT);
}

Test(runtime_ops, run_inline_runs_a_diamond_and_refuses_invalid_graphs)
{
	mcp::GraphBuilder g("diamond");
	std::uint32_t in = g.buffer("in", mcp::graph_buffer_input), mid = g.buffer("mid");
	std::uint32_t outb = g.buffer("out", mcp::graph_buffer_output);
	std::uint32_t a = g.tensor("a", in, mcp::DType::f32, {32});
	std::uint32_t b = g.tensor("b", mid, mcp::DType::f32, {32});
	std::uint32_t c = g.tensor("c", mid, mcp::DType::f32, {32});
	std::uint32_t d = g.tensor("d", outb, mcp::DType::f32, {32});
	g.node(mcp::Op::relu, mcp::EngineClass::worker, {a}, {b});
	g.node(mcp::Op::add, mcp::EngineClass::worker, {a, b}, {c});
	g.node(mcp::Op::add, mcp::EngineClass::worker, {b, c}, {d});
	mcp::GraphDef def = g.build();
	std::vector<std::vector<std::byte>> mem;
	std::vector<std::span<std::byte>> spans;
	for (const mcp::GraphBuffer &buf : def.buffers) {
		mem.emplace_back(buf.length);
		spans.emplace_back(mem.back());
	}
	auto *x = reinterpret_cast<float *>(mem[0].data());
	for (int i = 0; i < 32; i++)
		x[i] = static_cast<float>(i - 16);
	mcp::Runtime::run_inline(def, spans);
	auto *y = reinterpret_cast<const float *>(mem[2].data());
	for (int i = 0; i < 32; i++) {
		float r = x[i] > 0 ? x[i] : 0;
		cr_expect_float_eq(y[i], r + (x[i] + r), 0, "element %d", i);
	}
	spans.pop_back();
	cr_expect_throw(mcp::Runtime::run_inline(def, spans), mcp::Error);
	spans.emplace_back(mem[2]);
	def.nodes[0].outputs = {a};	// relu writes its input without in-place
	cr_expect_throw(mcp::Runtime::run_inline(def, spans), mcp::GraphInvalid);
}

Test(runtime_ops, missing_openblas_names_the_library_and_the_node)
{
	mcp::GraphBuilder g("mm");
	std::uint32_t in = g.buffer("in", mcp::graph_buffer_input);
	std::uint32_t outb = g.buffer("out", mcp::graph_buffer_output);
	std::uint32_t a = g.tensor("a", in, mcp::DType::f32, {4, 4});
	std::uint32_t r = g.tensor("r", outb, mcp::DType::f32, {4, 4});
	std::uint32_t c = g.tensor("c", outb, mcp::DType::f32, {4, 4});
	g.node(mcp::Op::relu, mcp::EngineClass::worker, {a}, {r});
	g.node(mcp::Op::matmul, mcp::EngineClass::worker, {r, r}, {c}, {}, "q_proj0");
	mcp::GraphDef def = g.build();
	const std::string why = "libopenblas.so.0: cannot open shared object file";

	mcp::detail::require_blas(def, "");
	try {
		mcp::detail::require_blas(def, why);
		cr_assert_fail("a MATMUL graph passed without OpenBLAS");
	} catch (const mcp::Error &e) {
		std::string msg = e.what();
		cr_expect_eq(e.errnum(), ELIBACC);
		cr_expect(msg.find("node 1 (matmul 'q_proj0')") != std::string::npos, "%s", e.what());
		cr_expect(msg.find(why) != std::string::npos, "%s", e.what());
		cr_expect(msg.find("libopenblas0") != std::string::npos, "%s", e.what());
	}
	def.nodes.pop_back();
	mcp::detail::require_blas(def, why); // no BLAS operator left
}
