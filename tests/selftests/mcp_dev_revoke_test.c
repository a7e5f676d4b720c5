// SPDX-License-Identifier: GPL-2.0-only
/*
 * Revocation of accelerator devices (uapi/linux/mcp.h, "Accelerator
 * devices"): unbinding through sysfs while a process holds a BAR mapping
 * and an eventfd (its next access is SIGBUS, its ioctls -ENODEV, its fd
 * still closes), binding again, a function reset (mappings fault back in),
 * module unload with a device fd open, and threads mapping and calling
 * ioctls while another unbinds and rebinds; the debugfs object counters
 * return to where they started.
 *
 * Binding edu is slow in the test VM (pci_enable_device() runs ACPI _PRT
 * for its INTx pin: seconds under TCG with slub_debug=FZPU), so edu is
 * unbound and bound only where its interrupts matter; the repeated cycles
 * use pci-testdev, which has no interrupt pin.
 */
#include "mcp_dev.h"

#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <sys/wait.h>

/* debugfs counters of live device objects: each returns to its start. */
static const char * const dev_counters[] = {
	"device_objects", "device_files", "bar_mappings", "irq_eventfds",
};

/*
 * SIGBUS recovery: a thread that arms its jump buffer gets back from a
 * revoked access with the faulting address instead of dying.
 */
static __thread sigjmp_buf bus_jmp;
static __thread volatile sig_atomic_t bus_armed;
static __thread void *volatile bus_addr;

static void bus_handler(int sig, siginfo_t *si, void *uc)
{
	if (!bus_armed) {
		signal(SIGBUS, SIG_DFL);
		raise(SIGBUS);
		return;
	}
	bus_armed = 0;
	bus_addr = si->si_addr;
	siglongjmp(bus_jmp, 1);
}

static void catch_sigbus(void)
{
	struct sigaction sa = { .sa_sigaction = bus_handler, .sa_flags = SA_SIGINFO };

	sigemptyset(&sa.sa_mask);
	sigaction(SIGBUS, &sa, NULL);
}

/*
 * Reads a 32-bit register; returns 0 and the value, or -EFAULT when the
 * access raised SIGBUS (the address in bus_addr).
 */
static int read32_or_sigbus(volatile void *base, size_t off, __u32 *val)
{
	if (sigsetjmp(bus_jmp, 1))
		return -EFAULT;
	bus_armed = 1;
	*val = mmio_read32(base, off);
	bus_armed = 0;
	return 0;
}

static int write32_or_sigbus(volatile void *base, size_t off, __u32 val)
{
	if (sigsetjmp(bus_jmp, 1))
		return -EFAULT;
	bus_armed = 1;
	mmio_write32(base, off, val);
	bus_armed = 0;
	return 0;
}

static int read8_or_sigbus(volatile void *base, size_t off, __u8 *val)
{
	if (sigsetjmp(bus_jmp, 1))
		return -EFAULT;
	bus_armed = 1;
	*val = mmio_read8(base, off);
	bus_armed = 0;
	return 0;
}

static void read_counters(long long *v)
{
	for (size_t i = 0; i < ARRAY_SIZE(dev_counters); i++)
		v[i] = mcp_counter(dev_counters[i]);
}

FIXTURE(revoke) {
	int fd;
	long pg;
	int idx;
	char addr[MCP_PCI_ADDR_LEN];
	struct mcp_dev_info info;
};

FIXTURE_SETUP(revoke)
{
	struct mcp_version v = { .size = sizeof(v) };

	self->pg = sysconf(_SC_PAGESIZE);
	ASSERT_EQ(0, mcp_ensure_loaded());
	self->fd = mcp_open();
	ASSERT_LE(0, self->fd);
	ASSERT_EQ(0, mcp_ioctl(self->fd, MCP_IOC_GET_VERSION, &v));
	ASSERT_TRUE(v.features & MCP_FEAT_DEVICES) TH_LOG("MCP_FEAT_DEVICES not reported");
	ASSERT_EQ(0, mcp_pci_find(EDU_VENDOR, EDU_DEVICE, self->addr))
		TH_LOG("no edu device (1234:11e8) in the VM");
	self->idx = mcp_dev_ensure_listed(self->fd, self->addr, &self->info);
	ASSERT_LE(0, self->idx) TH_LOG("edu %s not listed", self->addr);
	catch_sigbus();
}

