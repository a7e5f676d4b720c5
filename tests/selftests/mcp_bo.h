/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Buffer-object helpers shared by the BO and DMA selftests: each wraps one
 * MCP_IOC_BO_* ioctl and returns 0 or -errno like mcp_ioctl().
 */
#ifndef MCP_BO_TEST_H
#define MCP_BO_TEST_H

/* First: it defines _GNU_SOURCE for every libc header after it. */
#include "mcp_test.h"

#include <stdint.h>
#include <string.h>
#include <sys/mman.h>

/* MCP_IOC_BO_CREATE with @flags (MCP_BO_NODE: on @node). */
static inline int bo_create_node(int fd, __u64 len, __u32 flags, int node, __u32 *handle)
{
	struct mcp_bo_create c = {
		.size = sizeof(c), .flags = flags, .length = len, .node = node,
	};
	int ret = mcp_ioctl(fd, MCP_IOC_BO_CREATE, &c);

	if (!ret)
		*handle = c.handle;
	return ret;
}

static inline int bo_userptr(int fd, void *addr, __u64 len, __u32 flags,
		      __u32 *handle)
{
	struct mcp_bo_userptr u = {
		.size = sizeof(u), .flags = flags,
		.addr = (__u64)(uintptr_t)addr, .length = len,
	};
	int ret = mcp_ioctl(fd, MCP_IOC_BO_USERPTR, &u);

	if (!ret)
		*handle = u.handle;
	return ret;
}

static inline int bo_info(int fd, __u32 handle, struct mcp_bo_info *info)
{
	memset(info, 0, sizeof(*info));
	info->size = sizeof(*info);
	info->handle = handle;
	return mcp_ioctl(fd, MCP_IOC_BO_INFO, info);
}

static inline int bo_destroy(int fd, __u32 handle)
{
	struct mcp_bo_destroy d = { .size = sizeof(d), .handle = handle };

	return mcp_ioctl(fd, MCP_IOC_BO_DESTROY, &d);
}

/* Maps the first @len bytes of the BO (MAP_SHARED); NULL on failure. */
static inline void *bo_mmap(int fd, __u32 handle, size_t len)
{
	struct mcp_bo_info info;
	void *p;

	if (bo_info(fd, handle, &info) || info.mmap_offset == MCP_BO_NO_MMAP)
		return NULL;
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
		 info.mmap_offset);
	return p == MAP_FAILED ? NULL : p;
}

/* A dma-buf fd of the BO, or -errno. */
static inline int bo_export(int fd, __u32 handle)
{
	struct mcp_bo_export e = { .size = sizeof(e), .handle = handle, .fd = -1 };
	int ret = mcp_ioctl(fd, MCP_IOC_BO_EXPORT, &e);

	return ret ? ret : e.fd;
}

/* A synchronous DMA_SUBMIT of len bytes from offset 0 to offset 0. */
static inline void dma_arg(struct mcp_dma_submit *s, __u32 engine, __u32 src,
			   __u32 dst, __u64 len)
{
	memset(s, 0, sizeof(*s));
	s->size = sizeof(*s);
	s->engine = engine;
	s->src_handle = src;
	s->dst_handle = dst;
	s->length = len;
	s->out_fence = -1;
}

#endif /* MCP_BO_TEST_H */
