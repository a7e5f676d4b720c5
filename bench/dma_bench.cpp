// SPDX-License-Identifier: GPL-2.0-only
// Benchmark: DMA through MCP's cpu engine on the host context (/dev/mcp).
//
// 1. Copy throughput of the cpu engine against userspace memcpy() between
//    the same two kernel buffers (both mapped), 64 KiB to 64 MiB,
//    alternating in rounds, the best round of each counting; target: the
//    engine reaches >= 0.8x memcpy from 1 MiB up.
// 2. Submit-to-complete cost of zero-length jobs: synchronous one at a
//    time, asynchronous (bursts of 256 submitted, then waited for), and a lone
//    asynchronous job waited for at once; each with coalescing off
//    (wc_depth 1) and at wc_depth 8 and 16 (the sysfs knob is set for the
//    run and restored).  Coalescing trades the latency of a lone job (it
//    waits up to wc_timeout_us for company) for the throughput of bursts.
//    Each asynchronous job's fence is a sync_file, a new anonymous-inode
//    file: the cost of making and closing one such file (an eventfd, the
//    same kernel path) is measured in the same run, since it is what an
//    asynchronous job pays beyond a synchronous one.
//
// Usage: mcp_dma_bench [ROUNDS [JOBS]]   (default 5 rounds, 2000 jobs)
#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <sys/eventfd.h>
#include <unistd.h>

#include <mcp/mcp.hpp>

#include "bench_timing.hpp"

namespace {

constexpr const char *wc_depth_knob = "/sys/class/misc/mcp/dma/wc_depth";
constexpr const char *wc_timeout_knob = "/sys/class/misc/mcp/dma/wc_timeout_us";
// Async jobs in flight at most: each holds a fence fd (RLIMIT_NOFILE).
constexpr std::size_t burst = 256;

std::uint64_t now_ns()
{
	return static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
						  std::chrono::steady_clock::now().time_since_epoch())
						  .count());
}

std::string read_knob(const char *path)
{
	std::ifstream in(path);
	std::string v;

	if (!(in >> v))
		throw std::runtime_error(std::string("cannot read ") + path);
	return v;
}

void write_knob(const char *path, const std::string &v)
{
	std::ofstream out(path);

	if (!(out << v << '\n') || !out.flush())
		throw std::runtime_error(std::string("cannot write ") + path);
}

// Sets wc_depth for its lifetime, restores the value it found.
struct WcDepth {
	explicit WcDepth(unsigned depth) : saved(read_knob(wc_depth_knob))
	{
		write_knob(wc_depth_knob, std::to_string(depth));
	}
	WcDepth(const WcDepth &) = delete;
	WcDepth &operator=(const WcDepth &) = delete;
	~WcDepth()
	{
		try {
			write_knob(wc_depth_knob, saved);
		} catch (const std::exception &e) {
			std::fprintf(stderr, "dma_bench: %s: restore wc_depth=%s by hand\n", e.what(),
				     saved.c_str());
		}
	}
	std::string saved;
};

struct Throughput {
	std::uint64_t bytes;
	std::uint64_t engine_ns = UINT64_MAX;
	std::uint64_t memcpy_ns = UINT64_MAX;
};

Throughput copy_throughput(const mcp::Dma &dma, std::uint64_t bytes, unsigned rounds)
{
	mcp::Buffer src = mcp::Buffer::create(dma, bytes);
	mcp::Buffer dst = mcp::Buffer::create(dma, bytes);
	std::span<std::byte> s = src.data(), d = dst.data();
	Throughput t{bytes};

	std::memset(s.data(), 0x5a, s.size()); // fault both in before timing
	std::memset(d.data(), 0, d.size());
	for (unsigned r = 0; r < rounds; r++) {
		std::uint64_t t0 = now_ns();
		dma.copy(mcp::engine_cpu, src, 0, dst, 0, bytes);
		std::uint64_t t1 = now_ns();
		std::memcpy(d.data(), s.data(), bytes);
		std::uint64_t t2 = now_ns();
		t.engine_ns = std::min(t.engine_ns, t1 - t0);
		t.memcpy_ns = std::min(t.memcpy_ns, t2 - t1);
	}
	if (std::memcmp(s.data(), d.data(), bytes) != 0)
		throw std::runtime_error("the copy differs from the source");
	return t;
}

struct JobCosts {
	unsigned depth;
	double sync_ns;		// per job, one at a time
	double async_ns;	// per job, bursts submitted then waited for
	double lone_ns;		// one async job submitted and waited for
};

