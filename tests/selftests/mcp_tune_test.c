// SPDX-License-Identifier: GPL-2.0-only
/*
 * The tuning registry and its sessions (MCP_IOC_TUNE_*): the list and
 * its support reasons for the CPU the VM boots, sessions that set,
 * verify and roll back (on close, on SIGKILL, at unload after a commit),
 * holders reported on -EBUSY, committed values re-applied to a CPU that
 * comes online, and bad input refused with nothing changed.
 *
 * Which paths run depends on the CPU model; MCP_TUNE_EXPECT says which one
 * the VM was booted for, and the test checks the module agrees:
 *   writable     prefetchers write and read back (-cpu core2duo)
 *   readback     the table matches but writes do not stick
 *                (-cpu Skylake-Server: MSR 0x1a4 reads 0, drops writes)
 *   unsupported  no table entry (-cpu max: an AMD K8)
 * Unset, the expectation comes from /proc/cpuinfo alone and the paths that
 * need a writable knob are skipped when there is none.
 */
#include "mcp_test.h"

#include <signal.h>

#define MAX_KNOBS	64
#define L2_STREAM	"prefetch.l2_stream"

enum expect { EXPECT_ANY, EXPECT_WRITABLE, EXPECT_READBACK, EXPECT_UNSUPPORTED };

static enum expect tune_expect(void)
{
	const char *e = getenv("MCP_TUNE_EXPECT");

	if (!e || !*e)
		return EXPECT_ANY;
	if (!strcmp(e, "writable"))
		return EXPECT_WRITABLE;
	if (!strcmp(e, "readback"))
		return EXPECT_READBACK;
	if (!strcmp(e, "unsupported"))
		return EXPECT_UNSUPPORTED;
	fprintf(stderr, "MCP_TUNE_EXPECT=%s: not writable|readback|unsupported\n", e);
	exit(2);
}

/* vendor_id, cpu family and model of the first CPU in /proc/cpuinfo. */
static int cpu_model(char *vendor, size_t len, int *family, int *model)
{
	char line[256];
	FILE *f = fopen("/proc/cpuinfo", "r");
	int got = 0;

	if (!f)
		return -1;
	while (got != 7 && fgets(line, sizeof(line), f)) {
		char *v = strchr(line, ':');

		if (!v)
			continue;
		v += 2;
		v[strcspn(v, "\n")] = '\0';
		if (!strncmp(line, "vendor_id", 9)) {
			snprintf(vendor, len, "%s", v);
			got |= 1;
		} else if (!strncmp(line, "cpu family", 10)) {
			*family = atoi(v);
			got |= 2;
		} else if (!strncmp(line, "model\t", 6)) {
			*model = atoi(v);
			got |= 4;
		}
	}
	fclose(f);
	return got == 7 ? 0 : -1;
}

static int tune_list(int fd, __u32 cpu, struct mcp_tune_knob_info *e, __u32 cap,
		     __u32 *count)
{
	struct mcp_tune_list l = {
		.size = sizeof(l), .cpu = cpu, .cap = cap,
		.entry_size = sizeof(*e), .entries_ptr = (uintptr_t)e,
	};
	int ret = mcp_ioctl(fd, MCP_IOC_TUNE_LIST, &l);

	if (count)
		*count = l.count;
	return ret;
}

/* The knob called @name on @cpu; its id, or -1. */
static int tune_find(int fd, __u32 cpu, const char *name,
		     struct mcp_tune_knob_info *out)
{
	struct mcp_tune_knob_info e[MAX_KNOBS];
	__u32 n;

	if (tune_list(fd, cpu, e, MAX_KNOBS, &n))
		return -1;
	for (__u32 i = 0; i < n; i++)
		if (!strcmp(e[i].name, name)) {
			if (out)
				*out = e[i];
			return e[i].id;
		}
	return -1;
}

static __u64 tune_value(int fd, __u32 cpu, const char *name)
{
	struct mcp_tune_knob_info e;

	if (tune_find(fd, cpu, name, &e) < 0 || !(e.state & MCP_TUNE_STATE_VALUE))
		return ~0ULL;
	return e.value;
}

static int tune_session(int fd)
{
	struct mcp_tune_session s = { .size = sizeof(s) };
	int ret = mcp_ioctl(fd, MCP_IOC_TUNE_SESSION, &s);

	return ret ? ret : s.fd;
}

