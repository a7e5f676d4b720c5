/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The graph definition C API (<mcp/graph.h>), compiled as C: build a graph
 * with the builder mirror, serialize, parse, JSON, validation errors with
 * (reason, kind, index) and a message, accessors, NULL and size checks.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>
#include <mcp/mcp.h>

static struct mcp_graph_def *build_relu(void)
{
	struct mcp_graph_def *g = NULL;
	struct mcp_graph_init init = { .kind = MCP_GRAPH_INIT_CONSTANT_F32, .scale = 2.0f };
	const uint32_t dims[2] = { 4, 8 };
	uint32_t b, x, y, n, w;

	cr_assert_eq(mcp_graph_new("relu", &g), 0);
	cr_assert_eq(mcp_graph_add_buffer(g, "io", MCP_GRAPH_BUFFER_INPUT, &init, &b), 0);
	cr_assert_eq(mcp_graph_add_tensor(g, "x", b, MCP_GRAPH_DTYPE_F32, dims, 2,
					  MCP_GRAPH_LAYOUT_DENSE, &x), 0);
	cr_assert_eq(mcp_graph_add_tensor(g, "y", b, MCP_GRAPH_DTYPE_F32, dims, 2,
					  MCP_GRAPH_LAYOUT_DENSE, &y), 0);
	cr_assert_eq(mcp_graph_add_view(g, "y_flat", y, MCP_GRAPH_DTYPE_F32,
					(const uint32_t[]){ 32 }, 1, MCP_GRAPH_LAYOUT_DENSE, &w), 0);
	cr_assert_eq(mcp_graph_add_node(g, "relu", MCP_GRAPH_OP_RELU, MCP_GRAPH_CLASS_WORKER,
					&x, 1, &y, 1, NULL, 0, 0, &n), 0);
	cr_expect_eq(y, 1);
	cr_expect_eq(w, 2);
	cr_expect_eq(n, 0);
	return g;
}

Test(graph_c_api, build_serialize_parse)
{
	struct mcp_graph_def *g = build_relu(), *back = NULL;
	struct mcp_graph_invalid err = { .size = sizeof(err) };
	struct mcp_graph_tensor_info t = { .size = sizeof(t) };
	struct mcp_graph_node_info n = { .size = sizeof(n) };
	struct mcp_graph_buffer_info b = { .size = sizeof(b) };
	size_t len = 0;
	void *bytes;

	cr_expect_eq(mcp_graph_validate(g, NULL, &err), 0);
	cr_expect_eq(mcp_graph_serialize(g, NULL, 0, &len), -ENOSPC);
	cr_assert_gt(len, 48);
	bytes = malloc(len);
	cr_assert_eq(mcp_graph_serialize(g, bytes, len, &len), 0);
	cr_expect_eq(mcp_graph_check(bytes, len, NULL, &err), 0);
	cr_assert_eq(mcp_graph_parse(bytes, len, &back, &err), 0);
	cr_expect_str_eq(mcp_graph_name(back), "relu");
	cr_expect_eq(mcp_graph_buffer_count(back), 1);
	cr_expect_eq(mcp_graph_tensor_count(back), 3);
	cr_expect_eq(mcp_graph_node_count(back), 1);

	cr_assert_eq(mcp_graph_get_tensor(back, 1, &t), 0);
	cr_expect_eq(t.offset, 128);
	cr_expect_eq(t.bytes, 128);
	cr_expect_eq(t.rank, 2);
	cr_expect_str_eq(t.name, "y");
	cr_assert_eq(mcp_graph_get_tensor(back, 2, &t), 0);
	cr_expect_eq(t.offset, 128);	/* the view */
	cr_assert_eq(mcp_graph_get_node(back, 0, &n), 0);
	cr_expect_eq(n.op, MCP_GRAPH_OP_RELU);
	cr_expect_eq(n.n_inputs, 1);
	cr_expect_eq(n.outputs[0], 1);
	cr_expect_str_eq(n.name, "relu");
	cr_assert_eq(mcp_graph_get_buffer(back, 0, &b), 0);
	cr_expect_eq(b.length, 256);
	cr_expect_eq(b.has_init, 1);
	cr_expect_eq(b.init.scale, 2.0f);
	cr_expect_eq(mcp_graph_get_node(back, 1, &n), -ENOENT);

	/* Truncated: HEADER, with the sentence. */
	cr_expect_eq(mcp_graph_parse(bytes, len - 8, &back, &err), -EINVAL);
	cr_expect_eq(err.reason, MCP_GRAPH_ERROR_HEADER);
	cr_expect_eq(err.kind, MCP_GRAPH_AT_HEADER_ENTRY);
	cr_expect_neq(strstr(err.message, "total_len"), NULL, "%s", err.message);
	cr_expect_str_eq(mcp_strerror_last(), err.message);

	free(bytes);
	mcp_graph_free(back);
	mcp_graph_free(g);
}

