/* SPDX-License-Identifier: GPL-2.0 */
/*
 * MCP (Model Control Protocol): CPU work done for a task, on kernel
 * threads in that task's cgroups (mcp_charge.c).
 */
#ifndef MCP_CHARGE_H
#define MCP_CHARGE_H

#include <linux/kthread.h>
#include <linux/mutex.h>
#include <linux/workqueue.h>

/**
 * struct mcp_charged - one context's charged workers
 * @lock:	serialises their creation
 * @workers:	by NUMA node, NULL until prepared; published with release
 *		semantics, read without @lock
 * @free_work:	stops and frees them, off their own threads
 */
struct mcp_charged {
	struct mutex lock;	/* creation of @workers */
	struct kthread_worker **workers;
	struct work_struct free_work;
};

struct mcp_charged *mcp_charged_alloc(void);
void mcp_charged_free(struct mcp_charged *c);
int mcp_charged_prepare(struct mcp_charged *c, int node);
bool mcp_charged_queue(struct mcp_charged *c, int run_node,
		       struct kthread_work *work);

int mcp_charge_init(void);
void mcp_charge_exit(void);

#endif /* MCP_CHARGE_H */
