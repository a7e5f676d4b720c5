// SPDX-License-Identifier: LGPL-2.1-or-later
// PCIe link health of every PCI function on the host, read from sysfs
// (current/max link speed and width of the function and of the bridge
// above it), not only of the devices bound to mcp.ko.
#include <algorithm>
#include <cerrno>
#include <charconv>
#include <filesystem>
#include <fstream>
#include <string>
#include <system_error>

#include "internal.hpp"

namespace fs = std::filesystem;

namespace mcp {

namespace detail {

std::uint32_t parse_link_speed(std::string_view text) noexcept
{
	std::size_t i = 0;
	std::uint64_t whole = 0;
	std::uint64_t tenths = 0;

	while (i < text.size() && text[i] == ' ')
		i++;
	std::size_t start = i;
	while (i < text.size() && text[i] >= '0' && text[i] <= '9' && whole < 1000)
		whole = whole * 10 + static_cast<unsigned>(text[i++] - '0');
	if (i == start)
		return 0; // "Unknown", "", ...
	if (i < text.size() && text[i] == '.') {
		i++;
		if (i < text.size() && text[i] >= '0' && text[i] <= '9')
			tenths = static_cast<unsigned>(text[i++] - '0');
		while (i < text.size() && text[i] >= '0' && text[i] <= '9')
			i++;
	}
	std::string_view rest = text.substr(i);
	while (!rest.empty() && rest.front() == ' ')
		rest.remove_prefix(1);
	if (!rest.starts_with("GT/s"))
		return 0;
	return static_cast<std::uint32_t>(whole * 1000 + tenths * 100);
}

PcieLink decide_link(const LinkReading &dev, const LinkReading *upstream) noexcept
{
	PcieLink l;

	l.pcie = dev.pcie;
	if (!dev.pcie)
		return l;
	l.speed = dev.speed;
	l.speed_cap = dev.speed_cap;
	l.width = dev.width;
	l.width_cap = dev.width_cap;

	// What the link can reach: the smaller of both ends' maxima, where
	// the upstream end says (a root port of an older generation keeps a
	// Gen5 card at Gen4 by design; that is not degraded).
	std::uint32_t speed_limit = dev.speed_cap;
	std::uint32_t width_limit = dev.width_cap;
	if (upstream && upstream->pcie) {
		if (upstream->speed_cap && speed_limit)
			speed_limit = std::min(speed_limit, upstream->speed_cap);
		if (upstream->width_cap && width_limit)
			width_limit = std::min(width_limit, upstream->width_cap);
	}
	l.speed_degraded = dev.speed && speed_limit && dev.speed < speed_limit;
	l.width_degraded = dev.width && width_limit && dev.width < width_limit;
	return l;
}

} // namespace detail

namespace {

// The first line of @path; nullopt when it cannot be read.
std::optional<std::string> read_line(const fs::path &path)
{
	std::ifstream in(path);
	std::string line;

	if (!in || !std::getline(in, line))
		return std::nullopt;
	return line;
}

std::uint32_t parse_uint(const std::optional<std::string> &text, int base = 10)
{
	std::uint32_t v = 0;

	if (!text)
		return 0;
	std::string_view s = *text;
	if (base == 16 && s.starts_with("0x"))
		s.remove_prefix(2);
	auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v, base);
	if (ec != std::errc())
		return 0;
	return v;
}

detail::LinkReading read_link(const fs::path &dir)
{
	detail::LinkReading r;
	std::optional<std::string> max_speed = read_line(dir / "max_link_speed");
	std::optional<std::string> max_width = read_line(dir / "max_link_width");

	// The kernel shows the link files only on PCI Express functions.
	r.pcie = max_speed.has_value() || max_width.has_value();
	if (!r.pcie)
		return r;
	if (auto cur = read_line(dir / "current_link_speed"))
		r.speed = detail::parse_link_speed(*cur);
	if (max_speed)
		r.speed_cap = detail::parse_link_speed(*max_speed);
	r.width = parse_uint(read_line(dir / "current_link_width"));
	r.width_cap = parse_uint(max_width);
	return r;
}

} // namespace

std::vector<HostPciLink> scan_pci_links(const std::string &sysfs_root)
{
	const fs::path devices = fs::path(sysfs_root) / "bus/pci/devices";
	std::vector<HostPciLink> links;
	std::error_code ec;

	fs::directory_iterator it(devices, ec);
	if (ec)
		throw Error(ec.value(), "cannot read " + devices.string() + ": " + ec.message() +
						" (is sysfs mounted?)");
	for (const fs::directory_entry &entry : it) {
		std::optional<PciAddress> addr = PciAddress::parse(entry.path().filename().string());
		if (!addr)
			continue;

		HostPciLink h;
		h.address = *addr;
		h.vendor = static_cast<std::uint16_t>(parse_uint(read_line(entry.path() / "vendor"), 16));
		h.device = static_cast<std::uint16_t>(parse_uint(read_line(entry.path() / "device"), 16));
		h.class_code = parse_uint(read_line(entry.path() / "class"), 16);

		detail::LinkReading own = read_link(entry.path());
		detail::LinkReading up;
		// The entry is a symlink into /sys/devices/pci0000:00/.../ADDR:
		// the directory above is the bridge the function hangs off.
		fs::path real = fs::canonical(entry.path(), ec);
		if (!ec) {
			fs::path parent = real.parent_path();
			if (auto paddr = PciAddress::parse(parent.filename().string())) {
				h.upstream = *paddr;
				up = read_link(parent);
				h.upstream_speed_cap = up.speed_cap;
				h.upstream_width_cap = up.width_cap;
			}
		}
		h.link = detail::decide_link(own, h.upstream ? &up : nullptr);
		links.push_back(std::move(h));
	}
	std::sort(links.begin(), links.end(),
		  [](const HostPciLink &a, const HostPciLink &b) { return a.address < b.address; });
	return links;
}

} // namespace mcp
