// SPDX-License-Identifier: GPL-2.0-only
/*
 * mcpctl top end to end, inside the test VM: a busy process that spins
 * pinned to one CPU, never sleeping, shows in every interval with a CPU%
 * near 100, an idle one has no row, -p selects exactly its threads, every
 * --json line parses
 * (jansson) and has the documented keys, plain output appends frames, a
 * placement shows in the PLACE column, a process's MCP buffers in the
 * BO-MiB column and bo_bytes, the MCP columns say n/a without mcp.ko, and
 * a user without root gets one clear line and exit 1.
 */
#define _GNU_SOURCE
#include <sched.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>

#include <jansson.h>

#include "mcp_test.h"

#define NOBODY		65534

#define MCPCTL(out, ...) MCP_MCPCTL(out, __VA_ARGS__)

/*
 * A child process that spins on CPU @cpu until killed, never sleeping: on
 * an otherwise idle vCPU it may not be switched out for a whole interval,
 * and top must still count it (Documentation/observability.rst).
 */
static pid_t fork_busy(int cpu)
{
	pid_t child = fork();

	if (child == 0) {
		volatile unsigned long n = 0;
		cpu_set_t set;

		CPU_ZERO(&set);
		CPU_SET(cpu, &set);
		if (sched_setaffinity(0, sizeof(set), &set))
			_exit(1);
		for (;;)
			n++;
	}
	return child;
}

/*
 * fork_busy() that first opens /dev/mcp and makes @n kernel BOs of @len
 * bytes on it (its buffer memory); exits 2 when it cannot.
 */
static pid_t fork_busy_with_bos(int cpu, int n, __u64 len)
{
	pid_t child = fork();

	if (child == 0) {
		volatile unsigned long spin = 0;
		int fd = open(MCP_DEV_PATH, O_RDWR | O_CLOEXEC);
		cpu_set_t set;

		if (fd < 0)
			_exit(2);
		for (int i = 0; i < n; i++) {
			struct mcp_bo_create c = { .size = sizeof(c), .length = len };

			if (ioctl(fd, MCP_IOC_BO_CREATE, &c))
				_exit(2);
		}
		CPU_ZERO(&set);
		CPU_SET(cpu, &set);
		if (sched_setaffinity(0, sizeof(set), &set))
			_exit(1);
		for (;;)
			spin++;
	}
	return child;
}

/* A child process that sleeps until killed. */
static pid_t fork_idle(void)
{
	pid_t child = fork();

	if (child == 0)
		for (;;)
			pause();
	return child;
}

/* Waits up to ~10 s for process @pid to be asleep (state S); 0 or -ETIMEDOUT. */
static int wait_sleeping(pid_t pid)
{
	char path[64], stat[512];

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	for (int i = 0; i < 1000; i++) {
		const char *paren;

		if (mcp_read_file(path, stat, sizeof(stat)) > 0) {
			paren = strrchr(stat, ')');
			if (paren && paren[1] == ' ' && paren[2] == 'S')
				return 0;
		}
		usleep(10000);
	}
	return -ETIMEDOUT;
}

/* The last CPU (@back 0), or the one before it (the same on a single CPU). */
static int last_cpu(int back)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);

	return n > back ? (int)n - 1 - back : 0;
}

/* The node of CPU @cpu, or -1. */
static int node_of_cpu(int cpu)
{
	unsigned char set[1024];
	char path[96], buf[256];

	for (int node = 0; node < 64; node++) {
		snprintf(path, sizeof(path), "/sys/devices/system/node/node%d/cpulist", node);
		memset(set, 0, sizeof(set));
		if (mcp_read_file(path, buf, sizeof(buf)) > 0 &&
		    mcp_parse_list(buf, set, sizeof(set)) >= 0 && cpu < (int)sizeof(set) &&
		    set[cpu])
			return node;
	}
	return -1;
}

static void kill_child(pid_t pid)
{
	if (pid > 0) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
	}
}

/* Counts the non-overlapping occurrences of @needle in @text. */
static int count_str(const char *text, const char *needle)
{
	int n = 0;

	for (const char *p = strstr(text, needle); p; p = strstr(p + strlen(needle), needle))
		n++;
	return n;
}

