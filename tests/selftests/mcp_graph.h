/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Graph ioctl helpers shared by the graph, worker-batch and worker-chain
 * selftests.
 */
#ifndef MCP_GRAPH_TEST_H
#define MCP_GRAPH_TEST_H

#include <stdint.h>
#include <string.h>
#include <time.h>

#include "mcp_test.h"
#include "../graph_cases/mcp_graph_cases.h"

static inline __u64 now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

/* A new 4 KiB BO (on node, or the caller's: -1): its handle, or 0. */
static inline __u32 bo_new(int fd, int node)
{
	struct mcp_bo_create c = {
		.size = sizeof(c), .length = 4096,
		.flags = node >= 0 ? MCP_BO_NODE : 0, .node = node,
	};

	return mcp_ioctl(fd, MCP_IOC_BO_CREATE, &c) ? 0 : c.handle;
}

/* Creates g with the BOs bo[0..n_buffers-1]: its handle, or -errno. */
static inline int graph_create(int fd, struct mcp_graph_case_graph *g,
			       const __u32 *bo)
{
	static uint8_t bytes[MCP_GRAPH_CASE_MAX_BYTES];
	size_t len = mcp_graph_case_emit(g, bytes, sizeof(bytes));
	struct mcp_graph_create c = {
		.size = sizeof(c), .graph = (__u64)(uintptr_t)bytes,
		.graph_len = len, .handles = (__u64)(uintptr_t)bo,
		.n_handles = g->n_buffers,
	};
	int ret = mcp_ioctl(fd, MCP_IOC_GRAPH_CREATE, &c);

	return ret ? ret : (int)c.handle;
}

/*
 * A chain of n (at most 63) WNOP worker nodes in one 4 KiB buffer, node i
 * reading tensor i and writing i + 1.
 */
static inline void build_chain(struct mcp_graph_case_graph *g, int n)
{
	mcp_graph_case_init(g);
	mcp_graph_case_buffer(g, 4096, 0);
	for (int i = 0; i <= n; i++)
		mcp_graph_case_tensor(g, 0, MCP_DTYPE_F32, 64 * i, 1, 16);
	for (int i = 0; i < n; i++)
		mcp_graph_case_node(g, MCP_OP_WNOP, MCP_GRAPH_ENGINE_WORKER, 1, 1,
				    i, i + 1);
}

/* build_chain(n) created on fd with bo[0]: its handle, or -errno. */
static inline int chain_graph_create(int fd, const __u32 *bo, int n)
{
	struct mcp_graph_case_graph g;

	build_chain(&g, n);
	return graph_create(fd, &g, bo);
}

/* MCP_IOC_GRAPH_STATUS of @exec_id with up to @n node entries at @nodes. */
static inline int graph_status(int fd, __u64 exec_id,
			       struct mcp_graph_node_status *nodes, __u32 n,
			       struct mcp_graph_status *st)
{
	memset(st, 0, sizeof(*st));
	st->size = sizeof(*st);
	st->exec_id = exec_id;
	st->nodes = (__u64)(uintptr_t)nodes;
	st->n_nodes = n;
	return mcp_ioctl(fd, MCP_IOC_GRAPH_STATUS, st);
}

#endif /* MCP_GRAPH_TEST_H */
