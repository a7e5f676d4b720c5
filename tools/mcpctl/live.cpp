// SPDX-License-Identifier: GPL-2.0-only
// Stop signals, interruptible sleeps and timestamps for live views.
#include "live.hpp"

#include <cerrno>
#include <csignal>
#include <ctime>

namespace mcpctl {

namespace {

volatile std::sig_atomic_t stop_flag = 0;

extern "C" void on_stop_signal(int)
{
	stop_flag = 1;
}

} // namespace

void catch_stop_signals()
{
	struct sigaction sa = {};

	sa.sa_handler = on_stop_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, nullptr);
	sigaction(SIGTERM, &sa, nullptr);
}

bool stop_requested() noexcept
{
	return stop_flag != 0;
}

void sleep_unless_stopped(double seconds)
{
	struct timespec ts;

	ts.tv_sec = static_cast<time_t>(seconds);
	ts.tv_nsec = static_cast<long>((seconds - static_cast<double>(ts.tv_sec)) * 1e9);
	while (!stop_flag && nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

std::string utc_now(bool date)
{
	struct timespec ts = {};
	struct tm tm = {};
	char buf[32];

	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	std::strftime(buf, sizeof(buf), date ? "%Y-%m-%dT%H:%M:%SZ" : "%H:%M:%S", &tm);
	return buf;
}

} // namespace mcpctl
