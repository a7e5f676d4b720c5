// SPDX-License-Identifier: GPL-2.0-only
/*
 * A seeded fuzzer over every kind of fd MCP hands out: host contexts
 * (/dev/mcp), device fds (MCP_IOC_DEV_OPEN, when a device is listed),
 * worker fds, tuning session fds, exported dma-bufs and sync_file fences.  Several threads
 * send every MCP ioctl (and the sync_file and dma-buf ones) to fds of
 * every kind, with random bytes under plausible handles, fds and sizes,
 * bad pointers and structs that run into unmapped pages; they map, read,
 * write and poll them, and close and remake them in random order while
 * the others are mid-call.  Afterwards every object counter is back at
 * its starting value and the module unloads; run-vm.py's kernel-log check
 * fails the run on any splat.
 *
 * Half of the calls of the commands with a pointer-rich argument
 * (GET_TOPOLOGY, BO_USERPTR, GRAPH_CREATE, JOBS_DONE, CHAIN_DONE,
 * SYNC_IOC_MERGE) get a well-formed argument with one thing wrong (a
 * graph of the shared catalogue, maybe with a byte flipped; arrays in
 * real memory, read-only, unmapped or blocked), so they reach the code
 * behind the validation.  "Blocked" memory is a userfaultfd range: the
 * kernel's copy or pin of it waits until a resolver thread fills the
 * page, 0 to 20 ms later, while the other threads close and remake fds.
 *
 * MCP_FUZZ_SEED=N and MCP_FUZZ_ITERS=N (per thread) repeat or lengthen a
 * run; the seed is always printed.  Placement ioctls are left to
 * mcp_abuse_test, which fuzzes them on the caller's own task: here a
 * random pid could move the test harness itself.
 */
#include "mcp_bo.h"
#include "mcp_dev.h"
#include "../graph_cases/mcp_graph_cases.h"

#include <linux/dma-buf.h>
#include <linux/userfaultfd.h>
#include <poll.h>
#include <linux/sync_file.h>
#include <pthread.h>
#include <sys/eventfd.h>
#include <time.h>

enum fd_kind {
	KIND_CTX, KIND_DEV, KIND_WORKER, KIND_DMABUF, KIND_FENCE, KIND_EVENTFD, KIND_TUNE,
	NR_KINDS
};

static const char *const kind_names[NR_KINDS] = {
	"context", "device", "worker", "dma-buf", "sync_file", "eventfd", "tune session",
};

#define NR_SLOTS	24
#define MAX_FD		4096
#define NR_FUZZERS	4
#define ARG_BUF		(4 * 4096)

static const unsigned long fuzz_cmds[] = {
	MCP_IOC_GET_VERSION, MCP_IOC_GET_TOPOLOGY, MCP_IOC_DEV_LIST, MCP_IOC_DEV_INFO,
	MCP_IOC_DEV_OPEN, MCP_IOC_BAR_INFO, MCP_IOC_IRQ_SET_EVENTFD, MCP_IOC_IRQ_UNMASK,
	MCP_IOC_BO_CREATE, MCP_IOC_BO_USERPTR, MCP_IOC_BO_INFO, MCP_IOC_BO_EXPORT,
	MCP_IOC_BO_IMPORT, MCP_IOC_BO_DESTROY, MCP_IOC_ENGINE_INFO, MCP_IOC_DMA_SUBMIT,
	MCP_IOC_GRAPH_CREATE, MCP_IOC_GRAPH_EXEC, MCP_IOC_GRAPH_STATUS, MCP_IOC_GRAPH_DESTROY,
	MCP_IOC_WORKER_REGISTER, MCP_IOC_JOB_DONE, MCP_IOC_JOBS_DONE, MCP_IOC_CHAIN_DONE,
	MCP_IOC_TUNE_LIST, MCP_IOC_TUNE_SESSION, MCP_IOC_TUNE_SET, MCP_IOC_TUNE_GET,
	MCP_IOC_TUNE_COMMIT, MCP_IOC_TUNE_RESET,
	SYNC_IOC_MERGE, SYNC_IOC_FILE_INFO, DMA_BUF_IOCTL_SYNC,
};

struct slot {
	int fd;
	enum fd_kind kind;
};

