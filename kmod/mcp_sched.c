// SPDX-License-Identifier: GPL-2.0
/*
 * MCP (Model Control Protocol): graph executions.  MCP_IOC_GRAPH_EXEC
 * runs a validated graph (mcp_graph.c) with some buffers rebound, after
 * an optional in-fence, and returns a sync_file out-fence;
 * MCP_IOC_GRAPH_STATUS reports an execution and its nodes.  Each
 * execution counts, per node, the nodes it still waits for; a node whose
 * count reaches zero is a ready job for its engine class (CPU, DEVICE, or
 * WORKER: the context's job queue, claimed through mcp_worker.c).
 * Documentation/graph-scheduling.rst, "Executing" to "Closing", has the
 * engine classes, the routing of worker jobs, chains, what a failure, a
 * deadline or a close does, and the records of ended executions.
 *
 * Locks: mcp_sched.lock (mcp_sched.h) around every state change; never
 * held across copy_to_user(), a sleep or a fence signal.  Fence callbacks
 * and timers only queue work items.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/dma-fence.h>
#include <linux/file.h>
#include <linux/kernel.h>
#include <linux/module.h>
#include <linux/nodemask.h>
#include <linux/overflow.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/sync_file.h>
#include <linux/topology.h>
#include <linux/uaccess.h>

#include "mcp_bo.h"
#include "mcp_charge.h"
#include "mcp_ctx.h"
#include "mcp_dma.h"
#include "mcp_graph.h"
#include "mcp_internal.h"
#include "mcp_route.h"
#include "mcp_pci.h"
#include "mcp_sched.h"
#include "mcp_trace.h"

/* Bytes a kernel job handles between two reschedules and stop checks. */
#define MCP_SCHED_SLICE		(256U << 10)

/**
 * struct mcp_exec_record - what MCP_IOC_GRAPH_STATUS reports
 * @link:	in mcp_sched.records
 * @id:		the execution's id
 * @graph:	the graph's handle
 * @n_nodes:	entries of @nodes
 * @ended:	the execution ended
 * @state:	enum mcp_graph_state
 * @result:	0 or the execution's negative errno
 * @failed_node: the first node that failed, -1 when none
 * @submit_ns:	when it was submitted
 * @end_ns:	when it ended, 0 before
 * @nodes:	per node
 */
struct mcp_exec_record {
	struct list_head link;
	u64 id;
	u32 graph;
	u32 n_nodes;
	bool ended;
	u32 state;
	s32 result;
	s32 failed_node;
	u64 submit_ns;
	u64 end_ns;
	struct mcp_graph_node_status nodes[];
};

/* The out-fence; it may outlive the module's fds in a sync_file. */
struct mcp_graph_fence {
	struct dma_fence base;
	spinlock_t lock;	/* the fence's */
};

/**
 * struct mcp_exec - one MCP_IOC_GRAPH_EXEC
 * @ref:	its own until it ends, one per claimed worker job, one per
 *		pending time-out work
 * @sched:	its context's scheduler state (a reference)
 * @graph:	the graph (a reference until the last reference on @ref: its
 *		chain links outlive the end, and the jobs go back to it)
 * @rec:	its record; owned by mcp_sched.records, written until it ends
 * @link:	in mcp_sched.execs until it ends
 * @bos:	per buffer, the BO it runs on (a reference each until it ends)
 * @handles:	per buffer, that BO's handle, for worker jobs
 * @bo_node:	the NUMA node of every BO of @bos (NUMA_NO_NODE included),
 *		or MCP_EXEC_BO_NODES_MIXED: then each job's target is counted
 * @fence:	the out-fence (a reference)
 * @in_fence:	fence waited for before it starts, or NULL
 * @in_cb:	callback on @in_fence
 * @start_work:	starts it once @in_fence signalled
 * @timer:	its deadline
 * @timeout_work: stops it at its deadline
 * @deadline_ns: absolute ktime_get_ns()
 * @stop:	-ETIMEDOUT or -ECANCELED once stopped: running kernel jobs
 *		stop at their next slice
 * @started:	its first jobs went out (or it ended before)
 * @ended:	it ended: set once, under the lock
 * @running:	kernel jobs queued or running and worker jobs claimed
 * @left:	jobs not ended
 * @nops:	NOP jobs ready, run by mcp_exec_run_nops_locked()
 * @jobs:	per node
 */
struct mcp_exec {
	struct kref ref;
	struct mcp_sched *sched;
	struct mcp_graph *graph;
	struct mcp_exec_record *rec;
	struct list_head link;
	struct mcp_bo **bos;
	u32 *handles;
	int bo_node;
	struct mcp_graph_fence *fence;
	struct dma_fence *in_fence;
	struct dma_fence_cb in_cb;
	struct work_struct start_work;
	struct hrtimer timer;
	struct work_struct timeout_work;
	u64 deadline_ns;
	int stop;
	bool started;
	bool ended;
	u32 running;
	u32 left;
	struct list_head nops;
	struct mcp_job *jobs;
};

/* mcp_exec.bo_node: its BOs are on different nodes. */
#define MCP_EXEC_BO_NODES_MIXED	(-2)

/* DEVICE jobs (submitting, ending): unbound, queued on their node. */
static struct workqueue_struct *mcp_graph_wq;
/*
 * Starts and time-outs, apart from the jobs: however many jobs the
 * contexts queue, an execution starts and times out when it should.
 */
static struct workqueue_struct *mcp_graph_ctl_wq;

/* Fences */

static const char *mcp_graph_fence_driver_name(struct dma_fence *fence)
{
	return KBUILD_MODNAME;
}

static const char *mcp_graph_fence_timeline_name(struct dma_fence *fence)
{
	return "graph";
}

/* Each fence holds a module reference for its ops (as DMA jobs do). */
static void mcp_graph_fence_release(struct dma_fence *fence)
{
	struct mcp_graph_fence *gf = container_of(fence, struct mcp_graph_fence,
						  base);

	kfree_rcu(gf, base.rcu);
	module_put(THIS_MODULE);
}

static const struct dma_fence_ops mcp_graph_fence_ops = {
	.get_driver_name = mcp_graph_fence_driver_name,
	.get_timeline_name = mcp_graph_fence_timeline_name,
	.release = mcp_graph_fence_release,
};

/* Scheduler state of a context */

static void mcp_sched_free_records(struct list_head *records)
{
	struct mcp_exec_record *rec, *next;

	list_for_each_entry_safe(rec, next, records, link) {
		list_del(&rec->link);
		kvfree(rec);
	}
}

static void mcp_sched_release(struct kref *ref)
{
	struct mcp_sched *sched = container_of(ref, struct mcp_sched, ref);

	mcp_sched_free_records(&sched->records);
	mcp_charged_free(sched->charged);
	kfree(sched->node_wq);
	kfree(sched->node_workers);
	kfree(sched);
}

void mcp_sched_put(struct mcp_sched *sched)
{
	kref_put(&sched->ref, mcp_sched_release);
}

static struct mcp_sched *mcp_sched_alloc(struct mcp_ctx *ctx)
{
	struct mcp_sched *sched;
	int node;

	sched = kzalloc(sizeof(*sched), GFP_KERNEL_ACCOUNT);
	if (!sched)
		return NULL;
	sched->node_workers = kcalloc(nr_node_ids, sizeof(u32),
				      GFP_KERNEL_ACCOUNT);
	sched->node_wq = kcalloc(nr_node_ids, sizeof(wait_queue_head_t),
				 GFP_KERNEL_ACCOUNT);
	sched->charged = mcp_charged_alloc();
	if (!sched->node_workers || !sched->node_wq || !sched->charged) {
		mcp_charged_free(sched->charged);
		kfree(sched->node_wq);
		kfree(sched->node_workers);
		kfree(sched);
		return NULL;
	}
	kref_init(&sched->ref);
	spin_lock_init(&sched->lock);
	sched->ctx = ctx;
	INIT_LIST_HEAD(&sched->execs);
	INIT_LIST_HEAD(&sched->records);
	INIT_LIST_HEAD(&sched->jobs);
	INIT_LIST_HEAD(&sched->workers);
	for (node = 0; node < nr_node_ids; node++)
		init_waitqueue_head(&sched->node_wq[node]);
	init_waitqueue_head(&sched->idle);
	return sched;
}

/**
 * mcp_sched_get_ctx() - the context's scheduler state, made on first use
 * @ctx:	the context; an ioctl on it is running, so it is open
 *
 * Return: the state with a reference for the caller, or NULL without
 * memory.
 */
struct mcp_sched *mcp_sched_get_ctx(struct mcp_ctx *ctx)
{
	/* Pairs with cmpxchg(): a state seen is fully initialised. */
	struct mcp_sched *sched = smp_load_acquire(&ctx->sched);
	struct mcp_sched *old;

