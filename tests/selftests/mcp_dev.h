/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Helpers of the accelerator-device selftests (mcp_dev_test.c,
 * mcp_dev_revoke_test.c): the two PCI functions of the test VM
 * (tests/vm/run-vm.py), finding them in sysfs and in MCP_IOC_DEV_LIST,
 * binding and unbinding them, mapping their BARs and their registers.
 *
 *   edu          1234:11e8, mcp.ko's ID table, backend "edu", MSI
 *   pci-testdev  1b36:0005, bound through new_id, backend "generic", no
 *                interrupt, alone behind a bridge (so it has a bus reset)
 */
#ifndef MCP_DEV_SELFTEST_H
#define MCP_DEV_SELFTEST_H

#include "mcp_test.h"

#include <limits.h>
#include <dirent.h>
#include <poll.h>
#include <sys/eventfd.h>

#define MCP_PCI_DEVICES		"/sys/bus/pci/devices"
#define MCP_PCI_DRIVER		"/sys/bus/pci/drivers/" MCP_DEVICE_NAME

/* QEMU's edu device (docs/specs/edu.rst). */
#define EDU_VENDOR		0x1234
#define EDU_DEVICE		0x11e8
#define EDU_BAR_LEN		(1U << 20)
#define EDU_REG_ID		0x00
#define EDU_ID			0x010000edU
#define EDU_REG_LIVENESS	0x04
#define EDU_REG_FACTORIAL	0x08
#define EDU_REG_STATUS		0x20
#define EDU_STATUS_COMPUTING	0x01
#define EDU_STATUS_IRQ_FACT	0x80

/*
 * QEMU's pci-testdev (hw/misc/pci-testdev.c).  BAR0 starts with a header
 * that shows the selected test; byte accesses only.  Writing N to byte 0
 * selects test N (0 is "mmio-no-eventfd"); each byte write of @data to
 * @offset increments @count.  After reset no test is selected and the
 * header reads as zeros.
 */
#define TESTDEV_VENDOR		0x1b36
#define TESTDEV_DEVICE		0x0005
#define TESTDEV_ID		"1b36 0005"
#define TESTDEV_REG_TEST	0x00
#define TESTDEV_REG_WIDTH	0x01
#define TESTDEV_REG_OFFSET	0x04
#define TESTDEV_REG_DATA	0x08
#define TESTDEV_REG_COUNT	0x0c
#define TESTDEV_REG_NAME	0x10
#define TESTDEV_TEST0_NAME	"mmio-no-eventfd"
#define TESTDEV_TEST0_OFFSET	0x800
#define TESTDEV_DATAMATCH	0xfa

/* mcp.ko's attributes under each bound PCI device (Documentation/ABI/). */
#define MCP_DEV_SYSFS		"mcp"
#define MCP_DEV_SYSFS_OPEN_COUNT	MCP_DEV_SYSFS "/open_count"

/* PCI address "DDDD:BB:SS.F" of a sysfs device directory name. */
#define MCP_PCI_ADDR_LEN	16

static inline __u32 mmio_read32(volatile void *base, size_t off)
{
	return *(volatile __u32 *)((volatile char *)base + off);
}

static inline void mmio_write32(volatile void *base, size_t off, __u32 v)
{
	*(volatile __u32 *)((volatile char *)base + off) = v;
}

static inline __u8 mmio_read8(volatile void *base, size_t off)
{
	return *((volatile __u8 *)base + off);
}

static inline void mmio_write8(volatile void *base, size_t off, __u8 v)
{
	*((volatile __u8 *)base + off) = v;
}

/* pci-testdev registers are bytes: a little-endian u32 from four reads. */
static inline __u32 testdev_read32(volatile void *base, size_t off)
{
	return mmio_read8(base, off) | mmio_read8(base, off + 1) << 8 |
	       mmio_read8(base, off + 2) << 16 |
	       (__u32)mmio_read8(base, off + 3) << 24;
}

/* Reads /sys/bus/pci/devices/ADDR/ATTR as a number; -1 when unreadable. */
static inline long long mcp_pci_attr(const char *addr, const char *attr)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), MCP_PCI_DEVICES "/%s/%s", addr, attr);
	return mcp_read_ll(path);
}

