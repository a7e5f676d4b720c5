// SPDX-License-Identifier: GPL-2.0-only
// Benchmark: the cost of the kernel's rebalancer with many kept tasks.
//
// The module adds the wall time of every rebalancer pass to the debugfs
// counter rebalance_ns (an upper bound of the passes' CPU time).  This
// benchmark sets rebalance_ms to 100, measures the rebalancer's share of
// one CPU over a window with no kept task (the baseline: idle sampling and
// the pass itself), then places TASKS sleeping child processes with
// MCP_PLACE_KEEP (each with a little memory of its own to sample), measures
// the same window again, and prints both shares and their ratio.  Then it
// places the same tasks again with MCP_PLACE_ADAPTIVE too (they sleep, so
// none moves: the cost is the run-queue look itself), measures a third
// window and prints what adaptive placement adds per kept task and pass.
// Target: at most 1% of one CPU with 1,000 kept tasks, adaptive or not.
//
// Usage: mcp_rebalance_bench [TASKS [WINDOW_SECONDS]]   (1000, 5)
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <sys/wait.h>
#include <unistd.h>

#include <mcp/mcp.hpp>

namespace {

const char *const counters_path = "/sys/kernel/debug/mcp/counters";
const char *const rebalance_ms_path = "/sys/class/misc/mcp/placement/rebalance_ms";

long long counter(const char *name)
{
	std::ifstream in(counters_path);
	std::string key;
	long long value;
	while (in >> key >> value)
		if (key == name)
			return value;
	throw std::runtime_error(std::string("no counter ") + name + " in " + counters_path);
}

std::string read_line(const char *path)
{
	std::ifstream in(path);
	std::string s;
	if (!std::getline(in, s))
		throw std::runtime_error(std::string("cannot read ") + path);
	return s;
}

void write_line(const char *path, const std::string &value)
{
	std::ofstream out(path);
	out << value << '\n';
	out.flush();
	if (!out)
		throw std::runtime_error(std::string("cannot write ") + path);
}

// Share of one CPU the rebalancer used over @seconds, in percent; its
// busy time per pass in *@pass_ns.
double rebalancer_cpu_pct(double seconds, long long *passes, double *pass_ns = nullptr)
{
	long long ns0 = counter("rebalance_ns"), p0 = counter("rebalance_passes");
	auto t0 = std::chrono::steady_clock::now();
	std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
	std::chrono::duration<double, std::nano> wall = std::chrono::steady_clock::now() - t0;
	*passes = counter("rebalance_passes") - p0;
	const double busy = double(counter("rebalance_ns") - ns0);
	if (pass_ns)
		*pass_ns = *passes ? busy / double(*passes) : 0;
	return 100.0 * busy / wall.count();
}

// Sleeping children with 64 KiB of touched memory each, killed on scope exit.
struct Children {
	std::vector<pid_t> pids;

	explicit Children(unsigned n)
	{
		for (unsigned i = 0; i < n; i++) {
			pid_t pid = fork();
			if (pid < 0)
				throw std::runtime_error("fork failed");
			if (pid == 0) {
				static char memory[64 * 1024];
				std::memset(memory, 1, sizeof(memory));
				for (;;)
					pause();
			}
			pids.push_back(pid);
		}
	}
	~Children()
	{
		for (pid_t pid : pids)
			kill(pid, SIGKILL);
		for (pid_t pid : pids)
			waitpid(pid, nullptr, 0);
	}
};

} // namespace

int main(int argc, char **argv)
{
	unsigned tasks = argc > 1 ? std::strtoul(argv[1], nullptr, 10) : 1000;
	double window = argc > 2 ? std::strtod(argv[2], nullptr) : 5.0;
	if (tasks == 0 || window <= 0) {
		std::fprintf(stderr, "usage: mcp_rebalance_bench [TASKS > 0 [WINDOW_SECONDS > 0]]\n");
		return 2;
	}
	std::string saved_ms;
	try {
		mcp::Device dev = mcp::Device::open();
		const auto nodes = dev.topology().nodes();
		saved_ms = read_line(rebalance_ms_path);
		write_line(rebalance_ms_path, "100");

		long long base_passes = 0;
		double base_pct = rebalancer_cpu_pct(window, &base_passes);

		Children children(tasks);
		mcp::PlaceOptions opts;
		opts.keep = true;
		opts.histogram = false;
		for (std::size_t i = 0; i < children.pids.size(); i++) {
			opts.node = nodes[i % nodes.size()].id;
			dev.place(children.pids[i], opts);
		}
		long long placed = counter("placed_tasks");
		if (placed < tasks) {
			std::fprintf(stderr, "rebalance_bench: only %lld of %u tasks have placement state\n",
				     placed, tasks);
			write_line(rebalance_ms_path, saved_ms);
			return 1;
		}
		long long kept_passes = 0, adaptive_passes = 0;
		double kept_pass_ns = 0, adaptive_pass_ns = 0, adaptive_pct = -1;
		double kept_pct = rebalancer_cpu_pct(window, &kept_passes, &kept_pass_ns);
		if (dev.version().has(mcp::feature::place_adaptive)) {
			opts.adaptive = true;
			opts.force = true;
			for (std::size_t i = 0; i < children.pids.size(); i++) {
				opts.node = nodes[i % nodes.size()].id;
				dev.place(children.pids[i], opts);
			}
			adaptive_pct = rebalancer_cpu_pct(window, &adaptive_passes, &adaptive_pass_ns);
		}
		write_line(rebalance_ms_path, saved_ms);

		std::printf("rebalancer at rebalance_ms=100, %.0f s windows\n", window);
		std::printf("  baseline, no kept task:  %6.3f %% of one CPU (%lld passes)\n",
			    base_pct, base_passes);
		std::printf("  %u kept tasks:          %6.3f %% of one CPU (%lld passes)\n",
			    tasks, kept_pct, kept_passes);
		std::printf("  ratio kept/baseline: %.1fx; target <= 1%% of one CPU: %s\n",
			    base_pct > 0 ? kept_pct / base_pct : 0.0, kept_pct <= 1.0 ? "met" : "NOT met");
		if (adaptive_pct < 0) {
			std::printf("  adaptive: unsupported (this mcp.ko has no place-adaptive)\n");
		} else {
			std::printf("  %u adaptive kept tasks: %6.3f %% of one CPU (%lld passes)\n",
				    tasks, adaptive_pct, adaptive_passes);
			std::printf("  ratio adaptive/kept: %.2fx; adaptive adds %.0f ns per task "
				    "per pass; target <= 1%% of one CPU: %s\n",
				    kept_pct > 0 ? adaptive_pct / kept_pct : 0.0,
				    (adaptive_pass_ns - kept_pass_ns) / tasks,
				    adaptive_pct <= 1.0 ? "met" : "NOT met");
		}
		std::printf("bench-result rebalance tasks=%u base_pct=%.3f kept_pct=%.3f "
			    "adaptive_pct=%.3f\n", tasks, base_pct, kept_pct, adaptive_pct);
	} catch (const std::exception &e) {
		if (!saved_ms.empty())
			try {
				write_line(rebalance_ms_path, saved_ms);
			} catch (...) {
			}
		std::fprintf(stderr, "rebalance_bench: %s\n", e.what());
		return 1;
	}
	return 0;
}
