// SPDX-License-Identifier: GPL-2.0-only
/*
 * Accelerator devices (uapi/linux/mcp.h, "Accelerator devices"):
 * MCP_IOC_DEV_LIST, MCP_IOC_DEV_INFO (compared with sysfs and lspci),
 * MCP_IOC_DEV_OPEN, MCP_IOC_BAR_INFO and mmap() of BARs, interrupts through
 * MCP_IOC_IRQ_SET_EVENTFD, and the generic path on a device bound through
 * new_id.  The edu device is the reference; pci-testdev is the generic one
 * (mcp_dev.h).  Unbind, reset and revocation are in mcp_dev_revoke_test.c.
 */
#include "mcp_dev.h"

#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/wait.h>

#define PAT8	0xa5
#define PAT32	0xa5a5a5a5U

/* Finds the edu device in sysfs, (re)binds it if needed, and its index. */
static int find_edu(struct __test_metadata *_metadata, int fd, char *addr,
		    struct mcp_dev_info *info)
{
	int idx;

	if (mcp_pci_find(EDU_VENDOR, EDU_DEVICE, addr)) {
		TH_LOG("no edu device (1234:11e8) in %s: is the VM command line right?",
		       MCP_PCI_DEVICES);
		return -ENOENT;
	}
	idx = mcp_dev_ensure_listed(fd, addr, info);
	if (idx < 0)
		TH_LOG("edu %s is not in MCP_IOC_DEV_LIST: %s", addr, strerror(-idx));
	return idx;
}

static int has_devices(int fd)
{
	struct mcp_version v = { .size = sizeof(v) };

	return !mcp_ioctl(fd, MCP_IOC_GET_VERSION, &v) &&
	       (v.features & MCP_FEAT_DEVICES);
}

FIXTURE(dev) {
	int fd;
	long pg;
	int idx;
	char addr[MCP_PCI_ADDR_LEN];
	struct mcp_dev_info info;
};

FIXTURE_SETUP(dev)
{
	self->pg = sysconf(_SC_PAGESIZE);
	ASSERT_EQ(0, mcp_ensure_loaded());
	self->fd = mcp_open();
	ASSERT_LE(0, self->fd) TH_LOG("open %s: %s", MCP_DEV_PATH, strerror(errno));
	ASSERT_TRUE(has_devices(self->fd)) TH_LOG("MCP_FEAT_DEVICES not reported");
	self->idx = find_edu(_metadata, self->fd, self->addr, &self->info);
	ASSERT_LE(0, self->idx);
}

FIXTURE_TEARDOWN(dev)
{
	if (self->fd >= 0)
		close(self->fd);
}

/*
 * The rules every argument struct follows (uapi/linux/mcp.h): NULL is
 * -EFAULT, sizes below VER0 -EINVAL, above MCP_ARG_SIZE_MAX or with a
 * non-zero tail -E2BIG, a zero tail works, non-zero flags -EINVAL.  good
 * holds a struct that succeeds with result good_ret; undo() releases what
 * a success created.
 */
static void check_arg_rules(struct __test_metadata *_metadata, int fd,
			    unsigned long cmd, const void *good, __u32 ver0,
			    int good_ret, void (*undo)(void *arg))
{
	static const __u32 small[] = { 0, 4, 8 };
	static const __u32 big[] = { MCP_ARG_SIZE_MAX + 1, 1 << 20, 0xffffffffu };
	unsigned char *buf = calloc(1, MCP_ARG_SIZE_MAX);
	__u32 *size = (__u32 *)buf, *flags = (__u32 *)buf + 1;
	int ret;

	ASSERT_NE(NULL, buf);
	EXPECT_EQ(-EFAULT, mcp_ioctl(fd, cmd, NULL)) TH_LOG("cmd 0x%lx NULL", cmd);
	EXPECT_EQ(-EFAULT, mcp_ioctl(fd, cmd, mcp_unmapped_addr()));

	for (size_t i = 0; i < ARRAY_SIZE(small) + 1; i++) {
		memcpy(buf, good, ver0);
		*size = i < ARRAY_SIZE(small) ? small[i] : ver0 - 1;
		EXPECT_EQ(-EINVAL, mcp_ioctl(fd, cmd, buf))
			TH_LOG("cmd 0x%lx size %u", cmd, *size);
	}
	for (size_t i = 0; i < ARRAY_SIZE(big); i++) {
		memcpy(buf, good, ver0);
		*size = big[i];
		EXPECT_EQ(-E2BIG, mcp_ioctl(fd, cmd, buf))
			TH_LOG("cmd 0x%lx size %u", cmd, *size);
	}
	/* A newer caller's bigger struct: zero tail works, non-zero is -E2BIG. */
	for (__u32 s = ver0 + 8; s <= MCP_ARG_SIZE_MAX; s += MCP_ARG_SIZE_MAX - ver0 - 8) {
		memset(buf, 0, MCP_ARG_SIZE_MAX);
		memcpy(buf, good, ver0);
		*size = s;
		ret = mcp_ioctl(fd, cmd, buf);
		EXPECT_EQ(good_ret, ret) TH_LOG("cmd 0x%lx size %u, zero tail", cmd, s);
		if (!ret && undo)
			undo(buf);
		memset(buf, 0, MCP_ARG_SIZE_MAX);
		memcpy(buf, good, ver0);
		*size = s;
		buf[s - 1] = 1;
		EXPECT_EQ(-E2BIG, mcp_ioctl(fd, cmd, buf))
			TH_LOG("cmd 0x%lx size %u, non-zero tail", cmd, s);
	}
	for (__u32 f = 1; f; f <<= 7) {
		memcpy(buf, good, ver0);
		*flags = f;
		EXPECT_EQ(-EINVAL, mcp_ioctl(fd, cmd, buf))
			TH_LOG("cmd 0x%lx flags 0x%x", cmd, f);
	}
	/* The good struct itself still works after all that. */
	memcpy(buf, good, ver0);
	ret = mcp_ioctl(fd, cmd, buf);
	EXPECT_EQ(good_ret, ret) TH_LOG("cmd 0x%lx good", cmd);
	if (!ret && undo)
		undo(buf);
	free(buf);
}

/* ---- MCP_IOC_DEV_LIST ---- */

TEST_F(dev, list_size_query_enospc)
{
	struct mcp_dev_list l = { .size = sizeof(l), .count = PAT32 };
	__u32 idx[4];

	memset(idx, PAT8, sizeof(idx));
	ASSERT_EQ(-ENOSPC, mcp_ioctl(self->fd, MCP_IOC_DEV_LIST, &l));
	EXPECT_LE(1, l.count);
	EXPECT_GT(64, l.count);
	/* A cap of 0 with a real array: nothing written. */
	l.indices_ptr = (uintptr_t)idx;
	l.count = PAT32;
	ASSERT_EQ(-ENOSPC, mcp_ioctl(self->fd, MCP_IOC_DEV_LIST, &l));
	EXPECT_EQ(PAT32, idx[0]);
	/* One short is -ENOSPC too, the array untouched. */
	if (l.count > 1 && l.count <= 4) {
		l.cap = l.count - 1;
		ASSERT_EQ(-ENOSPC, mcp_ioctl(self->fd, MCP_IOC_DEV_LIST, &l));
		for (size_t i = 0; i < ARRAY_SIZE(idx); i++) {
			EXPECT_EQ(PAT32, idx[i]);
		}
	}
}

/* PCI functions bound to mcp.ko, as its driver directory lists them. */
static int count_bound(void)
{
	struct dirent *e;
	DIR *d = opendir(MCP_PCI_DRIVER);
	int n = 0;

	if (!d)
		return -1;
	while ((e = readdir(d)))
		n += strlen(e->d_name) == MCP_PCI_ADDR_LEN - 4 &&
		     e->d_name[4] == ':' && e->d_name[7] == ':';
	closedir(d);
	return n;
}

TEST_F(dev, list_ascending_and_described)
{
	__u32 idx[64 + 2];
	struct mcp_dev_list l = { .size = sizeof(l), .indices_ptr = (uintptr_t)idx };
	struct mcp_dev_info info;
	int found = 0;

	ASSERT_EQ(-ENOSPC, mcp_ioctl(self->fd, MCP_IOC_DEV_LIST, &l));
	ASSERT_GE(64, l.count);
	memset(idx, PAT8, sizeof(idx));
	l.cap = l.count + 2;
	ASSERT_EQ(0, mcp_ioctl(self->fd, MCP_IOC_DEV_LIST, &l));
	for (__u32 i = 0; i < l.count; i++) {
		if (i) {
			EXPECT_LT(idx[i - 1], idx[i]) TH_LOG("entry %u", i);
		}
		ASSERT_EQ(0, mcp_dev_info(self->fd, idx[i], &info)) TH_LOG("index %u", idx[i]);
		EXPECT_EQ(idx[i], info.index);
		found += idx[i] == (__u32)self->idx;
	}
	EXPECT_EQ(1, found);
	/* Nothing past count. */
	EXPECT_EQ(PAT32, idx[l.count]);
	EXPECT_EQ(PAT32, idx[l.count + 1]);
	/* Every PCI function bound to mcp.ko is listed, and only those. */
	EXPECT_EQ(count_bound(), (int)l.count);
}

