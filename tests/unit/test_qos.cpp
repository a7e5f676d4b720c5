// SPDX-License-Identifier: GPL-2.0-only
// QoS groups against a temporary directory laid out like a cgroup v2 root:
// the files written, the refusals, and the errors.
#include <cerrno>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <criterion/criterion.h>

#include "commands.hpp"
#include "internal.hpp"

namespace fs = std::filesystem;

static std::string slurp(const fs::path &p)
{
	std::ifstream f(p);
	std::stringstream s;

	s << f.rdbuf();
	return s.str();
}

static void put(const fs::path &p, const std::string &v)
{
	std::ofstream(p) << v;
}

// A cgroup2-like root with mcp.slice already there (the kernel would fill
// a child's cgroup.controllers; a plain directory needs it written).
static fs::path fake_root(const std::string &controllers = "cpuset cpu io memory pids\n")
{
	char tmpl[] = "/tmp/mcp-qos-XXXXXX";
	fs::path root = mkdtemp(tmpl);

	put(root / "cgroup.controllers", controllers);
	put(root / "cgroup.subtree_control", "");
	fs::create_directory(root / "mcp.slice");
	put(root / "mcp.slice" / "cgroup.controllers", controllers);
	put(root / "mcp.slice" / "cgroup.subtree_control", "");
	return root;
}

static int errnum_of(auto &&fn)
{
	try {
		fn();
	} catch (const mcp::Error &e) {
		return e.errnum();
	}
	return 0;
}

Test(qos, cpu_max_values)
{
	cr_expect_eq(mcp::detail::cpu_max_for(0.125), "12500 100000");
	cr_expect_eq(mcp::detail::cpu_max_for(0.5), "50000 100000");
	cr_expect_eq(mcp::detail::cpu_max_for(1), "100000 100000");
	cr_expect_eq(mcp::detail::cpu_max_for(2.25), "225000 100000");
	cr_expect_eq(errnum_of([] { mcp::detail::cpu_max_for(0.1); }), EINVAL);
	cr_expect_eq(errnum_of([] { mcp::detail::cpu_max_for(0.124); }), EINVAL);
	cr_expect_eq(errnum_of([] { mcp::detail::cpu_max_for(0); }), EINVAL);
	cr_expect_eq(errnum_of([] { mcp::detail::cpu_max_for(-1); }), EINVAL);
	try {
		mcp::detail::cpu_max_for(0.1);
	} catch (const mcp::Error &e) {
		cr_expect(std::string(e.what()).find("0.125") != std::string::npos, "%s", e.what());
	}
}

Test(qos, class_names)
{
	cr_expect_eq(mcp::parse_qos_class("guaranteed"), mcp::QosClass::guaranteed);
	cr_expect_eq(mcp::parse_qos_class("Burstable"), mcp::QosClass::burstable);
	cr_expect_eq(mcp::parse_qos_class("besteffort"), mcp::QosClass::best_effort);
	cr_expect_eq(mcp::parse_qos_class("best-effort"), mcp::QosClass::best_effort);
	cr_expect(!mcp::parse_qos_class("gold"));
	cr_expect_str_eq(mcp::to_string(mcp::QosClass::best_effort), "best-effort");
	cr_expect_eq(mcp::detail::cpu_weight_for(mcp::QosClass::guaranteed), 800u);
	cr_expect_eq(mcp::detail::cpu_weight_for(mcp::QosClass::burstable), 400u);
}

