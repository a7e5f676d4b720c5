// SPDX-License-Identifier: GPL-2.0-only
// An application built against an installed libmcp (C++ API).
#include <cerrno>
#include <iostream>

#include <mcp/mcp.hpp>

int main()
{
	try {
		mcp::Device dev = mcp::Device::open("/nonexistent/mcp");
	} catch (const mcp::Error &e) {
		std::cout << "libmcp " << mcp::library_version() << ": " << e.what() << '\n';
		return e.errnum() == ENOENT ? 0 : 1;
	}
	return 1;
}
