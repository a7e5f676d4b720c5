// SPDX-License-Identifier: LGPL-2.1-or-later
// mcp::GraphBuilder: a GraphDef entry by entry, tensors laid out on
// 64-byte lines at the end of their buffer.
#include <cerrno>
#include <string>
#include <utility>

#include "graph_internal.hpp"

namespace mcp {

namespace {

[[noreturn]] void builder_error(const std::string &what)
{
	throw Error(EINVAL, "GraphBuilder: " + what);
}

std::uint64_t padded_or_throw(const GraphTensor &t)
{
	if (t.dims.size() > graph_max_rank)
		builder_error("tensor '" + t.name + "' has rank " + std::to_string(t.dims.size()) +
			      ", at most 6");
	const auto padded = t.padded_bytes();
	if (!padded)
		builder_error("tensor '" + t.name + "' " + detail::dims_text(t.dims) +
			      " has an unknown dtype or overflows 64 bits");
	return *padded;
}

} // namespace

GraphBuilder::GraphBuilder(std::string name)
{
	def_.name = std::move(name);
}

GraphBuilder::GraphBuilder(GraphDef def) : def_(std::move(def))
{
}

void GraphBuilder::grow(std::uint32_t buffer, std::uint64_t end)
{
	auto &b = def_.buffers[buffer];

	if (end > b.length)
		b.length = end;
}

std::uint32_t GraphBuilder::buffer(std::string name, std::uint32_t flags,
				   std::optional<GraphInit> init)
{
	GraphBuffer b;

	b.name = std::move(name);
	b.flags = flags;
	b.init = init;
	def_.buffers.push_back(std::move(b));
	return static_cast<std::uint32_t>(def_.buffers.size() - 1);
}

std::uint32_t GraphBuilder::tensor(std::string name, std::uint32_t buffer, DType dtype,
				   std::vector<std::uint32_t> dims, Layout layout)
{
	if (buffer >= def_.buffers.size())
		builder_error("tensor '" + name + "': buffer " + std::to_string(buffer) +
			      " does not exist (" + std::to_string(def_.buffers.size()) + " buffers)");

	const std::uint64_t line = graph_align - 1;
	GraphTensor t{std::move(name), buffer, dtype, layout,
		      (def_.buffers[buffer].length + line) & ~line, std::move(dims)};
	const std::uint64_t padded = padded_or_throw(t);

	grow(buffer, t.offset + padded);
	def_.tensors.push_back(std::move(t));
	return static_cast<std::uint32_t>(def_.tensors.size() - 1);
}

std::uint32_t GraphBuilder::view(std::string name, std::uint32_t of, DType dtype,
				 std::vector<std::uint32_t> dims, Layout layout)
{
	if (of >= def_.tensors.size())
		builder_error("view '" + name + "': tensor " + std::to_string(of) + " does not exist");

	const GraphTensor &base = def_.tensors[of];
	GraphTensor t{std::move(name), base.buffer, dtype, layout, base.offset, std::move(dims)};
	const std::uint64_t padded = padded_or_throw(t);

	grow(t.buffer, t.offset + padded);
	def_.tensors.push_back(std::move(t));
	return static_cast<std::uint32_t>(def_.tensors.size() - 1);
}

std::uint32_t GraphBuilder::node(Op op, EngineClass engine, std::vector<std::uint32_t> inputs,
				 std::vector<std::uint32_t> outputs, std::vector<std::byte> param,
				 std::string name, std::uint8_t flags)
{
	if (inputs.size() > graph_max_inputs || outputs.size() > graph_max_outputs)
		builder_error("node '" + name + "' has " + std::to_string(inputs.size()) +
			      " inputs and " + std::to_string(outputs.size()) +
			      " outputs, at most 4 and 2");
	if (param.size() > graph_max_param)
		builder_error("node '" + name + "' has " + std::to_string(param.size()) +
			      " bytes of parameters, at most 256");
	for (const auto *list : {&inputs, &outputs})
		for (std::uint32_t t : *list)
			if (t >= def_.tensors.size())
				builder_error("node '" + name + "': tensor " + std::to_string(t) +
					      " does not exist (" +
					      std::to_string(def_.tensors.size()) + " tensors)");
	def_.nodes.push_back({std::move(name), op, engine, flags, std::move(inputs),
			      std::move(outputs), std::move(param)});
	return static_cast<std::uint32_t>(def_.nodes.size() - 1);
}

GraphDef GraphBuilder::build(const GraphLimits &limits) const
{
	if (auto e = def_.validate(limits))
		throw GraphInvalid(std::move(*e));
	return def_;
}

} // namespace mcp
