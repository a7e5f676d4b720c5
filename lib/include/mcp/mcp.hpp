// SPDX-License-Identifier: LGPL-2.1-or-later
// libmcp: the C++ API of MCP (Model Control Protocol).
//
// Errors are reported by throwing mcp::Error, a std::system_error whose
// code() is the errno value (std::generic_category()) and whose what() is a
// sentence the user can act on.  Documentation/libmcp.rst has the long form.
#ifndef MCP_MCP_HPP
#define MCP_MCP_HPP

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include <mcp/mcp.h>

namespace mcp {

// The kernel ABI this library speaks (MCP_ABI_MAJOR/MINOR of <linux/mcp.h>).
inline constexpr std::uint32_t abi_major = 1;
inline constexpr std::uint32_t abi_minor = 0;

// Feature bits of Version::features.
namespace feature {
inline constexpr std::uint64_t version = MCP_FEATURE_VERSION;
inline constexpr std::uint64_t topology = MCP_FEATURE_TOPOLOGY;
inline constexpr std::uint64_t place = MCP_FEATURE_PLACE;
} // namespace feature

// Version of libmcp, e.g. "0.1.0".
MCP_EXPORT const char *library_version() noexcept;

// Short names of the feature bits set in @features, in bit order; unknown
// bits are named "bitN".
MCP_EXPORT std::vector<std::string> feature_names(std::uint64_t features);

// An error with an errno value and an actionable message.
class MCP_EXPORT Error : public std::system_error {
public:
	Error(int errnum, std::string message);
	// The errno value (positive), e.g. ENOENT.
	int errnum() const noexcept { return code().value(); }
	// The message alone (std::system_error would append strerror()).
	const char *what() const noexcept override;

private:
	std::string message_;
};

// What MCP_IOC_GET_VERSION reports about the loaded module.
struct Version {
	std::uint32_t abi_major = 0;
	std::uint32_t abi_minor = 0;
	std::uint64_t features = 0;
	std::string module_version;

	bool has(std::uint64_t feature_bit) const noexcept
	{
		return (features & feature_bit) == feature_bit;
	}
};

// One online NUMA node.
struct Node {
	unsigned id = 0;		// the kernel's node id (ids may have holes)
	std::vector<unsigned> cpus;	// online CPUs, ascending
	std::uint64_t mem_total_bytes = 0;
	std::uint64_t mem_free_bytes = 0;

	bool operator==(const Node &) const = default;
};

// A snapshot of the NUMA topology: nodes in ascending id order and the
// SLIT distance matrix between them.
class MCP_EXPORT Topology {
public:
	Topology() = default;
	// @distances is row-major, nodes.size() x nodes.size(), in the order of
	// @nodes.  Throws mcp::Error(EINVAL) on a size mismatch or duplicate
	// node ids.  Nodes are sorted by id (the matrix is permuted along).
	Topology(std::vector<Node> nodes, std::vector<unsigned> distances,
		 unsigned cpus_online, unsigned nr_cpu_ids);

	const std::vector<Node> &nodes() const noexcept { return nodes_; }
	// The node with kernel id @node_id, or nullptr.
	const Node *find(unsigned node_id) const noexcept;
	// Distance between two nodes given by kernel node id; throws
	// mcp::Error(EINVAL) for an unknown id.
	unsigned distance(unsigned node_a_id, unsigned node_b_id) const;
	// Distance between the nodes at indexes @i and @j of nodes().
	unsigned distance_at(std::size_t i, std::size_t j) const noexcept
	{
		return distances_[i * nodes_.size() + j];
	}
	unsigned cpus_online() const noexcept { return cpus_online_; }
	unsigned nr_cpu_ids() const noexcept { return nr_cpu_ids_; }