FIXTURE_TEARDOWN(revoke)
{
	/* Leave edu bound for the next test, whatever happened. */
	if (self->addr[0] && !mcp_pci_bound(self->addr))
		mcp_pci_bind(self->addr);
	if (self->fd >= 0)
		close(self->fd);
}

/* ---- Threads using a device while it is unbound and bound ---- */

#define STRESS_WORKERS	4

struct stress {
	int fd;
	const char *addr;
	int edu;		/* edu (ID register, interrupts) or pci-testdev */
	volatile int stop;
	pthread_mutex_t lock;
	int bad;		/* unexpected results */
	char first_bad[160];
	long ops, sigbus, enodev;
};

static void stress_bad(struct stress *s, const char *what, long v)
{
	pthread_mutex_lock(&s->lock);
	if (!s->bad++)
		snprintf(s->first_bad, sizeof(s->first_bad), "%s: %ld", what, v);
	pthread_mutex_unlock(&s->lock);
}

/*
 * Reads the device through a mapping that may be revoked under it:
 * 1 when it faulted, 0 when it read what the device holds, -1 otherwise.
 */
static int stress_touch(struct stress *s, volatile void *regs, unsigned int n)
{
	__u32 v;
	__u8 b;

	for (int k = 0; k < 8; k++) {
		if (s->edu) {
			if (read32_or_sigbus(regs, EDU_REG_ID, &v))
				return 1;
			/* A stale mapping of a disabled device reads ~0. */
			if (v != EDU_ID) {
				stress_bad(s, "ID register read", v);
				return -1;
			}
			continue;
		}
		if (write32_or_sigbus(regs, TESTDEV_REG_TEST, 0) ||
		    read8_or_sigbus(regs, TESTDEV_REG_NAME, &b))
			return 1;
		/* Test 0 selected, or not yet after a bind: "m" or 0. */
		if (b != TESTDEV_TEST0_NAME[0] && b) {
			stress_bad(s, "pci-testdev header read", b);
			return -1;
		}
	}
	/* An interrupt in flight while the device goes away. */
	if (s->edu && !write32_or_sigbus(regs, EDU_REG_STATUS, EDU_STATUS_IRQ_FACT))
		write32_or_sigbus(regs, EDU_REG_FACTORIAL, 1 + n % 12);
	return 0;
}

static void *stress_worker(void *arg)
{
	struct stress *s = arg;
	struct mcp_dev_info info;
	struct mcp_bar_info b;
	long ops = 0, sigbus = 0, enodev = 0;
	int efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	unsigned int n = 0;

	while (!s->stop) {
		volatile void *regs;
		int idx, devfd, ret;

		ops++;
		idx = mcp_dev_find(s->fd, s->addr, &info);
		if (idx < 0) {
			if (idx != -ENOENT && idx != -ENODEV)
				stress_bad(s, "DEV_LIST/DEV_INFO", idx);
			usleep(1000);
			continue;
		}
		devfd = mcp_dev_open(s->fd, idx);
		if (devfd < 0) {
			if (devfd != -ENODEV)
				stress_bad(s, "DEV_OPEN", devfd);
			enodev++;
			continue;
		}
		ret = mcp_bar_info(devfd, 0, &b);
		if (ret) {
			if (ret != -ENODEV)
				stress_bad(s, "BAR_INFO", ret);
			enodev++;
			close(devfd);
			continue;
		}
		regs = mmap(NULL, b.len, PROT_READ | PROT_WRITE, MAP_SHARED, devfd, b.offset);
		if (regs == MAP_FAILED) {
			if (errno != ENODEV)
				stress_bad(s, "mmap", -errno);
			enodev++;
			close(devfd);
			continue;
		}
		/*
		 * edu: another worker's open may own vector 0 (-EBUSY until
		 * it closes); pci-testdev has no vectors: -EINVAL while bound.
		 */
		ret = mcp_irq_set_eventfd(devfd, 0, efd);
		if (ret && ret != -ENODEV && ret != (s->edu ? -EBUSY : -EINVAL))
			stress_bad(s, "IRQ_SET_EVENTFD", ret);
		sigbus += stress_touch(s, regs, n++) == 1;
		munmap((void *)regs, b.len);
		if (close(devfd))
			stress_bad(s, "close", -errno);
	}
	close(efd);
	pthread_mutex_lock(&s->lock);
	s->ops += ops;
	s->sigbus += sigbus;
	s->enodev += enodev;
	pthread_mutex_unlock(&s->lock);
	return NULL;
}

