// SPDX-License-Identifier: GPL-2.0
/*
 * MCP (Model Control Protocol): the data-movement operators of the cpu
 * engine (TILE16, QUANT_I8, DEQUANT_I8).
 *
 * The kernel must not touch the FPU here, so floats are IEEE-754 binary32
 * bit patterns and every result is computed with integers, rounded as the
 * FPU would round it (half to even).  The functions are pure: no
 * allocation, no locks, no kernel calls, so tests/unit builds this file as
 * it is against a small shim of <linux/types.h> and compares it with the
 * C float operators.
 *
 * Locks: none.
 */

#include "mcp_graph.h"

#define F32_MANT_BITS	23
#define F32_MANT_MASK	((1U << F32_MANT_BITS) - 1)
#define F32_EXP_MASK	0xffU
#define F32_SIGN	0x80000000U
#define F32_INF		0x7f800000U
/* Exponent of the lowest mantissa bit of a subnormal: 2^-149. */
#define F32_MIN_EXP	(-149)

#define I8_MIN		(-128)
#define I8_MAX		127
/* A quotient this large saturates whatever the zero point. */
#define QUANT_SAT_BITS	10

/*
 * |f| = *mant * 2^*exp with the implicit bit in *mant; @bits is finite
 * and not zero.
 */
static void f32_split(u32 bits, u32 *mant, int *exp)
{
	u32 e = (bits >> F32_MANT_BITS) & F32_EXP_MASK;

	*mant = bits & F32_MANT_MASK;
	if (e) {
		*mant |= 1U << F32_MANT_BITS;
		*exp = (int)e - 1 + F32_MIN_EXP;
	} else {
		*exp = F32_MIN_EXP;
	}
}

bool mcp_graph_f32_positive(u32 bits)
{
	return bits != 0 && bits < F32_INF;
}

static s8 clamp_i8(s32 v)
{
	if (v < I8_MIN)
		return I8_MIN;
	if (v > I8_MAX)
		return I8_MAX;
	return (s8)v;
}

/*
 * round_half_even(|x| / scale), saturated at 2^QUANT_SAT_BITS: the exact
 * quotient num / den by shift-and-subtract (no 64-bit division, which
 * 32-bit kernels lack), then the remainder decides the rounding.
 */
static u32 quant_magnitude(u32 x_mant, int x_exp, u32 s_mant, int s_exp)
{
	int d = x_exp - s_exp;
	u64 num, den;
	u32 q = 0;
	int bit;

	/* Both mantissas are below 2^24: the quotient is >= 2^(d - 24). */
	if (d >= 24 + QUANT_SAT_BITS)
		return 1U << QUANT_SAT_BITS;
	/* ... and below 2^(d + 24): under 1/4 rounds to 0. */
	if (d <= -26)
		return 0;
	num = (u64)x_mant << (d > 0 ? d : 0);
	den = (u64)s_mant << (d < 0 ? -d : 0);
	if (num >= den << QUANT_SAT_BITS)
		return 1U << QUANT_SAT_BITS;
	for (bit = QUANT_SAT_BITS - 1; bit >= 0; bit--) {
		if (num >= den << bit) {
			num -= den << bit;
			q |= 1U << bit;
		}
	}
	/* num is now the remainder: above half, or a tie to even. */
	if (2 * num > den || (2 * num == den && (q & 1)))
		q++;
	return q;
}

static s8 quant_one(u32 x, u32 s_mant, int s_exp, s32 zero_point)
{
	u32 x_mant, mag;
	int x_exp;

	if ((x & ~F32_SIGN) > F32_INF)	/* NaN */
		return clamp_i8(zero_point);
	if ((x & ~F32_SIGN) == F32_INF)
		return x & F32_SIGN ? I8_MIN : I8_MAX;
	if (!(x & ~F32_SIGN))		/* +0, -0 */
		return clamp_i8(zero_point);
	f32_split(x, &x_mant, &x_exp);
	mag = quant_magnitude(x_mant, x_exp, s_mant, s_exp);
	return clamp_i8((x & F32_SIGN ? -(s32)mag : (s32)mag) + zero_point);
}

void mcp_graph_op_quant_i8(const u32 *in, s8 *out, u32 scale_bits,
			   s32 zero_point, u64 first, u64 last)
{
	u32 s_mant;
	int s_exp;
	u64 i;

	f32_split(scale_bits, &s_mant, &s_exp);
	for (i = first; i < last; i++)
		out[i] = quant_one(in[i], s_mant, s_exp, zero_point);
}

/* Index of the highest set bit of @v, which is not 0. */
static int top_bit(u64 v)
{
	int t = 0;

	while (v >>= 1)
		t++;
	return t;
}

