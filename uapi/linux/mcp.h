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
#define MCP_FEAT_PLACE		(1ULL << 2)	/* MCP_IOC_PLACE, MCP_IOC_UNPLACE */
#define MCP_FEAT_EVENTS		(1ULL << 3)	/* generic netlink family "mcp" */
#define MCP_FEAT_DEVICES	(1ULL << 4)	/* devices: DEV_*, BAR_INFO, mmap, IRQ_* */
#define MCP_FEAT_BUFFERS	(1ULL << 5)	/* BO_*: buffer objects, dma-buf */
#define MCP_FEAT_DMA		(1ULL << 6)	/* ENGINE_INFO, DMA_SUBMIT, fences */
#define MCP_FEAT_GRAPHS		(1ULL << 7)	/* GRAPH_*, WORKER_REGISTER, JOB_DONE */
#define MCP_FEAT_JOB_BATCH	(1ULL << 8)	/* chained worker reads, JOBS_DONE */
#define MCP_FEAT_GRAPH_COMPACT	(1ULL << 9)	/* graphs in format version 2 */
#define MCP_FEAT_JOB_CHAINS	(1ULL << 10)	/* MCP_WORKER_CHAINS, CHAIN_DONE */
#define MCP_FEAT_WORKER_OPS	(1ULL << 11)	/* worker ops 64..65535 opaque */
#define MCP_FEAT_PLACE_ADAPTIVE	(1ULL << 12)	/* MCP_PLACE_ADAPTIVE */
#define MCP_FEAT_TUNE		(1ULL << 13)	/* TUNE_LIST, TUNE_SESSION, TUNE_* */

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

/*
 * NUMA-aware task placement (MCP_IOC_PLACE, MCP_IOC_UNPLACE).
 *
 * The module picks a node for a task: its memory home node when that node
 * has at least min_idle_cpus idle CPUs, else the nearest node (SLIT
 * distance) that has, else it leaves the task where it is.  It then narrows
 * the task's affinity to that node's CPUs intersected with the affinity the
 * task had when MCP first placed it; MCP never widens an affinity.
 * Permissions are those of sched_setaffinity(2).  Knobs live in
 * /sys/class/misc/mcp/placement/ (Documentation/ABI/testing/
 * sysfs-class-misc-mcp).
 */

/* mcp_place.flags */
#define MCP_PLACE_DRY_RUN	(1U << 0)	/* decide, do not apply */
#define MCP_PLACE_FORCE		(1U << 1)	/* ignore stickiness */
#define MCP_PLACE_KEEP		(1U << 2)	/* the rebalancer re-evaluates the task */
#define MCP_PLACE_STRICT	(1U << 3)	/* no node qualifies: -EAGAIN, not "unchanged" */
#define MCP_PLACE_NODE		(1U << 4)	/* place on mcp_place.node, no decision */
#define MCP_PLACE_ADAPTIVE	(1U << 5)	/* with KEEP: also move on run-queue latency */
#define MCP_PLACE_FLAGS_ALL	(MCP_PLACE_DRY_RUN | MCP_PLACE_FORCE | \
				 MCP_PLACE_KEEP | MCP_PLACE_STRICT | \
				 MCP_PLACE_NODE | MCP_PLACE_ADAPTIVE)

/* mcp_place.reason: why the task is where it is after the call. */
enum mcp_place_reason {
	MCP_PLACE_REASON_NONE = 0,
	MCP_PLACE_REASON_MEMORY_LOCAL = 1,	/* on its memory home node */
	MCP_PLACE_REASON_NEAREST = 2,		/* home busy: nearest node with idle CPUs */
	MCP_PLACE_REASON_STICKY = 3,		/* placed less than stickiness_ms ago */
	MCP_PLACE_REASON_UNCHANGED = 4,		/* no node qualified: left as it was */
	MCP_PLACE_REASON_FORCED = 5,		/* the caller named the node */
	MCP_PLACE_REASON_RUNQ_LATENCY = 6,	/* rebalancer: waited to run above its threshold */
};

/* mcp_place.home_source: where the memory home node came from. */
enum mcp_place_home_source {
	MCP_PLACE_HOME_NONE = 0,
	MCP_PLACE_HOME_HISTOGRAM = 1,	/* the caller's page histogram */
	MCP_PLACE_HOME_NUMA_FAULTS = 2,	/* the kernel's NUMA-balancing faults */
	MCP_PLACE_HOME_LAST_CPU = 3,	/* the node of the CPU it last ran on */
};

/**
 * struct mcp_place - argument of MCP_IOC_PLACE
 * @size:		in: sizeof(struct mcp_place) as the caller knows it
 * @flags:		in: MCP_PLACE_*
 * @pid:		in: target task (thread id); 0 = the calling thread
 * @node:		in: with MCP_PLACE_NODE, the node to place on; else 0
 * @histogram_ptr:	in: user address of __u64[@histogram_nodes], resident
 *			pages of the task per node id (libmcp samples them with
 *			move_pages(2)); 0 = let the module find the home node
 * @histogram_nodes:	in: entries at @histogram_ptr (at most
 *			MCP_PLACE_HISTOGRAM_MAX)
 * @mask_words:		in: __u64 words at @mask_ptr
 * @mask_ptr:		in: user address for the CPU mask applied (or that
 *			would be, with MCP_PLACE_DRY_RUN); 0 = not wanted.
 *			Bit (c % 64) of word (c / 64) is CPU c.  Too few
 *			words is -ENOSPC with @nr_cpu_words set, and nothing
 *			applied.
 * @idle_ptr:		in: user address of __u32[@idle_nodes]: idle CPUs
 *			the module saw per node id; 0 = not wanted
 * @idle_nodes:		in: entries at @idle_ptr; nodes beyond are not
 *			reported
 * @node_chosen:	out: node the task is placed on, -1 for none
 * @prev_node:		out: the node of the CPU the task last ran on
 * @home_node:		out: the memory home node, -1 if unknown
 * @reason:		out: enum mcp_place_reason
 * @home_source:	out: enum mcp_place_home_source
 * @nr_cpu_words:	out: @mask_words needed
 * @nr_node_ids:	out: node ids in the system (size for @idle_nodes
 *			and @histogram_nodes)
 * @runq_threshold_us:	in: with MCP_PLACE_ADAPTIVE, the mean run-queue wait
 *			per run (us, /proc/PID/schedstat's run_delay over
 *			pcount) above which the rebalancer moves the task;
 *			0 = the adaptive_runq_us knob.  Else must be 0.
 * @reserved:		in: must be 0
 *
 * MCP_PLACE_ADAPTIVE (MCP_FEAT_PLACE_ADAPTIVE) needs MCP_PLACE_KEEP: each
 * rebalancer pass also measures the task's mean wait per run since the
 * last pass; after adaptive_periods passes in a row above the threshold it
 * moves the task to the node with the most idle CPUs (at least
 * min_idle_cpus, more than the current node; ties: the nearest) that its
 * affinity allows, with reason MCP_PLACE_REASON_RUNQ_LATENCY.
 */
struct mcp_place {
	__u32 size;
	__u32 flags;
	__s32 pid;
	__u32 node;
	__u64 histogram_ptr;
	__u32 histogram_nodes;
	__u32 mask_words;
	__u64 mask_ptr;
	__u64 idle_ptr;
	__u32 idle_nodes;
	__s32 node_chosen;
	__s32 prev_node;
	__s32 home_node;
	__u32 reason;
	__u32 home_source;
	__u32 nr_cpu_words;
	__u32 nr_node_ids;
	__u32 runq_threshold_us;
	__u32 reserved;
};

#define MCP_PLACE_SIZE_VER0		88
#define MCP_PLACE_HISTOGRAM_MAX		4096

/**
 * struct mcp_unplace - argument of MCP_IOC_UNPLACE: give the task back the
 *			affinity it had before MCP first placed it and forget it
 * @size:	in: sizeof(struct mcp_unplace)
 * @flags:	in: must be 0
 * @pid:	in: target task; 0 = the calling thread
 * @reserved:	in: must be 0
 *
 * A task MCP never placed is -ENOENT.
 */
struct mcp_unplace {
	__u32 size;
	__u32 flags;
	__s32 pid;
	__u32 reserved;
};

#define MCP_UNPLACE_SIZE_VER0	16

/*
 * Events: generic netlink family MCP_GENL_NAME, multicast group
 * MCP_GENL_EVENTS_GROUP.  Every placement decision that moves or keeps a
 * task (by MCP_IOC_PLACE without MCP_PLACE_DRY_RUN, or by the rebalancer)
 * is sent as an MCP_CMD_EVENT_PLACE message.  Later features add commands
 * and attributes here; listeners ignore what they do not know.
 */
#define MCP_GENL_NAME		"mcp"
#define MCP_GENL_VERSION	1
#define MCP_GENL_EVENTS_GROUP	"events"

enum mcp_genl_cmd {
	MCP_CMD_UNSPEC,
	MCP_CMD_EVENT_PLACE,	/* a placement decision was applied */
	__MCP_CMD_MAX,
};

#define MCP_CMD_MAX (__MCP_CMD_MAX - 1)

/* enum mcp_place_origin: who made a placement decision. */
enum mcp_place_origin {
	MCP_PLACE_ORIGIN_IOCTL = 1,
	MCP_PLACE_ORIGIN_REBALANCER = 2,
	MCP_PLACE_ORIGIN_UNPLACE = 3,
};

enum mcp_genl_attr {
	MCP_ATTR_UNSPEC,
	MCP_ATTR_PID,		/* u32: thread id */
	MCP_ATTR_COMM,		/* string: task comm */
	MCP_ATTR_FROM_NODE,	/* s32: node before, -1 unknown */
	MCP_ATTR_TO_NODE,	/* s32: node after, -1 none */
	MCP_ATTR_REASON,	/* u32: enum mcp_place_reason */
	MCP_ATTR_ORIGIN,	/* u32: enum mcp_place_origin */
	MCP_ATTR_TIMESTAMP_NS,	/* u64: CLOCK_MONOTONIC, ns */
	MCP_ATTR_PAD,
	__MCP_ATTR_MAX,
};

#define MCP_ATTR_MAX (__MCP_ATTR_MAX - 1)

/*
 * Accelerator devices.
 *
 * mcp.ko is also a PCI driver.  Every PCI function bound to it (its ID
 * table, or the standard new_id / driver_override sysfs files) gets a
 * small device index, stable for as long as it stays bound.  The /dev/mcp
 * fd lists and describes them (MCP_IOC_DEV_LIST, MCP_IOC_DEV_INFO) and
 * opens one (MCP_IOC_DEV_OPEN), which returns a device fd: BARs are mapped
 * with mmap() on it at the offsets MCP_IOC_BAR_INFO gives, interrupts are
 * connected to eventfds with MCP_IOC_IRQ_SET_EVENTFD, and every later
 * per-device object hangs off it.
 *
 * When the device goes away (unbind, hot-unplug) every user mapping of its
 * BARs is revoked: later accesses get SIGBUS and later ioctls on the device
 * fd -ENODEV; the fd itself stays valid until closed.  A function reset
 * revokes the mappings for its duration; they fault back in afterwards.
 */

