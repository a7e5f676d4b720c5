// SPDX-License-Identifier: LGPL-2.1-or-later
// mcp::IrqEvent: an eventfd connected to one interrupt vector of a device
// (MCP_IOC_IRQ_SET_EVENTFD, VFIO style), waited on with poll(2).
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <string>
#include <utility>

#include <fcntl.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "internal.hpp"

namespace mcp {

IrqEvent::IrqEvent(int device_fd, int event_fd, unsigned vector, std::string device,
		   std::shared_ptr<detail::IrqVectors> vectors) noexcept
	: device_fd_(device_fd), event_fd_(event_fd), vector_(vector), device_(std::move(device)),
	  vectors_(std::move(vectors))
{
}

IrqEvent::IrqEvent(IrqEvent &&other) noexcept
	: device_fd_(std::exchange(other.device_fd_, -1)),
	  event_fd_(std::exchange(other.event_fd_, -1)), vector_(other.vector_),
	  device_(std::move(other.device_)), vectors_(std::move(other.vectors_))
{
}

IrqEvent &IrqEvent::operator=(IrqEvent &&other) noexcept
{
	if (this != &other) {
		reset();
		device_fd_ = std::exchange(other.device_fd_, -1);
		event_fd_ = std::exchange(other.event_fd_, -1);
		vector_ = other.vector_;
		device_ = std::move(other.device_);
		vectors_ = std::move(other.vectors_);
	}
	return *this;
}

IrqEvent::~IrqEvent()
{
	reset();
}

void IrqEvent::reset() noexcept
{
	if (device_fd_ >= 0) {
		struct mcp_irq_eventfd arg = {};

		// Disconnect first, so the kernel stops signalling an fd we
		// close; fails harmlessly (ENODEV) on a removed device.
		arg.size = sizeof(arg);
		arg.vector = vector_;
		arg.eventfd = -1;
		::ioctl(device_fd_, MCP_IOC_IRQ_SET_EVENTFD, &arg);
		::close(device_fd_);
	}
	if (event_fd_ >= 0)
		::close(event_fd_);
	// Only once disconnected may another IrqEvent take the vector.
	if (vectors_) {
		std::lock_guard<std::mutex> g(vectors_->lock);

		vectors_->connected[vector_] = false;
	}
	device_fd_ = -1;
	event_fd_ = -1;
	vectors_.reset();
}

std::optional<std::uint64_t> IrqEvent::wait(std::chrono::milliseconds timeout) const
{
	struct pollfd pfd = {event_fd_, POLLIN, 0};
	std::uint64_t count = 0;

	if (!is_open())
		throw Error(EBADF, "the interrupt eventfd is not open");
	int ms = timeout.count() < 0 ? -1
		 : timeout.count() > INT32_MAX ? INT32_MAX
					       : static_cast<int>(timeout.count());
	int r = ::poll(&pfd, 1, ms);
	if (r < 0 && errno == EINTR)
		return std::nullopt;
	if (r < 0) {
		int err = errno;

		throw Error(err, "waiting for interrupt vector " + std::to_string(vector_) +
					 " of " + device_ + " failed: " + std::strerror(err));
	}
	if (r == 0)
		return std::nullopt;
	if (::read(event_fd_, &count, sizeof(count)) != sizeof(count)) {
		int err = errno;

		if (err == EAGAIN || err == EINTR)
			return std::nullopt;
		throw Error(err, "reading the interrupt eventfd of " + device_ +
					 " failed: " + std::strerror(err));
	}
	return count;
}

void IrqEvent::unmask() const
{
	struct mcp_irq_unmask arg = {};

	if (!is_open())
		throw Error(EBADF, "the interrupt eventfd is not open");
	arg.size = sizeof(arg);
	arg.vector = vector_;
	if (::ioctl(device_fd_, MCP_IOC_IRQ_UNMASK, &arg) != 0) {
		int err = errno;

		throw Error(err, detail::device_error_message(err, device_, "MCP_IOC_IRQ_UNMASK"));
	}
}

IrqEvent Accelerator::irq_event(unsigned vector) const
{
	const std::string name = info_.address.to_string();
	struct mcp_irq_eventfd arg = {};

	if (!is_open())
		throw Error(EBADF, "the accelerator is not open");
	if (vector >= info_.irq_count)
		throw Error(EINVAL, "device " + name + " has " + std::to_string(info_.irq_count) +
					    " interrupt vector(s): vector " + std::to_string(vector) +
					    " does not exist");

	// The kernel sees this Accelerator's IrqEvents as one owner (each
	// dup shares this fd's open file), so a second would replace the
	// first's eventfd and the first's destruction disconnect the second's.
	{
		std::lock_guard<std::mutex> g(vectors_->lock);

		if (vectors_->connected[vector])
			throw Error(EBUSY, "interrupt vector " + std::to_string(vector) + " of " + name +
						   " is already connected to another IrqEvent of this "
						   "Accelerator: wait on that one, or destroy it first");
		vectors_->connected[vector] = true;
	}
	// From here the IrqEvent owns the vector and each fd it is given (and
	// frees them, disconnecting first, on a throw).
	IrqEvent ev(-1, -1, vector, name, vectors_);
	// Non-blocking: wait() polls first, and a read after a spurious
	// wake-up must not block.
	ev.event_fd_ = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (ev.event_fd_ < 0) {
		int err = errno;

		throw Error(err, std::string("cannot create an eventfd: ") + std::strerror(err));
	}
	ev.device_fd_ = ::fcntl(fd_, F_DUPFD_CLOEXEC, 0);
	if (ev.device_fd_ < 0) {
		int err = errno;

		throw Error(err, std::string("cannot duplicate the device fd: ") + std::strerror(err));
	}
	arg.size = sizeof(arg);
	arg.vector = vector;
	arg.eventfd = ev.event_fd_;
	if (::ioctl(ev.device_fd_, MCP_IOC_IRQ_SET_EVENTFD, &arg) != 0) {
		int err = errno;

		if (err == EBUSY)
			throw Error(err, "another open of device " + name + " owns interrupt vector " +
						 std::to_string(vector) +
						 ": it must disconnect it or close the device first");
		throw Error(err, detail::device_error_message(err, name, "MCP_IOC_IRQ_SET_EVENTFD"));
	}
	return ev;
}

} // namespace mcp