	if (!sched) {
		sched = mcp_sched_alloc(ctx);
		if (!sched)
			return NULL;
		old = cmpxchg(&ctx->sched, NULL, sched);
		if (old) {
			mcp_sched_put(sched);
			sched = old;
		}
	}
	kref_get(&sched->ref);
	return sched;
}

/* Routing of worker jobs */

static_assert(MCP_ROUTE_NO_NODE == NUMA_NO_NODE);

static int mcp_sched_distance(int a, int b, const void *arg)
{
	return node_distance(a, b);
}

/*
 * The node whose workers take a job for @target (mcp_route_node(), the
 * rule libmcp's userspace executor follows too); NUMA_NO_NODE when there
 * is no worker.
 */
static int mcp_sched_route_locked(struct mcp_sched *sched, int target)
{
	lockdep_assert_held(&sched->lock);

	return mcp_route_node(target, sched->node_workers, nr_node_ids,
			      mcp_sched_distance, NULL);
}

static void mcp_sched_wake_locked(struct mcp_sched *sched, int target)
{
	int node = mcp_sched_route_locked(sched, target);

	lockdep_assert_held(&sched->lock);

	if (node != NUMA_NO_NODE)
		wake_up(&sched->node_wq[node]);
}

void mcp_sched_wake_all_locked(struct mcp_sched *sched)
{
	int node;

	lockdep_assert_held(&sched->lock);

	for (node = 0; node < nr_node_ids; node++)
		wake_up_all(&sched->node_wq[node]);
}

struct mcp_job *mcp_sched_next_job_locked(struct mcp_sched *sched,
					  struct mcp_worker *w)
{
	struct mcp_job *job;

	lockdep_assert_held(&sched->lock);

	list_for_each_entry(job, &sched->jobs, link)
		if (job->target == NUMA_NO_NODE ||
		    mcp_sched_route_locked(sched, job->target) == w->node)
			return job;
	return NULL;
}

/*
 * The node holding most of the job's input bytes (mcp_route_target():
 * ties the lowest, NUMA_NO_NODE when none is known).
 */
static int mcp_job_target(struct mcp_exec *exec, struct mcp_job *job)
{
	const struct mcp_graph *graph = exec->graph;
	const struct mcp_graph_node *n = &graph->nodes[job->index];
	int nodes[MCP_GRAPH_MAX_INPUTS];
	u64 bytes[MCP_GRAPH_MAX_INPUTS];
	u32 k;

	/* All on one node (the usual case): no bytes to count per job. */
	if (exec->bo_node != MCP_EXEC_BO_NODES_MIXED)
		return n->n_inputs ? exec->bo_node : NUMA_NO_NODE;
	for (k = 0; k < n->n_inputs; k++) {
		u32 t = n->inputs[k];

		nodes[k] = exec->bos[graph->tensors[t].buffer]->node;
		bytes[k] = graph->tensor_bytes[t];
	}
	return mcp_route_target(nodes, bytes, n->n_inputs);
}

/* Job state changes, all under mcp_sched.lock */

static void mcp_exec_fail_locked(struct mcp_exec *exec, int error,
				 s32 node);

static void mcp_job_trace_done(struct mcp_exec *exec, struct mcp_job *job)
{
	const struct mcp_graph_node_status *st = &exec->rec->nodes[job->index];

	trace_mcp_graph_job_done(exec->rec->id, job->index,
				 exec->graph->nodes[job->index].op, st->engine,
				 st->result,
				 st->start_ns ? st->end_ns - st->start_ns : 0);
}

/* Hands a job whose dependencies are done to its engine class. */
static void mcp_job_ready_locked(struct mcp_exec *exec, struct mcp_job *job)
{
	const struct mcp_graph *graph = exec->graph;
	const struct mcp_graph_node *n = &graph->nodes[job->index];
	struct mcp_sched *sched = exec->sched;
	int node = NUMA_NO_NODE;

	lockdep_assert_held(&exec->sched->lock);

	job->state = MCP_JOB_QUEUED;
	exec->rec->nodes[job->index].engine = n->engine;
	mcp_counter_inc(MCP_CTR_GRAPH_JOBS_TOTAL);
	trace_mcp_graph_job_submit(exec->rec->id, job->index, n->op,
				   n->engine);

	if (n->engine == MCP_GRAPH_ENGINE_WORKER) {
		job->target = mcp_job_target(exec, job);
		job->id = ++sched->last_job_id;
		list_add_tail(&job->link, &sched->jobs);
		mcp_sched_wake_locked(sched, job->target);
		return;
	}

	exec->running++;
	if (n->op == MCP_OP_NOP) {
		/* Nothing to run: ended here by mcp_exec_run_nops_locked(). */
		list_add_tail(&job->link, &exec->nops);
		return;
	}
	if (n->engine == MCP_GRAPH_ENGINE_CPU &&
	    mcp_charged_queue(sched->charged, job->run_node, &job->cpu_work))
		return;
	if (n->n_outputs)
		node = exec->bos[graph->tensors[n->outputs[0]].buffer]->node;
	queue_work_node(node, mcp_graph_wq, &job->work);
}

/*
 * A chained job's predecessor succeeded: it runs on its worker from the
 * predecessor's end, @start_ns (no clock read: they cost microseconds
 * where the clocksource is emulated).
 */
static void mcp_job_start_chained_locked(struct mcp_exec *exec,
					 struct mcp_job *job, u64 start_ns)
{
	const struct mcp_graph_node *n = &exec->graph->nodes[job->index];
	struct mcp_graph_node_status *st = &exec->rec->nodes[job->index];

	lockdep_assert_held(&exec->sched->lock);

	mcp_counter_inc(MCP_CTR_GRAPH_JOBS_TOTAL);
	trace_mcp_graph_job_submit(exec->rec->id, job->index, n->op,
				   n->engine);
	job->state = MCP_JOB_RUNNING;
	job->attempts++;
	exec->running++;
	st->numa_node = job->worker->node;
	st->worker_tid = job->tid;
	st->start_ns = start_ns;
	trace_mcp_graph_job_start(exec->rec->id, job->index, n->op, n->engine,
				  st->numa_node, raw_smp_processor_id(),
				  st->worker_tid);
}

/* Ends @job with @result; its successors may become ready. */
static void __mcp_job_end_locked(struct mcp_exec *exec, struct mcp_job *job,
				 int result)
{
	struct mcp_graph_node_status *st = &exec->rec->nodes[job->index];
	const struct mcp_graph *graph = exec->graph;
	bool ran = job->state == MCP_JOB_RUNNING;
	u32 i;

	lockdep_assert_held(&exec->sched->lock);

	if (job->state == MCP_JOB_RUNNING ||
	    (job->state == MCP_JOB_QUEUED &&
	     st->engine != MCP_GRAPH_ENGINE_WORKER))
		exec->running--;
	if (job->state == MCP_JOB_RUNNING) {
		/* A worker's report may have set its own end time. */
		if (!st->end_ns)
			st->end_ns = ktime_get_ns();
		mcp_job_trace_done(exec, job);
	}
	job->state = MCP_JOB_DONE;
	st->result = result;
	exec->left--;

	/*
	 * The failed node: the first to fail, or one stopped while running;
	 * not a job cancelled because the execution had failed already.
	 */
	if (result) {
		mcp_exec_fail_locked(exec, result,
				     !exec->rec->result ||
				     (ran && result == exec->stop) ?
				     job->index : -1);
	} else if (!exec->rec->result) {
		for (i = graph->succ_start[job->index];
		     i < graph->succ_start[job->index + 1]; i++) {
			struct mcp_job *succ = &exec->jobs[graph->succ[i]];

			if (--succ->deps_left)
				continue;
			if (succ->worker)
				mcp_job_start_chained_locked(exec, succ,
							     st->end_ns);
			else
				mcp_job_ready_locked(exec, succ);
		}
	}
}

/*
 * NOP jobs of the CPU class that became ready: run where the scheduler
 * runs, in a loop (a chain of them would recurse), so a chain of empty
 * nodes costs dependency counting only.
 */
static void mcp_exec_run_nops_locked(struct mcp_exec *exec)
{
	struct mcp_job *job;

	lockdep_assert_held(&exec->sched->lock);

	while ((job = list_first_entry_or_null(&exec->nops, struct mcp_job,
					       link))) {
		struct mcp_graph_node_status *st = &exec->rec->nodes[job->index];

		list_del_init(&job->link);
		if (exec->rec->result) {
			__mcp_job_end_locked(exec, job, -ECANCELED);
			continue;
		}
		job->state = MCP_JOB_RUNNING;
		st->start_ns = ktime_get_ns();
		st->numa_node = numa_node_id();
		trace_mcp_graph_job_start(exec->rec->id, job->index, MCP_OP_NOP,
					  MCP_GRAPH_ENGINE_CPU, st->numa_node,
					  raw_smp_processor_id(), 0);
		__mcp_job_end_locked(exec, job, 0);
	}
}

