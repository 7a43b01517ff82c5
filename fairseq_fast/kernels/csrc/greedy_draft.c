/* greedy_draft.c: a draft decoder's greedy steps, several in one call, and a whole decoder's
 * forward pass in one call (float32, CPU).
 *
 * gd_greedy_f32 is called by decoding/greedy_steps.py for a greedy draft that no Python-side
 * rule needs to see (no forced prefix, no n-gram blocking, no stop rule). Each step is what
 * lean_decoder.forward and StepRules.log_probs + argmax do for one token per row, without
 * returning to Python:
 *
 *   x = embed_scale * embed[token] + positions[offset + slot]   (then layernorm_embedding)
 *   every layer: dl_layer_units (decoder_layer.c), the new K/V written at slot lengths[b]
 *   h = final_norm(x); scores = output(h)                        (a shortlist's rows or all)
 *   token = argmax of the scores under stock's edits: pad never, unk - unk_penalty, no EOS at a
 *           step < min_len, only EOS at a step >= max_len (log_softmax does not move an argmax)
 *
 * and the token is the next step's input. The first step may read up to `width` inputs per row
 * (the proposer's catch-up: row b's first unread[b] are real, the rest fillers whose slots are
 * written but then not counted); its scores come from each row's last real input. Drafting stops
 * after step k, or after a step at which every row has proposed EOS at least once.
 *
 * gd_forward_f32 is the first three lines for n inputs per row, every input's scores out: what
 * lean_decoder.forward computes (decoding/fused_decoder.py), e.g. a target's verify pass.
 *
 * One parallel region for the whole call: the steps' parts share rows or output units among the
 * threads as the layers do, with barriers between them.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kernels.h"

static int64_t widest_ffn(const gd_decoder *D) {
  int64_t ffn = 0;
  for (int64_t i = 0; i < D->layers; i++)
    if (D->layer[i].ffn > ffn) ffn = D->layer[i].ffn;
  return ffn;
}

/* gd_forward_f32's: x [R, C] and the layers' work, for R inputs in all */
int64_t gd_forward_work_floats(const gd_decoder *D, int64_t R) {
  const int64_t C = D->layer[0].dim;
  return R * C + dl_work_floats(R, C, widest_ffn(D));
}

/* a pass's over B * width inputs, then the final rows [B, C] and scores [B, N] */
int64_t gd_work_floats(const gd_decoder *D, int64_t B, int64_t width) {
  return gd_forward_work_floats(D, B * width) + B * D->layer[0].dim +
         B * D->output.out_features;
}

/* x[r] for the n inputs of each row: tokens of row b at tokens[b * stride + j], slot
 * lengths[b] + j, at row b * n + j of x (with off [B + 1]: row off[b] + j, j < off[b + 1] -
 * off[b]). Two passes (scale, then add) so that each product is rounded before the sum, as
 * torch's separate ops do. */
static void embed_one(const gd_decoder *D, int64_t token, int64_t slot, float *xr) {
  const int64_t C = D->layer[0].dim;
  const float *e = D->embed + token * C;
  for (int64_t c = 0; c < C; c++) xr[c] = D->embed_scale * e[c];
  if (D->positions) {
    int64_t row = D->position_offset + slot;
    if (row > D->position_rows - 1) row = D->position_rows - 1;
    const float *p = D->positions + row * C;
    for (int64_t c = 0; c < C; c++) xr[c] += p[c];
  }
}

static void embed(const gd_decoder *D, const int64_t *tokens, int64_t stride, int64_t B,
                  int64_t n, const int64_t *lengths, const int64_t *off, float *x) {
  const int64_t C = D->layer[0].dim;
  if (off) {
#pragma omp for schedule(static)
    for (int64_t b = 0; b < B; b++)
      for (int64_t j = 0; j < off[b + 1] - off[b]; j++)
        embed_one(D, tokens[b * stride + j], lengths[b] + j, x + (off[b] + j) * C);
    return;
  }
#pragma omp for schedule(static)
  for (int64_t r = 0; r < B * n; r++)
    embed_one(D, tokens[r / n * stride + r % n], lengths[r / n] + r % n, x + r * C);
}

/* every layer on x [B * n, C] (ragged rows with off, or key slots read through origin, see
 * dl_layer_units; inside the parallel region), the new K/V at slots lengths[b] .. */
static void layers_units(const gd_decoder *D, const gd_layer_state *S, float *x, int64_t B,
                         int64_t n, const int64_t *lengths, int64_t total, const uint8_t *pad,
                         const int64_t *origin, int64_t origin_stride, const int64_t *off,
                         float *probs, float *work) {
  for (int64_t i = 0; i < D->layers; i++) {
    const gd_layer_state *s = S + i;
    dl_layer_units(D->layer + i, x, B, n, s->k, s->v, s->cb, s->ch, s->ct, lengths, total, NULL,
                   origin, origin_stride, s->cross_k, s->cross_v, s->xb, s->xh, s->xt, s->S,
                   s->group, s->cross_rows, pad, i == D->layers - 1 ? probs : NULL, off, work);
  }
}

