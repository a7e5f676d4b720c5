/* SPDX-License-Identifier: GPL-2.0 */
/*
 * MCP (Model Control Protocol): declarations shared by the files of mcp.ko.
 *
 * Lock order (outermost first):
 *
 *   cpus_read_lock()	CPU hotplug; held by mcp_topology.c while it takes
 *			its snapshot.  Never held across copy_to_user().
 *
 *   mcp_place_lock	mutex (mcp_place.c): per-task placement state.  Held
 *			across set_cpus_allowed_ptr() (the target's pi_lock
 *			and runqueue lock nest inside).  Never held across
 *			copy_to_user(), copy_from_user() or
 *			mcp_netlink_place_event(), so a caller's own
 *			mmap_lock (a fault on its reply buffer) never nests
 *			inside and an event's allocation never stalls
 *			placement: MCP_IOC_PLACE, MCP_IOC_UNPLACE and the
 *			rebalancer copy out and send their events after
 *			dropping it.
 *     mmap_lock	read, trylock, of a placed task's mm (mcp_rebalance.c)
 *   mcp_idle_lock	spinlock (mcp_idle.c): the idle CPU mask; taken alone
 *			(mcp_idle_snapshot() runs before mcp_place_lock is
 *			taken), nothing sleeps under it.
 *
 *   mmap_lock		of a process mapping or faulting in a BAR or a BO
 *     mcp_dev.lock	mutex (mcp_pci.h): one accelerator device's state,
 *			its BAR mapping counts and its eventfds
 *       i_mmap_rwsem	in unmap_mapping_range(), revoking the mappings
 *       mcp_irq.mask_lock spinlock, irq-safe: generic INTx mask state
 *     mcp_ctx.lock	(below) mmap() of a BO looks its handle up under
 *			the caller's mmap_lock (mcp_ctx_mmap())
 *   mcp_devs		the device registry's xarray spinlock (mcp_pci.c);
 *			taken alone
 *
 *   mcp_ctx.lock	mutex (mcp_ctx.h): a context's handle table; never
 *			held across copy_to_user() or a wait for a job
 *     mcp_bo.lock	mutex (mcp_bo.h): a BO's kernel mapping; an imported
 *			BO's (a class of its own) is held across
 *			dma_buf_vmap(), which takes the dma-buf's lock:
 *       dma_buf.lock	mutex (the dma-buf core's, around ->vmap); for a
 *			dma-buf MCP exported, ->vmap takes that BO's lock:
 *         mcp_bo.lock	of the exported BO
 *
 *   mcp_worker.read_lock mutex (mcp_sched.h): a worker fd's buffer for
 *			reads of several jobs; held across such a read
 *     mcp_sched.lock	spinlock (mcp_sched.h): a context's graph executions,
 *			worker jobs and workers; process context only,
 *			nothing sleeps, no fence is signalled and no copy
 *			to or from user memory is made under it; nothing
 *			nests inside but wake_up()'s wait-queue locks, the
 *			workqueue pool lock of queue_work_node() and a
 *			kthread_worker's lock (a ready DEVICE or CPU job is
 *			queued under it)
 *
 *   mcp_charged.lock	mutex (mcp_charge.h): creation of a context's
 *			charged workers, in the submitting ioctl with no
 *			other MCP lock held; cgroup_mutex and
 *			cpus_read_lock() nest inside
 *			(cgroup_attach_task_all())
 *
 *   dma_fence.lock	an in-fence's, around its callbacks (mcp_dma.c and
 *			mcp_sched.c, which only queues a work item there)
 *     mcp_dma_ctx.lock	spinlock, irq-safe: a context's DMA job queue;
 *			nothing sleeps under it
 *     DMA engine locks	spinlocks, irq-safe (mcp_engine_edu.c): an engine's
 *			queue; never under mcp_dma_ctx.lock
 *
 * mcp_place.h, mcp_pci.h and mcp_dma.h have the details.  The counters
 * are atomic64_t and need no lock.  New locks are added to this list in
 * the order they nest.
 */
#ifndef _MCP_INTERNAL_H
#define _MCP_INTERNAL_H

#include <linux/atomic.h>
#include <linux/device.h>
#include <linux/fs.h>
#include <linux/sched.h>
#include <linux/types.h>

#include <linux/mcp.h>

#include "mcp_compat.h"

