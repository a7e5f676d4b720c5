// SPDX-License-Identifier: GPL-2.0-only
// mcp::GraphDef without a kernel: builder -> bytes -> parse round trips,
// JSON both ways and its error paths, the demo attention block, the
// dependencies, fill(), and hostile bytes (every prefix, flipped bytes)
// that must be refused without a crash.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include <criterion/criterion.h>
#include <nlohmann/json.hpp>

#include <mcp/graph.hpp>

using nlohmann::json;

namespace {

// x[4][8] -> relu -> y; matmul(y, w) -> z, with a quant round trip.
mcp::GraphDef small_graph()
{
	mcp::GraphBuilder g("small");
	const auto io = g.buffer("io", mcp::graph_buffer_input | mcp::graph_buffer_output);
	const auto wb = g.buffer("w", mcp::graph_buffer_const,
				 mcp::GraphInit{mcp::InitKind::uniform_f32, 7, 0.5f});
	const auto x = g.tensor("x", io, mcp::DType::f32, {4, 8});
	const auto y = g.tensor("y", io, mcp::DType::f32, {4, 8});
	const auto w = g.tensor("w", wb, mcp::DType::f32, {8, 2});
	const auto z = g.tensor("z", io, mcp::DType::f32, {4, 2});
	const auto q = g.tensor("q", io, mcp::DType::i8, {4, 2});
	const auto d = g.tensor("d", io, mcp::DType::f32, {4, 2});

	g.node(mcp::Op::relu, mcp::EngineClass::worker, {x}, {y}, {}, "relu");
	g.node(mcp::Op::matmul, mcp::EngineClass::worker, {y, w}, {z},
	       mcp::param_bytes(mcp::MatmulParam{0, 0.25f}), "mm");
	g.node(mcp::Op::quant_i8, mcp::EngineClass::cpu, {z}, {q},
	       mcp::param_bytes(mcp::QuantParam{0.1f, -3}), "quant");
	g.node(mcp::Op::dequant_i8, mcp::EngineClass::cpu, {q}, {d},
	       mcp::param_bytes(mcp::QuantParam{0.1f, -3}), "dequant");
	return g.build();
}

mcp::GraphError error_of(auto &&fn)
{
	try {
		fn();
	} catch (const mcp::GraphInvalid &e) {
		cr_expect_eq(e.errnum(), EINVAL);
		return e.error();
	}
	cr_assert_fail("no GraphInvalid thrown");
	return {};
}

} // namespace

Test(graph_format, builder_layout)
{
	const auto def = small_graph();

	cr_expect_eq(def.buffers.size(), 2u);
	cr_expect_eq(def.tensors[0].offset, 0u);
	cr_expect_eq(def.tensors[1].offset, 128u);	// 4*8*4 = 128 bytes
	cr_expect_eq(def.tensors[3].offset, 256u);
	cr_expect_eq(def.tensors[4].offset, 320u);	// z is 32 bytes, padded to 64
	cr_expect_eq(def.tensors[5].offset, 384u);	// q is 8 bytes, padded to 64
	cr_expect_eq(def.buffers[0].length, 448u);
	cr_expect_eq(def.buffers[1].length, 64u);
	cr_expect_eq(def.tensor_bytes(4), 8u);
	cr_expect_eq(def.total_bytes(), 512u);
	cr_expect_eq(def.find_tensor("w"), 2u);
	cr_expect_eq(def.find_node("quant"), 2u);
	cr_expect(!def.find_buffer("nope"));
	cr_expect_eq(def.nodes[1].matmul()->alpha, 0.25f);
	cr_expect_eq(def.nodes[2].quant()->zero_point, -3);
	cr_expect(!def.nodes[0].quant());
}

Test(graph_format, binary_round_trip)
{
	const auto def = small_graph();
	const auto bytes = def.serialize();

	cr_expect_eq(bytes.size() % 8, 0u);
	const auto back = mcp::GraphDef::parse(bytes);
	cr_expect(back == def);
	cr_expect(back.serialize() == bytes, "serialize is not deterministic");
}

