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

// ---- .mgph files: the graph, then the data trailer ----

namespace mcp {

namespace {

// "MCPGDATA", version 1, reserved, notes_len, data_len, notes (padded to
// 8), data.  Little-endian like the graph.
constexpr char data_magic[8] = {'M', 'C', 'P', 'G', 'D', 'A', 'T', 'A'};
constexpr std::size_t data_header_size = 32;

GraphInvalid file_error(const std::string &what)
{
	return GraphInvalid(detail::make_graph_error(GraphErrorReason::header, GraphErrorKind::header,
						     0, {}, what));
}

std::uint64_t u64_at(std::span<const std::byte> b, std::size_t at)
{
	std::uint64_t v;

	std::memcpy(&v, b.data() + at, sizeof(v));
	return v;
}

} // namespace

std::vector<std::byte> GraphDef::serialize_file(GraphEncoding encoding) const
{
	std::vector<std::byte> out = serialize(encoding);

	if (data.empty() && notes.empty())
		return out;
	out.insert(out.end(), reinterpret_cast<const std::byte *>(data_magic),
		   reinterpret_cast<const std::byte *>(data_magic) + sizeof(data_magic));
	append(out, std::uint32_t{1});
	append(out, std::uint32_t{0});
	append(out, std::uint64_t{notes.size()});
	append(out, std::uint64_t{data.size()});
	out.insert(out.end(), reinterpret_cast<const std::byte *>(notes.data()),
		   reinterpret_cast<const std::byte *>(notes.data()) + notes.size());
	while (out.size() % 8)
		out.push_back(std::byte{0});
	out.insert(out.end(), data.begin(), data.end());
	return out;
}

GraphDef GraphDef::parse_file(std::span<const std::byte> bytes, const GraphLimits &limits)
{
	struct mcp_graph_header hdr;

	if (bytes.size() < sizeof(hdr))
		return parse(bytes, limits);
	std::memcpy(&hdr, bytes.data(), sizeof(hdr));
	if (hdr.total_len >= bytes.size())
		return parse(bytes, limits);
	GraphDef def = parse(bytes.first(hdr.total_len), limits);
	auto rest = bytes.subspan(hdr.total_len);
	if (rest.size() < data_header_size ||
	    std::memcmp(rest.data(), data_magic, sizeof(data_magic)) != 0)
		throw file_error(std::to_string(rest.size()) + " bytes after the graph's total_len " +
				 std::to_string(hdr.total_len) + " are not a data section");
	std::uint32_t version;
	std::memcpy(&version, rest.data() + 8, 4);
	if (version != 1)
		throw file_error("data section version " + std::to_string(version) +
				 " is not supported (1)");
	const std::uint64_t notes_len = u64_at(rest, 16), data_len = u64_at(rest, 24);
	const std::uint64_t avail = rest.size() - data_header_size;
	const std::uint64_t notes_padded = (notes_len + 7) & ~std::uint64_t{7};
	if (notes_len > avail || notes_padded > avail || data_len != avail - notes_padded)
		throw file_error("data section: " + std::to_string(notes_len) + " bytes of notes and " +
				 std::to_string(data_len) + " bytes of data do not match the " +
				 std::to_string(avail) + " bytes after its header");
	const auto *p = reinterpret_cast<const char *>(rest.data() + data_header_size);
	def.notes.assign(p, notes_len);
	const auto data = rest.subspan(data_header_size + notes_padded);
	def.data.assign(data.begin(), data.end());
	for (std::size_t i = 0; i < def.buffers.size(); i++) {
		const GraphBuffer &b = def.buffers[i];
		if (b.init && b.init->kind == InitKind::data &&
		    (b.init->seed > def.data.size() || b.length > def.data.size() - b.init->seed))
			throw GraphInvalid(detail::make_graph_error(
				GraphErrorReason::range, GraphErrorKind::buffer,
				static_cast<std::uint32_t>(i),
				detail::graph_entry_label(GraphErrorKind::buffer,
							  static_cast<std::uint32_t>(i), b.name),
				"its data range " + std::to_string(b.init->seed) + " + " +
					std::to_string(b.length) + " is outside the " +
					std::to_string(def.data.size()) + "-byte data section"));
	}
	return def;
}

void GraphDef::fill_buffer(std::uint32_t index, std::span<std::byte> memory) const
{
	const GraphBuffer &b = buffers.at(index);

	if (memory.size() < b.length)
		throw Error(EINVAL, "graph buffer " + std::to_string(index) + " '" + b.name + "': " +
					    std::to_string(memory.size()) + " bytes given, it needs " +
					    std::to_string(b.length));
	if (!b.init)
		return;
	if (b.init->kind != InitKind::data) {
		fill(*b.init, b.init->kind == InitKind::uniform_i8 ? DType::i8 : DType::f32,
		     memory.first(b.length));
		return;
	}
	if (b.init->seed > data.size() || b.length > data.size() - b.init->seed)
		throw Error(EINVAL, "graph buffer " + std::to_string(index) + " '" + b.name +
					    "': its data range " + std::to_string(b.init->seed) + " + " +
					    std::to_string(b.length) + " is outside the " +
					    std::to_string(data.size()) +
					    "-byte data section (load the .mgph file with parse_file())");
	std::memcpy(memory.data(), data.data() + b.init->seed, b.length);
}

} // namespace mcp
