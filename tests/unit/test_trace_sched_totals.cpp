// SPDX-License-Identifier: GPL-2.0-only
// mcp::trace::detail::SchedTotals: the tp_btf sched programs' running
// totals turned into per-interval counts, for live threads, exited ones,
// threads in both, reused pids, threads that left the task list early and
// threads on a CPU, whose dumps add the slice they have run so far.
#include <criterion/criterion.h>

#include "trace_sched_totals.hpp"

using mcp::trace::detail::SchedTotals;

namespace {

struct mcp_sched_task thread(__u32 pid, __u64 start_ns, __u64 waits, __u64 oncpu_ns)
{
	struct mcp_sched_task t = {};

	t.pid = pid;
	t.tgid = pid;
	t.start_ns = start_ns;
	t.runq_count = waits;
	t.runq_slots[3] = waits;
	t.runq_total_ns = waits * 10000;
	t.oncpu_ns[1] = oncpu_ns;
	t.last_cpu = 2;
	t.last_node = 1;
	return t;
}

} // namespace

Test(trace_sched_totals, live_threads_report_what_is_new)
{
	SchedTotals totals;

	auto first = totals.interval({thread(10, 1, 4, 1000), thread(11, 2, 0, 0)}, {});
	cr_assert_eq(first.size(), 1, "a thread with nothing counted has no row");
	cr_expect_eq(first.at({10, 1}).runq_count, 4);
	cr_expect_eq(first.at({10, 1}).oncpu_ns[1], 1000);

	auto second = totals.interval({thread(10, 1, 6, 1500), thread(11, 2, 0, 0)}, {});
	cr_assert_eq(second.size(), 1);
	cr_expect_eq(second.at({10, 1}).runq_count, 2);
	cr_expect_eq(second.at({10, 1}).runq_slots[3], 2);
	cr_expect_eq(second.at({10, 1}).runq_total_ns, 20000);
	cr_expect_eq(second.at({10, 1}).oncpu_ns[1], 500);
	cr_expect_eq(second.at({10, 1}).last_cpu, 2, "the last CPU is a state, not a count");

	cr_expect(totals.interval({thread(10, 1, 6, 1500)}, {}).empty(), "nothing new");
}

Test(trace_sched_totals, an_exited_thread_counts_once)
{
	SchedTotals totals;

	totals.interval({thread(10, 1, 4, 1000)}, {});
	// Read by the dump and then exited: the exit adds only what is newer.
	auto both = totals.interval({thread(10, 1, 5, 1200)}, {thread(10, 1, 7, 1300)});
	cr_assert_eq(both.size(), 1);
	cr_expect_eq(both.at({10, 1}).runq_count, 3);
	cr_expect_eq(both.at({10, 1}).oncpu_ns[1], 300);
	cr_expect(totals.interval({}, {}).empty(), "an exited thread is forgotten");
}

Test(trace_sched_totals, left_the_task_list_before_its_last_switch)
{
	SchedTotals totals;

	totals.interval({thread(10, 1, 4, 1000)}, {});
	// Gone from the dump, its exit record not there yet.
	cr_expect(totals.interval({}, {}).empty());
	auto late = totals.interval({}, {thread(10, 1, 5, 1100)});
	cr_assert_eq(late.size(), 1);
	cr_expect_eq(late.at({10, 1}).runq_count, 1, "not its totals since it started");
	cr_expect_eq(late.at({10, 1}).oncpu_ns[1], 100);
}

Test(trace_sched_totals, a_reused_pid_is_another_thread)
{
	SchedTotals totals;

	totals.interval({thread(10, 1, 4, 1000)}, {});
	auto reused = totals.interval({thread(10, 99, 2, 50)}, {thread(10, 1, 4, 1000)});
	cr_assert_eq(reused.size(), 1, "the old thread did nothing new");
	cr_expect_eq(reused.at({10, 99}).runq_count, 2);
	cr_expect_eq(reused.at({10, 99}).oncpu_ns[1], 50);
}

