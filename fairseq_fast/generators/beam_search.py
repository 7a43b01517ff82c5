"""Plain beam search on the fast cache: fairseq's algorithm in a loop of our own.

    finalized = beam_search.generate(generator, sample, bos_token, prefix)   # if usable(...)

fairseq's `SequenceGenerator._generate` serves every search (sampling, diverse beam, constraints,
prefixes, LM fusion) and pays for that at every step: six passes over the step's log-probs
[rows, V] for its edits plus `search.BeamSearch`'s add and top-k, a boolean-mask assignment for
NaN, the whole attention history [rows, S, step] copied to follow the beams, profiler ranges.
On a small model at a large batch that is a good share of the run outside the model
(docs/benchmarks.md). For the common case (search.BeamSearch, no constraints, no LM, a forced
prefix without EOS or none, on our FastEnsembleModel) this loop takes over, with the same
decisions:

  * a forced prefix (the multilingual task's language token, --prefix-size, a language model's
    prompt) keeps each row's prefix token alone at its steps, as fairseq's _prefix_tokens, and
    the model reads the prefix in one pass (ensemble.py's prefill);
  * candidates: the edits (NaN, pad, unk penalty, max/min length), the cumulative score and the
    per-sentence top 2 x beam in one pass (csrc/beam_step.c; `candidates_torch` is the same rule
    in torch, the edits by step_rules.edit_scores, for other devices, float types or when the
    kernel is not built);
  * EOS candidates among the first `beam` finalise hypotheses, sentences with `beam` of them
    (or at max_len) leave the batch, the first `beam` other candidates continue: fairseq's rule
    and bookkeeping (cands_to_ignore included), on [sentences, 2 x beam] tensors;
  * attention: each step's [rows, S] is appended once to a buffer; rows carry the buffer
    indices of their history (`lineage`, reordered with the tokens), and a hypothesis gathers
    its attention when it is finalised, instead of every step moving every row's history;
  * greedy (beam 1, no n-gram blocking, temperature 1): the model runs several steps ahead in
    one C call, each row fed its argmax under the step's edits (decoding/greedy_steps.py's
    steps, ensemble.py's look-ahead); this loop still chooses every token from the scores, and
    a row choosing otherwise only ends the look-ahead.

Hypotheses, scores, positional scores and attention are stock's (tests/test_fast_defaults.py
compares them with fairseq's loop in float64). Everything else goes through fairseq's loop.
"""
import math
from typing import Dict, List, Optional

import torch
from fairseq import search
from torch import Tensor

from fairseq_fast.kernels import calls
from fairseq_fast.errors import RunError
from fairseq_fast.generators import finalize
from fairseq_fast.decoding.ensemble import FastEnsembleModel, LookAhead
from fairseq_fast.decoding.step_rules import StepRules, edit_scores
# the length rule of a step, and the most candidates per sentence (kernels.h)
from fairseq_fast.kernels.calls import MAX_CANDIDATES, NO_EOS, NO_RULE, ONLY_EOS


def usable(gen, sample, prefix_tokens: Optional[Tensor], constraints: Optional[Tensor]) -> bool:
    """Whether this loop reproduces what fairseq's would do for this generator and batch. A forced
    prefix is taken unless it holds EOS (fairseq then copies the first beam to the others)."""
    return (type(gen.search) is search.BeamSearch
            and (prefix_tokens is None or not bool(prefix_tokens.eq(gen.eos).any()))
            and constraints is None and gen.lm_model is None
            and getattr(gen, "token_indices_to_suppress", None) is None
            and isinstance(gen.model, FastEnsembleModel)
            and "src_tokens" in sample["net_input"]
            and 2 * gen.beam_size <= MAX_CANDIDATES)


def candidates_torch(lprobs: Tensor, prev: Optional[Tensor], sentences: int, beam: int, k: int,
                     pad: int, unk: int, unk_penalty: float, eos: int, mode: int):
    """lprobs [sentences * beam, V] (edited in place), prev [sentences * beam] cumulative scores
    or None (step 0: only each sentence's first row is read) -> scores, beams, tokens
    [sentences, k]: what SequenceGenerator's edits followed by BeamSearch.step give."""
    every = torch.ones((), dtype=torch.bool, device=lprobs.device)
    edit_scores(lprobs, pad, unk, unk_penalty, eos, only_eos=every if mode == ONLY_EOS else None,
                no_eos=every if mode == NO_EOS else None)
    v = lprobs.size(1)
    lp = lprobs.view(sentences, beam, v)
    lp = lp[:, :1] if prev is None else lp + prev.view(sentences, beam, 1)
    scores, flat = lp.reshape(sentences, -1).topk(k)
    return scores, torch.div(flat, v, rounding_mode="trunc"), flat.fmod(v)


