/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Malformed (and a few valid) binary graphs with the refusal each must get,
 * shared by the kernel's VM selftest (tests/selftests/mcp_graph_test.c,
 * through MCP_IOC_GRAPH_CREATE) and libmcp's validator test (tests/unit):
 * both implement the same rules, in the same order, so each case names
 * ONE expected (reason, kind, index).  Header-only C11 that also compiles
 * as C++, no libmcp: a graph is built in a struct, then emitted as bytes.
 *
 *	struct mcp_graph_case_graph g;
 *	static uint8_t bytes[MCP_GRAPH_CASE_MAX_BYTES];
 *	size_t len = mcp_graph_case_build(&mcp_graph_cases[i], &g, bytes,
 *					  sizeof(bytes));
 *
 * or mcp_graph_case_build_compact() for the same graph in format version 2
 * (0 when version 2 cannot express the case).
 *
 * len is the byte count to give (graph_len); g.n_buffers and
 * g.buffers[k].length say which BOs to bind.  Cases flagged
 * MCP_GRAPH_CASE_KERNEL_ONLY depend on the kernel's context (no device DMA
 * engine on /dev/mcp) or on the bound BOs: userspace validators skip them.
 */
#ifndef MCP_GRAPH_CASES_H
#define MCP_GRAPH_CASES_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <linux/mcp.h>

#define MCP_GRAPH_CASE_MAX_BUFFERS	64
#define MCP_GRAPH_CASE_MAX_TENSORS	64
#define MCP_GRAPH_CASE_MAX_NODES	64
#define MCP_GRAPH_CASE_MAX_BLOB		4096
#define MCP_GRAPH_CASE_MAX_BYTES					\
	(sizeof(struct mcp_graph_header) +				\
	 MCP_GRAPH_CASE_MAX_BUFFERS * sizeof(struct mcp_graph_buffer) +	\
	 MCP_GRAPH_CASE_MAX_TENSORS * sizeof(struct mcp_graph_tensor) +	\
	 MCP_GRAPH_CASE_MAX_NODES * sizeof(struct mcp_graph_node) +	\
	 MCP_GRAPH_CASE_MAX_BLOB + 64)

/* Expected only from the kernel on /dev/mcp (no device DMA engine). */
#define MCP_GRAPH_CASE_KERNEL_ONLY	(1U << 0)
/*
 * Kernel only: bind buffer error_index to a BO half the buffer's length
 * (the others to BOs of their length).
 */
#define MCP_GRAPH_CASE_SHORT_BO		(1U << 1)
/*
 * The rule broken is a worker operator's (arity, parameters, shapes, or
 * an op of the worker range libmcp does not know): libmcp refuses the
 * graph as listed; a kernel with MCP_FEAT_WORKER_OPS, to which worker
 * ops are opaque, accepts it (nothing else is wrong with it).
 */
#define MCP_GRAPH_CASE_WORKER_RULE	(1U << 2)

/**
 * struct mcp_graph_case_graph - a graph being built
 * @hdr:	the header; counts and total_len are filled at emit unless
 *		@keep_counts / @keep_total
 * @n_buffers:	entries of @buffers emitted (and so on for the others)
 * @blob_len:	bytes of @blob emitted
 * @keep_counts: emit hdr.n_buffers, n_tensors, n_nodes, blob_len as set
 * @keep_total: emit hdr.total_len as set
 * @truncate_to: give only this many bytes (0: all)
 * @extra_bytes: give this many zero bytes past the end
 * @compact:	emit format version 2 (mcp_graph_case_emit_compact())
 * @enc_kind:	with @compact: the varint of field @enc_field (from 1, in
 *		the encoding's field order) of record @enc_index of table
 *		@enc_kind (MCP_GRAPH_AT_*) is @enc_bytes instead (0: none)
 * @enc_index:
 * @enc_field:
 * @enc_bytes:
 * @enc_len:
 * @enc_tail:	bytes written after the last record, before the padding
 * @enc_tail_len:
 * @enc_pad:	the padding byte (0x80 runs the last varint to the end)
 * @enc_misalign: one zero byte after the padding (tables not a multiple
 *		of 8 bytes)
 */
struct mcp_graph_case_graph {
	struct mcp_graph_header hdr;
	struct mcp_graph_buffer buffers[MCP_GRAPH_CASE_MAX_BUFFERS];
	struct mcp_graph_tensor tensors[MCP_GRAPH_CASE_MAX_TENSORS];
	struct mcp_graph_node nodes[MCP_GRAPH_CASE_MAX_NODES];
	uint8_t blob[MCP_GRAPH_CASE_MAX_BLOB];
	uint32_t n_buffers;
	uint32_t n_tensors;
	uint32_t n_nodes;
	uint32_t blob_len;
	int keep_counts;
	int keep_total;
	size_t truncate_to;
	size_t extra_bytes;
	int compact;
	uint32_t enc_kind;
	uint32_t enc_index;
	uint32_t enc_field;
	uint8_t enc_bytes[16];
	uint32_t enc_len;
	uint8_t enc_tail[512];
	uint32_t enc_tail_len;
	uint8_t enc_pad;
	int enc_misalign;
};

/**
 * struct mcp_graph_case - one graph and the verdict on it
 * @name:	unique, for test output
 * @build:	fills the graph (after mcp_graph_case_init())
 * @reason:	enum mcp_graph_error; MCP_GRAPH_OK for a valid graph
 * @kind:	enum mcp_graph_error_kind (0 when valid)
 * @index:	the error index (0 when valid)
 * @flags:	MCP_GRAPH_CASE_*
 */
struct mcp_graph_case {
	const char *name;
	void (*build)(struct mcp_graph_case_graph *g);
	uint32_t reason;
	uint32_t kind;
	uint32_t index;
	uint32_t flags;
};

/* ---- the builder ---------------------------------------------------- */

static inline uint32_t mcp_graph_case_f32(float f)
{
	uint32_t bits;

	memcpy(&bits, &f, sizeof(bits));
	return bits;
}

static inline void mcp_graph_case_init(struct mcp_graph_case_graph *g)
{
	memset(g, 0, sizeof(*g));
	g->hdr.magic = MCP_GRAPH_MAGIC;
	g->hdr.version = MCP_GRAPH_VERSION;
	g->hdr.header_size = sizeof(struct mcp_graph_header);
}

static inline uint32_t mcp_graph_case_buffer(struct mcp_graph_case_graph *g,
					     uint64_t length, uint32_t flags)
{
	struct mcp_graph_buffer *b = &g->buffers[g->n_buffers];

	b->length = length;
	b->flags = flags;
	return g->n_buffers++;
}

/* A DENSE tensor; the dims follow as @rank unsigned ints. */
static inline uint32_t mcp_graph_case_tensor(struct mcp_graph_case_graph *g,
					     uint32_t buffer, uint8_t dtype,
					     uint64_t offset, unsigned int rank, ...)
{
	struct mcp_graph_tensor *t = &g->tensors[g->n_tensors];
	va_list ap;
	unsigned int k;

	t->buffer = buffer;
	t->dtype = dtype;
	t->rank = (uint8_t)rank;
	t->layout = MCP_LAYOUT_DENSE;
	t->offset = offset;
	va_start(ap, rank);
	for (k = 0; k < rank && k < MCP_GRAPH_MAX_RANK; k++)
		t->dims[k] = va_arg(ap, unsigned int);
	va_end(ap);
	return g->n_tensors++;
}

/* A node; @n_in input then @n_out output tensor indices follow. */
static inline uint32_t mcp_graph_case_node(struct mcp_graph_case_graph *g,
					   uint16_t op, uint8_t engine,
					   unsigned int n_in, unsigned int n_out, ...)
{
	struct mcp_graph_node *n = &g->nodes[g->n_nodes];
	va_list ap;
	unsigned int k;

	n->op = op;
	n->engine = engine;
	n->n_inputs = (uint8_t)n_in;
	n->n_outputs = (uint8_t)n_out;
	va_start(ap, n_out);
	for (k = 0; k < n_in; k++) {
		unsigned int t = va_arg(ap, unsigned int);

		if (k < MCP_GRAPH_MAX_INPUTS)
			n->inputs[k] = t;
	}
	for (k = 0; k < n_out; k++) {
		unsigned int t = va_arg(ap, unsigned int);

		if (k < MCP_GRAPH_MAX_OUTPUTS)
			n->outputs[k] = t;
	}
	va_end(ap);
	return g->n_nodes++;
}

/* Appends @len bytes to the blob at an 8-byte boundary: their offset. */
static inline uint32_t mcp_graph_case_blob(struct mcp_graph_case_graph *g,
					   const void *data, uint32_t len)
{
	uint32_t off = g->blob_len;

	memcpy(g->blob + off, data, len);
	g->blob_len = (off + len + 7) & ~7U;
	return off;
}

static inline void mcp_graph_case_param(struct mcp_graph_case_graph *g,
					uint32_t node, const void *data,
					uint32_t len)
{
	g->nodes[node].param_offset = mcp_graph_case_blob(g, data, len);
	g->nodes[node].param_len = len;
}

static inline void mcp_graph_case_quant(struct mcp_graph_case_graph *g,
					uint32_t node, float scale,
					int32_t zero_point)
{
	struct mcp_graph_quant q;

	q.scale = mcp_graph_case_f32(scale);
	q.zero_point = zero_point;
	mcp_graph_case_param(g, node, &q, sizeof(q));
}

/*
 * The bytes to give for @g into @out: their count, or 0 when @cap is too
 * small.  Fills the header's counts and total_len unless told not to.
 */
static inline size_t mcp_graph_case_emit(struct mcp_graph_case_graph *g,
					 uint8_t *out, size_t cap)
{
	size_t len = sizeof(g->hdr), sz;

	if (!g->keep_counts) {
		g->hdr.n_buffers = g->n_buffers;
		g->hdr.n_tensors = g->n_tensors;
		g->hdr.n_nodes = g->n_nodes;
		g->hdr.blob_len = g->blob_len;
	}
	sz = sizeof(g->hdr) +
	     g->n_buffers * sizeof(struct mcp_graph_buffer) +
	     g->n_tensors * sizeof(struct mcp_graph_tensor) +
	     g->n_nodes * sizeof(struct mcp_graph_node) + g->blob_len;
	if (!g->keep_total)
		g->hdr.total_len = sz;
	if (sz + g->extra_bytes > cap)
		return 0;
	memcpy(out, &g->hdr, sizeof(g->hdr));
	memcpy(out + len, g->buffers, g->n_buffers * sizeof(g->buffers[0]));
	len += g->n_buffers * sizeof(g->buffers[0]);
	memcpy(out + len, g->tensors, g->n_tensors * sizeof(g->tensors[0]));
	len += g->n_tensors * sizeof(g->tensors[0]);
	memcpy(out + len, g->nodes, g->n_nodes * sizeof(g->nodes[0]));
	len += g->n_nodes * sizeof(g->nodes[0]);
	memcpy(out + len, g->blob, g->blob_len);
	len += g->blob_len;
	memset(out + len, 0, g->extra_bytes);
	len += g->extra_bytes;
	if (g->truncate_to && g->truncate_to < len)
		len = g->truncate_to;
	return len;
}

/* ---- format version 2 -------------------------------------------------- */

/* Writes the varints of one table record after another (see @enc_*). */
struct mcp_graph_case_writer {
	const struct mcp_graph_case_graph *g;
	uint8_t *out;
	size_t len;
	size_t cap;
	uint32_t kind;
	uint32_t index;
	uint32_t field;
};

static inline void mcp_graph_case_put_byte(struct mcp_graph_case_writer *w,
					   uint8_t b)
{
	if (w->len < w->cap)
		w->out[w->len] = b;
	w->len++;
}

static inline void mcp_graph_case_put(struct mcp_graph_case_writer *w,
				      uint64_t v)
{
	const struct mcp_graph_case_graph *g = w->g;
	uint32_t k;

	w->field++;
	if (g->enc_field && g->enc_kind == w->kind &&
	    g->enc_index == w->index && g->enc_field == w->field) {
		for (k = 0; k < g->enc_len; k++)
			mcp_graph_case_put_byte(w, g->enc_bytes[k]);
		return;
	}
	do {
		uint8_t b = v & 0x7f;

		v >>= 7;
		mcp_graph_case_put_byte(w, v ? b | 0x80 : b);
	} while (v);
}

static inline void mcp_graph_case_record(struct mcp_graph_case_writer *w,
					 uint32_t kind, uint32_t index)
{
	w->kind = kind;
	w->index = index;
	w->field = 0;
}

/*
 * The bytes of @g in format version 2 (its tables as varints, in the
 * fields' order of the uapi, then the blob): their count, 0 when @cap is
 * too small.  Header, counts and total_len as mcp_graph_case_emit().
 */
