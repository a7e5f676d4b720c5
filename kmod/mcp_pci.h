/* SPDX-License-Identifier: GPL-2.0 */
/*
 * MCP (Model Control Protocol): accelerator devices, the PCI functions
 * bound to mcp.ko.  Shared by mcp_pci.c (driver, registry, DEV_* ioctls),
 * mcp_devfile.c (device fd, BAR mmap, revocation), mcp_irq.c, mcp_wc.c,
 * mcp_dev_sysfs.c and the backends (mcp_edu.c).
 * Documentation/devices.rst describes how they fit together.
 *
 * Lifetime: a struct mcp_dev is refcounted.  The registry (while bound)
 * holds one reference, every device fd one more; the last put frees it,
 * so an fd that outlives its device sees @gone and nothing else.
 *
 * Locks, outermost first (also in mcp_internal.h):
 *
 *   mmap_lock		of a process faulting in or mapping a BAR
 *     mcp_dev.lock	mutex: @gone, @wc_maps, @uc_maps and the eventfds.
 *			Held by the fault handler while it inserts PTEs and
 *			by revocation while it zaps them, so no PTE appears
 *			after a zap.  Held from reset_prepare to reset_done.
 *			Never held across copy_to_user()/copy_from_user().
 *       i_mmap_rwsem	taken by unmap_mapping_range()
 *       mcp_irq.mask_lock spinlock, irq-safe: the INTx mask state
 *
 * mcp_devs (the registry, an xarray) has its own spinlock and is only
 * taken without the locks above.
 */
#ifndef _MCP_PCI_H
#define _MCP_PCI_H

#include <linux/eventfd.h>
#include <linux/fs.h>
#include <linux/kref.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/pci.h>
#include <linux/spinlock.h>
#include <linux/types.h>

#include <linux/mcp.h>

#include "mcp_ctx.h"

struct mcp_dev;
struct mcp_engine;

/**
 * struct mcp_backend - code for one family of devices
 * @name:		reported in DEV_INFO and sysfs; < MCP_DEV_BACKEND_LEN
 * @ids:		the devices it drives, zero-terminated
 * @dma_bits:		DMA addressing width of the family
 * @max_irqs:		interrupt vectors to ask for
 * @wc_safe_bars:	BIT(n): BAR n may be mapped write-combining even
 *			though it is not prefetchable
 * @wc_test_safe:	the write-combining self-test may store to the
 *			first page of the family's first WC-capable BAR at
 *			probe (mcp_wc.c); the generic path never does
 * @probe:		after enable, DMA mask and bus mastering, before
 *			interrupts; may use pcim_* resources and create the
 *			device's DMA engine (mcp_dev.engine); optional
 * @remove:		after bus mastering is off and interrupts are
 *			freed; destroys the DMA engine; optional
 * @reset_done:		re-initialise the device after a function reset;
 *			optional
 * @irq_ack:		hard-irq context: acknowledge the device's interrupt
 *			on @vector; false when it was not the device's
 *			(shared INTx line); optional
 */
struct mcp_backend {
	const char *name;
	const struct pci_device_id *ids;
	unsigned int dma_bits;
	unsigned int max_irqs;
	u32 wc_safe_bars;
	bool wc_test_safe;
	int (*probe)(struct mcp_dev *mdev);
	void (*remove)(struct mcp_dev *mdev);
	void (*reset_done)(struct mcp_dev *mdev);
	bool (*irq_ack)(struct mcp_dev *mdev, unsigned int vector);
};

/**
 * struct mcp_irq - one interrupt vector of a device
 * @mdev:	its device
 * @vector:	0 .. mcp_dev.irq_count - 1
 * @irq:	Linux IRQ number
 * @trigger:	eventfd signalled on each interrupt; RCU for the handler,
 *		written under mcp_dev.lock
 * @owner:	device fd that connected @trigger; its release disconnects
 * @mask_lock:	protects @masked
 * @masked:	generic INTx: masked by the handler until IRQ_UNMASK
 * @name:	shown in /proc/interrupts
 */
