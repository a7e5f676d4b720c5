// SPDX-License-Identifier: GPL-2.0
/*
 * MCP (Model Control Protocol): the PCI driver "mcp" and the registry of
 * accelerator devices; MCP_IOC_DEV_LIST, MCP_IOC_DEV_INFO and
 * MCP_IOC_DEV_OPEN on /dev/mcp.
 *
 * The ID table holds the devices that have a backend (QEMU's edu); any
 * other function binds through new_id or driver_override and is driven
 * by the generic path: enumeration, BAR mapping and interrupts.
 *
 * Locks: the registry's xarray lock, taken alone to look a device up;
 * mcp_dev.lock (mcp_pci.h).
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/bitfield.h>
#include <linux/dma-mapping.h>
#include <linux/errno.h>
#include <linux/file.h>
#include <linux/kernel.h>
#include <linux/pci.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/xarray.h>

#include "mcp_internal.h"
#include "mcp_pci.h"

/* Device index -> struct mcp_dev; an entry holds a reference. */
static DEFINE_XARRAY_ALLOC(mcp_devs);

static void mcp_dev_release(struct kref *ref)
{
	struct mcp_dev *mdev = container_of(ref, struct mcp_dev, ref);

	mcp_devfile_fini(mdev);
	pci_dev_put(mdev->pdev);
	mutex_destroy(&mdev->lock);
	kfree(mdev);
	mcp_counter_dec(MCP_CTR_DEVICE_OBJECTS);
}

void mcp_dev_get(struct mcp_dev *mdev)
{
	kref_get(&mdev->ref);
}

void mcp_dev_put(struct mcp_dev *mdev)
{
	kref_put(&mdev->ref, mcp_dev_release);
}

/* A reference to the device bound at @index, or NULL. */
static struct mcp_dev *mcp_dev_lookup(u32 index)
{
	struct mcp_dev *mdev;

	xa_lock(&mcp_devs);
	mdev = xa_load(&mcp_devs, index);
	if (mdev)
		mcp_dev_get(mdev);
	xa_unlock(&mcp_devs);
	return mdev;
}

u32 mcp_bar_flags(struct mcp_dev *mdev, unsigned int bar)
{
	struct pci_dev *pdev = mdev->pdev;
	unsigned long res = pci_resource_flags(pdev, bar);
	resource_size_t len = pci_resource_len(pdev, bar);
	u32 flags = 0;

	if (!len)
		return 0;
	flags |= MCP_BAR_PRESENT;
	if (res & IORESOURCE_MEM) {
		flags |= MCP_BAR_MEM;
		if (res & IORESOURCE_MEM_64)
			flags |= MCP_BAR_64BIT;
		if (res & IORESOURCE_PREFETCH)
			flags |= MCP_BAR_PREFETCH;
		/* Smaller than a page would expose its neighbours too. */
		if (len >= PAGE_SIZE &&
		    PAGE_ALIGNED(pci_resource_start(pdev, bar)))
			flags |= MCP_BAR_MAPPABLE;
	}
	if (mcp_bar_wc_status(mdev, bar) == MCP_WC_ALLOWED)
		flags |= MCP_BAR_WC_OK;
	return flags;
}

u32 mcp_bar_wc_status(struct mcp_dev *mdev, unsigned int bar)
{
	struct pci_dev *pdev = mdev->pdev;
	unsigned long res = pci_resource_flags(pdev, bar);
	resource_size_t len = pci_resource_len(pdev, bar);
	u32 safe = mdev->backend ? mdev->backend->wc_safe_bars : 0;

	if (!(res & IORESOURCE_MEM) || len < PAGE_SIZE ||
	    !PAGE_ALIGNED(pci_resource_start(pdev, bar)))
		return MCP_WC_NOT_MAPPABLE;
	if (!(res & IORESOURCE_PREFETCH) && !(safe & BIT(bar)))
		return MCP_WC_NOT_PREFETCHABLE;
	if (!arch_can_pci_mmap_wc())
		return MCP_WC_NO_PLATFORM;
	return MCP_WC_ALLOWED;
}

