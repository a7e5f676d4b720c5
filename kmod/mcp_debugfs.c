// SPDX-License-Identifier: GPL-2.0
/*
 * MCP (Model Control Protocol): /sys/kernel/debug/mcp/, the module's
 * counters and the cpu DMA engine's fault injection (mcp_engine_cpu.c).
 * Documented in Documentation/ABI/testing/debugfs-mcp.
 *
 * debugfs is optional: nothing here can fail module load, and the counters
 * are kept whether or not debugfs is there to show them.
 */

#include <linux/atomic.h>
#include <linux/debugfs.h>
#include <linux/seq_file.h>

#include "mcp_dma.h"
#include "mcp_internal.h"

atomic64_t mcp_counters[MCP_NR_COUNTERS];

/* One name per enum mcp_counter entry, as printed in "counters". */
static const char * const mcp_counter_names[] = {
	[MCP_CTR_OPEN_FILES] = "open_files",
	[MCP_CTR_IOCTLS] = "ioctls",
	[MCP_CTR_IOCTL_ERRORS] = "ioctl_errors",
	[MCP_CTR_EVENTS_SENT] = "events_sent",
	[MCP_CTR_EVENTS_UNHEARD] = "events_unheard",
	[MCP_CTR_EVENTS_DROPPED] = "events_dropped",
	[MCP_CTR_PLACED_TASKS] = "placed_tasks",
	[MCP_CTR_REBALANCE_PASSES] = "rebalance_passes",
	[MCP_CTR_REBALANCE_NS] = "rebalance_ns",
	[MCP_CTR_DEVICE_OBJECTS] = "device_objects",
	[MCP_CTR_DEVICE_FILES] = "device_files",
	[MCP_CTR_BAR_MAPPINGS] = "bar_mappings",
	[MCP_CTR_IRQ_EVENTFDS] = "irq_eventfds",
	[MCP_CTR_BO_OBJECTS] = "bo_objects",
	[MCP_CTR_BO_KERNEL_PAGES] = "bo_kernel_pages",
	[MCP_CTR_BO_PINNED_PAGES] = "bo_pinned_pages",
	[MCP_CTR_BO_MAPPINGS] = "bo_mappings",
	[MCP_CTR_BO_EXPORTS] = "bo_exports",
	[MCP_CTR_BO_IMPORTS] = "bo_imports",
	[MCP_CTR_DMA_JOBS_IN_FLIGHT] = "dma_jobs_in_flight",
	[MCP_CTR_DMA_JOBS_TOTAL] = "dma_jobs_total",
	[MCP_CTR_GRAPH_OBJECTS] = "graph_objects",
	[MCP_CTR_GRAPH_EXECS_IN_FLIGHT] = "graph_execs_in_flight",
	[MCP_CTR_GRAPH_JOBS_TOTAL] = "graph_jobs_total",
	[MCP_CTR_GRAPH_WORKERS] = "graph_workers",
	[MCP_CTR_TUNE_SESSIONS] = "tune_sessions",
	[MCP_CTR_TUNE_ONLINE_APPLIED] = "tune_online_applied",
};

static_assert(ARRAY_SIZE(mcp_counter_names) == MCP_NR_COUNTERS);

static struct dentry *mcp_debugfs_dir;

static int mcp_counters_show(struct seq_file *m, void *unused)
{
	int i;

	for (i = 0; i < MCP_NR_COUNTERS; i++)
		seq_printf(m, "%s %lld\n", mcp_counter_names[i],
			   mcp_counter_read(i));
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(mcp_counters);

void mcp_debugfs_init(void)
{
	mcp_debugfs_dir = debugfs_create_dir(KBUILD_MODNAME, NULL);
	debugfs_create_file("counters", 0444, mcp_debugfs_dir, NULL,
			    &mcp_counters_fops);
	mcp_engine_cpu_debugfs_init(mcp_debugfs_dir);
}

void mcp_debugfs_exit(void)
{
	debugfs_remove_recursive(mcp_debugfs_dir);
	mcp_debugfs_dir = NULL;
}
