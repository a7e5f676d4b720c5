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
 * tp_btf family keeps each thread's between-event state and its running
 * totals in task storage: an event costs one task-storage lookup per task
 * it is about and plain adds, no hash lookup or update.  The loader reads
 * the totals once per interval through the task iterator
 * dump_task_totals(), which adds the slice a thread on a CPU has run so
 * far (a thread that is never switched out still shows; the threads that
 * exited meanwhile left theirs in "exited" at their last switch), and
 * reports the difference.  It reads task fields directly instead of
 * through bpf_probe_read_kernel().  The raw_tp family sees task pointers
 * as plain numbers, so it keeps the state and an interval's counts in
 * pid-keyed hash maps, which the loader drains, and reads through
 * bpf_probe_read_kernel().
 *
 * Time is bpf_ktime_get_ns() (CLOCK_MONOTONIC, as runqlat) in both
 * families, read only for events about a selected task and once per
 * sched_switch for both sides.  Not the run queue's clock: after a
 * wake-up that preempts, rq_clock_skip_update() leaves rq->clock stale
 * through the next __schedule(), so such a wait would read 0 ns and the
 * preempted task's slice would end early.
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

/* Threads or events not recorded: a table full, or no state for a thread
 * (its task storage could not be allocated). */
__u64 dropped_tasks = 0;

/* CPU -> NUMA node, filled by the loader from the topology. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, MCP_TRACE_MAX_CPUS);
	__type(key, __u32);
	__type(value, __u32);
} cpu_node SEC(".maps");

/* A thread's scheduling state between two of its events. */
struct thread_state {
	__u64 runnable_since;	/* clock when it became runnable; 0: not waiting */
	__u32 last_cpu;		/* 1 + the CPU it last ran on; 0: not seen running */
	__u32 exited;		/* tp_btf: its totals went to "exited" at its last switch */
};

/*
 * tp_btf family: the state and the thread's running totals live with the
 * task, so an event costs one task-storage lookup per task it is about
 * and no hash lookup.  dump_task_totals() hands the totals to the loader
 * each interval, which subtracts the previous dump.
 */
struct task_state {
	struct thread_state s;	/* first: a struct thread_state * is a struct task_state * */
	struct mcp_sched_task totals;
};

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct task_state);
} task_states SEC(".maps");

/* tp_btf family: the totals of threads that exited, written at their last
 * switch (task storage dies with the task); drained by the loader. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, MCP_TRACE_MAX_TASKS);
	__type(key, struct mcp_sched_exit_key);
	__type(value, struct mcp_sched_task);
} exited SEC(".maps");

/* raw_tp family: pid -> state; LRU, as exited pids are never deleted. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, MCP_TRACE_MAX_TASKS);
	__type(key, __u32);
	__type(value, struct thread_state);
} pid_states SEC(".maps");

/* Clock (of the same family) when the task now on this CPU started on it. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} cpu_since SEC(".maps");

/* tp_btf family: the record dump_task_totals() writes (too big for the
 * stack). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct mcp_sched_task);
} dump_record SEC(".maps");

/* raw_tp family: pid -> aggregates; read and deleted by the loader each
 * interval. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, MCP_TRACE_MAX_TASKS);
	__type(key, __u32);
	__type(value, struct mcp_sched_task);
} tasks SEC(".maps");

static const struct mcp_sched_task zero_task;
static const struct thread_state zero_state;

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
 * chain.  Only the cgroup filter and a record's identity need it.
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
 * Now: CLOCK_MONOTONIC, whatever the scheduler's clock-update flags (see
 * the top of this file).  ~40 ns on the build host, an HPET read in the
 * TCG VM; the callers read it only for selected tasks.
 */
static __always_inline __u64 clock_now(void)
{
	return bpf_ktime_get_ns();
}

