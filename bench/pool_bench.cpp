// SPDX-License-Identifier: GPL-2.0-only
// Benchmark: handing a tensor to another process and back through an
// mcp::TensorPool, against a Unix stream socket that carries the bytes and
// against a plain shared-memory ring written here (two single-producer
// single-consumer rings of buffer ids over a MAP_SHARED mapping, busy
// polling: the floor of any shared-memory hand-off).  All in one run:
//
// - latency: one round trip per sample (the producer writes one word and
//   hands the buffer over, the consumer reads the word, writes its answer
//   and hands it back), p50/p99, at 1 MiB and 64 MiB, the pool in futex
//   mode (receive() sleeps at once) and spin mode (it polls 1 ms first);
//   the socket copies every byte twice in the kernel, which is the point;
// - throughput: 4 buffers in flight, hand-offs per second and GiB/s;
// - many producers: 3 processes hand tensors to one consumer, which hands
//   each back to its sender; hand-offs per second and the round trips.
//
// The pool's server runs in this process's thread and sees no message per
// hand-off; consumers and producers are forked processes.  With two CPUs
// or more the producer runs on the first and the three consumers on the
// second (spinning on a shared CPU measures the scheduler); the many
// producers are not pinned.  It runs on the host; no kernel module is
// needed.
//
// Usage: mcp_pool_bench [ROUND_TRIPS]   (default 2000 at 1 MiB; a tenth at 64 MiB)
#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <sched.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <mcp/mcp.hpp>

namespace {

constexpr std::uint64_t MiB = 1ULL << 20;
constexpr std::uint64_t sizes[] = {1 * MiB, 64 * MiB};
constexpr unsigned window = 4;		// buffers in flight for throughput
constexpr unsigned producers = 3;	// many to one
constexpr std::uint64_t spin_us = 1000;

using clock_type = std::chrono::steady_clock;

double elapsed_us(clock_type::time_point start)
{
	return std::chrono::duration<double, std::micro>(clock_type::now() - start).count();
}

struct Samples {
	std::vector<double> us;

	double percentile(double p) const
	{
		std::vector<double> s = us;
		std::sort(s.begin(), s.end());
		return s.empty() ? 0
				 : s[std::min(s.size() - 1, static_cast<std::size_t>(p / 100.0 * static_cast<double>(s.size())))];
	}
};

// Word 0 of every buffer: the consumer's spin time (pool) or the round
// trip number; word 1: the number, the consumer answers it in word 2.
void read_all(int fd, void *buf, std::size_t len)
{
	auto *p = static_cast<char *>(buf);

	while (len) {
		ssize_t n = ::read(fd, p, len);
		if (n <= 0)
			throw std::runtime_error("socket closed");
		p += n;
		len -= static_cast<std::size_t>(n);
	}
}

void write_all(int fd, const void *buf, std::size_t len)
{
	const auto *p = static_cast<const char *>(buf);

	while (len) {
		ssize_t n = ::write(fd, p, len);
		if (n <= 0)
			throw std::runtime_error("socket write failed");
		p += n;
		len -= static_cast<std::size_t>(n);
	}
}

// --- Unix socket --------------------------------------------------------

// The consumer: a header of two words (size, number), then the bytes;
// answers number + 1.
[[noreturn]] void socket_consumer(int fd)
{
	std::vector<std::uint64_t> buf(64 * MiB / 8);

	try {
		for (;;) {
			std::uint64_t hdr[2];
			read_all(fd, hdr, sizeof(hdr));
			read_all(fd, buf.data(), hdr[0]);
			std::uint64_t answer = buf[1] + 1;
			write_all(fd, &answer, sizeof(answer));
		}
	} catch (const std::exception &) {
		_exit(0);
	}
}

void socket_send(int fd, std::uint64_t *buf, std::uint64_t size, std::uint64_t n)
{
	std::uint64_t hdr[2] = {size, n};

	buf[1] = n;
	write_all(fd, hdr, sizeof(hdr));
	write_all(fd, buf, size);
}

void socket_ack(int fd, std::uint64_t n)
{
	std::uint64_t got = 0;

	read_all(fd, &got, sizeof(got));
	if (got != n + 1)
		throw std::runtime_error("the consumer's answer through the socket is wrong");
}

// --- Plain shared-memory ring --------------------------------------------

constexpr std::uint32_t ring_depth = 8;	// >= window

struct alignas(64) Ring {
	alignas(64) std::atomic<std::uint64_t> head{0};
	alignas(64) std::atomic<std::uint64_t> tail{0};
	alignas(64) std::uint64_t ids[ring_depth]{};

