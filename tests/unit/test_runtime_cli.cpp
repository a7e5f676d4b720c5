// SPDX-License-Identifier: GPL-2.0-only
// mcpctl graph without a kernel: the text and JSON of show and run from
// synthetic reports (every documented key, percentiles, the inline check
// verdict), and build/show through the real binary on the demo.
#include <cstdio>
#include <string>

#include <sys/wait.h>

#include <criterion/criterion.h>

#include "commands.hpp"

namespace {

bool contains(const std::string &s, const char *what)
{
	return s.find(what) != std::string::npos;
}

mcpctl::GraphRunReport report()
{
	mcpctl::GraphRunReport r;

	r.graph = "g";
	r.context = "host";
	r.warmup = 1;
	for (std::uint64_t i = 1; i <= 100; i++)
		r.iteration_ns.push_back(i * 1000);
	mcpctl::GraphRunNode n;
	n.name = "mm";
	n.op = "matmul";
	n.engine = "worker";
	n.numa_node = 1;
	n.worker_tid = 42;
	n.ns = {3000, 1000, 2000};
	r.nodes.push_back(n);
	r.workers.push_back({1, 42, 300, 0, 32, mcp::WorkerMode::chains});
	return r;
}

} // namespace

Test(runtime_cli, run_json_has_every_documented_key_and_percentiles)
{
	nlohmann::ordered_json j = mcpctl::graph_run_json(report());

	for (const char *k : {"graph", "context", "iterations", "warmup", "workers", "latency_us",
			      "nodes", "inline_check"})
		cr_expect(j.contains(k), "missing %s", k);
	cr_expect_eq(j["iterations"].get<int>(), 100);
	cr_expect_float_eq(j["latency_us"]["p50"].get<double>(), 50.0, 1e-9);
	cr_expect_float_eq(j["latency_us"]["p99"].get<double>(), 99.0, 1e-9);
	cr_expect_float_eq(j["latency_us"]["max"].get<double>(), 100.0, 1e-9);
	cr_expect(j["inline_check"].is_null());
	const auto &node = j["nodes"][0];
	for (const char *k : {"index", "name", "op", "engine", "numa_node", "worker_tid", "p50_us",
			      "p99_us", "max_us"})
		cr_expect(node.contains(k), "node misses %s", k);
	cr_expect_float_eq(node["p50_us"].get<double>(), 2.0, 1e-9);
	cr_expect_float_eq(node["max_us"].get<double>(), 3.0, 1e-9);
	for (const char *k : {"node", "tid", "jobs", "failed", "mode", "batch"})
		cr_expect(j["workers"][0].contains(k), "worker misses %s", k);
	cr_expect_eq(j["workers"][0]["mode"].get<std::string>(), "chains");
	cr_expect_eq(j["workers"][0]["batch"].get<unsigned>(), 32u);
	cr_expect(contains(mcpctl::format_graph_run_text(report()), "node 1 tid 42 chains"));
}

Test(runtime_cli, inline_check_verdict)
{
	mcpctl::GraphRunReport r = report();

	r.inline_checked = true;
	r.inline_max_error = 2e-3;
	nlohmann::ordered_json j = mcpctl::graph_run_json(r);
	cr_expect_eq(j["inline_check"]["ok"].get<bool>(), false);
	cr_expect(contains(mcpctl::format_graph_run_text(r), "MISMATCH"));
	r.inline_max_error = 1e-4;
	cr_expect_eq(mcpctl::graph_run_json(r)["inline_check"]["ok"].get<bool>(), true);
	std::string text = mcpctl::format_graph_run_text(r);
	cr_expect(contains(text, "p50 50.0 us"), "%s", text.c_str());
	cr_expect(contains(text, "matmul"));
	cr_expect(contains(text, "worker"));
	cr_expect(contains(text, "42"));
}

Test(runtime_cli, run_lists_the_outputs_and_where_they_were_saved)
{
	mcpctl::GraphRunReport r = report();

	r.outputs.push_back({"y", {3, 10}, "float32", "out/y.npy"});
	r.outputs.push_back({"z", {4}, "int8", ""});
	nlohmann::ordered_json j = mcpctl::graph_run_json(r);
	cr_expect_eq(j["no_kernel"].get<bool>(), false);
	cr_assert_eq(j["outputs"].size(), 2u);
	cr_expect_eq(j["outputs"][0]["name"].get<std::string>(), "y");
	cr_expect(j["outputs"][0]["shape"] == nlohmann::ordered_json::array({3, 10}));
	cr_expect_eq(j["outputs"][0]["dtype"].get<std::string>(), "float32");
	cr_expect_eq(j["outputs"][0]["file"].get<std::string>(), "out/y.npy");
	cr_expect(j["outputs"][1]["file"].is_null());
	std::string text = mcpctl::format_graph_run_text(r);
	cr_expect(contains(text, "OUTPUT"), "%s", text.c_str());
	cr_expect(contains(text, "(3, 10)"), "%s", text.c_str());
	cr_expect(contains(text, "out/y.npy"), "%s", text.c_str());
	cr_expect(contains(text, "(4,)"), "%s", text.c_str());

	// --no-kernel: no per-node times (null), one line instead of the table.
	r.no_kernel = true;
	r.context = "inline";
	r.nodes[0].ns.clear();
	r.nodes[0].engine = "inline";
	j = mcpctl::graph_run_json(r);
	cr_expect_eq(j["no_kernel"].get<bool>(), true);
	cr_expect(j["nodes"][0]["p50_us"].is_null());
	text = mcpctl::format_graph_run_text(r);
	cr_expect(contains(text, "run_inline, no kernel"), "%s", text.c_str());
	cr_expect(!contains(text, "NUMA"), "%s", text.c_str());
	cr_expect(contains(text, "out/y.npy"), "%s", text.c_str());
}

