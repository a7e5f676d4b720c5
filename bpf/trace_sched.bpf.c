// SPDX-License-Identifier: GPL-2.0-only
/*
 * Scheduling of the traced tasks: run-queue latency (wake-up or preemption
 * to running) as log2 us histograms, on-CPU time per NUMA node, migrations
 * (cross-node ones apart), sched_migrate_task events and the kernel's
 * NUMA-balancing moves, per thread.
 *
 * Every tracepoint has a tp_btf and a raw_tp twin; the loader
 * (lib/src/trace_sched.cpp) autoloads one family.  Filters apply to the
 * task the event is about (the woken, switched or migrated one), never to
 * the current task: a wake-up runs in the waker's context.
 */
#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "trace_bits.bpf.h"
#include "trace_sched.h"

#define TASK_RUNNING 0

/* Set by the loader before load. */
const volatile __u32 targ_tgid = 0;
const volatile bool filter_cgroup = false;
const volatile __u64 targ_cgroup_id = 0;

/* Tasks not recorded because "tasks" was full. */
__u64 dropped_tasks = 0;

/* CPU -> NUMA node, filled by the loader from the topology. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, MCP_TRACE_MAX_CPUS);
	__type(key, __u32);
	__type(value, __u32);
} cpu_node SEC(".maps");

/* pid -> 1 + the CPU it last ran on; kept across snapshots. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, MCP_TRACE_MAX_TASKS);
	__type(key, __u32);
	__type(value, __u32);
} last_cpu SEC(".maps");

/* pid -> when it became runnable (ns). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, MCP_TRACE_MAX_TASKS);
	__type(key, __u32);
	__type(value, __u64);
} runnable_since SEC(".maps");

/* When the task now on this CPU started running on it (ns). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} cpu_since SEC(".maps");

/* pid -> aggregates; read and deleted by the loader each interval. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, MCP_TRACE_MAX_TASKS);
	__type(key, __u32);
	__type(value, struct mcp_sched_task);
} tasks SEC(".maps");

static const struct mcp_sched_task zero_task;

static __always_inline __u64 task_cgroup_id(struct task_struct *p)
{
	return BPF_CORE_READ(p, cgroups, dfl_cgrp, kn, id);
}

static __always_inline bool task_selected(struct task_struct *p)
{
	if (!p)
		return false;
	if (targ_tgid && (__u32)BPF_CORE_READ(p, tgid) != targ_tgid)
		return false;
	if (filter_cgroup && task_cgroup_id(p) != targ_cgroup_id)
		return false;
	return true;
}

static __always_inline __u32 node_of(__u32 cpu)
{
	__u32 *node = bpf_map_lookup_elem(&cpu_node, &cpu);

	return node ? *node : 0;
}

/* The record of @p, created on first sight. */
static __always_inline struct mcp_sched_task *task_record(struct task_struct *p)
{
	__u32 pid = BPF_CORE_READ(p, pid);
	struct mcp_sched_task *t;

	t = bpf_map_lookup_elem(&tasks, &pid);
	if (t)
		return t;
	if (bpf_map_update_elem(&tasks, &pid, &zero_task, BPF_NOEXIST) &&
	    !bpf_map_lookup_elem(&tasks, &pid)) {
		__sync_fetch_and_add(&dropped_tasks, 1);
		return NULL;
	}
	t = bpf_map_lookup_elem(&tasks, &pid);
	if (!t)
		return NULL;
	t->pid = pid;
	t->tgid = BPF_CORE_READ(p, tgid);
	t->cgroup_id = task_cgroup_id(p);
	BPF_CORE_READ_STR_INTO(&t->comm, p, comm);
	return t;
}

static __always_inline int on_wakeup(struct task_struct *p)
{
	__u32 pid;
	__u64 now;

	if (!task_selected(p))
		return 0;
	pid = BPF_CORE_READ(p, pid);
	now = bpf_ktime_get_ns();
	bpf_map_update_elem(&runnable_since, &pid, &now, BPF_ANY);
	return 0;
}

