// SPDX-License-Identifier: LGPL-2.1-or-later
// libmcp: inference graph definitions (C++): the binary format of
// <linux/mcp.h> ("Inference graphs") as plain values, its validator (the
// same rules, order and errors as MCP_IOC_GRAPH_CREATE), a builder, JSON,
// and the demo attention block.  Included by <mcp/mcp.hpp>.  Nothing here
// talks to the kernel (mcp::Runtime in <mcp/runtime.hpp> runs graphs).
// Documentation/graphs.rst has the format, the rules and the JSON schema.
#ifndef MCP_GRAPH_HPP
#define MCP_GRAPH_HPP

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <mcp/graph.h>
#include <mcp/mcp.hpp>

namespace mcp {

namespace feature {
inline constexpr std::uint64_t graphs = MCP_FEATURE_GRAPHS;
inline constexpr std::uint64_t graph_compact = MCP_FEATURE_GRAPH_COMPACT;
inline constexpr std::uint64_t worker_ops = MCP_FEATURE_WORKER_OPS;
} // namespace feature

// Values are the kernel's (enum mcp_dtype ...); a GraphDef read from bytes
// that the validator accepted only holds known values.
enum class DType : std::uint8_t { f32 = 1, i8 = 2, u8 = 3, i32 = 4 };
enum class Layout : std::uint8_t { dense = 0, nhwc = 1, tiled16 = 2 };
enum class Op : std::uint16_t {
	nop = 1, copy = 2, tile16 = 3, quant_i8 = 4, dequant_i8 = 5,
	wnop = 64, matmul = 65, add = 66, relu = 67, gelu = 68, softmax = 69,
	layernorm = 70, matmul_i8 = 71, bmatmul = 72, badd = 73, sub = 74, mul = 75,
	div = 76, transpose = 77, gelu_erf = 78, conv = 79, conv_transpose = 80, maxpool = 81,
	avgpool = 82, global_avgpool = 83, channel_affine = 84,
	unary = 90, pow = 91, softmax_axis = 92, reduce = 93, concat = 94, slice = 95,
	gather = 96, where = 97, cast = 98,
};
enum class EngineClass : std::uint8_t { cpu = 0, device = 1, worker = 2 };

// Buffer flags, node flags, matmul flags (values of <linux/mcp.h>).
inline constexpr std::uint32_t graph_buffer_input = MCP_GRAPH_BUFFER_INPUT;
inline constexpr std::uint32_t graph_buffer_output = MCP_GRAPH_BUFFER_OUTPUT;
inline constexpr std::uint32_t graph_buffer_const = MCP_GRAPH_BUFFER_CONST;
inline constexpr std::uint8_t graph_node_inplace = MCP_GRAPH_INPLACE;
inline constexpr std::uint32_t matmul_trans_a = MCP_GRAPH_MATMUL_TRANS_A;
inline constexpr std::uint32_t matmul_trans_b = MCP_GRAPH_MATMUL_TRANS_B;

inline constexpr std::size_t graph_max_rank = 6;
inline constexpr std::size_t graph_max_inputs = 4;
inline constexpr std::size_t graph_max_outputs = 2;
inline constexpr std::size_t graph_max_param = 256;
inline constexpr std::size_t graph_align = 64;

// Bytes of one element: 4, 1, 1, 4; 0 for an unknown value.
MCP_EXPORT std::size_t dtype_size(DType dtype) noexcept;

// Names (JSON, mcpctl): "f32" "i8" "u8" "i32"; "dense" "nhwc" "tiled16";
// "nop" "copy" "tile16" "quant_i8" "dequant_i8" "wnop" "matmul" "add"
// "relu" "gelu" "softmax" "layernorm" "matmul_i8" "bmatmul" "badd" "sub"
// "mul" "div" "transpose" "gelu_erf" "conv" "conv_transpose" "maxpool"
// "avgpool" "global_avgpool" "channel_affine" "unary" "pow" "softmax_axis"
// "reduce" "concat" "slice" "gather" "where" "cast"; "cpu" "device" "worker".
// "unknown" for values outside the enums.
MCP_EXPORT const char *to_string(DType dtype) noexcept;
MCP_EXPORT const char *to_string(Layout layout) noexcept;
MCP_EXPORT const char *to_string(Op op) noexcept;
MCP_EXPORT const char *to_string(EngineClass engine) noexcept;
// The reverse; none for an unknown name.
MCP_EXPORT std::optional<DType> parse_dtype(std::string_view name) noexcept;
MCP_EXPORT std::optional<Layout> parse_layout(std::string_view name) noexcept;
MCP_EXPORT std::optional<Op> parse_op(std::string_view name) noexcept;
MCP_EXPORT std::optional<EngineClass> parse_engine_class(std::string_view name) noexcept;

// ---- buffer initialisation ----

enum class InitKind : std::uint32_t {
	uniform_f32 = MCP_GRAPH_INIT_UNIFORM_F32,	// f32 in [-scale, scale)
	uniform_i8 = MCP_GRAPH_INIT_UNIFORM_I8,		// int8 in [-127, 127]
	constant_f32 = MCP_GRAPH_INIT_CONSTANT_F32,	// every f32 = scale
	data = MCP_GRAPH_INIT_DATA,			// GraphDef::data from offset seed
};

// How a buffer is filled before the first execution; in the blob as a
// struct mcp_graph_init (<mcp/graph.h> specifies the random stream).
struct GraphInit {
	InitKind kind = InitKind::uniform_f32;
	std::uint64_t seed = 0;
	float scale = 0.0f;

