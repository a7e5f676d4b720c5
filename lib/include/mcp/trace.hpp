// SPDX-License-Identifier: LGPL-2.1-or-later
// libmcp: eBPF tracing of scheduling, cache and MCP placement behaviour
// (the programs of bpf/).  Included by <mcp/mcp.hpp>.
//
// Each tracer loads its programs when opened and unloads them when
// destroyed; snapshot() reads what was counted since the previous snapshot
// (or the opening) and resets it.  Errors throw mcp::TraceError, an
// mcp::Error that keeps libbpf's log (with the verifier's output) for -v.
// Documentation/observability.rst has the long form.
#ifndef MCP_TRACE_HPP
#define MCP_TRACE_HPP

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <mcp/mcp.hpp>

namespace mcp::trace {

// Slots of a run-queue latency histogram (bpf/trace_sched.h).
inline constexpr unsigned histogram_slots = 27;

// A log2 histogram, as runqlat prints it: slot 0 counts the whole values
// 0..1, slot i > 0 counts 2^i .. 2^(i+1)-1 (the last slot also counts
// everything above).  The values are truncated (a 3.9 us wait is 3), so
// slot 0 covers the real values [0, 2) and slot i [2^i, 2^(i+1)).
struct MCP_EXPORT Log2Histogram {
	std::vector<std::uint64_t> slots;

	std::uint64_t count() const noexcept;
	// The value below which @percent (0..100) of the samples fall,
	// interpolated linearly inside its slot's real bounds
	// [slot_low(i), slot_end(i)): the k-th of c samples of a slot sits at
	// low + (end - low) * k / c.  0 when empty.
	double percentile(double percent) const noexcept;
	// Adds @other slot by slot.
	void merge(const Log2Histogram &other);
	// Smallest and largest whole value slot @i counts (runqlat's labels).
	static std::uint64_t slot_low(unsigned i) noexcept;
	static std::uint64_t slot_high(unsigned i) noexcept;
	// The real upper bound of slot @i, exclusive: 2^(i+1).
	static double slot_end(unsigned i) noexcept;
};

// Which tasks a tracer reports.  Both set: tasks that match both.
struct Filter {
	int pid = 0;		// a process (tgid); 0: every process
	// A cgroup v2 directory: absolute, or relative to @cgroup_mount.
	// Matches tasks directly in that cgroup (not in its children).
	std::string cgroup;
	std::string cgroup_mount = "/sys/fs/cgroup";
};

// The id the kernel gives cgroup @path (absolute or relative to @mount):
// the inode number of its directory.  Throws mcp::Error (ENOENT: no such
// cgroup, ENOTDIR, EINVAL: not on a cgroup2 file system).
MCP_EXPORT std::uint64_t cgroup_id(std::string_view path,
				   std::string_view mount = "/sys/fs/cgroup");

// An error while opening or reading a tracer.  log() holds what libbpf
// printed while loading (the verifier's log when a program was rejected).
class MCP_EXPORT TraceError : public Error {
public:
	TraceError(int errnum, std::string message, std::string log = {});
	const std::string &log() const noexcept { return log_; }

private:
	std::string log_;
};

// ---- sched ----

struct SchedTask {
	int pid = 0;		// thread id
	int tgid = 0;		// process id
	std::string comm;
	std::uint64_t cgroup_id = 0;
	int cpu = -1;		// where it last ran in the interval (-1: did not run)
	int node = -1;		// that CPU's node
	Log2Histogram runq_us;	// run-queue latency, us
	std::uint64_t runq_total_ns = 0;
	std::uint64_t runq_max_ns = 0;
	std::vector<std::uint64_t> oncpu_ns_per_node;	// index = node id
	std::uint64_t migrations = 0;		// ran on another CPU than before
	std::uint64_t cross_node_migrations = 0;	// ... on another node
	std::uint64_t migrate_events = 0;	// sched_migrate_task
	std::uint64_t numa_moves = 0;		// sched_move_numa
	std::uint64_t numa_swaps = 0;		// sched_swap_numa
	std::uint64_t numa_sticks = 0;		// sched_stick_numa

