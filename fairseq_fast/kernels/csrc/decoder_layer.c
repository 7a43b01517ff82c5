/* decoder_layer.c: one fairseq TransformerDecoderLayer step in one call (float32, CPU).
 *
 * Built with small_gemm.c and attention.c at every instruction-set level (loader.py), called by
 * fused_layer.py for decoder layers and (without cross attention, not causal) encoder layers.
 * A decoder step on a small model is dozens of tiny tensor ops per layer; each costs tens of
 * microseconds inside a real step (its data and the dispatcher's code evicted by the weights
 * streamed before it), more than its arithmetic. Here a layer is eight calls into
 * the matmul and attention kernels with layer norms in between, and nothing else:
 *
 *   pre-norm (normalize_before):              post-norm:
 *   x += out(attn(qkv(LN0(x))))               x = LN0(x + out(attn(qkv(x))))
 *   x += cout(cross(cq(LN1(x))))              x = LN1(x + cout(cross(cq(x))))
 *   x += fc2(act(fc1(LN2(x))))                x = LN2(x + fc2(act(fc1(x))))
 *
 * with the new keys/values written into the self-attention cache at slots start[b] + j (rows may
 * be at different lengths), q scaled as fairseq scales it, residual adds and ReLU fused into the
 * matmuls' stores (the same bits as separate ops), fc2 over relu's nonzero outputs where
 * L->sparse_ffn says (small_gemm.c: the same bits as over all of them). act is ReLU or GELU
 * (L->activation). Layer norms and GELU are computed here: the same formulas as torch's, rounded
 * differently in the last bits (~1e-7 relative).
 */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "kernels.h"

static void linear(const dl_linear *l, const float *x, int64_t R, float *y, const float *res,
                   int relu) {
  if (l->half)
    sg_linear_f16_units(x, R, l->in_features, (const uint16_t *)l->w, l->b, y, l->out_features, res, relu);
  else
    sg_linear_f32_units(x, R, l->in_features, (const float *)l->w, l->b, y, l->out_features, res, relu);
}

/* fc2: y = x . w^T + b + res, skipping x's zeros as `mode` says (small_gemm.c: the same
 * bits either way), scratch for the sparse kernel's lists */
static void linear_sparse_input(const dl_linear *l, const float *x, int64_t R, float *y,
                                const float *res, int mode, int32_t *scratch) {
  if (l->half)
    sg_sparse_linear_f16_units(x, R, l->in_features, (const uint16_t *)l->w, l->b, y,
                               l->out_features, res, 0, scratch, mode);
  else
    sg_sparse_linear_f32_units(x, R, l->in_features, (const float *)l->w, l->b, y,
                               l->out_features, res, 0, scratch, mode);
}

/* exp(-a) for a >= 0, a above 87 (or NaN) taken as 87 (an integer min of the bits, which the
 * compiler vectorises at every level, where a float comparison it would not): -a = n ln 2 + g
 * with |g| <= ln 2 / 2 (n rounded by adding 1.5 * 2^23; ln 2 in two parts, so that n ln 2 is
 * exact), a degree-5 polynomial for exp(g) (Cephes expf), scaled by 2^n in the exponent bits */
static inline float exp_negative(float a) {
  const float magic = 12582912.0f;
  uint32_t n, bits;
  memcpy(&bits, &a, sizeof bits);
  bits = bits < 0x42AE0000u ? bits : 0x42AE0000u; /* 87.0f */
  memcpy(&a, &bits, sizeof a);
  const float x = -a;
  float fn = x * 1.44269504088896341f + magic;
  memcpy(&n, &fn, sizeof n);
  n -= 0x4B400000u; /* the integer, two's complement */
  fn -= magic;
  const float g = (x - fn * 0.693359375f) - fn * -2.12194440e-4f;
  float p = ((((1.9875691500e-4f * g + 1.3981999507e-3f) * g + 8.3334519073e-3f) * g +
              4.1665795894e-2f) * g + 1.6666665459e-1f) * g + 5.0000001201e-1f;
  p = p * g * g + g + 1.0f;
  memcpy(&bits, &p, sizeof bits);
  bits += n << 23;
  memcpy(&p, &bits, sizeof p);
  return p;
}

/* GELU, x * 0.5 * (1 + erf(x / sqrt 2)) (torch's F.gelu, fairseq's `gelu`), with erf as
 * torch's vectorised CPU erf writes it: Abramowitz and Stegun 7.1.26, 1 - r(t) t exp(-z^2) with
 * t = 1 / (1 + p |z|), absolute error below 1.5e-7, sign restored */
