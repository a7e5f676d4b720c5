// SPDX-License-Identifier: GPL-2.0
/*
 * MCP (Model Control Protocol): module init/exit, the /dev/mcp misc device
 * and ioctl dispatch.
 *
 * Every ioctl argument starts with "__u32 size" and is handled by
 * mcp_ioctl_call(), which implements the extensible-struct convention of
 * uapi/linux/mcp.h, so the handlers only ever see a kernel copy of the
 * argument in the layout this module was built with.
 *
 * Locks: none here; see mcp_internal.h for the module's lock order.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/compat.h>
#include <linux/errno.h>
#include <linux/fs.h>
#include <linux/init.h>
#include <linux/kernel.h>
#include <linux/miscdevice.h>
#include <linux/module.h>
#include <linux/stddef.h>
#include <linux/string.h>
#include <linux/uaccess.h>

#include "mcp_bo.h"
#include "mcp_ctx.h"
#include "mcp_graph.h"
#include "mcp_internal.h"
#include "mcp_tune.h"

/* Room for the kernel copy of any ioctl argument. */
union mcp_ioctl_arg {
	struct mcp_version version;
	struct mcp_topology topology;
	struct mcp_place place;
	struct mcp_unplace unplace;
	struct mcp_dev_list dev_list;
	struct mcp_dev_info dev_info;
	struct mcp_dev_open_karg dev_open;
	struct mcp_bar_info bar_info;
	struct mcp_irq_eventfd irq_eventfd;
	struct mcp_irq_unmask irq_unmask;
	struct mcp_bo_create_karg bo_create;
	struct mcp_bo_userptr_karg bo_userptr;
	struct mcp_bo_info bo_info;
	struct mcp_bo_export_karg bo_export;
	struct mcp_bo_import_karg bo_import;
	struct mcp_bo_destroy bo_destroy;
	struct mcp_engine_info engine_info;
	struct mcp_dma_submit_karg dma_submit;
	struct mcp_graph_create_karg graph_create;
	struct mcp_graph_exec_karg graph_exec;
	struct mcp_graph_status graph_status;
	struct mcp_graph_destroy graph_destroy;
	struct mcp_worker_register_karg worker_register;
	struct mcp_job_done job_done;
	struct mcp_jobs_done jobs_done;
	struct mcp_tune_list tune_list;
	struct mcp_tune_session_karg tune_session;
	struct mcp_tune_value tune_value;
	struct mcp_tune_commit tune_commit;
};

