/* small_gemm.c: y[r, o] = sum_k x[r, k] * w[o, k] (+ b[o]) for a few rows (a decoder step).
 *
 * Built by loader.py once per instruction-set level (AVX-512, AVX2, generic C: the macros below)
 * into one library, and called through ctypes (small_gemm.py). The weight is packed once (small_gemm.py) into blocks of BLOCK output features:
 * p[block][k][j] = w[block * BLOCK + j][k], zero-padded past the last output; as float32, or as
 * float16 when every weight is a float16 value (then the float32 products are the same numbers:
 * float16 -> float32 is exact).
 *
 * Each output is one accumulator that adds x[r, k] * w[o, k] for k = 0, 1, ... in order with fused
 * multiply-adds, then the bias: the same operations for any row count, thread count, weight
 * storage and chunking (below), so results never depend on how a call was split. The AVX-512 and
 * AVX2 levels give the same bits; the generic level rounds each product before adding it
 * (vec_generic.h), so its last bits are its own.
 *
 * Memory and arithmetic overlap: a block read by one row group (batch 1, a verify window) is
 * streamed with software prefetch a few k-steps ahead; a block read by several row groups is
 * read in chunks of KC k-steps, every group in turn on a chunk while the next one is
 * prefetched, so the weights come from memory once and the later groups read them from L1
 * (their partial sums wait in a per-thread buffer between chunks).
 *
 * Optional epilogue, in this order: + residual[r, o] (a [R, N] tensor), then relu. Each is the
 * same float32 operation torch's add / relu would apply to the stored result, so fusing them
 * changes no bit; it saves the decoder a tensor op per use.
 */
#include <math.h>
#include <omp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kernels.h"

#if defined(__AVX512F__) && !defined(FF_GENERIC)
#include <immintrin.h>
#define LANES 16
#define ROWS 6 /* 6 rows x 4 vectors = 24 accumulators + 4 weights + 1 broadcast <= 32 zmm */
typedef __m512 vec;
#define LOAD_F32(p) _mm512_loadu_ps(p)
#define LOAD_F16(p) _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)(p)))
#define SPLAT(v) _mm512_set1_ps(v)
#define FMADD(a, b, c) _mm512_fmadd_ps(a, b, c)
#define ZERO() _mm512_setzero_ps()
#define ADD(a, b) _mm512_add_ps(a, b)
#define STORE(p, v) _mm512_storeu_ps(p, v)
#define RELU(v) _mm512_max_ps(_mm512_setzero_ps(), v) /* NaN stays NaN (second operand) */
#elif defined(__AVX2__) && defined(__FMA__) && defined(__F16C__) && !defined(FF_GENERIC)
#include <immintrin.h>
#define LANES 8
#define ROWS 3 /* 3 x 4 accumulators + 1 broadcast; weights as FMA memory operands: <= 16 ymm */
typedef __m256 vec;
#define LOAD_F32(p) _mm256_loadu_ps(p)
#define LOAD_F16(p) _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(p)))
#define SPLAT(v) _mm256_set1_ps(v)
#define FMADD(a, b, c) _mm256_fmadd_ps(a, b, c)
#define ZERO() _mm256_setzero_ps()
#define ADD(a, b) _mm256_add_ps(a, b)
#define STORE(p, v) _mm256_storeu_ps(p, v)
#define RELU(v) _mm256_max_ps(_mm256_setzero_ps(), v) /* NaN stays NaN (second operand) */
#else /* generic C (vec_generic.h) */
#include "vec_generic.h"
#define ROWS 2
#define LOAD_F32(p) v_load(p)
#define LOAD_F16(p) v_load_f16(p)
#define SPLAT(v) v_splat(v)
#define FMADD(a, b, c) v_fmadd(a, b, c)
#define ZERO() v_zero()
#define ADD(a, b) v_add(a, b)
#define STORE(p, v) v_store(p, v)
#define RELU(v) v_max(v_zero(), v) /* NaN stays NaN (second operand) */
#endif
#define BLOCK (4 * LANES)

/* the last row group of a call, nr < ROWS rows, each count a constant for the compiler */
#if ROWS == 6
#define SMALLER_GROUP(FN, nr, ...)                                                             \
  switch (nr) {                                                                                \
    case 1: FN(1, __VA_ARGS__); break;                                                         \
    case 2: FN(2, __VA_ARGS__); break;                                                         \
    case 3: FN(3, __VA_ARGS__); break;                                                         \
    case 4: FN(4, __VA_ARGS__); break;                                                         \
    default: FN(5, __VA_ARGS__); break;                                                        \
  }
#elif ROWS == 3
#define SMALLER_GROUP(FN, nr, ...)                                                             \
  switch (nr) {                                                                                \
    case 1: FN(1, __VA_ARGS__); break;                                                         \
    default: FN(2, __VA_ARGS__); break;                                                        \
  }
