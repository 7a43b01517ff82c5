"""Speculative decoding with no trained draft: n-gram lookup (--draft-method ngram), the target's
own first layers (--draft-method layers), and plain steps where drafting does not pay.

Greedy output equals stock's in float64 for each proposer (translation with and without source
lookup, language models, batch 1 and ragged batches, forced prefixes, n-gram blocking, fixed and
adaptive draft lengths); the lookup's C kernel and its tensor-op version equal a plain
implementation of the rule; in float32, rounds of plain steps (the target's own greedy steps in
one C call) give the default generator's output.
"""
import random

import pytest
import torch
from fairseq.sequence_generator import SequenceGenerator
from hypothesis import given, settings
from hypothesis import strategies as st

from fairseq_fast.errors import UserError
from fairseq_fast.generators.bild import BiLDSequenceGenerator
from fairseq_fast.generators.speculative import SpeculativeSequenceGenerator
from fairseq_fast.speculative.draft_length import MeasuredDraftLength, MeasuredRate, RoundTimes
from fairseq_fast.speculative.ngram import lookup, lookup_torch
from fairseq_fast.speculative.self_draft import early_layers, same_dictionary
from model_factory import (DummyTask, language_model, make_dictionary, prompt_batch,
                           source_batch, translation_model)
from test_speculative_equality import SETTINGS, compare, generation, model_shapes

DICT = make_dictionary(16)
TASK = DummyTask(DICT, DICT)
OTHER_TASK = DummyTask(make_dictionary(16, prefix="src"), DICT)  # no source lookup


# -- the lookup -------------------------------------------------------------------------------
def reference_lookup(history, source, ngram_min, ngram_max, k, pad, eos):
    """The rule, plainly: the longest suffix first; in the source, the occurrence nearest to
    the suffix's own output position (counted from the source's first token after its left
    padding; the later of two as near), then the latest occurrence in the history (ending
    before the suffix's last token); its continuation, up to k tokens, ending before a filler
    or the text's end."""
    filler = lambda t: t in (pad, eos)  # noqa: E731

    def follow(text, start):
        out = []
        for t in text[start:]:
            if len(out) == k or filler(t):
                break
            out.append(t)
        return out

    for n in range(ngram_max, ngram_min - 1, -1):
        if len(history) - 1 < n:
            continue
        suffix = history[len(history) - n:]
        if any(filler(t) for t in suffix):
            continue
        source = source or []
        lead = next((i for i, t in enumerate(source) if t != pad), len(source))
        found = [p for p in range(len(source) - n) if source[p:p + n] == suffix
                 and follow(source, p + n)]
        if found:
            diagonal = len(history) - n - 1
            p = min(found, key=lambda p: (abs(p - lead - diagonal), -p))
            return follow(source, p + n)
        for p in range(len(history) - n - 1, 0, -1):
            if history[p:p + n] == suffix and follow(history, p + n):
                return follow(history, p + n)
    return []


@settings(max_examples=300, deadline=None, derandomize=True)
@given(seed=st.integers(0, 10 ** 6))
def test_lookup_kernel_and_tensor_ops_follow_the_rule(seed):
    rng = random.Random(seed)
    pad, eos = 1, 2
    bsz, length, vocab = rng.randint(1, 4), rng.randint(3, 18), rng.randint(4, 7)
    n_tokens = torch.tensor([rng.randint(1, length - 1) for _ in range(bsz)])
    tokens = torch.full((bsz, length), pad)
    for b in range(bsz):
        tokens[b, 0] = eos
        tokens[b, 1:n_tokens[b]] = torch.tensor([rng.randint(3, vocab)
                                                 for _ in range(int(n_tokens[b]) - 1)])
        tokens[b, n_tokens[b]:] = torch.tensor([rng.choice([pad, 3, 4])  # scratch: ignored
                                                for _ in range(length - int(n_tokens[b]))])
    source = None
    if rng.random() < 0.6:  # left-padded, EOS-terminated, as fairseq batches sources
        width = rng.randint(1, 10)
        source = torch.full((bsz, width), pad)
        for b in range(bsz):
            n = rng.randint(0, width - 1)
            source[b, width - 1] = eos
            source[b, width - 1 - n:width - 1] = torch.tensor([rng.randint(3, vocab)
                                                               for _ in range(n)])
    ngram_min = rng.randint(1, 3)
    ngram_max, k = rng.randint(ngram_min, 4), rng.randint(0, 5)
    got_c = lookup(tokens, n_tokens, source, ngram_min, ngram_max, k, pad, eos)
    got_torch = lookup_torch(tokens, n_tokens, source, ngram_min, ngram_max, k, pad, eos)
    for drafts, drafted in (got_c, got_torch):
        for b in range(bsz):
            want = reference_lookup(tokens[b, :n_tokens[b]].tolist(),
                                    None if source is None else source[b].tolist(),
                                    ngram_min, ngram_max, k, pad, eos)
            assert drafted[b] == len(want) and drafts[b, :len(want)].tolist() == want
    assert torch.equal(got_c[0], got_torch[0]) and torch.equal(got_c[1], got_torch[1])


