// SPDX-License-Identifier: GPL-2.0-only
// Benchmark: what the eBPF tracers of libmcp (bpf/) cost.
//
// 1. Per event: the kernel's own BPF statistics (BPF_ENABLE_STATS with
//    BPF_STATS_RUN_TIME, on for one traced round of its own) give each
//    program's run_time_ns and run_cnt; the programs of each tracer are the
//    ids BPF_PROG_GET_NEXT_ID lists after opening it and not before.
// 2. Slowdown: a scheduler-heavy workload, pipe ping-pong between two
//    threads pinned to one CPU (every round trip is two wake-ups and two
//    context switches), timed with no tracer and with the sched, cache and
//    mcp tracers attached, alternating (each round starting with the next
//    side), ROUNDS times each in the same run, statistics off.  The
//    slowdown is the ratio of the medians and, as rounds next to each
//    other share the host's load, the median of the per-round ratios; the
//    target (<= 1.10x) is met only if both are.  The ratio of the minima
//    (the least disturbed rounds) and the host's load average are printed
//    too.
//    The sched tracer alone is timed too (the cache tracer's perf events
//    cost context switches something on hosts with a PMU).
//    Debian's runqlat (libbpf-tools, /usr/sbin/runqlat), the standard
//    tool for the same run-queue latency, is timed too, system-wide like
//    the sched tracer (neither filters), in the same alternation: its
//    ratio to none beside the sched tracer's, and the difference in
//    points.  Target: the sched tracer <= 1.10x and <= runqlat + 3 points.
// 3. The floor under that ratio: the same workload with empty programs
//    ("return 0") on the tracepoints the sched tracer uses, as tp_btf and
//    as raw_tp, timed in the same alternation.  What they cost is the
//    kernel's fixed price per traced event, which no program can cut.
//
// Usage: mcp_bpf_bench [ROUND_TRIPS [ROUNDS]]   (5000, 40)
#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <mcp/mcp.hpp>

namespace {

class Fd {
public:
	explicit Fd(int fd = -1) noexcept : fd_(fd) {}
	~Fd()
	{
		if (fd_ >= 0)
			close(fd_);
	}
	Fd(const Fd &) = delete;
	Fd &operator=(const Fd &) = delete;
	Fd(Fd &&o) noexcept : fd_(o.fd_) { o.fd_ = -1; }
	int get() const noexcept { return fd_; }

private:
	int fd_;
};

std::string errno_text(const char *what)
{
	return std::string(what) + ": " + std::strerror(errno);
}

// Every loaded BPF program's id.
std::set<__u32> prog_ids()
{
	std::set<__u32> ids;
	__u32 id = 0;

	while (bpf_prog_get_next_id(id, &id) == 0)
		ids.insert(id);
	if (errno != ENOENT)
		throw std::runtime_error(errno_text("BPF_PROG_GET_NEXT_ID"));
	return ids;
}

struct ProgStats {
	std::string name;
	__u64 run_time_ns = 0;
	__u64 run_cnt = 0;
};

ProgStats prog_stats(__u32 id)
{
	Fd fd(bpf_prog_get_fd_by_id(id));
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info);

	if (fd.get() < 0)
		throw std::runtime_error(errno_text("BPF_PROG_GET_FD_BY_ID"));
	if (bpf_obj_get_info_by_fd(fd.get(), &info, &len))
		throw std::runtime_error(errno_text("BPF_OBJ_GET_INFO_BY_FD"));
	return {info.name, info.run_time_ns, info.run_cnt};
}

// The tracers attached for one timed round, and the ids of their programs.
struct Tracers {
	mcp::trace::SchedTracer sched;
	mcp::trace::CacheTracer cache;
	mcp::trace::McpTracer mcp;
	std::map<std::string, std::set<__u32>> ids;	// tracer -> program ids

	// @sched_only: without the cache tracer's perf events (which hosts
	// with a PMU count on every CPU) and the mcp tracer.
	explicit Tracers(bool sched_only = false)
	{
		auto before = prog_ids();
		auto added = [&before]() {
			std::set<__u32> now = prog_ids(), fresh;
			std::set_difference(now.begin(), now.end(), before.begin(), before.end(),
					    std::inserter(fresh, fresh.end()));
			before = now;
			return fresh;
		};

		sched = mcp::trace::SchedTracer::open();
		ids["sched"] = added();
		if (sched_only)
			return;
		cache = mcp::trace::CacheTracer::open();
		ids["cache"] = added();
		try {
			mcp = mcp::trace::McpTracer::open();
			ids["mcp"] = added();
		} catch (const mcp::trace::TraceError &e) {
			if (e.errnum() != ENOENT)
				throw;
			static bool said;
			if (!said)
				std::printf("(mcp tracer not attached: %s)\n", e.what());
			said = true;
		}
	}
};

