/* SPDX-License-Identifier: GPL-2.0 */
/*
 * MCP (Model Control Protocol): buffer objects, private to mcp_ctx.c and
 * mcp_bo.c (mcp_main.c sizes its ioctl buffer with the kargs below).  The
 * DMA side sees only the calls of mcp_ctx.h.
 *
 * A BO is its memory (kernel pages, pinned user pages, or an imported
 * dma-buf), its kernel mapping once asked for, and, on a device context,
 * its DMA mapping for that device.  It holds a reference to the device so
 * that mapping can always be undone (Documentation/buffers.rst).
 *
 * Locks: mcp_bo.lock, a mutex, guards the kernel mapping; taken after
 * mcp_ctx.lock.  An imported BO's lock is a class of its own: it is held
 * across dma_buf_vmap(), which takes the dma-buf's own lock and, for a
 * dma-buf MCP exported, the exporting BO's lock inside that
 * (mcp_dmabuf_vmap()): imported mcp_bo.lock -> dma_buf.lock -> exported
 * mcp_bo.lock.
 */
#ifndef _MCP_BO_H
#define _MCP_BO_H

#include <linux/dma-buf.h>
#include <linux/iosys-map.h>
#include <linux/kref.h>
#include <linux/mm_types.h>
#include <linux/mutex.h>
#include <linux/scatterlist.h>
#include <linux/types.h>

#include "mcp_ctx.h"

/* Handles fit in 24 bits so that every one has its own mmap window. */
#define MCP_BO_HANDLE_MAX	((1U << 24) - 1)

/* Page offset of a mapping inside its BO's 4 GiB mmap window. */
#define MCP_BO_MMAP_PGMASK	((1UL << (MCP_BO_MMAP_SHIFT - PAGE_SHIFT)) - 1)

/**
 * struct mcp_bo - one buffer object
 * @ref:	handle table, jobs, VMAs, exported dma-buf
 * @kind:	enum mcp_bo_kind
 * @flags:	MCP_BO_* or MCP_BO_USERPTR_* it was made with
 * @length:	bytes, a multiple of PAGE_SIZE
 * @node:	NUMA node of the memory, NUMA_NO_NODE when mixed or unknown
 * @mdev:	device it is DMA-mapped for (a reference), NULL on the host
 * @dir:	direction of the DMA mapping
 * @npages:	entries in @pages
 * @pages:	kernel BOs but coherent ones, and user-pointer BOs: the
 *		pages, kvmalloc()ed
 * @sgt:	streaming DMA mapping of @pages for @mdev, or NULL
 * @coherent:	coherent DMA memory for @mdev: kernel address
 * @coherent_dma: and bus address
 * @mm:		user-pointer BOs: the mm charged for the pinned pages
 * @user:	coherent BOs: the user charged for them, NULL when the
 *		creator had CAP_IPC_LOCK
 * @charged:	pages charged to @mm's or @user's RLIMIT_MEMLOCK
 * @dmabuf:	imported BOs: the dma-buf (a file reference)
 * @read_only:	imported BOs: the dma-buf's file is not open for writing;
 *		never written through MCP (mcp_bo_writable())
 * @attach:	imported BOs on a device context: the attachment
 * @import_sgt:	and its mapping
 * @lock:	guards @vaddr and @map
 * @vaddr:	kernel mapping, made on first use
 * @map:	imported BOs: dma_buf_vmap() result
 * @jobs:	DMA jobs in flight that use it
 */
struct mcp_bo {
	struct kref ref;
	u32 kind;
	u32 flags;
	u64 length;
	int node;
	struct mcp_dev *mdev;
	enum dma_data_direction dir;
	unsigned long npages;
	struct page **pages;
	struct sg_table *sgt;
	void *coherent;
	dma_addr_t coherent_dma;
	struct mm_struct *mm;
	struct user_struct *user;
	unsigned long charged;
	struct dma_buf *dmabuf;
	bool read_only;
	struct dma_buf_attachment *attach;
	struct sg_table *import_sgt;
	struct mutex lock;	/* see above */
	void *vaddr;
	struct iosys_map map;
	atomic_t jobs;
};

/*
 * Kernel copies of the arguments whose result is published after the copy
 * back (mcp_ioctl_desc.publish): the handle or fd appears only then.
 */
struct mcp_bo_create_karg {
	struct mcp_bo_create arg;
	struct mcp_ctx *ctx;
	struct mcp_bo *bo;
};

struct mcp_bo_userptr_karg {
	struct mcp_bo_userptr arg;
	struct mcp_ctx *ctx;
	struct mcp_bo *bo;
};

struct mcp_bo_import_karg {
	struct mcp_bo_import arg;
	struct mcp_ctx *ctx;
	struct mcp_bo *bo;
};

struct mcp_bo_export_karg {
	struct mcp_bo_export arg;
	struct dma_buf *dmabuf;
};

/* mcp_bo.c: making BOs; each returns the BO with one reference */
struct mcp_bo *mcp_bo_create_kernel(struct mcp_dev *mdev, u64 length,
				    u32 flags, int node);
struct mcp_bo *mcp_bo_create_userptr(struct mcp_dev *mdev, u64 addr,
				     u64 length, u32 flags);
struct mcp_bo *mcp_bo_create_import(struct mcp_dev *mdev, int fd);
struct dma_buf *mcp_bo_export(struct mcp_bo *bo);
int mcp_bo_mmap(struct mcp_bo *bo, struct vm_area_struct *vma);
int mcp_bo_mmap_import(struct mcp_bo *bo, struct vm_area_struct *vma);

#endif /* _MCP_BO_H */
