// SPDX-License-Identifier: LGPL-2.1-or-later
// libmcp: the graph runtime (C++).  mcp::Runtime starts NUMA-pinned worker
// threads that run the compute operators of a context's graphs
// (MCP_IOC_WORKER_REGISTER, MCP_IOC_JOB_DONE), loads GraphDefs into the
// kernel (MCP_IOC_GRAPH_CREATE) and executes them (MCP_IOC_GRAPH_EXEC,
// _STATUS), or without the kernel through the userspace executor
// (RuntimeOptions::executor).  Include it after (or instead of)
// <mcp/mcp.hpp>, which it includes.  Documentation/libmcp.rst,
// "Graph runtime" and "Executors", has the long form.
#ifndef MCP_RUNTIME_HPP
#define MCP_RUNTIME_HPP

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <mcp/dma.hpp>
#include <mcp/graph.hpp>
#include <mcp/runtime.h>

namespace mcp {

namespace feature {
inline constexpr std::uint64_t job_batch = MCP_FEATURE_JOB_BATCH;
inline constexpr std::uint64_t job_chains = MCP_FEATURE_JOB_CHAINS;
} // namespace feature

namespace detail {
struct RuntimeState;
struct RuntimeAccess;
struct UserGraph;
}

// What runs a Runtime's graphs.
enum class Executor : std::uint32_t {
	// mcp.ko: the kernel routes the nodes, runs its data-movement
	// operators and hands worker nodes to the Runtime's worker threads
	// (MCP_IOC_GRAPH_EXEC, MCP_IOC_WORKER_REGISTER).
	kernel = MCP_RUNTIME_EXECUTOR_KERNEL,
	// libmcp alone, no /dev/mcp: the same validator, operators and
	// routing rule (kmod/mcp_route.h), dispatched by the Runtime's own
	// scheduler to worker threads pinned per NUMA node; buffers are
	// process memory placed with mbind(2).
	userspace = MCP_RUNTIME_EXECUTOR_USERSPACE,
	// The kernel when /dev/mcp opens and the module runs graphs, else
	// userspace.  Runtime::executor() says which.
	automatic = MCP_RUNTIME_EXECUTOR_AUTO,
};
// "kernel", "userspace", "auto"; "unknown" otherwise.
MCP_EXPORT const char *to_string(Executor executor) noexcept;
// The Executor named @name ("kernel", "userspace", "auto"); Error(EINVAL)
// naming the three otherwise.
MCP_EXPORT Executor parse_executor(std::string_view name);

struct RuntimeOptions {
	// With a DMA context (Runtime(ctx, options)) automatic is the
	// kernel; Runtime(options) opens the host context for the kernel.
	Executor executor = Executor::automatic;
	unsigned workers_per_node = 1;
	// Kernel node ids to start workers on; empty: every node with CPUs.
	std::vector<unsigned> nodes;
	// Nodes a worker reads at once, 1 .. MCP_WORKER_CHAIN_MAX; 0: the
	// mode's default, 1024 in chain mode and 32 otherwise.  In chain mode
	// (below) the most nodes of one chain read; a worker reports a chain
	// after 2 ms even so, and hands the rest back.  Else a job and the
	// jobs of a chain after it, at most MCP_WORKER_READ_MAX, run in order
	// and reported with one MCP_IOC_JOBS_DONE; 1: one job per read() and
	// MCP_IOC_JOB_DONE, what workers do on a module without
	// MCP_FEAT_JOB_BATCH.
	unsigned worker_batch = 0;
	// On a module with MCP_FEAT_JOB_CHAINS, workers read a chain of nodes
	// as one job (graph handle and node indices; the Runtime keeps each
	// loaded graph's node descriptors) and report it with one
	// MCP_IOC_CHAIN_DONE: the kernel's work per node is then its times.
	// false, or an older module: the jobs of worker_batch above.
	bool worker_chains = true;
};

// Where Runtime::load() creates a graph's buffers.  Jobs go to the workers
// of the node that holds most of their input bytes, so this is also where
// the graph's worker nodes run.
struct LoadOptions {
	// Kernel NUMA node of every buffer; -1: the context's default (the
	// caller's node on the host context, the device's on a device).
	int node = -1;
	// Buffer name -> node, for buffers that live elsewhere than @node.
	std::map<std::string, int, std::less<>> buffer_nodes;
};

// How a worker reads its jobs.
enum class WorkerMode : std::uint32_t {
	one_job = 0,	// one job per read, MCP_IOC_JOB_DONE
	batch = 1,	// a job and its chain per read, MCP_IOC_JOBS_DONE
	chains = 2,	// a chain as one job, MCP_IOC_CHAIN_DONE
};
// "one-job", "batch", "chains"; "unknown" otherwise.
MCP_EXPORT const char *to_string(WorkerMode mode) noexcept;

// One worker thread of a Runtime.
struct WorkerInfo {
	int node = -1;		// the NUMA node it serves
	int tid = 0;		// its thread id (gettid)
	std::uint64_t jobs = 0;	// jobs (chain nodes) it ran
	std::uint64_t failed = 0;	// of which reported with an error
	unsigned batch = 0;	// jobs (chains: nodes) it reads at once
	WorkerMode mode = WorkerMode::one_job;
};

// A GraphDef loaded into the kernel: its handle and one Buffer per buffer
// index (filled from GraphInit where given).  Move-only; destruction
// destroys the handle (executions in flight run to their end) and the
// buffers.
class MCP_EXPORT LoadedGraph {
public:
	LoadedGraph() noexcept;
	LoadedGraph(LoadedGraph &&other) noexcept;
	LoadedGraph &operator=(LoadedGraph &&other) noexcept;
	LoadedGraph(const LoadedGraph &) = delete;
	LoadedGraph &operator=(const LoadedGraph &) = delete;
	~LoadedGraph();

