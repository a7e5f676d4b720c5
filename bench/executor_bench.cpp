// SPDX-License-Identifier: GPL-2.0-only
// The kernel executor against the userspace executor on the same imported
// model in one run (the test VM, where mcp.ko loads): p50/p99 of
// Runtime::run() on each, alternating in rounds, and their ratio; the
// outputs of the two must be equal bit for bit, else it fails.
//
//   mcp_executor_bench [MODEL.onnx [ITERATIONS [ROUNDS]]]
//
// Default /opt/mcp/onnx/bert17.onnx (the models the VM image carries),
// 50 runs per side per round, 4 rounds.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <mcp/onnx.hpp>
#include <mcp/runtime.hpp>

#include "bench_timing.hpp"

namespace {

using clk = std::chrono::steady_clock;

// Of samples in ns, in us.
double pct_us(const std::vector<double> &v, double p)
{
	return percentile(v, p) / 1000.0;
}

// The same input pattern in every input buffer of @g.
void fill_inputs(const mcp::GraphDef &def, mcp::LoadedGraph &g)
{
	for (std::uint32_t i = 0; i < def.buffers.size(); i++) {
		if (!(def.buffers[i].flags & mcp::graph_buffer_input))
			continue;
		std::span<std::byte> m = g.memory(i);
		auto *f = reinterpret_cast<float *>(m.data());
		for (std::size_t k = 0; k < m.size() / sizeof(float); k++)
			f[k] = static_cast<float>((k * 37 + i) % 101) / 50.0f - 1.0f;
	}
}

double run_us(mcp::Runtime &rt, mcp::LoadedGraph &g, const mcp::GraphDef &def)
{
	const auto t0 = clk::now();
	const mcp::ExecStatus st = rt.run(g);
	const auto t1 = clk::now();
	if (st.state != mcp::ExecState::done)
		throw mcp::Error(st.result ? -st.result : EIO, mcp::exec_failure_message(st, def));
	return std::chrono::duration<double, std::nano>(t1 - t0).count();
}

} // namespace

int main(int argc, char **argv)
{
	const std::string model = argc > 1 ? argv[1] : "/opt/mcp/onnx/bert17.onnx";
	const unsigned iterations = argc > 2 ? static_cast<unsigned>(std::atoi(argv[2])) : 50;
	const unsigned rounds = argc > 3 ? static_cast<unsigned>(std::atoi(argv[3])) : 4;

	if (!iterations || !rounds) {
		std::fprintf(stderr, "usage: %s [MODEL.onnx [ITERATIONS [ROUNDS]]]\n", argv[0]);
		return 2;
	}
	try {
		const mcp::GraphDef def = mcp::onnx::import(model);
		mcp::RuntimeOptions ko, uo;
		ko.executor = mcp::Executor::kernel;
		uo.executor = mcp::Executor::userspace;
		mcp::Runtime krt(ko), urt(uo);
		mcp::LoadedGraph kg = krt.load(def), ug = urt.load(def);
		fill_inputs(def, kg);
		fill_inputs(def, ug);
		std::vector<double> kns, uns;
		(void)run_us(krt, kg, def);
		(void)run_us(urt, ug, def);
		for (unsigned r = 0; r < rounds; r++) {
			for (unsigned i = 0; i < iterations; i++)
				kns.push_back(run_us(krt, kg, def));
			for (unsigned i = 0; i < iterations; i++)
				uns.push_back(run_us(urt, ug, def));
		}
		for (std::uint32_t i = 0; i < def.buffers.size(); i++)
			if ((def.buffers[i].flags & mcp::graph_buffer_output) &&
			    std::memcmp(kg.memory(i).data(), ug.memory(i).data(), kg.memory(i).size())) {
				std::fprintf(stderr, "%s: output %s differs between the executors\n",
					     argv[0], def.buffers[i].name.c_str());
				return 1;
			}
		const double k50 = pct_us(kns, 50), u50 = pct_us(uns, 50);
		std::printf("%s (%zu nodes): kernel executor p50 %.1f us p99 %.1f us, userspace p50 %.1f us "
			    "p99 %.1f us, kernel/userspace p50 %.2f (target <= 1.10); %u rounds of %u, "
			    "outputs equal\n",
			    def.name.c_str(), def.nodes.size(), k50, pct_us(kns, 99), u50,
			    pct_us(uns, 99), k50 / u50, rounds, iterations);
	} catch (const std::exception &e) {
		std::fprintf(stderr, "%s: %s\n", argv[0], e.what());
		return 1;
	}
	return 0;
}
