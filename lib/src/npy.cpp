// SPDX-License-Identifier: LGPL-2.1-or-later
// NumPy .npy files (<mcp/npy.hpp>, <mcp/npy.h>): the format of
// numpy.lib.format.  A file is the magic "\x93NUMPY", a major and a minor
// version byte, the header length (2 bytes little-endian in version 1.0,
// 4 bytes in 2.0 and 3.0), the header (a Python dict literal with exactly
// the keys 'descr', 'fortran_order' and 'shape'; ASCII in 1.0 and 2.0,
// UTF-8 in 3.0), then the elements.  Written as NumPy writes it: version
// 1.0 unless the header needs more, padded with spaces and a newline so
// the data starts on a 64-byte boundary.
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <limits>
#include <memory>
#include <new>

#include <unistd.h>

#include <mcp/npy.h>
#include <mcp/npy.hpp>

#include "graph_internal.hpp"

namespace mcp::npy {

namespace {

constexpr char magic[] = "\x93NUMPY";
constexpr std::size_t magic_len = 6;

[[noreturn]] void bad(std::string_view what, const std::string &why)
{
	throw Error(EINVAL, std::string(what) + ": " + why);
}

// NumPy's name of a descr's type, for messages: "float64", "bool".
std::string type_name(char kind, std::size_t size)
{
	const std::string bits = std::to_string(size * 8);

	switch (kind) {
	case 'f':
		return "float" + bits;
	case 'i':
		return "int" + bits;
	case 'u':
		return "uint" + bits;
	case 'c':
		return "complex" + bits;
	case 'b':
		return "bool";
	case 'S':
		return "bytes" + std::to_string(size);
	case 'U':
		return "str" + std::to_string(size / 4);
	case 'V':
		return "void" + std::to_string(size);
	case 'm':
		return "timedelta64";
	case 'M':
		return "datetime64";
	default:
		return "unknown";
	}
}

std::optional<DType> dtype_of(char kind, std::size_t size)
{
	if (kind == 'f' && size == 4)
		return DType::f32;
	if (kind == 'i' && size == 1)
		return DType::i8;
	if (kind == 'u' && size == 1)
		return DType::u8;
	if (kind == 'i' && size == 4)
		return DType::i32;
	return std::nullopt;
}

// The header dict, parsed.
struct Header {
	std::optional<std::string> descr;
	std::optional<bool> fortran;
	std::optional<std::vector<std::uint64_t>> shape;
};

class HeaderParser {
public:
	HeaderParser(std::string_view text, std::string_view what) : s_(text), what_(what) {}

	Header parse()
	{
		Header h;

		expect('{');
		for (;;) {
			ws();
			if (peek() == '}')
				break;
			const std::string key = string();
			ws();
			expect(':');
			ws();
			if (key == "descr") {
				if (peek() == '[')
					fail("structured dtypes (a list of fields) are not supported");
				set(h.descr, string(), key);
			} else if (key == "fortran_order") {
				set(h.fortran, boolean(), key);
			} else if (key == "shape") {
				set(h.shape, tuple(), key);
			} else {
				fail("unexpected key '" + key + "' in the header");
			}
			ws();
			if (peek() == ',') {
				pos_++;
				continue;
			}
			if (peek() != '}')
				fail("malformed header: ',' or '}' expected at byte " + std::to_string(pos_));
		}
		pos_++;
		ws();
		if (pos_ != s_.size())
			fail("malformed header: text after the closing '}'");
		if (!h.descr || !h.fortran || !h.shape)
			fail(std::string("the header lacks '") +
			     (!h.descr ? "descr" : !h.fortran ? "fortran_order" : "shape") + "'");
		return h;
	}

private:
	[[noreturn]] void fail(const std::string &why) const { bad(what_, why); }

	template <typename T> void set(std::optional<T> &slot, T v, const std::string &key)
	{
		if (slot)
			fail("the header repeats '" + key + "'");
		slot = std::move(v);
	}

	char peek() const
	{
		if (pos_ >= s_.size())
			fail("truncated header (it ends inside the dict)");
		return s_[pos_];
	}

	void ws()
	{
		while (pos_ < s_.size() && (s_[pos_] == ' ' || s_[pos_] == '\t' || s_[pos_] == '\n' ||
					    s_[pos_] == '\r'))
			pos_++;
	}

	void expect(char c)
	{
		ws();
		if (peek() != c)
			fail(std::string("malformed header: '") + c + "' expected at byte " +
			     std::to_string(pos_));
		pos_++;
	}

