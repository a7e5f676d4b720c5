// SPDX-License-Identifier: LGPL-2.1-or-later
// Task placement: sampling a task's page histogram with move_pages(2),
// MCP_IOC_PLACE / MCP_IOC_UNPLACE, and the sentences for their errors.
#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <string>
#include <vector>

#include <fcntl.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "internal.hpp"

namespace mcp {

const char *to_string(PlaceReason reason) noexcept
{
	switch (reason) {
	case PlaceReason::none:
		return "none";
	case PlaceReason::memory_local:
		return "memory-local";
	case PlaceReason::nearest:
		return "nearest";
	case PlaceReason::sticky:
		return "sticky";
	case PlaceReason::unchanged:
		return "unchanged";
	case PlaceReason::forced:
		return "forced";
	case PlaceReason::runq_latency:
		return "runq-latency";
	}
	return "unknown";
}

const char *to_string(HomeSource source) noexcept
{
	switch (source) {
	case HomeSource::none:
		return "none";
	case HomeSource::histogram:
		return "histogram";
	case HomeSource::numa_faults:
		return "numa-faults";
	case HomeSource::last_cpu:
		return "last-cpu";
	}
	return "unknown";
}

namespace detail {

static bool parse_hex(std::string_view s, std::uint64_t &v)
{
	auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v, 16);
	return ec == std::errc() && p == s.data() + s.size();
}

// The next space-separated field of @line, advancing it.
static std::string_view next_field(std::string_view &line)
{
	std::size_t b = line.find_first_not_of(' ');

	if (b == std::string_view::npos) {
		line = {};
		return {};
	}
	line.remove_prefix(b);
	std::size_t e = line.find(' ');
	std::string_view f = line.substr(0, e);
	line.remove_prefix(e == std::string_view::npos ? line.size() : e);
	return f;
}

std::vector<MapRange> parse_maps(std::string_view text)
{
	std::vector<MapRange> out;

	while (!text.empty()) {
		std::size_t nl = text.find('\n');
		std::string_view line = text.substr(0, nl);

		text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);

		// start-end perms offset dev inode [path]
		std::string_view range = next_field(line);
		std::string_view perms = next_field(line);
		std::string_view offset = next_field(line);
		std::string_view dev = next_field(line);
		std::string_view inode = next_field(line);
		if (inode.empty() || offset.empty() || dev.empty())
			continue;
		std::size_t b = line.find_first_not_of(' ');
		std::string_view path = b == std::string_view::npos ? std::string_view() : line.substr(b);
		while (!path.empty() && path.back() == ' ')
			path.remove_suffix(1);

		std::size_t dash = range.find('-');
		MapRange r;
		if (dash == std::string_view::npos || perms.size() < 4 ||
		    !parse_hex(range.substr(0, dash), r.start) ||
		    !parse_hex(range.substr(dash + 1), r.end) || r.end <= r.start)
			continue;
		r.perms = perms;
		r.path = path;
		out.push_back(std::move(r));
	}
	return out;
}

bool sample_worthy(const MapRange &r)
{
	if (r.perms.size() < 4 || r.perms[0] != 'r')
		return false;
	if (!r.path.empty() && r.path.front() == '[')
		return r.path == "[heap]" || r.path == "[stack]";
	const bool private_writable = r.perms[1] == 'w' && r.perms[3] == 'p';
	const bool file = !r.path.empty() && r.path.front() == '/';
	return private_writable || file;
}

