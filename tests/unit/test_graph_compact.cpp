// SPDX-License-Identifier: GPL-2.0-only
// The compact encoding (format version 2) without a kernel: round trips in
// both encodings, the decoded image against serialize(fixed), the shared
// case table re-encoded in version 2 (same verdicts as version 1), the
// table's C encoder against libmcp's, sizes, and hostile compact bytes
// (every prefix, garbled bytes, huge claimed counts); mcpctl's --encoding.
#include <cstdio>
#include <cstring>
#include <string>
#include <tuple>
#include <vector>

#include <sys/wait.h>

#include <criterion/criterion.h>

#include <mcp/graph.hpp>

#include "graph_internal.hpp"

#include "graph_cases.hpp"

namespace {

using Bytes = std::vector<std::byte>;

Bytes to_bytes(const std::uint8_t *p, std::size_t len)
{
	const auto *b = reinterpret_cast<const std::byte *>(p);
	return {b, b + len};
}

// The case in version 1, and in version 2 when it can be said (else empty).
std::pair<Bytes, Bytes> case_both(const struct mcp_graph_case &c)
{
	static struct mcp_graph_case_graph g;
	static std::uint8_t bytes[MCP_GRAPH_CASE_MAX_BYTES];
	const std::size_t fixed_len = mcp_graph_case_build(&c, &g, bytes, sizeof(bytes));
	Bytes fixed = to_bytes(bytes, fixed_len);
	const std::size_t compact_len = mcp_graph_case_build_compact(&c, &g, bytes, sizeof(bytes));

	return {std::move(fixed), to_bytes(bytes, compact_len)};
}

std::optional<mcp::GraphError> verdict(const Bytes &bytes)
{
	try {
		return mcp::GraphDef::parse(bytes).validate();
	} catch (const mcp::GraphInvalid &e) {
		return e.error();
	}
}

std::uint64_t next(std::uint64_t &s)
{
	s = s * 6364136223846793005ULL + 1442695040888963407ULL;
	return s >> 24;
}

} // namespace

Test(graph_compact, round_trips_in_both_encodings)
{
	std::vector<mcp::GraphDef> defs{mcp::demo_attention_block(),
					mcp::demo_attention_block({128, 256, 8, 32, 1})};
	for (std::size_t i = 0; i < MCP_GRAPH_N_CASES; i++) {
		const auto &c = mcp_graph_cases[i];
		if (c.reason == MCP_GRAPH_OK && !(c.flags & MCP_GRAPH_CASE_KERNEL_ONLY))
			defs.push_back(mcp::GraphDef::parse(case_both(c).first));
	}
	cr_assert_geq(defs.size(), 20u);

	for (const auto &def : defs) {
		const auto compact = def.serialize();
		const auto fixed = def.serialize(mcp::GraphEncoding::fixed);

		cr_expect(mcp::graph_encoding(compact) == mcp::GraphEncoding::compact);
		cr_expect(mcp::graph_encoding(fixed) == mcp::GraphEncoding::fixed);
		cr_expect_eq(compact.size() % 8, 0u);
		cr_expect_lt(compact.size(), fixed.size(), "graph '%s'", def.name.c_str());
		cr_expect(mcp::GraphDef::parse(compact) == def, "graph '%s'", def.name.c_str());
		cr_expect(mcp::GraphDef::parse(fixed) == def, "graph '%s'", def.name.c_str());
		cr_expect(mcp::GraphDef::parse(compact).serialize() == compact);

		// Decoding gives exactly the version 1 bytes.
		std::optional<mcp::GraphError> refused;
		const auto image = mcp::detail::fixed_image(compact, {}, refused);
		cr_expect(!refused, "graph '%s': %s", def.name.c_str(),
			  refused ? refused->message.c_str() : "");
		cr_expect(image == fixed, "graph '%s': decoded image != serialize(fixed)",
			  def.name.c_str());
		cr_expect(mcp::detail::compact_from_fixed(fixed) == compact);
	}
}

// The demo block's sizes, pinned: the figures graphs.rst and
// benchmarks.rst quote (graph_size_bench prints them).
Test(graph_compact, demo_sizes)
{
	const auto def = mcp::demo_attention_block();
	const auto compact = def.serialize();
	const auto fixed = def.serialize(mcp::GraphEncoding::fixed);
	const auto json = def.to_json();

	std::printf("demo: compact %zu, fixed %zu, JSON %zu bytes\n", compact.size(), fixed.size(),
		    json.size());
	cr_expect_eq(fixed.size(), 6184u);
	// The #6 target: at least 70% smaller than compact JSON.
	cr_expect_leq(compact.size() * 10, json.size() * 3, "compact %zu vs JSON %zu",
		      compact.size(), json.size());
}

