// SPDX-License-Identifier: GPL-2.0-only
// NumPy .npy files (mcp::npy, <mcp/npy.h>): round trips of every MCP
// dtype, files written by NumPy itself (format 1.0, 2.0, 3.0, big-endian,
// types MCP has not), bad files (every truncation, bad magic, versions,
// Fortran order, malformed headers, data of the wrong length) refused
// with a message naming the file, graph buffers checked for dtype and
// shape; and `mcpctl graph run --input NAME=FILE.npy --save-outputs DIR
// --no-kernel` on the ONNX test models, whose saved outputs must equal
// ONNX Runtime's (tests/onnx/ort_run.js) within 1e-4 relative.
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <criterion/criterion.h>
#include <nlohmann/json.hpp>
#include <unistd.h>

#include <mcp/mcp.h>
#include <mcp/npy.h>
#include <mcp/npy.hpp>

#include "helpers.hpp"

namespace {

namespace fs = std::filesystem;

bool has(const std::string &s, const std::string &part)
{
	return s.find(part) != std::string::npos;
}

std::string temp_dir()
{
	char tmpl[] = "/tmp/mcp-npy-XXXXXX";
	cr_assert_not_null(mkdtemp(tmpl));
	return tmpl;
}

std::vector<std::byte> bytes_of(const std::string &s)
{
	std::vector<std::byte> b(s.size());
	std::memcpy(b.data(), s.data(), s.size());
	return b;
}

// A hand-made file: version @major, header text @header (padded), @data.
std::vector<std::byte> npy_file(unsigned major, std::string header, const std::string &data)
{
	const std::size_t pre = major == 1 ? 10 : 12;
	header.append((64 - (pre + header.size() + 1) % 64) % 64, ' ');
	header += '\n';
	std::string s = "\x93NUMPY";
	s += static_cast<char>(major);
	s += '\0';
	for (std::size_t i = 0; i < pre - 8; i++)
		s += static_cast<char>((header.size() >> (8 * i)) & 0xff);
	return bytes_of(s + header + data);
}

// The message of parse() refusing @b; fails the test if it accepts.
std::string refusal(const std::vector<std::byte> &b, const char *what = "t.npy")
{
	try {
		mcp::npy::parse(b, what);
	} catch (const mcp::Error &e) {
		cr_expect_eq(e.errnum(), EINVAL, "%s: errno %d", e.what(), e.errnum());
		cr_expect(has(e.what(), std::string(what) + ": "), "does not name the file: %s",
			  e.what());
		return e.what();
	}
	cr_assert_fail("accepted a bad file");
	return {};
}

void write_bytes(const std::string &path, const std::vector<std::byte> &b)
{
	std::ofstream f(path, std::ios::binary);
	f.write(reinterpret_cast<const char *>(b.data()), static_cast<std::streamsize>(b.size()));
	cr_assert(f.good());
}

// Runs Python with NumPy; false (and why) when it cannot.
bool python(const std::string &code, std::string &why)
{
	test::RunResult r = test::run({"/usr/bin/python3", "-c", "import numpy as np\n" + code});
	if (r.exit_code != 0)
		why = "/usr/bin/python3 with numpy failed: " + r.err.substr(0, 300);
	return r.exit_code == 0;
}

// A graph with input "x" (f32 [3 x 4]) and output "y" (the relu of x).
mcp::GraphDef small_graph()
{
	mcp::GraphBuilder b("small");
	const auto bx = b.buffer("x", mcp::graph_buffer_input);
	const auto by = b.buffer("y", mcp::graph_buffer_output);
	const auto x = b.tensor("x", bx, mcp::DType::f32, {3, 4});
	const auto y = b.tensor("y", by, mcp::DType::f32, {3, 4});
	b.node(mcp::Op::relu, mcp::EngineClass::worker, {x}, {y}, {}, "relu");
	return b.build();
}

} // namespace

