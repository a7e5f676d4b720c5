// SPDX-License-Identifier: LGPL-2.1-or-later
// libmcp: ONNX import (C++).  An ONNX model file becomes a GraphDef whose
// initializers are one const buffer filled from the graph's data section
// (InitKind::data) and whose activations are planned by liveness.
// Documentation/onnx.rst lists the operators and how they map.  C API:
// mcp_graph_import_onnx() in <mcp/graph.h>.
#ifndef MCP_ONNX_HPP
#define MCP_ONNX_HPP

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <mcp/graph.hpp>

namespace mcp::onnx {

// The default-domain opsets the importer reads.
inline constexpr std::int64_t min_opset = 9;
inline constexpr std::int64_t max_opset = 17;

struct ImportOptions {
	// Fixed dims of graph inputs, by input name: every dynamic dimension
	// of a named input takes the value given here (the rank must match,
	// and static dimensions must agree).
	std::vector<std::pair<std::string, std::vector<std::int64_t>>> inputs;
	// What an unnamed dynamic first (batch) dimension becomes; the graph's
	// notes record the choice.  Other dynamic dimensions must be named.
	std::int64_t default_batch = 1;
	// The graph's name; empty: the model file's stem.
	std::string name;
};

// "x=1x3x224x224" -> {"x", {1, 3, 224, 224}}.  Throws mcp::Error(EINVAL)
// naming what is wrong.
MCP_EXPORT std::pair<std::string, std::vector<std::int64_t>> parse_input_spec(std::string_view spec);

// What one import planned (also in GraphDef::notes, one "key: value" line each).
struct ImportStats {
	std::uint64_t const_bytes = 0;		// the const buffer (initializers)
	std::uint64_t activation_bytes = 0;	// the planned activation buffer
	std::uint64_t unplanned_bytes = 0;	// every activation in its own memory
						// (outputs of nodes not writing a graph output)
	std::uint32_t onnx_nodes = 0;
	std::uint32_t folded = 0;		// nodes computed at import
	std::uint32_t views = 0;		// Reshape & co. that became views
	std::uint32_t fused = 0;		// nodes absorbed by fused operators
	std::uint32_t inplace = 0;		// graph nodes that write over their input
};

// Reads the ONNX model at @path: opset 9..17 of the default domain, the
// ONNX checker and shape inference, then the mapping.  Throws
// mcp::Error(EINVAL) with one message naming the file and the node or
// tensor (every unsupported node listed: name, op type, opset, why), or
// the errno of reading the file.  Never returns a partial graph.
MCP_EXPORT GraphDef import(const std::string &path, const ImportOptions &options = {},
			   ImportStats *stats = nullptr);

} // namespace mcp::onnx

#endif // MCP_ONNX_HPP