static __always_inline void account_oncpu(struct task_struct *prev, __u32 cpu, __u64 now)
{
	__u32 zero = 0, node;
	struct mcp_sched_task *t;
	__u64 *since;

	since = bpf_map_lookup_elem(&cpu_since, &zero);
	if (!since)
		return;
	if (*since && BPF_CORE_READ(prev, pid) && task_selected(prev)) {
		t = task_record(prev);
		if (t) {
			node = node_of(cpu);
			if (node < MCP_TRACE_MAX_NODES)
				__sync_fetch_and_add(&t->oncpu_ns[node], now - *since);
			t->last_cpu = cpu;
			t->last_node = node;
		}
	}
	*since = now;
}

static __always_inline void account_runq(struct task_struct *next, __u64 now)
{
	__u32 pid = BPF_CORE_READ(next, pid);
	struct mcp_sched_task *t;
	__u64 *tsp, delta, slot;

	tsp = bpf_map_lookup_elem(&runnable_since, &pid);
	if (!tsp)
		return;
	delta = now - *tsp;
	bpf_map_delete_elem(&runnable_since, &pid);
	if ((__s64)delta < 0 || !task_selected(next))
		return;
	t = task_record(next);
	if (!t)
		return;
	slot = mcp_log2l(delta / 1000);
	if (slot >= MCP_TRACE_SLOTS)
		slot = MCP_TRACE_SLOTS - 1;
	__sync_fetch_and_add(&t->runq_slots[slot], 1);
	__sync_fetch_and_add(&t->runq_count, 1);
	__sync_fetch_and_add(&t->runq_total_ns, delta);
	if (delta > t->runq_max_ns)
		t->runq_max_ns = delta;
}

/*
 * A migration as the task sees it: it starts running on another CPU than
 * last time.  sched_migrate_task events are counted apart (migrate_events):
 * they also report moves of tasks that were queued but never ran there.
 */
static __always_inline void account_move(struct task_struct *next, __u32 cpu)
{
	__u32 pid = BPF_CORE_READ(next, pid), here = cpu + 1;
	struct mcp_sched_task *t;
	__u32 *last;

	if (!pid || !task_selected(next))
		return;
	last = bpf_map_lookup_elem(&last_cpu, &pid);
	if (last && *last != here) {
		t = task_record(next);
		if (t) {
			__sync_fetch_and_add(&t->migrations, 1);
			if (node_of(*last - 1) != node_of(cpu))
				__sync_fetch_and_add(&t->cross_node_migrations, 1);
		}
	}
	if (!last || *last != here)
		bpf_map_update_elem(&last_cpu, &pid, &here, BPF_ANY);
}

/* The outgoing task ran here: its next start elsewhere is a move. */
static __always_inline void remember_cpu(struct task_struct *prev, __u32 cpu)
{
	__u32 pid = BPF_CORE_READ(prev, pid), here = cpu + 1;
	__u32 *last;

	if (!pid || !task_selected(prev))
		return;
	last = bpf_map_lookup_elem(&last_cpu, &pid);
	if (!last || *last != here)
		bpf_map_update_elem(&last_cpu, &pid, &here, BPF_ANY);
}

static __always_inline int on_switch(struct task_struct *prev, struct task_struct *next)
{
	__u32 cpu = bpf_get_smp_processor_id();
	__u64 now = bpf_ktime_get_ns();
	__u32 pid;

	account_oncpu(prev, cpu, now);
	remember_cpu(prev, cpu);
	/* Preempted while runnable: it waits on the run queue again. */
	if (BPF_CORE_READ(prev, __state) == TASK_RUNNING && task_selected(prev)) {
		pid = BPF_CORE_READ(prev, pid);
		if (pid)
			bpf_map_update_elem(&runnable_since, &pid, &now, BPF_ANY);
	}
	account_runq(next, now);
	account_move(next, cpu);
	return 0;
}

