// SPDX-License-Identifier: GPL-2.0-only
// mcp::TensorPool on the host: the wire format, a server with forked
// clients sharing bytes, ownership (disconnect frees, foreign ids, double
// frees), a full pool, malformed and other-version requests, the normal
// page fallback and its warning, and the C API.
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "internal.hpp"
#include "tensor_pool_protocol.hpp"
#include "tensor_pool_shm.hpp"
#include "tensor_pool_socket.hpp"

namespace pool = mcp::detail::pool;

namespace {

constexpr std::uint64_t MiB = 1ULL << 20;

// An abstract socket name no other test (or run) uses.
std::string unique_name(const char *what)
{
	static int n;
	return "@mcp-test-pool-" + std::to_string(::getpid()) + "-" + what + "-" + std::to_string(n++);
}

// A small pool: @slots slots of 1 MiB, normal pages, warnings kept.
mcp::TensorPoolServer small_pool(const std::string &path, std::uint32_t slots = 8)
{
	mcp::PoolOptions o;

	o.region_bytes = slots * MiB;
	o.slots = slots;
	o.no_hugepages = true;
	o.warn = [](const std::string &) {};
	return mcp::TensorPool::serve(path, o);
}

int error_of(auto &&fn)
{
	try {
		fn();
	} catch (const mcp::Error &e) {
		return e.errnum();
	}
	return 0;
}

std::string message_of(auto &&fn)
{
	try {
		fn();
	} catch (const mcp::Error &e) {
		return e.what();
	}
	return "";
}

// Waits up to 5 s for @pred (the server handles requests on its thread).
bool eventually(auto &&pred)
{
	for (int i = 0; i < 500; i++) {
		if (pred())
			return true;
		std::this_thread::sleep_for(std::chrono::milliseconds(10));
	}
	return false;
}

// A connected raw socket, for requests the client library would not send.
pool::OwnedFd raw_connect(const std::string &path)
{
	pool::SocketAddress a = pool::socket_address(path);
	pool::OwnedFd fd(::socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0));

	cr_assert(fd);
	cr_assert_eq(::connect(fd.get(), reinterpret_cast<const sockaddr *>(&a.addr), a.len), 0);
	return fd;
}

pool::Message raw_reply(int fd)
{
	pool::Message m;
	int decoded = -1;

	cr_assert_eq(pool::receive_message(fd, m, decoded, 0), 1, "no reply");
	cr_expect_eq(decoded, 0);
	return m;
}

// A forked child's end: tells the parent through @fd, waits to be killed.
[[noreturn]] void ready_then_pause(int fd)
{
	char x = 1;

	if (::write(fd, &x, 1) != 1)
		_exit(1);
	::pause();
	_exit(0);
}

void wait_ready(int fd)
{
	char x;

	cr_assert_eq(::read(fd, &x, 1), 1, "the child did not get ready");
}

bool all_bytes(std::span<const std::byte> s, std::uint8_t v)
{
	for (std::byte b : s)
		if (b != static_cast<std::byte>(v))
			return false;
	return true;
}

} // namespace

Test(pool_protocol, round_trip)
{
	pool::Message m, out;

	m.type = static_cast<std::uint16_t>(pool::MsgType::send) | pool::reply_bit;
	m.seq = 0xdeadbeef;
	m.status = -ESRCH;
	m.arg = {1, 2, 3, UINT64_MAX, 5, 6};
	pool::Wire w = pool::encode(m);
	cr_assert_eq(w.size(), 64U);
	cr_assert_eq(pool::decode(w, out), 0);
	cr_expect_eq(out.version, 2);
	cr_expect_eq(out.type, m.type);
	cr_expect_eq(out.seq, m.seq);
	cr_expect_eq(out.status, -ESRCH);
	cr_expect(out.arg == m.arg);
	// The layout is the protocol: magic "MCPP" first, little-endian on x86.
	cr_expect_eq(std::memcmp(w.data(), "MCPP", 4), 0);
	cr_expect_eq(pool::type_name(m.type), "send");
	cr_expect_eq(pool::type_name(99), "unknown");
}

Test(pool_protocol, rejects_bad_messages)
{
	pool::Message m, out;
	pool::Wire w = pool::encode(m);

	cr_expect_eq(pool::decode(std::span(w).first(63), out), -EBADMSG);
	w[0] = std::byte{'X'};
	cr_expect_eq(pool::decode(w, out), -EBADMSG);
	m.version = 7;
	w = pool::encode(m);
	cr_expect_eq(pool::decode(w, out), -EPROTO);
	cr_expect_eq(out.version, 7, "the version is decoded for the message");
	cr_expect(pool::version_mismatch_message("/p", 7).find("version 7") != std::string::npos);
}

