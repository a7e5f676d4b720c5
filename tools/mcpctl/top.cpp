// SPDX-License-Identifier: GPL-2.0-only
// mcpctl top: a live per-task table from the sched, cache and mcp eBPF
// tracers of libmcp, refreshed in place on a terminal and appended frame
// after frame otherwise (like top -b); --json gives one object per interval
// (schema in Documentation/observability.rst).
#include <algorithm>
#include <limits>
#include <map>
#include <ostream>
#include <set>

#include <fmt/format.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <mcp/memory.hpp>

#include "commands.hpp"
#include "live.hpp"
#include "output.hpp"

namespace mcpctl {

namespace {

struct TopCliOptions {
	double interval_s = 1;
	unsigned long count = 0;	// 0: until interrupted
	int pid = 0;
	std::string cgroup;
	std::size_t rows = 0;		// 0: all (a terminal: what fits)
	bool rows_given = false;
	std::string sort = "cpu";
	bool verbose = false;
};

TopCliOptions top_opts;

double seconds(std::uint64_t ns)
{
	return static_cast<double>(ns) / 1e9;
}

bool has_waits(const mcp::trace::TaskRecord &t)
{
	return t.runq_us.count() > 0;
}

std::optional<double> llc_miss_percent(const mcp::trace::TaskRecord &t)
{
	if (!t.llc_references || !t.llc_misses || *t.llc_references == 0)
		return std::nullopt;
	return 100.0 * static_cast<double>(*t.llc_misses) / static_cast<double>(*t.llc_references);
}

nlohmann::ordered_json json_or_null(std::optional<double> v)
{
	return v ? nlohmann::ordered_json(*v) : nlohmann::ordered_json(nullptr);
}

nlohmann::ordered_json json_or_null(std::optional<std::uint64_t> v)
{
	return v ? nlohmann::ordered_json(*v) : nlohmann::ordered_json(nullptr);
}

// The process of a row: its tgid, or the thread itself when unknown.
int row_process(const mcp::trace::TaskRecord &t)
{
	return t.tgid > 0 ? t.tgid : t.pid;
}

// The buffer memory of @t's process, nullopt when it could not be read.
std::optional<std::uint64_t> bo_bytes_of(const TopFrame &f, const mcp::trace::TaskRecord &t)
{
	const auto it = f.bo_bytes.find(row_process(t));
	return it == f.bo_bytes.end() ? std::nullopt : std::optional<std::uint64_t>(it->second);
}

// BO-MiB: one decimal; "-" when the process's fds could not be read.
std::string bo_mib(std::optional<std::uint64_t> bytes)
{
	return bytes ? fmt::format("{:.1f}", static_cast<double>(*bytes) / (1 << 20)) : "-";
}

// The one-line notes of a frame: why a column says n/a.
std::vector<std::string> top_notes(const TopFrame &f)
{
	std::vector<std::string> notes;

	if (!f.llc_available)
		notes.push_back(f.llc_message);
	if (!f.mcp_available)
		notes.push_back(f.mcp_message);
	if (!f.jobs_available)
		notes.push_back(f.jobs_message);
	return notes;
}

} // namespace

std::optional<TopSort> parse_top_sort(std::string_view name) noexcept
{
	if (name == "cpu")
		return TopSort::cpu;
	if (name == "runq")
		return TopSort::runq;
	if (name == "migr")
		return TopSort::migr;
	return std::nullopt;
}

std::string_view to_string(TopSort sort) noexcept
{
	switch (sort) {
	case TopSort::cpu:
		return "cpu";
	case TopSort::runq:
		return "runq";
	case TopSort::migr:
		return "migr";
	}
	return "cpu";
}

double top_cpu_percent(const mcp::trace::TaskRecord &t, std::uint64_t interval_ns) noexcept
{
	if (interval_ns == 0)
		return 0;
	return 100.0 * static_cast<double>(t.oncpu_ns) / static_cast<double>(interval_ns);
}

std::vector<mcp::trace::TaskRecord> top_rows(const std::vector<mcp::trace::TaskRecord> &tasks,
					     TopSort sort, std::size_t rows)
{
	using mcp::trace::TaskRecord;
	std::vector<TaskRecord> out;

	// pid 0: the idle tasks, which top does not show either.
	std::copy_if(tasks.begin(), tasks.end(), std::back_inserter(out),
		     [](const TaskRecord &t) { return t.pid > 0; });
	auto key = [sort](const TaskRecord &t) -> double {
		switch (sort) {
		case TopSort::cpu:
			return static_cast<double>(t.oncpu_ns);
		case TopSort::runq:
			return has_waits(t) ? t.runq_us.percentile(99) : -1.0;
		case TopSort::migr:
			return static_cast<double>(t.cross_node_migrations);
		}
		return 0;
	};
	std::stable_sort(out.begin(), out.end(), [&](const TaskRecord &a, const TaskRecord &b) {
		const double ka = key(a), kb = key(b);
		return ka != kb ? ka > kb : a.pid < b.pid;
	});
	if (rows && out.size() > rows)
		out.resize(rows);
	return out;
}

std::string format_top_text(const TopFrame &f, TopSort sort, std::size_t rows, bool notes,
			    std::string_view time)
{
	const auto shown = top_rows(f.tasks, sort, rows);
	const std::size_t seen = top_rows(f.tasks, sort, 0).size();
	mcp::trace::Log2Histogram all;
	std::string out;

	for (const auto &t : f.tasks)
		if (t.pid > 0)
			all.merge(t.runq_us);
	out = fmt::format("mcpctl top - {}, {:.2f} s, {} tasks{}, sorted by {}\n", time,
			  seconds(f.interval_ns), seen,
			  shown.size() < seen ? fmt::format(" ({} shown)", shown.size()) : "",
			  to_string(sort));
	if (all.count())
		out += fmt::format("run queue: {} waits, p50 {:.1f} us, p99 {:.1f} us\n", all.count(),
				   all.percentile(50), all.percentile(99));
	else
		out += "run queue: no waits\n";
	if (f.dropped_tasks)
		out += fmt::format("({} tasks not recorded: table full)\n", f.dropped_tasks);
	if (notes)
		for (const auto &n : top_notes(f))
			out += n + '\n';
	out += fmt::format("\n{:>7} {:>7} {:<16} {:>4} {:>6} {:>9} {:>9} {:>8} {:>6} {:>5} {:>8} {:>8}\n",
			   "PID", "TGID", "COMM", "NODE", "CPU%", "RUNQ-P50", "RUNQ-P99", "XNODE/s",
			   "LLC-M%", "PLACE", "JOB-P99", "BO-MiB");
	for (const auto &t : shown) {
		const auto miss = llc_miss_percent(t);
		std::string llc = !f.llc_available ? "n/a" : miss ? fmt::format("{:.1f}", *miss) : "-";

		out += fmt::format("{:>7} {:>7} {:<16} {:>4} {:>6.1f} {:>9} {:>9} {:>8.1f} {:>6} {:>5} {:>8} {:>8}\n",
				   t.pid, t.tgid ? std::to_string(t.tgid) : "-", t.comm,
				   t.node < 0 ? "-" : std::to_string(t.node),
				   top_cpu_percent(t, f.interval_ns),
				   has_waits(t) ? fmt::format("{:.1f}", t.runq_us.percentile(50)) : "-",
				   has_waits(t) ? fmt::format("{:.1f}", t.runq_us.percentile(99)) : "-",
				   f.interval_ns ? static_cast<double>(t.cross_node_migrations) /
							   seconds(f.interval_ns)
						 : 0.0,
				   llc, f.mcp_available ? std::to_string(t.placements) : "n/a",
				   !f.jobs_available ? "n/a"
				   : t.dma_jobs	     ? fmt::format("{:.1f}", t.dma_latency_us.percentile(99))
						     : "-",
				   bo_mib(bo_bytes_of(f, t)));
	}
	return out;
}

nlohmann::ordered_json top_json(const TopFrame &f, TopSort sort, std::size_t rows,
				std::string_view time)
{
	const auto shown = top_rows(f.tasks, sort, rows);
	auto tasks = nlohmann::ordered_json::array();
	auto message = [](bool available, const std::string &m) {
		return available ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(m);
	};

	for (const auto &t : shown) {
		const bool waits = has_waits(t);
		const double per_s = f.interval_ns ? static_cast<double>(t.cross_node_migrations) /
							     seconds(f.interval_ns)
						   : 0.0;

		tasks.push_back({
			{"pid", t.pid},
			{"tgid", t.tgid},
			{"comm", t.comm},
			{"node", t.node},
			{"cpu_percent", top_cpu_percent(t, f.interval_ns)},
			{"oncpu_ns", t.oncpu_ns},
			{"runq_waits", t.runq_us.count()},
			{"runq_p50_us", waits ? nlohmann::ordered_json(t.runq_us.percentile(50))
					      : nlohmann::ordered_json(nullptr)},
			{"runq_p99_us", waits ? nlohmann::ordered_json(t.runq_us.percentile(99))
					      : nlohmann::ordered_json(nullptr)},
			{"cross_node_migrations", t.cross_node_migrations},
			{"cross_node_migrations_per_s", per_s},
			{"llc_references", json_or_null(t.llc_references)},
			{"llc_misses", json_or_null(t.llc_misses)},
			{"llc_miss_percent", json_or_null(llc_miss_percent(t))},
			{"placements", f.mcp_available ? nlohmann::ordered_json(t.placements)
						       : nlohmann::ordered_json(nullptr)},
			{"dma_jobs", f.jobs_available ? nlohmann::ordered_json(t.dma_jobs)
						      : nlohmann::ordered_json(nullptr)},
			{"job_p99_us", f.jobs_available && t.dma_jobs
					       ? nlohmann::ordered_json(t.dma_latency_us.percentile(99))
					       : nlohmann::ordered_json(nullptr)},
			{"bo_bytes", json_or_null(bo_bytes_of(f, t))},
		});
	}
	return {
		{"command", "top"},
		{"time", time},
		{"interval_ns", f.interval_ns},
		{"sort", to_string(sort)},
		{"tasks_seen", top_rows(f.tasks, sort, 0).size()},
		{"llc", {{"available", f.llc_available}, {"message", message(f.llc_available, f.llc_message)}}},
		{"mcp", {{"available", f.mcp_available}, {"message", message(f.mcp_available, f.mcp_message)}}},
		{"jobs", {{"available", f.jobs_available},
			  {"message", message(f.jobs_available, f.jobs_message)}}},
		{"tasks", tasks},
		{"dropped_tasks", f.dropped_tasks},
	};
}

namespace {

// The buffer memory of the processes of @rows, each read once; a process
// that is gone or whose fds may not be read has no entry.
std::map<int, std::uint64_t> buffer_memory_by_process(const std::vector<mcp::trace::TaskRecord> &rows)
{
	std::map<int, std::uint64_t> out;
	std::set<int> tried;

	for (const auto &t : rows) {
		const int pid = row_process(t);

		if (!tried.insert(pid).second)
			continue;
		try {
			out[pid] = mcp::process_buffer_memory(pid).total_bytes();
		} catch (const mcp::Error &) {
			// Exited since the snapshot, or not ours to read: "-".
		}
	}
	return out;
}

// Terminal rows left for the table below a frame's header, or 0 (all)
// when stdout is no terminal.
std::size_t terminal_rows()
{
	struct winsize ws = {};

	if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) < 0 || ws.ws_row == 0)
		return 0;
	return ws.ws_row > 14 ? ws.ws_row - 9U : 5U;
}