static inline size_t mcp_graph_case_emit_compact(struct mcp_graph_case_graph *g,
						 uint8_t *out, size_t cap)
{
	struct mcp_graph_case_writer w = { g, out, sizeof(g->hdr), cap, 0, 0, 0 };
	uint32_t i, k;

	if (!g->keep_counts) {
		g->hdr.n_buffers = g->n_buffers;
		g->hdr.n_tensors = g->n_tensors;
		g->hdr.n_nodes = g->n_nodes;
		g->hdr.blob_len = g->blob_len;
	}
	g->hdr.version = MCP_GRAPH_VERSION_COMPACT;
	for (i = 0; i < g->n_buffers; i++) {
		const struct mcp_graph_buffer *b = &g->buffers[i];

		mcp_graph_case_record(&w, MCP_GRAPH_AT_BUFFER, i);
		mcp_graph_case_put(&w, b->length);
		mcp_graph_case_put(&w, b->flags);
		mcp_graph_case_put(&w, b->name_offset);
		mcp_graph_case_put(&w, b->name_len);
		mcp_graph_case_put(&w, b->init_offset);
		mcp_graph_case_put(&w, b->init_len);
	}
	for (i = 0; i < g->n_tensors; i++) {
		const struct mcp_graph_tensor *t = &g->tensors[i];

		mcp_graph_case_record(&w, MCP_GRAPH_AT_TENSOR, i);
		mcp_graph_case_put(&w, t->buffer);
		mcp_graph_case_put(&w, t->dtype);
		mcp_graph_case_put(&w, t->rank);
		mcp_graph_case_put(&w, t->layout);
		mcp_graph_case_put(&w, t->flags);
		mcp_graph_case_put(&w, t->offset);
		for (k = 0; k < t->rank && k < MCP_GRAPH_MAX_RANK; k++)
			mcp_graph_case_put(&w, t->dims[k]);
		mcp_graph_case_put(&w, t->name_offset);
		mcp_graph_case_put(&w, t->name_len);
	}
	for (i = 0; i < g->n_nodes; i++) {
		const struct mcp_graph_node *n = &g->nodes[i];

		mcp_graph_case_record(&w, MCP_GRAPH_AT_NODE, i);
		mcp_graph_case_put(&w, n->op);
		mcp_graph_case_put(&w, n->engine);
		mcp_graph_case_put(&w, n->flags);
		mcp_graph_case_put(&w, n->n_inputs);
		mcp_graph_case_put(&w, n->n_outputs);
		for (k = 0; k < n->n_inputs && k < MCP_GRAPH_MAX_INPUTS; k++)
			mcp_graph_case_put(&w, n->inputs[k]);
		for (k = 0; k < n->n_outputs && k < MCP_GRAPH_MAX_OUTPUTS; k++)
			mcp_graph_case_put(&w, n->outputs[k]);
		mcp_graph_case_put(&w, n->param_offset);
		mcp_graph_case_put(&w, n->param_len);
		mcp_graph_case_put(&w, n->name_offset);
		mcp_graph_case_put(&w, n->name_len);
	}
	for (k = 0; k < g->enc_tail_len; k++)
		mcp_graph_case_put_byte(&w, g->enc_tail[k]);
	while ((w.len - sizeof(g->hdr)) % 8)
		mcp_graph_case_put_byte(&w, g->enc_pad);
	if (g->enc_misalign)
		mcp_graph_case_put_byte(&w, 0);
	for (k = 0; k < g->blob_len; k++)
		mcp_graph_case_put_byte(&w, g->blob[k]);
	if (!g->keep_total)
		g->hdr.total_len = w.len;
	for (k = 0; k < g->extra_bytes; k++)
		mcp_graph_case_put_byte(&w, 0);
	if (w.len > cap)
		return 0;
	memcpy(out, &g->hdr, sizeof(g->hdr));
	if (g->truncate_to && g->truncate_to < w.len)
		return g->truncate_to;
	return w.len;
}

/*
 * True when format version 2 says exactly what the version 1 bytes of @g
 * say: consistent sizes, and no table field that version 2 leaves out
 * (reserved fields, unused slots, dims past the rank) set.
 */
static inline int mcp_graph_case_compact_expresses(const struct mcp_graph_case_graph *g)
{
	uint32_t i, k;

	if (g->keep_counts || g->keep_total || g->truncate_to ||
	    g->extra_bytes || g->hdr.version != MCP_GRAPH_VERSION)
		return 0;
	for (i = 0; i < g->n_buffers; i++)
		if (g->buffers[i].reserved)
			return 0;
	for (i = 0; i < g->n_tensors; i++) {
		const struct mcp_graph_tensor *t = &g->tensors[i];

		if (t->rank > MCP_GRAPH_MAX_RANK)
			return 0;
		for (k = t->rank; k < MCP_GRAPH_MAX_RANK; k++)
			if (t->dims[k])
				return 0;
	}
	for (i = 0; i < g->n_nodes; i++) {
		const struct mcp_graph_node *n = &g->nodes[i];

		if (n->reserved || n->n_inputs > MCP_GRAPH_MAX_INPUTS ||
		    n->n_outputs > MCP_GRAPH_MAX_OUTPUTS)
			return 0;
		for (k = n->n_inputs; k < MCP_GRAPH_MAX_INPUTS; k++)
			if (n->inputs[k])
				return 0;
		for (k = n->n_outputs; k < MCP_GRAPH_MAX_OUTPUTS; k++)
			if (n->outputs[k])
				return 0;
	}
	return 1;
}

/* ---- graphs the cases start from ------------------------------------ */

/*
 * One 4 KiB buffer, four F32 [4][4] tensors t0..t3 at 0, 64, 128, 192;
 * node 0 COPY t0 -> t1 on the cpu, node 1 ADD (t1, t0) -> t2 on a worker.
 */
static inline void mcp_graph_case_base(struct mcp_graph_case_graph *g)
{
	uint32_t b = mcp_graph_case_buffer(g, 4096, MCP_GRAPH_BUF_INPUT |
					   MCP_GRAPH_BUF_OUTPUT);
	uint32_t k;

	for (k = 0; k < 4; k++)
		mcp_graph_case_tensor(g, b, MCP_DTYPE_F32, 64 * k, 2, 4, 4);
	mcp_graph_case_node(g, MCP_OP_COPY, MCP_GRAPH_ENGINE_CPU, 1, 1, 0, 1);
	mcp_graph_case_node(g, MCP_OP_ADD, MCP_GRAPH_ENGINE_WORKER, 2, 1,
			    1, 0, 2);
}

/* The base graph with node 1 replaced by @op on t1 -> t2 (1 in, 1 out). */
static inline void mcp_graph_case_unary(struct mcp_graph_case_graph *g,
					uint16_t op, uint8_t engine)
{
	mcp_graph_case_base(g);
	g->n_nodes = 1;
	mcp_graph_case_node(g, op, engine, 1, 1, 1, 2);
}

/* ---- the cases: header ---------------------------------------------- */

#define MCP_GC(fn) static inline void mcp_gc_##fn(struct mcp_graph_case_graph *g)

MCP_GC(valid_base) { mcp_graph_case_base(g); }
MCP_GC(hdr_short) { mcp_graph_case_base(g); g->truncate_to = 40; }
MCP_GC(hdr_magic) { mcp_graph_case_base(g); g->hdr.magic ^= 1; }
MCP_GC(hdr_version) { mcp_graph_case_base(g); g->hdr.version = 3; }
MCP_GC(hdr_size) { mcp_graph_case_base(g); g->hdr.header_size = 56; }
MCP_GC(hdr_flags) { mcp_graph_case_base(g); g->hdr.flags = 1; }
MCP_GC(hdr_reserved) { mcp_graph_case_base(g); g->hdr.reserved = 1; }

static inline void mcp_graph_case_counts(struct mcp_graph_case_graph *g)
{
	mcp_graph_case_base(g);
	g->keep_counts = 1;
	g->hdr.n_buffers = g->n_buffers;
	g->hdr.n_tensors = g->n_tensors;
	g->hdr.n_nodes = g->n_nodes;
	g->hdr.blob_len = g->blob_len;
}

MCP_GC(hdr_no_buffers) { mcp_graph_case_counts(g); g->hdr.n_buffers = 0; }
MCP_GC(hdr_65_buffers) { mcp_graph_case_counts(g); g->hdr.n_buffers = 65; }
MCP_GC(hdr_no_tensors) { mcp_graph_case_counts(g); g->hdr.n_tensors = 0; }
MCP_GC(hdr_no_nodes) { mcp_graph_case_counts(g); g->hdr.n_nodes = 0; }
MCP_GC(hdr_blob_unaligned) { mcp_graph_case_counts(g); g->hdr.blob_len = 4; }
/* Counts above any knob's hard cap: LIMIT before the length check. */
MCP_GC(limit_nodes) { mcp_graph_case_counts(g); g->hdr.n_nodes = 65537; }
MCP_GC(limit_tensors) { mcp_graph_case_counts(g); g->hdr.n_tensors = 65537; }
MCP_GC(limit_blob)
{
	mcp_graph_case_counts(g);
	g->hdr.blob_len = (16U << 20) + 8;
}

/* A bad count is HEADER even when a LIMIT is also exceeded. */
MCP_GC(hdr_before_limit)
{
	mcp_graph_case_counts(g);
	g->hdr.n_nodes = 65537;
	g->hdr.n_buffers = 0;
}

MCP_GC(hdr_total_len)
{
	mcp_graph_case_base(g);
	g->keep_total = 1;
	g->hdr.total_len = sizeof(g->hdr) + sizeof(g->buffers[0]) +
			   4 * sizeof(g->tensors[0]) + 2 * sizeof(g->nodes[0]) + 8;
}

/* total_len agrees with the sections, but more bytes are given. */
MCP_GC(hdr_given_len) { mcp_graph_case_base(g); g->extra_bytes = 8; }

/* Fewer bytes than the sections, total_len claiming them all. */
MCP_GC(hdr_truncated)
{
	mcp_graph_case_base(g);
	g->truncate_to = sizeof(g->hdr) + sizeof(g->buffers[0]);
}

MCP_GC(hdr_name_outside)
{
	mcp_graph_case_base(g);
	mcp_graph_case_blob(g, "graph", 5);
	g->hdr.name_offset = 4;
	g->hdr.name_len = 5;
}

MCP_GC(hdr_name_empty_offset)
{
	mcp_graph_case_base(g);
	mcp_graph_case_blob(g, "graph", 5);
	g->hdr.name_offset = 8;
}

MCP_GC(valid_names)
{
	uint32_t k;

	mcp_graph_case_base(g);
	g->hdr.name_offset = mcp_graph_case_blob(g, "base", 4);
	g->hdr.name_len = 4;
	g->buffers[0].name_offset = mcp_graph_case_blob(g, "io", 2);
	g->buffers[0].name_len = 2;
	g->buffers[0].init_offset = mcp_graph_case_blob(g, "initinit", 8);
	g->buffers[0].init_len = 8;
	for (k = 0; k < g->n_tensors; k++) {
		g->tensors[k].name_offset = mcp_graph_case_blob(g, "tensor", 6);
		g->tensors[k].name_len = 6;
	}
	g->nodes[1].name_offset = mcp_graph_case_blob(g, "sum", 3);
	g->nodes[1].name_len = 3;
}

/* ---- buffers -------------------------------------------------------- */

/* Base graph plus buffer 1 of 4 KiB, unused. */
static inline void mcp_graph_case_two_buffers(struct mcp_graph_case_graph *g)
{
	mcp_graph_case_base(g);
	mcp_graph_case_buffer(g, 4096, MCP_GRAPH_BUF_CONST);
}

MCP_GC(buf_zero_length) { mcp_graph_case_two_buffers(g); g->buffers[1].length = 0; }
MCP_GC(buf_flags) { mcp_graph_case_two_buffers(g); g->buffers[1].flags = 1U << 3; }
MCP_GC(buf_reserved) { mcp_graph_case_two_buffers(g); g->buffers[1].reserved = 1; }
MCP_GC(buf_name_outside)
{
	mcp_graph_case_two_buffers(g);
	g->buffers[1].name_offset = 0;
	g->buffers[1].name_len = 1;
}

MCP_GC(buf_init_outside)
{
	mcp_graph_case_two_buffers(g);
	mcp_graph_case_blob(g, "12345678", 8);
	g->buffers[1].init_offset = 8;
	g->buffers[1].init_len = 8;
}

/* A BUFFER fault of buffer 0 comes before a RANGE fault of buffer 1. */
MCP_GC(buf_order)
{
	mcp_graph_case_two_buffers(g);
	g->buffers[1].name_len = 1;
	g->buffers[0].reserved = 2;
}

/* Buffer 0 needs 8 KiB; with SHORT_BO it is bound to a 4 KiB BO. */
MCP_GC(buf_short_bo)
{
	mcp_graph_case_base(g);
	g->buffers[0].length = 8192;
}

/* The structural checks of a buffer come before its BO's length. */
MCP_GC(buf_range_before_short_bo)
{
	mcp_graph_case_base(g);
	g->buffers[0].length = 8192;
	g->buffers[0].name_len = 4;
}

/* ---- tensors -------------------------------------------------------- */

