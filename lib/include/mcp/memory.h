/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libmcp: the buffer memory of a process, from the fdinfo of its MCP
 * context fds (/proc/PID/fdinfo/N, DRM client usage keys; kmod/mcp_fdinfo.c),
 * over mcp::process_buffer_memory() of <mcp/memory.hpp>.  Same conventions
 * as <mcp/mcp.h> (0 or a negative errno, mcp_strerror_last() for the
 * sentence); usable alone.  Documentation/buffers.rst, "Where buffer
 * memory shows", has the long form.
 */
#ifndef MCP_MEMORY_H
#define MCP_MEMORY_H

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

/**
 * struct mcp_buffer_memory - buffer memory of one process
 * @size:		in: sizeof(struct mcp_buffer_memory)
 * @contexts:		MCP contexts the process holds an fd of (/dev/mcp
 *			files and device fds), each counted once however
 *			many fds it has
 * @system_bytes:	kernel BOs of those contexts (drm-total-system)
 * @userptr_bytes:	pinned user memory of their user-pointer BOs
 *			(drm-total-userptr)
 */
struct mcp_buffer_memory {
	uint32_t size;
	uint32_t contexts;
	uint64_t system_bytes;
	uint64_t userptr_bytes;
};

/**
 * mcp_get_process_buffer_memory() - what the MCP buffers of @pid hold
 * @pid:	a process id; 0 for the caller
 * @out:	filled; @out->size set by the caller
 *
 * Return: 0, -EINVAL for a NULL @out or a wrong @out->size, -ESRCH for no
 * such process, -EACCES when its fds may not be read (another user's
 * process without CAP_SYS_PTRACE), another -errno reading /proc.
 */
MCP_EXPORT int mcp_get_process_buffer_memory(int pid, struct mcp_buffer_memory *out);

#ifdef __cplusplus
}
#endif

#endif /* MCP_MEMORY_H */
