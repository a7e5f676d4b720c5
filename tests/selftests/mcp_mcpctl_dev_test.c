// SPDX-License-Identifier: GPL-2.0-only
/*
 * mcpctl devices, dev, bar and irq end to end, inside the test VM: the
 * command line as users run it (/opt/mcp/bin/mcpctl, fork+exec) against
 * QEMU's edu device, checked against sysfs and the edu registers.
 */
#define _GNU_SOURCE
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <linux/capability.h>

#include "mcp_dev.h"

#define MCPCTL_PATH	"/opt/mcp/bin/mcpctl"

/*
 * Starts mcpctl with @argv (NULL-terminated, without argv[0]); its stdout
 * goes to *@out_fd and its stderr to *@err_fd (the read ends of pipes).
 * With @drop_rawio the child loses CAP_SYS_RAWIO for good before exec.
 * Returns the child's pid, or -1.
 */
static pid_t spawn_mcpctl(const char *const *argv, int drop_rawio, int *out_fd, int *err_fd)
{
	const char *args[32] = { "mcpctl" };
	int out[2], err[2];
	size_t n = 1;
	pid_t pid;

	while (argv[n - 1] && n < 31) {
		args[n] = argv[n - 1];
		n++;
	}
	args[n] = NULL;
	if (pipe(out))
		return -1;
	if (pipe(err)) {
		close(out[0]);
		close(out[1]);
		return -1;
	}
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		dup2(out[1], 1);
		dup2(err[1], 2);
		close(out[0]);
		close(out[1]);
		close(err[0]);
		close(err[1]);
		/* Root regains its capabilities at exec unless they leave the
		 * bounding set too.
		 */
		if (drop_rawio && (prctl(PR_CAPBSET_DROP, CAP_SYS_RAWIO, 0, 0, 0) ||
				   mcp_drop_cap(CAP_SYS_RAWIO)))
			_exit(125);
		execv(MCPCTL_PATH, (char *const *)args);
		_exit(126);
	}
	close(out[1]);
	close(err[1]);
	*out_fd = out[0];
	*err_fd = err[0];
	return pid;
}

/* Reads @fd to its end into @buf (NUL-terminated) and closes it. */
static void slurp(int fd, char *buf, size_t len)
{
	size_t total = 0;
	ssize_t r;

	while (total < len - 1 && (r = read(fd, buf + total, len - 1 - total)) > 0)
		total += r;
	buf[total] = '\0';
	close(fd);
}

static int wait_exit(pid_t pid)
{
	int status;

	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return -1;
	return WEXITSTATUS(status);
}

/* Runs mcpctl to completion; its exit status, or -1. */
static int run_mcpctl(char *out, size_t out_len, char *err, size_t err_len, int drop_rawio,
		      const char *const *argv)
{
	int out_fd, err_fd;
	pid_t pid = spawn_mcpctl(argv, drop_rawio, &out_fd, &err_fd);

	if (pid < 0)
		return -1;
	slurp(out_fd, out, out_len);
	slurp(err_fd, err, err_len);
	return wait_exit(pid);
}

#define MCPCTL(out, err, ...) \
	run_mcpctl(out, sizeof(out), err, sizeof(err), 0, (const char *const[]){ __VA_ARGS__, NULL })
#define MCPCTL_NO_RAWIO(out, err, ...) \
	run_mcpctl(out, sizeof(out), err, sizeof(err), 1, (const char *const[]){ __VA_ARGS__, NULL })

/* One line, "mcpctl: ..." */
static int one_error_line(const char *err)
{
	size_t n = strlen(err);

	return !strncmp(err, "mcpctl: ", 8) && n && err[n - 1] == '\n' &&
	       strchr(err, '\n') == err + n - 1;
}

FIXTURE(mcpctl_dev) {
	char addr[MCP_PCI_ADDR_LEN];
};

FIXTURE_SETUP(mcpctl_dev)
{
	if (access(MCPCTL_PATH, X_OK))
		SKIP(return, "%s not in this image", MCPCTL_PATH);
	ASSERT_EQ(0, mcp_ensure_loaded());
	ASSERT_EQ(0, mcp_pci_find(EDU_VENDOR, EDU_DEVICE, self->addr))
		TH_LOG("no edu device in this VM");
	if (!mcp_pci_bound(self->addr))
		ASSERT_EQ(0, mcp_pci_bind(self->addr));
}

FIXTURE_TEARDOWN(mcpctl_dev)
{
}

