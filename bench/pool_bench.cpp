// SPDX-License-Identifier: GPL-2.0-only
// Benchmark: handing a 1 MiB tensor to another process and back, through
// an mcp::TensorPool (the producer writes into a pool tensor and sends its
// id, the consumer reads it in place and hands it back as the
// acknowledgement) against sending the bytes over a Unix stream socket
// (the producer writes its buffer into the socket, the consumer read()s
// all of it and answers with 8 bytes).  One round trip per sample,
// p50/p99 of each, alternating in rounds in one run; target: socket/pool
// >= 100x at p50.
//
// Two modes, both measured: "touch", where the producer fills the whole
// 1 MiB and the consumer sums all of it (what an application pays), and
// "handoff", where the producer writes and the consumer reads one word
// (what the transport costs; the socket still copies 1 MiB twice in the
// kernel, which is the point).  In both the consumer's result travels
// back and is checked.
//
// The pool runs in this process's server thread, the consumer is a
// forked process.  It runs on the host; no kernel module is needed.
//
// Usage: mcp_pool_bench [ROUND_TRIPS]   (default 2000 per side and mode)
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <mcp/mcp.hpp>

namespace {

constexpr std::size_t tensor_bytes = 1 << 20;
constexpr std::size_t words = tensor_bytes / sizeof(std::uint64_t);
constexpr unsigned rounds = 8;
// Word 0 says the mode, word 1 carries the consumer's sum back (pool).
constexpr std::uint64_t mode_handoff = 0;
constexpr std::uint64_t mode_touch = 1;

using clock_type = std::chrono::steady_clock;

// What the consumer computes: the sum of words 2.. in touch mode, word 2
// alone otherwise.
std::uint64_t consume(const std::uint64_t *w)
{
	if (w[0] != mode_touch)
		return w[2];
	std::uint64_t sum = 0;
	for (std::size_t i = 2; i < words; i++)
		sum += w[i];
	return sum;
}

// Fills @w for round trip @n and returns what consume() must answer.
std::uint64_t produce(std::uint64_t *w, std::uint64_t mode, unsigned n)
{
	const std::uint64_t pattern = 0x0101010101010101ULL * (n % 251 + 1);

	if (mode == mode_touch) {
		std::fill(w, w + words, pattern);
		w[0] = mode;
		return pattern * (words - 2);
	}
	w[0] = mode;
	w[2] = pattern;
	return pattern;
}

[[noreturn]] void pool_consumer(const std::string &path)
{
	try {
		mcp::TensorPoolClient c = mcp::TensorPool::attach(path);
		for (;;) {
			std::optional<mcp::Tensor> t = c.receive();
			auto *w = reinterpret_cast<std::uint64_t *>(c.span(*t).data());
			w[1] = consume(w);
			c.send(*t, t->from);
		}
	} catch (const mcp::Error &) {
		_exit(0); // the server went away: the benchmark is over
	}
}

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

[[noreturn]] void socket_consumer(int fd)
{
	std::vector<std::uint64_t> buf(words);

	try {
		for (;;) {
			read_all(fd, buf.data(), tensor_bytes);
			std::uint64_t sum = consume(buf.data());
			write_all(fd, &sum, sizeof(sum));
		}
	} catch (const std::exception &) {
		_exit(0);
	}
}

struct Side {
	std::vector<double> us;	// one round trip per sample

	double percentile(double p) const
	{
		std::vector<double> s = us;
		std::sort(s.begin(), s.end());
		return s[std::min(s.size() - 1, static_cast<std::size_t>(p / 100.0 * static_cast<double>(s.size())))];
	}
};

double elapsed_us(clock_type::time_point start)
{
	return std::chrono::duration<double, std::micro>(clock_type::now() - start).count();
}

void pool_round_trips(mcp::TensorPoolClient &c, const mcp::Tensor &t, std::uint32_t consumer,
		      std::uint64_t mode, unsigned count, Side *side)
{
	auto *w = reinterpret_cast<std::uint64_t *>(c.span(t).data());

	for (unsigned n = 0; n < count; n++) {
		auto start = clock_type::now();
		std::uint64_t want = produce(w, mode, n);
		c.send(t, consumer);
		std::optional<mcp::Tensor> back = c.receive();
		if (!back || back->id != t.id || w[1] != want)
			throw std::runtime_error("the consumer's answer through the pool is wrong");
		if (side)
			side->us.push_back(elapsed_us(start));
	}
}

void socket_round_trips(int fd, std::uint64_t *buf, std::uint64_t mode, unsigned count, Side *side)
{
	for (unsigned n = 0; n < count; n++) {
		auto start = clock_type::now();
		std::uint64_t want = produce(buf, mode, n);
		std::uint64_t got = 0;
		write_all(fd, buf, tensor_bytes);
		read_all(fd, &got, sizeof(got));
		if (got != want)
			throw std::runtime_error("the consumer's answer through the socket is wrong");
		if (side)
			side->us.push_back(elapsed_us(start));
	}
}

} // namespace

