// SPDX-License-Identifier: LGPL-2.1-or-later
// libmcp: the buffer memory of a process (C++), read from the fdinfo of
// its MCP context fds (kmod/mcp_fdinfo.c, DRM client usage keys).  Errors
// are mcp::Error as everywhere in libmcp.  Documentation/buffers.rst,
// "Where buffer memory shows", has the long form.
#ifndef MCP_MEMORY_HPP
#define MCP_MEMORY_HPP

#include <cstdint>
#include <optional>
#include <string_view>

#include <mcp/memory.h>
#include <mcp/mcp.hpp>

namespace mcp {

// The buffer memory of one process's MCP contexts.
struct BufferMemory {
	unsigned contexts = 0;		 // contexts with an fd in the process
	std::uint64_t system_bytes = 0;	 // kernel BOs (drm-total-system)
	std::uint64_t userptr_bytes = 0; // pinned user memory (drm-total-userptr)

	std::uint64_t total_bytes() const noexcept { return system_bytes + userptr_bytes; }
};

// One fdinfo file of an MCP context fd.
struct ContextUsage {
	std::uint64_t client_id = 0;
	std::uint64_t system_bytes = 0;
	std::uint64_t userptr_bytes = 0;
};

// The usage an fdinfo text reports, or nullopt when it is not an MCP
// context's ("drm-driver:\tmcp" and a drm-client-id missing).  Pure.
MCP_EXPORT std::optional<ContextUsage> parse_context_fdinfo(std::string_view text);

// The buffer memory of process @pid (0: the caller), every context counted
// once (by drm-client-id) however many of its fds it holds.  Throws
// mcp::Error: ESRCH for no such process, EACCES when its fds may not be
// read, another errno reading /proc.
MCP_EXPORT BufferMemory process_buffer_memory(int pid);

} // namespace mcp

#endif // MCP_MEMORY_HPP
