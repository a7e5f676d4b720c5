// SPDX-License-Identifier: GPL-2.0
/*
 * MCP (Model Control Protocol): NUMA-aware task placement, MCP_IOC_PLACE
 * and MCP_IOC_UNPLACE, the per-task placement state and the knobs in
 * /sys/class/misc/mcp/placement/.  How the decision works is described in
 * Documentation/placement.rst; idle CPUs come from mcp_idle.c, the
 * rebalancer lives in mcp_rebalance.c.
 *
 * Per-task state: a struct mcp_place_task per placed task in the xarray
 * mcp_place_tasks, indexed by the task's global pid, holding a task
 * reference.  Entries of tasks that exit (PF_EXITING) or whose pid now
 * names another task are dropped on lookup and by the rebalancer's sweep
 * (Documentation/placement.rst, "Per-task state").  MCP_CTR_PLACED_TASKS
 * counts the entries.
 *
 * Locks: the order, and what each lock may be held across, are in
 * mcp_place.h.  MCP_IOC_PLACE and MCP_IOC_UNPLACE fill kernel buffers
 * under mcp_place_lock and copy the replies out and send their events
 * after dropping it.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/capability.h>
#include <linux/cgroup.h>
#include <linux/cred.h>
#include <linux/device.h>
#include <linux/kernel.h>
#include <linux/ktime.h>
#include <linux/nodemask.h>
#include <linux/pid.h>
#include <linux/sched/task.h>
#include <linux/slab.h>
#include <linux/sysfs.h>
#include <linux/topology.h>
#include <linux/uaccess.h>
#include <linux/uidgid.h>

#include "mcp_internal.h"
#include "mcp_place.h"
#include "mcp_trace.h"

unsigned int mcp_place_min_idle_cpus = 2;
unsigned int mcp_place_idle_threshold_pct = 80;
unsigned int mcp_place_idle_window_ms = 500;
unsigned int mcp_place_stickiness_ms = 1000;
unsigned int mcp_place_rebalance_ms = 1000;
unsigned int mcp_place_hysteresis_pct = 25;
unsigned int mcp_place_adaptive_runq_us = 2000;
unsigned int mcp_place_adaptive_periods = 3;

/* Guards mcp_place_tasks and the states in it; see the lock order above. */
DEFINE_MUTEX(mcp_place_lock);
/* struct mcp_place_task by global pid. */
DEFINE_XARRAY(mcp_place_tasks);

/* __u64 words of a CPU mask in the uapi. */
static unsigned int mcp_place_cpu_words(void)
{
	return DIV_ROUND_UP(nr_cpu_ids, 64);
}

/* The task has exited or is exiting: its state can go. */
bool mcp_place_task_gone(const struct mcp_place_task *pt)
{
	return READ_ONCE(pt->task->flags) & PF_EXITING;
}

/**
 * mcp_place_forget() - drop a task's state and the reference it holds
 * @pid: its index in mcp_place_tasks
 * @pt: the state
 */
void mcp_place_forget(unsigned long pid, struct mcp_place_task *pt)
{
	lockdep_assert_held(&mcp_place_lock);

	xa_erase(&mcp_place_tasks, pid);
	put_task_struct(pt->task);
	free_cpumask_var(pt->applied);
	free_cpumask_var(pt->orig);
	kfree(pt);
	mcp_counter_dec(MCP_CTR_PLACED_TASKS);
}

/* The state of @p, or NULL; stale entries found on the way are dropped. */
static struct mcp_place_task *mcp_place_lookup(struct task_struct *p)
{
	unsigned long pid = task_pid_nr(p);
	struct mcp_place_task *pt;

	lockdep_assert_held(&mcp_place_lock);

	pt = xa_load(&mcp_place_tasks, pid);
	if (pt && (pt->task != p || mcp_place_task_gone(pt))) {
		mcp_place_forget(pid, pt);
		pt = NULL;
	}
	return pt;
}

/* @nid is online and has an online CPU in @allowed. */
bool mcp_place_node_usable(int nid, const struct cpumask *allowed)
{
	const struct cpumask *cpus;
	int cpu;

	if (nid < 0 || nid >= nr_node_ids || !node_online(nid))
		return false;
	cpus = cpumask_of_node(nid);
	for_each_cpu_and(cpu, cpus, allowed)
		if (cpu_online(cpu))
			return true;
	return false;
}