/* Adaptive placement reads the scheduler's run_delay and pcount. */
#ifdef CONFIG_SCHED_INFO
#define MCP_FEAT_PLACE_ADAPTIVE_IF_BUILT	MCP_FEAT_PLACE_ADAPTIVE
#else
#define MCP_FEAT_PLACE_ADAPTIVE_IF_BUILT	0
#endif

/* MCP_FEAT_* bits this build implements. */
#define MCP_FEATURES		(MCP_FEAT_VERSION | MCP_FEAT_TOPOLOGY | \
				 MCP_FEAT_EVENTS | MCP_FEAT_PLACE | \
				 MCP_FEAT_DEVICES | MCP_FEAT_BUFFERS | \
				 MCP_FEAT_DMA | MCP_FEAT_GRAPHS | \
				 MCP_FEAT_GRAPH_COMPACT | MCP_FEAT_JOB_BATCH | \
				 MCP_FEAT_JOB_CHAINS | MCP_FEAT_WORKER_OPS | \
				 MCP_FEAT_PLACE_ADAPTIVE_IF_BUILT | \
				 MCP_FEAT_TUNE)

/*
 * Counters shown in /sys/kernel/debug/mcp/counters.  To add one, add an
 * entry here (before MCP_NR_COUNTERS) and its name in mcp_debugfs.c.
 */
enum mcp_counter {
	MCP_CTR_OPEN_FILES,	/* currently open /dev/mcp files */
	MCP_CTR_IOCTLS,		/* ioctl calls since load */
	MCP_CTR_IOCTL_ERRORS,	/* ioctl calls that returned an error */
	MCP_CTR_EVENTS_SENT,	/* netlink events delivered to the group */
	MCP_CTR_EVENTS_UNHEARD,	/* netlink events nobody listened to */
	MCP_CTR_EVENTS_DROPPED,	/* netlink events lost: no memory, full buffers */
	MCP_CTR_PLACED_TASKS,	/* tasks with placement state (mcp_place.c) */
	MCP_CTR_REBALANCE_PASSES, /* rebalancer passes since load */
	MCP_CTR_REBALANCE_NS,	/* wall time spent in those passes, ns */
	MCP_CTR_DEVICE_OBJECTS,	/* live struct mcp_dev, bound or held by fds */
	MCP_CTR_DEVICE_FILES,	/* open device fds */
	MCP_CTR_BAR_MAPPINGS,	/* VMAs mapping a BAR */
	MCP_CTR_IRQ_EVENTFDS,	/* eventfds connected to interrupt vectors */
	MCP_CTR_BO_OBJECTS,	/* live struct mcp_bo (mcp_bo.c) */
	MCP_CTR_BO_KERNEL_PAGES, /* pages allocated for kernel BOs */
	MCP_CTR_BO_PINNED_PAGES, /* user pages pinned by user-pointer BOs */
	MCP_CTR_BO_MAPPINGS,	/* VMAs mapping a BO */
	MCP_CTR_BO_EXPORTS,	/* live dma-bufs exported from BOs */
	MCP_CTR_BO_IMPORTS,	/* imported dma-bufs held by BOs */
	MCP_CTR_DMA_JOBS_IN_FLIGHT, /* DMA jobs submitted, not finished */
	MCP_CTR_DMA_JOBS_TOTAL,	/* DMA jobs submitted since load */
	MCP_CTR_GRAPH_OBJECTS,	/* live struct mcp_graph (mcp_graph.c) */
	MCP_CTR_GRAPH_EXECS_IN_FLIGHT, /* graph executions not yet ended */
	MCP_CTR_GRAPH_JOBS_TOTAL, /* graph nodes dispatched to an engine */
	MCP_CTR_GRAPH_WORKERS,	/* open worker fds (mcp_worker.c) */
	MCP_CTR_TUNE_SESSIONS,	/* open tuning session fds (mcp_tune.c) */
	MCP_CTR_TUNE_ONLINE_APPLIED, /* values re-applied to CPUs coming online */
	MCP_NR_COUNTERS
};

extern atomic64_t mcp_counters[MCP_NR_COUNTERS];

static inline void mcp_counter_inc(enum mcp_counter ctr)
{
	atomic64_inc(&mcp_counters[ctr]);
}

static inline void mcp_counter_dec(enum mcp_counter ctr)
{
	atomic64_dec(&mcp_counters[ctr]);
}

