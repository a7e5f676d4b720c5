// SPDX-License-Identifier: LGPL-2.1-or-later
// The C API of buffers, DMA and fences (<mcp/dma.h>) over mcp::Dma,
// mcp::Buffer and mcp::Fence.  No exception crosses this boundary.
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <new>
#include <string>

#include "dma_internal.hpp"

using mcp::detail::c_api_fail;
using mcp::detail::c_api_guard;

namespace {


mcp::CopyOptions copy_options(const struct mcp_dma_copy_opts *opts)
{
	mcp::CopyOptions o;

	if (!opts)
		return o;
	if (opts->in_fence)
		o.in_fence = &opts->in_fence->fence;
	o.deadline = std::chrono::steady_clock::time_point(
		std::chrono::nanoseconds(static_cast<std::int64_t>(opts->deadline_ns)));
	return o;
}

bool copy_args_ok(const struct mcp_dma *dma, const struct mcp_buffer *src,
		  const struct mcp_buffer *dst, const struct mcp_dma_copy_opts *opts)
{
	return dma && src && dst && (!opts || opts->size >= sizeof(*opts));
}

} // namespace

void mcp::detail::put_buffer_info(const BufferInfo &i, struct mcp_buffer_info *info) noexcept
{
	const std::uint32_t size = info->size;

	std::memset(info, 0, sizeof(*info));
	info->size = size;
	info->handle = i.handle;
	info->kind = static_cast<std::uint32_t>(i.kind);
	info->flags = i.flags;
	info->length = i.length;
	info->node = i.node;
	info->mappable = i.mmap_offset.has_value() || i.kind != BufferKind::kernel;
	info->jobs = i.jobs;
}

