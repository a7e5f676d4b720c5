/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libmcp: the C API of inference graph definitions (the binary format of
 * <linux/mcp.h>, "Inference graphs"), over the mcp::GraphDef and
 * mcp::GraphBuilder of <mcp/graph.hpp>.  Included by <mcp/mcp.h>; same
 * conventions: 0 or a negative errno, mcp_strerror_last() for the sentence.
 * Nothing here talks to the kernel: it builds, reads, checks and converts
 * graphs.  Documentation/graphs.rst has the format, the rules and the JSON.
 */
#ifndef MCP_GRAPH_H
#define MCP_GRAPH_H

#include <stddef.h>
#include <stdint.h>

#ifndef MCP_EXPORT
#if defined(__GNUC__)
#define MCP_EXPORT __attribute__((visibility("default")))
#else
#define MCP_EXPORT
#endif
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* Feature bit of mcp_get_version() (the kernel's MCP_FEAT_GRAPHS). */
#define MCP_FEATURE_GRAPHS	(UINT64_C(1) << 7)
/* The kernel takes the compact encoding (MCP_FEAT_GRAPH_COMPACT). */
#define MCP_FEATURE_GRAPH_COMPACT	(UINT64_C(1) << 9)
/*
 * The module treats worker operators (op codes 64 .. 65535) as opaque:
 * their rules are libmcp's (mcp_graph_validate(); the Runtime checks them
 * at load).
 */
#define MCP_FEATURE_WORKER_OPS		(UINT64_C(1) << 11)

/*
 * How a binary graph encodes its tables (graphs.rst, "Compact encoding"):
 * the value is the format version in the header.
 */
#define MCP_GRAPH_ENCODING_FIXED	1	/* fixed-width tables, any kernel with graphs */
#define MCP_GRAPH_ENCODING_COMPACT	2	/* varint tables, MCP_FEATURE_GRAPH_COMPACT */

/* Tensor element types (the kernel's enum mcp_dtype). */
#define MCP_GRAPH_DTYPE_F32	1
#define MCP_GRAPH_DTYPE_I8	2
#define MCP_GRAPH_DTYPE_U8	3
#define MCP_GRAPH_DTYPE_I32	4

/* Tensor layouts (the kernel's enum mcp_layout). */
#define MCP_GRAPH_LAYOUT_DENSE		0	/* row-major */
#define MCP_GRAPH_LAYOUT_NHWC		1	/* rank 4 [N][H][W][C] */
#define MCP_GRAPH_LAYOUT_TILED16	2	/* rank 5 [B][H/16][S][D][16] */

/* Operators (the kernel's enum mcp_graph_op); <linux/mcp.h> says what each does. */
#define MCP_GRAPH_OP_NOP	1
#define MCP_GRAPH_OP_COPY	2
#define MCP_GRAPH_OP_TILE16	3
#define MCP_GRAPH_OP_QUANT_I8	4
#define MCP_GRAPH_OP_DEQUANT_I8	5
#define MCP_GRAPH_OP_WNOP	64
#define MCP_GRAPH_OP_MATMUL	65
#define MCP_GRAPH_OP_ADD	66
#define MCP_GRAPH_OP_RELU	67
#define MCP_GRAPH_OP_GELU	68
#define MCP_GRAPH_OP_SOFTMAX	69
#define MCP_GRAPH_OP_LAYERNORM	70
#define MCP_GRAPH_OP_MATMUL_I8	71
#define MCP_GRAPH_OP_BMATMUL	72	/* batched matmul, numpy batch broadcast */
#define MCP_GRAPH_OP_BADD	73	/* add with numpy broadcasting */
#define MCP_GRAPH_OP_SUB	74
#define MCP_GRAPH_OP_MUL	75
#define MCP_GRAPH_OP_DIV	76
#define MCP_GRAPH_OP_TRANSPOSE	77	/* param struct mcp_graph_transpose_param */
#define MCP_GRAPH_OP_GELU_ERF	78	/* exact gelu (erf) */
#define MCP_GRAPH_OP_CONV	79	/* 2-D NCHW, struct mcp_graph_conv */
#define MCP_GRAPH_OP_CONV_TRANSPOSE	80	/* struct mcp_graph_conv */
#define MCP_GRAPH_OP_MAXPOOL	81	/* struct mcp_graph_pool */
#define MCP_GRAPH_OP_AVGPOOL	82	/* struct mcp_graph_pool */
#define MCP_GRAPH_OP_GLOBAL_AVGPOOL	83
#define MCP_GRAPH_OP_CHANNEL_AFFINE	84	/* x * scale[c] + shift[c] */
#define MCP_GRAPH_OP_UNARY	90	/* param struct mcp_graph_unary */
#define MCP_GRAPH_OP_POW	91	/* numpy broadcasting */
#define MCP_GRAPH_OP_SOFTMAX_AXIS 92	/* param struct mcp_graph_axis */
#define MCP_GRAPH_OP_REDUCE	93	/* param struct mcp_graph_reduce */
#define MCP_GRAPH_OP_CONCAT	94	/* param struct mcp_graph_axis */
#define MCP_GRAPH_OP_SLICE	95	/* param struct mcp_graph_slice */
#define MCP_GRAPH_OP_GATHER	96	/* param struct mcp_graph_axis */
#define MCP_GRAPH_OP_WHERE	97	/* numpy broadcasting */
#define MCP_GRAPH_OP_CAST	98	/* param struct mcp_graph_cast */

/* Engine classes (the kernel's enum mcp_graph_engine). */
#define MCP_GRAPH_CLASS_CPU	0	/* the kernel's cpu engine */
#define MCP_GRAPH_CLASS_DEVICE	1	/* the device's DMA engine */
#define MCP_GRAPH_CLASS_WORKER	2	/* userspace workers (mcp::Runtime) */

/* Buffer flags (the kernel's MCP_GRAPH_BUF_*). */
#define MCP_GRAPH_BUFFER_INPUT	(1U << 0)	/* filled by the caller before exec */
#define MCP_GRAPH_BUFFER_OUTPUT	(1U << 1)	/* read by the caller after exec */
#define MCP_GRAPH_BUFFER_CONST	(1U << 2)	/* weights: same for every exec */

/* Node flags (the kernel's MCP_GRAPH_NODE_*). */
#define MCP_GRAPH_INPLACE	(1U << 0)	/* out0 may be in0 */

/* mcp_graph_matmul_param.flags (the kernel's MCP_MATMUL_*). */
#define MCP_GRAPH_MATMUL_TRANS_A	(1U << 0)
#define MCP_GRAPH_MATMUL_TRANS_B	(1U << 1)

/* Why a graph is invalid (the kernel's enum mcp_graph_error). */
#define MCP_GRAPH_ERROR_NONE	0
#define MCP_GRAPH_ERROR_HEADER	1	/* magic, version, sizes, counts, lengths */
#define MCP_GRAPH_ERROR_LIMIT	2	/* over a max_* limit */
#define MCP_GRAPH_ERROR_RANGE	3	/* a name, init or param range outside the blob */
#define MCP_GRAPH_ERROR_BUFFER	4	/* bad buffer entry */
#define MCP_GRAPH_ERROR_TENSOR	5	/* bad dtype, rank, dims, layout, alignment */
#define MCP_GRAPH_ERROR_BOUNDS	6	/* a tensor outside its buffer */
#define MCP_GRAPH_ERROR_OP	7	/* unknown operator or reserved bits */
#define MCP_GRAPH_ERROR_ENGINE	8	/* engine class cannot run the op */
#define MCP_GRAPH_ERROR_ARITY	9	/* input/output counts or indices */
#define MCP_GRAPH_ERROR_SHAPE	10	/* dtypes or shapes inconsistent for the op */
#define MCP_GRAPH_ERROR_PARAM	11	/* parameters missing, short or invalid */
#define MCP_GRAPH_ERROR_ALIAS	12	/* outputs overlap each other or inputs */
#define MCP_GRAPH_ERROR_WRITERS	13	/* bytes written by two nodes */
#define MCP_GRAPH_ERROR_CYCLE	14	/* the dependencies have a cycle */
#define MCP_GRAPH_ERROR_ENCODING	15	/* a compact record cannot be decoded */

/* What mcp_graph_invalid.index counts (the kernel's enum mcp_graph_error_kind). */
#define MCP_GRAPH_AT_HEADER_ENTRY	0
#define MCP_GRAPH_AT_BUFFER_ENTRY	1
#define MCP_GRAPH_AT_TENSOR_ENTRY	2
#define MCP_GRAPH_AT_NODE_ENTRY		3

/* mcp_graph_init.kind */
#define MCP_GRAPH_INIT_UNIFORM_F32	1	/* f32 uniform in [-scale, scale) */
#define MCP_GRAPH_INIT_UNIFORM_I8	2	/* int8 uniform in [-127, 127] */
#define MCP_GRAPH_INIT_CONSTANT_F32	3	/* every f32 = scale */
#define MCP_GRAPH_INIT_DATA		4	/* bytes of the graph's data section */

/**
 * struct mcp_graph_init - how a buffer is filled before the first exec
 * @kind:	MCP_GRAPH_INIT_*
 * @reserved:	0
 * @seed:	seed of the random stream (kinds 1 and 2); kind 4: the
 *		offset in the graph's data section
 * @scale:	kind 1: the bound; kind 3: the value; kinds 2, 4: unused (0)
 * @reserved2:	0
 *
 * This is also its encoding in a graph's blob (24 bytes, little-endian, at
 * a buffer's init range).  The stream is splitmix64: with s = @seed,
 * each draw does s += 0x9e3779b97f4a7c15; z = s;
 * z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9;
 * z = (z ^ (z >> 27)) * 0x94d049bb133111eb; r = z ^ (z >> 31).
 * Element i of the buffer takes draw i:
 *   kind 1: u = (float)(r >> 40) * 2^-24; x = (2 * u - 1) * scale (float math)
 *   kind 2: q = (int8)((r % 255) - 127)
 *   kind 3: x = scale, no draws
 *   kind 4: the buffer's length bytes at offset @seed of the data
 *	section that libmcp keeps beside the graph (a .mgph file stores it
 *	after the graph; the kernel never sees it)
 * Trailing bytes that do not make a whole element are zero.
 */
struct mcp_graph_init {
	uint32_t kind;
	uint32_t reserved;
	uint64_t seed;
	float scale;
	uint32_t reserved2;
};

/* Typed parameters, as in the blob (<linux/mcp.h>), floats as float. */
struct mcp_graph_quant_param {		/* QUANT_I8, DEQUANT_I8 */
	float scale;			/* finite, > 0 */
	int32_t zero_point;		/* -128 .. 127 */
};

struct mcp_graph_matmul_param {		/* MATMUL (optional: none = 0, 1.0) */
	uint32_t flags;			/* MCP_GRAPH_MATMUL_* */
	float alpha;
};

struct mcp_graph_norm_param {		/* LAYERNORM */
	float eps;			/* finite, > 0 */
	uint32_t reserved;
};

struct mcp_graph_matmul_i8_param {	/* MATMUL_I8 */
	float scale_a;
	int32_t zero_a;
	float scale_b;
	int32_t zero_b;
};

struct mcp_graph_transpose_param {	/* TRANSPOSE */
	uint8_t perm[8];		/* out dim k = in dim perm[k]; 0 past the rank */
};

/* A graph definition (mcp::GraphDef).  Opaque. */
struct mcp_graph_def;

#define MCP_GRAPH_ERROR_MESSAGE_LEN	256

/**
 * struct mcp_graph_invalid - why a graph is invalid (struct, not the kernel enum)
 * @size:	in: sizeof(struct mcp_graph_invalid)
 * @reason:	MCP_GRAPH_ERROR_*; MCP_GRAPH_ERROR_NONE when valid or when
 *		the failure was not a graph error (JSON syntax, memory)
 * @kind:	MCP_GRAPH_AT_*_ENTRY: what @index counts
 * @index:	the first bad buffer, tensor or node
 * @message:	the sentence (NUL-terminated, truncated to fit)
 */
struct mcp_graph_invalid {
	uint32_t size;
	uint32_t reason;
	uint32_t kind;
	uint32_t index;
	char message[MCP_GRAPH_ERROR_MESSAGE_LEN];
};

/**
 * struct mcp_graph_limits - what mcp_graph_check() enforces
 * @size:	in: sizeof(struct mcp_graph_limits)
 * @max_nodes:	0: the kernel's default, 4096
 * @max_tensors: 0: 16384
 * @max_blob:	0: 1 MiB
 */
struct mcp_graph_limits {
	uint32_t size;
	uint32_t max_nodes;
	uint32_t max_tensors;
	uint32_t max_blob;
};

/**
 * mcp_graph_parse() - read a binary graph
 * @data, @len:	its bytes (the whole graph, header's total_len)
 * @out:	the new definition; free it with mcp_graph_free()
 * @err:	NULL, or filled with why the graph is refused
 *
 * The bytes are validated first, exactly like MCP_IOC_GRAPH_CREATE does
 * (minus the checks that need the kernel: handles, BO lengths, engines).
 * Return: 0, -EINVAL (invalid graph: @err), -ENOMEM.
 */
MCP_EXPORT int mcp_graph_parse(const void *data, size_t len, struct mcp_graph_def **out,
			       struct mcp_graph_invalid *err);
/*
 * mcp_graph_check() - validate binary bytes without keeping them.
 * @limits NULL: the kernel defaults.  Return: 0, -EINVAL (@err filled).
 */
MCP_EXPORT int mcp_graph_check(const void *data, size_t len, const struct mcp_graph_limits *limits,
			       struct mcp_graph_invalid *err);
/*
 * mcp_graph_from_json() - read the JSON description (graphs.rst, "JSON").
 * @json need not be NUL-terminated.  The result is validated.
 * Return: 0, -EINVAL (bad JSON: the message names the JSON path; or an
 * invalid graph: @err has the reason), -ENOMEM.
 */
MCP_EXPORT int mcp_graph_from_json(const char *json, size_t len, struct mcp_graph_def **out,
				   struct mcp_graph_invalid *err);

/**
 * struct mcp_graph_demo_opts - the demo attention block's shape
 * @size:	in: sizeof(struct mcp_graph_demo_opts)
 * @seq:	rows of X (S), 0: 64
 * @model_dim:	columns of X (Dm), 0: 128
 * @heads:	0: 4; heads * head_dim must be model_dim
 * @head_dim:	0: 32
 * @seed:	weight seed, 0: the default (graph.hpp)
 */
struct mcp_graph_demo_opts {
	uint32_t size;
	uint32_t seq;
	uint32_t model_dim;
	uint32_t heads;
	uint32_t head_dim;
	uint32_t reserved;
	uint64_t seed;
};

/* mcp_graph_demo_attention() - the demo block; @opts NULL: defaults. */
MCP_EXPORT int mcp_graph_demo_attention(const struct mcp_graph_demo_opts *opts,
					struct mcp_graph_def **out);

/**
 * struct mcp_onnx_import_opts - how mcp_graph_import_onnx() fixes dims
 * @size:	in: sizeof(struct mcp_onnx_import_opts)
 * @n_inputs:	entries at @inputs
 * @inputs:	"NAME=DIMS" strings, e.g. "x=1x3x224x224": the dims of a
 *		graph input with dynamic dimensions
 * @default_batch: an unnamed dynamic first dimension; 0: 1
 */
struct mcp_onnx_import_opts {
	uint32_t size;
	uint32_t n_inputs;
	const char *const *inputs;
	uint32_t default_batch;
	uint32_t reserved;
};

/*
 * mcp_graph_import_onnx() - an ONNX model file (opsets 9..17) as a graph
 * (mcp::onnx::import(), Documentation/onnx.rst).  Its initializers are
 * in the definition's data section (MCP_GRAPH_INIT_DATA), which
 * mcp_graph_serialize() leaves out: save it with mcp_graph_save().
 * @opts NULL: defaults.  Return: 0, -EINVAL (the model cannot be imported;
 * mcp_strerror_last() names the file and every unsupported node),
 * -ENOENT and other errnos of reading the file, -ENOMEM.
 */
MCP_EXPORT int mcp_graph_import_onnx(const char *path, const struct mcp_onnx_import_opts *opts,
				     struct mcp_graph_def **out);
/*
 * mcp_graph_save() / mcp_graph_load() - a .mgph file: the binary graph
 * (compact) followed by its data section and notes (graphs.rst, "Data
 * section").  mcp_graph_load() validates; -EINVAL with @err as
 * mcp_graph_parse().
 */
MCP_EXPORT int mcp_graph_save(const struct mcp_graph_def *graph, const char *path);
MCP_EXPORT int mcp_graph_load(const char *path, struct mcp_graph_def **out,
			      struct mcp_graph_invalid *err);
/* mcp_graph_data_len() - bytes of its data section; 0 for NULL. */
MCP_EXPORT size_t mcp_graph_data_len(const struct mcp_graph_def *graph);

/* mcp_graph_new() - an empty definition named @name, for the mcp_graph_add_*(). */
MCP_EXPORT int mcp_graph_new(const char *name, struct mcp_graph_def **out);
/* mcp_graph_free() - release @graph (NULL is fine). */
MCP_EXPORT void mcp_graph_free(struct mcp_graph_def *graph);

/*
 * mcp_graph_serialize() - the binary form.  Writes at most @cap bytes at
 * @buf and always sets *@len to the full size: -ENOSPC when @cap is too
 * small (call with @buf NULL, @cap 0 to ask).  -EINVAL when the definition
 * cannot be encoded (more than 6 dims, 4 inputs, 2 outputs...).
 */
MCP_EXPORT int mcp_graph_serialize(const struct mcp_graph_def *graph, void *buf, size_t cap,
				   size_t *len);
/*
 * mcp_graph_serialize_as() - mcp_graph_serialize() in @encoding
 * (MCP_GRAPH_ENCODING_*; mcp_graph_serialize() writes compact); -EINVAL
 * for an unknown encoding.
 */
MCP_EXPORT int mcp_graph_serialize_as(const struct mcp_graph_def *graph, int encoding, void *buf,
				      size_t cap, size_t *len);
/*
 * mcp_graph_encoding() - MCP_GRAPH_ENCODING_* of binary bytes, from their
 * header only; -EINVAL when they do not start with a graph header of
 * version 1 or 2.
 */
MCP_EXPORT int mcp_graph_encoding(const void *data, size_t len);
/*
 * mcp_graph_to_json() - the JSON description, NUL-terminated; *@len is
 * its length without the NUL; -ENOSPC as mcp_graph_serialize().
 * @pretty: non-zero for indented output.
 */
MCP_EXPORT int mcp_graph_to_json(const struct mcp_graph_def *graph, int pretty, char *buf,
				 size_t cap, size_t *len);
/* mcp_graph_validate() - 0 if valid, else -EINVAL with @err; @limits as mcp_graph_check(). */
MCP_EXPORT int mcp_graph_validate(const struct mcp_graph_def *graph,
				  const struct mcp_graph_limits *limits,
				  struct mcp_graph_invalid *err);

/*
 * The builder (mcp::GraphBuilder): appends to @graph, which is not
 * validated until mcp_graph_validate().  *@index gets the new entry's
 * index.  mcp_graph_add_buffer(): @init NULL for none; its length grows as
 * tensors are added.  mcp_graph_add_tensor(): placed at the buffer's end,
 * on a 64-byte line.  mcp_graph_add_view(): a tensor over the same bytes
 * as tensor @of (another dtype, shape or layout).  @param may be NULL when
 * @param_len is 0.  Return: 0, -EINVAL (bad index, rank > 6, more than 4
 * inputs / 2 outputs, param over 256 bytes), -ENOMEM.
 */
MCP_EXPORT int mcp_graph_add_buffer(struct mcp_graph_def *graph, const char *name, uint32_t flags,
				    const struct mcp_graph_init *init, uint32_t *index);
MCP_EXPORT int mcp_graph_add_tensor(struct mcp_graph_def *graph, const char *name, uint32_t buffer,
				    uint32_t dtype, const uint32_t *dims, uint32_t rank,
				    uint32_t layout, uint32_t *index);
MCP_EXPORT int mcp_graph_add_view(struct mcp_graph_def *graph, const char *name, uint32_t of,
				  uint32_t dtype, const uint32_t *dims, uint32_t rank,
				  uint32_t layout, uint32_t *index);
MCP_EXPORT int mcp_graph_add_node(struct mcp_graph_def *graph, const char *name, uint32_t op,
				  uint32_t engine, const uint32_t *inputs, uint32_t n_inputs,
				  const uint32_t *outputs, uint32_t n_outputs, const void *param,
				  uint32_t param_len, uint32_t flags, uint32_t *index);

/* Counts; 0 for NULL. */
MCP_EXPORT uint32_t mcp_graph_buffer_count(const struct mcp_graph_def *graph);
MCP_EXPORT uint32_t mcp_graph_tensor_count(const struct mcp_graph_def *graph);
MCP_EXPORT uint32_t mcp_graph_node_count(const struct mcp_graph_def *graph);
/* mcp_graph_name() - its name; valid until @graph changes or is freed. */
MCP_EXPORT const char *mcp_graph_name(const struct mcp_graph_def *graph);

/**
 * struct mcp_graph_buffer_info - one buffer of a definition
 * @size:	in: sizeof(struct mcp_graph_buffer_info)
 * @flags:	MCP_GRAPH_BUFFER_*
 * @length:	bytes
 * @has_init:	1 when @init is set
 * @init:	how it is filled
 * @name:	valid until the definition changes or is freed
 */
struct mcp_graph_buffer_info {
	uint32_t size;
	uint32_t flags;
	uint64_t length;
	uint32_t has_init;
	uint32_t reserved;
	struct mcp_graph_init init;
	const char *name;
};

/**
 * struct mcp_graph_tensor_info - one tensor of a definition
 * @size:	in: sizeof(struct mcp_graph_tensor_info)
 * @buffer, @dtype, @layout, @rank, @dims, @offset: as in the binary
 * @bytes:	product of dims times the element size (unpadded)
 * @name:	valid until the definition changes or is freed
 */
struct mcp_graph_tensor_info {
	uint32_t size;
	uint32_t buffer;
	uint32_t dtype;
	uint32_t layout;
	uint32_t rank;
	uint32_t dims[6];
	uint64_t offset;
	uint64_t bytes;
	const char *name;
};

/**
 * struct mcp_graph_node_info - one node of a definition
 * @size:	in: sizeof(struct mcp_graph_node_info)
 * @op, @engine, @flags: MCP_GRAPH_OP_*, MCP_GRAPH_CLASS_*, MCP_GRAPH_INPLACE
 * @n_inputs, @inputs, @n_outputs, @outputs: tensor indices
 * @param_len:	bytes at @param (valid as @name)
 * @name:	valid until the definition changes or is freed
 */
struct mcp_graph_node_info {
	uint32_t size;
	uint32_t op;
	uint32_t engine;
	uint32_t flags;
	uint32_t n_inputs;
	uint32_t inputs[4];
	uint32_t n_outputs;
	uint32_t outputs[2];
	uint32_t param_len;
	const void *param;
	const char *name;
};

/* Entry @index; -ENOENT past the end, -EINVAL for NULL or a short @size. */
MCP_EXPORT int mcp_graph_get_buffer(const struct mcp_graph_def *graph, uint32_t index,
				    struct mcp_graph_buffer_info *info);
MCP_EXPORT int mcp_graph_get_tensor(const struct mcp_graph_def *graph, uint32_t index,
				    struct mcp_graph_tensor_info *info);
MCP_EXPORT int mcp_graph_get_node(const struct mcp_graph_def *graph, uint32_t index,
				  struct mcp_graph_node_info *info);

/*
 * mcp_graph_topo_order() - the node indices in an order that respects
 * every dependency (Kahn's algorithm, lowest ready index first).  @order
 * has room for @n entries; must be at least the node count (-ENOSPC).
 * -EINVAL with the message naming the node on a cycle.
 */
MCP_EXPORT int mcp_graph_topo_order(const struct mcp_graph_def *graph, uint32_t *order, uint32_t n);
/*
 * mcp_graph_successors() / _predecessors() - the nodes that wait for node
 * @node / that it waits for, ascending.  Writes at most @cap indices at
 * @out, sets *@count to how many there are; -ENOSPC when @cap is short.
 */
MCP_EXPORT int mcp_graph_successors(const struct mcp_graph_def *graph, uint32_t node,
				    uint32_t *out, uint32_t cap, uint32_t *count);
MCP_EXPORT int mcp_graph_predecessors(const struct mcp_graph_def *graph, uint32_t node,
				      uint32_t *out, uint32_t cap, uint32_t *count);

/*
 * mcp_graph_fill() - fills @len bytes at @data as @init says (struct
 * mcp_graph_init has the exact stream) for element type @dtype
 * (MCP_GRAPH_DTYPE_*): kinds 1 and 3 want F32, kind 2 I8.  -EINVAL
 * otherwise.
 */
MCP_EXPORT int mcp_graph_fill(const struct mcp_graph_init *init, uint32_t dtype, void *data,
			      size_t len);

/* Names used by JSON and mcpctl: "f32", "nhwc", "matmul", "worker", "shape"; "unknown" otherwise. */
MCP_EXPORT const char *mcp_graph_dtype_name(uint32_t dtype);
MCP_EXPORT const char *mcp_graph_layout_name(uint32_t layout);
MCP_EXPORT const char *mcp_graph_op_name(uint32_t op);
MCP_EXPORT const char *mcp_graph_class_name(uint32_t engine);
MCP_EXPORT const char *mcp_graph_error_name(uint32_t reason);

#ifdef __cplusplus
}
#endif

#endif /* MCP_GRAPH_H */
