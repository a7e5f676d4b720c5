// SPDX-License-Identifier: GPL-2.0
/*
 * MCP (Model Control Protocol): CPU work done for a task, charged to it.
 *
 * The cpu DMA engine's copies and a graph's kernel-run nodes (COPY,
 * TILE16, the int8 conversions) are work a task asks for, up to gigabytes
 * a job.  Run on threads shared by everyone, their CPU time would land in
 * the root cgroup, outside the submitter's cpu.max, cpu.weight and
 * cpuset.  Instead each context has a struct mcp_charged: kthread workers,
 * one per NUMA node its work ran on, each created by the submitting task
 * in its own ioctl and attached to every cgroup of that task with
 * cgroup_attach_task_all() (as vhost workers were before vhost_task), at
 * the task's nice value.  The cpu controller then charges their time to
 * the submitter, pids.current counts them, and the cpuset confines them: a
 * worker runs on its node's CPUs that the cpuset allows, or on all the
 * cpuset allows when it allows none of them (mcp_charged_create()).  A
 * later change of the cpuset applies to the worker as to any of its
 * tasks.  One worker per node runs a context's jobs for that node one at
 * a time, in order.
 *
 * Workers are made in process context by the submitter
 * (mcp_charged_prepare()) and used from any context (mcp_charged_queue()).
 * The set is freed by a work item of mcp_charge_wq: its owner may drop it
 * from one of its own workers, which cannot stop itself.  That worker
 * may still be running module code when the module's last reference
 * goes (a fence's), so module exit waits until every set is freed, its
 * threads stopped (mcp_charged_live), as destroy_workqueue() waited for
 * the work items that ran such jobs before.
 *
 * Locks: mcp_charged.lock serialises creation; a worker pointer, once
 * published, does not change until the set is freed.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/atomic.h>
#include <linux/cgroup.h>
#include <linux/cpumask.h>
#include <linux/err.h>
#include <linux/gfp.h>
#include <linux/kthread.h>
#include <linux/nodemask.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/smp.h>
#include <linux/topology.h>
#include <linux/wait.h>

#include "mcp_charge.h"

/* Frees sets of workers, off the workers' own threads. */
static struct workqueue_struct *mcp_charge_wq;
/* Sets not yet freed; module exit waits for none. */
static atomic_t mcp_charged_live = ATOMIC_INIT(0);
static DECLARE_WAIT_QUEUE_HEAD(mcp_charged_gone);

static void mcp_charged_free_work(struct work_struct *work)
{
	struct mcp_charged *c = container_of(work, struct mcp_charged,
					     free_work);
	int node;

	for (node = 0; node < nr_node_ids; node++)
		if (c->workers[node])
			kthread_destroy_worker(c->workers[node]);
	kfree(c->workers);
	mutex_destroy(&c->lock);
	kfree(c);
	if (atomic_dec_and_test(&mcp_charged_live))
		wake_up(&mcp_charged_gone);
}

/**
 * mcp_charged_alloc() - an empty set of charged workers
 *
 * Return: the set, or NULL without memory.
 */
struct mcp_charged *mcp_charged_alloc(void)
{
	struct mcp_charged *c;

	c = kzalloc(sizeof(*c), GFP_KERNEL_ACCOUNT);
	if (!c)
		return NULL;
	c->workers = kcalloc(nr_node_ids, sizeof(*c->workers),
			     GFP_KERNEL_ACCOUNT);
	if (!c->workers) {
		kfree(c);
		return NULL;
	}
	mutex_init(&c->lock);
	INIT_WORK(&c->free_work, mcp_charged_free_work);
	atomic_inc(&mcp_charged_live);
	return c;
}

/**
 * mcp_charged_free() - stops and frees a set of workers
 * @c:	the set, or NULL; nothing may be queued on it any more
 *
 * Any context, one of @c's own workers included: the work they run now
 * finishes first.
 */