TEST_F(dev, list_bad_pointers_efault)
{
	struct mcp_dev_list l = { .size = sizeof(l), .cap = 64 };
	__u32 *ro = mmap(NULL, self->pg, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	char *page = mcp_guarded_page();
	__u64 ptrs[] = { 0, (uintptr_t)mcp_unmapped_addr(), 0xffff888000000000ull,
			 (uintptr_t)ro, 0 };
	char tdev[MCP_PCI_ADDR_LEN];

	ASSERT_NE(MAP_FAILED, ro);
	ASSERT_NE(NULL, page);
	/*
	 * An array that starts in the last word of a page and runs into a
	 * hole: that needs two devices, so pci-testdev joins edu.
	 */
	ASSERT_EQ(0, mcp_pci_find(TESTDEV_VENDOR, TESTDEV_DEVICE, tdev));
	ASSERT_EQ(0, mcp_testdev_bind(tdev));
	ASSERT_LE(2, mcp_dev_list(self->fd, NULL, 0));
	ptrs[4] = (uintptr_t)(page + self->pg - sizeof(__u32));
	for (size_t i = 0; i < ARRAY_SIZE(ptrs); i++) {
		l.indices_ptr = ptrs[i];
		EXPECT_EQ(-EFAULT, mcp_ioctl(self->fd, MCP_IOC_DEV_LIST, &l))
			TH_LOG("case %zu, pointer 0x%llx", i, (unsigned long long)ptrs[i]);
	}
	mcp_testdev_release(tdev);
	munmap(ro, self->pg);
	munmap(page, 2 * self->pg);
}

TEST_F(dev, list_arg_rules)
{
	__u32 idx[64];
	struct mcp_dev_list l = { .size = sizeof(l), .cap = 64,
				  .indices_ptr = (uintptr_t)idx };

	EXPECT_EQ(MCP_DEV_LIST_SIZE_VER0, sizeof(l));
	EXPECT_EQ(MCP_DEV_LIST_SIZE_VER0, _IOC_SIZE(MCP_IOC_DEV_LIST));
	check_arg_rules(_metadata, self->fd, MCP_IOC_DEV_LIST, &l,
			MCP_DEV_LIST_SIZE_VER0, 0, NULL);
	/* Flags win over the size query. */
	l.cap = 0;
	l.flags = 1;
	EXPECT_EQ(-EINVAL, mcp_ioctl(self->fd, MCP_IOC_DEV_LIST, &l));
}

/* ---- MCP_IOC_DEV_INFO, against sysfs and lspci ---- */

struct lspci_bar {
	int present, io, is64, prefetch;
	unsigned long long start, len;
};

struct lspci_dev {
	unsigned int dom, bus, slot, func, cls, progif, rev, vendor, device;
	unsigned int sub_vendor, sub_device;
	int numa, msi_cap, msi_enabled;
	char driver[32];
	struct lspci_bar bar[MCP_DEV_MAX_BARS];
};

static unsigned long long lspci_size(const char *s)
{
	char *end;
	unsigned long long v = strtoull(s, &end, 10);

	switch (*end) {
	case 'K':
		return v << 10;
	case 'M':
		return v << 20;
	case 'G':
		return v << 30;
	case 'T':
		return v << 40;
	}
	return v;
}

/* Parses "lspci -vv -n -D -s ADDR"; 0 or -1 when lspci printed nothing useful. */
static int lspci_read(const char *addr, struct lspci_dev *d)
{
	char cmd[128], line[512], *p;
	FILE *f;
	int first = 1, n;

	memset(d, 0, sizeof(*d));
	d->numa = -1;
	snprintf(cmd, sizeof(cmd), "lspci -vv -n -D -s %s 2>/dev/null", addr);
	f = popen(cmd, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		unsigned int bar;
		char kind[32];
		unsigned long long start;

		if (first) {
			/* "0000:00:03.0 00ff: 1234:11e8 (rev 10)" */
			n = sscanf(line, "%x:%x:%x.%x %x: %x:%x", &d->dom, &d->bus,
				   &d->slot, &d->func, &d->cls, &d->vendor, &d->device);
			if (n != 7)
				break;
			p = strstr(line, "(rev ");
			if (p)
				d->rev = strtoul(p + 5, NULL, 16);
			p = strstr(line, "(prog-if ");
			if (p)
				d->progif = strtoul(p + 9, NULL, 16);
			first = 0;
			continue;
		}
		if (sscanf(line, " Subsystem: %x:%x", &d->sub_vendor, &d->sub_device) == 2)
			continue;
		if (sscanf(line, " NUMA node: %d", &d->numa) == 1)
			continue;
		if (sscanf(line, " Kernel driver in use: %31s", d->driver) == 1)
			continue;
		if (strstr(line, "] MSI: ")) {
			d->msi_cap = 1;
			d->msi_enabled = !!strstr(line, "Enable+");
			continue;
		}
		if (sscanf(line, " Region %u: Memory at %llx (%31[^)])", &bar, &start, kind) == 3 &&
		    bar < MCP_DEV_MAX_BARS) {
			d->bar[bar].present = 1;
			d->bar[bar].start = start;
			d->bar[bar].is64 = !strncmp(kind, "64-bit", 6);
			d->bar[bar].prefetch = !strstr(kind, "non-prefetchable");
		} else if (sscanf(line, " Region %u: I/O ports at %llx", &bar, &start) == 2 &&
			   bar < MCP_DEV_MAX_BARS) {
			d->bar[bar].present = 1;
			d->bar[bar].io = 1;
			d->bar[bar].start = start;
		} else {
			continue;
		}
		p = strstr(line, "[size=");
		if (p)
			d->bar[bar].len = lspci_size(p + 6);
	}
	pclose(f);
	return first ? -1 : 0;
}

/* DEV_INFO's BARs against /sys/bus/pci/devices/ADDR/resource. */
static void check_bars_sysfs(struct __test_metadata *_metadata, const char *addr,
			     const struct mcp_dev_info *info)
{
	char path[PATH_MAX], buf[4096], *line, *save = NULL;
	int i = 0;

	snprintf(path, sizeof(path), MCP_PCI_DEVICES "/%s/resource", addr);
	ASSERT_LT(0, mcp_read_file(path, buf, sizeof(buf)));
	for (line = strtok_r(buf, "\n", &save); line && i < MCP_DEV_MAX_BARS;
	     line = strtok_r(NULL, "\n", &save), i++) {
		const struct mcp_dev_bar *b = &info->bars[i];
		unsigned long long start, end, flags;

		ASSERT_EQ(3, sscanf(line, "%llx %llx %llx", &start, &end, &flags));
		if (!flags || end <= start) {
			EXPECT_EQ(0, b->flags & MCP_BAR_PRESENT) TH_LOG("BAR %d", i);
			EXPECT_EQ(0, b->len) TH_LOG("BAR %d", i);
			continue;
		}
		EXPECT_TRUE(b->flags & MCP_BAR_PRESENT) TH_LOG("BAR %d", i);
		EXPECT_EQ(start, b->start) TH_LOG("BAR %d", i);
		EXPECT_EQ(end - start + 1, b->len) TH_LOG("BAR %d", i);
		/* IORESOURCE_MEM, _PREFETCH, _MEM_64 */
		EXPECT_EQ(!!(flags & 0x200), !!(b->flags & MCP_BAR_MEM)) TH_LOG("BAR %d", i);
		EXPECT_EQ(!!(flags & 0x2000), !!(b->flags & MCP_BAR_PREFETCH)) TH_LOG("BAR %d", i);
		EXPECT_EQ(!!(flags & 0x100000), !!(b->flags & MCP_BAR_64BIT)) TH_LOG("BAR %d", i);
		/* A memory BAR of whole pages can be mapped; I/O never. */
		EXPECT_EQ(!!(flags & 0x200) && !((end - start + 1) & (sysconf(_SC_PAGESIZE) - 1)),
			  !!(b->flags & MCP_BAR_MAPPABLE)) TH_LOG("BAR %d", i);
		if (b->flags & MCP_BAR_WC_OK) {
			EXPECT_TRUE(b->flags & MCP_BAR_MAPPABLE) TH_LOG("BAR %d", i);
		}
	}
	EXPECT_EQ(MCP_DEV_MAX_BARS, i);
}

/* ADDR/mcp/NAME without its newline; "" when unreadable. */
static const char *mcp_dev_sysfs(const char *addr, const char *name, char *buf, size_t len)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), MCP_PCI_DEVICES "/%s/" MCP_DEV_SYSFS "/%s", addr, name);
	if (mcp_read_file(path, buf, len) < 0)
		buf[0] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	return buf;
}

/* mcp.ko's own sysfs directory of the device says what DEV_INFO says. */
static void check_info_vs_mcp_sysfs(struct __test_metadata *_metadata, const char *addr,
				    const struct mcp_dev_info *info)
{
	static const char * const wc_names[] = {
		[MCP_WC_UNTESTED] = "untested", [MCP_WC_UNSUPPORTED] = "unsupported",
		[MCP_WC_NOT_COMBINING] = "not_combining", [MCP_WC_COMBINING] = "combining",
		[MCP_WC_NOT_RUN] = "not_run",
	};
	char buf[64];
	const char *degraded;

	EXPECT_EQ(info->index, strtoul(mcp_dev_sysfs(addr, "index", buf, sizeof(buf)), NULL, 10));
	EXPECT_STREQ(info->backend, mcp_dev_sysfs(addr, "backend", buf, sizeof(buf)));
	ASSERT_GT(ARRAY_SIZE(wc_names), info->wc_test);
	EXPECT_STREQ(wc_names[info->wc_test], mcp_dev_sysfs(addr, "wc_test", buf, sizeof(buf)));
	EXPECT_EQ(info->open_count,
		  strtoul(mcp_dev_sysfs(addr, "open_count", buf, sizeof(buf)), NULL, 10));
	EXPECT_EQ(info->link_speed,
		  strtoul(mcp_dev_sysfs(addr, "link_speed", buf, sizeof(buf)), NULL, 10));
	EXPECT_EQ(info->link_speed_cap,
		  strtoul(mcp_dev_sysfs(addr, "link_speed_cap", buf, sizeof(buf)), NULL, 10));
	EXPECT_EQ(info->link_width,
		  strtoul(mcp_dev_sysfs(addr, "link_width", buf, sizeof(buf)), NULL, 10));
	EXPECT_EQ(info->link_width_cap,
		  strtoul(mcp_dev_sysfs(addr, "link_width_cap", buf, sizeof(buf)), NULL, 10));
	switch (info->link_flags & (MCP_LINK_SPEED_DEGRADED | MCP_LINK_WIDTH_DEGRADED)) {
	case 0:
		degraded = "none";
		break;
	case MCP_LINK_SPEED_DEGRADED:
		degraded = "speed";
		break;
	case MCP_LINK_WIDTH_DEGRADED:
		degraded = "width";
		break;
	default:
		degraded = "speed width";
	}
	EXPECT_STREQ(degraded, mcp_dev_sysfs(addr, "link_degraded", buf, sizeof(buf)));
}

