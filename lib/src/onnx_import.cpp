// SPDX-License-Identifier: LGPL-2.1-or-later
// mcp::onnx::import(): an ONNX model (Debian's libonnx, the ONNX_ML build)
// to a GraphDef.  Four steps: read and check (opset, the ONNX checker,
// shape inference with the input dims fixed); map each node to graph
// operators, views or import-time constants, fusing decomposed LayerNorm,
// Erf-GELU and MatMul+bias (every unsupported node is collected, and the
// import refused with all of them listed); plan storage (graph inputs and
// outputs in their own buffers, initializers in one const buffer filled
// from the data section, activations in one buffer where a node whose
// input dies with it writes over it in place); build and validate.
#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <fstream>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <unordered_map>
#include <vector>

#include <mcp/onnx.hpp>

#include "graph_internal.hpp"
#include "graph_ops.hpp"
#include "onnx_import_ops.hpp"

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wshadow"
#pragma GCC diagnostic ignored "-Wconversion"
#pragma GCC diagnostic ignored "-Wpedantic"
#include <onnx/checker.h>
#include <onnx/defs/schema.h>
#include <onnx/onnx-ml.pb.h>
#include <onnx/shape_inference/implementation.h>
#pragma GCC diagnostic pop

namespace mcp::onnx {

namespace {

using ::onnx::AttributeProto;
using ::onnx::ModelProto;
using ::onnx::NodeProto;
using ::onnx::TensorProto;

using ops::bindex;
using ops::Dims;
using ops::dims_str;
using ops::elements;
using ops::PNode;
using ops::Value;

struct Unsupported {
	std::string name, op, why;
};

class Importer final : public ops::Context {
public:
	Importer(std::string path, const ImportOptions &opts) : path_(std::move(path)), opts_(opts) {}
	GraphDef run(ImportStats *stats);

	// ops::Context (the rest below)
	std::int64_t opset() const override { return opset_; }
	[[noreturn]] void fail_node(const NodeProto &n, const std::string &what) const override
	{
		fail("node '" + node_name(n) + "' (" + n.op_type() + "): " + what);
	}
	void set_value(const std::string &name, Value v) override { values_[name] = std::move(v); }

private:
	[[noreturn]] void fail(const std::string &what) const
	{
		throw Error(EINVAL, path_ + ": " + what);
	}
	void read();
	void fix_inputs();
	void check();
	void load_values();
	void map_nodes();
	bool fold(const NodeProto &n);
	void map_node(std::size_t i);
	bool fuse_layernorm(std::size_t i);
	bool fuse_gelu(std::size_t i);
	// The CNN operators (onnx_import_conv.inc).
	bool map_cnn(const NodeProto &n);
	std::optional<std::string> window_attrs(const NodeProto &n, const Dims &kernel,
						struct Window &w) const;
	std::string fuse_activation(const std::string &v, struct mcp_graph_conv &p);
	bool bn_affine(const NodeProto &bn, std::int64_t c, std::vector<double> &scale,
		       std::vector<double> &shift);
	std::string add_const(const std::string &name, Dims dims, std::vector<double> data);
	GraphDef build(ImportStats *stats);

	std::string node_name(const NodeProto &n) const override
	{
		return n.name().empty() ? n.op_type() + "_" + std::to_string(index_of(&n)) : n.name();
	}
	const ::onnx::GraphProto &g() const { return model_.graph(); }
	Value &val(const std::string &name) override
	{
		auto it = values_.find(name);
		if (it == values_.end())
			fail("tensor '" + name + "' is used but never defined");
		return it->second;
	}
	bool have(const NodeProto &n, int k) const
	{
		return n.input_size() > k && !n.input(k).empty();
	}
	const Value *cval(const std::string &name) override
	{
		Value &v = val(name);
		return v.is_const ? &v : nullptr;
	}
	std::optional<double> scalar(const std::string &name)
	{
		const Value *v = cval(name);
		if (!v || v->data.size() != 1)
			return std::nullopt;
		return v->data[0];
	}
	const AttributeProto *attr(const NodeProto &n, const char *name) const
	{
		for (const auto &a : n.attribute())
			if (a.name() == name)
				return &a;
		return nullptr;
	}
	std::int64_t attr_i(const NodeProto &n, const char *name, std::int64_t def) const
	{
		const AttributeProto *a = attr(n, name);
		return a ? a->i() : def;
	}
	float attr_f(const NodeProto &n, const char *name, float def) const
	{
		const AttributeProto *a = attr(n, name);
		return a ? a->f() : def;
	}
	Dims attr_ints(const NodeProto &n, const char *name) const
	{
		const AttributeProto *a = attr(n, name);
		return a ? Dims(a->ints().begin(), a->ints().end()) : Dims{};
	}
	void unsupported(const NodeProto &n, const std::string &why) override
	{
		bad_.push_back({node_name(n), n.op_type(), why});
	}
	std::vector<std::size_t> consumers(const std::string &v) const
	{
		auto it = consumers_.find(v);
		return it == consumers_.end() ? std::vector<std::size_t>{} : it->second;
	}
	// The node consuming @v when it is its only consumer and @v is no
	// graph output.
	const NodeProto *only_consumer(const std::string &v, const char *op) const
	{
		auto c = consumers(v);
		if (c.size() != 1 || outputs_.count(v) || consumed_.count(c[0]))
			return nullptr;
		const NodeProto &n = g().node(static_cast<int>(c[0]));
		return n.op_type() == op ? &n : nullptr;
	}
	// Protobuf's repeated fields are not contiguous: a table.
	std::size_t index_of(const NodeProto *n) const { return index_.at(n); }
	// @v as a runtime value: materialized constants are fine too.
	void emit(PNode p) override { nodes_.push_back(std::move(p)); }
	void view(const std::string &out, const std::string &in, Dims dims) override
	{
		Value &src = val(in);
		Value v;
		v.dims = std::move(dims);
		v.elem = src.elem;
		v.runtime = true;
		v.view_of = in;
		if (src.is_const) {
			v.is_const = true;
			v.runtime = false;
			v.view_of.clear();
			v.data = src.data;
		}
		values_[out] = std::move(v);
	}
	void define(const std::string &out, Dims dims) override
	{
		Value v;
		v.dims = std::move(dims);
		v.runtime = true;
		values_[out] = std::move(v);
	}

