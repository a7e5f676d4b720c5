// SPDX-License-Identifier: GPL-2.0
/*
 * MCP (Model Control Protocol): DMA jobs, their fences, submission
 * coalescing, and MCP_IOC_DMA_SUBMIT / MCP_IOC_ENGINE_INFO.
 *
 * A context's DMA state (struct mcp_dma_ctx) is made on its first DMA
 * ioctl.  A submitted job waits for its in-fence, then sits in the
 * context's queue until wc_depth jobs are queued or wc_timeout_us passed
 * (an hrtimer), and the queue is handed to the engines in one batch.
 * Engines finish jobs in process context (mcp_dma_job_finish()); jobs
 * failed where sleeping is not allowed go through a work item.
 *
 * Every job has a fence context of its own: jobs of one context run on
 * several engines and workers and do not signal in seqno order, which
 * dma_fence_is_later() (sync_file merges) would assume of one context.
 *
 * Locks: mcp_dma_ctx.lock, released before jobs go to an engine, whose
 * lock is its own (mcp_dma.h); an in-fence's lock is held around
 * mcp_dma_in_fence_cb(), outside both.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/dma-fence.h>
#include <linux/file.h>
#include <linux/hrtimer.h>
#include <linux/kernel.h>
#include <linux/ktime.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/sync_file.h>
#include <linux/vmalloc.h>
#include <linux/wait.h>

#include "mcp_charge.h"
#include "mcp_ctx.h"
#include "mcp_dma.h"
#include "mcp_internal.h"
#include "mcp_pci.h"
#include "mcp_trace.h"

#define MCP_DMA_ENGINES		2

/* Beyond its deadline, how long a synchronous caller waits for a job. */
#define MCP_DMA_SYNC_GRACE_NS	(5ULL * NSEC_PER_SEC)
/* Deadlines further than this wait without a time-out (no overflow). */
#define MCP_DMA_SYNC_FOREVER_NS	(24ULL * 3600 * NSEC_PER_SEC)

/* Knob ranges and defaults (Documentation/dma.rst) */
#define MCP_DMA_WC_DEPTH_MAX		256
#define MCP_DMA_WC_TIMEOUT_US_MAX	1000000
#define MCP_DMA_JOB_TIMEOUT_MS_MAX	600000
#define MCP_DMA_WC_DEPTH_DEFAULT	1
#define MCP_DMA_WC_TIMEOUT_US_DEFAULT	50
#define MCP_DMA_JOB_TIMEOUT_MS_DEFAULT	10000

/**
 * struct mcp_dma_stats - one engine's jobs on one context
 * @submitted:	submitted
 * @completed:	finished successfully
 * @failed:	finished with an error, time-outs included
 * @timed_out:	finished with -ETIMEDOUT
 */
struct mcp_dma_stats {
	atomic64_t submitted;
	atomic64_t completed;
	atomic64_t failed;
	atomic64_t timed_out;
};

/**
 * struct mcp_dma_ctx - a context's DMA state
 * @lock:	protects @queue, @queued, @waiters, @live and @closing
 * @knobs:	the device's or the host's knobs
 * @engines:	MCP_ENGINE_* -> engine; a device engine with a reference
 * @dev_index:	the device's index, -1 for the host context
 * @seqno:	last sequence number given out
 * @queue:	jobs ready to be handed to their engines
 * @queued:	jobs on @queue
 * @waiters:	jobs waiting for their in-fence
 * @timer:	hands @queue over wc_timeout_us after its first job
 * @live:	jobs submitted and not finished
 * @closing:	the fd is being closed: new and queued jobs are cancelled
 * @orphaned:	the fd is closed: the last job to finish frees the state
 * @mdev:	the device whose @knobs these are (a reference), or NULL
 * @charged:	the workers that run its cpu engine jobs (mcp_charge.c)
 * @stats:	per engine
 */
struct mcp_dma_ctx {
	spinlock_t lock;	/* see above */
	struct mcp_dma_knobs *knobs;
	struct mcp_engine *engines[MCP_DMA_ENGINES];
	int dev_index;
	atomic64_t seqno;
	struct list_head queue;
	unsigned int queued;
	struct list_head waiters;
	struct hrtimer timer;
	unsigned int live;
	bool closing;
	bool orphaned;
	struct mcp_dev *mdev;
	struct mcp_charged *charged;
	struct mcp_dma_stats stats[MCP_DMA_ENGINES];
};