Test(pool_protocol, addresses)
{
	pool::SocketAddress a = pool::socket_address("@name");
	cr_expect(a.abstract);
	cr_expect_eq(a.addr.sun_path[0], '\0');
	cr_expect_eq(std::string(a.addr.sun_path + 1, 4), "name");
	pool::SocketAddress p = pool::socket_address("/run/pool.sock");
	cr_expect(!p.abstract);
	cr_expect_str_eq(p.addr.sun_path, "/run/pool.sock");
	cr_expect_eq(error_of([] { pool::socket_address(""); }), EINVAL);
	cr_expect_eq(error_of([] { pool::socket_address("@"); }), EINVAL);
	cr_expect_eq(error_of([] { pool::socket_address(std::string(200, 'x')); }), EINVAL);
}

Test(tensor_pool, alloc_span_free_and_stat)
{
	const std::string path = unique_name("basic");
	mcp::TensorPoolServer server = small_pool(path);
	mcp::TensorPoolClient c = mcp::TensorPool::attach(path);

	cr_expect_eq(c.region().size(), 8 * MiB);
	cr_expect_eq(c.slot_bytes(), MiB);
	mcp::Tensor a = c.alloc(100);
	mcp::Tensor b = c.alloc(MiB + 1); // two slots
	cr_expect_eq(a.size, 100U);
	cr_expect_eq(a.capacity, MiB);
	cr_expect_eq(b.capacity, 2 * MiB);
	cr_expect_neq(a.id, b.id);
	cr_expect(b.offset >= a.offset + a.capacity || a.offset >= b.offset + b.capacity);
	cr_expect_eq(c.span(b).size(), MiB + 1);
	std::memset(c.span(b).data(), 0x5c, MiB + 1);

	mcp::PoolStat s = c.stat();
	cr_expect_eq(s.slots, 8U);
	cr_expect_eq(s.slots_used, 3U);
	cr_expect_eq(s.slots_free(), 5U);
	cr_expect_eq(s.tensors, 2U);
	cr_expect_eq(s.clients, 1U);
	cr_expect(!s.hugepages);
	cr_expect_eq(mcp::TensorPool::stat(path).clients, 1U, "a stat connection is no client");
	c.free(a);
	c.free(b);
	cr_expect_eq(server.stat().slots_used, 0U);
}

Test(tensor_pool, forked_clients_share_bytes)
{
	const std::string path = unique_name("fork");
	mcp::TensorPoolServer server = small_pool(path, 16);
	mcp::TensorPoolClient parent = mcp::TensorPool::attach(path);
	constexpr int children = 3;
	pid_t pids[children];

	for (int i = 0; i < children; i++) {
		pids[i] = ::fork();
		cr_assert_geq(pids[i], 0);
		if (pids[i] > 0)
			continue;
		// Child: a tensor filled with its id to the parent, then the
		// parent's answer (its id ^ 0x5a) back, read in place.
		int rc = 1;
		try {
			mcp::TensorPoolClient c = mcp::TensorPool::attach(path);
			const auto mine = static_cast<std::uint8_t>(c.id());
			mcp::Tensor t = c.alloc(MiB);
			std::memset(c.span(t).data(), mine, MiB);
			c.send(t, parent.id());
			std::optional<mcp::Tensor> back = c.receive(std::chrono::seconds(10));
			if (back && back->from == parent.id() && back->size == 4096 &&
			    all_bytes(c.span(*back), static_cast<std::uint8_t>(mine ^ 0x5a)))
				rc = 0;
			if (back)
				c.free(*back);
		} catch (...) {
			rc = 2;
		}
		_exit(rc);
	}
	for (int i = 0; i < children; i++) {
		std::optional<mcp::Tensor> t = parent.receive(std::chrono::seconds(10));
		cr_assert(t.has_value(), "tensor %d did not arrive", i);
		cr_expect_eq(t->size, MiB);
		cr_expect(all_bytes(parent.span(*t), static_cast<std::uint8_t>(t->from)),
			  "the bytes client %u wrote are not what the parent reads", t->from);
		parent.free(*t);

		mcp::Tensor answer = parent.alloc(4096);
		std::memset(parent.span(answer).data(), static_cast<std::uint8_t>(t->from) ^ 0x5a, 4096);
		parent.send(answer, t->from);
		// Sent: no longer ours (EPERM), or freed by the child already.
		const int e = error_of([&] { parent.free(answer); });
		cr_expect(e == EPERM || e == ENOENT, "free after send: errno %d", e);
	}
	for (pid_t pid : pids) {
		int status = 0;
		cr_assert_eq(::waitpid(pid, &status, 0), pid);
		cr_expect(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child %d: status %#x", pid, status);
	}
	cr_expect(eventually([&] { return server.stat().tensors == 0 && server.stat().clients == 1; }));
}

Test(tensor_pool, disconnect_frees)
{
	const std::string path = unique_name("disconnect");
	mcp::TensorPoolServer server = small_pool(path);
	{
		mcp::TensorPoolClient c = mcp::TensorPool::attach(path);
		c.alloc(1);
		c.alloc(3 * MiB);
		cr_expect_eq(server.stat().slots_used, 4U);
	}
	cr_expect(eventually([&] { return server.stat().slots_used == 0 && server.stat().clients == 0; }));

	// Killed, not closed cleanly: the same.
	int ready[2];
	cr_assert_eq(::pipe(ready), 0);
	pid_t pid = ::fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		mcp::TensorPoolClient c = mcp::TensorPool::attach(path);
		c.alloc(2 * MiB);
		ready_then_pause(ready[1]);
	}
	wait_ready(ready[0]);
	cr_expect_eq(server.stat().slots_used, 2U);
	::kill(pid, SIGKILL);
	::waitpid(pid, nullptr, 0);
	cr_expect(eventually([&] { return server.stat().slots_used == 0; }));
	::close(ready[0]);
	::close(ready[1]);
}

