"""The plugin's default generator (fast cache, prefill, vectorised n-gram blocker) == stock fairseq.

Generators are built the way fairseq-generate, fairseq-interactive and the hub build them, with
FairseqTask.build_generator: once with the plugin's override (FastSequenceGenerator...) and once
with fairseq's original (`__wrapped__`), from the same generation options. Float64 models;
hypotheses, scores, positional scores, attention and alignments are compared for every beam.
Stock is given the correct n-gram rule (its CPU blocker bans nothing: fairseq issue #5206).
"""
import argparse
import re

import pytest
import torch
from fairseq.tasks import FairseqTask
from fairseq.token_generation_constraints import pack_constraints
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import fairseq_fast  # noqa: F401  (applies the overrides)
from fairseq_fast.decoding.decoder_state import DecoderState
from fairseq_fast.decoding.ensemble import FastEnsembleModel
from fairseq_fast.generators.fast import FastSequenceGenerator, VectorisedNGramBlock
from fairseq_fast.decoding.lean_decoder import LeanDecoder
from model_factory import (language_model, make_dictionary, prompt_batch, reference_banned,
                           source_batch, translation_model)
from test_speculative_equality import ReferenceNGramBlock, model_shapes

DICT = make_dictionary(16)
SETTINGS = dict(deadline=None, derandomize=True,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


class Task(FairseqTask):
    """Just enough of a task for build_generator (dictionaries)."""

    def __init__(self, dictionary=DICT):
        self.src_dict = self.tgt_dict = dictionary

    @property
    def source_dictionary(self):
        return self.src_dict

    @property
    def target_dictionary(self):
        return self.tgt_dict


TASK = Task()


def gen_args(**kw):
    base = dict(beam=5, nbest=1, max_len_a=0, max_len_b=200, min_len=1, unnormalized=False,
                lenpen=1, unkpen=0, temperature=1.0, match_source_len=False,
                no_repeat_ngram_size=0, sampling=False, sampling_topk=-1, sampling_topp=-1.0,
                diverse_beam_groups=-1, diverse_beam_strength=0.5, diversity_rate=-1,
                constraints=None, print_alignment=None, score_reference=False)
    base.update(kw)
    return argparse.Namespace(**base)


def build_pair(models, args):
    ours = TASK.build_generator(models, args)
    stock = FairseqTask.build_generator.__wrapped__(TASK, models, args)
    if args.no_repeat_ngram_size:
        stock.repeat_ngram_blocker = ReferenceNGramBlock(args.no_repeat_ngram_size)
    return ours, stock


def assert_same(expected, got, nbest):
    assert len(expected) == len(got)
    for want_beams, have_beams in zip(expected, got):
        assert len(want_beams) == len(have_beams)
        for want, have in list(zip(want_beams, have_beams))[:nbest]:
            assert have["tokens"].tolist() == want["tokens"].tolist()
            assert torch.allclose(have["score"], want["score"], atol=1e-9, rtol=0)
            assert torch.allclose(have["positional_scores"], want["positional_scores"],
                                  atol=1e-9, rtol=0)
            if want["attention"] is not None and want["attention"].numel():
                assert torch.allclose(have["attention"].double(), want["attention"].double(),
                                      atol=1e-6)
            if torch.is_tensor(want.get("alignment")) and want["alignment"].numel():
                assert torch.equal(have["alignment"], want["alignment"])


def run_both(models, args, sample, seed=0, **kwargs):
    ours, stock = build_pair(models, args)
    assert isinstance(ours.model, FastEnsembleModel)
    torch.manual_seed(seed)
    expected = stock.generate(models, sample, **kwargs)
    torch.manual_seed(seed)
    got = ours.generate(models, sample, **kwargs)
    assert_same(expected, got, args.nbest)
    return got


search_options = st.one_of(
    st.fixed_dictionaries({"beam": st.sampled_from([1, 2, 5])}),
    st.fixed_dictionaries({"beam": st.sampled_from([1, 3]), "sampling": st.just(True),
                           "sampling_topk": st.sampled_from([-1, 3]),
                           "sampling_topp": st.sampled_from([-1.0, 0.8]),
                           "temperature": st.sampled_from([0.7, 1.0, 1.3])}),
    st.fixed_dictionaries({"beam": st.just(4), "diverse_beam_groups": st.just(2)}),
    st.fixed_dictionaries({"beam": st.just(3), "diversity_rate": st.just(0.5)}),
    st.fixed_dictionaries({"beam": st.just(3), "match_source_len": st.just(True)}),
    st.fixed_dictionaries({"beam": st.just(3), "constraints": st.just("ordered")}),
    st.fixed_dictionaries({"beam": st.just(3), "print_alignment": st.just("hard")}),
)

length_options = st.fixed_dictionaries({
    "eos_bias": st.sampled_from([-4.0, 0.0, 2.0]),
    "max_len_a": st.sampled_from([0, 1]),
    "max_len_b": st.integers(2, 12),
    "min_len": st.integers(1, 3),
    "lenpen": st.sampled_from([1.0, 0.5, 2.0]),
    "unkpen": st.sampled_from([0.0, 1.0]),
    "ngram": st.sampled_from([0, 0, 2, 3]),
    "nbest": st.integers(1, 3),
    "prefix_size": st.sampled_from([0, 0, 1, 3]),
})


@settings(max_examples=120, **SETTINGS)
@given(shape=model_shapes(False), search=search_options, opts=length_options,
       lengths=st.lists(st.integers(1, 9), min_size=1, max_size=4))
def test_translation_equals_stock(shape, search, opts, lengths):
    model = translation_model(TASK, eos_bias=opts["eos_bias"], **shape)
    args = gen_args(max_len_a=opts["max_len_a"], max_len_b=opts["max_len_b"],
                    min_len=min(opts["min_len"], opts["max_len_b"]), lenpen=opts["lenpen"],
                    unkpen=opts["unkpen"], no_repeat_ngram_size=opts["ngram"], **search)
    args.nbest = min(opts["nbest"], args.beam)
    sample = source_batch(DICT, lengths, seed=shape["seed"])
    kwargs = {}
    g = torch.Generator().manual_seed(shape["seed"] + 1)
    if opts["prefix_size"] and not args.constraints:
        kwargs["prefix_tokens"] = torch.randint(DICT.nspecial, len(DICT),
                                                (len(lengths), opts["prefix_size"]), generator=g)
    if args.constraints:
        kwargs["constraints"] = pack_constraints(
            [[torch.randint(DICT.nspecial, len(DICT), (2,), generator=g)] for _ in lengths])
        args.max_len_b = max(args.max_len_b, 6)
    if args.match_source_len:
        args.min_len = 1
    run_both([model], args, sample, seed=shape["seed"], **kwargs)


@settings(max_examples=40, **SETTINGS)
@given(shape=model_shapes(False), beam=st.sampled_from([1, 3]),
       prompts=st.lists(st.integers(0, 5), min_size=1, max_size=4),
       eos_bias=st.sampled_from([-4.0, 0.0]), prefill=st.booleans())
def test_language_model_prompts_equal_stock(shape, beam, prompts, eos_bias, prefill):
    """Prompts of different lengths are right-padded prefix tokens (fairseq's LM task); prefill
    covers the columns every prompt has, the rest is forced step by step as stock does."""
    shape = dict(shape)
    lm = language_model(TASK, eos_bias=eos_bias, **shape)
    sample, prefix = prompt_batch(DICT, prompts, seed=shape["seed"])
    args = gen_args(beam=beam, max_len_b=8, no_fast_prefill=not prefill)
    run_both([lm], args, sample, prefix_tokens=prefix)


def record_finishing_steps(monkeypatch) -> list:
    """The steps at which the plugin's beam loop finishes sentences, one entry per sentence
    (empty if fairseq's loop ran)."""
    from fairseq_fast.generators import beam_search

    finishing_steps = []
    real = beam_search._finalize

    def spy(gen, step, *args):
        done = real(gen, step, *args)
        finishing_steps.extend([step] * len(done))
        return done

    monkeypatch.setattr(beam_search, "_finalize", spy)
    return finishing_steps


@pytest.mark.parametrize("eos_bias,beam,ngram", [(0.0, 3, 0), (1.0, 3, 2), (2.0, 5, 0),
                                                   (1.0, 1, 0)])
def test_sentences_leaving_the_batch_at_different_steps(monkeypatch, eos_bias, beam, ngram):
    """Plain beam search runs the plugin's own loop (beam_search.py): sentences that finish
    leave the batch at several different steps while others go on, and every hypothesis,
    score and attention still equals stock's (the random models of the property tests mostly
    run every sentence to max_len)."""
    finishing_steps = record_finishing_steps(monkeypatch)
    model = translation_model(TASK, eos_bias=eos_bias, seed=7)
    sample = source_batch(DICT, [3, 5, 7, 2, 6, 4], seed=7)
    run_both([model], gen_args(beam=beam, max_len_b=12, no_repeat_ngram_size=ngram), sample)
    assert len(finishing_steps) == 6  # our loop ran, once per sentence
    assert len(set(finishing_steps[:-1])) >= 2  # left at two or more steps before the last


@pytest.mark.parametrize("beam", [1, 3])
def test_sentences_leave_while_others_are_still_on_their_prefix(monkeypatch, beam):
    """A forced prefix runs in the plugin's loop: with prompts of very different lengths, short
    ones end (EOS is likely) while long ones are still forced, so the prefix must follow the
    sentences that stay."""
    finishing_steps = record_finishing_steps(monkeypatch)
    lm = language_model(TASK, eos_bias=3.0, seed=5)
    sample, prefix = prompt_batch(DICT, [1, 9, 2, 6], seed=5)
    run_both([lm], gen_args(beam=beam, max_len_b=14), sample, prefix_tokens=prefix)
    assert len(finishing_steps) == 4  # our loop ran, once per sentence
    assert min(finishing_steps) < 8  # some left before the longest prompt's last forced step


def test_a_prefix_holding_eos_runs_fairseqs_loop(monkeypatch):
    """fairseq copies the first beam to the others at an EOS in the prefix: its own loop runs."""
    from fairseq_fast.generators import beam_search

    loops = []
    real = beam_search.generate
    monkeypatch.setattr(beam_search, "generate", lambda *a, **k: loops.append(1) or real(*a, **k))
    model = translation_model(TASK, seed=3)
    sample = source_batch(DICT, [3, 4], seed=3)
    run_both([model], gen_args(beam=3, max_len_b=6), sample,
             prefix_tokens=torch.tensor([[5, 6], [7, 8]]))
    assert loops == [1]
    run_both([model], gen_args(beam=3, max_len_b=6), sample,
             prefix_tokens=torch.tensor([[5, DICT.eos()], [7, 8]]))
    assert loops == [1]


def test_ensemble_equals_stock():
    models = [translation_model(TASK, seed=s, eos_bias=-1.0) for s in (1, 2)]
    run_both(models, gen_args(beam=4, max_len_b=10), source_batch(DICT, [4, 7, 2], seed=5))


def test_encoder_memory_does_not_grow_with_beam(monkeypatch):
    """Encoder K/V are held once per source sentence: their first dimension is the number of
    sentences for every beam size, and the beams attend to them without copies."""
    seen = []
    original = LeanDecoder.init_state

    def spy(self, *args, **kwargs):
        state = original(self, *args, **kwargs)
        seen.append(state)
        return state

    monkeypatch.setattr(LeanDecoder, "init_state", spy)
    model = translation_model(TASK, layers=2, eos_bias=-2.0, seed=4)
    sample = source_batch(DICT, [3, 8, 5], seed=2)
    for beam in (1, 4, 8):
        seen.clear()
        run_both([model], gen_args(beam=beam, max_len_b=12), sample)
        state = seen[0]
        assert state.group == beam
        assert state.self_k.size(1) == 3 * beam  # decoder rows: one per beam
        for k, v in zip(state.cross_k, state.cross_v):
            assert k.size(0) == v.size(0) == 3  # encoder K/V: one per sentence


def test_next_batches_reuse_the_cache_and_still_equal_stock(monkeypatch):
    """One generator, several batches (as fairseq-generate runs them): a batch takes the last
    batch's K/V buffers where they fit (fewer rows, a longer capacity: no new memory) and
    allocates where they do not (more rows); every batch's output equals stock's."""
    seen = []
    original = LeanDecoder.init_state

    def spy(self, *args, **kwargs):
        seen.append(original(self, *args, **kwargs))
        return seen[-1]

    monkeypatch.setattr(LeanDecoder, "init_state", spy)
    model = translation_model(TASK, layers=2, eos_bias=-3.0, seed=6)
    ours, stock = build_pair([model], gen_args(beam=3, max_len_b=40))
    for lengths, seed in (([6, 9, 4], 1), ([5, 3], 2), ([8, 2, 7, 5], 3)):
        sample = source_batch(DICT, lengths, seed=seed)
        assert_same(stock.generate([model], sample), ours.generate([model], sample), 1)
    first, second, third = seen
    assert first.capacity > 32  # grew past the first allocation: the spare is long
    assert second.self_k.data_ptr() == first.self_k.data_ptr()  # 6 rows in a 9-row buffer
    assert second.capacity == first.capacity
    assert third.self_k.size(1) == 12 and third.self_k.data_ptr() != first.self_k.data_ptr()


def test_the_first_cache_holds_an_output_as_long_as_the_source_without_growing(monkeypatch):
    """A batch's cache starts at initial_capacity(source length) slots: a beam search whose
    outputs are a little longer than the 32 slots a fixed start would give, but within the
    source's length, never grows the cache (each growth copies it into a fresh buffer)."""
    from fairseq_fast.decoding.decoder_state import initial_capacity

    grown = []
    original = DecoderState.ensure_capacity

    def spy(self, needed):
        if needed > self.capacity:
            grown.append((self.capacity, needed))
        original(self, needed)

    monkeypatch.setattr(DecoderState, "ensure_capacity", spy)
    model = translation_model(TASK, layers=2, eos_bias=-8.0, seed=3)  # long outputs
    ours, stock = build_pair([model], gen_args(beam=2, max_len_b=40))
    sample = source_batch(DICT, [40, 37], seed=4)
    hypos = ours.generate([model], sample)
    assert_same(stock.generate([model], sample), hypos, 1)
    assert max(len(h[0]["tokens"]) for h in hypos) > 32  # past a fixed 32-slot start
    assert grown == [] and initial_capacity(41) == 64
    assert initial_capacity(3) == 32 and initial_capacity(62) == 64
    assert initial_capacity(63) == 128 and initial_capacity(57, extra=5) == 64


def test_reused_buffers_are_zeroed_without_origins_and_taken_as_they_are_with():
    """allocate(reuse=...): the same memory either way; rows at different lengths (no origins)
    may read past a slot they wrote, masked, where 0 x a stale NaN would be NaN, so the reused
    buffers are zeroed; with origins no slot is read before it is written, so nothing is."""
    cross = [torch.randn(2, 1, 3, 2)] * 2
    old = DecoderState.allocate(2, 4, 1, 2, 8, cross, cross, None, torch.float64, "cpu")
    for origins in (False, True):
        for buffer in old.buffers:
            buffer.fill_(float("nan"))
        new = DecoderState.allocate(2, 3, 1, 2, 6, cross, cross, None, torch.float64, "cpu",
                                    origins=origins, reuse=old.buffers)
        assert new.self_k.data_ptr() == old.self_k.data_ptr() and new.capacity == 8
        assert new.buffers == old.buffers
        assert bool((new.self_k == 0).all() and (new.self_v == 0).all()) is not origins
    bigger = DecoderState.allocate(2, 5, 1, 2, 6, cross, cross, None, torch.float64, "cpu",
                                   reuse=old.buffers)  # more rows: new memory
    assert bigger.self_k.data_ptr() != old.self_k.data_ptr()
    bigger.ensure_capacity(9)  # grown: the next batch takes the grown buffers
    assert bigger.capacity == 12 and bigger.buffers == (bigger.self_k, bigger.self_v)


def test_reorder_copies_only_what_changed():
    state = DecoderState.allocate(2, 4, 1, 2, 8, [torch.randn(2, 1, 3, 2)] * 2,
                                  [torch.randn(2, 1, 3, 2)] * 2, None, torch.float64, "cpu",
                                  group=2)
    state.self_k.normal_()
    state.lengths.fill_(5)
    before = state.self_k.clone()
    ptr = state.self_k.data_ptr()
    state.select_rows(torch.arange(4))  # unchanged order: nothing happens
    assert state.self_k.data_ptr() == ptr and torch.equal(state.self_k, before)
    state.select_rows(torch.tensor([1, 1, 2, 3]))  # row 0 takes row 1 (same sentence)
    assert state.self_k.data_ptr() == ptr  # written in place
    assert torch.equal(state.self_k[:, 0, :, :5], before[:, 1, :, :5])
    assert torch.equal(state.self_k[:, 0, :, 5:], before[:, 0, :, 5:])  # beyond length: untouched
    assert torch.equal(state.self_k[:, 1:], before[:, 1:])
    cross = state.cross_k[0]
    state.select_rows(torch.tensor([2, 3]))  # sentence 0 finished
    assert state.cross_k[0].size(0) == 1 and torch.equal(state.cross_k[0][0], cross[1])


def test_origin_state_reads_what_copies_would_without_copying():
    """DecoderState with origins (fairseq's generator on CPU): after writes, beam reorders,
    sentences leaving and growth, every row reads the same keys/values as the copying state,
    while reorders and rows leaving leave the K/V buffers untouched."""
    g = torch.Generator().manual_seed(0)
    cross = ([torch.randn(3, 1, 3, 2, generator=g, dtype=torch.float64) for _ in range(2)],
             [torch.randn(3, 1, 3, 2, generator=g, dtype=torch.float64) for _ in range(2)],
             torch.rand(3, 1, 1, 3, generator=g) < 0.5)
    # each state owns its encoder K/V (the copying one moves rows in place)
    own = lambda: ([t.clone() for t in cross[0]], [t.clone() for t in cross[1]],  # noqa: E731
                   cross[2].clone())
    states = [DecoderState.allocate(2, 6, 1, 2, 4, *own(), torch.float64, "cpu", group=2,
                                    origins=origins) for origins in (False, True)]
    copying, recording = states
    own_cross = (recording.cross_k, recording.cross_mask)

    def write(n):
        values = torch.randn(2, 2, copying.lengths.numel(), 1, n, 2, generator=g)
        lo = int(copying.lengths[0])
        for state in states:
            state.ensure_capacity(lo + n)
            state.wrote(lo, n)
            rows = state.lengths.numel()
            state.self_k[:, :rows, :, lo:lo + n] = values[0]
            state.self_v[:, :rows, :, lo:lo + n] = values[1]
            state.lengths = state.lengths + n

    def same():
        total = int(copying.lengths[0])
        for layer in range(2):
            for a, b in zip(copying.keys_values(layer, total),
                            recording.keys_values(layer, total)):
                assert torch.equal(a, b)
            rows = recording.cross_rows  # sentence s reads row rows[s] of the encoder K/V
            rows = torch.arange(copying.cross_k[layer].size(0)) if rows is None else rows
            assert torch.equal(copying.cross_k[layer], recording.cross_k[layer][rows])
            assert torch.equal(copying.cross_v[layer], recording.cross_v[layer][rows])
            assert torch.equal(copying.cross_mask, recording.cross_mask[rows])

    write(3)
    for rows, n in (([1, 1, 2, 2, 5, 4], 1),  # beams copy beams, two swap
                    ([2, 3, 4, 5], 1),  # sentence 0 finished
                    ([1, 0, 1, 1], 3),  # and a write past the capacity: growth
                    ([2, 3], 2)):
        buffers = (recording.self_k.clone(), recording.self_v.clone())
        for state in states:
            state.select_rows(torch.tensor(rows))
        # bit for bit (the buffers start uninitialised: unwritten slots may hold NaN)
        assert torch.equal(recording.self_k.view(torch.int64), buffers[0].view(torch.int64))
        assert torch.equal(recording.self_v.view(torch.int64), buffers[1].view(torch.int64))
        assert recording.self_k.size(1) == 6  # rows leaving free nothing, copy nothing
        # nor do sentences leaving move encoder K/V: the state names their rows
        assert recording.cross_k is own_cross[0] and recording.cross_mask is own_cross[1]
        same()
        write(n)
        same()
    assert recording.capacity == copying.capacity == 16  # grown twice, from 4
    assert recording.cross_rows.tolist() == [1]  # the last sentence reads encoder row 1
    recording.compact_cross()  # for readers that index sentences directly
    assert recording.cross_rows is None and recording.cross_k[0].size(0) == 1
    same()


def test_switches_give_fairseq_its_own_parts(monkeypatch):
    model = translation_model(TASK, seed=1)
    ours = TASK.build_generator([model], gen_args(no_repeat_ngram_size=2))
    assert isinstance(ours, FastSequenceGenerator) and isinstance(ours.model, FastEnsembleModel)
    assert isinstance(ours.repeat_ngram_blocker, VectorisedNGramBlock)
    off = TASK.build_generator([model], gen_args(no_repeat_ngram_size=2, no_fast_cache=True,
                                                 no_fast_ngram=True))
    assert type(off.model).__name__ == "EnsembleModel"
    assert type(off.repeat_ngram_blocker).__name__ == "NGramRepeatBlock"
    no_prefill = TASK.build_generator([model], gen_args(no_fast_prefill=True))
    assert isinstance(no_prefill.model, FastEnsembleModel) and not no_prefill.model.prefill
    assert ours.model.backends[0].lean.linear.enabled  # packed linears (packed_linear.py) by default
    no_linear = TASK.build_generator([model], gen_args(no_fast_linear=True))
    assert isinstance(no_linear.model, FastEnsembleModel)
    assert not no_linear.model.backends[0].lean.linear.enabled
    # plain beam search runs the own loop (beam_search.py); --no-fast-beam and other searches
    # run fairseq's _generate
    from fairseq_fast.generators import beam_search
    loops = []
    real = beam_search.generate
    monkeypatch.setattr(beam_search, "generate", lambda *a, **k: loops.append(1) or real(*a, **k))
    sample = source_batch(DICT, [4, 2], seed=1)
    ours.generate([model], sample)
    assert loops == [1]
    no_beam = TASK.build_generator([model], gen_args(no_fast_beam=True))
    assert isinstance(no_beam.model, FastEnsembleModel) and not no_beam.fast.beam_loop
    no_beam.generate([model], sample)
    sampling = TASK.build_generator([model], gen_args(beam=2, sampling=True))
    sampling.generate([model], sample)
    assert loops == [1]


def test_prefill_runs_the_prefix_in_one_pass(monkeypatch):
    calls = []
    original = LeanDecoder.forward

    def spy(self, state, tokens, *args, **kwargs):
        calls.append(tokens.size(1))
        return original(self, state, tokens, *args, **kwargs)

    monkeypatch.setattr(LeanDecoder, "forward", spy)
    model = translation_model(TASK, seed=2, eos_bias=-8.0)
    prefix = torch.tensor([[5, 6, 7, 8], [9, 10, 11, 12]])
    got = run_both([model], gen_args(beam=2, max_len_b=6), source_batch(DICT, [3, 4]),
                   prefix_tokens=prefix)
    assert calls[0] == 5  # BOS + 4 forced tokens at step 0 ...
    assert len(calls) == 1 + (6 + 1 - 5)  # ... then one call per remaining step
    assert all(h["tokens"][:4].tolist() == prefix[i].tolist() for i, b in enumerate(got) for h in b)


def test_unsupported_decoder_keeps_stock_path():
    model = translation_model(TASK, seed=1)
    model.decoder.cross_self_attention = True  # a decoder the lean path does not reproduce
    ours = TASK.build_generator([model], gen_args())
    assert type(ours.model).__name__ == "EnsembleModel"


# -- the n-gram blocker ---------------------------------------------------------------------
@settings(max_examples=200, **SETTINGS)
@given(n=st.integers(1, 4), rows=st.lists(st.lists(st.integers(4, 7), min_size=1, max_size=14),
                                          min_size=1, max_size=4))
def test_vectorised_blocker_bans_exactly_the_rule(n, rows):
    """The generators' blocker (the C kernel on CPU), the torch formulation (GPU, no kernel),
    and the kernel in float32: each bans exactly what the rule names."""
    from unittest import mock

    from fairseq_fast.decoding import ngram_blocker
    from fairseq_fast.kernels import small_gemm
    from fairseq_fast.decoding.ngram_blocker import block_last_ngrams

    step = min(len(r) for r in rows) - 1
    tokens = torch.full((len(rows), 20), DICT.pad(), dtype=torch.long)
    for i, r in enumerate(rows):
        tokens[i, : len(r)] = torch.tensor(r)
    lprobs = torch.zeros(len(rows), len(DICT), dtype=torch.float64)
    cut = tokens[:, : step + 1]
    torch_path = ngram_blocker.block_repeated_ngrams(lprobs.clone()[:, None], cut, None, n)[:, 0]
    # on CPU with the kernels built, the kernel answers (the torch formulation is not called)
    no_torch = mock.patch.object(ngram_blocker, "block_repeated_ngrams",
                                 side_effect=AssertionError("torch path taken"))
    with no_torch if small_gemm.available() else mock.MagicMock():
        outs = [VectorisedNGramBlock(n)(tokens, lprobs.clone(), len(rows), 1, step),
                block_last_ngrams(lprobs.float(), cut, n)]
    for out in [torch_path] + outs:
        for i in range(len(rows)):
            banned = {t for t in range(len(DICT)) if out[i, t] == float("-inf")}
            assert banned == reference_banned(tokens[i, : step + 1].tolist(), step, n)


@settings(max_examples=100, **SETTINGS)
@given(n=st.integers(1, 4), seed=st.integers(0, 10 ** 6))
def test_blocker_at_several_positions_per_row(n, seed):
    """The speculative generators' use: m positions per row, each at its own step, over a
    buffer longer than every step (later slots hold other tokens, which must be ignored);
    both ways of comparing (n-1)-grams (packed integers; token by token, taken when
    vocab**(n-1) would overflow int64) give the rule."""
    from fairseq_fast.decoding.ngram_blocker import _suffix_marks, block_repeated_ngrams

    g = torch.Generator().manual_seed(seed)
    rows, length, m, vocab = 3, 12, 3, 8
    tokens = torch.randint(4, vocab, (rows, length), generator=g)
    steps = torch.randint(0, length - m, (rows, 1), generator=g) + torch.arange(m)[None, :]
    out = block_repeated_ngrams(torch.zeros(rows, m, vocab, dtype=torch.float64), tokens, steps, n)
    for b in range(rows):
        for j in range(m):
            step = int(steps[b, j])
            banned = {t for t in range(vocab) if out[b, j, t] == float("-inf")}
            assert banned == reference_banned(tokens[b, : step + 1].tolist(), step, n)
    if n > 1:
        windows = length - n + 1
        marks = [_suffix_marks(tokens, steps, n - 1, windows, v, torch.float64)
                 for v in (vocab, 2 ** 20, 2 ** 62)]  # int32, int64, token by token
        assert torch.equal(marks[0], marks[1]) and torch.equal(marks[0], marks[2])
        # steps=None (one position after the whole buffer, the generators' call) == its step
        last = torch.full((rows, 1), length - 1)
        at_end = [_suffix_marks(tokens, None, n - 1, windows, v, torch.float64)
                  for v in (vocab, 2 ** 20, 2 ** 62)]
        want = _suffix_marks(tokens, last, n - 1, windows, vocab, torch.float64)
        assert all(torch.equal(marks, want) for marks in at_end)


def test_stock_cpu_blocker_is_what_differs():
    """Hand-made: after 'a b c a b' with n = 3, the rule bans 'c'. fairseq's CPU path reads the
    buffer's padded tail instead of the suffix and bans nothing; ours bans exactly 'c'."""
    from fairseq.ngram_repeat_block import NGramRepeatBlock

    a, b, c = 5, 6, 7
    tokens = torch.full((1, 12), DICT.pad(), dtype=torch.long)
    tokens[0, :6] = torch.tensor([DICT.eos(), a, b, c, a, b])
    step = 5
    stock = NGramRepeatBlock(3, use_extension=False)(tokens, torch.zeros(1, 16), 1, 1, step)
    ours = VectorisedNGramBlock(3)(tokens, torch.zeros(1, 16), 1, 1, step)
    assert not torch.isinf(stock).any()
    assert torch.isinf(ours).nonzero()[:, 1].tolist() == [c]
    # with the tail cut off at the step, stock's rule agrees: the bug is the padded tail
    fixed = NGramRepeatBlock(3, use_extension=False)(tokens[:, : step + 1], torch.zeros(1, 16),
                                                    1, 1, step)
    assert torch.isinf(fixed).nonzero()[:, 1].tolist() == [c]


@pytest.mark.parametrize("beam", [1, 5])
def test_generation_with_ngram_blocking_has_no_repeats(beam):
    model = translation_model(TASK, layers=1, eos_bias=-8.0, seed=7)  # long, repetitive outputs
    sample = source_batch(DICT, [4, 6], seed=3)
    got = run_both([model], gen_args(beam=beam, max_len_b=30, no_repeat_ngram_size=2), sample)
    for beams in got:
        toks = beams[0]["tokens"].tolist()
        grams = list(zip(toks, toks[1:]))
        assert len(grams) == len(set(grams))


# -- diverse beam search ----------------------------------------------------------------------
def with_ids(sample, ids):
    return dict(sample, id=torch.tensor(ids))


@pytest.mark.parametrize("ids", [[100, 101, 102, 103, 104, 105],  # a later batch
                                 [7, 3, 250, 12, 0, 5],  # a first batch, sorted by length
                                 [5, 4, 3, 2, 1, 0]])  # 0..bsz-1 in another order
def test_diverse_beam_search_finds_overlaps_by_place(ids):
    """--diverse-beam-groups: fairseq's DiverseBeamSearch reads each sentence's group overlap at
    its dataset id, so a batch of other ids fails or reads other sentences' overlaps. The
    plugin's finds it by place: with any ids a sentence gets the hypotheses stock gives it
    where the ids are 0..bsz-1 in order, also as sentences leave the batch at different steps;
    --no-fast-diverse gives fairseq's search back."""
    from fairseq import search

    from fairseq_fast.generators.fast import PlacedDiverseBeamSearch

    model = translation_model(TASK, eos_bias=1.0, seed=7)
    sample = source_batch(DICT, [3, 5, 7, 2, 6, 4], seed=7)
    args = gen_args(beam=4, diverse_beam_groups=2, diverse_beam_strength=5.0, max_len_b=12)
    ours, stock = build_pair([model], args)
    assert type(ours.search) is PlacedDiverseBeamSearch
    expected = stock.generate([model], sample)  # ids 0..5 in order: stock indexes by place
    assert len({len(beams[0]["tokens"]) for beams in expected}) >= 2  # they end apart
    got = ours.generate([model], with_ids(sample, ids))
    assert_same(expected, got, nbest=4)
    if max(ids) >= len(ids):
        with pytest.raises(IndexError):
            stock.generate([model], with_ids(sample, ids))
    else:  # stock runs, but with another sentence's overlap
        wrong = stock.generate([model], with_ids(sample, ids))
        assert any(w["tokens"].tolist() != e["tokens"].tolist()
                   for w_beams, e_beams in zip(wrong, expected) for w, e in zip(w_beams, e_beams))
    off = TASK.build_generator([model], gen_args(beam=4, diverse_beam_groups=2,
                                                 no_fast_diverse=True))
    assert type(off.search) is search.DiverseBeamSearch
    assert type(TASK.build_generator([model], gen_args(beam=4)).search) is search.BeamSearch


@pytest.mark.parametrize("kw,needle", [
    (dict(beam=0), "--beam must be at least 1 (got 0)"),
    (dict(nbest=0), "--nbest must be at least 1 (got 0)"),
    (dict(beam=4, diverse_beam_groups=3), "--beam 4 is not a multiple of --diverse-beam-groups 3"),
    (dict(sampling_topk=5), "--sampling-topk 5 is an option of sampling"),
])
def test_a_programs_bad_search_options_are_user_errors(kw, needle):
    """build_generator (the hub's translate(**kwargs)) checks what the command line checks:
    fairseq would fail obscurely (--beam 0) or assert."""
    from fairseq_fast.errors import UserError

    with pytest.raises(UserError, match=re.escape(needle)):
        TASK.build_generator([translation_model(TASK, seed=1)], gen_args(**kw))
