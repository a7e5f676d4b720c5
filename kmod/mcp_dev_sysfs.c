// SPDX-License-Identifier: GPL-2.0
/*
 * MCP (Model Control Protocol): sysfs attributes of each PCI device bound
 * to mcp.ko, in /sys/bus/pci/devices/<address>/mcp/: read-only state and
 * the root-writable DMA knobs of the device's contexts.
 * Documented in Documentation/ABI/testing/sysfs-bus-pci-drivers-mcp.
 *
 * The driver core adds the group after probe and removes it before
 * remove, so drvdata is always a live device here.
 */

#include <linux/device.h>
#include <linux/pci.h>
#include <linux/sysfs.h>

#include "mcp_pci.h"

static struct mcp_dev *mcp_sysfs_dev(struct device *dev)
{
	return pci_get_drvdata(to_pci_dev(dev));
}

static ssize_t index_show(struct device *dev, struct device_attribute *attr,
			  char *buf)
{
	return sysfs_emit(buf, "%u\n", mcp_sysfs_dev(dev)->index);
}
static DEVICE_ATTR_RO(index);

static ssize_t backend_show(struct device *dev, struct device_attribute *attr,
			    char *buf)
{
	struct mcp_dev *mdev = mcp_sysfs_dev(dev);

	return sysfs_emit(buf, "%s\n",
			  mdev->backend ? mdev->backend->name : "generic");
}
static DEVICE_ATTR_RO(backend);

static ssize_t link_speed_show(struct device *dev,
			       struct device_attribute *attr, char *buf)
{
	struct mcp_dev_info info;

	mcp_dev_link(mcp_sysfs_dev(dev), &info);
	return sysfs_emit(buf, "%u\n", info.link_speed);
}
static DEVICE_ATTR_RO(link_speed);

static ssize_t link_speed_cap_show(struct device *dev,
				   struct device_attribute *attr, char *buf)
{
	struct mcp_dev_info info;

	mcp_dev_link(mcp_sysfs_dev(dev), &info);
	return sysfs_emit(buf, "%u\n", info.link_speed_cap);
}
static DEVICE_ATTR_RO(link_speed_cap);

static ssize_t link_width_show(struct device *dev,
			       struct device_attribute *attr, char *buf)
{
	struct mcp_dev_info info;

	mcp_dev_link(mcp_sysfs_dev(dev), &info);
	return sysfs_emit(buf, "%u\n", info.link_width);
}
static DEVICE_ATTR_RO(link_width);

static ssize_t link_width_cap_show(struct device *dev,
				   struct device_attribute *attr, char *buf)
{
	struct mcp_dev_info info;

	mcp_dev_link(mcp_sysfs_dev(dev), &info);
	return sysfs_emit(buf, "%u\n", info.link_width_cap);
}
static DEVICE_ATTR_RO(link_width_cap);

/* "none", "speed", "width" or "speed width"; "none" too for non-PCIe. */
static ssize_t link_degraded_show(struct device *dev,
				  struct device_attribute *attr, char *buf)
{
	struct mcp_dev_info info;
	bool speed, width;

	mcp_dev_link(mcp_sysfs_dev(dev), &info);
	speed = info.link_flags & MCP_LINK_SPEED_DEGRADED;
	width = info.link_flags & MCP_LINK_WIDTH_DEGRADED;
	if (speed && width)
		return sysfs_emit(buf, "speed width\n");
	if (speed || width)
		return sysfs_emit(buf, "%s\n", speed ? "speed" : "width");
	return sysfs_emit(buf, "none\n");
}
static DEVICE_ATTR_RO(link_degraded);

static const char * const mcp_wc_test_names[] = {
	[MCP_WC_UNTESTED] = "untested",
	[MCP_WC_UNSUPPORTED] = "unsupported",
	[MCP_WC_NOT_COMBINING] = "not_combining",
	[MCP_WC_COMBINING] = "combining",
	[MCP_WC_NOT_RUN] = "not_run",
};

static ssize_t wc_test_show(struct device *dev, struct device_attribute *attr,
			    char *buf)
{
	return sysfs_emit(buf, "%s\n",
			  mcp_wc_test_names[mcp_sysfs_dev(dev)->wc_test]);
}
static DEVICE_ATTR_RO(wc_test);

static ssize_t open_count_show(struct device *dev,
			       struct device_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%d\n",
			  atomic_read(&mcp_sysfs_dev(dev)->open_count));
}
static DEVICE_ATTR_RO(open_count);

/* The DMA knobs of the device's contexts (Documentation/dma.rst). */
#define MCP_DEV_DMA_KNOB_ATTR(_name, _knob)				\
static const enum mcp_dma_knob _name##_knob = _knob;			\
static ssize_t _name##_show(struct device *dev,				\
			    struct device_attribute *attr, char *buf)	\
{									\
	return mcp_dma_knob_show(&mcp_sysfs_dev(dev)->dma_knobs,	\
				 _name##_knob, buf);			\
}									\
static ssize_t _name##_store(struct device *dev,			\
			     struct device_attribute *attr,		\
			     const char *buf, size_t count)		\
{									\
	int ret = mcp_dma_knob_store(&mcp_sysfs_dev(dev)->dma_knobs,	\
				     _name##_knob, buf);		\
									\
	return ret ? ret : count;					\
}									\
static struct device_attribute dev_attr_##_name = __ATTR_RW(_name)

MCP_DEV_DMA_KNOB_ATTR(wc_depth, MCP_DMA_KNOB_WC_DEPTH);
MCP_DEV_DMA_KNOB_ATTR(wc_timeout_us, MCP_DMA_KNOB_WC_TIMEOUT_US);
MCP_DEV_DMA_KNOB_ATTR(job_timeout_ms, MCP_DMA_KNOB_JOB_TIMEOUT_MS);

static struct attribute *mcp_dev_sysfs_attrs[] = {
	&dev_attr_index.attr,
	&dev_attr_backend.attr,
	&dev_attr_link_speed.attr,
	&dev_attr_link_speed_cap.attr,
	&dev_attr_link_width.attr,
	&dev_attr_link_width_cap.attr,
	&dev_attr_link_degraded.attr,
	&dev_attr_wc_test.attr,
	&dev_attr_open_count.attr,
	&dev_attr_wc_depth.attr,
	&dev_attr_wc_timeout_us.attr,
	&dev_attr_job_timeout_ms.attr,
	NULL
};

static const struct attribute_group mcp_dev_sysfs_group = {
	.name = "mcp",
	.attrs = mcp_dev_sysfs_attrs,
};

const struct attribute_group *mcp_dev_sysfs_groups[] = {
	&mcp_dev_sysfs_group,
	NULL
};
