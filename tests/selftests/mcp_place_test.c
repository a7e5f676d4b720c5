// SPDX-License-Identifier: GPL-2.0-only
/*
 * MCP_IOC_PLACE / MCP_IOC_UNPLACE: memory-local placement, the busy-node
 * fallback by SLIT distance, strict placement, stickiness, force, unplace,
 * narrowing of a restricted affinity, the rebalancer, permissions and bad
 * input, thousands of short-lived placed tasks, and the knobs in
 * /sys/class/misc/mcp/placement/.
 *
 * Works on any NUMA topology with at least two nodes with CPUs; on nodes
 * of one CPU (the 4node VM) min_idle_cpus is set to 1 for the tests and
 * restored afterwards.
 */
#include "mcp_test.h"

#include <numa.h>
#include <numaif.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>

#define MAX_NODES	64
#define KNOBS_DIR	MCP_SYSFS_DIR "/placement/"
#define MEM_SIZE	(8UL << 20)

static const char * const knob_names[] = {
	"min_idle_cpus", "idle_threshold_pct", "idle_window_ms",
	"stickiness_ms", "rebalance_ms", "hysteresis_pct",
};
#define NR_KNOBS (sizeof(knob_names) / sizeof(knob_names[0]))

struct topo {
	int nr_nodes;			/* online nodes with CPUs */
	int ids[MAX_NODES];
	cpu_set_t cpus[MAX_NODES];	/* by node id */
	int ncpus[MAX_NODES];
	int dist[MAX_NODES][MAX_NODES];	/* by node id */
	int min_cpus;			/* fewest CPUs of a node */
};

static long long knob_get(const char *name)
{
	char path[256];

	snprintf(path, sizeof(path), KNOBS_DIR "%s", name);
	return mcp_read_ll(path);
}

/* Writes a string to a knob; 0 or -errno. */
static int knob_write(const char *name, const char *val)
{
	char path[256];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), KNOBS_DIR "%s", name);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = write(fd, val, strlen(val));
	n = n < 0 ? -errno : 0;
	close(fd);
	return n;
}

static int knob_set(const char *name, long long v)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%lld", v);
	return knob_write(name, buf);
}

/* mcp_parse_list() into a cpu_set_t. */
static int parse_cpulist(const char *s, cpu_set_t *set)
{
	unsigned char in[CPU_SETSIZE] = { 0 };
	int n = mcp_parse_list(s, in, CPU_SETSIZE);

	CPU_ZERO(set);
	for (int i = 0; i < CPU_SETSIZE; i++)
		if (in[i])
			CPU_SET(i, set);
	return n;
}

static int read_topo(struct topo *t)
{
	char buf[4096], path[128];
	cpu_set_t online;

	memset(t, 0, sizeof(*t));
	t->min_cpus = 1 << 30;
	if (mcp_read_file("/sys/devices/system/node/online", buf, sizeof(buf)) <= 0)
		return -1;
	parse_cpulist(buf, &online);	/* a node list parses the same way */
	for (int nid = 0; nid < MAX_NODES; nid++) {
		char *p;

		if (!CPU_ISSET(nid, &online))
			continue;
		snprintf(path, sizeof(path), "/sys/devices/system/node/node%d/cpulist", nid);
		if (mcp_read_file(path, buf, sizeof(buf)) < 0)
			return -1;
		t->ncpus[nid] = parse_cpulist(buf, &t->cpus[nid]);
		snprintf(path, sizeof(path), "/sys/devices/system/node/node%d/distance", nid);
		if (mcp_read_file(path, buf, sizeof(buf)) <= 0)
			return -1;
		p = buf;
		for (int j = 0; j < MAX_NODES && *p && *p != '\n'; j++) {
			char *end;
			long d;

			/* The row lists the online nodes in order. */
			while (j < MAX_NODES && !CPU_ISSET(j, &online))
				j++;
			d = strtol(p, &end, 10);
			if (end == p || j >= MAX_NODES)
				break;
			t->dist[nid][j] = d;
			p = end;
		}
		if (t->ncpus[nid] > 0) {
			t->ids[t->nr_nodes++] = nid;
			if (t->ncpus[nid] < t->min_cpus)
				t->min_cpus = t->ncpus[nid];
		}
	}
	return 0;
}

/* The CPUs of @m (uapi words) as a cpu_set_t. */
static void words_to_set(const __u64 *m, int words, cpu_set_t *set)
{
	CPU_ZERO(set);
	for (int c = 0; c < words * 64 && c < CPU_SETSIZE; c++)
		if (m[c / 64] >> (c % 64) & 1)
			CPU_SET(c, set);
}

static int get_affinity(pid_t pid, cpu_set_t *set)
{
	CPU_ZERO(set);
	return sched_getaffinity(pid, sizeof(*set), set) ? -errno : 0;
}

static int cpuset_subset(const cpu_set_t *a, const cpu_set_t *b)
{
	cpu_set_t and;

	CPU_AND(&and, a, b);
	return CPU_EQUAL(&and, a);
}

/* A request with the reply buffers of @r attached. */
struct req {
	struct mcp_place p;
	__u64 mask[16];
	__u32 idle[MAX_NODES];
	__u64 hist[MAX_NODES];
};

static void req_init(struct req *r, pid_t pid, __u32 flags)
{
	memset(r, 0, sizeof(*r));
	r->p.size = sizeof(r->p);
	r->p.flags = flags;
	r->p.pid = pid;
	r->p.mask_ptr = (uintptr_t)r->mask;
	r->p.mask_words = 16;
	r->p.idle_ptr = (uintptr_t)r->idle;
	r->p.idle_nodes = MAX_NODES;
}

/* A histogram saying all of the task's memory is on @node. */
static void req_hist(struct req *r, int node)
{
	memset(r->hist, 0, sizeof(r->hist));
	r->hist[node] = 1000;
	r->p.histogram_ptr = (uintptr_t)r->hist;
	r->p.histogram_nodes = MAX_NODES;
}

/* nr_cpu_ids: one more than the last possible CPU. */
static int nr_cpu_ids_sys(void)
{
	char buf[256];
	char *p;

	if (mcp_read_file("/sys/devices/system/cpu/possible", buf, sizeof(buf)) <= 0)
		return -1;
	p = buf + strlen(buf);
	while (p > buf && (p[-1] < '0' || p[-1] > '9'))
		p--;
	while (p > buf && p[-1] >= '0' && p[-1] <= '9')
		p--;
	return atoi(p) + 1;
}

static void alloc_on(int node, size_t size)
{
	unsigned long nodemask = 1UL << node;
	char *mem;

	set_mempolicy(MPOL_BIND, &nodemask, sizeof(nodemask) * 8);
	mem = mmap(NULL, size, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (mem != MAP_FAILED)
		memset(mem, 1, size);
	set_mempolicy(MPOL_DEFAULT, NULL, 0);
}

/*
 * A child that allocates @size bytes on @mem_node (-1: nothing) and as
 * much on @mem_node2 (-1: nothing), reports ready through a pipe and
 * sleeps until killed.
 */
static pid_t spawn_sleeper_sized(int mem_node, int mem_node2, size_t size)
{
	int pfd[2];
	pid_t pid;
	char c;

	if (pipe(pfd))
		return -1;
	pid = fork();
	if (pid == 0) {
		/* Never outlive the test, even one that failed an ASSERT. */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		close(pfd[0]);
		if (mem_node >= 0)
			alloc_on(mem_node, size);
		if (mem_node2 >= 0)
			alloc_on(mem_node2, size);
		c = 1;
		if (write(pfd[1], &c, 1) != 1)
			_exit(1);
		for (;;)
			pause();
	}
	close(pfd[1]);
	if (pid > 0 && read(pfd[0], &c, 1) != 1) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		pid = -1;
	}
	close(pfd[0]);
	return pid;
}

