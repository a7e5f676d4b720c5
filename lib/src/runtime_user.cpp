// SPDX-License-Identifier: LGPL-2.1-or-later
// The userspace executor: a Runtime's graphs run without /dev/mcp, with
// the kernel executor's rules (runtime_user.hpp says which are shared and
// how).  What differs is only the dispatch: a mutex and per-node condition
// variables instead of mcp_sched.lock and the worker fds.
#include <algorithm>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <dirent.h>
#include <fstream>
#include <sstream>
#include <utility>

#include <sched.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "runtime_user.hpp"
#include "trace_internal.hpp"

#include "../../kmod/mcp_route.h"

namespace mcp::detail {

namespace {

std::uint64_t now_ns() noexcept
{
	struct timespec ts;

	::clock_gettime(CLOCK_MONOTONIC, &ts);
	return static_cast<std::uint64_t>(ts.tv_sec) * 1000000000u +
	       static_cast<std::uint64_t>(ts.tv_nsec);
}

constexpr int mpol_bind = 2;	// MPOL_BIND of <linux/mempolicy.h>
constexpr unsigned max_node_ids = 1024;

std::string read_text(const std::string &path)
{
	std::ifstream f(path);
	std::stringstream s;

	s << f.rdbuf();
	return s.str();
}

// The ids of nodeN directories under @root, ascending.
std::vector<unsigned> node_dirs(const std::string &root)
{
	std::vector<unsigned> ids;
	DIR *d = ::opendir(root.c_str());

	if (!d)
		return ids;
	while (const struct dirent *e = ::readdir(d)) {
		unsigned id;
		char tail;
		if (std::sscanf(e->d_name, "node%u%c", &id, &tail) == 1 && id < max_node_ids)
			ids.push_back(id);
	}
	::closedir(d);
	std::sort(ids.begin(), ids.end());
	return ids;
}

int distance_cb(int a, int b, const void *arg)
{
	const auto &topo = *static_cast<const Topology *>(arg);

	try {
		return static_cast<int>(topo.distance(static_cast<unsigned>(a), static_cast<unsigned>(b)));
	} catch (const Error &) {
		return 0x7fffffff;
	}
}


} // namespace

// ---- memory ----

HostMemory::HostMemory(HostMemory &&other) noexcept
	: ptr_(std::exchange(other.ptr_, nullptr)), len_(std::exchange(other.len_, 0))
{
}

HostMemory &HostMemory::operator=(HostMemory &&other) noexcept
{
	if (this != &other) {
		if (ptr_)
			::munmap(ptr_, len_);
		ptr_ = std::exchange(other.ptr_, nullptr);
		len_ = std::exchange(other.len_, 0);
	}
	return *this;
}

HostMemory::~HostMemory()
{
	if (ptr_)
		::munmap(ptr_, len_);
}

HostMemory HostMemory::create(std::uint64_t length, int node, const std::string &what)
{
	const auto page = static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE));
	const std::uint64_t len = (std::max<std::uint64_t>(length, 1) + page - 1) / page * page;
	HostMemory m;

	void *p = ::mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED) {
		int err = errno;
		throw Error(err, what + ": cannot map " + std::to_string(len) + " bytes: " +
					 std::strerror(err));
	}
	m.ptr_ = static_cast<std::byte *>(p);
	m.len_ = len;
	if (node >= 0) {
		unsigned long mask[max_node_ids / (8 * sizeof(unsigned long))] = {};
		if (static_cast<unsigned>(node) >= max_node_ids)
			throw Error(EINVAL, what + ": node " + std::to_string(node) + " is out of range");
		mask[node / (8 * sizeof(unsigned long))] |= 1UL << (node % (8 * sizeof(unsigned long)));
		if (::syscall(SYS_mbind, p, len, mpol_bind, mask, max_node_ids + 1, 0) != 0) {
			int err = errno;
			throw Error(err, what + ": cannot bind its memory to node " +
						 std::to_string(node) + " (mbind: " + std::strerror(err) +
						 ")");
		}
	}
	// Placed now, not at the first execution's first touch.
	for (std::uint64_t off = 0; off < len; off += page)
		static_cast<volatile std::byte *>(p)[off] = std::byte{0};
	return m;
}

