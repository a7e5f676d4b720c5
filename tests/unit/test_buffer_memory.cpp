// SPDX-License-Identifier: GPL-2.0-only
// libmcp: the buffer memory of a process from the fdinfo of its MCP
// context fds (<mcp/memory.hpp>, <mcp/memory.h>): the parser of one
// fdinfo text and the errors of the /proc walk.  The VM selftests
// (mcp_top_test) read real fdinfo.
#include <cerrno>
#include <climits>
#include <cstdint>

#include <criterion/criterion.h>

#include <mcp/memory.h>
#include <mcp/memory.hpp>

namespace {

// What mcp.ko writes for a device fd (kmod/mcp_fdinfo.c), after the
// VFS's own lines.
constexpr const char *device_fdinfo = "pos:\t0\n"
				      "flags:\t02000002\n"
				      "mnt_id:\t15\n"
				      "ino:\t1042\n"
				      "drm-driver:\tmcp\n"
				      "drm-client-id:\t7\n"
				      "drm-pdev:\t0000:00:04.0\n"
				      "drm-total-system:\t12288 KiB\n"
				      "drm-resident-system:\t12288 KiB\n"
				      "drm-memory-system:\t12288 KiB\n"
				      "drm-total-userptr:\t64 KiB\n"
				      "drm-resident-userptr:\t64 KiB\n";

} // namespace

Test(buffer_memory, parse_device_fd)
{
	auto u = mcp::parse_context_fdinfo(device_fdinfo);

	cr_assert(u.has_value());
	cr_expect_eq(u->client_id, 7);
	cr_expect_eq(u->system_bytes, 12288ULL << 10);
	cr_expect_eq(u->userptr_bytes, 64ULL << 10);
}

Test(buffer_memory, parse_units_and_missing_keys)
{
	// DRM allows bytes (no unit), KiB and MiB; missing memory keys are 0.
	auto u = mcp::parse_context_fdinfo("drm-driver: mcp\ndrm-client-id: 3\n"
					   "drm-total-system: 2 MiB\ndrm-total-userptr: 4096");
	cr_assert(u.has_value());
	cr_expect_eq(u->system_bytes, 2ULL << 20);
	cr_expect_eq(u->userptr_bytes, 4096);
	u = mcp::parse_context_fdinfo("drm-driver:\tmcp\ndrm-client-id:\t4\n");
	cr_assert(u.has_value());
	cr_expect_eq(u->system_bytes, 0);
}

Test(buffer_memory, parse_not_mcp)
{
	// Another DRM driver's client, an fd without DRM keys, an MCP text
	// without a client id: not an MCP context.
	cr_expect(!mcp::parse_context_fdinfo("drm-driver:\ti915\ndrm-client-id:\t1\n"
					     "drm-total-system:\t4 KiB\n"));
	cr_expect(!mcp::parse_context_fdinfo("pos:\t0\nflags:\t02\n"));
	cr_expect(!mcp::parse_context_fdinfo("drm-driver:\tmcp\n"));
	cr_expect(!mcp::parse_context_fdinfo("drm-driver:\tmcpx\ndrm-client-id:\t1\n"));
	cr_expect(!mcp::parse_context_fdinfo(""));
}

Test(buffer_memory, own_process_without_contexts)
{
	// The unit tests hold no /dev/mcp fd (the host cannot load mcp.ko).
	auto m = mcp::process_buffer_memory(0);
	cr_expect_eq(m.contexts, 0);
	cr_expect_eq(m.total_bytes(), 0);
}

Test(buffer_memory, errors)
{
	try {
		(void)mcp::process_buffer_memory(INT_MAX);
		cr_expect_fail("no process %d: no error", INT_MAX);
	} catch (const mcp::Error &e) {
		cr_expect_eq(e.errnum(), ESRCH, "%s", e.what());
	}
	try {
		(void)mcp::process_buffer_memory(-1);
		cr_expect_fail("pid -1: no error");
	} catch (const mcp::Error &e) {
		cr_expect_eq(e.errnum(), EINVAL, "%s", e.what());
	}
}

Test(buffer_memory, c_api)
{
	struct mcp_buffer_memory m = {};

	cr_expect_eq(mcp_get_process_buffer_memory(0, nullptr), -EINVAL);
	cr_expect_eq(mcp_get_process_buffer_memory(0, &m), -EINVAL, "size 0");
	m.size = sizeof(m);
	m.contexts = 99;
	cr_expect_eq(mcp_get_process_buffer_memory(0, &m), 0);
	cr_expect_eq(m.contexts, 0);
	cr_expect_eq(m.system_bytes, 0);
	cr_expect_eq(mcp_get_process_buffer_memory(INT_MAX, &m), -ESRCH);
}
