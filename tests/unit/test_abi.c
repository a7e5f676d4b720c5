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

Test(abi, mcp_dev_bar_layout)
{
	cr_expect_eq(sizeof(struct mcp_dev_bar), 24);
	cr_expect_eq(_Alignof(struct mcp_dev_bar), 8);
	cr_expect_eq(OFF(mcp_dev_bar, start), 0);
	cr_expect_eq(OFF(mcp_dev_bar, len), 8);
	cr_expect_eq(OFF(mcp_dev_bar, flags), 16);
	cr_expect_eq(OFF(mcp_dev_bar, reserved), 20);
}

Test(abi, mcp_dev_list_layout)
{
	cr_expect_eq(sizeof(struct mcp_dev_list), 24);
	cr_expect_eq(sizeof(struct mcp_dev_list), MCP_DEV_LIST_SIZE_VER0);
	cr_expect_eq(_Alignof(struct mcp_dev_list), 8);
	cr_expect_eq(OFF(mcp_dev_list, size), 0);
	cr_expect_eq(OFF(mcp_dev_list, flags), 4);
	cr_expect_eq(OFF(mcp_dev_list, cap), 8);
	cr_expect_eq(OFF(mcp_dev_list, count), 12);
	cr_expect_eq(OFF(mcp_dev_list, indices_ptr), 16);
}

Test(abi, mcp_dev_info_layout)
{
	cr_expect_eq(sizeof(struct mcp_dev_info), 248);
	cr_expect_eq(sizeof(struct mcp_dev_info), MCP_DEV_INFO_SIZE_VER0);
	cr_expect_eq(_Alignof(struct mcp_dev_info), 8);
	cr_expect_eq(OFF(mcp_dev_info, size), 0);
	cr_expect_eq(OFF(mcp_dev_info, flags), 4);
	cr_expect_eq(OFF(mcp_dev_info, index), 8);
	cr_expect_eq(OFF(mcp_dev_info, numa_node), 12);
	cr_expect_eq(OFF(mcp_dev_info, pci_domain), 16);
	cr_expect_eq(OFF(mcp_dev_info, pci_bus), 20);
	cr_expect_eq(OFF(mcp_dev_info, pci_slot), 21);
	cr_expect_eq(OFF(mcp_dev_info, pci_func), 22);
	cr_expect_eq(OFF(mcp_dev_info, revision), 23);
	cr_expect_eq(OFF(mcp_dev_info, vendor), 24);
	cr_expect_eq(OFF(mcp_dev_info, device), 26);
	cr_expect_eq(OFF(mcp_dev_info, subsystem_vendor), 28);
	cr_expect_eq(OFF(mcp_dev_info, subsystem_device), 30);
	cr_expect_eq(OFF(mcp_dev_info, class_code), 32);
	cr_expect_eq(OFF(mcp_dev_info, dev_flags), 36);
	cr_expect_eq(OFF(mcp_dev_info, backend), 40);
	cr_expect_eq(sizeof(((struct mcp_dev_info *)0)->backend), 16);
	cr_expect_eq(OFF(mcp_dev_info, irq_type), 56);
	cr_expect_eq(OFF(mcp_dev_info, irq_count), 60);
	cr_expect_eq(OFF(mcp_dev_info, dma_mask), 64);
	cr_expect_eq(OFF(mcp_dev_info, link_flags), 72);
	cr_expect_eq(OFF(mcp_dev_info, link_speed), 76);
	cr_expect_eq(OFF(mcp_dev_info, link_speed_cap), 80);
	cr_expect_eq(OFF(mcp_dev_info, link_width), 84);
	cr_expect_eq(OFF(mcp_dev_info, link_width_cap), 86);
	cr_expect_eq(OFF(mcp_dev_info, wc_test), 88);
	cr_expect_eq(OFF(mcp_dev_info, open_count), 92);
	cr_expect_eq(OFF(mcp_dev_info, reserved), 96);
	cr_expect_eq(OFF(mcp_dev_info, bars), 104);
	cr_expect_eq(sizeof(((struct mcp_dev_info *)0)->bars), 6 * 24);
}

