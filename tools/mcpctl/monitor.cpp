// SPDX-License-Identifier: GPL-2.0-only
// mcpctl monitor: print the module's placement events as they happen, one
// line each (like `ip monitor`), from the generic netlink family "mcp".
#include <ctime>
#include <limits>
#include <ostream>

#include <fmt/format.h>

#include "commands.hpp"
#include "live.hpp"
#include "output.hpp"

namespace mcpctl {

namespace {

struct MonitorOptions {
	unsigned long count = 0;	// 0: until interrupted
	double timeout_s = 0;		// 0: none
	int pid = 0;			// 0: every task
};

MonitorOptions monitor_opts;

std::int64_t clock_ns(clockid_t clk)
{
	struct timespec ts = {};

	clock_gettime(clk, &ts);
	return static_cast<std::int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

std::string node_text(int node, const char *none)
{
	return node < 0 ? std::string(none) : std::to_string(node);
}

// "2026-11-29T20:31:02.123456Z" for a CLOCK_REALTIME time in ns.
std::string utc_time(std::int64_t realtime_ns, bool date)
{
	const std::time_t sec = static_cast<std::time_t>(realtime_ns / 1000000000);
	const long usec = static_cast<long>((realtime_ns % 1000000000) / 1000);
	struct tm tm = {};
	char buf[32];

	gmtime_r(&sec, &tm);
	std::strftime(buf, sizeof(buf), date ? "%Y-%m-%dT%H:%M:%S" : "%H:%M:%S", &tm);
	return fmt::format("{}.{:06d}{}", buf, usec, date ? "Z" : "");
}

} // namespace

std::string place_reason_text(std::uint32_t reason)
{
	return mcp::to_string(static_cast<mcp::PlaceReason>(reason));
}

std::string format_event_text(const mcp::PlaceEvent &ev, std::int64_t realtime_offset_ns)
{
	const auto realtime = static_cast<std::int64_t>(ev.timestamp_ns) + realtime_offset_ns;

	return fmt::format("{} pid {} ({}) node {} -> {} reason {} origin {}\n",
			   utc_time(realtime, false), ev.pid, ev.comm,
			   node_text(ev.from_node, "?"), node_text(ev.to_node, "none"),
			   place_reason_text(ev.reason), mcp::to_string(ev.origin));
}

nlohmann::ordered_json event_json(const mcp::PlaceEvent &ev, std::int64_t realtime_offset_ns)
{
	const auto realtime = static_cast<std::int64_t>(ev.timestamp_ns) + realtime_offset_ns;

	return {
		{"event", "place"},
		{"time", utc_time(realtime, true)},
		{"timestamp_ns", ev.timestamp_ns},
		{"pid", ev.pid},
		{"comm", ev.comm},
		{"from_node", ev.from_node},
		{"to_node", ev.to_node},
		{"reason", place_reason_text(ev.reason)},
		{"reason_code", ev.reason},
		{"origin", mcp::to_string(ev.origin)},
	};
}

int run_monitor(const GlobalOptions &opts, std::ostream &out, std::ostream &err)
{
	using namespace std::chrono;
	const MonitorOptions &mo = monitor_opts;
	mcp::EventListener listener;

	try {
		listener = mcp::EventListener::open();
	} catch (const mcp::Error &e) {
		print_error(err, e.what());
		return exit_failure;
	}

	// SIGINT/SIGTERM end the wait and exit 0.
	catch_stop_signals();

	// Events carry CLOCK_MONOTONIC; print wall-clock time.
	const std::int64_t offset = clock_ns(CLOCK_REALTIME) - clock_ns(CLOCK_MONOTONIC);
	const bool has_deadline = mo.timeout_s > 0;
	const auto deadline = steady_clock::now() +
			      duration_cast<steady_clock::duration>(duration<double>(mo.timeout_s));
	unsigned long seen = 0;
	std::uint64_t overruns = 0;

	while (!stop_requested() && (mo.count == 0 || seen < mo.count)) {
		milliseconds wait(-1);
		if (has_deadline) {
			auto left = duration_cast<milliseconds>(deadline - steady_clock::now());
			if (left.count() <= 0)
				break;
			wait = left;
		}

		std::optional<mcp::PlaceEvent> ev;
		try {
			ev = listener.next(wait);
		} catch (const mcp::Error &e) {
			print_error(err, e.what());
			return exit_failure;
		}
		if (listener.overruns() != overruns) {
			overruns = listener.overruns();
			print_error(err, "events were lost: the receive buffer overflowed");
		}
		if (!ev || (mo.pid && ev->pid != mo.pid))
			continue;
		seen++;
		if (opts.json)
			print_json(out, event_json(*ev, offset));
		else
			out << format_event_text(*ev, offset);
		out.flush();
	}
	return exit_ok;
}

Command add_monitor_command(CLI::App &app)
{
	CLI::App *sub = app.add_subcommand(
		"monitor", "Print placement events as they happen (generic netlink family 'mcp')");

	sub->add_option("-c,--count", monitor_opts.count, "Exit after N events (0: no limit)")
		->check(CLI::NonNegativeNumber);
	sub->add_option("-p,--pid", monitor_opts.pid, "Only events of this thread id")
		->check(CLI::Range(1, std::numeric_limits<int>::max()));
	sub->add_option("-t,--timeout", monitor_opts.timeout_s,
			"Exit after SEC seconds (0: no limit)")
		->check(CLI::NonNegativeNumber);
	sub->footer("One line per event: time, pid, comm, from -> to node, reason, origin.\n"
		    "With --json, one object per line: {\"event\":\"place\",\"time\",\"timestamp_ns\","
		    "\"pid\",\"comm\",\"from_node\",\"to_node\",\"reason\",\"reason_code\",\"origin\"} "
		    "(see Documentation/events.rst).  Exits 0 after --count events, on --timeout "
		    "or on SIGINT.");
	return {sub, run_monitor};
}

} // namespace mcpctl
