// SPDX-License-Identifier: GPL-2.0-only
// The unit tests' comparison of an imported model with ONNX Runtime.
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <dirent.h>
#include <optional>
#include <string>
#include <vector>

#include <criterion/criterion.h>
#include <criterion/logging.h>

#include <mcp/npy.hpp>
#include <mcp/runtime.hpp>

#include "graph_internal.hpp"
#include "helpers.hpp"
#include "onnx_compare.hpp"

namespace test {

namespace {

// The .npy files ORT wrote into @out, by output name.
std::vector<std::string> outputs_in(const std::string &out)
{
	std::vector<std::string> names;
	DIR *d = opendir(out.c_str());
	cr_assert_not_null(d, "%s", out.c_str());
	while (const dirent *e = readdir(d)) {
		const std::string f = e->d_name;
		if (f.size() > 4 && f.compare(f.size() - 4, 4, ".npy") == 0)
			names.push_back(f.substr(0, f.size() - 4));
	}
	closedir(d);
	return names;
}

} // namespace

mcp::GraphDef compare_with_ort(const std::string &dir, const std::string &model,
			       const std::string &input, const mcp::onnx::ImportOptions &opts,
			       unsigned want_outputs, RunOn on)
{
	std::string why;
	if (!test::have_ort(why))
		cr_skip_test("%s", why.c_str());
	char tmpl[] = "/tmp/mcp-onnx-ops-XXXXXX";
	cr_assert_not_null(mkdtemp(tmpl));
	const std::string out = tmpl;
	const test::RunResult r = test::run(
		{"/usr/bin/env", "node", MCP_SOURCE_DIR "/tests/onnx/ort_run.js", dir + "/" + model, out,
		 "x=" + dir + "/" + input},
		{"MCP_ORT_NODE_DIR=" MCP_ORT_NODE_DIR});
	cr_assert_eq(r.exit_code, 0, "ort_run.js: %s", r.err.c_str());

	const mcp::GraphDef def = mcp::onnx::import(dir + "/" + model, opts);
	if (auto e = def.validate())
		cr_assert_fail("%s: %s", model.c_str(), e->message.c_str());
	std::vector<std::vector<std::byte>> own;
	std::vector<std::span<std::byte>> mem;
	const auto xb = def.find_buffer("x");
	cr_assert(xb.has_value());
	std::optional<mcp::Runtime> rt;
	std::optional<mcp::LoadedGraph> g;
	if (on == RunOn::userspace) {
		mcp::RuntimeOptions ro;
		ro.executor = mcp::Executor::userspace;
		rt.emplace(ro);
		cr_assert_eq(rt->executor(), mcp::Executor::userspace);
		g.emplace(rt->load(def));
		for (std::uint32_t i = 0; i < def.buffers.size(); i++)
			mem.push_back(g->memory(i));
	} else {
		for (const auto &b : def.buffers)
			own.emplace_back(b.length);
		for (auto &m : own)
			mem.emplace_back(m);
	}
	mcp::npy::load_buffer(def, "x", dir + "/" + input, mem[*xb]);
	if (on == RunOn::userspace) {
		const mcp::ExecStatus st = rt->run(*g);
		cr_assert_eq(st.state, mcp::ExecState::done, "%s: %s", model.c_str(),
			     mcp::exec_failure_message(st, def).c_str());
		for (std::size_t i = 0; i < st.nodes.size(); i++) {
			cr_assert_eq(st.nodes[i].result, 0, "%s: node %zu", model.c_str(), i);
			if (def.nodes[i].engine == mcp::EngineClass::worker)
				cr_assert_neq(st.nodes[i].worker_tid, 0, "%s: node %zu", model.c_str(), i);
		}
	} else {
		mcp::Runtime::run_inline(def, mem);
	}

	const auto names = outputs_in(out);
	cr_assert_gt(names.size(), 0u);
	if (want_outputs)
		cr_expect_eq(names.size(), want_outputs, "%s: %zu outputs", model.c_str(), names.size());
	double worst = 0;
	for (const auto &name : names) {
		const mcp::npy::Array ref = mcp::npy::read(out + "/" + name + ".npy");
		const auto b = def.find_buffer(name);
		cr_assert(b.has_value(), "%s: no buffer %s", model.c_str(), name.c_str());
		const auto t = mcp::npy::buffer_tensor(def, *b);
		cr_assert(t.has_value());
		const auto &dims = def.tensors[*t].dims;
		cr_assert(std::equal(dims.begin(), dims.end(), ref.shape.begin(), ref.shape.end()),
			  "%s: %s has shape %s, ORT %s", model.c_str(), name.c_str(),
			  mcp::detail::dims_text(dims).c_str(),
			  mcp::npy::shape_text(ref.shape).c_str());
		const auto *y = reinterpret_cast<const float *>(mem[*b].data());
		const auto *o = reinterpret_cast<const float *>(ref.data.data());
		for (std::size_t i = 0; i < ref.elements(); i++) {
			if (std::isnan(o[i])) {
				cr_assert(std::isnan(y[i]), "%s: %s[%zu]: mcp %.7g, ort NaN", model.c_str(),
					  name.c_str(), i, double(y[i]));
				continue;
			}
			const double err = std::fabs(double(y[i]) - o[i]) / std::max(1.0, std::fabs(double(o[i])));
			worst = std::max(worst, err);
			cr_assert_leq(err, 1e-4, "%s: %s[%zu]: mcp %.7g, ort %.7g", model.c_str(),
				      name.c_str(), i, double(y[i]), double(o[i]));
		}
	}
	cr_log_info("%s on %s (%s): %zu outputs match ORT, worst relative error %.3g", model.c_str(),
		    input.c_str(), on == RunOn::userspace ? "userspace executor" : "inline",
		    names.size(), worst);
	std::system(("rm -rf " + out).c_str());
	return def;
}

} // namespace test