/*
 * The f32 bits of v * scale, v a small non-zero integer: the product of
 * the integer and the mantissa is exact in 64 bits, then rounded to 24
 * significant bits.  Subnormal results are exact: they are multiples of
 * 2^-149 below 2^-126 and the product already is one.
 */
static u32 dequant_one(s32 v, u32 s_mant, int s_exp)
{
	u32 sign = v < 0 ? F32_SIGN : 0;
	u64 p = (u64)(v < 0 ? -v : v) * s_mant;
	int t, e, shift;
	u64 mant;

	t = top_bit(p);
	e = t + s_exp;			/* p * 2^s_exp is in [2^e, 2^(e+1)) */
	if (e < -126)
		return sign | (u32)(p << (s_exp - F32_MIN_EXP));
	shift = t - F32_MANT_BITS;
	if (shift > 0) {
		u64 rest = p & ((1ULL << shift) - 1);
		u64 half = 1ULL << (shift - 1);

		mant = p >> shift;
		if (rest > half || (rest == half && (mant & 1)))
			mant++;
		if (mant >> (F32_MANT_BITS + 1)) {	/* rounded up to 2^24 */
			mant >>= 1;
			e++;
		}
	} else {
		mant = p << -shift;
	}
	if (e > 127)
		return sign | F32_INF;
	return sign | (u32)(e + 127) << F32_MANT_BITS |
	       ((u32)mant & F32_MANT_MASK);
}

void mcp_graph_op_dequant_i8(const s8 *in, u32 *out, u32 scale_bits,
			     s32 zero_point, u64 first, u64 last)
{
	u32 s_mant;
	int s_exp;
	u64 i;

	f32_split(scale_bits, &s_mant, &s_exp);
	for (i = first; i < last; i++) {
		s32 v = (s32)in[i] - zero_point;

		out[i] = v ? dequant_one(v, s_mant, s_exp) : 0;
	}
}

/*
 * Tile t of the NHWC input is rows [16 t, 16 t + 16) of the flattened
 * [b * h] dimension, each row block [s][d]; in the output it is one
 * contiguous [s][d][16] block.  Element types of the real sizes keep the
 * inner loop a single load and store.
 */
static void tile16_u32(const u32 *in, u32 *out, u32 s, u32 d,
		       u64 first, u64 last)
{
	u64 t, r;
	u32 k, i;

	for (t = first; t < last; t++) {
		for (r = 0; r < s; r++) {
			u32 *o = out + (t * s + r) * d * 16;
			const u32 *row = in + (t * 16 * s + r) * d;

			for (k = 0; k < d; k++)
				for (i = 0; i < 16; i++)
					o[k * 16 + i] = row[(u64)i * s * d + k];
		}
	}
}

static void tile16_u8(const u8 *in, u8 *out, u32 s, u32 d,
		      u64 first, u64 last)
{
	u64 t, r;
	u32 k, i;

	for (t = first; t < last; t++) {
		for (r = 0; r < s; r++) {
			u8 *o = out + (t * s + r) * d * 16;
			const u8 *row = in + (t * 16 * s + r) * d;

			for (k = 0; k < d; k++)
				for (i = 0; i < 16; i++)
					o[k * 16 + i] = row[(u64)i * s * d + k];
		}
	}
}

/* Any other element size: each element as a run of bytes. */
static void tile16_bytes(const u8 *in, u8 *out, u32 s, u32 row_bytes,
			 u32 elem_bytes, u64 first, u64 last)
{
	u32 d = row_bytes / elem_bytes;
	u64 t, r;
	u32 k, i, b;

	for (t = first; t < last; t++) {
		for (r = 0; r < s; r++) {
			u8 *o = out + (t * s + r) * row_bytes * 16;
			const u8 *row = in + (t * 16 * s + r) * row_bytes;

			for (k = 0; k < d; k++)
				for (i = 0; i < 16; i++)
					for (b = 0; b < elem_bytes; b++)
						o[(k * 16 + i) * elem_bytes + b] =
							row[(u64)i * s * row_bytes +
							    k * elem_bytes + b];
		}
	}
}

/* @h is implied by [first, last): the caller counted the tiles with it. */
void mcp_graph_op_tile16(const void *in, void *out, u32 h, u32 s,
			 u32 row_bytes, u32 elem_bytes, u64 first, u64 last)
{
	if (elem_bytes == 4)
		tile16_u32(in, out, s, row_bytes / 4, first, last);
	else if (elem_bytes == 1)
		tile16_u8(in, out, s, row_bytes, first, last);
	else
		tile16_bytes(in, out, s, row_bytes, elem_bytes, first, last);
}
