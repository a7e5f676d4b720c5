// SPDX-License-Identifier: GPL-2.0
/*
 * MCP (Model Control Protocol): compute workers.  MCP_IOC_WORKER_REGISTER
 * gives a thread a worker fd for one NUMA node of a context; read() on
 * it claims ready worker jobs routed to that node (mcp_sched.c): one job,
 * with room for more the jobs chained after it, or with MCP_WORKER_CHAINS
 * a chain as one job; MCP_IOC_JOB_DONE, MCP_IOC_JOBS_DONE and
 * MCP_IOC_CHAIN_DONE report them.  Documentation/graph-scheduling.rst,
 * from "Workers" on, has the protocol, why batches and chains exist, and
 * the lifetime of a worker fd and of the jobs it claimed.
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

/*
 * The @n jobs of a read whose copy to the reader failed, last first: a
 * started one goes back to the queue, those chained after it back to
 * waiting.  The first is started; a chained one is too once a report by
 * a guessed id ended the one before it.  All are of one execution.
 */
static void mcp_worker_unclaim(struct mcp_worker *w, struct mcp_job **jobs,
			       u32 n)
{
	struct mcp_sched *sched = w->sched;
	struct mcp_exec *exec = jobs[0]->exec, *ended = NULL;
	u32 i, held = 0;

	spin_lock(&sched->lock);
	for (i = n; i-- > 0;) {
		struct mcp_job *job = jobs[i];

		/* Off the list: reported meanwhile by a guessed id. */
		if (list_empty(&job->link))
			continue;
		held++;
		if (job->abandoned)
			list_del_init(&job->link);
		else if (job->state == MCP_JOB_WAITING)
			mcp_sched_unchain_locked(job);
		else if (!ended)
			ended = mcp_sched_unclaim_locked(job);
		else
			WARN_ON_ONCE(mcp_sched_unclaim_locked(job));
	}
	spin_unlock(&sched->lock);
	if (ended)
		mcp_sched_exec_end(ended);
	while (held--)
		mcp_sched_exec_put(exec);
}

/* The chain of a read whose copy to the reader failed goes back. */
static void mcp_worker_unclaim_chain(struct mcp_worker *w,
				     struct mcp_job *head)
{
	struct mcp_sched *sched = w->sched;
	struct mcp_exec *exec = head->exec, *ended = NULL;
	bool held;

	spin_lock(&sched->lock);
	/* Off the list: reported meanwhile by a guessed id. */
	held = !list_empty(&head->link);
	if (held) {
		mcp_sched_chain_drop_locked(head);
		if (head->abandoned)
			list_del_init(&head->link);
		else
			ended = mcp_sched_unclaim_locked(head);
	}
	spin_unlock(&sched->lock);
	if (ended)
		mcp_sched_exec_end(ended);
	if (held)
		mcp_sched_exec_put(exec);
}

/*
 * Claims the next job for @w and up to @max - 1 chained after it, with a
 * reference on their execution in *@exec: a report by a guessed id may
 * release them before the read's copy is done.
 */
static u32 mcp_worker_claim_locked(struct mcp_worker *w, u32 max,
				   struct mcp_job **jobs,
				   struct mcp_worker_job *out,
				   struct mcp_exec **exec)
{
	struct mcp_job *job = mcp_sched_next_job_locked(w->sched, w);
	u32 n = 0;

	lockdep_assert_held(&w->sched->lock);
	if (!job)
		return 0;
	*exec = mcp_sched_exec_get_locked(job);
	if (w->chains) {
		jobs[0] = job;
		return mcp_sched_claim_chain_locked(job, w, max, w->chain);
	}
	mcp_sched_claim_locked(job, w, &out[0]);
	jobs[n++] = job;
	while (n < max) {
		job = mcp_sched_chain_locked(jobs[n - 1], w, &out[n]);
		if (!job)
			break;
		jobs[n++] = job;
	}
	return n;
}

/*
 * The used part of each of @n jobs (header, used tensors, parameters): a
 * read of several jobs leaves the rest as it was, and copies made with
 * plain moves rather than a string instruction are much cheaper where the
 * CPU is emulated.
 */