/* scores [R, N] = the output projection of h [R, C] (inside the parallel region) */
static void output_units(const gd_decoder *D, const float *h, int64_t R, float *scores) {
  const dl_linear *out = &D->output;
  if (out->half)
    sg_linear_f16_units(h, R, out->in_features, (const uint16_t *)out->w, out->b, scores,
                        out->out_features, NULL, 0);
  else
    sg_linear_f32_units(h, R, out->in_features, (const float *)out->w, out->b, scores,
                        out->out_features, NULL, 0);
}

/* the argmax of one row's scores under stock's edits at `step` (torch's argmax: the first of
 * equal maxima, in token order) */
static int64_t choose(const float *s, int64_t N, const int64_t *vocab, const gd_rules *rules,
                      int64_t step) {
  if (step >= rules->max_len) return rules->eos;
  int64_t best = 0;
  float top = -INFINITY;
  int found = 0;
  for (int64_t i = 0; i < N; i++) {
    const int64_t token = vocab ? vocab[i] : i;
    float v = s[i];
    if (token == rules->pad || isnan(v)) continue;
    if (token == rules->eos && step < rules->min_len) continue;
    if (token == rules->unk) v -= rules->unk_penalty;
    if (!found || v > top) {
      top = v;
      best = token;
      found = 1;
    }
  }
  return best;
}

/* B rows; feed [B, width] the first step's inputs (unread[b] real ones per row); lengths [B]
 * the rows' cached inputs, advanced here; first_step [B] the decoding step of each row's first
 * draft; drafts [B, k] receives the drafts; pad [B / group, S] source padding or NULL; work:
 * gd_work_floats(D, B, width) floats. Returns the steps taken (<= k). Where not NULL,
 * step_scores [k, B, N] receives each step's scores and probs [k, B, H, S] the last layer's
 * encoder-attention probabilities of each step (the default generator's look-ahead; probs
 * needs width 1).
 *
 * With step_scores, a row that has proposed EOS is not computed at the later steps of the call
 * (its callers end it there): the steps run on the other rows alone (ragged rows, one input
 * or none), each of which computes what it would beside every row (rows are independent at
 * every kernel). Such a row's later drafts are EOS, its scores there 0 and its probabilities 0;
 * its K/V slots there are not written, though lengths still counts them. A draft's proposals
 * (no step_scores) keep every row to the end, so that its cache holds every step's input. */
int64_t gd_greedy_f32(const gd_decoder *D, const gd_layer_state *S, const gd_rules *rules,
                      int64_t B, const int64_t *feed, int64_t width, const int64_t *unread,
                      int64_t *lengths, const int64_t *first_step, int64_t k,
                      const uint8_t *pad, int64_t *drafts, float *step_scores, float *probs,
                      float *work, int threads) {
  const int64_t C = D->layer[0].dim, N = D->output.out_features;
  const gd_layer_state *last = S + D->layers - 1;
  const int64_t heads = D->layer[D->layers - 1].heads, probs_step = B * heads * last->S;
  float *x = work, *h = x + B * width * C, *layer_work = h + B * C + B * N;
  /* gone[b]: row b has proposed EOS; off [B + 1]: the next step's rows (ragged, one input or
   * none), all of them (off[B] == B) until some are left out */
  int64_t iw[2 * B + 1];
  int64_t *gone = iw, *off = gone + B;
  for (int64_t b = 0; b < B; b++) gone[b] = 0;
  for (int64_t b = 0; b <= B; b++) off[b] = b;
  int64_t steps = 0;
  int done = 0;
#pragma omp parallel num_threads(threads) if (threads > 1)
  for (int64_t j = 0; j < k && !done; j++) {
    const int64_t n = j ? 1 : width;
    const int64_t *rows = off[B] < B ? off : NULL; /* ragged: the rows not gone */
    const int64_t R = rows ? off[B] : B;
    int64_t total = 0;
    for (int64_t b = 0; b < B; b++)
      if (lengths[b] > total) total = lengths[b];
    total += n;
    float *step_probs = probs ? probs + j * probs_step : NULL;
    embed(D, j ? drafts + j - 1 : feed, j ? k : width, B, n, lengths, rows, x);
    if (D->embed_norm.w) dl_norm_units(&D->embed_norm, x, x, R * n, C);
    layers_units(D, S, x, B, n, lengths, total, pad, NULL, 0, rows, step_probs, layer_work);
    float *scores = step_scores ? step_scores + j * B * N : h + B * C;
    /* each row's last input: x itself where rows are ragged (one input each, packed: so are
     * the scores, unpacked below), else gathered into h */
    float *last_x = rows ? x : h;
    if (!rows) {
#pragma omp for schedule(static)
      for (int64_t b = 0; b < B; b++)
        memcpy(h + b * C, x + (b * n + (n > 1 ? unread[b] - 1 : 0)) * C, C * sizeof(float));
    }
    if (D->final_norm.w) dl_norm_units(&D->final_norm, last_x, last_x, R, C);
    output_units(D, last_x, R, scores);
    if (rows) {
#pragma omp single
      /* row b's scores from packed row off[b] <= b: the last rows first, so none is overwritten
       * before it moves; a gone row's are zeros, and so are its probabilities */
      for (int64_t b = B - 1; b >= 0; b--) {
        if (off[b + 1] > off[b]) {
          if (off[b] != b) memmove(scores + b * N, scores + off[b] * N, N * sizeof(float));
        } else {
          memset(scores + b * N, 0, N * sizeof(float));
          if (step_probs)
            memset(step_probs + b * heads * last->S, 0, heads * last->S * sizeof(float));
        }
      } /* (a barrier) */
    }
#pragma omp for schedule(static)
    for (int64_t b = 0; b < B; b++)
      drafts[b * k + j] = rows && gone[b] ? rules->eos
                                          : choose(scores + b * N, N, D->vocab, rules,
                                                   first_step[b] + j);
#pragma omp single
    {
      int ended = 1;  /* every row has proposed EOS by now */
      for (int64_t b = 0; b < B; b++) {
        lengths[b] += n > 1 ? unread[b] : 1;
        gone[b] |= drafts[b * k + j] == rules->eos;
        ended &= gone[b] != 0;
      }
      steps = j + 1;
      done = ended;
      if (step_scores)
        for (int64_t b = 0; b < B; b++) off[b + 1] = off[b] + !gone[b];
    } /* (a barrier) */
  }
  return steps;
}

