// SPDX-License-Identifier: LGPL-2.1-or-later
// mcp::Runtime and mcp::LoadedGraph: graphs loaded into the kernel
// (MCP_IOC_GRAPH_CREATE / _DESTROY), executed (MCP_IOC_GRAPH_EXEC) and
// inspected (MCP_IOC_GRAPH_STATUS); the worker threads are in
// runtime_worker.cpp.
#include <algorithm>
#include <cerrno>
#include <cstring>
#include <optional>
#include <string>
#include <utility>

#include <fcntl.h>
#include <sys/ioctl.h>

#include "runtime_internal.hpp"
#include "runtime_user.hpp"

static_assert(MCP_EXEC_QUEUED == MCP_GRAPH_STATE_QUEUED &&
	      MCP_EXEC_RUNNING == MCP_GRAPH_STATE_RUNNING &&
	      MCP_EXEC_DONE == MCP_GRAPH_STATE_DONE && MCP_EXEC_FAILED == MCP_GRAPH_STATE_FAILED);
static_assert(sizeof(struct mcp_exec_node) == sizeof(struct mcp_graph_node_status));
static_assert(MCP_FEATURE_JOB_BATCH == MCP_FEAT_JOB_BATCH);
static_assert(MCP_FEATURE_JOB_CHAINS == MCP_FEAT_JOB_CHAINS);
static_assert(MCP_RUNTIME_WORKER_ONE_JOB == static_cast<int>(mcp::WorkerMode::one_job) &&
	      MCP_RUNTIME_WORKER_BATCH == static_cast<int>(mcp::WorkerMode::batch) &&
	      MCP_RUNTIME_WORKER_CHAINS == static_cast<int>(mcp::WorkerMode::chains));
static_assert(MCP_RUNTIME_WORKER_BATCH_MAX == MCP_WORKER_READ_MAX);
static_assert(MCP_RUNTIME_CHAIN_MAX == MCP_WORKER_CHAIN_MAX);
static_assert(MCP_GRAPH_ENGINE_WORKER == static_cast<int>(mcp::EngineClass::worker) &&
	      MCP_GRAPH_ENGINE_CPU == static_cast<int>(mcp::EngineClass::cpu));

