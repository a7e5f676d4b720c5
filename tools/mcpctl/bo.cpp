// SPDX-License-Identifier: GPL-2.0-only
// mcpctl bo create|pin DEV: makes a buffer object on a context (a device
// or "host"), prints what the kernel says about it and where its pages
// really are (move_pages(2)).  A buffer lives only as long as its fd, so
// these are checks of allocation and pinning, not a buffer manager.
#include <cerrno>
#include <cstring>
#include <ostream>

#include <fmt/format.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "commands.hpp"
#include "output.hpp"

namespace mcpctl {

namespace {

struct BoArgs {
	std::string dev;
	std::string size = "4M";
	int node = -1;
	bool hugepage = false;
	bool coherent = false;
	bool read_only = false;
	CLI::App *create = nullptr;
	CLI::App *pin = nullptr;
} args;

std::vector<std::string> flag_names(const mcp::BufferInfo &i)
{
	std::vector<std::string> names;

	if (i.kind == mcp::BufferKind::user) {
		names.push_back(i.flags & MCP_BUFFER_USER_WRITE ? "writable" : "read-only");
		return names;
	}
	if (i.flags & MCP_BUFFER_COHERENT)
		names.push_back("coherent");
	if (i.flags & MCP_BUFFER_HUGEPAGE)
		names.push_back("hugepage");
	if (i.flags & MCP_BUFFER_NODE)
		names.push_back("node");
	return names;
}

std::string per_node_text(const std::vector<std::uint64_t> &per_node)
{
	std::string s;

	for (std::size_t n = 0; n < per_node.size(); n++)
		s += fmt::format("{}node{} {}", s.empty() ? "" : " ", n, per_node[n]);
	return s;
}

// An anonymous, page-aligned mapping for `bo pin`.
struct AnonMapping {
	explicit AnonMapping(std::size_t len) : size(len)
	{
		void *p = ::mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (p == MAP_FAILED) {
			int err = errno;

			throw mcp::Error(err, "cannot map " + bytes_text(len) + " of memory to pin: " +
						      std::strerror(err));
		}
		base = static_cast<std::byte *>(p);
		std::memset(base, 0, len); // populate: pinning faults nothing in then
	}
	AnonMapping(const AnonMapping &) = delete;
	AnonMapping &operator=(const AnonMapping &) = delete;
	~AnonMapping() { ::munmap(base, size); }

	std::byte *base = nullptr;
	std::size_t size = 0;
};

} // namespace

PagePlacement query_placement(std::span<const std::byte> bytes, unsigned max_pages)
{
	const auto page = static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE));
	const std::uint64_t total = (bytes.size() + page - 1) / page;
	const std::uint64_t n = std::min<std::uint64_t>(total, max_pages);
	std::vector<void *> pages(n);
	std::vector<int> status(n, -1);
	PagePlacement p;

	for (std::uint64_t i = 0; i < n; i++)
		pages[i] = const_cast<std::byte *>(bytes.data()) + (n ? i * total / n : 0) * page;
	p.pages = n;
	if (::syscall(SYS_move_pages, 0, static_cast<unsigned long>(n), pages.data(), nullptr,
		      status.data(), 0) != 0) {
		p.error = fmt::format("move_pages(2) failed: {}", std::strerror(errno));
		return p;
	}
	int first_error = 0;
	for (int s : status) {
		if (s < 0) {
			first_error = first_error ? first_error : -s;
			continue;
		}
		if (static_cast<std::size_t>(s) >= p.pages_per_node.size())
			p.pages_per_node.resize(static_cast<std::size_t>(s) + 1);
		p.pages_per_node[static_cast<std::size_t>(s)]++;
	}
	p.verified = !p.pages_per_node.empty();
	if (!p.verified)
		p.error = first_error == EFAULT
				  ? "move_pages(2) cannot see these pages (a PFN mapping of kernel memory)"
				  : fmt::format("move_pages(2) saw no resident page: {}",
						std::strerror(first_error ? first_error : ENOENT));
	return p;
}

std::string format_bo_text(const BoReport &r)
{
	const mcp::BufferInfo &i = r.info;
	std::vector<std::string> flags = flag_names(i);
	std::string s = fmt::format("buffer {} on {}: {} {}\n", i.handle, r.context, bytes_text(i.length),
				    mcp::to_string(i.kind));

	s += fmt::format("  flags:       {}\n", flags.empty() ? std::string("-") : fmt::format("{}", fmt::join(flags, ",")));
	s += fmt::format("  node:        {}{}\n", i.node < 0 ? std::string("mixed/unknown") : std::to_string(i.node),
			 r.node_asked ? fmt::format(" (asked {})", *r.node_asked) : std::string());
	s += fmt::format("  mmap offset: {}\n", i.mmap_offset ? fmt::format("{:#x}", *i.mmap_offset) : std::string("-"));
	s += fmt::format("  jobs:        {}\n", i.jobs);
	if (r.placement.verified)
		s += fmt::format("  pages:       {} of {} sampled: {}\n",
				 [&] {
					 std::uint64_t sum = 0;
					 for (std::uint64_t c : r.placement.pages_per_node)
						 sum += c;
					 return sum;
				 }(),
				 r.placement.pages, per_node_text(r.placement.pages_per_node));
	else
		s += fmt::format("  pages:       not verified: {}\n", r.placement.error);
	return s;
}

