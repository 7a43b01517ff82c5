"""Typed structs and calls of the fused decoder kernels (csrc/decoder_layer.c, greedy_draft.c).

    s = fused.layer(dim=..., heads=..., qkv=fused.linear(packed, bias, ...), ...)
    fused.run_layers([s, ...], x, caches, crosses, start=start, total=total, ...)
    d = fused.decoder(embed=..., output=..., layers=[s, ...], keep=keep)
    fused.decoder_forward(d, fused.layer_states(caches, crosses), tokens, lengths, ...)
    steps = fused.greedy(d, states, fused.rules(eos=2, ...), feed, ...)

The structs are kernels.h's (loader.struct). Each builder takes named fields and appends the
tensors the struct points into to `keep`, which its owner holds for as long as the struct lives.
The per-state arguments (`cache_args`, `cross_args`) are worked out once per state tensor and
reused by every step; they carry the sizes strict mode checks the calls against.

Strict mode (calls.STRICT, FAIRSEQ_FAST_STRICT=1) checks, before each call, the shapes and
dtypes of the tensors passed and the indices the kernel goes through: the cache slots a call
writes (start + n within the capacity), the tokens it embeds (below the embedding's rows), the
rows of the encoder K/V it reads, and the sizes of the outputs and the scratch space.
"""
import ctypes
from typing import Optional, Sequence, Tuple

import torch
from torch import Tensor

from fairseq_fast.kernels import calls, loader
from fairseq_fast.kernels.calls import check_tensor, check_within, ptr, require

ACT_RELU, ACT_GELU = loader.CONSTANTS["ACT_RELU"], loader.CONSTANTS["ACT_GELU"]  # kernels.h

Linear, Norm, Layer, Decoder, LayerState, Rules = (loader.struct(name) for name in (
    "dl_linear", "dl_norm", "dl_layer", "gd_decoder", "gd_layer_state", "gd_rules"))


def available(name: str) -> bool:
    """Whether kernel `name` (dl_layer_f32, gd_forward_f32, gd_greedy_f32) runs here."""
    return loader.function(name) is not None


# -- structs ------------------------------------------------------------------------------------
def _kept(t: Optional[Tensor], keep: list) -> Optional[int]:
    if t is None:
        return None
    t = t.detach().contiguous()
    keep.append(t)
    return t.data_ptr()


def norm(weight: Optional[Tensor], bias: Optional[Tensor], eps: float, keep: list) -> Norm:
    """A layer norm's struct; weight None: no norm."""
    if weight is None:
        return Norm(None, None, 0.0)
    return Norm(_kept(weight, keep), _kept(bias, keep), eps)


def linear(packed: Tensor, bias: Optional[Tensor], *, in_features: int, out_features: int,
           keep: list) -> Linear:
    """A linear's struct: `packed` its weight as small_gemm packs it (float32 or float16)."""
    if calls.STRICT:
        require("dl_linear", packed.dtype in (torch.float32, torch.float16),
                f"packed weight is {packed.dtype}")
        require("dl_linear", bias is None or bias.numel() == out_features,
                f"bias of {bias.numel() if bias is not None else 0} for {out_features} outputs")
    keep.append(packed)
    return Linear(packed.data_ptr(), _kept(bias, keep), in_features, out_features,
                  int(packed.dtype == torch.float16))


def layer(*, dim: int, heads: int, head_dim: int, ffn: int, normalize_before: bool,
          scaling: float, self_norm: Norm, final_norm: Norm, qkv: Linear, out: Linear,
          fc1: Linear, fc2: Linear, sparse_ffn: int, activation: int,
          cross: Optional[Tuple[float, Norm, Linear, Linear]] = None) -> Layer:
    """A decoder (or encoder) layer's struct; activation: ACT_RELU or ACT_GELU; cross: the
    encoder attention's (scaling, norm, q projection, out projection), or None."""
    if calls.STRICT:
        name = "dl_layer"
        require(name, heads * head_dim == dim, f"{heads} heads of {head_dim} for width {dim}")
        require(name, activation in (ACT_RELU, ACT_GELU), f"activation {activation}")
        for what, lin, k, n in (("qkv", qkv, dim, 3 * dim), ("out", out, dim, dim),
                                ("fc1", fc1, dim, ffn), ("fc2", fc2, ffn, dim)):
            require(name, (lin.in_features, lin.out_features) == (k, n),
                    f"{what} is {lin.in_features} -> {lin.out_features}, expected {k} -> {n}")
    s = Layer()
    s.dim, s.heads, s.head_dim, s.ffn = dim, heads, head_dim, ffn
    s.normalize_before = int(normalize_before)
    s.scaling = scaling
    s.norm[0], s.norm[2] = self_norm, final_norm
    s.qkv, s.out, s.fc1, s.fc2 = qkv, out, fc1, fc2
    s.sparse_ffn = sparse_ffn
    s.activation = activation
    s.has_cross = int(cross is not None)
    if cross is not None:
        s.cross_scaling, s.norm[1], s.cross_q, s.cross_out = cross
    return s


