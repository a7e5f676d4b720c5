// SPDX-License-Identifier: GPL-2.0-only
// mcpctl qos: QoS classes and CPU slices as cgroup v2 groups under
// /sys/fs/cgroup/mcp.slice (create, attach, show, delete).
#include <cctype>
#include <cerrno>
#include <ostream>

#include <fmt/format.h>

#include "commands.hpp"
#include "output.hpp"

namespace mcpctl {

namespace {

struct QosArgs {
	std::string name;
	std::string cls = "best-effort";
	double cpus = 0;
	int node = -1;
	std::string memory_min;
	std::string memory_low;
	int pid = -1;
	std::string mount = mcp::QosGroup::default_mount;
	CLI::App *create = nullptr;
	CLI::App *attach = nullptr;
	CLI::App *show = nullptr;
	CLI::App *del = nullptr;
	CLI::Option *cpus_opt = nullptr;
} args;

std::string opt_u64(const std::optional<std::uint64_t> &v)
{
	return v ? std::to_string(*v) : std::string("-");
}

int run_create()
{
	mcp::QosSpec spec;
	std::optional<mcp::QosClass> cls = mcp::parse_qos_class(args.cls);

	if (!cls)
		throw mcp::Error(EINVAL, "unknown QoS class '" + args.cls +
						 "': use guaranteed, burstable or best-effort");
	spec.cls = *cls;
	if (args.cpus_opt->count())
		spec.cpus = args.cpus;
	if (args.node >= 0)
		spec.node = static_cast<unsigned>(args.node);
	if (!args.memory_min.empty())
		spec.memory_min = parse_size(args.memory_min);
	if (!args.memory_low.empty())
		spec.memory_low = parse_size(args.memory_low);
	mcp::QosGroup(args.name, args.mount).create(spec);
	return exit_ok;
}

} // namespace

std::uint64_t parse_size(std::string_view text)
{
	std::size_t i = 0;
	std::uint64_t v = 0;

	while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) {
		if (v > (UINT64_MAX - 9) / 10)
			throw mcp::Error(EINVAL, "size '" + std::string(text) + "' is too large");
		v = v * 10 + static_cast<unsigned>(text[i++] - '0');
	}
	if (i == 0)
		throw mcp::Error(EINVAL, "'" + std::string(text) +
						 "' is not a size: use bytes or a K, M, G, T suffix (e.g. 512M)");
	std::string suffix(text.substr(i));
	for (char &c : suffix)
		c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
	unsigned shift = 0;
	if (suffix.empty() || suffix == "B")
		shift = 0;
	else if (suffix == "K" || suffix == "KB" || suffix == "KIB")
		shift = 10;
	else if (suffix == "M" || suffix == "MB" || suffix == "MIB")
		shift = 20;
	else if (suffix == "G" || suffix == "GB" || suffix == "GIB")
		shift = 30;
	else if (suffix == "T" || suffix == "TB" || suffix == "TIB")
		shift = 40;
	else
		throw mcp::Error(EINVAL, "'" + std::string(text) +
						 "' is not a size: use bytes or a K, M, G, T suffix (e.g. 512M)");
	if (shift && v > (UINT64_MAX >> shift))
		throw mcp::Error(EINVAL, "size '" + std::string(text) + "' is too large");
	return v << shift;
}

std::string format_qos_text(const mcp::QosInfo &i)
{
	std::string s;

	s += fmt::format("{}: class {}\n", i.name, i.cls ? mcp::to_string(*i.cls) : "custom");
	s += fmt::format("  path: {}\n", i.path);
	s += fmt::format("  cpu.max: {}\n", i.cpu_max.empty() ? "-" : i.cpu_max);
	s += fmt::format("  cpu.weight: {}\n", opt_u64(i.cpu_weight));
	s += fmt::format("  memory.min: {}\n", opt_u64(i.memory_min));
	s += fmt::format("  memory.low: {}\n", opt_u64(i.memory_low));
	s += fmt::format("  cpuset.cpus: {}\n", i.cpuset_cpus.empty() ? "-" : i.cpuset_cpus);
	s += fmt::format("  cpuset.mems: {}\n", i.cpuset_mems.empty() ? "-" : i.cpuset_mems);
	s += "  pids:";
	if (i.pids.empty())
		s += " -";
	for (int pid : i.pids)
		s += fmt::format(" {}", pid);
	s += '\n';
	return s;
}

