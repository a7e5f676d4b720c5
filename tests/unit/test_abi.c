/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The kernel ABI, pinned: sizes, offsets, alignment and ioctl numbers of
 * <linux/mcp.h>.  Compiled as C, like the kernel sees it.  A failure here
 * means the ABI drifted: fix the header, never the numbers.
 */
#include <stddef.h>

#include <criterion/criterion.h>
#include <linux/mcp.h>

#define OFF(type, field) offsetof(struct type, field)

Test(abi, mcp_version_layout)
{
	cr_expect_eq(sizeof(struct mcp_version), 88);
	cr_expect_eq(sizeof(struct mcp_version), MCP_VERSION_SIZE_VER0);
	cr_expect_eq(_Alignof(struct mcp_version), 8);
	cr_expect_eq(OFF(mcp_version, size), 0);
	cr_expect_eq(OFF(mcp_version, flags), 4);
	cr_expect_eq(OFF(mcp_version, abi_major), 8);
	cr_expect_eq(OFF(mcp_version, abi_minor), 12);
	cr_expect_eq(OFF(mcp_version, features), 16);
	cr_expect_eq(OFF(mcp_version, module_version), 24);
	cr_expect_eq(sizeof(((struct mcp_version *)0)->module_version), 64);
}

Test(abi, mcp_node_info_layout)
{
	cr_expect_eq(sizeof(struct mcp_node_info), 24);
	cr_expect_eq(sizeof(struct mcp_node_info), MCP_NODE_INFO_SIZE_VER0);
	cr_expect_eq(_Alignof(struct mcp_node_info), 8);
	cr_expect_eq(OFF(mcp_node_info, node_id), 0);
	cr_expect_eq(OFF(mcp_node_info, nr_cpus), 4);
	cr_expect_eq(OFF(mcp_node_info, mem_total_bytes), 8);
	cr_expect_eq(OFF(mcp_node_info, mem_free_bytes), 16);
}

Test(abi, mcp_topology_layout)
{
	cr_expect_eq(sizeof(struct mcp_topology), 64);
	cr_expect_eq(sizeof(struct mcp_topology), MCP_TOPOLOGY_SIZE_VER0);
	cr_expect_eq(_Alignof(struct mcp_topology), 8);
	cr_expect_eq(OFF(mcp_topology, size), 0);
	cr_expect_eq(OFF(mcp_topology, flags), 4);
	cr_expect_eq(OFF(mcp_topology, nodes_cap), 8);
	cr_expect_eq(OFF(mcp_topology, cpumask_words), 12);
	cr_expect_eq(OFF(mcp_topology, nodes_ptr), 16);
	cr_expect_eq(OFF(mcp_topology, cpumasks_ptr), 24);
	cr_expect_eq(OFF(mcp_topology, distances_ptr), 32);
	cr_expect_eq(OFF(mcp_topology, nr_nodes), 40);
	cr_expect_eq(OFF(mcp_topology, nr_cpu_words), 44);
	cr_expect_eq(OFF(mcp_topology, nr_cpus_online), 48);
	cr_expect_eq(OFF(mcp_topology, nr_cpu_ids), 52);
	cr_expect_eq(OFF(mcp_topology, node_info_size), 56);
	cr_expect_eq(OFF(mcp_topology, reserved), 60);
}

Test(abi, ioctl_get_version)
{
	cr_expect_eq(_IOC_TYPE(MCP_IOC_GET_VERSION), 0xE6);
	cr_expect_eq(_IOC_NR(MCP_IOC_GET_VERSION), 0x00);
	cr_expect_eq(_IOC_DIR(MCP_IOC_GET_VERSION), _IOC_READ | _IOC_WRITE);
	cr_expect_eq(_IOC_SIZE(MCP_IOC_GET_VERSION), 88);
	cr_expect_eq(MCP_IOC_GET_VERSION, 0xC058E600u);
}

Test(abi, ioctl_get_topology)
{
	cr_expect_eq(_IOC_TYPE(MCP_IOC_GET_TOPOLOGY), 0xE6);
	cr_expect_eq(_IOC_NR(MCP_IOC_GET_TOPOLOGY), 0x01);
	cr_expect_eq(_IOC_DIR(MCP_IOC_GET_TOPOLOGY), _IOC_READ | _IOC_WRITE);
	cr_expect_eq(_IOC_SIZE(MCP_IOC_GET_TOPOLOGY), 64);
	cr_expect_eq(MCP_IOC_GET_TOPOLOGY, 0xC040E601u);
}

Test(abi, constants)
{
	cr_expect_eq(MCP_IOC_MAGIC, 0xE6);
	cr_expect_eq(MCP_ABI_MAJOR, 1);
	cr_expect_eq(MCP_ABI_MINOR, 0);
	cr_expect_eq(MCP_FEAT_VERSION, 1ULL);
	cr_expect_eq(MCP_FEAT_TOPOLOGY, 2ULL);
	cr_expect_eq(MCP_MODULE_VERSION_LEN, 64);
	cr_expect_eq(MCP_ARG_SIZE_MAX, 4096);
	cr_expect_str_eq(MCP_DEVICE_NAME, "mcp");
}