MCP_GC(ten_buffer_index) { mcp_graph_case_base(g); g->tensors[2].buffer = 1; }
MCP_GC(ten_dtype_zero) { mcp_graph_case_base(g); g->tensors[1].dtype = 0; }
MCP_GC(ten_dtype_unknown) { mcp_graph_case_base(g); g->tensors[1].dtype = 5; }
MCP_GC(ten_rank_7)
{
	mcp_graph_case_base(g);
	g->tensors[3].rank = 7;
}

MCP_GC(ten_dim_zero) { mcp_graph_case_base(g); g->tensors[0].dims[1] = 0; }
MCP_GC(ten_dim_past_rank) { mcp_graph_case_base(g); g->tensors[0].dims[2] = 1; }
MCP_GC(ten_flags) { mcp_graph_case_base(g); g->tensors[3].flags = 1; }
MCP_GC(ten_layout_unknown) { mcp_graph_case_base(g); g->tensors[3].layout = 3; }
MCP_GC(ten_nhwc_rank)
{
	mcp_graph_case_base(g);
	g->tensors[3].layout = MCP_LAYOUT_NHWC;
}

MCP_GC(ten_tiled16_rank)
{
	mcp_graph_case_base(g);
	mcp_graph_case_tensor(g, 0, MCP_DTYPE_F32, 256, 4, 1, 1, 1, 16);
	g->tensors[4].layout = MCP_LAYOUT_TILED16;
}

MCP_GC(ten_tiled16_inner)
{
	mcp_graph_case_base(g);
	mcp_graph_case_tensor(g, 0, MCP_DTYPE_F32, 256, 5, 1, 1, 1, 2, 8);
	g->tensors[4].layout = MCP_LAYOUT_TILED16;
}

MCP_GC(ten_offset_unaligned) { mcp_graph_case_base(g); g->tensors[1].offset = 96; }
MCP_GC(ten_size_overflow)
{
	mcp_graph_case_base(g);
	mcp_graph_case_tensor(g, 0, MCP_DTYPE_F32, 0, 3, 0xffffffffU,
			      0xffffffffU, 0xffffffffU);
}

/* 2^31 * 2^31 * 4 bytes: 2^64, one past u64. */
MCP_GC(ten_size_overflow_edge)
{
	mcp_graph_case_base(g);
	mcp_graph_case_tensor(g, 0, MCP_DTYPE_F32, 0, 2, 0x80000000U,
			      0x80000000U);
}

MCP_GC(ten_name_outside)
{
	mcp_graph_case_base(g);
	g->tensors[2].name_offset = 0;
	g->tensors[2].name_len = 3;
}

/* RANGE is checked before BOUNDS within a tensor. */
MCP_GC(ten_range_before_bounds)
{
	mcp_graph_case_base(g);
	g->tensors[2].name_len = 3;
	g->tensors[2].offset = 8192;
}

MCP_GC(ten_bounds) { mcp_graph_case_base(g); g->tensors[3].offset = 4096; }
/* 68 bytes fit in the 100-byte buffer, their 128 padded bytes do not. */
MCP_GC(ten_bounds_padding)
{
	mcp_graph_case_base(g);
	g->buffers[0].length = 4096 + 100;
	mcp_graph_case_tensor(g, 0, MCP_DTYPE_F32, 4096, 1, 17);
}

MCP_GC(valid_padding_exact)
{
	mcp_graph_case_base(g);
	g->buffers[0].length = 4096 + 128;
	mcp_graph_case_tensor(g, 0, MCP_DTYPE_F32, 4096, 1, 17);
}

/* A TENSOR fault of tensor 1 comes before a BOUNDS fault of tensor 0. */
MCP_GC(ten_order)
{
	mcp_graph_case_base(g);
	g->tensors[0].offset = 4096;
	g->tensors[1].dtype = 9;
}

/* Tensors are all checked before any node. */
MCP_GC(ten_before_nodes)
{
	mcp_graph_case_base(g);
	g->nodes[0].op = 999;
	g->tensors[3].offset = 4096;
}

MCP_GC(valid_scalar)
{
	mcp_graph_case_base(g);
	mcp_graph_case_tensor(g, 0, MCP_DTYPE_I32, 256, 0);
	mcp_graph_case_tensor(g, 0, MCP_DTYPE_F32, 320, 0);
	mcp_graph_case_node(g, MCP_OP_COPY, MCP_GRAPH_ENGINE_CPU, 1, 1, 4, 5);
}

/* ---- nodes: op, engine, arity -------------------------------------- */

MCP_GC(op_zero) { mcp_graph_case_base(g); g->nodes[1].op = 0; }
MCP_GC(op_unknown) { mcp_graph_case_base(g); g->nodes[1].op = 6; }
/* Far past the last worker op libmcp knows (it grows). */
MCP_GC(op_past_last) { mcp_graph_case_base(g); g->nodes[1].op = 1000; }
MCP_GC(op_flags) { mcp_graph_case_base(g); g->nodes[0].flags = 2; }
MCP_GC(op_reserved) { mcp_graph_case_base(g); g->nodes[1].reserved = 1; }
/* OP comes before ENGINE and ARITY within a node. */
MCP_GC(op_first)
{
	mcp_graph_case_base(g);
	g->nodes[1].flags = 0x80;
	g->nodes[1].engine = 7;
	g->nodes[1].n_inputs = 9;
}

MCP_GC(eng_unknown) { mcp_graph_case_base(g); g->nodes[0].engine = 3; }
MCP_GC(eng_copy_worker) { mcp_graph_case_base(g); g->nodes[0].engine = MCP_GRAPH_ENGINE_WORKER; }
MCP_GC(eng_add_cpu) { mcp_graph_case_base(g); g->nodes[1].engine = MCP_GRAPH_ENGINE_CPU; }
MCP_GC(eng_add_device) { mcp_graph_case_base(g); g->nodes[1].engine = MCP_GRAPH_ENGINE_DEVICE; }
MCP_GC(eng_nop_worker)
{
	mcp_graph_case_base(g);
	mcp_graph_case_node(g, MCP_OP_NOP, MCP_GRAPH_ENGINE_WORKER, 0, 0);
}

MCP_GC(eng_wnop_cpu)
{
	mcp_graph_case_base(g);
	mcp_graph_case_node(g, MCP_OP_WNOP, MCP_GRAPH_ENGINE_CPU, 0, 0);
}

MCP_GC(eng_quant_device)
{
	mcp_graph_case_base(g);
	mcp_graph_case_tensor(g, 0, MCP_DTYPE_I8, 256, 2, 4, 4);
	mcp_graph_case_node(g, MCP_OP_QUANT_I8, MCP_GRAPH_ENGINE_DEVICE, 1, 1, 2, 4);
	mcp_graph_case_quant(g, 2, 0.5f, 0);
}

/* Valid in the format; /dev/mcp has no device DMA engine. */
MCP_GC(eng_copy_device) { mcp_graph_case_base(g); g->nodes[0].engine = MCP_GRAPH_ENGINE_DEVICE; }
/* ENGINE comes before ARITY. */
MCP_GC(eng_before_arity)
{
	mcp_graph_case_base(g);
	g->nodes[1].engine = MCP_GRAPH_ENGINE_CPU;
	g->nodes[1].n_inputs = 1;
	g->nodes[1].inputs[1] = 0;
}

MCP_GC(ar_5_inputs)
{
	mcp_graph_case_base(g);
	mcp_graph_case_node(g, MCP_OP_WNOP, MCP_GRAPH_ENGINE_WORKER, 0, 0);
	g->nodes[2].n_inputs = 5;
}

MCP_GC(ar_3_outputs)
{
	mcp_graph_case_base(g);
	mcp_graph_case_node(g, MCP_OP_NOP, MCP_GRAPH_ENGINE_CPU, 0, 0);
	g->nodes[2].n_outputs = 3;
}

MCP_GC(ar_input_index) { mcp_graph_case_base(g); g->nodes[1].inputs[1] = 4; }
MCP_GC(ar_output_index) { mcp_graph_case_base(g); g->nodes[0].outputs[0] = 64; }
MCP_GC(ar_unused_input) { mcp_graph_case_base(g); g->nodes[0].inputs[2] = 3; }
MCP_GC(ar_unused_output) { mcp_graph_case_base(g); g->nodes[1].outputs[1] = 3; }
MCP_GC(ar_copy_2_in)
{
	mcp_graph_case_base(g);
	g->nodes[0].n_inputs = 2;
	g->nodes[0].inputs[1] = 3;
}

MCP_GC(ar_copy_no_out) { mcp_graph_case_base(g); g->nodes[0].n_outputs = 0; g->nodes[0].outputs[0] = 0; }
MCP_GC(ar_add_3_in)
{
	mcp_graph_case_base(g);
	g->nodes[1].n_inputs = 3;
	g->nodes[1].inputs[2] = 3;
}

MCP_GC(ar_matmul_1_in) { mcp_graph_case_unary(g, MCP_OP_MATMUL, MCP_GRAPH_ENGINE_WORKER); }
MCP_GC(ar_layernorm_2_in)
{
	mcp_graph_case_base(g);
	g->nodes[1].op = MCP_OP_LAYERNORM;
}

MCP_GC(ar_matmul_i8_3_in)
{
	mcp_graph_case_base(g);
	g->nodes[1].op = MCP_OP_MATMUL_I8;
	g->nodes[1].n_inputs = 3;
	g->nodes[1].inputs[2] = 3;
}

MCP_GC(ar_relu_2_out)
{
	mcp_graph_case_unary(g, MCP_OP_RELU, MCP_GRAPH_ENGINE_WORKER);
	g->nodes[1].n_outputs = 2;
	g->nodes[1].outputs[1] = 3;
}

/* NOP and WNOP take any counts. */
MCP_GC(valid_nops)
{
	mcp_graph_case_base(g);
	mcp_graph_case_node(g, MCP_OP_NOP, MCP_GRAPH_ENGINE_CPU, 0, 0);
	mcp_graph_case_node(g, MCP_OP_WNOP, MCP_GRAPH_ENGINE_WORKER, 4, 0, 2, 2, 2, 2);
	mcp_graph_case_node(g, MCP_OP_NOP, MCP_GRAPH_ENGINE_CPU, 0, 2, 3, 0);
}

/* ---- nodes: ranges and parameters ---------------------------------- */

MCP_GC(rng_node_name)
{
	mcp_graph_case_base(g);
	g->nodes[1].name_offset = 8;
	g->nodes[1].name_len = 0;
}

MCP_GC(rng_param)
{
	mcp_graph_case_base(g);
	mcp_graph_case_blob(g, "12345678", 8);
	g->nodes[0].param_offset = 4;
	g->nodes[0].param_len = 8;
}

/* RANGE comes before PARAM: the param range itself is checked first. */
MCP_GC(rng_before_param)
{
	mcp_graph_case_base(g);
	g->nodes[0].param_offset = 0;
	g->nodes[0].param_len = 300;
}

MCP_GC(prm_too_long)
{
	static const uint8_t zeros[264] = { 0 };

	mcp_graph_case_base(g);
	mcp_graph_case_param(g, 0, zeros, sizeof(zeros));
}

MCP_GC(prm_copy_has_param)
{
	mcp_graph_case_base(g);
	mcp_graph_case_blob(g, "12345678", 8);
	g->nodes[0].param_len = 8;
}

/* Base plus t4 I8 [4][4] at 256 and node 2 QUANT_I8 t2 -> t4 on the cpu. */
static inline void mcp_graph_case_quant_node(struct mcp_graph_case_graph *g)
{
	mcp_graph_case_base(g);
	mcp_graph_case_tensor(g, 0, MCP_DTYPE_I8, 256, 2, 4, 4);
	mcp_graph_case_node(g, MCP_OP_QUANT_I8, MCP_GRAPH_ENGINE_CPU, 1, 1, 2, 4);
}

MCP_GC(prm_quant_missing) { mcp_graph_case_quant_node(g); }
MCP_GC(prm_quant_short)
{
	mcp_graph_case_quant_node(g);
	mcp_graph_case_quant(g, 2, 0.5f, 0);
	g->nodes[2].param_len = 4;
}

MCP_GC(prm_quant_zero_scale) { mcp_graph_case_quant_node(g); mcp_graph_case_quant(g, 2, 0.0f, 0); }
MCP_GC(prm_quant_neg_scale) { mcp_graph_case_quant_node(g); mcp_graph_case_quant(g, 2, -1.0f, 0); }
MCP_GC(prm_quant_nan_scale)
{
	struct mcp_graph_quant q = { 0x7fc00000U, 0 };

	mcp_graph_case_quant_node(g);
	mcp_graph_case_param(g, 2, &q, sizeof(q));
}

MCP_GC(prm_quant_inf_scale)
{
	struct mcp_graph_quant q = { 0x7f800000U, 0 };

	mcp_graph_case_quant_node(g);
	mcp_graph_case_param(g, 2, &q, sizeof(q));
}

MCP_GC(prm_quant_zp_high) { mcp_graph_case_quant_node(g); mcp_graph_case_quant(g, 2, 0.5f, 128); }
MCP_GC(prm_quant_zp_low) { mcp_graph_case_quant_node(g); mcp_graph_case_quant(g, 2, 0.5f, -129); }
/* The smallest subnormal is a valid scale. */
MCP_GC(valid_quant_tiny_scale)
{
	struct mcp_graph_quant q = { 1, -128 };

	mcp_graph_case_quant_node(g);
	mcp_graph_case_param(g, 2, &q, sizeof(q));
}

