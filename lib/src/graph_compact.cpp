// SPDX-License-Identifier: LGPL-2.1-or-later
// The compact encoding, format version 2 (graphs.rst, "Compact encoding"):
// the version 1 tables as unsigned LEB128 varints, without reserved
// fields or unused slots.  The decoder mirrors kmod/mcp_graph_decode.c
// field for field, so both refuse the same bytes at the same record.
#include <cstring>
#include <string>
#include <vector>

#include "graph_internal.hpp"

namespace mcp::detail {

namespace {

void put_varint(std::vector<std::byte> &out, std::uint64_t v)
{
	do {
		auto b = static_cast<std::uint8_t>(v & 0x7f);
		v >>= 7;
		if (v)
			b |= 0x80;
		out.push_back(std::byte{b});
	} while (v);
}

class Reader {
public:
	explicit Reader(std::span<const std::byte> bytes) : p_(bytes.data()), end_(p_ + bytes.size())
	{
	}

	// One varint of at most @max_bytes bytes and at most @max_val.
	bool varint(const char *field, unsigned max_bytes, std::uint64_t max_val, std::uint64_t &val)
	{
		std::uint64_t v = 0;

		for (unsigned i = 0; i < max_bytes; i++) {
			if (p_ == end_)
				return refuse(field, "runs past the end of the tables");
			const auto b = std::to_integer<std::uint8_t>(*p_++);
			// The tenth byte holds bit 63 only.
			if (i == 9 && b > 1)
				return refuse(field, "does not fit 64 bits");
			v |= std::uint64_t{b & 0x7fU} << (7 * i);
			if (!(b & 0x80)) {
				if (v > max_val)
					return refuse(field, std::to_string(v) + " does not fit the field");
				val = v;
				return true;
			}
		}
		return refuse(field, "is longer than " + std::to_string(max_bytes) + " bytes");
	}

	template <typename T>
	bool get(const char *field, T &out)
	{
		constexpr unsigned bits = sizeof(T) * 8;
		std::uint64_t v = 0;

		if (!varint(field, (bits + 6) / 7, static_cast<std::uint64_t>(T(~T{0})), v))
			return false;
		out = static_cast<T>(v);
		return true;
	}

	bool refuse(const std::string &field, const std::string &why)
	{
		what_ = "cannot be decoded: its " + field + " varint " + why;
		return false;
	}