struct mcp_dma_knobs mcp_host_dma_knobs = {
	.wc_depth = MCP_DMA_WC_DEPTH_DEFAULT,
	.wc_timeout_us = MCP_DMA_WC_TIMEOUT_US_DEFAULT,
	.job_timeout_ms = MCP_DMA_JOB_TIMEOUT_MS_DEFAULT,
};

/* Finishes jobs failed in atomic context; drained at module exit. */
static struct workqueue_struct *mcp_dma_wq;

void mcp_dma_knobs_init(struct mcp_dma_knobs *knobs)
{
	knobs->wc_depth = MCP_DMA_WC_DEPTH_DEFAULT;
	knobs->wc_timeout_us = MCP_DMA_WC_TIMEOUT_US_DEFAULT;
	knobs->job_timeout_ms = MCP_DMA_JOB_TIMEOUT_MS_DEFAULT;
}

static u32 *mcp_dma_knob(struct mcp_dma_knobs *knobs, enum mcp_dma_knob knob,
			 u32 *max)
{
	switch (knob) {
	case MCP_DMA_KNOB_WC_DEPTH:
		*max = MCP_DMA_WC_DEPTH_MAX;
		return &knobs->wc_depth;
	case MCP_DMA_KNOB_WC_TIMEOUT_US:
		*max = MCP_DMA_WC_TIMEOUT_US_MAX;
		return &knobs->wc_timeout_us;
	case MCP_DMA_KNOB_JOB_TIMEOUT_MS:
		*max = MCP_DMA_JOB_TIMEOUT_MS_MAX;
		return &knobs->job_timeout_ms;
	}
	return NULL;
}

/**
 * mcp_dma_knob_get() - one knob's value, default and maximum
 * @knobs:	the knobs of a context (or mcp_host_dma_knobs)
 * @knob:	which one
 * @def:	out: its value at load
 * @max:	out: its largest value (the smallest is 1)
 *
 * For the tuning registry (mcp_tune_dma.c), which lists the knobs.
 *
 * Return: the current value.
 */
u32 mcp_dma_knob_get(const struct mcp_dma_knobs *knobs, enum mcp_dma_knob knob,
		     u32 *def, u32 *max)
{
	struct mcp_dma_knobs defaults;
	u32 *val;

	mcp_dma_knobs_init(&defaults);
	*def = *mcp_dma_knob(&defaults, knob, max);
	val = mcp_dma_knob((struct mcp_dma_knobs *)knobs, knob, max);
	return READ_ONCE(*val);
}

ssize_t mcp_dma_knob_show(const struct mcp_dma_knobs *knobs,
			  enum mcp_dma_knob knob, char *buf)
{
	u32 max, *val = mcp_dma_knob((struct mcp_dma_knobs *)knobs, knob, &max);

	return val ? sysfs_emit(buf, "%u\n", READ_ONCE(*val)) : -EINVAL;
}

/* Every knob is 1 .. its maximum; anything else is -EINVAL, kept. */
int mcp_dma_knob_store(struct mcp_dma_knobs *knobs, enum mcp_dma_knob knob,
		       const char *buf)
{
	u32 max, val, *knobp = mcp_dma_knob(knobs, knob, &max);

	if (!knobp)
		return -EINVAL;
	if (kstrtou32(buf, 0, &val) || val < 1 || val > max)
		return -EINVAL;
	WRITE_ONCE(*knobp, val);
	return 0;
}

/* Fences */

static const char *mcp_fence_driver_name(struct dma_fence *fence)
{
	return KBUILD_MODNAME;
}

static const char *mcp_fence_timeline_name(struct dma_fence *fence)
{
	return container_of(fence, struct mcp_dma_job, fence)->timeline;
}

/*
 * The last reference to a job is its fence's.  A sync_file can outlive
 * every fd of mcp.ko, so each job holds a module reference for the
 * fence's ops; rmmod waits for the last out-fence to go.
 */
static void mcp_fence_release(struct dma_fence *fence)
{
	struct mcp_dma_job *job = container_of(fence, struct mcp_dma_job, fence);

	kfree_rcu(job, fence.rcu);
	module_put(THIS_MODULE);
}

static const struct dma_fence_ops mcp_fence_ops = {
	.get_driver_name = mcp_fence_driver_name,
	.get_timeline_name = mcp_fence_timeline_name,
	.release = mcp_fence_release,
};

/* Context state */

static enum hrtimer_restart mcp_dma_timer_fn(struct hrtimer *timer);

