"""Long sources without padding: fairseq's encoder run on sentences of one length at a time.

fairseq encodes a batch as one padded tensor: every sentence as long as the longest, the padding
masked in attention but computed in every matmul, norm and feed-forward block. With sources of
hundreds of tokens and different lengths (summarisation: a batch of 300- to 900-token articles)
that is a fifth or more of the encoder's arithmetic, and more of its attention.

`encode_by_length(encoder, net_input)` runs fairseq's own encoder on each group of sentences that
share a length, without their padding (the shorter sentences, below MIN_TOKENS, together as one
padded group, as long as the longest of them), and assembles fairseq's encoder-output dict for
the whole batch: the same layout, the same padding mask, each sentence's positions holding what
its group's call computed, zeros at the padding no call computed (every reader masks it).

A sentence's encoding does not depend on its padding: positions are counted from its first
token, each layer works token by token except self-attention, and attention gives the padding a
weight of exactly zero. So the results are fairseq's, up to the order in which the matmuls sum
(a different number of rows can take another kernel path): float32 rounding, nothing more.

It applies where each of these holds, and otherwise returns None (the caller runs fairseq's
encoder as it is):
  * a CPU batch with padding and a sentence of at least MIN_TOKENS tokens (a group's matmuls
    then have rows enough; on a GPU one padded call is the faster);
  * fairseq's own TransformerEncoderBase, every module of it as model_gate.py's encoder check
    allows (token-by-token layers, self-attention the only mixing, no hooks), its layers a plain
    ModuleList (a LayerDropModuleList draws random numbers per forward pass: one call per group
    would draw more than stock does);
  * the batch's input is src_tokens and src_lengths only;
  * FAIRSEQ_FAST_UNPADDED_ENCODER is not 0.
"""
import os
from typing import Dict, List, Optional

import torch
from torch import Tensor, nn

from fairseq_fast.decoding.model_gate import encoder_refusal

ENV = "FAIRSEQ_FAST_UNPADDED_ENCODER"
MIN_TOKENS = 128  # a sentence at least this long is encoded without padding


def encoder_output(x: Tensor, padding: Tensor, embedding: Tensor, states: List[Tensor],
                   lengths: Tensor) -> Dict[str, List[Tensor]]:
    """The dict fairseq's TransformerEncoderBase returns: x [S, B, C], the padding mask [B, S],
    the embedding [B, S, C], the layers' states (if asked for) and the lengths [B] of the
    sources without padding."""
    src_lengths = lengths.to(torch.int32).reshape(-1, 1).contiguous()
    return {"encoder_out": [x], "encoder_padding_mask": [padding],
            "encoder_embedding": [embedding], "encoder_states": states, "fc_results": [],
            "src_tokens": [], "src_lengths": [src_lengths]}


def encode_by_length(encoder: nn.Module, net_input: dict) -> Optional[Dict[str, List[Tensor]]]:
    """fairseq's encoder-output dict for net_input, computed group by group (module docstring);
    None where this does not apply."""
    found = _groups(encoder, net_input)
    if found is None:
        return None
    groups, lengths = found
    src_tokens = net_input["src_tokens"]
    padding = src_tokens.eq(encoder.padding_idx)
    left = bool(padding[:, 0].any())  # fairseq pads sources on the left by default
    bsz, length = src_tokens.shape
    out = embedding = None
    states: List[Tensor] = []
    for rows, width in groups:
        cols = slice(length - width, length) if left else slice(0, width)
        tokens = src_tokens[rows, cols]
        part = encoder.forward_torchscript({"src_tokens": tokens, "src_lengths": lengths[rows]})
        x, emb = part["encoder_out"][0], part["encoder_embedding"][0]
        if out is None:
            out = x.new_zeros(length, bsz, x.size(-1))
            embedding = emb.new_zeros(bsz, length, emb.size(-1))
            states = [s.new_zeros(length, bsz, s.size(-1)) for s in part["encoder_states"]]
        out[cols, rows] = x
        embedding[rows, cols] = emb
        for whole, s in zip(states, part["encoder_states"]):
            whole[cols, rows] = s
    return encoder_output(out, padding, embedding, states, lengths)


def _groups(encoder: nn.Module, net_input: dict):
    """([(row indices, width)], the sentences' lengths [B]): each length of MIN_TOKENS or more
    with its sentences, and the shorter sentences as one group as wide as the longest of them;
    None where this does not apply (module docstring)."""
    from fairseq.models.transformer import TransformerEncoderBase

    src_tokens = net_input.get("src_tokens")
    if (os.environ.get(ENV, "1") == "0" or src_tokens is None or src_tokens.dim() != 2
            or src_tokens.device.type != "cpu"
            or set(net_input) - {"src_tokens", "src_lengths", "prev_output_tokens"}
            or not isinstance(encoder, TransformerEncoderBase)
            or type(encoder.layers) is not nn.ModuleList):
        return None
    lengths = src_tokens.ne(encoder.padding_idx).sum(dim=1)
    longest = int(lengths.max())
    if longest < MIN_TOKENS or bool((lengths == longest).all()):
        return None  # short sentences, or no padding
    if encoder_refusal(encoder) is not None:
        return None
    groups = []
    short = (lengths < MIN_TOKENS).nonzero().flatten()
    if short.numel():
        groups.append((short, int(lengths[short].max())))
    for width in sorted(set(lengths[lengths >= MIN_TOKENS].tolist())):
        groups.append(((lengths == width).nonzero().flatten(), width))
    return groups, lengths