def candidates(lprobs: Tensor, prev: Optional[Tensor], sentences: int, beam: int,
               pad: int, unk: int, unk_penalty: float, eos: int, mode: int):
    """The step's 2 x beam candidates per sentence (see candidates_torch), by the kernel where
    it runs (CPU, float32/float64, kernel built)."""
    beams = 1 if prev is None else beam
    k = min(2 * beam, beams * lprobs.size(1) - 1)  # BeamSearch's k: -1 so pad is never chosen
    found = calls.beam_candidates(lprobs, prev, sentences=sentences, beam=beam, k=k, pad=pad,
                                  unk=unk, unk_penalty=unk_penalty, eos=eos, mode=mode)
    if found is None:
        return candidates_torch(lprobs, prev, sentences, beam, k, pad, unk, unk_penalty, eos,
                                mode)
    return found


def look_ahead(gen, max_len: int):
    """The model's greedy look-ahead for a batch (ensemble.py), or None: beam 1, no n-gram
    blocking, temperature 1, a single model whose decoder the C steps take."""
    model = gen.model
    if (gen.beam_size != 1 or gen.repeat_ngram_blocker is not None or gen.temperature != 1.0
            or model.models_size != 1):
        return None
    steps = model.greedy_steps()
    if steps is None:
        return None
    return LookAhead(steps, StepRules(pad=gen.pad, unk=gen.unk, eos=gen.eos, max_len=max_len,
                                      min_len=gen.min_len, unk_penalty=gen.unk_penalty))


def force_prefix(lprobs: Tensor, prefix: Tensor, beam: int, pad: int) -> None:
    """fairseq's forced prefix on a step's log-probs [rows, V], in place: a row whose sentence has
    a prefix token here (prefix [sentences], pad = none) keeps that token's score alone, every
    other token -inf. Done before the edits of `candidates`, which leave -inf as it is and edit
    the kept score as fairseq edits it before its gather."""
    forced = prefix.repeat_interleave(beam)[:, None]
    kept = lprobs.gather(1, forced)
    lprobs.masked_fill_(forced.ne(pad), -math.inf)
    lprobs.scatter_(1, forced, kept)  # a row without a prefix token gets its pad score back


@torch.no_grad()
def generate(gen, sample: Dict, bos_token: Optional[int] = None,
             prefix_tokens: Optional[Tensor] = None) -> List[List[Dict[str, Tensor]]]:
    """What `gen._generate(sample, prefix_tokens, bos_token=bos_token)` returns, for a generator
    and batch usable() takes."""
    try:
        return _generate(gen, sample, bos_token, prefix_tokens)
    finally:
        gen.model.begin_batch()


