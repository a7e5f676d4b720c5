// SPDX-License-Identifier: GPL-2.0-only
/*
 * MCP_IOC_GET_VERSION: the success path and every kind of bad input
 * (sizes, flags, pointers), following the extensible-struct rules of
 * uapi/linux/mcp.h.
 */
#include "mcp_test.h"

#define PATTERN 0xa5

FIXTURE(version) {
	int fd;
	long pg;
};

FIXTURE_SETUP(version)
{
	self->pg = sysconf(_SC_PAGESIZE);
	self->fd = mcp_open();
	ASSERT_LE(0, self->fd) TH_LOG("open %s: %s", MCP_DEV_PATH, strerror(errno));
}

FIXTURE_TEARDOWN(version)
{
	if (self->fd >= 0)
		close(self->fd);
}

/* Checks the out fields of a successful call. */
static void check_version_out(struct __test_metadata *_metadata,
			      const struct mcp_version *v)
{
	char sysver[128];
	ssize_t n;

	EXPECT_EQ(MCP_ABI_MAJOR, v->abi_major);
	EXPECT_EQ(MCP_ABI_MINOR, v->abi_minor);
	EXPECT_EQ(MCP_FEAT_VERSION | MCP_FEAT_TOPOLOGY,
		  v->features & (MCP_FEAT_VERSION | MCP_FEAT_TOPOLOGY));
	ASSERT_NE(NULL, memchr(v->module_version, '\0', sizeof(v->module_version)));
	EXPECT_LT(0, (int)strlen(v->module_version));
	/* MODULE_VERSION() shows up as /sys/module/mcp/version. */
	n = mcp_read_file("/sys/module/mcp/version", sysver, sizeof(sysver));
	if (n > 0) {
		sysver[strcspn(sysver, "\n")] = '\0';
		EXPECT_STREQ(sysver, v->module_version);
	}
}

TEST_F(version, success)
{
	struct mcp_version v;

	memset(&v, PATTERN, sizeof(v));
	v.size = sizeof(v);
	v.flags = 0;
	ASSERT_EQ(0, mcp_ioctl(self->fd, MCP_IOC_GET_VERSION, &v));
	EXPECT_EQ(sizeof(v), v.size);
	EXPECT_EQ(0, v.flags);
	check_version_out(_metadata, &v);
	/* The string is NUL-padded: no pattern bytes left behind. */
	for (size_t i = strlen(v.module_version); i < sizeof(v.module_version); i++) {
		ASSERT_EQ(0, v.module_version[i]) TH_LOG("byte %zu of module_version", i);
	}
}

TEST_F(version, sysfs_agrees)
{
	struct mcp_version v = { .size = sizeof(v) };
	char buf[64];

	ASSERT_EQ(0, mcp_ioctl(self->fd, MCP_IOC_GET_VERSION, &v));
	ASSERT_LT(0, mcp_read_file(MCP_SYSFS_DIR "/abi_version", buf, sizeof(buf)));
	EXPECT_STREQ("1.0\n", buf);
	snprintf(buf, sizeof(buf), "%u.%u", v.abi_major, v.abi_minor);
	EXPECT_STREQ("1.0", buf);
	EXPECT_EQ((long long)v.features, mcp_read_ll(MCP_SYSFS_DIR "/features"));
}

TEST_F(version, ioctl_number_encodes_ver0_size)
{
	EXPECT_EQ(MCP_VERSION_SIZE_VER0, _IOC_SIZE(MCP_IOC_GET_VERSION));
	EXPECT_EQ(MCP_IOC_MAGIC, _IOC_TYPE(MCP_IOC_GET_VERSION));
	EXPECT_EQ(0, _IOC_NR(MCP_IOC_GET_VERSION));
	EXPECT_EQ(_IOC_READ | _IOC_WRITE, _IOC_DIR(MCP_IOC_GET_VERSION));
	EXPECT_EQ(MCP_VERSION_SIZE_VER0, sizeof(struct mcp_version));
}

