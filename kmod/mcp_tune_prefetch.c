// SPDX-License-Identifier: GPL-2.0
/*
 * MCP (Model Control Protocol): hardware prefetcher knobs, from per-model
 * tables of the vendors' documentation (Documentation/tuning.rst cites
 * them):
 *
 * - Intel Core 2 (family 6, models 0x0f 0x16 0x17 0x1d): IA32_MISC_ENABLE
 *   (0x1a0) bits 9 (hardware prefetcher), 19 (adjacent cache line), 37
 *   (DCU prefetcher) and 39 (IP prefetcher) disable them; Intel SDM vol 4,
 *   table "MSRs in the Intel Core 2 processor family".
 * - Intel Nehalem through Sapphire Rapids: MSR_MISC_FEATURE_CONTROL
 *   (0x1a4) bits 0 (L2 hardware prefetcher), 1 (L2 adjacent line), 2 (DCU
 *   prefetcher) and 3 (DCU IP prefetcher); Intel SDM vol 4 and Intel's
 *   "Disclosure of H/W prefetcher control on some Intel processors".
 * - AMD Zen 4 (family 0x19, models 0x10-0x1f, 0x60-0x7f, 0xa0-0xaf):
 *   MSR C000_0108 "Prefetch Control" bits 0 (L1Stream), 1 (L1Stride), 2
 *   (L1Region), 3 (L2Stream) and 5 (UpDown); AMD PPR for family 19h
 *   model 11h (55901), MSRC000_0108.
 *
 * Every bit is a disable bit; the knob's value is 1 when the prefetcher
 * runs.  Other CPUs list every prefetcher knob as unsupported, naming
 * their vendor, family and model.  Whether a write sticks is for
 * mcp_tune.c to check: under a hypervisor these MSRs may read 0 and drop
 * writes.
 *
 * Locks: none here; mcp_tune.c calls in under mcp_tune_lock.
 */

#include <linux/kernel.h>
#include <linux/types.h>
#include <asm/msr.h>
#include <asm/processor.h>

#include "mcp_tune.h"

/* Registry order of the prefetcher knobs (mcp_tune.h). */
enum {
	MCP_PF_L2_STREAM,
	MCP_PF_L2_ADJACENT,
	MCP_PF_L1_STREAM,
	MCP_PF_L1_STRIDE,
	MCP_PF_L1_REGION,
	MCP_PF_L2_UPDOWN,
};

static_assert(MCP_PF_L2_UPDOWN + 1 == MCP_TUNE_NR_PREFETCH);

static const struct {
	const char *name;
	const char *what;
} mcp_pf_knobs[MCP_TUNE_NR_PREFETCH] = {
	[MCP_PF_L2_STREAM] = { "prefetch.l2_stream", "L2 stream prefetcher" },
	[MCP_PF_L2_ADJACENT] = { "prefetch.l2_adjacent",
				 "L2 adjacent-line prefetcher" },
	[MCP_PF_L1_STREAM] = { "prefetch.l1_stream",
			       "L1D stream (DCU) prefetcher" },
	[MCP_PF_L1_STRIDE] = { "prefetch.l1_stride",
			       "L1D stride (IP) prefetcher" },
	[MCP_PF_L1_REGION] = { "prefetch.l1_region", "L1D region prefetcher" },
	[MCP_PF_L2_UPDOWN] = { "prefetch.l2_updown",
			       "L2 up/down prefetcher" },
};

#define MCP_PF_NONE	(-1)

/**
 * struct mcp_pf_table - one documented register layout
 * @what:	the CPUs it covers, for the reason strings
 * @msr:	the register
 * @bit:	per knob, its disable bit or MCP_PF_NONE
 */
struct mcp_pf_table {
	const char *what;
	u32 msr;
	s8 bit[MCP_TUNE_NR_PREFETCH];
};

static const struct mcp_pf_table mcp_pf_core2 = {
	.what = "Intel Core 2 (IA32_MISC_ENABLE)",
	.msr = MSR_IA32_MISC_ENABLE,
	.bit = { 9, 19, 37, 39, MCP_PF_NONE, MCP_PF_NONE },
};

static const struct mcp_pf_table mcp_pf_intel_1a4 = {
	.what = "Intel MSR_MISC_FEATURE_CONTROL",
	.msr = 0x1a4,
	.bit = { 0, 1, 2, 3, MCP_PF_NONE, MCP_PF_NONE },
};

static const struct mcp_pf_table mcp_pf_zen4 = {
	.what = "AMD Zen 4 Prefetch Control",
	.msr = 0xc0000108,
	.bit = { 3, MCP_PF_NONE, 0, 1, 2, 5 },
};

/* Intel family 6 models by table (arch/x86/include/asm/intel-family.h). */
static const u8 mcp_pf_core2_models[] = {
	0x0f,	/* Merom */
	0x16,	/* Merom-L */
	0x17,	/* Penryn */
	0x1d,	/* Dunnington */
};