Test(abi, mcp_dev_open_layout)
{
	cr_expect_eq(sizeof(struct mcp_dev_open), 16);
	cr_expect_eq(sizeof(struct mcp_dev_open), MCP_DEV_OPEN_SIZE_VER0);
	cr_expect_eq(_Alignof(struct mcp_dev_open), 4);
	cr_expect_eq(OFF(mcp_dev_open, size), 0);
	cr_expect_eq(OFF(mcp_dev_open, flags), 4);
	cr_expect_eq(OFF(mcp_dev_open, index), 8);
	cr_expect_eq(OFF(mcp_dev_open, fd), 12);
}

Test(abi, mcp_bar_info_layout)
{
	cr_expect_eq(sizeof(struct mcp_bar_info), 48);
	cr_expect_eq(sizeof(struct mcp_bar_info), MCP_BAR_INFO_SIZE_VER0);
	cr_expect_eq(_Alignof(struct mcp_bar_info), 8);
	cr_expect_eq(OFF(mcp_bar_info, size), 0);
	cr_expect_eq(OFF(mcp_bar_info, flags), 4);
	cr_expect_eq(OFF(mcp_bar_info, bar), 8);
	cr_expect_eq(OFF(mcp_bar_info, bar_flags), 12);
	cr_expect_eq(OFF(mcp_bar_info, len), 16);
	cr_expect_eq(OFF(mcp_bar_info, offset), 24);
	cr_expect_eq(OFF(mcp_bar_info, wc_offset), 32);
	cr_expect_eq(OFF(mcp_bar_info, wc_status), 40);
	cr_expect_eq(OFF(mcp_bar_info, reserved), 44);
}

Test(abi, mcp_irq_layout)
{
	cr_expect_eq(sizeof(struct mcp_irq_eventfd), 16);
	cr_expect_eq(sizeof(struct mcp_irq_eventfd), MCP_IRQ_EVENTFD_SIZE_VER0);
	cr_expect_eq(OFF(mcp_irq_eventfd, size), 0);
	cr_expect_eq(OFF(mcp_irq_eventfd, flags), 4);
	cr_expect_eq(OFF(mcp_irq_eventfd, vector), 8);
	cr_expect_eq(OFF(mcp_irq_eventfd, eventfd), 12);
	cr_expect_eq(sizeof(struct mcp_irq_unmask), 16);
	cr_expect_eq(sizeof(struct mcp_irq_unmask), MCP_IRQ_UNMASK_SIZE_VER0);
	cr_expect_eq(OFF(mcp_irq_unmask, size), 0);
	cr_expect_eq(OFF(mcp_irq_unmask, flags), 4);
	cr_expect_eq(OFF(mcp_irq_unmask, vector), 8);
	cr_expect_eq(OFF(mcp_irq_unmask, reserved), 12);
}

Test(abi, ioctl_devices)
{
	cr_expect_eq(MCP_IOC_DEV_LIST, 0xC018E610u);
	cr_expect_eq(MCP_IOC_DEV_INFO, 0xC0F8E611u);
	cr_expect_eq(MCP_IOC_DEV_OPEN, 0xC010E612u);
	cr_expect_eq(MCP_IOC_BAR_INFO, 0xC030E618u);
	cr_expect_eq(MCP_IOC_IRQ_SET_EVENTFD, 0x4010E619u);
	cr_expect_eq(MCP_IOC_IRQ_UNMASK, 0x4010E61Au);
	cr_expect_eq(_IOC_DIR(MCP_IOC_IRQ_SET_EVENTFD), _IOC_WRITE);
	cr_expect_eq(_IOC_DIR(MCP_IOC_IRQ_UNMASK), _IOC_WRITE);
}