static int mcp_worker_copy_used(struct mcp_worker_job __user *ubuf,
				const struct mcp_worker_job *out, u32 n)
{
	u32 i;

	if (!user_access_begin(ubuf, n * sizeof(*ubuf)))
		return -EFAULT;
	for (i = 0; i < n; i++) {
		const struct mcp_worker_job *job = &out[i];
		char __user *dst = (char __user *)&ubuf[i];
		const char *src = (const char *)job;
		size_t in = offsetof(struct mcp_worker_job, inputs);
		size_t outs = offsetof(struct mcp_worker_job, outputs);
		size_t param = offsetof(struct mcp_worker_job, param);

		unsafe_copy_to_user(dst, src,
				    in + job->n_inputs * sizeof(job->inputs[0]),
				    efault);
		unsafe_copy_to_user(dst + outs, src + outs,
				    job->n_outputs * sizeof(job->outputs[0]),
				    efault);
		unsafe_copy_to_user(dst + param, src + param, job->param_len,
				    efault);
	}
	user_access_end();
	return 0;

efault:
	user_access_end();
	return -EFAULT;
}

/*
 * Claims up to @max jobs (or chain nodes) for @w, waiting unless
 * O_NONBLOCK, with a reference on their execution in *@exec for the
 * caller to drop.  Return: how many, 0 once @w is detached, or -errno.
 */
static int mcp_worker_claim_wait(struct file *file, u32 max,
				 struct mcp_job **jobs,
				 struct mcp_worker_job *out,
				 struct mcp_exec **exec)
{
	struct mcp_worker *w = file->private_data;
	struct mcp_sched *sched = w->sched;
	int ret;
	u32 n;

	for (;;) {
		spin_lock(&sched->lock);
		if (!w->attached) {
			spin_unlock(&sched->lock);
			return 0;
		}
		n = mcp_worker_claim_locked(w, max, jobs, out, exec);
		spin_unlock(&sched->lock);
		if (n)
			return n;
		if (file->f_flags & O_NONBLOCK)
			return -EAGAIN;
		ret = wait_event_interruptible_exclusive(sched->node_wq[w->node],
							 mcp_worker_ready(w));
		if (ret)
			return ret;
	}
}

/* Claims a chain of up to @max nodes and copies its used parts to @buf. */
static ssize_t mcp_worker_read_chain(struct file *file, char __user *buf,
				     u32 max)
{
	struct mcp_worker *w = file->private_data;
	struct mcp_worker_chain *c = w->chain;
	size_t head = offsetof(struct mcp_worker_chain, handles);
	size_t nodes = offsetof(struct mcp_worker_chain, nodes);
	struct mcp_exec *exec;
	struct mcp_job *job;
	ssize_t ret;
	int n;

	n = mcp_worker_claim_wait(file, max, &job, NULL, &exec);
	if (n <= 0)
		return n;
	ret = nodes + n * sizeof(c->nodes[0]);
	if (copy_to_user(buf, c, head + c->n_buffers * sizeof(c->handles[0])) ||
	    copy_to_user(buf + nodes, c->nodes, n * sizeof(c->nodes[0]))) {
		mcp_worker_unclaim_chain(w, job);
		ret = -EFAULT;
	}
	mcp_sched_exec_put(exec);
	return ret;
}

/*
 * Claims up to @max jobs into @out, waiting unless O_NONBLOCK, and copies
 * them to @buf: whole for one job, the used parts for more.
 */
static ssize_t mcp_worker_read_jobs(struct file *file, char __user *buf,
				    u32 max, struct mcp_job **jobs,
				    struct mcp_worker_job *out)
{
	struct mcp_worker *w = file->private_data;
	struct mcp_exec *exec;
	ssize_t ret;
	int n;

	n = mcp_worker_claim_wait(file, max, jobs, out, &exec);
	if (n <= 0)
		return n;
	ret = n * sizeof(*out);
	if (max == 1 ? copy_to_user(buf, out, sizeof(*out)) :
	    mcp_worker_copy_used((struct mcp_worker_job __user *)buf, out, n)) {
		mcp_worker_unclaim(w, jobs, n);
		ret = -EFAULT;
	}
	mcp_sched_exec_put(exec);
	return ret;
}

