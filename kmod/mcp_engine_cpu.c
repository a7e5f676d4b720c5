// SPDX-License-Identifier: GPL-2.0
/*
 * MCP (Model Control Protocol): the cpu DMA engine, a kthread_worker per
 * online CPU, bound to it.  A job runs on a worker of its destination's
 * node: the submitting CPU's own when that CPU is on the node (the common
 * case, and the cheap one: no other CPU has to wake up), else one of the
 * node's, in turn; jobs of memory-only nodes stay on the submitting CPU.
 * The copy is memcpy() in chunks, with the deadline checked between them.
 *
 * /sys/kernel/debug/mcp/cpu_engine_fault makes the N-th job that runs
 * from now fail with -EIO or stall until its deadline, so the error and
 * time-out paths can be tested (Documentation/ABI/testing/debugfs-mcp).
 *
 * Locks: mcp_cpu_worker.lock, irq-safe, protects its job list;
 * mcp_cpu_fault_lock the fault state.  Both are innermost.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/cpu.h>
#include <linux/cpumask.h>
#include <linux/debugfs.h>
#include <linux/kthread.h>
#include <linux/ktime.h>
#include <linux/nodemask.h>
#include <linux/smp.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/string.h>
#include <linux/uaccess.h>

#include "mcp_dma.h"
#include "mcp_internal.h"

/* Bytes copied between deadline checks and cond_resched(). */
#define MCP_CPU_CHUNK		(256 * 1024)

/* How often a stalled job looks whether its context is closing. */
#define MCP_CPU_STALL_SLICE_NS	(10 * NSEC_PER_MSEC)

/**
 * struct mcp_cpu_worker - the cpu engine on one CPU
 * @worker:	its kthread_worker, bound to the CPU
 * @work:	runs every job on @jobs
 * @lock:	protects @jobs
 * @jobs:	handed over, not started
 */
struct mcp_cpu_worker {
	struct kthread_worker *worker;
	struct kthread_work work;
	spinlock_t lock;	/* protects @jobs */
	struct list_head jobs;
};

/* Indexed by CPU; NULL for CPUs that were offline at load. */
static struct mcp_cpu_worker **mcp_cpu_workers;
/* Runs the jobs of a CPU without a worker. */
static int mcp_cpu_default_cpu = -1;

enum mcp_cpu_fault {
	MCP_CPU_FAULT_NONE,
	MCP_CPU_FAULT_FAIL,
	MCP_CPU_FAULT_STALL,
};

static const char * const mcp_cpu_fault_names[] = {
	[MCP_CPU_FAULT_NONE] = "none",
	[MCP_CPU_FAULT_FAIL] = "fail",
	[MCP_CPU_FAULT_STALL] = "stall",
};

static DEFINE_SPINLOCK(mcp_cpu_fault_lock);
static enum mcp_cpu_fault mcp_cpu_fault_mode;
/* Jobs to run until the fault, the faulty one included. */
static unsigned int mcp_cpu_fault_countdown;

/* The fault for the job about to run, if it is the chosen one. */
static enum mcp_cpu_fault mcp_cpu_fault_take(void)
{
	enum mcp_cpu_fault fault = MCP_CPU_FAULT_NONE;

	spin_lock(&mcp_cpu_fault_lock);
	if (mcp_cpu_fault_mode != MCP_CPU_FAULT_NONE &&
	    !--mcp_cpu_fault_countdown) {
		fault = mcp_cpu_fault_mode;
		mcp_cpu_fault_mode = MCP_CPU_FAULT_NONE;
	}
	spin_unlock(&mcp_cpu_fault_lock);
	return fault;
}

/* Sleeps without load until the deadline; the context closing ends it. */
static int mcp_cpu_stall(struct mcp_dma_job *job)
{
	u64 now, slice;

	while ((now = ktime_get_ns()) < job->deadline_ns) {
		if (mcp_dma_job_cancelled(job))
			return -ECANCELED;
		slice = min_t(u64, job->deadline_ns - now, MCP_CPU_STALL_SLICE_NS);
		schedule_timeout_idle(nsecs_to_jiffies(slice) + 1);
	}
	return -ETIMEDOUT;
}

