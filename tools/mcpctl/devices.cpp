// SPDX-License-Identifier: GPL-2.0-only
// mcpctl devices: the PCI functions bound to mcp.ko as a table like lspci's,
// with NUMA node and PCIe link health; also the DEV argument and link
// formatting the other device commands (dev, bar, irq) share.
#include <cerrno>
#include <ostream>

#include <fmt/format.h>

#include "commands.hpp"
#include "output.hpp"

namespace mcpctl {

DevArg parse_dev_arg(std::string_view text)
{
	DevArg a;

	if (text.find(':') != std::string_view::npos) {
		a.address = mcp::PciAddress::parse(text);
		if (!a.address)
			throw mcp::Error(EINVAL, "'" + std::string(text) +
							 "' is not a PCI address: use dddd:bb:ss.f or bb:ss.f (as lspci prints)");
		return a;
	}
	a.index = static_cast<unsigned>(parse_number(text, "device index", UINT32_MAX));
	return a;
}

mcp::Accelerator open_dev_arg(const mcp::Device &dev, const DevArg &arg)
{
	return arg.address ? dev.open_accelerator(*arg.address) : dev.open_accelerator(*arg.index);
}

std::uint64_t parse_number(std::string_view text, std::string_view what, std::uint64_t max)
{
	const std::string t(text);
	std::uint64_t v = 0;
	unsigned base = 10;
	std::size_t i = 0;

	if (text.starts_with("0x") || text.starts_with("0X")) {
		base = 16;
		i = 2;
	}
	if (i == text.size())
		throw mcp::Error(EINVAL, "'" + t + "' is not a valid " + std::string(what) +
						 ": use a decimal or 0x-prefixed hex number");
	for (; i < text.size(); i++) {
		char c = text[i];
		unsigned d;

		if (c >= '0' && c <= '9')
			d = static_cast<unsigned>(c - '0');
		else if (base == 16 && c >= 'a' && c <= 'f')
			d = static_cast<unsigned>(c - 'a' + 10);
		else if (base == 16 && c >= 'A' && c <= 'F')
			d = static_cast<unsigned>(c - 'A' + 10);
		else
			throw mcp::Error(EINVAL, "'" + t + "' is not a valid " + std::string(what) +
							 ": use a decimal or 0x-prefixed hex number");
		if (d > max || v > (max - d) / base)
			throw mcp::Error(EINVAL, "'" + t + "' is too large for a " + std::string(what) +
							 (max < 4096 ? fmt::format(" (at most {})", max)
										 : fmt::format(" (at most {:#x})", max)));
		v = v * base + d;
	}
	return v;
}

namespace {

std::string speed_text(std::uint32_t mts)
{
	unsigned gen = mcp::pcie_generation(mts);

	if (gen)
		return fmt::format("Gen{}", gen);
	if (mts)
		return fmt::format("{}.{} GT/s", mts / 1000, mts % 1000 / 100);
	return "Gen?";
}

std::string width_text(std::uint32_t width)
{
	return width ? fmt::format("x{}", width) : std::string("x?");
}

std::string hex4(std::uint16_t v)
{
	return fmt::format("{:04x}", v);
}

} // namespace

std::string format_link(const mcp::PcieLink &l)
{
	if (!l.pcie)
		return "n/a (PCI)";
	std::string s = fmt::format("{} {} (cap {} {})", speed_text(l.speed), width_text(l.width),
				    speed_text(l.speed_cap), width_text(l.width_cap));
	if (l.degraded())
		s += " DEGRADED";
	return s;
}

nlohmann::ordered_json link_json(const mcp::PcieLink &l)
{
	return {
		{"pcie", l.pcie},
		{"speed_mts", l.speed},
		{"speed_cap_mts", l.speed_cap},
		{"width", l.width},
		{"width_cap", l.width_cap},
		{"speed_degraded", l.speed_degraded},
		{"width_degraded", l.width_degraded},
		{"degraded", l.degraded()},
		{"text", format_link(l)},
	};
}

std::string format_devices_table(const std::vector<mcp::AcceleratorInfo> &devices)
{
	std::string s = fmt::format("{:<4} {:<12}  {:<9}  {:<5} {:>4}  {:<8} {}\n", "IDX", "ADDRESS",
				    "ID", "CLASS", "NODE", "BACKEND", "LINK");

	for (const mcp::AcceleratorInfo &d : devices)
		s += fmt::format("{:<4} {:<12}  {}:{}  {:04x}  {:>4}  {:<8} {}\n", d.index,
				 d.address.to_string(), hex4(d.vendor), hex4(d.device),
				 d.class_code >> 8, d.numa_node, d.backend, format_link(d.link));
	return s;
}

nlohmann::ordered_json accelerator_json(const mcp::AcceleratorInfo &d)
{
	nlohmann::ordered_json bars = nlohmann::ordered_json::array();

	for (const mcp::BarInfo &b : d.bars) {
		if (!b.present())
			continue;
		bars.push_back({
			{"index", b.index},
			{"start", b.start},
			{"len", b.len},
			{"memory", b.memory()},
			{"64bit", b.is_64bit()},
			{"prefetchable", b.prefetchable()},
			{"mappable", b.mappable()},
			{"wc_ok", b.wc_ok()},
		});
	}
	return {
		{"index", d.index},
		{"address", d.address.to_string()},
		{"vendor", hex4(d.vendor)},
		{"device", hex4(d.device)},
		{"subsystem_vendor", hex4(d.subsystem_vendor)},
		{"subsystem_device", hex4(d.subsystem_device)},
		{"class", fmt::format("{:06x}", d.class_code)},
		{"revision", d.revision},
		{"numa_node", d.numa_node},
		{"backend", d.backend},
		{"generic", d.generic},
		{"irq_type", mcp::to_string(d.irq_type)},
		{"irq_count", d.irq_count},
		{"dma_mask", fmt::format("{:#x}", d.dma_mask)},
		{"link", link_json(d.link)},
		{"wc_test", mcp::to_string(d.wc_test)},
		{"open_count", d.open_count},
		{"bars", std::move(bars)},
	};
}

static int run_devices(const GlobalOptions &opts, std::ostream &out, std::ostream &err)
{
	std::vector<mcp::AcceleratorInfo> devices;

	try {
		devices = mcp::Device::open().accelerators();
	} catch (const mcp::Error &e) {
		print_error(err, e.what());
		return exit_failure;
	}
	if (opts.json) {
		nlohmann::ordered_json doc = nlohmann::ordered_json::array();
		for (const mcp::AcceleratorInfo &d : devices)
			doc.push_back(accelerator_json(d));
		print_json(out, doc);
	} else {
		out << format_devices_table(devices);
	}
	out.flush();
	return exit_ok;
}

Command add_devices_command(CLI::App &app)
{
	CLI::App *sub = app.add_subcommand(
		"devices", "List the PCI devices bound to mcp (like lspci) with NUMA node and PCIe link health");

	sub->footer("NODE -1: the platform does not say.  LINK: current speed and width, the "
		    "device's capability, DEGRADED when trained below what both ends can do.  "
		    "With --json, prints an array of objects: {\"index\",\"address\",\"vendor\","
		    "\"device\",...,\"numa_node\",\"backend\",\"link\":{...},\"bars\":[...]} "
		    "(see Documentation/mcpctl.rst).");
	return {sub, run_devices};
}

} // namespace mcpctl
