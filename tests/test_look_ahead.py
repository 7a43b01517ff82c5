"""The default generator's greedy look-ahead (ensemble.py, beam_search.look_ahead): several greedy
steps in one C call, the search reading their scores afterwards. Its hypotheses, scores,
positional scores and attention are those of the same generator stepping one token at a time
(the path the float64 tests compare with stock), in float32 where the C steps run; a row whose
search chooses another token than the one fed ahead ends the look-ahead and nothing else."""
import dataclasses

import pytest
import torch

import fairseq_fast  # noqa: F401  (applies the overrides)
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
    assert len(want) == len(have)
    for w, h in zip(want, have):
        w, h = w[0], h[0]
        assert h["tokens"].tolist() == w["tokens"].tolist()
        torch.testing.assert_close(h["score"], w["score"], rtol=1e-5, atol=1e-5)
        torch.testing.assert_close(h["positional_scores"], w["positional_scores"], rtol=1e-5,
                                   atol=1e-5)
        if w["attention"] is None or not w["attention"].numel():
            assert h["attention"] is None or not h["attention"].numel()
        else:
            torch.testing.assert_close(h["attention"], w["attention"], rtol=1e-5, atol=1e-6)


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
