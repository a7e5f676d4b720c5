// SPDX-License-Identifier: GPL-2.0-only
/*
 * mcpctl place/unplace/run/qos end to end, inside the test VM: the command
 * line as users run it (/opt/mcp/bin/mcpctl, fork+exec), checked against
 * /proc/PID/status, sched_getaffinity() and the cgroup v2 files.
 *
 * Needs cgroup v2 at /sys/fs/cgroup (tests/vm/init.sh mounts it); the
 * node-1 tests need a second node (both VM topologies have one).
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <sched.h>
#include <signal.h>
#include <sys/wait.h>

#include "mcp_test.h"

#define MCPCTL_PATH	MCP_MCPCTL_PATH
#define CGROUP_ROOT	"/sys/fs/cgroup"
#define SLICE		CGROUP_ROOT "/mcp.slice"


/* The value after "@key:\t" in @text, up to the end of its line. */
static int field(const char *text, const char *key, char *val, size_t len)
{
	const char *p = strstr(text, key);
	size_t i = 0;

	if (!p)
		return -1;
	p += strlen(key);
	while (*p == ':' || *p == '\t' || *p == ' ')
		p++;
	while (*p && *p != '\n' && i < len - 1)
		val[i++] = *p++;
	val[i] = '\0';
	return 0;
}

static void chomp(char *s)
{
	size_t n = strlen(s);

	while (n && isspace((unsigned char)s[n - 1]))
		s[--n] = '\0';
}

static int read_str(const char *path, char *buf, size_t len)
{
	if (mcp_read_file(path, buf, len) < 0)
		return -1;
	chomp(buf);
	return 0;
}

/* A child that waits to be killed; its pid, or -1. */
static pid_t fork_paused(void)
{
	pid_t child = fork();

	if (child == 0) {
		pause();
		_exit(0);
	}
	return child;
}

static int have_cgroup2(void)
{
	return access(CGROUP_ROOT "/cgroup.controllers", R_OK) == 0;
}

static int have_node1(void)
{
	return access("/sys/devices/system/node/node1/cpulist", R_OK) == 0;
}

FIXTURE(mcpctl) {
	int dummy;
};

FIXTURE_SETUP(mcpctl)
{
	if (access(MCPCTL_PATH, X_OK))
		SKIP(return, "%s not in this image", MCPCTL_PATH);
	ASSERT_EQ(0, mcp_ensure_loaded());
}

FIXTURE_TEARDOWN(mcpctl)
{
}

TEST_F(mcpctl, run_node1_sets_affinity)
{
	char out[8192], want[256], got[256];

	if (!have_node1())
		SKIP(return, "no node 1");
	ASSERT_EQ(0, read_str("/sys/devices/system/node/node1/cpulist", want, sizeof(want)));
	ASSERT_EQ(0, MCP_MCPCTL(out, "run", "--node", "1", "--", "cat", "/proc/self/status"))
		TH_LOG("%s", out);
	ASSERT_EQ(0, field(out, "Cpus_allowed_list", got, sizeof(got))) TH_LOG("%s", out);
	EXPECT_STREQ(want, got);
}

/* Writes @val to a placement knob and returns its old value in @old. */
static int knob_swap(const char *name, const char *val, char *old, size_t len)
{
	char path[256];
	int fd, ret = 0;

	snprintf(path, sizeof(path), MCP_SYSFS_DIR "/placement/%s", name);
	if (read_str(path, old, len))
		return -1;
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	if (write(fd, val, strlen(val)) < 0)
		ret = -1;
	close(fd);
	return ret;
}

/*
 * With one idle CPU enough to qualify (the CPU running mcpctl is busy, and
 * 4node has one CPU per node), --auto must bind the command to exactly the
 * CPUs of one node.
 */