/* Starts the workers on s->addr. */
static int stress_start(struct stress *s, pthread_t *th)
{
	for (int i = 0; i < STRESS_WORKERS; i++) {
		if (pthread_create(&th[i], NULL, stress_worker, s))
			return -1;
	}
	return 0;
}

/*
 * Stops the workers; the device must be bound and working, with no object
 * of the storm left (the counters as c0, read before it).
 */
static void stress_finish(struct __test_metadata *_metadata, struct stress *s,
			  pthread_t *th, const long long *c0, int cycles)
{
	long long c1[ARRAY_SIZE(dev_counters)];
	struct mcp_dev_info info;

	s->stop = 1;
	for (int i = 0; i < STRESS_WORKERS; i++)
		pthread_join(th[i], NULL);
	TH_LOG("%s: %d unbinds, %ld rounds, %ld SIGBUS, %ld -ENODEV, %d unexpected",
	       s->addr, cycles, s->ops, s->sigbus, s->enodev, s->bad);
	EXPECT_EQ(0, s->bad) TH_LOG("first unexpected result: %s", s->first_bad);
	EXPECT_LT(STRESS_WORKERS * cycles, s->ops);
	EXPECT_TRUE(mcp_pci_bound(s->addr));
	EXPECT_LE(0, mcp_dev_find(s->fd, s->addr, &info));
	EXPECT_EQ(0, info.open_count);
	read_counters(c1);
	for (size_t i = 0; i < ARRAY_SIZE(dev_counters); i++) {
		EXPECT_LE(0, c0[i]) TH_LOG("debugfs counter %s missing", dev_counters[i]);
		EXPECT_EQ(c0[i], c1[i]) TH_LOG("counter %s", dev_counters[i]);
	}
}

/* ---- Unbinding, binding, resetting ---- */

/* Child failures, one bit each, so the parent can say what went wrong. */
enum {
	CHILD_SETUP = 1 << 0,
	CHILD_NO_SIGBUS = 1 << 1,
	CHILD_SIGBUS_ADDR = 1 << 2,
	CHILD_BAR_INFO = 1 << 3,
	CHILD_SET_EVENTFD = 1 << 4,
	CHILD_MMAP = 1 << 5,
	CHILD_CLOSE = 1 << 6,
};

static const char * const child_fail[] = {
	"setup", "no SIGBUS on the revoked mapping", "SIGBUS at the wrong address",
	"BAR_INFO not -ENODEV", "IRQ_SET_EVENTFD/IRQ_UNMASK not -ENODEV",
	"mmap not -ENODEV", "close/munmap failed",
};

/*
 * The child: open edu, map BAR0, connect an eventfd, say ready, wait for
 * the unbind, then touch everything.
 */
