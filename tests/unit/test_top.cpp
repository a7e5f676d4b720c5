// SPDX-License-Identifier: GPL-2.0-only
// mcpctl top: row selection and order, the text frame and the JSON object
// of one interval (schema in Documentation/observability.rst).
#include <cstdint>
#include <string>
#include <vector>

#include <criterion/criterion.h>
#include <nlohmann/json.hpp>

#include "commands.hpp"

namespace {

using mcp::trace::TaskRecord;
using mcpctl::TopFrame;
using mcpctl::TopSort;

constexpr std::uint64_t second_ns = 1000000000ULL;

// A histogram of @n waits in slot @slot (real values [2^slot, 2^(slot+1)) us).
mcp::trace::Log2Histogram waits(unsigned slot, std::uint64_t n)
{
	mcp::trace::Log2Histogram h;
	h.slots.assign(mcp::trace::histogram_slots, 0);
	h.slots[slot] = n;
	return h;
}

TaskRecord task(int pid, const char *comm, std::uint64_t oncpu_ns)
{
	TaskRecord t;
	t.pid = pid;
	t.tgid = pid;
	t.comm = comm;
	t.node = 0;
	t.oncpu_ns = oncpu_ns;
	return t;
}

// Two seconds: "busy" ran 1.5 s on node 1 and waited in slot 4 (16-31 us)
// with 6 cross-node migrations; "idle-ish" ran 0.1 s and waited in slot
// 10; the idle task (pid 0) must not show.
TopFrame sample_frame()
{
	TopFrame f;
	TaskRecord busy = task(300, "busy", 1500000000ULL);
	TaskRecord light = task(200, "idle-ish", 100000000ULL);
	TaskRecord idle = task(0, "swapper/0", 1900000000ULL);

	busy.node = 1;
	busy.runq_us = waits(4, 10);
	busy.cross_node_migrations = 6;
	light.runq_us = waits(10, 2);
	f.interval_ns = 2 * second_ns;
	f.tasks = {idle, light, busy};
	f.llc_available = false;
	f.llc_message = "LLC counters unavailable on this host (no PMU)";
	f.mcp_available = false;
	f.mcp_message = "placements: n/a (mcp.ko not loaded)";
	f.jobs_message = "DMA/job latency per engine unavailable: mcp.ko has no job tracepoints";
	return f;
}

} // namespace

Test(top_format, parse_sort)
{
	cr_expect(mcpctl::parse_top_sort("cpu") == TopSort::cpu);
	cr_expect(mcpctl::parse_top_sort("runq") == TopSort::runq);
	cr_expect(mcpctl::parse_top_sort("migr") == TopSort::migr);
	cr_expect(!mcpctl::parse_top_sort("mem"));
	cr_expect_eq(mcpctl::to_string(TopSort::runq), "runq");
}

Test(top_format, cpu_percent)
{
	TaskRecord t = task(1, "x", 500000000ULL);
	cr_expect_float_eq(mcpctl::top_cpu_percent(t, second_ns), 50.0, 1e-9);
	cr_expect_float_eq(mcpctl::top_cpu_percent(t, 0), 0.0, 1e-9);
}

Test(top_format, rows_sorted_without_idle)
{
	auto f = sample_frame();
	auto by_cpu = mcpctl::top_rows(f.tasks, TopSort::cpu, 0);
	cr_assert_eq(by_cpu.size(), 2);
	cr_expect_eq(by_cpu[0].pid, 300);
	cr_expect_eq(by_cpu[1].pid, 200);

	auto by_runq = mcpctl::top_rows(f.tasks, TopSort::runq, 0);
	cr_assert_eq(by_runq.size(), 2);
	cr_expect_eq(by_runq[0].pid, 200, "the larger p99 first");

	auto by_migr = mcpctl::top_rows(f.tasks, TopSort::migr, 1);
	cr_assert_eq(by_migr.size(), 1, "-n 1 keeps one row");
	cr_expect_eq(by_migr[0].pid, 300);
}

Test(top_format, rows_ties_by_pid)
{
	std::vector<TaskRecord> tasks = {task(9, "b", 10), task(3, "a", 10), task(5, "c", 20)};
	auto rows = mcpctl::top_rows(tasks, TopSort::cpu, 0);
	cr_assert_eq(rows.size(), 3);
	cr_expect_eq(rows[0].pid, 5);
	cr_expect_eq(rows[1].pid, 3);
	cr_expect_eq(rows[2].pid, 9);
}

