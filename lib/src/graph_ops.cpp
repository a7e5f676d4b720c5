// SPDX-License-Identifier: LGPL-2.1-or-later
// The operators of inference graphs on plain memory (graph_ops.hpp):
// MATMUL through OpenBLAS's cblas_sgemm (dlopen()ed), the other compute operators in
// plain loops, and the kernel's data-movement operators in C++ for
// run_inline().
#include <algorithm>
#include <bit>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include <cblas.h>
#include <dlfcn.h>

#include "graph_ops.hpp"
#include "graph_ops_elementwise.hpp"

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wshadow"
#include <linux/mcp.h>
#pragma GCC diagnostic pop

namespace mcp::detail {

std::uint32_t dtype_size(std::uint8_t dtype) noexcept
{
	switch (dtype) {
	case MCP_DTYPE_F32:
	case MCP_DTYPE_I32:
		return 4;
	case MCP_DTYPE_I8:
	case MCP_DTYPE_U8:
		return 1;
	default:
		return 0;
	}
}

std::uint64_t tensor_elements(const OpTensor &t) noexcept
{
	std::uint64_t n = 1;

	for (unsigned k = 0; k < t.rank && k < MCP_GRAPH_MAX_RANK; k++) {
		if (t.dims[k] != 0 && n > std::numeric_limits<std::uint64_t>::max() / t.dims[k])
			return 0;
		n *= t.dims[k];
	}
	return n;
}

std::uint64_t tensor_bytes(const OpTensor &t) noexcept
{
	std::uint64_t n = tensor_elements(t);
	std::uint32_t elem = dtype_size(t.dtype);

	if (elem == 0 || n > std::numeric_limits<std::uint64_t>::max() / elem)
		return 0;
	return n * elem;
}

namespace {

// OpenBLAS, loaded on the first MATMUL: programs linking libmcp that never
// run a graph (mcpctl run, whose start-up is benchmarked) do not pay for
// loading it and its thread pool.
struct Blas {
	decltype(&cblas_sgemm) sgemm = nullptr;
	decltype(&openblas_set_num_threads) set_num_threads = nullptr;
	std::string error; // dlerror() when it could not be loaded
};

Blas load_blas() noexcept
{
	Blas b;
	void *lib = ::dlopen(blas_library, RTLD_NOW | RTLD_LOCAL);

	if (!lib) {
		const char *why = ::dlerror();
		b.error = why ? why : blas_library;
		return b;
	}
	b.sgemm = reinterpret_cast<decltype(b.sgemm)>(::dlsym(lib, "cblas_sgemm"));
	if (!b.sgemm)
		b.error = std::string(blas_library) + " has no cblas_sgemm";
	b.set_num_threads = reinterpret_cast<decltype(b.set_num_threads)>(
		::dlsym(lib, "openblas_set_num_threads"));
	// The workers are the parallelism: one thread per GEMM.
	if (b.set_num_threads)
		b.set_num_threads(1);
	return b;
}

const Blas &blas() noexcept
{
	static const Blas b = load_blas();

	return b;
}

} // namespace

bool blas_available() noexcept
{
	return blas().sgemm != nullptr;
}

const std::string &blas_load_error() noexcept
{
	return blas().error;
}

bool op_needs_blas(std::uint16_t op) noexcept
{
	return op == MCP_OP_MATMUL || op == MCP_OP_BMATMUL || op == MCP_OP_CONV ||
	       op == MCP_OP_CONV_TRANSPOSE;
}

bool blas_sgemm(bool trans_a, bool trans_b, std::uint32_t m, std::uint32_t n, std::uint32_t k,
		float alpha, const float *a, std::uint32_t lda, const float *b, std::uint32_t ldb,
		float beta, float *c, std::uint32_t ldc) noexcept
{
	if (!blas_available())
		return false;
	blas().sgemm(CblasRowMajor, trans_a ? CblasTrans : CblasNoTrans,
		     trans_b ? CblasTrans : CblasNoTrans, static_cast<blasint>(m),
		     static_cast<blasint>(n), static_cast<blasint>(k), alpha, a,
		     static_cast<blasint>(lda), b, static_cast<blasint>(ldb), beta, c,
		     static_cast<blasint>(ldc));
	return true;
}

namespace {

float f32_of(const std::byte *bits) noexcept
{
	float f;

	std::memcpy(&f, bits, sizeof(f));
	return f;
}

std::int32_t s32_of(const std::byte *bits) noexcept
{
	std::int32_t v;

	std::memcpy(&v, bits, sizeof(v));
	return v;
}

bool positive_finite(float f) noexcept
{
	return std::isfinite(f) && f > 0.0f;
}

bool zero_point_ok(std::int32_t z) noexcept
{
	return z >= -128 && z <= 127;
}

bool same_dims(const OpTensor &a, const OpTensor &b) noexcept
{
	return a.rank == b.rank && std::equal(a.dims, a.dims + a.rank, b.dims);
}

bool is_dense_f32(const OpTensor &t) noexcept
{
	return t.dtype == MCP_DTYPE_F32 && t.layout == MCP_LAYOUT_DENSE;
}

float *f32(const OpTensor &t) noexcept
{
	return reinterpret_cast<float *>(t.data);
}

std::int8_t *s8(const OpTensor &t) noexcept
{
	return reinterpret_cast<std::int8_t *>(t.data);
}

bool overlaps(const OpTensor &a, const OpTensor &b) noexcept
{
	return a.bytes && b.bytes && a.data < b.data + b.bytes && b.data < a.data + a.bytes;
}

// Runs @compute into @out's memory, or into scratch memory copied there
// afterwards when @out overlaps one of @in (MATMUL and TILE16 read inputs
// after writing outputs).
template <typename Compute>
int through_scratch(std::span<const OpTensor> in, const OpTensor &out, Compute compute)
{
	bool overlap = std::any_of(in.begin(), in.end(),
				   [&](const OpTensor &t) { return overlaps(t, out); });

	if (!overlap) {
		compute(out.data);
		return 0;
	}
	std::vector<std::byte> scratch(out.bytes);
	compute(scratch.data());
	std::memcpy(out.data, scratch.data(), out.bytes);
	return 0;
}

// MATMUL's and BMATMUL's struct mcp_graph_matmul, or its defaults when
// @param is empty; false when it is malformed.
bool matmul_param(std::span<const std::byte> param, std::uint32_t &flags, float &alpha)
{
	flags = 0;
	alpha = 1.0f;
	if (param.size() == sizeof(struct mcp_graph_matmul)) {
		flags = static_cast<std::uint32_t>(s32_of(param.data()));
		alpha = f32_of(param.data() + 4);
	} else if (!param.empty()) {
		return false;
	}
	return !(flags & ~MCP_MATMUL_FLAGS) && std::isfinite(alpha);
}

int op_matmul(std::span<const OpTensor> in, const OpTensor &out, std::span<const std::byte> param)
{
	std::uint32_t flags;
	float alpha;

	if (!matmul_param(param, flags, alpha) || in.size() < 2 || in.size() > 3)
		return -EINVAL;
	const OpTensor &a = in[0], &b = in[1];
	if (!is_dense_f32(a) || !is_dense_f32(b) || !is_dense_f32(out) || a.rank != 2 ||
	    b.rank != 2 || out.rank != 2)
		return -EINVAL;
	bool ta = flags & MCP_MATMUL_TRANS_A, tb = flags & MCP_MATMUL_TRANS_B;
	std::uint32_t m = ta ? a.dims[1] : a.dims[0], k = ta ? a.dims[0] : a.dims[1];
	std::uint32_t kb = tb ? b.dims[1] : b.dims[0], n = tb ? b.dims[0] : b.dims[1];
	if (k != kb || out.dims[0] != m || out.dims[1] != n)
		return -EINVAL;
	const float *bias = nullptr;
	if (in.size() == 3) {
		if (!is_dense_f32(in[2]) || in[2].rank != 1 || in[2].dims[0] != n)
			return -EINVAL;
		bias = f32(in[2]);
	}
	if (!blas_available())
		return -EOPNOTSUPP;
	return through_scratch(in, out, [&](std::byte *dst) {
		float *c = reinterpret_cast<float *>(dst);
		float beta = 0.0f;

		if (bias) {
			for (std::uint32_t i = 0; i < m; i++)
				std::memcpy(c + std::size_t(i) * n, bias, std::size_t(n) * sizeof(float));
			beta = 1.0f;
		}
		blas().sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans,
			    tb ? CblasTrans : CblasNoTrans, static_cast<blasint>(m),
			    static_cast<blasint>(n), static_cast<blasint>(k), alpha, f32(a),
			    static_cast<blasint>(a.dims[1]), f32(b), static_cast<blasint>(b.dims[1]),
			    beta, c, static_cast<blasint>(n));
	});
}

int op_matmul_i8(std::span<const OpTensor> in, const OpTensor &out, std::span<const std::byte> param)
{
	if (param.size() != sizeof(struct mcp_graph_matmul_i8) || in.size() != 2)
		return -EINVAL;
	float scale_a = f32_of(param.data()), scale_b = f32_of(param.data() + 8);
	std::int32_t zero_a = s32_of(param.data() + 4), zero_b = s32_of(param.data() + 12);
	if (!positive_finite(scale_a) || !positive_finite(scale_b) || !zero_point_ok(zero_a) ||
	    !zero_point_ok(zero_b))
		return -EINVAL;
	const OpTensor &a = in[0], &b = in[1];
	if (a.dtype != MCP_DTYPE_I8 || b.dtype != MCP_DTYPE_I8 || !is_dense_f32(out) ||
	    a.layout != MCP_LAYOUT_DENSE || b.layout != MCP_LAYOUT_DENSE || a.rank != 2 ||
	    b.rank != 2 || out.rank != 2 || a.dims[1] != b.dims[0] || out.dims[0] != a.dims[0] ||
	    out.dims[1] != b.dims[1])
		return -EINVAL;
	std::uint32_t m = a.dims[0], k = a.dims[1], n = b.dims[1];
	float scale = scale_a * scale_b;
	return through_scratch(in, out, [&](std::byte *dst) {
		float *c = reinterpret_cast<float *>(dst);
		std::vector<std::int32_t> acc(n);

		for (std::uint32_t i = 0; i < m; i++) {
			std::fill(acc.begin(), acc.end(), 0);
			for (std::uint32_t p = 0; p < k; p++) {
				std::int32_t av = s8(a)[std::size_t(i) * k + p] - zero_a;
				const std::int8_t *brow = s8(b) + std::size_t(p) * n;
				for (std::uint32_t j = 0; j < n; j++)
					acc[j] += av * (brow[j] - zero_b);
			}
			for (std::uint32_t j = 0; j < n; j++)
				c[std::size_t(i) * n + j] = static_cast<float>(acc[j]) * scale;
		}
	});
}

// ADD, RELU, GELU: element by element, so in place is fine.
int op_elementwise(std::uint16_t op, std::span<const OpTensor> in, const OpTensor &out)
{
	std::size_t want = op == MCP_OP_ADD ? 2 : 1;

	if (in.size() != want || !is_dense_f32(out))
		return -EINVAL;
	for (const OpTensor &t : in)
		if (!is_dense_f32(t) || !same_dims(t, out))
			return -EINVAL;
	std::uint64_t n = tensor_elements(out);
	const float *x = f32(in[0]);
	float *y = f32(out);
	switch (op) {
	case MCP_OP_ADD: {
		const float *x2 = f32(in[1]);
		for (std::uint64_t i = 0; i < n; i++)
			y[i] = x[i] + x2[i];
		break;
	}
	case MCP_OP_RELU:
		for (std::uint64_t i = 0; i < n; i++)
			y[i] = std::max(x[i], 0.0f);
		break;
	default: {
		// tanh approximation: 0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3)))
		const float c = 0.7978845608028654f;
		for (std::uint64_t i = 0; i < n; i++) {
			float v = x[i];
			y[i] = 0.5f * v * (1.0f + std::tanh(c * (v + 0.044715f * v * v * v)));
		}
		break;
	}
	}
	return 0;
}

// Rows of the last dimension: SOFTMAX and LAYERNORM.  Each row is read
// fully before it is written, so in place is fine.
int op_softmax(std::span<const OpTensor> in, const OpTensor &out)
{
	if (in.size() != 1 || !is_dense_f32(in[0]) || !is_dense_f32(out) ||
	    !same_dims(in[0], out) || out.rank < 1)
		return -EINVAL;
	std::uint64_t d = out.dims[out.rank - 1], rows = tensor_elements(out) / d;
	for (std::uint64_t r = 0; r < rows; r++) {
		const float *x = f32(in[0]) + r * d;
		float *y = f32(out) + r * d;
		float max = *std::max_element(x, x + d), sum = 0.0f;
		for (std::uint64_t i = 0; i < d; i++) {
			y[i] = std::exp(x[i] - max);
			sum += y[i];
		}
		for (std::uint64_t i = 0; i < d; i++)
			y[i] /= sum;
	}
	return 0;
}

int op_layernorm(std::span<const OpTensor> in, const OpTensor &out, std::span<const std::byte> param)
{
	if (param.size() != sizeof(struct mcp_graph_norm) || in.size() != 3)
		return -EINVAL;
	float eps = f32_of(param.data());
	if (!positive_finite(eps) || s32_of(param.data() + 4) != 0)
		return -EINVAL;
	const OpTensor &x = in[0], &gamma = in[1], &beta = in[2];
	if (!is_dense_f32(x) || !is_dense_f32(out) || !same_dims(x, out) || out.rank < 1)
		return -EINVAL;
	std::uint32_t d = out.dims[out.rank - 1];
	if (!is_dense_f32(gamma) || !is_dense_f32(beta) || gamma.rank != 1 || beta.rank != 1 ||
	    gamma.dims[0] != d || beta.dims[0] != d)
		return -EINVAL;
	// gamma and beta may be out's bytes only if the graph is broken; copy
	// them so a row written never changes them under us.
	std::vector<float> g(f32(gamma), f32(gamma) + d), b(f32(beta), f32(beta) + d);
	std::uint64_t rows = tensor_elements(out) / d;
	for (std::uint64_t r = 0; r < rows; r++) {
		const float *xr = f32(x) + r * d;
		float *yr = f32(out) + r * d;
		double mean = 0.0, var = 0.0;
		for (std::uint32_t i = 0; i < d; i++)
			mean += xr[i];
		mean /= d;
		for (std::uint32_t i = 0; i < d; i++)
			var += (xr[i] - mean) * (xr[i] - mean);
		var /= d;
		float inv = static_cast<float>(1.0 / std::sqrt(var + static_cast<double>(eps)));
		float m = static_cast<float>(mean);
		for (std::uint32_t i = 0; i < d; i++)
			yr[i] = (xr[i] - m) * inv * g[i] + b[i];
	}
	return 0;
}

bool quant_param(std::span<const std::byte> param, float &scale, std::int32_t &zero) noexcept
{
	if (param.size() != sizeof(struct mcp_graph_quant))
		return false;
	scale = f32_of(param.data());
	zero = s32_of(param.data() + 4);
	return positive_finite(scale) && zero_point_ok(zero);
}

// q = clamp(round_half_even(x / scale) + zero_point, -128, 127); NaN is 0
// before the zero point is added (as kmod/mcp_graph_ops.c).
int op_quant(std::span<const OpTensor> in, const OpTensor &out, std::span<const std::byte> param)
{
	float scale;
	std::int32_t zero;

	if (!quant_param(param, scale, zero) || in.size() != 1 || in[0].dtype != MCP_DTYPE_F32 ||
	    out.dtype != MCP_DTYPE_I8 || !same_dims(in[0], out))
		return -EINVAL;
	std::uint64_t n = tensor_elements(out);
	const float *x = f32(in[0]);
	std::int8_t *q = s8(out);
	for (std::uint64_t i = 0; i < n; i++) {
		// The quotient of two f32 in double is never mistaken for a
		// tie, so this rounds like the kernel's exact quotient does.
		double v = std::nearbyint(static_cast<double>(x[i]) / static_cast<double>(scale));
		v = std::isnan(v) ? 0.0 : v;
		v = std::clamp(v + zero, -128.0, 127.0);
		q[i] = static_cast<std::int8_t>(v);
	}
	return 0;
}

int op_dequant(std::span<const OpTensor> in, const OpTensor &out, std::span<const std::byte> param)
{
	float scale;
	std::int32_t zero;

	if (!quant_param(param, scale, zero) || in.size() != 1 || in[0].dtype != MCP_DTYPE_I8 ||
	    out.dtype != MCP_DTYPE_F32 || !same_dims(in[0], out))
		return -EINVAL;
	std::uint64_t n = tensor_elements(out);
	for (std::uint64_t i = 0; i < n; i++)
		f32(out)[i] = static_cast<float>(s8(in[0])[i] - zero) * scale;
	return 0;
}

// out[b][h / 16][s][d][h % 16] = in[b][h][s][d]
int op_tile16(std::span<const OpTensor> in, const OpTensor &out)
{
	if (in.size() != 1)
		return -EINVAL;
	const OpTensor &x = in[0];
	std::uint32_t elem = dtype_size(x.dtype);
	if (x.layout != MCP_LAYOUT_NHWC || x.rank != 4 || out.layout != MCP_LAYOUT_TILED16 ||
	    out.rank != 5 || out.dtype != x.dtype || elem == 0 || x.dims[1] % 16 ||
	    (std::uint64_t(x.dims[3]) * elem) % 32 || out.dims[0] != x.dims[0] ||
	    out.dims[1] != x.dims[1] / 16 || out.dims[2] != x.dims[2] ||
	    out.dims[3] != x.dims[3] || out.dims[4] != 16)
		return -EINVAL;
	std::uint64_t nb = x.dims[0], h = x.dims[1], s = x.dims[2], d = x.dims[3];
	return through_scratch(in, out, [&](std::byte *dst) {
		for (std::uint64_t b = 0; b < nb; b++)
			for (std::uint64_t hh = 0; hh < h; hh++)
				for (std::uint64_t ss = 0; ss < s; ss++)
					for (std::uint64_t dd = 0; dd < d; dd++) {
						std::uint64_t from = ((b * h + hh) * s + ss) * d + dd;
						std::uint64_t to = ((((b * (h / 16) + hh / 16) * s + ss) * d + dd) * 16) + hh % 16;
						std::memcpy(dst + to * elem, x.data + from * elem, elem);
					}
	});
}

// Right-aligned numpy strides of @in (elements) against @out's dims: 0
// where @in's dim is 1 (broadcast) or absent.  False when @in does not
// broadcast to @out.
bool broadcast_strides(const OpTensor &in, const OpTensor &out, std::uint64_t *strides) noexcept
{
	return ew::bcast_strides(ew::shape_of(in), ew::shape_of(out), strides);
}

// Calls @f(out_index, in_offsets...) for every element of @out in order,
// with each input's element offset under broadcasting.
template <std::size_t N, typename F>
void for_each_broadcast(const OpTensor &out, const std::uint64_t (&strides)[N][MCP_GRAPH_MAX_RANK],
			F f)
{
	ew::walk(ew::shape_of(out), strides, f);
}

// BADD, SUB, MUL, DIV: numpy broadcasting of both inputs to out0's dims.
// Out may be in0 (in place): element i is read before it is written.
int op_broadcast(std::uint16_t op, std::span<const OpTensor> in, const OpTensor &out)
{
	std::uint64_t strides[2][MCP_GRAPH_MAX_RANK] = {};

	if (in.size() != 2 || !is_dense_f32(out) || !is_dense_f32(in[0]) || !is_dense_f32(in[1]) ||
	    !broadcast_strides(in[0], out, strides[0]) || !broadcast_strides(in[1], out, strides[1]))
		return -EINVAL;
	const float *a = f32(in[0]), *b = f32(in[1]);
	float *y = f32(out);
	switch (op) {
	case MCP_OP_BADD:
		for_each_broadcast(out, strides, [&](std::uint64_t i, const std::uint64_t *o) {
			y[i] = a[o[0]] + b[o[1]];
		});
		break;
	case MCP_OP_SUB:
		for_each_broadcast(out, strides, [&](std::uint64_t i, const std::uint64_t *o) {
			y[i] = a[o[0]] - b[o[1]];
		});
		break;
	case MCP_OP_MUL:
		for_each_broadcast(out, strides, [&](std::uint64_t i, const std::uint64_t *o) {
			y[i] = a[o[0]] * b[o[1]];
		});
		break;
	default:
		for_each_broadcast(out, strides, [&](std::uint64_t i, const std::uint64_t *o) {
			y[i] = a[o[0]] / b[o[1]];
		});
		break;
	}
	return 0;
}

int op_gelu_erf(std::span<const OpTensor> in, const OpTensor &out)
{
	if (in.size() != 1 || !is_dense_f32(in[0]) || !is_dense_f32(out) || !same_dims(in[0], out))
		return -EINVAL;
	const std::uint64_t n = tensor_elements(out);
	const float *x = f32(in[0]);
	float *y = f32(out);
	for (std::uint64_t i = 0; i < n; i++)
		y[i] = 0.5f * x[i] * (1.0f + std::erf(x[i] * 0.70710678118654752f));
	return 0;
}

// out dims[k] = in dims[perm[k]]
int op_transpose(std::span<const OpTensor> in, const OpTensor &out, std::span<const std::byte> param)
{
	if (in.size() != 1 || param.size() != 8)
		return -EINVAL;
	const OpTensor &x = in[0];
	std::uint8_t perm[8];
	std::memcpy(perm, param.data(), 8);
	if (x.dtype != out.dtype || x.rank != out.rank || x.layout != MCP_LAYOUT_DENSE ||
	    out.layout != MCP_LAYOUT_DENSE)
		return -EINVAL;
	bool seen[MCP_GRAPH_MAX_RANK] = {};
	for (unsigned k = 0; k < 8; k++) {
		if (k >= x.rank) {
			if (perm[k] != 0)
				return -EINVAL;
			continue;
		}
		if (perm[k] >= x.rank || seen[perm[k]] || out.dims[k] != x.dims[perm[k]])
			return -EINVAL;
		seen[perm[k]] = true;
	}
	// Input strides in the output's order of dimensions.
	std::uint64_t in_stride[MCP_GRAPH_MAX_RANK], strides[1][MCP_GRAPH_MAX_RANK] = {};
	std::uint64_t st = 1;
	for (int k = x.rank - 1; k >= 0; k--) {
		in_stride[k] = st;
		st *= x.dims[k];
	}
	for (unsigned k = 0; k < x.rank; k++)
		strides[0][k] = in_stride[perm[k]];
	const std::uint32_t elem = dtype_size(x.dtype);
	return through_scratch(in, out, [&](std::byte *dst) {
		for_each_broadcast(out, strides, [&](std::uint64_t i, const std::uint64_t *o) {
			std::memcpy(dst + i * elem, x.data + o[0] * elem, elem);
		});
	});
}

// BMATMUL: MATMUL over the batch dims (all but the last two), broadcast.
int op_bmatmul(std::span<const OpTensor> in, const OpTensor &out, std::span<const std::byte> param)
{
	std::uint32_t flags;
	float alpha;

	if (!matmul_param(param, flags, alpha) || in.size() < 2 || in.size() > 3)
		return -EINVAL;
	const OpTensor &a = in[0], &b = in[1];
	if (!is_dense_f32(a) || !is_dense_f32(b) || !is_dense_f32(out) || a.rank < 2 ||
	    b.rank < 2 || out.rank < 2)
		return -EINVAL;
	const bool ta = flags & MCP_MATMUL_TRANS_A, tb = flags & MCP_MATMUL_TRANS_B;
	const std::uint32_t ar = a.dims[a.rank - 2], ac = a.dims[a.rank - 1];
	const std::uint32_t br = b.dims[b.rank - 2], bc = b.dims[b.rank - 1];
	const std::uint32_t m = ta ? ac : ar, k = ta ? ar : ac, kb = tb ? bc : br, n = tb ? br : bc;
	if (k != kb || out.dims[out.rank - 2] != m || out.dims[out.rank - 1] != n)
		return -EINVAL;
	// The batch shapes, as rank - 2 tensors, broadcast like numpy.
	OpTensor ob = out, abt = a, bbt = b;
	ob.rank = static_cast<std::uint8_t>(out.rank - 2);
	abt.rank = static_cast<std::uint8_t>(a.rank - 2);
	bbt.rank = static_cast<std::uint8_t>(b.rank - 2);
	std::uint64_t strides[2][MCP_GRAPH_MAX_RANK] = {};
	if (!broadcast_strides(abt, ob, strides[0]) || !broadcast_strides(bbt, ob, strides[1]))
		return -EINVAL;
	const float *bias = nullptr;
	if (in.size() == 3) {
		if (!is_dense_f32(in[2]) || in[2].rank != 1 || in[2].dims[0] != n)
			return -EINVAL;
		bias = f32(in[2]);
	}
	if (!blas_available())
		return -EOPNOTSUPP;
	const std::uint64_t a_mat = std::uint64_t(ar) * ac, b_mat = std::uint64_t(br) * bc,
			    o_mat = std::uint64_t(m) * n;
	// One GEMM of every batch's rows when B is shared and A is not
	// transposed (a [..][M][K] x [K][N]: the common projection case).
	const bool one_gemm = !ta && b.rank == 2 &&
			      tensor_elements(a) / a_mat == tensor_elements(out) / o_mat;
	return through_scratch(in, out, [&](std::byte *dst) {
		float *c = reinterpret_cast<float *>(dst);
		const auto gemm = [&](const float *pa, const float *pb, float *pc, std::uint64_t rows) {
			float beta = 0.0f;
			if (bias) {
				for (std::uint64_t i = 0; i < rows; i++)
					std::memcpy(pc + i * n, bias, std::size_t(n) * sizeof(float));
				beta = 1.0f;
			}
			blas().sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans,
				     tb ? CblasTrans : CblasNoTrans, static_cast<blasint>(rows),
				     static_cast<blasint>(n), static_cast<blasint>(k), alpha, pa,
				     static_cast<blasint>(ac), pb, static_cast<blasint>(bc), beta, pc,
				     static_cast<blasint>(n));
		};
		if (one_gemm) {
			gemm(f32(a), f32(b), c, tensor_elements(out) / n);
			return;
		}
		for_each_broadcast(ob, strides, [&](std::uint64_t i, const std::uint64_t *o) {
			gemm(f32(a) + o[0] * a_mat, f32(b) + o[1] * b_mat, c + i * o_mat, m);
		});
	});
}