	bool operator==(const GraphInit &) const = default;
};

// Fills @bytes as @init says, element by element as @dtype (f32 for
// uniform_f32 and constant_f32, i8 for uniform_i8); trailing bytes short
// of an element are zeroed.  The Runtime and the tests both use this, so a
// buffer has the same bytes everywhere.  Throws mcp::Error(EINVAL) when
// @dtype does not suit @init.kind, and for InitKind::data (whose bytes
// are the graph's: fill_buffer()).
MCP_EXPORT void fill(const GraphInit &init, DType dtype, std::span<std::byte> bytes);

// ---- typed parameters (the blob's structs, floats as float) ----

struct QuantParam {		// quant_i8, dequant_i8
	float scale = 1.0f;
	std::int32_t zero_point = 0;
	bool operator==(const QuantParam &) const = default;
};
struct MatmulParam {		// matmul; no param means {0, 1.0}
	std::uint32_t flags = 0;	// matmul_trans_a | matmul_trans_b
	float alpha = 1.0f;
	bool operator==(const MatmulParam &) const = default;
};
struct NormParam {		// layernorm
	float eps = 1e-5f;
	bool operator==(const NormParam &) const = default;
};
struct MatmulI8Param {		// matmul_i8
	float scale_a = 1.0f;
	std::int32_t zero_a = 0;
	float scale_b = 1.0f;
	std::int32_t zero_b = 0;
	bool operator==(const MatmulI8Param &) const = default;
};

// The blob bytes of each (8, 8, 8, 16 bytes, little-endian).
MCP_EXPORT std::vector<std::byte> param_bytes(const QuantParam &p);
MCP_EXPORT std::vector<std::byte> param_bytes(const MatmulParam &p);
MCP_EXPORT std::vector<std::byte> param_bytes(const NormParam &p);
MCP_EXPORT std::vector<std::byte> param_bytes(const MatmulI8Param &p);

// ---- the definition ----

struct GraphBuffer {
	std::string name;
	std::uint64_t length = 0;		// bytes; a bound BO must be as long
	std::uint32_t flags = 0;		// graph_buffer_*
	std::optional<GraphInit> init;		// none: left as bound
	// Init bytes read from a graph that are not a struct mcp_graph_init
	// libmcp knows (the kernel only checks their range): kept for round
	// trips, never applied.  Empty when init is set.
	std::vector<std::byte> init_raw;