#else /* ROWS == 2 */
#define SMALLER_GROUP(FN, nr, ...) FN(1, __VA_ARGS__)
#endif

/* Software prefetch into L2, PF k-steps ahead. A block read by one row group streams from
 * memory: with 5 or 6 rows the FMAs fill the out-of-order window and the hardware prefetcher
 * alone keeps too few lines in flight (a memory-bound weight then takes clearly longer for 5
 * rows than for 1; with this, about as long). Below that it depends on the CPU (pf_min_rows):
 * on AMD's, 1 to 4 rows keep the hardware prefetcher's stream alone, which is faster there
 * (with the software prefetch a 4-row group is slower than a 6-row one); on Intel's, every
 * group prefetches: 2 to 4 rows without it take longer than 5 with it, and one row streaming a
 * float16 weight (a batch-1 step of a checkpoint stored in half precision) reads it clearly
 * slower than its float32 copy, which it halves, without. The distance is not a power of two
 * times 4 KB: 4, 16 or 32 KB ahead (16, 64, 128 k-steps of float32) slows a 6-row call of a
 * large weight where 12 KB does not (nor 5, 6, 10, 20, 24 or 28 KB: likely the prefetched line
 * and the one being loaded fall in the same cache set at a power-of-two distance). A block read
 * by several row groups is read chunk by chunk (below): then the groups share the prefetching
 * of the next chunk (group i of n takes every n-th k-step), so that memory streams while any of
 * them computes, not only while the first does. */
#define PF_K 48 /* k-steps ahead for a block streamed once (12 KB of float32 at AVX-512) */
#define PF_MIN_ROWS pf_min_rows() /* the fewest rows a group streamed once prefetches */
#define KC 128 /* k-steps per chunk: 32 KB of float32 weights, within L1 */
#define PREFETCH(wk, WTYPE, pf)                                                                \
  do {                                                                                         \
    const char *at = (const char *)((wk) + (pf) * BLOCK);                                      \
    for (int l = 0; l < (int)(BLOCK * sizeof(WTYPE)); l += 64)                                 \
      __builtin_prefetch(at + l, 0, 2); /* into L2 (prefetcht1 on x86) */                      \
  } while (0)

/* PF_MIN_ROWS: 2 with 3-row groups (AVX2) and 2-row ones (generic); with 6-row groups
 * (AVX-512), 1 on an Intel CPU and 5 elsewhere (above). Read once. */
static int pf_min_rows(void) {
#if ROWS == 6 && (defined(__x86_64__) || defined(__i386__))
  static int rows = 0; /* threads may race to set it: each sets the same value */
  int r = __atomic_load_n(&rows, __ATOMIC_RELAXED);
  if (!r) {
    __builtin_cpu_init();
    r = __builtin_cpu_is("intel") ? 1 : 5;
    __atomic_store_n(&rows, r, __ATOMIC_RELAXED);
  }
  return r;
#else
  return 2;
#endif
}

int sg_block(void) { return BLOCK; }

/* -- packing -----------------------------------------------------------------------------------
 * Once per weight, in the threads of the call: a scan (is every value a float16 number, is
 * every value finite), then the blocks written k-major. The same results at every level. */

/* whether v is a float16 number: ±0, ±inf, or finite with no bits float16 would drop (NaN is
 * not: its float16 copy does not compare equal) */
static inline int f16_exact(float v) {
  uint32_t x;
  memcpy(&x, &v, sizeof x);
  const uint32_t a = x & 0x7fffffffu;
  if (a == 0 || a == 0x7f800000u) return 1;
  const int e = (int)(a >> 23) - 127;
  if (e > 15 || e < -24) return 0; /* too large (NaN too), or below float16's smallest */
  const int drop = e >= -14 ? 13 : -1 - e; /* normal, or subnormal in float16 */
  return (a & ((1u << drop) - 1u)) == 0;
}

/* the float16 bits of v, a float16 number */
static inline uint16_t f16_bits(float v) {
  uint32_t x;
  memcpy(&x, &v, sizeof x);
  const uint16_t sign = (uint16_t)((x >> 16) & 0x8000u);
  const uint32_t a = x & 0x7fffffffu;
  if (a == 0) return sign;
  if (a == 0x7f800000u) return sign | 0x7c00u;
  const int e = (int)(a >> 23) - 127;
  const uint32_t m = a & 0x7fffffu;
  if (e >= -14) return sign | (uint16_t)((e + 15) << 10) | (uint16_t)(m >> 13);
  return sign | (uint16_t)((m | 0x800000u) >> (-1 - e));
}

/* per vector of LANES values: masks of those that are float16 numbers and of the finite ones
 * (the hardware's float16 round trip compares equal exactly for float16 numbers; NaN never) */