static bool mcp_exec_check_end_locked(struct mcp_exec *exec);

/* Ends @job with @result; true when that ended the execution. */
static bool mcp_job_end_locked(struct mcp_exec *exec, struct mcp_job *job,
			       int result)
{
	lockdep_assert_held(&exec->sched->lock);

	__mcp_job_end_locked(exec, job, result);
	mcp_exec_run_nops_locked(exec);
	return mcp_exec_check_end_locked(exec);
}

/*
 * Fails the execution: the first error and failing node are kept; every
 * job not started ends with -ECANCELED (kernel jobs already queued see
 * the failure when their work item runs).
 */
static void mcp_exec_fail_locked(struct mcp_exec *exec, int error, s32 node)
{
	struct mcp_exec_record *rec = exec->rec;
	u32 i;

	lockdep_assert_held(&exec->sched->lock);

	if (!rec->result)
		rec->result = error;
	if (node >= 0 && rec->failed_node < 0)
		rec->failed_node = node;

	for (i = 0; i < rec->n_nodes; i++) {
		struct mcp_job *job = &exec->jobs[i];

		if (job->state == MCP_JOB_WAITING ||
		    (job->state == MCP_JOB_QUEUED &&
		     rec->nodes[i].engine == MCP_GRAPH_ENGINE_WORKER)) {
			if (job->state == MCP_JOB_QUEUED)
				list_del_init(&job->link);
			else if (job->worker)
				/* Chained: claimed until its worker reports it. */
				job->abandoned = true;
			job->state = MCP_JOB_DONE;
			rec->nodes[i].result = -ECANCELED;
			exec->left--;
		}
	}
}

/*
 * Stop: claimed worker jobs and DEVICE jobs on their engine are
 * abandoned, ending with @error now.
 */
static void mcp_exec_abandon_locked(struct mcp_exec *exec, int error)
{
	struct mcp_exec_record *rec = exec->rec;
	u32 i;

	lockdep_assert_held(&exec->sched->lock);

	for (i = 0; i < rec->n_nodes; i++) {
		struct mcp_job *job = &exec->jobs[i];

		if (job->state != MCP_JOB_RUNNING ||
		    (!job->worker && !job->dev_fence))
			continue;
		job->abandoned = true;
		exec->running--;
		exec->left--;
		job->state = MCP_JOB_DONE;
		rec->nodes[i].result = error;
		rec->nodes[i].end_ns = ktime_get_ns();
		mcp_job_trace_done(exec, job);
		if (rec->failed_node < 0)
			rec->failed_node = i;
	}
}

/* True when the execution has now ended (and was not before). */
static bool mcp_exec_check_end_locked(struct mcp_exec *exec)
{
	lockdep_assert_held(&exec->sched->lock);

	if (exec->started && !exec->left && !exec->ended) {
		exec->ended = true;
		return true;
	}
	return false;
}

/* For mcp_worker.c */

/*
 * What a read returns for @job: every field but the unused entries of
 * @inputs, @outputs and @param, which the reader of one job zeroed.
 */
static void mcp_job_fill_locked(struct mcp_exec *exec, struct mcp_job *job,
				struct mcp_worker_job *out)
{
	const struct mcp_graph *graph = exec->graph;
	const struct mcp_graph_node *n = &graph->nodes[job->index];
	u32 k;

	lockdep_assert_held(&exec->sched->lock);

	out->job_id = job->id;
	out->exec_id = exec->rec->id;
	out->graph = exec->rec->graph;
	out->node = job->index;
	out->op = n->op;
	out->n_inputs = n->n_inputs;
	out->n_outputs = n->n_outputs;
	out->param_len = n->param_len;
	out->flags = 0;
	out->reserved = 0;
	for (k = 0; k < n->n_inputs + n->n_outputs; k++) {
		bool in = k < n->n_inputs;
		u32 ti = in ? n->inputs[k] : n->outputs[k - n->n_inputs];
		const struct mcp_graph_tensor *t = &graph->tensors[ti];
		struct mcp_worker_tensor *wt = in ? &out->inputs[k] :
					       &out->outputs[k - n->n_inputs];

		wt->handle = exec->handles[t->buffer];
		wt->dtype = t->dtype;
		wt->rank = t->rank;
		wt->layout = t->layout;
		wt->reserved = 0;
		wt->offset = t->offset;
		memcpy(wt->dims, t->dims, sizeof(wt->dims));
	}
	memcpy(out->param, graph->blob + n->param_offset, n->param_len);
}

/* Claims @job for @w: it runs from now on the reader's thread. */
static void __mcp_sched_claim_locked(struct mcp_job *job, struct mcp_worker *w)
{
	struct mcp_exec *exec = job->exec;
	const struct mcp_graph_node *n = &exec->graph->nodes[job->index];
	struct mcp_graph_node_status *st = &exec->rec->nodes[job->index];

	lockdep_assert_held(&job->exec->sched->lock);

	list_move_tail(&job->link, &w->claimed);
	job->worker = w;
	job->state = MCP_JOB_RUNNING;
	job->attempts++;
	job->tid = task_pid_vnr(current);
	job->claim_ns = ktime_get_ns();
	exec->running++;
	kref_get(&exec->ref);

	st->numa_node = w->node;
	st->worker_tid = job->tid;
	st->start_ns = job->claim_ns;
	trace_mcp_graph_job_start(exec->rec->id, job->index, n->op, n->engine,
				  w->node, raw_smp_processor_id(),
				  st->worker_tid);
}

void mcp_sched_claim_locked(struct mcp_job *job, struct mcp_worker *w,
			    struct mcp_worker_job *out)
{
	lockdep_assert_held(&job->exec->sched->lock);

	__mcp_sched_claim_locked(job, w);
	mcp_job_fill_locked(job->exec, job, out);
}

/*
 * The job chained after @prev for @w, by the rule of uapi struct
 * mcp_worker_register, made @w's (it starts when @prev succeeds); NULL
 * when there is none.  It is on no list: the caller files it.
 */
static struct mcp_job *mcp_sched_chain_next_locked(struct mcp_job *prev,
						   struct mcp_worker *w)
{
	struct mcp_exec *exec = prev->exec;
	u32 next = exec->graph->chain_next[prev->index];
	struct mcp_job *job;
	int target;

	lockdep_assert_held(&prev->exec->sched->lock);

	if (next == MCP_GRAPH_NO_CHAIN || exec->rec->result || exec->stop)
		return NULL;
	job = &exec->jobs[next];
	/* One dependency left: @prev's, as @prev has not ended. */
	if (job->state != MCP_JOB_WAITING || job->worker ||
	    job->deps_left != 1)
		return NULL;
	target = mcp_job_target(exec, job);
	if (target != NUMA_NO_NODE &&
	    mcp_sched_route_locked(exec->sched, target) != w->node)
		return NULL;

	job->target = target;
	job->worker = w;
	job->tid = prev->tid;
	/* Claimed by the same read. */
	job->claim_ns = prev->claim_ns;
	return job;
}

struct mcp_job *mcp_sched_chain_locked(struct mcp_job *prev,
				       struct mcp_worker *w,
				       struct mcp_worker_job *out)
{
	struct mcp_job *job = mcp_sched_chain_next_locked(prev, w);

	lockdep_assert_held(&prev->exec->sched->lock);

	if (!job)
		return NULL;
	job->id = ++job->exec->sched->last_job_id;
	list_add_tail(&job->link, &w->claimed);
	kref_get(&job->exec->ref);
	mcp_job_fill_locked(job->exec, job, out);
	out->flags = MCP_WORKER_JOB_CHAINED;
	return job;
}

/* The node after @job in its chain. */
static struct mcp_job *mcp_chain_succ(struct mcp_job *job)
{
	return &job->exec->jobs[job->exec->graph->chain_next[job->index]];
}

/*
 * mcp_sched_chain_next_locked() in a loop for an execution whose BOs are
 * all on one node: every node with inputs has that target, so the route
 * is looked up once, and the loop is a few loads and stores per node.
 * Return: the nodes in @nodes, @head's included.
 */