/* Base plus t4 F32 [4] at 256 and node 2 MATMUL (t0, t1, t4) -> t2. */
static inline void mcp_graph_case_matmul(struct mcp_graph_case_graph *g)
{
	mcp_graph_case_base(g);
	g->n_nodes = 1;
	mcp_graph_case_tensor(g, 0, MCP_DTYPE_F32, 256, 1, 4);
	mcp_graph_case_node(g, MCP_OP_MATMUL, MCP_GRAPH_ENGINE_WORKER, 3, 1,
			    0, 1, 4, 2);
}

static inline void mcp_graph_case_matmul_param(struct mcp_graph_case_graph *g,
					       uint32_t flags, uint32_t alpha)
{
	struct mcp_graph_matmul m;

	m.flags = flags;
	m.alpha = alpha;
	mcp_graph_case_param(g, 1, &m, sizeof(m));
}

MCP_GC(valid_matmul_bias) { mcp_graph_case_matmul(g); }
MCP_GC(valid_matmul_param)
{
	mcp_graph_case_matmul(g);
	mcp_graph_case_matmul_param(g, MCP_MATMUL_TRANS_A | MCP_MATMUL_TRANS_B,
				    mcp_graph_case_f32(-0.5f));
}

MCP_GC(prm_matmul_len)
{
	mcp_graph_case_matmul(g);
	mcp_graph_case_matmul_param(g, 0, mcp_graph_case_f32(1.0f));
	g->nodes[1].param_len = 4;
}

MCP_GC(prm_matmul_flags)
{
	mcp_graph_case_matmul(g);
	mcp_graph_case_matmul_param(g, 4, mcp_graph_case_f32(1.0f));
}

MCP_GC(prm_matmul_alpha_inf)
{
	mcp_graph_case_matmul(g);
	mcp_graph_case_matmul_param(g, 0, 0xff800000U);
}

/*
 * LAYERNORM (t0, t4, t5) -> t2 with t4, t5 F32 [4] at 256 and 320, as
 * node 1.
 */
static inline void mcp_graph_case_layernorm(struct mcp_graph_case_graph *g,
					    float eps, uint32_t reserved)
{
	struct mcp_graph_norm n;

	mcp_graph_case_base(g);
	g->n_nodes = 1;
	mcp_graph_case_tensor(g, 0, MCP_DTYPE_F32, 256, 1, 4);
	mcp_graph_case_tensor(g, 0, MCP_DTYPE_F32, 320, 1, 4);
	mcp_graph_case_node(g, MCP_OP_LAYERNORM, MCP_GRAPH_ENGINE_WORKER, 3, 1,
			    0, 4, 5, 2);
	n.eps = mcp_graph_case_f32(eps);
	n.reserved = reserved;
	mcp_graph_case_param(g, 1, &n, sizeof(n));
}

MCP_GC(valid_layernorm) { mcp_graph_case_layernorm(g, 1e-5f, 0); }
MCP_GC(prm_layernorm_eps) { mcp_graph_case_layernorm(g, 0.0f, 0); }
MCP_GC(prm_layernorm_reserved) { mcp_graph_case_layernorm(g, 1e-5f, 1); }
MCP_GC(prm_layernorm_missing)
{
	mcp_graph_case_layernorm(g, 1e-5f, 0);
	g->nodes[1].param_len = 0;
	g->nodes[1].param_offset = 0;
}

/* MATMUL_I8 (t4, t5) -> t2: I8 [4][4] at 256 and 320, as node 1. */
static inline void mcp_graph_case_matmul_i8(struct mcp_graph_case_graph *g,
					    int32_t zero_a, int32_t zero_b)
{
	struct mcp_graph_matmul_i8 p;

	mcp_graph_case_base(g);
	g->n_nodes = 1;
	mcp_graph_case_tensor(g, 0, MCP_DTYPE_I8, 256, 2, 4, 4);
	mcp_graph_case_tensor(g, 0, MCP_DTYPE_I8, 320, 2, 4, 4);
	mcp_graph_case_node(g, MCP_OP_MATMUL_I8, MCP_GRAPH_ENGINE_WORKER, 2, 1,
			    4, 5, 2);
	p.scale_a = mcp_graph_case_f32(0.25f);
	p.zero_a = zero_a;
	p.scale_b = mcp_graph_case_f32(0.125f);
	p.zero_b = zero_b;
	mcp_graph_case_param(g, 1, &p, sizeof(p));
}

MCP_GC(valid_matmul_i8) { mcp_graph_case_matmul_i8(g, -3, 127); }
MCP_GC(prm_matmul_i8_zero) { mcp_graph_case_matmul_i8(g, 0, 200); }
MCP_GC(prm_matmul_i8_scale)
{
	mcp_graph_case_matmul_i8(g, 0, 0);
	memset(g->blob + g->nodes[1].param_offset, 0, 4);
}

MCP_GC(prm_relu_param)
{
	mcp_graph_case_unary(g, MCP_OP_RELU, MCP_GRAPH_ENGINE_WORKER);
	mcp_graph_case_matmul_param(g, 0, 0);
}

/* PARAM comes before SHAPE within a node. */
MCP_GC(prm_before_shape)
{
	mcp_graph_case_quant_node(g);
	mcp_graph_case_quant(g, 2, 0.0f, 0);
	g->tensors[4].dtype = MCP_DTYPE_U8;
}

/* ---- nodes: shapes -------------------------------------------------- */

MCP_GC(shp_copy_bytes)
{
	mcp_graph_case_base(g);
	mcp_graph_case_tensor(g, 0, MCP_DTYPE_F32, 256, 2, 4, 5);
	g->nodes[0].outputs[0] = 4;
}

/* COPY moves bytes: dtype, shape and layout may differ. */
MCP_GC(valid_copy_reshape)
{
	mcp_graph_case_base(g);
	mcp_graph_case_tensor(g, 0, MCP_DTYPE_U8, 256, 4, 2, 2, 2, 8);
	g->tensors[4].layout = MCP_LAYOUT_NHWC;
	g->nodes[0].outputs[0] = 4;
}

/*
 * TILE16 t0 -> t1: NHWC F32 [b][h][s][d] at 0 and TILED16
 * [b][h/16][s][d][16] right after it; one buffer of 64 KiB.
 */
static inline void mcp_graph_case_tile16(struct mcp_graph_case_graph *g,
					 uint32_t b, uint32_t h, uint32_t s,
					 uint32_t d)
{
	uint64_t bytes = (uint64_t)b * h * s * d * 4;

	mcp_graph_case_buffer(g, 65536, MCP_GRAPH_BUF_INPUT | MCP_GRAPH_BUF_OUTPUT);
	mcp_graph_case_tensor(g, 0, MCP_DTYPE_F32, 0, 4, b, h, s, d);
	g->tensors[0].layout = MCP_LAYOUT_NHWC;
	mcp_graph_case_tensor(g, 0, MCP_DTYPE_F32, (bytes + 63) & ~63ULL, 5,
			      b, h / 16, s, d, 16);
	g->tensors[1].layout = MCP_LAYOUT_TILED16;
	mcp_graph_case_node(g, MCP_OP_TILE16, MCP_GRAPH_ENGINE_CPU, 1, 1, 0, 1);
}

MCP_GC(valid_tile16) { mcp_graph_case_tile16(g, 2, 32, 3, 8); }
MCP_GC(shp_tile16_h)
{
	mcp_graph_case_tile16(g, 1, 32, 2, 8);
	g->tensors[0].dims[1] = 24;
	g->tensors[1].dims[1] = 1;
}

MCP_GC(shp_tile16_d) { mcp_graph_case_tile16(g, 1, 16, 2, 4); }
MCP_GC(shp_tile16_out_dims)
{
	mcp_graph_case_tile16(g, 1, 32, 2, 8);
	g->tensors[1].dims[2] = 1;
}

MCP_GC(shp_tile16_dense_in)
{
	mcp_graph_case_tile16(g, 1, 16, 2, 8);
	g->tensors[0].layout = MCP_LAYOUT_DENSE;
}

MCP_GC(shp_tile16_dense_out)
{
	mcp_graph_case_tile16(g, 1, 16, 2, 8);
	g->tensors[1].layout = MCP_LAYOUT_DENSE;
}

MCP_GC(shp_tile16_dtype)
{
	mcp_graph_case_tile16(g, 1, 16, 2, 8);
	g->tensors[1].dtype = MCP_DTYPE_I32;
}

/* QUANT_I8 takes DENSE tensors only: not the TILED16 output. */
MCP_GC(shp_quant_tiled)
{
	mcp_graph_case_tile16(g, 1, 16, 2, 8);
	mcp_graph_case_tensor(g, 0, MCP_DTYPE_I8, 8192, 5, 1, 1, 2, 8, 16);
	mcp_graph_case_node(g, MCP_OP_QUANT_I8, MCP_GRAPH_ENGINE_CPU, 1, 1, 1, 2);
	mcp_graph_case_quant(g, 1, 0.5f, 0);
}

MCP_GC(shp_quant_in_i8)
{
	mcp_graph_case_quant_node(g);
	mcp_graph_case_quant(g, 2, 0.5f, 0);
	mcp_graph_case_tensor(g, 0, MCP_DTYPE_I8, 320, 2, 4, 4);
	g->nodes[2].inputs[0] = 5;
}

MCP_GC(shp_quant_out_u8)
{
	mcp_graph_case_quant_node(g);
	mcp_graph_case_quant(g, 2, 0.5f, 0);
	g->tensors[4].dtype = MCP_DTYPE_U8;
}

MCP_GC(shp_quant_dims)
{
	mcp_graph_case_quant_node(g);
	mcp_graph_case_quant(g, 2, 0.5f, 0);
	g->tensors[4].dims[0] = 2;
	g->tensors[4].dims[1] = 8;
}

MCP_GC(shp_dequant_out_i32)
{
	mcp_graph_case_quant_node(g);
	mcp_graph_case_quant(g, 2, 0.5f, 0);
	mcp_graph_case_tensor(g, 0, MCP_DTYPE_I32, 320, 2, 4, 4);
	mcp_graph_case_node(g, MCP_OP_DEQUANT_I8, MCP_GRAPH_ENGINE_CPU, 1, 1, 4, 5);
	mcp_graph_case_quant(g, 3, 0.5f, 0);
}

MCP_GC(shp_matmul_k)
{
	mcp_graph_case_matmul(g);
	g->tensors[1].dims[0] = 2;
	g->tensors[1].dims[1] = 8;
}

/* Same tensors, TRANS_B: op(B) = B^T is [8][2], K 4 != 8. */
MCP_GC(shp_matmul_trans)
{
	mcp_graph_case_matmul(g);
	g->tensors[0].dims[0] = 4;
	g->tensors[0].dims[1] = 4;
	g->tensors[1].dims[0] = 4;
	g->tensors[1].dims[1] = 4;
	g->tensors[2].dims[0] = 4;
	g->tensors[2].dims[1] = 4;
	g->tensors[1].dims[0] = 2;
	g->tensors[1].dims[1] = 8;
	g->tensors[2].dims[0] = 4;
	g->tensors[2].dims[1] = 8;
	g->tensors[4].dims[0] = 8;
	mcp_graph_case_matmul_param(g, MCP_MATMUL_TRANS_B, mcp_graph_case_f32(1.0f));
}

/* A [2][8] x B^T ([2][8] transposed: [8][2]) -> [2][2], bias [2]. */
MCP_GC(valid_matmul_trans_b)
{
	mcp_graph_case_matmul(g);
	g->tensors[0].dims[0] = 2;
	g->tensors[0].dims[1] = 8;
	g->tensors[1].dims[0] = 2;
	g->tensors[1].dims[1] = 8;
	g->tensors[2].dims[0] = 2;
	g->tensors[2].dims[1] = 2;
	g->tensors[4].dims[0] = 2;
	mcp_graph_case_matmul_param(g, MCP_MATMUL_TRANS_B, mcp_graph_case_f32(1.0f));
}

MCP_GC(shp_matmul_bias) { mcp_graph_case_matmul(g); g->tensors[4].dims[0] = 3; }
MCP_GC(shp_matmul_rank)
{
	mcp_graph_case_matmul(g);
	/* Still 64 bytes: node 0's COPY of it stays valid. */
	g->tensors[0].rank = 1;
	g->tensors[0].dims[0] = 16;
	g->tensors[0].dims[1] = 0;
}

MCP_GC(shp_matmul_i8_out)
{
	mcp_graph_case_matmul_i8(g, 0, 0);
	g->tensors[2].dtype = MCP_DTYPE_I8;
}

MCP_GC(shp_add_dims)
{
	mcp_graph_case_base(g);
	g->tensors[2].dims[0] = 2;
	g->tensors[2].dims[1] = 8;
}

