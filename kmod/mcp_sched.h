/* SPDX-License-Identifier: GPL-2.0 */
/*
 * MCP (Model Control Protocol): graph executions and their jobs, shared by
 * mcp_sched.c (executions, dependency counting, kernel engines) and
 * mcp_worker.c (the worker fds that run the compute jobs).
 *
 * A context's struct mcp_sched is refcounted apart from the context: the
 * context holds one reference, every worker fd and every execution one
 * more, so a worker fd may outlive its context (reads then return 0).
 *
 * Locks: mcp_sched.lock, a spinlock, guards everything of the context's
 * executions, jobs and workers; nothing sleeps under it and it is only
 * taken in process context (fence callbacks and timers defer to work
 * items).  It nests inside nothing of mcp.ko but a worker's read_lock
 * and nothing nests inside it but the wait queue locks of wake_up() and
 * the workqueue pool lock of queue_work_node(), which queues a ready CPU
 * or DEVICE job under it (mcp_job_ready_locked()).
 *
 * mcp_worker.read_lock, a mutex, serialises the reads of several jobs on
 * one worker fd, which share its buffer; it is held across the wait, the
 * claim and the copy to the reader.  mcp_worker.report_lock, a mutex,
 * serialises a worker fd's chain reports, held across the copy of their
 * end times and the apply.  Neither nests in the other.
 */
#ifndef _MCP_SCHED_H
#define _MCP_SCHED_H

#include <linux/dma-fence.h>
#include <linux/hrtimer.h>
#include <linux/kref.h>
#include <linux/kthread.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/spinlock.h>
#include <linux/types.h>
#include <linux/wait.h>
#include <linux/workqueue.h>

#include <linux/mcp.h>

struct mcp_charged;
struct mcp_ctx;
struct mcp_exec;
struct mcp_graph;
struct mcp_worker;

/**
 * struct mcp_sched - the graph executions and workers of one context
 * @ref:	the context's, one per worker fd and one per execution
 * @lock:	guards the rest, see above
 * @ctx:	the context; NULL once it is closing
 * @last_exec_id: last execution id given out
 * @last_job_id: last worker job id given out
 * @execs:	executions not yet ended
 * @n_execs:	executions submitted and not ended (max_execs_in_flight),
 *		counted from before they are on @execs
 * @records:	every execution's record, oldest first: those running and
 *		the last exec_history_len ended ones
 * @n_ended:	ended records on @records
 * @jobs:	worker jobs ready and not claimed, oldest first
 * @workers:	worker fds attached
 * @node_workers: per NUMA node: workers attached
 * @node_wq:	per NUMA node: where its workers wait for jobs
 * @idle:	woken when @execs becomes empty
 * @charged:	where its CPU jobs run: workers in the submitters' cgroups
 */
struct mcp_sched {
	struct kref ref;
	spinlock_t lock;	/* see above */
	struct mcp_ctx *ctx;
	u64 last_exec_id;
	u64 last_job_id;
	struct list_head execs;
	u32 n_execs;
	struct list_head records;
	u32 n_ended;
	struct list_head jobs;
	struct list_head workers;
	u32 *node_workers;
	wait_queue_head_t *node_wq;
	wait_queue_head_t idle;
	struct mcp_charged *charged;
};

/* mcp_job.state */
enum mcp_job_state {
	MCP_JOB_WAITING,	/* for the nodes it depends on */
	MCP_JOB_QUEUED,		/* handed to its engine class, not started */
	MCP_JOB_RUNNING,
	MCP_JOB_DONE,
};

/**
 * struct mcp_job - one node of one execution
 * @exec:	its execution
 * @index:	the node's index in the graph
 * @deps_left:	nodes it still waits for
 * @state:	enum mcp_job_state
 * @attempts:	worker jobs: times a worker claimed it
 * @abandoned:	worker jobs: ended (time-out, close, a failed predecessor
 *		of a chained job) while claimed; the worker's report of it
 *		then returns -ECANCELED
 * @target:	worker jobs: NUMA node holding most of its input bytes,
 *		NUMA_NO_NODE when none is known
 * @id:		worker jobs: the job id while queued or claimed
 * @link:	worker jobs: in mcp_sched.jobs, or the claiming worker's list
 * @worker:	worker jobs: the worker that claimed it; set on a WAITING job,
 *		it is chained (claimed by a read, started when its
 *		predecessor succeeds)
 * @tid:	worker jobs: the thread whose read claimed it
 * @claim_ns:	worker jobs: when that read claimed it; reported start
 *		times are clamped to it
 * @chain_len:	worker jobs claimed by a chain read (MCP_WORKER_CHAINS):
 *		nodes of the chain it heads, itself included; the others are
 *		on no list, found from it by their single successor link
 * @work:	DEVICE jobs: runs it on the graph workqueue
 * @cpu_work:	CPU jobs: runs it on a worker of mcp_sched.charged
 * @run_node:	CPU jobs: that worker's node (mcp_charged_prepare())
 * @dev_fence:	DEVICE jobs: the DMA job's fence once submitted (a
 *		reference), NULL before
 * @dev_cb:	DEVICE jobs: the callback on @dev_fence that ends the job
 */
struct mcp_job {
	struct mcp_exec *exec;
	u32 index;
	u32 deps_left;
	u8 state;
	u8 attempts;
	bool abandoned;
	int target;
	u64 id;
	struct list_head link;
	struct mcp_worker *worker;
	pid_t tid;
	u64 claim_ns;
	u32 chain_len;
	struct work_struct work;
	struct kthread_work cpu_work;
	int run_node;
	struct dma_fence *dev_fence;
	struct dma_fence_cb dev_cb;
};