static u32 mcp_chain_claim_uniform_locked(struct mcp_job *head,
					  struct mcp_worker *w, u32 max,
					  u32 *nodes)
{
	struct mcp_exec *exec = head->exec;
	const struct mcp_graph *graph = exec->graph;
	int node = exec->bo_node;
	u32 at = head->index, next, n = 1;

	lockdep_assert_held(&head->exec->sched->lock);

	if (exec->rec->result || exec->stop ||
	    (node != NUMA_NO_NODE &&
	     mcp_sched_route_locked(exec->sched, node) != w->node))
		return n;
	while (n < max && (next = graph->chain_next[at]) != MCP_GRAPH_NO_CHAIN) {
		struct mcp_job *job = &exec->jobs[next];

		/* One dependency left: that of the node before it. */
		if (job->state != MCP_JOB_WAITING || job->worker ||
		    job->deps_left != 1)
			break;
		job->target = graph->nodes[next].n_inputs ? node : NUMA_NO_NODE;
		job->worker = w;
		job->tid = head->tid;
		/* Claimed by the same read. */
		job->claim_ns = head->claim_ns;
		nodes[n++] = next;
		at = next;
	}
	return n;
}

u32 mcp_sched_claim_chain_locked(struct mcp_job *head, struct mcp_worker *w,
				 u32 max, struct mcp_worker_chain *out)
{
	struct mcp_exec *exec = head->exec;
	struct mcp_job *job = head;
	u32 n = 1;

	lockdep_assert_held(&head->exec->sched->lock);

	__mcp_sched_claim_locked(head, w);
	out->nodes[0] = head->index;
	if (exec->bo_node != MCP_EXEC_BO_NODES_MIXED)
		n = mcp_chain_claim_uniform_locked(head, w, max, out->nodes);
	else
		while (n < max && (job = mcp_sched_chain_next_locked(job, w)))
			out->nodes[n++] = job->index;
	head->chain_len = n;

	out->job_id = head->id;
	out->exec_id = exec->rec->id;
	out->graph = exec->rec->graph;
	out->n_nodes = n;
	out->n_buffers = exec->graph->hdr.n_buffers;
	out->flags = 0;
	memcpy(out->handles, exec->handles,
	       out->n_buffers * sizeof(out->handles[0]));
	return n;
}

/*
 * The @n nodes of a chain from @job leave their worker: those not ended
 * wait for their predecessor again, as any job; cancelled ones stay so.
 */
static void mcp_chain_release_locked(struct mcp_job *job, u32 n)
{
	lockdep_assert_held(&job->exec->sched->lock);

	while (n--) {
		job->worker = NULL;
		job->target = NUMA_NO_NODE;
		if (n)
			job = mcp_chain_succ(job);
	}
}

void mcp_sched_chain_drop_locked(struct mcp_job *head)
{
	lockdep_assert_held(&head->exec->sched->lock);

	/*
	 * Abandoned: the nodes after it were cancelled with it and nothing
	 * reads their worker again, so there is nothing to walk.
	 */
	if (head->chain_len > 1 && !head->abandoned)
		mcp_chain_release_locked(mcp_chain_succ(head),
					 head->chain_len - 1);
	head->chain_len = 0;
}

/*
 * Ends up to @n nodes of a chain from *@job, each with success at its
 * time in @ends, and starts the next one, as __mcp_job_end_locked() and
 * mcp_job_start_chained_locked() would, without what they check (a node
 * of a chain has one successor, which is chained) or trace: so it stops
 * at once while a tracepoint is on or the execution failed.  *@job
 * becomes the first node not ended.  Return: the nodes ended.
 */
static u32 mcp_chain_pass_locked(struct mcp_exec *exec, struct mcp_job **job,
				 u32 n, const u64 *ends, u64 now)
{
	struct mcp_graph_node_status *nodes = exec->rec->nodes;
	const u32 *chain_next = exec->graph->chain_next;
	struct mcp_job *cur = *job, *jobs = exec->jobs;
	u32 i;

	lockdep_assert_held(&exec->sched->lock);

	if (exec->rec->result || trace_mcp_graph_job_submit_enabled() ||
	    trace_mcp_graph_job_start_enabled() ||
	    trace_mcp_graph_job_done_enabled())
		return 0;
	for (i = 0; i < n; i++) {
		struct mcp_graph_node_status *st = &nodes[cur->index];
		struct mcp_job *next = &jobs[chain_next[cur->index]];
		struct mcp_graph_node_status *nst = &nodes[next->index];
		u64 end = ends && ends[i] ? ends[i] : now;

		st->end_ns = clamp(end, st->start_ns, now);
		st->result = 0;
		cur->state = MCP_JOB_DONE;
		nst->numa_node = st->numa_node;
		nst->worker_tid = next->tid;
		nst->start_ns = st->end_ns;
		next->deps_left--;
		next->state = MCP_JOB_RUNNING;
		next->attempts++;
		cur->worker = NULL;
		cur = next;
	}
	/* One ended and one started per node: exec->running is the same. */
	exec->left -= n;
	if (n)
		mcp_counter_add(MCP_CTR_GRAPH_JOBS_TOTAL, n);
	*job = cur;
	return n;
}

struct mcp_exec *mcp_sched_chain_report_locked(struct mcp_job *head,
					       int result, u32 n_ran,
					       u64 start_ns, const u64 *ends,
					       u64 now)
{
	struct mcp_exec *exec = head->exec;
	struct mcp_exec_record *rec = exec->rec;
	struct mcp_job *job = head, *next;
	u32 i, len = head->chain_len;

	lockdep_assert_held(&head->exec->sched->lock);

	head->chain_len = 0;
	list_del_init(&head->link);
	if (start_ns)
		rec->nodes[head->index].start_ns = clamp(start_ns,
							 head->claim_ns, now);
	/* The nodes before the last, unless traced: a few stores each. */
	i = mcp_chain_pass_locked(exec, &job, n_ran - 1, ends, now);
	for (; i < n_ran; i++, job = next) {
		struct mcp_graph_node_status *st = &rec->nodes[job->index];
		bool last = i == n_ran - 1;
		u64 end = ends && ends[i] ? ends[i] : now;

		/* Cancelled while the chain ran: so are the nodes after it. */
		if (job->state != MCP_JOB_RUNNING) {
			mcp_chain_release_locked(job, len - i);
			break;
		}
		next = i + 1 < len ? mcp_chain_succ(job) : NULL;
		/* The nodes not run: their predecessor's end makes them ready. */
		if (last && next)
			mcp_chain_release_locked(next, len - n_ran);
		job->worker = NULL;
		st->end_ns = clamp(end, st->start_ns, now);
		__mcp_job_end_locked(exec, job, last ? result : 0);
	}
	mcp_exec_run_nops_locked(exec);
	return mcp_exec_check_end_locked(exec) ? exec : NULL;
}

void mcp_sched_unchain_locked(struct mcp_job *job)
{
	lockdep_assert_held(&job->exec->sched->lock);

	list_del_init(&job->link);
	job->worker = NULL;
	job->target = NUMA_NO_NODE;
}

struct mcp_exec *mcp_sched_unclaim_locked(struct mcp_job *job)
{
	struct mcp_exec *exec = job->exec;
	struct mcp_graph_node_status *st = &exec->rec->nodes[job->index];

	lockdep_assert_held(&job->exec->sched->lock);

	/* Failed meanwhile: nobody is to run it any more. */
	if (exec->rec->result) {
		list_del_init(&job->link);
		job->worker = NULL;
		return mcp_job_end_locked(exec, job, -ECANCELED) ? exec : NULL;
	}
	list_move(&job->link, &exec->sched->jobs);
	job->worker = NULL;
	job->state = MCP_JOB_QUEUED;
	job->attempts--;
	exec->running--;
	st->numa_node = -1;
	st->worker_tid = 0;
	st->start_ns = 0;
	mcp_sched_wake_locked(exec->sched, job->target);
	/* The claim's execution reference is the caller's to drop. */
	return NULL;
}

struct mcp_exec *mcp_sched_job_done_locked(struct mcp_job *job, int result,
					   bool worker_gone)
{
	struct mcp_exec *exec = job->exec;
	struct mcp_graph_node_status *st = &exec->rec->nodes[job->index];

	lockdep_assert_held(&job->exec->sched->lock);

	job->worker = NULL;
	if (worker_gone && !exec->rec->result && job->attempts < 2) {
		/* Re-queued once, under a new id. */
		list_move_tail(&job->link, &exec->sched->jobs);
		job->state = MCP_JOB_QUEUED;
		job->id = ++exec->sched->last_job_id;
		exec->running--;
		st->numa_node = -1;
		st->worker_tid = 0;
		st->start_ns = 0;
		mcp_sched_wake_locked(exec->sched, job->target);
		return NULL;
	}
	if (worker_gone)
		result = exec->rec->result ? -ECANCELED : -EPIPE;
	list_del_init(&job->link);
	return mcp_job_end_locked(exec, job, result) ? exec : NULL;
}