/* Everything DEV_INFO says that sysfs and lspci also say. */
static void check_info_vs_system(struct __test_metadata *_metadata, const char *addr,
				 const struct mcp_dev_info *info)
{
	char path[PATH_MAX], a[MCP_PCI_ADDR_LEN];
	struct lspci_dev l;
	struct dirent *e;
	DIR *d;
	int msi = 0;

	mcp_dev_addr(info, a);
	EXPECT_STREQ(addr, a);
	EXPECT_EQ(mcp_pci_attr(addr, "vendor"), info->vendor);
	EXPECT_EQ(mcp_pci_attr(addr, "device"), info->device);
	EXPECT_EQ(mcp_pci_attr(addr, "subsystem_vendor"), info->subsystem_vendor);
	EXPECT_EQ(mcp_pci_attr(addr, "subsystem_device"), info->subsystem_device);
	EXPECT_EQ(mcp_pci_attr(addr, "class"), info->class_code);
	EXPECT_EQ(mcp_pci_attr(addr, "revision"), info->revision);
	EXPECT_EQ(mcp_pci_attr(addr, "numa_node"), info->numa_node);
	check_bars_sysfs(_metadata, addr, info);
	check_info_vs_mcp_sysfs(_metadata, addr, info);

	/* MSI vectors show up in msi_irqs/, one file each. */
	snprintf(path, sizeof(path), MCP_PCI_DEVICES "/%s/msi_irqs", addr);
	d = opendir(path);
	while (d && (e = readdir(d)))
		msi += e->d_name[0] != '.';
	if (d)
		closedir(d);
	switch (info->irq_type) {
	case MCP_IRQ_MSI:
	case MCP_IRQ_MSIX:
		EXPECT_EQ(info->irq_count, msi);
		EXPECT_LT(0, info->irq_count);
		break;
	case MCP_IRQ_INTX:
		EXPECT_EQ(0, msi);
		EXPECT_EQ(1, info->irq_count);
		EXPECT_LT(0, mcp_pci_attr(addr, "irq"));
		break;
	case MCP_IRQ_NONE:
		EXPECT_EQ(0, msi);
		EXPECT_EQ(0, info->irq_count);
		break;
	default:
		EXPECT_TRUE(0) TH_LOG("irq_type %u", info->irq_type);
	}

	ASSERT_EQ(0, lspci_read(addr, &l)) TH_LOG("lspci -vv -n -s %s printed nothing", addr);
	EXPECT_EQ(info->pci_domain, l.dom);
	EXPECT_EQ(info->pci_bus, l.bus);
	EXPECT_EQ(info->pci_slot, l.slot);
	EXPECT_EQ(info->pci_func, l.func);
	EXPECT_EQ(info->vendor, l.vendor);
	EXPECT_EQ(info->device, l.device);
	EXPECT_EQ(info->class_code, l.cls << 8 | l.progif);
	EXPECT_EQ(info->revision, l.rev);
	EXPECT_EQ(info->subsystem_vendor, l.sub_vendor);
	EXPECT_EQ(info->subsystem_device, l.sub_device);
	EXPECT_EQ(info->numa_node, l.numa);
	EXPECT_STREQ(MCP_DEVICE_NAME, l.driver);
	EXPECT_EQ(info->irq_type == MCP_IRQ_MSI, l.msi_enabled);
	for (int i = 0; i < MCP_DEV_MAX_BARS; i++) {
		const struct mcp_dev_bar *b = &info->bars[i];

		EXPECT_EQ(l.bar[i].present, !!(b->flags & MCP_BAR_PRESENT)) TH_LOG("BAR %d", i);
		if (!l.bar[i].present)
			continue;
		EXPECT_EQ(l.bar[i].start, b->start) TH_LOG("BAR %d", i);
		EXPECT_EQ(l.bar[i].len, b->len) TH_LOG("BAR %d", i);
		EXPECT_EQ(!l.bar[i].io, !!(b->flags & MCP_BAR_MEM)) TH_LOG("BAR %d", i);
		EXPECT_EQ(l.bar[i].is64, !!(b->flags & MCP_BAR_64BIT)) TH_LOG("BAR %d", i);
		EXPECT_EQ(l.bar[i].prefetch, !!(b->flags & MCP_BAR_PREFETCH)) TH_LOG("BAR %d", i);
	}
}

TEST_F(dev, info_edu)
{
	struct mcp_dev_info *i = &self->info;

	memset(i, PAT8, sizeof(*i));
	i->size = sizeof(*i);
	i->flags = 0;
	i->index = self->idx;
	i->reserved = 0;
	ASSERT_EQ(0, mcp_ioctl(self->fd, MCP_IOC_DEV_INFO, i));
	EXPECT_EQ(sizeof(*i), i->size);
	EXPECT_EQ(self->idx, i->index);
	EXPECT_EQ(EDU_VENDOR, i->vendor);
	EXPECT_EQ(EDU_DEVICE, i->device);
	EXPECT_EQ(0x00ff00, i->class_code);
	EXPECT_STREQ("edu", i->backend);
	/* NUL-padded: no pattern left in the name. */
	for (size_t k = strlen(i->backend); k < sizeof(i->backend); k++) {
		EXPECT_EQ(0, i->backend[k]) TH_LOG("backend byte %zu", k);
	}
	EXPECT_EQ(0, i->dev_flags & MCP_DEV_GENERIC);
	/* QEMU's edu has one MSI vector; INTx is the fallback. */
	EXPECT_TRUE(i->irq_type == MCP_IRQ_MSI || i->irq_type == MCP_IRQ_INTX)
		TH_LOG("irq_type %u", i->irq_type);
	EXPECT_EQ(1, i->irq_count);
	/* A mask of the form 2^k - 1, at least edu's 28 bits. */
	EXPECT_EQ(0, i->dma_mask & (i->dma_mask + 1)) TH_LOG("dma_mask 0x%llx",
							      (unsigned long long)i->dma_mask);
	EXPECT_LE((1ULL << 28) - 1, i->dma_mask);
	/* Conventional PCI in this VM: no link fields. */
	EXPECT_EQ(0, i->link_flags);
	EXPECT_EQ(0, i->link_speed);
	EXPECT_EQ(0, i->link_speed_cap);
	EXPECT_EQ(0, i->link_width);
	EXPECT_EQ(0, i->link_width_cap);
	/* BAR0: 1 MiB, 32-bit, not prefetchable; nothing else. */
	EXPECT_EQ(MCP_BAR_PRESENT | MCP_BAR_MEM | MCP_BAR_MAPPABLE, i->bars[0].flags);
	EXPECT_EQ(EDU_BAR_LEN, i->bars[0].len);
	for (int b = 1; b < MCP_DEV_MAX_BARS; b++) {
		EXPECT_EQ(0, i->bars[b].flags) TH_LOG("BAR %d", b);
		EXPECT_EQ(0, i->bars[b].len) TH_LOG("BAR %d", b);
		EXPECT_EQ(0, i->bars[b].start) TH_LOG("BAR %d", b);
		EXPECT_EQ(0, i->bars[b].reserved) TH_LOG("BAR %d", b);
	}
	EXPECT_EQ(0, i->bars[0].reserved);
	/* No WC-capable BAR: nothing to test write-combining on. */
	EXPECT_EQ(MCP_WC_UNTESTED, i->wc_test);
	EXPECT_EQ(0, i->open_count);
	check_info_vs_system(_metadata, self->addr, i);
}

TEST_F(dev, info_unknown_index_enodev)
{
	struct mcp_dev_info info;
	__u32 bad[] = { self->idx + 1000, 0x7fffffff, 0xffffffff };

	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		memset(&info, PAT8, sizeof(info));
		info.size = sizeof(info);
		info.flags = 0;
		info.index = bad[i];
		info.reserved = 0;
		EXPECT_EQ(-ENODEV, mcp_ioctl(self->fd, MCP_IOC_DEV_INFO, &info))
			TH_LOG("index %u", bad[i]);
		/* A failed call writes nothing back. */
		EXPECT_EQ(PAT32, info.vendor | (__u32)info.device << 16);
	}
}

TEST_F(dev, info_arg_rules)
{
	struct mcp_dev_info info = { .size = sizeof(info), .index = self->idx };

	EXPECT_EQ(MCP_DEV_INFO_SIZE_VER0, sizeof(info));
	EXPECT_EQ(MCP_DEV_INFO_SIZE_VER0, _IOC_SIZE(MCP_IOC_DEV_INFO));
	check_arg_rules(_metadata, self->fd, MCP_IOC_DEV_INFO, &info,
			MCP_DEV_INFO_SIZE_VER0, 0, NULL);
	info.reserved = 1;
	EXPECT_EQ(-EINVAL, mcp_ioctl(self->fd, MCP_IOC_DEV_INFO, &info));
	info.reserved = 1ULL << 63;
	EXPECT_EQ(-EINVAL, mcp_ioctl(self->fd, MCP_IOC_DEV_INFO, &info));
}

/* ---- MCP_IOC_DEV_OPEN ---- */

/* open_count of the device as DEV_INFO and sysfs see it; -1 on error. */
static int open_count(int fd, __u32 idx, const char *addr, int *sysfs)
{
	struct mcp_dev_info info;

	*sysfs = (int)mcp_pci_attr(addr, MCP_DEV_SYSFS_OPEN_COUNT);
	if (mcp_dev_info(fd, idx, &info))
		return -1;
	return info.open_count;
}