	bool operator==(const GraphBuffer &) const = default;
};

struct GraphTensor {
	std::string name;
	std::uint32_t buffer = 0;		// index in GraphDef::buffers
	DType dtype = DType::f32;
	Layout layout = Layout::dense;
	std::uint64_t offset = 0;		// multiple of 64
	std::vector<std::uint32_t> dims;	// rank = dims.size(), <= 6

	// Product of dims times the element size (1 element for rank 0);
	// none on overflow or an unknown dtype.
	MCP_EXPORT std::optional<std::uint64_t> bytes() const noexcept;
	// bytes() rounded up to 64: what must fit in the buffer.
	MCP_EXPORT std::optional<std::uint64_t> padded_bytes() const noexcept;

	bool operator==(const GraphTensor &) const = default;
};

struct GraphNode {
	std::string name;
	Op op = Op::nop;
	EngineClass engine = EngineClass::cpu;
	std::uint8_t flags = 0;			// graph_node_inplace
	std::vector<std::uint32_t> inputs;	// tensor indices, <= 4
	std::vector<std::uint32_t> outputs;	// tensor indices, <= 2
	std::vector<std::byte> param;		// blob bytes, <= 256

	// The parameters decoded; none when param has not that struct's size.
	// matmul() of a node without parameters is {0, 1.0}.
	MCP_EXPORT std::optional<QuantParam> quant() const;
	MCP_EXPORT std::optional<MatmulParam> matmul() const;
	MCP_EXPORT std::optional<NormParam> norm() const;
	MCP_EXPORT std::optional<MatmulI8Param> matmul_i8() const;

	bool operator==(const GraphNode &) const = default;
};

enum class GraphErrorReason : std::uint32_t {
	none = MCP_GRAPH_ERROR_NONE,
	header = MCP_GRAPH_ERROR_HEADER,
	limit = MCP_GRAPH_ERROR_LIMIT,
	range = MCP_GRAPH_ERROR_RANGE,
	buffer = MCP_GRAPH_ERROR_BUFFER,
	tensor = MCP_GRAPH_ERROR_TENSOR,
	bounds = MCP_GRAPH_ERROR_BOUNDS,
	op = MCP_GRAPH_ERROR_OP,
	engine = MCP_GRAPH_ERROR_ENGINE,
	arity = MCP_GRAPH_ERROR_ARITY,
	shape = MCP_GRAPH_ERROR_SHAPE,
	param = MCP_GRAPH_ERROR_PARAM,
	alias = MCP_GRAPH_ERROR_ALIAS,
	writers = MCP_GRAPH_ERROR_WRITERS,
	cycle = MCP_GRAPH_ERROR_CYCLE,
	encoding = MCP_GRAPH_ERROR_ENCODING,
};
enum class GraphErrorKind : std::uint32_t {
	header = MCP_GRAPH_AT_HEADER_ENTRY,
	buffer = MCP_GRAPH_AT_BUFFER_ENTRY,
	tensor = MCP_GRAPH_AT_TENSOR_ENTRY,
	node = MCP_GRAPH_AT_NODE_ENTRY,
};
// "header", "limit", ... "cycle" ("none"); "header", "buffer", "tensor", "node".
MCP_EXPORT const char *to_string(GraphErrorReason reason) noexcept;
MCP_EXPORT const char *to_string(GraphErrorKind kind) noexcept;

// Why a graph is invalid: the kernel's (error_reason, error_kind,
// error_index) and a sentence naming the entry and what is wrong, e.g.
// "node 3 (matmul 'q_proj'): inner dimensions differ: [64 x 128] x [64 x 32]".
struct GraphError {
	GraphErrorReason reason = GraphErrorReason::none;
	GraphErrorKind kind = GraphErrorKind::header;
	std::uint32_t index = 0;
	std::string message;
};

// Thrown by parsing (binary or JSON) and validation: errnum() EINVAL,
// what() the sentence, error() the details.  JSON mistakes that are not
// graph rules (syntax, unknown names) have reason none and name the JSON
// path: "nodes[3].inputs[1]: no tensor named 'kk'".
class MCP_EXPORT GraphInvalid : public Error {
public:
	explicit GraphInvalid(GraphError error);
	const GraphError &error() const noexcept { return error_; }

private:
	GraphError error_;
};

// The validator's limits; the defaults are the kernel's knob defaults.
struct GraphLimits {
	std::uint32_t max_nodes = 4096;
	std::uint32_t max_tensors = 16384;
	std::uint32_t max_blob = 1U << 20;
};

// How binary bytes encode the tables (graphs.rst, "Compact encoding"):
// compact (format version 2, varints) needs a kernel with
// feature::graph_compact; fixed (version 1) runs on every kernel.
enum class GraphEncoding : std::uint16_t {
	fixed = MCP_GRAPH_ENCODING_FIXED,
	compact = MCP_GRAPH_ENCODING_COMPACT,
};
// "fixed", "compact"; and back.
MCP_EXPORT const char *to_string(GraphEncoding encoding) noexcept;
MCP_EXPORT std::optional<GraphEncoding> parse_graph_encoding(std::string_view name) noexcept;
// The encoding of binary bytes, from the header alone; none when they do
// not start with a version 1 or 2 graph header.
MCP_EXPORT std::optional<GraphEncoding> graph_encoding(std::span<const std::byte> bytes) noexcept;

// Checks binary bytes against every rule of Documentation/graphs.rst in
// the kernel's order, except what needs the kernel (BO handles and
// lengths, a device engine being present).  None when valid.
MCP_EXPORT std::optional<GraphError> check_graph(std::span<const std::byte> bytes,
						 const GraphLimits &limits = {});

class MCP_EXPORT GraphDef {
public:
	std::string name;
	std::vector<GraphBuffer> buffers;
	std::vector<GraphTensor> tensors;
	std::vector<GraphNode> nodes;
	// The data section: the bytes of InitKind::data buffers (initializers
	// of an imported model).  Not part of the kernel's graph: serialize()
	// leaves it out, serialize_file() stores it after the graph.
	std::vector<std::byte> data;
	// Free text about how the graph was made (an importer's choices, one
	// per line); stored by serialize_file() beside the data.
	std::string notes;