extern "C" {

int mcp_dma_open_host(struct mcp_device *dev, struct mcp_dma **out)
{
	if (!dev || !out)
		return c_api_fail(EINVAL, "mcp_dma_open_host: dev or out is NULL");
	return c_api_guard([&] {
		auto handle = std::make_unique<mcp_dma>();
		handle->dma = mcp::Dma::host(mcp::detail::c_api_device(dev));
		*out = handle.release();
	});
}

int mcp_dma_open_accel(struct mcp_accel *accel, struct mcp_dma **out)
{
	if (!accel || !out)
		return c_api_fail(EINVAL, "mcp_dma_open_accel: accel or out is NULL");
	return c_api_guard([&] {
		auto handle = std::make_unique<mcp_dma>();
		handle->dma = mcp::Dma::device(mcp::detail::c_api_accel(accel));
		*out = handle.release();
	});
}

void mcp_dma_close(struct mcp_dma *dma)
{
	std::unique_ptr<mcp_dma> owned(dma);
}

int mcp_dma_get_engine_info(struct mcp_dma *dma, uint32_t index, struct mcp_dma_engine_info *info)
{
	if (!dma || !info || info->size < sizeof(*info))
		return c_api_fail(EINVAL, "mcp_dma_get_engine_info: dma or info is NULL, or info->size is too small");
	return c_api_guard([&] {
		mcp::EngineInfo e = dma->dma.engine(index);
		const std::uint32_t size = info->size;

		std::memset(info, 0, sizeof(*info));
		info->size = size;
		info->index = e.index;
		info->node = e.node;
		std::snprintf(info->name, sizeof(info->name), "%s", e.name.c_str());
		info->max_chunk = e.max_chunk;
		info->inflight = e.inflight;
		info->submitted = e.submitted;
		info->completed = e.completed;
		info->failed = e.failed;
		info->timed_out = e.timed_out;
		info->wc_depth = e.wc_depth;
		info->wc_timeout_us = e.wc_timeout_us;
	});
}

int mcp_dma_find_engine(struct mcp_dma *dma, const char *name, uint32_t *index)
{
	if (!dma || !name || !index)
		return c_api_fail(EINVAL, "mcp_dma_find_engine: dma, name or index is NULL");
	return c_api_guard([&] { *index = dma->dma.find_engine(name); });
}

int mcp_buffer_create(struct mcp_dma *dma, uint64_t length, uint32_t flags, int node,
		      struct mcp_buffer **out)
{
	if (!dma || !out)
		return c_api_fail(EINVAL, "mcp_buffer_create: dma or out is NULL");
	if (flags & ~(MCP_BUFFER_COHERENT | MCP_BUFFER_HUGEPAGE | MCP_BUFFER_NODE))
		return c_api_fail(EINVAL, "mcp_buffer_create: unknown flags");
	return c_api_guard([&] {
		mcp::BufferOptions o;

		o.coherent = flags & MCP_BUFFER_COHERENT;
		o.hugepage = flags & MCP_BUFFER_HUGEPAGE;
		if (flags & MCP_BUFFER_NODE)
			o.node = node;
		auto handle = std::make_unique<mcp_buffer>();
		handle->buf = mcp::Buffer::create(dma->dma, length, o);
		*out = handle.release();
	});
}

int mcp_buffer_from_user(struct mcp_dma *dma, void *addr, uint64_t length, uint32_t flags,
			 struct mcp_buffer **out)
{
	if (!dma || !addr || !out)
		return c_api_fail(EINVAL, "mcp_buffer_from_user: dma, addr or out is NULL");
	if (flags & ~MCP_BUFFER_USER_WRITE)
		return c_api_fail(EINVAL, "mcp_buffer_from_user: unknown flags");
	return c_api_guard([&] {
		auto handle = std::make_unique<mcp_buffer>();
		handle->buf = mcp::Buffer::from_user(
			dma->dma, {static_cast<std::byte *>(addr), static_cast<std::size_t>(length)},
			flags & MCP_BUFFER_USER_WRITE);
		*out = handle.release();
	});
}

int mcp_buffer_import(struct mcp_dma *dma, int fd, struct mcp_buffer **out)
{
	if (!dma || !out)
		return c_api_fail(EINVAL, "mcp_buffer_import: dma or out is NULL");
	return c_api_guard([&] {
		auto handle = std::make_unique<mcp_buffer>();
		handle->buf = mcp::Buffer::import(dma->dma, fd);
		*out = handle.release();
	});
}

void mcp_buffer_free(struct mcp_buffer *buf)
{
	std::unique_ptr<mcp_buffer> owned(buf);
}

uint64_t mcp_buffer_size(const struct mcp_buffer *buf)
{
	return buf ? buf->buf.size() : 0;
}

int mcp_buffer_get_info(const struct mcp_buffer *buf, struct mcp_buffer_info *info)
{
	if (!buf || !info || info->size < sizeof(*info))
		return c_api_fail(EINVAL, "mcp_buffer_get_info: buf or info is NULL, or info->size is too small");
	return c_api_guard([&] { mcp::detail::put_buffer_info(buf->buf.info(), info); });
}

int mcp_buffer_data(struct mcp_buffer *buf, void **data)
{
	if (!buf || !data)
		return c_api_fail(EINVAL, "mcp_buffer_data: buf or data is NULL");
	return c_api_guard([&] { *data = buf->buf.data().data(); });
}

int mcp_buffer_export(const struct mcp_buffer *buf, int *fd)
{
	if (!buf || !fd)
		return c_api_fail(EINVAL, "mcp_buffer_export: buf or fd is NULL");
	return c_api_guard([&] { *fd = buf->buf.export_fd().release(); });
}

int mcp_dma_copy(struct mcp_dma *dma, uint32_t engine, const struct mcp_buffer *src,
		 uint64_t src_offset, const struct mcp_buffer *dst, uint64_t dst_offset,
		 uint64_t length, const struct mcp_dma_copy_opts *opts, uint64_t *seqno)
{
	if (!copy_args_ok(dma, src, dst, opts))
		return c_api_fail(EINVAL, "mcp_dma_copy: dma, src or dst is NULL, or opts->size is too small");
	return c_api_guard([&] {
		std::uint64_t s = dma->dma.copy(engine, src->buf, src_offset, dst->buf, dst_offset,
						length, copy_options(opts));
		if (seqno)
			*seqno = s;
	});
}

int mcp_dma_copy_async(struct mcp_dma *dma, uint32_t engine, const struct mcp_buffer *src,
		       uint64_t src_offset, const struct mcp_buffer *dst, uint64_t dst_offset,
		       uint64_t length, const struct mcp_dma_copy_opts *opts, struct mcp_fence **out)
{
	if (!copy_args_ok(dma, src, dst, opts) || !out)
		return c_api_fail(EINVAL, "mcp_dma_copy_async: dma, src, dst or out is NULL, or opts->size is too small");
	return c_api_guard([&] {
		auto handle = std::make_unique<mcp_fence>();
		handle->fence = dma->dma.copy_async(engine, src->buf, src_offset, dst->buf, dst_offset,
						    length, copy_options(opts));
		*out = handle.release();
	});
}

int mcp_fence_from_fd(int fd, struct mcp_fence **out)
{
	if (fd < 0 || !out)
		return c_api_fail(EINVAL, "mcp_fence_from_fd: fd is negative or out is NULL");
	return c_api_guard([&] {
		auto handle = std::make_unique<mcp_fence>();
		handle->fence = mcp::Fence(mcp::UniqueFd(fd));
		*out = handle.release();
	});
}

void mcp_fence_free(struct mcp_fence *fence)
{
	std::unique_ptr<mcp_fence> owned(fence);
}

int mcp_fence_fd(const struct mcp_fence *fence)
{
	if (!fence)
		return c_api_fail(EINVAL, "mcp_fence_fd: fence is NULL");
	return fence->fence.fd();
}

int mcp_fence_wait(const struct mcp_fence *fence, int64_t timeout_ns, int *job_error)
{
	if (!fence)
		return c_api_fail(EINVAL, "mcp_fence_wait: fence is NULL");
	mcp::FenceResult r;
	int g = c_api_guard([&] { r = fence->fence.wait(std::chrono::nanoseconds(timeout_ns)); });
	if (g)
		return g;
	if (r.state == mcp::FenceState::timed_out)
		return c_api_fail(ETIME, "the fence did not signal within the time-out");
	if (job_error)
		*job_error = -r.error;
	return 0;
}

int mcp_fence_status(const struct mcp_fence *fence, int *status)
{
	if (!fence || !status)
		return c_api_fail(EINVAL, "mcp_fence_status: fence or status is NULL");
	return c_api_guard([&] {
		mcp::FenceStatus s = fence->fence.status();

		*status = s.error ? -s.error : s.signaled ? 1 : 0;
	});
}

int mcp_fence_merge(const struct mcp_fence *a, const struct mcp_fence *b, struct mcp_fence **out)
{
	if (!a || !b || !out)
		return c_api_fail(EINVAL, "mcp_fence_merge: a, b or out is NULL");
	return c_api_guard([&] {
		auto handle = std::make_unique<mcp_fence>();
		handle->fence = mcp::Fence::merge(a->fence, b->fence);
		*out = handle.release();
	});
}

} // extern "C"
