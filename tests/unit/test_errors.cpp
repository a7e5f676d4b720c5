// SPDX-License-Identifier: GPL-2.0-only
// libmcp's errors: the messages users see, their errno values, and the ABI
// compatibility check.
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string>

#include <criterion/criterion.h>

#include "helpers.hpp"
#include "internal.hpp"

static const char not_loaded[] = "the mcp kernel module is not loaded: run 'sudo modprobe mcp'";

// Opens @path (empty: default) and returns the mcp::Error it throws.
static mcp::Error open_error(const std::string &path)
{
	try {
		mcp::Device::open(path);
	} catch (const mcp::Error &e) {
		return e;
	}
	cr_assert_fail("opening '%s' did not fail", path.c_str());
	return mcp::Error(0, "");
}

Test(errors, nonexistent_path_says_modprobe)
{
	mcp::Error e = open_error("/nonexistent/mcp");

	cr_expect_eq(e.errnum(), ENOENT);
	cr_expect_str_eq(e.what(), not_loaded);
}

Test(errors, mcp_device_env_overrides_default)
{
	cr_assert_eq(setenv("MCP_DEVICE", "/nonexistent/mcp-env", 1), 0);
	cr_expect_eq(mcp::Device::default_path(), "/nonexistent/mcp-env");
	mcp::Error e = open_error("");
	cr_expect_eq(e.errnum(), ENOENT);
	cr_expect_str_eq(e.what(), not_loaded);
}

Test(errors, default_path_is_dev_mcp)
{
	cr_assert_eq(unsetenv("MCP_DEVICE"), 0);
	cr_expect_eq(mcp::Device::default_path(), "/dev/mcp");
	cr_assert_eq(setenv("MCP_DEVICE", "", 1), 0); // empty counts as unset
	cr_expect_eq(mcp::Device::default_path(), "/dev/mcp");
}

Test(errors, not_an_mcp_device_is_enotty)
{
	mcp::Error e = open_error("/dev/null");

	cr_expect_eq(e.errnum(), ENOTTY);
	cr_expect(std::string(e.what()).starts_with("/dev/null is not an mcp device"), "%s", e.what());
}

Test(errors, permission_denied_names_group_and_root)
{
	std::string m = mcp::detail::open_error_message(EACCES, "/dev/mcp");

	cr_expect(m.find("group 'mcp'") != std::string::npos, "%s", m.c_str());
	cr_expect(m.find("root") != std::string::npos, "%s", m.c_str());
	cr_expect(m.find("/dev/mcp") != std::string::npos, "%s", m.c_str());
	cr_expect_eq(mcp::detail::open_error_message(EPERM, "/dev/mcp"), m);
}

Test(errors, other_open_errors_name_path_and_cause)
{
	std::string m = mcp::detail::open_error_message(EISDIR, "/tmp");
	cr_expect_eq(m, std::string("cannot open /tmp: ") + std::strerror(EISDIR));
	cr_expect_eq(mcp::detail::open_error_message(ENOENT, "/x"), std::string(not_loaded));
}

Test(errors, abi_mismatch_names_both_versions)
{
	cr_expect_eq(mcp::detail::abi_mismatch_message(1, 0, 2, 0),
		     "libmcp speaks MCP ABI 1.x but the loaded mcp module speaks ABI 2.0: "
		     "install matching libmcp and mcp module versions");
	cr_expect_eq(mcp::detail::abi_mismatch_message(1, 4, 0, 9),
		     "libmcp speaks MCP ABI 1.x but the loaded mcp module speaks ABI 0.9: "
		     "install matching libmcp and mcp module versions");
}

Test(errors, abi_same_major_is_compatible)
{
	cr_expect_eq(mcp::detail::abi_mismatch_message(1, 0, 1, 0), "");
	cr_expect_eq(mcp::detail::abi_mismatch_message(1, 0, 1, 7), ""); // newer minor
	cr_expect_eq(mcp::detail::abi_mismatch_message(1, 5, 1, 0), ""); // older minor
}

Test(errors, check_abi_throws_eproto)
{
	mcp::Version v{2, 0, 3, "9.9"};
	try {
		mcp::detail::check_abi(v);
		cr_assert_fail("check_abi accepted ABI 2.0");
	} catch (const mcp::Error &e) {
		cr_expect_eq(e.errnum(), EPROTO);
		cr_expect(std::string(e.what()).find("ABI 2.0") != std::string::npos);
	}
	v.abi_major = mcp::abi_major;
	mcp::detail::check_abi(v); // no throw
}

Test(errors, error_is_a_system_error)
{
	mcp::Error e(ENOENT, "msg");
	const std::system_error &se = e;

	cr_expect(se.code() == std::errc::no_such_file_or_directory);
	cr_expect(&se.code().category() == &std::generic_category());
	cr_expect_str_eq(se.what(), "msg"); // no ": No such file..." suffix
}

Test(errors, ioctl_errors)
{
	std::string m = mcp::detail::ioctl_error_message(EFAULT, "/dev/mcp", "MCP_IOC_GET_TOPOLOGY");
	cr_expect_eq(m, std::string("MCP_IOC_GET_TOPOLOGY on /dev/mcp failed: ") + std::strerror(EFAULT));
	m = mcp::detail::ioctl_error_message(ENODEV, "/dev/mcp", "MCP_IOC_GET_VERSION");
	cr_expect(m.find("went away") != std::string::npos, "%s", m.c_str());
}

Test(version, decode_version_bounds_module_string)
{
	struct mcp_version raw {};
	raw.abi_major = 1;
	raw.abi_minor = 2;
	raw.features = MCP_FEAT_VERSION | MCP_FEAT_TOPOLOGY;
	std::memset(raw.module_version, 'x', sizeof(raw.module_version)); // no NUL
	mcp::Version v = mcp::detail::decode_version(raw);

	cr_expect_eq(v.abi_major, 1u);
	cr_expect_eq(v.abi_minor, 2u);
	cr_expect(v.has(mcp::feature::topology));
	cr_expect_eq(v.module_version, std::string(64, 'x'));

	std::strcpy(raw.module_version, "0.1.0");
	cr_expect_eq(mcp::detail::decode_version(raw).module_version, "0.1.0");
}

Test(version, library_version_and_feature_names)
{
	cr_expect_str_eq(mcp::library_version(), MCP_PROJECT_VERSION);
	cr_expect(mcp::feature_names(0).empty());
	cr_expect(mcp::feature_names(3) == (std::vector<std::string>{"version", "topology"}));
	cr_expect(mcp::feature_names(1ULL << 63) == (std::vector<std::string>{"bit63"}));
}

Test(device, closed_and_moved_from_devices)
{
	mcp::Device d;
	cr_expect_not(d.is_open());
	cr_expect_eq(d.fd(), -1);
	try {
		(void)d.version();
		cr_assert_fail("version() on a closed device");
	} catch (const mcp::Error &e) {
		cr_expect_eq(e.errnum(), EBADF);
	}
	mcp::Device moved = std::move(d);
	cr_expect_not(moved.is_open());
	cr_expect_not(d.is_open()); // NOLINT(bugprone-use-after-move): defined state
}
