// SPDX-License-Identifier: LGPL-2.1-or-later
// The graph validator: the rules of Documentation/graphs.rst on the binary
// bytes, in the order and with the (reason, kind, index) the kernel's
// MCP_IOC_GRAPH_CREATE gives, minus what needs the kernel (BO handles and
// lengths, a device engine being present).  It works on the bytes, not on
// a GraphDef, so that every field the kernel sees is checked.
#include <bit>
#include <cstring>
#include <string>
#include <vector>

#include "graph_internal.hpp"
#include "graph_ops.hpp"
#include "graph_ops_elementwise.hpp"

namespace mcp {

static_assert(sizeof(struct mcp_graph_header) == detail::graph_header_size);
static_assert(sizeof(struct mcp_graph_buffer) == detail::graph_buffer_entry_size);
static_assert(sizeof(struct mcp_graph_tensor) == detail::graph_tensor_entry_size);
static_assert(sizeof(struct mcp_graph_node) == detail::graph_node_entry_size);
static_assert(sizeof(struct mcp_graph_init) == detail::graph_init_size);
static_assert(MCP_GRAPH_MAX_PARAM == graph_max_param && MCP_GRAPH_ALIGN == graph_align);

namespace {

constexpr std::uint32_t max_buffers = 64;

// The sections of checked-so-far bytes, copied out (no alignment assumed).
struct Raw {
	struct mcp_graph_header hdr {};
	std::vector<struct mcp_graph_buffer> buffers;
	std::vector<struct mcp_graph_tensor> tensors;
	std::vector<struct mcp_graph_node> nodes;
	std::span<const std::byte> blob;
};

bool range_ok(const Raw &g, std::uint32_t off, std::uint32_t len)
{
	if (len == 0)
		return off == 0;
	return std::uint64_t{off} + len <= g.blob.size();
}

std::string_view blob_text(const Raw &g, std::uint32_t off, std::uint32_t len)
{
	if (len == 0 || !range_ok(g, off, len))
		return {};
	return {reinterpret_cast<const char *>(g.blob.data()) + off, len};
}

std::span<const std::byte> blob_bytes(const Raw &g, std::uint32_t off, std::uint32_t len)
{
	return g.blob.subspan(off, len);
}

bool f32_finite(std::uint32_t bits)
{
	return (bits & 0x7f800000U) != 0x7f800000U;
}

bool f32_positive(std::uint32_t bits)
{
	return f32_finite(bits) && !(bits & 0x80000000U) && bits != 0;
}

bool zero_point_ok(std::int32_t z)
{
	return z >= -128 && z <= 127;
}

bool known_dtype(std::uint8_t d)
{
	return d >= MCP_DTYPE_F32 && d <= MCP_DTYPE_I32;
}

bool known_layout(std::uint8_t l)
{
	return l <= MCP_LAYOUT_TILED16;
}

bool known_op(std::uint16_t op)
{
	return (op >= MCP_OP_NOP && op <= MCP_OP_DEQUANT_I8) ||
	       (op >= MCP_OP_WNOP && op <= MCP_OP_GELU_ERF) || detail::is_cnn_op(op) ||
	       detail::ew::known(op);
}

std::optional<std::vector<std::uint32_t>> broadcast_dims(std::span<const std::uint32_t> a,
							 std::span<const std::uint32_t> b)
{
	return detail::numpy_broadcast(a, b);
}

// Unpadded bytes; none on overflow (fields already checked).
std::optional<std::uint64_t> tensor_bytes(const struct mcp_graph_tensor &t)
{
	std::uint64_t n = dtype_size(static_cast<DType>(t.dtype));

	for (unsigned k = 0; k < t.rank; k++)
		if (__builtin_mul_overflow(n, std::uint64_t{t.dims[k]}, &n))
			return std::nullopt;
	return n;
}

std::span<const std::uint32_t> dims_of(const struct mcp_graph_tensor &t)
{
	return {t.dims, t.rank};
}

bool same_dims(const struct mcp_graph_tensor &a, const struct mcp_graph_tensor &b)
{
	return a.rank == b.rank && std::equal(a.dims, a.dims + a.rank, b.dims);
}

class Validator {
public:
	Validator(std::span<const std::byte> bytes, const GraphLimits &limits)
		: bytes_(bytes), limits_(limits)
	{
	}

	std::optional<GraphError> run();
	std::optional<GraphError> header();
	// The version 1 image of what header() read.
	std::vector<std::byte> image() const;

private:
	std::optional<GraphError> compact();
	std::optional<GraphError> buffer(std::uint32_t i);
	std::optional<GraphError> tensor(std::uint32_t i);
	std::optional<GraphError> node(std::uint32_t i);
	std::optional<GraphError> node_arity(std::uint32_t i);
	std::optional<GraphError> node_param(std::uint32_t i);
	std::optional<GraphError> node_shape(std::uint32_t i);
	std::optional<GraphError> node_alias(std::uint32_t i);
	std::optional<detail::CnnRuleError> cnn_rules(std::uint32_t i) const;
	std::optional<GraphError> ew_rules(std::uint32_t i, detail::ew::Stage stage);
	std::optional<GraphError> writers_and_cycles();

	GraphError fail(GraphErrorReason r, GraphErrorKind k, std::uint32_t i,
			const std::string &what) const;
	std::string label(GraphErrorKind k, std::uint32_t i) const;
	std::string tensor_text(std::uint32_t t) const;

	const struct mcp_graph_tensor &in(const struct mcp_graph_node &n, unsigned k) const
	{
		return g_.tensors[n.inputs[k]];
	}
	const struct mcp_graph_tensor &out(const struct mcp_graph_node &n, unsigned k) const
	{
		return g_.tensors[n.outputs[k]];
	}

