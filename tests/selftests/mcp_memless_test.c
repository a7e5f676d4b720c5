// SPDX-License-Identifier: GPL-2.0-only
/*
 * Buffers and graphs made on a CPU of a memoryless node (CPUs, no memory:
 * CPU-only sockets, CXL or HBM layouts).  The memless VM topology has one
 * (node 2, CPUs 4-5); on others every test skips.
 *
 * A default buffer made there goes to the node with memory nearest to it
 * by SLIT distance (the lowest id among equals), as numa_mem_id() would
 * on kernels with CONFIG_HAVE_MEMORYLESS_NODES; an explicit memoryless
 * node is refused with -EINVAL, and mcpctl names the nearest node with
 * memory.  The expected node is worked out here from sysfs, not from the
 * module.
 */
/* First: it defines _GNU_SOURCE for every libc header after it. */
#include "mcp_bo.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "mcp_fence.h"
#include "mcp_graph.h"

#define NODE_SYSFS	"/sys/devices/system/node"
#define MAX_NODES	64
#define BO_LEN		(4U << 20)
#define COPY_LEN	(64U << 10)

/* The first memoryless node with a CPU, its first CPU, and its nearest
 * node with memory by /sys/.../nodeN/distance.
 */
struct memless {
	int node;
	int cpu;
	int near;
	int near_dist;
};

/* Reads a node list file into set[]; its count, or -1. */
static int read_nodelist(const char *path, unsigned char *set)
{
	char buf[512];

	memset(set, 0, MAX_NODES);
	if (mcp_read_file(path, buf, sizeof(buf)) < 0)
		return -1;
	return mcp_parse_list(buf, set, MAX_NODES);
}

/* 0 with *m filled; -1 when the system has no memoryless node with CPUs. */
static int find_memless(struct memless *m)
{
	unsigned char online[MAX_NODES], cpu[MAX_NODES], mem[MAX_NODES];
	char path[128], buf[1024], *p, *end;
	int nid;

	if (read_nodelist(NODE_SYSFS "/online", online) <= 0 ||
	    read_nodelist(NODE_SYSFS "/has_cpu", cpu) <= 0 ||
	    read_nodelist(NODE_SYSFS "/has_memory", mem) <= 0)
		return -1;
	for (nid = 0; nid < MAX_NODES; nid++)
		if (online[nid] && cpu[nid] && !mem[nid])
			break;
	if (nid == MAX_NODES)
		return -1;
	m->node = nid;

	m->cpu = mcp_node_first_cpu(nid);
	if (m->cpu < 0)
		return -1;

	/* One distance per online node, in ascending id order. */
	snprintf(path, sizeof(path), NODE_SYSFS "/node%d/distance", nid);
	if (mcp_read_file(path, buf, sizeof(buf)) <= 0)
		return -1;
	m->near = -1;
	m->near_dist = 0;
	p = buf;
	for (int to = 0; to < MAX_NODES; to++) {
		long d;

		if (!online[to])
			continue;
		d = strtol(p, &end, 10);
		if (end == p)
			return -1;
		p = end;
		/* Strict '<' in id order: ties go to the lowest id. */
		if (mem[to] && (m->near < 0 || d < m->near_dist)) {
			m->near = to;
			m->near_dist = (int)d;
		}
	}
	return m->near < 0 ? -1 : 0;
}

/* The node BO_INFO reports for @handle, or -1000 - errno. */
static int bo_node(int fd, __u32 handle)
{
	struct mcp_bo_info info;
	int ret = bo_info(fd, handle, &info);

	return ret ? -1000 + ret : info.node;
}

FIXTURE(memless) {
	struct memless m;
	int fd;
};

FIXTURE_SETUP(memless)
{
	self->fd = -1;
	ASSERT_EQ(0, mcp_ensure_loaded());
	if (find_memless(&self->m))
		SKIP(return, "no memoryless node with CPUs (run on the memless topology)");
	ASSERT_EQ(0, mcp_pin_to_cpu(self->m.cpu));
	ASSERT_EQ(self->m.cpu, sched_getcpu());
	TH_LOG("on CPU %d of memoryless node %d; nearest with memory: %d (distance %d)",
	       self->m.cpu, self->m.node, self->m.near, self->m.near_dist);
	self->fd = mcp_open();
	ASSERT_LE(0, self->fd);
}

/* Linux 6.1's harness runs the test after a SKIP() in the setup. */
#define SKIPPED_IN_SETUP()	(self->fd < 0)

