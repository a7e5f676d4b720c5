/* SPDX-License-Identifier: GPL-2.0 */
/*
 * MCP (Model Control Protocol): declarations shared by the placement files,
 * mcp_place.c (ioctls, decision, per-task state, knobs), mcp_idle.c (idle
 * CPU sampling) and mcp_rebalance.c (the rebalancer).  The rest of the
 * module sees only what mcp_internal.h declares.
 *
 * Lock order (outermost first), also listed in mcp_internal.h:
 *
 *   mcp_place_lock	mutex: the per-task state table (mcp_place_tasks) and
 *			every struct mcp_place_task in it.  Held across
 *			set_cpus_allowed_ptr() and the rebalancer's page
 *			sampling, which may sleep; never across
 *			copy_to_user() or mcp_netlink_place_event() (the
 *			ioctls and the rebalancer copy out and send their
 *			events after dropping it).
 *     mmap_lock	read, of a target task's mm (rebalancer sampling,
 *			trylock only).
 *   mcp_idle_lock	spinlock: the idle CPU mask of the last window.  Held
 *			only to copy the mask; nothing sleeps under it, and
 *			it is never taken under mcp_place_lock.
 */
#ifndef _MCP_PLACE_H
#define _MCP_PLACE_H

#include <linux/cpumask.h>
#include <linux/mutex.h>
#include <linux/sched.h>
#include <linux/types.h>
#include <linux/xarray.h>

struct mcp_place_event;

/* Knobs, /sys/class/misc/mcp/placement/; read with READ_ONCE(). */
extern unsigned int mcp_place_min_idle_cpus;
extern unsigned int mcp_place_idle_threshold_pct;
extern unsigned int mcp_place_idle_window_ms;
extern unsigned int mcp_place_stickiness_ms;
extern unsigned int mcp_place_rebalance_ms;
extern unsigned int mcp_place_hysteresis_pct;
extern unsigned int mcp_place_adaptive_runq_us;
extern unsigned int mcp_place_adaptive_periods;

/**
 * struct mcp_place_task - what MCP remembers about a task it placed
 * @task:	the task, with a reference (get_task_struct())
 * @orig:	its affinity when MCP first placed it, or when something
 *		other than MCP last changed it; every later mask is a
 *		subset, UNPLACE restores it (see mcp_place_base())
 * @applied:	the affinity MCP last applied (@orig until the first)
 * @node:	node it is placed on
 * @last_ns:	ktime_get_ns() of the last applied placement (stickiness)
 * @keep:	the rebalancer re-evaluates it (MCP_PLACE_KEEP)
 * @adaptive:	it also moves it on run-queue latency (MCP_PLACE_ADAPTIVE)
 * @runq_threshold_us: the mean wait per run above which it moves; 0 =
 *		mcp_place_adaptive_runq_us
 * @run_delay:	the task's sched_info.run_delay at the last pass's look
 * @pcount:	its sched_info.pcount then
 * @runq_over:	consecutive looks with the mean wait above the threshold
 *
 * Lives in mcp_place_tasks under the task's global pid; protected by
 * mcp_place_lock.
 */
struct mcp_place_task {
	struct task_struct *task;
	cpumask_var_t orig;
	cpumask_var_t applied;
	int node;
	u64 last_ns;
	bool keep;
	bool adaptive;
	u32 runq_threshold_us;
	u64 run_delay;
	u64 pcount;
	unsigned int runq_over;
};

extern struct mutex mcp_place_lock;
extern struct xarray mcp_place_tasks;

bool mcp_place_task_gone(const struct mcp_place_task *pt);
void mcp_place_forget(unsigned long pid, struct mcp_place_task *pt);
bool mcp_place_node_usable(int nid, const struct cpumask *allowed);
void mcp_place_idle_per_node(const struct cpumask *idle, unsigned int *count);
int mcp_place_apply(struct mcp_place_task *pt, int node, u32 reason,
		    u32 origin, u32 flags, struct mcp_place_event *ev);
void mcp_place_runq_restart(struct mcp_place_task *pt);

/* mcp_idle.c */
int mcp_idle_init(void);
void mcp_idle_exit(void);
void mcp_idle_snapshot(struct cpumask *idle);
void mcp_idle_kick(void);

/* mcp_rebalance.c */
int mcp_rebalance_init(void);
void mcp_rebalance_exit(void);
void mcp_rebalance_kick(void);

#endif /* _MCP_PLACE_H */