	void push(std::uint64_t id)
	{
		const std::uint64_t t = tail.load(std::memory_order_relaxed);
		ids[t % ring_depth] = id;
		tail.store(t + 1, std::memory_order_release);
	}
	// Busy polls; after 1 ms without anything it naps between polls, so
	// that an idle consumer leaves the core to the other transports.
	std::uint64_t pop()
	{
		const std::uint64_t h = head.load(std::memory_order_relaxed);
		const auto start = clock_type::now();
		while (tail.load(std::memory_order_acquire) == h) {
			__builtin_ia32_pause();
			if (clock_type::now() - start > std::chrono::milliseconds(1))
				::usleep(50);
		}
		const std::uint64_t id = ids[h % ring_depth];
		head.store(h + 1, std::memory_order_release);
		return id;
	}
};

struct ShmRing {
	Ring fwd, back;
	std::byte *buffers = nullptr;	// window buffers of the largest size
	std::size_t len = 0;

	std::uint64_t *buffer(std::uint64_t id) const
	{
		return reinterpret_cast<std::uint64_t *>(buffers + id * sizes[1]);
	}
};

ShmRing *shm_ring_create()
{
	const std::size_t len = sizeof(ShmRing) + window * sizes[1] + 4096;
	void *p = ::mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		throw std::runtime_error("mmap of the shared-memory ring failed");
	auto *r = new (p) ShmRing;
	r->buffers = static_cast<std::byte *>(p) + ((sizeof(ShmRing) + 4095) & ~std::size_t{4095});
	r->len = len;
	return r;
}

[[noreturn]] void ring_consumer(ShmRing *r)
{
	for (;;) {
		std::uint64_t id = r->fwd.pop();
		if (id == UINT64_MAX)
			_exit(0);
		std::uint64_t *w = r->buffer(id);
		w[2] = w[1] + 1;
		r->back.push(id);
	}
}

// --- Tensor pool ----------------------------------------------------------

// Hands every tensor back to its sender with word 2 = word 1 + 1, spinning
// as word 0 says.  Tells the parent its id through @id_fd.
[[noreturn]] void pool_consumer(const std::string &path, int id_fd)
{
	try {
		mcp::TensorPoolClient c = mcp::TensorPool::attach(path);
		const std::uint32_t id = c.id();
		if (::write(id_fd, &id, sizeof(id)) != sizeof(id))
			_exit(1);
		for (;;) {
			std::optional<mcp::Tensor> t = c.receive();
			auto *w = reinterpret_cast<std::uint64_t *>(c.span(*t).data());
			c.set_spin(std::chrono::microseconds(w[0]));
			w[2] = w[1] + 1;
			c.send(*t, t->from);
		}
	} catch (const mcp::Error &e) {
		if (e.errnum() == ECONNRESET)
			_exit(0); // the server went away: the benchmark is over
		std::fprintf(stderr, "pool_bench: consumer: %s\n", e.what());
		_exit(1);
	}
}

struct PoolSide {
	mcp::TensorPoolClient *c;
	std::uint32_t consumer;
	std::uint64_t spin;
};

std::uint64_t *words_of(mcp::TensorPoolClient &c, const mcp::Tensor &t)
{
	return reinterpret_cast<std::uint64_t *>(c.span(t).data());
}

void pool_send(const PoolSide &p, const mcp::Tensor &t, std::uint64_t n)
{
	std::uint64_t *w = words_of(*p.c, t);

	w[0] = p.spin;
	w[1] = n;
	p.c->send(t, p.consumer);
}

mcp::Tensor pool_back(const PoolSide &p)
{
	std::optional<mcp::Tensor> t = p.c->receive(std::chrono::seconds(30));
	if (!t)
		throw std::runtime_error("the pool consumer did not answer in 30 s");
	std::uint64_t *w = words_of(*p.c, *t);
	if (w[2] != w[1] + 1)
		throw std::runtime_error("the consumer's answer through the pool is wrong");
	return *t;
}

// The CPUs this process may run on when it started.
cpu_set_t all_cpus;

// Runs the calling process on the @n-th allowed CPU (if there are two).
void pin(int n)
{
	cpu_set_t one;
	int seen = 0;

	if (CPU_COUNT(&all_cpus) < 2)
		return;
	CPU_ZERO(&one);
	for (int cpu = 0; cpu < CPU_SETSIZE; cpu++) {
		if (CPU_ISSET(cpu, &all_cpus) && seen++ == n) {
			CPU_SET(cpu, &one);
			break;
		}
	}
	::sched_setaffinity(0, sizeof(one), &one);
}

void unpin()
{
	::sched_setaffinity(0, sizeof(all_cpus), &all_cpus);
}

// --- Measurements -----------------------------------------------------------

struct Transport {
	const char *name;
	Samples lat;
	double per_s = 0;	// hand-offs per second, window in flight
};

struct Bench {
	int sock = -1;
	ShmRing *ring = nullptr;
	mcp::TensorPoolClient *producer = nullptr;
	std::uint32_t consumer = 0;
	std::vector<mcp::Tensor> tensors;	// window tensors of the size measured
};

// One round trip per sample.  @kind: 0 socket, 1 ring, 2 pool futex, 3 pool spin.
void latency(Bench &b, int kind, std::uint64_t size, unsigned count, Samples *out,
	     std::vector<std::uint64_t> &sockbuf)
{
	const PoolSide p{b.producer, b.consumer, kind == 3 ? spin_us : 0};

	if (kind >= 2)
		b.producer->set_spin(std::chrono::microseconds(p.spin));
	for (unsigned n = 0; n < count; n++) {
		const auto start = clock_type::now();
		if (kind == 0) {
			socket_send(b.sock, sockbuf.data(), size, n);
			socket_ack(b.sock, n);
		} else if (kind == 1) {
			std::uint64_t *w = b.ring->buffer(0);
			w[1] = n;
			b.ring->fwd.push(0);
			if (b.ring->back.pop() != 0 || w[2] != n + 1U)
				throw std::runtime_error("the consumer's answer through the ring is wrong");
		} else {
			pool_send(p, b.tensors[0], n);
			pool_back(p);
		}
		if (out)
			out->us.push_back(elapsed_us(start));
	}
}

// @count hand-offs with window buffers in flight; hand-offs per second.
double throughput(Bench &b, int kind, std::uint64_t size, unsigned count,
		  std::vector<std::uint64_t> &sockbuf)
{
	const PoolSide p{b.producer, b.consumer, kind == 3 ? spin_us : 0};
	const auto start = clock_type::now();

	if (kind >= 2)
		b.producer->set_spin(std::chrono::microseconds(p.spin));
	for (unsigned n = 0; n < count + window; n++) {
		if (n >= window) { // the oldest comes back first
			if (kind == 0)
				socket_ack(b.sock, n - window);
			else if (kind == 1)
				b.ring->back.pop();
			else
				pool_back(p);
		}
		if (n >= count)
			continue;
		if (kind == 0) {
			socket_send(b.sock, sockbuf.data(), size, n);
		} else if (kind == 1) {
			std::uint64_t *w = b.ring->buffer(n % window);
			w[1] = n;
			b.ring->fwd.push(n % window);
		} else {
			// Whichever tensor is ours: the first @window sends use
			// them in turn, later ones the one just returned.
			pool_send(p, b.tensors[n % window], n);
		}
	}
	return count / (elapsed_us(start) / 1e6);
}

// A forked producer: @rounds round trips of its own tensor to @consumer;
// writes its samples to @out_fd after a byte on @go_fd.
[[noreturn]] void many_producer(const std::string &path, std::uint32_t consumer, std::uint64_t spin,
				unsigned rounds, int go_fd, int out_fd)
{
	try {
		mcp::TensorPoolClient c = mcp::TensorPool::attach(path);
		c.set_spin(std::chrono::microseconds(spin));
		mcp::Tensor t = c.alloc(sizes[0]);
		const PoolSide p{&c, consumer, spin};
		std::vector<double> us;
		char go;
		if (::read(go_fd, &go, 1) != 1)
			_exit(1);
		for (unsigned n = 0; n < rounds; n++) {
			const auto start = clock_type::now();
			pool_send(p, t, n);
			t = pool_back(p);
			us.push_back(elapsed_us(start));
		}
		write_all(out_fd, us.data(), us.size() * sizeof(double));
		_exit(0);
	} catch (const std::exception &e) {
		std::fprintf(stderr, "pool_bench: producer: %s\n", e.what());
		_exit(1);
	}
}

// Hand-offs per second of @producers processes to one consumer, and their
// round trips.
double many_to_one(const std::string &path, std::uint32_t consumer, std::uint64_t spin,
		   unsigned rounds, Samples &lat)
{
	int go[2], out[2];
	std::vector<pid_t> pids;

	if (::pipe(go) < 0 || ::pipe(out) < 0)
		throw std::runtime_error("pipe failed");
	for (unsigned i = 0; i < producers; i++) {
		pid_t pid = ::fork();
		if (pid == 0) {
			unpin();
			many_producer(path, consumer, spin, rounds, go[0], out[1]);
		}
		pids.push_back(pid);
	}
	::close(out[1]);
	::usleep(200000); // attached and allocated
	const auto start = clock_type::now();
	const char bytes[producers] = {};
	write_all(go[1], bytes, producers);
	std::vector<double> us(rounds);
	for (unsigned i = 0; i < producers; i++) {
		read_all(out[0], us.data(), us.size() * sizeof(double));
		lat.us.insert(lat.us.end(), us.begin(), us.end());
	}
	const double secs = elapsed_us(start) / 1e6;
	for (pid_t pid : pids) {
		int status = 0;
		::waitpid(pid, &status, 0);
		if (!WIFEXITED(status) || WEXITSTATUS(status))
			throw std::runtime_error("a producer failed");
	}
	::close(go[0]);
	::close(go[1]);
	::close(out[0]);
	// Each round trip is two hand-offs.
	return 2.0 * producers * rounds / secs;
}

const char *size_name(std::uint64_t size)
{
	return size == sizes[0] ? "1MiB" : "64MiB";
}

} // namespace