Test(graph_format, json_round_trip)
{
	const auto def = small_graph();
	const std::string text = def.to_json();
	const auto back = mcp::GraphDef::from_json(text);

	cr_expect(back == def);
	cr_expect_eq(back.to_json(), text);
	cr_expect(mcp::GraphDef::from_json(def.to_json(true)) == def);

	const json j = json::parse(text);
	cr_expect_eq(j["format"], "mcp-graph");
	cr_expect_eq(j["nodes"][1]["param"]["alpha"], 0.25);
	cr_expect_eq(j["nodes"][1]["inputs"][1], "w");
	cr_expect_eq(j["nodes"][2]["param"]["zero_point"], -3);
	cr_expect_eq(j["buffers"][1]["init"]["kind"], "uniform_f32");
	cr_expect_eq(j["buffers"][0]["flags"], json::array({"input", "output"}));
}

Test(graph_format, json_minimal_allocates_like_the_builder)
{
	// No offsets, lengths or engines; inputs by name and by index.
	const char *text = R"({"name":"small","buffers":[{"name":"io","flags":["input","output"]},
		{"name":"w","flags":["const"],"init":{"kind":"uniform_f32","seed":7,"scale":0.5}}],
	  "tensors":[{"name":"x","buffer":"io","dtype":"f32","dims":[4,8]},
		{"name":"y","buffer":0,"dtype":"f32","dims":[4,8]},
		{"name":"w","buffer":"w","dtype":"f32","dims":[8,2]},
		{"name":"z","buffer":"io","dtype":"f32","dims":[4,2]},
		{"name":"q","buffer":"io","dtype":"i8","dims":[4,2]},
		{"name":"d","buffer":"io","dtype":"f32","dims":[4,2]}],
	  "nodes":[{"name":"relu","op":"relu","inputs":["x"],"outputs":["y"]},
		{"name":"mm","op":"matmul","inputs":[1,"w"],"outputs":["z"],"param":{"alpha":0.25}},
		{"name":"quant","op":"quant_i8","inputs":["z"],"outputs":["q"],
		 "param":{"scale":0.1,"zero_point":-3}},
		{"name":"dequant","op":"dequant_i8","inputs":["q"],"outputs":["d"],
		 "param":{"scale":0.1,"zero_point":-3}}]})";

	cr_expect(mcp::GraphDef::from_json(text) == small_graph());
}

Test(graph_format, json_errors_name_the_path)
{
	auto def_json = json::parse(small_graph().to_json());

	def_json["nodes"][3]["inputs"][0] = "kk";
	auto e = error_of([&] { mcp::GraphDef::from_json(def_json.dump()); });
	cr_expect_str_eq(e.message.c_str(), "nodes[3].inputs[0]: no tensor named 'kk'");
	cr_expect_eq(e.reason, mcp::GraphErrorReason::none);

	def_json = json::parse(small_graph().to_json());
	def_json["tensors"][2]["dtype"] = "f64";
	e = error_of([&] { mcp::GraphDef::from_json(def_json.dump()); });
	cr_expect_str_eq(e.message.c_str(), "tensors[2].dtype: unknown dtype 'f64' (f32, i8, u8, i32)");

	def_json = json::parse(small_graph().to_json());
	def_json["nodes"][2]["param"].erase("scale");
	e = error_of([&] { mcp::GraphDef::from_json(def_json.dump()); });
	cr_expect_str_eq(e.message.c_str(), "nodes[2].param: missing \"scale\"");

	e = error_of([] { mcp::GraphDef::from_json("{\"buffers\": ["); });
	cr_expect(std::string(e.message).starts_with("not valid JSON"), "%s", e.message.c_str());

	// A graph rule: the validator's reason and index come through.
	def_json = json::parse(small_graph().to_json());
	def_json["nodes"][1]["inputs"][1] = "x";
	e = error_of([&] { mcp::GraphDef::from_json(def_json.dump()); });
	cr_expect_eq(e.reason, mcp::GraphErrorReason::shape);
	cr_expect_eq(e.kind, mcp::GraphErrorKind::node);
	cr_expect_eq(e.index, 1u);
	cr_expect_str_eq(e.message.c_str(),
			 "node 1 (matmul 'mm'): inner dimensions differ: [4 x 8] x [4 x 8]");
}

