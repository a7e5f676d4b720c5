// SPDX-License-Identifier: LGPL-2.1-or-later
// libmcp: NumPy .npy files (C++), for graph inputs and outputs.  Format
// versions 1.0, 2.0 and 3.0; any byte order; C order only.  The element
// types are those of MCP tensors: float32 ('<f4'), int8 ('|i1'), uint8
// ('|u1') and int32 ('<i4').  Files of other types are read (their
// header and bytes) so that an error can name the type, but they have
// no DType.  C API: <mcp/npy.h>.  Documentation/onnx.rst ("Running a
// model") shows the use.
#ifndef MCP_NPY_HPP
#define MCP_NPY_HPP

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <mcp/graph.hpp>

namespace mcp::npy {

// One array of a .npy file.
struct Array {
	std::string descr;			// as written: "<f4", ">i4", "|u1", "<f8"
	std::optional<DType> dtype;		// none: not an MCP dtype ("<f8", "|b1", "<f2")
	std::size_t itemsize = 0;		// bytes of one element (descr's digits)
	std::vector<std::uint64_t> shape;	// () for a scalar
	std::vector<std::byte> data;		// C order, little-endian (swapped if written '>')

	// Product of the shape (1 for a scalar).
	MCP_EXPORT std::uint64_t elements() const noexcept;
};

// NumPy's name of @dtype: "float32", "int8", "uint8", "int32"; and the
// little-endian descr that write() uses: "<f4", "|i1", "|u1", "<i4".
MCP_EXPORT const char *numpy_name(DType dtype) noexcept;
MCP_EXPORT const char *descr(DType dtype) noexcept;

// "(3, 16)", "(4,)", "()": a shape as NumPy prints it.
MCP_EXPORT std::string shape_text(std::span<const std::uint64_t> shape);

// Reads .npy bytes; @what names them in messages (the file's path).
// Throws mcp::Error(EINVAL) with one sentence starting "WHAT: " for bad
// magic, an unknown version, a truncated or malformed header, Fortran
// order, a structured or object dtype, or data that is not exactly the
// shape's bytes.
MCP_EXPORT Array parse(std::span<const std::byte> bytes, std::string_view what = "npy data");
// parse() of the file at @path; the errno of opening or reading it.
MCP_EXPORT Array read(const std::string &path);

// The bytes of a .npy file (version 1.0, or 2.0 when the header does not
// fit 65535 bytes; header padded to 64 bytes, as NumPy writes) holding
// @data, little-endian C-order elements of @dtype.  Throws
// mcp::Error(EINVAL) when @data is not the shape's bytes.
MCP_EXPORT std::vector<std::byte> serialize(DType dtype, std::span<const std::uint64_t> shape,
					    std::span<const std::byte> data);
// serialize() written to @path (through a temporary file in the same
// directory, renamed: never a partial file).  The errno on failure.
MCP_EXPORT void write(const std::string &path, DType dtype, std::span<const std::uint64_t> shape,
		      std::span<const std::byte> data);

// ---- graph buffers ----

// The tensor that gives buffer @buffer of @def its shape and dtype: the
// one in it named like the buffer (as the ONNX importer names inputs and
// outputs), else the largest at offset 0 (the first of equals).  None
// when no tensor lies at offset 0 of it.
MCP_EXPORT std::optional<std::uint32_t> buffer_tensor(const GraphDef &def, std::uint32_t buffer);

// Reads @path into @memory, the memory of buffer @name of @def: the
// file's dtype and shape must be buffer_tensor()'s (a 1-byte type's
// byte order does not matter).  Throws mcp::Error: ENOENT for no such
// buffer, EINVAL naming the file and the buffer, e.g. "x.npy: dtype <f8
// (float64), input 'x' wants float32", "x.npy: shape (2, 16), input 'x'
// wants (3, 16)"; the errno of reading the file.
MCP_EXPORT void load_buffer(const GraphDef &def, std::string_view name, const std::string &path,
			    std::span<std::byte> memory);
// load_buffer() of an array already read; @what names it (its path).
MCP_EXPORT void load_buffer(const GraphDef &def, std::string_view name, const Array &array,
			    std::string_view what, std::span<std::byte> memory);
// Writes buffer @name of @def, whose memory is @memory, to @path as
// buffer_tensor()'s dtype and shape.  Throws as write(), and
// mcp::Error(ENOENT/EINVAL) for no such buffer or a short @memory.
MCP_EXPORT void save_buffer(const GraphDef &def, std::string_view name,
			    std::span<const std::byte> memory, const std::string &path);

} // namespace mcp::npy

#endif // MCP_NPY_HPP
