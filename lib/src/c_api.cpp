// SPDX-License-Identifier: LGPL-2.1-or-later
// The C API: thin wrappers over the C++ core.  No exception crosses this
// boundary: each entry point catches, records the message for
// mcp_strerror_last() and returns a negative errno.
#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>
#include <new>
#include <string>
#include <utility>

#include "internal.hpp"

struct mcp_device {
	mcp::Device dev;
};

struct mcp_topo {
	mcp::Topology topo;
};

namespace {

thread_local std::string last_error;

void set_last_error(const char *msg) noexcept
{
	try {
		last_error = msg;
	} catch (...) {
		last_error.clear(); // out of memory: at least do not lie
	}
}

int fail(int errnum, const char *msg) noexcept
{
	set_last_error(msg);
	return -errnum;
}

// Runs @fn, translating exceptions into a negative errno.
template <typename Fn>
int guard(Fn &&fn) noexcept
{
	try {
		fn();
		return 0;
	} catch (const mcp::Error &e) {
		return fail(e.errnum(), e.what());
	} catch (const std::bad_alloc &) {
		return fail(ENOMEM, "out of memory");
	} catch (const std::exception &e) {
		return fail(EIO, e.what());
	} catch (...) {
		return fail(EIO, "unexpected internal error in libmcp");
	}
}

const mcp::Node *node_at(const mcp_topo *topo, unsigned int index) noexcept
{
	if (!topo || index >= topo->topo.nodes().size())
		return nullptr;
	return &topo->topo.nodes()[index];
}

} // namespace

struct mcp_topo *mcp::detail::make_c_topology(Topology topo)
{
	auto handle = std::make_unique<mcp_topo>();
	handle->topo = std::move(topo);
	return handle.release();
}

extern "C" {

const char *mcp_library_version(void)
{
	return mcp::library_version();
}

int mcp_open(const char *path, struct mcp_device **out)
{
	if (!out)
		return fail(EINVAL, "mcp_open: out is NULL");
	return guard([&] {
		auto handle = std::make_unique<mcp_device>();
		handle->dev = mcp::Device::open(path ? path : "");
		*out = handle.release();
	});
}

void mcp_close(struct mcp_device *dev)
{
	std::unique_ptr<mcp_device> owned(dev);
}

int mcp_device_fd(const struct mcp_device *dev)
{
	if (!dev)
		return fail(EINVAL, "mcp_device_fd: dev is NULL");
	return dev->dev.fd();
}

int mcp_get_version(const struct mcp_device *dev, uint32_t *abi_major,
		    uint32_t *abi_minor, uint64_t *features, char *module_version,
		    size_t module_version_len)
{
	if (!dev)
		return fail(EINVAL, "mcp_get_version: dev is NULL");
	return guard([&] {
		const mcp::Version &v = dev->dev.version();

		if (abi_major)
			*abi_major = v.abi_major;
		if (abi_minor)
			*abi_minor = v.abi_minor;
		if (features)
			*features = v.features;
		if (module_version && module_version_len) {
			size_t n = std::min(v.module_version.size(), module_version_len - 1);

			std::memcpy(module_version, v.module_version.data(), n);
			module_version[n] = '\0';
		}
	});
}

const char *mcp_feature_name(uint64_t feature)
{
	switch (feature) {
	case MCP_FEATURE_VERSION:
		return "version";
	case MCP_FEATURE_TOPOLOGY:
		return "topology";
	default:
		return nullptr;
	}
}

int mcp_topo_get(struct mcp_device *dev, struct mcp_topo **out)
{
	if (!dev || !out)
		return fail(EINVAL, "mcp_topo_get: dev or out is NULL");
	return guard([&] {
		*out = mcp::detail::make_c_topology(dev->dev.topology());
	});
}

void mcp_topo_free(struct mcp_topo *topo)
{
	std::unique_ptr<mcp_topo> owned(topo);
}

unsigned int mcp_topo_nr_nodes(const struct mcp_topo *topo)
{
	return topo ? static_cast<unsigned int>(topo->topo.nodes().size()) : 0;
}

unsigned int mcp_topo_cpus_online(const struct mcp_topo *topo)
{
	return topo ? topo->topo.cpus_online() : 0;
}

unsigned int mcp_topo_nr_cpu_ids(const struct mcp_topo *topo)
{
	return topo ? topo->topo.nr_cpu_ids() : 0;
}

int mcp_topo_node_id(const struct mcp_topo *topo, unsigned int index,
		     unsigned int *node_id)
{
	const mcp::Node *node = node_at(topo, index);

	if (!node || !node_id)
		return fail(EINVAL, "mcp_topo_node_id: no such node index");
	*node_id = node->id;
	return 0;
}

int mcp_topo_node_memory(const struct mcp_topo *topo, unsigned int index,
			 uint64_t *mem_total_bytes, uint64_t *mem_free_bytes)
{
	const mcp::Node *node = node_at(topo, index);

	if (!node)
		return fail(EINVAL, "mcp_topo_node_memory: no such node index");
	if (mem_total_bytes)
		*mem_total_bytes = node->mem_total_bytes;
	if (mem_free_bytes)
		*mem_free_bytes = node->mem_free_bytes;
	return 0;
}

int mcp_topo_node_cpus(const struct mcp_topo *topo, unsigned int index,
		       unsigned int *cpus, size_t cap, size_t *nr_cpus)
{
	const mcp::Node *node = node_at(topo, index);

	if (!node || !nr_cpus)
		return fail(EINVAL, "mcp_topo_node_cpus: no such node index or nr_cpus is NULL");
	*nr_cpus = node->cpus.size();
	if (cap < node->cpus.size())
		return fail(ENOSPC, "mcp_topo_node_cpus: the CPU array is too small");
	std::copy(node->cpus.begin(), node->cpus.end(), cpus);
	return 0;
}

int mcp_topo_distance(const struct mcp_topo *topo, unsigned int node_a,
		      unsigned int node_b, unsigned int *distance)
{
	if (!topo || !distance)
		return fail(EINVAL, "mcp_topo_distance: topo or distance is NULL");
	return guard([&] { *distance = topo->topo.distance(node_a, node_b); });
}

const char *mcp_strerror_last(void)
{
	return last_error.c_str();
}

} // extern "C"
