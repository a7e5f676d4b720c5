/* SPDX-License-Identifier: GPL-2.0 */
/*
 * MCP (Model Control Protocol): inference graphs in the kernel.
 * Documentation/graphs.rst describes them for users.
 *
 *   mcp_graph.c	MCP_IOC_GRAPH_CREATE / _DESTROY: copy, validate once,
 *			compute the schedule; the graph handle table
 *   mcp_graph_decode.c	format version 2 (compact) into version 1 tables
 *   mcp_sched.c	MCP_IOC_GRAPH_EXEC / _STATUS: executions, dependency
 *			counting, dispatch to engines, fences, time-outs
 *   mcp_worker.c	MCP_IOC_WORKER_REGISTER, the worker fd, JOB_DONE
 *   mcp_graph_ops.c	the data-movement operators the cpu engine runs
 *			(TILE16, QUANT_I8, DEQUANT_I8): pure functions, also
 *			built into the host unit tests
 *
 * A validated graph is immutable and refcounted: the handle table holds
 * one reference, every execution one more, so GRAPH_DESTROY and fd close
 * never pull a graph from under a running execution.
 */
#ifndef _MCP_GRAPH_H
#define _MCP_GRAPH_H

#include <linux/kref.h>
#include <linux/types.h>

#include <linux/mcp.h>

struct mcp_bo;
struct mcp_ctx;
struct file;

/**
 * struct mcp_graph - a validated graph
 * @ref:	the handle table's reference and one per execution
 * @handle:	its handle on the context
 * @hdr:	the header as given
 * @buffers:	the buffer table (kernel copy)
 * @tensors:	the tensor table
 * @nodes:	the node table
 * @blob:	the blob
 * @bos:	@hdr.n_buffers BOs bound at create, a reference on each
 * @n_deps:	per node: how many nodes it waits for
 * @succ_start:	per node i, its successors are
 *		@succ[@succ_start[i] .. @succ_start[i + 1]); n_nodes + 1
 *		entries
 * @succ:	successor node indices
 * @roots:	the nodes that wait for none, in index order
 * @n_roots:	entries of @roots
 * @chain_next: per node, the node a worker's read may chain after it: its
 *		only successor, when both are WORKER nodes (whether that one
 *		waits for nothing else is seen per execution); else
 *		MCP_GRAPH_NO_CHAIN
 * @tensor_bytes: per tensor: its unpadded byte size
 * @raw:	the kernel copy of the whole graph; @buffers, @tensors,
 *		@nodes and @blob point into it
 * @handles:	the BO handles bound at create, per buffer (worker jobs
 *		name their tensors' BOs by handle)
 * @spare_jobs:	the job array of an ended execution, for the next one
 *		(mcp_sched.c): allocating and zeroing it costs more than a
 *		chain of empty worker nodes where the CPU is emulated; NULL
 *		or owned by the graph, taken and given back with xchg()
 * @spare_rec:	likewise, the record of one of its executions that left
 *		the history
 */
struct mcp_graph {
	struct kref ref;
	u32 handle;
	struct mcp_graph_header hdr;
	struct mcp_graph_buffer *buffers;
	struct mcp_graph_tensor *tensors;
	struct mcp_graph_node *nodes;
	u8 *blob;
	struct mcp_bo **bos;
	u32 *n_deps;
	u32 *succ_start;
	u32 *succ;
	u32 *roots;
	u32 n_roots;
	u32 *chain_next;
	u64 *tensor_bytes;
	u8 *raw;
	u32 *handles;
	void *spare_jobs;
	void *spare_rec;
};

/* mcp_graph.chain_next: nothing chains after the node. */
#define MCP_GRAPH_NO_CHAIN	U32_MAX

/**
 * struct mcp_graph_knobs - /sys/class/misc/mcp/graph/
 * @max_nodes:		node table entries a graph may have
 * @max_tensors:	tensor table entries
 * @max_blob:		blob bytes
 * @exec_timeout_ms:	time-out of an execution submitted without one
 * @exec_timeout_max_ms: the longest time-out an execution may ask for
 * @exec_history_len:	finished executions per fd kept for GRAPH_STATUS
 * @max_execs_in_flight: executions per fd submitted and not ended
 * @max_dep_work:	dependency sweep steps a graph may need (a tensor use
 *			counts once per byte range, cut at outputs, it covers)
 */