/* @count[nid] = CPUs of node nid in @idle, for every node id. */
void mcp_place_idle_per_node(const struct cpumask *idle, unsigned int *count)
{
	int nid;

	for (nid = 0; nid < nr_node_ids; nid++)
		count[nid] = node_online(nid) ?
			cpumask_weight_and(idle, cpumask_of_node(nid)) : 0;
}

/*
 * The placement rule: the home node when it has min_idle_cpus idle CPUs,
 * else the node nearest to home (__node_distance(home, n)) that has; ties
 * go to more idle CPUs, then to the lower node id.  Nodes none of whose
 * CPUs are in @allowed are not candidates.  Returns NUMA_NO_NODE when none
 * qualifies.
 */
static int mcp_place_rule(int home, const unsigned int *idle,
			  const struct cpumask *allowed, u32 *reason)
{
	unsigned int min_idle = READ_ONCE(mcp_place_min_idle_cpus);
	int nid, best = NUMA_NO_NODE, best_dist = 0;

	if (mcp_place_node_usable(home, allowed) && idle[home] >= min_idle) {
		*reason = MCP_PLACE_REASON_MEMORY_LOCAL;
		return home;
	}

	for_each_online_node(nid) {
		int dist;

		if (nid == home || idle[nid] < min_idle ||
		    !mcp_place_node_usable(nid, allowed))
			continue;
		dist = home >= 0 ? __node_distance(home, nid) : 0;
		if (best == NUMA_NO_NODE || dist < best_dist ||
		    (dist == best_dist && idle[nid] > idle[best])) {
			best = nid;
			best_dist = dist;
		}
	}

	*reason = best == NUMA_NO_NODE ? MCP_PLACE_REASON_UNCHANGED :
					 MCP_PLACE_REASON_NEAREST;
	return best;
}

/* The node holding most pages of @hist (ties: lower id), or NUMA_NO_NODE. */
static int mcp_place_hist_home(const u64 *hist, unsigned int n)
{
	int nid, home = NUMA_NO_NODE;

	for (nid = 0; nid < n; nid++) {
		if (!node_online(nid) || !hist[nid])
			continue;
		if (home == NUMA_NO_NODE || hist[nid] > hist[home])
			home = nid;
	}
	return home;
}

/*
 * The node NUMA balancing prefers for @p, from its fault statistics.  A
 * module cannot read task->numa_faults safely (its layout is private to
 * kernel/sched/fair.c), so this uses task->numa_preferred_nid, the node
 * the scheduler derived from those faults; NUMA_NO_NODE when there is none.
 */
static int mcp_place_numa_home(struct task_struct *p)
{
#ifdef CONFIG_NUMA_BALANCING
	int nid = READ_ONCE(p->numa_preferred_nid);

	if (nid >= 0 && nid < nr_node_ids && node_online(nid))
		return nid;
#endif
	return NUMA_NO_NODE;
}

/* @p's affinity as the scheduler keeps it (sched_getaffinity() reads it so). */
static void mcp_place_get_affinity(struct task_struct *p, struct cpumask *mask)
{
	unsigned long flags;

	raw_spin_lock_irqsave(&p->pi_lock, flags);
	cpumask_copy(mask, &p->cpus_mask);
	raw_spin_unlock_irqrestore(&p->pi_lock, flags);
}

/*
 * @p is in a cpuset other than the root one.  Linux 6.1 gives modules no
 * way to read a cpuset's CPUs (cpuset_cpus_allowed() is not exported),
 * and a cpuset whose CPUs change can leave the task's affinity as it was,
 * so MCP cannot tell which CPUs such a cpuset still allows.
 */
static bool mcp_place_in_cpuset(struct task_struct *p)
{
#ifdef CONFIG_CPUSETS
	struct cgroup_subsys_state *css;
	bool ret;

	rcu_read_lock();
	css = task_css(p, cpuset_cgrp_id);
	ret = css && css->parent;
	rcu_read_unlock();
	return ret;
#else
	return false;
#endif
}

