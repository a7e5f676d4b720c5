// SPDX-License-Identifier: GPL-2.0
/*
 * MCP (Model Control Protocol): the compact graph encoding, format version
 * 2 (Documentation/graphs.rst, "Compact encoding").  GRAPH_CREATE copies
 * a version 2 graph in, decodes its varint tables into the fixed version 1
 * tables of the graph's kernel copy and then validates those like any
 * version 1 graph: the same rules, so the same verdicts.
 *
 * Every loop is bounded by the header's counts, which mcp_graph.c checked
 * against the knobs and against the tables' length (a record takes at
 * least MCP_GRAPH_COMPACT_MIN_* bytes) before anything was allocated.
 */

#include <linux/kernel.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/uaccess.h>

#include "mcp_graph.h"

struct mcp_graph_reader {
	const u8 *p;
	const u8 *end;
};

/*
 * One unsigned LEB128 varint of at most @max_bytes bytes and at most
 * @max_val into *@val; false when it runs past the end, is longer, or
 * its value does not fit.
 */
static bool mcp_graph_varint(struct mcp_graph_reader *r,
			     unsigned int max_bytes, u64 max_val, u64 *val)
{
	u64 v = 0;
	unsigned int i;

	for (i = 0; i < max_bytes; i++) {
		u8 b;

		if (r->p == r->end)
			return false;
		b = *r->p++;
		/* The tenth byte holds bit 63 only. */
		if (i == 9 && b > 1)
			return false;
		v |= (u64)(b & 0x7f) << (7 * i);
		if (!(b & 0x80)) {
			if (v > max_val)
				return false;
			*val = v;
			return true;
		}
	}
	return false;
}

static bool mcp_graph_get_u8(struct mcp_graph_reader *r, u8 *field)
{
	u64 v;

	if (!mcp_graph_varint(r, 2, U8_MAX, &v))
		return false;
	*field = v;
	return true;
}

static bool mcp_graph_get_u16(struct mcp_graph_reader *r, u16 *field)
{
	u64 v;

	if (!mcp_graph_varint(r, 3, U16_MAX, &v))
		return false;
	*field = v;
	return true;
}

static bool mcp_graph_get_u32(struct mcp_graph_reader *r, u32 *field)
{
	u64 v;

	if (!mcp_graph_varint(r, 5, U32_MAX, &v))
		return false;
	*field = v;
	return true;
}

static bool mcp_graph_get_u64(struct mcp_graph_reader *r, u64 *field)
{
	return mcp_graph_varint(r, 10, U64_MAX, field);
}

static bool mcp_graph_decode_buffer(struct mcp_graph_reader *r,
				    struct mcp_graph_buffer *b)
{
	memset(b, 0, sizeof(*b));
	return mcp_graph_get_u64(r, &b->length) &&
	       mcp_graph_get_u32(r, &b->flags) &&
	       mcp_graph_get_u32(r, &b->name_offset) &&
	       mcp_graph_get_u32(r, &b->name_len) &&
	       mcp_graph_get_u32(r, &b->init_offset) &&
	       mcp_graph_get_u32(r, &b->init_len);
}

static bool mcp_graph_decode_tensor(struct mcp_graph_reader *r,
				    struct mcp_graph_tensor *t)
{
	unsigned int k;

	memset(t, 0, sizeof(*t));
	if (!mcp_graph_get_u32(r, &t->buffer) ||
	    !mcp_graph_get_u8(r, &t->dtype) ||
	    !mcp_graph_get_u8(r, &t->rank) ||
	    t->rank > MCP_GRAPH_MAX_RANK ||
	    !mcp_graph_get_u8(r, &t->layout) ||
	    !mcp_graph_get_u8(r, &t->flags) ||
	    !mcp_graph_get_u64(r, &t->offset))
		return false;
	for (k = 0; k < t->rank; k++)
		if (!mcp_graph_get_u32(r, &t->dims[k]))
			return false;
	return mcp_graph_get_u32(r, &t->name_offset) &&
	       mcp_graph_get_u32(r, &t->name_len);
}

static bool mcp_graph_decode_node(struct mcp_graph_reader *r,
				  struct mcp_graph_node *n)
{
	unsigned int k;

