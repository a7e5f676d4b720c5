// SPDX-License-Identifier: GPL-2.0-only
// mcpctl bo and dma without a kernel: the DEV/host argument, size lists,
// the copy pattern, page placement of plain memory, the text and JSON of
// bo, dma engines, copy and bench (schemas of Documentation/mcpctl.rst),
// and exit codes of the commands as a subprocess.
#include <cstring>
#include <string>
#include <vector>

#include <sys/mman.h>

#include <criterion/criterion.h>
#include <nlohmann/json.hpp>

#include "commands.hpp"
#include "helpers.hpp"

using nlohmann::json;

static int errno_of(auto &&fn)
{
	try {
		fn();
	} catch (const mcp::Error &e) {
		return e.errnum();
	}
	return 0;
}

static std::vector<std::string> keys(const json &j)
{
	std::vector<std::string> k;

	for (auto it = j.begin(); it != j.end(); ++it)
		k.push_back(it.key());
	return k;
}

static std::vector<std::string> ordered_keys(const nlohmann::ordered_json &j)
{
	std::vector<std::string> k;

	for (auto it = j.begin(); it != j.end(); ++it)
		k.push_back(it.key());
	return k;
}

Test(dma_args, context_argument)
{
	mcpctl::ContextArg a = mcpctl::parse_context_arg("host");
	cr_expect(a.host);
	a = mcpctl::parse_context_arg("0");
	cr_expect_not(a.host);
	cr_expect_eq(a.dev.index.value_or(99), 0u);
	a = mcpctl::parse_context_arg("0000:00:04.0");
	cr_assert(a.dev.address.has_value());
	cr_expect_eq(a.dev.address->slot, 4);
	for (const char *bad : {"hots", "", "edu", "-1", "00:04"}) {
		try {
			mcpctl::parse_context_arg(bad);
			cr_expect(false, "'%s' accepted", bad);
		} catch (const mcp::Error &e) {
			cr_expect_eq(e.errnum(), EINVAL);
			cr_expect(std::string(e.what()).find("'host'") != std::string::npos, "%s", e.what());
		}
	}
}

Test(dma_args, size_lists)
{
	cr_expect(mcpctl::parse_size_list("64K,1M,64M") ==
		  (std::vector<std::uint64_t>{64 << 10, 1 << 20, 64 << 20}));
	cr_expect(mcpctl::parse_size_list("4096") == (std::vector<std::uint64_t>{4096}));
	cr_expect_eq(errno_of([] { mcpctl::parse_size_list(""); }), EINVAL);
	cr_expect_eq(errno_of([] { mcpctl::parse_size_list("1M,"); }), EINVAL);
	cr_expect_eq(errno_of([] { mcpctl::parse_size_list("1M,,2M"); }), EINVAL);
	cr_expect_eq(errno_of([] { mcpctl::parse_size_list("1Q"); }), EINVAL);
	cr_expect_eq(mcpctl::bytes_text(64 << 10), "64 KiB");
	cr_expect_eq(mcpctl::bytes_text(64 << 20), "64 MiB");
	cr_expect_eq(mcpctl::bytes_text(1), "1 bytes");
	cr_expect_eq(mcpctl::bytes_text((3 << 20) / 2), "1536 KiB");
	cr_expect_eq(mcpctl::bytes_text((3 << 20) / 2 + 1), "1.5 MiB");
}