	// Reads binary bytes in either encoding; they are check_graph()ed
	// first.  Throws GraphInvalid.
	static GraphDef parse(std::span<const std::byte> bytes, const GraphLimits &limits = {});
	// The binary form (names, params and inits in the blob, in entry
	// order).  Throws GraphInvalid (reason tensor, arity or header)
	// only when a field cannot be encoded: rank > 6, > 4 inputs or > 2
	// outputs, a blob over 4 GiB; everything else is validate()'s.
	std::vector<std::byte> serialize(GraphEncoding encoding = GraphEncoding::compact) const;
	// A .mgph file: serialize(@encoding), then, when data or notes are
	// not empty, a data trailer (graphs.rst, "Data section").
	std::vector<std::byte> serialize_file(GraphEncoding encoding = GraphEncoding::compact) const;
	// Reads a .mgph file: the graph (parse()) and its data trailer; every
	// InitKind::data range must lie inside the data.  Throws GraphInvalid.
	static GraphDef parse_file(std::span<const std::byte> bytes, const GraphLimits &limits = {});
	// None when valid; else the first error, as the kernel would give it.
	std::optional<GraphError> validate(const GraphLimits &limits = {}) const;

	// JSON (graphs.rst, "JSON schema"): compact, or indented by 2.
	std::string to_json(bool pretty = false) const;
	// Reads JSON; tensors and nodes may name buffers and tensors by name
	// or index; missing offsets and lengths are allocated as GraphBuilder
	// does.  The result is validated.  Throws GraphInvalid.
	static GraphDef from_json(std::string_view json, const GraphLimits &limits = {});