Test(top_format, text_frame)
{
	auto f = sample_frame();
	std::string got = mcpctl::format_top_text(f, TopSort::cpu, 0, true, "12:00:00");
	std::string want =
		"mcpctl top - 12:00:00, 2.00 s, 2 tasks, sorted by cpu\n"
		"run queue: 12 waits, p50 25.6 us, p99 2048.0 us\n"
		"LLC counters unavailable on this host (no PMU)\n"
		"placements: n/a (mcp.ko not loaded)\n"
		"DMA/job latency per engine unavailable: mcp.ko has no job tracepoints\n"
		"\n"
		"    PID    TGID COMM             NODE   CPU%  RUNQ-P50  RUNQ-P99  XNODE/s LLC-M% PLACE  JOB-P99   BO-MiB\n"
		"    300     300 busy                1   75.0      24.0      32.0      3.0    n/a   n/a      n/a        -\n"
		"    200     200 idle-ish            0    5.0    1536.0    2048.0      0.0    n/a   n/a      n/a        -\n";
	cr_expect_eq(got, want, "got\n%s", got.c_str());
}

Test(top_format, text_no_notes_and_values)
{
	auto f = sample_frame();
	f.llc_available = true;
	f.mcp_available = true;
	f.tasks[2].llc_references = 1000;
	f.tasks[2].llc_misses = 125;
	f.tasks[2].placements = 2;
	f.tasks[1].llc_references = 0;
	f.tasks[1].llc_misses = 0;
	std::string got = mcpctl::format_top_text(f, TopSort::cpu, 1, false, "12:00:00");
	cr_expect(got.find("2 tasks (1 shown)") != std::string::npos, "got\n%s", got.c_str());
	cr_expect(got.find("LLC counters") == std::string::npos, "no notes without @notes");
	// The DMA/job column never shows zeros, only n/a.
	cr_expect(got.find("   12.5     2      n/a        -\n") != std::string::npos, "got\n%s", got.c_str());
	cr_expect(got.find("idle-ish") == std::string::npos);
}

Test(top_format, json_schema)
{
	auto f = sample_frame();
	auto parsed = nlohmann::ordered_json::parse(
		mcpctl::top_json(f, TopSort::cpu, 0, "2026-11-29T12:00:00Z").dump());
	const char *keys[] = {"command", "time", "interval_ns", "sort", "tasks_seen", "llc",
			      "mcp", "jobs", "tasks", "dropped_tasks"};
	const char *task_keys[] = {"pid", "tgid", "comm", "node", "cpu_percent", "oncpu_ns",
				   "runq_waits", "runq_p50_us", "runq_p99_us",
				   "cross_node_migrations", "cross_node_migrations_per_s",
				   "llc_references", "llc_misses", "llc_miss_percent", "placements",
				   "dma_jobs", "job_p99_us", "bo_bytes"};
	std::size_t i = 0;

	for (auto it = parsed.begin(); it != parsed.end(); ++it, ++i) {
		cr_assert_lt(i, sizeof(keys) / sizeof(keys[0]));
		cr_expect_eq(it.key(), keys[i]);
	}
	cr_expect_eq(i, sizeof(keys) / sizeof(keys[0]));
	cr_expect_eq(parsed["command"], "top");
	cr_expect_eq(parsed["time"], "2026-11-29T12:00:00Z");
	cr_expect_eq(parsed["interval_ns"].get<std::uint64_t>(), 2 * second_ns);
	cr_expect_eq(parsed["sort"], "cpu");
	cr_expect_eq(parsed["tasks_seen"], 2);
	cr_expect_eq(parsed["llc"]["available"], false);
	cr_expect_eq(parsed["llc"]["message"], "LLC counters unavailable on this host (no PMU)");
	cr_expect_eq(parsed["mcp"]["available"], false);
	cr_expect_eq(parsed["jobs"]["available"], false);
	cr_expect(parsed["jobs"]["message"].is_string());
	cr_expect_eq(parsed["dropped_tasks"], 0);

	const auto &tasks = parsed["tasks"];
	cr_assert_eq(tasks.size(), 2);
	i = 0;
	for (auto it = tasks[0].begin(); it != tasks[0].end(); ++it, ++i) {
		cr_assert_lt(i, sizeof(task_keys) / sizeof(task_keys[0]));
		cr_expect_eq(it.key(), task_keys[i]);
	}
	cr_expect_eq(i, sizeof(task_keys) / sizeof(task_keys[0]));
	const auto &busy = tasks[0];
	cr_expect_eq(busy["pid"], 300);
	cr_expect_eq(busy["comm"], "busy");
	cr_expect_eq(busy["node"], 1);
	cr_expect_float_eq(busy["cpu_percent"].get<double>(), 75.0, 1e-9);
	cr_expect_eq(busy["runq_waits"], 10);
	cr_expect_float_eq(busy["runq_p50_us"].get<double>(), 24.0, 1e-9);
	cr_expect_float_eq(busy["runq_p99_us"].get<double>(), 32.0, 1e-9);
	cr_expect_eq(busy["cross_node_migrations"], 6);
	cr_expect_float_eq(busy["cross_node_migrations_per_s"].get<double>(), 3.0, 1e-9);
	// n/a is null, never 0.
	cr_expect(busy["llc_references"].is_null());
	cr_expect(busy["llc_miss_percent"].is_null());
	cr_expect(busy["placements"].is_null());
	cr_expect(busy["dma_jobs"].is_null());
	cr_expect(busy["job_p99_us"].is_null());
	cr_expect(busy["bo_bytes"].is_null());
}

