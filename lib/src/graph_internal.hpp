// SPDX-License-Identifier: LGPL-2.1-or-later
// libmcp internals of graph definitions: the pieces the serializer,
// validator, JSON and C API share.  Not installed.
#ifndef MCP_SRC_GRAPH_INTERNAL_HPP
#define MCP_SRC_GRAPH_INTERNAL_HPP

#include <algorithm>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <mcp/graph.hpp>

#include "internal.hpp"

namespace mcp::detail {

// Sizes of the binary sections (<linux/mcp.h>); checked in graph_serialize.cpp.
inline constexpr std::size_t graph_header_size = 48;
inline constexpr std::size_t graph_buffer_entry_size = 32;
inline constexpr std::size_t graph_tensor_entry_size = 48;
inline constexpr std::size_t graph_node_entry_size = 48;
inline constexpr std::size_t graph_init_size = 24;

// What dependencies need of a tensor: its bytes in a buffer.
struct DepTensor {
	std::uint32_t buffer = 0;
	std::uint64_t offset = 0;
	std::uint64_t bytes = 0;	// unpadded
};

// What dependencies need of a node.
struct DepNode {
	std::vector<std::uint32_t> inputs;
	std::vector<std::uint32_t> outputs;
	bool inplace = false;		// has the INPLACE flag
};

// Same buffer and intersecting unpadded bytes (empty never overlaps).
bool overlap(const DepTensor &a, const DepTensor &b) noexcept;
// Same buffer, offset and bytes.
bool identical(const DepTensor &a, const DepTensor &b) noexcept;
// INPLACE and out0 identical to in0: ordered by index against every node
// that touches its out0.
bool inplace_active(std::span<const DepTensor> tensors, const DepNode &node) noexcept;

// The pairs of distinct nodes (a < b) where a tensor one writes overlaps a
// tensor the other reads or writes, ascending by (b, a): every pair that
// can have an edge or a writers conflict.  A sweep over each buffer's
// byte ranges, so that long chains do not cost O(n^2).
std::vector<std::pair<std::uint32_t, std::uint32_t>>
conflict_pairs(std::span<const DepTensor> tensors, std::span<const DepNode> nodes);

// The dependency edges of graphs.rst ("Dependencies"): successors of
// each node, ascending, without duplicates.  Indices must be valid.
std::vector<std::vector<std::uint32_t>> dependency_successors(std::span<const DepTensor> tensors,
							      std::span<const DepNode> nodes);
// Kahn's algorithm, lowest ready index first.  Returns the order; when a
// cycle leaves nodes unscheduled, @stuck gets the lowest of them.
std::vector<std::uint32_t> kahn_order(const std::vector<std::vector<std::uint32_t>> &successors,
				      std::optional<std::uint32_t> &stuck);

// The DepTensor/DepNode view of a definition (tensor bytes 0 on overflow).
std::vector<DepTensor> dep_tensors(const GraphDef &def);
std::vector<DepNode> dep_nodes(const GraphDef &def);

// "buffer 2 ('weights')", "tensor 5 ('q0')", "node 3 (matmul 'q_proj')".
std::string graph_entry_label(GraphErrorKind kind, std::uint32_t index, std::string_view name,
			      std::optional<Op> op = std::nullopt);
// "[64 x 128]"
std::string dims_text(std::span<const std::uint32_t> dims);

// A GraphError whose message is "<label>: <what>" (or just @what for the
// header).
GraphError make_graph_error(GraphErrorReason reason, GraphErrorKind kind, std::uint32_t index,
			    std::string label, const std::string &what);

// The blob encoding of an init and back (none: not 24 bytes or a bad kind).
std::vector<std::byte> init_bytes(const GraphInit &init);
std::optional<GraphInit> decode_init(std::span<const std::byte> bytes);

// The compact encoding (graph_compact.cpp).  The fewest and most bytes the
// tables of @h's counts can take (the most with the padding).
std::uint64_t compact_min_tables(const struct mcp_graph_header &h) noexcept;
std::uint64_t compact_max_tables(const struct mcp_graph_header &h) noexcept;
// Where and why version 2 tables cannot be decoded (reason ENCODING).
struct CompactFailure {
	GraphErrorKind kind;
	std::uint32_t index;
	std::string what;
};
// Decodes the tables section into the version 1 records (sized by the
// header's counts), as kmod/mcp_graph_decode.c does.
std::optional<CompactFailure> decode_compact_tables(std::span<const std::byte> tables,
						    std::span<struct mcp_graph_buffer> buffers,
						    std::span<struct mcp_graph_tensor> tensors,
						    std::span<struct mcp_graph_node> nodes);
// A consistent version 1 image (serialize(fixed)) in version 2.
std::vector<std::byte> compact_from_fixed(std::span<const std::byte> fixed);
// The version 1 image of version 1 or 2 bytes after the header checks and
// the decoding (not the rest of the rules); the refusal otherwise.
std::vector<std::byte> fixed_image(std::span<const std::byte> bytes, const GraphLimits &limits,
				   std::optional<GraphError> &refused);

// A refusal into the C API's struct mcp_graph_invalid (ignored when @err is
// NULL or older than this library's); c_api_graph.cpp and c_api_runtime.cpp.
void put_graph_invalid(struct mcp_graph_invalid *err, const GraphError &e) noexcept;

// The numpy broadcast of shapes @a and @b; none when they do not broadcast.
// For the validator's dims and the ONNX importer's (int64) shapes alike.
template <typename T>
std::optional<std::vector<T>> numpy_broadcast(std::span<const T> a, std::span<const T> b)
{
	std::vector<T> out(std::max(a.size(), b.size()));
	for (std::size_t k = 0; k < out.size(); k++) {
		const T da = k < a.size() ? a[a.size() - 1 - k] : 1;
		const T db = k < b.size() ? b[b.size() - 1 - k] : 1;
		if (da != db && da != 1 && db != 1)
			return std::nullopt;
		out[out.size() - 1 - k] = da == 1 ? db : da;
	}
	return out;
}

// The C++ definition behind a C API handle (<mcp/graph.h>), data section
// and notes included: the runtime's C API loads it as it is.
const GraphDef &graph_def_of(const struct ::mcp_graph_def *graph);

} // namespace mcp::detail

#endif // MCP_SRC_GRAPH_INTERNAL_HPP