	std::uint64_t oncpu_ns() const noexcept;
};

struct SchedSnapshot {
	std::uint64_t interval_ns = 0;
	std::vector<SchedTask> tasks;	// ascending pid
	Log2Histogram runq_us;		// all reported tasks together
	std::uint64_t dropped_tasks = 0;	// not recorded: table full
};

struct SchedOptions {
	Filter filter;
	// CPU id -> node id; empty: read from /sys/devices/system/node.
	std::vector<unsigned> cpu_node;
	// Attach with raw_tp even where tp_btf works (tests the fallback).
	bool force_raw_tp = false;
};

class MCP_EXPORT SchedTracer {
public:
	SchedTracer() noexcept;
	SchedTracer(SchedTracer &&) noexcept;
	SchedTracer &operator=(SchedTracer &&) noexcept;
	~SchedTracer();

	// Loads and attaches the sched programs.  Throws mcp::TraceError:
	// EPERM (not root, no CAP_BPF+CAP_PERFMON), EOPNOTSUPP (no kernel
	// BTF), EINVAL (a program rejected: see log()), ENOENT (bad cgroup).
	static SchedTracer open(const SchedOptions &options = {});

	bool is_open() const noexcept { return impl_ != nullptr; }
	// "tp_btf" or "raw_tp": how the scheduler tracepoints are attached.
	const std::string &attach_mode() const noexcept;
	// Whether sched_move_numa/swap_numa/stick_numa are traced (the
	// kernel has them).
	bool numa_events() const noexcept;
	// Reads and resets the counters.
	SchedSnapshot snapshot();

private:
	struct Impl;
	std::unique_ptr<Impl> impl_;
};

// ---- cache ----

struct CacheTask {
	int pid = 0;
	int tgid = 0;
	std::string comm;
	std::uint64_t references = 0;	// LLC references (sampled estimate)
	std::uint64_t misses = 0;	// LLC misses (sampled estimate)

	// misses / references in percent; nullopt without references.
	std::optional<double> miss_percent() const noexcept;
};

// The kernel's NUMA-balancing counters (/proc/vmstat), over the interval.
struct NumaLocality {
	std::uint64_t hint_faults = 0;		// numa_hint_faults
	std::uint64_t hint_faults_local = 0;	// numa_hint_faults_local
	std::uint64_t pages_migrated = 0;	// numa_pages_migrated

	// Local hinting faults in percent; nullopt without faults.
	std::optional<double> local_percent() const noexcept;
};

struct CacheSnapshot {
	std::uint64_t interval_ns = 0;
	bool llc_available = false;
	std::string llc_message;	// why not, when !llc_available
	std::vector<CacheTask> tasks;	// ascending pid; empty without LLC
	bool numa_available = false;	// /proc/vmstat has the counters
	NumaLocality numa;
	std::uint64_t dropped_tasks = 0;
};

struct CacheOptions {
	Filter filter;
	// LLC events per sample.  Not llcstat's 100: at 10^8 LLC references
	// a second a CPU would take 10^6 samples a second (perf throttles it
	// to its sample-rate limit, up to a quarter of the CPU); 10000 keeps a
	// memory-bound thread's overhead near 1 % and counts in steps of 10000
	// (see Documentation/observability.rst).
	std::uint64_t sample_period = 10000;
};

class MCP_EXPORT CacheTracer {
public:
	CacheTracer() noexcept;
	CacheTracer(CacheTracer &&) noexcept;
	CacheTracer &operator=(CacheTracer &&) noexcept;
	~CacheTracer();

	// Loads the LLC programs and opens the perf events on every CPU.
	// Without a PMU (perf_event_open fails) it still opens:
	// llc_available() is false and llc_message() says "LLC counters
	// unavailable on this host" with the reason.  Throws
	// mcp::TraceError like SchedTracer::open().
	static CacheTracer open(const CacheOptions &options = {});

	bool is_open() const noexcept { return impl_ != nullptr; }
	bool llc_available() const noexcept;
	const std::string &llc_message() const noexcept;
	CacheSnapshot snapshot();

private:
	struct Impl;
	std::unique_ptr<Impl> impl_;
};

// ---- mcp ----

// One placement decision from the tracepoint mcp:mcp_place.
struct PlacementRecord {
	std::uint64_t timestamp_ns = 0;	// CLOCK_MONOTONIC
	int pid = 0;			// the placed thread
	int from_node = -1;
	int to_node = -1;		// -1: none
	int home_node = -1;
	HomeSource home_source = HomeSource::none;
	PlaceReason reason = PlaceReason::none;
	PlaceOrigin origin = PlaceOrigin::ioctl;
	std::uint32_t flags = 0;	// MCP_PLACE_* of the request (dry run, ...)
};

// Decisions that chose @node (-1: none) for @reason.
struct PlacementCount {
	int node = -1;
	PlaceReason reason = PlaceReason::none;
	std::uint64_t count = 0;