// BO-MiB: the buffer memory of a row's process, by tgid; "-" (null) for a
// process whose fds could not be read, 0.0 (0) for one without buffers.
Test(top_format, bo_column)
{
	auto f = sample_frame();
	f.tasks[1].tgid = 150;		// idle-ish: a thread of process 150
	f.bo_bytes = {{300, 12ULL << 20}, {150, 0}};
	std::string got = mcpctl::format_top_text(f, TopSort::cpu, 0, false, "12:00:00");
	cr_expect(got.find("   BO-MiB\n") != std::string::npos, "got\n%s", got.c_str());
	cr_expect(got.find("n/a   n/a      n/a     12.0\n") != std::string::npos, "got\n%s",
		  got.c_str());
	cr_expect(got.find("n/a   n/a      n/a      0.0\n") != std::string::npos, "got\n%s",
		  got.c_str());

	auto j = mcpctl::top_json(f, TopSort::cpu, 0, "t");
	cr_expect_eq(j["tasks"][0]["bo_bytes"].get<std::uint64_t>(), 12ULL << 20);
	cr_expect_eq(j["tasks"][1]["bo_bytes"].get<std::uint64_t>(), 0);

	f.bo_bytes.erase(150);
	j = mcpctl::top_json(f, TopSort::cpu, 0, "t");
	cr_expect(j["tasks"][1]["bo_bytes"].is_null(), "unreadable: null, not 0");
}

Test(top_format, job_p99_of_mcp_tasks)
{
	auto f = sample_frame();
	f.jobs_available = true;
	f.tasks[2].dma_jobs = 4;
	f.tasks[2].dma_latency_us = waits(10, 4);	// [1024, 2048) us
	std::string got = mcpctl::format_top_text(f, TopSort::cpu, 0, true, "12:00:00");
	cr_expect(got.find("DMA/job") == std::string::npos, "no note when available:\n%s",
		  got.c_str());
	// busy submitted jobs; idle-ish none ("-", not 0 or n/a).
	cr_expect(got.find("n/a   n/a   2048.0        -\n") != std::string::npos, "got\n%s", got.c_str());
	cr_expect(got.find("n/a   n/a        -        -\n") != std::string::npos, "got\n%s", got.c_str());

	auto parsed = nlohmann::ordered_json::parse(
		mcpctl::top_json(f, TopSort::cpu, 0, "2026-11-29T12:00:00Z").dump());
	cr_expect_eq(parsed["jobs"]["available"], true);
	cr_expect(parsed["jobs"]["message"].is_null());
	cr_expect_eq(parsed["tasks"][0]["dma_jobs"], 4);
	cr_expect_float_eq(parsed["tasks"][0]["job_p99_us"].get<double>(), 2048.0, 1e-9);
	cr_expect_eq(parsed["tasks"][1]["dma_jobs"], 0);
	cr_expect(parsed["tasks"][1]["job_p99_us"].is_null());
}

Test(top_format, json_values_when_available)
{
	auto f = sample_frame();
	f.llc_available = true;
	f.mcp_available = true;
	f.tasks[2].llc_references = 1000;
	f.tasks[2].llc_misses = 125;
	f.tasks[2].placements = 2;
	f.tasks[1].runq_us = {};
	auto j = mcpctl::top_json(f, TopSort::cpu, 0, "t");
	cr_expect(j["llc"]["message"].is_null());
	cr_expect(j["mcp"]["message"].is_null());
	cr_expect_eq(j["tasks"][0]["llc_references"], 1000);
	cr_expect_float_eq(j["tasks"][0]["llc_miss_percent"].get<double>(), 12.5, 1e-9);
	cr_expect_eq(j["tasks"][0]["placements"], 2);
	cr_expect(j["tasks"][1]["runq_p50_us"].is_null(), "no waits: null, not 0");
	cr_expect_eq(j["tasks"][1]["runq_waits"], 0);
}
