// SPDX-License-Identifier: LGPL-2.1-or-later
// Graph definitions: names of the enums, element sizes, typed parameters,
// buffer initialisation, lookups and the error type.
#include <algorithm>
#include <array>
#include <bit>
#include <cerrno>
#include <cstring>
#include <string>
#include <utility>

#include "graph_internal.hpp"

namespace mcp {

namespace {

template <typename E>
struct NamedValue {
	E value;
	const char *name;
};

constexpr std::array<NamedValue<DType>, 4> dtype_names{{
	{DType::f32, "f32"}, {DType::i8, "i8"}, {DType::u8, "u8"}, {DType::i32, "i32"},
}};
constexpr std::array<NamedValue<Layout>, 3> layout_names{{
	{Layout::dense, "dense"}, {Layout::nhwc, "nhwc"}, {Layout::tiled16, "tiled16"},
}};
constexpr std::array<NamedValue<Op>, 35> op_names{{
	{Op::nop, "nop"}, {Op::copy, "copy"}, {Op::tile16, "tile16"},
	{Op::quant_i8, "quant_i8"}, {Op::dequant_i8, "dequant_i8"}, {Op::wnop, "wnop"},
	{Op::matmul, "matmul"}, {Op::add, "add"}, {Op::relu, "relu"}, {Op::gelu, "gelu"},
	{Op::softmax, "softmax"}, {Op::layernorm, "layernorm"}, {Op::matmul_i8, "matmul_i8"},
	{Op::bmatmul, "bmatmul"}, {Op::badd, "badd"}, {Op::sub, "sub"}, {Op::mul, "mul"},
	{Op::div, "div"}, {Op::transpose, "transpose"}, {Op::gelu_erf, "gelu_erf"},
	{Op::conv, "conv"}, {Op::conv_transpose, "conv_transpose"}, {Op::maxpool, "maxpool"},
	{Op::avgpool, "avgpool"}, {Op::global_avgpool, "global_avgpool"},
	{Op::channel_affine, "channel_affine"},
	{Op::unary, "unary"}, {Op::pow, "pow"}, {Op::softmax_axis, "softmax_axis"},
	{Op::reduce, "reduce"}, {Op::concat, "concat"}, {Op::slice, "slice"},
	{Op::gather, "gather"}, {Op::where, "where"}, {Op::cast, "cast"},
}};
constexpr std::array<NamedValue<EngineClass>, 3> engine_names{{
	{EngineClass::cpu, "cpu"}, {EngineClass::device, "device"}, {EngineClass::worker, "worker"},
}};
constexpr std::array<NamedValue<GraphErrorReason>, 16> reason_names{{
	{GraphErrorReason::none, "none"}, {GraphErrorReason::header, "header"},
	{GraphErrorReason::limit, "limit"}, {GraphErrorReason::range, "range"},
	{GraphErrorReason::buffer, "buffer"}, {GraphErrorReason::tensor, "tensor"},
	{GraphErrorReason::bounds, "bounds"}, {GraphErrorReason::op, "op"},
	{GraphErrorReason::engine, "engine"}, {GraphErrorReason::arity, "arity"},
	{GraphErrorReason::shape, "shape"}, {GraphErrorReason::param, "param"},
	{GraphErrorReason::alias, "alias"}, {GraphErrorReason::writers, "writers"},
	{GraphErrorReason::cycle, "cycle"}, {GraphErrorReason::encoding, "encoding"},
}};
constexpr std::array<NamedValue<GraphEncoding>, 2> encoding_names{{
	{GraphEncoding::fixed, "fixed"}, {GraphEncoding::compact, "compact"},
}};
constexpr std::array<NamedValue<GraphErrorKind>, 4> kind_names{{
	{GraphErrorKind::header, "header"}, {GraphErrorKind::buffer, "buffer"},
	{GraphErrorKind::tensor, "tensor"}, {GraphErrorKind::node, "node"},
}};

template <typename E, std::size_t N>
const char *name_of(const std::array<NamedValue<E>, N> &table, E value) noexcept
{
	for (const auto &entry : table)
		if (entry.value == value)
			return entry.name;
	return "unknown";
}

template <typename E, std::size_t N>
std::optional<E> value_of(const std::array<NamedValue<E>, N> &table, std::string_view name) noexcept
{
	for (const auto &entry : table)
		if (name == entry.name)
			return entry.value;
	return std::nullopt;
}

void put_u32(std::vector<std::byte> &out, std::uint32_t v)
{
	for (int i = 0; i < 4; i++)
		out.push_back(static_cast<std::byte>((v >> (8 * i)) & 0xff));
}

void put_f32(std::vector<std::byte> &out, float v)
{
	put_u32(out, std::bit_cast<std::uint32_t>(v));
}

std::uint32_t get_u32(std::span<const std::byte> in, std::size_t at)
{
	std::uint32_t v = 0;

	for (std::size_t i = 0; i < 4; i++)
		v |= static_cast<std::uint32_t>(in[at + i]) << (8 * i);
	return v;
}

float get_f32(std::span<const std::byte> in, std::size_t at)
{
	return std::bit_cast<float>(get_u32(in, at));
}

std::int32_t get_s32(std::span<const std::byte> in, std::size_t at)
{
	return static_cast<std::int32_t>(get_u32(in, at));
}

// splitmix64 (<mcp/graph.h>, struct mcp_graph_init).
struct SplitMix64 {
	std::uint64_t state;

