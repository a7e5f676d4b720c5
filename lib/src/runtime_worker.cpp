// SPDX-License-Identifier: LGPL-2.1-or-later
// The Runtime's worker threads: each pins itself to its node's CPUs,
// registers with MCP_IOC_WORKER_REGISTER, then loops poll() -> read() ->
// run the operators in order -> report, until the stop eventfd fires or
// the kernel detaches it (read() returns 0).  What a read returns, by the
// worker's mode: a chain of nodes as one job, reported with
// MCP_IOC_CHAIN_DONE (MCP_FEAT_JOB_CHAINS); a job and the jobs chained
// after it, reported with MCP_IOC_JOBS_DONE (MCP_FEAT_JOB_BATCH); one job
// and MCP_IOC_JOB_DONE.
#include <algorithm>
#include <cerrno>
#include <condition_variable>
#include <ctime>
#include <cstring>
#include <exception>
#include <mutex>

#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "runtime_internal.hpp"
#include "runtime_user.hpp"

namespace mcp::detail {

void pin_to_cpus(const std::vector<unsigned> &cpus) noexcept
{
	cpu_set_t set;

	CPU_ZERO(&set);
	for (unsigned cpu : cpus)
		if (cpu < CPU_SETSIZE)
			CPU_SET(cpu, &set);
	// A cpuset that excludes the node leaves the worker unpinned: it
	// still serves the node's jobs, only farther from the data.
	(void)sched_setaffinity(0, sizeof(set), &set);
}

OpTensor resolve(const HandleRegistry &registry, const struct mcp_worker_tensor &t,
		 std::uint32_t handle, HandleRegistry::Pin &pin, int &err)
{
	OpTensor o;

	o.dtype = t.dtype;
	o.rank = t.rank > MCP_GRAPH_MAX_RANK ? MCP_GRAPH_MAX_RANK : t.rank;
	o.layout = t.layout;
	for (unsigned k = 0; k < o.rank; k++)
		o.dims[k] = t.dims[k];
	o.bytes = tensor_bytes(o);
	pin = registry.pin(handle);
	if (!pin) {
		err = -ENOENT;
		return o;
	}
	std::span<std::byte> memory = pin->memory;
	if (t.offset > memory.size() || o.bytes > memory.size() - t.offset) {
		err = -EINVAL;
		return o;
	}
	o.data = memory.data() + t.offset;
	return o;
}

namespace {

constexpr unsigned max_tensors = MCP_GRAPH_MAX_INPUTS + MCP_GRAPH_MAX_OUTPUTS;

// One node's operator over @tensors (inputs first), tensor k on BO
// @handles[k]: what both a job and a chain's node run.
int run_node(const HandleRegistry &registry, std::uint16_t op,
	     const struct mcp_worker_tensor *const *tensors, const std::uint32_t *handles,
	     unsigned n_inputs, unsigned n_outputs, std::span<const std::byte> param) noexcept
{
	OpTensor t[max_tensors];
	// The tensors' mappings stay until the operator returns.
	HandleRegistry::Pin pins[max_tensors];
	int err = 0;

	if (n_inputs > MCP_GRAPH_MAX_INPUTS || n_outputs > MCP_GRAPH_MAX_OUTPUTS ||
	    param.size() > MCP_GRAPH_MAX_PARAM)
		return -EINVAL;
	try {
		for (unsigned k = 0; k < n_inputs + n_outputs && !err; k++)
			t[k] = resolve(registry, *tensors[k], handles[k], pins[k], err);
	} catch (const std::exception &) {
		return -ENOMEM;
	}
	if (err)
		return err;
	return run_op(op, std::span(t, n_inputs), std::span(t + n_inputs, n_outputs), param,
		      false);
}

std::uint64_t monotonic_ns() noexcept
{
	struct timespec ts;

	::clock_gettime(CLOCK_MONOTONIC, &ts);
	return static_cast<std::uint64_t>(ts.tv_sec) * 1000000000u +
	       static_cast<std::uint64_t>(ts.tv_nsec);
}

// Node @node of a chain on the BOs @handles (@n_handles, by buffer index).
int run_chain_node(const HandleRegistry &registry, const GraphDescs &descs,
		   const GraphDescs::Node &node, const std::uint32_t *handles,
		   std::uint32_t n_handles) noexcept
{
	const struct mcp_worker_tensor *tensors[max_tensors];
	std::uint32_t bos[max_tensors];
	unsigned n = node.n_inputs + node.n_outputs;

	if (node.op == GraphDescs::invalid_op || n > max_tensors)
		return -EINVAL;
	for (unsigned k = 0; k < n; k++) {
		tensors[k] = &descs.tensors[node.tensor[k]];
		if (tensors[k]->handle >= n_handles)
			return -EINVAL;
		bos[k] = handles[tensors[k]->handle];
	}
	return run_node(registry, node.op, tensors, bos, node.n_inputs, node.n_outputs,
			std::span(descs.params).subspan(node.param_offset, node.param_len));
}

} // namespace

int run_job(const HandleRegistry &registry, const struct mcp_worker_job &job) noexcept
{
	const struct mcp_worker_tensor *tensors[max_tensors];
	std::uint32_t handles[max_tensors];

	if (job.op == MCP_OP_WNOP)
		return 0;
	if (job.n_inputs > MCP_GRAPH_MAX_INPUTS || job.n_outputs > MCP_GRAPH_MAX_OUTPUTS ||
	    job.param_len > MCP_GRAPH_MAX_PARAM)
		return -EINVAL;
	for (unsigned k = 0; k < job.n_inputs + job.n_outputs; k++) {
		tensors[k] = k < job.n_inputs ? &job.inputs[k] : &job.outputs[k - job.n_inputs];
		handles[k] = tensors[k]->handle;
	}
	return run_node(registry, job.op, tensors, handles, job.n_inputs, job.n_outputs,
			std::as_bytes(std::span(job.param, job.param_len)));
}

ChainOutcome run_chain(const HandleRegistry &registry, const GraphRegistry &graphs,
		       const struct mcp_worker_chain &chain, std::size_t len,
		       std::uint64_t *ends, std::uint64_t slice_ns) noexcept
{
	ChainOutcome out;
	GraphRegistry::Ref descs;

	out.start_ns = monotonic_ns();
	if (len < chain_read_bytes(1) || chain.n_nodes == 0 ||
	    len != chain_read_bytes(chain.n_nodes) || chain.n_buffers > MCP_GRAPH_MAX_BUFFERS) {
		out.result = -EINVAL;
	} else {
		try {
			descs = graphs.find(chain.graph);
		} catch (const std::exception &) {
			out.result = -ENOMEM;
		}
		if (!descs && !out.result)
			out.result = -ENOENT;
	}
	const std::uint32_t n_nodes = out.result ? 0 : chain.n_nodes;
	for (std::uint32_t i = 0; i < n_nodes && !out.result; i++)
		if (chain.nodes[i] >= descs->nodes.size())
			out.result = -EINVAL;
	if (out.result) {
		ends[0] = monotonic_ns();
		return out;
	}
	for (std::uint32_t i = 0; i < n_nodes; i++) {
		const GraphDescs::Node &node = descs->nodes[chain.nodes[i]];
		// WNOP: nothing to resolve or run, only the node's end time.
		int result = node.op == MCP_OP_WNOP
				     ? 0
				     : run_chain_node(registry, *descs, node, chain.handles,
						      chain.n_buffers);

		ends[i] = monotonic_ns();
		out.n_ran = i + 1;
		if (result) {
			out.result = result;
			break;
		}
		if (ends[i] - out.start_ns >= slice_ns)
			break;
	}
	return out;
}

namespace {

// What the constructor waits for: every worker registered or one failed.
struct StartGate {
	std::mutex lock;
	std::condition_variable cv;
	unsigned registered = 0;
	int error = 0;
	std::string message;
};

// Registers the calling thread (@flags: MCP_WORKER_CHAINS or 0); -errno on
// failure.
int register_worker(int ctx_fd, int node, std::uint32_t flags, int &worker_fd) noexcept
{
	struct mcp_worker_register arg = {};

	arg.size = sizeof(arg);
	arg.flags = flags;
	arg.node = node;
	if (::ioctl(ctx_fd, MCP_IOC_WORKER_REGISTER, &arg) != 0)
		return -errno;
	worker_fd = arg.fd;
	// Non-blocking: a job poll() announced may be claimed by another
	// worker of the node first.
	int fl = ::fcntl(worker_fd, F_GETFL);
	if (fl < 0 || ::fcntl(worker_fd, F_SETFL, fl | O_NONBLOCK) != 0) {
		int err = -errno;
		::close(worker_fd);
		return err;
	}
	return 0;
}

// Jobs per read this worker fd takes: @wanted, or 1 on a module without
// MCP_FEAT_JOB_BATCH (an empty MCP_IOC_JOBS_DONE is ENOTTY there).
unsigned probe_batch(int worker_fd, unsigned wanted) noexcept
{
	struct mcp_jobs_done arg = {};

	if (wanted <= 1)
		return 1;
	arg.size = sizeof(arg);
	return ::ioctl(worker_fd, MCP_IOC_JOBS_DONE, &arg) == 0 ? wanted : 1;
}

void job_done(int worker_fd, std::uint64_t job_id, int result) noexcept
{
	struct mcp_job_done arg = {};

	arg.size = sizeof(arg);
	arg.job_id = job_id;
	arg.result = result;
	// ENOENT: the execution was cancelled meanwhile; nothing to do.
	while (::ioctl(worker_fd, MCP_IOC_JOB_DONE, &arg) != 0 && errno == EINTR) {
	}
}

void jobs_done(int worker_fd, std::span<struct mcp_job_report> reports) noexcept
{
	struct mcp_jobs_done arg = {};

	arg.size = sizeof(arg);
	arg.reports = reinterpret_cast<std::uintptr_t>(reports.data());
	arg.n_reports = static_cast<std::uint32_t>(reports.size());
	// Per-report ENOENT/ECANCELED: cancelled meanwhile; nothing to do.
	while (::ioctl(worker_fd, MCP_IOC_JOBS_DONE, &arg) != 0 && errno == EINTR) {
	}
}

void chain_done(int worker_fd, std::uint64_t job_id, const ChainOutcome &outcome,
		const std::uint64_t *ends) noexcept
{
	struct mcp_chain_done arg = {};

	arg.size = sizeof(arg);
	arg.job_id = job_id;
	arg.start_ns = outcome.start_ns;
	arg.ends = reinterpret_cast<std::uintptr_t>(ends);
	arg.n_ran = outcome.n_ran;
	arg.result = outcome.result;
	// ENOENT/ECANCELED: cancelled meanwhile; nothing to do.
	while (::ioctl(worker_fd, MCP_IOC_CHAIN_DONE, &arg) != 0 && errno == EINTR) {
	}
}

// Runs the @n jobs of one read in order: the first, then its chain.  A
// failure ends the chain; the kernel cancels the rest, which are still
// reported so the worker fd lets go of them.
void run_batch(RuntimeState &state, Worker &w, int worker_fd,
	       std::span<const struct mcp_worker_job> jobs,
	       std::vector<struct mcp_job_report> &reports) noexcept
{
	bool failed = false;
	std::uint64_t t = monotonic_ns();

	for (std::size_t i = 0; i < jobs.size(); i++) {
		struct mcp_job_report &r = reports[i];

		r = {};
		r.job_id = jobs[i].job_id;
		if (failed) {
			r.result = -ECANCELED;
			continue;
		}
		r.start_ns = t;
		r.result = run_job(state.registry, jobs[i]);
		t = monotonic_ns();
		r.end_ns = t;
		w.jobs.fetch_add(1, std::memory_order_relaxed);
		if (r.result) {
			w.failed.fetch_add(1, std::memory_order_relaxed);
			failed = true;
		}
	}
	jobs_done(worker_fd, std::span(reports.data(), jobs.size()));
}

// What one worker reads into and reports from, by its mode.
struct WorkerBuffers {
	std::vector<struct mcp_worker_job> jobs;
	std::vector<struct mcp_job_report> reports;
	// A struct mcp_worker_chain with room for @batch nodes, 8-aligned.
	std::vector<std::uint64_t> chain;
	std::vector<std::uint64_t> ends;

