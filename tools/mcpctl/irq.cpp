// SPDX-License-Identifier: GPL-2.0-only
// mcpctl irq wait DEV: connects an eventfd to an interrupt vector of a
// device and waits until COUNT interrupts arrived or the time-out passed.
#include <chrono>
#include <ostream>

#include <fmt/format.h>

#include "commands.hpp"
#include "output.hpp"

namespace mcpctl {

namespace {

struct IrqArgs {
	std::string dev;
	unsigned vector = 0;
	long timeout_ms = -1;
	std::uint64_t count = 1;
	CLI::App *wait = nullptr;
} args;

} // namespace

static int run_irq(const GlobalOptions &opts, std::ostream &out, std::ostream &err)
{
	DevArg dev;

	try {
		dev = parse_dev_arg(args.dev);
	} catch (const mcp::Error &e) {
		print_error(err, e.what());
		return exit_usage;
	}
	if (args.count == 0) {
		print_error(err, "--count must be at least 1");
		return exit_usage;
	}

	std::uint64_t got = 0;
	std::string name;
	bool timed_out = false;
	try {
		mcp::Accelerator acc = open_dev_arg(mcp::Device::open(), dev);
		mcp::IrqEvent ev = acc.irq_event(args.vector);
		auto deadline = std::chrono::steady_clock::now() +
				std::chrono::milliseconds(args.timeout_ms < 0 ? 0 : args.timeout_ms);

		name = acc.info().address.to_string();
		// Progress on stderr: scripts (and the selftests) wait for this
		// line before making the device interrupt.
		err << fmt::format("waiting for {} interrupt(s) on vector {} of {}\n", args.count,
				   args.vector, name);
		err.flush();
		while (got < args.count) {
			std::chrono::milliseconds left(-1);

			if (args.timeout_ms >= 0) {
				left = std::chrono::duration_cast<std::chrono::milliseconds>(
					deadline - std::chrono::steady_clock::now());
				if (left.count() < 0)
					left = std::chrono::milliseconds(0);
			}
			std::optional<std::uint64_t> n = ev.wait(left);
			if (n)
				got += *n;
			else if (args.timeout_ms >= 0 && std::chrono::steady_clock::now() >= deadline) {
				timed_out = true;
				break;
			}
		}
	} catch (const mcp::Error &e) {
		print_error(err, e.what());
		return exit_failure;
	}

	if (opts.json)
		print_json(out, {{"device", name},
				 {"vector", args.vector},
				 {"interrupts", got},
				 {"timed_out", timed_out}});
	else
		out << fmt::format("{} interrupt(s) on vector {} of {}\n", got, args.vector, name);
	out.flush();
	if (timed_out) {
		print_error(err, fmt::format("timed out after {} ms waiting for interrupts on vector {} of {} "
					     "(got {} of {})",
					     args.timeout_ms, args.vector, name, got, args.count));
		return exit_failure;
	}
	return exit_ok;
}

Command add_irq_command(CLI::App &app)
{
	CLI::App *sub = app.add_subcommand("irq", "Wait for interrupts of a device");

	sub->require_subcommand(1);
	args.wait = sub->add_subcommand("wait", "Wait for COUNT interrupts on a vector");
	args.wait->add_option("DEV", args.dev, "Device index or PCI address (dddd:bb:ss.f)")->required();
	args.wait->add_option("--vector", args.vector, "Interrupt vector (default 0)");
	args.wait->add_option("--timeout", args.timeout_ms, "Give up after MS milliseconds (default: never)")
		->check(CLI::NonNegativeNumber);
	args.wait->add_option("--count", args.count, "Interrupts to wait for (default 1)");
	sub->footer("Prints 'waiting for ...' on stderr once the eventfd is connected.  Exit status 1 "
		    "on time-out.  With --json: {\"device\",\"vector\",\"interrupts\",\"timed_out\"} "
		    "(see Documentation/mcpctl.rst).");
	return {sub, run_irq};
}

} // namespace mcpctl
