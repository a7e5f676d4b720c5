// SPDX-License-Identifier: LGPL-2.1-or-later
// mcp::trace::SchedTracer: loads bpf/trace_sched.bpf.c through its
// skeleton, fills its CPU->node map and drains its per-task table.
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/bpf.h>
#include <linux/types.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <iterator>
#include <limits>
#include <string>

#include "trace_internal.hpp"
#include "trace_sched.h"
#include "trace_sched.skel.h"

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

// Whether the verifier can resolve the per-CPU variable @name: it looks
// data symbols up in kallsyms, which lists them with CONFIG_KALLSYMS_ALL.
bool kernel_has_data_symbol(const char *name)
{
	std::ifstream kallsyms("/proc/kallsyms");
	std::string addr, type, sym;

	while (kallsyms >> addr >> type >> sym) {
		if (sym == name)
			return true;
		kallsyms.ignore(std::numeric_limits<std::streamsize>::max(), '\n');
	}
	return false;
}

} // namespace

struct SchedTracer::Impl {
	std::unique_ptr<struct trace_sched, SkelDeleter> skel;
	std::string attach_mode;
	bool numa_events = false;
	std::uint64_t since_ns = 0;
};

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
	// The hot tp_btf programs read the run queues' clocks where the
	// verifier can find them, else CLOCK_MONOTONIC (the _kt twins).
	struct bpf_program *btf_kt_progs[] = {
		s->progs.sched_wakeup_btf_kt, s->progs.sched_wakeup_new_btf_kt,
		s->progs.sched_switch_btf_kt,
	};
	const bool rq_clock = btf && kernel_has_data_symbol("runqueues");
	for (auto *p : btf_progs)
		bpf_program__set_autoload(p, btf);
	for (auto *p : raw_progs)
		bpf_program__set_autoload(p, !btf);
	for (std::size_t i = 0; i < std::size(btf_kt_progs); i++) {
		bpf_program__set_autoload(btf_progs[i], rq_clock);
		bpf_program__set_autoload(btf_kt_progs[i], btf && !rq_clock);
	}
	// Each family keeps its per-thread state in its own map; the other's
	// is not created (kernels without tp_btf lack task storage too).
	bpf_map__set_autocreate(s->maps.task_states, btf);
	bpf_map__set_autocreate(s->maps.pid_states, !btf);

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

	SchedTracer t;
	t.impl_ = std::move(impl);
	return t;
}

SchedSnapshot SchedTracer::snapshot()
{
	if (!impl_)
		throw TraceError(EBADF, "SchedTracer::snapshot() on a tracer that is not open");
	struct trace_sched *s = impl_->skel.get();
	struct bpf_map *map = s->maps.tasks;
	SchedSnapshot snap;
	std::vector<__u32> keys;
	__u32 key, next;

	const std::uint64_t now = detail::monotonic_ns();
	snap.interval_ns = now - impl_->since_ns;
	impl_->since_ns = now;

	// Keys first, then take each one out: deleting while walking would
	// restart the walk.
	for (int err = bpf_map__get_next_key(map, nullptr, &next, sizeof(next)); !err;
	     err = bpf_map__get_next_key(map, &key, &next, sizeof(next))) {
		keys.push_back(next);
		key = next;
	}
	snap.runq_us.slots.assign(histogram_slots, 0);
	for (__u32 pid : keys) {
		struct mcp_sched_task v = {};

		if (bpf_map__lookup_and_delete_elem(map, &pid, sizeof(pid), &v, sizeof(v), 0))
			continue; // exited and reaped meanwhile
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
		snap.runq_us.merge(t.runq_us);
		snap.tasks.push_back(std::move(t));
	}
	std::sort(snap.tasks.begin(), snap.tasks.end(),
		  [](const SchedTask &a, const SchedTask &b) { return a.pid < b.pid; });
	snap.dropped_tasks = __atomic_exchange_n(&s->bss->dropped_tasks, 0, __ATOMIC_RELAXED);
	return snap;
}

} // namespace mcp::trace
