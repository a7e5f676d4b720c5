// SPDX-License-Identifier: GPL-2.0-only
// The graph runtime's chain mode without a kernel: the node descriptors
// precomputed from a GraphDef (tensors by buffer index, params, counts, a
// node naming a tensor the graph lacks), and run_chain() on chain reads
// built by hand: nodes run in order through the chain's buffer handles,
// end times, an unknown graph, a node index past the graph, a malformed
// read, a failing node that ends the chain, a tensor past the chain's
// buffer table, WNOP without any registered buffer, and a chain keeping
// its graph's descriptors after the graph went.
#include <cerrno>
#include <cstring>
#include <memory>
#include <vector>

#include <criterion/criterion.h>

#include <mcp/runtime.hpp>

#include "runtime_internal.hpp"

using mcp::detail::ChainOutcome;
using mcp::detail::GraphDescs;
using mcp::detail::GraphRegistry;
using mcp::detail::HandleRegistry;

namespace {

// Buffer 0 "a": t0 (16 f32 at 0), t1 (at 64), t2 (at 128), t4 (at 192);
// buffer 1 "b": t3 (16 f32 at 0).  Nodes: relu t0 -> t1, wnop t1 -> t4,
// relu t1 -> t2, relu t2 -> t3.
mcp::GraphDef relu_chain()
{
	mcp::GraphBuilder g("chain");
	std::uint32_t a = g.buffer("a"), b = g.buffer("b");
	std::uint32_t t0 = g.tensor("t0", a, mcp::DType::f32, {16});
	std::uint32_t t1 = g.tensor("t1", a, mcp::DType::f32, {16});
	std::uint32_t t2 = g.tensor("t2", a, mcp::DType::f32, {16});
	std::uint32_t t3 = g.tensor("t3", b, mcp::DType::f32, {16});
	std::uint32_t t4 = g.tensor("t4", a, mcp::DType::f32, {16});

	g.node(mcp::Op::relu, mcp::EngineClass::worker, {t0}, {t1});
	g.node(mcp::Op::wnop, mcp::EngineClass::worker, {t1}, {t4});
	g.node(mcp::Op::relu, mcp::EngineClass::worker, {t1}, {t2});
	g.node(mcp::Op::relu, mcp::EngineClass::worker, {t2}, {t3});
	return g.build();
}

// A chain read of @nodes on graph @graph, buffer i on BO @bos[i].
class ChainRead {
public:
	ChainRead(std::uint32_t graph, std::vector<std::uint32_t> bos,
		  std::vector<std::uint32_t> nodes)
		: words_((mcp::detail::chain_read_bytes(nodes.size()) + 7) / 8),
		  len_(mcp::detail::chain_read_bytes(nodes.size())), ends_(nodes.size() + 1)
	{
		struct mcp_worker_chain &c = chain();

		c.job_id = 77;
		c.graph = graph;
		c.n_nodes = static_cast<std::uint32_t>(nodes.size());
		c.n_buffers = static_cast<std::uint32_t>(bos.size());
		std::memcpy(c.handles, bos.data(), bos.size() * sizeof(bos[0]));
		std::memcpy(c.nodes, nodes.data(), nodes.size() * sizeof(nodes[0]));
	}

	struct mcp_worker_chain &chain()
	{
		return *reinterpret_cast<struct mcp_worker_chain *>(words_.data());
	}
	ChainOutcome run(const HandleRegistry &r, const GraphRegistry &g, std::size_t len = 0,
			 std::uint64_t slice_ns = mcp::detail::chain_slice_ns)
	{
		return mcp::detail::run_chain(r, g, chain(), len ? len : len_, ends_.data(),
					      slice_ns);
	}
	std::uint64_t end(std::size_t i) const { return ends_[i]; }

private:
	std::vector<std::uint64_t> words_;
	std::size_t len_;
	std::vector<std::uint64_t> ends_;
};

// The graph's two buffers, registered as BOs 11 and 12, t0 = -8 .. 7.
struct Memory {
	std::vector<float> a = std::vector<float>(64, 0.0f);
	std::vector<float> b = std::vector<float>(16, -1.0f);
	HandleRegistry reg;
	GraphRegistry graphs;

