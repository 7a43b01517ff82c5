"""A lean forward pass for fairseq Transformer decoders: several new tokens per row, ragged rows.

fairseq's incremental decoding feeds one token per call through nn.Module plumbing, string-keyed
incremental-state dicts and a torch.cat of every layer's K/V cache per step. This module reads the
same weights from a fairseq `TransformerDecoderBase` and computes the same function directly:

    logits = LeanDecoder(decoder).forward(state, tokens)      # tokens [B, n] -> logits [B, n, V]

where row b's n inputs sit at decoder positions state.lengths[b] .. + n - 1, attend causally to
everything cached before them and to each other, and are appended to `state` (see
decoder_state.py; rollback = lowering state.lengths).

The arithmetic follows fairseq's own code step for step so that outputs match stock incremental
decoding up to floating-point rounding of differently shaped matmuls: queries scaled before the
dot product, attention softmax in float32 (fairseq's utils.softmax) cast back, positions
`padding_idx + 1 + t`, embed_scale, adaptive input (fairseq's module), quant-noise's embedding
projection, optional layernorm_embedding / project_in/out_dim, pre- or post-norm, NormFormer's
extra norms and head scales; with an adaptive softmax the "logits" are the features it takes.
Anything else is refused by model_gate.py (through `check_supported`) with a reason, never
approximated.
"""
from typing import List, NamedTuple, Optional, Tuple

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from fairseq_fast.kernels import cpu_attention, loader
from fairseq_fast.decoding.decoder_state import DecoderState
from fairseq_fast.errors import UserError
from fairseq_fast.decoding.model_gate import all_layers, decoder_refusal
from fairseq_fast.kernels import packed_linear


def check_supported(decoder: nn.Module) -> None:
    """Raise UserError naming the first part of `decoder` the lean path does not implement
    (model_gate.py holds the list of what it does)."""
    reason = decoder_refusal(decoder)
    if reason is not None:
        raise UserError(reason)


def _layer_norm(module: Optional[nn.Module], x: Tensor) -> Tensor:
    if module is None:
        return x
    if type(module) is nn.LayerNorm:  # not a subclass: Fp32LayerNorm computes in float32
        return F.layer_norm(x, module.normalized_shape, module.weight, module.bias, module.eps)
    return module(x)