Test(tensor_pool, bad_requests_get_errors)
{
	const std::string path = unique_name("bad");
	mcp::TensorPoolServer server = small_pool(path);
	mcp::TensorPoolClient a = mcp::TensorPool::attach(path);
	mcp::TensorPoolClient b = mcp::TensorPool::attach(path);
	mcp::Tensor t = a.alloc(10);

	cr_expect_eq(error_of([&] { b.free(t); }), EPERM);
	cr_expect(message_of([&] { b.free(t); }).find("belongs to another client") != std::string::npos);
	cr_expect_eq(error_of([&] { b.send(t, a.id()); }), EPERM);
	cr_expect_eq(error_of([&] { a.send(t, 999); }), ESRCH);
	cr_expect_eq(error_of([&] { a.alloc(0); }), EINVAL);
	cr_expect_eq(error_of([&] { a.alloc(8 * MiB + 1); }), E2BIG);
	a.free(t);
	cr_expect_eq(error_of([&] { a.free(t); }), ENOENT, "double free");
	mcp::Tensor bogus{12345, 7 * MiB, 2 * MiB, 2 * MiB, 0};
	cr_expect_eq(error_of([&] { (void)a.span(bogus); }), ERANGE);
	cr_expect_eq(error_of([&] { a.free(bogus); }), ENOENT);

	// Below the library: garbage, requests before hello, another version.
	pool::OwnedFd raw = raw_connect(path);
	cr_assert_eq(::send(raw.get(), "garbage", 7, 0), 7);
	cr_expect_eq(raw_reply(raw.get()).status, -EBADMSG);
	pool::Message alloc;
	alloc.type = static_cast<std::uint16_t>(pool::MsgType::alloc);
	alloc.arg[0] = 10;
	cr_assert_eq(pool::send_message(raw.get(), alloc), 0);
	cr_expect_eq(raw_reply(raw.get()).status, -ENOTCONN);
	pool::Message unknown;
	unknown.type = 77;
	cr_assert_eq(pool::send_message(raw.get(), unknown), 0);
	cr_expect_eq(raw_reply(raw.get()).status, -ENOTCONN);
	pool::Message hello;
	hello.type = static_cast<std::uint16_t>(pool::MsgType::hello);
	hello.version = 3;
	cr_assert_eq(pool::send_message(raw.get(), hello), 0);
	pool::Message m;
	int decoded = 0;
	cr_assert_eq(pool::receive_message(raw.get(), m, decoded, 0), 1);
	cr_expect_eq(m.status, -EPROTO);
	cr_expect_eq(m.arg[5], 2U, "the server names its version");
	cr_expect_eq(pool::receive_message(raw.get(), m, decoded, 0), 0, "then it hangs up");

	// The server is still there for everyone else.
	cr_expect_eq(a.stat().clients, 2U);
	cr_expect_eq(a.alloc(1).size, 1U);
}

Test(tensor_pool, full_pool)
{
	const std::string path = unique_name("full");
	mcp::TensorPoolServer server = small_pool(path, 4);
	mcp::TensorPoolClient c = mcp::TensorPool::attach(path);
	mcp::Tensor t[4];

	for (auto &x : t)
		x = c.alloc(MiB);
	cr_expect_eq(error_of([&] { c.alloc(1); }), ENOSPC);
	cr_expect(message_of([&] { c.alloc(1); }).find("pool is full") != std::string::npos);
	c.free(t[1]);
	c.free(t[3]);
	// Two free slots, but not next to each other.
	cr_expect_eq(error_of([&] { c.alloc(2 * MiB); }), ENOSPC);
	c.free(t[2]);
	cr_expect_eq(c.alloc(2 * MiB).offset, MiB, "first fit");
}