static struct mcp_dma_ctx *mcp_dma_ctx_alloc(struct mcp_ctx *ctx)
{
	struct mcp_dev *mdev = ctx->mdev;
	struct mcp_dma_ctx *dctx;
	int ret = 0;

	dctx = kzalloc(sizeof(*dctx), GFP_KERNEL_ACCOUNT);
	if (!dctx)
		return ERR_PTR(-ENOMEM);
	dctx->charged = mcp_charged_alloc();
	if (!dctx->charged) {
		kfree(dctx);
		return ERR_PTR(-ENOMEM);
	}

	spin_lock_init(&dctx->lock);
	INIT_LIST_HEAD(&dctx->queue);
	INIT_LIST_HEAD(&dctx->waiters);
	hrtimer_init(&dctx->timer, CLOCK_MONOTONIC, HRTIMER_MODE_REL);
	dctx->timer.function = mcp_dma_timer_fn;
	dctx->engines[MCP_ENGINE_CPU] = mcp_engine_cpu();
	dctx->dev_index = -1;
	dctx->knobs = &mcp_host_dma_knobs;

	if (mdev) {
		dctx->dev_index = mdev->index;
		dctx->knobs = &mdev->dma_knobs;
		/* remove() sets @gone under this lock before the engine goes. */
		mutex_lock(&mdev->lock);
		if (mdev->gone) {
			ret = -ENODEV;
		} else if (mdev->engine) {
			mcp_engine_get(mdev->engine);
			dctx->engines[MCP_ENGINE_DEVICE] = mdev->engine;
		}
		mutex_unlock(&mdev->lock);
		if (!ret) {
			mcp_dev_get(mdev);
			dctx->mdev = mdev;
		}
	}
	if (ret) {
		mcp_charged_free(dctx->charged);
		kfree(dctx);
		return ERR_PTR(ret);
	}
	return dctx;
}

/* Process context: the device's release may sleep. */
static void mcp_dma_ctx_free(struct mcp_dma_ctx *dctx)
{
	if (dctx->engines[MCP_ENGINE_DEVICE])
		mcp_engine_put(dctx->engines[MCP_ENGINE_DEVICE]);
	if (dctx->mdev)
		mcp_dev_put(dctx->mdev);
	mcp_charged_free(dctx->charged);
	kfree(dctx);
}

/* The context's DMA state, made on first use. */
static struct mcp_dma_ctx *mcp_dma_ctx_get(struct mcp_ctx *ctx)
{
	/* Pairs with cmpxchg(): a state seen is fully initialised. */
	struct mcp_dma_ctx *dctx = smp_load_acquire(&ctx->dma);
	struct mcp_dma_ctx *old;

	if (dctx)
		return dctx;

	dctx = mcp_dma_ctx_alloc(ctx);
	if (IS_ERR(dctx))
		return dctx;
	old = cmpxchg(&ctx->dma, NULL, dctx);
	if (old) {
		mcp_dma_ctx_free(dctx);
		return old;
	}
	return dctx;
}

/* Job life cycle */

static void mcp_dma_job_fail_work(struct work_struct *work)
{
	struct mcp_dma_job *job = container_of(work, struct mcp_dma_job,
					       fail_work);

	mcp_dma_job_finish(job, job->error);
}

void mcp_dma_job_fail_async(struct mcp_dma_job *job, int error)
{
	job->error = error;
	INIT_WORK(&job->fail_work, mcp_dma_job_fail_work);
	queue_work(mcp_dma_wq, &job->fail_work);
}

struct mcp_charged *mcp_dma_job_charged(struct mcp_dma_job *job)
{
	return job->dctx->charged;
}

bool mcp_dma_job_cancelled(struct mcp_dma_job *job)
{
	return READ_ONCE(job->dctx->closing);
}

int mcp_dma_job_start(struct mcp_dma_job *job)
{
	job->start_ns = ktime_get_ns();
	if (job->error)
		return job->error;
	if (READ_ONCE(job->dctx->closing))
		return -ECANCELED;
	if (job->start_ns >= job->deadline_ns)
		return -ETIMEDOUT;
	return 0;
}

/*
 * Everything the job holds is released before its fence signals, so a
 * waiter that wakes up finds the BOs and counters as they will stay.
 * The last job of a closed context frees the context's state.
 */
