// SPDX-License-Identifier: LGPL-2.1-or-later
// Accelerator devices: listing and describing the PCI functions bound to
// mcp.ko (MCP_IOC_DEV_LIST/INFO), opening one (MCP_IOC_DEV_OPEN) and the
// mcp::Accelerator that owns the device fd.
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>
#include <utility>

#include <sys/ioctl.h>
#include <unistd.h>

#include "internal.hpp"

static_assert(MCP_FEATURE_DEVICES == MCP_FEAT_DEVICES);
static_assert(MCP_ACCEL_BAR_PRESENT == MCP_BAR_PRESENT && MCP_ACCEL_BAR_MEM == MCP_BAR_MEM &&
	      MCP_ACCEL_BAR_64BIT == MCP_BAR_64BIT && MCP_ACCEL_BAR_PREFETCH == MCP_BAR_PREFETCH &&
	      MCP_ACCEL_BAR_MAPPABLE == MCP_BAR_MAPPABLE && MCP_ACCEL_BAR_WC_OK == MCP_BAR_WC_OK);
static_assert(MCP_ACCEL_LINK_PCIE == MCP_LINK_PCIE &&
	      MCP_ACCEL_LINK_SPEED_DEGRADED == MCP_LINK_SPEED_DEGRADED &&
	      MCP_ACCEL_LINK_WIDTH_DEGRADED == MCP_LINK_WIDTH_DEGRADED);
static_assert(MCP_ACCEL_WC_ALLOWED == MCP_WC_ALLOWED &&
	      MCP_ACCEL_WC_NOT_PREFETCHABLE == MCP_WC_NOT_PREFETCHABLE &&
	      MCP_ACCEL_WC_NO_PLATFORM == MCP_WC_NO_PLATFORM &&
	      MCP_ACCEL_WC_NOT_MAPPABLE == MCP_WC_NOT_MAPPABLE);
static_assert(MCP_ACCEL_MAX_BARS == MCP_DEV_MAX_BARS);