struct mcp_exec *mcp_sched_job_report_locked(struct mcp_job *job, int result,
					     u64 start_ns, u64 end_ns, u64 now)
{
	struct mcp_graph_node_status *st = &job->exec->rec->nodes[job->index];

	lockdep_assert_held(&job->exec->sched->lock);

	if (start_ns)
		st->start_ns = clamp(start_ns, job->claim_ns, now);
	st->end_ns = end_ns ? clamp(end_ns, st->start_ns, now) : now;
	return mcp_sched_job_done_locked(job, result, false);
}

/* Execution life cycle */

/* The last reference went: the jobs are unused, the graph may go. */
static void mcp_exec_release(struct kref *ref)
{
	struct mcp_exec *exec = container_of(ref, struct mcp_exec, ref);
	struct mcp_graph *graph = exec->graph;

	mcp_sched_put(exec->sched);
	kvfree(xchg(&graph->spare_jobs, exec->jobs));
	mcp_graph_put(graph);
	kfree(exec);
}

struct mcp_exec *mcp_sched_exec_get_locked(struct mcp_job *job)
{
	lockdep_assert_held(&job->exec->sched->lock);

	kref_get(&job->exec->ref);
	return job->exec;
}

void mcp_sched_exec_put(struct mcp_exec *exec)
{
	kref_put(&exec->ref, mcp_exec_release);
}

/*
 * The execution ended (mcp_exec_check_end_locked() said so): its record
 * is final before the fence signals; what it holds is dropped after.
 */
void mcp_sched_exec_end(struct mcp_exec *exec)
{
	struct mcp_sched *sched = exec->sched;
	struct mcp_exec_record *rec = exec->rec, *old, *next;
	u32 keep = READ_ONCE(mcp_graph_knobs.exec_history_len);
	LIST_HEAD(evicted);
	u32 i;

	hrtimer_cancel(&exec->timer);

	spin_lock(&sched->lock);
	rec->ended = true;
	rec->end_ns = ktime_get_ns();
	rec->state = rec->result ? MCP_GRAPH_STATE_FAILED :
				   MCP_GRAPH_STATE_DONE;
	sched->n_ended++;
	list_for_each_entry_safe(old, next, &sched->records, link) {
		if (sched->n_ended <= keep)
			break;
		if (old->ended) {
			list_move_tail(&old->link, &evicted);
			sched->n_ended--;
		}
	}
	list_del_init(&exec->link);
	sched->n_execs--;
	if (list_empty(&sched->execs))
		wake_up_all(&sched->idle);
	spin_unlock(&sched->lock);

	/* One of this graph's goes back to it, for the next execution. */
	list_for_each_entry(old, &evicted, link) {
		if (old->graph == rec->graph && old->n_nodes == rec->n_nodes) {
			list_del(&old->link);
			kvfree(xchg(&exec->graph->spare_rec, old));
			break;
		}
	}
	mcp_sched_free_records(&evicted);

	if (rec->result)
		dma_fence_set_error(&exec->fence->base, rec->result);
	dma_fence_signal(&exec->fence->base);
	dma_fence_put(&exec->fence->base);
	if (exec->in_fence)
		dma_fence_put(exec->in_fence);
	for (i = 0; i < exec->graph->hdr.n_buffers; i++)
		mcp_bo_put(exec->bos[i]);
	kfree(exec->bos);
	kfree(exec->handles);
	mcp_counter_dec(MCP_CTR_GRAPH_EXECS_IN_FLIGHT);
	mcp_sched_exec_put(exec);
}

/* Sends the roots out, or ends everything if it was stopped or failed. */
static void mcp_exec_start(struct mcp_exec *exec)
{
	const struct mcp_graph *graph = exec->graph;
	struct mcp_sched *sched = exec->sched;
	bool ended;
	u32 i;

	spin_lock(&sched->lock);
	exec->started = true;
	exec->rec->state = MCP_GRAPH_STATE_RUNNING;
	if (exec->stop)
		mcp_exec_fail_locked(exec, exec->stop, -1);
	else if (exec->in_fence && exec->in_fence->error)
		mcp_exec_fail_locked(exec, -ECANCELED, -1);
	else
		for (i = 0; i < graph->n_roots && !exec->rec->result; i++) {
			struct mcp_job *job = &exec->jobs[graph->roots[i]];

			if (job->state == MCP_JOB_WAITING && !job->deps_left)
				mcp_job_ready_locked(exec, job);
		}
	mcp_exec_run_nops_locked(exec);
	ended = mcp_exec_check_end_locked(exec);
	spin_unlock(&sched->lock);

	if (ended)
		mcp_sched_exec_end(exec);
}

static void mcp_exec_start_work(struct work_struct *work)
{
	mcp_exec_start(container_of(work, struct mcp_exec, start_work));
}

/* Any context, the in-fence's lock held: only queue the start. */
static void mcp_exec_in_fence_cb(struct dma_fence *fence,
				 struct dma_fence_cb *cb)
{
	struct mcp_exec *exec = container_of(cb, struct mcp_exec, in_cb);

	queue_work(mcp_graph_ctl_wq, &exec->start_work);
}

/* Time-out or close: fail with @error, drop queued jobs, abandon claimed. */
static void mcp_exec_stop(struct mcp_exec *exec, int error)
{
	struct mcp_sched *sched = exec->sched;
	bool ended = false, started;

	spin_lock(&sched->lock);
	if (exec->ended || exec->stop) {
		spin_unlock(&sched->lock);
		return;
	}
	WRITE_ONCE(exec->stop, error);
	started = exec->started;
	if (started) {
		mcp_exec_fail_locked(exec, error, -1);
		mcp_exec_abandon_locked(exec, error);
		ended = mcp_exec_check_end_locked(exec);
	}
	spin_unlock(&sched->lock);

	if (ended) {
		mcp_sched_exec_end(exec);
		return;
	}
	/*
	 * Not started: whoever removes the in-fence callback starts it (and
	 * the start ends it); a callback that ran first queued the start.
	 */
	if (!started && exec->in_fence &&
	    dma_fence_remove_callback(exec->in_fence, &exec->in_cb))
		mcp_exec_start(exec);
}

static void mcp_exec_timeout_work(struct work_struct *work)
{
	struct mcp_exec *exec = container_of(work, struct mcp_exec,
					     timeout_work);

	mcp_exec_stop(exec, -ETIMEDOUT);
	mcp_sched_exec_put(exec);
}

static enum hrtimer_restart mcp_exec_timer_fn(struct hrtimer *timer)
{
	struct mcp_exec *exec = container_of(timer, struct mcp_exec, timer);

	/* Its own reference is held until the timer is cancelled. */
	kref_get(&exec->ref);
	if (!queue_work(mcp_graph_ctl_wq, &exec->timeout_work))
		kref_put(&exec->ref, mcp_exec_release);
	return HRTIMER_NORESTART;
}

/* Kernel jobs */

static int mcp_exec_stopped(struct mcp_exec *exec)
{
	return READ_ONCE(exec->stop);
}

/* Kernel address of tensor @t, NULL when the BO has no kernel mapping. */
static void *mcp_job_tensor(struct mcp_exec *exec, u32 t)
{
	const struct mcp_graph_tensor *tensor = &exec->graph->tensors[t];
	void *base = mcp_bo_vaddr(exec->bos[tensor->buffer]);

	return base ? base + tensor->offset : NULL;
}

static int mcp_job_copy(struct mcp_exec *exec, const void *in, void *out,
			u64 bytes)
{
	u64 done, n;
	int ret;

	for (done = 0; done < bytes; done += n) {
		n = min_t(u64, bytes - done, MCP_SCHED_SLICE);
		memcpy(out + done, in + done, n);
		cond_resched();
		ret = mcp_exec_stopped(exec);
		if (ret)
			return ret;
	}
	return 0;
}

static int mcp_job_tile16(struct mcp_exec *exec,
			  const struct mcp_graph_node *n, const void *in,
			  void *out)
{
	const struct mcp_graph_tensor *t = &exec->graph->tensors[n->inputs[0]];
	u32 elem = t->dtype == MCP_DTYPE_F32 || t->dtype == MCP_DTYPE_I32 ?
		   4 : 1;
	u32 row_bytes = t->dims[3] * elem;
	u64 tiles = (u64)t->dims[0] * (t->dims[1] / 16);
	u64 tile_bytes = 16ULL * t->dims[2] * row_bytes;
	u64 step = max_t(u64, 1, MCP_SCHED_SLICE / tile_bytes);
	u64 first, last;
	int ret;

	for (first = 0; first < tiles; first = last) {
		last = min(tiles, first + step);
		mcp_graph_op_tile16(in, out, t->dims[1], t->dims[2], row_bytes,
				    elem, first, last);
		cond_resched();
		ret = mcp_exec_stopped(exec);
		if (ret)
			return ret;
	}
	return 0;
}

