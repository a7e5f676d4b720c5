// SPDX-License-Identifier: GPL-2.0-only
// mcpctl tune: the tuning registry (list, get) and changes through a
// session (set and reset, committed; run, rolled back when the command
// ends).  Documentation/tuning.rst has the rules.
#include <cerrno>
#include <csignal>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <sys/wait.h>
#include <unistd.h>

#include "commands.hpp"
#include "output.hpp"

namespace mcpctl {

namespace {

struct TuneArgs {
	CLI::App *list = nullptr;
	CLI::App *get = nullptr;
	CLI::App *set = nullptr;
	CLI::App *reset = nullptr;
	CLI::App *run = nullptr;
	std::optional<unsigned> cpu;
	std::string knob;
	std::vector<std::string> assignments;
	std::vector<std::string> command;
};

TuneArgs args;

std::string opt_value(const std::optional<std::uint64_t> &v)
{
	return v ? std::to_string(*v) : "-";
}

// Sets every KNOB=VALUE of @assignments in @session (on --cpu or all CPUs).
void apply(mcp::TuneSession &session, const std::vector<std::string> &assignments,
	   std::optional<unsigned> cpu)
{
	for (const auto &[name, value] : parse_tune_assignments(assignments))
		session.set(name, value, cpu);
}

int run_command(mcp::TuneSession &session, std::ostream &err)
{
	std::vector<char *> argv;
	int status;

	for (std::string &a : args.command)
		argv.push_back(a.data());
	argv.push_back(nullptr);

	const pid_t pid = ::fork();
	if (pid < 0) {
		print_error(err, std::string("cannot fork: ") + std::strerror(errno));
		return exit_failure;
	}
	if (pid == 0) {
		// The session fd is O_CLOEXEC: the command never holds it.
		::execvp(argv[0], argv.data());
		_exit(errno == ENOENT ? 127 : 126);
	}
	// Ctrl-C reaches the command; mcpctl stays to roll back.
	std::signal(SIGINT, SIG_IGN);
	std::signal(SIGQUIT, SIG_IGN);
	while (::waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return exit_failure;
	(void)session;
	if (WIFEXITED(status)) {
		if (WEXITSTATUS(status) == 127)
			print_error(err, args.command[0] + ": command not found (or it exited 127)");
		return WEXITSTATUS(status);
	}
	return 128 + WTERMSIG(status);
}

int run_tune(const GlobalOptions &opts, std::ostream &out, std::ostream &err)
{
	try {
		mcp::Device dev = mcp::Device::open();

		if (args.list->parsed() || args.get->parsed()) {
			auto knobs = mcp::tune_list(dev, args.cpu.value_or(0));

			if (args.get->parsed())
				knobs = {mcp::tune_find(knobs, args.knob)};
			if (opts.json) {
				nlohmann::ordered_json doc = nlohmann::ordered_json::array();
				for (const auto &k : knobs)
					doc.push_back(tune_knob_json(k));
				print_json(out, args.get->parsed() ? doc[0] : doc);
			} else {
				out << format_tune_text(knobs, args.cpu.value_or(0));
			}
			out.flush();
			return exit_ok;
		}

		mcp::TuneSession session(dev);
		if (args.set->parsed()) {
			apply(session, args.assignments, args.cpu);
			session.commit();
			return exit_ok;
		}
		if (args.reset->parsed()) {
			session.reset(args.knob.empty() ? std::nullopt
							: std::optional<std::string_view>(args.knob),
				      args.cpu);
			return exit_ok;
		}
		apply(session, args.assignments, args.cpu);
		return run_command(session, err);
	} catch (const mcp::Error &e) {
		print_error(err, e.what());
		return exit_failure;
	}
}

} // namespace

std::vector<std::pair<std::string, std::uint64_t>>
parse_tune_assignments(const std::vector<std::string> &assignments)
{
	std::vector<std::pair<std::string, std::uint64_t>> out;

	for (const std::string &a : assignments) {
		const auto eq = a.find('=');
		std::uint64_t v = 0;
		std::size_t used = 0;

		if (eq == std::string::npos || eq == 0 || eq + 1 == a.size())
			throw mcp::Error(EINVAL, "'" + a + "': expected KNOB=VALUE, e.g. "
						 "prefetch.l2_stream=0");
		const std::string value = a.substr(eq + 1);
		try {
			v = std::stoull(value, &used, 0);
		} catch (const std::exception &) {
			used = 0;
		}
		if (used != value.size() || value[0] == '-')
			throw mcp::Error(EINVAL, "'" + a + "': the value must be a non-negative "
						 "integer (0 or 1 for a prefetcher)");
		out.emplace_back(a.substr(0, eq), v);
	}
	if (out.empty())
		throw mcp::Error(EINVAL, "no KNOB=VALUE given (see 'mcpctl tune list')");
	return out;
}

std::string format_tune_text(const std::vector<mcp::TuneKnob> &knobs, unsigned cpu)
{
	std::string s = fmt::format("{:<22} {:<7} {:<11} {:>6} {:>6} {:<10} {}\n", "KNOB", "SCOPE",
				    "STATUS", "VALUE", "BOOT", "STATE", "REASON");

	for (const auto &k : knobs) {
		std::string state = k.held ? fmt::format("held:{}", k.holder_pid)
				  : k.committed ? "committed" : "-";

		s += fmt::format("{:<22} {:<7} {:<11} {:>6} {:>6} {:<10} {}\n", k.name,
				 mcp::to_string(k.scope), mcp::to_string(k.status),
				 opt_value(k.value), opt_value(k.boot), state, k.reason);
	}
	s += fmt::format("(values on CPU {})\n", cpu);
	return s;
}

nlohmann::ordered_json tune_knob_json(const mcp::TuneKnob &k)
{
	auto opt = [](const std::optional<std::uint64_t> &v) -> nlohmann::ordered_json {
		if (v)
			return *v;
		return nullptr;
	};
	return {
		{"id", k.id},
		{"name", k.name},
		{"scope", mcp::to_string(k.scope)},
		{"type", k.type == mcp::TuneType::boolean ? "bool" : "u64"},
		{"status", mcp::to_string(k.status)},
		{"reason", k.reason},
		{"min", k.min},
		{"max", k.max},
		{"value", opt(k.value)},
		{"boot", opt(k.boot)},
		{"held", k.held},
		{"holder_pid", k.held ? nlohmann::ordered_json(k.holder_pid) : nullptr},
		{"committed", k.committed},
	};
}

Command add_tune_command(CLI::App &app)
{
	CLI::App *sub = app.add_subcommand(
		"tune", "Hardware tuning knobs (prefetchers, DMA coalescing) with rollback");

	sub->require_subcommand(1);
	args.list = sub->add_subcommand("list", "List every knob with its support status");
	args.list->add_option("--cpu", args.cpu, "Values as seen on this CPU (default 0)");

	args.get = sub->add_subcommand("get", "Show one knob");
	args.get->add_option("knob", args.knob, "Knob name")->required();
	args.get->add_option("--cpu", args.cpu, "Value on this CPU (default 0)");

	args.set = sub->add_subcommand(
		"set", "Set knobs and commit them: they hold until 'tune reset' or module unload");
	args.set->add_option("assignments", args.assignments, "KNOB=VALUE ...")->required();
	args.set->add_option("--cpu", args.cpu, "Only this CPU's scope (default: every CPU)");

	args.reset = sub->add_subcommand("reset", "Put boot values back (one knob or all)");
	args.reset->add_option("knob", args.knob, "Knob name (default: every knob)");
	args.reset->add_option("--cpu", args.cpu, "Only this CPU's scope (default: every CPU)");

	args.run = sub->add_subcommand(
		"run", "Run a command with knobs set; they are rolled back when it ends");
	args.run->add_option("--set", args.assignments, "KNOB=VALUE (repeatable)")->required();
	args.run->add_option("--cpu", args.cpu, "Only this CPU's scope (default: every CPU)");
	args.run->add_option("command", args.command, "The command and its arguments (after --)")
		->required();
	args.run->positionals_at_end();

	sub->footer("Writes need CAP_SYS_RAWIO and no kernel lockdown; list and get need only "
		    "/dev/mcp.  'tune list --json' prints an array of {\"id\",\"name\",\"scope\","
		    "\"type\",\"status\",\"reason\",\"min\",\"max\",\"value\",\"boot\",\"held\","
		    "\"holder_pid\",\"committed\"}; 'tune get --json' one of them.  'tune run' "
		    "exits with the command's status (127 not found, 126 not executable).");
	return {sub, run_tune};
}

} // namespace mcpctl
