// SPDX-License-Identifier: LGPL-2.1-or-later
// The Runtime's map from BO handles to the memory its workers run on: a
// worker job names its tensors' buffers by handle.
#include "runtime_internal.hpp"

namespace mcp::detail {

void HandleRegistry::add(std::uint32_t handle, std::span<std::byte> memory)
{
	std::unique_lock guard(lock_);

	map_[handle] = memory;
}

void HandleRegistry::remove(std::uint32_t handle) noexcept
{
	std::unique_lock guard(lock_);

	map_.erase(handle);
}

std::span<std::byte> HandleRegistry::find(std::uint32_t handle) const
{
	std::shared_lock guard(lock_);
	auto it = map_.find(handle);

	return it == map_.end() ? std::span<std::byte>() : it->second;
}

} // namespace mcp::detail
