/* spec_step.c: a greedy verify window's verdict, and the commit of what each row keeps (CPU).
 *
 * Built by loader.py at every instruction-set level, called by speculative/acceptance.py
 * (GreedyAcceptance, BiLDRollback) and speculative/commit.py. Each is the rule of its torch
 * version, written as one loop per row instead of ~30 tensor ops over the whole window:
 *
 * sd_greedy_verify: lp [B, m, V] holds the target's edited log-probs (no NaN) at the m = k + 1
 * positions of each row's window, drafts [B, k] the proposals. Walking a row's positions j =
 * 0, 1, ...: the target's token is the best of lp[j] + before_j (before_0 = prev, before_j+1 =
 * lp[j][d_j] + before_j: each one IEEE add, as stock's running score), and d_j is kept while it
 * is that token (or tolerated: -lp[j][d_j] <= threshold, BiLD's rollback rule) and j < gamma.
 * Out: accepted [B], and tokens / cum [B, m] whose first accepted + 1 entries are the kept
 * drafts and the target's token with their running scores (what comes after is not part of
 * the verdict). Only the positions up to the first rejection are read.
 * Where a position it reads has its best score at more than one token (and the draft there is
 * not tolerated), torch's top-k picks one by an order of its own: the row is counted in the
 * return value and the caller takes the torch rule instead (the same bits otherwise).
 *
 * sd_commit: row b appends tokens[b, :accepted + 1] at n_in[b], cut after its first EOS; a
 * token at step >= max_len (step = n_in[b] - 1 + j) becomes EOS. Writes out_tokens / out_cum
 * [B, ld] there, n_out = n_in + kept, keep [B], has_eos [B]; returns the rows with an EOS.
 */
#include <math.h>
#include <stdint.h>

#include "kernels.h"
#if defined(__AVX512F__) || defined(__AVX2__)
#include <immintrin.h>
#endif

/* the largest x[v] + add over v < *done (a multiple of the vector width; the caller does the
 * rest one value at a time); x holds no NaN */
static inline float max_plus_f32(const float *x, int64_t V, float add, int64_t *done) {
  float best = -INFINITY;
  int64_t v = 0;
#if defined(__AVX512F__)
  __m512 a = _mm512_set1_ps(add), m = _mm512_set1_ps(-INFINITY);
  for (; v + 16 <= V; v += 16) m = _mm512_max_ps(_mm512_add_ps(_mm512_loadu_ps(x + v), a), m);
  best = _mm512_reduce_max_ps(m);
#elif defined(__AVX2__)
  __m256 a = _mm256_set1_ps(add), m = _mm256_set1_ps(-INFINITY);
  for (; v + 8 <= V; v += 8) m = _mm256_max_ps(_mm256_add_ps(_mm256_loadu_ps(x + v), a), m);
  float lanes[8];
  _mm256_storeu_ps(lanes, m);
  for (int i = 0; i < 8; i++) best = lanes[i] > best ? lanes[i] : best;
#endif
  *done = v;
  return best;
}

static inline double max_plus_f64(const double *x, int64_t V, double add, int64_t *done) {
  double best = -INFINITY;
  int64_t v = 0;
#if defined(__AVX512F__)
  __m512d a = _mm512_set1_pd(add), m = _mm512_set1_pd(-INFINITY);
  for (; v + 8 <= V; v += 8) m = _mm512_max_pd(_mm512_add_pd(_mm512_loadu_pd(x + v), a), m);
  best = _mm512_reduce_max_pd(m);
#elif defined(__AVX2__)
  __m256d a = _mm256_set1_pd(add), m = _mm256_set1_pd(-INFINITY);
  for (; v + 4 <= V; v += 4) m = _mm256_max_pd(_mm256_add_pd(_mm256_loadu_pd(x + v), a), m);
  double lanes[4];
  _mm256_storeu_pd(lanes, m);
  for (int i = 0; i < 4; i++) best = lanes[i] > best ? lanes[i] : best;
#endif
  *done = v;
  return best;
}

