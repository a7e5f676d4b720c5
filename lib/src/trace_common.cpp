// SPDX-License-Identifier: LGPL-2.1-or-later
// What the eBPF tracers share: histograms, filters, errors, libbpf's log,
// the CPU->node map and the per-task join for live tables.
#include <bpf/libbpf.h>

#include <dirent.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <linux/magic.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <tuple>
#include <utility>

#include "internal.hpp"
#include "trace_internal.hpp"

namespace mcp::trace {

// ---- Log2Histogram ----

std::uint64_t Log2Histogram::slot_low(unsigned i) noexcept
{
	return i == 0 ? 0 : std::uint64_t{1} << i;
}

std::uint64_t Log2Histogram::slot_high(unsigned i) noexcept
{
	return i >= 63 ? UINT64_MAX : (std::uint64_t{1} << (i + 1)) - 1;
}

std::uint64_t Log2Histogram::count() const noexcept
{
	std::uint64_t n = 0;

	for (std::uint64_t c : slots)
		n += c;
	return n;
}

double Log2Histogram::slot_end(unsigned i) noexcept
{
	return std::ldexp(1.0, static_cast<int>(i) + 1);
}

double Log2Histogram::percentile(double percent) const noexcept
{
	const std::uint64_t total = count();

	if (total == 0 || !(percent >= 0))
		return 0;
	percent = std::min(percent, 100.0);
	// The rank of the wanted sample, 1-based; then where it sits in its
	// slot.  A slot holds whole microseconds (the programs truncate), so
	// slot i covers the real values [slot_low(i), slot_end(i)): slot 0
	// is [0, 2) us, not [0, 1], and slot 1 [2, 4), not [2, 3].
	const double rank = std::max(1.0, std::ceil(percent / 100.0 * static_cast<double>(total)));
	double seen = 0;

	for (unsigned i = 0; i < slots.size(); i++) {
		const auto c = static_cast<double>(slots[i]);

		if (c == 0 || seen + c < rank) {
			seen += c;
			continue;
		}
		const double low = static_cast<double>(slot_low(i));
		return low + (slot_end(i) - low) * ((rank - seen) / c);
	}
	return slot_end(static_cast<unsigned>(slots.size() - 1));
}

void Log2Histogram::merge(const Log2Histogram &other)
{
	if (slots.size() < other.slots.size())
		slots.resize(other.slots.size());
	for (std::size_t i = 0; i < other.slots.size(); i++)
		slots[i] += other.slots[i];
}

std::uint64_t SchedTask::oncpu_ns() const noexcept
{
	std::uint64_t n = 0;

	for (std::uint64_t v : oncpu_ns_per_node)
		n += v;
	return n;
}

std::optional<double> CacheTask::miss_percent() const noexcept
{
	if (references == 0)
		return std::nullopt;
	return 100.0 * static_cast<double>(misses) / static_cast<double>(references);
}

std::optional<double> NumaLocality::local_percent() const noexcept
{
	if (hint_faults == 0)
		return std::nullopt;
	return 100.0 * static_cast<double>(hint_faults_local) / static_cast<double>(hint_faults);
}

TraceError::TraceError(int errnum, std::string message, std::string log)
	: Error(errnum, std::move(message)), log_(std::move(log))
{
}

// ---- cgroups ----

std::uint64_t cgroup_id(std::string_view path, std::string_view mount)
{
	std::string full = (!path.empty() && path.front() == '/')
				   ? std::string(path)
				   : std::string(mount) + "/" + std::string(path);
	struct statfs sfs = {};
	struct stat st = {};

	if (path.empty())
		throw Error(EINVAL, "empty cgroup path");
	if (stat(full.c_str(), &st) < 0) {
		int err = errno;
		throw Error(err, "cgroup " + full + ": " + std::strerror(err) +
					 (err == ENOENT ? " (give a directory of the cgroup v2 hierarchy, "
							  "absolute or relative to " + std::string(mount) + ")"
							: ""));
	}
	if (!S_ISDIR(st.st_mode))
		throw Error(ENOTDIR, "cgroup " + full + " is not a directory");
	if (statfs(full.c_str(), &sfs) < 0 || sfs.f_type != CGROUP2_SUPER_MAGIC)
		throw Error(EINVAL, full + " is not on a cgroup v2 file system: mount one with "
					   "'mount -t cgroup2 none /sys/fs/cgroup'");
	// On cgroup2 the directory's inode number is the kernfs node id,
	// which is the cgroup id the kernel reports.
	return static_cast<std::uint64_t>(st.st_ino);
}

// ---- per-task join and placement counts ----

std::vector<PlacementCount> count_placements(const std::vector<PlacementRecord> &records)
{
	std::map<std::pair<int, std::uint32_t>, std::uint64_t> counts;
	std::vector<PlacementCount> out;

	for (const PlacementRecord &r : records)
		counts[{r.to_node, static_cast<std::uint32_t>(r.reason)}]++;
	for (const auto &[key, n] : counts)
		out.push_back({key.first, static_cast<PlaceReason>(key.second), n});
	return out;
}

std::vector<TaskRecord> join_tasks(const SchedSnapshot &sched, const CacheSnapshot *cache,
				   const McpSnapshot *mcp)
{
	std::map<int, TaskRecord> rows;

	for (const SchedTask &t : sched.tasks) {
		TaskRecord &r = rows[t.pid];

		r.pid = t.pid;
		r.tgid = t.tgid;
		r.comm = t.comm;
		r.node = t.node;
		r.oncpu_ns = t.oncpu_ns();
		r.runq_us = t.runq_us;
		r.runq_total_ns = t.runq_total_ns;
		r.runq_max_ns = t.runq_max_ns;
		r.migrations = t.migrations;
		r.cross_node_migrations = t.cross_node_migrations;
	}
	if (cache && cache->llc_available) {
		for (auto &[pid, r] : rows) {
			r.llc_references = 0;
			r.llc_misses = 0;
		}
		for (const CacheTask &t : cache->tasks) {
			TaskRecord &r = rows[t.pid];

			if (!r.pid) {
				r.pid = t.pid;
				r.tgid = t.tgid;
				r.comm = t.comm;
			}
			r.llc_references = t.references;
			r.llc_misses = t.misses;
		}
	}
	if (mcp) {
		for (const PlacementRecord &p : mcp->placements) {
			TaskRecord &r = rows[p.pid];

			r.pid = p.pid;
			r.placements++;
		}
		for (const TaskJobs &t : mcp->job_tasks) {
			TaskRecord &r = rows[t.pid];

			r.pid = t.pid;
			if (!r.tgid)
				r.tgid = t.tgid;
			r.dma_jobs = t.jobs;
			r.dma_latency_us = t.latency_us;
		}
	}
	std::vector<TaskRecord> out;
	out.reserve(rows.size());
	for (auto &[pid, r] : rows)
		out.push_back(std::move(r));
	return out;
}

namespace detail {

// ---- libbpf's log ----

namespace {

struct DirCloser {
	void operator()(DIR *d) const noexcept { closedir(d); }
};
using DirPtr = std::unique_ptr<DIR, DirCloser>;

thread_local std::string *libbpf_sink = nullptr;

int libbpf_capture(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	char buf[4096];

	if (!libbpf_sink || level == LIBBPF_DEBUG)
		return 0;
	int n = std::vsnprintf(buf, sizeof(buf), fmt, ap);
	if (n > 0)
		libbpf_sink->append(buf, std::min<std::size_t>(static_cast<std::size_t>(n),
							       sizeof(buf) - 1));
	return n;
}

} // namespace

LibbpfLog::LibbpfLog() : outer_(libbpf_sink)
{
	libbpf_sink = &text_;
	previous_ = reinterpret_cast<void *>(libbpf_set_print(libbpf_capture));
}

LibbpfLog::~LibbpfLog()
{
	libbpf_set_print(reinterpret_cast<libbpf_print_fn_t>(previous_));
	libbpf_sink = outer_;
}

void require_kernel_btf()
{
	if (access("/sys/kernel/btf/vmlinux", R_OK) == 0)
		return;
	if (errno == EACCES)
		throw TraceError(EPERM, "reading the kernel's BTF (/sys/kernel/btf/vmlinux) was "
					"denied: tracing needs root, or CAP_BPF and CAP_PERFMON");
	throw TraceError(EOPNOTSUPP, "this kernel has no BTF (/sys/kernel/btf/vmlinux is missing): "
				     "the eBPF tracers need a kernel built with CONFIG_DEBUG_INFO_BTF=y");
}

TraceError load_error(int errnum, std::string_view group, std::string_view what,
		      std::string log)
{
	std::string msg;

	switch (errnum) {
	case EPERM:
	case EACCES:
		if (errnum == EACCES && !log.empty() && log.find("verifier") != std::string::npos) {
			msg = "the kernel's verifier rejected a " + std::string(group) +
			      " program: run with -v for the verifier log";
			errnum = EINVAL;
			break;
		}
		msg = geteuid() == 0
			      ? std::string(what) + " was refused (" + std::strerror(errnum) +
					"): the kernel may be locked down or BPF disabled for this root"
			      : "tracing needs root, or CAP_BPF and CAP_PERFMON: run as root";
		errnum = EPERM;
		break;
	case EINVAL:
	case E2BIG:
		msg = "the kernel rejected a " + std::string(group) + " program (" +
		      std::strerror(errnum) + "): run with -v for the verifier log";
		errnum = EINVAL;
		break;
	case ENOMEM:
		msg = std::string(what) + " ran out of memory: raise RLIMIT_MEMLOCK or free memory";
		break;
	default:
		msg = std::string(what) + " failed: " + std::strerror(errnum);
		break;
	}
	return TraceError(errnum, msg, std::move(log));
}

std::uint64_t filter_cgroup_id(const Filter &filter)
{
	// A process that does not exist would give an empty report forever.
	if (filter.pid > 0 && kill(filter.pid, 0) != 0 && errno == ESRCH)
		throw TraceError(ESRCH, "no process " + std::to_string(filter.pid));
	if (filter.cgroup.empty())
		return 0;
	try {
		return cgroup_id(filter.cgroup, filter.cgroup_mount);
	} catch (const Error &e) {
		throw TraceError(e.errnum(), e.what());
	}
}

// ---- topology, /proc ----

std::vector<unsigned> read_cpu_nodes(const std::string &root)
{
	std::vector<unsigned> map;
	DirPtr dir(opendir(root.c_str()));

	if (!dir)
		return map;
	while (struct dirent *de = readdir(dir.get())) {
		unsigned node;
		char tail;

		if (std::sscanf(de->d_name, "node%u%c", &node, &tail) != 1)
			continue;
		std::ifstream in(root + "/" + de->d_name + "/cpulist");
		std::string list;
		if (!std::getline(in, list))
			continue;
		try {
			for (unsigned cpu : mcp::detail::parse_id_list(list)) {
				if (cpu >= map.size())
					map.resize(cpu + 1, 0);
				map[cpu] = node;
			}
		} catch (const Error &) {
			continue;
		}
	}
	return map;
}

std::optional<std::uint64_t> vmstat_value(std::string_view text, std::string_view key)
{
	std::size_t pos = 0;

	while (pos < text.size()) {
		std::size_t end = text.find('\n', pos);
		if (end == std::string_view::npos)
			end = text.size();
		std::string_view line = text.substr(pos, end - pos);
		if (line.size() > key.size() && line.substr(0, key.size()) == key &&
		    line[key.size()] == ' ') {
			std::string num(line.substr(key.size() + 1));
			char *stop = nullptr;
			errno = 0;
			unsigned long long v = std::strtoull(num.c_str(), &stop, 10);
			if (errno || stop == num.c_str())
				return std::nullopt;
			return v;
		}
		pos = end + 1;
	}
	return std::nullopt;
}

std::optional<NumaLocality> parse_numa_vmstat(std::string_view text)
{
	auto faults = vmstat_value(text, "numa_hint_faults");
	auto local = vmstat_value(text, "numa_hint_faults_local");
	auto migrated = vmstat_value(text, "numa_pages_migrated");

	if (!faults || !local || !migrated)
		return std::nullopt;
	return NumaLocality{*faults, *local, *migrated};
}

NumaLocality numa_delta(const NumaLocality &before, const NumaLocality &now)
{
	auto d = [](std::uint64_t a, std::uint64_t b) { return b >= a ? b - a : 0; };

	return {d(before.hint_faults, now.hint_faults),
		d(before.hint_faults_local, now.hint_faults_local),
		d(before.pages_migrated, now.pages_migrated)};
}

std::uint64_t monotonic_ns()
{
	struct timespec ts = {};

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return static_cast<std::uint64_t>(ts.tv_sec) * 1000000000ULL +
	       static_cast<std::uint64_t>(ts.tv_nsec);
}

} // namespace detail

} // namespace mcp::trace