Test(trace_sched_totals, the_maximum_is_per_interval_already)
{
	SchedTotals totals;
	struct mcp_sched_task a = thread(10, 1, 4, 1000), b = thread(10, 1, 5, 1200);

	a.runq_max_ns = 70000;
	totals.interval({a}, {});
	b.runq_max_ns = 9000;	// the iterator restarted it
	cr_expect_eq(totals.interval({b}, {}).at({10, 1}).runq_max_ns, 9000);
}

// A thread on a CPU: the dump reports its totals plus the slice it has run
// since its switch-in; the switch-out charges the whole slice.
Test(trace_sched_totals, a_running_slice_counts_once)
{
	SchedTotals totals;

	auto first = totals.interval({thread(10, 1, 1, 300)}, {});
	cr_assert_eq(first.size(), 1, "a thread never switched out has a row");
	cr_expect_eq(first.at({10, 1}).oncpu_ns[1], 300);

	auto still = totals.interval({thread(10, 1, 1, 800)}, {});
	cr_expect_eq(still.at({10, 1}).oncpu_ns[1], 500, "the slice grew by 500");

	// Switched out after 1000 ns (all in the totals), and not on a CPU.
	auto out = totals.interval({thread(10, 1, 1, 1000)}, {});
	cr_expect_eq(out.at({10, 1}).oncpu_ns[1], 200, "only what the dumps did not report");

	auto in_again = totals.interval({thread(10, 1, 2, 1000 + 50)}, {});
	cr_expect_eq(in_again.at({10, 1}).oncpu_ns[1], 50);
	cr_expect_eq(in_again.at({10, 1}).runq_count, 1);
}

// A slice on another node than the totals so far: each node's time grows.
Test(trace_sched_totals, a_running_slice_on_another_node)
{
	SchedTotals totals;
	struct mcp_sched_task a = thread(10, 1, 1, 1000), b = a, c = a;

	totals.interval({a}, {});
	b.oncpu_ns[0] = 400;	/* running on node 0 now */
	b.last_cpu = 0;
	b.last_node = 0;
	auto running = totals.interval({b}, {});
	cr_expect_eq(running.at({10, 1}).oncpu_ns[0], 400);
	cr_expect_eq(running.at({10, 1}).oncpu_ns[1], 0);
	cr_expect_eq(running.at({10, 1}).last_node, 0);
	c.oncpu_ns[0] = 600;	/* switched out there */
	c.last_cpu = 0;
	c.last_node = 0;
	cr_expect_eq(totals.interval({c}, {}).at({10, 1}).oncpu_ns[0], 200);
}

// A dump that raced with a switch reported a slice of the next thread: the
// next dump is lower.  No negative count, and the excess is taken off what
// comes next instead of being counted twice.
Test(trace_sched_totals, an_over_reported_slice_is_absorbed)
{
	SchedTotals totals;

	totals.interval({thread(10, 1, 1, 1000)}, {});
	auto over = totals.interval({thread(10, 1, 1, 1500)}, {});
	cr_expect_eq(over.at({10, 1}).oncpu_ns[1], 500);
	cr_expect(totals.interval({thread(10, 1, 1, 1400)}, {}).empty(),
		  "lower than the last dump: no row, no wrap-around");
	auto next = totals.interval({thread(10, 1, 1, 1700)}, {});
	cr_expect_eq(next.at({10, 1}).oncpu_ns[1], 200, "from the highest dump, 1500");
	// Its exit charges its last slice: from the highest dump too.
	auto exit = totals.interval({}, {thread(10, 1, 1, 1750)});
	cr_expect_eq(exit.at({10, 1}).oncpu_ns[1], 50);
}

// A dump reported a running slice, then the thread exited: its exit record
// (which includes the whole slice) adds only the rest.
Test(trace_sched_totals, a_running_thread_exits)
{
	SchedTotals totals;

	totals.interval({thread(10, 1, 0, 700)}, {});
	auto gone = totals.interval({}, {thread(10, 1, 0, 900)});
	cr_expect_eq(gone.at({10, 1}).oncpu_ns[1], 200);
	cr_expect(totals.interval({}, {}).empty());
}