Test(tensor_pool, version_mismatch_is_refused)
{
	// A fake server that answers every hello as version 9 would.
	const std::string path = unique_name("fake");
	pool::SocketAddress a = pool::socket_address(path);
	pool::OwnedFd listener(::socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0));
	cr_assert_eq(::bind(listener.get(), reinterpret_cast<const sockaddr *>(&a.addr), a.len), 0);
	cr_assert_eq(::listen(listener.get(), 1), 0);
	std::thread fake([&] {
		for (int i = 0; i < 2; i++) {
			pool::OwnedFd conn(::accept(listener.get(), nullptr, nullptr));
			pool::Message req, rep;
			int decoded = 0;
			if (pool::receive_message(conn.get(), req, decoded, 0) != 1)
				return;
			rep.version = 9;
			rep.type = static_cast<std::uint16_t>(req.type | pool::reply_bit);
			rep.seq = req.seq;
			pool::send_message(conn.get(), rep);
		}
	});
	std::string msg = message_of([&] { mcp::TensorPool::attach(path); });
	cr_expect(msg.find("speaks protocol version 9") != std::string::npos, "%s", msg.c_str());
	cr_expect_eq(error_of([&] { mcp::TensorPool::stat(path); }), EPROTO);
	fake.join();
}

Test(tensor_pool, no_server)
{
	std::string msg = message_of([] { mcp::TensorPool::attach("/nonexistent/pool.sock"); });
	cr_expect(msg.starts_with("no tensor pool is served at /nonexistent/pool.sock"), "%s", msg.c_str());
	cr_expect_eq(error_of([] { mcp::TensorPool::stat("@mcp-test-pool-nobody"); }), ECONNREFUSED);
}

Test(tensor_pool, socket_file_in_use_and_stale)
{
	char dir[] = "/tmp/mcp-pool-test-XXXXXX";
	cr_assert(::mkdtemp(dir));
	const std::string path = std::string(dir) + "/pool.sock";
	{
		mcp::TensorPoolServer server = small_pool(path);
		cr_expect_eq(error_of([&] { small_pool(path); }), EADDRINUSE);
	}
	struct stat st;
	cr_expect_neq(::stat(path.c_str(), &st), 0, "the server removes its socket file");

	// A file left by a server that died is replaced.
	{
		pool::SocketAddress a = pool::socket_address(path);
		pool::OwnedFd dead(::socket(AF_UNIX, SOCK_SEQPACKET, 0));
		cr_assert_eq(::bind(dead.get(), reinterpret_cast<const sockaddr *>(&a.addr), a.len), 0);
	}
	{
		mcp::TensorPoolServer server = small_pool(path);
		cr_expect_eq(mcp::TensorPool::stat(path).slots, 8U);
	}
	::rmdir(dir);
}

Test(tensor_pool, bad_options)
{
	mcp::PoolOptions o;
	o.slots = 3; // 256 MiB does not split into 3 whole pages
	cr_expect_eq(error_of([&] { mcp::TensorPool::serve(unique_name("opt"), o); }), EINVAL);
	o.slots = 0;
	cr_expect_eq(error_of([&] { mcp::TensorPool::serve(unique_name("opt"), o); }), EINVAL);
}

// Reads a "Name: N" line of /proc/meminfo, -1 when absent.
static long meminfo(const std::string &name)
{
	std::ifstream in("/proc/meminfo");
	std::string key;
	long value;

	while (in >> key >> value) {
		if (key == name + ":")
			return value;
		in.ignore(256, '\n');
	}
	return -1;
}

static long proc_long(const char *path)
{
	std::ifstream in(path);
	long v = -1;
	in >> v;
	return v;
}

Test(tensor_pool, hugetlb_failure_falls_back_with_a_warning)
{
	// One huge page more than the kernel can give: MFD_HUGETLB's mmap
	// must fail, whatever the host has reserved.
	const long free_pages = std::max(0L, meminfo("HugePages_Free"));
	const long overcommit = std::max(0L, proc_long("/proc/sys/vm/nr_overcommit_hugepages"));
	const auto pages = static_cast<std::uint32_t>(free_pages + overcommit + 1);
	mcp::PoolOptions o;
	int warnings = 0;
	std::string warning;

	o.region_bytes = pages * 2 * MiB;
	o.slots = pages;
	o.warn = [&](const std::string &w) {
		warnings++;
		warning = w;
	};
	mcp::TensorPoolServer server = mcp::TensorPool::serve(unique_name("fallback"), o);
	cr_expect(!server.hugepages());
	cr_expect_eq(warnings, 1);
	cr_expect_eq(server.warning(), warning);
	cr_expect(warning.find("/proc/sys/vm/nr_hugepages") != std::string::npos, "%s", warning.c_str());
	cr_expect(warning.find("normal pages") != std::string::npos, "%s", warning.c_str());
	mcp::TensorPoolClient c = mcp::TensorPool::attach(server.path());
	cr_expect(!c.hugepages());
	mcp::Tensor t = c.alloc(2 * MiB);
	std::memset(c.span(t).data(), 1, 2 * MiB); // the memory is usable
	cr_expect(!c.stat().hugepages);
}

