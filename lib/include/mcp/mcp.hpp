// SPDX-License-Identifier: LGPL-2.1-or-later
// libmcp: the C++ API of MCP (Model Control Protocol).
//
// Errors are reported by throwing mcp::Error, a std::system_error whose
// code() is the errno value (std::generic_category()) and whose what() is a
// sentence the user can act on.  Documentation/libmcp.rst has the long form.
#ifndef MCP_MCP_HPP
#define MCP_MCP_HPP

#include <cstdint>
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

private:
	Device(int fd, std::string path) noexcept;
	void reset() noexcept;

	int fd_ = -1;
	std::string path_;
	Version version_;
};

} // namespace mcp

#endif // MCP_MCP_HPP
