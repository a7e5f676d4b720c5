// SPDX-License-Identifier: GPL-2.0-only
/*
 * The cpu engine's graph operators (kmod/mcp_graph_ops.c), built here as
 * they are in the kernel, against the C float operators and plain index
 * loops.  The kernel computes floats with integers only, so these
 * compare bits: dequantize must equal the C float product exactly, and
 * quantize must round the exact quotient half to even (the double
 * quotient of two floats is close enough to the exact one that rint()
 * of it rounds the same way).
 *
 * tests/unit/kshim stands in for the kernel headers mcp_graph.h uses.
 */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "../../kmod/mcp_graph_ops.c"

/* Fixed seed: a failure is reproducible. */
static uint64_t rng_state = 0x6d63705f67726170ULL;

static uint64_t rng_next(void)
{
	uint64_t z = (rng_state += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static uint32_t f2b(float f)
{
	uint32_t b;

	memcpy(&b, &f, sizeof(b));
	return b;
}

static float b2f(uint32_t b)
{
	float f;

	memcpy(&f, &b, sizeof(f));
	return f;
}

/* A finite f32 > 0 from the whole range, subnormals included. */
static uint32_t random_scale(void)
{
	uint32_t b;

	do
		b = (uint32_t)rng_next() & 0x7fffffffU;
	while (b == 0 || b >= 0x7f800000U);
	return b;
}

static int32_t random_zero_point(void)
{
	return (int32_t)(rng_next() % 256) - 128;
}

static int8_t ref_quant(float x, float scale, int32_t zp)
{
	double q;

	if (isnan(x))
		return (int8_t)zp;
	q = rint((double)x / (double)scale) + zp;
	if (q < -128)
		return -128;
	if (q > 127)
		return 127;
	return (int8_t)q;
}

static int8_t kernel_quant(float x, float scale, int32_t zp)
{
	u32 in = f2b(x);
	s8 out = 0x55;

	mcp_graph_op_quant_i8(&in, &out, f2b(scale), zp, 0, 1);
	return out;
}

Test(graph_ops, f32_positive)
{
	cr_expect(mcp_graph_f32_positive(f2b(1.0f)));
	cr_expect(mcp_graph_f32_positive(f2b(FLT_MAX)));
	cr_expect(mcp_graph_f32_positive(f2b(FLT_MIN)));
	cr_expect(mcp_graph_f32_positive(f2b(FLT_TRUE_MIN)));
	cr_expect_not(mcp_graph_f32_positive(f2b(0.0f)));
	cr_expect_not(mcp_graph_f32_positive(f2b(-0.0f)));
	cr_expect_not(mcp_graph_f32_positive(f2b(-1.0f)));
	cr_expect_not(mcp_graph_f32_positive(f2b(-FLT_TRUE_MIN)));
	cr_expect_not(mcp_graph_f32_positive(f2b(INFINITY)));
	cr_expect_not(mcp_graph_f32_positive(f2b(-INFINITY)));
	cr_expect_not(mcp_graph_f32_positive(0x7fc00000U));	/* NaN */
	cr_expect_not(mcp_graph_f32_positive(0x7f800001U));	/* sNaN */
	cr_expect_not(mcp_graph_f32_positive(0xffc00000U));	/* -NaN */

	for (int i = 0; i < 1000000; i++) {
		uint32_t b = (uint32_t)rng_next();
		float f = b2f(b);

		cr_assert_eq(mcp_graph_f32_positive(b), isfinite(f) && f > 0,
			     "bits 0x%08x", b);
	}
}

Test(graph_ops, quant_special_values)
{
	static const uint32_t nans[] = {
		0x7fc00000U, 0x7f800001U, 0x7fffffffU, 0xffc00000U, 0xff800001U,
	};

	for (int32_t zp = -128; zp <= 127; zp++) {
		for (size_t i = 0; i < sizeof(nans) / sizeof(nans[0]); i++) {
			u32 in = nans[i];
			s8 out;

			mcp_graph_op_quant_i8(&in, &out, f2b(0.5f), zp, 0, 1);
			cr_assert_eq(out, zp, "NaN 0x%08x zp %d", nans[i], zp);
		}
		cr_assert_eq(kernel_quant(INFINITY, 1.0f, zp), 127);
		cr_assert_eq(kernel_quant(-INFINITY, 1.0f, zp), -128);
		cr_assert_eq(kernel_quant(INFINITY, FLT_MAX, zp), 127);
		cr_assert_eq(kernel_quant(-INFINITY, FLT_TRUE_MIN, zp), -128);
		cr_assert_eq(kernel_quant(0.0f, 1.0f, zp), zp);
		cr_assert_eq(kernel_quant(-0.0f, FLT_TRUE_MIN, zp), zp);
		cr_assert_eq(kernel_quant(FLT_MAX, FLT_TRUE_MIN, zp), 127);
		cr_assert_eq(kernel_quant(-FLT_MAX, FLT_TRUE_MIN, zp), -128);
		cr_assert_eq(kernel_quant(FLT_TRUE_MIN, FLT_MAX, zp), zp);
		cr_assert_eq(kernel_quant(FLT_TRUE_MIN, FLT_TRUE_MIN, zp),
			     zp == 127 ? 127 : zp + 1);
	}
}

/* Exact halves round to even, on both sides of zero and of the zero point. */
Test(graph_ops, quant_ties_to_even)
{
	static const float scales[] = { 1.0f, 0.25f, 3.0f, 0.1f, 1e-40f, 1e30f };

	for (size_t s = 0; s < sizeof(scales) / sizeof(scales[0]); s++) {
		float scale = scales[s];

		for (int n = -140; n <= 140; n++) {
			double half = ((double)n + 0.5) * (double)scale;
			float x = (float)half;
			double even;

			/* Only where (n + 0.5) * scale is a float: a true tie. */
			if ((double)x != half || (double)x / scale != n + 0.5)
				continue;
			even = (n % 2 == 0) ? n : n + 1;
			for (int32_t zp = -3; zp <= 3; zp++) {
				double want = even + zp;

				want = want < -128 ? -128 : want > 127 ? 127 : want;
				cr_assert_eq(kernel_quant(x, scale, zp), (int8_t)want,
					     "x %a scale %a zp %d", x, scale, zp);
			}
		}
	}
	cr_expect_eq(kernel_quant(0.5f, 1.0f, 0), 0);
	cr_expect_eq(kernel_quant(1.5f, 1.0f, 0), 2);
	cr_expect_eq(kernel_quant(2.5f, 1.0f, 0), 2);
	cr_expect_eq(kernel_quant(-0.5f, 1.0f, 0), 0);
	cr_expect_eq(kernel_quant(-1.5f, 1.0f, 0), -2);
	cr_expect_eq(kernel_quant(-2.5f, 1.0f, 0), -2);
	cr_expect_eq(kernel_quant(nextafterf(0.5f, 1.0f), 1.0f, 0), 1);
	cr_expect_eq(kernel_quant(nextafterf(2.5f, 3.0f), 1.0f, 0), 3);
	cr_expect_eq(kernel_quant(nextafterf(-2.5f, -3.0f), 1.0f, 0), -3);
}

/* Any bits against any scale: mostly saturated or zero results. */
Test(graph_ops, quant_random_bits)
{
	enum { N = 2000000 };

	for (int i = 0; i < N; i++) {
		uint32_t xb = (uint32_t)rng_next();
		uint32_t sb = random_scale();
		int32_t zp = random_zero_point();
		float x = b2f(xb), scale = b2f(sb);

		cr_assert_eq(kernel_quant(x, scale, zp), ref_quant(x, scale, zp),
			     "x 0x%08x scale 0x%08x zp %d", xb, sb, zp);
	}
}

/* x near k * scale for |k| <= 300: the results that are not saturated. */
Test(graph_ops, quant_random_in_range)
{
	enum { N = 2000 };
	static u32 in[1024];
	static s8 out[1024];

	for (int i = 0; i < N; i++) {
		uint32_t sb = random_scale();
		int32_t zp = random_zero_point();
		float scale = b2f(sb);

		for (int k = 0; k < 1024; k++) {
			double v = ((double)(rng_next() % 600001) - 300000.0) / 1000.0;
			float x = (float)(v * scale);

			/* Nudge some onto the neighbours of the float. */
			if (k % 3 == 1)
				x = nextafterf(x, INFINITY);
			else if (k % 3 == 2)
				x = nextafterf(x, -INFINITY);
			in[k] = f2b(x);
		}
		mcp_graph_op_quant_i8(in, out, sb, zp, 0, 1024);
		for (int k = 0; k < 1024; k++)
			cr_assert_eq(out[k], ref_quant(b2f(in[k]), scale, zp),
				     "x 0x%08x scale 0x%08x zp %d", in[k], sb, zp);
	}
}

/* Every q and zero point, many scales: bit-identical to the C product. */
static void check_dequant_scale(uint32_t sb)
{
	static s8 q[256];
	static u32 out[256];
	float scale = b2f(sb);

	for (int i = 0; i < 256; i++)
		q[i] = (s8)(i - 128);
	for (int32_t zp = -128; zp <= 127; zp += 1 + (int32_t)(rng_next() % 24)) {
		mcp_graph_op_dequant_i8(q, out, sb, zp, 0, 256);
		for (int i = 0; i < 256; i++) {
			float want = (float)(q[i] - zp) * scale;
			float want_d = (float)((double)(q[i] - zp) * (double)scale);

			cr_assert_eq(f2b(want), f2b(want_d));
			cr_assert_eq(out[i], f2b(want),
				     "q %d zp %d scale 0x%08x: 0x%08x, want 0x%08x (%a)",
				     q[i], zp, sb, out[i], f2b(want), want);
		}
	}
}

Test(graph_ops, dequant_edges)
{
	static const uint32_t scales[] = {
		0x00000001U,	/* FLT_TRUE_MIN */
		0x00000003U, 0x007fffffU, 0x00400001U,	/* subnormals */
		0x00800000U,	/* FLT_MIN */
		0x00800001U, 0x3f800000U, 0x3f7fffffU, 0x3dcccccdU,
		0x7f7fffffU,	/* FLT_MAX: overflows for |v| >= 2 */
		0x7b800000U, 0x7b7fffffU, 0x7b800001U,	/* near FLT_MAX / 255 */
		0x7c000000U, 0x7e7fffffU,
	};

	for (size_t i = 0; i < sizeof(scales) / sizeof(scales[0]); i++)
		check_dequant_scale(scales[i]);
	/* q == zero point: +0.0 whatever the scale. */
	{
		s8 q = 7;
		u32 out = 0xdeadbeefU;

		mcp_graph_op_dequant_i8(&q, &out, f2b(FLT_MAX), 7, 0, 1);
		cr_expect_eq(out, 0U);
	}
}

Test(graph_ops, dequant_random_scales)
{
	/* ~12 zero points x 256 q per scale: several million products. */
	for (int i = 0; i < 2000; i++)
		check_dequant_scale(random_scale());
	/* Scales near the overflow and subnormal edges. */
	for (int i = 0; i < 500; i++) {
		check_dequant_scale(0x7b000000U + (uint32_t)(rng_next() % 0x01000000U));
		check_dequant_scale(0x00000001U + (uint32_t)(rng_next() % 0x01000000U));
	}
}

/* out[b][h/16][s][d][h%16] = in[b][h][s][d], by the definition. */
static void ref_tile16(const uint8_t *in, uint8_t *out, uint32_t b, uint32_t h,
		       uint32_t s, uint32_t d, uint32_t elem)
{
	for (uint32_t ib = 0; ib < b; ib++)
		for (uint32_t ih = 0; ih < h; ih++)
			for (uint32_t is = 0; is < s; is++)
				for (uint32_t id = 0; id < d; id++) {
					size_t src = (((size_t)ib * h + ih) * s + is) * d + id;
					size_t dst = (((((size_t)ib * (h / 16) + ih / 16) * s + is) *
						       d + id) * 16) + ih % 16;

					memcpy(out + dst * elem, in + src * elem, elem);
				}
}

static void check_tile16(uint32_t b, uint32_t h, uint32_t s, uint32_t d,
			 uint32_t elem)
{
	size_t bytes = (size_t)b * h * s * d * elem;
	uint64_t tiles = (uint64_t)b * (h / 16);
	uint8_t *in = malloc(bytes), *want = malloc(bytes);
	/* One canary byte past the end. */
	uint8_t *got = malloc(bytes + 1);

	cr_assert(in && want && got);
	for (size_t i = 0; i < bytes; i++)
		in[i] = (uint8_t)rng_next();
	ref_tile16(in, want, b, h, s, d, elem);

	memset(got, 0xa5, bytes + 1);
	mcp_graph_op_tile16(in, got, h, s, d * elem, elem, 0, tiles);
	cr_assert_eq(memcmp(got, want, bytes), 0, "b %u h %u s %u d %u elem %u",
		     b, h, s, d, elem);
	cr_assert_eq(got[bytes], 0xa5);

	/* In parts, as the engine does between reschedules: same bytes, and
	 * a part writes only its own tiles. */
	memset(got, 0xa5, bytes + 1);
	for (uint64_t t = 0; t < tiles; t += 2) {
		uint64_t end = t + 2 < tiles ? t + 2 : tiles;
		size_t tile_bytes = (size_t)16 * s * d * elem;

		mcp_graph_op_tile16(in, got, h, s, d * elem, elem, t, end);
		cr_assert_eq(got[end * tile_bytes], 0xa5);
	}
	cr_assert_eq(memcmp(got, want, bytes), 0, "parts: b %u h %u s %u d %u elem %u",
		     b, h, s, d, elem);
	free(in);
	free(want);
	free(got);
}

Test(graph_ops, tile16_f32)
{
	check_tile16(1, 16, 1, 8, 4);
	check_tile16(2, 32, 3, 8, 4);
	check_tile16(1, 64, 7, 16, 4);
	check_tile16(3, 16, 5, 24, 4);
	check_tile16(2, 48, 9, 64, 4);
}

Test(graph_ops, tile16_i8)
{
	check_tile16(1, 16, 1, 32, 1);
	check_tile16(2, 32, 4, 64, 1);
	check_tile16(3, 48, 3, 96, 1);
	check_tile16(1, 128, 2, 32, 1);
}

/* Sizes no dtype has today go through the byte-run path. */
Test(graph_ops, tile16_other_sizes)
{
	check_tile16(2, 32, 3, 16, 2);
	check_tile16(1, 16, 2, 4, 8);
	check_tile16(2, 16, 3, 32, 3);
}