Test(graph_format, validate_reports_rules)
{
	auto def = small_graph();

	cr_expect(!def.validate());
	def.nodes[1].engine = mcp::EngineClass::cpu;
	auto e = def.validate();
	cr_assert(e.has_value());
	cr_expect_eq(e->reason, mcp::GraphErrorReason::engine);
	cr_expect_eq(e->index, 1u);

	def = small_graph();
	def.nodes[0].outputs = {0};	// relu x -> x without inplace
	e = def.validate();
	cr_assert(e.has_value());
	cr_expect_eq(e->reason, mcp::GraphErrorReason::alias);
	def.nodes[0].flags = mcp::graph_node_inplace;
	cr_expect(!def.validate(), "in-place relu is allowed");

	def = small_graph();
	def.tensors[1].dims = {1, 1, 1, 1, 1, 1, 1};
	e = def.validate();
	cr_assert(e.has_value());
	cr_expect_eq(e->reason, mcp::GraphErrorReason::tensor);
	cr_expect_eq(e->kind, mcp::GraphErrorKind::tensor);
	cr_expect_eq(e->index, 1u);

	// An offset whose sum with the size wraps is out of bounds, as in
	// the kernel, not a size overflow.
	def = small_graph();
	def.tensors[2].offset = UINT64_MAX - 63;
	e = def.validate();
	cr_assert(e.has_value());
	cr_expect_eq(e->reason, mcp::GraphErrorReason::bounds);
	cr_expect_eq(e->index, 2u);

	def = small_graph();
	e = def.validate(mcp::GraphLimits{3, 16384, 1U << 20});
	cr_assert(e.has_value());
	cr_expect_eq(e->reason, mcp::GraphErrorReason::limit);
}

Test(graph_format, dependencies_and_order)
{
	const auto def = small_graph();
	const auto succ = def.successors();
	const auto pred = def.predecessors();

	cr_expect(succ[0] == std::vector<std::uint32_t>{1});
	cr_expect(succ[1] == std::vector<std::uint32_t>{2});
	cr_expect(succ[2] == std::vector<std::uint32_t>{3});
	cr_expect(succ[3].empty());
	cr_expect(pred[3] == std::vector<std::uint32_t>{2});
	cr_expect(def.topological_order() == (std::vector<std::uint32_t>{0, 1, 2, 3}));

	// Nodes listed backwards still come out in data order.
	auto rev = def;
	std::reverse(rev.nodes.begin(), rev.nodes.end());
	cr_expect(!rev.validate());
	cr_expect(rev.topological_order() == (std::vector<std::uint32_t>{3, 2, 1, 0}));
}

