// SPDX-License-Identifier: LGPL-2.1-or-later
// Runtime::run_inline(): a graph run in the calling thread, node by node
// in topological order, with the same operators as the workers and the
// kernel's data-movement operators in C++.  The selftests' and
// benchmarks' baseline.
#include <cerrno>
#include <cstring>
#include <string>

#include "runtime_internal.hpp"

namespace mcp {

namespace {

detail::OpTensor inline_tensor(const GraphDef &def, std::uint32_t index,
			       std::span<const std::span<std::byte>> buffers)
{
	const GraphTensor &t = def.tensors.at(index);
	detail::OpTensor o;

	o.dtype = static_cast<std::uint8_t>(t.dtype);
	o.layout = static_cast<std::uint8_t>(t.layout);
	o.rank = static_cast<std::uint8_t>(t.dims.size());
	for (std::size_t k = 0; k < t.dims.size() && k < graph_max_rank; k++)
		o.dims[k] = t.dims[k];
	o.bytes = detail::tensor_bytes(o);
	o.data = buffers[t.buffer].data() + t.offset;
	return o;
}

} // namespace

void Runtime::run_inline(const GraphDef &def, std::span<const std::span<std::byte>> buffers)
{
	if (std::optional<GraphError> e = def.validate())
		throw GraphInvalid(*e);
	detail::require_blas(def, detail::blas_load_error());
	if (buffers.size() != def.buffers.size())
		throw Error(EINVAL, "run_inline: " + std::to_string(buffers.size()) +
					    " buffers given for a graph of " +
					    std::to_string(def.buffers.size()));
	for (std::size_t i = 0; i < buffers.size(); i++)
		if (buffers[i].size() < def.buffers[i].length)
			throw Error(EINVAL, "run_inline: buffer " + std::to_string(i) + " is " +
						    std::to_string(buffers[i].size()) +
						    " bytes, the graph needs " +
						    std::to_string(def.buffers[i].length));
	// Data-section buffers (an imported model's initializers) are loaded
	// here, as Runtime::load() does: the caller cannot know their bytes.
	for (std::size_t i = 0; i < buffers.size(); i++)
		if (def.buffers[i].init && def.buffers[i].init->kind == InitKind::data)
			def.fill_buffer(static_cast<std::uint32_t>(i), buffers[i]);
	for (std::uint32_t index : def.topological_order()) {
		const GraphNode &n = def.nodes[index];
		detail::OpTensor in[graph_max_inputs], out[graph_max_outputs];
		for (std::size_t k = 0; k < n.inputs.size(); k++)
			in[k] = inline_tensor(def, n.inputs[k], buffers);
		for (std::size_t k = 0; k < n.outputs.size(); k++)
			out[k] = inline_tensor(def, n.outputs[k], buffers);
		int err = detail::run_op(static_cast<std::uint16_t>(n.op), std::span(in, n.inputs.size()),
					 std::span(out, n.outputs.size()), n.param, true);
		if (err)
			throw Error(-err, "run_inline: " + detail::node_label(def, index) +
						  " failed: " + std::strerror(-err));
	}
}

} // namespace mcp