Test(npy, every_mcp_dtype_round_trips)
{
	const std::vector<std::vector<std::uint64_t>> shapes = {{}, {5}, {2, 3}, {2, 0, 3}, {1, 2, 3, 4}};
	for (mcp::DType dt : {mcp::DType::f32, mcp::DType::i8, mcp::DType::u8, mcp::DType::i32}) {
		for (const auto &shape : shapes) {
			std::uint64_t n = 1;
			for (auto d : shape)
				n *= d;
			std::vector<std::byte> data(n * mcp::dtype_size(dt));
			for (std::size_t i = 0; i < data.size(); i++)
				data[i] = static_cast<std::byte>(i * 37 + 11);
			const std::vector<std::byte> file = mcp::npy::serialize(dt, shape, data);
			cr_expect_eq(file.size() % 64, data.size() % 64, "data does not start on 64 bytes");
			cr_expect_eq(static_cast<int>(file[6]), 1, "not version 1.0");
			const mcp::npy::Array a = mcp::npy::parse(file, "rt.npy");
			cr_expect(a.dtype == dt, "%s: dtype", mcp::npy::numpy_name(dt));
			cr_expect_eq(a.descr, std::string(mcp::npy::descr(dt)));
			cr_expect(a.shape == shape, "%s %s: shape %s", mcp::npy::numpy_name(dt),
				  mcp::npy::shape_text(shape).c_str(), mcp::npy::shape_text(a.shape).c_str());
			cr_expect(a.data == data, "%s: data differ", mcp::npy::numpy_name(dt));
		}
	}
	cr_expect_eq(mcp::npy::shape_text(std::vector<std::uint64_t>{}), "()");
	cr_expect_eq(mcp::npy::shape_text(std::vector<std::uint64_t>{7}), "(7,)");
	cr_expect_eq(mcp::npy::shape_text(std::vector<std::uint64_t>{3, 16}), "(3, 16)");
}

Test(npy, a_long_shape_is_written_as_version_2)
{
	// 25000 dims of 1: a header over 65535 bytes, as NumPy does for 2.0.
	const std::vector<std::uint64_t> shape(25000, 1);
	const std::vector<std::byte> data(4);
	const auto file = mcp::npy::serialize(mcp::DType::f32, shape, data);
	cr_expect_eq(static_cast<int>(file[6]), 2);
	cr_expect_eq(file.size() % 64, 4u);
	const auto a = mcp::npy::parse(file);
	cr_expect_eq(a.shape.size(), shape.size());
}

Test(npy, hand_made_version_1_2_and_3_headers_are_read)
{
	std::string data(24, '\0');
	for (int i = 0; i < 6; i++) {
		const float f = static_cast<float>(i) * 1.5f;
		std::memcpy(data.data() + 4 * i, &f, 4);
	}
	for (unsigned major : {1u, 2u, 3u}) {
		// Double quotes, no trailing comma, keys in another order.
		const auto a = mcp::npy::parse(
			npy_file(major, "{\"shape\": (2,3), 'fortran_order': False, 'descr': '<f4'}", data));
		cr_expect(a.dtype == mcp::DType::f32);
		cr_expect(a.shape == (std::vector<std::uint64_t>{2, 3}));
		float f;
		std::memcpy(&f, a.data.data() + 20, 4);
		cr_expect_float_eq(f, 7.5f, 0.0);
	}
}

Test(npy, big_endian_elements_are_swapped)
{
	const std::string be = std::string("\x00\x00\x00\x01", 4) + std::string("\xff\xff\xff\xfe", 4);
	const auto a = mcp::npy::parse(
		npy_file(1, "{'descr': '>i4', 'fortran_order': False, 'shape': (2,), }", be));
	cr_assert(a.dtype == mcp::DType::i32);
	std::int32_t v[2];
	std::memcpy(v, a.data.data(), 8);
	cr_expect_eq(v[0], 1);
	cr_expect_eq(v[1], -2);
}

