/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A C program linked against the shared libmcp.so: proves mcp.h is clean
 * C (built with -std=c99 -pedantic) and that the exported symbols work.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <mcp/mcp.h>

int main(void)
{
	struct mcp_device *dev = NULL;
	int ret = mcp_open("/nonexistent/mcp", &dev);

	if (ret != -ENOENT || dev) {
		fprintf(stderr, "mcp_open: got %d, want %d\n", ret, -ENOENT);
		return 1;
	}
	if (strstr(mcp_strerror_last(), "modprobe mcp") == NULL) {
		fprintf(stderr, "mcp_strerror_last: '%s'\n", mcp_strerror_last());
		return 1;
	}
	printf("libmcp %s: %s\n", mcp_library_version(), mcp_strerror_last());
	return 0;
}