void mcp_dma_job_finish(struct mcp_dma_job *job, int error)
{
	struct mcp_dma_ctx *dctx = job->dctx;
	struct mcp_dma_stats *stats = &dctx->stats[job->engine_index];
	unsigned long flags;
	bool last;

	hrtimer_cancel(&job->deadline_timer);
	mcp_bo_jobs_dec(job->src);
	mcp_bo_jobs_dec(job->dst);
	mcp_bo_put(job->src);
	mcp_bo_put(job->dst);
	job->src = NULL;
	job->dst = NULL;
	if (job->in_fence) {
		dma_fence_put(job->in_fence);
		job->in_fence = NULL;
	}

	if (error) {
		atomic64_inc(&stats->failed);
		if (error == -ETIMEDOUT)
			atomic64_inc(&stats->timed_out);
		dma_fence_set_error(&job->fence, error);
	} else {
		atomic64_inc(&stats->completed);
	}
	trace_mcp_dma_done(job->dev_index, job->engine_index, job->seqno,
			   job->length, error, job->submit_ns, job->start_ns,
			   ktime_get_ns());
	mcp_counter_dec(MCP_CTR_DMA_JOBS_IN_FLIGHT);

	dma_fence_signal(&job->fence);
	complete_all(&job->done);

	spin_lock_irqsave(&dctx->lock, flags);
	last = !--dctx->live && dctx->orphaned;
	spin_unlock_irqrestore(&dctx->lock, flags);
	if (last)
		mcp_dma_ctx_free(dctx);

	/* May drop the module's last reference (the fence's). */
	dma_fence_put(&job->fence);
}

/* Hands @batch to the jobs' engines, one kick per engine. */
static void mcp_dma_hand_over(struct list_head *batch)
{
	struct mcp_dma_job *job, *next;
	struct list_head split[MCP_DMA_ENGINES];
	struct mcp_engine *engines[MCP_DMA_ENGINES] = { };
	int i;

	for (i = 0; i < MCP_DMA_ENGINES; i++)
		INIT_LIST_HEAD(&split[i]);
	list_for_each_entry_safe(job, next, batch, link) {
		engines[job->engine_index] = job->engine;
		list_move_tail(&job->link, &split[job->engine_index]);
	}
	for (i = 0; i < MCP_DMA_ENGINES; i++)
		if (engines[i])
			engines[i]->submit(engines[i], &split[i]);
}

/*
 * Queue a job whose in-fence (if any) signalled; any context.  A job of
 * a closing context is handed over at once and cancelled by its engine.
 */
static void mcp_dma_job_enqueue(struct mcp_dma_job *job)
{
	struct mcp_dma_ctx *dctx = job->dctx;
	u32 depth = READ_ONCE(dctx->knobs->wc_depth);
	u32 timeout_us = READ_ONCE(dctx->knobs->wc_timeout_us);
	unsigned long flags;
	LIST_HEAD(batch);

	spin_lock_irqsave(&dctx->lock, flags);
	list_add_tail(&job->link, &dctx->queue);
	dctx->queued++;
	if (dctx->queued >= depth || dctx->closing) {
		list_splice_init(&dctx->queue, &batch);
		dctx->queued = 0;
		/* A running timer finds the queue empty or newer jobs. */
		hrtimer_try_to_cancel(&dctx->timer);
	} else if (dctx->queued == 1) {
		hrtimer_start(&dctx->timer,
			      ns_to_ktime((u64)timeout_us * NSEC_PER_USEC),
			      HRTIMER_MODE_REL);
	}
	spin_unlock_irqrestore(&dctx->lock, flags);

	mcp_dma_hand_over(&batch);
}

static enum hrtimer_restart mcp_dma_timer_fn(struct hrtimer *timer)
{
	struct mcp_dma_ctx *dctx = container_of(timer, struct mcp_dma_ctx,
						timer);
	unsigned long flags;
	LIST_HEAD(batch);

	spin_lock_irqsave(&dctx->lock, flags);
	list_splice_init(&dctx->queue, &batch);
	dctx->queued = 0;
	spin_unlock_irqrestore(&dctx->lock, flags);

	mcp_dma_hand_over(&batch);
	return HRTIMER_NORESTART;
}

/* Called with the in-fence's lock held, possibly in hard-irq context. */
static void mcp_dma_in_fence_cb(struct dma_fence *fence,
				struct dma_fence_cb *cb)
{
	struct mcp_dma_job *job = container_of(cb, struct mcp_dma_job, in_cb);
	unsigned long flags;