/*
 * Waits up to ~60 s for process @pid to hold a BPF link attached to the
 * raw tracepoint @tp (its fdinfo says "tp_name:\t@tp"); 0 or -ETIMEDOUT.
 */
static int wait_tp_attached(pid_t pid, const char *tp)
{
	char path[64], info[512], want[64];

	snprintf(want, sizeof(want), "tp_name:\t%s\n", tp);
	for (int i = 0; i < 600; i++) {
		for (int fd = 0; fd < 256; fd++) {
			snprintf(path, sizeof(path), "/proc/%d/fdinfo/%d", pid, fd);
			if (mcp_read_file(path, info, sizeof(info)) > 0 && strstr(info, want))
				return 0;
		}
		usleep(100000);
	}
	return -ETIMEDOUT;
}

/* What the JSON lines of one `mcpctl top --json` run said about @tgid. */
struct top_result {
	int objects;		/* JSON lines */
	int bad;		/* lines that did not parse or miss a key */
	int tasks;		/* task rows over all objects */
	int tgid_rows;		/* rows of @tgid */
	int other_rows;		/* rows of any other process */
	double max_cpu;		/* largest cpu_percent of a @tgid row */
	double min_cpu;		/* smallest cpu_percent of a @tgid row */
	long long placements;	/* sum of "placements" of @tgid rows, -1: null */
	long long bo_bytes;	/* "bo_bytes" of the last @tgid row, -1: null */
	int mcp_available;	/* of the last object */
};

static const char *const top_keys[] = {
	"command", "time", "interval_ns", "sort", "tasks_seen", "llc", "mcp", "jobs",
	"tasks", "dropped_tasks",
};

static const char *const task_keys[] = {
	"pid", "tgid", "comm", "node", "cpu_percent", "oncpu_ns", "runq_waits",
	"runq_p50_us", "runq_p99_us", "cross_node_migrations",
	"cross_node_migrations_per_s", "llc_references", "llc_misses",
	"llc_miss_percent", "placements", "dma_jobs", "job_p99_us", "bo_bytes",
};

static int has_keys(json_t *obj, const char *const *keys, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!json_object_get(obj, keys[i]))
			return 0;
	return 1;
}

static void parse_top(const char *out, int tgid, struct top_result *r)
{
	const char *line = out;

	memset(r, 0, sizeof(*r));
	r->min_cpu = 1e9;
	r->bo_bytes = -1;
	while (*line) {
		const char *end = strchrnul(line, '\n');
		json_error_t error;
		json_t *doc, *tasks, *task;
		size_t i;

		if (end == line) {
			line = *end ? end + 1 : end;
			continue;
		}
		doc = json_loadb(line, end - line, 0, &error);
		line = *end ? end + 1 : end;
		r->objects++;
		if (!doc || !has_keys(doc, top_keys, ARRAY_SIZE(top_keys)) ||
		    strcmp(json_string_value(json_object_get(doc, "command")) ?: "", "top")) {
			r->bad++;
			json_decref(doc);
			continue;
		}
		r->mcp_available = json_is_true(json_object_get(json_object_get(doc, "mcp"),
								"available"));
		tasks = json_object_get(doc, "tasks");
		json_array_foreach(tasks, i, task) {
			json_t *place = json_object_get(task, "placements");

			r->tasks++;
			if (!has_keys(task, task_keys, ARRAY_SIZE(task_keys)) ||
			    !json_is_null(json_object_get(task, "job_p99_us"))) {
				r->bad++;
				continue;
			}
			if (json_integer_value(json_object_get(task, "tgid")) != tgid) {
				r->other_rows++;
				continue;
			}
			r->tgid_rows++;
			if (json_real_value(json_object_get(task, "cpu_percent")) > r->max_cpu)
				r->max_cpu = json_real_value(json_object_get(task, "cpu_percent"));
			if (json_real_value(json_object_get(task, "cpu_percent")) < r->min_cpu)
				r->min_cpu = json_real_value(json_object_get(task, "cpu_percent"));
			r->bo_bytes = json_is_integer(json_object_get(task, "bo_bytes"))
				? json_integer_value(json_object_get(task, "bo_bytes")) : -1;
			if (json_is_null(place))
				r->placements = -1;
			else if (r->placements >= 0)
				r->placements += json_integer_value(place);
		}
		json_decref(doc);
	}
}