/* PCI_EXP_LNKSTA_CLS and PCI_EXP_LNKCAP_SLS values in MT/s. */
static u32 mcp_pcie_speed_mts(enum pci_bus_speed speed)
{
	switch (speed) {
	case PCIE_SPEED_2_5GT:
		return 2500;
	case PCIE_SPEED_5_0GT:
		return 5000;
	case PCIE_SPEED_8_0GT:
		return 8000;
	case PCIE_SPEED_16_0GT:
		return 16000;
	case PCIE_SPEED_32_0GT:
		return 32000;
	case PCIE_SPEED_64_0GT:
		return 64000;
	default:
		return 0;
	}
}

static u32 mcp_pcie_lnksta_mts(u16 lnksta)
{
	static const u32 mts[] = { 0, 2500, 5000, 8000, 16000, 32000, 64000 };
	unsigned int cls = lnksta & PCI_EXP_LNKSTA_CLS;

	return cls < ARRAY_SIZE(mts) ? mts[cls] : 0;
}

/* The smaller of two limits, where 0 means "unknown". */
static u32 mcp_min_known(u32 a, u32 b)
{
	if (!a)
		return b;
	if (!b)
		return a;
	return min(a, b);
}

/**
 * mcp_dev_link() - fill the link fields of @info
 * @mdev:	the device
 * @info:	link_* fields are written; zero for a non-PCIe function
 *
 * A link is degraded only when it trained below what both the device and
 * its upstream port can do: a x4 card in a x4 slot is not degraded.
 */
void mcp_dev_link(struct mcp_dev *mdev, struct mcp_dev_info *info)
{
	struct pci_dev *pdev = mdev->pdev;
	struct pci_dev *port;
	u32 speed_best, width_best;
	u16 lnksta;

	info->link_flags = 0;
	info->link_speed = 0;
	info->link_speed_cap = 0;
	info->link_width = 0;
	info->link_width_cap = 0;
	if (!pci_is_pcie(pdev))
		return;

	info->link_flags = MCP_LINK_PCIE;
	info->link_speed_cap = mcp_pcie_speed_mts(pcie_get_speed_cap(pdev));
	info->link_width_cap = pcie_get_width_cap(pdev);
	if (!pcie_capability_read_word(pdev, PCI_EXP_LNKSTA, &lnksta)) {
		info->link_speed = mcp_pcie_lnksta_mts(lnksta);
		info->link_width = FIELD_GET(PCI_EXP_LNKSTA_NLW, lnksta);
	}

	speed_best = info->link_speed_cap;
	width_best = info->link_width_cap;
	port = pci_upstream_bridge(pdev);
	if (port && pci_is_pcie(port)) {
		speed_best = mcp_min_known(speed_best,
					   mcp_pcie_speed_mts(pcie_get_speed_cap(port)));
		width_best = mcp_min_known(width_best, pcie_get_width_cap(port));
	}
	if (info->link_speed && info->link_speed < speed_best)
		info->link_flags |= MCP_LINK_SPEED_DEGRADED;
	if (info->link_width && info->link_width < width_best)
		info->link_flags |= MCP_LINK_WIDTH_DEGRADED;
}

/*
 * The indices of all bound devices, ascending, in a kmalloc'ed array.
 * Devices can bind meanwhile: count, allocate, fill, and start over when
 * the array turned out too small.
 */
static int mcp_dev_snapshot(u32 **indices, u32 *count)
{
	struct mcp_dev *mdev;
	unsigned long id;
	u32 n, filled;
	u32 *buf;

	for (;;) {
		n = 0;
		xa_for_each(&mcp_devs, id, mdev)
			n++;
		buf = kmalloc_array(max(n, 1U), sizeof(*buf), GFP_KERNEL);
		if (!buf)
			return -ENOMEM;

		filled = 0;
		xa_lock(&mcp_devs);
		xa_for_each(&mcp_devs, id, mdev) {
			if (filled == n) {
				filled = n + 1;
				break;
			}
			buf[filled++] = id;
		}
		xa_unlock(&mcp_devs);
		if (filled <= n) {
			*indices = buf;
			*count = filled;
			return 0;
		}
		kfree(buf);
	}
}

