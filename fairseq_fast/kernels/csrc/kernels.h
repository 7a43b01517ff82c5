/* kernels.h: every function the kernels export, and the structs they take, written once.
 *
 * Each C file includes this header, so the compiler checks every definition against it;
 * kernels/loader.py reads it to declare the functions' argument types to ctypes and to build the
 * structs as ctypes.Structure classes. Declarations here are one per statement, with the types
 * below only: (const) int, int32_t, int64_t, float, double, void, pointers to anything, the
 * structs of this file (and arrays of them).
 *
 * FF_ABI_VERSION: raise it with any change to a declaration here. The loader puts it in the
 * cache key and refuses a library whose ff_abi_version() differs from this file's.
 */
#ifndef FAIRSEQ_FAST_KERNELS_H
#define FAIRSEQ_FAST_KERNELS_H

#include <stdint.h>

#define FF_ABI_VERSION 11

/* Constants Python uses too: kernels/loader.py reads each `#define FF_<NAME> <integer>` of this
 * file into loader.CONSTANTS["<NAME>"], so that neither side copies the other's by hand. */
/* sg_sparse_linear_*'s mode */
#define FF_SPARSE_NEVER 0   /* the dense kernel */
#define FF_SPARSE_CHEAPER 1 /* skip x's zeros where sg_sparse_cheaper says that is cheaper */
#define FF_SPARSE_ALWAYS 2  /* skip x's zeros */
/* dl_layer's activation, between fc1 and fc2 */
#define FF_ACT_RELU 0
#define FF_ACT_GELU 1 /* x * 0.5 * (1 + erf(x / sqrt 2)), fairseq's `gelu` */
/* bs_candidates_*'s mode: the length rule of a step */
#define FF_NO_RULE 0
#define FF_ONLY_EOS 1 /* at the maximum length: EOS only */
#define FF_NO_EOS 2   /* before the minimum length: anything but EOS */
/* bs_candidates_*'s k (2 x beam) is at most this */
#define FF_MAX_CANDIDATES 64

/* every library (abi.c): FF_ABI_VERSION, and sizeof(struct) by name (-1: no such struct) */
int ff_abi_version(void);
int64_t ff_struct_size(const char *name);

/* small_gemm.c: y = x W^T (+ bias) (+ res) (relu), W packed in blocks of sg_block() outputs */
int sg_block(void);
/* w [n] float32: bit 0 set where every value is a float16 number, bit 1 where every one is
 * finite; w [N, K] packed into p (blocks of sg_block() outputs, k-major, zeros past N), as
 * float32 or as float16 (every value a float16 number) */
int sg_scan(const float *w, int64_t n, int threads);
void sg_pack_f32(const float *w, int64_t N, int64_t K, float *p, int threads);
void sg_pack_f16(const float *w, int64_t N, int64_t K, uint16_t *p, int threads);
void sg_linear_f32(const float *x, int64_t R, int64_t K, const float *p, const float *bias,
                   float *y, int64_t N, const float *res, int relu, int threads);
void sg_linear_f16(const float *x, int64_t R, int64_t K, const uint16_t *p, const float *bias,
                   float *y, int64_t N, const float *res, int relu, int threads);
/* the same, skipping x's zeros (the same bits for finite weights): mode FF_SPARSE_* (above;
 * cheaper: sg_sparse_cheaper of the call's nonzero counts per row and nonzero flags per k);
 * scratch: sg_sparse_scratch(R, K) int32s */
int64_t sg_sparse_scratch(int64_t R, int64_t K);
int sg_sparse_cheaper(const int32_t *cnt, const uint8_t *any, int64_t R, int64_t K);
void sg_sparse_linear_f32(const float *x, int64_t R, int64_t K, const float *p,
                          const float *bias, float *y, int64_t N, const float *res, int relu,
                          int32_t *scratch, int mode, int threads);