TEST_F(mcpctl_dev, devices_json_lists_edu_with_its_numa_node)
{
	char out[16384], err[1024], want[64], *obj, *node;

	ASSERT_EQ(0, MCPCTL(out, err, "devices", "--json")) TH_LOG("%s", err);
	ASSERT_EQ('[', out[0]) TH_LOG("%s", out);
	snprintf(want, sizeof(want), "\"address\":\"%s\"", self->addr);
	obj = strstr(out, want);
	ASSERT_NE(NULL, obj) TH_LOG("%s not in %s", self->addr, out);
	EXPECT_NE(NULL, strstr(obj, "\"vendor\":\"1234\",\"device\":\"11e8\"")) TH_LOG("%s", obj);
	EXPECT_NE(NULL, strstr(obj, "\"backend\":\"edu\"")) TH_LOG("%s", obj);
	node = strstr(obj, "\"numa_node\":");
	ASSERT_NE(NULL, node);
	EXPECT_EQ(mcp_pci_attr(self->addr, "numa_node"), strtoll(node + 12, NULL, 10));
	EXPECT_NE(NULL, strstr(obj, "\"link\":{\"pcie\":")) TH_LOG("%s", obj);
}

TEST_F(mcpctl_dev, devices_table_has_edu_line)
{
	char out[8192], err[1024], want[128];

	ASSERT_EQ(0, MCPCTL(out, err, "devices")) TH_LOG("%s", err);
	EXPECT_EQ(0, strncmp(out, "IDX  ADDRESS", 12)) TH_LOG("%s", out);
	snprintf(want, sizeof(want), "%s  1234:11e8  00ff ", self->addr);
	EXPECT_NE(NULL, strstr(out, want)) TH_LOG("%s", out);
}

TEST_F(mcpctl_dev, dev_info_by_address_and_index_agree)
{
	char by_addr[4096], by_index[4096], err[1024], *idx;

	ASSERT_EQ(0, MCPCTL(by_addr, err, "dev", "info", self->addr, "--json")) TH_LOG("%s", err);
	idx = strstr(by_addr, "\"index\":");
	ASSERT_NE(NULL, idx);
	char index[16];
	snprintf(index, sizeof(index), "%ld", strtol(idx + 8, NULL, 10));
	ASSERT_EQ(0, MCPCTL(by_index, err, "dev", "info", index, "--json")) TH_LOG("%s", err);
	/* open_count may differ by nothing: neither holds the device open. */
	EXPECT_STREQ(by_addr, by_index);
	ASSERT_EQ(0, MCPCTL(by_addr, err, "dev", "info", self->addr));
	EXPECT_NE(NULL, strstr(by_addr, "  backend:       edu\n")) TH_LOG("%s", by_addr);
	EXPECT_NE(NULL, strstr(by_addr, "  bar 0:         mem ")) TH_LOG("%s", by_addr);
}

TEST_F(mcpctl_dev, bar_read_id_register)
{
	char out[256], err[1024];

	ASSERT_EQ(0, MCPCTL(out, err, "bar", "read", self->addr, "0", "0")) TH_LOG("%s", err);
	EXPECT_STREQ("0x010000ed\n", out);
	ASSERT_EQ(0, MCPCTL(out, err, "bar", "read", self->addr, "0", "0x0", "--json"));
	EXPECT_NE(NULL, strstr(out, "\"value\":16777453")) TH_LOG("%s", out);
}

TEST_F(mcpctl_dev, bar_write_then_read_liveness)
{
	char out[256], err[1024];

	ASSERT_EQ(0, MCPCTL(out, err, "bar", "write", self->addr, "0", "0x4", "0x12345678"))
		TH_LOG("%s", err);
	ASSERT_EQ(0, MCPCTL(out, err, "bar", "read", self->addr, "0", "4")) TH_LOG("%s", err);
	EXPECT_STREQ("0xedcba987\n", out);
}

TEST_F(mcpctl_dev, bar_dump_starts_with_id)
{
	char out[4096], err[1024];

	ASSERT_EQ(0, MCPCTL(out, err, "bar", "dump", self->addr, "0", "0", "32")) TH_LOG("%s", err);
	EXPECT_EQ(0, strncmp(out, "00000000: 010000ed ", 19)) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "\n00000010: ")) TH_LOG("%s", out);
}