Test(abi, device_constants)
{
	cr_expect_eq(MCP_FEAT_DEVICES, 1ULL << 4);
	cr_expect_eq(MCP_DEV_MAX_BARS, 6);
	cr_expect_eq(MCP_DEV_BACKEND_LEN, 16);
	cr_expect_eq(MCP_BAR_PRESENT, 0x01);
	cr_expect_eq(MCP_BAR_MEM, 0x02);
	cr_expect_eq(MCP_BAR_64BIT, 0x04);
	cr_expect_eq(MCP_BAR_PREFETCH, 0x08);
	cr_expect_eq(MCP_BAR_MAPPABLE, 0x10);
	cr_expect_eq(MCP_BAR_WC_OK, 0x20);
	cr_expect_eq(MCP_IRQ_NONE, 0);
	cr_expect_eq(MCP_IRQ_INTX, 1);
	cr_expect_eq(MCP_IRQ_MSI, 2);
	cr_expect_eq(MCP_IRQ_MSIX, 3);
	cr_expect_eq(MCP_LINK_PCIE, 0x01);
	cr_expect_eq(MCP_LINK_SPEED_DEGRADED, 0x02);
	cr_expect_eq(MCP_LINK_WIDTH_DEGRADED, 0x04);
	cr_expect_eq(MCP_WC_UNTESTED, 0);
	cr_expect_eq(MCP_WC_UNSUPPORTED, 1);
	cr_expect_eq(MCP_WC_NOT_COMBINING, 2);
	cr_expect_eq(MCP_WC_COMBINING, 3);
	cr_expect_eq(MCP_WC_NOT_RUN, 4);
	cr_expect_eq(MCP_DEV_GENERIC, 0x01);
	cr_expect_eq(MCP_WC_ALLOWED, 0);
	cr_expect_eq(MCP_WC_NOT_PREFETCHABLE, 1);
	cr_expect_eq(MCP_WC_NO_PLATFORM, 2);
	cr_expect_eq(MCP_WC_NOT_MAPPABLE, 3);
}

Test(abi, mcp_bo_layout)
{
	cr_expect_eq(sizeof(struct mcp_bo_create), MCP_BO_CREATE_SIZE_VER0);
	cr_expect_eq(sizeof(struct mcp_bo_create), 32);
	cr_expect_eq(OFF(mcp_bo_create, length), 8);
	cr_expect_eq(OFF(mcp_bo_create, node), 16);
	cr_expect_eq(OFF(mcp_bo_create, handle), 20);
	cr_expect_eq(OFF(mcp_bo_create, reserved), 24);
	cr_expect_eq(sizeof(struct mcp_bo_userptr), MCP_BO_USERPTR_SIZE_VER0);
	cr_expect_eq(sizeof(struct mcp_bo_userptr), 32);
	cr_expect_eq(OFF(mcp_bo_userptr, addr), 8);
	cr_expect_eq(OFF(mcp_bo_userptr, length), 16);
	cr_expect_eq(OFF(mcp_bo_userptr, handle), 24);
	cr_expect_eq(sizeof(struct mcp_bo_info), MCP_BO_INFO_SIZE_VER0);
	cr_expect_eq(sizeof(struct mcp_bo_info), 48);
	cr_expect_eq(OFF(mcp_bo_info, handle), 8);
	cr_expect_eq(OFF(mcp_bo_info, kind), 12);
	cr_expect_eq(OFF(mcp_bo_info, length), 16);
	cr_expect_eq(OFF(mcp_bo_info, bo_flags), 24);
	cr_expect_eq(OFF(mcp_bo_info, node), 28);
	cr_expect_eq(OFF(mcp_bo_info, mmap_offset), 32);
	cr_expect_eq(OFF(mcp_bo_info, jobs), 40);
	cr_expect_eq(sizeof(struct mcp_bo_export), MCP_BO_EXPORT_SIZE_VER0);
	cr_expect_eq(OFF(mcp_bo_export, handle), 8);
	cr_expect_eq(OFF(mcp_bo_export, fd), 12);
	cr_expect_eq(sizeof(struct mcp_bo_import), MCP_BO_IMPORT_SIZE_VER0);
	cr_expect_eq(OFF(mcp_bo_import, fd), 8);
	cr_expect_eq(OFF(mcp_bo_import, handle), 12);
	cr_expect_eq(OFF(mcp_bo_import, length), 16);
	cr_expect_eq(sizeof(struct mcp_bo_destroy), MCP_BO_DESTROY_SIZE_VER0);
	cr_expect_eq(OFF(mcp_bo_destroy, handle), 8);
}

