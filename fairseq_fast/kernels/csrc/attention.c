/* attention.c: softmax(q k^T + mask) v for a decoder step, one call for all rows and heads.
 *
 * Built by loader.py once per instruction-set level (AVX-512, AVX2, generic C: the macros below)
 * into one library, and called through ctypes (cpu_attention.py). A decoder step attends with a few queries per row (a verify window, one
 * token per beam) over a few dozen keys: torch spends most of such a call in per-op set-up
 * (two batched matmuls, a masked fill, a softmax, the transposes between them); here one pass per
 * (row, head) keeps the scores in a small buffer.
 *
 *   q     [B, H, n, D] float32, any strides with D contiguous; multiplied by `scale` first
 *         (rounded as torch's q * scaling; 1 when q is already scaled)
 *   k, v  [B / group, H, T, D] float32, the same strides for both, D contiguous; row b reads
 *         k[b / group] (a sentence's `group` beams share its encoder keys)
 *   kv_rows [B / group] int64 or NULL: sentence s reads k[kv_rows[s]] (and that row of pad)
 *         instead of k[s]: encoder keys kept in place while sentences leave a beam search
 *   out   [B, n, H * D] float32, contiguous (the layout the output projection takes)
 *   start [B] or NULL: causal limit, query j of row b sees keys t <= start[b] + j (and < T)
 *   pad   [B / group, T] or NULL: nonzero = key masked (source padding)
 *   origin [B, origin_stride] int64 or NULL: row b's key t lies in cache row origin[b, t]
 *         (k + origin[b, t] * kb + t * kt) instead of row b / group: a beam-search cache that
 *         records each row's history instead of copying it when beams are reordered
 *         (decoder_state.py); group must be 1
 *   probs [B, H, n, T] float32 contiguous or NULL: receives the attention probabilities (0 for
 *         masked keys), as torch's softmax would give them (up to rounding)
 *
 * Numerics as torch's float32 path up to rounding: scores, minus their maximum, exp, divided by
 * their sum, times v; masked keys get probability 0 (they are skipped). exp is a Cephes-style
 * polynomial (<= 2 ulp on the range used, inputs <= 0), a vector of keys at a time. Sums are
 * split for speed (a vector's lanes, four keys' dot products reduced together, even and odd
 * keys of the weighted sum), so the last bits differ from a key-by-key order, as torch's own
 * kernels differ from each other.
 */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "kernels.h"

#if defined(__AVX512F__) && !defined(FF_GENERIC)
#include <immintrin.h>
#define LANES 16
typedef __m512 vec;
#define LOAD(p) _mm512_loadu_ps(p)
#define STORE(p, v) _mm512_storeu_ps(p, v)
#define SPLAT(x) _mm512_set1_ps(x)
#define FMADD(a, b, c) _mm512_fmadd_ps(a, b, c)
#define ADD(a, b) _mm512_add_ps(a, b)
#define SUB(a, b) _mm512_sub_ps(a, b)
#define MUL(a, b) _mm512_mul_ps(a, b)
#define MAX(a, b) _mm512_max_ps(a, b) /* b where either is NaN */
#define ZERO() _mm512_setzero_ps()
#define HSUM(v) _mm512_reduce_add_ps(v)
#define HMAX(v) _mm512_reduce_max_ps(v)

/* s[0..3] = the sums of a0 .. a3: one transposing reduction instead of four */
static inline void hsum4(vec a0, vec a1, vec a2, vec a3, float *s) {
  const __m512 x01 = _mm512_add_ps(_mm512_shuffle_f32x4(a0, a1, _MM_SHUFFLE(1, 0, 1, 0)),
                                   _mm512_shuffle_f32x4(a0, a1, _MM_SHUFFLE(3, 2, 3, 2)));
  const __m512 x23 = _mm512_add_ps(_mm512_shuffle_f32x4(a2, a3, _MM_SHUFFLE(1, 0, 1, 0)),
                                   _mm512_shuffle_f32x4(a2, a3, _MM_SHUFFLE(3, 2, 3, 2)));
  /* 128-bit lane i: four partial sums of a_i */
  __m512 y = _mm512_add_ps(_mm512_shuffle_f32x4(x01, x23, _MM_SHUFFLE(2, 0, 2, 0)),
                           _mm512_shuffle_f32x4(x01, x23, _MM_SHUFFLE(3, 1, 3, 1)));
  y = _mm512_add_ps(y, _mm512_permute_ps(y, _MM_SHUFFLE(2, 3, 0, 1)));
  y = _mm512_add_ps(y, _mm512_permute_ps(y, _MM_SHUFFLE(1, 0, 3, 2)));
  const __m512i firsts = _mm512_set_epi32(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 12, 8, 4, 0);
  _mm_storeu_ps(s, _mm512_castps512_ps128(_mm512_permutexvar_ps(firsts, y)));
}

