// SPDX-License-Identifier: GPL-2.0-only
// libmcp's accelerator devices without a kernel: PCI addresses, decoding
// MCP_IOC_DEV_INFO, the PCIe link rule on a fake sysfs tree, BarMapping's
// bounds checks on anonymous memory, the error sentences and the C API's
// argument checks.
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>

#include <criterion/criterion.h>
#include <sys/mman.h>
#include <unistd.h>

#include "internal.hpp"

namespace fs = std::filesystem;
using mcp::PciAddress;
using mcp::detail::LinkReading;

// ---- PCI addresses ----

Test(pci_address, parse_full_and_short)
{
	auto a = PciAddress::parse("0000:00:04.0");
	auto b = PciAddress::parse("3a:1F.7");
	auto c = PciAddress::parse("10000:00:00.0");

	cr_assert(a.has_value());
	cr_expect_eq(a->domain, 0u);
	cr_expect_eq(a->bus, 0);
	cr_expect_eq(a->slot, 4);
	cr_expect_eq(a->function, 0);
	cr_assert(b.has_value());
	cr_expect_eq(b->domain, 0u);
	cr_expect_eq(b->bus, 0x3a);
	cr_expect_eq(b->slot, 0x1f);
	cr_expect_eq(b->function, 7);
	cr_expect(!c.has_value(), "a domain has 4 hex digits at most");
	cr_expect_eq(PciAddress::parse("abcd:ef:1f.3")->to_string(), "abcd:ef:1f.3");
}

Test(pci_address, round_trip)
{
	PciAddress a{0x12, 0x3, 0x1e, 5};

	cr_expect_eq(a.to_string(), "0012:03:1e.5");
	cr_expect(PciAddress::parse(a.to_string()) == a);
}

Test(pci_address, rejects_malformed)
{
	for (const char *bad : {"", "0", "00:04", "00:04.", "0000:00:04.8", "0000:00:20.0",
				"0000:100:00.0", "0000:00:04.0x", "x0000:00:04.0", ":00:04.0",
				"0000::04.0", "00:04.0.1", "0000:00:004.0", "g0:04.0", "00:04.00"}) {
		cr_expect(!PciAddress::parse(bad).has_value(), "'%s' should not parse", bad);
	}
}

Test(pci_address, ordering_is_by_domain_bus_slot_function)
{
	cr_expect((PciAddress{0, 1, 0, 0} < PciAddress{0, 1, 0, 1}));
	cr_expect((PciAddress{0, 1, 31, 7} < PciAddress{0, 2, 0, 0}));
	cr_expect((PciAddress{0, 255, 0, 0} < PciAddress{1, 0, 0, 0}));
}

Test(pcie, generation_of_speed)
{
	cr_expect_eq(mcp::pcie_generation(2500), 1u);
	cr_expect_eq(mcp::pcie_generation(8000), 3u);
	cr_expect_eq(mcp::pcie_generation(32000), 5u);
	cr_expect_eq(mcp::pcie_generation(64000), 6u);
	cr_expect_eq(mcp::pcie_generation(0), 0u);
	cr_expect_eq(mcp::pcie_generation(7000), 0u);
}

// ---- decoding DEV_INFO ----

