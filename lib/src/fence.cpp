// SPDX-License-Identifier: LGPL-2.1-or-later
// mcp::Fence: a sync_file fd (the out-fence of an async DMA job): waiting
// with poll(2), status and merging through <linux/sync_file.h>; and
// mcp::UniqueFd, the owned fd libmcp hands out.
#include <cerrno>
#include <cstring>
#include <ctime>
#include <string>
#include <utility>

#include <linux/sync_file.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "dma_internal.hpp"

namespace mcp {

UniqueFd::UniqueFd(UniqueFd &&other) noexcept : fd_(std::exchange(other.fd_, -1))
{
}

UniqueFd &UniqueFd::operator=(UniqueFd &&other) noexcept
{
	if (this != &other) {
		if (fd_ >= 0)
			::close(fd_);
		fd_ = std::exchange(other.fd_, -1);
	}
	return *this;
}

UniqueFd::~UniqueFd()
{
	if (fd_ >= 0)
		::close(fd_);
}

int UniqueFd::release() noexcept
{
	return std::exchange(fd_, -1);
}

const char *to_string(FenceState state) noexcept
{
	switch (state) {
	case FenceState::signaled:
		return "signaled";
	case FenceState::error:
		return "error";
	case FenceState::timed_out:
		return "timed-out";
	}
	return "unknown";
}

namespace detail {

FenceResult fence_result_from_status(int status) noexcept
{
	if (status > 0)
		return {FenceState::signaled, 0};
	if (status < 0)
		return {FenceState::error, -status};
	return {FenceState::timed_out, 0};
}

} // namespace detail

namespace {

void require_valid(const Fence &f)
{
	if (!f)
		throw Error(EBADF, "the fence is not valid");
}

std::int64_t now_ns() noexcept
{
	struct timespec ts;

	::clock_gettime(CLOCK_MONOTONIC, &ts);
	return static_cast<std::int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

} // namespace

FenceStatus Fence::status() const
{
	struct sync_file_info info = {};

	require_valid(*this);
	if (::ioctl(fd_.get(), SYNC_IOC_FILE_INFO, &info) != 0) {
		int err = errno;

		throw Error(err, err == ENOTTY ? std::string("fd ") + std::to_string(fd_.get()) +
							 " is not a sync_file fence"
					       : std::string("SYNC_IOC_FILE_INFO failed: ") +
							 std::strerror(err));
	}
	FenceStatus s;
	s.name.assign(info.name, strnlen(info.name, sizeof(info.name)));
	s.signaled = info.status != 0;
	s.error = info.status < 0 ? -info.status : 0;
	s.fences = info.num_fences;
	return s;
}

FenceResult Fence::wait(std::chrono::nanoseconds timeout) const
{
	require_valid(*this);
	const std::int64_t end = timeout.count() < 0 ? -1 : now_ns() + timeout.count();

	for (;;) {
		struct pollfd pfd = {fd_.get(), POLLIN, 0};
		int ms = -1;

		if (end >= 0) {
			std::int64_t left = end - now_ns();

			// Round up: a 1 us timeout must not become a busy 0 ms poll loop.
			ms = left <= 0 ? 0 : static_cast<int>(std::min<std::int64_t>((left + 999999) / 1000000,
										  INT32_MAX));
		}
		int r = ::poll(&pfd, 1, ms);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			int err = errno;

			throw Error(err, std::string("waiting for a fence failed: ") + std::strerror(err));
		}
		if (r > 0)
			break;
		if (end >= 0 && now_ns() >= end)
			return {FenceState::timed_out, 0};
	}
	FenceStatus s = status();
	return s.error ? FenceResult{FenceState::error, s.error} : FenceResult{FenceState::signaled, 0};
}

Fence Fence::merge(const Fence &a, const Fence &b, std::string_view name)
{
	struct sync_merge_data arg = {};

	require_valid(a);
	require_valid(b);
	std::memcpy(arg.name, name.data(), std::min(name.size(), sizeof(arg.name) - 1));
	arg.fd2 = b.fd();
	if (::ioctl(a.fd(), SYNC_IOC_MERGE, &arg) != 0) {
		int err = errno;

		throw Error(err, std::string("merging two fences failed: ") + std::strerror(err));
	}
	return Fence(UniqueFd(arg.fence));
}

} // namespace mcp