#define FLOOR(v) _mm512_roundscale_ps(v, _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC)
/* 2^n for integer-valued n in [-126, 127] */
#define POW2(n)                                                                                \
  _mm512_castsi512_ps(_mm512_slli_epi32(                                                       \
      _mm512_add_epi32(_mm512_cvttps_epi32(n), _mm512_set1_epi32(127)), 23))
/* v, or 0 where x < lim (NaN x keeps v) */
#define ZERO_BELOW(v, x, lim) \
  _mm512_maskz_mov_ps((__mmask16)~_mm512_cmp_ps_mask(x, SPLAT(lim), _CMP_LT_OQ), v)
/* the first n < LANES lanes: loaded (the others `fill`), stored, or kept (the others 0) */
#define TAIL_MASK(n) ((__mmask16)((1u << (n)) - 1))
#define LOAD_TAIL(p, n, fill) _mm512_mask_loadu_ps(fill, TAIL_MASK(n), p)
#define STORE_TAIL(p, v, n) _mm512_mask_storeu_ps(p, TAIL_MASK(n), v)
#define KEEP_TAIL(v, n) _mm512_maskz_mov_ps(TAIL_MASK(n), v)
#elif defined(__AVX2__) && defined(__FMA__) && !defined(FF_GENERIC)
#include <immintrin.h>
#define LANES 8
typedef __m256 vec;
#define LOAD(p) _mm256_loadu_ps(p)
#define STORE(p, v) _mm256_storeu_ps(p, v)
#define SPLAT(x) _mm256_set1_ps(x)
#define FMADD(a, b, c) _mm256_fmadd_ps(a, b, c)
#define ADD(a, b) _mm256_add_ps(a, b)
#define SUB(a, b) _mm256_sub_ps(a, b)
#define MUL(a, b) _mm256_mul_ps(a, b)
#define MAX(a, b) _mm256_max_ps(a, b) /* b where either is NaN */
#define ZERO() _mm256_setzero_ps()
/* the 8 lanes of v combined with OP (OP_SS on the last pair) */
#define DEFINE_HREDUCE(NAME, OP, OP_SS)                                                        \
  static inline float NAME(__m256 v) {                                                        \
    __m128 s = OP(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));                    \
    s = OP(s, _mm_movehl_ps(s, s));                                                           \
    s = OP_SS(s, _mm_movehdup_ps(s));                                                         \
    return _mm_cvtss_f32(s);                                                                  \
  }
DEFINE_HREDUCE(hsum256, _mm_add_ps, _mm_add_ss)
DEFINE_HREDUCE(hmax256, _mm_max_ps, _mm_max_ss)
#define HSUM(v) hsum256(v)
#define HMAX(v) hmax256(v)

static inline void hsum4(vec a0, vec a1, vec a2, vec a3, float *s) {
  const __m256 h = _mm256_hadd_ps(_mm256_hadd_ps(a0, a1), _mm256_hadd_ps(a2, a3));
  _mm_storeu_ps(s, _mm_add_ps(_mm256_castps256_ps128(h), _mm256_extractf128_ps(h, 1)));
}

#define FLOOR(v) _mm256_round_ps(v, _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC)
#define POW2(n)                                                                                \
  _mm256_castsi256_ps(_mm256_slli_epi32(                                                       \
      _mm256_add_epi32(_mm256_cvttps_epi32(n), _mm256_set1_epi32(127)), 23))