/**
 * mcp_place_base() - the CPUs a placement of a task may use
 * @p: the task
 * @pt: its state, or NULL when MCP has not placed it
 * @base: returns the CPUs
 *
 * set_cpus_allowed_ptr() does not check cpusets, so MCP never applies a
 * CPU the task's current affinity lacks unless MCP itself removed it: the
 * affinity recorded at the first placement (@pt->orig) is used only while
 * the task is in the root cpuset and its affinity is still the one MCP
 * last applied (@pt->applied).  Otherwise something else (a cpuset, a
 * sched_setaffinity() call) has had the last word, and the current
 * affinity is the base and becomes the new @pt->orig: placement only
 * narrows it and UNPLACE leaves it.
 */
static void mcp_place_base(struct task_struct *p, struct mcp_place_task *pt,
			   struct cpumask *base)
{
	lockdep_assert_held(&mcp_place_lock);

	mcp_place_get_affinity(p, base);
	if (!pt)
		return;
	if (cpumask_equal(base, pt->applied) && !mcp_place_in_cpuset(p)) {
		cpumask_copy(base, pt->orig);
		return;
	}
	cpumask_copy(pt->orig, base);
	cpumask_copy(pt->applied, base);
}

static int mcp_place_task_node(struct task_struct *p)
{
	return cpu_to_node(task_cpu(p));
}

/* Fills @ev for @p's decision now; sent later, outside mcp_place_lock. */
static void mcp_place_fill_event(struct mcp_place_event *ev,
				 struct task_struct *p, int from, int to,
				 u32 reason, u32 origin)
{
	ev->pid = task_pid_nr(p);
	ev->from_node = from;
	ev->to_node = to;
	ev->reason = reason;
	ev->origin = origin;
	ev->timestamp_ns = ktime_get_ns();
	get_task_comm(ev->comm, p);
}

/*
 * Starts @pt's run-queue window afresh: the next rebalancer look measures
 * the waits from now, on the node it is placed on now.
 */
void mcp_place_runq_restart(struct mcp_place_task *pt)
{
	lockdep_assert_held(&mcp_place_lock);
#ifdef CONFIG_SCHED_INFO
	pt->run_delay = READ_ONCE(pt->task->sched_info.run_delay);
	pt->pcount = READ_ONCE(pt->task->sched_info.pcount);
#endif
	pt->runq_over = 0;
}

/**
 * mcp_place_apply() - narrow a placed task to a node and record it
 * @pt: the task's state
 * @node: the node
 * @reason: enum mcp_place_reason, for the event
 * @origin: enum mcp_place_origin, for the event
 * @flags: MCP_PLACE_* of the request (MCP_PLACE_KEEP and
 *	   MCP_PLACE_ADAPTIVE are recorded)
 * @ev: the event to send once mcp_place_lock is dropped, or NULL to
 *	send it at once (the rebalancer, which touches no user memory)
 *
 * Sets the affinity to @node's CPUs intersected with mcp_place_base()'s
 * CPUs, records it as the mask MCP applied and fills or sends the event.
 *
 * Return: 0, -EINVAL when the intersection has no online CPU, -ENOMEM, or
 * set_cpus_allowed_ptr()'s error.
 */
int mcp_place_apply(struct mcp_place_task *pt, int node, u32 reason,
		    u32 origin, u32 flags, struct mcp_place_event *ev)
{
	struct mcp_place_event now;
	cpumask_var_t mask;
	int from, ret;

	lockdep_assert_held(&mcp_place_lock);

	if (!alloc_cpumask_var(&mask, GFP_KERNEL))
		return -ENOMEM;
	mcp_place_base(pt->task, pt, mask);
	cpumask_and(mask, cpumask_of_node(node), mask);
	if (!cpumask_intersects(mask, cpu_online_mask)) {
		ret = -EINVAL;
		goto out_free;
	}

	from = mcp_place_task_node(pt->task);
	ret = set_cpus_allowed_ptr(pt->task, mask);
	if (ret)
		goto out_free;

	cpumask_copy(pt->applied, mask);
	pt->node = node;
	pt->last_ns = ktime_get_ns();
	pt->keep = flags & MCP_PLACE_KEEP;
	pt->adaptive = flags & MCP_PLACE_ADAPTIVE;
	mcp_place_runq_restart(pt);
	mcp_place_fill_event(ev ?: &now, pt->task, from, node, reason, origin);
	if (!ev)
		mcp_netlink_place_event(&now);
out_free:
	free_cpumask_var(mask);
	return ret;
}

