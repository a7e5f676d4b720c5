/* SPDX-License-Identifier: GPL-2.0 OR LGPL-2.1-or-later */
/*
 * mcp_route.h - where a worker job of an inference graph runs: the rule
 * of Documentation/graph-scheduling.rst ("Workers"), written once for
 * both executors.  Pure C on <linux/types.h> only, no allocation, no
 * kernel or libc call: mcp.ko's scheduler and libmcp's userspace
 * executor (lib/src/runtime_user.cpp) include it alike.
 *
 * A job's target is the NUMA node holding most of its input bytes
 * (ties: the lowest node; no input on a known node: none).  Its route is
 * the target when that node has workers, else the node with workers
 * nearest to it by SLIT distance (ties: the lowest), and any node with
 * workers (the lowest) for a job without a target.
 */
#ifndef MCP_ROUTE_H
#define MCP_ROUTE_H

#include <linux/types.h>

/* No node: NUMA_NO_NODE in the kernel. */
#define MCP_ROUTE_NO_NODE	(-1)

/**
 * mcp_route_target() - the node holding most of a job's input bytes
 * @nodes:	per input, the node of its buffer (MCP_ROUTE_NO_NODE: unknown)
 * @bytes:	per input, its bytes
 * @n:		inputs
 *
 * Inputs on the same node add up.  Return: that node (ties: the lowest),
 * MCP_ROUTE_NO_NODE when no input with bytes is on a known node.
 */
static inline int mcp_route_target(const int *nodes, const __u64 *bytes, unsigned int n)
{
	int best = MCP_ROUTE_NO_NODE;
	__u64 best_bytes = 0;
	unsigned int k, m;

	for (k = 0; k < n; k++) {
		__u64 sum = 0;

		if (nodes[k] < 0)
			continue;
		/* Counted with the first input on the same node. */
		for (m = 0; m < k && nodes[m] != nodes[k]; m++)
			;
		if (m < k)
			continue;
		for (m = k; m < n; m++)
			if (nodes[m] == nodes[k])
				sum += bytes[m];
		if (sum > best_bytes || (sum == best_bytes && nodes[k] < best)) {
			best = nodes[k];
			best_bytes = sum;
		}
	}
	return best;
}

/**
 * mcp_route_node() - the node whose workers take a job for @target
 * @target:	the job's target node, MCP_ROUTE_NO_NODE for none
 * @workers:	per node id below @n_nodes, the workers it has
 * @n_nodes:	entries at @workers
 * @distance:	SLIT distance between two node ids (@arg passed along)
 * @arg:	for @distance
 *
 * Return: @target when it has workers, else the nearest node with
 * workers (ties: the lowest; any for MCP_ROUTE_NO_NODE), or
 * MCP_ROUTE_NO_NODE when no node has one.
 */
static inline int mcp_route_node(int target, const __u32 *workers, int n_nodes,
				 int (*distance)(int a, int b, const void *arg),
				 const void *arg)
{
	int node, best = MCP_ROUTE_NO_NODE, best_dist = 0x7fffffff;

	if (target >= 0 && target < n_nodes && workers[target])
		return target;
	for (node = 0; node < n_nodes; node++) {
		int dist;

		if (!workers[node])
			continue;
		dist = target < 0 ? 0 : distance(target, node, arg);
		if (dist < best_dist) {
			best = node;
			best_dist = dist;
		}
	}
	return best;
}

#endif /* MCP_ROUTE_H */
