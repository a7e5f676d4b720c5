// SPDX-License-Identifier: LGPL-2.1-or-later
// The ONNX lowering of the elementwise, reduce and shape operators
// (onnx_import_ops.hpp): each op is worked out once from its inputs'
// shapes and attributes, then either computed at import (every input a
// constant: the loops of graph_ops_elementwise.hpp on doubles) or emitted
// as one graph operator.
#include <cmath>
#include <cstring>
#include <limits>
#include <set>

#include "graph_ops_elementwise.hpp"
#include "onnx_import_ops.hpp"

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wshadow"
#include <linux/mcp.h>
#pragma GCC diagnostic pop

namespace mcp::onnx::ops {

namespace {

using ::onnx::AttributeProto;
using ::onnx::NodeProto;
using ::onnx::TensorProto;
namespace ew = detail::ew;

ew::Shape shape(const Dims &d)
{
	ew::Shape s;
	s.rank = static_cast<unsigned>(d.size());
	for (unsigned k = 0; k < s.rank && k < ew::max_rank; k++)
		s.d[k] = static_cast<std::uint64_t>(d[k]);
	return s;
}

const AttributeProto *attr(const NodeProto &n, const char *name)
{
	for (const auto &a : n.attribute())
		if (a.name() == name)
			return &a;
	return nullptr;
}

std::int64_t attr_i(const NodeProto &n, const char *name, std::int64_t def)
{
	const AttributeProto *a = attr(n, name);
	return a ? a->i() : def;
}

float attr_f(const NodeProto &n, const char *name, float def)
{
	const AttributeProto *a = attr(n, name);
	return a ? a->f() : def;
}

const char *elem_name(std::int32_t e)
{
	return TensorProto::DataType_Name(static_cast<TensorProto::DataType>(e)).c_str();
}

template <typename T>
std::vector<std::byte> bytes_of(const T &v)
{
	std::vector<std::byte> b(sizeof(v));
	std::memcpy(b.data(), &v, sizeof(v));
	return b;
}

std::uint32_t f32_bits(float f)
{
	std::uint32_t u;
	std::memcpy(&u, &f, 4);
	return u;
}

// Rounds a folded value to its element type, as the graph would hold it.
double as_elem(std::int32_t elem, double v)
{
	switch (elem) {
	case TensorProto::FLOAT:
		return static_cast<float>(v);
	case TensorProto::BOOL:
		return v != 0 || std::isnan(v) ? 1 : 0;
	case TensorProto::DOUBLE:
		return v;
	default: {
		if (std::isnan(v))
			return 0;
		v = std::trunc(v);
		double lo = -9.2e18, hi = 9.2e18;
		if (elem == TensorProto::INT8)
			lo = -128, hi = 127;
		else if (elem == TensorProto::UINT8)
			lo = 0, hi = 255;
		else if (elem == TensorProto::INT32)
			lo = -2147483648.0, hi = 2147483647.0;
		return std::clamp(v, lo, hi);
	}
	}
}

class Lowering {
public:
	Lowering(Context &c, const NodeProto &n, bool fold_only)
		: c_(c), n_(n), op_(n.op_type()), fold_only_(fold_only)
	{
	}
	bool run();

private:
	bool have(int k) const { return n_.input_size() > k && !n_.input(k).empty(); }
	const Value *cin(int k) { return have(k) ? c_.cval(n_.input(k)) : nullptr; }
	Value &in(int k) { return c_.val(n_.input(k)); }
	bool all_const()
	{
		for (int k = 0; k < n_.input_size(); k++)
			if (!n_.input(k).empty() && !c_.cval(n_.input(k)))
				return false;
		return true;
	}
	// Refused (run-time lowering only): listed, outputs defined so the
	// nodes after it are looked at too.  True: "handled".
	bool refuse(const std::string &why)
	{
		if (fold_only_)
			return false;
		c_.unsupported(n_, why);
		for (const auto &o : n_.output())
			c_.define(o, {});
		return true;
	}
	// A constant input @k as a scalar; none when it is not one value.
	std::optional<double> scalar(int k)
	{
		const Value *v = cin(k);
		if (!v || v->data.size() != 1)
			return std::nullopt;
		return v->data[0];
	}
	std::optional<std::int64_t> axis(std::int64_t a, std::size_t rank)
	{
		const auto r = static_cast<std::int64_t>(rank);
		if (a < -r || a >= std::max<std::int64_t>(r, 1))
			return std::nullopt;
		return a < 0 ? a + r : a;
	}
	// The run-time inputs' dtypes and ranks MCP can hold: else refused.
	bool inputs_ok(std::string &why)
	{
		for (int k = 0; k < n_.input_size(); k++) {
			if (n_.input(k).empty())
				continue;
			const Value &v = in(k);
			if (v.dims.size() > ew::max_rank) {
				why = "input '" + n_.input(k) + "' has rank > 6";
				return false;
			}
			// Empty constants fold (a shape sub-graph may hold one).
			for (std::int64_t d : v.dims)
				if (d <= 0 && !all_const()) {
					why = "input '" + n_.input(k) + "' " + dims_str(v.dims) + " is empty";
					return false;
				}
		}
		return true;
	}
	// Emits the node (one output), or folds it with @compute(out values)
	// when every input is constant.
	template <typename Fold>
	bool finish(Op op, std::vector<std::string> ins, Dims od, std::int32_t elem,
		    std::vector<std::byte> param, bool inplace, Fold fold)
	{
		if (all_const()) {
			Value v;
			v.is_const = true;
			v.elem = elem;
			v.dims = od;
			v.data.resize(static_cast<std::size_t>(elements(od)));
			fold(v.data.data());
			for (double &d : v.data)
				d = as_elem(elem, d);
			c_.set_value(n_.output(0), std::move(v));
			return true;
		}
		if (fold_only_)
			return false;
		for (const auto &i : ins) {
			const Value &v = c_.val(i);
			if (!mcp_dtype(v.elem))
				return refuse("input '" + i + "' is " + elem_name(v.elem) +
					      ": MCP tensors are f32, i8, u8 (and bool), i32");
		}
		c_.define(n_.output(0), od);
		c_.val(n_.output(0)).elem = elem;
		c_.emit({op, EngineClass::worker, std::move(ins), n_.output(0), std::move(param),
			 c_.node_name(n_), inplace});
		return true;
	}
	// A constant input converted to @elem (e.g. INT64 indices to INT32)
	// under a new name.
	std::string converted(int k, std::int32_t elem, const char *suffix)
	{
		const Value &v = in(k);
		if (v.elem == elem || !v.is_const)
			return n_.input(k);
		Value w = v;
		w.elem = elem;
		for (double &d : w.data)
			d = as_elem(elem, d);
		const std::string name = c_.node_name(n_) + suffix;
		c_.set_value(name, std::move(w));
		return name;
	}