static void check_bad_size(struct __test_metadata *_metadata, int fd,
			   __u32 size, int want)
{
	struct mcp_version v;

	memset(&v, PATTERN, sizeof(v));
	v.size = size;
	v.flags = 0;
	EXPECT_EQ(want, mcp_ioctl(fd, MCP_IOC_GET_VERSION, &v)) TH_LOG("size %u", size);
	/* A failed call writes nothing back. */
	EXPECT_EQ(0xa5a5a5a5u, v.abi_major) TH_LOG("size %u", size);
	EXPECT_EQ(size, v.size);
}

TEST_F(version, size_zero_einval)
{
	check_bad_size(_metadata, self->fd, 0, -EINVAL);
}

TEST_F(version, size_too_small_einval)
{
	check_bad_size(_metadata, self->fd, 4, -EINVAL);
	check_bad_size(_metadata, self->fd, 8, -EINVAL);
	check_bad_size(_metadata, self->fd, MCP_VERSION_SIZE_VER0 - 8, -EINVAL);
	check_bad_size(_metadata, self->fd, MCP_VERSION_SIZE_VER0 - 1, -EINVAL);
}

TEST_F(version, size_too_big_e2big)
{
	check_bad_size(_metadata, self->fd, MCP_ARG_SIZE_MAX + 1, -E2BIG);
	check_bad_size(_metadata, self->fd, 1 << 20, -E2BIG);
	check_bad_size(_metadata, self->fd, 0xffffffffu, -E2BIG);
}

/* A newer caller's bigger struct with an all-zero tail works. */
TEST_F(version, bigger_size_zero_tail_ok)
{
	static const __u32 sizes[] = { MCP_VERSION_SIZE_VER0 + 1,
				       MCP_VERSION_SIZE_VER0 + 8, 512,
				       MCP_ARG_SIZE_MAX };
	unsigned char *buf = calloc(1, MCP_ARG_SIZE_MAX);

	ASSERT_NE(NULL, buf);
	for (size_t i = 0; i < ARRAY_SIZE(sizes); i++) {
		struct mcp_version *v = (void *)buf;

		memset(buf, 0, MCP_ARG_SIZE_MAX);
		v->size = sizes[i];
		ASSERT_EQ(0, mcp_ioctl(self->fd, MCP_IOC_GET_VERSION, buf))
			TH_LOG("size %u", sizes[i]);
		EXPECT_EQ(sizes[i], v->size);
		check_version_out(_metadata, v);
		/* Nothing is written past the struct the kernel knows. */
		for (size_t j = sizeof(*v); j < MCP_ARG_SIZE_MAX; j++) {
			ASSERT_EQ(0, buf[j]) TH_LOG("byte %zu, size %u", j, sizes[i]);
		}
	}
	free(buf);
}

/* A bigger struct whose tail is not zero asks for something unknown. */
TEST_F(version, bigger_size_nonzero_tail_e2big)
{
	static const struct { __u32 size; __u32 at; } cases[] = {
		{ MCP_VERSION_SIZE_VER0 + 1, MCP_VERSION_SIZE_VER0 },
		{ 128, 100 },
		{ 128, 127 },
		{ MCP_ARG_SIZE_MAX, MCP_ARG_SIZE_MAX - 1 },
	};
	unsigned char *buf = calloc(1, MCP_ARG_SIZE_MAX);

	ASSERT_NE(NULL, buf);
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct mcp_version *v = (void *)buf;

		memset(buf, 0, MCP_ARG_SIZE_MAX);
		v->size = cases[i].size;
		buf[cases[i].at] = 1;
		EXPECT_EQ(-E2BIG, mcp_ioctl(self->fd, MCP_IOC_GET_VERSION, buf))
			TH_LOG("size %u, non-zero byte %u", cases[i].size, cases[i].at);
		EXPECT_EQ(0, v->abi_major);
	}
	free(buf);
}

TEST_F(version, flags_einval)
{
	static const __u32 flags[] = { 1, 2, 0x80000000u, 0xffffffffu };

	for (size_t i = 0; i < ARRAY_SIZE(flags); i++) {
		struct mcp_version v;

		memset(&v, PATTERN, sizeof(v));
		v.size = sizeof(v);
		v.flags = flags[i];
		EXPECT_EQ(-EINVAL, mcp_ioctl(self->fd, MCP_IOC_GET_VERSION, &v))
			TH_LOG("flags 0x%x", flags[i]);
		EXPECT_EQ(0xa5a5a5a5u, v.abi_major);
	}
}