/* Both encodings: the default is compact, both parse to the same graph. */
Test(graph_c_api, encodings)
{
	struct mcp_graph_def *g = build_relu(), *a = NULL, *b = NULL;
	size_t compact_len = 0, fixed_len = 0, len = 0;
	unsigned char compact[1024], fixed[1024], dflt[1024];
	char json_a[2048], json_b[2048];

	cr_assert_eq(mcp_graph_serialize_as(g, MCP_GRAPH_ENCODING_COMPACT, compact,
					    sizeof(compact), &compact_len), 0);
	cr_assert_eq(mcp_graph_serialize_as(g, MCP_GRAPH_ENCODING_FIXED, fixed, sizeof(fixed),
					    &fixed_len), 0);
	cr_assert_eq(mcp_graph_serialize(g, dflt, sizeof(dflt), &len), 0);
	cr_expect_eq(len, compact_len);
	cr_expect_eq(memcmp(dflt, compact, len), 0);
	cr_expect_lt(compact_len, fixed_len);
	cr_expect_eq(mcp_graph_encoding(compact, compact_len), MCP_GRAPH_ENCODING_COMPACT);
	cr_expect_eq(mcp_graph_encoding(fixed, fixed_len), MCP_GRAPH_ENCODING_FIXED);
	cr_expect_eq(mcp_graph_encoding(fixed, 40), -EINVAL);
	cr_expect_eq(mcp_graph_serialize_as(g, 3, compact, sizeof(compact), &len), -EINVAL);
	cr_expect_neq(strstr(mcp_strerror_last(), "MCP_GRAPH_ENCODING_FIXED"), NULL);

	cr_assert_eq(mcp_graph_parse(compact, compact_len, &a, NULL), 0);
	cr_assert_eq(mcp_graph_parse(fixed, fixed_len, &b, NULL), 0);
	cr_assert_eq(mcp_graph_to_json(a, 0, json_a, sizeof(json_a), &len), 0);
	cr_assert_eq(mcp_graph_to_json(b, 0, json_b, sizeof(json_b), &len), 0);
	cr_expect_str_eq(json_a, json_b);
	cr_expect_str_eq(mcp_feature_name(MCP_FEATURE_GRAPH_COMPACT), "graph-compact");
	cr_expect_str_eq(mcp_feature_name(MCP_FEATURE_WORKER_OPS), "worker-ops");
	mcp_graph_free(a);
	mcp_graph_free(b);
	mcp_graph_free(g);
}

Test(graph_c_api, validation_error_fields)
{
	struct mcp_graph_def *g = build_relu();
	struct mcp_graph_invalid err = { .size = sizeof(err) };
	uint32_t x = 0, n;

	/* relu x -> x without the inplace flag: ALIAS at node 1. */
	cr_assert_eq(mcp_graph_add_node(g, "again", MCP_GRAPH_OP_RELU, MCP_GRAPH_CLASS_WORKER,
					&x, 1, &x, 1, NULL, 0, 0, &n), 0);
	cr_expect_eq(mcp_graph_validate(g, NULL, &err), -EINVAL);
	cr_expect_eq(err.reason, MCP_GRAPH_ERROR_ALIAS);
	cr_expect_eq(err.kind, MCP_GRAPH_AT_NODE_ENTRY);
	cr_expect_eq(err.index, 1);
	cr_expect_neq(strstr(err.message, "node 1 (relu 'again')"), NULL, "%s", err.message);
	cr_expect_str_eq(mcp_graph_error_name(err.reason), "alias");
	mcp_graph_free(g);
}

