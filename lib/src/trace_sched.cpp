// SPDX-License-Identifier: LGPL-2.1-or-later
// mcp::trace::SchedTracer: loads bpf/trace_sched.bpf.c through its
// skeleton, fills its CPU->node map and reads its per-task counts: each
// interval's difference of the running totals, running slices included
// (tp_btf family), or the drained per-task table (raw_tp family).
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/bpf.h>
#include <linux/types.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <iterator>
#include <map>
#include <set>
#include <string>
#include <utility>

#include "trace_internal.hpp"
#include "trace_sched.h"
#include "trace_sched.skel.h"
#include "trace_sched_totals.hpp"

static_assert(mcp::trace::histogram_slots == MCP_TRACE_SLOTS);
static_assert(MCP_TRACE_HIST_SLOTS == MCP_TRACE_SLOTS);

namespace mcp::trace {

namespace {

struct SkelDeleter {
	void operator()(struct trace_sched *s) const noexcept { trace_sched__destroy(s); }
};

// Whether the kernel attaches a tp_btf program to tracepoint @name: a
// two-instruction program loaded against its BTF type (as runqlat probes).
bool kernel_has_tp_btf(const char *name)
{
	const int btf_id = libbpf_find_vmlinux_btf_id(name, BPF_TRACE_RAW_TP);
	if (btf_id <= 0)
		return false;

	struct bpf_insn insns[2] = {};
	insns[0].code = BPF_ALU64 | BPF_MOV | BPF_K;	// r0 = 0
	insns[1].code = BPF_JMP | BPF_EXIT;
	struct bpf_prog_load_opts opts = {};
	opts.sz = sizeof(opts);
	opts.expected_attach_type = BPF_TRACE_RAW_TP;
	opts.attach_btf_id = static_cast<__u32>(btf_id);

	int fd = bpf_prog_load(BPF_PROG_TYPE_TRACING, nullptr, "GPL", insns, 2, &opts);
	if (fd < 0)
		return false;
	close(fd);
	return true;
}

bool kernel_has_tracepoint(const char *name)
{
	return libbpf_find_vmlinux_btf_id(name, BPF_TRACE_RAW_TP) > 0;
}

detail::SchedTotals::Key key_of(const struct mcp_sched_task &t)
{
	return {t.pid, t.start_ns};
}

// @op(a.x, b.x) for every counter x of a record: not its identity, last
// CPU or runq_max_ns (a maximum, per interval already).
template <typename A, typename Op>
void for_each_counter(A &a, const struct mcp_sched_task &b, Op op)
{
	for (std::size_t i = 0; i < MCP_TRACE_SLOTS; i++)
		op(a.runq_slots[i], b.runq_slots[i]);
	for (std::size_t i = 0; i < MCP_TRACE_MAX_NODES; i++)
		op(a.oncpu_ns[i], b.oncpu_ns[i]);
	for (auto field : {&mcp_sched_task::runq_count, &mcp_sched_task::runq_total_ns,
			   &mcp_sched_task::migrations, &mcp_sched_task::cross_node_migrations,
			   &mcp_sched_task::migrate_events, &mcp_sched_task::numa_moves,
			   &mcp_sched_task::numa_swaps, &mcp_sched_task::numa_sticks})
		op(a.*field, b.*field);
}

// What a thread did between two dumps of its totals.
struct mcp_sched_task counts_since(const struct mcp_sched_task &now,
				   const struct mcp_sched_task &before)
{
	struct mcp_sched_task d = now;

	for_each_counter(d, before, [](__u64 &x, __u64 b) { x = x >= b ? x - b : 0; });
	return d;
}

bool did_anything(const struct mcp_sched_task &d)
{
	bool any = false;

	for_each_counter(d, d, [&any](__u64 x, __u64) { any = any || x != 0; });
	return any;
}

class Fd {
public:
	explicit Fd(int fd) noexcept : fd_(fd) {}
	~Fd()
	{
		if (fd_ >= 0)
			close(fd_);
	}
	Fd(const Fd &) = delete;
	Fd &operator=(const Fd &) = delete;
	int get() const noexcept { return fd_; }

private:
	int fd_;
};

// Every record dump_task_totals() writes for one pass over the threads.
std::vector<struct mcp_sched_task> dump_totals(struct bpf_link *iter)
{
	Fd fd(bpf_iter_create(bpf_link__fd(iter)));
	std::vector<struct mcp_sched_task> out;
	std::vector<char> buf;
	char chunk[16384];
	ssize_t n;

	if (fd.get() < 0)
		throw TraceError(errno, "SchedTracer::snapshot(): cannot start the task iterator");
	while ((n = read(fd.get(), chunk, sizeof(chunk))) > 0)
		buf.insert(buf.end(), chunk, chunk + n);
	if (n < 0)
		throw TraceError(errno, "SchedTracer::snapshot(): reading the task iterator failed");
	out.resize(buf.size() / sizeof(struct mcp_sched_task));
	std::memcpy(out.data(), buf.data(), out.size() * sizeof(struct mcp_sched_task));
	return out;
}

SchedTask to_sched_task(const struct mcp_sched_task &v)
{
	SchedTask t;

	t.pid = static_cast<int>(v.pid);
	t.tgid = static_cast<int>(v.tgid);
	t.comm.assign(v.comm, strnlen(v.comm, sizeof(v.comm)));
	t.cgroup_id = v.cgroup_id;
	const bool ran = std::any_of(std::begin(v.oncpu_ns), std::end(v.oncpu_ns),
				     [](__u64 ns) { return ns != 0; });
	t.cpu = ran ? static_cast<int>(v.last_cpu) : -1;
	t.node = ran ? static_cast<int>(v.last_node) : -1;
	t.runq_us.slots.assign(std::begin(v.runq_slots), std::end(v.runq_slots));
	t.runq_total_ns = v.runq_total_ns;
	t.runq_max_ns = v.runq_max_ns;
	std::size_t nodes = MCP_TRACE_MAX_NODES;
	while (nodes > 0 && v.oncpu_ns[nodes - 1] == 0)
		nodes--;
	t.oncpu_ns_per_node.assign(v.oncpu_ns, v.oncpu_ns + nodes);
	t.migrations = v.migrations;
	t.cross_node_migrations = v.cross_node_migrations;
	t.migrate_events = v.migrate_events;
	t.numa_moves = v.numa_moves;
	t.numa_swaps = v.numa_swaps;
	t.numa_sticks = v.numa_sticks;
	return t;
}

} // namespace

struct SchedTracer::Impl {
	std::unique_ptr<struct trace_sched, SkelDeleter> skel;
	std::string attach_mode;
	struct bpf_link *dump_link = nullptr;	// tp_btf: dump_task_totals
	bool numa_events = false;
	std::uint64_t since_ns = 0;
	detail::SchedTotals totals;	// tp_btf family

