// SPDX-License-Identifier: GPL-2.0
/*
 * MCP (Model Control Protocol): the placement rebalancer.  A delayed work
 * runs every rebalance_ms and, under mcp_place_lock, drops the state of
 * exited tasks, moves each task placed with MCP_PLACE_KEEP to the node
 * holding most of its sampled anonymous memory when that node beats the
 * current one, and each task placed with MCP_PLACE_ADAPTIVE as well off a
 * node where it waited too long to run.  Documentation/placement.rst
 * ("The rebalancer") has the rules, the sample and the cost bounds
 * (MCP_REBALANCE_*).
 *
 * Locks: see mcp_place.h.  The work takes mcp_place_lock, then a target's
 * mmap_lock for reading (trylock only); it sends the moves' events after
 * dropping mcp_place_lock.
 */

#include <linux/jiffies.h>
#include <linux/mm.h>
#include <linux/math64.h>
#include <linux/mmap_lock.h>
#include <linux/sched/mm.h>
#include <linux/slab.h>
#include <linux/timekeeping.h>
#include <linux/workqueue.h>

#include "mcp_internal.h"
#include "mcp_place.h"
#include "mcp_trace.h"

#define MCP_REBALANCE_SAMPLES		256
#define MCP_REBALANCE_PASS_LOOKUPS	4096
#define MCP_REBALANCE_CPU_PCT		1
#define MCP_REBALANCE_SWEEP_BATCH	64
/* Moves per pass: their events are sent after mcp_place_lock is dropped. */
#define MCP_REBALANCE_MOVES		16

/*
 * One pass's sample of the last mm looked at, its lookup budget and the
 * moves it made.
 */
struct mcp_rebalance_pass {
	struct mm_struct *mm;	/* with a reference (mmget), or NULL */
	unsigned long seen;	/* pages found in its sample */
	long budget;		/* page lookups left in this pass */
	unsigned int moves;	/* events filled in mcp_rebalance_events */
};

static struct delayed_work mcp_rebalance_work;
/* The work's own buffers (works of one delayed_work never overlap). */
static cpumask_var_t mcp_rebalance_idle;
static unsigned int *mcp_rebalance_idle_count;	/* per node id */
static u64 *mcp_rebalance_hist;			/* per node id, of pass.mm */
static unsigned long mcp_rebalance_cursor;	/* pid to start from */
static unsigned long mcp_rebalance_sweep_cursor;	/* exited-task sweep */
static struct mcp_place_event mcp_rebalance_events[MCP_REBALANCE_MOVES];

static bool mcp_rebalance_vma_ok(const struct vm_area_struct *vma)
{
	return !vma->vm_file && vma->vm_flags & VM_READ &&
	       !(vma->vm_flags & (VM_IO | VM_PFNMAP));
}

/*
 * Fills @hist with sampled resident pages of @mm per node; returns the
 * pages seen and adds the lookups made to *@tries.
 */
static unsigned long mcp_rebalance_sample(struct mm_struct *mm, u64 *hist,
					  unsigned long *triesp)
{
	unsigned long pages = 0, tries = 0, seen = 0, step, addr;
	struct vm_area_struct *vma;

	memset(hist, 0, nr_node_ids * sizeof(*hist));
	if (!mmap_read_trylock(mm))
		return 0;

	for (vma = find_vma(mm, 0); vma; vma = find_vma(mm, vma->vm_end))
		if (mcp_rebalance_vma_ok(vma))
			pages += vma_pages(vma);
	step = max(1UL, pages / MCP_REBALANCE_SAMPLES);

	for (vma = find_vma(mm, 0); vma && tries < 2 * MCP_REBALANCE_SAMPLES;
	     vma = find_vma(mm, vma->vm_end)) {
		if (!mcp_rebalance_vma_ok(vma))
			continue;
		for (addr = vma->vm_start; addr < vma->vm_end &&
		     tries < 2 * MCP_REBALANCE_SAMPLES;
		     addr += step << PAGE_SHIFT, tries++) {
			struct page *page;
			int nid;

			if (mcp_get_user_page_remote(mm, addr,
						     FOLL_DUMP | FOLL_FORCE,
						     &page) != 1)
				continue;
			nid = page_to_nid(page);
			put_page(page);
			if (nid < nr_node_ids) {
				hist[nid]++;
				seen++;
			}
		}
	}
	mmap_read_unlock(mm);
	*triesp += tries;
	return seen;
}

/* Samples @p's mm into mcp_rebalance_hist unless the pass already did. */
static unsigned long mcp_rebalance_sample_task(struct task_struct *p,
					       struct mcp_rebalance_pass *pass)
{
	unsigned long tries = 0;
	struct mm_struct *mm;