TEST_F(mcpctl, run_auto_binds_to_one_node)
{
	char out[8192], got[256], cpus[256], path[128], old_min[32], old_pct[32];
	int node, matched = -1;

	ASSERT_EQ(0, knob_swap("min_idle_cpus", "1", old_min, sizeof(old_min)));
	ASSERT_EQ(0, knob_swap("idle_threshold_pct", "50", old_pct, sizeof(old_pct)));
	/*
	 * The idle window may still hold the previous test's load (worker
	 * threads, a VM vCPU busy elsewhere): then no node qualifies and the
	 * command runs unbound, as it should.  Tries again after the window.
	 */
	for (int attempt = 0; attempt < 10 && matched < 0; attempt++) {
		if (attempt)
			usleep(300000);
		EXPECT_EQ(0, MCP_MCPCTL(out, "run", "--auto", "--", "cat", "/proc/self/status"))
			TH_LOG("%s", out);
		ASSERT_EQ(0, field(out, "Cpus_allowed_list", got, sizeof(got))) TH_LOG("%s", out);
		for (node = 0; node < 64 && matched < 0; node++) {
			snprintf(path, sizeof(path), "/sys/devices/system/node/node%d/cpulist", node);
			if (read_str(path, cpus, sizeof(cpus)) == 0 && strcmp(cpus, got) == 0)
				matched = node;
		}
		if (matched < 0)
			TH_LOG("attempt %d: Cpus_allowed_list %s (no node idle enough?)", attempt, got);
	}
	EXPECT_EQ(0, knob_swap("min_idle_cpus", old_min, cpus, sizeof(cpus)));
	EXPECT_EQ(0, knob_swap("idle_threshold_pct", old_pct, cpus, sizeof(cpus)));
	EXPECT_LE(0, matched) TH_LOG("Cpus_allowed_list %s is not one node's CPUs", got);
}

TEST_F(mcpctl, run_command_not_found_is_127)
{
	char out[4096];

	EXPECT_EQ(127, MCP_MCPCTL(out, "run", "--node", "0", "--", "/nonexistent/cmd"));
	EXPECT_NE(NULL, strstr(out, "command not found")) TH_LOG("%s", out);
}

TEST_F(mcpctl, run_qos_guaranteed_half_cpu)
{
	char out[8192], path[512], val[256], *group;
	int status;

	if (!have_cgroup2())
		SKIP(return, "cgroup v2 not mounted at %s", CGROUP_ROOT);
	status = MCP_MCPCTL(out, "run", "--qos", "guaranteed", "--cpus", "0.5", "--",
			"cat", "/proc/self/cgroup");
	ASSERT_EQ(0, status) TH_LOG("%s", out);
	/* "0::/mcp.slice/run-PID" */
	group = strstr(out, "0::/mcp.slice/run-");
	ASSERT_NE(NULL, group) TH_LOG("%s", out);
	group += strlen("0::");
	chomp(group);
	snprintf(path, sizeof(path), "%s%s/cpu.max", CGROUP_ROOT, group);
	ASSERT_EQ(0, read_str(path, val, sizeof(val)));
	EXPECT_STREQ("50000 100000", val);
	snprintf(path, sizeof(path), "%s%s/cpu.weight", CGROUP_ROOT, group);
	ASSERT_EQ(0, read_str(path, val, sizeof(val)));
	EXPECT_STREQ("800", val);
	snprintf(path, sizeof(path), "%s%s/memory.min", CGROUP_ROOT, group);
	ASSERT_EQ(0, read_str(path, val, sizeof(val)));
	EXPECT_STREQ("536870912", val);
	snprintf(path, sizeof(path), "%s%s/cpuset.mems", CGROUP_ROOT, group);
	if (read_str(path, val, sizeof(val)) == 0)
		TH_LOG("cpuset.mems %s", val);
	/* The command has exited: the group is empty and can go. */
	snprintf(path, sizeof(path), "%s%s", CGROUP_ROOT, group);
	EXPECT_EQ(0, rmdir(path)) TH_LOG("rmdir %s: %s", path, strerror(errno));
}

TEST_F(mcpctl, run_qos_refuses_finer_than_eighth)
{
	char out[4096];

	if (!have_cgroup2())
		SKIP(return, "cgroup v2 not mounted at %s", CGROUP_ROOT);
	EXPECT_EQ(1, MCP_MCPCTL(out, "run", "--qos", "burstable", "--cpus", "0.1", "--", "true"));
	EXPECT_NE(NULL, strstr(out, "0.125")) TH_LOG("%s", out);
}

TEST_F(mcpctl, place_dry_run_json)
{
	char out[8192], pid[32];

	snprintf(pid, sizeof(pid), "%d", getpid());
	ASSERT_EQ(0, MCP_MCPCTL(out, "place", "--dry-run", "-p", pid, "--json")) TH_LOG("%s", out);
	EXPECT_EQ('{', out[0]) TH_LOG("%s", out);
	chomp(out);
	EXPECT_EQ('}', out[strlen(out) - 1]);
	EXPECT_EQ(NULL, strchr(out, '\n')) TH_LOG("one line: %s", out);
	EXPECT_NE(NULL, strstr(out, "\"dry_run\":true"));
	EXPECT_NE(NULL, strstr(out, "\"node_chosen\":"));
	EXPECT_NE(NULL, strstr(out, "\"reason\":\""));
	EXPECT_NE(NULL, strstr(out, "\"home_source\":\"histogram\"")) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "\"cpus\":["));
}

