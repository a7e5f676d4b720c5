// SPDX-License-Identifier: GPL-2.0-only
/*
 * Lifetime of /dev/mcp and of mcp.ko: sysfs and debugfs counters follow
 * opens, closes and ioctls; open/close churn leaks nothing; an unprivileged
 * process cannot open the device; rmmod is refused while a file is open;
 * load/unload cycles start from zeroed counters every time.
 *
 * The module is loaded from $MCP_MODULE (default /lib/modules/mcp.ko) with
 * finit_module(); every test leaves it loaded.
 */
/* First: it defines _GNU_SOURCE for every libc header after it. */
#include "mcp_test.h"

#include <grp.h>
#include <sys/wait.h>

FIXTURE(life) {
	int unused;
};

FIXTURE_SETUP(life)
{
	ASSERT_EQ(0, mcp_ensure_loaded()) TH_LOG("cannot load %s", mcp_module_path());
}

FIXTURE_TEARDOWN(life)
{
	/* Leave the module loaded for the next test, whatever happened. */
	mcp_ensure_loaded();
}

TEST_F(life, sysfs_attributes)
{
	char buf[64];
	struct stat st;

	ASSERT_LT(0, mcp_read_file(MCP_SYSFS_DIR "/abi_version", buf, sizeof(buf)));
	EXPECT_STREQ("1.0\n", buf);
	ASSERT_LT(0, mcp_read_file(MCP_SYSFS_DIR "/features", buf, sizeof(buf)));
	EXPECT_EQ(MCP_FEAT_VERSION | MCP_FEAT_TOPOLOGY,
		  strtoull(buf, NULL, 0) & (MCP_FEAT_VERSION | MCP_FEAT_TOPOLOGY));
	EXPECT_EQ(0, mcp_open_fds());
	/* Read-only attributes: no write bits, and writes fail. */
	for (const char *const *a = (const char *const[]){ "abi_version", "open_fds",
							    "features", NULL }; *a; a++) {
		char path[128];
		int fd;

		snprintf(path, sizeof(path), MCP_SYSFS_DIR "/%s", *a);
		ASSERT_EQ(0, stat(path, &st)) TH_LOG("%s", path);
		EXPECT_EQ(0, st.st_mode & 0222) TH_LOG("%s mode %o", path, st.st_mode & 0777);
		fd = open(path, O_WRONLY);
		EXPECT_GT(0, fd) TH_LOG("%s opened for writing", path);
		if (fd >= 0)
			close(fd);
	}
	/* /dev/mcp is a character device owned by root. */
	ASSERT_EQ(0, stat(MCP_DEV_PATH, &st));
	EXPECT_TRUE(S_ISCHR(st.st_mode));
	EXPECT_EQ(0, st.st_uid);
	EXPECT_EQ(0, st.st_mode & 0007) TH_LOG("mode %o", st.st_mode & 0777);
}

TEST_F(life, open_fds_follows_opens)
{
	int fds[8];
	long long base = mcp_open_fds();

	ASSERT_EQ(0, base);
	ASSERT_EQ(0, mcp_counter("open_files"));
	for (int i = 0; i < 8; i++) {
		fds[i] = mcp_open();
		ASSERT_LE(0, fds[i]);
		EXPECT_EQ(i + 1, mcp_open_fds());
		EXPECT_EQ(i + 1, mcp_counter("open_files"));
	}
	/* dup() shares the open file: no new open. */
	int d = dup(fds[0]);

	ASSERT_LE(0, d);
	EXPECT_EQ(8, mcp_open_fds());
	close(fds[0]);
	EXPECT_EQ(8, mcp_open_fds());
	close(d);
	EXPECT_EQ(7, mcp_open_fds());
	for (int i = 1; i < 8; i++) {
		close(fds[i]);
		EXPECT_EQ(7 - i, mcp_open_fds());
	}
	EXPECT_EQ(0, mcp_counter("open_files"));
}

/* A child's inherited fd is released when the last holder closes it. */
TEST_F(life, fork_inherits_fd)
{
	int fd = mcp_open(), status;
	pid_t pid;

	ASSERT_LE(0, fd);
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		struct mcp_version v = { .size = sizeof(v) };

		_exit(mcp_ioctl(fd, MCP_IOC_GET_VERSION, &v) ? 1 : 0);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	EXPECT_EQ(1, mcp_open_fds());
	close(fd);
	EXPECT_EQ(0, mcp_open_fds());
}