Test(abi, mcp_dma_layout)
{
	cr_expect_eq(sizeof(struct mcp_engine_info), MCP_ENGINE_INFO_SIZE_VER0);
	cr_expect_eq(sizeof(struct mcp_engine_info), 80);
	cr_expect_eq(OFF(mcp_engine_info, engine), 8);
	cr_expect_eq(OFF(mcp_engine_info, node), 12);
	cr_expect_eq(OFF(mcp_engine_info, name), 16);
	cr_expect_eq(OFF(mcp_engine_info, max_chunk), 32);
	cr_expect_eq(OFF(mcp_engine_info, inflight), 36);
	cr_expect_eq(OFF(mcp_engine_info, submitted), 40);
	cr_expect_eq(OFF(mcp_engine_info, timed_out), 64);
	cr_expect_eq(OFF(mcp_engine_info, wc_depth), 72);
	cr_expect_eq(OFF(mcp_engine_info, wc_timeout_us), 76);
	cr_expect_eq(sizeof(struct mcp_dma_submit), MCP_DMA_SUBMIT_SIZE_VER0);
	cr_expect_eq(sizeof(struct mcp_dma_submit), 72);
	cr_expect_eq(OFF(mcp_dma_submit, engine), 8);
	cr_expect_eq(OFF(mcp_dma_submit, in_fence), 12);
	cr_expect_eq(OFF(mcp_dma_submit, src_handle), 16);
	cr_expect_eq(OFF(mcp_dma_submit, dst_handle), 20);
	cr_expect_eq(OFF(mcp_dma_submit, src_offset), 24);
	cr_expect_eq(OFF(mcp_dma_submit, dst_offset), 32);
	cr_expect_eq(OFF(mcp_dma_submit, length), 40);
	cr_expect_eq(OFF(mcp_dma_submit, deadline_ns), 48);
	cr_expect_eq(OFF(mcp_dma_submit, out_fence), 56);
	cr_expect_eq(OFF(mcp_dma_submit, reserved), 60);
	cr_expect_eq(OFF(mcp_dma_submit, seqno), 64);
}

Test(abi, ioctl_buffers_dma)
{
	cr_expect_eq(MCP_IOC_BO_CREATE, 0xC020E620u);
	cr_expect_eq(MCP_IOC_BO_USERPTR, 0xC020E621u);
	cr_expect_eq(MCP_IOC_BO_INFO, 0xC030E622u);
	cr_expect_eq(MCP_IOC_BO_EXPORT, 0xC010E623u);
	cr_expect_eq(MCP_IOC_BO_IMPORT, 0xC018E624u);
	cr_expect_eq(MCP_IOC_BO_DESTROY, 0x4010E625u);
	cr_expect_eq(MCP_IOC_ENGINE_INFO, 0xC050E628u);
	cr_expect_eq(MCP_IOC_DMA_SUBMIT, 0xC048E629u);
}

