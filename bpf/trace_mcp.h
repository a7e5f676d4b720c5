/* SPDX-License-Identifier: (LGPL-2.1-or-later OR BSD-2-Clause) */
/*
 * Shared between trace_mcp.bpf.c and lib/src/trace_mcp.cpp: one placement
 * decision of the tracepoint mcp:mcp_place and one finished DMA job of
 * mcp:mcp_dma_done (kmod/mcp_trace.h), as sent through the ring buffers.
 */
#ifndef MCP_BPF_TRACE_MCP_H
#define MCP_BPF_TRACE_MCP_H

#define MCP_TRACE_RINGBUF_BYTES	(256 * 1024)

struct mcp_place_record {
	__u64 timestamp_ns;	/* bpf_ktime_get_ns(): CLOCK_MONOTONIC */
	__s32 pid;		/* the placed thread */
	__s32 from_node;
	__s32 to_node;
	__s32 home_node;
	__u32 home_source;
	__u32 reason;		/* enum mcp_place_reason */
	__u32 origin;		/* enum mcp_place_origin */
	__u32 flags;		/* MCP_PLACE_* of the request */
};

/* One finished DMA job; times are ktime_get_ns() (CLOCK_MONOTONIC). */
struct mcp_dma_job_record {
	__s32 dev;		/* device index; -1: the host context */
	__u32 engine;		/* 0: cpu, 1: the device's DMA engine */
	__u64 seqno;
	__u64 length;
	__u64 submit_ns;
	__u64 start_ns;		/* 0: never started */
	__u64 done_ns;
	__s32 error;		/* 0 or -errno */
	__s32 pid;		/* the submitting thread; 0: submitted unseen */
	__s32 tgid;
	__u32 unused;
};

#endif /* MCP_BPF_TRACE_MCP_H */