	memset(n, 0, sizeof(*n));
	if (!mcp_graph_get_u16(r, &n->op) ||
	    !mcp_graph_get_u8(r, &n->engine) ||
	    !mcp_graph_get_u8(r, &n->flags) ||
	    !mcp_graph_get_u8(r, &n->n_inputs) ||
	    n->n_inputs > MCP_GRAPH_MAX_INPUTS ||
	    !mcp_graph_get_u8(r, &n->n_outputs) ||
	    n->n_outputs > MCP_GRAPH_MAX_OUTPUTS)
		return false;
	for (k = 0; k < n->n_inputs; k++)
		if (!mcp_graph_get_u32(r, &n->inputs[k]))
			return false;
	for (k = 0; k < n->n_outputs; k++)
		if (!mcp_graph_get_u32(r, &n->outputs[k]))
			return false;
	return mcp_graph_get_u32(r, &n->param_offset) &&
	       mcp_graph_get_u32(r, &n->param_len) &&
	       mcp_graph_get_u32(r, &n->name_offset) &&
	       mcp_graph_get_u32(r, &n->name_len);
}

static int mcp_graph_encoding_fail(struct mcp_graph_err *err, u32 kind,
				   u32 index)
{
	err->reason = MCP_GRAPH_ERR_ENCODING;
	err->kind = kind;
	err->index = index;
	return -EINVAL;
}

/* The tables of @graph (counts in graph->hdr) from @len bytes at @tables. */
static int mcp_graph_decode_tables(struct mcp_graph *graph, const u8 *tables,
				   u64 len, struct mcp_graph_err *err)
{
	struct mcp_graph_reader r = { .p = tables, .end = tables + len };
	u32 i;

	for (i = 0; i < graph->hdr.n_buffers; i++)
		if (!mcp_graph_decode_buffer(&r, &graph->buffers[i]))
			return mcp_graph_encoding_fail(err, MCP_GRAPH_AT_BUFFER,
						       i);
	for (i = 0; i < graph->hdr.n_tensors; i++)
		if (!mcp_graph_decode_tensor(&r, &graph->tensors[i]))
			return mcp_graph_encoding_fail(err, MCP_GRAPH_AT_TENSOR,
						       i);
	for (i = 0; i < graph->hdr.n_nodes; i++)
		if (!mcp_graph_decode_node(&r, &graph->nodes[i]))
			return mcp_graph_encoding_fail(err, MCP_GRAPH_AT_NODE,
						       i);
	/* Only zero padding, less than 8 bytes, may follow the last node. */
	if (r.end - r.p >= 8 || memchr_inv(r.p, 0, r.end - r.p))
		return mcp_graph_encoding_fail(err, MCP_GRAPH_AT_HEADER, 0);
	return 0;
}

bool mcp_graph_compact_sizes_ok(const struct mcp_graph_header *h,
				u64 graph_len)
{
	u64 tables, min, max;

	if (h->total_len != graph_len ||
	    h->total_len < sizeof(*h) + (u64)h->blob_len)
		return false;
	tables = h->total_len - sizeof(*h) - h->blob_len;
	/* 32-bit counts times small sizes: no overflow in 64 bits. */
	min = (u64)h->n_buffers * MCP_GRAPH_COMPACT_MIN_BUFFER +
	      (u64)h->n_tensors * MCP_GRAPH_COMPACT_MIN_TENSOR +
	      (u64)h->n_nodes * MCP_GRAPH_COMPACT_MIN_NODE;
	max = (u64)h->n_buffers * MCP_GRAPH_COMPACT_MAX_BUFFER +
	      (u64)h->n_tensors * MCP_GRAPH_COMPACT_MAX_TENSOR +
	      (u64)h->n_nodes * MCP_GRAPH_COMPACT_MAX_NODE + 7;
	return tables % 8 == 0 && tables >= min && tables <= max;
}

int mcp_graph_decode_user(struct mcp_graph *graph,
			  const struct mcp_graph_header *given,
			  const void __user *src, struct mcp_graph_err *err)
{
	u64 tables_len = given->total_len - sizeof(*given) - given->blob_len;
	u8 *compact;
	int ret;

	/* Bounded like the fixed image: the sizes were checked. */
	compact = kvmalloc(given->total_len, GFP_KERNEL_ACCOUNT);
	if (!compact)
		return -ENOMEM;
	if (copy_from_user(compact, src, given->total_len)) {
		ret = -EFAULT;
		goto out_free_compact;
	}
	/* Changed since the first read: the sizes no longer hold. */
	if (memcmp(compact, given, sizeof(*given))) {
		err->reason = MCP_GRAPH_ERR_HEADER;
		err->kind = MCP_GRAPH_AT_HEADER;
		err->index = 0;
		ret = -EINVAL;
		goto out_free_compact;
	}
	ret = mcp_graph_decode_tables(graph, compact + sizeof(*given),
				      tables_len, err);
	if (ret)
		goto out_free_compact;
	memcpy(graph->raw, &graph->hdr, sizeof(graph->hdr));
	memcpy(graph->blob, compact + sizeof(*given) + tables_len,
	       given->blob_len);
out_free_compact:
	kvfree(compact);
	return ret;
}
