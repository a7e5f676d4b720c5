// SPDX-License-Identifier: GPL-2.0-only
// The eBPF tracers' pure parts: histogram math, placement counts, the
// per-task join, /proc and sysfs parsing, filters, mcpctl trace's text and
// the JSON schemas of Documentation/observability.rst.
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <criterion/criterion.h>
#include <nlohmann/json.hpp>

#include <mcp/mcp.h>

#include "commands.hpp"
#include "helpers.hpp"
#include "trace_internal.hpp"

using mcp::trace::Log2Histogram;
using json = nlohmann::ordered_json;

namespace {

Log2Histogram hist(std::vector<std::uint64_t> slots)
{
	slots.resize(mcp::trace::histogram_slots, 0);
	return Log2Histogram{slots};
}

// ---- a small validator for the schemas of Documentation/observability.rst ----

// "u": unsigned integer, "i": integer, "s": string, "b": boolean,
// "n": number, "u?"/"n?"/"s?": that or null, "a": array, "o": object.
using Schema = std::vector<std::pair<std::string, std::string>>;

std::string check_type(const json &v, const std::string &type)
{
	bool nullable = type.back() == '?';
	std::string t = nullable ? type.substr(0, type.size() - 1) : type;

	if (nullable && v.is_null())
		return "";
	bool ok = (t == "u" && v.is_number_unsigned()) ||
		  (t == "i" && v.is_number_integer()) || (t == "s" && v.is_string()) ||
		  (t == "b" && v.is_boolean()) || (t == "n" && v.is_number()) ||
		  (t == "a" && v.is_array()) || (t == "o" && v.is_object());
	return ok ? "" : "is " + std::string(v.type_name()) + ", not " + type;
}

// Empty if @doc has exactly the keys of @schema, in order, with their types.
std::string check_schema(const json &doc, const Schema &schema, const std::string &where)
{
	if (!doc.is_object())
		return where + " is not an object";
	if (doc.size() != schema.size())
		return where + " has " + std::to_string(doc.size()) + " keys, the schema " +
		       std::to_string(schema.size()) + ": " + doc.dump();
	auto it = doc.begin();
	for (const auto &[key, type] : schema) {
		if (it.key() != key)
			return where + ": key '" + it.key() + "' where '" + key + "' is documented";
		std::string err = check_type(it.value(), type);
		if (!err.empty())
			return where + "." + key + " " + err;
		++it;
	}
	return "";
}

const Schema histogram_schema = {
	{"unit", "s"}, {"count", "u"}, {"p50", "n?"}, {"p90", "n?"}, {"p99", "n?"}, {"slots", "a"},
};

const Schema sched_schema = {
	{"group", "s"}, {"time", "s"}, {"interval_ns", "u"}, {"attach", "s"},
	{"numa_events", "b"}, {"runq_us", "o"}, {"tasks", "a"}, {"dropped_tasks", "u"},
};

const Schema sched_task_schema = {
	{"pid", "i"}, {"tgid", "i"}, {"comm", "s"}, {"cgroup_id", "u"}, {"cpu", "i"},
	{"node", "i"}, {"oncpu_ns", "u"}, {"oncpu_ns_per_node", "a"}, {"runq_us", "o"},
	{"runq_total_ns", "u"}, {"runq_max_ns", "u"}, {"migrations", "u"},
	{"cross_node_migrations", "u"}, {"migrate_events", "u"}, {"numa_moves", "u"}, {"numa_swaps", "u"},
	{"numa_sticks", "u"},
};

const Schema cache_schema = {
	{"group", "s"}, {"time", "s"}, {"interval_ns", "u"}, {"llc", "o"}, {"tasks", "a"},
	{"numa", "o"}, {"dropped_tasks", "u"},
};

const Schema cache_task_schema = {
	{"pid", "i"}, {"tgid", "i"}, {"comm", "s"}, {"references", "u"}, {"misses", "u"},
	{"miss_percent", "n?"},
};

const Schema numa_schema = {
	{"available", "b"}, {"hint_faults", "u"}, {"hint_faults_local", "u"},
	{"pages_migrated", "u"}, {"local_percent", "n?"},
};

const Schema mcp_schema = {
	{"group", "s"}, {"time", "s"}, {"interval_ns", "u"}, {"placements", "a"},
	{"counts", "a"}, {"jobs", "o"}, {"engines", "a"}, {"job_tasks", "a"}, {"dropped", "u"},
};

const Schema engine_jobs_schema = {
	{"dev", "i"}, {"engine", "u"}, {"jobs", "u"}, {"errors", "u"}, {"bytes", "u"},
	{"latency_us", "o"}, {"queue_us", "o"},
};

const Schema task_jobs_schema = {
	{"pid", "i"}, {"tgid", "i"}, {"jobs", "u"}, {"latency_us", "o"},
};

const Schema placement_schema = {
	{"timestamp_ns", "u"}, {"pid", "i"}, {"from_node", "i"}, {"to_node", "i"},
	{"home_node", "i"}, {"home_source", "s"}, {"reason", "s"}, {"origin", "s"},
	{"flags", "u"},
};

const Schema availability_schema = {{"available", "b"}, {"message", "s?"}};

// Validates one `mcpctl trace --json` object of any group.
std::string check_trace_json(const json &doc)
{
	std::string err;
	const std::string group = doc.value("group", "");

	auto check_hist = [](const json &h, const std::string &where) {
		std::string e = check_schema(h, histogram_schema, where);
		if (e.empty() && h["slots"].size() != mcp::trace::histogram_slots)
			e = where + ".slots has " + std::to_string(h["slots"].size()) + " entries";
		return e;
	};

	if (group == "sched") {
		if (!(err = check_schema(doc, sched_schema, "sched")).empty() ||
		    !(err = check_hist(doc["runq_us"], "sched.runq_us")).empty())
			return err;
		for (const auto &t : doc["tasks"])
			if (!(err = check_schema(t, sched_task_schema, "sched.tasks[]")).empty() ||
			    !(err = check_hist(t["runq_us"], "sched.tasks[].runq_us")).empty())
				return err;
		return "";
	}
	if (group == "cache") {
		if (!(err = check_schema(doc, cache_schema, "cache")).empty() ||
		    !(err = check_schema(doc["llc"], availability_schema, "cache.llc")).empty() ||
		    !(err = check_schema(doc["numa"], numa_schema, "cache.numa")).empty())
			return err;
		for (const auto &t : doc["tasks"])
			if (!(err = check_schema(t, cache_task_schema, "cache.tasks[]")).empty())
				return err;
		return "";
	}
	if (group == "mcp") {
		if (!(err = check_schema(doc, mcp_schema, "mcp")).empty() ||
		    !(err = check_schema(doc["jobs"], availability_schema, "mcp.jobs")).empty())
			return err;
		for (const auto &p : doc["placements"])
			if (!(err = check_schema(p, placement_schema, "mcp.placements[]")).empty())
				return err;
		for (const auto &c : doc["counts"])
			if (!(err = check_schema(c, {{"node", "i"}, {"reason", "s"}, {"count", "u"}},
						 "mcp.counts[]")).empty())
				return err;
		for (const auto &e : doc["engines"])
			if (!(err = check_schema(e, engine_jobs_schema, "mcp.engines[]")).empty() ||
			    !(err = check_hist(e["latency_us"], "mcp.engines[].latency_us")).empty() ||
			    !(err = check_hist(e["queue_us"], "mcp.engines[].queue_us")).empty())
				return err;
		for (const auto &t : doc["job_tasks"])
			if (!(err = check_schema(t, task_jobs_schema, "mcp.job_tasks[]")).empty() ||
			    !(err = check_hist(t["latency_us"], "mcp.job_tasks[].latency_us")).empty())
				return err;
		return "";
	}
	return "unknown group '" + group + "'";
}

mcp::trace::SchedSnapshot sample_sched()
{
	mcp::trace::SchedSnapshot s;
	mcp::trace::SchedTask t;

	s.interval_ns = 1000000000;
	t.pid = 101;
	t.tgid = 100;
	t.comm = "llama-worker";
	t.cpu = 2;
	t.node = 1;
	t.runq_us = hist({0, 3, 1});
	t.runq_total_ns = 12000;
	t.runq_max_ns = 5000;
	t.oncpu_ns_per_node = {1000000, 2000000};
	t.migrations = 4;
	t.cross_node_migrations = 2;
	s.tasks.push_back(t);
	s.runq_us = t.runq_us;
	return s;
}

} // namespace

