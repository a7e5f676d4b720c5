// SPDX-License-Identifier: GPL-2.0-only
/*
 * MCP_IOC_GET_TOPOLOGY: results compared with /sys/devices/system/node,
 * the -ENOSPC size negotiation (arrays untouched), capacities, flags and
 * bad pointers.
 */
#include "mcp_test.h"

#define MAX_NODES	64
#define MAX_CPUS	1024
#define PAT8		0x5a
#define PAT64		0x5a5a5a5a5a5a5a5aull
#define PAT32		0x5a5a5a5au

/* What sysfs says about the machine. */
struct sys_topo {
	int nr_nodes;
	int ids[MAX_NODES];
	int nr_cpus[MAX_NODES];
	unsigned char cpu_in[MAX_NODES][MAX_CPUS];
	int dist[MAX_NODES][MAX_NODES];
	unsigned long long mem_total[MAX_NODES];
	int nr_cpu_ids;
	int cpus_online;
};

static int last_in_list(const char *s)
{
	const char *p = s + strlen(s);

	while (p > s && (p[-1] < '0' || p[-1] > '9'))
		p--;
	while (p > s && p[-1] >= '0' && p[-1] <= '9')
		p--;
	return atoi(p);
}

static int read_sys_topo(struct sys_topo *st)
{
	unsigned char online[MAX_NODES] = { 0 };
	char buf[4096], path[128];

	memset(st, 0, sizeof(*st));
	if (mcp_read_file("/sys/devices/system/node/online", buf, sizeof(buf)) <= 0)
		return -1;
	if (mcp_parse_list(buf, online, MAX_NODES) <= 0)
		return -1;
	for (int nid = 0; nid < MAX_NODES; nid++)
		if (online[nid])
			st->ids[st->nr_nodes++] = nid;

	for (int i = 0; i < st->nr_nodes; i++) {
		int nid = st->ids[i];
		char *line, *save = NULL, *tok;
		int j = 0;

		snprintf(path, sizeof(path), "/sys/devices/system/node/node%d/cpulist", nid);
		if (mcp_read_file(path, buf, sizeof(buf)) < 0)
			return -1;
		st->nr_cpus[i] = mcp_parse_list(buf, st->cpu_in[i], MAX_CPUS);

		snprintf(path, sizeof(path), "/sys/devices/system/node/node%d/distance", nid);
		if (mcp_read_file(path, buf, sizeof(buf)) <= 0)
			return -1;
		for (tok = strtok_r(buf, " \n", &save); tok && j < MAX_NODES;
		     tok = strtok_r(NULL, " \n", &save))
			st->dist[i][j++] = atoi(tok);
		if (j != st->nr_nodes)
			return -1;

		snprintf(path, sizeof(path), "/sys/devices/system/node/node%d/meminfo", nid);
		if (mcp_read_file(path, buf, sizeof(buf)) <= 0)
			return -1;
		save = NULL;
		for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
			unsigned long long kb;
			int n;

			if (sscanf(line, "Node %d MemTotal: %llu kB", &n, &kb) == 2)
				st->mem_total[i] = kb * 1024;
		}
	}
	if (mcp_read_file("/sys/devices/system/cpu/possible", buf, sizeof(buf)) <= 0)
		return -1;
	st->nr_cpu_ids = last_in_list(buf) + 1;
	if (mcp_read_file("/sys/devices/system/cpu/online", buf, sizeof(buf)) <= 0)
		return -1;
	st->cpus_online = mcp_parse_list(buf, NULL, MAX_CPUS);
	return 0;
}

FIXTURE(topo) {
	int fd;
	struct sys_topo st;
	__u32 nr_words;
	long pg;
};

FIXTURE_SETUP(topo)
{
	self->pg = sysconf(_SC_PAGESIZE);
	ASSERT_EQ(0, read_sys_topo(&self->st)) TH_LOG("cannot read /sys/devices/system/node");
	ASSERT_LT(0, self->st.nr_nodes);
	self->nr_words = (self->st.nr_cpu_ids + 63) / 64;
	self->fd = mcp_open();
	ASSERT_LE(0, self->fd) TH_LOG("open %s: %s", MCP_DEV_PATH, strerror(errno));
}