TEST_F(mcpctl, place_node_then_unplace_child)
{
	char out[8192], pid[32];
	cpu_set_t before, after;
	pid_t child;
	int status;

	if (!have_node1())
		SKIP(return, "no node 1");
	child = fork_paused();
	ASSERT_LE(0, child);
	snprintf(pid, sizeof(pid), "%d", child);
	ASSERT_EQ(0, sched_getaffinity(child, sizeof(before), &before));
	EXPECT_EQ(0, MCP_MCPCTL(out, "place", "-p", pid, "--node", "1")) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "placed on node 1")) TH_LOG("%s", out);
	ASSERT_EQ(0, sched_getaffinity(child, sizeof(after), &after));
	EXPECT_FALSE(CPU_EQUAL(&before, &after));
	EXPECT_EQ(0, MCP_MCPCTL(out, "unplace", "-p", pid)) TH_LOG("%s", out);
	ASSERT_EQ(0, sched_getaffinity(child, sizeof(after), &after));
	EXPECT_TRUE(CPU_EQUAL(&before, &after));
	/* A second unplace: never placed (any more). */
	EXPECT_EQ(1, MCP_MCPCTL(out, "unplace", "-p", pid));
	EXPECT_NE(NULL, strstr(out, "never placed")) TH_LOG("%s", out);
	kill(child, SIGKILL);
	waitpid(child, &status, 0);
}

TEST_F(mcpctl, place_missing_pid)
{
	char out[4096];

	EXPECT_EQ(1, MCP_MCPCTL(out, "place", "-p", "4000000"));
	EXPECT_NE(NULL, strstr(out, "does not exist")) TH_LOG("%s", out);
}

TEST_F(mcpctl, qos_create_attach_show_delete)
{
	char out[8192], pid[32], val[256], want[256];
	pid_t child;
	int status;

	if (!have_cgroup2())
		SKIP(return, "cgroup v2 not mounted at %s", CGROUP_ROOT);
	ASSERT_EQ(0, MCP_MCPCTL(out, "qos", "create", "st-b", "--class", "burstable",
			    "--cpus", "0.125", "--node", "0", "--memory-low", "64M"))
		TH_LOG("%s", out);
	ASSERT_EQ(0, read_str(SLICE "/st-b/cpu.max", val, sizeof(val)));
	EXPECT_STREQ("12500 100000", val);
	ASSERT_EQ(0, read_str(SLICE "/st-b/cpu.weight", val, sizeof(val)));
	EXPECT_STREQ("400", val);
	ASSERT_EQ(0, read_str(SLICE "/st-b/memory.low", val, sizeof(val)));
	EXPECT_STREQ("67108864", val);
	ASSERT_EQ(0, read_str(SLICE "/st-b/cpuset.mems", val, sizeof(val)));
	EXPECT_STREQ("0", val);
	ASSERT_EQ(0, read_str(SLICE "/st-b/cpuset.cpus", val, sizeof(val)));
	ASSERT_EQ(0, read_str("/sys/devices/system/node/node0/cpulist", want, sizeof(want)));
	EXPECT_STREQ(want, val);

	child = fork_paused();
	ASSERT_LE(0, child);
	snprintf(pid, sizeof(pid), "%d", child);
	EXPECT_EQ(0, MCP_MCPCTL(out, "qos", "attach", "st-b", pid)) TH_LOG("%s", out);
	EXPECT_EQ(0, MCP_MCPCTL(out, "qos", "show", "st-b", "--json")) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "\"class\":\"burstable\"")) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, pid)) TH_LOG("%s", out);
	EXPECT_EQ(1, MCP_MCPCTL(out, "qos", "delete", "st-b"));
	EXPECT_NE(NULL, strstr(out, "still has processes")) TH_LOG("%s", out);
	kill(child, SIGKILL);
	waitpid(child, &status, 0);
	EXPECT_EQ(0, MCP_MCPCTL(out, "qos", "delete", "st-b")) TH_LOG("%s", out);
	EXPECT_NE(0, access(SLICE "/st-b", F_OK));
	EXPECT_EQ(1, MCP_MCPCTL(out, "qos", "attach", "st-b", pid));
}