def _heads(x: Tensor, heads: int) -> Tensor:
    """[B, T, E] -> [B, heads, T, E // heads]"""
    b, t, e = x.shape
    return x.view(b, t, heads, e // heads).transpose(1, 2)


CROSS_CHUNK_POSITIONS = 512  # encoder positions per matmul of the encoder K/V (on the CPU)


def cross_chunk(enc: Tensor) -> int:
    """Sentences whose encoder K/V one matmul projects, for enc [B, S, C]: on the CPU the
    fewest that make CROSS_CHUNK_POSITIONS positions (a matmul still at full speed), so that
    in-flight batching can project a batch's sentences as they join (CrossSource) and hold one
    such chunk, not the batch's K/V for every layer, while they wait; elsewhere the whole
    batch (no in-flight batching there). A function of the batch's shape only: both ways make
    the same matmuls."""
    if enc.device.type != "cpu":
        return enc.size(0)
    return max(1, -(-CROSS_CHUNK_POSITIONS // max(1, enc.size(1))))


def _sentences(encoder_out: dict) -> Tensor:
    """The encoder output [S, B, C] as [B, S, C], contiguous: a chunk of sentences is then a
    contiguous matmul input (a strided one is slower), the same in either way of projecting."""
    return encoder_out["encoder_out"][0].transpose(0, 1).contiguous()


def _padding(encoder_out: dict) -> Optional[Tensor]:
    """The source padding mask [B, 1, 1, S] of an encoder output, None where nothing is padded."""
    pads = encoder_out["encoder_padding_mask"]
    if len(pads) > 0 and pads[0] is not None and pads[0].any():
        return pads[0][:, None, None, :]
    return None


class CrossSource:
    """A batch's encoder K/V for in-flight batching, projected as its sentences join the rows
    in flight: `take(lo, hi)` gives sentences lo .. hi - 1, which join in order. It holds the
    encoder output and the last chunk it projected (LeanDecoder.cross_state's chunks, so the
    numbers are the same), not every sentence's K/V for every layer."""

    def __init__(self, lean: "LeanDecoder", encoder_out: Optional[dict]):
        self.lean = lean
        self.enc = None
        self.mask = None
        if lean.has_cross_attention and encoder_out is not None:
            self.enc = _sentences(encoder_out)
            self.mask = _padding(encoder_out)
        self.chunk = 0 if self.enc is None else cross_chunk(self.enc)
        self._held: Tuple[int, List[Tensor], List[Tensor]] = (-1, [], [])  # (first, K, V)

    def take(self, lo: int, hi: int) -> Tuple[List[Tensor], List[Tensor], Optional[Tensor]]:
        """(keys, values, mask) of sentences lo .. hi - 1: per layer [hi - lo, H, S, D] (views
        where one chunk holds them all), the mask [hi - lo, 1, 1, S] or None."""
        if self.enc is None:
            return [], [], None
        parts = []
        for first in range(lo - lo % self.chunk, hi, self.chunk):
            if self._held[0] != first:
                self._held = (first, [], [])  # the last chunk goes before the next is made
                enc = self.enc[first:first + self.chunk]
                for i in range(len(self.lean.layers)):
                    k, v = self.lean.cross_layer(i, enc)
                    self._held[1].append(k)
                    self._held[2].append(v)
            a, b = max(lo, first) - first, min(hi, first + self.chunk) - first
            parts.append(([k[a:b] for k in self._held[1]], [v[a:b] for v in self._held[2]]))
        if len(parts) == 1:
            keys, values = parts[0]
        else:
            keys = [torch.cat(ks) for ks in zip(*(p[0] for p in parts))]
            values = [torch.cat(vs) for vs in zip(*(p[1] for p in parts))]
        return keys, values, None if self.mask is None else self.mask[lo:hi]


def _softmax_lanes() -> int:
    """Keys below which torch's CPU softmax sums a row one value at a time (a longer row is
    summed lane by lane, a masked slot adding an exact zero to its lane): the width of its
    float32 vectors at this CPU's level (loader.cpu_level), or more where that width is not
    known."""
    return {"avx512": 16, "avx2": 8}.get(loader.cpu_level(), 32)


def _short_rows_as_stock(scores: Tensor, probs32: Tensor, keys: Tensor) -> Tensor:
    """probs32 with each query that sees fewer keys than _softmax_lanes() softmaxed over exactly
    its keys, as stock's incremental step computes it: torch sums such a row one value at a
    time, but the same row padded with masked slots to that width or more lane by lane, and
    the two sums can round differently. scores [B, H, n, T], keys [B, n]: the keys query
    (b, j) sees (slots 0 .. keys - 1)."""
    lanes = _softmax_lanes()
    if scores.size(-1) < lanes or scores.device.type != "cpu":
        return probs32
    short = keys[keys < lanes]
    if short.numel() == 0:
        return probs32
    by_query, out = scores.transpose(1, 2), probs32.transpose(1, 2)  # [B, n, H, T] views
    for c in short.unique().tolist():
        at = keys == c
        row = torch.softmax(by_query[at][..., :c], dim=-1, dtype=torch.float32)
        out[at] = torch.cat([row, row.new_zeros(row.shape[:-1] + (out.size(-1) - c,))], -1)
    return probs32


def _attend(q: Tensor, k: Tensor, v: Tensor, mask: Optional[Tensor],
            keep_probs: bool = False, keys: Optional[Tensor] = None):
    """q [B, H, n, D] (already scaled), k/v [B / g, H, T, D] shared by g consecutive query rows
    (a sentence's beams), mask bool broadcastable to [B / g, H, g * n, T] (or [B, H, n, T] when
    g == 1) with True = masked. keys [B, n] (self-attention, g == 1): the key slots each query
    sees (0 .. keys - 1), so that a short row's softmax is summed as stock's. Returns [B, n,
    H * D], and the float32 attention probabilities [B, H, n, T] when keep_probs."""
    b, h, n, d = q.shape
    g = b // k.size(0)
    if g > 1:  # grouped: fold the beams into the query axis instead of copying K/V per beam
        q = q.view(k.size(0), g, h, n, d).transpose(1, 2).reshape(k.size(0), h, g * n, d)
    scores = torch.matmul(q, k.transpose(-1, -2))
    if mask is not None:
        scores = scores.masked_fill(mask, float("-inf"))
    # fairseq computes the attention softmax in float32 whatever the model's dtype
    probs32 = torch.softmax(scores, dim=-1, dtype=torch.float32)
    if keys is not None and g == 1:
        probs32 = _short_rows_as_stock(scores, probs32, keys.expand(b, n))
    out = torch.matmul(probs32.to(scores.dtype), v)
    if g > 1:
        out = out.view(k.size(0), h, g, n, d).transpose(1, 2).reshape(b, h, n, d)
        if keep_probs:
            probs32 = probs32.view(k.size(0), h, g, n, -1).transpose(1, 2).reshape(b, h, n, -1)
    out = out.transpose(1, 2).reshape(b, n, h * d)
    return (out, probs32) if keep_probs else out


class _Pass(NamedTuple):
    """Where one call's inputs go, as each layer reads it."""
    rows: Optional[Tensor]  # [B, 1] row indices where row b writes at its own positions[b];
    #                         None where every row writes slots lo .. lo + n - 1
    positions: Tensor  # [B, n] the inputs' decoder time steps
    lo: Optional[int]
    n: int  # inputs per row
    total: int  # key slots [0, total) are attended
    mask: Optional[Tensor]  # the self-attention mask for _attend, or with `fused` the rows'
    #                         start lengths [B] for cpu_attention.attend
    fused: bool  # attention through cpu_attention


class LeanDecoder:
    """Stateless view of a fairseq TransformerDecoder's weights; all state lives in DecoderState.
    Its forward runs torch's ops one at a time: the reference that backends.py's faster ways of
    launching the same function are checked against."""

    def __init__(self, decoder: nn.Module, vocab: Optional[Tensor] = None, kernels: bool = True):
        """vocab: sorted indices of the only tokens to score (a draft's shortlist, see
        draft_vocab.py); the others get logit -inf. None scores every token.
        kernels: matmuls through packed_linear.py (the small-matrix kernel or oneDNN, on weights
        packed once) where its rule says they are faster, and attention through
        cpu_attention.py (float32 on CPU); False: torch's F.linear, matmul and softmax
        everywhere (--no-fast-linear). How whole calls are launched is the backend's
        (backends.py)."""
        check_supported(decoder)
        if vocab is not None and decoder.adaptive_softmax is not None:
            raise UserError("--draft-vocab needs a draft with an output projection (this one "
                            "has an adaptive softmax)")
        self.decoder = decoder
        self.vocab = vocab
        self.linear = packed_linear.of(decoder, kernels=kernels)  # one per decoder, shared
        self.fused_attention = kernels  # cpu_attention.py where usable (float32 on CPU)
        self.layers = all_layers(decoder.layers)
        self._shortlist = (None, None)  # (weights' identity, (vocab, rows, bias))
        first = self.layers[0].self_attn
        self.heads = first.num_heads
        self.head_dim = first.head_dim
        self.padding_idx = decoder.padding_idx
        self.has_cross_attention = getattr(self.layers[0], "encoder_attn", None) is not None

    # -- setup ------------------------------------------------------------------------------
    def max_positions(self) -> int:
        return self.decoder.max_positions()

    def init_state(self, encoder_out: Optional[dict], batch: int, capacity: int,
                   dtype: torch.dtype, device: torch.device, origins: bool = False,
                   reuse: Optional[Tuple[Tensor, Tensor]] = None) -> DecoderState:
        """Allocate a state for `batch` rows and `capacity` decoder inputs; compute encoder K/V
        once. encoder_out is fairseq's encoder output dict (or None for language models), one
        entry per source sentence; with fewer sentences than rows, each sentence serves
        batch / sentences consecutive rows (its beams) without being copied. origins: rows
        reorder without copying K/V (DecoderState.origin; every row then at one length);
        reuse: an earlier state's K/V buffers (DecoderState.allocate)."""
        group = 1
        if self.has_cross_attention and encoder_out is not None:
            group = batch // encoder_out["encoder_out"][0].size(1)
        cross_k, cross_v, cross_mask = self.cross_state(encoder_out)
        return DecoderState.allocate(len(self.layers), batch, self.heads, self.head_dim,
                                     capacity, cross_k, cross_v, cross_mask, dtype, device,
                                     group=group, origins=origins, reuse=reuse)

    def cross_state(self, encoder_out: Optional[dict]
                    ) -> Tuple[List[Tensor], List[Tensor], Optional[Tensor]]:
        """The encoder K/V of each layer, [sentences, H, S, D] contiguous, and the source
        padding mask [sentences, 1, 1, S] (None without padding) of an encoder output (no K/V
        for a language model). Projected a few sentences at a time (`cross_chunk`), as
        `CrossSource` projects them for in-flight batching: a sentence's K/V are the same
        numbers either way."""
        cross_k: List[Tensor] = []
        cross_v: List[Tensor] = []
        if not self.has_cross_attention or encoder_out is None:
            return cross_k, cross_v, None
        enc = _sentences(encoder_out)
        chunk = cross_chunk(enc)
        for i in range(len(self.layers)):
            # contiguous [B, H, S, D]: as a transposed view, every step's matmul would first
            # copy it (B and H cannot be merged into one batch dimension)
            if chunk >= enc.size(0):
                k, v = (t.contiguous() for t in self._cross_heads(i, enc))
            else:
                k = v = None
                for lo in range(0, enc.size(0), chunk):
                    part_k, part_v = self._cross_heads(i, enc[lo:lo + chunk])
                    if k is None:
                        k, v = (t.new_empty((enc.size(0),) + t.shape[1:])
                                for t in (part_k, part_v))
                    k[lo:lo + chunk] = part_k
                    v[lo:lo + chunk] = part_v
            cross_k.append(k)
            cross_v.append(v)
        return cross_k, cross_v, _padding(encoder_out)

    def cross_layer(self, i: int, enc: Tensor) -> Tuple[Tensor, Tensor]:
        """Layer i's encoder keys and values [B, H, S, D], contiguous, of enc [B, S, C]."""
        return tuple(t.contiguous() for t in self._cross_heads(i, enc))

    def _cross_heads(self, i: int, enc: Tensor) -> Tuple[Tensor, Tensor]:
        """Layer i's encoder keys and values of enc [B, S, C] as [B, H, S, D] views: one
        matmul over the stacked k/v projections."""
        attn = self.layers[i].encoder_attn
        k, v = self.linear.stacked(enc, [attn.k_proj.weight, attn.v_proj.weight],
                                   [attn.k_proj.bias, attn.v_proj.bias])
        return _heads(k, attn.num_heads), _heads(v, attn.num_heads)

    def _linear(self, module: nn.Linear, x: Tensor, residual: Optional[Tensor] = None,
                relu: bool = False) -> Tensor:
        """module(x) (+ residual) (relu): one kernel call where the kernel takes it"""
        return self.linear(x, module.weight, module.bias, residual, relu)

    # -- forward ----------------------------------------------------------------------------
    def position_table(self, positions: int) -> Tuple[Tensor, int]:
        """The position embeddings' table, holding at least `positions` decoder time steps where
        it can grow (sinusoidal: grown as fairseq grows it), and the row of time step 0. A
        learned table does not grow: only positions past the target's max length can run off
        it (they are verified but never kept, or belong to a draft, whose proposals are only
        hints); those read its last row."""
        module = self.decoder.embed_positions
        offset = module.padding_idx + 1
        if hasattr(module, "weights"):
            needed = offset + positions
            if needed > module.weights.size(0):
                module.weights = module.get_embedding(
                    needed, module.embedding_dim, module.padding_idx).to(module.weights)
            return module.weights, offset
        return module.weight, offset

    def _positions(self, positions: Tensor, limit: int) -> Optional[Tensor]:
        """positions [B, n] (0-based decoder time steps, all below `limit`) -> embeddings
        [B, n, C]"""
        if self.decoder.embed_positions is None:
            return None
        table, offset = self.position_table(limit)
        return table[(positions + offset).clamp(max=table.size(0) - 1)]

    def begin_call(self, state: DecoderState, n: int) -> Tuple[Tensor, int, int]:
        """Make room in `state` for n more inputs per row and record where they go: (the rows'
        start lengths [B], the first slot every row writes, max(start) + n)."""
        start = state.lengths  # [B]
        starts = start.tolist()
        lo, hi = min(starts), max(starts)
        if state.origin is not None and lo != hi:
            raise RuntimeError("a DecoderState with origins needs every row at one length")
        state.ensure_capacity(hi + n)
        state.wrote(lo, n)
        return start, lo, hi + n

    def end_call(self, state: DecoderState, start: Tensor, n: int,
                 counts: Optional[Tensor] = None) -> None:
        """Close a call that begin_call opened: each row advances by its n inputs, or by its
        counts where the rows are ragged."""
        state.lengths = start + (n if counts is None else counts)

    def forward(self, state: DecoderState, tokens: Tensor, need_attn: bool = False,
                counts: Optional[Tensor] = None, out: Optional[Tensor] = None):
        """tokens [B, n] -> logits [B, n, V] (features [B, n, C] for an adaptive softmax: what
        the model's get_normalized_probs takes); appends n inputs per row to state.

        With need_attn, returns (logits, attn) where attn [B, n, src_len] is the last layer's
        encoder attention averaged over heads, in float32, as fairseq's decoder returns it.
        Rows whose last inputs are padding fillers (ragged catch-up) still write those slots;
        the caller then lowers state.lengths, which makes the fillers invisible.

        counts [B] (1 <= counts[b] <= n): ragged rows, row b's inputs are its first counts[b]
        tokens only, and state.lengths advances by counts. The logits of the other positions
        are unspecified (a backend may compute only the rows' own inputs; here the fillers
        are computed and discarded). out: where the logits may be written (output())."""
        bsz, n = tokens.shape
        start, lo, total = self.begin_call(state, n)
        positions = start[:, None] + torch.arange(n, device=tokens.device)[None, :]  # [B, n]
        x = self.embed(tokens, positions, total)
        x, attn = self._layers(x, state, start, positions, lo, total, need_attn)
        self.end_call(state, start, n, counts)
        logits = self.output(x, out)
        return (logits, attn) if need_attn else logits

    def static_forward(self, state: DecoderState, tokens: Tensor, need_attn: bool = False):
        """forward's arithmetic with no shape and no launch depending on the rows' lengths: row
        b's tokens [B, n] go to slots state.lengths[b] .. + n - 1 (read on the device) and
        attend over the cache's whole capacity, the slots after each query's own masked;
        positions are read from a table of capacity rows; state's encoder K/V may be padded
        (state.cross_mask masks the padding). Returns what forward returns (attn over the
        padded source) and leaves state.lengths alone (nor does it grow the cache: the caller
        makes room). This is what a CUDA graph captures once and replays at every length
        (cuda_graphs.py); masked slots add exact zeros to the softmax's sums and to probs @ V."""
        (bsz, n), capacity = tokens.shape, state.capacity
        positions = state.lengths[:, None] + torch.arange(n, device=tokens.device)[None, :]
        x = self.embed(tokens, positions, capacity)
        rows = torch.arange(bsz, device=x.device)[:, None]
        mask = (torch.arange(capacity, device=x.device)[None, None, :]
                > positions[:, :, None])[:, None]  # [B, 1, n, capacity]
        x, attn = self._each_layer(x, state, _Pass(rows, positions, None, n, capacity, mask,
                                                   False), need_attn)
        logits = self.output(x)
        return (logits, attn) if need_attn else logits

    def embed(self, tokens: Tensor, positions: Tensor, limit: int) -> Tensor:
        """The layers' input for tokens [B, n] at decoder time steps positions [B, n] (all
        below `limit`)."""
        dec = self.decoder
        if type(dec.embed_tokens) is nn.Embedding:
            x = dec.embed_scale * F.embedding(tokens, dec.embed_tokens.weight)
        else:  # adaptive input: fairseq's module (model_gate.py)
            x = dec.embed_scale * dec.embed_tokens(tokens)
        if dec.quant_noise is not None:  # quant-noise models: one more projection
            x = self._linear(dec.quant_noise, x)
        if dec.project_in_dim is not None:
            x = dec.project_in_dim(x)
        pos = self._positions(positions, limit)
        if pos is not None:
            x += pos  # in place, as fairseq: keeps x's dtype when the table is float32
        if dec.layernorm_embedding is not None:
            x = _layer_norm(dec.layernorm_embedding, x)
        return x

    def output(self, x: Tensor, out: Optional[Tensor] = None) -> Tensor:
        """The last layer's output [B, n, C] -> logits [B, n, V]: the final norm, the output
        dimension projection (where the decoder has them) and the output projection; with an
        adaptive softmax the features it takes (as fairseq's output_layer: the model's
        get_normalized_probs turns them into log-probs). out [B, n, V]: where the projection
        may write the logits (the kernel's route, no shortlist); use the tensor returned."""
        if self.decoder.layer_norm is not None:
            x = _layer_norm(self.decoder.layer_norm, x)
        if self.decoder.project_out_dim is not None:
            x = self.decoder.project_out_dim(x)
        if self.decoder.adaptive_softmax is not None:
            return x
        vocab, weight, bias = self.output_weights()
        return self._scatter(self.linear(x, weight, bias, out=None if vocab is not None else out))

    def _layers(self, x, state: DecoderState, start: Tensor, positions: Tensor, lo: int,
                total: int, need_attn: bool):
        """The layers one op at a time (the path float64 tests check against stock); returns
        x and, with need_attn, the last layer's encoder attention averaged over heads."""
        bsz, n = positions.shape
        hi = total - n
        # self-attention over key slots [0, total): key t is visible to query (b, j) iff
        # t <= positions[b, j]; the attention kernel takes that rule as `start`, torch a mask
        fused = self.fused_attention and cpu_attention.usable(x)
        rows = None if lo == hi else torch.arange(bsz, device=x.device)[:, None]
        if fused:
            mask = start
        elif lo == hi:
            mask = None if n == 1 else (
                torch.arange(total, device=x.device)[None, :] > positions[0][:, None]
            )[None, None]
        else:
            mask = (torch.arange(total, device=x.device)[None, None, :]
                    > positions[:, :, None])[:, None]  # [B, 1, n, total]
        return self._each_layer(x, state, _Pass(rows, positions, lo, n, total, mask, fused),
                                need_attn)

    def _each_layer(self, x, state: DecoderState, call: "_Pass", need_attn: bool):
        """_layer over every layer; returns x and, with need_attn, the last layer's encoder
        attention averaged over heads."""
        attn = None
        last = len(self.layers) - 1
        for i, layer in enumerate(self.layers):
            x, probs = self._layer(i, layer, x, state, call, need_attn and i == last)
            if probs is not None:
                attn = probs.mean(dim=1)
        return x, attn

    def _scatter(self, scores: Tensor) -> Tensor:
        """The output projection's scores [..., N] as logits over the whole vocabulary: with a
        shortlist, its tokens' scores and -inf elsewhere."""
        vocab = self.output_weights()[0]
        if vocab is None:
            return scores
        logits = scores.new_full(scores.shape[:-1]
                                 + (self.decoder.output_projection.weight.size(0),),
                                 float("-inf"))
        return logits.index_copy_(-1, vocab, scores)

    def output_weights(self) -> Tuple[Optional[Tensor], Tensor, Optional[Tensor]]:
        """(vocab, weight, bias) of the output projection: with a shortlist its sorted token ids
        and its rows of the weight and bias (cut once, again only if the weight changed or
        moved), else (None, the weight, the bias)."""
        projection = self.decoder.output_projection
        weight, bias = projection.weight, projection.bias
        if self.vocab is None:
            return None, weight, bias
        key = (weight.data_ptr(), weight._version, weight.dtype, weight.device)
        if self._shortlist[0] != key:
            vocab = self.vocab.to(weight.device)
            cut = (vocab, weight.index_select(0, vocab),
                   None if bias is None else bias.index_select(0, vocab))
            self._shortlist = (key, cut)
        return self._shortlist[1]

    def _layer(self, i: int, layer: nn.Module, x: Tensor, state: DecoderState, call: "_Pass",
               need_attn: bool = False):
        """Layer i on x [B, n, C]: (its output, and with need_attn the encoder attention
        probabilities [B, H, n, S])."""
        rows, positions, lo, n, total, mask, fused = call
        attn = layer.self_attn
        probs = None
        residual = x
        if layer.normalize_before:
            x = _layer_norm(layer.self_attn_layer_norm, x)
        projections = (attn.q_proj, attn.k_proj, attn.v_proj)
        q, k, v = self.linear.stacked(x, [m.weight for m in projections],
                                      [m.bias for m in projections])
        q = _heads(q * attn.scaling, attn.num_heads)
        k, v = _heads(k, attn.num_heads), _heads(v, attn.num_heads)
        cache_k, cache_v = state.self_k[i], state.self_v[i]  # [>= B, H, capacity, D]
        if rows is None:
            cache_k[:x.size(0), :, lo:lo + n] = k
            cache_v[:x.size(0), :, lo:lo + n] = v
        else:  # ragged rows: scatter row b's n inputs to its own slots
            cache_k[rows, :, positions] = k.transpose(1, 2)
            cache_v[rows, :, positions] = v.transpose(1, 2)
        if fused:
            x = cpu_attention.attend(q, cache_k[:, :, :total], cache_v[:, :, :total], start=mask,
                                     origin=state.origin)
        else:
            x = _attend(q, *state.keys_values(i, total), mask, keys=positions + 1)
        if layer.c_attn is None and layer.attn_ln is None:
            x = self._linear(attn.out_proj, x, residual)
        else:
            x = self._linear(attn.out_proj, x)
            if layer.c_attn is not None:  # NormFormer head scales (applied after out_proj)
                b, t = x.shape[:2]
                x = torch.einsum("bthd,h->bthd", x.view(b, t, layer.nh, layer.head_dim),
                                 layer.c_attn).reshape(b, t, -1)
            x = _layer_norm(layer.attn_ln, x)
            x = x + residual
        if not layer.normalize_before:
            x = _layer_norm(layer.self_attn_layer_norm, x)

        if layer.encoder_attn is not None and state.cross_k:
            cross = layer.encoder_attn
            residual = x
            if layer.normalize_before:
                x = _layer_norm(layer.encoder_attn_layer_norm, x)
            q = _heads(self._linear(cross.q_proj, x) * cross.scaling, cross.num_heads)
            if fused and not need_attn:
                x = cpu_attention.attend(q, state.cross_k[i], state.cross_v[i],
                                         pad=state.cross_mask, kv_rows=state.cross_rows)
            else:
                state.compact_cross()  # once: torch reads sentence s's keys from row s
                x = _attend(q, state.cross_k[i], state.cross_v[i], state.cross_mask, need_attn)
                if need_attn:
                    x, probs = x
            x = self._linear(cross.out_proj, x, residual)
            if not layer.normalize_before:
                x = _layer_norm(layer.encoder_attn_layer_norm, x)

        residual = x
        if layer.normalize_before:
            x = _layer_norm(layer.final_layer_norm, x)
        if layer.activation_fn is F.relu:
            x = self._linear(layer.fc1, x, relu=True)
        else:
            x = layer.activation_fn(self._linear(layer.fc1, x))
        if layer.ffn_layernorm is not None:
            x = _layer_norm(layer.ffn_layernorm, x)
        if layer.w_resid is not None:
            residual = torch.mul(layer.w_resid, residual)
        x = self._linear(layer.fc2, x, residual)
        if not layer.normalize_before:
            x = _layer_norm(layer.final_layer_norm, x)
        return x, probs
