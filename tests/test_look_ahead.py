"""The default generator's greedy look-ahead (ensemble.py, beam_search.look_ahead): several greedy
steps in one C call, the search reading their scores afterwards, a call's steps in one block
(beam_search.greedy_block). Its hypotheses, scores, positional scores and attention are those of
the same generator stepping one token at a time (the path the float64 tests compare with stock),
to the bit, in float32 where the C steps run; a row whose search chooses another token than the
one fed ahead ends the look-ahead and nothing else."""
import dataclasses
import math

import pytest
import torch

import fairseq_fast  # noqa: F401  (applies the overrides)
from fairseq_fast.decoding import ensemble
from fairseq_fast.decoding.ensemble import FastEnsembleModel
from fairseq_fast.generators import beam_search
from fairseq_fast.kernels import small_gemm
from fairseq_fast.decoding.greedy_steps import GreedySteps
from model_factory import (language_model, make_dictionary, prompt_batch, source_batch,
                           translation_model)
from test_fast_defaults import Task, gen_args

pytestmark = pytest.mark.skipif(not small_gemm.available(), reason="kernels not buildable here")
DICT = make_dictionary(40)
TASK = Task(DICT)


def _model(normalize_before=False, seed=0):
    return translation_model(TASK, layers=2, dim=32, heads=4, ffn=64, eos_bias=12.0,
                             normalize_before=normalize_before, seed=seed,
                             dtype=torch.float32).eval()


def _generate(model, sample, monkeypatch, look_ahead=True, **options):
    """The default generator's hypotheses, and the look-ahead calls' step counts."""
    generator = TASK.build_generator([model], gen_args(**{"beam": 1, "max_len_b": 14,
                                                          **options}))
    calls = []
    real = GreedySteps.run_scored

    def counted(self, *args, **kwargs):
        out = real(self, *args, **kwargs)
        calls.append(out[0].size(1))
        return out
    monkeypatch.setattr(GreedySteps, "run_scored", counted)
    if not look_ahead:
        monkeypatch.setattr(beam_search, "look_ahead", lambda gen, max_len: None)
    try:
        with torch.no_grad():
            return generator.generate([model], sample), calls
    finally:
        monkeypatch.undo()


def _assert_same(want, have):
    """The same hypotheses to the bit: one step at a time and the look-ahead's calls run the
    same whole-decoder C code."""
    assert len(want) == len(have)
    for w, h in zip(want, have):
        w, h = w[0], h[0]
        assert h["tokens"].tolist() == w["tokens"].tolist()
        assert torch.equal(h["score"], w["score"])
        assert torch.equal(h["positional_scores"], w["positional_scores"])
        if w["attention"] is None or not w["attention"].numel():
            assert h["attention"] is None or not h["attention"].numel()
        else:
            assert torch.equal(h["attention"], w["attention"])


@pytest.mark.parametrize("lengths", [[7], [5, 9, 3]])
@pytest.mark.parametrize("normalize_before", [False, True])
@pytest.mark.parametrize("options", [{}, {"min_len": 4, "unkpen": 0.5}, {"max_len_b": 3}])
def test_look_ahead_gives_what_one_step_at_a_time_gives(lengths, normalize_before, options,
                                                        monkeypatch):
    model = _model(normalize_before, seed=len(lengths))
    sample = source_batch(DICT, lengths, seed=3)
    want, none = _generate(model, sample, monkeypatch, look_ahead=False, **options)
    have, calls = _generate(model, sample, monkeypatch, **options)
    assert none == [] and calls and max(calls) > 1  # several steps per call were taken
    _assert_same(want, have)


def test_language_model_look_ahead(monkeypatch):
    """No encoder: the C steps without cross attention, no attention kept."""
    model = language_model(TASK, layers=2, dim=32, heads=4, ffn=64, eos_bias=12.0, seed=4,
                           dtype=torch.float32).eval()
    sample, prefix = prompt_batch(DICT, [0, 0, 0], seed=2)
    assert prefix is None
    want, _ = _generate(model, sample, monkeypatch, look_ahead=False)
    have, calls = _generate(model, sample, monkeypatch)
    assert calls and max(calls) > 1
    _assert_same(want, have)


