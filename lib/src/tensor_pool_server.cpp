// SPDX-License-Identifier: LGPL-2.1-or-later
// The mcp::TensorPool server: one memfd region cut into slots followed by
// the control area (tensor_pool_shm.hpp), a listening SOCK_SEQPACKET
// socket, and a thread that attaches clients, allocates and frees, and
// reclaims the tensors of clients that go away.  Hand-offs do not pass
// through it: clients move tensors with the queues of the control area,
// and the server reads ownership from there.
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <map>
#include <mutex>
#include <thread>
#include <vector>

#include <linux/memfd.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <unistd.h>

#include <mcp/tensor_pool.hpp>

#include "tensor_pool_shm.hpp"
#include "tensor_pool_socket.hpp"

namespace mcp {

using namespace detail::pool;

namespace {

constexpr std::uint64_t huge_page = 2ULL << 20;

std::string sys_error(std::string_view what, int errnum)
{
	return std::string(what) + ": " + std::strerror(errnum);
}

void default_warn(const std::string &text)
{
	static std::once_flag once;

	std::call_once(once, [&] { std::fprintf(stderr, "libmcp: warning: %s\n", text.c_str()); });
}

// Whether the socket file at @path is left by a server that died (nobody
// answers); it is removed if so.
bool stale_socket(const SocketAddress &address, const std::string &path)
{
	OwnedFd probe(::socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0));

	return probe &&
	       ::connect(probe.get(), reinterpret_cast<const sockaddr *>(&address.addr), address.len) < 0 &&
	       errno == ECONNREFUSED && ::unlink(path.c_str()) == 0;
}

// The number in /proc/sys/vm/nr_hugepages, or -1.
long reserved_hugepages()
{
	long n = -1;

	if (std::FILE *f = std::fopen("/proc/sys/vm/nr_hugepages", "re")) {
		if (std::fscanf(f, "%ld", &n) != 1)
			n = -1;
		std::fclose(f);
	}
	return n;
}

// The region: a memfd, mapped here so that the huge pages are reserved
// for as long as the server lives.
struct Region {
	OwnedFd fd;
	void *base = MAP_FAILED;
	std::size_t len = 0;
	bool hugepages = false;
	std::string warning;

	Region() = default;
	Region(const Region &) = delete;
	Region &operator=(const Region &) = delete;
	~Region()
	{
		if (base != MAP_FAILED)
			::munmap(base, len);
	}
};

// A mapped memfd of @len bytes with @flags; the errno on failure.
int map_memfd(Region &r, std::size_t len, unsigned flags)
{
	OwnedFd fd(::memfd_create("mcp-tensor-pool", MFD_CLOEXEC | flags));

	if (!fd)
		return errno;
	if (::ftruncate(fd.get(), static_cast<off_t>(len)) < 0)
		return errno;
	// hugetlbfs reserves the pages here: ENOMEM when too few are free.
	void *p = ::mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd.get(), 0);
	if (p == MAP_FAILED)
		return errno;
	r.fd = std::move(fd);
	r.base = p;
	r.len = len;
	return 0;
}

std::uint64_t round_up(std::uint64_t v, std::uint64_t to)
{
	return (v + to - 1) / to * to;
}

// Fills @r: the slots and then @control bytes, in huge pages unless @o
// says no or none are free.
void create_region(Region &r, const PoolOptions &o, std::size_t control)
{
	const auto page = static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE));
	int err;

	if (o.no_hugepages) {
		r.warning = "huge pages disabled for this pool (no_hugepages): it uses normal pages";
	} else if (o.region_bytes % huge_page) {
		r.warning = "the pool's size is not a multiple of 2 MiB, so it uses normal pages";
	} else {
		const std::uint64_t total = o.region_bytes + round_up(control, huge_page);

		err = map_memfd(r, total, MFD_HUGETLB | MFD_HUGE_2MB);
		if (!err) {
			r.hugepages = true;
			return;
		}
		r.warning = "no 2 MiB huge pages for the tensor pool (" + sys_error("memfd", err) +
			    "), so it uses normal pages: it needs " +
			    std::to_string(total / huge_page) +
			    " free ones; raise /proc/sys/vm/nr_hugepages (now " +
			    std::to_string(reserved_hugepages()) + ") by that many";
	}
	err = map_memfd(r, o.region_bytes + round_up(control, page), 0);
	if (err)
		throw Error(err, sys_error("cannot create the tensor pool's memory (" +
					   std::to_string(o.region_bytes) + " bytes)", err));
}

