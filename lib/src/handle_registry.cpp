// SPDX-License-Identifier: LGPL-2.1-or-later
// The Runtime's map from BO handles to the memory its workers run on: a
// worker job names its tensors' buffers by handle.  Entries are counted
// and go when their last user does, so a process that executes with fresh
// binding buffers does not grow it, and a reused handle never resolves to
// the memory of the buffer that had it before.
#include <poll.h>

#include "runtime_internal.hpp"

namespace mcp::detail {

void HandleRegistry::acquire(std::uint32_t handle, std::span<std::byte> memory)
{
	std::unique_lock guard(lock_);
	Entry &e = map_[handle];

	e.memory = memory;
	e.users++;
}

void HandleRegistry::release(std::uint32_t handle) noexcept
{
	std::unique_lock guard(lock_);
	auto it = map_.find(handle);

	if (it != map_.end() && --it->second.users == 0)
		map_.erase(it);
}

void HandleRegistry::release_after(UniqueFd fence, std::vector<std::uint32_t> handles)
{
	if (handles.empty())
		return;
	std::lock_guard guard(pending_lock_);

	pending_.push_back({std::move(fence), std::move(handles)});
}

void HandleRegistry::release_ended() noexcept
{
	std::lock_guard guard(pending_lock_);
	std::vector<struct pollfd> fds;

	if (pending_.empty())
		return;
	try {
		fds.reserve(pending_.size());
	} catch (...) {
		return;		// tried again at the next call
	}
	for (const Pending &p : pending_)
		fds.push_back({p.fence.get(), POLLIN, 0});
	// An invalid fd (-1) is ignored by poll(): its handles stay.
	if (::poll(fds.data(), fds.size(), 0) <= 0)
		return;
	std::size_t kept = 0;
	for (std::size_t i = 0; i < pending_.size(); i++) {
		if (fds[i].revents) {
			for (std::uint32_t h : pending_[i].handles)
				release(h);
			continue;
		}
		if (kept != i)
			pending_[kept] = std::move(pending_[i]);
		kept++;
	}
	pending_.erase(pending_.begin() + static_cast<std::ptrdiff_t>(kept), pending_.end());
}

std::span<std::byte> HandleRegistry::find(std::uint32_t handle) const
{
	std::shared_lock guard(lock_);
	auto it = map_.find(handle);

	return it == map_.end() ? std::span<std::byte>() : it->second.memory;
}

std::size_t HandleRegistry::size() const
{
	std::shared_lock guard(lock_);

	return map_.size();
}

std::size_t HandleRegistry::pending() const
{
	std::lock_guard guard(pending_lock_);

	return pending_.size();
}

} // namespace mcp::detail
