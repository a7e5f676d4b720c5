/* SPDX-License-Identifier: GPL-2.0 */
/*
 * MCP (Model Control Protocol): differences between the kernel versions
 * mcp.ko builds against.  Every version check of the module lives here.
 *
 * Baseline: Linux 6.1 (Debian 12).  Nothing needs a shim yet; notes on
 * what 6.1 does not export to modules (checked in Module.symvers):
 *
 * - si_meminfo_node(): per-node memory is summed from NODE_DATA(nid)'s
 *   zones with zone_managed_pages() and zone_page_state() instead.
 * - get_online_mems(): the topology snapshot copies the online node mask
 *   once and works from the copy.
 */
#ifndef _MCP_COMPAT_H
#define _MCP_COMPAT_H

#include <linux/version.h>

#endif /* _MCP_COMPAT_H */