namespace mcp {

namespace detail {

std::string runtime_error_message(int errnum, std::string_view context, std::string_view what)
{
	if (errnum == ENOTTY)
		return std::string(what) + " on " +
		       (context == "host" ? "the host context (/dev/mcp)"
					  : "device " + std::string(context)) +
		       " is not supported by the loaded mcp module (no inference graphs): "
		       "install a newer mcp module";
	return dma_error_message(errnum, context, what);
}

std::string node_label(const GraphDef &def, std::uint32_t index)
{
	std::string s = "node " + std::to_string(index);

	if (index >= def.nodes.size())
		return s;
	const GraphNode &n = def.nodes[index];
	s += std::string(" (") + to_string(n.op);
	if (!n.name.empty())
		s += " '" + n.name + "'";
	return s + ")";
}

void require_blas(const GraphDef &def, const std::string &blas_error)
{
	if (blas_error.empty())
		return;
	for (std::uint32_t i = 0; i < def.nodes.size(); i++)
		if (op_needs_blas(static_cast<std::uint16_t>(def.nodes[i].op)))
			throw Error(ELIBACC, node_label(def, i) +
						     " needs OpenBLAS, which could not be loaded (" +
						     blas_error + "): install Debian's libopenblas0");
}

} // namespace detail

namespace {

std::vector<unsigned> default_nodes(const Topology &topo)
{
	std::vector<unsigned> ids;

	for (const Node &n : topo.nodes())
		if (!n.cpus.empty())
			ids.push_back(n.id);
	return ids;
}

// The module's feature bits; GET_VERSION answers on /dev/mcp only.
std::uint64_t module_features(const Dma &ctx)
{
	if (ctx.is_host())
		return detail::read_version(ctx.fd(), ctx.name()).features;
	return Device::open().version().features;
}

detail::RuntimeState &require(const std::shared_ptr<detail::RuntimeState> &state)
{
	if (!state)
		throw Error(EBADF, "the runtime is not running (moved from)");
	return *state;
}

// The node of each of @def's buffers by @options, -1 for the context's
// default; throws for a node without memory or an unknown buffer name.
std::vector<int> buffer_nodes(const GraphDef &def, const LoadOptions &options,
			      const detail::RuntimeState &state)
{
	std::vector<int> nodes(def.buffers.size(), options.node);

	if (options.node == -1 && options.buffer_nodes.empty())
		return nodes;
	Topology topo = state.user ? state.user->topo : detail::context_topology(state.ctx);
	if (options.node != -1)
		detail::require_memory_node(topo, options.node, "loading graph '" + def.name + "'");
	for (const auto &[name, node] : options.buffer_nodes) {
		std::optional<std::uint32_t> index = def.find_buffer(name);
		if (!index)
			throw Error(ENOENT, "loading graph '" + def.name + "': it has no buffer named '" +
						    name + "' to place on node " + std::to_string(node));
		if (node != -1)
			detail::require_memory_node(topo, node, "loading graph '" + def.name +
									 "', buffer '" + name + "'");
		nodes[*index] = node;
	}
	return nodes;
}

// @buf in @registry: a kernel buffer mapped again for the registry, so a
// job still running on it outlives the Buffer (HandleRegistry says why).
void register_buffer(detail::HandleRegistry &registry, Buffer &buf, int ctx_fd)
{
	std::span<std::byte> memory = buf.data();

	std::optional<std::uint64_t> offset;
	if (buf.kind() == BufferKind::kernel) {
		try {
			offset = buf.info().mmap_offset;
		} catch (const Error &) {
			// Jobs then use the Buffer's own mapping, as before.
		}
	}
	if (offset)
		registry.acquire(buf.handle(), memory, ctx_fd, *offset);
	else
		registry.acquire(buf.handle(), memory);
}

// The bindings of one execution in the registry: released on destruction
// unless release_after() handed them to the execution's fence.
class BindingHold {
public:
	explicit BindingHold(detail::HandleRegistry &registry) noexcept : registry_(registry) {}
	BindingHold(const BindingHold &) = delete;
	BindingHold &operator=(const BindingHold &) = delete;
	~BindingHold()
	{
		for (std::uint32_t h : handles_)
			registry_.release(h);
	}

