// SPDX-License-Identifier: GPL-2.0-only
// mcpctl as users run it: a subprocess, its exit code and output.
#include <string>

#include <criterion/criterion.h>
#include <nlohmann/json.hpp>

#include "helpers.hpp"

static const std::string not_loaded_line =
	"mcpctl: the mcp kernel module is not loaded: run 'sudo modprobe mcp'\n";

static test::RunResult mcpctl(std::vector<std::string> args,
			      std::vector<std::string> env = {"MCP_DEVICE=/nonexistent/mcp"})
{
	args.insert(args.begin(), MCPCTL_PATH);
	return test::run(args, env);
}

static bool one_error_line(const std::string &err)
{
	return err.starts_with("mcpctl: ") && err.ends_with("\n") &&
	       err.find('\n') == err.size() - 1;
}

Test(mcpctl_cli, help_exits_0)
{
	test::RunResult r = mcpctl({"--help"});

	cr_expect_eq(r.exit_code, 0, "%s", r.err.c_str());
	cr_expect(r.out.find("info") != std::string::npos);
	cr_expect(r.out.find("version") != std::string::npos);
	cr_expect(r.out.find("--json") != std::string::npos);
}

Test(mcpctl_cli, subcommand_help_exits_0)
{
	for (const char *cmd : {"info", "version"}) {
		test::RunResult r = mcpctl({cmd, "--help"});
		cr_expect_eq(r.exit_code, 0, "%s --help: %s", cmd, r.err.c_str());
		cr_expect(r.out.find(std::string("mcpctl ") + cmd) != std::string::npos, "%s", r.out.c_str());
	}
}

Test(mcpctl_cli, unknown_option_exits_2)
{
	for (auto args : {std::vector<std::string>{"--bogus"}, {"info", "--bogus"}, {"bogus"}, {}}) {
		test::RunResult r = mcpctl(args);
		cr_expect_eq(r.exit_code, 2, "stderr: %s", r.err.c_str());
		cr_expect(one_error_line(r.err), "stderr: %s", r.err.c_str());
		cr_expect(r.out.empty());
	}
}

Test(mcpctl_cli, info_without_module_exits_1_with_one_line)
{
	test::RunResult r = mcpctl({"info"});

	cr_expect_eq(r.exit_code, 1);
	cr_expect_eq(r.err, not_loaded_line, "stderr: %s", r.err.c_str());
	cr_expect(r.out.empty(), "stdout: %s", r.out.c_str());
}

Test(mcpctl_cli, json_flag_before_or_after_subcommand)
{
	for (auto args : {std::vector<std::string>{"-j", "info"}, {"info", "--json"},
			  {"--json", "info"}, {"info", "-j"}}) {
		test::RunResult r = mcpctl(args);
		cr_expect_eq(r.exit_code, 1, "%s %s: %s", args[0].c_str(), args[1].c_str(), r.err.c_str());
		cr_expect_eq(r.err, not_loaded_line);
	}
}

Test(mcpctl_cli, not_an_mcp_device_exits_1)
{
	test::RunResult r = mcpctl({"info"}, {"MCP_DEVICE=/dev/null"});

	cr_expect_eq(r.exit_code, 1);
	cr_expect(one_error_line(r.err), "%s", r.err.c_str());
	cr_expect(r.err.starts_with("mcpctl: /dev/null is not an mcp device"), "%s", r.err.c_str());
}

Test(mcpctl_cli, version_without_module_prints_userspace_then_fails)
{
	test::RunResult r = mcpctl({"version"});

	cr_expect_eq(r.exit_code, 1);
	cr_expect_eq(r.out, "mcpctl " MCP_PROJECT_VERSION "\nlibmcp " MCP_PROJECT_VERSION
			    " (MCP ABI 1.0)\n", "%s", r.out.c_str());
	cr_expect_eq(r.err, not_loaded_line);
}

Test(mcpctl_cli, version_json_without_module)
{
	test::RunResult r = mcpctl({"version", "--json"});

	cr_expect_eq(r.exit_code, 1);
	nlohmann::json j = nlohmann::json::parse(r.out);
	cr_expect_eq(j["mcpctl_version"], MCP_PROJECT_VERSION);
	cr_expect_eq(j["libmcp_version"], MCP_PROJECT_VERSION);
	cr_expect(j["module"].is_null());
	cr_expect_eq(r.err, not_loaded_line);
}
