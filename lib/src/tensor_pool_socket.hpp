// SPDX-License-Identifier: LGPL-2.1-or-later
// The Unix socket under mcp::TensorPool: addresses ("@name" is abstract),
// an owning fd, and one protocol message per send/receive, with an fd
// passed alongside (SCM_RIGHTS) when asked.  Not installed.
#ifndef MCP_SRC_TENSOR_POOL_SOCKET_HPP
#define MCP_SRC_TENSOR_POOL_SOCKET_HPP

#include <string_view>
#include <utility>

#include <sys/socket.h>
#include <sys/un.h>

#include "tensor_pool_protocol.hpp"

namespace mcp::detail::pool {

// Closes its fd on destruction.  Move-only.
class OwnedFd {
public:
	OwnedFd() = default;
	explicit OwnedFd(int fd) noexcept : fd_(fd) {}
	OwnedFd(OwnedFd &&o) noexcept : fd_(std::exchange(o.fd_, -1)) {}
	OwnedFd &operator=(OwnedFd &&o) noexcept;
	~OwnedFd();

	int get() const noexcept { return fd_; }
	explicit operator bool() const noexcept { return fd_ >= 0; }

private:
	int fd_ = -1;
};

// The address of @path ("@name": abstract namespace).  Throws
// mcp::Error(EINVAL) for an empty path or one longer than sun_path.
struct SocketAddress {
	sockaddr_un addr{};
	socklen_t len = 0;
	bool abstract = false;
};
SocketAddress socket_address(std::string_view path);

// Sends @m, with @pass_fd as SCM_RIGHTS when >= 0, without blocking and
// without SIGPIPE.  0 or a negative errno.
int send_message(int sock, const Message &m, int pass_fd = -1) noexcept;

// Receives one message.  @flags are recvmsg(2)'s (MSG_DONTWAIT).  Returns
// 1 for a message (decode()'s result in @decoded: 0, -EBADMSG, -EPROTO),
// 0 when the peer closed, or a negative errno.  A passed fd lands in
// @received_fd when not nullptr, and is closed otherwise.
int receive_message(int sock, Message &m, int &decoded, int flags,
		    OwnedFd *received_fd = nullptr) noexcept;

} // namespace mcp::detail::pool

#endif // MCP_SRC_TENSOR_POOL_SOCKET_HPP