static struct {
	pthread_mutex_t lock;	/* protects slots[] */
	struct slot slots[NR_SLOTS];
	int nr_devices;
	__u32 dev_index;
	__u64 seed;
	__u64 iters;
	unsigned long made[NR_KINDS];
	unsigned long calls, failures;
	unsigned long ok[ARRAY_SIZE(fuzz_cmds)];
	unsigned long structured, faults;
	volatile int stop;
} fz = { .lock = PTHREAD_MUTEX_INITIALIZER };

/* Pages of a fuzzer's blocked range: BLOCKED_PAGES, the last two blocked. */
#define BLOCKED_PAGES	4

struct fuzzer {
	__u64 rnd;
	unsigned char *buf;	/* ARG_BUF bytes, read-write */
	unsigned char *ro;	/* one read-only page */
	char *guard;		/* a page followed by an unmapped one */
	void *hole;		/* an unmapped address */
	char *blocked;		/* BLOCKED_PAGES, the last two on @uffd */
	int uffd;
	uint8_t *graph;		/* MCP_GRAPH_CASE_MAX_BYTES */
	struct mcp_graph_case_graph *g;
	long pg;
	unsigned long calls, failures, structured;
	unsigned long ok[ARRAY_SIZE(fuzz_cmds)];
};

static __u64 next_rnd(struct fuzzer *f)
{
	f->rnd ^= f->rnd >> 12;
	f->rnd ^= f->rnd << 25;
	f->rnd ^= f->rnd >> 27;
	return f->rnd * 2685821657736338717ull;
}

static __u64 env_u64(const char *name, __u64 def)
{
	const char *s = getenv(name);

	return s && *s ? strtoull(s, NULL, 0) : def;
}

/* Any fd of the table, dup()ed so a concurrent close cannot reuse it. */
static int pick_fd(struct fuzzer *f, enum fd_kind *kind)
{
	int fd;

	pthread_mutex_lock(&fz.lock);
	struct slot *s = &fz.slots[next_rnd(f) % NR_SLOTS];

	fd = s->fd >= 0 ? dup(s->fd) : -1;
	if (kind)
		*kind = s->kind;
	pthread_mutex_unlock(&fz.lock);
	return fd;
}

/* An fd of @kind from the table (dup()ed), or any fd when none is. */
static int pick_kind(struct fuzzer *f, enum fd_kind want, enum fd_kind *kind)
{
	unsigned int start = next_rnd(f) % NR_SLOTS;
	int fd = -1;

	pthread_mutex_lock(&fz.lock);
	for (unsigned int n = 0; n < NR_SLOTS && fd < 0; n++) {
		struct slot *s = &fz.slots[(start + n) % NR_SLOTS];

		if (s->fd >= 0 && s->kind == want) {
			fd = dup(s->fd);
			*kind = s->kind;
		}
	}
	pthread_mutex_unlock(&fz.lock);
	return fd >= 0 ? fd : pick_fd(f, kind);
}

/* The kind of fd that takes @cmd. */
static enum fd_kind kind_for(struct fuzzer *f, unsigned long cmd)
{
	switch (cmd) {
	case MCP_IOC_BAR_INFO:
	case MCP_IOC_IRQ_SET_EVENTFD:
	case MCP_IOC_IRQ_UNMASK:
		return KIND_DEV;
	case MCP_IOC_JOB_DONE:
	case MCP_IOC_JOBS_DONE:
	case MCP_IOC_CHAIN_DONE:
		return KIND_WORKER;
	case MCP_IOC_TUNE_SET:
	case MCP_IOC_TUNE_GET:
	case MCP_IOC_TUNE_COMMIT:
	case MCP_IOC_TUNE_RESET:
		return KIND_TUNE;
	case SYNC_IOC_MERGE:
	case SYNC_IOC_FILE_INFO:
		return KIND_FENCE;
	case DMA_BUF_IOCTL_SYNC:
		return KIND_DMABUF;
	default:
		return next_rnd(f) % 2 ? KIND_CTX : KIND_DEV;
	}
}

/* A context or device fd of the table (dup()ed), or -1. */
static int pick_ctx(struct fuzzer *f)
{
	for (int i = 0; i < 8; i++) {
		enum fd_kind kind;
		int fd = pick_fd(f, &kind);

		if (fd >= 0 && (kind == KIND_CTX || kind == KIND_DEV))
			return fd;
		if (fd >= 0)
			close(fd);
	}
	return -1;
}