	mm = get_task_mm(p);
	if (!mm)
		return 0;
	if (mm == pass->mm) {
		mmput(mm);
		return pass->seen;
	}
	if (pass->mm)
		mmput(pass->mm);
	pass->mm = mm;
	pass->seen = mcp_rebalance_sample(mm, mcp_rebalance_hist, &tries);
	pass->budget -= max(tries, 1UL);
	return pass->seen;
}

/*
 * Adaptive placement (MCP_PLACE_ADAPTIVE): @pt's mean wait per run since
 * the last look, from the scheduler's own run_delay and pcount (what
 * /proc/PID/schedstat shows; a wait still going on counts when it ends).
 * After adaptive_periods looks in a row above the threshold, returns the
 * node to move the task to: the one with the most idle CPUs, at least
 * min_idle_cpus and more than the current node has, that its original
 * affinity allows (ties: the nearest); else NUMA_NO_NODE.
 */
static int mcp_rebalance_runq_target(struct mcp_place_task *pt)
{
#ifdef CONFIG_SCHED_INFO
	unsigned int us = pt->runq_threshold_us ?: READ_ONCE(mcp_place_adaptive_runq_us);
	unsigned int min_idle = READ_ONCE(mcp_place_min_idle_cpus);
	u64 delay = READ_ONCE(pt->task->sched_info.run_delay);
	u64 runs = READ_ONCE(pt->task->sched_info.pcount);
	unsigned int *idle = mcp_rebalance_idle_count;
	int nid, best = NUMA_NO_NODE, cur = pt->node;
	u64 mean;

	lockdep_assert_held(&mcp_place_lock);

	mean = div64_u64(delay - pt->run_delay, max_t(u64, runs - pt->pcount, 1));
	pt->run_delay = delay;
	pt->pcount = runs;
	if (mean <= (u64)us * NSEC_PER_USEC) {
		pt->runq_over = 0;
		return NUMA_NO_NODE;
	}
	if (++pt->runq_over < READ_ONCE(mcp_place_adaptive_periods))
		return NUMA_NO_NODE;

	for_each_online_node(nid) {
		if (nid == cur || idle[nid] < min_idle ||
		    (cur >= 0 && idle[nid] <= idle[cur]) ||
		    !mcp_place_node_usable(nid, pt->orig))
			continue;
		if (best == NUMA_NO_NODE || idle[nid] > idle[best] ||
		    (idle[nid] == idle[best] && cur >= 0 &&
		     node_distance(cur, nid) < node_distance(cur, best)))
			best = nid;
	}
	return best;
#else
	return NUMA_NO_NODE;
#endif
}

/* Moves @pt to @node for @reason; its event goes out after the pass. */
static void mcp_rebalance_move(struct mcp_place_task *pt, int node, u32 reason,
			       struct mcp_rebalance_pass *pass)
{
	u32 flags = MCP_PLACE_KEEP | (pt->adaptive ? MCP_PLACE_ADAPTIVE : 0);
	int from = cpu_to_node(task_cpu(pt->task));

	lockdep_assert_held(&mcp_place_lock);

	if (mcp_place_apply(pt, node, reason, MCP_PLACE_ORIGIN_REBALANCER, flags,
			    &mcp_rebalance_events[pass->moves]))
		return;
	pass->moves++;
	trace_mcp_place(task_pid_nr(pt->task), from, node, node,
			MCP_PLACE_HOME_NONE, reason, MCP_PLACE_ORIGIN_REBALANCER, flags);
}

static void mcp_rebalance_task(struct mcp_place_task *pt,
			       struct mcp_rebalance_pass *pass)
{
	u64 stick_ns = (u64)READ_ONCE(mcp_place_stickiness_ms) * NSEC_PER_MSEC;
	unsigned int hyst = READ_ONCE(mcp_place_hysteresis_pct);
	u64 *hist = mcp_rebalance_hist;
	int nid, home = NUMA_NO_NODE, cur = pt->node;

	lockdep_assert_held(&mcp_place_lock);

	if (ktime_get_ns() - pt->last_ns < stick_ns)
		return;
	if (pt->adaptive) {
		nid = mcp_rebalance_runq_target(pt);
		if (nid != NUMA_NO_NODE) {
			mcp_rebalance_move(pt, nid, MCP_PLACE_REASON_RUNQ_LATENCY, pass);
			return;
		}
	}
	if (!mcp_rebalance_sample_task(pt->task, pass))
		return;

	for (nid = 0; nid < nr_node_ids; nid++)
		if (node_online(nid) && hist[nid] &&
		    (home == NUMA_NO_NODE || hist[nid] > hist[home]))
			home = nid;
	if (home == NUMA_NO_NODE || home == cur)
		return;
	if (cur >= 0 && cur < nr_node_ids &&
	    hist[home] * 100 <= hist[cur] * (100 + hyst))
		return;
	if (mcp_rebalance_idle_count[home] < READ_ONCE(mcp_place_min_idle_cpus) ||
	    !mcp_place_node_usable(home, pt->orig))
		return;
	mcp_rebalance_move(pt, home, MCP_PLACE_REASON_MEMORY_LOCAL, pass);
}