	if (fence->error)
		job->error = -ECANCELED;

	spin_lock_irqsave(&job->dctx->lock, flags);
	list_del_init(&job->link);
	spin_unlock_irqrestore(&job->dctx->lock, flags);

	mcp_dma_job_enqueue(job);
}

/*
 * The deadline passed while the job waits for its in-fence: whoever
 * removes the callback (this, the fence signalling, closing) owns it.
 */
static void mcp_dma_job_expire(struct mcp_dma_job *job)
{
	unsigned long flags;

	if (!dma_fence_remove_callback(job->in_fence, &job->in_cb))
		return;
	spin_lock_irqsave(&job->dctx->lock, flags);
	list_del_init(&job->link);
	spin_unlock_irqrestore(&job->dctx->lock, flags);
	mcp_dma_job_fail_async(job, -ETIMEDOUT);
}

static enum hrtimer_restart mcp_dma_deadline_fn(struct hrtimer *timer)
{
	mcp_dma_job_expire(container_of(timer, struct mcp_dma_job,
					deadline_timer));
	return HRTIMER_NORESTART;
}

/* The job is complete and valid: from here on it will finish. */
static void mcp_dma_job_commit(struct mcp_dma_ctx *dctx,
			       struct mcp_dma_job *job)
{
	unsigned long flags;
	int ret;

	spin_lock_irqsave(&dctx->lock, flags);
	dctx->live++;
	if (job->in_fence)
		list_add_tail(&job->link, &dctx->waiters);
	spin_unlock_irqrestore(&dctx->lock, flags);

	atomic64_inc(&dctx->stats[job->engine_index].submitted);
	mcp_counter_inc(MCP_CTR_DMA_JOBS_IN_FLIGHT);
	mcp_counter_inc(MCP_CTR_DMA_JOBS_TOTAL);
	trace_mcp_dma_submit(job->dev_index, job->engine_index, job->seqno,
			     job->length, job->submit_ns);

	if (job->in_fence) {
		/* Armed first: once the callback is in, the job may finish. */
		hrtimer_start(&job->deadline_timer,
			      ns_to_ktime(min_t(u64, job->deadline_ns,
						KTIME_MAX)),
			      HRTIMER_MODE_ABS);
		dma_fence_get(&job->fence);
		ret = dma_fence_add_callback(job->in_fence, &job->in_cb,
					     mcp_dma_in_fence_cb);
		if (!ret) {
			/* A timer that fired before found no callback. */
			if (ktime_get_ns() >= job->deadline_ns)
				mcp_dma_job_expire(job);
			dma_fence_put(&job->fence);
			return;
		}
		dma_fence_put(&job->fence);
		/* Signalled already. */
		spin_lock_irqsave(&dctx->lock, flags);
		list_del_init(&job->link);
		spin_unlock_irqrestore(&dctx->lock, flags);
		if (job->in_fence->error)
			job->error = -ECANCELED;
	}
	mcp_dma_job_enqueue(job);
}

/* The cpu engine copies through kernel mappings of both BOs. */
static int mcp_dma_job_map(struct mcp_dma_job *job)
{
	void *src = mcp_bo_vaddr(job->src);
	void *dst = mcp_bo_vaddr(job->dst);

	if (!src || !dst)
		return -ENOMEM;
	job->src_vaddr = src + job->src_offset;
	job->dst_vaddr = dst + job->dst_offset;
	/* The node of the destination's first page; an empty job anywhere. */
	job->node = mcp_bo_node_at(job->dst, job->dst_offset);
	return 0;
}

/* Inside the BO without overflowing: offset + length <= BO length. */
static bool mcp_dma_range_ok(struct mcp_bo *bo, u64 offset, u64 length)
{
	u64 bo_length = mcp_bo_length(bo);

	return offset <= bo_length && length <= bo_length - offset;
}

static int mcp_dma_validate(struct mcp_dma_submit *arg, struct mcp_bo *src,
			    struct mcp_bo *dst)
{
	if (!mcp_dma_range_ok(src, arg->src_offset, arg->length) ||
	    !mcp_dma_range_ok(dst, arg->dst_offset, arg->length))
		return -EINVAL;
	/* Both ranges are inside the BO, so the sums cannot overflow. */
	if (src == dst && arg->length &&
	    arg->src_offset < arg->dst_offset + arg->length &&
	    arg->dst_offset < arg->src_offset + arg->length)
		return -EINVAL;
	if (!mcp_bo_writable(dst))
		return -EACCES;
	return 0;
}