Test(graph_format, demo_attention_block)
{
	const auto def = mcp::demo_attention_block();

	cr_expect(!def.validate());
	cr_expect_eq(def.nodes.size(), 36u);	// 3 + 4 heads x 7 + 3 sums + residual + norm
	for (const auto &t : def.tensors)
		cr_expect(!t.name.empty());
	for (const auto &n : def.nodes)
		cr_expect(!n.name.empty());
	for (const auto &b : def.buffers)
		cr_expect(!b.name.empty());
	// The parts the brief asks for.
	const auto count = [&](mcp::Op op) {
		return std::count_if(def.nodes.begin(), def.nodes.end(),
				     [&](const auto &n) { return n.op == op; });
	};
	cr_expect_eq(count(mcp::Op::quant_i8), 1);
	cr_expect_eq(count(mcp::Op::dequant_i8), 1);
	cr_expect_eq(count(mcp::Op::tile16), 1);
	cr_expect_eq(count(mcp::Op::softmax), 4);
	cr_expect_eq(count(mcp::Op::layernorm), 1);
	cr_expect_eq(count(mcp::Op::matmul), 4 * 6);	// q, k, v, scores, context, out
	const auto &scores = def.nodes[*def.find_node("scores0")];
	cr_expect_eq(scores.matmul()->flags, mcp::matmul_trans_b);
	cr_expect_float_eq(scores.matmul()->alpha, 1.0f / std::sqrt(32.0f), 1e-7f);

	cr_expect(mcp::GraphDef::parse(def.serialize()) == def);
	cr_expect(mcp::GraphDef::from_json(def.to_json()) == def);
	// The last node is the layer norm and everything leads to it.
	const auto order = def.topological_order();
	cr_expect_eq(def.nodes[order.back()].op, mcp::Op::layernorm);

	// Other shapes; and refusals.
	const auto big = mcp::demo_attention_block({128, 256, 8, 32, 1});
	cr_expect(!big.validate());
	cr_expect_eq(big.nodes.size(), 3u + 8 * 7 + 7 + 2);
	cr_expect_eq(mcp::demo_attention_block({64, 128, 4, 32, 99}).buffers[1].init->seed, 99u);
	bool threw = false;
	try {
		mcp::demo_attention_block({64, 128, 3, 32, 1});
	} catch (const mcp::Error &e) {
		threw = e.errnum() == EINVAL;
	}
	cr_expect(threw, "heads x head_dim != model_dim is refused");
}

Test(graph_format, every_prefix_is_refused)
{
	const auto bytes = mcp::demo_attention_block().serialize();

	for (std::size_t len = 0; len < bytes.size(); len++) {
		const std::span<const std::byte> prefix(bytes.data(), len);
		const auto e = error_of([&] { mcp::GraphDef::parse(prefix); });
		cr_expect_eq(e.reason, mcp::GraphErrorReason::header, "prefix %zu", len);
	}
	cr_expect(mcp::GraphDef::parse(bytes) == mcp::demo_attention_block());
}

Test(graph_format, garbled_bytes_never_crash)
{
	const auto good = small_graph().serialize();
	std::uint64_t s = 12345;
	unsigned refused = 0;

	// Flip 1..4 random bytes, many times; each verdict must be reached.
	for (int round = 0; round < 20000; round++) {
		auto bytes = good;
		const int flips = 1 + round % 4;
		for (int k = 0; k < flips; k++) {
			s = s * 6364136223846793005ULL + 1442695040888963407ULL;
			bytes[(s >> 33) % bytes.size()] = static_cast<std::byte>(s >> 24);
		}
		try {
			const auto def = mcp::GraphDef::parse(bytes);
			(void)def.to_json();
			(void)def.topological_order();
		} catch (const mcp::GraphInvalid &) {
			refused++;
		}
	}
	cr_expect_gt(refused, 10000u);
}

