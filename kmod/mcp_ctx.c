// SPDX-License-Identifier: GPL-2.0
/*
 * MCP (Model Control Protocol): contexts, the state of every /dev/mcp file
 * and device fd, their handle tables and the BO ioctls.
 *
 * A new BO's handle is reserved by the handler and published (the BO
 * stored under it) only once the copy back to the caller worked; until
 * then lookups see no BO, and a failed copy drops handle and BO, so
 * userspace never holds a handle it was not told about.
 *
 * Locks: mcp_ctx.lock (mcp_ctx.h) around every handle-table change and
 * lookup, so a BO found under it has its table reference while
 * mcp_bo_get() runs.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/dma-buf.h>
#include <linux/file.h>
#include <linux/mm.h>
#include <linux/nodemask.h>
#include <linux/slab.h>
#include <linux/topology.h>

#include "mcp_bo.h"
#include "mcp_ctx.h"
#include "mcp_graph.h"
#include "mcp_internal.h"
#include "mcp_pci.h"

/* The last drm-client-id given out (mcp_fdinfo.c). */
static atomic64_t mcp_ctx_client_ids = ATOMIC64_INIT(0);

/**
 * mcp_ctx_create() - the context of a new /dev/mcp file or device fd
 * @mdev:	the device (the context takes a reference), NULL for /dev/mcp
 *
 * Return: the context, or NULL without memory.
 */
struct mcp_ctx *mcp_ctx_create(struct mcp_dev *mdev)
{
	struct mcp_ctx *ctx;

	ctx = kzalloc(sizeof(*ctx), GFP_KERNEL_ACCOUNT);
	if (!ctx)
		return NULL;

	mutex_init(&ctx->lock);
	xa_init_flags(&ctx->bos, XA_FLAGS_ALLOC1);
	xa_init_flags(&ctx->graphs, XA_FLAGS_ALLOC1);
	ctx->client_id = atomic64_inc_return(&mcp_ctx_client_ids);
	if (mdev) {
		mcp_dev_get(mdev);
		ctx->mdev = mdev;
	}
	return ctx;
}

/*
 * The file is gone: its graph executions and workers first, then its
 * graphs (which hold BOs and may have DMA jobs), its DMA jobs, its
 * handles, then the device.
 */
void mcp_ctx_destroy(struct mcp_ctx *ctx)
{
	struct mcp_bo *bo;
	unsigned long handle;

	mcp_sched_ctx_fini(ctx);
	mcp_graph_ctx_fini(ctx);
	mcp_dma_ctx_fini(ctx);

	/* Nobody else can reach the table now; reserved slots hold no BO. */
	xa_for_each(&ctx->bos, handle, bo)
		mcp_bo_put(bo);
	xa_destroy(&ctx->bos);

	if (ctx->mdev)
		mcp_dev_put(ctx->mdev);
	mutex_destroy(&ctx->lock);
	kfree(ctx);
}

/* -ENODEV once a device context's device is removed. */
static int mcp_ctx_check_dev(struct mcp_ctx *ctx)
{
	return ctx->mdev && READ_ONCE(ctx->mdev->gone) ? -ENODEV : 0;
}

/*
 * Reserves a handle for @bo; published by mcp_ctx_publish_bo().  Handles
 * are given out cyclically, as graph handles: worker jobs name BOs by
 * handle, so a destroyed BO's handle must not name a new BO at once.
 */
static int mcp_ctx_reserve_handle(struct mcp_ctx *ctx, u32 *handle)
{
	int ret;

	mutex_lock(&ctx->lock);
	ret = xa_alloc_cyclic(&ctx->bos, handle, NULL,
			      XA_LIMIT(1, MCP_BO_HANDLE_MAX), &ctx->next_bo,
			      GFP_KERNEL_ACCOUNT);
	mutex_unlock(&ctx->lock);
	if (ret < 0)
		return ret == -EBUSY ? -ENOSPC : ret;
	return 0;
}