#define ZERO_BELOW(v, x, lim) _mm256_andnot_ps(_mm256_cmp_ps(x, SPLAT(lim), _CMP_LT_OQ), v)
static inline __m256i tail_mask(int64_t n) {
  return _mm256_cmpgt_epi32(_mm256_set1_epi32((int)n), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}
#define LOAD_TAIL(p, n, fill) \
  _mm256_blendv_ps(fill, _mm256_maskload_ps(p, tail_mask(n)), _mm256_castsi256_ps(tail_mask(n)))
#define STORE_TAIL(p, v, n) _mm256_maskstore_ps(p, tail_mask(n), v)
#define KEEP_TAIL(v, n) _mm256_and_ps(v, _mm256_castsi256_ps(tail_mask(n)))
#else /* generic C (vec_generic.h) */
#include "vec_generic.h"
#define LOAD(p) v_load(p)
#define STORE(p, v) v_store(p, v)
#define SPLAT(x) v_splat(x)
#define FMADD(a, b, c) v_fmadd(a, b, c)
#define ADD(a, b) v_add(a, b)
#define SUB(a, b) v_sub(a, b)
#define MUL(a, b) v_mul(a, b)
#define MAX(a, b) v_max(a, b) /* b where either is NaN */
#define ZERO() v_zero()
#define HSUM(v) v_hsum(v)
#define HMAX(v) v_hmax(v)
static inline void hsum4(vec a0, vec a1, vec a2, vec a3, float *s) {
  s[0] = v_hsum(a0), s[1] = v_hsum(a1), s[2] = v_hsum(a2), s[3] = v_hsum(a3);
}
#define FLOOR(v) v_floor(v)
#define POW2(n) v_pow2(n)
#define ZERO_BELOW(v, x, lim) v_zero_below(v, x, lim)
#define LOAD_TAIL(p, n, fill) v_load_tail(p, n, fill)
#define STORE_TAIL(p, v, n) v_store_tail(p, v, n)
#define KEEP_TAIL(v, n) v_keep_tail(v, n)
#endif

/* exp(x) for x <= 0, LANES at a time; 0 below -87 (torch would give a denormal there: < 2e-38) */
static inline vec exp_nonpositive_v(vec x) {
  const vec c = MAX(SPLAT(-87.0f), x); /* NaN stays NaN */
  const vec n = FLOOR(FMADD(c, SPLAT(1.44269504088896341f), SPLAT(0.5f)));
  vec r = FMADD(n, SPLAT(-0.693359375f), c);
  r = FMADD(n, SPLAT(2.12194440e-4f), r);
  vec p = SPLAT(1.9875691500e-4f);
  p = FMADD(p, r, SPLAT(1.3981999507e-3f));
  p = FMADD(p, r, SPLAT(8.3334519073e-3f));
  p = FMADD(p, r, SPLAT(4.1665795894e-2f));
  p = FMADD(p, r, SPLAT(1.6666665459e-1f));
  p = FMADD(p, r, SPLAT(5.0000001201e-1f));
  p = ADD(FMADD(MUL(p, r), r, r), SPLAT(1.0f));
  return ZERO_BELOW(MUL(p, POW2(n)), x, -87.0f);
}

/* s[t] = q . k[t] for t < limit (masked: -inf); returns the maximum. D = NV * LANES: four keys
 * at a time, each with its own accumulator over D, the four reduced together (hsum4, which
 * reduces each of them the same way), the last one to three as well: so a key's score is the
 * same number whatever T is and wherever the key lies. With it, keys appended after a row's
 * own, masked, change none of its bits (their probability is exactly 0, and the sums only add
 * zeros): in-flight batching pads a newcomer's source on the right to the rows' longest.
 * Generic D: a scalar loop. */
#define DEFINE_SCORES_AT(NV, NAME, OFF)                                                        \
  static inline __attribute__((always_inline)) void NAME##_span(                             \
      const float *q, const float *k, int64_t kt, const int64_t *org, int64_t kb, int64_t t,  \
      int64_t limit, float *s) {                                                              \
    vec qv[NV];                                                                               \
    for (int i = 0; i < NV; i++) qv[i] = LOAD(q + i * LANES);                                 \
    for (; t + 4 <= limit; t += 4) {                                                          \
      const float *k0 = k + t * kt + OFF(t), *k1 = k + (t + 1) * kt + OFF(t + 1);             \
      const float *k2 = k + (t + 2) * kt + OFF(t + 2), *k3 = k + (t + 3) * kt + OFF(t + 3);   \
      vec a0 = ZERO(), a1 = ZERO(), a2 = ZERO(), a3 = ZERO();                                 \
      for (int i = 0; i < NV; i++) {                                                          \
        a0 = FMADD(qv[i], LOAD(k0 + i * LANES), a0);                                          \
        a1 = FMADD(qv[i], LOAD(k1 + i * LANES), a1);                                          \
        a2 = FMADD(qv[i], LOAD(k2 + i * LANES), a2);                                          \
        a3 = FMADD(qv[i], LOAD(k3 + i * LANES), a3);                                          \
      }                                                                                       \
      hsum4(a0, a1, a2, a3, s + t);                                                           \
    }                                                                                         \
    if (t < limit) { /* the last 1 to 3 keys: reduced as a group too, with zeros */          \
      vec a[4] = {ZERO(), ZERO(), ZERO(), ZERO()};                                            \
      for (int64_t u = t; u < limit; u++) {                                                   \
        const float *ku = k + u * kt + OFF(u);                                                \
        for (int i = 0; i < NV; i++) a[u - t] = FMADD(qv[i], LOAD(ku + i * LANES), a[u - t]); \
      }                                                                                       \
      float last[4];                                                                          \
      hsum4(a[0], a[1], a[2], a[3], last);                                                    \
      for (int64_t u = t; u < limit; u++) s[u] = last[u - t];                                 \
    }                                                                                         \
  }                                                                                           \
  static float NAME(const float *q, const float *k, int64_t kt, const int64_t *org,         \
                    int64_t kb, int64_t limit, const uint8_t *pad, float *s) {                \
    NAME##_span(q, k, kt, org, kb, 0, limit, s);                                              \
    return mask_and_max(s, limit, pad);                                                       \
  }