void sg_sparse_linear_f16(const float *x, int64_t R, int64_t K, const uint16_t *p,
                          const float *bias, float *y, int64_t N, const float *res, int relu,
                          int32_t *scratch, int mode, int threads);

/* attention.c: softmax(q k^T + mask) v for all rows and heads; the mean over heads */
void fa_attend_f32(const float *q, int64_t qb, int64_t qh, int64_t qn, float scale,
                   const float *k, const float *v, int64_t kb, int64_t kh, int64_t kt,
                   float *out, int64_t B, int64_t H, int64_t n, int64_t D, int64_t T,
                   int64_t group, const int64_t *kv_rows, const int64_t *start,
                   const uint8_t *pad, const int64_t *origin, int64_t origin_stride,
                   float *probs, int threads);
void fa_head_mean(const float *probs, int64_t B, int64_t H, int64_t m, float *out);

/* decoder_layer.c: one layer's step */
typedef struct {
  const void *w;             /* packed weight (small_gemm.pack) */
  const float *b;            /* bias or NULL */
  int64_t in_features;       /* K */
  int64_t out_features;      /* N */
  int32_t half;              /* packed as float16 */
} dl_linear;

typedef struct {
  const float *w;
  const float *b;
  float eps;
} dl_norm;

typedef struct {
  int64_t dim;
  int64_t heads;
  int64_t head_dim;
  int64_t ffn;
  int32_t normalize_before;
  int32_t has_cross;
  float scaling;
  float cross_scaling;
  int32_t sparse_ffn;        /* fc2's sg_sparse_linear mode (its input is relu(fc1)); 0 unless
                                the fc2 weight is finite and the activation ReLU */
  int32_t activation;        /* FF_ACT_* */
  dl_norm norm[3];           /* self_attn_layer_norm, encoder_attn_layer_norm, final_layer_norm */
  dl_linear qkv;
  dl_linear out;
  dl_linear cross_q;
  dl_linear cross_out;
  dl_linear fc1;
  dl_linear fc2;
} dl_layer;

/* GELU (FF_ACT_GELU) over x [R, n] in place, as dl_layer_f32 applies it */
void dl_gelu_f32(float *x, int64_t R, int64_t n, int threads);
/* the work floats of dl_layer_f32 for R = B * n rows of layers of width dim, FFN ffn */
int64_t dl_work_floats(int64_t R, int64_t dim, int64_t ffn);
void dl_layer_f32(const dl_layer *L, float *x, int64_t B, int64_t n, float *cache_k,
                  float *cache_v, int64_t cb, int64_t ch, int64_t ct, const int64_t *start,
                  int64_t total, const uint8_t *self_pad, const int64_t *origin,
                  int64_t origin_stride, const float *cross_k, const float *cross_v, int64_t xb,
                  int64_t xh, int64_t xt, int64_t S, int64_t group, const int64_t *cross_rows,
                  const uint8_t *pad, float *cross_probs, float *work, int threads);

/* greedy_draft.c: a draft decoder's greedy steps, several in one call */
typedef struct {
  const float *embed;        /* token embeddings [V, dim] */
  float embed_scale;
  const float *positions;    /* position embeddings [P, dim], or NULL */
  int64_t position_offset;   /* the row of position 0 (fairseq: padding_idx + 1) */
  int64_t position_rows;     /* P: later positions read row P - 1 */
  dl_norm embed_norm;        /* layernorm_embedding (w NULL: none) */
  dl_norm final_norm;        /* the decoder's final layer_norm (w NULL: none) */
  dl_linear output;          /* output projection: every token, or a shortlist's rows */
  const int64_t *vocab;      /* the token of each output row, ascending; NULL: row i is token i */
  int64_t layers;
  const dl_layer *layer;     /* [layers] */
} gd_decoder;

typedef struct {
  float *k;                  /* self-attention cache [B, H, capacity, D], strides cb, ch, ct */
  float *v;
  int64_t cb, ch, ct;
  const float *cross_k;      /* encoder K/V (NULL: none), as dl_layer_f32 takes them */
  const float *cross_v;
  int64_t xb, xh, xt, S, group;
  const int64_t *cross_rows;
} gd_layer_state;