def test_lookup_prefers_the_longest_suffix_then_the_source_then_the_nearest_occurrence():
    pad, eos = 1, 2
    # history: BOS 4 5 6 8 3 4 5 6 ; source: 9 5 6 7 3 EOS
    tokens = torch.tensor([[eos, 4, 5, 6, 8, 3, 4, 5, 6, pad, pad]])
    source = torch.tensor([[pad, 9, 5, 6, 7, 3, eos]])
    n = torch.tensor([9])
    # "5 6" occurs in the source and twice in the history: the source's continuation "7 3"
    assert lookup(tokens, n, source, 1, 2, 3, pad, eos)[0].tolist() == [[7, 3]]
    # without a source: the history's latest occurrence (2) continues "8 3 4"
    assert lookup(tokens, n, None, 1, 2, 3, pad, eos)[0].tolist() == [[8, 3, 4]]
    # "4 5 6" occurs in the history only: the longest suffix first
    assert lookup(tokens, n, source, 1, 3, 3, pad, eos)[0].tolist() == [[8, 3, 4]]
    # "5 6" twice in the source's text (at 0 and 5, after its left padding): the one nearest
    # to the suffix's own output position
    twice = torch.tensor([[pad, pad, 5, 6, 3, 9, 9, 5, 6, 7, eos]])
    early = torch.tensor([[eos, 5, 6, pad, pad, pad, pad, pad, pad]])  # suffix at output 0
    late = torch.tensor([[eos, 9, 9, 9, 9, 9, 5, 6, pad]])  # suffix at output 5
    for tokens, n, want in ((early, 3, [[3, 9, 9]]), (late, 8, [[7]])):
        for rule in (lookup, lookup_torch):
            assert rule(tokens, torch.tensor([n]), twice, 2, 2, 3, pad, eos)[0].tolist() == want
    # only in the source: the suffix "6 7" (history BOS 9 6 7)
    tokens = torch.tensor([[eos, 9, 6, 7, pad, pad]])
    source = torch.tensor([[5, 6, 7, 3, 4, eos]])
    drafts, drafted = lookup(tokens, torch.tensor([4]), source, 1, 3, 4, pad, eos)
    assert drafts.tolist() == [[3, 4]] and drafted.tolist() == [2]  # stops at the source's EOS
    # nothing anywhere: no draft
    drafts, drafted = lookup(tokens, torch.tensor([4]), None, 1, 3, 4, pad, eos)
    assert drafts.shape == (1, 0) and drafted.tolist() == [0]


# -- greedy equality with stock -----------------------------------------------------------------
def draft_free(method):
    """A build() for test_speculative_equality.compare: speculative decoding with `method`."""
    def build(target, draft, gen, kw):
        return SpeculativeSequenceGenerator(
            [target], DICT, draft_method=method, draft_len=gen["draft_len"],
            adaptive_draft_len=gen["adaptive"], draft_layers=gen.get("draft_layers", 0),
            ngram_min=gen.get("ngram_min", 1), ngram_max=gen.get("ngram_max", 3), **kw)
    return build


lookup_sizes = st.tuples(st.integers(1, 2), st.integers(0, 2))  # ngram_min, extra for max


