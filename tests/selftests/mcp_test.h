/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Helpers shared by the MCP selftests (run inside the test VM by
 * tests/vm/run-vm.py): opening /dev/mcp, reading and writing sysfs and
 * debugfs values, dropping a capability, unmapped and read-only memory for
 * -EFAULT tests, module load/unload, and a main() that can run a single
 * test.
 *
 * The kselftest_harness.h of Linux 6.1 has no test filter, so
 * MCP_TEST_MAIN adds one:
 *
 *   mcp_xxx_test -l              list the tests as FIXTURE.NAME
 *   mcp_xxx_test -t NAME         run only tests named NAME or FIXTURE.NAME
 *   mcp_xxx_test -f FIXTURE      run only the tests of FIXTURE
 */
#ifndef MCP_SELFTEST_H
#define MCP_SELFTEST_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <linux/capability.h>
#include <linux/userfaultfd.h>
#include <linux/mcp.h>

#include "kselftest_harness.h"

#define MCP_DEV_PATH		"/dev/" MCP_DEVICE_NAME
#define MCP_SYSFS_DIR		"/sys/class/misc/" MCP_DEVICE_NAME
#define MCP_DEBUGFS_COUNTERS	"/sys/kernel/debug/mcp/counters"
#define MCP_DEFAULT_MODULE	"/lib/modules/mcp.ko"

/* An ioctl that returns -errno instead of -1/errno, for ASSERT_EQ(). */
static inline int mcp_ioctl(int fd, unsigned long cmd, void *arg)
{
	return ioctl(fd, cmd, arg) < 0 ? -errno : 0;
}

static inline int mcp_open(void)
{
	return open(MCP_DEV_PATH, O_RDWR | O_CLOEXEC);
}

/* Reads a small file into buf (NUL-terminated); returns length or -errno. */
static inline ssize_t mcp_read_file(const char *path, char *buf, size_t len)
{
	ssize_t n, total = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	while ((size_t)total < len - 1) {
		n = read(fd, buf + total, len - 1 - total);
		if (n < 0) {
			n = -errno;
			close(fd);
			return n;
		}
		if (n == 0)
			break;
		total += n;
	}
	buf[total] = '\0';
	close(fd);
	return total;
}

/* Parses a cpulist/nodelist ("0-3,5") into set[] (may be NULL), which the
 * caller zeroes: only the listed entries are set.  Returns the count of
 * entries below max, or -1 for a malformed list. */
static inline int mcp_parse_list(const char *s, unsigned char *set, int max)
{
	int n = 0;

	while (*s && *s != '\n') {
		char *end;
		long a = strtol(s, &end, 10), b = a;

		if (end == s)
			return -1;
		s = end;
		if (*s == '-') {
			b = strtol(s + 1, &end, 10);
			s = end;
		}
		for (long i = a; i <= b && i < max; i++) {
			if (set)
				set[i] = 1;
			n++;
		}
		if (*s == ',')
			s++;
	}
	return n;
}

/* Reads a file holding one decimal or 0x-hex integer; -1 when unreadable. */
static inline long long mcp_read_ll(const char *path)
{
	char buf[64], *end;
	long long v;

	if (mcp_read_file(path, buf, sizeof(buf)) <= 0)
		return -1;
	errno = 0;
	v = strtoll(buf, &end, 0);
	if (errno || end == buf || (*end && *end != '\n'))
		return -1;
	return v;
}

/*
 * Whether node @n has memory (/sys/devices/system/node/has_memory): a
 * memoryless node (the memless topology's node 2) cannot hold a buffer.
 * Unreadable: 1, as on kernels that have no memoryless nodes.
 */
static inline int mcp_node_has_memory(int n)
{
	unsigned char set[64] = { 0 };
	char buf[256];

	if (mcp_read_file("/sys/devices/system/node/has_memory", buf, sizeof(buf)) <= 0 ||
	    mcp_parse_list(buf, set, 64) < 0)
		return 1;
	return n >= 0 && n < 64 && set[n];
}