static inline float gelu(float x) {
  const float z = x * 0.70710678118654752f;
  const float t = 1.0f / (0.3275911f * fabsf(z) + 1.0f);
  const float r = (((1.061405429f * t - 1.453152027f) * t + 1.421413741f) * t - 0.284496736f) *
                      t + 0.254829592f;
  const float e = 1.0f - r * t * exp_negative(z * z);
  return x * 0.5f * (1.0f + copysignf(e, z));
}

/* rows [R, n] in place, rows shared among the region's threads */
static void gelu_units(float *x, int64_t R, int64_t n) {
#pragma omp for schedule(static)
  for (int64_t r = 0; r < R; r++) {
    float *xr = x + r * n;
#pragma omp simd
    for (int64_t c = 0; c < n; c++) xr[c] = gelu(xr[c]);
  }
}

void dl_gelu_f32(float *x, int64_t R, int64_t n, int threads) {
#pragma omp parallel num_threads(threads) if (threads > 1)
  gelu_units(x, R, n);
}

/* h, att [R, dim]; qkv or the FFN's hidden units [R, max(3 dim, ffn)]; fc2's scratch */
int64_t dl_work_floats(int64_t R, int64_t dim, int64_t ffn) {
  return R * (2 * dim + (ffn > 3 * dim ? ffn : 3 * dim)) + sg_sparse_scratch(R, ffn);
}

/* rows shared among the region's threads, as the kernels' bodies */
void dl_norm_units(const dl_norm *nm, const float *x, float *y, int64_t R, int64_t C) {
#pragma omp for schedule(static)
  for (int64_t r = 0; r < R; r++) {
    const float *xr = x + r * C;
    float *yr = y + r * C;
    float sum = 0.0f;
#pragma omp simd reduction(+ : sum)
    for (int64_t c = 0; c < C; c++) sum += xr[c];
    const float mean = sum / (float)C;
    float sq = 0.0f;
#pragma omp simd reduction(+ : sq)
    for (int64_t c = 0; c < C; c++) sq += (xr[c] - mean) * (xr[c] - mean);
    const float rstd = 1.0f / sqrtf(sq / (float)C + nm->eps);
#pragma omp simd
    for (int64_t c = 0; c < C; c++) yr[c] = (xr[c] - mean) * rstd * nm->w[c] + nm->b[c];
  }
}

/* x [B * n, dim] in place. cache_k/v: [B, H, capacity, D] with strides (cb, ch, ct), D
 * contiguous (more rows than B with origin [B, origin_stride], which names the cache row of
 * each row's key slots, see attention.c; row b still writes cache row b); start [B];
 * total = keys to read (max(start) + n). An encoder layer: start NULL,
 * the n inputs written to slots 0 .. n - 1 and every one of them visible to every query except
 * where self_pad [B, n] is nonzero (source padding), total = n, no cross attention.
 * cross_k/v [B / group, H, S, D] with strides (xb, xh, xt); pad [B / group, S] or NULL;
 * cross_rows [B / group] or NULL: sentence s reads cross_k/v row (and pad row) cross_rows[s];
 * cross_probs [B, H, n, S] or NULL: receives the encoder attention's probabilities.
 * off [B + 1] or NULL: ragged rows, row b's inputs are rows off[b] .. off[b + 1] - 1 of x
 * (off[B] in all, at most n a row; causal decoder layers, no origin; cross_probs as above, row
 * b's input j at [b, :, j], a row's places past its inputs left unwritten).
 * work: dl_work_floats(rows of x, dim, ffn) floats.
 * Runs on every thread of the caller's parallel region (dl_layer_f32's, or greedy_draft.c's,
 * which runs all layers of several steps in one): each step below shares its rows or
 * units among them and ends with a barrier (one parallel region per layer rather than one per
 * kernel, so that the layer norms and cache writes are shared too, not left to one thread while
 * the others wait). */