	bool operator==(const Topology &) const = default;

private:
	std::vector<Node> nodes_;
	std::vector<unsigned> distances_;
	unsigned cpus_online_ = 0;
	unsigned nr_cpu_ids_ = 0;
};

// Why a task is where it is after MCP_IOC_PLACE (enum mcp_place_reason).
enum class PlaceReason : std::uint32_t {
	none = 0,
	memory_local = 1,	// on its memory home node
	nearest = 2,		// home node busy: nearest node with idle CPUs
	sticky = 3,		// placed less than stickiness_ms ago
	unchanged = 4,		// no node qualified: left as it was
	forced = 5,		// the caller named the node
};

// Where the memory home node came from (enum mcp_place_home_source).
enum class HomeSource : std::uint32_t {
	none = 0,
	histogram = 1,		// the page histogram libmcp sampled
	numa_faults = 2,	// the kernel's NUMA-balancing fault statistics
	last_cpu = 3,		// the node of the CPU the task last ran on
};

// "memory-local", "nearest", "sticky", "unchanged", "forced", "none";
// "unknown" for a value this library does not know.
MCP_EXPORT const char *to_string(PlaceReason reason) noexcept;
// "histogram", "numa-faults", "last-cpu", "none"; "unknown" otherwise.
MCP_EXPORT const char *to_string(HomeSource source) noexcept;

// How Device::place() places a task.
struct PlaceOptions {
	bool dry_run = false;	// decide, do not apply
	bool force = false;	// ignore stickiness
	bool keep = false;	// the kernel's rebalancer re-evaluates the task
	bool strict = false;	// no node qualifies: Error(EAGAIN), not "unchanged"
	std::optional<unsigned> node;	// place on this node, no decision
	// Pages of the target sampled for the histogram (at most this many).
	unsigned sample_pages = 4096;
	// Sample the target's pages with move_pages(2) and pass the per-node
	// counts as its memory home evidence.  When sampling fails (e.g.
	// EPERM on another user's task) the placement goes on without it and
	// PlaceResult::histogram_error says why.
	bool histogram = true;
};

// A bounded sample of a task's resident pages, counted per node id.
struct PageHistogram {
	std::vector<std::uint64_t> pages_per_node;	// index = node id
	unsigned sampled = 0;	// page addresses asked about
	unsigned resident = 0;	// of those, resident (counted above)
};

// What MCP_IOC_PLACE did (or, with dry_run, would do).
struct PlaceResult {
	int pid = 0;			// as passed (0 = the calling thread)
	bool dry_run = false;
	int node_chosen = -1;		// -1: none
	int prev_node = -1;		// node of the CPU the task last ran on
	int home_node = -1;		// memory home node, -1 if unknown
	PlaceReason reason = PlaceReason::none;
	HomeSource home_source = HomeSource::none;
	std::vector<unsigned> cpus;	// the CPUs applied (or that would be)
	std::vector<std::uint32_t> idle_cpus;	// idle CPUs seen, index = node id
	std::optional<PageHistogram> histogram;	// what was passed, if any
	std::string histogram_error;	// why no histogram was passed, if wanted
};

// An open /dev/mcp session.  Move-only; the descriptor closes with it.
class MCP_EXPORT Device {
public:
	Device() noexcept = default;
	Device(Device &&other) noexcept;
	Device &operator=(Device &&other) noexcept;
	Device(const Device &) = delete;
	Device &operator=(const Device &) = delete;
	~Device();

	// Opens @path (empty: $MCP_DEVICE if set and non-empty, else
	// /dev/mcp), reads the module version and checks the ABI major.
	// Throws mcp::Error.
	static Device open(std::string_view path = {});
	// The path open() uses for an empty argument.
	static std::string default_path();

	bool is_open() const noexcept { return fd_ >= 0; }
	explicit operator bool() const noexcept { return is_open(); }
	int fd() const noexcept { return fd_; }
	const std::string &path() const noexcept { return path_; }

	// The version read by open().
	const Version &version() const;
	// Reads the topology (MCP_IOC_GET_TOPOLOGY).  Throws mcp::Error.
	Topology topology() const;

	// Places task @pid (a thread id; 0 = the calling thread) on a NUMA
	// node (MCP_IOC_PLACE), sampling its page histogram first unless
	// @options.histogram is false.  Throws mcp::Error: EPERM (another
	// user's task without CAP_SYS_NICE), ESRCH (no such task), EAGAIN
	// (strict and no node qualifies), EINVAL (bad node, kernel thread),
	// EOPNOTSUPP (module without placement).
	PlaceResult place(int pid, const PlaceOptions &options = {}) const;
	// Gives @pid back the affinity it had before MCP placed it
	// (MCP_IOC_UNPLACE).  Throws mcp::Error: ENOENT (never placed), ...
	void unplace(int pid) const;

private:
	Device(int fd, std::string path) noexcept;
	void reset() noexcept;

	int fd_ = -1;
	std::string path_;
	Version version_;
};

// Samples up to @max_pages resident pages of task @pid (0 = self) with
// move_pages(2) in query mode and counts them per node.  Throws
// mcp::Error (EPERM for another user's task, ESRCH, ...).
MCP_EXPORT PageHistogram sample_page_histogram(int pid, unsigned max_pages = 4096);

// ---- QoS classes and CPU slices (cgroup v2) ----

enum class QosClass : std::uint32_t {
	best_effort = 0,	// no memory protection, default cpu.weight
	burstable = 1,		// memory.low (256M) + cpu.weight 400
	guaranteed = 2,		// memory.min (512M) + cpu.weight 800
};

// "guaranteed", "burstable", "best-effort".
MCP_EXPORT const char *to_string(QosClass cls) noexcept;
// Accepts the names above (also "besteffort", "best_effort"); nullopt else.
MCP_EXPORT std::optional<QosClass> parse_qos_class(std::string_view name) noexcept;

inline constexpr double qos_min_cpus = 0.125;	// smallest slice, in vCores
inline constexpr std::uint64_t qos_cpu_period_us = 100000;
inline constexpr std::uint64_t qos_guaranteed_memory_min = 512ULL << 20;
inline constexpr std::uint64_t qos_burstable_memory_low = 256ULL << 20;

// What a QoS group is made of.
struct QosSpec {
	QosClass cls = QosClass::best_effort;
	std::optional<double> cpus;	// vCores for cpu.max (>= 0.125)
	std::optional<unsigned> node;	// cpuset.mems = node, cpuset.cpus = its CPUs
	// CPUs of @node; empty: read from /sys/devices/system/node/nodeN/cpulist.
	std::vector<unsigned> node_cpus;
	// Overrides of the class's memory protection (bytes): memory.min for
	// guaranteed, memory.low for burstable.  Refused for other classes.
	std::optional<std::uint64_t> memory_min;
	std::optional<std::uint64_t> memory_low;
};

// What the cgroup files of a group say.
struct QosInfo {
	std::string name;
	std::string path;
	std::optional<QosClass> cls;	// inferred from cpu.weight/memory.*
	std::string cpu_max;		// "50000 100000", "max 100000"
	std::optional<std::uint64_t> cpu_weight;
	std::optional<std::uint64_t> memory_min;
	std::optional<std::uint64_t> memory_low;
	std::string cpuset_cpus;
	std::string cpuset_mems;
	std::vector<int> pids;
};

// A cgroup v2 group @name under <mount>/mcp.slice.  Construction touches
// nothing; create(), attach(), info() and remove() do.  Errors throw
// mcp::Error with a sentence (cgroup v2 not mounted, controller not
// available or not delegated, permission, ...).
class MCP_EXPORT QosGroup {
public:
	static constexpr const char *default_mount = "/sys/fs/cgroup";
	static constexpr const char *slice = "mcp.slice";