	void allocate(WorkerMode mode, unsigned batch)
	{
		if (mode == WorkerMode::chains) {
			chain.resize((chain_read_bytes(batch) + sizeof(std::uint64_t) - 1) /
				     sizeof(std::uint64_t));
			ends.resize(batch);
			return;
		}
		jobs.resize(batch);
		reports.resize(batch);
	}
};

// Runs what one read of @n bytes returned and reports it.
void run_read(RuntimeState &state, Worker &w, int worker_fd, WorkerBuffers &b,
	      std::size_t n) noexcept
{
	const WorkerMode mode = w.mode.load(std::memory_order_relaxed);

	if (mode == WorkerMode::chains) {
		const auto &chain = *reinterpret_cast<const struct mcp_worker_chain *>(b.chain.data());
		if (n < sizeof(chain.job_id))
			return;
		ChainOutcome o = run_chain(state.registry, state.graphs, chain, n, b.ends.data());
		w.jobs.fetch_add(o.n_ran, std::memory_order_relaxed);
		if (o.result)
			w.failed.fetch_add(1, std::memory_order_relaxed);
		chain_done(worker_fd, chain.job_id, o, b.ends.data());
		return;
	}
	const struct mcp_worker_job &job = b.jobs[0];
	if (mode == WorkerMode::batch && n % sizeof(job) == 0) {
		run_batch(state, w, worker_fd, std::span(b.jobs.data(), n / sizeof(job)), b.reports);
		return;
	}
	int result = n == sizeof(job) ? run_job(state.registry, job) : -EPROTO;
	w.jobs.fetch_add(1, std::memory_order_relaxed);
	if (result)
		w.failed.fetch_add(1, std::memory_order_relaxed);
	if (n >= sizeof(job.job_id))
		job_done(worker_fd, job.job_id, result);
}

void worker_loop(RuntimeState &state, Worker &w, StartGate &gate)
{
	int worker_fd = -1;
	WorkerMode mode = WorkerMode::one_job;
	unsigned batch = 1;

	w.tid = static_cast<int>(::gettid());
	pin_to_cpus(w.cpus);
	int err = register_worker(state.ctx.fd(), w.node, state.chains ? MCP_WORKER_CHAINS : 0,
				  worker_fd);
	// Before the gate opens, so that workers() shows each one's mode.
	if (!err && state.chains) {
		mode = WorkerMode::chains;
		batch = state.batch;
	} else if (!err) {
		batch = probe_batch(worker_fd, std::min(state.batch, unsigned{MCP_WORKER_READ_MAX}));
		mode = batch > 1 ? WorkerMode::batch : WorkerMode::one_job;
	}
	WorkerBuffers buffers;
	try {
		buffers.allocate(mode, batch);
	} catch (const std::bad_alloc &) {
		if (!err) {
			::close(worker_fd);
			err = -ENOMEM;
		}
	}
	w.batch = batch;
	w.mode = mode;
	{
		std::lock_guard guard(gate.lock);
		if (err && !gate.error) {
			gate.error = -err;
			gate.message = runtime_error_message(
				-err, state.ctx.name(),
				"registering a worker for node " + std::to_string(w.node));
		}
		gate.registered++;
		// Under the lock: once it is released start() may return and
		// destroy the gate, so the worker must not touch it after.
		gate.cv.notify_all();
	}
	if (err)
		return;
	UniqueFd fd(worker_fd);
	struct pollfd fds[2] = {{fd.get(), POLLIN, 0}, {state.stop.get(), POLLIN, 0}};
	void *read_to = mode == WorkerMode::chains ? static_cast<void *>(buffers.chain.data())
						   : static_cast<void *>(buffers.jobs.data());
	const std::size_t read_len = mode == WorkerMode::chains
					     ? chain_read_bytes(batch)
					     : batch * sizeof(struct mcp_worker_job);
	// read() first and poll() only when no job is waiting: a report often
	// makes the next job ready at once, and taking it without sleeping
	// saves a poll() and a wake-up.
	while (!state.stopping.load(std::memory_order_relaxed)) {
		ssize_t n = ::read(fd.get(), read_to, read_len);
		if (n == 0)
			return;	// detached: the context is going away
		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno != EAGAIN)
				return;
			if (::poll(fds, 2, -1) < 0 && errno != EINTR)
				return;
			if (fds[1].revents & POLLIN)
				return;
			continue;
		}
		run_read(state, w, fd.get(), buffers, static_cast<std::size_t>(n));
	}
}

} // namespace

