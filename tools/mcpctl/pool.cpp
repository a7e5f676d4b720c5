// SPDX-License-Identifier: GPL-2.0-only
// mcpctl pool serve|attach|stat: serve a tensor pool (mcp::TensorPool),
// hand a tensor between two attached processes, and show what a pool
// holds.  Documentation/tensor-pool.rst.
#include <cerrno>
#include <cstring>
#include <ostream>

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fmt/format.h>

#include "commands.hpp"
#include "live.hpp"
#include "output.hpp"

namespace mcpctl {

namespace {

struct PoolArgs {
	std::string path;
	std::string size = "256M";
	std::uint32_t slots = 128;
	std::uint32_t clients = 64;
	bool foreground = false;
	bool no_hugepages = false;
	std::string alloc;
	std::string fill = "mcp";
	std::optional<std::uint32_t> send_to;
	bool receive = false;
	double timeout = 10;
	std::uint32_t spin_us = 0;
	CLI::App *serve = nullptr;
	CLI::App *attach = nullptr;
	CLI::App *stat = nullptr;
} args;

std::string slot_size_text(std::uint64_t bytes)
{
	if (bytes % (1ULL << 20) == 0)
		return fmt::format("{} MiB", bytes >> 20);
	if (bytes % (1ULL << 10) == 0)
		return fmt::format("{} KiB", bytes >> 10);
	return fmt::format("{} bytes", bytes);
}

// What the background server tells the waiting parent: 'O' and the
// warning (maybe empty), or 'E' and the error.
void report_to_parent(int fd, char status, const std::string &text)
{
	std::string msg = status + text;

	if (::write(fd, msg.data(), msg.size()) < 0)
		_exit(exit_failure);
	::close(fd);
}

// Serves until SIGINT or SIGTERM.
void serve_until_stopped(const mcp::TensorPoolServer &)
{
	catch_stop_signals();
	while (!stop_requested())
		sleep_unless_stopped(3600);
}

mcp::PoolOptions pool_options(std::string *warning)
{
	mcp::PoolOptions o;

	o.region_bytes = parse_size(args.size);
	o.slots = args.slots;
	o.max_clients = args.clients;
	o.no_hugepages = args.no_hugepages;
	o.warn = [warning](const std::string &w) { *warning = w; };
	return o;
}

int run_serve(const GlobalOptions &opts, std::ostream &out, std::ostream &err)
{
	std::string warning;
	mcp::PoolOptions options;

	try {
		options = pool_options(&warning);
	} catch (const mcp::Error &e) {
		print_error(err, e.what());
		return exit_usage;
	}
	if (args.foreground) {
		mcp::TensorPoolServer server = mcp::TensorPool::serve(args.path, options);
		if (!warning.empty())
			err << "mcpctl: warning: " << warning << '\n';
		if (opts.json)
			print_json(out, pool_stat_json(args.path, server.stat()));
		else
			out << fmt::format("serving the tensor pool at {} (pid {}); Ctrl-C stops it\n",
					   args.path, ::getpid());
		out.flush();
		err.flush();
		serve_until_stopped(server);
		return exit_ok;
	}

	// Background: the child serves; the parent waits until it listens.
	int pipefd[2];
	if (::pipe2(pipefd, O_CLOEXEC) < 0)
		throw mcp::Error(errno, std::string("pipe: ") + std::strerror(errno));
	out.flush();
	err.flush();
	pid_t pid = ::fork();
	if (pid < 0)
		throw mcp::Error(errno, std::string("fork: ") + std::strerror(errno));
	if (pid == 0) {
		::close(pipefd[0]);
		::setsid();
		try {
			mcp::TensorPoolServer server = mcp::TensorPool::serve(args.path, options);
			int null = ::open("/dev/null", O_RDWR);
			if (null >= 0) {
				::dup2(null, STDIN_FILENO);
				::dup2(null, STDOUT_FILENO);
				::dup2(null, STDERR_FILENO);
				::close(null);
			}
			report_to_parent(pipefd[1], 'O', warning);
			serve_until_stopped(server);
		} catch (const std::exception &e) {
			report_to_parent(pipefd[1], 'E', e.what());
			_exit(exit_failure);
		}
		_exit(exit_ok);
	}
	::close(pipefd[1]);
	std::string msg;
	char buf[512];
	ssize_t n;
	while ((n = ::read(pipefd[0], buf, sizeof(buf))) > 0 || (n < 0 && errno == EINTR))
		if (n > 0)
			msg.append(buf, static_cast<std::size_t>(n));
	::close(pipefd[0]);
	if (msg.empty() || msg[0] != 'O') {
		::waitpid(pid, nullptr, 0);
		print_error(err, msg.empty() ? "the pool server died while starting" : msg.substr(1));
		return exit_failure;
	}
	if (msg.size() > 1)
		err << "mcpctl: warning: " << msg.substr(1) << '\n';
	if (opts.json) {
		nlohmann::ordered_json doc = pool_stat_json(args.path, mcp::TensorPool::stat(args.path));
		doc["pid"] = pid;
		print_json(out, doc);
	} else {
		out << fmt::format("serving the tensor pool at {} (pid {}); stop it with 'kill {}'\n",
				   args.path, pid, pid);
	}
	out.flush();
	return exit_ok;
}

int run_attach(const GlobalOptions &opts, std::ostream &out, std::ostream &err)
{
	std::optional<std::uint64_t> alloc_bytes;

	try {
		if (!args.alloc.empty())
			alloc_bytes = parse_size(args.alloc);
	} catch (const mcp::Error &e) {
		print_error(err, e.what());
		return exit_usage;
	}
	if (args.send_to && !alloc_bytes) {
		print_error(err, "--send needs --alloc: a tensor to send");
		return exit_usage;
	}
	if (args.fill.empty()) {
		print_error(err, "--fill needs at least one character");
		return exit_usage;
	}

	mcp::TensorPoolClient client = mcp::TensorPool::attach(args.path);
	client.set_spin(std::chrono::microseconds(args.spin_us));
	nlohmann::ordered_json doc = {{"path", args.path}, {"client", client.id()}};

	if (!opts.json) {
		out << fmt::format("attached to the tensor pool at {} as client {}\n", args.path, client.id());
		out.flush(); // a peer may be waiting for the id
	}
	if (alloc_bytes) {
		mcp::Tensor t = client.alloc(*alloc_bytes);
		std::span<std::byte> bytes = client.span(t);

		for (std::size_t i = 0; i < bytes.size(); i++)
			bytes[i] = static_cast<std::byte>(args.fill[i % args.fill.size()]);
		doc["allocated"] = tensor_json(t, bytes);
		if (!opts.json)
			out << fmt::format("allocated tensor {}: {} bytes at offset {:#x}, checksum {:016x}\n",
					   t.id, t.size, t.offset, tensor_checksum(bytes));
		if (args.send_to) {
			client.send(t, *args.send_to);
			doc["sent_to"] = *args.send_to;
			if (!opts.json)
				out << fmt::format("sent tensor {} to client {}\n", t.id, *args.send_to);
		}
	}
	if (args.receive) {
		auto timeout = std::chrono::milliseconds(static_cast<std::int64_t>(args.timeout * 1000));
		std::optional<mcp::Tensor> t = client.receive(timeout);

		if (!t) {
			print_error(err, fmt::format("no tensor arrived within {} s", args.timeout));
			return exit_failure;
		}
		std::span<std::byte> bytes = client.span(*t);
		doc["received"] = tensor_json(*t, bytes);
		if (!opts.json)
			out << fmt::format("received tensor {} from client {}: {} bytes at offset {:#x}, "
					   "checksum {:016x}, begins \"{}\"\n",
					   t->id, t->from, t->size, t->offset, tensor_checksum(bytes),
					   printable_head(bytes, 16));
		client.free(*t);
	}
	if (opts.json)
		print_json(out, doc);
	out.flush();
	return exit_ok;
}

int run_pool(const GlobalOptions &opts, std::ostream &out, std::ostream &err)
{
	try {
		if (args.serve->parsed())
			return run_serve(opts, out, err);
		if (args.attach->parsed())
			return run_attach(opts, out, err);
		mcp::PoolStat s = mcp::TensorPool::stat(args.path);
		if (opts.json)
			print_json(out, pool_stat_json(args.path, s));
		else
			out << format_pool_stat_text(args.path, s);
		out.flush();
		return exit_ok;
	} catch (const mcp::Error &e) {
		print_error(err, e.what());
		return exit_failure;
	}
}

} // namespace

std::uint64_t tensor_checksum(std::span<const std::byte> bytes) noexcept
{
	std::uint64_t h = 0xcbf29ce484222325ULL; // FNV-1a 64

	for (std::byte b : bytes)
		h = (h ^ static_cast<std::uint8_t>(b)) * 0x100000001b3ULL;
	return h;
}

std::string printable_head(std::span<const std::byte> bytes, std::size_t max)
{
	std::string s;

	for (std::size_t i = 0; i < bytes.size() && i < max; i++) {
		auto c = static_cast<unsigned char>(bytes[i]);
		s += (c >= 0x20 && c < 0x7f && c != '"' && c != '\\') ? static_cast<char>(c) : '.';
	}
	return s;
}

nlohmann::ordered_json tensor_json(const mcp::Tensor &t, std::span<const std::byte> bytes)
{
	return {
		{"id", t.id},
		{"offset", t.offset},
		{"size", t.size},
		{"capacity", t.capacity},
		{"from", t.from},
		{"checksum", fmt::format("{:016x}", tensor_checksum(bytes))},
	};
}

std::string format_pool_stat_text(std::string_view path, const mcp::PoolStat &s)
{
	std::string t = fmt::format("tensor pool at {}\n", path);

	t += fmt::format("  memory:   {} in {} slots of {}, {}\n", slot_size_text(s.region_bytes()),
			 s.slots, slot_size_text(s.slot_bytes),
			 s.hugepages ? "2 MiB huge pages" : "normal pages");
	t += fmt::format("  slots:    {} used, {} free\n", s.slots_used, s.slots_free());
	t += fmt::format("  tensors:  {}\n", s.tensors);
	t += fmt::format("  clients:  {}\n", s.clients);
	return t;
}

nlohmann::ordered_json pool_stat_json(std::string_view path, const mcp::PoolStat &s)
{
	return {
		{"path", path},
		{"protocol_version", mcp::TensorPool::protocol_version},
		{"hugepages", s.hugepages},
		{"region_bytes", s.region_bytes()},
		{"slot_bytes", s.slot_bytes},
		{"slots", s.slots},
		{"slots_used", s.slots_used},
		{"slots_free", s.slots_free()},
		{"tensors", s.tensors},
		{"clients", s.clients},
	};
}

Command add_pool_command(CLI::App &app)
{
	CLI::App *sub = app.add_subcommand("pool", "Serve, use and inspect a tensor pool shared between processes");

	sub->require_subcommand(1);
	args.serve = sub->add_subcommand("serve", "Create a pool and serve it at PATH (in the background "
						  "unless --foreground)");
	args.serve->add_option("PATH", args.path, "Socket path, or @name for the abstract namespace")
		->required();
	args.serve->add_option("--size", args.size, "Pool memory: 256M, 1G, bytes (default 256M)");
	args.serve->add_option("--slots", args.slots, "Slots the memory is cut into (default 128)")
		->check(CLI::Range(1U, 1U << 20));
	args.serve->add_option("--clients", args.clients, "Clients attached at once (default 64)")
		->check(CLI::Range(1U, 4096U));
	args.serve->add_flag("--foreground", args.foreground, "Serve from this process until Ctrl-C");
	args.serve->add_flag("--no-hugepages", args.no_hugepages, "Use normal pages even if huge pages "
								   "are reserved");

	args.attach = sub->add_subcommand("attach", "Attach to the pool at PATH: allocate and send a "
						    "tensor, or receive one");
	args.attach->add_option("PATH", args.path, "Socket path, or @name")->required();
	args.attach->add_option("--alloc", args.alloc, "Allocate a tensor of this size (1M, 4096) and "
						       "fill it");
	args.attach->add_option("--fill", args.fill, "Text repeated over the tensor (default \"mcp\")");
	args.attach->add_option("--send", args.send_to, "Hand the tensor to this client id");
	args.attach->add_flag("--receive", args.receive, "Wait for a tensor from another client, "
							 "show it, free it");
	args.attach->add_option("--timeout", args.timeout, "Seconds --receive waits (default 10)")
		->check(CLI::Range(0.0, 86400.0));
	args.attach->add_option("--spin", args.spin_us, "Microseconds --receive polls before it "
						       "sleeps (default 0)")
		->check(CLI::Range(0U, 10000000U));

	args.stat = sub->add_subcommand("stat", "What the pool at PATH holds (slots, tensors, clients)");
	args.stat->add_option("PATH", args.path, "Socket path, or @name")->required();
	sub->footer("The text of 'attach' names this client's id first, so that a peer can --send to "
		    "it.  'stat --json' prints {\"path\",\"protocol_version\",\"hugepages\","
		    "\"region_bytes\",\"slot_bytes\",\"slots\",\"slots_used\",\"slots_free\","
		    "\"tensors\",\"clients\"} (see Documentation/tensor-pool.rst).");
	return {sub, run_pool};
}

} // namespace mcpctl