std::vector<std::uint64_t> sample_addresses(const std::vector<MapRange> &maps,
					    unsigned max_pages, std::uint64_t page_size)
{
	std::vector<const MapRange *> ranges;
	std::uint64_t total = 0;
	std::vector<std::uint64_t> out;

	for (const MapRange &r : maps) {
		if (!sample_worthy(r))
			continue;
		ranges.push_back(&r);
		total += (r.end - r.start) / page_size;
	}
	if (total == 0 || max_pages == 0)
		return out;

	__extension__ typedef unsigned __int128 u128;
	const std::uint64_t want = std::min<std::uint64_t>(total, max_pages);
	out.reserve(want);
	// Page number k of the concatenated ranges, for k = i * total / want.
	std::size_t ri = 0;
	std::uint64_t base = 0; // pages before ranges[ri]
	for (std::uint64_t i = 0; i < want; i++) {
		const std::uint64_t k = static_cast<std::uint64_t>(
			static_cast<u128>(i) * total / want);

		while (k >= base + (ranges[ri]->end - ranges[ri]->start) / page_size) {
			base += (ranges[ri]->end - ranges[ri]->start) / page_size;
			ri++;
		}
		out.push_back(ranges[ri]->start + (k - base) * page_size);
	}
	return out;
}

PageHistogram count_histogram(std::span<const int> status, std::size_t min_nodes)
{
	PageHistogram h;

	h.pages_per_node.assign(min_nodes, 0);
	h.sampled = static_cast<unsigned>(status.size());
	for (int s : status) {
		if (s < 0)
			continue;
		const auto node = static_cast<std::size_t>(s);
		if (node >= MCP_PLACE_HISTOGRAM_MAX)
			continue;
		if (node >= h.pages_per_node.size())
			h.pages_per_node.resize(node + 1, 0);
		h.pages_per_node[node]++;
		h.resident++;
	}
	return h;
}

std::uint32_t place_flags(const PlaceOptions &options)
{
	std::uint32_t flags = 0;

	if (options.dry_run)
		flags |= MCP_PLACE_DRY_RUN;
	if (options.force)
		flags |= MCP_PLACE_FORCE;
	if (options.keep)
		flags |= MCP_PLACE_KEEP;
	if (options.strict)
		flags |= MCP_PLACE_STRICT;
	if (options.node)
		flags |= MCP_PLACE_NODE;
	if (options.adaptive)
		flags |= MCP_PLACE_ADAPTIVE;
	return flags;
}

static std::string who(int pid)
{
	return pid == 0 ? std::string("the calling thread") : "pid " + std::to_string(pid);
}

std::string place_error_message(int errnum, int pid, const PlaceOptions &options,
				bool unplace)
{
	const std::string verb = unplace ? "unplace" : "place";

	switch (errnum) {
	case EPERM:
	case EACCES:
		return "not allowed to " + verb + " " + who(pid) +
		       ": it belongs to another user (needs CAP_SYS_NICE)";
	case ESRCH:
		return "no such task: " + who(pid) + " does not exist (or has exited)";
	case EAGAIN:
		return "no NUMA node has enough idle CPUs for " + who(pid) +
		       " (strict placement): retry later, lower min_idle_cpus in "
		       "/sys/class/misc/mcp/placement/, or drop --strict";
	case ENOENT:
		if (unplace)
			return who(pid) + " was never placed by MCP (or was already unplaced)";
		break;
	case EINVAL:
		if (options.node)
			return "cannot " + verb + " " + who(pid) + " on node " +
			       std::to_string(*options.node) +
			       ": the node is not online, has no CPUs the task may use, "
			       "or the task is a kernel thread";
		return "cannot " + verb + " " + who(pid) +
		       ": it is a kernel thread or its affinity is fixed (PF_NO_SETAFFINITY)";
	case EOPNOTSUPP:
		return "the loaded mcp module cannot place tasks: install a newer mcp module";
	default:
		break;
	}
	return ioctl_error_message(errnum, MCP_DEFAULT_DEVICE,
				   unplace ? "MCP_IOC_UNPLACE" : "MCP_IOC_PLACE");
}