/* Largest number of BARs of a PCI function (PCI_STD_NUM_BARS). */
#define MCP_DEV_MAX_BARS	6

/* Length of mcp_dev_info.backend, including the terminating NUL. */
#define MCP_DEV_BACKEND_LEN	16

/* mcp_dev_bar.flags */
#define MCP_BAR_PRESENT		(1U << 0)	/* the BAR is implemented */
#define MCP_BAR_MEM		(1U << 1)	/* memory space (else I/O ports) */
#define MCP_BAR_64BIT		(1U << 2)	/* 64-bit memory BAR */
#define MCP_BAR_PREFETCH	(1U << 3)	/* prefetchable memory BAR */
#define MCP_BAR_MAPPABLE	(1U << 4)	/* can be mmap()ed (memory, page-aligned) */
#define MCP_BAR_WC_OK		(1U << 5)	/* may be mapped write-combining */

/**
 * struct mcp_dev_bar - one BAR of a device, an element of mcp_dev_info.bars
 * @start:	bus-independent physical start, as in sysfs "resource"
 * @len:	length in bytes; 0 when not present
 * @flags:	MCP_BAR_*
 * @reserved:	0
 */
struct mcp_dev_bar {
	__u64 start;
	__u64 len;
	__u32 flags;
	__u32 reserved;
};

/* mcp_dev_info.irq_type */
enum mcp_irq_type {
	MCP_IRQ_NONE = 0,
	MCP_IRQ_INTX = 1,
	MCP_IRQ_MSI = 2,
	MCP_IRQ_MSIX = 3,
};

/* mcp_dev_info.link_flags */
#define MCP_LINK_PCIE		(1U << 0)	/* a PCI Express function; link fields valid */
#define MCP_LINK_SPEED_DEGRADED	(1U << 1)	/* trained below the speed both ends can do */
#define MCP_LINK_WIDTH_DEGRADED	(1U << 2)	/* trained narrower than both ends can do */

/* mcp_dev_info.wc_test: result of the write-combining self-test */
enum mcp_wc_test {
	MCP_WC_UNTESTED = 0,		/* no WC-capable BAR to test on */
	MCP_WC_UNSUPPORTED = 1,		/* the platform cannot map WC (no PAT) */
	MCP_WC_NOT_COMBINING = 2,	/* WC maps work but writes do not combine */
	MCP_WC_COMBINING = 3,		/* WC mappings combine writes */
	MCP_WC_NOT_RUN = 4,		/* not run: not declared safe (generic) */
};

/* mcp_dev_info.dev_flags */
#define MCP_DEV_GENERIC		(1U << 0)	/* no device-specific backend */

/**
 * struct mcp_dev_list - argument of MCP_IOC_DEV_LIST
 * @size:	in: sizeof(struct mcp_dev_list)
 * @flags:	in: must be 0
 * @cap:	in: entries at @indices_ptr
 * @count:	out: devices bound to mcp.ko; the @cap needed
 * @indices_ptr: in: user address of __u32[@cap], filled with the device
 *		indices in ascending order
 *
 * Too small a @cap (0 asks) is -ENOSPC with @count set; nothing is written
 * through @indices_ptr then.
 */
struct mcp_dev_list {
	__u32 size;
	__u32 flags;
	__u32 cap;
	__u32 count;
	__u64 indices_ptr;
};

#define MCP_DEV_LIST_SIZE_VER0	24

/**
 * struct mcp_dev_info - argument of MCP_IOC_DEV_INFO
 * @size:		in: sizeof(struct mcp_dev_info)
 * @flags:		in: must be 0
 * @index:		in: device index from MCP_IOC_DEV_LIST
 * @numa_node:		out: NUMA node of the device, -1 when the platform
 *			does not say (dev_to_node())
 * @pci_domain:		out: PCI address: domain
 * @pci_bus:		out: bus
 * @pci_slot:		out: device (slot)
 * @pci_func:		out: function
 * @revision:		out: revision ID
 * @vendor:		out: vendor ID
 * @device:		out: device ID
 * @subsystem_vendor:	out: subsystem vendor ID
 * @subsystem_device:	out: subsystem ID
 * @class_code:		out: 24-bit class code (base, sub-class, prog-if)
 * @dev_flags:		out: MCP_DEV_*
 * @backend:		out: name of the backend driving it ("edu",
 *			"generic"), NUL-terminated
 * @irq_type:		out: enum mcp_irq_type in use
 * @irq_count:		out: interrupt vectors; valid vectors for
 *			MCP_IOC_IRQ_SET_EVENTFD are 0 .. @irq_count - 1
 * @dma_mask:		out: DMA mask the backend set
 * @link_flags:		out: MCP_LINK_*
 * @link_speed:		out: current link speed in MT/s (2500, 5000, 8000,
 *			16000, 32000, 64000); 0 unknown
 * @link_speed_cap:	out: the most the device can do, MT/s; 0 unknown
 * @link_width:		out: current link width (lanes); 0 unknown
 * @link_width_cap:	out: the most the device can do; 0 unknown
 * @wc_test:		out: enum mcp_wc_test
 * @open_count:		out: open device fds
 * @reserved:		in: must be 0
 * @bars:		out: the six BARs
 *
 * An index that is not bound is -ENODEV.
 */
struct mcp_dev_info {
	__u32 size;
	__u32 flags;
	__u32 index;
	__s32 numa_node;
	__u32 pci_domain;
	__u8 pci_bus;
	__u8 pci_slot;
	__u8 pci_func;
	__u8 revision;
	__u16 vendor;
	__u16 device;
	__u16 subsystem_vendor;
	__u16 subsystem_device;
	__u32 class_code;
	__u32 dev_flags;
	char backend[MCP_DEV_BACKEND_LEN];
	__u32 irq_type;
	__u32 irq_count;
	__u64 dma_mask;
	__u32 link_flags;
	__u32 link_speed;
	__u32 link_speed_cap;
	__u16 link_width;
	__u16 link_width_cap;
	__u32 wc_test;
	__u32 open_count;
	__u64 reserved;
	struct mcp_dev_bar bars[MCP_DEV_MAX_BARS];
};

#define MCP_DEV_INFO_SIZE_VER0	248

/**
 * struct mcp_dev_open - argument of MCP_IOC_DEV_OPEN
 * @size:	in: sizeof(struct mcp_dev_open)
 * @flags:	in: must be 0 (the fd is always O_CLOEXEC)
 * @index:	in: device index
 * @fd:		out: the device fd
 *
 * An index that is not bound is -ENODEV.
 */
struct mcp_dev_open {
	__u32 size;
	__u32 flags;
	__u32 index;
	__s32 fd;
};

#define MCP_DEV_OPEN_SIZE_VER0	16

/* mcp_bar_info.wc_status: why a write-combining mapping is or is not allowed */
enum mcp_wc_status {
	MCP_WC_ALLOWED = 0,		/* mmap at wc_offset maps write-combining */
	MCP_WC_NOT_PREFETCHABLE = 1,	/* not prefetchable nor declared WC-safe by the backend */
	MCP_WC_NO_PLATFORM = 2,		/* the platform cannot map WC */
	MCP_WC_NOT_MAPPABLE = 3,	/* the BAR cannot be mapped at all */
};

/**
 * struct mcp_bar_info - argument of MCP_IOC_BAR_INFO, on a device fd
 * @size:	in: sizeof(struct mcp_bar_info)
 * @flags:	in: must be 0
 * @bar:	in: BAR number, 0 .. MCP_DEV_MAX_BARS - 1
 * @bar_flags:	out: MCP_BAR_*
 * @len:	out: BAR length in bytes
 * @offset:	out: mmap() offset of an uncached mapping of the BAR
 * @wc_offset:	out: mmap() offset of a write-combining mapping
 * @wc_status:	out: enum mcp_wc_status; mmap() at @wc_offset is -EINVAL
 *		unless MCP_WC_ALLOWED
 * @reserved:	in: must be 0
 *
 * mmap() on the device fd maps [offset, offset + len) of a BAR at
 * @offset (or @wc_offset) plus a page-aligned position inside it; it needs
 * CAP_SYS_RAWIO (like sysfs resourceN), MAP_SHARED, and must stay inside
 * the BAR (else -EINVAL).  A BAR that is not MCP_BAR_MAPPABLE is -EINVAL.
 * A BAR is mapped in one cache mode at a time: while it has a mapping at
 * @offset, mmap() at @wc_offset is -EBUSY, and the other way round.
 */
struct mcp_bar_info {
	__u32 size;
	__u32 flags;
	__u32 bar;
	__u32 bar_flags;
	__u64 len;
	__u64 offset;
	__u64 wc_offset;
	__u32 wc_status;
	__u32 reserved;
};

#define MCP_BAR_INFO_SIZE_VER0	48

/**
 * struct mcp_irq_eventfd - argument of MCP_IOC_IRQ_SET_EVENTFD, on a
 *			    device fd
 * @size:	in: sizeof(struct mcp_irq_eventfd)
 * @flags:	in: must be 0
 * @vector:	in: interrupt vector, 0 .. mcp_dev_info.irq_count - 1
 * @eventfd:	in: eventfd to signal on each interrupt; -1 disconnects
 *
 * One eventfd per vector and device; a new one replaces the old.  A
 * connected vector belongs to the device fd that connected it: from any
 * other device fd, connecting or disconnecting it is -EBUSY.  The
 * device's backend acknowledges the interrupt in the device; a device
 * without a backend that interrupts through INTx has the line masked after
 * each interrupt until MCP_IOC_IRQ_UNMASK (as VFIO does).  Closing the
 * device fd disconnects its eventfds.
 */
struct mcp_irq_eventfd {
	__u32 size;
	__u32 flags;
	__u32 vector;
	__s32 eventfd;
};

#define MCP_IRQ_EVENTFD_SIZE_VER0	16

/**
 * struct mcp_irq_unmask - argument of MCP_IOC_IRQ_UNMASK, on a device fd
 * @size:	in: sizeof(struct mcp_irq_unmask)
 * @flags:	in: must be 0
 * @vector:	in: interrupt vector
 * @reserved:	in: must be 0
 *
 * Re-enables a masked INTx line; a no-op for MSI, MSI-X and for devices
 * whose backend acknowledges interrupts itself.
 */
struct mcp_irq_unmask {
	__u32 size;
	__u32 flags;
	__u32 vector;
	__u32 reserved;
};

#define MCP_IRQ_UNMASK_SIZE_VER0	16

/*
 * Buffer objects and DMA.
 *
 * Every open /dev/mcp file and every device fd is a context: it owns the
 * buffer objects (BOs) it created or imported, named by handles that are
 * only meaningful on that fd, and the DMA jobs it submitted.  On a device
 * fd, BOs are DMA-mapped for the device and its DMA engine is available;
 * on /dev/mcp (the host context, for hosts without an accelerator) only
 * the cpu engine is.  Closing the fd destroys its handles; a BO lives on
 * while a job, a mapping or an exported dma-buf still uses it.
 */

/* mcp_bo_create.flags */
#define MCP_BO_COHERENT		(1U << 0)	/* coherent DMA memory; default: streaming */
#define MCP_BO_HUGEPAGE		(1U << 1)	/* 2 MiB pages; length a multiple of 2 MiB */
#define MCP_BO_NODE		(1U << 2)	/* allocate on @node */
#define MCP_BO_CREATE_FLAGS	(MCP_BO_COHERENT | MCP_BO_HUGEPAGE | MCP_BO_NODE)

