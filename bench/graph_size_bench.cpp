// SPDX-License-Identifier: GPL-2.0-only
// Benchmark: the demo attention block (mcp::demo_attention_block()) in the
// binary graph format, compact (version 2) and fixed (version 1), against
// the same graph as JSON (GraphDef::to_json(), compact and pretty),
// measured in one run: bytes, ratios and how much smaller the compact
// binary is (target: >= 70% smaller than compact JSON), and the time to
// encode and decode each form (decode = parse, which validates).  Every
// form carries the same information (names, inits, parameters): each reads
// back to the same graph, checked before anything is printed.
//
// It runs on the host; no kernel module is needed.
//
// Usage: mcp_graph_size_bench [ITERATIONS]   (default 200 per timing)
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include <mcp/mcp.hpp>

#include "bench_timing.hpp"

namespace {

double percent_smaller(std::size_t binary, std::size_t other)
{
	return 100.0 * (1.0 - static_cast<double>(binary) / static_cast<double>(other));
}

} // namespace

int main(int argc, char **argv)
{
	const unsigned iterations = argc > 1 ? static_cast<unsigned>(std::atoi(argv[1])) : 200;

	if (iterations == 0) {
		std::fprintf(stderr, "usage: %s [ITERATIONS > 0]\n", argv[0]);
		return 2;
	}
	try {
		const mcp::GraphDef demo = mcp::demo_attention_block();
		const std::vector<std::byte> binary = demo.serialize(mcp::GraphEncoding::compact);
		const std::vector<std::byte> fixed = demo.serialize(mcp::GraphEncoding::fixed);
		const std::string compact = demo.to_json(false);
		const std::string pretty = demo.to_json(true);

		if (!(mcp::GraphDef::parse(binary) == demo) || !(mcp::GraphDef::parse(fixed) == demo) ||
		    !(mcp::GraphDef::from_json(compact) == demo) ||
		    !(mcp::GraphDef::from_json(pretty) == demo)) {
			std::fprintf(stderr, "graph_size_bench: a form does not read back to the same graph\n");
			return 1;
		}

		const double enc_bin = ns_per_call(iterations, [&] {
			(void)demo.serialize(mcp::GraphEncoding::compact);
		});
		const double enc_fixed =
			ns_per_call(iterations, [&] { (void)demo.serialize(mcp::GraphEncoding::fixed); });
		const double enc_json = ns_per_call(iterations, [&] { (void)demo.to_json(false); });
		const double dec_bin = ns_per_call(iterations, [&] { (void)mcp::GraphDef::parse(binary); });
		const double dec_fixed =
			ns_per_call(iterations, [&] { (void)mcp::GraphDef::parse(fixed); });
		const double dec_json =
			ns_per_call(iterations, [&] { (void)mcp::GraphDef::from_json(compact); });
		const double pct = percent_smaller(binary.size(), compact.size());

		std::printf("demo attention block: %zu buffers, %zu tensors, %zu nodes\n",
			    demo.buffers.size(), demo.tensors.size(), demo.nodes.size());
		std::printf("%-14s %10s %12s %12s\n", "form", "bytes", "encode_us", "decode_us");
		std::printf("%-14s %10zu %12.1f %12.1f\n", "binary-compact", binary.size(),
			    enc_bin / 1e3, dec_bin / 1e3);
		std::printf("%-14s %10zu %12.1f %12.1f\n", "binary-fixed", fixed.size(),
			    enc_fixed / 1e3, dec_fixed / 1e3);
		std::printf("%-14s %10zu %12.1f %12.1f\n", "json-compact", compact.size(),
			    enc_json / 1e3, dec_json / 1e3);
		std::printf("%-14s %10zu %12s %12s\n", "json-pretty", pretty.size(), "-", "-");
		std::printf("compact binary vs compact JSON: %.2fx smaller, %.1f%% smaller "
			    "(target >= 70%%: %s)\n",
			    static_cast<double>(compact.size()) / static_cast<double>(binary.size()), pct,
			    pct >= 70.0 ? "met" : "NOT met");
		std::printf("compact binary vs pretty JSON:  %.2fx smaller, %.1f%% smaller\n",
			    static_cast<double>(pretty.size()) / static_cast<double>(binary.size()),
			    percent_smaller(binary.size(), pretty.size()));
		std::printf("fixed binary vs compact JSON:   %.2fx smaller, %.1f%% smaller\n",
			    static_cast<double>(compact.size()) / static_cast<double>(fixed.size()),
			    percent_smaller(fixed.size(), compact.size()));
		std::printf("compact binary vs fixed binary: %.1f%% smaller; decode %.2fx the time "
			    "of fixed\n",
			    percent_smaller(binary.size(), fixed.size()), dec_bin / dec_fixed);
		std::printf("decode: compact binary (validated) %.2fx faster than compact JSON "
			    "(validated)\n",
			    dec_json / dec_bin);
	} catch (const mcp::Error &e) {
		std::fprintf(stderr, "graph_size_bench: %s\n", e.what());
		return 1;
	}
	return 0;
}