void mcp_charged_free(struct mcp_charged *c)
{
	if (c)
		queue_work(mcp_charge_wq, &c->free_work);
}

/* A worker for @node in current's cgroups; process context. */
static struct kthread_worker *mcp_charged_create(int node)
{
	struct kthread_worker *w;
	cpumask_var_t mask;
	int ret;

	if (!zalloc_cpumask_var(&mask, GFP_KERNEL))
		return ERR_PTR(-ENOMEM);
	w = kthread_create_worker(0, "mcp_cpu/%d", task_pid_nr(current));
	if (IS_ERR(w))
		goto out_free_mask;
	/* A cgroup that cannot take it fails the caller's ioctl. */
	ret = cgroup_attach_task_all(current, w->task);
	if (ret)
		goto err_destroy;
	set_user_nice(w->task, task_nice(current));
	/*
	 * Attaching gave it the cpuset's CPUs: narrow within them, never
	 * beyond (set_cpus_allowed_ptr() does not check cpusets).
	 */
	cpumask_and(mask, w->task->cpus_ptr, cpumask_of_node(node));
	if (!cpumask_empty(mask)) {
		ret = set_cpus_allowed_ptr(w->task, mask);
		if (ret)
			goto err_destroy;
	}
	goto out_free_mask;

err_destroy:
	kthread_destroy_worker(w);
	w = ERR_PTR(ret);
out_free_mask:
	free_cpumask_var(mask);
	return w;
}

/**
 * mcp_charged_prepare() - makes sure a worker will run a job for @node
 * @c:		the context's set
 * @node:	where the job's memory is, or NUMA_NO_NODE
 *
 * Process context, called by the task the job is charged to.  A node
 * without CPUs, or none, means the caller's own node.
 *
 * Return: the node to pass to mcp_charged_queue(), or a negative errno
 * (the worker could not be made or joined the caller's cgroups).
 */
int mcp_charged_prepare(struct mcp_charged *c, int node)
{
	struct kthread_worker *w;
	int ret = 0;

	if (node == NUMA_NO_NODE || !node_state(node, N_CPU))
		node = cpu_to_node(raw_smp_processor_id());
	/* Pairs with smp_store_release() below: a worker seen is set up. */
	if (smp_load_acquire(&c->workers[node]))
		return node;

	mutex_lock(&c->lock);
	if (!c->workers[node]) {
		w = mcp_charged_create(node);
		if (IS_ERR(w))
			ret = PTR_ERR(w);
		else	/* Pairs with the lockless smp_load_acquire()s. */
			smp_store_release(&c->workers[node], w);
	}
	mutex_unlock(&c->lock);
	return ret ?: node;
}

/**
 * mcp_charged_queue() - runs @work on the worker prepared for @run_node
 * @c:		the context's set
 * @run_node:	what mcp_charged_prepare() returned
 * @work:	the job's work
 *
 * Any context.
 *
 * Return: false if it was already queued or no worker was prepared.
 */
bool mcp_charged_queue(struct mcp_charged *c, int run_node,
		       struct kthread_work *work)
{
	struct kthread_worker *w;

	if (WARN_ON_ONCE(run_node < 0 || run_node >= nr_node_ids))
		return false;
	/* Pairs with mcp_charged_prepare()'s smp_store_release(). */
	w = smp_load_acquire(&c->workers[run_node]);
	if (WARN_ON_ONCE(!w))
		return false;
	return kthread_queue_work(w, work);
}

int mcp_charge_init(void)
{
	mcp_charge_wq = alloc_workqueue("mcp_charge", WQ_UNBOUND, 0);
	return mcp_charge_wq ? 0 : -ENOMEM;
}

/*
 * After every context and fence is gone: a worker that ran the last job
 * may still be returning through module code until its set is freed.
 */
void mcp_charge_exit(void)
{
	wait_event(mcp_charged_gone, !atomic_read(&mcp_charged_live));
	destroy_workqueue(mcp_charge_wq);
}
