// SPDX-License-Identifier: GPL-2.0
/*
 * MCP (Model Control Protocol): the host context's DMA coalescing knobs
 * (/sys/class/misc/mcp/dma/, Documentation/dma.rst) as entries of the
 * tuning registry, so MCP_IOC_TUNE_LIST shows everything tunable in one
 * place.  They are written through sysfs only and listed read-only; the
 * per-device copies live under each device's mcp/ directory.
 *
 * Locks: none; the values are read with READ_ONCE().
 */

#include <linux/kernel.h>

#include "mcp_ctx.h"
#include "mcp_tune.h"

static const struct {
	const char *name;
	enum mcp_dma_knob knob;
	const char *attr;
} mcp_tune_dma_knobs[MCP_TUNE_NR_DMA] = {
	{ "dma.wc_depth", MCP_DMA_KNOB_WC_DEPTH, "wc_depth" },
	{ "dma.wc_timeout_us", MCP_DMA_KNOB_WC_TIMEOUT_US, "wc_timeout_us" },
	{ "dma.job_timeout_ms", MCP_DMA_KNOB_JOB_TIMEOUT_MS, "job_timeout_ms" },
};

static enum mcp_dma_knob mcp_tune_dma_which(const struct mcp_tune_knob *knob)
{
	return (enum mcp_dma_knob)knob->reg;
}

static int mcp_tune_dma_read(const struct mcp_tune_knob *knob,
			     unsigned int cpu, u64 *val)
{
	u32 def, max;

	*val = mcp_dma_knob_get(&mcp_host_dma_knobs, mcp_tune_dma_which(knob),
				&def, &max);
	return 0;
}

static u64 mcp_tune_dma_boot(const struct mcp_tune_knob *knob)
{
	u32 def, max;

	mcp_dma_knob_get(&mcp_host_dma_knobs, mcp_tune_dma_which(knob),
			 &def, &max);
	return def;
}

/**
 * mcp_tune_dma_init() - fill in the DMA knob entries
 * @knobs:	MCP_TUNE_NR_DMA registry entries
 */
void mcp_tune_dma_init(struct mcp_tune_knob *knobs)
{
	unsigned int i;

	for (i = 0; i < MCP_TUNE_NR_DMA; i++) {
		struct mcp_tune_knob *knob = &knobs[i];
		u32 def, max;

		mcp_dma_knob_get(&mcp_host_dma_knobs,
				 mcp_tune_dma_knobs[i].knob, &def, &max);
		knob->name = mcp_tune_dma_knobs[i].name;
		knob->scope = MCP_TUNE_SCOPE_SYSTEM;
		knob->type = MCP_TUNE_TYPE_U64;
		knob->min = 1;
		knob->max = max;
		knob->status = MCP_TUNE_READ_ONLY;
		snprintf(knob->reason, sizeof(knob->reason),
			 "written through /sys/class/misc/mcp/dma/%s",
			 mcp_tune_dma_knobs[i].attr);
		knob->read = mcp_tune_dma_read;
		knob->boot_value = mcp_tune_dma_boot;
		knob->reg = mcp_tune_dma_knobs[i].knob;
	}
}
