// SPDX-License-Identifier: GPL-2.0
/*
 * MCP (Model Control Protocol): edu's DMA engine.
 *
 * edu moves up to 4 KiB (2 KiB here, see MCP_EDU_DMA_BUF_SIZE) between
 * RAM and its buffer at device address 0x40000 per transfer: source
 * 0x80, destination 0x88, count 0x90, command 0x98 (bit 0 start, bit 1
 * edu -> RAM, bit 2 interrupt 0x100 when done).  A copy RAM -> RAM goes
 * source -> buffer -> destination, chunk by chunk, each side split where
 * the BO's bus addresses stop being contiguous.  One transfer is in
 * flight; a kernel thread per device runs the jobs and sleeps until the
 * interrupt (mcp_engine_edu_irq()) or, when one is lost, polls the start
 * bit every MCP_EDU_POLL.
 *
 * A transfer still running at the job's deadline is aborted: the command
 * is cleared and the engine waits, bounded, for the device to let go of
 * the memory; the job fails with -ETIMEDOUT and later jobs run.  A device
 * that never lets go wedges the engine: its BOs stay referenced until the
 * device is removed (with bus mastering off) and later jobs fail -EIO.
 *
 * Locks: mcp_edu_engine.lock, irq-safe, protects @queue and @dead.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/delay.h>
#include <linux/io.h>
#include <linux/io-64-nonatomic-lo-hi.h>
#include <linux/kthread.h>
#include <linux/ktime.h>
#include <linux/pci.h>
#include <linux/slab.h>
#include <linux/wait.h>

#include "mcp_ctx.h"
#include "mcp_dma.h"
#include "mcp_internal.h"
#include "mcp_pci.h"

#define MCP_EDU_REG_DMA_SRC	0x80
#define MCP_EDU_REG_DMA_DST	0x88
#define MCP_EDU_REG_DMA_COUNT	0x90
#define MCP_EDU_REG_DMA_CMD	0x98
#define MCP_EDU_REG_IRQ_ACK	0x64

#define MCP_EDU_DMA_START	BIT(0)
#define MCP_EDU_DMA_TO_RAM	BIT(1)
#define MCP_EDU_DMA_IRQ		BIT(2)
#define MCP_EDU_IRQ_DMA		0x100

#define MCP_EDU_DMA_BUF		0x40000
/*
 * The buffer is 4 KiB, but QEMU up to at least 7.2 rejects (hw_error(),
 * which kills the VM) a transfer that reaches its last byte; half of it
 * keeps every piece inside one page of a page-aligned BO.
 */
#define MCP_EDU_DMA_BUF_SIZE	2048

/* Without its interrupt, how often the start bit is polled. */
#define MCP_EDU_POLL		(HZ / 10)
/* How long an aborted transfer may take to let go of the memory. */
#define MCP_EDU_ABORT_MS	2000

/**
 * struct mcp_edu_engine - edu's DMA engine on one device
 * @engine:	what mcp_dma.c sees
 * @pdev:	the device, for messages
 * @regs:	BAR0, mapped by the backend
 * @dma_mask:	the device's DMA mask
 * @lock:	protects @queue and @dead
 * @queue:	handed over, not started
 * @dead:	the device is being removed: nothing more runs
 * @wq:	the thread waits here for jobs
 * @dma_irq:	completed by the DMA interrupt
 * @thread:	runs the jobs, one transfer at a time
 * @wedged:	a transfer could not be stopped; later jobs fail -EIO
 * @held:	the BOs of that transfer, kept until the device is removed
 */
struct mcp_edu_engine {
	struct mcp_engine engine;
	struct pci_dev *pdev;
	void __iomem *regs;
	u64 dma_mask;
	spinlock_t lock;	/* protects @queue and @dead */
	struct list_head queue;
	bool dead;
	wait_queue_head_t wq;
	struct completion dma_irq;
	struct task_struct *thread;
	bool wedged;
	struct mcp_bo *held[2];
};

static struct mcp_edu_engine *to_edu(struct mcp_engine *engine)
{
	return container_of(engine, struct mcp_edu_engine, engine);
}

void mcp_engine_edu_irq(struct mcp_engine *engine)
{
	complete(&to_edu(engine)->dma_irq);
}

/*
 * Clear the command and wait for the device to finish with the memory.
 * edu ignores writes while a transfer runs; an engine that can stop
 * would stop here.  Return: -ETIMEDOUT, or -EBUSY when it never let go.
 */