FIXTURE_TEARDOWN(topo)
{
	if (self->fd >= 0)
		close(self->fd);
}

/* Arrays for a call, filled with a pattern. */
struct topo_bufs {
	struct mcp_node_info nodes[MAX_NODES];
	__u64 masks[MAX_NODES * 4];
	__u32 dist[MAX_NODES * MAX_NODES];
};

static void fill_pattern(struct topo_bufs *b)
{
	memset(b, PAT8, sizeof(*b));
}

static int untouched(const void *p, size_t len)
{
	const unsigned char *c = p;

	for (size_t i = 0; i < len; i++)
		if (c[i] != PAT8)
			return 0;
	return 1;
}

static void init_topo(struct mcp_topology *t, struct topo_bufs *b,
		      __u32 nodes_cap, __u32 words)
{
	memset(t, 0, sizeof(*t));
	t->size = sizeof(*t);
	t->nodes_cap = nodes_cap;
	t->cpumask_words = words;
	t->nodes_ptr = (uintptr_t)b->nodes;
	t->cpumasks_ptr = (uintptr_t)b->masks;
	t->distances_ptr = (uintptr_t)b->dist;
}

/* Checks a successful answer against sysfs. */
static void check_answer(struct __test_metadata *_metadata, FIXTURE_DATA(topo) *self,
			 const struct mcp_topology *t, const struct topo_bufs *b)
{
	const struct sys_topo *st = &self->st;
	unsigned int n = t->nr_nodes, w = t->nr_cpu_words;
	int sysidx[MAX_NODES];

	ASSERT_EQ(st->nr_nodes, (int)n);
	ASSERT_EQ(self->nr_words, w);
	EXPECT_EQ(st->nr_cpu_ids, (int)t->nr_cpu_ids);
	EXPECT_EQ(st->cpus_online, (int)t->nr_cpus_online);
	EXPECT_EQ(sysconf(_SC_NPROCESSORS_ONLN), (long)t->nr_cpus_online);

	for (unsigned int i = 0; i < n; i++) {
		const struct mcp_node_info *ni = &b->nodes[i];
		int k, cpus = 0;

		for (k = 0; k < st->nr_nodes; k++)
			if (st->ids[k] == (int)ni->node_id)
				break;
		ASSERT_LT(k, st->nr_nodes) TH_LOG("node id %u is not online", ni->node_id);
		sysidx[i] = k;
		for (unsigned int j = 0; j < i; j++) {
			ASSERT_NE(b->nodes[j].node_id, ni->node_id) TH_LOG("node %u twice", ni->node_id);
		}

		EXPECT_EQ(st->nr_cpus[k], (int)ni->nr_cpus) TH_LOG("node %u", ni->node_id);
		for (int c = 0; c < st->nr_cpu_ids; c++) {
			int bit = (b->masks[i * w + c / 64] >> (c % 64)) & 1;

			EXPECT_EQ(st->cpu_in[k][c], bit) TH_LOG("node %u cpu %d", ni->node_id, c);
			cpus += bit;
		}
		EXPECT_EQ((int)ni->nr_cpus, cpus) TH_LOG("node %u: nr_cpus vs mask", ni->node_id);
		/* Bits past nr_cpu_ids in the last word are clear. */
		if (st->nr_cpu_ids % 64)
			EXPECT_EQ(0, b->masks[i * w + w - 1] >> (st->nr_cpu_ids % 64));

		EXPECT_EQ(st->mem_total[k], ni->mem_total_bytes) TH_LOG("node %u", ni->node_id);
		EXPECT_LT(0, ni->mem_free_bytes);
		EXPECT_GE(ni->mem_total_bytes, ni->mem_free_bytes);
	}
	for (unsigned int i = 0; i < n; i++) {
		for (unsigned int j = 0; j < n; j++) {
			EXPECT_EQ(st->dist[sysidx[i]][sysidx[j]], (int)b->dist[i * n + j])
				TH_LOG("distance %u -> %u", b->nodes[i].node_id, b->nodes[j].node_id);
		}
		EXPECT_EQ(10, (int)b->dist[i * n + i]);
	}
	/* Node ids ascend (the kernel walks the online mask). */
	for (unsigned int i = 1; i < n; i++)
		EXPECT_LT(b->nodes[i - 1].node_id, b->nodes[i].node_id);
}

