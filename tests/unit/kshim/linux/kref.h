/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Userspace stand-in for <linux/kref.h>: kmod/mcp_graph.h embeds a kref in
 * struct mcp_graph; the operators the unit tests build never use it.
 */
#ifndef MCP_KSHIM_LINUX_KREF_H
#define MCP_KSHIM_LINUX_KREF_H

struct kref {
	int refcount;
};

#endif