	bool is_valid() const noexcept { return handle_ != 0; }
	explicit operator bool() const noexcept { return is_valid(); }
	std::uint32_t handle() const noexcept { return handle_; }
	const GraphDef &def() const noexcept { return def_; }
	// The buffer bound at create to index @index; Error(EINVAL) if none,
	// Error(EOPNOTSUPP) on the userspace executor (no kernel buffers:
	// memory() is the buffer's memory there).
	Buffer &buffer(std::uint32_t index);
	// The buffer of the graph's buffer named @name; Error(ENOENT) if none.
	Buffer &buffer(std::string_view name);
	// The memory of buffer @index (the graph's length of it), on either
	// executor; Error(EINVAL) if none.
	std::span<std::byte> memory(std::uint32_t index);
	// The same by name; Error(ENOENT) if none.
	std::span<std::byte> memory(std::string_view name);
	// The NUMA node of buffer @index's memory (MCP_IOC_BO_INFO on the
	// kernel, move_pages(2) on userspace), -1 when mixed or unknown.
	int buffer_node(std::uint32_t index);

private:
	friend class Runtime;
	void reset() noexcept;

	std::shared_ptr<detail::RuntimeState> state_;
	std::uint32_t handle_ = 0;
	GraphDef def_;
	std::vector<Buffer> buffers_;
	// The userspace executor's graph (buffers, descriptors, executions).
	std::shared_ptr<detail::UserGraph> user_;
};

// Buffer index @buffer of the graph replaced by @with for one execution.
struct GraphBinding {
	std::uint32_t buffer = 0;
	Buffer *with = nullptr;	// mapped for the workers (data())
	// Userspace executor only, instead of @with: process memory, at least
	// the buffer's length, valid until the execution has ended.
	std::span<std::byte> memory{};
};

struct ExecOptions {
	// Cancelled with ETIMEDOUT this long after submission; 0: the
	// module's exec_timeout_ms (userspace: its default, 10 s).
	std::chrono::milliseconds timeout{0};
	// Start after it signals; kernel executor only (EOPNOTSUPP on
	// userspace, which has no sync_file fences).
	const Fence *in_fence = nullptr;
};

// A submitted execution: its id (for Runtime::status, Runtime::wait) and
// its out-fence (a sync_file; none on the userspace executor).
struct Execution {
	std::uint64_t exec_id = 0;
	Fence fence;
};

enum class ExecState : std::uint32_t { queued = 0, running = 1, done = 2, failed = 3 };
// "queued", "running", "done", "failed"; "unknown" otherwise.
MCP_EXPORT const char *to_string(ExecState state) noexcept;

// One node of one execution (struct mcp_graph_node_status).
struct NodeStatus {
	EngineClass engine = EngineClass::cpu;
	int numa_node = -1;	// -1: it did not run
	int result = 0;		// 0 or a negative errno (-ECANCELED: skipped)
	int worker_tid = 0;
	std::uint64_t start_ns = 0;	// CLOCK_MONOTONIC; 0: did not start
	std::uint64_t end_ns = 0;