/* The bytes of @path in @buf (at most @cap); the length, or -1. */
static long read_bytes(const char *path, unsigned char *buf, size_t cap)
{
	FILE *f = fopen(path, "rb");
	size_t n;

	if (!f)
		return -1;
	n = fread(buf, 1, cap, f);
	fclose(f);
	return (long)n;
}

/*
 * `graph run MODEL --input x=X.npy --save-outputs DIR` through mcp.ko and
 * the workers, then with --no-kernel (run_inline, which the host unit
 * tests compare with ONNX Runtime): the same .npy header (dtype, shape)
 * and outputs within 1e-5 relative.
 */
static void run_npy_like_inline(struct __test_metadata *_metadata, const char *model,
				const char *input)
{
	static unsigned char a[1 << 16], b[1 << 16];
	char out[16384], path[256], x[256], kdir[128], idir[128], ka[160], ia[160];
	long na, nb, hlen, i;

	snprintf(path, sizeof(path), "/opt/mcp/onnx/%s", model);
	snprintf(x, sizeof(x), "x=/opt/mcp/onnx/%s", input);
	snprintf(kdir, sizeof(kdir), "/tmp/npy-kernel-%s", model);
	snprintf(idir, sizeof(idir), "/tmp/npy-inline-%s", model);
	ASSERT_EQ(0, MCP_MCPCTL(out, "--json", "graph", "run", path, "--iterations", "2",
				"--input", x, "--save-outputs", kdir))
		TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "\"no_kernel\":false")) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "\"engine\":\"worker\"")) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "\"name\":\"y\"")) TH_LOG("%s", out);
	ASSERT_EQ(0, MCP_MCPCTL(out, "graph", "run", path, "--no-kernel", "--iterations", "1",
				"--input", x, "--save-outputs", idir))
		TH_LOG("%s", out);
	snprintf(ka, sizeof(ka), "%s/y.npy", kdir);
	snprintf(ia, sizeof(ia), "%s/y.npy", idir);
	na = read_bytes(ka, a, sizeof(a));
	nb = read_bytes(ia, b, sizeof(b));
	ASSERT_LT(10, na) TH_LOG("%s not written", ka);
	ASSERT_EQ(na, nb);
	ASSERT_EQ(0, memcmp(a, "\x93NUMPY\x01\x00", 8));
	hlen = 10 + (a[8] | a[9] << 8);
	ASSERT_EQ(0, memcmp(a, b, (size_t)hlen)) TH_LOG("headers differ: %.*s", (int)hlen, a);
	EXPECT_NE(NULL, strstr((char *)a + 10, "'descr': '<f4'"));
	for (i = hlen; i + 4 <= na; i += 4) {
		float fa, fb, d, m;

		memcpy(&fa, a + i, 4);
		memcpy(&fb, b + i, 4);
		d = fa > fb ? fa - fb : fb - fa;
		m = fb < 0 ? -fb : fb;
		ASSERT_GE(1e-5f * (m > 1 ? m : 1), d)
			TH_LOG("%s: element %ld: kernel %g, inline %g", model, (i - hlen) / 4,
			       (double)fa, (double)fb);
	}
}

TEST_F(mcpctl, graph_run_npy_through_the_kernel_saves_what_inline_does)
{
	char out[8192];

	if (access("/opt/mcp/onnx/x_mlp.npy", R_OK))
		SKIP(return, "no ONNX models and inputs in this image");
	run_npy_like_inline(_metadata, "mlp.onnx", "x_mlp.npy");
	run_npy_like_inline(_metadata, "bert14.onnx", "x_bert.npy");
	run_npy_like_inline(_metadata, "consts.onnx", "x_small.npy");
	run_npy_like_inline(_metadata, "resnet.onnx", "x_resnet.npy");
	/* The wrong input: one error naming the file, nothing written. */
	EXPECT_EQ(1, MCP_MCPCTL(out, "graph", "run", "/opt/mcp/onnx/bert14.onnx", "--input",
				"x=/opt/mcp/onnx/x_small.npy", "--save-outputs", "/tmp/npy-bad"));
	EXPECT_NE(NULL, strstr(out, "x_small.npy")) TH_LOG("%s", out);
	EXPECT_NE(0, access("/tmp/npy-bad", F_OK));
}

MCP_TEST_MAIN