/* Handles 1 and 2 name BOs of a new context: small numbers hit them. */
static int with_bos(int ctx)
{
	for (int i = 0; ctx >= 0 && i < 2; i++) {
		struct mcp_bo_create c = { .size = sizeof(c), .length = 65536 };

		mcp_ioctl(ctx, MCP_IOC_BO_CREATE, &c);
	}
	return ctx;
}

/* An fd of @kind made from @ctx (a context or device fd), or -1. */
static int make_from(struct fuzzer *f, int ctx, enum fd_kind kind)
{
	__u32 a, b;
	int fd = -1;

	switch (kind) {
	case KIND_CTX:
		return with_bos(mcp_open());
	case KIND_DEV:
		if (!fz.nr_devices)
			return with_bos(mcp_open());
		fd = mcp_dev_open(ctx, fz.dev_index);
		return fd < 0 ? -1 : with_bos(fd);
	case KIND_WORKER: {
		struct mcp_worker_register r = { .size = sizeof(r), .node = -1, .fd = -1 };

		if (mcp_ioctl(ctx, MCP_IOC_WORKER_REGISTER, &r))
			return -1;
		fcntl(r.fd, F_SETFL, fcntl(r.fd, F_GETFL) | O_NONBLOCK);
		return r.fd;
	}
	case KIND_DMABUF:
	case KIND_FENCE: {
		struct mcp_bo_create c = { .size = sizeof(c), .length = 4096 };
		struct mcp_dma_submit s;

		if (mcp_ioctl(ctx, MCP_IOC_BO_CREATE, &c))
			return -1;
		a = c.handle;
		if (kind == KIND_DMABUF) {
			fd = bo_export(ctx, a);
			/* The dma-buf holds the BO: the handle may go. */
			bo_destroy(ctx, a);
			return fd < 0 ? -1 : fd;
		}
		c.handle = 0;
		if (mcp_ioctl(ctx, MCP_IOC_BO_CREATE, &c)) {
			bo_destroy(ctx, a);
			return -1;
		}
		b = c.handle;
		dma_arg(&s, MCP_ENGINE_CPU, a, b, next_rnd(f) % 4096);
		s.flags = MCP_DMA_ASYNC;
		fd = mcp_ioctl(ctx, MCP_IOC_DMA_SUBMIT, &s) ? -1 : s.out_fence;
		/* The job holds both BOs until it ends. */
		bo_destroy(ctx, a);
		bo_destroy(ctx, b);
		return fd;
	}
	case KIND_EVENTFD:
		return eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	case KIND_TUNE: {
		struct mcp_tune_session t = { .size = sizeof(t) };

		return mcp_ioctl(ctx, MCP_IOC_TUNE_SESSION, &t) ? -1 : t.fd;
	}
	default:
		return -1;
	}
}

/* Closes slot @i and puts a new fd of a random kind there. */
static void remake(struct fuzzer *f, int i)
{
	enum fd_kind kind = next_rnd(f) % NR_KINDS;
	int ctx = kind == KIND_CTX || kind == KIND_EVENTFD ? -1 : pick_ctx(f);
	int fd = -1, old;

	if (kind == KIND_CTX || kind == KIND_EVENTFD || ctx >= 0)
		fd = make_from(f, ctx, kind);
	if (ctx >= 0)
		close(ctx);
	pthread_mutex_lock(&fz.lock);
	old = fz.slots[i].fd;
	fz.slots[i].fd = fd;
	fz.slots[i].kind = kind;
	if (fd >= 0)
		fz.made[kind]++;
	pthread_mutex_unlock(&fz.lock);
	if (old >= 0)
		close(old);
}

/* A pointer: NULL, unmapped, kernel, random, read-only or into buf. */
static __u64 fuzz_ptr(struct fuzzer *f)
{
	switch (next_rnd(f) % 8) {
	case 0:
		return 0;
	case 1:
		return (uintptr_t)f->hole;
	case 2:
		return 0xffff888000000000ull + (next_rnd(f) & 0xfffff000);
	case 3:
		return next_rnd(f);
	case 4:
		return (uintptr_t)f->ro;
	default:
		return (uintptr_t)(f->buf + 4096 + (next_rnd(f) % 1024) * 8);
	}
}

