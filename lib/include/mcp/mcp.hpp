// SPDX-License-Identifier: LGPL-2.1-or-later
// libmcp: the C++ API of MCP (Model Control Protocol).
//
// Errors are reported by throwing mcp::Error, a std::system_error whose
// code() is the errno value (std::generic_category()) and whose what() is a
// sentence the user can act on.  Documentation/libmcp.rst has the long form.
#ifndef MCP_MCP_HPP
#define MCP_MCP_HPP

#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
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
inline constexpr std::uint64_t devices = MCP_FEATURE_DEVICES;
inline constexpr std::uint64_t place_adaptive = MCP_FEATURE_PLACE_ADAPTIVE;
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
	runq_latency = 6,	// the rebalancer: it waited too long to run there
};

// Where the memory home node came from (enum mcp_place_home_source).
enum class HomeSource : std::uint32_t {
	none = 0,
	histogram = 1,		// the page histogram libmcp sampled
	numa_faults = 2,	// the kernel's NUMA-balancing fault statistics
	last_cpu = 3,		// the node of the CPU the task last ran on
};

// "memory-local", "nearest", "sticky", "unchanged", "forced",
// "runq-latency", "none";
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
	// With keep: the rebalancer also moves the task off a node where it
	// waits to run longer than runq_threshold_us per run on average
	// (0: the module's adaptive_runq_us knob).
	bool adaptive = false;
	unsigned runq_threshold_us = 0;
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

struct AcceleratorInfo;
struct PciAddress;
class Accelerator;

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

	// ---- accelerator devices (accelerator.cpp) ----
	// Indices of the PCI functions bound to mcp.ko, ascending
	// (MCP_IOC_DEV_LIST).  Throws mcp::Error: EOPNOTSUPP for a module
	// without devices.
	std::vector<unsigned> accelerator_indices() const;
	// What MCP_IOC_DEV_INFO says about device @index.  Throws
	// mcp::Error: ENODEV when no device has that index.
	AcceleratorInfo accelerator_info(unsigned index) const;
	// Every bound device, in index order.
	std::vector<AcceleratorInfo> accelerators() const;
	// The index of the device at PCI address @address; ENODEV if none.
	unsigned find_accelerator(const PciAddress &address) const;
	// Opens device @index (or the one at @address): MCP_IOC_DEV_OPEN.
	Accelerator open_accelerator(unsigned index) const;
	Accelerator open_accelerator(const PciAddress &address) const;

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
	std::optional<unsigned> node;	// cpuset.cpus: its CPUs; .mems: it or nearest memory
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

// ---- accelerator devices (Documentation/libmcp.rst, "Accelerator devices") ----

// A PCI function's address, printed "dddd:bb:ss.f" as sysfs and lspci -D do.
struct MCP_EXPORT PciAddress {
	std::uint32_t domain = 0;
	std::uint8_t bus = 0;
	std::uint8_t slot = 0;		// device number, 0 .. 31
	std::uint8_t function = 0;	// 0 .. 7

	// "0000:00:04.0"
	std::string to_string() const;
	// Accepts "dddd:bb:ss.f" and lspci's short "bb:ss.f" (domain 0), hex
	// digits in either case; nullopt for anything else (slot > 0x1f,
	// function > 7, trailing text, ...).
	static std::optional<PciAddress> parse(std::string_view text) noexcept;

	auto operator<=>(const PciAddress &) const = default;
};

// PCIe link state of a function.  Speeds are in MT/s (2500 = 2.5 GT/s,
// Gen1; 8000 Gen3; 32000 Gen5); 0 means unknown.
struct PcieLink {
	bool pcie = false;		// false: conventional PCI, no link
	std::uint32_t speed = 0;	// current
	std::uint32_t speed_cap = 0;	// the most the function can do
	std::uint32_t width = 0;	// lanes, current
	std::uint32_t width_cap = 0;
	// Trained below what both the function and its upstream port can do.
	bool speed_degraded = false;
	bool width_degraded = false;