/* A new state for @p, inserted; its original affinity is @orig. */
static struct mcp_place_task *mcp_place_new(struct task_struct *p,
					    const struct cpumask *orig)
{
	struct mcp_place_task *pt;
	int ret = -ENOMEM;

	lockdep_assert_held(&mcp_place_lock);

	pt = kzalloc(sizeof(*pt), GFP_KERNEL);
	if (!pt)
		return ERR_PTR(-ENOMEM);
	if (!alloc_cpumask_var(&pt->orig, GFP_KERNEL))
		goto err_free_pt;
	if (!alloc_cpumask_var(&pt->applied, GFP_KERNEL))
		goto err_free_orig;
	cpumask_copy(pt->orig, orig);
	cpumask_copy(pt->applied, orig);
	pt->node = NUMA_NO_NODE;
	get_task_struct(p);
	pt->task = p;

	ret = xa_insert(&mcp_place_tasks, task_pid_nr(p), pt, GFP_KERNEL);
	if (ret)
		goto err_put_task;
	mcp_counter_inc(MCP_CTR_PLACED_TASKS);
	return pt;

err_put_task:
	put_task_struct(p);
	free_cpumask_var(pt->applied);
err_free_orig:
	free_cpumask_var(pt->orig);
err_free_pt:
	kfree(pt);
	return ERR_PTR(ret);
}

/* @pid (0 = current) with a reference, or ERR_PTR(-ESRCH). */
static struct task_struct *mcp_place_get_task(s32 pid)
{
	struct task_struct *p;
	struct pid *spid;

	if (pid < 0)
		return ERR_PTR(-ESRCH);
	if (!pid) {
		get_task_struct(current);
		return current;
	}
	spid = find_get_pid(pid);
	p = get_pid_task(spid, PIDTYPE_PID);
	put_pid(spid);
	return p ?: ERR_PTR(-ESRCH);
}

/*
 * May the caller change @p's affinity?  The rule of sched_setaffinity(2):
 * the caller's euid is the target's uid or euid, or the caller has
 * CAP_SYS_NICE in the target's user namespace.  Kernel threads and tasks
 * with PF_NO_SETAFFINITY are refused with -EINVAL, as sched_setaffinity()
 * refuses the latter.  (security_task_setscheduler() is not exported to
 * modules in 6.1, so LSMs are not consulted.)
 */
static int mcp_place_check_task(struct task_struct *p)
{
	const struct cred *cred = current_cred(), *pcred;
	bool ok;

	if (p->flags & (PF_KTHREAD | PF_NO_SETAFFINITY))
		return -EINVAL;
	if (p->flags & PF_EXITING)
		return -ESRCH;

	rcu_read_lock();
	pcred = __task_cred(p);
	ok = uid_eq(cred->euid, pcred->euid) ||
	     uid_eq(cred->euid, pcred->uid) ||
	     ns_capable(pcred->user_ns, CAP_SYS_NICE);
	rcu_read_unlock();
	return ok ? 0 : -EPERM;
}

/* Input checks of MCP_IOC_PLACE that need no task. */
static int mcp_place_check_arg(const struct mcp_place *arg)
{
	if (arg->flags & ~MCP_PLACE_FLAGS_ALL || arg->reserved)
		return -EINVAL;
	if (arg->flags & MCP_PLACE_ADAPTIVE) {
		if (!(MCP_FEATURES & MCP_FEAT_PLACE_ADAPTIVE))
			return -EOPNOTSUPP;
		if (!(arg->flags & MCP_PLACE_KEEP))
			return -EINVAL;
	} else if (arg->runq_threshold_us) {
		return -EINVAL;
	}
	if (!(arg->flags & MCP_PLACE_NODE) && arg->node)
		return -EINVAL;
	if (!arg->histogram_ptr != !arg->histogram_nodes ||
	    arg->histogram_nodes > MCP_PLACE_HISTOGRAM_MAX)
		return -EINVAL;
	if (!arg->mask_ptr && arg->mask_words)
		return -EINVAL;
	if (!arg->idle_ptr && arg->idle_nodes)
		return -EINVAL;
	return 0;
}