// ---- histograms ----

Test(trace_histogram, slot_bounds_as_runqlat)
{
	cr_expect_eq(Log2Histogram::slot_low(0), 0u);
	cr_expect_eq(Log2Histogram::slot_high(0), 1u);
	cr_expect_eq(Log2Histogram::slot_low(1), 2u);
	cr_expect_eq(Log2Histogram::slot_high(1), 3u);
	cr_expect_eq(Log2Histogram::slot_low(10), 1024u);
	cr_expect_eq(Log2Histogram::slot_high(10), 2047u);
}

Test(trace_histogram, percentiles_interpolate_inside_the_slot)
{
	// 4 samples in [2, 4) us, 4 in [8, 16) us: slots hold truncated whole
	// microseconds, so slot i covers the real values [2^i, 2^(i+1)).
	Log2Histogram h = hist({0, 4, 0, 4});

	cr_expect_eq(h.count(), 8u);
	cr_expect_float_eq(h.percentile(50), 4.0, 1e-9);	// 4th sample: end of slot 1
	cr_expect_float_eq(h.percentile(100), 16.0, 1e-9);
	cr_expect_float_eq(h.percentile(75), 8 + 8 * 0.5, 1e-9);	// 6th: 2 of 4 into slot 3
	cr_expect_float_eq(h.percentile(0), 2 + 2 * 0.25, 1e-9);	// the first sample
	cr_expect_float_eq(h.percentile(250), 16.0, 1e-9);	// clamped
	cr_expect_float_eq(Log2Histogram::slot_end(0), 2.0, 1e-9);
	cr_expect_float_eq(Log2Histogram::slot_end(10), 2048.0, 1e-9);
}

