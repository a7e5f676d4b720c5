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
 * MCP_FUZZ_SEED=N and MCP_FUZZ_ITERS=N (per thread) repeat or lengthen a
 * run; the seed is always printed.  Placement ioctls are left to
 * mcp_abuse_test, which fuzzes them on the caller's own task: here a
 * random pid could move the test harness itself.
 */
#include "mcp_bo.h"
#include "mcp_dev.h"

#include <linux/dma-buf.h>
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
} fz = { .lock = PTHREAD_MUTEX_INITIALIZER };

struct fuzzer {
	__u64 rnd;
	unsigned char *buf;	/* ARG_BUF bytes, read-write */
	unsigned char *ro;	/* one read-only page */
	char *guard;		/* a page followed by an unmapped one */
	void *hole;		/* an unmapped address */
	long pg;
	unsigned long calls, failures;
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
	pthread_t th[NR_FUZZERS];
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
		ASSERT_NE(MAP_FAILED, f->buf);
		ASSERT_NE(MAP_FAILED, f->ro);
		ASSERT_NE(NULL, f->guard);
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

	for (int i = 0; i < NR_FUZZERS; i++)
		ASSERT_EQ(0, pthread_create(&th[i], NULL, fuzz_thread, &fuzzers[i]));
	for (int i = 0; i < NR_FUZZERS; i++) {
		pthread_join(th[i], NULL);
		fz.calls += fuzzers[i].calls;
		fz.failures += fuzzers[i].failures;
		for (size_t c = 0; c < ARRAY_SIZE(fuzz_cmds); c++)
			fz.ok[c] += fuzzers[i].ok[c];
	}
	for (size_t c = 0; c < ARRAY_SIZE(fuzz_cmds); c++)
		TH_LOG("cmd 0x%08lx (nr 0x%02lx): %lu succeeded", fuzz_cmds[c],
		       (unsigned long)_IOC_NR(fuzz_cmds[c]), fz.ok[c]);
	TH_LOG("%lu ioctls, %lu failed", fz.calls, fz.failures);
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
