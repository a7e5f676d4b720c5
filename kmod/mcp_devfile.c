// SPDX-License-Identifier: GPL-2.0
/*
 * MCP (Model Control Protocol): the device fd (MCP_IOC_DEV_OPEN), its
 * ioctls, and BAR mappings with revocation.  Documentation/devices.rst
 * ("Device fds and mappings", "Lifetime and revocation") has the design:
 * one inode, so one address_space, per device, on which
 * unmap_mapping_range() revokes exactly its BAR mappings; PTEs inserted
 * page by page at fault time under mcp_dev.lock, which the zap takes too;
 * one cache mode per BAR at a time (mcp_dev.uc_maps, wc_maps).
 *
 * mmap offsets: BAR n is region 2n (uncached) and 2n + 1 (write-
 * combining), at region << MCP_REGION_SHIFT.  Offsets from
 * MCP_BO_MMAP_BASE up are buffer objects of the fd's context (mcp_ctx.c),
 * which revocation leaves alone (Documentation/buffers.rst).
 *
 * Locks: mmap_lock, then mcp_dev.lock (mcp_pci.h).
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/anon_inodes.h>
#include <linux/capability.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/mount.h>
#include <linux/pseudo_fs.h>
#include <linux/security.h>
#include <linux/slab.h>

#include "mcp_ctx.h"
#include "mcp_internal.h"
#include "mcp_pci.h"

#define MCP_REGION_SHIFT	40
#define MCP_REGION_PGSHIFT	(MCP_REGION_SHIFT - PAGE_SHIFT)
#define MCP_REGION_PGMASK	((1UL << MCP_REGION_PGSHIFT) - 1)

/* "mcpf": magic of the private filesystem of device inodes */
#define MCP_FS_MAGIC		0x6d637066

static struct vfsmount *mcp_fs_mnt;
static int mcp_fs_count;

static int mcp_fs_init_fs_context(struct fs_context *fc)
{
	return init_pseudo(fc, MCP_FS_MAGIC) ? 0 : -ENOMEM;
}

/*
 * No .owner: the pinned mount would hold a module reference for as long
 * as a device is bound and rmmod could never unbind them.  Every mount is
 * released before the module goes: devices are removed in mcp_exit() and
 * device fds pin the module through their fops.
 */
static struct file_system_type mcp_fs_type = {
	.name = "mcp_dev",
	.init_fs_context = mcp_fs_init_fs_context,
	.kill_sb = kill_anon_super,
};

/* The BAR a VMA maps, and whether write-combining. */
static unsigned int mcp_vma_bar(struct vm_area_struct *vma, bool *wc)
{
	unsigned long region = vma->vm_pgoff >> MCP_REGION_PGSHIFT;

	*wc = region & 1;
	return region / 2;
}

int mcp_devfile_init(struct mcp_dev *mdev)
{
	struct inode *inode;
	int ret;

	ret = simple_pin_fs(&mcp_fs_type, &mcp_fs_mnt, &mcp_fs_count);
	if (ret)
		return ret;

	inode = alloc_anon_inode(mcp_fs_mnt->mnt_sb);
	if (IS_ERR(inode)) {
		simple_release_fs(&mcp_fs_mnt, &mcp_fs_count);
		return PTR_ERR(inode);
	}
	mdev->inode = inode;
	return 0;
}

/* From the last mcp_dev_put(): no file, and so no VMA, uses @inode now. */
void mcp_devfile_fini(struct mcp_dev *mdev)
{
	if (!mdev->inode)
		return;
	iput(mdev->inode);
	mdev->inode = NULL;
	simple_release_fs(&mcp_fs_mnt, &mcp_fs_count);
}

/**
 * mcp_dev_revoke_mappings() - zap every user mapping of the device's BARs
 * @mdev:	the device: @gone set, or a reset under way
 *
 * Later accesses fault; the fault handler sees @gone under the same lock
 * (held across a reset) and either SIGBUSes or maps again.  Only the BAR
 * regions, below MCP_BO_MMAP_BASE: the fd's BO mappings stay.
 */