typedef struct {
  int64_t eos, pad, unk;
  float unk_penalty;
  int64_t min_len;           /* no EOS at a step < min_len */
  int64_t max_len;           /* only EOS at a step >= max_len */
} gd_rules;

int64_t gd_work_floats(const gd_decoder *D, int64_t B, int64_t width);
int64_t gd_forward_work_floats(const gd_decoder *D, int64_t R);
int64_t gd_greedy_f32(const gd_decoder *D, const gd_layer_state *S, const gd_rules *rules,
                      int64_t B, const int64_t *feed, int64_t width, const int64_t *unread,
                      int64_t *lengths, const int64_t *first_step, int64_t k,
                      const uint8_t *pad, int64_t *drafts, float *step_scores, float *probs,
                      float *work, int threads);
void gd_forward_f32(const gd_decoder *D, const gd_layer_state *S, int64_t B, const int64_t *feed,
                    int64_t n, const int64_t *lengths, int64_t total, const uint8_t *pad,
                    const int64_t *origin, int64_t origin_stride, const int64_t *off,
                    float *scores, float *probs, float *work, int threads);
int64_t gd_lookahead_work_floats(const gd_decoder *D, int64_t B, int64_t k);
int64_t gd_lookahead_f32(const gd_decoder *D, const gd_layer_state *S, const gd_rules *rules,
                         int64_t B, int64_t *tokens, int64_t ld, const int64_t *n_tokens,
                         const int64_t *src, int64_t src_ld, int64_t src_len, int64_t nmin,
                         int64_t nmax, int64_t k, int64_t limit, int64_t *lengths,
                         const uint8_t *pad, int64_t *chosen, float *step_scores,
                         int64_t *counts, int64_t *tally, float *work, int threads);

/* beam_step.c (portable): a beam-search step's top k candidates per sentence (k at most
 * FF_MAX_CANDIDATES; mode FF_NO_RULE, FF_ONLY_EOS or FF_NO_EOS) */
void bs_candidates_f32(const float *lp, int64_t ld, const float *prev, int64_t sentences,
                       int64_t group, int64_t beams, int64_t V, int64_t k, int64_t pad,
                       int64_t unk, float unk_penalty, int64_t eos, int mode, float *out_score,
                       int64_t *out_beam, int64_t *out_token, int threads);
void bs_candidates_f64(const double *lp, int64_t ld, const double *prev, int64_t sentences,
                       int64_t group, int64_t beams, int64_t V, int64_t k, int64_t pad,
                       int64_t unk, double unk_penalty, int64_t eos, int mode,
                       double *out_score, int64_t *out_beam, int64_t *out_token, int threads);

/* ngram_block.c (portable): the no-repeat-n-gram rule for one step of many rows */
void ng_block_f32(const int64_t *tokens, int64_t tok_ld, int64_t rows, int64_t len, int64_t n,
                  float *lprobs, int64_t ld, int64_t vocab, int threads);
void ng_block_f64(const int64_t *tokens, int64_t tok_ld, int64_t rows, int64_t len, int64_t n,
                  double *lprobs, int64_t ld, int64_t vocab, int threads);

/* ngram_lookup.c (portable): n-gram lookup drafts (prompt lookup) for many rows */
int64_t nl_lookup(const int64_t *tokens, int64_t ld, const int64_t *lengths, int64_t B,
                  const int64_t *src, int64_t src_ld, int64_t src_len, int64_t nmin,
                  int64_t nmax, int64_t k, int64_t pad, int64_t eos, int64_t *drafts,
                  int64_t *drafted);