/* mcp_ioctl_call() relies on "size" coming first in every argument. */
static_assert(offsetof(struct mcp_version, size) == 0);
static_assert(offsetof(struct mcp_topology, size) == 0);
static_assert(offsetof(struct mcp_place, size) == 0);
static_assert(offsetof(struct mcp_unplace, size) == 0);
static_assert(offsetof(struct mcp_dev_list, size) == 0);
static_assert(offsetof(struct mcp_dev_info, size) == 0);
static_assert(offsetof(struct mcp_dev_open_karg, arg.size) == 0);
static_assert(offsetof(struct mcp_bar_info, size) == 0);
static_assert(offsetof(struct mcp_irq_eventfd, size) == 0);
static_assert(offsetof(struct mcp_irq_unmask, size) == 0);
static_assert(offsetof(struct mcp_bo_create_karg, arg.size) == 0);
static_assert(offsetof(struct mcp_bo_userptr_karg, arg.size) == 0);
static_assert(offsetof(struct mcp_bo_info, size) == 0);
static_assert(offsetof(struct mcp_bo_export_karg, arg.size) == 0);
static_assert(offsetof(struct mcp_bo_import_karg, arg.size) == 0);
static_assert(offsetof(struct mcp_bo_destroy, size) == 0);
static_assert(offsetof(struct mcp_engine_info, size) == 0);
static_assert(offsetof(struct mcp_dma_submit_karg, arg.size) == 0);
static_assert(offsetof(struct mcp_graph_create_karg, arg.size) == 0);
static_assert(offsetof(struct mcp_graph_exec_karg, arg.size) == 0);
static_assert(offsetof(struct mcp_graph_status, size) == 0);
static_assert(offsetof(struct mcp_graph_destroy, size) == 0);
static_assert(offsetof(struct mcp_worker_register_karg, arg.size) == 0);
static_assert(offsetof(struct mcp_job_done, size) == 0);
static_assert(offsetof(struct mcp_jobs_done, size) == 0);
static_assert(offsetof(struct mcp_tune_list, size) == 0);
static_assert(offsetof(struct mcp_tune_session_karg, arg.size) == 0);
static_assert(offsetof(struct mcp_tune_value, size) == 0);
static_assert(offsetof(struct mcp_tune_commit, size) == 0);
static_assert(sizeof(struct mcp_version) >= MCP_VERSION_SIZE_VER0);
static_assert(sizeof(struct mcp_topology) >= MCP_TOPOLOGY_SIZE_VER0);
static_assert(sizeof(struct mcp_place) >= MCP_PLACE_SIZE_VER0);
static_assert(sizeof(struct mcp_unplace) >= MCP_UNPLACE_SIZE_VER0);
static_assert(sizeof(struct mcp_dev_list) >= MCP_DEV_LIST_SIZE_VER0);
static_assert(sizeof(struct mcp_dev_info) >= MCP_DEV_INFO_SIZE_VER0);
static_assert(sizeof(struct mcp_dev_open) >= MCP_DEV_OPEN_SIZE_VER0);
static_assert(sizeof(struct mcp_bar_info) >= MCP_BAR_INFO_SIZE_VER0);
static_assert(sizeof(struct mcp_irq_eventfd) >= MCP_IRQ_EVENTFD_SIZE_VER0);
static_assert(sizeof(struct mcp_irq_unmask) >= MCP_IRQ_UNMASK_SIZE_VER0);
static_assert(sizeof(struct mcp_bo_create) >= MCP_BO_CREATE_SIZE_VER0);
static_assert(sizeof(struct mcp_bo_userptr) >= MCP_BO_USERPTR_SIZE_VER0);
static_assert(sizeof(struct mcp_bo_info) >= MCP_BO_INFO_SIZE_VER0);
static_assert(sizeof(struct mcp_bo_export) >= MCP_BO_EXPORT_SIZE_VER0);
static_assert(sizeof(struct mcp_bo_import) >= MCP_BO_IMPORT_SIZE_VER0);
static_assert(sizeof(struct mcp_bo_destroy) >= MCP_BO_DESTROY_SIZE_VER0);
static_assert(sizeof(struct mcp_engine_info) >= MCP_ENGINE_INFO_SIZE_VER0);
static_assert(sizeof(struct mcp_dma_submit) >= MCP_DMA_SUBMIT_SIZE_VER0);
static_assert(sizeof(struct mcp_graph_create) >= MCP_GRAPH_CREATE_SIZE_VER0);
static_assert(sizeof(struct mcp_graph_exec) >= MCP_GRAPH_EXEC_SIZE_VER0);
static_assert(sizeof(struct mcp_graph_status) >= MCP_GRAPH_STATUS_SIZE_VER0);
static_assert(sizeof(struct mcp_graph_destroy) >= MCP_GRAPH_DESTROY_SIZE_VER0);
static_assert(sizeof(struct mcp_worker_register) >=
	      MCP_WORKER_REGISTER_SIZE_VER0);
static_assert(sizeof(struct mcp_job_done) >= MCP_JOB_DONE_SIZE_VER0);
static_assert(sizeof(struct mcp_jobs_done) >= MCP_JOBS_DONE_SIZE_VER0);
static_assert(sizeof(struct mcp_tune_list) >= MCP_TUNE_LIST_SIZE_VER0);
static_assert(sizeof(struct mcp_tune_session) >= MCP_TUNE_SESSION_SIZE_VER0);
static_assert(sizeof(struct mcp_tune_value) >= MCP_TUNE_VALUE_SIZE_VER0);
static_assert(sizeof(struct mcp_tune_commit) >= MCP_TUNE_COMMIT_SIZE_VER0);
static_assert(sizeof(struct mcp_tune_knob_info) >=
	      MCP_TUNE_KNOB_INFO_SIZE_VER0);
static_assert(sizeof(union mcp_ioctl_arg) <= MCP_ARG_SIZE_MAX);

/* Every /dev/mcp file is a host context (mcp_ctx.h). */
static int mcp_open(struct inode *inode, struct file *file)
{
	struct mcp_ctx *ctx;
	int ret;

	ret = nonseekable_open(inode, file);
	if (ret)
		return ret;

	ctx = mcp_ctx_create(NULL);
	if (!ctx)
		return -ENOMEM;
	file->private_data = ctx;
	mcp_counter_inc(MCP_CTR_OPEN_FILES);
	return 0;
}

static int mcp_release(struct inode *inode, struct file *file)
{
	mcp_ctx_destroy(file->private_data);
	mcp_counter_dec(MCP_CTR_OPEN_FILES);
	return 0;
}

/* Only BOs are mapped through /dev/mcp. */
static int mcp_mmap(struct file *file, struct vm_area_struct *vma)
{
	return mcp_ctx_mmap(file->private_data, vma);
}