static int tune_set(int sfd, int knob, __u32 cpu, __u64 val, __u32 flags,
		    struct mcp_tune_value *out)
{
	struct mcp_tune_value v = {
		.size = sizeof(v), .flags = flags, .knob = knob, .cpu = cpu, .value = val,
	};
	int ret = mcp_ioctl(sfd, MCP_IOC_TUNE_SET, &v);

	if (out)
		*out = v;
	return ret;
}

static int tune_get(int sfd, int knob, __u32 cpu, __u64 *val)
{
	struct mcp_tune_value v = { .size = sizeof(v), .knob = knob, .cpu = cpu };
	int ret = mcp_ioctl(sfd, MCP_IOC_TUNE_GET, &v);

	*val = v.value;
	return ret;
}

static int tune_reset_all(int sfd)
{
	struct mcp_tune_value v = {
		.size = sizeof(v), .flags = MCP_TUNE_ALL_CPUS | MCP_TUNE_ALL_KNOBS,
	};

	return mcp_ioctl(sfd, MCP_IOC_TUNE_RESET, &v);
}

static int cpu_set_online(int cpu, int online)
{
	char path[96];

	snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%d/online", cpu);
	return mcp_write_file(path, online ? "1" : "0");
}

/*
 * A child process that opens a session, sets @knob to @val (on CPU 0, or
 * every CPU with MCP_TUNE_ALL_CPUS) and waits to be killed; its pid once
 * the value is set, or -1.
 */
static pid_t hold_in_child(int fd, int knob, __u64 val, __u32 flags)
{
	int pipefd[2];
	pid_t pid;
	char c;

	if (pipe(pipefd))
		return -1;
	pid = fork();
	if (pid < 0)
		return -1;
	if (!pid) {
		int sfd = tune_session(fd);

		close(pipefd[0]);
		if (sfd < 0 || tune_set(sfd, knob, 0, val, flags, NULL))
			_exit(10);
		if (write(pipefd[1], "k", 1) != 1)
			_exit(11);
		pause();
		_exit(12);
	}
	close(pipefd[1]);
	if (read(pipefd[0], &c, 1) != 1) {
		waitpid(pid, NULL, 0);
		pid = -1;
	}
	close(pipefd[0]);
	return pid;
}

FIXTURE(tune) {
	int fd;
	int l2;		/* prefetch.l2_stream */
	struct mcp_tune_knob_info l2_info;
	int writable;	/* l2_stream is supported on CPU 0 */
};

FIXTURE_SETUP(tune)
{
	ASSERT_EQ(0, mcp_ensure_loaded());
	self->fd = mcp_open();
	ASSERT_LE(0, self->fd);
	self->l2 = tune_find(self->fd, 0, L2_STREAM, &self->l2_info);
	ASSERT_LE(0, self->l2);
	self->writable = self->l2_info.status == MCP_TUNE_SUPPORTED;
	ASSERT_EQ(0, mcp_counter("tune_sessions"));
}

FIXTURE_TEARDOWN(tune)
{
	int sfd;

	/* Nothing a test committed outlives it. */
	if (self->writable) {
		sfd = tune_session(self->fd);
		if (sfd >= 0) {
			tune_reset_all(sfd);
			close(sfd);
		}
	}
	close(self->fd);
	EXPECT_EQ(0, mcp_counter_settles("tune_sessions", 0));
}

TEST_F(tune, feature_bit)
{
	struct mcp_version v = { .size = sizeof(v) };

	ASSERT_EQ(0, mcp_ioctl(self->fd, MCP_IOC_GET_VERSION, &v));
	EXPECT_EQ(MCP_FEAT_TUNE, v.features & MCP_FEAT_TUNE);
}