Test(tensor_pool, hugepages_when_reserved)
{
	if (meminfo("HugePages_Free") < 3 || meminfo("Hugepagesize") != 2048)
		cr_skip_test("fewer than 3 free 2 MiB huge pages (HugePages_Free in /proc/meminfo): 2 for the slots, 1 for the control area");
	mcp::PoolOptions o;
	o.region_bytes = 4 * MiB;
	o.slots = 2;
	std::string warning;
	o.warn = [&](const std::string &w) { warning = w; };
	mcp::TensorPoolServer server = mcp::TensorPool::serve(unique_name("huge"), o);
	cr_expect(warning.empty(), "%s", warning.c_str());
	cr_expect(server.hugepages());
	cr_expect(server.warning().empty());
	mcp::TensorPoolClient c = mcp::TensorPool::attach(server.path());
	cr_expect(c.hugepages());
	mcp::Tensor t = c.alloc(4 * MiB);
	std::memset(c.span(t).data(), 7, 4 * MiB);
}

Test(tensor_pool, no_hugepages_option)
{
	mcp::PoolOptions o;
	std::string warning;
	o.region_bytes = 4 * MiB;
	o.slots = 2;
	o.no_hugepages = true;
	o.warn = [&](const std::string &w) { warning = w; };
	mcp::TensorPoolServer server = mcp::TensorPool::serve(unique_name("nohuge"), o);
	cr_expect(!server.hugepages());
	cr_expect(warning.find("disabled") != std::string::npos, "%s", warning.c_str());
}

Test(tensor_pool_c_api, round_trip)
{
	const std::string path = unique_name("c");
	struct mcp_pool_opts opts = {};
	struct mcp_pool_server *server = nullptr;
	struct mcp_pool_client *a = nullptr, *b = nullptr;
	struct mcp_tensor t = {}, got = {};
	struct mcp_pool_info info = {};

	opts.size = sizeof(opts);
	opts.flags = MCP_POOL_NO_HUGEPAGES;
	opts.region_bytes = 4 * MiB;
	opts.slots = 4;
	cr_assert_eq(mcp_pool_serve(path.c_str(), &opts, &server), 0, "%s", mcp_strerror_last());
	cr_assert_eq(mcp_pool_attach(path.c_str(), &a), 0, "%s", mcp_strerror_last());
	cr_assert_eq(mcp_pool_attach(path.c_str(), &b), 0, "%s", mcp_strerror_last());
	cr_expect_neq(mcp_pool_client_id(a), mcp_pool_client_id(b));
	cr_assert_eq(mcp_pool_alloc(a, 1000, &t), 0);
	auto *p = static_cast<unsigned char *>(mcp_pool_data(a, &t));
	cr_assert(p);
	std::memset(p, 0x42, 1000);
	cr_expect_eq(mcp_pool_receive(b, 0, &got), -ETIMEDOUT);
	cr_expect_eq(mcp_pool_set_spin(b, 200), 0);
	cr_assert_eq(mcp_pool_send(a, &t, mcp_pool_client_id(b)), 0);
	cr_assert_eq(mcp_pool_receive(b, 5000, &got), 0);
	cr_expect_eq(got.id, t.id);
	cr_expect_eq(got.from, mcp_pool_client_id(a));
	auto *q = static_cast<unsigned char *>(mcp_pool_data(b, &got));
	cr_expect(q && q[0] == 0x42 && q[999] == 0x42);
	cr_expect_eq(mcp_pool_free(a, &got), -EPERM);
	cr_expect(std::strstr(mcp_strerror_last(), "another client"));
	cr_expect_eq(mcp_pool_stat(b, &info), 0);
	cr_expect_eq(info.slots, 4U);
	cr_expect_eq(info.slots_used, 1U);
	cr_expect_eq(info.clients, 2U);
	cr_expect_eq(info.hugepages, 0U);
	cr_expect_eq(mcp_pool_free(b, &got), 0);
	cr_expect_eq(mcp_pool_alloc(a, 5 * MiB, &t), -E2BIG);
	struct mcp_tensor outside = {1, 4 * MiB, 1, 1, 0, 0};
	cr_expect_null(mcp_pool_data(a, &outside));
	cr_expect_eq(mcp_pool_query(path.c_str(), &info), 0);
	cr_expect_eq(info.slots_used, 0U);
	mcp_pool_detach(a);
	mcp_pool_detach(b);
	mcp_pool_server_stop(server);
	cr_expect_eq(mcp_pool_query(path.c_str(), &info), -ECONNREFUSED);
	cr_expect_eq(mcp_pool_attach(nullptr, &a), -EINVAL);
	cr_expect_eq(mcp_pool_set_spin(nullptr, 10), -EINVAL);
	opts.flags = 0x80;
	cr_expect_eq(mcp_pool_serve(path.c_str(), &opts, &server), -EINVAL);
}

