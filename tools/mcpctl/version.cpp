// SPDX-License-Identifier: GPL-2.0-only
// mcpctl version: versions of mcpctl, libmcp and the loaded mcp module.
#include <ostream>

#include <fmt/format.h>

#include "commands.hpp"
#include "output.hpp"

namespace mcpctl {

const char *tool_version() noexcept
{
	return MCPCTL_VERSION;
}

static std::string join(const std::vector<std::string> &words)
{
	std::string s;

	for (const std::string &w : words)
		s += (s.empty() ? "" : " ") + w;
	return s;
}

std::string format_version_text(std::string_view tool, std::string_view lib,
				const mcp::Version *module)
{
	std::string s = fmt::format("mcpctl {}\nlibmcp {} (MCP ABI {}.{})\n", tool,
				    lib, mcp::abi_major, mcp::abi_minor);

	if (module) {
		s += fmt::format("mcp module {} (MCP ABI {}.{})\n",
				 module->module_version, module->abi_major,
				 module->abi_minor);
		s += fmt::format("features: {}\n", join(mcp::feature_names(module->features)));
	}
	return s;
}

nlohmann::ordered_json version_json(std::string_view tool, std::string_view lib,
			    const mcp::Version *module)
{
	nlohmann::ordered_json doc = {
		{"mcpctl_version", tool},
		{"libmcp_version", lib},
		{"libmcp_abi", {{"major", mcp::abi_major}, {"minor", mcp::abi_minor}}},
		{"module", nullptr},
	};

	if (module)
		doc["module"] = {
			{"version", module->module_version},
			{"abi", {{"major", module->abi_major}, {"minor", module->abi_minor}}},
			{"features", mcp::feature_names(module->features)},
			{"features_mask", module->features},
		};
	return doc;
}

int run_version(const GlobalOptions &opts, std::ostream &out, std::ostream &err)
{
	const char *lib = mcp::library_version();
	mcp::Version module;
	bool have_module = false;
	std::string error;

	try {
		module = mcp::Device::open().version();
		have_module = true;
	} catch (const mcp::Error &e) {
		error = e.what();
	}

	// The userspace versions are worth printing even without a module.
	const mcp::Version *m = have_module ? &module : nullptr;
	if (opts.json)
		print_json(out, version_json(tool_version(), lib, m));
	else
		out << format_version_text(tool_version(), lib, m);
	out.flush();

	if (!have_module) {
		print_error(err, error);
		return exit_failure;
	}
	return exit_ok;
}

Command add_version_command(CLI::App &app)
{
	CLI::App *sub = app.add_subcommand(
		"version", "Show the versions of mcpctl, libmcp and the loaded mcp module");

	sub->footer("Exits 1 (after printing the userspace versions) when the module "
		    "is not loaded or speaks another ABI major version.");
	return {sub, run_version};
}

} // namespace mcpctl
