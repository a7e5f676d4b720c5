// SPDX-License-Identifier: GPL-2.0-only
/*
 * libmcp's accelerator API (the C API, which wraps the C++ one) against
 * edu inside the test VM: listing and finding, BAR mappings and their
 * bounds, the write-combining refusal sentence, interrupts through
 * mcp_irq_wait(), one handle per vector, and the sentences after the
 * device was unbound.
 */
#define _GNU_SOURCE
#include <signal.h>

/* The selftest helpers and libmcp both have an mcp_open() and an
 * mcp_bar_map(): the helpers' are renamed here.
 */
#define mcp_open mcp_selftest_open
#define mcp_bar_map mcp_selftest_bar_map
#include "mcp_dev.h"
#undef mcp_open
#undef mcp_bar_map

#include <mcp/mcp.h>

FIXTURE(libmcp_dev) {
	char addr[MCP_PCI_ADDR_LEN];
	struct mcp_device *dev;
	struct mcp_accel *accel;
	uint32_t index;
};

FIXTURE_SETUP(libmcp_dev)
{
	ASSERT_EQ(0, mcp_ensure_loaded());
	ASSERT_EQ(0, mcp_pci_find(EDU_VENDOR, EDU_DEVICE, self->addr));
	if (!mcp_pci_bound(self->addr))
		ASSERT_EQ(0, mcp_pci_bind(self->addr));
	ASSERT_EQ(0, mcp_open(NULL, &self->dev)) TH_LOG("%s", mcp_strerror_last());
	ASSERT_EQ(0, mcp_accel_find(self->dev, self->addr, &self->index))
		TH_LOG("%s", mcp_strerror_last());
	ASSERT_EQ(0, mcp_accel_open(self->dev, self->index, &self->accel))
		TH_LOG("%s", mcp_strerror_last());
}

FIXTURE_TEARDOWN(libmcp_dev)
{
	mcp_accel_close(self->accel);
	mcp_close(self->dev);
	if (!mcp_pci_bound(self->addr))
		mcp_pci_bind(self->addr);
}

TEST_F(libmcp_dev, list_and_info_agree_with_sysfs)
{
	struct mcp_accel_info info = { .size = sizeof(info) };
	uint32_t idx[16];
	size_t count = 0, i;
	int found = 0;

	ASSERT_EQ(-ENOSPC, mcp_accel_list(self->dev, NULL, 0, &count));
	ASSERT_LT(0, count);
	ASSERT_EQ(0, mcp_accel_list(self->dev, idx, 16, &count));
	for (i = 0; i < count; i++)
		found |= idx[i] == self->index;
	EXPECT_TRUE(found);
	ASSERT_EQ(0, mcp_accel_query(self->dev, self->index, &info));
	EXPECT_STREQ(self->addr, info.address);
	EXPECT_EQ(EDU_VENDOR, info.vendor);
	EXPECT_EQ(EDU_DEVICE, info.device);
	EXPECT_EQ(mcp_pci_attr(self->addr, "numa_node"), info.numa_node);
	EXPECT_EQ(mcp_pci_attr(self->addr, "class"), info.class_code);
	EXPECT_STREQ("edu", info.backend);
	EXPECT_EQ(MCP_ACCEL_IRQ_MSI, info.irq_type);
	EXPECT_EQ(EDU_BAR_LEN, info.bars[0].len);
	EXPECT_TRUE(info.bars[0].flags & MCP_ACCEL_BAR_MAPPABLE);
	EXPECT_EQ(-ENODEV, mcp_accel_query(self->dev, 4095, &info));
	EXPECT_NE(NULL, strstr(mcp_strerror_last(), "no device with index 4095"));
	EXPECT_EQ(-ENODEV, mcp_accel_find(self->dev, "00ff:1f:1f.7", &idx[0]));
	EXPECT_EQ(-EINVAL, mcp_accel_find(self->dev, "edu", &idx[0]));
}

TEST_F(libmcp_dev, map_read_write_and_bounds)
{
	struct mcp_bar *bar = NULL;
	uint32_t v = 0;

	ASSERT_EQ(0, mcp_bar_map(self->accel, 0, 0, 0, 0, &bar)) TH_LOG("%s", mcp_strerror_last());
	EXPECT_EQ(EDU_BAR_LEN, mcp_bar_size(bar));
	ASSERT_EQ(0, mcp_bar_read32(bar, EDU_REG_ID, &v));
	EXPECT_EQ(EDU_ID, v);
	ASSERT_EQ(0, mcp_bar_write32(bar, EDU_REG_LIVENESS, 0x0f0f0f0f));
	ASSERT_EQ(0, mcp_bar_read32(bar, EDU_REG_LIVENESS, &v));
	EXPECT_EQ(0xf0f0f0f0, v);
	EXPECT_EQ(-EINVAL, mcp_bar_read32(bar, EDU_BAR_LEN, &v));
	EXPECT_EQ(-EINVAL, mcp_bar_read32(bar, 2, &v));
	EXPECT_NE(NULL, strstr(mcp_strerror_last(), "not aligned")) TH_LOG("%s", mcp_strerror_last());
	mcp_bar_unmap(bar);

	/* Part of the BAR, from a page-aligned offset. */
	ASSERT_EQ(0, mcp_bar_map(self->accel, 0, 0, 0, 4096, &bar));
	EXPECT_EQ(4096, mcp_bar_size(bar));
	EXPECT_EQ(-EINVAL, mcp_bar_read32(bar, 4096, &v));
	mcp_bar_unmap(bar);
	bar = NULL;
	EXPECT_EQ(-EINVAL, mcp_bar_map(self->accel, 0, 0, 4096, EDU_BAR_LEN, &bar));
	EXPECT_NE(NULL, strstr(mcp_strerror_last(), "goes past its end")) TH_LOG("%s", mcp_strerror_last());
	EXPECT_EQ(-EINVAL, mcp_bar_map(self->accel, 0, 0, 100, 0, &bar));
	EXPECT_EQ(-EINVAL, mcp_bar_map(self->accel, 1, 0, 0, 0, &bar));
	EXPECT_EQ(-EINVAL, mcp_bar_map(self->accel, 0, 0x80, 0, 0, &bar));
	EXPECT_EQ(NULL, bar);
}