void mcp_dev_revoke_mappings(struct mcp_dev *mdev)
{
	lockdep_assert_held(&mdev->lock);

	unmap_mapping_range(mdev->inode->i_mapping, 0, MCP_BO_MMAP_BASE, true);
}

/*
 * Take a mapping of @bar in one cache mode.  A BAR is mapped in one mode
 * at a time: x86 PAT's record of the range decides the mode of every PTE,
 * so while a WC mapping holds a WC record an uncached mapping would be
 * write-combining too.  A mapping in the other mode is -EBUSY.  The first
 * WC mapping records WC for the whole BAR.
 */
static int mcp_bar_map_get(struct mcp_dev *mdev, unsigned int bar, bool wc)
{
	unsigned int *maps = wc ? mdev->wc_maps : mdev->uc_maps;
	unsigned int *other = wc ? mdev->uc_maps : mdev->wc_maps;
	int ret;

	lockdep_assert_held(&mdev->lock);

	if (other[bar])
		return -EBUSY;
	if (maps[bar]++ || !wc)
		return 0;
	ret = arch_io_reserve_memtype_wc(pci_resource_start(mdev->pdev, bar),
					 pci_resource_len(mdev->pdev, bar));
	if (ret)
		maps[bar]--;
	return ret;
}

static void mcp_bar_map_put(struct mcp_dev *mdev, unsigned int bar, bool wc)
{
	unsigned int *maps = wc ? mdev->wc_maps : mdev->uc_maps;

	lockdep_assert_held(&mdev->lock);

	if (WARN_ON_ONCE(!maps[bar]) || --maps[bar] || !wc)
		return;
	arch_io_free_memtype_wc(pci_resource_start(mdev->pdev, bar),
				pci_resource_len(mdev->pdev, bar));
}

/* A copy of a mapping (split, mremap, fork) keeps its PTEs. */
static void mcp_bar_vm_open(struct vm_area_struct *vma)
{
	struct mcp_dev *mdev = vma->vm_private_data;
	unsigned int bar;
	bool wc;
	int ret;

	bar = mcp_vma_bar(vma, &wc);
	/* The copied VMA holds this mode, so another one cannot fail. */
	mutex_lock(&mdev->lock);
	ret = mcp_bar_map_get(mdev, bar, wc);
	mutex_unlock(&mdev->lock);
	WARN_ON_ONCE(ret);
	mcp_counter_inc(MCP_CTR_BAR_MAPPINGS);
}

static void mcp_bar_vm_close(struct vm_area_struct *vma)
{
	struct mcp_dev *mdev = vma->vm_private_data;
	unsigned int bar;
	bool wc;

	bar = mcp_vma_bar(vma, &wc);
	mutex_lock(&mdev->lock);
	mcp_bar_map_put(mdev, bar, wc);
	mutex_unlock(&mdev->lock);
	mcp_counter_dec(MCP_CTR_BAR_MAPPINGS);
}

static vm_fault_t mcp_bar_vm_fault(struct vm_fault *vmf)
{
	struct vm_area_struct *vma = vmf->vma;
	struct mcp_dev *mdev = vma->vm_private_data;
	unsigned long pgoff = vma->vm_pgoff & MCP_REGION_PGMASK;
	vm_fault_t ret = VM_FAULT_NOPAGE;
	unsigned long addr, pfn;
	unsigned int bar;
	bool wc;

	bar = mcp_vma_bar(vma, &wc);
	mutex_lock(&mdev->lock);
	if (mdev->gone) {
		ret = VM_FAULT_SIGBUS;
		goto out_unlock;
	}

	/* The whole VMA: one fault instead of one per page. */
	pfn = (pci_resource_start(mdev->pdev, bar) >> PAGE_SHIFT) + pgoff;
	for (addr = vma->vm_start; addr < vma->vm_end; addr += PAGE_SIZE, pfn++) {
		/* A PTE that is already there is left alone (NOPAGE). */
		ret = vmf_insert_pfn_prot(vma, addr, pfn, vma->vm_page_prot);
		if (ret != VM_FAULT_NOPAGE)
			break;
	}

out_unlock:
	mutex_unlock(&mdev->lock);
	return ret;
}

