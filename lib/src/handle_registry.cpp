// SPDX-License-Identifier: LGPL-2.1-or-later
// The Runtime's map from BO handles to the memory its workers run on: a
// worker job names its tensors' buffers by handle.  Entries are counted
// and go when their last user does, so a process that executes with fresh
// binding buffers does not grow it, and a reused handle never resolves to
// the memory of the buffer that had it before.
#include <poll.h>
#include <sys/mman.h>

#include "runtime_internal.hpp"

namespace mcp::detail {

HandleRegistry::Mapping::~Mapping()
{
	if (owned)
		::munmap(memory.data(), memory.size());
}

void HandleRegistry::acquire(std::uint32_t handle, std::span<std::byte> memory)
{
	acquire(handle, memory, nullptr, 0);
}

void HandleRegistry::acquire(std::uint32_t handle, std::span<std::byte> memory, int fd,
			     std::uint64_t offset)
{
	acquire(handle, memory, &fd, offset);
}

void HandleRegistry::acquire(std::uint32_t handle, std::span<std::byte> memory, const int *fd,
			     std::uint64_t offset)
{
	std::unique_lock guard(lock_);
	Entry &e = map_[handle];

	// Known with this memory (the same BO: its mmap offset is unique):
	// one more user of the same mapping.
	bool same = e.map && e.map->memory.size() == memory.size() &&
		    (e.map->owned ? fd && e.map->offset == offset
				  : !fd && e.map->memory.data() == memory.data());
	if (!same) {
		std::span<std::byte> own;
		if (fd && !memory.empty()) {
			void *p = ::mmap(nullptr, memory.size(), PROT_READ | PROT_WRITE, MAP_SHARED,
					 *fd, static_cast<off_t>(offset));
			if (p != MAP_FAILED)
				own = {static_cast<std::byte *>(p), memory.size()};
		}
		try {
			e.map = own.empty() ? std::make_shared<const Mapping>(memory, false, 0)
					    : std::make_shared<const Mapping>(own, true, offset);
		} catch (...) {
			if (!own.empty())
				::munmap(own.data(), own.size());
			if (!e.users)
				map_.erase(handle);
			throw;
		}
	}
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
	Pin p = pin(handle);

	return p ? p->memory : std::span<std::byte>();
}

HandleRegistry::Pin HandleRegistry::pin(std::uint32_t handle) const
{
	std::shared_lock guard(lock_);
	auto it = map_.find(handle);

	return it == map_.end() ? Pin() : it->second.map;
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