TEST_F(life, ioctl_counters)
{
	struct mcp_version v = { .size = sizeof(v) };
	long long ioctls0, errors0;
	int fd = mcp_open();

	ASSERT_LE(0, fd);
	ioctls0 = mcp_counter("ioctls");
	errors0 = mcp_counter("ioctl_errors");
	ASSERT_LE(0, ioctls0);
	ASSERT_LE(0, errors0);
	for (int i = 0; i < 10; i++)
		ASSERT_EQ(0, mcp_ioctl(fd, MCP_IOC_GET_VERSION, &v));
	EXPECT_EQ(ioctls0 + 10, mcp_counter("ioctls"));
	EXPECT_EQ(errors0, mcp_counter("ioctl_errors"));
	v.flags = 1;
	EXPECT_EQ(-EINVAL, mcp_ioctl(fd, MCP_IOC_GET_VERSION, &v));
	EXPECT_EQ(-EFAULT, mcp_ioctl(fd, MCP_IOC_GET_VERSION, NULL));
	EXPECT_EQ(-ENOTTY, mcp_ioctl(fd, _IO(MCP_IOC_MAGIC, 0x42), NULL));
	EXPECT_EQ(ioctls0 + 13, mcp_counter("ioctls"));
	EXPECT_EQ(errors0 + 3, mcp_counter("ioctl_errors"));
	close(fd);
}

TEST_F_TIMEOUT(life, open_close_churn, 120)
{
	long long files0 = mcp_counter("open_files");

	ASSERT_EQ(0, files0);
	for (int i = 0; i < 5000; i++) {
		int fd = mcp_open();

		ASSERT_LE(0, fd) TH_LOG("open #%d: %s", i, strerror(errno));
		if (i % 100 == 0) {
			struct mcp_version v = { .size = sizeof(v) };

			ASSERT_EQ(0, mcp_ioctl(fd, MCP_IOC_GET_VERSION, &v));
		}
		ASSERT_EQ(0, close(fd));
	}
	EXPECT_EQ(0, mcp_counter("open_files"));
	EXPECT_EQ(0, mcp_open_fds());
}

/* Many files open at once, closed in a different order. */
TEST_F(life, many_open_files)
{
	enum { N = 512 };
	static int fds[N];

	for (int i = 0; i < N; i++) {
		fds[i] = mcp_open();
		ASSERT_LE(0, fds[i]) TH_LOG("open #%d: %s", i, strerror(errno));
	}
	EXPECT_EQ(N, mcp_open_fds());
	for (int i = 0; i < N; i += 2)
		close(fds[i]);
	EXPECT_EQ(N / 2, mcp_open_fds());
	for (int i = 1; i < N; i += 2)
		close(fds[i]);
	EXPECT_EQ(0, mcp_open_fds());
}