// Slot 0 is [0, 2) us: its median is 1 us, not the 0.5 us of [0, 1].
Test(trace_histogram, slot_zero_covers_zero_to_two_us)
{
	Log2Histogram h = hist({10});

	cr_expect_float_eq(h.percentile(50), 1.0, 1e-9);
	cr_expect_float_eq(h.percentile(90), 1.8, 1e-9);
	cr_expect_float_eq(h.percentile(100), 2.0, 1e-9);
	// 10 in slot 0, 10 in [4, 8): p90 is the 18th sample, 8 of 10 into
	// slot 2.
	Log2Histogram g = hist({10, 0, 10});
	cr_expect_float_eq(g.percentile(50), 2.0, 1e-9);
	cr_expect_float_eq(g.percentile(90), 4 + 4 * 0.8, 1e-9);
}

Test(trace_histogram, empty_and_merge)
{
	Log2Histogram empty = hist({});
	Log2Histogram a = hist({1}), b = hist({1, 0, 5});

	cr_expect_eq(empty.count(), 0u);
	cr_expect_float_eq(empty.percentile(99), 0.0, 1e-9);
	a.merge(b);
	cr_expect_eq(a.slots[0], 2u);
	cr_expect_eq(a.slots[2], 5u);
	cr_expect_eq(a.count(), 7u);
}

Test(trace_histogram, c_percentile_matches)
{
	const std::uint64_t slots[4] = {0, 4, 0, 4};

	cr_expect_float_eq(mcp_trace_hist_percentile(slots, 4, 75), 12.0, 1e-9);
	cr_expect_float_eq(mcp_trace_hist_percentile(nullptr, 4, 75), 0.0, 1e-9);
}

// ---- counts and joins ----

