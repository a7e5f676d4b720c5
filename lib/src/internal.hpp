// SPDX-License-Identifier: LGPL-2.1-or-later
// libmcp internals: the pure functions behind the public API, kept apart
// from the ioctl calls so that tests/unit can run them on synthetic data.
// Not installed; hidden from the shared library's symbol table.
#ifndef MCP_SRC_INTERNAL_HPP
#define MCP_SRC_INTERNAL_HPP

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>

#include <linux/mcp.h>

#include <mcp/mcp.hpp>

namespace mcp::detail {

// The message for a failed open(2) of @path with @errnum.
std::string open_error_message(int errnum, std::string_view path);

// The message for a failed ioctl @ioctl_name on @path with @errnum.
std::string ioctl_error_message(int errnum, std::string_view path,
				std::string_view ioctl_name);

// Empty if a library speaking ABI @lib_major.@lib_minor can talk to a module
// speaking @mod_major.@mod_minor, otherwise the message explaining why not.
std::string abi_mismatch_message(std::uint32_t lib_major, std::uint32_t lib_minor,
				 std::uint32_t mod_major, std::uint32_t mod_minor);

// Throws mcp::Error(EPROTO) with abi_mismatch_message() unless @module is
// compatible with this library's ABI (mcp::abi_major).
void check_abi(const Version &module);

// The Version of what MCP_IOC_GET_VERSION wrote into @raw.
Version decode_version(const struct mcp_version &raw);

// Issues MCP_IOC_GET_VERSION on @fd.  Throws mcp::Error.
Version read_version(int fd, std::string_view path);

// Builds a Topology from the arrays MCP_IOC_GET_TOPOLOGY filled:
// @nodes (nr_nodes entries), @cpumasks (nr_nodes rows of @cpu_words words),
// @distances (nr_nodes x nr_nodes, row-major).  Throws mcp::Error(EPROTO)
// when the arrays are inconsistent (too short, duplicate node ids).
Topology decode_topology(std::span<const struct mcp_node_info> nodes,
			 std::span<const std::uint64_t> cpumasks,
			 std::uint32_t cpu_words,
			 std::span<const std::uint32_t> distances,
			 std::uint32_t cpus_online, std::uint32_t nr_cpu_ids);

// One MCP_IOC_GET_TOPOLOGY call: 0 or a negative errno.  The real one is
// ioctl(2); tests pass a fake kernel.
using TopologyIoctl = std::function<int(struct mcp_topology &)>;

// Reads the topology through @call: asks for the sizes, allocates and
// retries while the kernel answers -ENOSPC (at most @max_attempts calls,
// then EAGAIN).  @path names the device in messages.  Throws mcp::Error.
Topology fetch_topology(const TopologyIoctl &call, std::string_view path,
			int max_attempts = 8);

// fetch_topology() with ioctl(2) on @fd.
Topology read_topology(int fd, std::string_view path);

// Wraps @topo in a C API handle (for tests of the C accessors).
struct mcp_topo *make_c_topology(Topology topo);

} // namespace mcp::detail

#endif // MCP_SRC_INTERNAL_HPP
