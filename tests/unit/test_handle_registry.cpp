// SPDX-License-Identifier: GPL-2.0-only
// The graph runtime's handle registry without a kernel: counted entries, a
// reused handle resolving to its new memory, bindings released only once
// their execution's fence (an eventfd here) is readable, one buffer bound
// to two executions in flight, N executions with fresh bindings leaving
// the registry as it was, and a job's pin keeping a buffer's pages (a
// memfd here) mapped after the buffer went.
#include <cstdint>
#include <vector>

#include <criterion/criterion.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/syscall.h>
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

namespace {

// A 2-page memfd standing in for a BO and the caller's mapping of it.
struct FakeBo {
	UniqueFd fd{static_cast<int>(::syscall(SYS_memfd_create, "fake_bo", MFD_CLOEXEC))};
	std::span<std::byte> caller;

	FakeBo()
	{
		cr_assert(fd.valid());
		cr_assert_eq(::ftruncate(fd.get(), 2 * 4096), 0);
		void *p = ::mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd.get(), 4096);
		cr_assert_neq(p, MAP_FAILED);
		caller = {static_cast<std::byte *>(p), 4096};
	}
	void unmap_caller() { ::munmap(caller.data(), caller.size()); }
};

} // namespace

Test(handle_registry, a_pin_keeps_the_memory_after_the_buffer_went)
{
	HandleRegistry r;
	FakeBo bo;

	r.acquire(4, bo.caller, bo.fd.get(), 4096);
	HandleRegistry::Pin pin = r.pin(4);
	cr_assert(pin);
	cr_expect(pin->owned, "mapped again for the registry");
	cr_expect_neq(pin->memory.data(), bo.caller.data());
	bo.caller[0] = std::byte{7};
	cr_expect_eq(pin->memory[0], std::byte{7}, "the same pages");

	// The buffer goes (its entry, then its mapping) while a job runs.
	r.release(4);
	bo.unmap_caller();
	cr_expect_eq(r.size(), 0u);
	cr_expect(!r.pin(4), "unknown to new jobs");
	pin->memory[1] = std::byte{9};	// the running job still writes
	std::byte back{};
	cr_expect_eq(::pread(bo.fd.get(), &back, 1, 4096 + 1), 1);
	cr_expect_eq(back, std::byte{9});
}

Test(handle_registry, one_mapping_per_bo)
{
	HandleRegistry r;
	FakeBo bo;

	r.acquire(4, bo.caller, bo.fd.get(), 4096);
	r.acquire(4, bo.caller, bo.fd.get(), 4096);
	HandleRegistry::Pin first = r.pin(4);
	cr_expect_eq(r.size(), 1u);
	// The handle reused for another BO (another offset): a new mapping.
	r.acquire(4, bo.caller, bo.fd.get(), 0);
	HandleRegistry::Pin second = r.pin(4);
	cr_expect_neq(first.get(), second.get());
	cr_expect_eq(second->offset, 0u);
	r.release(4);
	r.release(4);
	r.release(4);
	cr_expect(!r.pin(4));
	bo.unmap_caller();
}

Test(handle_registry, an_unmappable_fd_falls_back_to_the_callers_memory)
{
	HandleRegistry r;
	std::vector<std::byte> memory(64);

	r.acquire(2, memory_of(memory), -1, 0);
	HandleRegistry::Pin pin = r.pin(2);
	cr_assert(pin);
	cr_expect(!pin->owned);
	cr_expect_eq(pin->memory.data(), memory.data());
}