struct mcp_graph_knobs {
	u32 max_nodes;
	u32 max_tensors;
	u32 max_blob;
	u32 exec_timeout_ms;
	u32 exec_timeout_max_ms;
	u32 exec_history_len;
	u32 max_execs_in_flight;
	u32 max_dep_work;
};

extern struct mcp_graph_knobs mcp_graph_knobs;
extern const struct attribute_group mcp_graph_attr_group;

/*
 * Kernel copies of the arguments whose result is published after the copy
 * back (mcp_ioctl_desc.publish): the handle or fd appears only then.
 */
struct mcp_graph_create_karg {
	struct mcp_graph_create arg;
	struct mcp_ctx *ctx;
	struct mcp_graph *graph;
};

struct mcp_graph_exec_karg {
	struct mcp_graph_exec arg;
	struct file *out_file;
};

struct mcp_worker_register_karg {
	struct mcp_worker_register arg;
	struct file *file;
};

/* The first failure found: what GRAPH_CREATE copies back with -EINVAL. */
struct mcp_graph_err {
	u32 reason;
	u32 kind;
	u32 index;
};

/* mcp_graph.c */
int mcp_ioctl_graph_create(struct file *file, void *karg);
void mcp_ioctl_graph_create_publish(void *karg, bool copied);
int mcp_ioctl_graph_destroy(struct file *file, void *karg);
/* A reference on the graph @handle of @ctx, or NULL. */
struct mcp_graph *mcp_graph_lookup(struct mcp_ctx *ctx, u32 handle);
void mcp_graph_get(struct mcp_graph *graph);
void mcp_graph_put(struct mcp_graph *graph);
/* Context teardown, after mcp_sched_ctx_fini(): drops every handle. */
void mcp_graph_ctx_fini(struct mcp_ctx *ctx);

/*
 * mcp_sched.c.  mcp_sched_ctx_fini() runs first at context teardown: it
 * cancels the context's executions, detaches its workers (their reads
 * then return 0) and returns once no job of the context runs.
 */
int mcp_ioctl_graph_exec(struct file *file, void *karg);
void mcp_ioctl_graph_exec_publish(void *karg, bool copied);
int mcp_ioctl_graph_status(struct file *file, void *karg);
void mcp_sched_ctx_fini(struct mcp_ctx *ctx);
int mcp_sched_init(void);
void mcp_sched_exit(void);

/*
 * mcp_graph_decode.c: format version 2.  mcp_graph_compact_sizes_ok() is
 * the header's length rule (total_len, tables a multiple of 8 bytes and
 * within what the counts can take).  mcp_graph_decode_user() copies the
 * graph from @src and decodes it into @graph, allocated for its version 1
 * image (@graph->hdr); -EINVAL with @err filled when it cannot.
 */
bool mcp_graph_compact_sizes_ok(const struct mcp_graph_header *h,
				u64 graph_len);
int mcp_graph_decode_user(struct mcp_graph *graph,
			  const struct mcp_graph_header *given,
			  const void __user *src, struct mcp_graph_err *err);

/* mcp_worker.c */
int mcp_ioctl_worker_register(struct file *file, void *karg);
void mcp_ioctl_worker_register_publish(void *karg, bool copied);

/*
 * mcp_graph_ops.c: the cpu engine's operators on kernel mappings.  No
 * allocation, no locks, no FPU (floats are handled as IEEE-754 bits with
 * integer arithmetic), so they run in any context and build in userspace
 * for the unit tests.  Each does part of the work so the caller can
 * reschedule between parts.
 */

/*
 * TILE16 of whole tiles [first, last) of the b * (h / 16) tiles of an
 * NHWC [b][h][s][d] tensor whose rows (d elements) are @row_bytes long:
 * out[b][h / 16][s][d][h % 16] = in[b][h][s][d], elements of @elem_bytes.
 */
void mcp_graph_op_tile16(const void *in, void *out, u32 h, u32 s,
			 u32 row_bytes, u32 elem_bytes, u64 first, u64 last);
/* QUANT_I8 of elements [first, last): @scale_bits is a finite f32 > 0. */
void mcp_graph_op_quant_i8(const u32 *in, s8 *out, u32 scale_bits,
			   s32 zero_point, u64 first, u64 last);
/* DEQUANT_I8 of elements [first, last), results as f32 bits. */
void mcp_graph_op_dequant_i8(const s8 *in, u32 *out, u32 scale_bits,
			     s32 zero_point, u64 first, u64 last);
/* True when @bits is a finite f32 greater than zero. */
bool mcp_graph_f32_positive(u32 bits);

#endif /* _MCP_GRAPH_H */