Test(npy, bad_files_are_refused_with_the_file_named)
{
	const std::string data(24, '\0');
	const auto good = npy_file(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", data);
	mcp::npy::parse(good);
	// Every truncation, from the empty file to one byte short.
	for (std::size_t n = 0; n < good.size(); n++) {
		const std::vector<std::byte> cut(good.begin(), good.begin() + static_cast<long>(n));
		refusal(cut);
	}
	cr_expect(has(refusal({good.begin(), good.begin() + 40}), "truncated"));
	cr_expect(has(refusal({good.begin(), good.end() - 1}), "the file has 23 (truncated)"));

	auto bad_magic = good;
	bad_magic[1] = std::byte{'X'};
	cr_expect(has(refusal(bad_magic), "not a .npy file"));
	auto v4 = good;
	v4[6] = std::byte{4};
	cr_expect(has(refusal(v4), "format version 4.0 is not supported"));
	auto v11 = good;
	v11[7] = std::byte{1};
	cr_expect(has(refusal(v11), "format version 1.1"));

	const std::string f4 = "{'descr': '<f4', 'fortran_order': False, ";
	const struct {
		std::string header;
		std::size_t data;
		const char *want;
	} cases[] = {
		{"{'descr': '<f4', 'fortran_order': True, 'shape': (2, 3), }", 24, "Fortran order"},
		{f4 + "}", 24, "lacks 'shape'"},
		{f4 + "'shape': (2, 3), 'x': 1}", 24, "unexpected key 'x'"},
		{f4 + "'shape': (2, 3), 'shape': (2, 3), }", 24, "repeats 'shape'"},
		{"{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (2, 3), }", 24, "structured"},
		{"{'descr': '|O', 'fortran_order': False, 'shape': (2, 3), }", 24, "object arrays"},
		{"{'descr': 'f4', 'fortran_order': False, 'shape': (2, 3), }", 24, "not a plain NumPy type"},
		{"{'descr': '<f4', 'fortran_order': 0, 'shape': (2, 3), }", 24, "not True or False"},
		{f4 + "'shape': (2, -3), }", 24, "non-negative integers"},
		{f4 + "'shape': (2, 3), }", 25, "wants 24 bytes of data, the file has 25"},
		{f4 + "'shape': (4294967296, 4294967296, 4), }", 24, "overflows"},
		{f4 + "'shape': (2, 3) ", 24, "truncated header"},
		{"['descr', '<f4']", 24, "'{' expected"},
	};
	for (const auto &c : cases) {
		const std::string m = refusal(npy_file(1, c.header, std::string(c.data, '\0')));
		cr_expect(has(m, c.want), "%s: wanted '%s', got: %s", c.header.c_str(), c.want, m.c_str());
	}
}

Test(npy, mutated_files_are_read_or_refused_never_worse)
{
	// 20,000 copies of a valid file with 1-4 bytes changed (header and
	// data): each parses or throws mcp::Error(EINVAL), nothing else.
	const std::vector<std::uint64_t> shape = {2, 3};
	const auto good = mcp::npy::serialize(mcp::DType::i32, shape, std::vector<std::byte>(24));
	std::uint64_t state = 0x6e7079;
	const auto next = [&] {
		state = state * 6364136223846793005ULL + 1442695040888963407ULL;
		return static_cast<std::size_t>(state >> 33);
	};
	unsigned refused = 0;
	for (int k = 0; k < 20000; k++) {
		auto b = good;
		for (std::size_t n = 1 + next() % 4; n; n--)
			b[next() % b.size()] = static_cast<std::byte>(next());
		try {
			const auto a = mcp::npy::parse(b, "m.npy");
			cr_assert_eq(a.data.size(), a.elements() * a.itemsize);
		} catch (const mcp::Error &e) {
			cr_assert_eq(e.errnum(), EINVAL, "%s", e.what());
			refused++;
		}
	}
	cr_expect_gt(refused, 1000u);
}

Test(npy, files_numpy_writes_are_read, .timeout = 30)
{
	const std::string d = temp_dir();
	std::string why;
	if (!python("d = '" + d + "'\n"
		    "a = np.arange(24, dtype=np.float32).reshape(2, 3, 4) - 5.5\n"
		    "np.save(d + '/f4.npy', a)\n"
		    "for v in [(1, 0), (2, 0), (3, 0)]:\n"
		    "    with open(d + '/v%d.npy' % v[0], 'wb') as f:\n"
		    "        np.lib.format.write_array(f, a, version=v)\n"
		    "np.save(d + '/be.npy', a.astype('>f4'))\n"
		    "np.save(d + '/i1.npy', np.arange(-3, 3, dtype=np.int8))\n"
		    "np.save(d + '/u1.npy', np.arange(250, 256, dtype=np.uint8))\n"
		    "np.save(d + '/i4.npy', np.array([[-70000, 5]], dtype='>i4'))\n"
		    "np.save(d + '/scalar.npy', np.float32(2.5))\n"
		    "np.save(d + '/f8.npy', a.astype(np.float64))\n"
		    "np.save(d + '/i8.npy', a.astype(np.int64))\n"
		    "np.save(d + '/f2.npy', a.astype(np.float16))\n"
		    "np.save(d + '/b1.npy', a > 0)\n"
		    "np.save(d + '/fortran.npy', np.asfortranarray(a))\n",
		    why))
		cr_skip_test("%s", why.c_str());
	for (const char *f : {"f4", "v1", "v2", "v3", "be"}) {
		const auto a = mcp::npy::read(d + "/" + f + ".npy");
		cr_expect(a.dtype == mcp::DType::f32, "%s", f);
		cr_expect(a.shape == (std::vector<std::uint64_t>{2, 3, 4}), "%s: %s", f,
			  mcp::npy::shape_text(a.shape).c_str());
		for (std::size_t i = 0; i < 24; i++) {
			float v;
			std::memcpy(&v, a.data.data() + 4 * i, 4);
			cr_expect_float_eq(v, static_cast<float>(i) - 5.5f, 0.0, "%s[%zu]", f, i);
		}
	}
	cr_expect_eq(static_cast<int>(mcp::npy::read(d + "/v3.npy").descr[0]), '<');
	const auto i1 = mcp::npy::read(d + "/i1.npy");
	cr_expect(i1.dtype == mcp::DType::i8);
	cr_expect_eq(static_cast<std::int8_t>(i1.data[0]), -3);
	const auto u1 = mcp::npy::read(d + "/u1.npy");
	cr_expect(u1.dtype == mcp::DType::u8);
	cr_expect_eq(static_cast<std::uint8_t>(u1.data[5]), 255);
	const auto i4 = mcp::npy::read(d + "/i4.npy");
	cr_expect(i4.dtype == mcp::DType::i32);
	std::int32_t iv;
	std::memcpy(&iv, i4.data.data(), 4);
	cr_expect_eq(iv, -70000);
	const auto sc = mcp::npy::read(d + "/scalar.npy");
	cr_expect(sc.shape.empty());
	cr_expect_eq(sc.data.size(), 4u);
	for (const char *f : {"f8", "i8", "f2", "b1"}) {
		const auto a = mcp::npy::read(d + "/" + f + ".npy");
		cr_expect(!a.dtype, "%s has an MCP dtype", f);
		cr_expect(a.shape == (std::vector<std::uint64_t>{2, 3, 4}), "%s", f);
	}
	try {
		mcp::npy::read(d + "/fortran.npy");
		cr_expect_fail("a Fortran-order file was read");
	} catch (const mcp::Error &e) {
		cr_expect(has(e.what(), "fortran.npy: Fortran order"), "%s", e.what());
	}
	// And NumPy reads what we write.
	mcp::npy::write(d + "/ours.npy", mcp::DType::i32, std::vector<std::uint64_t>{2, 2},
			bytes_of(std::string("\x01\0\0\0\x02\0\0\0\x03\0\0\0\xff\xff\xff\xff", 16)));
	cr_expect(python("a = np.load('" + d + "/ours.npy')\n"
			 "assert a.dtype == np.int32 and a.shape == (2, 2), (a.dtype, a.shape)\n"
			 "assert a.tolist() == [[1, 2], [3, -1]], a.tolist()\n",
			 why),
		  "%s", why.c_str());
	fs::remove_all(d);
}

Test(npy, graph_buffers_check_dtype_and_shape)
{
	const mcp::GraphDef def = small_graph();
	const std::string d = temp_dir();
	std::vector<std::byte> x(def.buffers[*def.find_buffer("x")].length);
	std::vector<float> v(12);
	for (int i = 0; i < 12; i++)
		v[i] = static_cast<float>(i) - 6;
	const std::vector<std::byte> good(reinterpret_cast<const std::byte *>(v.data()),
					  reinterpret_cast<const std::byte *>(v.data() + 12));
	mcp::npy::write(d + "/x.npy", mcp::DType::f32, std::vector<std::uint64_t>{3, 4}, good);
	mcp::npy::load_buffer(def, "x", d + "/x.npy", x);
	cr_expect(std::memcmp(x.data(), good.data(), good.size()) == 0);

	const auto message = [&](const std::string &file, std::string_view buffer, int errnum) {
		try {
			mcp::npy::load_buffer(def, buffer, file, x);
		} catch (const mcp::Error &e) {
			cr_expect_eq(e.errnum(), errnum, "%s", e.what());
			return std::string(e.what());
		}
		cr_assert_fail("%s loaded", file.c_str());
		return std::string();
	};
	mcp::npy::write(d + "/s.npy", mcp::DType::f32, std::vector<std::uint64_t>{4, 3}, good);
	std::string m = message(d + "/s.npy", "x", EINVAL);
	cr_expect(has(m, "s.npy: shape (4, 3), input 'x' wants (3, 4)"), "%s", m.c_str());
	mcp::npy::write(d + "/i.npy", mcp::DType::i32, std::vector<std::uint64_t>{3, 4}, good);
	m = message(d + "/i.npy", "x", EINVAL);
	cr_expect(has(m, "i.npy: dtype <i4 (int32), input 'x' wants float32"), "%s", m.c_str());
	write_bytes(d + "/f8.npy",
		    npy_file(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (3, 4), }",
			     std::string(96, '\0')));
	m = message(d + "/f8.npy", "x", EINVAL);
	cr_expect(has(m, "f8.npy: dtype <f8 (float64), input 'x' wants float32"), "%s", m.c_str());
	m = message(d + "/x.npy", "nope", ENOENT);
	cr_expect(has(m, "no buffer named 'nope'"), "%s", m.c_str());
	m = message(d + "/absent.npy", "x", ENOENT);
	cr_expect(has(m, "absent.npy: cannot open"), "%s", m.c_str());

	// save_buffer writes the tensor's dtype and shape (not the padded length).
	mcp::npy::save_buffer(def, "x", x, d + "/back.npy");
	const auto back = mcp::npy::read(d + "/back.npy");
	cr_expect(back.shape == (std::vector<std::uint64_t>{3, 4}));
	cr_expect(back.data == good);
	fs::remove_all(d);
}