static pid_t spawn_sleeper(int mem_node)
{
	return spawn_sleeper_sized(mem_node, -1, MEM_SIZE);
}

static void reap(pid_t pid)
{
	if (pid > 0) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
	}
}

static void msleep(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/* Threads spinning on every CPU of a node, until stopped. */
struct spinners {
	pthread_t th[CPU_SETSIZE];
	int nr;
	volatile int stop;
};

struct spin_arg {
	struct spinners *s;
	int cpu;
};

static void *spin_fn(void *p)
{
	struct spin_arg *a = p;
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(a->cpu, &set);
	sched_setaffinity(0, sizeof(set), &set);
	while (!a->s->stop)
		;
	free(a);
	return NULL;
}

static int spin_node(struct spinners *s, const cpu_set_t *cpus)
{
	memset(s, 0, sizeof(*s));
	for (int c = 0; c < CPU_SETSIZE; c++) {
		struct spin_arg *a;

		if (!CPU_ISSET(c, cpus))
			continue;
		a = malloc(sizeof(*a));
		a->s = s;
		a->cpu = c;
		if (pthread_create(&s->th[s->nr], NULL, spin_fn, a))
			return -1;
		s->nr++;
	}
	return 0;
}

static void spin_stop(struct spinners *s)
{
	s->stop = 1;
	for (int i = 0; i < s->nr; i++)
		pthread_join(s->th[i], NULL);
	s->nr = 0;
}

/*
 * Waits (up to ~10 s) until @node has enough idle CPUs for a dry run on
 * @pid with all memory on @node to choose it: under TCG on a loaded host
 * a quiet CPU can look busy for a window.  Returns 1 when it does.
 */
static int wait_node_qualifies(int fd, pid_t pid, int node)
{
	struct req r;

	for (int i = 0; i < 50; i++) {
		req_init(&r, pid, MCP_PLACE_DRY_RUN | MCP_PLACE_FORCE);
		req_hist(&r, node);
		if (mcp_ioctl(fd, MCP_IOC_PLACE, &r.p) == 0 &&
		    r.p.node_chosen == node)
			return 1;
		msleep(200);
	}
	fprintf(stderr, "# node %d never qualified; idle CPUs per node:", node);
	for (unsigned int i = 0; i < r.p.nr_node_ids && i < MAX_NODES; i++)
		fprintf(stderr, " %u", r.idle[i]);
	fprintf(stderr, "\n");
	return 0;
}

FIXTURE(place) {
	int fd;
	struct topo t;
	long long saved[NR_KNOBS];
	long long placed0;
};

FIXTURE_SETUP(place)
{
	ASSERT_EQ(0, mcp_ensure_loaded());
	self->fd = mcp_open();
	ASSERT_LE(0, self->fd) TH_LOG("open %s: %s", MCP_DEV_PATH, strerror(errno));
	ASSERT_EQ(0, read_topo(&self->t));
	if (self->t.nr_nodes < 2 || numa_available() < 0)
		SKIP(return, "needs two NUMA nodes with CPUs");
	for (size_t i = 0; i < NR_KNOBS; i++) {
		self->saved[i] = knob_get(knob_names[i]);
		ASSERT_LE(0, self->saved[i]) TH_LOG("knob %s unreadable", knob_names[i]);
	}
	/* Short windows keep the tests quick; one-CPU nodes need 1. */
	ASSERT_EQ(0, knob_set("idle_window_ms", 100));
	/*
	 * Under TCG on a loaded host a quiet CPU can look briefly busy; a
	 * spinning one stays at 0% either way.
	 */
	ASSERT_EQ(0, knob_set("idle_threshold_pct", 50));
	ASSERT_EQ(0, knob_set("stickiness_ms", 0));
	ASSERT_EQ(0, knob_set("min_idle_cpus", self->t.min_cpus < 2 ? 1 : 2));
	ASSERT_EQ(0, knob_set("rebalance_ms", 100));
	/* Earlier tests' tasks are gone: wait for their state to go too. */
	for (int i = 0; i < 60; i++) {
		self->placed0 = mcp_counter("placed_tasks");
		if (self->placed0 == 0 && i >= 3)
			break;
		msleep(100);
	}
	ASSERT_EQ(0, self->placed0);
}

FIXTURE_TEARDOWN(place)
{
	for (size_t i = 0; i < NR_KNOBS; i++)
		if (self->saved[i] >= 0)
			knob_set(knob_names[i], self->saved[i]);
	if (self->fd >= 0)
		close(self->fd);
}

TEST_F(place, feature_bit)
{
	struct mcp_version v = { .size = sizeof(v) };

	ASSERT_EQ(0, mcp_ioctl(self->fd, MCP_IOC_GET_VERSION, &v));
	EXPECT_TRUE(v.features & MCP_FEAT_PLACE);
}

/* Memory on node 1 (histogram from move_pages) -> node 1, its CPUs. */
TEST_F(place, memory_local_self)
{
	long pg = sysconf(_SC_PAGESIZE);
	size_t n = MEM_SIZE / pg;
	char *mem = numa_alloc_onnode(MEM_SIZE, self->t.ids[1]);
	void **pages = calloc(n, sizeof(*pages));
	int *status = calloc(n, sizeof(*status));
	cpu_set_t orig, now, want;
	int node = self->t.ids[1];
	struct req r;

	ASSERT_NE(NULL, mem);
	ASSERT_NE(NULL, pages);
	ASSERT_NE(NULL, status);
	memset(mem, 1, MEM_SIZE);
	ASSERT_EQ(0, get_affinity(0, &orig));

	__u64 hist[MAX_NODES] = { 0 };
	struct mcp_unplace u = { .size = sizeof(u) };

	for (size_t i = 0; i < n; i++)
		pages[i] = mem + i * pg;
	ASSERT_EQ(0, move_pages(0, n, pages, NULL, status, 0));
	for (size_t i = 0; i < n; i++)
		if (status[i] >= 0 && status[i] < MAX_NODES)
			hist[status[i]]++;
	EXPECT_LT(n / 2, hist[node]);

	/*
	 * A CPU of the node may look busy for a window between the dry run
	 * that saw it qualify and the placement: then the task went to
	 * another node; undo that and try again.
	 */
	for (int attempt = 0; attempt < 5; attempt++) {
		req_init(&r, 0, 0);
		memcpy(r.hist, hist, sizeof(r.hist));
		r.p.histogram_ptr = (uintptr_t)r.hist;
		r.p.histogram_nodes = MAX_NODES;
		EXPECT_TRUE(wait_node_qualifies(self->fd, 0, node));
		ASSERT_EQ(0, mcp_ioctl(self->fd, MCP_IOC_PLACE, &r.p));
		if (r.p.node_chosen == node)
			break;
		TH_LOG("attempt %d went to node %d: %u idle CPUs on node %d", attempt,
		       r.p.node_chosen, r.idle[node], node);
		ASSERT_EQ(0, mcp_ioctl(self->fd, MCP_IOC_UNPLACE, &u));
	}
	EXPECT_EQ(node, r.p.node_chosen);
	EXPECT_EQ(node, r.p.home_node);
	EXPECT_EQ(MCP_PLACE_REASON_MEMORY_LOCAL, r.p.reason);
	EXPECT_EQ(MCP_PLACE_HOME_HISTOGRAM, r.p.home_source);
	EXPECT_EQ((nr_cpu_ids_sys() + 63) / 64, r.p.nr_cpu_words);
	EXPECT_LE(self->t.nr_nodes, r.p.nr_node_ids);
	EXPECT_LE(self->t.min_cpus < 2 ? 1 : 2, r.idle[node]);
	words_to_set(r.mask, 16, &now);
	CPU_AND(&want, &self->t.cpus[node], &orig);
	EXPECT_TRUE(CPU_EQUAL(&want, &now));
	ASSERT_EQ(0, get_affinity(0, &now));
	EXPECT_TRUE(CPU_EQUAL(&want, &now));
	EXPECT_EQ(self->placed0 + 1, mcp_counter("placed_tasks"));

	ASSERT_EQ(0, mcp_ioctl(self->fd, MCP_IOC_UNPLACE, &u));
	ASSERT_EQ(0, get_affinity(0, &now));
	EXPECT_TRUE(CPU_EQUAL(&orig, &now));
	EXPECT_EQ(self->placed0, mcp_counter("placed_tasks"));
	EXPECT_EQ(-ENOENT, mcp_ioctl(self->fd, MCP_IOC_UNPLACE, &u));
	numa_free(mem, MEM_SIZE);
	free(pages);
	free(status);
}

/* A child's memory bound to node 1 -> node 1; DRY_RUN changes nothing. */
TEST_F(place, memory_local_child_and_dry_run)
{
	int node = self->t.ids[1];
	pid_t child = spawn_sleeper(node);
	cpu_set_t before, now;
	struct req r;

	ASSERT_LT(0, child);
	ASSERT_EQ(0, get_affinity(child, &before));
	EXPECT_TRUE(wait_node_qualifies(self->fd, child, node));

	req_init(&r, child, MCP_PLACE_DRY_RUN);
	req_hist(&r, node);
	ASSERT_EQ(0, mcp_ioctl(self->fd, MCP_IOC_PLACE, &r.p));
	EXPECT_EQ(node, r.p.node_chosen);
	EXPECT_EQ(MCP_PLACE_REASON_MEMORY_LOCAL, r.p.reason);
	words_to_set(r.mask, 16, &now);
	EXPECT_TRUE(CPU_EQUAL(&self->t.cpus[node], &now));
	ASSERT_EQ(0, get_affinity(child, &now));
	EXPECT_TRUE(CPU_EQUAL(&before, &now));
	EXPECT_EQ(self->placed0, mcp_counter("placed_tasks"));

	EXPECT_TRUE(wait_node_qualifies(self->fd, child, node));
	req_init(&r, child, 0);
	req_hist(&r, node);
	ASSERT_EQ(0, mcp_ioctl(self->fd, MCP_IOC_PLACE, &r.p));
	EXPECT_EQ(node, r.p.node_chosen);
	ASSERT_EQ(0, get_affinity(child, &now));
	EXPECT_TRUE(CPU_EQUAL(&self->t.cpus[node], &now));

	/* No histogram: the kernel's own sources. */
	req_init(&r, child, MCP_PLACE_DRY_RUN);
	ASSERT_EQ(0, mcp_ioctl(self->fd, MCP_IOC_PLACE, &r.p));
	EXPECT_TRUE(r.p.home_source == MCP_PLACE_HOME_NUMA_FAULTS ||
		    r.p.home_source == MCP_PLACE_HOME_LAST_CPU);
	if (r.p.home_source == MCP_PLACE_HOME_LAST_CPU)
		EXPECT_EQ(r.p.prev_node, r.p.home_node);
	reap(child);
}

/* The home node busy -> the nearest node by distance from home. */
TEST_F_TIMEOUT(place, busy_home_falls_back_by_distance, 60)
{
	int home = self->t.ids[1], want = -1;
	pid_t child = spawn_sleeper(-1);
	struct spinners *s = calloc(1, sizeof(*s));
	struct req r;
	int ok = 0;

	ASSERT_LT(0, child);
	ASSERT_NE(NULL, s);
	for (int i = 0; i < self->t.nr_nodes; i++) {
		int n = self->t.ids[i];

		if (n == home)
			continue;
		if (want < 0 || self->t.dist[home][n] < self->t.dist[home][want])
			want = n;
	}
	TH_LOG("home %d busy, nearest by distance from home: node %d", home, want);
	ASSERT_EQ(0, spin_node(s, &self->t.cpus[home]));

	/* Wait for a window that saw the spinners. */
	for (int i = 0; i < 50 && !ok; i++) {
		msleep(200);
		req_init(&r, child, MCP_PLACE_DRY_RUN);
		req_hist(&r, home);
		ASSERT_EQ(0, mcp_ioctl(self->fd, MCP_IOC_PLACE, &r.p));
		ok = r.idle[home] == 0 && r.p.node_chosen == want;
	}
	req_init(&r, child, 0);
	req_hist(&r, home);
	ASSERT_EQ(0, mcp_ioctl(self->fd, MCP_IOC_PLACE, &r.p));
	spin_stop(s);
	EXPECT_EQ(0, r.idle[home]);
	EXPECT_EQ(home, r.p.home_node);
	EXPECT_EQ(want, r.p.node_chosen);
	EXPECT_EQ(MCP_PLACE_REASON_NEAREST, r.p.reason);
	if (r.p.node_chosen == want) {
		cpu_set_t now;

		ASSERT_EQ(0, get_affinity(child, &now));
		EXPECT_TRUE(CPU_EQUAL(&self->t.cpus[want], &now));
	}
	free(s);
	reap(child);
}

/* Nothing qualifies: "unchanged", or -EAGAIN under STRICT. */
TEST_F(place, strict_eagain)
{
	pid_t child = spawn_sleeper(-1);
	cpu_set_t before, now;
	struct req r;

	ASSERT_LT(0, child);
	ASSERT_EQ(0, get_affinity(child, &before));
	ASSERT_EQ(0, knob_set("min_idle_cpus", 65536));

	req_init(&r, child, MCP_PLACE_STRICT);
	req_hist(&r, self->t.ids[1]);
	EXPECT_EQ(-EAGAIN, mcp_ioctl(self->fd, MCP_IOC_PLACE, &r.p));

	req_init(&r, child, 0);
	req_hist(&r, self->t.ids[1]);
	ASSERT_EQ(0, mcp_ioctl(self->fd, MCP_IOC_PLACE, &r.p));
	EXPECT_EQ(MCP_PLACE_REASON_UNCHANGED, r.p.reason);
	EXPECT_EQ(-1, r.p.node_chosen);
	ASSERT_EQ(0, get_affinity(child, &now));
	EXPECT_TRUE(CPU_EQUAL(&before, &now));
	EXPECT_EQ(self->placed0, mcp_counter("placed_tasks"));
	reap(child);
}

/* Stickiness holds, FORCE and MCP_PLACE_NODE override, bad nodes. */
TEST_F(place, sticky_force_node)
{
	int n0 = self->t.ids[0], n1 = self->t.ids[1];
	pid_t child = spawn_sleeper(-1);
	__u32 nr_node_ids;
	cpu_set_t now;
	struct req r;

	ASSERT_LT(0, child);
	ASSERT_EQ(0, knob_set("stickiness_ms", 60000));

	EXPECT_TRUE(wait_node_qualifies(self->fd, child, n0));
	req_init(&r, child, 0);
	req_hist(&r, n0);
	ASSERT_EQ(0, mcp_ioctl(self->fd, MCP_IOC_PLACE, &r.p));
	EXPECT_EQ(n0, r.p.node_chosen);

	req_init(&r, child, 0);
	req_hist(&r, n1);
	ASSERT_EQ(0, mcp_ioctl(self->fd, MCP_IOC_PLACE, &r.p));
	EXPECT_EQ(MCP_PLACE_REASON_STICKY, r.p.reason);
	EXPECT_EQ(n0, r.p.node_chosen);
	ASSERT_EQ(0, get_affinity(child, &now));
	EXPECT_TRUE(CPU_EQUAL(&self->t.cpus[n0], &now));

	EXPECT_TRUE(wait_node_qualifies(self->fd, child, n1));
	req_init(&r, child, MCP_PLACE_FORCE);
	req_hist(&r, n1);
	ASSERT_EQ(0, mcp_ioctl(self->fd, MCP_IOC_PLACE, &r.p));
	EXPECT_EQ(MCP_PLACE_REASON_MEMORY_LOCAL, r.p.reason);
	EXPECT_EQ(n1, r.p.node_chosen);
	ASSERT_EQ(0, get_affinity(child, &now));
	EXPECT_TRUE(CPU_EQUAL(&self->t.cpus[n1], &now));

	req_init(&r, child, MCP_PLACE_NODE);
	r.p.node = n0;
	ASSERT_EQ(0, mcp_ioctl(self->fd, MCP_IOC_PLACE, &r.p));
	EXPECT_EQ(MCP_PLACE_REASON_FORCED, r.p.reason);
	EXPECT_EQ(n0, r.p.node_chosen);
	ASSERT_EQ(0, get_affinity(child, &now));
	EXPECT_TRUE(CPU_EQUAL(&self->t.cpus[n0], &now));

	/* Stickiness expires. */
	ASSERT_EQ(0, knob_set("stickiness_ms", 200));
	msleep(300);
	EXPECT_TRUE(wait_node_qualifies(self->fd, child, n1));
	req_init(&r, child, 0);
	req_hist(&r, n1);
	ASSERT_EQ(0, mcp_ioctl(self->fd, MCP_IOC_PLACE, &r.p));
	EXPECT_EQ(n1, r.p.node_chosen);
	nr_node_ids = r.p.nr_node_ids;

	req_init(&r, child, MCP_PLACE_NODE);
	r.p.node = nr_node_ids;
	EXPECT_EQ(-EINVAL, mcp_ioctl(self->fd, MCP_IOC_PLACE, &r.p));
	r.p.node = 0x7fffffff;
	EXPECT_EQ(-EINVAL, mcp_ioctl(self->fd, MCP_IOC_PLACE, &r.p));
	req_init(&r, child, 0);
	r.p.node = n1;
	EXPECT_EQ(-EINVAL, mcp_ioctl(self->fd, MCP_IOC_PLACE, &r.p));
	reap(child);
}

/* UNPLACE gives back exactly the affinity before the first placement. */
TEST_F(place, unplace_restores_exact_mask)
{
	int n1 = self->t.ids[1];
	pid_t child = spawn_sleeper(-1);
	struct mcp_unplace u = { .size = sizeof(u) };
	cpu_set_t orig, now;
	struct req r;

	ASSERT_LT(0, child);
	/* An unusual original: every CPU but the first. */
	ASSERT_EQ(0, get_affinity(child, &orig));
	CPU_CLR(0, &orig);
	ASSERT_EQ(0, sched_setaffinity(child, sizeof(orig), &orig));

	for (int i = 0; i < 2; i++) {
		req_init(&r, child, MCP_PLACE_NODE | MCP_PLACE_FORCE);
		r.p.node = self->t.ids[i];
		if (self->t.ncpus[r.p.node] == 1 && CPU_ISSET(0, &self->t.cpus[r.p.node]))
			continue;
		ASSERT_EQ(0, mcp_ioctl(self->fd, MCP_IOC_PLACE, &r.p));
	}
	req_init(&r, child, MCP_PLACE_FORCE);
	req_hist(&r, n1);
	ASSERT_EQ(0, mcp_ioctl(self->fd, MCP_IOC_PLACE, &r.p));
	ASSERT_EQ(0, get_affinity(child, &now));
	EXPECT_FALSE(CPU_EQUAL(&orig, &now));

	u.pid = child;
	ASSERT_EQ(0, mcp_ioctl(self->fd, MCP_IOC_UNPLACE, &u));
	ASSERT_EQ(0, get_affinity(child, &now));
	EXPECT_TRUE(CPU_EQUAL(&orig, &now));
	EXPECT_EQ(-ENOENT, mcp_ioctl(self->fd, MCP_IOC_UNPLACE, &u));
	reap(child);
}

/* A pre-restricted affinity is only ever narrowed. */
TEST_F(place, narrows_never_widens)
{
	struct mcp_unplace u = { .size = sizeof(u) };
	pid_t child = spawn_sleeper(-1);
	cpu_set_t allowed, now;
	int n0 = self->t.ids[0], n1 = self->t.ids[1], c0 = -1;
	struct req r;

	ASSERT_LT(0, child);
	/* Only node 1's CPUs and one CPU of node 0. */
	allowed = self->t.cpus[n1];
	for (int c = 0; c < CPU_SETSIZE && c0 < 0; c++)
		if (CPU_ISSET(c, &self->t.cpus[n0]))
			c0 = c;
	CPU_SET(c0, &allowed);
	ASSERT_EQ(0, sched_setaffinity(child, sizeof(allowed), &allowed));

	for (int round = 0; round < 6; round++) {
		req_init(&r, child, MCP_PLACE_FORCE);
		req_hist(&r, self->t.ids[round % self->t.nr_nodes]);
		ASSERT_EQ(0, mcp_ioctl(self->fd, MCP_IOC_PLACE, &r.p));
		ASSERT_EQ(0, get_affinity(child, &now));
		EXPECT_TRUE(cpuset_subset(&now, &allowed));
		words_to_set(r.mask, 16, &now);
		EXPECT_TRUE(cpuset_subset(&now, &allowed));
	}

	/* Now only node 1: a home on node 0 lands on node 1 (nearest usable). */
	u.pid = child;
	ASSERT_EQ(0, mcp_ioctl(self->fd, MCP_IOC_UNPLACE, &u));
	allowed = self->t.cpus[n1];
	ASSERT_EQ(0, sched_setaffinity(child, sizeof(allowed), &allowed));
	ASSERT_EQ(0, knob_set("min_idle_cpus", 0));
	req_init(&r, child, 0);
	req_hist(&r, n0);
	ASSERT_EQ(0, mcp_ioctl(self->fd, MCP_IOC_PLACE, &r.p));
	EXPECT_EQ(n1, r.p.node_chosen);
	EXPECT_EQ(MCP_PLACE_REASON_NEAREST, r.p.reason);
	ASSERT_EQ(0, get_affinity(child, &now));
	EXPECT_TRUE(cpuset_subset(&now, &allowed));
	/* A named node with no allowed CPU is refused. */
	req_init(&r, child, MCP_PLACE_NODE);
	r.p.node = n0;
	EXPECT_EQ(-EINVAL, mcp_ioctl(self->fd, MCP_IOC_PLACE, &r.p));
	reap(child);
}

/* The cgroup v2 cpuset the cpuset test confines its task to. */
#define CG_ROOT		"/sys/fs/cgroup"
#define CG_DIR		CG_ROOT "/mcp_place_test"

/*
 * Makes CG_DIR a cpuset of exactly @cpus.  0, or -errno; -EOPNOTSUPP when
 * cgroup v2 with the cpuset controller is not there.
 */
static int cpuset_make(const cpu_set_t *cpus)
{
	char buf[4096], list[1024];
	size_t len = 0;
	int ret;

	if (mcp_read_file(CG_ROOT "/cgroup.controllers", buf, sizeof(buf)) <= 0 ||
	    !strstr(buf, "cpuset"))
		return -EOPNOTSUPP;
	ret = mcp_write_file(CG_ROOT "/cgroup.subtree_control", "+cpuset");
	if (ret)
		return ret;
	if (mkdir(CG_DIR, 0755) && errno != EEXIST)
		return -errno;
	list[0] = '\0';
	for (int c = 0; c < CPU_SETSIZE && len < sizeof(list) - 16; c++)
		if (CPU_ISSET(c, cpus))
			len += snprintf(list + len, sizeof(list) - len, "%s%d",
					len ? "," : "", c);
	return mcp_write_file(CG_DIR "/cpuset.cpus", list);
}

/* What the confined task saw, in memory shared with the test. */
struct cpuset_seen {
	int place0, setaff, place1, place_auto, unplace;
	cpu_set_t after_place1, after_auto, after_unplace;
};

/*
 * The task (an unprivileged user) is placed on node 0 while its cpuset
 * allows every CPU; then it is moved into a cpuset of node 0's CPUs, so
 * its affinity stays what MCP set.  The kernel now refuses node 1's CPUs
 * to sched_setaffinity(); PLACE (named node and by memory) and UNPLACE
 * must not give them either.
 */
TEST_F(place, cpuset_confines_unprivileged_task)
{
	int n0 = self->t.ids[0], n1 = self->t.ids[1], ready[2], go[2], status;
	struct cpuset_seen *seen;
	char c = 1, pidbuf[32];
	pid_t child;
	int ret;

	ret = cpuset_make(&self->t.cpus[n0]);
	if (ret == -EOPNOTSUPP)
		SKIP(return, "needs cgroup v2 with the cpuset controller");
	ASSERT_EQ(0, ret) TH_LOG("cpuset %s: %s", CG_DIR, strerror(-ret));
	seen = mmap(NULL, sizeof(*seen), PROT_READ | PROT_WRITE,
		    MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, seen);
	ASSERT_EQ(0, pipe(ready));
	ASSERT_EQ(0, pipe(go));

	child = fork();
	ASSERT_LE(0, child);
	if (child == 0) {
		struct mcp_unplace u = { .size = sizeof(u) };
		struct req r;

		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (setgid(65534) || setuid(65534))
			_exit(10);
		req_init(&r, 0, MCP_PLACE_NODE | MCP_PLACE_FORCE);
		r.p.node = n0;
		seen->place0 = mcp_ioctl(self->fd, MCP_IOC_PLACE, &r.p);
		if (write(ready[1], &c, 1) != 1 || read(go[0], &c, 1) != 1)
			_exit(11);

		seen->setaff = sched_setaffinity(0, sizeof(cpu_set_t),
						 &self->t.cpus[n1]) ? -errno : 0;
		req_init(&r, 0, MCP_PLACE_NODE | MCP_PLACE_FORCE);
		r.p.node = n1;
		seen->place1 = mcp_ioctl(self->fd, MCP_IOC_PLACE, &r.p);
		get_affinity(0, &seen->after_place1);
		req_init(&r, 0, MCP_PLACE_FORCE);
		req_hist(&r, n1);
		seen->place_auto = mcp_ioctl(self->fd, MCP_IOC_PLACE, &r.p);
		get_affinity(0, &seen->after_auto);
		seen->unplace = mcp_ioctl(self->fd, MCP_IOC_UNPLACE, &u);
		get_affinity(0, &seen->after_unplace);
		_exit(0);
	}
	close(ready[1]);
	close(go[0]);
	ASSERT_EQ(1, read(ready[0], &c, 1));
	snprintf(pidbuf, sizeof(pidbuf), "%d", child);
	ret = mcp_write_file(CG_DIR "/cgroup.procs", pidbuf);
	EXPECT_EQ(0, ret) TH_LOG("move to %s: %s", CG_DIR, strerror(-ret));
	ASSERT_EQ(1, write(go[1], &c, 1));
	ASSERT_EQ(child, waitpid(child, &status, 0));
	close(ready[0]);
	close(go[1]);
	rmdir(CG_DIR);
	ASSERT_TRUE(WIFEXITED(status));
	ASSERT_EQ(0, WEXITSTATUS(status));

	EXPECT_EQ(0, seen->place0);
	/* The kernel's own rule: the cpuset does confine the task. */
	EXPECT_EQ(-EINVAL, seen->setaff);
	EXPECT_EQ(-EINVAL, seen->place1);
	EXPECT_TRUE(cpuset_subset(&seen->after_place1, &self->t.cpus[n0]));
	EXPECT_EQ(0, seen->place_auto);
	EXPECT_TRUE(cpuset_subset(&seen->after_auto, &self->t.cpus[n0]));
	EXPECT_EQ(0, seen->unplace);
	EXPECT_TRUE(cpuset_subset(&seen->after_unplace, &self->t.cpus[n0]))
		TH_LOG("UNPLACE gave back CPUs outside the cpuset");
	munmap(seen, sizeof(*seen));
}

/* Affinity of @pid equals node @n's CPUs, polled for up to @ms. */
static int wait_on_node(struct topo *t, pid_t pid, int n, int ms)
{
	cpu_set_t now;

	for (int waited = 0; ; waited += 50) {
		if (get_affinity(pid, &now) == 0 && CPU_EQUAL(&now, &t->cpus[n]))
			return 1;
		if (waited >= ms)
			return 0;
		msleep(50);
	}
}

/* The rebalancer follows migrated memory, after stickiness, and stays. */
TEST_F_TIMEOUT(place, rebalancer_follows_memory, 90)
{
	int n0 = self->t.ids[0], n1 = self->t.ids[1];
	pid_t child = spawn_sleeper(n0);
	unsigned long from = 1UL << n0, to = 1UL << n1;
	struct timespec t0, t1;
	struct req r;
	long moved_ms;

	ASSERT_LT(0, child);
	ASSERT_EQ(0, knob_set("rebalance_ms", 100));
	ASSERT_EQ(0, knob_set("stickiness_ms", 2000));
	ASSERT_EQ(0, knob_set("hysteresis_pct", 25));
	ASSERT_EQ(0, knob_set("min_idle_cpus", 1));

	req_init(&r, child, MCP_PLACE_KEEP | MCP_PLACE_NODE);
	r.p.node = n0;
	ASSERT_EQ(0, mcp_ioctl(self->fd, MCP_IOC_PLACE, &r.p));
	ASSERT_EQ(n0, r.p.node_chosen);
	clock_gettime(CLOCK_MONOTONIC, &t0);

	ASSERT_LE(0, migrate_pages(child, sizeof(from) * 8, &from, &to));
	/*
	 * Not within stickiness_ms of the placement; checkable only while
	 * that holds (migrate_pages() can take seconds under emulation).
	 */
	msleep(800);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	moved_ms = (t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000;
	if (moved_ms < 1500) {
		EXPECT_TRUE(wait_on_node(&self->t, child, n0, 0));
	} else {
		TH_LOG("stickiness not checked: %ld ms had passed", moved_ms);
	}
	/* Then it follows its memory. */
	EXPECT_TRUE(wait_on_node(&self->t, child, n1, 20000));
	clock_gettime(CLOCK_MONOTONIC, &t1);
	moved_ms = (t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000;
	TH_LOG("moved %ld ms after placement (stickiness_ms 2000)", moved_ms);
	EXPECT_LE(1900, moved_ms);

	/* And stays: no move without its memory moving. */
	msleep(3000);
	EXPECT_TRUE(wait_on_node(&self->t, child, n1, 0));
	reap(child);
}

/* A kept task whose memory does not move is never moved. */
TEST_F_TIMEOUT(place, rebalancer_no_spurious_move, 60)
{
	int n0 = self->t.ids[0];
	pid_t child = spawn_sleeper(n0);
	struct req r;

	ASSERT_LT(0, child);
	ASSERT_EQ(0, knob_set("rebalance_ms", 100));
	ASSERT_EQ(0, knob_set("stickiness_ms", 100));
	req_init(&r, child, MCP_PLACE_KEEP | MCP_PLACE_NODE);
	r.p.node = n0;
	ASSERT_EQ(0, mcp_ioctl(self->fd, MCP_IOC_PLACE, &r.p));
	ASSERT_EQ(n0, r.p.node_chosen);
	msleep(2000);
	EXPECT_TRUE(wait_on_node(&self->t, child, n0, 0));
	reap(child);
}

/*
 * Many kept tasks, more than one rebalancer pass samples (its lookup
 * budget runs out and the next pass carries on): a task whose memory
 * moved is still moved, and every state goes with its task.
 */
TEST_F_TIMEOUT(place, rebalancer_many_kept_tasks, 120)
{
	enum { NR = 48 };
	int n0 = self->t.ids[0], n1 = self->t.ids[1];
	unsigned long from = 1UL << n0, to = 1UL << n1;
	pid_t others[NR], child;
	struct req r;

	ASSERT_EQ(0, knob_set("rebalance_ms", 100));
	ASSERT_EQ(0, knob_set("stickiness_ms", 200));
	ASSERT_EQ(0, knob_set("min_idle_cpus", 0));
	for (int i = 0; i < NR; i++) {
		others[i] = spawn_sleeper(-1);
		ASSERT_LT(0, others[i]);
		req_init(&r, others[i], MCP_PLACE_KEEP | MCP_PLACE_NODE);
		r.p.node = n0;
		ASSERT_EQ(0, mcp_ioctl(self->fd, MCP_IOC_PLACE, &r.p));
	}
	child = spawn_sleeper(n0);
	ASSERT_LT(0, child);
	req_init(&r, child, MCP_PLACE_KEEP | MCP_PLACE_NODE);
	r.p.node = n0;
	ASSERT_EQ(0, mcp_ioctl(self->fd, MCP_IOC_PLACE, &r.p));
	EXPECT_EQ(NR + 1, mcp_counter("placed_tasks") - self->placed0);

	ASSERT_LE(0, migrate_pages(child, sizeof(from) * 8, &from, &to));
	EXPECT_TRUE(wait_on_node(&self->t, child, n1, 20000));

	for (int i = 0; i < NR; i++)
		reap(others[i]);
	reap(child);
	for (int i = 0; i < 100 && mcp_counter("placed_tasks") != self->placed0; i++)
		msleep(50);
	EXPECT_EQ(self->placed0, mcp_counter("placed_tasks"));
}

/* Resident pages per node of @pid's anonymous mappings (numa_maps). */
static void log_numa_pages(struct __test_metadata *_metadata, pid_t pid)
{
	long pages[MAX_NODES] = { 0 };
	char path[64], line[1024];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/numa_maps", pid);
	f = fopen(path, "r");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		if (!strstr(line, "anon="))
			continue;
		for (char *p = strstr(line, " N"); p; p = strstr(p + 1, " N")) {
			int nid;
			long n;

			if (sscanf(p, " N%d=%ld", &nid, &n) == 2 && nid >= 0 && nid < MAX_NODES)
				pages[nid] += n;
		}
	}
	fclose(f);
	for (int nid = 0; nid < MAX_NODES; nid++)
		if (pages[nid])
			TH_LOG("pid %d: %ld anonymous pages on node %d", pid, pages[nid], nid);
}

/*
 * Memory split evenly over two nodes: a kept task never trades places.
 * The sleeper starts on n0's CPUs, so the pages it touches besides the
 * split (stack, copies on write) are on n0 and not on whichever node the
 * test ran on (on memless, 5 of the 6 CPUs put them on node 1, tilting
 * the split past the hysteresis now and then); then it may run anywhere.
 * The split is 32 MiB a side, so that pages shared with the parent
 * (wherever it touched them) stay a small part of the sample.
 */
TEST_F_TIMEOUT(place, rebalancer_no_ping_pong_between_equal_nodes, 60)
{
	int n0 = self->t.ids[0], n1 = self->t.ids[1], moves = 0, on = n0;
	cpu_set_t all;
	pid_t child;
	struct req r;

	ASSERT_EQ(0, sched_getaffinity(0, sizeof(all), &all));
	ASSERT_EQ(0, sched_setaffinity(0, sizeof(self->t.cpus[n0]), &self->t.cpus[n0]));
	child = spawn_sleeper_sized(n0, n1, 4 * MEM_SIZE);
	ASSERT_EQ(0, sched_setaffinity(0, sizeof(all), &all));
	ASSERT_LT(0, child);
	ASSERT_EQ(0, sched_setaffinity(child, sizeof(all), &all));
	ASSERT_EQ(0, knob_set("rebalance_ms", 100));
	ASSERT_EQ(0, knob_set("stickiness_ms", 100));
	ASSERT_EQ(0, knob_set("min_idle_cpus", 0));
	req_init(&r, child, MCP_PLACE_KEEP | MCP_PLACE_NODE);
	r.p.node = n0;
	ASSERT_EQ(0, mcp_ioctl(self->fd, MCP_IOC_PLACE, &r.p));
	/* 3 s is 30 passes past stickiness. */
	for (int i = 0; i < 60; i++) {
		int now = wait_on_node(&self->t, child, n0, 0) ? n0 :
			  wait_on_node(&self->t, child, n1, 0) ? n1 : -1;

		if (now != on) {
			moves++;
			on = now;
		}
		msleep(50);
	}
	EXPECT_EQ(0, moves);
	EXPECT_EQ(n0, on);
	if (moves)
		log_numa_pages(_metadata, child);
	reap(child);
}

TEST_F(place, esrch_eperm_kthread)
{
	struct mcp_unplace u = { .size = sizeof(u) };
	struct req r;
	int status;
	pid_t child;

	req_init(&r, 0x3ffffff0, 0);
	EXPECT_EQ(-ESRCH, mcp_ioctl(self->fd, MCP_IOC_PLACE, &r.p));
	req_init(&r, -5, 0);
	EXPECT_EQ(-ESRCH, mcp_ioctl(self->fd, MCP_IOC_PLACE, &r.p));
	u.pid = 0x3ffffff0;
	EXPECT_EQ(-ESRCH, mcp_ioctl(self->fd, MCP_IOC_UNPLACE, &u));

	/* pid 2 is kthreadd. */
	req_init(&r, 2, MCP_PLACE_DRY_RUN);
	EXPECT_EQ(-EINVAL, mcp_ioctl(self->fd, MCP_IOC_PLACE, &r.p));
	u.pid = 2;
	EXPECT_EQ(-EINVAL, mcp_ioctl(self->fd, MCP_IOC_UNPLACE, &u));

	/* Another user may not place this (root's) task. */
	child = fork();
	ASSERT_LE(0, child);
	if (child == 0) {
		pid_t parent = getppid();
		struct req cr;
		int ret;

		if (setgid(65534) || setuid(65534))
			_exit(10);
		req_init(&cr, parent, MCP_PLACE_DRY_RUN);
		ret = mcp_ioctl(self->fd, MCP_IOC_PLACE, &cr.p);
		if (ret != -EPERM)
			_exit(11);
		u.pid = parent;
		ret = mcp_ioctl(self->fd, MCP_IOC_UNPLACE, &u);
		_exit(ret == -EPERM ? 0 : 12);
	}
	ASSERT_EQ(child, waitpid(child, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status));
}

TEST_F(place, bad_input)
{
	char big[sizeof(struct mcp_place) + 8] __attribute__((aligned(8))) = { 0 };
	void *hole = mcp_unmapped_addr();
	struct mcp_unplace u = { .size = sizeof(u) };
	cpu_set_t before, now;
	struct req r;

	ASSERT_EQ(0, get_affinity(0, &before));

	req_init(&r, 0, 1U << 31);
	EXPECT_EQ(-EINVAL, mcp_ioctl(self->fd, MCP_IOC_PLACE, &r.p));
	req_init(&r, 0, MCP_PLACE_DRY_RUN);
	r.p.reserved = 1;
	EXPECT_EQ(-EINVAL, mcp_ioctl(self->fd, MCP_IOC_PLACE, &r.p));
	/* ADAPTIVE needs KEEP; a run-queue threshold needs ADAPTIVE. */
	req_init(&r, 0, MCP_PLACE_DRY_RUN | MCP_PLACE_ADAPTIVE);
	EXPECT_EQ(-EINVAL, mcp_ioctl(self->fd, MCP_IOC_PLACE, &r.p));
	req_init(&r, 0, MCP_PLACE_DRY_RUN | MCP_PLACE_KEEP);
	r.p.runq_threshold_us = 500;
	EXPECT_EQ(-EINVAL, mcp_ioctl(self->fd, MCP_IOC_PLACE, &r.p));
	req_init(&r, 0, MCP_PLACE_DRY_RUN);
	r.p.size = MCP_PLACE_SIZE_VER0 - 8;
	EXPECT_EQ(-EINVAL, mcp_ioctl(self->fd, MCP_IOC_PLACE, &r.p));
	req_init(&r, 0, MCP_PLACE_DRY_RUN);
	req_hist(&r, 0);
	r.p.histogram_nodes = MCP_PLACE_HISTOGRAM_MAX + 1;
	EXPECT_EQ(-EINVAL, mcp_ioctl(self->fd, MCP_IOC_PLACE, &r.p));
	r.p.histogram_ptr = 0;
	r.p.histogram_nodes = 2;
	EXPECT_EQ(-EINVAL, mcp_ioctl(self->fd, MCP_IOC_PLACE, &r.p));
	req_init(&r, 0, MCP_PLACE_DRY_RUN);
	r.p.mask_ptr = 0;
	EXPECT_EQ(-EINVAL, mcp_ioctl(self->fd, MCP_IOC_PLACE, &r.p));
	req_init(&r, 0, MCP_PLACE_DRY_RUN);
	r.p.idle_ptr = 0;
	EXPECT_EQ(-EINVAL, mcp_ioctl(self->fd, MCP_IOC_PLACE, &r.p));

	/* Bad pointers: -EFAULT, nothing applied. */
	req_init(&r, 0, MCP_PLACE_FORCE);
	req_hist(&r, self->t.ids[1]);
	r.p.histogram_ptr = (uintptr_t)hole;
	EXPECT_EQ(-EFAULT, mcp_ioctl(self->fd, MCP_IOC_PLACE, &r.p));
	req_init(&r, 0, MCP_PLACE_FORCE);
	req_hist(&r, self->t.ids[1]);
	r.p.mask_ptr = (uintptr_t)hole;
	EXPECT_EQ(-EFAULT, mcp_ioctl(self->fd, MCP_IOC_PLACE, &r.p));
	req_init(&r, 0, MCP_PLACE_FORCE);
	req_hist(&r, self->t.ids[1]);
	r.p.idle_ptr = (uintptr_t)hole;
	EXPECT_EQ(-EFAULT, mcp_ioctl(self->fd, MCP_IOC_PLACE, &r.p));
	EXPECT_EQ(-EFAULT, mcp_ioctl(self->fd, MCP_IOC_PLACE, hole));
	ASSERT_EQ(0, get_affinity(0, &now));
	EXPECT_TRUE(CPU_EQUAL(&before, &now));
	EXPECT_EQ(self->placed0, mcp_counter("placed_tasks"));

	/* Too few mask words: -ENOSPC with the size, nothing applied. */
	req_init(&r, 0, MCP_PLACE_FORCE);
	req_hist(&r, self->t.ids[1]);
	r.p.mask_words = 0;
	r.p.nr_cpu_words = 0;
	EXPECT_EQ(-ENOSPC, mcp_ioctl(self->fd, MCP_IOC_PLACE, &r.p));
	EXPECT_EQ((nr_cpu_ids_sys() + 63) / 64, r.p.nr_cpu_words);
	EXPECT_LE(self->t.nr_nodes, r.p.nr_node_ids);
	ASSERT_EQ(0, get_affinity(0, &now));
	EXPECT_TRUE(CPU_EQUAL(&before, &now));
	EXPECT_EQ(self->placed0, mcp_counter("placed_tasks"));

	/* A larger struct with a non-zero tail is refused. */
	req_init(&r, 0, MCP_PLACE_DRY_RUN);
	r.p.size = sizeof(big);
	memcpy(big, &r.p, sizeof(r.p));
	big[sizeof(big) - 1] = 1;
	EXPECT_EQ(-E2BIG, mcp_ioctl(self->fd, MCP_IOC_PLACE, big));
	big[sizeof(big) - 1] = 0;
	EXPECT_EQ(0, mcp_ioctl(self->fd, MCP_IOC_PLACE, big));

	u.flags = 1;
	EXPECT_EQ(-EINVAL, mcp_ioctl(self->fd, MCP_IOC_UNPLACE, &u));
	u.flags = 0;
	u.reserved = 1;
	EXPECT_EQ(-EINVAL, mcp_ioctl(self->fd, MCP_IOC_UNPLACE, &u));
	u.reserved = 0;
	u.size = 8;
	EXPECT_EQ(-EINVAL, mcp_ioctl(self->fd, MCP_IOC_UNPLACE, &u));
	EXPECT_EQ(-EFAULT, mcp_ioctl(self->fd, MCP_IOC_UNPLACE, hole));
}

/* 2,000 placed threads exit; their state goes within a few passes. */
struct short_arg {
	int fd;
	int node;
	int err;
	int gate[2];
};

/* A PLACE whose reply page is blocked by userfaultfd (thread A). */
struct stuck_place {
	int fd;
	__u64 *mask;
	int ret;
};

static void *stuck_place_fn(void *arg)
{
	struct stuck_place *sp = arg;
	struct mcp_place p = {
		.size = sizeof(p),
		.flags = MCP_PLACE_DRY_RUN,
		.mask_ptr = (uintptr_t)sp->mask,
		.mask_words = 16,
	};

	sp->ret = mcp_ioctl(sp->fd, MCP_IOC_PLACE, &p);
	return NULL;
}

/* Another thread's PLACE and UNPLACE of itself (thread B). */
struct quick_place {
	int fd, node;
	int ret, unplace_ret;
	volatile int done;
};

static void *quick_place_fn(void *arg)
{
	struct quick_place *qp = arg;
	struct mcp_unplace u = { .size = sizeof(u) };
	struct req r;

	req_init(&r, 0, MCP_PLACE_NODE | MCP_PLACE_FORCE);
	r.p.node = qp->node;
	qp->ret = mcp_ioctl(qp->fd, MCP_IOC_PLACE, &r.p);
	qp->unplace_ret = qp->ret ? 0 : mcp_ioctl(qp->fd, MCP_IOC_UNPLACE, &u);
	__atomic_store_n(&qp->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

/*
 * A user page that stalls the copy of one PLACE's reply (userfaultfd
 * here; FUSE or NFS alike) must stall only that call: mcp_place_lock is
 * not held across copy_to_user(), so another thread places and unplaces
 * itself meanwhile, within a second.
 */
TEST_F_TIMEOUT(place, stalled_reply_blocks_no_other_place, 60)
{
	struct stuck_place sp = { .fd = self->fd };
	struct quick_place qp = { .fd = self->fd, .node = self->t.ids[1] };
	pthread_t a, b;
	int uffd, waited;

	sp.mask = (__u64 *)mcp_uffd_pages(1, 1, &uffd);
	ASSERT_NE(NULL, sp.mask) TH_LOG("userfaultfd: %s", strerror(errno));
	ASSERT_EQ(0, pthread_create(&a, NULL, stuck_place_fn, &sp));
	ASSERT_NE(0, mcp_uffd_wait_fault(uffd, 5000)) TH_LOG("the reply copy never faulted");

	ASSERT_EQ(0, pthread_create(&b, NULL, quick_place_fn, &qp));
	for (waited = 0; waited < 1000 && !__atomic_load_n(&qp.done, __ATOMIC_ACQUIRE);
	     waited += 10)
		msleep(10);
	EXPECT_TRUE(__atomic_load_n(&qp.done, __ATOMIC_ACQUIRE))
		TH_LOG("PLACE waited over 1 s behind another call's stalled copy_to_user");

	/* Let A go: its page vanishes and the copy fails. */
	ASSERT_EQ(0, munmap(sp.mask, sysconf(_SC_PAGESIZE)));
	close(uffd);
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	EXPECT_EQ(-EFAULT, sp.ret);
	EXPECT_EQ(0, qp.ret);
	EXPECT_EQ(0, qp.unplace_ret);
}

static void *short_fn(void *p)
{
	struct short_arg *a = p;
	struct req r;
	char c;

	req_init(&r, 0, MCP_PLACE_NODE | ((gettid() % 10) ? 0 : MCP_PLACE_KEEP));
	r.p.node = a->node;
	if (mcp_ioctl(a->fd, MCP_IOC_PLACE, &r.p))
		__atomic_add_fetch(&a->err, 1, __ATOMIC_RELAXED);
	/* Wait for the batch to be placed, then exit. */
	if (read(a->gate[0], &c, 1) < 0)
		__atomic_add_fetch(&a->err, 1, __ATOMIC_RELAXED);
	return NULL;
}

TEST_F_TIMEOUT(place, short_lived_tasks_leave_no_state, 300)
{
	enum { TOTAL = 2000, BATCH = 100 };
	struct short_arg a = { .fd = self->fd, .node = self->t.ids[1] };
	long long peak = 0, left = -1;
	pthread_t th[BATCH];
	int waited_ms = 0;

	/* Kept ones are pruned when they exit, not sampled. */
	ASSERT_EQ(0, knob_set("stickiness_ms", 60000));
	for (int done = 0; done < TOTAL; done += BATCH) {
		ASSERT_EQ(0, pipe(a.gate));
		for (int i = 0; i < BATCH; i++)
			ASSERT_EQ(0, pthread_create(&th[i], NULL, short_fn, &a));
		/* Let them all place themselves before the batch exits. */
		for (int i = 0; i < 200; i++) {
			long long n = mcp_counter("placed_tasks");

			if (n > peak)
				peak = n;
			if (n - self->placed0 >= BATCH)
				break;
			msleep(5);
		}
		close(a.gate[1]);
		for (int i = 0; i < BATCH; i++)
			pthread_join(th[i], NULL);
		close(a.gate[0]);
	}
	EXPECT_EQ(0, a.err);
	TH_LOG("peak placed_tasks %lld", peak);
	EXPECT_LE(self->placed0 + BATCH, peak);
	for (int i = 0; i < 200; i++) {
		left = mcp_counter("placed_tasks");
		if (left == self->placed0)
			break;
		msleep(50);
		waited_ms += 50;
	}
	TH_LOG("placed_tasks back to %lld within %d ms of the last exit (rebalance_ms 100)",
	       left, waited_ms);
	EXPECT_EQ(self->placed0, left);
}

/* mcp:mcp_place fires on a decision, dry runs included. */
TEST_F(place, tracepoint_fires)
{
	const char *dir = "/sys/kernel/tracing";
	char path[256], want[64], *buf = malloc(1 << 16);
	struct req r;
	int fd;

	ASSERT_NE(NULL, buf);
	snprintf(path, sizeof(path), "%s/events/mcp/mcp_place/enable", dir);
	if (access(path, F_OK))
		mount("tracefs", dir, "tracefs", 0, NULL);
	if (access(path, F_OK))
		SKIP(free(buf); return, "no tracefs at %s", dir);
	ASSERT_EQ(0, mcp_read_file(path, buf, 64) < 0);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	ASSERT_LE(0, fd);
	ASSERT_EQ(1, write(fd, "1", 1));
	snprintf(path, sizeof(path), "%s/trace", dir);
	close(open(path, O_WRONLY | O_TRUNC | O_CLOEXEC));

	req_init(&r, 0, MCP_PLACE_DRY_RUN);
	req_hist(&r, self->t.ids[1]);
	ASSERT_EQ(0, mcp_ioctl(self->fd, MCP_IOC_PLACE, &r.p));
	ASSERT_EQ(1, write(fd, "0", 1));
	close(fd);

	ASSERT_LT(0, mcp_read_file(path, buf, 1 << 16));
	snprintf(want, sizeof(want), "mcp_place: pid=%d ", gettid());
	EXPECT_NE(NULL, strstr(buf, want)) TH_LOG("no '%s' in the trace", want);
	snprintf(want, sizeof(want), "home=%d home_source=%u", self->t.ids[1],
		 MCP_PLACE_HOME_HISTOGRAM);
	EXPECT_NE(NULL, strstr(buf, want)) TH_LOG("no '%s' in the trace", want);
	free(buf);
}

TEST_F(place, knobs_validated)
{
	static const struct {
		const char *name;
		const char *bad[4];
		const char *good[2];
	} k[] = {
		{ "min_idle_cpus", { "-1", "abc", "65537", "\n" }, { "0", "3" } },
		{ "idle_threshold_pct", { "0", "101", "x", "-5" }, { "1", "100" } },
		{ "idle_window_ms", { "0", "9", "60001", "1e3" }, { "10", "2000" } },
		{ "stickiness_ms", { "-1", "3600001", "ms", "\n" }, { "0", "5000" } },
		{ "rebalance_ms", { "0", "9", "3600001", "-1" }, { "10", "500" } },
		{ "hysteresis_pct", { "1001", "-1", "pct", "\n" }, { "0", "50" } },
		{ "adaptive_runq_us", { "0", "10000001", "us", "-1" }, { "1", "500" } },
		{ "adaptive_periods", { "0", "1001", "x", "-1" }, { "1", "5" } },
	};
	struct stat st;
	char path[256];

	for (size_t i = 0; i < sizeof(k) / sizeof(k[0]); i++) {
		long long orig = knob_get(k[i].name);

		snprintf(path, sizeof(path), KNOBS_DIR "%s", k[i].name);
		ASSERT_EQ(0, stat(path, &st));
		EXPECT_EQ(0644, st.st_mode & 0777) TH_LOG("%s", k[i].name);
		for (int j = 0; j < 4; j++) {
			EXPECT_EQ(-EINVAL, knob_write(k[i].name, k[i].bad[j]))
				TH_LOG("%s <- '%s'", k[i].name, k[i].bad[j]);
			EXPECT_EQ(orig, knob_get(k[i].name));
		}
		for (int j = 0; j < 2; j++) {
			EXPECT_EQ(0, knob_write(k[i].name, k[i].good[j]));
			EXPECT_EQ(strtoll(k[i].good[j], NULL, 10), knob_get(k[i].name));
		}
		EXPECT_EQ(0, knob_set(k[i].name, orig));
		EXPECT_EQ(orig, knob_get(k[i].name));
	}
}

MCP_TEST_MAIN
