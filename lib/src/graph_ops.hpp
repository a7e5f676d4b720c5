// SPDX-License-Identifier: LGPL-2.1-or-later
// libmcp internals: the operators of inference graphs on plain memory.
// The compute operators (MCP_GRAPH_ENGINE_WORKER) are what the Runtime's
// worker threads run; the data-movement ones (NOP, COPY, TILE16,
// QUANT_I8, DEQUANT_I8) repeat in C++ what the kernel's cpu engine does,
// for Runtime::run_inline().  Not installed.
#ifndef MCP_SRC_GRAPH_OPS_HPP
#define MCP_SRC_GRAPH_OPS_HPP

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>

namespace mcp::detail {

// One tensor of a job, resolved to memory: @bytes (unpadded) at @data.
struct OpTensor {
	std::byte *data = nullptr;
	std::uint8_t dtype = 0;		// enum mcp_dtype
	std::uint8_t rank = 0;
	std::uint8_t layout = 0;	// enum mcp_layout
	std::uint32_t dims[6] = {};
	std::uint64_t bytes = 0;
};

// Bytes of one element of @dtype, 0 when unknown.
std::uint32_t dtype_size(std::uint8_t dtype) noexcept;
// Elements of @t (1 for rank 0); 0 on overflow or an unknown dtype is the
// caller's problem: tensor_bytes() says 0 then.
std::uint64_t tensor_elements(const OpTensor &t) noexcept;
// Unpadded bytes of @t, 0 on overflow or an unknown dtype.
std::uint64_t tensor_bytes(const OpTensor &t) noexcept;

// Runs operator @op (enum mcp_graph_op) on @in / @out with parameters
// @param.  Checks the shapes and parameters again (a worker must never
// crash on what it is given) and returns 0, -EINVAL (shapes, dtypes or
// parameters wrong for the op) or -EOPNOTSUPP (an unknown op).  @kernel_ops
// allows the data-movement operators too (run_inline); workers refuse
// them with -EOPNOTSUPP, and MATMUL without OpenBLAS is -EOPNOTSUPP too
// (Runtime::load() refuses such a graph first, naming the library).
// Outputs may be inputs (in-place); operators that cannot work in place
// compute into scratch memory first.
int run_op(std::uint16_t op, std::span<const OpTensor> in, std::span<const OpTensor> out,
	   std::span<const std::byte> param, bool kernel_ops) noexcept;

// The OpenBLAS library MATMUL dlopen()s (libopenblas-dev's runtime part).
inline constexpr const char *blas_library = "libopenblas.so.0";
// Loads OpenBLAS once (single-threaded: the Runtime's workers are the
// parallelism); false when it is not installed: MATMUL then fails with
// -EOPNOTSUPP.
bool blas_available() noexcept;
// Why blas_available() is false (dlerror()'s text); empty when it is true.
const std::string &blas_load_error() noexcept;
// True for the operators that compute through OpenBLAS.
bool op_needs_blas(std::uint16_t op) noexcept;
// Row-major cblas_sgemm through the loaded OpenBLAS; false (nothing done)
// when it is not loaded.
bool blas_sgemm(bool trans_a, bool trans_b, std::uint32_t m, std::uint32_t n, std::uint32_t k,
		float alpha, const float *a, std::uint32_t lda, const float *b, std::uint32_t ldb,
		float beta, float *c, std::uint32_t ldc) noexcept;

// ---- the CNN operators (graph_ops_conv.cpp) ----

// CONV, CONV_TRANSPOSE, MAXPOOL, AVGPOOL, GLOBAL_AVGPOOL, CHANNEL_AFFINE.
bool is_cnn_op(std::uint16_t op) noexcept;
// Why @in / @out / @param break the rules of CNN operator @op (their
// dtypes, ranks, dims and parameters: <linux/mcp.h>), a sentence without
// the node's name; none when they fit.  @param_error says whether it is
// the parameters that are wrong.  The validator and the workers both ask
// it (only dtype, rank and dims of the tensors are read).
struct CnnRuleError {
	bool param_error = false;
	std::string what;
};
std::optional<CnnRuleError> cnn_rules(std::uint16_t op, std::span<const OpTensor> in,
				      const OpTensor &out, std::span<const std::byte> param);
// The output dims of CONV, CONV_TRANSPOSE, MAXPOOL or AVGPOOL @op for @in
// and @param (the formulas of <linux/mcp.h>, cnn_rules() without an
// output): @out is set to dense f32 [N][M][OH][OW].  Why not, or none.
std::optional<CnnRuleError> cnn_output(std::uint16_t op, std::span<const OpTensor> in,
				       std::span<const std::byte> param, OpTensor &out);
// Runs CNN operator @op (run_op's contract); -EOPNOTSUPP for any other op.
int run_cnn_op(std::uint16_t op, std::span<const OpTensor> in, const OpTensor &out,
	       std::span<const std::byte> param) noexcept;

} // namespace mcp::detail

#endif // MCP_SRC_GRAPH_OPS_HPP