static int mcp_cpu_copy(struct mcp_dma_job *job)
{
	u64 done, n;

	for (done = 0; done < job->length; done += n) {
		if (ktime_get_ns() >= job->deadline_ns)
			return -ETIMEDOUT;
		if (mcp_dma_job_cancelled(job))
			return -ECANCELED;
		n = min_t(u64, job->length - done, MCP_CPU_CHUNK);
		memcpy(job->dst_vaddr + done, job->src_vaddr + done, n);
		cond_resched();
	}
	return 0;
}

static void mcp_cpu_run(struct mcp_dma_job *job)
{
	int ret = mcp_dma_job_start(job);

	if (!ret) {
		switch (mcp_cpu_fault_take()) {
		case MCP_CPU_FAULT_FAIL:
			ret = -EIO;
			break;
		case MCP_CPU_FAULT_STALL:
			ret = mcp_cpu_stall(job);
			break;
		case MCP_CPU_FAULT_NONE:
			ret = mcp_cpu_copy(job);
			break;
		}
	}
	mcp_dma_job_finish(job, ret);
}

static void mcp_cpu_work_fn(struct kthread_work *work)
{
	struct mcp_cpu_worker *w = container_of(work, struct mcp_cpu_worker,
						work);
	struct mcp_dma_job *job;

	for (;;) {
		spin_lock_irq(&w->lock);
		job = list_first_entry_or_null(&w->jobs, struct mcp_dma_job,
					       link);
		if (job)
			list_del_init(&job->link);
		spin_unlock_irq(&w->lock);
		if (!job)
			break;
		mcp_cpu_run(job);
		cond_resched();
	}
}

/* The CPU whose worker runs a job for @node; any context. */
static int mcp_cpu_worker_cpu(int node)
{
	/* Not preemptible: the distribution cursor is per CPU. */
	int self = get_cpu(), cpu = self;

	if (node != NUMA_NO_NODE && cpu_to_node(cpu) != node &&
	    node_state(node, N_CPU)) {
		cpu = cpumask_any_and_distribute(cpumask_of_node(node),
						 cpu_online_mask);
		if (cpu >= nr_cpu_ids)
			cpu = self;
	}
	put_cpu();
	return mcp_cpu_workers[cpu] ? cpu : mcp_cpu_default_cpu;
}

static void mcp_cpu_submit(struct mcp_engine *engine, struct list_head *jobs)
{
	struct mcp_dma_job *job, *next;
	struct mcp_cpu_worker *w;
	unsigned long flags;
	int cpu;

	list_for_each_entry_safe(job, next, jobs, link) {
		cpu = mcp_cpu_worker_cpu(job->node);
		w = mcp_cpu_workers[cpu];
		spin_lock_irqsave(&w->lock, flags);
		list_move_tail(&job->link, &w->jobs);
		spin_unlock_irqrestore(&w->lock, flags);
		/* A no-op while the work is pending: one kick per batch. */
		kthread_queue_work(w->worker, &w->work);
	}
}

static struct mcp_engine mcp_cpu_engine = {
	.name = "cpu",
	.node = NUMA_NO_NODE,
	.max_chunk = 0,
	.submit = mcp_cpu_submit,
};

struct mcp_engine *mcp_engine_cpu(void)
{
	return &mcp_cpu_engine;
}

static int mcp_cpu_worker_create(int cpu)
{
	struct mcp_cpu_worker *w;
	int ret;

	/* A CPU of a memoryless node: the nearest node's memory. */
	w = kzalloc_node(sizeof(*w), GFP_KERNEL, mcp_mem_node(cpu_to_node(cpu)));
	if (!w)
		return -ENOMEM;
	spin_lock_init(&w->lock);
	INIT_LIST_HEAD(&w->jobs);
	kthread_init_work(&w->work, mcp_cpu_work_fn);

	/*
	 * Not kthread_create_worker_on_cpu(): its kthread_bind() does not
	 * survive the CPU going offline; this affinity is broken instead.
	 */
	w->worker = kthread_create_worker(0, "mcp_dma/%d", cpu);
	if (IS_ERR(w->worker)) {
		ret = PTR_ERR(w->worker);
		goto err_free_worker;
	}
	ret = set_cpus_allowed_ptr(w->worker->task, cpumask_of(cpu));
	if (ret)
		goto err_destroy_worker;

	mcp_cpu_workers[cpu] = w;
	return 0;

err_destroy_worker:
	kthread_destroy_worker(w->worker);
err_free_worker:
	kfree(w);
	return ret;
}

