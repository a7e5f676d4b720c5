// SPDX-License-Identifier: GPL-2.0-only
// mcpctl dev info DEV: everything MCP_IOC_DEV_INFO says about one device.
// mcpctl dev link: PCIe link health of every PCI function on the host, read
// from sysfs, so that a degraded link is flagged even on devices mcp does
// not drive.
#include <ostream>

#include <fmt/format.h>

#include "commands.hpp"
#include "output.hpp"

namespace mcpctl {

namespace {

struct DevArgs {
	std::string dev;
	std::string sysfs = "/sys";
	CLI::App *info = nullptr;
	CLI::App *link = nullptr;
} args;

std::string size_text(std::uint64_t len)
{
	if (len >= (1ULL << 30) && len % (1ULL << 30) == 0)
		return fmt::format("{} GiB", len >> 30);
	if (len >= (1ULL << 20) && len % (1ULL << 20) == 0)
		return fmt::format("{} MiB", len >> 20);
	if (len >= (1ULL << 10) && len % (1ULL << 10) == 0)
		return fmt::format("{} KiB", len >> 10);
	return fmt::format("{} bytes", len);
}

std::string bar_text(const mcp::BarInfo &b)
{
	std::string s = fmt::format("{} {:#x} {}", b.memory() ? "mem" : "io", b.start, size_text(b.len));
	std::vector<std::string> tags;

	if (b.memory()) {
		tags.push_back(b.is_64bit() ? "64-bit" : "32-bit");
		tags.push_back(b.prefetchable() ? "prefetchable" : "non-prefetchable");
	}
	tags.push_back(b.mappable() ? "mappable" : "not mappable");
	if (b.wc_ok())
		tags.push_back("wc");
	return s + " [" + fmt::format("{}", fmt::join(tags, ", ")) + "]";
}

} // namespace

std::string format_dev_info_text(const mcp::AcceleratorInfo &d)
{
	std::string s = fmt::format("device {}: {}\n", d.index, d.address.to_string());

	s += fmt::format("  id:            {:04x}:{:04x} rev {:02x} (subsystem {:04x}:{:04x})\n",
			 d.vendor, d.device, d.revision, d.subsystem_vendor, d.subsystem_device);
	s += fmt::format("  class:         {:06x}\n", d.class_code);
	s += fmt::format("  numa node:     {}\n", d.numa_node);
	s += fmt::format("  backend:       {}{}\n", d.backend, d.generic ? " (generic)" : "");
	s += fmt::format("  interrupts:    {}, {} vector(s)\n", mcp::to_string(d.irq_type), d.irq_count);
	s += fmt::format("  dma mask:      {:#x}\n", d.dma_mask);
	s += fmt::format("  link:          {}\n", format_link(d.link));
	s += fmt::format("  write-combine: {}{}\n", mcp::to_string(d.wc_test),
			 d.wc_test == mcp::WcTest::not_run
				 ? " (self-test not run: backend " + d.backend + " does not declare it safe)"
				 : std::string());
	s += fmt::format("  open fds:      {}\n", d.open_count);
	for (const mcp::BarInfo &b : d.bars)
		if (b.present())
			s += fmt::format("  bar {}:         {}\n", b.index, bar_text(b));
	return s;
}

std::string format_host_links_text(const std::vector<mcp::HostPciLink> &links)
{
	std::string s;
	unsigned pcie = 0, degraded = 0, conventional = 0;

	for (const mcp::HostPciLink &h : links) {
		if (!h.link.pcie) {
			conventional++;
			continue;
		}
		pcie++;
		if (h.link.degraded())
			degraded++;
		s += fmt::format("{}  {:04x}:{:04x}  {:04x}  {}", h.address.to_string(), h.vendor,
				 h.device, h.class_code >> 8, format_link(h.link));
		if (h.link.speed_degraded || h.link.width_degraded)
			s += fmt::format(" ({}{}{})", h.link.speed_degraded ? "speed" : "",
					 h.link.speed_degraded && h.link.width_degraded ? ", " : "",
					 h.link.width_degraded ? "width" : "");
		if (h.upstream && (h.upstream_speed_cap || h.upstream_width_cap))
			s += fmt::format(" upstream {} cap {}{}", h.upstream->to_string(),
					 h.upstream_speed_cap
						 ? fmt::format("Gen{}", mcp::pcie_generation(h.upstream_speed_cap))
						 : std::string("Gen?"),
					 h.upstream_width_cap ? fmt::format(" x{}", h.upstream_width_cap)
							      : std::string(" x?"));
		s += '\n';
	}
	s += fmt::format("{} PCIe link(s), {} degraded; {} conventional PCI function(s) without a link\n",
			 pcie, degraded, conventional);
	return s;
}

nlohmann::ordered_json host_links_json(const std::vector<mcp::HostPciLink> &links)
{
	nlohmann::ordered_json doc = nlohmann::ordered_json::array();

	for (const mcp::HostPciLink &h : links)
		doc.push_back({
			{"address", h.address.to_string()},
			{"vendor", fmt::format("{:04x}", h.vendor)},
			{"device", fmt::format("{:04x}", h.device)},
			{"class", fmt::format("{:06x}", h.class_code)},
			{"upstream", h.upstream ? nlohmann::ordered_json(h.upstream->to_string()) : nullptr},
			{"upstream_speed_cap_mts", h.upstream_speed_cap},
			{"upstream_width_cap", h.upstream_width_cap},
			{"link", link_json(h.link)},
		});
	return doc;
}

static int run_dev(const GlobalOptions &opts, std::ostream &out, std::ostream &err)
{
	if (args.link->parsed()) {
		std::vector<mcp::HostPciLink> links;

		try {
			links = mcp::scan_pci_links(args.sysfs);
		} catch (const mcp::Error &e) {
			print_error(err, e.what());
			return exit_failure;
		}
		if (opts.json)
			print_json(out, host_links_json(links));
		else
			out << format_host_links_text(links);
		out.flush();
		return exit_ok;
	}

	DevArg dev;
	try {
		dev = parse_dev_arg(args.dev);
	} catch (const mcp::Error &e) {
		print_error(err, e.what());
		return exit_usage;
	}
	mcp::AcceleratorInfo info;
	try {
		mcp::Device d = mcp::Device::open();
		info = d.accelerator_info(dev.address ? d.find_accelerator(*dev.address) : *dev.index);
	} catch (const mcp::Error &e) {
		print_error(err, e.what());
		return exit_failure;
	}
	if (opts.json)
		print_json(out, accelerator_json(info));
	else
		out << format_dev_info_text(info);
	out.flush();
	return exit_ok;
}

Command add_dev_command(CLI::App &app)
{
	CLI::App *sub = app.add_subcommand("dev", "Inspect one accelerator device, or the PCIe links of the host");

	sub->require_subcommand(1);
	args.info = sub->add_subcommand("info", "Everything mcp knows about device DEV");
	args.info->add_option("DEV", args.dev, "Device index or PCI address (dddd:bb:ss.f)")->required();
	args.link = sub->add_subcommand(
		"link", "PCIe link health of every PCI function of the host (not only mcp's)");
	args.link->add_option("--sysfs", args.sysfs, "Where sysfs is mounted (default /sys)");
	sub->footer("A link is DEGRADED when it trained below the speed or width that both the "
		    "function and its upstream port support.  'dev info --json' prints the object of "
		    "'mcpctl devices --json'; 'dev link --json' prints an array of "
		    "{\"address\",\"vendor\",\"device\",\"class\",\"upstream\",\"link\":{...}} "
		    "(see Documentation/mcpctl.rst).");
	return {sub, run_dev};
}

} // namespace mcpctl