Test(dma_pattern, fills_checks_and_finds_the_first_difference)
{
	std::vector<std::byte> a(4099), b(4099);

	mcpctl::fill_pattern(a, 7);
	cr_expect_not(mcpctl::check_pattern(a, 7).has_value());
	cr_expect(mcpctl::check_pattern(a, 8).has_value(), "another seed matched");
	mcpctl::fill_pattern(b, 8);
	cr_expect(a != b, "the seed changes nothing");
	// Neighbouring bytes and words differ: a shifted copy is caught.
	std::vector<std::byte> shifted(a.begin() + 1, a.end());
	shifted.push_back(std::byte{0});
	cr_expect_eq(mcpctl::check_pattern(shifted, 7).value_or(9999), 0u);
	a[4098] ^= std::byte{1}; // the unaligned tail
	cr_expect_eq(mcpctl::check_pattern(a, 7).value_or(0), 4098u);
	a[4098] ^= std::byte{1};
	a[1000] ^= std::byte{0x80};
	cr_expect_eq(mcpctl::check_pattern(a, 7).value_or(0), 1000u);
	std::vector<std::byte> zero(64);
	cr_expect(mcpctl::check_pattern(zero, 0).has_value(), "zeroes pass as a pattern");
}

Test(dma_placement, anonymous_memory_is_counted_on_a_node)
{
	const std::size_t len = 64 * 4096;
	void *p = mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	cr_assert_neq(p, MAP_FAILED);
	std::memset(p, 1, len);
	mcpctl::PagePlacement pl = mcpctl::query_placement({static_cast<std::byte *>(p), len}, 16);
	cr_expect_eq(pl.pages, 16u);
	cr_expect(pl.verified, "%s", pl.error.c_str());
	std::uint64_t sum = 0;
	for (std::uint64_t c : pl.pages_per_node)
		sum += c;
	cr_expect_eq(sum, 16u);
	munmap(p, len);
}

static mcpctl::BoReport bo_report()
{
	mcpctl::BoReport r;

	r.context = "0000:00:04.0";
	r.info.handle = 1;
	r.info.kind = mcp::BufferKind::kernel;
	r.info.length = 64 << 20;
	r.info.flags = MCP_BUFFER_NODE;
	r.info.node = 1;
	r.info.mmap_offset = 0x10000000;
	r.node_asked = 1;
	r.placement.verified = true;
	r.placement.pages = 4096;
	r.placement.pages_per_node = {0, 4096};
	return r;
}

Test(bo_format, text)
{
	mcpctl::BoReport r = bo_report();
	std::string t = mcpctl::format_bo_text(r);

	cr_expect_eq(t, "buffer 1 on 0000:00:04.0: 64 MiB kernel\n"
			"  flags:       node\n"
			"  node:        1 (asked 1)\n"
			"  mmap offset: 0x10000000\n"
			"  jobs:        0\n"
			"  pages:       4096 of 4096 sampled: node0 0 node1 4096\n",
		     "%s", t.c_str());
	r.placement = {false, "move_pages(2) cannot see these pages", 16, {}};
	r.info.kind = mcp::BufferKind::user;
	r.info.flags = 0;
	r.info.mmap_offset.reset();
	r.node_asked.reset();
	r.info.node = -1;
	t = mcpctl::format_bo_text(r);
	cr_expect(t.find("user\n") != std::string::npos, "%s", t.c_str());
	cr_expect(t.find("flags:       read-only") != std::string::npos, "%s", t.c_str());
	cr_expect(t.find("node:        mixed/unknown\n") != std::string::npos, "%s", t.c_str());
	cr_expect(t.find("mmap offset: -") != std::string::npos, "%s", t.c_str());
	cr_expect(t.find("not verified: move_pages(2)") != std::string::npos, "%s", t.c_str());
}

Test(bo_format, json_schema)
{
	nlohmann::ordered_json j = mcpctl::bo_json(bo_report());

	cr_expect(ordered_keys(j) == (std::vector<std::string>{"context", "handle", "kind", "length", "flags",
								"node", "node_asked", "mmap_offset", "jobs",
								"placement"}));
	cr_expect(keys(j["placement"]) ==
		  (std::vector<std::string>{"error", "pages", "pages_per_node", "verified"}));
	cr_expect_eq(j["kind"], "kernel");
	cr_expect_eq(j["flags"], json::array({"node"}));
	cr_expect_eq(j["placement"]["pages_per_node"], json::array({0, 4096}));
	cr_expect(j["placement"]["error"].is_null());
	mcpctl::BoReport r = bo_report();
	r.info.mmap_offset.reset();
	r.node_asked.reset();
	j = mcpctl::bo_json(r);
	cr_expect(j["mmap_offset"].is_null());
	cr_expect(j["node_asked"].is_null());
}

