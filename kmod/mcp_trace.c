// SPDX-License-Identifier: GPL-2.0
/*
 * MCP (Model Control Protocol): instantiates the tracepoints declared in
 * mcp_trace.h.  Kbuild adds -I$(src) for this file so that
 * <trace/define_trace.h> finds mcp_trace.h through TRACE_INCLUDE_PATH.
 */

#define CREATE_TRACE_POINTS
#include "mcp_trace.h"