Test(npy, c_api_loads_and_saves)
{
	mcp_graph_def *g = nullptr;
	cr_assert_eq(mcp_graph_new("c", &g), 0);
	const std::string d = temp_dir();
	const std::string p = d + "/a.npy";
	const std::uint8_t data[6] = {1, 2, 3, 250, 251, 252};
	const std::uint64_t shape[2] = {2, 3};
	cr_assert_eq(mcp_npy_save(p.c_str(), MCP_GRAPH_DTYPE_U8, shape, 2, data, 6), 0);
	cr_expect_eq(mcp_npy_save(p.c_str(), MCP_GRAPH_DTYPE_U8, shape, 2, data, 5), -EINVAL);
	cr_expect(has(mcp_strerror_last(), "is 6 bytes, the data 5"), "%s", mcp_strerror_last());
	cr_expect_eq(mcp_npy_save(p.c_str(), 99, shape, 2, data, 6), -EINVAL);

	mcp_npy_info info{};
	info.size = sizeof(info);
	std::uint8_t got[6] = {};
	cr_assert_eq(mcp_npy_load(p.c_str(), &info, nullptr, 0), 0);
	cr_expect_eq(info.dtype, static_cast<std::uint32_t>(MCP_GRAPH_DTYPE_U8));
	cr_expect_eq(info.rank, 2u);
	cr_expect_eq(info.shape[1], 3u);
	cr_expect_eq(info.bytes, 6u);
	cr_expect_str_eq(info.descr, "|u1");
	cr_expect_eq(mcp_npy_load(p.c_str(), &info, got, 5), -ENOSPC);
	cr_assert_eq(mcp_npy_load(p.c_str(), &info, got, sizeof(got)), 0);
	cr_expect(std::memcmp(got, data, 6) == 0);
	cr_expect_eq(mcp_npy_load((d + "/none.npy").c_str(), &info, nullptr, 0), -ENOENT);
	info.size = 4;
	cr_expect_eq(mcp_npy_load(p.c_str(), &info, nullptr, 0), -EINVAL);

	const mcp::GraphDef def = small_graph();
	std::string json = def.to_json();
	mcp_graph_free(g);
	cr_assert_eq(mcp_graph_from_json(json.c_str(), json.size(), &g, nullptr), 0);
	float x[16] = {};
	cr_expect_eq(mcp_npy_load_buffer(g, "x", p.c_str(), x, sizeof(x)), -EINVAL);
	cr_expect(has(mcp_strerror_last(), "a.npy: dtype |u1 (uint8), input 'x' wants float32"), "%s",
		  mcp_strerror_last());
	cr_expect_eq(mcp_npy_load_buffer(g, "x", p.c_str(), x, 8), -EINVAL);
	cr_expect(has(mcp_strerror_last(), "memory is 8 bytes"), "%s", mcp_strerror_last());
	for (int i = 0; i < 12; i++)
		x[i] = static_cast<float>(i);
	const std::string y = d + "/y.npy";
	cr_assert_eq(mcp_npy_save_buffer(g, "x", x, sizeof(x), y.c_str()), 0, "%s", mcp_strerror_last());
	float x2[16] = {};
	cr_assert_eq(mcp_npy_load_buffer(g, "x", y.c_str(), x2, sizeof(x2)), 0, "%s", mcp_strerror_last());
	cr_expect(std::memcmp(x, x2, sizeof(x)) == 0);
	cr_expect_eq(mcp_npy_load_buffer(g, "zz", y.c_str(), x2, sizeof(x2)), -ENOENT);
	mcp_graph_free(g);
	fs::remove_all(d);
}

