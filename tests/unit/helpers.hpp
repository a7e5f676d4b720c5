// SPDX-License-Identifier: GPL-2.0-only
// Shared helpers of the unit tests.
#ifndef MCP_TESTS_UNIT_HELPERS_HPP
#define MCP_TESTS_UNIT_HELPERS_HPP

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <mcp/mcp.hpp>

namespace test {

inline constexpr std::uint64_t MiB = 1024 * 1024;

inline mcp::Node node(unsigned id, std::vector<unsigned> cpus, std::uint64_t total,
		      std::uint64_t free_bytes)
{
	return mcp::Node{id, std::move(cpus), total, free_bytes};
}

// Two nodes of two CPUs each, like the test VM.
inline mcp::Topology two_nodes()
{
	return mcp::Topology({node(0, {0, 1}, 1006 * MiB + 12345, 950 * MiB),
			      node(1, {2, 3}, 1007 * MiB, 960 * MiB + MiB - 1)},
			     {10, 21, 21, 10}, 4, 4);
}

// What a child process did.
struct RunResult {
	int exit_code = -1; // -1: did not exit normally
	std::string out;
	std::string err;
};

// Runs @argv (argv[0] is the path) with extra environment @env ("K=V").
RunResult run(const std::vector<std::string> &argv,
	      const std::vector<std::string> &env = {});

// Whether node can load onnxruntime-node (ONNX Runtime, the reference
// peer); if not, @why says what is missing.
bool have_ort(std::string &why);

} // namespace test

#endif