def _generate(gen, sample: Dict, bos_token: Optional[int],
              prefix: Optional[Tensor]) -> List[List[Dict[str, Tensor]]]:
    model, beam, eos = gen.model, gen.beam_size, gen.eos
    net_input = sample["net_input"]
    src_tokens = net_input["src_tokens"]
    src_lengths = net_input["src_lengths"] if "src_lengths" in net_input else \
        (src_tokens.ne(eos) & src_tokens.ne(gen.pad)).long().sum(dim=1)
    bsz, src_len = src_tokens.size()[:2]
    if gen.match_source_len:
        max_len = int(src_lengths.max().item())
    else:
        max_len = min(int(gen.max_len_a * src_len + gen.max_len_b), gen.max_len - 1)
    assert gen.min_len <= max_len, "min_len cannot be larger than max_len, please adjust these!"
    device = src_tokens.device

    states: List[Dict] = [{} for _ in range(model.models_size)]
    encoder_outs = model.forward_encoder(net_input)
    model.begin_batch(prefix=prefix, look_ahead=look_ahead(gen, max_len))
    encoder_outs = model.reorder_encoder_out(
        encoder_outs, torch.arange(bsz, device=device).repeat_interleave(beam))

    tokens = torch.full((bsz * beam, max_len + 2), gen.pad, dtype=torch.long, device=device)
    tokens[:, 0] = eos if bos_token is None else bos_token
    scores: Optional[Tensor] = None  # [rows, max_len + 1] cumulative, in the log-probs' dtype
    attn: Optional[Tensor] = None  # [rows of all steps, S] float32 (stock keeps it so too)
    lineage: Optional[Tensor] = None  # [max_len + 1, rows]: each step's row of attn
    attn_rows = 0
    cands_to_ignore = torch.zeros(bsz, beam, dtype=torch.bool, device=device)
    finalized: List[List[Dict[str, Tensor]]] = [[] for _ in range(bsz)]
    finished = [False] * bsz
    sentence_of = list(range(bsz))  # batch position -> index in the original batch
    cand_size = 2 * beam
    bbsz_offsets = (torch.arange(bsz, device=device) * beam)[:, None]
    cand_offsets = torch.arange(cand_size, device=device)
    reorder: Optional[Tensor] = None

    for step in range(max_len + 1):
        if reorder is not None:
            model.reorder_incremental_state(states, reorder)
            encoder_outs = model.reorder_encoder_out(encoder_outs, reorder)
        lprobs, avg_attn = model.forward_decoder(tokens[:, : step + 1], encoder_outs, states,
                                                 gen.temperature)
        rows = lprobs.size(0)
        if scores is None:
            scores = torch.zeros(rows, max_len + 1, dtype=lprobs.dtype, device=device)
        if avg_attn is not None:
            if attn is None:
                attn = torch.empty(rows * (max_len + 1), avg_attn.size(1), dtype=torch.float32,
                                   device=device)
                lineage = torch.empty(max_len + 1, rows, dtype=torch.long, device=device)
            attn[attn_rows: attn_rows + rows].copy_(avg_attn)
            torch.arange(attn_rows, attn_rows + rows, out=lineage[step])
            attn_rows += rows
        if gen.repeat_ngram_blocker is not None:  # bans (-inf): commutes with the edits
            lprobs = gen.repeat_ngram_blocker(tokens, lprobs, bsz, beam, step)
        mode = ONLY_EOS if step >= max_len else NO_EOS if step < gen.min_len else NO_RULE
        if prefix is not None and step < prefix.size(1) and step < max_len:
            force_prefix(lprobs, prefix[:, step], beam, gen.pad)
            mode = NO_RULE  # fairseq's min_len does not apply at a prefix step
        cand_scores, cand_beams, cand_indices = candidates(
            lprobs, None if step == 0 else scores[:, step - 1], bsz, beam, gen.pad, gen.unk,
            gen.unk_penalty, eos, mode)
        cand_bbsz_idx = cand_beams + bbsz_offsets

        # hypotheses ending in EOS among the first `beam` candidates are finalised
        eos_mask = cand_indices.eq(eos) & cand_scores.ne(-math.inf)
        eos_mask[:, :beam][cands_to_ignore] = False
        eos_rows = cand_bbsz_idx[:, :beam][eos_mask[:, :beam]]
        done: List[int] = []
        if eos_rows.numel() > 0:
            eos_scores = cand_scores[:, :beam][eos_mask[:, :beam]]
            done = _finalize(gen, step, eos_rows, eos_scores, tokens, scores, attn, lineage,
                             finalized, finished, sentence_of, src_lengths, max_len)
        if all(finished):
            break
        if step >= max_len and bool(torch.isnan(lprobs).any()):  # only NaN scores get here
            raise RunError("the model's scores are NaN, so no hypothesis can end: its weights "
                           "hold non-finite values (a corrupted checkpoint?)")
        assert step < max_len, f"{step} < {max_len}"

        # sentences with all their hypotheses leave the batch
        keep: Optional[Tensor] = None
        if done:
            gone = set(done)
            keep_list = [i for i in range(bsz) if i not in gone]
            sentence_of = [sentence_of[i] for i in keep_list]
            keep = torch.tensor(keep_list, device=device)
            eos_mask, cand_beams = eos_mask[keep], cand_beams[keep]
            cand_scores, cand_indices = cand_scores[keep], cand_indices[keep]
            src_lengths, cands_to_ignore = src_lengths[keep], cands_to_ignore[keep]
            if prefix is not None:
                prefix = prefix[keep]
            bsz = len(keep_list)
            bbsz_offsets = bbsz_offsets[:bsz]
            cand_bbsz_idx = cand_beams + bbsz_offsets
            tokens, scores = (t.view(-1, beam, t.size(1))[keep].view(bsz * beam, -1)
                              for t in (tokens, scores))
            if lineage is not None:
                lineage = lineage.view(lineage.size(0), -1, beam)[:, keep].view(-1, bsz * beam)

        # the first `beam` candidates that are not (finalised) EOS continue
        eos_mask[:, :beam] |= cands_to_ignore
        active_mask = eos_mask.long() * cand_size + cand_offsets[: eos_mask.size(1)]
        new_cands_to_ignore, active_hypos = torch.topk(active_mask, k=beam, dim=1,
                                                       largest=False)
        cands_to_ignore = new_cands_to_ignore.ge(cand_size)[:, :beam]
        assert (~cands_to_ignore).any(dim=1).all()
        active_bbsz_idx = cand_bbsz_idx.gather(1, active_hypos).view(-1)
        tokens.view(bsz, beam, -1)[:, :, step + 1] = cand_indices.gather(1, active_hypos)
        scores.view(bsz, beam, -1)[:, :, step] = cand_scores.gather(1, active_hypos)
        if beam == 1:
            # one beam per sentence: every row continues itself (active_bbsz_idx is the
            # identity), so no history moves; the decoder state only loses finished sentences
            reorder = keep
            continue
        tokens[:, : step + 1] = tokens[:, : step + 1].index_select(0, active_bbsz_idx)
        if step > 0:
            scores[:, :step] = scores[:, :step].index_select(0, active_bbsz_idx)
        if lineage is not None:
            lineage[: step + 1] = lineage[: step + 1].index_select(1, active_bbsz_idx)
        # the decoder state still holds the rows of before the sentences left
        reorder = active_bbsz_idx
        if keep is not None:
            reorder = (active_bbsz_idx.view(bsz, beam) + keep[:, None] * beam
                       - bbsz_offsets).view(-1)

    for sent in range(len(finalized)):  # best first: stock's sort, ties included
        order = torch.sort(torch.tensor([float(h["score"].item()) for h in finalized[sent]]),
                           descending=True)[1]
        finalized[sent] = [finalized[sent][i] for i in order]
    return finalized