#if defined(__AVX512F__) && !defined(FF_GENERIC)
#define SCAN_VEC(p, exact, finite)                                                             \
  do {                                                                                         \
    const __m512 v_ = _mm512_loadu_ps(p);                                                      \
    const __m512 back_ = _mm512_cvtph_ps(                                                      \
        _mm512_cvtps_ph(v_, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));                   \
    exact &= _mm512_cmp_ps_mask(v_, back_, _CMP_EQ_OQ) == 0xffff;                              \
    finite &= _mm512_cmp_ps_mask(_mm512_abs_ps(v_), _mm512_set1_ps(INFINITY), _CMP_LT_OQ) ==   \
              0xffff;                                                                          \
  } while (0)
/* 16 outputs' values at one k: rows[j * K] for j < n (n <= 16), zeros past n */
#define GATHER16(rows, K, n)                                                                   \
  _mm512_mask_i32gather_ps(_mm512_setzero_ps(), (__mmask16)((1u << (n)) - 1u),                 \
                           _mm512_mullo_epi32(_mm512_set_epi32(15, 14, 13, 12, 11, 10, 9, 8, 7, \
                                                               6, 5, 4, 3, 2, 1, 0),          \
                                              _mm512_set1_epi32((int)(K))),                    \
                           rows, 4)
#endif

static void thread_range(int64_t units, int64_t *u0, int64_t *u1);

int sg_scan(const float *w, int64_t n, int threads) {
  int exact = 1, finite = 1;
#pragma omp parallel num_threads(threads) reduction(& : exact, finite) \
    if (threads > 1 && n > (1 << 16))
  {
    int64_t i0, i1;
    thread_range(n, &i0, &i1);
    int64_t i = i0;
#ifdef SCAN_VEC
    for (; i + LANES <= i1; i += LANES) SCAN_VEC(w + i, exact, finite);
#endif
    for (; i < i1; i++) {
      exact &= f16_exact(w[i]);
      finite &= isfinite(w[i]) != 0;
    }
  }
  return exact | (finite << 1);
}

/* p[b][k][j] = w[b * BLOCK + j][k] (0 past N). Generic: k in tiles so that the BLOCK rows read
 * stay in L1; AVX-512: 16 outputs at a time by a gather, stored whole. */
#define PACK_KT 16
#ifdef GATHER16
#define DEFINE_PACK(NAME, PTYPE, CONVERT, STORE16)                                             \
  void NAME(const float *w, int64_t N, int64_t K, PTYPE *p, int threads) {                     \
    const int64_t blocks = (N + BLOCK - 1) / BLOCK;                                            \
    _Pragma("omp parallel for num_threads(threads) schedule(static) if (threads > 1)")         \
    for (int64_t b = 0; b < blocks; b++)                                                       \
      for (int64_t j0 = 0; j0 < BLOCK; j0 += 16) {                                             \
        const int64_t o0 = b * BLOCK + j0;                                                     \
        const int n = N - o0 >= 16 ? 16 : (N > o0 ? (int)(N - o0) : 0);                        \
        for (int64_t k = 0; k < K; k++) {                                                      \
          const __m512 v = n ? GATHER16(w + o0 * K + k, K, n) : _mm512_setzero_ps();          \
          STORE16(p + (b * K + k) * BLOCK + j0, v);                                            \
        }                                                                                      \
      }                                                                                        \
  }
#define STORE16_F32(q, v) _mm512_storeu_ps(q, v)
#define STORE16_F16(q, v)                                                                      \
  _mm256_storeu_si256((__m256i *)(q),                                                          \
                      _mm512_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC))
#else
#define DEFINE_PACK(NAME, PTYPE, CONVERT, STORE16)                                             \
  void NAME(const float *w, int64_t N, int64_t K, PTYPE *p, int threads) {                     \
    const int64_t blocks = (N + BLOCK - 1) / BLOCK;                                            \
    _Pragma("omp parallel for num_threads(threads) schedule(static) if (threads > 1)")         \
    for (int64_t b = 0; b < blocks; b++)                                                       \
      for (int64_t k0 = 0; k0 < K; k0 += PACK_KT)                                              \
        for (int64_t k = k0; k < (k0 + PACK_KT < K ? k0 + PACK_KT : K); k++) {                 \
          PTYPE *dst = p + (b * K + k) * BLOCK;                                                \
          for (int64_t j = 0; j < BLOCK; j++) {                                                \
            const int64_t o = b * BLOCK + j;                                                   \
            const float v = o < N ? w[o * K + k] : 0.0f;                                       \
            dst[j] = CONVERT(v);                                                               \
          }                                                                                    \
        }                                                                                      \
  }
#endif
#define AS_F32(v) (v)
DEFINE_PACK(sg_pack_f32, float, AS_F32, STORE16_F32)
DEFINE_PACK(sg_pack_f16, uint16_t, f16_bits, STORE16_F16)

/* The epilogue of one row's accumulators for block outputs o0 .. o0 + BLOCK - 1 (fewer in the
 * last block): + bias, + residual res[o], relu, stored in y[o]. */