Test(graph_format, fill_is_specified)
{
	std::vector<std::byte> a(4 * 1000 + 3), b(a.size());
	const mcp::GraphInit init{mcp::InitKind::uniform_f32, 42, 2.0f};

	mcp::fill(init, mcp::DType::f32, a);
	mcp::fill(init, mcp::DType::f32, b);
	cr_expect(a == b);
	cr_expect_eq(a[4000], std::byte{0});	// trailing bytes zeroed
	float lo = 10, hi = -10;
	for (int i = 0; i < 1000; i++) {
		float v;
		std::memcpy(&v, a.data() + 4 * i, 4);
		lo = std::min(lo, v);
		hi = std::max(hi, v);
	}
	cr_expect(lo >= -2.0f && hi < 2.0f && lo < -1.9f && hi > 1.9f, "[%f, %f]", lo, hi);

	// The first draw of splitmix64 from seed 42, by hand.
	std::uint64_t z = 42 + 0x9e3779b97f4a7c15ULL;
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	z ^= z >> 31;
	const float u = static_cast<float>(z >> 40) * 0x1p-24f;
	float first;
	std::memcpy(&first, a.data(), 4);
	cr_expect_eq(first, (2.0f * u - 1.0f) * 2.0f);

	std::vector<std::byte> q(300);
	mcp::fill({mcp::InitKind::uniform_i8, 1, 0}, mcp::DType::i8, q);
	for (auto v : q)
		cr_expect(static_cast<std::int8_t>(v) >= -127);

	std::vector<std::byte> c(8);
	mcp::fill({mcp::InitKind::constant_f32, 0, 1.5f}, mcp::DType::f32, c);
	float one;
	std::memcpy(&one, c.data() + 4, 4);
	cr_expect_eq(one, 1.5f);

	bool threw = false;
	try {
		mcp::fill({mcp::InitKind::uniform_i8, 1, 0}, mcp::DType::f32, c);
	} catch (const mcp::Error &e) {
		threw = e.errnum() == EINVAL;
	}
	cr_expect(threw, "uniform_i8 into f32 is refused");
}

Test(graph_format, builder_argument_errors)
{
	mcp::GraphBuilder g("bad");
	const auto b = g.buffer("b");
	const auto t = g.tensor("t", b, mcp::DType::f32, {2});

	const auto einval = [](auto &&fn) {
		try {
			fn();
		} catch (const mcp::Error &e) {
			return e.errnum() == EINVAL;
		}
		return false;
	};
	cr_expect(einval([&] { g.tensor("x", 5, mcp::DType::f32, {2}); }));
	cr_expect(einval([&] { g.tensor("x", b, mcp::DType::f32, {1, 1, 1, 1, 1, 1, 1}); }));
	cr_expect(einval([&] { g.node(mcp::Op::wnop, mcp::EngineClass::worker, {t, t, t, t, t}, {}); }));
	cr_expect(einval([&] { g.node(mcp::Op::relu, mcp::EngineClass::worker, {t}, {9}); }));
	cr_expect(einval([&] {
		g.node(mcp::Op::wnop, mcp::EngineClass::worker, {}, {}, std::vector<std::byte>(257));
	}));
	// A graph rule is only checked by build().
	g.node(mcp::Op::relu, mcp::EngineClass::cpu, {t}, {t}, {}, "r");
	const auto e = error_of([&] { g.build(); });
	cr_expect_eq(e.reason, mcp::GraphErrorReason::engine);
}

// A module with MCP_FEAT_WORKER_OPS accepts any worker-range op: which
// worker ops exist is libmcp's to say, naming the node.
Test(graph_format, unknown_worker_op_is_refused_naming_the_node)
{
	mcp::GraphDef def;

	def.buffers = {{"a", 4096, 0, {}, {}}};
	def.tensors = {{"x", 0, mcp::DType::f32, mcp::Layout::dense, 0, {16}},
		       {"y", 0, mcp::DType::f32, mcp::Layout::dense, 64, {16}}};
	def.nodes.push_back({"n0", mcp::Op::relu, mcp::EngineClass::worker, 0, {0}, {1}, {}});
	def.nodes.push_back({"n1", static_cast<mcp::Op>(4000), mcp::EngineClass::worker, 0, {1}, {}, {}});
	const auto e = def.validate();
	cr_assert(e.has_value());
	cr_expect_eq(e->reason, mcp::GraphErrorReason::op);
	cr_expect_eq(e->kind, mcp::GraphErrorKind::node);
	cr_expect_eq(e->index, 1u);
	cr_expect(e->message.find("node 1") != std::string::npos, "%s", e->message.c_str());
	cr_expect(e->message.find("'n1'") != std::string::npos, "%s", e->message.c_str());
	cr_expect(e->message.find("unknown operator 4000") != std::string::npos, "%s",
		  e->message.c_str());
}

