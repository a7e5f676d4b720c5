// SPDX-License-Identifier: LGPL-2.1-or-later
// The C API of the graph runtime (<mcp/runtime.h>) over mcp::Runtime and
// mcp::LoadedGraph.  Graph definitions cross through their binary form
// (mcp_graph_serialize), so this file needs nothing of the graph C API's
// internals.  No exception crosses this boundary.
#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstdio>
#include <cstring>
#include <memory>
#include <new>
#include <string>
#include <vector>

#include "graph_internal.hpp"
#include "runtime_internal.hpp"

static_assert(MCP_RUNTIME_OPTS_SIZE_VER0 == offsetof(struct mcp_runtime_opts, flags));
static_assert(MCP_RUNTIME_OPTS_SIZE_VER1 == offsetof(struct mcp_runtime_opts, executor));
static_assert(MCP_RUNTIME_EXECUTOR_KERNEL == static_cast<int>(mcp::Executor::kernel) &&
	      MCP_RUNTIME_EXECUTOR_USERSPACE == static_cast<int>(mcp::Executor::userspace) &&
	      MCP_RUNTIME_EXECUTOR_AUTO == static_cast<int>(mcp::Executor::automatic));

struct mcp_runtime {
	mcp::Runtime rt;
};

struct mcp_loaded_graph {
	mcp::LoadedGraph graph;
};

using mcp::detail::c_api_fail;
using mcp::detail::c_api_guard;

namespace {

// Runs @fn at the C boundary; a GraphInvalid also fills @invalid.
template <typename Fn>
int rt_guard(Fn &&fn, struct mcp_graph_invalid *invalid = nullptr) noexcept
{
	return c_api_guard([&] {
		try {
			fn();
		} catch (const mcp::GraphInvalid &e) {
			mcp::detail::put_graph_invalid(invalid, e.error());
			throw;
		}
	});
}

// The C++ definition of @graph as it is, with its data section (an
// imported model's weights), which the binary form leaves out.
const mcp::GraphDef &graph_def(const struct mcp_graph_def *graph)
{
	return mcp::detail::graph_def_of(graph);
}

mcp::ExecStatus status_of(struct mcp_runtime *rt, std::uint64_t exec_id)
{
	return rt->rt.status(exec_id);
}

} // namespace