int memory_node(std::span<const std::byte> memory) noexcept
{
	constexpr unsigned samples = 64;
	const auto page = static_cast<std::uintptr_t>(::sysconf(_SC_PAGESIZE));
	void *pages[samples];
	int status[samples];

	if (memory.empty())
		return -1;
	const auto first = reinterpret_cast<std::uintptr_t>(memory.data()) / page * page;
	const auto last = (reinterpret_cast<std::uintptr_t>(memory.data()) + memory.size() - 1) /
			  page * page;
	const std::uintptr_t n_pages = (last - first) / page + 1;
	const unsigned n = static_cast<unsigned>(std::min<std::uintptr_t>(n_pages, samples));
	for (unsigned i = 0; i < n; i++)
		pages[i] = reinterpret_cast<void *>(
			first + (n > 1 ? (n_pages - 1) * i / (n - 1) : 0) * page);
	if (::syscall(SYS_move_pages, 0, n, pages, nullptr, status, 0) != 0)
		return -1;
	int node = status[0];
	for (unsigned i = 0; i < n; i++)
		if (status[i] < 0 || status[i] != node)
			return -1;
	return node;
}

Topology sysfs_topology()
{
	const std::string root = "/sys/devices/system/node";
	const std::vector<unsigned> cpu_node = mcp::trace::detail::read_cpu_nodes(root);
	std::vector<unsigned> ids = node_dirs(root);
	const long online = ::sysconf(_SC_NPROCESSORS_ONLN);
	const long conf = ::sysconf(_SC_NPROCESSORS_CONF);
	std::vector<Node> nodes;
	std::vector<unsigned> dist;

	if (ids.empty())
		ids.push_back(0);
	for (unsigned id : ids) {
		Node n;
		n.id = id;
		for (unsigned cpu = 0; cpu < cpu_node.size(); cpu++)
			if (cpu_node[cpu] == id)
				n.cpus.push_back(cpu);
		if (cpu_node.empty() && ids.size() == 1)
			for (long cpu = 0; cpu < online; cpu++)
				n.cpus.push_back(static_cast<unsigned>(cpu));
		std::istringstream mi(read_text(root + "/node" + std::to_string(id) + "/meminfo"));
		for (std::string line; std::getline(mi, line);) {
			unsigned long long kb;
			if (std::sscanf(line.c_str(), "Node %*u MemTotal: %llu kB", &kb) == 1)
				n.mem_total_bytes = kb * 1024;
			else if (std::sscanf(line.c_str(), "Node %*u MemFree: %llu kB", &kb) == 1)
				n.mem_free_bytes = kb * 1024;
		}
		if (ids.size() == 1 && !n.mem_total_bytes)
			n.mem_total_bytes = static_cast<std::uint64_t>(::sysconf(_SC_PHYS_PAGES)) *
					    static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE));
		nodes.push_back(std::move(n));
	}
	for (unsigned id : ids) {
		std::istringstream d(read_text(root + "/node" + std::to_string(id) + "/distance"));
		std::vector<unsigned> row;
		for (unsigned v; d >> v;)
			row.push_back(v);
		if (row.size() != ids.size()) {	// no NUMA, or an unreadable row
			row.assign(ids.size(), 20);
			row[static_cast<std::size_t>(&id - ids.data())] = 10;
		}
		dist.insert(dist.end(), row.begin(), row.end());
	}
	return Topology(std::move(nodes), std::move(dist), static_cast<unsigned>(online),
			static_cast<unsigned>(conf));
}

// ---- graphs ----

UserGraph::~UserGraph()
{
	if (!exec)
		return;
	std::lock_guard guard(exec->lock);
	auto it = std::find(exec->graphs.begin(), exec->graphs.end(), this);
	if (it != exec->graphs.end())
		exec->graphs.erase(it);
}

