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
 *
 * Cost: the sched_switch and sched_wakeup programs run for every context
 * switch and wake-up of the machine, so their paths are kept short.  The
 * tp_btf family keeps each thread's between-event state in task storage
 * (no hash update or delete per event; freed with the task), reads task
 * fields directly instead of through bpf_probe_read_kernel() and takes
 * the time from the run queue's clock, which the scheduler has just
 * updated, instead of bpf_ktime_get_ns() (an HPET read on hosts without a
 * stable TSC, e.g. the TCG test VM) where the kernel lets it (the _kt
 * programs are the fallback).  The raw_tp family sees task pointers
 * as plain numbers, so it keeps the state in a pid-keyed hash map and reads
 * through bpf_probe_read_kernel() and bpf_ktime_get_ns().
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

/* A thread's scheduling state between two of its events. */
struct task_state {
	__u64 runnable_since;	/* clock when it became runnable; 0: not waiting */
	__u32 last_cpu;		/* 1 + the CPU it last ran on; 0: not seen running */
	__u32 unused;
};

/* tp_btf family: the state lives with the task. */
struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct task_state);
} task_states SEC(".maps");

/* raw_tp family: pid -> state; LRU, as exited pids are never deleted. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, MCP_TRACE_MAX_TASKS);
	__type(key, __u32);
	__type(value, struct task_state);
} pid_states SEC(".maps");

/* Clock (of the same family) when the task now on this CPU started on it. */
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

/* The scheduler's per-CPU run queues, for their clocks (see clock_now()). */
extern struct rq runqueues __ksym;

static const struct mcp_sched_task zero_task;
static const struct task_state zero_state;

/*
 * A field of a task: a plain load where the verifier knows the pointer
 * (tp_btf), bpf_probe_read_kernel() where it does not (raw_tp).  @btf is
 * a constant, so only one side is compiled into each program.
 */
#define TASK_READ(btf, p, ...) \
	((btf) ? __builtin_preserve_access_index(({ (p)->__VA_ARGS__; })) \
	       : BPF_CORE_READ(p, __VA_ARGS__))

/*
 * Read through bpf_probe_read_kernel() in both families: newer verifiers
 * see p->cgroups as an RCU pointer that may be NULL and refuse the plain
 * chain.  Only the cgroup filter and a record's creation need it.
 */
static __always_inline __u64 task_cgroup_id(struct task_struct *p)
{
	return BPF_CORE_READ(p, cgroups, dfl_cgrp, kn, id);
}

static __always_inline bool task_selected(struct task_struct *p, const bool btf)
{
	if (!p)		/* sched_swap_numa's dst may be NULL */
		return false;
	if (targ_tgid && (__u32)TASK_READ(btf, p, tgid) != targ_tgid)
		return false;
	if (filter_cgroup && task_cgroup_id(p) != targ_cgroup_id)
		return false;
	return true;
}

/*
 * Now, on the clock of @cpu's run queue or CLOCK_MONOTONIC.  The run
 * queues are a per-CPU variable, which the verifier finds only in a
 * kernel with CONFIG_KALLSYMS_ALL: the loader picks the programs.
 */
static __always_inline __u64 clock_now(__u32 cpu, const bool rq_clock)
{
	struct rq *rq;

	if (!rq_clock)
		return bpf_ktime_get_ns();
	rq = bpf_per_cpu_ptr(&runqueues, cpu);
	return rq ? rq->clock : 0;
}

static __always_inline struct task_state *task_state_of(struct task_struct *p, __u32 pid,
							const bool btf)
{
	struct task_state *st;

	if (btf)
		return bpf_task_storage_get(&task_states, p, NULL,
					    BPF_LOCAL_STORAGE_GET_F_CREATE);
	st = bpf_map_lookup_elem(&pid_states, &pid);
	if (st)
		return st;
	bpf_map_update_elem(&pid_states, &pid, &zero_state, BPF_NOEXIST);
	return bpf_map_lookup_elem(&pid_states, &pid);
}

static __always_inline __u32 node_of(__u32 cpu)
{
	__u32 *node = bpf_map_lookup_elem(&cpu_node, &cpu);

	return node ? *node : 0;
}

/* The record of @p, created on first sight. */
static __always_inline struct mcp_sched_task *task_record(struct task_struct *p, __u32 pid,
							  const bool btf)
{
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
	t->tgid = TASK_READ(btf, p, tgid);
	t->cgroup_id = task_cgroup_id(p);
	BPF_CORE_READ_STR_INTO(&t->comm, p, comm);
	return t;
}

