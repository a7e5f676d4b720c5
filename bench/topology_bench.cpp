// SPDX-License-Identifier: GPL-2.0-only
// Benchmark: a NUMA topology snapshot through MCP_IOC_GET_TOPOLOGY (what
// mcpctl info and every libmcp placement decision use) against the baseline
// every NUMA tool uses today: parsing /sys/devices/system/node the way
// numactl --hardware does (online list, cpulist, meminfo, distance).
//
// Both are measured in the same run, on the same host, and must describe
// the same nodes, CPUs and distances; the ratio is what counts (under QEMU
// TCG the absolute times mean little).
//
// Usage: mcp_topology_bench [ITERATIONS]    (default 2000)
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <mcp/mcp.hpp>

#include "bench_timing.hpp"

namespace {

const char *const node_root = "/sys/devices/system/node";

std::string read_file(const std::string &path)
{
	std::ifstream in(path);
	if (!in)
		throw std::runtime_error("cannot read " + path);
	std::ostringstream s;
	s << in.rdbuf();
	return s.str();
}

// "0-3,8,10-11" -> {0,1,2,3,8,10,11}
std::vector<unsigned> parse_list(const std::string &text)
{
	std::vector<unsigned> out;
	std::stringstream s(text);
	std::string range;
	while (std::getline(s, range, ',')) {
		if (range.empty() || range == "\n")
			continue;
		unsigned lo = 0, hi = 0;
		int n = std::sscanf(range.c_str(), "%u-%u", &lo, &hi);
		if (n < 1)
			continue;
		if (n == 1)
			hi = lo;
		for (unsigned v = lo; v <= hi; v++)
			out.push_back(v);
	}
	return out;
}

// "Node 0 MemTotal:  1014816 kB" -> bytes
std::uint64_t meminfo_bytes(const std::string &meminfo, const char *key)
{
	auto pos = meminfo.find(key);
	if (pos == std::string::npos)
		throw std::runtime_error(std::string("no ") + key + " in meminfo");
	return std::strtoull(meminfo.c_str() + pos + std::strlen(key), nullptr, 10) * 1024;
}

// The baseline: the topology as numactl --hardware reads it from sysfs.
mcp::Topology topology_from_sysfs()
{
	std::vector<mcp::Node> nodes;
	std::vector<unsigned> distances;
	for (unsigned id : parse_list(read_file(std::string(node_root) + "/online"))) {
		std::string dir = std::string(node_root) + "/node" + std::to_string(id);
		std::string meminfo = read_file(dir + "/meminfo");
		mcp::Node node;
		node.id = id;
		node.cpus = parse_list(read_file(dir + "/cpulist"));
		node.mem_total_bytes = meminfo_bytes(meminfo, "MemTotal:");
		node.mem_free_bytes = meminfo_bytes(meminfo, "MemFree:");
		nodes.push_back(std::move(node));
		std::stringstream d(read_file(dir + "/distance"));
		for (unsigned v; d >> v;)
			distances.push_back(v);
	}
	unsigned online = parse_list(read_file("/sys/devices/system/cpu/online")).size();
	unsigned possible = parse_list(read_file("/sys/devices/system/cpu/possible")).back() + 1;
	return mcp::Topology(std::move(nodes), std::move(distances), online, possible);
}

// Free memory moves between two snapshots; compare everything else.
bool same_shape(const mcp::Topology &a, const mcp::Topology &b)
{
	if (a.nodes().size() != b.nodes().size() || a.cpus_online() != b.cpus_online())
		return false;
	for (std::size_t i = 0; i < a.nodes().size(); i++) {
		const mcp::Node &x = a.nodes()[i], &y = b.nodes()[i];
		if (x.id != y.id || x.cpus != y.cpus || x.mem_total_bytes != y.mem_total_bytes)
			return false;
		for (std::size_t j = 0; j < a.nodes().size(); j++)
			if (a.distance_at(i, j) != b.distance_at(i, j))
				return false;
	}
	return true;
}

} // namespace

int main(int argc, char **argv)
{
	unsigned iterations = argc > 1 ? std::strtoul(argv[1], nullptr, 10) : 2000;
	if (iterations == 0) {
		std::fprintf(stderr, "usage: mcp_topology_bench [ITERATIONS > 0]\n");
		return 2;
	}
	try {
		mcp::Device dev = mcp::Device::open();
		mcp::Topology via_ioctl = dev.topology();
		mcp::Topology via_sysfs = topology_from_sysfs();
		if (!same_shape(via_ioctl, via_sysfs)) {
			std::fprintf(stderr, "topology_bench: MCP and sysfs disagree on the topology\n");
			return 1;
		}

		// Warm up both paths, then measure them interleaved in halves so
		// drift in the VM's clock affects both alike.
		ns_per_call(iterations / 10 + 1, [&] { (void)dev.topology(); });
		ns_per_call(iterations / 10 + 1, [] { (void)topology_from_sysfs(); });
		double sysfs_ns = 0, ioctl_ns = 0;
		for (int half = 0; half < 2; half++) {
			sysfs_ns += ns_per_call(iterations / 2 + 1, [] { (void)topology_from_sysfs(); }) / 2;
			ioctl_ns += ns_per_call(iterations / 2 + 1, [&] { (void)dev.topology(); }) / 2;
		}

		std::printf("topology snapshot, %zu nodes, %u CPUs, %u iterations\n",
			    via_ioctl.nodes().size(), via_ioctl.cpus_online(), iterations);
		std::printf("  baseline sysfs parse (numactl --hardware's way): %10.0f ns/snapshot\n", sysfs_ns);
		std::printf("  MCP_IOC_GET_TOPOLOGY via libmcp:                 %10.0f ns/snapshot\n", ioctl_ns);
		std::printf("  ratio sysfs/mcp: %.1fx\n", sysfs_ns / ioctl_ns);
		std::printf("bench-result topology_snapshot sysfs_ns=%.0f mcp_ns=%.0f ratio=%.2f\n",
			    sysfs_ns, ioctl_ns, sysfs_ns / ioctl_ns);
	} catch (const std::exception &e) {
		std::fprintf(stderr, "topology_bench: %s\n", e.what());
		return 1;
	}
	return 0;
}
