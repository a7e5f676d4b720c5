// SPDX-License-Identifier: GPL-2.0-only
// mcpctl dma engines|copy|bench DEV: the DMA engines of a context (a
// device or "host", /dev/mcp), one verified copy, and throughput and
// per-job cost measured against userspace memcpy in the same run.
#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <ostream>
#include <vector>

#include <fmt/format.h>

#include "commands.hpp"
#include "output.hpp"

namespace mcpctl {

namespace {

constexpr std::size_t async_burst = 256;

struct DmaArgs {
	std::string dev;
	std::string engine;
	std::string size = "64K";
	std::string sizes = "64K,256K,1M,4M,16M,64M";
	unsigned jobs = 1000;
	unsigned reps = 5;
	CLI::App *engines = nullptr;
	CLI::App *copy = nullptr;
	CLI::App *bench = nullptr;
} args;

std::uint64_t now_ns() noexcept
{
	return static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
						  std::chrono::steady_clock::now().time_since_epoch())
						  .count());
}

// The engine --engine names; the context's device engine when it has one.
unsigned pick_engine(const mcp::Dma &dma, std::string &name)
{
	if (!name.empty())
		return dma.find_engine(name);
	std::vector<mcp::EngineInfo> all = dma.engines();
	if (all.empty())
		throw mcp::Error(ENOENT, "context " + dma.name() + " has no DMA engine");
	name = all.back().name;
	return all.back().index;
}

std::string gbps_text(std::uint64_t bytes, std::uint64_t ns)
{
	return fmt::format("{:.2f} GB/s", throughput_bps(bytes, ns) / 1e9);
}

std::string us_text(std::uint64_t ns)
{
	return fmt::format("{:.1f} us", static_cast<double>(ns) / 1e3);
}

} // namespace

ContextArg parse_context_arg(std::string_view text)
{
	ContextArg a;

	if (text == "host") {
		a.host = true;
		return a;
	}
	try {
		a.dev = parse_dev_arg(text);
	} catch (const mcp::Error &) {
		throw mcp::Error(EINVAL, "'" + std::string(text) +
						 "' is not a context: use a device index, a PCI address "
						 "(dddd:bb:ss.f) or 'host'");
	}
	return a;
}

OpenContext open_context(const ContextArg &arg)
{
	OpenContext c;

	c.device = mcp::Device::open();
	if (arg.host) {
		c.dma = mcp::Dma::host(c.device);
	} else {
		c.accel = open_dev_arg(c.device, arg.dev);
		c.dma = mcp::Dma::device(c.accel);
	}
	return c;
}

std::vector<std::uint64_t> parse_size_list(std::string_view text)
{
	std::vector<std::uint64_t> sizes;

	while (!text.empty()) {
		std::size_t comma = text.find(',');
		std::string_view item = text.substr(0, comma);

		sizes.push_back(parse_size(item));
		if (comma == std::string_view::npos)
			break;
		text.remove_prefix(comma + 1);
		if (text.empty())
			throw mcp::Error(EINVAL, "the size list ends with a comma");
	}
	if (sizes.empty())
		throw mcp::Error(EINVAL, "the size list is empty: give sizes like 64K,1M,64M");
	return sizes;
}

std::string bytes_text(std::uint64_t bytes)
{
	if (bytes >= (1ULL << 30) && bytes % (1ULL << 30) == 0)
		return fmt::format("{} GiB", bytes >> 30);
	if (bytes >= (1ULL << 20) && bytes % (1ULL << 20) == 0)
		return fmt::format("{} MiB", bytes >> 20);
	if (bytes >= (1ULL << 10) && bytes % (1ULL << 10) == 0)
		return fmt::format("{} KiB", bytes >> 10);
	if (bytes >= (1ULL << 20))
		return fmt::format("{:.1f} MiB", static_cast<double>(bytes) / (1 << 20));
	return fmt::format("{} bytes", bytes);
}