constexpr const char runqlat_path[] = "/usr/sbin/runqlat";

// Debian's runqlat, system-wide (no -p/-c: the sched tracer of the bench
// does not filter either), running with its programs attached while the
// object lives; its output goes to /dev/null.
class Runqlat {
public:
	Runqlat()
	{
		pid_ = fork();
		if (pid_ < 0)
			throw std::runtime_error(errno_text("fork"));
		if (pid_ == 0) {
			const int null = open("/dev/null", O_RDWR);
			if (null >= 0) {
				dup2(null, STDIN_FILENO);
				dup2(null, STDOUT_FILENO);
				dup2(null, STDERR_FILENO);
			}
			execl(runqlat_path, "runqlat", static_cast<char *>(nullptr));
			_exit(127);
		}
		// Attached when it holds a link for every program it loaded
		// (libbpf-tools attach after loading them all).  Loading parses
		// the kernel's BTF, which takes seconds under TCG.
		const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
		for (;;) {
			const auto [progs, links] = bpf_fds();
			if (links > 0 && links >= progs)
				break;
			int status;
			if (waitpid(pid_, &status, WNOHANG) == pid_) {
				pid_ = -1;
				throw std::runtime_error("runqlat exited before attaching (status " +
							 std::to_string(status) + ")");
			}
			if (std::chrono::steady_clock::now() > deadline) {
				stop();
				throw std::runtime_error("runqlat did not attach within 60 s");
			}
			usleep(5000);
		}
	}
	~Runqlat() { stop(); }
	Runqlat(const Runqlat &) = delete;
	Runqlat &operator=(const Runqlat &) = delete;

	// The ids of its programs ("prog_id:" in the fdinfo of its fds).
	std::set<__u32> ids() const
	{
		std::set<__u32> ids;
		std::error_code ec;
		const std::string dir = "/proc/" + std::to_string(pid_) + "/fdinfo";

		for (const auto &e : std::filesystem::directory_iterator(dir, ec)) {
			std::ifstream in(e.path());
			for (std::string line; std::getline(in, line);)
				if (line.rfind("prog_id:", 0) == 0)
					ids.insert(static_cast<__u32>(std::stoul(line.substr(8))));
		}
		if (ec)
			throw std::runtime_error("reading " + dir + ": " + ec.message());
		return ids;
	}

private:
	// Its open BPF program and link fds.
	std::pair<unsigned, unsigned> bpf_fds() const
	{
		unsigned progs = 0, links = 0;
		std::error_code ec;
		const std::string dir = "/proc/" + std::to_string(pid_) + "/fd";

		for (const auto &e : std::filesystem::directory_iterator(dir, ec)) {
			std::error_code ec2;
			const std::string target = std::filesystem::read_symlink(e.path(), ec2).string();
			if (ec2)
				continue;
			progs += target == "anon_inode:bpf-prog";
			links += target == "anon_inode:bpf_link";
		}
		return {progs, links};
	}

	void stop() noexcept
	{
		if (pid_ <= 0)
			return;
		kill(pid_, SIGINT);	// it prints its histogram and detaches
		waitpid(pid_, nullptr, 0);
		pid_ = -1;
	}

	pid_t pid_ = -1;
};