static std::vector<mcp::EngineInfo> engines()
{
	mcp::EngineInfo cpu, edu;

	cpu = {0, "cpu", -1, 0, 2, 10, 10, 0, 0, 1, 50};
	edu = {1, "edu", 0, 4096, 1, 5, 3, 2, 1, 8, 100};
	return {cpu, edu};
}

Test(dma_format, engines_text_and_json)
{
	std::string t = mcpctl::format_engines_text("0000:00:04.0", engines());
	std::vector<std::string> lines;

	for (std::size_t at = 0, nl; (nl = t.find('\n', at)) != std::string::npos; at = nl + 1)
		lines.push_back(t.substr(at, nl - at));
	cr_assert_eq(lines.size(), 3u, "%s", t.c_str());
	cr_expect(lines[0].starts_with("IDX NAME   NODE MAX_CHUNK"), "%s", lines[0].c_str());
	cr_expect(lines[1].starts_with("0   cpu     any         -"), "%s", lines[1].c_str());
	cr_expect(lines[2].starts_with("1   edu       0     4 KiB"), "%s", lines[2].c_str());
	cr_expect(lines[2].ends_with(" 8 100 us"), "%s", lines[2].c_str());
	cr_expect(mcpctl::format_engines_text("host", {}).find("has no engines") != std::string::npos);

	nlohmann::ordered_json j = mcpctl::engines_json("host", engines());
	cr_expect(ordered_keys(j) == (std::vector<std::string>{"context", "engines"}));
	cr_assert_eq(j["engines"].size(), 2u);
	cr_expect(ordered_keys(j["engines"][1]) ==
		  (std::vector<std::string>{"index", "name", "node", "max_chunk", "inflight", "submitted",
					    "completed", "failed", "timed_out", "wc_depth",
					    "wc_timeout_us"}));
	cr_expect_eq(j["engines"][1]["timed_out"], 1);
}

Test(dma_format, copy_text_and_json)
{
	mcpctl::CopyReport r{"0000:00:04.0", "edu", 65536, 1000000, true, std::nullopt};

	cr_expect_eq(mcpctl::throughput_bps(65536, 1000000), 65536000.0);
	cr_expect_eq(mcpctl::throughput_bps(1, 0), 0.0);
	std::string t = mcpctl::format_copy_text(r);
	cr_expect_eq(t, "copied 64 KiB on 0000:00:04.0 engine edu in 1000.0 us (0.07 GB/s)\n"
			"verified: destination matches the source\n",
		     "%s", t.c_str());
	nlohmann::ordered_json j = mcpctl::copy_json(r);
	cr_expect(ordered_keys(j) == (std::vector<std::string>{"context", "engine", "bytes", "ns",
								"bytes_per_sec", "verified", "mismatch_at"}));
	cr_expect(j["mismatch_at"].is_null());
	r.verified = false;
	r.mismatch_at = 17;
	cr_expect(mcpctl::format_copy_text(r).find("MISMATCH") != std::string::npos);
	cr_expect_eq(mcpctl::copy_json(r)["mismatch_at"], 17);
}

