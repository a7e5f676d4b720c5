// SPDX-License-Identifier: GPL-2.0-only
// MCP's userspace executor against ONNX Runtime on the same model and
// input, on the host (no module needed): p50/p99 latency of each side in
// alternating rounds, their ratio, and load time (import + Runtime::load)
// against ORT's session creation.  ORT is bench/ort_latency.js, one
// session kept in a child node process.
//
//   mcp_ort_bench MODEL.onnx NAME=INPUT.npy [THREADS [ITERATIONS [ROUNDS]]]
//
// THREADS (1) is MCP's workers per NUMA node and ORT's intraOpNumThreads;
// ITERATIONS (200) runs per side per round, ROUNDS (5).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <mcp/npy.hpp>
#include <mcp/onnx.hpp>
#include <mcp/runtime.hpp>

#include "bench_timing.hpp"

namespace {

using clk = std::chrono::steady_clock;

// Of samples in ns, in us.
double pct_us(const std::vector<double> &v, double p)
{
	return percentile(v, p) / 1000.0;
}

// The ORT child: its stdin and stdout.
struct Peer {
	pid_t pid = -1;
	FILE *to = nullptr;
	FILE *from = nullptr;

	std::string line()
	{
		std::string s;
		for (int c; (c = std::fgetc(from)) != EOF && c != '\n';)
			s += static_cast<char>(c);
		return s;
	}
	~Peer()
	{
		if (to)
			std::fclose(to);
		if (from)
			std::fclose(from);
		if (pid > 0)
			::waitpid(pid, nullptr, 0);
	}
};

bool spawn(Peer &p, const std::vector<std::string> &argv)
{
	int in[2], out[2];
	if (::pipe2(in, O_CLOEXEC) || ::pipe2(out, O_CLOEXEC))
		return false;
	p.pid = ::fork();
	if (p.pid == 0) {
		::dup2(in[0], 0);
		::dup2(out[1], 1);
		std::vector<char *> a;
		for (const std::string &s : argv)
			a.push_back(const_cast<char *>(s.c_str()));
		a.push_back(nullptr);
		::execvp(a[0], a.data());
		_exit(127);
	}
	::close(in[0]);
	::close(out[1]);
	p.to = ::fdopen(in[1], "w");
	p.from = ::fdopen(out[0], "r");
	return p.pid > 0 && p.to && p.from;
}

} // namespace

int main(int argc, char **argv)
{
	if (argc < 3) {
		std::fprintf(stderr, "usage: %s MODEL.onnx NAME=INPUT.npy [THREADS [ITERATIONS [ROUNDS]]]\n",
			     argv[0]);
		return 2;
	}
	const std::string model = argv[1], spec = argv[2];
	const unsigned threads = argc > 3 ? static_cast<unsigned>(std::atoi(argv[3])) : 1;
	const unsigned iterations = argc > 4 ? static_cast<unsigned>(std::atoi(argv[4])) : 200;
	const unsigned rounds = argc > 5 ? static_cast<unsigned>(std::atoi(argv[5])) : 5;
	const std::size_t eq = spec.find('=');
	if (eq == std::string::npos || !threads || !iterations || !rounds) {
		std::fprintf(stderr, "%s: bad arguments\n", argv[0]);
		return 2;
	}
	const std::string name = spec.substr(0, eq), npy = spec.substr(eq + 1);
	try {
		const mcp::npy::Array x = mcp::npy::read(npy);
		mcp::RuntimeOptions ro;
		ro.executor = mcp::Executor::userspace;
		ro.workers_per_node = threads;
		mcp::Runtime rt(ro);

		const auto l0 = clk::now();
		mcp::onnx::ImportOptions io;
		io.inputs.emplace_back(name, std::vector<std::int64_t>(x.shape.begin(), x.shape.end()));
		const mcp::GraphDef def = mcp::onnx::import(model, io);
		mcp::LoadedGraph g = rt.load(def);
		const double load_ms = std::chrono::duration<double, std::milli>(clk::now() - l0).count();
		mcp::npy::load_buffer(def, name, x, npy, g.memory(name));

		Peer ort;
		if (!spawn(ort, {"node", MCP_SOURCE_DIR "/bench/ort_latency.js", model, spec,
				 std::to_string(threads)})) {
			std::fprintf(stderr, "%s: cannot start node\n", argv[0]);
			return 1;
		}
		const std::string ready = ort.line();
		if (ready.rfind("ready ", 0) != 0) {
			std::fprintf(stderr, "%s: ONNX Runtime did not start (%s)\n", argv[0], ready.c_str());
			return 1;
		}
		const double ort_ms = std::stod(ready.substr(6)) / 1e6;

		std::vector<double> mcp_ns, ort_ns;
		(void)rt.run(g);	// warm-up
		for (unsigned r = 0; r < rounds; r++) {
			for (unsigned i = 0; i < iterations; i++) {
				const auto t0 = clk::now();
				const mcp::ExecStatus st = rt.run(g);
				const auto t1 = clk::now();
				if (st.state != mcp::ExecState::done) {
					std::fprintf(stderr, "%s\n", mcp::exec_failure_message(st, def).c_str());
					return 1;
				}
				mcp_ns.push_back(std::chrono::duration<double, std::nano>(t1 - t0).count());
			}
			std::fprintf(ort.to, "%u\n", iterations);
			std::fflush(ort.to);
			const std::string times = ort.line();
			const char *p = times.c_str();
			for (char *end; *p; p = end) {
				const double v = std::strtod(p, &end);
				if (end == p)
					break;
				ort_ns.push_back(v);
			}
		}
		if (ort_ns.size() != mcp_ns.size()) {
			std::fprintf(stderr, "%s: ONNX Runtime answered %zu runs of %zu\n", argv[0],
				     ort_ns.size(), mcp_ns.size());
			return 1;
		}
		const double m50 = pct_us(mcp_ns, 50), m99 = pct_us(mcp_ns, 99);
		const double o50 = pct_us(ort_ns, 50), o99 = pct_us(ort_ns, 99);
		std::printf("%s threads %u: MCP userspace p50 %.1f us p99 %.1f us, ORT p50 %.1f us "
			    "p99 %.1f us, MCP/ORT p50 %.2f p99 %.2f; load %.1f ms vs session %.1f ms "
			    "(%.2f); %u rounds of %u\n",
			    def.name.c_str(), threads, m50, m99, o50, o99, m50 / o50, m99 / o99, load_ms,
			    ort_ms, load_ms / ort_ms, rounds, iterations);
	} catch (const std::exception &e) {
		std::fprintf(stderr, "%s: %s\n", argv[0], e.what());
		return 1;
	}
	return 0;
}
