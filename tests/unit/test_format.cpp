// SPDX-License-Identifier: GPL-2.0-only
// mcpctl's formatters: info (numactl --hardware text, JSON) and version.
#include <sstream>
#include <string>

#include <criterion/criterion.h>
#include <nlohmann/json.hpp>

#include "commands.hpp"
#include "helpers.hpp"
#include "output.hpp"

using nlohmann::json;
using test::MiB;
using test::node;

#define expect_text(got, want)                                                 \
	cr_expect((got) == (want), "got:\n%s\nwant:\n%s", (got).c_str(),      \
		  std::string(want).c_str())

Test(format_info, two_nodes_numactl_format)
{
	expect_text(mcpctl::format_info_text(test::two_nodes()),
		    "available: 2 nodes (0-1)\n"
		    "node 0 cpus: 0 1\n"
		    "node 0 size: 1006 MB\n"
		    "node 0 free: 950 MB\n"
		    "node 1 cpus: 2 3\n"
		    "node 1 size: 1007 MB\n"
		    "node 1 free: 960 MB\n"
		    "node distances:\n"
		    "node   0   1 \n"
		    "  0:  10  21 \n"
		    "  1:  21  10 \n"
		    "cpus online: 4 (nr_cpu_ids 4)\n");
}

Test(format_info, one_node)
{
	mcp::Topology t({node(0, {0, 1, 2, 3}, 4096 * MiB, 2048 * MiB)}, {10}, 4, 8);

	expect_text(mcpctl::format_info_text(t),
		    "available: 1 nodes (0)\n"
		    "node 0 cpus: 0 1 2 3\n"
		    "node 0 size: 4096 MB\n"
		    "node 0 free: 2048 MB\n"
		    "node distances:\n"
		    "node   0 \n"
		    "  0:  10 \n"
		    "cpus online: 4 (nr_cpu_ids 8)\n");
}

Test(format_info, node_id_holes)
{
	mcp::Topology t({node(0, {0}, 0, 0), node(2, {1}, 0, 0)}, {10, 21, 21, 10}, 2, 2);
	std::string s = mcpctl::format_info_text(t);

	cr_expect(s.starts_with("available: 2 nodes (0,2)\n"), "%s", s.c_str());
	cr_expect(s.find("node 2 cpus: 1\n") != std::string::npos, "%s", s.c_str());
	cr_expect(s.find("node distances:\nnode   0   2 \n  0:  10  21 \n  2:  21  10 \n") !=
		  std::string::npos, "%s", s.c_str());
}

Test(format_info, four_nodes_asymmetric)
{
	mcp::Topology t({node(0, {0}, MiB, 0), node(1, {1}, MiB, 0),
			 node(2, {2}, MiB, 0), node(3, {3}, MiB, 0)},
			{10, 16, 22, 28, 28, 10, 16, 22, 22, 28, 10, 16, 16, 22, 28, 10},
			4, 4);
	std::string s = mcpctl::format_info_text(t);

	cr_expect(s.starts_with("available: 4 nodes (0-3)\n"), "%s", s.c_str());
	cr_expect(s.find("node distances:\n"
			 "node   0   1   2   3 \n"
			 "  0:  10  16  22  28 \n"
			 "  1:  28  10  16  22 \n"
			 "  2:  22  28  10  16 \n"
			 "  3:  16  22  28  10 \n") != std::string::npos, "%s", s.c_str());
}

Test(format_info, wide_ids_and_distances_like_printf_space_3d)
{
	// "% 3d" of 100 and 255 is " 100" and " 255": the cell widens.
	mcp::Topology t({node(0, {0}, 0, 0), node(100, {1}, 0, 0)}, {10, 255, 255, 10}, 2, 2);
	std::string s = mcpctl::format_info_text(t);

	cr_expect(s.find("node   0  100 \n  0:  10  255 \n 100:  255  10 \n") != std::string::npos,
		  "%s", s.c_str());
}

Test(format_info, node_without_cpus_and_memory_rounding)
{
	// 1 MiB - 1 byte is 0 MB, as numactl's ">> 20".
	mcp::Topology t({node(0, {0}, 2 * MiB - 1, MiB - 1), node(1, {}, 0, 0)},
			{10, 20, 20, 10}, 1, 1);
	std::string s = mcpctl::format_info_text(t);

	cr_expect(s.find("node 0 size: 1 MB\nnode 0 free: 0 MB\nnode 1 cpus:\n") != std::string::npos,
		  "%s", s.c_str());
}