std::shared_ptr<UserGraph> UserExecutor::load(RuntimeState &rs, std::shared_ptr<RuntimeState> keep,
					      const GraphDef &def, const std::vector<int> &nodes)
{
	auto g = std::make_shared<UserGraph>();
	const std::uint32_t n = static_cast<std::uint32_t>(def.nodes.size());
	const std::uint32_t nb = static_cast<std::uint32_t>(def.buffers.size());
	(void)rs;

	for (std::uint32_t i = 0; i < n; i++)
		if (def.nodes[i].engine == EngineClass::device)
			throw Error(EOPNOTSUPP, node_label(def, i) +
							" runs on a device DMA engine, which the "
							"userspace executor does not have: use the "
							"kernel executor on the device's context");
	g->descs = GraphDescs::of(def);
	for (const GraphNode &node : def.nodes)
		g->engine.push_back(static_cast<std::uint8_t>(node.engine));
	const std::vector<std::vector<std::uint32_t>> succ = def.successors();
	g->n_preds.assign(n, 0);
	for (std::uint32_t i = 0; i < n; i++) {
		g->succ_start.push_back(static_cast<std::uint32_t>(g->succ.size()));
		for (std::uint32_t to : succ[i]) {
			g->succ.push_back(to);
			g->n_preds[to]++;
		}
	}
	g->succ_start.push_back(static_cast<std::uint32_t>(g->succ.size()));
	for (const struct mcp_worker_tensor &t : g->descs.tensors) {
		OpTensor o;
		o.dtype = t.dtype;
		o.rank = std::min<std::uint8_t>(t.rank, MCP_GRAPH_MAX_RANK);
		for (unsigned k = 0; k < o.rank; k++)
			o.dims[k] = t.dims[k];
		g->tensor_bytes.push_back(tensor_bytes(o));
	}
	for (std::uint32_t i = 0; i < nb; i++) {
		const GraphBuffer &b = def.buffers[i];
		std::string what = "loading graph '" + def.name + "', buffer " + std::to_string(i);
		if (!b.name.empty())
			what += " '" + b.name + "'";
		g->buffer_len.push_back(b.length);
		g->memory.push_back(HostMemory::create(b.length, nodes[i], what));
		def.fill_buffer(i, g->memory.back().data());
		g->memory_node.push_back(memory_node(g->memory.back().data()));
	}
	for (UserGraph::Slot &s : g->slots) {
		s.nodes.resize(n);
		s.node_state.resize(n);
		s.pending.resize(n);
		s.base.resize(nb);
		s.buffer_node.resize(nb);
		s.jobs.resize(n);
		s.ready.reserve(n);
		for (std::uint32_t i = 0; i < n; i++)
			s.jobs[i] = {nullptr, g.get(), &s, i};
	}
	g->state = std::move(keep);
	g->self = g;
	std::lock_guard guard(lock);
	graphs.reserve(graphs.size() + 1);
	g->exec = this;
	g->handle = next_handle++;
	graphs.push_back(g.get());
	return g;
}

// ---- executions ----

