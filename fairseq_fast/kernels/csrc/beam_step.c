/* beam_step.c: a beam-search step's candidates in one pass over the log-probs (CPU).
 *
 * Built by loader.py at every instruction-set level (plain C, vectorised where the level has
 * AVX), called by beam_search.py.
 * fairseq's SequenceGenerator edits a step's log-probs [rows, V] (NaN -> -inf, pad -> -inf,
 * unk -= penalty, only EOS at max_len, no EOS before min_len), then search.BeamSearch adds each
 * row's cumulative score and takes the top k over beam x V per sentence: six passes over
 * [rows, V], a boolean-mask assignment and a top-k over [sentences, beam * V]. Here: one read,
 * the edits applied on the fly, a running top k per sentence. The arithmetic is the same (the
 * edits and `lp + score` are single IEEE operations), so candidates and scores are the same bits;
 * among equal values the lower flat index comes first.
 *
 * Most values cannot enter the top k: a chunk of 32 is compared with the current k-th a vector
 * at a time and only the values above it are inserted (chunks holding pad, unk or EOS go through
 * the edits one value at a time, since a negative unk penalty raises a value).
 */
#include <math.h>
#include <stdint.h>

#include "kernels.h"
#if defined(__AVX512F__) || defined(__AVX2__)
#include <immintrin.h>
#endif

#define CHUNK 32

/* MASK(p, add, worst): bit i set where p[i] + add > worst, for the LANES values at p (clear for
 * NaN, as the comparison in C) */
#if defined(__AVX512F__)
#define LANES_F32 16
#define LANES_F64 8
#define MASK_F32(p, add, worst)                                                              \
  (uint32_t) _mm512_cmp_ps_mask(_mm512_add_ps(_mm512_loadu_ps(p), _mm512_set1_ps(add)),       \
                                _mm512_set1_ps(worst), _CMP_GT_OQ)
#define MASK_F64(p, add, worst)                                                              \
  (uint32_t) _mm512_cmp_pd_mask(_mm512_add_pd(_mm512_loadu_pd(p), _mm512_set1_pd(add)),       \
                                _mm512_set1_pd(worst), _CMP_GT_OQ)
#elif defined(__AVX2__)
#define LANES_F32 8
#define LANES_F64 4
#define MASK_F32(p, add, worst)                                                              \
  (uint32_t) _mm256_movemask_ps(_mm256_cmp_ps(                                                \
      _mm256_add_ps(_mm256_loadu_ps(p), _mm256_set1_ps(add)), _mm256_set1_ps(worst), _CMP_GT_OQ))
#define MASK_F64(p, add, worst)                                                              \
  (uint32_t) _mm256_movemask_pd(_mm256_cmp_pd(                                                \
      _mm256_add_pd(_mm256_loadu_pd(p), _mm256_set1_pd(add)), _mm256_set1_pd(worst), _CMP_GT_OQ))
#else
#define LANES_F32 1
#define LANES_F64 1
#define MASK_F32(p, add, worst) (uint32_t)(*(p) + (add) > (worst))
#define MASK_F64(p, add, worst) (uint32_t)(*(p) + (add) > (worst))
#endif

/* bit i set where x[i] + add > worst, i < CHUNK */
#define DEFINE_ABOVE(NAME, T, MASK, LANES)                                                    \
  static inline uint32_t NAME(const T *x, T add, T worst) {                                   \
    uint32_t m = 0;                                                                           \
    for (int i = 0; i < CHUNK; i += LANES) m |= MASK(x + i, add, worst) << i;                 \
    return m;                                                                                 \
  }

DEFINE_ABOVE(above_f32, float, MASK_F32, LANES_F32)
DEFINE_ABOVE(above_f64, double, MASK_F64, LANES_F64)

