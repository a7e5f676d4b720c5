// SPDX-License-Identifier: GPL-2.0-only
// The CNN operators (Conv, ConvTranspose, MaxPool, AveragePool,
// GlobalAveragePool, BatchNormalization) against ONNX Runtime: the
// resnet.onnx and cnn_*.onnx models of tests/onnx/gen_models.py are
// imported, run with Runtime::run_inline on their seeded inputs and
// compared with tests/onnx/ort_run.js's outputs: |mcp - ort| <= 1e-4 *
// max(1, |ort|) per element, same shape.  Also the import-time folding
// (BatchNormalization into Conv, Relu/Clip fused), the refusals naming
// the node, and the validator's rules.
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include <criterion/criterion.h>
#include <unistd.h>

#include <mcp/graph.h>
#include <mcp/npy.hpp>
#include <mcp/onnx.hpp>
#include <mcp/runtime.hpp>

#include "graph_ops.hpp"
#include "helpers.hpp"
#include "onnx_compare.hpp"

namespace {

const std::string models = MCP_ONNX_DIR;

bool contains(const std::string &s, const std::string &part)
{
	return s.find(part) != std::string::npos;
}

void cases_against_ort(std::initializer_list<const char *> names)
{
	for (const char *n : names)
		test::compare_with_ort(models, std::string("cnn_") + n + ".onnx", std::string("x_cnn_") + n + ".npy");
}

std::string refusal(const std::string &model)
{
	try {
		mcp::onnx::import(models + "/" + model);
	} catch (const mcp::Error &e) {
		cr_expect_eq(e.errnum(), EINVAL, "%s", e.what());
		return e.what();
	}
	cr_assert_fail("%s imported, but it should not", model.c_str());
	return {};
}

unsigned count(const mcp::GraphDef &def, mcp::Op op)
{
	unsigned n = 0;
	for (const auto &node : def.nodes)
		n += node.op == op;
	return n;
}

} // namespace

Test(onnx_conv, resnet_matches_onnx_runtime, .timeout = 60)
{
	mcp::onnx::ImportOptions o;
	o.inputs.push_back(mcp::onnx::parse_input_spec("x=2x3x32x32"));
	test::compare_with_ort(models, "resnet.onnx", "x_resnet.npy", o);
}

Test(onnx_conv, resnet_folds_batchnorm_and_fuses_relu)
{
	mcp::onnx::ImportStats st;
	const mcp::GraphDef def = mcp::onnx::import(models + "/resnet.onnx", {}, &st);
	// Six convs, their six BatchNormalizations folded, the three Relus
	// right after a conv (stem, block1_a, block2_a) fused; the two after
	// the residual Adds stay.
	cr_expect_eq(count(def, mcp::Op::conv), 6u);
	cr_expect_eq(count(def, mcp::Op::channel_affine), 0u);
	cr_expect_eq(count(def, mcp::Op::relu), 2u);
	cr_expect_eq(count(def, mcp::Op::add), 2u);
	cr_expect_eq(count(def, mcp::Op::maxpool), 1u);
	cr_expect_eq(count(def, mcp::Op::global_avgpool), 1u);
	cr_expect_eq(count(def, mcp::Op::matmul), 1u);
	cr_expect_eq(st.fused, 9u);
	cr_expect(contains(def.notes, "input x: dim 0 ('N') is dynamic, set to 1"), "%s",
		  def.notes.c_str());
}

Test(onnx_conv, conv_groups_dilations_pads_and_auto_pad_match_onnx_runtime, .timeout = 60)
{
	cases_against_ort({"conv_pads", "conv_group2_dil2", "conv_dw_s2_relu6", "conv_dw_mult2_valid",
			   "conv_same_upper_relu", "conv_same_lower", "conv_1x1_bn"});
}

Test(onnx_conv, pools_match_onnx_runtime, .timeout = 60)
{
	cases_against_ort({"maxpool_ceil", "maxpool_ceil_drop", "avgpool_ceil_drop_incl", "maxpool_dil2", "maxpool_same", "avgpool_ceil_incl",
			   "avgpool_ceil_excl", "avgpool_asym", "avgpool_same", "gap"});
}

Test(onnx_conv, conv_transpose_and_batchnorm_alone_match_onnx_runtime, .timeout = 60)
{
	cases_against_ort({"convt_s2", "convt_group2_dil2", "bn"});
}

Test(onnx_conv, activations_and_batchnorm_are_fused_into_the_conv)
{
	for (const char *m : {"cnn_conv_dw_s2_relu6.onnx", "cnn_conv_same_upper_relu.onnx",
			      "cnn_conv_1x1_bn.onnx"}) {
		const mcp::GraphDef def = mcp::onnx::import(models + "/" + m);
		cr_expect_eq(def.nodes.size(), 1u, "%s: %zu nodes", m, def.nodes.size());
		cr_expect_eq(def.nodes[0].op, mcp::Op::conv, "%s", m);
	}
	// Alone, a BatchNormalization is a channel_affine.
	const mcp::GraphDef bn = mcp::onnx::import(models + "/cnn_bn.onnx");
	cr_expect_eq(count(bn, mcp::Op::channel_affine), 1u);
}