/* Copies the caller's histogram in (entries past nr_node_ids are ignored). */
static int mcp_place_read_hist(const struct mcp_place *arg, u64 **histp,
			       unsigned int *np)
{
	unsigned int n = min_t(unsigned int, arg->histogram_nodes, nr_node_ids);
	u64 *hist;

	*histp = NULL;
	*np = 0;
	if (!arg->histogram_ptr)
		return 0;
	hist = memdup_user(u64_to_user_ptr(arg->histogram_ptr),
			   array_size(n, sizeof(*hist)));
	if (IS_ERR(hist))
		return PTR_ERR(hist);
	*histp = hist;
	*np = n;
	return 0;
}

/* Writes @mask in the uapi layout (bit c%64 of word c/64) to @uptr. */
static int mcp_place_put_mask(u64 uptr, const struct cpumask *mask)
{
	unsigned int words = mcp_place_cpu_words();
	u64 *buf;
	int cpu, ret = 0;

	buf = kcalloc(words, sizeof(*buf), GFP_KERNEL);
	if (!buf)
		return -ENOMEM;
	for_each_cpu(cpu, mask)
		buf[cpu / 64] |= 1ULL << (cpu % 64);
	if (copy_to_user(u64_to_user_ptr(uptr), buf, words * sizeof(*buf)))
		ret = -EFAULT;
	kfree(buf);
	return ret;
}

static int mcp_place_put_idle(const struct mcp_place *arg,
			      const unsigned int *idle)
{
	unsigned int n = min_t(unsigned int, arg->idle_nodes, nr_node_ids);

	if (!arg->idle_ptr || !n)
		return 0;
	static_assert(sizeof(*idle) == sizeof(u32));
	if (copy_to_user(u64_to_user_ptr(arg->idle_ptr), idle, n * sizeof(u32)))
		return -EFAULT;
	return 0;
}

/* Buffers of one MCP_IOC_PLACE call. */
struct mcp_place_bufs {
	cpumask_var_t allowed;	/* mcp_place_base() */
	cpumask_var_t idle;	/* idle CPUs of the last window */
	cpumask_var_t mask;	/* the mask applied or reported */
	unsigned int *idle_count;	/* per node id */
	u64 *hist;
	unsigned int hist_n;
};

static void mcp_place_free_bufs(struct mcp_place_bufs *b)
{
	kfree(b->hist);
	kfree(b->idle_count);
	free_cpumask_var(b->mask);
	free_cpumask_var(b->idle);
	free_cpumask_var(b->allowed);
}

static int mcp_place_alloc_bufs(struct mcp_place_bufs *b)
{
	memset(b, 0, sizeof(*b));
	if (!zalloc_cpumask_var(&b->allowed, GFP_KERNEL) ||
	    !zalloc_cpumask_var(&b->idle, GFP_KERNEL) ||
	    !zalloc_cpumask_var(&b->mask, GFP_KERNEL))
		goto err_free;
	b->idle_count = kcalloc(nr_node_ids, sizeof(*b->idle_count),
				GFP_KERNEL);
	if (!b->idle_count)
		goto err_free;
	return 0;

err_free:
	mcp_place_free_bufs(b);
	return -ENOMEM;
}

/*
 * Decides for @p with mcp_place_lock held (@pt is its state or NULL);
 * fills the out fields of @arg and b->mask.  Returns 0, -EINVAL for a
 * named node that cannot be used, or -EAGAIN (out fields filled) when
 * nothing qualifies under MCP_PLACE_STRICT.
 */
static int mcp_place_decide(struct mcp_place *arg, struct task_struct *p,
			    struct mcp_place_task *pt, struct mcp_place_bufs *b)
{
	u64 stick_ns = (u64)READ_ONCE(mcp_place_stickiness_ms) * NSEC_PER_MSEC;
	int home, node;
	u32 reason;

	mcp_place_base(p, pt, b->allowed);

	arg->prev_node = mcp_place_task_node(p);
	home = b->hist ? mcp_place_hist_home(b->hist, b->hist_n) : NUMA_NO_NODE;
	arg->home_source = MCP_PLACE_HOME_HISTOGRAM;
	if (home == NUMA_NO_NODE) {
		home = mcp_place_numa_home(p);
		arg->home_source = MCP_PLACE_HOME_NUMA_FAULTS;
	}
	if (home == NUMA_NO_NODE) {
		home = arg->prev_node;
		arg->home_source = MCP_PLACE_HOME_LAST_CPU;
	}
	arg->home_node = home;

