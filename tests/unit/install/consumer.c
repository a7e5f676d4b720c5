/* SPDX-License-Identifier: GPL-2.0-only */
/* An application built against an installed libmcp (C API). */
#include <errno.h>
#include <stdio.h>

#include <mcp/mcp.h>

int main(void)
{
	struct mcp_device *dev = NULL;
	int ret = mcp_open("/nonexistent/mcp", &dev);

	printf("libmcp %s: %d %s\n", mcp_library_version(), ret, mcp_strerror_last());
	return ret == -ENOENT ? 0 : 1;
}
