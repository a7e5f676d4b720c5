// SPDX-License-Identifier: LGPL-2.1-or-later
// mcp::trace::CacheTracer: LLC references/misses per thread from
// bpf/trace_cache.bpf.c attached to sampling perf events on every CPU (as
// llcstat), and NUMA locality from the kernel's NUMA-balancing counters.
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/perf_event.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <utility>

#include "internal.hpp"
#include "trace_cache.h"
#include "trace_internal.hpp"
#include "trace_cache.skel.h"

namespace mcp::trace {

namespace {

struct SkelDeleter {
	void operator()(struct trace_cache *s) const noexcept { trace_cache__destroy(s); }
};

struct LinkDeleter {
	void operator()(struct bpf_link *l) const noexcept { bpf_link__destroy(l); }
};

using LinkPtr = std::unique_ptr<struct bpf_link, LinkDeleter>;

// An owned perf event fd until a bpf_link takes it over.
class PerfFd {
public:
	explicit PerfFd(int fd) noexcept : fd_(fd) {}
	~PerfFd()
	{
		if (fd_ >= 0)
			close(fd_);
	}
	PerfFd(const PerfFd &) = delete;
	PerfFd &operator=(const PerfFd &) = delete;
	int get() const noexcept { return fd_; }
	int release() noexcept { return std::exchange(fd_, -1); }

private:
	int fd_;
};

int open_llc_event(std::uint64_t config, std::uint64_t period, int cpu)
{
	struct perf_event_attr attr = {};

	attr.type = PERF_TYPE_HARDWARE;
	attr.size = sizeof(attr);
	attr.config = config;
	attr.sample_period = period;
	attr.inherit = 1;
	return static_cast<int>(syscall(SYS_perf_event_open, &attr, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC));
}

std::vector<unsigned> online_cpus()
{
	std::ifstream in("/sys/devices/system/cpu/online");
	std::string list;

	if (std::getline(in, list)) {
		try {
			return mcp::detail::parse_id_list(list);
		} catch (const Error &) {
		}
	}
	std::vector<unsigned> cpus(static_cast<std::size_t>(std::max(1L, sysconf(_SC_NPROCESSORS_ONLN))));
	for (unsigned i = 0; i < cpus.size(); i++)
		cpus[i] = i;
	return cpus;
}

std::optional<NumaLocality> read_numa_vmstat()
{
	std::ifstream in("/proc/vmstat");
	std::stringstream ss;

	ss << in.rdbuf();
	return detail::parse_numa_vmstat(ss.str());
}

} // namespace

struct CacheTracer::Impl {
	std::unique_ptr<struct trace_cache, SkelDeleter> skel;
	std::vector<LinkPtr> links;
	bool llc_available = false;
	std::string llc_message;
	std::optional<NumaLocality> numa_base;
	std::uint64_t since_ns = 0;
};

CacheTracer::CacheTracer() noexcept = default;
CacheTracer::CacheTracer(CacheTracer &&) noexcept = default;
CacheTracer &CacheTracer::operator=(CacheTracer &&) noexcept = default;
CacheTracer::~CacheTracer() = default;

bool CacheTracer::llc_available() const noexcept
{
	return impl_ && impl_->llc_available;
}

const std::string &CacheTracer::llc_message() const noexcept
{
	static const std::string none;
	return impl_ ? impl_->llc_message : none;
}

CacheTracer CacheTracer::open(const CacheOptions &options)
{
	detail::require_kernel_btf();
	if (options.sample_period == 0)
		throw TraceError(EINVAL, "the LLC sample period must be at least 1");
	const std::uint64_t cgid = detail::filter_cgroup_id(options.filter);
	auto impl = std::make_unique<Impl>();
	detail::LibbpfLog log;

	impl->skel.reset(trace_cache__open());
	if (!impl->skel)
		throw detail::load_error(errno, "cache", "opening the cache programs", log.text());
	struct trace_cache *s = impl->skel.get();

	s->rodata->targ_tgid = static_cast<__u32>(options.filter.pid);
	s->rodata->filter_cgroup = !options.filter.cgroup.empty();
	s->rodata->targ_cgroup_id = cgid;
	int err = trace_cache__load(s);
	if (err)
		throw detail::load_error(-err, "cache", "loading the cache programs", log.text());

	impl->llc_available = true;
	for (unsigned cpu : online_cpus()) {
		for (auto [config, prog] : {std::pair{PERF_COUNT_HW_CACHE_REFERENCES, s->progs.on_cache_ref},
					    std::pair{PERF_COUNT_HW_CACHE_MISSES, s->progs.on_cache_miss}}) {
			PerfFd fd(open_llc_event(config, options.sample_period, static_cast<int>(cpu)));
			if (fd.get() < 0) {
				int e = errno;
				impl->llc_available = false;
				impl->llc_message = std::string("LLC counters unavailable on this host "
								"(perf_event_open: ") +
						    std::strerror(e) +
						    (e == ENOENT || e == EOPNOTSUPP || e == ENODEV
							     ? ", no hardware PMU)"
							     : ")");
				break;
			}
			LinkPtr link(bpf_program__attach_perf_event(prog, fd.get()));
			if (!link)
				throw detail::load_error(errno, "cache", "attaching to the LLC perf events",
							 log.text());
			fd.release(); // the link closes it
			impl->links.push_back(std::move(link));
		}
		if (!impl->llc_available)
			break;
	}
	if (!impl->llc_available)
		impl->links.clear();
	impl->numa_base = read_numa_vmstat();
	impl->since_ns = detail::monotonic_ns();

	CacheTracer t;
	t.impl_ = std::move(impl);
	return t;
}

CacheSnapshot CacheTracer::snapshot()
{
	if (!impl_)
		throw TraceError(EBADF, "CacheTracer::snapshot() on a tracer that is not open");
	struct trace_cache *s = impl_->skel.get();
	struct bpf_map *map = s->maps.llc;
	CacheSnapshot snap;
	std::vector<__u32> keys;
	__u32 key, next;

	const std::uint64_t now = detail::monotonic_ns();
	snap.interval_ns = now - impl_->since_ns;
	impl_->since_ns = now;
	snap.llc_available = impl_->llc_available;
	snap.llc_message = impl_->llc_message;

	for (int err = bpf_map__get_next_key(map, nullptr, &next, sizeof(next)); !err;
	     err = bpf_map__get_next_key(map, &key, &next, sizeof(next))) {
		keys.push_back(next);
		key = next;
	}
	for (__u32 pid : keys) {
		struct mcp_cache_task v = {};

		if (bpf_map__lookup_and_delete_elem(map, &pid, sizeof(pid), &v, sizeof(v), 0))
			continue;
		CacheTask t;
		t.pid = static_cast<int>(v.pid);
		t.tgid = static_cast<int>(v.tgid);
		t.comm.assign(v.comm, strnlen(v.comm, sizeof(v.comm)));
		t.references = v.references;
		t.misses = v.misses;
		snap.tasks.push_back(std::move(t));
	}
	std::sort(snap.tasks.begin(), snap.tasks.end(),
		  [](const CacheTask &a, const CacheTask &b) { return a.pid < b.pid; });
	snap.dropped_tasks = __atomic_exchange_n(&s->bss->dropped_tasks, 0, __ATOMIC_RELAXED);

	std::optional<NumaLocality> numa = read_numa_vmstat();
	if (numa && impl_->numa_base) {
		snap.numa_available = true;
		snap.numa = detail::numa_delta(*impl_->numa_base, *numa);
	}
	impl_->numa_base = numa;
	return snap;
}

} // namespace mcp::trace