/**
 * mcp_ioctl_call() - run one ioctl with an extensible argument struct
 * @file:	the open /dev/mcp file or device fd
 * @cmd:	the ioctl command; only an _IOWR one is copied back
 * @desc:	sizes and handler of the ioctl
 * @uarg:	the caller's argument struct
 *
 * Reads the caller's __u32 size, copies the argument in with
 * copy_struct_from_user() semantics (shorter is zero-extended, longer must
 * have an all-zero tail), runs the handler and, for a command that reads
 * its argument back (_IOC_READ), copies min(size, ksize) bytes back on
 * success; then lets @desc->publish know whether that worked.  An _IOW
 * command's argument is never written: it may be read-only memory, and a
 * copy failing after the action took effect would report -EFAULT for an
 * action that happened.
 *
 * Return: the handler's result, -EFAULT for a bad pointer, -EINVAL for a
 * size below the first version, -E2BIG for a size above MCP_ARG_SIZE_MAX
 * or a non-zero tail this build does not know.
 */
long mcp_ioctl_call(struct file *file, unsigned int cmd,
		    const struct mcp_ioctl_desc *desc, void __user *uarg)
{
	union mcp_ioctl_arg karg;
	u32 usize;
	int ret;

	if (get_user(usize, (u32 __user *)uarg))
		return -EFAULT;
	if (usize < desc->size_ver0)
		return -EINVAL;
	if (usize > MCP_ARG_SIZE_MAX)
		return -E2BIG;

	ret = copy_struct_from_user(&karg, desc->ksize, uarg, usize);
	if (ret)
		return ret;
	/* The size was read twice; only the first read counts. */
	memcpy(&karg, &usize, sizeof(usize));

	ret = desc->handler(file, &karg);
	if (!(_IOC_DIR(cmd) & _IOC_READ))
		return ret;
	if (ret == 0 || (ret == -ENOSPC && desc->copy_out_on_enospc) ||
	    (ret == -EINVAL && desc->copy_out_on_einval) ||
	    (ret < 0 && desc->copy_out_on_error)) {
		bool copied = !copy_to_user(uarg, &karg,
					    min_t(size_t, usize, desc->ksize));

		if (ret == 0 && desc->publish)
			desc->publish(&karg, copied);
		if (!copied)
			return -EFAULT;
	}
	return ret;
}

static int mcp_ioctl_get_version(struct file *file, void *karg)
{
	struct mcp_version *ver = karg;

	if (ver->flags)
		return -EINVAL;

	ver->abi_major = MCP_ABI_MAJOR;
	ver->abi_minor = MCP_ABI_MINOR;
	ver->features = MCP_FEATURES;
	strscpy_pad(ver->module_version, MCP_MODULE_VERSION,
		    sizeof(ver->module_version));
	return 0;
}

static const struct mcp_ioctl_desc mcp_get_version_desc = {
	.ksize = sizeof(struct mcp_version),
	.size_ver0 = MCP_VERSION_SIZE_VER0,
	.handler = mcp_ioctl_get_version,
};

static const struct mcp_ioctl_desc mcp_get_topology_desc = {
	.ksize = sizeof(struct mcp_topology),
	.size_ver0 = MCP_TOPOLOGY_SIZE_VER0,
	.handler = mcp_ioctl_get_topology,
	.copy_out_on_enospc = true,
};

static const struct mcp_ioctl_desc mcp_place_desc = {
	.ksize = sizeof(struct mcp_place),
	.size_ver0 = MCP_PLACE_SIZE_VER0,
	.handler = mcp_ioctl_place,
	.copy_out_on_enospc = true,
};

static const struct mcp_ioctl_desc mcp_unplace_desc = {
	.ksize = sizeof(struct mcp_unplace),
	.size_ver0 = MCP_UNPLACE_SIZE_VER0,
	.handler = mcp_ioctl_unplace,
};

static const struct mcp_ioctl_desc mcp_dev_list_desc = {
	.ksize = sizeof(struct mcp_dev_list),
	.size_ver0 = MCP_DEV_LIST_SIZE_VER0,
	.handler = mcp_ioctl_dev_list,
	.copy_out_on_enospc = true,
};

static const struct mcp_ioctl_desc mcp_dev_info_desc = {
	.ksize = sizeof(struct mcp_dev_info),
	.size_ver0 = MCP_DEV_INFO_SIZE_VER0,
	.handler = mcp_ioctl_dev_info,
};

static const struct mcp_ioctl_desc mcp_dev_open_desc = {
	.ksize = sizeof(struct mcp_dev_open),
	.size_ver0 = MCP_DEV_OPEN_SIZE_VER0,
	.handler = mcp_ioctl_dev_open,
	.publish = mcp_ioctl_dev_open_publish,
};

static const struct mcp_ioctl_desc mcp_tune_list_desc = {
	.ksize = sizeof(struct mcp_tune_list),
	.size_ver0 = MCP_TUNE_LIST_SIZE_VER0,
	.handler = mcp_ioctl_tune_list,
	.copy_out_on_enospc = true,
};

