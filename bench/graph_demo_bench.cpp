// SPDX-License-Identifier: GPL-2.0-only
// Benchmark: the demo attention block (Documentation/graphs.rst) through
// MCP (GRAPH_EXEC, the kernel's cpu engine for quantize/tile, the
// Runtime's worker threads with OpenBLAS for the compute, out-fence wait)
// against the same operators called directly in one thread
// (Runtime::run_inline on plain memory).  Iterations alternate; prints
// p50/p99 of each and the overhead at p50; target: <= 10%.
//
// Usage: mcp_graph_demo_bench [ITERATIONS]   (default 30)
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include <mcp/mcp.hpp>
#include <mcp/runtime.hpp>

namespace {

double now_us()
{
	return std::chrono::duration<double, std::micro>(
		       std::chrono::steady_clock::now().time_since_epoch())
		.count();
}

double percentile(std::vector<double> v, double p)
{
	std::sort(v.begin(), v.end());
	std::size_t i = static_cast<std::size_t>(p / 100.0 * static_cast<double>(v.size()));
	return v[std::min(i, v.size() - 1)];
}

} // namespace

int main(int argc, char **argv)
{
	unsigned iterations = argc > 1 ? static_cast<unsigned>(std::atoi(argv[1])) : 30;

	if (iterations == 0) {
		std::fprintf(stderr, "usage: mcp_graph_demo_bench [ITERATIONS]\n");
		return 2;
	}
	try {
		mcp::Device dev = mcp::Device::open();
		if (!dev.version().has(mcp::feature::graphs)) {
			std::printf("mcp_graph_demo_bench: unsupported: the module has no inference graphs\n");
			return 0;
		}
		mcp::Dma ctx = mcp::Dma::host(dev);
		mcp::Runtime rt(ctx);
		mcp::GraphDef def = mcp::demo_attention_block();
		mcp::LoadedGraph g = rt.load(def);
		std::vector<std::vector<std::byte>> mem;
		std::vector<std::span<std::byte>> spans;
		for (std::uint32_t i = 0; i < def.buffers.size(); i++) {
			std::span<std::byte> b = g.buffer(i).data().first(def.buffers[i].length);
			mem.emplace_back(b.begin(), b.end());
			spans.emplace_back(mem.back());
		}
		std::vector<double> mcp_us, inline_us;

		rt.execute(g).fence.wait();
		mcp::Runtime::run_inline(def, spans);
		for (unsigned i = 0; i < iterations; i++) {
			double t0 = now_us();
			mcp::Execution e = rt.execute(g);
			mcp::FenceResult res = e.fence.wait();
			double t1 = now_us();
			if (!res.ok()) {
				std::fprintf(stderr, "mcp_graph_demo_bench: %s\n",
					     mcp::exec_failure_message(rt.status(e.exec_id), def).c_str());
				return 1;
			}
			mcp::Runtime::run_inline(def, spans);
			double t2 = now_us();
			mcp_us.push_back(t1 - t0);
			inline_us.push_back(t2 - t1);
		}
		double mp50 = percentile(mcp_us, 50), ip50 = percentile(inline_us, 50);
		double overhead = (mp50 / ip50 - 1.0) * 100.0;
		std::printf("graph demo block (%zu nodes), %zu workers, %u iterations alternating\n",
			    def.nodes.size(), rt.workers().size(), iterations);
		std::printf("  MCP (GRAPH_EXEC + fence):   p50 %10.1f us  p99 %10.1f us\n", mp50,
			    percentile(mcp_us, 99));
		std::printf("  inline, one thread:         p50 %10.1f us  p99 %10.1f us\n", ip50,
			    percentile(inline_us, 99));
		std::printf("  overhead at p50 %+.1f%% (target <= 10%%): %s\n", overhead,
			    overhead <= 10.0 ? "met" : "NOT met");
		return 0;
	} catch (const std::exception &e) {
		std::fprintf(stderr, "mcp_graph_demo_bench: %s\n", e.what());
		return 1;
	}
}