static int mcp_edu_abort(struct mcp_edu_engine *eng)
{
	unsigned long until = jiffies + msecs_to_jiffies(MCP_EDU_ABORT_MS);
	u32 cmd;

	iowrite32(0, eng->regs + MCP_EDU_REG_DMA_CMD);
	for (;;) {
		cmd = ioread32(eng->regs + MCP_EDU_REG_DMA_CMD);
		if (cmd == ~0U || READ_ONCE(eng->dead))
			return -ENODEV;
		if (!(cmd & MCP_EDU_DMA_START))
			break;
		if (time_after(jiffies, until))
			return -EBUSY;
		usleep_range(10000, 20000);
	}
	iowrite32(MCP_EDU_IRQ_DMA, eng->regs + MCP_EDU_REG_IRQ_ACK);
	return -ETIMEDOUT;
}

/* One transfer of 1 .. MCP_EDU_DMA_BUF_SIZE bytes, done by @deadline_ns. */
static int mcp_edu_transfer(struct mcp_edu_engine *eng, u64 src, u64 dst,
			    u32 count, u32 dir, u64 deadline_ns)
{
	unsigned long timeout;
	u64 now;
	u32 cmd;

	reinit_completion(&eng->dma_irq);
	writeq(src, eng->regs + MCP_EDU_REG_DMA_SRC);
	writeq(dst, eng->regs + MCP_EDU_REG_DMA_DST);
	writeq(count, eng->regs + MCP_EDU_REG_DMA_COUNT);
	iowrite32(MCP_EDU_DMA_START | MCP_EDU_DMA_IRQ | dir,
		  eng->regs + MCP_EDU_REG_DMA_CMD);

	for (;;) {
		cmd = ioread32(eng->regs + MCP_EDU_REG_DMA_CMD);
		if (cmd == ~0U || READ_ONCE(eng->dead))
			return -ENODEV;
		if (!(cmd & MCP_EDU_DMA_START))
			return 0;
		now = ktime_get_ns();
		if (now >= deadline_ns)
			return mcp_edu_abort(eng);
		timeout = min_t(unsigned long, MCP_EDU_POLL,
				nsecs_to_jiffies(deadline_ns - now) + 1);
		/* A late interrupt of an aborted transfer: wait again. */
		if (wait_for_completion_timeout(&eng->dma_irq, timeout))
			reinit_completion(&eng->dma_irq);
	}
}

/*
 * Move @len bytes (at most one buffer) between @bo at @offset and the
 * start of edu's buffer, in pieces the BO's bus addresses allow.
 */
static int mcp_edu_move(struct mcp_edu_engine *eng, struct mcp_bo *bo,
			u64 offset, u64 len, bool to_ram, u64 deadline_ns)
{
	u64 pos, n, contig;
	dma_addr_t addr;
	int ret;

	for (pos = 0; pos < len; pos += n) {
		ret = mcp_bo_dma_addr(bo, offset + pos, &addr, &contig);
		if (ret)
			return ret;
		n = min(len - pos, contig);
		/* edu truncates addresses to its mask: never let it. */
		if (!n || addr + n - 1 > eng->dma_mask)
			return -EIO;
		if (to_ram)
			ret = mcp_edu_transfer(eng, MCP_EDU_DMA_BUF + pos, addr,
					       n, MCP_EDU_DMA_TO_RAM,
					       deadline_ns);
		else
			ret = mcp_edu_transfer(eng, addr, MCP_EDU_DMA_BUF + pos,
					       n, 0, deadline_ns);
		if (ret)
			return ret;
	}
	return 0;
}

static int mcp_edu_copy(struct mcp_edu_engine *eng, struct mcp_dma_job *job)
{
	u64 done, n;
	int ret = 0;

	mcp_bo_sync_for_device(job->src, DMA_TO_DEVICE);
	mcp_bo_sync_for_device(job->dst, DMA_FROM_DEVICE);
	for (done = 0; done < job->length; done += n) {
		/* Closing the fd ends a long copy between chunks. */
		if (mcp_dma_job_cancelled(job)) {
			ret = -ECANCELED;
			break;
		}
		n = min_t(u64, job->length - done, MCP_EDU_DMA_BUF_SIZE);
		ret = mcp_edu_move(eng, job->src, job->src_offset + done, n,
				   false, job->deadline_ns);
		if (ret)
			break;
		ret = mcp_edu_move(eng, job->dst, job->dst_offset + done, n,
				   true, job->deadline_ns);
		if (ret)
			break;
	}
	mcp_bo_sync_for_cpu(job->dst, DMA_FROM_DEVICE);
	return ret;
}