static int revoked_child(int ready, int go, __u32 idx)
{
	struct mcp_bar_info b, b0;
	struct mcp_irq_unmask u = { .size = sizeof(u) };
	int fd, devfd, efd, fails = 0, ret;
	volatile void *regs;
	size_t len;
	__u32 v;
	char c;

	fd = mcp_open();
	devfd = fd < 0 ? -1 : mcp_dev_open(fd, idx);
	efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (devfd < 0 || efd < 0)
		return CHILD_SETUP;
	regs = mcp_bar_map(devfd, 0, 0, &len);
	if (regs == MAP_FAILED || mcp_bar_info(devfd, 0, &b0) ||
	    mcp_irq_set_eventfd(devfd, 0, efd) ||
	    mmio_read32(regs, EDU_REG_ID) != EDU_ID)
		return CHILD_SETUP;
	close(fd);
	if (write(ready, "r", 1) != 1 || read(go, &c, 1) != 1)
		return CHILD_SETUP;

	if (!read32_or_sigbus(regs, EDU_REG_ID, &v)) {
		fprintf(stderr, "# child: read 0x%x from a revoked mapping\n", v);
		fails |= CHILD_NO_SIGBUS;
	} else if (bus_addr != (char *)regs + EDU_REG_ID) {
		fprintf(stderr, "# child: SIGBUS at %p, mapping at %p\n", bus_addr, regs);
		fails |= CHILD_SIGBUS_ADDR;
	}
	/* Writes fault too. */
	if (!write32_or_sigbus(regs, EDU_REG_LIVENESS, 1))
		fails |= CHILD_NO_SIGBUS;
	ret = mcp_bar_info(devfd, 0, &b);
	if (ret != -ENODEV) {
		fprintf(stderr, "# child: BAR_INFO after unbind: %d\n", ret);
		fails |= CHILD_BAR_INFO;
	}
	ret = mcp_irq_set_eventfd(devfd, 0, efd);
	if (ret != -ENODEV || mcp_irq_set_eventfd(devfd, 0, -1) != -ENODEV ||
	    mcp_ioctl(devfd, MCP_IOC_IRQ_UNMASK, &u) != -ENODEV) {
		fprintf(stderr, "# child: IRQ ioctls after unbind: %d\n", ret);
		fails |= CHILD_SET_EVENTFD;
	}
	ret = mcp_try_mmap(devfd, 4096, PROT_READ, MAP_SHARED, b0.offset);
	if (ret != -ENODEV) {
		fprintf(stderr, "# child: mmap after unbind: %d\n", ret);
		fails |= CHILD_MMAP;
	}
	if (munmap((void *)regs, len) || close(devfd) || close(efd))
		fails |= CHILD_CLOSE;
	return fails;
}

/*
 * The whole story on edu, whose binding is slow: a child holds a mapping
 * and an eventfd, threads map, call ioctls and raise interrupts, and the
 * device is unbound under all of them, then bound again.
 */