static inline void mcp_counter_add(enum mcp_counter ctr, s64 delta)
{
	atomic64_add(delta, &mcp_counters[ctr]);
}

static inline s64 mcp_counter_read(enum mcp_counter ctr)
{
	return atomic64_read(&mcp_counters[ctr]);
}

/**
 * struct mcp_ioctl_desc - how mcp_ioctl_call() handles one ioctl
 * @ksize:		sizeof() the argument struct in this build
 * @size_ver0:		MCP_*_SIZE_VER0 of the argument struct
 * @handler:		does the work on the kernel copy of the argument
 * @publish:		optional: after a successful @handler and the copy
 *			back, told whether the copy worked; makes what the
 *			handler built visible (installs an fd) or drops it
 * @copy_out_on_enospc:	copy the argument back when @handler returns
 *			-ENOSPC too (it carries the sizes the caller needs)
 * @copy_out_on_einval:	copy the argument back when @handler returns
 *			-EINVAL too (it says what was refused)
 * @copy_out_on_error:	copy the argument back on any error of @handler
 *			(it says which CPU, holder or read-back failed)
 */
struct mcp_ioctl_desc {
	size_t ksize;
	size_t size_ver0;
	int (*handler)(struct file *file, void *karg);
	void (*publish)(void *karg, bool copied);
	bool copy_out_on_enospc;
	bool copy_out_on_einval;
	bool copy_out_on_error;
};

/* mcp_main.c: the extensible-struct convention, for every fd of mcp.ko */
long mcp_ioctl_call(struct file *file, unsigned int cmd,
		    const struct mcp_ioctl_desc *desc, void __user *uarg);

/*
 * mcp_pci.c: MCP_IOC_DEV_LIST / DEV_INFO / DEV_OPEN on /dev/mcp and the
 * PCI driver (mcp_pci.h has the rest).  DEV_OPEN's kernel argument carries
 * the file to install once the fd number reached the caller.
 */
struct mcp_dev_open_karg {
	struct mcp_dev_open arg;
	struct file *file;
};

int mcp_ioctl_dev_list(struct file *file, void *karg);
int mcp_ioctl_dev_info(struct file *file, void *karg);
int mcp_ioctl_dev_open(struct file *file, void *karg);
void mcp_ioctl_dev_open_publish(void *karg, bool copied);
int mcp_pci_init(void);
void mcp_pci_exit(void);

/* mcp_topology.c */
int mcp_ioctl_get_topology(struct file *file, void *karg);
int mcp_mem_node(int node);

/*
 * mcp_place.c: MCP_IOC_PLACE / MCP_IOC_UNPLACE, per-task placement state,
 * idle sampling and the rebalancer.  mcp_place_attr_group is the
 * "placement" directory of knobs in /sys/class/misc/mcp/.
 */
int mcp_ioctl_place(struct file *file, void *karg);
int mcp_ioctl_unplace(struct file *file, void *karg);
int mcp_place_init(void);
void mcp_place_exit(void);
extern const struct attribute_group mcp_place_attr_group;

/**
 * struct mcp_place_event - one applied placement decision, for listeners
 * @pid:		thread id of the task
 * @comm:		its comm
 * @from_node:		node before, -1 unknown
 * @to_node:		node after, -1 none
 * @reason:		enum mcp_place_reason
 * @origin:		enum mcp_place_origin
 * @timestamp_ns:	ktime_get_ns() when it was applied
 */
struct mcp_place_event {
	pid_t pid;
	char comm[TASK_COMM_LEN];
	int from_node;
	int to_node;
	u32 reason;
	u32 origin;
	u64 timestamp_ns;
};

/*
 * mcp_netlink.c: the generic netlink family "mcp" and its "events"
 * multicast group.  mcp_netlink_place_event() may sleep: call it from
 * process context without spinlocks held; it is a no-op without listeners.
 */
int mcp_netlink_init(void);
void mcp_netlink_exit(void);
void mcp_netlink_place_event(const struct mcp_place_event *ev);

/* mcp_sysfs.c: attribute groups of the misc device */
extern const struct attribute_group *mcp_sysfs_groups[];

/* mcp_debugfs.c: never fail; debugfs is optional */
void mcp_debugfs_init(void);
void mcp_debugfs_exit(void);

#endif /* _MCP_INTERNAL_H */