/* Largest BO, kernel-allocated, pinned or imported: 4 GiB. */
#define MCP_BO_MAX_LENGTH	(1ULL << 32)

/**
 * struct mcp_bo_create - argument of MCP_IOC_BO_CREATE
 * @size:	in: sizeof(struct mcp_bo_create)
 * @flags:	in: MCP_BO_*
 * @length:	in: bytes, 1 .. MCP_BO_MAX_LENGTH, rounded up to a page
 *		(to 2 MiB with MCP_BO_HUGEPAGE)
 * @node:	in: with MCP_BO_NODE, an online NUMA node with memory
 *		(-EINVAL for one without); otherwise the device's node (any
 *		node, the caller's first, for a device without one), or the
 *		caller's on the host context, where a default node without
 *		memory stands for the nearest node with memory (SLIT
 *		distance, the lowest id among equals)
 * @handle:	out: the new BO's handle, never 0
 * @reserved:	in: must be 0
 *
 * Kernel memory, zeroed, charged to the caller's memory cgroup; -ENOMEM
 * when it cannot be had on @node (it is never silently placed elsewhere).
 */
struct mcp_bo_create {
	__u32 size;
	__u32 flags;
	__u64 length;
	__s32 node;
	__u32 handle;
	__u64 reserved;
};

#define MCP_BO_CREATE_SIZE_VER0		32

/* mcp_bo_userptr.flags */
#define MCP_BO_USERPTR_WRITE	(1U << 0)	/* DMA may write: pinned for writing */
#define MCP_BO_USERPTR_FLAGS	(MCP_BO_USERPTR_WRITE)

/**
 * struct mcp_bo_userptr - argument of MCP_IOC_BO_USERPTR
 * @size:	in: sizeof(struct mcp_bo_userptr)
 * @flags:	in: MCP_BO_USERPTR_*
 * @addr:	in: page-aligned start of the caller's memory
 * @length:	in: page-aligned length, 1 page .. MCP_BO_MAX_LENGTH
 * @handle:	out: the new BO's handle
 * @reserved:	in: must be 0
 *
 * Pins the pages (long-term) until the BO is destroyed, charged to
 * RLIMIT_MEMLOCK unless the caller has CAP_IPC_LOCK: over the limit is
 * -ENOMEM.  Without MCP_BO_USERPTR_WRITE the pages are pinned read-only
 * and the BO cannot be a DMA destination (-EACCES at submit).
 */
struct mcp_bo_userptr {
	__u32 size;
	__u32 flags;
	__u64 addr;
	__u64 length;
	__u32 handle;
	__u32 reserved;
};

#define MCP_BO_USERPTR_SIZE_VER0	32

/* mcp_bo_info.kind */
enum mcp_bo_kind {
	MCP_BO_KIND_KERNEL = 0,		/* MCP_IOC_BO_CREATE */
	MCP_BO_KIND_USERPTR = 1,	/* MCP_IOC_BO_USERPTR */
	MCP_BO_KIND_IMPORT = 2,		/* MCP_IOC_BO_IMPORT */
};

/* mcp_bo_info.mmap_offset of a BO that cannot be mapped through the fd */
#define MCP_BO_NO_MMAP		(~0ULL)

/**
 * struct mcp_bo_info - argument of MCP_IOC_BO_INFO
 * @size:	in: sizeof(struct mcp_bo_info)
 * @flags:	in: must be 0
 * @handle:	in: the BO
 * @kind:	out: enum mcp_bo_kind
 * @length:	out: bytes
 * @bo_flags:	out: the MCP_BO_* or MCP_BO_USERPTR_* flags it was made with
 * @node:	out: NUMA node of its memory; -1 when mixed or unknown
 * @mmap_offset: out: mmap() offset of the whole BO on this fd (MAP_SHARED),
 *		or MCP_BO_NO_MMAP (user-pointer BOs: map the memory itself)
 * @jobs:	out: DMA jobs in flight that use it
 * @reserved:	in: must be 0
 */
struct mcp_bo_info {
	__u32 size;
	__u32 flags;
	__u32 handle;
	__u32 kind;
	__u64 length;
	__u32 bo_flags;
	__s32 node;
	__u64 mmap_offset;
	__u32 jobs;
	__u32 reserved;
};

#define MCP_BO_INFO_SIZE_VER0		48

/**
 * struct mcp_bo_export - argument of MCP_IOC_BO_EXPORT
 * @size:	in: sizeof(struct mcp_bo_export)
 * @flags:	in: must be 0 (the fd is always O_RDWR | O_CLOEXEC)
 * @handle:	in: a kernel BO (user-pointer and imported BOs: -EINVAL)
 * @fd:		out: a dma-buf fd of the BO; mmap()able, importable by any
 *		driver and by MCP_IOC_BO_IMPORT
 */
struct mcp_bo_export {
	__u32 size;
	__u32 flags;
	__u32 handle;
	__s32 fd;
};

#define MCP_BO_EXPORT_SIZE_VER0		16

/**
 * struct mcp_bo_import - argument of MCP_IOC_BO_IMPORT
 * @size:	in: sizeof(struct mcp_bo_import)
 * @flags:	in: must be 0
 * @fd:		in: a dma-buf fd (from any exporter: MCP, vgem, a GPU driver)
 * @handle:	out: a new handle for it on this fd
 * @length:	out: its length in bytes
 *
 * Not a dma-buf: -EINVAL; bad fd: -EBADF.
 */
struct mcp_bo_import {
	__u32 size;
	__u32 flags;
	__s32 fd;
	__u32 handle;
	__u64 length;
};

#define MCP_BO_IMPORT_SIZE_VER0		24

/**
 * struct mcp_bo_destroy - argument of MCP_IOC_BO_DESTROY
 * @size:	in: sizeof(struct mcp_bo_destroy)
 * @flags:	in: must be 0
 * @handle:	in: the BO; unknown: -ENOENT
 * @reserved:	in: must be 0
 *
 * The handle is gone at once; jobs in flight finish with the memory.
 */
struct mcp_bo_destroy {
	__u32 size;
	__u32 flags;
	__u32 handle;
	__u32 reserved;
};

#define MCP_BO_DESTROY_SIZE_VER0	16

/* Engines of a context, the index in mcp_engine_info and mcp_dma_submit. */
#define MCP_ENGINE_CPU		0	/* kernel workers copying with the CPU */
#define MCP_ENGINE_DEVICE	1	/* the device's DMA engine (device fds) */

#define MCP_ENGINE_NAME_LEN	16

/**
 * struct mcp_engine_info - argument of MCP_IOC_ENGINE_INFO
 * @size:	in: sizeof(struct mcp_engine_info)
 * @flags:	in: must be 0
 * @engine:	in: MCP_ENGINE_*; one this context does not have: -ENOENT
 * @node:	out: NUMA node it runs on, -1 for any
 * @name:	out: "cpu", or the backend's name ("edu"), NUL-terminated
 * @max_chunk:	out: bytes it moves per hardware transfer; 0: no limit
 * @inflight:	out: jobs it runs at once
 * @submitted:	out: jobs submitted to it on this context
 * @completed:	out: of which finished successfully
 * @failed:	out: of which failed, including time-outs
 * @timed_out:	out: of which timed out
 * @wc_depth:	out: the coalescing depth in force (sysfs)
 * @wc_timeout_us: out: the coalescing time-out in force (sysfs)
 */
struct mcp_engine_info {
	__u32 size;
	__u32 flags;
	__u32 engine;
	__s32 node;
	char name[MCP_ENGINE_NAME_LEN];
	__u32 max_chunk;
	__u32 inflight;
	__u64 submitted;
	__u64 completed;
	__u64 failed;
	__u64 timed_out;
	__u32 wc_depth;
	__u32 wc_timeout_us;
};

#define MCP_ENGINE_INFO_SIZE_VER0	80

/* mcp_dma_submit.flags */
#define MCP_DMA_ASYNC		(1U << 0)	/* return an out-fence, do not wait */
#define MCP_DMA_IN_FENCE	(1U << 1)	/* start after @in_fence signals */
#define MCP_DMA_FLAGS		(MCP_DMA_ASYNC | MCP_DMA_IN_FENCE)

/**
 * struct mcp_dma_submit - argument of MCP_IOC_DMA_SUBMIT
 * @size:	in: sizeof(struct mcp_dma_submit)
 * @flags:	in: MCP_DMA_*
 * @engine:	in: MCP_ENGINE_*
 * @in_fence:	in: with MCP_DMA_IN_FENCE, a sync_file fd; a fence that
 *		signals an error fails this job with -ECANCELED
 * @src_handle:	in: source BO
 * @dst_handle:	in: destination BO
 * @src_offset:	in: byte offset in the source
 * @dst_offset:	in: byte offset in the destination
 * @length:	in: bytes to copy; 0 is a valid empty job.  Ranges past a
 *		BO's end or overlapping in one BO: -EINVAL
 * @deadline_ns: in: absolute CLOCK_MONOTONIC time by which the job must
 *		be done, else it is aborted with -ETIMEDOUT (the engine is
 *		reset; later jobs run); 0: now + the job_timeout_ms knob
 * @out_fence:	out: with MCP_DMA_ASYNC, a sync_file fd (O_CLOEXEC) that
 *		signals when the job is done; its status is the job's
 *		result (SYNC_IOC_FILE_INFO); -1 otherwise
 * @reserved:	in: must be 0
 * @seqno:	out: the job's sequence number on this context, from 1
 *
 * Synchronous (no MCP_DMA_ASYNC): waits killably for the job and returns
 * its result; a fatal signal returns -EINTR and the job finishes alone.
 */
struct mcp_dma_submit {
	__u32 size;
	__u32 flags;
	__u32 engine;
	__s32 in_fence;
	__u32 src_handle;
	__u32 dst_handle;
	__u64 src_offset;
	__u64 dst_offset;
	__u64 length;
	__u64 deadline_ns;
	__s32 out_fence;
	__u32 reserved;
	__u64 seqno;
};

#define MCP_DMA_SUBMIT_SIZE_VER0	72