/* After the copy back: store @bo under @handle, or drop both. */
static void mcp_ctx_publish_bo(struct mcp_ctx *ctx, u32 handle,
			       struct mcp_bo *bo, bool copied)
{
	mutex_lock(&ctx->lock);
	if (copied)
		/* Replacing a reserved entry allocates nothing: cannot fail. */
		xa_store(&ctx->bos, handle, bo, GFP_KERNEL);
	else
		xa_erase(&ctx->bos, handle);
	mutex_unlock(&ctx->lock);

	if (!copied)
		mcp_bo_put(bo);
}

/**
 * mcp_bo_lookup() - the BO behind a handle of @ctx
 * @ctx:	the context
 * @handle:	its handle
 *
 * Return: the BO with a reference for the caller, or NULL when @handle
 * names no BO (never existed, destroyed, or not yet published).
 */
struct mcp_bo *mcp_bo_lookup(struct mcp_ctx *ctx, u32 handle)
{
	struct mcp_bo *bo;

	mutex_lock(&ctx->lock);
	bo = xa_load(&ctx->bos, handle);
	if (bo)
		mcp_bo_get(bo);
	mutex_unlock(&ctx->lock);
	return bo;
}

static int mcp_ioctl_bo_create(struct file *file, void *karg)
{
	struct mcp_bo_create_karg *create = karg;
	struct mcp_bo_create *arg = &create->arg;
	struct mcp_ctx *ctx = file->private_data;
	u64 length = arg->length;
	struct mcp_bo *bo;
	int node, ret;

	if ((arg->flags & ~MCP_BO_CREATE_FLAGS) || arg->reserved)
		return -EINVAL;
	if (!length || length > MCP_BO_MAX_LENGTH)
		return -EINVAL;
	length = ALIGN(length, (arg->flags & MCP_BO_HUGEPAGE) ? PMD_SIZE :
							       PAGE_SIZE);

	/*
	 * An explicit node must have memory; a default one (the device's,
	 * the caller's) may be memoryless and stands for the nearest node
	 * with memory.  NUMA_NO_NODE: a device of no node takes any.
	 */
	if (arg->flags & MCP_BO_NODE) {
		node = arg->node;
		if (node < 0 || node >= MAX_NUMNODES || !node_online(node) ||
		    !node_state(node, N_MEMORY))
			return -EINVAL;
	} else if (ctx->mdev) {
		node = mcp_mem_node(dev_to_node(&ctx->mdev->pdev->dev));
	} else {
		node = mcp_mem_node(numa_mem_id());
	}

	ret = mcp_ctx_check_dev(ctx);
	if (ret)
		return ret;

	bo = mcp_bo_create_kernel(ctx->mdev, length, arg->flags, node);
	if (IS_ERR(bo))
		return PTR_ERR(bo);

	ret = mcp_ctx_reserve_handle(ctx, &arg->handle);
	if (ret) {
		mcp_bo_put(bo);
		return ret;
	}
	create->ctx = ctx;
	create->bo = bo;
	return 0;
}

static void mcp_ioctl_bo_create_publish(void *karg, bool copied)
{
	struct mcp_bo_create_karg *create = karg;

	mcp_ctx_publish_bo(create->ctx, create->arg.handle, create->bo,
			   copied);
}

static int mcp_ioctl_bo_userptr(struct file *file, void *karg)
{
	struct mcp_bo_userptr_karg *userptr = karg;
	struct mcp_bo_userptr *arg = &userptr->arg;
	struct mcp_ctx *ctx = file->private_data;
	struct mcp_bo *bo;
	int ret;

	if ((arg->flags & ~MCP_BO_USERPTR_FLAGS) || arg->reserved)
		return -EINVAL;
	if (!arg->length || arg->length > MCP_BO_MAX_LENGTH ||
	    !PAGE_ALIGNED(arg->addr) || !PAGE_ALIGNED(arg->length))
		return -EINVAL;
	if (!access_ok(u64_to_user_ptr(arg->addr), arg->length))
		return -EFAULT;

	ret = mcp_ctx_check_dev(ctx);
	if (ret)
		return ret;

	bo = mcp_bo_create_userptr(ctx->mdev, arg->addr, arg->length,
				   arg->flags);
	if (IS_ERR(bo))
		return PTR_ERR(bo);

	ret = mcp_ctx_reserve_handle(ctx, &arg->handle);
	if (ret) {
		mcp_bo_put(bo);
		return ret;
	}
	userptr->ctx = ctx;
	userptr->bo = bo;
	return 0;
}