struct mcp_irq {
	struct mcp_dev *mdev;
	unsigned int vector;
	unsigned int irq;
	struct eventfd_ctx __rcu *trigger;
	struct file *owner;
	spinlock_t mask_lock;	/* protects @masked */
	bool masked;
	char name[32];
};

/**
 * struct mcp_dev - an accelerator device bound to mcp.ko
 * @ref:	the registry's reference and one per device fd
 * @pdev:	the PCI function; pci_dev_get() until the last put
 * @backend:	device-family code; NULL for the generic path
 * @regs:	the backend's kernel mapping of the device's registers
 * @index:	device index (MCP_IOC_DEV_LIST)
 * @lock:	see the lock order above
 * @gone:	removed: ioctls -ENODEV, faults SIGBUS
 * @wc_maps:	write-combining VMAs per BAR; while non-zero the BAR has a
 *		WC record in x86 PAT (mcp_devfile.c)
 * @uc_maps:	uncached VMAs per BAR; a BAR has VMAs of one mode only
 * @inode:	owns the address_space all BAR mappings of this device
 *		share, so unmap_mapping_range() revokes exactly them
 * @irq_type:	enum mcp_irq_type
 * @irq_count:	vectors in @irqs
 * @irqs:	the vectors; freed on remove (under @lock, with @gone set)
 * @dma_mask:	mask the backend set, 0 when none could be set
 * @wc_test:	enum mcp_wc_test, decided at probe
 * @open_count:	open device fds
 * @engine:	the backend's DMA engine (MCP_ENGINE_DEVICE), NULL when it
 *		has none; set by its probe, cleared by its remove
 * @dma_knobs:	coalescing and job time-out knobs (sysfs mcp/)
 */
struct mcp_dev {
	struct kref ref;
	struct pci_dev *pdev;
	const struct mcp_backend *backend;
	void __iomem *regs;
	u32 index;
	struct mutex lock;	/* see the lock order above */
	bool gone;
	unsigned int wc_maps[MCP_DEV_MAX_BARS];
	unsigned int uc_maps[MCP_DEV_MAX_BARS];
	struct inode *inode;
	u32 irq_type;
	u32 irq_count;
	struct mcp_irq *irqs;
	u64 dma_mask;
	u32 wc_test;
	atomic_t open_count;
	struct mcp_engine *engine;
	struct mcp_dma_knobs dma_knobs;
};

/* mcp_pci.c */
void mcp_dev_get(struct mcp_dev *mdev);
void mcp_dev_put(struct mcp_dev *mdev);
u32 mcp_bar_flags(struct mcp_dev *mdev, unsigned int bar);
u32 mcp_bar_wc_status(struct mcp_dev *mdev, unsigned int bar);
void mcp_dev_link(struct mcp_dev *mdev, struct mcp_dev_info *info);

/* mcp_devfile.c: the device fd and BAR mappings */
int mcp_devfile_init(struct mcp_dev *mdev);
void mcp_devfile_fini(struct mcp_dev *mdev);
struct file *mcp_devfile_open(struct mcp_dev *mdev);
void mcp_dev_revoke_mappings(struct mcp_dev *mdev);

/* mcp_irq.c */
int mcp_irq_init(struct mcp_dev *mdev);
void mcp_irq_fini(struct mcp_dev *mdev);
void mcp_irq_release_owner(struct mcp_dev *mdev, struct file *owner);
int mcp_ioctl_irq_set_eventfd(struct file *file, void *karg);
int mcp_ioctl_irq_unmask(struct file *file, void *karg);

/* mcp_wc.c */
u32 mcp_wc_self_test(struct mcp_dev *mdev);

/* mcp_dev_sysfs.c: the "mcp" directory under each bound PCI device */
extern const struct attribute_group *mcp_dev_sysfs_groups[];

/* Backends */
#define MCP_EDU_VENDOR	0x1234
#define MCP_EDU_DEVICE	0x11e8
extern const struct mcp_backend mcp_edu_backend;

#endif /* _MCP_PCI_H */