int main(int argc, char **argv)
{
	unsigned count = argc > 1 ? static_cast<unsigned>(std::strtoul(argv[1], nullptr, 10)) : 2000;

	if (count < rounds) {
		std::fprintf(stderr, "usage: mcp_pool_bench [ROUND_TRIPS >= %u]\n", rounds);
		return 2;
	}
	const std::string path = "@mcp-pool-bench-" + std::to_string(::getpid());
	std::string warning;
	mcp::PoolOptions options;
	options.region_bytes = 16 << 20;
	options.slots = 8;
	options.warn = [&](const std::string &w) { warning = w; };

	try {
		// The socket consumer is forked before the server exists and
		// the pool consumer before it is accepted, so that neither holds
		// a copy of the other's connection (each exits when its own
		// peer closes).
		int sv[2];
		if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
			throw std::runtime_error("socketpair failed");
		pid_t socket_child = ::fork();
		if (socket_child == 0) {
			::close(sv[0]);
			socket_consumer(sv[1]);
		}
		::close(sv[1]);
		// Optional, to stop it before the end: its consumer then exits.
		std::optional<mcp::TensorPoolServer> server(mcp::TensorPool::serve(path, options));
		mcp::TensorPoolClient producer = mcp::TensorPool::attach(path);
		pid_t pool_child = ::fork();
		if (pool_child == 0) {
			::close(sv[0]);
			pool_consumer(path);
		}
		while (server->stat().clients < 2)
			::usleep(1000);
		const std::uint32_t consumer = producer.id() + 1;
		mcp::Tensor t = producer.alloc(tensor_bytes);
		std::vector<std::uint64_t> buf(words);

		std::printf("1 MiB tensor to another process and back, %u round trips per side and "
			    "mode in %u alternating rounds; pool in %s\n",
			    count, rounds, server->hugepages() ? "2 MiB huge pages" : "normal pages");
		if (!warning.empty())
			std::printf("  (%s)\n", warning.c_str());
		for (std::uint64_t mode : {mode_touch, mode_handoff}) {
			Side pool, sock;
			pool_round_trips(producer, t, consumer, mode, count / 10 + 1, nullptr);
			socket_round_trips(sv[0], buf.data(), mode, count / 10 + 1, nullptr);
			for (unsigned r = 0; r < rounds; r++) {
				socket_round_trips(sv[0], buf.data(), mode, count / rounds, &sock);
				pool_round_trips(producer, t, consumer, mode, count / rounds, &pool);
			}
			const char *name = mode == mode_touch ? "touch" : "handoff";
			const double p50 = sock.percentile(50) / pool.percentile(50);
			const double p99 = sock.percentile(99) / pool.percentile(99);
			std::printf("  %-7s (%s)\n", name,
				    mode == mode_touch ? "producer fills 1 MiB, consumer sums 1 MiB"
						       : "one word written, one word read");
			std::printf("    unix socket: p50 %9.1f us  p99 %9.1f us\n", sock.percentile(50),
				    sock.percentile(99));
			std::printf("    tensor pool: p50 %9.1f us  p99 %9.1f us\n", pool.percentile(50),
				    pool.percentile(99));
			std::printf("    ratio socket/pool: p50 %.1fx, p99 %.1fx (target >= 100x)\n", p50, p99);
			std::printf("bench-result pool mode=%s socket_p50_us=%.1f socket_p99_us=%.1f "
				    "pool_p50_us=%.1f pool_p99_us=%.1f ratio_p50=%.2f ratio_p99=%.2f\n",
				    name, sock.percentile(50), sock.percentile(99), pool.percentile(50),
				    pool.percentile(99), p50, p99);
		}
		::close(sv[0]);
		server.reset();
		::waitpid(pool_child, nullptr, 0);
		::waitpid(socket_child, nullptr, 0);
	} catch (const std::exception &e) {
		std::fprintf(stderr, "pool_bench: %s\n", e.what());
		return 1;
	}
	return 0;
}
