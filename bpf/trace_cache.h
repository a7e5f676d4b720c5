/* SPDX-License-Identifier: (LGPL-2.1-or-later OR BSD-2-Clause) */
/*
 * Shared between trace_cache.bpf.c and lib/src/trace_cache.cpp: LLC
 * references and misses per thread, sampled by perf events.
 */
#ifndef MCP_BPF_TRACE_CACHE_H
#define MCP_BPF_TRACE_CACHE_H

#define MCP_TRACE_CACHE_MAX_TASKS	10240
#define MCP_TRACE_CACHE_COMM_LEN	16

/* One thread, keyed by pid in the "llc" hash map. */
struct mcp_cache_task {
	__u32 pid;
	__u32 tgid;
	char comm[MCP_TRACE_CACHE_COMM_LEN];
	__u64 references;	/* estimated: samples x sample period */
	__u64 misses;
};

#endif /* MCP_BPF_TRACE_CACHE_H */
