/* SPDX-License-Identifier: GPL-2.0 */
/*
 * MCP (Model Control Protocol): the hardware tuning registry, shared by
 * mcp_tune.c (list, sessions, rollback, CPU hotplug) and the files that
 * provide knobs: mcp_tune_prefetch.c (prefetcher MSRs per CPU model) and
 * mcp_tune_dma.c (the DMA coalescing knobs of sysfs, listed read-only).
 */
#ifndef _MCP_TUNE_H
#define _MCP_TUNE_H

#include <linux/fs.h>
#include <linux/types.h>

#include <linux/mcp.h>

struct mcp_tuner;

/**
 * struct mcp_tune_cell - one knob's state on one CPU
 * @boot:		value when the module first saw the CPU
 * @committed:		value a commit made permanent
 * @held:		value the holding session set
 * @saved:		value to restore when the holder rolls back, or that
 *			a CPU coming online gets with @restore_pending
 * @undo:		value before the SET in progress (for its unwinding)
 * @holder:		session that changed the value, or NULL
 * @boot_valid:		@boot was read
 * @committed_valid:	@committed applies
 * @restore_pending:	the holder went away while the CPU was offline
 *
 * Protected by mcp_tune_lock.
 */
struct mcp_tune_cell {
	u64 boot;
	u64 committed;
	u64 held;
	u64 saved;
	u64 undo;
	struct mcp_tuner *holder;
	bool boot_valid;
	bool committed_valid;
	bool restore_pending;
};

/**
 * struct mcp_tune_knob - one entry of the registry
 * @name:	the name userspace sees ("prefetch.l2_stream")
 * @scope:	enum mcp_tune_scope
 * @type:	enum mcp_tune_type
 * @min:	smallest accepted value
 * @max:	largest accepted value
 * @status:	enum mcp_tune_status, before lockdown is considered
 * @reason:	why @status is not MCP_TUNE_SUPPORTED, or what the knob is
 * @read:	reads the value on @cpu (any CPU for a system knob)
 * @write:	writes @val on @cpu; NULL for a read-only knob
 * @boot_value:	for a system knob, the value at load; NULL otherwise
 * @reg:	the provider's register: an MSR, or an enum mcp_dma_knob
 * @mask:	for a prefetcher: its disable bit in @reg
 * @cells:	nr_cpu_ids cells for a writable knob, else NULL
 *
 * @status and @reason may change once (a write that does not stick makes
 * the knob unsupported), under mcp_tune_lock.
 */
struct mcp_tune_knob {
	const char *name;
	u32 scope;
	u32 type;
	u64 min;
	u64 max;
	u32 status;
	char reason[MCP_TUNE_REASON_LEN];
	int (*read)(const struct mcp_tune_knob *knob, unsigned int cpu,
		    u64 *val);
	int (*write)(const struct mcp_tune_knob *knob, unsigned int cpu,
		     u64 val);
	u64 (*boot_value)(const struct mcp_tune_knob *knob);
	u32 reg;
	u64 mask;
	struct mcp_tune_cell *cells;
};

/* mcp_tune_prefetch.c: the prefetcher knobs, in registry order */
#define MCP_TUNE_NR_PREFETCH	6
void mcp_tune_prefetch_init(struct mcp_tune_knob *knobs);

/* mcp_tune_dma.c: the host DMA knobs of sysfs, read-only here */
#define MCP_TUNE_NR_DMA		3
void mcp_tune_dma_init(struct mcp_tune_knob *knobs);

#define MCP_TUNE_NR_KNOBS	(MCP_TUNE_NR_PREFETCH + MCP_TUNE_NR_DMA)

/*
 * mcp_tune.c: module init/exit and the ioctls of /dev/mcp (the session
 * ioctls are the session fd's own).  MCP_IOC_TUNE_SESSION's kernel
 * argument carries the file to install once the fd number reached the
 * caller.
 */
struct mcp_tune_session_karg {
	struct mcp_tune_session arg;
	struct file *file;
};

int mcp_tune_init(void);
void mcp_tune_exit(void);
int mcp_ioctl_tune_list(struct file *file, void *karg);
int mcp_ioctl_tune_session(struct file *file, void *karg);
void mcp_ioctl_tune_session_publish(void *karg, bool copied);

#endif /* _MCP_TUNE_H */