MCP_GC(shp_add_dtype) { mcp_graph_case_base(g); g->tensors[0].dtype = MCP_DTYPE_I32; }
MCP_GC(shp_relu_nhwc)
{
	mcp_graph_case_unary(g, MCP_OP_RELU, MCP_GRAPH_ENGINE_WORKER);
	g->tensors[1].rank = 4;
	g->tensors[1].dims[0] = 1;
	g->tensors[1].dims[1] = 1;
	g->tensors[1].dims[2] = 4;
	g->tensors[1].dims[3] = 4;
	g->tensors[1].layout = MCP_LAYOUT_NHWC;
	g->tensors[2].rank = 4;
	g->tensors[2].dims[0] = 1;
	g->tensors[2].dims[1] = 1;
	g->tensors[2].dims[2] = 4;
	g->tensors[2].dims[3] = 4;
}

MCP_GC(shp_softmax_scalar)
{
	mcp_graph_case_base(g);
	g->n_nodes = 1;
	mcp_graph_case_tensor(g, 0, MCP_DTYPE_F32, 256, 0);
	mcp_graph_case_tensor(g, 0, MCP_DTYPE_F32, 320, 0);
	mcp_graph_case_node(g, MCP_OP_SOFTMAX, MCP_GRAPH_ENGINE_WORKER, 1, 1, 4, 5);
}

MCP_GC(valid_gelu_scalar)
{
	mcp_graph_case_base(g);
	g->n_nodes = 1;
	mcp_graph_case_tensor(g, 0, MCP_DTYPE_F32, 256, 0);
	mcp_graph_case_tensor(g, 0, MCP_DTYPE_F32, 320, 0);
	mcp_graph_case_node(g, MCP_OP_GELU, MCP_GRAPH_ENGINE_WORKER, 1, 1, 4, 5);
}

MCP_GC(shp_layernorm_gamma)
{
	mcp_graph_case_layernorm(g, 1e-5f, 0);
	g->tensors[4].dims[0] = 5;
}

/* ---- nodes: aliasing ------------------------------------------------ */

MCP_GC(ali_outputs)
{
	mcp_graph_case_base(g);
	mcp_graph_case_node(g, MCP_OP_WNOP, MCP_GRAPH_ENGINE_WORKER, 0, 2, 3, 3);
}

/* Partial overlap: t4 F32 [32] at 192 covers t3 and 64 more bytes. */
MCP_GC(ali_outputs_partial)
{
	mcp_graph_case_base(g);
	mcp_graph_case_tensor(g, 0, MCP_DTYPE_F32, 192, 1, 32);
	mcp_graph_case_node(g, MCP_OP_NOP, MCP_GRAPH_ENGINE_CPU, 0, 2, 4, 3);
}

MCP_GC(ali_copy_onto_input) { mcp_graph_case_base(g); g->nodes[0].outputs[0] = 0; }
MCP_GC(ali_add_onto_input)
{
	mcp_graph_case_base(g);
	g->nodes[1].outputs[0] = 0;
}

/* INPLACE grants out0 == in0 only; here out0 is in1. */
MCP_GC(ali_inplace_in1)
{
	mcp_graph_case_base(g);
	g->nodes[1].flags = MCP_GRAPH_NODE_INPLACE;
	g->nodes[1].outputs[0] = 0;
}

/*
 * INPLACE RELU t4 -> t5, F32 [8][4] at 64 and 128: out0 overlaps in0 but
 * is not identical.
 */
MCP_GC(ali_inplace_partial)
{
	mcp_graph_case_base(g);
	g->n_nodes = 1;
	mcp_graph_case_tensor(g, 0, MCP_DTYPE_F32, 64, 2, 8, 4);
	mcp_graph_case_tensor(g, 0, MCP_DTYPE_F32, 128, 2, 8, 4);
	mcp_graph_case_node(g, MCP_OP_RELU, MCP_GRAPH_ENGINE_WORKER, 1, 1, 4, 5);
	g->nodes[1].flags = MCP_GRAPH_NODE_INPLACE;
}

/* INPLACE out0 == in0 (same bytes, another tensor entry): allowed. */
MCP_GC(valid_inplace_relu)
{
	mcp_graph_case_unary(g, MCP_OP_RELU, MCP_GRAPH_ENGINE_WORKER);
	mcp_graph_case_tensor(g, 0, MCP_DTYPE_F32, 64, 2, 4, 4);
	g->nodes[1].flags = MCP_GRAPH_NODE_INPLACE;
	g->nodes[1].outputs[0] = 4;
}

/* Without INPLACE the same node is refused. */
MCP_GC(ali_relu_no_inplace)
{
	mcp_graph_case_unary(g, MCP_OP_RELU, MCP_GRAPH_ENGINE_WORKER);
	g->nodes[1].outputs[0] = 1;
}

/* INPLACE on a node that does not alias: not an error, grants nothing. */
MCP_GC(valid_inplace_unused)
{
	mcp_graph_case_base(g);
	g->nodes[0].flags = MCP_GRAPH_NODE_INPLACE;
}

/*
 * INPLACE ADD (t4, t5) -> t4, F32 [8][4] at 64 and 128: out0 == in0, but
 * out0 also overlaps in1.
 */
MCP_GC(ali_inplace_other_input)
{
	mcp_graph_case_base(g);
	g->n_nodes = 1;
	mcp_graph_case_tensor(g, 0, MCP_DTYPE_F32, 64, 2, 8, 4);
	mcp_graph_case_tensor(g, 0, MCP_DTYPE_F32, 128, 2, 8, 4);
	mcp_graph_case_node(g, MCP_OP_ADD, MCP_GRAPH_ENGINE_WORKER, 2, 1, 4, 5, 4);
	g->nodes[1].flags = MCP_GRAPH_NODE_INPLACE;
}

/* Reading one tensor twice is no alias. */
MCP_GC(valid_same_input_twice)
{
	mcp_graph_case_base(g);
	mcp_graph_case_node(g, MCP_OP_NOP, MCP_GRAPH_ENGINE_CPU, 2, 0, 3, 3);
}

/* ALIAS comes before WRITERS. */
MCP_GC(ali_before_writers)
{
	mcp_graph_case_base(g);
	mcp_graph_case_node(g, MCP_OP_WNOP, MCP_GRAPH_ENGINE_WORKER, 0, 2, 1, 1);
}

/* ---- writers -------------------------------------------------------- */

MCP_GC(wr_two_copies)
{
	mcp_graph_case_base(g);
	mcp_graph_case_node(g, MCP_OP_COPY, MCP_GRAPH_ENGINE_CPU, 1, 1, 3, 1);
}

MCP_GC(wr_partial)
{
	mcp_graph_case_base(g);
	mcp_graph_case_tensor(g, 0, MCP_DTYPE_F32, 192, 1, 32);
	mcp_graph_case_node(g, MCP_OP_WNOP, MCP_GRAPH_ENGINE_WORKER, 0, 1, 4);
	mcp_graph_case_node(g, MCP_OP_COPY, MCP_GRAPH_ENGINE_CPU, 1, 1, 0, 3);
}

/* Writers are checked after every node's own checks: node 3 is ALIAS. */
MCP_GC(wr_after_nodes)
{
	mcp_graph_case_base(g);
	mcp_graph_case_node(g, MCP_OP_COPY, MCP_GRAPH_ENGINE_CPU, 1, 1, 3, 1);
	mcp_graph_case_node(g, MCP_OP_COPY, MCP_GRAPH_ENGINE_CPU, 1, 1, 3, 3);
}

/* The later writer in place on the earlier one's output: allowed. */
MCP_GC(valid_writers_inplace_later)
{
	mcp_graph_case_base(g);
	mcp_graph_case_node(g, MCP_OP_RELU, MCP_GRAPH_ENGINE_WORKER, 1, 1, 1, 1);
	g->nodes[2].flags = MCP_GRAPH_NODE_INPLACE;
}

/* The earlier writer in place: allowed too (ordered by index). */
MCP_GC(valid_writers_inplace_earlier)
{
	mcp_graph_case_buffer(g, 4096, MCP_GRAPH_BUF_INPUT | MCP_GRAPH_BUF_OUTPUT);
	mcp_graph_case_tensor(g, 0, MCP_DTYPE_F32, 0, 2, 4, 4);
	mcp_graph_case_tensor(g, 0, MCP_DTYPE_F32, 64, 2, 4, 4);
	mcp_graph_case_node(g, MCP_OP_RELU, MCP_GRAPH_ENGINE_WORKER, 1, 1, 1, 1);
	g->nodes[0].flags = MCP_GRAPH_NODE_INPLACE;
	mcp_graph_case_node(g, MCP_OP_COPY, MCP_GRAPH_ENGINE_CPU, 1, 1, 0, 1);
}

/* INPLACE flag but not identical: it grants nothing against writers. */
MCP_GC(wr_inplace_not_identical)
{
	mcp_graph_case_base(g);
	mcp_graph_case_node(g, MCP_OP_RELU, MCP_GRAPH_ENGINE_WORKER, 1, 1, 3, 1);
	g->nodes[2].flags = MCP_GRAPH_NODE_INPLACE;
}

/* ---- cycles --------------------------------------------------------- */

MCP_GC(cyc_two)
{
	mcp_graph_case_buffer(g, 4096, MCP_GRAPH_BUF_INPUT);
	mcp_graph_case_tensor(g, 0, MCP_DTYPE_F32, 0, 2, 4, 4);
	mcp_graph_case_tensor(g, 0, MCP_DTYPE_F32, 64, 2, 4, 4);
	mcp_graph_case_node(g, MCP_OP_COPY, MCP_GRAPH_ENGINE_CPU, 1, 1, 0, 1);
	mcp_graph_case_node(g, MCP_OP_COPY, MCP_GRAPH_ENGINE_CPU, 1, 1, 1, 0);
}

/* Node 0 is free; the cycle is nodes 1 -> 2 -> 3 -> 1. */
MCP_GC(cyc_three)
{
	mcp_graph_case_buffer(g, 4096, MCP_GRAPH_BUF_INPUT);
	mcp_graph_case_tensor(g, 0, MCP_DTYPE_F32, 0, 2, 4, 4);
	mcp_graph_case_tensor(g, 0, MCP_DTYPE_F32, 64, 2, 4, 4);
	mcp_graph_case_tensor(g, 0, MCP_DTYPE_F32, 128, 2, 4, 4);
	mcp_graph_case_tensor(g, 0, MCP_DTYPE_F32, 192, 2, 4, 4);
	mcp_graph_case_node(g, MCP_OP_NOP, MCP_GRAPH_ENGINE_CPU, 0, 1, 3);
	mcp_graph_case_node(g, MCP_OP_COPY, MCP_GRAPH_ENGINE_CPU, 1, 1, 0, 1);
	mcp_graph_case_node(g, MCP_OP_COPY, MCP_GRAPH_ENGINE_CPU, 1, 1, 1, 2);
	mcp_graph_case_node(g, MCP_OP_COPY, MCP_GRAPH_ENGINE_CPU, 1, 1, 2, 0);
}

/* Node 0 reads what the cycle {1, 2} writes: it is never scheduled. */
MCP_GC(cyc_dependent_first)
{
	mcp_graph_case_buffer(g, 4096, MCP_GRAPH_BUF_INPUT);
	mcp_graph_case_tensor(g, 0, MCP_DTYPE_F32, 0, 2, 4, 4);
	mcp_graph_case_tensor(g, 0, MCP_DTYPE_F32, 64, 2, 4, 4);
	mcp_graph_case_tensor(g, 0, MCP_DTYPE_F32, 128, 2, 4, 4);
	mcp_graph_case_node(g, MCP_OP_COPY, MCP_GRAPH_ENGINE_CPU, 1, 1, 1, 2);
	mcp_graph_case_node(g, MCP_OP_COPY, MCP_GRAPH_ENGINE_CPU, 1, 1, 0, 1);
	mcp_graph_case_node(g, MCP_OP_COPY, MCP_GRAPH_ENGINE_CPU, 1, 1, 1, 0);
}

/* Partial overlaps make edges too: t3 (F32 [32] at 0) covers t0 and t1. */
MCP_GC(cyc_partial)
{
	mcp_graph_case_buffer(g, 4096, MCP_GRAPH_BUF_INPUT);
	mcp_graph_case_tensor(g, 0, MCP_DTYPE_F32, 0, 2, 4, 4);
	mcp_graph_case_tensor(g, 0, MCP_DTYPE_F32, 64, 2, 4, 4);
	mcp_graph_case_tensor(g, 0, MCP_DTYPE_F32, 128, 2, 4, 4);
	mcp_graph_case_tensor(g, 0, MCP_DTYPE_F32, 0, 1, 32);
	mcp_graph_case_node(g, MCP_OP_COPY, MCP_GRAPH_ENGINE_CPU, 1, 1, 2, 1);
	mcp_graph_case_node(g, MCP_OP_WNOP, MCP_GRAPH_ENGINE_WORKER, 1, 1, 3, 2);
}

/*
 * In-place ordering by index closes a cycle: node 0 (ADD in place on t1,
 * reading t2) before node 1 (touches t1), node 1 -> node 2 through t3,
 * node 2 writes t2 which node 0 reads: 2 -> 0.
 */