Test(trace_join, placements_counted_per_node_and_reason)
{
	std::vector<mcp::trace::PlacementRecord> recs(4);
	recs[0].to_node = 1, recs[0].reason = mcp::PlaceReason::nearest;
	recs[1].to_node = 0, recs[1].reason = mcp::PlaceReason::memory_local;
	recs[2].to_node = 1, recs[2].reason = mcp::PlaceReason::nearest;
	recs[3].to_node = -1, recs[3].reason = mcp::PlaceReason::unchanged;

	auto counts = mcp::trace::count_placements(recs);
	std::vector<mcp::trace::PlacementCount> want = {
		{-1, mcp::PlaceReason::unchanged, 1},
		{0, mcp::PlaceReason::memory_local, 1},
		{1, mcp::PlaceReason::nearest, 2},
	};
	cr_expect(counts == want);
}

Test(trace_join, rows_per_thread_from_every_group)
{
	mcp::trace::SchedSnapshot sched = sample_sched();
	mcp::trace::CacheSnapshot cache;
	mcp::trace::McpSnapshot mcp_snap;

	cache.llc_available = true;
	cache.tasks.push_back({102, 100, "other", 1000, 10});
	mcp::trace::PlacementRecord p;
	p.pid = 101;
	mcp_snap.placements = {p, p};

	auto rows = mcp::trace::join_tasks(sched, &cache, &mcp_snap);
	cr_assert_eq(rows.size(), 2u);
	cr_expect_eq(rows[0].pid, 101);
	cr_expect_eq(rows[0].oncpu_ns, 3000000u);
	cr_expect_eq(rows[0].node, 1);
	cr_expect_eq(rows[0].placements, 2u);
	cr_expect_eq(rows[0].llc_references.value_or(99), 0u); // measured: none
	cr_expect_eq(rows[1].pid, 102);
	cr_expect_eq(rows[1].llc_misses.value_or(0), 10u);

	cache.llc_available = false;
	rows = mcp::trace::join_tasks(sched, &cache, nullptr);
	cr_expect(!rows[0].llc_references.has_value(), "no PMU: n/a, not 0");
}

// ---- /proc and sysfs ----

Test(trace_proc, vmstat_numa_counters)
{
	const char *text = "nr_free_pages 12\nnuma_hint_faults 40\nnuma_hint_faults_local 30\n"
			   "numa_pages_migrated 7\npgfault 9\n";
	auto n = mcp::trace::detail::parse_numa_vmstat(text);

	cr_assert(n.has_value());
	cr_expect_eq(n->hint_faults, 40u);
	cr_expect_eq(n->hint_faults_local, 30u);
	cr_expect_eq(n->pages_migrated, 7u);
	cr_expect_float_eq(*n->local_percent(), 75.0, 1e-9);
	cr_expect(!mcp::trace::detail::parse_numa_vmstat("nr_free_pages 12\n").has_value());
	// A prefix of another key does not match.
	cr_expect_eq(mcp::trace::detail::vmstat_value("numa_hint_faults_local 3\n",
						      "numa_hint_faults").has_value(), false);

	auto d = mcp::trace::detail::numa_delta({40, 30, 7}, {50, 31, 6});
	cr_expect_eq(d.hint_faults, 10u);
	cr_expect_eq(d.hint_faults_local, 1u);
	cr_expect_eq(d.pages_migrated, 0u); // went backwards: 0
}

Test(trace_proc, cpu_nodes_from_sysfs)
{
	char dir[] = "/tmp/mcp-trace-nodes.XXXXXX";
	cr_assert_not_null(mkdtemp(dir));
	std::string root = dir;
	for (auto [node, list] : {std::pair{0, "0-1"}, std::pair{2, "2,5"}}) {
		std::string d = root + "/node" + std::to_string(node);
		mkdir(d.c_str(), 0755);
		std::ofstream(d + "/cpulist") << list << "\n";
	}
	mkdir((root + "/power").c_str(), 0755);

	auto map = mcp::trace::detail::read_cpu_nodes(root);
	std::vector<unsigned> want = {0, 0, 2, 0, 0, 2};
	cr_expect(map == want);
	std::system(("rm -rf " + root).c_str());
}