def decoder(*, embed: Tensor, embed_scale: float, positions: Optional[Tensor],
            position_offset: int, embed_norm: Norm, final_norm: Norm, output: Linear,
            vocab: Optional[Tensor], layers: Sequence[Layer], keep: list) -> Decoder:
    """A whole decoder's struct: token embeddings [V, dim], position table [P, dim] or None,
    the output projection (vocab: the token of each output row, a shortlist's; None: all)."""
    array = (Layer * len(layers))(*layers)
    keep.append(array)
    s = Decoder()
    s.embed = _kept(embed, keep)
    s.embed_scale = embed_scale
    s.positions = _kept(positions, keep)
    s.position_offset = position_offset
    s.position_rows = 0 if positions is None else positions.size(0)
    s.embed_norm, s.final_norm, s.output = embed_norm, final_norm, output
    s.vocab = _kept(vocab, keep)
    s.layers = len(layers)
    s.layer = ctypes.addressof(array)
    s.embed_rows = embed.size(0)  # for strict mode's token check (not a C field)
    if calls.STRICT:
        require("gd_decoder", vocab is None or vocab.numel() == output.out_features,
                f"{output.out_features} output rows for a shortlist of "
                f"{0 if vocab is None else vocab.numel()}")
    return s


def rules(*, eos: int, pad: int, unk: int, unk_penalty: float, min_len: int,
          max_len: int) -> Rules:
    """The step rules of greedy steps (EOS before min_len banned, only EOS from max_len)."""
    return Rules(eos, pad, unk, unk_penalty, min_len, max_len)


# -- per-state arguments --------------------------------------------------------------------------
# self-attention K/V: the two pointers and the strides of B, H and capacity, then (not passed)
# the capacity and the rows, for strict mode
CACHE_FIELDS = 5
# encoder K/V: the two pointers, 3 strides, source length, group, cross_rows; none:
NO_CROSS = (None, None, 0, 0, 0, 0, 1, None)


def cache_args(k: Tensor, v: Tensor) -> tuple:
    """A layer's self-attention K/V [B, H, capacity, D] (same strides) as the kernels take them."""
    if calls.STRICT:
        name = "dl_layer_f32"
        check_tensor(name, "cache v", v, tuple(k.shape), torch.float32, True)
        require(name, k.dtype == torch.float32 and k.dim() == 4 and k.stride() == v.stride()
                and k.stride(3) == 1, "cache k and v are not float32 [B, H, T, D] alike")
    return (k.data_ptr(), v.data_ptr(), k.stride(0), k.stride(1), k.stride(2), k.size(2),
            k.size(0))


def cross_args(k: Tensor, v: Tensor, group: int, rows: Optional[Tensor]) -> tuple:
    """A layer's encoder K/V [R, H, S, D] (same strides, contiguous D): `group` rows of the
    batch per encoder row (the beams of a sentence); rows [sentences]: each sentence's encoder
    row (None: sentence s reads row s)."""
    if calls.STRICT:
        name = "dl_layer_f32"
        require(name, k.dtype == v.dtype == torch.float32 and k.shape == v.shape
                and k.stride() == v.stride() and k.stride(3) == 1,
                "encoder k and v are not float32 [R, H, S, D] alike")
        if rows is not None:
            check_tensor(name, "cross_rows", rows, (rows.numel(),), torch.long)
            check_within(name, "cross_rows", rows, 0, k.size(0))
    return (k.data_ptr(), v.data_ptr(), k.stride(0), k.stride(1), k.stride(2), k.size(2),
            group, ptr(rows))


def layer_states(caches: Sequence[tuple], crosses: Sequence[tuple]):
    """The gd_layer_state array of the layers' cache_args and cross_args."""
    states = (LayerState * len(caches))(*[LayerState(*cache[:CACHE_FIELDS], *cross)
                                          for cache, cross in zip(caches, crosses)])
    states.capacity = min(cache[CACHE_FIELDS] for cache in caches)
    states.rows = min(cache[CACHE_FIELDS + 1] for cache in caches)
    return states


