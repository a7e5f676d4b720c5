// SPDX-License-Identifier: LGPL-2.1-or-later
// GraphDef to JSON and back (Documentation/graphs.rst, "JSON schema").
// Errors name the JSON path: "nodes[3].inputs[1]: no tensor named 'kk'".
#include <charconv>
#include <cstdlib>
#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "graph_internal.hpp"

namespace mcp {

namespace {

using json = nlohmann::ordered_json;

[[noreturn]] void json_error(const std::string &path, const std::string &what)
{
	GraphError e;

	e.message = (path.empty() ? "" : path + ": ") + what;
	throw GraphInvalid(std::move(e));
}

// The float's shortest decimal form as a double, so dumps stay short and
// read back to the same float.
double short_double(float v)
{
	char buf[32];
	const auto r = std::to_chars(buf, buf + sizeof(buf), v);

	*r.ptr = '\0';
	return std::strtod(buf, nullptr);
}

constexpr std::pair<std::uint32_t, const char *> buffer_flag_names[] = {
	{graph_buffer_input, "input"}, {graph_buffer_output, "output"}, {graph_buffer_const, "const"},
};
constexpr std::pair<std::uint32_t, const char *> node_flag_names[] = {
	{graph_node_inplace, "inplace"},
};
constexpr std::pair<InitKind, const char *> init_names[] = {
	{InitKind::uniform_f32, "uniform_f32"}, {InitKind::uniform_i8, "uniform_i8"},
	{InitKind::constant_f32, "constant_f32"}, {InitKind::data, "data"},
};

template <std::size_t N>
json flags_json(std::uint32_t flags, const std::pair<std::uint32_t, const char *> (&names)[N])
{
	json out = json::array();
	std::uint32_t known = 0;

	for (const auto &[bit, name] : names) {
		known |= bit;
		if (flags & bit)
			out.push_back(name);
	}
	if (flags & ~known)
		return flags;	// bits without names: the number
	return out;
}

std::string hex(std::span<const std::byte> bytes)
{
	static const char digits[] = "0123456789abcdef";
	std::string s;

	for (std::byte b : bytes) {
		s += digits[static_cast<unsigned>(b) >> 4];
		s += digits[static_cast<unsigned>(b) & 15];
	}
	return s;
}

// A reference to entry @index by its name when that is unique, else the index.
template <typename T>
json ref(const std::vector<T> &entries, std::uint32_t index)
{
	if (index < entries.size() && !entries[index].name.empty()) {
		std::size_t same = 0;
		for (const auto &e : entries)
			same += e.name == entries[index].name;
		if (same == 1)
			return entries[index].name;
	}
	return index;
}

json param_json(const GraphNode &n)
{
	switch (n.op) {
	case Op::quant_i8:
	case Op::dequant_i8:
		if (auto p = n.quant())
			return {{"scale", short_double(p->scale)}, {"zero_point", p->zero_point}};
		break;
	case Op::matmul:
		if (n.param.empty())
			return nullptr;
		if (auto p = n.matmul(); p && !(p->flags & ~(matmul_trans_a | matmul_trans_b)))
			return {{"trans_a", (p->flags & matmul_trans_a) != 0},
				{"trans_b", (p->flags & matmul_trans_b) != 0},
				{"alpha", short_double(p->alpha)}};
		break;
	case Op::layernorm:
		// Typed only when it reads back to the same bytes (reserved 0).
		if (auto p = n.norm(); p && param_bytes(*p) == n.param)
			return {{"eps", short_double(p->eps)}};
		break;
	case Op::matmul_i8:
		if (auto p = n.matmul_i8())
			return {{"scale_a", short_double(p->scale_a)}, {"zero_a", p->zero_a},
				{"scale_b", short_double(p->scale_b)}, {"zero_b", p->zero_b}};
		break;
	default:
		break;
	}
	return nullptr;
}

// ---- reading ----

class Reader {
public:
	explicit Reader(GraphDef &def) : def_(def) {}