/*
 * Drops the state of exited tasks, resuming where the last pass stopped,
 * until @budget ns after @start (checked every MCP_REBALANCE_SWEEP_BATCH
 * entries).  A full sweep of n entries takes about n / (entries per
 * budget) passes.
 */
static void mcp_rebalance_sweep(u64 start, u64 budget)
{
	struct mcp_place_task *pt;
	unsigned long pid, next = 0;
	unsigned int seen = 0;

	lockdep_assert_held(&mcp_place_lock);

	xa_for_each_start(&mcp_place_tasks, pid, pt, mcp_rebalance_sweep_cursor) {
		if (++seen % MCP_REBALANCE_SWEEP_BATCH == 0 &&
		    ktime_get_ns() - start > budget) {
			next = pid;
			break;
		}
		if (mcp_place_task_gone(pt))
			mcp_place_forget(pid, pt);
		cond_resched();
	}
	mcp_rebalance_sweep_cursor = next;
}

static void mcp_rebalance_workfn(struct work_struct *work)
{
	struct mcp_rebalance_pass pass = {
		.budget = MCP_REBALANCE_PASS_LOOKUPS,
	};
	struct mcp_place_task *pt;
	unsigned long pid, next = 0;
	unsigned int i;
	u64 start = ktime_get_ns(), task_ns = 0;
	u64 time_budget = (u64)READ_ONCE(mcp_place_rebalance_ms) *
			  NSEC_PER_MSEC * MCP_REBALANCE_CPU_PCT / 100;

	mcp_idle_snapshot(mcp_rebalance_idle);
	mcp_place_idle_per_node(mcp_rebalance_idle, mcp_rebalance_idle_count);

	mutex_lock(&mcp_place_lock);
	mcp_rebalance_sweep(start, time_budget / 2);
	xa_for_each_start(&mcp_place_tasks, pid, pt, mcp_rebalance_cursor) {
		u64 now = ktime_get_ns();

		/*
		 * Stop when the next task, costing about what the last one
		 * did, would overrun the time budget; but always look at one
		 * kept task, so the cursor moves on however busy the pass.
		 */
		if (pass.budget <= 0 || pass.moves == MCP_REBALANCE_MOVES ||
		    (task_ns && now - start + task_ns > time_budget)) {
			next = pid;
			break;
		}
		if (pt->keep) {
			mcp_rebalance_task(pt, &pass);
			task_ns = max_t(u64, ktime_get_ns() - now, 1);
		}
		cond_resched();
	}
	mcp_rebalance_cursor = next;
	if (pass.mm)
		mmput(pass.mm);
	mutex_unlock(&mcp_place_lock);

	/* Sending may sleep (allocation): never under mcp_place_lock. */
	for (i = 0; i < pass.moves; i++)
		mcp_netlink_place_event(&mcp_rebalance_events[i]);

	/* Wall time, so an upper bound of the pass's CPU time. */
	mcp_counter_add(MCP_CTR_REBALANCE_NS, ktime_get_ns() - start);
	mcp_counter_inc(MCP_CTR_REBALANCE_PASSES);

	schedule_delayed_work(&mcp_rebalance_work,
			      msecs_to_jiffies(READ_ONCE(mcp_place_rebalance_ms)));
}

/* rebalance_ms changed: the next pass comes after the new period. */
void mcp_rebalance_kick(void)
{
	mod_delayed_work(system_wq, &mcp_rebalance_work,
			 msecs_to_jiffies(READ_ONCE(mcp_place_rebalance_ms)));
}

int mcp_rebalance_init(void)
{
	if (!zalloc_cpumask_var(&mcp_rebalance_idle, GFP_KERNEL))
		return -ENOMEM;
	mcp_rebalance_idle_count = kcalloc(nr_node_ids,
					   sizeof(*mcp_rebalance_idle_count),
					   GFP_KERNEL);
	mcp_rebalance_hist = kcalloc(nr_node_ids, sizeof(*mcp_rebalance_hist),
				     GFP_KERNEL);
	if (!mcp_rebalance_idle_count || !mcp_rebalance_hist) {
		kfree(mcp_rebalance_hist);
		kfree(mcp_rebalance_idle_count);
		free_cpumask_var(mcp_rebalance_idle);
		return -ENOMEM;
	}

	INIT_DELAYED_WORK(&mcp_rebalance_work, mcp_rebalance_workfn);
	schedule_delayed_work(&mcp_rebalance_work,
			      msecs_to_jiffies(READ_ONCE(mcp_place_rebalance_ms)));
	return 0;
}

void mcp_rebalance_exit(void)
{
	cancel_delayed_work_sync(&mcp_rebalance_work);
	kfree(mcp_rebalance_hist);
	kfree(mcp_rebalance_idle_count);
	free_cpumask_var(mcp_rebalance_idle);
}