TEST_F_TIMEOUT(revoke, unbind_sigbus_enodev_rebind, 120)
{
	struct stress s = { .fd = self->fd, .addr = self->addr, .edu = 1,
			    .lock = PTHREAD_MUTEX_INITIALIZER };
	int ready[2], go[2], status, idx, devfd, efd;
	long long c0[ARRAY_SIZE(dev_counters)];
	pthread_t th[STRESS_WORKERS];
	struct mcp_dev_info info;
	volatile void *regs;
	size_t len;
	pid_t pid;
	char c;

	read_counters(c0);
	ASSERT_EQ(0, pipe2(ready, O_CLOEXEC));
	ASSERT_EQ(0, pipe2(go, O_CLOEXEC));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0)
		_exit(revoked_child(ready[1], go[0], self->idx));
	close(ready[1]);
	close(go[0]);
	ASSERT_EQ(1, read(ready[0], &c, 1)) TH_LOG("child failed before the unbind");
	/* Threads only now: the child forked without them. */
	ASSERT_EQ(0, stress_start(&s, th));
	usleep(200000);

	/* Unbinding does not wait for the child's fd or mapping. */
	ASSERT_EQ(0, mcp_pci_unbind(self->addr));
	EXPECT_FALSE(mcp_pci_bound(self->addr));
	EXPECT_EQ(-ENOENT, mcp_dev_find(self->fd, self->addr, &info));
	EXPECT_EQ(-ENODEV, mcp_dev_info(self->fd, self->idx, &info));
	EXPECT_EQ(-ENODEV, mcp_dev_open(self->fd, self->idx));
	ASSERT_EQ(1, write(go[1], "g", 1));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status)) TH_LOG("child killed by signal %d",
					      WIFSIGNALED(status) ? WTERMSIG(status) : 0);
	for (size_t i = 0; i < ARRAY_SIZE(child_fail); i++) {
		EXPECT_EQ(0, WEXITSTATUS(status) & (1 << i)) TH_LOG("child: %s", child_fail[i]);
	}
	close(ready[0]);
	close(go[1]);

	/* Bind again: the threads find it and use it again. */
	ASSERT_EQ(0, mcp_pci_bind(self->addr));
	usleep(300000);
	stress_finish(_metadata, &s, th, c0, 1);

	/* Listed, opened, mapped, interrupting. */
	idx = mcp_dev_find(self->fd, self->addr, &info);
	ASSERT_LE(0, idx);
	EXPECT_STREQ("edu", info.backend);
	EXPECT_EQ(0, info.open_count);
	devfd = mcp_dev_open(self->fd, idx);
	ASSERT_LE(0, devfd);
	regs = mcp_bar_map(devfd, 0, 0, &len);
	ASSERT_NE(MAP_FAILED, regs);
	EXPECT_EQ(EDU_ID, mmio_read32(regs, EDU_REG_ID));
	efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	ASSERT_LE(0, efd);
	ASSERT_EQ(0, mcp_irq_set_eventfd(devfd, 0, efd));
	EXPECT_EQ(factorial32(10), edu_factorial(regs, 10, 1));
	EXPECT_EQ(1, mcp_eventfd_wait(efd, 2000));
	munmap((void *)regs, len);
	close(devfd);
	close(efd);
}

/* Unbind with nothing open, several times: each bind is a working device. */
TEST_F(revoke, unbind_bind_cycles)
{
	long long c0[ARRAY_SIZE(dev_counters)], c1[ARRAY_SIZE(dev_counters)];
	char addr[MCP_PCI_ADDR_LEN];
	struct mcp_dev_info info;
	__u8 v;

	ASSERT_EQ(0, mcp_pci_find(TESTDEV_VENDOR, TESTDEV_DEVICE, addr));
	ASSERT_EQ(0, mcp_testdev_bind(addr));
	read_counters(c0);
	for (int i = 0; i < 10; i++) {
		int idx, devfd;
		volatile void *r;
		size_t len;

		ASSERT_EQ(0, mcp_pci_unbind(addr)) TH_LOG("cycle %d", i);
		ASSERT_EQ(-ENOENT, mcp_dev_find(self->fd, addr, &info));
		ASSERT_EQ(0, mcp_pci_bind(addr)) TH_LOG("cycle %d", i);
		idx = mcp_dev_find(self->fd, addr, &info);
		ASSERT_LE(0, idx);
		devfd = mcp_dev_open(self->fd, idx);
		ASSERT_LE(0, devfd);
		r = mcp_bar_map(devfd, 0, 0, &len);
		ASSERT_NE(MAP_FAILED, r);
		mmio_write8(r, TESTDEV_REG_TEST, 0);
		EXPECT_EQ(0, read8_or_sigbus(r, TESTDEV_REG_NAME, &v));
		EXPECT_EQ(TESTDEV_TEST0_NAME[0], v);
		munmap((void *)r, len);
		close(devfd);
	}
	read_counters(c1);
	for (size_t i = 0; i < ARRAY_SIZE(dev_counters); i++) {
		EXPECT_LE(0, c0[i]) TH_LOG("debugfs counter %s missing", dev_counters[i]);
		EXPECT_EQ(c0[i], c1[i]) TH_LOG("counter %s", dev_counters[i]);
	}
	mcp_testdev_release(addr);
}

/*
 * The generic device (new_id) is revoked the same way, in every copy of a
 * mapping: a child's inherited one (fork) and both halves of a split one.
 */
