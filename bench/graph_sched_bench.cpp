// SPDX-License-Identifier: GPL-2.0-only
// Benchmark: per-node scheduling cost of inference graphs.
//
// A chain of 1000 WNOP nodes (each reads the previous node's 64-byte
// tensor and writes the next one) executed through the kernel with
// mcp::Runtime's worker threads (execute + out-fence wait), against a
// plain userspace thread-pool DAG executor written here, what a user
// would write: a ready queue, dependency counters, a condition variable,
// the same number of threads.  Rounds alternate; the median round counts.
// Prints microseconds per node and the ratio; target: <= 2x.
//
// Usage: mcp_graph_sched_bench [ROUNDS [NODES]]   (default 15 rounds, 1000 nodes)
#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <mutex>
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
		mcp::Dma ctx = mcp::Dma::host(dev);
		mcp::Runtime rt(ctx);
		unsigned threads = static_cast<unsigned>(rt.workers().size());
		mcp::GraphDef def = wnop_chain(nodes);
		mcp::LoadedGraph g = rt.load(def);
		auto succ = def.successors();
		PoolExecutor pool(succ, threads);
		std::vector<double> mcp_us, pool_us;

		// One of each untimed: first-touch and thread start-up.
		rt.execute(g).fence.wait();
		pool.run();
		for (unsigned r = 0; r < rounds; r++) {
			double t0 = now_us();
			mcp::Execution e = rt.execute(g);
			mcp::FenceResult res = e.fence.wait();
			double t1 = now_us();
			if (!res.ok()) {
				std::fprintf(stderr, "mcp_graph_sched_bench: %s\n",
					     mcp::exec_failure_message(rt.status(e.exec_id), def).c_str());
				return 1;
			}
			pool.run();
			double t2 = now_us();
			mcp_us.push_back(t1 - t0);
			pool_us.push_back(t2 - t1);
		}
		double m = median(mcp_us) / nodes, p = median(pool_us) / nodes;
		std::printf("graph scheduling: chain of %u WNOP nodes, %u worker threads (%zu nodes), "
			    "median of %u rounds\n",
			    nodes, threads, rt.workers().size(), rounds);
		std::printf("  MCP (GRAPH_EXEC, workers, fence):  %10.2f us/node\n", m);
		std::printf("  userspace thread-pool DAG:         %10.2f us/node\n", p);
		std::printf("  ratio %.2fx (target <= 2x): %s\n", m / p, m / p <= 2.0 ? "met" : "NOT met");
		return 0;
	} catch (const std::exception &e) {
		std::fprintf(stderr, "mcp_graph_sched_bench: %s\n", e.what());
		return 1;
	}
}