extern "C" {

int mcp_runtime_new(struct mcp_dma *dma, const struct mcp_runtime_opts *opts,
		    struct mcp_runtime **out)
{
	// The caller's version of the struct, the fields it lacks zero.
	struct mcp_runtime_opts o_in = {};

	if (opts && opts->size >= MCP_RUNTIME_OPTS_SIZE_VER0)
		std::memcpy(&o_in, opts, std::min<std::size_t>(opts->size, sizeof(o_in)));
	if (!out || (opts && opts->size < MCP_RUNTIME_OPTS_SIZE_VER0) ||
	    (opts && opts->n_nodes && !opts->nodes))
		return c_api_fail(EINVAL, "mcp_runtime_new: out is NULL, opts->size is too small or "
					  "opts->nodes is NULL with n_nodes > 0");
	if ((o_in.flags & ~MCP_RUNTIME_NO_CHAINS) || o_in.reserved || o_in.reserved2 ||
	    o_in.executor > MCP_RUNTIME_EXECUTOR_AUTO)
		return c_api_fail(EINVAL, "mcp_runtime_new: opts->flags has unknown bits, "
					  "opts->executor is not an MCP_RUNTIME_EXECUTOR_*, or a "
					  "reserved field is not 0");
	if (!dma && o_in.executor == MCP_RUNTIME_EXECUTOR_KERNEL)
		return c_api_fail(EINVAL, "mcp_runtime_new: dma is NULL: the kernel executor needs "
					  "a DMA context (the userspace or auto executor does not)");
	return rt_guard([&] {
		mcp::RuntimeOptions o;
		o.executor = static_cast<mcp::Executor>(o_in.executor);
		if (opts) {
			if (o_in.workers_per_node)
				o.workers_per_node = o_in.workers_per_node;
			if (o_in.worker_batch)
				o.worker_batch = o_in.worker_batch;
			o.worker_chains = !(o_in.flags & MCP_RUNTIME_NO_CHAINS);
			o.nodes.assign(o_in.nodes, o_in.nodes + o_in.n_nodes);
		}
		auto handle = std::make_unique<mcp_runtime>(
			mcp_runtime{dma ? mcp::Runtime(dma->dma, o) : mcp::Runtime(o)});
		*out = handle.release();
	});
}

int mcp_runtime_executor(const struct mcp_runtime *rt)
{
	if (!rt)
		return c_api_fail(EINVAL, "mcp_runtime_executor: rt is NULL");
	return static_cast<int>(rt->rt.executor());
}

int mcp_runtime_wait(struct mcp_runtime *rt, uint64_t exec_id, int64_t timeout_ns)
{
	if (!rt)
		return c_api_fail(EINVAL, "mcp_runtime_wait: rt is NULL");
	bool ended = false;
	int err = rt_guard([&] { ended = rt->rt.wait(exec_id, std::chrono::nanoseconds(timeout_ns)); });
	if (err)
		return err;
	return ended ? 0 : c_api_fail(ETIMEDOUT, ("execution " + std::to_string(exec_id) +
						  " did not end within the wait")
							 .c_str());
}

void mcp_runtime_free(struct mcp_runtime *rt)
{
	delete rt;
}

uint32_t mcp_runtime_worker_count(const struct mcp_runtime *rt)
{
	if (!rt)
		return 0;
	try {
		return static_cast<uint32_t>(rt->rt.workers().size());
	} catch (...) {
		return 0;
	}
}

int mcp_runtime_worker_info(const struct mcp_runtime *rt, uint32_t index,
			    struct mcp_runtime_worker *out)
{
	if (!rt || !out || out->size < sizeof(*out))
		return c_api_fail(EINVAL, "mcp_runtime_worker_info: rt or out is NULL, or out->size is "
					  "too small");
	return rt_guard([&] {
		std::vector<mcp::WorkerInfo> workers = rt->rt.workers();
		if (index >= workers.size())
			throw mcp::Error(EINVAL, "the runtime has no worker " + std::to_string(index) +
							 " (it has " + std::to_string(workers.size()) +
							 ")");
		const mcp::WorkerInfo &w = workers[index];
		const uint32_t size = out->size;
		*out = {};
		out->size = size;
		out->node = w.node;
		out->tid = w.tid;
		out->mode = static_cast<uint32_t>(w.mode);
		out->batch = w.batch;
		out->jobs = w.jobs;
		out->failed = w.failed;
	});
}

int mcp_runtime_load(struct mcp_runtime *rt, const struct mcp_graph_def *graph,
		     struct mcp_loaded_graph **out, struct mcp_graph_invalid *err)
{
	return mcp_runtime_load_opts(rt, graph, nullptr, out, err);
}

int mcp_runtime_load_opts(struct mcp_runtime *rt, const struct mcp_graph_def *graph,
			  const struct mcp_load_opts *opts, struct mcp_loaded_graph **out,
			  struct mcp_graph_invalid *err)
{
	if (!rt || !graph || !out)
		return c_api_fail(EINVAL, "mcp_runtime_load: rt, graph or out is NULL");
	if (opts && (opts->size < sizeof(*opts) || (opts->flags & ~MCP_LOAD_NODE) ||
		     (opts->n_buffer_nodes && !opts->buffer_nodes)))
		return c_api_fail(EINVAL, "mcp_runtime_load_opts: opts->size is too small, opts->flags "
					  "has unknown bits, or buffer_nodes is NULL with n_buffer_nodes > 0");
	for (uint32_t i = 0; opts && i < opts->n_buffer_nodes; i++)
		if (!opts->buffer_nodes[i].name || opts->buffer_nodes[i].reserved)
			return c_api_fail(EINVAL, "mcp_runtime_load_opts: a buffer_nodes entry has no "
						  "name or a non-zero reserved field");
	if (err && err->size >= sizeof(*err)) {
		err->reason = MCP_GRAPH_ERROR_NONE;
		err->kind = 0;
		err->index = 0;
		err->message[0] = '\0';
	}
	return rt_guard(
		[&] {
			mcp::LoadOptions o;
			if (opts && (opts->flags & MCP_LOAD_NODE))
				o.node = opts->node;
			for (uint32_t i = 0; opts && i < opts->n_buffer_nodes; i++)
				o.buffer_nodes[opts->buffer_nodes[i].name] = opts->buffer_nodes[i].node;
			auto handle = std::make_unique<mcp_loaded_graph>();
			handle->graph = rt->rt.load(graph_def(graph), o);
			*out = handle.release();
		},
		err);
}

void mcp_loaded_graph_free(struct mcp_loaded_graph *lg)
{
	delete lg;
}

uint32_t mcp_loaded_graph_handle(const struct mcp_loaded_graph *lg)
{
	return lg ? lg->graph.handle() : 0;
}

int mcp_loaded_graph_buffer(struct mcp_loaded_graph *lg, uint32_t index, void **data,
			    uint64_t *len)
{
	if (!lg || !data || !len)
		return c_api_fail(EINVAL, "mcp_loaded_graph_buffer: lg, data or len is NULL");
	return rt_guard([&] {
		std::span<std::byte> m = lg->graph.memory(index);
		*data = m.data();
		*len = m.size();
	});
}

int mcp_loaded_graph_buffer_info(struct mcp_loaded_graph *lg, uint32_t index,
				 struct mcp_buffer_info *info)
{
	if (!lg || !info || info->size < sizeof(*info))
		return c_api_fail(EINVAL, "mcp_loaded_graph_buffer_info: lg or info is NULL, or "
					  "info->size is too small");
	return rt_guard([&] { mcp::detail::put_buffer_info(lg->graph.buffer(index).info(), info); });
}

int mcp_loaded_graph_buffer_by_name(struct mcp_loaded_graph *lg, const char *name, void **data,
				    uint64_t *len)
{
	if (!lg || !name || !data || !len)
		return c_api_fail(EINVAL, "mcp_loaded_graph_buffer_by_name: an argument is NULL");
	std::optional<std::uint32_t> index = lg->graph.def().find_buffer(name);
	if (!index)
		return c_api_fail(ENOENT, (std::string("the graph has no buffer named '") + name + "'").c_str());
	return mcp_loaded_graph_buffer(lg, *index, data, len);
}

int mcp_runtime_execute(struct mcp_runtime *rt, struct mcp_loaded_graph *lg,
			const struct mcp_graph_bind *binds, uint32_t n_binds,
			const struct mcp_exec_opts *opts, uint64_t *exec_id, struct mcp_fence **fence)
{
	if (!rt || !lg || !exec_id || (n_binds && !binds) || (opts && opts->size < sizeof(*opts)))
		return c_api_fail(EINVAL, "mcp_runtime_execute: rt, lg or exec_id is NULL, binds is NULL "
					  "with n_binds > 0, or opts->size is too small");
	return rt_guard([&] {
		std::vector<mcp::GraphBinding> b;
		for (uint32_t i = 0; i < n_binds; i++)
			b.push_back({binds[i].buffer, binds[i].with ? &binds[i].with->buf : nullptr});
		mcp::ExecOptions o;
		if (opts) {
			o.timeout = std::chrono::milliseconds(opts->timeout_ms);
			if (opts->in_fence)
				o.in_fence = &opts->in_fence->fence;
		}
		auto handle = fence ? std::make_unique<mcp_fence>() : nullptr;
		mcp::Execution e = rt->rt.execute(lg->graph, b, o);
		*exec_id = e.exec_id;
		if (fence && !e.fence) {
			*fence = nullptr;	// the userspace executor has none
		} else if (fence) {
			handle->fence = std::move(e.fence);
			*fence = handle.release();
		}
	});
}

int mcp_runtime_status(struct mcp_runtime *rt, uint64_t exec_id, struct mcp_exec_status *status,
		       struct mcp_exec_node *nodes, uint32_t cap)
{
	if (!rt || !status || status->size < sizeof(*status) || (cap && !nodes))
		return c_api_fail(EINVAL, "mcp_runtime_status: rt or status is NULL, status->size is too "
					  "small, or nodes is NULL with cap > 0");
	return rt_guard([&] {
		mcp::ExecStatus s = status_of(rt, exec_id);
		status->state = static_cast<uint32_t>(s.state);
		status->result = s.result;
		status->failed_node = s.failed_node;
		status->n_nodes = static_cast<uint32_t>(s.nodes.size());
		status->submit_ns = s.submit_ns;
		status->end_ns = s.end_ns;
		for (uint32_t i = 0; i < cap && i < s.nodes.size(); i++) {
			const mcp::NodeStatus &n = s.nodes[i];
			nodes[i] = {static_cast<uint32_t>(n.engine), n.numa_node, n.result,
				    n.worker_tid, n.start_ns, n.end_ns};
		}
	});
}

std::uint32_t mcp_runtime_test_registry_size(const struct mcp_runtime *rt, std::uint32_t *pending)
{
	const mcp::detail::RuntimeState *state = rt ? mcp::detail::RuntimeAccess::state(rt->rt) : nullptr;

	if (pending)
		*pending = state ? static_cast<std::uint32_t>(state->registry.pending()) : 0;
	return state ? static_cast<std::uint32_t>(state->registry.size()) : 0;
}

std::uint32_t mcp_runtime_test_graph_descs(const struct mcp_runtime *rt)
{
	const mcp::detail::RuntimeState *state = rt ? mcp::detail::RuntimeAccess::state(rt->rt) : nullptr;

	return state ? static_cast<std::uint32_t>(state->graphs.size()) : 0;
}

int mcp_runtime_run_inline(const struct mcp_graph_def *graph, void *const *buffers,
			   uint32_t n_buffers)
{
	if (!graph || (n_buffers && !buffers))
		return c_api_fail(EINVAL, "mcp_runtime_run_inline: graph or buffers is NULL");
	return rt_guard([&] {
		const mcp::GraphDef &def = graph_def(graph);
		std::vector<std::span<std::byte>> spans;
		for (uint32_t i = 0; i < n_buffers && i < def.buffers.size(); i++)
			spans.emplace_back(static_cast<std::byte *>(buffers[i]), def.buffers[i].length);
		if (n_buffers != def.buffers.size())
			throw mcp::Error(EINVAL, "mcp_runtime_run_inline: " + std::to_string(n_buffers) +
							 " buffers given for a graph of " +
							 std::to_string(def.buffers.size()));
		mcp::Runtime::run_inline(def, spans);
	});
}

} // extern "C"