// The control area of a client's mapping (tensor_pool_shm.hpp), for tests
// that act as a broken or hostile client.
pool::Shm control_of(const mcp::TensorPoolClient &c, std::uint32_t slots,
		     std::uint32_t max_clients = pool::default_max_clients)
{
	pool::Shm shm;

	shm.base = c.region().data() + c.region().size();
	shm.layout = pool::ShmLayout::of(slots, max_clients);
	return shm;
}

std::uint32_t test_seed()
{
	const char *env = std::getenv("MCP_POOL_SEED");

	return env ? static_cast<std::uint32_t>(std::strtoul(env, nullptr, 0)) : 23;
}

Test(tensor_pool_shm, spin_then_futex)
{
	const std::string path = unique_name("spin");
	mcp::TensorPoolServer server = small_pool(path);
	mcp::TensorPoolClient a = mcp::TensorPool::attach(path);
	mcp::TensorPoolClient b = mcp::TensorPool::attach(path);

	cr_expect_eq(b.spin().count(), 0);
	b.set_spin(std::chrono::microseconds(500));
	cr_expect_eq(b.spin().count(), 500);
	// Spin, then sleep, then time out.
	const auto start = std::chrono::steady_clock::now();
	cr_expect(!b.receive(std::chrono::milliseconds(30)));
	cr_expect_geq(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(30));
	// A sleeping receiver is woken by the send, not by the time-out.
	mcp::Tensor t = a.alloc(10);
	std::thread sender([&] {
		std::this_thread::sleep_for(std::chrono::milliseconds(50));
		a.send(t, b.id());
	});
	const auto before = std::chrono::steady_clock::now();
	std::optional<mcp::Tensor> got = b.receive(std::chrono::seconds(10));
	sender.join();
	cr_assert(got);
	cr_expect_eq(got->id, t.id);
	cr_expect_eq(got->from, a.id());
	cr_expect_lt(std::chrono::steady_clock::now() - before, std::chrono::seconds(5));
	// No message per send: the server saw none, ownership moved all the same.
	cr_expect_eq(error_of([&] { a.free(*got); }), EPERM);
	b.free(*got);
	b.set_spin(std::chrono::microseconds(-5));
	cr_expect_eq(b.spin().count(), 0);
}

Test(tensor_pool_shm, queue_full_keeps_the_tensor)
{
	const std::string path = unique_name("qfull");
	mcp::TensorPoolServer server = small_pool(path, 4);
	mcp::TensorPoolClient a = mcp::TensorPool::attach(path);
	mcp::TensorPoolClient b = mcp::TensorPool::attach(path);
	const pool::Shm shm = control_of(a, 4);
	const int bi = shm.find_client(b.id());
	cr_assert_geq(bi, 0);

	// Fill b's queue with claims of a live client (a), as if a were slow.
	for (std::uint32_t i = 0; i < shm.layout.depth; i++)
		cr_assert_geq(pool::queue_claim(shm, static_cast<std::uint32_t>(bi), a.id()), 0);
	mcp::Tensor t = a.alloc(1);
	cr_expect_eq(error_of([&] { a.send(t, b.id()); }), EAGAIN);
	cr_expect(!b.receive(std::chrono::milliseconds(0)), "claimed entries are not delivered");
	a.free(t); // still a's
}

Test(tensor_pool_shm, too_many_clients)
{
	const std::string path = unique_name("users");
	mcp::PoolOptions o;
	o.region_bytes = 4 * MiB;
	o.slots = 4;
	o.max_clients = 2;
	o.no_hugepages = true;
	o.warn = [](const std::string &) {};
	mcp::TensorPoolServer server = mcp::TensorPool::serve(path, o);
	std::optional<mcp::TensorPoolClient> a(mcp::TensorPool::attach(path));
	mcp::TensorPoolClient b = mcp::TensorPool::attach(path);

	cr_expect_eq(error_of([&] { mcp::TensorPool::attach(path); }), EUSERS);
	cr_expect(message_of([&] { mcp::TensorPool::attach(path); }).find("--clients") != std::string::npos);
	a.reset();
	std::optional<mcp::TensorPoolClient> c;
	cr_expect(eventually([&] {
		return error_of([&] { c.emplace(mcp::TensorPool::attach(path)); }) == 0;
	}));
	cr_assert(c);
	mcp::Tensor t = b.alloc(1);
	b.send(t, c->id());
	std::optional<mcp::Tensor> got = c->receive(std::chrono::seconds(5));
	cr_expect(got && got->id == t.id, "the reused queue starts empty and works");
	o.max_clients = 0;
	cr_expect_eq(error_of([&] { mcp::TensorPool::serve(unique_name("users0"), o); }), EINVAL);
}

