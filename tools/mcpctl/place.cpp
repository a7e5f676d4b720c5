// SPDX-License-Identifier: GPL-2.0-only
// mcpctl place: place a task on a NUMA node (MCP_IOC_PLACE) and print what
// the module decided: node, previous node, reason, home node and its
// source, idle CPUs per node, and the CPUs applied.
#include <ostream>

#include <fmt/format.h>

#include "commands.hpp"
#include "output.hpp"

namespace mcpctl {

namespace {

struct PlaceArgs {
	int pid = -1;
	bool dry_run = false;
	bool force = false;
	bool keep = false;
	bool strict = false;
	bool adaptive = false;
	unsigned runq_threshold_us = 0;
	bool no_histogram = false;
	int node = -1;
	unsigned sample_pages = 4096;
} args;

std::string node_str(int node)
{
	return node < 0 ? std::string("none") : std::to_string(node);
}

} // namespace

std::string format_place_text(const mcp::PlaceResult &r)
{
	const std::string who = r.pid == 0 ? std::string("self") : "pid " + std::to_string(r.pid);
	std::string s;

	s += fmt::format("{}: {} node {} ({})\n", who,
			 r.dry_run ? "would place on" : "placed on", node_str(r.node_chosen),
			 mcp::to_string(r.reason));
	s += fmt::format("previous node: {}\n", node_str(r.prev_node));
	s += fmt::format("home node: {} (source: {})\n", node_str(r.home_node),
			 mcp::to_string(r.home_source));
	if (r.histogram) {
		s += fmt::format("histogram: {} of {} sampled pages resident:", r.histogram->resident,
				 r.histogram->sampled);
		for (std::size_t n = 0; n < r.histogram->pages_per_node.size(); n++)
			s += fmt::format(" node{} {}", n, r.histogram->pages_per_node[n]);
		s += '\n';
	} else if (!r.histogram_error.empty()) {
		s += fmt::format("histogram: none ({})\n", r.histogram_error);
	}
	s += "idle cpus:";
	for (std::size_t n = 0; n < r.idle_cpus.size(); n++)
		s += fmt::format(" node{} {}", n, r.idle_cpus[n]);
	s += '\n';
	s += fmt::format("cpus: {}\n", r.cpus.empty() ? std::string("none") : format_ranges(r.cpus));
	return s;
}

nlohmann::ordered_json place_json(const mcp::PlaceResult &r)
{
	nlohmann::ordered_json idle = nlohmann::ordered_json::array();
	nlohmann::ordered_json hist = nullptr;

	for (std::size_t n = 0; n < r.idle_cpus.size(); n++)
		idle.push_back({{"node", n}, {"idle_cpus", r.idle_cpus[n]}});
	if (r.histogram)
		hist = {
			{"sampled", r.histogram->sampled},
			{"resident", r.histogram->resident},
			{"pages_per_node", r.histogram->pages_per_node},
		};
	nlohmann::ordered_json doc = {
		{"pid", r.pid},
		{"dry_run", r.dry_run},
		{"node_chosen", r.node_chosen},
		{"prev_node", r.prev_node},
		{"home_node", r.home_node},
		{"reason", mcp::to_string(r.reason)},
		{"home_source", mcp::to_string(r.home_source)},
		{"idle", std::move(idle)},
		{"cpus", r.cpus},
		{"cpu_list", format_ranges(r.cpus)},
		{"histogram", std::move(hist)},
	};
	if (!r.histogram_error.empty())
		doc["histogram_error"] = r.histogram_error;
	return doc;
}

static int run_place(const GlobalOptions &opts, std::ostream &out, std::ostream &err)
{
	mcp::PlaceOptions po;

	po.dry_run = args.dry_run;
	po.force = args.force;
	po.keep = args.keep;
	po.strict = args.strict;
	po.adaptive = args.adaptive;
	po.runq_threshold_us = args.runq_threshold_us;
	po.histogram = !args.no_histogram;
	po.sample_pages = args.sample_pages;
	if (args.node >= 0)
		po.node = static_cast<unsigned>(args.node);

	mcp::PlaceResult r;
	try {
		r = mcp::Device::open().place(args.pid, po);
	} catch (const mcp::Error &e) {
		print_error(err, e.what());
		return exit_failure;
	}
	if (opts.json)
		print_json(out, place_json(r));
	else
		out << format_place_text(r);
	out.flush();
	return exit_ok;
}

Command add_place_command(CLI::App &app)
{
	CLI::App *sub = app.add_subcommand(
		"place", "Place a task on a NUMA node next to its memory (MCP_IOC_PLACE)");

	sub->add_option("-p,--pid", args.pid, "Thread id of the task (0 = mcpctl itself)")
		->required()
		->check(CLI::NonNegativeNumber);
	sub->add_flag("--dry-run", args.dry_run, "Decide and report, do not apply");
	sub->add_flag("--force", args.force, "Ignore stickiness (stickiness_ms)");
	CLI::Option *keep =
		sub->add_flag("--keep", args.keep, "Let the in-kernel rebalancer re-evaluate the task");
	CLI::Option *adaptive =
		sub->add_flag("--adaptive", args.adaptive,
			      "With --keep: also move the task off a node where it waits too long "
			      "to run (adaptive_runq_us, adaptive_periods)")
			->needs(keep);
	sub->add_option("--runq-threshold-us", args.runq_threshold_us,
			"With --adaptive: the mean wait per run that is too long (default: the "
			"adaptive_runq_us knob)")
		->check(CLI::Range(1u, 10000000u))
		->needs(adaptive);
	sub->add_flag("--strict", args.strict,
		      "Fail (exit 1) when no node has enough idle CPUs instead of leaving the task");
	sub->add_option("--node", args.node, "Place on this node, no decision")
		->check(CLI::NonNegativeNumber);
	sub->add_flag("--no-histogram", args.no_histogram,
		      "Do not sample the task's pages; the module finds the home node itself");
	sub->add_option("--sample-pages", args.sample_pages,
			"Pages sampled for the histogram (default 4096)")
		->check(CLI::Range(1, 1 << 20));
	sub->footer("With --json, prints one object: {\"pid\",\"dry_run\",\"node_chosen\","
		    "\"prev_node\",\"home_node\",\"reason\",\"home_source\","
		    "\"idle\":[{\"node\",\"idle_cpus\"}],\"cpus\":[...],\"cpu_list\","
		    "\"histogram\":{\"sampled\",\"resident\",\"pages_per_node\"}|null"
		    "[,\"histogram_error\"]} (see Documentation/mcpctl.rst).");
	return {sub, run_place};
}

} // namespace mcpctl
