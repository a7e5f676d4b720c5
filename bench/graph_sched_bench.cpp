// SPDX-License-Identifier: GPL-2.0-only
// Benchmark: per-node scheduling cost of inference graphs.
//
// A chain of 1000 WNOP nodes (each reads the previous node's 64-byte
// tensor and writes the next one) executed through the kernel with
// mcp::Runtime's worker threads (execute + out-fence wait), against a
// plain userspace thread-pool DAG executor written here, what a user
// would write: a ready queue, dependency counters, a condition variable,
// the same number of threads.  The kernel runs twice, each on its own
// context: with the Runtime's default worker batch (a read takes a job
// and the chain after it, one MCP_IOC_JOBS_DONE reports them) and with
// one job per read and MCP_IOC_JOB_DONE.  Rounds alternate; the median
// round counts, and the fastest rounds' ratio is printed too (it moves
// less with the host's load under emulation).  Prints microseconds per
// node, the ratios and the clocksource (the worker reads the clock per
// job: an emulated HPET makes that a system call); target: <= 2x.
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
		// Two contexts: each runtime's workers take only its own jobs.
		mcp::Device dev_single = mcp::Device::open();
		mcp::Runtime rt(mcp::Dma::host(dev));
		mcp::RuntimeOptions one_job;
		one_job.worker_batch = 1;
		mcp::Runtime rt_single(mcp::Dma::host(dev_single), one_job);
		unsigned threads = static_cast<unsigned>(rt.workers().size());
		unsigned batch = rt.workers().front().batch;
		mcp::GraphDef def = wnop_chain(nodes);
		mcp::LoadedGraph g = rt.load(def);
		mcp::LoadedGraph g_single = rt_single.load(def);
		auto succ = def.successors();
		PoolExecutor pool(succ, threads);
		std::vector<double> mcp_us, single_us, pool_us;

		// Runs @graph once on @runtime; false (with a message) if it failed.
		auto timed = [&](mcp::Runtime &runtime, mcp::LoadedGraph &graph,
				 std::vector<double> &out) {
			double t0 = now_us();
			mcp::Execution e = runtime.execute(graph);
			mcp::FenceResult res = e.fence.wait();
			out.push_back(now_us() - t0);
			if (!res.ok())
				std::fprintf(stderr, "mcp_graph_sched_bench: %s\n",
					     mcp::exec_failure_message(runtime.status(e.exec_id), def)
						     .c_str());
			return res.ok();
		};
		// One of each untimed: first-touch and thread start-up.
		rt.execute(g).fence.wait();
		rt_single.execute(g_single).fence.wait();
		pool.run();
		for (unsigned r = 0; r < rounds; r++) {
			if (!timed(rt, g, mcp_us) || !timed(rt_single, g_single, single_us))
				return 1;
			double t0 = now_us();
			pool.run();
			pool_us.push_back(now_us() - t0);
		}
		double m = median(mcp_us) / nodes, s = median(single_us) / nodes;
		double p = median(pool_us) / nodes;
		std::printf("graph scheduling: chain of %u WNOP nodes, %u worker threads (%zu nodes), "
			    "median of %u rounds, clocksource %s\n",
			    nodes, threads, rt.workers().size(), rounds, clocksource().c_str());
		std::printf("  MCP, %2u jobs per read + JOBS_DONE:   %10.2f us/node  ratio %6.2fx%s\n",
			    batch, m, m / p,
			    batch > 1 ? "" : "  (module without job-batch: 1 job per read)");
		std::printf("  MCP, 1 job per read + JOB_DONE:     %10.2f us/node  ratio %6.2fx\n", s,
			    s / p);
		std::printf("  userspace thread-pool DAG:          %10.2f us/node\n", p);
		std::printf("  batched vs one job per read: %.2fx faster\n", s / m);
		double mf = fastest(mcp_us) / nodes, pf = fastest(pool_us) / nodes;
		std::printf("  fastest rounds: batched %.2f us/node, pool %.2f us/node, ratio %.2fx\n",
			    mf, pf, mf / pf);
		std::printf("  ratio %.2fx (target <= 2x): %s\n", m / p, m / p <= 2.0 ? "met" : "NOT met");
		return 0;
	} catch (const std::exception &e) {
		std::fprintf(stderr, "mcp_graph_sched_bench: %s\n", e.what());
		return 1;
	}
}