@settings(max_examples=40, **SETTINGS)
@given(target=model_shapes(False), gen=generation, sizes=lookup_sizes,
       lengths=st.lists(st.integers(1, 10), min_size=1, max_size=5),
       prefix_size=st.sampled_from([0, 0, 1, 2]), shared_dictionary=st.booleans())
def test_ngram_translation_greedy_equals_stock(target, gen, sizes, lengths, prefix_size,
                                               shared_dictionary):
    """With a shared dictionary the lookup copies from the source too; without, from the
    row's own output only."""
    gen = dict(gen, ngram_min=sizes[0], ngram_max=sizes[0] + sizes[1])
    task = TASK if shared_dictionary else OTHER_TASK
    tgt = translation_model(task, eos_bias=gen["eos_bias"], **target)
    assert same_dictionary(tgt, DICT) == shared_dictionary
    sample = source_batch(task.source_dictionary, lengths, seed=target["seed"])
    prefix = None
    if prefix_size:
        g = torch.Generator().manual_seed(target["seed"] + 1)
        prefix = torch.randint(DICT.nspecial, len(DICT), (len(lengths), prefix_size), generator=g)
    compare(tgt, None, sample, prefix, gen, build=draft_free("ngram"))


@settings(max_examples=25, **SETTINGS)
@given(target=model_shapes(False), gen=generation,
       prompts=st.lists(st.integers(0, 4), min_size=1, max_size=4))
def test_ngram_language_model_greedy_equals_stock(target, gen, prompts):
    lm = language_model(TASK, eos_bias=gen["eos_bias"], **target)
    assert not same_dictionary(lm, DICT)  # no encoder: the prompt is the row's own text
    sample, prefix = prompt_batch(DICT, prompts, seed=target["seed"])
    compare(lm, None, sample, prefix, gen, build=draft_free("ngram"))


@settings(max_examples=30, **SETTINGS)
@given(target=model_shapes(False), gen=generation, layers=st.integers(0, 2),
       lengths=st.lists(st.integers(1, 10), min_size=1, max_size=5),
       prefix_size=st.sampled_from([0, 0, 1]))
def test_layers_translation_greedy_equals_stock(target, gen, layers, lengths, prefix_size):
    target = dict(target, layers=3)
    tgt = translation_model(TASK, eos_bias=gen["eos_bias"], **target)
    sample = source_batch(DICT, lengths, seed=target["seed"])
    prefix = None
    if prefix_size:
        prefix = torch.full((len(lengths), 1), DICT.nspecial + 1)
    compare(tgt, None, sample, prefix, dict(gen, draft_layers=layers),
            build=draft_free("layers"))


@settings(max_examples=15, **SETTINGS)
@given(target=model_shapes(False), gen=generation,
       prompts=st.lists(st.integers(0, 4), min_size=1, max_size=4))
def test_layers_language_model_greedy_equals_stock(target, gen, prompts):
    lm = language_model(TASK, eos_bias=gen["eos_bias"], **dict(target, layers=2))
    sample, prefix = prompt_batch(DICT, prompts, seed=target["seed"])
    compare(lm, None, sample, prefix, gen, build=draft_free("layers"))


def test_bild_with_the_targets_own_layers_at_rollback_zero_is_greedy():
    """BiLD's small model as the large one's first layers: rollback threshold 0 keeps the
    large model's greedy output."""
    tgt = translation_model(TASK, layers=3, seed=4, eos_bias=-1.0)
    sample = source_batch(DICT, [7, 3, 9], seed=2)
    stock = SequenceGenerator([tgt], DICT, beam_size=1, max_len_b=15)
    bild = BiLDSequenceGenerator([tgt], DICT, draft_method="layers", draft_layers=1,
                                 rollback_threshold=0.0, max_len_b=15)
    for want, have in zip(stock.generate([tgt], sample), bild.generate([tgt], sample)):
        assert have[0]["tokens"].tolist() == want[0]["tokens"].tolist()
    assert bild.stats.draft_calls > 0