PlaceResult decode_place(const struct mcp_place &arg, int pid, bool dry_run,
			 std::span<const std::uint64_t> mask,
			 std::span<const std::uint32_t> idle)
{
	PlaceResult r;

	r.pid = pid;
	r.dry_run = dry_run;
	r.node_chosen = arg.node_chosen;
	r.prev_node = arg.prev_node;
	r.home_node = arg.home_node;
	r.reason = static_cast<PlaceReason>(arg.reason);
	r.home_source = static_cast<HomeSource>(arg.home_source);
	const std::size_t words = std::min<std::size_t>(mask.size(), arg.nr_cpu_words);
	for (std::size_t w = 0; w < words; w++)
		for (unsigned b = 0; b < 64; b++)
			if (mask[w] & (1ULL << b))
				r.cpus.push_back(static_cast<unsigned>(w * 64 + b));
	const std::size_t nodes = std::min<std::size_t>(idle.size(), arg.nr_node_ids);
	r.idle_cpus.assign(idle.begin(), idle.begin() + static_cast<std::ptrdiff_t>(nodes));
	return r;
}

std::vector<unsigned> parse_id_list(std::string_view list)
{
	std::vector<unsigned> ids;

	while (!list.empty() && (list.back() == '\n' || list.back() == ' '))
		list.remove_suffix(1);
	while (!list.empty()) {
		std::size_t comma = list.find(',');
		std::string_view item = list.substr(0, comma);
		list = comma == std::string_view::npos ? std::string_view() : list.substr(comma + 1);

		unsigned a = 0, b = 0;
		std::size_t dash = item.find('-');
		std::string_view sa = item.substr(0, dash);
		auto [pa, ea] = std::from_chars(sa.data(), sa.data() + sa.size(), a);
		if (ea != std::errc() || pa != sa.data() + sa.size())
			throw Error(EINVAL, "malformed id list '" + std::string(item) + "'");
		b = a;
		if (dash != std::string_view::npos) {
			std::string_view sb = item.substr(dash + 1);
			auto [pb, eb] = std::from_chars(sb.data(), sb.data() + sb.size(), b);
			if (eb != std::errc() || pb != sb.data() + sb.size() || b < a)
				throw Error(EINVAL, "malformed id list '" + std::string(item) + "'");
		}
		for (unsigned i = a; i <= b; i++)
			ids.push_back(i);
	}
	return ids;
}

} // namespace detail

PageHistogram sample_page_histogram(int pid, unsigned max_pages)
{
	const std::string maps_path =
		pid == 0 ? std::string("/proc/self/maps") : "/proc/" + std::to_string(pid) + "/maps";
	int fd = ::open(maps_path.c_str(), O_RDONLY | O_CLOEXEC);

	if (fd < 0) {
		int err = errno;
		if (err == ENOENT)
			throw Error(ESRCH, "no such task: pid " + std::to_string(pid) + " does not exist");
		throw Error(err, "cannot read " + maps_path + ": " + std::strerror(err));
	}
	std::string text;
	for (;;) {
		char buf[16384];
		ssize_t n = ::read(fd, buf, sizeof(buf));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			int err = n < 0 ? errno : 0;
			::close(fd);
			if (err)
				throw Error(err == EACCES ? EPERM : err,
					    "cannot read " + maps_path + ": " + std::strerror(err));
			break;
		}
		text.append(buf, static_cast<std::size_t>(n));
	}

	const auto page = static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE));
	std::vector<std::uint64_t> addrs =
		detail::sample_addresses(detail::parse_maps(text), max_pages, page);
	std::vector<void *> pages(addrs.size());
	std::vector<int> status(addrs.size(), -1);

	for (std::size_t i = 0; i < addrs.size(); i++)
		pages[i] = reinterpret_cast<void *>(addrs[i]);
	if (!pages.empty() &&
	    ::syscall(SYS_move_pages, pid, static_cast<unsigned long>(pages.size()),
		      pages.data(), nullptr, status.data(), 0) != 0) {
		int err = errno;
		if (err == EPERM || err == EACCES)
			throw Error(EPERM, "not allowed to read the page placement of pid " +
						   std::to_string(pid) +
						   ": it belongs to another user (needs CAP_SYS_NICE)");
		if (err == ESRCH)
			throw Error(ESRCH, "no such task: pid " + std::to_string(pid) + " does not exist");
		if (err == ENOSYS)
			throw Error(ENOSYS, "move_pages(2) is not available: the kernel lacks NUMA support");
		throw Error(err, std::string("move_pages(2) failed: ") + std::strerror(err));
	}
	return detail::count_histogram(status);
}