/* The decoder over n inputs per row: feed [B, n], row b's at slots lengths[b] .. + n - 1 (the
 * layers write their K/V there; lengths is not advanced); total = max(lengths) + n, the key
 * slots attended to; scores [B * n, N] receives every input's scores; probs [B, H, n, S] or
 * NULL receives the last layer's encoder attention probabilities; pad as gd_greedy_f32's;
 * origin [B, origin_stride] or NULL: the cache row of each row's key slots (beams that share
 * their history, see dl_layer_units); work: gd_forward_work_floats(D, rows) floats (rows: B * n,
 * or off[B]). With off [B + 1]
 * (and no origin), ragged rows: row b has only its first off[b + 1] - off[b] inputs (<= n) and
 * scores [off[B], N] receives them, row b's from row off[b]; total = max(lengths + its inputs)
 * suffices. */
void gd_forward_f32(const gd_decoder *D, const gd_layer_state *S, int64_t B, const int64_t *feed,
                    int64_t n, const int64_t *lengths, int64_t total, const uint8_t *pad,
                    const int64_t *origin, int64_t origin_stride, const int64_t *off,
                    float *scores, float *probs, float *work, int threads) {
  const int64_t C = D->layer[0].dim, R = off ? off[B] : B * n;
  float *x = work, *layer_work = x + R * C;
#pragma omp parallel num_threads(threads) if (threads > 1)
  {
    embed(D, feed, n, B, n, lengths, off, x);
    if (D->embed_norm.w) dl_norm_units(&D->embed_norm, x, x, R, C);
    layers_units(D, S, x, B, n, lengths, total, pad, origin, origin_stride, off, probs,
                 layer_work);
    if (D->final_norm.w) dl_norm_units(&D->final_norm, x, x, R, C);
    output_units(D, x, R, scores);
  }
}

/* gd_lookahead_f32: greedy decoding with n-gram look-ahead (prompt lookup), rounds in one call.
 *
 * Each round, for every row at once: the row's n-gram lookup draft (nl_lookup_row, up to k
 * tokens, none where its suffix occurs nowhere) follows its last committed token as the
 * round's inputs (ragged: 1 + drafted per row), and one decoder pass scores them all. Walking
 * a row's positions, the target's token (`choose`, the greedy steps' argmax under stock's
 * edits) is kept while it equals the draft there; the first that differs, or the one after
 * the last draft, ends the row's round. So every round gives each row at least one token of
 * the target's own, and a row with no draft pays for one plain step. The kept tokens are
 * written to the row's history (the next round's lookup reads them) and its cache advances by
 * them (the K/V of a rejected draft's slot is overwritten by the next round).
 *
 * tokens [B, ld]: each row's history (BOS at 0), n_tokens [B] its committed length; src [B,
 * src_ld] the sources (NULL: the history alone); lengths [B] the cached inputs (n_tokens - 1),
 * advanced here. Out: chosen [B, limit] the tokens chosen, counts [B] how many per row (the same
 * tokens are in tokens[b, n_tokens[b] ..]), step_scores [B, limit, N] the scores each was chosen
 * from; tally [6]: rounds, row rounds, drafts offered, drafts kept, row rounds that rejected a
 * draft, inputs scored. The call returns after the first round in which a row chose EOS (or
 * reached max_len), or before a round that could overrun a row's `limit` (limit >= k + 1) or
 * its history's room (ld).
 * work: gd_lookahead_work_floats(D, B, k) floats. Returns the rounds, or -1 out of memory. */
