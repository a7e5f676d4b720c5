// SPDX-License-Identifier: GPL-2.0
/*
 * MCP (Model Control Protocol): MCP_IOC_GET_TOPOLOGY, the NUMA nodes, their
 * CPUs, memory and SLIT distances; mcp_mem_node(), the node whose memory
 * serves a default choice.
 *
 * The answer is built as a snapshot in kernel buffers and only then copied
 * to the caller, so the counts and the arrays always describe the same
 * moment:
 *
 * - the set of nodes is one copy of node_states[N_ONLINE], taken before
 *   anything else (get_online_mems() is not exported to modules in 6.1;
 *   pgdats of nodes that go offline stay allocated, so a node of the copy
 *   can still be read);
 * - the CPU masks and online CPU count are read under cpus_read_lock();
 * - memory figures are what /sys/devices/system/node/nodeN/meminfo shows as
 *   MemTotal and MemFree (si_meminfo_node(), which is not exported either:
 *   managed pages and NR_FREE_PAGES summed over the node's zones).
 *
 * Locks: cpus_read_lock() only, never held across copy_to_user() or an
 * allocation.
 */

#include <linux/cpu.h>
#include <linux/cpumask.h>
#include <linux/errno.h>
#include <linux/kernel.h>
#include <linux/math.h>
#include <linux/mm.h>
#include <linux/mmzone.h>
#include <linux/nodemask.h>
#include <linux/overflow.h>
#include <linux/slab.h>
#include <linux/topology.h>
#include <linux/uaccess.h>
#include <linux/vmstat.h>

#include "mcp_internal.h"

#define MCP_CPUMASK_WORD_BITS	64

/**
 * struct mcp_topology_snapshot - the answer, built in kernel memory
 * @online:	the online nodes at the time of the call
 * @nr_nodes:	nodes in @online
 * @nr_words:	__u64 words per CPU mask row
 * @nodes:	@nr_nodes entries, in node id order
 * @cpumasks:	@nr_nodes rows of @nr_words words
 * @distances:	@nr_nodes x @nr_nodes SLIT distances, row-major
 */
struct mcp_topology_snapshot {
	nodemask_t online;
	u32 nr_nodes;
	u32 nr_words;
	struct mcp_node_info *nodes;
	u64 *cpumasks;
	u32 *distances;
};

static void mcp_topology_free(struct mcp_topology_snapshot *snap)
{
	kvfree(snap->distances);
	kvfree(snap->cpumasks);
	kvfree(snap->nodes);
}

static int mcp_topology_alloc(struct mcp_topology_snapshot *snap)
{
	snap->nodes = kvcalloc(snap->nr_nodes, sizeof(*snap->nodes),
			       GFP_KERNEL);
	if (!snap->nodes)
		goto err;

	snap->cpumasks = kvcalloc(array_size(snap->nr_nodes, snap->nr_words),
				  sizeof(*snap->cpumasks), GFP_KERNEL);
	if (!snap->cpumasks)
		goto err_free_nodes;

	snap->distances = kvcalloc(array_size(snap->nr_nodes, snap->nr_nodes),
				   sizeof(*snap->distances), GFP_KERNEL);
	if (!snap->distances)
		goto err_free_cpumasks;

	return 0;

err_free_cpumasks:
	kvfree(snap->cpumasks);
err_free_nodes:
	kvfree(snap->nodes);
err:
	return -ENOMEM;
}

/* What /sys/devices/system/node/nodeN/meminfo reports as MemTotal/MemFree. */
static void mcp_node_meminfo(int nid, struct mcp_node_info *info)
{
	struct zone *zones = NODE_DATA(nid)->node_zones;
	unsigned long managed = 0, free = 0;
	int i;

	for (i = 0; i < MAX_NR_ZONES; i++) {
		managed += zone_managed_pages(&zones[i]);
		free += zone_page_state(&zones[i], NR_FREE_PAGES);
	}
	info->mem_total_bytes = (u64)managed << PAGE_SHIFT;
	info->mem_free_bytes = (u64)free << PAGE_SHIFT;
}

/* Fills @snap's buffers; returns the number of online CPUs. */
static u32 mcp_topology_fill(struct mcp_topology_snapshot *snap)
{
	u32 i = 0, j, nr_cpus_online;
	int nid, to, cpu;

	cpus_read_lock();

	for_each_node_mask(nid, snap->online) {
		struct mcp_node_info *info = &snap->nodes[i];
		u64 *row = &snap->cpumasks[(size_t)i * snap->nr_words];

		info->node_id = nid;
		for_each_cpu_and(cpu, cpumask_of_node(nid), cpu_online_mask) {
			row[cpu / MCP_CPUMASK_WORD_BITS] |=
				1ULL << (cpu % MCP_CPUMASK_WORD_BITS);
			info->nr_cpus++;
		}
		mcp_node_meminfo(nid, info);

		j = 0;
		for_each_node_mask(to, snap->online)
			snap->distances[(size_t)i * snap->nr_nodes + j++] =
				node_distance(nid, to);
		i++;
	}
	nr_cpus_online = num_online_cpus();

	cpus_read_unlock();

	return nr_cpus_online;
}

