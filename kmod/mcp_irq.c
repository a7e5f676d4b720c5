// SPDX-License-Identifier: GPL-2.0
/*
 * MCP (Model Control Protocol): device interrupts delivered to eventfds
 * (MCP_IOC_IRQ_SET_EVENTFD, MCP_IOC_IRQ_UNMASK), VFIO style.
 *
 * Vectors are allocated and requested at probe (MSI-X, then MSI, then
 * INTx).  The backend acknowledges its device's interrupt; a device
 * without one that interrupts through INTx has the line masked in the
 * device's command register (or, when the device cannot mask INTx, at the
 * interrupt controller) until userspace says MCP_IOC_IRQ_UNMASK.
 *
 * The hard-irq handler reads mcp_irq.trigger under RCU; replacing it is
 * done under mcp_dev.lock and the old eventfd is put after a grace period.
 *
 * A connected vector belongs to the device fd that connected it
 * (mcp_irq.owner): another open of the device gets -EBUSY for both
 * replacing and dropping it, until the owner drops it or its fd is
 * released (mcp_irq_release_owner()).
 *
 * Locks: mcp_dev.lock, then mcp_irq.mask_lock (mcp_pci.h).
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/eventfd.h>
#include <linux/interrupt.h>
#include <linux/pci.h>
#include <linux/rcupdate.h>
#include <linux/slab.h>

#include "mcp_ctx.h"
#include "mcp_internal.h"
#include "mcp_pci.h"

/* Vectors the generic path asks for: enough for small accelerators. */
#define MCP_GENERIC_MAX_IRQS	32

/* Generic INTx: mask the line; false when the interrupt was not ours. */
static bool mcp_irq_mask_intx(struct mcp_irq *vec)
{
	struct pci_dev *pdev = vec->mdev->pdev;
	bool ours = true;

	spin_lock(&vec->mask_lock);
	if (pdev->broken_intx_masking) {
		/* Not shared (see mcp_irq_init()), so it is ours. */
		disable_irq_nosync(vec->irq);
		vec->masked = true;
	} else if (pci_check_and_mask_intx(pdev)) {
		vec->masked = true;
	} else {
		ours = false;
	}
	spin_unlock(&vec->mask_lock);
	return ours;
}

static void mcp_irq_signal(struct mcp_irq *vec)
{
	struct eventfd_ctx *trigger;

	rcu_read_lock();
	trigger = rcu_dereference(vec->trigger);
	if (trigger)
		mcp_eventfd_signal(trigger);
	rcu_read_unlock();
}

static irqreturn_t mcp_irq_handler(int irq, void *data)
{
	struct mcp_irq *vec = data;
	struct mcp_dev *mdev = vec->mdev;

	if (mdev->backend && mdev->backend->irq_ack) {
		if (!mdev->backend->irq_ack(mdev, vec->vector))
			return IRQ_NONE;
	} else if (mdev->irq_type == MCP_IRQ_INTX) {
		if (!mcp_irq_mask_intx(vec))
			return IRQ_NONE;
	}

	mcp_irq_signal(vec);
	return IRQ_HANDLED;
}

/**
 * mcp_irq_init() - allocate and request the device's interrupt vectors
 * @mdev:	the device; sets @irq_type, @irq_count and @irqs
 *
 * A function without any interrupt (no MSI, no INTx pin) is not an
 * error: it gets MCP_IRQ_NONE and no vectors.
 *
 * Return: 0 or a negative errno from request_irq().
 */
int mcp_irq_init(struct mcp_dev *mdev)
{
	struct pci_dev *pdev = mdev->pdev;
	unsigned int max = mdev->backend ? mdev->backend->max_irqs :
					   MCP_GENERIC_MAX_IRQS;
	unsigned long irqflags = 0;
	struct mcp_irq *irqs;
	int nvec, i, ret;

	mdev->irq_type = MCP_IRQ_NONE;
	if (!max)
		return 0;
	nvec = pci_alloc_irq_vectors(pdev, 1, max, PCI_IRQ_MSIX | PCI_IRQ_MSI |
				     MCP_PCI_IRQ_INTX);
	if (nvec < 0) {
		pci_info(pdev, "no interrupts: %d\n", nvec);
		return 0;
	}

	if (pdev->msix_enabled) {
		mdev->irq_type = MCP_IRQ_MSIX;
	} else if (pdev->msi_enabled) {
		mdev->irq_type = MCP_IRQ_MSI;
	} else {
		mdev->irq_type = MCP_IRQ_INTX;
		/* Unless the line is masked at the controller: see above. */
		if (mdev->backend || !pdev->broken_intx_masking)
			irqflags = IRQF_SHARED;
	}

	irqs = kcalloc(nvec, sizeof(*irqs), GFP_KERNEL);
	if (!irqs) {
		ret = -ENOMEM;
		goto err_free_vectors;
	}

	for (i = 0; i < nvec; i++) {
		struct mcp_irq *vec = &irqs[i];

		vec->mdev = mdev;
		vec->vector = i;
		vec->irq = pci_irq_vector(pdev, i);
		spin_lock_init(&vec->mask_lock);
		snprintf(vec->name, sizeof(vec->name), "mcp%u-%d", mdev->index, i);
		ret = request_irq(vec->irq, mcp_irq_handler, irqflags,
				  vec->name, vec);
		if (ret)
			goto err_free_irqs;
	}

	mdev->irqs = irqs;
	mdev->irq_count = nvec;
	return 0;

err_free_irqs:
	while (--i >= 0)
		free_irq(irqs[i].irq, &irqs[i]);
	kfree(irqs);
err_free_vectors:
	pci_free_irq_vectors(pdev);
	mdev->irq_type = MCP_IRQ_NONE;
	return ret;
}

