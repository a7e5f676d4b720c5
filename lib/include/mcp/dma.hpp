// SPDX-License-Identifier: LGPL-2.1-or-later
// libmcp: buffer objects, DMA engines and fences (C++).  Included by
// <mcp/mcp.hpp>; errors are mcp::Error as everywhere in libmcp.
// Documentation/libmcp.rst, "Buffers, DMA and fences", has the long form.
#ifndef MCP_DMA_HPP
#define MCP_DMA_HPP

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <mcp/dma.h>

namespace mcp {

class Device;
class Accelerator;

namespace feature {
inline constexpr std::uint64_t buffers = MCP_FEATURE_BUFFERS;
inline constexpr std::uint64_t dma = MCP_FEATURE_DMA;
} // namespace feature

// An owned file descriptor: closed on destruction.  Move-only.
class MCP_EXPORT UniqueFd {
public:
	UniqueFd() noexcept = default;
	explicit UniqueFd(int fd) noexcept : fd_(fd) {}
	UniqueFd(UniqueFd &&other) noexcept;
	UniqueFd &operator=(UniqueFd &&other) noexcept;
	UniqueFd(const UniqueFd &) = delete;
	UniqueFd &operator=(const UniqueFd &) = delete;
	~UniqueFd();

	int get() const noexcept { return fd_; }
	bool valid() const noexcept { return fd_ >= 0; }
	explicit operator bool() const noexcept { return valid(); }
	// Gives up ownership: the caller closes the fd.
	int release() noexcept;

private:
	int fd_ = -1;
};

// Engine indices (MCP_ENGINE_* of <linux/mcp.h>).
inline constexpr unsigned engine_cpu = MCP_DMA_ENGINE_CPU;
inline constexpr unsigned engine_device = MCP_DMA_ENGINE_DEVICE;

// What MCP_IOC_ENGINE_INFO says about one engine of a context.
struct EngineInfo {
	unsigned index = 0;		// engine_cpu, engine_device
	std::string name;		// "cpu", "edu"
	int node = -1;			// -1: any
	std::uint32_t max_chunk = 0;	// bytes per hardware transfer, 0: no limit
	std::uint32_t inflight = 0;	// jobs it runs at once
	std::uint64_t submitted = 0;	// on this context
	std::uint64_t completed = 0;
	std::uint64_t failed = 0;	// including time-outs
	std::uint64_t timed_out = 0;
	std::uint32_t wc_depth = 0;	// coalescing depth in force
	std::uint32_t wc_timeout_us = 0;

	bool operator==(const EngineInfo &) const = default;
};

class Buffer;
class Fence;

namespace detail {
struct DmaContextFd;
}

// How a kernel buffer is allocated (MCP_IOC_BO_CREATE).
struct BufferOptions {
	std::optional<int> node;	// none: the device's node (the caller's on host)
	bool hugepage = false;		// 2 MiB pages; the length rounds up to 2 MiB
	bool coherent = false;		// coherent DMA memory; default streaming
};

// What a DMA job waits for and by when (MCP_IOC_DMA_SUBMIT).
struct CopyOptions {
	const Fence *in_fence = nullptr;	// start after it signals
	// Absolute steady_clock (CLOCK_MONOTONIC) time by which the job must
	// be done, else -ETIMEDOUT; the epoch (default) means the module's
	// job_timeout_ms from now.
	std::chrono::steady_clock::time_point deadline{};
};

// A DMA context: the host context (/dev/mcp: the cpu engine only, buffers
// not device-mapped) or a device fd (buffers DMA-mapped for the device;
// engines cpu and the device's).  Holds its own duplicate of the fd, so it
// may outlive the Device or Accelerator it came from; Buffers and Fences
// hold it in turn.  Copyable (copies share the fd).
class MCP_EXPORT Dma {
public:
	Dma() noexcept = default;
	// The host context of @dev.  Throws mcp::Error: EOPNOTSUPP when the
	// module has no buffers or DMA.
	static Dma host(const Device &dev);
	// The context of device fd @accel.
	static Dma device(const Accelerator &accel);