static inline float mask_and_max(float *s, int64_t limit, const uint8_t *pad) {
  if (pad)
    for (int64_t t = 0; t < limit; t++)
      if (pad[t]) s[t] = -INFINITY;
  const vec inf = SPLAT(-INFINITY);
  vec m = inf;
  int64_t t = 0;
  for (; t + LANES <= limit; t += LANES) m = MAX(LOAD(s + t), m); /* NaN scores ignored */
  if (t < limit) m = MAX(LOAD_TAIL(s + t, limit - t, inf), m);
  return HMAX(m);
}

/* key/value t's offset from row b's own: none, or from the row its origin names; each kernel
 * comes in both kinds */
#define OWN(t) 0
#define ORIGIN(t) (org[t] * kb)
#define DEFINE_SCORES(NV)                                                                      \
  DEFINE_SCORES_AT(NV, scores_##NV, OWN) DEFINE_SCORES_AT(NV, scores_origin_##NV, ORIGIN)

DEFINE_SCORES(1)
DEFINE_SCORES(2)
DEFINE_SCORES(4)
DEFINE_SCORES(8)

static float scores_any(const float *q, int64_t D, const float *k, int64_t kt,
                        const int64_t *org, int64_t kb, int64_t limit, const uint8_t *pad,
                        float *s) {
  for (int64_t t = 0; t < limit; t++) {
    const float *kr = k + t * kt + (org ? ORIGIN(t) : 0);
    float acc = 0.0f;
    for (int64_t d = 0; d < D; d++) acc += q[d] * kr[d];
    s[t] = acc;
  }
  return mask_and_max(s, limit, pad);
}

/* o = sum_t p[t] v[t] with D = NV * LANES outputs in registers; generic D: scalar loop */
#define DEFINE_WEIGHTED_SUM_AT(NV, NAME, OFF)                                                  \
  static inline __attribute__((always_inline)) void NAME##_span(                             \
      const float *p, const float *v, int64_t kt, const int64_t *org, int64_t kb, int64_t t,  \
      int64_t limit, vec *acc, vec *odd) {                                                    \
    for (; t + 2 <= limit; t += 2) {                                                          \
      const vec w0 = SPLAT(p[t]), w1 = SPLAT(p[t + 1]);                                       \
      const float *v0 = v + t * kt + OFF(t), *v1 = v + (t + 1) * kt + OFF(t + 1);             \
      for (int i = 0; i < NV; i++) {                                                          \
        acc[i] = FMADD(w0, LOAD(v0 + i * LANES), acc[i]);                                     \
        odd[i] = FMADD(w1, LOAD(v1 + i * LANES), odd[i]);                                     \
      }                                                                                       \
    }                                                                                         \
    if (t < limit) {                                                                          \
      const vec w = SPLAT(p[t]);                                                              \
      const float *vt = v + t * kt + OFF(t);                                                  \
      for (int i = 0; i < NV; i++) acc[i] = FMADD(w, LOAD(vt + i * LANES), acc[i]);           \
    }                                                                                         \
  }                                                                                           \
  static void NAME(const float *p, const float *v, int64_t kt, const int64_t *org,          \
                   int64_t kb, int64_t limit, float *o) {                                     \
    vec acc[NV], odd[NV]; /* even and odd keys: two independent chains of additions */     \
    for (int i = 0; i < NV; i++) acc[i] = odd[i] = ZERO();                                    \
    NAME##_span(p, v, kt, org, kb, 0, limit, acc, odd);                                       \
    for (int i = 0; i < NV; i++) STORE(o + i * LANES, ADD(acc[i], odd[i]));                   \
  }