std::uint64_t UserExecutor::execute(UserGraph &g, std::span<const GraphBinding> bindings,
				    const ExecOptions &options)
{
	const std::size_t nb = g.buffer_len.size();
	struct Bound {
		std::uint32_t buffer;
		std::byte *base;
		int node;
	};
	constexpr std::size_t max_bound = 64;
	Bound bound[max_bound];

	if (options.in_fence)
		throw Error(EOPNOTSUPP, "the userspace executor has no sync_file fences: an in-fence "
					"needs the kernel executor");
	if (bindings.size() > max_bound)
		throw Error(E2BIG, "the userspace executor binds at most " +
					   std::to_string(max_bound) + " buffers per execution");
	for (std::size_t k = 0; k < bindings.size(); k++) {
		const GraphBinding &b = bindings[k];
		std::span<std::byte> mem = b.with ? b.with->data() : b.memory;
		if (b.buffer >= nb)
			throw Error(EINVAL, "binding of buffer " + std::to_string(b.buffer) +
						    ": the graph has " + std::to_string(nb) + " buffers");
		for (std::size_t m = 0; m < k; m++)
			if (bound[m].buffer == b.buffer)
				throw Error(EINVAL, "buffer " + std::to_string(b.buffer) +
							    " is bound twice");
		if (mem.data() == nullptr || mem.size() < g.buffer_len[b.buffer])
			throw Error(EINVAL, "binding of buffer " + std::to_string(b.buffer) + ": " +
						    std::to_string(mem.size()) + " bytes, the graph's is " +
						    std::to_string(g.buffer_len[b.buffer]));
		bound[k] = {b.buffer, mem.data(), memory_node(mem.first(g.buffer_len[b.buffer]))};
	}
	const std::uint64_t timeout_ms =
		options.timeout.count() > 0 ? static_cast<std::uint64_t>(options.timeout.count())
					    : default_timeout_ms;

	std::unique_lock guard(lock);
	UserGraph::Slot *s = nullptr;
	for (UserGraph::Slot &c : g.slots)
		if (c.ended && (!s || c.exec_id < s->exec_id))
			s = &c;
	if (!s)
		throw Error(EAGAIN, std::to_string(UserGraph::max_in_flight) +
					    " executions of graph " + std::to_string(g.handle) +
					    " are in flight, the userspace executor's limit: wait for one");
	const std::uint32_t n = static_cast<std::uint32_t>(g.engine.size());
	s->exec_id = next_exec++;
	s->ended = false;
	s->stopped = false;
	s->state = ExecState::running;
	s->result = 0;
	s->failed_node = -1;
	s->submit_ns = now_ns();
	s->end_ns = 0;
	s->deadline_ns = s->submit_ns + timeout_ms * 1000000u;
	for (std::uint32_t i = 0; i < n; i++) {
		s->nodes[i] = {};
		s->nodes[i].engine = static_cast<EngineClass>(g.engine[i]);
		s->node_state[i] = UserGraph::waiting;
		s->pending[i] = g.n_preds[i];
		s->jobs[i].next = nullptr;
	}
	for (std::size_t i = 0; i < nb; i++) {
		s->base[i] = g.memory[i].data().data();
		s->buffer_node[i] = g.memory_node[i];
	}
	for (std::size_t k = 0; k < bindings.size(); k++) {
		s->base[bound[k].buffer] = bound[k].base;
		s->buffer_node[bound[k].buffer] = bound[k].node;
	}
	// As mcp_exec_set_bo_node(): one node for every buffer, or mixed.
	s->uniform_node = nb ? s->buffer_node[0] : -1;
	for (std::size_t i = 1; i < nb; i++)
		if (s->buffer_node[i] != s->uniform_node)
			s->uniform_node = INT32_MIN;
	s->unfinished = n;
	s->running = 0;
	s->keep = g.self.lock();
	s->ready.clear();
	const std::uint64_t id = s->exec_id;
	for (std::uint32_t i = 0; i < n; i++)
		if (!s->pending[i])
			s->ready.push_back(i);
	// Pushed in ascending order; a stack pops the highest first: reverse.
	std::reverse(s->ready.begin(), s->ready.end());
	drain_locked(g, *s);
	std::shared_ptr<UserGraph> drop = finish_locked(*s);
	timer_cv.notify_one();
	guard.unlock();
	return id;
}

void UserExecutor::enqueue_locked(UserGraph &g, UserGraph::Slot &s, std::uint32_t index)
{
	const GraphDescs::Node &node = g.descs.nodes[index];
	int target = -1;

	if (g.engine[index] == MCP_GRAPH_ENGINE_WORKER) {
		// mcp_job_target(): all on one node needs no counting.
		if (s.uniform_node != INT32_MIN) {
			target = node.n_inputs ? s.uniform_node : -1;
		} else {
			int nodes[MCP_GRAPH_MAX_INPUTS];
			__u64 bytes[MCP_GRAPH_MAX_INPUTS];
			for (unsigned k = 0; k < node.n_inputs; k++) {
				const struct mcp_worker_tensor &t = g.descs.tensors[node.tensor[k]];
				nodes[k] = s.buffer_node[t.handle];
				bytes[k] = g.tensor_bytes[node.tensor[k]];
			}
			target = mcp_route_target(nodes, bytes, node.n_inputs);
		}
	} else if (node.n_outputs) {
		// The cpu engine's work item goes to the first output's node.
		target = s.buffer_node[g.descs.tensors[node.tensor[node.n_inputs]].handle];
	}
	const int to = target >= 0 && static_cast<std::size_t>(target) < route.size() ? route[target]
										  : route_none;
	Queue &q = *queues[static_cast<std::size_t>(to)];
	UserGraph::Job &job = s.jobs[index];

	s.node_state[index] = UserGraph::queued;
	job.next = nullptr;
	if (q.tail)
		q.tail->next = &job;
	else
		q.head = &job;
	q.tail = &job;
	q.cv.notify_one();
}