	std::vector<struct mcp_sched_task> drain_exited();
	std::vector<struct mcp_sched_task> drain_tasks();
};

} // namespace mcp::trace

namespace mcp::trace::detail {

std::map<SchedTotals::Key, struct mcp_sched_task>
SchedTotals::interval(const std::vector<struct mcp_sched_task> &live,
		      const std::vector<struct mcp_sched_task> &exited)
{
	std::map<Key, struct mcp_sched_task> counts;
	std::map<Key, Seen> now;
	std::set<Key> gone;

	for (const struct mcp_sched_task &t : live) {
		auto it = seen_.find(key_of(t));
		struct mcp_sched_task d = it != seen_.end() ? counts_since(t, it->second.totals) : t;
		if (did_anything(d))
			counts[key_of(t)] = d;
		// A running slice a dump raced with a switch over-reported is
		// taken off what comes next, not counted twice.
		struct mcp_sched_task high = t;
		if (it != seen_.end())
			for_each_counter(high, it->second.totals,
					 [](__u64 &x, __u64 b) { x = std::max(x, b); });
		now[key_of(t)] = {high, 0};
	}
	// A thread that exited after the dump read it is in both: its exit
	// counts only what the dump did not.
	for (const struct mcp_sched_task &t : exited) {
		const Key k = key_of(t);
		const Seen *before = nullptr;
		if (auto it = now.find(k); it != now.end())
			before = &it->second;
		else if (auto it2 = seen_.find(k); it2 != seen_.end())
			before = &it2->second;
		struct mcp_sched_task d = before ? counts_since(t, before->totals) : t;
		if (did_anything(d)) {
			auto [c, fresh] = counts.try_emplace(k, d);
			if (!fresh) {
				for_each_counter(c->second, d, [](__u64 &x, __u64 y) { x += y; });
				c->second.runq_max_ns = std::max(c->second.runq_max_ns, d.runq_max_ns);
				c->second.last_cpu = d.last_cpu;
				c->second.last_node = d.last_node;
			}
		}
		now.erase(k);
		gone.insert(k);
	}
	// A thread leaves the task list a little before its last switch: keep
	// its totals one more call, for its exit record to subtract them.
	for (const auto &[k, v] : seen_)
		if (!now.count(k) && !gone.count(k) && v.missing == 0)
			now[k] = {v.totals, 1};
	seen_ = std::move(now);
	return counts;
}

} // namespace mcp::trace::detail

