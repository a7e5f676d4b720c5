// SPDX-License-Identifier: LGPL-2.1-or-later
// NUMA topology: mcp::Topology, decoding the kernel's arrays, the
// size-query/allocate/retry dance of MCP_IOC_GET_TOPOLOGY, and which node's
// memory a buffer can go on (the one check behind every --node).
#include <algorithm>
#include <bit>
#include <cerrno>
#include <limits>
#include <numeric>
#include <optional>
#include <string>
#include <vector>

#include <sys/ioctl.h>

#include "internal.hpp"

namespace mcp {

Topology::Topology(std::vector<Node> nodes, std::vector<unsigned> distances,
		   unsigned cpus_online, unsigned nr_cpu_ids)
	: cpus_online_(cpus_online), nr_cpu_ids_(nr_cpu_ids)
{
	const std::size_t n = nodes.size();

	if (distances.size() != n * n)
		throw Error(EINVAL, "topology: the distance matrix has " +
				    std::to_string(distances.size()) + " entries for " +
				    std::to_string(n) + " nodes (want " +
				    std::to_string(n * n) + ")");

	// Order the nodes by id and permute the matrix along.
	std::vector<std::size_t> order(n);
	std::iota(order.begin(), order.end(), std::size_t{0});
	std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
		return nodes[a].id < nodes[b].id;
	});
	for (std::size_t i = 1; i < n; i++)
		if (nodes[order[i]].id == nodes[order[i - 1]].id)
			throw Error(EINVAL, "topology: node " +
					    std::to_string(nodes[order[i]].id) +
					    " appears twice");

	nodes_.reserve(n);
	distances_.resize(n * n);
	for (std::size_t i = 0; i < n; i++) {
		nodes_.push_back(std::move(nodes[order[i]]));
		for (std::size_t j = 0; j < n; j++)
			distances_[i * n + j] = distances[order[i] * n + order[j]];
	}
}

const Node *Topology::find(unsigned node_id) const noexcept
{
	auto it = std::find_if(nodes_.begin(), nodes_.end(),
			       [&](const Node &node) { return node.id == node_id; });
	return it == nodes_.end() ? nullptr : &*it;
}

unsigned Topology::distance(unsigned node_a_id, unsigned node_b_id) const
{
	const Node *a = find(node_a_id);
	const Node *b = find(node_b_id);

	if (!a || !b)
		throw Error(EINVAL, "topology: no online NUMA node " +
				    std::to_string(a ? node_b_id : node_a_id));
	return distance_at(static_cast<std::size_t>(a - nodes_.data()),
			   static_cast<std::size_t>(b - nodes_.data()));
}

