// SPDX-License-Identifier: GPL-2.0
/*
 * MCP (Model Control Protocol): read-only sysfs attributes of the misc
 * device, /sys/class/misc/mcp/.  Documented in
 * Documentation/ABI/testing/sysfs-class-misc-mcp.
 */

#include <linux/device.h>
#include <linux/sysfs.h>

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

const struct attribute_group *mcp_sysfs_groups[] = {
	&mcp_sysfs_group,
	&mcp_place_attr_group,
	NULL
};