static int mcp_job_quant(struct mcp_exec *exec,
			 const struct mcp_graph_node *n, const void *in,
			 void *out)
{
	u64 count = exec->graph->tensor_bytes[n->outputs[0]];
	struct mcp_graph_quant q;
	u64 first, last;
	int ret;

	if (n->op == MCP_OP_DEQUANT_I8)
		count = exec->graph->tensor_bytes[n->inputs[0]];
	memcpy(&q, exec->graph->blob + n->param_offset, sizeof(q));
	/* Elements: one byte each on the I8 side. */
	for (first = 0; first < count; first = last) {
		last = min_t(u64, count, first + MCP_SCHED_SLICE / 4);
		if (n->op == MCP_OP_QUANT_I8)
			mcp_graph_op_quant_i8(in, out, q.scale, q.zero_point,
					      first, last);
		else
			mcp_graph_op_dequant_i8(in, out, q.scale, q.zero_point,
						first, last);
		cond_resched();
		ret = mcp_exec_stopped(exec);
		if (ret)
			return ret;
	}
	return 0;
}

/* Any context, the DMA fence's lock held: only queue the job's end. */
static void mcp_job_dev_fence_cb(struct dma_fence *fence,
				 struct dma_fence_cb *cb)
{
	struct mcp_job *job = container_of(cb, struct mcp_job, dev_cb);

	queue_work(mcp_graph_wq, &job->work);
}

/*
 * COPY on the context's device DMA engine, by the execution's deadline:
 * -EINPROGRESS once the DMA fence's callback is in (the job ends in
 * mcp_job_dev_end()), else the job's result.
 */
static int mcp_job_device_copy(struct mcp_exec *exec, struct mcp_job *job,
			       const struct mcp_graph_node *n)
{
	const struct mcp_graph *graph = exec->graph;
	const struct mcp_graph_tensor *in = &graph->tensors[n->inputs[0]];
	const struct mcp_graph_tensor *out = &graph->tensors[n->outputs[0]];
	struct mcp_sched *sched = exec->sched;
	struct mcp_ctx *ctx = READ_ONCE(sched->ctx);
	struct dma_fence *fence;
	int ret;

	if (!ctx)
		return -ECANCELED;
	fence = mcp_dma_submit_kernel(ctx, MCP_ENGINE_DEVICE,
				      exec->bos[in->buffer], in->offset,
				      exec->bos[out->buffer], out->offset,
				      graph->tensor_bytes[n->inputs[0]],
				      exec->deadline_ns);
	if (IS_ERR(fence))
		return PTR_ERR(fence);

	spin_lock(&sched->lock);
	ret = exec->stop;
	if (!ret) {
		job->dev_fence = fence;
		/*
		 * The end's work item takes the lock first: the reference
		 * it drops is taken before it can run.
		 */
		if (!dma_fence_add_callback(fence, &job->dev_cb,
					    mcp_job_dev_fence_cb)) {
			kref_get(&exec->ref);
			spin_unlock(&sched->lock);
			return -EINPROGRESS;
		}
		/* Signalled already. */
		job->dev_fence = NULL;
		ret = fence->error;
	}
	spin_unlock(&sched->lock);
	dma_fence_put(fence);
	return ret;
}

static int mcp_job_run(struct mcp_exec *exec, struct mcp_job *job)
{
	const struct mcp_graph_node *n = &exec->graph->nodes[job->index];
	void *in, *out;
	u32 k;

	if (n->op == MCP_OP_NOP)
		return 0;
	for (k = 0; k < n->n_outputs; k++)
		if (!mcp_bo_writable(exec->bos[exec->graph->tensors[n->outputs[k]].buffer]))
			return -EACCES;
	if (n->engine == MCP_GRAPH_ENGINE_DEVICE)
		return mcp_job_device_copy(exec, job, n);

	in = mcp_job_tensor(exec, n->inputs[0]);
	out = mcp_job_tensor(exec, n->outputs[0]);
	if (!in || !out)
		return -ENOMEM;
	switch (n->op) {
	case MCP_OP_COPY:
		return mcp_job_copy(exec, in, out,
				    exec->graph->tensor_bytes[n->inputs[0]]);
	case MCP_OP_TILE16:
		return mcp_job_tile16(exec, n, in, out);
	case MCP_OP_QUANT_I8:
	case MCP_OP_DEQUANT_I8:
		return mcp_job_quant(exec, n, in, out);
	default:
		return -EOPNOTSUPP;
	}
}

/*
 * A DEVICE job's DMA fence signalled: it ends with the DMA job's result,
 * unless a stop abandoned it.  Then drops the reference its callback
 * held.
 */
static void mcp_job_dev_end(struct mcp_exec *exec, struct mcp_job *job)
{
	struct mcp_sched *sched = exec->sched;
	struct dma_fence *fence;
	bool ended = false;

	spin_lock(&sched->lock);
	fence = job->dev_fence;
	job->dev_fence = NULL;
	if (!job->abandoned)
		ended = mcp_job_end_locked(exec, job, fence->error);
	spin_unlock(&sched->lock);
	if (ended)
		mcp_sched_exec_end(exec);
	dma_fence_put(fence);
	mcp_sched_exec_put(exec);
}

static void mcp_job_run_kernel(struct mcp_job *job)
{
	struct mcp_exec *exec = job->exec;
	struct mcp_sched *sched = exec->sched;
	const struct mcp_graph_node *n = &exec->graph->nodes[job->index];
	struct mcp_graph_node_status *st = &exec->rec->nodes[job->index];
	bool ended, cancelled;
	int ret;

	/* Set only by its submission, which queues this again at the end. */
	if (READ_ONCE(job->dev_fence)) {
		mcp_job_dev_end(exec, job);
		return;
	}

	spin_lock(&sched->lock);
	cancelled = exec->rec->result;
	if (!cancelled) {
		job->state = MCP_JOB_RUNNING;
		st->start_ns = ktime_get_ns();
		st->numa_node = numa_node_id();
		if (n->engine == MCP_GRAPH_ENGINE_DEVICE && sched->ctx &&
		    sched->ctx->mdev)
			st->numa_node = dev_to_node(&sched->ctx->mdev->pdev->dev);
	}
	spin_unlock(&sched->lock);

	if (cancelled) {
		ret = -ECANCELED;
	} else {
		trace_mcp_graph_job_start(exec->rec->id, job->index, n->op,
					  n->engine, st->numa_node,
					  raw_smp_processor_id(), 0);
		ret = mcp_job_run(exec, job);
		if (ret == -EINPROGRESS)
			return;
	}

	spin_lock(&sched->lock);
	ended = mcp_job_end_locked(exec, job, ret);
	spin_unlock(&sched->lock);
	if (ended)
		mcp_sched_exec_end(exec);
}

static void mcp_job_work(struct work_struct *work)
{
	mcp_job_run_kernel(container_of(work, struct mcp_job, work));
}

static void mcp_job_cpu_work(struct kthread_work *work)
{
	mcp_job_run_kernel(container_of(work, struct mcp_job, cpu_work));
}

/* MCP_IOC_GRAPH_EXEC */

/* The graph's BOs with the execution's bindings applied, a ref each. */
static int mcp_exec_bind(struct mcp_exec *exec, struct mcp_ctx *ctx,
			 const struct mcp_graph_exec *arg)
{
	const struct mcp_graph *graph = exec->graph;
	u32 n_buffers = graph->hdr.n_buffers;
	struct mcp_graph_binding *bindings = NULL;
	u64 seen = 0;
	u32 i;
	int ret = 0;

	exec->bos = kcalloc(n_buffers, sizeof(*exec->bos), GFP_KERNEL_ACCOUNT);
	exec->handles = kmemdup(graph->handles, n_buffers * sizeof(u32),
				GFP_KERNEL_ACCOUNT);
	if (!exec->bos || !exec->handles)
		return -ENOMEM;
	for (i = 0; i < n_buffers; i++) {
		mcp_bo_get(graph->bos[i]);
		exec->bos[i] = graph->bos[i];
	}
	if (!arg->n_bindings)
		return 0;

	bindings = kvmalloc_array(arg->n_bindings, sizeof(*bindings),
				  GFP_KERNEL);
	if (!bindings)
		return -ENOMEM;
	if (copy_from_user(bindings, u64_to_user_ptr(arg->bindings),
			   arg->n_bindings * sizeof(*bindings))) {
		ret = -EFAULT;
		goto out_free;
	}
	for (i = 0; i < arg->n_bindings; i++) {
		u32 b = bindings[i].buffer;
		struct mcp_bo *bo;

		if (b >= n_buffers || (seen & BIT_ULL(b))) {
			ret = -EINVAL;
			goto out_free;
		}
		seen |= BIT_ULL(b);
		bo = mcp_bo_lookup(ctx, bindings[i].handle);
		if (!bo) {
			ret = -ENOENT;
			goto out_free;
		}
		if (mcp_bo_length(bo) < graph->buffers[b].length) {
			mcp_bo_put(bo);
			ret = -EINVAL;
			goto out_free;
		}
		mcp_bo_put(exec->bos[b]);
		exec->bos[b] = bo;
		exec->handles[b] = bindings[i].handle;
	}
out_free:
	kvfree(bindings);
	return ret;
}