Test(trace_filter, cgroup_errors_say_what_to_do)
{
	try {
		mcp::trace::cgroup_id("no-such-group", "/nonexistent-cgroup-mount");
		cr_assert_fail("no error");
	} catch (const mcp::Error &e) {
		cr_expect_eq(e.errnum(), ENOENT);
		cr_expect(std::string(e.what()).find("cgroup v2") != std::string::npos, "%s", e.what());
	}
	try {
		mcp::trace::cgroup_id("/tmp");
		cr_assert_fail("no error");
	} catch (const mcp::Error &e) {
		cr_expect_eq(e.errnum(), EINVAL, "%s", e.what());
	}
}

// ---- C API argument checks ----

Test(trace_c_api, bad_options_are_einval)
{
	struct mcp_trace *t = nullptr;
	struct mcp_trace_opts o = {};

	cr_expect_eq(mcp_trace_open(nullptr, &t), -EINVAL);
	o.size = sizeof(o);
	cr_expect_eq(mcp_trace_open(&o, &t), -EINVAL); // no group
	o.groups = 1U << 7;
	cr_expect_eq(mcp_trace_open(&o, &t), -EINVAL);
	o.groups = MCP_TRACE_SCHED;
	o.flags = 1U << 9;
	cr_expect_eq(mcp_trace_open(&o, &t), -EINVAL);
	o.flags = 0;
	o.pid = -1;
	cr_expect_eq(mcp_trace_open(&o, &t), -EINVAL);
	o.pid = 0;
	o.size = 4;
	cr_expect_eq(mcp_trace_open(&o, &t), -EINVAL);
	cr_expect_null(t);
	cr_expect_eq(mcp_trace_snapshot(nullptr, nullptr), -EINVAL);
	cr_expect_eq(mcp_trace_available(nullptr, MCP_TRACE_SCHED, nullptr, 0), -EINVAL);
	mcp_trace_close(nullptr);
}

// ---- mcpctl trace: text and JSON ----

Test(trace_format, histogram_as_runqlat)
{
	std::string got = mcpctl::format_histogram_text(hist({5, 0, 10}), "usecs");
	std::string want = "     usecs               : count    distribution\n"
			   "         0 -> 1          : 5        |********************                    |\n"
			   "         2 -> 3          : 0        |                                        |\n"
			   "         4 -> 7          : 10       |****************************************|\n";
	cr_expect_eq(got, want, "got:\n%s", got.c_str());
	got = mcpctl::format_histogram_text(hist({}), "usecs");
	cr_expect(got.find("(no samples)") != std::string::npos);
}

Test(trace_format, sched_text_table)
{
	std::string got = mcpctl::format_sched_text(sample_sched(), true);

	cr_expect(got.find("run-queue latency, 1 tasks, 1.00 s") != std::string::npos, "%s", got.c_str());
	cr_expect(got.find("    101     100 llama-worker        1      3.0 ms") != std::string::npos,
		  "%s", got.c_str());
	cr_expect(got.find("tid = 101 llama-worker") != std::string::npos, "%s", got.c_str());
}

Test(trace_format, cache_text_without_pmu)
{
	mcp::trace::CacheSnapshot s;
	s.llc_message = "LLC counters unavailable on this host (perf_event_open: ENOENT)";
	s.numa_available = true;
	s.numa = {10, 5, 2};
	std::string got = mcpctl::format_cache_text(s);
	cr_expect(got.find("LLC: n/a") != std::string::npos, "%s", got.c_str());
	cr_expect(got.find("NUMA hinting faults 10 (local 5, 50.0%), pages migrated 2") !=
		  std::string::npos, "%s", got.c_str());
}