/* A plausible value for one 8-byte word of an argument. */
static __u64 plausible_word(struct fuzzer *f, int fd_hint)
{
	switch (next_rnd(f) % 10) {
	case 0:
	case 1:
	case 2:
		return 0;				/* flags, reserved */
	case 3:
	case 4:
		return next_rnd(f) % 5;			/* handle, index */
	case 5:
		return (next_rnd(f) % 5) | ((next_rnd(f) % 5) << 32);
	case 6:
		return next_rnd(f) % (1 << 16);		/* a length */
	case 7:
		return (__u32)fd_hint;			/* an fd */
	case 8:
		return (uintptr_t)(f->buf + 4096 + (next_rnd(f) % 1024) * 8);
	default:
		return fuzz_ptr(f);
	}
}

/*
 * The argument: either plausible words only (zeros, small numbers for
 * handles and indices, short lengths, fds of the table, pointers), so
 * that calls get past validation, or plausible words among random ones.
 * No per-struct knowledge, so every field of every struct gets each kind
 * of value in turn; the size field is usually the one the command encodes.
 */
static void fill_arg(struct fuzzer *f, unsigned long cmd, int fd_hint)
{
	size_t len = _IOC_SIZE(cmd) ? _IOC_SIZE(cmd) : 64;
	bool noisy = next_rnd(f) % 4 == 0;

	if (len > 1024)
		len = 1024;
	for (size_t j = 0; j < 1024; j += 8)
		*(__u64 *)(f->buf + j) = next_rnd(f);
	for (size_t j = 0; j + 8 <= len; j += 8)
		if (!noisy || next_rnd(f) % 4)
			*(__u64 *)(f->buf + j) = plausible_word(f, fd_hint);
	if (next_rnd(f) % 8)
		*(__u32 *)f->buf = _IOC_SIZE(cmd);
}

/* The first blocked page, missing again: the next access waits. */
static char *blocked_page(struct fuzzer *f)
{
	char *p = f->blocked + (BLOCKED_PAGES - 2) * f->pg;

	madvise(p, 2 * f->pg, MADV_DONTNEED);
	return p;
}

/* Where an array of the argument lives: mostly real memory. */
static __u64 array_ptr(struct fuzzer *f)
{
	switch (next_rnd(f) % 8) {
	case 0:
		return (uintptr_t)blocked_page(f) - (next_rnd(f) % 2) * 16;
	case 1:
		return (uintptr_t)f->ro;
	case 2:
		return (uintptr_t)f->hole;
	default:
		return (uintptr_t)(f->buf + 8192 + (next_rnd(f) % 64) * 8);
	}
}

/*
 * A well-formed argument for @cmd with one thing wrong, in f->buf:
 * false for commands without one.
 */
