/* SPDX-License-Identifier: GPL-2.0 */
/*
 * sync_file helpers shared by the DMA and graph selftests: the out-fences
 * of MCP_IOC_DMA_SUBMIT and MCP_IOC_GRAPH_EXEC.
 */
#ifndef MCP_FENCE_TEST_H
#define MCP_FENCE_TEST_H

#include <errno.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <linux/sync_file.h>

/* SYNC_IOC_FILE_INFO status: 1 signalled, 0 pending, <0 the error. */
static inline int fence_status(int fence)
{
	struct sync_file_info info = { 0 };

	if (ioctl(fence, SYNC_IOC_FILE_INFO, &info) < 0)
		return -1000 - errno;
	return info.status;
}

/* poll() for POLLIN up to ms: 1 signalled, 0 not yet, -errno. */
static inline int fence_wait(int fence, int ms)
{
	struct pollfd p = { .fd = fence, .events = POLLIN };
	int n = poll(&p, 1, ms);

	if (n < 0)
		return -errno;
	return n && (p.revents & POLLIN);
}

/* Waits for the fence and closes it: its status (1 or -errno), or -9999. */
static inline int fence_finish(int fence, int ms)
{
	int ret = fence_wait(fence, ms) == 1 ? fence_status(fence) : -9999;

	close(fence);
	return ret;
}

#endif /* MCP_FENCE_TEST_H */
