// SPDX-License-Identifier: LGPL-2.1-or-later
// The C API of graph definitions (<mcp/graph.h>) over mcp::GraphDef and
// mcp::GraphBuilder.  No exception crosses this boundary.
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <new>
#include <string>

#include <fstream>
#include <iterator>

#include <mcp/onnx.hpp>

#include "graph_internal.hpp"

struct mcp_graph_def {
	mcp::GraphDef def;
};

const mcp::GraphDef &mcp::detail::graph_def_of(const struct mcp_graph_def *graph)
{
	return graph->def;
}

static_assert(MCP_GRAPH_DTYPE_F32 == MCP_DTYPE_F32 && MCP_GRAPH_DTYPE_I32 == MCP_DTYPE_I32);
static_assert(MCP_GRAPH_LAYOUT_TILED16 == MCP_LAYOUT_TILED16);
static_assert(MCP_GRAPH_OP_NOP == MCP_OP_NOP && MCP_GRAPH_OP_DEQUANT_I8 == MCP_OP_DEQUANT_I8 &&
	      MCP_GRAPH_OP_WNOP == MCP_OP_WNOP && MCP_GRAPH_OP_MATMUL_I8 == MCP_OP_MATMUL_I8);
static_assert(MCP_GRAPH_CLASS_CPU == MCP_GRAPH_ENGINE_CPU &&
	      MCP_GRAPH_CLASS_DEVICE == MCP_GRAPH_ENGINE_DEVICE &&
	      MCP_GRAPH_CLASS_WORKER == MCP_GRAPH_ENGINE_WORKER);
static_assert(MCP_GRAPH_BUFFER_INPUT == MCP_GRAPH_BUF_INPUT &&
	      MCP_GRAPH_BUFFER_OUTPUT == MCP_GRAPH_BUF_OUTPUT &&
	      MCP_GRAPH_BUFFER_CONST == MCP_GRAPH_BUF_CONST);
static_assert(MCP_GRAPH_INPLACE == MCP_GRAPH_NODE_INPLACE);
static_assert(MCP_GRAPH_MATMUL_TRANS_A == MCP_MATMUL_TRANS_A &&
	      MCP_GRAPH_MATMUL_TRANS_B == MCP_MATMUL_TRANS_B);
static_assert(MCP_GRAPH_ERROR_HEADER == MCP_GRAPH_ERR_HEADER &&
	      MCP_GRAPH_ERROR_CYCLE == MCP_GRAPH_ERR_CYCLE &&
	      MCP_GRAPH_ERROR_ENCODING == MCP_GRAPH_ERR_ENCODING);
static_assert(MCP_GRAPH_AT_NODE_ENTRY == MCP_GRAPH_AT_NODE);
static_assert(MCP_FEATURE_GRAPHS == MCP_FEAT_GRAPHS);
static_assert(MCP_FEATURE_GRAPH_COMPACT == MCP_FEAT_GRAPH_COMPACT);
static_assert(MCP_FEATURE_WORKER_OPS == MCP_FEAT_WORKER_OPS);
static_assert(MCP_GRAPH_ENCODING_FIXED == MCP_GRAPH_VERSION &&
	      MCP_GRAPH_ENCODING_COMPACT == MCP_GRAPH_VERSION_COMPACT);

using mcp::detail::c_api_fail;
using mcp::detail::c_api_guard;

namespace {

void clear_error(struct mcp_graph_invalid *err) noexcept
{
	if (!err || err->size < sizeof(*err))
		return;
	const std::uint32_t size = err->size;
	std::memset(err, 0, sizeof(*err));
	err->size = size;
}

// Runs @fn at the C boundary; a GraphInvalid also fills @err.
template <typename Fn>
int graph_guard(struct mcp_graph_invalid *err, Fn &&fn) noexcept
{
	clear_error(err);
	return c_api_guard([&] {
		try {
			return fn();
		} catch (const mcp::GraphInvalid &e) {
			mcp::detail::put_graph_invalid(err, e.error());
			throw;
		}
	});
}

mcp::GraphLimits limits_of(const struct mcp_graph_limits *l) noexcept
{
	mcp::GraphLimits out;

	if (!l || l->size < sizeof(*l))
		return out;
	if (l->max_nodes)
		out.max_nodes = l->max_nodes;
	if (l->max_tensors)
		out.max_tensors = l->max_tensors;
	if (l->max_blob)
		out.max_blob = l->max_blob;
	return out;
}

mcp::GraphInit init_of(const struct mcp_graph_init &i) noexcept
{
	return {static_cast<mcp::InitKind>(i.kind), i.seed, i.scale};
}

struct mcp_graph_init init_to_c(const mcp::GraphInit &i) noexcept
{
	struct mcp_graph_init out {};