nlohmann::ordered_json bo_json(const BoReport &r)
{
	const mcp::BufferInfo &i = r.info;
	nlohmann::ordered_json placement = {{"verified", r.placement.verified},
					    {"pages", r.placement.pages},
					    {"pages_per_node", r.placement.pages_per_node}};

	placement["error"] = r.placement.verified ? nlohmann::ordered_json() : nlohmann::ordered_json(r.placement.error);
	nlohmann::ordered_json j = {{"context", r.context},
				    {"handle", i.handle},
				    {"kind", mcp::to_string(i.kind)},
				    {"length", i.length},
				    {"flags", flag_names(i)},
				    {"node", i.node}};
	j["node_asked"] = r.node_asked ? nlohmann::ordered_json(*r.node_asked) : nlohmann::ordered_json();
	j["mmap_offset"] = i.mmap_offset ? nlohmann::ordered_json(*i.mmap_offset) : nlohmann::ordered_json();
	j["jobs"] = i.jobs;
	j["placement"] = placement;
	return j;
}

static int run_bo(const GlobalOptions &opts, std::ostream &out, std::ostream &err)
{
	ContextArg ctx;
	std::uint64_t size = 0;

	try {
		ctx = parse_context_arg(args.dev);
		size = parse_size(args.size);
		if (size == 0)
			throw mcp::Error(EINVAL, "--size must be at least 1 byte");
		if (args.node < -1)
			throw mcp::Error(EINVAL, "--node must be a node id ('mcpctl info' lists them)");
	} catch (const mcp::Error &e) {
		print_error(err, e.what());
		return exit_usage;
	}
	try {
		OpenContext c = open_context(ctx);
		BoReport r;

		r.context = c.dma.name();
		if (args.create->parsed()) {
			mcp::BufferOptions o;

			if (args.node >= 0)
				o.node = args.node;
			o.hugepage = args.hugepage;
			o.coherent = args.coherent;
			r.node_asked = o.node;
			mcp::Buffer b = mcp::Buffer::create(c.dma, size, o);
			std::span<std::byte> mem = b.data();

			std::memset(mem.data(), 0xa5, mem.size()); // fault in every page
			r.info = b.info();
			r.placement = query_placement(mem);
		} else {
			const auto page = static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE));
			AnonMapping m((size + page - 1) / page * page);
			mcp::Buffer b = mcp::Buffer::from_user(c.dma, {m.base, m.size}, !args.read_only);

			r.info = b.info();
			r.placement = query_placement({m.base, m.size});
		}
		if (opts.json)
			print_json(out, bo_json(r));
		else
			out << format_bo_text(r);
	} catch (const mcp::Error &e) {
		print_error(err, e.what());
		return exit_failure;
	}
	out.flush();
	return exit_ok;
}

Command add_bo_command(CLI::App &app)
{
	CLI::App *sub = app.add_subcommand("bo", "Make a buffer object on a context and show where it is (it dies with the command)");

	sub->require_subcommand(1);
	args.create = sub->add_subcommand("create", "Allocate a kernel buffer, map and touch it, verify its node");
	args.pin = sub->add_subcommand("pin", "Pin anonymous user memory as a buffer (charged to RLIMIT_MEMLOCK)");
	for (CLI::App *c : {args.create, args.pin}) {
		c->add_option("DEV", args.dev, "Device index, PCI address (dddd:bb:ss.f) or 'host' (/dev/mcp)")
			->required();
		c->add_option("--size", args.size, "Bytes, K/M/G suffixes (default 4M)");
	}
	args.create->add_option("--node", args.node, "NUMA node (default: the device's, the caller's on host)");
	args.create->add_flag("--hugepage", args.hugepage, "2 MiB pages (the size rounds up to 2 MiB)");
	args.create->add_flag("--coherent", args.coherent, "Coherent DMA memory (default streaming)");
	args.pin->add_flag("--read-only", args.read_only, "Pin for reading only (cannot be a DMA destination)");
	sub->footer("With --json: {\"context\",\"handle\",\"kind\",\"length\",\"flags\",\"node\",\"node_asked\","
		    "\"mmap_offset\",\"jobs\",\"placement\":{\"verified\",\"pages\",\"pages_per_node\",\"error\"}} "
		    "(see Documentation/mcpctl.rst).");
	return {sub, run_bo};
}

} // namespace mcpctl