MCP_GC(cyc_inplace)
{
	mcp_graph_case_buffer(g, 4096, MCP_GRAPH_BUF_INPUT);
	mcp_graph_case_tensor(g, 0, MCP_DTYPE_F32, 0, 2, 4, 4);
	mcp_graph_case_tensor(g, 0, MCP_DTYPE_F32, 64, 2, 4, 4);
	mcp_graph_case_tensor(g, 0, MCP_DTYPE_F32, 128, 2, 4, 4);
	mcp_graph_case_tensor(g, 0, MCP_DTYPE_F32, 192, 2, 4, 4);
	mcp_graph_case_node(g, MCP_OP_ADD, MCP_GRAPH_ENGINE_WORKER, 2, 1, 1, 2, 1);
	g->nodes[0].flags = MCP_GRAPH_NODE_INPLACE;
	mcp_graph_case_node(g, MCP_OP_COPY, MCP_GRAPH_ENGINE_CPU, 1, 1, 1, 3);
	mcp_graph_case_node(g, MCP_OP_COPY, MCP_GRAPH_ENGINE_CPU, 1, 1, 3, 2);
}

/*
 * The in-place rule replaces the data edges of a pair: node 0 reads t1,
 * node 1 (later, in place on t1) would make 1 -> 0 by data; by index it
 * is 0 -> 1, so no cycle with node 1 reading t2 which node 0 writes.
 */
MCP_GC(valid_inplace_order)
{
	mcp_graph_case_buffer(g, 4096, MCP_GRAPH_BUF_INPUT);
	mcp_graph_case_tensor(g, 0, MCP_DTYPE_F32, 0, 2, 4, 4);
	mcp_graph_case_tensor(g, 0, MCP_DTYPE_F32, 64, 2, 4, 4);
	mcp_graph_case_tensor(g, 0, MCP_DTYPE_F32, 128, 2, 4, 4);
	mcp_graph_case_node(g, MCP_OP_COPY, MCP_GRAPH_ENGINE_CPU, 1, 1, 1, 2);
	mcp_graph_case_node(g, MCP_OP_ADD, MCP_GRAPH_ENGINE_WORKER, 2, 1, 1, 2, 1);
	g->nodes[1].flags = MCP_GRAPH_NODE_INPLACE;
}

/* Without INPLACE the same pair of nodes is a cycle (and an ALIAS first). */
MCP_GC(ali_inplace_order_without_flag)
{
	mcp_graph_case_unary(g, MCP_OP_RELU, MCP_GRAPH_ENGINE_WORKER);
	g->nodes[1].inputs[0] = 2;
}

/* ---- valid graphs --------------------------------------------------- */

/*
 * The kernel-ops diamond: buffer 0 in (F32 [8][16] at 0), buffer 1 work,
 * buffer 2 out.  node 0 COPY in -> a; node 1 QUANT a -> q; node 2 COPY
 * a -> b; node 3 DEQUANT q -> c; node 4 ADD (b, c) -> out on a worker.
 */
MCP_GC(valid_diamond)
{
	mcp_graph_case_buffer(g, 512, MCP_GRAPH_BUF_INPUT);
	mcp_graph_case_buffer(g, 4096, 0);
	mcp_graph_case_buffer(g, 512, MCP_GRAPH_BUF_OUTPUT);
	mcp_graph_case_tensor(g, 0, MCP_DTYPE_F32, 0, 2, 8, 16);	/* 0 in */
	mcp_graph_case_tensor(g, 1, MCP_DTYPE_F32, 0, 2, 8, 16);	/* 1 a */
	mcp_graph_case_tensor(g, 1, MCP_DTYPE_I8, 512, 2, 8, 16);	/* 2 q */
	mcp_graph_case_tensor(g, 1, MCP_DTYPE_F32, 1024, 2, 8, 16);	/* 3 b */
	mcp_graph_case_tensor(g, 1, MCP_DTYPE_F32, 1536, 2, 8, 16);	/* 4 c */
	mcp_graph_case_tensor(g, 2, MCP_DTYPE_F32, 0, 2, 8, 16);	/* 5 out */
	mcp_graph_case_node(g, MCP_OP_COPY, MCP_GRAPH_ENGINE_CPU, 1, 1, 0, 1);
	mcp_graph_case_node(g, MCP_OP_QUANT_I8, MCP_GRAPH_ENGINE_CPU, 1, 1, 1, 2);
	mcp_graph_case_quant(g, 1, 0.0625f, 3);
	mcp_graph_case_node(g, MCP_OP_COPY, MCP_GRAPH_ENGINE_CPU, 1, 1, 1, 3);
	mcp_graph_case_node(g, MCP_OP_DEQUANT_I8, MCP_GRAPH_ENGINE_CPU, 1, 1, 2, 4);
	mcp_graph_case_quant(g, 3, 0.0625f, 3);
	mcp_graph_case_node(g, MCP_OP_ADD, MCP_GRAPH_ENGINE_WORKER, 2, 1, 3, 4, 5);
}

/* COPY t0 -> t1, then RELU and GELU in place on t1, then COPY t1 -> t2. */
MCP_GC(valid_inplace_chain)
{
	mcp_graph_case_buffer(g, 4096, MCP_GRAPH_BUF_INPUT | MCP_GRAPH_BUF_OUTPUT);
	mcp_graph_case_tensor(g, 0, MCP_DTYPE_F32, 0, 2, 4, 4);
	mcp_graph_case_tensor(g, 0, MCP_DTYPE_F32, 64, 2, 4, 4);
	mcp_graph_case_tensor(g, 0, MCP_DTYPE_F32, 128, 2, 4, 4);
	mcp_graph_case_node(g, MCP_OP_COPY, MCP_GRAPH_ENGINE_CPU, 1, 1, 0, 1);
	mcp_graph_case_node(g, MCP_OP_RELU, MCP_GRAPH_ENGINE_WORKER, 1, 1, 1, 1);
	g->nodes[1].flags = MCP_GRAPH_NODE_INPLACE;
	mcp_graph_case_node(g, MCP_OP_GELU, MCP_GRAPH_ENGINE_WORKER, 1, 1, 1, 1);
	g->nodes[2].flags = MCP_GRAPH_NODE_INPLACE;
	mcp_graph_case_node(g, MCP_OP_COPY, MCP_GRAPH_ENGINE_CPU, 1, 1, 1, 2);
}

/*
 * QUANT F32 [1][16][2][32] -> I8 (DENSE), COPY to the same bytes seen as
 * NHWC, TILE16 -> I8 TILED16 [1][1][2][32][16], DEQUANT of the tiles
 * seen as DENSE: kernel ops only.
 */
MCP_GC(valid_tile16_quant_chain)
{
	mcp_graph_case_buffer(g, 4096, MCP_GRAPH_BUF_INPUT);
	mcp_graph_case_buffer(g, 8192, MCP_GRAPH_BUF_OUTPUT);
	mcp_graph_case_tensor(g, 0, MCP_DTYPE_F32, 0, 4, 1, 16, 2, 32);	/* 0 */
	mcp_graph_case_tensor(g, 1, MCP_DTYPE_I8, 0, 4, 1, 16, 2, 32);	/* 1 */
	mcp_graph_case_tensor(g, 1, MCP_DTYPE_I8, 1024, 4, 1, 16, 2, 32); /* 2 */
	g->tensors[2].layout = MCP_LAYOUT_NHWC;
	mcp_graph_case_tensor(g, 1, MCP_DTYPE_I8, 2048, 5, 1, 1, 2, 32, 16); /* 3 */
	g->tensors[3].layout = MCP_LAYOUT_TILED16;
	mcp_graph_case_tensor(g, 1, MCP_DTYPE_I8, 2048, 5, 1, 1, 2, 32, 16); /* 4 */
	mcp_graph_case_tensor(g, 1, MCP_DTYPE_F32, 4096, 5, 1, 1, 2, 32, 16); /* 5 */
	mcp_graph_case_node(g, MCP_OP_QUANT_I8, MCP_GRAPH_ENGINE_CPU, 1, 1, 0, 1);
	mcp_graph_case_quant(g, 0, 0.25f, -1);
	mcp_graph_case_node(g, MCP_OP_COPY, MCP_GRAPH_ENGINE_CPU, 1, 1, 1, 2);
	mcp_graph_case_node(g, MCP_OP_TILE16, MCP_GRAPH_ENGINE_CPU, 1, 1, 2, 3);
	mcp_graph_case_node(g, MCP_OP_DEQUANT_I8, MCP_GRAPH_ENGINE_CPU, 1, 1, 4, 5);
	mcp_graph_case_quant(g, 3, 0.25f, -1);
}

/* Nodes listed out of order: the schedule follows the data, not indices. */
MCP_GC(valid_reverse_order)
{
	mcp_graph_case_buffer(g, 4096, MCP_GRAPH_BUF_INPUT);
	mcp_graph_case_tensor(g, 0, MCP_DTYPE_F32, 0, 2, 4, 4);
	mcp_graph_case_tensor(g, 0, MCP_DTYPE_F32, 64, 2, 4, 4);
	mcp_graph_case_tensor(g, 0, MCP_DTYPE_F32, 128, 2, 4, 4);
	mcp_graph_case_node(g, MCP_OP_COPY, MCP_GRAPH_ENGINE_CPU, 1, 1, 1, 2);
	mcp_graph_case_node(g, MCP_OP_COPY, MCP_GRAPH_ENGINE_CPU, 1, 1, 0, 1);
}

/* ---- the cases: format version 2 ------------------------------------ */

/*
 * The base graph in version 2: 72 bytes of records (buffer 7; tensors 10,
 * 10, 11, 11; nodes 11, 12), so no padding.  Field @field of record
 * @index of table @kind is given as @len bytes.
 */
static inline void mcp_graph_case_enc(struct mcp_graph_case_graph *g,
				      uint32_t kind, uint32_t index,
				      uint32_t field, const uint8_t *bytes,
				      uint32_t len)
{
	mcp_graph_case_base(g);
	g->compact = 1;
	g->enc_kind = kind;
	g->enc_index = index;
	g->enc_field = field;
	memcpy(g->enc_bytes, bytes, len);
	g->enc_len = len;
}

#define MCP_GC_ENC(fn, kind, index, field, ...)				\
	MCP_GC(fn)							\
	{								\
		static const uint8_t b[] = { __VA_ARGS__ };		\
		mcp_graph_case_enc(g, MCP_GRAPH_AT_##kind, index, field,	\
				   b, sizeof(b));			\
	}

MCP_GC(valid_compact) { mcp_graph_case_base(g); g->compact = 1; }
/* Longer than needed but within the field's width: accepted. */
MCP_GC_ENC(valid_compact_long_varint, TENSOR, 0, 2, 0x81, 0x00)
/* name_len of node 1 (its last field) in 2 bytes: 73 bytes, 7 padding */
MCP_GC_ENC(valid_compact_padding, NODE, 1, 12, 0x80, 0x00)
MCP_GC(enc_padding_not_zero)
{
	static const uint8_t b[] = { 0x80, 0x00 };

	mcp_graph_case_enc(g, MCP_GRAPH_AT_NODE, 1, 12, b, sizeof(b));
	g->enc_pad = 1;
}
/* The last varint of the last node runs into the end of the tables. */
MCP_GC_ENC(enc_past_end, NODE, 1, 12, 0x80)
MCP_GC(enc_past_end_padded)
{
	static const uint8_t b[] = { 0x80, 0x80 };

	mcp_graph_case_enc(g, MCP_GRAPH_AT_NODE, 1, 12, b, sizeof(b));
	g->enc_pad = 0x80;
}
MCP_GC_ENC(enc_u64_too_long, BUFFER, 0, 1,
	   0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00)
MCP_GC_ENC(enc_u64_over, BUFFER, 0, 1,
	   0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x02)