// The server's own books of a tensor (the control area's copy is only
// read back for ownership).
struct TensorRecord {
	std::uint32_t first_slot = 0;
	std::uint32_t nslots = 0;
	std::uint64_t size = 0;
};

struct ClientRecord {
	OwnedFd sock;
	bool attached = false;
	bool closing = false;	// disconnect after this round
	std::uint32_t index = 0;	// in the control area's table, once attached
};

void check_options(const PoolOptions &o)
{
	const long page = ::sysconf(_SC_PAGESIZE);

	if (o.slots == 0 || o.region_bytes == 0 || o.region_bytes % o.slots ||
	    (o.region_bytes / o.slots) % static_cast<std::uint64_t>(page))
		throw Error(EINVAL, "a tensor pool of " + std::to_string(o.region_bytes) + " bytes in " +
				    std::to_string(o.slots) + " slots is not possible: the size must "
				    "divide into that many slots of whole pages (" +
				    std::to_string(page) + " bytes)");
	if (o.max_clients == 0 || o.max_clients > max_max_clients)
		throw Error(EINVAL, "a tensor pool for " + std::to_string(o.max_clients) +
				    " clients is not possible: 1 to " + std::to_string(max_max_clients));
}

} // namespace

struct TensorPoolServer::Impl {
	std::string path;
	SocketAddress address;
	Region region;
	std::uint64_t slot_bytes = 0;
	Shm shm;	// the control area, after the slots
	OwnedFd listener;
	OwnedFd stop;	// eventfd: the destructor's stop request

	mutable std::mutex lock;	// the state below, against stat()
	std::vector<std::uint64_t> slot_owner;	// tensor id per slot, 0 free
	std::map<std::uint64_t, TensorRecord> tensors;
	std::map<std::uint32_t, ClientRecord> clients;
	std::vector<std::uint32_t> index_client;	// the client table as it must be
	std::uint64_t next_tensor = 1;
	std::uint32_t next_client = 1;

	std::thread thread;

	void write_header() const;
	void init_shm();
	void bind_socket();
	void serve();
	void accept_clients();
	void handle(std::uint32_t client, ClientRecord &c);
	Message answer(std::uint32_t client, ClientRecord &c, const Message &req, int &pass_fd);
	void hello(std::uint32_t client, ClientRecord &c, Message &rep);
	void alloc(std::uint32_t client, const Message &req, Message &rep);
	int free(std::uint32_t client, std::uint64_t id);
	void release(std::map<std::uint64_t, TensorRecord>::iterator it);
	bool live(std::uint32_t client) const;
	bool queued(std::uint32_t to, std::uint32_t from, std::uint64_t id) const;
	void reclaim();
	void repair() const;
	void wake_all() const;
	void drop(std::uint32_t client);
	PoolStat stat_locked() const;
	~Impl();
};

void TensorPoolServer::Impl::write_header() const
{
	ShmHeader &h = shm.header();

	h = {};
	h.magic = shm_magic;
	h.version = shm_version;
	h.slots = shm.layout.slots;
	h.max_clients = shm.layout.max_clients;
	h.depth = shm.layout.depth;
	h.slot_bytes = slot_bytes;
	h.desc_offset = shm.layout.desc_offset;
	h.clients_offset = shm.layout.clients_offset;
	h.client_stride = shm.layout.client_stride;
}

void TensorPoolServer::Impl::init_shm()
{
	write_header();
	for (std::uint32_t i = 0; i < shm.layout.max_clients; i++)
		shm.reset_queue(i);
	index_client.assign(shm.layout.max_clients, 0);
}