/*
 * Inference graphs (Documentation/graphs.rst).
 *
 * A graph is a DAG of operators over tensors that live in buffers.  Its
 * binary form is self-contained and has no pointers: little-endian, every
 * section 8-byte aligned, in this order:
 *
 *   struct mcp_graph_header
 *   struct mcp_graph_buffer[n_buffers]	buffers, by index
 *   struct mcp_graph_tensor[n_tensors]	views into buffers
 *   struct mcp_graph_node[n_nodes]	operators, in any order
 *   blob[blob_len]			parameters and names
 *
 * A graph names buffers by index, not by handle, so a file can be made
 * once and run by any process: MCP_IOC_GRAPH_CREATE binds every buffer
 * index to a BO of the caller's fd, and MCP_IOC_GRAPH_EXEC may rebind
 * some of them for one execution (record once, submit many).
 *
 * Names and parameters are byte ranges of the blob.  A range with length
 * 0 is "none" and its offset must be 0.  Names are UTF-8 without NUL.
 *
 * Format version 2 (MCP_GRAPH_VERSION_COMPACT, MCP_FEAT_GRAPH_COMPACT)
 * stores the same tables as unsigned LEB128 varints, between the header
 * and the blob, without reserved fields or unused slots:
 *
 *   buffer  length flags name_offset name_len init_offset init_len
 *   tensor  buffer dtype rank layout flags offset dims[rank]
 *	     name_offset name_len
 *   node    op engine flags n_inputs n_outputs inputs[n_inputs]
 *	     outputs[n_outputs] param_offset param_len name_offset name_len
 *
 * then zero padding to a multiple of 8 bytes.  The header is the same
 * struct; total_len = 48 + tables + blob_len.  A varint is at most as
 * long as its field's width allows (2 bytes for __u8, 3 for __u16, 5 for
 * __u32, 10 for __u64) and its value fits the field.  The kernel decodes
 * version 2 into the version 1 tables and validates those.
 */
#define MCP_GRAPH_MAGIC		0x4850474dU	/* "MGPH" little-endian */
#define MCP_GRAPH_VERSION	1
#define MCP_GRAPH_VERSION_COMPACT	2
/* Fewest bytes one record of version 2 takes: a varint per field. */
#define MCP_GRAPH_COMPACT_MIN_BUFFER	6
#define MCP_GRAPH_COMPACT_MIN_TENSOR	8
#define MCP_GRAPH_COMPACT_MIN_NODE	9
/* Most bytes: widest varints, MCP_GRAPH_MAX_RANK dims, every slot. */
#define MCP_GRAPH_COMPACT_MAX_BUFFER	35
#define MCP_GRAPH_COMPACT_MAX_TENSOR	63
#define MCP_GRAPH_COMPACT_MAX_NODE	61

#define MCP_GRAPH_MAX_RANK	6
#define MCP_GRAPH_MAX_INPUTS	4
#define MCP_GRAPH_MAX_OUTPUTS	2
/* Bytes of one node's parameters; also what a worker job carries. */
#define MCP_GRAPH_MAX_PARAM	256
/* Entries of a graph's buffer table. */
#define MCP_GRAPH_MAX_BUFFERS	64
/* Every tensor starts on, and is padded to, a 64-byte line. */
#define MCP_GRAPH_ALIGN		64

/**
 * struct mcp_graph_header - first bytes of a graph
 * @magic:	MCP_GRAPH_MAGIC
 * @version:	MCP_GRAPH_VERSION, or MCP_GRAPH_VERSION_COMPACT
 * @header_size: sizeof(struct mcp_graph_header), 48
 * @flags:	must be 0
 * @n_buffers:	entries of the buffer table, 1 .. MCP_GRAPH_MAX_BUFFERS
 * @n_tensors:	entries of the tensor table, 1 .. the max_tensors knob
 * @n_nodes:	entries of the node table, 1 .. the max_nodes knob
 * @blob_len:	bytes of the blob, a multiple of 8, .. the max_blob knob
 * @name_offset: the graph's name: its first byte in the blob
 * @name_len:	its length in bytes (0: no name)
 * @reserved:	must be 0
 * @total_len:	bytes of the whole graph, what the sections add up to
 *		(version 2: at least 48 + @blob_len, the tables a multiple
 *		of 8 bytes)
 */
struct mcp_graph_header {
	__u32 magic;
	__u16 version;
	__u16 header_size;
	__u32 flags;
	__u32 n_buffers;
	__u32 n_tensors;
	__u32 n_nodes;
	__u32 blob_len;
	__u32 name_offset;
	__u32 name_len;
	__u32 reserved;
	__u64 total_len;
};

/* mcp_graph_buffer.flags: what the buffer is for; informative to the kernel */
#define MCP_GRAPH_BUF_INPUT	(1U << 0)	/* filled by the caller before exec */
#define MCP_GRAPH_BUF_OUTPUT	(1U << 1)	/* read by the caller after exec */
#define MCP_GRAPH_BUF_CONST	(1U << 2)	/* weights: same for every exec */
#define MCP_GRAPH_BUF_FLAGS	(MCP_GRAPH_BUF_INPUT | MCP_GRAPH_BUF_OUTPUT | \
				 MCP_GRAPH_BUF_CONST)

/**
 * struct mcp_graph_buffer - one buffer the graph's tensors live in
 * @length:	bytes the graph needs; a bound BO must be at least as long
 * @flags:	MCP_GRAPH_BUF_*
 * @name_offset: its name: a blob range
 * @name_len:
 * @init_offset: how userspace fills it before the first exec (libmcp:
 *		struct mcp_graph_init), a blob range; the kernel only checks
 *		that the range is inside the blob
 * @init_len:
 * @reserved:	must be 0
 */
struct mcp_graph_buffer {
	__u64 length;
	__u32 flags;
	__u32 name_offset;
	__u32 name_len;
	__u32 init_offset;
	__u32 init_len;
	__u32 reserved;
};

/* mcp_graph_tensor.dtype */
enum mcp_dtype {
	MCP_DTYPE_F32 = 1,
	MCP_DTYPE_I8 = 2,
	MCP_DTYPE_U8 = 3,
	MCP_DTYPE_I32 = 4,
};

/* mcp_graph_tensor.layout */
enum mcp_layout {
	MCP_LAYOUT_DENSE = 0,	/* row-major, last dimension innermost */
	MCP_LAYOUT_NHWC = 1,	/* rank 4 [N][H][W][C], row-major */
	MCP_LAYOUT_TILED16 = 2,	/* rank 5 [B][H/16][S][D][16], see MCP_OP_TILE16 */
};

/**
 * struct mcp_graph_tensor - a dense view into a buffer
 * @buffer:	index in the buffer table
 * @dtype:	enum mcp_dtype
 * @rank:	0 .. MCP_GRAPH_MAX_RANK (0: a scalar)
 * @layout:	enum mcp_layout
 * @flags:	must be 0
 * @offset:	byte offset in the buffer, a multiple of MCP_GRAPH_ALIGN
 * @dims:	the first @rank are >= 1, the rest 0
 * @name_offset: its name: a blob range
 * @name_len:
 *
 * Its bytes are the product of @dims times the dtype's size, rounded up to
 * MCP_GRAPH_ALIGN: they must lie inside the buffer's @length.
 */
struct mcp_graph_tensor {
	__u32 buffer;
	__u8 dtype;
	__u8 rank;
	__u8 layout;
	__u8 flags;
	__u64 offset;
	__u32 dims[MCP_GRAPH_MAX_RANK];
	__u32 name_offset;
	__u32 name_len;
};

/*
 * Operators (mcp_graph_node.op).  "in N"/"out N" are the node's inputs
 * and outputs.
 *
 * Ops 1..63 are the kernel's; 64 (MCP_OP_WNOP) .. 65535 are the worker
 * range.  MCP_IOC_GRAPH_CREATE checks the kernel's operators in full
 * (arity, parameters, dtypes, shapes).  With MCP_FEAT_WORKER_OPS a
 * worker-range op is opaque to the kernel: any of them is accepted on a
 * MCP_GRAPH_ENGINE_WORKER node, which is checked only for its slots,
 * tensor bounds, aliasing, dependencies, engine class and the blob range
 * and size (MCP_GRAPH_MAX_PARAM) of its parameters, and reaches workers
 * with its op code as given.  The rules of the worker operators below are
 * libmcp's, which refuses a graph breaking them, or naming an op it does
 * not know, when it is loaded.  A module without the bit also checks the
 * operators below and refuses any other op.
 *
 * Data movement, run by the kernel (MCP_GRAPH_ENGINE_CPU or _DEVICE):
 *   NOP	no inputs or outputs required; does nothing (scheduling cost)
 *   COPY	out0 = in0: same byte count (dtype and shape may differ);
 *		the only operator MCP_GRAPH_ENGINE_DEVICE runs
 *   TILE16	in0 NHWC [B][H][S][D] -> out0 TILED16 [B][H/16][S][D][16]:
 *		out[b][h/16][s][d][h%16] = in[b][h][s][d]; H a multiple of
 *		16, D * dtype size a multiple of 32 bytes; same dtype
 *   QUANT_I8	in0 F32 -> out0 I8, same dims: q = clamp(round_half_even(x /
 *		scale) + zero_point, -128, 127); param struct mcp_graph_quant
 *   DEQUANT_I8	in0 I8 -> out0 F32, same dims: x = (q - zero_point) * scale;
 *		param struct mcp_graph_quant
 * Compute, run by userspace workers (MCP_GRAPH_ENGINE_WORKER):
 *   WNOP	does nothing; a worker round trip (scheduling cost)
 *   MATMUL	F32: out0[M][N] = alpha * op(in0) x op(in1) (+ in2[N] bias),
 *		op(A) = A or A^T per mcp_graph_matmul.flags; rank 2
 *   ADD	F32: out0 = in0 + in1, same dims
 *   RELU	F32: out0 = max(in0, 0)
 *   GELU	F32: out0 = gelu(in0) (tanh approximation)
 *   SOFTMAX	F32: out0 = softmax(in0) along the last dimension
 *   LAYERNORM	F32: out0 = (in0 - mean) / sqrt(var + eps) * in1 + in2 along
 *		the last dimension D; in1, in2 [D]; param mcp_graph_norm
 *   MATMUL_I8	I8 in0 [M][K] x I8 in1 [K][N] -> F32 out0 [M][N],
 *		dequantized with param struct mcp_graph_matmul_i8
 * Worker operators whose rules only libmcp checks (a kernel that checks
 * worker shapes refuses them as unknown):
 *   BMATMUL	F32 batched MATMUL: in0 [..][M][K] x in1 [..][K][N] ->
 *		out0 [..][M][N], batch dims broadcast as numpy; in2 [N]
 *		bias optional; param as MATMUL
 *   BADD, SUB, MUL, DIV  F32: out0 = in0 op in1, numpy broadcasting to
 *		out0's dims
 *   TRANSPOSE	F32: out0 = in0 with its dims permuted; param 8 bytes,
 *		perm[k] (u8) for k < rank, the rest 0
 *   GELU_ERF	F32: out0 = x / 2 * (1 + erf(x / sqrt(2)))
 * CNN operators (libmcp's rules too), F32, NCHW, param as named:
 *   CONV	in0 X [N][C][H][W], in1 W [M][C/groups][KH][KW], in2 bias
 *		[M] optional -> out0 [N][M][OH][OW], param struct
 *		mcp_graph_conv: OH = (H + pad_top + pad_bottom -
 *		dilation_h * (KH - 1) - 1) / stride_h + 1 (floor; OW alike),
 *		>= 1; C and M multiples of groups; then the activation
 *		(MCP_CONV_ACT_*; CLIP clamps to [clip_min, clip_max]);
 *		out_pad_h/w must be 0
 *   CONV_TRANSPOSE  in0 X [N][C][H][W], in1 W [C][M/groups][KH][KW], in2
 *		bias [M] optional -> out0 [N][M][OH][OW], param struct
 *		mcp_graph_conv: OH = stride_h * (H - 1) + out_pad_h +
 *		dilation_h * (KH - 1) + 1 - pad_top - pad_bottom (OW
 *		alike), >= 1; out_pad_h < stride_h or dilation_h
 *   MAXPOOL	in0 [N][C][H][W] -> out0 [N][C][OH][OW], param struct
 *		mcp_graph_pool: the largest element of each window (padding
 *		never wins); OH as CONV's, rounded up with MCP_POOL_CEIL
 *		(a window must then start inside the input or the top pad)
 *   AVGPOOL	as MAXPOOL, the mean of each window: over its elements
 *		inside the input, or with MCP_POOL_COUNT_PAD over the
 *		window clipped to the padded input; dilations 1
 *   GLOBAL_AVGPOOL  in0 [N][C][..] -> out0 [N][C][1].., the mean over
 *		all dims after the first two; no param
 *   CHANNEL_AFFINE  in0 [N][C][..], in1 scale [C], in2 shift [C] ->
 *		out0 = in0 * scale[c] + shift[c] (a BatchNormalization that
 *		was not folded); same dims; no param
 * Elementwise, reduce and shape operators (90 .. 119, libmcp's
 * graph_ops_elementwise.cpp); "bcast" is numpy broadcasting to out0:
 *   UNARY	F32: out0 = fn(in0), same dims; param struct mcp_graph_unary
 *		(enum mcp_unary_fn, alpha, beta)
 *   POW	F32: out0 = in0 ^ in1, bcast
 *   SOFTMAX_AXIS F32: out0 = softmax(in0) over axis, same dims; param
 *		struct mcp_graph_axis; MCP_AXIS_COERCE: over the
 *		flattened dims axis..rank-1 (ONNX opset < 13)
 *   REDUCE	F32: out0 = mean or sum of in0 over the dims in
 *		mcp_graph_reduce.axes (a bit per dim); out0's dims are
 *		in0's with those dims 1 (keepdims) or removed
 *   CONCAT	any dtype, 1..4 inputs: out0 = in0 .. inN joined along
 *		mcp_graph_axis.axis, every other dim equal
 *   SLICE	any dtype: out0[i..] = in0[start[k] + i[k] * step[k]..];
 *		param struct mcp_graph_slice; out0's dims are the counts
 *   GATHER	in0 any dtype, in1 I32 indices (negative from the end,
 *		checked at run time): out0 = in0 dims[:axis] + in1 dims +
 *		in0 dims[axis+1:]; param struct mcp_graph_axis
 *   WHERE	in0 U8 condition, in1, in2 of out0's dtype: out0 = in0 ?
 *		in1 : in2, bcast
 *   CAST	out0 = in0 converted (F32, I8, U8, I32), same dims: to an
 *		integer truncates toward 0 and saturates (NaN is 0);
 *		param struct mcp_graph_cast (MCP_CAST_BOOL: out0 = in0 != 0)
 */