static __always_inline int on_migrate(struct task_struct *p, int dest_cpu)
{
	__u32 orig_cpu = BPF_CORE_READ(p, thread_info.cpu);
	struct mcp_sched_task *t;

	if ((__u32)dest_cpu == orig_cpu || !task_selected(p))
		return 0;
	t = task_record(p);
	if (t)
		__sync_fetch_and_add(&t->migrate_events, 1);
	return 0;
}

/* Which NUMA-balancing counter an event bumps. */
enum numa_kind { NUMA_MOVE, NUMA_SWAP, NUMA_STICK };

static __always_inline void count_numa(struct task_struct *p, enum numa_kind kind)
{
	struct mcp_sched_task *t;

	if (!task_selected(p))
		return;
	t = task_record(p);
	if (!t)
		return;
	if (kind == NUMA_MOVE)
		__sync_fetch_and_add(&t->numa_moves, 1);
	else if (kind == NUMA_SWAP)
		__sync_fetch_and_add(&t->numa_swaps, 1);
	else
		__sync_fetch_and_add(&t->numa_sticks, 1);
}

/* ---- tp_btf family ---- */

SEC("tp_btf/sched_wakeup")
int BPF_PROG(sched_wakeup_btf, struct task_struct *p)
{
	return on_wakeup(p);
}

SEC("tp_btf/sched_wakeup_new")
int BPF_PROG(sched_wakeup_new_btf, struct task_struct *p)
{
	return on_wakeup(p);
}

SEC("tp_btf/sched_switch")
int BPF_PROG(sched_switch_btf, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	return on_switch(prev, next);
}

SEC("tp_btf/sched_migrate_task")
int BPF_PROG(sched_migrate_task_btf, struct task_struct *p, int dest_cpu)
{
	return on_migrate(p, dest_cpu);
}

SEC("tp_btf/sched_move_numa")
int BPF_PROG(sched_move_numa_btf, struct task_struct *p, int src_cpu, int dst_cpu)
{
	count_numa(p, NUMA_MOVE);
	return 0;
}

SEC("tp_btf/sched_swap_numa")
int BPF_PROG(sched_swap_numa_btf, struct task_struct *src, int src_cpu,
	     struct task_struct *dst, int dst_cpu)
{
	count_numa(src, NUMA_SWAP);
	count_numa(dst, NUMA_SWAP);
	return 0;
}

SEC("tp_btf/sched_stick_numa")
int BPF_PROG(sched_stick_numa_btf, struct task_struct *src, int src_cpu,
	     struct task_struct *dst, int dst_cpu)
{
	count_numa(src, NUMA_STICK);
	return 0;
}

/* ---- raw_tp family: kernels whose BTF lacks the tracepoint types ---- */

SEC("raw_tp/sched_wakeup")
int BPF_PROG(sched_wakeup_raw, struct task_struct *p)
{
	return on_wakeup(p);
}

SEC("raw_tp/sched_wakeup_new")
int BPF_PROG(sched_wakeup_new_raw, struct task_struct *p)
{
	return on_wakeup(p);
}

SEC("raw_tp/sched_switch")
int BPF_PROG(sched_switch_raw, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	return on_switch(prev, next);
}

SEC("raw_tp/sched_migrate_task")
int BPF_PROG(sched_migrate_task_raw, struct task_struct *p, int dest_cpu)
{
	return on_migrate(p, dest_cpu);
}

SEC("raw_tp/sched_move_numa")
int BPF_PROG(sched_move_numa_raw, struct task_struct *p, int src_cpu, int dst_cpu)
{
	count_numa(p, NUMA_MOVE);
	return 0;
}

SEC("raw_tp/sched_swap_numa")
int BPF_PROG(sched_swap_numa_raw, struct task_struct *src, int src_cpu,
	     struct task_struct *dst, int dst_cpu)
{
	count_numa(src, NUMA_SWAP);
	count_numa(dst, NUMA_SWAP);
	return 0;
}

SEC("raw_tp/sched_stick_numa")
int BPF_PROG(sched_stick_numa_raw, struct task_struct *src, int src_cpu,
	     struct task_struct *dst, int dst_cpu)
{
	count_numa(src, NUMA_STICK);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