Test(abi, buffer_dma_constants)
{
	cr_expect_eq(MCP_FEAT_BUFFERS, 1ULL << 5);
	cr_expect_eq(MCP_FEAT_DMA, 1ULL << 6);
	cr_expect_eq(MCP_BO_COHERENT, 0x1);
	cr_expect_eq(MCP_BO_HUGEPAGE, 0x2);
	cr_expect_eq(MCP_BO_NODE, 0x4);
	cr_expect_eq(MCP_BO_USERPTR_WRITE, 0x1);
	cr_expect_eq(MCP_BO_MAX_LENGTH, 1ULL << 32);
	cr_expect_eq(MCP_BO_NO_MMAP, ~0ULL);
	cr_expect_eq(MCP_BO_KIND_KERNEL, 0);
	cr_expect_eq(MCP_BO_KIND_USERPTR, 1);
	cr_expect_eq(MCP_BO_KIND_IMPORT, 2);
	cr_expect_eq(MCP_ENGINE_CPU, 0);
	cr_expect_eq(MCP_ENGINE_DEVICE, 1);
	cr_expect_eq(MCP_ENGINE_NAME_LEN, 16);
	cr_expect_eq(MCP_DMA_ASYNC, 0x1);
	cr_expect_eq(MCP_DMA_IN_FENCE, 0x2);
}

/* The binary graph format: a file made once is read by every later module. */
Test(abi, graph_format_layout)
{
	cr_expect_eq(MCP_GRAPH_MAGIC, 0x4850474dU);
	cr_expect_eq(MCP_GRAPH_VERSION, 1);
	cr_expect_eq(sizeof(struct mcp_graph_header), 48);
	cr_expect_eq(OFF(mcp_graph_header, n_buffers), 12);
	cr_expect_eq(OFF(mcp_graph_header, total_len), 40);
	cr_expect_eq(sizeof(struct mcp_graph_buffer), 32);
	cr_expect_eq(OFF(mcp_graph_buffer, init_offset), 20);
	cr_expect_eq(sizeof(struct mcp_graph_tensor), 48);
	cr_expect_eq(OFF(mcp_graph_tensor, offset), 8);
	cr_expect_eq(OFF(mcp_graph_tensor, dims), 16);
	cr_expect_eq(OFF(mcp_graph_tensor, name_offset), 40);
	cr_expect_eq(sizeof(struct mcp_graph_node), 48);
	cr_expect_eq(OFF(mcp_graph_node, inputs), 8);
	cr_expect_eq(OFF(mcp_graph_node, outputs), 24);
	cr_expect_eq(OFF(mcp_graph_node, param_offset), 32);
	cr_expect_eq(sizeof(struct mcp_graph_quant), 8);
	cr_expect_eq(sizeof(struct mcp_graph_matmul), 8);
	cr_expect_eq(sizeof(struct mcp_graph_norm), 8);
	cr_expect_eq(sizeof(struct mcp_graph_matmul_i8), 16);
	cr_expect_eq(MCP_GRAPH_MAX_RANK, 6);
	cr_expect_eq(MCP_GRAPH_MAX_INPUTS, 4);
	cr_expect_eq(MCP_GRAPH_MAX_OUTPUTS, 2);
	cr_expect_eq(MCP_GRAPH_MAX_PARAM, 256);
	cr_expect_eq(MCP_GRAPH_ALIGN, 64);
	cr_expect_eq(MCP_OP_NOP, 1);
	cr_expect_eq(MCP_OP_DEQUANT_I8, 5);
	cr_expect_eq(MCP_OP_WNOP, 64);
	cr_expect_eq(MCP_OP_MATMUL_I8, 71);
	cr_expect_eq(MCP_GRAPH_ERR_CYCLE, 14);
}

