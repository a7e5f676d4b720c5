/* SPDX-License-Identifier: GPL-2.0 */
/*
 * MCP (Model Control Protocol): contexts, buffer objects and DMA jobs.
 *
 * Every open /dev/mcp file (the host context) and every device fd is a
 * struct mcp_ctx, its file->private_data.  A context owns the handles of
 * its buffer objects (mcp_bo.c) and the DMA jobs it submitted
 * (mcp_dma.c); the engines that run the jobs are mcp_engine_*.c.
 *
 * Lifetime: a BO is refcounted.  The handle table holds one reference,
 * every job that uses it, every VMA that maps it and its exported dma-buf
 * one more.  Destroying a handle drops only the table's.
 *
 * Locks, outermost first (also in mcp_internal.h):
 *
 *   mcp_ctx.lock	mutex: the handle table.  Never held across
 *			copy_to_user()/copy_from_user() or a wait for a job.
 *   mcp_dma_ctx.lock	spinlock (mcp_dma.c): the context's submission
 *			queue; nothing sleeps under it.
 */
#ifndef _MCP_CTX_H
#define _MCP_CTX_H

#include <linux/bits.h>
#include <linux/dma-direction.h>
#include <linux/fs.h>
#include <linux/mm.h>
#include <linux/mutex.h>
#include <linux/types.h>
#include <linux/xarray.h>

#include <linux/mcp.h>

struct mcp_dev;
struct mcp_bo;
struct mcp_dma_ctx;
struct mcp_ioctl_desc;
struct mcp_sched;
struct vm_area_struct;

/**
 * struct mcp_ctx - one open /dev/mcp file or device fd
 * @mdev:	the device (a reference held), NULL for the host context
 * @lock:	see the lock order above
 * @bos:	handle -> struct mcp_bo *, handles from 1
 * @next_bo:	the next BO handle tried: given out cyclically, so that a
 *		worker job's handle names one BO
 * @dma:	DMA state, owned by mcp_dma.c; NULL until the first use
 * @graphs:	handle -> struct mcp_graph *, handles from 1 (mcp_graph.c)
 * @next_graph: the next graph handle tried: given out cyclically, so
 *		that a worker's (graph, node) names one graph (uapi
 *		struct mcp_worker_chain)
 * @sched:	graph executions and workers, owned by mcp_sched.c; NULL
 *		until the first use
 * @client_id:	unique among all contexts since the module was loaded:
 *		drm-client-id of the fd's fdinfo (mcp_fdinfo.c)
 */
struct mcp_ctx {
	struct mcp_dev *mdev;
	struct mutex lock;	/* see the lock order above */
	struct xarray bos;
	u32 next_bo;
	struct mcp_dma_ctx *dma;
	struct xarray graphs;
	u32 next_graph;
	struct mcp_sched *sched;
	u64 client_id;
};

/*
 * mmap offsets of BOs on a context's fd: MCP_BO_MMAP_BASE | handle << 32,
 * far above the BAR regions of mcp_devfile.c (below 1 << 44); each BO
 * has a 4 GiB window, the largest BO.  mcp_ctx_mmap() takes these.
 */
#define MCP_BO_MMAP_SHIFT	32
#define MCP_BO_MMAP_BASE	BIT_ULL(60)
#define MCP_BO_MMAP_PGOFF	(MCP_BO_MMAP_BASE >> PAGE_SHIFT)

/* mcp_ctx.c: creation, teardown, and the ioctls every context accepts */
struct mcp_ctx *mcp_ctx_create(struct mcp_dev *mdev);
void mcp_ctx_destroy(struct mcp_ctx *ctx);
const struct mcp_ioctl_desc *mcp_ctx_ioctl_desc(unsigned int cmd);
int mcp_ctx_mmap(struct mcp_ctx *ctx, struct vm_area_struct *vma);

/*
 * mcp_fdinfo.c: /proc/PID/fdinfo of a context's fd, in the DRM client
 * usage format (Documentation/buffers.rst); .show_fdinfo of both fds.
 */
struct seq_file;
void mcp_ctx_show_fdinfo(struct seq_file *m, struct file *file);

/*
 * mcp_bo.c: buffer objects.  What the DMA engines need of a BO; every
 * call needs a reference held.  All may sleep (mcp_bo_put() frees, unpins
 * and unmaps): never call them from atomic context.
 */
struct mcp_bo *mcp_bo_lookup(struct mcp_ctx *ctx, u32 handle);
void mcp_bo_get(struct mcp_bo *bo);
void mcp_bo_put(struct mcp_bo *bo);
u64 mcp_bo_length(const struct mcp_bo *bo);
bool mcp_bo_writable(const struct mcp_bo *bo);
/*
 * Kernel mapping of the whole BO, made on first use and valid while a
 * reference is held; NULL when it cannot be made (no memory, or an
 * imported dma-buf whose exporter offers no kernel mapping).
 */