static inline __attribute__((always_inline)) void store_row(const vec *acc, float *y, int64_t N,
                                                            int64_t o0, const float *bias,
                                                            const float *res, int relu) {
  const int64_t n = N - o0 < BLOCK ? N - o0 : BLOCK;
  float *yr = y + o0;
  const float *rr = res ? res + o0 : 0;
  if (n == BLOCK) {
    for (int j = 0; j < 4; j++) {
      vec v = bias ? ADD(acc[j], LOAD_F32(bias + o0 + j * LANES)) : acc[j];
      if (rr) v = ADD(v, LOAD_F32(rr + j * LANES));
      STORE(yr + j * LANES, relu ? RELU(v) : v);
    }
  } else { /* the last, partial block */
    float tmp[BLOCK];
    for (int j = 0; j < 4; j++) STORE(tmp + j * LANES, acc[j]);
    for (int64_t j = 0; j < n; j++) {
      float v = bias ? tmp[j] + bias[o0 + j] : tmp[j];
      if (rr) v += rr[j];
      yr[j] = relu && v < 0.0f ? 0.0f : v;
    }
  }
}

/* rows r0 .. r0 + nr - 1 of x times one packed block (outputs o0 .. o0 + BLOCK - 1), over
 * k = k0 .. k1 - 1. The accumulators start at zero (k0 == 0) or from part[r][j] (the partial
 * sums an earlier chunk stored there), and end in part (k1 < K) or, with the epilogue, in y.
 * Prefetching (pf k-steps ahead, at the k-steps where (k - k0) % pfm == pfp) reads ahead in
 * pb, or with pfh in that float16 block instead (pb then being its widened chunk).
 * Storing and reloading a float32 accumulator changes no bit: every output is still one
 * accumulator over k in order. */
#define DEFINE_BLOCK(NAME, WTYPE, LOAD)                                                        \
  static inline __attribute__((always_inline)) void NAME(                                      \
      const int nr, const float *x, int64_t K, const WTYPE *pb, const float *bias, float *y,   \
      int64_t N, int64_t o0, const float *res, int relu, int64_t k0, int64_t k1, vec *part,    \
      int pf, int pfm, int pfp, const uint16_t *pfh) {                                         \
    vec acc[ROWS][4];                                                                          \
    for (int r = 0; r < nr; r++)                                                               \
      for (int j = 0; j < 4; j++) acc[r][j] = k0 ? part[r * 4 + j] : ZERO();                   \
    int phase = (pfm - pfp) % pfm; /* prefetch where (k - k0) % pfm == pfp */                 \
    for (int64_t k = k0; k < k1; k++) {                                                        \
      const WTYPE *wk = pb + k * BLOCK;                                                        \
      if (pf && phase == 0) {                                                                  \
        if (pfh)                                                                               \
          PREFETCH(pfh + k * BLOCK, uint16_t, pf);                                             \
        else                                                                                   \
          PREFETCH(wk, WTYPE, pf);                                                             \
      }                                                                                        \
      if (++phase == pfm) phase = 0;                                                           \
      vec w0 = LOAD(wk), w1 = LOAD(wk + LANES), w2 = LOAD(wk + 2 * LANES),                     \
          w3 = LOAD(wk + 3 * LANES);                                                           \
      for (int r = 0; r < nr; r++) {                                                           \
        vec xk = SPLAT(x[r * K + k]);                                                          \
        acc[r][0] = FMADD(xk, w0, acc[r][0]);                                                  \
        acc[r][1] = FMADD(xk, w1, acc[r][1]);                                                  \
        acc[r][2] = FMADD(xk, w2, acc[r][2]);                                                  \
        acc[r][3] = FMADD(xk, w3, acc[r][3]);                                                  \
      }                                                                                        \
    }                                                                                          \
    if (k1 < K) {                                                                              \
      for (int r = 0; r < nr; r++)                                                             \
        for (int j = 0; j < 4; j++) part[r * 4 + j] = acc[r][j];                               \
      return;                                                                                  \
    }                                                                                          \
    for (int r = 0; r < nr; r++)                                                               \
      store_row(acc[r], y + r * N, N, o0, bias, res ? res + r * N : 0, relu);                  \
  }

DEFINE_BLOCK(block_f32, float, LOAD_F32)
DEFINE_BLOCK(block_f16, uint16_t, LOAD_F16)

/* rows r0 .. of x (a group of at most ROWS) times block b over k0 .. k1 - 1 (see DEFINE_BLOCK) */
#define RUN_GROUP(BLOCK_FN, pb, b, r0, k0, k1, part, pf, pfm, pfp, pfh)                        \
  do {                                                                                         \
    int nr = R - (r0) < ROWS ? (int)(R - (r0)) : ROWS;                                         \
    const float *xr = x + (r0) * K;                                                            \
    float *yr = y + (r0) * N;                                                                  \
    const float *rr = res ? res + (r0) * N : 0;                                                \
    if (nr == ROWS) /* constant row counts: the accumulators stay in registers */             \
      BLOCK_FN(ROWS, xr, K, pb, bias, yr, N, (b) * BLOCK, rr, relu, k0, k1, part, pf, pfm,     \
               pfp, pfh);                                                                      \
    else                                                                                       \
      SMALLER_GROUP(BLOCK_FN, nr, xr, K, pb, bias, yr, N, (b) * BLOCK, rr, relu, k0, k1,      \
                    part, pf, pfm, pfp, pfh);                                                  \
  } while (0)