static __always_inline int on_wakeup(struct task_struct *p, const bool btf,
				     const bool rq_clock)
{
	__u32 pid = TASK_READ(btf, p, pid);
	struct task_state *st;

	if (!pid || !task_selected(p, btf))
		return 0;
	st = task_state_of(p, pid, btf);
	if (st)
		st->runnable_since = clock_now(TASK_READ(btf, p, thread_info.cpu), rq_clock);
	return 0;
}

/*
 * The fields switch_out() and switch_in() update are a thread's own: its
 * switches are serialized by its run queue's lock (it cannot be picked
 * elsewhere before its switch-out here is done), so plain adds suffice.
 * Events about a thread from other CPUs (migrate, NUMA) use atomics.
 */

/* @prev leaves @cpu: its time there, and a wait if it is still runnable. */
static __always_inline void switch_out(struct task_struct *prev, __u32 cpu, __u64 now,
				       __u64 since, const bool btf)
{
	__u32 pid = TASK_READ(btf, prev, pid), node;
	struct mcp_sched_task *t;
	struct task_state *st;

	if (!pid || !task_selected(prev, btf))
		return;
	st = task_state_of(prev, pid, btf);
	if (st) {
		st->last_cpu = cpu + 1;
		/* Preempted while runnable: it waits on the run queue again. */
		if (TASK_READ(btf, prev, __state) == TASK_RUNNING)
			st->runnable_since = now;
	}
	if (!since)
		return;
	t = task_record(prev, pid, btf);
	if (!t)
		return;
	node = node_of(cpu);
	if (node < MCP_TRACE_MAX_NODES)
		t->oncpu_ns[node] += now - since;
	t->last_cpu = cpu;
	t->last_node = node;
}

/*
 * @next starts on @cpu: its run-queue wait, and a migration as the task
 * sees it (it starts on another CPU than last time).  sched_migrate_task
 * events are counted apart (migrate_events): they also report moves of
 * tasks that were queued but never ran there.
 */
static __always_inline void switch_in(struct task_struct *next, __u32 cpu, __u64 now,
				      const bool btf)
{
	__u32 pid = TASK_READ(btf, next, pid), last;
	struct mcp_sched_task *t;
	struct task_state *st;
	__u64 delta = 0, slot;
	bool waited;

	if (!pid || !task_selected(next, btf))
		return;
	st = task_state_of(next, pid, btf);
	if (!st)
		return;
	waited = st->runnable_since && (__s64)(now - st->runnable_since) >= 0;
	if (waited)
		delta = now - st->runnable_since;
	st->runnable_since = 0;
	last = st->last_cpu;
	st->last_cpu = cpu + 1;
	if (!waited && (!last || last == cpu + 1))
		return;
	t = task_record(next, pid, btf);
	if (!t)
		return;
	if (waited) {
		slot = mcp_log2l(delta / 1000);
		if (slot >= MCP_TRACE_SLOTS)
			slot = MCP_TRACE_SLOTS - 1;
		t->runq_slots[slot]++;
		t->runq_count++;
		t->runq_total_ns += delta;
		if (delta > t->runq_max_ns)
			t->runq_max_ns = delta;
	}
	if (last && last != cpu + 1) {
		t->migrations++;
		if (node_of(last - 1) != node_of(cpu))
			t->cross_node_migrations++;
	}
}

static __always_inline int on_switch(struct task_struct *prev, struct task_struct *next,
				     const bool btf, const bool rq_clock)
{
	__u32 cpu = bpf_get_smp_processor_id(), zero = 0;
	__u64 now = clock_now(cpu, rq_clock), since;
	__u64 *sincep;

	sincep = bpf_map_lookup_elem(&cpu_since, &zero);
	if (!sincep)
		return 0;
	since = *sincep;	/* 0 before the first switch seen here */
	*sincep = now;
	switch_out(prev, cpu, now, since, btf);
	switch_in(next, cpu, now, btf);
	return 0;
}

static __always_inline int on_migrate(struct task_struct *p, int dest_cpu, const bool btf)
{
	__u32 orig_cpu = TASK_READ(btf, p, thread_info.cpu);
	struct mcp_sched_task *t;

	if ((__u32)dest_cpu == orig_cpu || !task_selected(p, btf))
		return 0;
	t = task_record(p, TASK_READ(btf, p, pid), btf);
	if (t)
		__sync_fetch_and_add(&t->migrate_events, 1);
	return 0;
}