Test(runtime_cli, run_says_where_the_buffers_are)
{
	mcpctl::GraphRunReport r = report();

	r.buffers = {{"x", 1}, {"w", 1}, {"out", 0}};
	nlohmann::ordered_json j = mcpctl::graph_run_json(r);
	cr_expect(j["node_asked"].is_null());
	cr_expect_eq(j["buffers"].size(), 3u);
	for (const char *k : {"index", "name", "node"})
		cr_expect(j["buffers"][2].contains(k), "buffer misses %s", k);
	cr_expect_eq(j["buffers"][2]["node"].get<int>(), 0);
	cr_expect_eq(j["buffers"][1]["name"].get<std::string>(), "w");
	std::string text = mcpctl::format_graph_run_text(r);
	cr_expect(contains(text, "buffers: 1 on node 0, 2 on node 1\n"), "%s", text.c_str());
	r.node_asked = 1;
	r.buffers = {{"x", 1}, {"w", -1}};
	cr_expect_eq(mcpctl::graph_run_json(r)["node_asked"].get<int>(), 1);
	text = mcpctl::format_graph_run_text(r);
	cr_expect(contains(text, "buffers: 1 on mixed or unknown nodes, 1 on node 1 (asked node 1)\n"),
		  "%s", text.c_str());
}

// No iteration and no node (a report that failed early): no percentile of
// an empty vector divides by its size.
Test(runtime_cli, run_report_without_iterations_or_nodes)
{
	mcpctl::GraphRunReport r;

	r.inline_checked = true;
	nlohmann::ordered_json j = mcpctl::graph_run_json(r);
	cr_expect_float_eq(j["latency_us"]["p50"].get<double>(), 0.0, 1e-12);
	cr_expect_float_eq(j["latency_us"]["max"].get<double>(), 0.0, 1e-12);
	cr_expect_eq(j["nodes"].size(), 0u);
	std::string text = mcpctl::format_graph_run_text(r);
	cr_expect(contains(text, "0 iterations"), "%s", text.c_str());
	cr_expect(contains(text, "buffers: none"), "%s", text.c_str());
}

Test(runtime_cli, show_lists_edges_of_the_demo)
{
	mcp::GraphDef def = mcp::demo_attention_block();
	nlohmann::ordered_json j = mcpctl::graph_show_json(def, 6184);

	for (const char *k : {"name", "binary_bytes", "json_bytes", "buffer_bytes", "buffers", "tensors",
			      "nodes", "edges"})
		cr_expect(j.contains(k), "missing %s", k);
	cr_expect_eq(j["nodes"].size(), def.nodes.size());
	std::size_t edges = 0;
	for (const auto &s : def.successors())
		edges += s.size();
	cr_expect_eq(j["edges"].size(), edges);
	cr_expect(edges > 0);
	cr_expect_eq(j["buffers"][0]["flags"][0].get<std::string>(), "input");
	std::string text = mcpctl::format_graph_text(def, 6184);
	cr_expect(contains(text, "layernorm"));
	cr_expect(contains(text, "tiled16"));
}

Test(runtime_cli, build_then_show_through_mcpctl)
{
	std::string cmd = std::string(MCPCTL_PATH) +
			  " graph build --demo attention -o /tmp/mcp-unit-demo.mgph >/dev/null 2>&1";
	cr_assert_eq(std::system(cmd.c_str()), 0);
	cmd = std::string(MCPCTL_PATH) + " graph show /tmp/mcp-unit-demo.mgph >/dev/null 2>&1";
	cr_expect_eq(std::system(cmd.c_str()), 0);
	cmd = std::string(MCPCTL_PATH) + " graph build >/dev/null 2>&1";
	cr_expect_eq(WEXITSTATUS(std::system(cmd.c_str())), 2);
	cmd = std::string(MCPCTL_PATH) + " graph show /nonexistent.mgph >/dev/null 2>&1";
	cr_expect_eq(WEXITSTATUS(std::system(cmd.c_str())), 1);
	cmd = std::string(MCPCTL_PATH) + " graph run /tmp/mcp-unit-demo.mgph --node -2 >/dev/null 2>&1";
	cr_expect_eq(WEXITSTATUS(std::system(cmd.c_str())), 2);
	std::remove("/tmp/mcp-unit-demo.mgph");
}
