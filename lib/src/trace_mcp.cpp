// SPDX-License-Identifier: LGPL-2.1-or-later
// mcp::trace::McpTracer: placement decisions and finished DMA jobs of
// mcp.ko from its raw tracepoints (bpf/trace_mcp.bpf.c), drained from their
// ring buffers, filtered by the placed or submitting task, counted per node
// and reason and, for jobs, as latency histograms per engine and per task.
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <map>
#include <utility>

#include "trace_internal.hpp"
#include "trace_mcp.h"
#include "trace_mcp.skel.h"

namespace mcp::trace {

namespace {

struct SkelDeleter {
	void operator()(struct trace_mcp *s) const noexcept { trace_mcp__destroy(s); }
};

struct LinkDeleter {
	void operator()(struct bpf_link *l) const noexcept { bpf_link__destroy(l); }
};

struct RingDeleter {
	void operator()(struct ring_buffer *rb) const noexcept { ring_buffer__free(rb); }
};

constexpr const char *jobs_unavailable =
	"DMA/job latency per engine unavailable: this mcp.ko has no job tracepoints "
	"(mcp:mcp_dma_submit, mcp:mcp_dma_done)";

// Counts @ns, in microseconds, in the log2 histogram @h.
void add_us(Log2Histogram &h, std::uint64_t ns)
{
	std::uint64_t us = ns / 1000;
	unsigned slot = 0;

	while (us > 1 && slot + 1 < histogram_slots) {
		us >>= 1;
		slot++;
	}
	if (h.slots.size() < histogram_slots)
		h.slots.resize(histogram_slots, 0);
	h.slots[slot]++;
}

// The tgid of thread @pid, 0 when it is gone.
int tgid_of(int pid)
{
	std::ifstream in("/proc/" + std::to_string(pid) + "/status");
	std::string line;

	while (std::getline(in, line))
		if (line.rfind("Tgid:", 0) == 0)
			return std::atoi(line.c_str() + 5);
	return 0;
}

// The cgroup v2 id of thread @pid, 0 when unknown.
std::uint64_t cgroup_of(int pid, const std::string &mount)
{
	std::ifstream in("/proc/" + std::to_string(pid) + "/cgroup");
	std::string line;
	struct stat st = {};

	while (std::getline(in, line))
		if (line.rfind("0::", 0) == 0)
			return stat((mount + line.substr(3)).c_str(), &st) == 0
				       ? static_cast<std::uint64_t>(st.st_ino)
				       : 0;
	return 0;
}

} // namespace

struct McpTracer::Impl {
	std::unique_ptr<struct trace_mcp, SkelDeleter> skel;
	std::unique_ptr<struct bpf_link, LinkDeleter> link;
	std::unique_ptr<struct bpf_link, LinkDeleter> submit_link, done_link;
	std::unique_ptr<struct ring_buffer, RingDeleter> ring;
	bool jobs = false;	// the job tracepoints exist and are attached
	std::vector<struct mcp_dma_job_record> pending_jobs;
	Filter filter;
	std::uint64_t cgroup_id = 0;
	std::vector<PlacementRecord> pending;
	std::uint64_t since_ns = 0;

	bool selected(int pid) const
	{
		if (filter.pid && pid != filter.pid && tgid_of(pid) != filter.pid)
			return false;
		if (cgroup_id && cgroup_of(pid, filter.cgroup_mount) != cgroup_id)
			return false;
		return true;
	}

	static int on_record(void *ctx, void *data, std::size_t size)
	{
		auto *self = static_cast<Impl *>(ctx);
		struct mcp_place_record r = {};

		std::memcpy(&r, data, std::min(size, sizeof(r)));
		PlacementRecord p;
		p.timestamp_ns = r.timestamp_ns;
		p.pid = r.pid;
		p.from_node = r.from_node;
		p.to_node = r.to_node;
		p.home_node = r.home_node;
		p.home_source = static_cast<HomeSource>(r.home_source);
		p.reason = static_cast<PlaceReason>(r.reason);
		p.origin = static_cast<PlaceOrigin>(r.origin);
		p.flags = r.flags;
		self->pending.push_back(p);
		return 0;
	}

	static int on_job(void *ctx, void *data, std::size_t size)
	{
		auto *self = static_cast<Impl *>(ctx);
		struct mcp_dma_job_record r = {};

		std::memcpy(&r, data, std::min(size, sizeof(r)));
		self->pending_jobs.push_back(r);
		return 0;
	}