	bool degraded() const noexcept { return speed_degraded || width_degraded; }
	bool operator==(const PcieLink &) const = default;
};

// The PCIe generation of a speed in MT/s: 1 for 2500 ... 6 for 64000; 0
// for 0 or a speed no generation has.
MCP_EXPORT unsigned pcie_generation(std::uint32_t speed_mts) noexcept;

// One BAR of a device (struct mcp_dev_bar).
struct BarInfo {
	unsigned index = 0;
	std::uint64_t start = 0;	// physical, as in sysfs "resource"
	std::uint64_t len = 0;
	std::uint32_t flags = 0;	// MCP_ACCEL_BAR_*

	bool present() const noexcept { return flags & MCP_ACCEL_BAR_PRESENT; }
	bool memory() const noexcept { return flags & MCP_ACCEL_BAR_MEM; }
	bool is_64bit() const noexcept { return flags & MCP_ACCEL_BAR_64BIT; }
	bool prefetchable() const noexcept { return flags & MCP_ACCEL_BAR_PREFETCH; }
	bool mappable() const noexcept { return flags & MCP_ACCEL_BAR_MAPPABLE; }
	bool wc_ok() const noexcept { return flags & MCP_ACCEL_BAR_WC_OK; }
	bool operator==(const BarInfo &) const = default;
};

enum class IrqType : std::uint32_t { none = 0, intx = 1, msi = 2, msix = 3 };

// Result of the kernel's write-combining self-test on a device.
enum class WcTest : std::uint32_t {
	untested = 0,		// no WC-capable BAR to test on
	unsupported = 1,	// the platform cannot map WC
	not_combining = 2,	// WC maps work but writes do not combine
	combining = 3,
	not_run = 4,		// the backend does not declare the test safe (generic)
};

// "none", "intx", "msi", "msix"; "unknown" otherwise.
MCP_EXPORT const char *to_string(IrqType type) noexcept;
// "untested", "unsupported", "not-combining", "combining", "not-run";
// "unknown" otherwise.
MCP_EXPORT const char *to_string(WcTest result) noexcept;

// What MCP_IOC_DEV_INFO reports about a device bound to mcp.ko.
struct AcceleratorInfo {
	unsigned index = 0;
	PciAddress address;
	int numa_node = -1;		// -1: the platform does not say
	std::uint16_t vendor = 0;
	std::uint16_t device = 0;
	std::uint16_t subsystem_vendor = 0;
	std::uint16_t subsystem_device = 0;
	std::uint32_t class_code = 0;	// 24 bits: base, sub-class, prog-if
	std::uint8_t revision = 0;
	std::string backend;		// "edu", "generic"
	bool generic = false;		// no device-specific backend
	IrqType irq_type = IrqType::none;
	unsigned irq_count = 0;		// vectors 0 .. irq_count - 1
	std::uint64_t dma_mask = 0;
	PcieLink link;
	WcTest wc_test = WcTest::untested;
	unsigned open_count = 0;	// open device fds
	std::array<BarInfo, 6> bars{};

	bool operator==(const AcceleratorInfo &) const = default;
};

namespace detail {
struct BarMappingAccess;
}

// How a BAR is mapped.
enum class Caching { uncached, write_combining };

// Where and how a BAR can be mapped (MCP_IOC_BAR_INFO).
struct BarRegion {
	unsigned bar = 0;
	std::uint32_t flags = 0;	// MCP_ACCEL_BAR_*
	std::uint64_t len = 0;
	std::uint64_t offset = 0;	// mmap offset, uncached
	std::uint64_t wc_offset = 0;	// mmap offset, write-combining
	std::uint32_t wc_status = 0;	// MCP_ACCEL_WC_*; 0 = WC allowed
};

