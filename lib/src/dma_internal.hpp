// SPDX-License-Identifier: LGPL-2.1-or-later
// libmcp internals of buffers, DMA and fences (buffer.cpp, dma.cpp,
// fence.cpp, c_api_dma.cpp): the pure functions, kept apart from the
// ioctl calls so that tests/unit can run them.  Not installed.
#ifndef MCP_SRC_DMA_INTERNAL_HPP
#define MCP_SRC_DMA_INTERNAL_HPP

#include <cstdint>
#include <string>
#include <string_view>

#include "internal.hpp"

namespace mcp::detail {

// The fd of a Dma context, shared by the Dma, its Buffers and Fences.
struct DmaContextFd {
	DmaContextFd(int fd_, std::string name_, bool host_) noexcept
		: fd(fd_), name(std::move(name_)), host(host_)
	{
	}
	DmaContextFd(const DmaContextFd &) = delete;
	DmaContextFd &operator=(const DmaContextFd &) = delete;
	~DmaContextFd();

	int fd;
	std::string name;	// "host" or the device's PCI address
	bool host;
};

// The message for @errnum while doing @what ("creating a 64 MiB buffer",
// "MCP_IOC_ENGINE_INFO") on context @context ("host", a PCI address).
std::string dma_error_message(int errnum, std::string_view context, std::string_view what);

// Why pinning @length bytes failed with ENOMEM: RLIMIT_MEMLOCK is
// @limit_bytes (RLIM_INFINITY: unlimited) and how to raise it.
std::string memlock_message(std::uint64_t length, std::uint64_t limit_bytes,
			    std::string_view context);

// The message of a DMA job that failed with @errnum (its fence's or the
// synchronous submit's error).
std::string job_error_message(int errnum, std::string_view context, std::string_view engine,
			      std::uint64_t length);

// MCP_BO_* of @options.
std::uint32_t bo_create_flags(const BufferOptions &options) noexcept;

// @i into C struct @info (whose size the caller checked; kept).
void put_buffer_info(const BufferInfo &i, struct mcp_buffer_info *info) noexcept;

EngineInfo decode_engine_info(const struct mcp_engine_info &raw);
BufferInfo decode_buffer_info(const struct mcp_bo_info &raw);

// A FenceResult from sync_file_info.status: 1 signaled, 0 pending, < 0 an
// error.
FenceResult fence_result_from_status(int status) noexcept;

// "64 MiB", "4 KiB", "100 bytes" (exact units only).
std::string size_text(std::uint64_t bytes);

} // namespace mcp::detail

// The C API's handles (c_api_dma.cpp; the runtime's C API uses them too).
struct mcp_dma {
	mcp::Dma dma;
};

struct mcp_buffer {
	mcp::Buffer buf;
};

struct mcp_fence {
	mcp::Fence fence;
};

#endif // MCP_SRC_DMA_INTERNAL_HPP