FIXTURE(top) {
	pid_t busy;
	pid_t other;
	pid_t top;		/* an mcpctl top a test started, or -1 */
	char pid[16];
	char out[512 * 1024];
};

FIXTURE_SETUP(top)
{
	if (access(MCP_MCPCTL_PATH, X_OK))
		SKIP(return, "%s not in this image", MCP_MCPCTL_PATH);
	if (access("/sys/kernel/btf/vmlinux", R_OK))
		SKIP(return, "this kernel has no BTF");
	ASSERT_EQ(0, mcp_ensure_loaded());
	self->busy = fork_busy(last_cpu(0));
	ASSERT_LT(0, self->busy);
	self->other = -1;
	self->top = -1;
	snprintf(self->pid, sizeof(self->pid), "%d", self->busy);
}

FIXTURE_TEARDOWN(top)
{
	kill_child(self->busy);
	kill_child(self->other);
	kill_child(self->top);
	if (!mcp_module_loaded())
		mcp_ensure_loaded();
}

/*
 * The share of a pinned spinner: most of one CPU (100), and not more than
 * it by more than its run queue's clock can lag (a tick; under TCG a vCPU
 * QEMU is not running does not move its clock: 70 ms seen).  A slice
 * counted twice would show ~200.
 */
#define BUSY_MIN_CPU	50.0
#define BUSY_MAX_CPU	110.0

/* Every task: the busy process is among them, using the CPU. */
TEST_F_TIMEOUT(top, busy_process_shows, 120)
{
	struct top_result r;

	ASSERT_EQ(0, MCPCTL(self->out, "top", "1", "2", "--json")) TH_LOG("%s", self->out);
	parse_top(self->out, self->busy, &r);
	EXPECT_EQ(2, r.objects) TH_LOG("%s", self->out);
	EXPECT_EQ(0, r.bad) TH_LOG("%s", self->out);
	EXPECT_LT(0, r.tgid_rows) TH_LOG("pid %d missing: %s", self->busy, self->out);
	EXPECT_LT(0, r.other_rows) TH_LOG("no other task without -p");
	TH_LOG("busy process: %d rows, CPU%% %.1f..%.1f", r.tgid_rows, r.min_cpu, r.max_cpu);
	EXPECT_LT(BUSY_MIN_CPU, r.min_cpu) TH_LOG("%s", self->out);
	EXPECT_GT(BUSY_MAX_CPU, r.max_cpu) TH_LOG("%s", self->out);
}

/* -p: the rows of exactly that process, though another one spins too. */
TEST_F_TIMEOUT(top, pid_filter, 120)
{
	struct top_result r;

	self->other = fork_busy(last_cpu(1));
	ASSERT_LT(0, self->other);
	ASSERT_EQ(0, MCPCTL(self->out, "top", "-p", self->pid, "1", "2", "--json"))
		TH_LOG("%s", self->out);
	parse_top(self->out, self->busy, &r);
	EXPECT_EQ(2, r.objects) TH_LOG("%s", self->out);
	EXPECT_EQ(0, r.bad) TH_LOG("%s", self->out);
	EXPECT_EQ(2, r.tgid_rows) TH_LOG("one row per interval: %s", self->out);
	EXPECT_EQ(0, r.other_rows) TH_LOG("%s", self->out);
	TH_LOG("busy process: %d rows, CPU%% %.1f..%.1f", r.tgid_rows, r.min_cpu, r.max_cpu);
	EXPECT_LT(BUSY_MIN_CPU, r.min_cpu) TH_LOG("%s", self->out);
	EXPECT_GT(BUSY_MAX_CPU, r.max_cpu) TH_LOG("%s", self->out);
}

/*
 * Intervals shorter than the spinner's vCPU goes between two switches
 * (300 ms had none in the VM): a row in each all the same, from the
 * slice it has run so far.
 */
