/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libmcp: the C API of the graph runtime (mcp::Runtime of
 * <mcp/runtime.hpp>): worker threads that run a context's compute
 * operators, graphs loaded into the kernel, executions and their status.
 * Included by <mcp/mcp.h>; same conventions: 0 or a negative errno,
 * mcp_strerror_last() for the sentence.  Documentation/libmcp.rst, "Graph
 * runtime".
 */
#ifndef MCP_RUNTIME_H
#define MCP_RUNTIME_H

#include <stddef.h>
#include <stdint.h>

#include <mcp/dma.h>
#include <mcp/graph.h>

#ifdef __cplusplus
extern "C" {
#endif

/* A runtime: its worker threads on one DMA context.  Opaque. */
struct mcp_runtime;
/* A graph loaded into the kernel with its buffers.  Opaque. */
struct mcp_loaded_graph;

/**
 * struct mcp_runtime_opts - how many workers where
 * @size:	in: sizeof(struct mcp_runtime_opts)
 * @workers_per_node: 0: 1
 * @nodes:	kernel node ids to start workers on; NULL: every node with CPUs
 * @n_nodes:	entries at @nodes
 * @worker_batch: the most nodes a worker reads at once, reported
 *		together, 1 .. MCP_RUNTIME_CHAIN_MAX; 0: 1024 in chain mode,
 *		else 32.  In chain mode the nodes of one chain (reported after
 *		2 ms even so); else a job and the jobs chained after it, at
 *		most MCP_RUNTIME_WORKER_BATCH_MAX; 1: one job per read, as on
 *		a module without MCP_FEATURE_JOB_BATCH
 * @flags:	MCP_RUNTIME_NO_CHAINS or 0
 * @reserved:	0
 * @executor:	MCP_RUNTIME_EXECUTOR_*: what runs the graphs
 * @reserved2:	0
 *
 * @size may be MCP_RUNTIME_OPTS_SIZE_VER0, the struct before @flags, or
 * MCP_RUNTIME_OPTS_SIZE_VER1, before @executor: the fields it lacks are
 * then 0 (@executor: MCP_RUNTIME_EXECUTOR_KERNEL).
 */
struct mcp_runtime_opts {
	uint32_t size;
	uint32_t workers_per_node;
	const uint32_t *nodes;
	uint32_t n_nodes;
	uint32_t worker_batch;
	uint32_t flags;
	uint32_t reserved;
	uint32_t executor;
	uint32_t reserved2;
};

#define MCP_RUNTIME_OPTS_SIZE_VER0	24
#define MCP_RUNTIME_OPTS_SIZE_VER1	32

/*
 * mcp_runtime_opts.executor: mcp.ko (MCP_IOC_GRAPH_EXEC, the kernel's
 * routing and data-movement operators); libmcp alone without /dev/mcp
 * (the same validator, operators and routing rule, its own scheduler and
 * process memory); or the kernel when /dev/mcp opens and runs graphs,
 * else userspace.
 */
#define MCP_RUNTIME_EXECUTOR_KERNEL	0
#define MCP_RUNTIME_EXECUTOR_USERSPACE	1
#define MCP_RUNTIME_EXECUTOR_AUTO	2

/*
 * mcp_runtime_opts.flags: workers use the jobs of @worker_batch even on a
 * module with MCP_FEATURE_JOB_CHAINS (where they otherwise read a chain
 * of nodes as one job and report it with one MCP_IOC_CHAIN_DONE).
 */
#define MCP_RUNTIME_NO_CHAINS	(1U << 0)

/* The module's workers read chains of jobs and report them in batches. */
#define MCP_FEATURE_JOB_BATCH	(UINT64_C(1) << 8)
/* The module's workers can read a chain of nodes as one job. */
#define MCP_FEATURE_JOB_CHAINS	(UINT64_C(1) << 10)
/* Largest mcp_runtime_opts.worker_batch (the kernel's MCP_WORKER_CHAIN_MAX). */
#define MCP_RUNTIME_CHAIN_MAX		1024
/* Most jobs one read takes outside chain mode (the kernel's MCP_WORKER_READ_MAX). */
#define MCP_RUNTIME_WORKER_BATCH_MAX	64

/*
 * mcp_runtime_new() - start the workers on @dma (@opts NULL: defaults).
 * The runtime keeps its own reference to the context.  @dma may be NULL
 * with @opts->executor USERSPACE or AUTO (AUTO then opens the host
 * context when it can); with a @dma, AUTO is the kernel.  Return: 0,
 * -EOPNOTSUPP (module without graphs), -EINVAL, -ENOMEM, -ENOENT (no
 * /dev/mcp for the kernel executor)...
 */
MCP_EXPORT int mcp_runtime_new(struct mcp_dma *dma, const struct mcp_runtime_opts *opts,
			       struct mcp_runtime **out);
/*
 * mcp_runtime_executor() - MCP_RUNTIME_EXECUTOR_KERNEL or _USERSPACE:
 * what runs @rt's graphs (what AUTO chose); -EINVAL for NULL.
 */
MCP_EXPORT int mcp_runtime_executor(const struct mcp_runtime *rt);
/* mcp_runtime_free() - stop the workers (NULL is fine); after every graph's last execution. */
MCP_EXPORT void mcp_runtime_free(struct mcp_runtime *rt);
/* mcp_runtime_worker_count() - worker threads running; 0 for NULL. */
MCP_EXPORT uint32_t mcp_runtime_worker_count(const struct mcp_runtime *rt);

/* mcp_runtime_worker.mode: how a worker reads its jobs */
#define MCP_RUNTIME_WORKER_ONE_JOB	0	/* one job per read, JOB_DONE */
#define MCP_RUNTIME_WORKER_BATCH	1	/* a job and its chain, JOBS_DONE */
#define MCP_RUNTIME_WORKER_CHAINS	2	/* a chain as one job, CHAIN_DONE */

/**
 * struct mcp_runtime_worker - one worker thread and what it did
 * @size:	in: sizeof(struct mcp_runtime_worker)
 * @node:	the NUMA node it serves
 * @tid:	its thread id
 * @mode:	MCP_RUNTIME_WORKER_*
 * @batch:	jobs (chain mode: nodes) it reads at once
 * @jobs:	nodes it ran
 * @failed:	of which reported with an error
 */
struct mcp_runtime_worker {
	uint32_t size;
	int32_t node;
	int32_t tid;
	uint32_t mode;
	uint32_t batch;
	uint32_t reserved;
	uint64_t jobs;
	uint64_t failed;
};

/*
 * mcp_runtime_worker_info() - worker @index (below
 * mcp_runtime_worker_count()) into @out.  Return: 0, -EINVAL (NULL,
 * @out->size too small, no such worker).
 */
MCP_EXPORT int mcp_runtime_worker_info(const struct mcp_runtime *rt, uint32_t index,
				       struct mcp_runtime_worker *out);

/*
 * mcp_runtime_load() - create one buffer per buffer index of @graph, fill
 * those with an init, create the graph in the kernel.  A refused graph
 * gives -EINVAL with @err (NULL is fine) filled with the kernel's reason,
 * kind and index.
 */
MCP_EXPORT int mcp_runtime_load(struct mcp_runtime *rt, const struct mcp_graph_def *graph,
				struct mcp_loaded_graph **out, struct mcp_graph_invalid *err);
/* mcp_load_opts.flags */
#define MCP_LOAD_NODE	(1U << 0)	/* create the buffers on @node */

/* One buffer of the graph placed on a node of its own. */
struct mcp_load_buffer_node {
	const char *name;	/* the buffer's name in the graph */
	int32_t node;		/* kernel NUMA node id; -1: as the others */
	uint32_t reserved;	/* 0 */
};

/**
 * struct mcp_load_opts - where mcp_runtime_load_opts() creates the buffers
 * @size:	in: sizeof(struct mcp_load_opts)
 * @flags:	MCP_LOAD_NODE or 0
 * @node:	with MCP_LOAD_NODE, the kernel NUMA node of every buffer;
 *		without, the context's default (the caller's node on the host)
 * @n_buffer_nodes: entries at @buffer_nodes
 * @buffer_nodes: buffers placed elsewhere than @node, by name
 *
 * Worker jobs run on the node holding most of their input bytes: this is
 * also where the graph's worker nodes run.
 */
struct mcp_load_opts {
	uint32_t size;
	uint32_t flags;
	int32_t node;
	uint32_t n_buffer_nodes;
	const struct mcp_load_buffer_node *buffer_nodes;
};

/*
 * mcp_runtime_load_opts() - mcp_runtime_load() with the buffers placed by
 * @opts (NULL: as mcp_runtime_load()).  Return: as mcp_runtime_load(), and
 * -EINVAL for a node that is not online or has no memory (the message
 * names the nodes there are), -ENOENT for a buffer name the graph lacks.
 */
MCP_EXPORT int mcp_runtime_load_opts(struct mcp_runtime *rt, const struct mcp_graph_def *graph,
				     const struct mcp_load_opts *opts,
				     struct mcp_loaded_graph **out, struct mcp_graph_invalid *err);
/* mcp_loaded_graph_free() - destroy the graph and its buffers (NULL is fine). */
MCP_EXPORT void mcp_loaded_graph_free(struct mcp_loaded_graph *lg);
/* mcp_loaded_graph_handle() - its handle on the context; 0 for NULL. */
MCP_EXPORT uint32_t mcp_loaded_graph_handle(const struct mcp_loaded_graph *lg);
/*
 * mcp_loaded_graph_buffer() - the memory of buffer @index (bound at load),
 * mapped: *@data, *@len its length.  Valid until mcp_loaded_graph_free().
 * Return: 0, -EINVAL (no such index).
 */
MCP_EXPORT int mcp_loaded_graph_buffer(struct mcp_loaded_graph *lg, uint32_t index, void **data,
				       uint64_t *len);
/* The same by buffer name; -ENOENT when no buffer has that name. */
MCP_EXPORT int mcp_loaded_graph_buffer_by_name(struct mcp_loaded_graph *lg, const char *name,
					       void **data, uint64_t *len);
/*
 * mcp_loaded_graph_buffer_info() - what the kernel says about buffer
 * @index (its node: where load placed it).  Return: 0, -EINVAL (no such
 * index, info->size too small).
 */
MCP_EXPORT int mcp_loaded_graph_buffer_info(struct mcp_loaded_graph *lg, uint32_t index,
					    struct mcp_buffer_info *info);

/* One buffer index rebound for one execution. */
struct mcp_graph_bind {
	uint32_t buffer;		/* index in the graph's buffer table */
	uint32_t reserved;
	struct mcp_buffer *with;	/* a buffer of the runtime's context */
};

/**
 * struct mcp_exec_opts - one execution
 * @size:	in: sizeof(struct mcp_exec_opts)
 * @timeout_ms:	0: the module's exec_timeout_ms
 * @in_fence:	start after it signals; NULL: at once
 */
struct mcp_exec_opts {
	uint32_t size;
	uint32_t timeout_ms;
	const struct mcp_fence *in_fence;
};

/*
 * mcp_runtime_execute() - submit @lg with @n_binds bindings (@binds may be
 * NULL when 0) and @opts (NULL: defaults).  *@exec_id gets the execution's
 * id, *@fence (NULL: not wanted) its out-fence, freed with
 * mcp_fence_free(); the userspace executor has none (*@fence is NULL):
 * mcp_runtime_wait() waits on either executor.  -EOPNOTSUPP for an
 * in-fence on the userspace executor, -EAGAIN while its limit of
 * executions of @lg in flight is reached.
 */
MCP_EXPORT int mcp_runtime_execute(struct mcp_runtime *rt, struct mcp_loaded_graph *lg,
				   const struct mcp_graph_bind *binds, uint32_t n_binds,
				   const struct mcp_exec_opts *opts, uint64_t *exec_id,
				   struct mcp_fence **fence);

/* enum mcp_graph_state */
#define MCP_EXEC_QUEUED		0
#define MCP_EXEC_RUNNING	1
#define MCP_EXEC_DONE		2
#define MCP_EXEC_FAILED		3

/* One node of one execution (the kernel's struct mcp_graph_node_status). */
struct mcp_exec_node {
	uint32_t engine;	/* MCP_GRAPH_CLASS_* that ran it */
	int32_t numa_node;	/* -1: did not run */
	int32_t result;		/* 0 or a negative errno; -ECANCELED: skipped */
	int32_t worker_tid;
	uint64_t start_ns;	/* CLOCK_MONOTONIC, 0: did not start */
	uint64_t end_ns;
};

/**
 * struct mcp_exec_status - what MCP_IOC_GRAPH_STATUS says
 * @size:	in: sizeof(struct mcp_exec_status)
 * @state:	MCP_EXEC_*
 * @result:	0 or the execution's negative errno
 * @failed_node: first node that failed, -1: none
 * @n_nodes:	the graph's node count
 * @submit_ns:	CLOCK_MONOTONIC of submission
 * @end_ns:	of its end, 0 while it runs
 */
struct mcp_exec_status {
	uint32_t size;
	uint32_t state;
	int32_t result;
	int32_t failed_node;
	uint32_t n_nodes;
	uint32_t reserved;
	uint64_t submit_ns;
	uint64_t end_ns;
};

/*
 * mcp_runtime_status() - the status of @exec_id; @nodes (NULL: none
 * wanted) gets min(@cap, n_nodes) entries.  -ENOENT once too old.
 */
MCP_EXPORT int mcp_runtime_status(struct mcp_runtime *rt, uint64_t exec_id,
				  struct mcp_exec_status *status, struct mcp_exec_node *nodes,
				  uint32_t cap);

/*
 * mcp_runtime_wait() - wait at most @timeout_ns (negative: forever) for
 * execution @exec_id of the userspace executor to end.  Return: 0 once it
 * has, -ETIMEDOUT, -ENOENT (unknown or too old), -EOPNOTSUPP on the
 * kernel executor (wait for the execution's out-fence there).
 */
MCP_EXPORT int mcp_runtime_wait(struct mcp_runtime *rt, uint64_t exec_id, int64_t timeout_ns);

/*
 * mcp_runtime_run_inline() - run @graph in the calling thread with the
 * same operators (the reference): @buffers[i] is buffer i's memory,
 * @n_buffers the graph's buffer count, each at least the buffer's length.
 * Return: 0, -EINVAL (invalid graph or an operator refused its shapes:
 * the message names the node).
 */
MCP_EXPORT int mcp_runtime_run_inline(const struct mcp_graph_def *graph, void *const *buffers,
				      uint32_t n_buffers);

#ifdef __cplusplus
}
#endif

#endif /* MCP_RUNTIME_H */
