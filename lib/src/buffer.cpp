// SPDX-License-Identifier: LGPL-2.1-or-later
// mcp::Buffer: buffer objects of a DMA context: kernel memory
// (MCP_IOC_BO_CREATE), pinned user memory (MCP_IOC_BO_USERPTR) and
// imported dma-bufs (MCP_IOC_BO_IMPORT); their mapping, export and info.
#include <cerrno>
#include <cstring>
#include <optional>
#include <string>
#include <utility>

#include <fcntl.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include "dma_internal.hpp"

static_assert(MCP_BUFFER_COHERENT == MCP_BO_COHERENT && MCP_BUFFER_HUGEPAGE == MCP_BO_HUGEPAGE &&
	      MCP_BUFFER_NODE == MCP_BO_NODE && MCP_BUFFER_USER_WRITE == MCP_BO_USERPTR_WRITE);
static_assert(MCP_BUFFER_KIND_KERNEL == MCP_BO_KIND_KERNEL &&
	      MCP_BUFFER_KIND_USER == MCP_BO_KIND_USERPTR &&
	      MCP_BUFFER_KIND_IMPORTED == MCP_BO_KIND_IMPORT);

namespace mcp {

const char *to_string(BufferKind kind) noexcept
{
	switch (kind) {
	case BufferKind::kernel:
		return "kernel";
	case BufferKind::user:
		return "user";
	case BufferKind::imported:
		return "imported";
	}
	return "unknown";
}

namespace detail {

BufferInfo decode_buffer_info(const struct mcp_bo_info &raw)
{
	BufferInfo b;

	b.handle = raw.handle;
	b.kind = static_cast<BufferKind>(raw.kind);
	b.length = raw.length;
	b.flags = raw.bo_flags;
	b.node = raw.node;
	if (raw.mmap_offset != MCP_BO_NO_MMAP)
		b.mmap_offset = raw.mmap_offset;
	b.jobs = raw.jobs;
	return b;
}

} // namespace detail

namespace {

const Dma &require_open(const Dma &ctx)
{
	if (!ctx)
		throw Error(EBADF, "the DMA context is not open");
	return ctx;
}

} // namespace

Buffer::Buffer(Dma ctx, std::uint32_t handle, std::uint64_t length, BufferKind kind) noexcept
	: ctx_(std::move(ctx)), handle_(handle), length_(length), kind_(kind)
{
}

Buffer::Buffer(Buffer &&other) noexcept
	: ctx_(std::move(other.ctx_)), handle_(std::exchange(other.handle_, 0)),
	  length_(std::exchange(other.length_, 0)), kind_(other.kind_),
	  map_(std::exchange(other.map_, nullptr)), map_owned_(std::exchange(other.map_owned_, false)),
	  dmabuf_(std::move(other.dmabuf_))
{
}

Buffer &Buffer::operator=(Buffer &&other) noexcept
{
	if (this != &other) {
		reset();
		ctx_ = std::move(other.ctx_);
		handle_ = std::exchange(other.handle_, 0);
		length_ = std::exchange(other.length_, 0);
		kind_ = other.kind_;
		map_ = std::exchange(other.map_, nullptr);
		map_owned_ = std::exchange(other.map_owned_, false);
		dmabuf_ = std::move(other.dmabuf_);
	}
	return *this;
}

Buffer::~Buffer()
{
	reset();
}

void Buffer::reset() noexcept
{
	if (map_ && map_owned_)
		::munmap(map_, length_);
	map_ = nullptr;
	map_owned_ = false;
	if (handle_ && ctx_) {
		struct mcp_bo_destroy arg = {};

		// Fails harmlessly (ENODEV) on a removed device.
		arg.size = sizeof(arg);
		arg.handle = handle_;
		::ioctl(ctx_.fd(), MCP_IOC_BO_DESTROY, &arg);
	}
	handle_ = 0;
	length_ = 0;
	dmabuf_ = UniqueFd();
	ctx_ = Dma();
}

// Huge-page BOs are whole 2 MiB blocks from the page allocator, not
// pages of the hugetlbfs pool: nr_hugepages does not help, compaction does.
static const char huge_block_shortage[] =
	"free 2 MiB blocks of contiguous memory (huge-page buffers take them from the page "
	"allocator, not from the /proc/sys/vm/nr_hugepages pool: free memory, or compact it "
	"with 'echo 1 > /proc/sys/vm/compact_memory')";

Buffer Buffer::create(const Dma &ctx, std::uint64_t length, const BufferOptions &options)
{
	struct mcp_bo_create arg = {};
	const std::string what = "creating a " + detail::size_text(length) + " buffer" +
				 (options.node ? " on node " + std::to_string(*options.node) : "") +
				 (options.hugepage ? " of huge pages" : "");

	require_open(ctx);
	if (length == 0 || length > MCP_BO_MAX_LENGTH)
		throw Error(EINVAL, "a buffer's length must be 1 byte to 4 GiB, not " +
					    std::to_string(length));
	arg.size = sizeof(arg);
	arg.flags = detail::bo_create_flags(options);
	arg.length = length;
	arg.node = options.node.value_or(-1);
	if (::ioctl(ctx.fd(), MCP_IOC_BO_CREATE, &arg) != 0) {
		int err = errno;

		if (err == ENOMEM)
			throw Error(err, what + " on " + ctx.name() + " failed: not enough " +
						 (options.hugepage ? huge_block_shortage
								   : std::string("free memory")) +
						 (options.node ? " on node " + std::to_string(*options.node) +
									 " (buffers are never placed elsewhere)"
							       : ""));
		// The kernel refuses a node that is offline or has no memory:
		// say which, and where memory is (when the topology can be read).
		if (err == EINVAL && options.node) {
			std::optional<Topology> topo;

			try {
				topo = detail::context_topology(ctx);
			} catch (const Error &) {
			}
			if (topo)
				detail::require_memory_node(*topo, *options.node,
							    what + " on " + ctx.name());
		}
		throw Error(err, detail::dma_error_message(err, ctx.name(), what));
	}
	// The kernel rounds up; map and bound-check the real length.
	Buffer b(ctx, arg.handle, length, BufferKind::kernel);
	b.length_ = b.info().length;
	return b;
}

Buffer Buffer::from_user(const Dma &ctx, std::span<std::byte> memory, bool writable)
{
	struct mcp_bo_userptr arg = {};
	const auto page = static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE));
	const auto addr = reinterpret_cast<std::uintptr_t>(memory.data());

	require_open(ctx);
	if (memory.empty() || addr % page || memory.size() % page)
		throw Error(EINVAL, "user memory to pin must be non-empty and page-aligned (" +
					    std::to_string(page) + " bytes) in start and length");
	arg.size = sizeof(arg);
	arg.flags = writable ? MCP_BO_USERPTR_WRITE : 0;
	arg.addr = addr;
	arg.length = memory.size();
	if (::ioctl(ctx.fd(), MCP_IOC_BO_USERPTR, &arg) != 0) {
		int err = errno;
		struct rlimit rl = {};

		if (err == ENOMEM && ::getrlimit(RLIMIT_MEMLOCK, &rl) == 0)
			throw Error(err, detail::memlock_message(memory.size(),
								 rl.rlim_cur == RLIM_INFINITY ? ~0ULL
											      : rl.rlim_cur,
								 ctx.name()));
		if (err == EFAULT)
			throw Error(err, "pinning user memory failed: the range is not mapped in this "
					 "process" + std::string(writable ? " (or not writable)" : ""));
		throw Error(err, detail::dma_error_message(err, ctx.name(), "pinning " +
							   detail::size_text(memory.size()) +
							   " of user memory"));
	}
	Buffer b(ctx, arg.handle, memory.size(), BufferKind::user);
	b.map_ = memory.data();
	return b;
}