	std::span<const std::byte> bytes_;
	GraphLimits limits_;
	Raw g_;
	std::vector<detail::DepTensor> dep_tensors_;
	std::vector<detail::DepNode> dep_nodes_;
};

std::string Validator::label(GraphErrorKind k, std::uint32_t i) const
{
	switch (k) {
	case GraphErrorKind::header:
		return "graph";
	case GraphErrorKind::buffer: {
		const auto &b = g_.buffers[i];
		return detail::graph_entry_label(k, i, blob_text(g_, b.name_offset, b.name_len));
	}
	case GraphErrorKind::tensor: {
		const auto &t = g_.tensors[i];
		return detail::graph_entry_label(k, i, blob_text(g_, t.name_offset, t.name_len));
	}
	case GraphErrorKind::node: {
		const auto &n = g_.nodes[i];
		std::optional<Op> op;
		if (known_op(n.op))
			op = static_cast<Op>(n.op);
		return detail::graph_entry_label(k, i, blob_text(g_, n.name_offset, n.name_len), op);
	}
	}
	return {};
}

GraphError Validator::fail(GraphErrorReason r, GraphErrorKind k, std::uint32_t i,
			   const std::string &what) const
{
	return detail::make_graph_error(r, k, i, label(k, i), what);
}

std::string Validator::tensor_text(std::uint32_t t) const
{
	const auto &x = g_.tensors[t];
	const auto name = blob_text(g_, x.name_offset, x.name_len);

	return "tensor " + std::to_string(t) + (name.empty() ? "" : " '" + std::string(name) + "'") +
	       " " + to_string(static_cast<DType>(x.dtype)) + detail::dims_text(dims_of(x));
}

std::optional<GraphError> Validator::header()
{
	using R = GraphErrorReason;
	constexpr auto H = GraphErrorKind::header;
	auto &h = g_.hdr;

	if (bytes_.size() < detail::graph_header_size)
		return fail(R::header, H, 0, "only " + std::to_string(bytes_.size()) +
					     " bytes: shorter than the 48-byte header");
	std::memcpy(&h, bytes_.data(), sizeof(h));
	if (h.magic != MCP_GRAPH_MAGIC)
		return fail(R::header, H, 0, "bad magic: not an MCP graph (\"MGPH\")");
	if (h.version != MCP_GRAPH_VERSION && h.version != MCP_GRAPH_VERSION_COMPACT)
		return fail(R::header, H, 0, "format version " + std::to_string(h.version) +
					     ", this library reads versions 1 and 2");
	if (h.header_size != detail::graph_header_size || h.flags != 0 || h.reserved != 0)
		return fail(R::header, H, 0, "header_size is not 48 or flags/reserved are not 0");
	if (h.n_buffers < 1 || h.n_buffers > max_buffers)
		return fail(R::header, H, 0, std::to_string(h.n_buffers) +
					     " buffers: a graph has 1 to 64");
	if (h.n_tensors < 1 || h.n_nodes < 1)
		return fail(R::header, H, 0, "a graph needs at least one tensor and one node");
	if (h.blob_len % 8 != 0)
		return fail(R::header, H, 0, "blob_len " + std::to_string(h.blob_len) +
					     " is not a multiple of 8");
	if (h.n_nodes > limits_.max_nodes)
		return fail(R::limit, H, 0, std::to_string(h.n_nodes) + " nodes: over max_nodes " +
					    std::to_string(limits_.max_nodes));
	if (h.n_tensors > limits_.max_tensors)
		return fail(R::limit, H, 0, std::to_string(h.n_tensors) +
					    " tensors: over max_tensors " +
					    std::to_string(limits_.max_tensors));
	if (h.blob_len > limits_.max_blob)
		return fail(R::limit, H, 0, "blob of " + std::to_string(h.blob_len) +
					    " bytes: over max_blob " + std::to_string(limits_.max_blob));
	if (h.version == MCP_GRAPH_VERSION_COMPACT)
		return compact();

	const std::uint64_t expect = detail::graph_header_size +
				     detail::graph_buffer_entry_size * std::uint64_t{h.n_buffers} +
				     detail::graph_tensor_entry_size * std::uint64_t{h.n_tensors} +
				     detail::graph_node_entry_size * std::uint64_t{h.n_nodes} +
				     h.blob_len;
	if (h.total_len != expect)
		return fail(R::header, H, 0, "total_len " + std::to_string(h.total_len) +
					     " but the sections add up to " + std::to_string(expect));
	if (h.total_len != bytes_.size())
		return fail(R::header, H, 0, "total_len " + std::to_string(h.total_len) + " but " +
					     std::to_string(bytes_.size()) +
					     " bytes were given (truncated or trailing data)");

	// The sections are all there: copy them out.
	const std::byte *p = bytes_.data() + detail::graph_header_size;
	g_.buffers.resize(h.n_buffers);
	std::memcpy(g_.buffers.data(), p, h.n_buffers * sizeof(g_.buffers[0]));
	p += h.n_buffers * sizeof(g_.buffers[0]);
	g_.tensors.resize(h.n_tensors);
	std::memcpy(g_.tensors.data(), p, h.n_tensors * sizeof(g_.tensors[0]));
	p += h.n_tensors * sizeof(g_.tensors[0]);
	g_.nodes.resize(h.n_nodes);
	std::memcpy(g_.nodes.data(), p, h.n_nodes * sizeof(g_.nodes[0]));
	p += h.n_nodes * sizeof(g_.nodes[0]);
	g_.blob = {p, h.blob_len};

	if (!range_ok(g_, h.name_offset, h.name_len))
		return fail(R::range, H, 0, "the graph's name is outside the blob");
	return std::nullopt;
}

// The rest of a version 2 header, then its tables decoded into g_: from
// here on the version 1 image is validated (its header says so).
std::optional<GraphError> Validator::compact()
{
	using R = GraphErrorReason;
	constexpr auto H = GraphErrorKind::header;
	auto &h = g_.hdr;

	if (h.total_len != bytes_.size())
		return fail(R::header, H, 0, "total_len " + std::to_string(h.total_len) + " but " +
					     std::to_string(bytes_.size()) +
					     " bytes were given (truncated or trailing data)");
	if (h.total_len < detail::graph_header_size + std::uint64_t{h.blob_len})
		return fail(R::header, H, 0, "total_len " + std::to_string(h.total_len) +
					     " cannot hold the header and a blob of " +
					     std::to_string(h.blob_len) + " bytes");
	const std::uint64_t tables = h.total_len - detail::graph_header_size - h.blob_len;
	if (tables % 8 != 0)
		return fail(R::header, H, 0, "the tables' " + std::to_string(tables) +
					     " bytes are not a multiple of 8");
	const std::uint64_t min = detail::compact_min_tables(h), max = detail::compact_max_tables(h);
	if (tables < min || tables > max)
		return fail(R::header, H, 0, std::to_string(tables) + " bytes of tables for " +
					     std::to_string(h.n_buffers) + " buffers, " +
					     std::to_string(h.n_tensors) + " tensors and " +
					     std::to_string(h.n_nodes) + " nodes: they take " +
					     std::to_string(min) + " to " + std::to_string(max));

	g_.blob = bytes_.subspan(h.total_len - h.blob_len, h.blob_len);
	if (!range_ok(g_, h.name_offset, h.name_len))
		return fail(R::range, H, 0, "the graph's name is outside the blob");

	// Bounded by the bytes given: every record takes some of them.
	g_.buffers.resize(h.n_buffers);
	g_.tensors.resize(h.n_tensors);
	g_.nodes.resize(h.n_nodes);
	if (auto e = detail::decode_compact_tables(bytes_.subspan(detail::graph_header_size, tables),
						   g_.buffers, g_.tensors, g_.nodes))
		return detail::make_graph_error(
			R::encoding, e->kind, e->index,
			e->kind == H ? "" : detail::graph_entry_label(e->kind, e->index, {}),
			e->what);
	h.version = MCP_GRAPH_VERSION;
	h.total_len = detail::graph_header_size +
		      detail::graph_buffer_entry_size * std::uint64_t{h.n_buffers} +
		      detail::graph_tensor_entry_size * std::uint64_t{h.n_tensors} +
		      detail::graph_node_entry_size * std::uint64_t{h.n_nodes} + h.blob_len;
	return std::nullopt;
}

std::vector<std::byte> Validator::image() const
{
	std::vector<std::byte> out;
	const auto add = [&out](const void *p, std::size_t len) {
		const auto *b = static_cast<const std::byte *>(p);
		out.insert(out.end(), b, b + len);
	};

	out.reserve(g_.hdr.total_len);
	add(&g_.hdr, sizeof(g_.hdr));
	add(g_.buffers.data(), g_.buffers.size() * sizeof(g_.buffers[0]));
	add(g_.tensors.data(), g_.tensors.size() * sizeof(g_.tensors[0]));
	add(g_.nodes.data(), g_.nodes.size() * sizeof(g_.nodes[0]));
	add(g_.blob.data(), g_.blob.size());
	return out;
}

std::optional<GraphError> Validator::buffer(std::uint32_t i)
{
	using R = GraphErrorReason;
	constexpr auto K = GraphErrorKind::buffer;
	const auto &b = g_.buffers[i];

	if (b.length == 0)
		return fail(R::buffer, K, i, "length is 0");
	if (b.flags & ~MCP_GRAPH_BUF_FLAGS)
		return fail(R::buffer, K, i, "unknown flags " + std::to_string(b.flags) +
					     " (input 1, output 2, const 4)");
	if (b.reserved != 0)
		return fail(R::buffer, K, i, "reserved is not 0");
	if (!range_ok(g_, b.name_offset, b.name_len))
		return fail(R::range, K, i, "its name is outside the blob");
	if (!range_ok(g_, b.init_offset, b.init_len))
		return fail(R::range, K, i, "its init is outside the blob");
	return std::nullopt;
}

std::optional<GraphError> Validator::tensor(std::uint32_t i)
{
	using R = GraphErrorReason;
	constexpr auto K = GraphErrorKind::tensor;
	const auto &t = g_.tensors[i];

	if (t.buffer >= g_.hdr.n_buffers)
		return fail(R::tensor, K, i, "buffer " + std::to_string(t.buffer) + " is past the " +
					     std::to_string(g_.hdr.n_buffers) + " buffers");
	if (!known_dtype(t.dtype))
		return fail(R::tensor, K, i, "unknown dtype " + std::to_string(t.dtype) +
					     " (f32 1, i8 2, u8 3, i32 4)");
	if (t.rank > MCP_GRAPH_MAX_RANK)
		return fail(R::tensor, K, i, "rank " + std::to_string(t.rank) + " is over 6");
	for (unsigned k = 0; k < MCP_GRAPH_MAX_RANK; k++) {
		if (k < t.rank && t.dims[k] == 0)
			return fail(R::tensor, K, i, "dimension " + std::to_string(k) + " is 0");
		if (k >= t.rank && t.dims[k] != 0)
			return fail(R::tensor, K, i, "dims[" + std::to_string(k) +
						     "] is set past its rank " + std::to_string(t.rank));
	}
	if (t.flags != 0)
		return fail(R::tensor, K, i, "flags is not 0");
	if (!known_layout(t.layout))
		return fail(R::tensor, K, i, "unknown layout " + std::to_string(t.layout) +
					     " (dense 0, nhwc 1, tiled16 2)");
	if (t.layout == MCP_LAYOUT_NHWC && t.rank != 4)
		return fail(R::tensor, K, i, "layout nhwc needs rank 4, it has " + std::to_string(t.rank));
	if (t.layout == MCP_LAYOUT_TILED16 && (t.rank != 5 || t.dims[4] != 16))
		return fail(R::tensor, K, i, "layout tiled16 needs rank 5 with a last dimension of 16, it is " +
					     detail::dims_text(dims_of(t)));
	if (t.offset % MCP_GRAPH_ALIGN != 0)
		return fail(R::tensor, K, i, "offset " + std::to_string(t.offset) +
					     " is not on a 64-byte line");

	const auto bytes = tensor_bytes(t);
	std::uint64_t padded = 0;

	if (!bytes || __builtin_add_overflow(*bytes, std::uint64_t{MCP_GRAPH_ALIGN - 1}, &padded))
		return fail(R::tensor, K, i, "its size " + detail::dims_text(dims_of(t)) +
					     " overflows 64 bits");
	padded &= ~std::uint64_t{MCP_GRAPH_ALIGN - 1};
	if (!range_ok(g_, t.name_offset, t.name_len))
		return fail(R::range, K, i, "its name is outside the blob");

	// offset + padded may overflow: a tensor past any buffer, BOUNDS.
	const auto &b = g_.buffers[t.buffer];
	if (padded > b.length || t.offset > b.length - padded) {
		const auto bname = blob_text(g_, b.name_offset, b.name_len);
		return fail(R::bounds, K, i, "bytes " + std::to_string(t.offset) + " + " +
					     std::to_string(padded) + " (padded to 64) are past the end of buffer " +
					     std::to_string(t.buffer) +
					     (bname.empty() ? "" : " '" + std::string(bname) + "'") +
					     " (" + std::to_string(b.length) + " bytes)");
	}
	return std::nullopt;
}

std::optional<GraphError> Validator::node_arity(std::uint32_t i)
{
	using R = GraphErrorReason;
	constexpr auto K = GraphErrorKind::node;
	const auto &n = g_.nodes[i];

	if (n.n_inputs > MCP_GRAPH_MAX_INPUTS || n.n_outputs > MCP_GRAPH_MAX_OUTPUTS)
		return fail(R::arity, K, i, std::to_string(n.n_inputs) + " inputs and " +
					    std::to_string(n.n_outputs) + " outputs: at most 4 and 2");
	for (unsigned k = 0; k < MCP_GRAPH_MAX_INPUTS; k++) {
		if (k < n.n_inputs && n.inputs[k] >= g_.hdr.n_tensors)
			return fail(R::arity, K, i, "input " + std::to_string(k) + " is tensor " +
						    std::to_string(n.inputs[k]) + ", past the " +
						    std::to_string(g_.hdr.n_tensors) + " tensors");
		if (k >= n.n_inputs && n.inputs[k] != 0)
			return fail(R::arity, K, i, "unused input slot " + std::to_string(k) + " is not 0");
	}
	for (unsigned k = 0; k < MCP_GRAPH_MAX_OUTPUTS; k++) {
		if (k < n.n_outputs && n.outputs[k] >= g_.hdr.n_tensors)
			return fail(R::arity, K, i, "output " + std::to_string(k) + " is tensor " +
						    std::to_string(n.outputs[k]) + ", past the " +
						    std::to_string(g_.hdr.n_tensors) + " tensors");
		if (k >= n.n_outputs && n.outputs[k] != 0)
			return fail(R::arity, K, i, "unused output slot " + std::to_string(k) + " is not 0");
	}

	if (detail::ew::known(n.op))
		return ew_rules(i, detail::ew::Stage::arity);
	unsigned in_lo = 1, in_hi = 1, out_n = 1;
	switch (n.op) {
	case MCP_OP_NOP:
	case MCP_OP_WNOP:
		return std::nullopt;
	case MCP_OP_MATMUL:
	case MCP_OP_BMATMUL:
		in_lo = 2;
		in_hi = 3;
		break;
	case MCP_OP_BADD:
	case MCP_OP_SUB:
	case MCP_OP_MUL:
	case MCP_OP_DIV:
	case MCP_OP_ADD:
	case MCP_OP_MATMUL_I8:
		in_lo = in_hi = 2;
		break;
	case MCP_OP_LAYERNORM:
	case MCP_OP_CHANNEL_AFFINE:
		in_lo = in_hi = 3;
		break;
	case MCP_OP_CONV:
	case MCP_OP_CONV_TRANSPOSE:
		in_lo = 2;
		in_hi = 3;
		break;
	default:
		break;
	}
	if (n.n_inputs < in_lo || n.n_inputs > in_hi || n.n_outputs != out_n) {
		const std::string want = in_lo == in_hi ? std::to_string(in_lo)
							: std::to_string(in_lo) + " or " + std::to_string(in_hi);
		return fail(R::arity, K, i, std::to_string(n.n_inputs) + " input(s) and " +
					    std::to_string(n.n_outputs) + " output(s): " +
					    to_string(static_cast<Op>(n.op)) + " takes " + want +
					    " input(s) and 1 output");
	}
	return std::nullopt;
}

std::optional<GraphError> Validator::node_param(std::uint32_t i)
{
	using R = GraphErrorReason;
	constexpr auto K = GraphErrorKind::node;
	const auto &n = g_.nodes[i];
	const auto p = blob_bytes(g_, n.param_offset, n.param_len);
	const auto u32 = [&](std::size_t at) {
		std::uint32_t v;
		std::memcpy(&v, p.data() + at, 4);
		return v;
	};
	const auto s32 = [&](std::size_t at) { return static_cast<std::int32_t>(u32(at)); };
	const auto want_len = [&](std::uint32_t len, const char *what) -> std::optional<GraphError> {
		if (n.param_len != len)
			return fail(R::param, K, i, std::string("parameters are ") +
						    std::to_string(n.param_len) + " bytes, " +
						    to_string(static_cast<Op>(n.op)) + " takes " + what);
		return std::nullopt;
	};

	if (n.param_len > MCP_GRAPH_MAX_PARAM)
		return fail(R::param, K, i, "parameters are " + std::to_string(n.param_len) +
					    " bytes, at most 256");
	if (detail::ew::known(n.op))
		return ew_rules(i, detail::ew::Stage::param);
	switch (n.op) {
	case MCP_OP_QUANT_I8:
	case MCP_OP_DEQUANT_I8:
		if (auto e = want_len(8, "8 (scale, zero_point)"))
			return e;
		if (!f32_positive(u32(0)))
			return fail(R::param, K, i, "scale must be finite and > 0");
		if (!zero_point_ok(s32(4)))
			return fail(R::param, K, i, "zero_point " + std::to_string(s32(4)) +
						    " is outside -128..127");
		return std::nullopt;
	case MCP_OP_MATMUL:
	case MCP_OP_BMATMUL:
		if (n.param_len == 0)
			return std::nullopt;
		if (auto e = want_len(8, "0 or 8 (flags, alpha)"))
			return e;
		if (u32(0) & ~MCP_MATMUL_FLAGS)
			return fail(R::param, K, i, "unknown matmul flags " + std::to_string(u32(0)) +
						    " (trans_a 1, trans_b 2)");
		if (!f32_finite(u32(4)))
			return fail(R::param, K, i, "alpha is not finite");
		return std::nullopt;
	case MCP_OP_LAYERNORM:
		if (auto e = want_len(8, "8 (eps, reserved)"))
			return e;
		if (!f32_positive(u32(0)))
			return fail(R::param, K, i, "eps must be finite and > 0");
		if (u32(4) != 0)
			return fail(R::param, K, i, "reserved is not 0");
		return std::nullopt;
	case MCP_OP_TRANSPOSE:
		// The permutation against the rank: node_shape().
		return want_len(8, "8 (perm[8])");
	case MCP_OP_CONV:
	case MCP_OP_CONV_TRANSPOSE:
	case MCP_OP_MAXPOOL:
	case MCP_OP_AVGPOOL:
	case MCP_OP_GLOBAL_AVGPOOL:
	case MCP_OP_CHANNEL_AFFINE:
		if (auto e = cnn_rules(i); e && e->param_error)
			return fail(R::param, K, i, e->what);
		return std::nullopt;
	case MCP_OP_MATMUL_I8:
		if (auto e = want_len(16, "16 (scale_a, zero_a, scale_b, zero_b)"))
			return e;
		if (!f32_positive(u32(0)) || !f32_positive(u32(8)))
			return fail(R::param, K, i, "scale_a and scale_b must be finite and > 0");
		if (!zero_point_ok(s32(4)) || !zero_point_ok(s32(12)))
			return fail(R::param, K, i, "zero_a and zero_b must be in -128..127");
		return std::nullopt;
	default:
		return want_len(0, "none");
	}
}

std::optional<GraphError> Validator::node_shape(std::uint32_t i)
{
	using R = GraphErrorReason;
	constexpr auto K = GraphErrorKind::node;
	const auto &n = g_.nodes[i];
	const auto bad = [&](const std::string &what) { return fail(R::shape, K, i, what); };
	const auto is = [](const struct mcp_graph_tensor &t, std::uint8_t dtype) {
		return t.dtype == dtype;
	};

	if (n.op != MCP_OP_TILE16 && n.op != MCP_OP_COPY) {
		for (unsigned k = 0; k < n.n_inputs + n.n_outputs; k++) {
			const std::uint32_t t = k < n.n_inputs ? n.inputs[k] : n.outputs[k - n.n_inputs];
			if (g_.tensors[t].layout != MCP_LAYOUT_DENSE)
				return bad(tensor_text(t) + " has layout " +
					   to_string(static_cast<Layout>(g_.tensors[t].layout)) +
					   ": this operator takes dense tensors");
		}
	}

	if (detail::ew::known(n.op))
		return ew_rules(i, detail::ew::Stage::shape);
	const auto f32_same = [&](unsigned n_in) -> std::optional<GraphError> {
		const auto &o = out(n, 0);
		for (unsigned k = 0; k < n_in; k++)
			if (!is(in(n, k), MCP_DTYPE_F32))
				return bad(tensor_text(n.inputs[k]) + " is not f32");
		if (!is(o, MCP_DTYPE_F32))
			return bad(tensor_text(n.outputs[0]) + " is not f32");
		for (unsigned k = 0; k < n_in; k++)
			if (!same_dims(in(n, k), o))
				return bad("input " + std::to_string(k) + " and the output differ: " +
					   tensor_text(n.inputs[k]) + " vs " + tensor_text(n.outputs[0]));
		return std::nullopt;
	};

	if (detail::is_cnn_op(n.op)) {
		// Parameters first (node_param()): what is left is shapes.
		if (auto e = cnn_rules(i))
			return fail(e->param_error ? R::param : R::shape, K, i, e->what);
		return std::nullopt;
	}
	switch (n.op) {
	case MCP_OP_COPY: {
		const auto a = tensor_bytes(in(n, 0)), b = tensor_bytes(out(n, 0));
		if (a != b)
			return bad("copies " + std::to_string(a.value_or(0)) + " bytes into " +
				   std::to_string(b.value_or(0)) + ": the sizes must be equal");
		return std::nullopt;
	}
	case MCP_OP_TILE16: {
		const auto &a = in(n, 0), &o = out(n, 0);
		if (a.layout != MCP_LAYOUT_NHWC || o.layout != MCP_LAYOUT_TILED16)
			return bad("tile16 takes an nhwc input and a tiled16 output");
		if (a.dtype != o.dtype)
			return bad("tile16 input and output dtypes differ");
		const std::uint32_t B = a.dims[0], H = a.dims[1], S = a.dims[2], D = a.dims[3];
		if (H % 16 != 0)
			return bad("H = " + std::to_string(H) + " is not a multiple of 16 (input " +
				   detail::dims_text(dims_of(a)) + ")");
		if ((std::uint64_t{D} * dtype_size(static_cast<DType>(a.dtype))) % 32 != 0)
			return bad("D = " + std::to_string(D) + " " + to_string(static_cast<DType>(a.dtype)) +
				   " is not a multiple of 32 bytes");
		const std::uint32_t want[5] = {B, H / 16, S, D, 16};
		if (!std::equal(want, want + 5, o.dims))
			return bad("output " + detail::dims_text(dims_of(o)) + " should be " +
				   detail::dims_text(want));
		return std::nullopt;
	}
	case MCP_OP_QUANT_I8:
	case MCP_OP_DEQUANT_I8: {
		const bool q = n.op == MCP_OP_QUANT_I8;
		if (!is(in(n, 0), q ? MCP_DTYPE_F32 : MCP_DTYPE_I8) ||
		    !is(out(n, 0), q ? MCP_DTYPE_I8 : MCP_DTYPE_F32))
			return bad(std::string(q ? "quant_i8 takes f32 to i8" : "dequant_i8 takes i8 to f32") +
				   ", not " + tensor_text(n.inputs[0]) + " to " + tensor_text(n.outputs[0]));
		if (!same_dims(in(n, 0), out(n, 0)))
			return bad("input and output dims differ: " + tensor_text(n.inputs[0]) + " vs " +
				   tensor_text(n.outputs[0]));
		return std::nullopt;
	}
	case MCP_OP_MATMUL: {
		const auto &a = in(n, 0), &b = in(n, 1), &o = out(n, 0);
		std::uint32_t flags = 0;
		if (n.param_len == 8)
			std::memcpy(&flags, g_.blob.data() + n.param_offset, 4);
		for (unsigned k = 0; k < 2; k++)
			if (!is(in(n, k), MCP_DTYPE_F32) || in(n, k).rank != 2)
				return bad(tensor_text(n.inputs[k]) + " is not an f32 matrix (rank 2)");
		if (!is(o, MCP_DTYPE_F32) || o.rank != 2)
			return bad(tensor_text(n.outputs[0]) + " is not an f32 matrix (rank 2)");
		const bool ta = flags & MCP_MATMUL_TRANS_A, tb = flags & MCP_MATMUL_TRANS_B;
		const std::uint32_t M = ta ? a.dims[1] : a.dims[0], K1 = ta ? a.dims[0] : a.dims[1];
		const std::uint32_t K2 = tb ? b.dims[1] : b.dims[0], N = tb ? b.dims[0] : b.dims[1];
		const std::uint32_t opa[2] = {M, K1}, opb[2] = {K2, N}, want[2] = {M, N};
		if (K1 != K2)
			return bad("inner dimensions differ: " + detail::dims_text(opa) + " x " +
				   detail::dims_text(opb) +
				   (ta || tb ? " (after the transposes)" : ""));
		if (o.dims[0] != M || o.dims[1] != N)
			return bad("output " + detail::dims_text(dims_of(o)) + " should be " +
				   detail::dims_text(want));
		if (n.n_inputs == 3) {
			const auto &bias = in(n, 2);
			if (!is(bias, MCP_DTYPE_F32) || bias.rank != 1 || bias.dims[0] != N)
				return bad("bias " + tensor_text(n.inputs[2]) + " should be f32[" +
					   std::to_string(N) + "]");
		}
		return std::nullopt;
	}
	case MCP_OP_ADD:
		return f32_same(2);
	case MCP_OP_RELU:
	case MCP_OP_GELU:
	case MCP_OP_GELU_ERF:
		return f32_same(1);
	case MCP_OP_BADD:
	case MCP_OP_SUB:
	case MCP_OP_MUL:
	case MCP_OP_DIV: {
		for (unsigned k = 0; k < 2; k++)
			if (!is(in(n, k), MCP_DTYPE_F32))
				return bad(tensor_text(n.inputs[k]) + " is not f32");
		const auto &o = out(n, 0);
		if (!is(o, MCP_DTYPE_F32))
			return bad(tensor_text(n.outputs[0]) + " is not f32");
		const auto want = broadcast_dims(dims_of(in(n, 0)), dims_of(in(n, 1)));
		if (!want)
			return bad("inputs do not broadcast: " + tensor_text(n.inputs[0]) + " and " +
				   tensor_text(n.inputs[1]));
		if (!std::equal(want->begin(), want->end(), o.dims, o.dims + o.rank))
			return bad("output " + detail::dims_text(dims_of(o)) + " should be " +
				   detail::dims_text(*want) + " (numpy broadcasting)");
		return std::nullopt;
	}
	case MCP_OP_TRANSPOSE: {
		const auto &a = in(n, 0), &o = out(n, 0);
		std::uint8_t perm[8];
		std::memcpy(perm, g_.blob.data() + n.param_offset, 8);
		if (a.dtype != o.dtype || a.rank != o.rank)
			return bad("transpose keeps dtype and rank: " + tensor_text(n.inputs[0]) + " to " +
				   tensor_text(n.outputs[0]));
		bool seen[8] = {};
		std::vector<std::uint32_t> want;
		for (unsigned k = 0; k < 8; k++) {
			if (k >= a.rank ? perm[k] != 0 : perm[k] >= a.rank || seen[perm[k]])
				return fail(R::param, K, i,
					    "perm is not a permutation of the " + std::to_string(a.rank) +
						    " dims (unused entries 0)");
			if (k < a.rank) {
				seen[perm[k]] = true;
				want.push_back(a.dims[perm[k]]);
			}
		}
		if (!std::equal(want.begin(), want.end(), o.dims, o.dims + o.rank))
			return bad("output " + detail::dims_text(dims_of(o)) + " should be " +
				   detail::dims_text(want));
		return std::nullopt;
	}
	case MCP_OP_BMATMUL: {
		const auto &a = in(n, 0), &b = in(n, 1), &o = out(n, 0);
		std::uint32_t flags = 0;
		if (n.param_len == 8)
			std::memcpy(&flags, g_.blob.data() + n.param_offset, 4);
		for (unsigned k = 0; k < 2; k++)
			if (!is(in(n, k), MCP_DTYPE_F32) || in(n, k).rank < 2)
				return bad(tensor_text(n.inputs[k]) + " is not f32 of rank >= 2");
		if (!is(o, MCP_DTYPE_F32) || o.rank < 2)
			return bad(tensor_text(n.outputs[0]) + " is not f32 of rank >= 2");
		const bool ta = flags & MCP_MATMUL_TRANS_A, tb = flags & MCP_MATMUL_TRANS_B;
		const std::uint32_t ar = a.dims[a.rank - 2], ac = a.dims[a.rank - 1];
		const std::uint32_t br = b.dims[b.rank - 2], bc = b.dims[b.rank - 1];
		const std::uint32_t M = ta ? ac : ar, K1 = ta ? ar : ac, K2 = tb ? bc : br,
				    N = tb ? br : bc;
		if (K1 != K2)
			return bad("inner dimensions differ: " + tensor_text(n.inputs[0]) + " x " +
				   tensor_text(n.inputs[1]) + (ta || tb ? " (after the transposes)" : ""));
		auto want = broadcast_dims(dims_of(a).first(a.rank - 2u), dims_of(b).first(b.rank - 2u));
		if (!want)
			return bad("batch dimensions do not broadcast: " + tensor_text(n.inputs[0]) +
				   " x " + tensor_text(n.inputs[1]));
		want->push_back(M);
		want->push_back(N);
		if (!std::equal(want->begin(), want->end(), o.dims, o.dims + o.rank))
			return bad("output " + detail::dims_text(dims_of(o)) + " should be " +
				   detail::dims_text(*want));
		if (n.n_inputs == 3) {
			const auto &bias = in(n, 2);
			if (!is(bias, MCP_DTYPE_F32) || bias.rank != 1 || bias.dims[0] != N)
				return bad("bias " + tensor_text(n.inputs[2]) + " should be f32[" +
					   std::to_string(N) + "]");
		}
		return std::nullopt;
	}
	case MCP_OP_SOFTMAX:
		if (auto e = f32_same(1))
			return e;
		if (in(n, 0).rank < 1)
			return bad("softmax needs rank >= 1 (a scalar has no last dimension)");
		return std::nullopt;
	case MCP_OP_LAYERNORM: {
		const auto &a = in(n, 0), &o = out(n, 0);
		if (!is(a, MCP_DTYPE_F32) || !is(o, MCP_DTYPE_F32))
			return bad("layernorm takes and gives f32");
		if (!same_dims(a, o))
			return bad("input and output dims differ: " + tensor_text(n.inputs[0]) + " vs " +
				   tensor_text(n.outputs[0]));
		if (a.rank < 1)
			return bad("layernorm needs rank >= 1");
		const std::uint32_t D = a.dims[a.rank - 1];
		for (unsigned k = 1; k < 3; k++) {
			const auto &v = in(n, k);
			if (!is(v, MCP_DTYPE_F32) || v.rank != 1 || v.dims[0] != D)
				return bad(std::string(k == 1 ? "gamma " : "beta ") + tensor_text(n.inputs[k]) +
					   " should be f32[" + std::to_string(D) + "]");
		}
		return std::nullopt;
	}
	case MCP_OP_MATMUL_I8: {
		const auto &a = in(n, 0), &b = in(n, 1), &o = out(n, 0);
		if (!is(a, MCP_DTYPE_I8) || a.rank != 2 || !is(b, MCP_DTYPE_I8) || b.rank != 2)
			return bad("matmul_i8 takes two i8 matrices (rank 2)");
		if (!is(o, MCP_DTYPE_F32) || o.rank != 2)
			return bad("matmul_i8 gives an f32 matrix (rank 2)");
		if (a.dims[1] != b.dims[0])
			return bad("inner dimensions differ: " + detail::dims_text(dims_of(a)) + " x " +
				   detail::dims_text(dims_of(b)));
		if (o.dims[0] != a.dims[0] || o.dims[1] != b.dims[1]) {
			const std::uint32_t want[2] = {a.dims[0], b.dims[1]};
			return bad("output " + detail::dims_text(dims_of(o)) + " should be " +
				   detail::dims_text(want));
		}
		return std::nullopt;
	}
	default:
		return std::nullopt;
	}
}

// A tensor as the operators' rules see it.
detail::OpTensor op_view(const struct mcp_graph_tensor &t)
{
	detail::OpTensor o;

	o.dtype = t.dtype;
	o.rank = t.rank;
	o.layout = t.layout;
	std::copy(t.dims, t.dims + MCP_GRAPH_MAX_RANK, o.dims);
	return o;
}

// The CNN operators' rules (graph_ops_conv.cpp) on node @i's tensors.
std::optional<detail::CnnRuleError> Validator::cnn_rules(std::uint32_t i) const
{
	const auto &n = g_.nodes[i];
	const auto view = op_view;
	std::vector<detail::OpTensor> ins;
	for (unsigned k = 0; k < n.n_inputs; k++)
		ins.push_back(view(in(n, k)));
	return detail::cnn_rules(n.op, ins, view(out(n, 0)),
				 blob_bytes(g_, n.param_offset, n.param_len));
}

// The rules of graph_ops_elementwise.hpp's operators, written once there.
std::optional<GraphError> Validator::ew_rules(std::uint32_t i, detail::ew::Stage stage)
{
	const auto &n = g_.nodes[i];
	const auto op_tensor = [&](std::uint32_t t) { return op_view(g_.tensors[t]); };
	std::vector<detail::OpTensor> ins, outs;
	for (unsigned k = 0; k < n.n_inputs; k++)
		ins.push_back(op_tensor(n.inputs[k]));
	for (unsigned k = 0; k < n.n_outputs; k++)
		outs.push_back(op_tensor(n.outputs[k]));
	bool param = stage == detail::ew::Stage::param;
	const auto e = detail::ew::check(n.op, ins, outs, blob_bytes(g_, n.param_offset, n.param_len),
					 stage, &param);
	if (!e)
		return std::nullopt;
	const auto reason = stage == detail::ew::Stage::arity ? GraphErrorReason::arity
			    : param ? GraphErrorReason::param : GraphErrorReason::shape;
	return fail(reason, GraphErrorKind::node, i, *e);
}

std::optional<GraphError> Validator::node_alias(std::uint32_t i)
{
	const auto &n = g_.nodes[i];
	const auto &t = dep_tensors_;
	const bool inplace = n.flags & MCP_GRAPH_NODE_INPLACE;
	const auto bad = [&](const std::string &what) {
		return fail(GraphErrorReason::alias, GraphErrorKind::node, i, what);
	};

	if (n.n_outputs == 2 && detail::overlap(t[n.outputs[0]], t[n.outputs[1]]))
		return bad("its two outputs overlap: " + tensor_text(n.outputs[0]) + " and " +
			   tensor_text(n.outputs[1]));
	for (unsigned o = 0; o < n.n_outputs; o++) {
		for (unsigned k = 0; k < n.n_inputs; k++) {
			const auto &a = t[n.outputs[o]], &b = t[n.inputs[k]];
			if (!detail::overlap(a, b))
				continue;
			if (o == 0 && k == 0 && inplace && detail::identical(a, b))
				continue;
			return bad("output " + std::to_string(o) + " (" + tensor_text(n.outputs[o]) +
				   ") overlaps input " + std::to_string(k) + " (" +
				   tensor_text(n.inputs[k]) + ")" +
				   (o == 0 && k == 0 ? ": set the inplace flag if it is meant to be in-place "
						       "(out0 must then be exactly in0)"
						     : ""));
		}
	}
	return std::nullopt;
}

std::optional<GraphError> Validator::node(std::uint32_t i)
{
	using R = GraphErrorReason;
	constexpr auto K = GraphErrorKind::node;
	const auto &n = g_.nodes[i];

	if (!known_op(n.op))
		return fail(R::op, K, i, "unknown operator " + std::to_string(n.op));
	if (n.flags & ~MCP_GRAPH_NODE_FLAGS)
		return fail(R::op, K, i, "unknown node flags " + std::to_string(n.flags) + " (inplace 1)");
	if (n.reserved != 0)
		return fail(R::op, K, i, "reserved is not 0");

	bool engine_ok = false;
	switch (n.op) {
	case MCP_OP_NOP:
	case MCP_OP_TILE16:
	case MCP_OP_QUANT_I8:
	case MCP_OP_DEQUANT_I8:
		engine_ok = n.engine == MCP_GRAPH_ENGINE_CPU;
		break;
	case MCP_OP_COPY:
		engine_ok = n.engine == MCP_GRAPH_ENGINE_CPU || n.engine == MCP_GRAPH_ENGINE_DEVICE;
		break;
	default:
		engine_ok = n.engine == MCP_GRAPH_ENGINE_WORKER;
		break;
	}
	if (!engine_ok) {
		const char *runs = n.op == MCP_OP_COPY ? "cpu or device"
				   : n.op >= MCP_OP_WNOP ? "worker" : "cpu";
		return fail(R::engine, K, i, std::string("engine ") +
					     to_string(static_cast<EngineClass>(n.engine)) +
					     " cannot run it: " + to_string(static_cast<Op>(n.op)) +
					     " runs on " + runs);
	}
	if (auto e = node_arity(i))
		return e;
	if (!range_ok(g_, n.name_offset, n.name_len))
		return fail(R::range, K, i, "its name is outside the blob");
	if (!range_ok(g_, n.param_offset, n.param_len))
		return fail(R::range, K, i, "its parameters are outside the blob");
	if (auto e = node_param(i))
		return e;
	if (auto e = node_shape(i))
		return e;
	return node_alias(i);
}

std::optional<GraphError> Validator::writers_and_cycles()
{
	const auto &t = dep_tensors_;
	const auto &nodes = dep_nodes_;

	// Only pairs sharing written bytes can conflict; they come by (j, i).
	const auto pairs = detail::conflict_pairs(t, nodes);

	for (std::size_t first = 0; first < pairs.size();) {
		const std::uint32_t j = pairs[first].second;
		std::size_t last = first;
		while (last < pairs.size() && pairs[last].second == j)
			last++;
		const bool j_active = detail::inplace_active(t, nodes[j]);
		for (unsigned oj = 0; oj < nodes[j].outputs.size(); oj++) {
			if (oj == 0 && j_active)
				continue;
			for (std::size_t p = first; p < last; p++) {
				const std::uint32_t i = pairs[p].first;
				const bool i_active = detail::inplace_active(t, nodes[i]);
				for (unsigned oi = 0; oi < nodes[i].outputs.size(); oi++) {
					if (oi == 0 && i_active)
						continue;
					if (!detail::overlap(t[nodes[j].outputs[oj]], t[nodes[i].outputs[oi]]))
						continue;
					return fail(GraphErrorReason::writers, GraphErrorKind::node, j,
						    "output " + std::to_string(oj) + " (" +
							    tensor_text(nodes[j].outputs[oj]) +
							    ") overlaps what " +
							    label(GraphErrorKind::node, i) +
							    " writes: two nodes may not write the same bytes "
							    "unless one of them is in-place");
				}
			}
		}
		first = last;
	}

	std::optional<std::uint32_t> stuck;
	detail::kahn_order(detail::dependency_successors(t, nodes), stuck);
	if (stuck)
		return fail(GraphErrorReason::cycle, GraphErrorKind::node, *stuck,
			    "cannot be scheduled: it is on, or waits for, a dependency cycle (a node "
			    "that reads, directly or not, bytes it writes itself)");
	return std::nullopt;
}

std::optional<GraphError> Validator::run()
{
	if (auto e = header())
		return e;
	for (std::uint32_t i = 0; i < g_.hdr.n_buffers; i++)
		if (auto e = buffer(i))
			return e;
	for (std::uint32_t i = 0; i < g_.hdr.n_tensors; i++)
		if (auto e = tensor(i))
			return e;

	dep_tensors_.reserve(g_.tensors.size());
	for (const auto &t : g_.tensors)
		dep_tensors_.push_back({t.buffer, t.offset, tensor_bytes(t).value_or(0)});
	for (std::uint32_t i = 0; i < g_.hdr.n_nodes; i++) {
		if (auto e = node(i))
			return e;
		const auto &n = g_.nodes[i];
		dep_nodes_.push_back({{n.inputs, n.inputs + n.n_inputs},
				      {n.outputs, n.outputs + n.n_outputs},
				      (n.flags & MCP_GRAPH_NODE_INPLACE) != 0});
	}
	return writers_and_cycles();
}

} // namespace

std::optional<GraphError> check_graph(std::span<const std::byte> bytes, const GraphLimits &limits)
{
	return Validator(bytes, limits).run();
}

namespace detail {

std::vector<std::byte> fixed_image(std::span<const std::byte> bytes, const GraphLimits &limits,
				   std::optional<GraphError> &refused)
{
	Validator v(bytes, limits);

	refused = v.header();
	if (refused)
		return {};
	return v.image();
}

} // namespace detail

std::optional<GraphError> GraphDef::validate(const GraphLimits &limits) const
{
	std::vector<std::byte> bytes;

	try {
		bytes = serialize(GraphEncoding::fixed);
	} catch (const GraphInvalid &e) {
		return e.error();
	}
	return check_graph(bytes, limits);
}

} // namespace mcp
