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

mcp::PlaceOptions mcp::detail::place_options_from_c(const struct mcp_place_opts &c)
{
	PlaceOptions o;

	o.dry_run = c.flags & MCP_PLACE_OPT_DRY_RUN;
	o.force = c.flags & MCP_PLACE_OPT_FORCE;
	o.keep = c.flags & MCP_PLACE_OPT_KEEP;
	o.strict = c.flags & MCP_PLACE_OPT_STRICT;
	o.histogram = !(c.flags & MCP_PLACE_OPT_NO_HISTOGRAM);
	if (c.flags & MCP_PLACE_OPT_NODE)
		o.node = c.node;
	if (c.sample_pages)
		o.sample_pages = c.sample_pages;
	return o;
}

void mcp::detail::place_result_to_c(const PlaceResult &r, struct mcp_place_result &c)
{
	const std::uint32_t size = c.size;

	std::memset(&c, 0, sizeof(c));
	c.size = size;
	c.node_chosen = r.node_chosen;
	c.prev_node = r.prev_node;
	c.home_node = r.home_node;
	c.reason = static_cast<std::uint32_t>(r.reason);
	c.home_source = static_cast<std::uint32_t>(r.home_source);
	c.histogram_pages = r.histogram ? r.histogram->resident : 0;
	c.nr_nodes = static_cast<std::uint32_t>(
		std::min<std::size_t>(r.idle_cpus.size(), MCP_PLACE_RESULT_MAX_NODES));
	std::copy_n(r.idle_cpus.begin(), c.nr_nodes, c.idle_cpus);
	for (unsigned cpu : r.cpus)
		if (cpu < MCP_PLACE_RESULT_MAX_CPUS)
			c.cpu_mask[cpu / 64] |= 1ULL << (cpu % 64);
}

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
	case MCP_FEATURE_EVENTS:
		return "events";
	case MCP_FEATURE_PLACE:
		return "place";
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

int mcp_place(struct mcp_device *dev, int pid, const struct mcp_place_opts *opts,
	      struct mcp_place_result *result)
{
	if (!dev)
		return fail(EINVAL, "mcp_place: dev is NULL");
	if (opts && opts->size < sizeof(*opts))
		return fail(EINVAL, "mcp_place: opts->size is smaller than struct mcp_place_opts");
	if (opts && (opts->flags & ~MCP_PLACE_OPT_ALL))
		return fail(EINVAL, "mcp_place: unknown bits in opts->flags");
	if (result && result->size < sizeof(*result))
		return fail(EINVAL, "mcp_place: result->size is smaller than struct mcp_place_result");
	return guard([&] {
		mcp::PlaceOptions o;

		if (opts) {
			o = mcp::detail::place_options_from_c(*opts);
		}
		mcp::PlaceResult r = dev->dev.place(pid, o);
		if (result)
			mcp::detail::place_result_to_c(r, *result);
	});
}

int mcp_unplace(struct mcp_device *dev, int pid)
{
	if (!dev)
		return fail(EINVAL, "mcp_unplace: dev is NULL");
	return guard([&] { dev->dev.unplace(pid); });
}

const char *mcp_place_reason_name(uint32_t reason)
{
	return mcp::to_string(static_cast<mcp::PlaceReason>(reason));
}

const char *mcp_place_home_source_name(uint32_t source)
{
	return mcp::to_string(static_cast<mcp::HomeSource>(source));
}

static std::string cgroup_mount_or_default(const char *mount)
{
	return mount && *mount ? mount : mcp::QosGroup::default_mount;
}

int mcp_qos_create(const char *cgroup_mount, const char *name,
		   const struct mcp_qos_spec *spec)
{
	if (!name || !spec)
		return fail(EINVAL, "mcp_qos_create: name or spec is NULL");
	if (spec->size < sizeof(*spec) || spec->reserved)
		return fail(EINVAL, "mcp_qos_create: bad spec->size or non-zero spec->reserved");
	if (spec->qos_class > MCP_QOS_GUARANTEED)
		return fail(EINVAL, "mcp_qos_create: unknown qos_class");
	return guard([&] {
		mcp::QosSpec s;

		s.cls = static_cast<mcp::QosClass>(spec->qos_class);
		if (spec->cpus != 0)
			s.cpus = spec->cpus;
		if (spec->node >= 0)
			s.node = static_cast<unsigned>(spec->node);
		if (spec->memory_min)
			s.memory_min = spec->memory_min;
		if (spec->memory_low)
			s.memory_low = spec->memory_low;
		mcp::QosGroup(name, cgroup_mount_or_default(cgroup_mount)).create(s);
	});
}

int mcp_qos_attach(const char *cgroup_mount, const char *name, int pid)
{
	if (!name)
		return fail(EINVAL, "mcp_qos_attach: name is NULL");
	return guard([&] {
		mcp::QosGroup(name, cgroup_mount_or_default(cgroup_mount)).attach(pid);
	});
}

int mcp_qos_delete(const char *cgroup_mount, const char *name)
{
	if (!name)
		return fail(EINVAL, "mcp_qos_delete: name is NULL");
	return guard([&] { mcp::QosGroup(name, cgroup_mount_or_default(cgroup_mount)).remove(); });
}

const char *mcp_strerror_last(void)
{
	return last_error.c_str();
}

} // extern "C"

// For the C entry points of other files (events.cpp).
int mcp::detail::c_api_fail(int errnum, const char *msg) noexcept
{
	return fail(errnum, msg);
}