void UserExecutor::drain_locked(UserGraph &g, UserGraph::Slot &s)
{
	while (!s.ready.empty()) {
		const std::uint32_t i = s.ready.back();
		s.ready.pop_back();
		if (s.stopped || s.node_state[i] != UserGraph::waiting)
			continue;
		// A cpu-engine NOP ends where the scheduler runs, as in the kernel.
		if (g.engine[i] == MCP_GRAPH_ENGINE_CPU && g.descs.nodes[i].op == MCP_OP_NOP) {
			NodeStatus &st = s.nodes[i];
			unsigned cpu = 0, numa = 0;
			st.start_ns = st.end_ns = now_ns();
			st.numa_node = ::getcpu(&cpu, &numa) == 0 ? static_cast<int>(numa) : -1;
			s.node_state[i] = UserGraph::ended;
			s.unfinished--;
			release_locked(g, s, i);
			continue;
		}
		enqueue_locked(g, s, i);
	}
}

void UserExecutor::release_locked(UserGraph &g, UserGraph::Slot &s, std::uint32_t index)
{
	for (std::uint32_t e = g.succ_start[index]; e < g.succ_start[index + 1]; e++) {
		const std::uint32_t to = g.succ[e];
		if (--s.pending[to] == 0)
			s.ready.push_back(to);
	}
}

// Queued nodes leave their queue; every node not started ends -ECANCELED.
void UserExecutor::cancel_locked(UserGraph::Slot &s)
{
	for (auto &qp : queues) {
		Queue &q = *qp;
		UserGraph::Job **link = &q.head;
		q.tail = nullptr;
		while (*link) {
			UserGraph::Job *j = *link;
			if (j->slot == &s) {
				*link = j->next;
				j->next = nullptr;
				continue;
			}
			q.tail = j;
			link = &j->next;
		}
	}
	for (std::size_t i = 0; i < s.node_state.size(); i++) {
		if (s.node_state[i] != UserGraph::waiting && s.node_state[i] != UserGraph::queued)
			continue;
		s.node_state[i] = UserGraph::ended;
		s.nodes[i].result = -ECANCELED;
		s.unfinished--;
	}
}

void UserExecutor::fail_locked(UserGraph::Slot &s, int error, std::uint32_t index)
{
	if (s.stopped)
		return;
	s.stopped = true;
	s.state = ExecState::failed;
	s.result = error;
	s.failed_node = static_cast<int>(index);
	cancel_locked(s);
}

// The deadline passed: what is queued is dropped, what runs is abandoned
// with @error at once (the first of those is failed_node), as the kernel
// stops an execution.  Its operators still run to their end (nothing can
// stop one mid-way) and the execution ends when they have returned, so
// the memory they write stays valid until wait() returns.
void UserExecutor::stop_locked(UserGraph::Slot &s, int error)
{
	if (s.stopped)
		return;
	const std::uint64_t t = now_ns();
	s.stopped = true;
	s.state = ExecState::failed;
	s.result = error;
	s.failed_node = -1;
	for (std::size_t i = 0; i < s.node_state.size(); i++) {
		if (s.node_state[i] != UserGraph::running)
			continue;
		if (s.failed_node < 0)
			s.failed_node = static_cast<int>(i);
		s.node_state[i] = UserGraph::ended;
		s.nodes[i].result = error;
		s.nodes[i].end_ns = t;
		s.unfinished--;
	}
	cancel_locked(s);
}

std::shared_ptr<UserGraph> UserExecutor::complete_locked(UserGraph &g, UserGraph::Slot &s,
							 std::uint32_t index, int result,
							 std::uint64_t end)
{
	s.running--;
	if (s.node_state[index] == UserGraph::running) {	// not abandoned
		s.node_state[index] = UserGraph::ended;
		s.nodes[index].end_ns = end;
		s.nodes[index].result = result;
		s.unfinished--;
		if (result) {
			fail_locked(s, result, index);
		} else if (!s.stopped) {
			release_locked(g, s, index);
			drain_locked(g, s);
		}
	}
	return finish_locked(s);
}

