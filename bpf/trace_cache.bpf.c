// SPDX-License-Identifier: GPL-2.0-only
/*
 * LLC references and misses per thread, as libbpf-tools' llcstat does: the
 * loader (lib/src/trace_cache.cpp) opens PERF_COUNT_HW_CACHE_REFERENCES and
 * PERF_COUNT_HW_CACHE_MISSES on every CPU with a sample period and attaches
 * these programs; each overflow is charged to the thread running then.
 * Here the current task is the right one: it is the one sampled.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "trace_cache.h"

const volatile __u32 targ_tgid = 0;
const volatile bool filter_cgroup = false;
const volatile __u64 targ_cgroup_id = 0;

/* Threads not recorded because "llc" was full. */
__u64 dropped_tasks = 0;

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, MCP_TRACE_CACHE_MAX_TASKS);
	__type(key, __u32);
	__type(value, struct mcp_cache_task);
} llc SEC(".maps");

static const struct mcp_cache_task zero_task;

static __always_inline int count(struct bpf_perf_event_data *ctx, bool miss)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u32 pid = (__u32)pid_tgid, tgid = pid_tgid >> 32;
	struct mcp_cache_task *t;

	if (!pid)
		return 0;
	if (targ_tgid && tgid != targ_tgid)
		return 0;
	if (filter_cgroup && bpf_get_current_cgroup_id() != targ_cgroup_id)
		return 0;
	t = bpf_map_lookup_elem(&llc, &pid);
	if (!t) {
		if (bpf_map_update_elem(&llc, &pid, &zero_task, BPF_NOEXIST) &&
		    !bpf_map_lookup_elem(&llc, &pid)) {
			__sync_fetch_and_add(&dropped_tasks, 1);
			return 0;
		}
		t = bpf_map_lookup_elem(&llc, &pid);
		if (!t)
			return 0;
		t->pid = pid;
		t->tgid = tgid;
		bpf_get_current_comm(&t->comm, sizeof(t->comm));
	}
	if (miss)
		__sync_fetch_and_add(&t->misses, ctx->sample_period);
	else
		__sync_fetch_and_add(&t->references, ctx->sample_period);
	return 0;
}

SEC("perf_event")
int on_cache_miss(struct bpf_perf_event_data *ctx)
{
	return count(ctx, true);
}

SEC("perf_event")
int on_cache_ref(struct bpf_perf_event_data *ctx)
{
	return count(ctx, false);
}

char LICENSE[] SEC("license") = "GPL";
