// SPDX-License-Identifier: GPL-2.0-only
// libmcp buffers, DMA and fences without a kernel: decoding of the ABI
// structs, the messages users see, argument checks before any ioctl, fence
// waits on fds that are not fences, UniqueFd, and the C API's NULL checks.
#include <cerrno>
#include <chrono>
#include <climits>
#include <cstring>
#include <string>

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include <mcp/graph.h>

#include "dma_internal.hpp"

using namespace std::chrono_literals;

static bool contains(const std::string &s, const char *what)
{
	return s.find(what) != std::string::npos;
}

template <typename Fn>
static int errno_of(Fn &&fn)
{
	try {
		fn();
	} catch (const mcp::Error &e) {
		return e.errnum();
	}
	return 0;
}

Test(dma, decodes_engine_info)
{
	struct mcp_engine_info raw = {};

	raw.engine = MCP_ENGINE_DEVICE;
	raw.node = 1;
	std::memcpy(raw.name, "edu\0garbage", 11);
	raw.max_chunk = 4096;
	raw.inflight = 1;
	raw.submitted = 10;
	raw.completed = 7;
	raw.failed = 3;
	raw.timed_out = 2;
	raw.wc_depth = 8;
	raw.wc_timeout_us = 50;
	mcp::EngineInfo e = mcp::detail::decode_engine_info(raw);
	cr_expect_eq(e.index, 1u);
	cr_expect_eq(e.name, "edu");
	cr_expect_eq(e.node, 1);
	cr_expect_eq(e.max_chunk, 4096u);
	cr_expect_eq(e.submitted, 10u);
	cr_expect_eq(e.completed, 7u);
	cr_expect_eq(e.failed, 3u);
	cr_expect_eq(e.timed_out, 2u);
	cr_expect_eq(e.wc_depth, 8u);
	cr_expect_eq(e.wc_timeout_us, 50u);

	// A name filling the whole array is not NUL-terminated: no overread.
	std::memset(raw.name, 'x', sizeof(raw.name));
	cr_expect_eq(mcp::detail::decode_engine_info(raw).name.size(), sizeof(raw.name));
}

Test(dma, decodes_buffer_info)
{
	struct mcp_bo_info raw = {};

	raw.handle = 3;
	raw.kind = MCP_BO_KIND_KERNEL;
	raw.length = 2 << 20;
	raw.bo_flags = MCP_BO_HUGEPAGE | MCP_BO_NODE;
	raw.node = 1;
	raw.mmap_offset = 0x100000;
	raw.jobs = 2;
	mcp::BufferInfo b = mcp::detail::decode_buffer_info(raw);
	cr_expect_eq(b.handle, 3u);
	cr_expect(b.kind == mcp::BufferKind::kernel);
	cr_expect_eq(b.length, 2u << 20);
	cr_expect_eq(b.flags, unsigned(MCP_BUFFER_HUGEPAGE | MCP_BUFFER_NODE));
	cr_expect_eq(b.node, 1);
	cr_assert(b.mmap_offset.has_value());
	cr_expect_eq(*b.mmap_offset, 0x100000u);
	cr_expect_eq(b.jobs, 2u);

	raw.kind = MCP_BO_KIND_USERPTR;
	raw.mmap_offset = MCP_BO_NO_MMAP;
	raw.node = -1;
	b = mcp::detail::decode_buffer_info(raw);
	cr_expect(b.kind == mcp::BufferKind::user);
	cr_expect_not(b.mmap_offset.has_value());
	cr_expect_eq(b.node, -1);
}

Test(dma, names)
{
	cr_expect_str_eq(mcp::to_string(mcp::BufferKind::kernel), "kernel");
	cr_expect_str_eq(mcp::to_string(mcp::BufferKind::user), "user");
	cr_expect_str_eq(mcp::to_string(mcp::BufferKind::imported), "imported");
	cr_expect_str_eq(mcp::to_string(static_cast<mcp::BufferKind>(9)), "unknown");
	cr_expect_str_eq(mcp::to_string(mcp::FenceState::signaled), "signaled");
	cr_expect_str_eq(mcp::to_string(mcp::FenceState::error), "error");
	cr_expect_str_eq(mcp::to_string(mcp::FenceState::timed_out), "timed-out");
	cr_expect_str_eq(mcp_feature_name(MCP_FEATURE_BUFFERS), "buffers");
	cr_expect_str_eq(mcp_feature_name(MCP_FEATURE_DMA), "dma");
	cr_expect_str_eq(mcp_feature_name(MCP_FEATURE_GRAPHS), "graphs");
	cr_expect_eq(mcp::detail::size_text(64 << 20), "64 MiB");
	cr_expect_eq(mcp::detail::size_text(4096), "4 KiB");
	cr_expect_eq(mcp::detail::size_text(1), "1 byte");
	cr_expect_eq(mcp::detail::size_text(4097), "4097 bytes");
}