TEST_F(dev, open_cloexec_and_counted)
{
	int a, b, c, s;

	EXPECT_EQ(0, open_count(self->fd, self->idx, self->addr, &s));
	EXPECT_EQ(0, s);
	a = mcp_dev_open(self->fd, self->idx);
	ASSERT_LE(0, a) TH_LOG("DEV_OPEN: %s", strerror(-a));
	EXPECT_EQ(FD_CLOEXEC, fcntl(a, F_GETFD) & FD_CLOEXEC);
	EXPECT_EQ(1, open_count(self->fd, self->idx, self->addr, &s));
	EXPECT_EQ(1, s);
	b = mcp_dev_open(self->fd, self->idx);
	ASSERT_LE(0, b);
	EXPECT_NE(a, b);
	EXPECT_EQ(2, open_count(self->fd, self->idx, self->addr, &s));
	EXPECT_EQ(2, s);
	/* A dup() is the same open file. */
	c = dup(a);
	ASSERT_LE(0, c);
	close(a);
	EXPECT_EQ(2, open_count(self->fd, self->idx, self->addr, &s));
	close(c);
	EXPECT_EQ(1, open_count(self->fd, self->idx, self->addr, &s));
	EXPECT_EQ(1, s);
	/* The device fd outlives the /dev/mcp fd it came from. */
	close(self->fd);
	self->fd = mcp_open();
	ASSERT_LE(0, self->fd);
	EXPECT_EQ(1, open_count(self->fd, self->idx, self->addr, &s));
	close(b);
	EXPECT_EQ(0, open_count(self->fd, self->idx, self->addr, &s));
	EXPECT_EQ(0, s);
}

TEST_F(dev, open_bad_index_enodev)
{
	struct mcp_dev_open o = { .size = sizeof(o), .fd = 12345 };
	__u32 bad[] = { self->idx + 1000, 0x7fffffff, 0xffffffff };

	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		o.index = bad[i];
		EXPECT_EQ(-ENODEV, mcp_ioctl(self->fd, MCP_IOC_DEV_OPEN, &o))
			TH_LOG("index %u", bad[i]);
		EXPECT_EQ(12345, o.fd);
	}
}

static void close_opened_fd(void *arg)
{
	close(((struct mcp_dev_open *)arg)->fd);
}

TEST_F(dev, open_arg_rules)
{
	struct mcp_dev_open o = { .size = sizeof(o), .index = self->idx };
	int s;

	EXPECT_EQ(MCP_DEV_OPEN_SIZE_VER0, sizeof(o));
	EXPECT_EQ(MCP_DEV_OPEN_SIZE_VER0, _IOC_SIZE(MCP_IOC_DEV_OPEN));
	check_arg_rules(_metadata, self->fd, MCP_IOC_DEV_OPEN, &o,
			MCP_DEV_OPEN_SIZE_VER0, 0, close_opened_fd);
	/* The O_CLOEXEC flag is implied, not accepted. */
	o.flags = O_CLOEXEC;
	EXPECT_EQ(-EINVAL, mcp_ioctl(self->fd, MCP_IOC_DEV_OPEN, &o));
	/* Failed opens left nothing open. */
	EXPECT_EQ(0, open_count(self->fd, self->idx, self->addr, &s));
}

static int count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int n = 0;

	if (!d)
		return -1;
	while ((e = readdir(d)))
		n += e->d_name[0] != '.';
	closedir(d);
	return n;
}

/* Where the result cannot be copied back, no fd is left behind. */
TEST_F(dev, open_readonly_arg_no_leak)
{
	struct mcp_dev_open *o = mmap(NULL, self->pg, PROT_READ | PROT_WRITE,
				      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	int s, fds;

	ASSERT_NE(MAP_FAILED, o);
	o->size = sizeof(*o);
	o->index = self->idx;
	ASSERT_EQ(0, mprotect(o, self->pg, PROT_READ));
	fds = count_fds();
	EXPECT_EQ(-EFAULT, mcp_ioctl(self->fd, MCP_IOC_DEV_OPEN, o));
	EXPECT_EQ(0, open_count(self->fd, self->idx, self->addr, &s));
	EXPECT_EQ(fds, count_fds());
	munmap(o, self->pg);
}

/* No descriptor left: -EMFILE, and nothing was opened. */
TEST_F(dev, open_emfile)
{
	pid_t pid = fork();
	int status, s;

	ASSERT_LE(0, pid);
	if (pid == 0) {
		struct rlimit rl = { 64, 64 };

		if (setrlimit(RLIMIT_NOFILE, &rl))
			_exit(90);
		while (dup(self->fd) >= 0)
			;
		if (errno != EMFILE)
			_exit(91);
		_exit(mcp_dev_open(self->fd, self->idx) == -EMFILE ? 0 : 1);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status)) TH_LOG("DEV_OPEN with no free descriptor: not -EMFILE");
	EXPECT_EQ(0, open_count(self->fd, self->idx, self->addr, &s));
}

/* ---- BARs of edu: MCP_IOC_BAR_INFO and mmap() ---- */

FIXTURE(edu) {
	int fd, devfd;
	long pg;
	int idx;
	char addr[MCP_PCI_ADDR_LEN];
	struct mcp_dev_info info;
	struct mcp_bar_info bar0;
	volatile void *regs;
};

FIXTURE_SETUP(edu)
{
	size_t len;

	self->pg = sysconf(_SC_PAGESIZE);
	self->regs = MAP_FAILED;
	ASSERT_EQ(0, mcp_ensure_loaded());
	self->fd = mcp_open();
	ASSERT_LE(0, self->fd);
	ASSERT_TRUE(has_devices(self->fd)) TH_LOG("MCP_FEAT_DEVICES not reported");
	self->idx = find_edu(_metadata, self->fd, self->addr, &self->info);
	ASSERT_LE(0, self->idx);
	self->devfd = mcp_dev_open(self->fd, self->idx);
	ASSERT_LE(0, self->devfd) TH_LOG("DEV_OPEN: %s", strerror(-self->devfd));
	ASSERT_EQ(0, mcp_bar_info(self->devfd, 0, &self->bar0));
	self->regs = mcp_bar_map(self->devfd, 0, 0, &len);
	ASSERT_NE(MAP_FAILED, self->regs) TH_LOG("mmap BAR0: %s", strerror(errno));
}

FIXTURE_TEARDOWN(edu)
{
	if (self->regs != MAP_FAILED)
		munmap((void *)self->regs, self->bar0.len);
	if (self->devfd >= 0)
		close(self->devfd);
	if (self->fd >= 0)
		close(self->fd);
}

TEST_F(edu, bar_info)
{
	struct mcp_bar_info *b = &self->bar0;

	EXPECT_EQ(sizeof(*b), b->size);
	EXPECT_EQ(self->info.bars[0].flags, b->bar_flags);
	EXPECT_EQ(EDU_BAR_LEN, b->len);
	EXPECT_EQ(0, b->offset & (self->pg - 1));
	EXPECT_EQ(0, b->wc_offset & (self->pg - 1));
	/* The two views do not overlap. */
	EXPECT_TRUE(b->offset + b->len <= b->wc_offset || b->wc_offset + b->len <= b->offset)
		TH_LOG("offset 0x%llx wc_offset 0x%llx", (unsigned long long)b->offset,
		       (unsigned long long)b->wc_offset);
	/* Not prefetchable and edu does not declare it WC-safe: say why. */
	EXPECT_EQ(MCP_WC_NOT_PREFETCHABLE, b->wc_status);
	EXPECT_EQ(0, b->reserved);
}

TEST_F(edu, bar_info_arg_rules)
{
	struct mcp_bar_info b = { .size = sizeof(b), .bar = 0 };
	struct mcp_dev_list l = { .size = sizeof(l) };

	EXPECT_EQ(MCP_BAR_INFO_SIZE_VER0, sizeof(b));
	EXPECT_EQ(MCP_BAR_INFO_SIZE_VER0, _IOC_SIZE(MCP_IOC_BAR_INFO));
	check_arg_rules(_metadata, self->devfd, MCP_IOC_BAR_INFO, &b,
			MCP_BAR_INFO_SIZE_VER0, 0, NULL);
	b.reserved = 1;
	EXPECT_EQ(-EINVAL, mcp_ioctl(self->devfd, MCP_IOC_BAR_INFO, &b));
	/* Device ioctls are not /dev/mcp ioctls and the reverse. */
	b.reserved = 0;
	EXPECT_EQ(-ENOTTY, mcp_ioctl(self->fd, MCP_IOC_BAR_INFO, &b));
	EXPECT_EQ(-ENOTTY, mcp_ioctl(self->devfd, MCP_IOC_DEV_LIST, &l));
}

TEST_F(edu, bar_info_bad_bar)
{
	struct mcp_bar_info b;
	__u32 bad[] = { MCP_DEV_MAX_BARS, 7, 255, 0xffffffff };

	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		memset(&b, 0, sizeof(b));
		b.size = sizeof(b);
		b.bar = bad[i];
		b.len = PAT32;
		EXPECT_EQ(-EINVAL, mcp_ioctl(self->devfd, MCP_IOC_BAR_INFO, &b))
			TH_LOG("bar %u", bad[i]);
		EXPECT_EQ(PAT32, b.len);
	}
	/* An absent BAR is described as absent, and mapping it is refused. */
	for (__u32 bar = 1; bar < MCP_DEV_MAX_BARS; bar++) {
		ASSERT_EQ(0, mcp_bar_info(self->devfd, bar, &b)) TH_LOG("bar %u", bar);
		EXPECT_EQ(0, b.bar_flags) TH_LOG("bar %u", bar);
		EXPECT_EQ(0, b.len) TH_LOG("bar %u", bar);
		EXPECT_EQ(MCP_WC_NOT_MAPPABLE, b.wc_status) TH_LOG("bar %u", bar);
		EXPECT_EQ(-EINVAL, mcp_try_mmap(self->devfd, self->pg, PROT_READ, MAP_SHARED,
						b.offset)) TH_LOG("bar %u", bar);
	}
}

