// SPDX-License-Identifier: GPL-2.0-only
// libmcp's graph validator against the malformed-graph table the kernel's
// selftest uses (tests/graph_cases/mcp_graph_cases.h): every case that
// does not need the kernel gets the same (reason, kind, index) through
// GraphDef::parse() + validate(); valid cases read back and serialize to
// a graph that validates and parses to the same definition.
#include <cstdio>
#include <string>
#include <vector>

#include <criterion/criterion.h>

#include <mcp/graph.hpp>

#include "graph_cases.hpp"

namespace {

std::vector<std::byte> case_bytes(const struct mcp_graph_case &c)
{
	static struct mcp_graph_case_graph g;
	static std::uint8_t bytes[MCP_GRAPH_CASE_MAX_BYTES];
	const std::size_t len = mcp_graph_case_build(&c, &g, bytes, sizeof(bytes));

	cr_assert_gt(len, 0, "case %s does not fit", c.name);
	const auto *p = reinterpret_cast<const std::byte *>(bytes);
	return {p, p + len};
}

// (reason, kind, index) of parse() then validate(): none when both pass.
std::optional<mcp::GraphError> verdict(const std::vector<std::byte> &bytes)
{
	try {
		const mcp::GraphDef def = mcp::GraphDef::parse(bytes);
		return def.validate();
	} catch (const mcp::GraphInvalid &e) {
		return e.error();
	}
}

} // namespace

Test(graph_cases, same_verdict_as_the_kernel)
{
	unsigned checked = 0, skipped = 0, valid = 0;

	for (std::size_t i = 0; i < MCP_GRAPH_N_CASES; i++) {
		const auto &c = mcp_graph_cases[i];

		if (c.flags & MCP_GRAPH_CASE_KERNEL_ONLY) {
			skipped++;
			continue;
		}
		const auto bytes = case_bytes(c);
		const auto v = verdict(bytes);
		const auto direct = mcp::check_graph(bytes);

		checked++;
		if (c.reason == MCP_GRAPH_OK) {
			valid++;
			cr_expect(!v, "case %s: valid for the kernel, refused here: %s", c.name,
				  v ? v->message.c_str() : "");
			cr_expect(!direct, "case %s: check_graph refuses it", c.name);
			continue;
		}
		cr_expect(v.has_value(), "case %s: the kernel refuses it (%u, %u, %u), accepted here",
			  c.name, c.reason, c.kind, c.index);
		if (!v)
			continue;
		cr_expect(static_cast<std::uint32_t>(v->reason) == c.reason &&
				  static_cast<std::uint32_t>(v->kind) == c.kind && v->index == c.index,
			  "case %s: kernel (%u, %u, %u), libmcp (%u, %u, %u): %s", c.name, c.reason,
			  c.kind, c.index, static_cast<std::uint32_t>(v->reason),
			  static_cast<std::uint32_t>(v->kind), v->index, v->message.c_str());
		cr_expect(!v->message.empty(), "case %s: no message", c.name);
		cr_expect(direct && direct->reason == v->reason && direct->index == v->index,
			  "case %s: check_graph and parse disagree", c.name);
	}
	// The table is meant to be big: a shrunken header would pass silently.
	cr_expect_geq(checked, 100u, "only %u cases checked", checked);
	cr_expect_geq(valid, 10u);
	std::printf("graph_cases: %u checked (%u valid), %u kernel-only skipped\n", checked, valid,
		    skipped);
}

Test(graph_cases, valid_cases_round_trip)
{
	for (std::size_t i = 0; i < MCP_GRAPH_N_CASES; i++) {
		const auto &c = mcp_graph_cases[i];

		if (c.reason != MCP_GRAPH_OK || (c.flags & MCP_GRAPH_CASE_KERNEL_ONLY))
			continue;
		const auto def = mcp::GraphDef::parse(case_bytes(c));
		const auto again = mcp::GraphDef::parse(def.serialize());
		cr_expect(again == def, "case %s: parse(serialize(def)) != def", c.name);
		cr_expect(mcp::GraphDef::from_json(def.to_json()) == def,
			  "case %s: from_json(to_json(def)) != def", c.name);
		// Every node once, each after what it waits for.
		const auto order = def.topological_order();
		const auto pred = def.predecessors();
		std::vector<int> pos(def.nodes.size(), -1);
		cr_expect_eq(order.size(), def.nodes.size(), "case %s", c.name);
		for (std::size_t k = 0; k < order.size(); k++)
			pos[order[k]] = static_cast<int>(k);
		for (std::size_t n = 0; n < pred.size(); n++)
			for (auto p : pred[n])
				cr_expect_lt(pos[p], pos[n], "case %s: node %zu before its predecessor %u",
					     c.name, n, p);
	}
}
