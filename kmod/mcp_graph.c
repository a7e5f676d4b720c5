// SPDX-License-Identifier: GPL-2.0
/*
 * MCP (Model Control Protocol): MCP_IOC_GRAPH_CREATE / _DESTROY, graph
 * validation and schedules, the graph handle table of a context and the
 * knobs in /sys/class/misc/mcp/graph/.
 *
 * A graph is copied once, checked in the order of
 * Documentation/graphs.rst (libmcp's validator reports the same first
 * error for the same bytes, but for the rules of worker operators, which
 * are libmcp's alone), and its dependency graph stored as CSR.
 * The header is read and checked before anything is allocated, so the
 * allocation is bounded by the max_* knobs.  As for BOs, a new graph's
 * handle is reserved by the handler and published only after the copy
 * back worked.
 *
 * Locks: mcp_ctx.lock around the graph table (mcp_ctx.h); nothing else.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/device.h>
#include <linux/kernel.h>
#include <linux/minmax.h>
#include <linux/mm.h>
#include <linux/overflow.h>
#include <linux/sched.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/sort.h>
#include <linux/sysfs.h>
#include <linux/uaccess.h>
#include <linux/xarray.h>

#include "mcp_bo.h"
#include "mcp_ctx.h"
#include "mcp_graph.h"
#include "mcp_internal.h"
#include "mcp_pci.h"

#define MCP_GRAPH_HEADER_SIZE	48
/* Knob caps (Documentation/ABI/testing/sysfs-class-misc-mcp) */
#define MCP_GRAPH_NODES_CAP	65536
#define MCP_GRAPH_TENSORS_CAP	65536
#define MCP_GRAPH_BLOB_CAP	(16U << 20)
#define MCP_GRAPH_TIMEOUT_CAP	3600000
#define MCP_GRAPH_HISTORY_CAP	4096
#define MCP_GRAPH_EXECS_CAP	65536
#define MCP_GRAPH_DEP_WORK_CAP	BIT(26)
/* Graph handles, as BO handles */
#define MCP_GRAPH_HANDLE_MAX	((1U << 24) - 1)

static_assert(sizeof(struct mcp_graph_header) == MCP_GRAPH_HEADER_SIZE);
static_assert(sizeof(struct mcp_graph_buffer) == 32);
static_assert(sizeof(struct mcp_graph_tensor) == 48);
static_assert(sizeof(struct mcp_graph_node) == 48);

struct mcp_graph_knobs mcp_graph_knobs = {
	.max_nodes = 4096,
	.max_tensors = 16384,
	.max_blob = 1U << 20,
	.exec_timeout_ms = 10000,
	.exec_timeout_max_ms = 600000,
	.exec_history_len = 64,
	.max_execs_in_flight = 256,
	.max_dep_work = 1U << 20,
};

static int mcp_graph_fail(struct mcp_graph_err *err, u32 reason, u32 kind,
			  u32 index)
{
	err->reason = reason;
	err->kind = kind;
	err->index = index;
	return -EINVAL;
}

/* Helpers on the format */

static u32 mcp_dtype_size(u8 dtype)
{
	switch (dtype) {
	case MCP_DTYPE_F32:
	case MCP_DTYPE_I32:
		return 4;
	case MCP_DTYPE_I8:
	case MCP_DTYPE_U8:
		return 1;
	default:
		return 0;
	}
}

/* A blob range: none (0, 0), or inside the blob. */
static bool mcp_graph_range_ok(u32 offset, u32 len, u32 blob_len)
{
	if (!len)
		return !offset;
	return (u64)offset + len <= blob_len;
}

/*
 * The operators the kernel runs itself (cpu engine, device) are checked
 * in full.  Any op of the worker range is opaque (MCP_FEAT_WORKER_OPS):
 * what the kernel checks of a worker node is only what keeps it and the
 * other nodes safe (slots, tensor bounds, aliasing, dependencies, the
 * engine class, the parameters' blob range and size); the operator's
 * rules are libmcp's, checked where the graph is loaded.
 */
static bool mcp_graph_op_worker(u16 op)
{
	return op >= MCP_OP_WNOP;	/* the worker range: 64 .. 65535 */
}

static bool mcp_graph_op_known(u16 op)
{
	return (op >= MCP_OP_NOP && op <= MCP_OP_DEQUANT_I8) ||
	       mcp_graph_op_worker(op);
}

static bool mcp_graph_engine_runs(u8 engine, u16 op)
{
	switch (op) {
	case MCP_OP_NOP:
	case MCP_OP_TILE16:
	case MCP_OP_QUANT_I8:
	case MCP_OP_DEQUANT_I8:
		return engine == MCP_GRAPH_ENGINE_CPU;
	case MCP_OP_COPY:
		return engine == MCP_GRAPH_ENGINE_CPU ||
		       engine == MCP_GRAPH_ENGINE_DEVICE;
	default:
		return engine == MCP_GRAPH_ENGINE_WORKER;
	}
}

/* Inputs and outputs a kernel operator takes (a worker's: any slots). */
static bool mcp_graph_arity_ok(u16 op, u8 n_in, u8 n_out)
{
	if (op == MCP_OP_NOP || mcp_graph_op_worker(op))
		return true;
	return n_in == 1 && n_out == 1;
}

static bool mcp_graph_tensors_overlap(const struct mcp_graph *graph, u32 a, u32 b)
{
	const struct mcp_graph_tensor *ta = &graph->tensors[a];
	const struct mcp_graph_tensor *tb = &graph->tensors[b];

	/* Validated: every tensor is inside its buffer, no overflow. */
	return ta->buffer == tb->buffer &&
	       ta->offset < tb->offset + graph->tensor_bytes[b] &&
	       tb->offset < ta->offset + graph->tensor_bytes[a];
}

static bool mcp_graph_tensors_identical(const struct mcp_graph *graph,
					u32 a, u32 b)
{
	const struct mcp_graph_tensor *ta = &graph->tensors[a];
	const struct mcp_graph_tensor *tb = &graph->tensors[b];

	return ta->buffer == tb->buffer && ta->offset == tb->offset &&
	       graph->tensor_bytes[a] == graph->tensor_bytes[b];
}

/* In-place-active: INPLACE and out0 is exactly in0. */
static bool mcp_graph_node_inplace(const struct mcp_graph *graph,
				   const struct mcp_graph_node *n)
{
	return (n->flags & MCP_GRAPH_NODE_INPLACE) && n->n_inputs &&
	       n->n_outputs &&
	       mcp_graph_tensors_identical(graph, n->outputs[0], n->inputs[0]);
}

/* Bytes of the version 1 image of @h's counts. */
static u64 mcp_graph_fixed_len(const struct mcp_graph_header *h)
{
	/* 32-bit counts times small sizes: no overflow in 64 bits. */
	return MCP_GRAPH_HEADER_SIZE +
	       (u64)h->n_buffers * sizeof(struct mcp_graph_buffer) +
	       (u64)h->n_tensors * sizeof(struct mcp_graph_tensor) +
	       (u64)h->n_nodes * sizeof(struct mcp_graph_node) + h->blob_len;
}

/* 1. The header, on its own (before anything is allocated) */
static int mcp_graph_check_header(const struct mcp_graph_header *h,
				  u64 graph_len, u32 n_handles,
				  struct mcp_graph_err *err)
{
	bool sizes_ok;

