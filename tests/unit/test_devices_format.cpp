// SPDX-License-Identifier: GPL-2.0-only
// mcpctl's device commands without a kernel: DEV and number arguments, the
// link text, the devices table, dev info, dev link, bar dump and the JSON
// schemas; exit codes and error lines of the commands as a subprocess.
#include <string>

#include <criterion/criterion.h>
#include <nlohmann/json.hpp>

#include "commands.hpp"
#include "helpers.hpp"

using nlohmann::json;

#define expect_text(got, want)                                                 \
	cr_expect((got) == (want), "got:\n%s\nwant:\n%s", (got).c_str(),      \
		  std::string(want).c_str())

static int parse_errno(auto &&fn)
{
	try {
		fn();
	} catch (const mcp::Error &e) {
		return e.errnum();
	}
	return 0;
}

// The edu device of the test VM.
static mcp::AcceleratorInfo edu()
{
	mcp::AcceleratorInfo i;

	i.index = 0;
	i.address = {0, 0, 4, 0};
	i.numa_node = -1;
	i.vendor = 0x1234;
	i.device = 0x11e8;
	i.subsystem_vendor = 0x1af4;
	i.subsystem_device = 0x1100;
	i.class_code = 0x00ff00;
	i.revision = 0x10;
	i.backend = "edu";
	i.irq_type = mcp::IrqType::msi;
	i.irq_count = 1;
	i.dma_mask = 0xffffffff;
	i.wc_test = mcp::WcTest::untested;
	i.open_count = 1;
	i.bars[0] = {0, 0xfea00000, 1 << 20,
		     MCP_ACCEL_BAR_PRESENT | MCP_ACCEL_BAR_MEM | MCP_ACCEL_BAR_MAPPABLE};
	for (unsigned b = 1; b < 6; b++)
		i.bars[b].index = b;
	return i;
}

static mcp::AcceleratorInfo degraded_gpu()
{
	mcp::AcceleratorInfo i = edu();

	i.index = 1;
	i.address = {0, 0x3b, 0, 0};
	i.numa_node = 1;
	i.vendor = 0x10de;
	i.device = 0x2330;
	i.class_code = 0x030200;
	i.backend = "generic";
	i.generic = true;
	i.link = {true, 8000, 32000, 8, 16, true, true};
	i.bars[2] = {2, 0x38000000000ULL, 1ULL << 34,
		     MCP_ACCEL_BAR_PRESENT | MCP_ACCEL_BAR_MEM | MCP_ACCEL_BAR_64BIT |
			     MCP_ACCEL_BAR_PREFETCH | MCP_ACCEL_BAR_MAPPABLE | MCP_ACCEL_BAR_WC_OK};
	return i;
}

Test(dev_arg, index_and_addresses)
{
	mcpctl::DevArg a = mcpctl::parse_dev_arg("0");
	mcpctl::DevArg b = mcpctl::parse_dev_arg("0000:00:04.0");
	mcpctl::DevArg c = mcpctl::parse_dev_arg("3b:00.1");
	mcpctl::DevArg d = mcpctl::parse_dev_arg("0x2");

	cr_expect(a.index == 0u && !a.address);
	cr_expect(!b.index && b.address && b.address->to_string() == "0000:00:04.0");
	cr_expect(c.address && c.address->to_string() == "0000:3b:00.1");
	cr_expect(d.index == 2u);
}

Test(dev_arg, rejects_junk)
{
	for (const char *bad : {"", "-1", "edu", "0000:00:04", "00:04.9", "1.5", "99999999999", "0x"})
		cr_expect_eq(parse_errno([&] { mcpctl::parse_dev_arg(bad); }), EINVAL, "'%s'", bad);
}

Test(numbers, decimal_hex_and_limits)
{
	cr_expect_eq(mcpctl::parse_number("0x20", "offset"), 0x20u);
	cr_expect_eq(mcpctl::parse_number("0XfF", "offset"), 0xffu);
	cr_expect_eq(mcpctl::parse_number("32", "offset"), 32u);
	cr_expect_eq(mcpctl::parse_number("0xffffffff", "value", UINT32_MAX), 0xffffffffu);
	cr_expect_eq(mcpctl::parse_number("18446744073709551615", "value"), UINT64_MAX);
	cr_expect_eq(parse_errno([] { mcpctl::parse_number("0x100000000", "value", UINT32_MAX); }), EINVAL);
	cr_expect_eq(parse_errno([] { mcpctl::parse_number("18446744073709551616", "value"); }), EINVAL);
	cr_expect_eq(parse_errno([] { mcpctl::parse_number("6", "BAR number", 5); }), EINVAL);
	cr_expect_eq(parse_errno([] { mcpctl::parse_number("12a", "offset"); }), EINVAL);
	cr_expect_eq(parse_errno([] { mcpctl::parse_number("-4", "offset"); }), EINVAL);
}

