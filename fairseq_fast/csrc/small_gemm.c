/* small_gemm.c: y[r, o] = sum_k x[r, k] * w[o, k] (+ b[o]) for a few rows (a decoder step).
 *
 * Built on first use by small_gemm.py with `cc -O3 -march=native -fopenmp` and called through
 * ctypes. The weight is packed once (small_gemm.py) into blocks of BLOCK output features:
 * p[block][k][j] = w[block * BLOCK + j][k], zero-padded past the last output; as float32, or as
 * float16 when every weight is a float16 value (then the float32 products are the same numbers:
 * float16 -> float32 is exact).
 *
 * Each output is one accumulator that adds x[r, k] * w[o, k] for k = 0, 1, ... in order with fused
 * multiply-adds, then the bias: the same operations for any row count, thread count, instruction
 * set and weight storage, so results never depend on how a call was split.
 *
 * Optional epilogue, in this order: + residual[r, o] (a [R, N] tensor), then relu. Each is the
 * same float32 operation torch's add / relu would apply to the stored result, so fusing them
 * changes no bit; it saves the decoder a tensor op per use.
 */
#include <immintrin.h>
#include <stdint.h>
#include <stdlib.h>

#if defined(__AVX512F__)
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
#elif defined(__AVX2__) && defined(__FMA__) && defined(__F16C__)
#define LANES 8
#define ROWS 2 /* 2 x 4 accumulators + 4 weights + 1 broadcast <= 16 ymm */
typedef __m256 vec;
#define LOAD_F32(p) _mm256_loadu_ps(p)
#define LOAD_F16(p) _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(p)))
#define SPLAT(v) _mm256_set1_ps(v)
#define FMADD(a, b, c) _mm256_fmadd_ps(a, b, c)
#define ZERO() _mm256_setzero_ps()
#define ADD(a, b) _mm256_add_ps(a, b)
#define STORE(p, v) _mm256_storeu_ps(p, v)
#define RELU(v) _mm256_max_ps(_mm256_setzero_ps(), v) /* NaN stays NaN (second operand) */
#else
#error "small_gemm needs AVX-512 or AVX2 with FMA and F16C"
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
#else /* ROWS == 2 */
#define SMALLER_GROUP(FN, nr, ...) FN(1, __VA_ARGS__)
#endif

int sg_block(void) { return BLOCK; }