/* Closing the fd frees its BOs and graphs: the counters go back to 0. */
FIXTURE_TEARDOWN(memless)
{
	if (self->fd < 0)
		return;
	close(self->fd);
	EXPECT_EQ(0, mcp_counter_settles("graph_objects", 0));
	EXPECT_EQ(0, mcp_counter_settles("bo_objects", 0));
}

/*
 * A default host buffer made on the memoryless node's CPU lands on the
 * nearest node with memory.  An old module took numa_mem_id(), the
 * memoryless node itself on x86, and failed with -ENOMEM (__GFP_THISNODE).
 */
TEST_F(memless, default_host_bo_on_nearest_memory)
{
	__u32 h;
	char *p;

	if (SKIPPED_IN_SETUP())
		return;
	ASSERT_EQ(0, bo_create_node(self->fd, BO_LEN, 0, -1, &h));
	EXPECT_EQ(self->m.near, bo_node(self->fd, h));
	p = bo_mmap(self->fd, h, BO_LEN);
	ASSERT_NE(NULL, p);
	memset(p, 0x5a, BO_LEN);
	EXPECT_EQ(0x5a, p[BO_LEN - 1]);
	munmap(p, BO_LEN);
	EXPECT_EQ(0, bo_destroy(self->fd, h));

	/* Huge pages take the same node (none reserved: -ENOMEM there). */
	if (!bo_create_node(self->fd, 2U << 20, MCP_BO_HUGEPAGE, -1, &h)) {
		EXPECT_EQ(self->m.near, bo_node(self->fd, h));
		EXPECT_EQ(0, bo_destroy(self->fd, h));
	}
}

/*
 * An explicit memoryless node is refused as a node that cannot hold a
 * buffer (-EINVAL), not as a lack of memory (-ENOMEM); its nearest node
 * with memory, named explicitly, is fine.
 */
TEST_F(memless, explicit_memoryless_node_is_einval)
{
	__u32 h;

	if (SKIPPED_IN_SETUP())
		return;
	EXPECT_EQ(-EINVAL, bo_create_node(self->fd, BO_LEN, MCP_BO_NODE,
					 self->m.node, &h));
	EXPECT_EQ(-EINVAL, bo_create_node(self->fd, 2U << 20,
					 MCP_BO_NODE | MCP_BO_HUGEPAGE,
					 self->m.node, &h));
	ASSERT_EQ(0, bo_create_node(self->fd, BO_LEN, MCP_BO_NODE, self->m.near, &h));
	EXPECT_EQ(self->m.near, bo_node(self->fd, h));
	EXPECT_EQ(0, bo_destroy(self->fd, h));
}

/*
 * A small graph (one COPY on the cpu engine) over default buffers made on
 * the memoryless node's CPU runs and copies.
 */
TEST_F_TIMEOUT(memless, default_graph_runs, 60)
{
	struct mcp_graph_node_status node;
	struct mcp_graph_case_graph g;
	struct mcp_graph_status st;
	struct mcp_graph_exec e;
	__u32 bo[2];
	float *in, *out;
	int graph;

	if (SKIPPED_IN_SETUP())
		return;
	mcp_graph_case_init(&g);
	mcp_graph_case_buffer(&g, COPY_LEN, MCP_GRAPH_BUF_INPUT);
	mcp_graph_case_buffer(&g, COPY_LEN, MCP_GRAPH_BUF_OUTPUT);
	mcp_graph_case_tensor(&g, 0, MCP_DTYPE_F32, 0, 1, COPY_LEN / 4);
	mcp_graph_case_tensor(&g, 1, MCP_DTYPE_F32, 0, 1, COPY_LEN / 4);
	mcp_graph_case_node(&g, MCP_OP_COPY, MCP_GRAPH_ENGINE_CPU, 1, 1, 0, 1);

	for (int i = 0; i < 2; i++) {
		ASSERT_EQ(0, bo_create_node(self->fd, COPY_LEN, 0, -1, &bo[i]));
		EXPECT_EQ(self->m.near, bo_node(self->fd, bo[i]));
	}
	in = bo_mmap(self->fd, bo[0], COPY_LEN);
	out = bo_mmap(self->fd, bo[1], COPY_LEN);
	ASSERT_NE(NULL, in);
	ASSERT_NE(NULL, out);
	for (unsigned int i = 0; i < COPY_LEN / 4; i++)
		in[i] = (float)i + 0.5f;

	graph = graph_create(self->fd, &g, bo);
	ASSERT_LT(0, graph);
	memset(&e, 0, sizeof(e));
	e.size = sizeof(e);
	e.graph = graph;
	e.in_fence = -1;
	e.out_fence = -1;
	ASSERT_EQ(0, mcp_ioctl(self->fd, MCP_IOC_GRAPH_EXEC, &e));
	ASSERT_LE(0, e.out_fence);
	ASSERT_EQ(1, fence_finish(e.out_fence, 30000));
	ASSERT_EQ(0, graph_status(self->fd, e.exec_id, &node, 1, &st));
	EXPECT_EQ(MCP_GRAPH_STATE_DONE, st.state);
	EXPECT_EQ(0, node.result);
	EXPECT_EQ(0, memcmp(in, out, COPY_LEN));
	munmap(in, COPY_LEN);
	munmap(out, COPY_LEN);
}

