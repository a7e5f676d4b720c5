// SPDX-License-Identifier: GPL-2.0-only
// Placement without a kernel: /proc/PID/maps parsing and page sampling,
// histogram counting, option -> flag mapping, error sentences, decoding the
// kernel's reply, the C API conversions and mcpctl's place output.
#include <cerrno>
#include <string>
#include <vector>

#include <criterion/criterion.h>
#include <nlohmann/json.hpp>

#include "commands.hpp"
#include "internal.hpp"

using mcp::detail::MapRange;

static const char *maps_text =
	"55d0c0a00000-55d0c0a02000 r--p 00000000 08:01 1234  /usr/bin/cat\n"
	"55d0c0a02000-55d0c0a06000 r-xp 00002000 08:01 1234  /usr/bin/cat\n"
	"55d0c0c00000-55d0c0c21000 rw-p 00000000 00:00 0     [heap]\n"
	"7f0000000000-7f0000010000 rw-p 00000000 00:00 0 \n"
	"7f0000010000-7f0000011000 ---p 00000000 00:00 0 \n"
	"7f0000020000-7f0000022000 rw-s 00000000 00:05 77    /dev/zero (deleted)\n"
	"7ffd00000000-7ffd00021000 rw-p 00000000 00:00 0     [stack]\n"
	"7ffd00100000-7ffd00102000 r--p 00000000 00:00 0     [vvar]\n"
	"7ffd00102000-7ffd00104000 r-xp 00000000 00:00 0     [vdso]\n"
	"ffffffffff600000-ffffffffff601000 --xp 00000000 00:00 0 [vsyscall]\n"
	"garbage line\n"
	"10-5 rw-p 0 00:00 0\n";

Test(place_maps, parses_lines_and_skips_garbage)
{
	std::vector<MapRange> m = mcp::detail::parse_maps(maps_text);

	cr_assert_eq(m.size(), 10u);
	cr_expect_eq(m[0].start, 0x55d0c0a00000ULL);
	cr_expect_eq(m[0].end, 0x55d0c0a02000ULL);
	cr_expect_eq(m[0].perms, "r--p");
	cr_expect_eq(m[0].path, "/usr/bin/cat");
	cr_expect_eq(m[2].path, "[heap]");
	cr_expect_eq(m[3].path, "");
	cr_expect_eq(m[5].path, "/dev/zero (deleted)");
	cr_expect_eq(m[9].path, "[vsyscall]");
	cr_expect_eq(m[9].end, 0xffffffffff601000ULL);
}

Test(place_maps, sample_worthy_mappings)
{
	std::vector<MapRange> m = mcp::detail::parse_maps(maps_text);
	const bool want[] = {true, true, true, true, false, true, true, false, false, false};

	for (std::size_t i = 0; i < m.size(); i++)
		cr_expect_eq(mcp::detail::sample_worthy(m[i]), want[i], "line %zu (%s %s)", i,
			     m[i].perms.c_str(), m[i].path.c_str());
}

Test(place_maps, takes_every_page_when_few)
{
	std::vector<MapRange> m = mcp::detail::parse_maps(
		"1000-3000 rw-p 0 00:00 0\n"
		"ffffffffff600000-ffffffffff601000 --xp 00000000 00:00 0 [vsyscall]\n"
		"8000-9000 r--p 0 08:01 1 /lib/x.so\n");
	std::vector<std::uint64_t> a = mcp::detail::sample_addresses(m, 4096, 4096);

	cr_assert_eq(a.size(), 3u);
	cr_expect_eq(a[0], 0x1000u);
	cr_expect_eq(a[1], 0x2000u);
	cr_expect_eq(a[2], 0x8000u);
}

