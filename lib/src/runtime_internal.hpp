// SPDX-License-Identifier: LGPL-2.1-or-later
// libmcp internals of the graph runtime (runtime.cpp, runtime_worker.cpp,
// runtime_inline.cpp, c_api_runtime.cpp): the state a Runtime shares with
// its LoadedGraphs and worker threads.  Not installed.
#ifndef MCP_SRC_RUNTIME_INTERNAL_HPP
#define MCP_SRC_RUNTIME_INTERNAL_HPP

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <span>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include <mcp/runtime.hpp>

#include "dma_internal.hpp"
#include "graph_ops.hpp"

namespace mcp::detail {

// Where the memory of each BO handle of the context is mapped in this
// process: the workers resolve a job's tensors through it.  An entry lives
// while it may be used: a graph's buffers until the LoadedGraph goes, a
// binding until the execution that used it has ended.  Counted, since one
// Buffer may be bound to several executions in flight.
//
// A worker pins the mappings of a job's tensors while it runs the job.  An
// entry made with the buffer's context fd and mmap offset maps the BO
// again for itself (the mapping holds the BO in the kernel too), so a job
// still running when its execution was stopped (time-out, fd closed) and
// its buffers were destroyed keeps valid memory until it returns, instead
// of writing into unmapped pages.
class HandleRegistry {
public:
	// Memory of one handle; unmapped with its last pin when owned.
	struct Mapping {
		std::span<std::byte> memory;
		bool owned = false;
		std::uint64_t offset = 0;	// owned: the BO's mmap offset

		Mapping(std::span<std::byte> m, bool own, std::uint64_t off) noexcept
			: memory(m), owned(own), offset(off)
		{
		}
		Mapping(const Mapping &) = delete;
		Mapping &operator=(const Mapping &) = delete;
		~Mapping();
	};
	using Pin = std::shared_ptr<const Mapping>;

	HandleRegistry() = default;
	HandleRegistry(const HandleRegistry &) = delete;
	HandleRegistry &operator=(const HandleRegistry &) = delete;

	// One more user of @handle, mapped at @memory.  Other memory for a
	// known handle replaces it: the kernel reused the handle of a
	// destroyed buffer.
	void acquire(std::uint32_t handle, std::span<std::byte> memory);
	// The same for a BO that @fd maps at @offset: a new entry maps it for
	// itself (@memory, the caller's mapping, if that fails).
	void acquire(std::uint32_t handle, std::span<std::byte> memory, int fd,
		     std::uint64_t offset);
	// One user fewer; the entry goes with the last.
	void release(std::uint32_t handle) noexcept;
	// Releases @handles (acquired) once @fence, an execution's out-fence
	// (a duplicate, owned), is readable; an invalid @fence keeps them
	// until the registry goes.
	void release_after(UniqueFd fence, std::vector<std::uint32_t> handles);
	// Releases the handles of every execution whose fence is readable.
	void release_ended() noexcept;
	// The memory of @handle, empty when unknown; not kept mapped (tests).
	std::span<std::byte> find(std::uint32_t handle) const;
	// The same, kept mapped while the pin lives; null when unknown.
	Pin pin(std::uint32_t handle) const;
	// Handles known, executions waited for (for the tests).
	std::size_t size() const;
	std::size_t pending() const;

private:
	struct Entry {
		Pin map;
		unsigned users = 0;
	};
	struct Pending {
		UniqueFd fence;
		std::vector<std::uint32_t> handles;
	};

	void acquire(std::uint32_t handle, std::span<std::byte> memory, const int *fd,
		     std::uint64_t offset);

	mutable std::shared_mutex lock_;
	std::unordered_map<std::uint32_t, Entry> map_;
	mutable std::mutex pending_lock_;	// taken before lock_
	std::vector<Pending> pending_;
};

// What a worker needs of each node of a graph the Runtime loaded, so that
// a chain read can name only (graph handle, node indices): built once at
// load from the GraphDef the kernel accepted.
struct GraphDescs {
	// No operator has it: the node fails with -EINVAL.
	static constexpr std::uint16_t invalid_op = 0;

	// Tensor k of a node is tensors[tensor[k]], inputs first.
	struct Node {
		std::uint16_t op = invalid_op;
		std::uint8_t n_inputs = 0;
		std::uint8_t n_outputs = 0;
		std::uint32_t param_offset = 0;	// in params
		std::uint32_t param_len = 0;
		std::uint32_t tensor[MCP_GRAPH_MAX_INPUTS + MCP_GRAPH_MAX_OUTPUTS] = {};
	};

	std::vector<Node> nodes;
	// As a worker job carries them, with the buffer index as the handle:
	// a chain's handles[] gives the BO.
	std::vector<struct mcp_worker_tensor> tensors;
	std::vector<std::byte> params;
	std::uint32_t n_buffers = 0;

	// Throws std::bad_alloc only; a node naming a tensor @def lacks (the
	// kernel refuses such a graph) gets invalid_op.
	static GraphDescs of(const GraphDef &def);
};

// The GraphDescs of each graph the Runtime loaded, by kernel handle.  A
// worker takes one reference per chain; an entry goes with its
// LoadedGraph, and a chain running on it keeps it until it returns.
class GraphRegistry {
public:
	using Ref = std::shared_ptr<const GraphDescs>;

