// SPDX-License-Identifier: GPL-2.0
/*
 * MCP (Model Control Protocol): the write-combining self-test, run once
 * per device at probe: the same stores timed through an uncached and a
 * write-combining kernel mapping of the first page of the first WC-capable
 * BAR, only for a backend that declares the test safe
 * (mcp_backend.wc_test_safe).  Documentation/devices.rst
 * ("Write-combining self-test") has the method, the results and the
 * limits.
 *
 * Locks: none; runs in probe before the device is published.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/io.h>
#include <linux/ktime.h>
#include <linux/pci.h>
#include <linux/slab.h>

#include "mcp_pci.h"

#define MCP_WC_TEST_LEN		PAGE_SIZE
#define MCP_WC_TEST_ROUNDS	8
/* WC must be at least this many times faster to count as combining. */
#define MCP_WC_TEST_SPEEDUP	2

/* Best of several rounds of stores over the page, until they landed. */
static u64 mcp_wc_time_stores(void __iomem *page)
{
	u64 best = U64_MAX;
	unsigned int round;
	size_t off;

	for (round = 0; round < MCP_WC_TEST_ROUNDS; round++) {
		u64 start = ktime_get_ns();

		for (off = 0; off < MCP_WC_TEST_LEN; off += sizeof(u32))
			writel(round ^ off, page + off);
		/* Drain the WC buffers, then a read pushes posted writes. */
		wmb();
		readl(page);
		best = min(best, ktime_get_ns() - start);
	}
	return best;
}

/* One mapping at a time: an uncached alias would degrade the WC one. */
static int mcp_wc_time_bar(struct pci_dev *pdev, unsigned int bar,
			   bool wc, u64 *ns)
{
	resource_size_t start = pci_resource_start(pdev, bar);
	void __iomem *page;

	page = wc ? ioremap_wc(start, MCP_WC_TEST_LEN) :
		    ioremap(start, MCP_WC_TEST_LEN);
	if (!page)
		return -ENOMEM;
	*ns = mcp_wc_time_stores(page);
	iounmap(page);
	return 0;
}

static u32 mcp_wc_test_bar(struct mcp_dev *mdev, unsigned int bar)
{
	struct pci_dev *pdev = mdev->pdev;
	resource_size_t start = pci_resource_start(pdev, bar);
	void __iomem *page;
	u64 uc_ns, wc_ns;
	void *saved;
	u32 result = MCP_WC_UNTESTED;

	saved = kmalloc(MCP_WC_TEST_LEN, GFP_KERNEL);
	if (!saved)
		return MCP_WC_UNTESTED;

	page = ioremap(start, MCP_WC_TEST_LEN);
	if (!page)
		goto out_free;
	memcpy_fromio(saved, page, MCP_WC_TEST_LEN);
	iounmap(page);

	if (mcp_wc_time_bar(pdev, bar, false, &uc_ns) ||
	    mcp_wc_time_bar(pdev, bar, true, &wc_ns))
		goto out_restore;

	result = wc_ns * MCP_WC_TEST_SPEEDUP <= uc_ns ?
		 MCP_WC_COMBINING : MCP_WC_NOT_COMBINING;
	pci_info(pdev, "write-combining self-test on BAR%u: %llu ns uncached, %llu ns write-combining: %s\n",
		 bar, uc_ns, wc_ns,
		 result == MCP_WC_COMBINING ? "combining" : "not combining");

out_restore:
	page = ioremap(start, MCP_WC_TEST_LEN);
	if (page) {
		memcpy_toio(page, saved, MCP_WC_TEST_LEN);
		iounmap(page);
	}
out_free:
	kfree(saved);
	if (result == MCP_WC_UNTESTED)
		pci_warn(pdev, "write-combining self-test on BAR%u could not map it\n",
			 bar);
	return result;
}

/**
 * mcp_wc_self_test() - decide whether WC mappings of the device combine
 * @mdev:	the device, enabled, not yet published
 *
 * Touches the device only when its backend declares the test safe.
 *
 * Return: enum mcp_wc_test; MCP_WC_NOT_RUN for a BAR that could be tested
 * on a device whose backend (or the generic path) does not declare it.
 */
u32 mcp_wc_self_test(struct mcp_dev *mdev)
{
	bool no_platform = false;
	unsigned int bar;

	for (bar = 0; bar < MCP_DEV_MAX_BARS; bar++) {
		switch (mcp_bar_wc_status(mdev, bar)) {
		case MCP_WC_ALLOWED:
			if (!mdev->backend || !mdev->backend->wc_test_safe) {
				pci_info(mdev->pdev, "write-combining self-test not run: backend %s does not declare it safe\n",
					 mdev->backend ? mdev->backend->name : "generic");
				return MCP_WC_NOT_RUN;
			}
			return mcp_wc_test_bar(mdev, bar);
		case MCP_WC_NO_PLATFORM:
			no_platform = true;
			break;
		default:
			break;
		}
	}
	return no_platform ? MCP_WC_UNSUPPORTED : MCP_WC_UNTESTED;
}