	Memory()
	{
		for (int i = 0; i < 16; i++)
			a[static_cast<std::size_t>(i)] = static_cast<float>(i - 8);
		reg.acquire(11, std::as_writable_bytes(std::span(a)));
		reg.acquire(12, std::as_writable_bytes(std::span(b)));
		graphs.add(5, std::make_shared<const GraphDescs>(GraphDescs::of(relu_chain())));
	}
};

} // namespace

Test(runtime_chain, descriptors_name_buffers_by_index)
{
	mcp::GraphDef def = relu_chain();
	def.nodes[3].param = {std::byte{1}, std::byte{2}, std::byte{3}};
	GraphDescs d = GraphDescs::of(def);

	cr_assert_eq(d.nodes.size(), 4u);
	cr_assert_eq(d.tensors.size(), 5u);
	cr_expect_eq(d.n_buffers, 2u);
	cr_expect_eq(d.tensors[1].handle, 0u);
	cr_expect_eq(d.tensors[1].offset, 64u);
	cr_expect_eq(d.tensors[3].handle, 1u);
	cr_expect_eq(d.tensors[3].offset, 0u);
	cr_expect_eq(d.tensors[3].dtype, MCP_DTYPE_F32);
	cr_expect_eq(d.tensors[3].rank, 1);
	cr_expect_eq(d.tensors[3].dims[0], 16u);
	cr_expect_eq(d.nodes[0].op, MCP_OP_RELU);
	cr_expect_eq(d.nodes[1].op, MCP_OP_WNOP);
	cr_expect_eq(d.nodes[2].n_inputs, 1);
	cr_expect_eq(d.nodes[2].n_outputs, 1);
	cr_expect_eq(d.nodes[2].tensor[0], 1u);
	cr_expect_eq(d.nodes[2].tensor[1], 2u);
	cr_expect_eq(d.nodes[3].param_len, 3u);
	cr_expect_eq(d.params.at(d.nodes[3].param_offset + 2), std::byte{3});
}

Test(runtime_chain, a_node_naming_a_missing_tensor_fails_to_run)
{
	mcp::GraphDef def = relu_chain();
	def.nodes[2].outputs = {9};
	Memory m;

	GraphDescs d = GraphDescs::of(def);
	cr_expect_eq(d.nodes[2].op, GraphDescs::invalid_op);
	m.graphs.add(6, std::make_shared<const GraphDescs>(std::move(d)));
	ChainRead c(6, {11, 12}, {0, 2, 3});
	ChainOutcome o = c.run(m.reg, m.graphs);
	cr_expect_eq(o.n_ran, 2u);
	cr_expect_eq(o.result, -EINVAL);
}

Test(runtime_chain, nodes_run_in_order_through_the_chains_handles)
{
	Memory m;
	ChainRead c(5, {11, 12}, {0, 1, 2, 3});

	ChainOutcome o = c.run(m.reg, m.graphs);
	cr_expect_eq(o.result, 0);
	cr_expect_eq(o.n_ran, 4u);
	cr_expect_leq(o.start_ns, c.end(0));
	for (std::size_t i = 1; i < 4; i++)
		cr_expect_leq(c.end(i - 1), c.end(i));
	for (std::size_t i = 0; i < 16; i++) {
		float want = i < 8 ? 0.0f : static_cast<float>(i) - 8.0f;
		cr_expect_eq(m.a[16 + i], want, "t1[%zu]", i);
		cr_expect_eq(m.b[i], want, "t3[%zu]", i);
	}
}

Test(runtime_chain, an_unknown_graph_fails_the_head)
{
	Memory m;
	ChainRead c(99, {11, 12}, {0, 2});

	ChainOutcome o = c.run(m.reg, m.graphs);
	cr_expect_eq(o.n_ran, 1u);
	cr_expect_eq(o.result, -ENOENT);
	cr_expect_neq(c.end(0), 0u);
	cr_expect_eq(m.a[16 + 15], 0.0f);	// node 0 did not run
}

Test(runtime_chain, a_node_past_the_graph_fails_the_head)
{
	Memory m;
	ChainRead c(5, {11, 12}, {0, 4});

	ChainOutcome o = c.run(m.reg, m.graphs);
	cr_expect_eq(o.n_ran, 1u);
	cr_expect_eq(o.result, -EINVAL);
	cr_expect_eq(m.a[16 + 15], 0.0f);
}