/* The first CPU of node @n (its nodeN/cpulist); -1 for none. */
static inline int mcp_node_first_cpu(int n)
{
	char path[96], buf[1024], *end;
	long cpu;

	snprintf(path, sizeof(path), "/sys/devices/system/node/node%d/cpulist", n);
	if (n < 0 || mcp_read_file(path, buf, sizeof(buf)) <= 0)
		return -1;
	cpu = strtol(buf, &end, 10);
	return end == buf ? -1 : (int)cpu;
}

/* Runs the calling thread on @cpu only; 0 or -errno. */
static inline int mcp_pin_to_cpu(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return sched_setaffinity(0, sizeof(set), &set) ? -errno : 0;
}

static inline long long mcp_open_fds(void)
{
	return mcp_read_ll(MCP_SYSFS_DIR "/open_fds");
}

/* One line "NAME N" of the debugfs counters file; -1 when missing. */
static inline long long mcp_counter(const char *name)
{
	char buf[4096], *line, *save = NULL;
	size_t nlen = strlen(name);

	if (mcp_read_file(MCP_DEBUGFS_COUNTERS, buf, sizeof(buf)) <= 0)
		return -1;
	for (line = strtok_r(buf, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		if (!strncmp(line, name, nlen) && line[nlen] == ' ')
			return strtoll(line + nlen + 1, NULL, 10);
	}
	return -1;
}

/* Waits up to 5 s for a debugfs counter to read @want; its last value. */
static inline long long mcp_counter_settles(const char *name, long long want)
{
	long long v = -1;

	for (int i = 0; i < 500; i++) {
		v = mcp_counter(name);
		if (v == want)
			break;
		usleep(10000);
	}
	return v;
}

/* Writes a string to a sysfs file in one write(); 0 or -errno. */
static inline int mcp_write_file(const char *path, const char *val)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = write(fd, val, strlen(val));
	n = n < 0 ? -errno : 0;
	close(fd);
	return n;
}

/*
 * Drops capability cap from this process's effective, permitted and
 * inheritable sets (a forked child does this before a permission test).
 */
static inline int mcp_drop_cap(int cap)
{
	struct __user_cap_header_struct hdr = {
		.version = _LINUX_CAPABILITY_VERSION_3,
	};
	struct __user_cap_data_struct data[2];

	if (syscall(SYS_capget, &hdr, data))
		return -errno;
	data[cap / 32].effective &= ~(1U << (cap % 32));
	data[cap / 32].permitted &= ~(1U << (cap % 32));
	data[cap / 32].inheritable &= ~(1U << (cap % 32));
	return syscall(SYS_capset, &hdr, data) ? -errno : 0;
}