Test(place_maps, bounded_and_spread)
{
	// 1000 pages + 3000 pages, sample 100: 25 from the first range.
	std::vector<MapRange> m = {{0x100000, 0x100000 + 1000 * 4096ULL, "rw-p", ""},
				   {0x10000000, 0x10000000 + 3000 * 4096ULL, "rw-p", "[heap]"}};
	std::vector<std::uint64_t> a = mcp::detail::sample_addresses(m, 100, 4096);
	unsigned first = 0;

	cr_assert_eq(a.size(), 100u);
	for (std::size_t i = 0; i < a.size(); i++) {
		cr_expect_eq(a[i] % 4096, 0u);
		if (i)
			cr_expect_gt(a[i], a[i - 1]);
		if (a[i] < 0x10000000)
			first++;
		else
			cr_expect_lt(a[i], 0x10000000 + 3000 * 4096ULL);
	}
	cr_expect_eq(first, 25u);
	cr_expect(mcp::detail::sample_addresses(m, 0, 4096).empty());
	cr_expect(mcp::detail::sample_addresses({}, 100, 4096).empty());
}

Test(place_histogram, counts_per_node)
{
	const std::vector<int> status = {0, 1, 1, -ENOENT, 3, 1, -EFAULT, 0};
	mcp::PageHistogram h = mcp::detail::count_histogram(status, 2);

	cr_expect_eq(h.sampled, 8u);
	cr_expect_eq(h.resident, 6u);
	cr_assert_eq(h.pages_per_node.size(), 4u);
	cr_expect_eq(h.pages_per_node[0], 2u);
	cr_expect_eq(h.pages_per_node[1], 3u);
	cr_expect_eq(h.pages_per_node[2], 0u);
	cr_expect_eq(h.pages_per_node[3], 1u);

	h = mcp::detail::count_histogram(std::vector<int>{-ENOENT}, 4);
	cr_expect_eq(h.resident, 0u);
	cr_expect_eq(h.pages_per_node.size(), 4u);
}

Test(place_histogram, samples_own_pages)
{
	// move_pages(2) on ourselves needs no privilege and no mcp module.
	std::vector<char> buf(1 << 20, 1);
	mcp::PageHistogram h = mcp::sample_page_histogram(0, 256);

	cr_expect_gt(h.sampled, 0u);
	cr_expect_leq(h.sampled, 256u);
	cr_expect_gt(h.resident, 0u);
	std::uint64_t sum = 0;
	for (std::uint64_t n : h.pages_per_node)
		sum += n;
	cr_expect_eq(sum, h.resident);
}

Test(place_histogram, missing_pid_is_esrch)
{
	try {
		mcp::sample_page_histogram(0x3ffffff0, 16);
		cr_assert_fail("no exception");
	} catch (const mcp::Error &e) {
		cr_expect_eq(e.errnum(), ESRCH, "%s", e.what());
	}
}

Test(place_options, flags)
{
	mcp::PlaceOptions o;

	cr_expect_eq(mcp::detail::place_flags(o), 0u);
	o.dry_run = true;
	cr_expect_eq(mcp::detail::place_flags(o), (std::uint32_t)MCP_PLACE_DRY_RUN);
	o = {};
	o.force = o.keep = o.strict = true;
	o.node = 0;
	cr_expect_eq(mcp::detail::place_flags(o),
		     (std::uint32_t)(MCP_PLACE_FORCE | MCP_PLACE_KEEP | MCP_PLACE_STRICT |
				     MCP_PLACE_NODE));
}