TEST_F(revoke, generic_unbind_sigbus)
{
	char addr[MCP_PCI_ADDR_LEN], c;
	struct mcp_dev_info info;
	struct mcp_bar_info b;
	volatile char *r, *big;
	size_t len, big_len;
	int idx, devfd, ready[2], go[2], status;
	pid_t pid;
	__u8 v;

	ASSERT_EQ(0, mcp_pci_find(TESTDEV_VENDOR, TESTDEV_DEVICE, addr));
	ASSERT_EQ(0, mcp_testdev_bind(addr));
	idx = mcp_dev_find(self->fd, addr, &info);
	ASSERT_LE(0, idx);
	devfd = mcp_dev_open(self->fd, idx);
	ASSERT_LE(0, devfd);
	r = mcp_bar_map(devfd, 0, 0, &len);
	ASSERT_NE(MAP_FAILED, r);
	mmio_write8(r, TESTDEV_REG_TEST, 0);
	EXPECT_EQ(0, read8_or_sigbus(r, TESTDEV_REG_NAME, &v));
	EXPECT_EQ(TESTDEV_TEST0_NAME[0], v);
	/* BAR2 (1 MiB) split in two by unmapping a page in its middle. */
	big = mcp_bar_map(devfd, 2, 0, &big_len);
	ASSERT_NE(MAP_FAILED, big);
	ASSERT_EQ(0, munmap((void *)(big + big_len / 2), self->pg));
	EXPECT_EQ(0, read8_or_sigbus(big, 0, &v));
	EXPECT_EQ(0, read8_or_sigbus(big + big_len - self->pg, 0, &v));

	/* A child with the mapping inherited, faulted in on its side. */
	ASSERT_EQ(0, pipe2(ready, O_CLOEXEC));
	ASSERT_EQ(0, pipe2(go, O_CLOEXEC));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		if (read8_or_sigbus(r, TESTDEV_REG_NAME, &v) || v != TESTDEV_TEST0_NAME[0] ||
		    write(ready[1], "r", 1) != 1 || read(go[0], &c, 1) != 1)
			_exit(2);
		_exit(read8_or_sigbus(r, TESTDEV_REG_NAME, &v) == -EFAULT ? 0 : 1);
	}
	ASSERT_EQ(1, read(ready[0], &c, 1)) TH_LOG("child could not read the inherited mapping");

	ASSERT_EQ(0, mcp_pci_unbind(addr));
	EXPECT_EQ(-EFAULT, read8_or_sigbus(r, TESTDEV_REG_NAME, &v));
	EXPECT_EQ(-EFAULT, read8_or_sigbus(big, 0, &v));
	EXPECT_EQ(-EFAULT, read8_or_sigbus(big + big_len - self->pg, 0, &v));
	EXPECT_EQ(-ENODEV, mcp_bar_info(devfd, 0, &b));
	ASSERT_EQ(1, write(go[1], "g", 1));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status)) TH_LOG("the child's inherited mapping %s",
						 WEXITSTATUS(status) == 1 ? "still read the device" :
						 "did not work before the unbind");
	close(ready[0]);
	close(ready[1]);
	close(go[0]);
	close(go[1]);
	EXPECT_EQ(0, munmap((void *)big, big_len / 2));
	EXPECT_EQ(0, munmap((void *)(big + big_len / 2 + self->pg), big_len / 2 - self->pg));
	EXPECT_EQ(0, munmap((void *)r, len));
	EXPECT_EQ(0, close(devfd));
	mcp_testdev_release(addr);
}

/*
 * A function reset revokes the mappings while it runs; they fault back in
 * afterwards and show the device's reset state.  pci-testdev sits alone
 * behind a bridge, so it has a bus reset.
 */