void RuntimeState::start()
{
	StartGate gate;
	int efd = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);

	if (efd < 0) {
		int err = errno;
		throw Error(err, std::string("cannot create the runtime's stop eventfd: ") +
					 std::strerror(err));
	}
	stop = UniqueFd(efd);
	unsigned started = 0;
	try {
		for (auto &w : workers) {
			Worker &ref = *w;
			w->thread = std::thread([this, &ref, &gate] { worker_loop(*this, ref, gate); });
			started++;
		}
	} catch (...) {
		std::unique_lock guard(gate.lock);
		gate.cv.wait(guard, [&] { return gate.registered == started; });
		guard.unlock();
		stop_workers();
		throw;
	}
	std::unique_lock guard(gate.lock);
	gate.cv.wait(guard, [&] { return gate.registered == workers.size(); });
	if (gate.error) {
		guard.unlock();
		stop_workers();
		throw Error(gate.error, gate.message);
	}
}

void RuntimeState::stop_workers() noexcept
{
	std::uint64_t one = 1;

	if (user) {
		user->stop(*this);
		return;
	}
	stopping = true;
	if (stop.valid())
		(void)!::write(stop.get(), &one, sizeof(one));
	for (auto &w : workers)
		if (w->thread.joinable())
			w->thread.join();
}

RuntimeState::~RuntimeState()
{
	stop_workers();
}

} // namespace mcp::detail