	if (h->magic != MCP_GRAPH_MAGIC ||
	    (h->version != MCP_GRAPH_VERSION &&
	     h->version != MCP_GRAPH_VERSION_COMPACT) ||
	    h->header_size != MCP_GRAPH_HEADER_SIZE || h->flags ||
	    h->reserved)
		return mcp_graph_fail(err, MCP_GRAPH_ERR_HEADER,
				      MCP_GRAPH_AT_HEADER, 0);
	if (!h->n_buffers || h->n_buffers > MCP_GRAPH_MAX_BUFFERS ||
	    !h->n_tensors || !h->n_nodes || h->blob_len % 8)
		return mcp_graph_fail(err, MCP_GRAPH_ERR_HEADER,
				      MCP_GRAPH_AT_HEADER, 0);
	if (h->n_nodes > READ_ONCE(mcp_graph_knobs.max_nodes) ||
	    h->n_tensors > READ_ONCE(mcp_graph_knobs.max_tensors) ||
	    h->blob_len > READ_ONCE(mcp_graph_knobs.max_blob))
		return mcp_graph_fail(err, MCP_GRAPH_ERR_LIMIT,
				      MCP_GRAPH_AT_HEADER, 0);
	if (h->version == MCP_GRAPH_VERSION_COMPACT)
		sizes_ok = mcp_graph_compact_sizes_ok(h, graph_len);
	else
		sizes_ok = h->total_len == mcp_graph_fixed_len(h) &&
			   h->total_len == graph_len;
	if (!sizes_ok)
		return mcp_graph_fail(err, MCP_GRAPH_ERR_HEADER,
				      MCP_GRAPH_AT_HEADER, 0);
	if (!mcp_graph_range_ok(h->name_offset, h->name_len, h->blob_len))
		return mcp_graph_fail(err, MCP_GRAPH_ERR_RANGE,
				      MCP_GRAPH_AT_HEADER, 0);
	if (n_handles != h->n_buffers)
		return mcp_graph_fail(err, MCP_GRAPH_ERR_HEADER,
				      MCP_GRAPH_AT_HEADER, 0);
	return 0;
}

/* 2. Buffers, each with its bound BO (a reference kept in graph->bos) */
static int mcp_graph_check_buffers(struct mcp_graph *graph,
				   struct mcp_ctx *ctx,
				   struct mcp_graph_err *err)
{
	u32 blob_len = graph->hdr.blob_len;
	u32 i;

	for (i = 0; i < graph->hdr.n_buffers; i++) {
		const struct mcp_graph_buffer *b = &graph->buffers[i];
		struct mcp_bo *bo;

		if (!b->length || (b->flags & ~MCP_GRAPH_BUF_FLAGS) ||
		    b->reserved)
			return mcp_graph_fail(err, MCP_GRAPH_ERR_BUFFER,
					      MCP_GRAPH_AT_BUFFER, i);
		if (!mcp_graph_range_ok(b->name_offset, b->name_len,
					blob_len) ||
		    !mcp_graph_range_ok(b->init_offset, b->init_len, blob_len))
			return mcp_graph_fail(err, MCP_GRAPH_ERR_RANGE,
					      MCP_GRAPH_AT_BUFFER, i);
		bo = mcp_bo_lookup(ctx, graph->handles[i]);
		if (!bo)
			return -ENOENT;
		graph->bos[i] = bo;
		if (mcp_bo_length(bo) < b->length)
			return mcp_graph_fail(err, MCP_GRAPH_ERR_BUFFER,
					      MCP_GRAPH_AT_BUFFER, i);
	}
	return 0;
}

/* Unpadded bytes of @t, false on overflow. */
static bool mcp_graph_tensor_size(const struct mcp_graph_tensor *t,
				  u64 *bytes)
{
	u64 n = mcp_dtype_size(t->dtype);
	u32 k;

	for (k = 0; k < t->rank; k++)
		if (check_mul_overflow(n, (u64)t->dims[k], &n))
			return false;
	*bytes = n;
	return n <= U64_MAX - (MCP_GRAPH_ALIGN - 1);
}

static bool mcp_graph_tensor_ok(const struct mcp_graph *graph,
				const struct mcp_graph_tensor *t)
{
	u32 k;

	if (t->buffer >= graph->hdr.n_buffers || !mcp_dtype_size(t->dtype) ||
	    t->rank > MCP_GRAPH_MAX_RANK || t->flags)
		return false;
	for (k = 0; k < MCP_GRAPH_MAX_RANK; k++)
		if (k < t->rank ? !t->dims[k] : t->dims[k])
			return false;
	switch (t->layout) {
	case MCP_LAYOUT_DENSE:
		break;
	case MCP_LAYOUT_NHWC:
		if (t->rank != 4)
			return false;
		break;
	case MCP_LAYOUT_TILED16:
		if (t->rank != 5 || t->dims[4] != 16)
			return false;
		break;
	default:
		return false;
	}
	return !(t->offset % MCP_GRAPH_ALIGN);
}

/* 3. Tensors */
static int mcp_graph_check_tensors(struct mcp_graph *graph,
				   struct mcp_graph_err *err)
{
	u32 i;

	for (i = 0; i < graph->hdr.n_tensors; i++) {
		const struct mcp_graph_tensor *t = &graph->tensors[i];
		u64 bytes, padded, length;

		if (!mcp_graph_tensor_ok(graph, t) ||
		    !mcp_graph_tensor_size(t, &bytes))
			return mcp_graph_fail(err, MCP_GRAPH_ERR_TENSOR,
					      MCP_GRAPH_AT_TENSOR, i);
		if (!mcp_graph_range_ok(t->name_offset, t->name_len,
					graph->hdr.blob_len))
			return mcp_graph_fail(err, MCP_GRAPH_ERR_RANGE,
					      MCP_GRAPH_AT_TENSOR, i);
		padded = round_up(bytes, MCP_GRAPH_ALIGN);
		length = graph->buffers[t->buffer].length;
		if (padded > length || t->offset > length - padded)
			return mcp_graph_fail(err, MCP_GRAPH_ERR_BOUNDS,
					      MCP_GRAPH_AT_TENSOR, i);
		graph->tensor_bytes[i] = bytes;
	}
	return 0;
}

/* 4e. Parameters of one node (range checked) */
static bool mcp_graph_param_ok(const struct mcp_graph *graph,
			       const struct mcp_graph_node *n)
{
	struct mcp_graph_quant q;

	if (n->param_len > MCP_GRAPH_MAX_PARAM)
		return false;
	if (mcp_graph_op_worker(n->op))
		return true;
	switch (n->op) {
	case MCP_OP_QUANT_I8:
	case MCP_OP_DEQUANT_I8:
		if (n->param_len != sizeof(q))
			return false;
		memcpy(&q, graph->blob + n->param_offset, sizeof(q));
		return mcp_graph_f32_positive(q.scale) && q.zero_point >= -128 &&
		       q.zero_point <= 127;
	default:
		return !n->param_len;
	}
}

static bool mcp_graph_same_dims(const struct mcp_graph_tensor *a,
				const struct mcp_graph_tensor *b)
{
	return a->rank == b->rank &&
	       !memcmp(a->dims, b->dims, sizeof(a->dims));
}