	std::string path_;
	const ImportOptions &opts_;
	ModelProto model_;
	std::int64_t opset_ = 0;
	std::vector<std::string> notes_;
	std::unordered_map<std::string, Value> values_;
	std::unordered_map<std::string, std::vector<std::size_t>> consumers_;
	std::unordered_map<const NodeProto *, std::size_t> index_;
	std::set<std::string> outputs_;
	std::vector<std::string> inputs_;	// runtime graph inputs, in order
	std::set<std::size_t> consumed_;	// ONNX nodes absorbed by a fusion
	std::vector<PNode> nodes_;
	std::vector<Unsupported> bad_;
	ImportStats st_;
};

void Importer::read()
{
	std::ifstream f(path_, std::ios::binary);
	if (!f) {
		const int e = errno ? errno : ENOENT;
		throw Error(e, path_ + ": cannot open: " + std::strerror(e));
	}
	std::stringstream ss;
	ss << f.rdbuf();
	const std::string bytes = ss.str();
	if (bytes.empty() || !model_.ParseFromString(bytes))
		fail("not an ONNX model: the protobuf does not parse (" + std::to_string(bytes.size()) +
		     " bytes: truncated or corrupt)");
	if (!model_.has_graph() || model_.graph().node_size() == 0)
		fail("the model has no graph nodes");
	for (const auto &op : model_.opset_import())
		if (op.domain().empty() || op.domain() == "ai.onnx")
			opset_ = op.version();
	if (opset_ == 0)
		fail("no default-domain opset is imported");
	if (opset_ < min_opset || opset_ > max_opset)
		fail("opset " + std::to_string(opset_) + " is not supported (" +
		     std::to_string(min_opset) + ".." + std::to_string(max_opset) + ")");
}

// Fixes every dynamic input dimension in the model itself, so that shape
// inference propagates static shapes.
void Importer::fix_inputs()
{
	std::set<std::string> inits;
	for (const auto &t : g().initializer())
		inits.insert(t.name());
	std::set<std::string> given;
	for (const auto &[name, dims] : opts_.inputs)
		given.insert(name);
	for (auto &in : *model_.mutable_graph()->mutable_input()) {
		if (inits.count(in.name()))
			continue;
		given.erase(in.name());
		if (!in.type().has_tensor_type())
			fail("input '" + in.name() + "' is not a tensor");
		auto *tt = in.mutable_type()->mutable_tensor_type();
		if (tt->elem_type() != TensorProto::FLOAT)
			fail("input '" + in.name() + "' has element type " +
			     TensorProto::DataType_Name(static_cast<TensorProto::DataType>(tt->elem_type())) +
			     ": only FLOAT inputs are supported");
		if (!tt->has_shape())
			fail("input '" + in.name() + "' has no shape: give --input " + in.name() + "=DIMS");
		auto *shape = tt->mutable_shape();
		const Dims *want = nullptr;
		for (const auto &[name, dims] : opts_.inputs)
			if (name == in.name())
				want = &dims;
		if (want && static_cast<int>(want->size()) != shape->dim_size())
			fail("input '" + in.name() + "': " + dims_str(*want) + " given, but it has rank " +
			     std::to_string(shape->dim_size()));
		for (int k = 0; k < shape->dim_size(); k++) {
			auto *d = shape->mutable_dim(k);
			if (d->has_dim_value() && d->dim_value() > 0) {
				if (want && (*want)[k] != d->dim_value())
					fail("input '" + in.name() + "': " + dims_str(*want) +
					     " given, but dim " + std::to_string(k) + " is " +
					     std::to_string(d->dim_value()));
				continue;
			}
			const std::string sym = d->has_dim_param() ? d->dim_param() : "?";
			std::int64_t v;
			if (want) {
				v = (*want)[k];
			} else if (k == 0) {
				v = opts_.default_batch;
				notes_.push_back("input " + in.name() + ": dim 0 ('" + sym +
						 "') is dynamic, set to " + std::to_string(v) +
						 " (the default batch)");
			} else {
				fail("input '" + in.name() + "': dim " + std::to_string(k) + " ('" + sym +
				     "') is dynamic: give --input " + in.name() + "=DIMS");
			}
			d->clear_dim_param();
			d->set_dim_value(v);
		}
		Dims dims;
		for (const auto &d : shape->dim())
			dims.push_back(d.dim_value());
		for (std::int64_t v : dims)
			if (v <= 0 || v > std::numeric_limits<std::uint32_t>::max())
				fail("input '" + in.name() + "': dims " + dims_str(dims) +
				     " are not positive 32-bit values");
		if (want)
			notes_.push_back("input " + in.name() + ": " + dims_str(dims) + " (given)");
		define(in.name(), dims);
		inputs_.push_back(in.name());
	}
	if (!given.empty())
		fail("--input " + *given.begin() + ": the model has no such input");
}

void Importer::check()
{
	try {
		::onnx::checker::check_model(model_);
	} catch (const std::exception &e) {
		fail(std::string("the ONNX checker refuses it: ") + e.what());
	}
	try {
		::onnx::ShapeInferenceOptions o;
		o.check_type = true;
		o.error_mode = 1;
		o.enable_data_propagation = true;
		::onnx::shape_inference::InferShapes(model_, ::onnx::OpSchemaRegistry::Instance(), o);
	} catch (const std::exception &e) {
		fail(std::string("shape inference fails: ") + e.what());
	}
}

// Reads a TensorProto (initializer, Constant) as doubles.
Value const_value(const TensorProto &t, const std::string &path)
{
	Value v;
	v.is_const = true;
	v.elem = t.data_type();
	v.dims.assign(t.dims().begin(), t.dims().end());
	for (std::int64_t d : v.dims)
		if (d < 0 || d > std::numeric_limits<std::uint32_t>::max())
			throw Error(EINVAL, path + ": tensor '" + t.name() + "' has dims " + dims_str(v.dims) +
						    " that are negative or overflow");
	if (t.data_location() == TensorProto::EXTERNAL)
		throw Error(EINVAL, path + ": tensor '" + t.name() +
					    "' has external data, which this importer does not read yet");
	const auto n = static_cast<std::size_t>(elements(v.dims));
	const std::string &raw = t.raw_data();
	const auto take = [&](auto sample, const auto &field) {
		using T = decltype(sample);
		if (!raw.empty()) {
			if (raw.size() != n * sizeof(T))
				throw Error(EINVAL, path + ": tensor '" + t.name() + "' has " +
							    std::to_string(raw.size()) + " bytes of data for " +
							    dims_str(v.dims));
			v.data.resize(n);
			for (std::size_t i = 0; i < n; i++) {
				T x;
				std::memcpy(&x, raw.data() + i * sizeof(T), sizeof(T));
				v.data[i] = static_cast<double>(x);
			}
			return;
		}
		if (static_cast<std::size_t>(field.size()) != n)
			throw Error(EINVAL, path + ": tensor '" + t.name() + "' has " +
						    std::to_string(field.size()) + " values for " +
						    dims_str(v.dims));
		for (auto x : field)
			v.data.push_back(static_cast<double>(static_cast<T>(x)));
	};
	switch (t.data_type()) {
	case TensorProto::FLOAT:
		take(float{}, t.float_data());
		break;
	case TensorProto::INT64:
		take(std::int64_t{}, t.int64_data());
		break;
	case TensorProto::INT32:
		take(std::int32_t{}, t.int32_data());
		break;
	case TensorProto::DOUBLE:
		take(double{}, t.double_data());
		break;
	case TensorProto::BOOL:
	case TensorProto::UINT8:
		take(std::uint8_t{}, t.int32_data());
		break;
	case TensorProto::INT8:
		take(std::int8_t{}, t.int32_data());
		break;
	default:
		throw Error(EINVAL, path + ": tensor '" + t.name() + "' has element type " +
					    TensorProto::DataType_Name(
						    static_cast<TensorProto::DataType>(t.data_type())) +
					    " (supported: FLOAT, INT64, INT32, DOUBLE, INT8, UINT8, BOOL)");
	}
	return v;
}

void Importer::load_values()
{
	for (const auto &t : g().initializer())
		values_[t.name()] = const_value(t, path_);
	for (int i = 0; i < g().node_size(); i++)
		index_[&g().node(i)] = static_cast<std::size_t>(i);
	for (int i = 0; i < g().node_size(); i++)
		for (const auto &in : g().node(i).input())
			if (!in.empty())
				consumers_[in].push_back(static_cast<std::size_t>(i));
	for (const auto &o : g().output())
		outputs_.insert(o.name());
}

std::optional<Dims> broadcast(const Dims &a, const Dims &b)
{
	return detail::numpy_broadcast(std::span<const std::int64_t>(a), std::span<const std::int64_t>(b));
}

std::int64_t norm_axis(std::int64_t axis, std::size_t rank)
{
	return axis < 0 ? axis + static_cast<std::int64_t>(rank) : axis;
}

// Computes a node at import time when its result depends only on
// constants (and static shapes).  True when done.
bool Importer::fold(const NodeProto &n)
{
	const std::string &op = n.op_type();
	const auto c = [&](int k) -> const Value * { return have(n, k) ? cval(n.input(k)) : nullptr; };
	const auto all_const = [&] {
		for (int k = 0; k < n.input_size(); k++)
			if (!n.input(k).empty() && !cval(n.input(k)))
				return false;
		return true;
	};
	Value out;
	out.is_const = true;

	if (op == "Constant") {
		if (const AttributeProto *a = attr(n, "value"); a && a->has_t()) {
			values_[n.output(0)] = const_value(a->t(), path_);
			return true;
		}
		// value_float(s), value_int(s) (opset >= 12): a scalar or a 1-D tensor.
		if (const AttributeProto *a = attr(n, "value_float")) {
			out.elem = TensorProto::FLOAT;
			out.data = {static_cast<double>(a->f())};
		} else if (const AttributeProto *b = attr(n, "value_int")) {
			out.elem = TensorProto::INT64;
			out.data = {static_cast<double>(b->i())};
		} else if (const AttributeProto *fl = attr(n, "value_floats")) {
			out.elem = TensorProto::FLOAT;
			out.dims = {fl->floats_size()};
			for (float f : fl->floats())
				out.data.push_back(f);
		} else if (const AttributeProto *il = attr(n, "value_ints")) {
			out.elem = TensorProto::INT64;
			out.dims = {il->ints_size()};
			for (std::int64_t v : il->ints())
				out.data.push_back(static_cast<double>(v));
		} else {
			return false;
		}
		values_[n.output(0)] = std::move(out);
		return true;
	}
	if (op == "Shape") {
		Value &x = val(n.input(0));
		out.elem = TensorProto::INT64;
		out.dims = {static_cast<std::int64_t>(x.dims.size())};
		for (std::int64_t d : x.dims)
			out.data.push_back(static_cast<double>(d));
		values_[n.output(0)] = std::move(out);
		return true;
	}
	if (!all_const())
		return false;
	// Cast, Gather, Concat, Slice, Sqrt and the other operators that
	// also run at run time: onnx_import_ops.cpp.
	if (ops::lower(*this, n, true))
		return true;
	if (op == "Identity") {
		out = *c(0);
	} else if (op == "Add" || op == "Sub" || op == "Mul" || op == "Div") {
		const Value &a = *c(0), &b = *c(1);
		auto dims = broadcast(a.dims, b.dims);
		if (!dims)
			return false;
		out.elem = a.elem;
		out.dims = *dims;
		const bool integer = a.elem != TensorProto::FLOAT && a.elem != TensorProto::DOUBLE;
		for (std::size_t i = 0; i < static_cast<std::size_t>(elements(*dims)); i++) {
			const double x = a.data[bindex(a.dims, *dims, i)], y = b.data[bindex(b.dims, *dims, i)];
			double r = op == "Add" ? x + y : op == "Sub" ? x - y : op == "Mul" ? x * y
			    : integer ? std::trunc(x / y) : x / y;
			if (a.elem == TensorProto::FLOAT)
				r = static_cast<float>(r);
			out.data.push_back(r);
		}
	} else if (op == "Unsqueeze" || op == "Squeeze") {
		const Value &x = *c(0);
		Dims axes = opset_ >= 13 && have(n, 1) ? Dims(c(1)->data.begin(), c(1)->data.end())
						       : attr_ints(n, "axes");
		out = x;
		out.dims.clear();
		if (op == "Unsqueeze") {
			const std::size_t rank = x.dims.size() + axes.size();
			std::set<std::int64_t> at;
			for (std::int64_t a : axes)
				at.insert(norm_axis(a, rank));
			for (std::size_t k = 0, j = 0; k < rank; k++)
				out.dims.push_back(at.count(static_cast<std::int64_t>(k)) ? 1 : x.dims[j++]);
		} else {
			std::set<std::int64_t> at;
			for (std::int64_t a : axes)
				at.insert(norm_axis(a, x.dims.size()));
			for (std::size_t k = 0; k < x.dims.size(); k++)
				if (!(axes.empty() ? x.dims[k] == 1 : at.count(static_cast<std::int64_t>(k)) != 0))
					out.dims.push_back(x.dims[k]);
		}
	} else if (op == "Reshape" || op == "Flatten") {
		return false;	// map_node() handles both (views of constants too)
	} else if (op == "ConstantOfShape") {
		const AttributeProto *a = attr(n, "value");
		Value fill;
		if (a && a->has_t())
			fill = const_value(a->t(), path_);
		out.elem = a ? fill.elem : TensorProto::FLOAT;
		out.dims.assign(c(0)->data.begin(), c(0)->data.end());
		out.data.assign(static_cast<std::size_t>(elements(out.dims)),
				fill.data.empty() ? 0.0 : fill.data[0]);
	} else if (op == "Range") {
		const double start = c(0)->data.at(0), limit = c(1)->data.at(0), delta = c(2)->data.at(0);
		out.elem = c(0)->elem;
		if (delta == 0)
			fail("node '" + node_name(n) + "' (Range): delta is 0");
		const auto count = std::max<std::int64_t>(
			static_cast<std::int64_t>(std::ceil((limit - start) / delta)), 0);
		for (std::int64_t i = 0; i < count; i++)
			out.data.push_back(start + static_cast<double>(i) * delta);
		out.dims = {count};
	} else {
		return false;
	}
	values_[n.output(0)] = std::move(out);
	return true;
}

bool near(std::optional<double> v, double want, double tol = 1e-4)
{
	return v && std::fabs(*v - want) <= tol * std::max(1.0, std::fabs(want));
}

// ReduceMean(x) -> Sub(x, mean) -> Pow(d, 2) -> ReduceMean -> Add(eps) ->
// Sqrt -> Div(d, .) [-> Mul(gamma)] [-> Add(beta)]: LAYERNORM, at @i (the
// first ReduceMean).
bool Importer::fuse_layernorm(std::size_t i)
{
	const NodeProto &r1 = g().node(static_cast<int>(i));
	const std::string x = r1.input(0);
	Value &xv = val(x);
	const auto last_axis = [&](const NodeProto &r) {
		const Dims axes = attr_ints(r, "axes");
		return axes.size() == 1 && norm_axis(axes[0], xv.dims.size()) ==
						   static_cast<std::int64_t>(xv.dims.size()) - 1 &&
		       attr_i(r, "keepdims", 1) == 1;
	};
	if (!xv.runtime || xv.dims.empty() || !last_axis(r1))
		return false;
	const NodeProto *sub = only_consumer(r1.output(0), "Sub");
	if (!sub || sub->input(0) != x || sub->input(1) != r1.output(0))
		return false;
	auto dc = consumers(sub->output(0));
	if (dc.size() != 2 || outputs_.count(sub->output(0)))
		return false;
	const NodeProto *pw = nullptr, *dv = nullptr;
	for (std::size_t k : dc) {
		const NodeProto &c = g().node(static_cast<int>(k));
		if (c.op_type() == "Pow" && c.input(0) == sub->output(0) && near(scalar(c.input(1)), 2.0))
			pw = &c;
		else if (c.op_type() == "Div" && c.input(0) == sub->output(0))
			dv = &c;
	}
	if (!pw || !dv)
		return false;
	const NodeProto *r2 = only_consumer(pw->output(0), "ReduceMean");
	if (!r2 || !last_axis(*r2))
		return false;
	const NodeProto *ad = only_consumer(r2->output(0), "Add");
	if (!ad)
		return false;
	const bool eps_second = ad->input(0) == r2->output(0);
	const auto eps = scalar(ad->input(eps_second ? 1 : 0));
	if (!eps || !(*eps > 0))
		return false;
	const NodeProto *sq = only_consumer(ad->output(0), "Sqrt");
	if (!sq || only_consumer(sq->output(0), "Div") != dv || dv->input(1) != sq->output(0))
		return false;
	const std::int64_t D = xv.dims.back();
	std::vector<const NodeProto *> chain = {&r1, sub, pw, r2, ad, sq, dv};
	std::string out = dv->output(0), gamma, beta;
	const auto vec_const = [&](const NodeProto &m, const std::string &from) -> std::string {
		const std::string other = m.input(0) == from ? m.input(1) : m.input(0);
		const Value *v = cval(other);
		return v && elements(v->dims) == D && !v->dims.empty() && v->dims.back() == D ? other
											       : std::string{};
	};
	if (const NodeProto *m = only_consumer(out, "Mul"); m && !(gamma = vec_const(*m, out)).empty()) {
		chain.push_back(m);
		out = m->output(0);
		if (const NodeProto *a = only_consumer(out, "Add");
		    a && !(beta = vec_const(*a, out)).empty()) {
			chain.push_back(a);
			out = a->output(0);
		}
	}
	const auto synth = [&](const std::string &name, double fill) {
		Value v;
		v.is_const = true;
		v.dims = {D};
		v.data.assign(static_cast<std::size_t>(D), fill);
		values_[name] = std::move(v);
		return name;
	};
	const std::string base = node_name(r1);
	gamma = gamma.empty() ? synth(base + ".gamma", 1.0) : gamma;
	beta = beta.empty() ? synth(base + ".beta", 0.0) : beta;
	// gamma and beta as [D] views.
	view(base + ".g", gamma, {D});
	view(base + ".b", beta, {D});
	for (const NodeProto *c : chain)
		consumed_.insert(index_of(c));
	define(out, xv.dims);
	emit({Op::layernorm, EngineClass::worker, {x, base + ".g", base + ".b"}, out,
	      param_bytes(NormParam{static_cast<float>(*eps)}), base + ".layernorm", true});
	st_.fused += static_cast<std::uint32_t>(chain.size() - 1);
	return true;
}

// Div(x, sqrt 2) | Mul(x, 1/sqrt 2) -> Erf -> Add(1) -> Mul(x) -> Mul(0.5)
// (and the orders PyTorch and TensorFlow export): GELU_ERF, at @i (the Erf).
bool Importer::fuse_gelu(std::size_t i)
{
	const NodeProto &erf = g().node(static_cast<int>(i));
	std::string x;
	const NodeProto *pre = nullptr;
	for (std::size_t k = 0; k < static_cast<std::size_t>(g().node_size()); k++) {
		const NodeProto &p = g().node(static_cast<int>(k));
		if (p.output_size() && p.output(0) == erf.input(0))
			pre = &p;
	}
	if (!pre || consumers(pre->output(0)).size() != 1 || outputs_.count(pre->output(0)))
		return false;
	if (pre->op_type() == "Div" && near(scalar(pre->input(1)), std::sqrt(2.0)))
		x = pre->input(0);
	else if (pre->op_type() == "Mul" && near(scalar(pre->input(1)), 1 / std::sqrt(2.0)))
		x = pre->input(0);
	else
		return false;
	if (!val(x).runtime)
		return false;
	const NodeProto *add = only_consumer(erf.output(0), "Add");
	if (!add)
		return false;
	const std::string one = add->input(0) == erf.output(0) ? add->input(1) : add->input(0);
	if (!near(scalar(one), 1.0))
		return false;
	const NodeProto *m1 = only_consumer(add->output(0), "Mul");
	if (!m1)
		return false;
	std::vector<const NodeProto *> chain = {pre, &erf, add, m1};
	const std::string o1 = m1->input(0) == add->output(0) ? m1->input(1) : m1->input(0);
	const NodeProto *last = m1;
	if (o1 == x || near(scalar(o1), 0.5)) {
		const NodeProto *m2 = only_consumer(m1->output(0), "Mul");
		if (!m2)
			return false;
		const std::string o2 = m2->input(0) == m1->output(0) ? m2->input(1) : m2->input(0);
		if (!(o1 == x ? near(scalar(o2), 0.5) : o2 == x))
			return false;
		chain.push_back(m2);
		last = m2;
	} else {
		// o1 = Mul(x, 0.5), used only here.
		const NodeProto *h = nullptr;
		for (const NodeProto &p : g().node())
			if (p.output_size() && p.output(0) == o1)
				h = &p;
		// h must come after the head (the Div before Erf): not yet mapped.
		if (!h || h->op_type() != "Mul" || consumers(o1).size() != 1 || outputs_.count(o1) ||
		    index_of(h) < index_of(pre))
			return false;
		const std::string hx = h->input(0) == x ? h->input(1) : h->input(0);
		if ((h->input(0) != x && h->input(1) != x) || !near(scalar(hx), 0.5))
			return false;
		chain.push_back(h);
	}
	for (const NodeProto *c : chain)
		consumed_.insert(index_of(c));
	define(last->output(0), val(x).dims);
	emit({Op::gelu_erf, EngineClass::worker, {x}, last->output(0), {}, node_name(*last) + ".gelu",
	      true});
	st_.fused += static_cast<std::uint32_t>(chain.size() - 1);
	return true;
}

#include "onnx_import_conv.inc"

void Importer::map_nodes()
{
	// Fusions first, at their head node; they need the value table, so
	// they run as the walk reaches them (heads precede their chains).
	for (std::size_t i = 0; i < static_cast<std::size_t>(g().node_size()); i++) {
		if (consumed_.count(i))
			continue;
		const NodeProto &n = g().node(static_cast<int>(i));
		st_.onnx_nodes++;
		bool ok_inputs = true;
		for (const auto &in : n.input())
			if (!in.empty() && !values_.count(in))
				ok_inputs = false;
		if (!ok_inputs) {
			// An input from an unsupported node: that node is listed.
			for (const auto &o : n.output())
				define(o, {});
			continue;
		}
		if (n.domain() != "" && n.domain() != "ai.onnx") {
			unsupported(n, "domain '" + n.domain() + "' is not supported");
			for (const auto &o : n.output())
				define(o, {});
			continue;
		}
		if (fold(n)) {
			st_.folded++;
			continue;
		}
		if (n.op_type() == "ReduceMean" && fuse_layernorm(i))
			continue;
		if (n.op_type() == "Div" || n.op_type() == "Mul") {
			// The head of an Erf-GELU is the Div/Mul before Erf: try
			// the Erf it feeds.
			auto c = consumers(n.output(0));
			if (c.size() == 1 && g().node(static_cast<int>(c[0])).op_type() == "Erf" &&
			    fuse_gelu(c[0]))
				continue;
		}
		map_node(i);
	}
	for (const auto &o : g().output())
		if (!values_.count(o.name()))
			fail("graph output '" + o.name() + "' is never computed");
}

void Importer::map_node(std::size_t i)
{
	const NodeProto &n = g().node(static_cast<int>(i));
	const std::string &op = n.op_type();
	const std::string name = node_name(n);
	if (ops::lower(*this, n, false))
		return;
	const auto fp32 = [&](const std::string &v) {
		return val(v).elem == TensorProto::FLOAT || val(v).elem == TensorProto::DOUBLE;
	};
	for (const auto &in : n.input())
		if (!in.empty() && !fp32(in) && op != "Reshape" && op != "Unsqueeze" && op != "Squeeze") {
			unsupported(n, "input '" + in + "' is not FLOAT");
			define(n.output(0), {});
			return;
		}
	for (const auto &in : n.input())
		if (!in.empty() && val(in).dims.size() > graph_max_rank) {
			unsupported(n, "input '" + in + "' has rank > 6");
			define(n.output(0), {});
			return;
		}
	const Dims &xd = val(n.input(0)).dims;
	const auto refuse = [&](const std::string &why) {
		unsupported(n, why);
		for (const auto &o : n.output())
			define(o, {});
	};

	if (map_cnn(n))
		return;
	if (op == "Relu" || op == "Softmax") {
		if (op == "Softmax") {
			const std::int64_t def = opset_ >= 13 ? -1 : 1;
			if (norm_axis(attr_i(n, "axis", def), xd.size()) !=
			    static_cast<std::int64_t>(xd.size()) - 1)
				return refuse("softmax over axis " + std::to_string(attr_i(n, "axis", def)) +
					      " of " + dims_str(xd) + ": only the last axis is supported");
		}
		define(n.output(0), xd);
		emit({op == "Relu" ? Op::relu : Op::softmax, EngineClass::worker, {n.input(0)},
		      n.output(0), {}, name, true});
		return;
	}
	if (op == "LayerNormalization") {
		if (norm_axis(attr_i(n, "axis", -1), xd.size()) != static_cast<std::int64_t>(xd.size()) - 1)
			return refuse("only axis -1 is supported");
		if (n.output_size() > 1 && (!n.output(1).empty() || (n.output_size() > 2 && !n.output(2).empty())))
			return refuse("the Mean and InvStdDev outputs are not supported");
		const std::int64_t D = xd.back();
		std::string sc = n.input(1), b = have(n, 2) ? n.input(2) : std::string{};
		if (!cval(sc) || elements(val(sc).dims) != D || (!b.empty() && (!cval(b) || elements(val(b).dims) != D)))
			return refuse("Scale and B must be constants of " + std::to_string(D) + " elements");
		if (b.empty()) {
			Value z;
			z.is_const = true;
			z.dims = {D};
			z.data.assign(static_cast<std::size_t>(D), 0.0);
			b = name + ".B";
			values_[b] = z;
		}
		view(name + ".g", sc, {D});
		view(name + ".b", b, {D});
		define(n.output(0), xd);
		emit({Op::layernorm, EngineClass::worker, {n.input(0), name + ".g", name + ".b"},
		      n.output(0), param_bytes(NormParam{attr_f(n, "epsilon", 1e-5f)}), name, true});
		return;
	}
	if (op == "Add" || op == "Sub" || op == "Mul" || op == "Div") {
		const Dims &yd = val(n.input(1)).dims;
		auto od = broadcast(xd, yd);
		if (!od)
			return refuse("inputs " + dims_str(xd) + " and " + dims_str(yd) + " do not broadcast");
		define(n.output(0), *od);
		Op o = op == "Add" ? (xd == yd ? Op::add : Op::badd) : op == "Sub" ? Op::sub
		       : op == "Mul" ? Op::mul : Op::div;
		emit({o, EngineClass::worker, {n.input(0), n.input(1)}, n.output(0), {}, name, true,
		      op == "Add" || op == "Mul"});
		return;
	}
	if (op == "MatMul" || op == "Gemm") {
		Dims ad = xd, bd = val(n.input(1)).dims;
		std::uint32_t flags = 0;
		float alpha = 1.0f;
		std::string a = n.input(0), b = n.input(1), bias;
		Dims od;
		if (op == "Gemm") {
			if (ad.size() != 2 || bd.size() != 2)
				return refuse("Gemm takes matrices");
			flags = (attr_i(n, "transA", 0) ? matmul_trans_a : 0) |
				(attr_i(n, "transB", 0) ? matmul_trans_b : 0);
			alpha = attr_f(n, "alpha", 1.0f);
			const std::int64_t M = flags & matmul_trans_a ? ad[1] : ad[0];
			const std::int64_t K = flags & matmul_trans_a ? ad[0] : ad[1];
			const std::int64_t K2 = flags & matmul_trans_b ? bd[1] : bd[0];
			const std::int64_t N = flags & matmul_trans_b ? bd[0] : bd[1];
			if (K != K2)
				return refuse("inner dimensions differ: " + dims_str(ad) + " x " + dims_str(bd));
			od = {M, N};
			if (have(n, 2)) {
				const Value *c = cval(n.input(2));
				const float beta = attr_f(n, "beta", 1.0f);
				if (!c || elements(c->dims) != N || (c->dims.size() == 2 && c->dims[0] != 1))
					return refuse("C must be a constant of N = " + std::to_string(N) +
						      " elements (a row bias)");
				Value v = *c;
				v.dims = {N};
				for (double &d : v.data)
					d = static_cast<float>(d * beta);
				bias = name + ".bias";
				values_[bias] = std::move(v);
			}
		} else {
			// Rank-1 operands: numpy's promotion, then the removed dim
			// is dropped again by a view of the result.
			if (ad.empty() || bd.empty())
				return refuse("MatMul of a scalar");
			bool drop_m = false, drop_n = false;
			if (ad.size() == 1) {
				view(name + ".a", a, {1, ad[0]});
				a = name + ".a";
				ad = {1, ad[0]};
				drop_m = true;
			}
			if (bd.size() == 1) {
				view(name + ".b", b, {bd[0], 1});
				b = name + ".b";
				bd = {bd[0], 1};
				drop_n = true;
			}
			if (ad.back() != bd[bd.size() - 2])
				return refuse("inner dimensions differ: " + dims_str(ad) + " x " + dims_str(bd));
			auto batch = broadcast(Dims(ad.begin(), ad.end() - 2), Dims(bd.begin(), bd.end() - 2));
			if (!batch)
				return refuse("batch dimensions do not broadcast: " + dims_str(ad) + " x " +
					      dims_str(bd));
			od = *batch;
			od.push_back(ad[ad.size() - 2]);
			od.push_back(bd.back());
			if (drop_m || drop_n) {
				Dims final;
				for (std::size_t k = 0; k < od.size(); k++)
					if (!(drop_m && k == od.size() - 2) && !(drop_n && k == od.size() - 1))
						final.push_back(od[k]);
				const std::string tmp = name + ".mm";
				define(tmp, od);
				emit({Op::bmatmul, EngineClass::worker, {a, b}, tmp, {}, name});
				view(n.output(0), tmp, final);
				st_.views++;
				return;
			}
		}
		// MatMul + Add of a constant row: the bias input.
		std::string out = n.output(0);
		const std::int64_t N = od.back();
		if (bias.empty()) {
			if (const NodeProto *add = only_consumer(out, "Add")) {
				const std::string other = add->input(0) == out ? add->input(1) : add->input(0);
				const Value *c = cval(other);
				bool row = c && elements(c->dims) == N && c->dims.size() <= od.size();
				for (std::size_t k = 0; row && k + 1 < c->dims.size(); k++)
					row = c->dims[k] == 1;
				if (row && fp32(other)) {
					view(name + ".bias", other, {N});
					bias = name + ".bias";
					consumed_.insert(index_of(add));
					out = add->output(0);
					st_.fused++;
				}
			}
		}
		std::vector<std::string> ins = {a, b};
		if (!bias.empty())
			ins.push_back(bias);
		define(out, od);
		const bool plain = ad.size() == 2 && bd.size() == 2;
		std::vector<std::byte> p;
		if (flags || alpha != 1.0f)
			p = param_bytes(MatmulParam{flags, alpha});
		emit({plain ? Op::matmul : Op::bmatmul, EngineClass::worker, ins, out, p, name});
		return;
	}
	if (op == "Transpose") {
		Dims perm = attr_ints(n, "perm");
		if (perm.empty())
			for (std::size_t k = xd.size(); k-- > 0;)
				perm.push_back(static_cast<std::int64_t>(k));
		if (perm.size() != xd.size())
			return refuse("perm has " + std::to_string(perm.size()) + " entries for rank " +
				      std::to_string(xd.size()));
		Dims od;
		std::vector<std::byte> p(8, std::byte{0});
		for (std::size_t k = 0; k < perm.size(); k++) {
			const std::int64_t a = norm_axis(perm[k], xd.size());
			if (a < 0 || a >= static_cast<std::int64_t>(xd.size()))
				return refuse("perm entry " + std::to_string(perm[k]) + " out of range");
			od.push_back(xd[static_cast<std::size_t>(a)]);
			p[k] = static_cast<std::byte>(a);
		}
		define(n.output(0), od);
		emit({Op::transpose, EngineClass::worker, {n.input(0)}, n.output(0), p, name});
		return;
	}
	if (op == "Reshape" || op == "Flatten" || op == "Squeeze" || op == "Unsqueeze" ||
	    op == "Identity" || op == "Dropout" || (op == "Cast" && attr_i(n, "to", 0) == TensorProto::FLOAT)) {
		Dims od;
		if (op == "Reshape") {
			const Value *s = have(n, 1) ? cval(n.input(1)) : nullptr;
			if (!s)
				return refuse("the target shape is not a constant (after folding)");
			std::int64_t known = 1, infer = -1;
			for (std::size_t k = 0; k < s->data.size(); k++) {
				auto d = static_cast<std::int64_t>(s->data[k]);
				if (d == 0 && !attr_i(n, "allowzero", 0))
					d = k < xd.size() ? xd[k] : 0;
				if (d == -1) {
					infer = static_cast<std::int64_t>(k);
					od.push_back(1);
					continue;
				}
				od.push_back(d);
				known *= d;
			}
			if (infer >= 0 && known > 0)
				od[static_cast<std::size_t>(infer)] = elements(xd) / known;
		} else if (op == "Flatten") {
			const std::int64_t ax = norm_axis(attr_i(n, "axis", 1), xd.size());
			std::int64_t a = 1, b = 1;
			for (std::size_t k = 0; k < xd.size(); k++)
				(static_cast<std::int64_t>(k) < ax ? a : b) *= xd[k];
			od = {a, b};
		} else if (op == "Squeeze" || op == "Unsqueeze") {
			Dims axes = attr_ints(n, "axes");
			if (opset_ >= 13 && have(n, 1)) {
				const Value *c = cval(n.input(1));
				if (!c)
					return refuse("axes are not a constant");
				axes.assign(c->data.begin(), c->data.end());
			}
			if (op == "Unsqueeze") {
				const std::size_t rank = xd.size() + axes.size();
				std::set<std::int64_t> at;
				for (std::int64_t a : axes)
					at.insert(norm_axis(a, rank));
				for (std::size_t k = 0, j = 0; k < rank; k++)
					od.push_back(at.count(static_cast<std::int64_t>(k)) ? 1 : xd[j++]);
			} else {
				std::set<std::int64_t> at;
				for (std::int64_t a : axes)
					at.insert(norm_axis(a, xd.size()));
				for (std::size_t k = 0; k < xd.size(); k++)
					if (!(axes.empty() ? xd[k] == 1 : at.count(static_cast<std::int64_t>(k)) != 0))
						od.push_back(xd[k]);
			}
		} else {
			od = xd;
			if (op == "Dropout" && n.output_size() > 1 && !n.output(1).empty())
				return refuse("the mask output is not supported");
		}
		if (elements(od) != elements(xd) || od.size() > graph_max_rank)
			return refuse("cannot view " + dims_str(xd) + " as " + dims_str(od));
		view(n.output(0), n.input(0), od);
		st_.views++;
		return;
	}
	refuse("no MCP operator");
}

std::uint64_t pad64(std::uint64_t v)
{
	return (v + graph_align - 1) & ~std::uint64_t{graph_align - 1};
}

GraphDef Importer::build(ImportStats *stats)
{
	// Storage roots: a view's bytes are its base's.
	const auto root = [&](std::string v) {
		while (!values_.at(v).view_of.empty())
			v = values_.at(v).view_of;
		return v;
	};
	// Graph outputs that are constants or inputs, or share a root with
	// another output, get a COPY.
	std::map<std::string, std::string> out_root;	// root -> the output placed on it
	std::vector<std::pair<std::string, std::string>> copies;	// (from, output)
	std::set<std::string> input_set(inputs_.begin(), inputs_.end());
	for (const auto &o : g().output()) {
		const Value &v = values_.at(o.name());
		if (v.elem != TensorProto::FLOAT)
			fail("graph output '" + o.name() + "' is not FLOAT");
		if (v.is_const || input_set.count(root(o.name())) || out_root.count(root(o.name()))) {
			copies.push_back({o.name(), o.name()});
			continue;
		}
		out_root[root(o.name())] = o.name();
	}
	// Last use of each root, in emission order (graph outputs: never dead).
	std::map<std::string, std::size_t> last;
	for (std::size_t k = 0; k < nodes_.size(); k++)
		for (const auto &in : nodes_[k].in)
			if (!values_.at(in).is_const)
				last[root(in)] = k;

	struct Slot {
		std::uint32_t buffer;
		std::uint64_t offset;
	};
	std::map<std::string, Slot> slot;	// root -> where
	std::vector<GraphBuffer> buffers;
	std::map<std::string, std::uint32_t> tensor_of;
	std::vector<GraphTensor> tensors;
	const auto add_buffer = [&](std::string bname, std::uint32_t flags) {
		if (buffers.size() >= 64)
			fail("the graph needs more than 64 buffers (inputs + outputs + 2)");
		buffers.push_back({std::move(bname), 0, flags, std::nullopt, {}});
		return static_cast<std::uint32_t>(buffers.size() - 1);
	};
	// The MCP dtype of a value the graph holds (DOUBLE constants as f32).
	const auto dtype_of = [&](const std::string &v) {
		const std::int32_t e = values_.at(v).elem;
		const auto d = ops::mcp_dtype(e == TensorProto::DOUBLE ? TensorProto::FLOAT : e);
		if (!d)
			fail("tensor '" + v + "' is " +
			     TensorProto::DataType_Name(static_cast<TensorProto::DataType>(e)) +
			     " in the graph (an importer bug)");
		return *d;
	};
	const auto bytes_of = [&](const std::string &v) {
		return static_cast<std::uint64_t>(elements(values_.at(v).dims)) * dtype_size(dtype_of(v));
	};
	for (const auto &in : inputs_) {
		const std::uint32_t b = add_buffer(in, graph_buffer_input);
		buffers[b].length = pad64(bytes_of(in));
		slot[in] = {b, 0};
	}
	for (const auto &[r, o] : out_root) {
		const std::uint32_t b = add_buffer(o, graph_buffer_output);
		buffers[b].length = pad64(bytes_of(r));
		slot[r] = {b, 0};
	}
	std::vector<std::uint32_t> copy_buffer;
	for (const auto &[from, o] : copies) {
		const std::uint32_t b = add_buffer(from, graph_buffer_output);
		buffers[b].length = pad64(bytes_of(from));
		copy_buffer.push_back(b);
	}
	// Constants used by nodes (or copied to outputs): one const buffer.
	std::vector<std::string> consts;
	std::set<std::string> const_seen;
	const auto use_const = [&](const std::string &v) {
		if (values_.at(v).is_const && const_seen.insert(v).second)
			consts.push_back(v);
	};
	for (const auto &p : nodes_)
		for (const auto &in : p.in)
			use_const(in);
	for (const auto &[from, o] : copies)
		use_const(from);
	std::uint32_t cbuf = UINT32_MAX, abuf = UINT32_MAX;
	std::vector<std::byte> data;
	if (!consts.empty()) {
		cbuf = add_buffer("const", graph_buffer_const);
		for (const auto &c : consts) {
			const Value &v = values_.at(c);
			const std::uint64_t at = pad64(data.size());
			data.resize(at + pad64(bytes_of(c)));
			const DType dt = dtype_of(c);
			for (std::size_t i = 0; i < v.data.size(); i++) {
				std::byte *p = data.data() + at + i * dtype_size(dt);
				const auto f = static_cast<float>(v.data[i]);
				const auto i32 = static_cast<std::int32_t>(v.data[i]);
				if (dt == DType::f32)
					std::memcpy(p, &f, 4);
				else if (dt == DType::i32)
					std::memcpy(p, &i32, 4);
				else
					*p = static_cast<std::byte>(static_cast<std::uint8_t>(i32));
			}
			slot[c] = {cbuf, at};
		}
		buffers[cbuf].length = data.size();
		buffers[cbuf].init = GraphInit{InitKind::data, 0, 0.0f};
		st_.const_bytes = data.size();
	}
	// Activations: in place where the input dies here, else fresh bytes.
	std::uint64_t act_len = 0;
	std::vector<std::uint8_t> node_flags(nodes_.size(), 0);
	for (std::size_t k = 0; k < nodes_.size(); k++) {
		PNode &p = nodes_[k];
		const std::string r = root(p.out);
		if (slot.count(r))
			continue;	// an output buffer
		st_.unplanned_bytes += pad64(bytes_of(p.out));
		if (abuf == UINT32_MAX)
			abuf = add_buffer("act", 0);
		const auto dies_here = [&](std::size_t j) {
			if (j >= p.in.size())
				return false;
			const std::string &in = p.in[j];
			const Value &v = values_.at(in);
			if (v.is_const || v.dims != values_.at(p.out).dims ||
			    dtype_of(in) != dtype_of(p.out))
				return false;
			const std::string ri = root(in);
			if (!slot.count(ri) || slot[ri].buffer != abuf || last[ri] != k)
				return false;
			for (std::size_t o = 0; o < p.in.size(); o++)
				if (o != j && !values_.at(p.in[o]).is_const && root(p.in[o]) == ri)
					return false;
			return true;
		};
		if (p.may_inplace && p.commutes && !dies_here(0) && dies_here(1))
			std::swap(p.in[0], p.in[1]);
		if (p.may_inplace && dies_here(0)) {
			slot[r] = slot[root(p.in[0])];
			node_flags[k] = graph_node_inplace;
			st_.inplace++;
			continue;
		}
		slot[r] = {abuf, act_len};
		act_len += pad64(bytes_of(p.out));
	}
	if (abuf != UINT32_MAX)
		buffers[abuf].length = std::max<std::uint64_t>(act_len, graph_align);
	st_.activation_bytes = act_len;

	const auto tensor = [&](const std::string &v) -> std::uint32_t {
		if (auto it = tensor_of.find(v); it != tensor_of.end())
			return it->second;
		const Value &val = values_.at(v);
		const Slot &s = slot.at(val.is_const ? v : root(v));
		GraphTensor t;
		t.name = v;
		t.buffer = s.buffer;
		t.offset = s.offset;
		t.dtype = dtype_of(v);
		for (std::int64_t d : val.dims)
			t.dims.push_back(static_cast<std::uint32_t>(d));
		tensors.push_back(std::move(t));
		return tensor_of[v] = static_cast<std::uint32_t>(tensors.size() - 1);
	};
	std::vector<GraphNode> gnodes;
	for (std::size_t k = 0; k < nodes_.size(); k++) {
		const PNode &p = nodes_[k];
		GraphNode gn;
		gn.name = p.name;
		gn.op = p.op;
		gn.engine = p.engine;
		gn.flags = node_flags[k];
		for (const auto &in : p.in)
			gn.inputs.push_back(tensor(in));
		gn.outputs.push_back(tensor(p.out));
		gn.param = p.param;
		gnodes.push_back(std::move(gn));
	}
	for (std::size_t k = 0; k < copies.size(); k++) {
		GraphNode gn;
		gn.name = copies[k].second + ".copy";
		gn.op = Op::copy;
		gn.engine = EngineClass::cpu;
		gn.inputs.push_back(tensor(copies[k].first));
		GraphTensor ot = tensors[gn.inputs[0]];
		ot.buffer = copy_buffer[k];
		ot.offset = 0;
		tensors.push_back(ot);
		gn.outputs.push_back(static_cast<std::uint32_t>(tensors.size() - 1));
		gnodes.push_back(std::move(gn));
	}
	for (const auto &in : inputs_)
		tensor(in);
	// Each output buffer holds a tensor named like it, with the output's
	// shape (also when the output is a view of what a node wrote): the
	// shape mcpctl's --save-outputs writes.
	for (const auto &[r, o] : out_root)
		tensor(o);

	GraphDef out;
	out.name = opts_.name;
	out.buffers = std::move(buffers);
	out.tensors = std::move(tensors);
	out.nodes = std::move(gnodes);
	out.data = std::move(data);
	if (out.nodes.empty())
		fail("nothing to run: every node was computed at import");
	notes_.push_back("onnx: opset " + std::to_string(opset_) + ", " +
			 std::to_string(st_.onnx_nodes + st_.fused) + " nodes: " +
			 std::to_string(st_.folded) + " folded, " + std::to_string(st_.views) +
			 " views, " + std::to_string(st_.fused) + " fused");
	notes_.push_back("activation_bytes: " + std::to_string(st_.activation_bytes));
	notes_.push_back("unplanned_bytes: " + std::to_string(st_.unplanned_bytes));
	notes_.push_back("inplace_nodes: " + std::to_string(st_.inplace));
	for (const auto &l : notes_)
		out.notes += l + "\n";
	if (auto e = out.validate())
		fail("the graph made from it is invalid (an importer bug): " + e->message);
	if (stats)
		*stats = st_;
	return out;
}

GraphDef Importer::run(ImportStats *stats)
{
	read();
	fix_inputs();
	check();
	load_values();
	map_nodes();
	if (!bad_.empty()) {
		std::string msg = std::to_string(bad_.size()) + " unsupported node" +
				  (bad_.size() == 1 ? "" : "s") + " (nothing imported):";
		for (const auto &b : bad_)
			msg += "\n  node '" + b.name + "' (" + b.op + ", opset " + std::to_string(opset_) +
			       "): " + b.why;
		fail(msg);
	}
	return build(stats);
}

std::string stem(const std::string &path)
{
	std::string s = path.substr(path.find_last_of('/') + 1);
	const auto dot = s.rfind('.');
	return dot == std::string::npos || dot == 0 ? s : s.substr(0, dot);
}

} // namespace

std::pair<std::string, std::vector<std::int64_t>> parse_input_spec(std::string_view spec)
{
	const auto eq = spec.find('=');
	if (eq == std::string_view::npos || eq == 0 || eq + 1 == spec.size())
		throw Error(EINVAL, "input '" + std::string(spec) + "': expected NAME=DIMS, e.g. x=1x3x224x224");
	std::pair<std::string, std::vector<std::int64_t>> out{std::string(spec.substr(0, eq)), {}};
	std::string_view dims = spec.substr(eq + 1);
	while (!dims.empty()) {
		const auto x = dims.find('x');
		const std::string_view d = dims.substr(0, x);
		std::int64_t v = 0;
		if (d.empty() || d.size() > 10 || d.find_first_not_of("0123456789") != std::string_view::npos ||
		    (v = std::stoll(std::string(d))) <= 0 || v > std::numeric_limits<std::uint32_t>::max())
			throw Error(EINVAL, "input '" + std::string(spec) + "': '" + std::string(d) +
						    "' is not a dimension (1 .. 4294967295)");
		out.second.push_back(v);
		if (x == std::string_view::npos)
			break;
		dims.remove_prefix(x + 1);
		if (dims.empty())
			throw Error(EINVAL, "input '" + std::string(spec) + "': trailing 'x'");
	}
	if (out.second.size() > graph_max_rank)
		throw Error(EINVAL, "input '" + std::string(spec) + "': more than 6 dims");
	return out;
}

GraphDef import(const std::string &path, const ImportOptions &options, ImportStats *stats)
{
	ImportOptions opts = options;
	if (opts.name.empty())
		opts.name = stem(path);
	if (opts.default_batch <= 0)
		throw Error(EINVAL, path + ": the default batch must be >= 1");
	try {
		Importer im(path, opts);
		return im.run(stats);
	} catch (const Error &) {
		throw;
	} catch (const std::bad_alloc &) {
		throw Error(ENOMEM, path + ": out of memory while importing");
	} catch (const std::exception &e) {
		throw Error(EINVAL, path + ": " + e.what());
	}
}

} // namespace mcp::onnx