	bool is_open() const noexcept { return ctx_ != nullptr; }
	explicit operator bool() const noexcept { return is_open(); }
	// "host" or the device's PCI address, for messages.
	const std::string &name() const noexcept;
	int fd() const noexcept;
	bool is_host() const noexcept;

	// Every engine of the context, by index (ENGINE_INFO until ENOENT).
	std::vector<EngineInfo> engines() const;
	// Engine @index; Error(ENOENT) when the context lacks it.
	EngineInfo engine(unsigned index) const;
	// The index of the engine called @name ("cpu", "edu"); Error(ENOENT)
	// naming the engines there are.
	unsigned find_engine(std::string_view name) const;

	// Copies @length bytes and waits for the job.  Returns its sequence
	// number.  Throws mcp::Error with the job's error: ETIMEDOUT (past the
	// deadline; the engine was reset), EINVAL (a range past a buffer's
	// end, overlapping ranges in one buffer), EACCES (a read-only
	// user-pointer buffer as destination), ECANCELED (the in-fence failed),
	// ENOENT (no such engine), EINTR (a fatal signal: the job goes on).
	std::uint64_t copy(unsigned engine, const Buffer &src, std::uint64_t src_offset,
			   const Buffer &dst, std::uint64_t dst_offset, std::uint64_t length,
			   const CopyOptions &options = {}) const;
	// The same without waiting: a Fence that signals when the job is done
	// and carries its result.
	Fence copy_async(unsigned engine, const Buffer &src, std::uint64_t src_offset,
			 const Buffer &dst, std::uint64_t dst_offset, std::uint64_t length,
			 const CopyOptions &options = {}) const;

private:
	friend class Buffer;
	explicit Dma(std::shared_ptr<const detail::DmaContextFd> ctx) noexcept;
	struct Submitted {
		std::uint64_t seqno = 0;
		int out_fence = -1;
	};
	Submitted submit(bool async, unsigned engine, const Buffer &src, std::uint64_t src_offset,
			 const Buffer &dst, std::uint64_t dst_offset, std::uint64_t length,
			 const CopyOptions &options) const;

	std::shared_ptr<const detail::DmaContextFd> ctx_;
};

enum class BufferKind : std::uint32_t {
	kernel = 0,	// Buffer::create
	user = 1,	// Buffer::from_user (pinned user memory)
	imported = 2,	// Buffer::import (a dma-buf)
};

// "kernel", "user", "imported"; "unknown" otherwise.
MCP_EXPORT const char *to_string(BufferKind kind) noexcept;

// What MCP_IOC_BO_INFO says about a buffer.
struct BufferInfo {
	std::uint32_t handle = 0;
	BufferKind kind = BufferKind::kernel;
	std::uint64_t length = 0;
	std::uint32_t flags = 0;	// MCP_BUFFER_* (kernel) or MCP_BUFFER_USER_WRITE
	int node = -1;			// -1: mixed or unknown
	std::optional<std::uint64_t> mmap_offset;	// none: not mappable through the fd
	std::uint32_t jobs = 0;		// DMA jobs in flight that use it

	bool operator==(const BufferInfo &) const = default;
};

// A buffer object on a Dma context.  Move-only; destruction unmaps it and
// destroys its handle (jobs in flight finish with the memory).
class MCP_EXPORT Buffer {
public:
	Buffer() noexcept = default;
	Buffer(Buffer &&other) noexcept;
	Buffer &operator=(Buffer &&other) noexcept;
	Buffer(const Buffer &) = delete;
	Buffer &operator=(const Buffer &) = delete;
	~Buffer();

	// Kernel memory of @length bytes (rounded up to a page, or 2 MiB with
	// hugepage), zeroed.  Throws mcp::Error: ENOMEM (not available on the
	// node asked for; never placed elsewhere), EINVAL (length 0 or over
	// 4 GiB, offline node), EOPNOTSUPP (module without buffers).
	static Buffer create(const Dma &ctx, std::uint64_t length, const BufferOptions &options = {});
	// Pins @memory (page-aligned start and length) for DMA, for writing
	// when @writable.  The memory must outlive the Buffer.  Throws
	// mcp::Error: ENOMEM over RLIMIT_MEMLOCK (the message gives the limit
	// and how to raise it), EFAULT, EINVAL (not page-aligned).
	static Buffer from_user(const Dma &ctx, std::span<std::byte> memory, bool writable);
	// Imports dma-buf @dmabuf_fd (MCP, vgem, a GPU driver...).  The Buffer
	// keeps a duplicate of the fd, for data().
	static Buffer import(const Dma &ctx, int dmabuf_fd);