static bool mcp_graph_tile16_ok(const struct mcp_graph *graph,
				const struct mcp_graph_node *n)
{
	const struct mcp_graph_tensor *in = &graph->tensors[n->inputs[0]];
	const struct mcp_graph_tensor *out = &graph->tensors[n->outputs[0]];

	if (in->layout != MCP_LAYOUT_NHWC ||
	    out->layout != MCP_LAYOUT_TILED16 || in->dtype != out->dtype)
		return false;
	if (in->dims[1] % 16 ||
	    ((u64)in->dims[3] * mcp_dtype_size(in->dtype)) % 32)
		return false;
	return out->dims[0] == in->dims[0] &&
	       out->dims[1] == in->dims[1] / 16 &&
	       out->dims[2] == in->dims[2] && out->dims[3] == in->dims[3] &&
	       out->dims[4] == 16;
}

/* 4f. Dtypes, shapes and layouts of one node the kernel runs */
static bool mcp_graph_shape_ok(const struct mcp_graph *graph,
			       const struct mcp_graph_node *n)
{
	const struct mcp_graph_tensor *in0 = &graph->tensors[n->inputs[0]];
	const struct mcp_graph_tensor *out0 = &graph->tensors[n->outputs[0]];
	u32 k;

	if (mcp_graph_op_worker(n->op))
		return true;
	if (n->op == MCP_OP_COPY)
		return graph->tensor_bytes[n->inputs[0]] ==
		       graph->tensor_bytes[n->outputs[0]];
	if (n->op == MCP_OP_TILE16)
		return mcp_graph_tile16_ok(graph, n);

	for (k = 0; k < n->n_inputs; k++)
		if (graph->tensors[n->inputs[k]].layout != MCP_LAYOUT_DENSE)
			return false;
	for (k = 0; k < n->n_outputs; k++)
		if (graph->tensors[n->outputs[k]].layout != MCP_LAYOUT_DENSE)
			return false;

	switch (n->op) {
	case MCP_OP_QUANT_I8:
		return in0->dtype == MCP_DTYPE_F32 &&
		       out0->dtype == MCP_DTYPE_I8 &&
		       mcp_graph_same_dims(in0, out0);
	case MCP_OP_DEQUANT_I8:
		return in0->dtype == MCP_DTYPE_I8 &&
		       out0->dtype == MCP_DTYPE_F32 &&
		       mcp_graph_same_dims(in0, out0);
	default:	/* NOP */
		return true;
	}
}

/* 4g. Outputs overlapping each other or the node's inputs */
static bool mcp_graph_alias_ok(const struct mcp_graph *graph,
			       const struct mcp_graph_node *n)
{
	u32 k, m;

	if (n->n_outputs == 2 &&
	    mcp_graph_tensors_overlap(graph, n->outputs[0], n->outputs[1]))
		return false;
	for (k = 0; k < n->n_outputs; k++)
		for (m = 0; m < n->n_inputs; m++) {
			if (!mcp_graph_tensors_overlap(graph, n->outputs[k],
						       n->inputs[m]))
				continue;
			if (!k && !m && (n->flags & MCP_GRAPH_NODE_INPLACE) &&
			    mcp_graph_tensors_identical(graph, n->outputs[0],
							n->inputs[0]))
				continue;
			return false;
		}
	return true;
}

static bool mcp_graph_slots_ok(const struct mcp_graph *graph,
			       const struct mcp_graph_node *n)
{
	u32 k;

	if (n->n_inputs > MCP_GRAPH_MAX_INPUTS ||
	    n->n_outputs > MCP_GRAPH_MAX_OUTPUTS)
		return false;
	for (k = 0; k < MCP_GRAPH_MAX_INPUTS; k++)
		if (k < n->n_inputs ? n->inputs[k] >= graph->hdr.n_tensors :
				      n->inputs[k])
			return false;
	for (k = 0; k < MCP_GRAPH_MAX_OUTPUTS; k++)
		if (k < n->n_outputs ? n->outputs[k] >= graph->hdr.n_tensors :
				       n->outputs[k])
			return false;
	return mcp_graph_arity_ok(n->op, n->n_inputs, n->n_outputs);
}

/* 4. Nodes, each on its own */
static int mcp_graph_check_nodes(const struct mcp_graph *graph,
				 bool has_device, struct mcp_graph_err *err)
{
	u32 blob_len = graph->hdr.blob_len;
	u32 i;

	for (i = 0; i < graph->hdr.n_nodes; i++) {
		const struct mcp_graph_node *n = &graph->nodes[i];
		u32 reason = 0;

		if (!mcp_graph_op_known(n->op) ||
		    (n->flags & ~MCP_GRAPH_NODE_FLAGS) || n->reserved)
			reason = MCP_GRAPH_ERR_OP;
		else if (n->engine > MCP_GRAPH_ENGINE_WORKER ||
			 !mcp_graph_engine_runs(n->engine, n->op) ||
			 (n->engine == MCP_GRAPH_ENGINE_DEVICE && !has_device))
			reason = MCP_GRAPH_ERR_ENGINE;
		else if (!mcp_graph_slots_ok(graph, n))
			reason = MCP_GRAPH_ERR_ARITY;
		else if (!mcp_graph_range_ok(n->name_offset, n->name_len,
					     blob_len) ||
			 !mcp_graph_range_ok(n->param_offset, n->param_len,
					     blob_len))
			reason = MCP_GRAPH_ERR_RANGE;
		else if (!mcp_graph_param_ok(graph, n))
			reason = MCP_GRAPH_ERR_PARAM;
		else if (!mcp_graph_shape_ok(graph, n))
			reason = MCP_GRAPH_ERR_SHAPE;
		else if (!mcp_graph_alias_ok(graph, n))
			reason = MCP_GRAPH_ERR_ALIAS;
		if (reason)
			return mcp_graph_fail(err, reason, MCP_GRAPH_AT_NODE, i);
	}
	return 0;
}

/*
 * Per node, the buffers its inputs and outputs touch: a pair of nodes
 * sharing no buffer needs no tensor comparison (n_buffers <= 64).
 */
struct mcp_graph_masks {
	u64 in;
	u64 out;
	bool inplace;
};

static void mcp_graph_fill_masks(const struct mcp_graph *graph,
				 struct mcp_graph_masks *masks)
{
	u32 i, k;

	for (i = 0; i < graph->hdr.n_nodes; i++) {
		const struct mcp_graph_node *n = &graph->nodes[i];

		masks[i].in = 0;
		masks[i].out = 0;
		for (k = 0; k < n->n_inputs; k++)
			masks[i].in |=
				BIT_ULL(graph->tensors[n->inputs[k]].buffer);
		for (k = 0; k < n->n_outputs; k++)
			masks[i].out |=
				BIT_ULL(graph->tensors[n->outputs[k]].buffer);
		masks[i].inplace = mcp_graph_node_inplace(graph, n);
	}
}

/* Some input of @to overlaps some output of @from. */
static bool mcp_graph_reads_from(const struct mcp_graph *graph,
				 const struct mcp_graph_node *from,
				 const struct mcp_graph_node *to)
{
	u32 k, m;

	for (k = 0; k < to->n_inputs; k++)
		for (m = 0; m < from->n_outputs; m++)
			if (mcp_graph_tensors_overlap(graph, to->inputs[k],
						      from->outputs[m]))
				return true;
	return false;
}