/* How many of row groups g0 .. g1 - 1 (of R rows in all) share the prefetching of the next
 * chunk: all of them, but for a last group of one row: it runs through a chunk too fast to
 * spread its share out (with it, a 7-row call is much slower than a 6-row one). */
static inline int64_t prefetch_sharers(int64_t R, int64_t g0, int64_t g1) {
  return g1 - g0 - (R - (g1 - 1) * ROWS == 1);
}

/* Row groups g0 .. g1 - 1 times block b over the chunk k0 .. k1 - 1, every group in turn, the
 * first `sharing` each prefetching a share of the next chunk (in pb, or with pfh in that
 * float16 block); partial sums wait in part ([groups][ROWS][4] vectors). */
#define RUN_CHUNK(BLOCK_FN, pb, b, g0, g1, k0, k1, part, sharing, pfh)                         \
  do {                                                                                         \
    for (int64_t g = (g0); g < (g1); g++)                                                      \
      RUN_GROUP(BLOCK_FN, pb, b, g * ROWS, k0, k1, (part) + (g - (g0)) * ROWS * 4,             \
                g - (g0) < (sharing) ? KC : 0, (int)(sharing), (int)((g - (g0)) % (sharing)), \
                pfh);                                                                          \
  } while (0)

/* Row groups g0 .. g1 - 1 times block b. One group: the whole K at once, prefetching PF_K
 * ahead (none for fewer than PF_MIN_ROWS rows). Several: chunk by chunk (KC k-steps), every
 * group in turn (RUN_CHUNK). */
#define RUN_BLOCK(BLOCK_FN, WTYPE, pb, b, g0, g1, part)                                        \
  do {                                                                                         \
    if ((g1) - (g0) == 1) {                                                                    \
      RUN_GROUP(BLOCK_FN, pb, b, (g0) * ROWS, 0, K, part,                                      \
                R - (g0) * ROWS >= PF_MIN_ROWS ? PF_K : 0, 1, 0, NULL);                        \
    } else {                                                                                   \
      const int64_t sharing = prefetch_sharers(R, g0, g1);                                     \
      for (int64_t k0 = 0; k0 < K; k0 += KC) {                                                 \
        int64_t k1 = k0 + KC < K ? k0 + KC : K;                                                \
        RUN_CHUNK(BLOCK_FN, pb, b, g0, g1, k0, k1, part, sharing, NULL);                       \
      }                                                                                        \
    }                                                                                          \
  } while (0)

/* y [R, N] = x [R, K] . w^T + bias (+ res [R, N]) (relu); p packed as above. The work is
 * (block, row group) units, a block's groups consecutive; each thread takes an equal range of
 * units, as `omp for schedule(static)` would, and runs the groups of a block in its range
 * together (RUN_BLOCK).
 *
 * The *_units functions share the units among the threads of the enclosing parallel region
 * (decoder_layer.c runs a whole layer in one region) and end with its barrier; outside one,
 * the calling thread does them all. sg_linear_* open a region. */
#define UNITS(R, N) ((((N) + BLOCK - 1) / BLOCK) * (((R) + ROWS - 1) / ROWS))

/* this thread's range [*u0, *u1) of `units` (omp for schedule(static)'s split) */
static void thread_range(int64_t units, int64_t *u0, int64_t *u1) {
  int t = omp_get_thread_num(), n = omp_get_num_threads();
  int64_t each = units / n, extra = units % n;
  *u0 = t * each + (t < extra ? t : extra);
  *u1 = *u0 + each + (t < extra);
}

/* per-thread buffer of at least n floats, 64-byte aligned, kept for the thread's life (slot 0:
 * partial sums, slot 1: widened weights, slot 2: the sparse kernel's list positions), or NULL */
static float *thread_buffer(int slot, int64_t n) {
  static __thread float *buf[3] = {0, 0, 0};
  static __thread int64_t cap[3] = {0, 0, 0};
  if (n > cap[slot]) {
    free(buf[slot]);
    buf[slot] = aligned_alloc(64, ((n * sizeof(float) + 63) / 64) * 64);
    cap[slot] = buf[slot] ? n : 0;
  }
  return buf[slot];
}

/* the partial sums of a block's groups ([groups][ROWS][4] vectors), or NULL when one group at a
 * time must do (no memory: RUN_BLOCK is then called group by group) */
static vec *partials(int64_t groups) {
  return (vec *)thread_buffer(0, groups * ROWS * 4 * LANES);
}