// A producer killed between claiming an entry and committing it: the
// entry is never delivered, its tensors are reclaimed, and the receiver
// asleep behind it gets the next sender's tensor.
Test(tensor_pool_shm, producer_killed_mid_send)
{
	const std::string path = unique_name("midsend");
	mcp::TensorPoolServer server = small_pool(path);
	mcp::TensorPoolClient r = mcp::TensorPool::attach(path);
	int ready[2];
	cr_assert_eq(::pipe(ready), 0);
	pid_t pid = ::fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		mcp::TensorPoolClient c = mcp::TensorPool::attach(path);
		const pool::Shm shm = control_of(c, 8);
		mcp::Tensor t = c.alloc(MiB);
		// What send() does up to the commit, then stop there.
		const int ri = shm.find_client(r.id());
		auto own = pool::atomic(shm.desc(static_cast<std::uint32_t>(t.offset / MiB)).own);
		std::uint64_t w = pool::own_word(c.id(), 0);
		if (ri < 0 || !own.compare_exchange_strong(w, pool::own_word(c.id(), r.id())) ||
		    pool::queue_claim(shm, static_cast<std::uint32_t>(ri), c.id()) < 0)
			_exit(1);
		c.alloc(2 * MiB);
		ready_then_pause(ready[1]);
	}
	wait_ready(ready[0]);
	cr_expect_eq(server.stat().slots_used, 3U);
	cr_expect(!r.receive(std::chrono::milliseconds(20)), "a claimed entry is not delivered");

	std::optional<mcp::Tensor> got;
	std::thread receiver([&] { got = r.receive(std::chrono::seconds(10)); });
	std::this_thread::sleep_for(std::chrono::milliseconds(20));
	::kill(pid, SIGKILL);
	::waitpid(pid, nullptr, 0);
	cr_expect(eventually([&] { return server.stat().slots_used == 0; }), "the dead client's tensors");
	mcp::TensorPoolClient d = mcp::TensorPool::attach(path);
	mcp::Tensor t = d.alloc(100);
	d.send(t, r.id());
	receiver.join();
	cr_assert(got, "the receiver stays blocked behind the dead producer's entry");
	cr_expect_eq(got->id, t.id);
	cr_expect_eq(got->from, d.id());
	::close(ready[0]);
	::close(ready[1]);
}

// 1,000 clients killed at seeded random moments while they allocate and
// send to a receiver that frees what it gets: afterwards every slot is
// free again.  MCP_POOL_SEED=N replays a run.
Test(tensor_pool_shm, killed_clients_leak_nothing, .timeout = 60)
{
	const std::uint32_t seed = test_seed();
	const std::string path = unique_name("killer");
	constexpr std::uint32_t slots = 32;
	constexpr int killed = 1000;
	mcp::PoolOptions o;
	o.region_bytes = slots * 64 * 1024;
	o.slots = slots;
	o.no_hugepages = true;
	o.warn = [](const std::string &) {};
	mcp::TensorPoolServer server = mcp::TensorPool::serve(path, o);
	mcp::TensorPoolClient r = mcp::TensorPool::attach(path);
	const std::uint32_t rid = r.id();
	std::atomic<bool> done{false};
	std::atomic<unsigned> received{0};
	std::thread receiver([&] {
		while (!done) {
			std::optional<mcp::Tensor> t = r.receive(std::chrono::milliseconds(20));
			if (!t)
				continue;
			received++;
			r.free(*t);
		}
	});
	std::mt19937 rng(seed);
	std::vector<pid_t> alive;

	for (int n = 0; n < killed; n++) {
		const std::uint32_t child_seed = static_cast<std::uint32_t>(rng());
		pid_t pid = ::fork();
		cr_assert_geq(pid, 0);
		if (pid == 0) {
			std::mt19937 crng(child_seed);
			try {
				mcp::TensorPoolClient c = mcp::TensorPool::attach(path);
				for (;;) {
					mcp::Tensor t = c.alloc(1 + crng() % (3 * 64 * 1024));
					if (crng() % 4)
						c.send(t, rid); // else it keeps it
				}
			} catch (const mcp::Error &) {
				// ENOSPC or EAGAIN: hold what it has until killed.
			}
			::pause();
			_exit(0);
		}
		alive.push_back(pid);
		if (alive.size() > 3 || n == killed - 1) {
			// Kill one of the live children after a random moment.
			std::this_thread::sleep_for(std::chrono::microseconds(rng() % 2000));
			const std::size_t k = rng() % alive.size();
			::kill(alive[k], SIGKILL);
			cr_assert_eq(::waitpid(alive[k], nullptr, 0), alive[k]);
			alive.erase(alive.begin() + static_cast<std::ptrdiff_t>(k));
		}
	}
	for (pid_t pid : alive) {
		::kill(pid, SIGKILL);
		::waitpid(pid, nullptr, 0);
	}
	cr_expect(eventually([&] {
		mcp::PoolStat s = server.stat();
		return s.slots_used == 0 && s.tensors == 0 && s.clients == 1;
	}), "seed %u: %u slots, %u tensors, %u clients left", seed, server.stat().slots_used,
		  server.stat().tensors, server.stat().clients);
	done = true;
	receiver.join();
	cr_expect_gt(received.load(), 0U, "seed %u: nothing was handed over", seed);
	// Every slot free: one tensor of the whole pool fits.
	mcp::TensorPoolClient c = mcp::TensorPool::attach(path);
	mcp::Tensor all = c.alloc(o.region_bytes);
	c.send(all, rid);
	std::optional<mcp::Tensor> got = r.receive(std::chrono::seconds(5));
	cr_expect(got && got->id == all.id, "seed %u: the receiver's queue works", seed);
}