TEST_F(revoke, reset_mappings_fault_back)
{
	char addr[MCP_PCI_ADDR_LEN], path[PATH_MAX], name[sizeof(TESTDEV_TEST0_NAME)];
	struct mcp_dev_info info;
	struct mcp_bar_info b;
	volatile void *r;
	size_t len;
	int idx, devfd;
	__u8 v;

	ASSERT_EQ(0, mcp_pci_find(TESTDEV_VENDOR, TESTDEV_DEVICE, addr));
	snprintf(path, sizeof(path), MCP_PCI_DEVICES "/%s/reset", addr);
	if (access(path, W_OK))
		SKIP(return, "%s has no reset method", addr);
	ASSERT_EQ(0, mcp_testdev_bind(addr));
	idx = mcp_dev_find(self->fd, addr, &info);
	ASSERT_LE(0, idx);
	devfd = mcp_dev_open(self->fd, idx);
	ASSERT_LE(0, devfd);
	r = mcp_bar_map(devfd, 0, 0, &len);
	ASSERT_NE(MAP_FAILED, r);
	mmio_write8(r, TESTDEV_REG_TEST, 0);
	ASSERT_EQ(0, read8_or_sigbus(r, TESTDEV_REG_NAME, &v));
	EXPECT_EQ(TESTDEV_TEST0_NAME[0], v);

	ASSERT_EQ(0, mcp_write_file(path, "1"));
	/* No SIGBUS, and the header is the reset one: no test selected. */
	ASSERT_EQ(0, read8_or_sigbus(r, TESTDEV_REG_NAME, &v)) TH_LOG("SIGBUS after the reset");
	EXPECT_EQ(0, v);
	mmio_write8(r, TESTDEV_REG_TEST, 0);
	for (size_t k = 0; k < sizeof(name); k++)
		name[k] = mmio_read8(r, TESTDEV_REG_NAME + k);
	EXPECT_STREQ(TESTDEV_TEST0_NAME, name);
	EXPECT_EQ(0, mcp_bar_info(devfd, 0, &b));
	EXPECT_TRUE(mcp_pci_bound(addr));
	munmap((void *)r, len);
	close(devfd);
	mcp_testdev_release(addr);
}

/*
 * A device fd (or only a mapping of it) pins the module: rmmod is refused
 * while either exists, even with /dev/mcp closed.  (Unloading with bound
 * devices is what every run's final rmmod does.)
 */
TEST_F(revoke, rmmod_refused_with_device_fd)
{
	int devfd = mcp_dev_open(self->fd, self->idx);
	volatile void *regs;
	size_t len;

	ASSERT_LE(0, devfd);
	regs = mcp_bar_map(devfd, 0, 0, &len);
	ASSERT_NE(MAP_FAILED, regs);
	close(self->fd);
	self->fd = -1;
	EXPECT_EQ(-EWOULDBLOCK, mcp_unload_module(O_NONBLOCK));
	close(devfd);
	EXPECT_EQ(-EWOULDBLOCK, mcp_unload_module(O_NONBLOCK));
	EXPECT_EQ(EDU_ID, mmio_read32(regs, EDU_REG_ID));
	munmap((void *)regs, len);
	EXPECT_TRUE(mcp_module_loaded());
	self->fd = mcp_open();
	ASSERT_LE(0, self->fd);
}

/* Workers on pci-testdev while it is unbound and bound 20 times. */
TEST_F_TIMEOUT(revoke, concurrent_unbind_generic, 60)
{
	char addr[MCP_PCI_ADDR_LEN];

	struct stress s = { .fd = self->fd, .addr = addr,
			    .lock = PTHREAD_MUTEX_INITIALIZER };
	long long c0[ARRAY_SIZE(dev_counters)];
	pthread_t th[STRESS_WORKERS];

	ASSERT_EQ(0, mcp_pci_find(TESTDEV_VENDOR, TESTDEV_DEVICE, addr));
	ASSERT_EQ(0, mcp_testdev_bind(addr));
	read_counters(c0);
	ASSERT_EQ(0, stress_start(&s, th));
	for (int i = 0; i < 20; i++) {
		usleep(100000);
		EXPECT_EQ(0, mcp_pci_unbind(addr)) TH_LOG("unbind, cycle %d", i);
		usleep(20000);
		EXPECT_EQ(0, mcp_pci_bind(addr)) TH_LOG("bind, cycle %d", i);
	}
	usleep(100000);
	stress_finish(_metadata, &s, th, c0, 20);
	mcp_testdev_release(addr);
}

MCP_TEST_MAIN