TEST_F_TIMEOUT(top, busy_process_every_short_interval, 120)
{
	struct top_result r;

	ASSERT_EQ(0, MCPCTL(self->out, "top", "-p", self->pid, "0.3", "4", "--json"))
		TH_LOG("%s", self->out);
	parse_top(self->out, self->busy, &r);
	TH_LOG("busy process: %d rows, CPU%% %.1f..%.1f", r.tgid_rows, r.min_cpu, r.max_cpu);
	EXPECT_EQ(4, r.objects) TH_LOG("%s", self->out);
	EXPECT_EQ(0, r.bad) TH_LOG("%s", self->out);
	EXPECT_EQ(4, r.tgid_rows) TH_LOG("one row per interval: %s", self->out);
	EXPECT_LT(BUSY_MIN_CPU, r.min_cpu) TH_LOG("%s", self->out);
}

/* A process asleep for the whole run has no row: it never ran. */
TEST_F_TIMEOUT(top, idle_process_has_no_row, 120)
{
	char idle_pid[16];
	struct top_result r;

	self->other = fork_idle();
	ASSERT_LT(0, self->other);
	ASSERT_EQ(0, wait_sleeping(self->other));
	snprintf(idle_pid, sizeof(idle_pid), "%d", self->other);
	ASSERT_EQ(0, MCPCTL(self->out, "top", "-p", idle_pid, "1", "2", "--json"))
		TH_LOG("%s", self->out);
	parse_top(self->out, self->other, &r);
	EXPECT_EQ(2, r.objects) TH_LOG("%s", self->out);
	EXPECT_EQ(0, r.bad) TH_LOG("%s", self->out);
	EXPECT_EQ(0, r.tgid_rows) TH_LOG("%s", self->out);
	EXPECT_EQ(0, r.other_rows) TH_LOG("%s", self->out);
}

/* Not a terminal: frames are appended, without escape sequences, and the
 * notes on n/a columns come once.
 */
TEST_F_TIMEOUT(top, batch_frames, 120)
{
	ASSERT_EQ(0, MCPCTL(self->out, "top", "-p", self->pid, "0.5", "3"))
		TH_LOG("%s", self->out);
	EXPECT_EQ(3, count_str(self->out, "mcpctl top - ")) TH_LOG("%s", self->out);
	EXPECT_EQ(3, count_str(self->out, "    PID    TGID COMM")) TH_LOG("%s", self->out);
	EXPECT_EQ(NULL, strchr(self->out, '\033'));
	/* This tree's mcp.ko has the job tracepoints: no n/a note for them. */
	EXPECT_EQ(0, count_str(self->out, "DMA/job latency")) TH_LOG("%s", self->out);
	if (strstr(self->out, "LLC counters unavailable"))
		EXPECT_EQ(1, count_str(self->out, "LLC counters unavailable"));
}

/* A placement made through MCP while top runs shows in its row. */
TEST_F_TIMEOUT(top, placement_counted, 120)
{
	char place_out[4096], node[16];
	struct top_result r;
	int fd, rc;

	/* The node of the busy process's CPU: a node it may run on. */
	ASSERT_LE(0, node_of_cpu(last_cpu(0)));
	snprintf(node, sizeof(node), "%d", node_of_cpu(last_cpu(0)));
	self->top = mcp_start_mcpctl(&fd, 0, (const char *const[]){ "top", "-p", self->pid,
								     "6", "1", "--json", NULL });
	ASSERT_LT(0, self->top);
	/*
	 * The mcp tracer attaches last; top then resets the counters once
	 * and starts its 6 s interval: place 1 s later.
	 */
	ASSERT_EQ(0, wait_tp_attached(self->top, "mcp_place"));
	sleep(1);
	ASSERT_EQ(0, MCPCTL(place_out, "place", "-p", self->pid, "--node", node))
		TH_LOG("%s", place_out);
	rc = mcp_finish_mcpctl(self->top, fd, self->out, sizeof(self->out));
	self->top = -1;		/* reaped */
	ASSERT_EQ(0, rc) TH_LOG("%s", self->out);
	parse_top(self->out, self->busy, &r);
	EXPECT_EQ(1, r.objects);
	EXPECT_EQ(0, r.bad) TH_LOG("%s", self->out);
	EXPECT_EQ(1, r.mcp_available);
	EXPECT_EQ(1, r.placements) TH_LOG("%s", self->out);
}