def test_rows_that_choose_otherwise_end_the_look_ahead(monkeypatch):
    """C steps fed with other tokens than the search chooses (their rules never feed unk, which
    this model's search often chooses): look-aheads end early, the output is unchanged."""
    model = _model(seed=5)
    sample = source_batch(DICT, [6, 8], seed=4)
    want, _ = _generate(model, sample, monkeypatch, look_ahead=False)
    _, plain = _generate(model, sample, monkeypatch)
    assert any(DICT.unk() in h[0]["tokens"].tolist() for h in want)
    real = beam_search.look_ahead

    def misled(gen, max_len):
        ahead = real(gen, max_len)
        return dataclasses.replace(ahead, rules=dataclasses.replace(ahead.rules,
                                                                    unk_penalty=1e4))

    monkeypatch.setattr(beam_search, "look_ahead", misled)
    have, calls = _generate(model, sample, monkeypatch)
    assert len(calls) > len(plain)
    _assert_same(want, have)


@pytest.mark.parametrize("options,lengths", [
    ({"beam": 4}, [5, 7]),
    ({"no_repeat_ngram_size": 2}, [5, 7]),
    ({"temperature": 0.7}, [5, 7]),
    ({}, list(range(3, 12))),  # 9 rows: a step with more rows is no longer bound by its weights
])
def test_where_there_is_no_look_ahead(options, lengths, monkeypatch):
    model = _model(seed=2)
    _, calls = _generate(model, source_batch(DICT, lengths, seed=1), monkeypatch, **options)
    assert calls == []


@pytest.mark.parametrize("rows,origins", [(3, False), (9, True)])
def test_batches_too_large_to_look_ahead_keep_beam_search_state(rows, origins):
    """A greedy batch that cannot look ahead keeps the state beam search uses on CPU (rows that
    leave move no K/V: `origin`); one that can reads its rows in place."""
    model = _model(seed=2)
    generator = TASK.build_generator([model], gen_args(beam=1, max_len_b=14))
    with torch.no_grad():
        generator.generate([model], source_batch(DICT, list(range(3, 3 + rows)), seed=1))
    assert (generator.model._last[0].origin is not None) == origins


def test_blocks_give_what_reading_the_look_ahead_one_step_at_a_time_gives(monkeypatch):
    """The search's blocks against the same look-ahead scores read one step at a time: the
    same tokens, and the same scores, positional scores and attention to the bit."""
    model = _model(seed=5)
    sample = source_batch(DICT, [5, 9, 3, 7], seed=6)
    options = {"unkpen": 0.5, "min_len": 2, "max_len_b": 40}  # rows end at 3 steps, one at 40
    blocks = []
    real_block = beam_search.greedy_block

    def counted(*args):
        block = real_block(*args)
        blocks.append(block.taken)
        return block
    monkeypatch.setattr(beam_search, "greedy_block", counted)
    have, _ = _generate(model, sample, monkeypatch, **options)
    assert len(blocks) >= 3 and max(blocks) > 8
    assert len({len(h[0]["tokens"]) for h in have}) >= 3
    real = FastEnsembleModel.forward_decoder_ahead

    def one_step(self, *args, **kwargs):
        lprobs, attn, _ = real(self, *args, **kwargs)
        return lprobs[:, :1], None if attn is None else attn[:, :1], None
    monkeypatch.setattr(FastEnsembleModel, "forward_decoder_ahead", one_step)
    want, calls = _generate(model, sample, monkeypatch, **options)
    assert calls and max(calls) > 2  # the same look-ahead, read one step at a time
    for w, h in zip(want, have):
        w, h = w[0], h[0]
        assert h["tokens"].tolist() == w["tokens"].tolist()
        for key in ("score", "positional_scores", "attention"):
            assert torch.equal(h[key], w[key]), key


def _step_by_step(lprobs, prev, unk_penalty):
    """Each row's choices and running scores, one step at a time as the step loop makes them
    (beam_search.candidates), every step read whatever the row chose before."""
    rows, n, _ = lprobs.shape
    chosen = torch.empty(rows, n, dtype=torch.long)
    running = torch.empty(rows, n)
    for j in range(n):
        scores, _, tokens = beam_search.candidates(
            lprobs[:, j].clone(), prev, rows, 1, DICT.pad(), DICT.unk(), unk_penalty, DICT.eos(),
            beam_search.NO_RULE)
        chosen[:, j], running[:, j] = tokens[:, 0], scores[:, 0]
        prev = scores[:, 0]
    return chosen, running