	std::string string()
	{
		const char q = peek();
		if (q != '\'' && q != '"')
			fail("malformed header: a quoted key or string expected at byte " +
			     std::to_string(pos_));
		const std::size_t end = s_.find(q, pos_ + 1);
		if (end == std::string_view::npos)
			fail("truncated header (an unterminated string)");
		std::string v(s_.substr(pos_ + 1, end - pos_ - 1));
		pos_ = end + 1;
		return v;
	}

	bool boolean()
	{
		for (auto [word, v] : {std::pair{std::string_view("True"), true},
				       std::pair{std::string_view("False"), false}})
			if (s_.substr(pos_, word.size()) == word) {
				pos_ += word.size();
				return v;
			}
		fail("malformed header: 'fortran_order' is not True or False");
	}

	std::vector<std::uint64_t> tuple()
	{
		std::vector<std::uint64_t> dims;

		expect('(');
		for (;;) {
			ws();
			if (peek() == ')')
				break;
			if (peek() < '0' || peek() > '9')
				fail("malformed header: 'shape' holds something other than "
				     "non-negative integers");
			std::uint64_t v = 0;
			while (pos_ < s_.size() && s_[pos_] >= '0' && s_[pos_] <= '9') {
				const auto d = static_cast<std::uint64_t>(s_[pos_] - '0');
				if (v > (std::numeric_limits<std::uint64_t>::max() - d) / 10)
					fail("a dimension of 'shape' overflows 64 bits");
				v = v * 10 + d;
				pos_++;
			}
			if (pos_ < s_.size() && s_[pos_] == 'L')
				pos_++;	// Python 2's long suffix
			dims.push_back(v);
			ws();
			if (peek() == ',') {
				pos_++;
				continue;
			}
			if (peek() != ')')
				fail("malformed header: ',' or ')' expected in 'shape' at byte " +
				     std::to_string(pos_));
		}
		pos_++;
		return dims;
	}