TEST_F(tune, list_sizes_and_entries)
{
	struct mcp_tune_knob_info e[MAX_KNOBS];
	unsigned char big[MAX_KNOBS][256];
	struct mcp_tune_list l = { .size = sizeof(l), .entry_size = sizeof(e[0]) };
	__u32 n;

	/* cap 0 asks for the count. */
	ASSERT_EQ(-ENOSPC, mcp_ioctl(self->fd, MCP_IOC_TUNE_LIST, &l));
	n = l.count;
	ASSERT_LE(9, n);
	ASSERT_GE(MAX_KNOBS, n);
	ASSERT_EQ(0, tune_list(self->fd, 0, e, n, NULL));
	for (__u32 i = 0; i < n; i++) {
		EXPECT_EQ(i, e[i].id);
		EXPECT_NE(0, e[i].name[0]);
		EXPECT_NE(0, e[i].reason[0]) TH_LOG("%s", e[i].name);
		EXPECT_LE(e[i].min, e[i].max);
		for (__u32 j = 0; j < i; j++)
			EXPECT_NE(0, strcmp(e[i].name, e[j].name));
	}

	/* A newer caller's larger entries: zero tails, the same content. */
	memset(big, 0xa5, sizeof(big));
	l.cap = n;
	l.entry_size = sizeof(big[0]);
	l.entries_ptr = (uintptr_t)big;
	ASSERT_EQ(0, mcp_ioctl(self->fd, MCP_IOC_TUNE_LIST, &l));
	for (__u32 i = 0; i < n; i++) {
		struct mcp_tune_knob_info *bi = (void *)big[i];

		EXPECT_STREQ(e[i].name, bi->name);
		for (size_t k = sizeof(e[0]); k < sizeof(big[0]); k++) {
			ASSERT_EQ(0, big[i][k]) TH_LOG("entry %u byte %zu", i, k);
		}
	}

	l.entry_size = MCP_TUNE_KNOB_INFO_SIZE_VER0 - 1;
	EXPECT_EQ(-EINVAL, mcp_ioctl(self->fd, MCP_IOC_TUNE_LIST, &l));
	l.entry_size = sizeof(e[0]);
	l.flags = 1;
	EXPECT_EQ(-EINVAL, mcp_ioctl(self->fd, MCP_IOC_TUNE_LIST, &l));
	l.flags = 0;
	l.cpu = sysconf(_SC_NPROCESSORS_CONF) + 4096;
	EXPECT_EQ(-EINVAL, mcp_ioctl(self->fd, MCP_IOC_TUNE_LIST, &l));
	l.cpu = 0;
	l.entries_ptr = (uintptr_t)mcp_unmapped_addr();
	EXPECT_EQ(-EFAULT, mcp_ioctl(self->fd, MCP_IOC_TUNE_LIST, &l));
}

/* Item 6: the sysfs DMA knobs, read-only here, with sysfs's values. */
TEST_F(tune, list_has_sysfs_dma_knobs)
{
	static const char *const names[] = { "wc_depth", "wc_timeout_us", "job_timeout_ms" };

	for (size_t i = 0; i < 3; i++) {
		struct mcp_tune_knob_info e;
		char knob[64], path[128];

		snprintf(knob, sizeof(knob), "dma.%s", names[i]);
		snprintf(path, sizeof(path), MCP_SYSFS_DIR "/dma/%s", names[i]);
		ASSERT_LE(0, tune_find(self->fd, 0, knob, &e)) TH_LOG("%s", knob);
		EXPECT_EQ(MCP_TUNE_READ_ONLY, e.status);
		EXPECT_EQ(MCP_TUNE_SCOPE_SYSTEM, e.scope);
		EXPECT_NE(NULL, strstr(e.reason, path))
			TH_LOG("%s", e.reason);
		EXPECT_EQ(mcp_read_ll(path), (long long)e.value);
		EXPECT_EQ(1, e.min);
	}
	/* A sysfs write shows in the list. */
	ASSERT_EQ(0, mcp_write_file(MCP_SYSFS_DIR "/dma/wc_depth", "7"));
	EXPECT_EQ(7, tune_value(self->fd, 0, "dma.wc_depth"));
	ASSERT_EQ(0, mcp_write_file(MCP_SYSFS_DIR "/dma/wc_depth", "1"));
}