	// Dependencies (graphs.rst, "Dependencies"), valid graphs only:
	// successors()[i]: the nodes that wait for node i, ascending;
	// predecessors()[i]: the nodes node i waits for.
	std::vector<std::vector<std::uint32_t>> successors() const;
	std::vector<std::vector<std::uint32_t>> predecessors() const;
	// Every node once, each after its predecessors (Kahn, lowest ready
	// index first).  Throws GraphInvalid(cycle) on a cycle.
	std::vector<std::uint32_t> topological_order() const;

	// Unpadded bytes of tensor @index (0 when out of range or overflowing).
	std::uint64_t tensor_bytes(std::uint32_t index) const noexcept;
	// Sum of the buffer lengths: the memory the graph needs.
	std::uint64_t total_bytes() const noexcept;

	// Index of the entry called @name; none if absent (first if repeated).
	std::optional<std::uint32_t> find_buffer(std::string_view name) const noexcept;
	std::optional<std::uint32_t> find_tensor(std::string_view name) const noexcept;
	std::optional<std::uint32_t> find_node(std::string_view name) const noexcept;

	// Fills buffer @index's first length bytes at @memory as its init says
	// (InitKind::data from data; nothing when it has no init).  Throws
	// mcp::Error(EINVAL) for a data range outside data or a short @memory.
	void fill_buffer(std::uint32_t index, std::span<std::byte> memory) const;

	bool operator==(const GraphDef &) const = default;
};

// Builds a GraphDef entry by entry.  Tensors are placed at the end of
// their buffer on a 64-byte line and the buffer's length grows to hold
// them padded.  Indices are returned for wiring nodes.  Argument errors
// (an index out of range, rank > 6, too many inputs) throw
// mcp::Error(EINVAL) at once; graph rules are checked by build().
class MCP_EXPORT GraphBuilder {
public:
	explicit GraphBuilder(std::string name = {});
	// Continues @def (appends after its entries).
	explicit GraphBuilder(GraphDef def);

	std::uint32_t buffer(std::string name, std::uint32_t flags = 0,
			     std::optional<GraphInit> init = std::nullopt);
	std::uint32_t tensor(std::string name, std::uint32_t buffer, DType dtype,
			     std::vector<std::uint32_t> dims, Layout layout = Layout::dense);
	// A tensor over the same bytes as tensor @of (same buffer and offset):
	// another shape, dtype or layout of the same data (bytes may differ;
	// the buffer grows if the view is longer).
	std::uint32_t view(std::string name, std::uint32_t of, DType dtype,
			   std::vector<std::uint32_t> dims, Layout layout = Layout::dense);
	std::uint32_t node(Op op, EngineClass engine, std::vector<std::uint32_t> inputs,
			   std::vector<std::uint32_t> outputs, std::vector<std::byte> param = {},
			   std::string name = {}, std::uint8_t flags = 0);

	// What was built so far, not validated.
	const GraphDef &def() const noexcept { return def_; }
	// Validates (throws GraphInvalid) and returns the definition.
	GraphDef build(const GraphLimits &limits = {}) const;

private:
	void grow(std::uint32_t buffer, std::uint64_t end);
	GraphDef def_;
};

// The demo: one transformer attention block (graphs.rst, "Demo block").
struct DemoAttentionOptions {
	std::uint32_t seq = 64;		// S, rows of X; a multiple of 16
	std::uint32_t model_dim = 128;	// Dm; a multiple of 8 (the TILE16 view)
	std::uint32_t heads = 4;	// heads * head_dim == model_dim
	std::uint32_t head_dim = 32;
	std::uint64_t seed = 0x6d6370;	// the weights' seed ("mcp")
};

// Buffers "x" (input, X [S][Dm] f32), "weights", "biases", "ln_gamma",
// "ln_beta" (const, filled from the seed), "act" (intermediates), "out"
// (output [S][Dm]) and "tiled" (output: the accelerator hand-off copy).
// Throws mcp::Error(EINVAL) for inconsistent options.
MCP_EXPORT GraphDef demo_attention_block(const DemoAttentionOptions &options = {});

} // namespace mcp

#endif // MCP_GRAPH_HPP