// A BAR mapped into this process (mmap of a device fd; munmap on
// destruction).  Move-only.  Accesses are volatile and bounds-checked:
// an offset outside the mapping, or not aligned to the access width, is
// mcp::Error(EINVAL) and touches nothing.
//
// When the device goes away (unbind, hot-unplug, rmmod) the kernel revokes
// the mapping: the next access raises SIGBUS.  libmcp installs no signal
// handler; an application that must survive removal handles SIGBUS itself.
class MCP_EXPORT BarMapping {
public:
	BarMapping() noexcept = default;
	BarMapping(BarMapping &&other) noexcept;
	BarMapping &operator=(BarMapping &&other) noexcept;
	BarMapping(const BarMapping &) = delete;
	BarMapping &operator=(const BarMapping &) = delete;
	~BarMapping();

	bool is_mapped() const noexcept { return base_ != nullptr; }
	explicit operator bool() const noexcept { return is_mapped(); }
	unsigned bar() const noexcept { return bar_; }
	// Offset of the mapping inside the BAR, and its length in bytes.
	std::uint64_t bar_offset() const noexcept { return bar_offset_; }
	std::size_t size() const noexcept { return len_; }
	Caching caching() const noexcept { return caching_; }
	// The mapping itself, for code that does its own volatile accesses.
	volatile void *data() const noexcept { return base_; }

	// Offsets are relative to the start of the mapping.
	std::uint32_t read32(std::size_t offset) const;
	std::uint64_t read64(std::size_t offset) const;
	void write32(std::size_t offset, std::uint32_t value) const;
	void write64(std::size_t offset, std::uint64_t value) const;

	// Copies @bytes to @offset (8-byte aligned; the length a multiple of
	// 4) with 64-bit stores, then executes a store fence (x86 sfence), so
	// that on a write-combining mapping the block reaches the device
	// before a doorbell the caller writes next.
	void write_block(std::size_t offset, std::span<const std::byte> bytes) const;

private:
	friend struct detail::BarMappingAccess;
	BarMapping(void *base, std::size_t len, unsigned bar, std::uint64_t bar_offset,
		   Caching caching, std::string device) noexcept;
	void check(std::size_t offset, std::size_t width, const char *what) const;
	void reset() noexcept;

	void *base_ = nullptr;
	std::size_t len_ = 0;
	unsigned bar_ = 0;
	std::uint64_t bar_offset_ = 0;
	Caching caching_ = Caching::uncached;
	std::string device_;	// PCI address, for messages
};

namespace detail {
struct IrqVectors;
} // namespace detail

// An eventfd connected to one interrupt vector of a device
// (MCP_IOC_IRQ_SET_EVENTFD).  Move-only; destruction disconnects it.  It
// holds its own reference to the device fd, so it may outlive the
// Accelerator it came from.  One IrqEvent per vector and Accelerator: a
// second one is refused (EBUSY) while the first exists.
class MCP_EXPORT IrqEvent {
public:
	IrqEvent() noexcept = default;
	IrqEvent(IrqEvent &&other) noexcept;
	IrqEvent &operator=(IrqEvent &&other) noexcept;
	IrqEvent(const IrqEvent &) = delete;
	IrqEvent &operator=(const IrqEvent &) = delete;
	~IrqEvent();

	bool is_open() const noexcept { return event_fd_ >= 0; }
	explicit operator bool() const noexcept { return is_open(); }
	unsigned vector() const noexcept { return vector_; }
	// The eventfd, for poll(2)/epoll (POLLIN when interrupts arrived).
	int fd() const noexcept { return event_fd_; }

	// Waits at most @timeout (negative: forever) for interrupts; the
	// number that arrived since the last wait (and resets it), or nullopt
	// on time-out or when a signal interrupts the wait.
	std::optional<std::uint64_t> wait(std::chrono::milliseconds timeout =
						  std::chrono::milliseconds(-1)) const;
	// Re-enables a masked INTx line (MCP_IOC_IRQ_UNMASK); needed after each
	// interrupt of a device without a backend that uses INTx.
	void unmask() const;

private:
	friend class Accelerator;
	IrqEvent(int device_fd, int event_fd, unsigned vector, std::string device,
		 std::shared_ptr<detail::IrqVectors> vectors) noexcept;
	void reset() noexcept;