	void read(const json &root);

private:
	const json &member(const json &obj, const std::string &path, const char *key) const;
	std::string str(const json &v, const std::string &path) const;
	std::uint64_t uint(const json &v, const std::string &path, std::uint64_t max) const;
	std::int64_t sint(const json &v, const std::string &path) const;
	float f32(const json &v, const std::string &path) const;
	bool boolean(const json &v, const std::string &path) const;
	template <std::size_t N>
	std::uint32_t flags(const json &v, const std::string &path,
			    const std::pair<std::uint32_t, const char *> (&names)[N]) const;
	template <typename T>
	std::uint32_t resolve(const std::vector<T> &entries, const json &v, const std::string &path,
			      const char *what) const;
	std::vector<std::uint32_t> tensor_list(const json &v, const std::string &path) const;
	std::vector<std::byte> unhex(const json &v, const std::string &path) const;

	void buffer(const json &b, const std::string &path);
	void tensor(const json &t, const std::string &path, std::vector<std::uint64_t> &cursor);
	void node(const json &n, const std::string &path);
	std::vector<std::byte> param(Op op, const json &p, const std::string &path) const;

	GraphDef &def_;
	std::vector<bool> length_given_;
};

const json &Reader::member(const json &obj, const std::string &path, const char *key) const
{
	const auto it = obj.find(key);

	if (it == obj.end())
		json_error(path, std::string("missing \"") + key + "\"");
	return *it;
}

std::string Reader::str(const json &v, const std::string &path) const
{
	if (!v.is_string())
		json_error(path, "expected a string, got " + v.dump());
	return v.get<std::string>();
}

std::uint64_t Reader::uint(const json &v, const std::string &path, std::uint64_t max) const
{
	if (!v.is_number_unsigned() && !(v.is_number_integer() && v.get<std::int64_t>() >= 0))
		json_error(path, "expected an unsigned integer, got " + v.dump());
	const auto x = v.get<std::uint64_t>();
	if (x > max)
		json_error(path, std::to_string(x) + " is over " + std::to_string(max));
	return x;
}

std::int64_t Reader::sint(const json &v, const std::string &path) const
{
	if (!v.is_number_integer())
		json_error(path, "expected an integer, got " + v.dump());
	return v.get<std::int64_t>();
}

float Reader::f32(const json &v, const std::string &path) const
{
	if (!v.is_number())
		json_error(path, "expected a number, got " + v.dump());
	return static_cast<float>(v.get<double>());
}

bool Reader::boolean(const json &v, const std::string &path) const
{
	if (!v.is_boolean())
		json_error(path, "expected true or false, got " + v.dump());
	return v.get<bool>();
}

template <std::size_t N>
std::uint32_t Reader::flags(const json &v, const std::string &path,
			    const std::pair<std::uint32_t, const char *> (&names)[N]) const
{
	if (v.is_number())
		return static_cast<std::uint32_t>(uint(v, path, UINT32_MAX));
	if (!v.is_array())
		json_error(path, "expected a list of flag names or a number");

	std::uint32_t out = 0;
	for (std::size_t i = 0; i < v.size(); i++) {
		const std::string p = path + "[" + std::to_string(i) + "]";
		const std::string name = str(v[i], p);
		bool found = false;
		std::string known;

		for (const auto &[bit, n] : names) {
			known += std::string(known.empty() ? "" : ", ") + n;
			if (name == n) {
				out |= bit;
				found = true;
			}
		}
		if (!found)
			json_error(p, "unknown flag '" + name + "' (" + known + ")");
	}
	return out;
}

template <typename T>
std::uint32_t Reader::resolve(const std::vector<T> &entries, const json &v, const std::string &path,
			      const char *what) const
{
	if (v.is_number())
		return static_cast<std::uint32_t>(uint(v, path, UINT32_MAX));

	const std::string name = str(v, path);
	std::optional<std::uint32_t> found;

	for (std::uint32_t i = 0; i < entries.size(); i++) {
		if (entries[i].name != name)
			continue;
		if (found)
			json_error(path, std::string("the name '") + name + "' is used by " + what + "s " +
						 std::to_string(*found) + " and " + std::to_string(i) +
						 ": refer to it by index");
		found = i;
	}
	if (!found)
		json_error(path, std::string("no ") + what + " named '" + name + "'");
	return *found;
}

std::vector<std::uint32_t> Reader::tensor_list(const json &v, const std::string &path) const
{
	std::vector<std::uint32_t> out;

	if (!v.is_array())
		json_error(path, "expected a list of tensor names or indices");
	for (std::size_t i = 0; i < v.size(); i++)
		out.push_back(resolve(def_.tensors, v[i], path + "[" + std::to_string(i) + "]", "tensor"));
	return out;
}

std::vector<std::byte> Reader::unhex(const json &v, const std::string &path) const
{
	const std::string h = str(v, path);
	std::vector<std::byte> out;

	if (h.size() % 2)
		json_error(path, "an odd number of hex digits");
	for (std::size_t i = 0; i < h.size(); i += 2) {
		unsigned byte = 0;
		const auto r = std::from_chars(h.data() + i, h.data() + i + 2, byte, 16);
		if (r.ec != std::errc{} || r.ptr != h.data() + i + 2)
			json_error(path, "'" + h.substr(i, 2) + "' is not a hex byte");
		out.push_back(static_cast<std::byte>(byte));
	}
	return out;
}

void Reader::buffer(const json &b, const std::string &path)
{
	GraphBuffer buf;

	if (!b.is_object())
		json_error(path, "expected an object");
	buf.name = str(member(b, path, "name"), path + ".name");
	if (b.contains("length"))
		buf.length = uint(b["length"], path + ".length", UINT64_MAX);
	if (b.contains("flags"))
		buf.flags = flags(b["flags"], path + ".flags", buffer_flag_names);
	if (b.contains("init")) {
		const json &i = b["init"];
		const std::string ip = path + ".init";
		const std::string kind = str(member(i, ip, "kind"), ip + ".kind");
		GraphInit init;
		bool known = false;

		for (const auto &[k, n] : init_names) {
			if (kind == n) {
				init.kind = k;
				known = true;
			}
		}
		if (!known)
			json_error(ip + ".kind", "unknown init kind '" + kind +
							 "' (uniform_f32, uniform_i8, constant_f32)");
		if (i.contains("seed"))
			init.seed = uint(i["seed"], ip + ".seed", UINT64_MAX);
		if (i.contains("scale"))
			init.scale = f32(i["scale"], ip + ".scale");
		buf.init = init;
	}
	if (b.contains("init_hex")) {
		if (buf.init)
			json_error(path, "give \"init\" or \"init_hex\", not both");
		buf.init_raw = unhex(b["init_hex"], path + ".init_hex");
	}
	length_given_.push_back(b.contains("length"));
	def_.buffers.push_back(std::move(buf));
}

void Reader::tensor(const json &t, const std::string &path, std::vector<std::uint64_t> &cursor)
{
	GraphTensor ten;

	if (!t.is_object())
		json_error(path, "expected an object");
	ten.name = str(member(t, path, "name"), path + ".name");

	const std::string dt = str(member(t, path, "dtype"), path + ".dtype");
	const auto dtype = parse_dtype(dt);
	if (!dtype)
		json_error(path + ".dtype", "unknown dtype '" + dt + "' (f32, i8, u8, i32)");
	ten.dtype = *dtype;
	if (t.contains("layout")) {
		const std::string l = str(t["layout"], path + ".layout");
		const auto layout = parse_layout(l);
		if (!layout)
			json_error(path + ".layout", "unknown layout '" + l + "' (dense, nhwc, tiled16)");
		ten.layout = *layout;
	}
	const json &dims = member(t, path, "dims");
	if (!dims.is_array())
		json_error(path + ".dims", "expected a list of dimensions");
	for (std::size_t k = 0; k < dims.size(); k++)
		ten.dims.push_back(static_cast<std::uint32_t>(
			uint(dims[k], path + ".dims[" + std::to_string(k) + "]", UINT32_MAX)));

	if (t.contains("view_of")) {
		const std::uint32_t of = resolve(def_.tensors, t["view_of"], path + ".view_of", "tensor");
		if (of >= def_.tensors.size())
			json_error(path + ".view_of", "tensor " + std::to_string(of) + " does not exist");
		ten.buffer = def_.tensors[of].buffer;
		ten.offset = def_.tensors[of].offset;
	} else {
		ten.buffer = resolve(def_.buffers, member(t, path, "buffer"), path + ".buffer", "buffer");
		if (ten.buffer >= def_.buffers.size())
			json_error(path + ".buffer", "buffer " + std::to_string(ten.buffer) +
							     " does not exist");
		const std::uint64_t line = graph_align - 1;
		ten.offset = t.contains("offset") ? uint(t["offset"], path + ".offset", UINT64_MAX)
						  : (cursor[ten.buffer] + line) & ~line;
	}
	std::uint64_t end = 0;
	const auto padded = ten.padded_bytes();
	if (padded && !__builtin_add_overflow(ten.offset, *padded, &end))
		cursor[ten.buffer] = std::max(cursor[ten.buffer], end);
	def_.tensors.push_back(std::move(ten));
}

std::vector<std::byte> Reader::param(Op op, const json &p, const std::string &path) const
{
	if (!p.is_object())
		json_error(path, "expected an object of typed parameters");

	const auto get_f = [&](const char *k) { return f32(member(p, path, k), path + "." + k); };
	const auto get_z = [&](const char *k) {
		const auto z = sint(member(p, path, k), path + "." + k);
		if (z < INT32_MIN || z > INT32_MAX)
			json_error(path + "." + k, "out of the 32-bit range");
		return static_cast<std::int32_t>(z);
	};
	switch (op) {
	case Op::quant_i8:
	case Op::dequant_i8:
		return param_bytes(QuantParam{get_f("scale"), get_z("zero_point")});
	case Op::matmul: {
		MatmulParam m;
		if (p.contains("trans_a") && boolean(p["trans_a"], path + ".trans_a"))
			m.flags |= matmul_trans_a;
		if (p.contains("trans_b") && boolean(p["trans_b"], path + ".trans_b"))
			m.flags |= matmul_trans_b;
		if (p.contains("alpha"))
			m.alpha = get_f("alpha");
		return param_bytes(m);
	}
	case Op::layernorm:
		return param_bytes(NormParam{get_f("eps")});
	case Op::matmul_i8:
		return param_bytes(MatmulI8Param{get_f("scale_a"), get_z("zero_a"), get_f("scale_b"),
						 get_z("zero_b")});
	default:
		json_error(path, std::string(to_string(op)) +
					 " takes no parameters (use \"param_hex\" for raw bytes)");
	}
}

void Reader::node(const json &n, const std::string &path)
{
	GraphNode node;

	if (!n.is_object())
		json_error(path, "expected an object");
	if (n.contains("name"))
		node.name = str(n["name"], path + ".name");

	const std::string opname = str(member(n, path, "op"), path + ".op");
	const auto op = parse_op(opname);
	if (!op)
		json_error(path + ".op", "unknown operator '" + opname + "'");
	node.op = *op;

	// Default engine: the only class that runs the op (copy: cpu).
	node.engine = static_cast<std::uint16_t>(*op) >= static_cast<std::uint16_t>(Op::wnop)
			      ? EngineClass::worker
			      : EngineClass::cpu;
	if (n.contains("engine")) {
		const std::string e = str(n["engine"], path + ".engine");
		const auto engine = parse_engine_class(e);
		if (!engine)
			json_error(path + ".engine", "unknown engine class '" + e + "' (cpu, device, worker)");
		node.engine = *engine;
	}
	if (n.contains("inputs"))
		node.inputs = tensor_list(n["inputs"], path + ".inputs");
	if (n.contains("outputs"))
		node.outputs = tensor_list(n["outputs"], path + ".outputs");
	if (n.contains("flags"))
		node.flags = static_cast<std::uint8_t>(flags(n["flags"], path + ".flags", node_flag_names));
	if (n.contains("param") && n.contains("param_hex"))
		json_error(path, "give \"param\" or \"param_hex\", not both");
	if (n.contains("param") && !n["param"].is_null())
		node.param = param(node.op, n["param"], path + ".param");
	if (n.contains("param_hex"))
		node.param = unhex(n["param_hex"], path + ".param_hex");
	def_.nodes.push_back(std::move(node));
}

void Reader::read(const json &root)
{
	if (!root.is_object())
		json_error("", "a graph is a JSON object with \"buffers\", \"tensors\" and \"nodes\"");
	if (root.contains("format") && root["format"] != "mcp-graph")
		json_error("format", "expected \"mcp-graph\"");
	if (root.contains("version") && uint(root["version"], "version", UINT32_MAX) != 1)
		json_error("version", "this library reads version 1");
	if (root.contains("name"))
		def_.name = str(root["name"], "name");

	for (const char *section : {"buffers", "tensors", "nodes"})
		if (!member(root, "", section).is_array())
			json_error(section, "expected a list");

	const json &bufs = root["buffers"];
	for (std::size_t i = 0; i < bufs.size(); i++)
		buffer(bufs[i], "buffers[" + std::to_string(i) + "]");

	std::vector<std::uint64_t> cursor(def_.buffers.size(), 0);
	const json &tens = root["tensors"];
	for (std::size_t i = 0; i < tens.size(); i++)
		tensor(tens[i], "tensors[" + std::to_string(i) + "]", cursor);
	for (std::size_t b = 0; b < def_.buffers.size(); b++)
		if (!length_given_[b])
			def_.buffers[b].length = cursor[b];

	const json &nodes = root["nodes"];
	for (std::size_t i = 0; i < nodes.size(); i++)
		node(nodes[i], "nodes[" + std::to_string(i) + "]");
}

} // namespace

std::string GraphDef::to_json(bool pretty) const
{
	json root = {{"format", "mcp-graph"}, {"version", 1}, {"name", name}};
	json bufs = json::array(), tens = json::array(), nods = json::array();

	for (const auto &b : buffers) {
		json j = {{"name", b.name}, {"length", b.length},
			  {"flags", flags_json(b.flags, buffer_flag_names)}};
		if (b.init) {
			const char *kind = "unknown";
			for (const auto &[k, n] : init_names)
				if (k == b.init->kind)
					kind = n;
			j["init"] = {{"kind", kind}, {"seed", b.init->seed},
				     {"scale", short_double(b.init->scale)}};
		}
		if (!b.init && !b.init_raw.empty())
			j["init_hex"] = hex(b.init_raw);
		bufs.push_back(std::move(j));
	}
	for (const auto &t : tensors)
		tens.push_back({{"name", t.name}, {"buffer", ref(buffers, t.buffer)},
				{"dtype", to_string(t.dtype)}, {"dims", t.dims},
				{"layout", to_string(t.layout)}, {"offset", t.offset}});
	for (const auto &n : nodes) {
		json j = {{"name", n.name}, {"op", to_string(n.op)}, {"engine", to_string(n.engine)}};
		json in = json::array(), out = json::array();

		for (std::uint32_t t : n.inputs)
			in.push_back(ref(tensors, t));
		for (std::uint32_t t : n.outputs)
			out.push_back(ref(tensors, t));
		j["inputs"] = std::move(in);
		j["outputs"] = std::move(out);
		if (n.flags)
			j["flags"] = flags_json(n.flags, node_flag_names);
		if (auto p = param_json(n); !p.is_null())
			j["param"] = std::move(p);
		else if (!n.param.empty())
			j["param_hex"] = hex(n.param);
		nods.push_back(std::move(j));
	}
	root["buffers"] = std::move(bufs);
	root["tensors"] = std::move(tens);
	root["nodes"] = std::move(nods);
	// Names are meant to be UTF-8 but the kernel does not check: invalid
	// bytes become U+FFFD rather than an exception.
	return root.dump(pretty ? 2 : -1, ' ', false, json::error_handler_t::replace);
}

GraphDef GraphDef::from_json(std::string_view text, const GraphLimits &limits)
{
	GraphDef def;
	json root;

	try {
		root = json::parse(text.begin(), text.end());
	} catch (const json::exception &e) {
		json_error("", std::string("not valid JSON: ") + e.what());
	}
	try {
		Reader(def).read(root);
	} catch (const json::exception &e) {
		json_error("", std::string("unexpected JSON: ") + e.what());
	}
	if (auto e = def.validate(limits))
		throw GraphInvalid(std::move(*e));
	return def;
}

} // namespace mcp
