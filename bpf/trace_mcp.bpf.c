// SPDX-License-Identifier: GPL-2.0-only
/*
 * Placement decisions of mcp.ko from its tracepoint mcp:mcp_place, one
 * ring-buffer record each; the loader (lib/src/trace_mcp.cpp) filters and
 * aggregates them per node and reason.  A raw tracepoint, because the
 * module's tracepoint has no vmlinux BTF; it attaches only while mcp.ko is
 * loaded.  Placements are rare, so every decision is sent.
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

char LICENSE[] SEC("license") = "GPL";
