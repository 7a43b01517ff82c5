"""SpeculativeSequenceGenerator: draft proposes, target verifies K tokens in one pass.

    generator = SpeculativeSequenceGenerator([target], tgt_dict, draft_model=draft, draft_len=4)
    hypos = generator.generate([target], sample)     # same API and output format as fairseq's

One round, for every unfinished row of the batch at once:
    propose  the draft writes K guesses after each row's committed tokens
    verify   the target reads [last committed token, d_1 .. d_K] in ONE forward pass and scores
             K+1 positions (a row whose window ended early, at EOS or by a stop rule, only its
             own: lean_decoder.forward's ragged rows); an acceptance rule (acceptance.py)
             keeps a prefix of the guesses plus one token of the target's own
    commit   rows append what they keep (commit.py) and advance by their own kept length;
             caches roll back by length; rows that emitted EOS are finalised and leave the
             batch (finished rows cost nothing)

A round with nothing to verify (no row has a draft, or the adaptive schedule chooses length 0
because drafting does not pay) is plain greedy decoding: on the CPU the target's own greedy
steps in one C call (plain_steps.py), else a verify pass of one position per row. Greedy n-gram
rounds run that way too where they can: many rounds of lookup, verify and commit in one C call
(ngram.LookaheadRounds), whose choices the loop then verifies as one window of drafts.

In-flight batching (generate_stream): the same rounds over a stream of batches, up to a number
of rows in flight; between rounds, waiting sentences take the places of the rows that finished
(their batch's encoder output; their encoder K/V, projected as they join (CrossSource), and
padding joining the decoder states: DecoderState.admit), and each batch is handed back, in
order, once all its sentences are done. A row gets the draft's state only in the first round
that drafts for it, where the schedule finds that drafting repays the draft's encoder
(proposer.py, draft_length.py); until then it is offered nothing.
A sentence's output is what generate() gives it in its own batch.

The proposer (draft_method):
    model   a draft model (--draft-path; proposer.DraftModelProposer)
    ngram   n-gram lookup in the row's own text and its source (ngram.NgramProposer)
    layers  the target's first draft_layers decoder layers, final norm and output projection
            (self_draft.py), as a draft model
    none    nothing: every round plain greedy steps (greedy search, streamed)

Greedy output (beam 1) is token for token what fairseq's SequenceGenerator produces with the
target alone; scores and positional scores are the target's, computed as stock computes them.
Sampling output has exactly the target's distribution (rejection sampling).
"""
import time
from collections import deque
from dataclasses import dataclass
from typing import Callable, Deque, Dict, Iterable, Iterator, List, Optional, Tuple

import torch
from torch import Tensor, nn

from fairseq_fast.decoding.backends import decoder_backend
from fairseq_fast.decoding.decoder_state import initial_capacity
from fairseq_fast.decoding.fused_layer import FusedEncoder, encode
from fairseq_fast.decoding.lean_decoder import CrossSource
from fairseq_fast.decoding.step_rules import StepRules
from fairseq_fast.errors import RunError, UserError
from fairseq_fast.generators import finalize
from fairseq_fast.generators.fast import batch_max_len
from fairseq_fast.options import check_draft_generator
from fairseq_fast.speculative.acceptance import (AcceptanceRule, GreedyAcceptance,
                                                 RejectionSampling)
from fairseq_fast.speculative.commit import commit
from fairseq_fast.speculative.draft_length import (FixedDraftLength, MeasuredDraftLength,
                                                   MeasuredRate, NoDrafts, RoundTimes, measured)
from fairseq_fast.speculative.ngram import LookaheadRounds, NgramProposer
from fairseq_fast.speculative.plain_steps import PlainSteps
from fairseq_fast.speculative.proposer import DraftModelProposer, NoProposer
from fairseq_fast.speculative.self_draft import early_layers, same_dictionary
from fairseq_fast.speculative.shared_encoder import same_encoder
from fairseq_fast.speculative.stats import SpecStats
from fairseq_fast.speculative.stop_rules import StopRule