static const struct vm_operations_struct mcp_bar_vm_ops = {
	.open = mcp_bar_vm_open,
	.close = mcp_bar_vm_close,
	.fault = mcp_bar_vm_fault,
};

static int mcp_devfile_mmap(struct file *file, struct vm_area_struct *vma)
{
	struct mcp_ctx *ctx = file->private_data;
	struct mcp_dev *mdev = ctx->mdev;
	unsigned long pgoff = vma->vm_pgoff & MCP_REGION_PGMASK;
	unsigned long bar_pages;
	unsigned int bar;
	int ret = 0;
	bool wc;

	if (vma->vm_pgoff >= MCP_BO_MMAP_PGOFF)
		return mcp_ctx_mmap(ctx, vma);
	/* Raw BAR access, as sysfs resourceN: CAP_SYS_RAWIO, no lockdown. */
	if (!capable(CAP_SYS_RAWIO))
		return -EPERM;
	ret = security_locked_down(LOCKDOWN_PCI_ACCESS);
	if (ret)
		return ret;
	if (!(vma->vm_flags & VM_SHARED))
		return -EINVAL;
	bar = mcp_vma_bar(vma, &wc);
	if (bar >= MCP_DEV_MAX_BARS)
		return -EINVAL;

	mutex_lock(&mdev->lock);
	if (mdev->gone) {
		ret = -ENODEV;
		goto out_unlock;
	}
	if (!(mcp_bar_flags(mdev, bar) & MCP_BAR_MAPPABLE) ||
	    (wc && mcp_bar_wc_status(mdev, bar) != MCP_WC_ALLOWED)) {
		ret = -EINVAL;
		goto out_unlock;
	}
	bar_pages = pci_resource_len(mdev->pdev, bar) >> PAGE_SHIFT;
	if (pgoff >= bar_pages || vma_pages(vma) > bar_pages - pgoff) {
		ret = -EINVAL;
		goto out_unlock;
	}

	ret = mcp_bar_map_get(mdev, bar, wc);
	if (ret)
		goto out_unlock;

	vma->vm_page_prot = wc ? pgprot_writecombine(vma->vm_page_prot) :
				 pgprot_noncached(vma->vm_page_prot);
	mcp_vm_flags_set(vma, VM_IO | VM_PFNMAP | VM_DONTEXPAND | VM_DONTDUMP);
	vma->vm_private_data = mdev;
	vma->vm_ops = &mcp_bar_vm_ops;
	mcp_counter_inc(MCP_CTR_BAR_MAPPINGS);

out_unlock:
	mutex_unlock(&mdev->lock);
	return ret;
}

static int mcp_ioctl_bar_info(struct file *file, void *karg)
{
	struct mcp_ctx *ctx = file->private_data;
	struct mcp_dev *mdev = ctx->mdev;
	struct mcp_bar_info *info = karg;
	int ret = 0;

	if (info->flags || info->reserved || info->bar >= MCP_DEV_MAX_BARS)
		return -EINVAL;

	mutex_lock(&mdev->lock);
	if (mdev->gone) {
		ret = -ENODEV;
		goto out_unlock;
	}
	info->bar_flags = mcp_bar_flags(mdev, info->bar);
	info->len = info->bar_flags ? pci_resource_len(mdev->pdev, info->bar) : 0;
	info->offset = (u64)(2 * info->bar) << MCP_REGION_SHIFT;
	info->wc_offset = (u64)(2 * info->bar + 1) << MCP_REGION_SHIFT;
	info->wc_status = mcp_bar_wc_status(mdev, info->bar);

out_unlock:
	mutex_unlock(&mdev->lock);
	return ret;
}