PlaceResult Device::place(int pid, const PlaceOptions &options) const
{
	if (!is_open())
		throw Error(EBADF, "the mcp device is not open");
	if (!version_.has(feature::place))
		throw Error(EOPNOTSUPP, "the loaded mcp module (" + version_.module_version +
						") cannot place tasks: install a newer mcp module");

	if (options.adaptive && !options.keep)
		throw Error(EINVAL, "adaptive placement needs keep: the rebalancer only looks at kept tasks");
	if (options.adaptive && !version_.has(feature::place_adaptive))
		throw Error(EOPNOTSUPP, "the loaded mcp module (" + version_.module_version +
						") has no adaptive placement (a module built without "
						"CONFIG_SCHED_INFO, or an older one): drop --adaptive");
	if (!options.adaptive && options.runq_threshold_us)
		throw Error(EINVAL, "a run-queue threshold needs adaptive placement");

	std::optional<PageHistogram> hist;
	std::string hist_error;
	if (options.histogram && !options.node) {
		try {
			hist = sample_page_histogram(pid, options.sample_pages);
		} catch (const Error &e) {
			hist_error = e.what(); // the kernel decides without it
		}
	}

	// Room for 1024 CPUs and 1024 node ids (x86's MAX_NUMNODES); the
	// kernel says how many words it needs (-ENOSPC, nothing applied)
	// and reports nr_node_ids, which trims the idle array.  No sysfs
	// reads: they are most of the cost of a placement otherwise.
	std::vector<std::uint64_t> mask(16);
	std::vector<std::uint32_t> idle(1024);

	for (int attempt = 0; attempt < 4; attempt++) {
		struct mcp_place arg {};

		arg.size = sizeof(arg);
		arg.flags = detail::place_flags(options);
		arg.pid = pid;
		arg.node = options.node.value_or(0);
		arg.runq_threshold_us = options.adaptive ? options.runq_threshold_us : 0;
		if (hist && !hist->pages_per_node.empty()) {
			arg.histogram_ptr = reinterpret_cast<std::uintptr_t>(hist->pages_per_node.data());
			arg.histogram_nodes = static_cast<std::uint32_t>(hist->pages_per_node.size());
		}
		arg.mask_ptr = reinterpret_cast<std::uintptr_t>(mask.data());
		arg.mask_words = static_cast<std::uint32_t>(mask.size());
		arg.idle_ptr = reinterpret_cast<std::uintptr_t>(idle.data());
		arg.idle_nodes = static_cast<std::uint32_t>(idle.size());

		if (::ioctl(fd_, MCP_IOC_PLACE, &arg) == 0) {
			PlaceResult r = detail::decode_place(arg, pid, options.dry_run, mask, idle);
			r.histogram = std::move(hist);
			r.histogram_error = std::move(hist_error);
			return r;
		}
		int err = errno;
		if (err == ENOSPC && arg.nr_cpu_words > mask.size()) {
			mask.assign(arg.nr_cpu_words, 0);
			continue;
		}
		throw Error(err, detail::place_error_message(err, pid, options));
	}
	throw Error(EAGAIN, "the number of CPUs kept changing during placement: try again");
}

void Device::unplace(int pid) const
{
	if (!is_open())
		throw Error(EBADF, "the mcp device is not open");
	if (!version_.has(feature::place))
		throw Error(EOPNOTSUPP, "the loaded mcp module (" + version_.module_version +
						") cannot place tasks: install a newer mcp module");

	struct mcp_unplace arg {};
	arg.size = sizeof(arg);
	arg.pid = pid;
	if (::ioctl(fd_, MCP_IOC_UNPLACE, &arg) != 0) {
		int err = errno;
		throw Error(err, detail::place_error_message(err, pid, {}, true));
	}
}

} // namespace mcp