/*
 * A process holding three 4 MiB BOs: bo_bytes 12 MiB in --json, 12.0 in
 * the BO-MiB column; one without any: 0.  From the fdinfo of its fd.
 */
TEST_F_TIMEOUT(top, bo_column, 120)
{
	struct top_result r;
	char other_pid[16];

	self->other = fork_busy_with_bos(last_cpu(1), 3, 4ULL << 20);
	ASSERT_LT(0, self->other);
	snprintf(other_pid, sizeof(other_pid), "%d", self->other);
	ASSERT_EQ(0, MCPCTL(self->out, "top", "-p", other_pid, "1", "1", "--json"))
		TH_LOG("%s", self->out);
	parse_top(self->out, self->other, &r);
	EXPECT_EQ(0, r.bad) TH_LOG("%s", self->out);
	ASSERT_EQ(1, r.tgid_rows) TH_LOG("%s", self->out);
	EXPECT_EQ(12LL << 20, r.bo_bytes) TH_LOG("%s", self->out);

	ASSERT_EQ(0, MCPCTL(self->out, "top", "-p", self->pid, "1", "1", "--json"))
		TH_LOG("%s", self->out);
	parse_top(self->out, self->busy, &r);
	ASSERT_EQ(1, r.tgid_rows) TH_LOG("%s", self->out);
	EXPECT_EQ(0, r.bo_bytes) TH_LOG("no buffers: 0, not null: %s", self->out);

	ASSERT_EQ(0, MCPCTL(self->out, "top", "-p", other_pid, "1", "1"))
		TH_LOG("%s", self->out);
	EXPECT_NE(NULL, strstr(self->out, " BO-MiB\n")) TH_LOG("%s", self->out);
	EXPECT_NE(NULL, strstr(self->out, " 12.0\n")) TH_LOG("%s", self->out);
}

/* Without mcp.ko the MCP columns are null and top still runs. */
TEST_F_TIMEOUT(top, without_module, 120)
{
	struct top_result r;

	ASSERT_EQ(0, mcp_unload_module(0));
	ASSERT_EQ(0, MCPCTL(self->out, "top", "-p", self->pid, "2", "1", "--json"))
		TH_LOG("%s", self->out);
	parse_top(self->out, self->busy, &r);
	EXPECT_EQ(1, r.objects);
	EXPECT_EQ(0, r.bad) TH_LOG("%s", self->out);
	EXPECT_EQ(0, r.mcp_available);
	EXPECT_EQ(1, r.tgid_rows) TH_LOG("%s", self->out);
	EXPECT_EQ(-1, r.placements) TH_LOG("%s", self->out);
	EXPECT_NE(NULL, strstr(self->out, "mcp.ko not loaded")) TH_LOG("%s", self->out);
}

/* Not root: one line naming what is missing, exit 1. */
TEST_F_TIMEOUT(top, not_root, 60)
{
	ASSERT_EQ(1, mcp_run_mcpctl_as(self->out, sizeof(self->out), NOBODY,
				       (const char *const[]){ "top", "1", "1", NULL }))
		TH_LOG("%s", self->out);
	EXPECT_EQ(0, strncmp(self->out, "mcpctl: ", 8)) TH_LOG("%s", self->out);
	EXPECT_NE(NULL, strstr(self->out, "root")) TH_LOG("%s", self->out);
	EXPECT_EQ(1, count_str(self->out, "\n")) TH_LOG("%s", self->out);
}

/* Usage errors: exit 2. */
TEST_F(top, usage)
{
	EXPECT_EQ(2, MCPCTL(self->out, "top", "--sort", "mem"));
	EXPECT_EQ(2, MCPCTL(self->out, "top", "0"));
}

MCP_TEST_MAIN