MCP_GC_ENC(enc_u32_too_long, TENSOR, 1, 1, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00)
MCP_GC_ENC(enc_u32_over, TENSOR, 0, 9, 0x80, 0x80, 0x80, 0x80, 0x10)
MCP_GC_ENC(enc_buffer_flags_over, BUFFER, 0, 2, 0xff, 0xff, 0xff, 0xff, 0x1f)
MCP_GC_ENC(enc_u8_over, TENSOR, 2, 2, 0x80, 0x02)
MCP_GC_ENC(enc_u8_too_long, TENSOR, 3, 4, 0x80, 0x80, 0x00)
MCP_GC_ENC(enc_u16_over, NODE, 0, 1, 0x80, 0x80, 0x04)
MCP_GC_ENC(enc_u16_too_long, NODE, 1, 1, 0xc2, 0x80, 0x80, 0x00)
MCP_GC_ENC(enc_rank_over, TENSOR, 1, 3, 7)
MCP_GC_ENC(enc_inputs_over, NODE, 1, 4, 5)
MCP_GC_ENC(enc_outputs_over, NODE, 0, 5, 3)
MCP_GC_ENC(enc_dims_over, TENSOR, 3, 8, 0x80, 0x80, 0x80, 0x80, 0x7f)
MCP_GC_ENC(enc_input_over, NODE, 1, 7, 0xff, 0xff, 0xff, 0xff, 0xff)
MCP_GC(enc_leftover)
{
	mcp_graph_case_base(g);
	g->compact = 1;
	g->enc_tail_len = 8;
}
/* Header-level rules of version 2 (HEADER, before any decoding). */
MCP_GC(hdr_compact_misaligned)
{
	mcp_graph_case_base(g);
	g->compact = 1;
	g->enc_misalign = 1;
}
/* Counts the tables' bytes cannot hold: refused before any allocation. */
MCP_GC(hdr_compact_huge_counts)
{
	mcp_graph_case_counts(g);
	g->compact = 1;
	g->hdr.n_tensors = 16384;
	g->hdr.n_nodes = 4096;
}
MCP_GC(hdr_compact_tables_over)
{
	mcp_graph_case_base(g);
	g->compact = 1;
	g->enc_tail_len = 512;
}
MCP_GC(hdr_compact_blob_over)
{
	mcp_graph_case_counts(g);
	g->compact = 1;
	g->hdr.blob_len = 4096;
}
MCP_GC(hdr_compact_truncated)
{
	mcp_graph_case_base(g);
	g->compact = 1;
	g->truncate_to = sizeof(struct mcp_graph_header) + 40;
}
MCP_GC(hdr_compact_trailing)
{
	mcp_graph_case_base(g);
	g->compact = 1;
	g->extra_bytes = 8;
}
MCP_GC(hdr_compact_total)
{
	mcp_graph_case_base(g);
	g->compact = 1;
	g->keep_total = 1;
	g->hdr.total_len = sizeof(struct mcp_graph_header) + 80;
}
/* Header rules come first: a bad name range before an undecodable table. */
MCP_GC(hdr_compact_name_first)
{
	static const uint8_t b[] = { 0x80, 0x02 };

	mcp_graph_case_enc(g, MCP_GRAPH_AT_TENSOR, 2, 2, b, sizeof(b));
	g->hdr.name_len = 8;
}
/* The rules after decoding are version 1's, verdict for verdict. */
MCP_GC(compact_tensor_dtype)
{
	mcp_graph_case_base(g);
	g->compact = 1;
	g->tensors[2].dtype = 9;
}

#undef MCP_GC_ENC
#undef MCP_GC