std::shared_ptr<UserGraph> UserExecutor::finish_locked(UserGraph::Slot &s)
{
	if (s.ended || s.running || s.unfinished)
		return nullptr;
	s.ended = true;
	s.end_ns = now_ns();
	if (!s.stopped)
		s.state = ExecState::done;
	done.notify_all();
	return std::move(s.keep);
}

UserGraph::Slot *UserExecutor::find_locked(std::uint64_t exec_id)
{
	for (UserGraph *g : graphs)
		for (UserGraph::Slot &s : g->slots)
			if (s.exec_id == exec_id)
				return &s;
	return nullptr;
}

ExecStatus UserExecutor::status(std::uint64_t exec_id)
{
	std::lock_guard guard(lock);
	const UserGraph::Slot *s = exec_id ? find_locked(exec_id) : nullptr;

	if (!s)
		throw Error(ENOENT, "execution " + std::to_string(exec_id) +
					    " is unknown or older than the userspace executor's "
					    "history (" + std::to_string(UserGraph::max_in_flight) +
					    " executions per graph)");
	ExecStatus st;
	st.exec_id = exec_id;
	st.state = s->state;
	st.result = s->result;
	st.failed_node = s->failed_node;
	for (UserGraph *g : graphs)
		if (&g->slots[0] <= s && s < &g->slots[0] + UserGraph::max_in_flight)
			st.graph = g->handle;
	st.submit_ns = s->submit_ns;
	st.end_ns = s->end_ns;
	st.nodes = s->nodes;
	return st;
}

bool UserExecutor::wait(std::uint64_t exec_id, std::chrono::nanoseconds timeout)
{
	std::unique_lock guard(lock);
	const auto until = std::chrono::steady_clock::now() + timeout;
	auto ended = [&] {
		const UserGraph::Slot *s = find_locked(exec_id);
		return !s || s->ended;
	};

	if (!exec_id || !find_locked(exec_id))
		throw Error(ENOENT, "execution " + std::to_string(exec_id) +
					    " is unknown or older than the userspace executor's history");
	if (timeout.count() < 0) {
		done.wait(guard, ended);
		return true;
	}
	return done.wait_until(guard, until, ended);
}

// ---- threads ----

void UserExecutor::worker_loop(Worker &w)
{
	w.tid = static_cast<int>(::gettid());
	pin_to_cpus(w.cpus);
	Queue &q = *queues[static_cast<std::size_t>(w.node)];
	std::unique_lock guard(lock);

	for (;;) {
		q.cv.wait(guard, [&] { return stopping || q.head; });
		if (stopping)
			return;
		UserGraph::Job *job = q.head;
		q.head = job->next;
		if (!q.head)
			q.tail = nullptr;
		job->next = nullptr;
		UserGraph &g = *job->graph;
		UserGraph::Slot &s = *job->slot;
		const std::uint32_t i = job->index;
		s.node_state[i] = UserGraph::running;
		s.running++;
		s.nodes[i].start_ns = now_ns();
		s.nodes[i].numa_node = w.node;
		s.nodes[i].worker_tid = w.tid;
		guard.unlock();

		const GraphDescs::Node &node = g.descs.nodes[i];
		OpTensor t[MCP_GRAPH_MAX_INPUTS + MCP_GRAPH_MAX_OUTPUTS];
		int result = 0;
		if (node.op == GraphDescs::invalid_op) {
			result = -EINVAL;
		} else if (node.op != MCP_OP_WNOP) {
			for (unsigned k = 0; k < node.n_inputs + node.n_outputs; k++) {
				const std::uint32_t ti = node.tensor[k];
				const struct mcp_worker_tensor &d = g.descs.tensors[ti];
				t[k].dtype = d.dtype;
				t[k].layout = d.layout;
				t[k].rank = std::min<std::uint8_t>(d.rank, MCP_GRAPH_MAX_RANK);
				for (unsigned r = 0; r < t[k].rank; r++)
					t[k].dims[r] = d.dims[r];
				t[k].bytes = g.tensor_bytes[ti];
				t[k].data = s.base[d.handle] + d.offset;
			}
			result = run_op(node.op, std::span(t, node.n_inputs),
					std::span(t + node.n_inputs, node.n_outputs),
					std::span(g.descs.params).subspan(node.param_offset, node.param_len),
					g.engine[i] == MCP_GRAPH_ENGINE_CPU);
		}
		const std::uint64_t end = now_ns();
		w.jobs.fetch_add(1, std::memory_order_relaxed);
		if (result)
			w.failed.fetch_add(1, std::memory_order_relaxed);

		guard.lock();
		std::shared_ptr<UserGraph> drop = complete_locked(g, s, i, result, end);
		if (drop) {
			// The last reference may free the graph, which takes the lock.
			guard.unlock();
			drop.reset();
			guard.lock();
		}
	}
}