Test(dma, create_flags)
{
	mcp::BufferOptions o;

	cr_expect_eq(mcp::detail::bo_create_flags(o), 0u);
	o.node = 0;
	cr_expect_eq(mcp::detail::bo_create_flags(o), unsigned(MCP_BO_NODE));
	o.hugepage = true;
	o.coherent = true;
	cr_expect_eq(mcp::detail::bo_create_flags(o), unsigned(MCP_BO_CREATE_FLAGS));
}

Test(dma, fence_result_from_status)
{
	cr_expect(mcp::detail::fence_result_from_status(1) == (mcp::FenceResult{mcp::FenceState::signaled, 0}));
	cr_expect(mcp::detail::fence_result_from_status(0) == (mcp::FenceResult{mcp::FenceState::timed_out, 0}));
	cr_expect(mcp::detail::fence_result_from_status(-ETIMEDOUT) ==
		  (mcp::FenceResult{mcp::FenceState::error, ETIMEDOUT}));
	cr_expect(mcp::detail::fence_result_from_status(1).ok());
	cr_expect_not(mcp::detail::fence_result_from_status(-EIO).ok());
}

Test(dma, memlock_message_names_the_limit_and_the_fixes)
{
	std::string m = mcp::detail::memlock_message(64 << 20, 8 << 20, "host");

	cr_expect(contains(m, "64 MiB"), "%s", m.c_str());
	cr_expect(contains(m, "RLIMIT_MEMLOCK (8 MiB"), "%s", m.c_str());
	cr_expect(contains(m, "ulimit -l"), "%s", m.c_str());
	cr_expect(contains(m, "CAP_IPC_LOCK"), "%s", m.c_str());
	m = mcp::detail::memlock_message(4096, ~0ULL, "0000:00:04.0");
	cr_expect(contains(m, "unlimited"), "%s", m.c_str());
	cr_expect(contains(m, "device 0000:00:04.0"), "%s", m.c_str());
}

Test(dma, job_and_context_messages)
{
	std::string m = mcp::detail::job_error_message(ETIMEDOUT, "0000:00:04.0", "1", 65536);
	cr_expect(contains(m, "64 KiB"), "%s", m.c_str());
	cr_expect(contains(m, "deadline"), "%s", m.c_str());
	cr_expect(contains(m, "job_timeout_ms"), "%s", m.c_str());
	cr_expect(contains(mcp::detail::job_error_message(EACCES, "host", "0", 1), "read-only"));
	cr_expect(contains(mcp::detail::job_error_message(ECANCELED, "host", "0", 1), "in-fence"));
	cr_expect(contains(mcp::detail::job_error_message(EINVAL, "host", "0", 1), "past a buffer's end"));
	cr_expect(contains(mcp::detail::job_error_message(ENOENT, "host", "0", 1), "mcpctl dma engines"));
	cr_expect(contains(mcp::detail::job_error_message(EIO, "host", "0", 1), strerror(EIO)));
	cr_expect(contains(mcp::detail::job_error_message(EMFILE, "host", "0", 0), "ulimit -n"));
	m = mcp::detail::dma_error_message(ENOTTY, "host", "MCP_IOC_BO_CREATE");
	cr_expect(contains(m, "host context (/dev/mcp)"), "%s", m.c_str());
	cr_expect(contains(m, "install a newer mcp module"), "%s", m.c_str());
	m = mcp::detail::dma_error_message(ENODEV, "0000:00:04.0", "x");
	cr_expect(contains(m, "was removed"), "%s", m.c_str());
}

Test(dma, closed_objects_refuse_with_ebadf)
{
	mcp::Dma none;
	mcp::Buffer empty;
	mcp::Fence no_fence;
	std::byte mem[1];

	cr_expect_not(none);
	cr_expect_eq(none.fd(), -1);
	cr_expect_eq(errno_of([&] { none.engines(); }), EBADF);
	cr_expect_eq(errno_of([&] { mcp::Buffer::create(none, 4096); }), EBADF);
	cr_expect_eq(errno_of([&] { mcp::Buffer::from_user(none, mem, true); }), EBADF);
	cr_expect_eq(errno_of([&] { mcp::Buffer::import(none, 0); }), EBADF);
	cr_expect_eq(errno_of([&] { empty.info(); }), EBADF);
	cr_expect_eq(errno_of([&] { empty.data(); }), EBADF);
	cr_expect_eq(errno_of([&] { empty.export_fd(); }), EBADF);
	cr_expect_eq(errno_of([&] { none.copy(0, empty, 0, empty, 0, 0); }), EBADF);
	cr_expect_eq(errno_of([&] { no_fence.wait(1ms); }), EBADF);
	cr_expect_eq(errno_of([&] { no_fence.status(); }), EBADF);
	cr_expect_eq(errno_of([&] { mcp::Fence::merge(no_fence, no_fence); }), EBADF);
}

