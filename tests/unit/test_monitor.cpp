// SPDX-License-Identifier: GPL-2.0-only
// mcpctl monitor: the text line and the JSON object of one event.
#include <cerrno>
#include <cstdint>
#include <string>

#include <criterion/criterion.h>
#include <nlohmann/json.hpp>

#include <linux/mcp.h>

#include "commands.hpp"
#include "helpers.hpp"

namespace {

mcp::PlaceEvent sample_event()
{
	mcp::PlaceEvent ev;
	ev.pid = 4242;
	ev.comm = "llama-worker";
	ev.from_node = 0;
	ev.to_node = 1;
	ev.reason = MCP_PLACE_REASON_NEAREST;
	ev.origin = mcp::PlaceOrigin::ioctl;
	ev.timestamp_ns = 123456789012345ULL; // 1970-01-02 10:17:36.789012345
	return ev;
}

} // namespace

Test(monitor_format, text_line)
{
	std::string got = mcpctl::format_event_text(sample_event(), 0);
	cr_expect_eq(got, "10:17:36.789012 pid 4242 (llama-worker) node 0 -> 1 reason nearest origin ioctl\n",
		     "got %s", got.c_str());
}

Test(monitor_format, text_unknown_nodes_and_offset)
{
	mcp::PlaceEvent ev = sample_event();
	ev.from_node = -1;
	ev.to_node = -1;
	ev.reason = 77;
	ev.origin = mcp::PlaceOrigin::rebalancer;
	// offset: one hour later in wall-clock time
	std::string got = mcpctl::format_event_text(ev, 3600LL * 1000000000LL);
	cr_expect_eq(got, "11:17:36.789012 pid 4242 (llama-worker) node ? -> none reason unknown origin rebalancer\n",
		     "got %s", got.c_str());
}

Test(monitor_format, json_schema)
{
	auto j = mcpctl::event_json(sample_event(), 0);
	// One line, round-trips, keys in the documented order.
	auto parsed = nlohmann::ordered_json::parse(j.dump());
	const char *keys[] = {"event", "time", "timestamp_ns", "pid", "comm", "from_node",
			      "to_node", "reason", "reason_code", "origin"};
	std::size_t i = 0;
	for (auto it = parsed.begin(); it != parsed.end(); ++it, ++i) {
		cr_assert_lt(i, sizeof(keys) / sizeof(keys[0]));
		cr_expect_eq(it.key(), keys[i]);
	}
	cr_expect_eq(i, sizeof(keys) / sizeof(keys[0]));
	cr_expect_eq(parsed["event"], "place");
	cr_expect_eq(parsed["time"], "1970-01-02T10:17:36.789012Z");
	cr_expect_eq(parsed["timestamp_ns"].get<std::uint64_t>(), 123456789012345ULL);
	cr_expect_eq(parsed["pid"], 4242);
	cr_expect_eq(parsed["comm"], "llama-worker");
	cr_expect_eq(parsed["from_node"], 0);
	cr_expect_eq(parsed["to_node"], 1);
	cr_expect_eq(parsed["reason"], "nearest");
	cr_expect_eq(parsed["reason_code"], 2);
	cr_expect_eq(parsed["origin"], "ioctl");
}

Test(monitor_format, json_escapes_comm)
{
	mcp::PlaceEvent ev = sample_event();
	ev.comm = "a\"b\\c";
	auto parsed = nlohmann::json::parse(mcpctl::event_json(ev, 0).dump());
	cr_expect_eq(parsed["comm"], "a\"b\\c");
	cr_expect_eq(parsed["from_node"], 0);
}

// The build host's kernel has no mcp module, hence no "mcp" family.
Test(monitor_cli, without_module_exits_1_with_one_line)
{
	test::RunResult r = test::run({MCPCTL_PATH, "monitor", "--count", "1"}, {});

	cr_expect_eq(r.exit_code, 1, "stderr: %s", r.err.c_str());
	cr_expect(r.err.starts_with("mcpctl: the mcp kernel module is not loaded"), "stderr: %s",
		  r.err.c_str());
	cr_expect(r.err.find("modprobe mcp") != std::string::npos, "stderr: %s", r.err.c_str());
	cr_expect_eq(r.err.find('\n'), r.err.size() - 1, "stderr: %s", r.err.c_str());
	cr_expect(r.out.empty(), "stdout: %s", r.out.c_str());
}

Test(monitor_cli, bad_count_or_pid_exits_2)
{
	for (const char *bad : {"-1", "x"}) {
		test::RunResult r = test::run({MCPCTL_PATH, "monitor", "--count", bad}, {});
		cr_expect_eq(r.exit_code, 2, "--count %s: %s", bad, r.err.c_str());
	}
	for (const char *bad : {"0", "-5", "x"}) {
		test::RunResult r = test::run({MCPCTL_PATH, "monitor", "--pid", bad}, {});
		cr_expect_eq(r.exit_code, 2, "--pid %s: %s", bad, r.err.c_str());
	}
}

Test(monitor_c_api, open_without_module_is_enoent)
{
	struct mcp_events *ev = nullptr;

	cr_expect_eq(mcp_events_open(&ev), -ENOENT);
	cr_expect_null(ev);
	cr_expect(std::string(mcp_strerror_last()).find("not loaded") != std::string::npos, "%s",
		  mcp_strerror_last());
}