/* rows r0 .. r0 + nr - 1 of x times one packed block (outputs o0 .. o0 + BLOCK - 1) */
#define DEFINE_BLOCK(NAME, WTYPE, LOAD)                                                        \
  static inline __attribute__((always_inline)) void NAME(                                      \
      const int nr, const float *x, int64_t K, const WTYPE *pb, const float *bias, float *y,   \
      int64_t N, int64_t o0, const float *res, int relu) {                                     \
    vec acc[ROWS][4];                                                                          \
    for (int r = 0; r < nr; r++)                                                               \
      for (int j = 0; j < 4; j++) acc[r][j] = ZERO();                                          \
    for (int64_t k = 0; k < K; k++) {                                                          \
      const WTYPE *wk = pb + k * BLOCK;                                                        \
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
    int64_t n = N - o0 < BLOCK ? N - o0 : BLOCK;                                               \
    for (int r = 0; r < nr; r++) {                                                             \
      float *yr = y + r * N + o0;                                                              \
      const float *rr = res ? res + r * N + o0 : 0;                                            \
      if (n == BLOCK) {                                                                        \
        for (int j = 0; j < 4; j++) {                                                          \
          vec v = bias ? ADD(acc[r][j], LOAD_F32(bias + o0 + j * LANES)) : acc[r][j];          \
          if (rr) v = ADD(v, LOAD_F32(rr + j * LANES));                                        \
          STORE(yr + j * LANES, relu ? RELU(v) : v);                                           \
        }                                                                                      \
      } else { /* the last, partial block */                                                   \
        float tmp[BLOCK];                                                                      \
        for (int j = 0; j < 4; j++) STORE(tmp + j * LANES, acc[r][j]);                         \
        for (int64_t j = 0; j < n; j++) {                                                      \
          float v = bias ? tmp[j] + bias[o0 + j] : tmp[j];                                     \
          if (rr) v += rr[j];                                                                  \
          yr[j] = relu && v < 0.0f ? 0.0f : v;                                                 \
        }                                                                                      \
      }                                                                                        \
    }                                                                                          \
  }

DEFINE_BLOCK(block_f32, float, LOAD_F32)
DEFINE_BLOCK(block_f16, uint16_t, LOAD_F16)

/* one unit of work: rows r0 .. r0 + nr - 1 times packed block pb (block index b) */
#define RUN_UNIT(BLOCK_FN, pb, b, r0)                                                          \
  do {                                                                                         \
    int nr = R - (r0) < ROWS ? (int)(R - (r0)) : ROWS;                                         \
    const float *xr = x + (r0) * K;                                                            \
    float *yr = y + (r0) * N;                                                                  \
    const float *rr = res ? res + (r0) * N : 0;                                                \
    if (nr == ROWS) /* constant row counts: the accumulators stay in registers */             \
      BLOCK_FN(ROWS, xr, K, pb, bias, yr, N, (b) * BLOCK, rr, relu);                           \
    else                                                                                       \
      SMALLER_GROUP(BLOCK_FN, nr, xr, K, pb, bias, yr, N, (b) * BLOCK, rr, relu);              \
  } while (0)

/* y [R, N] = x [R, K] . w^T + bias (+ res [R, N]) (relu); p packed as above; units of
 * (block, row group), a block's row groups consecutive.
 *
 * The *_units functions share the units among the threads of the enclosing parallel region
 * (an orphaned `omp for`: decoder_layer.c runs a whole layer in one region) and end with its
 * barrier; outside one, the calling thread does them all. sg_linear_* open a region. */
#define UNITS(R, N) ((((N) + BLOCK - 1) / BLOCK) * (((R) + ROWS - 1) / ROWS))

void sg_linear_f32_units(const float *x, int64_t R, int64_t K, const float *p,
                         const float *bias, float *y, int64_t N, const float *res, int relu) {
  const int64_t groups = (R + ROWS - 1) / ROWS, units = UNITS(R, N);
#pragma omp for schedule(static)
  for (int64_t u = 0; u < units; u++) {
    const int64_t b = u / groups;
    RUN_UNIT(block_f32, p + b * K * BLOCK, b, (u % groups) * ROWS);
  }
}

/* A float16 weight used by many row groups is widened once per block instead: widening in
 * registers costs the FMA ports two uops per weight vector per row group, ~12% of a call at
 * 160 rows (the demo target's beam 5 x 32 sentences); a block read by a few row groups (a
 * verify window, batch 1) is cheaper to read as float16 (half the memory traffic). The same
 * float32 values either way (float16 -> float32 is exact), so the same results. */
#define WIDEN_MIN_GROUPS 8

/* this thread's buffer of at least n floats, 64-byte aligned (kept for the thread's life),
 * or NULL */
static float *widen_buffer(int64_t n) {
  static __thread float *buf = 0;
  static __thread int64_t cap = 0;
  if (n > cap) {
    free(buf);
    buf = aligned_alloc(64, n * sizeof(float)); /* n * 4: a multiple of 64 (BLOCK floats) */
    cap = buf ? n : 0;
  }
  return buf;
}

void sg_linear_f16_units(const float *x, int64_t R, int64_t K, const uint16_t *p,
                         const float *bias, float *y, int64_t N, const float *res, int relu) {
  const int64_t groups = (R + ROWS - 1) / ROWS, units = UNITS(R, N);
  /* per thread (NULL: read as float16); every thread runs the same loop below, as a
     work-sharing construct requires */
  float *wide = groups >= WIDEN_MIN_GROUPS ? widen_buffer(K * BLOCK) : 0;
  int64_t widened = -1; /* the block in `wide` */
#pragma omp for schedule(static)
  for (int64_t u = 0; u < units; u++) {
    const int64_t b = u / groups, r0 = (u % groups) * ROWS;
    const uint16_t *pb = p + b * K * BLOCK;
    if (!wide) {
      RUN_UNIT(block_f16, pb, b, r0);
      continue;
    }
    if (b != widened) {
      for (int64_t i = 0; i < K * BLOCK; i += LANES) STORE(wide + i, LOAD_F16(pb + i));
      widened = b;
    }
    RUN_UNIT(block_f32, wide, b, r0);
  }
}

#define DEFINE_LINEAR(NAME, WTYPE)                                                             \
  void NAME(const float *x, int64_t R, int64_t K, const WTYPE *p, const float *bias, float *y, \
            int64_t N, const float *res, int relu, int threads) {                              \
    _Pragma("omp parallel num_threads(threads) if (threads > 1 && UNITS(R, N) > 1)")           \
    NAME##_units(x, R, K, p, bias, y, N, res, relu);                                           \
  }

DEFINE_LINEAR(sg_linear_f32, float)
DEFINE_LINEAR(sg_linear_f16, uint16_t)