static const u8 mcp_pf_intel_1a4_models[] = {
	0x1a, 0x1e, 0x1f, 0x2e,		/* Nehalem EP, client, -, EX */
	0x25, 0x2c, 0x2f,		/* Westmere, EP, EX */
	0x2a, 0x2d,			/* Sandy Bridge, X */
	0x3a, 0x3e,			/* Ivy Bridge, X */
	0x3c, 0x3f, 0x45, 0x46,		/* Haswell, X, L, G */
	0x3d, 0x47, 0x4f, 0x56,		/* Broadwell, G, X, D */
	0x4e, 0x5e, 0x55,		/* Skylake L, client, X */
	0x8e, 0x9e, 0xa5, 0xa6,		/* Kaby/Coffee/Comet Lake */
	0x6a, 0x6c, 0x7d, 0x7e,		/* Ice Lake X, D, client, L */
	0x8c, 0x8d,			/* Tiger Lake L, client */
	0x8f,				/* Sapphire Rapids X */
};

static bool mcp_pf_model_in(const u8 *models, size_t n, u8 model)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (models[i] == model)
			return true;
	return false;
}

static const struct mcp_pf_table *mcp_pf_table_for(const struct cpuinfo_x86 *c)
{
	u8 model = c->x86_model;

	if (c->x86_vendor == X86_VENDOR_INTEL && c->x86 == 6) {
		if (mcp_pf_model_in(mcp_pf_core2_models,
				    ARRAY_SIZE(mcp_pf_core2_models), model))
			return &mcp_pf_core2;
		if (mcp_pf_model_in(mcp_pf_intel_1a4_models,
				    ARRAY_SIZE(mcp_pf_intel_1a4_models), model))
			return &mcp_pf_intel_1a4;
	}
	if (c->x86_vendor == X86_VENDOR_AMD && c->x86 == 0x19 &&
	    ((model >= 0x10 && model <= 0x1f) ||
	     (model >= 0x60 && model <= 0x7f) ||
	     (model >= 0xa0 && model <= 0xaf)))
		return &mcp_pf_zen4;
	return NULL;
}

/* The value is 1 while the prefetcher runs: its disable bit is clear. */
static int mcp_pf_read(const struct mcp_tune_knob *knob, unsigned int cpu,
		       u64 *val)
{
	u64 msr;
	int ret;

	ret = rdmsrl_safe_on_cpu(cpu, knob->reg, &msr);
	if (ret)
		return ret;
	*val = !(msr & knob->mask);
	return 0;
}

/* Read-modify-write of the one bit; only a change is written. */
static int mcp_pf_write(const struct mcp_tune_knob *knob, unsigned int cpu,
			u64 val)
{
	u64 old, new;
	int ret;

	ret = rdmsrl_safe_on_cpu(cpu, knob->reg, &old);
	if (ret)
		return ret;
	new = val ? old & ~knob->mask : old | knob->mask;
	if (new == old)
		return 0;
	return wrmsrl_safe_on_cpu(cpu, knob->reg, new);
}

/**
 * mcp_tune_prefetch_init() - fill in the prefetcher knobs for this CPU
 * @knobs:	MCP_TUNE_NR_PREFETCH registry entries
 *
 * Marks a knob unsupported, with the reason, when the boot CPU's model
 * has no table or its table has no such bit; mcp_tune.c then checks the
 * others by reading and writing them.
 */
void mcp_tune_prefetch_init(struct mcp_tune_knob *knobs)
{
	const struct cpuinfo_x86 *c = &boot_cpu_data;
	const struct mcp_pf_table *table = mcp_pf_table_for(c);
	unsigned int i;

	for (i = 0; i < MCP_TUNE_NR_PREFETCH; i++) {
		struct mcp_tune_knob *knob = &knobs[i];

		knob->name = mcp_pf_knobs[i].name;
		knob->scope = MCP_TUNE_SCOPE_CORE;
		knob->type = MCP_TUNE_TYPE_BOOL;
		knob->min = 0;
		knob->max = 1;
		knob->read = mcp_pf_read;
		knob->write = mcp_pf_write;
		if (!table) {
			knob->status = MCP_TUNE_UNSUPPORTED;
			snprintf(knob->reason, sizeof(knob->reason),
				 "CPU %.16s family 0x%x model 0x%x has no entry in the prefetcher table",
				 c->x86_vendor_id, c->x86, c->x86_model);
			continue;
		}
		if (table->bit[i] == MCP_PF_NONE) {
			knob->status = MCP_TUNE_UNSUPPORTED;
			snprintf(knob->reason, sizeof(knob->reason),
				 "%s has no %s control", table->what,
				 mcp_pf_knobs[i].what);
			continue;
		}
		knob->reg = table->msr;
		knob->mask = BIT_ULL(table->bit[i]);
		knob->status = MCP_TUNE_SUPPORTED;
		snprintf(knob->reason, sizeof(knob->reason),
			 "%s: MSR 0x%x bit %d disables the %s", table->what,
			 table->msr, table->bit[i], mcp_pf_knobs[i].what);
	}
}
