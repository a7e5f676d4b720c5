// SPDX-License-Identifier: GPL-2.0-only
// Benchmark: per-node scheduling cost of inference graphs.
//
// A chain of 1000 WNOP nodes (each reads the previous node's 64-byte
// tensor and writes the next one) executed through the kernel with
// mcp::Runtime's worker threads (execute + out-fence wait), against a
// plain userspace thread-pool DAG executor written here, what a user
// would write: a ready queue, dependency counters, a condition variable,
// the same number of threads.  The kernel runs several ways, each on its
// own context: the Runtime's default (on a module with job-chains, a read
// takes a chain of up to 1024 nodes as one job, one MCP_IOC_CHAIN_DONE
// reports it), the same with chains of up to 32 nodes (job-chains only),
// jobs (a read takes a job and the jobs chained after it, one
// MCP_IOC_JOBS_DONE reports them) and one job per read with
// MCP_IOC_JOB_DONE.  Rounds alternate; the median round counts, and the
// fastest rounds' ratios are printed too (they move less with the host's
// load under emulation).  Prints microseconds per node, each mode's ratio
// to the pool, the clocksource (a worker reads the clock per node: an
// emulated HPET makes that a system call) and the best mode's ratio;
// target: <= 2x.
//
// Usage: mcp_graph_sched_bench [ROUNDS [NODES]]   (default 15 rounds, 1000 nodes)
#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <fstream>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <mcp/mcp.hpp>
#include <mcp/runtime.hpp>

namespace {

double now_us()
{
	return std::chrono::duration<double, std::micro>(
		       std::chrono::steady_clock::now().time_since_epoch())
		.count();
}

mcp::GraphDef wnop_chain(unsigned nodes)
{
	mcp::GraphBuilder g("wnop_chain");
	std::uint32_t buf = g.buffer("chain");
	std::uint32_t prev = g.tensor("t0", buf, mcp::DType::f32, {16});

	for (unsigned i = 0; i < nodes; i++) {
		std::uint32_t next = g.tensor("t" + std::to_string(i + 1), buf, mcp::DType::f32, {16});
		g.node(mcp::Op::wnop, mcp::EngineClass::worker, {prev}, {next}, {},
		       "n" + std::to_string(i));
		prev = next;
	}
	mcp::GraphLimits limits;
	limits.max_nodes = std::max<std::uint32_t>(limits.max_nodes, nodes);
	return g.build(limits);
}

// The baseline: a thread pool running a DAG by dependency counting.
class PoolExecutor {
public:
	PoolExecutor(const std::vector<std::vector<std::uint32_t>> &succ, unsigned threads)
		: succ_(succ), preds_(succ.size(), 0), pending_(succ.size())
	{
		for (const auto &s : succ)
			for (std::uint32_t to : s)
				preds_[to]++;
		for (unsigned t = 0; t < threads; t++)
			threads_.emplace_back([this] { loop(); });
	}
	~PoolExecutor()
	{
		{
			std::lock_guard guard(lock_);
			stop_ = true;
		}
		cv_.notify_all();
		for (auto &t : threads_)
			t.join();
	}

	// One execution of the whole DAG; returns when every node ran.
	void run()
	{
		std::unique_lock guard(lock_);
		left_ = succ_.size();
		for (std::size_t i = 0; i < succ_.size(); i++) {
			pending_[i] = preds_[i];
			if (!preds_[i])
				ready_.push_back(static_cast<std::uint32_t>(i));
		}
		cv_.notify_all();
		done_cv_.wait(guard, [&] { return left_ == 0; });
	}

private:
	void loop()
	{
		std::unique_lock guard(lock_);
		for (;;) {
			cv_.wait(guard, [&] { return stop_ || !ready_.empty(); });
			if (stop_)
				return;
			std::uint32_t node = ready_.front();
			ready_.pop_front();
			guard.unlock();
			// WNOP: nothing to compute.
			guard.lock();
			bool woke = false;
			for (std::uint32_t to : succ_[node])
				if (--pending_[to] == 0) {
					ready_.push_back(to);
					woke = true;
				}
			if (woke)
				cv_.notify_one();
			if (--left_ == 0)
				done_cv_.notify_one();
		}
	}

	const std::vector<std::vector<std::uint32_t>> &succ_;
	std::vector<std::uint32_t> preds_, pending_;
	std::deque<std::uint32_t> ready_;
	std::size_t left_ = 0;
	bool stop_ = false;
	std::mutex lock_;
	std::condition_variable cv_, done_cv_;
	std::vector<std::thread> threads_;
};

// One way of running the chain through the kernel, on its own context.
struct Variant {
	std::string name;
	mcp::RuntimeOptions options;
	mcp::Device dev;
	std::optional<mcp::Runtime> rt;
	mcp::LoadedGraph graph;
	std::vector<double> us;	// per round
	// Per round, in us, from the kernel's status and steady_clock (both
	// CLOCK_MONOTONIC): execute() called to the kernel's submit time,
	// submit to the first node's start, first start to last end (the
	// workers' times), last end to the execution's end (the last report
	// applied), execution end to the fence wait returning.
	std::vector<double> to_submit, to_first, running, to_end, to_awake;

	Variant(std::string n, mcp::RuntimeOptions o) : name(std::move(n)), options(std::move(o)) {}
};

double median(std::vector<double> v)
{
	std::sort(v.begin(), v.end());
	return v[v.size() / 2];
}

double fastest(const std::vector<double> &v)
{
	return *std::min_element(v.begin(), v.end());
}

// The kernel's clocksource, or "unknown".
std::string clocksource()
{
	std::ifstream f("/sys/devices/system/clocksource/clocksource0/current_clocksource");
	std::string name;

	return f >> name ? name : "unknown";
}

} // namespace