@dataclass
class Proposal:
    """One round's drafts [B, k] (None: plain steps), their distributions q (None for greedy
    or certain drafts), how many each row offers [B], the draft decoder steps taken; plain: the
    plain greedy steps to take instead (0 for none), chosen_plain: chosen by the schedule;
    verified: the positions the target computed (set by _score); lookahead: rounds of n-gram
    drafts of up to that many tokens run in one C call instead (ngram.LookaheadRounds);
    drafters: the rows that drafted (Proposer.last_rows); joined: the rows that joined the
    proposer first (Proposer.join), and the seconds that took."""
    drafts: Optional[Tensor] = None
    q: Optional[Tensor] = None
    offered: Optional[Tensor] = None
    steps: int = 0
    plain: int = 0
    chosen_plain: bool = False
    verified: int = 0
    lookahead: int = 0  # > 0: rounds of n-gram drafts of this length in one C call
    tally: Optional[Tensor] = None  # their counters (ngram.LookaheadRounds.run)
    drafters: int = 0  # the rows the proposer drafted for
    joined: Tuple[int, float] = (0, 0.0)  # rows that joined the proposer, and the seconds


def _fill_holes(alive: Tensor) -> Tensor:
    """The rows that go on ([B] bool), in an order that moves the fewest: a row keeps its place
    unless it lies past the new batch size; those take the places of the rows that ended
    before it (the caches then copy only them: DecoderState.select_rows)."""
    n = int(alive.sum())
    order = torch.arange(n, device=alive.device)
    holes = (~alive[:n]).nonzero().squeeze(1)
    order[holes] = alive[n:].nonzero().squeeze(1) + n
    return order


@dataclass
class _Batch:
    """A batch of the stream: its sample and forced prefix, its limit and encoder output, what
    its rows' decoders need to join the rows in flight (made when first needed), and its
    sentences' hypotheses as they finish."""
    sample: dict
    prefix: Optional[Tensor]
    rows: int
    src_len: int
    max_len: int
    encoder_out: Optional[dict]
    finalized: List[List[Dict[str, Tensor]]]
    left: int  # sentences not finished
    admitted: int = 0
    cross: Optional[CrossSource] = None
    prepared: object = None

    @property
    def key(self) -> tuple:
        """Rows in flight share the length limit and the forced prefix's width."""
        return self.max_len, None if self.prefix is None else self.prefix.size(1)


@dataclass
class _Flight:
    """The rows in flight: each row's id (speculative generator's `owners`), its text and
    cumulative scores, committed tokens (BOS included), window cap and forced prefix."""
    ids: Tensor
    tokens: Tensor
    cum: Tensor
    n_tokens: Tensor
    gamma: Tensor
    prefix: Optional[Tensor]
    key: tuple
    holes: Optional[Tensor] = None  # rows that finished in the last round, still in place

    @property
    def live(self) -> int:
        """The rows still decoding."""
        return self.ids.numel() - (0 if self.holes is None else self.holes.numel())

    def select(self, rows: Tensor) -> None:
        self.ids, self.tokens, self.cum, self.n_tokens, self.gamma = (
            t.index_select(0, rows) for t in (self.ids, self.tokens, self.cum, self.n_tokens,
                                              self.gamma))
        if self.prefix is not None:
            self.prefix = self.prefix.index_select(0, rows)

    def extend(self, new: "_Flight") -> None:
        self.ids, self.n_tokens, self.gamma = (
            torch.cat([a, b]) for a, b in ((self.ids, new.ids), (self.n_tokens, new.n_tokens),
                                           (self.gamma, new.gamma)))
        self.tokens = torch.cat([self.tokens, new.tokens])
        self.cum = torch.cat([self.cum, new.cum.type_as(self.cum)])
        if self.prefix is not None:
            self.prefix = torch.cat([self.prefix, new.prefix])

    def place(self, new: "_Flight", n: int) -> None:
        """new's first n rows in the places of the first n holes."""
        at, self.holes = self.holes[:n], self.holes[n:]
        for name in ("ids", "tokens", "cum", "n_tokens", "gamma", "prefix"):
            mine = getattr(self, name)
            if mine is not None:  # out of place: a schedule may hold gamma
                setattr(self, name, mine.index_copy(0, at, getattr(new, name)[:n].type_as(mine)))
        if self.holes.numel() == 0:
            self.holes = None