namespace mcp::trace {

// tp_btf family: the totals exited threads left, taken out of "exited".
std::vector<struct mcp_sched_task> SchedTracer::Impl::drain_exited()
{
	struct bpf_map *map = skel->maps.exited;
	std::vector<struct mcp_sched_task> out;
	std::vector<struct mcp_sched_exit_key> keys;
	struct mcp_sched_exit_key key, next;

	for (int err = bpf_map__get_next_key(map, nullptr, &next, sizeof(next)); !err;
	     err = bpf_map__get_next_key(map, &key, &next, sizeof(next))) {
		keys.push_back(next);
		key = next;
	}
	for (const auto &k : keys) {
		struct mcp_sched_task t = {};

		if (!bpf_map__lookup_and_delete_elem(map, &k, sizeof(k), &t, sizeof(t), 0))
			out.push_back(t);
	}
	return out;
}

// raw_tp family: the interval's records, taken out of "tasks".
std::vector<struct mcp_sched_task> SchedTracer::Impl::drain_tasks()
{
	struct bpf_map *map = skel->maps.tasks;
	std::vector<struct mcp_sched_task> out;
	std::vector<__u32> keys;
	__u32 key, next;

	// Keys first, then take each one out: deleting while walking would
	// restart the walk.
	for (int err = bpf_map__get_next_key(map, nullptr, &next, sizeof(next)); !err;
	     err = bpf_map__get_next_key(map, &key, &next, sizeof(next))) {
		keys.push_back(next);
		key = next;
	}
	for (__u32 pid : keys) {
		struct mcp_sched_task v = {};

		if (bpf_map__lookup_and_delete_elem(map, &pid, sizeof(pid), &v, sizeof(v), 0))
			continue; // exited and reaped meanwhile
		out.push_back(v);
	}
	return out;
}

SchedTracer::SchedTracer() noexcept = default;
SchedTracer::SchedTracer(SchedTracer &&) noexcept = default;
SchedTracer &SchedTracer::operator=(SchedTracer &&) noexcept = default;
SchedTracer::~SchedTracer() = default;

const std::string &SchedTracer::attach_mode() const noexcept
{
	static const std::string none;
	return impl_ ? impl_->attach_mode : none;
}

bool SchedTracer::numa_events() const noexcept
{
	return impl_ && impl_->numa_events;
}

SchedTracer SchedTracer::open(const SchedOptions &options)
{
	detail::require_kernel_btf();
	const std::uint64_t cgid = detail::filter_cgroup_id(options.filter);
	auto impl = std::make_unique<Impl>();
	detail::LibbpfLog log;

	impl->skel.reset(trace_sched__open());
	if (!impl->skel)
		throw detail::load_error(errno, "sched", "opening the sched programs", log.text());
	struct trace_sched *s = impl->skel.get();

	s->rodata->targ_tgid = static_cast<__u32>(options.filter.pid);
	s->rodata->filter_cgroup = !options.filter.cgroup.empty();
	s->rodata->targ_cgroup_id = cgid;

	const bool btf = !options.force_raw_tp && kernel_has_tp_btf("sched_wakeup");
	impl->attach_mode = btf ? "tp_btf" : "raw_tp";
	struct bpf_program *btf_progs[] = {
		s->progs.sched_wakeup_btf, s->progs.sched_wakeup_new_btf,
		s->progs.sched_switch_btf, s->progs.sched_migrate_task_btf,
		s->progs.sched_move_numa_btf, s->progs.sched_swap_numa_btf,
		s->progs.sched_stick_numa_btf,
	};
	struct bpf_program *raw_progs[] = {
		s->progs.sched_wakeup_raw, s->progs.sched_wakeup_new_raw,
		s->progs.sched_switch_raw, s->progs.sched_migrate_task_raw,
		s->progs.sched_move_numa_raw, s->progs.sched_swap_numa_raw,
		s->progs.sched_stick_numa_raw,
	};
	for (auto *p : btf_progs)
		bpf_program__set_autoload(p, btf);
	for (auto *p : raw_progs)
		bpf_program__set_autoload(p, !btf);
	// Each family keeps its per-thread state and counts in its own maps;
	// the other's are not created (kernels without tp_btf lack task
	// storage too).  Only tp_btf dumps totals through the task iterator.
	bpf_map__set_autocreate(s->maps.task_states, btf);
	bpf_map__set_autocreate(s->maps.exited, btf);
	bpf_map__set_autocreate(s->maps.dump_record, btf);
	bpf_program__set_autoload(s->progs.dump_task_totals, btf);
	bpf_map__set_autocreate(s->maps.pid_states, !btf);
	bpf_map__set_autocreate(s->maps.tasks, !btf);

	// The NUMA-balancing tracepoints exist only with CONFIG_NUMA_BALANCING.
	impl->numa_events = true;
	for (const char *tp : {"sched_move_numa", "sched_swap_numa", "sched_stick_numa"})
		if (!kernel_has_tracepoint(tp))
			impl->numa_events = false;
	if (!impl->numa_events)
		for (int i = 4; i < 7; i++) {
			bpf_program__set_autoload(btf_progs[i], false);
			bpf_program__set_autoload(raw_progs[i], false);
		}

	int err = trace_sched__load(s);
	if (err)
		throw detail::load_error(-err, "sched", "loading the sched programs", log.text());

	std::vector<unsigned> cpu_node = options.cpu_node.empty() ? detail::read_cpu_nodes()
								  : options.cpu_node;
	for (std::size_t cpu = 0; cpu < cpu_node.size() && cpu < MCP_TRACE_MAX_CPUS; cpu++) {
		__u32 key = static_cast<__u32>(cpu), node = cpu_node[cpu];

		err = bpf_map__update_elem(s->maps.cpu_node, &key, sizeof(key), &node,
					   sizeof(node), BPF_ANY);
		if (err)
			throw detail::load_error(-err, "sched", "filling the CPU->node map",
						 log.text());
	}

	err = trace_sched__attach(s);
	if (err)
		throw detail::load_error(-err, "sched", "attaching the sched programs", log.text());
	impl->since_ns = detail::monotonic_ns();
	if (btf) {
		// A first dump stamps the CPUs of threads that have not switched
		// since the attach, so the first interval counts their slices.
		impl->dump_link = s->links.dump_task_totals;
		impl->totals.interval(dump_totals(impl->dump_link), {});
	}

	SchedTracer t;
	t.impl_ = std::move(impl);
	return t;
}

SchedSnapshot SchedTracer::snapshot()
{
	if (!impl_)
		throw TraceError(EBADF, "SchedTracer::snapshot() on a tracer that is not open");
	struct trace_sched *s = impl_->skel.get();
	SchedSnapshot snap;

	const std::uint64_t now = detail::monotonic_ns();
	snap.interval_ns = now - impl_->since_ns;
	impl_->since_ns = now;

	snap.runq_us.slots.assign(histogram_slots, 0);
	auto add = [&snap](const struct mcp_sched_task &v) {
		SchedTask t = to_sched_task(v);
		snap.runq_us.merge(t.runq_us);
		snap.tasks.push_back(std::move(t));
	};
	if (impl_->attach_mode == "tp_btf") {
		// Live threads first: one that exits meanwhile is then in both.
		auto live = dump_totals(impl_->dump_link);
		for (const auto &[key, v] : impl_->totals.interval(live, impl_->drain_exited()))
			add(v);
	}
	else
		for (const struct mcp_sched_task &v : impl_->drain_tasks())
			add(v);
	std::stable_sort(snap.tasks.begin(), snap.tasks.end(),
			 [](const SchedTask &a, const SchedTask &b) { return a.pid < b.pid; });
	snap.dropped_tasks = __atomic_exchange_n(&s->bss->dropped_tasks, 0, __ATOMIC_RELAXED);
	return snap;
}

} // namespace mcp::trace
