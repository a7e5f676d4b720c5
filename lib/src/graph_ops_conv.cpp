// SPDX-License-Identifier: LGPL-2.1-or-later
// The CNN operators of inference graphs (graph_ops.hpp), f32 NCHW: CONV
// as im2col + OpenBLAS sgemm per group (a direct loop for depthwise
// groups), CONV_TRANSPOSE as sgemm + col2im, MAXPOOL, AVGPOOL,
// GLOBAL_AVGPOOL and CHANNEL_AFFINE in plain loops.  cnn_rules() is the
// one statement of their rules: the validator and the workers both ask it.
#include <algorithm>
#include <cerrno>
#include <climits>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "graph_ops.hpp"

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wshadow"
#include <linux/mcp.h>
#pragma GCC diagnostic pop

namespace mcp::detail {

static_assert(sizeof(struct mcp_graph_conv) == 64 && sizeof(struct mcp_graph_pool) == 48);

bool is_cnn_op(std::uint16_t op) noexcept
{
	return op >= MCP_OP_CONV && op <= MCP_OP_CHANNEL_AFFINE;
}

namespace {

using Dim = std::int64_t;

// Scratch memory of the operators, per thread: it grows to the largest
// run a worker has seen and stays, so a graph executed again allocates
// nothing (issue #18 item 3).  One buffer per use within one call.
enum class Scratch { im2col, output, channels, count };

float *scratch(Scratch use, std::size_t floats)
{
	thread_local std::vector<float> buffers[static_cast<int>(Scratch::count)];
	std::vector<float> &b = buffers[static_cast<int>(use)];

	if (b.size() < floats)
		b.resize(floats);
	return b.data();
}

std::string dims_of(const OpTensor &t)
{
	std::string s = "[";
	for (unsigned k = 0; k < t.rank; k++)
		s += (k ? " x " : "") + std::to_string(t.dims[k]);
	return s + "]";
}

std::string hw(std::uint64_t h, std::uint64_t w)
{
	return std::to_string(h) + "x" + std::to_string(w);
}

float f32_bits(std::uint32_t bits)
{
	float f;
	std::memcpy(&f, &bits, 4);
	return f;
}

// One spatial output dim of a window of @k taps @d apart, every @s, over
// @in padded by @pa and @pb; 0 when no window fits.  @ceil rounds up,
// dropping a last window that starts past the input and its top pad.
Dim window_out(Dim in, Dim k, Dim s, Dim d, Dim pa, Dim pb, bool ceil)
{
	const Dim span = in + pa + pb - d * (k - 1) - 1;
	if (span < 0)
		return 0;
	Dim out = (ceil ? (span + s - 1) / s : span / s) + 1;
	if (ceil && (out - 1) * s >= in + pa)
		out--;
	return out;
}

struct Geometry {
	Dim n, c, h, w;		// input
	Dim m, oh, ow;		// output channels and dims
	Dim groups, kh, kw;
};

std::optional<CnnRuleError> param_bad(std::string what)
{
	return CnnRuleError{true, std::move(what)};
}

std::optional<CnnRuleError> shape_bad(std::string what)
{
	return CnnRuleError{false, std::move(what)};
}

bool dense_f32(const OpTensor &t)
{
	return t.dtype == MCP_DTYPE_F32 && t.layout == MCP_LAYOUT_DENSE;
}

std::optional<CnnRuleError> all_f32(std::span<const OpTensor> in, const OpTensor &out)
{
	for (std::size_t k = 0; k < in.size(); k++)
		if (!dense_f32(in[k]))
			return shape_bad("input " + std::to_string(k) + " is not dense f32");
	if (!dense_f32(out))
		return shape_bad("the output is not dense f32");
	return std::nullopt;
}

// Largest GEMM dimension OpenBLAS (32-bit blasint) and the loops take.
constexpr Dim max_gemm = INT_MAX;

std::optional<CnnRuleError> conv_rules(std::uint16_t op, std::span<const OpTensor> in,
				       const OpTensor &out, const struct mcp_graph_conv &p,
				       Geometry *geo, bool probe)
{
	const bool tr = op == MCP_OP_CONV_TRANSPOSE;
	const char *name = tr ? "conv_transpose" : "conv";

	if (!p.kernel_h || !p.kernel_w || !p.stride_h || !p.stride_w || !p.dilation_h ||
	    !p.dilation_w || !p.groups)
		return param_bad("kernel, strides, dilations and groups must be >= 1");
	if (p.activation > MCP_CONV_ACT_CLIP)
		return param_bad("unknown activation " + std::to_string(p.activation) +
				 " (none 0, relu 1, clip 2)");
	if (p.activation == MCP_CONV_ACT_CLIP) {
		const float lo = f32_bits(p.clip_min), hi = f32_bits(p.clip_max);
		if (std::isnan(lo) || std::isnan(hi) || lo > hi)
			return param_bad("clip_min must be <= clip_max (and neither NaN)");
	} else if (p.clip_min || p.clip_max) {
		return param_bad("clip_min and clip_max are set without the clip activation");
	}
	if (!tr && (p.out_pad_h || p.out_pad_w))
		return param_bad("out_pad_h and out_pad_w are CONV_TRANSPOSE's: 0 for conv");
	if (tr && ((p.out_pad_h >= p.stride_h && p.out_pad_h >= p.dilation_h) ||
		   (p.out_pad_w >= p.stride_w && p.out_pad_w >= p.dilation_w)))
		return param_bad("output padding " + hw(p.out_pad_h, p.out_pad_w) +
				 " must be smaller than the stride or the dilation");
	if (in.size() < 2 || in.size() > 3)
		return shape_bad(std::string(name) + " takes 2 or 3 inputs");
	if (auto e = all_f32(in, out))
		return e;
	const OpTensor &x = in[0], &wt = in[1];
	if (x.rank != 4 || wt.rank != 4 || out.rank != 4)
		return shape_bad(std::string(name) + " takes rank 4 (NCHW): X " + dims_of(x) + ", W " +
				 dims_of(wt) + ", Y " + dims_of(out));
	if (wt.dims[2] != p.kernel_h || wt.dims[3] != p.kernel_w)
		return shape_bad("W " + dims_of(wt) + " is not a " + hw(p.kernel_h, p.kernel_w) +
				 " kernel (the parameters' kernel)");
	Geometry g{x.dims[0], x.dims[1], x.dims[2], x.dims[3], 0, 0, 0, p.groups, p.kernel_h,
		   p.kernel_w};
	if (!tr) {
		if (Dim{wt.dims[1]} * g.groups != g.c)
			return shape_bad("W " + dims_of(wt) + " takes " + std::to_string(wt.dims[1]) +
					 " channels per group x " + std::to_string(g.groups) +
					 " groups, but X " + dims_of(x) + " has " +
					 std::to_string(g.c) + " channels");
		g.m = wt.dims[0];
		if (g.m % g.groups)
			return shape_bad("W " + dims_of(wt) + ": its " + std::to_string(g.m) +
					 " output channels are not a multiple of " +
					 std::to_string(g.groups) + " groups");
	} else {
		if (wt.dims[0] != g.c || g.c % g.groups)
			return shape_bad("W " + dims_of(wt) + " must be [C = " + std::to_string(g.c) +
					 "][M / groups][KH][KW] with C a multiple of " +
					 std::to_string(g.groups) + " groups (X " + dims_of(x) + ")");
		g.m = Dim{wt.dims[1]} * g.groups;
	}
	if (in.size() == 3 && (in[2].rank != 1 || in[2].dims[0] != g.m))
		return shape_bad("bias " + dims_of(in[2]) + " should be [" + std::to_string(g.m) + "]");
	const Dim dkh = Dim{p.dilation_h} * (g.kh - 1) + 1, dkw = Dim{p.dilation_w} * (g.kw - 1) + 1;
	if (!tr) {
		g.oh = window_out(g.h, g.kh, p.stride_h, p.dilation_h, p.pad_top, p.pad_bottom, false);
		g.ow = window_out(g.w, g.kw, p.stride_w, p.dilation_w, p.pad_left, p.pad_right, false);
		if (!g.oh || !g.ow)
			return shape_bad("the dilated kernel " + hw(dkh, dkw) +
					 " is larger than the padded input " +
					 hw(g.h + p.pad_top + p.pad_bottom, g.w + p.pad_left + p.pad_right));
	} else {
		g.oh = Dim{p.stride_h} * (g.h - 1) + p.out_pad_h + dkh - p.pad_top - p.pad_bottom;
		g.ow = Dim{p.stride_w} * (g.w - 1) + p.out_pad_w + dkw - p.pad_left - p.pad_right;
		if (g.oh < 1 || g.ow < 1)
			return shape_bad("the pads " + hw(Dim{p.pad_top} + p.pad_bottom,
							  Dim{p.pad_left} + p.pad_right) +
					 " remove the whole output");
	}
	if (g.oh > UINT32_MAX || g.ow > UINT32_MAX)
		return shape_bad("the output " + hw(g.oh, g.ow) + " overflows 32-bit dims");
	if (!probe && (out.dims[0] != g.n || out.dims[1] != g.m || out.dims[2] != g.oh ||
		       out.dims[3] != g.ow))
		return shape_bad("Y " + dims_of(out) + " should be [" + std::to_string(g.n) + " x " +
				 std::to_string(g.m) + " x " + std::to_string(g.oh) + " x " +
				 std::to_string(g.ow) + "]");
	// The GEMM dims (and the im2col scratch) within 32-bit and memory.
	const Dim cg = g.c / g.groups, mg = g.m / g.groups;
	const Dim taps = (tr ? mg : cg) * g.kh * g.kw;
	const Dim pixels = tr ? g.h * g.w : g.oh * g.ow;
	if (taps > max_gemm || pixels > max_gemm || taps * pixels > (Dim{1} << 40))
		return shape_bad("a group's matrices (" + std::to_string(taps) + " x " +
				 std::to_string(pixels) + ") are too large");
	if (geo)
		*geo = g;
	return std::nullopt;
}

std::optional<CnnRuleError> pool_rules(std::uint16_t op, std::span<const OpTensor> in,
				       const OpTensor &out, const struct mcp_graph_pool &p,
				       Geometry *geo, bool probe)
{
	if (!p.kernel_h || !p.kernel_w || !p.stride_h || !p.stride_w || !p.dilation_h ||
	    !p.dilation_w)
		return param_bad("kernel, strides and dilations must be >= 1");
	if (p.flags & ~MCP_POOL_FLAGS)
		return param_bad("unknown pool flags " + std::to_string(p.flags) +
				 " (ceil 1, count_pad 2)");
	if (p.reserved)
		return param_bad("reserved is not 0");
	if (op == MCP_OP_MAXPOOL && (p.flags & MCP_POOL_COUNT_PAD))
		return param_bad("count_pad is AVGPOOL's");
	if (op == MCP_OP_AVGPOOL && (p.dilation_h != 1 || p.dilation_w != 1))
		return param_bad("avgpool takes dilations 1");
	const Dim dkh = Dim{p.dilation_h} * (p.kernel_h - 1) + 1;
	const Dim dkw = Dim{p.dilation_w} * (p.kernel_w - 1) + 1;
	if (p.pad_top >= dkh || p.pad_bottom >= dkh || p.pad_left >= dkw || p.pad_right >= dkw)
		return param_bad("every pad must be smaller than the (dilated) kernel " + hw(dkh, dkw));
	if (in.size() != 1)
		return shape_bad("pools take 1 input");
	if (auto e = all_f32(in, out))
		return e;
	const OpTensor &x = in[0];
	if (x.rank != 4 || out.rank != 4)
		return shape_bad("pools take rank 4 (NCHW): X " + dims_of(x) + ", Y " + dims_of(out));
	const bool ceil = p.flags & MCP_POOL_CEIL;
	Geometry g{x.dims[0], x.dims[1], x.dims[2], x.dims[3], x.dims[1], 0, 0, 1, p.kernel_h,
		   p.kernel_w};
	g.oh = window_out(g.h, g.kh, p.stride_h, p.dilation_h, p.pad_top, p.pad_bottom, ceil);
	g.ow = window_out(g.w, g.kw, p.stride_w, p.dilation_w, p.pad_left, p.pad_right, ceil);
	if (!g.oh || !g.ow)
		return shape_bad("the window " + hw(dkh, dkw) + " is larger than the padded input " +
				 hw(g.h + p.pad_top + p.pad_bottom, g.w + p.pad_left + p.pad_right));
	if (!probe && (out.dims[0] != g.n || out.dims[1] != g.c || out.dims[2] != g.oh ||
		       out.dims[3] != g.ow))
		return shape_bad("Y " + dims_of(out) + " should be [" + std::to_string(g.n) + " x " +
				 std::to_string(g.c) + " x " + std::to_string(g.oh) + " x " +
				 std::to_string(g.ow) + "]");
	if (geo)
		*geo = g;
	return std::nullopt;
}

template <typename P>
std::optional<CnnRuleError> read_param(std::span<const std::byte> param, P &p, const char *what)
{
	if (param.size() != sizeof(P))
		return param_bad("parameters are " + std::to_string(param.size()) + " bytes, " + what +
				 " takes " + std::to_string(sizeof(P)));
	std::memcpy(&p, param.data(), sizeof(P));
	return std::nullopt;
}

std::optional<CnnRuleError> rules(std::uint16_t op, std::span<const OpTensor> in, const OpTensor &out,
				  std::span<const std::byte> param, Geometry *geo, bool probe = false)
{
	switch (op) {
	case MCP_OP_CONV:
	case MCP_OP_CONV_TRANSPOSE: {
		struct mcp_graph_conv p {};
		if (auto e = read_param(param, p, "struct mcp_graph_conv"))
			return e;
		return conv_rules(op, in, out, p, geo, probe);
	}
	case MCP_OP_MAXPOOL:
	case MCP_OP_AVGPOOL: {
		struct mcp_graph_pool p {};
		if (auto e = read_param(param, p, "struct mcp_graph_pool"))
			return e;
		return pool_rules(op, in, out, p, geo, probe);
	}
	case MCP_OP_GLOBAL_AVGPOOL: {
		if (!param.empty())
			return param_bad("global_avgpool takes no parameters");
		if (in.size() != 1)
			return shape_bad("global_avgpool takes 1 input");
		if (auto e = all_f32(in, out))
			return e;
		const OpTensor &x = in[0];
		bool ok = x.rank >= 3 && out.rank == x.rank && out.dims[0] == x.dims[0] &&
			  out.dims[1] == x.dims[1];
		for (unsigned k = 2; ok && k < out.rank; k++)
			ok = out.dims[k] == 1;
		if (!ok)
			return shape_bad("X " + dims_of(x) + " (rank >= 3) to Y " + dims_of(out) +
					 ": Y must be [N][C] then 1s");
		return std::nullopt;
	}
	case MCP_OP_CHANNEL_AFFINE: {
		if (!param.empty())
			return param_bad("channel_affine takes no parameters");
		if (in.size() != 3)
			return shape_bad("channel_affine takes 3 inputs (x, scale, shift)");
		if (auto e = all_f32(in, out))
			return e;
		const OpTensor &x = in[0];
		if (x.rank < 2 || out.rank != x.rank || !std::equal(x.dims, x.dims + x.rank, out.dims))
			return shape_bad("X " + dims_of(x) + " (rank >= 2) and Y " + dims_of(out) +
					 " must have the same dims");
		for (unsigned k = 1; k < 3; k++)
			if (in[k].rank != 1 || in[k].dims[0] != x.dims[1])
				return shape_bad(std::string(k == 1 ? "scale " : "shift ") +
						 dims_of(in[k]) + " should be [" +
						 std::to_string(x.dims[1]) + "]");
		return std::nullopt;
	}
	default:
		return shape_bad("not a CNN operator");
	}
}

float *f32(const OpTensor &t)
{
	return reinterpret_cast<float *>(t.data);
}

void activate(float *y, std::size_t n, const struct mcp_graph_conv &p)
{
	if (p.activation == MCP_CONV_ACT_RELU) {
		for (std::size_t i = 0; i < n; i++)
			y[i] = std::max(y[i], 0.0f);
	} else if (p.activation == MCP_CONV_ACT_CLIP) {
		const float lo = f32_bits(p.clip_min), hi = f32_bits(p.clip_max);
		for (std::size_t i = 0; i < n; i++)
			y[i] = std::clamp(y[i], lo, hi);
	}
}

// col[(c * KH + i) * KW + j][oh * OW + ow] = x[c][oh * s - pad + i * d][..], 0 outside.
void im2col(const float *x, const Geometry &g, Dim cg, const struct mcp_graph_conv &p, float *col)
{
	for (Dim c = 0; c < cg; c++)
		for (Dim i = 0; i < g.kh; i++)
			for (Dim j = 0; j < g.kw; j++) {
				float *row = col + ((c * g.kh + i) * g.kw + j) * g.oh * g.ow;
				const float *xc = x + c * g.h * g.w;
				for (Dim oh = 0; oh < g.oh; oh++) {
					const Dim ih = oh * p.stride_h - p.pad_top + i * p.dilation_h;
					float *r = row + oh * g.ow;
					if (ih < 0 || ih >= g.h) {
						std::fill(r, r + g.ow, 0.0f);
						continue;
					}
					for (Dim ow = 0; ow < g.ow; ow++) {
						const Dim iw = ow * p.stride_w - p.pad_left + j * p.dilation_w;
						r[ow] = iw < 0 || iw >= g.w ? 0.0f : xc[ih * g.w + iw];
					}
				}
			}
}

// One input channel per group: each output channel convolves its own.
void depthwise(const float *x, const float *w, const float *bias, const Geometry &g,
	       const struct mcp_graph_conv &p, float *y)
{
	const Dim mg = g.m / g.groups;
	for (Dim n = 0; n < g.n; n++)
		for (Dim m = 0; m < g.m; m++) {
			const float *xc = x + (n * g.c + m / mg) * g.h * g.w;
			const float *wm = w + m * g.kh * g.kw;
			float *ym = y + (n * g.m + m) * g.oh * g.ow;
			const float b = bias ? bias[m] : 0.0f;
			for (Dim oh = 0; oh < g.oh; oh++)
				for (Dim ow = 0; ow < g.ow; ow++) {
					float s = b;
					for (Dim i = 0; i < g.kh; i++) {
						const Dim ih = oh * p.stride_h - p.pad_top + i * p.dilation_h;
						if (ih < 0 || ih >= g.h)
							continue;
						for (Dim j = 0; j < g.kw; j++) {
							const Dim iw = ow * p.stride_w - p.pad_left +
								       j * p.dilation_w;
							if (iw >= 0 && iw < g.w)
								s += xc[ih * g.w + iw] * wm[i * g.kw + j];
						}
					}
					ym[oh * g.ow + ow] = s;
				}
		}
}

void fill_bias(float *y, const float *bias, Dim rows, Dim len)
{
	for (Dim r = 0; r < rows; r++)
		std::fill(y + r * len, y + (r + 1) * len, bias ? bias[r] : 0.0f);
}

int conv(std::span<const OpTensor> in, const Geometry &g, const struct mcp_graph_conv &p, float *y)
{
	const float *x = f32(in[0]), *w = f32(in[1]);
	const float *bias = in.size() == 3 ? f32(in[2]) : nullptr;
	const Dim cg = g.c / g.groups, mg = g.m / g.groups, pixels = g.oh * g.ow;
	const Dim taps = cg * g.kh * g.kw;

	if (cg == 1 && g.groups > 1) {
		depthwise(x, w, bias, g, p, y);
		return 0;
	}
	if (!blas_available())
		return -EOPNOTSUPP;
	// A 1x1 kernel without stride or pads reads X as it is.
	const bool direct = g.kh == 1 && g.kw == 1 && p.stride_h == 1 && p.stride_w == 1 &&
			    !p.pad_top && !p.pad_left && !p.pad_bottom && !p.pad_right;
	float *col = direct ? nullptr : scratch(Scratch::im2col, static_cast<std::size_t>(taps * pixels));
	for (Dim n = 0; n < g.n; n++)
		for (Dim gr = 0; gr < g.groups; gr++) {
			const float *xg = x + (n * g.c + gr * cg) * g.h * g.w;
			float *yg = y + (n * g.m + gr * mg) * pixels;
			if (!direct)
				im2col(xg, g, cg, p, col);
			fill_bias(yg, bias ? bias + gr * mg : nullptr, mg, pixels);
			blas_sgemm(false, false, static_cast<std::uint32_t>(mg),
				   static_cast<std::uint32_t>(pixels), static_cast<std::uint32_t>(taps),
				   1.0f, w + gr * mg * taps, static_cast<std::uint32_t>(taps),
				   direct ? xg : col, static_cast<std::uint32_t>(pixels), 1.0f, yg,
				   static_cast<std::uint32_t>(pixels));
		}
	return 0;
}

// y[m][ih * s - pad + i * d][..] += (W^T x)[(m * KH + i) * KW + j][ih][iw]
int conv_transpose(std::span<const OpTensor> in, const Geometry &g, const struct mcp_graph_conv &p,
		   float *y)
{
	const float *x = f32(in[0]), *w = f32(in[1]);
	const float *bias = in.size() == 3 ? f32(in[2]) : nullptr;
	const Dim cg = g.c / g.groups, mg = g.m / g.groups, pixels = g.h * g.w;
	const Dim taps = mg * g.kh * g.kw;

	if (!blas_available())
		return -EOPNOTSUPP;
	float *col = scratch(Scratch::im2col, static_cast<std::size_t>(taps * pixels));
	for (Dim n = 0; n < g.n; n++)
		for (Dim gr = 0; gr < g.groups; gr++) {
			const float *xg = x + (n * g.c + gr * cg) * pixels;
			float *yg = y + (n * g.m + gr * mg) * g.oh * g.ow;
			blas_sgemm(true, false, static_cast<std::uint32_t>(taps),
				   static_cast<std::uint32_t>(pixels), static_cast<std::uint32_t>(cg),
				   1.0f, w + gr * cg * taps, static_cast<std::uint32_t>(taps), xg,
				   static_cast<std::uint32_t>(pixels), 0.0f, col,
				   static_cast<std::uint32_t>(pixels));
			fill_bias(yg, bias ? bias + gr * mg : nullptr, mg, g.oh * g.ow);
			for (Dim m = 0; m < mg; m++)
				for (Dim i = 0; i < g.kh; i++)
					for (Dim j = 0; j < g.kw; j++) {
						const float *row = col + ((m * g.kh + i) * g.kw + j) * pixels;
						float *ym = yg + m * g.oh * g.ow;
						for (Dim ih = 0; ih < g.h; ih++) {
							const Dim oh = ih * p.stride_h - p.pad_top + i * p.dilation_h;
							if (oh < 0 || oh >= g.oh)
								continue;
							for (Dim iw = 0; iw < g.w; iw++) {
								const Dim ow = iw * p.stride_w - p.pad_left +
									       j * p.dilation_w;
								if (ow >= 0 && ow < g.ow)
									ym[oh * g.ow + ow] += row[ih * g.w + iw];
							}
						}
					}
		}
	return 0;
}

void pool(std::uint16_t op, const float *x, const Geometry &g, const struct mcp_graph_pool &p, float *y)
{
	const bool count_pad = p.flags & MCP_POOL_COUNT_PAD;
	for (Dim nc = 0; nc < g.n * g.c; nc++) {
		const float *xc = x + nc * g.h * g.w;
		float *yc = y + nc * g.oh * g.ow;
		for (Dim oh = 0; oh < g.oh; oh++)
			for (Dim ow = 0; ow < g.ow; ow++) {
				const Dim h0 = oh * p.stride_h - p.pad_top, w0 = ow * p.stride_w - p.pad_left;
				if (op == MCP_OP_MAXPOOL) {
					float v = std::numeric_limits<float>::lowest();
					for (Dim i = 0; i < g.kh; i++) {
						const Dim ih = h0 + i * p.dilation_h;
						if (ih < 0 || ih >= g.h)
							continue;
						for (Dim j = 0; j < g.kw; j++) {
							const Dim iw = w0 + j * p.dilation_w;
							if (iw >= 0 && iw < g.w)
								v = std::max(v, xc[ih * g.w + iw]);
						}
					}
					yc[oh * g.ow + ow] = v;
					continue;
				}
				// ONNX Runtime's window: clipped to the padded input
				// for count_pad, to the input otherwise.
				const Dim h1 = std::min(h0 + g.kh, g.h + p.pad_bottom);
				const Dim w1 = std::min(w0 + g.kw, g.w + p.pad_right);
				const Dim padded = (h1 - h0) * (w1 - w0);
				const Dim hs = std::max<Dim>(h0, 0), he = std::min(h1, g.h);
				const Dim ws = std::max<Dim>(w0, 0), we = std::min(w1, g.w);
				float s = 0.0f;
				for (Dim ih = hs; ih < he; ih++)
					for (Dim iw = ws; iw < we; iw++)
						s += xc[ih * g.w + iw];
				const Dim count = count_pad ? padded : (he - hs) * (we - ws);
				yc[oh * g.ow + ow] = count > 0 ? s / static_cast<float>(count) : 0.0f;
			}
	}
}

bool overlaps(const OpTensor &a, const OpTensor &b)
{
	return a.data < b.data + b.bytes && b.data < a.data + a.bytes;
}

} // namespace

std::optional<CnnRuleError> cnn_rules(std::uint16_t op, std::span<const OpTensor> in,
				      const OpTensor &out, std::span<const std::byte> param)
{
	return rules(op, in, out, param, nullptr);
}

std::optional<CnnRuleError> cnn_output(std::uint16_t op, std::span<const OpTensor> in,
				       std::span<const std::byte> param, OpTensor &out)
{
	if (op < MCP_OP_CONV || op > MCP_OP_AVGPOOL)
		return shape_bad("not a windowed CNN operator");
	Geometry g{};
	out.dtype = MCP_DTYPE_F32;
	out.layout = MCP_LAYOUT_DENSE;
	out.rank = 4;
	if (auto e = rules(op, in, out, param, &g, true))
		return e;
	const std::uint32_t dims[4] = {static_cast<std::uint32_t>(g.n), static_cast<std::uint32_t>(g.m),
				       static_cast<std::uint32_t>(g.oh), static_cast<std::uint32_t>(g.ow)};
	std::copy(dims, dims + 4, out.dims);
	return std::nullopt;
}

int run_cnn_op(std::uint16_t op, std::span<const OpTensor> in, const OpTensor &out,
	       std::span<const std::byte> param) noexcept
{
	if (!is_cnn_op(op))
		return -EOPNOTSUPP;
	try {
		Geometry g{};
		if (rules(op, in, out, param, &g))
			return -EINVAL;
		const std::size_t n_out = static_cast<std::size_t>(tensor_elements(out));
		// CONV, CONV_TRANSPOSE and the pools write before they have
		// read all of their input: into scratch memory when the
		// output overlaps an input.
		const bool overlap = std::any_of(in.begin(), in.end(),
						 [&](const OpTensor &t) { return overlaps(t, out); });
		float *y = f32(out);
		const bool staged = overlap && op != MCP_OP_CHANNEL_AFFINE &&
				    op != MCP_OP_GLOBAL_AVGPOOL;
		if (staged)
			y = scratch(Scratch::output, n_out);
		int ret = 0;
		switch (op) {
		case MCP_OP_CONV:
		case MCP_OP_CONV_TRANSPOSE: {
			struct mcp_graph_conv p {};
			std::memcpy(&p, param.data(), sizeof(p));
			ret = op == MCP_OP_CONV ? conv(in, g, p, y) : conv_transpose(in, g, p, y);
			if (!ret)
				activate(y, n_out, p);
			break;
		}
		case MCP_OP_MAXPOOL:
		case MCP_OP_AVGPOOL: {
			struct mcp_graph_pool p {};
			std::memcpy(&p, param.data(), sizeof(p));
			pool(op, f32(in[0]), g, p, y);
			break;
		}
		case MCP_OP_GLOBAL_AVGPOOL: {
			// Each channel's mean is written after its plane is read.
			const std::size_t planes = std::size_t{in[0].dims[0]} * in[0].dims[1];
			const std::size_t len = static_cast<std::size_t>(tensor_elements(in[0])) / planes;
			for (std::size_t c = 0; c < planes; c++) {
				const float *xc = f32(in[0]) + c * len;
				double s = 0.0;
				for (std::size_t i = 0; i < len; i++)
					s += xc[i];
				y[c] = static_cast<float>(s / static_cast<double>(len));
			}
			break;
		}
		default: {
			// CHANNEL_AFFINE, element by element (in place is fine).
			const std::size_t c = in[0].dims[1], n = in[0].dims[0];
			const std::size_t len = n_out / (n * c);
			// Copies: the output may overlap the scale and shift.
			float *sc = scratch(Scratch::channels, 2 * c), *sh = sc + c;
			std::copy_n(f32(in[1]), c, sc);
			std::copy_n(f32(in[2]), c, sh);
			const float *x = f32(in[0]);
			for (std::size_t i = 0; i < n * c; i++)
				for (std::size_t k = 0; k < len; k++)
					y[i * len + k] = x[i * len + k] * sc[i % c] + sh[i % c];
			break;
		}
		}
		if (!ret && y != f32(out))
			std::memcpy(out.data, y, n_out * sizeof(float));
		return ret;
	} catch (const std::bad_alloc &) {
		return -ENOMEM;
	}
}

} // namespace mcp::detail