int mcp_ioctl_dev_list(struct file *file, void *karg)
{
	struct mcp_dev_list *arg = karg;
	u32 *indices;
	u32 count;
	int ret;

	if (arg->flags)
		return -EINVAL;

	ret = mcp_dev_snapshot(&indices, &count);
	if (ret)
		return ret;

	arg->count = count;
	if (count > arg->cap)
		ret = -ENOSPC;
	else if (copy_to_user(u64_to_user_ptr(arg->indices_ptr), indices,
			      count * sizeof(*indices)))
		ret = -EFAULT;
	kfree(indices);
	return ret;
}

static void mcp_dev_fill_info(struct mcp_dev *mdev, struct mcp_dev_info *info)
{
	struct pci_dev *pdev = mdev->pdev;
	unsigned int bar;

	info->numa_node = dev_to_node(&pdev->dev);
	info->pci_domain = pci_domain_nr(pdev->bus);
	info->pci_bus = pdev->bus->number;
	info->pci_slot = PCI_SLOT(pdev->devfn);
	info->pci_func = PCI_FUNC(pdev->devfn);
	info->revision = pdev->revision;
	info->vendor = pdev->vendor;
	info->device = pdev->device;
	info->subsystem_vendor = pdev->subsystem_vendor;
	info->subsystem_device = pdev->subsystem_device;
	info->class_code = pdev->class;
	info->dev_flags = mdev->backend ? 0 : MCP_DEV_GENERIC;
	strscpy_pad(info->backend, mdev->backend ? mdev->backend->name : "generic",
		    sizeof(info->backend));
	info->irq_type = mdev->irq_type;
	info->irq_count = mdev->irq_count;
	info->dma_mask = mdev->dma_mask;
	mcp_dev_link(mdev, info);
	info->wc_test = mdev->wc_test;
	info->open_count = atomic_read(&mdev->open_count);

	for (bar = 0; bar < MCP_DEV_MAX_BARS; bar++) {
		struct mcp_dev_bar *b = &info->bars[bar];

		b->flags = mcp_bar_flags(mdev, bar);
		b->start = b->flags ? pci_resource_start(pdev, bar) : 0;
		b->len = b->flags ? pci_resource_len(pdev, bar) : 0;
		b->reserved = 0;
	}
}

int mcp_ioctl_dev_info(struct file *file, void *karg)
{
	struct mcp_dev_info *info = karg;
	struct mcp_dev *mdev;
	int ret = 0;

	if (info->flags || info->reserved)
		return -EINVAL;

	mdev = mcp_dev_lookup(info->index);
	if (!mdev)
		return -ENODEV;

	mutex_lock(&mdev->lock);
	if (mdev->gone)
		ret = -ENODEV;
	else
		mcp_dev_fill_info(mdev, info);
	mutex_unlock(&mdev->lock);

	mcp_dev_put(mdev);
	return ret;
}

int mcp_ioctl_dev_open(struct file *file, void *karg)
{
	struct mcp_dev_open_karg *open = karg;
	struct mcp_dev *mdev;
	struct file *devfile;
	int fd;

	if (open->arg.flags)
		return -EINVAL;

	mdev = mcp_dev_lookup(open->arg.index);
	if (!mdev)
		return -ENODEV;

	fd = get_unused_fd_flags(O_CLOEXEC);
	if (fd < 0) {
		mcp_dev_put(mdev);
		return fd;
	}

	devfile = mcp_devfile_open(mdev);
	mcp_dev_put(mdev);
	if (IS_ERR(devfile)) {
		put_unused_fd(fd);
		return PTR_ERR(devfile);
	}

	open->arg.fd = fd;
	open->file = devfile;
	return 0;
}