static void mcp_ioctl_bo_userptr_publish(void *karg, bool copied)
{
	struct mcp_bo_userptr_karg *userptr = karg;

	mcp_ctx_publish_bo(userptr->ctx, userptr->arg.handle, userptr->bo,
			   copied);
}

static int mcp_ioctl_bo_info(struct file *file, void *karg)
{
	struct mcp_ctx *ctx = file->private_data;
	struct mcp_bo_info *info = karg;
	struct mcp_bo *bo;

	if (info->flags || info->reserved)
		return -EINVAL;

	bo = mcp_bo_lookup(ctx, info->handle);
	if (!bo)
		return -ENOENT;

	info->kind = bo->kind;
	info->length = bo->length;
	info->bo_flags = bo->flags;
	info->node = bo->node;
	info->mmap_offset = bo->kind == MCP_BO_KIND_USERPTR ? MCP_BO_NO_MMAP :
			    MCP_BO_MMAP_BASE |
			    ((u64)info->handle << MCP_BO_MMAP_SHIFT);
	info->jobs = atomic_read(&bo->jobs);
	mcp_bo_put(bo);
	return 0;
}

static int mcp_ioctl_bo_export(struct file *file, void *karg)
{
	struct mcp_bo_export_karg *export = karg;
	struct mcp_bo_export *arg = &export->arg;
	struct mcp_ctx *ctx = file->private_data;
	struct dma_buf *dmabuf;
	struct mcp_bo *bo;
	int fd;

	if (arg->flags)
		return -EINVAL;

	bo = mcp_bo_lookup(ctx, arg->handle);
	if (!bo)
		return -ENOENT;

	fd = get_unused_fd_flags(O_CLOEXEC);
	if (fd < 0)
		goto out_put_bo;

	dmabuf = mcp_bo_export(bo);
	if (IS_ERR(dmabuf)) {
		put_unused_fd(fd);
		fd = PTR_ERR(dmabuf);
		goto out_put_bo;
	}
	arg->fd = fd;
	export->dmabuf = dmabuf;

out_put_bo:
	mcp_bo_put(bo);
	return fd < 0 ? fd : 0;
}

/* The fd is installed only once the caller has its number. */
static void mcp_ioctl_bo_export_publish(void *karg, bool copied)
{
	struct mcp_bo_export_karg *export = karg;

	if (copied) {
		fd_install(export->arg.fd, export->dmabuf->file);
	} else {
		dma_buf_put(export->dmabuf);
		put_unused_fd(export->arg.fd);
	}
}

static int mcp_ioctl_bo_import(struct file *file, void *karg)
{
	struct mcp_bo_import_karg *import = karg;
	struct mcp_bo_import *arg = &import->arg;
	struct mcp_ctx *ctx = file->private_data;
	struct mcp_bo *bo;
	int ret;

	if (arg->flags)
		return -EINVAL;
	if (arg->fd < 0)
		return -EBADF;

	ret = mcp_ctx_check_dev(ctx);
	if (ret)
		return ret;

	bo = mcp_bo_create_import(ctx->mdev, arg->fd);
	if (IS_ERR(bo))
		return PTR_ERR(bo);

	ret = mcp_ctx_reserve_handle(ctx, &arg->handle);
	if (ret) {
		mcp_bo_put(bo);
		return ret;
	}
	arg->length = bo->length;
	import->ctx = ctx;
	import->bo = bo;
	return 0;
}