/* Some input or output of @n overlaps @tensor. */
static bool mcp_graph_touches(const struct mcp_graph *graph,
			      const struct mcp_graph_node *n, u32 tensor)
{
	u32 k;

	for (k = 0; k < n->n_inputs; k++)
		if (mcp_graph_tensors_overlap(graph, n->inputs[k], tensor))
			return true;
	for (k = 0; k < n->n_outputs; k++)
		if (mcp_graph_tensors_overlap(graph, n->outputs[k], tensor))
			return true;
	return false;
}

/*
 * The rule of graphs.rst ("Dependencies") for nodes @a < @b: bit 0 for
 * a -> b, bit 1 for b -> a.  An in-place node is ordered by index
 * against every node that touches its out0; otherwise a reader waits for
 * the writer.
 */
static unsigned int mcp_graph_edges(const struct mcp_graph *graph,
				    const struct mcp_graph_masks *masks,
				    u32 a, u32 b)
{
	const struct mcp_graph_node *na = &graph->nodes[a];
	const struct mcp_graph_node *nb = &graph->nodes[b];
	unsigned int edges = 0;

	if (!((masks[a].in | masks[a].out) & (masks[b].in | masks[b].out)))
		return 0;
	if ((masks[a].inplace && mcp_graph_touches(graph, nb, na->outputs[0])) ||
	    (masks[b].inplace && mcp_graph_touches(graph, na, nb->outputs[0])))
		return 1;
	if ((masks[a].out & masks[b].in) && mcp_graph_reads_from(graph, na, nb))
		edges |= 1;
	if ((masks[b].out & masks[a].in) && mcp_graph_reads_from(graph, nb, na))
		edges |= 2;
	return edges;
}

/*
 * 5 and 6: the dependency sweep.  The rule above, applied to every pair,
 * gives k * (k - 1) / 2 edges for k in-place nodes on the same bytes, so
 * it is not applied to pairs.  Per buffer, the bytes are cut into ranges
 * at the start and end of every output (an in-place out0 included); each
 * range lists the nodes using it, in node order (a counting sort: nothing
 * is sorted but the cuts).  In each range:
 *
 * - two nodes writing it, neither in place, fail rule 5 (reported at the
 *   lowest second writer of any range: the lowest j with a conflicting
 *   i < j, as a check of every pair would);
 * - in index order, a node waits for the last in-place node before it,
 *   and an in-place node also for every node since that one: the index
 *   order of every pair with an in-place node, as a chain;
 * - each reader and the range's writer (rule 5: one at most) get the
 *   edges of mcp_graph_edges() for their pair.
 *
 * Each edge is one the rule gives for its pair, and each edge the rule
 * gives for any pair follows from these, so the order enforced is the
 * rule's, with O(uses) edges when tensors are identical or disjoint.  The
 * work (a use counted once per range it covers) is bounded by the
 * max_dep_work knob; the long loops yield and stop for a fatal signal.
 */

/* What a node does with a range's bytes (mcp_graph_deps.ent) */
#define MCP_DEP_READ		0U
#define MCP_DEP_WRITE		1U	/* an output not in place */
#define MCP_DEP_INPLACE		2U	/* an in-place node's out0 (= in0) */
#define MCP_DEP_SHIFT		30
#define MCP_DEP_NODE(e)		((e) & (BIT(MCP_DEP_SHIFT) - 1))
#define MCP_DEP_KIND(e)		((e) >> MCP_DEP_SHIFT)
#define MCP_DEP_NONE		U32_MAX

static_assert(BIT(MCP_DEP_SHIFT) > MCP_GRAPH_NODES_CAP);

/* Where an output starts or ends */
struct mcp_graph_cut {
	u64 offset;
	u32 buffer;
};

/**
 * struct mcp_graph_deps - the dependency sweep's scratch
 * @graph:	the graph, its nodes checked on their own
 * @masks:	per node
 * @cuts:	sorted by buffer and offset, without repeats; range k is
 *		[@cuts[k].offset, @cuts[k + 1].offset) when both are cuts of
 *		the same buffer (else range k is empty)
 * @n_cuts:	entries of @cuts
 * @buf_cuts:	per buffer b, its cuts are @cuts[@buf_cuts[b] ..
 *		@buf_cuts[b + 1]); n_buffers + 1 entries
 * @ent_start:	per range k, its entries are @ent[@ent_start[k] ..
 *		@ent_start[k + 1]); @n_cuts + 1 entries
 * @ent:	node | kind << MCP_DEP_SHIFT, each range's in node order
 * @in_start:	per node b, the nodes it waits for are
 *		@in[@in_start[b] .. @in_start[b + 1]), with repeats;
 *		n_nodes + 1 entries
 * @in:		NULL while counting the edges
 * @in_fill:	per node, the next free entry of its @in
 * @steps:	loop steps so far, for mcp_graph_yield()
 */
struct mcp_graph_deps {
	const struct mcp_graph *graph;
	const struct mcp_graph_masks *masks;
	struct mcp_graph_cut *cuts;
	u32 n_cuts;
	u32 buf_cuts[MCP_GRAPH_MAX_BUFFERS + 1];
	u32 *ent_start;
	u32 *ent;
	u32 *in_start;
	u32 *in;
	u32 *in_fill;
	u64 steps;
};

/*
 * Every 1024 steps of a long loop: yield, and give up for a fatal signal
 * (a graph of max_nodes nodes must not hold the CPU or a dying task).
 */
static int mcp_graph_yield(u64 *steps)
{
	if (++*steps % 1024)
		return 0;
	cond_resched();
	return fatal_signal_pending(current) ? -EINTR : 0;
}

static int mcp_graph_cut_cmp(const void *a, const void *b)
{
	const struct mcp_graph_cut *ca = a, *cb = b;

	if (ca->buffer != cb->buffer)
		return ca->buffer < cb->buffer ? -1 : 1;
	if (ca->offset != cb->offset)
		return ca->offset < cb->offset ? -1 : 1;
	return 0;
}

/*
 * The uses of node @i, each once: its tensors and what it does to them
 * (an in-place node's in0 is its out0).  Rule 4g holds: no output
 * overlaps another use of the same node, but for that one.
 */
static u32 mcp_graph_node_uses(const struct mcp_graph_deps *d, u32 i,
			       u32 *tensors, u32 *kinds)
{
	const struct mcp_graph_node *n = &d->graph->nodes[i];
	bool inplace = d->masks[i].inplace;
	u32 k, m = 0;

	for (k = 0; k < n->n_outputs; k++) {
		tensors[m] = n->outputs[k];
		kinds[m++] = !k && inplace ? MCP_DEP_INPLACE : MCP_DEP_WRITE;
	}
	for (k = inplace ? 1 : 0; k < n->n_inputs; k++) {
		tensors[m] = n->inputs[k];
		kinds[m++] = MCP_DEP_READ;
	}
	return m;
}

static void mcp_graph_add_cut(struct mcp_graph_deps *d, u32 buffer,
			      u64 offset)
{
	d->cuts[d->n_cuts].buffer = buffer;
	d->cuts[d->n_cuts++].offset = offset;
}

