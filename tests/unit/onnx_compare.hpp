// SPDX-License-Identifier: GPL-2.0-only
// The unit tests' comparison of an imported model with ONNX Runtime.
#ifndef MCP_TESTS_UNIT_ONNX_COMPARE_HPP
#define MCP_TESTS_UNIT_ONNX_COMPARE_HPP

#include <string>

#include <mcp/graph.hpp>
#include <mcp/onnx.hpp>

namespace test {

// How compare_with_ort() runs the graph.
enum class RunOn {
	inline_thread,	// Runtime::run_inline()
	userspace,	// a Runtime with Executor::userspace
};

// Imports @dir/@model with @opts, runs it on @dir/@input (as x) as @on
// says, runs ONNX Runtime (tests/onnx/ort_run.js) on the same files and
// asserts every graph output has ORT's shape and values within 1e-4
// relative (NaN where ORT has NaN); with @want_outputs, that there are
// that many.  Skips the test without ORT.  Returns the imported graph.
mcp::GraphDef compare_with_ort(const std::string &dir, const std::string &model,
			       const std::string &input, const mcp::onnx::ImportOptions &opts = {},
			       unsigned want_outputs = 0, RunOn on = RunOn::inline_thread);

} // namespace test

#endif
