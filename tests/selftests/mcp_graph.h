/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Graph ioctl helpers shared by the graph and worker-batch selftests.
 */
#ifndef MCP_GRAPH_TEST_H
#define MCP_GRAPH_TEST_H

#include <stdint.h>
#include <string.h>

#include "mcp_test.h"

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