	if (arg->flags & MCP_PLACE_NODE) {
		node = arg->node;
		if (!mcp_place_node_usable(node, b->allowed))
			return -EINVAL;
		reason = MCP_PLACE_REASON_FORCED;
	} else if (pt && !(arg->flags & MCP_PLACE_FORCE) &&
		   ktime_get_ns() - pt->last_ns < stick_ns) {
		node = pt->node;
		reason = MCP_PLACE_REASON_STICKY;
	} else {
		node = mcp_place_rule(home, b->idle_count, b->allowed, &reason);
	}

	arg->node_chosen = node;
	arg->reason = reason;
	if (node == NUMA_NO_NODE && arg->flags & MCP_PLACE_STRICT)
		return -EAGAIN;
	if (reason == MCP_PLACE_REASON_STICKY ||
	    reason == MCP_PLACE_REASON_UNCHANGED)
		mcp_place_get_affinity(p, b->mask);
	else
		cpumask_and(b->mask, cpumask_of_node(node), b->allowed);
	return 0;
}

static bool mcp_place_moves(u32 reason)
{
	return reason == MCP_PLACE_REASON_MEMORY_LOCAL ||
	       reason == MCP_PLACE_REASON_NEAREST ||
	       reason == MCP_PLACE_REASON_FORCED;
}

/**
 * mcp_ioctl_place() - MCP_IOC_PLACE
 * @file: the open /dev/mcp file
 * @karg: kernel copy of struct mcp_place
 *
 * Return: 0; -EINVAL for bad flags, reserved bits, sizes, a bad node or a
 * kernel thread; -EFAULT for bad pointers; -ENOSPC (with nr_cpu_words) for
 * too few mask words; -ESRCH, -EPERM; -EAGAIN under MCP_PLACE_STRICT when
 * no node qualifies.
 */
int mcp_ioctl_place(struct file *file, void *karg)
{
	struct mcp_place *arg = karg;
	struct mcp_place_event ev;
	struct mcp_place_task *pt;
	struct mcp_place_bufs b;
	struct task_struct *p;
	bool send = false;
	int ret;

	ret = mcp_place_check_arg(arg);
	if (ret)
		return ret;

	arg->node_chosen = NUMA_NO_NODE;
	arg->prev_node = NUMA_NO_NODE;
	arg->home_node = NUMA_NO_NODE;
	arg->reason = MCP_PLACE_REASON_NONE;
	arg->home_source = MCP_PLACE_HOME_NONE;
	arg->nr_cpu_words = mcp_place_cpu_words();
	arg->nr_node_ids = nr_node_ids;
	if (arg->mask_ptr && arg->mask_words < arg->nr_cpu_words)
		return -ENOSPC;

	ret = mcp_place_alloc_bufs(&b);
	if (ret)
		return ret;
	ret = mcp_place_read_hist(arg, &b.hist, &b.hist_n);
	if (ret)
		goto out_free;

	p = mcp_place_get_task(arg->pid);
	if (IS_ERR(p)) {
		ret = PTR_ERR(p);
		goto out_free;
	}
	ret = mcp_place_check_task(p);
	if (ret)
		goto out_put_task;

	mcp_idle_snapshot(b.idle);
	mcp_place_idle_per_node(b.idle, b.idle_count);

	mutex_lock(&mcp_place_lock);
	pt = mcp_place_lookup(p);
	ret = mcp_place_decide(arg, p, pt, &b);
	if (ret && ret != -EAGAIN) {
		mutex_unlock(&mcp_place_lock);
		goto out_put_task;
	}

	/* Every decision, dry runs and refusals under STRICT included. */
	trace_mcp_place(task_pid_nr(p), arg->prev_node, arg->node_chosen,
			arg->home_node, arg->home_source, arg->reason,
			MCP_PLACE_ORIGIN_IOCTL, arg->flags);
	mutex_unlock(&mcp_place_lock);
	if (ret)
		goto out_put_task;

	/*
	 * Replies first, from the kernel copies the decision filled, with
	 * mcp_place_lock dropped: a user page that stalls (userfaultfd,
	 * FUSE) stalls only this call, and a bad pointer leaves the task
	 * untouched.
	 */
	if (arg->mask_ptr) {
		ret = mcp_place_put_mask(arg->mask_ptr, b.mask);
		if (ret)
			goto out_put_task;
	}
	ret = mcp_place_put_idle(arg, b.idle_count);
	if (ret || arg->flags & MCP_PLACE_DRY_RUN)
		goto out_put_task;

	if (!mcp_place_moves(arg->reason)) {
		mcp_place_fill_event(&ev, p, arg->prev_node, arg->node_chosen,
				     arg->reason, MCP_PLACE_ORIGIN_IOCTL);
		mcp_netlink_place_event(&ev);
		goto out_put_task;
	}

	/*
	 * Apply the decision.  The state may have come or gone while the
	 * lock was dropped: look it up again, and a new one's base is the
	 * affinity now (mcp_place_apply() narrows to mcp_place_base()).
	 */
	mutex_lock(&mcp_place_lock);
	pt = mcp_place_lookup(p);
	if (!pt) {
		mcp_place_base(p, NULL, b.allowed);
		pt = mcp_place_new(p, b.allowed);
		if (IS_ERR(pt)) {
			ret = PTR_ERR(pt);
			goto out_unlock;
		}
		ret = mcp_place_apply(pt, arg->node_chosen, arg->reason,
				      MCP_PLACE_ORIGIN_IOCTL, arg->flags, &ev);
		if (ret)
			mcp_place_forget(task_pid_nr(p), pt);
	} else {
		ret = mcp_place_apply(pt, arg->node_chosen, arg->reason,
				      MCP_PLACE_ORIGIN_IOCTL, arg->flags, &ev);
	}
	if (!ret)
		pt->runq_threshold_us = arg->runq_threshold_us;
	send = !ret;

out_unlock:
	mutex_unlock(&mcp_place_lock);
	if (send)
		mcp_netlink_place_event(&ev);
out_put_task:
	put_task_struct(p);
out_free:
	mcp_place_free_bufs(&b);
	return ret;
}