TEST_F(topo, success_exact_caps)
{
	struct mcp_topology t;
	static struct topo_bufs b;

	fill_pattern(&b);
	init_topo(&t, &b, self->st.nr_nodes, self->nr_words);
	ASSERT_EQ(0, mcp_ioctl(self->fd, MCP_IOC_GET_TOPOLOGY, &t));
	EXPECT_EQ(sizeof(t), t.size);
	EXPECT_EQ((__u32)self->st.nr_nodes, t.nodes_cap);
	check_answer(_metadata, self, &t, &b);
	/* Nothing beyond the arrays the caller described. */
	EXPECT_TRUE(untouched(&b.nodes[t.nr_nodes], sizeof(b.nodes[0])));
	EXPECT_TRUE(untouched(&b.masks[t.nr_nodes * t.nr_cpu_words], 8));
	EXPECT_TRUE(untouched(&b.dist[t.nr_nodes * t.nr_nodes], 4));
}

/* The size query: zero capacities, -ENOSPC, sizes reported, arrays untouched. */
TEST_F(topo, zero_caps_enospc)
{
	struct mcp_topology t;
	static struct topo_bufs b;

	fill_pattern(&b);
	init_topo(&t, &b, 0, 0);
	t.nr_nodes = t.nr_cpu_words = t.nr_cpus_online = t.nr_cpu_ids = PAT32;
	ASSERT_EQ(-ENOSPC, mcp_ioctl(self->fd, MCP_IOC_GET_TOPOLOGY, &t));
	EXPECT_EQ((__u32)self->st.nr_nodes, t.nr_nodes);
	EXPECT_EQ(self->nr_words, t.nr_cpu_words);
	EXPECT_EQ((__u32)self->st.cpus_online, t.nr_cpus_online);
	EXPECT_EQ((__u32)self->st.nr_cpu_ids, t.nr_cpu_ids);
	EXPECT_TRUE(untouched(&b, sizeof(b)));
	/* In fields are not changed. */
	EXPECT_EQ(0, t.nodes_cap);
	EXPECT_EQ(0, t.cpumask_words);
	EXPECT_EQ((uintptr_t)b.nodes, t.nodes_ptr);
}

/* Asking for the sizes needs no arrays at all. */
TEST_F(topo, zero_caps_null_pointers_enospc)
{
	struct mcp_topology t = { .size = sizeof(t) };

	ASSERT_EQ(-ENOSPC, mcp_ioctl(self->fd, MCP_IOC_GET_TOPOLOGY, &t));
	EXPECT_EQ((__u32)self->st.nr_nodes, t.nr_nodes);
	EXPECT_EQ(self->nr_words, t.nr_cpu_words);
}

TEST_F(topo, nodes_cap_one_short_enospc)
{
	struct mcp_topology t;
	static struct topo_bufs b;

	fill_pattern(&b);
	init_topo(&t, &b, self->st.nr_nodes - 1, self->nr_words);
	ASSERT_EQ(-ENOSPC, mcp_ioctl(self->fd, MCP_IOC_GET_TOPOLOGY, &t));
	EXPECT_EQ((__u32)self->st.nr_nodes, t.nr_nodes);
	EXPECT_EQ(self->nr_words, t.nr_cpu_words);
	EXPECT_TRUE(untouched(&b, sizeof(b)));
}