#define FOR_BLOCKS(BODY)                                                                       \
  do {                                                                                         \
    const int64_t groups = (R + ROWS - 1) / ROWS;                                              \
    int64_t u0, u1;                                                                            \
    thread_range(UNITS(R, N), &u0, &u1);                                                       \
    vec *part = u1 > u0 ? partials(u1 - u0 < groups ? u1 - u0 : groups) : 0;                  \
    for (int64_t u = u0; u < u1;) {                                                            \
      const int64_t b = u / groups, g0 = u % groups;                                           \
      int64_t g1 = groups - g0 < u1 - u ? groups : g0 + (u1 - u);                              \
      if (!part) g1 = g0 + 1;                                                                  \
      BODY;                                                                                    \
      u += g1 - g0;                                                                            \
    }                                                                                          \
    _Pragma("omp barrier")                                                                     \
  } while (0)

void sg_linear_f32_units(const float *x, int64_t R, int64_t K, const float *p,
                         const float *bias, float *y, int64_t N, const float *res, int relu) {
  FOR_BLOCKS(RUN_BLOCK(block_f32, float, p + b * K * BLOCK, b, g0, g1, part));
}

/* A float16 weight used by many row groups is widened once per chunk instead: widening in
 * registers costs the FMA ports two uops per weight vector per row group, a visible share of a
 * call at beam-search batch sizes. Each chunk of KC k-steps is widened into a per-thread buffer
 * that stays in L1, and every group then reads it as float32, the groups sharing the
 * prefetching of the next chunk's float16 lines as RUN_BLOCK's do (widening a whole block at
 * once would leave it in L2 for the groups to read). A block read by a few row groups (a
 * verify window, batch 1) is cheaper to read as float16 in registers: its groups do too little
 * arithmetic on a chunk to cover the next one's prefetch. The same float32 values either way
 * (float16 -> float32 is exact), and each output is still one accumulator over k in order, so
 * the same results. */
#define WIDEN_MIN_GROUPS 8

void sg_linear_f16_units(const float *x, int64_t R, int64_t K, const uint16_t *p,
                         const float *bias, float *y, int64_t N, const float *res, int relu) {
  float *wide = (R + ROWS - 1) / ROWS >= WIDEN_MIN_GROUPS ? thread_buffer(1, KC * BLOCK) : 0;
  FOR_BLOCKS({
    const uint16_t *pb = p + b * K * BLOCK;
    if (wide && g1 - g0 >= WIDEN_MIN_GROUPS) {
      const int64_t sharing = prefetch_sharers(R, g0, g1);
      for (int64_t k0 = 0; k0 < K; k0 += KC) {
        const int64_t k1 = k0 + KC < K ? k0 + KC : K;
        for (int64_t i = k0 * BLOCK; i < k1 * BLOCK; i += LANES)
          STORE(wide + i - k0 * BLOCK, LOAD_F16(pb + i));
        /* the groups read the widened chunk (indexed from k0) and prefetch the next chunk's
         * float16 lines */
        RUN_CHUNK(block_f32, wide - k0 * BLOCK, b, g0, g1, k0, k1, part, sharing, pb);
      }
    } else {
      RUN_BLOCK(block_f16, uint16_t, pb, b, g0, g1, part);
    }
  });
}

#define DEFINE_LINEAR(NAME, WTYPE)                                                             \
  void NAME(const float *x, int64_t R, int64_t K, const WTYPE *p, const float *bias, float *y, \
            int64_t N, const float *res, int relu, int threads) {                              \
    _Pragma("omp parallel num_threads(threads) if (threads > 1 && UNITS(R, N) > 1)")           \
    NAME##_units(x, R, K, p, bias, y, N, res, relu);                                           \
  }

DEFINE_LINEAR(sg_linear_f32, float)
DEFINE_LINEAR(sg_linear_f16, uint16_t)

/* -- a sparse input: the second matmul of a ReLU feed-forward ---------------------------------
 *
 * fc2 reads relu(fc1(x)), and in a trained model most of that is exactly zero (a quarter of the
 * demo target's decoder units are nonzero for a token, a tenth of its encoder's). A product with
 * a zero input adds +-0 to its accumulator, and an accumulator is never -0 (it starts at +0,
 * and a sum that cancels to zero rounds to +0), so the product leaves it unchanged: skipping
 * zero inputs gives the dense kernel's bits exactly, row by row, whatever the pattern, as long
 * as the weights are finite (0 x inf is NaN; callers check).
 *
 * Once per call each row's nonzero k's are listed, ascending. Each row then accumulates over
 * its own list, chunk by chunk (KC k-steps) so that a chunk's weights serve the later rows from
 * L1, the next chunk prefetched only where some row is nonzero; one row alone streams its list,
 * prefetching PF_J entries ahead. The weight rows that every row skips are never read, and the
 * arithmetic is each row's own nonzeros; but no weight vector read serves several rows (one
 * load per multiply-add rather than one per 6), and reading k-steps with gaps between them
 * gets less from memory than streaming them all. So a call takes the dense kernel where that
 * is cheaper: rows whose union is nearly every k-step and few enough of them that the dense
 * kernel is bound by memory (a batch of 8 different sentences' tokens). The cost model's
 * three ratios (sg_sparse_cheaper) were measured on transformer-big's fc2 (4096 -> 1024) at the
 * AVX-512 level; a ratio that is off costs speed where the choice is close, never bits. */