/* Format version 2 (compact): its version number, reason and record sizes. */
Test(abi, graph_compact_format)
{
	cr_expect_eq(MCP_GRAPH_VERSION_COMPACT, 2);
	cr_expect_eq(MCP_GRAPH_ERR_ENCODING, 15);
	cr_expect_eq(MCP_FEAT_GRAPH_COMPACT, 1ULL << 9);
	cr_expect_eq(MCP_GRAPH_COMPACT_MIN_BUFFER, 6);
	cr_expect_eq(MCP_GRAPH_COMPACT_MIN_TENSOR, 8);
	cr_expect_eq(MCP_GRAPH_COMPACT_MIN_NODE, 9);
	/* 10 + 5 x 5; 5 + 4 x 2 + 10 + 6 x 5 + 2 x 5; 3 + 4 x 2 + 6 x 5 + 4 x 5 */
	cr_expect_eq(MCP_GRAPH_COMPACT_MAX_BUFFER, 35);
	cr_expect_eq(MCP_GRAPH_COMPACT_MAX_TENSOR, 63);
	cr_expect_eq(MCP_GRAPH_COMPACT_MAX_NODE, 61);
}

Test(abi, graph_ioctl_layouts)
{
	cr_expect_eq(sizeof(struct mcp_graph_create), MCP_GRAPH_CREATE_SIZE_VER0);
	cr_expect_eq(sizeof(struct mcp_graph_create), 56);
	cr_expect_eq(OFF(mcp_graph_create, graph), 8);
	cr_expect_eq(OFF(mcp_graph_create, handles), 24);
	cr_expect_eq(OFF(mcp_graph_create, handle), 36);
	cr_expect_eq(OFF(mcp_graph_create, error_index), 48);
	cr_expect_eq(sizeof(struct mcp_graph_binding), 8);
	cr_expect_eq(sizeof(struct mcp_graph_exec), MCP_GRAPH_EXEC_SIZE_VER0);
	cr_expect_eq(sizeof(struct mcp_graph_exec), 48);
	cr_expect_eq(OFF(mcp_graph_exec, bindings), 16);
	cr_expect_eq(OFF(mcp_graph_exec, timeout_ms), 28);
	cr_expect_eq(OFF(mcp_graph_exec, out_fence), 32);
	cr_expect_eq(OFF(mcp_graph_exec, exec_id), 40);
	cr_expect_eq(sizeof(struct mcp_graph_node_status), 32);
	cr_expect_eq(sizeof(struct mcp_graph_status), MCP_GRAPH_STATUS_SIZE_VER0);
	cr_expect_eq(sizeof(struct mcp_graph_status), 64);
	cr_expect_eq(OFF(mcp_graph_status, nodes), 16);
	cr_expect_eq(OFF(mcp_graph_status, state), 28);
	cr_expect_eq(OFF(mcp_graph_status, failed_node), 36);
	cr_expect_eq(OFF(mcp_graph_status, submit_ns), 48);
	cr_expect_eq(OFF(mcp_graph_status, end_ns), 56);
	cr_expect_eq(sizeof(struct mcp_graph_destroy), MCP_GRAPH_DESTROY_SIZE_VER0);
	cr_expect_eq(sizeof(struct mcp_worker_register), MCP_WORKER_REGISTER_SIZE_VER0);
	cr_expect_eq(sizeof(struct mcp_worker_tensor), 40);
	cr_expect_eq(sizeof(struct mcp_worker_job), 536);
	cr_expect_eq(OFF(mcp_worker_job, inputs), 40);
	cr_expect_eq(OFF(mcp_worker_job, outputs), 200);
	cr_expect_eq(OFF(mcp_worker_job, param), 280);
	cr_expect_eq(sizeof(struct mcp_job_done), MCP_JOB_DONE_SIZE_VER0);
	cr_expect_eq(OFF(mcp_job_done, job_id), 8);
	cr_expect_eq(OFF(mcp_job_done, result), 16);
	cr_expect_eq(MCP_FEAT_GRAPHS, 1ULL << 7);
}

Test(abi, ioctl_graphs)
{
	cr_expect_eq(MCP_IOC_GRAPH_CREATE, 0xC038E630u);
	cr_expect_eq(MCP_IOC_GRAPH_EXEC, 0xC030E631u);
	cr_expect_eq(MCP_IOC_GRAPH_STATUS, 0xC040E632u);
	cr_expect_eq(MCP_IOC_GRAPH_DESTROY, 0x4010E633u);
	cr_expect_eq(MCP_IOC_WORKER_REGISTER, 0xC010E634u);
	cr_expect_eq(MCP_IOC_JOB_DONE, 0x4018E638u);
}

