// SPDX-License-Identifier: LGPL-2.1-or-later
// The C API of the eBPF tracers (<mcp/trace.h>) over mcp::trace.
#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstring>
#include <new>
#include <optional>
#include <string>

#include <mcp/trace.h>

#include "internal.hpp"
#include "trace_internal.hpp"

struct mcp_trace {
	std::uint32_t groups = 0;
	std::optional<mcp::trace::SchedTracer> sched;
	std::optional<mcp::trace::CacheTracer> cache;
	std::optional<mcp::trace::McpTracer> mcp;
	std::vector<mcp::trace::TaskRecord> tasks;
};

using mcp::detail::c_api_fail;
using mcp::detail::c_api_guard;

namespace {

thread_local std::string trace_last_log;

void copy_text(char *dst, std::size_t len, const std::string &src) noexcept
{
	if (!dst || len == 0)
		return;
	std::size_t n = std::min(src.size(), len - 1);
	std::memcpy(dst, src.data(), n);
	dst[n] = '\0';
}

} // namespace

extern "C" {

int mcp_trace_open(const struct mcp_trace_opts *opts, struct mcp_trace **out)
{
	if (!opts || !out || opts->size < sizeof(struct mcp_trace_opts) ||
	    (opts->flags & ~MCP_TRACE_OPT_ALL) ||
	    !opts->groups || (opts->groups & ~MCP_TRACE_ALL) || opts->pid < 0)
		return c_api_fail(EINVAL, "mcp_trace_open: opts or out is NULL, opts->size is too "
					  "small, or bad groups, pid or flags");
	trace_last_log.clear();
	return c_api_guard([&] {
		try {
			using namespace mcp::trace;
			auto handle = std::make_unique<mcp_trace>();
			Filter filter;

			filter.pid = opts->pid;
			if (opts->cgroup)
				filter.cgroup = opts->cgroup;
			handle->groups = opts->groups;
			if (opts->groups & MCP_TRACE_SCHED)
				handle->sched = SchedTracer::open({filter, {}, (opts->flags & MCP_TRACE_OPT_RAW_TP) != 0});
			if (opts->groups & MCP_TRACE_CACHE)
				handle->cache = CacheTracer::open({filter, opts->sample_period ? opts->sample_period
											  : CacheOptions{}.sample_period});
			if (opts->groups & MCP_TRACE_MCP)
				handle->mcp = McpTracer::open({filter});
			*out = handle.release();
			return 0;
		} catch (const mcp::trace::TraceError &e) {
			trace_last_log = e.log();
			throw;
		}
	});
}

void mcp_trace_close(struct mcp_trace *trace)
{
	std::unique_ptr<mcp_trace> owned(trace);
}

const char *mcp_trace_last_log(void)
{
	return trace_last_log.c_str();
}

int mcp_trace_available(const struct mcp_trace *trace, uint32_t group, char *why, size_t len)
{
	if (!trace || !(trace->groups & group) ||
	    (group != MCP_TRACE_SCHED && group != MCP_TRACE_CACHE && group != MCP_TRACE_MCP))
		return c_api_fail(EINVAL, "mcp_trace_available: trace is NULL or the group is not open");
	if (group == MCP_TRACE_CACHE && !trace->cache->llc_available()) {
		copy_text(why, len, trace->cache->llc_message());
		return 0;
	}
	if (group == MCP_TRACE_MCP && !trace->mcp->jobs_available()) {
		copy_text(why, len, "DMA/job latency per engine unavailable: this mcp.ko has no job "
				    "tracepoints (mcp:mcp_dma_submit, mcp:mcp_dma_done)");
		return 0;
	}
	copy_text(why, len, "");
	return 1;
}

int mcp_trace_snapshot(struct mcp_trace *trace, size_t *nr_tasks)
{
	if (!trace)
		return c_api_fail(EINVAL, "mcp_trace_snapshot: trace is NULL");
	return c_api_guard([&] {
		using namespace mcp::trace;
		SchedSnapshot sched;
		std::optional<CacheSnapshot> cache;
		std::optional<McpSnapshot> mcp;

		if (trace->sched)
			sched = trace->sched->snapshot();
		if (trace->cache)
			cache = trace->cache->snapshot();
		if (trace->mcp)
			mcp = trace->mcp->snapshot();
		trace->tasks = join_tasks(sched, cache ? &*cache : nullptr, mcp ? &*mcp : nullptr);
		if (nr_tasks)
			*nr_tasks = trace->tasks.size();
		return 0;
	});
}

int mcp_trace_get_task(const struct mcp_trace *trace, size_t index, struct mcp_trace_task *out)
{
	// The first version of the struct ended at placements.
	constexpr std::size_t v1_size = offsetof(struct mcp_trace_task, dma_jobs);

	if (!trace || !out || out->size < v1_size || index >= trace->tasks.size())
		return c_api_fail(EINVAL, "mcp_trace_get_task: NULL argument, out->size too small or "
					  "index out of range");
	const mcp::trace::TaskRecord &r = trace->tasks[index];
	const uint32_t size = out->size;
	// Filled whole, then copied as far as the caller's @size.
	struct mcp_trace_task t = {};

	t.size = size;
	t.pid = r.pid;
	t.tgid = r.tgid;
	t.node = r.node;
	copy_text(t.comm, sizeof(t.comm), r.comm);
	t.oncpu_ns = r.oncpu_ns;
	t.runq_count = r.runq_us.count();
	t.runq_p50_us = r.runq_us.percentile(50);
	t.runq_p99_us = r.runq_us.percentile(99);
	t.runq_total_ns = r.runq_total_ns;
	t.runq_max_ns = r.runq_max_ns;
	for (std::size_t i = 0; i < r.runq_us.slots.size() && i < MCP_TRACE_HIST_SLOTS; i++)
		t.runq_slots[i] = r.runq_us.slots[i];
	t.migrations = r.migrations;
	t.cross_node_migrations = r.cross_node_migrations;
	t.llc_valid = r.llc_references.has_value();
	t.llc_references = r.llc_references.value_or(0);
	t.llc_misses = r.llc_misses.value_or(0);
	t.placements = r.placements;
	t.dma_jobs = r.dma_jobs;
	t.dma_p99_us = r.dma_latency_us.percentile(99);
	std::memcpy(out, &t, std::min<std::size_t>(size, sizeof(t)));
	return 0;
}

double mcp_trace_hist_percentile(const uint64_t *slots, size_t nr_slots, double percent)
{
	if (!slots)
		return 0;
	mcp::trace::Log2Histogram h;
	h.slots.assign(slots, slots + nr_slots);
	return h.percentile(percent);
}

} // extern "C"
