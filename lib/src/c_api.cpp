// SPDX-License-Identifier: LGPL-2.1-or-later
// The C API: thin wrappers over the C++ core.  No exception crosses this
// boundary: each entry point catches, records the message for
// mcp_strerror_last() and returns a negative errno.
#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <new>
#include <string>
#include <utility>

#include <mcp/graph.h>

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
	o.adaptive = c.flags & MCP_PLACE_OPT_ADAPTIVE;
	if (c.size >= offsetof(struct mcp_place_opts, runq_threshold_us) + sizeof(c.runq_threshold_us))
		o.runq_threshold_us = c.runq_threshold_us;
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
	return mcp::detail::c_api_guard([&] {
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
	return mcp::detail::c_api_guard([&] {
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
	case MCP_FEATURE_DEVICES:
		return "devices";
	case MCP_FEATURE_BUFFERS:
		return "buffers";
	case MCP_FEATURE_DMA:
		return "dma";
	case MCP_FEATURE_GRAPHS:
		return "graphs";
	case MCP_FEATURE_JOB_BATCH:
		return "job-batch";
	case MCP_FEATURE_GRAPH_COMPACT:
		return "graph-compact";
	case MCP_FEATURE_JOB_CHAINS:
		return "job-chains";
	case MCP_FEATURE_WORKER_OPS:
		return "worker-ops";
	case MCP_FEATURE_PLACE_ADAPTIVE:
		return "place-adaptive";
	case MCP_FEATURE_TUNE:
		return "tune";
	default:
		return nullptr;
	}
}

int mcp_topo_get(struct mcp_device *dev, struct mcp_topo **out)
{
	if (!dev || !out)
		return fail(EINVAL, "mcp_topo_get: dev or out is NULL");
	return mcp::detail::c_api_guard([&] {
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
	return mcp::detail::c_api_guard([&] { *distance = topo->topo.distance(node_a, node_b); });
}

int mcp_place(struct mcp_device *dev, int pid, const struct mcp_place_opts *opts,
	      struct mcp_place_result *result)
{
	if (!dev)
		return fail(EINVAL, "mcp_place: dev is NULL");
	if (opts && opts->size < MCP_PLACE_OPTS_SIZE_VER0)
		return fail(EINVAL, "mcp_place: opts->size is smaller than MCP_PLACE_OPTS_SIZE_VER0");
	if (opts && (opts->flags & ~MCP_PLACE_OPT_ALL))
		return fail(EINVAL, "mcp_place: unknown bits in opts->flags");
	if (result && result->size < sizeof(*result))
		return fail(EINVAL, "mcp_place: result->size is smaller than struct mcp_place_result");
	return mcp::detail::c_api_guard([&] {
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
	return mcp::detail::c_api_guard([&] { dev->dev.unplace(pid); });
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
	return mcp::detail::c_api_guard([&] {
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
	return mcp::detail::c_api_guard([&] {
		mcp::QosGroup(name, cgroup_mount_or_default(cgroup_mount)).attach(pid);
	});
}

int mcp_qos_delete(const char *cgroup_mount, const char *name)
{
	if (!name)
		return fail(EINVAL, "mcp_qos_delete: name is NULL");
	return mcp::detail::c_api_guard([&] { mcp::QosGroup(name, cgroup_mount_or_default(cgroup_mount)).remove(); });
}

// ---- accelerator devices ----

} // extern "C"

struct mcp_accel {
	mcp::Accelerator accel;
};

struct mcp_bar {
	mcp::BarMapping map;
};

struct mcp_irq {
	mcp::IrqEvent event;
};

namespace {

void accel_info_to_c(const mcp::AcceleratorInfo &i, struct mcp_accel_info &c)
{
	const std::uint32_t size = c.size;
	const std::string addr = i.address.to_string();

	std::memset(&c, 0, sizeof(c));
	c.size = size;
	c.index = i.index;
	c.numa_node = i.numa_node;
	std::snprintf(c.address, sizeof(c.address), "%s", addr.c_str());
	c.vendor = i.vendor;
	c.device = i.device;
	c.subsystem_vendor = i.subsystem_vendor;
	c.subsystem_device = i.subsystem_device;
	c.class_code = i.class_code;
	c.revision = i.revision;
	c.generic = i.generic;
	std::snprintf(c.backend, sizeof(c.backend), "%s", i.backend.c_str());
	c.irq_type = static_cast<std::uint32_t>(i.irq_type);
	c.irq_count = i.irq_count;
	c.dma_mask = i.dma_mask;
	c.link_flags = (i.link.pcie ? MCP_ACCEL_LINK_PCIE : 0) |
		       (i.link.speed_degraded ? MCP_ACCEL_LINK_SPEED_DEGRADED : 0) |
		       (i.link.width_degraded ? MCP_ACCEL_LINK_WIDTH_DEGRADED : 0);
	c.link_speed = i.link.speed;
	c.link_speed_cap = i.link.speed_cap;
	c.link_width = i.link.width;
	c.link_width_cap = i.link.width_cap;
	c.wc_test = static_cast<std::uint32_t>(i.wc_test);
	c.open_count = i.open_count;
	for (std::size_t b = 0; b < MCP_ACCEL_MAX_BARS; b++)
		c.bars[b] = {i.bars[b].start, i.bars[b].len, i.bars[b].flags, 0};
}

// The caller's struct must be at least as large as this library's.
bool accel_info_size_ok(const struct mcp_accel_info *info)
{
	return info && info->size >= sizeof(struct mcp_accel_info);
}

} // namespace

extern "C" {

int mcp_accel_list(struct mcp_device *dev, uint32_t *indices, size_t cap, size_t *count)
{
	if (!dev || !count || (cap && !indices))
		return fail(EINVAL, "mcp_accel_list: dev or count is NULL, or indices is NULL with cap > 0");
	int r = 0;
	int g = mcp::detail::c_api_guard([&] {
		std::vector<unsigned> ids = dev->dev.accelerator_indices();

		*count = ids.size();
		if (ids.size() > cap) {
			r = fail(ENOSPC, "mcp_accel_list: more devices than cap");
			return;
		}
		std::copy(ids.begin(), ids.end(), indices);
	});
	return g ? g : r;
}

int mcp_accel_query(struct mcp_device *dev, uint32_t index, struct mcp_accel_info *info)
{
	if (!dev || !accel_info_size_ok(info))
		return fail(EINVAL, "mcp_accel_query: dev or info is NULL, or info->size is too small");
	return mcp::detail::c_api_guard([&] { accel_info_to_c(dev->dev.accelerator_info(index), *info); });
}

int mcp_accel_find(struct mcp_device *dev, const char *address, uint32_t *index)
{
	if (!dev || !address || !index)
		return fail(EINVAL, "mcp_accel_find: dev, address or index is NULL");
	std::optional<mcp::PciAddress> a = mcp::PciAddress::parse(address);
	if (!a)
		return fail(EINVAL, "mcp_accel_find: the address is not dddd:bb:ss.f or bb:ss.f");
	return mcp::detail::c_api_guard([&] { *index = dev->dev.find_accelerator(*a); });
}

int mcp_accel_open(struct mcp_device *dev, uint32_t index, struct mcp_accel **out)
{
	if (!dev || !out)
		return fail(EINVAL, "mcp_accel_open: dev or out is NULL");
	return mcp::detail::c_api_guard([&] {
		auto handle = std::make_unique<mcp_accel>();
		handle->accel = dev->dev.open_accelerator(index);
		*out = handle.release();
	});
}

void mcp_accel_close(struct mcp_accel *accel)
{
	std::unique_ptr<mcp_accel> owned(accel);
}

int mcp_accel_fd(const struct mcp_accel *accel)
{
	if (!accel)
		return fail(EINVAL, "mcp_accel_fd: accel is NULL");
	return accel->accel.fd();
}

int mcp_accel_get_info(const struct mcp_accel *accel, struct mcp_accel_info *info)
{
	if (!accel || !accel_info_size_ok(info))
		return fail(EINVAL, "mcp_accel_get_info: accel or info is NULL, or info->size is too small");
	return mcp::detail::c_api_guard([&] { accel_info_to_c(accel->accel.info(), *info); });
}

int mcp_bar_map(struct mcp_accel *accel, uint32_t bar, uint32_t flags, uint64_t offset,
		uint64_t length, struct mcp_bar **out)
{
	if (!accel || !out)
		return fail(EINVAL, "mcp_bar_map: accel or out is NULL");
	if (flags & ~MCP_BAR_MAP_WC)
		return fail(EINVAL, "mcp_bar_map: unknown flags");
	return mcp::detail::c_api_guard([&] {
		auto handle = std::make_unique<mcp_bar>();
		handle->map = accel->accel.map_bar(bar,
						   (flags & MCP_BAR_MAP_WC) ? mcp::Caching::write_combining
									    : mcp::Caching::uncached,
						   offset, length);
		*out = handle.release();
	});
}

void mcp_bar_unmap(struct mcp_bar *bar)
{
	std::unique_ptr<mcp_bar> owned(bar);
}

uint64_t mcp_bar_size(const struct mcp_bar *bar)
{
	return bar ? bar->map.size() : 0;
}

volatile void *mcp_bar_data(const struct mcp_bar *bar)
{
	return bar ? bar->map.data() : nullptr;
}

int mcp_bar_read32(const struct mcp_bar *bar, uint64_t offset, uint32_t *value)
{
	if (!bar || !value)
		return fail(EINVAL, "mcp_bar_read32: bar or value is NULL");
	return mcp::detail::c_api_guard([&] { *value = bar->map.read32(offset); });
}

int mcp_bar_read64(const struct mcp_bar *bar, uint64_t offset, uint64_t *value)
{
	if (!bar || !value)
		return fail(EINVAL, "mcp_bar_read64: bar or value is NULL");
	return mcp::detail::c_api_guard([&] { *value = bar->map.read64(offset); });
}

int mcp_bar_write32(const struct mcp_bar *bar, uint64_t offset, uint32_t value)
{
	if (!bar)
		return fail(EINVAL, "mcp_bar_write32: bar is NULL");
	return mcp::detail::c_api_guard([&] { bar->map.write32(offset, value); });
}

int mcp_bar_write64(const struct mcp_bar *bar, uint64_t offset, uint64_t value)
{
	if (!bar)
		return fail(EINVAL, "mcp_bar_write64: bar is NULL");
	return mcp::detail::c_api_guard([&] { bar->map.write64(offset, value); });
}

int mcp_bar_write_block(const struct mcp_bar *bar, uint64_t offset, const void *data, size_t len)
{
	if (!bar || (len && !data))
		return fail(EINVAL, "mcp_bar_write_block: bar or data is NULL");
	return mcp::detail::c_api_guard([&] {
		bar->map.write_block(offset, {static_cast<const std::byte *>(data), len});
	});
}

int mcp_irq_open(struct mcp_accel *accel, uint32_t vector, struct mcp_irq **out)
{
	if (!accel || !out)
		return fail(EINVAL, "mcp_irq_open: accel or out is NULL");
	return mcp::detail::c_api_guard([&] {
		auto handle = std::make_unique<mcp_irq>();
		handle->event = accel->accel.irq_event(vector);
		*out = handle.release();
	});
}

void mcp_irq_close(struct mcp_irq *irq)
{
	std::unique_ptr<mcp_irq> owned(irq);
}

int mcp_irq_fd(const struct mcp_irq *irq)
{
	if (!irq)
		return fail(EINVAL, "mcp_irq_fd: irq is NULL");
	return irq->event.fd();
}

int mcp_irq_wait(struct mcp_irq *irq, int timeout_ms, uint64_t *count)
{
	if (!irq)
		return fail(EINVAL, "mcp_irq_wait: irq is NULL");
	std::optional<std::uint64_t> got;
	int r = mcp::detail::c_api_guard([&] { got = irq->event.wait(std::chrono::milliseconds(timeout_ms)); });
	if (r)
		return r;
	if (!got)
		return 0;
	if (count)
		*count = *got;
	return 1;
}

int mcp_irq_unmask(struct mcp_irq *irq)
{
	if (!irq)
		return fail(EINVAL, "mcp_irq_unmask: irq is NULL");
	return mcp::detail::c_api_guard([&] { irq->event.unmask(); });
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

const mcp::Device &mcp::detail::c_api_device(const struct mcp_device *dev) noexcept
{
	return dev->dev;
}

const mcp::Accelerator &mcp::detail::c_api_accel(const struct mcp_accel *accel) noexcept
{
	return accel->accel;
}
