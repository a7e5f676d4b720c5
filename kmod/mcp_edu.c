// SPDX-License-Identifier: GPL-2.0
/*
 * MCP (Model Control Protocol): backend for QEMU's edu device (1234:11e8),
 * the reference accelerator.
 *
 * BAR0 is 1 MiB of registers: ID 0x00, liveness 0x04, factorial 0x08,
 * status 0x20, interrupt status/raise/acknowledge 0x24/0x60/0x64, DMA
 * 0x80-0x98.  Userspace drives the device through its mapping; the kernel
 * acknowledges interrupts, which edu needs even under MSI: the bits read
 * from 0x24 are written to 0x64.  Its DMA registers belong to the DMA
 * engine (mcp_engine_edu.c), whose interrupt is status bit 0x100.  Its
 * registers are not safe to write-combine, so it declares no WC-safe BAR.
 *
 * Locks: none; the interrupt registers are only touched by the handler
 * and by the DMA engine's abort, which only acknowledges its own bit.
 */

#include <linux/io.h>
#include <linux/pci.h>

#include "mcp_dma.h"
#include "mcp_pci.h"

#define MCP_EDU_BAR		0
#define MCP_EDU_REG_ID		0x00
#define MCP_EDU_REG_IRQ_STATUS	0x24
#define MCP_EDU_REG_IRQ_ACK	0x64
#define MCP_EDU_IRQ_DMA		0x100

/* Major version 1 in the top byte, "ed" in the low bytes. */
#define MCP_EDU_ID_MASK		0xff00ffff
#define MCP_EDU_ID		0x010000ed

static int mcp_edu_probe(struct mcp_dev *mdev)
{
	struct pci_dev *pdev = mdev->pdev;
	void __iomem *regs;
	u32 id;

	/* Mapped but not requested: sysfs resource0 stays usable. */
	regs = pcim_iomap(pdev, MCP_EDU_BAR, 0);
	if (!regs)
		return -ENOMEM;

	id = ioread32(regs + MCP_EDU_REG_ID);
	if ((id & MCP_EDU_ID_MASK) != MCP_EDU_ID) {
		pci_err(pdev, "edu: unexpected ID register 0x%08x\n", id);
		pcim_iounmap(pdev, regs);
		return -ENODEV;
	}

	/* Nothing may be left pending from a previous driver. */
	iowrite32(ioread32(regs + MCP_EDU_REG_IRQ_STATUS),
		  regs + MCP_EDU_REG_IRQ_ACK);
	mdev->regs = regs;

	mdev->engine = mcp_engine_edu_create(mdev);
	if (IS_ERR(mdev->engine)) {
		int ret = PTR_ERR(mdev->engine);

		mdev->engine = NULL;
		mdev->regs = NULL;
		pcim_iounmap(pdev, regs);
		return ret;
	}
	return 0;
}

static void mcp_edu_remove(struct mcp_dev *mdev)
{
	mcp_engine_edu_destroy(mdev->engine);
	mdev->engine = NULL;
	pcim_iounmap(mdev->pdev, mdev->regs);
	mdev->regs = NULL;
}

static bool mcp_edu_irq_ack(struct mcp_dev *mdev, unsigned int vector)
{
	u32 status = ioread32(mdev->regs + MCP_EDU_REG_IRQ_STATUS);

	/* 0: not edu's (shared INTx); ~0: the device is gone or resetting. */
	if (!status || status == ~0U)
		return false;
	iowrite32(status, mdev->regs + MCP_EDU_REG_IRQ_ACK);
	if (status & MCP_EDU_IRQ_DMA)
		mcp_engine_edu_irq(mdev->engine);
	return true;
}

static const struct pci_device_id mcp_edu_ids[] = {
	{ PCI_DEVICE(MCP_EDU_VENDOR, MCP_EDU_DEVICE) },
	{ }
};

const struct mcp_backend mcp_edu_backend = {
	.name = "edu",
	.ids = mcp_edu_ids,
	/*
	 * edu truncates DMA addresses to its dma_mask property, 28 bits by
	 * default: mcp.ko drives edu with dma_mask=0xffffffff (as the test
	 * VM has it), so BOs anywhere below 4 GiB need no bouncing.
	 */
	.dma_bits = 32,
	.max_irqs = 1,
	.wc_safe_bars = 0,
	/*
	 * Not wc_test_safe: the test stores to a BAR's whole first page,
	 * which on edu holds the factorial, interrupt-raise and DMA
	 * command registers.  (edu has no WC-capable BAR, so nothing would
	 * be tested anyway.)
	 */
	.wc_test_safe = false,
	.probe = mcp_edu_probe,
	.remove = mcp_edu_remove,
	.irq_ack = mcp_edu_irq_ack,
};