static void mcp_irq_drop_trigger(struct eventfd_ctx *trigger)
{
	if (!trigger)
		return;
	eventfd_ctx_put(trigger);
	mcp_counter_dec(MCP_CTR_IRQ_EVENTFDS);
}

/**
 * mcp_irq_fini() - free the interrupts and disconnect their eventfds
 * @mdev:	the device, bus mastering already off
 *
 * free_irq() waits for running handlers, so the eventfds can go at once.
 */
void mcp_irq_fini(struct mcp_dev *mdev)
{
	struct mcp_irq *irqs;
	unsigned int count, i;

	mutex_lock(&mdev->lock);
	irqs = mdev->irqs;
	count = mdev->irq_count;
	mdev->irqs = NULL;
	mdev->irq_count = 0;
	mutex_unlock(&mdev->lock);

	for (i = 0; i < count; i++) {
		free_irq(irqs[i].irq, &irqs[i]);
		mcp_irq_drop_trigger(rcu_dereference_protected(irqs[i].trigger, 1));
	}
	if (mdev->irq_type != MCP_IRQ_NONE)
		pci_free_irq_vectors(mdev->pdev);
	kfree(irqs);
}

/* Replace @vec's eventfd; the old one is returned to be put later. */
static struct eventfd_ctx *mcp_irq_swap_trigger(struct mcp_dev *mdev,
						struct mcp_irq *vec,
						struct eventfd_ctx *trigger,
						struct file *owner)
{
	lockdep_assert_held(&mdev->lock);

	vec->owner = trigger ? owner : NULL;
	return rcu_replace_pointer(vec->trigger, trigger,
				   lockdep_is_held(&mdev->lock));
}

int mcp_ioctl_irq_set_eventfd(struct file *file, void *karg)
{
	struct mcp_irq_eventfd *arg = karg;
	struct mcp_ctx *ctx = file->private_data;
	struct mcp_dev *mdev = ctx->mdev;
	struct eventfd_ctx *trigger = NULL;
	struct eventfd_ctx *old = NULL;
	int ret = 0;

	if (arg->flags || arg->eventfd < -1)
		return -EINVAL;
	if (arg->eventfd >= 0) {
		trigger = eventfd_ctx_fdget(arg->eventfd);
		if (IS_ERR(trigger))
			return PTR_ERR(trigger);
	}

	mutex_lock(&mdev->lock);
	if (mdev->gone) {
		ret = -ENODEV;
	} else if (arg->vector >= mdev->irq_count) {
		ret = -EINVAL;
	} else if (mdev->irqs[arg->vector].owner &&
		   mdev->irqs[arg->vector].owner != file) {
		/* Another open of the device connected it: only it may change it. */
		ret = -EBUSY;
	} else {
		old = mcp_irq_swap_trigger(mdev, &mdev->irqs[arg->vector],
					   trigger, file);
		if (trigger)
			mcp_counter_inc(MCP_CTR_IRQ_EVENTFDS);
		trigger = NULL;
	}
	mutex_unlock(&mdev->lock);

	if (trigger)
		eventfd_ctx_put(trigger);
	if (old) {
		/* The handler may still be signalling it. */
		synchronize_rcu();
		mcp_irq_drop_trigger(old);
	}
	return ret;
}

/* A device fd is being released: disconnect the eventfds it connected. */
void mcp_irq_release_owner(struct mcp_dev *mdev, struct file *owner)
{
	struct eventfd_ctx **old;
	unsigned int i, n = 0;

	mutex_lock(&mdev->lock);
	old = kcalloc(max(mdev->irq_count, 1U), sizeof(*old), GFP_KERNEL);
	for (i = 0; i < mdev->irq_count; i++) {
		struct mcp_irq *vec = &mdev->irqs[i];

		if (vec->owner != owner)
			continue;
		if (old) {
			old[n++] = mcp_irq_swap_trigger(mdev, vec, NULL, NULL);
		} else {
			/* No memory to batch: one grace period each. */
			struct eventfd_ctx *trigger;

			trigger = mcp_irq_swap_trigger(mdev, vec, NULL, NULL);
			synchronize_rcu();
			mcp_irq_drop_trigger(trigger);
		}
	}
	mutex_unlock(&mdev->lock);

	if (n)
		synchronize_rcu();
	for (i = 0; i < n; i++)
		mcp_irq_drop_trigger(old[i]);
	kfree(old);
}

int mcp_ioctl_irq_unmask(struct file *file, void *karg)
{
	struct mcp_irq_unmask *arg = karg;
	struct mcp_ctx *ctx = file->private_data;
	struct mcp_dev *mdev = ctx->mdev;
	struct mcp_irq *vec;
	bool pending = false;
	unsigned long flags;
	int ret = 0;

	if (arg->flags || arg->reserved)
		return -EINVAL;

	mutex_lock(&mdev->lock);
	if (mdev->gone) {
		ret = -ENODEV;
		goto out_unlock;
	}
	if (arg->vector >= mdev->irq_count) {
		ret = -EINVAL;
		goto out_unlock;
	}
	vec = &mdev->irqs[arg->vector];

	spin_lock_irqsave(&vec->mask_lock, flags);
	if (vec->masked) {
		if (mdev->pdev->broken_intx_masking) {
			enable_irq(vec->irq);
			vec->masked = false;
		} else if (pci_check_and_unmask_intx(mdev->pdev)) {
			vec->masked = false;
		} else {
			/* Still asserted: stay masked and tell userspace again. */
			pending = true;
		}
	}
	spin_unlock_irqrestore(&vec->mask_lock, flags);

	if (pending)
		mcp_irq_signal(vec);

out_unlock:
	mutex_unlock(&mdev->lock);
	return ret;
}