# -- calls --------------------------------------------------------------------------------------
def layer_work_floats(rows: int, dim: int, ffn: int) -> int:
    return loader.function("dl_work_floats")(rows, dim, ffn)


def run_layers(structs: Sequence[Layer], x: Tensor, caches: Sequence[tuple],
               crosses: Sequence[tuple], *, start: Optional[Tensor], total: int,
               self_pad: Optional[Tensor], origin: Optional[Tensor], pad: Optional[Tensor],
               probs: Optional[Tensor], work: Tensor) -> None:
    """Every layer on x [B, n, dim] (float32, contiguous), in place. Layer i's cache receives
    the n new keys/values of row b at slots start[b] .. start[b] + n - 1 (start None: slots 0 ..
    n - 1) and attends to slots below `total`; self_pad [B, total]: slots masked; origin [B, .]:
    DecoderState.origin; pad [., S]: source padding; probs [B, H, n, S]: receives the last
    layer's encoder attention probabilities."""
    bsz, n, dim = x.shape
    if calls.STRICT:
        _check_layers(structs, x, caches, crosses, start, total, self_pad, origin, pad, probs,
                      work)
    fn = loader.function("dl_layer_f32")
    threads = torch.get_num_threads()
    origin_args = _origin_args(origin)
    start_ptr, self_pad_ptr, pad_ptr = ptr(start), ptr(self_pad), ptr(pad)
    last = len(structs) - 1
    for i, (s, cache, cross) in enumerate(zip(structs, caches, crosses)):
        fn(ctypes.byref(s), x.data_ptr(), bsz, n, *cache[:CACHE_FIELDS], start_ptr, total,
           self_pad_ptr, *origin_args, *cross, pad_ptr,
           probs.data_ptr() if probs is not None and i == last else None, work.data_ptr(),
           threads)


def _origin_args(origin: Optional[Tensor]):
    """The (pointer, row stride) arguments of DecoderState.origin (None: none)."""
    return (None, 0) if origin is None else (origin.data_ptr(), origin.stride(0))


def _check_origin(name, origin, bsz, total, rows):
    """origin (None or [B, >= total]) names a cache row below `rows` for each row's slot."""
    if origin is not None:
        require(name, origin.dim() == 2 and origin.size(0) == bsz and origin.size(1) >= total
                and origin.dtype == torch.long and origin.stride(1) == 1,
                f"origin {tuple(origin.shape)} {origin.dtype} for {bsz} rows of {total} slots")
        check_within(name, "origin", origin[:, :total], 0, rows)


def _check_layers(structs, x, caches, crosses, start, total, self_pad, origin, pad, probs,
                  work):
    name = "dl_layer_f32"
    bsz, n, dim = x.shape
    require(name, len(structs) == len(caches) == len(crosses),
            f"{len(structs)} layers, {len(caches)} caches, {len(crosses)} encoder K/V")
    check_tensor(name, "x", x, (bsz, n, structs[0].dim), torch.float32)
    capacity = min(cache[CACHE_FIELDS] for cache in caches)
    rows = min(cache[CACHE_FIELDS + 1] for cache in caches)
    require(name, rows >= bsz, f"caches of {rows} rows for x's {bsz}")
    _check_origin(name, origin, bsz, total, rows)
    require(name, 0 < total <= capacity, f"total {total} outside [1, {capacity}]")
    if start is not None:
        check_tensor(name, "start", start, (bsz,), torch.long)
        check_within(name, "start", start, 0, capacity - n + 1)
    else:
        require(name, n <= capacity, f"{n} inputs for a capacity of {capacity}")
    if self_pad is not None:
        check_tensor(name, "self_pad", self_pad, (bsz, total), torch.bool)
    sources = {cross[5] for cross in crosses if cross[0] is not None}
    require(name, len(sources) <= 1, f"encoder K/V of source lengths {sorted(sources)}")
    if pad is not None and sources:
        require(name, pad.dim() == 2 and pad.size(1) == next(iter(sources))
                and pad.dtype == torch.bool and pad.is_contiguous(),
                f"source padding {tuple(pad.shape)} for a source of {next(iter(sources))}")
    if probs is not None:
        source = next(iter(sources), 0)
        check_tensor(name, "probs", probs, (bsz, structs[-1].heads, n, source), torch.float32)
    need = layer_work_floats(bsz * n, dim, max(s.ffn for s in structs))
    require(name, work.dtype == torch.float32 and work.numel() >= need,
            f"work of {work.numel()} floats, {need} needed")