static bool struct_arg(struct fuzzer *f, unsigned long cmd, int fd_hint)
{
	memset(f->buf, 0, 1024);
	switch (cmd) {
	case MCP_IOC_GET_TOPOLOGY: {
		struct mcp_topology *t = (void *)f->buf;

		t->size = sizeof(*t);
		t->nodes_cap = next_rnd(f) % 9;
		t->cpumask_words = next_rnd(f) % 5;
		t->nodes_ptr = array_ptr(f);
		t->cpumasks_ptr = array_ptr(f);
		t->distances_ptr = array_ptr(f);
		return true;
	}
	case MCP_IOC_BO_USERPTR: {
		struct mcp_bo_userptr *u = (void *)f->buf;
		static const int pages[] = { 1, 2, 3 };

		u->size = sizeof(*u);
		u->length = f->pg * pages[next_rnd(f) % 3];
		switch (next_rnd(f) % 5) {
		case 0:
			u->addr = (uintptr_t)blocked_page(f) - f->pg;
			break;
		case 1:
			u->addr = (uintptr_t)f->ro;
			break;
		case 2:
			u->addr = (uintptr_t)f->guard;
			break;
		default:
			u->addr = (uintptr_t)(f->buf + 8192);
			break;
		}
		return true;
	}
	case MCP_IOC_GRAPH_CREATE: {
		struct mcp_graph_create *c = (void *)f->buf;
		const struct mcp_graph_case *gc = &mcp_graph_cases[next_rnd(f) % MCP_GRAPH_N_CASES];
		__u32 *handles = (__u32 *)(f->buf + 2048);
		size_t len = mcp_graph_case_build(gc, f->g, f->graph, MCP_GRAPH_CASE_MAX_BYTES);

		if (len && next_rnd(f) % 2)
			f->graph[next_rnd(f) % len] ^= 1u << (next_rnd(f) % 8);
		for (int i = 0; i < 64; i++)
			handles[i] = 1 + next_rnd(f) % 3;
		c->size = sizeof(*c);
		c->graph = (uintptr_t)f->graph;
		c->graph_len = len;
		c->handles = next_rnd(f) % 8 ? (uintptr_t)handles : array_ptr(f);
		c->n_handles = f->g->n_buffers;
		if (next_rnd(f) % 8 == 0 && len <= (size_t)f->pg) {
			/* The graph's tail is in a blocked page. */
			char *p = blocked_page(f) - len / 2;

			memcpy(p, f->graph, len / 2);
			c->graph = (uintptr_t)p;
		}
		return true;
	}
	case MCP_IOC_JOBS_DONE: {
		struct mcp_jobs_done *j = (void *)f->buf;

		j->size = sizeof(*j);
		j->reports = array_ptr(f);
		j->n_reports = next_rnd(f) % 4;
		return true;
	}
	case MCP_IOC_CHAIN_DONE: {
		struct mcp_chain_done *c = (void *)f->buf;

		c->size = sizeof(*c);
		c->job_id = next_rnd(f) % 8;
		c->ends = array_ptr(f);
		c->n_ran = next_rnd(f) % 4;
		c->result = next_rnd(f) % 2 ? 0 : -(int)(next_rnd(f) % 200);
		return true;
	}
	case SYNC_IOC_MERGE: {
		struct sync_merge_data *m = (void *)f->buf;

		snprintf(m->name, sizeof(m->name), "fuzz");
		m->fd2 = fd_hint;
		return true;
	}
	default:
		return false;
	}
}

static void do_ioctl(struct fuzzer *f)
{
	size_t which = next_rnd(f) % ARRAY_SIZE(fuzz_cmds);
	unsigned long cmd = fuzz_cmds[which];
	enum fd_kind kind;
	/* Mostly the kind of fd the command is for, else any. */
	int fd = next_rnd(f) % 4 ? pick_kind(f, kind_for(f, cmd), &kind) : pick_fd(f, &kind);
	int hint = pick_fd(f, NULL);
	void *arg = f->buf;
	int ret;

	if (next_rnd(f) % 2 && struct_arg(f, cmd, hint)) {
		f->structured++;
		if (next_rnd(f) % 8 == 0) {
			/* The struct itself runs into a blocked page. */
			char *p = blocked_page(f) - 16;

			memcpy(p, f->buf, 16);
			arg = p;
		}
		goto call;
	}
	if (next_rnd(f) % 8 == 0)	/* a known number, another size */
		cmd = _IOC(_IOC_DIR(cmd), _IOC_TYPE(cmd), _IOC_NR(cmd), next_rnd(f) & 0x3ff);
	fill_arg(f, cmd, hint);
	switch (next_rnd(f) % 10) {
	case 0:
		arg = NULL;
		break;
	case 1:
		arg = f->hole;
		break;
	case 2:
		arg = f->ro;
		break;
	case 3:
		/* The struct runs into the unmapped page after guard. */
		memcpy(f->guard + f->pg - 24, f->buf, 24);
		arg = f->guard + f->pg - 24;
		break;
	default:
		break;
	}
call:
	ret = ioctl(fd, cmd, arg);
	f->calls++;
	if (ret < 0)
		f->failures++;
	else if (cmd == fuzz_cmds[which])
		f->ok[which]++;
	if (fd >= 0)
		close(fd);
	if (hint >= 0)
		close(hint);
}

