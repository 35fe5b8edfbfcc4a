/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * A tiny binary floating-point number for the eBPF congestion controls: value = m * 2^e,
 * with a 32-bit mantissa (m is 0 or in [2^31, 2^32)), packed in one u64 (m in the low
 * half, e in the high half). BPF has no floats and no 128-bit
 * integers, and the coupled rules multiply and divide rates that span 2^-4 to 2^37 packets
 * per microsecond; one fixed scale cannot hold them without flooring something to 0
 * (the out-of-tree kernel's LIA and OLIA do exactly that at large windows). Every result
 * here keeps 31 significant bits, whatever the magnitudes.
 *
 * Included by mlab_math.h; compiled for BPF and, in tests, for the host.
 */
#ifndef MLAB_NUM_H
#define MLAB_NUM_H

#ifdef __bpf__
#define MLAB_INLINE static __always_inline
/* Global functions: the verifier checks each once, not once per call site and path (the
 * normalisation's branches, inlined everywhere, exceed its million-instruction budget). */
#define MLAB_FUNC __attribute__((noinline))
#else
#include <stdbool.h>
#include <stdint.h>
typedef uint8_t u8;
typedef uint16_t u16;
typedef uint32_t u32;
typedef uint64_t u64;
typedef int32_t s32;
typedef int64_t s64;
#define MLAB_INLINE static inline __attribute__((always_inline))
#define MLAB_FUNC static inline
#endif

typedef u64 mlab_num;

MLAB_INLINE u64 mlab_m(mlab_num a)
{
	return (u32)a;
}

MLAB_INLINE s32 mlab_e(mlab_num a)
{
	return (s32)(a >> 32);
}

MLAB_INLINE mlab_num mlab_pack(u64 m, s32 e)
{
	return ((u64)(u32)e << 32) | (u32)m;
}

/* Shifts m so that its top bit is bit 31 (steps of 16, 8, 4, 2, 1: no loop, no clz). */
MLAB_FUNC mlab_num mlab_norm(u64 m, s32 e)
{
	if (!m)
		return 0;
	if (m >> 48) { m >>= 16; e += 16; }
	if (m >> 40) { m >>= 8; e += 8; }
	if (m >> 36) { m >>= 4; e += 4; }
	if (m >> 34) { m >>= 2; e += 2; }
	if (m >> 33) { m >>= 1; e += 1; }
	if (m >> 32) { m >>= 1; e += 1; }
	if (!(m >> 16)) { m <<= 16; e -= 16; }
	if (!(m >> 24)) { m <<= 8; e -= 8; }
	if (!(m >> 28)) { m <<= 4; e -= 4; }
	if (!(m >> 30)) { m <<= 2; e -= 2; }
	if (!(m >> 31)) { m <<= 1; e -= 1; }
	return mlab_pack(m, e);
}

MLAB_INLINE mlab_num mlab_from_u64(u64 v)
{
	return mlab_norm(v, 0);
}

MLAB_FUNC mlab_num mlab_mul(mlab_num a, mlab_num b)
{
	if (!mlab_m(a) || !mlab_m(b))
		return 0;
	return mlab_norm(mlab_m(a) * mlab_m(b), mlab_e(a) + mlab_e(b));
}

/* a / b; 0 when b is 0 (callers never divide by a zero rate: they check first, and this
 * keeps a mistake from becoming a fault). */
MLAB_FUNC mlab_num mlab_div(mlab_num a, mlab_num b)
{
	if (!mlab_m(a) || !mlab_m(b))
		return 0;
	return mlab_norm((mlab_m(a) << 32) / mlab_m(b), mlab_e(a) - mlab_e(b) - 32);
}

/* b's mantissa with 31 guard bits, shifted right to an exponent `shift` above its own. */
MLAB_INLINE u64 mlab_aligned(mlab_num b, s32 shift)
{
	if (shift > 62)
		return 0;
	return (mlab_m(b) << 31) >> shift;
}

MLAB_FUNC mlab_num mlab_add(mlab_num a, mlab_num b)
{
	mlab_num t;

	if (!mlab_m(a))
		return b;
	if (!mlab_m(b))
		return a;
	if (mlab_e(a) < mlab_e(b)) {
		t = a;
		a = b;
		b = t;
	}
	return mlab_norm((mlab_m(a) << 31) + mlab_aligned(b, mlab_e(a) - mlab_e(b)),
			 mlab_e(a) - 31);
}

/* a - b, or 0 when b >= a. */
MLAB_FUNC mlab_num mlab_sub(mlab_num a, mlab_num b)
{
	u64 bm;

	if (!mlab_m(b))
		return a;
	if (!mlab_m(a) || mlab_e(a) < mlab_e(b))
		return 0;
	bm = mlab_aligned(b, mlab_e(a) - mlab_e(b));
	if (bm >= (mlab_m(a) << 31))
		return 0;
	return mlab_norm((mlab_m(a) << 31) - bm, mlab_e(a) - 31);
}

/* -1, 0, 1 as a <, ==, > b. */
MLAB_FUNC int mlab_cmp(mlab_num a, mlab_num b)
{
	if (!mlab_m(a) || !mlab_m(b))
		return (mlab_m(a) != 0) - (mlab_m(b) != 0);
	if (mlab_e(a) != mlab_e(b))
		return mlab_e(a) < mlab_e(b) ? -1 : 1;
	if (mlab_m(a) != mlab_m(b))
		return mlab_m(a) < mlab_m(b) ? -1 : 1;
	return 0;
}

MLAB_INLINE mlab_num mlab_max(mlab_num a, mlab_num b)
{
	return mlab_cmp(a, b) >= 0 ? a : b;
}

MLAB_INLINE mlab_num mlab_min(mlab_num a, mlab_num b)
{
	return mlab_cmp(a, b) <= 0 ? a : b;
}

/* floor(a * 2^shift), saturating at 2^62. */
MLAB_FUNC u64 mlab_to_fixed(mlab_num a, s32 shift)
{
	s32 s = mlab_e(a) + shift;

	if (!mlab_m(a) || s < -63)
		return 0;
	if (s < 0)
		return mlab_m(a) >> -s;
	if (s > 30)
		return (u64)1 << 62;
	return mlab_m(a) << s;
}

#endif /* MLAB_NUM_H */
