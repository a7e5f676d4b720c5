// SPDX-License-Identifier: GPL-2.0
/*
 * MCP (Model Control Protocol): /proc/PID/fdinfo of a context's fd, the
 * host context's /dev/mcp file and a device fd alike, in the format of
 * DRM's client usage statistics (Documentation/gpu/drm-usage-stats.rst):
 * drm-driver, drm-client-id, drm-pdev (device fds only), drm-total-,
 * drm-resident- and drm-memory-system, drm-total- and
 * drm-resident-userptr.  Documentation/buffers.rst ("Where buffer memory
 * shows") says what each key counts.
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