// ---- mcpctl graph run with .npy inputs and saved outputs ----

namespace {

// Runs @model (an .onnx, or the .mgph `graph import` makes of it) with
// `mcpctl graph run --no-kernel --input x=INPUT --save-outputs`, runs ORT
// on the .onnx and the same file, and compares every output.
void run_matches_ort(const std::string &model, const std::string &input, bool via_mgph)
{
	std::string why;
	if (!test::have_ort(why))
		cr_skip_test("%s", why.c_str());
	const std::string d = temp_dir();
	const std::string onnx = std::string(MCP_ONNX_DIR) + "/" + model;
	const std::string x = std::string(MCP_ONNX_DIR) + "/" + input;
	std::string graph = onnx;
	if (via_mgph) {
		graph = d + "/model.mgph";
		const mcp::npy::Array xa = mcp::npy::read(x);
		std::string dims;
		for (auto v : xa.shape)
			dims += (dims.empty() ? "" : "x") + std::to_string(v);
		test::RunResult r = test::run({MCPCTL_PATH, "graph", "import", onnx, "-o", graph,
					       "--input", "x=" + dims});
		cr_assert_eq(r.exit_code, 0, "graph import: %s", r.err.c_str());
	}
	test::RunResult r = test::run({MCPCTL_PATH, "--json", "graph", "run", graph, "--no-kernel",
				       "--iterations", "2", "--input", "x=" + x, "--save-outputs",
				       d + "/mcp"});
	cr_assert_eq(r.exit_code, 0, "graph run: %s", r.err.c_str());
	const nlohmann::json j = nlohmann::json::parse(r.out);
	cr_expect_eq(j["no_kernel"].get<bool>(), true);
	r = test::run({"/usr/bin/env", "node", MCP_SOURCE_DIR "/tests/onnx/ort_run.js", onnx, d + "/ort",
		       "x=" + x},
		      {"MCP_ORT_NODE_DIR=" MCP_ORT_NODE_DIR});
	cr_assert_eq(r.exit_code, 0, "ort_run.js: %s", r.err.c_str());

	std::size_t compared = 0;
	double worst = 0;
	for (const auto &e : fs::directory_iterator(d + "/ort")) {
		const std::string name = e.path().stem().string();
		const mcp::npy::Array ref = mcp::npy::read(e.path().string());
		const mcp::npy::Array got = mcp::npy::read(d + "/mcp/" + name + ".npy");
		cr_assert(got.dtype == mcp::DType::f32 && ref.dtype == mcp::DType::f32, "%s", name.c_str());
		cr_assert(got.shape == ref.shape, "%s: mcp %s, ort %s", name.c_str(),
			  mcp::npy::shape_text(got.shape).c_str(), mcp::npy::shape_text(ref.shape).c_str());
		bool listed = false;
		for (const auto &o : j["outputs"])
			if (o["name"] == name) {
				listed = true;
				cr_expect_eq(o["dtype"].get<std::string>(), "float32");
				cr_expect(o["shape"].get<std::vector<std::uint64_t>>() == ref.shape);
				cr_expect_eq(o["file"].get<std::string>(), d + "/mcp/" + name + ".npy");
			}
		cr_expect(listed, "output %s is not in the JSON: %s", name.c_str(), j["outputs"].dump().c_str());
		for (std::size_t i = 0; i < ref.elements(); i++) {
			float a, b;
			std::memcpy(&a, got.data.data() + 4 * i, 4);
			std::memcpy(&b, ref.data.data() + 4 * i, 4);
			const double err = std::fabs(double(a) - b) / std::max(1.0, std::fabs(double(b)));
			worst = std::max(worst, err);
			cr_assert_leq(err, 1e-4, "%s %s[%zu]: mcp %.7g, ort %.7g", model.c_str(),
				      name.c_str(), i, double(a), double(b));
		}
		compared++;
	}
	cr_expect_eq(compared, j["outputs"].size());
	cr_expect_gt(compared, 0u);
	cr_log_info("%s%s: %zu outputs saved by mcpctl, worst relative error against ORT %.3g",
		    model.c_str(), via_mgph ? " (.mgph)" : "", compared, worst);
	fs::remove_all(d);
}

} // namespace