namespace mcp {

std::string PciAddress::to_string() const
{
	char buf[32];

	std::snprintf(buf, sizeof(buf), "%04x:%02x:%02x.%x", domain, bus, slot, function);
	return buf;
}

namespace {

// Parses 1 to @max_digits hex digits into @out; false for anything else.
bool parse_hex(std::string_view digits, std::size_t max_digits, std::uint32_t &out) noexcept
{
	std::uint32_t v = 0;

	if (digits.empty() || digits.size() > max_digits)
		return false;
	for (char c : digits) {
		unsigned d;

		if (c >= '0' && c <= '9')
			d = static_cast<unsigned>(c - '0');
		else if (c >= 'a' && c <= 'f')
			d = static_cast<unsigned>(c - 'a' + 10);
		else if (c >= 'A' && c <= 'F')
			d = static_cast<unsigned>(c - 'A' + 10);
		else
			return false;
		v = v * 16 + d;
	}
	out = v;
	return true;
}

} // namespace

std::optional<PciAddress> PciAddress::parse(std::string_view text) noexcept
{
	std::size_t dot = text.rfind('.');

	if (dot == std::string_view::npos)
		return std::nullopt;
	std::string_view head = text.substr(0, dot);
	std::size_t colon = head.rfind(':');
	if (colon == std::string_view::npos)
		return std::nullopt;
	std::string_view bus_domain = head.substr(0, colon);
	std::size_t colon2 = bus_domain.find(':');
	std::uint32_t domain = 0, bus = 0, slot = 0, function = 0;

	// "dddd:bb:ss.f" or "bb:ss.f"
	if (colon2 != std::string_view::npos &&
	    !parse_hex(bus_domain.substr(0, colon2), 4, domain))
		return std::nullopt;
	std::string_view bus_text = colon2 == std::string_view::npos ? bus_domain
								     : bus_domain.substr(colon2 + 1);
	if (!parse_hex(bus_text, 2, bus) || !parse_hex(head.substr(colon + 1), 2, slot) ||
	    !parse_hex(text.substr(dot + 1), 1, function))
		return std::nullopt;
	if (slot > 0x1f || function > 7)
		return std::nullopt;
	return PciAddress{domain, static_cast<std::uint8_t>(bus), static_cast<std::uint8_t>(slot),
			  static_cast<std::uint8_t>(function)};
}

unsigned pcie_generation(std::uint32_t speed_mts) noexcept
{
	switch (speed_mts) {
	case 2500:
		return 1;
	case 5000:
		return 2;
	case 8000:
		return 3;
	case 16000:
		return 4;
	case 32000:
		return 5;
	case 64000:
		return 6;
	default:
		return 0;
	}
}

const char *to_string(IrqType type) noexcept
{
	switch (type) {
	case IrqType::none:
		return "none";
	case IrqType::intx:
		return "intx";
	case IrqType::msi:
		return "msi";
	case IrqType::msix:
		return "msix";
	}
	return "unknown";
}

const char *to_string(WcTest result) noexcept
{
	switch (result) {
	case WcTest::untested:
		return "untested";
	case WcTest::unsupported:
		return "unsupported";
	case WcTest::not_combining:
		return "not-combining";
	case WcTest::combining:
		return "combining";
	case WcTest::not_run:
		return "not-run";
	}
	return "unknown";
}

namespace detail {

AcceleratorInfo decode_accelerator_info(const struct mcp_dev_info &raw)
{
	AcceleratorInfo i;

	i.index = raw.index;
	i.address = {raw.pci_domain, raw.pci_bus, raw.pci_slot, raw.pci_func};
	i.numa_node = raw.numa_node;
	i.vendor = raw.vendor;
	i.device = raw.device;
	i.subsystem_vendor = raw.subsystem_vendor;
	i.subsystem_device = raw.subsystem_device;
	i.class_code = raw.class_code & 0xffffff;
	i.revision = raw.revision;
	i.backend.assign(raw.backend, strnlen(raw.backend, sizeof(raw.backend)));
	i.generic = raw.dev_flags & MCP_DEV_GENERIC;
	i.irq_type = static_cast<IrqType>(raw.irq_type);
	i.irq_count = raw.irq_count;
	i.dma_mask = raw.dma_mask;
	i.link.pcie = raw.link_flags & MCP_LINK_PCIE;
	i.link.speed = raw.link_speed;
	i.link.speed_cap = raw.link_speed_cap;
	i.link.width = raw.link_width;
	i.link.width_cap = raw.link_width_cap;
	i.link.speed_degraded = raw.link_flags & MCP_LINK_SPEED_DEGRADED;
	i.link.width_degraded = raw.link_flags & MCP_LINK_WIDTH_DEGRADED;
	i.wc_test = static_cast<WcTest>(raw.wc_test);
	i.open_count = raw.open_count;
	for (unsigned b = 0; b < MCP_DEV_MAX_BARS; b++)
		i.bars[b] = {b, raw.bars[b].start, raw.bars[b].len, raw.bars[b].flags};
	return i;
}

std::string device_error_message(int errnum, std::string_view device, std::string_view what)
{
	const std::string d(device);
	const std::string w(what);

	switch (errnum) {
	case ENODEV:
		return "device " + d +
		       " was removed (unbound from mcp, hot-unplugged or the module unloaded): " +
		       "list the devices again with 'mcpctl devices'";
	case ENOTTY:
		return w + " on device " + d +
		       " is not supported by the loaded mcp module: install a newer mcp module";
	default:
		return w + " on device " + d + " failed: " + std::strerror(errnum);
	}
}

} // namespace detail

namespace {

void require_devices(const Device &dev)
{
	const Version &v = dev.version();

	if (!v.has(feature::devices))
		throw Error(EOPNOTSUPP, "the loaded mcp module (" + v.module_version +
						") has no accelerator devices: install a newer mcp module");
}

[[noreturn]] void throw_list_error(int err, const std::string &path)
{
	throw Error(err, detail::ioctl_error_message(err, path, "MCP_IOC_DEV_LIST"));
}

std::string index_name(unsigned index)
{
	return std::to_string(index);
}

} // namespace

std::vector<unsigned> Device::accelerator_indices() const
{
	require_devices(*this);
	for (int attempt = 0; attempt < 8; attempt++) {
		struct mcp_dev_list arg = {};

		arg.size = sizeof(arg);
		if (::ioctl(fd_, MCP_IOC_DEV_LIST, &arg) == 0)
			return {};
		if (errno != ENOSPC)
			throw_list_error(errno, path_);
		std::vector<std::uint32_t> ids(arg.count);
		arg.cap = arg.count;
		arg.indices_ptr = reinterpret_cast<std::uintptr_t>(ids.data());
		if (::ioctl(fd_, MCP_IOC_DEV_LIST, &arg) == 0) {
			ids.resize(arg.count);
			return {ids.begin(), ids.end()};
		}
		if (errno != ENOSPC) // ENOSPC: a device was bound meanwhile
			throw_list_error(errno, path_);
	}
	throw Error(EAGAIN, "the set of mcp devices kept changing while being listed: try again");
}

AcceleratorInfo Device::accelerator_info(unsigned index) const
{
	struct mcp_dev_info arg = {};

	require_devices(*this);
	arg.size = sizeof(arg);
	arg.index = index;
	if (::ioctl(fd_, MCP_IOC_DEV_INFO, &arg) != 0) {
		int err = errno;

		if (err == ENODEV)
			throw Error(err, "no device with index " + index_name(index) +
						 " is bound to mcp: 'mcpctl devices' lists them");
		throw Error(err, detail::ioctl_error_message(err, path_, "MCP_IOC_DEV_INFO"));
	}
	return detail::decode_accelerator_info(arg);
}

std::vector<AcceleratorInfo> Device::accelerators() const
{
	std::vector<AcceleratorInfo> all;

	for (unsigned index : accelerator_indices()) {
		try {
			all.push_back(accelerator_info(index));
		} catch (const Error &e) {
			if (e.errnum() != ENODEV) // unbound since the list: skip it
				throw;
		}
	}
	return all;
}

unsigned Device::find_accelerator(const PciAddress &address) const
{
	for (const AcceleratorInfo &i : accelerators())
		if (i.address == address)
			return i.index;
	throw Error(ENODEV, "no device at " + address.to_string() +
				    " is bound to mcp: 'mcpctl devices' lists them; bind one with " +
				    "/sys/bus/pci/drivers/mcp/new_id or driver_override");
}

Accelerator Device::open_accelerator(unsigned index) const
{
	AcceleratorInfo info = accelerator_info(index);
	struct mcp_dev_open arg = {};

	arg.size = sizeof(arg);
	arg.index = index;
	if (::ioctl(fd_, MCP_IOC_DEV_OPEN, &arg) != 0) {
		int err = errno;

		throw Error(err, detail::device_error_message(err, info.address.to_string(),
							      "MCP_IOC_DEV_OPEN"));
	}
	auto vectors = std::make_shared<detail::IrqVectors>();
	vectors->connected.resize(info.irq_count);
	return Accelerator(arg.fd, std::move(info), std::move(vectors));
}

Accelerator Device::open_accelerator(const PciAddress &address) const
{
	return open_accelerator(find_accelerator(address));
}

Accelerator::Accelerator(int fd, AcceleratorInfo info,
			 std::shared_ptr<detail::IrqVectors> vectors) noexcept
	: fd_(fd), info_(std::move(info)), vectors_(std::move(vectors))
{
}

Accelerator::Accelerator(Accelerator &&other) noexcept
	: fd_(std::exchange(other.fd_, -1)), info_(std::move(other.info_)),
	  vectors_(std::move(other.vectors_))
{
}

Accelerator &Accelerator::operator=(Accelerator &&other) noexcept
{
	if (this != &other) {
		reset();
		fd_ = std::exchange(other.fd_, -1);
		info_ = std::move(other.info_);
		vectors_ = std::move(other.vectors_);
	}
	return *this;
}

Accelerator::~Accelerator()
{
	reset();
}

void Accelerator::reset() noexcept
{
	if (fd_ >= 0)
		::close(fd_);
	fd_ = -1;
	vectors_.reset();
}

BarRegion Accelerator::bar_region(unsigned bar) const
{
	struct mcp_bar_info arg = {};
	const std::string name = info_.address.to_string();

	if (!is_open())
		throw Error(EBADF, "the accelerator is not open");
	if (bar >= MCP_DEV_MAX_BARS)
		throw Error(EINVAL, "BAR " + std::to_string(bar) + " does not exist: a PCI function has BARs 0 to 5");
	arg.size = sizeof(arg);
	arg.bar = bar;
	if (::ioctl(fd_, MCP_IOC_BAR_INFO, &arg) != 0) {
		int err = errno;

		throw Error(err, detail::device_error_message(err, name, "MCP_IOC_BAR_INFO"));
	}
	return {bar, arg.bar_flags, arg.len, arg.offset, arg.wc_offset, arg.wc_status};
}

} // namespace mcp