#define PF_J 32 /* list entries ahead for one row (~128 k-steps at a quarter nonzero) */
#define GAP_COST 1.6  /* memory time of a k-step read with gaps / streamed */
#define ROW_COST 2.25 /* time of a multiply-add vector with its own weight load / in a group */
#define STREAM_COST 7.5 /* memory time of a streamed k-step / one row's arithmetic on it */

/* the scratch a sparse call needs, in int32s: idx [R, K], cnt [R], any [K] bytes */
int64_t sg_sparse_scratch(int64_t R, int64_t K) { return R * K + R + (K + 3) / 4; }

/* idx[r, :cnt[r]] = the k's where x[r, k] != 0 (NaN included), ascending; any[k] = whether
 * some row is nonzero at k. Shares rows (then k ranges) among the region's threads. */
static void sg_nonzero_units(const float *x, int64_t R, int64_t K, int32_t *idx, int32_t *cnt,
                             uint8_t *any) {
#pragma omp for schedule(static)
  for (int64_t r = 0; r < R; r++) {
    const float *xr = x + r * K;
    int32_t *ir = idx + r * K, c = 0;
    for (int64_t k = 0; k < K; k++) { /* no branch: write k, keep it where nonzero */
      ir[c] = (int32_t)k;
      c += xr[k] != 0.0f;
    }
    cnt[r] = c;
  }
#pragma omp for schedule(static)
  for (int64_t k0 = 0; k0 < K; k0 += 256) {
    const int64_t k1 = k0 + 256 < K ? k0 + 256 : K;
    for (int64_t k = k0; k < k1; k++) any[k] = 0;
    for (int64_t r = 0; r < R; r++)
      for (int64_t k = k0; k < k1; k++) any[k] |= x[r * K + k] != 0.0f;
  }
}

/* Whether the lists are cheaper than the dense kernel, each costed as the larger of its
 * memory and its arithmetic (in units of one row's arithmetic on one dense k-step):
 * lists max(GAP_COST STREAM_COST U, ROW_COST nonzeros), dense max(STREAM_COST K, R K), with U
 * the k-steps some row needs. */
int sg_sparse_cheaper(const int32_t *cnt, const uint8_t *any, int64_t R, int64_t K) {
  double nnz = 0, u = 0;
  for (int64_t r = 0; r < R; r++) nnz += cnt[r];
  for (int64_t k = 0; k < K; k++) u += any[k];
  const double lists = fmax(GAP_COST * STREAM_COST * u, ROW_COST * nnz);
  const double dense = fmax(STREAM_COST * K, (double)R * K);
  return lists < dense;
}

/* one row's accumulators acc[4] over its list entries ix[j0 .. j1 - 1] of block pb; with
 * jpf > 0, the weights of entry j + PF_J (< jpf) are prefetched */
#define DEFINE_SPARSE_ROW(NAME, WTYPE, LOAD)                                                   \
  static inline __attribute__((always_inline)) void NAME(const float *xr, const int32_t *ix,   \
                                                         int64_t j0, int64_t j1,               \
                                                         const WTYPE *pb, vec *acc,            \
                                                         int64_t jpf) {                        \
    vec a0 = acc[0], a1 = acc[1], a2 = acc[2], a3 = acc[3];                                    \
    for (int64_t j = j0; j < j1; j++) {                                                        \
      if (j + PF_J < jpf) PREFETCH(pb + (int64_t)ix[j + PF_J] * BLOCK, WTYPE, 0);              \
      const int64_t k = ix[j];                                                                 \
      const WTYPE *wk = pb + k * BLOCK;                                                        \
      const vec xk = SPLAT(xr[k]);                                                             \
      a0 = FMADD(xk, LOAD(wk), a0);                                                            \
      a1 = FMADD(xk, LOAD(wk + LANES), a1);                                                    \
      a2 = FMADD(xk, LOAD(wk + 2 * LANES), a2);                                                \
      a3 = FMADD(xk, LOAD(wk + 3 * LANES), a3);                                                \
    }                                                                                          \
    acc[0] = a0, acc[1] = a1, acc[2] = a2, acc[3] = a3;                                        \
  }

DEFINE_SPARSE_ROW(sparse_row_f32, float, LOAD_F32)
DEFINE_SPARSE_ROW(sparse_row_f16, uint16_t, LOAD_F16)