Test(qos, guaranteed_files)
{
	fs::path root = fake_root();
	mcp::QosSpec spec;

	spec.cls = mcp::QosClass::guaranteed;
	spec.cpus = 0.5;
	spec.node = 1;
	spec.node_cpus = {2, 3};
	mcp::QosGroup g("infer", root);
	g.create(spec);

	const fs::path dir = root / "mcp.slice" / "infer";
	cr_expect_eq(g.path(), dir.string());
	cr_expect_eq(slurp(root / "cgroup.subtree_control"), "+cpu +memory +cpuset");
	cr_expect_eq(slurp(root / "mcp.slice" / "cgroup.subtree_control"), "+cpu +memory +cpuset");
	cr_expect_eq(slurp(dir / "cpu.max"), "50000 100000");
	cr_expect_eq(slurp(dir / "cpu.weight"), "800");
	cr_expect_eq(slurp(dir / "memory.min"), "536870912");
	cr_expect_eq(slurp(dir / "memory.low"), "0");
	cr_expect_eq(slurp(dir / "cpuset.cpus"), "2,3");
	cr_expect_eq(slurp(dir / "cpuset.mems"), "1");

	put(dir / "cgroup.procs", "");
	g.attach(4242);
	cr_expect_eq(slurp(dir / "cgroup.procs"), "4242");

	mcp::QosInfo i = g.info();
	cr_expect_eq(i.cls, mcp::QosClass::guaranteed);
	cr_expect_eq(i.cpu_max, "50000 100000");
	cr_expect_eq(i.cpu_weight, 800u);
	cr_expect_eq(i.pids, std::vector<int>{4242});
	std::string text = mcpctl::format_qos_text(i);
	cr_expect(text.starts_with("infer: class guaranteed\n"), "%s", text.c_str());
	cr_expect_eq(mcpctl::qos_json(i)["memory_min"], 536870912u);
	cr_expect_eq(mcp::QosGroup::list(root), std::vector<std::string>{"infer"});
	fs::remove_all(root);
}

Test(qos, burstable_and_sizes)
{
	fs::path root = fake_root();
	mcp::QosSpec spec;

	spec.cls = mcp::QosClass::burstable;
	spec.memory_low = 128ULL << 20;
	mcp::QosGroup("b", root).create(spec);
	const fs::path dir = root / "mcp.slice" / "b";
	cr_expect_eq(slurp(dir / "cpu.weight"), "400");
	cr_expect_eq(slurp(dir / "memory.low"), "134217728");
	cr_expect_eq(slurp(dir / "cpu.max"), "max 100000");
	cr_expect(!fs::exists(dir / "cpuset.cpus"));
	cr_expect_eq(slurp(root / "cgroup.subtree_control"), "+cpu +memory");

	spec = {};
	spec.cls = mcp::QosClass::burstable;
	mcp::QosGroup("b2", root).create(spec);
	cr_expect_eq(slurp(root / "mcp.slice" / "b2" / "memory.low"), "268435456");
	fs::remove_all(root);
}

Test(qos, refusals)
{
	fs::path root = fake_root();
	mcp::QosSpec spec;

	spec.cls = mcp::QosClass::guaranteed;
	spec.cpus = 0.1;
	cr_expect_eq(errnum_of([&] { mcp::QosGroup("x", root).create(spec); }), EINVAL);
	cr_expect(!fs::exists(root / "mcp.slice" / "x"), "nothing is created before validation");
	spec.cpus = -1;
	cr_expect_eq(errnum_of([&] { mcp::QosGroup("x", root).create(spec); }), EINVAL);
	spec.cpus.reset();
	spec.memory_low = 1;
	cr_expect_eq(errnum_of([&] { mcp::QosGroup("x", root).create(spec); }), EINVAL);
	cr_expect_eq(errnum_of([&] { mcp::QosGroup("a/b", root); }), EINVAL);
	cr_expect_eq(errnum_of([&] { mcp::QosGroup("..", root); }), EINVAL);
	cr_expect_eq(errnum_of([&] { mcp::QosGroup("", root); }), EINVAL);
	cr_expect_eq(errnum_of([&] { mcp::QosGroup("nope", root).attach(1); }), ENOENT);
	fs::remove_all(root);
}