# -- the layers view ----------------------------------------------------------------------------
def test_layers_draft_is_a_view_of_the_target():
    tgt = translation_model(TASK, layers=3, seed=1)
    names = {n: p for n, p in tgt.named_parameters()}
    view = early_layers(tgt, 2)
    assert early_layers(tgt, 2) is view  # one view per target and K
    assert len(view.decoder.layers) == 2 and len(tgt.decoder.layers) == 3
    assert view.encoder is tgt.encoder
    for name, param in view.named_parameters():
        assert param is names[name]  # the target's own weights, no copy
    assert {n for n, _ in tgt.named_parameters()} == set(names)  # the target unchanged
    assert len(early_layers(tgt).decoder.layers) == 1  # default: half of 3, rounded down
    with pytest.raises(UserError, match="between 1 and 2"):
        early_layers(tgt, 3)
    with pytest.raises(UserError, match="at least 2 decoder layers"):
        early_layers(translation_model(TASK, layers=1, seed=1))


def test_layers_draft_shares_the_targets_encoder():
    tgt = translation_model(TASK, layers=3, seed=1)
    spec = SpeculativeSequenceGenerator([tgt], DICT, draft_method="layers", draft_layers=1)
    assert spec.proposer.shared_encoder


# -- float32: plain steps -----------------------------------------------------------------------
def test_plain_steps_give_the_default_generators_output():
    """float32 on the CPU: rounds of the target's own greedy steps in one C call (an adaptive
    n-gram lookup that never pays runs mostly these) give the default generator's hypotheses
    and scores."""
    from fairseq_fast.generators.fast import FastSequenceGenerator

    tgt = translation_model(TASK, layers=2, dim=32, ffn=64, seed=7, eos_bias=-2.0,
                            dtype=torch.float32)
    sample = source_batch(DICT, [9, 2, 6, 4, 12, 5], seed=3)
    default = FastSequenceGenerator([tgt], DICT, beam_size=1, max_len_b=30)
    spec = SpeculativeSequenceGenerator([tgt], DICT, draft_method="ngram", draft_len=3,
                                        adaptive_draft_len=True, max_len_b=30)
    assert spec.plain is not None
    want = default.generate([tgt], sample)
    for _ in range(4):  # the schedule learns; later batches run plain steps
        got = spec.generate([tgt], sample)
        for a, b in zip(want, got):
            assert b[0]["tokens"].tolist() == a[0]["tokens"].tolist()
            assert torch.allclose(b[0]["positional_scores"], a[0]["positional_scores"],
                                  atol=1e-5)
    assert spec.stats.plain_steps > 0


def test_a_round_with_nothing_to_verify_is_one_plain_step():
    """A lookup that finds nothing (a source of other symbols; 3-grams in at most 3 tokens):
    each round decodes one token per row, as stock does, and offers no draft."""
    tgt = translation_model(OTHER_TASK, layers=2, seed=2, eos_bias=-4.0)
    sample = source_batch(OTHER_TASK.source_dictionary, [3, 5], seed=1)
    spec = SpeculativeSequenceGenerator([tgt], DICT, draft_method="ngram", ngram_min=3,
                                        ngram_max=3, max_len_b=3)
    stock = SequenceGenerator([tgt], DICT, beam_size=1, max_len_b=3)
    got = spec.generate([tgt], sample)
    for want, have in zip(stock.generate([tgt], sample), got):
        assert have[0]["tokens"].tolist() == want[0]["tokens"].tolist()
    assert spec.stats.proposed == 0
    assert spec.stats.target_calls == max(len(h[0]["tokens"]) for h in got)


# -- rounds in one C call (ngram.LookaheadRounds) ------------------------------------------------
@pytest.mark.parametrize("seed", [2, 4])
@pytest.mark.parametrize("lengths", [[9], [9, 2, 6, 4, 12, 5]])
@pytest.mark.parametrize("kw", [dict(draft_len=3), dict(draft_len=4, adaptive_draft_len=True),
                                dict(draft_len=2, ngram_min=2, ngram_max=4)])
