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
    a row choosing otherwise only ends the look-ahead. Past the length rules and any prefix it
    reads a call's steps as one block (`greedy_block`: every step's candidates in one kernel
    call, then which steps every row holds), not one Python iteration per token.

Hypotheses, scores, positional scores and attention are stock's (tests/test_fast_defaults.py
compares them with fairseq's loop in float64). Everything else goes through fairseq's loop.
"""
import math
from dataclasses import dataclass
from typing import Dict, List, Optional, Tuple

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


class AttentionHistory:
    """Each step's encoder attention of every row [rows, S], appended once to a buffer; rows carry
    the buffer indices of their history (`lineage` [steps, rows], reordered with the tokens),
    and a hypothesis gathers its attention when it is finalised, instead of every step moving
    every row's history. float32, as stock keeps it."""

    def __init__(self, steps: int):
        self.steps = steps  # the most steps a batch runs (max_len + 1)
        self.attn: Optional[Tensor] = None  # [rows of all steps, S]
        self.lineage: Optional[Tensor] = None  # [steps, rows]: each step's row of attn
        self.used = 0

    def append(self, step: int, attn: Tensor) -> None:
        """attn [rows, n, S]: the attention of steps step .. step + n - 1."""
        rows, n = attn.shape[:2]
        if self.attn is None:  # rows only leave: the first step's rows bound them all
            self.attn = torch.empty(rows * self.steps, attn.size(2), dtype=torch.float32,
                                    device=attn.device)
            self.lineage = torch.empty(self.steps, rows, dtype=torch.long, device=attn.device)
        end = self.used + rows * n
        self.attn[self.used: end].view(n, rows, -1).copy_(attn.transpose(0, 1))
        torch.arange(self.used, end, out=self.lineage[step: step + n].view(-1))
        self.used = end

    def keep(self, rows: Tensor, group: int) -> None:
        """Only the sentences at `rows` [sentences'] stay, each with its `group` rows."""
        if self.lineage is not None:
            self.lineage = self.lineage.view(self.lineage.size(0), -1, group)[:, rows].view(
                -1, rows.numel() * group)

    def follow(self, order: Tensor, step: int) -> None:
        """Row i now continues row order[i]'s history of steps 0 .. step."""
        if self.lineage is not None:
            self.lineage[: step + 1] = self.lineage[: step + 1].index_select(1, order)

    def of(self, rows: Tensor, step: int) -> Optional[Tensor]:
        """The attention histories of `rows` through `step`: [n, S, step + 1], or None."""
        if self.attn is None:
            return None
        return self.attn[self.lineage[: step + 1].index_select(1, rows).t()].transpose(1, 2)


@dataclass
class GreedyBlock:
    """Beam 1's choices at several steps computed ahead (greedy_block)."""
    taken: int  # the steps taken from the first (>= 1)
    tokens: Tensor  # [rows, n] each step's choice
    running: Tensor  # [rows, n] the running score after it
    ends: Tensor  # [rows] the step (from the first, < taken) at which a row chose EOS, else n


