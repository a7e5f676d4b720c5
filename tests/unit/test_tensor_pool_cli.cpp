// SPDX-License-Identifier: GPL-2.0-only
// mcpctl pool as users run it: stat's text and JSON schema, attach
// sending to and receiving from an in-process client, serve in the
// background and in the foreground, and the error lines and exit codes.
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <criterion/criterion.h>
#include <nlohmann/json.hpp>

#include "commands.hpp"
#include "helpers.hpp"

using nlohmann::json;

namespace {

constexpr std::uint64_t MiB = 1ULL << 20;

std::string unique_name(const char *what)
{
	static int n;
	return "@mcp-test-poolcli-" + std::to_string(::getpid()) + "-" + what + "-" + std::to_string(n++);
}

mcp::TensorPoolServer small_pool(const std::string &path)
{
	mcp::PoolOptions o;

	o.region_bytes = 8 * MiB;
	o.slots = 8;
	o.no_hugepages = true;
	o.warn = [](const std::string &) {};
	return mcp::TensorPool::serve(path, o);
}

test::RunResult run_mcpctl(std::vector<std::string> args)
{
	args.insert(args.begin(), MCPCTL_PATH);
	return test::run(args);
}

std::string hex16(std::uint64_t v)
{
	char buf[17];
	std::snprintf(buf, sizeof(buf), "%016llx", static_cast<unsigned long long>(v));
	return buf;
}

bool one_error_line(const std::string &err)
{
	return err.starts_with("mcpctl: ") && err.ends_with("\n") && err.find('\n') == err.size() - 1;
}

} // namespace

Test(pool_cli, stat_text_and_json_schema)
{
	mcp::PoolStat s;
	s.slot_bytes = 2 * MiB;
	s.slots = 128;
	s.slots_used = 3;
	s.clients = 2;
	s.tensors = 2;
	s.hugepages = true;

	cr_expect_eq(mcpctl::format_pool_stat_text("/run/p", s),
		     "tensor pool at /run/p\n"
		     "  memory:   256 MiB in 128 slots of 2 MiB, 2 MiB huge pages\n"
		     "  slots:    3 used, 125 free\n"
		     "  tensors:  2\n"
		     "  clients:  2\n");
	json doc = json::parse(mcpctl::pool_stat_json("/run/p", s).dump());
	const std::vector<std::string> keys = {"path", "protocol_version", "hugepages", "region_bytes",
					       "slot_bytes", "slots", "slots_used", "slots_free",
					       "tensors", "clients"};
	cr_expect_eq(doc.size(), keys.size());
	for (const std::string &k : keys)
		cr_expect(doc.contains(k), "no %s", k.c_str());
	cr_expect_eq(doc["region_bytes"], 256 * MiB);
	cr_expect_eq(doc["slots_free"], 125);
	cr_expect_eq(doc["hugepages"], true);
	cr_expect_eq(doc["protocol_version"], 2);
}

Test(pool_cli, stat_of_a_live_pool)
{
	const std::string path = unique_name("stat");
	mcp::TensorPoolServer server = small_pool(path);
	mcp::TensorPoolClient c = mcp::TensorPool::attach(path);
	c.alloc(3 * MiB);

	test::RunResult r = run_mcpctl({"pool", "stat", path, "--json"});
	cr_assert_eq(r.exit_code, 0, "%s", r.err.c_str());
	json doc = json::parse(r.out);
	cr_expect_eq(doc["path"], path);
	cr_expect_eq(doc["slots"], 8);
	cr_expect_eq(doc["slots_used"], 3);
	cr_expect_eq(doc["tensors"], 1);
	cr_expect_eq(doc["clients"], 1);
	cr_expect_eq(doc["hugepages"], false);
	r = run_mcpctl({"pool", "stat", path});
	cr_expect_eq(r.exit_code, 0);
	cr_expect(r.out.find("3 used, 5 free") != std::string::npos, "%s", r.out.c_str());
}

Test(pool_cli, errors_and_exit_codes)
{
	test::RunResult r = run_mcpctl({"pool", "stat", "/nonexistent/pool.sock"});
	cr_expect_eq(r.exit_code, 1);
	cr_expect(one_error_line(r.err), "%s", r.err.c_str());
	cr_expect(r.err.find("no tensor pool is served at /nonexistent/pool.sock") != std::string::npos);
	r = run_mcpctl({"pool", "attach", "/nonexistent/pool.sock", "--json"});
	cr_expect_eq(r.exit_code, 1);
	cr_expect(r.out.empty());
	r = run_mcpctl({"pool", "serve", unique_name("x"), "--size", "lots"});
	cr_expect_eq(r.exit_code, 2, "%s", r.err.c_str());
	cr_expect(one_error_line(r.err), "%s", r.err.c_str());
	r = run_mcpctl({"pool"});
	cr_expect_eq(r.exit_code, 2);
	r = run_mcpctl({"pool", "attach", unique_name("x"), "--send", "1"});
	cr_expect_eq(r.exit_code, 2, "--send without --alloc");

	const std::string path = unique_name("full");
	mcp::TensorPoolServer server = small_pool(path);
	r = run_mcpctl({"pool", "attach", path, "--alloc", "9M"});
	cr_expect_eq(r.exit_code, 1);
	cr_expect(r.err.find("larger than the whole pool") != std::string::npos, "%s", r.err.c_str());
	r = run_mcpctl({"pool", "serve", path, "--foreground"});
	cr_expect_eq(r.exit_code, 1);
	cr_expect(r.err.find("already listens") != std::string::npos, "%s", r.err.c_str());
	r = run_mcpctl({"pool", "attach", path, "--receive", "--spin", "500", "--timeout", "0.05"});
	cr_expect_eq(r.exit_code, 1, "spins, sleeps, times out: %s", r.err.c_str());
	cr_expect(r.err.find("no tensor arrived") != std::string::npos, "%s", r.err.c_str());
	r = run_mcpctl({"pool", "serve", unique_name("x"), "--clients", "0"});
	cr_expect_eq(r.exit_code, 2, "%s", r.err.c_str());
	r = run_mcpctl({"pool", "serve", unique_name("x"), "--clients", "2", "--json"});
	cr_assert_eq(r.exit_code, 0, "%s", r.err.c_str());
	const pid_t pid = json::parse(r.out)["pid"].get<pid_t>();
	cr_expect_eq(::kill(pid, SIGTERM), 0);
}

