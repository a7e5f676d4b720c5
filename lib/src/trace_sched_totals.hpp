// SPDX-License-Identifier: LGPL-2.1-or-later
// The tp_btf sched programs keep each thread's running totals; a snapshot
// reports what each thread did since the previous one.  Not installed.
#ifndef MCP_SRC_TRACE_SCHED_TOTALS_HPP
#define MCP_SRC_TRACE_SCHED_TOTALS_HPP

#include <linux/types.h>

#include <map>
#include <utility>
#include <vector>

#include "trace_sched.h"

namespace mcp::trace::detail {

class SchedTotals {
public:
	// A thread: its pid and start time (pids are reused).
	using Key = std::pair<__u32, __u64>;

	// This interval's counts of every thread that did something, from
	// @live (the task iterator's dump of the live threads' totals, with
	// the slice a thread on a CPU has run so far, read first) and
	// @exited (the totals threads left at their last switch), minus the
	// most the previous calls saw of each thread: never negative, and a
	// slice reported early is not counted again when its switch-out
	// charges it.
	std::map<Key, struct mcp_sched_task> interval(const std::vector<struct mcp_sched_task> &live,
						      const std::vector<struct mcp_sched_task> &exited);

private:
	struct Seen {
		struct mcp_sched_task totals;
		unsigned missing;	// calls it has been absent from @live
	};
	std::map<Key, Seen> seen_;
};

} // namespace mcp::trace::detail

#endif // MCP_SRC_TRACE_SCHED_TOTALS_HPP
