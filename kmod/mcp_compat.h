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
 * Shims, each named for what it does on every version:
 */
#ifndef _MCP_COMPAT_H
#define _MCP_COMPAT_H

#include <linux/eventfd.h>
#include <linux/mm.h>
#include <linux/pci.h>
#include <linux/version.h>
#include <net/genetlink.h>

/*
 * vm_flags is written directly up to 6.2; 6.3 made it read-only behind
 * vm_flags_set() and vm_flags_clear(), which is what these become there.
 */
static inline void mcp_vm_flags_set(struct vm_area_struct *vma,
				    vm_flags_t flags)
{
	vma->vm_flags |= flags;
}

static inline void mcp_vm_flags_clear(struct vm_area_struct *vma,
				      vm_flags_t flags)
{
	vma->vm_flags &= ~flags;
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
	return pin_user_pages(start, nr_pages, gup_flags, pages, NULL);
}

/* eventfd_signal() takes a count up to 6.7; 6.8 dropped it. */
static inline void mcp_eventfd_signal(struct eventfd_ctx *ctx)
{
	eventfd_signal(ctx, 1);
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
