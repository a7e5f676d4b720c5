/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libmcp: NumPy .npy files (C API) for graph inputs and outputs, over
 * mcp::npy of <mcp/npy.hpp>: format versions 1.0, 2.0 and 3.0, any byte
 * order, C order only; element types float32, int8, uint8 and int32
 * (MCP_GRAPH_DTYPE_*).  Same conventions as <mcp/mcp.h>: 0 or a negative
 * errno, mcp_strerror_last() for the sentence (naming the file).
 */
#ifndef MCP_NPY_H
#define MCP_NPY_H

#include <stddef.h>
#include <stdint.h>

#include <mcp/graph.h>

#ifdef __cplusplus
extern "C" {
#endif

#define MCP_NPY_MAX_RANK	16

/**
 * struct mcp_npy_info - what mcp_npy_load() read
 * @size:	sizeof(struct mcp_npy_info), set by the caller
 * @dtype:	MCP_GRAPH_DTYPE_*
 * @rank:	entries of @shape used
 * @shape:	the dims, C order
 * @bytes:	the data's length
 * @descr:	the header's descr ("<f4"), NUL-terminated
 */
struct mcp_npy_info {
	uint32_t size;
	uint32_t dtype;
	uint32_t rank;
	uint32_t reserved;
	uint64_t shape[MCP_NPY_MAX_RANK];
	uint64_t bytes;
	char descr[16];
};

/*
 * mcp_npy_load() - reads the .npy file at @path: its header into @info
 * and, when @buf is not NULL, its data (little-endian) into @buf.
 * -ENOSPC when @cap is less than info->bytes (@info is filled); -EINVAL
 * for a malformed file, Fortran order, a rank above MCP_NPY_MAX_RANK or
 * a dtype that is not an MCP dtype (the message names it); the errno of
 * opening the file.
 */
MCP_EXPORT int mcp_npy_load(const char *path, struct mcp_npy_info *info, void *buf, size_t cap);

/*
 * mcp_npy_save() - writes @len bytes at @data as a .npy file of @dtype
 * (MCP_GRAPH_DTYPE_*) and @shape[@rank]; @len must be the shape's bytes.
 */
MCP_EXPORT int mcp_npy_save(const char *path, uint32_t dtype, const uint64_t *shape, uint32_t rank,
			    const void *data, size_t len);

/*
 * mcp_npy_load_buffer() - reads @path into @mem (@len bytes), the memory
 * of buffer @buffer of @graph: the file's dtype and shape must be those
 * of the buffer's tensor (mcp::npy::buffer_tensor()).  -ENOENT for no
 * such buffer, -EINVAL for a mismatch ("x.npy: shape (2, 16), input 'x'
 * wants (3, 16)") or a short @mem.
 */
MCP_EXPORT int mcp_npy_load_buffer(const struct mcp_graph_def *graph, const char *buffer,
				   const char *path, void *mem, size_t len);

/*
 * mcp_npy_save_buffer() - writes buffer @buffer of @graph, whose memory
 * is @mem (@len bytes), to @path with its tensor's dtype and shape.
 */
MCP_EXPORT int mcp_npy_save_buffer(const struct mcp_graph_def *graph, const char *buffer,
				   const void *mem, size_t len, const char *path);

#ifdef __cplusplus
}
#endif

#endif /* MCP_NPY_H */