def _finalize(gen, step: int, rows: Tensor, eos_scores: Tensor, tokens: Tensor, scores: Tensor,
              attn: Optional[Tensor], lineage: Optional[Tensor], finalized, finished,
              sentence_of: List[int], src_lengths: Tensor, max_len: int) -> List[int]:
    """SequenceGenerator.finalize_hypos for hypotheses `rows` [n] ending in EOS at `step` with
    cumulative scores eos_scores [n]; returns the batch positions of sentences now finished."""
    beam = gen.beam_size
    hyp_tokens = tokens.index_select(0, rows)[:, 1: step + 2]
    hyp_tokens[:, step] = gen.eos
    cum = scores.index_select(0, rows)[:, : step + 1]
    cum[:, step] = eos_scores
    eos_scores, pos_scores = finalize.scores(cum, step, gen.normalize_scores, gen.len_penalty)
    positions = torch.div(rows, beam, rounding_mode="trunc")
    if gen.match_source_len:
        too_long = step > src_lengths.index_select(0, positions)
        eos_scores = torch.where(too_long, torch.tensor(-math.inf), eos_scores)
    hyp_attn = None
    if attn is not None:  # [n, S, step + 1], gathered from each row's history
        hyp_attn = attn[lineage[: step + 1].index_select(1, rows).t()].transpose(1, 2)
    position_list = positions.tolist()
    for i, pos in enumerate(position_list):
        hypos = finalized[sentence_of[pos]]
        if len(hypos) < beam:
            hypos.append(finalize.hypothesis(hyp_tokens[i], eos_scores[i], pos_scores[i],
                                             None if hyp_attn is None else hyp_attn[i]))
    done = []
    for pos in sorted(set(position_list)):
        sent = sentence_of[pos]
        if not finished[sent] and gen.is_finished(step, pos, max_len, len(finalized[sent]),
                                                  beam):
            finished[sent] = True
            done.append(pos)
    return done