TEST_F(edu, id_register)
{
	EXPECT_EQ(EDU_ID, mmio_read32(self->regs, EDU_REG_ID));
}

TEST_F(edu, liveness_inverts)
{
	static const __u32 vals[] = { 0, 1, 0x12345678, 0xdeadbeef, 0xffffffff };

	for (size_t i = 0; i < ARRAY_SIZE(vals); i++) {
		mmio_write32(self->regs, EDU_REG_LIVENESS, vals[i]);
		EXPECT_EQ(~vals[i], mmio_read32(self->regs, EDU_REG_LIVENESS))
			TH_LOG("wrote 0x%x", vals[i]);
	}
}

/* A page inside the BAR maps that page: the same registers, two mappings. */
TEST_F(edu, partial_mappings)
{
	volatile void *first, *tail;

	first = mmap(NULL, self->pg, PROT_READ | PROT_WRITE, MAP_SHARED, self->devfd,
		     self->bar0.offset);
	ASSERT_NE(MAP_FAILED, first);
	EXPECT_EQ(EDU_ID, mmio_read32(first, EDU_REG_ID));
	mmio_write32(first, EDU_REG_LIVENESS, 0x5a5a0f0f);
	EXPECT_EQ(~0x5a5a0f0fU, mmio_read32(self->regs, EDU_REG_LIVENESS));
	munmap((void *)first, self->pg);
	/* The last two pages: edu reads ~0 where it has no register. */
	tail = mmap(NULL, 2 * self->pg, PROT_READ, MAP_SHARED, self->devfd,
		    self->bar0.offset + self->bar0.len - 2 * self->pg);
	ASSERT_NE(MAP_FAILED, tail);
	EXPECT_EQ(0xffffffffU, mmio_read32(tail, self->pg));
	munmap((void *)tail, 2 * self->pg);
	/* Read-only mappings work too. */
	first = mmap(NULL, self->pg, PROT_READ, MAP_SHARED, self->devfd, self->bar0.offset);
	ASSERT_NE(MAP_FAILED, first);
	EXPECT_EQ(EDU_ID, mmio_read32(first, EDU_REG_ID));
	munmap((void *)first, self->pg);
}

TEST_F(edu, factorial_interrupt)
{
	static const __u32 ns[] = { 5, 10, 12 };
	int efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);

	ASSERT_LE(0, efd);
	ASSERT_EQ(0, mcp_irq_set_eventfd(self->devfd, 0, efd));
	for (size_t i = 0; i < ARRAY_SIZE(ns); i++) {
		mmio_write32(self->regs, EDU_REG_STATUS, EDU_STATUS_IRQ_FACT);
		mmio_write32(self->regs, EDU_REG_FACTORIAL, ns[i]);
		/* One signal per interrupt. */
		ASSERT_EQ(1, mcp_eventfd_wait(efd, 2000)) TH_LOG("%u!: no interrupt", ns[i]);
		EXPECT_EQ(0, mmio_read32(self->regs, EDU_REG_STATUS) & EDU_STATUS_COMPUTING);
		EXPECT_EQ(factorial32(ns[i]), mmio_read32(self->regs, EDU_REG_FACTORIAL))
			TH_LOG("%u!", ns[i]);
		/* Acknowledged: no second signal for the same interrupt. */
		EXPECT_EQ(0, mcp_eventfd_wait(efd, 100)) TH_LOG("%u!: interrupt repeated", ns[i]);
	}
	/* Without the interrupt bit the device stays quiet. */
	EXPECT_EQ(factorial32(7), edu_factorial(self->regs, 7, 0));
	EXPECT_EQ(0, mcp_eventfd_wait(efd, 200));
	EXPECT_EQ(0, mcp_irq_set_eventfd(self->devfd, 0, -1));
	close(efd);
}

/* Offsets that no BAR_INFO gave out. */
TEST_F(edu, mmap_refused)
{
	struct mcp_bar_info b = self->bar0;
	__u64 end = 0, unknown;
	int rw = PROT_READ | PROT_WRITE;

	/* Past the end of the BAR, or straddling it. */
	EXPECT_EQ(-EINVAL, mcp_try_mmap(self->devfd, b.len + self->pg, rw, MAP_SHARED, b.offset));
	EXPECT_EQ(-EINVAL, mcp_try_mmap(self->devfd, 2 * self->pg, rw, MAP_SHARED,
					b.offset + b.len - self->pg));
	if (b.offset + b.len != b.wc_offset) {
		EXPECT_EQ(-EINVAL, mcp_try_mmap(self->devfd, self->pg, rw, MAP_SHARED,
						b.offset + b.len));
	}
	/* Beyond every offset any BAR has. */
	for (__u32 bar = 0; bar < MCP_DEV_MAX_BARS; bar++) {
		struct mcp_bar_info x;

		if (mcp_bar_info(self->devfd, bar, &x))
			continue;
		if (x.offset + x.len > end)
			end = x.offset + x.len;
		if (x.wc_offset + x.len > end)
			end = x.wc_offset + x.len;
	}
	unknown = (end + 64 * self->pg) & ~(__u64)(self->pg - 1);
	EXPECT_EQ(-EINVAL, mcp_try_mmap(self->devfd, self->pg, rw, MAP_SHARED, unknown));
	EXPECT_EQ(-EINVAL, mcp_try_mmap(self->devfd, self->pg, rw, MAP_SHARED,
					0x7ffffffffffff000ULL));
	/* MAP_SHARED only. */
	EXPECT_EQ(-EINVAL, mcp_try_mmap(self->devfd, self->pg, rw, MAP_PRIVATE, b.offset));
	EXPECT_EQ(-EINVAL, mcp_try_mmap(self->devfd, self->pg, PROT_READ, MAP_PRIVATE, b.offset));
	/* Write-combining on a BAR that is not WC-safe. */
	EXPECT_EQ(-EINVAL, mcp_try_mmap(self->devfd, self->pg, rw, MAP_SHARED, b.wc_offset));
	EXPECT_EQ(-EINVAL, mcp_try_mmap(self->devfd, b.len, rw, MAP_SHARED, b.wc_offset));
	/* /dev/mcp itself maps nothing. */
	EXPECT_NE(0, mcp_try_mmap(self->fd, self->pg, rw, MAP_SHARED, b.offset));
	/* The refusals did not disturb the good mapping. */
	EXPECT_EQ(EDU_ID, mmio_read32(self->regs, EDU_REG_ID));
}

/* Raw BAR access needs CAP_SYS_RAWIO, like sysfs resourceN. */
TEST_F(edu, mmap_needs_cap_sys_rawio)
{
	pid_t pid = fork();
	int status;

	ASSERT_LE(0, pid);
	if (pid == 0) {
		int ret, fd2, dev2;

		if (mcp_drop_cap(CAP_SYS_RAWIO))
			_exit(90);
		/* The device fd opened while privileged does not carry it along. */
		ret = mcp_try_mmap(self->devfd, self->pg, PROT_READ, MAP_SHARED, self->bar0.offset);
		if (ret != -EPERM && ret != -EACCES)
			_exit(1);
		/* Nor does a fresh open. */
		fd2 = mcp_open();
		if (fd2 < 0)
			_exit(91);
		dev2 = mcp_dev_open(fd2, self->idx);
		if (dev2 == -EPERM || dev2 == -EACCES)
			_exit(0);
		if (dev2 < 0)
			_exit(2);
		ret = mcp_try_mmap(dev2, self->pg, PROT_READ, MAP_SHARED, self->bar0.offset);
		_exit(ret == -EPERM || ret == -EACCES ? 0 : 3);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status))
		TH_LOG("child without CAP_SYS_RAWIO: %s", WEXITSTATUS(status) == 1 ?
		       "mmap of the inherited device fd was not refused" :
		       WEXITSTATUS(status) == 3 ? "mmap of a new device fd was not refused" :
		       "setup failed");
	/* And the parent still can. */
	EXPECT_EQ(0, mcp_try_mmap(self->devfd, self->pg, PROT_READ, MAP_SHARED, self->bar0.offset));
}

TEST_F(edu, closed_device_fd_ebadf)
{
	struct mcp_bar_info b = { .size = sizeof(b) };
	int fd = self->devfd;

	self->devfd = -1;
	ASSERT_EQ(0, close(fd));
	EXPECT_EQ(-EBADF, mcp_ioctl(fd, MCP_IOC_BAR_INFO, &b));
	EXPECT_EQ(-EBADF, mcp_irq_set_eventfd(fd, 0, -1));
	EXPECT_EQ(-EBADF, mcp_try_mmap(fd, self->pg, PROT_READ, MAP_SHARED, self->bar0.offset));
	/* The mapping made before the close keeps working. */
	EXPECT_EQ(EDU_ID, mmio_read32(self->regs, EDU_REG_ID));
}

/* ---- Interrupts: MCP_IOC_IRQ_SET_EVENTFD, MCP_IOC_IRQ_UNMASK ---- */

TEST_F(edu, irq_bad_vector_einval)
{
	int efd = eventfd(0, EFD_CLOEXEC);
	__u32 bad[] = { self->info.irq_count, self->info.irq_count + 1, 0xffffffff };

	ASSERT_LE(0, efd);
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		EXPECT_EQ(-EINVAL, mcp_irq_set_eventfd(self->devfd, bad[i], efd))
			TH_LOG("vector %u", bad[i]);
		EXPECT_EQ(-EINVAL, mcp_irq_set_eventfd(self->devfd, bad[i], -1))
			TH_LOG("vector %u", bad[i]);
	}
	close(efd);
}

