// SPDX-License-Identifier: GPL-2.0
/*
 * MCP (Model Control Protocol): the cpu DMA engine.  A job runs on its
 * submitter's worker for the destination's node (mcp_charge.c: in the
 * submitter's cgroups, on that node's CPUs its cpuset allows; a
 * memory-only node's jobs on the submitter's own node), one at a time per
 * context and node, in order.  The copy is memcpy() in chunks, with the
 * deadline checked between them.
 *
 * /sys/kernel/debug/mcp/cpu_engine_fault makes the N-th job that runs
 * from now fail with -EIO or stall until its deadline, so the error and
 * time-out paths can be tested (Documentation/ABI/testing/debugfs-mcp).
 *
 * Locks: mcp_cpu_fault_lock, innermost, protects the fault state.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/debugfs.h>
#include <linux/kthread.h>
#include <linux/ktime.h>
#include <linux/nodemask.h>
#include <linux/sched.h>
#include <linux/spinlock.h>
#include <linux/string.h>
#include <linux/uaccess.h>

#include "mcp_charge.h"
#include "mcp_dma.h"
#include "mcp_internal.h"

/* Bytes copied between deadline checks and cond_resched(). */
#define MCP_CPU_CHUNK		(256 * 1024)

/* How often a stalled job looks whether its context is closing. */
#define MCP_CPU_STALL_SLICE_NS	(10 * NSEC_PER_MSEC)

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
	mcp_cpu_run(container_of(work, struct mcp_dma_job, cpu_work));
}

static void mcp_cpu_submit(struct mcp_engine *engine, struct list_head *jobs)
{
	struct mcp_dma_job *job, *next;

	list_for_each_entry_safe(job, next, jobs, link) {
		list_del_init(&job->link);
		kthread_init_work(&job->cpu_work, mcp_cpu_work_fn);
		if (!mcp_charged_queue(mcp_dma_job_charged(job), job->run_node,
				       &job->cpu_work))
			mcp_dma_job_fail_async(job, -EIO);
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

int mcp_engine_cpu_init(void)
{
	kref_init(&mcp_cpu_engine.ref);
	/* Each context runs one job at a time per node with CPUs. */
	mcp_cpu_engine.inflight = num_node_state(N_CPU);
	return 0;
}

/* Every context is gone (rmmod is refused while fds exist): no jobs. */
void mcp_engine_cpu_exit(void)
{
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
