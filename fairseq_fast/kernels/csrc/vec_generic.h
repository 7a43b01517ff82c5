/* vec_generic.h: the vector operations of small_gemm.c and attention.c in plain C, for the
 * library's generic level (any CPU the compiler targets; loader.py builds it with
 * -ffp-contract=off).
 *
 * A vector is 8 floats as a GCC/Clang vector type, which the compiler maps to the target's own
 * SIMD (two SSE2 registers on baseline x86-64, NEON on AArch64). A multiply-add
 * rounds the product and then the sum: this level has no fused multiply-add instruction to rely
 * on (a library call per lane would be far slower), so its last bits differ from the AVX levels'.
 * Within the level every operation is the same whatever the row count, thread count or split, as
 * at the other levels.
 */
#ifndef FAIRSEQ_FAST_VEC_GENERIC_H
#define FAIRSEQ_FAST_VEC_GENERIC_H

#include <math.h>
#include <stdint.h>
#include <string.h>

#define LANES 8
typedef float vec __attribute__((vector_size(4 * LANES)));     /* GCC and Clang vectors */
typedef int32_t ivec __attribute__((vector_size(4 * LANES)));  /* lane masks: -1 or 0 */

static inline vec v_load(const float *p) {
  vec r;
  memcpy(&r, p, sizeof r);
  return r;
}
static inline void v_store(float *p, vec a) { memcpy(p, &a, sizeof a); }
static inline vec v_splat(float x) { return (vec){x, x, x, x, x, x, x, x}; }
static inline vec v_zero(void) { return v_splat(0.0f); }
static inline vec v_add(vec a, vec b) { return a + b; }
static inline vec v_sub(vec a, vec b) { return a - b; }
static inline vec v_mul(vec a, vec b) { return a * b; }
static inline vec v_fmadd(vec a, vec b, vec c) { return a * b + c; }
static inline vec v_select(ivec mask, vec a, vec b) { /* a where mask, else b */
  return (vec)((mask & (ivec)a) | (~mask & (ivec)b));
}
/* a where a > b, else b (so b where either is NaN: the x86 max instruction's rule) */
static inline vec v_max(vec a, vec b) { return v_select(a > b, a, b); }
static inline vec v_floor(vec a) {
  for (int i = 0; i < LANES; i++) a[i] = floorf(a[i]);
  return a;
}

/* 2^n for integer-valued n in [-126, 127] */
static inline vec v_pow2(vec n) {
  ivec bits;
  for (int i = 0; i < LANES; i++) bits[i] = ((int32_t)n[i] + 127) << 23;
  return (vec)bits;
}

/* a, or 0 where x < lim (NaN x keeps a) */
static inline vec v_zero_below(vec a, vec x, float lim) {
  return v_select(x < v_splat(lim), v_zero(), a);
}

/* the first n < LANES lanes loaded (the others `fill`), stored, or kept (the others 0) */
static inline vec v_load_tail(const float *p, int64_t n, vec fill) {
  for (int64_t i = 0; i < n; i++) fill[i] = p[i];
  return fill;
}
static inline void v_store_tail(float *p, vec a, int64_t n) { memcpy(p, &a, n * sizeof(float)); }
static inline vec v_keep_tail(vec a, int64_t n) {
  for (int64_t i = n; i < LANES; i++) a[i] = 0.0f;
  return a;
}

static inline float v_hsum(vec a) {
  float s = a[0];
  for (int i = 1; i < LANES; i++) s += a[i];
  return s;
}

static inline float v_hmax(vec a) {
  float m = a[0];
  for (int i = 1; i < LANES; i++) m = a[i] > m ? a[i] : m;
  return m;
}

/* float16 bits -> float32, exactly (F16C's conversion, in C) */
static inline float f16_to_f32(uint16_t h) {
  const uint32_t sign = (uint32_t)(h & 0x8000u) << 16, exponent = (h >> 10) & 0x1fu,
                 mantissa = h & 0x3ffu;
  uint32_t bits;
  if (exponent == 0x1f) { /* inf, NaN (quietened, as F16C does) */
    bits = sign | 0x7f800000u | (mantissa << 13) | (mantissa ? 0x400000u : 0);
  } else if (exponent) {
    bits = sign | ((exponent + 112) << 23) | (mantissa << 13);
  } else { /* zero or subnormal: mantissa * 2^-24, exact in float32 */
    const float f = (float)mantissa * 0x1p-24f;
    memcpy(&bits, &f, sizeof bits);
    bits |= sign;
  }
  float f;
  memcpy(&f, &bits, sizeof f);
  return f;
}

static inline vec v_load_f16(const uint16_t *p) {
  vec r;
  for (int i = 0; i < LANES; i++) r[i] = f16_to_f32(p[i]);
  return r;
}
#endif