// Empty programs on the sched tracer's hottest tracepoints, attached while
// the object lives: as tp_btf (BTF-typed, what the tracer uses) or raw_tp.
class EmptyPrograms {
public:
	explicit EmptyPrograms(bool btf)
	{
		struct bpf_insn insns[2] = {};
		insns[0].code = BPF_ALU64 | BPF_MOV | BPF_K;	// r0 = 0
		insns[1].code = BPF_JMP | BPF_EXIT;

		for (const char *tp : {"sched_switch", "sched_wakeup", "sched_wakeup_new"}) {
			struct bpf_prog_load_opts opts = {};
			opts.sz = sizeof(opts);
			int fd;
			if (btf) {
				const int btf_id = libbpf_find_vmlinux_btf_id(tp, BPF_TRACE_RAW_TP);
				if (btf_id <= 0)
					throw std::runtime_error(std::string("no BTF for tracepoint ") + tp);
				opts.expected_attach_type = BPF_TRACE_RAW_TP;
				opts.attach_btf_id = static_cast<__u32>(btf_id);
				fd = bpf_prog_load(BPF_PROG_TYPE_TRACING, "empty_tp_btf", "GPL", insns, 2,
						   &opts);
			} else {
				fd = bpf_prog_load(BPF_PROG_TYPE_RAW_TRACEPOINT, "empty_raw_tp", "GPL",
						   insns, 2, &opts);
			}
			if (fd < 0)
				throw std::runtime_error(errno_text("loading an empty program"));
			progs_.emplace_back(fd);
			const int link = bpf_raw_tracepoint_open(btf ? nullptr : tp, fd);
			if (link < 0)
				throw std::runtime_error(errno_text("attaching an empty program"));
			links_.emplace_back(link);
		}
	}

	// Totals over the programs, named by their kind.
	ProgStats stats() const
	{
		ProgStats sum;
		for (const Fd &fd : progs_) {
			struct bpf_prog_info info = {};
			__u32 len = sizeof(info);
			if (bpf_obj_get_info_by_fd(fd.get(), &info, &len))
				throw std::runtime_error(errno_text("BPF_OBJ_GET_INFO_BY_FD"));
			sum.name = info.name;
			sum.run_time_ns += info.run_time_ns;
			sum.run_cnt += info.run_cnt;
		}
		return sum;
	}

private:
	std::vector<Fd> progs_, links_;
};

// Two threads on CPU @cpu pass a byte back and forth @round_trips times;
// ns per round trip.
double ping_pong_ns(unsigned round_trips, int cpu)
{
	int ping[2], pong[2];

	if (pipe(ping) || pipe(pong))
		throw std::runtime_error(errno_text("pipe"));
	Fd ping_r(ping[0]), ping_w(ping[1]), pong_r(pong[0]), pong_w(pong[1]);
	auto pin = [cpu] {
		cpu_set_t set;
		CPU_ZERO(&set);
		CPU_SET(cpu, &set);
		sched_setaffinity(0, sizeof(set), &set);
	};
	std::thread echo([&] {
		char c;
		pin();
		for (unsigned i = 0; i < round_trips; i++)
			if (read(ping_r.get(), &c, 1) != 1 || write(pong_w.get(), &c, 1) != 1)
				return;
	});
	cpu_set_t saved;
	sched_getaffinity(0, sizeof(saved), &saved);
	pin();
	char c = 'x';
	bool ok = true;
	auto start = std::chrono::steady_clock::now();
	for (unsigned i = 0; i < round_trips && ok; i++)
		ok = write(ping_w.get(), &c, 1) == 1 && read(pong_r.get(), &c, 1) == 1;
	std::chrono::duration<double, std::nano> elapsed = std::chrono::steady_clock::now() - start;
	echo.join();
	sched_setaffinity(0, sizeof(saved), &saved);
	if (!ok)
		throw std::runtime_error(errno_text("ping-pong"));
	return elapsed.count() / round_trips;
}

// The host's load average, as /proc/loadavg gives it (1, 5, 15 minutes).
std::string load_average()
{
	std::ifstream in("/proc/loadavg");
	std::string one, five, fifteen;

	in >> one >> five >> fifteen;
	return one + " " + five + " " + fifteen;
}

double median(std::vector<double> v)
{
	std::sort(v.begin(), v.end());
	const std::size_t n = v.size();
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// Quantile @q of @v (nearest rank).
double quantile(std::vector<double> v, double q)
{
	std::sort(v.begin(), v.end());
	return v[static_cast<std::size_t>(q * (v.size() - 1) + 0.5)];
}

// Per-round ratios side[r] / base[r]: rounds next to each other in time
// share the host's load, which moves single rounds by 2x under TCG.
std::vector<double> paired_ratios(const std::vector<double> &side, const std::vector<double> &base)
{
	std::vector<double> r;
	for (std::size_t i = 0; i < side.size() && i < base.size(); i++)
		r.push_back(side[i] / base[i]);
	return r;
}

double minimum(const std::vector<double> &v)
{
	return *std::min_element(v.begin(), v.end());
}

// One line of the slowdown table: median and spread, ratio of medians to
// @base, the median (quartiles) of the per-round ratios and the ratio of
// the minima (contention only adds time, so the minima are the rounds the
// host disturbed least).
void print_side(const char *what, const std::vector<double> &v, const std::vector<double> &base)
{
	const std::vector<double> r = paired_ratios(v, base);
	std::printf("  %-22s %6.0f ns (median; min %.0f, max %.0f)  medians %.3fx  "
		    "per-round %.3fx (%.3f-%.3f)  minima %.3fx\n", what, median(v), minimum(v),
		    *std::max_element(v.begin(), v.end()), median(v) / median(base), median(r),
		    quantile(r, 0.25), quantile(r, 0.75), minimum(v) / minimum(base));
}

} // namespace

