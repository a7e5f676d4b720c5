/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The C API, compiled as C: error returns, mcp_strerror_last(), NULL
 * handling.  (Accessors over a real snapshot: test_c_api_topo.cpp.)
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>
#include <mcp/mcp.h>

#define NOT_LOADED "the mcp kernel module is not loaded: run 'sudo modprobe mcp'"

Test(c_api, open_nonexistent_is_enoent)
{
	struct mcp_device *dev = NULL;

	cr_expect_str_eq(mcp_strerror_last(), "");
	cr_expect_eq(mcp_open("/nonexistent/mcp", &dev), -ENOENT);
	cr_expect_null(dev);
	cr_expect_str_eq(mcp_strerror_last(), NOT_LOADED);
}

Test(c_api, open_default_honours_mcp_device)
{
	struct mcp_device *dev = NULL;

	cr_assert_eq(setenv(MCP_DEVICE_ENV, "/nonexistent/env", 1), 0);
	cr_expect_eq(mcp_open(NULL, &dev), -ENOENT);
	cr_expect_str_eq(mcp_strerror_last(), NOT_LOADED);
}

Test(c_api, open_dev_null_is_enotty)
{
	struct mcp_device *dev = NULL;

	cr_expect_eq(mcp_open("/dev/null", &dev), -ENOTTY);
	cr_expect_null(dev);
	cr_expect_eq(strncmp(mcp_strerror_last(), "/dev/null is not an mcp device", 30), 0,
		     "%s", mcp_strerror_last());
}

Test(c_api, null_arguments)
{
	unsigned int id = 0;
	size_t n = 0;

	cr_expect_eq(mcp_open("/dev/mcp", NULL), -EINVAL);
	cr_expect_eq(mcp_device_fd(NULL), -EINVAL);
	cr_expect_eq(mcp_get_version(NULL, NULL, NULL, NULL, NULL, 0), -EINVAL);
	cr_expect_eq(mcp_topo_get(NULL, NULL), -EINVAL);
	cr_expect_eq(mcp_topo_nr_nodes(NULL), 0u);
	cr_expect_eq(mcp_topo_cpus_online(NULL), 0u);
	cr_expect_eq(mcp_topo_node_id(NULL, 0, &id), -EINVAL);
	cr_expect_eq(mcp_topo_node_cpus(NULL, 0, NULL, 0, &n), -EINVAL);
	mcp_close(NULL);
	mcp_topo_free(NULL);
}

static void *fail_in_thread(void *arg)
{
	struct mcp_device *dev = NULL;
	char *seen = arg;

	strcpy(seen, mcp_strerror_last()); /* fresh thread: "" */
	mcp_open("/dev/null", &dev);
	return NULL;
}

Test(c_api, last_error_is_thread_local)
{
	struct mcp_device *dev = NULL;
	char seen[256] = "unset";
	pthread_t t;

	mcp_open("/nonexistent/mcp", &dev);
	cr_assert_eq(pthread_create(&t, NULL, fail_in_thread, seen), 0);
	pthread_join(t, NULL);
	cr_expect_str_eq(seen, "");
	cr_expect_str_eq(mcp_strerror_last(), NOT_LOADED); /* untouched by the thread */
}

Test(c_api, versions_and_feature_names)
{
	cr_expect_str_eq(mcp_library_version(), MCP_PROJECT_VERSION);
	cr_expect_str_eq(mcp_feature_name(MCP_FEATURE_VERSION), "version");
	cr_expect_str_eq(mcp_feature_name(MCP_FEATURE_TOPOLOGY), "topology");
	cr_expect_null(mcp_feature_name(1ULL << 40));
	cr_expect_null(mcp_feature_name(3)); /* one bit at a time */
}