	// Throws mcp::Error(EINVAL) for a name that is empty, ".", "..", or
	// holds '/' or whitespace.
	explicit QosGroup(std::string name, std::string cgroup_mount = default_mount);

	const std::string &name() const noexcept { return name_; }
	// <mount>/mcp.slice/<name>
	std::string path() const;
	bool exists() const;

	// Creates the group (or reconfigures an existing one): enables the
	// controllers it needs in the parents' cgroup.subtree_control, then
	// writes cpu.max, cpu.weight, memory.min/memory.low, cpuset.*.
	void create(const QosSpec &spec);
	// Moves @pid (0 = the caller) into the group (cgroup.procs).
	void attach(int pid);
	QosInfo info() const;
	// Removes the (empty) group.  EBUSY while it has processes.
	void remove();

	// Names of the groups under <mount>/mcp.slice.
	static std::vector<std::string> list(const std::string &cgroup_mount = default_mount);

private:
	std::string name_;
	std::string mount_;
};

// ---- events (Documentation/events.rst) ----

// Who made a placement decision (enum mcp_place_origin).
enum class PlaceOrigin : std::uint32_t {
	ioctl = 1,		// MCP_IOC_PLACE
	rebalancer = 2,		// the in-kernel rebalancer
	unplace = 3,		// MCP_IOC_UNPLACE
};

// "ioctl", "rebalancer", "unplace"; "unknown" for other values.
MCP_EXPORT const char *to_string(PlaceOrigin origin) noexcept;

// One applied placement decision (an MCP_CMD_EVENT_PLACE message).
struct PlaceEvent {
	int pid = 0;			// thread id (initial pid namespace)
	std::string comm;
	int from_node = -1;		// -1: unknown
	int to_node = -1;		// -1: none
	std::uint32_t reason = 0;	// enum mcp_place_reason
	PlaceOrigin origin = PlaceOrigin::ioctl;
	std::uint64_t timestamp_ns = 0;	// CLOCK_MONOTONIC

	bool operator==(const PlaceEvent &) const = default;
};

// A subscription to the "events" multicast group of the generic netlink
// family "mcp".  Move-only; the socket closes with it.  Needs no access to
// /dev/mcp.  Not thread-safe: one thread reads one listener.
class MCP_EXPORT EventListener {
public:
	EventListener() noexcept;
	EventListener(EventListener &&) noexcept;
	EventListener &operator=(EventListener &&) noexcept;
	EventListener(const EventListener &) = delete;
	EventListener &operator=(const EventListener &) = delete;
	~EventListener();

	// Connects, resolves the family and group and joins the group.
	// Throws mcp::Error: ENOENT when the module is not loaded.
	static EventListener open();

	bool is_open() const noexcept { return impl_ != nullptr; }
	explicit operator bool() const noexcept { return is_open(); }
	// The netlink socket, for poll(2) (POLLIN); -1 when not open.
	int fd() const noexcept;
	// The family id and group id the kernel assigned.
	int family_id() const noexcept;
	int group_id() const noexcept;
	// Times the kernel reported lost events (receive buffer full).
	std::uint64_t overruns() const noexcept;

	// The next event, waiting at most @timeout (negative: forever);
	// nullopt on time-out or when a signal interrupts the wait.  Throws
	// mcp::Error: ENODEV when the module is unloaded meanwhile.
	std::optional<PlaceEvent> next(std::chrono::milliseconds timeout =
					       std::chrono::milliseconds(-1));

private:
	struct Impl;
	explicit EventListener(std::unique_ptr<Impl> impl) noexcept;
	bool receive_one();

	std::unique_ptr<Impl> impl_;
};

} // namespace mcp

#endif // MCP_MCP_HPP