// What the validator guarantees, checked again for a worker's job: a
// known dtype, rank <= 6, every dimension >= 1 (the row loops divide by
// the last one), bytes that match, memory.
bool well_formed(const OpTensor &t) noexcept
{
	if (!t.data || t.rank > MCP_GRAPH_MAX_RANK || dtype_size(t.dtype) == 0)
		return false;
	for (unsigned k = 0; k < t.rank; k++)
		if (t.dims[k] == 0)
			return false;
	return t.bytes == tensor_bytes(t) && t.bytes != 0;
}

bool kernel_op(std::uint16_t op) noexcept
{
	return op == MCP_OP_NOP || op == MCP_OP_COPY || op == MCP_OP_TILE16 ||
	       op == MCP_OP_QUANT_I8 || op == MCP_OP_DEQUANT_I8;
}

} // namespace

int run_op(std::uint16_t op, std::span<const OpTensor> in, std::span<const OpTensor> out,
	   std::span<const std::byte> param, bool kernel_ops) noexcept
{
	if (kernel_op(op) && !kernel_ops)
		return -EOPNOTSUPP;
	if (op == MCP_OP_NOP || op == MCP_OP_WNOP)
		return 0;
	if (out.size() != 1)
		return -EINVAL;
	for (const OpTensor &t : in)
		if (!well_formed(t))
			return -EINVAL;
	if (!well_formed(out[0]))
		return -EINVAL;
	try {
		switch (op) {
		case MCP_OP_COPY:
			if (in.size() != 1 || in[0].bytes != out[0].bytes)
				return -EINVAL;
			std::memmove(out[0].data, in[0].data, out[0].bytes);
			return 0;
		case MCP_OP_TILE16:
			return op_tile16(in, out[0]);
		case MCP_OP_QUANT_I8:
			return op_quant(in, out[0], param);
		case MCP_OP_DEQUANT_I8:
			return op_dequant(in, out[0], param);
		case MCP_OP_MATMUL:
			return op_matmul(in, out[0], param);
		case MCP_OP_MATMUL_I8:
			return op_matmul_i8(in, out[0], param);
		case MCP_OP_ADD:
		case MCP_OP_RELU:
		case MCP_OP_GELU:
			if (!param.empty())
				return -EINVAL;
			return op_elementwise(op, in, out[0]);
		case MCP_OP_SOFTMAX:
			if (!param.empty())
				return -EINVAL;
			return op_softmax(in, out[0]);
		case MCP_OP_LAYERNORM:
			return op_layernorm(in, out[0], param);
		case MCP_OP_BMATMUL:
			return op_bmatmul(in, out[0], param);
		case MCP_OP_BADD:
		case MCP_OP_SUB:
		case MCP_OP_MUL:
		case MCP_OP_DIV:
			if (!param.empty())
				return -EINVAL;
			return op_broadcast(op, in, out[0]);
		case MCP_OP_TRANSPOSE:
			return op_transpose(in, out[0], param);
		case MCP_OP_GELU_ERF:
			if (!param.empty())
				return -EINVAL;
			return op_gelu_erf(in, out[0]);
		default:
			if (is_cnn_op(op))
				return run_cnn_op(op, in, out[0], param);
			if (ew::known(op))
				return ew::run(op, in, out[0], param);
			return -EOPNOTSUPP;
		}
	} catch (const std::bad_alloc &) {
		return -ENOMEM;
	}
}

} // namespace mcp::detail