/* Maps a random range; touches it only where no BAR can be behind it. */
static void do_mmap(struct fuzzer *f)
{
	enum fd_kind kind;
	int fd = pick_fd(f, &kind);
	size_t len = (1 + next_rnd(f) % 16) * f->pg;
	int prot = (next_rnd(f) % 2 ? PROT_READ : 0) | (next_rnd(f) % 2 ? PROT_WRITE : 0);
	off_t off = (off_t)((next_rnd(f) % 4 ? next_rnd(f) % 64 : next_rnd(f) % (1ull << 40)) *
			    f->pg);
	void *p;

	if (fd < 0)
		return;
	p = mmap(NULL, len, prot, next_rnd(f) % 4 ? MAP_SHARED : MAP_PRIVATE, fd, off);
	if (p != MAP_FAILED) {
		/* A device fd may map a BAR: its registers are never touched. */
		if (kind != KIND_DEV && (prot & PROT_WRITE) && (prot & PROT_READ))
			memset(p, 0xa5, f->pg);
		munmap(p, len);
	}
	close(fd);
}

static void do_io(struct fuzzer *f)
{
	int fd = pick_fd(f, NULL);
	struct pollfd p = { .fd = fd, .events = POLLIN | POLLOUT };
	size_t len = next_rnd(f) % 512;

	if (fd < 0)
		return;
	switch (next_rnd(f) % 3) {
	case 0:
		/* Non-blocking on worker fds; others do not block. */
		if (poll(&p, 1, 0) > 0 && (p.revents & POLLIN))
			(void)!read(fd, f->buf, len);
		break;
	case 1:
		if (poll(&p, 1, 0) > 0 && (p.revents & POLLOUT))
			(void)!write(fd, f->buf, len);
		break;
	default:
		poll(&p, 1, 0);
		break;
	}
	close(fd);
}

static void *fuzz_thread(void *arg)
{
	struct fuzzer *f = arg;

	for (__u64 i = 0; i < fz.iters; i++) {
		unsigned int op = next_rnd(f) % 16;

		if (op < 11)
			do_ioctl(f);
		else if (op < 13)
			do_mmap(f);
		else if (op < 15)
			do_io(f);
		else
			remake(f, next_rnd(f) % NR_SLOTS);
	}
	return NULL;
}

/*
 * Fills the pages the fuzzers' blocked ranges fault on, each after 0 to
 * 20 ms, until told to stop (after the fuzzers are joined: one may still
 * wait on it).
 */
static void *resolver_thread(void *arg)
{
	struct fuzzer *fuzzers = arg;
	__u64 rnd = fz.seed ^ 0x5bd1e995;

	while (!fz.stop) {
		struct pollfd p[NR_FUZZERS];

		for (int i = 0; i < NR_FUZZERS; i++)
			p[i] = (struct pollfd){ .fd = fuzzers[i].uffd, .events = POLLIN };
		if (poll(p, NR_FUZZERS, 10) <= 0)
			continue;
		for (int i = 0; i < NR_FUZZERS; i++) {
			struct uffd_msg msg;
			struct uffdio_zeropage z = { 0 };

			if (!(p[i].revents & POLLIN) ||
			    read(fuzzers[i].uffd, &msg, sizeof(msg)) != sizeof(msg) ||
			    msg.event != UFFD_EVENT_PAGEFAULT)
				continue;
			rnd = rnd * 6364136223846793005ull + 1442695040888963407ull;
			usleep((rnd >> 33) % 20000);
			z.range.start = msg.arg.pagefault.address & ~(__u64)(fuzzers[i].pg - 1);
			z.range.len = fuzzers[i].pg;
			ioctl(fuzzers[i].uffd, UFFDIO_ZEROPAGE, &z);
			fz.faults++;
		}
	}
	return NULL;
}

/* Calls of @cmd that succeeded, over every fuzzer. */
static unsigned long ok_of(unsigned long cmd)
{
	for (size_t c = 0; c < ARRAY_SIZE(fuzz_cmds); c++)
		if (fuzz_cmds[c] == cmd)
			return fz.ok[c];
	return 0;
}

/* Counters of live objects: each must return to where it started. */
static const char *const live_counters[] = {
	"open_files", "device_files", "bar_mappings", "irq_eventfds", "bo_objects",
	"bo_kernel_pages", "bo_pinned_pages", "bo_mappings", "bo_exports", "bo_imports",
	"dma_jobs_in_flight", "graph_objects", "graph_execs_in_flight", "tune_sessions",
};