Test(dev_info, decode_all_fields)
{
	struct mcp_dev_info raw = {};

	raw.index = 3;
	raw.numa_node = 1;
	raw.pci_domain = 1;
	raw.pci_bus = 0x3b;
	raw.pci_slot = 2;
	raw.pci_func = 1;
	raw.revision = 0x10;
	raw.vendor = 0x1234;
	raw.device = 0x11e8;
	raw.subsystem_vendor = 0x1af4;
	raw.subsystem_device = 0x1100;
	raw.class_code = 0x00ff00;
	raw.dev_flags = MCP_DEV_GENERIC;
	std::memcpy(raw.backend, "generic", 8);
	raw.irq_type = MCP_IRQ_MSI;
	raw.irq_count = 1;
	raw.dma_mask = 0xffffffff;
	raw.link_flags = MCP_LINK_PCIE | MCP_LINK_WIDTH_DEGRADED;
	raw.link_speed = 8000;
	raw.link_speed_cap = 8000;
	raw.link_width = 4;
	raw.link_width_cap = 16;
	raw.wc_test = MCP_WC_COMBINING;
	raw.open_count = 2;
	raw.bars[0] = {0xfea00000, 1 << 20, MCP_BAR_PRESENT | MCP_BAR_MEM | MCP_BAR_MAPPABLE, 0};
	raw.bars[2] = {0x800000000ULL, 1ULL << 32,
		       MCP_BAR_PRESENT | MCP_BAR_MEM | MCP_BAR_64BIT | MCP_BAR_PREFETCH |
			       MCP_BAR_MAPPABLE | MCP_BAR_WC_OK,
		       0};

	mcp::AcceleratorInfo i = mcp::detail::decode_accelerator_info(raw);

	cr_expect_eq(i.index, 3u);
	cr_expect_eq(i.numa_node, 1);
	cr_expect_eq(i.address.to_string(), "0001:3b:02.1");
	cr_expect_eq(i.revision, 0x10);
	cr_expect_eq(i.vendor, 0x1234);
	cr_expect_eq(i.device, 0x11e8);
	cr_expect_eq(i.subsystem_vendor, 0x1af4);
	cr_expect_eq(i.subsystem_device, 0x1100);
	cr_expect_eq(i.class_code, 0x00ff00u);
	cr_expect(i.generic);
	cr_expect_eq(i.backend, "generic");
	cr_expect(i.irq_type == mcp::IrqType::msi);
	cr_expect_eq(i.irq_count, 1u);
	cr_expect_eq(i.dma_mask, 0xffffffffULL);
	cr_expect(i.link.pcie);
	cr_expect(!i.link.speed_degraded);
	cr_expect(i.link.width_degraded);
	cr_expect(i.link.degraded());
	cr_expect_eq(i.link.width, 4u);
	cr_expect_eq(i.link.width_cap, 16u);
	cr_expect(i.wc_test == mcp::WcTest::combining);
	cr_expect_eq(i.open_count, 2u);
	cr_expect(i.bars[0].present() && i.bars[0].memory() && !i.bars[0].is_64bit() &&
		  !i.bars[0].prefetchable() && i.bars[0].mappable() && !i.bars[0].wc_ok());
	cr_expect_eq(i.bars[0].len, 1u << 20);
	cr_expect(!i.bars[1].present());
	cr_expect(i.bars[2].is_64bit() && i.bars[2].prefetchable() && i.bars[2].wc_ok());
	cr_expect_eq(i.bars[2].index, 2u);
	cr_expect_eq(i.bars[2].start, 0x800000000ULL);
}

Test(dev_info, backend_without_nul_is_bounded)
{
	struct mcp_dev_info raw = {};

	std::memset(raw.backend, 'x', sizeof(raw.backend));
	cr_expect_eq(mcp::detail::decode_accelerator_info(raw).backend.size(), sizeof(raw.backend));
}

Test(dev_info, names)
{
	cr_expect_str_eq(mcp::to_string(mcp::IrqType::intx), "intx");
	cr_expect_str_eq(mcp::to_string(mcp::IrqType::msix), "msix");
	cr_expect_str_eq(mcp::to_string(static_cast<mcp::IrqType>(9)), "unknown");
	cr_expect_str_eq(mcp::to_string(mcp::WcTest::not_combining), "not-combining");
	cr_expect_str_eq(mcp::to_string(mcp::WcTest::not_run), "not-run");
	cr_expect_eq(static_cast<unsigned>(mcp::WcTest::not_run), MCP_WC_NOT_RUN);
	cr_expect_eq(MCP_ACCEL_WCTEST_NOT_RUN, MCP_WC_NOT_RUN);
	cr_expect_str_eq(mcp::to_string(static_cast<mcp::WcTest>(9)), "unknown");
	cr_expect_str_eq(mcp_feature_name(MCP_FEATURE_DEVICES), "devices");
}

// ---- the link rule ----

static LinkReading reading(std::uint32_t speed, std::uint32_t speed_cap, std::uint32_t width,
			   std::uint32_t width_cap)
{
	return {true, speed, speed_cap, width, width_cap};
}

