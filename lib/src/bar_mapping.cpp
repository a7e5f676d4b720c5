// SPDX-License-Identifier: LGPL-2.1-or-later
// mcp::BarMapping: a BAR of a device mapped into the process (mmap of the
// device fd at the offset MCP_IOC_BAR_INFO gives), with bounds-checked
// volatile register accesses and a write-combined block copy.
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>
#include <utility>

#include <sys/mman.h>
#include <unistd.h>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

#include "internal.hpp"

namespace mcp {

namespace {

std::string bar_name(unsigned bar, std::string_view device)
{
	return "BAR " + std::to_string(bar) + " of " + std::string(device);
}

std::string hex(std::size_t v)
{
	char buf[24];

	std::snprintf(buf, sizeof(buf), "0x%zx", v);
	return buf;
}

// Orders the stores before it ahead of any later store.  On x86 ordinary
// stores are already ordered among themselves, but write-combining
// buffers are not: only sfence (or a locked instruction) drains them.
// std::atomic_thread_fence(release) compiles to nothing on x86.
inline void store_fence() noexcept
{
#if defined(__x86_64__) || defined(__i386__)
	_mm_sfence();
#elif defined(__aarch64__)
	__asm__ __volatile__("dmb oshst" ::: "memory");
#else
	__sync_synchronize();
#endif
}

} // namespace

namespace detail {

std::string wc_refusal_message(std::uint32_t wc_status, unsigned bar, std::string_view device)
{
	const std::string b = bar_name(bar, device);

	switch (wc_status) {
	case MCP_WC_NOT_PREFETCHABLE:
		return b + " is not prefetchable and its backend does not declare it " +
		       "write-combining safe: map it uncached";
	case MCP_WC_NO_PLATFORM:
		return "this platform cannot map " + b +
		       " write-combining (no PAT support): map it uncached";
	case MCP_WC_NOT_MAPPABLE:
		return b + " cannot be mapped at all (I/O ports, absent, or not page-aligned)";
	default:
		return b + " cannot be mapped write-combining (reason " +
		       std::to_string(wc_status) + " unknown to this libmcp)";
	}
}

std::string map_error_message(int errnum, unsigned bar, std::string_view device, Caching caching)
{
	const std::string b = bar_name(bar, device);

	switch (errnum) {
	case EPERM:
	case EACCES:
		return "mapping " + b + " needs CAP_SYS_RAWIO (as sysfs resourceN does): " +
		       "run as root or grant the capability";
	case EINVAL:
		return "mapping " + b + " was refused: the range is outside the BAR or not " +
		       "page-aligned, or the BAR cannot be mapped";
	case EBUSY: {
		const bool wc = caching == Caching::write_combining;

		return "mapping " + b + (wc ? " write-combining" : " uncached") +
		       " was refused: it is mapped " + (wc ? "uncached" : "write-combining") +
		       " by this or another process, and a BAR is mapped in one cache mode at a " +
		       "time: unmap the other mapping first or map it the same way";
	}
	case ENODEV:
		return device_error_message(errnum, device, "mapping " + bar_name(bar, device));
	default:
		return "mapping " + b + " failed: " + std::strerror(errnum);
	}
}

BarMapping BarMappingAccess::adopt(void *base, std::size_t len, unsigned bar,
				   std::uint64_t bar_offset, Caching caching, std::string device)
{
	return BarMapping(base, len, bar, bar_offset, caching, std::move(device));
}

} // namespace detail

BarMapping::BarMapping(void *base, std::size_t len, unsigned bar, std::uint64_t bar_offset,
		       Caching caching, std::string device) noexcept
	: base_(base), len_(len), bar_(bar), bar_offset_(bar_offset), caching_(caching),
	  device_(std::move(device))
{
}

BarMapping::BarMapping(BarMapping &&other) noexcept
	: base_(std::exchange(other.base_, nullptr)), len_(std::exchange(other.len_, 0)),
	  bar_(other.bar_), bar_offset_(other.bar_offset_), caching_(other.caching_),
	  device_(std::move(other.device_))
{
}

BarMapping &BarMapping::operator=(BarMapping &&other) noexcept
{
	if (this != &other) {
		reset();
		base_ = std::exchange(other.base_, nullptr);
		len_ = std::exchange(other.len_, 0);
		bar_ = other.bar_;
		bar_offset_ = other.bar_offset_;
		caching_ = other.caching_;
		device_ = std::move(other.device_);
	}
	return *this;
}

BarMapping::~BarMapping()
{
	reset();
}

void BarMapping::reset() noexcept
{
	if (base_)
		::munmap(base_, len_);
	base_ = nullptr;
	len_ = 0;
}

void BarMapping::check(std::size_t offset, std::size_t width, const char *what) const
{
	if (!base_)
		throw Error(EBADF, std::string(what) + ": the BAR is not mapped");
	if (offset > len_ || width > len_ - offset)
		throw Error(EINVAL, std::string(what) + " at offset " + hex(offset) +
					    " is outside the " + std::to_string(len_) +
					    "-byte mapping of " + bar_name(bar_, device_));
	if (offset % (width < 8 ? width : 8))
		throw Error(EINVAL, std::string(what) + " at offset " + hex(offset) +
					    " is not aligned to " +
					    std::to_string(width < 8 ? width : 8) + " bytes");
}

std::uint32_t BarMapping::read32(std::size_t offset) const
{
	check(offset, 4, "a 32-bit read");
	return *reinterpret_cast<volatile std::uint32_t *>(static_cast<char *>(base_) + offset);
}

std::uint64_t BarMapping::read64(std::size_t offset) const
{
	check(offset, 8, "a 64-bit read");
	return *reinterpret_cast<volatile std::uint64_t *>(static_cast<char *>(base_) + offset);
}

void BarMapping::write32(std::size_t offset, std::uint32_t value) const
{
	check(offset, 4, "a 32-bit write");
	*reinterpret_cast<volatile std::uint32_t *>(static_cast<char *>(base_) + offset) = value;
}

void BarMapping::write64(std::size_t offset, std::uint64_t value) const
{
	check(offset, 8, "a 64-bit write");
	*reinterpret_cast<volatile std::uint64_t *>(static_cast<char *>(base_) + offset) = value;
}

void BarMapping::write_block(std::size_t offset, std::span<const std::byte> bytes) const
{
	if (bytes.size() % 4)
		throw Error(EINVAL, "a block write of " + std::to_string(bytes.size()) +
					    " bytes: the length must be a multiple of 4");
	if (bytes.empty())
		return;
	check(offset, bytes.size(), "a block write");
	if (offset % 8)
		throw Error(EINVAL, "a block write at offset " + std::to_string(offset) +
					    " is not aligned to 8 bytes");

	char *dst = static_cast<char *>(base_) + offset;
	std::size_t i = 0;

	// Whole 64-bit stores, so a WC buffer fills with few transactions;
	// memcpy() could use narrower or overlapping stores on device memory.
	for (; i + 8 <= bytes.size(); i += 8) {
		std::uint64_t v;

		std::memcpy(&v, bytes.data() + i, 8);
		*reinterpret_cast<volatile std::uint64_t *>(dst + i) = v;
	}
	if (i < bytes.size()) {
		std::uint32_t v;

		std::memcpy(&v, bytes.data() + i, 4);
		*reinterpret_cast<volatile std::uint32_t *>(dst + i) = v;
	}
	store_fence();
}

BarMapping Accelerator::map_bar(unsigned bar, Caching caching, std::uint64_t offset,
				std::uint64_t length) const
{
	const std::string name = info_.address.to_string();
	BarRegion r = bar_region(bar);
	const long page = ::sysconf(_SC_PAGESIZE);

	if (!(r.flags & MCP_BAR_MAPPABLE) || r.len == 0)
		throw Error(EINVAL, detail::wc_refusal_message(MCP_WC_NOT_MAPPABLE, bar, name));
	if (caching == Caching::write_combining && r.wc_status != MCP_WC_ALLOWED)
		throw Error(EINVAL, detail::wc_refusal_message(r.wc_status, bar, name));
	if (offset % static_cast<std::uint64_t>(page))
		throw Error(EINVAL, "mapping " + bar_name(bar, name) + " from offset " +
					    std::to_string(offset) + ": the offset must be a multiple of the page size (" +
					    std::to_string(page) + ")");
	if (offset >= r.len)
		throw Error(EINVAL, "mapping " + bar_name(bar, name) + " from offset " +
					    std::to_string(offset) + ": the BAR is only " +
					    std::to_string(r.len) + " bytes long");
	if (length == 0)
		length = r.len - offset;
	if (length > r.len - offset)
		throw Error(EINVAL, "mapping " + std::to_string(length) + " bytes of " +
					    bar_name(bar, name) + " from offset " + std::to_string(offset) +
					    " goes past its end (" + std::to_string(r.len) + " bytes)");

	std::uint64_t base = caching == Caching::write_combining ? r.wc_offset : r.offset;
	void *p = ::mmap(nullptr, length, PROT_READ | PROT_WRITE, MAP_SHARED, fd_,
			 static_cast<off_t>(base + offset));
	if (p == MAP_FAILED) {
		int err = errno;

		throw Error(err, detail::map_error_message(err, bar, name, caching));
	}
	return detail::BarMappingAccess::adopt(p, length, bar, offset, caching, name);
}

} // namespace mcp
