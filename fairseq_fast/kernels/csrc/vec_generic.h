/* vec_generic.h: the vector operations of small_gemm.c and attention.c in plain C, for the
 * library's generic level (any CPU the compiler targets; loader.py builds it with
 * -ffp-contract=off).
 *
 * A vector is 8 floats in a struct; each operation is a loop over its lanes, which the compiler
 * turns into the target's own SIMD (SSE2 on baseline x86-64, NEON on AArch64). A multiply-add
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
typedef struct {
  float v[LANES];
} vec;

#define LANEWISE(EXPR)                                                                         \
  vec r;                                                                                       \
  for (int i = 0; i < LANES; i++) r.v[i] = (EXPR);                                             \
  return r

static inline vec v_load(const float *p) { LANEWISE(p[i]); }
static inline void v_store(float *p, vec a) { memcpy(p, a.v, sizeof a.v); }
static inline vec v_splat(float x) { LANEWISE(x); }
static inline vec v_zero(void) { LANEWISE(0.0f); }
static inline vec v_add(vec a, vec b) { LANEWISE(a.v[i] + b.v[i]); }
static inline vec v_sub(vec a, vec b) { LANEWISE(a.v[i] - b.v[i]); }
static inline vec v_mul(vec a, vec b) { LANEWISE(a.v[i] * b.v[i]); }
static inline vec v_fmadd(vec a, vec b, vec c) { LANEWISE(a.v[i] * b.v[i] + c.v[i]); }
/* a where a > b, else b (so b where either is NaN: the x86 max instruction's rule) */
static inline vec v_max(vec a, vec b) { LANEWISE(a.v[i] > b.v[i] ? a.v[i] : b.v[i]); }
static inline vec v_floor(vec a) { LANEWISE(floorf(a.v[i])); }

/* 2^n for integer-valued n in [-126, 127] */
static inline vec v_pow2(vec n) {
  vec r;
  for (int i = 0; i < LANES; i++) {
    const uint32_t bits = (uint32_t)((int32_t)n.v[i] + 127) << 23;
    memcpy(&r.v[i], &bits, sizeof bits);
  }
  return r;
}

/* a, or 0 where x < lim (NaN x keeps a) */
static inline vec v_zero_below(vec a, vec x, float lim) { LANEWISE(x.v[i] < lim ? 0.0f : a.v[i]); }

/* the first n < LANES lanes loaded (the others `fill`), stored, or kept (the others 0) */
static inline vec v_load_tail(const float *p, int64_t n, vec fill) { LANEWISE(i < n ? p[i] : fill.v[i]); }
static inline void v_store_tail(float *p, vec a, int64_t n) { memcpy(p, a.v, n * sizeof(float)); }
static inline vec v_keep_tail(vec a, int64_t n) { LANEWISE(i < n ? a.v[i] : 0.0f); }

static inline float v_hsum(vec a) {
  float s = a.v[0];
  for (int i = 1; i < LANES; i++) s += a.v[i];
  return s;
}

static inline float v_hmax(vec a) {
  float m = a.v[0];
  for (int i = 1; i < LANES; i++) m = a.v[i] > m ? a.v[i] : m;
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

static inline vec v_load_f16(const uint16_t *p) { LANEWISE(f16_to_f32(p[i])); }

#undef LANEWISE
#endif
