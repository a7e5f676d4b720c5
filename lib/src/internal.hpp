// SPDX-License-Identifier: LGPL-2.1-or-later
// libmcp internals: the pure functions behind the public API, kept apart
// from the ioctl calls so that tests/unit can run them on synthetic data.
// Not installed; hidden from the shared library's symbol table.
#ifndef MCP_SRC_INTERNAL_HPP
#define MCP_SRC_INTERNAL_HPP

#include <cerrno>
#include <cstdint>
#include <exception>
#include <functional>
#include <mutex>
#include <new>
#include <optional>

struct nlmsghdr;
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include <mcp/mcp.hpp>

// The C API's mcp_place()/mcp_unplace() share their names with the kernel
// structs; both are meant (C keeps tags and functions apart).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wshadow"
#include <linux/mcp.h>
#pragma GCC diagnostic pop

namespace mcp::detail {

// The message for a failed open(2) of @path with @errnum.
std::string open_error_message(int errnum, std::string_view path);

// The message for a failed ioctl @ioctl_name on @path with @errnum.
std::string ioctl_error_message(int errnum, std::string_view path,
				std::string_view ioctl_name);

// Empty if a library speaking ABI @lib_major.@lib_minor can talk to a module
// speaking @mod_major.@mod_minor, otherwise the message explaining why not.
std::string abi_mismatch_message(std::uint32_t lib_major, std::uint32_t lib_minor,
				 std::uint32_t mod_major, std::uint32_t mod_minor);

// Throws mcp::Error(EPROTO) with abi_mismatch_message() unless @module is
// compatible with this library's ABI (mcp::abi_major).
void check_abi(const Version &module);

// The Version of what MCP_IOC_GET_VERSION wrote into @raw.
Version decode_version(const struct mcp_version &raw);

// Issues MCP_IOC_GET_VERSION on @fd.  Throws mcp::Error.
Version read_version(int fd, std::string_view path);

// ---- events (events.cpp) ----

// What one netlink message of an event socket was.
struct EventParse {
	std::optional<PlaceEvent> event;	// an MCP_CMD_EVENT_PLACE
	bool family_removed = false;		// nlctrl: family "mcp" went away
};

// Parses one message (@len bytes available at @nlh) received on a socket
// where the "mcp" family has id @family_id.  Other families' messages and
// unknown commands give an empty EventParse.  Throws mcp::Error(EPROTO) for
// a malformed MCP_CMD_EVENT_PLACE.
EventParse parse_event_message(const struct nlmsghdr *nlh, std::size_t len, int family_id);

// The message for @errnum while doing @what with the event socket.
std::string events_error_message(int errnum, std::string_view what);

// c_api.cpp: records @msg for mcp_strerror_last(); returns -@errnum.
int c_api_fail(int errnum, const char *msg) noexcept;

// The C boundary: runs @fn and turns an exception into -errno with its
// message for mcp_strerror_last().  Returns what @fn returns (an int), or
// 0 after an @fn that returns nothing.
template <typename Fn> int c_api_guard(Fn &&fn) noexcept
{
	try {
		if constexpr (std::is_void_v<std::invoke_result_t<Fn>>) {
			fn();
			return 0;
		} else {
			return fn();
		}
	} catch (const Error &e) {
		return c_api_fail(e.errnum(), e.what());
	} catch (const std::bad_alloc &) {
		return c_api_fail(ENOMEM, "out of memory");
	} catch (const std::exception &e) {
		return c_api_fail(EIO, e.what());
	} catch (...) {
		return c_api_fail(EIO, "unexpected internal error in libmcp");
	}
}
// c_api.cpp: the C++ objects behind the C handles (not NULL).
const Device &c_api_device(const struct mcp_device *dev) noexcept;
const Accelerator &c_api_accel(const struct mcp_accel *accel) noexcept;

// Builds a Topology from the arrays MCP_IOC_GET_TOPOLOGY filled:
// @nodes (nr_nodes entries), @cpumasks (nr_nodes rows of @cpu_words words),
// @distances (nr_nodes x nr_nodes, row-major).  Throws mcp::Error(EPROTO)
// when the arrays are inconsistent (too short, duplicate node ids).
Topology decode_topology(std::span<const struct mcp_node_info> nodes,
			 std::span<const std::uint64_t> cpumasks,
			 std::uint32_t cpu_words,
			 std::span<const std::uint32_t> distances,
			 std::uint32_t cpus_online, std::uint32_t nr_cpu_ids);

// One MCP_IOC_GET_TOPOLOGY call: 0 or a negative errno.  The real one is
// ioctl(2); tests pass a fake kernel.
using TopologyIoctl = std::function<int(struct mcp_topology &)>;

// Reads the topology through @call: asks for the sizes, allocates and
// retries while the kernel answers -ENOSPC (at most @max_attempts calls,
// then EAGAIN).  @path names the device in messages.  Throws mcp::Error.
Topology fetch_topology(const TopologyIoctl &call, std::string_view path,
			int max_attempts = 8);

// fetch_topology() with ioctl(2) on @fd.
Topology read_topology(int fd, std::string_view path);

// The node whose memory serves @node_id: itself when it has memory, else
// the node with memory nearest to it by SLIT distance (the lowest id among
// equals), as the module chooses for a default buffer; nullopt when
// @node_id is not in @topo or no node has memory.
std::optional<unsigned> nearest_memory_node(const Topology &topo, unsigned node_id);

// Throws Error(EINVAL), "@what: node 2 has no memory; nearest with memory:
// 1 (distance 17)" or "@what: node 64 is not an online NUMA node; buffers
// can go on node 0, 1 ('mcpctl info' lists them)", unless @node is a node
// of @topo with memory, where an explicitly placed buffer can go.
void require_memory_node(const Topology &topo, int node, const std::string &what);

// The topology @ctx's buffers live in: device fds do not answer
// MCP_IOC_GET_TOPOLOGY, so they ask /dev/mcp.
Topology context_topology(const Dma &ctx);

// Wraps @topo in a C API handle (for tests of the C accessors).
struct mcp_topo *make_c_topology(Topology topo);

// ---- placement (place.cpp) ----

// One line of /proc/PID/maps.
struct MapRange {
	std::uint64_t start = 0;
	std::uint64_t end = 0;
	std::string perms;	// "rw-p"
	std::string path;	// "" for anonymous, "[heap]", "/usr/lib/..."
};

// Parses /proc/PID/maps text; malformed lines are skipped.
std::vector<MapRange> parse_maps(std::string_view text);

// Whether pages of @r are worth sampling: readable, and private writable
// or file-backed; never special mappings ([vsyscall], [vdso], [vvar], ...)
// other than [heap] and [stack].
bool sample_worthy(const MapRange &r);

// Up to @max_pages page addresses spread evenly over the sample-worthy
// ranges of @maps (every page when they hold fewer).
std::vector<std::uint64_t> sample_addresses(const std::vector<MapRange> &maps,
					    unsigned max_pages, std::uint64_t page_size);

// Counts move_pages(2) query statuses per node id (negative statuses, i.e.
// pages not resident, are not counted); the vector is sized to the highest
// node id seen + 1, at least @min_nodes.
PageHistogram count_histogram(std::span<const int> status, std::size_t min_nodes = 0);

// The MCP_PLACE_* flags for @options.
std::uint32_t place_flags(const PlaceOptions &options);

// The message for MCP_IOC_PLACE (or UNPLACE when @unplace) failing on @pid.
std::string place_error_message(int errnum, int pid, const PlaceOptions &options,
				bool unplace = false);

// Builds the result from a completed struct mcp_place and its arrays.
PlaceResult decode_place(const struct mcp_place &arg, int pid, bool dry_run,
			 std::span<const std::uint64_t> mask,
			 std::span<const std::uint32_t> idle);

// Parses "0-3,8" into ids; throws mcp::Error(EINVAL) when malformed.
std::vector<unsigned> parse_id_list(std::string_view list);

// The C API's options and results (c_api.cpp).
PlaceOptions place_options_from_c(const struct mcp_place_opts &c);
void place_result_to_c(const PlaceResult &r, struct mcp_place_result &c);

// ---- QoS (qos.cpp) ----

// cpu.max for @cpus vCores, "12500 100000" for 0.125.  Throws
// mcp::Error(EINVAL) below 0.125 vCore, for 0, negative or non-finite.
std::string cpu_max_for(double cpus);
// The node whose memory a group on @node's CPUs gets (cpuset.mems):
// @node when it is in @with_memory, else the node of @with_memory
// nearest by @distances (@node's row, one entry per node of @online, in
// that order), the lowest id among equals; @node when nothing is known.
unsigned qos_memory_node(unsigned node, const std::vector<unsigned> &with_memory,
			 const std::vector<unsigned> &online, const std::vector<unsigned> &distances);
// cpu.weight of a class; 0 for best-effort (left at the kernel default).
unsigned cpu_weight_for(QosClass cls);
// The class a group's files describe.
std::optional<QosClass> infer_qos_class(std::optional<std::uint64_t> weight,
					std::optional<std::uint64_t> memory_min,
					std::optional<std::uint64_t> memory_low);

// ---- accelerator devices (accelerator.cpp, bar_mapping.cpp, irq_event.cpp,
// pcie_link.cpp) ----

// The AcceleratorInfo of what MCP_IOC_DEV_INFO wrote into @raw.
AcceleratorInfo decode_accelerator_info(const struct mcp_dev_info &raw);

// The message for @errnum while doing @what ("MCP_IOC_BAR_INFO", "mapping
// BAR 0") on device @device (a PCI address or "device 3").  ENODEV says
// the device was removed.
std::string device_error_message(int errnum, std::string_view device, std::string_view what);

// The interrupt vectors that one Accelerator's IrqEvents hold (indexed by
// vector, sized irq_count), shared by the Accelerator and its IrqEvents.
struct IrqVectors {
	std::mutex lock;
	std::vector<bool> connected;
};

// Why a write-combining mapping of BAR @bar of @device is refused, from
// the kernel's enum mcp_wc_status.
std::string wc_refusal_message(std::uint32_t wc_status, unsigned bar, std::string_view device);

// The message for a failed mmap(2) of BAR @bar of @device with @errnum.
// caching: the mode that was asked for (it names the other one on EBUSY).
std::string map_error_message(int errnum, unsigned bar, std::string_view device,
			      Caching caching = Caching::uncached);

// Builds BarMappings around mappings libmcp did not make itself (tests
// use anonymous memory; the benchmark a sysfs resourceN mapping).  The
// BarMapping munmap()s @base on destruction.
struct BarMappingAccess {
	static BarMapping adopt(void *base, std::size_t len, unsigned bar,
				std::uint64_t bar_offset, Caching caching, std::string device);
};

// MT/s of a sysfs link speed ("8.0 GT/s PCIe", "2.5 GT/s", "16 GT/s");
// 0 for "Unknown" or anything unparsable.
std::uint32_t parse_link_speed(std::string_view text) noexcept;

// What sysfs says about one end of a link; 0 = unknown.
struct LinkReading {
	bool pcie = false;	// the link files exist
	std::uint32_t speed = 0;
	std::uint32_t speed_cap = 0;
	std::uint32_t width = 0;
	std::uint32_t width_cap = 0;
};

// The link of @dev: degraded when the current speed (width) is below the
// smaller of the maxima of @dev and of its upstream port @upstream (nullptr
// or !pcie when there is none).  Unknown values never count as degraded.
PcieLink decide_link(const LinkReading &dev, const LinkReading *upstream) noexcept;

} // namespace mcp::detail

#endif // MCP_SRC_INTERNAL_HPP
