/* SPDX-License-Identifier: GPL-2.0 */
/*
 * MCP (Model Control Protocol): tracepoints.
 *
 * mcp:mcp_place fires on every placement decision, applied or not (dry
 * runs, sticky and unchanged results included), by the ioctl and by the
 * rebalancer.  Documented in Documentation/placement.rst.
 *
 * mcp:mcp_dma_submit and mcp:mcp_dma_done fire when a DMA job is
 * submitted and when it finishes, successfully or not; dev is the
 * context's device index, -1 for the host context.  Times are
 * ktime_get_ns(); start_ns is 0 for a job that never started.
 * Documented in Documentation/dma.rst.
 *
 * mcp:mcp_graph_job_submit, _start and _done follow one node of one
 * graph execution: handed to its engine class, started (numa_node and
 * cpu where it runs; tid: the worker thread for ENGINE_WORKER, else 0)
 * and ended (result 0 or a negative errno; duration_ns from start, 0
 * when it never started).  Documented in
 * Documentation/graph-scheduling.rst.
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM mcp

#if !defined(_MCP_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define _MCP_TRACE_H

#include <linux/tracepoint.h>

TRACE_EVENT(mcp_place,
	    TP_PROTO(pid_t pid, int from_node, int to_node, int home_node,
		     u32 home_source, u32 reason, u32 origin, u32 flags),
	    TP_ARGS(pid, from_node, to_node, home_node, home_source, reason,
		    origin, flags),
	    TP_STRUCT__entry(__field(pid_t, pid)
			     __field(int, from_node)
			     __field(int, to_node)
			     __field(int, home_node)
			     __field(u32, home_source)
			     __field(u32, reason)
			     __field(u32, origin)
			     __field(u32, flags)),
	    TP_fast_assign(__entry->pid = pid;
			   __entry->from_node = from_node;
			   __entry->to_node = to_node;
			   __entry->home_node = home_node;
			   __entry->home_source = home_source;
			   __entry->reason = reason;
			   __entry->origin = origin;
			   __entry->flags = flags;),
	    TP_printk("pid=%d from=%d to=%d home=%d home_source=%u reason=%u origin=%u flags=0x%x",
		      __entry->pid, __entry->from_node, __entry->to_node,
		      __entry->home_node, __entry->home_source,
		      __entry->reason, __entry->origin, __entry->flags)
);

TRACE_EVENT(mcp_dma_submit,
	    TP_PROTO(int dev, u32 engine, u64 seqno, u64 length,
		     u64 submit_ns),
	    TP_ARGS(dev, engine, seqno, length, submit_ns),
	    TP_STRUCT__entry(__field(int, dev)
			     __field(u32, engine)
			     __field(u64, seqno)
			     __field(u64, length)
			     __field(u64, submit_ns)),
	    TP_fast_assign(__entry->dev = dev;
			   __entry->engine = engine;
			   __entry->seqno = seqno;
			   __entry->length = length;
			   __entry->submit_ns = submit_ns;),
	    TP_printk("dev=%d engine=%u seqno=%llu length=%llu submit_ns=%llu",
		      __entry->dev, __entry->engine, __entry->seqno,
		      __entry->length, __entry->submit_ns)
);

TRACE_EVENT(mcp_dma_done,
	    TP_PROTO(int dev, u32 engine, u64 seqno, u64 length, int error,
		     u64 submit_ns, u64 start_ns, u64 done_ns),
	    TP_ARGS(dev, engine, seqno, length, error, submit_ns, start_ns,
		    done_ns),
	    TP_STRUCT__entry(__field(int, dev)
			     __field(u32, engine)
			     __field(u64, seqno)
			     __field(u64, length)
			     __field(int, error)
			     __field(u64, submit_ns)
			     __field(u64, start_ns)
			     __field(u64, done_ns)),
	    TP_fast_assign(__entry->dev = dev;
			   __entry->engine = engine;
			   __entry->seqno = seqno;
			   __entry->length = length;
			   __entry->error = error;
			   __entry->submit_ns = submit_ns;
			   __entry->start_ns = start_ns;
			   __entry->done_ns = done_ns;),
	    TP_printk("dev=%d engine=%u seqno=%llu length=%llu error=%d submit_ns=%llu start_ns=%llu done_ns=%llu",
		      __entry->dev, __entry->engine, __entry->seqno,
		      __entry->length, __entry->error, __entry->submit_ns,
		      __entry->start_ns, __entry->done_ns)
);

TRACE_EVENT(mcp_graph_job_submit,
	    TP_PROTO(u64 exec_id, u32 node, u32 op, u32 engine),
	    TP_ARGS(exec_id, node, op, engine),
	    TP_STRUCT__entry(__field(u64, exec_id)
			     __field(u32, node)
			     __field(u32, op)
			     __field(u32, engine)),
	    TP_fast_assign(__entry->exec_id = exec_id;
			   __entry->node = node;
			   __entry->op = op;
			   __entry->engine = engine;),
	    TP_printk("exec=%llu node=%u op=%u engine=%u",
		      __entry->exec_id, __entry->node, __entry->op,
		      __entry->engine)
);

TRACE_EVENT(mcp_graph_job_start,
	    TP_PROTO(u64 exec_id, u32 node, u32 op, u32 engine, int numa_node,
		     int cpu, pid_t tid),
	    TP_ARGS(exec_id, node, op, engine, numa_node, cpu, tid),
	    TP_STRUCT__entry(__field(u64, exec_id)
			     __field(u32, node)
			     __field(u32, op)
			     __field(u32, engine)
			     __field(int, numa_node)
			     __field(int, cpu)
			     __field(pid_t, tid)),
	    TP_fast_assign(__entry->exec_id = exec_id;
			   __entry->node = node;
			   __entry->op = op;
			   __entry->engine = engine;
			   __entry->numa_node = numa_node;
			   __entry->cpu = cpu;
			   __entry->tid = tid;),
	    TP_printk("exec=%llu node=%u op=%u engine=%u numa_node=%d cpu=%d tid=%d",
		      __entry->exec_id, __entry->node, __entry->op,
		      __entry->engine, __entry->numa_node, __entry->cpu,
		      __entry->tid)
);

TRACE_EVENT(mcp_graph_job_done,
	    TP_PROTO(u64 exec_id, u32 node, u32 op, u32 engine, int result,
		     u64 duration_ns),
	    TP_ARGS(exec_id, node, op, engine, result, duration_ns),
	    TP_STRUCT__entry(__field(u64, exec_id)
			     __field(u32, node)
			     __field(u32, op)
			     __field(u32, engine)
			     __field(int, result)
			     __field(u64, duration_ns)),
	    TP_fast_assign(__entry->exec_id = exec_id;
			   __entry->node = node;
			   __entry->op = op;
			   __entry->engine = engine;
			   __entry->result = result;
			   __entry->duration_ns = duration_ns;),
	    TP_printk("exec=%llu node=%u op=%u engine=%u result=%d duration_ns=%llu",
		      __entry->exec_id, __entry->node, __entry->op,
		      __entry->engine, __entry->result, __entry->duration_ns)
);

#endif /* _MCP_TRACE_H */

/* This part must be outside the include guard. */
#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE mcp_trace
#include <trace/define_trace.h>