/* Wait killably for a synchronous job; it finishes alone when we stop. */
static int mcp_dma_wait(struct mcp_dma_job *job)
{
	u64 now = ktime_get_ns();
	u64 left = job->deadline_ns > now ? job->deadline_ns - now : 0;
	unsigned long timeout = MAX_SCHEDULE_TIMEOUT;
	long ret;

	/* A deadline far away waits as long as it takes. */
	if (left < MCP_DMA_SYNC_FOREVER_NS)
		timeout = nsecs_to_jiffies(left + MCP_DMA_SYNC_GRACE_NS) + 1;
	ret = wait_for_completion_killable_timeout(&job->done, timeout);
	if (ret < 0)
		return -EINTR;
	if (!ret)
		return -ETIMEDOUT;
	return job->fence.error;
}

int mcp_ioctl_dma_submit(struct file *file, void *karg)
{
	struct mcp_dma_submit_karg *sk = karg;
	struct mcp_dma_submit *arg = &sk->arg;
	struct mcp_ctx *ctx = file->private_data;
	struct mcp_bo *src = NULL, *dst = NULL;
	struct dma_fence *in_fence = NULL;
	struct sync_file *sync = NULL;
	bool async = arg->flags & MCP_DMA_ASYNC;
	struct mcp_dma_ctx *dctx;
	struct mcp_dma_job *job;
	u64 now, deadline;
	int fd = -1, ret;

	sk->out_file = NULL;
	if (arg->flags & ~MCP_DMA_FLAGS || arg->reserved)
		return -EINVAL;
	if (ctx->mdev && READ_ONCE(ctx->mdev->gone))
		return -ENODEV;

	dctx = mcp_dma_ctx_get(ctx);
	if (IS_ERR(dctx))
		return PTR_ERR(dctx);
	if (arg->engine >= MCP_DMA_ENGINES || !dctx->engines[arg->engine])
		return -ENOENT;

	src = mcp_bo_lookup(ctx, arg->src_handle);
	dst = mcp_bo_lookup(ctx, arg->dst_handle);
	if (!src || !dst) {
		ret = -ENOENT;
		goto err_put_bos;
	}
	ret = mcp_dma_validate(arg, src, dst);
	if (ret)
		goto err_put_bos;

	if (arg->flags & MCP_DMA_IN_FENCE) {
		in_fence = sync_file_get_fence(arg->in_fence);
		if (!in_fence) {
			ret = -EINVAL;
			goto err_put_bos;
		}
	}

	now = ktime_get_ns();
	if (!arg->deadline_ns) {
		deadline = now + READ_ONCE(dctx->knobs->job_timeout_ms) *
				 NSEC_PER_MSEC;
	} else if (arg->deadline_ns <= now) {
		ret = -ETIMEDOUT;
		goto err_put_in_fence;
	} else {
		/* An engine may be shared: no job holds it for longer. */
		deadline = min(arg->deadline_ns,
			       now + MCP_DMA_JOB_TIMEOUT_MS_MAX * NSEC_PER_MSEC);
	}

	if (async) {
		fd = get_unused_fd_flags(O_CLOEXEC);
		if (fd < 0) {
			ret = fd;
			goto err_put_in_fence;
		}
	}

	job = kzalloc(sizeof(*job), GFP_KERNEL_ACCOUNT);
	if (!job) {
		ret = -ENOMEM;
		goto err_put_fd;
	}
	job->dctx = dctx;
	job->engine_index = arg->engine;
	job->engine = dctx->engines[arg->engine];
	job->timeline = job->engine->name;
	job->src = src;
	job->dst = dst;
	job->src_offset = arg->src_offset;
	job->dst_offset = arg->dst_offset;
	job->length = arg->length;
	job->deadline_ns = deadline;
	job->in_fence = in_fence;
	job->node = NUMA_NO_NODE;
	job->dev_index = dctx->dev_index;
	job->submit_ns = now;
	INIT_LIST_HEAD(&job->link);
	INIT_LIST_HEAD(&job->in_cb.node);
	init_completion(&job->done);
	hrtimer_init(&job->deadline_timer, CLOCK_MONOTONIC, HRTIMER_MODE_ABS);
	job->deadline_timer.function = mcp_dma_deadline_fn;

	if (arg->engine == MCP_ENGINE_CPU) {
		ret = mcp_dma_job_map(job);
		if (ret)
			goto err_free_job;
		/* The copy runs in the caller's cgroups (mcp_charge.c). */
		ret = mcp_charged_prepare(dctx->charged, job->node);
		if (ret < 0)
			goto err_free_job;
		job->run_node = ret;
	}

	job->seqno = atomic64_inc_return(&dctx->seqno);
	spin_lock_init(&job->fence_lock);
	dma_fence_init(&job->fence, &mcp_fence_ops, &job->fence_lock,
		       dma_fence_context_alloc(1), job->seqno);
	/* From here the fence's release frees the job. */
	__module_get(THIS_MODULE);

	if (async) {
		sync = sync_file_create(&job->fence);
		if (!sync) {
			/* Nothing else holds the fence: this frees the job. */
			dma_fence_put(&job->fence);
			ret = -ENOMEM;
			goto err_put_fd;
		}
	}

	mcp_bo_jobs_inc(src);
	mcp_bo_jobs_inc(dst);
	arg->seqno = job->seqno;
	arg->out_fence = fd;
	sk->out_file = sync ? sync->file : NULL;

	if (async) {
		mcp_dma_job_commit(dctx, job);
		return 0;
	}

	dma_fence_get(&job->fence);
	mcp_dma_job_commit(dctx, job);
	ret = mcp_dma_wait(job);
	dma_fence_put(&job->fence);
	return ret;

err_free_job:
	kfree(job);
err_put_fd:
	if (fd >= 0)
		put_unused_fd(fd);
err_put_in_fence:
	if (in_fence)
		dma_fence_put(in_fence);
err_put_bos:
	if (src)
		mcp_bo_put(src);
	if (dst)
		mcp_bo_put(dst);
	return ret;
}