/* mcp_exec.bo_node, once its BOs are bound. */
static void mcp_exec_set_bo_node(struct mcp_exec *exec)
{
	u32 i;

	exec->bo_node = exec->bos[0]->node;
	for (i = 1; i < exec->graph->hdr.n_buffers; i++)
		if (exec->bos[i]->node != exec->bo_node)
			exec->bo_node = MCP_EXEC_BO_NODES_MIXED;
}

static void mcp_exec_unbind(struct mcp_exec *exec)
{
	u32 i;

	if (exec->bos)
		for (i = 0; i < exec->graph->hdr.n_buffers; i++)
			if (exec->bos[i])
				mcp_bo_put(exec->bos[i]);
	kfree(exec->bos);
	kfree(exec->handles);
}

static struct mcp_exec *mcp_exec_alloc(struct mcp_graph *graph)
{
	u32 n_nodes = graph->hdr.n_nodes;
	struct mcp_exec *exec;
	u32 i;

	exec = kzalloc(sizeof(*exec), GFP_KERNEL_ACCOUNT);
	if (!exec)
		return NULL;
	exec->graph = graph;
	/* Every field is set below: a spare array holds an old execution. */
	exec->jobs = xchg(&graph->spare_jobs, NULL) ?:
		     kvmalloc_array(n_nodes, sizeof(*exec->jobs),
				    GFP_KERNEL_ACCOUNT);
	exec->rec = xchg(&graph->spare_rec, NULL) ?:
		    kvmalloc(struct_size(exec->rec, nodes, n_nodes),
			     GFP_KERNEL_ACCOUNT);
	exec->fence = kzalloc(sizeof(*exec->fence), GFP_KERNEL_ACCOUNT);
	if (!exec->jobs || !exec->rec || !exec->fence) {
		kfree(exec->fence);
		kvfree(exec->rec);
		kvfree(exec->jobs);
		kfree(exec);
		return NULL;
	}
	kref_init(&exec->ref);
	INIT_LIST_HEAD(&exec->link);
	INIT_LIST_HEAD(&exec->nops);
	INIT_LIST_HEAD(&exec->in_cb.node);
	INIT_WORK(&exec->start_work, mcp_exec_start_work);
	INIT_WORK(&exec->timeout_work, mcp_exec_timeout_work);
	hrtimer_init(&exec->timer, CLOCK_MONOTONIC, HRTIMER_MODE_ABS);
	exec->timer.function = mcp_exec_timer_fn;
	exec->left = n_nodes;

	/* As for the jobs, every field: the record may be an old one. */
	INIT_LIST_HEAD(&exec->rec->link);
	exec->rec->id = 0;
	exec->rec->graph = graph->handle;
	exec->rec->n_nodes = n_nodes;
	exec->rec->ended = false;
	exec->rec->state = MCP_GRAPH_STATE_QUEUED;
	exec->rec->result = 0;
	exec->rec->failed_node = -1;
	exec->rec->submit_ns = 0;
	exec->rec->end_ns = 0;
	for (i = 0; i < n_nodes; i++) {
		struct mcp_job *job = &exec->jobs[i];

		job->exec = exec;
		job->index = i;
		job->deps_left = graph->n_deps[i];
		job->state = MCP_JOB_WAITING;
		job->attempts = 0;
		job->abandoned = false;
		job->target = NUMA_NO_NODE;
		job->id = 0;
		INIT_LIST_HEAD(&job->link);
		job->worker = NULL;
		job->tid = 0;
		job->claim_ns = 0;
		job->chain_len = 0;
		INIT_WORK(&job->work, mcp_job_work);
		kthread_init_work(&job->cpu_work, mcp_job_cpu_work);
		job->run_node = NUMA_NO_NODE;
		job->dev_fence = NULL;
		exec->rec->nodes[i] = (struct mcp_graph_node_status) {
			.engine = graph->nodes[i].engine,
			.numa_node = -1,
		};
	}
	return exec;
}

/*
 * The caller's workers for the execution's CPU jobs, each on the node of
 * its first output's BO: the work is charged to the task that submits it
 * (mcp_charge.c).  Process context, by the submitter.
 */
static int mcp_exec_prepare_cpu(struct mcp_exec *exec, struct mcp_sched *sched)
{
	const struct mcp_graph *graph = exec->graph;
	u32 i;
	int ret;

	for (i = 0; i < graph->hdr.n_nodes; i++) {
		const struct mcp_graph_node *n = &graph->nodes[i];
		int node = NUMA_NO_NODE;

		if (n->engine != MCP_GRAPH_ENGINE_CPU || n->op == MCP_OP_NOP)
			continue;
		if (n->n_outputs)
			node = exec->bos[graph->tensors[n->outputs[0]].buffer]->node;
		ret = mcp_charged_prepare(sched->charged, node);
		if (ret < 0)
			return ret;
		exec->jobs[i].run_node = ret;
	}
	return 0;
}

/* Frees an execution that never went out (error paths of the ioctl). */
static void mcp_exec_free_unsent(struct mcp_exec *exec)
{
	mcp_exec_unbind(exec);
	kfree(exec->fence);
	kvfree(exec->rec);
	kvfree(exec->jobs);
	kfree(exec);
}

/*
 * Sends the execution out; from here it will end by itself.  The caller
 * holds a reference.  Return: its id.
 */
static u64 mcp_exec_commit(struct mcp_sched *sched, struct mcp_exec *exec,
			   u64 now)
{
	u64 id;

	exec->sched = sched;
	exec->rec->submit_ns = now;
	spin_lock(&sched->lock);
	id = ++sched->last_exec_id;
	exec->rec->id = id;
	list_add_tail(&exec->link, &sched->execs);
	list_add_tail(&exec->rec->link, &sched->records);
	spin_unlock(&sched->lock);
	mcp_counter_inc(MCP_CTR_GRAPH_EXECS_IN_FLIGHT);

	hrtimer_start(&exec->timer, ns_to_ktime(min_t(u64, exec->deadline_ns,
						      KTIME_MAX)),
		      HRTIMER_MODE_ABS);
	if (!exec->in_fence ||
	    dma_fence_add_callback(exec->in_fence, &exec->in_cb,
				   mcp_exec_in_fence_cb)) {
		/* No in-fence, or signalled already. */
		mcp_exec_start(exec);
		return id;
	}
	/* A stop that came before the callback was in found nothing to do. */
	if (READ_ONCE(exec->stop) &&
	    dma_fence_remove_callback(exec->in_fence, &exec->in_cb))
		mcp_exec_start(exec);
	return id;
}

/*
 * Counts an execution about to be submitted against max_execs_in_flight:
 * 0, or -EAGAIN while that many have not ended.
 */
static int mcp_sched_reserve_exec(struct mcp_sched *sched)
{
	int ret = 0;

	spin_lock(&sched->lock);
	if (sched->n_execs >= READ_ONCE(mcp_graph_knobs.max_execs_in_flight))
		ret = -EAGAIN;
	else
		sched->n_execs++;
	spin_unlock(&sched->lock);
	return ret;
}