static const struct mcp_ioctl_desc mcp_tune_session_desc = {
	.ksize = sizeof(struct mcp_tune_session),
	.size_ver0 = MCP_TUNE_SESSION_SIZE_VER0,
	.handler = mcp_ioctl_tune_session,
	.publish = mcp_ioctl_tune_session_publish,
};

static long mcp_unlocked_ioctl(struct file *file, unsigned int cmd,
			       unsigned long arg)
{
	void __user *uarg = (void __user *)arg;
	const struct mcp_ioctl_desc *desc;
	long ret;

	mcp_counter_inc(MCP_CTR_IOCTLS);

	switch (cmd) {
	case MCP_IOC_GET_VERSION:
		desc = &mcp_get_version_desc;
		break;
	case MCP_IOC_GET_TOPOLOGY:
		desc = &mcp_get_topology_desc;
		break;
	case MCP_IOC_PLACE:
		desc = &mcp_place_desc;
		break;
	case MCP_IOC_UNPLACE:
		desc = &mcp_unplace_desc;
		break;
	case MCP_IOC_DEV_LIST:
		desc = &mcp_dev_list_desc;
		break;
	case MCP_IOC_DEV_INFO:
		desc = &mcp_dev_info_desc;
		break;
	case MCP_IOC_DEV_OPEN:
		desc = &mcp_dev_open_desc;
		break;
	case MCP_IOC_TUNE_LIST:
		desc = &mcp_tune_list_desc;
		break;
	case MCP_IOC_TUNE_SESSION:
		desc = &mcp_tune_session_desc;
		break;
	default:
		desc = mcp_ctx_ioctl_desc(cmd);
		break;
	}

	ret = desc ? mcp_ioctl_call(file, cmd, desc, uarg) : -ENOTTY;
	if (ret < 0)
		mcp_counter_inc(MCP_CTR_IOCTL_ERRORS);
	return ret;
}

static const struct file_operations mcp_fops = {
	.owner = THIS_MODULE,
	.open = mcp_open,
	.release = mcp_release,
	.unlocked_ioctl = mcp_unlocked_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
	.mmap = mcp_mmap,
	.show_fdinfo = mcp_ctx_show_fdinfo,
};

static struct miscdevice mcp_miscdev = {
	.minor = MISC_DYNAMIC_MINOR,
	.name = MCP_DEVICE_NAME,
	.fops = &mcp_fops,
	.groups = mcp_sysfs_groups,
};

static int __init mcp_init(void)
{
	int ret;

	mcp_debugfs_init();

	ret = mcp_netlink_init();
	if (ret) {
		pr_err("cannot register generic netlink family %s: %d\n",
		       MCP_GENL_NAME, ret);
		goto err_remove_debugfs;
	}

	ret = mcp_place_init();
	if (ret) {
		pr_err("cannot start task placement: %d\n", ret);
		goto err_netlink_exit;
	}

	ret = mcp_dma_init();
	if (ret) {
		pr_err("cannot start the DMA engines: %d\n", ret);
		goto err_place_exit;
	}

	ret = mcp_sched_init();
	if (ret) {
		pr_err("cannot start the graph scheduler: %d\n", ret);
		goto err_dma_exit;
	}

	ret = mcp_tune_init();
	if (ret) {
		pr_err("cannot start the tuning registry: %d\n", ret);
		goto err_sched_exit;
	}

	ret = misc_register(&mcp_miscdev);
	if (ret) {
		pr_err("cannot register /dev/%s: %d\n", MCP_DEVICE_NAME, ret);
		goto err_tune_exit;
	}

	ret = mcp_pci_init();
	if (ret) {
		pr_err("cannot register the PCI driver: %d\n", ret);
		goto err_misc_deregister;
	}

	pr_info("version %s, ABI %u.%u\n", MCP_MODULE_VERSION,
		MCP_ABI_MAJOR, MCP_ABI_MINOR);
	return 0;

err_misc_deregister:
	misc_deregister(&mcp_miscdev);
err_tune_exit:
	mcp_tune_exit();
err_sched_exit:
	mcp_sched_exit();
err_dma_exit:
	mcp_dma_exit();
err_place_exit:
	mcp_place_exit();
err_netlink_exit:
	mcp_netlink_exit();
err_remove_debugfs:
	mcp_debugfs_exit();
	return ret;
}

static void __exit mcp_exit(void)
{
	mcp_pci_exit();
	misc_deregister(&mcp_miscdev);
	mcp_tune_exit();
	mcp_sched_exit();
	mcp_dma_exit();
	mcp_place_exit();
	mcp_netlink_exit();
	mcp_debugfs_exit();
}

module_init(mcp_init);
module_exit(mcp_exit);

MODULE_DESCRIPTION("MCP (Model Control Protocol) for edge inference hosts");
MODULE_LICENSE("GPL");
MODULE_VERSION(MCP_MODULE_VERSION);