Test(link_rule, parse_sysfs_speeds)
{
	cr_expect_eq(mcp::detail::parse_link_speed("2.5 GT/s PCIe"), 2500u);
	cr_expect_eq(mcp::detail::parse_link_speed("8.0 GT/s PCIe"), 8000u);
	cr_expect_eq(mcp::detail::parse_link_speed("16.0 GT/s PCIe"), 16000u);
	cr_expect_eq(mcp::detail::parse_link_speed("32.0 GT/s PCIe"), 32000u);
	cr_expect_eq(mcp::detail::parse_link_speed("5 GT/s"), 5000u); // kernels before 5.x
	cr_expect_eq(mcp::detail::parse_link_speed("Unknown"), 0u);
	cr_expect_eq(mcp::detail::parse_link_speed("Unknown speed"), 0u);
	cr_expect_eq(mcp::detail::parse_link_speed(""), 0u);
	cr_expect_eq(mcp::detail::parse_link_speed("8.0 MB/s"), 0u);
}

Test(link_rule, gen5_x16_card_at_gen3_x8_is_degraded_both_ways)
{
	LinkReading dev = reading(8000, 32000, 8, 16);
	LinkReading port = reading(32000, 32000, 16, 16);
	mcp::PcieLink l = mcp::detail::decide_link(dev, &port);

	cr_expect(l.pcie);
	cr_expect(l.speed_degraded);
	cr_expect(l.width_degraded);
	cr_expect(l.degraded());
}

Test(link_rule, limited_by_the_upstream_port_is_not_degraded)
{
	// A Gen5 x16 card in a Gen4 x8 slot runs as well as it can.
	LinkReading dev = reading(16000, 32000, 8, 16);
	LinkReading port = reading(16000, 16000, 8, 8);
	mcp::PcieLink l = mcp::detail::decide_link(dev, &port);

	cr_expect(!l.speed_degraded);
	cr_expect(!l.width_degraded);
	// ... but below the slot's maximum it is.
	LinkReading slow = reading(8000, 32000, 8, 16);
	cr_expect(mcp::detail::decide_link(slow, &port).speed_degraded);
}

Test(link_rule, without_upstream_the_device_maximum_counts)
{
	LinkReading dev = reading(16000, 32000, 16, 16);

	cr_expect(mcp::detail::decide_link(dev, nullptr).speed_degraded);
	cr_expect(!mcp::detail::decide_link(dev, nullptr).width_degraded);
	LinkReading conventional_parent;
	cr_expect(mcp::detail::decide_link(dev, &conventional_parent).speed_degraded);
}

Test(link_rule, unknown_values_are_never_degraded)
{
	LinkReading dev = reading(0, 32000, 0, 16);
	LinkReading port = reading(0, 0, 0, 0);

	cr_expect(!mcp::detail::decide_link(dev, &port).degraded());
	LinkReading nocap = reading(2500, 0, 1, 0);
	cr_expect(!mcp::detail::decide_link(nocap, nullptr).degraded());
}

Test(link_rule, conventional_pci_has_no_link)
{
	LinkReading dev;
	mcp::PcieLink l = mcp::detail::decide_link(dev, nullptr);

	cr_expect(!l.pcie);
	cr_expect(!l.degraded());
	cr_expect_eq(l.speed, 0u);
}

// ---- a fake sysfs tree ----

namespace {

struct FakeSysfs {
	fs::path root;

	FakeSysfs()
	{
		char tmpl[] = "/tmp/mcp-sysfs-XXXXXX";
		root = ::mkdtemp(tmpl);
		fs::create_directories(root / "bus/pci/devices");
	}
	~FakeSysfs() { fs::remove_all(root); }

	static void put(const fs::path &p, const std::string &text)
	{
		std::ofstream(p) << text << '\n';
	}

	// Adds function @addr at /sys/devices/@parent_dir/@addr and its
	// bus/pci/devices symlink; empty speeds leave the link files out.
	fs::path add(const std::string &parent_dir, const std::string &addr, const std::string &ids,
		     const std::string &speed, const std::string &max_speed, const std::string &width,
		     const std::string &max_width)
	{
		fs::path dir = root / "devices" / parent_dir / addr;

		fs::create_directories(dir);
		put(dir / "vendor", "0x" + ids.substr(0, 4));
		put(dir / "device", "0x" + ids.substr(5, 4));
		put(dir / "class", "0x030200");
		if (!max_speed.empty()) {
			put(dir / "current_link_speed", speed);
			put(dir / "max_link_speed", max_speed);
			put(dir / "current_link_width", width);
			put(dir / "max_link_width", max_width);
		}
		fs::create_symlink(fs::relative(dir, root / "bus/pci/devices"),
				   root / "bus/pci/devices" / addr);
		return dir;
	}
};

const mcp::HostPciLink *find(const std::vector<mcp::HostPciLink> &v, const char *addr)
{
	for (const mcp::HostPciLink &h : v)
		if (h.address.to_string() == addr)
			return &h;
	return nullptr;
}

} // namespace