TEST_F(edu, irq_bad_fd)
{
	int efd = eventfd(0, EFD_CLOEXEC), nullfd = open("/dev/null", O_RDWR | O_CLOEXEC);
	int closed = dup(efd);

	ASSERT_LE(0, efd);
	ASSERT_LE(0, nullfd);
	ASSERT_LE(0, closed);
	close(closed);
	/* Not an open fd: -EBADF, as eventfd_ctx_fdget() says. */
	EXPECT_EQ(-EBADF, mcp_irq_set_eventfd(self->devfd, 0, closed));
	EXPECT_EQ(-EBADF, mcp_irq_set_eventfd(self->devfd, 0, 0x7fffffff));
	/* Open but not an eventfd: -EINVAL. */
	EXPECT_EQ(-EINVAL, mcp_irq_set_eventfd(self->devfd, 0, nullfd));
	EXPECT_EQ(-EINVAL, mcp_irq_set_eventfd(self->devfd, 0, self->devfd));
	/* Negative other than -1: -EINVAL (Documentation/uapi.rst). */
	EXPECT_EQ(-EINVAL, mcp_irq_set_eventfd(self->devfd, 0, -2));
	EXPECT_EQ(-EINVAL, mcp_irq_set_eventfd(self->devfd, 0, INT_MIN));
	/* None of that connected anything. */
	EXPECT_EQ(factorial32(6), edu_factorial(self->regs, 6, 1));
	EXPECT_EQ(0, mcp_eventfd_wait(efd, 100));
	close(nullfd);
	close(efd);
}

TEST_F(edu, irq_arg_rules)
{
	int efd = eventfd(0, EFD_CLOEXEC);
	struct mcp_irq_eventfd e = { .size = sizeof(e), .vector = 0, .eventfd = efd };
	struct mcp_irq_unmask u = { .size = sizeof(u), .vector = 0 };

	ASSERT_LE(0, efd);
	EXPECT_EQ(MCP_IRQ_EVENTFD_SIZE_VER0, sizeof(e));
	EXPECT_EQ(MCP_IRQ_EVENTFD_SIZE_VER0, _IOC_SIZE(MCP_IOC_IRQ_SET_EVENTFD));
	check_arg_rules(_metadata, self->devfd, MCP_IOC_IRQ_SET_EVENTFD, &e,
			MCP_IRQ_EVENTFD_SIZE_VER0, 0, NULL);
	EXPECT_EQ(MCP_IRQ_UNMASK_SIZE_VER0, sizeof(u));
	EXPECT_EQ(MCP_IRQ_UNMASK_SIZE_VER0, _IOC_SIZE(MCP_IOC_IRQ_UNMASK));
	check_arg_rules(_metadata, self->devfd, MCP_IOC_IRQ_UNMASK, &u,
			MCP_IRQ_UNMASK_SIZE_VER0, 0, NULL);
	u.reserved = 1;
	EXPECT_EQ(-EINVAL, mcp_ioctl(self->devfd, MCP_IOC_IRQ_UNMASK, &u));
	u.reserved = 0;
	u.vector = self->info.irq_count;
	EXPECT_EQ(-EINVAL, mcp_ioctl(self->devfd, MCP_IOC_IRQ_UNMASK, &u));
	/* edu's backend acknowledges itself: UNMASK is a no-op, interrupts flow. */
	u.vector = 0;
	EXPECT_EQ(0, mcp_ioctl(self->devfd, MCP_IOC_IRQ_UNMASK, &u));
	EXPECT_EQ(factorial32(4), edu_factorial(self->regs, 4, 1));
	EXPECT_EQ(1, mcp_eventfd_wait(efd, 2000));
	mcp_irq_set_eventfd(self->devfd, 0, -1);
	close(efd);
}

TEST_F(edu, irq_disconnect)
{
	int efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);

	ASSERT_LE(0, efd);
	/* Disconnecting what is not connected is fine. */
	EXPECT_EQ(0, mcp_irq_set_eventfd(self->devfd, 0, -1));
	ASSERT_EQ(0, mcp_irq_set_eventfd(self->devfd, 0, efd));
	EXPECT_EQ(factorial32(3), edu_factorial(self->regs, 3, 1));
	EXPECT_EQ(1, mcp_eventfd_wait(efd, 2000));
	EXPECT_EQ(0, mcp_irq_set_eventfd(self->devfd, 0, -1));
	/* The device still interrupts; nobody hears it. */
	EXPECT_EQ(factorial32(8), edu_factorial(self->regs, 8, 1));
	EXPECT_EQ(0, mcp_eventfd_wait(efd, 300));
	/* Reconnecting works, and the device was acknowledged meanwhile. */
	ASSERT_EQ(0, mcp_irq_set_eventfd(self->devfd, 0, efd));
	EXPECT_EQ(factorial32(9), edu_factorial(self->regs, 9, 1));
	EXPECT_EQ(1, mcp_eventfd_wait(efd, 2000));
	EXPECT_EQ(0, mcp_irq_set_eventfd(self->devfd, 0, -1));
	close(efd);
}

TEST_F(edu, irq_replace)
{
	int e1 = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	int e2 = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);

	ASSERT_LE(0, e1);
	ASSERT_LE(0, e2);
	ASSERT_EQ(0, mcp_irq_set_eventfd(self->devfd, 0, e1));
	ASSERT_EQ(0, mcp_irq_set_eventfd(self->devfd, 0, e2));
	EXPECT_EQ(factorial32(11), edu_factorial(self->regs, 11, 1));
	EXPECT_EQ(1, mcp_eventfd_wait(e2, 2000));
	EXPECT_EQ(0, mcp_eventfd_wait(e1, 100));
	/* The kernel holds its own reference: closing ours keeps it working. */
	close(e2);
	EXPECT_EQ(factorial32(2), edu_factorial(self->regs, 2, 1));
	usleep(100000);
	EXPECT_EQ(0, mcp_eventfd_wait(e1, 0));
	EXPECT_EQ(0, mcp_irq_set_eventfd(self->devfd, 0, -1));
	close(e1);
}

/* Closing the device fd disconnects its eventfds; a new open starts clean. */
TEST_F(edu, irq_close_disconnects)
{
	int efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	int dev2;
	volatile void *regs2;
	size_t len;

	ASSERT_LE(0, efd);
	dev2 = mcp_dev_open(self->fd, self->idx);
	ASSERT_LE(0, dev2);
	ASSERT_EQ(0, mcp_irq_set_eventfd(dev2, 0, efd));
	regs2 = mcp_bar_map(dev2, 0, 0, &len);
	ASSERT_NE(MAP_FAILED, regs2);
	close(dev2);
	/* The mapping holds the file open; its munmap() is the last close. */
	munmap((void *)regs2, len);
	EXPECT_EQ(factorial32(5), edu_factorial(self->regs, 5, 1));
	EXPECT_EQ(0, mcp_eventfd_wait(efd, 300));
	close(efd);
}

/*
 * A connected vector belongs to the device fd that connected it: another
 * open of the device can neither replace nor drop it, and the owner keeps
 * its interrupts.  Once the owner's fd is released the vector is free.
 */
TEST_F(edu, irq_owned_by_connecting_fd)
{
	int ea = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	int eb = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	int dev_a, dev_b, dup_a;

	ASSERT_LE(0, ea);
	ASSERT_LE(0, eb);
	dev_a = mcp_dev_open(self->fd, self->idx);
	ASSERT_LE(0, dev_a);
	dev_b = mcp_dev_open(self->fd, self->idx);
	ASSERT_LE(0, dev_b);
	ASSERT_EQ(0, mcp_irq_set_eventfd(dev_a, 0, ea));
	/* Neither replaced nor dropped by another open. */
	EXPECT_EQ(-EBUSY, mcp_irq_set_eventfd(dev_b, 0, eb));
	EXPECT_EQ(-EBUSY, mcp_irq_set_eventfd(dev_b, 0, -1));
	EXPECT_EQ(-EBUSY, mcp_irq_set_eventfd(self->devfd, 0, -1));
	/* A still gets its interrupt, B nothing. */
	EXPECT_EQ(factorial32(6), edu_factorial(self->regs, 6, 1));
	EXPECT_EQ(1, mcp_eventfd_wait(ea, 2000)) TH_LOG("owner lost its interrupt");
	EXPECT_EQ(0, mcp_eventfd_wait(eb, 100));
	/* The owner's file, through any fd, may replace its own. */
	dup_a = dup(dev_a);
	ASSERT_LE(0, dup_a);
	EXPECT_EQ(0, mcp_irq_set_eventfd(dup_a, 0, ea));
	close(dup_a);
	/* After A's release, B can connect; and then it owns the vector. */
	close(dev_a);
	ASSERT_EQ(0, mcp_irq_set_eventfd(dev_b, 0, eb));
	EXPECT_EQ(factorial32(7), edu_factorial(self->regs, 7, 1));
	EXPECT_EQ(1, mcp_eventfd_wait(eb, 2000));
	EXPECT_EQ(0, mcp_eventfd_wait(ea, 100));
	EXPECT_EQ(-EBUSY, mcp_irq_set_eventfd(self->devfd, 0, ea));
	/* Dropped by its owner, the vector is free for anyone. */
	EXPECT_EQ(0, mcp_irq_set_eventfd(dev_b, 0, -1));
	EXPECT_EQ(0, mcp_irq_set_eventfd(self->devfd, 0, ea));
	EXPECT_EQ(0, mcp_irq_set_eventfd(self->devfd, 0, -1));
	close(dev_b);
	close(ea);
	close(eb);
}

/* ---- The generic path: pci-testdev bound through new_id ---- */

FIXTURE(generic) {
	int fd, devfd;
	long pg;
	int idx, count0;
	char addr[MCP_PCI_ADDR_LEN];
	struct mcp_dev_info info;
};

