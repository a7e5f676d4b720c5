// SPDX-License-Identifier: LGPL-2.1-or-later
// Sockets, addresses and fd passing for mcp::TensorPool.
#include <cerrno>
#include <cstddef>
#include <cstring>
#include <string>

#include <unistd.h>

#include <mcp/mcp.hpp>

#include "tensor_pool_socket.hpp"

namespace mcp::detail::pool {

OwnedFd &OwnedFd::operator=(OwnedFd &&o) noexcept
{
	if (this != &o) {
		if (fd_ >= 0)
			::close(fd_);
		fd_ = std::exchange(o.fd_, -1);
	}
	return *this;
}

OwnedFd::~OwnedFd()
{
	if (fd_ >= 0)
		::close(fd_);
}

SocketAddress socket_address(std::string_view path)
{
	SocketAddress a;
	const bool abstract = !path.empty() && path[0] == '@';
	const std::string_view name = abstract ? path.substr(1) : path;

	// A path needs its NUL; an abstract name starts after a NUL byte.
	if (name.empty() || name.size() + 1 > sizeof(a.addr.sun_path))
		throw Error(EINVAL, "'" + std::string(path) + "' is not a usable socket address: give a "
				    "path or @name of 1 to " + std::to_string(sizeof(a.addr.sun_path) - 1) +
				    " characters");
	a.addr.sun_family = AF_UNIX;
	std::memcpy(a.addr.sun_path + (abstract ? 1 : 0), name.data(), name.size());
	a.len = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + name.size() + 1);
	a.abstract = abstract;
	return a;
}

int send_message(int sock, const Message &m, int pass_fd) noexcept
{
	Wire w = encode(m);
	iovec iov{w.data(), w.size()};
	msghdr msg{};
	alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};

	msg.msg_iov = &iov;
	msg.msg_iovlen = 1;
	if (pass_fd >= 0) {
		msg.msg_control = control;
		msg.msg_controllen = sizeof(control);
		cmsghdr *c = CMSG_FIRSTHDR(&msg);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int));
		std::memcpy(CMSG_DATA(c), &pass_fd, sizeof(int));
	}
	for (;;) {
		ssize_t n = ::sendmsg(sock, &msg, MSG_DONTWAIT | MSG_NOSIGNAL);

		if (n == static_cast<ssize_t>(w.size()))
			return 0;
		if (n >= 0)
			return -EMSGSIZE; // cannot happen on SOCK_SEQPACKET
		if (errno != EINTR)
			return -errno;
	}
}

int receive_message(int sock, Message &m, int &decoded, int flags, OwnedFd *received_fd) noexcept
{
	// One byte more than a message, so that a longer one shows.
	std::byte buf[message_size + 1];
	iovec iov{buf, sizeof(buf)};
	msghdr msg{};
	alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
	ssize_t n;

	msg.msg_iov = &iov;
	msg.msg_iovlen = 1;
	msg.msg_control = control;
	msg.msg_controllen = sizeof(control);
	do
		n = ::recvmsg(sock, &msg, flags | MSG_CMSG_CLOEXEC);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	for (cmsghdr *c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c)) {
		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
			continue;
		const std::size_t nfds = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (std::size_t i = 0; i < nfds; i++) {
			int fd;

			std::memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
			if (received_fd && i == 0)
				*received_fd = OwnedFd(fd);
			else
				::close(fd);
		}
	}
	if (n == 0)
		return 0;
	decoded = (msg.msg_flags & MSG_TRUNC) ? -EBADMSG
					      : decode({buf, static_cast<std::size_t>(n)}, m);
	return 1;
}

} // namespace mcp::detail::pool
