/* SPDX-License-Identifier: GPL-2.0 */
/*
 * MCP (Model Control Protocol): differences between the kernel versions
 * mcp.ko builds against.  Every version check of the module lives here.
 *
 * Baseline: Linux 6.1 (Debian 12).  Notes on
 * what 6.1 does not export to modules (checked in Module.symvers):
 *
 * - si_meminfo_node(): per-node memory is summed from NODE_DATA(nid)'s
 *   zones with zone_managed_pages() and zone_page_state() instead.
 * - get_online_mems(): the topology snapshot copies the online node mask
 *   once and works from the copy.
 *
 * and what 6.12 no longer exports (6.1 does):
 *
 * - is_swiotlb_active(): mcp_dma_bounces() below asks
 *   dma_max_mapping_size() instead, on every version.
 *
 * Shims, each named for what it does on every version:
 */
#ifndef _MCP_COMPAT_H
#define _MCP_COMPAT_H

#include <linux/dma-mapping.h>
#include <linux/eventfd.h>
#include <linux/mm.h>
#include <linux/pci.h>
#include <linux/version.h>
#include <net/genetlink.h>

/*
 * True when building against release @major.@minor or later.  The one
 * LINUX_VERSION_CODE test of the module (checkpatch is told so in
 * scripts/static-checks.sh); feature tests are used where a macro exists.
 */
#define MCP_KERNEL_SINCE(major, minor) \
	(KERNEL_VERSION(major, minor, 0) <= LINUX_VERSION_CODE)

/*
 * vm_flags is written directly up to 6.2; 6.3 made it read-only behind
 * vm_flags_set() and vm_flags_clear(), which is what these become there.
 */
static inline void mcp_vm_flags_set(struct vm_area_struct *vma,
				    vm_flags_t flags)
{
#if MCP_KERNEL_SINCE(6, 3)
	vm_flags_set(vma, flags);
#else
	vma->vm_flags |= flags;
#endif
}

static inline void mcp_vm_flags_clear(struct vm_area_struct *vma,
				      vm_flags_t flags)
{
#if MCP_KERNEL_SINCE(6, 3)
	vm_flags_clear(vma, flags);
#else
	vma->vm_flags &= ~flags;
#endif
}

/*
 * pin_user_pages() takes a vmas array up to 6.4; 6.5 dropped it, and this
 * becomes pin_user_pages(start, nr_pages, gup_flags, pages) there.
 */
static inline long mcp_pin_user_pages(unsigned long start,
				      unsigned long nr_pages,
				      unsigned int gup_flags,
				      struct page **pages)
{
#if MCP_KERNEL_SINCE(6, 5)
	return pin_user_pages(start, nr_pages, gup_flags, pages);
#else
	return pin_user_pages(start, nr_pages, gup_flags, pages, NULL);
#endif
}

/*
 * get_user_pages_remote() takes a vmas array up to 6.4; 6.5 dropped it.
 * This pins nothing: it takes a reference on the one page at @addr of @mm
 * (mmap_lock held for read), put with put_page().
 */
static inline long mcp_get_user_page_remote(struct mm_struct *mm,
					    unsigned long addr,
					    unsigned int gup_flags,
					    struct page **page)
{
#if MCP_KERNEL_SINCE(6, 5)
	return get_user_pages_remote(mm, addr, 1, gup_flags, page, NULL);
#else
	return get_user_pages_remote(mm, addr, 1, gup_flags, page, NULL, NULL);
#endif
}

/*
 * Whether dma-direct may bounce @dev's mappings through swiotlb.  6.1
 * exports is_swiotlb_active(), 6.12 does not; dma_max_mapping_size(),
 * exported by both, is finite for a direct-mapped device exactly when
 * swiotlb is active and either @dev cannot address all memory or
 * bouncing is forced.  A device swiotlb is active for but that reaches
 * all memory is never bounced, and every page passes dma_capable() for
 * it, so callers that check reachability see no difference.
 */
static inline bool mcp_dma_bounces(struct device *dev)
{
	return dma_max_mapping_size(dev) != SIZE_MAX;
}

/* eventfd_signal() takes a count up to 6.7; 6.8 dropped it. */
static inline void mcp_eventfd_signal(struct eventfd_ctx *ctx)
{
#if MCP_KERNEL_SINCE(6, 8)
	eventfd_signal(ctx);
#else
	eventfd_signal(ctx, 1);
#endif
}

/* PCI_IRQ_LEGACY was renamed PCI_IRQ_INTX in 6.8. */
#ifdef PCI_IRQ_INTX
#define MCP_PCI_IRQ_INTX	PCI_IRQ_INTX
#else
#define MCP_PCI_IRQ_INTX	PCI_IRQ_LEGACY
#endif

/*
 * GENL_MCAST_CAP_NET_ADMIN (joining a multicast group needs CAP_NET_ADMIN
 * in the socket's network namespace) came with 6.8 and was backported to
 * 6.1.66 and later (Debian 12's kernels have it).  Without it nothing can
 * restrict who joins, and events leave out who was placed (pid, comm):
 * see Documentation/events.rst.
 */
#ifdef GENL_MCAST_CAP_NET_ADMIN
#define MCP_GENL_MCAST_ADMIN	GENL_MCAST_CAP_NET_ADMIN
#else
#define MCP_GENL_MCAST_ADMIN	0
#endif

#endif /* _MCP_COMPAT_H */