Test(link_text, formats)
{
	expect_text(mcpctl::format_link({}), "n/a (PCI)");
	expect_text(mcpctl::format_link({true, 8000, 32000, 8, 16, true, true}),
		    "Gen3 x8 (cap Gen5 x16) DEGRADED");
	expect_text(mcpctl::format_link({true, 16000, 16000, 4, 4, false, false}),
		    "Gen4 x4 (cap Gen4 x4)");
	expect_text(mcpctl::format_link({true, 0, 0, 0, 0, false, false}), "Gen? x? (cap Gen? x?)");
}

Test(devices_table, like_lspci)
{
	expect_text(mcpctl::format_devices_table({edu(), degraded_gpu()}),
		    "IDX  ADDRESS       ID         CLASS NODE  BACKEND  LINK\n"
		    "0    0000:00:04.0  1234:11e8  00ff    -1  edu      n/a (PCI)\n"
		    "1    0000:3b:00.0  10de:2330  0302     1  generic  Gen3 x8 (cap Gen5 x16) DEGRADED\n");
	expect_text(mcpctl::format_devices_table({}),
		    "IDX  ADDRESS       ID         CLASS NODE  BACKEND  LINK\n");
}

Test(devices_json, schema)
{
	json j = json::parse(mcpctl::accelerator_json(degraded_gpu()).dump());

	for (const char *key : {"index", "address", "vendor", "device", "subsystem_vendor",
				"subsystem_device", "class", "revision", "numa_node", "backend",
				"generic", "irq_type", "irq_count", "dma_mask", "link", "wc_test",
				"open_count", "bars"})
		cr_expect(j.contains(key), "missing %s", key);
	cr_expect_eq(j["address"], "0000:3b:00.0");
	cr_expect_eq(j["vendor"], "10de");
	cr_expect_eq(j["class"], "030200");
	cr_expect_eq(j["numa_node"], 1);
	cr_expect_eq(j["irq_type"], "msi");
	cr_expect_eq(j["dma_mask"], "0xffffffff");
	cr_expect_eq(j["link"]["speed_mts"], 8000);
	cr_expect_eq(j["link"]["width_cap"], 16);
	cr_expect_eq(j["link"]["degraded"], true);
	cr_expect_eq(j["link"]["text"], "Gen3 x8 (cap Gen5 x16) DEGRADED");
	cr_assert_eq(j["bars"].size(), 2u, "only present BARs");
	cr_expect_eq(j["bars"][1]["index"], 2);
	cr_expect_eq(j["bars"][1]["len"], 1ULL << 34);
	cr_expect_eq(j["bars"][1]["64bit"], true);
	cr_expect_eq(j["bars"][1]["wc_ok"], true);
	cr_expect_eq(j["bars"][0]["prefetchable"], false);
}

Test(dev_info_text, every_field)
{
	expect_text(mcpctl::format_dev_info_text(edu()),
		    "device 0: 0000:00:04.0\n"
		    "  id:            1234:11e8 rev 10 (subsystem 1af4:1100)\n"
		    "  class:         00ff00\n"
		    "  numa node:     -1\n"
		    "  backend:       edu\n"
		    "  interrupts:    msi, 1 vector(s)\n"
		    "  dma mask:      0xffffffff\n"
		    "  link:          n/a (PCI)\n"
		    "  write-combine: untested\n"
		    "  open fds:      1\n"
		    "  bar 0:         mem 0xfea00000 1 MiB [32-bit, non-prefetchable, mappable]\n");
	std::string g = mcpctl::format_dev_info_text(degraded_gpu());
	cr_expect(g.find("  backend:       generic (generic)\n") != std::string::npos, "%s", g.c_str());
	cr_expect(g.find("  bar 2:         mem 0x38000000000 16 GiB [64-bit, prefetchable, mappable, wc]\n") !=
		  std::string::npos, "%s", g.c_str());
}

static mcp::HostPciLink host_link(const char *addr, mcp::PcieLink link)
{
	mcp::HostPciLink h;

	h.address = *mcp::PciAddress::parse(addr);
	h.vendor = 0x10de;
	h.device = 0x2330;
	h.class_code = 0x030200;
	h.link = link;
	return h;
}

Test(dev_link, text_flags_degraded_and_counts)
{
	mcp::HostPciLink gpu = host_link("0000:01:00.0", {true, 8000, 32000, 8, 16, true, true});
	gpu.upstream = mcp::PciAddress{0, 0, 1, 0};
	gpu.upstream_speed_cap = 32000;
	gpu.upstream_width_cap = 16;
	mcp::HostPciLink nic = host_link("0000:02:00.0", {true, 16000, 16000, 4, 8, false, true});
	mcp::HostPciLink ok = host_link("0000:03:00.0", {true, 16000, 16000, 4, 4, false, false});
	mcp::HostPciLink pci = host_link("0000:00:04.0", {});

	expect_text(mcpctl::format_host_links_text({pci, gpu, nic, ok}),
		    "0000:01:00.0  10de:2330  0302  Gen3 x8 (cap Gen5 x16) DEGRADED (speed, width) "
		    "upstream 0000:00:01.0 cap Gen5 x16\n"
		    "0000:02:00.0  10de:2330  0302  Gen4 x4 (cap Gen4 x8) DEGRADED (width)\n"
		    "0000:03:00.0  10de:2330  0302  Gen4 x4 (cap Gen4 x4)\n"
		    "3 PCIe link(s), 2 degraded; 1 conventional PCI function(s) without a link\n");
}