#define DEFINE_CANDIDATES(NAME, T)                                                            \
  static inline T NAME##_edit(T x, int64_t tok, int64_t pad, int64_t unk, T unk_penalty,      \
                              int64_t eos, int mode) {                                        \
    if (x != x) x = -INFINITY;                                                                \
    if (tok == pad) x = -INFINITY;                                                            \
    else if (tok == unk) x -= unk_penalty;                                                    \
    if ((mode == FF_ONLY_EOS && tok != eos) || (mode == FF_NO_EOS && tok == eos))             \
      x = -INFINITY;                                                                          \
    return x;                                                                                 \
  }                                                                                           \
                                                                                              \
  /* insert (v, f) into the n best (descending; equal values keep scan order) */               \
  static inline int64_t NAME##_insert(T *bv, int64_t *bf, int64_t n, int64_t k, T v,          \
                                      int64_t f) {                                            \
    if (n == k && !(v > bv[k - 1])) return n;                                                 \
    int64_t i = n < k ? n : k - 1;                                                            \
    while (i > 0 && v > bv[i - 1]) {                                                          \
      bv[i] = bv[i - 1];                                                                      \
      bf[i] = bf[i - 1];                                                                      \
      i--;                                                                                    \
    }                                                                                         \
    bv[i] = v;                                                                                \
    bf[i] = f;                                                                                \
    return n < k ? n + 1 : n;                                                                 \
  }                                                                                           \
                                                                                              \
  void NAME(const T *lp, int64_t ld, const T *prev, int64_t sentences, int64_t group,         \
            int64_t beams, int64_t V, int64_t k, int64_t pad, int64_t unk, T unk_penalty,     \
            int64_t eos, int mode, T *out_score, int64_t *out_beam, int64_t *out_token,       \
            int threads) {                                                                    \
    _Pragma("omp parallel for num_threads(threads) schedule(static) if(sentences > 1)")       \
    for (int64_t s = 0; s < sentences; s++) {                                                 \
      T bv[FF_MAX_CANDIDATES];                                                                \
      int64_t bf[FF_MAX_CANDIDATES], n = 0;                                                   \
      for (int64_t j = 0; j < beams; j++) {                                                   \
        int64_t row = s * group + j;                                                          \
        const T *x = lp + row * ld;                                                           \
        T add = prev ? prev[row] : (T)0;                                                      \
        for (int64_t c = 0; c < V; c += CHUNK) {                                              \
          int64_t end = c + CHUNK < V ? c + CHUNK : V;                                        \
          if (n == k && end - c == CHUNK && c / CHUNK != pad / CHUNK &&                       \
              c / CHUNK != unk / CHUNK && c / CHUNK != eos / CHUNK) {                         \
            /* no special token here: the only edits are NaN -> -inf and, at max_len, all    \
               -> -inf, so only the values above the k-th as they are can enter */           \
            if (mode == FF_ONLY_EOS) continue;                                                \
            for (uint32_t m = NAME##_above(x + c, add, bv[k - 1]); m; m &= m - 1) {          \
              int64_t t = c + __builtin_ctz(m);                                               \
              n = NAME##_insert(bv, bf, n, k, x[t] + add, j * V + t);                         \
            }                                                                                 \
            continue;                                                                         \
          }                                                                                   \
          for (int64_t t = c; t < end; t++) {                                                 \
            T v = NAME##_edit(x[t], t, pad, unk, unk_penalty, eos, mode);                     \
            n = NAME##_insert(bv, bf, n, k, v + add, j * V + t);                              \
          }                                                                                   \
        }                                                                                     \
      }                                                                                       \
      for (int64_t i = 0; i < k; i++) {                                                       \
        out_score[s * k + i] = bv[i];                                                         \
        out_beam[s * k + i] = bf[i] / V;                                                      \
        out_token[s * k + i] = bf[i] % V;                                                     \
      }                                                                                       \
    }                                                                                         \
  }

#define bs_candidates_f32_above above_f32
#define bs_candidates_f64_above above_f64
DEFINE_CANDIDATES(bs_candidates_f32, float)
DEFINE_CANDIDATES(bs_candidates_f64, double)