JobCosts job_costs(const mcp::Dma &dma, unsigned depth, unsigned jobs)
{
	WcDepth knob(depth);
	mcp::Buffer a = mcp::Buffer::create(dma, 4096);
	mcp::Buffer b = mcp::Buffer::create(dma, 4096);
	std::vector<mcp::Fence> fences;
	JobCosts c{depth, 0, 0, 0};

	c.sync_ns = ns_per_call(jobs, [&] { dma.copy(mcp::engine_cpu, a, 0, b, 0, 0); });
	auto wait_all = [&] {
		for (const mcp::Fence &f : fences)
			if (!f.wait(std::chrono::seconds(30)).ok())
				throw std::runtime_error("a zero-length job failed or did not complete");
		fences.clear();
	};
	fences.reserve(burst);
	std::uint64_t t0 = now_ns();
	for (unsigned i = 0; i < jobs; i++) {
		fences.push_back(dma.copy_async(mcp::engine_cpu, a, 0, b, 0, 0));
		if (fences.size() == burst)
			wait_all();
	}
	wait_all();
	c.async_ns = static_cast<double>(now_ns() - t0) / jobs;
	unsigned lone = std::min(jobs, 200u);
	c.lone_ns = ns_per_call(lone, [&] {
		if (!dma.copy_async(mcp::engine_cpu, a, 0, b, 0, 0).wait(std::chrono::seconds(30)).ok())
			throw std::runtime_error("a lone zero-length job failed");
	});
	return c;
}

// An anonymous-inode file made and closed, as a fence's sync_file is.
double fd_cost_ns(unsigned calls)
{
	return ns_per_call(calls, [] {
		int fd = ::eventfd(0, EFD_CLOEXEC);

		if (fd < 0)
			throw std::runtime_error(std::string("eventfd: ") + std::strerror(errno));
		::close(fd);
	});
}

} // namespace

int main(int argc, char **argv)
{
	unsigned rounds = argc > 1 ? static_cast<unsigned>(std::strtoul(argv[1], nullptr, 0)) : 5;
	unsigned jobs = argc > 2 ? static_cast<unsigned>(std::strtoul(argv[2], nullptr, 0)) : 2000;

	if (!rounds || !jobs) {
		std::fprintf(stderr, "usage: mcp_dma_bench [ROUNDS [JOBS]] (both at least 1)\n");
		return 2;
	}
	try {
		mcp::Device dev = mcp::Device::open();
		mcp::Dma dma = mcp::Dma::host(dev);
		bool met = true;

		std::printf("dma_bench: cpu engine of the host context vs memcpy, best of %u rounds\n",
			    rounds);
		std::printf("%10s %12s %12s %7s\n", "size", "engine GB/s", "memcpy GB/s", "ratio");
		for (std::uint64_t kib : {64, 256, 1024, 4096, 16384, 65536}) {
			Throughput t = copy_throughput(dma, kib << 10, rounds);
			double ratio = static_cast<double>(t.memcpy_ns) / static_cast<double>(t.engine_ns);

			if (kib >= 1024 && ratio < 0.8)
				met = false;
			std::printf("%7llu KiB %12.2f %12.2f %6.2fx\n", static_cast<unsigned long long>(kib),
				    static_cast<double>(t.bytes) / static_cast<double>(t.engine_ns),
				    static_cast<double>(t.bytes) / static_cast<double>(t.memcpy_ns), ratio);
		}
		std::printf("dma_bench: throughput target (>= 0.80x memcpy from 1 MiB): %s\n",
			    met ? "met" : "NOT met");

		std::printf("dma_bench: zero-length jobs, %u per mode, wc_timeout_us %s\n", jobs,
			    read_knob(wc_timeout_knob).c_str());
		std::printf("%8s %12s %12s %12s %12s %11s %12s\n", "wc_depth", "sync us/job",
			    "sync jobs/s", "async us/job", "async jobs/s", "async/sync", "lone us");
		for (unsigned depth : {1u, 8u, 16u}) {
			JobCosts c = job_costs(dma, depth, jobs);

			std::printf("%8u %12.2f %12.0f %12.2f %12.0f %10.2fx %12.2f\n", c.depth,
				    c.sync_ns / 1e3, 1e9 / c.sync_ns, c.async_ns / 1e3, 1e9 / c.async_ns,
				    c.sync_ns / c.async_ns, c.lone_ns / 1e3);
		}
		std::printf("dma_bench: an anonymous-inode fd made and closed (eventfd, as a fence's "
			    "sync_file): %.2f us\n",
			    fd_cost_ns(jobs) / 1e3);
	} catch (const mcp::Error &e) {
		std::fprintf(stderr, "dma_bench: %s\n", e.what());
		return e.errnum() == EOPNOTSUPP ? 77 : 1;
	} catch (const std::exception &e) {
		std::fprintf(stderr, "dma_bench: %s\n", e.what());
		return 1;
	}
	return 0;
}