void dl_layer_units(const dl_layer *L, float *x, int64_t B, int64_t n, float *cache_k,
                    float *cache_v, int64_t cb, int64_t ch, int64_t ct, const int64_t *start,
                    int64_t total, const uint8_t *self_pad, const int64_t *origin,
                    int64_t origin_stride, const float *cross_k, const float *cross_v, int64_t xb,
                    int64_t xh, int64_t xt, int64_t S, int64_t group, const int64_t *cross_rows,
                    const uint8_t *pad, float *cross_probs, const int64_t *off, float *work) {
  const int64_t R = off ? off[B] : B * n, C = L->dim, H = L->heads, D = L->head_dim;
  const int64_t wide = L->ffn > 3 * C ? L->ffn : 3 * C;
  float *h = work, *att = work + R * C, *qkv = work + 2 * R * C, *f = qkv;
  int32_t *scratch = (int32_t *)(qkv + R * wide);
  const int pre = L->normalize_before;

  /* self-attention */
  const float *in = x;
  if (pre) {
    dl_norm_units(&L->norm[0], x, h, R, C);
    in = h;
  }
  linear(&L->qkv, in, R, qkv, NULL, 0); /* [R, 3C]: q | k | v */
#pragma omp for schedule(static)
  for (int64_t b = 0; b < B; b++)
    for (int64_t j = 0; j < (off ? off[b + 1] - off[b] : n); j++) {
      const float *row = qkv + ((off ? off[b] : b * n) + j) * 3 * C;
      const int64_t slot = start ? start[b] + j : j;
      for (int64_t hd = 0; hd < H; hd++) {
        memcpy(cache_k + b * cb + hd * ch + slot * ct, row + C + hd * D, D * sizeof(float));
        memcpy(cache_v + b * cb + hd * ch + slot * ct, row + 2 * C + hd * D, D * sizeof(float));
      }
    }
  if (off)
    fa_attend_ragged_units(qkv, 3 * C, D, L->scaling, cache_k, cache_v, cb, ch, ct, att, B, H,
                           D, total, 1, NULL, start, NULL, off, NULL, 0);
  else /* a sentence's rows (beams) share much of their history: clustered */
    fa_attend_units(qkv, n * 3 * C, D, 3 * C, L->scaling, cache_k, cache_v, cb, ch, ct, att, B,
                    H, n, D, total, 1, NULL, start, start ? NULL : self_pad, origin,
                    origin_stride, NULL, group);
  linear(&L->out, att, R, x, x, 0); /* x += out(att), in place */
  if (!pre) dl_norm_units(&L->norm[0], x, x, R, C);

  /* encoder attention */
  if (L->has_cross && cross_k) {
    in = x;
    if (pre) {
      dl_norm_units(&L->norm[1], x, h, R, C);
      in = h;
    }
    float *q = qkv;
    linear(&L->cross_q, in, R, q, NULL, 0);
    if (off)
      fa_attend_ragged_units(q, C, D, L->cross_scaling, cross_k, cross_v, xb, xh, xt, att, B,
                             H, D, S, group, cross_rows, NULL, pad, off, cross_probs, n);
    else
      fa_attend_units(q, n * C, D, C, L->cross_scaling, cross_k, cross_v, xb, xh, xt, att, B,
                      H, n, D, S, group, cross_rows, NULL, pad, NULL, 0, cross_probs, group);
    linear(&L->cross_out, att, R, x, x, 0);
    if (!pre) dl_norm_units(&L->norm[1], x, x, R, C);
  }

  /* feed-forward */
  in = x;
  if (pre) {
    dl_norm_units(&L->norm[2], x, h, R, C);
    in = h;
  }
  linear(&L->fc1, in, R, f, NULL, L->activation == FF_ACT_RELU);
  if (L->activation == FF_ACT_GELU) gelu_units(f, R, L->ffn);
  linear_sparse_input(&L->fc2, f, R, x, x, L->sparse_ffn, scratch);
  if (!pre) dl_norm_units(&L->norm[2], x, x, R, C);
}

void dl_layer_f32(const dl_layer *L, float *x, int64_t B, int64_t n, float *cache_k,
                  float *cache_v, int64_t cb, int64_t ch, int64_t ct, const int64_t *start,
                  int64_t total, const uint8_t *self_pad, const int64_t *origin,
                  int64_t origin_stride, const float *cross_k, const float *cross_v, int64_t xb,
                  int64_t xh, int64_t xt, int64_t S, int64_t group, const int64_t *cross_rows,
                  const uint8_t *pad, float *cross_probs, float *work, int threads) {
#pragma omp parallel num_threads(threads) if (threads > 1)
  dl_layer_units(L, x, B, n, cache_k, cache_v, cb, ch, ct, start, total, self_pad, origin, origin_stride,
        cross_k, cross_v, xb, xh, xt, S, group, cross_rows, pad, cross_probs, NULL, work);
}
