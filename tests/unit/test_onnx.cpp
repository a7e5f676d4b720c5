// SPDX-License-Identifier: GPL-2.0-only
// ONNX import (mcp::onnx::import) against ONNX Runtime: the models of
// tests/onnx/gen_models.py (generated at build time into MCP_ONNX_DIR)
// are imported, run with Runtime::run_inline on the seeded .npy inputs,
// and compared with what tests/onnx/ort_run.js (onnxruntime-node, CPU)
// writes for the same files: |mcp - ort| <= 1e-4 * max(1, |ort|) per
// element.  Also the new operators against naive references, the .mgph
// data section, and the refusals (truncated protobuf, opset too new,
// unsupported nodes listed, wrong input dims).
#include <cerrno>
#include <cmath>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include <criterion/criterion.h>
#include <unistd.h>

#include <mcp/graph.h>
#include <mcp/runtime.h>
#include <mcp/onnx.hpp>
#include <mcp/runtime.hpp>

#include "helpers.hpp"
#include "runtime_internal.hpp"

namespace {

const std::string dir = MCP_ONNX_DIR;

struct Npy {
	std::vector<std::size_t> shape;
	std::vector<float> data;
};

// A little-endian f32 C-order .npy (what numpy and ort_run.js write).
Npy read_npy(const std::string &path)
{
	std::ifstream f(path, std::ios::binary);
	cr_assert(f.good(), "cannot open %s", path.c_str());
	std::string b((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
	cr_assert(b.size() > 10 && b.compare(0, 6, "\x93NUMPY") == 0, "%s is not .npy", path.c_str());
	const std::size_t hlen = static_cast<unsigned char>(b[8]) | (static_cast<unsigned char>(b[9]) << 8);
	const std::string header = b.substr(10, hlen);
	cr_assert(header.find("'<f4'") != std::string::npos, "%s is not f32", path.c_str());
	Npy n;
	const auto open = header.find('(', header.find("'shape'"));
	const auto close = header.find(')', open);
	std::string dims = header.substr(open + 1, close - open - 1);
	for (std::size_t at = 0; at < dims.size();) {
		const auto comma = dims.find(',', at);
		const std::string d = dims.substr(at, comma - at);
		if (d.find_first_of("0123456789") != std::string::npos)
			n.shape.push_back(std::stoul(d));
		if (comma == std::string::npos)
			break;
		at = comma + 1;
	}
	n.data.resize((b.size() - 10 - hlen) / 4);
	std::memcpy(n.data.data(), b.data() + 10 + hlen, n.data.size() * 4);
	return n;
}

// Imports @model, runs it inline on x.npy, runs ORT, compares "y".
void compare_with_ort(const std::string &model, const std::string &input,
		      const mcp::onnx::ImportOptions &opts = {})
{
	std::string why;
	if (!test::have_ort(why))
		cr_skip_test("%s", why.c_str());
	char tmpl[] = "/tmp/mcp-onnx-XXXXXX";
	cr_assert_not_null(mkdtemp(tmpl));
	const std::string out = tmpl;
	test::RunResult r = test::run({"/usr/bin/env", "node", MCP_SOURCE_DIR "/tests/onnx/ort_run.js",
				       dir + "/" + model, out, "x=" + dir + "/" + input},
				      {"MCP_ORT_NODE_DIR=" MCP_ORT_NODE_DIR});
	cr_assert_eq(r.exit_code, 0, "ort_run.js: %s", r.err.c_str());
	const Npy ref = read_npy(out + "/y.npy");
	const Npy x = read_npy(dir + "/" + input);

	mcp::onnx::ImportStats st;
	const mcp::GraphDef def = mcp::onnx::import(dir + "/" + model, opts, &st);
	cr_assert(!def.validate(), "the imported graph is invalid");
	std::vector<std::vector<std::byte>> mem;
	std::vector<std::span<std::byte>> spans;
	for (const auto &b : def.buffers)
		mem.emplace_back(b.length);
	for (auto &m : mem)
		spans.emplace_back(m);
	const auto xb = def.find_buffer("x");
	const auto yb = def.find_buffer("y");
	cr_assert(xb && yb, "no buffer x or y");
	cr_assert_eq(def.buffers[*xb].flags, mcp::graph_buffer_input);
	cr_assert_eq(def.buffers[*yb].flags, mcp::graph_buffer_output);
	cr_assert_geq(mem[*xb].size(), x.data.size() * 4);
	std::memcpy(mem[*xb].data(), x.data.data(), x.data.size() * 4);
	mcp::Runtime::run_inline(def, spans);

	const float *y = reinterpret_cast<const float *>(mem[*yb].data());
	cr_assert_geq(mem[*yb].size(), ref.data.size() * 4);
	double worst = 0;
	for (std::size_t i = 0; i < ref.data.size(); i++) {
		const double err = std::fabs(double(y[i]) - ref.data[i]) /
				   std::max(1.0, std::fabs(double(ref.data[i])));
		worst = std::max(worst, err);
		cr_assert_leq(err, 1e-4, "%s: element %zu: mcp %.7g, ort %.7g", model.c_str(), i,
			      double(y[i]), double(ref.data[i]));
	}
	cr_log_info("%s: %zu outputs, worst relative error %.3g; activations %llu bytes "
		    "planned, %llu unplanned", model.c_str(), ref.data.size(), worst,
		    static_cast<unsigned long long>(st.activation_bytes),
		    static_cast<unsigned long long>(st.unplanned_bytes));
	std::system(("rm -rf " + out).c_str());
}

std::string import_error(const std::string &path, const mcp::onnx::ImportOptions &o = {})
{
	try {
		mcp::onnx::import(path, o);
	} catch (const mcp::Error &e) {
		cr_expect_eq(e.errnum(), EINVAL, "%s: errno %d", e.what(), e.errnum());
		return e.what();
	}
	cr_assert_fail("%s imported, but it should not", path.c_str());
	return {};
}

bool has(const std::string &s, const std::string &part)
{
	return s.find(part) != std::string::npos;
}

} // namespace

Test(onnx, mlp_matches_onnx_runtime, .timeout = 30)
{
	// Batch 3 given for the dynamic "N" (the input has 3 rows).
	mcp::onnx::ImportOptions o;
	o.inputs.push_back(mcp::onnx::parse_input_spec("x=3x16"));
	compare_with_ort("mlp.onnx", "x_mlp.npy", o);
}

Test(onnx, bert_opset14_decomposed_layernorm_matches_onnx_runtime, .timeout = 30)
{
	compare_with_ort("bert14.onnx", "x_bert.npy");
}

Test(onnx, bert_opset17_layernormalization_matches_onnx_runtime, .timeout = 30)
{
	compare_with_ort("bert17.onnx", "x_bert.npy");
}

Test(onnx, constant_attributes_and_a_reshaped_output_match_onnx_runtime, .timeout = 30)
{
	// Constant value_floats/value_float/value_ints; y is a view of sub's
	// output, which lands in y's buffer.
	compare_with_ort("consts.onnx", "x_small.npy");
}

Test(onnx, bert_fuses_folds_views_and_plans_in_place)
{
	mcp::onnx::ImportStats st;
	const mcp::GraphDef def = mcp::onnx::import(dir + "/bert14.onnx", {}, &st);
	unsigned ln = 0, gelu = 0, inplace = 0;
	for (const auto &n : def.nodes) {
		ln += n.op == mcp::Op::layernorm;
		gelu += n.op == mcp::Op::gelu_erf;
		cr_expect(n.op != mcp::Op::copy, "node %s copies", n.name.c_str());
		inplace += (n.flags & mcp::graph_node_inplace) != 0;
	}
	cr_expect_eq(ln, 2u);
	cr_expect_eq(gelu, 1u);
	// Shape, Gather, Concat folded; four Reshapes and the Identity are views.
	cr_expect_eq(st.folded, 3u);
	cr_expect_eq(st.views, 5u);
	cr_expect_gt(inplace, 0u);
	cr_expect_eq(st.inplace, inplace);
	cr_expect_lt(st.activation_bytes, st.unplanned_bytes);
	cr_expect(has(def.notes, "input x: dim 0 ('batch') is dynamic, set to 1"), "%s",
		  def.notes.c_str());
	cr_expect_eq(def.buffers.size(), 4u); // x, y, const, act
}

Test(onnx, mgph_file_keeps_the_data_section)
{
	const mcp::GraphDef def = mcp::onnx::import(dir + "/mlp.onnx");
	const auto c = def.find_buffer("const");
	cr_assert(c.has_value());
	cr_expect(def.buffers[*c].init && def.buffers[*c].init->kind == mcp::InitKind::data);
	cr_expect_eq(def.data.size(), def.buffers[*c].length);
	const auto bytes = def.serialize_file();
	cr_expect_gt(bytes.size(), def.serialize().size() + def.data.size());
	const mcp::GraphDef back = mcp::GraphDef::parse_file(bytes);
	cr_expect(back == def, "the .mgph round trip differs");
	// A data range outside the section is refused, naming the buffer.
	auto cut = bytes;
	cut.resize(bytes.size() - 64);
	try {
		mcp::GraphDef::parse_file(cut);
		cr_expect_fail("a short data section was accepted");
	} catch (const mcp::GraphInvalid &e) {
		cr_expect(has(e.what(), "data section"), "%s", e.what());
	}
	// The kernel's bytes are the graph alone, the data kind in its init.
	cr_expect(!mcp::check_graph(def.serialize()));
}

Test(onnx, c_api_imports_and_saves)
{
	const char *inputs[] = {"x=2x16"};
	struct mcp_onnx_import_opts o = {};
	o.size = sizeof(o);
	o.n_inputs = 1;
	o.inputs = inputs;
	struct mcp_graph_def *g = nullptr;
	cr_assert_eq(mcp_graph_import_onnx((dir + "/mlp.onnx").c_str(), &o, &g), 0, "%s",
		     mcp_strerror_last());
	cr_expect_gt(mcp_graph_data_len(g), 0u);
	cr_expect_eq(mcp_graph_validate(g, nullptr, nullptr), 0);
	// The runtime's C API takes the definition with its data section.
	std::vector<std::vector<std::byte>> storage(mcp_graph_buffer_count(g));
	std::vector<void *> bufs;
	for (std::uint32_t i = 0; i < storage.size(); i++) {
		struct mcp_graph_buffer_info b = {};
		b.size = sizeof(b);
		cr_assert_eq(mcp_graph_get_buffer(g, i, &b), 0);
		storage[i].resize(b.length);
		bufs.push_back(storage[i].data());
	}
	cr_expect_eq(mcp_runtime_run_inline(g, bufs.data(), static_cast<std::uint32_t>(bufs.size())),
		     0, "%s", mcp_strerror_last());
	const std::string path = "/tmp/mcp-onnx-c-" + std::to_string(getpid()) + ".mgph";
	cr_expect_eq(mcp_graph_save(g, path.c_str()), 0);
	struct mcp_graph_def *back = nullptr;
	cr_expect_eq(mcp_graph_load(path.c_str(), &back, nullptr), 0);
	cr_expect_eq(mcp_graph_data_len(back), mcp_graph_data_len(g));
	unlink(path.c_str());
	mcp_graph_free(back);
	mcp_graph_free(g);
	cr_expect_eq(mcp_graph_import_onnx((dir + "/opset18.onnx").c_str(), nullptr, &g), -EINVAL);
	cr_expect(has(mcp_strerror_last(), "opset 18"), "%s", mcp_strerror_last());
}

Test(onnx, truncated_protobuf_is_refused_naming_the_file)
{
	std::ifstream f(dir + "/mlp.onnx", std::ios::binary);
	std::string b((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
	const std::string path = "/tmp/mcp-onnx-trunc-" + std::to_string(getpid()) + ".onnx";
	std::ofstream(path, std::ios::binary).write(b.data(), static_cast<std::streamsize>(b.size() / 2));
	const std::string e = import_error(path);
	unlink(path.c_str());
	cr_expect(has(e, path + ": ") && has(e, "protobuf does not parse"), "%s", e.c_str());
}

Test(onnx, opset_too_new_is_refused)
{
	const std::string e = import_error(dir + "/opset18.onnx");
	cr_expect(has(e, "opset18.onnx: opset 18 is not supported (9..17)"), "%s", e.c_str());
}

Test(onnx, unsupported_nodes_are_all_listed)
{
	const std::string e = import_error(dir + "/unsupported.onnx");
	cr_expect(has(e, "2 unsupported nodes"), "%s", e.c_str());
	cr_expect(has(e, "node 'sin' (Sin, opset 13)"), "%s", e.c_str());
	cr_expect(has(e, "node 'conv' (Conv, opset 13)"), "%s", e.c_str());
	cr_expect(!has(e, "'relu'"), "%s", e.c_str());
}

Test(onnx, wrong_input_dims_are_refused_naming_the_input)
{
	mcp::onnx::ImportOptions o;
	o.inputs.push_back(mcp::onnx::parse_input_spec("x=2x15"));
	std::string e = import_error(dir + "/mlp.onnx", o);
	cr_expect(has(e, "input 'x': [2 x 15] given, but dim 1 is 16"), "%s", e.c_str());
	o.inputs = {mcp::onnx::parse_input_spec("x=2x16x1")};
	e = import_error(dir + "/mlp.onnx", o);
	cr_expect(has(e, "has rank 2"), "%s", e.c_str());
	o.inputs = {mcp::onnx::parse_input_spec("nope=1")};
	e = import_error(dir + "/mlp.onnx", o);
	cr_expect(has(e, "--input nope: the model has no such input"), "%s", e.c_str());
	for (const char *bad : {"x", "x=", "x=0x3", "x=2xx3", "x=2x", "=3", "x=-1"}) {
		try {
			mcp::onnx::parse_input_spec(bad);
			cr_expect_fail("'%s' was accepted", bad);
		} catch (const mcp::Error &err) {
			cr_expect_eq(err.errnum(), EINVAL);
		}
	}
	const auto ok = mcp::onnx::parse_input_spec("in:0=1x3x224x224");
	cr_expect_eq(ok.first, "in:0");
	cr_expect(ok.second == (std::vector<std::int64_t>{1, 3, 224, 224}));
}

// Bytes flipped and files cut short: each import succeeds or throws
// mcp::Error; a crash fails the test (Criterion runs it in its own process).
Test(onnx, mutated_models_never_crash, .timeout = 60)
{
	for (const char *model : {"mlp.onnx", "bert14.onnx"}) {
		std::ifstream f(dir + "/" + model, std::ios::binary);
		const std::string b((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
		const std::string path = "/tmp/mcp-onnx-fuzz-" + std::to_string(getpid()) + ".onnx";
		unsigned refused = 0;
		std::uint64_t s = 17;
		const auto next = [&] { return (s = s * 6364136223846793005ULL + 1442695040888963407ULL) >> 33; };
		for (int i = 0; i < 150; i++) {
			std::string m = b;
			for (unsigned k = 0, flips = 1 + next() % 4; k < flips; k++)
				m[next() % m.size()] ^= static_cast<char>(1 + next() % 255);
			if (next() % 5 == 0)
				m.resize(next() % m.size());
			std::ofstream(path, std::ios::binary | std::ios::trunc) << m;
			try {
				mcp::onnx::import(path);
			} catch (const mcp::Error &e) {
				refused++;
				cr_expect(has(e.what(), path), "%s", e.what());
			}
		}
		unlink(path.c_str());
		cr_expect_gt(refused, 0u, "%s: no mutation was refused", model);
	}
}

Test(onnx, missing_file_is_enoent)
{
	try {
		mcp::onnx::import(dir + "/absent.onnx");
		cr_assert_fail("imported a missing file");
	} catch (const mcp::Error &e) {
		cr_expect_eq(e.errnum(), ENOENT);
	}
}

// ---- the new operators against naive loops ----

namespace {

using mcp::detail::OpTensor;

OpTensor t32(std::vector<float> &v, std::vector<std::uint32_t> dims)
{
	OpTensor t;
	t.data = reinterpret_cast<std::byte *>(v.data());
	t.dtype = MCP_DTYPE_F32;
	t.rank = static_cast<std::uint8_t>(dims.size());
	for (std::size_t i = 0; i < dims.size(); i++)
		t.dims[i] = dims[i];
	t.bytes = mcp::detail::tensor_bytes(t);
	return t;
}

} // namespace

Test(onnx_ops, broadcast_binary_transpose_gelu_erf_and_bmatmul)
{
	std::vector<float> a = {1, 2, 3, 4, 5, 6}, b = {10, 20, 30}, y(6);
	OpTensor in[2] = {t32(a, {2, 3}), t32(b, {3})}, out = t32(y, {2, 3});
	cr_assert_eq(mcp::detail::run_op(MCP_OP_SUB, in, std::span(&out, 1), {}, false), 0);
	cr_expect(y == (std::vector<float>{-9, -18, -27, -6, -15, -24}));
	std::vector<float> col = {2, 4};
	in[1] = t32(col, {2, 1});
	cr_assert_eq(mcp::detail::run_op(MCP_OP_DIV, in, std::span(&out, 1), {}, false), 0);
	cr_expect(y == (std::vector<float>{0.5f, 1, 1.5f, 1, 1.25f, 1.5f}));
	in[1] = t32(b, {2}); // [3] x [2]: no broadcast
	cr_expect_eq(mcp::detail::run_op(MCP_OP_MUL, in, std::span(&out, 1), {}, false), -EINVAL);

	std::vector<std::byte> perm(8, std::byte{0});
	perm[0] = std::byte{1};
	OpTensor tin = t32(a, {2, 3});
	OpTensor tout = t32(y, {3, 2});
	cr_assert_eq(mcp::detail::run_op(MCP_OP_TRANSPOSE, std::span(&tin, 1), std::span(&tout, 1),
					 perm, false), 0);
	cr_expect(y == (std::vector<float>{1, 4, 2, 5, 3, 6}));

	std::vector<float> g = {-1, 0, 1}, gy(3);
	OpTensor gi = t32(g, {3}), go = t32(gy, {3});
	cr_assert_eq(mcp::detail::run_op(MCP_OP_GELU_ERF, std::span(&gi, 1), std::span(&go, 1), {},
					 false), 0);
	cr_expect_float_eq(gy[0], -0.158655254f, 1e-6);
	cr_expect_float_eq(gy[1], 0.0f, 1e-7);
	cr_expect_float_eq(gy[2], 0.841344746f, 1e-6);

	// [2][2][3] x [3][2] (shared B) and [2][2][3] x [2][3][1] (batched).
	std::vector<float> A(12), B(6), B2(6), C(8), C2(4);
	for (int i = 0; i < 12; i++)
		A[i] = float(i) * 0.5f - 2;
	for (int i = 0; i < 6; i++)
		B[i] = B2[i] = float(i) - 2.5f;
	OpTensor mi[2] = {t32(A, {2, 2, 3}), t32(B, {3, 2})}, mo = t32(C, {2, 2, 2});
	cr_assert_eq(mcp::detail::run_op(MCP_OP_BMATMUL, mi, std::span(&mo, 1), {}, false), 0);
	for (int bt = 0; bt < 2; bt++)
		for (int i = 0; i < 2; i++)
			for (int j = 0; j < 2; j++) {
				float s = 0;
				for (int k = 0; k < 3; k++)
					s += A[bt * 6 + i * 3 + k] * B[k * 2 + j];
				cr_expect_float_eq(C[bt * 4 + i * 2 + j], s, 1e-5);
			}
	mi[1] = t32(B2, {2, 3, 1});
	mo = t32(C2, {2, 2, 1});
	cr_assert_eq(mcp::detail::run_op(MCP_OP_BMATMUL, mi, std::span(&mo, 1), {}, false), 0);
	for (int bt = 0; bt < 2; bt++)
		for (int i = 0; i < 2; i++) {
			float s = 0;
			for (int k = 0; k < 3; k++)
				s += A[bt * 6 + i * 3 + k] * B2[bt * 3 + k];
			cr_expect_float_eq(C2[bt * 2 + i], s, 1e-5);
		}
}

Test(onnx_cli, graph_import_writes_mgph_and_show_reports_activations)
{
	const std::string out = "/tmp/mcp-onnx-cli-" + std::to_string(getpid()) + ".mgph";
	test::RunResult r = test::run({MCPCTL_PATH, "--json", "graph", "import", dir + "/bert14.onnx",
				       "-o", out, "--input", "x=1x8x32"});
	cr_assert_eq(r.exit_code, 0, "%s", r.err.c_str());
	cr_expect(has(r.out, "\"activation_bytes\":13312") && has(r.out, "\"unplanned_bytes\":20480"),
		  "%s", r.out.c_str());
	r = test::run({MCPCTL_PATH, "graph", "show", out});
	cr_assert_eq(r.exit_code, 0, "%s", r.err.c_str());
	cr_expect(has(r.out, "activations: ") && has(r.out, "unplanned") &&
		  has(r.out, "input x: [1 x 8 x 32] (given)") && has(r.out, "data at 0"),
		  "%s", r.out.c_str());
	unlink(out.c_str());
	// Refused: exit 1, one line naming the file, nothing written.
	r = test::run({MCPCTL_PATH, "graph", "import", dir + "/unsupported.onnx", "-o", out});
	cr_expect_eq(r.exit_code, 1);
	cr_expect(has(r.err, "unsupported.onnx: 2 unsupported nodes"), "%s", r.err.c_str());
	cr_expect_neq(access(out.c_str(), F_OK), 0, "%s was written", out.c_str());
}