TEST_F(version, null_efault)
{
	EXPECT_EQ(-EFAULT, mcp_ioctl(self->fd, MCP_IOC_GET_VERSION, NULL));
}

TEST_F(version, unmapped_efault)
{
	EXPECT_EQ(-EFAULT, mcp_ioctl(self->fd, MCP_IOC_GET_VERSION, mcp_unmapped_addr()));
	/* Kernel addresses are not user memory. */
	EXPECT_EQ(-EFAULT, mcp_ioctl(self->fd, MCP_IOC_GET_VERSION,
				     (void *)0xffff888000000000ull));
	EXPECT_EQ(-EFAULT, mcp_ioctl(self->fd, MCP_IOC_GET_VERSION,
				     (void *)0xffffffffffffff00ull));
}

/* The size field is readable but the rest of the struct is not mapped. */
TEST_F(version, straddles_hole_efault)
{
	char *page = mcp_guarded_page();
	struct mcp_version *v;

	ASSERT_NE(NULL, page);
	v = (void *)(page + self->pg - 8);
	v->size = sizeof(*v);
	v->flags = 0;
	EXPECT_EQ(-EFAULT, mcp_ioctl(self->fd, MCP_IOC_GET_VERSION, v));
	/* A larger size whose tail lies in the hole: still -EFAULT. */
	v = (void *)(page + self->pg - sizeof(*v));
	memset(v, 0, sizeof(*v));
	v->size = sizeof(*v) + 64;
	EXPECT_EQ(-EFAULT, mcp_ioctl(self->fd, MCP_IOC_GET_VERSION, v));
	munmap(page, 2 * self->pg);
}

/* Readable but not writable: the copy back fails. */
TEST_F(version, readonly_efault)
{
	struct mcp_version *v = mmap(NULL, self->pg, PROT_READ | PROT_WRITE,
				     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	ASSERT_NE(MAP_FAILED, v);
	v->size = sizeof(*v);
	v->flags = 0;
	ASSERT_EQ(0, mprotect(v, self->pg, PROT_READ));
	EXPECT_EQ(-EFAULT, mcp_ioctl(self->fd, MCP_IOC_GET_VERSION, v));
	EXPECT_EQ(0, v->abi_major);
	munmap(v, self->pg);
}

/* Errors do not leave the fd unusable. */
TEST_F(version, works_after_errors)
{
	struct mcp_version v = { .size = 0 };

	EXPECT_EQ(-EINVAL, mcp_ioctl(self->fd, MCP_IOC_GET_VERSION, &v));
	EXPECT_EQ(-EFAULT, mcp_ioctl(self->fd, MCP_IOC_GET_VERSION, NULL));
	v.size = sizeof(v);
	ASSERT_EQ(0, mcp_ioctl(self->fd, MCP_IOC_GET_VERSION, &v));
	check_version_out(_metadata, &v);
}

/* The device also answers on a read-only open (queries need no write). */
TEST(readonly_open)
{
	struct mcp_version v = { .size = sizeof(v) };
	int fd = open(MCP_DEV_PATH, O_RDONLY | O_CLOEXEC);

	ASSERT_LE(0, fd) TH_LOG("open: %s", strerror(errno));
	EXPECT_EQ(0, mcp_ioctl(fd, MCP_IOC_GET_VERSION, &v));
	EXPECT_EQ(MCP_ABI_MAJOR, v.abi_major);
	close(fd);
}

/* /dev/mcp is not seekable or readable as a file. */
TEST(not_a_regular_file)
{
	char c;
	int fd = mcp_open();

	ASSERT_LE(0, fd);
	EXPECT_EQ(-1, lseek(fd, 0, SEEK_SET));
	EXPECT_EQ(ESPIPE, errno);
	EXPECT_GT(0, read(fd, &c, 1));
	close(fd);
}

MCP_TEST_MAIN