#define DEFINE_SPEC_STEP(SUFFIX, T)                                                           \
  /* the token of the best x[v] + add into *token, its score into *score; 0 if that score is \
     at one token only, else 1 (a tie, or nothing finite to compare) */                      \
  static inline int best_##SUFFIX(const T *x, int64_t V, T add, int64_t *token, T *score) {   \
    int64_t v;                                                                                \
    T best = max_plus_##SUFFIX(x, V, add, &v);                                                \
    for (; v < V; v++) best = x[v] + add > best ? x[v] + add : best;                          \
    int64_t first = 0;                                                                        \
    while (first < V && !(x[first] + add == best)) first++;                                   \
    if (first == V || best == -INFINITY) return 1;                                            \
    int64_t equal = 0;                                                                        \
    for (v = first + 1; v < V; v++) equal += x[v] + add == best;                              \
    *token = first;                                                                           \
    *score = best;                                                                            \
    return equal != 0;                                                                        \
  }                                                                                           \
                                                                                              \
  int64_t sd_greedy_verify_##SUFFIX(const T *lp, int64_t B, int64_t m, int64_t V,             \
                                    const int64_t *drafts, int64_t k, const int64_t *gamma,   \
                                    const T *prev, int tolerate, double threshold,            \
                                    int64_t *accepted, int64_t *tokens, T *cum) {             \
    int64_t ties = 0;                                                                         \
    for (int64_t b = 0; b < B; b++) {                                                         \
      T before = prev[b];                                                                     \
      int64_t cap = gamma[b] < k ? gamma[b] : k, a = 0;                                       \
      int tie = 0;                                                                            \
      for (int64_t j = 0; j < m; j++) {                                                       \
        const T *x = lp + (b * m + j) * V;                                                    \
        int64_t choice = 0;                                                                   \
        T score = 0;                                                                          \
        int unsure = best_##SUFFIX(x, V, before, &choice, &score);                           \
        if (j < cap) {                                                                        \
          int64_t d = drafts[b * k + j];                                                      \
          int tolerated = tolerate && -x[d] <= (T)threshold;                                  \
          if (tolerated || (!unsure && d == choice)) {                                        \
            tokens[b * m + j] = d;                                                            \
            before = cum[b * m + j] = x[d] + before;                                          \
            a++;                                                                              \
            continue;                                                                         \
          }                                                                                   \
        }                                                                                     \
        tie = unsure;                                                                         \
        tokens[b * m + j] = choice;                                                           \
        cum[b * m + j] = score;                                                               \
        break;                                                                                \
      }                                                                                       \
      accepted[b] = a;                                                                        \
      ties += tie;                                                                            \
    }                                                                                         \
    return ties;                                                                              \
  }                                                                                           \
                                                                                              \
  int64_t sd_commit_##SUFFIX(const int64_t *tokens, const T *cum, const int64_t *accepted,    \
                             int64_t B, int64_t m, const int64_t *n_in, int64_t eos,          \
                             int64_t max_len, int64_t *out_tokens, T *out_cum, int64_t ld,    \
                             int64_t *n_out, int64_t *keep, uint8_t *has_eos) {               \
    int64_t ended = 0;                                                                        \
    for (int64_t b = 0; b < B; b++) {                                                         \
      int64_t n = n_in[b], kept = accepted[b] + 1, j;                                         \
      uint8_t end = 0;                                                                        \
      for (j = 0; j < kept && !end; j++) {                                                    \
        int64_t t = n - 1 + j >= max_len ? eos : tokens[b * m + j];                           \
        end = t == eos;                                                                       \
        out_tokens[b * ld + n + j] = t;                                                       \
        out_cum[b * ld + n + j] = cum[b * m + j];                                             \
      }                                                                                       \
      n_out[b] = n + j;                                                                       \
      keep[b] = j;                                                                            \
      has_eos[b] = end;                                                                       \
      ended += end;                                                                           \
    }                                                                                         \
    return ended;                                                                             \
  }

DEFINE_SPEC_STEP(f32, float)
DEFINE_SPEC_STEP(f64, double)
