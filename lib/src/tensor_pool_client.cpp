// SPDX-License-Identifier: LGPL-2.1-or-later
// The mcp::TensorPool client: attaches (hello, receives the memfd), maps
// the region and turns requests into replies.  Tensors handed to this
// client can arrive while it waits for a reply; they are queued for
// receive().
#include <cerrno>
#include <cstring>
#include <deque>

#include <poll.h>
#include <sys/mman.h>
#include <unistd.h>

#include <mcp/tensor_pool.hpp>

#include "tensor_pool_socket.hpp"

namespace mcp {

using namespace detail::pool;

namespace {

std::string connect_error_message(int errnum, std::string_view path)
{
	const std::string p(path);

	switch (errnum) {
	case ENOENT:
	case ECONNREFUSED:
		return "no tensor pool is served at " + p + ": start one with 'mcpctl pool serve " + p + "'";
	case EACCES:
	case EPERM:
		return "permission denied connecting to the tensor pool at " + p +
		       ": ask its owner for access to the socket, or run as its user";
	case EPROTOTYPE:
		return p + " is a socket but not a tensor pool (not SOCK_SEQPACKET)";
	default:
		return "cannot connect to the tensor pool at " + p + ": " + std::strerror(errnum);
	}
}

Tensor tensor_of(const Message &m, bool received)
{
	Tensor t;

	t.id = m.arg[0];
	t.offset = m.arg[1];
	t.size = m.arg[2];
	t.capacity = m.arg[3];
	t.from = received ? static_cast<std::uint32_t>(m.arg[4]) : 0;
	return t;
}

PoolStat stat_of(const Message &m)
{
	PoolStat s;

	s.slot_bytes = m.arg[0];
	s.slots = static_cast<std::uint32_t>(m.arg[1]);
	s.slots_used = static_cast<std::uint32_t>(m.arg[2]);
	s.clients = static_cast<std::uint32_t>(m.arg[3]);
	s.tensors = static_cast<std::uint32_t>(m.arg[4]);
	s.hugepages = m.arg[5] != 0;
	return s;
}

// A connected socket, or mcp::Error.
OwnedFd connect_pool(std::string_view path)
{
	const SocketAddress a = socket_address(path);
	OwnedFd sock(::socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0));

	if (!sock)
		throw Error(errno, "cannot create a Unix socket: " + std::string(std::strerror(errno)));
	if (::connect(sock.get(), reinterpret_cast<const sockaddr *>(&a.addr), a.len) < 0)
		throw Error(errno, connect_error_message(errno, path));
	return sock;
}

// A request/reply connection.  Tensors handed over meanwhile go to @pending.
struct Connection {
	std::string path;
	OwnedFd sock;
	std::uint32_t seq = 0;
	std::deque<Tensor> pending;

	Error gone(int errnum) const
	{
		return Error(errnum == 0 ? ECONNRESET : errnum,
			     "the tensor pool server at " + path + " went away" +
				     (errnum ? std::string(" (") + std::strerror(errnum) + ")" : "") +
				     ": serve it again and attach again");
	}

	// Receives one message, blocking; throws when the server is gone.
	Message next(OwnedFd *fd = nullptr)
	{
		Message m;
		int decoded = 0;
		int n = receive_message(sock.get(), m, decoded, 0, fd);

		if (n <= 0)
			throw gone(-n);
		if (decoded == -EBADMSG)
			throw Error(EBADMSG, path + " sent a message that is not the tensor pool protocol");
		if (decoded == -EPROTO)
			throw Error(EPROTO, version_mismatch_message(path, m.version));
		return m;
	}

	// Sends @req and returns its reply; a refusal throws.
	Message request(Message req, OwnedFd *fd = nullptr)
	{
		req.seq = ++seq;
		int err;
		while ((err = send_message(sock.get(), req)) == -EAGAIN) {
			pollfd p{sock.get(), POLLOUT, 0};
			::poll(&p, 1, -1);
		}
		if (err)
			throw gone(-err);
		for (;;) {
			Message m = next(fd);

			if (m.type == static_cast<std::uint16_t>(MsgType::received)) {
				pending.push_back(tensor_of(m, true));
				continue;
			}
			if (m.status == -EPROTO)
				throw Error(EPROTO, version_mismatch_message(path, static_cast<unsigned>(m.arg[5])));
			if (m.status < 0)
				throw Error(-m.status, request_error_message(path, req.type, -m.status));
			if (m.seq != req.seq || m.type != (req.type | reply_bit))
				throw Error(EBADMSG, path + " answered " + std::string(type_name(m.type)) +
							     " to a " + std::string(type_name(req.type)) +
							     " request: not a tensor pool this libmcp understands");
			return m;
		}
	}
};

Message make(MsgType type, std::uint64_t a0 = 0, std::uint64_t a1 = 0)
{
	Message m;

	m.type = static_cast<std::uint16_t>(type);
	m.arg[0] = a0;
	m.arg[1] = a1;
	return m;
}

} // namespace

struct TensorPoolClient::Impl {
	Connection conn;
	OwnedFd memfd;
	void *base = MAP_FAILED;
	std::size_t len = 0;
	std::uint64_t slot_bytes = 0;
	std::uint32_t id = 0;
	bool hugepages = false;