	std::span<const std::byte> rest() const
	{
		return {p_, end_};
	}
	const std::string &what() const
	{
		return what_;
	}

private:
	const std::byte *p_;
	const std::byte *end_;
	std::string what_;
};

bool decode_buffer(Reader &r, struct mcp_graph_buffer &b)
{
	b = {};
	return r.get("length", b.length) && r.get("flags", b.flags) &&
	       r.get("name_offset", b.name_offset) && r.get("name_len", b.name_len) &&
	       r.get("init_offset", b.init_offset) && r.get("init_len", b.init_len);
}

bool decode_tensor(Reader &r, struct mcp_graph_tensor &t)
{
	t = {};
	if (!r.get("buffer", t.buffer) || !r.get("dtype", t.dtype) || !r.get("rank", t.rank))
		return false;
	if (t.rank > MCP_GRAPH_MAX_RANK)
		return r.refuse("rank", std::to_string(t.rank) + " is over 6");
	if (!r.get("layout", t.layout) || !r.get("flags", t.flags) || !r.get("offset", t.offset))
		return false;
	for (unsigned k = 0; k < t.rank; k++)
		if (!r.get("dims", t.dims[k]))
			return false;
	return r.get("name_offset", t.name_offset) && r.get("name_len", t.name_len);
}

bool decode_node(Reader &r, struct mcp_graph_node &n)
{
	n = {};
	if (!r.get("op", n.op) || !r.get("engine", n.engine) || !r.get("flags", n.flags) ||
	    !r.get("n_inputs", n.n_inputs))
		return false;
	if (n.n_inputs > MCP_GRAPH_MAX_INPUTS)
		return r.refuse("n_inputs", std::to_string(n.n_inputs) + " is over 4");
	if (!r.get("n_outputs", n.n_outputs))
		return false;
	if (n.n_outputs > MCP_GRAPH_MAX_OUTPUTS)
		return r.refuse("n_outputs", std::to_string(n.n_outputs) + " is over 2");
	for (unsigned k = 0; k < n.n_inputs; k++)
		if (!r.get("inputs", n.inputs[k]))
			return false;
	for (unsigned k = 0; k < n.n_outputs; k++)
		if (!r.get("outputs", n.outputs[k]))
			return false;
	return r.get("param_offset", n.param_offset) && r.get("param_len", n.param_len) &&
	       r.get("name_offset", n.name_offset) && r.get("name_len", n.name_len);
}

} // namespace

std::uint64_t compact_min_tables(const struct mcp_graph_header &h) noexcept
{
	return MCP_GRAPH_COMPACT_MIN_BUFFER * std::uint64_t{h.n_buffers} +
	       MCP_GRAPH_COMPACT_MIN_TENSOR * std::uint64_t{h.n_tensors} +
	       MCP_GRAPH_COMPACT_MIN_NODE * std::uint64_t{h.n_nodes};
}

std::uint64_t compact_max_tables(const struct mcp_graph_header &h) noexcept
{
	return MCP_GRAPH_COMPACT_MAX_BUFFER * std::uint64_t{h.n_buffers} +
	       MCP_GRAPH_COMPACT_MAX_TENSOR * std::uint64_t{h.n_tensors} +
	       MCP_GRAPH_COMPACT_MAX_NODE * std::uint64_t{h.n_nodes} + 7;
}

std::optional<CompactFailure> decode_compact_tables(std::span<const std::byte> tables,
						    std::span<struct mcp_graph_buffer> buffers,
						    std::span<struct mcp_graph_tensor> tensors,
						    std::span<struct mcp_graph_node> nodes)
{
	Reader r(tables);

	for (std::uint32_t i = 0; i < buffers.size(); i++)
		if (!decode_buffer(r, buffers[i]))
			return CompactFailure{GraphErrorKind::buffer, i, r.what()};
	for (std::uint32_t i = 0; i < tensors.size(); i++)
		if (!decode_tensor(r, tensors[i]))
			return CompactFailure{GraphErrorKind::tensor, i, r.what()};
	for (std::uint32_t i = 0; i < nodes.size(); i++)
		if (!decode_node(r, nodes[i]))
			return CompactFailure{GraphErrorKind::node, i, r.what()};
	// Only zero padding, less than 8 bytes, may follow the last node.
	const auto rest = r.rest();
	if (rest.size() >= 8)
		return CompactFailure{GraphErrorKind::header, 0,
				      std::to_string(rest.size()) +
					      " bytes follow the last node: padding is under 8"};
	for (const auto b : rest)
		if (b != std::byte{0})
			return CompactFailure{GraphErrorKind::header, 0,
					      "the padding after the last node is not zero"};
	return std::nullopt;
}

std::vector<std::byte> compact_from_fixed(std::span<const std::byte> fixed)
{
	struct mcp_graph_header hdr;
	std::vector<std::byte> tables;
	const std::byte *p = fixed.data() + sizeof(hdr);

	std::memcpy(&hdr, fixed.data(), sizeof(hdr));
	for (std::uint32_t i = 0; i < hdr.n_buffers; i++, p += sizeof(struct mcp_graph_buffer)) {
		struct mcp_graph_buffer b;

		std::memcpy(&b, p, sizeof(b));
		for (const std::uint64_t v : {std::uint64_t{b.length}, std::uint64_t{b.flags},
					      std::uint64_t{b.name_offset}, std::uint64_t{b.name_len},
					      std::uint64_t{b.init_offset}, std::uint64_t{b.init_len}})
			put_varint(tables, v);
	}
	for (std::uint32_t i = 0; i < hdr.n_tensors; i++, p += sizeof(struct mcp_graph_tensor)) {
		struct mcp_graph_tensor t;

		std::memcpy(&t, p, sizeof(t));
		for (const std::uint64_t v : {std::uint64_t{t.buffer}, std::uint64_t{t.dtype},
					      std::uint64_t{t.rank}, std::uint64_t{t.layout},
					      std::uint64_t{t.flags}, std::uint64_t{t.offset}})
			put_varint(tables, v);
		for (unsigned k = 0; k < t.rank && k < MCP_GRAPH_MAX_RANK; k++)
			put_varint(tables, t.dims[k]);
		put_varint(tables, t.name_offset);
		put_varint(tables, t.name_len);
	}
	for (std::uint32_t i = 0; i < hdr.n_nodes; i++, p += sizeof(struct mcp_graph_node)) {
		struct mcp_graph_node n;

		std::memcpy(&n, p, sizeof(n));
		for (const std::uint64_t v : {std::uint64_t{n.op}, std::uint64_t{n.engine},
					      std::uint64_t{n.flags}, std::uint64_t{n.n_inputs},
					      std::uint64_t{n.n_outputs}})
			put_varint(tables, v);
		for (unsigned k = 0; k < n.n_inputs && k < MCP_GRAPH_MAX_INPUTS; k++)
			put_varint(tables, n.inputs[k]);
		for (unsigned k = 0; k < n.n_outputs && k < MCP_GRAPH_MAX_OUTPUTS; k++)
			put_varint(tables, n.outputs[k]);
		for (const std::uint32_t v : {n.param_offset, n.param_len, n.name_offset, n.name_len})
			put_varint(tables, v);
	}
	while (tables.size() % 8)
		tables.push_back(std::byte{0});

	hdr.version = MCP_GRAPH_VERSION_COMPACT;
	hdr.total_len = sizeof(hdr) + tables.size() + hdr.blob_len;
	const auto *head = reinterpret_cast<const std::byte *>(&hdr);
	std::vector<std::byte> out;
	out.reserve(sizeof(hdr) + tables.size() + hdr.blob_len);
	out.insert(out.end(), head, head + sizeof(hdr));
	out.insert(out.end(), tables.begin(), tables.end());
	out.insert(out.end(), p, p + hdr.blob_len);
	return out;
}

} // namespace mcp::detail