TEST_F(topo, cpumask_words_one_short_enospc)
{
	struct mcp_topology t;
	static struct topo_bufs b;

	fill_pattern(&b);
	init_topo(&t, &b, self->st.nr_nodes, self->nr_words - 1);
	ASSERT_EQ(-ENOSPC, mcp_ioctl(self->fd, MCP_IOC_GET_TOPOLOGY, &t));
	EXPECT_EQ((__u32)self->st.nr_nodes, t.nr_nodes);
	EXPECT_EQ(self->nr_words, t.nr_cpu_words);
	EXPECT_TRUE(untouched(&b, sizeof(b)));
}

/* Bigger capacities work; the rows use the needed strides, not the caps. */
TEST_F(topo, bigger_caps_ok)
{
	struct mcp_topology t;
	static struct topo_bufs b;
	__u32 n = self->st.nr_nodes, w = self->nr_words;

	fill_pattern(&b);
	init_topo(&t, &b, n + 3, w + 2);
	ASSERT_EQ(0, mcp_ioctl(self->fd, MCP_IOC_GET_TOPOLOGY, &t));
	check_answer(_metadata, self, &t, &b);
	EXPECT_TRUE(untouched(&b.nodes[n], 3 * sizeof(b.nodes[0])));
	EXPECT_TRUE(untouched(&b.masks[n * w], (size_t)(n + 3) * (w + 2) * 8 - n * w * 8));
	EXPECT_TRUE(untouched(&b.dist[n * n], ((size_t)(n + 3) * (n + 3) - n * n) * 4));
}

/* The size query then the real call, as a library would do it. */
TEST_F(topo, query_then_fetch)
{
	struct mcp_topology t = { .size = sizeof(t) };
	struct mcp_node_info *nodes;
	__u64 *masks;
	__u32 *dist;

	ASSERT_EQ(-ENOSPC, mcp_ioctl(self->fd, MCP_IOC_GET_TOPOLOGY, &t));
	nodes = calloc(t.nr_nodes, sizeof(*nodes));
	masks = calloc((size_t)t.nr_nodes * t.nr_cpu_words, sizeof(*masks));
	dist = calloc((size_t)t.nr_nodes * t.nr_nodes, sizeof(*dist));
	ASSERT_TRUE(nodes && masks && dist);
	t.nodes_cap = t.nr_nodes;
	t.cpumask_words = t.nr_cpu_words;
	t.nodes_ptr = (uintptr_t)nodes;
	t.cpumasks_ptr = (uintptr_t)masks;
	t.distances_ptr = (uintptr_t)dist;
	ASSERT_EQ(0, mcp_ioctl(self->fd, MCP_IOC_GET_TOPOLOGY, &t));
	for (__u32 i = 0; i < t.nr_nodes; i++)
		EXPECT_EQ(self->st.ids[i], (int)nodes[i].node_id);
	free(nodes);
	free(masks);
	free(dist);
}

TEST_F(topo, flags_einval)
{
	static const __u32 flags[] = { 1, 0x80000000u, 0xffffffffu };
	static struct topo_bufs b;

	for (size_t i = 0; i < ARRAY_SIZE(flags); i++) {
		struct mcp_topology t;

		fill_pattern(&b);
		init_topo(&t, &b, self->st.nr_nodes, self->nr_words);
		t.flags = flags[i];
		EXPECT_EQ(-EINVAL, mcp_ioctl(self->fd, MCP_IOC_GET_TOPOLOGY, &t))
			TH_LOG("flags 0x%x", flags[i]);
		EXPECT_TRUE(untouched(&b, sizeof(b)));
		/* Flags win over the size query too. */
		t.nodes_cap = 0;
		EXPECT_EQ(-EINVAL, mcp_ioctl(self->fd, MCP_IOC_GET_TOPOLOGY, &t));
	}
}