/* spec_step.c (portable): a greedy verify window's verdict; the commit of what rows keep */
int64_t sd_greedy_verify_f32(const float *lp, int64_t B, int64_t m, int64_t V,
                             const int64_t *drafts, int64_t k, const int64_t *gamma,
                             const float *prev, int tolerate, double threshold,
                             int64_t *accepted, int64_t *tokens, float *cum);
int64_t sd_greedy_verify_f64(const double *lp, int64_t B, int64_t m, int64_t V,
                             const int64_t *drafts, int64_t k, const int64_t *gamma,
                             const double *prev, int tolerate, double threshold,
                             int64_t *accepted, int64_t *tokens, double *cum);
int64_t sd_commit_f32(const int64_t *tokens, const float *cum, const int64_t *accepted,
                      int64_t B, int64_t m, const int64_t *n_in, int64_t eos, int64_t max_len,
                      int64_t *out_tokens, float *out_cum, int64_t ld, int64_t *n_out,
                      int64_t *keep, uint8_t *has_eos);
int64_t sd_commit_f64(const int64_t *tokens, const double *cum, const int64_t *accepted,
                      int64_t B, int64_t m, const int64_t *n_in, int64_t eos, int64_t max_len,
                      int64_t *out_tokens, double *out_cum, int64_t ld, int64_t *n_out,
                      int64_t *keep, uint8_t *has_eos);

/* Between the files of one level, not called from Python: the work-sharing bodies that
 * decoder_layer.c calls inside its own parallel region (each ends with a barrier). */
void sg_linear_f32_units(const float *x, int64_t R, int64_t K, const float *p,
                         const float *bias, float *y, int64_t N, const float *res, int relu);
void sg_linear_f16_units(const float *x, int64_t R, int64_t K, const uint16_t *p,
                         const float *bias, float *y, int64_t N, const float *res, int relu);
void sg_sparse_linear_f32_units(const float *x, int64_t R, int64_t K, const float *p,
                                const float *bias, float *y, int64_t N, const float *res,
                                int relu, int32_t *scratch, int mode);
void sg_sparse_linear_f16_units(const float *x, int64_t R, int64_t K, const uint16_t *p,
                                const float *bias, float *y, int64_t N, const float *res,
                                int relu, int32_t *scratch, int mode);
void fa_attend_units(const float *q, int64_t qb, int64_t qh, int64_t qn, float scale,
                     const float *k, const float *v, int64_t kb, int64_t kh, int64_t kt,
                     float *out, int64_t B, int64_t H, int64_t n, int64_t D, int64_t T,
                     int64_t group, const int64_t *kv_rows, const int64_t *start,
                     const uint8_t *pad, const int64_t *origin, int64_t origin_stride,
                     float *probs, int64_t cluster);
void fa_attend_ragged_units(const float *q, int64_t qn, int64_t qh, float scale, const float *k,
                            const float *v, int64_t kb, int64_t kh, int64_t kt, float *out,
                            int64_t B, int64_t H, int64_t D, int64_t T, int64_t group,
                            const int64_t *kv_rows, const int64_t *start, const uint8_t *pad,
                            const int64_t *off, float *probs, int64_t n_probs);
int64_t nl_lookup_row(const int64_t *h, int64_t len, const int64_t *s, int64_t src_len,
                      int64_t nmin, int64_t nmax, int64_t k, int64_t pad, int64_t eos,
                      int64_t *out);
void dl_norm_units(const dl_norm *nm, const float *x, float *y, int64_t R, int64_t C);
void dl_layer_units(const dl_layer *L, float *x, int64_t B, int64_t n, float *cache_k,
                    float *cache_v, int64_t cb, int64_t ch, int64_t ct, const int64_t *start,
                    int64_t total, const uint8_t *self_pad, const int64_t *origin,
                    int64_t origin_stride, const float *cross_k, const float *cross_v, int64_t xb,
                    int64_t xh, int64_t xt, int64_t S, int64_t group, const int64_t *cross_rows,
                    const uint8_t *pad, float *cross_probs, const int64_t *off, float *work);

#endif
