/* SPDX-License-Identifier: (LGPL-2.1-or-later OR BSD-2-Clause) */
/*
 * Shared between trace_sched.bpf.c and its loader lib/src/trace_sched.cpp:
 * the per-task record the program aggregates and the loader reads.
 * Plain __u32/__u64 only (vmlinux.h in BPF, <linux/types.h> in userspace).
 */
#ifndef MCP_BPF_TRACE_SCHED_H
#define MCP_BPF_TRACE_SCHED_H

/* log2 histogram slots of run-queue latency in us: slot i counts
 * [2^i, 2^(i+1)) us (slot 0 also 0 us); the last slot takes the rest. */
#define MCP_TRACE_SLOTS		27
/* NUMA nodes and CPUs the per-node accounting knows. */
#define MCP_TRACE_MAX_NODES	16
#define MCP_TRACE_MAX_CPUS	1024
#define MCP_TRACE_MAX_TASKS	10240
#define MCP_TRACE_COMM_LEN	16

/*
 * One thread: an interval's aggregates in the pid-keyed "tasks" map
 * (raw_tp family), or its running totals since the tracer opened in task
 * storage (tp_btf family; runq_max_ns since the last dump), which the
 * task iterator dumps and "exited" keeps after the thread's last switch.
 */
struct mcp_sched_task {
	__u32 pid;
	__u32 tgid;
	__u64 cgroup_id;
	char comm[MCP_TRACE_COMM_LEN];
	__u32 last_cpu;		/* where it last ran */
	__u32 last_node;
	__u64 runq_slots[MCP_TRACE_SLOTS];
	__u64 runq_count;	/* wake-ups (or preemptions) measured */
	__u64 runq_total_ns;
	__u64 runq_max_ns;
	__u64 oncpu_ns[MCP_TRACE_MAX_NODES];
	__u64 migrations;	/* started running on another CPU than last time */
	__u64 cross_node_migrations;	/* ... of another node */
	__u64 migrate_events;	/* sched_migrate_task to another CPU */
	__u64 numa_moves;	/* sched_move_numa */
	__u64 numa_swaps;	/* sched_swap_numa (either side) */
	__u64 numa_sticks;	/* sched_stick_numa */
	__u64 start_ns;		/* the thread's start time: with pid, its identity */
};

/* Key of "exited" (tp_btf family): pid numbers are reused. */
struct mcp_sched_exit_key {
	__u32 pid;
	__u32 unused;
	__u64 start_ns;
};

#endif /* MCP_BPF_TRACE_SCHED_H */