/* Drops to nobody/nogroup in a child and tries to open the device. */
TEST_F(life, unprivileged_open_eacces)
{
	int status;
	pid_t pid = fork();

	ASSERT_LE(0, pid);
	if (pid == 0) {
		int fd;

		if (setgroups(0, NULL) || setgid(65534) || setuid(65534))
			_exit(100);
		if (getuid() != 65534 || geteuid() != 65534)
			_exit(101);
		fd = open(MCP_DEV_PATH, O_RDWR | O_CLOEXEC);
		if (fd >= 0)
			_exit(0);
		_exit(errno == EACCES ? 1 : 2);
		/* 1: refused with EACCES (expected), 2: another error */
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	ASSERT_NE(100, WEXITSTATUS(status)) TH_LOG("could not drop privileges");
	EXPECT_EQ(1, WEXITSTATUS(status))
		TH_LOG("uid 65534 %s", WEXITSTATUS(status) == 0 ? "opened /dev/mcp" :
		       "failed with another errno than EACCES");
	EXPECT_EQ(0, mcp_open_fds());
}

/* Unload and load unbind and bind edu: 5-10 s each in the TCG VM. */
TEST_F_TIMEOUT(life, rmmod_refused_while_open, 120)
{
	struct mcp_version v = { .size = sizeof(v) };
	int fd = mcp_open(), ret;

	ASSERT_LE(0, fd);
	ret = mcp_unload_module(O_NONBLOCK);
	/* kernel/module/main.c: try_stop_module() returns -EWOULDBLOCK. */
	EXPECT_EQ(-EWOULDBLOCK, ret) TH_LOG("delete_module: %s", strerror(-ret));
	ASSERT_TRUE(mcp_module_loaded()) TH_LOG("module unloaded under an open fd");
	/* The open file still works. */
	EXPECT_EQ(0, mcp_ioctl(fd, MCP_IOC_GET_VERSION, &v));
	EXPECT_EQ(1, mcp_open_fds());
	/* Also refused with the fd only held by a dup(). */
	int d = dup(fd);

	close(fd);
	EXPECT_EQ(-EWOULDBLOCK, mcp_unload_module(O_NONBLOCK));
	close(d);
	/* Last close: now it goes. */
	EXPECT_EQ(0, mcp_unload_module(O_NONBLOCK));
	EXPECT_FALSE(mcp_module_loaded());
	EXPECT_EQ(0, mcp_wait_path(MCP_DEV_PATH, 0));
	EXPECT_NE(0, access(MCP_SYSFS_DIR, F_OK));
	EXPECT_NE(0, access("/sys/kernel/debug/mcp", F_OK));
	ASSERT_EQ(0, mcp_load_module());
	ASSERT_EQ(0, mcp_wait_path(MCP_DEV_PATH, 1));
}

/* The module refuses a second load and unload of a missing module fails. */
TEST_F_TIMEOUT(life, double_load_and_unload, 120)
{
	EXPECT_EQ(-EEXIST, mcp_load_module());
	ASSERT_EQ(0, mcp_unload_module(O_NONBLOCK));
	EXPECT_EQ(-ENOENT, mcp_unload_module(O_NONBLOCK));
	ASSERT_EQ(0, mcp_load_module());
}

TEST_F_TIMEOUT(life, load_unload_cycles, 600)
{
	for (int cycle = 0; cycle < 10; cycle++) {
		struct mcp_version v = { .size = sizeof(v) };
		struct mcp_topology t = { .size = sizeof(t), .flags = 1 };
		int fds[4];

		ASSERT_EQ(0, mcp_unload_module(O_NONBLOCK)) TH_LOG("cycle %d", cycle);
		ASSERT_EQ(0, mcp_wait_path(MCP_DEV_PATH, 0)) TH_LOG("cycle %d", cycle);
		ASSERT_EQ(0, mcp_load_module()) TH_LOG("cycle %d", cycle);
		ASSERT_EQ(0, mcp_wait_path(MCP_DEV_PATH, 1)) TH_LOG("cycle %d", cycle);
		/* Fresh module, fresh counters. */
		EXPECT_EQ(0, mcp_counter("open_files")) TH_LOG("cycle %d", cycle);
		EXPECT_EQ(0, mcp_counter("ioctls")) TH_LOG("cycle %d", cycle);
		EXPECT_EQ(0, mcp_counter("ioctl_errors")) TH_LOG("cycle %d", cycle);
		EXPECT_EQ(0, mcp_open_fds());
		for (int i = 0; i < 4; i++) {
			fds[i] = mcp_open();
			ASSERT_LE(0, fds[i]);
			EXPECT_EQ(0, mcp_ioctl(fds[i], MCP_IOC_GET_VERSION, &v));
			EXPECT_EQ(-EINVAL, mcp_ioctl(fds[i], MCP_IOC_GET_TOPOLOGY, &t));
		}
		EXPECT_EQ(4, mcp_open_fds());
		EXPECT_EQ(8, mcp_counter("ioctls"));
		EXPECT_EQ(4, mcp_counter("ioctl_errors"));
		EXPECT_EQ(-EWOULDBLOCK, mcp_unload_module(O_NONBLOCK));
		for (int i = 0; i < 4; i++)
			close(fds[i]);
		EXPECT_EQ(0, mcp_counter("open_files")) TH_LOG("cycle %d", cycle);
	}
}

MCP_TEST_MAIN
