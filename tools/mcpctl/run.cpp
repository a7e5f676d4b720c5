// SPDX-License-Identifier: GPL-2.0-only
// mcpctl run: like numactl, place mcpctl itself on a node (decided by the
// module, or named with --node), optionally join a QoS group, then exec the
// command, which inherits the affinity and the cgroup.
#include <cerrno>
#include <cstring>
#include <ostream>
#include <vector>

#include <unistd.h>

#include <fmt/format.h>

#include "commands.hpp"
#include "output.hpp"

namespace mcpctl {

namespace {

struct RunArgs {
	bool automatic = false;
	int node = -1;
	std::string qos;
	double cpus = 0;
	bool keep = false;
	bool no_histogram = false;
	std::vector<std::string> command;
	CLI::Option *cpus_opt = nullptr;
} args;

// Removes the groups of earlier `mcpctl run --qos` whose processes are all
// gone (rmdir fails with EBUSY for the others).  Best effort.
void prune_run_groups(const std::string &mine)
{
	try {
		for (const std::string &name : mcp::QosGroup::list())
			if (name.rfind("run-", 0) == 0 && name != mine)
				try {
					mcp::QosGroup(name).remove();
				} catch (const mcp::Error &) {
				}
	} catch (const mcp::Error &) {
	}
}

int run_run(const GlobalOptions &, std::ostream &, std::ostream &err)
{
	const bool cpus_given = args.cpus_opt && args.cpus_opt->count() > 0;
	const bool want_qos = !args.qos.empty() || cpus_given;
	mcp::QosSpec spec;

	if (!args.qos.empty()) {
		std::optional<mcp::QosClass> cls = mcp::parse_qos_class(args.qos);
		if (!cls) {
			print_error(err, "unknown QoS class '" + args.qos +
						 "': use guaranteed, burstable or best-effort");
			return exit_usage;
		}
		spec.cls = *cls;
	}
	if (cpus_given)
		spec.cpus = args.cpus;

	try {
		mcp::Device dev = mcp::Device::open();
		mcp::PlaceOptions po;

		po.keep = args.keep;
		// A named node needs no evidence of where the memory is.
		po.histogram = !args.no_histogram && args.node < 0;
		if (args.node >= 0)
			po.node = static_cast<unsigned>(args.node);

		if (want_qos) {
			// The group's cpuset follows the node; joining a cpuset
			// resets the affinity, so join first and place after.
			int node = args.node;
			if (node < 0) {
				mcp::PlaceOptions dry = po;
				dry.dry_run = true;
				node = dev.place(0, dry).node_chosen;
			}
			if (node >= 0) {
				spec.node = static_cast<unsigned>(node);
				po.node = static_cast<unsigned>(node);
			}
			const std::string name = run_group_name(static_cast<int>(::getpid()));
			prune_run_groups(name);
			mcp::QosGroup group(name);
			group.create(spec);
			group.attach(0);
		}
		dev.place(0, po);
	} catch (const mcp::Error &e) {
		print_error(err, e.what());
		return exit_failure;
	}

	std::vector<char *> argv;
	for (std::string &a : args.command)
		argv.push_back(a.data());
	argv.push_back(nullptr);
	::execvp(argv[0], argv.data());
	int e = errno;
	if (e == ENOENT) {
		print_error(err, args.command[0] + ": command not found");
		return 127;
	}
	print_error(err, "cannot run " + args.command[0] + ": " + std::strerror(e));
	return 126;
}

} // namespace

std::string run_group_name(int pid)
{
	return fmt::format("run-{}", pid);
}

Command add_run_command(CLI::App &app)
{
	CLI::App *sub = app.add_subcommand(
		"run", "Run a command placed on a NUMA node (like numactl), optionally in a QoS group");

	auto *autoopt = sub->add_flag("--auto", args.automatic,
				      "Let the module choose the node (the default)");
	sub->add_option("--node", args.node, "Run on this node's CPUs")
		->check(CLI::NonNegativeNumber)
		->excludes(autoopt);
	sub->add_option("--qos", args.qos,
			"Run in a QoS group of this class: guaranteed, burstable, best-effort");
	args.cpus_opt = sub->add_option("--cpus", args.cpus, "CPU slice in vCores (cpu.max), at least 0.125");
	sub->add_flag("--keep", args.keep, "Let the in-kernel rebalancer re-evaluate the command");
	sub->add_flag("--no-histogram", args.no_histogram, "Do not sample pages before placing");
	sub->add_option("command", args.command, "The command and its arguments (after --)")
		->required();
	sub->positionals_at_end();
	sub->footer("With --qos or --cpus, the command runs in cgroup mcp.slice/run-PID "
		    "(cpuset tied to the node); groups of finished runs are removed by later runs "
		    "or 'mcpctl qos delete'.  Exit status: the command's; 127 when it is not found, "
		    "126 when it cannot be executed, 1 when placement fails, 2 for usage errors.");
	return {sub, run_run};
}

} // namespace mcpctl