enum mcp_graph_op {
	MCP_OP_NOP = 1,
	MCP_OP_COPY = 2,
	MCP_OP_TILE16 = 3,
	MCP_OP_QUANT_I8 = 4,
	MCP_OP_DEQUANT_I8 = 5,
	MCP_OP_WNOP = 64,
	MCP_OP_MATMUL = 65,
	MCP_OP_ADD = 66,
	MCP_OP_RELU = 67,
	MCP_OP_GELU = 68,
	MCP_OP_SOFTMAX = 69,
	MCP_OP_LAYERNORM = 70,
	MCP_OP_MATMUL_I8 = 71,
	MCP_OP_BMATMUL = 72,
	MCP_OP_BADD = 73,
	MCP_OP_SUB = 74,
	MCP_OP_MUL = 75,
	MCP_OP_DIV = 76,
	MCP_OP_TRANSPOSE = 77,
	MCP_OP_GELU_ERF = 78,
	MCP_OP_CONV = 79,
	MCP_OP_CONV_TRANSPOSE = 80,
	MCP_OP_MAXPOOL = 81,
	MCP_OP_AVGPOOL = 82,
	MCP_OP_GLOBAL_AVGPOOL = 83,
	MCP_OP_CHANNEL_AFFINE = 84,
	MCP_OP_UNARY = 90,
	MCP_OP_POW = 91,
	MCP_OP_SOFTMAX_AXIS = 92,
	MCP_OP_REDUCE = 93,
	MCP_OP_CONCAT = 94,
	MCP_OP_SLICE = 95,
	MCP_OP_GATHER = 96,
	MCP_OP_WHERE = 97,
	MCP_OP_CAST = 98,
};

/* Parameters, in the blob; floats as IEEE-754 binary32 bit patterns. */
struct mcp_graph_quant {
	__u32 scale;		/* f32, finite and > 0 */
	__s32 zero_point;	/* -128 .. 127 */
};

#define MCP_MATMUL_TRANS_A	(1U << 0)
#define MCP_MATMUL_TRANS_B	(1U << 1)
#define MCP_MATMUL_FLAGS	(MCP_MATMUL_TRANS_A | MCP_MATMUL_TRANS_B)

struct mcp_graph_matmul {
	__u32 flags;		/* MCP_MATMUL_* */
	__u32 alpha;		/* f32; a node without parameters has 1.0 */
};

/* mcp_graph_conv.activation: applied to CONV's output */
enum mcp_conv_act {
	MCP_CONV_ACT_NONE = 0,
	MCP_CONV_ACT_RELU = 1,
	MCP_CONV_ACT_CLIP = 2,	/* clamp to [clip_min, clip_max] */
};

/*
 * CONV and CONV_TRANSPOSE: every field of kernel, stride, dilation and
 * groups >= 1 and the kernel dims equal in1's; pads are explicit (ONNX's
 * auto_pad is resolved at import).  64 bytes.
 */
struct mcp_graph_conv {
	__u32 kernel_h;
	__u32 kernel_w;
	__u32 stride_h;
	__u32 stride_w;
	__u32 dilation_h;
	__u32 dilation_w;
	__u32 pad_top;
	__u32 pad_left;
	__u32 pad_bottom;
	__u32 pad_right;
	__u32 groups;
	__u32 activation;	/* enum mcp_conv_act */
	__u32 clip_min;		/* f32, CLIP only (else 0): <= clip_max */
	__u32 clip_max;		/* f32 */
	__u32 out_pad_h;	/* CONV_TRANSPOSE's output_padding; CONV: 0 */
	__u32 out_pad_w;
};

#define MCP_POOL_CEIL		(1U << 0)	/* ceil_mode */
#define MCP_POOL_COUNT_PAD	(1U << 1)	/* AVGPOOL's count_include_pad */
#define MCP_POOL_FLAGS		(MCP_POOL_CEIL | MCP_POOL_COUNT_PAD)

/*
 * MAXPOOL, AVGPOOL: kernel, stride and dilation >= 1, every pad smaller
 * than the dilated kernel.  48 bytes.
 */
struct mcp_graph_pool {
	__u32 kernel_h;
	__u32 kernel_w;
	__u32 stride_h;
	__u32 stride_w;
	__u32 dilation_h;
	__u32 dilation_w;
	__u32 pad_top;
	__u32 pad_left;
	__u32 pad_bottom;
	__u32 pad_right;
	__u32 flags;		/* MCP_POOL_* */
	__u32 reserved;		/* 0 */
};

struct mcp_graph_norm {
	__u32 eps;		/* f32, > 0 */
	__u32 reserved;
};

struct mcp_graph_matmul_i8 {
	__u32 scale_a;		/* f32 */
	__s32 zero_a;
	__u32 scale_b;		/* f32 */
	__s32 zero_b;
};

/* mcp_graph_unary.fn: y = f(x) with alpha (a) and beta (b) */
enum mcp_unary_fn {
	MCP_UNARY_SIGMOID = 0,		/* 1 / (1 + exp(-x)) */
	MCP_UNARY_HARDSIGMOID = 1,	/* max(0, min(1, a x + b)) */
	MCP_UNARY_HARDSWISH = 2,	/* x max(0, min(1, x / 6 + 1 / 2)) */
	MCP_UNARY_TANH = 3,
	MCP_UNARY_EXP = 4,
	MCP_UNARY_SQRT = 5,
	MCP_UNARY_ERF = 6,
	MCP_UNARY_CLIP = 7,		/* min(max(x, a), b); a <= b, +-inf ok */
	MCP_UNARY_POW = 8,		/* x ^ a */
	MCP_UNARY_COUNT = 9,
};

struct mcp_graph_unary {
	__u32 fn;		/* enum mcp_unary_fn */
	__u32 alpha;		/* f32, not NaN */
	__u32 beta;		/* f32, not NaN */
	__u32 reserved;
};

#define MCP_AXIS_COERCE		(1U << 0)	/* SOFTMAX_AXIS: axis..rank-1 */

struct mcp_graph_axis {
	__u32 axis;		/* < rank */
	__u32 flags;		/* MCP_AXIS_*, 0 but for SOFTMAX_AXIS */
};

#define MCP_REDUCE_MEAN		0
#define MCP_REDUCE_SUM		1

struct mcp_graph_reduce {
	__u32 kind;		/* MCP_REDUCE_* */
	__u32 axes;		/* bit k: dim k is reduced; only bits < rank */
};

/* Slice: per dim, start in 0..dim-1 and step != 0; out0's dim k elements */
struct mcp_graph_slice {
	__s32 start[MCP_GRAPH_MAX_RANK];
	__s32 step[MCP_GRAPH_MAX_RANK];	/* 0 past the rank */
};

#define MCP_CAST_BOOL		(1U << 0)

struct mcp_graph_cast {
	__u32 flags;		/* MCP_CAST_* */
	__u32 reserved;
};

/* mcp_graph_node.engine: the class of engine that runs it */
enum mcp_graph_engine {
	MCP_GRAPH_ENGINE_CPU = 0,	/* the kernel's cpu engine */
	MCP_GRAPH_ENGINE_DEVICE = 1,	/* the device's DMA engine (device fds) */
	MCP_GRAPH_ENGINE_WORKER = 2,	/* userspace workers (WORKER_REGISTER) */
};

/* mcp_graph_node.flags */
#define MCP_GRAPH_NODE_INPLACE	(1U << 0)	/* out0 may be in0 */
#define MCP_GRAPH_NODE_FLAGS	(MCP_GRAPH_NODE_INPLACE)

/**
 * struct mcp_graph_node - one operator
 * @op:		enum mcp_graph_op
 * @engine:	enum mcp_graph_engine; must be a class that can run @op
 * @flags:	MCP_GRAPH_NODE_*
 * @n_inputs:	inputs used, the rest of @inputs are 0
 * @n_outputs:	outputs used, the rest of @outputs are 0
 * @reserved:	must be 0
 * @inputs:	tensor indices
 * @outputs:	tensor indices.  Node B waits for node A when B reads
 *		bytes A writes (tensors overlap in the same buffer); two
 *		nodes may not write overlapping bytes unless one of them is
 *		in-place, and an in-place node is ordered by index against
 *		every other node that touches its out0's bytes
 * @param_offset: its parameters: a blob range of at most
 *		MCP_GRAPH_MAX_PARAM bytes
 * @param_len:
 * @name_offset: its name: a blob range
 * @name_len:
 */