/* The fd is installed only once the caller has its number. */
void mcp_ioctl_dev_open_publish(void *karg, bool copied)
{
	struct mcp_dev_open_karg *open = karg;

	if (copied) {
		fd_install(open->arg.fd, open->file);
	} else {
		fput(open->file);
		put_unused_fd(open->arg.fd);
	}
}

static int mcp_pci_set_dma_mask(struct mcp_dev *mdev)
{
	struct device *dev = &mdev->pdev->dev;
	int ret;

	if (mdev->backend) {
		ret = dma_set_mask_and_coherent(dev,
						DMA_BIT_MASK(mdev->backend->dma_bits));
		if (ret)
			return ret;
		mdev->dma_mask = DMA_BIT_MASK(mdev->backend->dma_bits);
		return 0;
	}

	/* Generic: whatever the platform allows; no DMA is not fatal. */
	if (!dma_set_mask_and_coherent(dev, DMA_BIT_MASK(64)))
		mdev->dma_mask = DMA_BIT_MASK(64);
	else if (!dma_set_mask_and_coherent(dev, DMA_BIT_MASK(32)))
		mdev->dma_mask = DMA_BIT_MASK(32);
	else
		pci_warn(mdev->pdev, "no usable DMA mask\n");
	return 0;
}

static const struct mcp_backend * const mcp_backends[] = {
	&mcp_edu_backend,
};

/* The backend whose ID table matches @pdev; NULL for the generic path. */
static const struct mcp_backend *mcp_backend_for(struct pci_dev *pdev)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(mcp_backends); i++) {
		if (pci_match_id(mcp_backends[i]->ids, pdev))
			return mcp_backends[i];
	}
	return NULL;
}

static const char * const mcp_irq_type_names[] = {
	[MCP_IRQ_NONE] = "(none)",
	[MCP_IRQ_INTX] = "INTx",
	[MCP_IRQ_MSI] = "MSI",
	[MCP_IRQ_MSIX] = "MSI-X",
};

static int mcp_pci_probe(struct pci_dev *pdev,
			 const struct pci_device_id *unused)
{
	struct mcp_dev *mdev;
	int ret;

	mdev = kzalloc_node(sizeof(*mdev), GFP_KERNEL,
			    mcp_mem_node(dev_to_node(&pdev->dev)));
	if (!mdev)
		return -ENOMEM;
	mcp_counter_inc(MCP_CTR_DEVICE_OBJECTS);
	kref_init(&mdev->ref);
	mutex_init(&mdev->lock);
	atomic_set(&mdev->open_count, 0);
	mcp_dma_knobs_init(&mdev->dma_knobs);
	mdev->pdev = pci_dev_get(pdev);
	mdev->backend = mcp_backend_for(pdev);

	/* Reserved (reads as absent) until the device is fully built. */
	ret = xa_alloc(&mcp_devs, &mdev->index, NULL, xa_limit_31b, GFP_KERNEL);
	if (ret)
		goto err_put_dev;

	ret = mcp_devfile_init(mdev);
	if (ret)
		goto err_erase_index;

	ret = pcim_enable_device(pdev);
	if (ret)
		goto err_erase_index;

	ret = mcp_pci_set_dma_mask(mdev);
	if (ret) {
		pci_err(pdev, "cannot set a %u-bit DMA mask: %d\n",
			mdev->backend->dma_bits, ret);
		goto err_erase_index;
	}
	pci_set_master(pdev);

	if (mdev->backend && mdev->backend->probe) {
		ret = mdev->backend->probe(mdev);
		if (ret)
			goto err_clear_master;
	}

	ret = mcp_irq_init(mdev);
	if (ret)
		goto err_backend_remove;

	mdev->wc_test = mcp_wc_self_test(mdev);

	pci_set_drvdata(pdev, mdev);
	ret = xa_err(xa_store(&mcp_devs, mdev->index, mdev, GFP_KERNEL));
	if (ret)
		goto err_free_irqs;

	pci_info(pdev, "mcp%u: %s backend, %u %s interrupt vector(s), NUMA node %d\n",
		 mdev->index, mdev->backend ? mdev->backend->name : "generic",
		 mdev->irq_count, mcp_irq_type_names[mdev->irq_type],
		 dev_to_node(&pdev->dev));
	return 0;

err_free_irqs:
	pci_set_drvdata(pdev, NULL);
	mcp_irq_fini(mdev);
err_backend_remove:
	if (mdev->backend && mdev->backend->remove)
		mdev->backend->remove(mdev);
err_clear_master:
	pci_clear_master(pdev);
err_erase_index:
	xa_erase(&mcp_devs, mdev->index);
err_put_dev:
	mcp_dev_put(mdev);
	return ret;
}