/* A page-aligned address with nothing mapped behind it. */
static inline void *mcp_unmapped_addr(void)
{
	long pg = sysconf(_SC_PAGESIZE);
	void *p = mmap(NULL, 4 * pg, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return (void *)16;	/* the first page is never mapped */
	munmap(p, 4 * pg);
	return (char *)p + pg;
}

/*
 * Two pages: the first read-write, the second PROT_NONE.  Returns the start;
 * an object placed to end at start + page_size() is followed by a hole.
 */
static inline void *mcp_guarded_page(void)
{
	long pg = sysconf(_SC_PAGESIZE);
	char *p = mmap(NULL, 2 * pg, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return NULL;
	if (mprotect(p + pg, pg, PROT_NONE)) {
		munmap(p, 2 * pg);
		return NULL;
	}
	return p;
}

/*
 * @pages anonymous pages, the first @pages - @blocked faulted in, the
 * last @blocked registered with a userfaultfd: a kernel copy into those
 * waits until the test lets it go.  *@uffd is the userfaultfd
 * (non-blocking; mcp_uffd_wait_fault() sees the fault); munmap() the
 * blocked pages, then close it, and the waiting copy fails with -EFAULT.
 * Needs CAP_SYS_PTRACE for faults in kernel mode (the VM runs as root).
 */
static inline char *mcp_uffd_pages(size_t pages, size_t blocked, int *uffd)
{
	long pg = sysconf(_SC_PAGESIZE);
	struct uffdio_api api = { .api = UFFD_API };
	struct uffdio_register reg = { .mode = UFFDIO_REGISTER_MODE_MISSING };
	char *p;

	*uffd = syscall(__NR_userfaultfd, O_CLOEXEC | O_NONBLOCK);
	if (*uffd < 0)
		return NULL;
	p = mmap(NULL, pages * pg, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		goto err_close;
	memset(p, 0, (pages - blocked) * pg);
	reg.range.start = (uintptr_t)(p + (pages - blocked) * pg);
	reg.range.len = blocked * pg;
	if (ioctl(*uffd, UFFDIO_API, &api) || ioctl(*uffd, UFFDIO_REGISTER, &reg))
		goto err_unmap;
	return p;

err_unmap:
	munmap(p, pages * pg);
err_close:
	close(*uffd);
	*uffd = -1;
	return NULL;
}

/* Waits up to @ms for a fault on @uffd: its address, or 0. */
static inline uintptr_t mcp_uffd_wait_fault(int uffd, int ms)
{
	struct uffd_msg msg;

	for (int i = 0; i < ms; i++) {
		if (read(uffd, &msg, sizeof(msg)) == sizeof(msg) &&
		    msg.event == UFFD_EVENT_PAGEFAULT)
			return msg.arg.pagefault.address;
		usleep(1000);
	}
	return 0;
}

/* Module control through the raw syscalls (no libkmod in the VM). */
static inline const char *mcp_module_path(void)
{
	const char *p = getenv("MCP_MODULE");

	return p && *p ? p : MCP_DEFAULT_MODULE;
}

static inline int mcp_module_loaded(void)
{
	return access("/sys/module/mcp", F_OK) == 0;
}

/* finit_module() of the module file; 0 or -errno. */
static inline int mcp_load_module(void)
{
	int fd = open(mcp_module_path(), O_RDONLY | O_CLOEXEC);
	int ret;

	if (fd < 0)
		return -errno;
	ret = syscall(SYS_finit_module, fd, "", 0) ? -errno : 0;
	close(fd);
	return ret;
}

/* delete_module("mcp", flags); 0 or -errno. */
static inline int mcp_unload_module(unsigned int flags)
{
	return syscall(SYS_delete_module, MCP_DEVICE_NAME, flags) ? -errno : 0;
}

/* Waits up to ~5 s for path to appear (want=1) or vanish (want=0). */
static inline int mcp_wait_path(const char *path, int want)
{
	int i;

	for (i = 0; i < 500; i++) {
		if ((access(path, F_OK) == 0) == want)
			return 0;
		usleep(10000);
	}
	return -ETIMEDOUT;
}

/* Loads the module if it is not loaded and waits for /dev/mcp. */
static inline int mcp_ensure_loaded(void)
{
	int ret = 0;

	if (!mcp_module_loaded()) {
		ret = mcp_load_module();
		if (ret && ret != -EEXIST)
			return ret;
	}
	return mcp_wait_path(MCP_DEV_PATH, 1);
}

static inline int mcp_filter_matches(const char *filter,
				     const char *fixture, const char *test)
{
	size_t flen = strlen(fixture);

	if (!strcmp(filter, test))
		return 1;
	return !strncmp(filter, fixture, flen) && filter[flen] == '.' &&
	       !strcmp(filter + flen + 1, test);
}

/* Drops the tests not selected by -t/-f; -l lists and exits. */
static inline void mcp_select_tests(int argc, char **argv)
{
	const char *test = NULL, *fixture = NULL;
	struct __fixture_metadata *f;
	struct __test_metadata *t, *next, *kept, **tail;
	int opt, list = 0, nr = 0;

	while ((opt = getopt(argc, argv, "t:f:lh")) != -1) {
		switch (opt) {
		case 't':
			test = optarg;
			break;
		case 'f':
			fixture = optarg;
			break;
		case 'l':
			list = 1;
			break;
		default:
			fprintf(stderr, "usage: %s [-l] [-t [FIXTURE.]NAME] [-f FIXTURE]\n",
				argv[0]);
			exit(opt == 'h' ? 0 : 2);
		}
	}
	for (f = __fixture_list; f; f = f->next) {
		kept = NULL;
		tail = &kept;
		for (t = f->tests; t; t = next) {
			next = t->next;
			if (test && !mcp_filter_matches(test, f->name, t->name))
				continue;
			if (fixture && strcmp(fixture, f->name))
				continue;
			if (list)
				printf("%s.%s\n", f->name, t->name);
			*tail = t;
			tail = &t->next;
			nr++;
		}
		*tail = NULL;
		f->tests = kept;
	}
	if (list)
		exit(0);
	if ((test || fixture) && !nr)
		printf("# no test matches%s%s%s%s\n", test ? " -t " : "",
		       test ?: "", fixture ? " -f " : "", fixture ?: "");
}

#define MCP_TEST_MAIN							\
	int main(int argc, char **argv)					\
	{								\
		mcp_select_tests(argc, argv);				\
		return test_harness_run(argc, argv);			\
	}

/* Where the VM image installs mcpctl. */
#define MCP_MCPCTL_PATH	"/opt/mcp/bin/mcpctl"

/*
 * Starts mcpctl with @argv (NULL-terminated, without argv[0]) as @uid (0:
 * unchanged), its stdout and stderr into a pipe.  Returns its pid and the
 * pipe's read end in @fd, or -1.
 */
static inline pid_t mcp_start_mcpctl(int *fd, uid_t uid, const char *const *argv)
{
	const char *args[32] = { "mcpctl" };
	int pipefd[2];
	size_t n = 1;
	pid_t pid;

	while (argv[n - 1] && n < 31) {
		args[n] = argv[n - 1];
		n++;
	}
	args[n] = NULL;
	if (pipe(pipefd))
		return -1;
	pid = fork();
	if (pid < 0) {
		close(pipefd[0]);
		close(pipefd[1]);
		return -1;
	}
	if (pid == 0) {
		dup2(pipefd[1], 1);
		dup2(pipefd[1], 2);
		close(pipefd[0]);
		close(pipefd[1]);
		if (uid && (setgid(uid) || setuid(uid)))
			_exit(125);
		execv(MCP_MCPCTL_PATH, (char *const *)args);
		_exit(126);
	}
	close(pipefd[1]);
	*fd = pipefd[0];
	return pid;
}

/*
 * Reads @fd to its end (or until @out is full) into @out, NUL-terminated,
 * closes it and reaps @pid.  Returns mcpctl's exit status, or -1.
 */
static inline int mcp_finish_mcpctl(pid_t pid, int fd, char *out, size_t len)
{
	size_t total = 0;
	int status;

	for (;;) {
		ssize_t r = read(fd, out + total, len - 1 - total);

		if (r <= 0)
			break;
		total += r;
		if (total >= len - 1)
			break;
	}
	out[total] = '\0';
	close(fd);
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return -1;
	return WEXITSTATUS(status);
}

/*
 * Runs mcpctl with @argv (NULL-terminated, without argv[0]) as @uid (0:
 * unchanged); stdout and stderr go to @out (NUL-terminated).  Returns the
 * exit status, or -1.
 */
static inline int mcp_run_mcpctl_as(char *out, size_t len, uid_t uid,
				    const char *const *argv)
{
	int fd;
	pid_t pid = mcp_start_mcpctl(&fd, uid, argv);

	return pid < 0 ? -1 : mcp_finish_mcpctl(pid, fd, out, len);
}

static inline int mcp_run_mcpctl(char *out, size_t len, const char *const *argv)
{
	return mcp_run_mcpctl_as(out, len, 0, argv);
}

#define MCP_MCPCTL(out, ...) \
	mcp_run_mcpctl(out, sizeof(out), (const char *const[]){ __VA_ARGS__, NULL })

#endif /* MCP_SELFTEST_H */
