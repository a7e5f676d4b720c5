// SPDX-License-Identifier: LGPL-2.1-or-later
// GraphDef to the binary format of <linux/mcp.h> and back, in either
// encoding (compact: graph_compact.cpp from the fixed image).  The blob holds
// the graph's name, then per buffer its name and init, per tensor its
// name, per node its name and parameters; inits and parameters start on 8
// bytes (the kernel and workers read them as structs).
#include <cstring>
#include <string>
#include <vector>

#include "graph_internal.hpp"

namespace mcp {

namespace {

class BlobWriter {
public:
	// Appends @bytes (aligned to @align); returns its (offset, length).
	std::pair<std::uint32_t, std::uint32_t> add(std::span<const std::byte> bytes,
						    std::size_t align = 1)
	{
		if (bytes.empty())
			return {0, 0};
		while (blob_.size() % align)
			blob_.push_back(std::byte{0});
		const std::size_t off = blob_.size();
		blob_.insert(blob_.end(), bytes.begin(), bytes.end());
		if (blob_.size() > UINT32_MAX)
			throw GraphInvalid(detail::make_graph_error(
				GraphErrorReason::header, GraphErrorKind::header, 0, {},
				"names and parameters do not fit a 4 GiB blob"));
		return {static_cast<std::uint32_t>(off), static_cast<std::uint32_t>(bytes.size())};
	}

	std::pair<std::uint32_t, std::uint32_t> add(const std::string &text)
	{
		return add(std::as_bytes(std::span(text.data(), text.size())));
	}