Test(graph_format, names)
{
	cr_expect_str_eq(mcp::to_string(mcp::Op::matmul_i8), "matmul_i8");
	cr_expect_str_eq(mcp::to_string(static_cast<mcp::Op>(99)), "unknown");
	cr_expect_eq(mcp::parse_op("layernorm"), mcp::Op::layernorm);
	cr_expect(!mcp::parse_op("conv3d"));
	cr_expect_eq(mcp::parse_dtype("i8"), mcp::DType::i8);
	cr_expect_eq(mcp::parse_layout("tiled16"), mcp::Layout::tiled16);
	cr_expect_eq(mcp::parse_engine_class("device"), mcp::EngineClass::device);
	cr_expect_str_eq(mcp::to_string(mcp::GraphErrorReason::writers), "writers");
	cr_expect_eq(mcp::dtype_size(mcp::DType::i32), 4u);
}

// The edges of rules.md / graphs.rst ("Dependencies") by brute force over
// every pair, to hold the interval sweep of graph_deps.cpp to the rules.
static std::vector<std::vector<std::uint32_t>> brute_successors(const mcp::GraphDef &def)
{
	const auto overlap = [&](std::uint32_t a, std::uint32_t b) {
		const auto &x = def.tensors[a], &y = def.tensors[b];
		const auto xb = def.tensor_bytes(a), yb = def.tensor_bytes(b);
		return x.buffer == y.buffer && xb && yb && x.offset < y.offset + yb &&
		       y.offset < x.offset + xb;
	};
	const auto identical = [&](std::uint32_t a, std::uint32_t b) {
		return def.tensors[a].buffer == def.tensors[b].buffer &&
		       def.tensors[a].offset == def.tensors[b].offset &&
		       def.tensor_bytes(a) == def.tensor_bytes(b);
	};
	const auto active = [&](const mcp::GraphNode &n) {
		return (n.flags & mcp::graph_node_inplace) && !n.inputs.empty() && !n.outputs.empty() &&
		       identical(n.outputs[0], n.inputs[0]);
	};
	const auto touches = [&](const mcp::GraphNode &m, std::uint32_t t) {
		for (auto x : m.inputs)
			if (overlap(x, t))
				return true;
		for (auto x : m.outputs)
			if (overlap(x, t))
				return true;
		return false;
	};
	const auto reads_from = [&](const mcp::GraphNode &r, const mcp::GraphNode &w) {
		for (auto o : w.outputs)
			for (auto i : r.inputs)
				if (overlap(o, i))
					return true;
		return false;
	};
	std::vector<std::vector<std::uint32_t>> succ(def.nodes.size());
	for (std::uint32_t a = 0; a < def.nodes.size(); a++) {
		for (std::uint32_t b = a + 1; b < def.nodes.size(); b++) {
			const auto &na = def.nodes[a], &nb = def.nodes[b];
			if ((active(na) && touches(nb, na.outputs[0])) ||
			    (active(nb) && touches(na, nb.outputs[0]))) {
				succ[a].push_back(b);
				continue;
			}
			if (reads_from(nb, na))
				succ[a].push_back(b);
			if (reads_from(na, nb))
				succ[b].push_back(a);
		}
	}
	for (auto &s : succ)
		std::sort(s.begin(), s.end());
	return succ;
}