int main(int argc, char **argv)
{
	unsigned round_trips = argc > 1 ? std::strtoul(argv[1], nullptr, 10) : 5000;
	unsigned rounds = argc > 2 ? std::strtoul(argv[2], nullptr, 10) : 40;
	if (round_trips == 0 || rounds == 0) {
		std::fprintf(stderr, "usage: mcp_bpf_bench [ROUND_TRIPS > 0 [ROUNDS > 0]]\n");
		return 2;
	}
	try {
		// tracer -> program name -> totals over the statistics round
		std::map<std::string, std::map<std::string, ProgStats>> costs;
		std::vector<double> bare, empty_btf, empty_raw, sched_only, traced, runqlat;
		const int cpu = sched_getcpu();
		const bool have_runqlat = access(runqlat_path, X_OK) == 0;
		const std::string load_before = load_average();

		ping_pong_ns(round_trips / 10 + 1, cpu);	// warm-up
		// The slowdown, without BPF statistics: counting run time adds two
		// clock reads to every run of every program, which the traced
		// rounds alone would pay.  Each round starts with the next side,
		// so no side always follows the same one.
		std::vector<std::function<void()>> sides = {
			[&] { bare.push_back(ping_pong_ns(round_trips, cpu)); },
			[&] {
				EmptyPrograms e(true);
				empty_btf.push_back(ping_pong_ns(round_trips, cpu));
			},
			[&] {
				EmptyPrograms e(false);
				empty_raw.push_back(ping_pong_ns(round_trips, cpu));
			},
			[&] {
				Tracers t(true);
				sched_only.push_back(ping_pong_ns(round_trips, cpu));
			},
			[&] {
				Tracers t;
				traced.push_back(ping_pong_ns(round_trips, cpu));
			},
		};
		if (have_runqlat)
			sides.emplace_back([&] {
				Runqlat r;
				runqlat.push_back(ping_pong_ns(round_trips, cpu));
			});
		for (unsigned r = 0; r < rounds; r++)
			for (std::size_t i = 0; i < sides.size(); i++)
				sides[(r + i) % sides.size()]();
		// The cost per event: one more round of each with statistics on.
		double stats_round_ns;
		{
			Fd stats(bpf_enable_stats(BPF_STATS_RUN_TIME));
			if (stats.get() < 0)
				throw std::runtime_error(errno_text("BPF_ENABLE_STATS(BPF_STATS_RUN_TIME)") +
							 " (needs root and a kernel >= 5.8)");
			{
				Tracers t;
				stats_round_ns = ping_pong_ns(round_trips, cpu);
				for (const auto &[tracer, ids] : t.ids)
					for (__u32 id : ids) {
						ProgStats st = prog_stats(id);
						ProgStats &sum = costs[tracer][st.name];
						sum.name = st.name;
						sum.run_time_ns += st.run_time_ns;
						sum.run_cnt += st.run_cnt;
					}
			}
			if (have_runqlat) {
				Runqlat r;
				ping_pong_ns(round_trips, cpu);
				for (__u32 id : r.ids()) {
					ProgStats st = prog_stats(id);
					ProgStats &sum = costs["runqlat"][st.name];
					sum.name = st.name;
					sum.run_time_ns += st.run_time_ns;
					sum.run_cnt += st.run_cnt;
				}
			}
			for (bool btf : {true, false}) {
				EmptyPrograms e(btf);
				ping_pong_ns(round_trips, cpu);
				ProgStats st = e.stats();
				costs["empty"][st.name] = st;
			}
		}

		std::printf("per-event cost of each program (kernel BPF statistics over %u round "
			    "trips with the tracers attached: %.0f ns/round trip; runqlat and the "
			    "empty ones in rounds of their own)\n", round_trips, stats_round_ns);
		std::printf("  %-7s %-16s %12s %14s %10s\n", "tracer", "program", "runs",
			    "run_time_ns", "ns/event");
		for (const auto &[tracer, progs] : costs)
			for (const auto &[name, s] : progs)
				std::printf("  %-7s %-16s %12llu %14llu %10s\n", tracer.c_str(),
					    name.c_str(), static_cast<unsigned long long>(s.run_cnt),
					    static_cast<unsigned long long>(s.run_time_ns),
					    s.run_cnt ? std::to_string(s.run_time_ns / s.run_cnt).c_str()
						      : "-");

		// Met only if both estimators say so: the ratio of the medians and
		// the median of the per-round ratios.
		const double ratio = median(traced) / median(bare);
		const double paired = median(paired_ratios(traced, bare));
		const bool met = ratio <= 1.10 && paired <= 1.10;
		std::printf("pipe ping-pong, 2 threads on CPU %d, %u round trips x %u rounds each, "
			    "alternating; ratios to no tracer; load average %s before, %s after\n",
			    cpu, round_trips, rounds, load_before.c_str(), load_average().c_str());
		print_side("no tracer:", bare, bare);
		print_side("empty tp_btf programs:", empty_btf, bare);
		print_side("empty raw_tp programs:", empty_raw, bare);
		print_side("sched tracer only:", sched_only, bare);
		print_side("all tracers:", traced, bare);
		if (have_runqlat)
			print_side("runqlat:", runqlat, bare);
		else
			std::printf("  runqlat: not installed (libbpf-tools)\n");
		std::printf("  slowdown traced/none: %.3fx (per-round median %.3fx); target <= 1.10x: "
			    "%s\n", ratio, paired, met ? "met" : "NOT met");
		// The sched tracer against runqlat, both estimators: the
		// difference of the ratios of the medians, and the median of the
		// per-round differences (the two sides' ratios to the same round's
		// untraced run).
		const double sched_ratio = median(sched_only) / median(bare);
		const double sched_paired = median(paired_ratios(sched_only, bare));
		double rq_ratio = 0, rq_paired = 0, points = 0, points_paired = 0;
		if (have_runqlat) {
			const std::vector<double> s = paired_ratios(sched_only, bare),
						  q = paired_ratios(runqlat, bare);
			std::vector<double> d;
			for (std::size_t i = 0; i < s.size() && i < q.size(); i++)
				d.push_back(100 * (s[i] - q[i]));
			rq_ratio = median(runqlat) / median(bare);
			rq_paired = median(q);
			points = 100 * (sched_ratio - rq_ratio);
			points_paired = median(d);
			const bool close = points <= 3 && points_paired <= 3;
			const bool cheap = sched_ratio <= 1.10 && sched_paired <= 1.10;
			std::printf("  sched tracer vs runqlat: %.3fx vs %.3fx (per-round %.3fx vs %.3fx): "
				    "%+.1f points (per-round median %+.1f); targets <= runqlat + 3 points: "
				    "%s, <= 1.10x: %s\n", sched_ratio, rq_ratio, sched_paired, rq_paired,
				    points, points_paired, close ? "met" : "NOT met",
				    cheap ? "met" : "NOT met");
		}
		std::printf("bench-result bpf round_trips=%u rounds=%u none_ns=%.0f traced_ns=%.0f "
			    "ratio=%.3f paired_ratio=%.3f empty_tp_btf_ns=%.0f empty_raw_tp_ns=%.0f "
			    "sched_only_ns=%.0f min_ratio=%.3f empty_tp_btf_min_ratio=%.3f sched_ratio=%.3f sched_paired_ratio=%.3f", round_trips,
			    rounds, median(bare), median(traced), ratio, paired, median(empty_btf),
			    median(empty_raw), median(sched_only), minimum(traced) / minimum(bare),
			    minimum(empty_btf) / minimum(bare), sched_ratio, sched_paired);
		if (have_runqlat)
			std::printf(" runqlat_ns=%.0f runqlat_ratio=%.3f runqlat_paired_ratio=%.3f "
				    "sched_minus_runqlat_points=%.1f sched_minus_runqlat_paired_points=%.1f",
				    median(runqlat), rq_ratio, rq_paired, points, points_paired);
		std::printf("\n");
	} catch (const std::exception &e) {
		std::fprintf(stderr, "bpf_bench: %s\n", e.what());
		return 1;
	}
	return 0;
}