	// The jobs drained since the last snapshot that pass the filter
	// (jobs whose submitter was not seen pass only without a filter).
	void count_jobs(McpSnapshot &snap)
	{
		std::map<std::pair<int, unsigned>, EngineJobs> engines;
		std::map<int, TaskJobs> tasks;
		const bool filtered = filter.pid || cgroup_id;

		for (const auto &r : pending_jobs) {
			if (r.pid ? !selected(r.pid) : filtered)
				continue;
			EngineJobs &e = engines[{r.dev, r.engine}];
			e.dev = r.dev;
			e.engine = r.engine;
			e.jobs++;
			e.errors += r.error != 0 || !r.start_ns;
			e.bytes += r.length;
			const std::uint64_t latency = r.done_ns > r.submit_ns ? r.done_ns - r.submit_ns : 0;
			add_us(e.latency_us, latency);
			if (r.start_ns)
				add_us(e.queue_us, r.start_ns > r.submit_ns ? r.start_ns - r.submit_ns : 0);
			if (!r.pid)
				continue;
			TaskJobs &t = tasks[r.pid];
			t.pid = r.pid;
			t.tgid = r.tgid;
			t.jobs++;
			add_us(t.latency_us, latency);
		}
		pending_jobs.clear();
		for (auto &[key, e] : engines)
			snap.engines.push_back(std::move(e));
		for (auto &[pid, t] : tasks)
			snap.job_tasks.push_back(std::move(t));
	}
};

McpTracer::McpTracer() noexcept = default;
McpTracer::McpTracer(McpTracer &&) noexcept = default;
McpTracer &McpTracer::operator=(McpTracer &&) noexcept = default;
McpTracer::~McpTracer() = default;

McpTracer McpTracer::open(const McpOptions &options)
{
	detail::require_kernel_btf();
	auto impl = std::make_unique<Impl>();
	impl->filter = options.filter;
	impl->cgroup_id = detail::filter_cgroup_id(options.filter);
	detail::LibbpfLog log;

	impl->skel.reset(trace_mcp__open_and_load());
	if (!impl->skel)
		throw detail::load_error(errno, "mcp", "loading the mcp program", log.text());
	struct trace_mcp *s = impl->skel.get();

	impl->link.reset(bpf_program__attach_raw_tracepoint(s->progs.mcp_place, "mcp_place"));
	if (!impl->link) {
		int err = errno;
		if (err == ENOENT)
			throw TraceError(ENOENT, "mcp.ko not loaded: the tracepoint mcp:mcp_place does "
						 "not exist (run 'sudo modprobe mcp')", log.text());
		throw detail::load_error(err, "mcp", "attaching to mcp:mcp_place", log.text());
	}
	impl->ring.reset(ring_buffer__new(bpf_map__fd(s->maps.placements), Impl::on_record,
					  impl.get(), nullptr));
	if (!impl->ring)
		throw detail::load_error(errno, "mcp", "opening the placement ring buffer", log.text());

	// The job tracepoints came after mcp_place: a module without them
	// still gives placements, and jobs say why they are missing.
	impl->submit_link.reset(bpf_program__attach_raw_tracepoint(s->progs.mcp_dma_submit,
								   "mcp_dma_submit"));
	if (impl->submit_link)
		impl->done_link.reset(bpf_program__attach_raw_tracepoint(s->progs.mcp_dma_done,
									 "mcp_dma_done"));
	if (!impl->submit_link || !impl->done_link) {
		int err = errno;
		impl->submit_link.reset();
		if (err != ENOENT)
			throw detail::load_error(err, "mcp", "attaching to the DMA job tracepoints",
						 log.text());
	} else {
		int err = ring_buffer__add(impl->ring.get(), bpf_map__fd(s->maps.dma_jobs),
					   Impl::on_job, impl.get());
		if (err)
			throw detail::load_error(-err, "mcp", "opening the DMA job ring buffer",
						 log.text());
		impl->jobs = true;
	}
	impl->since_ns = detail::monotonic_ns();

	McpTracer t;
	t.impl_ = std::move(impl);
	return t;
}

bool McpTracer::jobs_available() const noexcept
{
	return impl_ && impl_->jobs;
}

McpSnapshot McpTracer::snapshot()
{
	if (!impl_)
		throw TraceError(EBADF, "McpTracer::snapshot() on a tracer that is not open");
	McpSnapshot snap;
	const std::uint64_t now = detail::monotonic_ns();

	snap.interval_ns = now - impl_->since_ns;
	impl_->since_ns = now;
	int n = ring_buffer__consume(impl_->ring.get());
	if (n < 0)
		throw TraceError(-n, std::string("reading the placement and job ring buffers failed: ") +
					     std::strerror(-n));
	for (const PlacementRecord &p : impl_->pending)
		if (impl_->selected(p.pid))
			snap.placements.push_back(p);
	impl_->pending.clear();
	snap.counts = count_placements(snap.placements);
	snap.jobs_available = impl_->jobs;
	if (impl_->jobs)
		impl_->count_jobs(snap);
	else
		snap.jobs_message = jobs_unavailable;
	snap.dropped = __atomic_exchange_n(&impl_->skel->bss->dropped_records, 0, __ATOMIC_RELAXED) +
		       __atomic_exchange_n(&impl_->skel->bss->dropped_jobs, 0, __ATOMIC_RELAXED);
	return snap;
}

} // namespace mcp::trace
