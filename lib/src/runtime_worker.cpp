// SPDX-License-Identifier: LGPL-2.1-or-later
// The Runtime's worker threads: each pins itself to its node's CPUs,
// registers with MCP_IOC_WORKER_REGISTER, then loops poll() -> read() a
// job and the chain after it -> run their operators in order ->
// MCP_IOC_JOBS_DONE (one job and MCP_IOC_JOB_DONE on a module without
// MCP_FEAT_JOB_BATCH) until the stop eventfd fires or the kernel detaches
// it (read() returns 0).
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

namespace mcp::detail {

OpTensor resolve(const HandleRegistry &registry, const struct mcp_worker_tensor &t,
		 HandleRegistry::Pin &pin, int &err)
{
	OpTensor o;

	o.dtype = t.dtype;
	o.rank = t.rank > MCP_GRAPH_MAX_RANK ? MCP_GRAPH_MAX_RANK : t.rank;
	o.layout = t.layout;
	for (unsigned k = 0; k < o.rank; k++)
		o.dims[k] = t.dims[k];
	o.bytes = tensor_bytes(o);
	pin = registry.pin(t.handle);
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

int run_job(const HandleRegistry &registry, const struct mcp_worker_job &job) noexcept
{
	OpTensor in[MCP_GRAPH_MAX_INPUTS], out[MCP_GRAPH_MAX_OUTPUTS];
	// The tensors' mappings stay until the operator returns.
	HandleRegistry::Pin pins[MCP_GRAPH_MAX_INPUTS + MCP_GRAPH_MAX_OUTPUTS];
	int err = 0;

	if (job.op == MCP_OP_WNOP)
		return 0;
	if (job.n_inputs > MCP_GRAPH_MAX_INPUTS || job.n_outputs > MCP_GRAPH_MAX_OUTPUTS ||
	    job.param_len > MCP_GRAPH_MAX_PARAM)
		return -EINVAL;
	try {
		for (unsigned k = 0; k < job.n_inputs && !err; k++)
			in[k] = resolve(registry, job.inputs[k], pins[k], err);
		for (unsigned k = 0; k < job.n_outputs && !err; k++)
			out[k] = resolve(registry, job.outputs[k], pins[job.n_inputs + k], err);
	} catch (const std::exception &) {
		return -ENOMEM;
	}
	if (err)
		return err;
	return run_op(job.op, std::span(in, job.n_inputs), std::span(out, job.n_outputs),
		      std::as_bytes(std::span(job.param, job.param_len)), false);
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

void pin(const std::vector<unsigned> &cpus) noexcept
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

// Registers the calling thread; -errno on failure.
int register_worker(int ctx_fd, int node, int &worker_fd) noexcept
{
	struct mcp_worker_register arg = {};

	arg.size = sizeof(arg);
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

std::uint64_t monotonic_ns() noexcept
{
	struct timespec ts;

	::clock_gettime(CLOCK_MONOTONIC, &ts);
	return static_cast<std::uint64_t>(ts.tv_sec) * 1000000000u +
	       static_cast<std::uint64_t>(ts.tv_nsec);
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

void worker_loop(RuntimeState &state, Worker &w, StartGate &gate)
{
	int worker_fd = -1;

	w.tid = static_cast<int>(::gettid());
	pin(w.cpus);
	int err = register_worker(state.ctx.fd(), w.node, worker_fd);
	// Before the gate opens, so that workers() shows each one's batch.
	unsigned batch = err ? 1 : probe_batch(worker_fd, state.batch);
	std::vector<struct mcp_worker_job> jobs;
	std::vector<struct mcp_job_report> reports;
	try {
		jobs.resize(batch);
		reports.resize(batch);
	} catch (const std::bad_alloc &) {
		if (!err) {
			::close(worker_fd);
			err = -ENOMEM;
		}
	}
	w.batch = batch;
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
	struct mcp_worker_job &job = jobs[0];
	// read() first and poll() only when no job is waiting: JOB_DONE often
	// makes the next job of a chain ready at once, and taking it without
	// sleeping saves a poll() and a wake-up per node.
	while (!state.stopping.load(std::memory_order_relaxed)) {
		ssize_t n = ::read(fd.get(), jobs.data(), batch * sizeof(job));
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
		auto got = static_cast<std::size_t>(n);
		if (batch > 1 && got % sizeof(job) == 0) {
			run_batch(state, w, fd.get(), std::span(jobs.data(), got / sizeof(job)),
				  reports);
			continue;
		}
		int result = got == sizeof(job) ? run_job(state.registry, job) : -EPROTO;
		w.jobs.fetch_add(1, std::memory_order_relaxed);
		if (result)
			w.failed.fetch_add(1, std::memory_order_relaxed);
		if (static_cast<std::size_t>(n) >= sizeof(job.job_id))
			job_done(fd.get(), job.job_id, result);
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
