// SPDX-License-Identifier: LGPL-2.1-or-later
// mcp::Error and the sentences libmcp tells its users when something fails.
#include <cerrno>
#include <cstring>
#include <string>
#include <utility>

#include "internal.hpp"

namespace mcp {

Error::Error(int errnum, std::string message)
	: std::system_error(errnum, std::generic_category()),
	  message_(std::move(message))
{
}

const char *Error::what() const noexcept
{
	return message_.c_str();
}

namespace detail {

std::string open_error_message(int errnum, std::string_view path)
{
	const std::string p(path);

	switch (errnum) {
	case ENOENT:
		return "the mcp kernel module is not loaded: run 'sudo modprobe mcp'";
	case EACCES:
	case EPERM:
		return "permission denied opening " + p +
		       ": join group 'mcp' (sudo usermod -aG mcp $USER, then log in again) or run as root";
	case ENXIO:
	case ENODEV:
		return p + " exists but no mcp device is behind it: reload the module with 'sudo modprobe -r mcp && sudo modprobe mcp'";
	default:
		return "cannot open " + p + ": " + std::strerror(errnum);
	}
}

std::string ioctl_error_message(int errnum, std::string_view path,
				std::string_view ioctl_name)
{
	const std::string p(path);
	const std::string name(ioctl_name);

	switch (errnum) {
	case ENOTTY:
		return p + " is not an mcp device (" + name +
		       " is not supported): check the device path and that the mcp module is loaded";
	case ENODEV:
		return "the mcp device " + p +
		       " went away (module unloaded or device removed): open it again";
	default:
		return name + " on " + p + " failed: " + std::strerror(errnum);
	}
}

} // namespace detail
} // namespace mcp