Test(abi, job_batch)
{
	cr_expect_eq(OFF(mcp_worker_job, flags), 32);
	cr_expect_eq(OFF(mcp_worker_job, reserved), 36);
	cr_expect_eq(MCP_WORKER_JOB_CHAINED, 1u);
	cr_expect_eq(MCP_WORKER_READ_MAX, 64);
	cr_expect_eq(sizeof(struct mcp_job_report), 32);
	cr_expect_eq(OFF(mcp_job_report, result), 8);
	cr_expect_eq(OFF(mcp_job_report, status), 12);
	cr_expect_eq(OFF(mcp_job_report, start_ns), 16);
	cr_expect_eq(OFF(mcp_job_report, end_ns), 24);
	cr_expect_eq(sizeof(struct mcp_jobs_done), MCP_JOBS_DONE_SIZE_VER0);
	cr_expect_eq(OFF(mcp_jobs_done, reports), 8);
	cr_expect_eq(OFF(mcp_jobs_done, n_reports), 16);
	cr_expect_eq(MCP_JOBS_DONE_MAX, 1024);
	cr_expect_eq(MCP_IOC_JOBS_DONE, 0x4018E639u);
	cr_expect_eq(MCP_FEAT_JOB_BATCH, 1ULL << 8);
}

Test(abi, worker_ops)
{
	cr_expect_eq(MCP_FEAT_WORKER_OPS, 1ULL << 11);
	/* The worker range starts at WNOP; its ops keep their codes. */
	cr_expect_eq(MCP_OP_WNOP, 64);
	cr_expect_eq(MCP_OP_MATMUL_I8, 71);
	cr_expect_eq(MCP_OP_DEQUANT_I8, 5);
}

Test(abi, job_chains)
{
	cr_expect_eq(MCP_FEAT_JOB_CHAINS, 1ULL << 10);
	cr_expect_eq(MCP_WORKER_CHAINS, 1u);
	cr_expect_eq(MCP_WORKER_CHAIN_MAX, 1024);
	cr_expect_eq(MCP_GRAPH_MAX_BUFFERS, 64);
	cr_expect_eq(OFF(mcp_worker_chain, exec_id), 8);
	cr_expect_eq(OFF(mcp_worker_chain, graph), 16);
	cr_expect_eq(OFF(mcp_worker_chain, n_nodes), 20);
	cr_expect_eq(OFF(mcp_worker_chain, n_buffers), 24);
	cr_expect_eq(OFF(mcp_worker_chain, flags), 28);
	cr_expect_eq(OFF(mcp_worker_chain, handles), 32);
	cr_expect_eq(OFF(mcp_worker_chain, nodes), 32 + 4 * 64);
	cr_expect_eq(sizeof(struct mcp_worker_chain), 32 + 4 * 64 + 4 * 1024);
	cr_expect_eq(_Alignof(struct mcp_worker_chain), 8);
	cr_expect_eq(sizeof(struct mcp_chain_done), MCP_CHAIN_DONE_SIZE_VER0);
	cr_expect_eq(sizeof(struct mcp_chain_done), 40);
	cr_expect_eq(OFF(mcp_chain_done, job_id), 8);
	cr_expect_eq(OFF(mcp_chain_done, start_ns), 16);
	cr_expect_eq(OFF(mcp_chain_done, ends), 24);
	cr_expect_eq(OFF(mcp_chain_done, n_ran), 32);
	cr_expect_eq(OFF(mcp_chain_done, result), 36);
	cr_expect_eq(_IOC_NR(MCP_IOC_CHAIN_DONE), 0x3a);
	cr_expect_eq(_IOC_DIR(MCP_IOC_CHAIN_DONE), _IOC_WRITE);
	cr_expect_eq(_IOC_SIZE(MCP_IOC_CHAIN_DONE), 40);
	cr_expect_eq(MCP_IOC_CHAIN_DONE, 0x4028E63Au);
}