Test(format_info, no_distance_information)
{
	mcp::Topology t({node(0, {0}, 0, 0)}, {0}, 1, 1);
	std::string s = mcpctl::format_info_text(t);

	cr_expect(s.find("No distance information available.\n") != std::string::npos, "%s", s.c_str());
	cr_expect(s.find("node distances:") == std::string::npos);
}

Test(format_output, ranges_and_mb)
{
	cr_expect_eq(mcpctl::format_ranges({0, 1, 2, 5, 7, 8}), "0-2,5,7-8");
	cr_expect_eq(mcpctl::format_ranges({3}), "3");
	cr_expect_eq(mcpctl::format_ranges({}), "");
	cr_expect_eq(mcpctl::format_mb(1055916032ULL), "1007 MB");
	cr_expect_eq(mcpctl::format_mb(0), "0 MB");
}

Test(format_json, info_two_nodes)
{
	json j = json::parse(mcpctl::info_json(test::two_nodes()).dump());

	cr_assert(j.is_object());
	cr_assert_eq(j["nodes"].size(), 2u);
	cr_expect_eq(j["nodes"][0]["id"].get<unsigned>(), 0u);
	cr_expect(j["nodes"][1]["cpus"] == json({2, 3}));
	cr_expect_eq(j["nodes"][0]["mem_total_bytes"].get<std::uint64_t>(), 1006 * MiB + 12345);
	cr_expect_eq(j["nodes"][1]["mem_free_bytes"].get<std::uint64_t>(), 960 * MiB + MiB - 1);
	cr_expect(j["distances"] == json({{10, 21}, {21, 10}}));
	cr_expect_eq(j["cpus_online"].get<unsigned>(), 4u);
	cr_expect_eq(j["nr_cpu_ids"].get<unsigned>(), 4u);
	cr_expect_eq(j.size(), 4u, "no undocumented keys");
}

Test(format_json, info_holes_big_cpus_and_big_memory)
{
	const std::uint64_t tb = 3ULL << 40; // beyond 32 bits
	mcp::Topology t({node(0, {0, 4095}, tb, tb - 1), node(2, {64}, 0, 0)},
			{10, 16, 22, 10}, 3, 4096);
	json j = json::parse(mcpctl::info_json(t).dump());

	cr_expect(j["nodes"][0]["cpus"] == json({0, 4095}));
	cr_expect_eq(j["nodes"][1]["id"].get<unsigned>(), 2u);
	cr_expect_eq(j["nodes"][0]["mem_total_bytes"].get<std::uint64_t>(), tb);
	cr_expect(j["distances"] == json({{10, 16}, {22, 10}}));
	cr_expect_eq(j["nr_cpu_ids"].get<unsigned>(), 4096u);
}

Test(format_json, info_is_one_line)
{
	std::ostringstream out;
	mcpctl::print_json(out, mcpctl::info_json(test::two_nodes()));
	std::string s = out.str();

	cr_expect(s.ends_with("}\n"));
	cr_expect_eq(s.find('\n'), s.size() - 1);
	cr_expect(s.starts_with("{\"nodes\":"), "%s", s.c_str());
}

Test(format_version, text_with_and_without_module)
{
	mcp::Version v{1, 3, mcp::feature::version | mcp::feature::topology, "0.1.0-test"};

	expect_text(mcpctl::format_version_text("0.1.0", "0.1.0", &v),
		    "mcpctl 0.1.0\n"
		    "libmcp 0.1.0 (MCP ABI 1.0)\n"
		    "mcp module 0.1.0-test (MCP ABI 1.3)\n"
		    "features: version topology\n");
	expect_text(mcpctl::format_version_text("0.1.0", "0.1.0", nullptr),
		    "mcpctl 0.1.0\nlibmcp 0.1.0 (MCP ABI 1.0)\n");
}

Test(format_version, json_fields)
{
	mcp::Version v{1, 0, 0x3 | (1ULL << 20), "0.1.0"};
	json j = json::parse(mcpctl::version_json("0.1.0", "0.1.0", &v).dump());

	cr_expect_eq(j["mcpctl_version"], "0.1.0");
	cr_expect_eq(j["libmcp_abi"]["major"].get<unsigned>(), 1u);
	cr_expect_eq(j["module"]["version"], "0.1.0");
	cr_expect_eq(j["module"]["abi"]["minor"].get<unsigned>(), 0u);
	cr_expect(j["module"]["features"] == json({"version", "topology", "bit20"}));
	cr_expect_eq(j["module"]["features_mask"].get<std::uint64_t>(), 0x100003u);

	json none = json::parse(mcpctl::version_json("0.1.0", "0.1.0", nullptr).dump());
	cr_expect(none["module"].is_null());
}