def test_lookahead_rounds_give_the_default_generators_output(seed, lengths, kw):
    """float32 on the CPU: n-gram rounds run in one C call give the default generator's
    hypotheses and scores. The call's choices are the target's own: the loop, verifying them
    as drafts, keeps every token the call chose; and its lookups offered drafts that were kept."""
    from fairseq_fast.generators.fast import FastSequenceGenerator

    tgt = translation_model(TASK, layers=2, dim=32, ffn=64, seed=seed, eos_bias=-2.0,
                            dtype=torch.float32)
    sample = source_batch(DICT, lengths, seed=seed)
    default = FastSequenceGenerator([tgt], DICT, beam_size=1, max_len_b=30)
    spec = SpeculativeSequenceGenerator([tgt], DICT, draft_method="ngram", max_len_b=30, **kw)
    assert spec.lookahead is not None
    chosen, run = [], spec.lookahead.run

    def counted(*args):
        out = run(*args)
        chosen.append(int(out[1].sum()))
        return out
    spec.lookahead.run = counted
    want = default.generate([tgt], sample)
    for _ in range(3):
        got = spec.generate([tgt], sample)
        for a, b in zip(want, got):
            assert b[0]["tokens"].tolist() == a[0]["tokens"].tolist()
            assert torch.allclose(b[0]["positional_scores"], a[0]["positional_scores"],
                                  atol=1e-5)
    stats = spec.stats
    assert chosen and stats.committed == sum(chosen)  # nothing the call chose was cut
    assert stats.plain_committed + stats.committed == 3 * sum(len(h[0]["tokens"]) for h in want)
    assert stats.proposed > 0 and 0 < stats.accepted <= stats.proposed
    assert stats.target_calls > len(chosen)  # several rounds a call


def test_lookahead_rounds_stop_at_max_len_and_min_len():
    """The call's own step rules: no EOS before min_len, only EOS at max_len."""
    from fairseq_fast.generators.fast import FastSequenceGenerator

    tgt = translation_model(TASK, layers=2, dim=32, ffn=64, seed=5, eos_bias=3.0,
                            dtype=torch.float32)
    sample = source_batch(DICT, [7, 3], seed=5)
    for limits in (dict(min_len=6, max_len_b=20), dict(max_len_b=4)):
        want = FastSequenceGenerator([tgt], DICT, beam_size=1, **limits).generate([tgt], sample)
        spec = SpeculativeSequenceGenerator([tgt], DICT, draft_method="ngram", draft_len=3,
                                            **limits)
        got = spec.generate([tgt], sample)
        for a, b in zip(want, got):
            assert b[0]["tokens"].tolist() == a[0]["tokens"].tolist()
        assert spec.stats.committed == sum(len(h[0]["tokens"]) for h in want)


# -- the schedule's length 0 ----------------------------------------------------------------------
def run_schedule(rounds, kept, verify, plain_step):
    """A MeasuredDraftLength at batch 1 over `rounds` rounds of a proposer that drafts what it
    is asked for: kept(k) of them kept, a verify pass of k + 1 positions taking verify(k)
    seconds (drafting is free, as a lookup is), a plain step plain_step seconds. Returns the
    lengths chosen."""
    schedule = MeasuredDraftLength(initial=4, maximum=8)
    chosen = []
    for _ in range(rounds):
        k = int(schedule.window(torch.ones(1, dtype=torch.long)).max())
        steps = schedule.plain_steps(1)
        if k == 0:
            times = RoundTimes(rows=steps, steps=0, draft=0.0, verify=plain_step * steps,
                               total=plain_step * steps, plain=steps)
            schedule.update(torch.zeros(1), torch.zeros(1), torch.zeros(1), times)
        else:
            times = RoundTimes(rows=k + 1, steps=0, draft=1e-6, verify=verify(k),
                               total=verify(k) + 2e-4)
            schedule.update(torch.full((1,), k), torch.full((1,), k),
                            torch.full((1,), kept(k)), times)
        chosen.append(k)
    return chosen


def test_schedule_chooses_plain_steps_where_drafting_does_not_pay():
    """Every draft rejected: plain steps (length 0) buy more tokens a second; the schedule
    settles there, trying a length next to it now and then."""
    chosen = run_schedule(60, kept=lambda k: 0, verify=lambda k: 1e-3 * (1 + 0.1 * k),
                          plain_step=8e-4)
    assert chosen[-1] == 0 and chosen[20:].count(0) >= 35


