// SPDX-License-Identifier: LGPL-2.1-or-later
// The elementwise, reduce and shape operators (graph_ops_elementwise.hpp):
// their rules, checked by the validator at load and again on each job, and
// the worker side of run_op() for them.
#include <cerrno>
#include <limits>
#include <new>
#include <vector>

#include "graph_ops_elementwise.hpp"

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wshadow"
#include <linux/mcp.h>
#pragma GCC diagnostic pop

namespace mcp::detail::ew {

namespace {

double hardsigmoid(double x, double a, double b)
{
	return std::max(0.0, std::min(1.0, a * x + b));
}

constexpr UnaryFn unary_table[MCP_UNARY_COUNT] = {
	{"sigmoid", [](double x, double, double) { return 1.0 / (1.0 + std::exp(-x)); }},
	{"hardsigmoid", hardsigmoid},
	{"hardswish", [](double x, double, double) { return x * hardsigmoid(x, 1.0 / 6, 0.5); }},
	{"tanh", [](double x, double, double) { return std::tanh(x); }},
	{"exp", [](double x, double, double) { return std::exp(x); }},
	{"sqrt", [](double x, double, double) { return std::sqrt(x); }},
	{"erf", [](double x, double, double) { return std::erf(x); }},
	{"clip", [](double x, double a, double b) { return std::isnan(x) ? x : std::clamp(x, a, b); }},
	{"pow", [](double x, double a, double) { return std::pow(x, a); }},
};

std::uint32_t u32_at(std::span<const std::byte> p, std::size_t at)
{
	std::uint32_t v;
	std::memcpy(&v, p.data() + at, 4);
	return v;
}

float f32_at(std::span<const std::byte> p, std::size_t at)
{
	float v;
	std::memcpy(&v, p.data() + at, 4);
	return v;
}

const char *dtype_name(std::uint8_t d)
{
	switch (d) {
	case MCP_DTYPE_F32:
		return "f32";
	case MCP_DTYPE_I8:
		return "i8";
	case MCP_DTYPE_U8:
		return "u8";
	case MCP_DTYPE_I32:
		return "i32";
	default:
		return "unknown";
	}
}

std::string text(const Shape &s)
{
	std::string r = "[";
	for (unsigned k = 0; k < s.rank; k++)
		r += (k ? " x " : "") + std::to_string(s.d[k]);
	return r + "]";
}

std::string text(const OpTensor &t, const char *what)
{
	return std::string(what) + " " + dtype_name(t.dtype) + text(shape_of(t));
}

bool same(const Shape &a, const Shape &b)
{
	return a.rank == b.rank && std::equal(a.d, a.d + a.rank, b.d);
}

// The numpy broadcast of @n shapes; none when they do not broadcast.
std::optional<Shape> bcast(std::span<const OpTensor> in)
{
	Shape o;
	for (const OpTensor &t : in)
		o.rank = std::max<unsigned>(o.rank, std::min<unsigned>(t.rank, max_rank));
	for (unsigned k = 0; k < o.rank; k++)
		o.d[k] = 1;
	for (const OpTensor &t : in) {
		const Shape s = shape_of(t);
		for (unsigned k = 0; k < s.rank; k++) {
			std::uint64_t &d = o.d[o.rank - s.rank + k];
			if (s.d[k] != d && s.d[k] != 1 && d != 1)
				return std::nullopt;
			d = s.d[k] == 1 ? d : s.d[k];
		}
	}
	return o;
}

const char *in_name(unsigned k)
{
	static const char *names[] = {"input 0", "input 1", "input 2", "input 3"};
	return k < 4 ? names[k] : "input";
}

std::optional<std::string> check_arity(std::uint16_t op, std::size_t n_in, std::size_t n_out)
{
	std::size_t lo = 1, hi = 1;
	switch (op) {
	case MCP_OP_POW:
	case MCP_OP_GATHER:
		lo = hi = 2;
		break;
	case MCP_OP_WHERE:
		lo = hi = 3;
		break;
	case MCP_OP_CONCAT:
		hi = 4;
		break;
	default:
		break;
	}
	if (n_in >= lo && n_in <= hi && n_out == 1)
		return std::nullopt;
	return std::to_string(n_in) + " input(s) and " + std::to_string(n_out) +
	       " output(s): it takes " + std::to_string(lo) +
	       (lo == hi ? "" : ".." + std::to_string(hi)) + " input(s) and 1 output";
}

std::optional<std::string> check_param(std::uint16_t op, std::span<const std::byte> p)
{
	std::size_t want = 0;
	switch (op) {
	case MCP_OP_UNARY:
		want = sizeof(struct mcp_graph_unary);
		break;
	case MCP_OP_SOFTMAX_AXIS:
	case MCP_OP_CONCAT:
	case MCP_OP_GATHER:
		want = sizeof(struct mcp_graph_axis);
		break;
	case MCP_OP_REDUCE:
		want = sizeof(struct mcp_graph_reduce);
		break;
	case MCP_OP_SLICE:
		want = sizeof(struct mcp_graph_slice);
		break;
	case MCP_OP_CAST:
		want = sizeof(struct mcp_graph_cast);
		break;
	default:
		break;
	}
	if (p.size() != want)
		return "parameters are " + std::to_string(p.size()) + " bytes, it takes " +
		       std::to_string(want);
	switch (op) {
	case MCP_OP_UNARY: {
		const std::uint32_t fn = u32_at(p, 0);
		const float a = f32_at(p, 4), b = f32_at(p, 8);
		if (fn >= MCP_UNARY_COUNT)
			return "unknown unary function " + std::to_string(fn);
		if (std::isnan(a) || std::isnan(b) || u32_at(p, 12) != 0)
			return std::string("alpha and beta must not be NaN, reserved 0");
		if (fn == MCP_UNARY_CLIP && a > b)
			return "clip min " + std::to_string(a) + " > max " + std::to_string(b);
		return std::nullopt;
	}
	case MCP_OP_SOFTMAX_AXIS:
		if (u32_at(p, 4) & ~MCP_AXIS_COERCE)
			return "unknown axis flags " + std::to_string(u32_at(p, 4)) + " (coerce 1)";
		return std::nullopt;
	case MCP_OP_CONCAT:
	case MCP_OP_GATHER:
		if (u32_at(p, 4) != 0)
			return std::string("axis flags must be 0");
		return std::nullopt;
	case MCP_OP_REDUCE:
		if (u32_at(p, 0) > MCP_REDUCE_SUM)
			return "unknown reduction " + std::to_string(u32_at(p, 0)) + " (mean 0, sum 1)";
		return std::nullopt;
	case MCP_OP_CAST:
		if ((u32_at(p, 0) & ~MCP_CAST_BOOL) || u32_at(p, 4) != 0)
			return std::string("unknown cast flags (bool 1), or reserved is not 0");
		return std::nullopt;
	default:
		return std::nullopt;
	}
}

std::optional<std::string> check_shape(std::uint16_t op, std::span<const OpTensor> in,
				       const OpTensor &o, std::span<const std::byte> p,
				       bool *reason_param)
{
	const Shape os = shape_of(o);
	const auto param_bad = [&](std::string what) {
		if (reason_param)
			*reason_param = true;
		return what;
	};
	const auto all_f32 = [&]() -> std::optional<std::string> {
		for (unsigned k = 0; k < in.size(); k++)
			if (in[k].dtype != MCP_DTYPE_F32)
				return text(in[k], in_name(k)) + " is not f32";
		if (o.dtype != MCP_DTYPE_F32)
			return text(o, "the output") + " is not f32";
		return std::nullopt;
	};
	const auto want = [&](const Shape &s) -> std::optional<std::string> {
		if (same(s, os))
			return std::nullopt;
		return text(o, "the output") + " should be " + text(s);
	};
	switch (op) {
	case MCP_OP_UNARY:
	case MCP_OP_SOFTMAX_AXIS: {
		if (auto e = all_f32())
			return e;
		if (auto e = want(shape_of(in[0])))
			return e;
		if (op == MCP_OP_SOFTMAX_AXIS && u32_at(p, 0) >= std::max(1u, os.rank))
			return param_bad("axis " + std::to_string(u32_at(p, 0)) + " is past rank " +
					 std::to_string(os.rank));
		return std::nullopt;
	}
	case MCP_OP_POW:
	case MCP_OP_WHERE: {
		if (op == MCP_OP_POW) {
			if (auto e = all_f32())
				return e;
		} else {
			if (in[0].dtype != MCP_DTYPE_U8)
				return text(in[0], "the condition") + " is not u8";
			if (in[1].dtype != o.dtype || in[2].dtype != o.dtype)
				return text(in[1], "input 1") + " and " + text(in[2], "input 2") +
				       " must have the output's dtype " + dtype_name(o.dtype);
		}
		const auto s = bcast(in);
		if (!s) {
			std::string what = "the inputs do not broadcast:";
			for (unsigned k = 0; k < in.size(); k++)
				what += " " + text(shape_of(in[k]));
			return what;
		}
		return want(*s);
	}
	case MCP_OP_REDUCE: {
		if (auto e = all_f32())
			return e;
		const Shape s = shape_of(in[0]);
		const std::uint32_t axes = u32_at(p, 4);
		if (s.rank < 32 && (axes >> s.rank) != 0)
			return param_bad("axes mask " + std::to_string(axes) + " has bits past rank " +
					 std::to_string(s.rank));
		Shape keep = s, drop;
		for (unsigned k = 0; k < s.rank; k++) {
			if (axes >> k & 1)
				keep.d[k] = 1;
			else
				drop.d[drop.rank++] = s.d[k];
		}
		if (same(keep, os) || same(drop, os))
			return std::nullopt;
		return text(o, "the output") + " should be " + text(keep) + " (keepdims) or " +
		       text(drop);
	}
	case MCP_OP_CONCAT: {
		const unsigned axis = u32_at(p, 0);
		if (axis >= os.rank)
			return param_bad("axis " + std::to_string(axis) + " is past rank " +
					 std::to_string(os.rank));
		Shape sum = shape_of(in[0]);
		for (unsigned k = 0; k < in.size(); k++) {
			const Shape s = shape_of(in[k]);
			if (in[k].dtype != o.dtype)
				return text(in[k], in_name(k)) + " is not " + dtype_name(o.dtype);
			bool ok = s.rank == os.rank;
			for (unsigned j = 0; ok && j < s.rank; j++)
				ok = j == axis || s.d[j] == os.d[j];
			if (!ok)
				return text(in[k], in_name(k)) + " does not concatenate into " +
				       text(o, "the output") + " along axis " + std::to_string(axis);
			if (k)
				sum.d[axis] += s.d[axis];
		}
		return want(sum);
	}
	case MCP_OP_SLICE: {
		const Shape s = shape_of(in[0]);
		if (in[0].dtype != o.dtype || s.rank != os.rank)
			return text(in[0], "the input") + " and " + text(o, "the output") +
			       " differ in dtype or rank";
		for (unsigned k = 0; k < max_rank; k++) {
			std::int32_t start, step;
			std::memcpy(&start, p.data() + 4 * k, 4);
			std::memcpy(&step, p.data() + 24 + 4 * k, 4);
			if (k >= s.rank) {
				if (start || step)
					return param_bad("start and step past the rank must be 0");
				continue;
			}
			const std::int64_t last = start + static_cast<std::int64_t>(os.d[k] - 1) * step;
			if (step == 0)
				return param_bad("step of dim " + std::to_string(k) + " is 0");
			if (start < 0 || static_cast<std::uint64_t>(start) >= s.d[k] || last < 0 ||
			    static_cast<std::uint64_t>(last) >= s.d[k])
				return param_bad("dim " + std::to_string(k) + ": " + std::to_string(os.d[k]) +
						 " elements from " + std::to_string(start) + " by " +
						 std::to_string(step) + " leave 0.." +
						 std::to_string(s.d[k] - 1));
		}
		return std::nullopt;
	}
	case MCP_OP_GATHER: {
		const Shape s = shape_of(in[0]), ix = shape_of(in[1]);
		const unsigned axis = u32_at(p, 0);
		if (in[1].dtype != MCP_DTYPE_I32)
			return text(in[1], "the indices") + " are not i32";
		if (in[0].dtype != o.dtype)
			return text(in[0], "the data") + " and " + text(o, "the output") +
			       " differ in dtype";
		if (axis >= std::max(1u, s.rank))
			return param_bad("axis " + std::to_string(axis) + " is past rank " +
					 std::to_string(s.rank));
		if (s.rank + ix.rank - 1 > max_rank)
			return std::string("the output would have rank > 6");
		Shape w;
		for (unsigned k = 0; k < axis; k++)
			w.d[w.rank++] = s.d[k];
		for (unsigned k = 0; k < ix.rank; k++)
			w.d[w.rank++] = ix.d[k];
		for (unsigned k = axis + 1; k < s.rank; k++)
			w.d[w.rank++] = s.d[k];
		return want(w);
	}
	case MCP_OP_CAST:
		if ((u32_at(p, 0) & MCP_CAST_BOOL) && o.dtype != MCP_DTYPE_U8)
			return text(o, "the output") + " of a cast to bool is not u8";
		return want(shape_of(in[0]));
	default:
		return std::string("unknown operator");
	}
}

template <typename To>
To saturate(double v)
{
	if (std::isnan(v))
		return 0;
	v = std::trunc(v);
	return static_cast<To>(std::clamp(v, static_cast<double>(std::numeric_limits<To>::min()),
					  static_cast<double>(std::numeric_limits<To>::max())));
}

// One element of dtype @d at @p as a double, and back.
double load(std::uint8_t d, const std::byte *p)
{
	switch (d) {
	case MCP_DTYPE_F32: {
		float f;
		std::memcpy(&f, p, 4);
		return f;
	}
	case MCP_DTYPE_I8:
		return static_cast<double>(static_cast<std::int8_t>(*p));
	case MCP_DTYPE_U8:
		return static_cast<double>(static_cast<std::uint8_t>(*p));
	default: {
		std::int32_t v;
		std::memcpy(&v, p, 4);
		return v;
	}
	}
}

void store(std::uint8_t d, std::byte *p, double v)
{
	switch (d) {
	case MCP_DTYPE_F32: {
		const auto f = static_cast<float>(v);
		std::memcpy(p, &f, 4);
		break;
	}
	case MCP_DTYPE_I8:
		*p = static_cast<std::byte>(saturate<std::int8_t>(v));
		break;
	case MCP_DTYPE_U8:
		*p = static_cast<std::byte>(saturate<std::uint8_t>(v));
		break;
	default: {
		const auto i = saturate<std::int32_t>(v);
		std::memcpy(p, &i, 4);
		break;
	}
	}
}

bool overlaps(const OpTensor &a, const OpTensor &b)
{
	return a.data < b.data + b.bytes && b.data < a.data + a.bytes;
}

float *f32(const OpTensor &t)
{
	return reinterpret_cast<float *>(t.data);
}

int compute(std::uint16_t op, std::span<const OpTensor> in, const OpTensor &o,
	    std::span<const std::byte> p, std::byte *dst)
{
	const Shape os = shape_of(o);
	const std::size_t elem = dtype_size(o.dtype);
	switch (op) {
	case MCP_OP_UNARY: {
		const UnaryFn &fn = unary_table[u32_at(p, 0)];
		const double a = f32_at(p, 4), b = f32_at(p, 8);
		const float *x = f32(in[0]);
		float *y = reinterpret_cast<float *>(dst);
		for (std::uint64_t i = 0, n = os.elements(); i < n; i++)
			y[i] = static_cast<float>(fn.f(x[i], a, b));
		return 0;
	}
	case MCP_OP_POW:
	case MCP_OP_WHERE: {
		if (op == MCP_OP_POW) {
			std::uint64_t st[2][max_rank] = {};
			bcast_strides(shape_of(in[0]), os, st[0]);
			bcast_strides(shape_of(in[1]), os, st[1]);
			const float *a = f32(in[0]), *b = f32(in[1]);
			float *y = reinterpret_cast<float *>(dst);
			walk(os, st, [&](std::uint64_t i, const std::uint64_t *off) {
				y[i] = std::pow(a[off[0]], b[off[1]]);
			});
			return 0;
		}
		std::uint64_t st[3][max_rank] = {};
		for (unsigned k = 0; k < 3; k++)
			bcast_strides(shape_of(in[k]), os, st[k]);
		const auto *c = reinterpret_cast<const std::uint8_t *>(in[0].data);
		walk(os, st, [&](std::uint64_t i, const std::uint64_t *off) {
			const OpTensor &from = c[off[0]] ? in[1] : in[2];
			std::memcpy(dst + i * elem, from.data + off[c[off[0]] ? 1 : 2] * elem, elem);
		});
		return 0;
	}
	case MCP_OP_SOFTMAX_AXIS: {
		std::uint64_t outer, d, inner;
		softmax_split(os, u32_at(p, 0), u32_at(p, 4) & MCP_AXIS_COERCE, outer, d, inner);
		softmax(f32(in[0]), reinterpret_cast<float *>(dst), outer, d, inner);
		return 0;
	}
	case MCP_OP_REDUCE:
		reduce(f32(in[0]), shape_of(in[0]), u32_at(p, 4), u32_at(p, 0) == MCP_REDUCE_MEAN,
		       reinterpret_cast<float *>(dst));
		return 0;
	case MCP_OP_CONCAT: {
		const std::byte *parts[4];
		Shape shapes[4];
		for (unsigned k = 0; k < in.size(); k++) {
			parts[k] = in[k].data;
			shapes[k] = shape_of(in[k]);
		}
		concat(std::span<const std::byte *const>(parts, in.size()), shapes, u32_at(p, 0), elem,
		       dst);
		return 0;
	}
	case MCP_OP_SLICE: {
		std::int32_t start[max_rank], step[max_rank];
		std::memcpy(start, p.data(), sizeof(start));
		std::memcpy(step, p.data() + sizeof(start), sizeof(step));
		slice(in[0].data, shape_of(in[0]), start, step, os, elem, dst);
		return 0;
	}
	case MCP_OP_GATHER: {
		const auto *idx = reinterpret_cast<const std::int32_t *>(in[1].data);
		return gather(in[0].data, shape_of(in[0]), u32_at(p, 0), idx, shape_of(in[1]).elements(),
			      elem, dst)
			       ? 0
			       : -EINVAL;
	}
	case MCP_OP_CAST: {
		const bool to_bool = u32_at(p, 0) & MCP_CAST_BOOL;
		const std::size_t ielem = dtype_size(in[0].dtype);
		for (std::uint64_t i = 0, n = os.elements(); i < n; i++) {
			const double v = load(in[0].dtype, in[0].data + i * ielem);
			store(o.dtype, dst + i * elem, to_bool ? (v != 0 || std::isnan(v)) : v);
		}
		return 0;
	}
	default:
		return -EOPNOTSUPP;
	}
}

} // namespace

bool known(std::uint16_t op) noexcept
{
	return op >= MCP_OP_UNARY && op <= MCP_OP_CAST;
}

const UnaryFn *unary_fn(std::uint32_t fn) noexcept
{
	return fn < MCP_UNARY_COUNT ? &unary_table[fn] : nullptr;
}

std::optional<std::string> check(std::uint16_t op, std::span<const OpTensor> in,
				 std::span<const OpTensor> out, std::span<const std::byte> param,
				 Stage stage, bool *reason_param)
{
	switch (stage) {
	case Stage::arity:
		return check_arity(op, in.size(), out.size());
	case Stage::param:
		return check_param(op, param);
	default:
		return check_shape(op, in, out[0], param, reason_param);
	}
}

int run(std::uint16_t op, std::span<const OpTensor> in, const OpTensor &out,
	std::span<const std::byte> param) noexcept
{
	try {
		const std::span<const OpTensor> outs(&out, 1);
		for (Stage s : {Stage::arity, Stage::param, Stage::shape})
			if (check(op, in, outs, param, s))
				return -EINVAL;
		for (const OpTensor &t : in)
			if (t.layout != MCP_LAYOUT_DENSE)
				return -EINVAL;
		if (out.layout != MCP_LAYOUT_DENSE)
			return -EINVAL;
		// Element by element (in place is fine) or through scratch
		// memory when the output overlaps an input.
		const bool elementwise = op == MCP_OP_UNARY || op == MCP_OP_POW ||
					 op == MCP_OP_WHERE || op == MCP_OP_SOFTMAX_AXIS ||
					 (op == MCP_OP_CAST && dtype_size(in[0].dtype) == dtype_size(out.dtype));
		bool overlap = false;
		for (const OpTensor &t : in)
			overlap = overlap || overlaps(t, out);
		if (!overlap || elementwise)
			return compute(op, in, out, param, out.data);
		std::vector<std::byte> scratch(out.bytes);
		const int err = compute(op, in, out, param, scratch.data());
		if (err == 0)
			std::memcpy(out.data, scratch.data(), out.bytes);
		return err;
	} catch (const std::bad_alloc &) {
		return -ENOMEM;
	} catch (const std::length_error &) {
		return -ENOMEM;
	}
}

} // namespace mcp::detail::ew