Test(place_options, c_options)
{
	struct mcp_place_opts c = {sizeof(c), MCP_PLACE_OPT_DRY_RUN | MCP_PLACE_OPT_NODE |
					       MCP_PLACE_OPT_NO_HISTOGRAM, 3, 0, 0};
	mcp::PlaceOptions o = mcp::detail::place_options_from_c(c);

	cr_expect(o.dry_run);
	cr_expect(!o.force && !o.keep && !o.strict);
	cr_expect(!o.histogram);
	cr_assert(o.node.has_value());
	cr_expect_eq(*o.node, 3u);
	cr_expect_eq(o.sample_pages, 4096u);
	c.flags = MCP_PLACE_OPT_KEEP;
	c.sample_pages = 64;
	o = mcp::detail::place_options_from_c(c);
	cr_expect(o.keep && o.histogram && !o.node);
	cr_expect_eq(o.sample_pages, 64u);
	cr_expect_eq(mcp::detail::place_flags(o), (std::uint32_t)MCP_PLACE_KEEP);

	/* Adaptive, with its threshold; a caller of the 16-byte struct gets 0. */
	c.flags = MCP_PLACE_OPT_KEEP | MCP_PLACE_OPT_ADAPTIVE;
	c.runq_threshold_us = 750;
	o = mcp::detail::place_options_from_c(c);
	cr_expect(o.keep && o.adaptive);
	cr_expect_eq(o.runq_threshold_us, 750u);
	cr_expect_eq(mcp::detail::place_flags(o), (std::uint32_t)(MCP_PLACE_KEEP | MCP_PLACE_ADAPTIVE));
	c.size = MCP_PLACE_OPTS_SIZE_VER0;
	o = mcp::detail::place_options_from_c(c);
	cr_expect(o.adaptive);
	cr_expect_eq(o.runq_threshold_us, 0u);
}

Test(place_errors, sentences)
{
	std::string m = mcp::detail::place_error_message(EPERM, 42, {});
	cr_expect_eq(m, "not allowed to place pid 42: it belongs to another user (needs CAP_SYS_NICE)");
	m = mcp::detail::place_error_message(ESRCH, 42, {});
	cr_expect(m.find("pid 42 does not exist") != std::string::npos, "%s", m.c_str());
	mcp::PlaceOptions strict;
	strict.strict = true;
	m = mcp::detail::place_error_message(EAGAIN, 42, strict);
	cr_expect(m.find("strict") != std::string::npos, "%s", m.c_str());
	m = mcp::detail::place_error_message(ENOENT, 7, {}, true);
	cr_expect(m.find("never placed") != std::string::npos, "%s", m.c_str());
	mcp::PlaceOptions node;
	node.node = 5;
	m = mcp::detail::place_error_message(EINVAL, 0, node);
	cr_expect(m.find("node 5") != std::string::npos, "%s", m.c_str());
}

static struct mcp_place reply()
{
	struct mcp_place arg {};

	arg.node_chosen = 1;
	arg.prev_node = 0;
	arg.home_node = 1;
	arg.reason = MCP_PLACE_REASON_MEMORY_LOCAL;
	arg.home_source = MCP_PLACE_HOME_HISTOGRAM;
	arg.nr_cpu_words = 2;
	arg.nr_node_ids = 2;
	return arg;
}

Test(place_decode, result)
{
	const std::vector<std::uint64_t> mask = {0xc, 1ULL << 1, 0xff /* beyond nr_cpu_words */};
	const std::vector<std::uint32_t> idle = {2, 1, 99};
	mcp::PlaceResult r = mcp::detail::decode_place(reply(), 77, true, mask, idle);

	cr_expect_eq(r.pid, 77);
	cr_expect(r.dry_run);
	cr_expect_eq(r.node_chosen, 1);
	cr_expect_eq(r.prev_node, 0);
	cr_expect_eq(r.reason, mcp::PlaceReason::memory_local);
	cr_expect_eq(r.home_source, mcp::HomeSource::histogram);
	cr_expect_eq(r.cpus, (std::vector<unsigned>{2, 3, 65}));
	cr_expect_eq(r.idle_cpus, (std::vector<std::uint32_t>{2, 1}));

	struct mcp_place_result c {};
	c.size = sizeof(c);
	mcp::detail::place_result_to_c(r, c);
	cr_expect_eq(c.size, sizeof(c));
	cr_expect_eq(c.node_chosen, 1);
	cr_expect_eq(c.reason, (std::uint32_t)MCP_REASON_MEMORY_LOCAL);
	cr_expect_eq(c.nr_nodes, 2u);
	cr_expect_eq(c.idle_cpus[0], 2u);
	cr_expect_eq(c.cpu_mask[0], 0xcu);
	cr_expect_eq(c.cpu_mask[1], 2u);
	cr_expect_eq(c.histogram_pages, 0u);
}