bool mcp_dma_has_device_engine(struct mcp_ctx *ctx)
{
	struct mcp_dma_ctx *dctx;

	if (!ctx->mdev)
		return false;
	dctx = mcp_dma_ctx_get(ctx);
	return !IS_ERR(dctx) && dctx->engines[MCP_ENGINE_DEVICE];
}

struct dma_fence *mcp_dma_submit_kernel(struct mcp_ctx *ctx, u32 engine,
					struct mcp_bo *src, u64 src_offset,
					struct mcp_bo *dst, u64 dst_offset,
					u64 length, u64 deadline_ns)
{
	struct mcp_dma_ctx *dctx;
	struct mcp_dma_job *job;

	/* The cpu engine's jobs need a worker made by their submitter. */
	if (engine != MCP_ENGINE_DEVICE)
		return ERR_PTR(-EINVAL);
	dctx = mcp_dma_ctx_get(ctx);
	if (IS_ERR(dctx))
		return ERR_CAST(dctx);
	if (!dctx->engines[engine])
		return ERR_PTR(-ENOENT);

	job = kzalloc(sizeof(*job), GFP_KERNEL_ACCOUNT);
	if (!job)
		return ERR_PTR(-ENOMEM);
	mcp_bo_get(src);
	mcp_bo_get(dst);
	job->dctx = dctx;
	job->engine_index = engine;
	job->engine = dctx->engines[engine];
	job->timeline = job->engine->name;
	job->src = src;
	job->dst = dst;
	job->src_offset = src_offset;
	job->dst_offset = dst_offset;
	job->length = length;
	job->deadline_ns = deadline_ns;
	job->node = NUMA_NO_NODE;
	job->dev_index = dctx->dev_index;
	job->submit_ns = ktime_get_ns();
	INIT_LIST_HEAD(&job->link);
	INIT_LIST_HEAD(&job->in_cb.node);
	init_completion(&job->done);
	hrtimer_init(&job->deadline_timer, CLOCK_MONOTONIC, HRTIMER_MODE_ABS);
	job->deadline_timer.function = mcp_dma_deadline_fn;

	job->seqno = atomic64_inc_return(&dctx->seqno);
	spin_lock_init(&job->fence_lock);
	dma_fence_init(&job->fence, &mcp_fence_ops, &job->fence_lock,
		       dma_fence_context_alloc(1), job->seqno);
	__module_get(THIS_MODULE);

	mcp_bo_jobs_inc(src);
	mcp_bo_jobs_inc(dst);
	dma_fence_get(&job->fence);
	mcp_dma_job_commit(dctx, job);
	return &job->fence;
}

