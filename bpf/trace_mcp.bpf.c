// SPDX-License-Identifier: GPL-2.0-only
/*
 * Placement decisions of mcp.ko from its tracepoint mcp:mcp_place and
 * finished DMA jobs from mcp:mcp_dma_submit / mcp:mcp_dma_done, one
 * ring-buffer record each; the loader (lib/src/trace_mcp.cpp) filters and
 * aggregates them (per node and reason; per engine and per task).  Raw
 * tracepoints, because the module's tracepoints have no vmlinux BTF; they
 * attach only while mcp.ko is loaded.  Both are rare next to scheduler
 * events, so every one is sent.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "trace_mcp.h"

/* Records lost because the ring buffer was full. */
__u64 dropped_records = 0;

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, MCP_TRACE_RINGBUF_BYTES);
} placements SEC(".maps");

/* TP_PROTO(pid_t pid, int from_node, int to_node, int home_node,
 *	    u32 home_source, u32 reason, u32 origin, u32 flags) */
SEC("raw_tp/mcp_place")
int BPF_PROG(mcp_place, pid_t pid, int from_node, int to_node, int home_node,
	     u32 home_source, u32 reason, u32 origin, u32 flags)
{
	struct mcp_place_record *r;

	r = bpf_ringbuf_reserve(&placements, sizeof(*r), 0);
	if (!r) {
		__sync_fetch_and_add(&dropped_records, 1);
		return 0;
	}
	r->timestamp_ns = bpf_ktime_get_ns();
	r->pid = pid;
	r->from_node = from_node;
	r->to_node = to_node;
	r->home_node = home_node;
	r->home_source = home_source;
	r->reason = reason;
	r->origin = origin;
	r->flags = flags;
	bpf_ringbuf_submit(r, 0);
	return 0;
}

/* Jobs lost because "dma_jobs" was full. */
__u64 dropped_jobs = 0;

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, MCP_TRACE_RINGBUF_BYTES);
} dma_jobs SEC(".maps");

/*
 * A job in flight -> who submitted it.  seqno counts per context, so the
 * submit time is part of the key; done runs in an engine's thread.
 */
struct job_key {
	__s32 dev;
	__u32 engine;
	__u64 seqno;
	__u64 submit_ns;
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 4096);
	__type(key, struct job_key);
	__type(value, __u64);	/* bpf_get_current_pid_tgid() */
} submitters SEC(".maps");

/* TP_PROTO(int dev, u32 engine, u64 seqno, u64 length, u64 submit_ns) */
SEC("raw_tp/mcp_dma_submit")
int BPF_PROG(mcp_dma_submit, int dev, u32 engine, u64 seqno, u64 length, u64 submit_ns)
{
	struct job_key key = { .dev = dev, .engine = engine, .seqno = seqno,
			       .submit_ns = submit_ns };
	__u64 id = bpf_get_current_pid_tgid();

	bpf_map_update_elem(&submitters, &key, &id, BPF_ANY);
	return 0;
}

/* TP_PROTO(int dev, u32 engine, u64 seqno, u64 length, int error,
 *	    u64 submit_ns, u64 start_ns, u64 done_ns) */
SEC("raw_tp/mcp_dma_done")
int BPF_PROG(mcp_dma_done, int dev, u32 engine, u64 seqno, u64 length, int error,
	     u64 submit_ns, u64 start_ns, u64 done_ns)
{
	struct job_key key = { .dev = dev, .engine = engine, .seqno = seqno,
			       .submit_ns = submit_ns };
	struct mcp_dma_job_record *r;
	__u64 *id;

	r = bpf_ringbuf_reserve(&dma_jobs, sizeof(*r), 0);
	if (!r) {
		__sync_fetch_and_add(&dropped_jobs, 1);
		bpf_map_delete_elem(&submitters, &key);
		return 0;
	}
	r->dev = dev;
	r->engine = engine;
	r->seqno = seqno;
	r->length = length;
	r->submit_ns = submit_ns;
	r->start_ns = start_ns;
	r->done_ns = done_ns;
	r->error = error;
	id = bpf_map_lookup_elem(&submitters, &key);
	r->pid = id ? (__u32)*id : 0;
	r->tgid = id ? *id >> 32 : 0;
	r->unused = 0;
	if (id)
		bpf_map_delete_elem(&submitters, &key);
	bpf_ringbuf_submit(r, 0);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