/* The support status the module reports is the one this CPU should get. */
TEST_F(tune, prefetch_status_matches_cpu)
{
	static const int core2[] = { 0x0f, 0x16, 0x17, 0x1d };
	static const char *const intel4[] = {
		"prefetch.l2_stream", "prefetch.l2_adjacent",
		"prefetch.l1_stream", "prefetch.l1_stride",
	};
	enum expect want = tune_expect();
	struct mcp_tune_knob_info e;
	char vendor[64], msg[128];
	int family = -1, model = -1, is_core2 = 0, in_table;

	ASSERT_EQ(0, cpu_model(vendor, sizeof(vendor), &family, &model));
	for (size_t i = 0; i < 4; i++)
		is_core2 |= !strcmp(vendor, "GenuineIntel") && family == 6 && model == core2[i];
	/* What the table covers is decided by the module; check the reasons. */
	ASSERT_LE(0, tune_find(self->fd, 0, L2_STREAM, &e));
	in_table = !strstr(e.reason, "has no entry in the prefetcher table");
	TH_LOG("%s family %d model %d: %s: %s", vendor, family, model, e.name, e.reason);

	if (!in_table) {
		snprintf(msg, sizeof(msg), "CPU %s family 0x%x model 0x%x has no entry",
			 vendor, family, model);
		for (int id = 0; id < 6; id++) {
			struct mcp_tune_knob_info k[MAX_KNOBS];

			ASSERT_EQ(0, tune_list(self->fd, 0, k, MAX_KNOBS, NULL));
			EXPECT_EQ(MCP_TUNE_UNSUPPORTED, k[id].status) TH_LOG("%s", k[id].name);
			EXPECT_NE(NULL, strstr(k[id].reason, msg)) TH_LOG("%s", k[id].reason);
			EXPECT_EQ(0, k[id].state & MCP_TUNE_STATE_VALUE);
		}
		EXPECT_NE(EXPECT_WRITABLE, want);
		EXPECT_NE(EXPECT_READBACK, want);
		EXPECT_EQ(0, is_core2);
		return;
	}
	EXPECT_NE(EXPECT_UNSUPPORTED, want);
	if (is_core2)
		EXPECT_NE(NULL, strstr(e.reason, "IA32_MISC_ENABLE")) TH_LOG("%s", e.reason);

	for (size_t i = 0; i < 4 && !strcmp(vendor, "GenuineIntel"); i++) {
		ASSERT_LE(0, tune_find(self->fd, 0, intel4[i], &e));
		if (want == EXPECT_WRITABLE) {
			EXPECT_EQ(MCP_TUNE_SUPPORTED, e.status) TH_LOG("%s", e.reason);
			EXPECT_EQ(MCP_TUNE_STATE_VALUE, e.state & MCP_TUNE_STATE_VALUE);
			EXPECT_GE(1, e.value);
		} else if (want == EXPECT_READBACK) {
			EXPECT_EQ(MCP_TUNE_UNSUPPORTED, e.status);
			EXPECT_NE(NULL, strstr(e.reason, "read-back differs"))
				TH_LOG("%s", e.reason);
		}
	}
	/* Intel tables have no AMD-only prefetchers, and say so. */
	if (!strcmp(vendor, "GenuineIntel")) {
		ASSERT_LE(0, tune_find(self->fd, 0, "prefetch.l1_region", &e));
		EXPECT_EQ(MCP_TUNE_UNSUPPORTED, e.status);
		EXPECT_NE(NULL, strstr(e.reason, "has no L1D region prefetcher control"))
			TH_LOG("%s", e.reason);
	}
}

