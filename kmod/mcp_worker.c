// SPDX-License-Identifier: GPL-2.0
/*
 * MCP (Model Control Protocol): compute workers.  MCP_IOC_WORKER_REGISTER
 * gives a thread a worker fd for one NUMA node of a context; read() on
 * it claims one ready worker job (struct mcp_worker_job) routed to that
 * node (mcp_sched.c), MCP_IOC_JOB_DONE on it reports the job.
 *
 * A worker fd holds a reference on its context's scheduler state, not on
 * the context: once the context is closed, read() returns 0 ("no more
 * work") and JOB_DONE fails with -ENODEV.  Closing a worker fd with jobs
 * claimed re-queues each once; a job whose second worker goes away too
 * fails with -EPIPE.  The fd holds a module reference (fops owner).
 *
 * Locks: mcp_sched.lock (mcp_sched.h) around every change of a worker's
 * lists; never held across copy_to_user() or a wait.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/anon_inodes.h>
#include <linux/compat.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/nodemask.h>
#include <linux/poll.h>
#include <linux/slab.h>
#include <linux/topology.h>
#include <linux/uaccess.h>

#include "mcp_ctx.h"
#include "mcp_graph.h"
#include "mcp_internal.h"
#include "mcp_pci.h"
#include "mcp_sched.h"

/* Largest result JOB_DONE takes: -MAX_ERRNO .. 0. */
#define MCP_JOB_RESULT_MIN	(-4095)

/* A job for @w is ready, or @w was detached: read() has an answer. */
static bool mcp_worker_ready(struct mcp_worker *w)
{
	struct mcp_sched *sched = w->sched;
	bool ready;

	spin_lock(&sched->lock);
	ready = !w->attached || mcp_sched_next_job_locked(sched, w);
	spin_unlock(&sched->lock);
	return ready;
}

/* A claimed job whose copy to the reader failed goes back to the queue. */
static void mcp_worker_unclaim(struct mcp_worker *w, struct mcp_job *job)
{
	struct mcp_sched *sched = w->sched;
	struct mcp_exec *exec = job->exec, *ended = NULL;

	spin_lock(&sched->lock);
	if (job->abandoned)
		list_del_init(&job->link);
	else
		ended = mcp_sched_unclaim_locked(job);
	spin_unlock(&sched->lock);
	if (ended)
		mcp_sched_exec_end(ended);
	mcp_sched_exec_put(exec);
}

static ssize_t mcp_worker_read(struct file *file, char __user *buf,
			       size_t count, loff_t *ppos)
{
	struct mcp_worker *w = file->private_data;
	struct mcp_sched *sched = w->sched;
	struct mcp_worker_job out;
	struct mcp_job *job;
	int ret;

	if (count < sizeof(out))
		return -EINVAL;

	for (;;) {
		spin_lock(&sched->lock);
		if (!w->attached) {
			spin_unlock(&sched->lock);
			return 0;
		}
		job = mcp_sched_next_job_locked(sched, w);
		if (job)
			mcp_sched_claim_locked(job, w, &out);
		spin_unlock(&sched->lock);
		if (job)
			break;
		if (file->f_flags & O_NONBLOCK)
			return -EAGAIN;
		ret = wait_event_interruptible_exclusive(sched->node_wq[w->node],
							 mcp_worker_ready(w));
		if (ret)
			return ret;
	}

	if (copy_to_user(buf, &out, sizeof(out))) {
		mcp_worker_unclaim(w, job);
		return -EFAULT;
	}
	return sizeof(out);
}

static __poll_t mcp_worker_poll(struct file *file, poll_table *wait)
{
	struct mcp_worker *w = file->private_data;
	struct mcp_sched *sched = w->sched;
	__poll_t mask = 0;

	poll_wait(file, &sched->node_wq[w->node], wait);
	spin_lock(&sched->lock);
	if (!w->attached)
		mask = EPOLLIN | EPOLLRDNORM | EPOLLHUP;
	else if (mcp_sched_next_job_locked(sched, w))
		mask = EPOLLIN | EPOLLRDNORM;
	spin_unlock(&sched->lock);
	return mask;
}

static struct mcp_job *mcp_worker_find_locked(struct mcp_worker *w, u64 id)
{
	struct mcp_job *job;

	list_for_each_entry(job, &w->claimed, link)
		if (job->id == id)
			return job;
	return NULL;
}

static int mcp_ioctl_job_done(struct file *file, void *karg)
{
	struct mcp_worker *w = file->private_data;
	struct mcp_sched *sched = w->sched;
	struct mcp_job_done *arg = karg;
	struct mcp_exec *exec, *ended = NULL;
	struct mcp_job *job;
	int ret = 0;

	if (arg->flags || arg->reserved)
		return -EINVAL;
	if (arg->result > 0 || arg->result < MCP_JOB_RESULT_MIN)
		return -EINVAL;

	spin_lock(&sched->lock);
	job = mcp_worker_find_locked(w, arg->job_id);
	if (!job) {
		spin_unlock(&sched->lock);
		return w->attached ? -ENOENT : -ENODEV;
	}
	exec = job->exec;
	if (!w->attached || job->abandoned) {
		/* Its execution ended without it: the result is ignored. */
		list_del_init(&job->link);
		ret = w->attached ? -ECANCELED : -ENODEV;
	} else {
		ended = mcp_sched_job_done_locked(job, arg->result, false);
	}
	spin_unlock(&sched->lock);

	if (ended)
		mcp_sched_exec_end(ended);
	mcp_sched_exec_put(exec);
	return ret;
}

