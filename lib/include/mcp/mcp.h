/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libmcp: the stable C API of MCP (Model Control Protocol).
 *
 * This header compiles as C (C99 and later) and as C++.  It exposes only
 * opaque handles and plain integer types; the kernel ABI structs of
 * <linux/mcp.h> stay inside the library.
 *
 * Conventions:
 *
 * - Functions that can fail return int: 0 on success, a negative errno
 *   value on failure (for example -ENOENT when the module is not loaded).
 *   After a failure, mcp_strerror_last() returns a sentence that tells the
 *   user what happened and what to do about it.
 * - Output pointers are written only on success unless documented
 *   otherwise.
 * - Nodes of a topology are addressed by index (0 .. mcp_topo_nr_nodes()-1)
 *   for iteration; distances are looked up by the kernel's node ids, which
 *   may have holes (e.g. nodes 0 and 2).
 * - Handles are not thread-safe: use one handle from one thread at a time.
 *   Different handles may be used concurrently.
 *
 * Documentation/libmcp.rst has the long form.
 */
#ifndef MCP_MCP_H
#define MCP_MCP_H

#include <stddef.h>
#include <stdint.h>

#if defined(__GNUC__)
#define MCP_EXPORT __attribute__((visibility("default")))
#else
#define MCP_EXPORT
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* Feature bits reported by mcp_get_version() (same values as the kernel's). */
#define MCP_FEATURE_VERSION	(UINT64_C(1) << 0)	/* version query */
#define MCP_FEATURE_TOPOLOGY	(UINT64_C(1) << 1)	/* topology query */
#define MCP_FEATURE_PLACE	(UINT64_C(1) << 2)	/* task placement */
#define MCP_FEATURE_EVENTS	(UINT64_C(1) << 3)	/* netlink events */
#define MCP_FEATURE_DEVICES	(UINT64_C(1) << 4)	/* accelerator devices */
#define MCP_FEATURE_PLACE_ADAPTIVE (UINT64_C(1) << 12)	/* MCP_PLACE_OPT_ADAPTIVE */

/* Default device node, used when no path is given and MCP_DEVICE is unset. */
#define MCP_DEFAULT_DEVICE	"/dev/mcp"

/* Environment variable that overrides the default device path. */
#define MCP_DEVICE_ENV		"MCP_DEVICE"

/* An open /dev/mcp session.  Opaque. */
struct mcp_device;

/* A snapshot of the NUMA topology.  Opaque; independent of its device. */
struct mcp_topo;

/**
 * mcp_library_version() - version of libmcp, e.g. "0.1.0"
 *
 * Return: a static NUL-terminated string.
 */
MCP_EXPORT const char *mcp_library_version(void);

/**
 * mcp_open() - open the MCP device and check its ABI version
 * @path:	device node to open, or NULL for the default: the value of the
 *		MCP_DEVICE environment variable if set and non-empty,
 *		otherwise "/dev/mcp"
 * @out:	on success, the new handle; release it with mcp_close()
 *
 * Opens the device, queries its version and refuses a module that speaks
 * another major ABI version than this library.
 *
 * Return: 0, or -ENOENT (module not loaded), -EACCES (not in group 'mcp'),
 * -ENOTTY (@path is not an MCP device), -EPROTO (ABI major mismatch),
 * -EINVAL (@out is NULL), -ENOMEM, or another negative errno.
 */
MCP_EXPORT int mcp_open(const char *path, struct mcp_device **out);

/**
 * mcp_close() - close a handle returned by mcp_open()
 * @dev:	the handle; NULL is ignored
 */
MCP_EXPORT void mcp_close(struct mcp_device *dev);

/**
 * mcp_device_fd() - the file descriptor behind a handle
 * @dev:	an open handle
 *
 * The descriptor stays owned by @dev (do not close it); it is O_CLOEXEC.
 *
 * Return: the descriptor, or -EINVAL if @dev is NULL.
 */
MCP_EXPORT int mcp_device_fd(const struct mcp_device *dev);

/**
 * mcp_get_version() - version of the loaded mcp module
 * @dev:		an open handle
 * @abi_major:		out, may be NULL: the module's ABI major version
 * @abi_minor:		out, may be NULL: the module's ABI minor version
 * @features:		out, may be NULL: MCP_FEATURE_* bits
 * @module_version:	out, may be NULL: the module's version string,
 *			NUL-terminated, truncated to @module_version_len - 1
 *			characters
 * @module_version_len:	size of @module_version in bytes
 *
 * The version is the one read by mcp_open(); no ioctl is issued.
 *
 * Return: 0, or -EINVAL if @dev is NULL.
 */
MCP_EXPORT int mcp_get_version(const struct mcp_device *dev,
			       uint32_t *abi_major, uint32_t *abi_minor,
			       uint64_t *features, char *module_version,
			       size_t module_version_len);

/**
 * mcp_feature_name() - short name of a feature bit
 * @feature:	one MCP_FEATURE_* bit
 *
 * Return: a static string such as "topology", or NULL for an unknown bit.
 */
MCP_EXPORT const char *mcp_feature_name(uint64_t feature);

/**
 * mcp_topo_get() - read the NUMA topology from the module
 * @dev:	an open handle
 * @out:	on success, the snapshot; release it with mcp_topo_free()
 *
 * Return: 0, or -EOPNOTSUPP (module lacks the topology feature), -EINVAL,
 * -ENOMEM, -EAGAIN (topology kept changing while being read), or another
 * negative errno from the kernel.
 */
MCP_EXPORT int mcp_topo_get(struct mcp_device *dev, struct mcp_topo **out);

/**
 * mcp_topo_free() - release a snapshot returned by mcp_topo_get()
 * @topo:	the snapshot; NULL is ignored
 */
MCP_EXPORT void mcp_topo_free(struct mcp_topo *topo);

/**
 * mcp_topo_nr_nodes() - number of online NUMA nodes in a snapshot
 * @topo:	a snapshot
 *
 * Return: the count (0 if @topo is NULL).
 */
MCP_EXPORT unsigned int mcp_topo_nr_nodes(const struct mcp_topo *topo);

/**
 * mcp_topo_cpus_online() - number of online CPUs in the system
 * @topo:	a snapshot
 *
 * Return: the count (0 if @topo is NULL).
 */
MCP_EXPORT unsigned int mcp_topo_cpus_online(const struct mcp_topo *topo);

/**
 * mcp_topo_nr_cpu_ids() - highest possible CPU id + 1
 * @topo:	a snapshot
 *
 * Return: the kernel's nr_cpu_ids (0 if @topo is NULL).
 */
MCP_EXPORT unsigned int mcp_topo_nr_cpu_ids(const struct mcp_topo *topo);

/**
 * mcp_topo_node_id() - kernel node id of the node at an index
 * @topo:	a snapshot
 * @index:	0 .. mcp_topo_nr_nodes() - 1 (nodes are in ascending id order)
 * @node_id:	out: the node id
 *
 * Return: 0, or -EINVAL for a NULL argument or an index out of range.
 */
MCP_EXPORT int mcp_topo_node_id(const struct mcp_topo *topo, unsigned int index,
				unsigned int *node_id);

/**
 * mcp_topo_node_memory() - memory of the node at an index
 * @topo:		a snapshot
 * @index:		node index
 * @mem_total_bytes:	out, may be NULL: memory managed by the node
 * @mem_free_bytes:	out, may be NULL: free memory when the snapshot was taken
 *
 * Return: 0, or -EINVAL for a NULL @topo or an index out of range.
 */
MCP_EXPORT int mcp_topo_node_memory(const struct mcp_topo *topo,
				    unsigned int index,
				    uint64_t *mem_total_bytes,
				    uint64_t *mem_free_bytes);

/**
 * mcp_topo_node_cpus() - online CPUs of the node at an index
 * @topo:	a snapshot
 * @index:	node index
 * @cpus:	out, may be NULL if @cap is 0: CPU ids in ascending order
 * @cap:	capacity of @cpus, in entries
 * @nr_cpus:	out: the number of CPUs of the node (written on success and
 *		on -ENOSPC)
 *
 * Call with @cap 0 to learn the count, then again with a large enough array.
 *
 * Return: 0, -ENOSPC if @cap is smaller than the count (nothing is written
 * to @cpus), or -EINVAL for a NULL @topo or @nr_cpus, or a bad index.
 */
MCP_EXPORT int mcp_topo_node_cpus(const struct mcp_topo *topo, unsigned int index,
				  unsigned int *cpus, size_t cap, size_t *nr_cpus);

/**
 * mcp_topo_distance() - SLIT distance between two nodes
 * @topo:	a snapshot
 * @node_a:	kernel node id (not index)
 * @node_b:	kernel node id (not index)
 * @distance:	out: the distance (10 = local)
 *
 * Return: 0, or -EINVAL for a NULL argument or a node id not in @topo.
 */
MCP_EXPORT int mcp_topo_distance(const struct mcp_topo *topo, unsigned int node_a,
				 unsigned int node_b, unsigned int *distance);

/* mcp_place_opts.flags */
#define MCP_PLACE_OPT_DRY_RUN		(1U << 0)	/* decide, do not apply */
#define MCP_PLACE_OPT_FORCE		(1U << 1)	/* ignore stickiness */
#define MCP_PLACE_OPT_KEEP		(1U << 2)	/* rebalancer re-evaluates */
#define MCP_PLACE_OPT_STRICT		(1U << 3)	/* -EAGAIN if no node qualifies */
#define MCP_PLACE_OPT_NODE		(1U << 4)	/* place on mcp_place_opts.node */
#define MCP_PLACE_OPT_NO_HISTOGRAM	(1U << 5)	/* do not sample pages */
#define MCP_PLACE_OPT_ADAPTIVE		(1U << 6)	/* with KEEP: move on run-queue latency */
#define MCP_PLACE_OPT_ALL		0x7fU

/**
 * struct mcp_place_opts - how mcp_place() places a task
 * @size:		sizeof(struct mcp_place_opts)
 * @flags:		MCP_PLACE_OPT_*
 * @node:		with MCP_PLACE_OPT_NODE, the node id
 * @sample_pages:	pages sampled for the histogram; 0 = 4096
 * @runq_threshold_us:	with MCP_PLACE_OPT_ADAPTIVE, the mean run-queue wait
 *			per run (us) above which the rebalancer moves the
 *			task; 0 = the module's adaptive_runq_us knob.  Not
 *			in MCP_PLACE_OPTS_SIZE_VER0: older callers get 0.
 */
struct mcp_place_opts {
	uint32_t size;
	uint32_t flags;
	uint32_t node;
	uint32_t sample_pages;
	uint32_t runq_threshold_us;
};

#define MCP_PLACE_OPTS_SIZE_VER0	16

#define MCP_PLACE_RESULT_MAX_NODES	64
#define MCP_PLACE_RESULT_MAX_CPUS	1024

/* Values of mcp_place_result.reason (the kernel's enum mcp_place_reason). */
#define MCP_REASON_NONE		0
#define MCP_REASON_MEMORY_LOCAL	1
#define MCP_REASON_NEAREST	2
#define MCP_REASON_STICKY	3
#define MCP_REASON_UNCHANGED	4
#define MCP_REASON_FORCED	5
#define MCP_REASON_RUNQ_LATENCY	6	/* the rebalancer: waited too long to run */

/* Values of mcp_place_result.home_source. */
#define MCP_HOME_NONE		0
#define MCP_HOME_HISTOGRAM	1
#define MCP_HOME_NUMA_FAULTS	2
#define MCP_HOME_LAST_CPU	3

/**
 * struct mcp_place_result - what mcp_place() did
 * @size:		in: sizeof(struct mcp_place_result)
 * @node_chosen:	node the task is placed on, -1 for none
 * @prev_node:		node of the CPU the task last ran on
 * @home_node:		memory home node, -1 if unknown
 * @reason:		MCP_REASON_*
 * @home_source:	MCP_HOME_*
 * @histogram_pages:	resident pages counted in the histogram passed to the
 *			kernel; 0 when none was passed
 * @nr_nodes:		valid entries of @idle_cpus (node ids 0..@nr_nodes-1)
 * @idle_cpus:		idle CPUs the module saw, per node id
 * @cpu_mask:		the CPUs applied (or that would be, with dry run):
 *			bit (c % 64) of word (c / 64) is CPU c
 */
struct mcp_place_result {
	uint32_t size;
	int32_t node_chosen;
	int32_t prev_node;
	int32_t home_node;
	uint32_t reason;
	uint32_t home_source;
	uint32_t histogram_pages;
	uint32_t nr_nodes;
	uint32_t idle_cpus[MCP_PLACE_RESULT_MAX_NODES];
	uint64_t cpu_mask[MCP_PLACE_RESULT_MAX_CPUS / 64];
};

/**
 * mcp_place() - place a task on a NUMA node
 * @dev:	an open handle
 * @pid:	thread id; 0 = the calling thread
 * @opts:	options, or NULL for the defaults (decide, with a histogram)
 * @result:	out, may be NULL; set its size field before the call
 *
 * Samples the task's resident pages with move_pages(2) (unless
 * MCP_PLACE_OPT_NO_HISTOGRAM) and asks the module to place it.  When the
 * sampling fails the placement goes on without a histogram.
 *
 * Return: 0, or -EPERM (another user's task, needs CAP_SYS_NICE), -ESRCH
 * (no such task), -EAGAIN (MCP_PLACE_OPT_STRICT and no node qualifies),
 * -EINVAL (bad options or sizes, kernel thread), -EOPNOTSUPP (module
 * without placement), or another negative errno.
 */
MCP_EXPORT int mcp_place(struct mcp_device *dev, int pid,
			 const struct mcp_place_opts *opts,
			 struct mcp_place_result *result);

/**
 * mcp_unplace() - give a task back the affinity it had before mcp_place()
 * @dev:	an open handle
 * @pid:	thread id; 0 = the calling thread
 *
 * Return: 0, or -ENOENT (never placed), -EPERM, -ESRCH, or another errno.
 */
MCP_EXPORT int mcp_unplace(struct mcp_device *dev, int pid);

/**
 * mcp_place_reason_name() - "memory-local", "nearest", "sticky", ...
 * @reason:	MCP_REASON_*
 *
 * Return: a static string; "unknown" for an unknown value.
 */
MCP_EXPORT const char *mcp_place_reason_name(uint32_t reason);

/**
 * mcp_place_home_source_name() - "histogram", "numa-faults", "last-cpu", "none"
 * @source:	MCP_HOME_*
 *
 * Return: a static string; "unknown" for an unknown value.
 */
MCP_EXPORT const char *mcp_place_home_source_name(uint32_t source);

/* QoS classes of mcp_qos_create(). */
#define MCP_QOS_BEST_EFFORT	0
#define MCP_QOS_BURSTABLE	1
#define MCP_QOS_GUARANTEED	2

/**
 * struct mcp_qos_spec - a QoS group (cgroup v2) for mcp_qos_create()
 * @size:	sizeof(struct mcp_qos_spec)
 * @qos_class:	MCP_QOS_*
 * @cpus:	vCores for cpu.max (>= 0.125); 0 = no limit
 * @node:	node id for cpuset.cpus/cpuset.mems; -1 = none
 * @memory_min:	memory.min in bytes for guaranteed; 0 = 512M
 * @memory_low:	memory.low in bytes for burstable; 0 = 256M
 */
struct mcp_qos_spec {
	uint32_t size;
	uint32_t qos_class;
	double cpus;
	int32_t node;
	uint32_t reserved;
	uint64_t memory_min;
	uint64_t memory_low;
};

/**
 * mcp_qos_create() - create or reconfigure group @name under
 *		      <cgroup_mount>/mcp.slice
 * @cgroup_mount:	cgroup v2 mount point, NULL for /sys/fs/cgroup
 * @name:		group name (no '/')
 * @spec:		what the group is made of
 *
 * Return: 0, or -ENOENT (cgroup v2 not mounted there), -EOPNOTSUPP (a
 * controller is not available), -EINVAL (e.g. less than 0.125 vCore),
 * -EACCES/-EPERM (no delegation), or another negative errno.
 */
MCP_EXPORT int mcp_qos_create(const char *cgroup_mount, const char *name,
			      const struct mcp_qos_spec *spec);

/**
 * mcp_qos_attach() - move a process into a QoS group
 * @cgroup_mount:	cgroup v2 mount point, NULL for /sys/fs/cgroup
 * @name:		group name
 * @pid:		process id; 0 = the caller
 *
 * Return: 0 or a negative errno.
 */
MCP_EXPORT int mcp_qos_attach(const char *cgroup_mount, const char *name, int pid);

/**
 * mcp_qos_delete() - remove an empty QoS group
 * @cgroup_mount:	cgroup v2 mount point, NULL for /sys/fs/cgroup
 * @name:		group name
 *
 * Return: 0, or -EBUSY (it still has processes), -ENOENT, or another errno.
 */
MCP_EXPORT int mcp_qos_delete(const char *cgroup_mount, const char *name);

/*
 * Accelerator devices: PCI functions bound to mcp.ko, their BARs mapped
 * into the process and their interrupts delivered to eventfds.
 * Documentation/libmcp.rst ("Accelerator devices") has the details.
 */

/* An open device (MCP_IOC_DEV_OPEN).  Opaque. */
struct mcp_accel;

/* A mapped BAR; unmapped by mcp_bar_unmap().  Opaque. */
struct mcp_bar;

/* An eventfd connected to an interrupt vector.  Opaque. */
struct mcp_irq;

/* mcp_accel_bar.flags (the kernel's MCP_BAR_*) */
#define MCP_ACCEL_BAR_PRESENT	(1U << 0)	/* the BAR is implemented */
#define MCP_ACCEL_BAR_MEM	(1U << 1)	/* memory space (else I/O ports) */
#define MCP_ACCEL_BAR_64BIT	(1U << 2)	/* 64-bit memory BAR */
#define MCP_ACCEL_BAR_PREFETCH	(1U << 3)	/* prefetchable */
#define MCP_ACCEL_BAR_MAPPABLE	(1U << 4)	/* can be mapped */
#define MCP_ACCEL_BAR_WC_OK	(1U << 5)	/* may be mapped write-combining */

/* mcp_accel_info.link_flags (the kernel's MCP_LINK_*) */
#define MCP_ACCEL_LINK_PCIE		(1U << 0)	/* link fields valid */
#define MCP_ACCEL_LINK_SPEED_DEGRADED	(1U << 1)
#define MCP_ACCEL_LINK_WIDTH_DEGRADED	(1U << 2)

/* mcp_accel_info.irq_type */
#define MCP_ACCEL_IRQ_NONE	0
#define MCP_ACCEL_IRQ_INTX	1
#define MCP_ACCEL_IRQ_MSI	2
#define MCP_ACCEL_IRQ_MSIX	3

/* mcp_accel_info.wc_test: the kernel's write-combining self-test */
#define MCP_ACCEL_WCTEST_UNTESTED	0
#define MCP_ACCEL_WCTEST_UNSUPPORTED	1
#define MCP_ACCEL_WCTEST_NOT_COMBINING	2
#define MCP_ACCEL_WCTEST_COMBINING	3
#define MCP_ACCEL_WCTEST_NOT_RUN	4	/* backend did not declare it safe */

/* Why a write-combining mapping is or is not allowed (mcp_bar_wc_status()) */
#define MCP_ACCEL_WC_ALLOWED		0
#define MCP_ACCEL_WC_NOT_PREFETCHABLE	1
#define MCP_ACCEL_WC_NO_PLATFORM	2
#define MCP_ACCEL_WC_NOT_MAPPABLE	3

/* One BAR of a device. */
struct mcp_accel_bar {
	uint64_t start;		/* physical start, as in sysfs "resource" */
	uint64_t len;		/* 0 when not present */
	uint32_t flags;		/* MCP_ACCEL_BAR_* */
	uint32_t reserved;
};

#define MCP_ACCEL_MAX_BARS	6

/**
 * struct mcp_accel_info - a device bound to mcp.ko
 * @size:		in: sizeof(struct mcp_accel_info)
 * @index:		device index
 * @numa_node:		NUMA node, -1 when the platform does not say
 * @address:		PCI address "dddd:bb:ss.f", NUL-terminated
 * @vendor, @device, @subsystem_vendor, @subsystem_device: PCI IDs
 * @class_code:		24-bit class code
 * @revision:		revision ID
 * @generic:		1 when no device-specific backend drives it
 * @backend:		backend name ("edu", "generic"), NUL-terminated
 * @irq_type:		MCP_ACCEL_IRQ_*
 * @irq_count:		interrupt vectors
 * @dma_mask:		DMA mask the backend set
 * @link_flags:		MCP_ACCEL_LINK_*
 * @link_speed, @link_speed_cap: MT/s (8000 = Gen3); 0 unknown
 * @link_width, @link_width_cap: lanes; 0 unknown
 * @wc_test:		MCP_ACCEL_WCTEST_*
 * @open_count:		open device fds
 * @bars:		the six BARs
 */
struct mcp_accel_info {
	uint32_t size;
	uint32_t index;
	int32_t numa_node;
	char address[16];
	uint16_t vendor;
	uint16_t device;
	uint16_t subsystem_vendor;
	uint16_t subsystem_device;
	uint32_t class_code;
	uint8_t revision;
	uint8_t generic;
	uint16_t reserved;
	char backend[16];
	uint32_t irq_type;
	uint32_t irq_count;
	uint64_t dma_mask;
	uint32_t link_flags;
	uint32_t link_speed;
	uint32_t link_speed_cap;
	uint32_t link_width;
	uint32_t link_width_cap;
	uint32_t wc_test;
	uint32_t open_count;
	uint32_t reserved2;
	struct mcp_accel_bar bars[MCP_ACCEL_MAX_BARS];
};

/**
 * mcp_accel_list() - indices of the devices bound to mcp.ko
 * @dev:	an open handle
 * @indices:	out, may be NULL if @cap is 0: indices in ascending order
 * @cap:	capacity of @indices, in entries
 * @count:	out: the number of devices (written on success and -ENOSPC)
 *
 * Return: 0, -ENOSPC if @cap is too small (nothing written to @indices),
 * -EOPNOTSUPP (module without devices), -EINVAL, or another errno.
 */
MCP_EXPORT int mcp_accel_list(struct mcp_device *dev, uint32_t *indices,
			      size_t cap, size_t *count);

/**
 * mcp_accel_query() - describe device @index
 * @dev:	an open handle
 * @index:	device index
 * @info:	out; set @info->size first
 *
 * Return: 0, -ENODEV (no such device), -EINVAL, or another errno.
 */
MCP_EXPORT int mcp_accel_query(struct mcp_device *dev, uint32_t index,
			       struct mcp_accel_info *info);

/**
 * mcp_accel_find() - index of the device at a PCI address
 * @dev:	an open handle
 * @address:	"dddd:bb:ss.f" or "bb:ss.f"
 * @index:	out: its index
 *
 * Return: 0, -ENODEV (not bound to mcp.ko), -EINVAL (bad address).
 */
MCP_EXPORT int mcp_accel_find(struct mcp_device *dev, const char *address,
			      uint32_t *index);

/**
 * mcp_accel_open() - open device @index
 * @dev:	an open handle
 * @index:	device index
 * @out:	the new handle; release it with mcp_accel_close()
 *
 * Return: 0, -ENODEV (no such device, or removed), -EINVAL, or another errno.
 */
MCP_EXPORT int mcp_accel_open(struct mcp_device *dev, uint32_t index,
			      struct mcp_accel **out);

/* mcp_accel_close() - close a device handle (NULL is fine). */
MCP_EXPORT void mcp_accel_close(struct mcp_accel *accel);

/* mcp_accel_fd() - the device fd (owned by @accel), or -EINVAL. */
MCP_EXPORT int mcp_accel_fd(const struct mcp_accel *accel);

/**
 * mcp_accel_get_info() - what the device was when it was opened
 * @accel:	an open device
 * @info:	out; set @info->size first
 *
 * Return: 0 or -EINVAL.
 */
MCP_EXPORT int mcp_accel_get_info(const struct mcp_accel *accel,
				  struct mcp_accel_info *info);

/* mcp_bar_map() flags */
#define MCP_BAR_MAP_WC	(1U << 0)	/* write-combining, else uncached */

/**
 * mcp_bar_map() - map (part of) a BAR into the process
 * @accel:	an open device
 * @bar:	BAR number, 0 .. 5
 * @flags:	0 or MCP_BAR_MAP_WC
 * @offset:	page-aligned offset in the BAR
 * @length:	bytes to map; 0 = to the end of the BAR
 * @out:	the mapping; release it with mcp_bar_unmap()
 *
 * An access to a mapping of a removed device raises SIGBUS; libmcp
 * installs no signal handler.
 *
 * Return: 0, -EPERM (needs CAP_SYS_RAWIO), -EINVAL (not mappable, past the
 * end, WC not allowed: mcp_strerror_last() says why), -ENODEV (removed).
 */
MCP_EXPORT int mcp_bar_map(struct mcp_accel *accel, uint32_t bar, uint32_t flags,
			   uint64_t offset, uint64_t length, struct mcp_bar **out);

/* mcp_bar_unmap() - unmap and free @bar (NULL is fine). */
MCP_EXPORT void mcp_bar_unmap(struct mcp_bar *bar);

/* mcp_bar_size() - length of the mapping in bytes (0 if @bar is NULL). */
MCP_EXPORT uint64_t mcp_bar_size(const struct mcp_bar *bar);

/* mcp_bar_data() - the mapping itself (NULL if @bar is NULL). */
MCP_EXPORT volatile void *mcp_bar_data(const struct mcp_bar *bar);

/*
 * Bounds-checked volatile accesses at @offset from the start of the
 * mapping; @offset must be aligned to the width.  Return: 0 or -EINVAL.
 */
MCP_EXPORT int mcp_bar_read32(const struct mcp_bar *bar, uint64_t offset, uint32_t *value);
MCP_EXPORT int mcp_bar_read64(const struct mcp_bar *bar, uint64_t offset, uint64_t *value);
MCP_EXPORT int mcp_bar_write32(const struct mcp_bar *bar, uint64_t offset, uint32_t value);
MCP_EXPORT int mcp_bar_write64(const struct mcp_bar *bar, uint64_t offset, uint64_t value);

/**
 * mcp_bar_write_block() - copy a block, then a store fence
 * @bar:	a mapping (write-combining for its benefit)
 * @offset:	8-byte aligned
 * @data:	bytes to copy
 * @len:	a multiple of 4
 *
 * Ends with an x86 sfence so that the block reaches the device before a
 * doorbell written next.  Return: 0 or -EINVAL.
 */
MCP_EXPORT int mcp_bar_write_block(const struct mcp_bar *bar, uint64_t offset,
				   const void *data, size_t len);

/**
 * mcp_irq_open() - connect a new eventfd to interrupt vector @vector
 * @accel:	an open device
 * @vector:	0 .. irq_count - 1
 * @out:	the handle; release it with mcp_irq_close() (disconnects)
 *
 * One handle per vector and @accel: a second is refused while the first
 * is open.
 *
 * Return: 0, -EINVAL (bad vector), -EBUSY (another handle of @accel, or
 * another open of the device, holds @vector), -ENODEV (removed), or
 * another errno.
 */
MCP_EXPORT int mcp_irq_open(struct mcp_accel *accel, uint32_t vector,
			    struct mcp_irq **out);

/* mcp_irq_close() - disconnect and close (NULL is fine). */
MCP_EXPORT void mcp_irq_close(struct mcp_irq *irq);

/* mcp_irq_fd() - the eventfd, for poll(2) (POLLIN), or -EINVAL. */
MCP_EXPORT int mcp_irq_fd(const struct mcp_irq *irq);

/**
 * mcp_irq_wait() - wait for interrupts
 * @irq:	the handle
 * @timeout_ms:	longest wait in ms; 0 = do not wait, negative = forever
 * @count:	out, may be NULL: interrupts since the last wait
 *
 * Return: 1 with *@count set, 0 on time-out (or a signal), or a negative errno.
 */
MCP_EXPORT int mcp_irq_wait(struct mcp_irq *irq, int timeout_ms, uint64_t *count);

/* mcp_irq_unmask() - re-enable a masked INTx line.  Return: 0 or -errno. */
MCP_EXPORT int mcp_irq_unmask(struct mcp_irq *irq);

/**
 * mcp_strerror_last() - message of the last failed libmcp call on this thread
 *
 * The message is a sentence a user can act on, e.g. "the mcp kernel module
 * is not loaded: run 'sudo modprobe mcp'".  It stays valid until the next
 * failing libmcp call on the same thread; successful calls do not clear it.
 *
 * Return: the message, or "" if no call has failed on this thread.
 */
MCP_EXPORT const char *mcp_strerror_last(void);

/*
 * Events: placement decisions the module applied, received over its
 * generic netlink family "mcp" (multicast group "events").  Listening needs
 * no access to /dev/mcp.  Documentation/events.rst has the details.
 */

/* A subscription to the module's events.  Opaque. */
struct mcp_events;

/* Values of mcp_event_place.origin (the kernel's enum mcp_place_origin). */
#define MCP_ORIGIN_IOCTL	1	/* MCP_IOC_PLACE */
#define MCP_ORIGIN_REBALANCER	2	/* the in-kernel rebalancer */
#define MCP_ORIGIN_UNPLACE	3	/* MCP_IOC_UNPLACE */

/**
 * struct mcp_event_place - one applied placement decision
 * @size:		in: sizeof(struct mcp_event_place)
 * @pid:		thread id of the task (initial pid namespace)
 * @from_node:		node before, -1 unknown
 * @to_node:		node after, -1 none
 * @reason:		the kernel's enum mcp_place_reason (0 none,
 *			1 memory-local, 2 nearest, 3 sticky, 4 unchanged,
 *			5 forced)
 * @origin:		MCP_ORIGIN_*
 * @timestamp_ns:	CLOCK_MONOTONIC when it was applied, ns
 * @comm:		the task's comm, NUL-terminated
 */
struct mcp_event_place {
	uint32_t size;
	int32_t pid;
	int32_t from_node;
	int32_t to_node;
	uint32_t reason;
	uint32_t origin;
	uint64_t timestamp_ns;
	char comm[16];
};

/**
 * mcp_events_open() - subscribe to the module's events
 * @out:	on success, the new handle; release it with mcp_events_close()
 *
 * Return: 0, or -ENOENT (the mcp module is not loaded), -EPROTO (the module
 * has no "events" group), -EINVAL, -ENOMEM, or another negative errno.
 */
MCP_EXPORT int mcp_events_open(struct mcp_events **out);

/**
 * mcp_events_fd() - the netlink socket, for poll(2)/epoll (POLLIN)
 *
 * Return: the descriptor (owned by the handle), or -EINVAL.
 */
MCP_EXPORT int mcp_events_fd(const struct mcp_events *events);

/**
 * mcp_events_next() - wait for the next event
 * @events:	the subscription
 * @timeout_ms:	longest wait in ms; 0 = do not wait, negative = forever
 * @out:	the event; set @out->size first
 *
 * Return: 1 with *@out filled, 0 on time-out (or a signal), or -ENODEV
 * (the module was unloaded), -EINVAL, -EPROTO or another negative errno.
 */
MCP_EXPORT int mcp_events_next(struct mcp_events *events, int timeout_ms,
			       struct mcp_event_place *out);

/**
 * mcp_events_overruns() - times events were lost since mcp_events_open()
 *
 * The kernel drops events for a listener whose receive buffer is full
 * (ENOBUFS); each such report counts one.  Read events promptly.
 */
MCP_EXPORT uint64_t mcp_events_overruns(const struct mcp_events *events);

/* mcp_events_close() - unsubscribe and free @events (NULL is fine). */
MCP_EXPORT void mcp_events_close(struct mcp_events *events);

/**
 * mcp_place_origin_name() - "ioctl", "rebalancer", "unplace" or "unknown"
 * @origin:	MCP_ORIGIN_*
 */
MCP_EXPORT const char *mcp_place_origin_name(uint32_t origin);

#ifdef __cplusplus
}
#endif

/* The eBPF tracers (Documentation/observability.rst). */
#include <mcp/trace.h>
/* The tensor pool shared between processes (Documentation/tensor-pool.rst). */
#include <mcp/tensor_pool.h>
/* Buffers, DMA and fences (Documentation/libmcp.rst). */
#include <mcp/dma.h>
/* Inference graph definitions (Documentation/graphs.rst). */
#include <mcp/graph.h>
/* The graph runtime: workers, loaded graphs, executions (Documentation/libmcp.rst). */
#include <mcp/runtime.h>
/* Hardware tuning knobs and sessions (Documentation/tuning.rst). */
#include <mcp/tune.h>

#endif /* MCP_MCP_H */
