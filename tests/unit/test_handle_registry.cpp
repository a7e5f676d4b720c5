// SPDX-License-Identifier: GPL-2.0-only
// The graph runtime's handle registry without a kernel: counted entries, a
// reused handle resolving to its new memory, bindings released only once
// their execution's fence (an eventfd here) is readable, one buffer bound
// to two executions in flight, and N executions with fresh bindings
// leaving the registry as it was.
#include <cstdint>
#include <vector>

#include <criterion/criterion.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "runtime_internal.hpp"

using mcp::UniqueFd;
using mcp::detail::HandleRegistry;

namespace {

// A fence stand-in: readable once signal() wrote to it.
struct FakeFence {
	UniqueFd fd{::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)};

	UniqueFd dup() const { return UniqueFd(::dup(fd.get())); }
	void signal() const
	{
		std::uint64_t one = 1;

		cr_assert_eq(::write(fd.get(), &one, sizeof(one)), static_cast<ssize_t>(sizeof(one)));
	}
};

std::span<std::byte> memory_of(std::vector<std::byte> &v)
{
	return {v.data(), v.size()};
}

} // namespace

Test(handle_registry, entries_are_counted)
{
	HandleRegistry r;
	std::vector<std::byte> a(64);

	r.acquire(7, memory_of(a));
	r.acquire(7, memory_of(a));
	cr_expect_eq(r.size(), 1u);
	r.release(7);
	cr_expect_eq(r.find(7).data(), a.data(), "one user left: still known");
	r.release(7);
	cr_expect(r.find(7).empty(), "the last user gone: unknown");
	cr_expect_eq(r.size(), 0u);
	r.release(7);	// unknown: nothing happens
	r.release(8);
	cr_expect_eq(r.size(), 0u);
}

Test(handle_registry, a_reused_handle_resolves_to_its_new_memory)
{
	HandleRegistry r;
	std::vector<std::byte> old_memory(64), new_memory(128);

	r.acquire(3, memory_of(old_memory));
	r.acquire(3, memory_of(new_memory));
	cr_expect_eq(r.find(3).data(), new_memory.data());
	cr_expect_eq(r.find(3).size(), 128u);
	r.release(3);
	r.release(3);
	cr_expect(r.find(3).empty());
}

Test(handle_registry, bindings_stay_until_their_fence_signals)
{
	HandleRegistry r;
	std::vector<std::byte> in(64), out(64);
	FakeFence fence;

	r.acquire(10, memory_of(in));
	r.acquire(11, memory_of(out));
	r.release_after(fence.dup(), {10, 11});
	cr_expect_eq(r.pending(), 1u);
	r.release_ended();
	cr_expect_eq(r.size(), 2u, "the execution runs: its bindings stay");
	cr_expect_eq(r.find(10).data(), in.data());
	fence.signal();
	r.release_ended();
	cr_expect_eq(r.size(), 0u);
	cr_expect_eq(r.pending(), 0u);
}

Test(handle_registry, one_buffer_bound_to_two_executions_in_flight)
{
	HandleRegistry r;
	std::vector<std::byte> shared(64);
	FakeFence first, second;

	r.acquire(5, memory_of(shared));
	r.release_after(first.dup(), {5});
	r.acquire(5, memory_of(shared));
	r.release_after(second.dup(), {5});
	first.signal();
	r.release_ended();
	cr_expect_eq(r.find(5).data(), shared.data(), "the second execution still uses it");
	cr_expect_eq(r.pending(), 1u);
	second.signal();
	r.release_ended();
	cr_expect(r.find(5).empty());
}

Test(handle_registry, fresh_bindings_do_not_grow_it)
{
	HandleRegistry r;
	std::vector<std::byte> graph_buffer(64);
	std::vector<std::vector<std::byte>> bindings;

	r.acquire(1, memory_of(graph_buffer));
	for (std::uint32_t k = 0; k < 100; k++) {
		FakeFence fence;

		bindings.emplace_back(32);
		r.release_ended();
		r.acquire(100 + k, memory_of(bindings.back()));
		r.release_after(fence.dup(), {100 + k});
		fence.signal();
	}
	r.release_ended();
	cr_expect_eq(r.size(), 1u, "only the graph's own buffer is left");
	cr_expect_eq(r.pending(), 0u);
	cr_expect_eq(r.find(1).data(), graph_buffer.data());
}

Test(handle_registry, without_a_fence_the_bindings_stay)
{
	HandleRegistry r;
	std::vector<std::byte> in(64);

	r.acquire(9, memory_of(in));
	r.release_after(UniqueFd(), {9});
	r.release_ended();
	cr_expect_eq(r.find(9).data(), in.data(), "never released under a job it cannot see end");
}