void *mcp_bo_vaddr(struct mcp_bo *bo);
/*
 * NUMA node of the memory at @offset, NUMA_NO_NODE when unknown (past the
 * end, a coherent BO on several nodes, an import that is not RAM we know).
 * Call after mcp_bo_vaddr() succeeded, for an import.
 */
int mcp_bo_node_at(struct mcp_bo *bo, u64 offset);
/*
 * Bus address of @offset for the context's device and the bytes that are
 * contiguous from there; -ENODEV on the host context.
 */
int mcp_bo_dma_addr(struct mcp_bo *bo, u64 offset, dma_addr_t *addr,
		    u64 *contig);
/* Cache maintenance around a device's DMA; no-ops for coherent BOs. */
void mcp_bo_sync_for_device(struct mcp_bo *bo, enum dma_data_direction dir);
void mcp_bo_sync_for_cpu(struct mcp_bo *bo, enum dma_data_direction dir);
/* Jobs in flight that use @bo, for MCP_IOC_BO_INFO. */
void mcp_bo_jobs_inc(struct mcp_bo *bo);
void mcp_bo_jobs_dec(struct mcp_bo *bo);

/*
 * mcp_dma.c: jobs, fences, coalescing.  mcp_dma_ctx_fini() runs at
 * context teardown before the handle table is emptied; it waits for or
 * cancels the context's jobs and returns when none is left.
 */
int mcp_ioctl_engine_info(struct file *file, void *karg);
int mcp_ioctl_dma_submit(struct file *file, void *karg);
void mcp_dma_ctx_fini(struct mcp_ctx *ctx);
/* The context has a device DMA engine (graph nodes on ENGINE_DEVICE). */
bool mcp_dma_has_device_engine(struct mcp_ctx *ctx);
/*
 * A copy of @length bytes between two BOs for the kernel (graph COPY
 * nodes on a device engine), run as a DMA job of @ctx on @engine by
 * @deadline_ns.  Only MCP_ENGINE_DEVICE (-EINVAL else): a cpu engine job
 * runs on a worker its submitter made (mcp_charge.c), and the kernel is
 * not one.  Takes its own references on the BOs.
 * Return: the job's fence with a reference for the caller, or an ERR_PTR.
 */
struct dma_fence *mcp_dma_submit_kernel(struct mcp_ctx *ctx, u32 engine,
					struct mcp_bo *src, u64 src_offset,
					struct mcp_bo *dst, u64 dst_offset,
					u64 length, u64 deadline_ns);
int mcp_dma_init(void);
void mcp_dma_exit(void);

/*
 * DMA_SUBMIT's kernel argument carries the out-fence's sync_file, whose
 * fd is installed by the publish hook once the fd number reached the
 * caller; NULL for synchronous jobs.
 */
struct mcp_dma_submit_karg {
	struct mcp_dma_submit arg;
	struct file *out_file;
};

void mcp_ioctl_dma_submit_publish(void *karg, bool copied);

/**
 * struct mcp_dma_knobs - coalescing and time-out settings of a context
 * @wc_depth:		jobs queued before they are handed to the engine
 *			together; 1: each at once
 * @wc_timeout_us:	longest a queued job waits for the others
 * @job_timeout_ms:	deadline of a job submitted without one
 *
 * One set per device (sysfs mcp/ of the PCI device) and one for the host
 * context (/sys/class/misc/mcp/dma/); read at each submission.
 */
struct mcp_dma_knobs {
	u32 wc_depth;
	u32 wc_timeout_us;
	u32 job_timeout_ms;
};

enum mcp_dma_knob {
	MCP_DMA_KNOB_WC_DEPTH,
	MCP_DMA_KNOB_WC_TIMEOUT_US,
	MCP_DMA_KNOB_JOB_TIMEOUT_MS,
};

extern struct mcp_dma_knobs mcp_host_dma_knobs;
void mcp_dma_knobs_init(struct mcp_dma_knobs *knobs);
u32 mcp_dma_knob_get(const struct mcp_dma_knobs *knobs, enum mcp_dma_knob knob,
		     u32 *def, u32 *max);
/* sysfs show and store of one knob; store validates the range. */
ssize_t mcp_dma_knob_show(const struct mcp_dma_knobs *knobs,
			  enum mcp_dma_knob knob, char *buf);
int mcp_dma_knob_store(struct mcp_dma_knobs *knobs, enum mcp_dma_knob knob,
		       const char *buf);

#endif /* _MCP_CTX_H */