TEST_F(topo, reserved_einval)
{
	static const __u32 vals[] = { 1, 0x80000000u, 0xffffffffu };
	static struct topo_bufs b;

	for (size_t i = 0; i < ARRAY_SIZE(vals); i++) {
		struct mcp_topology t;

		fill_pattern(&b);
		init_topo(&t, &b, self->st.nr_nodes, self->nr_words);
		t.reserved = vals[i];
		EXPECT_EQ(-EINVAL, mcp_ioctl(self->fd, MCP_IOC_GET_TOPOLOGY, &t))
			TH_LOG("reserved 0x%x", vals[i]);
		EXPECT_TRUE(untouched(&b, sizeof(b)));
	}
}

TEST_F(topo, node_info_size_ver0)
{
	static struct topo_bufs a, b;
	struct mcp_topology ta, tb;

	EXPECT_EQ(MCP_NODE_INFO_SIZE_VER0, sizeof(struct mcp_node_info));
	fill_pattern(&a);
	fill_pattern(&b);
	init_topo(&ta, &a, self->st.nr_nodes, self->nr_words);
	init_topo(&tb, &b, self->st.nr_nodes, self->nr_words);
	tb.node_info_size = MCP_NODE_INFO_SIZE_VER0;
	ASSERT_EQ(0, mcp_ioctl(self->fd, MCP_IOC_GET_TOPOLOGY, &ta));
	ASSERT_EQ(0, mcp_ioctl(self->fd, MCP_IOC_GET_TOPOLOGY, &tb));
	check_answer(_metadata, self, &tb, &b);
	/* 0 and 24 mean the same stride (free memory may differ). */
	for (int i = 0; i < self->st.nr_nodes; i++) {
		EXPECT_EQ(a.nodes[i].node_id, b.nodes[i].node_id);
		EXPECT_EQ(a.nodes[i].mem_total_bytes, b.nodes[i].mem_total_bytes);
	}
	EXPECT_EQ(MCP_NODE_INFO_SIZE_VER0, tb.node_info_size);
}

/* A newer caller's bigger entries: known fields, then a zeroed tail. */
TEST_F(topo, node_info_size_larger_zero_tail)
{
	static const __u32 strides[] = { 25, 32, 40, 64, 256 };
	static unsigned char raw[64 * 256 + 64];
	static struct topo_bufs b;
	__u32 n = self->st.nr_nodes;

	for (size_t s = 0; s < ARRAY_SIZE(strides); s++) {
		__u32 stride = strides[s];
		struct mcp_topology t;

		fill_pattern(&b);
		memset(raw, PAT8, sizeof(raw));
		init_topo(&t, &b, n, self->nr_words);
		t.node_info_size = stride;
		t.nodes_ptr = (uintptr_t)raw;
		ASSERT_EQ(0, mcp_ioctl(self->fd, MCP_IOC_GET_TOPOLOGY, &t)) TH_LOG("stride %u", stride);
		for (__u32 i = 0; i < n; i++) {
			unsigned char *e = raw + (size_t)i * stride;

			/* Copy the entry out to an aligned struct for check_answer(). */
			memcpy(&b.nodes[i], e, sizeof(b.nodes[i]));
			for (__u32 j = sizeof(struct mcp_node_info); j < stride; j++) {
				ASSERT_EQ(0, e[j]) TH_LOG("stride %u node %u byte %u", stride, i, j);
			}
		}
		/* Nothing past n entries. */
		EXPECT_TRUE(untouched(raw + (size_t)n * stride, 64));
		check_answer(_metadata, self, &t, &b);
	}
}

TEST_F(topo, node_info_size_bad_einval)
{
	static const __u32 strides[] = { 1, 8, MCP_NODE_INFO_SIZE_VER0 - 1,
					 MCP_ARG_SIZE_MAX + 1, 0xffffffffu };
	static struct topo_bufs b;

	for (size_t s = 0; s < ARRAY_SIZE(strides); s++) {
		struct mcp_topology t;

		fill_pattern(&b);
		init_topo(&t, &b, self->st.nr_nodes, self->nr_words);
		t.node_info_size = strides[s];
		EXPECT_EQ(-EINVAL, mcp_ioctl(self->fd, MCP_IOC_GET_TOPOLOGY, &t))
			TH_LOG("node_info_size %u", strides[s]);
		EXPECT_TRUE(untouched(&b, sizeof(b)));
	}
}