	bool operator==(const PlacementCount &) const = default;
};

// DMA jobs of one engine of one kind of context that finished in an
// interval (mcp:mcp_dma_done).
struct EngineJobs {
	int dev = -1;			// device index; -1: the host context
	unsigned engine = 0;		// 0: cpu, 1: the device's DMA engine
	std::uint64_t jobs = 0;
	std::uint64_t errors = 0;	// ended with an error (or never started)
	std::uint64_t bytes = 0;
	Log2Histogram latency_us;	// submit -> done
	Log2Histogram queue_us;		// submit -> start, of the jobs that started
};

// DMA jobs one thread submitted that finished in an interval.
struct TaskJobs {
	int pid = 0;
	int tgid = 0;
	std::uint64_t jobs = 0;
	Log2Histogram latency_us;	// submit -> done
};

struct McpSnapshot {
	std::uint64_t interval_ns = 0;
	std::vector<PlacementRecord> placements;	// in order
	std::vector<PlacementCount> counts;	// ascending node, then reason
	// DMA/job latency: false (with the reason in jobs_message) when mcp.ko
	// has no job tracepoints.
	bool jobs_available = false;
	std::string jobs_message;
	std::vector<EngineJobs> engines;	// ascending dev, then engine
	std::vector<TaskJobs> job_tasks;	// ascending pid
	std::uint64_t dropped = 0;	// ring buffer overflows (placements and jobs)
};

struct McpOptions {
	Filter filter;
};

class MCP_EXPORT McpTracer {
public:
	McpTracer() noexcept;
	McpTracer(McpTracer &&) noexcept;
	McpTracer &operator=(McpTracer &&) noexcept;
	~McpTracer();

	// Attaches to mcp:mcp_place and, where this mcp.ko has them, to
	// mcp:mcp_dma_submit and mcp:mcp_dma_done.  Throws mcp::TraceError:
	// ENOENT "mcp.ko not loaded" when mcp_place does not exist, and as
	// SchedTracer::open().
	static McpTracer open(const McpOptions &options = {});

	bool is_open() const noexcept { return impl_ != nullptr; }
	// Whether this mcp.ko has the DMA job tracepoints (else
	// McpSnapshot::jobs_message says so).
	bool jobs_available() const noexcept;
	McpSnapshot snapshot();

private:
	struct Impl;
	std::unique_ptr<Impl> impl_;
};

// Groups @records per (to_node, reason), ascending.
MCP_EXPORT std::vector<PlacementCount> count_placements(const std::vector<PlacementRecord> &records);

// ---- one row per task, for live tables (mcpctl top) ----

struct TaskRecord {
	int pid = 0;
	int tgid = 0;
	std::string comm;
	int node = -1;			// node it last ran on, -1 unknown
	std::uint64_t oncpu_ns = 0;
	Log2Histogram runq_us;
	std::uint64_t runq_total_ns = 0;
	std::uint64_t runq_max_ns = 0;
	std::uint64_t migrations = 0;
	std::uint64_t cross_node_migrations = 0;
	std::optional<std::uint64_t> llc_references;	// nullopt: no LLC data
	std::optional<std::uint64_t> llc_misses;
	std::uint64_t placements = 0;	// mcp:mcp_place decisions about it
	std::uint64_t dma_jobs = 0;	// DMA jobs it submitted that finished
	Log2Histogram dma_latency_us;	// their submit -> done
};

// Joins the snapshots by thread id (ascending); @cache and @mcp may be null.
// A thread seen by any of them gets a row.
MCP_EXPORT std::vector<TaskRecord> join_tasks(const SchedSnapshot &sched,
					      const CacheSnapshot *cache,
					      const McpSnapshot *mcp);

} // namespace mcp::trace

#endif // MCP_TRACE_HPP