// Hides the cursor while a live view draws, shows it again however the
// view ends.
class LiveScreen {
public:
	explicit LiveScreen(std::ostream &out) : out_(out)
	{
		out_ << "\033[?25l\033[H\033[2J";
		out_.flush();
	}
	~LiveScreen()
	{
		out_ << "\033[?25h";
		out_.flush();
	}
	LiveScreen(const LiveScreen &) = delete;
	LiveScreen &operator=(const LiveScreen &) = delete;

	// Redraws from the top-left corner, clearing what the last frame left.
	void draw(const std::string &frame)
	{
		std::string text = "\033[H";

		for (std::size_t pos = 0; pos < frame.size();) {
			std::size_t nl = frame.find('\n', pos);
			if (nl == std::string::npos)
				nl = frame.size();
			text.append(frame, pos, nl - pos);
			text += "\033[K\n";
			pos = nl + 1;
		}
		text += "\033[J";
		out_ << text;
		out_.flush();
	}

private:
	std::ostream &out_;
};

} // namespace

int run_top(const GlobalOptions &opts, std::ostream &out, std::ostream &err)
{
	using namespace mcp::trace;
	const TopCliOptions &to = top_opts;
	const TopSort sort = parse_top_sort(to.sort).value_or(TopSort::cpu);
	Filter filter;
	SchedTracer sched;
	CacheTracer cache;
	McpTracer mcp;
	std::string mcp_message;

	filter.pid = to.pid;
	filter.cgroup = to.cgroup;

	catch_stop_signals();

	try {
		sched = SchedTracer::open(SchedOptions{filter, {}, false});
		cache = CacheTracer::open(CacheOptions{filter, 100});
		try {
			mcp = McpTracer::open(McpOptions{filter});
		} catch (const TraceError &e) {
			// Without mcp.ko the MCP columns say n/a; top still runs.
			if (e.errnum() != ENOENT)
				throw;
			mcp_message = fmt::format("placements: n/a ({})", e.what());
		}
	} catch (const TraceError &e) {
		print_error(err, e.what());
		if (to.verbose && !e.log().empty())
			err << e.log() << (e.log().back() == '\n' ? "" : "\n");
		return exit_failure;
	} catch (const mcp::Error &e) {
		print_error(err, e.what());
		return exit_failure;
	}

	try {
		// The first interval starts now, not when the sched tracer was
		// opened: loading the others took time (seconds under TCG).
		sched.snapshot();
		cache.snapshot();
		if (mcp.is_open())
			mcp.snapshot();
	} catch (const mcp::Error &e) {
		print_error(err, e.what());
		return exit_failure;
	}

	const bool live = !opts.json && isatty(STDOUT_FILENO);
	std::optional<LiveScreen> screen;
	if (live)
		screen.emplace(out);

	try {
		for (unsigned long i = 0; !stop_requested() && (to.count == 0 || i < to.count); i++) {
			sleep_unless_stopped(to.interval_s);
			TopFrame f;
			auto s = sched.snapshot();
			auto c = cache.snapshot();
			std::optional<McpSnapshot> m;

			if (mcp.is_open())
				m = mcp.snapshot();
			f.interval_ns = s.interval_ns;
			f.tasks = join_tasks(s, &c, m ? &*m : nullptr);
			f.llc_available = c.llc_available;
			f.llc_message = c.llc_message;
			f.mcp_available = mcp.is_open();
			f.mcp_message = mcp_message;
			f.jobs_available = m && m->jobs_available;
			f.jobs_message = m ? m->jobs_message
					   : "DMA/job latency unavailable: mcp.ko not loaded";
			f.dropped_tasks = s.dropped_tasks + c.dropped_tasks;

			const std::size_t rows = to.rows_given ? to.rows : live ? terminal_rows() : 0;
			f.bo_bytes = buffer_memory_by_process(top_rows(f.tasks, sort, rows));
			if (opts.json)
				print_json(out, top_json(f, sort, rows, utc_now(true)));
			else if (live)
				screen->draw(format_top_text(f, sort, rows, true, utc_now(false)));
			else
				out << format_top_text(f, sort, rows, i == 0, utc_now(false)) << '\n';
			out.flush();
		}
	} catch (const mcp::Error &e) {
		screen.reset();
		print_error(err, e.what());
		return exit_failure;
	}
	return exit_ok;
}