namespace {

// splitmix64 of the 8-byte word index: cheap, and neighbours differ.
std::uint64_t pattern_word(std::uint64_t word, std::uint64_t seed) noexcept
{
	std::uint64_t z = word + seed * 0x9e3779b97f4a7c15ULL + 0x9e3779b97f4a7c15ULL;

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

std::byte pattern_byte(std::size_t i, std::uint64_t seed) noexcept
{
	return static_cast<std::byte>(pattern_word(i / 8, seed) >> (i % 8 * 8));
}

} // namespace

void fill_pattern(std::span<std::byte> bytes, std::uint64_t seed) noexcept
{
	std::size_t i = 0;

	for (; i + 8 <= bytes.size(); i += 8) {
		std::uint64_t w = pattern_word(i / 8, seed);

		std::memcpy(bytes.data() + i, &w, 8); // little-endian: bytes as pattern_byte()
	}
	for (; i < bytes.size(); i++)
		bytes[i] = pattern_byte(i, seed);
}

std::optional<std::size_t> check_pattern(std::span<const std::byte> bytes, std::uint64_t seed) noexcept
{
	std::size_t i = 0;

	for (; i + 8 <= bytes.size(); i += 8) {
		std::uint64_t w = pattern_word(i / 8, seed), got;

		std::memcpy(&got, bytes.data() + i, 8);
		if (got != w)
			break;
	}
	for (; i < bytes.size(); i++)
		if (bytes[i] != pattern_byte(i, seed))
			return i;
	return std::nullopt;
}

double throughput_bps(std::uint64_t bytes, std::uint64_t ns) noexcept
{
	return ns ? static_cast<double>(bytes) * 1e9 / static_cast<double>(ns) : 0.0;
}

std::string format_engines_text(std::string_view context, const std::vector<mcp::EngineInfo> &engines)
{
	std::string s = fmt::format("{:<3} {:<6} {:>4} {:>9} {:>8} {:>10} {:>10} {:>7} {:>9} {:>8} {}\n",
				    "IDX", "NAME", "NODE", "MAX_CHUNK", "INFLIGHT", "SUBMITTED",
				    "COMPLETED", "FAILED", "TIMED_OUT", "WC_DEPTH", "WC_TIMEOUT");

	for (const mcp::EngineInfo &e : engines)
		s += fmt::format("{:<3} {:<6} {:>4} {:>9} {:>8} {:>10} {:>10} {:>7} {:>9} {:>8} {} us\n",
				 e.index, e.name, e.node < 0 ? std::string("any") : std::to_string(e.node),
				 e.max_chunk ? bytes_text(e.max_chunk) : std::string("-"), e.inflight,
				 e.submitted, e.completed, e.failed, e.timed_out, e.wc_depth,
				 e.wc_timeout_us);
	if (engines.empty())
		s += fmt::format("(context {} has no engines)\n", context);
	return s;
}

nlohmann::ordered_json engines_json(std::string_view context, const std::vector<mcp::EngineInfo> &engines)
{
	nlohmann::ordered_json list = nlohmann::ordered_json::array();

	for (const mcp::EngineInfo &e : engines)
		list.push_back({{"index", e.index},
				{"name", e.name},
				{"node", e.node},
				{"max_chunk", e.max_chunk},
				{"inflight", e.inflight},
				{"submitted", e.submitted},
				{"completed", e.completed},
				{"failed", e.failed},
				{"timed_out", e.timed_out},
				{"wc_depth", e.wc_depth},
				{"wc_timeout_us", e.wc_timeout_us}});
	return {{"context", context}, {"engines", list}};
}

std::string format_copy_text(const CopyReport &r)
{
	std::string s = fmt::format("copied {} on {} engine {} in {} ({})\n", bytes_text(r.bytes),
				    r.context, r.engine, us_text(r.ns), gbps_text(r.bytes, r.ns));

	if (r.verified)
		s += "verified: destination matches the source\n";
	else
		s += fmt::format("MISMATCH: destination differs from the source at byte {}\n",
				 r.mismatch_at.value_or(0));
	return s;
}

nlohmann::ordered_json copy_json(const CopyReport &r)
{
	nlohmann::ordered_json j = {{"context", r.context},
				    {"engine", r.engine},
				    {"bytes", r.bytes},
				    {"ns", r.ns},
				    {"bytes_per_sec", throughput_bps(r.bytes, r.ns)},
				    {"verified", r.verified}};

	j["mismatch_at"] = r.mismatch_at ? nlohmann::ordered_json(*r.mismatch_at) : nlohmann::ordered_json();
	return j;
}

std::string format_dma_bench_text(const DmaBenchReport &r)
{
	std::string s = fmt::format("{} engine {}: best of {} per size\n", r.context, r.engine, r.reps);

	s += fmt::format("{:>10} {:>12} {:>12} {:>7}\n", "SIZE", "ENGINE", "MEMCPY", "RATIO");
	for (const DmaBenchRow &row : r.rows)
		s += fmt::format("{:>10} {:>12} {:>12} {:>6.2f}x\n", bytes_text(row.bytes),
				 gbps_text(row.bytes, row.engine_ns), gbps_text(row.bytes, row.memcpy_ns),
				 row.engine_ns ? static_cast<double>(row.memcpy_ns) /
							 static_cast<double>(row.engine_ns)
					       : 0.0);
	if (r.jobs) {
		s += fmt::format("zero-length jobs (wc_depth {}): {} each\n", r.wc_depth, r.jobs);
		s += fmt::format("  sync:  {:>10.0f} jobs/s  {} per job\n",
				 throughput_bps(r.jobs, r.sync_ns), us_text(r.sync_ns / r.jobs));
		s += fmt::format("  async: {:>10.0f} jobs/s  {} per job\n",
				 throughput_bps(r.jobs, r.async_ns), us_text(r.async_ns / r.jobs));
	}
	return s;
}

nlohmann::ordered_json dma_bench_json(const DmaBenchReport &r)
{
	nlohmann::ordered_json rows = nlohmann::ordered_json::array();

	for (const DmaBenchRow &row : r.rows)
		rows.push_back({{"bytes", row.bytes},
				{"engine_ns", row.engine_ns},
				{"memcpy_ns", row.memcpy_ns},
				{"engine_bytes_per_sec", throughput_bps(row.bytes, row.engine_ns)},
				{"memcpy_bytes_per_sec", throughput_bps(row.bytes, row.memcpy_ns)},
				{"ratio", row.engine_ns ? static_cast<double>(row.memcpy_ns) /
								  static_cast<double>(row.engine_ns)
							: 0.0}});
	nlohmann::ordered_json j = {{"context", r.context}, {"engine", r.engine}, {"reps", r.reps},
				    {"sizes", rows}};
	j["jobs"] = {{"count", r.jobs},
		     {"wc_depth", r.wc_depth},
		     {"sync_ns", r.sync_ns},
		     {"async_ns", r.async_ns},
		     {"sync_jobs_per_sec", throughput_bps(r.jobs, r.sync_ns)},
		     {"async_jobs_per_sec", throughput_bps(r.jobs, r.async_ns)}};
	return j;
}

namespace {

CopyReport do_copy(const OpenContext &c, unsigned engine, const std::string &engine_name,
		   std::uint64_t size)
{
	mcp::Buffer src = mcp::Buffer::create(c.dma, size);
	mcp::Buffer dst = mcp::Buffer::create(c.dma, size);
	CopyReport r;

	fill_pattern(src.data().first(size), size);
	std::memset(dst.data().data(), 0, dst.data().size());
	std::uint64_t t0 = now_ns();
	c.dma.copy(engine, src, 0, dst, 0, size);
	r.ns = now_ns() - t0;
	r.context = c.dma.name();
	r.engine = engine_name;
	r.bytes = size;
	r.mismatch_at = check_pattern(dst.data().first(size), size);
	r.verified = !r.mismatch_at;
	return r;
}

DmaBenchReport do_bench(const OpenContext &c, unsigned engine, const std::string &engine_name,
			const std::vector<std::uint64_t> &sizes)
{
	DmaBenchReport r;

	r.context = c.dma.name();
	r.engine = engine_name;
	r.reps = args.reps;
	for (std::uint64_t size : sizes) {
		mcp::Buffer src = mcp::Buffer::create(c.dma, size);
		mcp::Buffer dst = mcp::Buffer::create(c.dma, size);
		std::span<std::byte> s = src.data(), d = dst.data();
		DmaBenchRow row{size, UINT64_MAX, UINT64_MAX};

		fill_pattern(s.first(size), 1);
		std::memset(d.data(), 0, d.size()); // fault in both sides first
		// Alternate engine and memcpy so that host noise hits both.
		for (unsigned i = 0; i < args.reps; i++) {
			std::uint64_t t0 = now_ns();
			c.dma.copy(engine, src, 0, dst, 0, size);
			std::uint64_t t1 = now_ns();
			std::memcpy(d.data(), s.data(), size);
			std::uint64_t t2 = now_ns();
			row.engine_ns = std::min(row.engine_ns, t1 - t0);
			row.memcpy_ns = std::min(row.memcpy_ns, t2 - t1);
		}
		r.rows.push_back(row);
	}
	r.jobs = args.jobs;
	if (r.jobs) {
		mcp::Buffer a = mcp::Buffer::create(c.dma, 4096);
		mcp::Buffer b = mcp::Buffer::create(c.dma, 4096);
		std::vector<mcp::Fence> fences;

		r.wc_depth = c.dma.engine(engine).wc_depth;
		std::uint64_t t0 = now_ns();
		for (unsigned i = 0; i < r.jobs; i++)
			c.dma.copy(engine, a, 0, b, 0, 0);
		std::uint64_t t1 = now_ns();
		auto wait_all = [&] {
			for (const mcp::Fence &f : fences) {
				mcp::FenceResult res = f.wait(std::chrono::seconds(30));

				if (!res.ok())
					throw mcp::Error(res.error ? res.error : ETIMEDOUT,
							 std::string("a zero-length job did not complete: ") +
								 mcp::to_string(res.state));
			}
			fences.clear();
		};
		// Each fence is an fd: at most async_burst in flight (RLIMIT_NOFILE).
		fences.reserve(async_burst);
		for (unsigned i = 0; i < r.jobs; i++) {
			fences.push_back(c.dma.copy_async(engine, a, 0, b, 0, 0));
			if (fences.size() == async_burst)
				wait_all();
		}
		wait_all();
		std::uint64_t t2 = now_ns();
		r.sync_ns = t1 - t0;
		r.async_ns = t2 - t1;
	}
	return r;
}

} // namespace

static int run_dma(const GlobalOptions &opts, std::ostream &out, std::ostream &err)
{
	ContextArg ctx;
	std::uint64_t size = 0;
	std::vector<std::uint64_t> sizes;

	try {
		ctx = parse_context_arg(args.dev);
		if (args.copy->parsed()) {
			size = parse_size(args.size);
			if (size == 0)
				throw mcp::Error(EINVAL, "--size must be at least 1 byte");
		}
		if (args.bench->parsed()) {
			sizes = parse_size_list(args.sizes);
			for (std::uint64_t s : sizes)
				if (s == 0)
					throw mcp::Error(EINVAL, "--sizes must all be at least 1 byte");
			if (args.reps == 0)
				throw mcp::Error(EINVAL, "--reps must be at least 1");
		}
	} catch (const mcp::Error &e) {
		print_error(err, e.what());
		return exit_usage;
	}
	try {
		OpenContext c = open_context(ctx);

		if (args.engines->parsed()) {
			std::vector<mcp::EngineInfo> all = c.dma.engines();

			if (opts.json)
				print_json(out, engines_json(c.dma.name(), all));
			else
				out << format_engines_text(c.dma.name(), all);
			out.flush();
			return exit_ok;
		}
		std::string engine_name = args.engine;
		unsigned engine = pick_engine(c.dma, engine_name);

		if (args.copy->parsed()) {
			CopyReport r = do_copy(c, engine, engine_name, size);

			if (opts.json)
				print_json(out, copy_json(r));
			else
				out << format_copy_text(r);
			out.flush();
			if (!r.verified)
				print_error(err, "the copy completed but the destination differs from the source");
			return r.verified ? exit_ok : exit_failure;
		}
		DmaBenchReport r = do_bench(c, engine, engine_name, sizes);

		if (opts.json)
			print_json(out, dma_bench_json(r));
		else
			out << format_dma_bench_text(r);
	} catch (const mcp::Error &e) {
		print_error(err, e.what());
		return exit_failure;
	}
	out.flush();
	return exit_ok;
}

Command add_dma_command(CLI::App &app)
{
	CLI::App *sub = app.add_subcommand("dma", "DMA engines of a context: list them, copy through one, benchmark one");

	sub->require_subcommand(1);
	args.engines = sub->add_subcommand("engines", "List the engines of DEV and their counters");
	args.copy = sub->add_subcommand("copy", "Fill a buffer with a pattern, copy it through an engine, verify, time it");
	args.bench = sub->add_subcommand("bench", "Copy throughput per size vs memcpy; zero-length jobs/s sync and async");
	for (CLI::App *c : {args.engines, args.copy, args.bench})
		c->add_option("DEV", args.dev, "Device index, PCI address (dddd:bb:ss.f) or 'host' (/dev/mcp)")
			->required();
	for (CLI::App *c : {args.copy, args.bench})
		c->add_option("--engine", args.engine, "Engine name: cpu, edu... (default: the device's own, cpu on host)");
	args.copy->add_option("--size", args.size, "Bytes to copy, K/M/G suffixes (default 64K)");
	args.bench->add_option("--sizes", args.sizes, "Comma-separated sizes (default 64K,256K,1M,4M,16M,64M)");
	args.bench->add_option("--jobs", args.jobs, "Zero-length jobs per mode, 0 to skip (default 1000; async in bursts of 256)");
	args.bench->add_option("--reps", args.reps, "Copies per size, the best counts (default 5)");
	sub->footer("With --json: engines prints {\"context\",\"engines\":[...]}, copy prints "
		    "{\"context\",\"engine\",\"bytes\",\"ns\",\"bytes_per_sec\",\"verified\",\"mismatch_at\"}, "
		    "bench prints {\"context\",\"engine\",\"reps\",\"sizes\":[...],\"jobs\":{...}} "
		    "(see Documentation/mcpctl.rst).");
	return {sub, run_dma};
}

} // namespace mcpctl
