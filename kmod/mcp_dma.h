/* SPDX-License-Identifier: GPL-2.0 */
/*
 * MCP (Model Control Protocol): DMA jobs and the engines that run them.
 * Shared by mcp_dma.c (jobs, fences, coalescing, the ioctls) and the
 * engines, mcp_engine_cpu.c and mcp_engine_edu.c.  Documentation/dma.rst
 * describes how they fit together.
 *
 * A job goes: submitted (ioctl) -> waiting for its in-fence -> queued on
 * its context (coalescing) -> handed to its engine -> run -> done.  Only
 * the engines finish jobs that reached them, always in process context
 * (finishing drops BO references, and the last one may sleep).
 *
 * Locks, outermost first (also in mcp_internal.h):
 *
 *   dma_fence.lock	of an in-fence, held around mcp_dma_in_fence_cb()
 *     mcp_dma_ctx.lock	spinlock, irq-safe: a context's queue, its
 *			in-fence waiters and its count of live jobs
 *     engine locks	spinlocks, irq-safe: an engine's own queue; never
 *			taken under mcp_dma_ctx.lock
 *
 * Each job's fence has a spinlock of its own (mcp_dma_job.fence_lock):
 * a fence can outlive its context in a sync_file.
 */
#ifndef _MCP_DMA_H
#define _MCP_DMA_H

#include <linux/completion.h>
#include <linux/dma-fence.h>
#include <linux/hrtimer.h>
#include <linux/kref.h>
#include <linux/kthread.h>
#include <linux/list.h>
#include <linux/spinlock.h>
#include <linux/types.h>
#include <linux/workqueue.h>

struct dentry;
struct mcp_bo;
struct mcp_dma_ctx;
struct mcp_dev;
struct mcp_engine;

/**
 * struct mcp_dma_job - one MCP_IOC_DMA_SUBMIT
 * @fence:	its out-fence; first member: the fence's refcount is the
 *		job's, and the fence's release frees the job
 * @fence_lock:	the fence's lock
 * @link:	in the context's queue or an engine's queue
 * @dctx:	the context's DMA state; alive while the job is unfinished
 * @engine:	the engine that runs it
 * @engine_index: MCP_ENGINE_*
 * @src:	source BO (a reference and a job count held until done)
 * @dst:	destination BO (the same)
 * @src_vaddr:	cpu engine: kernel address of the source range
 * @dst_vaddr:	cpu engine: kernel address of the destination range
 * @node:	cpu engine: the node the destination range is on
 * @run_node:	cpu engine: the node of the submitter's worker that runs
 *		it (mcp_charged_prepare())
 * @cpu_work:	cpu engine: runs it on that worker
 * @src_offset:	byte offset in @src
 * @dst_offset:	byte offset in @dst
 * @length:	bytes to copy
 * @deadline_ns: absolute ktime_get_ns() by which it must be done
 * @in_fence:	fence waited for before it is queued; NULL when none
 * @in_cb:	callback on @in_fence
 * @deadline_timer: fails the job at its deadline while it waits for
 *		@in_fence
 * @error:	set before it runs: fail with this instead of running
 * @done:	completed when the fence signals (killable waits)
 * @fail_work:	finishes a job failed where sleeping is not allowed
 * @seqno:	its sequence number on the context, from 1
 * @timeline:	its engine's name, for the fence (the engine may go first)
 * @dev_index:	the context's device index, -1 for the host context
 * @submit_ns:	ktime_get_ns() at submit
 * @start_ns:	when its engine started it, 0 until then
 */
struct mcp_dma_job {
	struct dma_fence fence;
	spinlock_t fence_lock;	/* the fence's */
	struct list_head link;
	struct mcp_dma_ctx *dctx;
	struct mcp_engine *engine;
	u32 engine_index;
	struct mcp_bo *src;
	struct mcp_bo *dst;
	void *src_vaddr;
	void *dst_vaddr;
	int node;
	int run_node;
	struct kthread_work cpu_work;
	u64 src_offset;
	u64 dst_offset;
	u64 length;
	u64 deadline_ns;
	struct dma_fence *in_fence;
	struct dma_fence_cb in_cb;
	struct hrtimer deadline_timer;
	int error;
	struct completion done;
	struct work_struct fail_work;
	u64 seqno;
	const char *timeline;
	int dev_index;
	u64 submit_ns;
	u64 start_ns;
};

/**
 * struct mcp_engine - an engine jobs are handed to
 * @ref:	device engines: the backend's reference and one per context
 *		that uses it; the cpu engine is never released
 * @release:	frees a device engine when @ref drops to zero
 * @name:	"cpu" or the backend's name; also the fences' timeline name
 * @node:	NUMA node it runs on, NUMA_NO_NODE for any
 * @max_chunk:	bytes per hardware transfer, 0 for no limit
 * @inflight:	jobs it runs at once
 * @submit:	takes every job on @jobs (leaving it empty) and kicks the
 *		engine once; any context, with any lock of mcp_dma.c released
 */
struct mcp_engine {
	struct kref ref;
	void (*release)(struct kref *ref);
	const char *name;
	int node;
	u32 max_chunk;
	u32 inflight;
	void (*submit)(struct mcp_engine *engine, struct list_head *jobs);
};

/*
 * mcp_dma.c, for the engines.  mcp_dma_job_start() is called when an
 * engine picks a job up: it returns the error to fail the job with
 * (cancelled, failed in-fence, deadline passed) or 0 to run it;
 * mcp_dma_job_cancelled() tells a long-running job its fd is closing.
 * mcp_dma_job_finish() signals the fence with @error (0 on success) and
 * releases what the job holds; process context.  mcp_dma_job_fail_async()
 * does the same from any context through a work item.
 */
int mcp_dma_job_start(struct mcp_dma_job *job);
bool mcp_dma_job_cancelled(struct mcp_dma_job *job);
struct mcp_charged *mcp_dma_job_charged(struct mcp_dma_job *job);
void mcp_dma_job_finish(struct mcp_dma_job *job, int error);
void mcp_dma_job_fail_async(struct mcp_dma_job *job, int error);

/* mcp_engine_cpu.c: jobs on the submitter's charged workers (mcp_charge.c) */
int mcp_engine_cpu_init(void);
void mcp_engine_cpu_exit(void);
struct mcp_engine *mcp_engine_cpu(void);
void mcp_engine_cpu_debugfs_init(struct dentry *dir);

/*
 * mcp_engine_edu.c: edu's DMA engine.  Created by the backend's probe,
 * destroyed by its remove (after bus mastering is off and the interrupts
 * are freed): jobs queued or running then fail with -ENODEV.
 */
struct mcp_engine *mcp_engine_edu_create(struct mcp_dev *mdev);
void mcp_engine_edu_destroy(struct mcp_engine *engine);
void mcp_engine_edu_irq(struct mcp_engine *engine);

static inline void mcp_engine_get(struct mcp_engine *engine)
{
	kref_get(&engine->ref);
}

static inline void mcp_engine_put(struct mcp_engine *engine)
{
	kref_put(&engine->ref, engine->release);
}

#endif /* _MCP_DMA_H */