	std::uint64_t duration_ns() const noexcept
	{
		return end_ns > start_ns && start_ns ? end_ns - start_ns : 0;
	}
};

struct ExecStatus {
	std::uint64_t exec_id = 0;
	ExecState state = ExecState::queued;
	int result = 0;		// 0 or the execution's negative errno
	int failed_node = -1;	// first node that failed, -1: none
	std::uint32_t graph = 0;
	std::uint64_t submit_ns = 0;
	std::uint64_t end_ns = 0;	// 0 while it runs
	std::vector<NodeStatus> nodes;
};

// The graph runtime of one context.  Move-only; destruction stops the
// workers (a job being run is finished and reported first) and must come
// after every LoadedGraph's last execution has ended.  LoadedGraphs may
// outlive it (their buffers stay; they can no longer run compute nodes).
class MCP_EXPORT Runtime {
public:
	// Starts the workers on @ctx (the host context or a device's).  Throws
	// mcp::Error: EOPNOTSUPP (module without graphs), EINVAL (a node id
	// without CPUs, workers_per_node 0).
	// With options.executor userspace, @ctx is not used (it may be
	// closed); else the kernel executor on @ctx.
	explicit Runtime(const Dma &ctx, const RuntimeOptions &options = {});
	// The executor options.executor names: the kernel on the host
	// context (opened here; Error with the reason when it cannot be),
	// userspace, or automatic (the kernel when /dev/mcp opens and its
	// module runs graphs, else userspace).  Userspace throws
	// Error(EINVAL) for a node id without CPUs.
	explicit Runtime(const RuntimeOptions &options);
	Runtime(Runtime &&) noexcept;
	Runtime &operator=(Runtime &&) noexcept;
	Runtime(const Runtime &) = delete;
	Runtime &operator=(const Runtime &) = delete;
	~Runtime();

	// The host or device context; a closed Dma on userspace.
	const Dma &context() const noexcept;
	// The executor that runs this Runtime's graphs (kernel or userspace).
	Executor executor() const noexcept;
	// The workers, with what they did so far.
	std::vector<WorkerInfo> workers() const;

	// Creates one Buffer per buffer index (where @options says), fills
	// those with a GraphInit, and creates the graph.  Throws GraphInvalid
	// with the kernel's reason, kind and index for a refused graph, else
	// mcp::Error: EINVAL (a node that is not an online node with memory),
	// ENOENT (a buffer_nodes name the graph lacks), ENOMEM (no room there).
	// On the userspace executor the buffers are process memory, and a
	// device-engine node is Error(EOPNOTSUPP).
	LoadedGraph load(const GraphDef &def, const LoadOptions &options = {});
	// Submits one execution.  Bindings replace buffers for this execution
	// only; their Buffers (userspace: or memory) must be of this context,
	// outlive the execution and be at least the buffer's length.
	// Userspace: Error(EAGAIN) while 16 executions of @graph are in
	// flight.
	Execution execute(LoadedGraph &graph, std::span<const GraphBinding> bindings = {},
			  const ExecOptions &options = {});
	// MCP_IOC_GRAPH_STATUS of @exec_id.  Error(ENOENT) once it is older
	// than the module's exec_history_len (userspace: the graph's last 16).
	ExecStatus status(std::uint64_t exec_id) const;
	// execute(), wait for the fence (at most the execution's time-out plus
	// a second; forever without one), status().
	ExecStatus run(LoadedGraph &graph, std::span<const GraphBinding> bindings = {},
		       const ExecOptions &options = {});
	// Waits at most @timeout (negative: forever) for @e to end (its
	// out-fence on the kernel); true once it has.
	bool wait(const Execution &e,
		  std::chrono::nanoseconds timeout = std::chrono::nanoseconds(-1)) const;
	// The same by id, userspace executor only (Error(EOPNOTSUPP) on the
	// kernel, whose executions end with their out-fence); Error(ENOENT)
	// for an id unknown or too old.
	bool wait(std::uint64_t exec_id,
		  std::chrono::nanoseconds timeout = std::chrono::nanoseconds(-1)) const;

	// Runs @def in the calling thread, node by node in topological order,
	// with the workers' operators and the kernel's data-movement
	// operators done in C++: the reference and benchmark baseline.
	// @buffers[i] is buffer i's memory, at least its length; buffers
	// whose init is InitKind::data are loaded from def.data first (the
	// others are the caller's to fill, GraphDef::fill_buffer()).  Throws
	// GraphInvalid for an invalid graph, Error(EINVAL) naming the node
	// when an operator refuses its shapes.
	static void run_inline(const GraphDef &def, std::span<const std::span<std::byte>> buffers);

private:
	friend struct detail::RuntimeAccess;

	std::shared_ptr<detail::RuntimeState> state_;
};

// The sentence for a failed execution status @status of graph @def:
// "node 3 (matmul 'q_proj') failed: Invalid argument", "timed out", ...
MCP_EXPORT std::string exec_failure_message(const ExecStatus &status, const GraphDef &def);

} // namespace mcp

#endif // MCP_RUNTIME_HPP