	~Impl()
	{
		if (base != MAP_FAILED)
			::munmap(base, len);
	}
};

TensorPoolClient::TensorPoolClient(std::unique_ptr<Impl> impl) noexcept : impl_(std::move(impl)) {}
TensorPoolClient::TensorPoolClient(TensorPoolClient &&) noexcept = default;
TensorPoolClient &TensorPoolClient::operator=(TensorPoolClient &&) noexcept = default;
TensorPoolClient::~TensorPoolClient() = default;

std::uint32_t TensorPoolClient::id() const noexcept
{
	return impl_->id;
}

const std::string &TensorPoolClient::path() const noexcept
{
	return impl_->conn.path;
}

bool TensorPoolClient::hugepages() const noexcept
{
	return impl_->hugepages;
}

std::uint64_t TensorPoolClient::slot_bytes() const noexcept
{
	return impl_->slot_bytes;
}

std::span<std::byte> TensorPoolClient::region() const noexcept
{
	return {static_cast<std::byte *>(impl_->base), impl_->len};
}

int TensorPoolClient::memfd() const noexcept
{
	return impl_->memfd.get();
}

Tensor TensorPoolClient::alloc(std::uint64_t bytes)
{
	return tensor_of(impl_->conn.request(make(MsgType::alloc, bytes)), false);
}

void TensorPoolClient::free(const Tensor &t)
{
	impl_->conn.request(make(MsgType::free, t.id));
}

std::span<std::byte> TensorPoolClient::span(const Tensor &t) const
{
	if (t.offset > impl_->len || t.size > impl_->len - t.offset)
		throw Error(ERANGE, "tensor " + std::to_string(t.id) + " (" + std::to_string(t.size) +
					    " bytes at " + std::to_string(t.offset) +
					    ") lies outside the pool's region of " +
					    std::to_string(impl_->len) + " bytes: it is not from this pool");
	return region().subspan(t.offset, t.size);
}

void TensorPoolClient::send(const Tensor &t, std::uint32_t peer)
{
	impl_->conn.request(make(MsgType::send, t.id, peer));
}

std::optional<Tensor> TensorPoolClient::receive(std::optional<std::chrono::milliseconds> timeout)
{
	using clock = std::chrono::steady_clock;
	Connection &c = impl_->conn;
	const auto deadline = clock::now() + timeout.value_or(std::chrono::milliseconds(0));

	while (c.pending.empty()) {
		int wait_ms = -1;

		if (timeout) {
			auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - clock::now());
			if (left.count() <= 0)
				return std::nullopt;
			wait_ms = static_cast<int>(std::min<std::int64_t>(left.count(), INT32_MAX));
		}
		pollfd p{c.sock.get(), POLLIN, 0};
		int n = ::poll(&p, 1, wait_ms);
		if (n < 0 && errno != EINTR)
			throw Error(errno, "waiting for a tensor from " + c.path + ": " + std::strerror(errno));
		if (n <= 0)
			continue;
		Message m = c.next();
		if (m.type != static_cast<std::uint16_t>(MsgType::received))
			throw Error(EBADMSG, c.path + " sent a reply nobody asked for: not a tensor pool "
						   "this libmcp understands");
		c.pending.push_back(tensor_of(m, true));
	}
	Tensor t = c.pending.front();
	c.pending.pop_front();
	return t;
}

PoolStat TensorPoolClient::stat()
{
	return stat_of(impl_->conn.request(make(MsgType::stat)));
}

TensorPoolClient TensorPool::attach(std::string_view path)
{
	auto impl = std::make_unique<TensorPoolClient::Impl>();

	impl->conn.path = std::string(path);
	impl->conn.sock = connect_pool(path);

	Message rep = impl->conn.request(make(MsgType::hello), &impl->memfd);
	if (!impl->memfd)
		throw Error(EBADMSG, impl->conn.path + " accepted the attach but passed no memory (no "
						       "SCM_RIGHTS fd): not a tensor pool");
	impl->slot_bytes = rep.arg[0];
	impl->id = static_cast<std::uint32_t>(rep.arg[2]);
	impl->hugepages = rep.arg[3] != 0;
	if (rep.arg[0] == 0 || rep.arg[1] > SIZE_MAX / rep.arg[0])
		throw Error(EBADMSG, impl->conn.path + " announced a pool of impossible size");
	impl->len = static_cast<std::size_t>(rep.arg[0] * rep.arg[1]);
	impl->base = ::mmap(nullptr, impl->len, PROT_READ | PROT_WRITE, MAP_SHARED, impl->memfd.get(), 0);
	if (impl->base == MAP_FAILED)
		throw Error(errno, "cannot map the tensor pool at " + impl->conn.path + " (" +
					   std::to_string(impl->len) + " bytes): " + std::strerror(errno));
	return TensorPoolClient(std::move(impl));
}

PoolStat TensorPool::stat(std::string_view path)
{
	Connection c;

	c.path = std::string(path);
	c.sock = connect_pool(path);
	return stat_of(c.request(make(MsgType::stat)));
}

} // namespace mcp