TEST_F(tune, session_needs_rawio)
{
	pid_t pid = fork();
	int status;

	ASSERT_LE(0, pid);
	if (!pid) {
		/* A session opened with the capability cannot write without it. */
		int sfd = tune_session(self->fd);

		if (sfd < 0)
			_exit(9);
		if (mcp_drop_cap(CAP_SYS_RAWIO))
			_exit(10);
		if (tune_set(sfd, self->l2, 0, 1, 0, NULL) != -EPERM)
			_exit(12);
		_exit(tune_session(self->fd) == -EPERM ? 0 : 11);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_EQ(0, WEXITSTATUS(status));
}

TEST_F(tune, session_bad_input_changes_nothing)
{
	struct mcp_tune_knob_info before[MAX_KNOBS], after[MAX_KNOBS];
	struct mcp_tune_value v;
	struct mcp_tune_session s = { .size = sizeof(s), .flags = 1 };
	int sfd, ro = tune_find(self->fd, 0, "dma.wc_depth", NULL);
	long ncpu = sysconf(_SC_NPROCESSORS_CONF);
	__u32 n, m;

	ASSERT_EQ(-EINVAL, mcp_ioctl(self->fd, MCP_IOC_TUNE_SESSION, &s));
	ASSERT_EQ(0, tune_list(self->fd, 0, before, MAX_KNOBS, &n));
	sfd = tune_session(self->fd);
	ASSERT_LE(0, sfd);
	EXPECT_EQ(1, mcp_counter("tune_sessions"));

	EXPECT_EQ(-ENOENT, tune_set(sfd, n, 0, 0, 0, NULL));
	EXPECT_EQ(-ENOENT, tune_set(sfd, 0x7fffffff, 0, 0, 0, NULL));
	EXPECT_EQ(-EOPNOTSUPP, tune_set(sfd, ro, 0, 4, 0, NULL));
	EXPECT_EQ(-EINVAL, tune_set(sfd, self->l2, 0, 0, 0x80, NULL));
	if (self->writable) {
		EXPECT_EQ(-ERANGE, tune_set(sfd, self->l2, 0, 2, 0, NULL));
		EXPECT_EQ(-EINVAL, tune_set(sfd, self->l2, ncpu + 4096, 0, 0, &v));
		EXPECT_EQ(-EINVAL, tune_set(sfd, self->l2, 0xffffffffu, 0, 0, &v));
		if (ncpu > 1 && !cpu_set_online(1, 0)) {
			EXPECT_EQ(-ENXIO, tune_set(sfd, self->l2, 1, 0, 0, &v));
			EXPECT_EQ(1, v.err_cpu);
			ASSERT_EQ(0, cpu_set_online(1, 1));
		}
	} else {
		EXPECT_EQ(-EOPNOTSUPP, tune_set(sfd, self->l2, 0, 0, 0, NULL));
	}
	/* Unknown ioctls on a session, and session ioctls on /dev/mcp. */
	EXPECT_EQ(-ENOTTY, mcp_ioctl(sfd, MCP_IOC_TUNE_LIST, &v));
	EXPECT_EQ(-ENOTTY, mcp_ioctl(self->fd, MCP_IOC_TUNE_SET, &v));
	close(sfd);

	ASSERT_EQ(0, tune_list(self->fd, 0, after, MAX_KNOBS, &m));
	ASSERT_EQ(n, m);
	for (__u32 i = 0; i < n; i++) {
		EXPECT_EQ(before[i].value, after[i].value) TH_LOG("%s", after[i].name);
		EXPECT_EQ(0, after[i].state & (MCP_TUNE_STATE_HELD | MCP_TUNE_STATE_COMMITTED));
	}
}

/* A session fd another process got (fork here; SCM_RIGHTS alike) is inert. */
TEST_F(tune, session_not_transferable)
{
	int sfd = tune_session(self->fd), status;
	pid_t pid;

	ASSERT_LE(0, sfd);
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		__u64 val;
		struct mcp_tune_commit c = { .size = sizeof(c) };

		if (tune_set(sfd, self->l2, 0, 0, 0, NULL) != -EPERM)
			_exit(10);
		if (tune_get(sfd, self->l2, 0, &val) != -EPERM)
			_exit(11);
		if (mcp_ioctl(sfd, MCP_IOC_TUNE_COMMIT, &c) != -EPERM)
			_exit(12);
		_exit(0);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_EQ(0, WEXITSTATUS(status));
	close(sfd);
}

TEST_F(tune, set_verify_rollback_on_close)
{
	struct mcp_tune_knob_info e;
	__u64 boot, val;
	int sfd;

	if (!self->writable)
		SKIP(return, "%s: %s", L2_STREAM, self->l2_info.reason);
	boot = self->l2_info.value;
	sfd = tune_session(self->fd);
	ASSERT_LE(0, sfd);
	ASSERT_EQ(0, tune_set(sfd, self->l2, 0, !boot, 0, NULL));
	ASSERT_EQ(0, tune_get(sfd, self->l2, 0, &val));
	EXPECT_EQ(!boot, val);
	ASSERT_LE(0, tune_find(self->fd, 0, L2_STREAM, &e));
	EXPECT_EQ(!boot, e.value);
	EXPECT_EQ(boot, e.boot);
	EXPECT_EQ(MCP_TUNE_STATE_HELD, e.state & MCP_TUNE_STATE_HELD);
	EXPECT_EQ(getpid(), e.holder_pid);
	/* Setting it again in the same session keeps the first saved value. */
	ASSERT_EQ(0, tune_set(sfd, self->l2, 0, !boot, 0, NULL));
	close(sfd);
	EXPECT_EQ(boot, tune_value(self->fd, 0, L2_STREAM));
	ASSERT_LE(0, tune_find(self->fd, 0, L2_STREAM, &e));
	EXPECT_EQ(0, e.state & MCP_TUNE_STATE_HELD);
}

TEST_F(tune, all_cpus_and_rollback_on_sigkill)
{
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	int status;
	__u64 boot;
	pid_t pid;

	if (!self->writable)
		SKIP(return, "%s: %s", L2_STREAM, self->l2_info.reason);
	boot = self->l2_info.value;
	pid = hold_in_child(self->fd, self->l2, !boot, MCP_TUNE_ALL_CPUS);
	ASSERT_LT(0, pid);
	for (long cpu = 0; cpu < ncpu; cpu++) {
		EXPECT_EQ(!boot, tune_value(self->fd, cpu, L2_STREAM)) TH_LOG("cpu %ld", cpu);
	}
	ASSERT_EQ(0, kill(pid, SIGKILL));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFSIGNALED(status));
	EXPECT_EQ(0, mcp_counter_settles("tune_sessions", 0));
	for (long cpu = 0; cpu < ncpu; cpu++) {
		EXPECT_EQ(boot, tune_value(self->fd, cpu, L2_STREAM)) TH_LOG("cpu %ld", cpu);
	}
}