/* The sysfs name of the first function with this vendor:device; 0 or -ENOENT. */
static inline int mcp_pci_find(__u16 vendor, __u16 device, char *addr)
{
	struct dirent *e;
	DIR *d = opendir(MCP_PCI_DEVICES);
	int ret = -ENOENT;

	if (!d)
		return -errno;
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.' || strlen(e->d_name) >= MCP_PCI_ADDR_LEN)
			continue;
		if (mcp_pci_attr(e->d_name, "vendor") == vendor &&
		    mcp_pci_attr(e->d_name, "device") == device) {
			strcpy(addr, e->d_name);
			ret = 0;
			break;
		}
	}
	closedir(d);
	return ret;
}

/* 1 when ADDR is bound to mcp.ko, 0 when bound elsewhere or not at all. */
static inline int mcp_pci_bound(const char *addr)
{
	char path[PATH_MAX], link[PATH_MAX];
	ssize_t n;

	snprintf(path, sizeof(path), MCP_PCI_DEVICES "/%s/driver", addr);
	n = readlink(path, link, sizeof(link) - 1);
	if (n < 0)
		return 0;
	link[n] = '\0';
	n = strlen(link);
	return n >= 4 && !strcmp(link + n - 4, "/" MCP_DEVICE_NAME);
}

/* Unbinds ADDR from mcp.ko through sysfs; 0 or -errno. */
static inline int mcp_pci_unbind(const char *addr)
{
	return mcp_write_file(MCP_PCI_DRIVER "/unbind", addr);
}

/* Binds ADDR to mcp.ko through sysfs; 0 or -errno. */
static inline int mcp_pci_bind(const char *addr)
{
	return mcp_write_file(MCP_PCI_DRIVER "/bind", addr);
}

/*
 * Makes sure pci-testdev at ADDR is bound to mcp.ko: through new_id the
 * first time, through bind when the ID is already known (after an unbind).
 */
static inline int mcp_testdev_bind(const char *addr)
{
	int ret;

	if (mcp_pci_bound(addr))
		return 0;
	ret = mcp_write_file(MCP_PCI_DRIVER "/new_id", TESTDEV_ID);
	if (ret == -EEXIST)
		ret = mcp_pci_bind(addr);
	if (ret)
		return ret;
	return mcp_pci_bound(addr) ? 0 : -ENODEV;
}

/* Unbinds pci-testdev and forgets its ID, as the VM had it. */
static inline void mcp_testdev_release(const char *addr)
{
	if (mcp_pci_bound(addr))
		mcp_pci_unbind(addr);
	mcp_write_file(MCP_PCI_DRIVER "/remove_id", TESTDEV_ID);
}

static inline void mcp_dev_addr(const struct mcp_dev_info *info, char *addr)
{
	snprintf(addr, MCP_PCI_ADDR_LEN, "%04x:%02x:%02x.%x", info->pci_domain,
		 info->pci_bus, info->pci_slot, info->pci_func);
}

static inline int mcp_dev_info(int fd, __u32 index, struct mcp_dev_info *info)
{
	memset(info, 0, sizeof(*info));
	info->size = sizeof(*info);
	info->index = index;
	return mcp_ioctl(fd, MCP_IOC_DEV_INFO, info);
}

/* Fills idx[cap]; returns the device count or -errno. */
static inline int mcp_dev_list(int fd, __u32 *idx, __u32 cap)
{
	struct mcp_dev_list l = {
		.size = sizeof(l), .cap = cap, .indices_ptr = (uintptr_t)idx,
	};
	int ret = mcp_ioctl(fd, MCP_IOC_DEV_LIST, &l);

	return ret && ret != -ENOSPC ? ret : (int)l.count;
}

/* The index of the device at PCI address ADDR; -ENOENT when not listed. */
static inline int mcp_dev_find(int fd, const char *addr, struct mcp_dev_info *info)
{
	__u32 idx[64];
	char a[MCP_PCI_ADDR_LEN];
	int n = mcp_dev_list(fd, idx, 64);

	if (n < 0)
		return n;
	for (int i = 0; i < n && i < 64; i++) {
		if (mcp_dev_info(fd, idx[i], info))
			continue;
		mcp_dev_addr(info, a);
		if (!strcmp(a, addr))
			return idx[i];
	}
	return -ENOENT;
}