/* The cuts: 2 per output, sorted (O(outputs) entries), then unique. */
static int mcp_graph_cuts(struct mcp_graph_deps *d)
{
	const struct mcp_graph *graph = d->graph;
	u32 i, k, m, n_out = 0;

	for (i = 0; i < graph->hdr.n_nodes; i++)
		n_out += graph->nodes[i].n_outputs;
	d->cuts = kvmalloc_array(max(2 * n_out, 1U), sizeof(*d->cuts),
				 GFP_KERNEL_ACCOUNT);
	if (!d->cuts)
		return -ENOMEM;
	for (i = 0; i < graph->hdr.n_nodes; i++) {
		const struct mcp_graph_node *n = &graph->nodes[i];

		for (k = 0; k < n->n_outputs; k++) {
			const struct mcp_graph_tensor *t =
				&graph->tensors[n->outputs[k]];

			mcp_graph_add_cut(d, t->buffer, t->offset);
			mcp_graph_add_cut(d, t->buffer, t->offset +
					  graph->tensor_bytes[n->outputs[k]]);
		}
	}
	sort(d->cuts, d->n_cuts, sizeof(*d->cuts), mcp_graph_cut_cmp, NULL);
	for (i = 0, m = 0; i < d->n_cuts; i++)
		if (!m || mcp_graph_cut_cmp(&d->cuts[m - 1], &d->cuts[i]))
			d->cuts[m++] = d->cuts[i];
	d->n_cuts = m;
	for (i = 0, k = 0; k <= graph->hdr.n_buffers; k++) {
		while (i < m && d->cuts[i].buffer < k)
			i++;
		d->buf_cuts[k] = i;
	}
	return 0;
}