static __always_inline struct thread_state *state_of(struct task_struct *p, __u32 pid,
						    const bool btf)
{
	struct thread_state *st;

	if (btf) {
		struct task_state *ts = bpf_task_storage_get(&task_states, p, NULL,
							      BPF_LOCAL_STORAGE_GET_F_CREATE);

		return ts ? &ts->s : NULL;
	}
	st = bpf_map_lookup_elem(&pid_states, &pid);
	if (st)
		return st;
	bpf_map_update_elem(&pid_states, &pid, &zero_state, BPF_NOEXIST);
	return bpf_map_lookup_elem(&pid_states, &pid);
}

/* state_of(), counting an event it cannot record in dropped_tasks. */
static __always_inline struct thread_state *state_or_drop(struct task_struct *p, __u32 pid,
							  const bool btf)
{
	struct thread_state *st = state_of(p, pid, btf);

	if (!st)
		__sync_fetch_and_add(&dropped_tasks, 1);
	return st;
}

static __always_inline __u32 node_of(__u32 cpu)
{
	__u32 *node = bpf_map_lookup_elem(&cpu_node, &cpu);

	return node ? *node : 0;
}

/* Who @t is; the counters never change @t's identity fields. */
static __always_inline void fill_identity(struct mcp_sched_task *t, struct task_struct *p,
					  __u32 pid, const bool btf)
{
	t->pid = pid;
	t->tgid = TASK_READ(btf, p, tgid);
	t->cgroup_id = task_cgroup_id(p);
	t->start_ns = TASK_READ(btf, p, start_time);
	BPF_CORE_READ_STR_INTO(&t->comm, p, comm);
}

/* raw_tp family: the record of @p in "tasks", created on first sight. */
static __always_inline struct mcp_sched_task *task_record(struct task_struct *p, __u32 pid)
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
	fill_identity(t, p, pid, false);
	return t;
}

/* Where @p's counts go: the totals next to its state @st (tp_btf), or its
 * record in "tasks" (raw_tp). */
static __always_inline struct mcp_sched_task *counts_of(struct thread_state *st,
							struct task_struct *p, __u32 pid,
							const bool btf)
{
	if (btf)
		return &((struct task_state *)st)->totals;
	return task_record(p, pid);
}

/* tp_btf family: @p switches out for the last time; keep its totals. */
static __always_inline void keep_exited(struct task_struct *p, __u32 pid,
					struct thread_state *st)
{
	struct mcp_sched_task *t = &((struct task_state *)st)->totals;
	struct mcp_sched_exit_key key = {};

	fill_identity(t, p, pid, true);
	key.pid = pid;
	key.start_ns = t->start_ns;
	if (bpf_map_update_elem(&exited, &key, t, BPF_ANY))
		__sync_fetch_and_add(&dropped_tasks, 1);
	st->exited = 1;
}

static __always_inline int on_wakeup(struct task_struct *p, const bool btf)
{
	__u32 pid = TASK_READ(btf, p, pid);
	struct thread_state *st;
	__u64 now;

	if (!pid || !task_selected(p, btf))
		return 0;
	now = clock_now();	/* before the lookup, which may allocate */
	st = state_or_drop(p, pid, btf);
	if (st)
		st->runnable_since = now;
	return 0;
}

/*
 * The fields switch_out() and switch_in() update are a thread's own: its
 * switches are serialized by its run queue's lock (it cannot be picked
 * elsewhere before its switch-out here is done), so plain adds suffice.
 * Events about a thread from other CPUs (migrate, NUMA) use atomics.
 */

#define TASK_DEAD 0x80	/* __state of a thread's last switch-out */