FIXTURE_SETUP(generic)
{
	int ret;

	self->pg = sysconf(_SC_PAGESIZE);
	self->devfd = -1;
	ASSERT_EQ(0, mcp_ensure_loaded());
	self->fd = mcp_open();
	ASSERT_LE(0, self->fd);
	ASSERT_TRUE(has_devices(self->fd)) TH_LOG("MCP_FEAT_DEVICES not reported");
	ASSERT_EQ(0, mcp_pci_find(TESTDEV_VENDOR, TESTDEV_DEVICE, self->addr))
		TH_LOG("no pci-testdev (1b36:0005): is the VM command line right?");
	mcp_testdev_release(self->addr);
	self->count0 = mcp_dev_list(self->fd, NULL, 0);
	ASSERT_LE(1, self->count0);
	ret = mcp_testdev_bind(self->addr);
	ASSERT_EQ(0, ret) TH_LOG("binding %s through new_id: %s", self->addr, strerror(-ret));
	self->idx = mcp_dev_find(self->fd, self->addr, &self->info);
	ASSERT_LE(0, self->idx);
}

FIXTURE_TEARDOWN(generic)
{
	if (self->devfd >= 0)
		close(self->devfd);
	mcp_testdev_release(self->addr);
	if (self->fd >= 0)
		close(self->fd);
}

TEST_F(generic, enumerates)
{
	struct mcp_dev_info *i = &self->info;

	EXPECT_EQ(self->count0 + 1, mcp_dev_list(self->fd, NULL, 0));
	EXPECT_EQ(TESTDEV_VENDOR, i->vendor);
	EXPECT_EQ(TESTDEV_DEVICE, i->device);
	EXPECT_STREQ("generic", i->backend);
	EXPECT_EQ(MCP_DEV_GENERIC, i->dev_flags & MCP_DEV_GENERIC);
	/* pci-testdev has no interrupt pin and no MSI. */
	EXPECT_EQ(MCP_IRQ_NONE, i->irq_type);
	EXPECT_EQ(0, i->irq_count);
	EXPECT_EQ(0, i->link_flags);
	EXPECT_EQ(MCP_BAR_PRESENT | MCP_BAR_MEM | MCP_BAR_MAPPABLE, i->bars[0].flags);
	EXPECT_EQ(4096, i->bars[0].len);
	EXPECT_EQ(MCP_BAR_PRESENT, i->bars[1].flags);
	EXPECT_EQ(256, i->bars[1].len);
	EXPECT_EQ(MCP_BAR_PRESENT | MCP_BAR_MEM | MCP_BAR_64BIT | MCP_BAR_PREFETCH |
		  MCP_BAR_MAPPABLE, i->bars[2].flags & ~MCP_BAR_WC_OK);
	EXPECT_EQ(1 << 20, i->bars[2].len);
	/* A 64-bit BAR takes two slots; the upper one is not a BAR. */
	EXPECT_EQ(0, i->bars[3].flags);
	EXPECT_TRUE(i->wc_test <= MCP_WC_NOT_RUN) TH_LOG("wc_test %u", i->wc_test);
	check_info_vs_system(_metadata, self->addr, i);
}

TEST_F(generic, maps_bar0_registers)
{
	volatile void *r;
	size_t len;
	char name[sizeof(TESTDEV_TEST0_NAME)];

	self->devfd = mcp_dev_open(self->fd, self->idx);
	ASSERT_LE(0, self->devfd);
	r = mcp_bar_map(self->devfd, 0, 0, &len);
	ASSERT_NE(MAP_FAILED, r) TH_LOG("mmap BAR0: %s", strerror(errno));
	ASSERT_EQ(4096, len);
	/* Select test 0: its header appears at the start of the BAR. */
	mmio_write8(r, TESTDEV_REG_TEST, 0);
	for (size_t k = 0; k < sizeof(name); k++)
		name[k] = mmio_read8(r, TESTDEV_REG_NAME + k);
	EXPECT_STREQ(TESTDEV_TEST0_NAME, name);
	EXPECT_EQ(1, mmio_read8(r, TESTDEV_REG_WIDTH));
	EXPECT_EQ(TESTDEV_TEST0_OFFSET, testdev_read32(r, TESTDEV_REG_OFFSET));
	EXPECT_EQ(TESTDEV_DATAMATCH, mmio_read8(r, TESTDEV_REG_DATA));
	EXPECT_EQ(0, testdev_read32(r, TESTDEV_REG_COUNT));
	/* Matching writes count, others do not. */
	for (int k = 0; k < 3; k++)
		mmio_write8(r, TESTDEV_TEST0_OFFSET, TESTDEV_DATAMATCH);
	mmio_write8(r, TESTDEV_TEST0_OFFSET, 0x01);
	EXPECT_EQ(3, testdev_read32(r, TESTDEV_REG_COUNT));
	munmap((void *)r, len);
}

TEST_F(generic, io_bar_not_mappable)
{
	struct mcp_bar_info b;

	self->devfd = mcp_dev_open(self->fd, self->idx);
	ASSERT_LE(0, self->devfd);
	ASSERT_EQ(0, mcp_bar_info(self->devfd, 1, &b));
	EXPECT_EQ(MCP_BAR_PRESENT, b.bar_flags);
	EXPECT_EQ(256, b.len);
	EXPECT_EQ(MCP_WC_NOT_MAPPABLE, b.wc_status);
	EXPECT_EQ(-EINVAL, mcp_try_mmap(self->devfd, self->pg, PROT_READ, MAP_SHARED, b.offset));
	EXPECT_EQ(-EINVAL, mcp_try_mmap(self->devfd, self->pg, PROT_READ, MAP_SHARED,
					b.wc_offset));
}

/*
 * Entries of x86 PAT's memtype list for [start, start + len) with the cache
 * mode named mode ("write-combining", "uncached-minus"); -1 without the
 * list (not x86, or no debugfs).
 */
static int pat_entries(__u64 start, __u64 len, const char *mode)
{
	FILE *f = fopen("/sys/kernel/debug/x86/pat_memtype_list", "r");
	char line[256], type[64];
	unsigned long long a, b;
	int n = 0;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "PAT: [mem 0x%llx-0x%llx] %63s", &a, &b, type) == 3 &&
		    a == start && b == start + len && !strcmp(type, mode))
			n++;
	}
	fclose(f);
	return n;
}

/* BAR2 is prefetchable: write-combining is allowed where the platform can. */
TEST_F(generic, prefetchable_bar_wc)
{
	struct mcp_bar_info b;
	void *uc, *wc;
	int pat_wc;

	self->devfd = mcp_dev_open(self->fd, self->idx);
	ASSERT_LE(0, self->devfd);
	ASSERT_EQ(0, mcp_bar_info(self->devfd, 2, &b));
	EXPECT_EQ(1 << 20, b.len);
	pat_wc = pat_entries(self->info.bars[2].start, b.len, "write-combining");
	uc = mmap(NULL, b.len, PROT_READ | PROT_WRITE, MAP_SHARED, self->devfd, b.offset);
	ASSERT_NE(MAP_FAILED, uc);
	(void)mmio_read32(uc, 0);
	/*
	 * Uncached PTEs take PAT's default for an unrecorded range
	 * (uncached-minus) and record nothing; they never record WC.
	 */
	if (pat_wc >= 0)
		EXPECT_EQ(pat_wc, pat_entries(self->info.bars[2].start, b.len,
					      "write-combining"));
	munmap(uc, b.len);
	if (b.wc_status == MCP_WC_NO_PLATFORM) {
		EXPECT_EQ(0, b.bar_flags & MCP_BAR_WC_OK);
		EXPECT_EQ(-EINVAL, mcp_try_mmap(self->devfd, self->pg, PROT_READ, MAP_SHARED,
						b.wc_offset));
		SKIP(return, "the platform cannot map write-combining (wc_status NO_PLATFORM)");
	}
	ASSERT_EQ(MCP_WC_ALLOWED, b.wc_status);
	EXPECT_EQ(MCP_BAR_WC_OK, b.bar_flags & MCP_BAR_WC_OK);
	/* WC allowed means x86 PAT here: its memtype list must be there. */
	pat_wc = pat_entries(self->info.bars[2].start, b.len, "write-combining");
	ASSERT_LE(0, pat_wc) TH_LOG("no /sys/kernel/debug/x86/pat_memtype_list");
	wc = mmap(NULL, b.len, PROT_READ | PROT_WRITE, MAP_SHARED, self->devfd, b.wc_offset);
	ASSERT_NE(MAP_FAILED, wc) TH_LOG("mmap at wc_offset: %s", strerror(errno));
	/* Nothing backs pci-testdev's membar: the mapping's cache mode is checked. */
	mmio_write32(wc, 0, 0x12345678);
	(void)mmio_read32(wc, 0);
	/* PAT records the BAR as write-combining while a WC mapping exists. */
	EXPECT_EQ(pat_wc + 1, pat_entries(self->info.bars[2].start, b.len, "write-combining"));
	munmap(wc, b.len);
	EXPECT_EQ(pat_wc, pat_entries(self->info.bars[2].start, b.len, "write-combining"));
	EXPECT_EQ(-EINVAL, mcp_try_mmap(self->devfd, b.len + self->pg, PROT_READ, MAP_SHARED,
					b.wc_offset));
}

/*
 * x86 PAT keeps one cache mode per physical range: while BAR2 has a WC
 * mapping, an uncached mapping of it would be write-combining too.  So a
 * BAR is mapped in one mode at a time, copies and splits of a VMA count,
 * and the other mode is free again once the last mapping is gone.
 */