	std::vector<std::byte> finish()
	{
		while (blob_.size() % 8)
			blob_.push_back(std::byte{0});
		return std::move(blob_);
	}

private:
	std::vector<std::byte> blob_;
};

template <typename T>
void append(std::vector<std::byte> &out, const T &value)
{
	const auto *p = reinterpret_cast<const std::byte *>(&value);
	out.insert(out.end(), p, p + sizeof(value));
}

std::string text(std::span<const std::byte> blob, std::uint32_t off, std::uint32_t len)
{
	if (len == 0)
		return {};
	return {reinterpret_cast<const char *>(blob.data()) + off, len};
}

} // namespace

std::optional<GraphEncoding> graph_encoding(std::span<const std::byte> bytes) noexcept
{
	struct mcp_graph_header hdr;

	if (bytes.size() < sizeof(hdr))
		return std::nullopt;
	std::memcpy(&hdr, bytes.data(), sizeof(hdr));
	if (hdr.magic != MCP_GRAPH_MAGIC)
		return std::nullopt;
	if (hdr.version == MCP_GRAPH_VERSION)
		return GraphEncoding::fixed;
	if (hdr.version == MCP_GRAPH_VERSION_COMPACT)
		return GraphEncoding::compact;
	return std::nullopt;
}

std::vector<std::byte> GraphDef::serialize(GraphEncoding encoding) const
{
	BlobWriter blob;
	std::vector<struct mcp_graph_buffer> bufs(buffers.size());
	std::vector<struct mcp_graph_tensor> tens(tensors.size());
	std::vector<struct mcp_graph_node> nods(nodes.size());
	struct mcp_graph_header hdr {};

	std::tie(hdr.name_offset, hdr.name_len) = blob.add(name);
	for (std::size_t i = 0; i < buffers.size(); i++) {
		const auto &b = buffers[i];
		auto &raw = bufs[i];

		raw.length = b.length;
		raw.flags = b.flags;
		std::tie(raw.name_offset, raw.name_len) = blob.add(b.name);
		if (b.init) {
			const auto init = detail::init_bytes(*b.init);
			std::tie(raw.init_offset, raw.init_len) = blob.add(init, 8);
		} else {
			std::tie(raw.init_offset, raw.init_len) = blob.add(b.init_raw, 8);
		}
	}
	for (std::uint32_t i = 0; i < tensors.size(); i++) {
		const auto &t = tensors[i];
		auto &raw = tens[i];

		if (t.dims.size() > graph_max_rank)
			throw GraphInvalid(detail::make_graph_error(
				GraphErrorReason::tensor, GraphErrorKind::tensor, i,
				detail::graph_entry_label(GraphErrorKind::tensor, i, t.name),
				"rank " + std::to_string(t.dims.size()) + " is over 6"));
		raw.buffer = t.buffer;
		raw.dtype = static_cast<std::uint8_t>(t.dtype);
		raw.rank = static_cast<std::uint8_t>(t.dims.size());
		raw.layout = static_cast<std::uint8_t>(t.layout);
		raw.offset = t.offset;
		std::copy(t.dims.begin(), t.dims.end(), raw.dims);
		std::tie(raw.name_offset, raw.name_len) = blob.add(t.name);
	}
	for (std::uint32_t i = 0; i < nodes.size(); i++) {
		const auto &n = nodes[i];
		auto &raw = nods[i];

		if (n.inputs.size() > graph_max_inputs || n.outputs.size() > graph_max_outputs)
			throw GraphInvalid(detail::make_graph_error(
				GraphErrorReason::arity, GraphErrorKind::node, i,
				detail::graph_entry_label(GraphErrorKind::node, i, n.name, n.op),
				std::to_string(n.inputs.size()) + " inputs and " +
					std::to_string(n.outputs.size()) + " outputs: at most 4 and 2"));
		raw.op = static_cast<std::uint16_t>(n.op);
		raw.engine = static_cast<std::uint8_t>(n.engine);
		raw.flags = n.flags;
		raw.n_inputs = static_cast<std::uint8_t>(n.inputs.size());
		raw.n_outputs = static_cast<std::uint8_t>(n.outputs.size());
		std::copy(n.inputs.begin(), n.inputs.end(), raw.inputs);
		std::copy(n.outputs.begin(), n.outputs.end(), raw.outputs);
		std::tie(raw.name_offset, raw.name_len) = blob.add(n.name);
		std::tie(raw.param_offset, raw.param_len) = blob.add(n.param, 8);
	}

	const std::vector<std::byte> blob_bytes = blob.finish();
	hdr.magic = MCP_GRAPH_MAGIC;
	hdr.version = MCP_GRAPH_VERSION;
	hdr.header_size = sizeof(hdr);
	hdr.n_buffers = static_cast<std::uint32_t>(buffers.size());
	hdr.n_tensors = static_cast<std::uint32_t>(tensors.size());
	hdr.n_nodes = static_cast<std::uint32_t>(nodes.size());
	hdr.blob_len = static_cast<std::uint32_t>(blob_bytes.size());
	hdr.total_len = sizeof(hdr) + bufs.size() * sizeof(bufs[0]) + tens.size() * sizeof(tens[0]) +
			nods.size() * sizeof(nods[0]) + blob_bytes.size();

	std::vector<std::byte> out;
	out.reserve(hdr.total_len);
	append(out, hdr);
	for (const auto &b : bufs)
		append(out, b);
	for (const auto &t : tens)
		append(out, t);
	for (const auto &n : nods)
		append(out, n);
	out.insert(out.end(), blob_bytes.begin(), blob_bytes.end());
	if (encoding == GraphEncoding::compact)
		return detail::compact_from_fixed(out);
	return out;
}

GraphDef GraphDef::parse(std::span<const std::byte> bytes, const GraphLimits &limits)
{
	// A compact graph is decoded once, then its version 1 image is read
	// (checking the image gives the verdict check_graph() gives the bytes).
	std::vector<std::byte> image;
	if (graph_encoding(bytes) == GraphEncoding::compact) {
		std::optional<GraphError> refused;
		image = detail::fixed_image(bytes, limits, refused);
		if (refused)
			throw GraphInvalid(std::move(*refused));
		bytes = image;
	}
	if (auto e = check_graph(bytes, limits))
		throw GraphInvalid(std::move(*e));

	struct mcp_graph_header hdr;
	std::memcpy(&hdr, bytes.data(), sizeof(hdr));
	const std::byte *p = bytes.data() + sizeof(hdr);
	const std::span<const std::byte> blob(
		bytes.data() + (hdr.total_len - hdr.blob_len), hdr.blob_len);
	GraphDef def;

	def.name = text(blob, hdr.name_offset, hdr.name_len);
	def.buffers.resize(hdr.n_buffers);
	for (std::uint32_t i = 0; i < hdr.n_buffers; i++, p += sizeof(struct mcp_graph_buffer)) {
		struct mcp_graph_buffer raw;
		auto &b = def.buffers[i];

		std::memcpy(&raw, p, sizeof(raw));
		b.name = text(blob, raw.name_offset, raw.name_len);
		b.length = raw.length;
		b.flags = raw.flags;
		if (raw.init_len == 0)
			continue;
		const auto init = blob.subspan(raw.init_offset, raw.init_len);
		b.init = detail::decode_init(init);
		if (!b.init)
			b.init_raw.assign(init.begin(), init.end());
	}
	def.tensors.resize(hdr.n_tensors);
	for (std::uint32_t i = 0; i < hdr.n_tensors; i++, p += sizeof(struct mcp_graph_tensor)) {
		struct mcp_graph_tensor raw;
		auto &t = def.tensors[i];

		std::memcpy(&raw, p, sizeof(raw));
		t.name = text(blob, raw.name_offset, raw.name_len);
		t.buffer = raw.buffer;
		t.dtype = static_cast<DType>(raw.dtype);
		t.layout = static_cast<Layout>(raw.layout);
		t.offset = raw.offset;
		t.dims.assign(raw.dims, raw.dims + raw.rank);
	}
	def.nodes.resize(hdr.n_nodes);
	for (std::uint32_t i = 0; i < hdr.n_nodes; i++, p += sizeof(struct mcp_graph_node)) {
		struct mcp_graph_node raw;
		auto &n = def.nodes[i];

		std::memcpy(&raw, p, sizeof(raw));
		n.name = text(blob, raw.name_offset, raw.name_len);
		n.op = static_cast<Op>(raw.op);
		n.engine = static_cast<EngineClass>(raw.engine);
		n.flags = raw.flags;
		n.inputs.assign(raw.inputs, raw.inputs + raw.n_inputs);
		n.outputs.assign(raw.outputs, raw.outputs + raw.n_outputs);
		const auto param = blob.subspan(raw.param_len ? raw.param_offset : 0, raw.param_len);
		n.param.assign(param.begin(), param.end());
	}
	return def;
}

} // namespace mcp