Test(host_links, fake_tree)
{
	FakeSysfs s;

	// Root port Gen5 x16 with a Gen5 x16 card trained at Gen3 x8.
	s.add("pci0000:00", "0000:00:01.0", "8086:7d00", "32.0 GT/s PCIe", "32.0 GT/s PCIe", "16", "16");
	s.add("pci0000:00/0000:00:01.0", "0000:01:00.0", "10de:2330", "8.0 GT/s PCIe",
	      "32.0 GT/s PCIe", "8", "16");
	// Root port Gen3 x4 with a Gen4 x4 NVMe drive at Gen3 x4: limited, fine.
	s.add("pci0000:00", "0000:00:1c.0", "8086:a110", "8.0 GT/s PCIe", "8.0 GT/s PCIe", "4", "4");
	s.add("pci0000:00/0000:00:1c.0", "0000:02:00.0", "144d:a808", "8.0 GT/s PCIe",
	      "16.0 GT/s PCIe", "4", "4");
	// A root-complex integrated endpoint reporting Unknown, and a
	// conventional PCI function without the files.
	s.add("pci0000:00", "0000:00:02.0", "8086:3e92", "Unknown", "Unknown", "0", "0");
	s.add("pci0000:00", "0000:00:04.0", "1234:11e8", "", "", "", "");

	std::vector<mcp::HostPciLink> v = mcp::scan_pci_links(s.root.string());

	cr_assert_eq(v.size(), 6u);
	cr_expect_eq(v[0].address.to_string(), "0000:00:01.0", "sorted by address");
	cr_expect_eq(v[5].address.to_string(), "0000:02:00.0");

	const mcp::HostPciLink *gpu = find(v, "0000:01:00.0");
	cr_assert(gpu);
	cr_expect_eq(gpu->vendor, 0x10de);
	cr_expect_eq(gpu->device, 0x2330);
	cr_expect_eq(gpu->class_code, 0x030200u);
	cr_assert(gpu->upstream.has_value());
	cr_expect_eq(gpu->upstream->to_string(), "0000:00:01.0");
	cr_expect_eq(gpu->upstream_speed_cap, 32000u);
	cr_expect(gpu->link.speed_degraded && gpu->link.width_degraded);
	cr_expect_eq(gpu->link.speed, 8000u);
	cr_expect_eq(gpu->link.width_cap, 16u);

	const mcp::HostPciLink *nvme = find(v, "0000:02:00.0");
	cr_assert(nvme);
	cr_expect(!nvme->link.degraded(), "held back by its Gen3 root port: not degraded");

	const mcp::HostPciLink *port = find(v, "0000:00:01.0");
	cr_assert(port);
	cr_expect(!port->upstream.has_value(), "pci0000:00 is a host bridge, not a function");
	cr_expect(port->link.pcie && !port->link.degraded());

	const mcp::HostPciLink *igpu = find(v, "0000:00:02.0");
	cr_assert(igpu);
	cr_expect(igpu->link.pcie && !igpu->link.degraded());
	cr_expect_eq(igpu->link.speed, 0u);

	const mcp::HostPciLink *edu = find(v, "0000:00:04.0");
	cr_assert(edu);
	cr_expect(!edu->link.pcie);
}

Test(host_links, missing_sysfs_is_an_error)
{
	try {
		mcp::scan_pci_links("/nonexistent-sysfs");
		cr_assert_fail("no exception");
	} catch (const mcp::Error &e) {
		cr_expect_eq(e.errnum(), ENOENT);
		cr_expect(std::string(e.what()).find("/nonexistent-sysfs/bus/pci/devices") != std::string::npos,
			  "%s", e.what());
	}
}

// ---- BarMapping on anonymous memory ----