Test(trace_json, sched_object_matches_schema)
{
	json doc = mcpctl::sched_json(sample_sched(), "tp_btf", true);
	std::string err = check_trace_json(doc);

	cr_expect(err.empty(), "%s", err.c_str());
	cr_expect_eq(doc["tasks"][0]["runq_us"]["count"].get<std::uint64_t>(), 4u);
	cr_expect_eq(doc["tasks"][0]["oncpu_ns"].get<std::uint64_t>(), 3000000u);
	// Round trip through text: one line, parses back.
	json back = json::parse(doc.dump());
	cr_expect(back == doc);
	// The validator itself rejects a wrong type and a missing key.
	json bad = doc;
	bad["interval_ns"] = "1s";
	cr_expect(!check_trace_json(bad).empty());
	bad = doc;
	bad.erase("attach");
	cr_expect(!check_trace_json(bad).empty());
}

Test(trace_json, cache_and_mcp_unavailable_parts_are_null_not_zero)
{
	mcp::trace::CacheSnapshot c;
	c.llc_message = "LLC counters unavailable on this host";
	json doc = mcpctl::cache_json(c);
	std::string err = check_trace_json(doc);
	cr_expect(err.empty(), "%s", err.c_str());
	cr_expect_eq(doc["llc"]["available"], false);
	cr_expect_eq(doc["llc"]["message"], "LLC counters unavailable on this host");
	cr_expect(doc["numa"]["local_percent"].is_null());

	mcp::trace::McpSnapshot m;
	mcp::trace::PlacementRecord p;
	p.pid = 7;
	p.to_node = 1;
	p.reason = mcp::PlaceReason::forced;
	m.placements = {p};
	m.counts = mcp::trace::count_placements(m.placements);
	m.jobs_message = "DMA/job latency per engine unavailable";
	doc = mcpctl::mcp_json(m);
	err = check_trace_json(doc);
	cr_expect(err.empty(), "%s", err.c_str());
	cr_expect_eq(doc["counts"][0]["reason"], "forced");
	cr_expect_eq(doc["jobs"]["available"], false);
	cr_expect_eq(doc["jobs"]["message"], "DMA/job latency per engine unavailable");
}

Test(trace_json, mcp_jobs_per_engine_and_task)
{
	mcp::trace::McpSnapshot m;
	mcp::trace::EngineJobs e;
	mcp::trace::TaskJobs t;

	m.jobs_available = true;
	e.dev = -1;
	e.engine = 0;
	e.jobs = 3;
	e.errors = 1;
	e.bytes = 3 << 20;
	e.latency_us.slots.assign(mcp::trace::histogram_slots, 0);
	e.latency_us.slots[10] = 3;	// 1024..2047 us
	e.queue_us.slots.assign(mcp::trace::histogram_slots, 0);
	e.queue_us.slots[2] = 2;
	m.engines = {e};
	t.pid = 42;
	t.tgid = 40;
	t.jobs = 3;
	t.latency_us = e.latency_us;
	m.job_tasks = {t};

	json doc = mcpctl::mcp_json(m);
	std::string err = check_trace_json(doc);
	cr_expect(err.empty(), "%s", err.c_str());
	cr_expect_eq(doc["jobs"]["available"], true);
	cr_expect(doc["jobs"]["message"].is_null());
	cr_expect_eq(doc["engines"][0]["dev"], -1);
	cr_expect_eq(doc["engines"][0]["jobs"], 3);
	cr_expect_eq(doc["engines"][0]["latency_us"]["count"], 3);
	cr_expect_eq(doc["engines"][0]["queue_us"]["count"], 2);
	cr_expect_eq(doc["job_tasks"][0]["pid"], 42);

	std::string text = mcpctl::format_mcp_text(m);
	cr_expect(text.find("DMA jobs, host engine cpu: 3 jobs, 1 failed, 3145728 bytes") !=
			  std::string::npos, "%s", text.c_str());
	cr_expect(text.find("pid 42 (tgid 40): 3 jobs") != std::string::npos, "%s", text.c_str());
	cr_expect(text.find("unavailable") == std::string::npos, "%s", text.c_str());
}