static void mcp_ioctl_bo_import_publish(void *karg, bool copied)
{
	struct mcp_bo_import_karg *import = karg;

	mcp_ctx_publish_bo(import->ctx, import->arg.handle, import->bo,
			   copied);
}

static int mcp_ioctl_bo_destroy(struct file *file, void *karg)
{
	struct mcp_ctx *ctx = file->private_data;
	struct mcp_bo_destroy *arg = karg;
	struct mcp_bo *bo;

	if (arg->flags || arg->reserved)
		return -EINVAL;

	mutex_lock(&ctx->lock);
	bo = xa_load(&ctx->bos, arg->handle);
	if (bo)
		xa_erase(&ctx->bos, arg->handle);
	mutex_unlock(&ctx->lock);

	if (!bo)
		return -ENOENT;
	mcp_bo_put(bo);
	return 0;
}

static const struct mcp_ioctl_desc mcp_bo_create_desc = {
	.ksize = sizeof(struct mcp_bo_create),
	.size_ver0 = MCP_BO_CREATE_SIZE_VER0,
	.handler = mcp_ioctl_bo_create,
	.publish = mcp_ioctl_bo_create_publish,
};

static const struct mcp_ioctl_desc mcp_bo_userptr_desc = {
	.ksize = sizeof(struct mcp_bo_userptr),
	.size_ver0 = MCP_BO_USERPTR_SIZE_VER0,
	.handler = mcp_ioctl_bo_userptr,
	.publish = mcp_ioctl_bo_userptr_publish,
};

static const struct mcp_ioctl_desc mcp_bo_info_desc = {
	.ksize = sizeof(struct mcp_bo_info),
	.size_ver0 = MCP_BO_INFO_SIZE_VER0,
	.handler = mcp_ioctl_bo_info,
};

static const struct mcp_ioctl_desc mcp_bo_export_desc = {
	.ksize = sizeof(struct mcp_bo_export),
	.size_ver0 = MCP_BO_EXPORT_SIZE_VER0,
	.handler = mcp_ioctl_bo_export,
	.publish = mcp_ioctl_bo_export_publish,
};

static const struct mcp_ioctl_desc mcp_bo_import_desc = {
	.ksize = sizeof(struct mcp_bo_import),
	.size_ver0 = MCP_BO_IMPORT_SIZE_VER0,
	.handler = mcp_ioctl_bo_import,
	.publish = mcp_ioctl_bo_import_publish,
};

static const struct mcp_ioctl_desc mcp_bo_destroy_desc = {
	.ksize = sizeof(struct mcp_bo_destroy),
	.size_ver0 = MCP_BO_DESTROY_SIZE_VER0,
	.handler = mcp_ioctl_bo_destroy,
};

static const struct mcp_ioctl_desc mcp_engine_info_desc = {
	.ksize = sizeof(struct mcp_engine_info),
	.size_ver0 = MCP_ENGINE_INFO_SIZE_VER0,
	.handler = mcp_ioctl_engine_info,
};

static const struct mcp_ioctl_desc mcp_dma_submit_desc = {
	.ksize = sizeof(struct mcp_dma_submit),
	.size_ver0 = MCP_DMA_SUBMIT_SIZE_VER0,
	.handler = mcp_ioctl_dma_submit,
	.publish = mcp_ioctl_dma_submit_publish,
};

static const struct mcp_ioctl_desc mcp_graph_create_desc = {
	.ksize = sizeof(struct mcp_graph_create),
	.size_ver0 = MCP_GRAPH_CREATE_SIZE_VER0,
	.handler = mcp_ioctl_graph_create,
	.publish = mcp_ioctl_graph_create_publish,
	.copy_out_on_einval = true,
};

static const struct mcp_ioctl_desc mcp_graph_exec_desc = {
	.ksize = sizeof(struct mcp_graph_exec),
	.size_ver0 = MCP_GRAPH_EXEC_SIZE_VER0,
	.handler = mcp_ioctl_graph_exec,
	.publish = mcp_ioctl_graph_exec_publish,
};