	void add(std::uint32_t handle, Ref descs);
	void remove(std::uint32_t handle) noexcept;
	// Null when unknown.
	Ref find(std::uint32_t handle) const;
	std::size_t size() const;

private:
	mutable std::shared_mutex lock_;
	std::unordered_map<std::uint32_t, Ref> map_;
};

// One worker thread and what it did.
struct Worker {
	int node = -1;
	std::vector<unsigned> cpus;	// pinned to these
	std::atomic<int> tid{0};
	std::atomic<std::uint64_t> jobs{0};
	std::atomic<std::uint64_t> failed{0};
	std::atomic<unsigned> batch{0};	// jobs (nodes) per read, once registered
	std::atomic<WorkerMode> mode{WorkerMode::one_job};
	std::thread thread;
};

struct UserExecutor;

struct RuntimeState {
	Executor executor = Executor::kernel;	// kernel or userspace
	// The userspace executor's scheduler; null on the kernel.
	std::unique_ptr<UserExecutor> user;
	Dma ctx;
	HandleRegistry registry;
	GraphRegistry graphs;
	UniqueFd stop;		// eventfd: readable once the workers must stop
	std::atomic<bool> stopping{false};	// set before stop is signalled
	std::vector<std::unique_ptr<Worker>> workers;
	unsigned batch = 1;	// RuntimeOptions::worker_batch
	bool chains = false;	// worker_chains and the module has JOB_CHAINS
	std::atomic<std::uint32_t> status_nodes{0};	// largest node count seen

	~RuntimeState();
	// Starts one thread per worker and waits until each registered with
	// the kernel; throws the first registration error (the others are
	// stopped first).
	void start();
	// Signals the stop eventfd (userspace: the scheduler) and joins
	// every thread.
	void stop_workers() noexcept;
};

// The state of a Runtime, for the test hook below.
struct RuntimeAccess {
	static const RuntimeState *state(const Runtime &rt) noexcept { return rt.state_.get(); }
};

// Tensor @t, on BO @handle, resolved through @registry, its mapping held by
// @pin while the job runs: @err is -ENOENT for an unknown handle, -EINVAL
// for a tensor past its BO's mapped end.
OpTensor resolve(const HandleRegistry &registry, const struct mcp_worker_tensor &t,
		 std::uint32_t handle, HandleRegistry::Pin &pin, int &err);

// Pins the calling thread to @cpus (a worker to its node's); a cpuset
// without them leaves it unpinned.
void pin_to_cpus(const std::vector<unsigned> &cpus) noexcept;

// One job, as a worker runs it: 0 or a negative errno for JOB_DONE.
int run_job(const HandleRegistry &registry, const struct mcp_worker_job &job) noexcept;

// Bytes of a chain read with room for @capacity nodes.
constexpr std::size_t chain_read_bytes(std::size_t capacity) noexcept
{
	return offsetof(struct mcp_worker_chain, nodes) + capacity * sizeof(std::uint32_t);
}

// What MCP_IOC_CHAIN_DONE reports of one chain.
struct ChainOutcome {
	std::uint64_t start_ns = 0;
	std::uint32_t n_ran = 1;
	int result = 0;
};

// How long a worker runs one chain before it reports the nodes run and
// hands the rest back: a long chain of heavy nodes still shows progress
// in MCP_IOC_GRAPH_STATUS, and a worker learns within this time that its
// execution was stopped, while a chain of small nodes runs in one read.
inline constexpr std::uint64_t chain_slice_ns = 2'000'000;

// Runs the chain that a read of @len bytes put at @chain, node by node,
// with @graphs' descriptors and @chain's buffer handles resolved through
// @registry; @ends[i] gets when node i ended (room for every node).  A
// failing node ends the chain, and so does a node that ends @slice_ns or
// more after the chain started (the rest go back to the kernel's queue).
// An unknown graph fails the head with -ENOENT, a node index past the
// graph or a malformed read with -EINVAL.
ChainOutcome run_chain(const HandleRegistry &registry, const GraphRegistry &graphs,
		       const struct mcp_worker_chain &chain, std::size_t len,
		       std::uint64_t *ends, std::uint64_t slice_ns = chain_slice_ns) noexcept;

// The message for @errnum while doing @what with the graphs of @context.
std::string runtime_error_message(int errnum, std::string_view context, std::string_view what);

// "node 3 (matmul 'q_proj')" / "node 3 (matmul)".
std::string node_label(const GraphDef &def, std::uint32_t index);

// Throws (ELIBACC) when @def has an operator that needs OpenBLAS and
// @blas_error says why it could not be loaded (empty: it was loaded).
void require_blas(const GraphDef &def, const std::string &blas_error);

} // namespace mcp::detail

// Test hook, in no installed header and not a stable interface: the
// handles in @rt's registry (0 for NULL) and, in *@pending (NULL: not
// wanted), the executions whose bindings wait for their fence.  Exported
// for the VM selftests, which link the shared library.
extern "C" MCP_EXPORT std::uint32_t mcp_runtime_test_registry_size(const struct mcp_runtime *rt,
								   std::uint32_t *pending);
// The same hook for the graph registry: graphs whose node descriptors @rt
// keeps for chain reads (0 for NULL).
extern "C" MCP_EXPORT std::uint32_t mcp_runtime_test_graph_descs(const struct mcp_runtime *rt);

#endif // MCP_SRC_RUNTIME_INTERNAL_HPP