namespace detail {

Topology decode_topology(std::span<const struct mcp_node_info> nodes,
			 std::span<const std::uint64_t> cpumasks,
			 std::uint32_t cpu_words,
			 std::span<const std::uint32_t> distances,
			 std::uint32_t cpus_online, std::uint32_t nr_cpu_ids)
{
	const std::size_t n = nodes.size();

	if (cpumasks.size() < n * cpu_words || distances.size() < n * n)
		throw Error(EPROTO, "the mcp module returned a truncated topology: "
				    "install matching libmcp and mcp module versions");

	std::vector<Node> out;
	out.reserve(n);
	for (std::size_t i = 0; i < n; i++) {
		Node node;

		node.id = nodes[i].node_id;
		node.mem_total_bytes = nodes[i].mem_total_bytes;
		node.mem_free_bytes = nodes[i].mem_free_bytes;
		node.cpus.reserve(nodes[i].nr_cpus);
		for (std::uint32_t w = 0; w < cpu_words; w++) {
			std::uint64_t word = cpumasks[i * cpu_words + w];

			while (word) {
				unsigned bit = static_cast<unsigned>(std::countr_zero(word));

				node.cpus.push_back(w * 64 + bit);
				word &= word - 1;
			}
		}
		for (const Node &prev : out)
			if (prev.id == node.id)
				throw Error(EPROTO, "the mcp module reported NUMA node " +
						    std::to_string(node.id) + " twice");
		out.push_back(std::move(node));
	}

	std::vector<unsigned> dist(distances.begin(),
				   distances.begin() + static_cast<std::ptrdiff_t>(n * n));
	return Topology(std::move(out), std::move(dist), cpus_online, nr_cpu_ids);
}

template <typename T>
static std::uint64_t user_ptr(std::vector<T> &v)
{
	return v.empty() ? 0 : reinterpret_cast<std::uintptr_t>(v.data());
}

Topology fetch_topology(const TopologyIoctl &call, std::string_view path,
			int max_attempts)
{
	std::vector<struct mcp_node_info> nodes;
	std::vector<std::uint64_t> cpumasks;
	std::vector<std::uint32_t> distances;
	std::uint32_t words = 0;

	for (int attempt = 0; attempt < max_attempts; attempt++) {
		struct mcp_topology t {};

		t.size = sizeof(t);
		t.node_info_size = sizeof(struct mcp_node_info); // stride of nodes_ptr
		t.nodes_cap = static_cast<std::uint32_t>(nodes.size());
		t.cpumask_words = words;
		t.nodes_ptr = user_ptr(nodes);
		t.cpumasks_ptr = user_ptr(cpumasks);
		t.distances_ptr = user_ptr(distances);

		int ret = call(t);
		if (ret == 0) {
			if (t.nr_nodes > t.nodes_cap || t.nr_cpu_words > t.cpumask_words)
				throw Error(EPROTO, "the mcp module claims more topology than it was given room for: "
						    "install matching libmcp and mcp module versions");
			const std::size_t n = t.nr_nodes;
			return decode_topology(std::span(nodes).first(n),
					       std::span(cpumasks).first(n * t.nr_cpu_words),
					       t.nr_cpu_words,
					       std::span(distances).first(n * n),
					       t.nr_cpus_online, t.nr_cpu_ids);
		}

		int err = -ret;
		if (err != ENOSPC)
			throw Error(err, ioctl_error_message(err, path, "MCP_IOC_GET_TOPOLOGY"));
		if (t.nr_nodes <= t.nodes_cap && t.nr_cpu_words <= t.cpumask_words)
			throw Error(EPROTO, "the mcp module asked for more room than it reported needing: "
					    "install matching libmcp and mcp module versions");

		// Allocate what the kernel asked for, and retry: a node may
		// come online in between.
		const std::size_t n = t.nr_nodes;
		words = t.nr_cpu_words;
		nodes.assign(n, {});
		cpumasks.assign(n * words, 0);
		distances.assign(n * n, 0);
	}
	throw Error(EAGAIN, "the NUMA topology kept changing while it was read: try again");
}

Topology read_topology(int fd, std::string_view path)
{
	return fetch_topology(
		[fd](struct mcp_topology &t) {
			return ::ioctl(fd, MCP_IOC_GET_TOPOLOGY, &t) == 0 ? 0 : -errno;
		},
		path);
}

Topology context_topology(const Dma &ctx)
{
	if (ctx.is_host())
		return read_topology(ctx.fd(), "/dev/mcp");
	return Device::open().topology();
}

std::optional<unsigned> nearest_memory_node(const Topology &topo, unsigned node_id)
{
	const Node *from = topo.find(node_id);
	std::optional<unsigned> best;
	unsigned best_dist = std::numeric_limits<unsigned>::max();

	if (!from)
		return std::nullopt;
	if (from->mem_total_bytes)
		return node_id;
	// Nodes in ascending id order and a strict '<': ties go to the lowest.
	for (const Node &n : topo.nodes()) {
		if (!n.mem_total_bytes)
			continue;
		unsigned d = topo.distance(node_id, n.id);
		if (d < best_dist) {
			best = n.id;
			best_dist = d;
		}
	}
	return best;
}

// "0, 1", the nodes with memory, or "none".
static std::string memory_nodes_text(const Topology &topo)
{
	std::string s;

	for (const Node &n : topo.nodes())
		if (n.mem_total_bytes)
			s += (s.empty() ? "" : ", ") + std::to_string(n.id);
	return s.empty() ? "none" : s;
}

void require_memory_node(const Topology &topo, int node, const std::string &what)
{
	const Node *n = node >= 0 ? topo.find(static_cast<unsigned>(node)) : nullptr;

	if (n && n->mem_total_bytes)
		return;
	if (!n)
		throw Error(EINVAL, what + ": node " + std::to_string(node) +
					    " is not an online NUMA node; buffers can go on node " +
					    memory_nodes_text(topo) + " ('mcpctl info' lists them)");
	std::optional<unsigned> near = nearest_memory_node(topo, n->id);
	if (!near)
		throw Error(EINVAL, what + ": node " + std::to_string(node) +
					    " has no memory, and no node has");
	throw Error(EINVAL, what + ": node " + std::to_string(node) +
				    " has no memory; nearest with memory: " + std::to_string(*near) +
				    " (distance " + std::to_string(topo.distance(n->id, *near)) + ")");
}

} // namespace detail
} // namespace mcp