static const struct mcp_ioctl_desc mcp_bar_info_desc = {
	.ksize = sizeof(struct mcp_bar_info),
	.size_ver0 = MCP_BAR_INFO_SIZE_VER0,
	.handler = mcp_ioctl_bar_info,
};

static const struct mcp_ioctl_desc mcp_irq_eventfd_desc = {
	.ksize = sizeof(struct mcp_irq_eventfd),
	.size_ver0 = MCP_IRQ_EVENTFD_SIZE_VER0,
	.handler = mcp_ioctl_irq_set_eventfd,
};

static const struct mcp_ioctl_desc mcp_irq_unmask_desc = {
	.ksize = sizeof(struct mcp_irq_unmask),
	.size_ver0 = MCP_IRQ_UNMASK_SIZE_VER0,
	.handler = mcp_ioctl_irq_unmask,
};

static long mcp_devfile_ioctl(struct file *file, unsigned int cmd,
			      unsigned long arg)
{
	const struct mcp_ioctl_desc *desc;
	long ret;

	mcp_counter_inc(MCP_CTR_IOCTLS);

	switch (cmd) {
	case MCP_IOC_BAR_INFO:
		desc = &mcp_bar_info_desc;
		break;
	case MCP_IOC_IRQ_SET_EVENTFD:
		desc = &mcp_irq_eventfd_desc;
		break;
	case MCP_IOC_IRQ_UNMASK:
		desc = &mcp_irq_unmask_desc;
		break;
	default:
		desc = mcp_ctx_ioctl_desc(cmd);
		break;
	}

	ret = desc ? mcp_ioctl_call(file, cmd, desc, (void __user *)arg) : -ENOTTY;
	if (ret < 0)
		mcp_counter_inc(MCP_CTR_IOCTL_ERRORS);
	return ret;
}

/* The context holds the device fd's reference to the device. */
static int mcp_devfile_release(struct inode *inode, struct file *file)
{
	struct mcp_ctx *ctx = file->private_data;
	struct mcp_dev *mdev = ctx->mdev;

	mcp_irq_release_owner(mdev, file);
	atomic_dec(&mdev->open_count);
	mcp_counter_dec(MCP_CTR_DEVICE_FILES);
	mcp_ctx_destroy(ctx);
	return 0;
}

/* .owner: rmmod is refused while a device fd (or a mapping) exists. */
static const struct file_operations mcp_devfile_fops = {
	.owner = THIS_MODULE,
	.release = mcp_devfile_release,
	.unlocked_ioctl = mcp_devfile_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
	.mmap = mcp_devfile_mmap,
	.llseek = noop_llseek,
	.show_fdinfo = mcp_ctx_show_fdinfo,
};

/**
 * mcp_devfile_open() - a new device fd's file for @mdev
 * @mdev:	the device; the file's context takes a reference of its own
 *
 * Return: the file (O_RDWR, not yet installed), or an
 * ERR_PTR: -ENODEV when the device is going away.
 */
struct file *mcp_devfile_open(struct mcp_dev *mdev)
{
	struct mcp_ctx *ctx;
	struct file *file;

	ctx = mcp_ctx_create(mdev);
	if (!ctx)
		return ERR_PTR(-ENOMEM);

	mutex_lock(&mdev->lock);
	if (mdev->gone) {
		file = ERR_PTR(-ENODEV);
		goto err_unlock;
	}

	file = anon_inode_getfile("[mcp_dev]", &mcp_devfile_fops, ctx, O_RDWR);
	if (IS_ERR(file))
		goto err_unlock;
	/* BAR mappings of all fds of this device share one address_space. */
	file->f_mapping = mdev->inode->i_mapping;

	atomic_inc(&mdev->open_count);
	mcp_counter_inc(MCP_CTR_DEVICE_FILES);
	mutex_unlock(&mdev->lock);
	return file;

err_unlock:
	mutex_unlock(&mdev->lock);
	mcp_ctx_destroy(ctx);
	return file;
}
