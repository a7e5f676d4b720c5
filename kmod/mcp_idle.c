// SPDX-License-Identifier: GPL-2.0
/*
 * MCP (Model Control Protocol): which CPUs are idle, for the placement
 * decision.
 *
 * A delayed work samples every online CPU's cumulative idle time every
 * idle_window_ms: get_cpu_idle_time_us() where NO_HZ keeps it, else
 * kcpustat_cpu_fetch()'s CPUTIME_IDLE.  A CPU is idle when it was idle for
 * at least idle_threshold_pct of the last window.  Until the first window
 * has passed every online CPU counts as idle.
 *
 * Locks: mcp_idle_lock (spinlock) guards mcp_idle_mask, the result of the
 * last window; it is held only to copy the mask.  The previous samples are
 * touched by the work alone (works of one delayed_work never run
 * concurrently).  See mcp_place.h for the lock order.
 */

#include <linux/jiffies.h>
#include <linux/kernel_stat.h>
#include <linux/ktime.h>
#include <linux/math64.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/tick.h>
#include <linux/workqueue.h>

#include "mcp_internal.h"
#include "mcp_place.h"

static DEFINE_SPINLOCK(mcp_idle_lock);
static cpumask_var_t mcp_idle_mask;	/* under mcp_idle_lock */
static cpumask_var_t mcp_idle_scratch;	/* the work's own */
static u64 *mcp_idle_prev_us;		/* per CPU id, the work's own */
static u64 mcp_idle_prev_wall_us;	/* the work's own */
static struct delayed_work mcp_idle_work;

/* Cumulative idle time of @cpu in microseconds. */
static u64 mcp_idle_time_us(int cpu)
{
	struct kernel_cpustat kcs;
	u64 t;

	t = get_cpu_idle_time_us(cpu, NULL);
	if (t != (u64)-1)
		return t;
	kcpustat_cpu_fetch(&kcs, cpu);
	return div_u64(kcs.cpustat[CPUTIME_IDLE], NSEC_PER_USEC);
}

static void mcp_idle_sample(bool publish)
{
	unsigned int pct = READ_ONCE(mcp_place_idle_threshold_pct);
	u64 now = ktime_to_us(ktime_get());
	u64 wall = now - mcp_idle_prev_wall_us;
	int cpu;

	cpumask_clear(mcp_idle_scratch);
	for_each_online_cpu(cpu) {
		u64 idle = mcp_idle_time_us(cpu);
		u64 delta = idle - mcp_idle_prev_us[cpu];

		/* A CPU that came online since the last sample counts as idle. */
		if (idle < mcp_idle_prev_us[cpu] || !mcp_idle_prev_us[cpu] ||
		    delta * 100 >= wall * pct)
			cpumask_set_cpu(cpu, mcp_idle_scratch);
		mcp_idle_prev_us[cpu] = idle;
	}
	mcp_idle_prev_wall_us = now;

	if (!publish || !wall)
		return;
	spin_lock(&mcp_idle_lock);
	cpumask_copy(mcp_idle_mask, mcp_idle_scratch);
	spin_unlock(&mcp_idle_lock);
}

static void mcp_idle_workfn(struct work_struct *work)
{
	mcp_idle_sample(true);
	schedule_delayed_work(&mcp_idle_work,
			      msecs_to_jiffies(READ_ONCE(mcp_place_idle_window_ms)));
}

/**
 * mcp_idle_snapshot() - the CPUs that were idle over the last window
 * @idle: receives the mask
 */
void mcp_idle_snapshot(struct cpumask *idle)
{
	spin_lock(&mcp_idle_lock);
	cpumask_copy(idle, mcp_idle_mask);
	spin_unlock(&mcp_idle_lock);
}

/* idle_window_ms changed: start a window of the new length now. */
void mcp_idle_kick(void)
{
	mod_delayed_work(system_wq, &mcp_idle_work,
			 msecs_to_jiffies(READ_ONCE(mcp_place_idle_window_ms)));
}

int mcp_idle_init(void)
{
	if (!zalloc_cpumask_var(&mcp_idle_mask, GFP_KERNEL))
		return -ENOMEM;
	if (!zalloc_cpumask_var(&mcp_idle_scratch, GFP_KERNEL))
		goto err_free_mask;
	mcp_idle_prev_us = kcalloc(nr_cpu_ids, sizeof(*mcp_idle_prev_us),
				   GFP_KERNEL);
	if (!mcp_idle_prev_us)
		goto err_free_scratch;

	cpumask_copy(mcp_idle_mask, cpu_online_mask);
	mcp_idle_sample(false);
	INIT_DELAYED_WORK(&mcp_idle_work, mcp_idle_workfn);
	schedule_delayed_work(&mcp_idle_work,
			      msecs_to_jiffies(READ_ONCE(mcp_place_idle_window_ms)));
	return 0;

err_free_scratch:
	free_cpumask_var(mcp_idle_scratch);
err_free_mask:
	free_cpumask_var(mcp_idle_mask);
	return -ENOMEM;
}

void mcp_idle_exit(void)
{
	cancel_delayed_work_sync(&mcp_idle_work);
	kfree(mcp_idle_prev_us);
	free_cpumask_var(mcp_idle_scratch);
	free_cpumask_var(mcp_idle_mask);
}