/* The first of @cuts[@lo .. @hi) at or after @offset, else @hi. */
static u32 mcp_graph_cut_at(const struct mcp_graph_cut *cuts, u32 lo, u32 hi,
			    u64 offset)
{
	while (lo < hi) {
		u32 mid = lo + (hi - lo) / 2;

		if (cuts[mid].offset < offset)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* The ranges [*first, *last) tensor @t overlaps. */
static void mcp_graph_use_ranges(const struct mcp_graph_deps *d, u32 t,
				 u32 *first, u32 *last)
{
	const struct mcp_graph_tensor *ts = &d->graph->tensors[t];
	u32 lo = d->buf_cuts[ts->buffer], hi = d->buf_cuts[ts->buffer + 1];
	u64 start = ts->offset, end = start + d->graph->tensor_bytes[t];
	u32 a, b;

	*first = 0;
	*last = 0;
	if (lo == hi)
		return;
	/* The last cut at or before start; tensors end inside u64. */
	a = mcp_graph_cut_at(d->cuts, lo, hi, start + 1);
	a = a > lo ? a - 1 : lo;
	b = min(mcp_graph_cut_at(d->cuts, lo, hi, end), hi - 1);
	*first = a;
	*last = max(a, b);
}

/*
 * Each range's entries, in node order: counted first (against the
 * max_dep_work knob), then filled node by node.
 */
static int mcp_graph_ranges(struct mcp_graph_deps *d,
			    struct mcp_graph_err *err)
{
	u64 work = 0, cap = READ_ONCE(mcp_graph_knobs.max_dep_work);
	u32 tensors[MCP_GRAPH_MAX_INPUTS + MCP_GRAPH_MAX_OUTPUTS];
	u32 kinds[MCP_GRAPH_MAX_INPUTS + MCP_GRAPH_MAX_OUTPUTS];
	u32 i, k, u, n_uses, first, last, *fill;
	int ret = 0;

	d->ent_start = kvcalloc(d->n_cuts + 1, sizeof(u32), GFP_KERNEL_ACCOUNT);
	if (!d->ent_start)
		return -ENOMEM;
	for (i = 0; i < d->graph->hdr.n_nodes; i++) {
		n_uses = mcp_graph_node_uses(d, i, tensors, kinds);
		for (u = 0; u < n_uses; u++) {
			mcp_graph_use_ranges(d, tensors[u], &first, &last);
			work += last - first;
			if (work > cap)
				return mcp_graph_fail(err, MCP_GRAPH_ERR_LIMIT,
						      MCP_GRAPH_AT_HEADER, 0);
			for (k = first; k < last; k++)
				d->ent_start[k + 1]++;
		}
		ret = mcp_graph_yield(&d->steps);
		if (ret)
			return ret;
	}
	for (k = 0; k < d->n_cuts; k++)
		d->ent_start[k + 1] += d->ent_start[k];

	d->ent = kvmalloc_array(max_t(u64, work, 1), sizeof(u32),
				GFP_KERNEL_ACCOUNT);
	fill = kvmalloc_array(max(d->n_cuts, 1U), sizeof(u32),
			      GFP_KERNEL_ACCOUNT);
	if (!d->ent || !fill) {
		kvfree(fill);
		return -ENOMEM;
	}
	memcpy(fill, d->ent_start, d->n_cuts * sizeof(u32));
	for (i = 0; i < d->graph->hdr.n_nodes; i++) {
		n_uses = mcp_graph_node_uses(d, i, tensors, kinds);
		for (u = 0; u < n_uses; u++) {
			mcp_graph_use_ranges(d, tensors[u], &first, &last);
			for (k = first; k < last; k++)
				d->ent[fill[k]++] = i | kinds[u] << MCP_DEP_SHIFT;
		}
		ret = mcp_graph_yield(&d->steps);
		if (ret)
			break;
	}
	kvfree(fill);
	return ret;
}

/* 5. Two nodes writing the same bytes, neither of them in place */
static int mcp_graph_check_writers(struct mcp_graph_deps *d,
				   struct mcp_graph_err *err)
{
	u32 bad = MCP_DEP_NONE, k, e, w;
	int ret;

	for (k = 0; k < d->n_cuts; k++) {
		w = MCP_DEP_NONE;
		for (e = d->ent_start[k]; e < d->ent_start[k + 1]; e++) {
			if (MCP_DEP_KIND(d->ent[e]) != MCP_DEP_WRITE)
				continue;
			if (w == MCP_DEP_NONE) {
				w = MCP_DEP_NODE(d->ent[e]);
			} else if (MCP_DEP_NODE(d->ent[e]) != w) {
				bad = min(bad, MCP_DEP_NODE(d->ent[e]));
				break;
			}
		}
		ret = mcp_graph_yield(&d->steps);
		if (ret)
			return ret;
	}
	if (bad != MCP_DEP_NONE)
		return mcp_graph_fail(err, MCP_GRAPH_ERR_WRITERS,
				      MCP_GRAPH_AT_NODE, bad);
	return 0;
}

/* Edge @from -> @to: counted, or stored once counted. */
static void mcp_graph_dep_add(struct mcp_graph_deps *d, u32 from, u32 to)
{
	if (d->in)
		d->in[d->in_fill[to]++] = from;
	else
		d->in_start[to + 1]++;
}

/* The rule's edges between @w, the writer of a range, and reader @r. */
static void mcp_graph_dep_pair(struct mcp_graph_deps *d, u32 w, u32 r)
{
	u32 a = min(w, r), b = max(w, r);
	unsigned int edges = mcp_graph_edges(d->graph, d->masks, a, b);

	if (edges & 1)
		mcp_graph_dep_add(d, a, b);
	if (edges & 2)
		mcp_graph_dep_add(d, b, a);
}

/* The edges range @k gives (see the sweep's comment). */
static int mcp_graph_range_edges(struct mcp_graph_deps *d, u32 k)
{
	u32 first = d->ent_start[k], end = d->ent_start[k + 1];
	u32 w = MCP_DEP_NONE, last = MCP_DEP_NONE, since = first;
	u32 e, j, x;
	int ret;

	for (e = first; e < end; e++)
		if (MCP_DEP_KIND(d->ent[e]) == MCP_DEP_WRITE) {
			w = MCP_DEP_NODE(d->ent[e]);
			break;
		}
	for (e = first; e < end; e++) {
		x = MCP_DEP_NODE(d->ent[e]);
		/* A node's entries are next to each other. */
		if (e > first && MCP_DEP_NODE(d->ent[e - 1]) == x)
			continue;
		if (last != MCP_DEP_NONE)
			mcp_graph_dep_add(d, last, x);
		if (MCP_DEP_KIND(d->ent[e]) == MCP_DEP_INPLACE) {
			for (j = since; j < e; j++)
				if (j == since || MCP_DEP_NODE(d->ent[j - 1]) !=
						  MCP_DEP_NODE(d->ent[j]))
					mcp_graph_dep_add(d,
							  MCP_DEP_NODE(d->ent[j]),
							  x);
			last = x;
			since = e + 1;
		} else if (MCP_DEP_KIND(d->ent[e]) == MCP_DEP_READ &&
			   w != MCP_DEP_NONE && w != x) {
			mcp_graph_dep_pair(d, w, x);
		}
		ret = mcp_graph_yield(&d->steps);
		if (ret)
			return ret;
	}
	return 0;
}

/* Per node, the nodes it waits for (with repeats): counted, then stored. */
static int mcp_graph_dep_lists(struct mcp_graph_deps *d)
{
	u32 n_nodes = d->graph->hdr.n_nodes, k, b;
	int ret;

	d->in_start = kvcalloc(n_nodes + 1, sizeof(u32), GFP_KERNEL_ACCOUNT);
	d->in_fill = kvmalloc_array(n_nodes, sizeof(u32), GFP_KERNEL_ACCOUNT);
	if (!d->in_start || !d->in_fill)
		return -ENOMEM;
	for (k = 0; k < d->n_cuts; k++) {
		ret = mcp_graph_range_edges(d, k);
		if (ret)
			return ret;
	}
	/* At most 4 per entry, and entries are bounded by max_dep_work. */
	for (b = 0; b < n_nodes; b++)
		d->in_start[b + 1] += d->in_start[b];
	d->in = kvmalloc_array(max(d->in_start[n_nodes], 1U), sizeof(u32),
			       GFP_KERNEL_ACCOUNT);
	if (!d->in)
		return -ENOMEM;
	memcpy(d->in_fill, d->in_start, n_nodes * sizeof(u32));
	for (k = 0; k < d->n_cuts; k++) {
		ret = mcp_graph_range_edges(d, k);
		if (ret)
			return ret;
	}
	return 0;
}

/*
 * The edges in CSR form without repeats, each node's successors in
 * ascending order: walking the waiting nodes b in order, every node a
 * that b waits for gets b once (@mark[a] is the last b a got).
 */
static int mcp_graph_build_csr(struct mcp_graph *graph,
			       struct mcp_graph_deps *d)
{
	u32 n_nodes = graph->hdr.n_nodes, a, b, i, pass, *mark, *fill;
	int ret = 0;

	graph->succ_start = kvcalloc(n_nodes + 1, sizeof(u32),
				     GFP_KERNEL_ACCOUNT);
	graph->n_deps = kvcalloc(n_nodes, sizeof(u32), GFP_KERNEL_ACCOUNT);
	mark = kvmalloc_array(n_nodes, sizeof(u32), GFP_KERNEL_ACCOUNT);
	/* The sweep's per-node fill array is free again. */
	fill = d->in_fill;
	if (!graph->succ_start || !graph->n_deps || !mark) {
		ret = -ENOMEM;
		goto out_free;
	}
	for (pass = 0; pass < 2; pass++) {
		if (pass) {
			for (a = 0; a < n_nodes; a++)
				graph->succ_start[a + 1] += graph->succ_start[a];
			graph->succ = kvmalloc_array(max(graph->succ_start[n_nodes], 1U),
						     sizeof(u32),
						     GFP_KERNEL_ACCOUNT);
			if (!graph->succ) {
				ret = -ENOMEM;
				goto out_free;
			}
			memcpy(fill, graph->succ_start, n_nodes * sizeof(u32));
		}
		memset(mark, 0xff, n_nodes * sizeof(u32));
		for (b = 0; b < n_nodes; b++) {
			for (i = d->in_start[b]; i < d->in_start[b + 1]; i++) {
				a = d->in[i];
				if (mark[a] == b)
					continue;
				mark[a] = b;
				if (pass) {
					graph->succ[fill[a]++] = b;
				} else {
					graph->succ_start[a + 1]++;
					graph->n_deps[b]++;
				}
			}
			ret = mcp_graph_yield(&d->steps);
			if (ret)
				goto out_free;
		}
	}
out_free:
	kvfree(mark);
	return ret;
}

/* 6. Kahn's algorithm: the lowest node it cannot schedule is on a cycle. */
static int mcp_graph_check_cycle(struct mcp_graph *graph, u64 *steps,
				 struct mcp_graph_err *err)
{
	u32 n_nodes = graph->hdr.n_nodes, a, i, head = 0, tail = 0;
	u32 *queue, *left;
	int ret = 0;

	queue = kvmalloc_array(n_nodes, sizeof(u32), GFP_KERNEL_ACCOUNT);
	left = kvmalloc_array(n_nodes, sizeof(u32), GFP_KERNEL_ACCOUNT);
	if (!queue || !left) {
		ret = -ENOMEM;
		goto out_free;
	}
	memcpy(left, graph->n_deps, n_nodes * sizeof(u32));
	for (a = 0; a < n_nodes; a++)
		if (!left[a])
			queue[tail++] = a;
	while (head < tail) {
		a = queue[head++];
		for (i = graph->succ_start[a]; i < graph->succ_start[a + 1]; i++)
			if (!--left[graph->succ[i]])
				queue[tail++] = graph->succ[i];
		ret = mcp_graph_yield(steps);
		if (ret)
			goto out_free;
	}
	if (tail < n_nodes) {
		for (a = 0; a < n_nodes && !left[a]; a++)
			;
		ret = mcp_graph_fail(err, MCP_GRAPH_ERR_CYCLE,
				     MCP_GRAPH_AT_NODE, a);
	}
out_free:
	kvfree(left);
	kvfree(queue);
	return ret;
}

/* 5 and 6: the writers rule, the schedule (CSR) and the cycle check. */
static int mcp_graph_build_schedule(struct mcp_graph *graph,
				    const struct mcp_graph_masks *masks,
				    struct mcp_graph_err *err)
{
	struct mcp_graph_deps d = { .graph = graph, .masks = masks };
	int ret;

	ret = mcp_graph_cuts(&d);
	if (!ret)
		ret = mcp_graph_ranges(&d, err);
	if (!ret)
		ret = mcp_graph_check_writers(&d, err);
	if (!ret)
		ret = mcp_graph_dep_lists(&d);
	kvfree(d.ent);
	kvfree(d.ent_start);
	kvfree(d.cuts);
	if (!ret)
		ret = mcp_graph_build_csr(graph, &d);
	kvfree(d.in);
	kvfree(d.in_fill);
	kvfree(d.in_start);
	if (!ret)
		ret = mcp_graph_check_cycle(graph, &d.steps, err);
	return ret;
}

/*
 * mcp_graph.roots and .chain_next (the rule: uapi mcp.h), from the
 * schedule: what each execution would otherwise find in a loop over
 * every node.
 */
static int mcp_graph_build_links(struct mcp_graph *graph)
{
	u32 n_nodes = graph->hdr.n_nodes;
	u32 a, b;

	graph->roots = kvmalloc_array(n_nodes, sizeof(u32),
				      GFP_KERNEL_ACCOUNT);
	graph->chain_next = kvmalloc_array(n_nodes, sizeof(u32),
					   GFP_KERNEL_ACCOUNT);
	if (!graph->roots || !graph->chain_next)
		return -ENOMEM;
	for (a = 0; a < n_nodes; a++) {
		if (!graph->n_deps[a])
			graph->roots[graph->n_roots++] = a;
		graph->chain_next[a] = MCP_GRAPH_NO_CHAIN;
		if (graph->succ_start[a + 1] - graph->succ_start[a] != 1 ||
		    graph->nodes[a].engine != MCP_GRAPH_ENGINE_WORKER)
			continue;
		/* Whether b waits for another node too is per execution. */
		b = graph->succ[graph->succ_start[a]];
		if (graph->nodes[b].engine == MCP_GRAPH_ENGINE_WORKER)
			graph->chain_next[a] = b;
	}
	return 0;
}

/* Everything after the header: buffers, tensors, nodes, order. */
static int mcp_graph_validate(struct mcp_graph *graph, struct mcp_ctx *ctx,
			      struct mcp_graph_err *err)
{
	struct mcp_graph_masks *masks;
	int ret;

	ret = mcp_graph_check_buffers(graph, ctx, err);
	if (ret)
		return ret;
	ret = mcp_graph_check_tensors(graph, err);
	if (ret)
		return ret;
	ret = mcp_graph_check_nodes(graph, mcp_dma_has_device_engine(ctx),
				    err);
	if (ret)
		return ret;

	masks = kvmalloc_array(graph->hdr.n_nodes, sizeof(*masks),
			       GFP_KERNEL_ACCOUNT);
	if (!masks)
		return -ENOMEM;
	mcp_graph_fill_masks(graph, masks);
	ret = mcp_graph_build_schedule(graph, masks, err);
	if (!ret)
		ret = mcp_graph_build_links(graph);
	kvfree(masks);
	return ret;
}

/* Graph objects */

static void mcp_graph_free(struct mcp_graph *graph)
{
	u32 i;

	if (graph->bos)
		for (i = 0; i < graph->hdr.n_buffers; i++)
			if (graph->bos[i])
				mcp_bo_put(graph->bos[i]);
	kfree(graph->bos);
	kfree(graph->handles);
	kvfree(graph->spare_jobs);
	kvfree(graph->spare_rec);
	kvfree(graph->chain_next);
	kvfree(graph->roots);
	kvfree(graph->succ);
	kvfree(graph->succ_start);
	kvfree(graph->n_deps);
	kvfree(graph->tensor_bytes);
	kvfree(graph->raw);
	kfree(graph);
	mcp_counter_dec(MCP_CTR_GRAPH_OBJECTS);
}

static void mcp_graph_release(struct kref *ref)
{
	mcp_graph_free(container_of(ref, struct mcp_graph, ref));
}

void mcp_graph_get(struct mcp_graph *graph)
{
	kref_get(&graph->ref);
}

/* May sleep: the last reference drops BO references. */
void mcp_graph_put(struct mcp_graph *graph)
{
	kref_put(&graph->ref, mcp_graph_release);
}

struct mcp_graph *mcp_graph_lookup(struct mcp_ctx *ctx, u32 handle)
{
	struct mcp_graph *graph;

	mutex_lock(&ctx->lock);
	graph = xa_load(&ctx->graphs, handle);
	if (graph)
		mcp_graph_get(graph);
	mutex_unlock(&ctx->lock);
	return graph;
}

static struct mcp_graph *mcp_graph_alloc(const struct mcp_graph_header *hdr)
{
	struct mcp_graph *graph;
	u8 *p;

	graph = kzalloc(sizeof(*graph), GFP_KERNEL_ACCOUNT);
	if (!graph)
		return NULL;
	kref_init(&graph->ref);
	mcp_counter_inc(MCP_CTR_GRAPH_OBJECTS);
	graph->hdr = *hdr;

	/* Bounded by the knobs: the header was checked. */
	graph->raw = kvmalloc(hdr->total_len, GFP_KERNEL_ACCOUNT);
	graph->tensor_bytes = kvcalloc(hdr->n_tensors, sizeof(u64),
				       GFP_KERNEL_ACCOUNT);
	graph->bos = kcalloc(hdr->n_buffers, sizeof(*graph->bos),
			     GFP_KERNEL_ACCOUNT);
	graph->handles = kcalloc(hdr->n_buffers, sizeof(u32),
				 GFP_KERNEL_ACCOUNT);
	if (!graph->raw || !graph->tensor_bytes || !graph->bos ||
	    !graph->handles) {
		mcp_graph_free(graph);
		return NULL;
	}

	p = graph->raw + MCP_GRAPH_HEADER_SIZE;
	graph->buffers = (struct mcp_graph_buffer *)p;
	p += hdr->n_buffers * sizeof(struct mcp_graph_buffer);
	graph->tensors = (struct mcp_graph_tensor *)p;
	p += (size_t)hdr->n_tensors * sizeof(struct mcp_graph_tensor);
	graph->nodes = (struct mcp_graph_node *)p;
	p += (size_t)hdr->n_nodes * sizeof(struct mcp_graph_node);
	graph->blob = p;
	return graph;
}

/*
 * Copies the graph in (a version 2 one decoded into its version 1 image);
 * the header is checked again on the kernel copy.
 */
static int mcp_graph_copy_in(struct mcp_graph *graph,
			     const struct mcp_graph_create *arg,
			     const struct mcp_graph_header *given,
			     struct mcp_graph_err *err)
{
	int ret;

	if (given->version == MCP_GRAPH_VERSION_COMPACT) {
		ret = mcp_graph_decode_user(graph, given,
					    u64_to_user_ptr(arg->graph), err);
		if (ret)
			return ret;
	} else if (copy_from_user(graph->raw, u64_to_user_ptr(arg->graph),
				  graph->hdr.total_len)) {
		return -EFAULT;
	}
	if (copy_from_user(graph->handles, u64_to_user_ptr(arg->handles),
			   graph->hdr.n_buffers * sizeof(u32)))
		return -EFAULT;
	/* Changed since the first read: the sizes no longer hold. */
	if (memcmp(graph->raw, &graph->hdr, MCP_GRAPH_HEADER_SIZE))
		return mcp_graph_fail(err, MCP_GRAPH_ERR_HEADER,
				      MCP_GRAPH_AT_HEADER, 0);
	return 0;
}

int mcp_ioctl_graph_create(struct file *file, void *karg)
{
	struct mcp_graph_create_karg *gk = karg;
	struct mcp_graph_create *arg = &gk->arg;
	struct mcp_ctx *ctx = file->private_data;
	struct mcp_graph_err err = { };
	struct mcp_graph_header hdr, fixed;
	struct mcp_graph *graph;
	int ret;

	arg->handle = 0;
	arg->error_reason = 0;
	arg->error_kind = 0;
	arg->error_index = 0;
	gk->ctx = NULL;
	gk->graph = NULL;
	if (arg->flags || arg->reserved)
		return -EINVAL;
	if (ctx->mdev && READ_ONCE(ctx->mdev->gone))
		return -ENODEV;

	if (arg->graph_len < MCP_GRAPH_HEADER_SIZE) {
		ret = mcp_graph_fail(&err, MCP_GRAPH_ERR_HEADER,
				     MCP_GRAPH_AT_HEADER, 0);
		goto out_err;
	}
	if (copy_from_user(&hdr, u64_to_user_ptr(arg->graph), sizeof(hdr)))
		return -EFAULT;
	ret = mcp_graph_check_header(&hdr, arg->graph_len, arg->n_handles,
				     &err);
	if (ret)
		goto out_err;

	/* The kernel keeps and validates the version 1 image. */
	fixed = hdr;
	fixed.version = MCP_GRAPH_VERSION;
	fixed.total_len = mcp_graph_fixed_len(&hdr);
	graph = mcp_graph_alloc(&fixed);
	if (!graph)
		return -ENOMEM;
	ret = mcp_graph_copy_in(graph, arg, &hdr, &err);
	if (ret)
		goto err_put_graph;
	ret = mcp_graph_validate(graph, ctx, &err);
	if (ret)
		goto err_put_graph;

	mutex_lock(&ctx->lock);
	ret = xa_alloc_cyclic(&ctx->graphs, &graph->handle, NULL,
			      XA_LIMIT(1, MCP_GRAPH_HANDLE_MAX),
			      &ctx->next_graph, GFP_KERNEL_ACCOUNT);
	mutex_unlock(&ctx->lock);
	if (ret < 0) {
		ret = ret == -EBUSY ? -ENOSPC : ret;
		goto err_put_graph;
	}
	arg->handle = graph->handle;
	gk->ctx = ctx;
	gk->graph = graph;
	return 0;

err_put_graph:
	mcp_graph_put(graph);
out_err:
	arg->error_reason = err.reason;
	arg->error_kind = err.kind;
	arg->error_index = err.index;
	return ret;
}

/* After the copy back: store the graph under its handle, or drop both. */
void mcp_ioctl_graph_create_publish(void *karg, bool copied)
{
	struct mcp_graph_create_karg *gk = karg;
	struct mcp_ctx *ctx = gk->ctx;

	mutex_lock(&ctx->lock);
	if (copied)
		/* Replacing a reserved entry allocates nothing. */
		xa_store(&ctx->graphs, gk->graph->handle, gk->graph,
			 GFP_KERNEL);
	else
		xa_erase(&ctx->graphs, gk->graph->handle);
	mutex_unlock(&ctx->lock);

	if (!copied)
		mcp_graph_put(gk->graph);
}

int mcp_ioctl_graph_destroy(struct file *file, void *karg)
{
	struct mcp_ctx *ctx = file->private_data;
	struct mcp_graph_destroy *arg = karg;
	struct mcp_graph *graph;

	if (arg->flags || arg->reserved)
		return -EINVAL;

	mutex_lock(&ctx->lock);
	graph = xa_load(&ctx->graphs, arg->handle);
	if (graph)
		xa_erase(&ctx->graphs, arg->handle);
	mutex_unlock(&ctx->lock);

	if (!graph)
		return -ENOENT;
	mcp_graph_put(graph);
	return 0;
}

void mcp_graph_ctx_fini(struct mcp_ctx *ctx)
{
	struct mcp_graph *graph;
	unsigned long handle;

	/* Nobody else can reach the table; reserved slots hold no graph. */
	xa_for_each(&ctx->graphs, handle, graph)
		mcp_graph_put(graph);
	xa_destroy(&ctx->graphs);
}

/* Knobs: /sys/class/misc/mcp/graph/ */

static u32 *mcp_graph_knob(const char *name, u32 *min, u32 *max)
{
	*min = 1;
	if (!strcmp(name, "max_nodes")) {
		*max = MCP_GRAPH_NODES_CAP;
		return &mcp_graph_knobs.max_nodes;
	}
	if (!strcmp(name, "max_tensors")) {
		*max = MCP_GRAPH_TENSORS_CAP;
		return &mcp_graph_knobs.max_tensors;
	}
	if (!strcmp(name, "max_blob")) {
		*min = 0;
		*max = MCP_GRAPH_BLOB_CAP;
		return &mcp_graph_knobs.max_blob;
	}
	if (!strcmp(name, "exec_timeout_ms")) {
		*max = MCP_GRAPH_TIMEOUT_CAP;
		return &mcp_graph_knobs.exec_timeout_ms;
	}
	if (!strcmp(name, "exec_timeout_max_ms")) {
		*max = MCP_GRAPH_TIMEOUT_CAP;
		return &mcp_graph_knobs.exec_timeout_max_ms;
	}
	if (!strcmp(name, "exec_history_len")) {
		*max = MCP_GRAPH_HISTORY_CAP;
		return &mcp_graph_knobs.exec_history_len;
	}
	if (!strcmp(name, "max_execs_in_flight")) {
		*max = MCP_GRAPH_EXECS_CAP;
		return &mcp_graph_knobs.max_execs_in_flight;
	}
	if (!strcmp(name, "max_dep_work")) {
		*max = MCP_GRAPH_DEP_WORK_CAP;
		return &mcp_graph_knobs.max_dep_work;
	}
	return NULL;
}

static ssize_t mcp_graph_knob_show(struct device *dev,
				   struct device_attribute *attr, char *buf)
{
	u32 min, max, *val = mcp_graph_knob(attr->attr.name, &min, &max);

	return val ? sysfs_emit(buf, "%u\n", READ_ONCE(*val)) : -EINVAL;
}

/* Out of range: -EINVAL, the value is kept. */
static ssize_t mcp_graph_knob_store(struct device *dev,
				    struct device_attribute *attr,
				    const char *buf, size_t count)
{
	u32 min, max, val, *knob = mcp_graph_knob(attr->attr.name, &min, &max);

	if (!knob || kstrtou32(buf, 0, &val) || val < min || val > max)
		return -EINVAL;
	WRITE_ONCE(*knob, val);
	return count;
}

#define MCP_GRAPH_KNOB_ATTR(_name)					\
static struct device_attribute dev_attr_graph_##_name =			\
	__ATTR(_name, 0644, mcp_graph_knob_show, mcp_graph_knob_store)

MCP_GRAPH_KNOB_ATTR(max_nodes);
MCP_GRAPH_KNOB_ATTR(max_tensors);
MCP_GRAPH_KNOB_ATTR(max_blob);
MCP_GRAPH_KNOB_ATTR(exec_timeout_ms);
MCP_GRAPH_KNOB_ATTR(exec_timeout_max_ms);
MCP_GRAPH_KNOB_ATTR(exec_history_len);
MCP_GRAPH_KNOB_ATTR(max_execs_in_flight);
MCP_GRAPH_KNOB_ATTR(max_dep_work);

static struct attribute *mcp_graph_attrs[] = {
	&dev_attr_graph_max_nodes.attr,
	&dev_attr_graph_max_tensors.attr,
	&dev_attr_graph_max_blob.attr,
	&dev_attr_graph_exec_timeout_ms.attr,
	&dev_attr_graph_exec_timeout_max_ms.attr,
	&dev_attr_graph_exec_history_len.attr,
	&dev_attr_graph_max_execs_in_flight.attr,
	&dev_attr_graph_max_dep_work.attr,
	NULL
};

const struct attribute_group mcp_graph_attr_group = {
	.name = "graph",
	.attrs = mcp_graph_attrs,
};