Test(abi, place_adaptive)
{
	cr_expect_eq(sizeof(struct mcp_place), MCP_PLACE_SIZE_VER0);
	cr_expect_eq(OFF(mcp_place, histogram_ptr), 16);
	cr_expect_eq(OFF(mcp_place, mask_ptr), 32);
	cr_expect_eq(OFF(mcp_place, idle_ptr), 40);
	cr_expect_eq(OFF(mcp_place, nr_node_ids), 76);
	/* The low half of what was a __u64 reserved field. */
	cr_expect_eq(OFF(mcp_place, runq_threshold_us), 80);
	cr_expect_eq(OFF(mcp_place, reserved), 84);
	cr_expect_eq(MCP_PLACE_ADAPTIVE, 1u << 5);
	cr_expect_eq(MCP_PLACE_FLAGS_ALL, 0x3fu);
	cr_expect_eq(MCP_PLACE_REASON_RUNQ_LATENCY, 6);
	cr_expect_eq(MCP_FEAT_PLACE_ADAPTIVE, 1ULL << 12);
}

Test(abi, tune)
{
	cr_expect_eq(MCP_FEAT_TUNE, 1ULL << 13);
	cr_expect_eq(sizeof(struct mcp_tune_knob_info), MCP_TUNE_KNOB_INFO_SIZE_VER0);
	cr_expect_eq(OFF(mcp_tune_knob_info, min), 16);
	cr_expect_eq(OFF(mcp_tune_knob_info, boot), 40);
	cr_expect_eq(OFF(mcp_tune_knob_info, state), 48);
	cr_expect_eq(OFF(mcp_tune_knob_info, name), 56);
	cr_expect_eq(OFF(mcp_tune_knob_info, reason), 88);
	cr_expect_eq(sizeof(struct mcp_tune_list), MCP_TUNE_LIST_SIZE_VER0);
	cr_expect_eq(OFF(mcp_tune_list, entry_size), 20);
	cr_expect_eq(OFF(mcp_tune_list, entries_ptr), 24);
	cr_expect_eq(sizeof(struct mcp_tune_session), MCP_TUNE_SESSION_SIZE_VER0);
	cr_expect_eq(OFF(mcp_tune_session, fd), 8);
	cr_expect_eq(sizeof(struct mcp_tune_value), MCP_TUNE_VALUE_SIZE_VER0);
	cr_expect_eq(OFF(mcp_tune_value, value), 16);
	cr_expect_eq(OFF(mcp_tune_value, readback), 24);
	cr_expect_eq(OFF(mcp_tune_value, holder_pid), 32);
	cr_expect_eq(OFF(mcp_tune_value, err_cpu), 36);
	cr_expect_eq(sizeof(struct mcp_tune_commit), MCP_TUNE_COMMIT_SIZE_VER0);
	cr_expect_eq(MCP_TUNE_ALL_CPUS, 1u);
	cr_expect_eq(MCP_TUNE_ALL_KNOBS, 2u);
	cr_expect_eq(MCP_TUNE_SCOPE_SYSTEM, 3);
	cr_expect_eq(MCP_TUNE_READ_ONLY, 2);
	cr_expect_eq(MCP_IOC_TUNE_LIST, 0xC020E640u);
	cr_expect_eq(MCP_IOC_TUNE_SESSION, 0xC010E641u);
	cr_expect_eq(MCP_IOC_TUNE_SET, 0xC028E642u);
	cr_expect_eq(MCP_IOC_TUNE_GET, 0xC028E643u);
	cr_expect_eq(MCP_IOC_TUNE_COMMIT, 0xC010E644u);
	cr_expect_eq(MCP_IOC_TUNE_RESET, 0xC028E645u);
}
