// SPDX-License-Identifier: LGPL-2.1-or-later
// libmcp internals of the eBPF tracers (trace_*.cpp): what the loaders
// share, and the pure functions tests/unit checks.  Not installed.
#ifndef MCP_SRC_TRACE_INTERNAL_HPP
#define MCP_SRC_TRACE_INTERNAL_HPP

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <mcp/trace.hpp>

namespace mcp::trace::detail {

// Captures what libbpf prints while alive (and keeps it off stderr), so a
// failed load can hand the verifier log to TraceError.
class LibbpfLog {
public:
	LibbpfLog();
	~LibbpfLog();
	LibbpfLog(const LibbpfLog &) = delete;
	LibbpfLog &operator=(const LibbpfLog &) = delete;
	const std::string &text() const noexcept { return text_; }

private:
	std::string text_;
	void *previous_;	// libbpf_print_fn_t
	std::string *outer_;
};

// Fails with TraceError(EOPNOTSUPP) when the kernel has no BTF, before
// libbpf tries (and prints less helpful things).
void require_kernel_btf();

// The TraceError for @errnum from loading or attaching the programs of
// @group ("sched", "cache", "mcp"); @what names the step.
TraceError load_error(int errnum, std::string_view group, std::string_view what,
		      std::string log);

// cgroup id for a Filter (0 when it names none), after checking that its
// process exists (ESRCH: "no process N").  Throws TraceError.
std::uint64_t filter_cgroup_id(const Filter &filter);

// CPU id -> node id parsed from /sys/devices/system/node/nodeN/cpulist
// (@root is the sysfs node directory, for tests).  CPUs without a node
// map to node 0.
std::vector<unsigned> read_cpu_nodes(const std::string &root = "/sys/devices/system/node");

// The value of the first "@key N" line of /proc/vmstat-like @text.
std::optional<std::uint64_t> vmstat_value(std::string_view text, std::string_view key);

// @now - @before per counter, 0 where the counter went backwards.
NumaLocality numa_delta(const NumaLocality &before, const NumaLocality &now);

// Reads the NUMA-balancing counters of /proc/vmstat text; nullopt when
// the kernel has none (no CONFIG_NUMA_BALANCING).
std::optional<NumaLocality> parse_numa_vmstat(std::string_view text);

// CLOCK_MONOTONIC in ns.
std::uint64_t monotonic_ns();

} // namespace mcp::trace::detail

#endif // MCP_SRC_TRACE_INTERNAL_HPP