Command add_top_command(CLI::App &app)
{
	CLI::App *sub = app.add_subcommand(
		"top", "A live per-task table of CPU, run-queue latency, migrations, LLC misses and "
		       "placements (eBPF; needs root)");

	sub->add_option("interval", top_opts.interval_s, "Seconds per refresh (default 1)")
		->check(CLI::Range(0.01, 86400.0));
	sub->add_option("count", top_opts.count, "Number of refreshes (default: until interrupted)")
		->check(CLI::NonNegativeNumber);
	sub->add_option("-p,--pid", top_opts.pid, "Only this process (tgid)")
		->check(CLI::Range(1, std::numeric_limits<int>::max()));
	sub->add_option("-c,--cgroup", top_opts.cgroup,
			"Only tasks directly in this cgroup v2 directory (absolute or under "
			"/sys/fs/cgroup)");
	sub->add_option_function<std::size_t>(
		   "-n,--rows",
		   [](const std::size_t &n) {
			   top_opts.rows = n;
			   top_opts.rows_given = true;
		   },
		   "Show at most this many tasks (0: all; default: all, or what fits the terminal)")
		->check(CLI::NonNegativeNumber);
	sub->add_option("--sort", top_opts.sort, "Order by cpu (default), runq (p99) or migr")
		->check(CLI::IsMember({"cpu", "runq", "migr"}));
	sub->add_flag("-v,--verbose", top_opts.verbose,
		      "On a load failure, print libbpf's log (the verifier's output)");
	sub->footer("One row per thread: CPU% (100 = one CPU), run-queue latency p50/p99 in us,\n"
		    "cross-node migrations per second, LLC miss % (n/a without a PMU), MCP\n"
		    "placements (n/a without mcp.ko), DMA/job p99 in us of the jobs it submitted\n"
		    "(n/a without mcp.ko's job tracepoints) and the MiB of MCP buffers its process\n"
		    "holds (BO-MiB, from /proc/PID/fdinfo).\n"
		    "With --json, one object per interval (Documentation/observability.rst).");
	return {sub, run_top};
}

} // namespace mcpctl