def _block_case(rows=3, n=6, seed=0):
    g = torch.Generator().manual_seed(seed)
    lprobs = torch.randn(rows, n, len(DICT), generator=g).log_softmax(-1)
    lprobs[:, :, DICT.eos()] = -30.0  # no EOS unless a case puts one
    return lprobs, -torch.rand(rows, generator=g)


@pytest.mark.parametrize("case", ["all follow", "one row chose otherwise", "a row chose EOS",
                                  "a row scored -inf", "unk with a penalty", "NaN scores"])
def test_a_greedy_block_is_the_steps_one_at_a_time(case):
    """greedy_block against the rule applied step by step: every row's choices and running
    scores to the bit over the steps it takes; a row that chose otherwise than the token fed
    ahead holds through that step only; a row choosing EOS ends there; a row whose running score
    is -inf goes on (stock goes on with it)."""
    lprobs, prev = _block_case(seed=len(case))
    penalty = 0.0
    if case == "a row chose EOS":
        lprobs[1, 2, DICT.eos()] = 5.0
    if case == "a row scored -inf":
        prev[1] = -math.inf
    if case == "unk with a penalty":
        penalty = 0.25
        lprobs[0, 1:4, DICT.unk()] = 5.0
    if case == "NaN scores":
        lprobs[2, 3] = math.nan
    chosen, running = _step_by_step(lprobs, prev.clone(), penalty)
    fed = torch.cat([torch.full((3, 1), 7), chosen[:, :-1]], dim=1)
    if case == "one row chose otherwise":
        fed[2, 4] = int(chosen[2, 3]) % (len(DICT) - 4) + 4 + (chosen[2, 3] == 4)
    block = beam_search.greedy_block(lprobs.clone(), fed, prev, DICT.pad(), DICT.unk(), penalty,
                                     DICT.eos())
    taken = {"one row chose otherwise": 4}.get(case, 6)
    assert block.taken == taken
    assert torch.equal(block.tokens[:, :taken], chosen[:, :taken])
    assert torch.equal(block.running[:, :taken], running[:, :taken])
    ends = [6, 2, 6] if case == "a row chose EOS" else [6, 6, 6]
    assert block.ends.tolist() == ends


def test_a_row_that_chose_eos_is_not_computed_for_the_rest_of_the_call(monkeypatch):
    """After a row has chosen EOS, the C call computes the other rows alone (the row's later
    drafts are EOS, its scores and attention zeros), and they compute what they would beside it:
    calls of 16 steps (long runs without the rows that ended) give, to the bit, what calls of 2
    steps give, and what the lone step at the length limit gives as a step of its own."""
    model = _model(seed=5)
    sample = source_batch(DICT, [6, 6, 6, 6, 6], seed=7)

    def generate(steps):
        seen = []
        real = GreedySteps.run_scored

        def kept(self, *args, **kwargs):
            out = real(self, *args, **kwargs)
            seen.append(tuple(t.clone() for t in out))
            return out
        monkeypatch.setattr(GreedySteps, "run_scored", kept)
        monkeypatch.setattr(ensemble, "steps_per_call", lambda rows: steps)
        generator = TASK.build_generator([model], gen_args(beam=1, max_len_b=14))
        try:
            with torch.no_grad():
                return generator.generate([model], sample), seen
        finally:
            monkeypatch.undo()

    want, _ = generate(2)
    have, seen = generate(16)
    skipped = 0
    for drafts, scores, attention in seen:
        for row in range(drafts.size(0)):
            eos = (drafts[row] == DICT.eos()).nonzero()
            if eos.numel() and int(eos[0]) < drafts.size(1) - 1:
                after = int(eos[0]) + 1
                assert (drafts[row, after:] == DICT.eos()).all()
                assert not scores[row, after:].any() and not attention[row, after:].any()
                skipped += drafts.size(1) - after
    assert skipped >= 4  # rows ended within calls while others went on
    lengths = {h[0]["tokens"].numel() for h in have}
    assert len(lengths) >= 3
    for w, h in zip(want, have):
        for key in ("tokens", "score", "positional_scores", "attention"):
            assert torch.equal(h[0][key], w[0][key]), key