void TensorPoolServer::Impl::bind_socket()
{
	const auto *sa = reinterpret_cast<const sockaddr *>(&address.addr);
	int err = 0;

	listener = OwnedFd(::socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
	if (!listener)
		throw Error(errno, sys_error("cannot create a Unix socket", errno));
	if (::bind(listener.get(), sa, address.len) < 0)
		err = errno;
	if (err == EADDRINUSE && !address.abstract && stale_socket(address, path))
		err = ::bind(listener.get(), sa, address.len) < 0 ? errno : 0;
	if (err == EADDRINUSE)
		throw Error(EADDRINUSE, "a tensor pool (or another program) already listens at " + path +
					": stop it or pick another path");
	if (err)
		throw Error(err, sys_error("cannot bind the tensor pool socket " + path, err));
	if (::listen(listener.get(), 64) < 0) {
		err = errno;
		::unlink(path.c_str());
		throw Error(err, sys_error("cannot listen on " + path, err));
	}
}

void TensorPoolServer::Impl::accept_clients()
{
	for (;;) {
		int fd = ::accept4(listener.get(), nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);

		if (fd < 0)
			return; // EAGAIN, or a connection that died before accept
		std::lock_guard<std::mutex> g(lock);
		clients[next_client++].sock = OwnedFd(fd);
	}
}

// Whether @client is attached (the ids in the control area are not
// trusted: any client can write them).
bool TensorPoolServer::Impl::live(std::uint32_t client) const
{
	auto it = clients.find(client);

	return it != clients.end() && it->second.attached && !it->second.closing;
}

void TensorPoolServer::Impl::release(std::map<std::uint64_t, TensorRecord>::iterator it)
{
	SlotDesc &d = shm.desc(it->second.first_slot);

	atomic(d.id).store(0, std::memory_order_release);
	d.size = 0;
	d.nslots = 0;
	for (std::uint32_t s = 0; s < it->second.nslots; s++)
		slot_owner[it->second.first_slot + s] = 0;
	tensors.erase(it);
}

// Whether queue @to holds a committed entry of tensor @id from @from.
bool TensorPoolServer::Impl::queued(std::uint32_t to, std::uint32_t from, std::uint64_t id) const
{
	const std::uint32_t index = clients.at(to).index;

	for (std::uint64_t p = 0; p < shm.layout.depth; p++) {
		QueueEntry &e = shm.entry(index, p);
		if (static_cast<std::uint32_t>(atomic(e.word).load(std::memory_order_acquire)) ==
			    (from | entry_commit) &&
		    atomic(e.tensor).load(std::memory_order_relaxed) == id)
			return true;
	}
	return false;
}

// Frees every tensor whose owner is not attached, unless it is committed to
// the queue of an attached receiver (which then takes it), and every
// tensor in flight to a receiver that is not attached: those of dead
// clients, sent to dead clients, or whose ownership word was scribbled
// over.  A receiver that takes one at the same moment and this race on
// one compare-and-swap.
void TensorPoolServer::Impl::reclaim()
{
	for (auto it = tensors.begin(); it != tensors.end();) {
		auto next = std::next(it);
		auto own = atomic(shm.desc(it->second.first_slot).own);
		std::uint64_t w = own.load(std::memory_order_acquire);
		const std::uint32_t owner = own_owner(w), to = own_to(w);
		const bool orphan = live(owner) ? to && !live(to)
						: !(to && live(to) && queued(to, owner, it->first));

		if (orphan && own.compare_exchange_strong(w, 0, std::memory_order_acq_rel))
			release(it);
		it = next;
	}
}

// Rewrites the client ids and the header in the control area if a client
// scribbled over them: senders look their peers up there.
void TensorPoolServer::Impl::repair() const
{
	ShmHeader &h = shm.header();

	for (std::uint32_t i = 0; i < index_client.size(); i++) {
		auto id = atomic(shm.client(i).id);
		if (id.load(std::memory_order_relaxed) != index_client[i])
			id.store(index_client[i], std::memory_order_release);
	}
	if (h.magic != shm_magic || h.version != shm_version || h.slots != shm.layout.slots ||
	    h.max_clients != shm.layout.max_clients || h.depth != shm.layout.depth ||
	    h.slot_bytes != slot_bytes || h.desc_offset != shm.layout.desc_offset ||
	    h.clients_offset != shm.layout.clients_offset ||
	    h.client_stride != shm.layout.client_stride)
		write_header();
}

// Wakes every receiver, so that one waiting behind an entry a dead client
// claimed skips it.
void TensorPoolServer::Impl::wake_all() const
{
	for (const auto &[id, c] : clients) {
		if (!c.attached)
			continue;
		std::uint32_t &sleeping = shm.client(c.index).sleeping;
		atomic(sleeping).store(0, std::memory_order_seq_cst);
		futex(&sleeping, FUTEX_WAKE, INT32_MAX, nullptr);
	}
}

void TensorPoolServer::Impl::drop(std::uint32_t client)
{
	auto it = clients.find(client);

	if (it == clients.end())
		return;
	if (it->second.attached) {
		atomic(shm.client(it->second.index).id).store(0, std::memory_order_release);
		index_client[it->second.index] = 0;
	}
	clients.erase(it);
	reclaim();
	wake_all();
}

void TensorPoolServer::Impl::hello(std::uint32_t client, ClientRecord &c, Message &rep)
{
	if (!c.attached) {
		std::uint32_t i = 0;

		while (i < index_client.size() && index_client[i])
			i++;
		if (i == index_client.size() || client > max_client_id) {
			rep.status = -EUSERS;
			c.closing = true;
			return;
		}
		index_client[i] = client;
		c.index = i;
		c.attached = true;
		shm.reset_queue(i);
		atomic(shm.client(i).id).store(client, std::memory_order_release);
	}
	rep.arg = {slot_bytes,
		   slot_owner.size(),
		   client,
		   region.hugepages,
		   protocol_version | std::uint64_t{shm.layout.max_clients} << 32,
		   c.index | std::uint64_t{shm.layout.depth} << 32};
}

void TensorPoolServer::Impl::alloc(std::uint32_t client, const Message &req, Message &rep)
{
	const std::uint64_t bytes = req.arg[0];
	const std::uint64_t slots = slot_owner.size();

	if (bytes == 0) {
		rep.status = -EINVAL;
		return;
	}
	if (bytes > slots * slot_bytes) {
		rep.status = -E2BIG;
		return;
	}
	const auto need = static_cast<std::uint32_t>((bytes + slot_bytes - 1) / slot_bytes);

	// First fit over the slots; once more after reclaiming.
	for (int pass = 0; pass < 2; pass++) {
		std::uint32_t run = 0;

		for (std::uint32_t s = 0; s < slots; s++) {
			run = slot_owner[s] ? 0 : run + 1;
			if (run < need)
				continue;
			const std::uint32_t first = s + 1 - need;
			const std::uint64_t id = next_tensor++;
			SlotDesc &d = shm.desc(first);

			for (std::uint32_t i = first; i <= s; i++)
				slot_owner[i] = id;
			tensors[id] = {first, need, bytes};
			d.size = bytes;
			d.nslots = need;
			atomic(d.id).store(id, std::memory_order_relaxed);
			atomic(d.own).store(own_word(client, 0), std::memory_order_release);
			rep.arg = {id, first * slot_bytes, bytes, need * slot_bytes, 0, 0};
			return;
		}
		reclaim();
	}
	rep.status = -ENOSPC;
}

int TensorPoolServer::Impl::free(std::uint32_t client, std::uint64_t id)
{
	auto it = tensors.find(id);

	if (it == tensors.end())
		return -ENOENT;
	std::uint64_t w = own_word(client, 0);
	if (!atomic(shm.desc(it->second.first_slot).own)
		     .compare_exchange_strong(w, 0, std::memory_order_acq_rel))
		return -EPERM; // another client's, or sent by this one
	release(it);
	return 0;
}

PoolStat TensorPoolServer::Impl::stat_locked() const
{
	PoolStat s;

	s.slot_bytes = slot_bytes;
	s.slots = static_cast<std::uint32_t>(slot_owner.size());
	for (std::uint64_t tensor : slot_owner)
		s.slots_used += tensor != 0;
	for (const auto &[id, c] : clients)
		s.clients += c.attached && !c.closing;
	s.tensors = static_cast<std::uint32_t>(tensors.size());
	s.hugepages = region.hugepages;
	return s;
}

Message TensorPoolServer::Impl::answer(std::uint32_t client, ClientRecord &c, const Message &req,
				       int &pass_fd)
{
	Message rep;

	rep.type = static_cast<std::uint16_t>(req.type | reply_bit);
	rep.seq = req.seq;
	switch (static_cast<MsgType>(req.type)) {
	case MsgType::hello:
		hello(client, c, rep);
		if (!rep.status)
			pass_fd = region.fd.get();
		return rep;
	case MsgType::stat: {
		reclaim();
		PoolStat s = stat_locked();
		rep.arg = {s.slot_bytes, s.slots, s.slots_used, s.clients, s.tensors, s.hugepages};
		return rep;
	}
	default:
		break;
	}
	if (!c.attached) {
		rep.status = -ENOTCONN;
		return rep;
	}
	switch (static_cast<MsgType>(req.type)) {
	case MsgType::alloc:
		alloc(client, req, rep);
		break;
	case MsgType::free:
		rep.status = free(client, req.arg[0]);
		break;
	default:
		rep.status = -EBADMSG;
		break;
	}
	return rep;
}

void TensorPoolServer::Impl::handle(std::uint32_t client, ClientRecord &c)
{
	for (;;) {
		Message req, rep;
		int decoded = 0;
		int pass_fd = -1;
		int n = receive_message(c.sock.get(), req, decoded, MSG_DONTWAIT);

		if (n == -EAGAIN)
			return;
		std::lock_guard<std::mutex> g(lock);
		if (n <= 0) {
			c.closing = true; // closed, or broken
			return;
		}
		if (decoded == -EPROTO) {
			rep.type = static_cast<std::uint16_t>(req.type | reply_bit);
			rep.seq = req.seq;
			rep.status = -EPROTO;
			rep.arg[5] = protocol_version;
			c.closing = true;
		} else if (decoded) {
			rep.type = reply_bit;
			rep.status = decoded;
		} else {
			rep = answer(client, c, req, pass_fd);
		}
		if (send_message(c.sock.get(), rep, pass_fd) < 0)
			c.closing = true; // it does not read its replies
		if (c.closing)
			return;
	}
}

void TensorPoolServer::Impl::serve()
{
	std::vector<pollfd> fds;
	std::vector<std::uint32_t> ids;

	for (;;) {
		fds.assign({{stop.get(), POLLIN, 0}, {listener.get(), POLLIN, 0}});
		ids.assign(2, 0);
		{
			std::lock_guard<std::mutex> g(lock);
			for (auto &[id, c] : clients) {
				fds.push_back({c.sock.get(), POLLIN, 0});
				ids.push_back(id);
			}
		}
		// The time-out: reclaim what clients that died mid-send left.
		if (::poll(fds.data(), fds.size(), 100) < 0) {
			if (errno == EINTR)
				continue;
			std::fprintf(stderr, "libmcp: tensor pool %s: poll: %s\n", path.c_str(),
				     std::strerror(errno));
			return;
		}
		if (fds[0].revents)
			return;
		if (fds[1].revents)
			accept_clients();
		for (std::size_t i = 2; i < fds.size(); i++) {
			if (!fds[i].revents)
				continue;
			ClientRecord *c;
			{
				std::lock_guard<std::mutex> g(lock);
				c = &clients.at(ids[i]);
			}
			if (fds[i].revents & POLLIN) {
				handle(ids[i], *c);
			} else {
				std::lock_guard<std::mutex> g(lock);
				c->closing = true; // POLLHUP or POLLERR without data
			}
		}
		std::lock_guard<std::mutex> g(lock);
		for (auto it = clients.begin(); it != clients.end();) {
			auto next = std::next(it);
			if (it->second.closing)
				drop(it->first);
			it = next;
		}
		reclaim();
		repair();
	}
}

TensorPoolServer::Impl::~Impl()
{
	if (thread.joinable()) {
		std::uint64_t one = 1;
		if (::write(stop.get(), &one, sizeof(one)) < 0)
			std::fprintf(stderr, "libmcp: cannot stop the tensor pool thread: %s\n",
				     std::strerror(errno));
		thread.join();
		wake_all(); // its receivers see the socket closed
	}
	if (listener && !address.abstract)
		::unlink(path.c_str());
}

TensorPoolServer::TensorPoolServer(std::unique_ptr<Impl> impl) noexcept : impl_(std::move(impl)) {}
TensorPoolServer::TensorPoolServer(TensorPoolServer &&) noexcept = default;
TensorPoolServer &TensorPoolServer::operator=(TensorPoolServer &&) noexcept = default;
TensorPoolServer::~TensorPoolServer() = default;

const std::string &TensorPoolServer::path() const noexcept
{
	return impl_->path;
}

bool TensorPoolServer::hugepages() const noexcept
{
	return impl_->region.hugepages;
}

const std::string &TensorPoolServer::warning() const noexcept
{
	return impl_->region.warning;
}

PoolStat TensorPoolServer::stat() const
{
	std::lock_guard<std::mutex> g(impl_->lock);
	return impl_->stat_locked();
}

TensorPoolServer TensorPool::serve(std::string_view path, PoolOptions options)
{
	check_options(options);
	auto impl = std::make_unique<TensorPoolServer::Impl>();

	impl->path = std::string(path);
	impl->address = socket_address(path);
	impl->shm.layout = ShmLayout::of(options.slots, options.max_clients);
	create_region(impl->region, options, impl->shm.layout.bytes);
	if (!impl->region.warning.empty())
		(options.warn ? options.warn : default_warn)(impl->region.warning);
	impl->slot_bytes = options.region_bytes / options.slots;
	impl->slot_owner.assign(options.slots, 0);
	impl->shm.base = static_cast<std::byte *>(impl->region.base) + options.region_bytes;
	impl->init_shm();
	impl->stop = OwnedFd(::eventfd(0, EFD_CLOEXEC));
	if (!impl->stop)
		throw Error(errno, sys_error("cannot create an eventfd", errno));
	impl->bind_socket();
	impl->thread = std::thread([p = impl.get()] { p->serve(); });
	return TensorPoolServer(std::move(impl));
}

} // namespace mcp