int mcp_engine_cpu_init(void)
{
	int cpu, ret = 0;

	kref_init(&mcp_cpu_engine.ref);
	mcp_cpu_workers = kcalloc(nr_cpu_ids, sizeof(*mcp_cpu_workers),
				  GFP_KERNEL);
	if (!mcp_cpu_workers)
		return -ENOMEM;

	cpus_read_lock();
	for_each_online_cpu(cpu) {
		ret = mcp_cpu_worker_create(cpu);
		if (ret)
			break;
		if (mcp_cpu_default_cpu < 0)
			mcp_cpu_default_cpu = cpu;
		mcp_cpu_engine.inflight++;
	}
	cpus_read_unlock();
	if (ret)
		goto err_exit;
	return 0;

err_exit:
	mcp_engine_cpu_exit();
	return ret;
}

/* Every context is gone (rmmod is refused while fds exist): no jobs. */
void mcp_engine_cpu_exit(void)
{
	int cpu;

	if (!mcp_cpu_workers)
		return;
	for (cpu = 0; cpu < nr_cpu_ids; cpu++) {
		struct mcp_cpu_worker *w = mcp_cpu_workers[cpu];

		if (!w)
			continue;
		kthread_destroy_worker(w->worker);
		WARN_ON(!list_empty(&w->jobs));
		kfree(w);
	}
	kfree(mcp_cpu_workers);
	mcp_cpu_workers = NULL;
	mcp_cpu_default_cpu = -1;
	mcp_cpu_engine.inflight = 0;
}

/* "none", or "fail N" / "stall N": N jobs to run until the fault. */
static ssize_t mcp_cpu_fault_read(struct file *file, char __user *ubuf,
				  size_t count, loff_t *ppos)
{
	enum mcp_cpu_fault mode;
	unsigned int countdown;
	char buf[32];
	int len;

	spin_lock(&mcp_cpu_fault_lock);
	mode = mcp_cpu_fault_mode;
	countdown = mcp_cpu_fault_countdown;
	spin_unlock(&mcp_cpu_fault_lock);

	if (mode == MCP_CPU_FAULT_NONE)
		len = scnprintf(buf, sizeof(buf), "none\n");
	else
		len = scnprintf(buf, sizeof(buf), "%s %u\n",
				mcp_cpu_fault_names[mode], countdown);
	return simple_read_from_buffer(ubuf, count, ppos, buf, len);
}

static ssize_t mcp_cpu_fault_write(struct file *file, const char __user *ubuf,
				   size_t count, loff_t *ppos)
{
	enum mcp_cpu_fault mode;
	unsigned int nth = 0;
	char buf[32], *arg;
	int i;

	if (count >= sizeof(buf))
		return -EINVAL;
	if (copy_from_user(buf, ubuf, count))
		return -EFAULT;
	buf[count] = '\0';
	arg = strim(buf);

	for (i = 0; i < ARRAY_SIZE(mcp_cpu_fault_names); i++) {
		size_t len = strlen(mcp_cpu_fault_names[i]);

		if (!strncmp(arg, mcp_cpu_fault_names[i], len) &&
		    (!arg[len] || arg[len] == ' '))
			break;
	}
	if (i == ARRAY_SIZE(mcp_cpu_fault_names))
		return -EINVAL;
	mode = i;
	arg += strlen(mcp_cpu_fault_names[i]);

	if (mode == MCP_CPU_FAULT_NONE) {
		if (*arg)
			return -EINVAL;
	} else if (kstrtouint(skip_spaces(arg), 10, &nth) || !nth) {
		return -EINVAL;
	}

	spin_lock(&mcp_cpu_fault_lock);
	mcp_cpu_fault_mode = mode;
	mcp_cpu_fault_countdown = nth;
	spin_unlock(&mcp_cpu_fault_lock);
	return count;
}

static const struct file_operations mcp_cpu_fault_fops = {
	.owner = THIS_MODULE,
	.read = mcp_cpu_fault_read,
	.write = mcp_cpu_fault_write,
	.llseek = default_llseek,
};

void mcp_engine_cpu_debugfs_init(struct dentry *dir)
{
	debugfs_create_file("cpu_engine_fault", 0600, dir, NULL,
			    &mcp_cpu_fault_fops);
}