int main(int argc, char **argv)
{
	unsigned rounds = argc > 1 ? static_cast<unsigned>(std::atoi(argv[1])) : 15;
	unsigned nodes = argc > 2 ? static_cast<unsigned>(std::atoi(argv[2])) : 1000;

	if (rounds == 0 || nodes == 0) {
		std::fprintf(stderr, "usage: mcp_graph_sched_bench [ROUNDS [NODES]]\n");
		return 2;
	}
	try {
		mcp::Device dev = mcp::Device::open();
		if (!dev.version().has(mcp::feature::graphs)) {
			std::printf("mcp_graph_sched_bench: unsupported: the module has no inference graphs\n");
			return 0;
		}
		const bool has_chains = dev.version().has(mcp::feature::job_chains);
		mcp::RuntimeOptions short_chains, batched, one_job;
		short_chains.worker_batch = 32;
		batched.worker_chains = false;
		one_job.worker_chains = false;
		one_job.worker_batch = 1;
		// One context each: each runtime's workers take only its own jobs.
		std::vector<Variant> variants;
		// The Runtime's defaults first: chains of up to 1024 nodes.
		variants.push_back({has_chains ? "chain per read + CHAIN_DONE"
					       : "chains (module without job-chains: batch)",
				    mcp::RuntimeOptions{}});
		if (has_chains)
			variants.push_back({"chain per read (up to 32) + CHAIN_DONE", short_chains});
		variants.push_back({"jobs per read + JOBS_DONE", batched});
		variants.push_back({"1 job per read + JOB_DONE", one_job});
		mcp::GraphDef def = wnop_chain(nodes);
		for (Variant &v : variants) {
			v.dev = mcp::Device::open();
			v.rt.emplace(mcp::Dma::host(v.dev), v.options);
			v.graph = v.rt->load(def);
		}
		const std::vector<mcp::WorkerInfo> workers = variants.front().rt->workers();
		unsigned threads = static_cast<unsigned>(workers.size());
		auto succ = def.successors();
		PoolExecutor pool(succ, threads);
		std::vector<double> pool_us;

		// Runs @v's graph once; false (with a message) if it failed.
		auto timed = [&](Variant &v) {
			double t0 = now_us();
			mcp::Execution e = v.rt->execute(v.graph);
			mcp::FenceResult res = e.fence.wait();
			double t1 = now_us();
			v.us.push_back(t1 - t0);
			mcp::ExecStatus st = v.rt->status(e.exec_id);
			if (!res.ok()) {
				std::fprintf(stderr, "mcp_graph_sched_bench: %s\n",
					     mcp::exec_failure_message(st, def).c_str());
				return false;
			}
			const mcp::NodeStatus &first = st.nodes.front(), &last = st.nodes.back();
			v.to_submit.push_back(static_cast<double>(st.submit_ns) / 1e3 - t0);
			v.to_first.push_back(static_cast<double>(first.start_ns - st.submit_ns) / 1e3);
			v.running.push_back(static_cast<double>(last.end_ns - first.start_ns) / 1e3);
			v.to_end.push_back(static_cast<double>(st.end_ns - last.end_ns) / 1e3);
			v.to_awake.push_back(t1 - static_cast<double>(st.end_ns) / 1e3);
			return true;
		};
		// One of each untimed: first-touch and thread start-up.
		for (Variant &v : variants)
			v.rt->execute(v.graph).fence.wait();
		pool.run();
		for (unsigned r = 0; r < rounds; r++) {
			for (Variant &v : variants)
				if (!timed(v))
					return 1;
			double t0 = now_us();
			pool.run();
			pool_us.push_back(now_us() - t0);
		}
		double p = median(pool_us) / nodes, pf = fastest(pool_us) / nodes;
		std::printf("graph scheduling: chain of %u WNOP nodes, %u worker threads, median of "
			    "%u rounds, clocksource %s\n",
			    nodes, threads, rounds, clocksource().c_str());
		const Variant *best = &variants.front();
		for (const Variant &v : variants) {
			const mcp::WorkerInfo w = v.rt->workers().front();
			double m = median(v.us) / nodes;
			std::printf("  MCP, %-42s %8.2f us/node  ratio %6.2fx  (%s, %u per read)\n",
				    (v.name + ":").c_str(), m, m / p, mcp::to_string(w.mode), w.batch);
			if (m < median(best->us) / nodes)
				best = &v;
		}
		std::printf("  userspace thread-pool DAG:                      %8.2f us/node\n", p);
		for (const Variant &v : variants)
			std::printf("  fastest rounds: %-36s %.2f us/node, ratio %.2fx\n",
				    (v.name + ":").c_str(), fastest(v.us) / nodes,
				    fastest(v.us) / nodes / pf);
		std::printf("  fastest rounds: pool %.2f us/node\n", pf);
		std::printf("  where a round goes (median us; kernel status times): execute() -> "
			    "submit, -> first node start, -> last node end, -> execution end, -> "
			    "fence wait returns\n");
		for (const Variant &v : variants)
			std::printf("    %-44s %8.1f %8.1f %9.1f %8.1f %8.1f\n", (v.name + ":").c_str(),
				    median(v.to_submit), median(v.to_first), median(v.running),
				    median(v.to_end), median(v.to_awake));
		double m = median(best->us) / nodes;
		std::printf("  best MCP mode: %s\n", best->name.c_str());
		std::printf("  ratio %.2fx (target <= 2x): %s\n", m / p, m / p <= 2.0 ? "met" : "NOT met");
		return 0;
	} catch (const std::exception &e) {
		std::fprintf(stderr, "mcp_graph_sched_bench: %s\n", e.what());
		return 1;
	}
}