	std::string_view s_;
	std::string_view what_;
	std::size_t pos_ = 0;
};

void swap_bytes(std::span<std::byte> data, std::size_t itemsize)
{
	for (std::size_t at = 0; at + itemsize <= data.size(); at += itemsize)
		for (std::size_t i = 0; i < itemsize / 2; i++)
			std::swap(data[at + i], data[at + itemsize - 1 - i]);
}

std::vector<std::byte> read_bytes(const std::string &path)
{
	std::ifstream in(path, std::ios::binary);
	if (!in) {
		const int e = errno ? errno : ENOENT;
		throw Error(e, path + ": cannot open: " + std::strerror(e));
	}
	std::vector<char> chars((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
	if (in.bad())
		throw Error(EIO, path + ": cannot read");
	std::vector<std::byte> bytes(chars.size());
	std::memcpy(bytes.data(), chars.data(), chars.size());
	return bytes;
}

// "input 'x'", "output 'y'", "buffer 'act'".
std::string buffer_role(const GraphBuffer &b)
{
	const char *role = (b.flags & graph_buffer_input)    ? "input"
			   : (b.flags & graph_buffer_output) ? "output"
							     : "buffer";
	return std::string(role) + " '" + b.name + "'";
}

struct Target {
	std::uint32_t buffer;
	const GraphTensor *tensor;
	std::vector<std::uint64_t> shape;
	std::uint64_t bytes;
};

Target target_of(const GraphDef &def, std::string_view name, std::size_t memory)
{
	const std::optional<std::uint32_t> b = def.find_buffer(name);
	if (!b)
		throw Error(ENOENT, "the graph has no buffer named '" + std::string(name) + "'");
	const std::optional<std::uint32_t> t = buffer_tensor(def, *b);
	if (!t)
		throw Error(EINVAL, buffer_role(def.buffers[*b]) +
					    " has no tensor at offset 0 to give it a shape and dtype");
	Target out{*b, &def.tensors[*t], {}, 0};
	out.shape.assign(out.tensor->dims.begin(), out.tensor->dims.end());
	const std::optional<std::uint64_t> n = out.tensor->bytes();
	if (!n || !dtype_size(out.tensor->dtype))
		throw Error(EINVAL, buffer_role(def.buffers[*b]) + ": tensor '" + out.tensor->name +
					    "' has an unknown dtype or overflowing dims");
	out.bytes = *n;
	if (out.bytes > memory)
		throw Error(EINVAL, buffer_role(def.buffers[*b]) + ": its memory is " +
					    std::to_string(memory) + " bytes, tensor '" +
					    out.tensor->name + "' needs " + std::to_string(out.bytes));
	return out;
}

} // namespace

std::uint64_t Array::elements() const noexcept
{
	std::uint64_t n = 1;
	for (std::uint64_t d : shape)
		n *= d;
	return n;
}

const char *numpy_name(DType dtype) noexcept
{
	switch (dtype) {
	case DType::f32:
		return "float32";
	case DType::i8:
		return "int8";
	case DType::u8:
		return "uint8";
	case DType::i32:
		return "int32";
	}
	return "unknown";
}

const char *descr(DType dtype) noexcept
{
	switch (dtype) {
	case DType::f32:
		return "<f4";
	case DType::i8:
		return "|i1";
	case DType::u8:
		return "|u1";
	case DType::i32:
		return "<i4";
	}
	return "";
}

std::string shape_text(std::span<const std::uint64_t> shape)
{
	std::string s = "(";

	for (std::size_t i = 0; i < shape.size(); i++)
		s += (i ? ", " : "") + std::to_string(shape[i]);
	return s + (shape.size() == 1 ? ",)" : ")");
}

Array parse(std::span<const std::byte> bytes, std::string_view what)
{
	if (bytes.size() < magic_len || std::memcmp(bytes.data(), magic, magic_len) != 0)
		bad(what, "not a .npy file (no \\x93NUMPY magic)");
	if (bytes.size() < magic_len + 4)
		bad(what, "truncated .npy file (" + std::to_string(bytes.size()) +
				  " bytes, the preamble alone is 10)");
	const auto major = static_cast<unsigned>(bytes[6]);
	const auto minor = static_cast<unsigned>(bytes[7]);
	if ((major != 1 && major != 2 && major != 3) || minor != 0)
		bad(what, "format version " + std::to_string(major) + "." + std::to_string(minor) +
				  " is not supported (1.0, 2.0 and 3.0 are)");
	std::size_t hstart, hlen;
	if (major == 1) {
		hstart = 10;
		hlen = static_cast<std::size_t>(bytes[8]) | static_cast<std::size_t>(bytes[9]) << 8;
	} else {
		if (bytes.size() < 12)
			bad(what, "truncated .npy file (the version " + std::to_string(major) +
					  ".0 preamble is 12 bytes)");
		hstart = 12;
		hlen = 0;
		for (std::size_t i = 0; i < 4; i++)
			hlen |= static_cast<std::size_t>(bytes[8 + i]) << (8 * i);
	}
	if (hlen > bytes.size() - hstart)
		bad(what, "truncated .npy file (the header says " + std::to_string(hlen) +
				  " bytes, the file has " + std::to_string(bytes.size() - hstart) +
				  " after the preamble)");
	const std::string_view text(reinterpret_cast<const char *>(bytes.data() + hstart), hlen);
	const Header h = HeaderParser(text, what).parse();

	Array a;
	a.descr = *h.descr;
	a.shape = *h.shape;
	if (*h.fortran)
		bad(what, "Fortran order (fortran_order True) is not supported: save it in C "
			  "order (numpy.ascontiguousarray)");
	const std::string &d = a.descr;
	if (d.size() >= 2 && d[1] == 'O')
		bad(what, "object arrays (pickled Python objects) are not supported");
	if (d.size() < 3 || std::string_view("<>|=").find(d[0]) == std::string_view::npos ||
	    d.find_first_not_of("0123456789", 2) != std::string::npos)
		bad(what, "dtype '" + d + "' is not a plain NumPy type (such as '<f4')");
	const char kind = d[1];
	if (d.size() > 8)
		bad(what, "dtype '" + d + "' has an implausible element size");
	a.itemsize = std::stoul(d.substr(2));
	if (a.itemsize == 0)
		bad(what, "dtype '" + d + "' has elements of 0 bytes");
	a.dtype = dtype_of(kind, a.itemsize);

	std::uint64_t n = 1;
	for (std::uint64_t dim : a.shape) {
		if (dim && n > std::numeric_limits<std::uint64_t>::max() / dim)
			bad(what, "shape " + shape_text(a.shape) + " overflows 64 bits");
		n *= dim;
	}
	const std::uint64_t data_len = bytes.size() - hstart - hlen;
	if (n > std::numeric_limits<std::uint64_t>::max() / a.itemsize || n * a.itemsize != data_len)
		bad(what, "shape " + shape_text(a.shape) + " of " + d + " wants " +
				  (n > std::numeric_limits<std::uint64_t>::max() / a.itemsize
					   ? std::string("more than 2^64")
					   : std::to_string(n * a.itemsize)) +
				  " bytes of data, the file has " + std::to_string(data_len) +
				  (data_len < n * a.itemsize ? " (truncated)" : ""));
	const std::span<const std::byte> body = bytes.subspan(hstart + hlen);
	a.data.assign(body.begin(), body.end());
	if (d[0] == '>' && a.itemsize > 1 && kind != 'S' && kind != 'V' && kind != 'b')
		// complex: real and imaginary parts apart; str: UCS-4 code points
		swap_bytes(a.data, kind == 'c' ? a.itemsize / 2 : kind == 'U' ? 4 : a.itemsize);
	return a;
}

Array read(const std::string &path)
{
	return parse(read_bytes(path), path);
}

std::vector<std::byte> serialize(DType dtype, std::span<const std::uint64_t> shape,
				 std::span<const std::byte> data)
{
	const std::size_t size = dtype_size(dtype);
	if (!size)
		throw Error(EINVAL, "npy: unknown dtype " + std::to_string(static_cast<int>(dtype)));
	std::uint64_t n = 1;
	for (std::uint64_t d : shape) {
		if (d && n > std::numeric_limits<std::uint64_t>::max() / d / size)
			throw Error(EINVAL, "npy: shape " + shape_text(shape) + " overflows");
		n *= d;
	}
	if (n * size != data.size())
		throw Error(EINVAL, "npy: shape " + shape_text(shape) + " of " + numpy_name(dtype) +
					    " is " + std::to_string(n * size) + " bytes, the data " +
					    std::to_string(data.size()));
	std::string header = std::string("{'descr': '") + descr(dtype) +
			     "', 'fortran_order': False, 'shape': " + shape_text(shape) + ", }";
	std::size_t pre = 10;
	if (header.size() + 1 + 64 > 65535)
		pre = 12;
	header.append((64 - (pre + header.size() + 1) % 64) % 64, ' ');
	header += '\n';

	std::vector<std::byte> out(pre + header.size() + data.size());
	std::memcpy(out.data(), magic, magic_len);
	out[6] = std::byte{pre == 10 ? std::uint8_t{1} : std::uint8_t{2}};
	out[7] = std::byte{0};
	for (std::size_t i = 0; i < pre - 8; i++)
		out[8 + i] = static_cast<std::byte>((header.size() >> (8 * i)) & 0xff);
	std::memcpy(out.data() + pre, header.data(), header.size());
	if (!data.empty())
		std::memcpy(out.data() + pre + header.size(), data.data(), data.size());
	return out;
}

void write(const std::string &path, DType dtype, std::span<const std::uint64_t> shape,
	   std::span<const std::byte> data)
{
	const std::vector<std::byte> bytes = serialize(dtype, shape, data);
	const std::string tmp = path + ".tmp." + std::to_string(::getpid());
	{
		std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
		if (!out) {
			const int e = errno ? errno : EACCES;
			throw Error(e, path + ": cannot create: " + std::strerror(e));
		}
		out.write(reinterpret_cast<const char *>(bytes.data()),
			  static_cast<std::streamsize>(bytes.size()));
		out.close();
		if (!out) {
			const int e = errno ? errno : EIO;
			std::remove(tmp.c_str());
			throw Error(e, path + ": cannot write: " + std::strerror(e));
		}
	}
	if (std::rename(tmp.c_str(), path.c_str()) != 0) {
		const int e = errno;
		std::remove(tmp.c_str());
		throw Error(e, path + ": cannot rename the written file into place: " +
				       std::strerror(e));
	}
}

std::optional<std::uint32_t> buffer_tensor(const GraphDef &def, std::uint32_t buffer)
{
	if (buffer >= def.buffers.size())
		return std::nullopt;
	std::optional<std::uint32_t> best;
	std::uint64_t best_bytes = 0;
	for (std::uint32_t i = 0; i < def.tensors.size(); i++) {
		const GraphTensor &t = def.tensors[i];
		if (t.buffer != buffer || t.offset != 0)
			continue;
		if (t.name == def.buffers[buffer].name)
			return i;
		const std::uint64_t n = t.bytes().value_or(0);
		if (!best || n > best_bytes) {
			best = i;
			best_bytes = n;
		}
	}
	return best;
}

void load_buffer(const GraphDef &def, std::string_view name, const std::string &path,
		 std::span<std::byte> memory)
{
	target_of(def, name, memory.size());	// a bad name before reading the file
	load_buffer(def, name, read(path), path, memory);
}

void load_buffer(const GraphDef &def, std::string_view name, const Array &a, std::string_view path,
		 std::span<std::byte> memory)
{
	const Target t = target_of(def, name, memory.size());
	const std::string role = buffer_role(def.buffers[t.buffer]);
	if (a.dtype != t.tensor->dtype)
		bad(path, "dtype " + a.descr + " (" + type_name(a.descr[1], a.itemsize) + "), " + role +
				  " wants " + numpy_name(t.tensor->dtype) +
				  (a.dtype ? "" : " (MCP tensors hold float32, int8, uint8 or int32)"));
	if (a.shape != t.shape)
		bad(path, "shape " + shape_text(a.shape) + ", " + role + " wants " + shape_text(t.shape));
	std::memcpy(memory.data(), a.data.data(), a.data.size());
}

void save_buffer(const GraphDef &def, std::string_view name, std::span<const std::byte> memory,
		 const std::string &path)
{
	const Target t = target_of(def, name, memory.size());
	write(path, t.tensor->dtype, t.shape, memory.first(t.bytes));
}

} // namespace mcp::npy

// ---- C API ----

extern "C" int mcp_npy_load(const char *path, struct mcp_npy_info *info, void *buf, size_t cap)
{
	if (!path || !info || info->size < sizeof(*info))
		return mcp::detail::c_api_fail(EINVAL, "mcp_npy_load: path or info is NULL, or "
						       "info->size is too small");
	return mcp::detail::c_api_guard([&] {
		const mcp::npy::Array a = mcp::npy::read(path);
		if (!a.dtype)
			throw mcp::Error(EINVAL, std::string(path) + ": dtype " + a.descr +
							 " is not an MCP dtype (float32, int8, uint8, int32)");
		if (a.shape.size() > MCP_NPY_MAX_RANK)
			throw mcp::Error(EINVAL, std::string(path) + ": rank " +
							 std::to_string(a.shape.size()) + " is over " +
							 std::to_string(MCP_NPY_MAX_RANK));
		const std::uint32_t size = info->size;
		std::memset(info, 0, sizeof(*info));
		info->size = size;
		info->dtype = static_cast<std::uint32_t>(*a.dtype);
		info->rank = static_cast<std::uint32_t>(a.shape.size());
		for (std::size_t i = 0; i < a.shape.size(); i++)
			info->shape[i] = a.shape[i];
		info->bytes = a.data.size();
		std::snprintf(info->descr, sizeof(info->descr), "%s", a.descr.c_str());
		if (!buf)
			return 0;
		if (cap < a.data.size())
			throw mcp::Error(ENOSPC, std::string(path) + ": " + std::to_string(a.data.size()) +
							 " bytes of data, the buffer holds " +
							 std::to_string(cap));
		std::memcpy(buf, a.data.data(), a.data.size());
		return 0;
	});
}

extern "C" int mcp_npy_save(const char *path, uint32_t dtype, const uint64_t *shape, uint32_t rank,
			    const void *data, size_t len)
{
	if (!path || (rank && !shape) || (len && !data))
		return mcp::detail::c_api_fail(EINVAL, "mcp_npy_save: path, shape or data is NULL");
	return mcp::detail::c_api_guard([&] {
		const auto dt = static_cast<mcp::DType>(dtype);
		if (dtype > 255 || !mcp::dtype_size(dt))
			throw mcp::Error(EINVAL, "mcp_npy_save: dtype " + std::to_string(dtype) +
							 " is not an MCP_GRAPH_DTYPE_*");
		mcp::npy::write(path, dt, std::span<const std::uint64_t>(shape, rank),
				std::span<const std::byte>(static_cast<const std::byte *>(data), len));
		return 0;
	});
}

extern "C" int mcp_npy_load_buffer(const struct mcp_graph_def *graph, const char *buffer,
				   const char *path, void *mem, size_t len)
{
	if (!graph || !buffer || !path || (len && !mem))
		return mcp::detail::c_api_fail(EINVAL, "mcp_npy_load_buffer: graph, buffer, path or "
						       "mem is NULL");
	return mcp::detail::c_api_guard([&] {
		mcp::npy::load_buffer(mcp::detail::graph_def_of(graph), buffer, path,
				      std::span<std::byte>(static_cast<std::byte *>(mem), len));
		return 0;
	});
}

extern "C" int mcp_npy_save_buffer(const struct mcp_graph_def *graph, const char *buffer,
				   const void *mem, size_t len, const char *path)
{
	if (!graph || !buffer || !path || (len && !mem))
		return mcp::detail::c_api_fail(EINVAL, "mcp_npy_save_buffer: graph, buffer, path or "
						       "mem is NULL");
	return mcp::detail::c_api_guard([&] {
		mcp::npy::save_buffer(mcp::detail::graph_def_of(graph), buffer,
				      std::span<const std::byte>(static_cast<const std::byte *>(mem), len),
				      path);
		return 0;
	});
}