/*
 * Node entries are written with the caller's stride: the fields both sides
 * know, then zeroes for the rest of a larger caller's entry.
 */
static int mcp_topology_copy_nodes(const struct mcp_topology_snapshot *snap,
				   u64 uptr, u32 stride)
{
	size_t known = min_t(size_t, stride, sizeof(*snap->nodes));
	u8 __user *dst = u64_to_user_ptr(uptr);
	u32 i;

	if (stride == sizeof(*snap->nodes))
		return copy_to_user(dst, snap->nodes,
				    array_size(snap->nr_nodes, stride)) ?
			-EFAULT : 0;

	for (i = 0; i < snap->nr_nodes; i++, dst += stride) {
		if (copy_to_user(dst, &snap->nodes[i], known))
			return -EFAULT;
		if (stride > known && clear_user(dst + known, stride - known))
			return -EFAULT;
	}
	return 0;
}

static int mcp_topology_copy_out(const struct mcp_topology_snapshot *snap,
				 const struct mcp_topology *topo, u32 stride)
{
	size_t n = snap->nr_nodes;
	int ret;

	ret = mcp_topology_copy_nodes(snap, topo->nodes_ptr, stride);
	if (ret)
		return ret;
	if (copy_to_user(u64_to_user_ptr(topo->cpumasks_ptr), snap->cpumasks,
			 array3_size(n, snap->nr_words,
				     sizeof(*snap->cpumasks))))
		return -EFAULT;
	if (copy_to_user(u64_to_user_ptr(topo->distances_ptr), snap->distances,
			 array3_size(n, n, sizeof(*snap->distances))))
		return -EFAULT;
	return 0;
}

/**
 * mcp_mem_node() - the node with memory that serves a default on @node
 * @node:	a node id (a CPU's, a device's), or NUMA_NO_NODE
 *
 * A default node (the caller's, a device's, a CPU's) may be a memoryless
 * node: CPUs or a PCI root without memory.  numa_mem_id() does not help on
 * kernels without CONFIG_HAVE_MEMORYLESS_NODES (x86), where it is
 * numa_node_id() itself, and __GFP_THISNODE on such a node always fails.
 * An explicit node a caller asks for is never mapped through here: it is
 * refused (-EINVAL) when it has no memory.
 *
 * Return: @node when it has memory (N_MEMORY); otherwise the node with
 * memory nearest to it by node_distance(), the lowest id among equals;
 * NUMA_NO_NODE for NUMA_NO_NODE, a node id out of range, or no node with
 * memory (a booting system, never once the module loads).
 */
int mcp_mem_node(int node)
{
	int nid, dist, best = NUMA_NO_NODE, best_dist = INT_MAX;

	if (node < 0 || node >= MAX_NUMNODES)
		return NUMA_NO_NODE;
	if (node_state(node, N_MEMORY))
		return node;
	/* Ascending ids and a strict '<': ties go to the lowest id. */
	for_each_node_state(nid, N_MEMORY) {
		dist = node_distance(node, nid);
		if (dist < best_dist) {
			best = nid;
			best_dist = dist;
		}
	}
	return best;
}

/**
 * mcp_ioctl_get_topology() - MCP_IOC_GET_TOPOLOGY
 * @file:	the open /dev/mcp file
 * @karg:	kernel copy of the caller's struct mcp_topology
 *
 * Return: 0 with the arrays filled; -ENOSPC with only the out fields set
 * when the caller's capacities are too small; -EINVAL for unknown flags, a
 * non-zero reserved field or a bad node entry size; -ENOMEM; -EFAULT for a
 * bad array pointer.
 */
int mcp_ioctl_get_topology(struct file *file, void *karg)
{
	struct mcp_topology *topo = karg;
	struct mcp_topology_snapshot snap = { };
	u32 stride = topo->node_info_size ?: MCP_NODE_INFO_SIZE_VER0;
	int ret;

	if (topo->flags || topo->reserved)
		return -EINVAL;
	if (stride < MCP_NODE_INFO_SIZE_VER0 || stride > MCP_ARG_SIZE_MAX)
		return -EINVAL;

	snap.online = node_states[N_ONLINE];
	snap.nr_nodes = nodes_weight(snap.online);
	snap.nr_words = DIV_ROUND_UP(nr_cpu_ids, MCP_CPUMASK_WORD_BITS);

	topo->nr_nodes = snap.nr_nodes;
	topo->nr_cpu_words = snap.nr_words;
	topo->nr_cpu_ids = nr_cpu_ids;

	if (topo->nodes_cap < snap.nr_nodes ||
	    topo->cpumask_words < snap.nr_words) {
		topo->nr_cpus_online = num_online_cpus();
		return -ENOSPC;
	}

	ret = mcp_topology_alloc(&snap);
	if (ret)
		return ret;

	topo->nr_cpus_online = mcp_topology_fill(&snap);
	ret = mcp_topology_copy_out(&snap, topo, stride);

	mcp_topology_free(&snap);
	return ret;
}