/* read() on a MCP_WORKER_CHAINS fd: room for the header and a node. */
static ssize_t mcp_worker_read_chains(struct file *file, char __user *buf,
				      size_t count)
{
	struct mcp_worker *w = file->private_data;
	size_t nodes = offsetof(struct mcp_worker_chain, nodes);
	ssize_t ret;
	u32 max;

	if (count < nodes + sizeof(w->chain->nodes[0]))
		return -EINVAL;
	max = min_t(size_t, (count - nodes) / sizeof(w->chain->nodes[0]),
		    MCP_WORKER_CHAIN_MAX);

	if (mutex_lock_interruptible(&w->read_lock))
		return -EINTR;
	if (!w->chain)
		w->chain = kvmalloc(sizeof(*w->chain), GFP_KERNEL_ACCOUNT);
	ret = w->chain ? mcp_worker_read_chain(file, buf, max) : -ENOMEM;
	mutex_unlock(&w->read_lock);
	return ret;
}

static ssize_t mcp_worker_read(struct file *file, char __user *buf,
			       size_t count, loff_t *ppos)
{
	struct mcp_worker *w = file->private_data;
	size_t max = min_t(size_t, count / sizeof(struct mcp_worker_job),
			   MCP_WORKER_READ_MAX);
	struct mcp_worker_job one;
	struct mcp_job *one_job;
	ssize_t ret;

	if (w->chains)
		return mcp_worker_read_chains(file, buf, count);
	if (!max)
		return -EINVAL;
	if (max == 1) {
		/* Unused entries read as zeroes, as they always did. */
		memset(&one, 0, sizeof(one));
		return mcp_worker_read_jobs(file, buf, 1, &one_job, &one);
	}

	if (mutex_lock_interruptible(&w->read_lock))
		return -EINTR;
	if (!w->out)
		w->out = kvmalloc_array(MCP_WORKER_READ_MAX, sizeof(*w->out),
					GFP_KERNEL_ACCOUNT);
	ret = w->out ? mcp_worker_read_jobs(file, buf, max, w->jobs, w->out) :
		       -ENOMEM;
	mutex_unlock(&w->read_lock);
	return ret;
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

	lockdep_assert_held(&w->sched->lock);
	list_for_each_entry(job, &w->claimed, link)
		if (job->id == id)
			return job;
	return NULL;
}

/**
 * mcp_worker_apply_locked() - apply a report of a job or chain of @w
 * @w:		the worker
 * @job_id:	the job's id
 * @result:	0 or the negative errno of the last node run
 * @n_ran:	nodes of a chain run, 1 for a job
 * @start_ns:	when the first node started, 0 for the claim's time
 * @ends:	@n_ran end times (0: @now), or NULL: all @now
 * @now:	ktime_get_ns() of the call, the latest time a report keeps
 * @exec:	out: the job's execution, whose claim reference the caller
 *		drops, or NULL when no job was released
 * @ended:	out: the execution ended, for mcp_sched_exec_end()
 *
 * Return: 0, -EINVAL (@result or @n_ran out of range), -ENOENT (not a
 * job of @w), -EBUSY (a chained job not started), -ECANCELED (abandoned:
 * the result is ignored), -ENODEV (the context is gone).
 */
static int mcp_worker_apply_locked(struct mcp_worker *w, u64 job_id,
				   int result, u32 n_ran, u64 start_ns,
				   const u64 *ends, u64 now,
				   struct mcp_exec **exec, bool *ended)
{
	struct mcp_job *job;

	lockdep_assert_held(&w->sched->lock);
	*exec = NULL;
	*ended = false;
	if (result > 0 || result < MCP_JOB_RESULT_MIN)
		return -EINVAL;
	job = mcp_worker_find_locked(w, job_id);
	if (!job)
		return w->attached ? -ENOENT : -ENODEV;
	if (job->state == MCP_JOB_WAITING && !job->abandoned)
		return -EBUSY;
	if (n_ran > max(job->chain_len, 1U))
		return -EINVAL;
	*exec = job->exec;
	if (!w->attached || job->abandoned) {
		/* Its execution ended without it: the result is ignored. */
		mcp_sched_chain_drop_locked(job);
		list_del_init(&job->link);
		return w->attached ? -ECANCELED : -ENODEV;
	}
	if (job->chain_len)
		/* With @n_ran 1, the nodes after the first go back to waiting. */
		*ended = mcp_sched_chain_report_locked(job, result, n_ran,
						       start_ns, ends,
						       now) != NULL;
	else
		*ended = mcp_sched_job_report_locked(job, result, start_ns,
						     ends ? ends[0] : 0,
						     now) != NULL;
	return 0;
}