TEST_F(generic, bar_one_cache_mode_at_a_time)
{
	struct mcp_bar_info b;
	int dev2, pat_wc;
	char *uc, *wc;

	self->devfd = mcp_dev_open(self->fd, self->idx);
	ASSERT_LE(0, self->devfd);
	ASSERT_EQ(0, mcp_bar_info(self->devfd, 2, &b));
	if (b.wc_status != MCP_WC_ALLOWED)
		SKIP(return, "BAR2 cannot be mapped write-combining here (wc_status %u)",
		     b.wc_status);
	dev2 = mcp_dev_open(self->fd, self->idx);
	ASSERT_LE(0, dev2);
	pat_wc = pat_entries(self->info.bars[2].start, b.len, "write-combining");

	/* WC first: uncached is refused, through this fd and another. */
	wc = mmap(NULL, 2 * self->pg, PROT_READ | PROT_WRITE, MAP_SHARED, self->devfd,
		  b.wc_offset);
	ASSERT_NE(MAP_FAILED, wc) TH_LOG("mmap at wc_offset: %s", strerror(errno));
	EXPECT_EQ(-EBUSY, mcp_try_mmap(self->devfd, self->pg, PROT_READ, MAP_SHARED,
				       b.offset)) TH_LOG("an uncached map of a WC-recorded BAR");
	EXPECT_EQ(-EBUSY, mcp_try_mmap(dev2, self->pg, PROT_READ, MAP_SHARED, b.offset));
	/* More WC is fine; a split leaves two VMAs that both count. */
	EXPECT_EQ(0, mcp_try_mmap(dev2, self->pg, PROT_READ, MAP_SHARED, b.wc_offset));
	ASSERT_EQ(0, munmap(wc, self->pg));
	EXPECT_EQ(-EBUSY, mcp_try_mmap(dev2, self->pg, PROT_READ, MAP_SHARED, b.offset));
	if (pat_wc >= 0)
		EXPECT_EQ(pat_wc + 1, pat_entries(self->info.bars[2].start, b.len,
						  "write-combining"));
	ASSERT_EQ(0, munmap(wc + self->pg, self->pg));
	if (pat_wc >= 0)
		EXPECT_EQ(pat_wc, pat_entries(self->info.bars[2].start, b.len,
					      "write-combining"));

	/* Uncached first: WC is refused until the last uncached map goes. */
	uc = mmap(NULL, 2 * self->pg, PROT_READ | PROT_WRITE, MAP_SHARED, dev2, b.offset);
	ASSERT_NE(MAP_FAILED, uc);
	EXPECT_EQ(-EBUSY, mcp_try_mmap(self->devfd, self->pg, PROT_READ, MAP_SHARED,
				       b.wc_offset));
	ASSERT_EQ(0, munmap(uc + self->pg, self->pg));
	EXPECT_EQ(-EBUSY, mcp_try_mmap(self->devfd, self->pg, PROT_READ, MAP_SHARED,
				       b.wc_offset));
	if (pat_wc >= 0)
		EXPECT_EQ(pat_wc, pat_entries(self->info.bars[2].start, b.len,
					      "write-combining"));
	/* A mapping outlives its fd: closing dev2 frees nothing. */
	close(dev2);
	EXPECT_EQ(-EBUSY, mcp_try_mmap(self->devfd, self->pg, PROT_READ, MAP_SHARED,
				       b.wc_offset));
	ASSERT_EQ(0, munmap(uc, self->pg));
	EXPECT_EQ(0, mcp_try_mmap(self->devfd, self->pg, PROT_READ, MAP_SHARED, b.wc_offset));
	EXPECT_EQ(0, mcp_try_mmap(self->devfd, self->pg, PROT_READ, MAP_SHARED, b.offset));
}

/*
 * The write-combining self-test stores to a BAR at probe; the generic
 * path knows nothing of the device, so it never runs it: pci-testdev's
 * prefetchable BAR2 could be tested, and wc_test says it was not.
 */
TEST_F(generic, wc_self_test_not_run)
{
	struct mcp_bar_info b;
	char buf[64];

	self->devfd = mcp_dev_open(self->fd, self->idx);
	ASSERT_LE(0, self->devfd);
	ASSERT_EQ(0, mcp_bar_info(self->devfd, 2, &b));
	if (b.wc_status != MCP_WC_ALLOWED)
		SKIP(return, "BAR2 cannot be mapped write-combining here (wc_status %u)",
		     b.wc_status);
	EXPECT_EQ(MCP_WC_NOT_RUN, self->info.wc_test)
		TH_LOG("wc_test %u: the self-test ran on a generic device", self->info.wc_test);
	EXPECT_STREQ("not_run", mcp_dev_sysfs(self->addr, "wc_test", buf, sizeof(buf)));
}

TEST_F(generic, no_interrupts)
{
	int efd = eventfd(0, EFD_CLOEXEC);
	struct mcp_irq_unmask u = { .size = sizeof(u), .vector = 0 };

	ASSERT_LE(0, efd);
	self->devfd = mcp_dev_open(self->fd, self->idx);
	ASSERT_LE(0, self->devfd);
	EXPECT_EQ(-EINVAL, mcp_irq_set_eventfd(self->devfd, 0, efd));
	EXPECT_EQ(-EINVAL, mcp_ioctl(self->devfd, MCP_IOC_IRQ_UNMASK, &u));
	close(efd);
}

/* The same device bound through driver_override + drivers_probe. */
TEST_F(generic, driver_override_binds)
{
	char path[PATH_MAX];
	struct mcp_dev_info info;

	mcp_testdev_release(self->addr);
	ASSERT_EQ(self->count0, mcp_dev_list(self->fd, NULL, 0));
	snprintf(path, sizeof(path), MCP_PCI_DEVICES "/%s/driver_override", self->addr);
	ASSERT_EQ(0, mcp_write_file(path, MCP_DEVICE_NAME));
	EXPECT_EQ(0, mcp_write_file("/sys/bus/pci/drivers_probe", self->addr));
	EXPECT_TRUE(mcp_pci_bound(self->addr));
	EXPECT_LE(0, mcp_dev_find(self->fd, self->addr, &info));
	EXPECT_STREQ("generic", info.backend);
	EXPECT_EQ(0, mcp_pci_unbind(self->addr));
	EXPECT_EQ(0, mcp_write_file(path, "\n"));
	EXPECT_EQ(self->count0, mcp_dev_list(self->fd, NULL, 0));
}

/* ---- Kernel lockdown (last: it cannot be lifted until reboot) ---- */

#define LOCKDOWN_FILE	"/sys/kernel/security/lockdown"

/*
 * The lockdown mode in force: "none", "integrity", "confidentiality" (the
 * one in brackets), or NULL when the kernel has no lockdown LSM.
 */
static const char *lockdown_mode(char *buf, size_t len)
{
	char *open, *close;

	if (access(LOCKDOWN_FILE, F_OK))
		mount("securityfs", "/sys/kernel/security", "securityfs", 0, NULL);
	if (mcp_read_file(LOCKDOWN_FILE, buf, len) <= 0)
		return NULL;
	open = strchr(buf, '[');
	close = open ? strchr(open, ']') : NULL;
	if (!close)
		return NULL;
	*close = '\0';
	return open + 1;
}

/*
 * Under lockdown a raw BAR mapping is refused, as sysfs resourceN is
 * (LOCKDOWN_PCI_ACCESS).  A kernel locked down at boot refuses the
 * unsigned mcp.ko, so the test locks the running kernel down itself when
 * MCP_TEST_LOCKDOWN=1 is set (run-vm.py --env MCP_TEST_LOCKDOWN=1
 * --binary mcp_dev_test --test lockdown_refuses_bar_mmap); otherwise it
 * runs only on a kernel already locked down and skips.
 */
TEST(lockdown_refuses_bar_mmap)
{
	char buf[256], addr[MCP_PCI_ADDR_LEN], path[PATH_MAX];
	const char *mode = lockdown_mode(buf, sizeof(buf));
	const char *want = getenv("MCP_TEST_LOCKDOWN");
	struct mcp_dev_info info;
	struct mcp_bar_info b;
	long pg = sysconf(_SC_PAGESIZE);
	int fd, devfd, idx, res;

	if (!mode)
		SKIP(return, "no lockdown LSM (%s)", LOCKDOWN_FILE);
	if (!strcmp(mode, "none")) {
		if (!want || strcmp(want, "1"))
			SKIP(return, "kernel not locked down; MCP_TEST_LOCKDOWN=1 locks it");
		ASSERT_EQ(0, mcp_write_file(LOCKDOWN_FILE, "integrity"));
		mode = lockdown_mode(buf, sizeof(buf));
		ASSERT_NE(NULL, mode);
		ASSERT_STREQ("integrity", mode);
	}

	ASSERT_EQ(0, mcp_ensure_loaded());
	fd = mcp_open();
	ASSERT_LE(0, fd);
	idx = find_edu(_metadata, fd, addr, &info);
	ASSERT_LE(0, idx);
	devfd = mcp_dev_open(fd, idx);
	ASSERT_LE(0, devfd) TH_LOG("DEV_OPEN: %s", strerror(-devfd));
	ASSERT_EQ(0, mcp_bar_info(devfd, 0, &b));

	/* The kernel's own rule for the same BAR. */
	snprintf(path, sizeof(path), "%s/%s/resource0", MCP_PCI_DEVICES, addr);
	res = open(path, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, res) TH_LOG("%s: %s", path, strerror(errno));
	EXPECT_EQ(-EPERM, mcp_try_mmap(res, pg, PROT_READ, MAP_SHARED, 0));
	close(res);

	EXPECT_EQ(-EPERM, mcp_try_mmap(devfd, pg, PROT_READ, MAP_SHARED, b.offset))
		TH_LOG("BAR0 mapped through MCP under lockdown=%s", mode);
	if (b.wc_offset)
		EXPECT_EQ(-EPERM, mcp_try_mmap(devfd, pg, PROT_READ | PROT_WRITE,
					       MAP_SHARED, b.wc_offset));
	close(devfd);
	close(fd);
}

MCP_TEST_MAIN