Test(dma, unique_fd_owns_and_releases)
{
	int p[2];

	cr_assert_eq(pipe(p), 0);
	{
		mcp::UniqueFd a(p[0]);
		mcp::UniqueFd b(std::move(a));
		cr_expect_not(a.valid());
		cr_expect_eq(b.get(), p[0]);
	}
	cr_expect_eq(fcntl(p[0], F_GETFD), -1, "the fd was not closed");
	mcp::UniqueFd w(p[1]);
	int raw = w.release();
	cr_expect_not(w.valid());
	cr_expect_eq(fcntl(raw, F_GETFD) >= 0, true, "release() closed the fd");
	close(raw);
}

// A pipe's read end polls like a pending fence and is no sync_file.
Test(dma, fence_wait_times_out_and_status_names_a_non_fence)
{
	int p[2];

	cr_assert_eq(pipe(p), 0);
	mcp::Fence f{mcp::UniqueFd(p[0])};
	auto t0 = std::chrono::steady_clock::now();
	mcp::FenceResult r = f.wait(20ms);
	auto waited = std::chrono::steady_clock::now() - t0;
	cr_expect(r.state == mcp::FenceState::timed_out);
	cr_expect(waited >= 20ms, "returned before the time-out");
	cr_expect_eq(write(p[1], "x", 1), 1);
	int err = errno_of([&] { f.wait(1s); });
	cr_expect_eq(err, ENOTTY, "a readable non-fence: %d", err);
	try {
		f.status();
		cr_expect(false, "status() of a pipe succeeded");
	} catch (const mcp::Error &e) {
		cr_expect(contains(e.what(), "is not a sync_file fence"), "%s", e.what());
	}
	close(p[1]);
}

Test(dma, c_api_rejects_null_and_bad_flags)
{
	struct mcp_dma *dma = nullptr;
	struct mcp_buffer *buf = nullptr;
	struct mcp_fence *fence = nullptr;
	struct mcp_dma_engine_info info = {};
	struct mcp_buffer_info binfo = {};
	uint32_t idx;
	int status, fd;
	void *data;

	cr_expect_eq(mcp_dma_open_host(nullptr, &dma), -EINVAL);
	cr_expect(contains(mcp_strerror_last(), "mcp_dma_open_host"));
	cr_expect_eq(mcp_dma_open_accel(nullptr, &dma), -EINVAL);
	cr_expect_eq(mcp_dma_get_engine_info(nullptr, 0, &info), -EINVAL);
	cr_expect_eq(mcp_dma_find_engine(nullptr, "cpu", &idx), -EINVAL);
	cr_expect_eq(mcp_buffer_create(nullptr, 4096, 0, 0, &buf), -EINVAL);
	cr_expect_eq(mcp_buffer_create(reinterpret_cast<struct mcp_dma *>(&info), 4096, 1U << 7, 0, &buf),
		     -EINVAL);
	cr_expect(contains(mcp_strerror_last(), "unknown flags"));
	cr_expect_eq(mcp_buffer_from_user(nullptr, &info, 4096, 0, &buf), -EINVAL);
	cr_expect_eq(mcp_buffer_import(nullptr, 0, &buf), -EINVAL);
	cr_expect_eq(mcp_buffer_get_info(nullptr, &binfo), -EINVAL);
	cr_expect_eq(mcp_buffer_data(nullptr, &data), -EINVAL);
	cr_expect_eq(mcp_buffer_export(nullptr, &fd), -EINVAL);
	cr_expect_eq(mcp_buffer_size(nullptr), 0u);
	cr_expect_eq(mcp_dma_copy(nullptr, 0, nullptr, 0, nullptr, 0, 0, nullptr, nullptr), -EINVAL);
	cr_expect_eq(mcp_dma_copy_async(nullptr, 0, nullptr, 0, nullptr, 0, 0, nullptr, &fence), -EINVAL);
	cr_expect_eq(mcp_fence_from_fd(-1, &fence), -EINVAL);
	cr_expect_eq(mcp_fence_fd(nullptr), -EINVAL);
	cr_expect_eq(mcp_fence_wait(nullptr, 0, nullptr), -EINVAL);
	cr_expect_eq(mcp_fence_status(nullptr, &status), -EINVAL);
	cr_expect_eq(mcp_fence_merge(nullptr, nullptr, &fence), -EINVAL);
	mcp_dma_close(nullptr);
	mcp_buffer_free(nullptr);
	mcp_fence_free(nullptr);
}

Test(dma, c_api_fence_wait_times_out_with_etime)
{
	int p[2];
	struct mcp_fence *f = nullptr;
	int status = 7;

	cr_assert_eq(pipe(p), 0);
	cr_assert_eq(mcp_fence_from_fd(p[0], &f), 0);
	cr_expect_eq(mcp_fence_fd(f), p[0]);
	cr_expect_eq(mcp_fence_wait(f, 1000000, nullptr), -ETIME);
	cr_expect(contains(mcp_strerror_last(), "did not signal"));
	cr_expect_eq(mcp_fence_status(f, &status), -ENOTTY);
	cr_expect_eq(status, 7, "status written on failure");
	mcp_fence_free(f);
	cr_expect_eq(fcntl(p[0], F_GETFD), -1, "mcp_fence_free did not close the fd");
	close(p[1]);
}