static mcp::BarMapping anon_mapping(std::size_t len)
{
	void *p = ::mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	cr_assert(p != MAP_FAILED);
	return mcp::detail::BarMappingAccess::adopt(p, len, 0, 0, mcp::Caching::uncached,
						    "0000:00:04.0");
}

static int expect_errno(auto &&fn)
{
	try {
		fn();
	} catch (const mcp::Error &e) {
		return e.errnum();
	}
	return 0;
}

Test(bar_mapping, reads_and_writes_in_bounds)
{
	mcp::BarMapping m = anon_mapping(4096);

	m.write32(0, 0x010000ed);
	m.write64(8, 0x1122334455667788ULL);
	m.write32(4092, 0xdeadbeef);
	cr_expect_eq(m.read32(0), 0x010000edu);
	cr_expect_eq(m.read64(8), 0x1122334455667788ULL);
	cr_expect_eq(m.read32(8), 0x55667788u);
	cr_expect_eq(m.read32(4092), 0xdeadbeefu);
	m.write64(4088, 7);
	cr_expect_eq(m.read64(4088), 7u);
}

Test(bar_mapping, out_of_bounds_and_misaligned_are_einval)
{
	mcp::BarMapping m = anon_mapping(4096);

	cr_expect_eq(expect_errno([&] { m.read32(4096); }), EINVAL);
	cr_expect_eq(expect_errno([&] { m.read32(4094); }), EINVAL);
	cr_expect_eq(expect_errno([&] { m.read64(4092); }), EINVAL);
	cr_expect_eq(expect_errno([&] { m.write32(SIZE_MAX - 1, 0); }), EINVAL);
	cr_expect_eq(expect_errno([&] { m.write64(4096, 0); }), EINVAL);
	cr_expect_eq(expect_errno([&] { m.read32(2); }), EINVAL);
	cr_expect_eq(expect_errno([&] { m.read64(4); }), EINVAL);
	try {
		m.read32(8192);
	} catch (const mcp::Error &e) {
		std::string w = e.what();
		cr_expect(w.find("0x2000") != std::string::npos && w.find("BAR 0 of 0000:00:04.0") != std::string::npos,
			  "%s", e.what());
	}
}

Test(bar_mapping, block_write_copies_and_checks)
{
	mcp::BarMapping m = anon_mapping(4096);
	std::byte src[20];

	for (std::size_t i = 0; i < sizeof(src); i++)
		src[i] = static_cast<std::byte>(i + 1);
	m.write_block(64, src);
	cr_expect_eq(std::memcmp(static_cast<const char *>(const_cast<const void *>(m.data())) + 64, src,
				 sizeof(src)),
		     0);
	cr_expect_eq(m.read32(84), 0u, "nothing written past the block");
	cr_expect_eq(expect_errno([&] { m.write_block(4, src); }), EINVAL);
	cr_expect_eq(expect_errno([&] { m.write_block(4088, src); }), EINVAL);
	cr_expect_eq(expect_errno([&] { m.write_block(0, std::span(src, 3)); }), EINVAL);
	m.write_block(0, std::span<const std::byte>());
}

Test(bar_mapping, moved_from_and_empty_refuse)
{
	mcp::BarMapping m = anon_mapping(4096);
	mcp::BarMapping n = std::move(m);

	cr_expect(!m.is_mapped());
	cr_expect(n.is_mapped());
	cr_expect_eq(n.size(), 4096u);
	cr_expect_eq(expect_errno([&] { m.read32(0); }), EBADF);
	mcp::BarMapping none;
	cr_expect_eq(expect_errno([&] { none.write32(0, 1); }), EBADF);
}

// ---- messages ----

Test(device_messages, wc_refusal_names_bar_device_and_reason)
{
	std::string s = mcp::detail::wc_refusal_message(MCP_WC_NOT_PREFETCHABLE, 0, "0000:00:04.0");

	cr_expect_eq(s, "BAR 0 of 0000:00:04.0 is not prefetchable and its backend does not declare it "
			"write-combining safe: map it uncached");
	cr_expect(mcp::detail::wc_refusal_message(MCP_WC_NO_PLATFORM, 2, "x").find("PAT") != std::string::npos);
	cr_expect(mcp::detail::wc_refusal_message(MCP_WC_NOT_MAPPABLE, 2, "x").find("cannot be mapped") !=
		  std::string::npos);
	cr_expect(mcp::detail::wc_refusal_message(77, 2, "x").find("77") != std::string::npos);
}

