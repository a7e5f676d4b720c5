/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * MCP (Model Control Protocol): the userspace ABI of /dev/mcp.
 *
 * This is the one header shared by mcp.ko, libmcp, mcpctl and the tests.
 * Rules (Documentation/uapi.rst has the long form):
 *
 * - Only fixed-width types, natural alignment, explicit padding; user
 *   pointers travel as __u64.
 * - Every argument struct starts with "__u32 size": the caller stores
 *   sizeof() of the struct it was compiled with.  The kernel reads it with
 *   copy_struct_from_user() semantics: a shorter struct (older caller) is
 *   zero-extended, a longer one (newer caller) must have an all-zero tail
 *   or the call fails with -E2BIG.  A size below the first published
 *   version (MCP_*_SIZE_VER0) is -EINVAL.  Output is copied back up to the
 *   caller's size, so structs only ever grow at the end.
 * - The ioctl numbers encode the size of the first version of each struct
 *   and never change; the size field, not _IOC_SIZE, tells the versions
 *   apart.
 * - Unknown flag bits and non-zero reserved fields are -EINVAL; bad user
 *   pointers are -EFAULT; unknown ioctls are -ENOTTY.
 * - New fields come with a new MCP_FEAT_* bit reported by
 *   MCP_IOC_GET_VERSION.
 */
#ifndef _UAPI_LINUX_MCP_H
#define _UAPI_LINUX_MCP_H

#include <linux/ioctl.h>
#include <linux/types.h>

/* Character device: /dev/MCP_DEVICE_NAME. */
#define MCP_DEVICE_NAME		"mcp"

/*
 * ABI version.  The major changes only when an existing ioctl changes
 * incompatibly (libmcp refuses to talk to another major); the minor grows
 * with every backwards-compatible addition.
 */
#define MCP_ABI_MAJOR		1
#define MCP_ABI_MINOR		0

/* ioctl type byte; unused in Linux 6.1's ioctl-number.rst. */
#define MCP_IOC_MAGIC		0xE6

/*
 * Feature bits reported in mcp_version.features.  Written as shifts:
 * BIT_ULL() is not part of the uapi.
 */
#define MCP_FEAT_VERSION	(1ULL << 0)	/* MCP_IOC_GET_VERSION */
#define MCP_FEAT_TOPOLOGY	(1ULL << 1)	/* MCP_IOC_GET_TOPOLOGY */

/* Length of mcp_version.module_version, including the terminating NUL. */
#define MCP_MODULE_VERSION_LEN	64

/**
 * struct mcp_version - argument of MCP_IOC_GET_VERSION
 * @size:		in: sizeof(struct mcp_version) as the caller knows it
 * @flags:		in: must be 0
 * @abi_major:		out: MCP_ABI_MAJOR of the running module
 * @abi_minor:		out: MCP_ABI_MINOR of the running module
 * @features:		out: MCP_FEAT_* bits the module supports
 * @module_version:	out: the module's version string, NUL-terminated
 */
struct mcp_version {
	__u32 size;
	__u32 flags;
	__u32 abi_major;
	__u32 abi_minor;
	__u64 features;
	char module_version[MCP_MODULE_VERSION_LEN];
};

#define MCP_VERSION_SIZE_VER0	88

/**
 * struct mcp_node_info - one online NUMA node, an element of
 *			  mcp_topology.nodes_ptr
 * @node_id:		the kernel's node id (ids may have holes)
 * @nr_cpus:		online CPUs on the node
 * @mem_total_bytes:	memory managed by the node
 * @mem_free_bytes:	free memory on the node at the time of the call
 */
struct mcp_node_info {
	__u32 node_id;
	__u32 nr_cpus;
	__u64 mem_total_bytes;
	__u64 mem_free_bytes;
};

#define MCP_NODE_INFO_SIZE_VER0	24

/**
 * struct mcp_topology - argument of MCP_IOC_GET_TOPOLOGY
 * @size:		in: sizeof(struct mcp_topology) as the caller knows it
 * @flags:		in: must be 0
 * @nodes_cap:		in: capacity of the caller's arrays, in nodes
 * @cpumask_words:	in: __u64 words the caller gives each node's CPU mask
 * @nodes_ptr:		in: user address of @nodes_cap entries of
 *			@node_info_size bytes each (struct mcp_node_info)
 * @cpumasks_ptr:	in: user address of __u64[@nodes_cap * @cpumask_words];
 *			filled as @nr_nodes rows of @nr_cpu_words words (row
 *			stride @nr_cpu_words): bit (c % 64) of word (c / 64)
 *			of row n is set when online CPU c belongs to the n-th
 *			node of @nodes_ptr
 * @distances_ptr:	in: user address of __u32[@nodes_cap * @nodes_cap];
 *			filled as a @nr_nodes x @nr_nodes row-major matrix
 *			(row stride @nr_nodes) of SLIT distances between the
 *			nodes in the order of @nodes_ptr (10 = local)
 * @nr_nodes:		out: online NUMA nodes; the @nodes_cap needed
 * @nr_cpu_words:	out: the @cpumask_words needed (nr_cpu_ids / 64,
 *			rounded up)
 * @nr_cpus_online:	out: online CPUs in the system
 * @nr_cpu_ids:		out: highest possible CPU id + 1
 * @node_info_size:	in: sizeof(struct mcp_node_info) as the caller knows
 *			it, the stride of @nodes_ptr; 0 means
 *			MCP_NODE_INFO_SIZE_VER0.  Entries grow at the end like
 *			argument structs: a caller's larger entry gets a
 *			zeroed tail, a smaller one the fields that fit.
 *			Below MCP_NODE_INFO_SIZE_VER0 or above
 *			MCP_ARG_SIZE_MAX is -EINVAL.
 * @reserved:		in: must be 0
 *
 * Sized by the caller, not by the ABI: any number of nodes and CPUs fits.
 * When @nodes_cap or @cpumask_words is too small (0 asks for the sizes),
 * the call fails with -ENOSPC and still writes back the four out fields,
 * so the caller can allocate and retry (a node may come online between
 * the two calls: retry on -ENOSPC again).  Nothing is written through the
 * pointers unless the capacities suffice; a bad pointer is -EFAULT, and
 * then the arrays before it may already be written.
 */
struct mcp_topology {
	__u32 size;
	__u32 flags;
	__u32 nodes_cap;
	__u32 cpumask_words;
	__u64 nodes_ptr;
	__u64 cpumasks_ptr;
	__u64 distances_ptr;
	__u32 nr_nodes;
	__u32 nr_cpu_words;
	__u32 nr_cpus_online;
	__u32 nr_cpu_ids;
	__u32 node_info_size;
	__u32 reserved;
};

#define MCP_TOPOLOGY_SIZE_VER0	64

/* Largest argument struct the kernel accepts; larger sizes are -E2BIG. */
#define MCP_ARG_SIZE_MAX	4096

#define MCP_IOC_GET_VERSION	_IOWR(MCP_IOC_MAGIC, 0x00, struct mcp_version)
#define MCP_IOC_GET_TOPOLOGY	_IOWR(MCP_IOC_MAGIC, 0x01, struct mcp_topology)

#endif /* _UAPI_LINUX_MCP_H */