static const struct mcp_ioctl_desc mcp_graph_status_desc = {
	.ksize = sizeof(struct mcp_graph_status),
	.size_ver0 = MCP_GRAPH_STATUS_SIZE_VER0,
	.handler = mcp_ioctl_graph_status,
};

static const struct mcp_ioctl_desc mcp_graph_destroy_desc = {
	.ksize = sizeof(struct mcp_graph_destroy),
	.size_ver0 = MCP_GRAPH_DESTROY_SIZE_VER0,
	.handler = mcp_ioctl_graph_destroy,
};

static const struct mcp_ioctl_desc mcp_worker_register_desc = {
	.ksize = sizeof(struct mcp_worker_register),
	.size_ver0 = MCP_WORKER_REGISTER_SIZE_VER0,
	.handler = mcp_ioctl_worker_register,
	.publish = mcp_ioctl_worker_register_publish,
};

/**
 * mcp_ctx_ioctl_desc() - the ioctls every context accepts
 * @cmd:	the ioctl number
 *
 * Return: its descriptor, or NULL when @cmd is not one of them.
 */
const struct mcp_ioctl_desc *mcp_ctx_ioctl_desc(unsigned int cmd)
{
	switch (cmd) {
	case MCP_IOC_BO_CREATE:
		return &mcp_bo_create_desc;
	case MCP_IOC_BO_USERPTR:
		return &mcp_bo_userptr_desc;
	case MCP_IOC_BO_INFO:
		return &mcp_bo_info_desc;
	case MCP_IOC_BO_EXPORT:
		return &mcp_bo_export_desc;
	case MCP_IOC_BO_IMPORT:
		return &mcp_bo_import_desc;
	case MCP_IOC_BO_DESTROY:
		return &mcp_bo_destroy_desc;
	case MCP_IOC_ENGINE_INFO:
		return &mcp_engine_info_desc;
	case MCP_IOC_DMA_SUBMIT:
		return &mcp_dma_submit_desc;
	case MCP_IOC_GRAPH_CREATE:
		return &mcp_graph_create_desc;
	case MCP_IOC_GRAPH_EXEC:
		return &mcp_graph_exec_desc;
	case MCP_IOC_GRAPH_STATUS:
		return &mcp_graph_status_desc;
	case MCP_IOC_GRAPH_DESTROY:
		return &mcp_graph_destroy_desc;
	case MCP_IOC_WORKER_REGISTER:
		return &mcp_worker_register_desc;
	default:
		return NULL;
	}
}

/**
 * mcp_ctx_mmap() - map a BO of @ctx
 * @ctx:	the context of the mapped fd
 * @vma:	its offset is a BO's MCP_BO_MMAP_BASE | handle << 32 plus
 *		a page-aligned offset inside the BO
 *
 * Return: 0, or -EINVAL for an offset that names no BO (as for the BAR
 * regions of a device fd), a user-pointer BO, a private mapping or a
 * range past the BO's end; -EACCES for a writable mapping of a read-only
 * import.
 */
int mcp_ctx_mmap(struct mcp_ctx *ctx, struct vm_area_struct *vma)
{
	unsigned long window;
	struct mcp_bo *bo;
	int ret;

	if (vma->vm_pgoff < MCP_BO_MMAP_PGOFF)
		return -EINVAL;
	/* The handle's window; beyond the handle range is nobody's. */
	window = (vma->vm_pgoff - MCP_BO_MMAP_PGOFF) >>
		 (MCP_BO_MMAP_SHIFT - PAGE_SHIFT);
	if (window > MCP_BO_HANDLE_MAX)
		return -EINVAL;

	bo = mcp_bo_lookup(ctx, window);
	if (!bo)
		return -EINVAL;

	if (bo->kind == MCP_BO_KIND_IMPORT)
		ret = mcp_bo_mmap_import(bo, vma);
	else
		ret = mcp_bo_mmap(bo, vma);
	mcp_bo_put(bo);
	return ret;
}