	std::uint64_t next() noexcept
	{
		state += 0x9e3779b97f4a7c15ULL;
		std::uint64_t z = state;
		z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
		z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
		return z ^ (z >> 31);
	}
};

} // namespace

std::size_t dtype_size(DType dtype) noexcept
{
	switch (dtype) {
	case DType::f32:
	case DType::i32:
		return 4;
	case DType::i8:
	case DType::u8:
		return 1;
	}
	return 0;
}

const char *to_string(DType dtype) noexcept { return name_of(dtype_names, dtype); }
const char *to_string(Layout layout) noexcept { return name_of(layout_names, layout); }
const char *to_string(Op op) noexcept { return name_of(op_names, op); }
const char *to_string(EngineClass engine) noexcept { return name_of(engine_names, engine); }
const char *to_string(GraphErrorReason reason) noexcept { return name_of(reason_names, reason); }
const char *to_string(GraphErrorKind kind) noexcept { return name_of(kind_names, kind); }
const char *to_string(GraphEncoding encoding) noexcept { return name_of(encoding_names, encoding); }

std::optional<DType> parse_dtype(std::string_view name) noexcept
{
	return value_of(dtype_names, name);
}

std::optional<Layout> parse_layout(std::string_view name) noexcept
{
	return value_of(layout_names, name);
}

std::optional<Op> parse_op(std::string_view name) noexcept
{
	return value_of(op_names, name);
}

std::optional<EngineClass> parse_engine_class(std::string_view name) noexcept
{
	return value_of(engine_names, name);
}

std::optional<GraphEncoding> parse_graph_encoding(std::string_view name) noexcept
{
	return value_of(encoding_names, name);
}

void fill(const GraphInit &init, DType dtype, std::span<std::byte> bytes)
{
	const DType wanted = init.kind == InitKind::uniform_i8 ? DType::i8 : DType::f32;

	if (init.kind == InitKind::data)
		throw Error(EINVAL, "graph buffer init: kind data copies the graph's data section "
				    "(GraphDef::fill_buffer()), it is not a stream");
	if (init.kind != InitKind::uniform_f32 && init.kind != InitKind::uniform_i8 &&
	    init.kind != InitKind::constant_f32)
		throw Error(EINVAL, "graph buffer init: unknown kind " +
				    std::to_string(static_cast<std::uint32_t>(init.kind)) +
				    " (1 uniform_f32, 2 uniform_i8, 3 constant_f32, 4 data)");
	if (dtype != wanted)
		throw Error(EINVAL, std::string("graph buffer init: kind ") +
				    (init.kind == InitKind::uniform_i8 ? "uniform_i8" : "f32") +
				    " fills " + to_string(wanted) + " elements, not " +
				    to_string(dtype));

	const std::size_t elem = dtype_size(dtype);
	const std::size_t count = bytes.size() / elem;
	SplitMix64 rng{init.seed};

	for (std::size_t i = 0; i < count; i++) {
		std::byte *at = bytes.data() + i * elem;

		if (init.kind == InitKind::uniform_i8) {
			const auto q = static_cast<std::int8_t>(static_cast<int>(rng.next() % 255) - 127);
			std::memcpy(at, &q, 1);
			continue;
		}
		float x = init.scale;
		if (init.kind == InitKind::uniform_f32) {
			const float u = static_cast<float>(rng.next() >> 40) * 0x1p-24f;
			x = (2.0f * u - 1.0f) * init.scale;
		}
		std::memcpy(at, &x, 4);
	}
	std::fill(bytes.begin() + static_cast<std::ptrdiff_t>(count * elem), bytes.end(),
		  std::byte{0});
}

std::vector<std::byte> param_bytes(const QuantParam &p)
{
	std::vector<std::byte> out;

	put_f32(out, p.scale);
	put_u32(out, static_cast<std::uint32_t>(p.zero_point));
	return out;
}

std::vector<std::byte> param_bytes(const MatmulParam &p)
{
	std::vector<std::byte> out;

	put_u32(out, p.flags);
	put_f32(out, p.alpha);
	return out;
}

std::vector<std::byte> param_bytes(const NormParam &p)
{
	std::vector<std::byte> out;

	put_f32(out, p.eps);
	put_u32(out, 0);
	return out;
}

std::vector<std::byte> param_bytes(const MatmulI8Param &p)
{
	std::vector<std::byte> out;

	put_f32(out, p.scale_a);
	put_u32(out, static_cast<std::uint32_t>(p.zero_a));
	put_f32(out, p.scale_b);
	put_u32(out, static_cast<std::uint32_t>(p.zero_b));
	return out;
}

std::optional<QuantParam> GraphNode::quant() const
{
	if (param.size() != 8)
		return std::nullopt;
	return QuantParam{get_f32(param, 0), get_s32(param, 4)};
}

std::optional<MatmulParam> GraphNode::matmul() const
{
	if (param.empty())
		return MatmulParam{};
	if (param.size() != 8)
		return std::nullopt;
	return MatmulParam{get_u32(param, 0), get_f32(param, 4)};
}

std::optional<NormParam> GraphNode::norm() const
{
	if (param.size() != 8)
		return std::nullopt;
	return NormParam{get_f32(param, 0)};
}

std::optional<MatmulI8Param> GraphNode::matmul_i8() const
{
	if (param.size() != 16)
		return std::nullopt;
	return MatmulI8Param{get_f32(param, 0), get_s32(param, 4), get_f32(param, 8),
			     get_s32(param, 12)};
}

std::optional<std::uint64_t> GraphTensor::bytes() const noexcept
{
	std::uint64_t n = dtype_size(dtype);

	if (n == 0)
		return std::nullopt;
	for (std::uint32_t d : dims)
		if (__builtin_mul_overflow(n, std::uint64_t{d}, &n))
			return std::nullopt;
	return n;
}

std::optional<std::uint64_t> GraphTensor::padded_bytes() const noexcept
{
	const auto b = bytes();
	std::uint64_t padded = 0;

	if (!b || __builtin_add_overflow(*b, std::uint64_t{graph_align - 1}, &padded))
		return std::nullopt;
	return padded & ~std::uint64_t{graph_align - 1};
}

GraphInvalid::GraphInvalid(GraphError error)
	: Error(EINVAL, error.message), error_(std::move(error))
{
}

std::uint64_t GraphDef::tensor_bytes(std::uint32_t index) const noexcept
{
	if (index >= tensors.size())
		return 0;
	return tensors[index].bytes().value_or(0);
}

std::uint64_t GraphDef::total_bytes() const noexcept
{
	std::uint64_t total = 0;

	for (const auto &b : buffers)
		total += b.length;
	return total;
}

namespace {

template <typename T>
std::optional<std::uint32_t> find_named(const std::vector<T> &entries, std::string_view name) noexcept
{
	for (std::size_t i = 0; i < entries.size(); i++)
		if (entries[i].name == name)
			return static_cast<std::uint32_t>(i);
	return std::nullopt;
}

} // namespace

std::optional<std::uint32_t> GraphDef::find_buffer(std::string_view n) const noexcept
{
	return find_named(buffers, n);
}

std::optional<std::uint32_t> GraphDef::find_tensor(std::string_view n) const noexcept
{
	return find_named(tensors, n);
}

std::optional<std::uint32_t> GraphDef::find_node(std::string_view n) const noexcept
{
	return find_named(nodes, n);
}

namespace detail {

std::string graph_entry_label(GraphErrorKind kind, std::uint32_t index, std::string_view name,
			      std::optional<Op> op)
{
	std::string label = std::string(to_string(kind)) + " " + std::to_string(index);
	std::string inner;

	if (op)
		inner = to_string(*op);
	if (!name.empty())
		inner += (inner.empty() ? "'" : " '") + std::string(name) + "'";
	if (!inner.empty())
		label += " (" + inner + ")";
	return label;
}

std::string dims_text(std::span<const std::uint32_t> dims)
{
	std::string s = "[";

	for (std::size_t i = 0; i < dims.size(); i++)
		s += (i ? " x " : "") + std::to_string(dims[i]);
	return s + "]";
}

GraphError make_graph_error(GraphErrorReason reason, GraphErrorKind kind, std::uint32_t index,
			    std::string label, const std::string &what)
{
	GraphError e{reason, kind, index, {}};

	e.message = (label.empty() ? "graph" : label) + ": " + what;
	return e;
}

std::vector<std::byte> init_bytes(const GraphInit &init)
{
	std::vector<std::byte> out;

	put_u32(out, static_cast<std::uint32_t>(init.kind));
	put_u32(out, 0);
	put_u32(out, static_cast<std::uint32_t>(init.seed));
	put_u32(out, static_cast<std::uint32_t>(init.seed >> 32));
	put_f32(out, init.scale);
	put_u32(out, 0);
	return out;
}

std::optional<GraphInit> decode_init(std::span<const std::byte> bytes)
{
	if (bytes.size() != graph_init_size)
		return std::nullopt;

	const std::uint32_t kind = get_u32(bytes, 0);

	if (kind < MCP_GRAPH_INIT_UNIFORM_F32 || kind > MCP_GRAPH_INIT_DATA ||
	    get_u32(bytes, 4) != 0 || get_u32(bytes, 20) != 0)
		return std::nullopt;
	if (kind == MCP_GRAPH_INIT_DATA && get_u32(bytes, 16) != 0)
		return std::nullopt;
	return GraphInit{static_cast<InitKind>(kind),
			 get_u32(bytes, 8) | (std::uint64_t{get_u32(bytes, 12)} << 32),
			 get_f32(bytes, 16)};
}

} // namespace detail
} // namespace mcp