	int device_fd_ = -1;	// a dup of the device fd
	int event_fd_ = -1;
	unsigned vector_ = 0;
	std::string device_;
	std::shared_ptr<detail::IrqVectors> vectors_; // the Accelerator's
};

// An open device (the fd of MCP_IOC_DEV_OPEN).  Move-only; the descriptor
// closes with it.  Mappings and IrqEvents keep the device open on their own.
// After the device is removed its calls throw mcp::Error(ENODEV).
class MCP_EXPORT Accelerator {
public:
	Accelerator() noexcept = default;
	Accelerator(Accelerator &&other) noexcept;
	Accelerator &operator=(Accelerator &&other) noexcept;
	Accelerator(const Accelerator &) = delete;
	Accelerator &operator=(const Accelerator &) = delete;
	~Accelerator();

	bool is_open() const noexcept { return fd_ >= 0; }
	explicit operator bool() const noexcept { return is_open(); }
	int fd() const noexcept { return fd_; }
	// As read when it was opened.
	const AcceleratorInfo &info() const noexcept { return info_; }

	// Where BAR @bar can be mapped (MCP_IOC_BAR_INFO).
	BarRegion bar_region(unsigned bar) const;
	// Maps @length bytes (0: to the end of the BAR) of BAR @bar from
	// @offset (page-aligned).  Throws mcp::Error: EPERM without
	// CAP_SYS_RAWIO, EINVAL for a BAR that cannot be mapped, a range past
	// its end, or write-combining on a BAR that does not allow it (the
	// message says why), ENODEV when the device was removed.
	BarMapping map_bar(unsigned bar, Caching caching = Caching::uncached,
			   std::uint64_t offset = 0, std::uint64_t length = 0) const;
	// Connects a new eventfd to interrupt vector @vector.  Throws
	// mcp::Error: EINVAL for a vector >= info().irq_count, EBUSY while
	// another IrqEvent of this Accelerator (or another open of the device)
	// holds the vector, ENODEV.
	IrqEvent irq_event(unsigned vector = 0) const;

private:
	friend class Device;
	Accelerator(int fd, AcceleratorInfo info,
		    std::shared_ptr<detail::IrqVectors> vectors) noexcept;
	void reset() noexcept;

	int fd_ = -1;
	AcceleratorInfo info_;
	// Which vectors its IrqEvents hold: they share this fd's open file,
	// the owner the kernel knows, so only libmcp can tell them apart.
	std::shared_ptr<detail::IrqVectors> vectors_;
};

// ---- PCIe link health of the whole host (pcie_link.cpp) ----

// One PCI function found in sysfs and its link.
struct HostPciLink {
	PciAddress address;
	std::uint16_t vendor = 0;
	std::uint16_t device = 0;
	std::uint32_t class_code = 0;
	std::optional<PciAddress> upstream;	// the bridge above it, if any
	// The most the upstream port can do (0 unknown or no upstream).
	std::uint32_t upstream_speed_cap = 0;
	std::uint32_t upstream_width_cap = 0;
	PcieLink link;
};

// Reads every function under @sysfs_root/bus/pci/devices (the files
// current_link_speed, max_link_speed, current_link_width, max_link_width,
// and the same of its parent bridge), in address order.  A function
// without the files is conventional PCI (link.pcie false).  Degraded
// means below what both the function and its upstream port can do.
// Throws mcp::Error when the directory cannot be read.
MCP_EXPORT std::vector<HostPciLink> scan_pci_links(const std::string &sysfs_root = "/sys");

} // namespace mcp

// The eBPF tracers (Documentation/observability.rst).
#include <mcp/trace.hpp>
// The tensor pool shared between processes (Documentation/tensor-pool.rst).
#include <mcp/tensor_pool.hpp>
// Buffers, DMA and fences (Documentation/libmcp.rst).
#include <mcp/dma.hpp>
// Inference graph definitions (Documentation/graphs.rst).
#include <mcp/graph.hpp>
// Hardware tuning knobs and sessions (Documentation/tuning.rst).
#include <mcp/tune.hpp>

#endif // MCP_MCP_HPP
