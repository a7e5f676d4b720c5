// SPDX-License-Identifier: GPL-2.0
/*
 * MCP (Model Control Protocol): sysfs attributes of the misc device,
 * /sys/class/misc/mcp/: read-only state, and in dma/ the root-writable
 * DMA knobs of the host contexts (/dev/mcp fds).  Documented in
 * Documentation/ABI/testing/sysfs-class-misc-mcp.
 */

#include <linux/device.h>
#include <linux/sysfs.h>

#include "mcp_ctx.h"
#include "mcp_graph.h"
#include "mcp_internal.h"

static ssize_t abi_version_show(struct device *dev,
				struct device_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%u.%u\n", MCP_ABI_MAJOR, MCP_ABI_MINOR);
}
static DEVICE_ATTR_RO(abi_version);

static ssize_t open_fds_show(struct device *dev,
			     struct device_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%lld\n", mcp_counter_read(MCP_CTR_OPEN_FILES));
}
static DEVICE_ATTR_RO(open_fds);

static ssize_t features_show(struct device *dev,
			     struct device_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "0x%llx\n", (unsigned long long)MCP_FEATURES);
}
static DEVICE_ATTR_RO(features);

static struct attribute *mcp_sysfs_attrs[] = {
	&dev_attr_abi_version.attr,
	&dev_attr_open_fds.attr,
	&dev_attr_features.attr,
	NULL
};

static const struct attribute_group mcp_sysfs_group = {
	.attrs = mcp_sysfs_attrs,
};

#define MCP_HOST_DMA_KNOB_ATTR(_name, _knob)				\
static const enum mcp_dma_knob _name##_knob = _knob;			\
static ssize_t _name##_show(struct device *dev,				\
			    struct device_attribute *attr, char *buf)	\
{									\
	return mcp_dma_knob_show(&mcp_host_dma_knobs, _name##_knob, buf);\
}									\
static ssize_t _name##_store(struct device *dev,			\
			     struct device_attribute *attr,		\
			     const char *buf, size_t count)		\
{									\
	int ret = mcp_dma_knob_store(&mcp_host_dma_knobs,		\
				     _name##_knob, buf);		\
									\
	return ret ? ret : count;					\
}									\
static struct device_attribute dev_attr_##_name = __ATTR_RW(_name)

MCP_HOST_DMA_KNOB_ATTR(wc_depth, MCP_DMA_KNOB_WC_DEPTH);
MCP_HOST_DMA_KNOB_ATTR(wc_timeout_us, MCP_DMA_KNOB_WC_TIMEOUT_US);
MCP_HOST_DMA_KNOB_ATTR(job_timeout_ms, MCP_DMA_KNOB_JOB_TIMEOUT_MS);

static struct attribute *mcp_dma_attrs[] = {
	&dev_attr_wc_depth.attr,
	&dev_attr_wc_timeout_us.attr,
	&dev_attr_job_timeout_ms.attr,
	NULL
};

static const struct attribute_group mcp_dma_group = {
	.name = "dma",
	.attrs = mcp_dma_attrs,
};

const struct attribute_group *mcp_sysfs_groups[] = {
	&mcp_sysfs_group,
	&mcp_dma_group,
	&mcp_place_attr_group,
	&mcp_graph_attr_group,
	NULL
};
