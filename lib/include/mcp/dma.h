/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libmcp: the C API of buffer objects, DMA engines and fences, over the
 * mcp::Dma, mcp::Buffer and mcp::Fence of <mcp/dma.hpp>.  Included by
 * <mcp/mcp.h>; same conventions (0 or a negative errno,
 * mcp_strerror_last() for the sentence).
 * Documentation/libmcp.rst, "Buffers, DMA and fences", has the long form.
 */
#ifndef MCP_DMA_H
#define MCP_DMA_H

#include <stddef.h>
#include <stdint.h>

#ifndef MCP_EXPORT
#if defined(__GNUC__)
#define MCP_EXPORT __attribute__((visibility("default")))
#else
#define MCP_EXPORT
#endif
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* Feature bits of mcp_get_version() (the kernel's MCP_FEAT_BUFFERS/DMA). */
#define MCP_FEATURE_BUFFERS	(UINT64_C(1) << 5)	/* buffer objects, dma-buf */
#define MCP_FEATURE_DMA		(UINT64_C(1) << 6)	/* DMA engines, fences */

/* Engine indices (the kernel's MCP_ENGINE_*). */
#define MCP_DMA_ENGINE_CPU	0	/* kernel workers copying with the CPU */
#define MCP_DMA_ENGINE_DEVICE	1	/* the device's DMA engine (device contexts) */

/* mcp_buffer_create() flags (the kernel's MCP_BO_*). */
#define MCP_BUFFER_COHERENT	(1U << 0)	/* coherent DMA memory; default streaming */
#define MCP_BUFFER_HUGEPAGE	(1U << 1)	/* 2 MiB pages */
#define MCP_BUFFER_NODE		(1U << 2)	/* allocate on @node */

/* mcp_buffer_from_user() flags (the kernel's MCP_BO_USERPTR_*). */
#define MCP_BUFFER_USER_WRITE	(1U << 0)	/* DMA may write into it */

/* mcp_buffer_info.kind */
#define MCP_BUFFER_KIND_KERNEL		0
#define MCP_BUFFER_KIND_USER		1
#define MCP_BUFFER_KIND_IMPORTED	2

/* A DMA context: the host context of /dev/mcp or a device fd.  Opaque. */
struct mcp_dma;
/* A buffer object of a context.  Opaque. */
struct mcp_buffer;
/* A sync_file fence.  Opaque. */
struct mcp_fence;

struct mcp_device;
struct mcp_accel;

#define MCP_DMA_ENGINE_NAME_LEN	16

/**
 * struct mcp_dma_engine_info - one engine of a context
 * @size:	in: sizeof(struct mcp_dma_engine_info)
 * @index:	MCP_DMA_ENGINE_*
 * @node:	NUMA node it runs on, -1 for any
 * @name:	"cpu", "edu", NUL-terminated
 * @max_chunk:	bytes per hardware transfer, 0: no limit
 * @inflight:	jobs it runs at once
 * @submitted:	jobs submitted on this context
 * @completed:	of which succeeded
 * @failed:	of which failed (including time-outs)
 * @timed_out:	of which timed out
 * @wc_depth:	coalescing depth in force
 * @wc_timeout_us: coalescing time-out in force
 */
struct mcp_dma_engine_info {
	uint32_t size;
	uint32_t index;
	int32_t node;
	char name[MCP_DMA_ENGINE_NAME_LEN];
	uint32_t max_chunk;
	uint32_t inflight;
	uint64_t submitted;
	uint64_t completed;
	uint64_t failed;
	uint64_t timed_out;
	uint32_t wc_depth;
	uint32_t wc_timeout_us;
};

/**
 * struct mcp_buffer_info - what the kernel says about a buffer
 * @size:	in: sizeof(struct mcp_buffer_info)
 * @handle:	its handle on the context
 * @kind:	MCP_BUFFER_KIND_*
 * @length:	bytes
 * @flags:	MCP_BUFFER_* it was made with
 * @node:	NUMA node of its memory, -1 when mixed or unknown
 * @mappable:	1 when mcp_buffer_data() maps it through the context
 * @jobs:	DMA jobs in flight that use it
 */
struct mcp_buffer_info {
	uint32_t size;
	uint32_t handle;
	uint32_t kind;
	uint32_t flags;
	uint64_t length;
	int32_t node;
	uint32_t mappable;
	uint32_t jobs;
	uint32_t reserved;
};

/**
 * struct mcp_dma_copy_opts - optional arguments of a DMA copy
 * @size:	in: sizeof(struct mcp_dma_copy_opts)
 * @in_fence:	start after this fence signals; NULL: at once
 * @deadline_ns: absolute CLOCK_MONOTONIC time by which the job must be
 *		done; 0: the module's job_timeout_ms from now
 */
struct mcp_dma_copy_opts {
	uint32_t size;
	uint32_t reserved;
	const struct mcp_fence *in_fence;
	uint64_t deadline_ns;
};

/**
 * mcp_dma_open_host() - the host context of an open /dev/mcp
 * @dev:	an open device; the context keeps its own duplicate of the fd
 * @out:	the new handle; release it with mcp_dma_close()
 *
 * Return: 0, -EOPNOTSUPP (module without buffers and DMA), -EINVAL, ...
 */
MCP_EXPORT int mcp_dma_open_host(struct mcp_device *dev, struct mcp_dma **out);
/* mcp_dma_open_accel() - the context of an open device fd (as above). */
MCP_EXPORT int mcp_dma_open_accel(struct mcp_accel *accel, struct mcp_dma **out);
/*
 * mcp_dma_close() - release @dma (NULL is fine).  Buffers and fences made
 * on it keep the context alive until they are freed.
 */
MCP_EXPORT void mcp_dma_close(struct mcp_dma *dma);

/**
 * mcp_dma_get_engine_info() - describe engine @index of a context
 *
 * Return: 0, -ENOENT when the context has no such engine (iterate from 0
 * until -ENOENT), -EINVAL (NULL, info->size too small).
 */
MCP_EXPORT int mcp_dma_get_engine_info(struct mcp_dma *dma, uint32_t index,
				       struct mcp_dma_engine_info *info);
/* mcp_dma_find_engine() - the index of engine @name ("cpu", "edu"); -ENOENT. */
MCP_EXPORT int mcp_dma_find_engine(struct mcp_dma *dma, const char *name, uint32_t *index);

/**
 * mcp_buffer_create() - a kernel buffer of @length bytes
 * @flags:	MCP_BUFFER_COHERENT, MCP_BUFFER_HUGEPAGE, MCP_BUFFER_NODE
 * @node:	with MCP_BUFFER_NODE, the NUMA node; ignored otherwise
 *
 * Return: 0, -ENOMEM (not available on the node), -EINVAL, -EOPNOTSUPP.
 */
MCP_EXPORT int mcp_buffer_create(struct mcp_dma *dma, uint64_t length, uint32_t flags,
				 int node, struct mcp_buffer **out);
/**
 * mcp_buffer_from_user() - pin @length bytes at @addr (both page-aligned)
 * @flags:	MCP_BUFFER_USER_WRITE when DMA may write into it
 *
 * The memory must stay mapped until mcp_buffer_free().
 * Return: 0, -ENOMEM over RLIMIT_MEMLOCK (mcp_strerror_last() gives the
 * limit and how to raise it), -EFAULT, -EINVAL.
 */
MCP_EXPORT int mcp_buffer_from_user(struct mcp_dma *dma, void *addr, uint64_t length,
				    uint32_t flags, struct mcp_buffer **out);
/* mcp_buffer_import() - import dma-buf @fd (the caller keeps its fd). */
MCP_EXPORT int mcp_buffer_import(struct mcp_dma *dma, int fd, struct mcp_buffer **out);
/* mcp_buffer_free() - unmap and destroy @buf (NULL is fine). */
MCP_EXPORT void mcp_buffer_free(struct mcp_buffer *buf);
/* mcp_buffer_size() - bytes; 0 for NULL. */
MCP_EXPORT uint64_t mcp_buffer_size(const struct mcp_buffer *buf);
/* mcp_buffer_get_info() - MCP_IOC_BO_INFO of @buf. */
MCP_EXPORT int mcp_buffer_get_info(const struct mcp_buffer *buf, struct mcp_buffer_info *info);
/**
 * mcp_buffer_data() - the buffer's memory, mapped on first use
 * @data:	out: its first byte; valid until mcp_buffer_free()
 */
MCP_EXPORT int mcp_buffer_data(struct mcp_buffer *buf, void **data);
/* mcp_buffer_export() - a new dma-buf fd of a kernel buffer; the caller closes it. */
MCP_EXPORT int mcp_buffer_export(const struct mcp_buffer *buf, int *fd);

/**
 * mcp_dma_copy() - copy @length bytes from @src to @dst and wait
 * @opts:	NULL for none
 * @seqno:	out (NULL is fine): the job's sequence number
 *
 * Return: 0, or the job's error: -ETIMEDOUT (past the deadline), -EINVAL
 * (a range past a buffer's end, overlap, buffers of another context),
 * -EACCES (read-only destination), -ECANCELED (in-fence failed), -ENOENT.
 */
MCP_EXPORT int mcp_dma_copy(struct mcp_dma *dma, uint32_t engine,
			    const struct mcp_buffer *src, uint64_t src_offset,
			    const struct mcp_buffer *dst, uint64_t dst_offset, uint64_t length,
			    const struct mcp_dma_copy_opts *opts, uint64_t *seqno);
/* mcp_dma_copy_async() - the same without waiting: @out signals when done. */
MCP_EXPORT int mcp_dma_copy_async(struct mcp_dma *dma, uint32_t engine,
				  const struct mcp_buffer *src, uint64_t src_offset,
				  const struct mcp_buffer *dst, uint64_t dst_offset,
				  uint64_t length, const struct mcp_dma_copy_opts *opts,
				  struct mcp_fence **out);

/* mcp_fence_from_fd() - wrap sync_file @fd; the fence owns it from then on. */
MCP_EXPORT int mcp_fence_from_fd(int fd, struct mcp_fence **out);
/* mcp_fence_free() - close the fence (NULL is fine). */
MCP_EXPORT void mcp_fence_free(struct mcp_fence *fence);
/* mcp_fence_fd() - the sync_file fd, for poll(2) (POLLIN: signaled); -EINVAL. */
MCP_EXPORT int mcp_fence_fd(const struct mcp_fence *fence);
/**
 * mcp_fence_wait() - wait at most @timeout_ns (negative: forever)
 * @job_error:	out (NULL is fine) when it signaled: 0, or the job's
 *		negative errno (-ETIMEDOUT, -ECANCELED, -EIO...)
 *
 * Return: 0 when it signaled, -ETIME when it had not by @timeout_ns, or
 * another negative errno when the wait itself failed.
 */
MCP_EXPORT int mcp_fence_wait(const struct mcp_fence *fence, int64_t timeout_ns, int *job_error);
/**
 * mcp_fence_status() - without waiting (SYNC_IOC_FILE_INFO)
 * @status:	out: 1 signaled, 0 pending, a negative errno: signaled an error
 */
MCP_EXPORT int mcp_fence_status(const struct mcp_fence *fence, int *status);
/* mcp_fence_merge() - a fence that signals when @a and @b have. */
MCP_EXPORT int mcp_fence_merge(const struct mcp_fence *a, const struct mcp_fence *b,
			       struct mcp_fence **out);

#ifdef __cplusplus
}
#endif

#endif /* MCP_DMA_H */