static void mcp_edu_run(struct mcp_edu_engine *eng, struct mcp_dma_job *job)
{
	int ret = mcp_dma_job_start(job);

	if (!ret && eng->wedged)
		ret = -EIO;
	if (!ret && job->length)
		ret = mcp_edu_copy(eng, job);
	if (ret == -EBUSY) {
		/* The device may still write there: keep the memory. */
		pci_err(eng->pdev, "DMA transfer does not stop; the engine stays off until the device is removed\n");
		eng->wedged = true;
		mcp_bo_get(job->src);
		mcp_bo_get(job->dst);
		eng->held[0] = job->src;
		eng->held[1] = job->dst;
		ret = -ETIMEDOUT;
	}
	mcp_dma_job_finish(job, ret);
}

static int mcp_edu_thread(void *data)
{
	struct mcp_edu_engine *eng = data;
	struct mcp_dma_job *job;

	while (!kthread_should_stop()) {
		wait_event_idle(eng->wq,
				!list_empty(&eng->queue) || kthread_should_stop());
		spin_lock_irq(&eng->lock);
		job = list_first_entry_or_null(&eng->queue,
					       struct mcp_dma_job, link);
		if (job)
			list_del_init(&job->link);
		spin_unlock_irq(&eng->lock);
		if (job)
			mcp_edu_run(eng, job);
	}
	return 0;
}

static void mcp_edu_submit(struct mcp_engine *engine, struct list_head *jobs)
{
	struct mcp_edu_engine *eng = to_edu(engine);
	struct mcp_dma_job *job, *next;
	unsigned long flags;

	spin_lock_irqsave(&eng->lock, flags);
	if (!eng->dead) {
		list_splice_tail_init(jobs, &eng->queue);
		/* Under the lock: the jobs may finish and free us at once. */
		wake_up(&eng->wq);
	}
	spin_unlock_irqrestore(&eng->lock, flags);

	list_for_each_entry_safe(job, next, jobs, link) {
		list_del_init(&job->link);
		mcp_dma_job_fail_async(job, -ENODEV);
	}
}

static void mcp_edu_release(struct kref *ref)
{
	kfree(container_of(ref, struct mcp_edu_engine, engine.ref));
}

struct mcp_engine *mcp_engine_edu_create(struct mcp_dev *mdev)
{
	int node = dev_to_node(&mdev->pdev->dev);
	/* A device on a memoryless node: its state on the nearest memory. */
	int mem_node = mcp_mem_node(node);
	struct mcp_edu_engine *eng;
	int ret;

	eng = kzalloc_node(sizeof(*eng), GFP_KERNEL, mem_node);
	if (!eng)
		return ERR_PTR(-ENOMEM);

	kref_init(&eng->engine.ref);
	eng->engine.release = mcp_edu_release;
	eng->engine.name = mdev->backend->name;
	eng->engine.node = node;
	eng->engine.max_chunk = MCP_EDU_DMA_BUF_SIZE;
	eng->engine.inflight = 1;
	eng->engine.submit = mcp_edu_submit;
	eng->pdev = mdev->pdev;
	eng->regs = mdev->regs;
	eng->dma_mask = mdev->dma_mask;
	spin_lock_init(&eng->lock);
	INIT_LIST_HEAD(&eng->queue);
	init_waitqueue_head(&eng->wq);
	init_completion(&eng->dma_irq);

	eng->thread = kthread_create_on_node(mcp_edu_thread, eng, mem_node,
					     "mcp%u_dma", mdev->index);
	if (IS_ERR(eng->thread)) {
		ret = PTR_ERR(eng->thread);
		kfree(eng);
		return ERR_PTR(ret);
	}
	wake_up_process(eng->thread);
	return &eng->engine;
}

/*
 * Bus mastering is off and the interrupts are freed: stop the thread
 * (a transfer it waits for fails -ENODEV), fail what is queued, and let
 * the memory of a wedged transfer go.
 */
void mcp_engine_edu_destroy(struct mcp_engine *engine)
{
	struct mcp_edu_engine *eng = to_edu(engine);
	struct mcp_dma_job *job, *next;
	LIST_HEAD(doomed);
	int i;

	spin_lock_irq(&eng->lock);
	eng->dead = true;
	list_splice_init(&eng->queue, &doomed);
	spin_unlock_irq(&eng->lock);
	complete(&eng->dma_irq);
	kthread_stop(eng->thread);

	list_for_each_entry_safe(job, next, &doomed, link) {
		list_del_init(&job->link);
		mcp_dma_job_start(job);
		mcp_dma_job_finish(job, -ENODEV);
	}
	for (i = 0; i < ARRAY_SIZE(eng->held); i++)
		if (eng->held[i])
			mcp_bo_put(eng->held[i]);
	mcp_engine_put(engine);
}