#define MCP_GRAPH_CASE(fn, reason, kind, index, flags) \
	{ #fn, mcp_gc_##fn, MCP_GRAPH_##reason, MCP_GRAPH_AT_##kind, index, flags }
#define MCP_GRAPH_CASE_VALID(fn) \
	{ #fn, mcp_gc_##fn, MCP_GRAPH_OK, 0, 0, 0 }

static const struct mcp_graph_case mcp_graph_cases[] = {
	MCP_GRAPH_CASE_VALID(valid_base),
	MCP_GRAPH_CASE_VALID(valid_names),
	MCP_GRAPH_CASE_VALID(valid_padding_exact),
	MCP_GRAPH_CASE_VALID(valid_scalar),
	MCP_GRAPH_CASE_VALID(valid_nops),
	MCP_GRAPH_CASE_VALID(valid_quant_tiny_scale),
	MCP_GRAPH_CASE_VALID(valid_matmul_bias),
	MCP_GRAPH_CASE_VALID(valid_matmul_param),
	MCP_GRAPH_CASE_VALID(valid_matmul_trans_b),
	MCP_GRAPH_CASE_VALID(valid_layernorm),
	MCP_GRAPH_CASE_VALID(valid_matmul_i8),
	MCP_GRAPH_CASE_VALID(valid_copy_reshape),
	MCP_GRAPH_CASE_VALID(valid_tile16),
	MCP_GRAPH_CASE_VALID(valid_gelu_scalar),
	MCP_GRAPH_CASE_VALID(valid_inplace_relu),
	MCP_GRAPH_CASE_VALID(valid_inplace_unused),
	MCP_GRAPH_CASE_VALID(valid_same_input_twice),
	MCP_GRAPH_CASE_VALID(valid_writers_inplace_later),
	MCP_GRAPH_CASE_VALID(valid_writers_inplace_earlier),
	MCP_GRAPH_CASE_VALID(valid_inplace_order),
	MCP_GRAPH_CASE_VALID(valid_diamond),
	MCP_GRAPH_CASE_VALID(valid_inplace_chain),
	MCP_GRAPH_CASE_VALID(valid_tile16_quant_chain),
	MCP_GRAPH_CASE_VALID(valid_reverse_order),

	MCP_GRAPH_CASE(hdr_short, ERR_HEADER, HEADER, 0, 0),
	MCP_GRAPH_CASE(hdr_magic, ERR_HEADER, HEADER, 0, 0),
	MCP_GRAPH_CASE(hdr_version, ERR_HEADER, HEADER, 0, 0),
	MCP_GRAPH_CASE(hdr_size, ERR_HEADER, HEADER, 0, 0),
	MCP_GRAPH_CASE(hdr_flags, ERR_HEADER, HEADER, 0, 0),
	MCP_GRAPH_CASE(hdr_reserved, ERR_HEADER, HEADER, 0, 0),
	MCP_GRAPH_CASE(hdr_no_buffers, ERR_HEADER, HEADER, 0, 0),
	MCP_GRAPH_CASE(hdr_65_buffers, ERR_HEADER, HEADER, 0, 0),
	MCP_GRAPH_CASE(hdr_no_tensors, ERR_HEADER, HEADER, 0, 0),
	MCP_GRAPH_CASE(hdr_no_nodes, ERR_HEADER, HEADER, 0, 0),
	MCP_GRAPH_CASE(hdr_blob_unaligned, ERR_HEADER, HEADER, 0, 0),
	MCP_GRAPH_CASE(hdr_before_limit, ERR_HEADER, HEADER, 0, 0),
	MCP_GRAPH_CASE(hdr_total_len, ERR_HEADER, HEADER, 0, 0),
	MCP_GRAPH_CASE(hdr_given_len, ERR_HEADER, HEADER, 0, 0),
	MCP_GRAPH_CASE(hdr_truncated, ERR_HEADER, HEADER, 0, 0),
	MCP_GRAPH_CASE(limit_nodes, ERR_LIMIT, HEADER, 0, 0),
	MCP_GRAPH_CASE(limit_tensors, ERR_LIMIT, HEADER, 0, 0),
	MCP_GRAPH_CASE(limit_blob, ERR_LIMIT, HEADER, 0, 0),
	MCP_GRAPH_CASE(hdr_name_outside, ERR_RANGE, HEADER, 0, 0),
	MCP_GRAPH_CASE(hdr_name_empty_offset, ERR_RANGE, HEADER, 0, 0),

	MCP_GRAPH_CASE(buf_zero_length, ERR_BUFFER, BUFFER, 1, 0),
	MCP_GRAPH_CASE(buf_flags, ERR_BUFFER, BUFFER, 1, 0),
	MCP_GRAPH_CASE(buf_reserved, ERR_BUFFER, BUFFER, 1, 0),
	MCP_GRAPH_CASE(buf_name_outside, ERR_RANGE, BUFFER, 1, 0),
	MCP_GRAPH_CASE(buf_init_outside, ERR_RANGE, BUFFER, 1, 0),
	MCP_GRAPH_CASE(buf_order, ERR_BUFFER, BUFFER, 0, 0),
	MCP_GRAPH_CASE(buf_short_bo, ERR_BUFFER, BUFFER, 0,
		       MCP_GRAPH_CASE_KERNEL_ONLY | MCP_GRAPH_CASE_SHORT_BO),
	MCP_GRAPH_CASE(buf_range_before_short_bo, ERR_RANGE, BUFFER, 0,
		       MCP_GRAPH_CASE_KERNEL_ONLY | MCP_GRAPH_CASE_SHORT_BO),

	MCP_GRAPH_CASE(ten_buffer_index, ERR_TENSOR, TENSOR, 2, 0),
	MCP_GRAPH_CASE(ten_dtype_zero, ERR_TENSOR, TENSOR, 1, 0),
	MCP_GRAPH_CASE(ten_dtype_unknown, ERR_TENSOR, TENSOR, 1, 0),
	MCP_GRAPH_CASE(ten_rank_7, ERR_TENSOR, TENSOR, 3, 0),
	MCP_GRAPH_CASE(ten_dim_zero, ERR_TENSOR, TENSOR, 0, 0),
	MCP_GRAPH_CASE(ten_dim_past_rank, ERR_TENSOR, TENSOR, 0, 0),
	MCP_GRAPH_CASE(ten_flags, ERR_TENSOR, TENSOR, 3, 0),
	MCP_GRAPH_CASE(ten_layout_unknown, ERR_TENSOR, TENSOR, 3, 0),
	MCP_GRAPH_CASE(ten_nhwc_rank, ERR_TENSOR, TENSOR, 3, 0),
	MCP_GRAPH_CASE(ten_tiled16_rank, ERR_TENSOR, TENSOR, 4, 0),
	MCP_GRAPH_CASE(ten_tiled16_inner, ERR_TENSOR, TENSOR, 4, 0),
	MCP_GRAPH_CASE(ten_offset_unaligned, ERR_TENSOR, TENSOR, 1, 0),
	MCP_GRAPH_CASE(ten_size_overflow, ERR_TENSOR, TENSOR, 4, 0),
	MCP_GRAPH_CASE(ten_size_overflow_edge, ERR_TENSOR, TENSOR, 4, 0),
	MCP_GRAPH_CASE(ten_name_outside, ERR_RANGE, TENSOR, 2, 0),
	MCP_GRAPH_CASE(ten_range_before_bounds, ERR_RANGE, TENSOR, 2, 0),
	MCP_GRAPH_CASE(ten_bounds, ERR_BOUNDS, TENSOR, 3, 0),
	MCP_GRAPH_CASE(ten_bounds_padding, ERR_BOUNDS, TENSOR, 4, 0),
	MCP_GRAPH_CASE(ten_order, ERR_BOUNDS, TENSOR, 0, 0),
	MCP_GRAPH_CASE(ten_before_nodes, ERR_BOUNDS, TENSOR, 3, 0),

	MCP_GRAPH_CASE(op_zero, ERR_OP, NODE, 1, 0),
	MCP_GRAPH_CASE(op_unknown, ERR_OP, NODE, 1, 0),
	MCP_GRAPH_CASE(op_past_last, ERR_OP, NODE, 1, MCP_GRAPH_CASE_WORKER_RULE),
	MCP_GRAPH_CASE(op_flags, ERR_OP, NODE, 0, 0),
	MCP_GRAPH_CASE(op_reserved, ERR_OP, NODE, 1, 0),
	MCP_GRAPH_CASE(op_first, ERR_OP, NODE, 1, 0),
	MCP_GRAPH_CASE(eng_unknown, ERR_ENGINE, NODE, 0, 0),
	MCP_GRAPH_CASE(eng_copy_worker, ERR_ENGINE, NODE, 0, 0),
	MCP_GRAPH_CASE(eng_add_cpu, ERR_ENGINE, NODE, 1, 0),
	MCP_GRAPH_CASE(eng_add_device, ERR_ENGINE, NODE, 1, 0),
	MCP_GRAPH_CASE(eng_nop_worker, ERR_ENGINE, NODE, 2, 0),
	MCP_GRAPH_CASE(eng_wnop_cpu, ERR_ENGINE, NODE, 2, 0),
	MCP_GRAPH_CASE(eng_quant_device, ERR_ENGINE, NODE, 2, 0),
	MCP_GRAPH_CASE(eng_copy_device, ERR_ENGINE, NODE, 0,
		       MCP_GRAPH_CASE_KERNEL_ONLY),
	MCP_GRAPH_CASE(eng_before_arity, ERR_ENGINE, NODE, 1, 0),
	MCP_GRAPH_CASE(ar_5_inputs, ERR_ARITY, NODE, 2, 0),
	MCP_GRAPH_CASE(ar_3_outputs, ERR_ARITY, NODE, 2, 0),
	MCP_GRAPH_CASE(ar_input_index, ERR_ARITY, NODE, 1, 0),
	MCP_GRAPH_CASE(ar_output_index, ERR_ARITY, NODE, 0, 0),
	MCP_GRAPH_CASE(ar_unused_input, ERR_ARITY, NODE, 0, 0),
	MCP_GRAPH_CASE(ar_unused_output, ERR_ARITY, NODE, 1, 0),
	MCP_GRAPH_CASE(ar_copy_2_in, ERR_ARITY, NODE, 0, 0),
	MCP_GRAPH_CASE(ar_copy_no_out, ERR_ARITY, NODE, 0, 0),
	MCP_GRAPH_CASE(ar_add_3_in, ERR_ARITY, NODE, 1, MCP_GRAPH_CASE_WORKER_RULE),
	MCP_GRAPH_CASE(ar_matmul_1_in, ERR_ARITY, NODE, 1, MCP_GRAPH_CASE_WORKER_RULE),
	MCP_GRAPH_CASE(ar_layernorm_2_in, ERR_ARITY, NODE, 1, MCP_GRAPH_CASE_WORKER_RULE),
	MCP_GRAPH_CASE(ar_matmul_i8_3_in, ERR_ARITY, NODE, 1, MCP_GRAPH_CASE_WORKER_RULE),
	MCP_GRAPH_CASE(ar_relu_2_out, ERR_ARITY, NODE, 1, MCP_GRAPH_CASE_WORKER_RULE),
	MCP_GRAPH_CASE(rng_node_name, ERR_RANGE, NODE, 1, 0),
	MCP_GRAPH_CASE(rng_param, ERR_RANGE, NODE, 0, 0),
	MCP_GRAPH_CASE(rng_before_param, ERR_RANGE, NODE, 0, 0),
	MCP_GRAPH_CASE(prm_too_long, ERR_PARAM, NODE, 0, 0),
	MCP_GRAPH_CASE(prm_copy_has_param, ERR_PARAM, NODE, 0, 0),
	MCP_GRAPH_CASE(prm_quant_missing, ERR_PARAM, NODE, 2, 0),
	MCP_GRAPH_CASE(prm_quant_short, ERR_PARAM, NODE, 2, 0),
	MCP_GRAPH_CASE(prm_quant_zero_scale, ERR_PARAM, NODE, 2, 0),
	MCP_GRAPH_CASE(prm_quant_neg_scale, ERR_PARAM, NODE, 2, 0),
	MCP_GRAPH_CASE(prm_quant_nan_scale, ERR_PARAM, NODE, 2, 0),
	MCP_GRAPH_CASE(prm_quant_inf_scale, ERR_PARAM, NODE, 2, 0),
	MCP_GRAPH_CASE(prm_quant_zp_high, ERR_PARAM, NODE, 2, 0),
	MCP_GRAPH_CASE(prm_quant_zp_low, ERR_PARAM, NODE, 2, 0),
	MCP_GRAPH_CASE(prm_matmul_len, ERR_PARAM, NODE, 1, MCP_GRAPH_CASE_WORKER_RULE),
	MCP_GRAPH_CASE(prm_matmul_flags, ERR_PARAM, NODE, 1, MCP_GRAPH_CASE_WORKER_RULE),
	MCP_GRAPH_CASE(prm_matmul_alpha_inf, ERR_PARAM, NODE, 1, MCP_GRAPH_CASE_WORKER_RULE),
	MCP_GRAPH_CASE(prm_layernorm_eps, ERR_PARAM, NODE, 1, MCP_GRAPH_CASE_WORKER_RULE),
	MCP_GRAPH_CASE(prm_layernorm_reserved, ERR_PARAM, NODE, 1, MCP_GRAPH_CASE_WORKER_RULE),
	MCP_GRAPH_CASE(prm_layernorm_missing, ERR_PARAM, NODE, 1, MCP_GRAPH_CASE_WORKER_RULE),
	MCP_GRAPH_CASE(prm_matmul_i8_zero, ERR_PARAM, NODE, 1, MCP_GRAPH_CASE_WORKER_RULE),
	MCP_GRAPH_CASE(prm_matmul_i8_scale, ERR_PARAM, NODE, 1, MCP_GRAPH_CASE_WORKER_RULE),
	MCP_GRAPH_CASE(prm_relu_param, ERR_PARAM, NODE, 1, MCP_GRAPH_CASE_WORKER_RULE),
	MCP_GRAPH_CASE(prm_before_shape, ERR_PARAM, NODE, 2, 0),
	MCP_GRAPH_CASE(shp_copy_bytes, ERR_SHAPE, NODE, 0, 0),
	MCP_GRAPH_CASE(shp_tile16_h, ERR_SHAPE, NODE, 0, 0),
	MCP_GRAPH_CASE(shp_tile16_d, ERR_SHAPE, NODE, 0, 0),
	MCP_GRAPH_CASE(shp_tile16_out_dims, ERR_SHAPE, NODE, 0, 0),
	MCP_GRAPH_CASE(shp_tile16_dense_in, ERR_SHAPE, NODE, 0, 0),
	MCP_GRAPH_CASE(shp_tile16_dense_out, ERR_SHAPE, NODE, 0, 0),
	MCP_GRAPH_CASE(shp_tile16_dtype, ERR_SHAPE, NODE, 0, 0),
	MCP_GRAPH_CASE(shp_quant_tiled, ERR_SHAPE, NODE, 1, 0),
	MCP_GRAPH_CASE(shp_quant_in_i8, ERR_SHAPE, NODE, 2, 0),
	MCP_GRAPH_CASE(shp_quant_out_u8, ERR_SHAPE, NODE, 2, 0),
	MCP_GRAPH_CASE(shp_quant_dims, ERR_SHAPE, NODE, 2, 0),
	MCP_GRAPH_CASE(shp_dequant_out_i32, ERR_SHAPE, NODE, 3, 0),
	MCP_GRAPH_CASE(shp_matmul_k, ERR_SHAPE, NODE, 1, MCP_GRAPH_CASE_WORKER_RULE),
	MCP_GRAPH_CASE(shp_matmul_trans, ERR_SHAPE, NODE, 1, MCP_GRAPH_CASE_WORKER_RULE),
	MCP_GRAPH_CASE(shp_matmul_bias, ERR_SHAPE, NODE, 1, MCP_GRAPH_CASE_WORKER_RULE),
	MCP_GRAPH_CASE(shp_matmul_rank, ERR_SHAPE, NODE, 1, MCP_GRAPH_CASE_WORKER_RULE),
	MCP_GRAPH_CASE(shp_matmul_i8_out, ERR_SHAPE, NODE, 1, MCP_GRAPH_CASE_WORKER_RULE),
	MCP_GRAPH_CASE(shp_add_dims, ERR_SHAPE, NODE, 1, MCP_GRAPH_CASE_WORKER_RULE),
	MCP_GRAPH_CASE(shp_add_dtype, ERR_SHAPE, NODE, 1, MCP_GRAPH_CASE_WORKER_RULE),
	MCP_GRAPH_CASE(shp_relu_nhwc, ERR_SHAPE, NODE, 1, MCP_GRAPH_CASE_WORKER_RULE),
	MCP_GRAPH_CASE(shp_softmax_scalar, ERR_SHAPE, NODE, 1, MCP_GRAPH_CASE_WORKER_RULE),
	MCP_GRAPH_CASE(shp_layernorm_gamma, ERR_SHAPE, NODE, 1, MCP_GRAPH_CASE_WORKER_RULE),
	MCP_GRAPH_CASE(ali_outputs, ERR_ALIAS, NODE, 2, 0),
	MCP_GRAPH_CASE(ali_outputs_partial, ERR_ALIAS, NODE, 2, 0),
	MCP_GRAPH_CASE(ali_copy_onto_input, ERR_ALIAS, NODE, 0, 0),
	MCP_GRAPH_CASE(ali_add_onto_input, ERR_ALIAS, NODE, 1, 0),
	MCP_GRAPH_CASE(ali_inplace_in1, ERR_ALIAS, NODE, 1, 0),
	MCP_GRAPH_CASE(ali_inplace_partial, ERR_ALIAS, NODE, 1, 0),
	MCP_GRAPH_CASE(ali_relu_no_inplace, ERR_ALIAS, NODE, 1, 0),
	MCP_GRAPH_CASE(ali_inplace_other_input, ERR_ALIAS, NODE, 1, 0),
	MCP_GRAPH_CASE(ali_before_writers, ERR_ALIAS, NODE, 2, 0),
	MCP_GRAPH_CASE(ali_inplace_order_without_flag, ERR_ALIAS, NODE, 1, 0),
	MCP_GRAPH_CASE(wr_two_copies, ERR_WRITERS, NODE, 2, 0),
	MCP_GRAPH_CASE(wr_partial, ERR_WRITERS, NODE, 3, 0),
	MCP_GRAPH_CASE(wr_after_nodes, ERR_ALIAS, NODE, 3, 0),
	MCP_GRAPH_CASE(wr_inplace_not_identical, ERR_WRITERS, NODE, 2, 0),
	MCP_GRAPH_CASE(cyc_two, ERR_CYCLE, NODE, 0, 0),
	MCP_GRAPH_CASE(cyc_three, ERR_CYCLE, NODE, 1, 0),
	MCP_GRAPH_CASE(cyc_dependent_first, ERR_CYCLE, NODE, 0, 0),
	MCP_GRAPH_CASE(cyc_partial, ERR_CYCLE, NODE, 0, 0),
	MCP_GRAPH_CASE(cyc_inplace, ERR_CYCLE, NODE, 0, 0),
	MCP_GRAPH_CASE_VALID(valid_compact),
	MCP_GRAPH_CASE_VALID(valid_compact_long_varint),
	MCP_GRAPH_CASE_VALID(valid_compact_padding),
	MCP_GRAPH_CASE(enc_padding_not_zero, ERR_ENCODING, HEADER, 0, 0),
	MCP_GRAPH_CASE(enc_past_end, ERR_ENCODING, NODE, 1, 0),
	MCP_GRAPH_CASE(enc_past_end_padded, ERR_ENCODING, NODE, 1, 0),
	MCP_GRAPH_CASE(enc_u64_too_long, ERR_ENCODING, BUFFER, 0, 0),
	MCP_GRAPH_CASE(enc_u64_over, ERR_ENCODING, BUFFER, 0, 0),
	MCP_GRAPH_CASE(enc_u32_too_long, ERR_ENCODING, TENSOR, 1, 0),
	MCP_GRAPH_CASE(enc_u32_over, ERR_ENCODING, TENSOR, 0, 0),
	MCP_GRAPH_CASE(enc_buffer_flags_over, ERR_ENCODING, BUFFER, 0, 0),
	MCP_GRAPH_CASE(enc_u8_over, ERR_ENCODING, TENSOR, 2, 0),
	MCP_GRAPH_CASE(enc_u8_too_long, ERR_ENCODING, TENSOR, 3, 0),
	MCP_GRAPH_CASE(enc_u16_over, ERR_ENCODING, NODE, 0, 0),
	MCP_GRAPH_CASE(enc_u16_too_long, ERR_ENCODING, NODE, 1, 0),
	MCP_GRAPH_CASE(enc_rank_over, ERR_ENCODING, TENSOR, 1, 0),
	MCP_GRAPH_CASE(enc_inputs_over, ERR_ENCODING, NODE, 1, 0),
	MCP_GRAPH_CASE(enc_outputs_over, ERR_ENCODING, NODE, 0, 0),
	MCP_GRAPH_CASE(enc_dims_over, ERR_ENCODING, TENSOR, 3, 0),
	MCP_GRAPH_CASE(enc_input_over, ERR_ENCODING, NODE, 1, 0),
	MCP_GRAPH_CASE(enc_leftover, ERR_ENCODING, HEADER, 0, 0),
	MCP_GRAPH_CASE(hdr_compact_misaligned, ERR_HEADER, HEADER, 0, 0),
	MCP_GRAPH_CASE(hdr_compact_huge_counts, ERR_HEADER, HEADER, 0, 0),
	MCP_GRAPH_CASE(hdr_compact_tables_over, ERR_HEADER, HEADER, 0, 0),
	MCP_GRAPH_CASE(hdr_compact_blob_over, ERR_HEADER, HEADER, 0, 0),
	MCP_GRAPH_CASE(hdr_compact_truncated, ERR_HEADER, HEADER, 0, 0),
	MCP_GRAPH_CASE(hdr_compact_trailing, ERR_HEADER, HEADER, 0, 0),
	MCP_GRAPH_CASE(hdr_compact_total, ERR_HEADER, HEADER, 0, 0),
	MCP_GRAPH_CASE(hdr_compact_name_first, ERR_RANGE, HEADER, 0, 0),
	MCP_GRAPH_CASE(compact_tensor_dtype, ERR_TENSOR, TENSOR, 2, 0),
};

#undef MCP_GRAPH_CASE
#undef MCP_GRAPH_CASE_VALID

#define MCP_GRAPH_N_CASES (sizeof(mcp_graph_cases) / sizeof(mcp_graph_cases[0]))

/* Builds case @c into @g and emits it into @out: the byte count to give. */
static inline size_t mcp_graph_case_build(const struct mcp_graph_case *c,
					  struct mcp_graph_case_graph *g,
					  uint8_t *out, size_t cap)
{
	mcp_graph_case_init(g);
	c->build(g);
	if (g->compact)
		return mcp_graph_case_emit_compact(g, out, cap);
	return mcp_graph_case_emit(g, out, cap);
}

/*
 * Builds a version 1 case @c into @g and emits it in version 2: the byte
 * count, 0 when version 2 cannot say the same (the verdict must then be
 * the case's).
 */
static inline size_t mcp_graph_case_build_compact(const struct mcp_graph_case *c,
						  struct mcp_graph_case_graph *g,
						  uint8_t *out, size_t cap)
{
	mcp_graph_case_init(g);
	c->build(g);
	if (g->compact || !mcp_graph_case_compact_expresses(g))
		return 0;
	return mcp_graph_case_emit_compact(g, out, cap);
}

#endif /* MCP_GRAPH_CASES_H */
