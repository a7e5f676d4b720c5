// SPDX-License-Identifier: LGPL-2.1-or-later
// The mcp::TensorPool client: attaches (hello, receives the memfd), maps
// the region with its control area, and turns alloc, free and stat into
// requests.  send() and receive() do not talk to the server: they move
// tensor ids through the queues of the control area (tensor_pool_shm.hpp)
// and wake a sleeping receiver with a futex.
#include <cerrno>
#include <cstring>
#include <thread>
#include <unordered_map>

#include <poll.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <mcp/tensor_pool.hpp>

#include "tensor_pool_shm.hpp"
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

Tensor tensor_of(const Message &m)
{
	Tensor t;

	t.id = m.arg[0];
	t.offset = m.arg[1];
	t.size = m.arg[2];
	t.capacity = m.arg[3];
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

// A request/reply connection.
struct Connection {
	std::string path;
	OwnedFd sock;
	std::uint32_t seq = 0;

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
		Message m = next(fd);

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

	// Whether the server closed the connection (it never writes first).
	bool closed() const
	{
		pollfd p{sock.get(), POLLIN, 0};

		return ::poll(&p, 1, 0) > 0;
	}
};

void cpu_relax() noexcept
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	asm volatile("yield");
#endif
}

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
	std::size_t len = 0;	// the slots
	std::size_t map_len = 0;	// the slots and the control area
	std::uint64_t slot_bytes = 0;
	std::uint32_t id = 0;
	bool hugepages = false;
	Shm shm;
	std::uint32_t index = 0;	// this client's queue
	std::uint64_t head = 0;		// the next position it consumes
	std::chrono::microseconds spin{0};
	std::unordered_map<std::uint32_t, int> peers;	// id -> table index, a hint

	~Impl()
	{
		if (base != MAP_FAILED)
			::munmap(base, map_len);
	}

	Error send_error(int errnum) const
	{
		return Error(errnum, request_error_message(conn.path,
							   static_cast<std::uint16_t>(MsgType::send), errnum));
	}
	std::optional<Tensor> take(std::uint64_t tensor, std::uint32_t slot, std::uint32_t from);
	std::optional<Tensor> dequeue();
};

// Makes tensor @tensor at @slot, sent by @from, this client's if the
// control area agrees; nullopt if not (a stale or corrupt entry, or the
// server reclaimed it first).
std::optional<Tensor> TensorPoolClient::Impl::take(std::uint64_t tensor, std::uint32_t slot,
						   std::uint32_t from)
{
	if (slot >= shm.layout.slots)
		return std::nullopt;
	SlotDesc &d = shm.desc(slot);
	std::uint64_t w = own_word(from, id);

	if (atomic(d.id).load(std::memory_order_acquire) != tensor ||
	    !atomic(d.own).compare_exchange_strong(w, own_word(id, 0), std::memory_order_acq_rel))
		return std::nullopt;
	const std::uint64_t size = atomic(d.size).load(std::memory_order_relaxed);
	const std::uint32_t n = atomic(d.nslots).load(std::memory_order_relaxed);
	if (atomic(d.id).load(std::memory_order_relaxed) != tensor || n == 0 ||
	    n > shm.layout.slots - slot || size == 0 || size > n * slot_bytes) {
		// Ours by the word, not by the descriptor: leave it as it was.
		w = own_word(id, 0);
		atomic(d.own).compare_exchange_strong(w, own_word(from, id), std::memory_order_acq_rel);
		return std::nullopt;
	}
	return Tensor{tensor, slot * slot_bytes, size, n * slot_bytes, from};
}

// The next tensor in this client's queue, or nullopt when it is empty (or
// its next entry is still being written by a live producer).  Entries a
// dead producer claimed and never committed are skipped; entries that do
// not check out are dropped.
std::optional<Tensor> TensorPoolClient::Impl::dequeue()
{
	ClientHead &me = shm.client(index);

	for (std::uint32_t n = 0; n <= shm.layout.depth; n++) {
		QueueEntry &e = shm.entry(index, head);
		std::uint64_t w = atomic(e.word).load(std::memory_order_acquire);
		const std::uint32_t claim = static_cast<std::uint32_t>(w);
		const std::uint32_t from = claim & ~entry_commit;
		const std::uint64_t next_lap = std::uint64_t{tag_of(head + shm.layout.depth)} << 32;

		if (static_cast<std::uint32_t>(w >> 32) != tag_of(head) || claim == 0)
			return std::nullopt;
		if (!(claim & entry_commit)) {
			if (shm.find_client(from) >= 0)
				return std::nullopt; // being written
			// Its producer died between claim and commit.
			if (!atomic(e.word).compare_exchange_strong(w, next_lap, std::memory_order_acq_rel))
				continue;
		} else {
			// Taken before the entry is freed: while the entry is there
			// the server leaves a dead sender's tensor in flight.
			std::optional<Tensor> t = take(atomic(e.tensor).load(std::memory_order_relaxed),
						       atomic(e.slot).load(std::memory_order_relaxed), from);

			atomic(e.word).store(next_lap, std::memory_order_release);
			atomic(me.head).store(++head, std::memory_order_relaxed);
			if (t)
				return t;
			continue;
		}
		atomic(me.head).store(++head, std::memory_order_relaxed);
	}
	return std::nullopt;
}

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

void TensorPoolClient::set_spin(std::chrono::microseconds spin) noexcept
{
	impl_->spin = spin.count() > 0 ? spin : std::chrono::microseconds(0);
}

std::chrono::microseconds TensorPoolClient::spin() const noexcept
{
	return impl_->spin;
}