Test(graph_compact, cases_in_version_2_get_the_same_verdict)
{
	unsigned expressed = 0, refused = 0;

	for (std::size_t i = 0; i < MCP_GRAPH_N_CASES; i++) {
		const auto &c = mcp_graph_cases[i];

		if (c.flags & MCP_GRAPH_CASE_KERNEL_ONLY)
			continue;
		const auto [fixed, compact] = case_both(c);
		if (compact.empty())
			continue;
		expressed++;
		const auto v = verdict(compact);
		if (c.reason == MCP_GRAPH_OK) {
			cr_expect(!v, "case %s in version 2: refused: %s", c.name,
				  v ? v->message.c_str() : "");
			cr_expect(verdict(fixed) == std::nullopt);
			continue;
		}
		refused++;
		cr_expect(v.has_value(), "case %s in version 2: accepted", c.name);
		if (!v)
			continue;
		cr_expect(static_cast<std::uint32_t>(v->reason) == c.reason &&
				  static_cast<std::uint32_t>(v->kind) == c.kind && v->index == c.index,
			  "case %s: version 1 (%u, %u, %u), version 2 (%u, %u, %u): %s", c.name,
			  c.reason, c.kind, c.index, static_cast<std::uint32_t>(v->reason),
			  static_cast<std::uint32_t>(v->kind), v->index, v->message.c_str());
	}
	std::printf("graph_compact: %u cases re-encoded in version 2 (%u refused)\n", expressed,
		    refused);
	cr_expect_geq(expressed, 80u);
	cr_expect_geq(refused, 60u);
}

// The table's C encoder (what the kernel selftest sends) and libmcp's.
Test(graph_compact, c_encoder_matches_libmcp)
{
	unsigned compared = 0;

	for (std::size_t i = 0; i < MCP_GRAPH_N_CASES; i++) {
		const auto &c = mcp_graph_cases[i];

		if (c.reason != MCP_GRAPH_OK)
			continue;
		const auto [fixed, compact] = case_both(c);
		if (compact.empty())
			continue;
		cr_expect(mcp::detail::compact_from_fixed(fixed) == compact, "case %s", c.name);
		compared++;
	}
	cr_expect_geq(compared, 20u);
}

Test(graph_compact, encoding_errors_say_where_and_why)
{
	unsigned seen = 0;

	for (std::size_t i = 0; i < MCP_GRAPH_N_CASES; i++) {
		const auto &c = mcp_graph_cases[i];

		if (c.reason != MCP_GRAPH_ERR_ENCODING)
			continue;
		seen++;
		const auto v = verdict(case_both(c).first);
		cr_assert(v.has_value(), "case %s", c.name);
		cr_expect_eq(v->reason, mcp::GraphErrorReason::encoding);
		cr_expect_str_eq(mcp::to_string(v->reason), "encoding");
		cr_expect(v->message.find(c.kind == MCP_GRAPH_AT_HEADER ? "padding" : "varint") !=
				  std::string::npos,
			  "case %s: %s", c.name, v->message.c_str());
	}
	cr_expect_geq(seen, 15u);
}

Test(graph_compact, every_prefix_is_refused)
{
	const auto bytes = mcp::demo_attention_block().serialize();

	for (std::size_t len = 0; len < bytes.size(); len++) {
		const auto e = mcp::check_graph({bytes.data(), len});
		cr_assert(e.has_value(), "prefix %zu accepted", len);
		cr_expect_eq(e->reason, mcp::GraphErrorReason::header, "prefix %zu", len);
	}
}

// Flipped bytes in the header, tables and blob of compact graphs: never a
// crash, and whatever is accepted round-trips.
Test(graph_compact, garbled_bytes_never_crash)
{
	const auto good = mcp::demo_attention_block().serialize();
	std::uint64_t s = 777;
	unsigned refused = 0, encoding = 0, accepted = 0;

	for (int round = 0; round < 5000; round++) {
		auto bytes = good;
		const int flips = 1 + round % 4;
		for (int k = 0; k < flips; k++) {
			const auto r = next(s);
			// Half of the flips in the tables, where the varints are.
			const std::size_t at = round % 2 ? 48 + r % 1500 : r % bytes.size();
			bytes[at] = static_cast<std::byte>(r >> 16);
		}
		try {
			const auto def = mcp::GraphDef::parse(bytes);
			cr_expect(mcp::GraphDef::parse(def.serialize()) == def);
			accepted++;
		} catch (const mcp::GraphInvalid &e) {
			refused++;
			encoding += e.error().reason == mcp::GraphErrorReason::encoding;
			cr_expect(!e.error().message.empty());
		}
	}
	std::printf("graph_compact garbled: %u refused (%u encoding), %u accepted\n", refused,
		    encoding, accepted);
	cr_expect_gt(refused, 2500u);
	cr_expect_gt(encoding, 100u);
}