/* rows r0 .. r1 - 1 times block pb (outputs o0 ..), chunk by chunk, each row over its entries
 * in the chunk (pos: where each row's list is), the next chunk's nonzero k-steps prefetched a
 * share before each row; part: [r1 - r0][4] vectors. Without part or pos (no memory), or for
 * one row, each row streams its whole list. */
#define RUN_ROWS(ROW_FN, WTYPE, pb, o0, r0, r1, part, pos)                                     \
  do {                                                                                         \
    if (!(part) || !(pos) || (r1) - (r0) == 1) {                                               \
      for (int64_t r = (r0); r < (r1); r++) {                                                  \
        vec acc[4] = {ZERO(), ZERO(), ZERO(), ZERO()};                                         \
        ROW_FN(x + r * K, idx + r * K, 0, cnt[r], pb, acc, cnt[r]);                            \
        store_row(acc, y + r * N, N, o0, bias, res ? res + r * N : 0, relu);                   \
      }                                                                                        \
      break;                                                                                   \
    }                                                                                          \
    const int64_t m = (r1) - (r0);                                                             \
    for (int64_t i = 0; i < m; i++) {                                                          \
      pos[i] = 0;                                                                              \
      for (int j = 0; j < 4; j++) part[i * 4 + j] = ZERO();                                    \
    }                                                                                          \
    for (int64_t k0 = 0; k0 < K; k0 += KC) {                                                   \
      const int64_t k1 = k0 + KC < K ? k0 + KC : K, k2 = k1 + KC < K ? k1 + KC : K;            \
      for (int64_t i = 0; i < m; i++) {                                                        \
        const int64_t r = (r0) + i;                                                            \
        for (int64_t k = k1 + i; k < k2; k += m)                                               \
          if (any[k]) PREFETCH((pb) + k * BLOCK, WTYPE, 0);                                    \
        const int32_t *ixr = idx + r * K;                                                      \
        int64_t j1 = pos[i];                                                                   \
        while (j1 < cnt[r] && ixr[j1] < k1) j1++;                                              \
        ROW_FN(x + r * K, ixr, pos[i], j1, pb, part + i * 4, 0);                               \
        pos[i] = (int32_t)j1;                                                                  \
        if (k1 == K)                                                                           \
          store_row(part + i * 4, y + r * N, N, o0, bias, res ? res + r * N : 0, relu);        \
      }                                                                                        \
    }                                                                                          \
  } while (0)

/* y [R, N] = x [R, K] . w^T + bias (+ res) (relu) as sg_linear_*_units, skipping x's zeros:
 * mode FF_SPARSE_NEVER (the dense kernel), FF_SPARSE_CHEAPER (where sg_sparse_cheaper says
 * so) or FF_SPARSE_ALWAYS; scratch: sg_sparse_scratch(R, K) int32s. The units are the dense
 * kernel's (block, row group) pairs, shared among the region's threads by the same FOR_BLOCKS. */
#define DEFINE_SPARSE_LINEAR(NAME, DENSE, ROW_FN, WTYPE)                                       \
  void NAME##_units(const float *x, int64_t R, int64_t K, const WTYPE *p, const float *bias,   \
                    float *y, int64_t N, const float *res, int relu, int32_t *scratch,         \
                    int mode) {                                                                \
    if (mode == FF_SPARSE_NEVER) {                                                             \
      DENSE##_units(x, R, K, p, bias, y, N, res, relu);                                        \
      return;                                                                                  \
    }                                                                                          \
    int32_t *idx = scratch, *cnt = scratch + R * K;                                            \
    uint8_t *any = (uint8_t *)(cnt + R);                                                       \
    sg_nonzero_units(x, R, K, idx, cnt, any);                                                  \
    if (mode == FF_SPARSE_CHEAPER && !sg_sparse_cheaper(cnt, any, R, K)) {                     \
      DENSE##_units(x, R, K, p, bias, y, N, res, relu);                                        \
      return;                                                                                  \
    }                                                                                          \
    int32_t *pos = (int32_t *)thread_buffer(2, ((R + ROWS - 1) / ROWS) * ROWS);                \
    FOR_BLOCKS(RUN_ROWS(ROW_FN, WTYPE, p + b * K * BLOCK, b * BLOCK, g0 * ROWS,                \
                        g1 * ROWS < R ? g1 * ROWS : R, part, pos));                            \
  }                                                                                            \
  void NAME(const float *x, int64_t R, int64_t K, const WTYPE *p, const float *bias, float *y, \
            int64_t N, const float *res, int relu, int32_t *scratch, int mode, int threads) {  \
    _Pragma("omp parallel num_threads(threads) if (threads > 1 && UNITS(R, N) > 1)")           \
    NAME##_units(x, R, K, p, bias, y, N, res, relu, scratch, mode);                            \
  }

DEFINE_SPARSE_LINEAR(sg_sparse_linear_f32, sg_linear_f32, sparse_row_f32, float)
DEFINE_SPARSE_LINEAR(sg_sparse_linear_f16, sg_linear_f16, sparse_row_f16, uint16_t)
