// SPDX-License-Identifier: LGPL-2.1-or-later
// libmcp internals of the graph runtime (runtime.cpp, runtime_worker.cpp,
// runtime_inline.cpp, c_api_runtime.cpp): the state a Runtime shares with
// its LoadedGraphs and worker threads.  Not installed.
#ifndef MCP_SRC_RUNTIME_INTERNAL_HPP
#define MCP_SRC_RUNTIME_INTERNAL_HPP

#include <atomic>
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
// process: the workers resolve a job's tensors through it.
class HandleRegistry {
public:
	void add(std::uint32_t handle, std::span<std::byte> memory);
	void remove(std::uint32_t handle) noexcept;
	// The memory of @handle, empty when unknown.
	std::span<std::byte> find(std::uint32_t handle) const;

private:
	mutable std::shared_mutex lock_;
	std::unordered_map<std::uint32_t, std::span<std::byte>> map_;
};

// One worker thread and what it did.
struct Worker {
	int node = -1;
	std::vector<unsigned> cpus;	// pinned to these
	std::atomic<int> tid{0};
	std::atomic<std::uint64_t> jobs{0};
	std::atomic<std::uint64_t> failed{0};
	std::atomic<unsigned> batch{0};	// jobs per read, once registered
	std::thread thread;
};

struct RuntimeState {
	Dma ctx;
	HandleRegistry registry;
	UniqueFd stop;		// eventfd: readable once the workers must stop
	std::atomic<bool> stopping{false};	// set before stop is signalled
	std::vector<std::unique_ptr<Worker>> workers;
	unsigned batch = 1;	// RuntimeOptions::worker_batch
	std::atomic<std::uint32_t> status_nodes{0};	// largest node count seen

	~RuntimeState();
	// Starts one thread per worker and waits until each registered with
	// the kernel; throws the first registration error (the others are
	// stopped first).
	void start();
	// Signals the stop eventfd and joins every thread.
	void stop_workers() noexcept;
};

// Tensor @t of a job resolved through @registry: @err is -ENOENT for an
// unknown handle, -EINVAL for a tensor past its BO's mapped end.
OpTensor resolve(const HandleRegistry &registry, const struct mcp_worker_tensor &t, int &err);

// One job, as a worker runs it: 0 or a negative errno for JOB_DONE.
int run_job(const HandleRegistry &registry, const struct mcp_worker_job &job) noexcept;

// The message for @errnum while doing @what with the graphs of @context.
std::string runtime_error_message(int errnum, std::string_view context, std::string_view what);

// "node 3 (matmul 'q_proj')" / "node 3 (matmul)".
std::string node_label(const GraphDef &def, std::uint32_t index);

} // namespace mcp::detail

#endif // MCP_SRC_RUNTIME_INTERNAL_HPP