struct mcp_graph_node {
	__u16 op;
	__u8 engine;
	__u8 flags;
	__u8 n_inputs;
	__u8 n_outputs;
	__u16 reserved;
	__u32 inputs[MCP_GRAPH_MAX_INPUTS];
	__u32 outputs[MCP_GRAPH_MAX_OUTPUTS];
	__u32 param_offset;
	__u32 param_len;
	__u32 name_offset;
	__u32 name_len;
};

/*
 * Why a graph was refused (mcp_graph_create.error_reason, with -EINVAL);
 * libmcp's validator reports the same reasons for the same graphs.
 */
enum mcp_graph_error {
	MCP_GRAPH_OK = 0,
	MCP_GRAPH_ERR_HEADER = 1,	/* magic, version, sizes, counts, lengths */
	MCP_GRAPH_ERR_LIMIT = 2,	/* over a max_* knob */
	MCP_GRAPH_ERR_RANGE = 3,	/* a name, init or param range outside the blob */
	MCP_GRAPH_ERR_BUFFER = 4,	/* bad buffer entry, or bound BO too short */
	MCP_GRAPH_ERR_TENSOR = 5,	/* bad dtype, rank, dims, layout, alignment */
	MCP_GRAPH_ERR_BOUNDS = 6,	/* a tensor outside its buffer */
	MCP_GRAPH_ERR_OP = 7,		/* unknown operator or reserved bits */
	MCP_GRAPH_ERR_ENGINE = 8,	/* engine class cannot run the op or is absent */
	MCP_GRAPH_ERR_ARITY = 9,	/* input/output counts or indices */
	MCP_GRAPH_ERR_SHAPE = 10,	/* dtypes or shapes inconsistent for the op */
	MCP_GRAPH_ERR_PARAM = 11,	/* parameters missing, short or invalid */
	MCP_GRAPH_ERR_ALIAS = 12,	/* outputs overlap each other or inputs */
	MCP_GRAPH_ERR_WRITERS = 13,	/* a tensor written by two nodes */
	MCP_GRAPH_ERR_CYCLE = 14,	/* the dependencies have a cycle */
	MCP_GRAPH_ERR_ENCODING = 15,	/* a version 2 record cannot be decoded */
};

/* mcp_graph_create.error_kind: what error_index counts */
enum mcp_graph_error_kind {
	MCP_GRAPH_AT_HEADER = 0,
	MCP_GRAPH_AT_BUFFER = 1,
	MCP_GRAPH_AT_TENSOR = 2,
	MCP_GRAPH_AT_NODE = 3,
};

/**
 * struct mcp_graph_create - argument of MCP_IOC_GRAPH_CREATE
 * @size:	in: sizeof(struct mcp_graph_create)
 * @flags:	in: must be 0
 * @graph:	in: user address of the binary graph
 * @graph_len:	in: its bytes; must equal the header's total_len
 * @handles:	in: user address of __u32[n_buffers], the BO handle (on
 *		this fd) each buffer index is bound to
 * @n_handles:	in: must equal the header's n_buffers
 * @handle:	out: the graph's handle on this fd, never 0
 * @error_reason: out: enum mcp_graph_error when the graph is refused
 *		(-EINVAL), else 0
 * @error_kind:	out: enum mcp_graph_error_kind of @error_index
 * @error_index: out: index of the first bad buffer, tensor or node; for a
 *		cycle, the lowest-index node that could not be scheduled
 * @reserved:	in: must be 0
 *
 * Validated once: the graph is copied, checked, and its schedule (the
 * dependency counts) computed.  Unknown handles: -ENOENT; a refused
 * graph: -EINVAL with the three error fields, copied back even then.
 */
struct mcp_graph_create {
	__u32 size;
	__u32 flags;
	__u64 graph;
	__u64 graph_len;
	__u64 handles;
	__u32 n_handles;
	__u32 handle;
	__u32 error_reason;
	__u32 error_kind;
	__u32 error_index;
	__u32 reserved;
};

#define MCP_GRAPH_CREATE_SIZE_VER0	56

/** struct mcp_graph_binding - one buffer index rebound for one execution */
struct mcp_graph_binding {
	__u32 buffer;		/* index in the graph's buffer table */
	__u32 handle;		/* BO on this fd, at least the buffer's length */
};

/* mcp_graph_exec.flags */
#define MCP_GRAPH_EXEC_IN_FENCE	(1U << 0)	/* start after @in_fence signals */
#define MCP_GRAPH_EXEC_FLAGS	(MCP_GRAPH_EXEC_IN_FENCE)

/**
 * struct mcp_graph_exec - argument of MCP_IOC_GRAPH_EXEC
 * @size:	in: sizeof(struct mcp_graph_exec)
 * @flags:	in: MCP_GRAPH_EXEC_*
 * @graph:	in: graph handle
 * @in_fence:	in: with MCP_GRAPH_EXEC_IN_FENCE, a sync_file fd
 * @bindings:	in: user address of struct mcp_graph_binding[n_bindings]
 * @n_bindings:	in: 0 .. n_buffers; each buffer index at most once
 * @timeout_ms:	in: cancel the execution (-ETIMEDOUT) this long after it
 *		was submitted; 0: the exec_timeout_ms knob
 * @out_fence:	out: a sync_file fd (O_CLOEXEC) that signals when the
 *		execution ends; its status is the execution's result
 * @reserved:	in: must be 0
 * @exec_id:	out: the execution's id on this fd, from 1, for
 *		MCP_IOC_GRAPH_STATUS
 */
struct mcp_graph_exec {
	__u32 size;
	__u32 flags;
	__u32 graph;
	__s32 in_fence;
	__u64 bindings;
	__u32 n_bindings;
	__u32 timeout_ms;
	__s32 out_fence;
	__u32 reserved;
	__u64 exec_id;
};

#define MCP_GRAPH_EXEC_SIZE_VER0	48

/* mcp_graph_status.state */
enum mcp_graph_state {
	MCP_GRAPH_STATE_QUEUED = 0,	/* waiting for its in-fence */
	MCP_GRAPH_STATE_RUNNING = 1,
	MCP_GRAPH_STATE_DONE = 2,	/* every node succeeded */
	MCP_GRAPH_STATE_FAILED = 3,	/* a node failed, timed out or was cancelled */
};

/**
 * struct mcp_graph_node_status - one node of one execution
 * @engine:	enum mcp_graph_engine that ran it
 * @numa_node:	NUMA node it ran on; -1 if it did not run
 * @result:	0, or the negative errno it failed with; -ECANCELED when
 *		skipped because an input failed or the execution ended
 * @worker_tid:	the worker thread that ran it (MCP_GRAPH_ENGINE_WORKER)
 * @start_ns:	CLOCK_MONOTONIC when it started; 0 if it did not
 * @end_ns:	CLOCK_MONOTONIC when it ended; 0 if it did not
 */
struct mcp_graph_node_status {
	__u32 engine;
	__s32 numa_node;
	__s32 result;
	__s32 worker_tid;
	__u64 start_ns;
	__u64 end_ns;
};

/**
 * struct mcp_graph_status - argument of MCP_IOC_GRAPH_STATUS
 * @size:	in: sizeof(struct mcp_graph_status)
 * @flags:	in: must be 0
 * @exec_id:	in: from MCP_IOC_GRAPH_EXEC; the last exec_history_len
 *		finished executions of the fd are kept; older: -ENOENT
 * @nodes:	in: user address of struct mcp_graph_node_status[n_nodes],
 *		or 0 for none
 * @n_nodes:	in: entries at @nodes; out: the graph's node count (the
 *		entries filled are the smaller of the two)
 * @state:	out: enum mcp_graph_state
 * @result:	out: 0, or the execution's negative errno
 * @failed_node: out: index of the first node that failed, -1 when none
 *		(a time-out or close fails the nodes running then with
 *		-ETIMEDOUT or -ECANCELED; -1 if none was running)
 * @graph:	out: the graph's handle (even if it was destroyed since)
 * @reserved:	in: must be 0
 * @submit_ns:	out: CLOCK_MONOTONIC when it was submitted
 * @end_ns:	out: when it ended, 0 while it runs
 */
struct mcp_graph_status {
	__u32 size;
	__u32 flags;
	__u64 exec_id;
	__u64 nodes;
	__u32 n_nodes;
	__u32 state;
	__s32 result;
	__s32 failed_node;
	__u32 graph;
	__u32 reserved;
	__u64 submit_ns;
	__u64 end_ns;
};

#define MCP_GRAPH_STATUS_SIZE_VER0	64

/**
 * struct mcp_graph_destroy - argument of MCP_IOC_GRAPH_DESTROY
 * @size:	in: sizeof(struct mcp_graph_destroy)
 * @flags:	in: must be 0
 * @handle:	in: the graph; unknown: -ENOENT
 * @reserved:	in: must be 0
 *
 * The handle is gone at once; executions in flight run to their end.
 */
struct mcp_graph_destroy {
	__u32 size;
	__u32 flags;
	__u32 handle;
	__u32 reserved;
};

#define MCP_GRAPH_DESTROY_SIZE_VER0	16

/**
 * struct mcp_worker_register - argument of MCP_IOC_WORKER_REGISTER
 * @size:	in: sizeof(struct mcp_worker_register)
 * @flags:	in: 0 or MCP_WORKER_CHAINS (needs MCP_FEAT_JOB_CHAINS)
 * @node:	in: the NUMA node the worker serves, -1 for the caller's
 *		current node; out: the node
 * @fd:		out: the worker fd (O_RDWR | O_CLOEXEC)
 *
 * Makes the calling thread a compute worker of this fd's graphs.  The
 * worker reads jobs from its fd (read() blocks, or -EAGAIN with
 * O_NONBLOCK; poll() says POLLIN when one is ready) and reports each with
 * MCP_IOC_JOB_DONE, or several with MCP_IOC_JOBS_DONE, on the worker fd.
 * A job goes to a worker of the node holding most of its input bytes,
 * else of the nearest node by SLIT distance.  Closing the worker fd with
 * a job claimed re-queues the job once; the second time it fails with
 * -EPIPE.
 *
 * read() with room for k struct mcp_worker_job (count / sizeof, rounded
 * down; less than one is -EINVAL) returns the first ready job routed to
 * this worker, then, with MCP_FEAT_JOB_BATCH, up to
 * min(k, MCP_WORKER_READ_MAX) - 1 jobs chained after it.  A job C is
 * chained after the last job P returned when C is a WORKER node of the
 * same execution, P is C's only successor and C's only unfinished
 * predecessor, and C routes to this worker's node: nothing another worker
 * could run in parallel is withheld.  Chained jobs carry
 * MCP_WORKER_JOB_CHAINED; they are this worker's at once, start when
 * their predecessor's successful report is applied, and must be run and
 * reported in order after it (reporting one first is -EBUSY).  If the
 * predecessor fails or the execution stops, they end with -ECANCELED and
 * reporting them returns -ECANCELED.  Closing the fd puts the ones not
 * started back to waiting (no attempt counted).  A read of one job writes
 * the whole struct (unused entries zero); a read with room for more
 * writes of each job only the header and the used entries of @inputs,
 * @outputs and @param, leaving the rest of the buffer as it was.
 *
 * With MCP_WORKER_CHAINS, read() returns one struct mcp_worker_chain
 * instead: the same first job and the jobs chained after it, by the same
 * rule, as one job of several nodes with one id, reported once with
 * MCP_IOC_CHAIN_DONE.  The read names the nodes only: the worker runs
 * graphs whose descriptors it has (it loaded them), and the chain
 * carries the execution's buffer handles.
 */
