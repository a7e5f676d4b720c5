// SPDX-License-Identifier: LGPL-2.1-or-later
// mcp::Device: opening /dev/mcp (or $MCP_DEVICE) and owning the descriptor.
#include <cerrno>
#include <cstdlib>
#include <string>
#include <utility>

#include <fcntl.h>
#include <unistd.h>

#include "internal.hpp"

namespace mcp {

Device::Device(int fd, std::string path) noexcept
	: fd_(fd), path_(std::move(path))
{
}

Device::Device(Device &&other) noexcept
	: fd_(std::exchange(other.fd_, -1)), path_(std::move(other.path_)),
	  version_(std::move(other.version_))
{
}

Device &Device::operator=(Device &&other) noexcept
{
	if (this != &other) {
		reset();
		fd_ = std::exchange(other.fd_, -1);
		path_ = std::move(other.path_);
		version_ = std::move(other.version_);
	}
	return *this;
}

Device::~Device()
{
	reset();
}

void Device::reset() noexcept
{
	if (fd_ >= 0)
		::close(fd_);
	fd_ = -1;
}

std::string Device::default_path()
{
	const char *env = std::getenv(MCP_DEVICE_ENV);

	if (env && *env)
		return env;
	return MCP_DEFAULT_DEVICE;
}

Device Device::open(std::string_view path)
{
	std::string p = path.empty() ? default_path() : std::string(path);
	int fd = ::open(p.c_str(), O_RDWR | O_CLOEXEC);

	if (fd < 0) {
		int err = errno;
		throw Error(err, detail::open_error_message(err, p));
	}

	// From here the Device owns fd: a throw below closes it.
	Device dev(fd, std::move(p));
	dev.version_ = detail::read_version(dev.fd_, dev.path_);
	detail::check_abi(dev.version_);
	return dev;
}

const Version &Device::version() const
{
	if (!is_open())
		throw Error(EBADF, "the mcp device is not open");
	return version_;
}

Topology Device::topology() const
{
	if (!is_open())
		throw Error(EBADF, "the mcp device is not open");
	if (!version_.has(feature::topology))
		throw Error(EOPNOTSUPP,
			    "the loaded mcp module (" + version_.module_version +
			    ") cannot report the topology: install a newer mcp module");
	return detail::read_topology(fd_, path_);
}

} // namespace mcp