FIXTURE(fdfuzz) {
	long long before[ARRAY_SIZE(live_counters)];
	unsigned char open_before[MAX_FD];
	int ctx;
};

FIXTURE_SETUP(fdfuzz)
{
	ASSERT_EQ(0, mcp_ensure_loaded());
	self->ctx = mcp_open();
	ASSERT_LE(0, self->ctx) TH_LOG("open %s: %s", MCP_DEV_PATH, strerror(errno));
	for (size_t i = 0; i < ARRAY_SIZE(live_counters); i++)
		self->before[i] = mcp_counter(live_counters[i]);
	for (int fd = 0; fd < MAX_FD; fd++)
		self->open_before[fd] = fcntl(fd, F_GETFD) >= 0;
}

FIXTURE_TEARDOWN(fdfuzz)
{
	if (self->ctx >= 0)
		close(self->ctx);
}

TEST_F_TIMEOUT(fdfuzz, every_fd_kind_from_threads, 600)
{
	struct fuzzer fuzzers[NR_FUZZERS];
	pthread_t th[NR_FUZZERS], resolver;
	__u32 idx[8];
	long pg = sysconf(_SC_PAGESIZE);

	fz.seed = env_u64("MCP_FUZZ_SEED", (__u64)time(NULL) ^ ((__u64)getpid() << 32));
	fz.iters = env_u64("MCP_FUZZ_ITERS", 3000);
	if (!fz.seed)
		fz.seed = 1;
	fz.nr_devices = mcp_dev_list(self->ctx, idx, 8);
	if (fz.nr_devices > 0)
		fz.dev_index = idx[0];
	else
		fz.nr_devices = 0;
	TH_LOG("seed 0x%llx, %llu iterations per thread (MCP_FUZZ_SEED / MCP_FUZZ_ITERS)",
	       (unsigned long long)fz.seed, (unsigned long long)fz.iters);
	TH_LOG("%d device(s) listed", fz.nr_devices);

	for (int i = 0; i < NR_FUZZERS; i++) {
		struct fuzzer *f = &fuzzers[i];

		memset(f, 0, sizeof(*f));
		f->rnd = fz.seed + 0x9e3779b97f4a7c15ull * (i + 1);
		f->pg = pg;
		f->buf = mmap(NULL, ARG_BUF, PROT_READ | PROT_WRITE,
			      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		f->ro = mmap(NULL, pg, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		f->guard = mcp_guarded_page();
		f->hole = mcp_unmapped_addr();
		f->blocked = mcp_uffd_pages(BLOCKED_PAGES, 2, &f->uffd);
		f->graph = malloc(MCP_GRAPH_CASE_MAX_BYTES);
		f->g = malloc(sizeof(*f->g));
		ASSERT_NE(MAP_FAILED, f->buf);
		ASSERT_NE(MAP_FAILED, f->ro);
		ASSERT_NE(NULL, f->guard);
		ASSERT_NE(NULL, f->blocked) TH_LOG("userfaultfd: %s", strerror(errno));
		ASSERT_NE(NULL, f->graph);
		ASSERT_NE(NULL, f->g);
	}
	/* Every kind first, then random ones. */
	for (int i = 0; i < NR_SLOTS; i++) {
		fz.slots[i].fd = -1;
		if (i < NR_KINDS) {
			int ctx = i == KIND_CTX || i == KIND_EVENTFD ? -1 : dup(self->ctx);

			if (i == KIND_DEV && !fz.nr_devices) {
				if (ctx >= 0)
					close(ctx);
				continue;
			}
			fz.slots[i].kind = i;
			fz.slots[i].fd = make_from(&fuzzers[0], ctx, i);
			if (ctx >= 0)
				close(ctx);
			ASSERT_LE(0, fz.slots[i].fd) TH_LOG("making a %s fd failed", kind_names[i]);
			fz.made[i]++;
		} else {
			remake(&fuzzers[0], i);
		}
	}

	fz.stop = 0;
	ASSERT_EQ(0, pthread_create(&resolver, NULL, resolver_thread, fuzzers));
	for (int i = 0; i < NR_FUZZERS; i++)
		ASSERT_EQ(0, pthread_create(&th[i], NULL, fuzz_thread, &fuzzers[i]));
	for (int i = 0; i < NR_FUZZERS; i++) {
		pthread_join(th[i], NULL);
		fz.calls += fuzzers[i].calls;
		fz.failures += fuzzers[i].failures;
		fz.structured += fuzzers[i].structured;
		for (size_t c = 0; c < ARRAY_SIZE(fuzz_cmds); c++)
			fz.ok[c] += fuzzers[i].ok[c];
	}
	fz.stop = 1;
	pthread_join(resolver, NULL);
	for (size_t c = 0; c < ARRAY_SIZE(fuzz_cmds); c++)
		TH_LOG("cmd 0x%08lx (nr 0x%02lx): %lu succeeded", fuzz_cmds[c],
		       (unsigned long)_IOC_NR(fuzz_cmds[c]), fz.ok[c]);
	TH_LOG("%lu ioctls, %lu failed; %lu with a well-formed argument; "
	       "%lu waited on a blocked page", fz.calls, fz.failures, fz.structured, fz.faults);
	for (int k = 0; k < NR_KINDS; k++)
		TH_LOG("%s fds made: %lu", kind_names[k], fz.made[k]);
	/* The fuzzer made every kind again while the others ran. */
	for (int k = 0; k < NR_KINDS; k++) {
		if (k == KIND_DEV && !fz.nr_devices)
			continue;
		EXPECT_LT(1, fz.made[k]) TH_LOG("kind %s", kind_names[k]);
	}
	EXPECT_LT(0, fz.failures);
	EXPECT_LT(fz.failures, fz.calls);
	/* The well-formed arguments got past validation, and some waited. */
	EXPECT_LT(0, ok_of(MCP_IOC_GET_TOPOLOGY)) TH_LOG("no GET_TOPOLOGY succeeded");
	EXPECT_LT(0, ok_of(MCP_IOC_BO_USERPTR)) TH_LOG("no BO_USERPTR succeeded");
	EXPECT_LT(0, ok_of(MCP_IOC_GRAPH_CREATE)) TH_LOG("no GRAPH_CREATE succeeded");
	EXPECT_LT(0, fz.faults) TH_LOG("no call waited on a blocked page");

	/* Closed in random order. */
	for (int n = NR_SLOTS; n > 0; n--) {
		int i = next_rnd(&fuzzers[0]) % n;
		struct slot last = fz.slots[n - 1];

		if (fz.slots[i].fd >= 0)
			close(fz.slots[i].fd);
		fz.slots[i] = last;
	}
	/* Fds the kernel made for fuzzed calls (DEV_OPEN, exports, ...). */
	for (int fd = 0; fd < MAX_FD; fd++)
		if (!self->open_before[fd])
			close(fd);

	for (size_t i = 0; i < ARRAY_SIZE(live_counters); i++) {
		long long want = self->before[i];

		if (want < 0)
			continue;
		EXPECT_EQ(want, mcp_counter_settles(live_counters[i], want))
			TH_LOG("counter %s", live_counters[i]);
	}
	/* The device still answers. */
	{
		struct mcp_version v = { .size = sizeof(v) };

		ASSERT_EQ(0, mcp_ioctl(self->ctx, MCP_IOC_GET_VERSION, &v));
		EXPECT_EQ(MCP_ABI_MAJOR, v.abi_major);
	}
}

/* After the fuzzing process exited, nothing holds the module. */
FIXTURE(after_fdfuzz) {
	int unused;
};

FIXTURE_SETUP(after_fdfuzz)
{
}

FIXTURE_TEARDOWN(after_fdfuzz)
{
	mcp_ensure_loaded();
}

TEST_F(after_fdfuzz, module_unloads)
{
	ASSERT_EQ(0, mcp_ensure_loaded());
	ASSERT_EQ(0, mcp_counter_settles("open_files", 0));
	ASSERT_EQ(0, mcp_unload_module(O_NONBLOCK)) TH_LOG("delete_module: %s", strerror(errno));
	EXPECT_FALSE(mcp_module_loaded());
	ASSERT_EQ(0, mcp_load_module()) TH_LOG("finit_module %s", mcp_module_path());
	ASSERT_EQ(0, mcp_wait_path(MCP_DEV_PATH, 1));
}

MCP_TEST_MAIN