/* ---- mcpctl on the memoryless node's CPU (it inherits the affinity) ---- */

static char cli_out[16384];

/* "node 2 has no memory; nearest with memory: 1 (distance 17)" */
static void memless_message(const struct memless *m, char *buf, size_t len)
{
	snprintf(buf, len, "node %d has no memory; nearest with memory: %d (distance %d)",
		 m->node, m->near, m->near_dist);
}

TEST_F(memless, mcpctl_bo_create_default_and_explicit)
{
	char want[128], node_arg[16];

	if (SKIPPED_IN_SETUP())
		return;
	if (access(MCP_MCPCTL_PATH, X_OK))
		SKIP(return, "no mcpctl in this image");
	ASSERT_EQ(0, MCP_MCPCTL(cli_out, "bo", "create", "host", "--size", "4M"))
		TH_LOG("%s", cli_out);
	snprintf(want, sizeof(want), "  node:        %d\n", self->m.near);
	EXPECT_NE(NULL, strstr(cli_out, want)) TH_LOG("%s", cli_out);

	snprintf(node_arg, sizeof(node_arg), "%d", self->m.node);
	EXPECT_EQ(1, MCP_MCPCTL(cli_out, "bo", "create", "host", "--size", "4M",
				"--node", node_arg)) TH_LOG("%s", cli_out);
	memless_message(&self->m, want, sizeof(want));
	EXPECT_NE(NULL, strstr(cli_out, want)) TH_LOG("%s", cli_out);
}

TEST_F_TIMEOUT(memless, mcpctl_graph_run_default_and_explicit, 120)
{
	char want[128], node_arg[16];

	if (SKIPPED_IN_SETUP())
		return;
	if (access(MCP_MCPCTL_PATH, X_OK))
		SKIP(return, "no mcpctl in this image");
	ASSERT_EQ(0, MCP_MCPCTL(cli_out, "graph", "build", "--demo", "attention", "-o",
				"/tmp/memless.mgph")) TH_LOG("%s", cli_out);
	EXPECT_EQ(0, MCP_MCPCTL(cli_out, "graph", "run", "/tmp/memless.mgph",
				"--iterations", "1", "--warmup", "0")) TH_LOG("%s", cli_out);

	snprintf(node_arg, sizeof(node_arg), "%d", self->m.node);
	EXPECT_EQ(1, MCP_MCPCTL(cli_out, "graph", "run", "/tmp/memless.mgph",
				"--node", node_arg, "--iterations", "1")) TH_LOG("%s", cli_out);
	memless_message(&self->m, want, sizeof(want));
	EXPECT_NE(NULL, strstr(cli_out, want)) TH_LOG("%s", cli_out);
	unlink("/tmp/memless.mgph");
}

/*
 * A QoS group on the memoryless node's CPUs takes the nearest memory.
 * The old code wrote the node itself to cpuset.mems, which cgroup v2
 * accepts and then ignores (the group gets its parent's nodes).
 */
TEST_F(memless, mcpctl_qos_on_memoryless_node_takes_nearest_memory)
{
	char want[64], node_arg[16];

	if (SKIPPED_IN_SETUP())
		return;
	if (access(MCP_MCPCTL_PATH, X_OK))
		SKIP(return, "no mcpctl in this image");
	snprintf(node_arg, sizeof(node_arg), "%d", self->m.node);
	ASSERT_EQ(0, MCP_MCPCTL(cli_out, "qos", "create", "memless", "--class", "best-effort",
				"--node", node_arg)) TH_LOG("%s", cli_out);
	EXPECT_EQ(0, MCP_MCPCTL(cli_out, "qos", "show", "memless")) TH_LOG("%s", cli_out);
	snprintf(want, sizeof(want), "cpuset.mems: %d\n", self->m.near);
	EXPECT_NE(NULL, strstr(cli_out, want)) TH_LOG("%s", cli_out);
	EXPECT_EQ(0, MCP_MCPCTL(cli_out, "qos", "delete", "memless")) TH_LOG("%s", cli_out);
}

MCP_TEST_MAIN