struct mcp_worker_register {
	__u32 size;
	__u32 flags;
	__s32 node;
	__s32 fd;
};

#define MCP_WORKER_REGISTER_SIZE_VER0	16

/** struct mcp_worker_tensor - a tensor of a job, with its binding resolved */
struct mcp_worker_tensor {
	__u32 handle;		/* BO on the graph's fd */
	__u8 dtype;
	__u8 rank;
	__u8 layout;
	__u8 reserved;
	__u64 offset;		/* byte offset in the BO */
	__u32 dims[MCP_GRAPH_MAX_RANK];
};

/**
 * struct mcp_worker_job - what read() on a worker fd returns
 * @job_id:	for MCP_IOC_JOB_DONE
 * @exec_id:	the execution it belongs to
 * @graph:	the graph's handle
 * @node:	the node's index in the graph
 * @op:		enum mcp_graph_op
 * @n_inputs:	entries of @inputs used
 * @n_outputs:	entries of @outputs used
 * @param_len:	bytes of @param used
 * @flags:	MCP_WORKER_JOB_* (0 for the first job of a read)
 * @reserved:	0
 * @inputs:	the node's inputs
 * @outputs:	the node's outputs
 * @param:	the node's parameters
 */
struct mcp_worker_job {
	__u64 job_id;
	__u64 exec_id;
	__u32 graph;
	__u32 node;
	__u16 op;
	__u8 n_inputs;
	__u8 n_outputs;
	__u32 param_len;
	__u32 flags;
	__u32 reserved;
	struct mcp_worker_tensor inputs[MCP_GRAPH_MAX_INPUTS];
	struct mcp_worker_tensor outputs[MCP_GRAPH_MAX_OUTPUTS];
	__u8 param[MCP_GRAPH_MAX_PARAM];
};

/**
 * struct mcp_job_done - argument of MCP_IOC_JOB_DONE, on a worker fd
 * @size:	in: sizeof(struct mcp_job_done)
 * @flags:	in: must be 0
 * @job_id:	in: a job this worker fd claimed and has not reported;
 *		else -ENOENT.  A job whose execution was stopped while it
 *		ran (time-out, its fd closed) was abandoned: reporting it
 *		returns -ECANCELED and the result is ignored; once the
 *		graph's fd is closed, -ENODEV
 * @result:	in: 0, or a negative errno: the node failed with it
 * @reserved:	in: must be 0
 */
struct mcp_job_done {
	__u32 size;
	__u32 flags;
	__u64 job_id;
	__s32 result;
	__u32 reserved;
};

#define MCP_JOB_DONE_SIZE_VER0		24

/* mcp_worker_job.flags: runs after the previous job of the same read. */
#define MCP_WORKER_JOB_CHAINED		(1U << 0)

/* Most jobs one read() returns; more room is not an error. */
#define MCP_WORKER_READ_MAX		64

/**
 * struct mcp_job_report - one job of MCP_IOC_JOBS_DONE
 * @job_id:	in: as for MCP_IOC_JOB_DONE
 * @result:	in: 0, or a negative errno: the node failed with it
 * @status:	out: what MCP_IOC_JOB_DONE would have returned for this
 *		report: 0, -EINVAL (bad @result or times), -ENOENT,
 *		-ECANCELED, -EBUSY (a chained job before its predecessor),
 *		-ENODEV
 * @start_ns:	in: when the worker started it (CLOCK_MONOTONIC), 0 for
 *		the kernel's time
 * @end_ns:	in: when it ended, 0 for the time the report is applied
 *
 * The kernel clamps @start_ns into [the read that claimed the job, now]
 * and @end_ns into [the start, now].
 */
struct mcp_job_report {
	__u64 job_id;
	__s32 result;
	__s32 status;
	__u64 start_ns;
	__u64 end_ns;
};

/* mcp_worker_register.flags: the fd's reads return chains. */
#define MCP_WORKER_CHAINS		(1U << 0)

/* Most nodes one chain read returns; more room is not an error. */
#define MCP_WORKER_CHAIN_MAX		1024

/**
 * struct mcp_worker_chain - what read() on a MCP_WORKER_CHAINS fd returns
 * @job_id:	the chain's, for MCP_IOC_CHAIN_DONE
 * @exec_id:	the execution it belongs to
 * @graph:	the graph's handle
 * @n_nodes:	entries of @nodes: 1 .. MCP_WORKER_CHAIN_MAX
 * @n_buffers:	entries of @handles used: the graph's buffers
 * @flags:	0
 * @handles:	per buffer index of the graph, the BO it runs on in this
 *		execution (its bindings applied), a handle on the graph's fd
 * @nodes:	the chain's node indices, in the order they run: each but
 *		the first is the only successor of the one before it, and
 *		that is its only unfinished predecessor
 *
 * read() needs room for the header and one node, not the whole struct
 * (@nodes has a size because C++ has no flexible arrays); with room for
 * k nodes ((count - offsetof(struct mcp_worker_chain, nodes)) / 4) it
 * returns a chain of at most min(k, MCP_WORKER_CHAIN_MAX) nodes and
 * offsetof(nodes) + 4 * @n_nodes bytes.  @handles entries past
 * @n_buffers are left as they were.  Graph handles are not reused until
 * about 2^24 graphs later, so (@graph, the node index) names what a
 * worker that created the graph knows of it.
 *
 * The first node runs from the read; the others wait for their
 * predecessor as chained jobs do: MCP_IOC_GRAPH_STATUS shows them not
 * started until the chain's report is applied.
 */
struct mcp_worker_chain {
	__u64 job_id;
	__u64 exec_id;
	__u32 graph;
	__u32 n_nodes;
	__u32 n_buffers;
	__u32 flags;
	__u32 handles[MCP_GRAPH_MAX_BUFFERS];
	__u32 nodes[MCP_WORKER_CHAIN_MAX];
};

/**
 * struct mcp_chain_done - argument of MCP_IOC_CHAIN_DONE, on a worker fd
 * @size:	in: sizeof(struct mcp_chain_done)
 * @flags:	in: must be 0
 * @job_id:	in: a chain this worker fd claimed and has not reported;
 *		else -ENOENT
 * @start_ns:	in: when the first node started (CLOCK_MONOTONIC), 0 for
 *		the kernel's time
 * @ends:	in: user pointer to @n_ran __u64: when each node that ran
 *		ended (CLOCK_MONOTONIC), 0 for the time the report is applied;
 *		each node started when the one before it ended.  0 (no
 *		array): every node ends at the time the report is applied
 * @n_ran:	in: the chain's first @n_ran nodes ran, in order: 1 .. its
 *		@n_nodes
 * @result:	in: 0: they all succeeded; a negative errno: the last of
 *		them failed with it and the nodes after it are cancelled
 *
 * Applies the chain's nodes in order as MCP_IOC_JOBS_DONE would apply
 * one report each, with times clamped as there: the start into [the read,
 * now], each end into [its start, now].  When @n_ran is less than the
 * chain and @result is 0, the nodes not run go back to the queue as
 * their predecessor succeeds, for any worker.  Nothing is applied when
 * the call fails.  Return: 0, -EINVAL (@flags, @result, @n_ran),
 * -EFAULT (@ends), -ENOENT, -ECANCELED (the execution was stopped while
 * the chain ran: the report is ignored), -ENODEV (the context is gone).
 * MCP_IOC_JOB_DONE, or an MCP_IOC_JOBS_DONE entry, for a chain's id is
 * this call with @n_ran 1.  On a fd without MCP_WORKER_CHAINS each job
 * read is a chain of one node (a MCP_WORKER_JOB_CHAINED one not started
 * is -EBUSY, as there).  Needs MCP_FEAT_JOB_CHAINS.
 */
struct mcp_chain_done {
	__u32 size;
	__u32 flags;
	__u64 job_id;
	__u64 start_ns;
	__u64 ends;
	__u32 n_ran;
	__s32 result;
};

#define MCP_CHAIN_DONE_SIZE_VER0	40

/* Most reports one MCP_IOC_JOBS_DONE takes; more is -E2BIG. */
#define MCP_JOBS_DONE_MAX		1024

/**
 * struct mcp_jobs_done - argument of MCP_IOC_JOBS_DONE, on a worker fd
 * @size:	in: sizeof(struct mcp_jobs_done)
 * @flags:	in: must be 0
 * @reports:	in: user pointer to @n_reports struct mcp_job_report
 * @n_reports:	in: 0 .. MCP_JOBS_DONE_MAX
 * @reserved:	in: must be 0
 *
 * Applies the reports in order, each as MCP_IOC_JOB_DONE would, and
 * writes each one's status back; a bad report does not stop the others.
 * The call fails as a whole only for a bad argument: -EINVAL, -E2BIG, or
 * -EFAULT when the array cannot be read or its statuses written (the
 * reports before the fault, read in groups of 16, may have been
 * applied).  Needs MCP_FEAT_JOB_BATCH.
 */
struct mcp_jobs_done {
	__u32 size;
	__u32 flags;
	__u64 reports;
	__u32 n_reports;
	__u32 reserved;
};

#define MCP_JOBS_DONE_SIZE_VER0		24

/*
 * Hardware tuning (MCP_FEAT_TUNE, Documentation/tuning.rst).
 *
 * The module keeps a registry of knobs, listed with MCP_IOC_TUNE_LIST by
 * anyone who can open /dev/mcp.  Changes go through a session fd
 * (MCP_IOC_TUNE_SESSION, CAP_SYS_RAWIO and no LOCKDOWN_MSR lockdown):
 * closing it restores every value it changed unless MCP_IOC_TUNE_COMMIT
 * made them permanent; committed values hold until MCP_IOC_TUNE_RESET or
 * module unload, which restore the values found at load ("boot" values).
 * Knob ids are indices into the list, stable while the module is loaded.
 */

/* mcp_tune_knob_info.scope: the set of CPUs one write affects */
enum mcp_tune_scope {
	MCP_TUNE_SCOPE_CPU = 0,		/* one logical CPU */
	MCP_TUNE_SCOPE_CORE = 1,	/* every online SMT sibling of the CPU */
	MCP_TUNE_SCOPE_PACKAGE = 2,	/* every online CPU of the package */
	MCP_TUNE_SCOPE_SYSTEM = 3,	/* the host; @cpu is ignored */
};

/* mcp_tune_knob_info.type */
enum mcp_tune_type {
	MCP_TUNE_TYPE_BOOL = 0,		/* 0 or 1; for prefetchers 1 = enabled */
	MCP_TUNE_TYPE_U64 = 1,		/* an integer in [min, max] */
};

/* mcp_tune_knob_info.status */
enum mcp_tune_status {
	MCP_TUNE_SUPPORTED = 0,		/* readable and writable in a session */
	MCP_TUNE_UNSUPPORTED = 1,	/* not on this machine: see @reason */
	MCP_TUNE_READ_ONLY = 2,		/* readable; written elsewhere or locked */
};