// ---- mcpctl trace: command line ----

Test(trace_cli, groups_and_usage_errors)
{
	cr_expect(mcpctl::parse_trace_group("sched") == mcpctl::TraceGroup::sched);
	cr_expect(mcpctl::parse_trace_group("mcp") == mcpctl::TraceGroup::mcp);
	cr_expect(!mcpctl::parse_trace_group("Sched").has_value());

	for (std::vector<std::string> args : {std::vector<std::string>{"trace"},
					      {"trace", "bogus"},
					      {"trace", "sched", "-p", "0"},
					      {"trace", "sched", "0"},
					      {"trace", "sched", "1", "-3"}}) {
		args.insert(args.begin(), MCPCTL_PATH);
		test::RunResult r = test::run(args);
		cr_expect_eq(r.exit_code, 2, "%s %s: exit %d, %s", args[1].c_str(),
			     args.size() > 2 ? args[2].c_str() : "", r.exit_code, r.err.c_str());
	}
}

Test(trace_cli, missing_cgroup_is_one_line_exit_1)
{
	test::RunResult r = test::run({MCPCTL_PATH, "trace", "sched", "-c",
				       "/nonexistent-mcp-cgroup", "0.1", "1"});

	cr_expect_eq(r.exit_code, 1, "exit %d: %s", r.exit_code, r.err.c_str());
	cr_expect(r.err.rfind("mcpctl: ", 0) == 0 && r.err.find('\n') == r.err.size() - 1,
		  "%s", r.err.c_str());
}

// -p with a process that does not exist: exit 1 with one line, not an
// empty table every interval (trace and top, which share the tracers).
Test(trace_cli, pid_that_does_not_exist_is_an_error)
{
	pid_t gone = fork();
	if (gone == 0)
		_exit(0);
	cr_assert_gt(gone, 0);
	waitpid(gone, nullptr, 0);	// reaped: the pid names no process now
	const std::string pid = std::to_string(gone);
	const bool btf = access("/sys/kernel/btf/vmlinux", R_OK) == 0;

	for (std::vector<std::string> args : {std::vector<std::string>{"trace", "sched", "-p", pid, "0.1", "1"},
					      {"trace", "cache", "-p", pid, "0.1", "1"},
					      {"top", "-p", pid, "0.1", "1"}}) {
		args.insert(args.begin(), MCPCTL_PATH);
		test::RunResult r = test::run(args);

		cr_expect_eq(r.exit_code, 1, "%s: exit %d: %s", args[1].c_str(), r.exit_code,
			     r.err.c_str());
		cr_expect(r.err.rfind("mcpctl: ", 0) == 0 && r.err.find('\n') == r.err.size() - 1,
			  "%s: %s", args[1].c_str(), r.err.c_str());
		if (btf)
			cr_expect(r.err.find("no process " + pid) != std::string::npos, "%s: %s",
				  args[1].c_str(), r.err.c_str());
		cr_expect(r.out.empty(), "%s printed a report: %s", args[1].c_str(), r.out.c_str());
	}
}

// The host's own kernel, where it allows BPF (root with BTF): one live
// interval whose JSON matches the schema.
Test(trace_cli, live_json_matches_schema_where_bpf_works)
{
	if (geteuid() != 0 || access("/sys/kernel/btf/vmlinux", R_OK) != 0)
		cr_skip_test("needs root and kernel BTF");
	for (const char *group : {"sched", "cache"}) {
		test::RunResult r = test::run({MCPCTL_PATH, "trace", group, "0.1", "1", "--json"});

		cr_assert_eq(r.exit_code, 0, "%s: %s", group, r.err.c_str());
		const std::string said = std::string("mcpctl: tracing ") + group + "... Hit Ctrl-C to end.\n";
		cr_expect(r.err.find(said) != std::string::npos, "%s: stderr: %s", group, r.err.c_str());
		json doc = json::parse(r.out);
		std::string err = check_trace_json(doc);
		cr_expect(err.empty(), "%s: %s", group, err.c_str());
	}
}
