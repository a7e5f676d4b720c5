// SPDX-License-Identifier: GPL-2.0-only
/*
 * libmcp's tuning C API (<mcp/tune.h>) against the module: the list,
 * errors with their sentences, and a session's set/get/commit/reset and
 * rollback at mcp_tuner_close().  The writable cases need a CPU whose
 * prefetchers write and read back (-cpu core2duo); elsewhere they skip
 * with the knob's reason.
 */
#define _GNU_SOURCE

/* The selftest helpers and libmcp both have an mcp_open(). */
#define mcp_open mcp_selftest_open
#include "mcp_test.h"
#undef mcp_open

#include <mcp/mcp.h>

#define L2 "prefetch.l2_stream"

FIXTURE(libmcp_tune) {
	struct mcp_device *dev;
	struct mcp_knob l2;
};

static int find_knob(struct mcp_device *dev, unsigned cpu, const char *name,
		     struct mcp_knob *out)
{
	struct mcp_knob k[64];
	size_t n = 0;
	int ret = mcp_tune_list(dev, cpu, k, 64, &n);

	if (ret)
		return ret;
	for (size_t i = 0; i < n; i++)
		if (!strcmp(k[i].name, name)) {
			*out = k[i];
			return 0;
		}
	return -ENOENT;
}

FIXTURE_SETUP(libmcp_tune)
{
	ASSERT_EQ(0, mcp_ensure_loaded());
	ASSERT_EQ(0, mcp_open(NULL, &self->dev)) TH_LOG("%s", mcp_strerror_last());
	ASSERT_EQ(0, find_knob(self->dev, 0, L2, &self->l2)) TH_LOG("%s", mcp_strerror_last());
}

FIXTURE_TEARDOWN(libmcp_tune)
{
	struct mcp_tuner *t;

	if (self->l2.status == MCP_KNOB_SUPPORTED && !mcp_tuner_open(self->dev, &t)) {
		mcp_tuner_reset(t, NULL, -1);
		mcp_tuner_close(t);
	}
	mcp_close(self->dev);
	EXPECT_EQ(0, mcp_counter_settles("tune_sessions", 0));
}

TEST_F(libmcp_tune, list_and_errors)
{
	struct mcp_knob k[64], dma;
	struct mcp_tuner *t;
	size_t n = 0;
	char feat[64];
	uint64_t v;

	snprintf(feat, sizeof(feat), "%s", mcp_feature_name(MCP_FEATURE_TUNE));
	EXPECT_STREQ("tune", feat);
	ASSERT_EQ(-ENOSPC, mcp_tune_list(self->dev, 0, NULL, 0, &n));
	EXPECT_LE(9, n);
	ASSERT_EQ(0, mcp_tune_list(self->dev, 0, k, 64, &n));
	EXPECT_EQ(-EINVAL, mcp_tune_list(self->dev, 1u << 30, k, 64, &n));
	EXPECT_NE(NULL, strstr(mcp_strerror_last(), "does not exist")) TH_LOG("%s", mcp_strerror_last());

	ASSERT_EQ(0, find_knob(self->dev, 0, "dma.wc_depth", &dma));
	EXPECT_EQ(MCP_KNOB_READ_ONLY, dma.status);
	EXPECT_EQ(MCP_KNOB_SCOPE_SYSTEM, dma.scope);
	EXPECT_TRUE(dma.has_value);
	EXPECT_EQ(mcp_read_ll(MCP_SYSFS_DIR "/dma/wc_depth"), (long long)dma.value);

	ASSERT_EQ(0, mcp_tuner_open(self->dev, &t)) TH_LOG("%s", mcp_strerror_last());
	EXPECT_EQ(-ENOENT, mcp_tuner_set(t, "no.such", 0, -1));
	EXPECT_NE(NULL, strstr(mcp_strerror_last(), "the knobs are: prefetch."));
	EXPECT_EQ(-EOPNOTSUPP, mcp_tuner_set(t, "dma.wc_depth", 4, -1));
	EXPECT_NE(NULL, strstr(mcp_strerror_last(), dma.reason)) TH_LOG("%s", mcp_strerror_last());
	EXPECT_EQ(-EINVAL, mcp_tuner_get(t, L2, 0, NULL));
	if (self->l2.status != MCP_KNOB_SUPPORTED) {
		EXPECT_EQ(-EOPNOTSUPP, mcp_tuner_set(t, L2, 0, 0));
		EXPECT_NE(NULL, strstr(mcp_strerror_last(), self->l2.reason));
	} else {
		EXPECT_EQ(-ERANGE, mcp_tuner_set(t, L2, 2, 0));
		EXPECT_NE(NULL, strstr(mcp_strerror_last(), "the range is 0..1"));
		EXPECT_EQ(0, mcp_tuner_get(t, L2, 0, &v));
		EXPECT_EQ(self->l2.value, v);
	}
	mcp_tuner_close(t);
}

TEST_F(libmcp_tune, set_commit_reset_and_rollback)
{
	struct mcp_tuner *t, *t2;
	struct mcp_knob now;
	uint64_t boot = self->l2.value, v;
	unsigned count = 0;
	char want[64];

	if (self->l2.status != MCP_KNOB_SUPPORTED)
		SKIP(return, "%s: %s", L2, self->l2.reason);
	ASSERT_EQ(0, mcp_tuner_open(self->dev, &t));
	ASSERT_EQ(0, mcp_tuner_set(t, L2, !boot, -1)) TH_LOG("%s", mcp_strerror_last());
	ASSERT_EQ(0, mcp_tuner_get(t, L2, 0, &v));
	EXPECT_EQ(!boot, v);
	/* A second session is told who holds it. */
	ASSERT_EQ(0, mcp_tuner_open(self->dev, &t2));
	EXPECT_EQ(-EBUSY, mcp_tuner_set(t2, L2, boot, 0));
	snprintf(want, sizeof(want), "(pid %d)", getpid());
	EXPECT_NE(NULL, strstr(mcp_strerror_last(), want)) TH_LOG("%s", mcp_strerror_last());
	mcp_tuner_close(t2);
	mcp_tuner_close(t);
	ASSERT_EQ(0, find_knob(self->dev, 0, L2, &now));
	EXPECT_EQ(boot, now.value);
	EXPECT_FALSE(now.held);

	ASSERT_EQ(0, mcp_tuner_open(self->dev, &t));
	ASSERT_EQ(0, mcp_tuner_set(t, L2, !boot, 0));
	ASSERT_EQ(0, mcp_tuner_commit(t, &count));
	EXPECT_EQ(1, count);
	mcp_tuner_close(t);
	ASSERT_EQ(0, find_knob(self->dev, 0, L2, &now));
	EXPECT_EQ(!boot, now.value);
	EXPECT_TRUE(now.committed);

	ASSERT_EQ(0, mcp_tuner_open(self->dev, &t));
	ASSERT_EQ(0, mcp_tuner_reset(t, L2, -1)) TH_LOG("%s", mcp_strerror_last());
	mcp_tuner_close(t);
	ASSERT_EQ(0, find_knob(self->dev, 0, L2, &now));
	EXPECT_EQ(boot, now.value);
	EXPECT_FALSE(now.committed);
}

MCP_TEST_MAIN