Test(pool_cli, attach_sends_in_place)
{
	const std::string path = unique_name("send");
	mcp::TensorPoolServer server = small_pool(path);
	mcp::TensorPoolClient me = mcp::TensorPool::attach(path);

	test::RunResult r = run_mcpctl({"pool", "attach", path, "--alloc", "4096", "--fill", "abc",
				    "--send", std::to_string(me.id()), "--json"});
	cr_assert_eq(r.exit_code, 0, "%s", r.err.c_str());
	json doc = json::parse(r.out);
	std::optional<mcp::Tensor> t = me.receive(std::chrono::seconds(5));
	cr_assert(t.has_value());
	std::span<std::byte> bytes = me.span(*t);
	cr_expect_eq(bytes.size(), 4096U);
	cr_expect_eq(std::memcmp(bytes.data(), "abcabcabca", 10), 0);
	cr_expect_eq(doc["allocated"]["id"], t->id);
	cr_expect_eq(doc["sent_to"], me.id());
	cr_expect_eq(doc["allocated"]["checksum"].get<std::string>(),
		     hex16(mcpctl::tensor_checksum(bytes)));
	me.free(*t);
}

Test(pool_cli, attach_receives)
{
	const std::string path = unique_name("recv");
	mcp::TensorPoolServer server = small_pool(path);
	mcp::TensorPoolClient me = mcp::TensorPool::attach(path);
	test::RunResult r;

	// The receiver is the next client: ids are given in order.
	const std::uint32_t peer = me.id() + 1;
	std::thread receiver([&] { r = run_mcpctl({"pool", "attach", path, "--receive", "--timeout", "10"}); });
	bool attached = false;
	for (int i = 0; i < 500 && !attached; i++) {
		attached = server.stat().clients == 2;
		std::this_thread::sleep_for(std::chrono::milliseconds(10));
	}
	cr_expect(attached);
	mcp::Tensor t = me.alloc(64);
	std::memcpy(me.span(t).data(), "hello, pool", 11);
	me.send(t, peer);
	receiver.join();
	cr_assert_eq(r.exit_code, 0, "%s", r.err.c_str());
	cr_expect(r.out.find("as client " + std::to_string(peer)) != std::string::npos, "%s", r.out.c_str());
	cr_expect(r.out.find("begins \"hello, pool.....\"") != std::string::npos, "%s", r.out.c_str());
	cr_expect(r.out.find("checksum " + hex16(mcpctl::tensor_checksum(me.span(t)))) != std::string::npos,
		  "%s", r.out.c_str());
	cr_expect_eq(server.stat().tensors, 0U, "the receiver freed it");

	r = run_mcpctl({"pool", "attach", path, "--receive", "--timeout", "0.2"});
	cr_expect_eq(r.exit_code, 1);
	cr_expect(r.err.find("no tensor arrived") != std::string::npos, "%s", r.err.c_str());
}

Test(pool_cli, serve_in_background_until_sigterm)
{
	char dir[] = "/tmp/mcp-poolcli-XXXXXX";
	cr_assert(::mkdtemp(dir));
	const std::string path = std::string(dir) + "/pool.sock";

	test::RunResult r = run_mcpctl({"pool", "serve", path, "--size", "8M", "--slots", "4",
				    "--no-hugepages", "--json"});
	cr_assert_eq(r.exit_code, 0, "%s", r.err.c_str());
	cr_expect(r.err.find("warning: huge pages disabled") != std::string::npos, "%s", r.err.c_str());
	json doc = json::parse(r.out);
	cr_expect_eq(doc["slot_bytes"], 2 * MiB);
	cr_expect_eq(doc["slots"], 4);
	const pid_t pid = doc["pid"].get<pid_t>();
	cr_assert_gt(pid, 1);
	cr_expect_eq(mcp::TensorPool::stat(path).slots, 4U);
	cr_assert_eq(::kill(pid, SIGTERM), 0);
	struct stat st;
	bool gone = false;
	for (int i = 0; i < 500 && !gone; i++) {
		gone = ::stat(path.c_str(), &st) != 0 && ::kill(pid, 0) != 0;
		std::this_thread::sleep_for(std::chrono::milliseconds(10));
	}
	cr_expect(gone, "the server exits on SIGTERM and removes %s", path.c_str());
	::rmdir(dir);
}