	out.kind = static_cast<std::uint32_t>(i.kind);
	out.seed = i.seed;
	out.scale = i.scale;
	return out;
}

// Copies @n bytes to @buf when @cap holds them; *@len gets @n.
int copy_out(const void *bytes, std::size_t n, void *buf, std::size_t cap, std::size_t *len)
{
	*len = n;
	if (cap < n)
		return c_api_fail(ENOSPC, "the buffer is too small: *len says how many bytes are needed");
	std::memcpy(buf, bytes, n);
	return 0;
}

template <typename Fn>
int add_entry(struct mcp_graph_def *graph, uint32_t *index, const char *what, Fn &&fn) noexcept
{
	if (!graph || !index)
		return c_api_fail(EINVAL, (std::string(what) + ": graph or index is NULL").c_str());
	return graph_guard(nullptr, [&] {
		mcp::GraphBuilder b(std::move(graph->def));
		try {
			*index = fn(b);
		} catch (...) {
			graph->def = b.def();
			throw;
		}
		graph->def = b.def();
		return 0;
	});
}

int list_out(const std::vector<std::uint32_t> &list, uint32_t *out, uint32_t cap, uint32_t *count)
{
	*count = static_cast<uint32_t>(list.size());
	if (cap < list.size())
		return c_api_fail(ENOSPC, "the list is longer than cap: *count says how long");
	std::copy(list.begin(), list.end(), out);
	return 0;
}

} // namespace