def decoder_work_floats(decoder: Decoder, bsz: int, width: int) -> int:
    """Floats of scratch a greedy call of bsz rows of `width` first inputs needs."""
    return loader.function("gd_work_floats")(ctypes.byref(decoder), bsz, width)


def forward_work_floats(decoder: Decoder, rows: int) -> int:
    """Floats of scratch a whole-decoder pass over `rows` inputs in all needs."""
    return loader.function("gd_forward_work_floats")(ctypes.byref(decoder), rows)


def decoder_forward(decoder: Decoder, states, tokens: Tensor, lengths: Tensor, *, total: int,
                    pad: Optional[Tensor], off: Optional[Tensor], scores: Tensor,
                    work: Tensor, probs: Optional[Tensor] = None,
                    origin: Optional[Tensor] = None) -> None:
    """The whole decoder on tokens [B, n] (long, contiguous) at slots lengths[b] .. + n - 1:
    the output rows' scores into `scores` [rows, N] (off [B + 1]: row b's first input's row,
    ragged rows reading off[b + 1] - off[b] inputs; None: B * n rows); probs [B, H, n, S]
    (None: not wanted) receives the last layer's encoder attention probabilities; origin [B, .]:
    DecoderState.origin (not with off)."""
    bsz, n = tokens.shape
    if calls.STRICT:
        rows = bsz * n if off is None else int(off[-1])
        _check_decoder("gd_forward_f32", decoder, states, tokens, lengths, n, total, scores,
                       work, rows if off is None else None,
                       need=forward_work_floats(decoder, rows))
        _check_origin("gd_forward_f32", origin, bsz, total, states.rows)
        require("gd_forward_f32", origin is None or off is None, "origin with ragged rows")
        if off is not None:
            check_tensor("gd_forward_f32", "off", off, (bsz + 1,), torch.long)
            check_within("gd_forward_f32", "off", off.diff(), 0, n + 1)
            require("gd_forward_f32", int(off[-1]) == scores.size(0),
                    f"{int(off[-1])} rows for scores of {scores.size(0)}")
        if probs is not None:
            check_tensor("gd_forward_f32", "probs", probs, (bsz, probs.size(1), n, probs.size(3)),
                         torch.float32)
    loader.function("gd_forward_f32")(
        ctypes.byref(decoder), states, bsz, tokens.data_ptr(), n, lengths.data_ptr(), total,
        ptr(pad), *_origin_args(origin), ptr(off), scores.data_ptr(), ptr(probs),
        work.data_ptr(), torch.get_num_threads())


def greedy(decoder: Decoder, states, step_rules: Rules, feed: Tensor, unread: Tensor,
           lengths: Tensor, first: Tensor, *, k: int, pad: Optional[Tensor], drafts: Tensor,
           scores: Optional[Tensor], probs: Optional[Tensor], work: Tensor) -> int:
    """Up to k greedy steps of every row: feed [B, width] (row b's unread[b] inputs first),
    lengths [B] advanced in place, first [B] the step of each row's first draft; drafts [B, k]
    receives the tokens, scores [k, B, N] and probs [k, B, H, S] each step's outputs. Returns
    the steps taken."""
    bsz, width = feed.shape
    if calls.STRICT:
        name = "gd_greedy_f32"
        _check_decoder(name, decoder, states, feed, lengths, width + k, None, None, work, None)
        check_tensor(name, "unread", unread, (bsz,), torch.long)
        check_within(name, "unread", unread, 0, width + 1)
        check_tensor(name, "first", first, (bsz,), torch.long)
        check_tensor(name, "drafts", drafts, (bsz, k), torch.long)
        if scores is not None:
            check_tensor(name, "scores", scores, (k, bsz, decoder.output.out_features),
                         torch.float32)
        if probs is not None:
            check_tensor(name, "probs", probs, (k, bsz, probs.size(2), probs.size(3)),
                         torch.float32)
    return loader.function("gd_greedy_f32")(
        ctypes.byref(decoder), states, ctypes.byref(step_rules), bsz, feed.data_ptr(), width,
        unread.data_ptr(), lengths.data_ptr(), first.data_ptr(), k, ptr(pad), drafts.data_ptr(),
        ptr(scores), ptr(probs), work.data_ptr(), torch.get_num_threads())


