// SPDX-License-Identifier: GPL-2.0
/*
 * MCP (Model Control Protocol): /proc/PID/fdinfo of a context's fd, the
 * host context's /dev/mcp file and a device fd alike, in the format of
 * DRM's client usage statistics (Documentation/gpu/drm-usage-stats.rst),
 * so the tools that read those (gputop, nvtop, mcpctl top) find buffer
 * memory that is in no process's RSS:
 *
 *   drm-driver:		mcp
 *   drm-client-id:		unique per context while the module is loaded
 *   drm-pdev:			the device's PCI address (device fds only)
 *   drm-total-system:		kernel BOs of the context, KiB
 *   drm-resident-system:	of which resident: all, they are never swapped
 *   drm-memory-system:		the same, under the key older tools read
 *   drm-total-userptr:		user-pointer BOs (pinned user memory), KiB
 *   drm-resident-userptr:	the same: pinned pages are resident
 *
 * Imported BOs are the exporter's memory and count there.  A BO whose
 * handle is destroyed but which a mapping, a job or an exported dma-buf
 * still holds is no longer the context's and no longer counts.
 *
 * Locks: mcp_ctx.lock around the walk of the handle table.
 */

#include <linux/fs.h>
#include <linux/mutex.h>
#include <linux/pci.h>
#include <linux/seq_file.h>
#include <linux/xarray.h>

#include "mcp_bo.h"
#include "mcp_ctx.h"
#include "mcp_pci.h"

/**
 * mcp_ctx_show_fdinfo() - .show_fdinfo of a context's fd
 * @m:		the fdinfo file
 * @file:	the fd's file; its private_data is the context
 */
void mcp_ctx_show_fdinfo(struct seq_file *m, struct file *file)
{
	struct mcp_ctx *ctx = file->private_data;
	u64 system = 0, userptr = 0;
	unsigned long handle;
	struct mcp_bo *bo;

	mutex_lock(&ctx->lock);
	xa_for_each(&ctx->bos, handle, bo) {
		if (bo->kind == MCP_BO_KIND_KERNEL)
			system += bo->length;
		else if (bo->kind == MCP_BO_KIND_USERPTR)
			userptr += bo->length;
	}
	mutex_unlock(&ctx->lock);

	seq_puts(m, "drm-driver:\tmcp\n");
	seq_printf(m, "drm-client-id:\t%llu\n", ctx->client_id);
	if (ctx->mdev)
		seq_printf(m, "drm-pdev:\t%s\n", pci_name(ctx->mdev->pdev));
	seq_printf(m, "drm-total-system:\t%llu KiB\n", system >> 10);
	seq_printf(m, "drm-resident-system:\t%llu KiB\n", system >> 10);
	seq_printf(m, "drm-memory-system:\t%llu KiB\n", system >> 10);
	seq_printf(m, "drm-total-userptr:\t%llu KiB\n", userptr >> 10);
	seq_printf(m, "drm-resident-userptr:\t%llu KiB\n", userptr >> 10);
}