TEST_F(mcpctl_dev, irq_wait_sees_the_factorial_interrupt)
{
	const char *const wait_argv[] = { "irq", "wait", self->addr, "--timeout", "20000",
					  "--json", NULL };
	char out[1024], err[1024], line[256];
	int out_fd, err_fd;
	size_t n = 0;
	pid_t pid;

	pid = spawn_mcpctl(wait_argv, 0, &out_fd, &err_fd);
	ASSERT_LT(0, pid);
	/* The eventfd is connected once mcpctl says it is waiting. */
	while (n < sizeof(line) - 1 && read(err_fd, line + n, 1) == 1 && line[n] != '\n')
		n++;
	line[n] = '\0';
	ASSERT_EQ(0, strncmp(line, "waiting for 1 interrupt(s) on vector 0", 38)) TH_LOG("%s", line);

	ASSERT_EQ(0, MCPCTL(out, err, "bar", "write", self->addr, "0", "0x20", "0x80")) TH_LOG("%s", err);
	ASSERT_EQ(0, MCPCTL(out, err, "bar", "write", self->addr, "0", "0x8", "5")) TH_LOG("%s", err);

	slurp(out_fd, out, sizeof(out));
	slurp(err_fd, err, sizeof(err));
	EXPECT_EQ(0, wait_exit(pid)) TH_LOG("%s", err);
	EXPECT_NE(NULL, strstr(out, "\"interrupts\":1,\"timed_out\":false")) TH_LOG("%s", out);
	ASSERT_EQ(0, MCPCTL(out, err, "bar", "read", self->addr, "0", "0x8"));
	EXPECT_STREQ("0x00000078\n", out); /* 5! = 120 */
	ASSERT_EQ(0, MCPCTL(out, err, "bar", "write", self->addr, "0", "0x20", "0"));
}

TEST_F(mcpctl_dev, irq_wait_times_out_with_exit_1)
{
	char out[1024], err[1024];

	EXPECT_EQ(1, MCPCTL(out, err, "irq", "wait", self->addr, "--timeout", "100"));
	EXPECT_NE(NULL, strstr(err, "mcpctl: timed out after 100 ms")) TH_LOG("%s", err);
	EXPECT_EQ(0, strncmp(out, "0 interrupt(s) on vector 0 of ", 30)) TH_LOG("%s", out);
}

TEST_F(mcpctl_dev, bad_device_exits_1_with_one_line)
{
	char out[1024], err[1024];

	EXPECT_EQ(1, MCPCTL(out, err, "dev", "info", "4095"));
	EXPECT_TRUE(one_error_line(err)) TH_LOG("%s", err);
	EXPECT_NE(NULL, strstr(err, "no device with index 4095")) TH_LOG("%s", err);
	EXPECT_STREQ("", out);

	EXPECT_EQ(1, MCPCTL(out, err, "bar", "read", "00ff:1f:1f.7", "0", "0"));
	EXPECT_TRUE(one_error_line(err)) TH_LOG("%s", err);
	EXPECT_NE(NULL, strstr(err, "no device at 00ff:1f:1f.7")) TH_LOG("%s", err);

	EXPECT_EQ(1, MCPCTL(out, err, "bar", "read", self->addr, "0", "0x100000"));
	EXPECT_TRUE(one_error_line(err)) TH_LOG("%s", err);
	EXPECT_NE(NULL, strstr(err, "outside BAR 0")) TH_LOG("%s", err);

	EXPECT_EQ(1, MCPCTL(out, err, "irq", "wait", self->addr, "--vector", "7", "--timeout", "10"));
	EXPECT_TRUE(one_error_line(err)) TH_LOG("%s", err);

	EXPECT_EQ(2, MCPCTL(out, err, "bar", "read", "edu", "0", "0"));
	EXPECT_TRUE(one_error_line(err)) TH_LOG("%s", err);
}

TEST_F(mcpctl_dev, bar_read_without_cap_sys_rawio)
{
	char out[1024], err[1024];

	EXPECT_EQ(1, MCPCTL_NO_RAWIO(out, err, "bar", "read", self->addr, "0", "0"));
	EXPECT_TRUE(one_error_line(err)) TH_LOG("%s", err);
	EXPECT_NE(NULL, strstr(err, "CAP_SYS_RAWIO")) TH_LOG("%s", err);
	EXPECT_STREQ("", out);
}

TEST_F(mcpctl_dev, dev_link_lists_the_host)
{
	char out[16384], err[1024];

	ASSERT_EQ(0, MCPCTL(out, err, "dev", "link")) TH_LOG("%s", err);
	EXPECT_NE(NULL, strstr(out, " degraded; ")) TH_LOG("%s", out);
	ASSERT_EQ(0, MCPCTL(out, err, "dev", "link", "--json")) TH_LOG("%s", err);
	EXPECT_NE(NULL, strstr(out, self->addr)) TH_LOG("%s", out);
}

MCP_TEST_MAIN