static const struct mcp_ioctl_desc mcp_job_done_desc = {
	.ksize = sizeof(struct mcp_job_done),
	.size_ver0 = MCP_JOB_DONE_SIZE_VER0,
	.handler = mcp_ioctl_job_done,
};

static long mcp_worker_ioctl(struct file *file, unsigned int cmd,
			     unsigned long arg)
{
	long ret;

	mcp_counter_inc(MCP_CTR_IOCTLS);
	if (cmd == MCP_IOC_JOB_DONE)
		ret = mcp_ioctl_call(file, &mcp_job_done_desc,
				     (void __user *)arg);
	else
		ret = -ENOTTY;
	if (ret < 0)
		mcp_counter_inc(MCP_CTR_IOCTL_ERRORS);
	return ret;
}

/* Detaches the worker and hands back, one at a time, the jobs it holds. */
static int mcp_worker_release(struct inode *inode, struct file *file)
{
	struct mcp_worker *w = file->private_data;
	struct mcp_sched *sched = w->sched;
	struct mcp_exec *exec, *ended;
	struct mcp_job *job;

	spin_lock(&sched->lock);
	if (w->attached) {
		list_del_init(&w->link);
		sched->node_workers[w->node]--;
		w->attached = false;
		mcp_sched_wake_all_locked(sched);
	}
	spin_unlock(&sched->lock);

	for (;;) {
		ended = NULL;
		spin_lock(&sched->lock);
		job = list_first_entry_or_null(&w->claimed, struct mcp_job,
					       link);
		if (job) {
			exec = job->exec;
			if (job->abandoned)
				list_del_init(&job->link);
			else
				ended = mcp_sched_job_done_locked(job, 0, true);
		}
		spin_unlock(&sched->lock);
		if (!job)
			break;
		if (ended)
			mcp_sched_exec_end(ended);
		mcp_sched_exec_put(exec);
	}

	mcp_sched_put(sched);
	kfree(w);
	mcp_counter_dec(MCP_CTR_GRAPH_WORKERS);
	return 0;
}

static const struct file_operations mcp_worker_fops = {
	.owner = THIS_MODULE,
	.release = mcp_worker_release,
	.read = mcp_worker_read,
	.poll = mcp_worker_poll,
	.unlocked_ioctl = mcp_worker_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
	.llseek = noop_llseek,
};

int mcp_ioctl_worker_register(struct file *file, void *karg)
{
	struct mcp_worker_register_karg *rk = karg;
	struct mcp_worker_register *arg = &rk->arg;
	struct mcp_ctx *ctx = file->private_data;
	struct mcp_sched *sched;
	struct mcp_worker *w;
	struct file *wfile;
	int node = arg->node, fd, ret;

	rk->file = NULL;
	if (arg->flags)
		return -EINVAL;
	if (node == -1)
		node = numa_node_id();
	else if (node < 0 || node >= nr_node_ids || !node_online(node) ||
		 !(node_state(node, N_CPU) || node_state(node, N_MEMORY)))
		return -EINVAL;
	if (ctx->mdev && READ_ONCE(ctx->mdev->gone))
		return -ENODEV;

	sched = mcp_sched_get_ctx(ctx);
	if (!sched)
		return -ENOMEM;
	w = kzalloc(sizeof(*w), GFP_KERNEL_ACCOUNT);
	if (!w) {
		ret = -ENOMEM;
		goto err_put_sched;
	}
	w->sched = sched;
	w->node = node;
	INIT_LIST_HEAD(&w->link);
	INIT_LIST_HEAD(&w->claimed);

	fd = get_unused_fd_flags(O_CLOEXEC);
	if (fd < 0) {
		ret = fd;
		goto err_free_worker;
	}
	wfile = anon_inode_getfile("[mcp_worker]", &mcp_worker_fops, w,
				   O_RDWR);
	if (IS_ERR(wfile)) {
		ret = PTR_ERR(wfile);
		goto err_put_fd;
	}
	/* From here the file's release frees the worker. */
	mcp_counter_inc(MCP_CTR_GRAPH_WORKERS);

	spin_lock(&sched->lock);
	list_add_tail(&w->link, &sched->workers);
	sched->node_workers[node]++;
	w->attached = true;
	/* Jobs queued for a node without workers may now route here. */
	mcp_sched_wake_all_locked(sched);
	spin_unlock(&sched->lock);

	arg->node = node;
	arg->fd = fd;
	rk->file = wfile;
	return 0;

err_put_fd:
	put_unused_fd(fd);
err_free_worker:
	kfree(w);
err_put_sched:
	mcp_sched_put(sched);
	return ret;
}

/* The fd is installed only once the caller has its number. */
void mcp_ioctl_worker_register_publish(void *karg, bool copied)
{
	struct mcp_worker_register_karg *rk = karg;

	if (copied) {
		fd_install(rk->arg.fd, rk->file);
	} else {
		fput(rk->file);
		put_unused_fd(rk->arg.fd);
	}
}