	bool unary();
	bool unary_fn(std::uint32_t fn, float a, float b);
	bool pow();
	bool softmax();
	bool reduce();
	bool concat();
	bool slice();
	bool gather();
	bool where();
	bool cast();

	Context &c_;
	const NodeProto &n_;
	const std::string &op_;
	bool fold_only_;
};

bool Lowering::run()
{
	std::string why;
	if (!inputs_ok(why))
		return refuse(why);
	if (op_ == "Pow")
		return pow();
	if (op_ == "Softmax")
		return softmax();
	if (op_ == "ReduceMean" || op_ == "ReduceSum")
		return reduce();
	if (op_ == "Concat")
		return concat();
	if (op_ == "Slice")
		return slice();
	if (op_ == "Gather")
		return gather();
	if (op_ == "Where")
		return where();
	if (op_ == "Cast")
		return cast();
	return unary();
}

bool Lowering::unary()
{
	static const struct {
		const char *op;
		std::uint32_t fn;
	} table[] = {
		{"Sigmoid", MCP_UNARY_SIGMOID}, {"HardSigmoid", MCP_UNARY_HARDSIGMOID},
		{"HardSwish", MCP_UNARY_HARDSWISH}, {"Tanh", MCP_UNARY_TANH},
		{"Exp", MCP_UNARY_EXP}, {"Sqrt", MCP_UNARY_SQRT}, {"Erf", MCP_UNARY_ERF},
		{"Clip", MCP_UNARY_CLIP},
	};
	std::uint32_t fn = MCP_UNARY_COUNT;
	for (const auto &t : table)
		if (op_ == t.op)
			fn = t.fn;
	if (fn == MCP_UNARY_COUNT)
		return false;
	float a = 0, b = 0;
	if (fn == MCP_UNARY_HARDSIGMOID) {
		a = attr_f(n_, "alpha", 0.2f);
		b = attr_f(n_, "beta", 0.5f);
	} else if (fn == MCP_UNARY_CLIP) {
		a = -std::numeric_limits<float>::infinity();
		b = std::numeric_limits<float>::infinity();
		if (c_.opset() < 11) {
			a = attr_f(n_, "min", a);
			b = attr_f(n_, "max", b);
		} else {
			for (int k = 1; k <= 2; k++) {
				if (!have(k))
					continue;
				const auto v = scalar(k);
				if (!v)
					return refuse(std::string(k == 1 ? "min" : "max") +
						      " is not a constant scalar");
				(k == 1 ? a : b) = static_cast<float>(*v);
			}
		}
		if (a > b)
			return refuse("min " + std::to_string(a) + " > max " + std::to_string(b));
	}
	return unary_fn(fn, a, b);
}

bool Lowering::unary_fn(std::uint32_t fn, float a, float b)
{
	const Value &x = in(0);
	if (!x.is_const && x.elem != TensorProto::FLOAT)
		return refuse("input '" + n_.input(0) + "' is " + elem_name(x.elem) + ", not FLOAT");
	struct mcp_graph_unary p = {fn, f32_bits(a), f32_bits(b), 0};
	const auto *f = ew::unary_fn(fn);
	return finish(Op::unary, {n_.input(0)}, x.dims, x.elem, bytes_of(p), true, [&](double *y) {
		for (std::size_t i = 0; i < x.data.size(); i++)
			y[i] = f->f(x.data[i], a, b);
	});
}

// A constant exponent of one value that does not change the shape: UNARY
// pow; else POW with numpy broadcasting.
bool Lowering::pow()
{
	const Value &x = in(0), &e = in(1);
	const auto od = detail::numpy_broadcast(std::span<const std::int64_t>(x.dims),
						std::span<const std::int64_t>(e.dims));
	if (!od)
		return refuse("the exponent " + dims_str(e.dims) + " does not broadcast to the base " +
			      dims_str(x.dims));
	if (const auto v = scalar(1); v && *od == x.dims && !x.is_const)
		return unary_fn(MCP_UNARY_POW, static_cast<float>(*v), 0.0f);
	if (!e.is_const && e.elem != TensorProto::FLOAT)
		return refuse("the run-time exponent '" + n_.input(1) + "' is " + elem_name(e.elem) +
			      ", not FLOAT");
	if (!x.is_const && x.elem != TensorProto::FLOAT)
		return refuse("input '" + n_.input(0) + "' is " + elem_name(x.elem) + ", not FLOAT");
	const std::string en = converted(1, TensorProto::FLOAT, ".exponent");
	const Dims xd = x.dims, ed = e.dims;
	return finish(Op::pow, {n_.input(0), en}, *od, x.elem, {}, *od == xd, [&](double *y) {
		for (std::size_t i = 0; i < static_cast<std::size_t>(elements(*od)); i++)
			y[i] = std::pow(x.data[bindex(xd, *od, i)], e.data[bindex(ed, *od, i)]);
	});
}

bool Lowering::softmax()
{
	const Value &x = in(0);
	const bool coerce = c_.opset() < 13;
	const auto a = axis(attr_i(n_, "axis", coerce ? 1 : -1), x.dims.size());
	if (!a)
		return refuse("axis " + std::to_string(attr_i(n_, "axis", coerce ? 1 : -1)) +
			      " is outside rank " + std::to_string(x.dims.size()));
	// Over the last axis (either semantics): map_node()'s SOFTMAX.
	if (!x.is_const && *a + 1 == static_cast<std::int64_t>(x.dims.size()))
		return false;
	if (x.dims.empty() && !x.is_const)
		return false;
	if (!x.is_const && x.elem != TensorProto::FLOAT)
		return refuse("input '" + n_.input(0) + "' is " + elem_name(x.elem) + ", not FLOAT");
	struct mcp_graph_axis p = {static_cast<std::uint32_t>(*a), coerce ? MCP_AXIS_COERCE : 0u};
	return finish(Op::softmax_axis, {n_.input(0)}, x.dims, x.elem, bytes_of(p), true,
		      [&](double *y) {
			      std::uint64_t outer, d, inner;
			      ew::softmax_split(shape(x.dims), p.axis, coerce, outer, d, inner);
			      ew::softmax(x.data.data(), y, outer, d, inner);
		      });
}

bool Lowering::reduce()
{
	const Value &x = in(0);
	Dims axes;
	// Axes: an input from ReduceSum 13 (ReduceMean 18), else the attribute.
	if (have(1)) {
		const Value *a = cin(1);
		if (!a)
			return refuse("axes are not a constant");
		for (double d : a->data)
			axes.push_back(static_cast<std::int64_t>(d));
	} else if (const AttributeProto *a = attr(n_, "axes")) {
		axes.assign(a->ints().begin(), a->ints().end());
	}
	const bool keep = attr_i(n_, "keepdims", 1) != 0;
	std::uint32_t mask = 0;
	if (axes.empty()) {
		if (attr_i(n_, "noop_with_empty_axes", 0)) {
			if (x.is_const) {
				c_.set_value(n_.output(0), x);
				return true;
			}
			if (fold_only_)
				return false;
			c_.view(n_.output(0), n_.input(0), x.dims);
			return true;
		}
		mask = (1U << x.dims.size()) - 1;
	}
	for (std::int64_t v : axes) {
		const auto k = axis(v, x.dims.size());
		if (!k || x.dims.empty())
			return refuse("axis " + std::to_string(v) + " is outside rank " +
				      std::to_string(x.dims.size()));
		mask |= 1U << *k;
	}
	Dims od;
	for (std::size_t k = 0; k < x.dims.size(); k++) {
		if (!(mask >> k & 1))
			od.push_back(x.dims[k]);
		else if (keep)
			od.push_back(1);
	}
	if (!x.is_const && x.elem != TensorProto::FLOAT)
		return refuse("input '" + n_.input(0) + "' is " + elem_name(x.elem) + ", not FLOAT");
	const bool mean = op_ == "ReduceMean";
	struct mcp_graph_reduce p = {static_cast<std::uint32_t>(mean ? MCP_REDUCE_MEAN : MCP_REDUCE_SUM), mask};
	return finish(Op::reduce, {n_.input(0)}, od, x.elem, bytes_of(p), false, [&](double *y) {
		ew::reduce(x.data.data(), shape(x.dims), mask, mean, y);
	});
}

// Up to 4 inputs in one CONCAT; more chain through temporaries.
bool Lowering::concat()
{
	const Value &x0 = in(0);
	const auto a = axis(attr_i(n_, "axis", 0), x0.dims.size());
	if (!a || x0.dims.empty())
		return refuse("axis " + std::to_string(attr_i(n_, "axis", 0)) + " is outside rank " +
			      std::to_string(x0.dims.size()));
	const auto ax = static_cast<std::size_t>(*a);
	Dims od = x0.dims;
	od[ax] = 0;
	std::vector<std::string> ins;
	for (int k = 0; k < n_.input_size(); k++) {
		if (!have(k))
			continue;
		const Value &v = in(k);
		bool ok = v.dims.size() == od.size() && v.elem == x0.elem;
		for (std::size_t j = 0; ok && j < od.size(); j++)
			ok = j == ax || v.dims[j] == od[j];
		if (!ok)
			return refuse("input '" + n_.input(k) + "' " + elem_name(v.elem) + dims_str(v.dims) +
				      " does not concatenate with " + elem_name(x0.elem) +
				      dims_str(x0.dims) + " on axis " + std::to_string(ax));
		od[ax] += v.dims[ax];
		ins.push_back(n_.input(k));
	}
	struct mcp_graph_axis p = {static_cast<std::uint32_t>(ax), 0};
	const auto fold = [&](double *y) {
		std::vector<const double *> parts;
		std::vector<ew::Shape> shapes;
		for (const auto &i : ins) {
			parts.push_back(c_.val(i).data.data());
			shapes.push_back(shape(c_.val(i).dims));
		}
		ew::concat(std::span<const double *const>(parts), shapes.data(), p.axis, sizeof(double),
			   reinterpret_cast<std::byte *>(y));
	};
	if (all_const() || fold_only_ || ins.size() <= 4)
		return finish(Op::concat, ins, od, x0.elem, bytes_of(p), false, fold);
	// Chained: the first four, then that and the next three, ...
	std::string acc;
	std::size_t k = 0;
	for (int step = 0; k < ins.size(); step++) {
		std::vector<std::string> part;
		if (!acc.empty())
			part.push_back(acc);
		while (part.size() < 4 && k < ins.size())
			part.push_back(ins[k++]);
		Dims pd = c_.val(part[0]).dims;
		pd[ax] = 0;
		for (const auto &i : part)
			pd[ax] += c_.val(i).dims[ax];
		const bool last = k == ins.size();
		const std::string out = last ? n_.output(0) : c_.node_name(n_) + ".part" + std::to_string(step);
		for (const auto &i : part)
			if (!mcp_dtype(c_.val(i).elem))
				return refuse("input '" + i + "' is " + elem_name(c_.val(i).elem) +
					      ": MCP tensors are f32, i8, u8 (and bool), i32");
		c_.define(out, pd);
		c_.val(out).elem = x0.elem;
		c_.emit({Op::concat, EngineClass::worker, part, out, bytes_of(p),
			 c_.node_name(n_) + (last ? "" : ".part" + std::to_string(step))});
		acc = out;
	}
	return true;
}

bool Lowering::slice()
{
	const Value &x = in(0);
	const std::size_t rank = x.dims.size();
	Dims starts, ends, axes, steps;
	if (c_.opset() < 10) {
		for (auto [name, dst] : {std::pair{"starts", &starts}, {"ends", &ends}, {"axes", &axes}})
			if (const AttributeProto *a = attr(n_, name))
				dst->assign(a->ints().begin(), a->ints().end());
	} else {
		Dims *dst[] = {&starts, &ends, &axes, &steps};
		for (int k = 1; k <= 4; k++) {
			if (!have(k))
				continue;
			const Value *v = cin(k);
			if (!v)
				return refuse(std::string(k == 1 ? "starts" : k == 2 ? "ends" : k == 3 ? "axes" : "steps") +
					      " are not constants");
			for (double d : v->data)
				dst[k - 1]->push_back(static_cast<std::int64_t>(
					std::clamp(d, -9.2e18, 9.2e18)));
		}
	}
	if (axes.empty())
		for (std::size_t k = 0; k < starts.size(); k++)
			axes.push_back(static_cast<std::int64_t>(k));
	if (steps.empty())
		steps.assign(starts.size(), 1);
	if (starts.size() != ends.size() || axes.size() != starts.size() || steps.size() != starts.size())
		return refuse("starts, ends, axes and steps differ in length");
	std::int32_t start[ew::max_rank] = {}, step[ew::max_rank] = {};
	Dims od = x.dims;
	for (std::size_t k = 0; k < rank; k++)
		step[k] = 1;
	std::set<std::int64_t> seen;
	for (std::size_t j = 0; j < starts.size(); j++) {
		const auto a = axis(axes[j], rank);
		if (!a || rank == 0 || !seen.insert(*a).second)
			return refuse("axis " + std::to_string(axes[j]) + " is outside rank " +
				      std::to_string(rank) + " or repeated");
		const std::int64_t d = x.dims[static_cast<std::size_t>(*a)], st = steps[j];
		if (st == 0) {
			if (fold_only_ && !all_const())
				return false;
			c_.fail_node(n_, "step 0 on axis " + std::to_string(*a));
		}
		std::int64_t s = starts[j], e = ends[j], count;
		s = s < 0 ? s + d : s;
		e = e < 0 ? e + d : e;
		if (st > 0) {
			s = std::clamp<std::int64_t>(s, 0, d);
			e = std::clamp<std::int64_t>(e, 0, d);
			count = e > s ? (e - s + st - 1) / st : 0;
		} else {
			s = std::clamp<std::int64_t>(s, 0, d - 1);
			e = std::clamp<std::int64_t>(e, -1, d - 1);
			count = s > e ? (s - e + (-st) - 1) / (-st) : 0;
		}
		if (count == 0 && !all_const())
			return refuse("axis " + std::to_string(*a) + " slices to 0 elements (empty "
				      "tensors are not supported)");
		if (st < std::numeric_limits<std::int32_t>::min() || st > std::numeric_limits<std::int32_t>::max() ||
		    s > std::numeric_limits<std::int32_t>::max())
			return refuse("start or step past 32 bits");
		start[*a] = static_cast<std::int32_t>(s);
		step[*a] = count == 1 ? 1 : static_cast<std::int32_t>(st);
		od[static_cast<std::size_t>(*a)] = count;
	}
	struct mcp_graph_slice p = {};
	for (std::size_t k = 0; k < rank; k++) {
		p.start[k] = start[k];
		p.step[k] = step[k];
	}
	return finish(Op::slice, {n_.input(0)}, od, x.elem, bytes_of(p), false, [&](double *y) {
		ew::slice(reinterpret_cast<const std::byte *>(x.data.data()), shape(x.dims), start, step,
			  shape(od), sizeof(double), reinterpret_cast<std::byte *>(y));
	});
}

bool Lowering::gather()
{
	const Value &x = in(0), &idx = in(1);
	const auto a = axis(attr_i(n_, "axis", 0), x.dims.size());
	if (!a || x.dims.empty())
		return refuse("axis " + std::to_string(attr_i(n_, "axis", 0)) + " is outside rank " +
			      std::to_string(x.dims.size()));
	const auto ax = static_cast<std::size_t>(*a);
	const std::int64_t d = x.dims[ax];
	if (idx.is_const)
		for (double v : idx.data)
			if (v < static_cast<double>(-d) || v >= static_cast<double>(d))
				c_.fail_node(n_, "index " + std::to_string(static_cast<std::int64_t>(v)) +
							 " is outside -" + std::to_string(d) + ".." +
							 std::to_string(d - 1) + " (axis " +
							 std::to_string(ax) + " of " + dims_str(x.dims) + ")");
	if (!idx.is_const && idx.elem != TensorProto::INT32)
		return refuse("run-time indices '" + n_.input(1) + "' are " + elem_name(idx.elem) +
			      ": MCP takes constant indices, or run-time INT32 ones");
	Dims od(x.dims.begin(), x.dims.begin() + *a);
	od.insert(od.end(), idx.dims.begin(), idx.dims.end());
	od.insert(od.end(), x.dims.begin() + *a + 1, x.dims.end());
	if (od.size() > ew::max_rank)
		return refuse("the output " + dims_str(od) + " has rank > 6");
	struct mcp_graph_axis p = {static_cast<std::uint32_t>(ax), 0};
	const auto fold = [&](double *y) {
		ew::gather(reinterpret_cast<const std::byte *>(x.data.data()), shape(x.dims), p.axis,
			   idx.data.data(), idx.data.size(), sizeof(double), reinterpret_cast<std::byte *>(y));
	};
	if (all_const() || fold_only_)
		return finish(Op::gather, {}, od, x.elem, {}, false, fold);
	const std::string in_idx = converted(1, TensorProto::INT32, ".indices");
	return finish(Op::gather, {n_.input(0), in_idx}, od, x.elem, bytes_of(p), false, fold);
}

bool Lowering::where()
{
	const Value &cnd = in(0), &x = in(1), &y = in(2);
	Dims od = cnd.dims;
	for (const Value *v : {&x, &y}) {
		auto b = detail::numpy_broadcast(std::span<const std::int64_t>(od),
						 std::span<const std::int64_t>(v->dims));
		if (!b)
			return refuse("condition " + dims_str(cnd.dims) + ", X " + dims_str(x.dims) +
				      " and Y " + dims_str(y.dims) + " do not broadcast");
		od = *b;
	}
	if (x.elem != y.elem)
		return refuse("X and Y differ in element type");
	const Dims cd = cnd.dims, xd = x.dims, yd = y.dims;
	const auto fold = [&](double *r) {
		for (std::size_t i = 0; i < static_cast<std::size_t>(elements(od)); i++)
			r[i] = cnd.data[bindex(cd, od, i)] != 0 ? x.data[bindex(xd, od, i)]
								: y.data[bindex(yd, od, i)];
	};
	if (all_const() || fold_only_)
		return finish(Op::where, {}, od, x.elem, {}, false, fold);
	if (!cnd.is_const && cnd.elem != TensorProto::BOOL && cnd.elem != TensorProto::UINT8)
		return refuse("the condition is " + std::string(elem_name(cnd.elem)));
	const std::string cn = converted(0, TensorProto::BOOL, ".cond");
	return finish(Op::where, {cn, n_.input(1), n_.input(2)}, od, x.elem, {}, false, fold);
}

bool Lowering::cast()
{
	const Value &x = in(0);
	const auto to = static_cast<std::int32_t>(attr_i(n_, "to", TensorProto::FLOAT));
	if (x.is_const) {
		Value v = x;
		v.elem = to;
		for (double &d : v.data)
			d = as_elem(to, d);
		c_.set_value(n_.output(0), std::move(v));
		return true;
	}
	if (fold_only_)
		return false;
	// FLOAT to FLOAT: a view (map_node()).
	if (to == TensorProto::FLOAT && x.elem == TensorProto::FLOAT)
		return false;
	if (!mcp_dtype(to))
		return refuse(std::string("Cast to ") + elem_name(to) +
			      ": MCP tensors are f32, i8, u8 (and bool), i32");
	if (!mcp_dtype(x.elem))
		return refuse(std::string("Cast from ") + elem_name(x.elem) +
			      ": MCP tensors are f32, i8, u8 (and bool), i32");
	struct mcp_graph_cast p = {to == TensorProto::BOOL ? MCP_CAST_BOOL : 0u, 0};
	return finish(Op::cast, {n_.input(0)}, x.dims, to, bytes_of(p), false, [](double *) {});
}

} // namespace

std::optional<DType> mcp_dtype(std::int32_t elem) noexcept
{
	switch (elem) {
	case TensorProto::FLOAT:
		return DType::f32;
	case TensorProto::INT8:
		return DType::i8;
	case TensorProto::UINT8:
	case TensorProto::BOOL:
		return DType::u8;
	case TensorProto::INT32:
		return DType::i32;
	default:
		return std::nullopt;
	}
}

bool lower(Context &c, const NodeProto &n, bool fold_only)
{
	static const std::set<std::string> ops = {
		"Sigmoid", "HardSigmoid", "HardSwish", "Tanh", "Exp", "Sqrt", "Erf", "Clip", "Pow",
		"Softmax", "ReduceMean", "ReduceSum", "Concat", "Slice", "Gather", "Where", "Cast"};
	if (!ops.count(n.op_type()) || n.input_size() == 0 || n.output_size() == 0)
		return false;
	if (fold_only)
		for (const auto &i : n.input())
			if (!i.empty() && !c.cval(i))
				return false;
	Lowering l(c, n, fold_only);
	return l.run();
}

} // namespace mcp::onnx::ops