TEST_F(tune, second_session_busy_with_holder_pid)
{
	struct mcp_tune_value v;
	struct mcp_tune_knob_info e;
	int status, sfd;
	__u64 boot;
	pid_t pid;

	if (!self->writable)
		SKIP(return, "%s: %s", L2_STREAM, self->l2_info.reason);
	boot = self->l2_info.value;
	pid = hold_in_child(self->fd, self->l2, !boot, 0);
	ASSERT_LT(0, pid);

	sfd = tune_session(self->fd);
	ASSERT_LE(0, sfd);
	EXPECT_EQ(-EBUSY, tune_set(sfd, self->l2, 0, boot, 0, &v));
	EXPECT_EQ(pid, v.holder_pid);
	EXPECT_EQ(0, v.err_cpu);
	EXPECT_EQ(-EBUSY, tune_set(sfd, self->l2, 0, boot, MCP_TUNE_ALL_CPUS, &v));
	EXPECT_EQ(pid, v.holder_pid);
	/* Nothing changed: the holder's value stands. */
	ASSERT_LE(0, tune_find(self->fd, 0, L2_STREAM, &e));
	EXPECT_EQ(!boot, e.value);
	EXPECT_EQ(pid, e.holder_pid);
	/* Reset does not take another session's knob either. */
	v = (struct mcp_tune_value){ .size = sizeof(v), .knob = self->l2 };
	EXPECT_EQ(-EBUSY, mcp_ioctl(sfd, MCP_IOC_TUNE_RESET, &v));
	EXPECT_EQ(pid, v.holder_pid);

	kill(pid, SIGKILL);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	/* Free now. */
	EXPECT_EQ(0, tune_set(sfd, self->l2, 0, !boot, 0, NULL));
	close(sfd);
	EXPECT_EQ(boot, tune_value(self->fd, 0, L2_STREAM));
}

TEST_F(tune, commit_holds_until_reset)
{
	struct mcp_tune_commit c = { .size = sizeof(c) };
	struct mcp_tune_value v;
	struct mcp_tune_knob_info e;
	__u64 boot;
	int sfd;

	if (!self->writable)
		SKIP(return, "%s: %s", L2_STREAM, self->l2_info.reason);
	boot = self->l2_info.value;
	sfd = tune_session(self->fd);
	ASSERT_LE(0, sfd);
	ASSERT_EQ(0, tune_set(sfd, self->l2, 0, !boot, 0, NULL));
	ASSERT_EQ(0, mcp_ioctl(sfd, MCP_IOC_TUNE_COMMIT, &c));
	EXPECT_EQ(1, c.count);
	c.flags = 1;
	EXPECT_EQ(-EINVAL, mcp_ioctl(sfd, MCP_IOC_TUNE_COMMIT, &c));
	close(sfd);

	ASSERT_LE(0, tune_find(self->fd, 0, L2_STREAM, &e));
	EXPECT_EQ(!boot, e.value);
	EXPECT_EQ(MCP_TUNE_STATE_COMMITTED, e.state & (MCP_TUNE_STATE_COMMITTED |
						       MCP_TUNE_STATE_HELD));
	/* A later session's change rolls back to the committed value. */
	sfd = tune_session(self->fd);
	ASSERT_LE(0, sfd);
	ASSERT_EQ(0, tune_set(sfd, self->l2, 0, boot, 0, NULL));
	close(sfd);
	EXPECT_EQ(!boot, tune_value(self->fd, 0, L2_STREAM));

	sfd = tune_session(self->fd);
	ASSERT_LE(0, sfd);
	v = (struct mcp_tune_value){ .size = sizeof(v), .knob = self->l2, .flags = 0x10 };
	EXPECT_EQ(-EINVAL, mcp_ioctl(sfd, MCP_IOC_TUNE_RESET, &v));
	v.flags = 0;
	ASSERT_EQ(0, mcp_ioctl(sfd, MCP_IOC_TUNE_RESET, &v));
	close(sfd);
	ASSERT_LE(0, tune_find(self->fd, 0, L2_STREAM, &e));
	EXPECT_EQ(boot, e.value);
	EXPECT_EQ(0, e.state & MCP_TUNE_STATE_COMMITTED);
}

