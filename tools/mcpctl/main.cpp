// SPDX-License-Identifier: GPL-2.0-only
// mcpctl: the command line of MCP.  Parses the global options and
// dispatches to one subcommand; see Documentation/mcpctl.rst.
#include <exception>
#include <iostream>
#include <vector>

#include "commands.hpp"
#include "output.hpp"

int main(int argc, char **argv)
{
	using namespace mcpctl;

	CLI::App app{"mcpctl: inspect and control MCP (Model Control Protocol) on this host", "mcpctl"};
	GlobalOptions opts;

	app.add_flag("-j,--json", opts.json, "Print JSON (one document per command) instead of text");
	// Unknown options of a subcommand fall through to here, so -j/--json
	// works before and after the subcommand.
	app.fallthrough();
	// At most one; none is reported below, so that "mcpctl bogus" is
	// blamed on "bogus" rather than on a missing command.
	app.require_subcommand(0, 1);
	app.footer("Exit status: 0 success, 1 failure, 2 usage error.\n"
		   "Run 'mcpctl COMMAND --help' for the options of a command.");

	const std::vector<Command> commands = {
		add_version_command(app),
		add_info_command(app),
		add_monitor_command(app),
		add_place_command(app),
		add_unplace_command(app),
		add_run_command(app),
		add_qos_command(app),
		add_tune_command(app),
		add_devices_command(app),
		add_dev_command(app),
		add_bar_command(app),
		add_irq_command(app),
		add_bo_command(app),
		add_dma_command(app),
		add_trace_command(app),
		add_top_command(app),
		add_pool_command(app),
		add_graph_command(app),
	};

	try {
		app.parse(argc, argv);
	} catch (const CLI::ParseError &e) {
		if (e.get_exit_code() == static_cast<int>(CLI::ExitCodes::Success))
			return app.exit(e); // --help: prints to stdout
		print_error(std::cerr, std::string(e.what()) + " (run 'mcpctl --help' for usage)");
		return exit_usage;
	}

	try {
		for (const Command &cmd : commands)
			if (cmd.app->parsed())
				return cmd.run(opts, std::cout, std::cerr);
	} catch (const std::exception &e) {
		print_error(std::cerr, e.what());
		return exit_failure;
	}
	print_error(std::cerr, "no command given (run 'mcpctl --help' for usage)");
	return exit_usage;
}
