// SPDX-License-Identifier: LGPL-2.1-or-later
// The demo model: one transformer attention block as a graph
// (Documentation/graphs.rst, "Demo block"), weights from a fixed seed.
#include <cerrno>
#include <cmath>
#include <string>

#include "graph_internal.hpp"

namespace mcp {

GraphDef demo_attention_block(const DemoAttentionOptions &o)
{
	const std::uint32_t S = o.seq, Dm = o.model_dim, H = o.heads, dh = o.head_dim;

	if (S == 0 || Dm == 0 || H == 0 || dh == 0 || std::uint64_t{H} * dh != Dm)
		throw Error(EINVAL, "demo attention block: heads x head_dim must equal model_dim (" +
					    std::to_string(H) + " x " + std::to_string(dh) + " != " +
					    std::to_string(Dm) + "), all non-zero");
	// The TILE16 view of X is [1][16][S/16][Dm]: 16 row groups, Dm f32 a
	// multiple of 32 bytes.
	if (S % 16 != 0 || Dm % 8 != 0)
		throw Error(EINVAL, "demo attention block: seq must be a multiple of 16 and model_dim "
				    "of 8 (the tiled hand-off copy of X), got seq " + std::to_string(S) +
				    ", model_dim " + std::to_string(Dm));

	const auto F = DType::f32;
	const auto W = EngineClass::worker;
	const auto C = EngineClass::cpu;
	GraphBuilder g("attention_block");

	const auto x_buf = g.buffer("x", graph_buffer_input,
				    GraphInit{InitKind::uniform_f32, o.seed + 1, 1.0f});
	const auto w_buf = g.buffer("weights", graph_buffer_const,
				    GraphInit{InitKind::uniform_f32, o.seed,
					      1.0f / std::sqrt(static_cast<float>(Dm))});
	const auto b_buf = g.buffer("biases", graph_buffer_const,
				    GraphInit{InitKind::uniform_f32, o.seed + 2, 0.02f});
	const auto gamma_buf = g.buffer("ln_gamma", graph_buffer_const,
					GraphInit{InitKind::constant_f32, 0, 1.0f});
	const auto beta_buf = g.buffer("ln_beta", graph_buffer_const,
				       GraphInit{InitKind::constant_f32, 0, 0.0f});
	const auto act = g.buffer("act");
	const auto out_buf = g.buffer("out", graph_buffer_output);
	const auto tiled_buf = g.buffer("tiled", graph_buffer_output);

	// int8 round trip of X: X is uniform in [-1, 1), so 1/127 per step.
	const QuantParam quant{1.0f / 127.0f, 0};
	const auto x = g.tensor("x", x_buf, F, {S, Dm});
	const auto x_q = g.tensor("x_q", act, DType::i8, {S, Dm});
	const auto x_dq = g.tensor("x_dq", act, F, {S, Dm});
	g.node(Op::quant_i8, C, {x}, {x_q}, param_bytes(quant), "quantize_x");
	g.node(Op::dequant_i8, C, {x_q}, {x_dq}, param_bytes(quant), "dequantize_x");

	// The accelerator hand-off: X as NHWC [1][16][S/16][Dm] tiled by 16.
	const auto x_nhwc = g.view("x_dq_nhwc", x_dq, F, {1, 16, S / 16, Dm}, Layout::nhwc);
	const auto x_tiled = g.tensor("x_tiled", tiled_buf, F, {1, 1, S / 16, Dm, 16},
				      Layout::tiled16);
	g.node(Op::tile16, C, {x_nhwc}, {x_tiled}, {}, "tile_x_for_accelerator");

	const MatmulParam scores_param{matmul_trans_b, 1.0f / std::sqrt(static_cast<float>(dh))};
	const auto bias_o = g.tensor("bo", b_buf, F, {Dm});
	std::uint32_t sum = 0;

	for (std::uint32_t h = 0; h < H; h++) {
		const std::string s = std::to_string(h);
		std::uint32_t proj_in[3];

		for (const char *which : {"q", "k", "v"}) {
			const std::string p = std::string(which) + s;
			const auto w = g.tensor("w" + p, w_buf, F, {Dm, dh});
			const auto b = g.tensor("b" + p, b_buf, F, {dh});
			const auto y = g.tensor(p, act, F, {S, dh});
			g.node(Op::matmul, W, {x_dq, w, b}, {y}, {}, std::string(which) + "_proj" + s);
			proj_in[which[0] == 'q' ? 0 : which[0] == 'k' ? 1 : 2] = y;
		}
		const auto scores = g.tensor("scores" + s, act, F, {S, S});
		const auto probs = g.tensor("probs" + s, act, F, {S, S});
		const auto ctx = g.tensor("ctx" + s, act, F, {S, dh});
		const auto wo = g.tensor("wo" + s, w_buf, F, {dh, Dm});
		const auto proj = g.tensor("attn_out" + s, act, F, {S, Dm});

		g.node(Op::matmul, W, {proj_in[0], proj_in[1]}, {scores}, param_bytes(scores_param),
		       "scores" + s);
		g.node(Op::softmax, W, {scores}, {probs}, {}, "softmax" + s);
		g.node(Op::matmul, W, {probs, proj_in[2]}, {ctx}, {}, "context" + s);
		if (h == 0)
			g.node(Op::matmul, W, {ctx, wo, bias_o}, {proj}, {}, "out_proj" + s);
		else
			g.node(Op::matmul, W, {ctx, wo}, {proj}, {}, "out_proj" + s);
		if (h == 0) {
			sum = proj;
			continue;
		}
		const auto next = g.tensor("attn_sum" + s, act, F, {S, Dm});
		g.node(Op::add, W, {sum, proj}, {next}, {}, "sum_heads" + s);
		sum = next;
	}

	const auto resid = g.tensor("residual", act, F, {S, Dm});
	g.node(Op::add, W, {sum, x_dq}, {resid}, {}, "residual_add");
	const auto gamma = g.tensor("gamma", gamma_buf, F, {Dm});
	const auto beta = g.tensor("beta", beta_buf, F, {Dm});
	const auto y = g.tensor("y", out_buf, F, {S, Dm});
	g.node(Op::layernorm, W, {resid, gamma, beta}, {y}, param_bytes(NormParam{1e-5f}),
	       "layernorm");
	return g.build();
}

} // namespace mcp