def lookahead_work_floats(decoder: Decoder, bsz: int, k: int) -> int:
    """Floats of scratch a look-ahead call of bsz rows with drafts of up to k tokens needs."""
    return loader.function("gd_lookahead_work_floats")(ctypes.byref(decoder), bsz, k)


def lookahead(decoder: Decoder, states, step_rules: Rules, tokens: Tensor, n_tokens: Tensor,
              source: Optional[Tensor], lengths: Tensor, *, ngram_min: int, ngram_max: int,
              k: int, limit: int, pad: Optional[Tensor], chosen: Tensor, scores: Tensor,
              counts: Tensor, tally: Tensor, work: Tensor) -> int:
    """Rounds of greedy decoding with n-gram look-ahead (csrc/greedy_draft.c): tokens [B, L]
    each row's history (long, contiguous; the chosen tokens are appended from n_tokens [B]),
    source [B, S] or None, lengths [B] advanced in place; chosen [B, limit], scores [B, limit,
    N], counts [B] and tally [6] receive the tokens, their scores, how many per row, and the
    rounds' counters. Returns the rounds run."""
    bsz, ld = tokens.shape
    if calls.STRICT:
        name = "gd_lookahead_f32"
        _check_decoder(name, decoder, states, tokens[:, :1].contiguous(), lengths, limit + k,
                       None, None, work, None)
        check_tensor(name, "history", tokens, (bsz, ld), torch.long)
        check_tensor(name, "n_tokens", n_tokens, (bsz,), torch.long)
        check_within(name, "n_tokens", n_tokens, 1, ld)
        if source is not None:
            check_tensor(name, "source", source, (bsz, source.size(1)), torch.long)
        check_tensor(name, "chosen", chosen, (bsz, limit), torch.long)
        check_tensor(name, "scores", scores, (bsz, limit, decoder.output.out_features),
                     torch.float32)
        check_tensor(name, "counts", counts, (bsz,), torch.long)
        check_tensor(name, "tally", tally, (6,), torch.long)
        require(name, 1 <= ngram_min <= ngram_max and k >= 0 and limit >= k + 1,
                f"n-grams {ngram_min}..{ngram_max}, k {k}, limit {limit}")
        need = lookahead_work_floats(decoder, bsz, k)
        require(name, work.dtype == torch.float32 and work.numel() >= need,
                f"work of {work.numel()} floats, {need} needed")
    rounds = loader.function("gd_lookahead_f32")(
        ctypes.byref(decoder), states, ctypes.byref(step_rules), bsz, tokens.data_ptr(), ld,
        n_tokens.data_ptr(), ptr(source), 0 if source is None else source.stride(0),
        0 if source is None else source.size(1), ngram_min, ngram_max, k, limit,
        lengths.data_ptr(), ptr(pad), chosen.data_ptr(), scores.data_ptr(), counts.data_ptr(),
        tally.data_ptr(), work.data_ptr(), torch.get_num_threads())
    if rounds < 0:
        raise MemoryError("gd_lookahead_f32: out of memory")
    return rounds


def _check_decoder(name, decoder, states, tokens, lengths, n, total, scores, work, rows,
                   need=None):
    """tokens [B, width] within the embedding, lengths + n within the caches' capacity, work
    of `need` floats (None: a greedy call's)."""
    bsz, width = tokens.shape
    check_tensor(name, "tokens", tokens, (bsz, width), torch.long)
    check_within(name, "tokens", tokens, 0, decoder.embed_rows)
    check_tensor(name, "lengths", lengths, (bsz,), torch.long)
    require(name, len(states) == decoder.layers, f"{len(states)} layer states for "
            f"{decoder.layers} layers")
    require(name, states.rows >= bsz, f"caches of {states.rows} rows for {bsz}")
    check_within(name, "lengths + inputs", lengths + n, 0, states.capacity + 1)
    if total is not None:
        require(name, 0 < total <= states.capacity,
                f"total {total} outside [1, {states.capacity}]")
    if scores is not None:
        require(name, scores.dtype == torch.float32 and scores.is_contiguous()
                and scores.size(-1) == decoder.output.out_features
                and (rows is None or scores.numel() == rows * decoder.output.out_features),
                f"scores {tuple(scores.shape)} for {rows} rows of "
                f"{decoder.output.out_features}")
    if need is None:
        need = decoder_work_floats(decoder, bsz, width)
    require(name, work.dtype == torch.float32 and work.numel() >= need,
            f"work of {work.numel()} floats, {need} needed")