Test(npy_run, mlp_onnx_outputs_equal_onnx_runtime, .timeout = 60)
{
	// x_mlp.npy is 3 x 16: its shape fixes the dynamic batch "N".
	run_matches_ort("mlp.onnx", "x_mlp.npy", false);
}

Test(npy_run, bert14_mgph_outputs_equal_onnx_runtime, .timeout = 60)
{
	run_matches_ort("bert14.onnx", "x_bert.npy", true);
}

Test(npy_run, reshaped_output_is_saved_with_its_own_shape, .timeout = 60)
{
	// consts.onnx's output y (3 x 2) is a Reshape (a view) of a 2 x 3 tensor.
	run_matches_ort("consts.onnx", "x_small.npy", false);
}

Test(npy_run, a_bad_input_file_fails_naming_it_and_writes_nothing, .timeout = 30)
{
	const std::string d = temp_dir();
	const std::string mgph = d + "/mlp.mgph";
	test::RunResult r = test::run({MCPCTL_PATH, "graph", "import",
				       std::string(MCP_ONNX_DIR) + "/mlp.onnx", "-o", mgph, "--input",
				       "x=3x16"});
	cr_assert_eq(r.exit_code, 0, "%s", r.err.c_str());
	const std::vector<float> v(2 * 16, 1.0f);
	const std::span<const std::byte> vb(reinterpret_cast<const std::byte *>(v.data()), v.size() * 4);
	mcp::npy::write(d + "/short.npy", mcp::DType::f32, std::vector<std::uint64_t>{2, 16}, vb);
	mcp::npy::write(d + "/int.npy", mcp::DType::i32, std::vector<std::uint64_t>{2, 16}, vb);
	const auto fails = [&](const std::vector<std::string> &extra, const std::string &want, int code) {
		std::vector<std::string> argv = {MCPCTL_PATH, "graph", "run", mgph, "--no-kernel",
						 "--save-outputs", d + "/out"};
		argv.insert(argv.end(), extra.begin(), extra.end());
		test::RunResult rr = test::run(argv);
		cr_expect_eq(rr.exit_code, code, "%s: exit %d", want.c_str(), rr.exit_code);
		cr_expect(has(rr.err, want), "wanted '%s', got: %s", want.c_str(), rr.err.c_str());
		cr_expect(!fs::exists(d + "/out"), "%s: something was written", want.c_str());
	};
	fails({"--input", "x=" + d + "/short.npy"},
	      d + "/short.npy: shape (2, 16), input 'x' wants (3, 16)", 1);
	fails({"--input", "x=" + d + "/int.npy"}, d + "/int.npy: dtype <i4 (int32), input 'x' wants float32",
	      1);
	fails({"--input", "x=" + d + "/absent.npy"}, d + "/absent.npy: cannot open", 1);
	fails({"--input", "w=" + d + "/short.npy"}, "the graph has no buffer named 'w' (its inputs: x)", 1);
	fails({"--input", "x=3x16"}, "DIMS fix an ONNX model's inputs at import", 2);
	// The .onnx itself, where the file's shape sets the dynamic batch: 2 rows run.
	r = test::run({MCPCTL_PATH, "graph", "run", std::string(MCP_ONNX_DIR) + "/mlp.onnx",
		       "--no-kernel", "--input", "x=" + d + "/short.npy", "--save-outputs", d + "/out"});
	cr_expect_eq(r.exit_code, 0, "%s", r.err.c_str());
	cr_expect(has(r.out, "(2, 10)"), "%s", r.out.c_str());
	cr_expect(mcp::npy::read(d + "/out/y.npy").shape == (std::vector<std::uint64_t>{2, 10}));
	fs::remove_all(d);
}