void mcp_ioctl_dma_submit_publish(void *karg, bool copied)
{
	struct mcp_dma_submit_karg *sk = karg;

	if (!sk->out_file)
		return;
	if (copied) {
		fd_install(sk->arg.out_fence, sk->out_file);
	} else {
		/* The job runs on; only its fence fd is dropped. */
		fput(sk->out_file);
		put_unused_fd(sk->arg.out_fence);
	}
}

int mcp_ioctl_engine_info(struct file *file, void *karg)
{
	struct mcp_engine_info *info = karg;
	struct mcp_ctx *ctx = file->private_data;
	struct mcp_dma_stats *stats;
	struct mcp_engine *engine;
	struct mcp_dma_ctx *dctx;

	if (info->flags)
		return -EINVAL;
	if (ctx->mdev && READ_ONCE(ctx->mdev->gone))
		return -ENODEV;

	dctx = mcp_dma_ctx_get(ctx);
	if (IS_ERR(dctx))
		return PTR_ERR(dctx);
	if (info->engine >= MCP_DMA_ENGINES || !dctx->engines[info->engine])
		return -ENOENT;

	engine = dctx->engines[info->engine];
	stats = &dctx->stats[info->engine];
	info->node = engine->node;
	strscpy_pad(info->name, engine->name, sizeof(info->name));
	info->max_chunk = engine->max_chunk;
	info->inflight = engine->inflight;
	info->submitted = atomic64_read(&stats->submitted);
	info->completed = atomic64_read(&stats->completed);
	info->failed = atomic64_read(&stats->failed);
	info->timed_out = atomic64_read(&stats->timed_out);
	info->wc_depth = READ_ONCE(dctx->knobs->wc_depth);
	info->wc_timeout_us = READ_ONCE(dctx->knobs->wc_timeout_us);
	return 0;
}

/*
 * The fd is closing: cancel what has not reached an engine.  The rest
 * stays on its engine, which may be shared with other contexts and busy
 * with their jobs for as long as their deadlines allow: closing does not
 * wait for it.  The engine cancels such a job when it comes to start it,
 * and the last one to finish frees the state.
 */
void mcp_dma_ctx_fini(struct mcp_ctx *ctx)
{
	struct mcp_dma_ctx *dctx = ctx->dma;
	struct mcp_dma_job *job, *next;
	LIST_HEAD(cancelled);
	bool last;

	if (!dctx)
		return;

	spin_lock_irq(&dctx->lock);
	dctx->closing = true;
	list_splice_init(&dctx->queue, &cancelled);
	dctx->queued = 0;
	spin_unlock_irq(&dctx->lock);
	hrtimer_cancel(&dctx->timer);

	list_for_each_entry_safe(job, next, &cancelled, link) {
		list_del_init(&job->link);
		mcp_dma_job_finish(job, -ECANCELED);
	}

	/*
	 * In-fence waiters: whoever removes the callback owns the job.  A
	 * callback that ran first queues it, and closing cancels it.
	 */
	for (;;) {
		spin_lock_irq(&dctx->lock);
		job = list_first_entry_or_null(&dctx->waiters,
					       struct mcp_dma_job, link);
		if (job)
			list_del_init(&job->link);
		spin_unlock_irq(&dctx->lock);
		if (!job)
			break;
		if (dma_fence_remove_callback(job->in_fence, &job->in_cb))
			mcp_dma_job_finish(job, -ECANCELED);
	}

	ctx->dma = NULL;
	spin_lock_irq(&dctx->lock);
	dctx->orphaned = true;
	last = !dctx->live;
	spin_unlock_irq(&dctx->lock);
	if (last)
		mcp_dma_ctx_free(dctx);
}

int mcp_dma_init(void)
{
	int ret;

	/* Also the graph scheduler's, which starts after this. */
	ret = mcp_charge_init();
	if (ret)
		return ret;
	mcp_dma_wq = alloc_workqueue("mcp_dma", WQ_UNBOUND, 0);
	if (!mcp_dma_wq) {
		ret = -ENOMEM;
		goto err_charge_exit;
	}

	ret = mcp_engine_cpu_init();
	if (ret)
		goto err_destroy_wq;
	return 0;

err_destroy_wq:
	destroy_workqueue(mcp_dma_wq);
err_charge_exit:
	mcp_charge_exit();
	return ret;
}

void mcp_dma_exit(void)
{
	mcp_engine_cpu_exit();
	destroy_workqueue(mcp_dma_wq);
	/* Last: finishing a DMA job may free its context's workers. */
	mcp_charge_exit();
}
