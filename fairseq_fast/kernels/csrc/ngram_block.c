/* ngram_block.c: the no-repeat-n-gram rule for one step of many rows, in place (CPU).
 *
 * Built by loader.py at every instruction-set level (plain C), called by ngram_blocker.py
 * (`block_last_ngrams`) for fairseq's generators on CPU. The rule is ngram_blocker.py's (fairseq's
 * CUDA kernel's): after tokens[0 .. len-1] of a row, every window tokens[c .. c+n-2],
 * c <= len-n, equal to the suffix tokens[len-n+1 .. len-1] bans tokens[c+n-1] (-inf). A row is a
 * few dozen tokens: comparing them directly is a few hundred integer compares per row, where the
 * torch formulation costs ~10 tensor ops per step whatever the size.
 */
#include <math.h>
#include <stdint.h>

#include "kernels.h"

#define DEFINE_NGRAM_BLOCK(NAME, T)                                                           \
  void NAME(const int64_t *tokens, int64_t tok_ld, int64_t rows, int64_t len, int64_t n,      \
            T *lprobs, int64_t ld, int64_t vocab, int threads) {                              \
    if (n < 1 || len < n) return;                                                             \
    _Pragma("omp parallel for num_threads(threads) schedule(static) if(rows * len > 4096)")   \
    for (int64_t r = 0; r < rows; r++) {                                                      \
      const int64_t *t = tokens + r * tok_ld, *suffix = t + len - n + 1;                      \
      T *out = lprobs + r * ld;                                                               \
      for (int64_t c = 0; c <= len - n; c++) {                                                \
        int64_t i = 0;                                                                        \
        while (i < n - 1 && t[c + i] == suffix[i]) i++;                                       \
        int64_t banned = t[c + n - 1];                                                        \
        if (i == n - 1 && banned >= 0 && banned < vocab) out[banned] = -INFINITY;             \
      }                                                                                       \
    }                                                                                         \
  }

DEFINE_NGRAM_BLOCK(ng_block_f32, float)
DEFINE_NGRAM_BLOCK(ng_block_f64, double)