// Counts the bytes cannot hold are refused by the header's size rule,
// before anything is sized by them.
Test(graph_compact, claimed_huge_counts_refused_from_the_header)
{
	auto bytes = mcp::demo_attention_block().serialize();
	struct mcp_graph_header h;

	std::memcpy(&h, bytes.data(), sizeof(h));
	h.n_tensors = 65536;
	h.n_nodes = 65536;
	std::memcpy(bytes.data(), &h, sizeof(h));
	const mcp::GraphLimits big{65536, 65536, 16U << 20};
	const auto e = mcp::check_graph(bytes, big);
	cr_assert(e.has_value());
	cr_expect_eq(e->reason, mcp::GraphErrorReason::header);
	cr_expect_eq(e->kind, mcp::GraphErrorKind::header);
	cr_expect(e->message.find("bytes of tables for 8 buffers, 65536 tensors and 65536 nodes") !=
			  std::string::npos,
		  "%s", e->message.c_str());
}

Test(graph_compact, encoding_names_and_detection)
{
	cr_expect_str_eq(mcp::to_string(mcp::GraphEncoding::compact), "compact");
	cr_expect_str_eq(mcp::to_string(mcp::GraphEncoding::fixed), "fixed");
	cr_expect(mcp::parse_graph_encoding("fixed") == mcp::GraphEncoding::fixed);
	cr_expect(mcp::parse_graph_encoding("compact") == mcp::GraphEncoding::compact);
	cr_expect(!mcp::parse_graph_encoding("v2"));

	auto bytes = mcp::demo_attention_block().serialize();
	cr_expect(!mcp::graph_encoding({bytes.data(), 47}));
	bytes[4] = std::byte{3};	// version 3
	cr_expect(!mcp::graph_encoding(bytes));
	const auto e = mcp::check_graph(bytes);
	cr_assert(e.has_value());
	cr_expect(e->message.find("versions 1 and 2") != std::string::npos, "%s",
		  e->message.c_str());
}

// mcpctl graph build --encoding and graph show's encoding and sizes.
Test(graph_compact, mcpctl_build_and_show_name_the_encoding)
{
	const auto run = [](const std::string &args) {
		const std::string cmd = std::string(MCPCTL_PATH) + " " + args + " 2>&1";
		std::string out;
		char buf[4096];
		FILE *p = popen(cmd.c_str(), "r");

		cr_assert(p != nullptr);
		while (std::fgets(buf, sizeof(buf), p))
			out += buf;
		const int status = pclose(p);
		return std::pair{WEXITSTATUS(status), out};
	};
	const char *compact = "/tmp/mcp-unit-compact.mgph", *fixed = "/tmp/mcp-unit-fixed.mgph";

	auto [rc, out] = run(std::string("graph build --demo attention -o ") + compact);
	cr_expect_eq(rc, 0, "%s", out.c_str());
	cr_expect(out.find("2328 bytes binary (compact encoding)") != std::string::npos, "%s",
		  out.c_str());
	std::tie(rc, out) =
		run(std::string("graph build --demo attention --encoding fixed --json -o ") + fixed);
	cr_expect_eq(rc, 0, "%s", out.c_str());
	cr_expect(out.find("\"encoding\":\"fixed\",\"binary_bytes\":6184") != std::string::npos,
		  "%s", out.c_str());
	std::tie(rc, out) = run(std::string("graph show --json ") + fixed);
	cr_expect_eq(rc, 0);
	cr_expect(out.find("\"encoding\":\"fixed\",\"file_bytes\":6184,\"binary_bytes\":2328,"
			   "\"fixed_bytes\":6184") != std::string::npos,
		  "%s", out.substr(0, 200).c_str());
	std::tie(rc, out) = run(std::string("graph show ") + compact);
	cr_expect_eq(rc, 0);
	cr_expect(out.find("file: compact encoding, 2328 bytes") != std::string::npos, "%s",
		  out.substr(0, 300).c_str());
	std::tie(rc, out) = run("graph build --demo attention --encoding v2 -o /tmp/mcp-unit-x.mgph");
	cr_expect_eq(rc, 2, "%s", out.c_str());
	std::remove(compact);
	std::remove(fixed);
}