/*
 * Binds ADDR if it is not bound (a failed test may have left it so, or a
 * killed one left a bind running) and waits up to 25 s for it to be listed:
 * binding edu takes seconds in the test VM (Documentation/testing-vm.rst).
 * Returns its index or -errno.
 */
static inline int mcp_dev_ensure_listed(int fd, const char *addr, struct mcp_dev_info *info)
{
	int idx = -ENOENT;

	for (int i = 0; i < 250 && idx < 0; i++) {
		if (i % 50 == 0 && !mcp_pci_bound(addr))
			mcp_pci_bind(addr);
		idx = mcp_dev_find(fd, addr, info);
		if (idx < 0)
			usleep(100000);
	}
	return idx;
}

/* MCP_IOC_DEV_OPEN: the device fd or -errno. */
static inline int mcp_dev_open(int fd, __u32 index)
{
	struct mcp_dev_open o = { .size = sizeof(o), .index = index, .fd = -1 };
	int ret = mcp_ioctl(fd, MCP_IOC_DEV_OPEN, &o);

	return ret ? ret : o.fd;
}

static inline int mcp_bar_info(int devfd, __u32 bar, struct mcp_bar_info *bi)
{
	memset(bi, 0, sizeof(*bi));
	bi->size = sizeof(*bi);
	bi->bar = bar;
	return mcp_ioctl(devfd, MCP_IOC_BAR_INFO, bi);
}

/* Maps a whole BAR (uncached, or at wc_offset); MAP_FAILED with errno set. */
static inline void *mcp_bar_map(int devfd, __u32 bar, int wc, size_t *len)
{
	struct mcp_bar_info bi;
	int ret = mcp_bar_info(devfd, bar, &bi);

	if (ret) {
		errno = -ret;
		return MAP_FAILED;
	}
	*len = bi.len;
	return mmap(NULL, bi.len, PROT_READ | PROT_WRITE, MAP_SHARED, devfd,
		    wc ? bi.wc_offset : bi.offset);
}

/* mmap() that returns 0 (and unmaps) or -errno, for ASSERT_EQ(). */
static inline int mcp_try_mmap(int fd, size_t len, int prot, int flags, __u64 off)
{
	void *p = mmap(NULL, len, prot, flags, fd, (off_t)off);

	if (p == MAP_FAILED)
		return -errno;
	munmap(p, len);
	return 0;
}

static inline int mcp_irq_set_eventfd(int devfd, __u32 vector, int efd)
{
	struct mcp_irq_eventfd e = {
		.size = sizeof(e), .vector = vector, .eventfd = efd,
	};

	return mcp_ioctl(devfd, MCP_IOC_IRQ_SET_EVENTFD, &e);
}

/* Waits up to ms for an eventfd count; returns it, 0 on time-out, -errno. */
static inline long long mcp_eventfd_wait(int efd, int ms)
{
	struct pollfd p = { .fd = efd, .events = POLLIN };
	eventfd_t v;
	int n = poll(&p, 1, ms);

	if (n < 0)
		return -errno;
	if (n == 0)
		return 0;
	if (eventfd_read(efd, &v))
		return -errno;
	return (long long)v;
}

/*
 * Starts an edu factorial of n (with an interrupt when irq is set) and
 * waits up to 2 s for the status register to say it is done; returns the
 * result, or -ETIMEDOUT.
 */
static inline long long edu_factorial(volatile void *bar, __u32 n, int irq)
{
	mmio_write32(bar, EDU_REG_STATUS, irq ? EDU_STATUS_IRQ_FACT : 0);
	mmio_write32(bar, EDU_REG_FACTORIAL, n);
	for (int i = 0; i < 2000; i++) {
		if (!(mmio_read32(bar, EDU_REG_STATUS) & EDU_STATUS_COMPUTING))
			return mmio_read32(bar, EDU_REG_FACTORIAL);
		usleep(1000);
	}
	return -ETIMEDOUT;
}

static inline __u32 factorial32(__u32 n)
{
	__u32 r = 1;

	while (n > 1)
		r *= n--;
	return r;
}

#endif /* MCP_DEV_SELFTEST_H */
