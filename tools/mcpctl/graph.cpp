// SPDX-License-Identifier: GPL-2.0-only
// mcpctl graph build|show|run: inference graphs (Documentation/graphs.rst)
// converted from JSON or the demo, described, and run through the kernel
// with libmcp's Runtime, with per-iteration and per-node latencies and
// where each node ran.
#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <ostream>
#include <sstream>
#include <vector>

#include <fmt/format.h>
#include <mcp/npy.hpp>
#include <mcp/onnx.hpp>
#include <mcp/runtime.hpp>

#include "commands.hpp"
#include "output.hpp"

namespace mcpctl {

namespace {

// MCP_GRAPH_MAGIC of <linux/mcp.h>: "MGPH" little-endian.
constexpr std::uint32_t graph_magic = 0x4850474dU;

struct GraphArgs {
	std::string file;
	std::string demo;
	std::string output;
	std::string encoding = "compact";
	std::string dev = "host";
	unsigned iterations = 10;
	unsigned warmup = 1;
	unsigned workers_per_node = 1;
	unsigned worker_batch = mcp::RuntimeOptions{}.worker_batch;
	bool no_chains = false;
	unsigned timeout_ms = 0;
	int node = -1;
	bool check_inline = false;
	bool no_kernel = false;
	std::string executor = "kernel";
	std::string save_outputs;
	std::vector<std::string> run_inputs;
	std::vector<std::string> binds;
	std::vector<std::string> outs;
	std::vector<std::string> input_dims;
	CLI::App *import = nullptr;
	CLI::App *build = nullptr;
	CLI::App *show = nullptr;
	CLI::App *run = nullptr;
} args;

std::vector<std::byte> read_file(const std::string &path)
{
	std::ifstream in(path, std::ios::binary);

	if (!in)
		throw mcp::Error(errno ? errno : ENOENT,
				 "cannot open '" + path + "': " + std::strerror(errno ? errno : ENOENT));
	std::vector<char> chars((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
	std::vector<std::byte> bytes(chars.size());
	std::memcpy(bytes.data(), chars.data(), chars.size());
	return bytes;
}

void write_file(const std::string &path, std::span<const std::byte> bytes)
{
	std::ofstream out(path, std::ios::binary | std::ios::trunc);

	if (!out)
		throw mcp::Error(errno ? errno : EACCES,
				 "cannot create '" + path + "': " + std::strerror(errno ? errno : EACCES));
	out.write(reinterpret_cast<const char *>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
	if (!out)
		throw mcp::Error(EIO, "cannot write '" + path + "'");
}

// "name=path" -> (name, path); throws mcp::Error(EINVAL).
std::pair<std::string, std::string> split_assignment(std::string_view text, std::string_view option)
{
	std::size_t eq = text.find('=');

	if (eq == std::string_view::npos || eq == 0 || eq + 1 == text.size())
		throw mcp::Error(EINVAL, std::string(option) + " wants NAME=FILE, got '" +
						 std::string(text) + "'");
	return {std::string(text.substr(0, eq)), std::string(text.substr(eq + 1))};
}

double percentile_us(std::vector<std::uint64_t> ns, double p)
{
	if (ns.empty())
		return 0.0;
	std::sort(ns.begin(), ns.end());
	auto idx = static_cast<std::size_t>(std::ceil(p / 100.0 * static_cast<double>(ns.size())));
	idx = std::clamp<std::size_t>(idx, 1, ns.size()) - 1;
	return static_cast<double>(ns[idx]) / 1e3;
}

// "7 on node 1", "3 on node 0, 4 on node 1": where the buffers are.
std::string buffer_nodes_text(const std::vector<GraphRunBuffer> &buffers)
{
	std::map<int, unsigned> count;
	std::string s;

	for (const GraphRunBuffer &b : buffers)
		count[b.node]++;
	for (auto [node, n] : count)
		s += fmt::format("{}{} on {}", s.empty() ? "" : ", ", n,
				 node < 0 ? std::string("mixed or unknown nodes") : fmt::format("node {}", node));
	return s.empty() ? "none" : s;
}

std::string flags_text(std::uint32_t flags)
{
	std::string s;

	for (auto [bit, name] : {std::pair{mcp::graph_buffer_input, "input"},
				 std::pair{mcp::graph_buffer_output, "output"},
				 std::pair{mcp::graph_buffer_const, "const"}})
		if (flags & bit)
			s += (s.empty() ? "" : ",") + std::string(name);
	return s.empty() ? "-" : s;
}

nlohmann::ordered_json flags_json(std::uint32_t flags)
{
	nlohmann::ordered_json a = nlohmann::ordered_json::array();
	std::string s = flags_text(flags);

	if (s == "-")
		return a;
	std::stringstream ss(s);
	for (std::string item; std::getline(ss, item, ',');)
		a.push_back(item);
	return a;
}

std::string dims_text(const std::vector<std::uint32_t> &dims)
{
	std::string s = "[";

	for (std::size_t i = 0; i < dims.size(); i++)
		s += (i ? " x " : "") + std::to_string(dims[i]);
	return s + "]";
}

std::string index_list(const std::vector<std::uint32_t> &v)
{
	std::string s;

	for (std::size_t i = 0; i < v.size(); i++)
		s += (i ? "," : "") + std::to_string(v[i]);
	return s.empty() ? "-" : s;
}

bool is_onnx_path(const std::string &path)
{
	return path.size() > 5 && path.compare(path.size() - 5, 5, ".onnx") == 0;
}

// A graph from FILE: binary (starts with the magic), JSON, or an ONNX
// model imported with @import.
mcp::GraphDef load_graph_file(const std::string &path, GraphFile *file = nullptr,
			      const mcp::onnx::ImportOptions &import = {})
{
	std::vector<std::byte> bytes = read_file(path);
	std::uint32_t magic = 0;
	GraphFile info;

	info.bytes = bytes.size();
	if (bytes.size() >= sizeof(magic))
		std::memcpy(&magic, bytes.data(), sizeof(magic));
	mcp::GraphDef def;
	if (is_onnx_path(path)) {
		def = mcp::onnx::import(path, import);
		info.encoding = "onnx";
	} else if (magic == graph_magic) {
		def = mcp::GraphDef::parse_file(bytes);
		info.encoding = mcp::to_string(*mcp::graph_encoding(bytes));
	} else {
		def = mcp::GraphDef::from_json(
			std::string_view(reinterpret_cast<const char *>(bytes.data()), bytes.size()));
		info.encoding = "json";
	}
	if (file)
		*file = info;
	return def;
}

mcp::GraphDef graph_source(GraphFile &file)
{
	if (!args.demo.empty())
		return mcp::demo_attention_block();
	return load_graph_file(args.file, &file);
}

// Activation bytes as planned (buffers that are neither input, output
// nor const) and as they would be with every node output in its own
// memory.
std::pair<std::uint64_t, std::uint64_t> activation_bytes(const mcp::GraphDef &def)
{
	std::uint64_t planned = 0, unplanned = 0;

	for (const auto &b : def.buffers)
		if (b.flags == 0)
			planned += b.length;
	for (const auto &n : def.nodes)
		for (std::uint32_t t : n.outputs)
			if (t < def.tensors.size() && def.tensors[t].buffer < def.buffers.size() &&
			    def.buffers[def.tensors[t].buffer].flags == 0)
				unplanned += def.tensors[t].padded_bytes().value_or(0);
	return {planned, unplanned};
}

} // namespace

// ---- show ----

std::string format_graph_text(const mcp::GraphDef &def, std::uint64_t binary_bytes,
			      const GraphFile &file)
{
	std::string s = fmt::format("graph '{}': {} buffers, {} tensors, {} nodes; {} binary, "
				    "{} of buffers\n",
				    def.name, def.buffers.size(), def.tensors.size(), def.nodes.size(),
				    bytes_text(binary_bytes), bytes_text(def.total_bytes()));
	if (file.encoding == "json")
		s += fmt::format("file: JSON, {} bytes\n", file.bytes);
	else if (file.encoding != "none")
		s += fmt::format("file: {} encoding, {} bytes\n", file.encoding, file.bytes);
	const auto [planned, unplanned] = activation_bytes(def);
	s += fmt::format("activations: {} peak as planned, {} unplanned (every node output in "
			 "its own memory); data section {}\n",
			 bytes_text(planned), bytes_text(unplanned), bytes_text(def.data.size()));
	if (!def.notes.empty()) {
		s += "notes:\n";
		std::string line;
		std::istringstream in(def.notes);
		while (std::getline(in, line))
			s += "  " + line + "\n";
	}
	s += "\nBUFFER  NAME              LENGTH      FLAGS         INIT\n";
	for (std::size_t i = 0; i < def.buffers.size(); i++) {
		const mcp::GraphBuffer &b = def.buffers[i];
		std::string init = "-";
		if (b.init)
			init = b.init->kind == mcp::InitKind::data
				       ? fmt::format("data at {}", b.init->seed)
				       : fmt::format("{} seed {} scale {}",
						     b.init->kind == mcp::InitKind::uniform_f32   ? "uniform_f32"
						     : b.init->kind == mcp::InitKind::uniform_i8 ? "uniform_i8"
												 : "constant_f32",
						     b.init->seed, b.init->scale);
		s += fmt::format("{:<7} {:<17} {:<11} {:<13} {}\n", i, b.name, b.length,
				 flags_text(b.flags), init);
	}
	s += "\nTENSOR  NAME              BUFFER  OFFSET    DTYPE  LAYOUT   DIMS\n";
	for (std::size_t i = 0; i < def.tensors.size(); i++) {
		const mcp::GraphTensor &t = def.tensors[i];
		s += fmt::format("{:<7} {:<17} {:<7} {:<9} {:<6} {:<8} {}\n", i, t.name, t.buffer,
				 t.offset, mcp::to_string(t.dtype), mcp::to_string(t.layout),
				 dims_text(t.dims));
	}
	std::vector<std::vector<std::uint32_t>> succ = def.successors();
	s += "\nNODE  NAME                      OP          ENGINE  INPUTS       OUTPUTS  THEN\n";
	for (std::size_t i = 0; i < def.nodes.size(); i++) {
		const mcp::GraphNode &n = def.nodes[i];
		s += fmt::format("{:<5} {:<25} {:<11} {:<7} {:<12} {:<8} {}\n", i, n.name,
				 mcp::to_string(n.op), mcp::to_string(n.engine), index_list(n.inputs),
				 index_list(n.outputs), index_list(succ[i]));
	}
	return s;
}

nlohmann::ordered_json graph_show_json(const mcp::GraphDef &def, std::uint64_t binary_bytes,
				       const GraphFile &file)
{
	nlohmann::ordered_json j;
	std::vector<std::vector<std::uint32_t>> succ = def.successors();

	j["name"] = def.name;
	j["encoding"] = file.encoding;
	j["file_bytes"] = file.bytes;
	j["binary_bytes"] = binary_bytes;
	j["fixed_bytes"] = def.serialize(mcp::GraphEncoding::fixed).size();
	j["json_bytes"] = def.to_json().size();
	j["buffer_bytes"] = def.total_bytes();
	const auto [planned, unplanned] = activation_bytes(def);
	j["activation_bytes"] = planned;
	j["unplanned_bytes"] = unplanned;
	j["data_bytes"] = def.data.size();
	j["notes"] = def.notes;
	j["buffers"] = nlohmann::ordered_json::array();
	for (std::size_t i = 0; i < def.buffers.size(); i++) {
		const mcp::GraphBuffer &b = def.buffers[i];
		nlohmann::ordered_json e;
		e["index"] = i;
		e["name"] = b.name;
		e["length"] = b.length;
		e["flags"] = flags_json(b.flags);
		e["init"] = b.init.has_value();
		j["buffers"].push_back(e);
	}
	j["tensors"] = nlohmann::ordered_json::array();
	for (std::size_t i = 0; i < def.tensors.size(); i++) {
		const mcp::GraphTensor &t = def.tensors[i];
		nlohmann::ordered_json e;
		e["index"] = i;
		e["name"] = t.name;
		e["buffer"] = t.buffer;
		e["offset"] = t.offset;
		e["dtype"] = mcp::to_string(t.dtype);
		e["layout"] = mcp::to_string(t.layout);
		e["dims"] = t.dims;
		e["bytes"] = def.tensor_bytes(static_cast<std::uint32_t>(i));
		j["tensors"].push_back(e);
	}
	j["nodes"] = nlohmann::ordered_json::array();
	j["edges"] = nlohmann::ordered_json::array();
	for (std::size_t i = 0; i < def.nodes.size(); i++) {
		const mcp::GraphNode &n = def.nodes[i];
		nlohmann::ordered_json e;
		e["index"] = i;
		e["name"] = n.name;
		e["op"] = mcp::to_string(n.op);
		e["engine"] = mcp::to_string(n.engine);
		e["inplace"] = (n.flags & mcp::graph_node_inplace) != 0;
		e["inputs"] = n.inputs;
		e["outputs"] = n.outputs;
		e["param_bytes"] = n.param.size();
		j["nodes"].push_back(e);
		for (std::uint32_t to : succ[i])
			j["edges"].push_back({i, to});
	}
	return j;
}

// ---- run ----

namespace {

std::string outputs_text(const GraphRunReport &r)
{
	if (r.outputs.empty())
		return {};
	std::string s = "\nOUTPUT            SHAPE             DTYPE     FILE\n";
	for (const GraphRunOutput &o : r.outputs)
		s += fmt::format("{:<17} {:<17} {:<9} {}\n", o.name, mcp::npy::shape_text(o.shape),
				 o.dtype, o.file.empty() ? "-" : o.file);
	return s;
}

} // namespace

std::string format_graph_run_text(const GraphRunReport &r)
{
	if (r.no_kernel)
		return fmt::format("graph '{}' in mcpctl's thread (run_inline, no kernel): {} nodes\n"
				   "{} iterations after {} warm-up: p50 {:.1f} us  p99 {:.1f} us  "
				   "max {:.1f} us\n",
				   r.graph, r.nodes.size(), r.iteration_ns.size(), r.warmup,
				   percentile_us(r.iteration_ns, 50), percentile_us(r.iteration_ns, 99),
				   percentile_us(r.iteration_ns, 100)) +
		       outputs_text(r);
	std::string s = fmt::format("graph '{}' on {} ({} executor): {} nodes, {} workers", r.graph,
				    r.context, r.executor, r.nodes.size(), r.workers.size());
	std::string per_node;
	for (const mcp::WorkerInfo &w : r.workers)
		per_node += fmt::format("{}node {} tid {} {}", per_node.empty() ? "" : ", ", w.node, w.tid,
					mcp::to_string(w.mode));
	s += " (" + per_node + ")\n";
	s += fmt::format("buffers: {}{}\n", buffer_nodes_text(r.buffers),
			 r.node_asked >= 0 ? fmt::format(" (asked node {})", r.node_asked) : "");
	s += fmt::format("{} iterations after {} warm-up: p50 {:.1f} us  p99 {:.1f} us  max {:.1f} us\n",
			 r.iteration_ns.size(), r.warmup, percentile_us(r.iteration_ns, 50),
			 percentile_us(r.iteration_ns, 99), percentile_us(r.iteration_ns, 100));
	if (r.inline_checked)
		s += fmt::format("inline check: max abs error {:g} over the output buffers ({})\n",
				 r.inline_max_error, r.inline_ok() ? "ok" : "MISMATCH");
	s += "\nNODE  NAME                      OP          ENGINE  NUMA  TID     P50(us)   P99(us)   MAX(us)\n";
	for (std::size_t i = 0; i < r.nodes.size(); i++) {
		const GraphRunNode &n = r.nodes[i];
		s += fmt::format("{:<5} {:<25} {:<11} {:<7} {:<5} {:<7} {:<9.1f} {:<9.1f} {:.1f}\n", i,
				 n.name, n.op, n.engine, n.numa_node, n.worker_tid ? std::to_string(n.worker_tid) : "-",
				 percentile_us(n.ns, 50), percentile_us(n.ns, 99), percentile_us(n.ns, 100));
	}
	return s + outputs_text(r);
}

nlohmann::ordered_json graph_run_json(const GraphRunReport &r)
{
	nlohmann::ordered_json j;

	j["graph"] = r.graph;
	j["context"] = r.context;
	j["executor"] = r.executor;
	j["no_kernel"] = r.no_kernel;
	j["iterations"] = r.iteration_ns.size();
	j["warmup"] = r.warmup;
	j["node_asked"] = r.node_asked >= 0 ? nlohmann::ordered_json(r.node_asked) : nlohmann::ordered_json();
	j["buffers"] = nlohmann::ordered_json::array();
	for (std::size_t i = 0; i < r.buffers.size(); i++)
		j["buffers"].push_back({{"index", i}, {"name", r.buffers[i].name}, {"node", r.buffers[i].node}});
	j["workers"] = nlohmann::ordered_json::array();
	for (const mcp::WorkerInfo &w : r.workers)
		j["workers"].push_back({{"node", w.node}, {"tid", w.tid}, {"jobs", w.jobs},
					{"failed", w.failed}, {"mode", mcp::to_string(w.mode)},
					{"batch", w.batch}});
	j["latency_us"] = {{"p50", percentile_us(r.iteration_ns, 50)},
			   {"p99", percentile_us(r.iteration_ns, 99)},
			   {"max", percentile_us(r.iteration_ns, 100)}};
	j["nodes"] = nlohmann::ordered_json::array();
	for (std::size_t i = 0; i < r.nodes.size(); i++) {
		const GraphRunNode &n = r.nodes[i];
		nlohmann::ordered_json e;
		e["index"] = i;
		e["name"] = n.name;
		e["op"] = n.op;
		e["engine"] = n.engine;
		e["numa_node"] = n.numa_node;
		e["worker_tid"] = n.worker_tid;
		if (n.ns.empty()) {	// --no-kernel: no per-node times
			e["p50_us"] = e["p99_us"] = e["max_us"] = nullptr;
		} else {
			e["p50_us"] = percentile_us(n.ns, 50);
			e["p99_us"] = percentile_us(n.ns, 99);
			e["max_us"] = percentile_us(n.ns, 100);
		}
		j["nodes"].push_back(e);
	}
	if (r.inline_checked)
		j["inline_check"] = {{"max_abs_error", r.inline_max_error},
				     {"tolerance", r.inline_tolerance},
				     {"ok", r.inline_ok()}};
	else
		j["inline_check"] = nullptr;
	j["outputs"] = nlohmann::ordered_json::array();
	for (const GraphRunOutput &o : r.outputs)
		j["outputs"].push_back({{"name", o.name},
					{"shape", o.shape},
					{"dtype", o.dtype},
					{"file", o.file.empty() ? nlohmann::ordered_json()
								: nlohmann::ordered_json(o.file)}});
	return j;
}

namespace {

// The largest |a - b| over the f32 elements of the output buffers.
double max_output_error(const mcp::GraphDef &def, const std::vector<std::span<std::byte>> &mem,
			const std::vector<std::vector<std::byte>> &ref)
{
	double worst = 0.0;

	for (std::uint32_t i = 0; i < def.buffers.size(); i++) {
		if (!(def.buffers[i].flags & mcp::graph_buffer_output))
			continue;
		std::span<std::byte> got = mem[i];
		std::size_t n = def.buffers[i].length / sizeof(float);
		for (std::size_t k = 0; k < n; k++) {
			float a, b;
			std::memcpy(&a, got.data() + k * sizeof(float), sizeof(float));
			std::memcpy(&b, ref[i].data() + k * sizeof(float), sizeof(float));
			double d = std::fabs(static_cast<double>(a) - static_cast<double>(b));
			if (std::isnan(d))
				return INFINITY;
			worst = std::max(worst, d);
		}
	}
	return worst;
}

// --input NAME=VALUE: a .npy file (VALUE ends in .npy or is a file) or,
// for an .onnx model, the DIMS of a dynamic input.
struct RunInput {
	std::string name;
	std::string path;	// empty: dims
	mcp::npy::Array array;
};

bool is_dims_text(const std::string &v)
{
	return !v.empty() && v.find_first_not_of("0123456789x") == std::string::npos &&
	       !std::filesystem::is_regular_file(v);
}

// "out/y.npy": a file name from an output's name ('/' would leave DIR).
std::string output_file(const std::string &dir, const std::string &name)
{
	std::string f = name;
	std::replace(f.begin(), f.end(), '/', '_');
	if (f.empty() || f == "." || f == "..")
		f = "_" + f;
	return (std::filesystem::path(dir) / (f + ".npy")).string();
}

// Checks a --bind or --input buffer name against the graph.
std::uint32_t input_buffer(const mcp::GraphDef &def, const std::string &name, const char *option)
{
	std::optional<std::uint32_t> idx = def.find_buffer(name);
	std::string inputs;
	for (const auto &b : def.buffers)
		if (b.flags & mcp::graph_buffer_input)
			inputs += (inputs.empty() ? "" : ", ") + b.name;
	if (!idx)
		throw mcp::Error(ENOENT, std::string(option) + " " + name +
						 ": the graph has no buffer named '" + name + "' (its inputs: " +
						 (inputs.empty() ? "none" : inputs) + ")");
	if (!(def.buffers[*idx].flags & mcp::graph_buffer_input))
		throw mcp::Error(EINVAL, std::string(option) + " " + name + ": buffer '" + name +
						 "' is not an input of the graph (its inputs: " +
						 (inputs.empty() ? "none" : inputs) + ")");
	return *idx;
}

int run_graph(const GlobalOptions &opts, std::ostream &out, std::ostream &err)
{
	ContextArg ctx;
	std::vector<std::pair<std::string, std::string>> binds, outs;
	std::vector<RunInput> inputs;
	mcp::onnx::ImportOptions import;
	mcp::Executor executor = mcp::Executor::kernel;

	try {
		ctx = parse_context_arg(args.dev);
		executor = mcp::parse_executor(args.executor);
		if (executor != mcp::Executor::kernel && args.dev != "host")
			throw mcp::Error(EINVAL, "--dev " + args.dev + " needs --executor kernel (the "
						 "userspace executor has no device context)");
		if (executor != mcp::Executor::kernel && args.no_kernel)
			throw mcp::Error(EINVAL, "--no-kernel runs the graph inline: it takes no --executor");
		if (args.iterations == 0)
			throw mcp::Error(EINVAL, "--iterations must be at least 1");
		if (args.workers_per_node == 0)
			throw mcp::Error(EINVAL, "--workers-per-node must be at least 1");
		if (args.node < -1)
			throw mcp::Error(EINVAL, "--node must be a node id ('mcpctl info' lists them)");
		if (args.worker_batch > MCP_RUNTIME_CHAIN_MAX)
			throw mcp::Error(EINVAL, "--worker-batch must be 1 to " +
						    std::to_string(MCP_RUNTIME_CHAIN_MAX) +
						    ", or 0 for the default");
		for (const std::string &b : args.binds)
			binds.push_back(split_assignment(b, "--bind"));
		for (const std::string &o : args.outs)
			outs.push_back(split_assignment(o, "--out"));
		for (const std::string &i : args.run_inputs) {
			auto [name, value] = split_assignment(i, "--input");
			if (!is_dims_text(value)) {
				inputs.push_back({name, value, {}});
				continue;
			}
			if (!is_onnx_path(args.file))
				throw mcp::Error(EINVAL, "--input " + i + ": DIMS fix an ONNX model's "
							 "inputs at import; for a graph file give NAME=FILE.npy");
			import.inputs.push_back(mcp::onnx::parse_input_spec(i));
		}
	} catch (const mcp::Error &e) {
		print_error(err, e.what());
		return exit_usage;
	}
	try {
		// Read every .npy first: a bad file fails before anything runs,
		// and an ONNX model's dynamic dims come from the files' shapes.
		for (RunInput &in : inputs) {
			in.array = mcp::npy::read(in.path);
			const bool has_dims = std::any_of(import.inputs.begin(), import.inputs.end(),
							  [&](const auto &p) { return p.first == in.name; });
			if (is_onnx_path(args.file) && !has_dims)
				import.inputs.emplace_back(in.name, std::vector<std::int64_t>(
									    in.array.shape.begin(),
									    in.array.shape.end()));
		}
		mcp::GraphDef def;
		try {
			def = load_graph_file(args.file, nullptr, import);
		} catch (const mcp::Error &e) {
			std::string from;
			for (const RunInput &in : inputs)
				from += (from.empty() ? "" : ", ") + in.name + " from " + in.path;
			if (from.empty() || !is_onnx_path(args.file))
				throw;
			throw mcp::Error(e.errnum(), std::string(e.what()) + " (dims given by the .npy shapes: " +
							     from + ")");
		}
		std::vector<std::uint32_t> input_idx, bind_idx;
		for (const RunInput &in : inputs)
			input_idx.push_back(input_buffer(def, in.name, "--input"));
		for (const auto &[name, path] : binds)
			bind_idx.push_back(input_buffer(def, name, "--bind"));

		GraphRunReport r;
		r.graph = def.name;
		r.warmup = args.warmup;
		r.node_asked = args.node;
		r.no_kernel = args.no_kernel;
		r.executor = args.no_kernel ? "inline" : "";
		r.nodes.resize(def.nodes.size());
		for (std::size_t i = 0; i < def.nodes.size(); i++) {
			r.nodes[i].name = def.nodes[i].name;
			r.nodes[i].op = mcp::to_string(def.nodes[i].op);
		}

		// The buffers' memory: the Runtime's BOs, or (--no-kernel) ours.
		std::optional<OpenContext> c;
		std::optional<mcp::Runtime> rt;
		std::optional<mcp::LoadedGraph> g;
		std::vector<std::vector<std::byte>> own;
		std::vector<std::span<std::byte>> mem;
		if (args.no_kernel) {
			r.context = "inline";
			for (std::uint32_t i = 0; i < def.buffers.size(); i++) {
				own.emplace_back(def.buffers[i].length);
				if (def.buffers[i].init)
					def.fill_buffer(i, own.back());
				r.buffers.push_back({def.buffers[i].name, -1});
			}
			for (auto &m : own)
				mem.emplace_back(m);
			for (auto &n : r.nodes)
				n.engine = "inline";
		} else {
			mcp::RuntimeOptions ro;
			ro.executor = executor;
			ro.workers_per_node = args.workers_per_node;
			ro.worker_batch = args.worker_batch;
			ro.worker_chains = !args.no_chains;
			if (executor == mcp::Executor::kernel) {
				try {
					c = open_context(ctx);
				} catch (const mcp::Error &e) {
					throw mcp::Error(e.errnum(),
							 std::string(e.what()) +
								 " (--executor userspace or --no-kernel run "
								 "the graph without it)");
				}
				rt.emplace(c->dma, ro);
			} else {
				rt.emplace(ro);
			}
			mcp::LoadOptions lo;
			lo.node = args.node;
			g.emplace(rt->load(def, lo));
			r.executor = mcp::to_string(rt->executor());
			r.context = rt->executor() == mcp::Executor::kernel ? rt->context().name()
									    : "userspace";
			for (std::uint32_t i = 0; i < def.buffers.size(); i++) {
				mem.push_back(g->memory(i));
				r.buffers.push_back({def.buffers[i].name, g->buffer_node(i)});
			}
		}

		for (std::size_t k = 0; k < binds.size(); k++) {
			const auto &[name, path] = binds[k];
			const std::uint32_t idx = bind_idx[k];
			std::vector<std::byte> bytes = read_file(path);
			if (bytes.size() > def.buffers[idx].length)
				throw mcp::Error(EINVAL, fmt::format("--bind {}: '{}' is {} bytes, the buffer {}",
								     name, path, bytes.size(),
								     def.buffers[idx].length));
			std::memcpy(mem[idx].data(), bytes.data(), bytes.size());
		}
		for (std::size_t k = 0; k < inputs.size(); k++)
			mcp::npy::load_buffer(def, inputs[k].name, inputs[k].array, inputs[k].path,
					      mem[input_idx[k]]);
		std::vector<std::vector<std::byte>> ref;
		if (args.check_inline)
			for (std::uint32_t i = 0; i < def.buffers.size(); i++)
				ref.emplace_back(mem[i].begin(), mem[i].end());

		mcp::ExecOptions eo;
		eo.timeout = std::chrono::milliseconds(args.timeout_ms);
		for (unsigned it = 0; it < args.warmup + args.iterations; it++) {
			auto t0 = std::chrono::steady_clock::now();
			std::optional<mcp::ExecStatus> s;
			if (args.no_kernel)
				mcp::Runtime::run_inline(def, mem);
			else
				s = rt->run(*g, {}, eo);
			auto t1 = std::chrono::steady_clock::now();
			if (s && s->state != mcp::ExecState::done)
				throw mcp::Error(s->result ? -s->result : EIO, mcp::exec_failure_message(*s, def));
			if (it < args.warmup)
				continue;
			r.iteration_ns.push_back(static_cast<std::uint64_t>(
				std::chrono::duration_cast<std::chrono::nanoseconds>(t1 - t0).count()));
			for (std::size_t i = 0; s && i < s->nodes.size() && i < r.nodes.size(); i++) {
				GraphRunNode &n = r.nodes[i];
				n.engine = mcp::to_string(s->nodes[i].engine);
				n.numa_node = s->nodes[i].numa_node;
				n.worker_tid = s->nodes[i].worker_tid;
				n.ns.push_back(s->nodes[i].duration_ns());
			}
		}
		if (rt)
			r.workers = rt->workers();
		if (args.check_inline) {
			std::vector<std::span<std::byte>> spans(ref.begin(), ref.end());
			mcp::Runtime::run_inline(def, spans);
			r.inline_checked = true;
			r.inline_max_error = max_output_error(def, mem, ref);
		}
		for (std::uint32_t i = 0; i < def.buffers.size(); i++) {
			if (!(def.buffers[i].flags & mcp::graph_buffer_output))
				continue;
			GraphRunOutput o;
			o.name = def.buffers[i].name;
			if (std::optional<std::uint32_t> t = mcp::npy::buffer_tensor(def, i)) {
				o.shape.assign(def.tensors[*t].dims.begin(), def.tensors[*t].dims.end());
				o.dtype = mcp::npy::numpy_name(def.tensors[*t].dtype);
			}
			r.outputs.push_back(std::move(o));
		}
		if (r.inline_checked && !r.inline_ok()) {
			if (opts.json)
				print_json(out, graph_run_json(r));
			else
				out << format_graph_run_text(r);
			out.flush();
			print_error(err, fmt::format("the kernel's results differ from run_inline by {:g} "
						     "(tolerance {:g}); nothing saved",
						     r.inline_max_error, r.inline_tolerance));
			return exit_failure;
		}
		for (const auto &[name, path] : outs) {
			std::optional<std::uint32_t> idx = def.find_buffer(name);
			if (!idx)
				throw mcp::Error(ENOENT, "--out " + name + ": the graph has no buffer named '" +
								 name + "'");
			write_file(path, mem[*idx]);
		}
		if (!args.save_outputs.empty()) {
			std::error_code ec;
			std::filesystem::create_directories(args.save_outputs, ec);
			if (ec)
				throw mcp::Error(ec.value(), "--save-outputs " + args.save_outputs +
								     ": cannot create the directory: " +
								     ec.message());
			for (GraphRunOutput &o : r.outputs) {
				const std::string file = output_file(args.save_outputs, o.name);
				mcp::npy::save_buffer(def, o.name, mem[*def.find_buffer(o.name)], file);
				o.file = file;
			}
		}
		if (opts.json)
			print_json(out, graph_run_json(r));
		else
			out << format_graph_run_text(r);
		out.flush();
		return exit_ok;
	} catch (const std::exception &e) {
		print_error(err, e.what());
		return exit_failure;
	}
}

int import_graph(const GlobalOptions &opts, std::ostream &out, std::ostream &err)
{
	try {
		mcp::onnx::ImportOptions o;
		for (const auto &spec : args.input_dims)
			o.inputs.push_back(mcp::onnx::parse_input_spec(spec));
		std::string path = args.output;
		if (path.empty()) {
			path = args.file;
			if (path.size() > 5 && path.compare(path.size() - 5, 5, ".onnx") == 0)
				path.resize(path.size() - 5);
			path += ".mgph";
		}
		mcp::onnx::ImportStats st;
		const mcp::GraphDef def = mcp::onnx::import(args.file, o, &st);
		const std::vector<std::byte> bytes = def.serialize_file();
		write_file(path, bytes);
		if (opts.json) {
			print_json(out, {{"output", path},
					 {"name", def.name},
					 {"file_bytes", bytes.size()},
					 {"nodes", def.nodes.size()},
					 {"onnx_nodes", st.onnx_nodes + st.fused},
					 {"folded", st.folded},
					 {"views", st.views},
					 {"fused", st.fused},
					 {"inplace", st.inplace},
					 {"const_bytes", st.const_bytes},
					 {"activation_bytes", st.activation_bytes},
					 {"unplanned_bytes", st.unplanned_bytes},
					 {"notes", def.notes}});
		} else {
			out << fmt::format("wrote '{}': {} nodes from {} ONNX nodes ({} folded, {} views, "
					   "{} fused), {} of weights, activations {} ({} unplanned)\n",
					   path, def.nodes.size(), st.onnx_nodes + st.fused, st.folded,
					   st.views, st.fused, bytes_text(st.const_bytes),
					   bytes_text(st.activation_bytes), bytes_text(st.unplanned_bytes));
		}
		out.flush();
		return exit_ok;
	} catch (const std::exception &e) {
		print_error(err, e.what());
		return exit_failure;
	}
}

int run_graph_command(const GlobalOptions &opts, std::ostream &out, std::ostream &err)
{
	if (args.run->parsed())
		return run_graph(opts, out, err);
	if (args.import->parsed())
		return import_graph(opts, out, err);
	if (args.build->parsed() && args.file.empty() == args.demo.empty()) {
		print_error(err, "graph build wants FILE.json or --demo attention, not both");
		return exit_usage;
	}
	if (!args.demo.empty() && args.demo != "attention") {
		print_error(err, "--demo knows 'attention' only, not '" + args.demo + "'");
		return exit_usage;
	}
	try {
		GraphFile file;
		mcp::GraphDef def = graph_source(file);
		const auto encoding = args.build->parsed() ? *mcp::parse_graph_encoding(args.encoding)
							   : mcp::GraphEncoding::compact;
		std::vector<std::byte> bytes = def.serialize(encoding);

		if (args.build->parsed()) {
			write_file(args.output, bytes);
			std::size_t json_bytes = def.to_json().size();
			if (opts.json)
				print_json(out, {{"output", args.output},
						 {"name", def.name},
						 {"encoding", args.encoding},
						 {"binary_bytes", bytes.size()},
						 {"json_bytes", json_bytes},
						 {"nodes", def.nodes.size()}});
			else
				out << fmt::format("wrote '{}' ({} nodes): {} bytes binary ({} encoding), "
						   "{} bytes as compact JSON ({:.0f}% smaller)\n",
						   args.output, def.nodes.size(), bytes.size(),
						   args.encoding, json_bytes,
						   100.0 - 100.0 * static_cast<double>(bytes.size()) /
								   static_cast<double>(json_bytes));
		} else if (opts.json) {
			print_json(out, graph_show_json(def, bytes.size(), file));
		} else {
			out << format_graph_text(def, bytes.size(), file);
		}
		out.flush();
		return exit_ok;
	} catch (const std::exception &e) {
		print_error(err, e.what());
		return exit_failure;
	}
}

} // namespace

Command add_graph_command(CLI::App &app)
{
	CLI::App *sub = app.add_subcommand("graph", "Inference graphs: import an ONNX model, build one from JSON or the demo, show one, run one");

	sub->require_subcommand(1);
	args.import = sub->add_subcommand("import", "Convert an ONNX model (opsets 9-17) to a .mgph graph file");
	args.import->add_option("MODEL", args.file, "The .onnx file")->required();
	args.import->add_option("-o,--output", args.output, "Graph file to write (default: MODEL with .mgph)");
	args.import->add_option("--input", args.input_dims,
				"NAME=DIMS, e.g. x=1x3x224x224: the dims of a dynamic input (repeatable; an unnamed dynamic batch is 1)");
	args.build = sub->add_subcommand("build", "Convert FILE.json (or the demo) to the binary graph format");
	args.show = sub->add_subcommand("show", "Describe a graph: buffers, tensors, nodes, dependencies, sizes");
	args.run = sub->add_subcommand("run", "Run a graph through the kernel with worker threads; latencies per iteration and node");
	args.build->add_option("FILE", args.file, "JSON description (Documentation/graphs.rst)");
	args.build->add_option("--demo", args.demo, "Build the demo instead: 'attention'");
	args.build->add_option("-o,--output", args.output, "Binary graph to write")->required();
	args.build->add_option("--encoding", args.encoding,
			       "compact (default; kernels with the graph-compact feature) or fixed (every kernel)")
		->check(CLI::IsMember({"compact", "fixed"}));
	args.show->add_option("FILE", args.file, "Binary graph (.mgph), JSON description or .onnx model")->required();
	args.run->add_option("FILE", args.file, "Binary graph (.mgph), JSON description or .onnx model (imported first)")->required();
	args.run->add_option("--iterations", args.iterations, "Timed executions (default 10)");
	args.run->add_option("--warmup", args.warmup, "Untimed executions first (default 1)");
	args.run->add_option("--bind", args.binds, "NAME=FILE: load FILE into input buffer NAME first (repeatable)");
	args.run->add_option("--out", args.outs, "NAME=FILE: write buffer NAME to FILE after the last run (repeatable)");
	args.run->add_option("--dev", args.dev, "Context: device index, PCI address or 'host' (default host)");
	args.run->add_option("--workers-per-node", args.workers_per_node, "Worker threads per NUMA node (default 1)");
	args.run->add_option("--node", args.node,
			     "NUMA node of the graph's buffers, hence of its worker jobs (default: the caller's; the device's with --dev)");
	args.run->add_option("--worker-batch", args.worker_batch,
			     "Nodes a worker reads at once (1-1024; 0, the default: 1024 with job-chains, else 32): with job-chains, one chain of at most that many, reported after 2 ms even so; else a job and the chain after it, at most 64 (1: one per read)");
	args.run->add_flag("--no-chains", args.no_chains,
			   "Workers read jobs (--worker-batch) even where the module has job-chains (a chain of nodes read and reported as one job)");
	args.run->add_option("--timeout-ms", args.timeout_ms, "Per-execution time-out (default: the module's exec_timeout_ms)");
	CLI::Option *check = args.run->add_flag("--inline", args.check_inline, "Also run the graph in mcpctl's thread (run_inline) and compare the output buffers");
	args.run->add_option("--input", args.run_inputs,
			     "NAME=FILE.npy: load a NumPy array into input NAME (dtype and shape must match; for an .onnx model its shape fixes the input's dynamic dims); NAME=DIMS (.onnx only): the dims of a dynamic input, as graph import --input (repeatable)");
	args.run->add_option("--save-outputs", args.save_outputs,
			     "DIR: after the last run write each graph output as DIR/NAME.npy (DIR is created)");
	args.run->add_option("--executor", args.executor,
			     "kernel (mcp.ko, the default), userspace (libmcp alone: same operators and routing, no /dev/mcp) or auto (the kernel when /dev/mcp runs graphs)")
		->check(CLI::IsMember({"kernel", "userspace", "auto"}));
	args.run->add_flag("--no-kernel", args.no_kernel,
			   "Run the graph in mcpctl's thread only (run_inline, libmcp's operators): no module or /dev/mcp needed, no per-node times")
		->excludes(check);
	sub->footer("With --json: import prints {\"output\",\"name\",\"file_bytes\",\"nodes\",\"onnx_nodes\",\"folded\",\"views\",\"fused\",\"inplace\",\"const_bytes\",\"activation_bytes\",\"unplanned_bytes\",\"notes\"}, "
		    "build prints {\"output\",\"name\",\"encoding\",\"binary_bytes\",\"json_bytes\",\"nodes\"}, "
		    "show prints {\"name\",\"encoding\",\"file_bytes\",\"binary_bytes\",\"fixed_bytes\",\"json_bytes\",\"buffer_bytes\",\"activation_bytes\",\"unplanned_bytes\",\"data_bytes\",\"notes\",\"buffers\",\"tensors\",\"nodes\",\"edges\"}, "
		    "run prints {\"graph\",\"context\",\"executor\",\"no_kernel\",\"iterations\",\"warmup\",\"node_asked\",\"buffers\",\"workers\",\"latency_us\",\"nodes\",\"inline_check\",\"outputs\"} "
		    "(see Documentation/mcpctl.rst).");
	return {sub, run_graph_command};
}

} // namespace mcpctl
