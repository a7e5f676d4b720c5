// SPDX-License-Identifier: LGPL-2.1-or-later
// Versions: libmcp's own, the module's (MCP_IOC_GET_VERSION) and the ABI
// compatibility check between the two.
#include <cerrno>
#include <cstring>
#include <string>

#include <sys/ioctl.h>

#include "internal.hpp"
#include "version_config.h"

static_assert(mcp::abi_major == MCP_ABI_MAJOR, "mcp.hpp and <linux/mcp.h> disagree on the ABI major");
static_assert(mcp::abi_minor == MCP_ABI_MINOR, "mcp.hpp and <linux/mcp.h> disagree on the ABI minor");
static_assert(MCP_FEATURE_VERSION == MCP_FEAT_VERSION);
static_assert(MCP_FEATURE_TOPOLOGY == MCP_FEAT_TOPOLOGY);
static_assert(MCP_FEATURE_PLACE_ADAPTIVE == MCP_FEAT_PLACE_ADAPTIVE);

namespace mcp {

const char *library_version() noexcept
{
	return MCP_LIBRARY_VERSION;
}

std::vector<std::string> feature_names(std::uint64_t features)
{
	std::vector<std::string> names;

	for (unsigned bit = 0; bit < 64; bit++) {
		std::uint64_t mask = std::uint64_t{1} << bit;

		if (!(features & mask))
			continue;
		const char *name = mcp_feature_name(mask);
		names.push_back(name ? name : "bit" + std::to_string(bit));
	}
	return names;
}

namespace detail {

std::string abi_mismatch_message(std::uint32_t lib_major, std::uint32_t lib_minor,
				 std::uint32_t mod_major, std::uint32_t mod_minor)
{
	(void)lib_minor; // minors are compatible both ways; features tell apart
	if (lib_major == mod_major)
		return {};
	return "libmcp speaks MCP ABI " + std::to_string(lib_major) +
	       ".x but the loaded mcp module speaks ABI " +
	       std::to_string(mod_major) + "." + std::to_string(mod_minor) +
	       ": install matching libmcp and mcp module versions";
}

void check_abi(const Version &module)
{
	std::string msg = abi_mismatch_message(abi_major, abi_minor,
					       module.abi_major, module.abi_minor);
	if (!msg.empty())
		throw Error(EPROTO, std::move(msg));
}

Version decode_version(const struct mcp_version &raw)
{
	Version v;

	v.abi_major = raw.abi_major;
	v.abi_minor = raw.abi_minor;
	v.features = raw.features;
	// The kernel NUL-terminates; do not trust it to.
	v.module_version.assign(raw.module_version,
				strnlen(raw.module_version, sizeof(raw.module_version)));
	return v;
}

Version read_version(int fd, std::string_view path)
{
	struct mcp_version raw {};

	raw.size = sizeof(raw);
	if (::ioctl(fd, MCP_IOC_GET_VERSION, &raw) < 0) {
		int err = errno;
		throw Error(err, ioctl_error_message(err, path, "MCP_IOC_GET_VERSION"));
	}
	return decode_version(raw);
}

} // namespace detail
} // namespace mcp