Tensor TensorPoolClient::alloc(std::uint64_t bytes)
{
	return tensor_of(impl_->conn.request(make(MsgType::alloc, bytes)));
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

// Ownership first (owner -> owner with @peer in flight), then an entry in
// @peer's queue, then a wake-up if @peer sleeps.  A sender killed before
// the commit leaves a tensor the server reclaims and an entry its
// receiver skips.
void TensorPoolClient::send(const Tensor &t, std::uint32_t peer)
{
	Impl &c = *impl_;
	const Shm &shm = c.shm;

	if (t.offset % c.slot_bytes || t.offset / c.slot_bytes >= shm.layout.slots)
		throw c.send_error(ENOENT);
	const auto slot = static_cast<std::uint32_t>(t.offset / c.slot_bytes);
	SlotDesc &d = shm.desc(slot);
	if (t.id == 0 || atomic(d.id).load(std::memory_order_acquire) != t.id)
		throw c.send_error(ENOENT);

	auto hint = c.peers.find(peer);
	const int index = shm.find_client(peer, hint == c.peers.end() ? -1 : hint->second);
	if (index < 0)
		throw c.send_error(ESRCH);
	c.peers[peer] = index;

	const auto i = static_cast<std::uint32_t>(index);
	std::uint64_t w = own_word(c.id, 0);
	if (!atomic(d.own).compare_exchange_strong(w, own_word(c.id, peer), std::memory_order_acq_rel))
		throw c.send_error(EPERM);
	const std::int64_t pos = queue_claim(shm, i, c.id);
	if (pos < 0) {
		w = own_word(c.id, peer);
		atomic(d.own).compare_exchange_strong(w, own_word(c.id, 0), std::memory_order_acq_rel);
		throw c.send_error(EAGAIN);
	}
	queue_commit(shm, i, static_cast<std::uint64_t>(pos), c.id, t.id, slot);
	queue_wake(shm, i);
}

std::optional<Tensor> TensorPoolClient::receive(std::optional<std::chrono::milliseconds> timeout)
{
	using clock = std::chrono::steady_clock;
	Impl &c = *impl_;
	std::uint32_t &sleeping = c.shm.client(c.index).sleeping;
	const auto start = clock::now();
	const auto deadline = start + timeout.value_or(std::chrono::milliseconds(0));

	if (auto t = c.dequeue())
		return t;
	if (c.spin.count()) {
		const auto spin_end = start + c.spin;
		unsigned polls = 0;
		do {
			if (auto t = c.dequeue())
				return t;
			cpu_relax();
			// A sender on this CPU would wait for the spin to end.
			if (++polls % 64 == 0)
				::sched_yield();
		} while (clock::now() < spin_end);
	}
	for (;;) {
		// Dekker with queue_wake(): sleeping, then the queue; a producer
		// commits, then reads sleeping.
		atomic(sleeping).store(1, std::memory_order_relaxed);
		std::atomic_thread_fence(std::memory_order_seq_cst);
		if (auto t = c.dequeue()) {
			atomic(sleeping).store(0, std::memory_order_relaxed);
			return t;
		}
		// In slices, to notice a server that went away.
		auto slice = std::chrono::nanoseconds(std::chrono::milliseconds(100));
		if (timeout) {
			const auto left = deadline - clock::now();
			if (left.count() <= 0) {
				atomic(sleeping).store(0, std::memory_order_relaxed);
				return std::nullopt;
			}
			slice = std::min<std::chrono::nanoseconds>(slice, left);
		}
		const timespec ts{0, static_cast<long>(slice.count())};
		if (futex(&sleeping, FUTEX_WAIT, 1, &ts) < 0 && errno == ETIMEDOUT && c.conn.closed())
			throw c.conn.gone(0);
	}
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
	const auto slots = static_cast<std::uint32_t>(rep.arg[1]);
	const auto max_clients = static_cast<std::uint32_t>(rep.arg[4] >> 32);
	const auto depth = static_cast<std::uint32_t>(rep.arg[5] >> 32);

	impl->slot_bytes = rep.arg[0];
	impl->id = static_cast<std::uint32_t>(rep.arg[2]);
	impl->hugepages = rep.arg[3] != 0;
	impl->index = static_cast<std::uint32_t>(rep.arg[5]);
	impl->shm.layout = ShmLayout::of(slots, max_clients);
	struct stat st {};
	if (rep.arg[0] == 0 || rep.arg[1] == 0 || rep.arg[1] > UINT32_MAX ||
	    rep.arg[1] > SIZE_MAX / 2 / rep.arg[0] || max_clients == 0 ||
	    max_clients > max_max_clients || impl->index >= max_clients ||
	    depth != impl->shm.layout.depth || ::fstat(impl->memfd.get(), &st) < 0 ||
	    static_cast<std::uint64_t>(st.st_size) < rep.arg[0] * rep.arg[1] + impl->shm.layout.bytes)
		throw Error(EBADMSG, impl->conn.path + " announced a pool of impossible size");
	impl->len = static_cast<std::size_t>(rep.arg[0] * rep.arg[1]);
	impl->map_len = static_cast<std::size_t>(st.st_size);
	impl->base = ::mmap(nullptr, impl->map_len, PROT_READ | PROT_WRITE, MAP_SHARED,
			    impl->memfd.get(), 0);
	if (impl->base == MAP_FAILED)
		throw Error(errno, "cannot map the tensor pool at " + impl->conn.path + " (" +
					   std::to_string(impl->map_len) + " bytes): " + std::strerror(errno));
	impl->shm.base = static_cast<std::byte *>(impl->base) + impl->len;
	impl->head = atomic(impl->shm.client(impl->index).head).load(std::memory_order_relaxed);
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
