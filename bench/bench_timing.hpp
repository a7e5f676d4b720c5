// SPDX-License-Identifier: GPL-2.0-only
// Timing shared by the benchmarks of bench/.
#ifndef MCP_BENCH_TIMING_HPP
#define MCP_BENCH_TIMING_HPP

#include <chrono>

// Average wall time of one call of @f over @iterations calls, in ns.
template <typename F> double ns_per_call(unsigned iterations, F &&f)
{
	auto start = std::chrono::steady_clock::now();
	for (unsigned i = 0; i < iterations; i++)
		f();
	std::chrono::duration<double, std::nano> elapsed = std::chrono::steady_clock::now() - start;
	return elapsed.count() / iterations;
}

#endif // MCP_BENCH_TIMING_HPP