/*
 * Unbind, hot-unplug or rmmod.  Device fds may outlive this: they keep
 * the struct, but every mapping is zapped and every ioctl is -ENODEV.
 */
static void mcp_pci_remove(struct pci_dev *pdev)
{
	struct mcp_dev *mdev = pci_get_drvdata(pdev);

	/* No new lookups, then no new mappings or ioctls. */
	xa_erase(&mcp_devs, mdev->index);
	mutex_lock(&mdev->lock);
	mdev->gone = true;
	mcp_dev_revoke_mappings(mdev);
	mutex_unlock(&mdev->lock);

	pci_clear_master(pdev);
	mcp_irq_fini(mdev);
	if (mdev->backend && mdev->backend->remove)
		mdev->backend->remove(mdev);

	pci_set_drvdata(pdev, NULL);
	pci_info(pdev, "mcp%u: removed\n", mdev->index);
	mcp_dev_put(mdev);
}

/*
 * A function reset revokes the mappings for its duration: mdev->lock is
 * held from here to mcp_pci_reset_done(), so faults wait for the reset
 * and map the BARs again afterwards.
 */
static void mcp_pci_reset_prepare(struct pci_dev *pdev)
{
	struct mcp_dev *mdev = pci_get_drvdata(pdev);

	mutex_lock(&mdev->lock);
	mcp_dev_revoke_mappings(mdev);
}

static void mcp_pci_reset_done(struct pci_dev *pdev)
{
	struct mcp_dev *mdev = pci_get_drvdata(pdev);

	lockdep_assert_held(&mdev->lock);
	if (mdev->backend && mdev->backend->reset_done)
		mdev->backend->reset_done(mdev);
	mutex_unlock(&mdev->lock);
}

static const struct pci_error_handlers mcp_pci_err_handlers = {
	.reset_prepare = mcp_pci_reset_prepare,
	.reset_done = mcp_pci_reset_done,
};

/*
 * Devices bound by default: those with a backend.  driver_data stays 0:
 * new_id only accepts driver_data values this table uses, and the backend
 * is chosen from the device's IDs (mcp_backend_for()) however it bound.
 */
static const struct pci_device_id mcp_pci_ids[] = {
	{ PCI_DEVICE(MCP_EDU_VENDOR, MCP_EDU_DEVICE) },	/* QEMU's edu */
	{ }
};
MODULE_DEVICE_TABLE(pci, mcp_pci_ids);

static struct pci_driver mcp_pci_driver = {
	.name = KBUILD_MODNAME,
	.id_table = mcp_pci_ids,
	.probe = mcp_pci_probe,
	.remove = mcp_pci_remove,
	.err_handler = &mcp_pci_err_handlers,
	.dev_groups = mcp_dev_sysfs_groups,
};

int mcp_pci_init(void)
{
	return pci_register_driver(&mcp_pci_driver);
}

void mcp_pci_exit(void)
{
	pci_unregister_driver(&mcp_pci_driver);
	WARN_ON(!xa_empty(&mcp_devs));
}