def test_schedule_keeps_drafting_where_drafts_are_kept():
    chosen = run_schedule(60, kept=lambda k: k, verify=lambda k: 1e-3 * (1 + 0.1 * k),
                          plain_step=8e-4)
    assert min(chosen[20:]) >= 1 and chosen[-1] >= 4


def run_rate_schedule(rounds, seconds_per_token, slow_plain_round=None):
    """A MeasuredRate at batch 1 whose rounds of length k write 10 tokens in
    10 * seconds_per_token(k) seconds, but the slow_plain_round-th round of plain steps (1 for
    the first) three times that (the machine busy elsewhere). Returns the lengths chosen."""
    schedule = MeasuredRate(initial=4, maximum=8)
    chosen = []
    for _ in range(rounds):
        k = int(schedule.window(torch.ones(1, dtype=torch.long)).max())
        seconds = 10 * seconds_per_token(k)
        if k == 0 and chosen.count(0) + 1 == slow_plain_round:
            seconds *= 3
        times = RoundTimes(rows=1, steps=0, draft=0.0, verify=0.0, total=seconds,
                           plain=1 if k == 0 else 0, tokens=10)
        schedule.update(torch.full((1,), k), torch.zeros(1), torch.zeros(1), times)
        chosen.append(k)
    return chosen


def test_rate_schedule_walks_to_the_fastest_length():
    """Lengths priced by their own rounds: the schedule leaves its initial length for faster
    ones, step by step, and settles at the fastest, trying others now and then."""
    chosen = run_rate_schedule(200, lambda k: 1e-3 * (1 + abs(k - 2)))
    assert chosen[0] == 4 and chosen[100:].count(2) >= 80


def test_rate_schedule_chooses_plain_steps_where_drafting_does_not_pay():
    chosen = run_rate_schedule(120, lambda k: 1e-3 * (1 + 0.1 * k) if k else 0.5e-3)
    assert chosen[60:].count(0) >= 50


@pytest.mark.parametrize("gain,plain", [(1.03, True), (1.15, False)])
def test_rate_schedule_drafts_only_where_it_clearly_beats_plain_steps(gain, plain):
    """A length a few percent faster than plain steps, within the noise of measured rates, does
    not take the schedule off them; a clearly faster one does."""
    chosen = run_rate_schedule(120, lambda k: 1e-3 / gain if k == 2 else 1e-3)
    if plain:
        assert chosen[60:].count(0) >= 50
    else:
        assert chosen[60:].count(2) >= 50


@pytest.mark.parametrize("slow_plain_round", [1, 2, 5])
def test_rate_schedule_returns_to_plain_steps_after_one_slow_round(slow_plain_round):
    """One round of plain steps measured slow (a hiccup of the machine) makes drafting, 10%
    slower, look better for a while; the next rounds of plain steps the schedule tries price
    them again, so it is back on them within a hundred rounds, not after hundreds."""
    chosen = run_rate_schedule(200, lambda k: 1e-3 if k == 0 else 1.1e-3,
                               slow_plain_round)
    assert chosen[100:].count(0) >= 80


# -- refusals -------------------------------------------------------------------------------------
@pytest.mark.parametrize("kwargs,needle", [
    (dict(draft_method="ngram", draft_model="x"), "takes no draft model"),
    (dict(draft_method="layers", draft_model="x"), "takes no draft model"),
    (dict(draft_method="model"), "needs a draft model"),
    (dict(draft_method="bogus"), "unknown --draft-method"),
    (dict(draft_method="ngram", ngram_min=3, ngram_max=2), "--ngram-max"),
    (dict(draft_method="ngram", ngram_min=0), "--ngram-min"),
    (dict(draft_method="layers", draft_layers=5), "between 1 and 2"),
])
def test_bad_draft_methods_are_refused(kwargs, needle):
    tgt = translation_model(TASK, layers=3, seed=1)
    if kwargs.get("draft_model") == "x":
        kwargs = dict(kwargs, draft_model=tgt)
    with pytest.raises(UserError, match=needle):
        SpeculativeSequenceGenerator([tgt], DICT, **kwargs)


def test_bild_refuses_ngram():
    tgt = translation_model(TASK, layers=3, seed=1)
    with pytest.raises(UserError, match="stop rule"):
        BiLDSequenceGenerator([tgt], DICT, draft_method="ngram")