TEST_F(libmcp_dev, write_combining_refused_with_the_reason)
{
	struct mcp_bar *bar = NULL;
	char want[128];

	EXPECT_EQ(-EINVAL, mcp_bar_map(self->accel, 0, MCP_BAR_MAP_WC, 0, 0, &bar));
	EXPECT_EQ(NULL, bar);
	snprintf(want, sizeof(want), "BAR 0 of %s is not prefetchable and its backend does not "
		 "declare it write-combining safe", self->addr);
	EXPECT_NE(NULL, strstr(mcp_strerror_last(), want)) TH_LOG("%s", mcp_strerror_last());
}

TEST_F(libmcp_dev, factorial_interrupt_through_mcp_irq_wait)
{
	struct mcp_bar *bar = NULL;
	struct mcp_irq *irq = NULL;
	uint64_t count = 0;
	uint32_t v = 0;

	ASSERT_EQ(0, mcp_bar_map(self->accel, 0, 0, 0, 0, &bar));
	ASSERT_EQ(0, mcp_irq_open(self->accel, 0, &irq)) TH_LOG("%s", mcp_strerror_last());
	EXPECT_LE(0, mcp_irq_fd(irq));
	EXPECT_EQ(0, mcp_irq_wait(irq, 0, &count));
	ASSERT_EQ(0, mcp_bar_write32(bar, EDU_REG_STATUS, EDU_STATUS_IRQ_FACT));
	ASSERT_EQ(0, mcp_bar_write32(bar, EDU_REG_FACTORIAL, 6));
	ASSERT_EQ(1, mcp_irq_wait(irq, 20000, &count));
	EXPECT_EQ(1, count);
	ASSERT_EQ(0, mcp_bar_read32(bar, EDU_REG_FACTORIAL, &v));
	EXPECT_EQ(720, v);
	EXPECT_EQ(0, mcp_irq_unmask(irq)); /* a no-op under MSI */
	mcp_bar_write32(bar, EDU_REG_STATUS, 0);
	EXPECT_EQ(-EINVAL, mcp_irq_open(self->accel, 1, &irq));
	mcp_irq_close(irq);
	mcp_bar_unmap(bar);
}

/* Fires edu's factorial interrupt and waits for it on @irq. */
static int edu_fact_irq(struct mcp_bar *bar, struct mcp_irq *irq)
{
	uint64_t count = 0;
	int ret;

	mcp_bar_write32(bar, EDU_REG_STATUS, EDU_STATUS_IRQ_FACT);
	mcp_bar_write32(bar, EDU_REG_FACTORIAL, 5);
	ret = mcp_irq_wait(irq, 20000, &count);
	mcp_bar_write32(bar, EDU_REG_STATUS, 0);
	return ret;
}

/*
 * Two handles of one accel share the device fd's open file, which the
 * kernel takes as the owner: a second on the same vector would replace
 * the first's eventfd, and closing the first would disconnect it.
 */
TEST_F(libmcp_dev, second_irq_on_a_vector_busy_first_keeps_working)
{
	struct mcp_irq *a = NULL, *b = NULL;
	struct mcp_bar *bar = NULL;
	int ret;

	ASSERT_EQ(0, mcp_bar_map(self->accel, 0, 0, 0, 0, &bar));
	ASSERT_EQ(0, mcp_irq_open(self->accel, 0, &a)) TH_LOG("%s", mcp_strerror_last());
	ret = mcp_irq_open(self->accel, 0, &b);
	EXPECT_EQ(-EBUSY, ret);
	if (ret == -EBUSY)
		EXPECT_NE(NULL, strstr(mcp_strerror_last(), "another IrqEvent"))
			TH_LOG("%s", mcp_strerror_last());
	mcp_irq_close(b);
	b = NULL;
	EXPECT_EQ(1, edu_fact_irq(bar, a));
	mcp_irq_close(a);
	/* Free again once the first is closed. */
	ASSERT_EQ(0, mcp_irq_open(self->accel, 0, &b)) TH_LOG("%s", mcp_strerror_last());
	EXPECT_EQ(1, edu_fact_irq(bar, b));
	mcp_irq_close(b);
	mcp_bar_unmap(bar);
}

TEST_F(libmcp_dev, after_unbind_calls_say_the_device_was_removed)
{
	struct mcp_bar *bar = NULL;
	struct mcp_irq *irq = NULL;
	char want[96];

	ASSERT_EQ(0, mcp_pci_unbind(self->addr));
	snprintf(want, sizeof(want), "device %s was removed", self->addr);
	EXPECT_EQ(-ENODEV, mcp_bar_map(self->accel, 0, 0, 0, 0, &bar));
	EXPECT_NE(NULL, strstr(mcp_strerror_last(), want)) TH_LOG("%s", mcp_strerror_last());
	EXPECT_EQ(-ENODEV, mcp_irq_open(self->accel, 0, &irq));
	EXPECT_NE(NULL, strstr(mcp_strerror_last(), want)) TH_LOG("%s", mcp_strerror_last());
	ASSERT_EQ(0, mcp_pci_bind(self->addr));
}

MCP_TEST_MAIN
