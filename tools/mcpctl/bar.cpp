// SPDX-License-Identifier: GPL-2.0-only
// mcpctl bar read|write|dump: registers of a device BAR through an mcp
// mapping (uncached), like setpci or busybox devmem but bounds-checked and
// revocation-safe.  Needs CAP_SYS_RAWIO.
#include <cerrno>
#include <ostream>

#include <fmt/format.h>
#include <unistd.h>

#include "commands.hpp"
#include "output.hpp"

namespace mcpctl {

namespace {

struct BarArgs {
	std::string dev;
	std::string bar;
	std::string offset;
	std::string value;
	std::string length;
	unsigned width = 32;
	CLI::App *read = nullptr;
	CLI::App *write = nullptr;
	CLI::App *dump = nullptr;
} args;

// What the command line asked for, parsed.
struct Request {
	DevArg dev;
	unsigned bar = 0;
	std::uint64_t offset = 0;
	std::uint64_t length = 0; // bytes to access
	std::uint64_t value = 0;
};

// The mapping of the pages of [@offset, @offset + @length) of the BAR.
struct Window {
	mcp::BarMapping map;
	std::uint64_t base = 0; // BAR offset of map's first byte
};

Window map_window(const mcp::Accelerator &acc, unsigned bar, std::uint64_t offset,
		  std::uint64_t length)
{
	const std::uint64_t page = static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE));
	mcp::BarRegion r = acc.bar_region(bar);
	const std::string name = acc.info().address.to_string();

	if (offset >= r.len || length > r.len - offset)
		throw mcp::Error(EINVAL, fmt::format("offset {:#x} (+{} bytes) is outside BAR {} of {} ({:#x} bytes)",
						     offset, length, bar, name, r.len));
	std::uint64_t first = offset / page * page;
	std::uint64_t end = (offset + length + page - 1) / page * page;
	if (end > r.len)
		end = r.len;
	return {acc.map_bar(bar, mcp::Caching::uncached, first, end - first), first};
}

Request parse_request()
{
	Request q;

	q.dev = parse_dev_arg(args.dev);
	q.bar = static_cast<unsigned>(parse_number(args.bar, "BAR number", 5));
	if (args.dump->parsed()) {
		q.offset = args.offset.empty() ? 0 : parse_number(args.offset, "offset");
		q.length = args.length.empty() ? 256 : parse_number(args.length, "length");
		if (q.offset % 4 || q.length % 4 || q.length == 0)
			throw mcp::Error(EINVAL, "dump offset and length must be non-zero multiples of 4");
		return q;
	}
	if (args.width != 32 && args.width != 64)
		throw mcp::Error(EINVAL, "--width must be 32 or 64");
	q.offset = parse_number(args.offset, "offset");
	q.length = args.width / 8;
	if (q.offset % q.length)
		throw mcp::Error(EINVAL, fmt::format("offset {:#x} is not aligned to the {}-bit access width",
						     q.offset, args.width));
	if (args.write->parsed())
		q.value = parse_number(args.value, "value",
				       args.width == 32 ? UINT32_MAX : UINT64_MAX);
	return q;
}

std::string value_text(std::uint64_t v, unsigned width)
{
	return width == 32 ? fmt::format("{:#010x}", v) : fmt::format("{:#018x}", v);
}

} // namespace

std::string format_bar_dump(std::uint64_t offset, const std::vector<std::uint32_t> &words)
{
	std::string s;

	for (std::size_t i = 0; i < words.size(); i++) {
		if (i % 4 == 0)
			s += fmt::format("{:08x}:", offset + i * 4);
		s += fmt::format(" {:08x}", words[i]);
		if (i % 4 == 3 || i + 1 == words.size())
			s += '\n';
	}
	return s;
}

static int run_bar(const GlobalOptions &opts, std::ostream &out, std::ostream &err)
{
	Request q;

	try {
		q = parse_request();
	} catch (const mcp::Error &e) {
		print_error(err, e.what());
		return exit_usage;
	}
	try {
		mcp::Accelerator acc = open_dev_arg(mcp::Device::open(), q.dev);
		const std::string name = acc.info().address.to_string();
		Window w = map_window(acc, q.bar, q.offset, q.length);
		const std::size_t at = q.offset - w.base;
		nlohmann::ordered_json doc = {
			{"device", name}, {"bar", q.bar}, {"offset", q.offset}};

		if (args.dump->parsed()) {
			std::vector<std::uint32_t> words;

			for (std::uint64_t i = 0; i < q.length; i += 4)
				words.push_back(w.map.read32(at + i));
			doc["length"] = q.length;
			doc["words"] = words;
			if (opts.json)
				print_json(out, doc);
			else
				out << format_bar_dump(q.offset, words);
		} else {
			std::uint64_t v;

			if (args.write->parsed()) {
				if (args.width == 32)
					w.map.write32(at, static_cast<std::uint32_t>(q.value));
				else
					w.map.write64(at, q.value);
				v = q.value;
			} else {
				v = args.width == 32 ? w.map.read32(at) : w.map.read64(at);
			}
			doc["width"] = args.width;
			doc["value"] = v;
			if (opts.json)
				print_json(out, doc);
			else if (args.write->parsed())
				out << fmt::format("wrote {} to BAR {} offset {:#x} of {}\n",
						   value_text(v, args.width), q.bar, q.offset, name);
			else
				out << value_text(v, args.width) << '\n';
		}
	} catch (const mcp::Error &e) {
		print_error(err, e.what());
		return exit_failure;
	}
	out.flush();
	return exit_ok;
}

Command add_bar_command(CLI::App &app)
{
	CLI::App *sub = app.add_subcommand("bar", "Read, write or dump registers of a device BAR (needs CAP_SYS_RAWIO)");

	sub->require_subcommand(1);
	args.read = sub->add_subcommand("read", "Read one register");
	args.write = sub->add_subcommand("write", "Write one register");
	args.dump = sub->add_subcommand("dump", "Dump a range as 32-bit words (default 256 bytes from 0)");
	for (CLI::App *c : {args.read, args.write, args.dump}) {
		c->add_option("DEV", args.dev, "Device index or PCI address (dddd:bb:ss.f)")->required();
		c->add_option("BAR", args.bar, "BAR number, 0 to 5")->required();
	}
	for (CLI::App *c : {args.read, args.write}) {
		c->add_option("OFFSET", args.offset, "Byte offset in the BAR (decimal or 0x hex)")->required();
		c->add_option("--width", args.width, "Access width in bits: 32 (default) or 64");
	}
	args.write->add_option("VALUE", args.value, "Value to write (decimal or 0x hex)")->required();
	args.dump->add_option("OFFSET", args.offset, "Byte offset, a multiple of 4 (default 0)");
	args.dump->add_option("LENGTH", args.length, "Bytes, a multiple of 4 (default 256)");
	sub->footer("With --json: read and write print {\"device\",\"bar\",\"offset\",\"width\",\"value\"}, "
		    "dump prints {\"device\",\"bar\",\"offset\",\"length\",\"words\":[...]} "
		    "(see Documentation/mcpctl.rst).");
	return {sub, run_bar};
}

} // namespace mcpctl
