/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libmcp: hardware tuning knobs and sessions (C API).  Included by
 * <mcp/mcp.h>; conventions as there (0 or -errno, mcp_strerror_last()).
 * Documentation/tuning.rst has how the registry and rollback work.
 */
#ifndef MCP_TUNE_H
#define MCP_TUNE_H

#include <stddef.h>
#include <stdint.h>

#include <mcp/mcp.h>

#ifdef __cplusplus
extern "C" {
#endif

#define MCP_FEATURE_TUNE	(UINT64_C(1) << 13)	/* tuning registry */

/* mcp_knob.scope */
#define MCP_KNOB_SCOPE_CPU	0
#define MCP_KNOB_SCOPE_CORE	1
#define MCP_KNOB_SCOPE_PACKAGE	2
#define MCP_KNOB_SCOPE_SYSTEM	3

/* mcp_knob.status */
#define MCP_KNOB_SUPPORTED	0
#define MCP_KNOB_UNSUPPORTED	1	/* see reason */
#define MCP_KNOB_READ_ONLY	2	/* see reason */

/* mcp_knob.type */
#define MCP_KNOB_BOOL		0
#define MCP_KNOB_U64		1

/* One knob as seen on one CPU. */
struct mcp_knob {
	uint32_t id;
	uint32_t scope;
	uint32_t type;
	uint32_t status;
	uint64_t min;
	uint64_t max;
	uint64_t value;		/* valid when has_value */
	uint64_t boot;		/* valid when has_value: value at module load */
	int has_value;
	int held;		/* a session changed it ... */
	int holder_pid;		/* ... created by this pid (0: not visible) */
	int committed;		/* a committed value applies */
	char name[32];
	char reason[96];
};

/*
 * mcp_tune_list() - every knob, with values read on @cpu
 *
 * Writes up to @cap knobs and their number to *@count; -ENOSPC (with
 * *@count set) when @cap is too small.  -ENOTTY: module without tuning.
 */
MCP_EXPORT int mcp_tune_list(struct mcp_device *dev, unsigned cpu,
			     struct mcp_knob *out, size_t cap, size_t *count);

/* A tuning session.  Opaque; rolls back what it set when closed. */
struct mcp_tuner;

/* Needs CAP_SYS_RAWIO and no kernel lockdown (-EPERM). */
MCP_EXPORT int mcp_tuner_open(struct mcp_device *dev, struct mcp_tuner **out);
/* Closes the session: every value it set and did not commit goes back. */
MCP_EXPORT void mcp_tuner_close(struct mcp_tuner *tuner);
/*
 * Sets @knob to @value on @cpu's scope, or every online CPU for @cpu < 0;
 * each write is read back.  -ENOENT, -ERANGE, -EOPNOTSUPP, -EBUSY (held
 * by another session: mcp_strerror_last() names its pid), -EIO (did not
 * stick), -ENXIO (CPU offline).
 */
MCP_EXPORT int mcp_tuner_set(struct mcp_tuner *tuner, const char *knob,
			     uint64_t value, int cpu);
MCP_EXPORT int mcp_tuner_get(struct mcp_tuner *tuner, const char *knob,
			     unsigned cpu, uint64_t *value);
/* Makes what the session set permanent; *@count (may be NULL) values. */
MCP_EXPORT int mcp_tuner_commit(struct mcp_tuner *tuner, unsigned *count);
/* Boot values back, committed ones dropped: @knob (NULL: all), @cpu (< 0: all). */
MCP_EXPORT int mcp_tuner_reset(struct mcp_tuner *tuner, const char *knob, int cpu);

#ifdef __cplusplus
}
#endif

#endif /* MCP_TUNE_H */