TEST_F(topo, bad_sizes)
{
	static struct topo_bufs b;
	unsigned char *big = calloc(1, MCP_ARG_SIZE_MAX);
	struct mcp_topology t;

	ASSERT_NE(NULL, big);
	for (__u32 size = 0; size < MCP_TOPOLOGY_SIZE_VER0; size += 4) {
		init_topo(&t, &b, self->st.nr_nodes, self->nr_words);
		t.size = size;
		EXPECT_EQ(-EINVAL, mcp_ioctl(self->fd, MCP_IOC_GET_TOPOLOGY, &t)) TH_LOG("size %u", size);
	}
	init_topo(&t, &b, self->st.nr_nodes, self->nr_words);
	t.size = MCP_ARG_SIZE_MAX + 1;
	EXPECT_EQ(-E2BIG, mcp_ioctl(self->fd, MCP_IOC_GET_TOPOLOGY, &t));

	/* Bigger struct, zero tail: fine. */
	init_topo((void *)big, &b, self->st.nr_nodes, self->nr_words);
	((struct mcp_topology *)big)->size = MCP_ARG_SIZE_MAX;
	EXPECT_EQ(0, mcp_ioctl(self->fd, MCP_IOC_GET_TOPOLOGY, big));
	EXPECT_EQ((__u32)self->st.nr_nodes, ((struct mcp_topology *)big)->nr_nodes);
	for (size_t j = sizeof(t); j < MCP_ARG_SIZE_MAX; j++) {
		ASSERT_EQ(0, big[j]) TH_LOG("byte %zu written", j);
	}
	/* Non-zero tail: -E2BIG. */
	big[sizeof(t) + 3] = 1;
	EXPECT_EQ(-E2BIG, mcp_ioctl(self->fd, MCP_IOC_GET_TOPOLOGY, big));
	free(big);
}

static void expect_efault(struct __test_metadata *_metadata, int fd,
			  struct mcp_topology *t, const char *what)
{
	EXPECT_EQ(-EFAULT, mcp_ioctl(fd, MCP_IOC_GET_TOPOLOGY, t)) TH_LOG("%s", what);
}

TEST_F(topo, bad_array_pointers_efault)
{
	static struct topo_bufs b;
	struct mcp_topology t;
	void *hole = mcp_unmapped_addr();
	void *ro = mmap(NULL, self->pg, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	__u32 n = self->st.nr_nodes, w = self->nr_words;

	ASSERT_NE(MAP_FAILED, ro);
	const struct { const char *what; int which; __u64 ptr; } cases[] = {
		{ "nodes NULL", 0, 0 },
		{ "nodes unmapped", 0, (uintptr_t)hole },
		{ "nodes read-only", 0, (uintptr_t)ro },
		{ "nodes kernel address", 0, 0xffff888000000000ull },
		{ "cpumasks NULL", 1, 0 },
		{ "cpumasks unmapped", 1, (uintptr_t)hole },
		{ "cpumasks read-only", 1, (uintptr_t)ro },
		{ "distances NULL", 2, 0 },
		{ "distances unmapped", 2, (uintptr_t)hole },
		{ "distances read-only", 2, (uintptr_t)ro },
		{ "distances non-canonical", 2, 0x8000000000000000ull },
	};

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		init_topo(&t, &b, n, w);
		if (cases[i].which == 0)
			t.nodes_ptr = cases[i].ptr;
		else if (cases[i].which == 1)
			t.cpumasks_ptr = cases[i].ptr;
		else
			t.distances_ptr = cases[i].ptr;
		expect_efault(_metadata, self->fd, &t, cases[i].what);
	}
	munmap(ro, self->pg);
}

