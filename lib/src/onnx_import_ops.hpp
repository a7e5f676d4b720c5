// SPDX-License-Identifier: LGPL-2.1-or-later
// libmcp internals: what onnx_import.cpp's Importer shares with the
// lowering of the elementwise, reduce and shape operators
// (onnx_import_ops.cpp): the value table's entries, the planned nodes, and
// the Importer as an ops::Context.  Not installed.
#ifndef MCP_SRC_ONNX_IMPORT_OPS_HPP
#define MCP_SRC_ONNX_IMPORT_OPS_HPP

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "graph_internal.hpp"

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wshadow"
#pragma GCC diagnostic ignored "-Wconversion"
#pragma GCC diagnostic ignored "-Wpedantic"
#include <onnx/onnx_pb.h>
#pragma GCC diagnostic pop

namespace mcp::onnx::ops {

using Dims = std::vector<std::int64_t>;

// "[2 x 3]"
inline std::string dims_str(const Dims &d)
{
	std::string s = "[";
	for (std::size_t k = 0; k < d.size(); k++)
		s += (k ? " x " : "") + std::to_string(d[k]);
	return s + "]";
}

inline std::int64_t elements(const Dims &d)
{
	std::int64_t n = 1;
	for (std::int64_t v : d)
		n *= v;
	return n;
}

// Element @i of @out's broadcast from @in (row-major).
inline std::size_t bindex(const Dims &in, const Dims &out, std::size_t i)
{
	std::size_t off = 0, stride = 1;
	for (std::size_t k = out.size(); k-- > 0;) {
		const std::size_t idx = i % static_cast<std::size_t>(out[k]);
		i /= static_cast<std::size_t>(out[k]);
		const std::size_t ki = k + in.size();
		if (ki < out.size())
			continue;
		const auto d = static_cast<std::size_t>(in[ki - out.size()]);
		if (d != 1)
			off += idx * stride;
		stride *= d;
	}
	return off;
}

// A value of the ONNX graph as the importer knows it.
struct Value {
	Dims dims;
	std::int32_t elem = ::onnx::TensorProto::FLOAT;	// TensorProto::DataType
	bool is_const = false;
	std::vector<double> data;		// const values (f32 and ints exactly)
	std::string view_of;			// a runtime view: the value it aliases
	bool runtime = false;			// produced at run time (or a graph input)
};

// A graph node to be (op, value names, param).
struct PNode {
	Op op;
	EngineClass engine = EngineClass::worker;
	std::vector<std::string> in;
	std::string out;
	std::vector<std::byte> param;
	std::string name;
	bool may_inplace = false;		// out0 may be in0 (element-wise)
	bool commutes = false;			// in0 and in1 may swap
};

// The importer, as the lowering below sees it.
class Context {
public:
	virtual Value &val(const std::string &name) = 0;
	virtual const Value *cval(const std::string &name) = 0;
	virtual void emit(PNode p) = 0;
	virtual void define(const std::string &out, Dims dims) = 0;
	virtual void view(const std::string &out, const std::string &in, Dims dims) = 0;
	virtual void unsupported(const ::onnx::NodeProto &n, const std::string &why) = 0;
	virtual std::string node_name(const ::onnx::NodeProto &n) const = 0;
	virtual std::int64_t opset() const = 0;
	[[noreturn]] virtual void fail_node(const ::onnx::NodeProto &n, const std::string &what) const = 0;
	virtual void set_value(const std::string &name, Value v) = 0;

protected:
	~Context() = default;
};

// The MCP dtype of an ONNX element type (BOOL is u8); none when MCP
// tensors have no such dtype.
std::optional<DType> mcp_dtype(std::int32_t elem) noexcept;

// Sigmoid, HardSigmoid, HardSwish, Tanh, Exp, Sqrt, Erf, Clip, Pow, Softmax
// (any axis but the last, which map_node() keeps), ReduceMean, ReduceSum,
// Concat, Slice, Gather, Where, Cast (but to FLOAT from FLOAT):
// @fold_only: computes @n when its inputs are constants (true when done);
// else lowers it to graph operators, or lists it as unsupported (true when
// it is one of these ops).
bool lower(Context &c, const ::onnx::NodeProto &n, bool fold_only);

} // namespace mcp::onnx::ops

#endif // MCP_SRC_ONNX_IMPORT_OPS_HPP