	bool is_valid() const noexcept { return handle_ != 0; }
	explicit operator bool() const noexcept { return is_valid(); }
	std::uint32_t handle() const noexcept { return handle_; }
	std::uint64_t size() const noexcept { return length_; }
	BufferKind kind() const noexcept { return kind_; }
	const Dma &context() const noexcept { return ctx_; }

	BufferInfo info() const;
	// A dma-buf fd of this (kernel) buffer, for another process or driver.
	UniqueFd export_fd() const;
	// The buffer's memory: a kernel buffer is mapped (MAP_SHARED) on first
	// use, an imported one through its dma-buf; a user buffer is the
	// memory it pins.  Unmapped on destruction.
	std::span<std::byte> data();

private:
	friend class Dma;
	Buffer(Dma ctx, std::uint32_t handle, std::uint64_t length, BufferKind kind) noexcept;
	void reset() noexcept;

	Dma ctx_;
	std::uint32_t handle_ = 0;
	std::uint64_t length_ = 0;
	BufferKind kind_ = BufferKind::kernel;
	std::byte *map_ = nullptr;	// our mapping, or the user memory
	bool map_owned_ = false;	// munmap() map_ on destruction
	UniqueFd dmabuf_;		// imported: the dma-buf, for data()
};

// How a fence finished, or did not.
enum class FenceState : std::uint32_t {
	signaled = 0,	// the job succeeded
	error = 1,	// the job failed: FenceResult::error
	timed_out = 2,	// still pending when the wait gave up
};

// "signaled", "error", "timed-out"; "unknown" otherwise.
MCP_EXPORT const char *to_string(FenceState state) noexcept;

struct FenceResult {
	FenceState state = FenceState::timed_out;
	int error = 0;	// with FenceState::error: the job's errno (positive)

	bool ok() const noexcept { return state == FenceState::signaled; }
	bool operator==(const FenceResult &) const = default;
};

// What SYNC_IOC_FILE_INFO says about a fence.
struct FenceStatus {
	std::string name;	// the sync_file's name
	bool signaled = false;
	int error = 0;		// positive errno when it signaled an error
	std::uint32_t fences = 0;	// fences it holds (more after a merge)
};

// A sync_file fd (the out-fence of an async DMA job).  Move-only; the fd
// closes with it.  poll(2) on fd() gives POLLIN once it signaled.
class MCP_EXPORT Fence {
public:
	Fence() noexcept = default;
	// Takes ownership of sync_file @fd.
	explicit Fence(UniqueFd fd) noexcept : fd_(std::move(fd)) {}
	Fence(Fence &&) noexcept = default;
	Fence &operator=(Fence &&) noexcept = default;
	Fence(const Fence &) = delete;
	Fence &operator=(const Fence &) = delete;
	~Fence() = default;

	bool is_valid() const noexcept { return fd_.valid(); }
	explicit operator bool() const noexcept { return is_valid(); }
	int fd() const noexcept { return fd_.get(); }
	// Gives up ownership of the fd.
	UniqueFd release() noexcept { return std::move(fd_); }

	// Waits at most @timeout (negative: forever).  A signal interrupting
	// the wait restarts it with the time that is left.
	FenceResult wait(std::chrono::nanoseconds timeout = std::chrono::nanoseconds(-1)) const;
	FenceStatus status() const;
	// A fence that signals when both have (SYNC_IOC_MERGE).
	static Fence merge(const Fence &a, const Fence &b, std::string_view name = "mcp-merge");

private:
	UniqueFd fd_;
};

} // namespace mcp

#endif // MCP_DMA_HPP
