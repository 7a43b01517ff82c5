/* ngram_lookup.c: n-gram lookup drafts (prompt lookup decoding) for many rows at once (CPU).
 *
 * Built by loader.py at every instruction-set level (plain C), called by speculative/ngram.py
 * (`NgramProposer`). For row b, with history h = tokens[b * ld .. + lengths[b]) (BOS at 0, then
 * the row's committed tokens) and source s = src[b * src_ld .. + src_len) (or none):
 *
 *   for n = nmax down to nmin, the row's last n tokens (its suffix) are looked for
 *     1. in s, the occurrence nearest to the suffix's own place in the output first (its
 *        position in the source's text, after any left padding, against the suffix's output
 *        position len - n - 1: where a copy of the source would have it; of two as near, the
 *        later one);
 *     2. then in h, ending before the suffix's own last token, the latest occurrence first;
 *   the first n that occurs anywhere gives the draft: up to k tokens that follow that occurrence
 *   (in s: up to its end; in h: up to the end of h, so a repeated pattern continues). An output
 *   that copies its source repeats short n-grams of it ("of the"): the nearest occurrence is the
 *   one being copied far more often than the latest.
 *
 * BOS, EOS and pad are fillers: a window holding one matches nothing, and a continuation ends
 * before one. A row whose suffix occurs nowhere (or whose history is shorter than nmin) drafts
 * nothing. Rows are a few dozen to a few hundred tokens, so a row's lookup is at most a few
 * thousand integer compares: a few microseconds, where the same in tensor ops costs a dozen
 * calls a step (ngram.py's `lookup_torch`, used off the CPU).
 */
#include <stdint.h>

#include "kernels.h"

static int filler(int64_t t, int64_t pad, int64_t eos) { return t == pad || t == eos || t < 0; }

/* whether hay[p .. p + n) equals needle[0 .. n) with no filler in it */
static int same(const int64_t *hay, int64_t p, const int64_t *needle, int64_t n, int64_t pad,
                int64_t eos) {
  for (int64_t i = 0; i < n; i++)
    if (hay[p + i] != needle[i] || filler(needle[i], pad, eos)) return 0;
  return 1;
}

/* copies up to k tokens of hay[from .. end) into out, stopping at a filler; returns the count */
static int64_t follow(const int64_t *hay, int64_t from, int64_t end, int64_t k, int64_t pad,
                      int64_t eos, int64_t *out) {
  int64_t j = 0;
  while (j < k && from + j < end && !filler(hay[from + j], pad, eos)) {
    out[j] = hay[from + j];
    j++;
  }
  return j;
}

int64_t nl_lookup_row(const int64_t *h, int64_t len, const int64_t *s, int64_t src_len,
                      int64_t nmin, int64_t nmax, int64_t k, int64_t pad, int64_t eos,
                      int64_t *out) {
  if (k < 1) return 0;
  for (int64_t n = nmax; n >= nmin; n--) {
    if (n < 1 || len - 1 < n) continue; /* the suffix must not reach into BOS */
    const int64_t *suffix = h + len - n;
    if (s) {
      int64_t lead = 0; /* the source's left padding: its text starts there */
      while (lead < src_len && s[lead] == pad) lead++;
      const int64_t diagonal = lead + len - n - 1;
      int64_t best = -1, distance = 0;
      for (int64_t p = src_len - n - 1; p >= 0; p--) {
        const int64_t d = p > diagonal ? p - diagonal : diagonal - p;
        if ((best < 0 || d < distance) && same(s, p, suffix, n, pad, eos) &&
            !filler(s[p + n], pad, eos)) {
          best = p;
          distance = d;
        }
      }
      if (best >= 0) return follow(s, best + n, src_len, k, pad, eos, out);
    }
    /* in the history: an occurrence at p ends at p + n - 1 < len - 1 (so it is not the suffix
     * itself and at least one token follows it) */
    for (int64_t p = len - n - 1; p >= 1; p--)
      if (same(h, p, suffix, n, pad, eos)) {
        int64_t got = follow(h, p + n, len, k, pad, eos, out);
        if (got > 0) return got;
      }
  }
  return 0;
}

int64_t nl_lookup(const int64_t *tokens, int64_t ld, const int64_t *lengths, int64_t B,
                  const int64_t *src, int64_t src_ld, int64_t src_len, int64_t nmin,
                  int64_t nmax, int64_t k, int64_t pad, int64_t eos, int64_t *drafts,
                  int64_t *drafted) {
  int64_t widest = 0;
  for (int64_t b = 0; b < B; b++) {
    drafted[b] = nl_lookup_row(tokens + b * ld, lengths[b], src ? src + b * src_ld : 0,
                               src_len, nmin, nmax, k, pad, eos, drafts + b * k);
    if (drafted[b] > widest) widest = drafted[b];
  }
  return widest;
}