int64_t gd_lookahead_work_floats(const gd_decoder *D, int64_t B, int64_t k) {
  const int64_t C = D->layer[0].dim, R = B * (k + 1);
  return R * C + R * D->output.out_features + dl_work_floats(R, C, widest_ffn(D));
}

int64_t gd_lookahead_f32(const gd_decoder *D, const gd_layer_state *S, const gd_rules *rules,
                         int64_t B, int64_t *tokens, int64_t ld, const int64_t *n_tokens,
                         const int64_t *src, int64_t src_ld, int64_t src_len, int64_t nmin,
                         int64_t nmax, int64_t k, int64_t limit, int64_t *lengths,
                         const uint8_t *pad, int64_t *chosen, float *step_scores,
                         int64_t *counts, int64_t *tally, float *work, int threads) {
  const int64_t C = D->layer[0].dim, N = D->output.out_features, w = k + 1;
  float *x = work, *sc = x + B * w * C, *layer_work = sc + B * w * N;
  int64_t *iw = (int64_t *)malloc(sizeof(int64_t) * (B * w + B + 1 + 4 * B));
  if (!iw) return -1;
  int64_t *feed = iw, *off = feed + B * w, *n = off + B + 1, *acc = n + B, *rej = acc + B,
          *ended = rej + B;
  for (int64_t b = 0; b < B; b++) {
    n[b] = n_tokens[b];
    counts[b] = 0;
  }
  for (int i = 0; i < 6; i++) tally[i] = 0;
  int64_t total = 0;
  int stop = limit < w;
#pragma omp parallel num_threads(threads) if (threads > 1)
  while (!stop) {
#pragma omp single
    {
      off[0] = 0;
      total = 0;
      for (int64_t b = 0; b < B; b++) {
        const int64_t *h = tokens + b * ld;
        int64_t room = ld - n[b] - 1, cap = k < room ? k : room;
        int64_t got = nl_lookup_row(h, n[b], src ? src + b * src_ld : NULL, src_len, nmin, nmax,
                                    cap, rules->pad, rules->eos, feed + b * w + 1);
        feed[b * w] = h[n[b] - 1];
        off[b + 1] = off[b] + 1 + got;
        if (lengths[b] + 1 + got > total) total = lengths[b] + 1 + got;
        tally[2] += got;
      }
      tally[1] += B;
      tally[5] += off[B];
    }
    embed(D, feed, w, B, w, lengths, off, x);
    if (D->embed_norm.w) dl_norm_units(&D->embed_norm, x, x, off[B], C);
    layers_units(D, S, x, B, w, lengths, total, pad, NULL, 0, off, NULL, layer_work);
    if (D->final_norm.w) dl_norm_units(&D->final_norm, x, x, off[B], C);
    output_units(D, x, off[B], sc);
#pragma omp for schedule(static)
    for (int64_t b = 0; b < B; b++) {
      const int64_t inputs = off[b + 1] - off[b];
      int64_t j = 0, match = 0, end = 0;
      acc[b] = 0;
      do { /* position j scores the token after input j; input j + 1 is the draft there */
        const float *s = sc + (off[b] + j) * N;
        const int64_t token = choose(s, N, D->vocab, rules, n[b] - 1 + j);
        tokens[b * ld + n[b] + j] = token;
        chosen[b * limit + counts[b] + j] = token;
        memcpy(step_scores + (b * limit + counts[b] + j) * N, s, N * sizeof(float));
        j++;
        end = token == rules->eos;
        match = j < inputs && token == feed[b * w + j];
        acc[b] += match;
      } while (match && !end);
      rej[b] = j < inputs && !match;
      ended[b] = end;
      n[b] += j;
      counts[b] += j;
      lengths[b] += j;
    }
#pragma omp single
    {
      tally[0]++;
      for (int64_t b = 0; b < B; b++) {
        tally[3] += acc[b];
        tally[4] += rej[b];
        stop |= ended[b] || counts[b] + w > limit || n[b] >= ld;
      }
    }
  }
  free(iw);
  return tally[0];
}