TEST_F(tune, online_cpu_gets_committed_value)
{
	struct mcp_tune_commit c = { .size = sizeof(c) };
	long long applied;
	__u64 boot;
	int sfd;

	if (!self->writable)
		SKIP(return, "%s: %s", L2_STREAM, self->l2_info.reason);
	if (sysconf(_SC_NPROCESSORS_ONLN) < 2 || cpu_set_online(1, 1))
		SKIP(return, "CPU 1 cannot be hotplugged");
	boot = tune_value(self->fd, 1, L2_STREAM);
	ASSERT_GE(1, boot);
	sfd = tune_session(self->fd);
	ASSERT_LE(0, sfd);
	ASSERT_EQ(0, tune_set(sfd, self->l2, 1, !boot, 0, NULL));
	ASSERT_EQ(0, mcp_ioctl(sfd, MCP_IOC_TUNE_COMMIT, &c));
	close(sfd);

	applied = mcp_counter("tune_online_applied");
	ASSERT_EQ(0, cpu_set_online(1, 0));
	/* Offline: not listable, not settable. */
	EXPECT_EQ(~0ULL, tune_value(self->fd, 1, L2_STREAM));
	ASSERT_EQ(0, cpu_set_online(1, 1));
	EXPECT_EQ(applied + 1, mcp_counter("tune_online_applied"));
	EXPECT_EQ(!boot, tune_value(self->fd, 1, L2_STREAM));
}

TEST_F(tune, rmmod_refused_with_session_then_unload_restores_boot)
{
	struct mcp_tune_commit c = { .size = sizeof(c) };
	__u64 boot;
	int sfd;

	if (!self->writable)
		SKIP(return, "%s: %s", L2_STREAM, self->l2_info.reason);
	boot = self->l2_info.value;
	sfd = tune_session(self->fd);
	ASSERT_LE(0, sfd);
	ASSERT_EQ(0, tune_set(sfd, self->l2, 0, !boot, 0, NULL));
	ASSERT_EQ(0, mcp_ioctl(sfd, MCP_IOC_TUNE_COMMIT, &c));
	close(self->fd);
	self->fd = -1;
	/* The session pins the module. */
	EXPECT_EQ(-EWOULDBLOCK, mcp_unload_module(O_NONBLOCK));
	EXPECT_TRUE(mcp_module_loaded());
	close(sfd);

	ASSERT_EQ(0, mcp_unload_module(O_NONBLOCK));
	ASSERT_EQ(0, mcp_load_module());
	ASSERT_EQ(0, mcp_wait_path(MCP_DEV_PATH, 1));
	self->fd = mcp_open();
	ASSERT_LE(0, self->fd);
	/* What the reload found is what the unload put back. */
	EXPECT_EQ(boot, tune_value(self->fd, 0, L2_STREAM));
}

TEST_F(tune, readback_refusal)
{
	struct mcp_tune_knob_info e;
	int sfd;

	if (tune_expect() != EXPECT_READBACK)
		SKIP(return, "needs MCP_TUNE_EXPECT=readback (-cpu Skylake-Server)");
	ASSERT_LE(0, tune_find(self->fd, 0, L2_STREAM, &e));
	EXPECT_EQ(MCP_TUNE_UNSUPPORTED, e.status);
	EXPECT_NE(NULL, strstr(e.reason, "read-back differs on CPU 0: wrote 0, read 1"))
		TH_LOG("%s", e.reason);
	sfd = tune_session(self->fd);
	ASSERT_LE(0, sfd);
	EXPECT_EQ(-EOPNOTSUPP, tune_set(sfd, self->l2, 0, 0, 0, NULL));
	close(sfd);
	EXPECT_EQ(1, tune_value(self->fd, 0, L2_STREAM));
}