Test(device_messages, no_rawio_names_the_capability)
{
	for (int err : {EPERM, EACCES}) {
		std::string s = mcp::detail::map_error_message(err, 0, "0000:00:04.0");
		cr_expect(s.find("CAP_SYS_RAWIO") != std::string::npos, "%s", s.c_str());
		cr_expect(s.find("BAR 0 of 0000:00:04.0") != std::string::npos, "%s", s.c_str());
	}
}

Test(device_messages, other_cache_mode_says_unmap_it)
{
	std::string uc = mcp::detail::map_error_message(EBUSY, 2, "0000:00:05.0");
	std::string wc = mcp::detail::map_error_message(EBUSY, 2, "0000:00:05.0",
							mcp::Caching::write_combining);

	cr_expect(uc.find("BAR 2 of 0000:00:05.0 uncached") != std::string::npos, "%s", uc.c_str());
	cr_expect(uc.find("mapped write-combining") != std::string::npos, "%s", uc.c_str());
	cr_expect(wc.find("write-combining was refused") != std::string::npos, "%s", wc.c_str());
	cr_expect(wc.find("mapped uncached") != std::string::npos, "%s", wc.c_str());
	cr_expect(wc.find("one cache mode at a time") != std::string::npos, "%s", wc.c_str());
}

Test(device_messages, removed_device_says_removed)
{
	std::string s = mcp::detail::device_error_message(ENODEV, "0000:00:04.0", "MCP_IOC_BAR_INFO");
	std::string m = mcp::detail::map_error_message(ENODEV, 0, "0000:00:04.0");

	cr_expect(s.find("0000:00:04.0 was removed") != std::string::npos, "%s", s.c_str());
	cr_expect(m.find("was removed") != std::string::npos, "%s", m.c_str());
}

// ---- C API argument checks ----

Test(c_api_devices, null_handles_are_einval)
{
	struct mcp_accel_info info = {};
	uint32_t idx = 0;
	uint32_t v32 = 0;
	uint64_t v64 = 0;
	size_t count = 0;
	struct mcp_accel *accel = nullptr;
	struct mcp_bar *bar = nullptr;
	struct mcp_irq *irq = nullptr;

	info.size = sizeof(info);
	cr_expect_eq(mcp_accel_list(nullptr, nullptr, 0, &count), -EINVAL);
	cr_expect_eq(mcp_accel_query(nullptr, 0, &info), -EINVAL);
	cr_expect_eq(mcp_accel_find(nullptr, "00:04.0", &idx), -EINVAL);
	cr_expect_eq(mcp_accel_open(nullptr, 0, &accel), -EINVAL);
	cr_expect_eq(mcp_accel_fd(nullptr), -EINVAL);
	cr_expect_eq(mcp_accel_get_info(nullptr, &info), -EINVAL);
	cr_expect_eq(mcp_bar_map(nullptr, 0, 0, 0, 0, &bar), -EINVAL);
	cr_expect_eq(mcp_bar_read32(nullptr, 0, &v32), -EINVAL);
	cr_expect_eq(mcp_bar_read64(nullptr, 0, &v64), -EINVAL);
	cr_expect_eq(mcp_bar_write32(nullptr, 0, 1), -EINVAL);
	cr_expect_eq(mcp_bar_write64(nullptr, 0, 1), -EINVAL);
	cr_expect_eq(mcp_bar_write_block(nullptr, 0, "abcd", 4), -EINVAL);
	cr_expect_eq(mcp_bar_size(nullptr), 0u);
	cr_expect(mcp_bar_data(nullptr) == nullptr);
	cr_expect_eq(mcp_irq_open(nullptr, 0, &irq), -EINVAL);
	cr_expect_eq(mcp_irq_fd(nullptr), -EINVAL);
	cr_expect_eq(mcp_irq_wait(nullptr, 0, &v64), -EINVAL);
	cr_expect_eq(mcp_irq_unmask(nullptr), -EINVAL);
	cr_expect(std::strstr(mcp_strerror_last(), "irq is NULL") != nullptr, "%s", mcp_strerror_last());
	mcp_accel_close(nullptr);
	mcp_bar_unmap(nullptr);
	mcp_irq_close(nullptr);
}