extern "C" {

int mcp_graph_parse(const void *data, size_t len, struct mcp_graph_def **out,
		    struct mcp_graph_invalid *err)
{
	if ((!data && len) || !out)
		return c_api_fail(EINVAL, "mcp_graph_parse: data or out is NULL");
	return graph_guard(err, [&] {
		auto handle = std::make_unique<mcp_graph_def>();
		handle->def = mcp::GraphDef::parse({static_cast<const std::byte *>(data), len});
		*out = handle.release();
		return 0;
	});
}

int mcp_graph_check(const void *data, size_t len, const struct mcp_graph_limits *limits,
		    struct mcp_graph_invalid *err)
{
	if (!data && len)
		return c_api_fail(EINVAL, "mcp_graph_check: data is NULL");
	return graph_guard(err, [&] {
		const auto e = mcp::check_graph({static_cast<const std::byte *>(data), len},
						limits_of(limits));
		if (e)
			throw mcp::GraphInvalid(*e);
		return 0;
	});
}

int mcp_graph_from_json(const char *json, size_t len, struct mcp_graph_def **out,
			struct mcp_graph_invalid *err)
{
	if ((!json && len) || !out)
		return c_api_fail(EINVAL, "mcp_graph_from_json: json or out is NULL");
	return graph_guard(err, [&] {
		auto handle = std::make_unique<mcp_graph_def>();
		handle->def = mcp::GraphDef::from_json(std::string_view(json, len));
		*out = handle.release();
		return 0;
	});
}

int mcp_graph_demo_attention(const struct mcp_graph_demo_opts *opts, struct mcp_graph_def **out)
{
	if (!out || (opts && opts->size < sizeof(*opts)))
		return c_api_fail(EINVAL, "mcp_graph_demo_attention: out is NULL or opts->size is too small");
	return graph_guard(nullptr, [&] {
		mcp::DemoAttentionOptions o;
		if (opts) {
			if (opts->seq)
				o.seq = opts->seq;
			if (opts->model_dim)
				o.model_dim = opts->model_dim;
			if (opts->heads)
				o.heads = opts->heads;
			if (opts->head_dim)
				o.head_dim = opts->head_dim;
			if (opts->seed)
				o.seed = opts->seed;
		}
		auto handle = std::make_unique<mcp_graph_def>();
		handle->def = mcp::demo_attention_block(o);
		*out = handle.release();
		return 0;
	});
}

int mcp_graph_import_onnx(const char *path, const struct mcp_onnx_import_opts *opts,
			  struct mcp_graph_def **out)
{
	if (!path || !out || (opts && opts->size < sizeof(*opts)) ||
	    (opts && opts->n_inputs && !opts->inputs))
		return c_api_fail(EINVAL, "mcp_graph_import_onnx: path or out is NULL, opts->size is "
					  "too small or opts->inputs is NULL");
	return graph_guard(nullptr, [&] {
		mcp::onnx::ImportOptions o;
		if (opts) {
			for (std::uint32_t i = 0; i < opts->n_inputs; i++) {
				if (!opts->inputs[i])
					throw mcp::Error(EINVAL, "mcp_graph_import_onnx: inputs[" +
									 std::to_string(i) + "] is NULL");
				o.inputs.push_back(mcp::onnx::parse_input_spec(opts->inputs[i]));
			}
			if (opts->default_batch)
				o.default_batch = opts->default_batch;
		}
		auto handle = std::make_unique<mcp_graph_def>();
		handle->def = mcp::onnx::import(path, o);
		*out = handle.release();
		return 0;
	});
}

int mcp_graph_save(const struct mcp_graph_def *graph, const char *path)
{
	if (!graph || !path)
		return c_api_fail(EINVAL, "mcp_graph_save: graph or path is NULL");
	return graph_guard(nullptr, [&] {
		const auto bytes = graph->def.serialize_file();
		std::ofstream f(path, std::ios::binary | std::ios::trunc);
		if (f)
			f.write(reinterpret_cast<const char *>(bytes.data()),
				static_cast<std::streamsize>(bytes.size()));
		if (!f)
			throw mcp::Error(errno ? errno : EIO, std::string(path) + ": cannot write: " +
								      std::strerror(errno ? errno : EIO));
		return 0;
	});
}

int mcp_graph_load(const char *path, struct mcp_graph_def **out, struct mcp_graph_invalid *err)
{
	if (!path || !out)
		return c_api_fail(EINVAL, "mcp_graph_load: path or out is NULL");
	return graph_guard(err, [&] {
		std::ifstream f(path, std::ios::binary);
		if (!f)
			throw mcp::Error(errno ? errno : ENOENT, std::string(path) + ": cannot open: " +
									 std::strerror(errno ? errno : ENOENT));
		std::vector<char> raw((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
		auto handle = std::make_unique<mcp_graph_def>();
		handle->def = mcp::GraphDef::parse_file(std::as_bytes(std::span(raw.data(), raw.size())));
		*out = handle.release();
		return 0;
	});
}

size_t mcp_graph_data_len(const struct mcp_graph_def *graph)
{
	return graph ? graph->def.data.size() : 0;
}

int mcp_graph_new(const char *name, struct mcp_graph_def **out)
{
	if (!out)
		return c_api_fail(EINVAL, "mcp_graph_new: out is NULL");
	return graph_guard(nullptr, [&] {
		auto handle = std::make_unique<mcp_graph_def>();
		handle->def.name = name ? name : "";
		*out = handle.release();
		return 0;
	});
}

void mcp_graph_free(struct mcp_graph_def *graph)
{
	std::unique_ptr<mcp_graph_def> owned(graph);
}

int mcp_graph_serialize(const struct mcp_graph_def *graph, void *buf, size_t cap, size_t *len)
{
	if (!graph || !len || (!buf && cap))
		return c_api_fail(EINVAL, "mcp_graph_serialize: graph or len is NULL");
	return graph_guard(nullptr, [&] {
		const auto bytes = graph->def.serialize();
		return copy_out(bytes.data(), bytes.size(), buf, cap, len);
	});
}

int mcp_graph_serialize_as(const struct mcp_graph_def *graph, int encoding, void *buf, size_t cap,
			   size_t *len)
{
	if (!graph || !len || (!buf && cap))
		return c_api_fail(EINVAL, "mcp_graph_serialize_as: graph or len is NULL");
	if (encoding != MCP_GRAPH_ENCODING_FIXED && encoding != MCP_GRAPH_ENCODING_COMPACT)
		return c_api_fail(EINVAL, "mcp_graph_serialize_as: the encoding is neither "
					  "MCP_GRAPH_ENCODING_FIXED nor MCP_GRAPH_ENCODING_COMPACT");
	return graph_guard(nullptr, [&] {
		const auto bytes = graph->def.serialize(static_cast<mcp::GraphEncoding>(encoding));
		return copy_out(bytes.data(), bytes.size(), buf, cap, len);
	});
}

int mcp_graph_encoding(const void *data, size_t len)
{
	if (!data && len)
		return c_api_fail(EINVAL, "mcp_graph_encoding: data is NULL");
	const auto e = mcp::graph_encoding({static_cast<const std::byte *>(data), len});
	if (!e)
		return c_api_fail(EINVAL, "not a graph header of format version 1 or 2");
	return static_cast<int>(*e);
}

int mcp_graph_to_json(const struct mcp_graph_def *graph, int pretty, char *buf, size_t cap,
		      size_t *len)
{
	if (!graph || !len || (!buf && cap))
		return c_api_fail(EINVAL, "mcp_graph_to_json: graph or len is NULL");
	return graph_guard(nullptr, [&] {
		const std::string text = graph->def.to_json(pretty != 0);
		// The NUL is copied, not counted.
		const int ret = copy_out(text.c_str(), text.size() + 1, buf, cap, len);
		*len = text.size();
		return ret;
	});
}

int mcp_graph_validate(const struct mcp_graph_def *graph, const struct mcp_graph_limits *limits,
		       struct mcp_graph_invalid *err)
{
	if (!graph)
		return c_api_fail(EINVAL, "mcp_graph_validate: graph is NULL");
	return graph_guard(err, [&] {
		if (auto e = graph->def.validate(limits_of(limits)))
			throw mcp::GraphInvalid(*e);
		return 0;
	});
}

int mcp_graph_add_buffer(struct mcp_graph_def *graph, const char *name, uint32_t flags,
			 const struct mcp_graph_init *init, uint32_t *index)
{
	return add_entry(graph, index, "mcp_graph_add_buffer", [&](mcp::GraphBuilder &b) {
		std::optional<mcp::GraphInit> i;
		if (init)
			i = init_of(*init);
		return b.buffer(name ? name : "", flags, i);
	});
}

int mcp_graph_add_tensor(struct mcp_graph_def *graph, const char *name, uint32_t buffer,
			 uint32_t dtype, const uint32_t *dims, uint32_t rank, uint32_t layout,
			 uint32_t *index)
{
	if (rank && !dims)
		return c_api_fail(EINVAL, "mcp_graph_add_tensor: dims is NULL");
	return add_entry(graph, index, "mcp_graph_add_tensor", [&](mcp::GraphBuilder &b) {
		return b.tensor(name ? name : "", buffer, static_cast<mcp::DType>(dtype),
				{dims, dims + rank}, static_cast<mcp::Layout>(layout));
	});
}

int mcp_graph_add_view(struct mcp_graph_def *graph, const char *name, uint32_t of, uint32_t dtype,
		       const uint32_t *dims, uint32_t rank, uint32_t layout, uint32_t *index)
{
	if (rank && !dims)
		return c_api_fail(EINVAL, "mcp_graph_add_view: dims is NULL");
	return add_entry(graph, index, "mcp_graph_add_view", [&](mcp::GraphBuilder &b) {
		return b.view(name ? name : "", of, static_cast<mcp::DType>(dtype), {dims, dims + rank},
			      static_cast<mcp::Layout>(layout));
	});
}

int mcp_graph_add_node(struct mcp_graph_def *graph, const char *name, uint32_t op, uint32_t engine,
		       const uint32_t *inputs, uint32_t n_inputs, const uint32_t *outputs,
		       uint32_t n_outputs, const void *param, uint32_t param_len, uint32_t flags,
		       uint32_t *index)
{
	if ((n_inputs && !inputs) || (n_outputs && !outputs) || (param_len && !param))
		return c_api_fail(EINVAL, "mcp_graph_add_node: inputs, outputs or param is NULL");
	if (op > UINT16_MAX || engine > UINT8_MAX || flags > UINT8_MAX)
		return c_api_fail(EINVAL, "mcp_graph_add_node: op, engine or flags out of range");
	return add_entry(graph, index, "mcp_graph_add_node", [&](mcp::GraphBuilder &b) {
		const auto *p = static_cast<const std::byte *>(param);
		return b.node(static_cast<mcp::Op>(op), static_cast<mcp::EngineClass>(engine),
			      {inputs, inputs + n_inputs}, {outputs, outputs + n_outputs},
			      {p, p + param_len}, name ? name : "", static_cast<std::uint8_t>(flags));
	});
}

uint32_t mcp_graph_buffer_count(const struct mcp_graph_def *graph)
{
	return graph ? static_cast<uint32_t>(graph->def.buffers.size()) : 0;
}

uint32_t mcp_graph_tensor_count(const struct mcp_graph_def *graph)
{
	return graph ? static_cast<uint32_t>(graph->def.tensors.size()) : 0;
}

uint32_t mcp_graph_node_count(const struct mcp_graph_def *graph)
{
	return graph ? static_cast<uint32_t>(graph->def.nodes.size()) : 0;
}

const char *mcp_graph_name(const struct mcp_graph_def *graph)
{
	return graph ? graph->def.name.c_str() : "";
}

int mcp_graph_get_buffer(const struct mcp_graph_def *graph, uint32_t index,
			 struct mcp_graph_buffer_info *info)
{
	if (!graph || !info || info->size < sizeof(*info))
		return c_api_fail(EINVAL, "mcp_graph_get_buffer: graph or info is NULL, or info->size is too small");
	if (index >= graph->def.buffers.size())
		return c_api_fail(ENOENT, "mcp_graph_get_buffer: no buffer with that index");

	const auto &b = graph->def.buffers[index];
	const std::uint32_t size = info->size;

	std::memset(info, 0, sizeof(*info));
	info->size = size;
	info->flags = b.flags;
	info->length = b.length;
	info->has_init = b.init.has_value();
	if (b.init)
		info->init = init_to_c(*b.init);
	info->name = b.name.c_str();
	return 0;
}

int mcp_graph_get_tensor(const struct mcp_graph_def *graph, uint32_t index,
			 struct mcp_graph_tensor_info *info)
{
	if (!graph || !info || info->size < sizeof(*info))
		return c_api_fail(EINVAL, "mcp_graph_get_tensor: graph or info is NULL, or info->size is too small");
	if (index >= graph->def.tensors.size())
		return c_api_fail(ENOENT, "mcp_graph_get_tensor: no tensor with that index");

	const auto &t = graph->def.tensors[index];
	const std::uint32_t size = info->size;

	std::memset(info, 0, sizeof(*info));
	info->size = size;
	info->buffer = t.buffer;
	info->dtype = static_cast<uint32_t>(t.dtype);
	info->layout = static_cast<uint32_t>(t.layout);
	info->rank = static_cast<uint32_t>(std::min<std::size_t>(t.dims.size(), 6));
	std::copy_n(t.dims.begin(), info->rank, info->dims);
	info->offset = t.offset;
	info->bytes = t.bytes().value_or(0);
	info->name = t.name.c_str();
	return 0;
}

int mcp_graph_get_node(const struct mcp_graph_def *graph, uint32_t index,
		       struct mcp_graph_node_info *info)
{
	if (!graph || !info || info->size < sizeof(*info))
		return c_api_fail(EINVAL, "mcp_graph_get_node: graph or info is NULL, or info->size is too small");
	if (index >= graph->def.nodes.size())
		return c_api_fail(ENOENT, "mcp_graph_get_node: no node with that index");

	const auto &n = graph->def.nodes[index];
	const std::uint32_t size = info->size;

	std::memset(info, 0, sizeof(*info));
	info->size = size;
	info->op = static_cast<uint32_t>(n.op);
	info->engine = static_cast<uint32_t>(n.engine);
	info->flags = n.flags;
	info->n_inputs = static_cast<uint32_t>(std::min<std::size_t>(n.inputs.size(), 4));
	std::copy_n(n.inputs.begin(), info->n_inputs, info->inputs);
	info->n_outputs = static_cast<uint32_t>(std::min<std::size_t>(n.outputs.size(), 2));
	std::copy_n(n.outputs.begin(), info->n_outputs, info->outputs);
	info->param_len = static_cast<uint32_t>(n.param.size());
	info->param = n.param.empty() ? nullptr : n.param.data();
	info->name = n.name.c_str();
	return 0;
}

int mcp_graph_topo_order(const struct mcp_graph_def *graph, uint32_t *order, uint32_t n)
{
	if (!graph || (!order && n))
		return c_api_fail(EINVAL, "mcp_graph_topo_order: graph or order is NULL");
	return graph_guard(nullptr, [&] {
		const auto o = graph->def.topological_order();
		uint32_t count = 0;
		return list_out(o, order, n, &count);
	});
}

int mcp_graph_successors(const struct mcp_graph_def *graph, uint32_t node, uint32_t *out,
			 uint32_t cap, uint32_t *count)
{
	if (!graph || !count || (!out && cap))
		return c_api_fail(EINVAL, "mcp_graph_successors: graph, out or count is NULL");
	if (node >= graph->def.nodes.size())
		return c_api_fail(ENOENT, "mcp_graph_successors: no node with that index");
	return graph_guard(nullptr, [&] {
		return list_out(graph->def.successors()[node], out, cap, count);
	});
}

int mcp_graph_predecessors(const struct mcp_graph_def *graph, uint32_t node, uint32_t *out,
			   uint32_t cap, uint32_t *count)
{
	if (!graph || !count || (!out && cap))
		return c_api_fail(EINVAL, "mcp_graph_predecessors: graph, out or count is NULL");
	if (node >= graph->def.nodes.size())
		return c_api_fail(ENOENT, "mcp_graph_predecessors: no node with that index");
	return graph_guard(nullptr, [&] {
		return list_out(graph->def.predecessors()[node], out, cap, count);
	});
}

int mcp_graph_fill(const struct mcp_graph_init *init, uint32_t dtype, void *data, size_t len)
{
	if (!init || (!data && len))
		return c_api_fail(EINVAL, "mcp_graph_fill: init or data is NULL");
	return graph_guard(nullptr, [&] {
		mcp::fill(init_of(*init), static_cast<mcp::DType>(dtype),
			  {static_cast<std::byte *>(data), len});
		return 0;
	});
}

const char *mcp_graph_dtype_name(uint32_t dtype)
{
	return dtype > UINT8_MAX ? "unknown" : mcp::to_string(static_cast<mcp::DType>(dtype));
}

const char *mcp_graph_layout_name(uint32_t layout)
{
	return layout > UINT8_MAX ? "unknown" : mcp::to_string(static_cast<mcp::Layout>(layout));
}

const char *mcp_graph_op_name(uint32_t op)
{
	return op > UINT16_MAX ? "unknown" : mcp::to_string(static_cast<mcp::Op>(op));
}

const char *mcp_graph_class_name(uint32_t engine)
{
	return engine > UINT8_MAX ? "unknown" : mcp::to_string(static_cast<mcp::EngineClass>(engine));
}

const char *mcp_graph_error_name(uint32_t reason)
{
	return mcp::to_string(static_cast<mcp::GraphErrorReason>(reason));
}

} // extern "C"

void mcp::detail::put_graph_invalid(struct mcp_graph_invalid *err, const mcp::GraphError &e) noexcept
{
	if (!err || err->size < sizeof(*err))
		return;
	err->reason = static_cast<std::uint32_t>(e.reason);
	err->kind = static_cast<std::uint32_t>(e.kind);
	err->index = e.index;
	std::snprintf(err->message, sizeof(err->message), "%s", e.message.c_str());
}