/* mcpctl tune: list and get for anyone with /dev/mcp, as JSON too. */
TEST_F(tune, mcpctl_list_and_get)
{
	char out[16384], want[128];

	if (access(MCP_MCPCTL_PATH, X_OK))
		SKIP(return, "no %s in this image", MCP_MCPCTL_PATH);
	ASSERT_EQ(0, MCP_MCPCTL(out, "tune", "list")) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, L2_STREAM));
	EXPECT_NE(NULL, strstr(out, "dma.wc_depth"));
	EXPECT_NE(NULL, strstr(out, self->l2_info.reason)) TH_LOG("%s", out);
	ASSERT_EQ(0, MCP_MCPCTL(out, "tune", "get", "dma.wc_depth", "--json")) TH_LOG("%s", out);
	snprintf(want, sizeof(want), "\"value\":%lld",
		 mcp_read_ll(MCP_SYSFS_DIR "/dma/wc_depth"));
	EXPECT_NE(NULL, strstr(out, want)) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "\"status\":\"read-only\"")) TH_LOG("%s", out);
	EXPECT_EQ(1, MCP_MCPCTL(out, "tune", "get", "no.such_knob"));
	EXPECT_NE(NULL, strstr(out, "no tuning knob 'no.such_knob'")) TH_LOG("%s", out);
	EXPECT_EQ(1, MCP_MCPCTL(out, "tune", "set", "dma.wc_depth=4"));
	EXPECT_NE(NULL, strstr(out, "written through /sys/class/misc/mcp/dma/wc_depth"))
		TH_LOG("%s", out);
	EXPECT_EQ(2, MCP_MCPCTL(out, "tune", "bogus"));
}

/* tune run: set for the command's lifetime; tune set/reset: committed. */
TEST_F(tune, mcpctl_run_set_reset)
{
	char out[16384], arg[64], want[64];
	__u64 boot = self->l2_info.value;
	struct mcp_tune_knob_info e;

	if (access(MCP_MCPCTL_PATH, X_OK))
		SKIP(return, "no %s in this image", MCP_MCPCTL_PATH);
	if (!self->writable) {
		EXPECT_EQ(1, MCP_MCPCTL(out, "tune", "run", "--set", L2_STREAM "=0", "--",
					"/bin/true"));
		EXPECT_NE(NULL, strstr(out, self->l2_info.reason)) TH_LOG("%s", out);
		return;
	}
	/* The command sees the value; its exit status comes through. */
	snprintf(arg, sizeof(arg), L2_STREAM "=%llu", (unsigned long long)!boot);
	snprintf(want, sizeof(want), "\"value\":%llu", (unsigned long long)!boot);
	EXPECT_EQ(3, MCP_MCPCTL(out, "tune", "run", "--set", arg, "--", "/bin/sh", "-c",
				MCP_MCPCTL_PATH " tune get " L2_STREAM " --json; exit 3"));
	EXPECT_NE(NULL, strstr(out, want)) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "\"held\":true")) TH_LOG("%s", out);
	EXPECT_EQ(boot, tune_value(self->fd, 0, L2_STREAM));

	ASSERT_EQ(0, MCP_MCPCTL(out, "tune", "set", arg)) TH_LOG("%s", out);
	ASSERT_LE(0, tune_find(self->fd, 0, L2_STREAM, &e));
	EXPECT_EQ(!boot, e.value);
	EXPECT_EQ(MCP_TUNE_STATE_COMMITTED, e.state & MCP_TUNE_STATE_COMMITTED);
	ASSERT_EQ(0, MCP_MCPCTL(out, "tune", "reset")) TH_LOG("%s", out);
	ASSERT_LE(0, tune_find(self->fd, 0, L2_STREAM, &e));
	EXPECT_EQ(boot, e.value);
	EXPECT_EQ(0, e.state & MCP_TUNE_STATE_COMMITTED);
	EXPECT_EQ(1, MCP_MCPCTL(out, "tune", "set", L2_STREAM "=2"));
	EXPECT_NE(NULL, strstr(out, "the range is 0..1")) TH_LOG("%s", out);
}

MCP_TEST_MAIN
