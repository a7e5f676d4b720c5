// SPDX-License-Identifier: GPL-2.0-only
// mcpctl unplace: give a task back the affinity it had before MCP placed it
// (MCP_IOC_UNPLACE).
#include <ostream>

#include <fmt/format.h>

#include "commands.hpp"
#include "output.hpp"

namespace mcpctl {

namespace {

int unplace_pid = -1;

int run_unplace(const GlobalOptions &opts, std::ostream &out, std::ostream &err)
{
	try {
		mcp::Device::open().unplace(unplace_pid);
	} catch (const mcp::Error &e) {
		print_error(err, e.what());
		return exit_failure;
	}
	if (opts.json)
		print_json(out, {{"pid", unplace_pid}, {"unplaced", true}});
	else
		out << fmt::format("pid {}: unplaced, original affinity restored\n", unplace_pid);
	out.flush();
	return exit_ok;
}

} // namespace

Command add_unplace_command(CLI::App &app)
{
	CLI::App *sub = app.add_subcommand(
		"unplace", "Restore the affinity a task had before MCP placed it (MCP_IOC_UNPLACE)");

	sub->add_option("-p,--pid", unplace_pid, "Thread id of the task")
		->required()
		->check(CLI::NonNegativeNumber);
	sub->footer("With --json, prints {\"pid\":N,\"unplaced\":true}. "
		    "A task MCP never placed is an error (exit 1).");
	return {sub, run_unplace};
}

} // namespace mcpctl
