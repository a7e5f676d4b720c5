// SPDX-License-Identifier: GPL-2.0-only
// mcpctl trace sched|cache|mcp: the eBPF tracers of libmcp, one report per
// interval: histograms as runqlat prints them, or one JSON object per
// interval (schema in Documentation/observability.rst).
#include <limits>
#include <optional>
#include <ostream>

#include <fmt/format.h>

#include "commands.hpp"
#include "live.hpp"
#include "output.hpp"

namespace mcpctl {

namespace {

struct TraceCliOptions {
	std::string group;
	double interval_s = 1;
	unsigned long count = 0;	// 0: until interrupted
	int pid = 0;
	std::string cgroup;
	bool verbose = false;
	bool histograms = false;	// one histogram per task
};

TraceCliOptions trace_opts;

std::string ms_text(std::uint64_t ns)
{
	return fmt::format("{:.1f} ms", static_cast<double>(ns) / 1e6);
}

nlohmann::ordered_json optional_json(std::optional<double> v)
{
	return v ? nlohmann::ordered_json(*v) : nlohmann::ordered_json(nullptr);
}

} // namespace

std::optional<TraceGroup> parse_trace_group(std::string_view name) noexcept
{
	if (name == "sched")
		return TraceGroup::sched;
	if (name == "cache")
		return TraceGroup::cache;
	if (name == "mcp")
		return TraceGroup::mcp;
	return std::nullopt;
}

std::string format_histogram_text(const mcp::trace::Log2Histogram &h, std::string_view unit)
{
	using mcp::trace::Log2Histogram;
	constexpr unsigned width = 40;
	std::uint64_t max = 0;
	std::size_t last = 0;
	std::string out;

	for (std::size_t i = 0; i < h.slots.size(); i++) {
		max = std::max(max, h.slots[i]);
		if (h.slots[i])
			last = i + 1;
	}
	if (last == 0)
		return fmt::format("     {:<19} : count    distribution\n     (no samples)\n", unit);
	out = fmt::format("     {:<19} : count    distribution\n", unit);
	for (unsigned i = 0; i < last; i++) {
		const auto stars = static_cast<unsigned>(h.slots[i] * width / max);
		out += fmt::format("{:>10} -> {:<10} : {:<8} |{:<{}}|\n", Log2Histogram::slot_low(i),
				   Log2Histogram::slot_high(i), h.slots[i], std::string(stars, '*'),
				   width);
	}
	return out;
}

nlohmann::ordered_json histogram_json(const mcp::trace::Log2Histogram &h)
{
	const bool empty = h.count() == 0;

	return {
		{"unit", "us"},
		{"count", h.count()},
		{"p50", empty ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(h.percentile(50))},
		{"p90", empty ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(h.percentile(90))},
		{"p99", empty ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(h.percentile(99))},
		{"slots", h.slots},
	};
}

std::string format_sched_text(const mcp::trace::SchedSnapshot &s, bool per_task_histograms)
{
	std::string out = fmt::format("run-queue latency, {} tasks, {:.2f} s\n", s.tasks.size(),
				      static_cast<double>(s.interval_ns) / 1e9);

	out += format_histogram_text(s.runq_us, "usecs");
	if (s.runq_us.count())
		out += fmt::format("     p50 {:.1f} us, p99 {:.1f} us\n", s.runq_us.percentile(50),
				   s.runq_us.percentile(99));
	out += fmt::format("\n{:>7} {:>7} {:<16} {:>4} {:>11} {:>6} {:>9} {:>9} {:>6} {:>6} {:>5}\n",
			   "PID", "TGID", "COMM", "NODE", "ON-CPU", "WAITS", "P50(us)", "P99(us)",
			   "MIGR", "XNODE", "NUMA");
	for (const auto &t : s.tasks) {
		const bool waits = t.runq_us.count() > 0;

		out += fmt::format("{:>7} {:>7} {:<16} {:>4} {:>11} {:>6} {:>9} {:>9} {:>6} {:>6} {:>5}\n",
				   t.pid, t.tgid, t.comm, t.node < 0 ? "-" : std::to_string(t.node),
				   ms_text(t.oncpu_ns()), t.runq_us.count(),
				   waits ? fmt::format("{:.1f}", t.runq_us.percentile(50)) : "-",
				   waits ? fmt::format("{:.1f}", t.runq_us.percentile(99)) : "-",
				   t.migrations, t.cross_node_migrations,
				   t.numa_moves + t.numa_swaps + t.numa_sticks);
		if (per_task_histograms && waits) {
			out += fmt::format("\ntid = {} {}\n", t.pid, t.comm);
			out += format_histogram_text(t.runq_us, "usecs");
			out += '\n';
		}
	}
	if (s.dropped_tasks)
		out += fmt::format("({} tasks not recorded: table full)\n", s.dropped_tasks);
	return out;
}

nlohmann::ordered_json sched_json(const mcp::trace::SchedSnapshot &s, std::string_view attach_mode,
				  bool numa_events)
{
	auto tasks = nlohmann::ordered_json::array();

	for (const auto &t : s.tasks)
		tasks.push_back({
			{"pid", t.pid},
			{"tgid", t.tgid},
			{"comm", t.comm},
			{"cgroup_id", t.cgroup_id},
			{"cpu", t.cpu},
			{"node", t.node},
			{"oncpu_ns", t.oncpu_ns()},
			{"oncpu_ns_per_node", t.oncpu_ns_per_node},
			{"runq_us", histogram_json(t.runq_us)},
			{"runq_total_ns", t.runq_total_ns},
			{"runq_max_ns", t.runq_max_ns},
			{"migrations", t.migrations},
			{"cross_node_migrations", t.cross_node_migrations},
			{"migrate_events", t.migrate_events},
			{"numa_moves", t.numa_moves},
			{"numa_swaps", t.numa_swaps},
			{"numa_sticks", t.numa_sticks},
		});
	return {
		{"group", "sched"},
		{"time", utc_now(true)},
		{"interval_ns", s.interval_ns},
		{"attach", attach_mode},
		{"numa_events", numa_events},
		{"runq_us", histogram_json(s.runq_us)},
		{"tasks", tasks},
		{"dropped_tasks", s.dropped_tasks},
	};
}

std::string format_cache_text(const mcp::trace::CacheSnapshot &s)
{
	std::string out = fmt::format("cache, {:.2f} s\n", static_cast<double>(s.interval_ns) / 1e9);

	if (s.llc_available) {
		out += fmt::format("{:>7} {:>7} {:<16} {:>14} {:>14} {:>7}\n", "PID", "TGID", "COMM",
				   "LLC-REFS", "LLC-MISSES", "MISS%");
		for (const auto &t : s.tasks) {
			auto pct = t.miss_percent();
			out += fmt::format("{:>7} {:>7} {:<16} {:>14} {:>14} {:>7}\n", t.pid, t.tgid,
					   t.comm, t.references, t.misses,
					   pct ? fmt::format("{:.2f}", *pct) : "n/a");
		}
	} else {
		out += "LLC: n/a\n";
	}
	if (s.numa_available) {
		auto pct = s.numa.local_percent();
		out += fmt::format("NUMA hinting faults {} (local {}, {}), pages migrated {}\n",
				   s.numa.hint_faults, s.numa.hint_faults_local,
				   pct ? fmt::format("{:.1f}%", *pct) : "n/a", s.numa.pages_migrated);
	} else {
		out += "NUMA balancing counters: n/a (kernel without CONFIG_NUMA_BALANCING)\n";
	}
	return out;
}

nlohmann::ordered_json cache_json(const mcp::trace::CacheSnapshot &s)
{
	auto tasks = nlohmann::ordered_json::array();

	for (const auto &t : s.tasks)
		tasks.push_back({
			{"pid", t.pid},
			{"tgid", t.tgid},
			{"comm", t.comm},
			{"references", t.references},
			{"misses", t.misses},
			{"miss_percent", optional_json(t.miss_percent())},
		});
	return {
		{"group", "cache"},
		{"time", utc_now(true)},
		{"interval_ns", s.interval_ns},
		{"llc", {{"available", s.llc_available},
			 {"message", s.llc_available ? nlohmann::ordered_json(nullptr)
						     : nlohmann::ordered_json(s.llc_message)}}},
		{"tasks", tasks},
		{"numa", {{"available", s.numa_available},
			  {"hint_faults", s.numa.hint_faults},
			  {"hint_faults_local", s.numa.hint_faults_local},
			  {"pages_migrated", s.numa.pages_migrated},
			  {"local_percent", optional_json(s.numa.local_percent())}}},
		{"dropped_tasks", s.dropped_tasks},
	};
}

std::string format_mcp_text(const mcp::trace::McpSnapshot &s)
{
	std::string out = fmt::format("mcp placements, {} decisions, {:.2f} s\n", s.placements.size(),
				      static_cast<double>(s.interval_ns) / 1e9);
	std::uint64_t max = 0;

	for (const auto &c : s.counts)
		max = std::max(max, c.count);
	if (!s.counts.empty())
		out += fmt::format("     {:<6} {:<14} : count    distribution\n", "node", "reason");
	for (const auto &c : s.counts)
		out += fmt::format("     {:<6} {:<14} : {:<8} |{:<40}|\n",
				   c.node < 0 ? "none" : std::to_string(c.node), mcp::to_string(c.reason),
				   c.count, std::string(static_cast<std::size_t>(c.count * 40 / max), '*'));
	for (const auto &p : s.placements)
		out += fmt::format("  pid {} node {} -> {} reason {} origin {}{}\n", p.pid,
				   p.from_node < 0 ? "?" : std::to_string(p.from_node),
				   p.to_node < 0 ? "none" : std::to_string(p.to_node),
				   mcp::to_string(p.reason), mcp::to_string(p.origin),
				   (p.flags & 1U) ? " (dry run)" : "");
	if (!s.jobs_available)
		out += s.jobs_message + "\n";
	else if (s.engines.empty())
		out += "no DMA job finished\n";
	for (const auto &e : s.engines) {
		out += fmt::format("DMA jobs, {} engine {}: {} jobs, {} failed, {} bytes\n",
				   e.dev < 0 ? std::string("host") : "device " + std::to_string(e.dev),
				   e.engine == 0 ? "cpu" : "dma", e.jobs, e.errors, e.bytes);
		out += "   submit -> done\n";
		out += format_histogram_text(e.latency_us, "usecs");
		out += fmt::format("     p50 {:.1f} us, p99 {:.1f} us\n", e.latency_us.percentile(50),
				   e.latency_us.percentile(99));
		if (e.queue_us.count())
			out += fmt::format("   queued (submit -> start): p50 {:.1f} us, p99 {:.1f} us\n",
					   e.queue_us.percentile(50), e.queue_us.percentile(99));
	}
	for (const auto &t : s.job_tasks)
		out += fmt::format("  pid {} (tgid {}): {} jobs, p99 {:.1f} us\n", t.pid, t.tgid, t.jobs,
				   t.latency_us.percentile(99));
	if (s.dropped)
		out += fmt::format("({} placement or job records lost: ring buffer full)\n", s.dropped);
	return out;
}

nlohmann::ordered_json mcp_json(const mcp::trace::McpSnapshot &s)
{
	auto placements = nlohmann::ordered_json::array();
	auto counts = nlohmann::ordered_json::array();

	for (const auto &p : s.placements)
		placements.push_back({
			{"timestamp_ns", p.timestamp_ns},
			{"pid", p.pid},
			{"from_node", p.from_node},
			{"to_node", p.to_node},
			{"home_node", p.home_node},
			{"home_source", mcp::to_string(p.home_source)},
			{"reason", mcp::to_string(p.reason)},
			{"origin", mcp::to_string(p.origin)},
			{"flags", p.flags},
		});
	for (const auto &c : s.counts)
		counts.push_back({{"node", c.node}, {"reason", mcp::to_string(c.reason)}, {"count", c.count}});
	auto engines = nlohmann::ordered_json::array();
	for (const auto &e : s.engines)
		engines.push_back({
			{"dev", e.dev},
			{"engine", e.engine},
			{"jobs", e.jobs},
			{"errors", e.errors},
			{"bytes", e.bytes},
			{"latency_us", histogram_json(e.latency_us)},
			{"queue_us", histogram_json(e.queue_us)},
		});
	auto job_tasks = nlohmann::ordered_json::array();
	for (const auto &t : s.job_tasks)
		job_tasks.push_back({
			{"pid", t.pid},
			{"tgid", t.tgid},
			{"jobs", t.jobs},
			{"latency_us", histogram_json(t.latency_us)},
		});
	return {
		{"group", "mcp"},
		{"time", utc_now(true)},
		{"interval_ns", s.interval_ns},
		{"placements", placements},
		{"counts", counts},
		{"jobs", {{"available", s.jobs_available},
			  {"message", s.jobs_available ? nlohmann::ordered_json(nullptr)
						       : nlohmann::ordered_json(s.jobs_message)}}},
		{"engines", engines},
		{"job_tasks", job_tasks},
		{"dropped", s.dropped},
	};
}

namespace {

// Opens the tracer of @group; on failure prints the message (and with -v
// libbpf's log) and returns false.
template <typename Tracer, typename Options>
bool open_tracer(Tracer &tracer, const Options &options, std::ostream &err)
{
	try {
		tracer = Tracer::open(options);
		return true;
	} catch (const mcp::trace::TraceError &e) {
		print_error(err, e.what());
		if (trace_opts.verbose && !e.log().empty())
			err << e.log() << (e.log().back() == '\n' ? "" : "\n");
	} catch (const mcp::Error &e) {
		print_error(err, e.what());
	}
	return false;
}

// Said on stderr once the programs are attached, as runqlat says it: a
// script can start its workload then (JSON on stdout stays JSON).
void say_attached(std::ostream &err, std::string_view group)
{
	err << "mcpctl: tracing " << group << "... Hit Ctrl-C to end.\n";
	err.flush();
}

// Calls @report once per interval until count or a signal.
template <typename Report>
int trace_loop(Report report)
{
	for (unsigned long i = 0; !stop_requested() && (trace_opts.count == 0 || i < trace_opts.count);
	     i++) {
		sleep_unless_stopped(trace_opts.interval_s);
		report();
	}
	return exit_ok;
}

} // namespace

int run_trace(const GlobalOptions &opts, std::ostream &out, std::ostream &err)
{
	using namespace mcp::trace;
	const TraceCliOptions &to = trace_opts;
	Filter filter;

	filter.pid = to.pid;
	filter.cgroup = to.cgroup;

	catch_stop_signals();

	auto emit = [&](const std::string &text, const nlohmann::ordered_json &doc) {
		if (opts.json)
			print_json(out, doc);
		else
			out << utc_now(false) << '\n' << text << '\n';
		out.flush();
	};

	try {
		switch (*parse_trace_group(to.group)) {
		case TraceGroup::sched: {
			SchedTracer t;
			if (!open_tracer(t, SchedOptions{filter, {}, false}, err))
				return exit_failure;
			say_attached(err, "sched");
			return trace_loop([&] {
				auto s = t.snapshot();
				emit(format_sched_text(s, to.histograms),
				     sched_json(s, t.attach_mode(), t.numa_events()));
			});
		}
		case TraceGroup::cache: {
			CacheTracer t;
			if (!open_tracer(t, CacheOptions{filter, 100}, err))
				return exit_failure;
			say_attached(err, "cache");
			if (!t.llc_available())
				print_error(err, t.llc_message());
			return trace_loop([&] {
				auto s = t.snapshot();
				emit(format_cache_text(s), cache_json(s));
			});
		}
		case TraceGroup::mcp: {
			McpTracer t;
			if (!open_tracer(t, McpOptions{filter}, err))
				return exit_failure;
			say_attached(err, "mcp");
			return trace_loop([&] {
				auto s = t.snapshot();
				emit(format_mcp_text(s), mcp_json(s));
			});
		}
		}
	} catch (const mcp::Error &e) {
		print_error(err, e.what());
		return exit_failure;
	}
	return exit_failure;
}

Command add_trace_command(CLI::App &app)
{
	CLI::App *sub = app.add_subcommand(
		"trace", "Trace scheduling, cache or MCP placement behaviour with eBPF (needs root)");

	sub->add_option("group", trace_opts.group, "sched, cache or mcp")
		->required()
		->check(CLI::IsMember({"sched", "cache", "mcp"}));
	sub->add_option("interval", trace_opts.interval_s, "Seconds per report (default 1)")
		->check(CLI::Range(0.01, 86400.0));
	sub->add_option("count", trace_opts.count, "Number of reports (default: until interrupted)")
		->check(CLI::NonNegativeNumber);
	sub->add_option("-p,--pid", trace_opts.pid, "Only this process (tgid)")
		->check(CLI::Range(1, std::numeric_limits<int>::max()));
	sub->add_option("-c,--cgroup", trace_opts.cgroup,
			"Only tasks directly in this cgroup v2 directory (absolute or under "
			"/sys/fs/cgroup)");
	sub->add_flag("-v,--verbose", trace_opts.verbose,
		      "On a load failure, print libbpf's log (the verifier's output)");
	sub->add_flag("-H,--histograms", trace_opts.histograms,
		      "sched: a run-queue histogram per task, too");
	sub->footer("sched: run-queue latency (log2 us), on-CPU time per node, migrations.\n"
		    "cache: LLC references/misses per task (n/a without a PMU), NUMA locality.\n"
		    "mcp: placement decisions of mcp.ko per node and reason.\n"
		    "With --json, one object per interval (Documentation/observability.rst).");
	return {sub, run_trace};
}

} // namespace mcpctl
