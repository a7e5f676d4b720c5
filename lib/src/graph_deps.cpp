// SPDX-License-Identifier: LGPL-2.1-or-later
// Graph dependencies: which node waits for which (graphs.rst,
// "Dependencies"; the kernel's mcp_graph.c computes the same edges), and
// the topological order.
#include <algorithm>
#include <functional>
#include <queue>

#include "graph_internal.hpp"

namespace mcp {
namespace detail {

bool overlap(const DepTensor &a, const DepTensor &b) noexcept
{
	if (a.buffer != b.buffer || a.bytes == 0 || b.bytes == 0)
		return false;
	// Valid graphs keep offset + bytes inside a buffer length: no overflow.
	return a.offset < b.offset + b.bytes && b.offset < a.offset + a.bytes;
}

bool identical(const DepTensor &a, const DepTensor &b) noexcept
{
	return a.buffer == b.buffer && a.offset == b.offset && a.bytes == b.bytes;
}

bool inplace_active(std::span<const DepTensor> tensors, const DepNode &node) noexcept
{
	return node.inplace && !node.inputs.empty() && !node.outputs.empty() &&
	       identical(tensors[node.outputs[0]], tensors[node.inputs[0]]);
}

namespace {

// Does any tensor of @list overlap @t?
bool any_overlap(std::span<const DepTensor> tensors, const std::vector<std::uint32_t> &list,
		 const DepTensor &t)
{
	return std::any_of(list.begin(), list.end(),
			   [&](std::uint32_t i) { return overlap(tensors[i], t); });
}

// Does an input of @reader overlap an output of @writer?
bool reads_from(std::span<const DepTensor> tensors, const DepNode &reader, const DepNode &writer)
{
	return std::any_of(writer.outputs.begin(), writer.outputs.end(), [&](std::uint32_t o) {
		return any_overlap(tensors, reader.inputs, tensors[o]);
	});
}

// Does @node have an input or output overlapping @t?
bool touches(std::span<const DepTensor> tensors, const DepNode &node, const DepTensor &t)
{
	return any_overlap(tensors, node.inputs, t) || any_overlap(tensors, node.outputs, t);
}

// One tensor of one node, for the sweep.
struct Use {
	std::uint32_t buffer;
	std::uint64_t start;
	std::uint64_t end;
	std::uint32_t node;
	bool write;
};

} // namespace

std::vector<std::pair<std::uint32_t, std::uint32_t>>
conflict_pairs(std::span<const DepTensor> tensors, std::span<const DepNode> nodes)
{
	std::vector<Use> uses;
	std::vector<std::pair<std::uint32_t, std::uint32_t>> pairs;

	for (std::uint32_t n = 0; n < nodes.size(); n++) {
		for (int write = 0; write < 2; write++) {
			for (std::uint32_t t : write ? nodes[n].outputs : nodes[n].inputs) {
				const DepTensor &x = tensors[t];
				if (x.bytes)
					uses.push_back({x.buffer, x.offset, x.offset + x.bytes, n, write != 0});
			}
		}
	}
	std::sort(uses.begin(), uses.end(), [](const Use &a, const Use &b) {
		return a.buffer != b.buffer ? a.buffer < b.buffer : a.start < b.start;
	});

	// Uses still open at the current start, in the current buffer.
	std::vector<const Use *> open;
	for (const Use &u : uses) {
		std::erase_if(open, [&](const Use *o) { return o->buffer != u.buffer || o->end <= u.start; });
		for (const Use *o : open) {
			// Two reads never order or conflict.
			if (o->node != u.node && (o->write || u.write))
				pairs.emplace_back(std::min(o->node, u.node), std::max(o->node, u.node));
		}
		open.push_back(&u);
	}
	std::sort(pairs.begin(), pairs.end(), [](const auto &x, const auto &y) {
		return x.second != y.second ? x.second < y.second : x.first < y.first;
	});
	pairs.erase(std::unique(pairs.begin(), pairs.end()), pairs.end());
	return pairs;
}

std::vector<std::vector<std::uint32_t>> dependency_successors(std::span<const DepTensor> tensors,
							      std::span<const DepNode> nodes)
{
	const std::size_t n = nodes.size();
	std::vector<std::vector<std::uint32_t>> succ(n);
	std::vector<char> active(n);

	for (std::size_t i = 0; i < n; i++)
		active[i] = inplace_active(tensors, nodes[i]);

	// A pair outside conflict_pairs() shares no written byte: no edge.
	for (const auto &[a, b] : conflict_pairs(tensors, nodes)) {
		const bool a_pins = active[a] &&
				    touches(tensors, nodes[b], tensors[nodes[a].outputs[0]]);
		const bool b_pins = active[b] &&
				    touches(tensors, nodes[a], tensors[nodes[b].outputs[0]]);

		if (a_pins || b_pins) {
			succ[a].push_back(b);
			continue;
		}
		if (reads_from(tensors, nodes[b], nodes[a]))
			succ[a].push_back(b);
		if (reads_from(tensors, nodes[a], nodes[b]))
			succ[b].push_back(a);
	}
	for (auto &s : succ) {
		std::sort(s.begin(), s.end());
		s.erase(std::unique(s.begin(), s.end()), s.end());
	}
	return succ;
}

std::vector<std::uint32_t> kahn_order(const std::vector<std::vector<std::uint32_t>> &successors,
				      std::optional<std::uint32_t> &stuck)
{
	const std::size_t n = successors.size();
	std::vector<std::uint32_t> waiting(n, 0);
	std::priority_queue<std::uint32_t, std::vector<std::uint32_t>, std::greater<>> ready;
	std::vector<std::uint32_t> order;

	for (const auto &s : successors)
		for (std::uint32_t b : s)
			waiting[b]++;
	for (std::uint32_t i = 0; i < n; i++)
		if (waiting[i] == 0)
			ready.push(i);
	while (!ready.empty()) {
		const std::uint32_t i = ready.top();

		ready.pop();
		order.push_back(i);
		for (std::uint32_t b : successors[i])
			if (--waiting[b] == 0)
				ready.push(b);
	}
	stuck.reset();
	for (std::uint32_t i = 0; i < n && order.size() < n; i++) {
		if (waiting[i] != 0) {
			stuck = i;
			break;
		}
	}
	return order;
}

std::vector<DepTensor> dep_tensors(const GraphDef &def)
{
	std::vector<DepTensor> out;

	out.reserve(def.tensors.size());
	for (const auto &t : def.tensors)
		out.push_back({t.buffer, t.offset, t.bytes().value_or(0)});
	return out;
}

std::vector<DepNode> dep_nodes(const GraphDef &def)
{
	std::vector<DepNode> out;

	out.reserve(def.nodes.size());
	for (const auto &n : def.nodes)
		out.push_back({n.inputs, n.outputs, (n.flags & graph_node_inplace) != 0});
	return out;
}

} // namespace detail

namespace {

// Throws GraphInvalid unless every index of @def is in range (the edges
// would read past the tensor table).
void check_indices(const GraphDef &def)
{
	for (std::uint32_t i = 0; i < def.nodes.size(); i++) {
		const auto &n = def.nodes[i];

		for (const auto *list : {&n.inputs, &n.outputs})
			for (std::uint32_t t : *list)
				if (t >= def.tensors.size())
					throw GraphInvalid(detail::make_graph_error(
						GraphErrorReason::arity, GraphErrorKind::node, i,
						detail::graph_entry_label(GraphErrorKind::node, i, n.name, n.op),
						"tensor index " + std::to_string(t) + " is past the " +
							std::to_string(def.tensors.size()) + " tensors"));
	}
}

} // namespace

std::vector<std::vector<std::uint32_t>> GraphDef::successors() const
{
	check_indices(*this);
	const auto t = detail::dep_tensors(*this);
	const auto n = detail::dep_nodes(*this);
	return detail::dependency_successors(t, n);
}

std::vector<std::vector<std::uint32_t>> GraphDef::predecessors() const
{
	const auto succ = successors();
	std::vector<std::vector<std::uint32_t>> pred(succ.size());

	// Walking a in ascending order keeps every pred list ascending.
	for (std::uint32_t a = 0; a < succ.size(); a++)
		for (std::uint32_t b : succ[a])
			pred[b].push_back(a);
	return pred;
}

std::vector<std::uint32_t> GraphDef::topological_order() const
{
	std::optional<std::uint32_t> stuck;
	auto order = detail::kahn_order(successors(), stuck);

	if (stuck)
		throw GraphInvalid(detail::make_graph_error(
			GraphErrorReason::cycle, GraphErrorKind::node, *stuck,
			detail::graph_entry_label(GraphErrorKind::node, *stuck, nodes[*stuck].name,
						  nodes[*stuck].op),
			"cannot be scheduled: it is on, or waits for, a dependency cycle"));
	return order;
}

} // namespace mcp