Test(place_names, reasons_and_sources)
{
	cr_expect_str_eq(mcp::to_string(mcp::PlaceReason::memory_local), "memory-local");
	cr_expect_str_eq(mcp::to_string(mcp::PlaceReason::nearest), "nearest");
	cr_expect_str_eq(mcp::to_string(mcp::PlaceReason::sticky), "sticky");
	cr_expect_str_eq(mcp::to_string(mcp::PlaceReason::unchanged), "unchanged");
	cr_expect_str_eq(mcp::to_string(mcp::PlaceReason::forced), "forced");
	cr_expect_str_eq(mcp::to_string(mcp::PlaceReason::runq_latency), "runq-latency");
	cr_expect_str_eq(mcp::to_string(static_cast<mcp::PlaceReason>(99)), "unknown");
	cr_expect_str_eq(mcp::to_string(mcp::HomeSource::numa_faults), "numa-faults");
	cr_expect_str_eq(mcp_place_reason_name(MCP_REASON_STICKY), "sticky");
	cr_expect_str_eq(mcp_place_home_source_name(MCP_HOME_LAST_CPU), "last-cpu");
}

static mcp::PlaceResult sample_result()
{
	mcp::PlaceResult r;

	r.pid = 1234;
	r.node_chosen = 1;
	r.prev_node = 0;
	r.home_node = 1;
	r.reason = mcp::PlaceReason::memory_local;
	r.home_source = mcp::HomeSource::histogram;
	r.cpus = {2, 3};
	r.idle_cpus = {2, 2};
	r.histogram = mcp::PageHistogram{{12, 4084}, 4096, 4096};
	return r;
}

Test(place_format, text)
{
	std::string s = mcpctl::format_place_text(sample_result());

	cr_expect_eq(s, "pid 1234: placed on node 1 (memory-local)\n"
			"previous node: 0\n"
			"home node: 1 (source: histogram)\n"
			"histogram: 4096 of 4096 sampled pages resident: node0 12 node1 4084\n"
			"idle cpus: node0 2 node1 2\n"
			"cpus: 2-3\n",
		     "%s", s.c_str());

	mcp::PlaceResult r = sample_result();
	r.dry_run = true;
	r.histogram.reset();
	r.histogram_error = "not allowed";
	r.node_chosen = -1;
	r.cpus.clear();
	s = mcpctl::format_place_text(r);
	cr_expect(s.starts_with("pid 1234: would place on node none (memory-local)\n"), "%s", s.c_str());
	cr_expect(s.find("histogram: none (not allowed)\n") != std::string::npos, "%s", s.c_str());
	cr_expect(s.ends_with("cpus: none\n"), "%s", s.c_str());
}

Test(place_format, json)
{
	nlohmann::ordered_json j = mcpctl::place_json(sample_result());
	std::string dumped = j.dump();
	nlohmann::json back = nlohmann::json::parse(dumped);

	cr_expect_eq(back["pid"], 1234);
	cr_expect_eq(back["dry_run"], false);
	cr_expect_eq(back["node_chosen"], 1);
	cr_expect_eq(back["reason"], "memory-local");
	cr_expect_eq(back["home_source"], "histogram");
	cr_expect_eq(back["cpus"], nlohmann::json::array({2, 3}));
	cr_expect_eq(back["cpu_list"], "2-3");
	cr_expect_eq(back["idle"][1]["node"], 1);
	cr_expect_eq(back["idle"][1]["idle_cpus"], 2);
	cr_expect_eq(back["histogram"]["pages_per_node"][1], 4084);
	cr_expect(!back.contains("histogram_error"));
}