/* @prev leaves @cpu: its time there, and a wait if it is still runnable. */
static __always_inline void switch_out(struct task_struct *prev, __u32 cpu, __u64 now,
				       __u64 since, const bool btf)
{
	__u32 pid = TASK_READ(btf, prev, pid), node, state;
	struct mcp_sched_task *t;
	struct thread_state *st;

	st = state_or_drop(prev, pid, btf);
	if (!st && btf)
		return;
	state = TASK_READ(btf, prev, __state);
	if (st) {
		st->last_cpu = cpu + 1;
		/* Preempted while runnable: it waits on the run queue again. */
		if (state == TASK_RUNNING)
			st->runnable_since = now;
	}
	/* A stamp the dump seeded from another CPU's clock may be ahead. */
	if (since && (__s64)(now - since) > 0) {
		t = counts_of(st, prev, pid, btf);
		if (t) {
			node = node_of(cpu);
			if (node < MCP_TRACE_MAX_NODES)
				t->oncpu_ns[node] += now - since;
			t->last_cpu = cpu;
			t->last_node = node;
		}
	}
	if (btf && state == TASK_DEAD)
		keep_exited(prev, pid, st);
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
	struct thread_state *st;
	__u64 delta = 0, slot;
	bool waited;

	st = state_or_drop(next, pid, btf);
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
	t = counts_of(st, next, pid, btf);
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

/* Whether @p is a selected task other than an idle one (pid 0). */
static __always_inline bool task_traced(struct task_struct *p, const bool btf)
{
	return TASK_READ(btf, p, pid) && task_selected(p, btf);
}

/*
 * One clock read for both sides, and none when neither is selected.  The
 * CPU's stamp is the switch-in time of the task now on it if that task is
 * selected, else 0 (nothing to charge it to).
 */
static __always_inline int on_switch(struct task_struct *prev, struct task_struct *next,
				     const bool btf)
{
	bool out = task_traced(prev, btf), in = task_traced(next, btf);
	__u32 cpu = bpf_get_smp_processor_id(), zero = 0;
	__u64 *sincep, since, now;

	sincep = bpf_map_lookup_elem(&cpu_since, &zero);
	if (!sincep)
		return 0;
	if (!out && !in) {
		if (*sincep)
			*sincep = 0;
		return 0;
	}
	now = clock_now();
	since = *sincep;	/* 0: not stamped by a selected switch-in */
	*sincep = in ? now : 0;
	if (out)
		switch_out(prev, cpu, now, since, btf);
	if (in)
		switch_in(next, cpu, now, btf);
	return 0;
}

/* The counts of @p for an event from any CPU (counters bumped atomically). */
static __always_inline struct mcp_sched_task *remote_counts(struct task_struct *p,
							    const bool btf)
{
	__u32 pid = TASK_READ(btf, p, pid);
	struct thread_state *st;

	if (!btf)
		return task_record(p, pid);
	st = state_of(p, pid, btf);
	return st ? counts_of(st, p, pid, btf) : NULL;
}

static __always_inline int on_migrate(struct task_struct *p, int dest_cpu, const bool btf)
{
	__u32 orig_cpu = TASK_READ(btf, p, thread_info.cpu);
	struct mcp_sched_task *t;

	if ((__u32)dest_cpu == orig_cpu || !task_selected(p, btf))
		return 0;
	t = remote_counts(p, btf);
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
	t = remote_counts(p, btf);
	if (!t)
		return;
	if (kind == NUMA_MOVE)
		__sync_fetch_and_add(&t->numa_moves, 1);
	else if (kind == NUMA_SWAP)
		__sync_fetch_and_add(&t->numa_swaps, 1);
	else
		__sync_fetch_and_add(&t->numa_sticks, 1);
}

/* A load the compiler neither merges with another nor moves across one
 * (barrier() is bpf_helpers.h's). */
#define READ_ONCE(x) (*(volatile typeof(x) *)&(x))

/*
 * Whether @p is on a CPU: set after the switch that put it there has
 * stamped cpu_since, cleared after the switch that took it off has
 * charged the slice (context_switch() does both, after the tracepoint).
 */
static __always_inline bool task_on_cpu(struct task_struct *p)
{
	if (!bpf_core_field_exists(p->on_cpu))
		return false;	/* !CONFIG_SMP: no slice in the dumps */
	return READ_ONCE(p->on_cpu);
}

/*
 * The dump's copy @out of the totals of @p, a thread on a CPU now: add
 * the slice it has run there since its switch-in, which the switch-out
 * will charge in full (on the same clock, from the same cpu_since
 * stamp), so the next dump reports at least as much.  The stamp read
 * before and after the copy must match with @p still on the CPU, or a
 * switch came in between and the copy goes as it is.  A CPU without a
 * stamp has not switched since the tracer attached (a lone spinner
 * there): the dump stamps it, and the slice counts from then on.
 */
static __always_inline void add_running_slice(struct mcp_sched_task *out,
					      const struct mcp_sched_task *totals,
					      struct task_struct *p)
{
	__u32 cpu = p->thread_info.cpu, zero = 0, node;
	__u64 *sincep, since, now;
	bool on_cpu;

	on_cpu = task_on_cpu(p);
	sincep = on_cpu ? bpf_map_lookup_percpu_elem(&cpu_since, &zero, cpu) : NULL;
	since = sincep ? READ_ONCE(*sincep) : 0;
	barrier();
	*out = *totals;
	barrier();
	if (!sincep)
		return;
	now = clock_now();
	if (!since) {
		__sync_val_compare_and_swap(sincep, 0, now);
		return;
	}
	barrier();
	if (READ_ONCE(*sincep) != since || !task_on_cpu(p) || (__s64)(now - since) <= 0)
		return;
	node = node_of(cpu);
	if (node >= MCP_TRACE_MAX_NODES)
		return;
	out->oncpu_ns[node] += now - since;
	out->last_cpu = cpu;
	out->last_node = node;
}

/*
 * tp_btf family: each live thread's totals, one struct mcp_sched_task per
 * thread with task storage, read by the loader each interval, with the
 * slice a thread on a CPU has run so far (add_running_slice()).  A
 * selected thread without storage gets it here, in process context: the
 * loader's first dump, right after the attach, gives every thread already
 * there its storage before its first event.  Created at an event
 * instead, it may fail: task storage comes from a per-CPU cache that is
 * refilled from irq_work, and a burst of first events with interrupts off
 * (SIGCONT waking a stopped thread group under its siglock, the wake list
 * of an IPI) empties it; the event is then lost (dropped_tasks).  The
 * per-interval maximum
 * restarts here; a wait ending on another CPU between the copy and the
 * reset is lost to it (not to the counts).
 */
static __always_inline int dump_task(struct bpf_iter__task *ctx)
{
	struct task_struct *task = ctx->task;
	struct mcp_sched_task *out;
	struct task_state *ts;
	__u32 zero = 0;

	if (!task)
		return 0;
	ts = bpf_task_storage_get(&task_states, task, NULL, 0);
	if (!ts && task->pid && task_selected(task, true))
		ts = bpf_task_storage_get(&task_states, task, NULL,
					  BPF_LOCAL_STORAGE_GET_F_CREATE);
	out = bpf_map_lookup_elem(&dump_record, &zero);
	if (!ts || ts->s.exited || !out)
		return 0;
	add_running_slice(out, &ts->totals, task);
	fill_identity(out, task, task->pid, true);
	bpf_seq_write(ctx->meta->seq, out, sizeof(*out));
	ts->totals.runq_max_ns = 0;
	return 0;
}

SEC("iter/task")
int dump_task_totals(struct bpf_iter__task *ctx)
{
	return dump_task(ctx);
}

/* ---- tp_btf family ---- */

SEC("tp_btf/sched_wakeup")
int BPF_PROG(sched_wakeup_btf, struct task_struct *p)
{
	return on_wakeup(p, true);
}

SEC("tp_btf/sched_wakeup_new")
int BPF_PROG(sched_wakeup_new_btf, struct task_struct *p)
{
	return on_wakeup(p, true);
}

SEC("tp_btf/sched_switch")
int BPF_PROG(sched_switch_btf, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	return on_switch(prev, next, true);
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

/* ---- raw_tp family: kernels whose BTF lacks the tracepoint types ---- */

SEC("raw_tp/sched_wakeup")
int BPF_PROG(sched_wakeup_raw, struct task_struct *p)
{
	return on_wakeup(p, false);
}

SEC("raw_tp/sched_wakeup_new")
int BPF_PROG(sched_wakeup_new_raw, struct task_struct *p)
{
	return on_wakeup(p, false);
}

SEC("raw_tp/sched_switch")
int BPF_PROG(sched_switch_raw, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	return on_switch(prev, next, false);
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