void UserExecutor::timer_loop()
{
	std::unique_lock guard(lock);

	while (!stopping) {
		const std::uint64_t now = now_ns();
		std::uint64_t next = UINT64_MAX;
		std::shared_ptr<UserGraph> drop;
		for (UserGraph *g : graphs) {
			for (UserGraph::Slot &s : g->slots) {
				if (s.ended || s.stopped)
					continue;
				if (s.deadline_ns > now) {
					next = std::min(next, s.deadline_ns);
					continue;
				}
				stop_locked(s, -ETIMEDOUT);
				drop = finish_locked(s);
				if (drop)
					break;
			}
			if (drop)
				break;
		}
		if (drop) {
			guard.unlock();
			drop.reset();
			guard.lock();
			continue;
		}
		if (next == UINT64_MAX)
			timer_cv.wait(guard);
		else
			timer_cv.wait_until(guard, std::chrono::steady_clock::time_point(
							   std::chrono::nanoseconds(next)));
	}
}

void UserExecutor::start(RuntimeState &state)
{
	unsigned max_id = 0;

	for (const Node &n : topo.nodes())
		max_id = std::max(max_id, n.id);
	for (const auto &w : state.workers)
		max_id = std::max(max_id, static_cast<unsigned>(w->node));
	node_workers.assign(max_id + 1, 0);
	for (const auto &w : state.workers)
		node_workers[static_cast<std::size_t>(w->node)]++;
	for (unsigned id = 0; id <= max_id; id++)
		route.push_back(mcp_route_node(static_cast<int>(id), node_workers.data(),
					       static_cast<int>(max_id + 1), distance_cb, &topo));
	route_none = mcp_route_node(MCP_ROUTE_NO_NODE, node_workers.data(),
				    static_cast<int>(max_id + 1), distance_cb, &topo);
	for (unsigned id = 0; id <= max_id; id++)
		queues.push_back(std::make_unique<Queue>());
	try {
		for (auto &w : state.workers) {
			Worker &ref = *w;
			w->batch = 1;
			w->mode = WorkerMode::one_job;
			w->thread = std::thread([this, &ref] { worker_loop(ref); });
		}
		timer = std::thread([this] { timer_loop(); });
	} catch (...) {
		stop(state);
		throw;
	}
}

void UserExecutor::stop(RuntimeState &state) noexcept
{
	{
		std::lock_guard guard(lock);
		stopping = true;
		for (auto &q : queues)
			q->cv.notify_all();
		timer_cv.notify_all();
	}
	for (auto &w : state.workers)
		if (w->thread.joinable())
			w->thread.join();
	if (timer.joinable())
		timer.join();
	// Executions still in flight (a Runtime destroyed before their end)
	// can no longer run: they end cancelled and let go of their graph.
	std::vector<std::shared_ptr<UserGraph>> drop;
	std::unique_lock guard(lock);
	for (UserGraph *g : graphs) {
		for (UserGraph::Slot &s : g->slots) {
			if (s.ended)
				continue;
			stop_locked(s, -ECANCELED);
			s.running = 0;
			try {
				drop.push_back(finish_locked(s));
			} catch (const std::bad_alloc &) {
				// Then the graph stays (a leak, never a use after free).
			}
		}
	}
	guard.unlock();
	drop.clear();
}

} // namespace mcp::detail