#define DEFINE_WEIGHTED_SUM(NV)                                                                \
  DEFINE_WEIGHTED_SUM_AT(NV, weighted_sum_##NV, OWN)                                           \
  DEFINE_WEIGHTED_SUM_AT(NV, weighted_sum_origin_##NV, ORIGIN)

DEFINE_WEIGHTED_SUM(1)
DEFINE_WEIGHTED_SUM(2)
DEFINE_WEIGHTED_SUM(4)
DEFINE_WEIGHTED_SUM(8)

static void weighted_sum_any(const float *p, int64_t D, const float *v, int64_t kt,
                             const int64_t *org, int64_t kb, int64_t limit, float *o) {
  memset(o, 0, D * sizeof(float));
  for (int64_t t = 0; t < limit; t++) {
    const float *vt = v + t * kt + (org ? ORIGIN(t) : 0);
    for (int64_t d = 0; d < D; d++) o[d] += p[t] * vt[d];
  }
}

/* the vector kernels by [origin given][D / LANES] (NULL: none, the scalar loop serves) */
typedef float (*scores_fn)(const float *, const float *, int64_t, const int64_t *, int64_t,
                           int64_t, const uint8_t *, float *);
typedef void (*weighted_sum_fn)(const float *, const float *, int64_t, const int64_t *, int64_t,
                                int64_t, float *);
static const scores_fn SCORES[2][9] = {
    {NULL, scores_1, scores_2, NULL, scores_4, NULL, NULL, NULL, scores_8},
    {NULL, scores_origin_1, scores_origin_2, NULL, scores_origin_4, NULL, NULL, NULL,
     scores_origin_8}};
static const weighted_sum_fn WEIGHTED_SUMS[2][9] = {
    {NULL, weighted_sum_1, weighted_sum_2, NULL, weighted_sum_4, NULL, NULL, NULL,
     weighted_sum_8},
    {NULL, weighted_sum_origin_1, weighted_sum_origin_2, NULL, weighted_sum_origin_4, NULL,
     NULL, NULL, weighted_sum_origin_8}};

/* s[0 .. limit) = softmax of the scores there, whose maximum is max; probs (NULL, or T floats)
 * receives them, 0 past limit. Every key masked (max = -inf): torch's softmax gives NaN, so o
 * (D floats) and probs are NaN and 0 is returned (no weighted sum to do); 1 otherwise. */
static int softmax_scores(float *s, float max, int64_t limit, int64_t T, float *probs, float *o,
                          int64_t D) {
  if (max == -INFINITY) {
    for (int64_t d = 0; d < D; d++) o[d] = NAN;
    if (probs)
      for (int64_t t = 0; t < T; t++) probs[t] = NAN;
    return 0;
  }
  const vec vmax = SPLAT(max);
  vec vsum = ZERO();
  int64_t t = 0;
  for (; t + LANES <= limit; t += LANES) {
    const vec e = exp_nonpositive_v(SUB(LOAD(s + t), vmax));
    STORE(s + t, e);
    vsum = ADD(vsum, e);
  }
  if (t < limit) { /* the other lanes: max - max = 0, exp 1, dropped */
    const vec e = KEEP_TAIL(exp_nonpositive_v(SUB(LOAD_TAIL(s + t, limit - t, vmax), vmax)),
                            limit - t);
    STORE_TAIL(s + t, e, limit - t);
    vsum = ADD(vsum, e);
  }
  const float sum = HSUM(vsum);
  const float inv = 1.0f / sum;
#pragma omp simd
  for (int64_t t = 0; t < limit; t++) s[t] *= inv;
  if (probs) {
    memcpy(probs, s, limit * sizeof(float));
    memset(probs + limit, 0, (T - limit) * sizeof(float));
  }
  return 1;
}

/* org: NULL, or row b's origins (k and v then point at cache row 0, head h) */
static void attend_one(const float *q, int64_t qn, float scale, const float *k, const float *v,
                       int64_t kt, const int64_t *org, int64_t kb, float *out, int64_t out_n,
                       int64_t n, int64_t D, int64_t T, int64_t first_limit, const uint8_t *pad,
                       float *s, float *probs) {
  const int64_t nv = D % LANES == 0 && D / LANES <= 8 ? D / LANES : 0;
  const scores_fn scores = SCORES[org != NULL][nv];
  const weighted_sum_fn weighted_sum = WEIGHTED_SUMS[org != NULL][nv];
  float qj[D];
  for (int64_t j = 0; j < n; j++) {
    for (int64_t d = 0; d < D; d++) qj[d] = q[j * qn + d] * scale; /* as torch's q * scaling */
    float *o = out + j * out_n;
    const int64_t limit = first_limit + j < T ? first_limit + j : T;
    float max = scores ? scores(qj, k, kt, org, kb, limit, pad, s)
                       : scores_any(qj, D, k, kt, org, kb, limit, pad, s);
    if (!softmax_scores(s, max, limit, T, probs ? probs + j * T : NULL, o, D)) continue;
    if (weighted_sum)
      weighted_sum(s, v, kt, org, kb, limit, o);
    else
      weighted_sum_any(s, D, v, kt, org, kb, limit, o);
  }
}

/* A sentence's beams on one head at once: G rows of n queries each, every query seeing all T
 * keys (encoder attention: no causal limit, no origin), D = NV * LANES. The keys and values
 * are read a tile at a time, every query in turn on a tile while it is in L1, so that they
 * come from memory once for all the beams instead of once per beam and then from L2 for the
 * others. Each query's operations are attend_one's in the same order (its scores four keys at
 * a time from key 0, its weighted sum's even and odd chains carried from tile to tile), so
 * each row gets attend_one's bits. q: row g's query j at q + g * qb + j * qn; out: row g's at
 * out + g * out_b + j * out_n; probs: NULL or row g's [n, T] at probs + g * probs_b;
 * s: G * n * T floats. */
#define ATTEND_TILE 64 /* keys per tile (a multiple of 4): 16 KB of keys at D = 64 */
#define DEFINE_ATTEND_GROUP(NV)                                                                \
  static void attend_group_##NV(const float *q, int64_t qb, int64_t qn, float scale,          \
                                const float *k, const float *v, int64_t kt, float *out,       \
                                int64_t out_b, int64_t out_n, int64_t G, int64_t n,           \
                                int64_t T, const uint8_t *pad, float *s, float *probs,        \
                                int64_t probs_b) {                                            \
    const int64_t D = NV * LANES, Q = G * n;                                                  \
    float qs[Q][D];                                                                           \
    int live[Q];                                                                              \
    for (int64_t i = 0; i < Q; i++)                                                           \
      for (int64_t d = 0; d < D; d++) qs[i][d] = q[i / n * qb + i % n * qn + d] * scale;      \
    for (int64_t t0 = 0; t0 < T; t0 += ATTEND_TILE) {                                         \
      const int64_t t1 = t0 + ATTEND_TILE < T ? t0 + ATTEND_TILE : T;                         \
      for (int64_t i = 0; i < Q; i++)                                                         \
        scores_##NV##_span(qs[i], k, kt, NULL, 0, t0, t1, s + i * T);                         \
    }                                                                                         \
    for (int64_t i = 0; i < Q; i++) {                                                         \
      float *si = s + i * T;                                                                  \
      live[i] = softmax_scores(si, mask_and_max(si, T, pad), T, T,                           \
                               probs ? probs + i / n * probs_b + i % n * T : NULL,          \
                               out + i / n * out_b + i % n * out_n, D);                       \
    }                                                                                         \
    vec acc[Q][NV], odd[Q][NV];                                                               \
    for (int64_t i = 0; i < Q; i++)                                                           \
      for (int j = 0; j < NV; j++) acc[i][j] = odd[i][j] = ZERO();                            \
    for (int64_t t0 = 0; t0 < T; t0 += ATTEND_TILE) {                                         \
      const int64_t t1 = t0 + ATTEND_TILE < T ? t0 + ATTEND_TILE : T;                         \
      for (int64_t i = 0; i < Q; i++)                                                         \
        if (live[i])                                                                          \
          weighted_sum_##NV##_span(s + i * T, v, kt, NULL, 0, t0, t1, acc[i], odd[i]);        \
    }                                                                                         \
    for (int64_t i = 0; i < Q; i++) {                                                         \
      if (!live[i]) continue;                                                                 \
      float *o = out + i / n * out_b + i % n * out_n;                                         \
      for (int j = 0; j < NV; j++) STORE(o + j * LANES, ADD(acc[i][j], odd[i][j]));           \
    }                                                                                         \
  }
DEFINE_ATTEND_GROUP(1)
DEFINE_ATTEND_GROUP(2)
DEFINE_ATTEND_GROUP(4)
DEFINE_ATTEND_GROUP(8)
typedef void (*attend_group_fn)(const float *, int64_t, int64_t, float, const float *,
                                const float *, int64_t, float *, int64_t, int64_t, int64_t,
                                int64_t, int64_t, const uint8_t *, float *, float *, int64_t);
static const attend_group_fn ATTEND_GROUPS[9] = {NULL, attend_group_1, attend_group_2, NULL,
                                                 attend_group_4, NULL, NULL, NULL,
                                                 attend_group_8};
#define GROUP_MAX_QUERIES 16     /* queries attended together (the accumulators on the stack) */
#define GROUP_MAX_FLOATS 65536   /* their scores, on the thread's stack */

/* The (row, head) pairs shared among the threads of the enclosing parallel region (an
 * orphaned `omp for`, ending with its barrier: decoder_layer.c runs a whole layer in one
 * region); outside one, the calling thread does them all. fa_attend_f32 opens a region.
 * cluster (dividing B): rows taken `cluster` at a time, head by head (row, head order within
 * a cluster: h-major), so that rows reading the same keys -- a sentence's beams: its encoder
 * keys, or the history they share through `origin` -- read them while they are in L1. */
void fa_attend_units(const float *q, int64_t qb, int64_t qh, int64_t qn, float scale,
                     const float *k, const float *v, int64_t kb, int64_t kh, int64_t kt,
                     float *out, int64_t B, int64_t H, int64_t n, int64_t D, int64_t T,
                     int64_t group, const int64_t *kv_rows, const int64_t *start,
                     const uint8_t *pad, const int64_t *origin, int64_t origin_stride,
                     float *probs, int64_t cluster) {
  if (cluster < 1 || B % cluster) cluster = 1;
  const int64_t nv = D % LANES == 0 && D / LANES <= 8 ? D / LANES : 0;
  if (group > 1 && cluster == group && !origin && !start && ATTEND_GROUPS[nv] && T > 0 &&
      group * n <= GROUP_MAX_QUERIES && group * n * T <= GROUP_MAX_FLOATS) {
    /* encoder attention of beams sharing their sentence's keys: a sentence's beams at once */
#pragma omp for schedule(static)
    for (int64_t u = 0; u < B / group * H; u++) {
      const int64_t c = u / H, h = u % H, b = c * group;
      const int64_t src = kv_rows ? kv_rows[c] : c;
      float s[group * n * T];
      ATTEND_GROUPS[nv](q + b * qb + h * qh, qb, qn, scale, k + src * kb + h * kh,
                        v + src * kb + h * kh, kt, out + b * n * H * D + h * D, n * H * D,
                        H * D, group, n, T, pad ? pad + src * T : NULL, s,
                        probs ? probs + (b * H + h) * n * T : NULL, H * n * T);
    }
    return;
  }
#pragma omp for schedule(static)
  for (int64_t u = 0; u < B * H; u++) {
    const int64_t c = u / (cluster * H), h = u / cluster % H, b = c * cluster + u % cluster;
    const int64_t src = origin ? 0 : kv_rows ? kv_rows[b / group] : b / group;
    float s[T > 0 ? T : 1];
    attend_one(q + b * qb + h * qh, qn, scale, k + src * kb + h * kh, v + src * kb + h * kh,
               kt, origin ? origin + b * origin_stride : NULL, kb, out + b * n * H * D + h * D,
               H * D, n, D, T, start ? start[b] + 1 : T, pad ? pad + src * T : NULL, s,
               probs ? probs + (b * H + h) * n * T : NULL);
  }
}

/* fa_attend_units for ragged rows: row b's queries are rows off[b] .. off[b + 1] - 1 of q
 * (row stride qn, head h at + h * qh) and of out ([off[B], H * D]); no origin. probs: NULL, or
 * [B, H, n, T] receiving row b's query j at [b, h, j] (n >= every row's count; a row of fewer
 * queries, or none, leaves the rest unwritten). */
void fa_attend_ragged_units(const float *q, int64_t qn, int64_t qh, float scale, const float *k,
                            const float *v, int64_t kb, int64_t kh, int64_t kt, float *out,
                            int64_t B, int64_t H, int64_t D, int64_t T, int64_t group,
                            const int64_t *kv_rows, const int64_t *start, const uint8_t *pad,
                            const int64_t *off, float *probs, int64_t n_probs) {
#pragma omp for schedule(static)
  for (int64_t u = 0; u < B * H; u++) {
    const int64_t b = u / H, h = u % H, n = off[b + 1] - off[b];
    if (n <= 0) continue;
    const int64_t src = kv_rows ? kv_rows[b / group] : b / group;
    float s[T > 0 ? T : 1];
    attend_one(q + off[b] * qn + h * qh, qn, scale, k + src * kb + h * kh, v + src * kb + h * kh,
               kt, NULL, kb, out + off[b] * H * D + h * D, H * D, n, D, T,
               start ? start[b] + 1 : T, pad ? pad + src * T : NULL, s,
               probs ? probs + (b * H + h) * n_probs * T : NULL);
  }
}

void fa_attend_f32(const float *q, int64_t qb, int64_t qh, int64_t qn, float scale,
                   const float *k, const float *v, int64_t kb, int64_t kh, int64_t kt,
                   float *out, int64_t B, int64_t H, int64_t n, int64_t D, int64_t T,
                   int64_t group, const int64_t *kv_rows, const int64_t *start,
                   const uint8_t *pad, const int64_t *origin, int64_t origin_stride,
                   float *probs, int threads) {
  const int64_t units = B * H;
  const int64_t work = units * n * T * D;
#pragma omp parallel num_threads(threads) if (threads > 1 && units > 1 && work >= (1 << 16))
  fa_attend_units(q, qb, qh, qn, scale, k, v, kb, kh, kt, out, B, H, n, D, T, group, kv_rows,
                  start, pad, origin, origin_stride, probs, group);
}

/* out [B, m] = probs [B, H, m] averaged over heads (summed in head order, then / H: the
 * attention fairseq's decoder returns; torch's mean over a middle dimension of this size costs
 * more than the attention it averages). */
void fa_head_mean(const float *probs, int64_t B, int64_t H, int64_t m, float *out) {
  for (int64_t b = 0; b < B; b++) {
    const float *p = probs + b * H * m;
    float *o = out + b * m;
    for (int64_t i = 0; i < m; i++) o[i] = p[i];
    for (int64_t h = 1; h < H; h++)
      for (int64_t i = 0; i < m; i++) o[i] += p[h * m + i];
    for (int64_t i = 0; i < m; i++) o[i] /= (float)H;
  }
}