Test(onnx_conv, bad_convs_are_refused_naming_the_node)
{
	std::string e = refusal("cnnbad_channels.onnx");
	cr_expect(contains(e, "cnnbad_channels.onnx: 1 unsupported node") &&
			  contains(e, "node 'conv' (Conv, opset 13): W [6 x 3 x 3 x 3] and group 2 "
				      "take 6 input channels") &&
			  contains(e, "but X [1 x 4 x 7 x 9] has 4"),
		  "%s", e.c_str());
	e = refusal("cnnbad_weight_input.onnx");
	cr_expect(contains(e, "node 'conv' (Conv, opset 13): the weight W ('w') is not a constant"),
		  "%s", e.c_str());
	e = refusal("cnnbad_kernel.onnx");
	cr_expect(contains(e, "node 'conv' (Conv, opset 13): the dilated kernel 5x7 is larger than "
			      "the padded input 4x4"),
		  "%s", e.c_str());
}

Test(onnx_conv, validator_names_the_node_with_wrong_conv_dims_or_params)
{
	mcp::GraphDef def = mcp::onnx::import(models + "/cnn_conv_pads.onnx");
	cr_assert(!def.validate());
	auto &node = def.nodes[0];
	cr_assert_eq(node.op, mcp::Op::conv);
	// One output row too many: refused, naming the node and the formula's dims.
	mcp::GraphDef wrong = def;
	wrong.tensors[wrong.nodes[0].outputs[0]].dims[2] += 1;
	wrong.buffers[wrong.tensors[wrong.nodes[0].outputs[0]].buffer].length += 4096;
	auto e = wrong.validate();
	cr_assert(e.has_value());
	cr_expect(contains(e->message, "conv_pads") && contains(e->message, "should be [1 x 4 x 8 x 8]"),
		  "%s", e->message.c_str());
	// groups 0 in the parameters: a param error.
	wrong = def;
	std::memset(wrong.nodes[0].param.data() + 40, 0, 4);
	e = wrong.validate();
	cr_assert(e.has_value());
	cr_expect_eq(e->reason, mcp::GraphErrorReason::param);
	cr_expect(contains(e->message, "groups must be >= 1"), "%s", e->message.c_str());
	// A worker given the same refuses it too.
	std::vector<float> x(3 * 7 * 9), w(4 * 3 * 3 * 3), y(4 * 8 * 8);
	const auto t = [](std::vector<float> &v, std::initializer_list<std::uint32_t> d) {
		mcp::detail::OpTensor o;
		o.data = reinterpret_cast<std::byte *>(v.data());
		o.dtype = MCP_GRAPH_DTYPE_F32;
		o.rank = static_cast<std::uint8_t>(d.size());
		std::copy(d.begin(), d.end(), o.dims);
		o.bytes = v.size() * 4;
		return o;
	};
	const mcp::detail::OpTensor in[2] = {t(x, {1, 3, 7, 9}), t(w, {4, 3, 3, 3})};
	const mcp::detail::OpTensor out = t(y, {1, 4, 8, 8});
	cr_expect_eq(mcp::detail::run_op(MCP_GRAPH_OP_CONV, in, std::span(&out, 1), node.param, false), 0);
	cr_expect_eq(mcp::detail::run_op(MCP_GRAPH_OP_CONV, in, std::span(&out, 1), wrong.nodes[0].param,
					 false), -EINVAL);
}

// resnet.onnx with bytes flipped (1..4 of them, a seeded LCG) or cut short:
// every import succeeds or throws mcp::Error naming the file; a crash
// fails the test (Criterion runs it in its own process).
Test(onnx_conv, mutated_resnet_never_crashes, .timeout = 120)
{
	std::ifstream f(models + "/resnet.onnx", std::ios::binary);
	const std::string clean((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
	const std::string path = "/tmp/mcp-onnx-conv-fuzz-" + std::to_string(getpid()) + ".onnx";
	std::uint64_t state = 29;
	const auto rnd = [&state](std::uint64_t below) {
		state = state * 6364136223846793005ULL + 1442695040888963407ULL;
		return (state >> 33) % below;
	};
	unsigned refused = 0, imported = 0;
	for (int round = 0; round < 200; round++) {
		std::string bytes = clean;
		const std::uint64_t flips = 1 + rnd(4);
		for (std::uint64_t k = 0; k < flips; k++)
			bytes[rnd(bytes.size())] ^= static_cast<char>(1 + rnd(255));
		if (round % 7 == 0)
			bytes.resize(rnd(bytes.size()));
		std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
		try {
			mcp::onnx::import(path);
			imported++;
		} catch (const mcp::Error &e) {
			refused++;
			cr_expect(contains(e.what(), path), "%s", e.what());
		}
	}
	unlink(path.c_str());
	cr_log_info("mutated resnet: %u imported, %u refused", imported, refused);
	cr_expect_gt(refused, 0u);
}