int mcp_ioctl_graph_exec(struct file *file, void *karg)
{
	struct mcp_graph_exec_karg *ek = karg;
	struct mcp_graph_exec *arg = &ek->arg;
	struct mcp_ctx *ctx = file->private_data;
	struct dma_fence *in_fence = NULL;
	struct mcp_sched *sched = NULL;
	struct sync_file *sync;
	struct mcp_graph *graph;
	struct mcp_exec *exec;
	u64 now, timeout_ms;
	int fd, ret;

	ek->out_file = NULL;
	if ((arg->flags & ~MCP_GRAPH_EXEC_FLAGS) || arg->reserved)
		return -EINVAL;
	if (ctx->mdev && READ_ONCE(ctx->mdev->gone))
		return -ENODEV;

	timeout_ms = arg->timeout_ms ?:
		     min(READ_ONCE(mcp_graph_knobs.exec_timeout_ms),
			 READ_ONCE(mcp_graph_knobs.exec_timeout_max_ms));
	if (timeout_ms > READ_ONCE(mcp_graph_knobs.exec_timeout_max_ms))
		return -EINVAL;

	graph = mcp_graph_lookup(ctx, arg->graph);
	if (!graph)
		return -ENOENT;
	if (arg->n_bindings > graph->hdr.n_buffers) {
		ret = -EINVAL;
		goto err_put_graph;
	}
	exec = mcp_exec_alloc(graph);
	if (!exec) {
		ret = -ENOMEM;
		goto err_put_graph;
	}
	ret = mcp_exec_bind(exec, ctx, arg);
	if (ret)
		goto err_free_exec;
	mcp_exec_set_bo_node(exec);

	if (arg->flags & MCP_GRAPH_EXEC_IN_FENCE) {
		in_fence = sync_file_get_fence(arg->in_fence);
		if (!in_fence) {
			ret = -EINVAL;
			goto err_free_exec;
		}
	}

	sched = mcp_sched_get_ctx(ctx);
	if (!sched) {
		ret = -ENOMEM;
		goto err_put_in_fence;
	}
	ret = mcp_exec_prepare_cpu(exec, sched);
	if (ret)
		goto err_put_sched;
	ret = mcp_sched_reserve_exec(sched);
	if (ret)
		goto err_put_sched;

	fd = get_unused_fd_flags(O_CLOEXEC);
	if (fd < 0) {
		ret = fd;
		goto err_unreserve;
	}
	spin_lock_init(&exec->fence->lock);
	dma_fence_init(&exec->fence->base, &mcp_graph_fence_ops,
		       &exec->fence->lock, dma_fence_context_alloc(1), 1);
	/* From here the fence's release frees it. */
	__module_get(THIS_MODULE);
	sync = sync_file_create(&exec->fence->base);
	if (!sync) {
		dma_fence_put(&exec->fence->base);
		exec->fence = NULL;
		ret = -ENOMEM;
		goto err_put_fd;
	}

	now = ktime_get_ns();
	exec->deadline_ns = now + timeout_ms * NSEC_PER_MSEC;
	exec->in_fence = in_fence;
	arg->out_fence = fd;
	ek->out_file = sync->file;

	/*
	 * The execution holds the graph and the sched reference from here;
	 * ours keeps it while it is sent out (it may end at once).
	 */
	kref_get(&exec->ref);
	arg->exec_id = mcp_exec_commit(sched, exec, now);
	mcp_sched_exec_put(exec);
	return 0;

err_put_fd:
	put_unused_fd(fd);
err_unreserve:
	spin_lock(&sched->lock);
	sched->n_execs--;
	spin_unlock(&sched->lock);
err_put_sched:
	mcp_sched_put(sched);
err_put_in_fence:
	if (in_fence)
		dma_fence_put(in_fence);
err_free_exec:
	mcp_exec_free_unsent(exec);
err_put_graph:
	mcp_graph_put(graph);
	return ret;
}

void mcp_ioctl_graph_exec_publish(void *karg, bool copied)
{
	struct mcp_graph_exec_karg *ek = karg;

	if (!ek->out_file)
		return;
	if (copied) {
		fd_install(ek->arg.out_fence, ek->out_file);
	} else {
		/* The execution runs on; only its fence fd is dropped. */
		fput(ek->out_file);
		put_unused_fd(ek->arg.out_fence);
	}
}

/* MCP_IOC_GRAPH_STATUS */

static struct mcp_exec_record *mcp_sched_find_locked(struct mcp_sched *sched,
						     u64 id)
{
	struct mcp_exec_record *rec;

	lockdep_assert_held(&sched->lock);

	list_for_each_entry(rec, &sched->records, link)
		if (rec->id == id)
			return rec;
	return NULL;
}

/* Copies the record's summary into @arg; false when it is gone. */
static bool mcp_sched_status_locked(struct mcp_sched *sched,
				    struct mcp_graph_status *arg,
				    struct mcp_graph_node_status *nodes, u32 n)
{
	struct mcp_exec_record *rec = mcp_sched_find_locked(sched, arg->exec_id);

	lockdep_assert_held(&sched->lock);

	if (!rec)
		return false;
	arg->state = rec->state;
	arg->result = rec->result;
	arg->failed_node = rec->failed_node;
	arg->graph = rec->graph;
	arg->submit_ns = rec->submit_ns;
	arg->end_ns = rec->end_ns;
	if (nodes)
		memcpy(nodes, rec->nodes, min(n, rec->n_nodes) * sizeof(*nodes));
	return true;
}

int mcp_ioctl_graph_status(struct file *file, void *karg)
{
	struct mcp_ctx *ctx = file->private_data;
	struct mcp_graph_node_status *nodes = NULL;
	struct mcp_graph_status *arg = karg;
	struct mcp_exec_record *rec;
	struct mcp_sched *sched;
	u32 n_nodes = 0, n;
	int ret = 0;

	if (arg->flags || arg->reserved)
		return -EINVAL;
	sched = mcp_sched_get_ctx(ctx);
	if (!sched)
		return -ENOMEM;

	spin_lock(&sched->lock);
	rec = mcp_sched_find_locked(sched, arg->exec_id);
	if (rec)
		n_nodes = rec->n_nodes;
	spin_unlock(&sched->lock);
	if (!rec) {
		ret = -ENOENT;
		goto out_put;
	}

	n = arg->nodes ? min(arg->n_nodes, n_nodes) : 0;
	if (n) {
		nodes = kvmalloc_array(n, sizeof(*nodes), GFP_KERNEL);
		if (!nodes) {
			ret = -ENOMEM;
			goto out_put;
		}
	}
	spin_lock(&sched->lock);
	if (!mcp_sched_status_locked(sched, arg, nodes, n))
		ret = -ENOENT;
	spin_unlock(&sched->lock);
	if (!ret && n && copy_to_user(u64_to_user_ptr(arg->nodes), nodes,
				      n * sizeof(*nodes)))
		ret = -EFAULT;
	arg->n_nodes = n_nodes;
	kvfree(nodes);
out_put:
	mcp_sched_put(sched);
	return ret;
}

static bool mcp_sched_idle(struct mcp_sched *sched)
{
	bool idle;

	spin_lock(&sched->lock);
	idle = list_empty(&sched->execs);
	spin_unlock(&sched->lock);
	return idle;
}

/*
 * The context is closing (no ioctl of it runs): stop every execution,
 * wait until each has ended (running kernel jobs stop at their next
 * slice), detach the workers and drop the context's reference.
 */
void mcp_sched_ctx_fini(struct mcp_ctx *ctx)
{
	struct mcp_sched *sched = ctx->sched;
	struct mcp_worker *w, *next_w;
	struct mcp_exec *exec;
	LIST_HEAD(records);

	if (!sched)
		return;

	for (;;) {
		spin_lock(&sched->lock);
		exec = NULL;
		list_for_each_entry(exec, &sched->execs, link)
			if (!exec->stop)
				break;
		if (list_entry_is_head(exec, &sched->execs, link))
			exec = NULL;
		if (exec)
			kref_get(&exec->ref);
		spin_unlock(&sched->lock);
		if (!exec)
			break;
		mcp_exec_stop(exec, -ECANCELED);
		mcp_sched_exec_put(exec);
	}

	wait_event(sched->idle, mcp_sched_idle(sched));

	spin_lock(&sched->lock);
	list_for_each_entry_safe(w, next_w, &sched->workers, link) {
		list_del_init(&w->link);
		w->attached = false;
		sched->node_workers[w->node]--;
	}
	sched->ctx = NULL;
	list_splice_init(&sched->records, &records);
	sched->n_ended = 0;
	mcp_sched_wake_all_locked(sched);
	spin_unlock(&sched->lock);

	mcp_sched_free_records(&records);
	ctx->sched = NULL;
	mcp_sched_put(sched);
}

int mcp_sched_init(void)
{
	mcp_graph_wq = alloc_workqueue("mcp_graph", WQ_UNBOUND, 0);
	if (!mcp_graph_wq)
		return -ENOMEM;
	mcp_graph_ctl_wq = alloc_workqueue("mcp_graph_ctl",
					   WQ_UNBOUND | WQ_HIGHPRI, 0);
	if (!mcp_graph_ctl_wq) {
		destroy_workqueue(mcp_graph_wq);
		return -ENOMEM;
	}
	return 0;
}

void mcp_sched_exit(void)
{
	destroy_workqueue(mcp_graph_ctl_wq);
	destroy_workqueue(mcp_graph_wq);
}
