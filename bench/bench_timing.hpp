// SPDX-License-Identifier: GPL-2.0-only
// Timing shared by the benchmarks of bench/.
#ifndef MCP_BENCH_TIMING_HPP
#define MCP_BENCH_TIMING_HPP

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <vector>

// Average wall time of one call of @f over @iterations calls, in ns.
template <typename F> double ns_per_call(unsigned iterations, F &&f)
{
	auto start = std::chrono::steady_clock::now();
	for (unsigned i = 0; i < iterations; i++)
		f();
	std::chrono::duration<double, std::nano> elapsed = std::chrono::steady_clock::now() - start;
	return elapsed.count() / iterations;
}

// The @p-th percentile of @v (nearest rank over v.size() - 1 intervals).
inline double percentile(std::vector<double> v, double p)
{
	std::sort(v.begin(), v.end());
	const auto i = static_cast<std::size_t>(p / 100.0 * static_cast<double>(v.size() - 1) + 0.5);
	return v[i];
}

#endif // MCP_BENCH_TIMING_HPP