Test(graph_c_api, json_and_demo)
{
	struct mcp_graph_def *demo = NULL, *back = NULL;
	struct mcp_graph_invalid err = { .size = sizeof(err) };
	uint32_t order[64], succ[64], count = 0;
	size_t len = 0;
	char *text;

	cr_assert_eq(mcp_graph_demo_attention(NULL, &demo), 0);
	cr_expect_eq(mcp_graph_node_count(demo), 36);
	cr_expect_eq(mcp_graph_to_json(demo, 0, NULL, 0, &len), -ENOSPC);
	text = malloc(len + 1);
	cr_assert_eq(mcp_graph_to_json(demo, 0, text, len + 1, &len), 0);
	cr_expect_eq(strlen(text), len);
	cr_assert_eq(mcp_graph_from_json(text, len, &back, &err), 0);
	cr_expect_eq(mcp_graph_node_count(back), 36);

	cr_expect_eq(mcp_graph_topo_order(demo, order, 2), -ENOSPC);
	cr_expect_eq(mcp_graph_topo_order(demo, order, 64), 0);
	cr_expect_eq(order[0], 0);	/* quantize_x first */
	cr_expect_eq(mcp_graph_successors(demo, 0, succ, 64, &count), 0);
	cr_expect_eq(count, 1);
	cr_expect_eq(succ[0], 1);	/* dequantize_x */
	cr_expect_eq(mcp_graph_predecessors(demo, 0, succ, 64, &count), 0);
	cr_expect_eq(count, 0);

	const char *conv = "{\"buffers\":[],\"tensors\":[],\"nodes\":[{\"op\":\"conv3d\"}]}";
	cr_expect_eq(mcp_graph_from_json(conv, strlen(conv), &back, &err), -EINVAL);
	cr_expect_str_eq(mcp_strerror_last(), "nodes[0].op: unknown operator 'conv3d'");
	cr_expect_eq(err.reason, MCP_GRAPH_ERROR_NONE);

	struct mcp_graph_demo_opts bad = { .size = sizeof(bad), .heads = 3 };
	cr_expect_eq(mcp_graph_demo_attention(&bad, &back), -EINVAL);
	free(text);
	mcp_graph_free(back);
	mcp_graph_free(demo);
}

Test(graph_c_api, fill_and_names)
{
	struct mcp_graph_init init = { .kind = MCP_GRAPH_INIT_UNIFORM_I8, .seed = 3 };
	int8_t q[16];
	float f[4];

	cr_expect_eq(mcp_graph_fill(&init, MCP_GRAPH_DTYPE_I8, q, sizeof(q)), 0);
	cr_expect_eq(mcp_graph_fill(&init, MCP_GRAPH_DTYPE_F32, f, sizeof(f)), -EINVAL);
	init.kind = MCP_GRAPH_INIT_CONSTANT_F32;
	init.scale = -0.5f;
	cr_expect_eq(mcp_graph_fill(&init, MCP_GRAPH_DTYPE_F32, f, sizeof(f)), 0);
	cr_expect_eq(f[3], -0.5f);
	cr_expect_str_eq(mcp_graph_op_name(MCP_GRAPH_OP_SOFTMAX), "softmax");
	cr_expect_str_eq(mcp_graph_dtype_name(MCP_GRAPH_DTYPE_U8), "u8");
	cr_expect_str_eq(mcp_graph_layout_name(MCP_GRAPH_LAYOUT_NHWC), "nhwc");
	cr_expect_str_eq(mcp_graph_class_name(MCP_GRAPH_CLASS_DEVICE), "device");
	cr_expect_str_eq(mcp_graph_op_name(1000), "unknown");
}

Test(graph_c_api, null_and_bad_arguments)
{
	struct mcp_graph_def *g = build_relu();
	struct mcp_graph_node_info small = { .size = 4 };
	uint32_t idx;
	size_t len;

	cr_expect_eq(mcp_graph_parse(NULL, 10, &g, NULL), -EINVAL);
	cr_expect_eq(mcp_graph_new("x", NULL), -EINVAL);
	cr_expect_eq(mcp_graph_serialize(NULL, NULL, 0, &len), -EINVAL);
	cr_expect_eq(mcp_graph_get_node(g, 0, &small), -EINVAL);
	cr_expect_eq(mcp_graph_add_tensor(g, "t", 7, MCP_GRAPH_DTYPE_F32, (const uint32_t[]){ 1 }, 1,
					  MCP_GRAPH_LAYOUT_DENSE, &idx), -EINVAL);
	cr_expect_eq(mcp_graph_add_node(g, "n", MCP_GRAPH_OP_WNOP, MCP_GRAPH_CLASS_WORKER, NULL, 5,
					NULL, 0, NULL, 0, 0, &idx), -EINVAL);
	/* A refused add leaves the definition as it was. */
	cr_expect_eq(mcp_graph_tensor_count(g), 3);
	cr_expect_eq(mcp_graph_node_count(NULL), 0);
	mcp_graph_free(NULL);
	mcp_graph_free(g);
}
