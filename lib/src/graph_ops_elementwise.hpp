// SPDX-License-Identifier: LGPL-2.1-or-later
// libmcp internals: the elementwise, reduce and shape operators (op codes
// 90 .. 119: UNARY, POW, SOFTMAX_AXIS, REDUCE, CONCAT, SLICE, GATHER,
// WHERE, CAST).  Their rules are written once (ew_check(): the validator
// at load, run_op() again on a worker's job) and their loops once, as
// templates on the element type: the workers run them on f32 and on raw
// bytes, the ONNX importer's constant folding on doubles.  Not installed.
#ifndef MCP_SRC_GRAPH_OPS_ELEMENTWISE_HPP
#define MCP_SRC_GRAPH_OPS_ELEMENTWISE_HPP

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <span>
#include <string>

#include "graph_ops.hpp"

namespace mcp::detail::ew {

inline constexpr unsigned max_rank = 6;

// Is @op one of this file's operators (90 .. 119)?
bool known(std::uint16_t op) noexcept;

// The dims of a tensor; elements() is 1 for rank 0.
struct Shape {
	unsigned rank = 0;
	std::uint64_t d[max_rank] = {};

	std::uint64_t elements() const noexcept
	{
		std::uint64_t n = 1;
		for (unsigned k = 0; k < rank; k++)
			n *= d[k];
		return n;
	}
};

inline Shape shape_of(const OpTensor &t) noexcept
{
	Shape s;
	s.rank = std::min<unsigned>(t.rank, max_rank);
	for (unsigned k = 0; k < s.rank; k++)
		s.d[k] = t.dims[k];
	return s;
}

// ---- unary functions: one table ----

struct UnaryFn {
	const char *name;
	double (*f)(double x, double a, double b);
};

// Indexed by enum mcp_unary_fn; none past MCP_UNARY_COUNT.
const UnaryFn *unary_fn(std::uint32_t fn) noexcept;

// ---- the rules ----

enum class Stage { arity, param, shape };

// What is wrong with a node of @op at @stage (arity: input and output
// counts; param: the parameter bytes, arity being right; shape: dtypes and
// dims, both being right); none when nothing is.  @reason_param is set
// when a shape-stage problem is really its parameters' (an axis past the
// rank).
std::optional<std::string> check(std::uint16_t op, std::span<const OpTensor> in,
				 std::span<const OpTensor> out, std::span<const std::byte> param,
				 Stage stage, bool *reason_param = nullptr);

// Runs @op (known() is true) on a job: check() at every stage, then the
// loops.  0, -EINVAL or -ENOMEM.
int run(std::uint16_t op, std::span<const OpTensor> in, const OpTensor &out,
	std::span<const std::byte> param) noexcept;

// ---- the loops, on any element type ----

// Element strides of @in broadcast (numpy, right-aligned) to @out: 0 on a
// dim of 1 or a missing one.  False when it does not broadcast.
inline bool bcast_strides(const Shape &in, const Shape &out, std::uint64_t *st) noexcept
{
	if (in.rank > out.rank)
		return false;
	std::uint64_t s = 1;
	for (unsigned k = out.rank; k-- > 0;) {
		const int ki = static_cast<int>(k) - static_cast<int>(out.rank - in.rank);
		if (ki < 0) {
			st[k] = 0;
			continue;
		}
		const std::uint64_t d = in.d[ki];
		if (d != out.d[k] && d != 1)
			return false;
		st[k] = d == 1 ? 0 : s;
		s *= d;
	}
	return true;
}

// Calls @f(i, off) for each element i of @out in row-major order, off[j]
// the offset of input j under @st[j] (element strides in @out's dims).
template <std::size_t N, typename F>
void walk(const Shape &out, const std::uint64_t (&st)[N][max_rank], F f)
{
	std::uint64_t idx[max_rank] = {}, off[N] = {};
	const std::uint64_t total = out.elements();

	for (std::uint64_t i = 0; i < total; i++) {
		f(i, static_cast<const std::uint64_t *>(off));
		for (unsigned k = out.rank; k-- > 0;) {
			idx[k]++;
			for (std::size_t j = 0; j < N; j++)
				off[j] += st[j][k];
			if (idx[k] < out.d[k])
				break;
			for (std::size_t j = 0; j < N; j++)
				off[j] -= st[j][k] * idx[k];
			idx[k] = 0;
		}
	}
}

// softmax over the middle of [outer][d][inner]
template <typename T>
void softmax(const T *x, T *y, std::uint64_t outer, std::uint64_t d, std::uint64_t inner)
{
	for (std::uint64_t o = 0; o < outer; o++)
		for (std::uint64_t in = 0; in < inner; in++) {
			const std::uint64_t base = o * d * inner + in;
			T max = x[base];
			for (std::uint64_t i = 1; i < d; i++)
				max = std::max(max, x[base + i * inner]);
			double sum = 0;
			for (std::uint64_t i = 0; i < d; i++) {
				const T e = static_cast<T>(std::exp(x[base + i * inner] - max));
				y[base + i * inner] = e;
				sum += static_cast<double>(e);
			}
			for (std::uint64_t i = 0; i < d; i++)
				y[base + i * inner] = static_cast<T>(static_cast<double>(y[base + i * inner]) / sum);
		}
}

// (outer, d, inner) of a softmax over @axis of @s, or over axis..rank-1
// when @coerce (ONNX before opset 13).
inline void softmax_split(const Shape &s, unsigned axis, bool coerce, std::uint64_t &outer,
			  std::uint64_t &d, std::uint64_t &inner) noexcept
{
	outer = d = inner = 1;
	for (unsigned k = 0; k < s.rank; k++)
		(k < axis ? outer : k == axis || coerce ? d : inner) *= s.d[k];
}

// Mean or sum of @x over the dims in @axes (a bit each) into @y (the
// reduced elements, row-major); @y must not be @x.
template <typename T>
void reduce(const T *x, const Shape &s, std::uint32_t axes, bool mean, T *y)
{
	Shape o = s;
	std::uint64_t count = 1;
	for (unsigned k = 0; k < s.rank; k++)
		if (axes >> k & 1) {
			o.d[k] = 1;
			count *= s.d[k];
		}
	std::uint64_t st[1][max_rank] = {};
	// The input walked in its own order; each element's output offset.
	std::uint64_t ost = 1;
	for (unsigned k = s.rank; k-- > 0;) {
		st[0][k] = axes >> k & 1 ? 0 : ost;
		ost *= o.d[k];
	}
	const std::uint64_t n_out = o.elements();
	std::unique_ptr<double[]> acc(new double[n_out]());
	walk(s, st, [&](std::uint64_t i, const std::uint64_t *off) {
		acc[off[0]] += static_cast<double>(x[i]);
	});
	for (std::uint64_t i = 0; i < n_out; i++)
		y[i] = static_cast<T>(mean ? acc[i] / static_cast<double>(count) : acc[i]);
}

// Byte copies of @elem-sized elements: concat, slice, gather, where.
template <typename Src>
void concat(std::span<const Src> parts, const Shape *shapes, unsigned axis, std::size_t elem,
	    std::byte *dst)
{
	std::uint64_t outer = 1, inner = 1;
	for (unsigned k = 0; k < shapes[0].rank; k++)
		(k < axis ? outer : inner) *= k == axis ? 1 : shapes[0].d[k];
	for (std::uint64_t o = 0; o < outer; o++)
		for (std::size_t p = 0; p < parts.size(); p++) {
			const std::uint64_t n = shapes[p].d[axis] * inner * elem;
			std::memcpy(dst, reinterpret_cast<const std::byte *>(parts[p]) + o * n, n);
			dst += n;
		}
}

template <typename Step>
void slice(const std::byte *src, const Shape &in, const Step *start, const Step *step,
	   const Shape &out, std::size_t elem, std::byte *dst)
{
	std::uint64_t st[1][max_rank] = {}, s = 1;
	std::int64_t base = 0;
	for (unsigned k = in.rank; k-- > 0;) {
		base += static_cast<std::int64_t>(start[k]) * static_cast<std::int64_t>(s);
		// A negative step wraps in unsigned arithmetic and comes back.
		st[0][k] = static_cast<std::uint64_t>(static_cast<std::int64_t>(step[k]) *
						      static_cast<std::int64_t>(s));
		s *= in.d[k];
	}
	walk(out, st, [&](std::uint64_t i, const std::uint64_t *off) {
		const std::uint64_t at = static_cast<std::uint64_t>(base) + off[0];
		std::memcpy(dst + i * elem, src + at * elem, elem);
	});
}

// Gather along @axis with @n_idx indices (negative from the end); false
// (and nothing is trusted in @dst) when one is out of range.
template <typename Index>
bool gather(const std::byte *src, const Shape &in, unsigned axis, const Index *idx,
	    std::uint64_t n_idx, std::size_t elem, std::byte *dst)
{
	std::uint64_t outer = 1, inner = 1;
	for (unsigned k = 0; k < in.rank; k++)
		if (k != axis)
			(k < axis ? outer : inner) *= in.d[k];
	const auto dim = static_cast<std::int64_t>(in.d[axis]);
	const std::uint64_t row = inner * elem;
	for (std::uint64_t j = 0; j < n_idx; j++) {
		auto v = static_cast<std::int64_t>(idx[j]);
		if (v < -dim || v >= dim)
			return false;
	}
	for (std::uint64_t o = 0; o < outer; o++)
		for (std::uint64_t j = 0; j < n_idx; j++) {
			auto v = static_cast<std::int64_t>(idx[j]);
			v = v < 0 ? v + dim : v;
			std::memcpy(dst + (o * n_idx + j) * row,
				    src + (o * static_cast<std::uint64_t>(dim) + static_cast<std::uint64_t>(v)) * row,
				    row);
		}
	return true;
}

} // namespace mcp::detail::ew

#endif // MCP_SRC_GRAPH_OPS_ELEMENTWISE_HPP