/* Which NUMA-balancing counter an event bumps. */
enum numa_kind { NUMA_MOVE, NUMA_SWAP, NUMA_STICK };

static __always_inline void count_numa(struct task_struct *p, enum numa_kind kind,
				       const bool btf)
{
	struct mcp_sched_task *t;

	if (!task_selected(p, btf))
		return;
	t = task_record(p, TASK_READ(btf, p, pid), btf);
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
	return on_wakeup(p, true, true);
}

SEC("tp_btf/sched_wakeup_new")
int BPF_PROG(sched_wakeup_new_btf, struct task_struct *p)
{
	return on_wakeup(p, true, true);
}

SEC("tp_btf/sched_switch")
int BPF_PROG(sched_switch_btf, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	return on_switch(prev, next, true, true);
}

SEC("tp_btf/sched_migrate_task")
int BPF_PROG(sched_migrate_task_btf, struct task_struct *p, int dest_cpu)
{
	return on_migrate(p, dest_cpu, true);
}

SEC("tp_btf/sched_move_numa")
int BPF_PROG(sched_move_numa_btf, struct task_struct *p, int src_cpu, int dst_cpu)
{
	count_numa(p, NUMA_MOVE, true);
	return 0;
}

SEC("tp_btf/sched_swap_numa")
int BPF_PROG(sched_swap_numa_btf, struct task_struct *src, int src_cpu,
	     struct task_struct *dst, int dst_cpu)
{
	count_numa(src, NUMA_SWAP, true);
	count_numa(dst, NUMA_SWAP, true);
	return 0;
}

SEC("tp_btf/sched_stick_numa")
int BPF_PROG(sched_stick_numa_btf, struct task_struct *src, int src_cpu,
	     struct task_struct *dst, int dst_cpu)
{
	count_numa(src, NUMA_STICK, true);
	return 0;
}

/* tp_btf with CLOCK_MONOTONIC, for kernels without CONFIG_KALLSYMS_ALL. */

SEC("tp_btf/sched_wakeup")
int BPF_PROG(sched_wakeup_btf_kt, struct task_struct *p)
{
	return on_wakeup(p, true, false);
}

SEC("tp_btf/sched_wakeup_new")
int BPF_PROG(sched_wakeup_new_btf_kt, struct task_struct *p)
{
	return on_wakeup(p, true, false);
}

SEC("tp_btf/sched_switch")
int BPF_PROG(sched_switch_btf_kt, bool preempt, struct task_struct *prev,
	     struct task_struct *next)
{
	return on_switch(prev, next, true, false);
}

/* ---- raw_tp family: kernels whose BTF lacks the tracepoint types ---- */

SEC("raw_tp/sched_wakeup")
int BPF_PROG(sched_wakeup_raw, struct task_struct *p)
{
	return on_wakeup(p, false, false);
}

SEC("raw_tp/sched_wakeup_new")
int BPF_PROG(sched_wakeup_new_raw, struct task_struct *p)
{
	return on_wakeup(p, false, false);
}

SEC("raw_tp/sched_switch")
int BPF_PROG(sched_switch_raw, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	return on_switch(prev, next, false, false);
}

SEC("raw_tp/sched_migrate_task")
int BPF_PROG(sched_migrate_task_raw, struct task_struct *p, int dest_cpu)
{
	return on_migrate(p, dest_cpu, false);
}

SEC("raw_tp/sched_move_numa")
int BPF_PROG(sched_move_numa_raw, struct task_struct *p, int src_cpu, int dst_cpu)
{
	count_numa(p, NUMA_MOVE, false);
	return 0;
}

SEC("raw_tp/sched_swap_numa")
int BPF_PROG(sched_swap_numa_raw, struct task_struct *src, int src_cpu,
	     struct task_struct *dst, int dst_cpu)
{
	count_numa(src, NUMA_SWAP, false);
	count_numa(dst, NUMA_SWAP, false);
	return 0;
}

SEC("raw_tp/sched_stick_numa")
int BPF_PROG(sched_stick_numa_raw, struct task_struct *src, int src_cpu,
	     struct task_struct *dst, int dst_cpu)
{
	count_numa(src, NUMA_STICK, false);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