Test(qos, missing_mount_and_controller)
{
	mcp::QosSpec spec;

	spec.cls = mcp::QosClass::guaranteed;
	try {
		mcp::QosGroup("x", "/nonexistent/cgroup").create(spec);
		cr_assert_fail("no exception");
	} catch (const mcp::Error &e) {
		cr_expect_eq(e.errnum(), ENOENT);
		cr_expect(std::string(e.what()).starts_with(
				  "cgroup v2 is not mounted at /nonexistent/cgroup"),
			  "%s", e.what());
	}

	fs::path root = fake_root("cpu pids\n");
	try {
		mcp::QosGroup("x", root).create(spec);
		cr_assert_fail("no exception");
	} catch (const mcp::Error &e) {
		cr_expect_eq(e.errnum(), EOPNOTSUPP);
		cr_expect(std::string(e.what()).find("memory controller is not available") !=
				  std::string::npos,
			  "%s", e.what());
	}
	fs::remove_all(root);
}

Test(qos, c_api)
{
	fs::path root = fake_root();
	struct mcp_qos_spec spec = {};

	spec.size = sizeof(spec);
	spec.qos_class = MCP_QOS_GUARANTEED;
	spec.cpus = 0.125;
	spec.node = -1;
	spec.memory_min = 1ULL << 30;
	cr_assert_eq(mcp_qos_create(root.c_str(), "c", &spec), 0, "%s", mcp_strerror_last());
	cr_expect_eq(slurp(root / "mcp.slice" / "c" / "cpu.max"), "12500 100000");
	cr_expect_eq(slurp(root / "mcp.slice" / "c" / "memory.min"), "1073741824");
	spec.cpus = 0.05;
	cr_expect_eq(mcp_qos_create(root.c_str(), "c", &spec), -EINVAL);
	cr_expect(std::string(mcp_strerror_last()).find("0.125") != std::string::npos);
	cr_expect_eq(mcp_qos_create("/nonexistent", "c", &spec), -EINVAL); // validated first
	spec.cpus = 0;
	cr_expect_eq(mcp_qos_create("/nonexistent", "c", &spec), -ENOENT);
	cr_expect_eq(mcp_qos_delete(root.c_str(), "missing"), -ENOENT);
	fs::remove_all(root);
}

Test(qos, sizes)
{
	cr_expect_eq(mcpctl::parse_size("512M"), 512ULL << 20);
	cr_expect_eq(mcpctl::parse_size("1G"), 1ULL << 30);
	cr_expect_eq(mcpctl::parse_size("256MiB"), 256ULL << 20);
	cr_expect_eq(mcpctl::parse_size("4096"), 4096u);
	cr_expect_eq(errnum_of([] { mcpctl::parse_size("lots"); }), EINVAL);
	cr_expect_eq(errnum_of([] { mcpctl::parse_size("5X"); }), EINVAL);
	cr_expect_eq(errnum_of([] { mcpctl::parse_size("99999999999999T"); }), EINVAL);
}

// A memoryless node's group takes the nearest node with memory.
Test(qos, memory_node_of_a_memoryless_node_is_the_nearest)
{
	// The memless VM: node 2 (no memory) is 24 from node 0, 17 from node 1.
	const std::vector<unsigned> mem{0, 1}, online{0, 1, 2};

	cr_expect_eq(mcp::detail::qos_memory_node(2, mem, online, {24, 17, 10}), 1u);
	cr_expect_eq(mcp::detail::qos_memory_node(1, mem, online, {31, 10, 17}), 1u);
	// Ties go to the lowest id.
	cr_expect_eq(mcp::detail::qos_memory_node(2, mem, online, {20, 20, 10}), 0u);
	// Nothing known: the node itself (the kernel's refusal will say).
	cr_expect_eq(mcp::detail::qos_memory_node(2, {}, online, {24, 17, 10}), 2u);
	cr_expect_eq(mcp::detail::qos_memory_node(2, mem, online, {}), 2u);
}