Test(dev_link, json_schema)
{
	mcp::HostPciLink gpu = host_link("0000:01:00.0", {true, 8000, 32000, 8, 16, true, true});
	gpu.upstream = mcp::PciAddress{0, 0, 1, 0};
	json j = json::parse(mcpctl::host_links_json({gpu, host_link("0000:00:04.0", {})}).dump());

	cr_assert_eq(j.size(), 2u);
	for (const char *key : {"address", "vendor", "device", "class", "upstream",
				"upstream_speed_cap_mts", "upstream_width_cap", "link"})
		cr_expect(j[0].contains(key), "missing %s", key);
	cr_expect_eq(j[0]["upstream"], "0000:00:01.0");
	cr_expect_eq(j[0]["link"]["speed_degraded"], true);
	cr_expect(j[1]["upstream"].is_null());
	cr_expect_eq(j[1]["link"]["pcie"], false);
}

Test(bar_dump, hexdump_lines)
{
	expect_text(mcpctl::format_bar_dump(0, {0x010000ed, 0xfffffffe, 0, 0, 0x80}),
		    "00000000: 010000ed fffffffe 00000000 00000000\n"
		    "00000010: 00000080\n");
	expect_text(mcpctl::format_bar_dump(0x100, {1, 2, 3, 4}), "00000100: 00000001 00000002 00000003 00000004\n");
	expect_text(mcpctl::format_bar_dump(0, {}), "");
}

// ---- the commands as a subprocess, without the module ----

static test::RunResult mcpctl_run(std::vector<std::string> args)
{
	args.insert(args.begin(), MCPCTL_PATH);
	return test::run(args, {"MCP_DEVICE=/nonexistent/mcp"});
}

static bool one_error_line(const std::string &err)
{
	return err.starts_with("mcpctl: ") && err.ends_with("\n") && err.find('\n') == err.size() - 1;
}

Test(devices_cli, usage_errors_exit_2)
{
	for (auto args : {std::vector<std::string>{"dev", "info", "edu"},
			  {"dev", "info"},
			  {"dev"},
			  {"bar", "read", "0", "6", "0"},
			  {"bar", "read", "0", "0", "0x3"},
			  {"bar", "read", "0", "0", "0", "--width", "16"},
			  {"bar", "write", "0", "0", "0x4", "0x100000000"},
			  {"bar", "write", "0", "0", "0x4"},
			  {"bar", "dump", "0", "0", "2"},
			  {"irq", "wait", "0", "--count", "0"},
			  {"irq", "wait", "00:04.9"}}) {
		test::RunResult r = mcpctl_run(args);
		cr_expect_eq(r.exit_code, 2, "%s: %s", args[0].c_str(), r.err.c_str());
		cr_expect(one_error_line(r.err), "stderr: %s", r.err.c_str());
		cr_expect(r.out.empty());
	}
}

Test(devices_cli, without_module_exit_1_with_one_line)
{
	for (auto args : {std::vector<std::string>{"devices"},
			  {"devices", "--json"},
			  {"dev", "info", "0"},
			  {"bar", "read", "0000:00:04.0", "0", "0"},
			  {"bar", "dump", "0", "0"},
			  {"irq", "wait", "0", "--timeout", "10"}}) {
		test::RunResult r = mcpctl_run(args);
		cr_expect_eq(r.exit_code, 1, "%s: %s", args[0].c_str(), r.err.c_str());
		cr_expect_eq(r.err, "mcpctl: the mcp kernel module is not loaded: run 'sudo modprobe mcp'\n");
		cr_expect(r.out.empty());
	}
}

Test(devices_cli, dev_link_reads_this_host)
{
	test::RunResult r = mcpctl_run({"dev", "link", "--json"});

	cr_assert_eq(r.exit_code, 0, "%s", r.err.c_str());
	json j = json::parse(r.out);
	cr_expect(j.is_array());
	test::RunResult t = mcpctl_run({"dev", "link"});
	cr_expect_eq(t.exit_code, 0);
	cr_expect(t.out.find(" degraded; ") != std::string::npos, "%s", t.out.c_str());
	test::RunResult bad = mcpctl_run({"dev", "link", "--sysfs", "/nonexistent"});
	cr_expect_eq(bad.exit_code, 1);
	cr_expect(one_error_line(bad.err), "%s", bad.err.c_str());
}
