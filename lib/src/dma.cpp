// SPDX-License-Identifier: LGPL-2.1-or-later
// mcp::Dma: a DMA context (the host context of /dev/mcp or a device fd),
// its engines (MCP_IOC_ENGINE_INFO) and job submission
// (MCP_IOC_DMA_SUBMIT); the messages of buffer and DMA failures.
#include <cerrno>
#include <cstring>
#include <string>
#include <utility>

#include <fcntl.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "dma_internal.hpp"

static_assert(MCP_FEATURE_BUFFERS == MCP_FEAT_BUFFERS && MCP_FEATURE_DMA == MCP_FEAT_DMA);
static_assert(MCP_DMA_ENGINE_CPU == MCP_ENGINE_CPU && MCP_DMA_ENGINE_DEVICE == MCP_ENGINE_DEVICE);
static_assert(MCP_DMA_ENGINE_NAME_LEN == MCP_ENGINE_NAME_LEN);

namespace mcp {

namespace detail {

DmaContextFd::~DmaContextFd()
{
	if (fd >= 0)
		::close(fd);
}

std::string size_text(std::uint64_t bytes)
{
	if (bytes >= (1ULL << 30) && bytes % (1ULL << 30) == 0)
		return std::to_string(bytes >> 30) + " GiB";
	if (bytes >= (1ULL << 20) && bytes % (1ULL << 20) == 0)
		return std::to_string(bytes >> 20) + " MiB";
	if (bytes >= (1ULL << 10) && bytes % (1ULL << 10) == 0)
		return std::to_string(bytes >> 10) + " KiB";
	return std::to_string(bytes) + (bytes == 1 ? " byte" : " bytes");
}

std::string dma_error_message(int errnum, std::string_view context, std::string_view what)
{
	const std::string c(context);
	const std::string w(what);
	const std::string where = c == "host" ? "the host context (/dev/mcp)" : "device " + c;

	switch (errnum) {
	case ENOTTY:
		return w + " on " + where +
		       " is not supported by the loaded mcp module: install a newer mcp module";
	case ENODEV:
		return "device " + c +
		       " was removed (unbound from mcp, hot-unplugged or the module unloaded): " +
		       "list the devices again with 'mcpctl devices'";
	default:
		return w + " on " + where + " failed: " + std::strerror(errnum);
	}
}

std::string memlock_message(std::uint64_t length, std::uint64_t limit_bytes,
			    std::string_view context)
{
	const std::string limit = limit_bytes == ~0ULL ? "unlimited" : size_text(limit_bytes);

	return "pinning " + size_text(length) + " of user memory on " +
	       (context == "host" ? std::string("the host context") : "device " + std::string(context)) +
	       " exceeds RLIMIT_MEMLOCK (" + limit + ", with what this process already pinned): " +
	       "raise it with 'ulimit -l' (or LimitMEMLOCK= in a systemd unit, memlock in " +
	       "/etc/security/limits.conf), or run with CAP_IPC_LOCK";
}

std::string job_error_message(int errnum, std::string_view context, std::string_view engine,
			      std::uint64_t length)
{
	const std::string job = "the DMA job (" + size_text(length) + " on engine " +
				std::string(engine) + " of " + std::string(context) + ")";

	switch (errnum) {
	case ETIMEDOUT:
		return job + " did not finish by its deadline: the engine was reset and later jobs " +
		       "run; give a later deadline or raise the module's job_timeout_ms";
	case ECANCELED:
		return job + " was cancelled: its in-fence signaled an error";
	case EACCES:
		return job + " was refused: its destination is a read-only user buffer " +
		       "(pin it writable)";
	case EINVAL:
		return job + " was refused: a range runs past a buffer's end, the ranges overlap " +
		       "in one buffer, or an argument is invalid";
	case ENOENT:
		return job + " was refused: no such engine or buffer on this context " +
		       "('mcpctl dma engines' lists the engines)";
	case EINTR:
		return job + " was interrupted by a fatal signal while waiting: it finishes alone";
	case EMFILE:
		return job + " was refused: no fd is left for its fence (RLIMIT_NOFILE): wait for " +
		       "and close earlier fences, or raise 'ulimit -n'";
	default:
		return job + " failed: " + std::strerror(errnum);
	}
}

std::uint32_t bo_create_flags(const BufferOptions &options) noexcept
{
	std::uint32_t flags = 0;

	if (options.coherent)
		flags |= MCP_BO_COHERENT;
	if (options.hugepage)
		flags |= MCP_BO_HUGEPAGE;
	if (options.node)
		flags |= MCP_BO_NODE;
	return flags;
}

EngineInfo decode_engine_info(const struct mcp_engine_info &raw)
{
	EngineInfo e;

	e.index = raw.engine;
	e.name.assign(raw.name, strnlen(raw.name, sizeof(raw.name)));
	e.node = raw.node;
	e.max_chunk = raw.max_chunk;
	e.inflight = raw.inflight;
	e.submitted = raw.submitted;
	e.completed = raw.completed;
	e.failed = raw.failed;
	e.timed_out = raw.timed_out;
	e.wc_depth = raw.wc_depth;
	e.wc_timeout_us = raw.wc_timeout_us;
	return e;
}

} // namespace detail

namespace {

void require_dma(const Version &v)
{
	if (!v.has(feature::buffers) || !v.has(feature::dma))
		throw Error(EOPNOTSUPP, "the loaded mcp module (" + v.module_version +
						") has no buffers and DMA: install a newer mcp module");
}

int dup_fd(int fd)
{
	int d = ::fcntl(fd, F_DUPFD_CLOEXEC, 0);

	if (d < 0) {
		int err = errno;

		throw Error(err, std::string("cannot duplicate the context fd: ") + std::strerror(err));
	}
	return d;
}

} // namespace

Dma::Dma(std::shared_ptr<const detail::DmaContextFd> ctx) noexcept : ctx_(std::move(ctx))
{
}

Dma Dma::host(const Device &dev)
{
	require_dma(dev.version());
	return Dma(std::make_shared<const detail::DmaContextFd>(dup_fd(dev.fd()), "host", true));
}

Dma Dma::device(const Accelerator &accel)
{
	if (!accel.is_open())
		throw Error(EBADF, "the accelerator is not open");
	int fd = dup_fd(accel.fd());
	auto ctx = std::make_shared<const detail::DmaContextFd>(fd, accel.info().address.to_string(),
							       false);
	struct mcp_engine_info probe = {};

	// A device fd of a module without DMA answers ENOTTY.
	probe.size = sizeof(probe);
	probe.engine = MCP_ENGINE_CPU;
	if (::ioctl(fd, MCP_IOC_ENGINE_INFO, &probe) != 0 && errno == ENOTTY)
		throw Error(EOPNOTSUPP, "the loaded mcp module has no buffers and DMA on device " +
						ctx->name + ": install a newer mcp module");
	return Dma(std::move(ctx));
}

const std::string &Dma::name() const noexcept
{
	static const std::string none = "(none)";

	return ctx_ ? ctx_->name : none;
}

int Dma::fd() const noexcept
{
	return ctx_ ? ctx_->fd : -1;
}

bool Dma::is_host() const noexcept
{
	return ctx_ && ctx_->host;
}

EngineInfo Dma::engine(unsigned index) const
{
	struct mcp_engine_info arg = {};

	if (!ctx_)
		throw Error(EBADF, "the DMA context is not open");
	arg.size = sizeof(arg);
	arg.engine = index;
	if (::ioctl(ctx_->fd, MCP_IOC_ENGINE_INFO, &arg) != 0) {
		int err = errno;

		if (err == ENOENT)
			throw Error(err, (ctx_->host ? std::string("the host context")
						     : "device " + ctx_->name) +
						 " has no engine " + std::to_string(index) +
						 " ('mcpctl dma engines' lists them)");
		throw Error(err, detail::dma_error_message(err, ctx_->name, "MCP_IOC_ENGINE_INFO"));
	}
	return detail::decode_engine_info(arg);
}

std::vector<EngineInfo> Dma::engines() const
{
	std::vector<EngineInfo> all;

	for (unsigned i = 0;; i++) {
		try {
			all.push_back(engine(i));
		} catch (const Error &e) {
			if (e.errnum() != ENOENT)
				throw;
			return all;
		}
	}
}

unsigned Dma::find_engine(std::string_view name) const
{
	std::string names;

	for (const EngineInfo &e : engines()) {
		if (e.name == name)
			return e.index;
		names += (names.empty() ? "" : ", ") + e.name;
	}
	throw Error(ENOENT, (ctx_->host ? std::string("the host context") : "device " + ctx_->name) +
				    " has no engine '" + std::string(name) + "': it has " + names);
}

Dma::Submitted Dma::submit(bool async, unsigned engine, const Buffer &src,
			   std::uint64_t src_offset, const Buffer &dst, std::uint64_t dst_offset,
			   std::uint64_t length, const CopyOptions &options) const
{
	struct mcp_dma_submit arg = {};

	if (!ctx_)
		throw Error(EBADF, "the DMA context is not open");
	if (!src || !dst)
		throw Error(EINVAL, "a DMA copy needs a valid source and destination buffer");
	if (src.ctx_.ctx_ != ctx_ || dst.ctx_.ctx_ != ctx_)
		throw Error(EINVAL, "a DMA copy on " + ctx_->name +
					    " needs buffers of that context (buffer handles are per context)");
	if (src_offset > src.size() || length > src.size() - src_offset ||
	    dst_offset > dst.size() || length > dst.size() - dst_offset)
		throw Error(EINVAL, "copying " + detail::size_text(length) + " from offset " +
					    std::to_string(src_offset) + " of a " +
					    detail::size_text(src.size()) + " buffer to offset " +
					    std::to_string(dst_offset) + " of a " +
					    detail::size_text(dst.size()) +
					    " buffer runs past a buffer's end");
	arg.size = sizeof(arg);
	arg.flags = async ? MCP_DMA_ASYNC : 0;
	arg.engine = engine;
	arg.in_fence = -1;
	if (options.in_fence) {
		if (!*options.in_fence)
			throw Error(EINVAL, "the in-fence of a DMA copy is not a valid fence");
		arg.flags |= MCP_DMA_IN_FENCE;
		arg.in_fence = options.in_fence->fd();
	}
	arg.src_handle = src.handle();
	arg.dst_handle = dst.handle();
	arg.src_offset = src_offset;
	arg.dst_offset = dst_offset;
	arg.length = length;
	arg.deadline_ns = static_cast<std::uint64_t>(
		std::chrono::duration_cast<std::chrono::nanoseconds>(options.deadline.time_since_epoch())
			.count());
	arg.out_fence = -1;
	if (::ioctl(ctx_->fd, MCP_IOC_DMA_SUBMIT, &arg) != 0) {
		int err = errno;
		std::string engine_name = std::to_string(engine);

		if (err == ENOTTY || err == ENODEV)
			throw Error(err, detail::dma_error_message(err, ctx_->name, "MCP_IOC_DMA_SUBMIT"));
		throw Error(err, detail::job_error_message(err, ctx_->name, engine_name, length));
	}
	return {arg.seqno, async ? arg.out_fence : -1};
}

std::uint64_t Dma::copy(unsigned engine, const Buffer &src, std::uint64_t src_offset,
			const Buffer &dst, std::uint64_t dst_offset, std::uint64_t length,
			const CopyOptions &options) const
{
	return submit(false, engine, src, src_offset, dst, dst_offset, length, options).seqno;
}

Fence Dma::copy_async(unsigned engine, const Buffer &src, std::uint64_t src_offset,
		      const Buffer &dst, std::uint64_t dst_offset, std::uint64_t length,
		      const CopyOptions &options) const
{
	Submitted s = submit(true, engine, src, src_offset, dst, dst_offset, length, options);

	if (s.out_fence < 0)
		throw Error(EPROTO, "MCP_IOC_DMA_SUBMIT on " + ctx_->name +
					    " returned no out-fence for an asynchronous job");
	return Fence(UniqueFd(s.out_fence));
}

} // namespace mcp