// Rule 5: output oj of node j overlaps output oi of node i < j and neither
// is the out0 of an in-place-active node.
static bool brute_writes_conflict(const mcp::GraphDef &def, std::uint32_t i, std::size_t oi,
				  std::uint32_t j, std::size_t oj)
{
	const auto &ni = def.nodes[i], &nj = def.nodes[j];
	const auto same = [&](std::uint32_t a, std::uint32_t b) {
		return def.tensors[a].buffer == def.tensors[b].buffer &&
		       def.tensors[a].offset == def.tensors[b].offset &&
		       def.tensor_bytes(a) == def.tensor_bytes(b);
	};
	const auto active = [&](const mcp::GraphNode &n) {
		return (n.flags & mcp::graph_node_inplace) && !n.inputs.empty() &&
		       !n.outputs.empty() && same(n.outputs[0], n.inputs[0]);
	};
	const auto &a = def.tensors[ni.outputs[oi]], &b = def.tensors[nj.outputs[oj]];
	const auto ab = def.tensor_bytes(ni.outputs[oi]), bb = def.tensor_bytes(nj.outputs[oj]);
	const bool overlap = a.buffer == b.buffer && a.offset < b.offset + bb && b.offset < a.offset + ab;

	return overlap && !(oj == 0 && active(nj)) && !(oi == 0 && active(ni));
}

Test(graph_format, dependency_sweep_matches_brute_force)
{
	std::uint64_t s = 99;
	const auto next = [&](std::uint64_t n) {
		s = s * 6364136223846793005ULL + 1442695040888963407ULL;
		return (s >> 33) % n;
	};

	unsigned checked_writers = 0, found_writers = 0;

	for (int round = 0; round < 300; round++) {
		mcp::GraphDef def;
		const unsigned n_tensors = 2 + static_cast<unsigned>(next(12));
		const unsigned n_nodes = 1 + static_cast<unsigned>(next(14));

		def.buffers = {{"a", 4096, 0, {}, {}}, {"b", 4096, 0, {}, {}}};
		for (unsigned t = 0; t < n_tensors; t++)
			def.tensors.push_back({"t" + std::to_string(t),
					       static_cast<std::uint32_t>(next(2)), mcp::DType::f32,
					       mcp::Layout::dense, 64 * next(8),
					       {static_cast<std::uint32_t>(1 + next(48))}});
		for (unsigned n = 0; n < n_nodes; n++) {
			mcp::GraphNode node{"n" + std::to_string(n), mcp::Op::wnop, mcp::EngineClass::worker,
					    static_cast<std::uint8_t>(next(2)), {}, {}, {}};
			for (auto k = next(5); k > 0; k--)
				node.inputs.push_back(static_cast<std::uint32_t>(next(n_tensors)));
			for (auto k = next(3); k > 0; k--)
				node.outputs.push_back(static_cast<std::uint32_t>(next(n_tensors)));
			// Sometimes exactly in-place.
			if (!node.inputs.empty() && !node.outputs.empty() && next(3) == 0)
				node.outputs[0] = node.inputs[0];
			def.nodes.push_back(std::move(node));
		}
		cr_assert(def.successors() == brute_successors(def), "round %d", round);

		// Past the per-node checks, the writers verdict by brute force.
		const auto e = def.validate();
		if (e && e->reason != mcp::GraphErrorReason::writers &&
		    e->reason != mcp::GraphErrorReason::cycle)
			continue;
		checked_writers++;
		std::optional<std::uint32_t> writers_at;
		for (std::uint32_t j = 0; j < def.nodes.size() && !writers_at; j++)
			for (std::uint32_t i = 0; i < j && !writers_at; i++)
				for (std::size_t oj = 0; oj < def.nodes[j].outputs.size(); oj++)
					for (std::size_t oi = 0; oi < def.nodes[i].outputs.size(); oi++)
						if (brute_writes_conflict(def, i, oi, j, oj))
							writers_at = j;
		if (writers_at) {
			cr_assert(e && e->reason == mcp::GraphErrorReason::writers && e->index == *writers_at,
				  "round %d: writers at node %u expected", round, *writers_at);
			found_writers++;
		} else {
			cr_assert(!e || e->reason == mcp::GraphErrorReason::cycle, "round %d", round);
		}
	}
	// The random graphs must reach the writers check, in both verdicts.
	cr_expect_gt(checked_writers, 20u);
	cr_expect_gt(found_writers, 5u);
}