Test(dma_format, bench_text_and_json)
{
	mcpctl::DmaBenchReport r;

	r.context = "host";
	r.engine = "cpu";
	r.reps = 5;
	r.rows = {{1 << 20, 500000, 400000}, {64 << 10, 0, 1000}};
	r.jobs = 1000;
	r.sync_ns = 10000000;
	r.async_ns = 5000000;
	r.wc_depth = 8;
	std::string t = mcpctl::format_dma_bench_text(r);
	cr_expect(t.starts_with("host engine cpu: best of 5 per size\n"), "%s", t.c_str());
	cr_expect(t.find("1 MiB") != std::string::npos && t.find("0.80x") != std::string::npos, "%s",
		  t.c_str());
	cr_expect(t.find("zero-length jobs (wc_depth 8): 1000 each") != std::string::npos, "%s", t.c_str());
	cr_expect(t.find("sync:      100000 jobs/s  10.0 us per job") != std::string::npos, "%s", t.c_str());
	cr_expect(t.find("async:     200000 jobs/s  5.0 us per job") != std::string::npos, "%s", t.c_str());

	nlohmann::ordered_json j = mcpctl::dma_bench_json(r);
	cr_expect(ordered_keys(j) == (std::vector<std::string>{"context", "engine", "reps", "sizes", "jobs"}));
	cr_expect(ordered_keys(j["sizes"][0]) ==
		  (std::vector<std::string>{"bytes", "engine_ns", "memcpy_ns", "engine_bytes_per_sec",
					    "memcpy_bytes_per_sec", "ratio"}));
	cr_expect_eq(j["sizes"][0]["ratio"], 0.8);
	cr_expect_eq(j["sizes"][1]["ratio"], 0.0, "a zero time divides nothing");
	cr_expect(ordered_keys(j["jobs"]) ==
		  (std::vector<std::string>{"count", "wc_depth", "sync_ns", "async_ns", "sync_jobs_per_sec",
					    "async_jobs_per_sec"}));
	cr_expect_eq(j["jobs"]["async_jobs_per_sec"], 200000.0);
	r.jobs = 0;
	cr_expect(mcpctl::format_dma_bench_text(r).find("zero-length") == std::string::npos);
}

static test::RunResult mcpctl_run(std::vector<std::string> args)
{
	args.insert(args.begin(), MCPCTL_PATH);
	return test::run(args, {"MCP_DEVICE=/nonexistent/mcp"});
}

static bool one_error_line(const std::string &err)
{
	return err.starts_with("mcpctl: ") && err.ends_with("\n") && err.find('\n') == err.size() - 1;
}

Test(dma_cli, usage_errors_exit_2)
{
	for (auto args : {std::vector<std::string>{"dma"},
			  {"dma", "copy"},
			  {"dma", "copy", "hots"},
			  {"dma", "copy", "host", "--size", "0"},
			  {"dma", "copy", "host", "--size", "12Q"},
			  {"dma", "bench", "0", "--sizes", "1M,"},
			  {"dma", "bench", "0", "--reps", "0"},
			  {"dma", "engines", "00:04"},
			  {"bo"},
			  {"bo", "create", "host", "--size", "0"},
			  {"bo", "create", "host", "--node", "-5"},
			  {"bo", "pin", "x"}}) {
		test::RunResult r = mcpctl_run(args);
		cr_expect_eq(r.exit_code, 2, "%s %s: %s", args[0].c_str(),
			     args.size() > 2 ? args[2].c_str() : "", r.err.c_str());
		cr_expect(one_error_line(r.err), "stderr: %s", r.err.c_str());
		cr_expect(r.out.empty());
	}
}

Test(dma_cli, without_module_exit_1_with_one_line)
{
	for (auto args : {std::vector<std::string>{"dma", "engines", "host"},
			  {"dma", "copy", "0", "--json"},
			  {"dma", "bench", "host"},
			  {"bo", "create", "host"},
			  {"bo", "pin", "0000:00:04.0", "--json"}}) {
		test::RunResult r = mcpctl_run(args);
		cr_expect_eq(r.exit_code, 1, "%s: %s", args[1].c_str(), r.err.c_str());
		cr_expect_eq(r.err, "mcpctl: the mcp kernel module is not loaded: run 'sudo modprobe mcp'\n");
		cr_expect(r.out.empty());
	}
}