nlohmann::ordered_json qos_json(const mcp::QosInfo &i)
{
	auto opt = [](const std::optional<std::uint64_t> &v) -> nlohmann::ordered_json {
		if (v)
			return *v;
		return nullptr;
	};
	return {
		{"name", i.name},
		{"path", i.path},
		{"class", i.cls ? nlohmann::ordered_json(mcp::to_string(*i.cls)) : nullptr},
		{"cpu_max", i.cpu_max},
		{"cpu_weight", opt(i.cpu_weight)},
		{"memory_min", opt(i.memory_min)},
		{"memory_low", opt(i.memory_low)},
		{"cpuset_cpus", i.cpuset_cpus},
		{"cpuset_mems", i.cpuset_mems},
		{"pids", i.pids},
	};
}

static int run_qos(const GlobalOptions &opts, std::ostream &out, std::ostream &err)
{
	try {
		if (args.create->parsed())
			return run_create();
		if (args.attach->parsed()) {
			mcp::QosGroup(args.name, args.mount).attach(args.pid);
			return exit_ok;
		}
		if (args.del->parsed()) {
			mcp::QosGroup(args.name, args.mount).remove();
			return exit_ok;
		}
		std::vector<mcp::QosInfo> infos;
		if (!args.name.empty())
			infos.push_back(mcp::QosGroup(args.name, args.mount).info());
		else
			for (const std::string &n : mcp::QosGroup::list(args.mount))
				infos.push_back(mcp::QosGroup(n, args.mount).info());
		if (opts.json) {
			nlohmann::ordered_json doc = nlohmann::ordered_json::array();
			for (const mcp::QosInfo &i : infos)
				doc.push_back(qos_json(i));
			print_json(out, args.name.empty() ? doc : doc[0]);
		} else {
			for (const mcp::QosInfo &i : infos)
				out << format_qos_text(i);
		}
		out.flush();
		return exit_ok;
	} catch (const mcp::Error &e) {
		print_error(err, e.what());
		return exit_failure;
	}
}

Command add_qos_command(CLI::App &app)
{
	CLI::App *sub = app.add_subcommand(
		"qos", "Manage QoS groups (cgroup v2 under /sys/fs/cgroup/mcp.slice)");

	sub->require_subcommand(1);
	sub->add_option("--cgroup-root", args.mount,
			"Where cgroup v2 is mounted (default /sys/fs/cgroup)");

	args.create = sub->add_subcommand("create", "Create (or reconfigure) a QoS group");
	args.create->add_option("name", args.name, "Group name")->required();
	args.create->add_option("--class", args.cls,
				"guaranteed (memory.min 512M, cpu.weight 800), "
				"burstable (memory.low 256M, cpu.weight 400) or best-effort")
		->required();
	args.cpus_opt = args.create->add_option("--cpus", args.cpus,
						"CPU slice in vCores for cpu.max, at least 0.125");
	args.create->add_option("--node", args.node, "Tie cpuset.cpus/cpuset.mems to this node")
		->check(CLI::NonNegativeNumber);
	args.create->add_option("--memory-min", args.memory_min,
				"memory.min of a guaranteed group (default 512M)");
	args.create->add_option("--memory-low", args.memory_low,
				"memory.low of a burstable group (default 256M)");

	args.attach = sub->add_subcommand("attach", "Move a process into a QoS group");
	args.attach->add_option("name", args.name, "Group name")->required();
	args.attach->add_option("pid", args.pid, "Process id")
		->required()
		->check(CLI::NonNegativeNumber);

	args.show = sub->add_subcommand("show", "Show one QoS group, or all of them");
	args.show->add_option("name", args.name, "Group name (default: all)");

	args.del = sub->add_subcommand("delete", "Remove an empty QoS group");
	args.del->add_option("name", args.name, "Group name")->required();

	sub->footer("'qos show --json' prints one object (or an array of them for all groups): "
		    "{\"name\",\"path\",\"class\",\"cpu_max\",\"cpu_weight\",\"memory_min\","
		    "\"memory_low\",\"cpuset_cpus\",\"cpuset_mems\",\"pids\"} "
		    "(see Documentation/qos.rst).");
	return {sub, run_qos};
}

} // namespace mcpctl
