// SPDX-License-Identifier: GPL-2.0-only
// Benchmark: task placement.
//
// 1. MCP_IOC_PLACE with a page histogram (mcp::Device::place(): read
//    /proc/self/maps, move_pages(2) over up to 4096 pages, the ioctl) against
//    a bare sched_setaffinity() to the same mask.  Also reported: the ioctl
//    without a histogram and the histogram sampling alone, so the cost can
//    be attributed.  Target: place <= 3x sched_setaffinity.
// 2. `mcpctl run --node N true` against `numactl --cpunodebind=N true`,
//    fork+exec+wait each, interleaved.  Target: no slower.
//
// Both sides of each ratio are measured in the same run (under QEMU TCG the
// absolute times mean little).
//
// Usage: mcp_place_bench [PLACE_ITERATIONS [RUN_ITERATIONS]]   (2000, 100)
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include <sched.h>
#include <sys/wait.h>
#include <unistd.h>

#include <mcp/mcp.hpp>

#include "bench_timing.hpp"

namespace {

// fork + execv + waitpid; false if the command did not exit 0.
bool spawn(const std::vector<std::string> &argv)
{
	std::vector<char *> args;
	for (const std::string &a : argv)
		args.push_back(const_cast<char *>(a.c_str()));
	args.push_back(nullptr);
	pid_t pid = fork();
	if (pid < 0)
		return false;
	if (pid == 0) {
		execv(args[0], args.data());
		_exit(127);
	}
	int status = 0;
	return waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

std::string find_in_path(const char *name, std::vector<std::string> dirs)
{
	for (const std::string &d : dirs) {
		std::string p = d + "/" + name;
		if (access(p.c_str(), X_OK) == 0)
			return p;
	}
	return "";
}

int bench_place(mcp::Device &dev, unsigned iterations)
{
	mcp::PlaceOptions with_hist;
	with_hist.force = true; // every call decides and applies
	mcp::PlaceOptions no_hist = with_hist;
	no_hist.histogram = false;
	mcp::PlaceOptions small_hist = with_hist;
	small_hist.sample_pages = 256;

	mcp::PlaceResult first = dev.place(0, with_hist);
	cpu_set_t mask;
	CPU_ZERO(&mask);
	if (first.cpus.empty()) {
		if (sched_getaffinity(0, sizeof(mask), &mask))
			return 1;
	} else {
		for (unsigned c : first.cpus)
			CPU_SET(c, &mask);
	}
	const unsigned pages = first.histogram ? first.histogram->sampled : 0;

	auto place_hist = [&] { (void)dev.place(0, with_hist); };
	auto place_bare = [&] { (void)dev.place(0, no_hist); };
	auto place_small = [&] { (void)dev.place(0, small_hist); };
	auto sample = [&] { (void)mcp::sample_page_histogram(0, with_hist.sample_pages); };
	auto setaff = [&] { (void)sched_setaffinity(0, sizeof(mask), &mask); };

	ns_per_call(iterations / 10 + 1, setaff);
	ns_per_call(iterations / 10 + 1, place_hist);
	double aff_ns = 0, hist_ns = 0, bare_ns = 0, sample_ns = 0, small_ns = 0;
	for (int half = 0; half < 2; half++) {
		aff_ns += ns_per_call(iterations / 2 + 1, setaff) / 2;
		hist_ns += ns_per_call(iterations / 2 + 1, place_hist) / 2;
		bare_ns += ns_per_call(iterations / 2 + 1, place_bare) / 2;
		sample_ns += ns_per_call(iterations / 2 + 1, sample) / 2;
		small_ns += ns_per_call(iterations / 2 + 1, place_small) / 2;
	}
	try {
		dev.unplace(0); // restore; "unchanged" placements leave nothing to undo
	} catch (const mcp::Error &e) {
		if (e.errnum() != ENOENT)
			throw;
	}

	std::printf("placement of the calling thread, node %d (%s), %u pages sampled, %u iterations\n",
		    first.node_chosen, mcp::to_string(first.reason), pages, iterations);
	std::printf("  baseline sched_setaffinity() to the same mask: %10.0f ns/call\n", aff_ns);
	std::printf("  MCP_IOC_PLACE with histogram (Device::place):  %10.0f ns/call\n", hist_ns);
	std::printf("    of which histogram sampling alone:           %10.0f ns/call\n", sample_ns);
	std::printf("  MCP_IOC_PLACE with a 256-page histogram:       %10.0f ns/call\n", small_ns);
	std::printf("  MCP_IOC_PLACE without histogram:               %10.0f ns/call\n", bare_ns);
	std::printf("  ratio place+histogram/setaffinity: %.1fx (target <= 3x); "
		    "256 pages: %.1fx; ioctl alone: %.1fx\n",
		    hist_ns / aff_ns, small_ns / aff_ns, bare_ns / aff_ns);
	std::printf("bench-result place setaffinity_ns=%.0f place_hist_ns=%.0f place_bare_ns=%.0f "
		    "place_256_ns=%.0f sample_ns=%.0f ratio=%.2f ratio_256=%.2f ratio_bare=%.2f\n",
		    aff_ns, hist_ns, bare_ns, small_ns, sample_ns, hist_ns / aff_ns,
		    small_ns / aff_ns, bare_ns / aff_ns);
	return 0;
}

int bench_run(const mcp::Device &dev, unsigned iterations)
{
	const std::string mcpctl = find_in_path("mcpctl", {"/opt/mcp/bin", "/usr/local/bin", "/usr/bin"});
	const std::string numactl = find_in_path("numactl", {"/usr/bin", "/usr/local/bin", "/bin"});
	const std::string truecmd = find_in_path("true", {"/bin", "/usr/bin"});
	if (mcpctl.empty() || numactl.empty() || truecmd.empty()) {
		std::printf("run vs numactl: skipped (mcpctl %s, numactl %s, true %s)\n",
			    mcpctl.empty() ? "missing" : "found", numactl.empty() ? "missing" : "found",
			    truecmd.empty() ? "missing" : "found");
		return 0;
	}
	const unsigned node = dev.topology().nodes().back().id;
	const std::string n = std::to_string(node);
	const std::vector<std::string> mcp_cmd = {mcpctl, "run", "--node", n, "--", truecmd};
	const std::vector<std::string> numa_cmd = {numactl, "--cpunodebind=" + n, truecmd};
	bool ok = true;

	ok = spawn(mcp_cmd) && spawn(numa_cmd);
	if (!ok) {
		std::fprintf(stderr, "place_bench: '%s run --node %s -- true' or numactl failed\n",
			     mcpctl.c_str(), n.c_str());
		return 1;
	}
	double mcp_ns = 0, numa_ns = 0;
	for (int half = 0; half < 2; half++) {
		numa_ns += ns_per_call(iterations / 2 + 1, [&] { ok = spawn(numa_cmd) && ok; }) / 2;
		mcp_ns += ns_per_call(iterations / 2 + 1, [&] { ok = spawn(mcp_cmd) && ok; }) / 2;
	}
	if (!ok) {
		std::fprintf(stderr, "place_bench: a run failed during the measurement\n");
		return 1;
	}
	std::printf("run 'true' on node %u, fork+exec+wait, %u iterations each\n", node, iterations);
	std::printf("  baseline numactl --cpunodebind=%u true: %10.0f us/run\n", node, numa_ns / 1000);
	std::printf("  mcpctl run --node %u -- true:           %10.0f us/run\n", node, mcp_ns / 1000);
	std::printf("  ratio mcpctl/numactl: %.2fx (target <= 1x)\n", mcp_ns / numa_ns);
	std::printf("bench-result run numactl_us=%.0f mcpctl_us=%.0f ratio=%.2f\n", numa_ns / 1000,
		    mcp_ns / 1000, mcp_ns / numa_ns);
	return 0;
}

} // namespace

int main(int argc, char **argv)
{
	unsigned place_iterations = argc > 1 ? std::strtoul(argv[1], nullptr, 10) : 2000;
	unsigned run_iterations = argc > 2 ? std::strtoul(argv[2], nullptr, 10) : 100;

	if (place_iterations == 0 || run_iterations == 0) {
		std::fprintf(stderr, "usage: mcp_place_bench [PLACE_ITERATIONS [RUN_ITERATIONS]]\n");
		return 2;
	}
	try {
		mcp::Device dev = mcp::Device::open();
		int rc = bench_place(dev, place_iterations);
		if (rc)
			return rc;
		return bench_run(dev, run_iterations);
	} catch (const std::exception &e) {
		std::fprintf(stderr, "place_bench: %s\n", e.what());
		return 1;
	}
}