/**
 * mcp_ioctl_unplace() - MCP_IOC_UNPLACE
 * @file: the open /dev/mcp file
 * @karg: kernel copy of struct mcp_unplace
 *
 * Restores the affinity the task had before its first placement (or, when
 * something else has set its affinity since or it is in a cpuset, leaves
 * the current one: mcp_place_base()) and drops its state.
 *
 * Return: 0, -EINVAL for flags or reserved bits, -ESRCH, -EPERM, -ENOENT
 * for a task MCP has not placed.
 */
int mcp_ioctl_unplace(struct file *file, void *karg)
{
	struct mcp_unplace *arg = karg;
	struct mcp_place_event ev;
	struct mcp_place_task *pt;
	struct task_struct *p;
	cpumask_var_t mask;
	int from, ret;

	if (arg->flags || arg->reserved)
		return -EINVAL;
	if (!alloc_cpumask_var(&mask, GFP_KERNEL))
		return -ENOMEM;

	p = mcp_place_get_task(arg->pid);
	if (IS_ERR(p)) {
		ret = PTR_ERR(p);
		goto out_free;
	}
	ret = mcp_place_check_task(p);
	if (ret)
		goto out_put_task;

	mutex_lock(&mcp_place_lock);
	pt = mcp_place_lookup(p);
	if (!pt) {
		ret = -ENOENT;
		goto out_unlock;
	}
	from = mcp_place_task_node(p);
	mcp_place_base(p, pt, mask);
	ret = set_cpus_allowed_ptr(p, mask);
	if (ret)
		goto out_unlock;
	mcp_place_forget(task_pid_nr(p), pt);
	trace_mcp_place(task_pid_nr(p), from, NUMA_NO_NODE, NUMA_NO_NODE,
			MCP_PLACE_HOME_NONE, MCP_PLACE_REASON_NONE,
			MCP_PLACE_ORIGIN_UNPLACE, 0);
	mcp_place_fill_event(&ev, p, from, NUMA_NO_NODE, MCP_PLACE_REASON_NONE,
			     MCP_PLACE_ORIGIN_UNPLACE);
out_unlock:
	mutex_unlock(&mcp_place_lock);
	if (!ret)
		mcp_netlink_place_event(&ev);
out_put_task:
	put_task_struct(p);
out_free:
	free_cpumask_var(mask);
	return ret;
}