/* One report of MCP_IOC_JOB_DONE or MCP_IOC_JOBS_DONE. */
static int mcp_worker_report_locked(struct mcp_worker *w,
				    const struct mcp_job_report *r, u64 now,
				    struct mcp_exec **exec, bool *ended)
{
	lockdep_assert_held(&w->sched->lock);
	return mcp_worker_apply_locked(w, r->job_id, r->result, 1, r->start_ns,
				       &r->end_ns, now, exec, ended);
}

static int mcp_ioctl_job_done(struct file *file, void *karg)
{
	struct mcp_worker *w = file->private_data;
	struct mcp_sched *sched = w->sched;
	struct mcp_job_done *arg = karg;
	struct mcp_job_report r = {
		.job_id = arg->job_id,
		.result = arg->result,
	};
	struct mcp_exec *exec;
	bool ended;
	int ret;

	if (arg->flags || arg->reserved)
		return -EINVAL;

	spin_lock(&sched->lock);
	ret = mcp_worker_report_locked(w, &r, ktime_get_ns(), &exec, &ended);
	spin_unlock(&sched->lock);

	if (ended)
		mcp_sched_exec_end(exec);
	if (exec)
		mcp_sched_exec_put(exec);
	return ret;
}

/* Reports MCP_IOC_JOBS_DONE applies per lock hold, on the stack. */
#define MCP_JOBS_DONE_CHUNK	16

/* Applies @n <= MCP_JOBS_DONE_CHUNK reports from @ureports. */
static int mcp_worker_report_chunk(struct mcp_worker *w,
				   struct mcp_job_report __user *ureports,
				   u32 n, u64 now)
{
	struct mcp_job_report reports[MCP_JOBS_DONE_CHUNK];
	struct mcp_exec *execs[MCP_JOBS_DONE_CHUNK];
	bool ended[MCP_JOBS_DONE_CHUNK];
	struct mcp_sched *sched = w->sched;
	u32 i;

	if (copy_from_user(reports, ureports, n * sizeof(*reports)))
		return -EFAULT;

	spin_lock(&sched->lock);
	for (i = 0; i < n; i++)
		reports[i].status = mcp_worker_report_locked(w, &reports[i], now,
							     &execs[i],
							     &ended[i]);
	spin_unlock(&sched->lock);

	/* Each ending before the claim references go. */
	for (i = 0; i < n; i++)
		if (ended[i])
			mcp_sched_exec_end(execs[i]);
	for (i = 0; i < n; i++)
		if (execs[i])
			mcp_sched_exec_put(execs[i]);

	for (i = 0; i < n; i++)
		if (put_user(reports[i].status, &ureports[i].status))
			return -EFAULT;
	return 0;
}

static int mcp_ioctl_jobs_done(struct file *file, void *karg)
{
	struct mcp_worker *w = file->private_data;
	struct mcp_jobs_done *arg = karg;
	struct mcp_job_report __user *ureports = u64_to_user_ptr(arg->reports);
	u32 done, n = arg->n_reports;
	u64 now;
	int ret;

	if (arg->flags || arg->reserved)
		return -EINVAL;
	if (n > MCP_JOBS_DONE_MAX)
		return -E2BIG;
	if (!access_ok(ureports, (size_t)n * sizeof(*ureports)))
		return -EFAULT;

	now = ktime_get_ns();
	for (done = 0; done < n; done += MCP_JOBS_DONE_CHUNK) {
		ret = mcp_worker_report_chunk(w, ureports + done,
					      min_t(u32, n - done,
						    MCP_JOBS_DONE_CHUNK),
					      now);
		if (ret)
			return ret;
	}
	return 0;
}