Buffer Buffer::import(const Dma &ctx, int dmabuf_fd)
{
	struct mcp_bo_import arg = {};

	require_open(ctx);
	int dup = ::fcntl(dmabuf_fd, F_DUPFD_CLOEXEC, 0);
	if (dup < 0) {
		int err = errno;

		throw Error(err, "cannot import fd " + std::to_string(dmabuf_fd) + ": " +
					 std::strerror(err));
	}
	UniqueFd keep(dup);
	arg.size = sizeof(arg);
	arg.fd = dup;
	if (::ioctl(ctx.fd(), MCP_IOC_BO_IMPORT, &arg) != 0) {
		int err = errno;

		if (err == EINVAL)
			throw Error(err, "fd " + std::to_string(dmabuf_fd) +
						 " is not a dma-buf: import the fd an exporter (MCP, vgem, "
						 "a GPU driver) gave out");
		throw Error(err, detail::dma_error_message(err, ctx.name(), "importing a dma-buf"));
	}
	Buffer b(ctx, arg.handle, arg.length, BufferKind::imported);
	b.dmabuf_ = std::move(keep);
	return b;
}

BufferInfo Buffer::info() const
{
	struct mcp_bo_info arg = {};

	if (!is_valid())
		throw Error(EBADF, "the buffer is not valid");
	arg.size = sizeof(arg);
	arg.handle = handle_;
	if (::ioctl(ctx_.fd(), MCP_IOC_BO_INFO, &arg) != 0) {
		int err = errno;

		throw Error(err, detail::dma_error_message(err, ctx_.name(), "MCP_IOC_BO_INFO"));
	}
	return detail::decode_buffer_info(arg);
}

UniqueFd Buffer::export_fd() const
{
	struct mcp_bo_export arg = {};

	if (!is_valid())
		throw Error(EBADF, "the buffer is not valid");
	if (kind_ != BufferKind::kernel)
		throw Error(EINVAL, std::string("only kernel buffers can be exported as dma-bufs, this one is ") +
					    to_string(kind_));
	arg.size = sizeof(arg);
	arg.handle = handle_;
	if (::ioctl(ctx_.fd(), MCP_IOC_BO_EXPORT, &arg) != 0) {
		int err = errno;

		throw Error(err, detail::dma_error_message(err, ctx_.name(), "exporting a buffer"));
	}
	return UniqueFd(arg.fd);
}

std::span<std::byte> Buffer::data()
{
	if (!is_valid())
		throw Error(EBADF, "the buffer is not valid");
	if (map_)
		return {map_, static_cast<std::size_t>(length_)};

	int fd = ctx_.fd();
	off_t offset = 0;

	if (kind_ == BufferKind::imported) {
		fd = dmabuf_.get();
	} else {
		BufferInfo i = info();

		if (!i.mmap_offset)
			throw Error(EINVAL, "this buffer cannot be mapped through its context");
		offset = static_cast<off_t>(*i.mmap_offset);
	}
	void *p = ::mmap(nullptr, length_, PROT_READ | PROT_WRITE, MAP_SHARED, fd, offset);
	if (p == MAP_FAILED) {
		int err = errno;

		throw Error(err, detail::dma_error_message(err, ctx_.name(),
							   "mapping a " + detail::size_text(length_) +
							   " buffer"));
	}
	map_ = static_cast<std::byte *>(p);
	map_owned_ = true;
	return {map_, static_cast<std::size_t>(length_)};
}

} // namespace mcp
