// SPDX-License-Identifier: GPL-2.0-only
// What mcpctl's live views (monitor, top, trace) share: Ctrl-C and SIGTERM
// end them cleanly, with exit 0, even in the middle of a wait.
#ifndef MCPCTL_LIVE_HPP
#define MCPCTL_LIVE_HPP

#include <string>

namespace mcpctl {

// Installs SIGINT and SIGTERM handlers that only set a flag.  Without
// SA_RESTART, so a blocking wait returns EINTR and the loop can check it.
void catch_stop_signals();

// Whether SIGINT or SIGTERM arrived since catch_stop_signals().
bool stop_requested() noexcept;

// Sleeps @seconds unless a stop signal arrives first.
void sleep_unless_stopped(double seconds);

// The current UTC time: "2026-11-29T23:40:00Z" with @date, else "23:40:00".
std::string utc_now(bool date);

} // namespace mcpctl

#endif // MCPCTL_LIVE_HPP
