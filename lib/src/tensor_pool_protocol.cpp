// SPDX-License-Identifier: LGPL-2.1-or-later
// mcp::TensorPool's wire format and the sentences for its errors.
#include <cerrno>
#include <cstring>
#include <string>

#include <mcp/tensor_pool.hpp>

#include "tensor_pool_protocol.hpp"

namespace mcp::detail::pool {

namespace {

// Byte offsets on the wire.
constexpr std::size_t off_magic = 0;
constexpr std::size_t off_version = 4;
constexpr std::size_t off_type = 6;
constexpr std::size_t off_seq = 8;
constexpr std::size_t off_status = 12;
constexpr std::size_t off_arg = 16;
static_assert(TensorPool::protocol_version == protocol_version);
static_assert(off_arg + 6 * sizeof(std::uint64_t) == message_size);

template <typename T> void put(Wire &w, std::size_t off, T v) noexcept
{
	std::memcpy(w.data() + off, &v, sizeof(v));
}

template <typename T> T get(std::span<const std::byte> b, std::size_t off) noexcept
{
	T v;

	std::memcpy(&v, b.data() + off, sizeof(v));
	return v;
}

} // namespace

Wire encode(const Message &m) noexcept
{
	Wire w{};

	put(w, off_magic, magic);
	put(w, off_version, m.version);
	put(w, off_type, m.type);
	put(w, off_seq, m.seq);
	put(w, off_status, m.status);
	for (std::size_t i = 0; i < m.arg.size(); i++)
		put(w, off_arg + i * sizeof(std::uint64_t), m.arg[i]);
	return w;
}

int decode(std::span<const std::byte> bytes, Message &out) noexcept
{
	if (bytes.size() != message_size || get<std::uint32_t>(bytes, off_magic) != magic)
		return -EBADMSG;
	out.version = get<std::uint16_t>(bytes, off_version);
	out.type = get<std::uint16_t>(bytes, off_type);
	out.seq = get<std::uint32_t>(bytes, off_seq);
	out.status = get<std::int32_t>(bytes, off_status);
	for (std::size_t i = 0; i < out.arg.size(); i++)
		out.arg[i] = get<std::uint64_t>(bytes, off_arg + i * sizeof(std::uint64_t));
	return out.version == protocol_version ? 0 : -EPROTO;
}

std::string_view type_name(std::uint16_t type) noexcept
{
	switch (static_cast<MsgType>(type & ~reply_bit)) {
	case MsgType::hello:
		return "hello";
	case MsgType::alloc:
		return "alloc";
	case MsgType::free:
		return "free";
	case MsgType::send:
		return "send";
	case MsgType::stat:
		return "stat";
	}
	return "unknown";
}

std::string version_mismatch_message(std::string_view path, unsigned server_version)
{
	return "the tensor pool at " + std::string(path) + " speaks protocol version " +
	       std::to_string(server_version) + " but this libmcp speaks version " +
	       std::to_string(protocol_version) +
	       ": serve and attach with the same MCP release";
}

std::string request_error_message(std::string_view path, std::uint16_t type, int errnum)
{
	const std::string what = std::string(type_name(type)) + " on the tensor pool at " +
				 std::string(path);

	switch (errnum) {
	case ENOSPC:
		return what + " failed: the pool is full (no run of free slots that large); free "
			      "tensors or serve a bigger pool (mcpctl pool serve --size, --slots)";
	case E2BIG:
		return what + " failed: the request is larger than the whole pool; serve a bigger "
			      "pool (mcpctl pool serve --size)";
	case EINVAL:
		return what + " failed: a tensor of 0 bytes cannot be allocated";
	case ENOENT:
		return what + " failed: no such tensor (freed already, handed off, or never "
			      "allocated)";
	case EPERM:
		return what + " failed: the tensor belongs to another client";
	case ESRCH:
		return what + " failed: no client with that id is attached to the pool";
	case EAGAIN:
		return what + " failed: the receiving client's queue is full (it does not "
			      "receive); try again";
	case EUSERS:
		return what + " failed: the pool has as many clients attached as it was served "
			      "for; detach one or serve it with more (mcpctl pool serve --clients)";
	case EBADMSG:
		return what + " failed: the server did not understand the request (malformed "
			      "message)";
	case ENOTCONN:
		return what + " failed: the client has not attached (hello) yet";
	default:
		return what + " failed: " + std::strerror(errnum);
	}
}

} // namespace mcp::detail::pool
