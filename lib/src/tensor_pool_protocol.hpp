// SPDX-License-Identifier: LGPL-2.1-or-later
// The wire protocol of mcp::TensorPool (Documentation/tensor-pool.rst):
// fixed-size messages over a SOCK_SEQPACKET Unix socket, in host byte
// order (both ends are on one host).  Not installed.
#ifndef MCP_SRC_TENSOR_POOL_PROTOCOL_HPP
#define MCP_SRC_TENSOR_POOL_PROTOCOL_HPP

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace mcp::detail::pool {

inline constexpr std::uint32_t magic = 0x5050434d;	// "MCPP"
inline constexpr std::uint16_t protocol_version = 2;
inline constexpr std::size_t message_size = 64;

// Message types.  A reply carries its request's type with reply_bit set.
enum class MsgType : std::uint16_t {
	hello = 1,	// attach; the reply carries the region's memfd (SCM_RIGHTS)
	alloc = 2,
	free = 3,
	send = 4,	// not a request: names send() in its errors
	stat = 5,
};
inline constexpr std::uint16_t reply_bit = 0x8000;

// One message.  The meaning of arg[] per type:
//   hello reply:	slot_bytes, slots, client id, hugepages,
//			server version | max clients << 32,
//			client table index | queue depth << 32
//   alloc:		bytes -> reply id, offset, size, capacity
//   free:		id
//   stat reply:	slot_bytes, slots, slots used, clients, tensors, hugepages
// Any reply with status -EPROTO has the server's version in arg[5]; the
// server then closes the connection.  Requests other than hello and stat
// before hello get -ENOTCONN.
struct Message {
	std::uint16_t version = protocol_version;
	std::uint16_t type = 0;
	std::uint32_t seq = 0;		// echoed by the reply
	std::int32_t status = 0;	// replies: 0 or a negative errno
	std::array<std::uint64_t, 6> arg{};
};

using Wire = std::array<std::byte, message_size>;

Wire encode(const Message &m) noexcept;

// 0, -EBADMSG (not @message_size bytes, or no magic), or -EPROTO (another
// protocol version; @out is filled all the same, so its version is known).
int decode(std::span<const std::byte> bytes, Message &out) noexcept;

// "hello", "alloc", ...; "unknown" for other values.  reply_bit is ignored.
std::string_view type_name(std::uint16_t type) noexcept;

// The sentence for a version mismatch between this library and the pool
// at @path that speaks @server_version.
std::string version_mismatch_message(std::string_view path, unsigned server_version);

// The sentence for a request of type @type that the server at @path
// refused with -@errnum.
std::string request_error_message(std::string_view path, std::uint16_t type, int errnum);

} // namespace mcp::detail::pool

#endif // MCP_SRC_TENSOR_POOL_PROTOCOL_HPP
