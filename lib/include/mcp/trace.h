/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libmcp: the C API of the eBPF tracers (bpf/), over mcp::trace of
 * <mcp/trace.hpp>.  Included by <mcp/mcp.h>; same conventions (0 or a
 * negative errno, mcp_strerror_last() for the sentence).  Usable alone, by
 * programs that only trace.
 * Documentation/observability.rst has the long form.
 */
#ifndef MCP_TRACE_H
#define MCP_TRACE_H

#include <stddef.h>
#include <stdint.h>

#ifndef MCP_EXPORT
#if defined(__GNUC__)
#define MCP_EXPORT __attribute__((visibility("default")))
#else
#define MCP_EXPORT
#endif
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* Program groups of mcp_trace_opts.groups. */
#define MCP_TRACE_SCHED		(1U << 0)
#define MCP_TRACE_CACHE		(1U << 1)
#define MCP_TRACE_MCP		(1U << 2)
#define MCP_TRACE_ALL		0x7U

/* mcp_trace_opts.flags */
#define MCP_TRACE_OPT_RAW_TP	(1U << 0)	/* sched: raw_tp even where tp_btf works */
#define MCP_TRACE_OPT_ALL	0x1U

/* Slots of mcp_trace_task.runq_slots (log2 us, as runqlat). */
#define MCP_TRACE_HIST_SLOTS	27

/* A set of loaded tracers and their last snapshot.  Opaque. */
struct mcp_trace;

/**
 * struct mcp_trace_opts - what mcp_trace_open() loads
 * @size:		sizeof(struct mcp_trace_opts)
 * @groups:		MCP_TRACE_* bits
 * @pid:		only this process (tgid); 0 = all
 * @flags:		MCP_TRACE_OPT_*
 * @cgroup:		only tasks directly in this cgroup v2 directory
 *			(absolute or under /sys/fs/cgroup); NULL = all
 * @sample_period:	LLC events per sample; 0 = 10000 (see mcp::trace::CacheOptions)
 */
struct mcp_trace_opts {
	uint32_t size;
	uint32_t groups;
	int32_t pid;
	uint32_t flags;
	const char *cgroup;
	uint64_t sample_period;
};

/**
 * mcp_trace_open() - load and attach the programs of @opts->groups
 * @opts:	what to trace
 * @out:	on success, the handle; release it with mcp_trace_close()
 *
 * MCP_TRACE_CACHE opens without LLC counters where the host has no PMU
 * (mcp_trace_available() tells).  MCP_TRACE_MCP needs mcp.ko loaded.
 *
 * Return: 0, or -EPERM (not root / no CAP_BPF+CAP_PERFMON), -EOPNOTSUPP
 * (no kernel BTF), -EINVAL (bad options, or a program was rejected:
 * mcp_trace_last_log() has the verifier log), -ENOENT (mcp.ko not loaded
 * for MCP_TRACE_MCP, or no such cgroup), or another negative errno.
 */
MCP_EXPORT int mcp_trace_open(const struct mcp_trace_opts *opts, struct mcp_trace **out);

/* mcp_trace_close() - detach, unload and free (NULL is fine). */
MCP_EXPORT void mcp_trace_close(struct mcp_trace *trace);

/**
 * mcp_trace_last_log() - libbpf's output of the last failed
 *			  mcp_trace_open() on this thread (verifier log)
 *
 * Return: the text, "" if none.
 */
MCP_EXPORT const char *mcp_trace_last_log(void);

/**
 * mcp_trace_available() - whether a part of an open group reports data
 * @trace:	the handle
 * @group:	MCP_TRACE_CACHE: LLC counters; MCP_TRACE_MCP: DMA job latency
 *		(0 with a module without job tracepoints); MCP_TRACE_SCHED: 1
 *		when opened
 * @why:	out, may be NULL: the reason when unavailable, NUL-terminated
 * @len:	size of @why
 *
 * Return: 1 available, 0 unavailable, -EINVAL for a group not opened.
 */
MCP_EXPORT int mcp_trace_available(const struct mcp_trace *trace, uint32_t group,
				   char *why, size_t len);

/**
 * mcp_trace_snapshot() - read and reset the counters of every group
 * @trace:	the handle
 * @nr_tasks:	out, may be NULL: tasks in the snapshot
 *
 * The snapshot replaces the previous one; mcp_trace_get_task() reads it.
 *
 * Return: 0 or a negative errno.
 */
MCP_EXPORT int mcp_trace_snapshot(struct mcp_trace *trace, size_t *nr_tasks);

/**
 * struct mcp_trace_task - one thread of the last snapshot
 * @size:		in: sizeof(struct mcp_trace_task)
 * @pid:		thread id
 * @tgid:		process id
 * @node:		node it last ran on, -1 unknown
 * @comm:		NUL-terminated
 * @oncpu_ns:		time on a CPU in the interval
 * @runq_count:		run-queue waits measured
 * @runq_p50_us:	median run-queue latency (interpolated), us
 * @runq_p99_us:	99th percentile, us
 * @runq_total_ns:	sum of the run-queue waits
 * @runq_max_ns:	longest run-queue wait
 * @runq_slots:		the log2 us histogram
 * @migrations:		migrations to another CPU
 * @cross_node_migrations: migrations to a CPU of another node
 * @llc_valid:		1 when @llc_references/@llc_misses are measured
 * @llc_references:	sampled LLC references
 * @llc_misses:		sampled LLC misses
 * @placements:		mcp:mcp_place decisions about it
 * @dma_jobs:		DMA jobs it submitted that finished in the interval
 * @dma_p99_us:		99th percentile of their submit-to-done latency, us
 *
 * @size may be that of the first version, which ends at @placements: the
 * fields after it are then not written.
 */
struct mcp_trace_task {
	uint32_t size;
	int32_t pid;
	int32_t tgid;
	int32_t node;
	char comm[16];
	uint64_t oncpu_ns;
	uint64_t runq_count;
	double runq_p50_us;
	double runq_p99_us;
	uint64_t runq_total_ns;
	uint64_t runq_max_ns;
	uint64_t runq_slots[MCP_TRACE_HIST_SLOTS];
	uint64_t migrations;
	uint64_t cross_node_migrations;
	uint32_t llc_valid;
	uint32_t reserved;
	uint64_t llc_references;
	uint64_t llc_misses;
	uint64_t placements;
	uint64_t dma_jobs;
	double dma_p99_us;
};

/**
 * mcp_trace_get_task() - thread @index (0 .. nr_tasks-1) of the last snapshot
 *
 * Return: 0, or -EINVAL (NULL, bad index, @out->size too small).
 */
MCP_EXPORT int mcp_trace_get_task(const struct mcp_trace *trace, size_t index,
			      struct mcp_trace_task *out);

/**
 * mcp_trace_hist_percentile() - percentile of a log2 histogram
 * @slots:	@nr_slots counts (slot 0: 0..1, slot i: 2^i..2^(i+1)-1)
 * @percent:	0..100
 *
 * Return: the value, interpolated linearly inside its slot's real bounds
 * ([0, 2) for slot 0, [2^i, 2^(i+1)) for slot i: the counted values are
 * truncated); 0 for an empty one.
 */
MCP_EXPORT double mcp_trace_hist_percentile(const uint64_t *slots, size_t nr_slots,
					    double percent);

#ifdef __cplusplus
}
#endif

#endif /* MCP_TRACE_H */