class SpeculativeSequenceGenerator(nn.Module):
    """The strategies, each replaceable (BiLD, bild.py, is this class with other ones):
        acceptance  what a row keeps of a verified window (acceptance.AcceptanceRule); default
                    exact greedy, or rejection sampling with sampling=True
        stop_rule   when a row stops drafting before its cap (stop_rules.StopRule); default none
        stats       the counters (stats.SpecStats)
    The window caps come from a schedule (draft_length.py): draft_len fixed, or with
    adaptive_draft_len=True the length that buys the most tokens per second as measured,
    between 0 (plain steps) and 2 x draft_len (measured across the generators of the same
    models and settings: draft_length.measured).
    shared_encoder: whether the draft's encoder is the target's (shared_encoder.py), so that it
    runs once for both; None checks the two models.
    draft_method: 'model' (draft_model proposes), 'ngram' (n-gram lookup, ngram_min to
    ngram_max tokens; no draft_model), 'layers' (the target's first draft_layers decoder
    layers, 0 for the default; no draft_model) or 'none' (nothing proposes: greedy decoding in
    plain steps, draft_length.NoDrafts; what the default generator's greedy search gives, on
    this loop for in-flight batching)."""

    def __init__(self, models, tgt_dict, draft_model=None, draft_len: int = 4,
                 adaptive_draft_len: bool = False, beam_size: int = 1, max_len_a: float = 0,
                 max_len_b: int = 200, max_len: int = 0, min_len: int = 1,
                 normalize_scores: bool = True, len_penalty: float = 1.0,
                 unk_penalty: float = 0.0, temperature: float = 1.0, sampling: bool = False,
                 sampling_topk: int = -1, sampling_topp: float = -1.0,
                 no_repeat_ngram_size: int = 0, eos: Optional[int] = None,
                 draft_vocab: Optional[Tensor] = None, kernels: bool = True,
                 acceptance: Optional[AcceptanceRule] = None,
                 stop_rule: Optional[StopRule] = None, stats: Optional[SpecStats] = None,
                 shared_encoder: Optional[bool] = None, draft_method: str = "model",
                 ngram_min: int = 1, ngram_max: int = 3, draft_layers: int = 0,
                 symbols_to_strip_from_output: Optional[set] = None,
                 name: str = "speculative decoding"):
        super().__init__()
        models = list(models)
        self.name = name  # in error messages
        check_draft_generator(name, models=len(models), beam_size=beam_size,
                              temperature=temperature, sampling=sampling,
                              bild=False, draft_len=draft_len)
        self.model = models[0]
        self.draft_method = draft_method
        self.sampling = sampling
        draft_model = self._draft_model(draft_model, draft_method, draft_layers, stop_rule)
        self.draft_model = draft_model
        self.target = decoder_backend(self.model, kernels=kernels)
        # a round with nothing to verify, as the target's greedy steps in one call where they
        # run
        self.plain = PlainSteps.build(self.target) if not sampling else None
        self._cache = None  # the target's K/V buffers, zeroed and reused by the next batch
        self.encoder = (FusedEncoder.build(getattr(self.model, "encoder", None),
                                           self.target.lean.linear) if kernels else None)
        self.tgt_dict = tgt_dict
        self.pad, self.unk = tgt_dict.pad(), tgt_dict.unk()
        self.eos = tgt_dict.eos() if eos is None else eos
        # what fairseq-generate and -interactive leave out of the text, as SequenceGenerator
        # has it (a task's language tokens, and </s>)
        self.symbols_to_strip_from_output = set(symbols_to_strip_from_output or ()) | {self.eos}
        self.schedule = FixedDraftLength(draft_len)
        if adaptive_draft_len:  # one per model pair and setting, shared by its generators
            param = next(self.model.parameters())
            setting = (param.dtype, param.device, sampling, kernels, type(stop_rule),
                       None if draft_vocab is None else tuple(draft_vocab.tolist()),
                       draft_method, ngram_min, ngram_max)
            kind = MeasuredRate if draft_method == "ngram" else MeasuredDraftLength
            self.schedule = measured(self.model, self.model if draft_model is None
                                     else draft_model, draft_len, 2 * draft_len, setting, kind)
        self.stop_rule = stop_rule
        self.max_len_a, self.max_len_b = max_len_a, max_len_b
        self.max_len = max_len or self.model.max_decoder_positions()
        self.normalize_scores, self.len_penalty = normalize_scores, len_penalty
        self.rules = StepRules(pad=self.pad, unk=self.unk, eos=self.eos, min_len=min_len,
                               unk_penalty=unk_penalty, temperature=temperature,
                               no_repeat_ngram_size=no_repeat_ngram_size)
        if acceptance is None:
            acceptance = (RejectionSampling(sampling_topk, sampling_topp) if sampling
                          else GreedyAcceptance())
        elif sampling != acceptance.needs_draft_probs:
            raise UserError(f"{name}: sampling={sampling} does not match the acceptance rule "
                            f"{type(acceptance).__name__}")
        self.acceptance = acceptance
        self.lookahead = None
        if draft_method == "none":
            self.proposer = NoProposer()
            self.schedule = NoDrafts()
        elif draft_method == "ngram":
            if draft_vocab is not None:
                raise UserError(f"{name}: a draft vocabulary is for a draft model, not n-gram "
                                f"lookup")
            self.proposer = NgramProposer(self.rules, ngram_min, ngram_max,
                                          source_lookup=same_dictionary(self.model, tgt_dict))
            self.lookahead = (LookaheadRounds.build(self.target, self.proposer)
                              if not sampling else None)
        else:
            if shared_encoder is None:
                shared_encoder = same_encoder(self.model, draft_model)
            self.proposer = DraftModelProposer(
                draft_model, self.rules, acceptance if acceptance.needs_draft_probs else None,
                draft_vocab, kernels, shared_encoder)
            draft_model.eval()
        self.stats = SpecStats() if stats is None else stats
        self.model.eval()

    def _draft_model(self, draft_model, method: str, layers: int, stop_rule):
        """The draft model of `method`: draft_model itself, None (ngram) or a view of the
        target's first layers (layers)."""
        if method == "model":
            if draft_model is None:
                raise UserError(f"{self.name} needs a draft model (--draft-path), or a "
                                f"--draft-method that needs none: ngram, layers")
            return draft_model
        if draft_model is not None:
            raise UserError(f"{self.name}: --draft-method {method} takes no draft model")
        if method == "none":
            if stop_rule is not None or self.sampling:
                raise UserError(f"{self.name}: greedy decoding without drafts takes no stop "
                                f"rule and no sampling")
            return None
        if method == "ngram":
            if stop_rule is not None:
                raise UserError(f"{self.name} does not take --draft-method ngram: its stop "
                                f"rule needs a draft model's probabilities")
            return None
        if method == "layers":
            return early_layers(self.model, layers)
        raise UserError(f"unknown --draft-method {method!r}; choose from model, ngram, layers")

    @torch.no_grad()
    def forward(self, sample, prefix_tokens=None, bos_token=None):
        return self._generate(sample, prefix_tokens, bos_token=bos_token)

    @torch.no_grad()
    def generate(self, models, sample: Dict[str, Dict[str, Tensor]], **kwargs):
        if kwargs.get("constraints") is not None:
            raise UserError(f"{self.name} does not support lexical constraints")
        return self._generate(sample, kwargs.get("prefix_tokens"), kwargs.get("bos_token"))

    @torch.no_grad()
    def generate_stream(self, batches: Iterable[Tuple[dict, Optional[Tensor]]], rows: int,
                        bos_token: Optional[int] = None,
                        ready: Optional[Callable[[], bool]] = None
                        ) -> Iterator[Tuple[dict, List[List[Dict[str, Tensor]]]]]:
        """In-flight batching: generate for a stream of batches (sample, prefix_tokens or
        None), keeping up to `rows` sentences in flight: a sentence that finishes leaves at
        once, and the next waiting one takes its place at the next round. Yields (sample, its
        hypotheses as generate() gives them) for each batch in the order given, once every
        sentence of it has finished. ready: whether the next batch can be had without waiting
        (None: always); while it cannot and sentences are in flight, they go on alone, and the
        next batch is asked for once they have finished or it can be had.

        Each sentence's output is what generate() gives it in its own batch: its encoder runs
        with that batch (the same encoder output, the same source padding), and a decoder row
        computes the same numbers whatever rows share the pass (see docs/exactness.md). Rows
        of a batch whose length limit or forced-prefix width differs from the rows in flight
        wait until those have finished."""
        if rows < 1:
            raise RunError(f"{self.name}: in-flight batching needs at least one row "
                           f"(got {rows})")
        if next(self.model.parameters()).device.type != "cpu":
            # a GPU backend's graphs are recorded for a batch's buffers, which joining rows
            # replace: each join would record new ones
            raise RunError(f"{self.name}: in-flight batching runs on the CPU only, for now")
        yield from self._stream(iter(batches), rows, bos_token, ready)

    # -- the loop -----------------------------------------------------------------------------
    def _generate(self, sample, prefix_tokens: Optional[Tensor] = None,
                  bos_token: Optional[int] = None) -> List[List[Dict[str, Tensor]]]:
        (_, finalized), = self._stream(iter([(sample, prefix_tokens)]), None, bos_token)
        return finalized

    def _pull(self, batches: Iterator, bos_token: Optional[int]) -> Optional["_Batch"]:
        """The next batch of the stream, encoded, or None at its end."""
        try:
            sample, prefix = next(batches)
        except StopIteration:
            return None
        net_input = sample["net_input"]
        src_tokens = net_input["src_tokens"]
        bsz, src_len = src_tokens.shape[:2]
        max_len = batch_max_len(src_len, self.rules.min_len, self.max_len_a, self.max_len_b,
                                self.max_len)
        start = time.perf_counter()
        encoder_out = encode(self.model, self.encoder, net_input)
        self.stats.seconds["encoders"] += time.perf_counter() - start
        return _Batch(sample=sample, prefix=prefix, rows=bsz, src_len=src_len, max_len=max_len,
                      encoder_out=encoder_out, finalized=[[] for _ in range(bsz)], left=bsz)

    def _stream(self, batches: Iterator, limit: Optional[int], bos_token: Optional[int],
                ready: Optional[Callable[[], bool]] = None):
        """The loop of generate() (limit None: one batch, all its rows at once) and of
        generate_stream() (up to `limit` rows in flight; `ready` as there)."""
        waiting: Deque[_Batch] = deque()  # batches with rows not yet admitted, in order
        pending: Deque[_Batch] = deque()  # batches not yet yielded, in order
        owners: List[Tuple[_Batch, int]] = []  # a row's id -> its batch and row there
        target = flight = None
        ended_stream = False
        while True:
            live = 0 if flight is None else flight.live
            if flight is not None and flight.holes is not None and (
                    live == 0 or not self.proposer.in_place):
                self._close_holes(target, flight)  # newcomers join after the rows in flight
            while limit is None or live < limit:  # admit waiting sentences
                if not waiting and not ended_stream:
                    if live and ready is not None and not ready():
                        break  # no waiting for it while sentences are in flight
                    batch = self._pull(batches, bos_token)
                    if batch is None:
                        ended_stream = True
                    else:
                        waiting.append(batch)
                        pending.append(batch)
                if not waiting:
                    break
                batch = waiting[0]
                if live and batch.key != flight.key:
                    break  # other limits: after the rows in flight
                take = batch.rows - batch.admitted if limit is None else min(
                    batch.rows - batch.admitted, limit - live)
                target, flight = self._admit(batch, take, target, flight, owners, bos_token)
                live += take
                if batch.admitted == batch.rows:
                    waiting.popleft()
                if limit is None:
                    break
            if live == 0:
                break
            if flight.holes is not None:  # no newcomer for these places: they go
                self._close_holes(target, flight)
            self._round(target, flight, owners)
            while pending and pending[0].left == 0:
                done = pending.popleft()
                yield done.sample, done.finalized
        if target is not None:
            self._cache = target.buffers  # grown ones included

    def _admit(self, batch: "_Batch", take: int, target, flight: Optional["_Flight"],
               owners: list, bos_token: Optional[int]):
        """`take` more sentences of `batch` join the rows in flight (or start them)."""
        device = batch.sample["net_input"]["src_tokens"].device
        lo, hi = batch.admitted, batch.admitted + take  # the batch's sentences that join
        rows = torch.arange(lo, hi, device=device)
        if flight is None or flight.ids.numel() == 0:
            self.rules.max_len = batch.max_len
        length = batch.max_len + self.schedule.maximum + 2
        tokens = torch.full((take, length), self.pad, dtype=torch.long, device=device)
        tokens[:, 0] = self.eos if bos_token is None else bos_token
        net_input = batch.sample["net_input"]
        # a longer output grows the cache (lean_decoder.forward, doubling)
        slots = min(length, initial_capacity(batch.src_len, self.schedule.maximum))
        seconds, t0 = self.stats.seconds, time.perf_counter()
        # the state owns the kept buffers from here: a growth then frees the old ones
        reuse, self._cache = self._cache, None
        # the first `places` of them into the places of rows that finished (_Flight.holes),
        # the rest after the rows in flight
        places = 0 if flight is None or flight.holes is None else min(take,
                                                                      flight.holes.numel())
        if target is None and take == batch.rows:  # a whole batch: as it comes
            target = self.target.init_state(batch.encoder_out, take, slots, reuse=reuse)
            t1 = time.perf_counter()
            self.proposer.start(net_input, take, slots, batch.encoder_out)
        else:
            fresh = target is None  # a new stream: the proposer forgets the last one's rows
            first = batch.cross is None  # the batch's first rows to join
            if first:
                batch.cross = CrossSource(self.target.lean, batch.encoder_out)
            at = None if places == 0 else flight.holes[:places]
            if places:
                target = self.target.admit(target, batch.cross, lo, lo + places, slots, at=at)
            if places < take:
                target = self.target.admit(target, batch.cross, lo + places, hi, slots,
                                           reuse=reuse)
            t1 = time.perf_counter()
            if first:  # the encoder output is theirs now
                batch.prepared = self.proposer.prepare(net_input, batch.encoder_out)
                batch.encoder_out = None
            if places:
                self.proposer.place(batch.prepared, lo, lo + places, at)
            if places < take:
                self.proposer.admit(batch.prepared, lo + places, hi, slots, fresh)
        t2 = time.perf_counter()
        seconds["encoders"] += t2 - t0
        seconds["draft_encoder"] += t2 - t1
        ids = torch.arange(len(owners), len(owners) + take, device=device)
        owners.extend((batch, row) for row in range(lo, hi))
        prefix = None if batch.prefix is None else batch.prefix.index_select(0, rows)
        new = _Flight(ids=ids, tokens=tokens,
                      cum=torch.zeros(take, length, dtype=torch.float32, device=device),
                      n_tokens=torch.ones(take, dtype=torch.long, device=device),
                      gamma=self.schedule.start(take, device), prefix=prefix, key=batch.key)
        batch.admitted += take
        if batch.admitted == batch.rows:  # all in: what joining needed can go
            batch.encoder_out = batch.cross = batch.prepared = None
        self.stats.sentences += take
        if flight is None or flight.ids.numel() == 0:
            return target, new
        if places:
            flight.place(new, places)
            if places == take:
                return target, flight
            new.select(torch.arange(places, take, device=device))
        flight.extend(new)
        return target, flight

    def _round(self, target, flight: "_Flight", owners: list) -> None:
        """One round for the rows in flight: propose, verify, commit; finished rows leave."""
        f = flight
        device = f.tokens.device
        max_len = self.rules.max_len
        clock = self._clock(device)
        t0 = clock()
        rows = f.ids.numel()
        # rows the proposer has no state for yet join it when this round drafts, if that pays
        join = self.schedule.joins(rows)
        pending = self.proposer.pending
        gamma = self.schedule.window(f.gamma, 1.0 if join or not pending else 1 - pending / rows)
        proposal = self._propose(target, f.tokens, f.n_tokens, gamma, f.prefix, join, clock)
        t1 = clock()
        logits = self._score(target, f.tokens, f.n_tokens, proposal, f.prefix)
        t2 = clock()
        joined, join_seconds = proposal.joined
        t0 += join_seconds  # the draft's encoder, priced apart (RoundTimes.join)
        self.stats.seconds["drafting"] += t1 - t0
        self.stats.seconds["verifying"] += t2 - t1
        self.stats.seconds["encoders"] += join_seconds
        self.stats.seconds["draft_encoder"] += join_seconds
        drafts, offered, plain = proposal.drafts, proposal.offered, proposal.plain
        window = (f.n_tokens - 1)[:, None] + torch.arange(logits.size(1), device=device)[None]
        lprobs = self.rules.log_probs(self.model, logits, window, f.tokens, f.prefix)
        f.cum = f.cum.type_as(lprobs)  # as stock's scores (float64 from an adaptive softmax)
        prev = f.cum.gather(1, (f.n_tokens - 1)[:, None]).squeeze(1)
        verdict = self.acceptance.verify(lprobs, drafts, offered, prev, proposal.q)

        f.n_tokens, keep, has_eos, ended = commit(f.tokens, f.cum, f.n_tokens, verdict,
                                                  self.eos, max_len)
        if proposal.chosen_plain:  # the target's own tokens: no draft was offered
            self.stats.record_plain(keep, plain, proposal.verified)
        elif proposal.tally is not None:
            self.stats.record_rounds(proposal.tally, keep)
        else:
            self.stats.record(offered, verdict.accepted, keep, gamma, drafts,
                              proposal.steps, proposal.verified)
        times = RoundTimes(rows=proposal.verified, steps=proposal.steps, draft=t1 - t0,
                           verify=t2 - t1, total=clock() - t0,
                           plain=plain if proposal.chosen_plain else 0,
                           tokens=int(keep.sum()), drafters=proposal.drafters, joined=joined,
                           join=join_seconds, ended=int(has_eos.sum()) if ended else 0)
        f.gamma = self.schedule.update(gamma, offered, verdict.accepted, times)

        self.target.rollback(target, f.n_tokens - 1)
        self.proposer.rollback(f.n_tokens)
        if ended:
            for row in has_eos.nonzero().squeeze(1).tolist():
                batch, index = owners[int(f.ids[row])]
                batch.finalized[index].append(
                    self._finalize(f.tokens[row], f.cum[row], int(f.n_tokens[row])))
                batch.left -= 1
            # their places wait for newcomers (_admit), or are closed (_close_holes)
            f.holes = has_eos.nonzero().squeeze(1)

    def _close_holes(self, target, flight: "_Flight") -> None:
        """The rows that finished leave the rows in flight (and the states)."""
        alive = torch.ones(flight.ids.numel(), dtype=torch.bool, device=flight.ids.device)
        alive[flight.holes] = False
        flight.holes = None
        order = _fill_holes(alive)
        flight.select(order)
        target.select_rows(order)
        self.proposer.select_rows(order)

    def _propose(self, target, tokens: Tensor, n_tokens: Tensor, gamma: Tensor,
                 prefix: Optional[Tensor], join: bool = True,
                 clock: Callable[[], float] = time.perf_counter) -> "Proposal":
        """The round's drafts: the proposer's, up to each row's cap (join: rows without draft
        state get it first, timed by `clock`; else they are offered nothing); or, where the
        schedule chose 0 or no row has a draft, plain steps to take; or rounds of n-gram
        drafts in one C call, where they run."""
        k = int(gamma.max())
        if k == 0:  # the schedule chose plain steps: drafting does not pay
            return Proposal(plain=self.schedule.plain_steps(tokens.size(0)), chosen_plain=True)
        if self.lookahead is not None and self.lookahead.usable(
                target, tokens.size(0), k, self.rules, prefix, int(n_tokens.min()) - 1):
            return Proposal(lookahead=k, drafters=tokens.size(0))
        joined = (0, 0.0)
        if join and self.proposer.pending:
            start, rows = clock(), self.proposer.pending
            self.proposer.join()
            joined = (rows, clock() - start)
        drafts, q, drafted = self.proposer.propose(tokens, n_tokens, k, prefix, self.stop_rule)
        # the proposer may stop early (EOS, a stop rule); with no draft at all, one plain step
        return Proposal(drafts, q, torch.minimum(gamma, drafted), self.proposer.last_steps,
                        plain=1 if drafts.size(1) == 0 else 0,
                        drafters=self.proposer.last_rows, joined=joined)

    def _score(self, target, tokens: Tensor, n_tokens: Tensor, proposal: "Proposal",
               prefix: Optional[Tensor]) -> Tensor:
        """The target's logits over each row's window [B, m, V]: its verify pass over the
        drafts, or its plain steps (whose own choices become the drafts, to be verified like
        any: `proposal` is completed with them). Sets proposal.verified."""
        rows = tokens.size(0)
        if proposal.lookahead:
            chosen, counts, logits, proposal.tally = self.lookahead.run(
                target, tokens, n_tokens, proposal.lookahead, self.rules)
            proposal.drafts = chosen[:, :-1]  # the call's choices, verified as drafts
            proposal.offered = counts - 1
            proposal.verified = int(proposal.tally[5])
            return logits
        if proposal.plain and self.plain is not None and self.plain.usable(
                target, rows, self.rules, prefix, int(n_tokens.min()) - 1):
            chosen, logits = self.plain.run(target, tokens, n_tokens, proposal.plain, self.rules)
            proposal.plain = chosen.size(1)
            proposal.drafts = chosen[:, :-1]  # the target's own choices, verified as drafts
            proposal.offered = self._cut_at_eos(proposal.drafts)
            proposal.verified = self.plain.last_inputs
            return logits
        if proposal.drafts is None:  # no C steps here: one position per row, a verify pass
            proposal.drafts = tokens.new_empty(rows, 0)
            proposal.offered = torch.zeros_like(n_tokens)
            proposal.plain = 1
        offered = proposal.offered
        window = (n_tokens - 1)[:, None] + torch.arange(proposal.drafts.size(1) + 1,
                                                          device=tokens.device)[None, :]
        # each row scores its own window only (ragged): offered drafts + the token after
        logits = self.target.forward(target, tokens.gather(1, window), counts=offered + 1)
        proposal.verified = self.target.last_inputs
        return logits

    def _clock(self, device):
        """The round's clock (the schedule's own, where it has one): on a GPU, for a schedule
        that uses the times, one that first waits for the work queued so far."""
        clock = getattr(self.schedule, "clock", time.perf_counter)
        if device.type != "cuda" or not self.schedule.measures:
            return clock

        def synchronized():
            torch.cuda.synchronize(device)
            return clock()
        return synchronized

    def _cut_at_eos(self, drafts: Tensor) -> Tensor:
        """Drafts per row [B] of drafts [B, k]: up to and including a row's first EOS."""
        bsz, k = drafts.shape
        offered = torch.full((bsz,), k, dtype=torch.long, device=drafts.device)
        if k:
            is_eos = drafts == self.eos
            offered = torch.where(is_eos.any(1), is_eos.long().argmax(1) + 1, offered)
        return offered

    def _finalize(self, tokens: Tensor, cum: Tensor, n: int) -> Dict[str, Tensor]:
        """A finished row: tokens[1:n] ends with EOS at step n - 2."""
        score, positional = finalize.scores(cum[None, 1:n], n - 2, self.normalize_scores,
                                            self.len_penalty)
        return finalize.hypothesis(tokens[1:n].clone(), score[0], positional[0])