// A client writing random bytes over the control area while two others
// hand tensors back and forth: nobody crashes or reads outside the
// region, the server repairs its table and reclaims, and new clients hand
// off as before.  MCP_POOL_SEED=N replays a run.
Test(tensor_pool_shm, scribbler_cannot_crash_anyone, .timeout = 60)
{
	const std::uint32_t seed = test_seed();
	const std::string path = unique_name("fuzz");
	constexpr std::uint32_t slots = 16;
	mcp::TensorPoolServer server = small_pool(path, slots);
	constexpr auto run_for = std::chrono::milliseconds(1500);
	int ids[2];
	cr_assert_eq(::pipe(ids), 0);

	// Two peers: each sends its tensors to the other (the first learns
	// the second's id from what arrives), receives, checks that what
	// arrives lies in the region and reads all of it.
	auto peer = [&](int me, std::uint32_t other) -> pid_t {
		pid_t pid = ::fork();
		if (pid != 0)
			return pid;
		int rc = 0;
		try {
			mcp::TensorPoolClient c = mcp::TensorPool::attach(path);
			const std::uint32_t id = c.id();
			if (::write(ids[1], &id, sizeof(id)) != sizeof(id))
				_exit(4);
			const auto end = std::chrono::steady_clock::now() + run_for;
			std::uint64_t sum = 0;
			while (std::chrono::steady_clock::now() < end) {
				try {
					if (other) {
						mcp::Tensor t = c.alloc(1 + sum % (2 * MiB));
						std::memset(c.span(t).data(), me, t.size);
						c.send(t, other);
					}
				} catch (const mcp::Error &) {
					// ENOSPC, EAGAIN, EPERM, ENOENT: the scribbler's doing.
				}
				std::optional<mcp::Tensor> t = c.receive(std::chrono::milliseconds(1));
				if (!t)
					continue;
				if (t->offset + t->capacity > c.region().size() || t->size > t->capacity) {
					rc = 3;
					break;
				}
				for (std::byte b : c.span(*t))
					sum += static_cast<std::uint8_t>(b);
				if (!other)
					other = t->from;
				try {
					c.free(*t);
				} catch (const mcp::Error &) {
				}
			}
		} catch (const mcp::Error &) {
			rc = 0; // detached by the server: allowed
		}
		_exit(rc);
	};
	std::uint32_t id0 = 0;
	pid_t p0 = peer(0, 0);
	cr_assert_gt(p0, 0);
	cr_assert_eq(::read(ids[0], &id0, sizeof(id0)), sizeof(id0));
	pid_t p1 = peer(1, id0);
	cr_assert_gt(p1, 0);
	pid_t scribbler = ::fork();
	cr_assert_geq(scribbler, 0);
	if (scribbler == 0) {
		mcp::TensorPoolClient c = mcp::TensorPool::attach(path);
		const pool::Shm shm = control_of(c, slots);
		std::mt19937 rng(seed);
		const auto end = std::chrono::steady_clock::now() + run_for;
		while (std::chrono::steady_clock::now() < end) {
			const std::size_t at = rng() % (shm.layout.bytes - 8);
			const std::uint64_t v = (std::uint64_t{rng()} << 32 | rng()) >> (rng() % 64);
			std::memcpy(shm.base + at, &v, sizeof(v));
		}
		_exit(0);
	}
	for (pid_t pid : {p0, p1, scribbler}) {
		int status = 0;
		cr_assert_eq(::waitpid(pid, &status, 0), pid);
		cr_expect(WIFEXITED(status) && WEXITSTATUS(status) == 0,
			  "seed %u: client %d ended with status %#x", seed, pid, status);
	}
	::close(ids[0]);
	::close(ids[1]);
	cr_expect(eventually([&] {
		mcp::PoolStat s = server.stat();
		return s.slots_used == 0 && s.clients == 0;
	}), "seed %u: %u slots left", seed, server.stat().slots_used);
	mcp::TensorPoolClient a = mcp::TensorPool::attach(path);
	mcp::TensorPoolClient b = mcp::TensorPool::attach(path);
	mcp::Tensor t = a.alloc(slots * MiB);
	a.send(t, b.id());
	std::optional<mcp::Tensor> got = b.receive(std::chrono::seconds(5));
	cr_expect(got && got->id == t.id && got->size == slots * MiB, "seed %u: hand-off after", seed);
}
