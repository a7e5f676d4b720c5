/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A C program using the buffer, DMA and fence API of the shared libmcp.so:
 * proves <mcp/dma.h> is clean C99 and that its symbols are exported.
 * Without a module it checks the failure paths; with one (MCP_DEVICE) it
 * copies 64 KiB on the host context's cpu engine and checks the bytes.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <mcp/mcp.h>

static int fail(const char *what, int ret)
{
	fprintf(stderr, "%s: %d (%s)\n", what, ret, mcp_strerror_last());
	return 1;
}

static int copy_on_host(struct mcp_device *dev)
{
	struct mcp_dma *dma = NULL;
	struct mcp_buffer *src = NULL, *dst = NULL;
	struct mcp_fence *fence = NULL;
	unsigned char *s, *d;
	void *p;
	int ret, job_error = 1;
	size_t i;

	ret = mcp_dma_open_host(dev, &dma);
	if (ret == -EOPNOTSUPP) {
		printf("unsupported: %s\n", mcp_strerror_last());
		return 0;
	}
	if (ret)
		return fail("mcp_dma_open_host", ret);
	if ((ret = mcp_buffer_create(dma, 65536, 0, 0, &src)) ||
	    (ret = mcp_buffer_create(dma, 65536, 0, 0, &dst)))
		return fail("mcp_buffer_create", ret);
	if ((ret = mcp_buffer_data(src, &p)))
		return fail("mcp_buffer_data", ret);
	s = p;
	if ((ret = mcp_buffer_data(dst, &p)))
		return fail("mcp_buffer_data", ret);
	d = p;
	for (i = 0; i < 65536; i++)
		s[i] = (unsigned char)(i * 7 + 1);
	ret = mcp_dma_copy_async(dma, MCP_DMA_ENGINE_CPU, src, 0, dst, 0, 65536, NULL, &fence);
	if (ret)
		return fail("mcp_dma_copy_async", ret);
	ret = mcp_fence_wait(fence, 10000000000LL, &job_error);
	if (ret || job_error)
		return fail("mcp_fence_wait", ret ? ret : job_error);
	if (memcmp(s, d, 65536) != 0) {
		fprintf(stderr, "the copy differs from the source\n");
		return 1;
	}
	printf("copied 64 KiB on the host cpu engine\n");
	mcp_fence_free(fence);
	mcp_buffer_free(src);
	mcp_buffer_free(dst);
	mcp_dma_close(dma);
	return 0;
}

int main(void)
{
	struct mcp_device *dev = NULL;
	struct mcp_dma *dma = NULL;
	int ret;

	ret = mcp_dma_open_host(NULL, &dma);
	if (ret != -EINVAL || dma)
		return fail("mcp_dma_open_host(NULL)", ret);
	ret = mcp_open(NULL, &dev);
	if (ret == -ENOENT) {
		printf("libmcp %s: no mcp module, failure paths only\n", mcp_library_version());
		return 0;
	}
	if (ret)
		return fail("mcp_open", ret);
	ret = copy_on_host(dev);
	mcp_close(dev);
	return ret;
}