/*
 * Knobs.  Each is an unsigned decimal in [min, max]; anything else is
 * -EINVAL.  Documented in Documentation/ABI/testing/sysfs-class-misc-mcp.
 * MCP_PLACE_KNOB(name, min, max, kick) defines name_show() and
 * name_store(); kick() runs after a successful write.
 */
static ssize_t mcp_place_knob_store(unsigned int *knob, unsigned int min,
				    unsigned int max, const char *buf,
				    size_t count)
{
	unsigned int val;

	if (kstrtouint(buf, 10, &val) || val < min || val > max)
		return -EINVAL;
	WRITE_ONCE(*knob, val);
	return count;
}

#define MCP_PLACE_KNOB(name, min, max, kick)				\
static ssize_t name##_show(struct device *dev,				\
			   struct device_attribute *attr, char *buf)	\
{									\
	return sysfs_emit(buf, "%u\n", READ_ONCE(mcp_place_##name));	\
}									\
static ssize_t name##_store(struct device *dev,				\
			    struct device_attribute *attr,		\
			    const char *buf, size_t count)		\
{									\
	ssize_t ret = mcp_place_knob_store(&mcp_place_##name, min, max,\
					   buf, count);			\
	if (ret > 0)							\
		kick();							\
	return ret;							\
}

static void mcp_place_no_kick(void)
{
}

MCP_PLACE_KNOB(min_idle_cpus, 0, 65536, mcp_place_no_kick)
static DEVICE_ATTR_RW(min_idle_cpus);
MCP_PLACE_KNOB(idle_threshold_pct, 1, 100, mcp_place_no_kick)
static DEVICE_ATTR_RW(idle_threshold_pct);
MCP_PLACE_KNOB(idle_window_ms, 10, 60000, mcp_idle_kick)
static DEVICE_ATTR_RW(idle_window_ms);
MCP_PLACE_KNOB(stickiness_ms, 0, 3600000, mcp_place_no_kick)
static DEVICE_ATTR_RW(stickiness_ms);
MCP_PLACE_KNOB(rebalance_ms, 10, 3600000, mcp_rebalance_kick)
static DEVICE_ATTR_RW(rebalance_ms);
MCP_PLACE_KNOB(hysteresis_pct, 0, 1000, mcp_place_no_kick)
static DEVICE_ATTR_RW(hysteresis_pct);
MCP_PLACE_KNOB(adaptive_runq_us, 1, 10000000, mcp_place_no_kick)
static DEVICE_ATTR_RW(adaptive_runq_us);
MCP_PLACE_KNOB(adaptive_periods, 1, 1000, mcp_place_no_kick)
static DEVICE_ATTR_RW(adaptive_periods);

static struct attribute *mcp_place_attrs[] = {
	&dev_attr_min_idle_cpus.attr,
	&dev_attr_idle_threshold_pct.attr,
	&dev_attr_idle_window_ms.attr,
	&dev_attr_stickiness_ms.attr,
	&dev_attr_rebalance_ms.attr,
	&dev_attr_hysteresis_pct.attr,
	&dev_attr_adaptive_runq_us.attr,
	&dev_attr_adaptive_periods.attr,
	NULL
};

const struct attribute_group mcp_place_attr_group = {
	.name = "placement",
	.attrs = mcp_place_attrs,
};

int mcp_place_init(void)
{
	int ret;

	ret = mcp_idle_init();
	if (ret)
		return ret;
	ret = mcp_rebalance_init();
	if (ret)
		goto err_idle_exit;
	return 0;

err_idle_exit:
	mcp_idle_exit();
	return ret;
}

/*
 * Stops the workers and drops every task's state.  Placed tasks keep the
 * affinity MCP gave them.
 */
void mcp_place_exit(void)
{
	struct mcp_place_task *pt;
	unsigned long pid;

	mcp_rebalance_exit();
	mcp_idle_exit();

	mutex_lock(&mcp_place_lock);
	xa_for_each(&mcp_place_tasks, pid, pt)
		mcp_place_forget(pid, pt);
	mutex_unlock(&mcp_place_lock);
	xa_destroy(&mcp_place_tasks);
}