def greedy_block(lprobs: Tensor, fed: Tensor, prev: Tensor, pad: int, unk: int,
                 unk_penalty: float, eos: int) -> GreedyBlock:
    """Beam 1 at the n = lprobs.size(1) steps the look-ahead computed, past the length rules and
    any forced prefix (rule NO_RULE). lprobs [rows, n, V] (edited in place): step j's log-probs
    for a row fed fed[:, j] (fed[:, 0] its last token, then each step's choice in the C steps);
    prev [rows] the running scores before the first step.

    Each step's candidates come from `candidates`, as one step at a time gives them, all n steps
    in one call: step j's from the running score the row has if it chose the token fed ahead at
    every step before. A row's step j holds while it did (same token, same running score). The
    block takes the steps that every row holds: a row choosing EOS (with a finite score, as
    stock finalises) ends there; a row choosing otherwise holds through that step."""
    rows, n, vocab = lprobs.shape
    ahead = fed[:, 1:]
    ahead_scores = lprobs[:, :-1].gather(2, ahead[:, :, None]).squeeze(2)
    ahead_scores = ahead_scores.masked_fill(ahead_scores.isnan(), -math.inf)  # stock's edits
    ahead_scores = torch.where(ahead == unk, ahead_scores - unk_penalty, ahead_scores)
    starts = prev.new_empty(n, rows)  # float32 sums one step at a time, as the step loop adds
    starts[0] = prev
    for j in range(1, n):
        torch.add(starts[j - 1], ahead_scores[:, j - 1], out=starts[j])
    starts = starts.t()
    scores, _, tokens = candidates(lprobs.reshape(rows * n, vocab), starts.reshape(-1),
                                   rows * n, 1, pad, unk, unk_penalty, eos, NO_RULE)
    chosen, running = tokens[:, 0].view(rows, n), scores[:, 0].view(rows, n)
    eos_at = chosen.eq(eos) & running.ne(-math.inf)
    goes_on = ~eos_at
    goes_on[:, :-1] &= chosen[:, :-1].eq(ahead) & running[:, :-1].eq(starts[:, 1:])
    stops = torch.where(goes_on.all(dim=1), n, (~goes_on).long().argmax(dim=1))
    ended = (stops < n) & eos_at.gather(1, stops.clamp(max=n - 1)[:, None]).squeeze(1)
    taken = int(torch.where((stops == n) | ended, n, stops + 1).min())
    return GreedyBlock(taken, chosen, running, torch.where(ended & (stops < taken), stops, n))


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
    history = AttentionHistory(max_len + 1)
    cands_to_ignore = torch.zeros(bsz, beam, dtype=torch.bool, device=device)
    finalized: List[List[Dict[str, Tensor]]] = [[] for _ in range(bsz)]
    finished = [False] * bsz
    sentence_of = list(range(bsz))  # batch position -> index in the original batch
    cand_size = 2 * beam
    bbsz_offsets = (torch.arange(bsz, device=device) * beam)[:, None]
    cand_offsets = torch.arange(cand_size, device=device)
    reorder: Optional[Tensor] = None
    # greedy steps read in blocks from the look-ahead: past the length rules and any prefix
    first_block = None if beam != 1 or gen.repeat_ngram_blocker is not None else \
        max(1, gen.min_len, 0 if prefix is None else prefix.size(1))

    step = 0
    while True:
        if reorder is not None:
            model.reorder_incremental_state(states, reorder)
            encoder_outs = model.reorder_encoder_out(encoder_outs, reorder)
        lprobs, avg_attn, fed = model.forward_decoder_ahead(tokens[:, : step + 1], encoder_outs,
                                                            states, gen.temperature)
        rows = lprobs.size(0)
        if scores is None:
            scores = torch.zeros(rows, max_len + 1, dtype=lprobs.dtype, device=device)
        n = 1 if fed is None or first_block is None or step < first_block else \
            min(lprobs.size(1), max_len - step)
        if n >= 2:
            block = greedy_block(lprobs[:, :n], fed[:, :n], scores[:, step - 1], gen.pad,
                                 gen.unk, gen.unk_penalty, eos)
            taken = block.taken
            if taken < n:  # the steps past those taken were edited: decode them afresh
                model.forget_ahead(step + taken)
            if avg_attn is not None:
                history.append(step, avg_attn[:, :taken])
            tokens[:, step + 1: step + taken + 1] = block.tokens[:, :taken]
            scores[:, step: step + taken] = block.running[:, :taken]
            done: List[int] = []
            for at in sorted(set(block.ends[block.ends < taken].tolist())):
                ending = block.ends.eq(at).nonzero().view(-1)
                done += _finalize(gen, step + at, ending, block.running[ending, at], tokens,
                                  scores, history, finalized, finished, sentence_of,
                                  src_lengths, max_len)
            if all(finished):
                break
            step += taken
            reorder = None
            if done:  # beam 1: the decoder state only loses finished sentences
                reorder, (src_lengths, cands_to_ignore, prefix), tokens, scores = _leave(
                    done, sentence_of, beam, history, (src_lengths, cands_to_ignore, prefix),
                    tokens, scores)
                bsz = reorder.numel()
                bbsz_offsets = bbsz_offsets[:bsz]
            continue
        lprobs = lprobs[:, 0]
        if not lprobs.is_contiguous():  # searches view() it, and the edits write it
            lprobs = lprobs.contiguous()
        if avg_attn is not None:
            history.append(step, avg_attn[:, :1])
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
        done = []
        if eos_rows.numel() > 0:
            eos_scores = cand_scores[:, :beam][eos_mask[:, :beam]]
            done = _finalize(gen, step, eos_rows, eos_scores, tokens, scores, history,
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
            keep, (src_lengths, cands_to_ignore, prefix, eos_mask, cand_beams, cand_scores,
                   cand_indices), tokens, scores = _leave(
                done, sentence_of, beam, history,
                (src_lengths, cands_to_ignore, prefix, eos_mask, cand_beams, cand_scores,
                 cand_indices), tokens, scores)
            bsz = keep.numel()
            bbsz_offsets = bbsz_offsets[:bsz]
            cand_bbsz_idx = cand_beams + bbsz_offsets

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
        step += 1
        if beam == 1:
            # one beam per sentence: every row continues itself (active_bbsz_idx is the
            # identity), so no history moves; the decoder state only loses finished sentences
            reorder = keep
            continue
        tokens[:, : step] = tokens[:, : step].index_select(0, active_bbsz_idx)
        if step > 1:
            scores[:, : step - 1] = scores[:, : step - 1].index_select(0, active_bbsz_idx)
        history.follow(active_bbsz_idx, step - 1)
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


def _leave(done: List[int], sentence_of: List[int], beam: int, history: AttentionHistory,
           per_sentence: Tuple[Optional[Tensor], ...], tokens: Tensor, scores: Tensor):
    """The sentences at batch positions `done` leave the batch: sentence_of (in place) and the
    history keep the others, as do the per-sentence tensors [sentences, ...] (None stays None)
    and the rows' tokens and scores [sentences * beam, L]. Returns (the positions kept,
    per_sentence, tokens, scores)."""
    gone = set(done)
    kept = [i for i in range(len(sentence_of)) if i not in gone]
    sentence_of[:] = [sentence_of[i] for i in kept]
    keep = torch.tensor(kept, device=tokens.device)
    history.keep(keep, beam)
    per_sentence = tuple(None if t is None else t[keep] for t in per_sentence)
    tokens, scores = (t.view(-1, beam, t.size(1))[keep].view(len(kept) * beam, -1)
                      for t in (tokens, scores))
    return keep, per_sentence, tokens, scores


def _finalize(gen, step: int, rows: Tensor, eos_scores: Tensor, tokens: Tensor, scores: Tensor,
              history: AttentionHistory, finalized, finished, sentence_of: List[int],
              src_lengths: Tensor, max_len: int) -> List[int]:
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
    hyp_attn = history.of(rows, step)  # [n, S, step + 1]
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
