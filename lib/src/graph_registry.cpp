// SPDX-License-Identifier: LGPL-2.1-or-later
// The Runtime's node descriptors per loaded graph: a chain read names only
// the graph's handle and node indices, so the workers look up here, once
// per chain, what a worker job would have carried for each node.
#include <algorithm>
#include <mutex>

#include "runtime_internal.hpp"

namespace mcp::detail {

GraphDescs GraphDescs::of(const GraphDef &def)
{
	GraphDescs d;

	d.n_buffers = static_cast<std::uint32_t>(def.buffers.size());
	d.tensors.reserve(def.tensors.size());
	for (const GraphTensor &t : def.tensors) {
		struct mcp_worker_tensor w = {};
		std::size_t rank = std::min<std::size_t>(t.dims.size(), MCP_GRAPH_MAX_RANK);

		w.handle = t.buffer;
		w.dtype = static_cast<std::uint8_t>(t.dtype);
		w.rank = static_cast<std::uint8_t>(rank);
		w.layout = static_cast<std::uint8_t>(t.layout);
		w.offset = t.offset;
		std::copy_n(t.dims.begin(), rank, w.dims);
		d.tensors.push_back(w);
	}
	d.nodes.reserve(def.nodes.size());
	for (const GraphNode &n : def.nodes) {
		Node node;
		bool valid = n.inputs.size() <= MCP_GRAPH_MAX_INPUTS &&
			     n.outputs.size() <= MCP_GRAPH_MAX_OUTPUTS &&
			     n.param.size() <= MCP_GRAPH_MAX_PARAM;
		unsigned k = 0;

		for (const std::vector<std::uint32_t> *list : {&n.inputs, &n.outputs})
			for (std::uint32_t t : *list) {
				valid = valid && t < d.tensors.size();
				if (valid)
					node.tensor[k++] = t;
			}
		if (valid) {
			node.op = static_cast<std::uint16_t>(n.op);
			node.n_inputs = static_cast<std::uint8_t>(n.inputs.size());
			node.n_outputs = static_cast<std::uint8_t>(n.outputs.size());
			node.param_offset = static_cast<std::uint32_t>(d.params.size());
			node.param_len = static_cast<std::uint32_t>(n.param.size());
			d.params.insert(d.params.end(), n.param.begin(), n.param.end());
		} else {
			node = Node();
			node.op = invalid_op;
		}
		d.nodes.push_back(node);
	}
	return d;
}

void GraphRegistry::add(std::uint32_t handle, Ref descs)
{
	std::unique_lock guard(lock_);

	map_[handle] = std::move(descs);
}

void GraphRegistry::remove(std::uint32_t handle) noexcept
{
	Ref gone;
	std::unique_lock guard(lock_);
	auto it = map_.find(handle);

	// Freed after the lock is dropped, unless a chain still holds it.
	if (it != map_.end()) {
		gone = std::move(it->second);
		map_.erase(it);
	}
}

GraphRegistry::Ref GraphRegistry::find(std::uint32_t handle) const
{
	std::shared_lock guard(lock_);
	auto it = map_.find(handle);

	return it == map_.end() ? Ref() : it->second;
}

std::size_t GraphRegistry::size() const
{
	std::shared_lock guard(lock_);

	return map_.size();
}

} // namespace mcp::detail