/* mcp_tune_knob_info.state */
#define MCP_TUNE_STATE_VALUE	(1U << 0)	/* @value and @boot are valid */
#define MCP_TUNE_STATE_HELD	(1U << 1)	/* a session changed it */
#define MCP_TUNE_STATE_COMMITTED (1U << 2)	/* a committed value applies */

#define MCP_TUNE_NAME_LEN	32
#define MCP_TUNE_REASON_LEN	96

/**
 * struct mcp_tune_knob_info - one knob in MCP_IOC_TUNE_LIST
 * @id:		out: the knob id for TUNE_SET/GET/RESET
 * @scope:	out: enum mcp_tune_scope
 * @type:	out: enum mcp_tune_type
 * @status:	out: enum mcp_tune_status
 * @min:	out: smallest value accepted
 * @max:	out: largest value accepted
 * @value:	out: current value on mcp_tune_list.cpu (read from hardware)
 * @boot:	out: value found when the module loaded (on that CPU)
 * @state:	out: MCP_TUNE_STATE_* for that CPU
 * @holder_pid:	out: with MCP_TUNE_STATE_HELD, the pid (in the caller's
 *		pid namespace; 0 if not visible) of the session's creator
 * @name:	out: NUL-terminated, e.g. "prefetch.l2_stream"
 * @reason:	out: NUL-terminated: why it is unsupported or read-only, or
 *		where its value comes from when supported
 */
struct mcp_tune_knob_info {
	__u32 id;
	__u32 scope;
	__u32 type;
	__u32 status;
	__u64 min;
	__u64 max;
	__u64 value;
	__u64 boot;
	__u32 state;
	__u32 holder_pid;
	char name[MCP_TUNE_NAME_LEN];
	char reason[MCP_TUNE_REASON_LEN];
};

#define MCP_TUNE_KNOB_INFO_SIZE_VER0	184

/**
 * struct mcp_tune_list - argument of MCP_IOC_TUNE_LIST
 * @size:	in: sizeof(struct mcp_tune_list)
 * @flags:	in: must be 0
 * @cpu:	in: the CPU whose values are reported for CPU, core and
 *		package knobs: < nr_cpu_ids (-EINVAL) and online (-ENXIO)
 * @cap:	in: entries at @entries_ptr
 * @count:	out: number of knobs; the @cap needed
 * @entry_size:	in: sizeof(struct mcp_tune_knob_info) the caller knows,
 *		at least MCP_TUNE_KNOB_INFO_SIZE_VER0; entries are written
 *		@entry_size apart, truncated or zero-padded to it
 * @entries_ptr: in: user address of @cap entries
 *
 * Too small a @cap (0 asks) is -ENOSPC with @count set; nothing is written
 * through @entries_ptr then.
 */
struct mcp_tune_list {
	__u32 size;
	__u32 flags;
	__u32 cpu;
	__u32 cap;
	__u32 count;
	__u32 entry_size;
	__u64 entries_ptr;
};

#define MCP_TUNE_LIST_SIZE_VER0		32

/**
 * struct mcp_tune_session - argument of MCP_IOC_TUNE_SESSION
 * @size:	in: sizeof(struct mcp_tune_session)
 * @flags:	in: must be 0
 * @fd:		out: the session fd (O_CLOEXEC)
 * @reserved:	in: must be 0
 *
 * Needs CAP_SYS_RAWIO (-EPERM) and no kernel lockdown of MSR access
 * (-EPERM).  The session belongs to the creating process: its ioctls from
 * any other process (after fork or SCM_RIGHTS) are -EPERM, and its values
 * are rolled back when the last reference to the fd goes.  While a
 * session fd exists the module cannot be unloaded.
 */
struct mcp_tune_session {
	__u32 size;
	__u32 flags;
	__s32 fd;
	__u32 reserved;
};

#define MCP_TUNE_SESSION_SIZE_VER0	16

/* mcp_tune_value.flags */
#define MCP_TUNE_ALL_CPUS	(1U << 0)	/* SET/RESET: every online CPU */
#define MCP_TUNE_ALL_KNOBS	(1U << 1)	/* RESET: every knob */

/**
 * struct mcp_tune_value - argument of MCP_IOC_TUNE_SET/GET/RESET
 * @size:	in: sizeof(struct mcp_tune_value)
 * @flags:	in: MCP_TUNE_ALL_CPUS (SET, RESET), MCP_TUNE_ALL_KNOBS (RESET)
 * @knob:	in: the knob id (-ENOENT if unknown)
 * @cpu:	in: the CPU, < nr_cpu_ids (-EINVAL) and online (-ENXIO);
 *		ignored with MCP_TUNE_ALL_CPUS and for system knobs
 * @value:	in (SET): the value, in [min, max] (-ERANGE);
 *		out (GET): the value read from hardware
 * @readback:	out: on -EIO, what the hardware returned after the write
 * @holder_pid:	out: on -EBUSY, the pid of the session holding the knob
 * @err_cpu:	out: on -EBUSY, -EIO or -ENXIO, the CPU the error is about
 *
 * SET (-EOPNOTSUPP for an unsupported or read-only knob) writes the value
 * to every CPU of the knob's scope and reads each back: a value that does
 * not stick is -EIO, and the knob is reported unsupported from then on.
 * A knob another session changed is -EBUSY.  A failed SET changes nothing:
 * the CPUs it already wrote get their previous values back.
 * RESET writes the boot values and drops committed ones; it is immediate,
 * not rolled back at close.
 */
struct mcp_tune_value {
	__u32 size;
	__u32 flags;
	__u32 knob;
	__u32 cpu;
	__u64 value;
	__u64 readback;
	__u32 holder_pid;
	__u32 err_cpu;
};

#define MCP_TUNE_VALUE_SIZE_VER0	40

/**
 * struct mcp_tune_commit - argument of MCP_IOC_TUNE_COMMIT
 * @size:	in: sizeof(struct mcp_tune_commit)
 * @flags:	in: must be 0
 * @count:	out: (knob, CPU) values made permanent
 * @reserved:	in: must be 0
 */
struct mcp_tune_commit {
	__u32 size;
	__u32 flags;
	__u32 count;
	__u32 reserved;
};

#define MCP_TUNE_COMMIT_SIZE_VER0	16

/* Largest argument struct the kernel accepts; larger sizes are -E2BIG. */
#define MCP_ARG_SIZE_MAX	4096

#define MCP_IOC_GET_VERSION	_IOWR(MCP_IOC_MAGIC, 0x00, struct mcp_version)
#define MCP_IOC_GET_TOPOLOGY	_IOWR(MCP_IOC_MAGIC, 0x01, struct mcp_topology)
#define MCP_IOC_PLACE		_IOWR(MCP_IOC_MAGIC, 0x02, struct mcp_place)
#define MCP_IOC_UNPLACE		_IOW(MCP_IOC_MAGIC, 0x03, struct mcp_unplace)

/* On /dev/mcp */
#define MCP_IOC_DEV_LIST	_IOWR(MCP_IOC_MAGIC, 0x10, struct mcp_dev_list)
#define MCP_IOC_DEV_INFO	_IOWR(MCP_IOC_MAGIC, 0x11, struct mcp_dev_info)
#define MCP_IOC_DEV_OPEN	_IOWR(MCP_IOC_MAGIC, 0x12, struct mcp_dev_open)

/* On a device fd (from MCP_IOC_DEV_OPEN) */
#define MCP_IOC_BAR_INFO	_IOWR(MCP_IOC_MAGIC, 0x18, struct mcp_bar_info)
#define MCP_IOC_IRQ_SET_EVENTFD	_IOW(MCP_IOC_MAGIC, 0x19, struct mcp_irq_eventfd)
#define MCP_IOC_IRQ_UNMASK	_IOW(MCP_IOC_MAGIC, 0x1a, struct mcp_irq_unmask)

/* On /dev/mcp (host context) and on device fds */
#define MCP_IOC_BO_CREATE	_IOWR(MCP_IOC_MAGIC, 0x20, struct mcp_bo_create)
#define MCP_IOC_BO_USERPTR	_IOWR(MCP_IOC_MAGIC, 0x21, struct mcp_bo_userptr)
#define MCP_IOC_BO_INFO		_IOWR(MCP_IOC_MAGIC, 0x22, struct mcp_bo_info)
#define MCP_IOC_BO_EXPORT	_IOWR(MCP_IOC_MAGIC, 0x23, struct mcp_bo_export)
#define MCP_IOC_BO_IMPORT	_IOWR(MCP_IOC_MAGIC, 0x24, struct mcp_bo_import)
#define MCP_IOC_BO_DESTROY	_IOW(MCP_IOC_MAGIC, 0x25, struct mcp_bo_destroy)
#define MCP_IOC_ENGINE_INFO	_IOWR(MCP_IOC_MAGIC, 0x28, struct mcp_engine_info)
#define MCP_IOC_DMA_SUBMIT	_IOWR(MCP_IOC_MAGIC, 0x29, struct mcp_dma_submit)
#define MCP_IOC_GRAPH_CREATE	_IOWR(MCP_IOC_MAGIC, 0x30, struct mcp_graph_create)
#define MCP_IOC_GRAPH_EXEC	_IOWR(MCP_IOC_MAGIC, 0x31, struct mcp_graph_exec)
#define MCP_IOC_GRAPH_STATUS	_IOWR(MCP_IOC_MAGIC, 0x32, struct mcp_graph_status)
#define MCP_IOC_GRAPH_DESTROY	_IOW(MCP_IOC_MAGIC, 0x33, struct mcp_graph_destroy)
#define MCP_IOC_WORKER_REGISTER	_IOWR(MCP_IOC_MAGIC, 0x34, struct mcp_worker_register)

/* On a worker fd (from MCP_IOC_WORKER_REGISTER) */
#define MCP_IOC_JOB_DONE	_IOW(MCP_IOC_MAGIC, 0x38, struct mcp_job_done)
#define MCP_IOC_JOBS_DONE	_IOW(MCP_IOC_MAGIC, 0x39, struct mcp_jobs_done)
#define MCP_IOC_CHAIN_DONE	_IOW(MCP_IOC_MAGIC, 0x3a, struct mcp_chain_done)

/* On /dev/mcp */
#define MCP_IOC_TUNE_LIST	_IOWR(MCP_IOC_MAGIC, 0x40, struct mcp_tune_list)
#define MCP_IOC_TUNE_SESSION	_IOWR(MCP_IOC_MAGIC, 0x41, struct mcp_tune_session)

/* On a tuning session fd (from MCP_IOC_TUNE_SESSION) */
#define MCP_IOC_TUNE_SET	_IOWR(MCP_IOC_MAGIC, 0x42, struct mcp_tune_value)
#define MCP_IOC_TUNE_GET	_IOWR(MCP_IOC_MAGIC, 0x43, struct mcp_tune_value)
#define MCP_IOC_TUNE_COMMIT	_IOWR(MCP_IOC_MAGIC, 0x44, struct mcp_tune_commit)
#define MCP_IOC_TUNE_RESET	_IOWR(MCP_IOC_MAGIC, 0x45, struct mcp_tune_value)

#endif /* _UAPI_LINUX_MCP_H */