	void acquire(Buffer &buf, int ctx_fd)
	{
		handles_.reserve(handles_.size() + 1);
		register_buffer(registry_, buf, ctx_fd);
		handles_.push_back(buf.handle());
	}
	// Without a duplicate of the fence (EMFILE) the handles stay
	// registered for the runtime's life: never released under a job.
	void release_after(const Fence &fence)
	{
		UniqueFd dup(::fcntl(fence.fd(), F_DUPFD_CLOEXEC, 0));

		registry_.release_after(std::move(dup), std::move(handles_));
		handles_.clear();
	}

private:
	detail::HandleRegistry &registry_;
	std::vector<std::uint32_t> handles_;
};


// The GraphInvalid for the kernel's refusal: the validator's sentence
// when it finds the same error, else one built from the three fields.
GraphInvalid kernel_refusal(const GraphDef &def, const struct mcp_graph_create &arg)
{
	GraphError e;

	e.reason = static_cast<GraphErrorReason>(arg.error_reason);
	e.kind = static_cast<GraphErrorKind>(arg.error_kind);
	e.index = arg.error_index;
	std::optional<GraphError> mine = def.validate();
	if (mine && mine->reason == e.reason && mine->kind == e.kind && mine->index == e.index) {
		e.message = "the kernel refused the graph: " + mine->message;
		return GraphInvalid(e);
	}
	std::string where;
	switch (e.kind) {
	case GraphErrorKind::node:
		where = detail::node_label(def, e.index);
		break;
	case GraphErrorKind::buffer:
		where = "buffer " + std::to_string(e.index);
		if (e.index < def.buffers.size() && !def.buffers[e.index].name.empty())
			where += " '" + def.buffers[e.index].name + "'";
		break;
	case GraphErrorKind::tensor:
		where = "tensor " + std::to_string(e.index);
		if (e.index < def.tensors.size() && !def.tensors[e.index].name.empty())
			where += " '" + def.tensors[e.index].name + "'";
		break;
	default:
		where = "the header";
		break;
	}
	e.message = "the kernel refused the graph at " + where + ": " + to_string(e.reason) +
		    (e.reason == GraphErrorReason::engine ? " (no such engine on this context)" : "") +
		    (e.reason == GraphErrorReason::buffer ? " (a bound buffer is too short)" : "");
	return GraphInvalid(e);
}

} // namespace

const char *to_string(Executor executor) noexcept
{
	switch (executor) {
	case Executor::kernel:
		return "kernel";
	case Executor::userspace:
		return "userspace";
	case Executor::automatic:
		return "auto";
	}
	return "unknown";
}

Executor parse_executor(std::string_view name)
{
	for (Executor e : {Executor::kernel, Executor::userspace, Executor::automatic})
		if (name == to_string(e))
			return e;
	throw Error(EINVAL, "unknown executor '" + std::string(name) +
				    "': choose kernel, userspace or auto");
}

const char *to_string(WorkerMode mode) noexcept
{
	switch (mode) {
	case WorkerMode::one_job:
		return "one-job";
	case WorkerMode::batch:
		return "batch";
	case WorkerMode::chains:
		return "chains";
	}
	return "unknown";
}

const char *to_string(ExecState state) noexcept
{
	switch (state) {
	case ExecState::queued:
		return "queued";
	case ExecState::running:
		return "running";
	case ExecState::done:
		return "done";
	case ExecState::failed:
		return "failed";
	}
	return "unknown";
}

std::string exec_failure_message(const ExecStatus &status, const GraphDef &def)
{
	int err = -status.result;
	std::string why = err == ETIMEDOUT ? "timed out (exec_timeout_ms or the time-out given)"
				: err ? std::strerror(err) : "no error";

	if (status.state != ExecState::failed)
		return "execution " + std::to_string(status.exec_id) + " has not failed";
	if (status.failed_node >= 0) {
		auto idx = static_cast<std::uint32_t>(status.failed_node);
		int node_err = idx < status.nodes.size() ? -status.nodes[idx].result : err;
		return "execution " + std::to_string(status.exec_id) + ": " +
		       detail::node_label(def, idx) + " failed: " +
		       (node_err == EINVAL ? "the operator refused its shapes or parameters"
					   : std::strerror(node_err ? node_err : err));
	}
	return "execution " + std::to_string(status.exec_id) + " failed: " + why;
}

// ---- LoadedGraph ----

LoadedGraph::LoadedGraph() noexcept = default;

LoadedGraph::LoadedGraph(LoadedGraph &&other) noexcept
	: state_(std::move(other.state_)), handle_(std::exchange(other.handle_, 0)),
	  def_(std::move(other.def_)), buffers_(std::move(other.buffers_)),
	  user_(std::move(other.user_))
{
}

LoadedGraph &LoadedGraph::operator=(LoadedGraph &&other) noexcept
{
	if (this != &other) {
		reset();
		state_ = std::move(other.state_);
		handle_ = std::exchange(other.handle_, 0);
		def_ = std::move(other.def_);
		buffers_ = std::move(other.buffers_);
		user_ = std::move(other.user_);
	}
	return *this;
}

LoadedGraph::~LoadedGraph()
{
	reset();
}

void LoadedGraph::reset() noexcept
{
	if (user_) {
		// Executions in flight keep the graph until they end.
		user_.reset();
		handle_ = 0;
		state_.reset();
		return;
	}
	if (state_ && handle_) {
		struct mcp_graph_destroy arg = {};

		arg.size = sizeof(arg);
		arg.handle = handle_;
		(void)::ioctl(state_->ctx.fd(), MCP_IOC_GRAPH_DESTROY, &arg);
	}
	// Out of the registries before the buffers unmap: a job or chain of an
	// execution still in flight that starts later fails with ENOENT; one
	// already running keeps the registry's own mapping and the graph's
	// descriptors until it returns.
	if (state_ && handle_)
		state_->graphs.remove(handle_);
	if (state_)
		for (const Buffer &b : buffers_)
			state_->registry.release(b.handle());
	buffers_.clear();
	handle_ = 0;
	state_.reset();
}

Buffer &LoadedGraph::buffer(std::uint32_t index)
{
	if (user_)
		throw Error(EOPNOTSUPP, "the userspace executor's graph buffers are process memory, "
					"not kernel buffers: use LoadedGraph::memory()");
	if (index >= buffers_.size())
		throw Error(EINVAL, "the graph has no buffer " + std::to_string(index) + " (it has " +
					    std::to_string(buffers_.size()) + ")");
	return buffers_[index];
}

std::span<std::byte> LoadedGraph::memory(std::uint32_t index)
{
	if (index >= def_.buffers.size())
		throw Error(EINVAL, "the graph has no buffer " + std::to_string(index) + " (it has " +
					    std::to_string(def_.buffers.size()) + ")");
	if (user_)
		return user_->memory[index].data().first(def_.buffers[index].length);
	return buffer(index).data().first(def_.buffers[index].length);
}

std::span<std::byte> LoadedGraph::memory(std::string_view name)
{
	std::optional<std::uint32_t> index = def_.find_buffer(name);

	if (!index)
		throw Error(ENOENT, "the graph has no buffer named '" + std::string(name) + "'");
	return memory(*index);
}

int LoadedGraph::buffer_node(std::uint32_t index)
{
	if (user_)
		return detail::memory_node(memory(index));
	return buffer(index).info().node;
}

Buffer &LoadedGraph::buffer(std::string_view name)
{
	std::optional<std::uint32_t> index = def_.find_buffer(name);

	if (!index)
		throw Error(ENOENT, "the graph has no buffer named '" + std::string(name) + "'");
	return buffer(*index);
}

// ---- Runtime ----

namespace {

void check_options(const RuntimeOptions &options)
{
	if (options.workers_per_node == 0)
		throw Error(EINVAL, "a runtime needs at least one worker per node");
	if (options.worker_batch > MCP_WORKER_CHAIN_MAX)
		throw Error(EINVAL, "the worker batch must be 1 to " +
					    std::to_string(MCP_WORKER_CHAIN_MAX) +
					    " nodes, or 0 for the default");
}

// One Worker per workers_per_node on each node of @options (default:
// every node of @topo with CPUs), pinned to that node's CPUs.
void make_workers(detail::RuntimeState &state, const Topology &topo, const RuntimeOptions &options)
{
	std::vector<unsigned> nodes = options.nodes.empty() ? default_nodes(topo) : options.nodes;
	if (nodes.empty())
		throw Error(EINVAL, "no NUMA node has online CPUs for the runtime's workers");
	for (unsigned id : nodes) {
		const Node *n = topo.find(id);
		if (!n || n->cpus.empty())
			throw Error(EINVAL, "node " + std::to_string(id) +
						    (n ? " has no online CPUs" : " is not an online NUMA node") +
						    ": choose among the nodes 'mcpctl topology' lists");
		for (unsigned k = 0; k < options.workers_per_node; k++) {
			auto w = std::make_unique<detail::Worker>();
			w->node = static_cast<int>(id);
			w->cpus = n->cpus;
			state.workers.push_back(std::move(w));
		}
	}
}

std::shared_ptr<detail::RuntimeState> start_kernel(const Dma &ctx, const RuntimeOptions &options)
{
	if (!ctx)
		throw Error(EBADF, "the DMA context of the runtime is not open");
	check_options(options);
	Topology topo = detail::context_topology(ctx);
	auto state = std::make_shared<detail::RuntimeState>();
	state->executor = Executor::kernel;
	state->ctx = ctx;
	state->chains = options.worker_chains && (module_features(ctx) & feature::job_chains);
	// Chains: a chain holds nodes that can only run one after another,
	// and run_chain() reports after chain_slice_ns, so the longest is best.
	state->batch = options.worker_batch ? options.worker_batch
		       : state->chains     ? unsigned{MCP_WORKER_CHAIN_MAX}
					   : 32u;
	make_workers(*state, topo, options);
	// OpenBLAS now rather than in the first execution's first MATMUL.
	(void)detail::blas_available();
	state->start();
	return state;
}

std::shared_ptr<detail::RuntimeState> start_user(const RuntimeOptions &options)
{
	check_options(options);
	auto state = std::make_shared<detail::RuntimeState>();
	state->executor = Executor::userspace;
	state->user = std::make_unique<detail::UserExecutor>();
	state->user->topo = detail::sysfs_topology();
	make_workers(*state, state->user->topo, options);
	(void)detail::blas_available();
	state->user->start(*state);
	return state;
}

// The host context when the kernel executor can run there: /dev/mcp
// opens and its module runs graphs; else a closed Dma.
Dma usable_host_context() noexcept
{
	try {
		Device dev = Device::open();
		if (!dev.version().has(feature::graphs))
			return {};
		return Dma::host(dev);
	} catch (const std::exception &) {
		return {};
	}
}

} // namespace

Runtime::Runtime(const Dma &ctx, const RuntimeOptions &options)
{
	state_ = options.executor == Executor::userspace ? start_user(options)
							 : start_kernel(ctx, options);
}

Runtime::Runtime(const RuntimeOptions &options)
{
	switch (options.executor) {
	case Executor::kernel: {
		Device dev = Device::open();
		if (!dev.version().has(feature::graphs))
			throw Error(EOPNOTSUPP, "the loaded mcp module runs no inference graphs: install "
						"a newer mcp module, or use the userspace executor");
		state_ = start_kernel(Dma::host(dev), options);
		break;
	}
	case Executor::userspace:
		state_ = start_user(options);
		break;
	case Executor::automatic: {
		Dma ctx = usable_host_context();
		state_ = ctx ? start_kernel(ctx, options) : start_user(options);
		break;
	}
	default:
		throw Error(EINVAL, "unknown executor " +
					    std::to_string(static_cast<std::uint32_t>(options.executor)));
	}
}

Runtime::Runtime(Runtime &&) noexcept = default;

Runtime &Runtime::operator=(Runtime &&other) noexcept
{
	if (this != &other) {
		if (state_)
			state_->stop_workers();
		state_ = std::move(other.state_);
	}
	return *this;
}

// LoadedGraphs share the state (for GRAPH_DESTROY on the context fd):
// stop the workers now rather than when the last of them goes.
Runtime::~Runtime()
{
	if (state_)
		state_->stop_workers();
}

const Dma &Runtime::context() const noexcept
{
	static const Dma none;

	return state_ ? state_->ctx : none;
}

Executor Runtime::executor() const noexcept
{
	return state_ ? state_->executor : Executor::kernel;
}

std::vector<WorkerInfo> Runtime::workers() const
{
	std::vector<WorkerInfo> out;

	for (const auto &w : require(state_).workers)
		out.push_back({w->node, w->tid.load(), w->jobs.load(), w->failed.load(),
			       w->batch.load(), w->mode.load()});
	return out;
}

LoadedGraph Runtime::load(const GraphDef &def, const LoadOptions &options)
{
	detail::RuntimeState &state = require(state_);
	// Worker operators are opaque to a kernel with feature::worker_ops:
	// their rules (and which ops exist) are checked here, once, before
	// anything is allocated.  The size limits are the kernel's knobs, so
	// only the knobs' caps apply here.
	if (std::optional<GraphError> e = def.validate(GraphLimits{65536, 65536, 16U << 20}))
		throw GraphInvalid(std::move(*e));
	detail::require_blas(def, detail::blas_load_error());
	const std::vector<int> nodes = buffer_nodes(def, options, state);
	if (state.user) {
		LoadedGraph g;
		g.user_ = state.user->load(state, state_, def, nodes);
		g.state_ = state_;
		g.def_ = def;
		g.handle_ = g.user_->handle;
		return g;
	}
	// A kernel without MCP_FEAT_GRAPH_COMPACT reads only the fixed encoding.
	// GET_VERSION answers on /dev/mcp only (ENOTTY on a device fd): a
	// device context sends the fixed encoding, which every kernel reads.
	const bool compact = state.ctx.is_host() &&
			     (detail::read_version(state.ctx.fd(), state.ctx.name()).features &
			      feature::graph_compact);
	std::vector<std::byte> bytes =
		def.serialize(compact ? GraphEncoding::compact : GraphEncoding::fixed);
	LoadedGraph g;

	g.state_ = state_;
	g.def_ = def;
	std::vector<std::uint32_t> handles;
	for (std::size_t i = 0; i < def.buffers.size(); i++) {
		const GraphBuffer &b = def.buffers[i];
		BufferOptions placement;
		if (nodes[i] != -1)
			placement.node = nodes[i];
		Buffer buf = Buffer::create(state.ctx, b.length, placement);
		std::span<std::byte> memory = buf.data();
		def.fill_buffer(static_cast<std::uint32_t>(i), memory);
		handles.push_back(buf.handle());
		g.buffers_.push_back(std::move(buf));
		register_buffer(state.registry, g.buffers_.back(), state.ctx.fd());
	}
	// Built before the graph exists, so that nothing but the registry's
	// own insertion can fail once it does.
	detail::GraphRegistry::Ref descs;
	if (state.chains)
		descs = std::make_shared<const detail::GraphDescs>(detail::GraphDescs::of(def));
	struct mcp_graph_create arg = {};
	arg.size = sizeof(arg);
	arg.graph = reinterpret_cast<std::uintptr_t>(bytes.data());
	arg.graph_len = bytes.size();
	arg.handles = reinterpret_cast<std::uintptr_t>(handles.data());
	arg.n_handles = static_cast<std::uint32_t>(handles.size());
	if (::ioctl(state.ctx.fd(), MCP_IOC_GRAPH_CREATE, &arg) != 0) {
		int err = errno;
		if (err == EINVAL && arg.error_reason != MCP_GRAPH_OK)
			throw kernel_refusal(def, arg);
		throw Error(err, detail::runtime_error_message(err, state.ctx.name(),
							       "MCP_IOC_GRAPH_CREATE"));
	}
	g.handle_ = arg.handle;
	if (state.chains)
		state.graphs.add(g.handle_, std::move(descs));
	state.status_nodes = std::max<std::uint32_t>(state.status_nodes,
						     static_cast<std::uint32_t>(def.nodes.size()));
	return g;
}

Execution Runtime::execute(LoadedGraph &graph, std::span<const GraphBinding> bindings,
			   const ExecOptions &options)
{
	detail::RuntimeState &state = require(state_);
	std::vector<struct mcp_graph_binding> raw;

	if (!graph)
		throw Error(EINVAL, "the graph is not loaded");
	if (graph.state_ != state_)
		throw Error(EINVAL, "the graph was loaded by another runtime");
	if (state.user)
		return {state.user->execute(*graph.user_, bindings, options), Fence{}};
	state.registry.release_ended();
	for (const GraphBinding &b : bindings) {
		if (!b.with || !*b.with)
			throw Error(EINVAL, "binding of buffer " + std::to_string(b.buffer) +
						    " has no buffer");
		if (b.with->context().fd() != state.ctx.fd())
			throw Error(EINVAL, "binding of buffer " + std::to_string(b.buffer) +
						    " is a buffer of another context");
		raw.push_back({b.buffer, b.with->handle()});
	}
	// The bound memory is registered until the execution has ended.
	BindingHold hold(state.registry);
	for (const GraphBinding &b : bindings)
		hold.acquire(*b.with, state.ctx.fd());
	struct mcp_graph_exec arg = {};
	arg.size = sizeof(arg);
	arg.graph = graph.handle();
	arg.in_fence = -1;
	if (options.in_fence) {
		arg.flags |= MCP_GRAPH_EXEC_IN_FENCE;
		arg.in_fence = options.in_fence->fd();
	}
	arg.bindings = reinterpret_cast<std::uintptr_t>(raw.data());
	arg.n_bindings = static_cast<std::uint32_t>(raw.size());
	arg.timeout_ms = static_cast<std::uint32_t>(options.timeout.count());
	arg.out_fence = -1;
	if (::ioctl(state.ctx.fd(), MCP_IOC_GRAPH_EXEC, &arg) != 0) {
		int err = errno;
		std::string what = "MCP_IOC_GRAPH_EXEC of graph " + std::to_string(graph.handle());
		if (err == EINVAL && !raw.empty())
			what += " (a binding names no buffer index, twice the same, or a buffer "
				"shorter than the graph's)";
		throw Error(err, detail::runtime_error_message(err, state.ctx.name(), what));
	}
	Fence fence{UniqueFd(arg.out_fence)};
	hold.release_after(fence);
	return {arg.exec_id, std::move(fence)};
}

ExecStatus Runtime::status(std::uint64_t exec_id) const
{
	detail::RuntimeState &state = require(state_);
	if (state.user)
		return state.user->status(exec_id);
	state.registry.release_ended();
	std::vector<struct mcp_graph_node_status> nodes(std::max<std::uint32_t>(state.status_nodes, 1));
	struct mcp_graph_status arg = {};

	for (int attempt = 0; attempt < 2; attempt++) {
		arg = {};
		arg.size = sizeof(arg);
		arg.exec_id = exec_id;
		arg.nodes = reinterpret_cast<std::uintptr_t>(nodes.data());
		arg.n_nodes = static_cast<std::uint32_t>(nodes.size());
		if (::ioctl(state.ctx.fd(), MCP_IOC_GRAPH_STATUS, &arg) != 0) {
			int err = errno;
			throw Error(err, err == ENOENT
					       ? "execution " + std::to_string(exec_id) +
							 " is unknown or older than the module's "
							 "exec_history_len"
					       : detail::runtime_error_message(err, state.ctx.name(),
									       "MCP_IOC_GRAPH_STATUS"));
		}
		if (arg.n_nodes <= nodes.size())
			break;
		nodes.resize(arg.n_nodes);
	}
	ExecStatus s;
	s.exec_id = exec_id;
	s.state = static_cast<ExecState>(arg.state);
	s.result = arg.result;
	s.failed_node = arg.failed_node;
	s.graph = arg.graph;
	s.submit_ns = arg.submit_ns;
	s.end_ns = arg.end_ns;
	std::uint32_t n = std::min<std::uint32_t>(arg.n_nodes, static_cast<std::uint32_t>(nodes.size()));
	for (std::uint32_t i = 0; i < n; i++) {
		const struct mcp_graph_node_status &r = nodes[i];
		s.nodes.push_back({static_cast<EngineClass>(r.engine), r.numa_node, r.result,
				   r.worker_tid, r.start_ns, r.end_ns});
	}
	return s;
}

ExecStatus Runtime::run(LoadedGraph &graph, std::span<const GraphBinding> bindings,
			const ExecOptions &options)
{
	Execution e = execute(graph, bindings, options);
	std::chrono::nanoseconds limit(-1);

	if (options.timeout.count() > 0)
		limit = options.timeout + std::chrono::seconds(1);
	if (!wait(e, limit))
		throw Error(ETIMEDOUT, "execution " + std::to_string(e.exec_id) + " of graph " +
					       std::to_string(graph.handle()) +
					       " did not end within its time-out");
	return status(e.exec_id);
}

bool Runtime::wait(const Execution &e, std::chrono::nanoseconds timeout) const
{
	detail::RuntimeState &state = require(state_);

	if (state.user)
		return state.user->wait(e.exec_id, timeout);
	if (!e.fence)
		throw Error(EINVAL, "execution " + std::to_string(e.exec_id) + " has no out-fence");
	return e.fence.wait(timeout).state != FenceState::timed_out;
}

bool Runtime::wait(std::uint64_t exec_id, std::chrono::nanoseconds timeout) const
{
	detail::RuntimeState &state = require(state_);

	if (!state.user)
		throw Error(EOPNOTSUPP, "an execution of the kernel executor ends with its out-fence: "
					"wait for Execution::fence");
	return state.user->wait(exec_id, timeout);
}

} // namespace mcp
