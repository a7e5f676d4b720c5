/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Userspace stand-in for the kernel's <linux/types.h>, first on the
 * include path of the unit tests that build kernel files (only
 * kmod/mcp_graph_ops.c): the uapi types from the real header plus the
 * kernel's short names.
 */
#ifndef MCP_KSHIM_LINUX_TYPES_H
#define MCP_KSHIM_LINUX_TYPES_H

#include_next <linux/types.h>

#include <stdbool.h>
#include <stdint.h>

typedef uint8_t u8;
typedef int8_t s8;
typedef uint16_t u16;
typedef int16_t s16;
typedef uint32_t u32;
typedef int32_t s32;
typedef uint64_t u64;
typedef int64_t s64;

/* Address-space annotation for sparse (from <linux/compiler_types.h>). */
#define __user

#endif