Test(runtime_chain, a_malformed_read_fails_the_head)
{
	Memory m;
	ChainRead c(5, {11, 12}, {0, 1});

	// Shorter than its n_nodes says, and no node at all.
	cr_expect_eq(c.run(m.reg, m.graphs, mcp::detail::chain_read_bytes(1)).result, -EINVAL);
	cr_expect_eq(c.run(m.reg, m.graphs, mcp::detail::chain_read_bytes(0)).result, -EINVAL);
	c.chain().n_nodes = 0;
	cr_expect_eq(c.run(m.reg, m.graphs, mcp::detail::chain_read_bytes(0)).result, -EINVAL);
	c.chain().n_nodes = 2;
	c.chain().n_buffers = MCP_GRAPH_MAX_BUFFERS + 1;
	ChainOutcome o = c.run(m.reg, m.graphs);
	cr_expect_eq(o.result, -EINVAL);
	cr_expect_eq(o.n_ran, 1u);
	cr_expect_eq(m.a[16 + 15], 0.0f);
}

Test(runtime_chain, a_failing_node_ends_the_chain)
{
	Memory m;
	// Buffer 1 on a BO the registry does not know: node 3 fails.
	ChainRead c(5, {11, 13}, {0, 2, 3, 1});

	ChainOutcome o = c.run(m.reg, m.graphs);
	cr_expect_eq(o.n_ran, 3u);
	cr_expect_eq(o.result, -ENOENT);
	cr_expect_eq(m.a[16 + 15], 7.0f);	// nodes 0 and 2 ran
	cr_expect_eq(m.b[15], -1.0f);
	cr_expect_leq(c.end(1), c.end(2));
}

Test(runtime_chain, a_tensor_past_the_chains_buffer_table_fails)
{
	Memory m;
	// The chain carries one buffer; node 3 writes buffer 1.
	ChainRead c(5, {11}, {0, 3});

	ChainOutcome o = c.run(m.reg, m.graphs);
	cr_expect_eq(o.n_ran, 2u);
	cr_expect_eq(o.result, -EINVAL);
	cr_expect_eq(m.b[15], -1.0f);
}

Test(runtime_chain, wnop_needs_no_buffer)
{
	HandleRegistry empty;
	Memory m;
	ChainRead c(5, {0, 0}, {1, 1, 1});

	ChainOutcome o = c.run(empty, m.graphs);
	cr_expect_eq(o.result, 0);
	cr_expect_eq(o.n_ran, 3u);
}

Test(runtime_chain, a_chain_keeps_its_descriptors_after_the_graph_went)
{
	Memory m;
	GraphRegistry::Ref held = m.graphs.find(5);

	cr_assert(held);
	m.graphs.remove(5);
	cr_expect_eq(m.graphs.size(), 0u);
	cr_expect(!m.graphs.find(5));
	cr_expect_eq(held->nodes.size(), 4u);
	cr_expect_eq(held.use_count(), 1);
	ChainRead c(5, {11, 12}, {0});
	cr_expect_eq(c.run(m.reg, m.graphs).result, -ENOENT);
}

Test(runtime_chain, worker_modes_have_names)
{
	cr_expect_str_eq(mcp::to_string(mcp::WorkerMode::chains), "chains");
	cr_expect_str_eq(mcp::to_string(mcp::WorkerMode::batch), "batch");
	cr_expect_str_eq(mcp::to_string(mcp::WorkerMode::one_job), "one-job");
	cr_expect_str_eq(mcp::to_string(static_cast<mcp::WorkerMode>(7)), "unknown");
	cr_expect_str_eq(mcp_feature_name(MCP_FEATURE_JOB_CHAINS), "job-chains");
}

Test(runtime_chain, a_chain_past_its_time_slice_reports_what_ran)
{
	Memory m;
	ChainRead c(5, {11, 12}, {0, 2, 3});

	// A slice already over: the first node runs, the rest go back.
	ChainOutcome o = c.run(m.reg, m.graphs, 0, 0);
	cr_expect_eq(o.n_ran, 1u);
	cr_expect_eq(o.result, 0);
	cr_expect_geq(c.end(0), o.start_ns);
	// The default slice: all three.
	o = c.run(m.reg, m.graphs);
	cr_expect_eq(o.n_ran, 3u);
	cr_expect_eq(o.result, 0);
}