/**
 * struct mcp_worker - one worker fd
 * @sched:	its context's scheduler state (a reference)
 * @node:	the NUMA node it serves
 * @link:	in mcp_sched.workers while attached
 * @claimed:	jobs it read and has not reported
 * @attached:	false once its context closed or the fd is released
 * @read_lock:	serialises the reads of several jobs, see above
 * @out:	MCP_WORKER_READ_MAX jobs as such a read returns them, made at
 *		the first one: no allocation per read (they cost most of a
 *		read where the slab allocator debugs)
 * @jobs:	the jobs of @out
 * @chains:	reads return chains (MCP_WORKER_CHAINS)
 * @chain:	a chain as a read returns it, made at the first (@read_lock)
 * @report_lock: serialises MCP_IOC_CHAIN_DONE calls, which share @ends
 * @ends:	MCP_WORKER_CHAIN_MAX end times, made at the first report
 */
struct mcp_worker {
	struct mcp_sched *sched;
	int node;
	struct list_head link;
	struct list_head claimed;
	bool attached;
	struct mutex read_lock;	/* see above */
	struct mcp_worker_job *out;
	struct mcp_job *jobs[MCP_WORKER_READ_MAX];
	bool chains;
	struct mcp_worker_chain *chain;
	struct mutex report_lock;	/* see above */
	u64 *ends;
};

/* mcp_sched.c, for mcp_worker.c; "_locked": mcp_sched.lock held */
struct mcp_sched *mcp_sched_get_ctx(struct mcp_ctx *ctx);
void mcp_sched_put(struct mcp_sched *sched);
/* The worker job @w may claim next, or NULL. */
struct mcp_job *mcp_sched_next_job_locked(struct mcp_sched *sched,
					  struct mcp_worker *w);
/*
 * Claims @job for @w: the read that returns it fills @out but for its
 * unused tensor and parameter entries.
 */
void mcp_sched_claim_locked(struct mcp_job *job, struct mcp_worker *w,
			    struct mcp_worker_job *out);
/*
 * Claims for @w the job chained after @prev (uapi/linux/mcp.h, "struct
 * mcp_worker_register", has the rule) and fills @out; NULL when none is.
 */
struct mcp_job *mcp_sched_chain_locked(struct mcp_job *prev,
				       struct mcp_worker *w,
				       struct mcp_worker_job *out);
/*
 * Claims @head for @w and up to @max - 1 nodes chained after it as one
 * job; fills @out but for its unused @handles.  Return: the nodes.
 */
u32 mcp_sched_claim_chain_locked(struct mcp_job *head, struct mcp_worker *w,
				 u32 max, struct mcp_worker_chain *out);
/*
 * The nodes after @head in its chain leave the worker (read failed, fd
 * closed): they wait for @head again (if @head was abandoned they were
 * cancelled with it).  @head is then a job of one node, for
 * mcp_sched_unclaim_locked() and the like.
 */
void mcp_sched_chain_drop_locked(struct mcp_job *head);
/*
 * A chain's report (uapi struct mcp_chain_done), @head claimed, not
 * abandoned, 1 <= @n_ran <= its chain_len; @ends: NULL or @n_ran times.
 * Return: as mcp_sched_job_done_locked(); the claim's execution
 * reference is the caller's to drop.
 */
struct mcp_exec *mcp_sched_chain_report_locked(struct mcp_job *head,
					       int result, u32 n_ran,
					       u64 start_ns, const u64 *ends,
					       u64 now);
/*
 * A chained job not started leaves its worker (read failed, fd closed):
 * it waits for its predecessor again, not counted as an attempt.  The
 * claim's execution reference is the caller's to drop.
 */
void mcp_sched_unchain_locked(struct mcp_job *job);
/*
 * Puts a started job of a failed read back on the queue (the read's
 * first, or a chained one that a report of the one before it started),
 * not counted as an attempt; if its execution failed meanwhile it ends
 * instead.  Return: as mcp_sched_job_done_locked().
 */
struct mcp_exec *mcp_sched_unclaim_locked(struct mcp_job *job);
/*
 * A claimed job ended: @result from JOB_DONE; or its worker went away
 * (@worker_gone): re-queued the first time, -EPIPE the second, and
 * -ECANCELED if its execution failed meanwhile.  Return: the execution if it
 * ended, for mcp_sched_exec_end() once the lock is dropped, else NULL.
 */
struct mcp_exec *mcp_sched_job_done_locked(struct mcp_job *job, int result,
					   bool worker_gone);
/*
 * A worker's report of a running job with its own start and end times
 * (0: the kernel's), clamped into [the claim, @now] and [the start, @now]
 * (@now: ktime_get_ns() once per batch of reports).  Return: as
 * mcp_sched_job_done_locked().
 */
struct mcp_exec *mcp_sched_job_report_locked(struct mcp_job *job, int result,
					     u64 start_ns, u64 end_ns, u64 now);
/*
 * Ends @exec once mcp_sched.lock is dropped; process context.  Every
 * claimed job holds a reference on its execution, dropped with
 * mcp_sched_exec_put() (outside the lock) when the job leaves its worker.
 */
void mcp_sched_exec_end(struct mcp_exec *exec);
/* A reference on @job's execution, so that @job outlives its report. */
struct mcp_exec *mcp_sched_exec_get_locked(struct mcp_job *job);
void mcp_sched_exec_put(struct mcp_exec *exec);
/* Workers came or went: jobs may now route to another node. */
void mcp_sched_wake_all_locked(struct mcp_sched *sched);

#endif /* _MCP_SCHED_H */
