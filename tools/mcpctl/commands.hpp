// SPDX-License-Identifier: GPL-2.0-only
// mcpctl's commands: each one registers its CLI11 subcommand, runs it, and
// keeps its formatting in pure functions over libmcp types (unit-tested).
#ifndef MCPCTL_COMMANDS_HPP
#define MCPCTL_COMMANDS_HPP

#include <cstdint>
#include <iosfwd>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <mcp/mcp.hpp>
#include <mcp/runtime.hpp>

namespace mcpctl {

// Options shared by every command.
struct GlobalOptions {
	bool json = false;
};

// Exit codes.
inline constexpr int exit_ok = 0;
inline constexpr int exit_failure = 1;
inline constexpr int exit_usage = 2;

// A registered subcommand and how to run it.
struct Command {
	CLI::App *app = nullptr;
	int (*run)(const GlobalOptions &, std::ostream &out, std::ostream &err) = nullptr;
};

// ---- version (version.cpp) ----
Command add_version_command(CLI::App &app);
const char *tool_version() noexcept;
// @module is nullptr when the module could not be queried.
std::string format_version_text(std::string_view tool, std::string_view lib,
				const mcp::Version *module);
nlohmann::ordered_json version_json(std::string_view tool, std::string_view lib,
			    const mcp::Version *module);
int run_version(const GlobalOptions &opts, std::ostream &out, std::ostream &err);

// ---- info (info.cpp) ----
Command add_info_command(CLI::App &app);
// numactl --hardware format, plus a "cpus online" line.
std::string format_info_text(const mcp::Topology &topo);
// The schema is documented in Documentation/mcpctl.rst.
nlohmann::ordered_json info_json(const mcp::Topology &topo);
int run_info(const GlobalOptions &opts, std::ostream &out, std::ostream &err);

// ---- place (place.cpp), unplace (unplace.cpp) ----
Command add_place_command(CLI::App &app);
Command add_unplace_command(CLI::App &app);
// The text report of a placement of @pid.
std::string format_place_text(const mcp::PlaceResult &r);
// The schema is documented in Documentation/mcpctl.rst.
nlohmann::ordered_json place_json(const mcp::PlaceResult &r);

// ---- run (run.cpp) ----
Command add_run_command(CLI::App &app);
// The QoS group name `mcpctl run --qos` uses for process @pid.
std::string run_group_name(int pid);

// ---- qos (qos.cpp) ----
Command add_qos_command(CLI::App &app);
std::string format_qos_text(const mcp::QosInfo &info);
nlohmann::ordered_json qos_json(const mcp::QosInfo &info);
// "512M", "1G", "1048576", "256MiB" -> bytes; throws mcp::Error(EINVAL).
std::uint64_t parse_size(std::string_view text);

// ---- tune (tune.cpp) ----
Command add_tune_command(CLI::App &app);
// The table of `mcpctl tune list` for values read on @cpu.
std::string format_tune_text(const std::vector<mcp::TuneKnob> &knobs, unsigned cpu);
// The schema is documented in Documentation/mcpctl.rst.
nlohmann::ordered_json tune_knob_json(const mcp::TuneKnob &k);
// "prefetch.l2_stream=0" ... -> (name, value); throws mcp::Error(EINVAL).
std::vector<std::pair<std::string, std::uint64_t>>
parse_tune_assignments(const std::vector<std::string> &assignments);

// ---- monitor (monitor.cpp) ----
Command add_monitor_command(CLI::App &app);
// "nearest", "memory-local", ...; "unknown" for other values.
std::string place_reason_text(std::uint32_t reason);
// One line per event; @realtime_offset_ns is CLOCK_REALTIME minus
// CLOCK_MONOTONIC (events carry CLOCK_MONOTONIC).
std::string format_event_text(const mcp::PlaceEvent &ev, std::int64_t realtime_offset_ns);
// The schema is documented in Documentation/events.rst.
nlohmann::ordered_json event_json(const mcp::PlaceEvent &ev, std::int64_t realtime_offset_ns);

// ---- accelerator devices (devices.cpp, dev.cpp, bar.cpp, irq.cpp) ----
Command add_devices_command(CLI::App &app);
Command add_dev_command(CLI::App &app);
Command add_bar_command(CLI::App &app);
Command add_irq_command(CLI::App &app);

// A DEV argument: a device index ("0") or a PCI address ("0000:00:04.0",
// "00:04.0").
struct DevArg {
	std::optional<unsigned> index;
	std::optional<mcp::PciAddress> address;
};
// Throws mcp::Error(EINVAL) with a sentence for anything else.
DevArg parse_dev_arg(std::string_view text);
// Opens DEV through @dev.  Throws mcp::Error (ENODEV: no such device).
mcp::Accelerator open_dev_arg(const mcp::Device &dev, const DevArg &arg);
// A number in decimal or 0x-hex ("0x20", "32"), at most @max.  Throws
// mcp::Error(EINVAL) naming @what.
std::uint64_t parse_number(std::string_view text, std::string_view what,
			   std::uint64_t max = UINT64_MAX);

// "Gen3 x8 (cap Gen5 x16) DEGRADED", "Gen1 x1 (cap Gen1 x1)", "n/a (PCI)".
std::string format_link(const mcp::PcieLink &link);
nlohmann::ordered_json link_json(const mcp::PcieLink &link);
// The table of `mcpctl devices` (a header line, one line per device).
std::string format_devices_table(const std::vector<mcp::AcceleratorInfo> &devices);
// The schema is documented in Documentation/mcpctl.rst.
nlohmann::ordered_json accelerator_json(const mcp::AcceleratorInfo &info);
// `mcpctl dev info`: every DEV_INFO field, one per line.
std::string format_dev_info_text(const mcp::AcceleratorInfo &info);
// `mcpctl dev link`: every PCIe function of the host, degraded ones flagged,
// and a summary line.
std::string format_host_links_text(const std::vector<mcp::HostPciLink> &links);
nlohmann::ordered_json host_links_json(const std::vector<mcp::HostPciLink> &links);
// `mcpctl bar dump`: four 32-bit words per line, "%08x: w0 w1 w2 w3", the
// first word at BAR offset @offset.
std::string format_bar_dump(std::uint64_t offset, const std::vector<std::uint32_t> &words);

// ---- buffers and DMA (bo.cpp, dma.cpp) ----
Command add_bo_command(CLI::App &app);
Command add_dma_command(CLI::App &app);

// The DEV of bo and dma: a device (index or PCI address) or the word
// "host" for the host context of /dev/mcp.
struct ContextArg {
	bool host = false;
	DevArg dev;
};
// Throws mcp::Error(EINVAL) with a sentence.
ContextArg parse_context_arg(std::string_view text);
// An open DMA context and what it came from (the Accelerator stays open).
struct OpenContext {
	mcp::Device device;
	mcp::Accelerator accel;	// not open for the host context
	mcp::Dma dma;
};
OpenContext open_context(const ContextArg &arg);
// "64K,1M,64M" -> bytes (parse_size of each); throws mcp::Error(EINVAL).
std::vector<std::uint64_t> parse_size_list(std::string_view text);
// "64 KiB", "1 MiB", "100 bytes" (exact units), "1.5 MiB" otherwise.
std::string bytes_text(std::uint64_t bytes);

// The pattern dma copy writes and checks: byte i of a buffer filled with
// @seed is a function of (i, seed) that differs between neighbours.
void fill_pattern(std::span<std::byte> bytes, std::uint64_t seed) noexcept;
// The offset of the first byte that differs from the pattern, or nullopt.
std::optional<std::size_t> check_pattern(std::span<const std::byte> bytes,
					 std::uint64_t seed) noexcept;

// Pages of a mapping counted per NUMA node (move_pages(2) query).
struct PagePlacement {
	bool verified = false;		// move_pages saw the pages
	std::string error;		// why not, when !verified
	std::uint64_t pages = 0;	// pages asked about
	std::vector<std::uint64_t> pages_per_node;	// index = node id
};
// Queries at most @max_pages pages of @bytes spread evenly.
PagePlacement query_placement(std::span<const std::byte> bytes, unsigned max_pages = 4096);

// `mcpctl bo create|pin`: a fresh buffer's info and where its pages are.
struct BoReport {
	std::string context;	// "host" or a PCI address
	mcp::BufferInfo info;
	std::optional<int> node_asked;
	PagePlacement placement;
};
std::string format_bo_text(const BoReport &r);
// The schema is documented in Documentation/mcpctl.rst.
nlohmann::ordered_json bo_json(const BoReport &r);

// `mcpctl dma engines`
std::string format_engines_text(std::string_view context, const std::vector<mcp::EngineInfo> &engines);
nlohmann::ordered_json engines_json(std::string_view context, const std::vector<mcp::EngineInfo> &engines);

// `mcpctl dma copy`: one verified copy.
struct CopyReport {
	std::string context;
	std::string engine;
	std::uint64_t bytes = 0;
	std::uint64_t ns = 0;		// submit to completion, synchronous
	bool verified = false;		// destination matches the source
	std::optional<std::size_t> mismatch_at;
};
// Bytes per second of @bytes in @ns; 0 when @ns is 0.
double throughput_bps(std::uint64_t bytes, std::uint64_t ns) noexcept;
std::string format_copy_text(const CopyReport &r);
nlohmann::ordered_json copy_json(const CopyReport &r);

// `mcpctl dma bench`: throughput per size, and zero-length jobs/s.
struct DmaBenchRow {
	std::uint64_t bytes = 0;
	std::uint64_t engine_ns = 0;	// best copy through the engine
	std::uint64_t memcpy_ns = 0;	// best userspace memcpy, same buffers
};
struct DmaBenchReport {
	std::string context;
	std::string engine;
	unsigned reps = 0;
	std::vector<DmaBenchRow> rows;
	unsigned jobs = 0;		// zero-length jobs per mode
	std::uint64_t sync_ns = 0;	// all of them, one at a time
	std::uint64_t async_ns = 0;	// all submitted, then all waited for
	std::uint32_t wc_depth = 0;	// coalescing in force
};
std::string format_dma_bench_text(const DmaBenchReport &r);
nlohmann::ordered_json dma_bench_json(const DmaBenchReport &r);

// ---- trace (trace.cpp) ----
Command add_trace_command(CLI::App &app);
enum class TraceGroup { sched, cache, mcp };
// "sched", "cache", "mcp"; nullopt otherwise.
std::optional<TraceGroup> parse_trace_group(std::string_view name) noexcept;
// A log2 histogram as runqlat prints it (value range, count, stars).
std::string format_histogram_text(const mcp::trace::Log2Histogram &h, std::string_view unit);
// The schemas are documented in Documentation/observability.rst.
nlohmann::ordered_json histogram_json(const mcp::trace::Log2Histogram &h);
std::string format_sched_text(const mcp::trace::SchedSnapshot &s, bool per_task_histograms);
nlohmann::ordered_json sched_json(const mcp::trace::SchedSnapshot &s, std::string_view attach_mode,
				  bool numa_events);
std::string format_cache_text(const mcp::trace::CacheSnapshot &s);
nlohmann::ordered_json cache_json(const mcp::trace::CacheSnapshot &s);
std::string format_mcp_text(const mcp::trace::McpSnapshot &s);
nlohmann::ordered_json mcp_json(const mcp::trace::McpSnapshot &s);

// ---- top (top.cpp) ----
Command add_top_command(CLI::App &app);
enum class TopSort { cpu, runq, migr };
// "cpu", "runq", "migr"; nullopt otherwise.
std::optional<TopSort> parse_top_sort(std::string_view name) noexcept;
std::string_view to_string(TopSort sort) noexcept;
// What one interval of mcpctl top shows.
struct TopFrame {
	std::uint64_t interval_ns = 0;
	std::vector<mcp::trace::TaskRecord> tasks;	// from mcp::trace::join_tasks()
	bool llc_available = false;
	std::string llc_message;	// why not, when !llc_available
	bool mcp_available = false;	// placements traced (mcp.ko loaded)
	std::string mcp_message;	// why not, when !mcp_available
	bool jobs_available = false;	// DMA jobs traced (mcp.ko's job tracepoints)
	std::string jobs_message;	// why DMA/job p99 is n/a, when !jobs_available
	std::uint64_t dropped_tasks = 0;
	// Buffer memory of the shown rows' processes by tgid
	// (mcp::process_buffer_memory()); a process missing: not readable.
	std::map<int, std::uint64_t> bo_bytes;
};
// On-CPU time over the interval in percent of one CPU.
double top_cpu_percent(const mcp::trace::TaskRecord &t, std::uint64_t interval_ns) noexcept;
// The rows top shows: no idle task (pid 0), descending by @sort (cpu:
// on-CPU time, runq: run-queue p99, migr: cross-node migrations), then
// ascending pid; at most @rows (0: all).
std::vector<mcp::trace::TaskRecord> top_rows(const std::vector<mcp::trace::TaskRecord> &tasks,
					     TopSort sort, std::size_t rows);
// One frame: a summary, the notes on n/a columns when @notes, the table.
std::string format_top_text(const TopFrame &f, TopSort sort, std::size_t rows, bool notes,
			    std::string_view time);
// The schema is documented in Documentation/observability.rst.
nlohmann::ordered_json top_json(const TopFrame &f, TopSort sort, std::size_t rows,
				std::string_view time);

// ---- pool (pool.cpp) ----
Command add_pool_command(CLI::App &app);
// FNV-1a 64 of @bytes: what attach prints so that both ends can compare.
std::uint64_t tensor_checksum(std::span<const std::byte> bytes) noexcept;
// Up to @max bytes as text, '.' for anything not printable (and for '"', '\\').
std::string printable_head(std::span<const std::byte> bytes, std::size_t max);
nlohmann::ordered_json tensor_json(const mcp::Tensor &t, std::span<const std::byte> bytes);
std::string format_pool_stat_text(std::string_view path, const mcp::PoolStat &s);
// The schema is documented in Documentation/tensor-pool.rst.
nlohmann::ordered_json pool_stat_json(std::string_view path, const mcp::PoolStat &s);

// ---- graph (graph.cpp) ----
Command add_graph_command(CLI::App &app);
// What `graph show` read: "compact", "fixed" (binary), "json", or "none"
// (the demo); and its bytes.
struct GraphFile {
	std::string encoding = "none";
	std::uint64_t bytes = 0;
};
// `mcpctl graph show`: buffers, tensors, nodes with their successors.
std::string format_graph_text(const mcp::GraphDef &def, std::uint64_t binary_bytes,
			      const GraphFile &file = {});
// The schema is documented in Documentation/mcpctl.rst.
nlohmann::ordered_json graph_show_json(const mcp::GraphDef &def, std::uint64_t binary_bytes,
				       const GraphFile &file = {});
// `mcpctl graph run`: one node over the timed iterations.
struct GraphRunNode {
	std::string name;
	std::string op;
	std::string engine;		// of the last iteration
	int numa_node = -1;
	int worker_tid = 0;
	std::vector<std::uint64_t> ns;	// its duration in each iteration
};
struct GraphRunBuffer {
	std::string name;
	int node = -1;			// BO info: -1 mixed or unknown
};
// A graph output: its tensor's shape and dtype, and where --save-outputs
// wrote it (empty: not saved).
struct GraphRunOutput {
	std::string name;
	std::vector<std::uint64_t> shape;
	std::string dtype;		// NumPy's name: "float32"
	std::string file;
};
struct GraphRunReport {
	std::string graph;
	std::string context;
	std::string executor;		// "kernel", "userspace"; "inline" with --no-kernel
	unsigned warmup = 0;
	int node_asked = -1;		// --node, -1: the default
	std::vector<GraphRunBuffer> buffers;
	std::vector<std::uint64_t> iteration_ns;	// execute to fence, each
	std::vector<GraphRunNode> nodes;
	std::vector<mcp::WorkerInfo> workers;
	bool inline_checked = false;
	double inline_max_error = 0.0;	// over the f32 output buffers
	double inline_tolerance = 1e-3;
	bool inline_ok() const noexcept { return inline_max_error <= inline_tolerance; }
	bool no_kernel = false;		// --no-kernel: run_inline only
	std::vector<GraphRunOutput> outputs;
};
std::string format_graph_run_text(const GraphRunReport &r);
// The schema is documented in Documentation/mcpctl.rst.
nlohmann::ordered_json graph_run_json(const GraphRunReport &r);

} // namespace mcpctl

#endif // MCPCTL_COMMANDS_HPP
