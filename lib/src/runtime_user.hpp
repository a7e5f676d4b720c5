// SPDX-License-Identifier: LGPL-2.1-or-later
// libmcp internals of the userspace executor (runtime_user.cpp): a
// Runtime's graphs run without /dev/mcp.  The same GraphDef validator and
// operators (graph_ops*) as the kernel executor's workers, the kernel's
// routing rule (kmod/mcp_route.h) and its execution semantics
// (Documentation/graph-scheduling.rst, "Executing"), dispatched by a
// scheduler of its own to worker threads pinned per NUMA node.  Buffers,
// node descriptors and the state of a fixed number of executions in
// flight are made at load: an execution allocates nothing.  Not installed.
#ifndef MCP_SRC_RUNTIME_USER_HPP
#define MCP_SRC_RUNTIME_USER_HPP

#include <array>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include <mcp/runtime.hpp>

#include "runtime_internal.hpp"

namespace mcp::detail {

// Anonymous process memory for one graph buffer, page-rounded and
// zeroed, every page touched at creation.  Move-only; unmapped on
// destruction.
class HostMemory {
public:
	HostMemory() noexcept = default;
	HostMemory(HostMemory &&other) noexcept;
	HostMemory &operator=(HostMemory &&other) noexcept;
	HostMemory(const HostMemory &) = delete;
	HostMemory &operator=(const HostMemory &) = delete;
	~HostMemory();

	// @length bytes on NUMA node @node (mbind(2) MPOL_BIND), or where the
	// calling thread's first touch puts them (-1).  Throws Error (ENOMEM,
	// or mbind's errno) with @what in the message.
	static HostMemory create(std::uint64_t length, int node, const std::string &what);
	std::span<std::byte> data() const noexcept { return {ptr_, len_}; }

private:
	std::byte *ptr_ = nullptr;
	std::size_t len_ = 0;
};

// The NUMA node of @memory's pages (move_pages(2) on up to 64 pages spread
// over it): the node when every sampled page is on it, -1 when they are
// mixed, not present or move_pages(2) is not available.  No allocation.
int memory_node(std::span<const std::byte> memory) noexcept;

// The NUMA topology as /sys/devices/system/node shows it (what
// MCP_IOC_GET_TOPOLOGY reports with the module): one node 0 with every
// online CPU on a kernel without NUMA.
Topology sysfs_topology();

struct UserExecutor;

// One graph loaded on the userspace executor.
struct UserGraph {
	// Executions of one graph in flight at once; their records stay
	// until reused (the status history: the oldest ended one is reused).
	static constexpr unsigned max_in_flight = 16;

	enum NodeState : std::uint8_t { waiting = 0, queued = 1, running = 2, ended = 3 };

	struct Slot;
	// A ready node on a worker queue (intrusive: made at load).
	struct Job {
		Job *next = nullptr;
		UserGraph *graph = nullptr;
		Slot *slot = nullptr;
		std::uint32_t index = 0;
	};
	// One execution.
	struct Slot {
		std::uint64_t exec_id = 0;	// 0: never used
		bool ended = true;
		bool stopped = false;	// failed or timed out: nothing new starts
		ExecState state = ExecState::done;
		int result = 0;
		int failed_node = -1;
		std::uint64_t submit_ns = 0, end_ns = 0, deadline_ns = 0;
		std::vector<NodeStatus> nodes;
		std::vector<std::uint8_t> node_state;
		std::vector<std::uint32_t> pending;	// predecessors not ended
		std::vector<std::byte *> base;	// per buffer, bindings applied
		std::vector<int> buffer_node;
		int uniform_node = -1;	// the node of every buffer, or mixed
		std::uint32_t unfinished = 0, running = 0;
		std::vector<Job> jobs;	// per node
		std::vector<std::uint32_t> ready;	// nodes to dispatch (a stack)
		std::shared_ptr<UserGraph> keep;	// while it runs
	};

	UserExecutor *exec = nullptr;
	std::shared_ptr<RuntimeState> state;	// keeps exec
	std::weak_ptr<UserGraph> self;
	std::uint32_t handle = 0;
	GraphDescs descs;
	std::vector<std::uint8_t> engine;	// per node, MCP_GRAPH_ENGINE_*
	std::vector<std::uint32_t> n_preds;
	std::vector<std::uint32_t> succ_start, succ;	// CSR
	std::vector<std::uint64_t> tensor_bytes;	// per descs.tensors entry
	std::vector<std::uint64_t> buffer_len;
	std::vector<HostMemory> memory;
	std::vector<int> memory_node;
	std::array<Slot, max_in_flight> slots;

	UserGraph() = default;
	UserGraph(const UserGraph &) = delete;
	UserGraph &operator=(const UserGraph &) = delete;
	~UserGraph();
};

// The scheduler of a userspace Runtime: per NUMA node a queue of ready
// nodes and the workers (RuntimeState::workers) that take them, and a
// timer thread for the executions' deadlines.  One lock for all of it.
struct UserExecutor {
	// The module's default exec_timeout_ms.
	static constexpr std::uint64_t default_timeout_ms = 10000;

	struct Queue {
		UserGraph::Job *head = nullptr, *tail = nullptr;
		std::condition_variable cv;
	};

	Topology topo;
	std::vector<__u32> node_workers;	// by node id
	std::vector<int> route;			// by target node id
	int route_none = -1;			// for a job without a target
	std::mutex lock;
	std::vector<std::unique_ptr<Queue>> queues;	// by node id
	std::condition_variable done;	// an execution ended
	std::condition_variable timer_cv;
	std::vector<UserGraph *> graphs;
	bool stopping = false;
	std::uint64_t next_exec = 1;
	std::uint32_t next_handle = 1;
	std::thread timer;

	// Starts @state's workers (their node and CPUs set) and the timer.
	void start(RuntimeState &state);
	void stop(RuntimeState &state) noexcept;

	std::shared_ptr<UserGraph> load(RuntimeState &state, std::shared_ptr<RuntimeState> keep,
					const GraphDef &def, const std::vector<int> &nodes);
	std::uint64_t execute(UserGraph &g, std::span<const GraphBinding> bindings,
			      const ExecOptions &options);
	ExecStatus status(std::uint64_t exec_id);
	bool wait(std::uint64_t exec_id, std::chrono::nanoseconds timeout);

	// Under the lock.
	void enqueue_locked(UserGraph &g, UserGraph::Slot &s, std::uint32_t index);
	void drain_locked(UserGraph &g, UserGraph::Slot &s);
	void release_locked(UserGraph &g, UserGraph::Slot &s, std::uint32_t index);
	void cancel_locked(UserGraph::Slot &s);
	void fail_locked(UserGraph::Slot &s, int error, std::uint32_t index);
	void stop_locked(UserGraph::Slot &s, int error);
	std::shared_ptr<UserGraph> complete_locked(UserGraph &g, UserGraph::Slot &s,
						   std::uint32_t index, int result, std::uint64_t end);
	std::shared_ptr<UserGraph> finish_locked(UserGraph::Slot &s);
	UserGraph::Slot *find_locked(std::uint64_t exec_id);

	void worker_loop(Worker &w);
	void timer_loop();
};

} // namespace mcp::detail

#endif // MCP_SRC_RUNTIME_USER_HPP