/* An array that starts mapped and runs into a hole. */
TEST_F(topo, array_runs_into_hole_efault)
{
	static struct topo_bufs b;
	struct mcp_topology t;
	char *page = mcp_guarded_page();
	__u32 n = self->st.nr_nodes;

	ASSERT_NE(NULL, page);
	init_topo(&t, &b, n, self->nr_words);
	/* The last node record sticks 8 bytes into the hole. */
	t.nodes_ptr = (uintptr_t)(page + self->pg - n * sizeof(struct mcp_node_info) + 8);
	expect_efault(_metadata, self->fd, &t, "nodes straddle a hole");
	init_topo(&t, &b, n, self->nr_words);
	t.distances_ptr = (uintptr_t)(page + self->pg - (size_t)n * n * 4 + 4);
	expect_efault(_metadata, self->fd, &t, "distances straddle a hole");
	munmap(page, 2 * self->pg);
}

/* Huge capacities must not overflow anything: only nr_nodes rows are written. */
TEST_F(topo, huge_caps)
{
	static struct topo_bufs b;
	struct mcp_topology t;

	fill_pattern(&b);
	init_topo(&t, &b, 0xffffffffu, 0xffffffffu);
	/* cpumask rows have stride nr_cpu_words, so b.masks is big enough. */
	ASSERT_EQ(0, mcp_ioctl(self->fd, MCP_IOC_GET_TOPOLOGY, &t));
	check_answer(_metadata, self, &t, &b);
	init_topo(&t, &b, 0xffffffffu, 0xffffffffu);
	t.nodes_ptr = 0;
	EXPECT_EQ(-EFAULT, mcp_ioctl(self->fd, MCP_IOC_GET_TOPOLOGY, &t));
}

TEST_F(topo, struct_pointer_efault)
{
	struct mcp_topology *t;
	char *page;

	EXPECT_EQ(-EFAULT, mcp_ioctl(self->fd, MCP_IOC_GET_TOPOLOGY, NULL));
	EXPECT_EQ(-EFAULT, mcp_ioctl(self->fd, MCP_IOC_GET_TOPOLOGY, mcp_unmapped_addr()));
	/* Read-only struct: the -ENOSPC answer cannot be copied back. */
	t = mmap(NULL, self->pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, t);
	t->size = sizeof(*t);
	ASSERT_EQ(0, mprotect(t, self->pg, PROT_READ));
	EXPECT_EQ(-EFAULT, mcp_ioctl(self->fd, MCP_IOC_GET_TOPOLOGY, t));
	munmap(t, self->pg);
	/* Size readable, rest of the struct in a hole. */
	page = mcp_guarded_page();
	ASSERT_NE(NULL, page);
	t = (void *)(page + self->pg - 16);
	memset(t, 0, 16);
	t->size = sizeof(*t);
	EXPECT_EQ(-EFAULT, mcp_ioctl(self->fd, MCP_IOC_GET_TOPOLOGY, t));
	munmap(page, 2 * self->pg);
}

/* Free memory moves; total memory and the layout do not. */
TEST_F(topo, repeated_calls_stable)
{
	static struct topo_bufs a, b;
	struct mcp_topology ta, tb;
	__u32 n = self->st.nr_nodes;

	init_topo(&ta, &a, n, self->nr_words);
	ASSERT_EQ(0, mcp_ioctl(self->fd, MCP_IOC_GET_TOPOLOGY, &ta));
	for (int iter = 0; iter < 200; iter++) {
		init_topo(&tb, &b, n, self->nr_words);
		ASSERT_EQ(0, mcp_ioctl(self->fd, MCP_IOC_GET_TOPOLOGY, &tb));
		for (__u32 i = 0; i < n; i++) {
			ASSERT_EQ(a.nodes[i].node_id, b.nodes[i].node_id);
			ASSERT_EQ(a.nodes[i].nr_cpus, b.nodes[i].nr_cpus);
			ASSERT_EQ(a.nodes[i].mem_total_bytes, b.nodes[i].mem_total_bytes);
		}
		ASSERT_EQ(0, memcmp(a.masks, b.masks, n * self->nr_words * 8));
		ASSERT_EQ(0, memcmp(a.dist, b.dist, n * n * 4));
	}
}

MCP_TEST_MAIN