int main(int argc, char **argv)
{
	const unsigned count = argc > 1 ? static_cast<unsigned>(std::strtoul(argv[1], nullptr, 10)) : 2000;

	if (count < 20) {
		std::fprintf(stderr, "usage: mcp_pool_bench [ROUND_TRIPS >= 20]\n");
		return 2;
	}
	const std::string path = "@mcp-pool-bench-" + std::to_string(::getpid());
	std::string warning;
	mcp::PoolOptions options;
	options.region_bytes = 512 * MiB; // 2 MiB slots: window of 64 MiB tensors and more
	options.slots = 256;
	options.warn = [&](const std::string &w) { warning = w; };

	try {
		if (::sched_getaffinity(0, sizeof(all_cpus), &all_cpus) < 0)
			throw std::runtime_error("sched_getaffinity failed");
		pin(0);
		// The socket and ring consumers are forked before the server
		// exists, so that they hold no copy of its sockets.
		int sv[2];
		if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
			throw std::runtime_error("socketpair failed");
		pid_t socket_child = ::fork();
		if (socket_child == 0) {
			pin(1);
			::close(sv[0]);
			socket_consumer(sv[1]);
		}
		::close(sv[1]);
		ShmRing *ring = shm_ring_create();
		pid_t ring_child = ::fork();
		if (ring_child == 0) {
			pin(1);
			ring_consumer(ring);
		}

		std::optional<mcp::TensorPoolServer> server(mcp::TensorPool::serve(path, options));
		int idp[2];
		if (::pipe(idp) < 0)
			throw std::runtime_error("pipe failed");
		pid_t pool_child = ::fork();
		if (pool_child == 0) {
			pin(1);
			::close(sv[0]);
			pool_consumer(path, idp[1]);
		}
		Bench b;
		read_all(idp[0], &b.consumer, sizeof(b.consumer));
		::close(idp[0]);
		::close(idp[1]);
		mcp::TensorPoolClient producer = mcp::TensorPool::attach(path);
		b.sock = sv[0];
		b.ring = ring;
		b.producer = &producer;
		std::vector<std::uint64_t> sockbuf(sizes[1] / 8, 0x5a5a5a5a5a5a5a5aULL);
		const char *names[] = {"unix socket", "shm ring (spin)", "pool futex", "pool spin 1ms"};

		std::printf("tensor hand-off to another process and back; pool in %s; %u round trips at "
			    "1 MiB, %u at 64 MiB; %s\n",
			    server->hugepages() ? "2 MiB huge pages" : "normal pages", count, count / 10,
			    CPU_COUNT(&all_cpus) < 2 ? "one CPU" : "producer and consumers on two CPUs");
		if (!warning.empty())
			std::printf("  (%s)\n", warning.c_str());
		for (std::uint64_t size : sizes) {
			const unsigned n = size == sizes[0] ? count : count / 10;
			Transport t[4];

			b.tensors.clear();
			for (unsigned i = 0; i < window; i++) {
				b.tensors.push_back(producer.alloc(size));
				std::memset(producer.span(b.tensors.back()).data(), 0x5a, size);
			}
			for (unsigned i = 0; i < window; i++)
				std::memset(ring->buffer(i), 0x5a, size);
			for (int k = 0; k < 4; k++) {
				t[k].name = names[k];
				latency(b, k, size, n / 10 + 1, nullptr, sockbuf); // warm up
			}
			// Alternating rounds, so that drift hits every transport.
			for (unsigned r = 0; r < 8; r++)
				for (int k = 0; k < 4; k++)
					latency(b, k, size, n / 8, &t[k].lat, sockbuf);
			for (int k = 0; k < 4; k++)
				t[k].per_s = throughput(b, k, size, n, sockbuf);

			std::printf("  %s         round trip p50     p99      hand-offs/s   GiB/s\n",
				    size_name(size));
			for (const Transport &x : t)
				std::printf("    %-16s %9.2f us %9.2f us %12.0f %8.2f\n", x.name,
					    x.lat.percentile(50), x.lat.percentile(99), x.per_s,
					    x.per_s * static_cast<double>(size) / (1ULL << 30));
			for (int k = 1; k < 4; k++) {
				const Transport &x = t[k];
				std::printf("    socket/%s: p50 %.1fx, p99 %.1fx, throughput %.1fx\n", x.name,
					    t[0].lat.percentile(50) / x.lat.percentile(50),
					    t[0].lat.percentile(99) / x.lat.percentile(99), x.per_s / t[0].per_s);
				std::printf("bench-result pool size=%s transport=\"%s\" p50_us=%.2f p99_us=%.2f "
					    "per_s=%.0f ratio_p50=%.2f ratio_p99=%.2f\n",
					    size_name(size), x.name, x.lat.percentile(50), x.lat.percentile(99),
					    x.per_s, t[0].lat.percentile(50) / x.lat.percentile(50),
					    t[0].lat.percentile(99) / x.lat.percentile(99));
			}
			std::printf("    pool futex/shm ring: p50 %.1fx\n",
				    t[2].lat.percentile(50) / t[1].lat.percentile(50));
			for (const mcp::Tensor &x : b.tensors)
				producer.free(x);
		}
		std::printf("  %u producers to one consumer, 1 MiB, %u round trips each\n", producers, count);
		for (std::uint64_t spin : {std::uint64_t{0}, spin_us}) {
			Samples lat;
			const double per_s = many_to_one(path, b.consumer, spin, count, lat);
			std::printf("    pool %-10s round trip p50 %9.2f us  p99 %9.2f us  %10.0f hand-offs/s\n",
				    spin ? "spin 1ms" : "futex", lat.percentile(50), lat.percentile(99), per_s);
			std::printf("bench-result pool many=%u spin_us=%llu p50_us=%.2f p99_us=%.2f per_s=%.0f\n",
				    producers, static_cast<unsigned long long>(spin), lat.percentile(50),
				    lat.percentile(99), per_s);
		}
		ring->fwd.push(UINT64_MAX);
		::close(sv[0]);
		server.reset();
		::waitpid(pool_child, nullptr, 0);
		::waitpid(socket_child, nullptr, 0);
		::waitpid(ring_child, nullptr, 0);
	} catch (const std::exception &e) {
		std::fprintf(stderr, "pool_bench: %s\n", e.what());
		return 1;
	}
	return 0;
}
