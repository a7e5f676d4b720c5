// SPDX-License-Identifier: GPL-2.0-only
// mcpctl info: the NUMA topology as the mcp module sees it, in the format of
// `numactl --hardware`.
#include <ostream>

#include <fmt/format.h>

#include "commands.hpp"
#include "output.hpp"

namespace mcpctl {

std::string format_info_text(const mcp::Topology &topo)
{
	const std::vector<mcp::Node> &nodes = topo.nodes();
	std::vector<unsigned> ids;
	std::string s;

	for (const mcp::Node &node : nodes)
		ids.push_back(node.id);

	s += fmt::format("available: {} nodes ({})\n", nodes.size(), format_ranges(ids));
	for (const mcp::Node &node : nodes) {
		s += fmt::format("node {} cpus:", node.id);
		for (unsigned cpu : node.cpus)
			s += fmt::format(" {}", cpu);
		s += '\n';
		s += fmt::format("node {} size: {}\n", node.id, format_mb(node.mem_total_bytes));
		s += fmt::format("node {} free: {}\n", node.id, format_mb(node.mem_free_bytes));
	}

	// numactl prints "% 3d " cells and decides on the (last, first) distance.
	if (nodes.empty() || topo.distance_at(nodes.size() - 1, 0) == 0) {
		s += "No distance information available.\n";
	} else {
		s += "node distances:\nnode ";
		for (const mcp::Node &node : nodes)
			s += fmt::format("{: 3d} ", static_cast<long long>(node.id));
		s += '\n';
		for (std::size_t i = 0; i < nodes.size(); i++) {
			s += fmt::format("{: 3d}: ", static_cast<long long>(nodes[i].id));
			for (std::size_t j = 0; j < nodes.size(); j++)
				s += fmt::format("{: 3d} ", static_cast<long long>(topo.distance_at(i, j)));
			s += '\n';
		}
	}

	s += fmt::format("cpus online: {} (nr_cpu_ids {})\n", topo.cpus_online(),
			 topo.nr_cpu_ids());
	return s;
}

nlohmann::ordered_json info_json(const mcp::Topology &topo)
{
	const std::vector<mcp::Node> &nodes = topo.nodes();
	nlohmann::ordered_json jnodes = nlohmann::ordered_json::array();
	nlohmann::ordered_json distances = nlohmann::ordered_json::array();

	for (std::size_t i = 0; i < nodes.size(); i++) {
		nlohmann::ordered_json row = nlohmann::ordered_json::array();

		jnodes.push_back({
			{"id", nodes[i].id},
			{"cpus", nodes[i].cpus},
			{"mem_total_bytes", nodes[i].mem_total_bytes},
			{"mem_free_bytes", nodes[i].mem_free_bytes},
		});
		for (std::size_t j = 0; j < nodes.size(); j++)
			row.push_back(topo.distance_at(i, j));
		distances.push_back(std::move(row));
	}
	return {
		{"nodes", std::move(jnodes)},
		{"distances", std::move(distances)},
		{"cpus_online", topo.cpus_online()},
		{"nr_cpu_ids", topo.nr_cpu_ids()},
	};
}

int run_info(const GlobalOptions &opts, std::ostream &out, std::ostream &err)
{
	mcp::Topology topo;

	try {
		topo = mcp::Device::open().topology();
	} catch (const mcp::Error &e) {
		print_error(err, e.what());
		return exit_failure;
	}
	if (opts.json)
		print_json(out, info_json(topo));
	else
		out << format_info_text(topo);
	out.flush();
	return exit_ok;
}

Command add_info_command(CLI::App &app)
{
	CLI::App *sub = app.add_subcommand(
		"info", "Show the NUMA topology (nodes, CPUs, memory, distances) like 'numactl --hardware'");

	sub->footer("With --json, prints one object: "
		    "{\"nodes\":[{\"id\",\"cpus\",\"mem_total_bytes\",\"mem_free_bytes\"}],"
		    "\"distances\":[[...]],\"cpus_online\",\"nr_cpu_ids\"} "
		    "(see Documentation/mcpctl.rst).");
	return {sub, run_info};
}

} // namespace mcpctl
