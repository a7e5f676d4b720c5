/* SPDX-License-Identifier: (LGPL-2.1-or-later OR BSD-2-Clause) */
/* Helpers shared by the programs of bpf/ (as libbpf-tools' bits.bpf.h). */
#ifndef MCP_BPF_TRACE_BITS_BPF_H
#define MCP_BPF_TRACE_BITS_BPF_H

/* floor(log2(v)) without loops, so the verifier sees no back-edge. */
static __always_inline __u64 mcp_log2(__u32 v)
{
	__u32 shift, r;

	r = (v > 0xFFFF) << 4;
	v >>= r;
	shift = (v > 0xFF) << 3;
	v >>= shift;
	r |= shift;
	shift = (v > 0xF) << 2;
	v >>= shift;
	r |= shift;
	shift = (v > 0x3) << 1;
	v >>= shift;
	r |= shift;
	r |= (v >> 1);
	return r;
}

static __always_inline __u64 mcp_log2l(__u64 v)
{
	__u32 hi = v >> 32;

	return hi ? mcp_log2(hi) + 32 : mcp_log2(v);
}

#endif /* MCP_BPF_TRACE_BITS_BPF_H */