static int mcp_ioctl_chain_done(struct file *file, void *karg)
{
	struct mcp_worker *w = file->private_data;
	struct mcp_sched *sched = w->sched;
	struct mcp_chain_done *arg = karg;
	const u64 *ends = NULL;
	struct mcp_exec *exec;
	bool ended;
	int ret;

	if (arg->flags || !arg->n_ran || arg->n_ran > MCP_WORKER_CHAIN_MAX)
		return -EINVAL;
	if (mutex_lock_interruptible(&w->report_lock))
		return -EINTR;
	if (arg->ends) {
		if (!w->ends)
			w->ends = kvmalloc_array(MCP_WORKER_CHAIN_MAX,
						 sizeof(*w->ends),
						 GFP_KERNEL_ACCOUNT);
		if (!w->ends) {
			ret = -ENOMEM;
			goto out_unlock;
		}
		if (copy_from_user(w->ends, u64_to_user_ptr(arg->ends),
				   arg->n_ran * sizeof(*w->ends))) {
			ret = -EFAULT;
			goto out_unlock;
		}
		ends = w->ends;
	}

	spin_lock(&sched->lock);
	ret = mcp_worker_apply_locked(w, arg->job_id, arg->result, arg->n_ran,
				      arg->start_ns, ends, ktime_get_ns(),
				      &exec, &ended);
	spin_unlock(&sched->lock);
	mutex_unlock(&w->report_lock);

	if (ended)
		mcp_sched_exec_end(exec);
	if (exec)
		mcp_sched_exec_put(exec);
	return ret;

out_unlock:
	mutex_unlock(&w->report_lock);
	return ret;
}

static const struct mcp_ioctl_desc mcp_chain_done_desc = {
	.ksize = sizeof(struct mcp_chain_done),
	.size_ver0 = MCP_CHAIN_DONE_SIZE_VER0,
	.handler = mcp_ioctl_chain_done,
};

static const struct mcp_ioctl_desc mcp_job_done_desc = {
	.ksize = sizeof(struct mcp_job_done),
	.size_ver0 = MCP_JOB_DONE_SIZE_VER0,
	.handler = mcp_ioctl_job_done,
};

static const struct mcp_ioctl_desc mcp_jobs_done_desc = {
	.ksize = sizeof(struct mcp_jobs_done),
	.size_ver0 = MCP_JOBS_DONE_SIZE_VER0,
	.handler = mcp_ioctl_jobs_done,
};

static long mcp_worker_ioctl(struct file *file, unsigned int cmd,
			     unsigned long arg)
{
	long ret;

	mcp_counter_inc(MCP_CTR_IOCTLS);
	if (cmd == MCP_IOC_JOB_DONE)
		ret = mcp_ioctl_call(file, cmd, &mcp_job_done_desc,
				     (void __user *)arg);
	else if (cmd == MCP_IOC_JOBS_DONE)
		ret = mcp_ioctl_call(file, cmd, &mcp_jobs_done_desc,
				     (void __user *)arg);
	else if (cmd == MCP_IOC_CHAIN_DONE)
		ret = mcp_ioctl_call(file, cmd, &mcp_chain_done_desc,
				     (void __user *)arg);
	else
		ret = -ENOTTY;
	if (ret < 0)
		mcp_counter_inc(MCP_CTR_IOCTL_ERRORS);
	return ret;
}

/*
 * The next job @w holds, chained ones not started first: their running
 * predecessor, re-queued, could otherwise end and start them for @w.
 */
static struct mcp_job *mcp_worker_next_held_locked(struct mcp_worker *w)
{
	struct mcp_job *job;

	lockdep_assert_held(&w->sched->lock);
	list_for_each_entry(job, &w->claimed, link)
		if (job->state == MCP_JOB_WAITING)
			return job;
	return list_first_entry_or_null(&w->claimed, struct mcp_job, link);
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
		job = mcp_worker_next_held_locked(w);
		if (job) {
			exec = job->exec;
			/* A chain's nodes not started wait again, as below. */
			mcp_sched_chain_drop_locked(job);
			if (job->abandoned)
				list_del_init(&job->link);
			else if (job->state == MCP_JOB_WAITING)
				mcp_sched_unchain_locked(job);
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
	kvfree(w->out);
	kvfree(w->chain);
	kvfree(w->ends);
	mutex_destroy(&w->report_lock);
	mutex_destroy(&w->read_lock);
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
	if (arg->flags & ~MCP_WORKER_CHAINS)
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
	w->chains = arg->flags & MCP_WORKER_CHAINS;
	INIT_LIST_HEAD(&w->link);
	INIT_LIST_HEAD(&w->claimed);
	mutex_init(&w->read_lock);
	mutex_init(&w->report_lock);

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
	mutex_destroy(&w->report_lock);
	mutex_destroy(&w->read_lock);
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
