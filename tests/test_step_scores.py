"""A decoding step's scores in the default generator (ensemble.py): each single step's logits are
written where the last step's log-probs were, and log_softmax runs in place where the model's
get_normalized_probs is fairseq's plain one. Neither may change a bit of the output: float32
models on the C path, compared with the same generator with both switched off."""
import pytest
import torch

import fairseq_fast  # noqa: F401  (applies the overrides)
from fairseq_fast.decoding import ensemble
from fairseq_fast.decoding.ensemble import FastEnsembleModel
from fairseq_fast.decoding.fused_decoder import FusedDecoder
from fairseq_fast.decoding.model_gate import plain_log_softmax
from fairseq_fast.kernels import small_gemm
from model_factory import language_model, make_dictionary, source_batch, translation_model
from test_fast_defaults import Task, gen_args

# an output projection of 400 x 64: large enough for the small-matrix kernel's route
DICT = make_dictionary(400)
TASK = Task(DICT)


def _model(eos_bias=1.0):
    return translation_model(TASK, dim=64, heads=4, ffn=128, eos_bias=eos_bias, seed=3,
                             dtype=torch.float32)


def _generate(model, args, sample, seed=0):
    generator = TASK.build_generator([model], args)
    assert isinstance(generator.model, FastEnsembleModel)
    torch.manual_seed(seed)
    return generator.generate([model], sample), generator.model


def _same(a, b):
    for want_beams, have_beams in zip(a, b):
        assert len(want_beams) == len(have_beams)
        for want, have in zip(want_beams, have_beams):
            assert torch.equal(have["tokens"], want["tokens"])
            assert torch.equal(have["score"], want["score"])
            assert torch.equal(have["positional_scores"], want["positional_scores"])


@pytest.mark.parametrize("options,lengths", [
    (dict(beam=4), [3, 7, 5, 2]),
    (dict(beam=1), [3, 7, 5, 2, 6, 4, 8, 1, 3, 5]),  # more rows than greedy look-ahead takes
    (dict(beam=2, sampling=True, sampling_topk=20), [3, 7, 5, 2]),
    (dict(beam=3, diverse_beam_groups=3), [3, 7, 5, 2])])
def test_reused_step_scores_change_no_bit(monkeypatch, options, lengths):
    """Sentences leave at different steps (rows shrink: the buffer's first rows are used);
    plain beam search, greedy, sampling and diverse beam search (fairseq's loop) alike."""
    model = _model()
    sample = source_batch(DICT, lengths, seed=4)
    args = gen_args(max_len_b=12, **options)
    written = []
    real, real_whole = small_gemm.linear, FusedDecoder.forward

    def spy(x, packed, bias=None, residual=None, relu=False, out=None):
        y = real(x, packed, bias, residual, relu, out)
        if out is not None:
            written.append(y.data_ptr() == out.data_ptr())
        return y

    def spy_whole(self, state, tokens, total, counts=None, probs=None, out=None):
        y = real_whole(self, state, tokens, total, counts, probs, out)
        if out is not None:
            written.append(y.data_ptr() == out.data_ptr())
        return y

    monkeypatch.setattr(small_gemm, "linear", spy)  # the layers' path
    monkeypatch.setattr(FusedDecoder, "forward", spy_whole)  # the whole-decoder call's
    got, ours = _generate(model, args, sample, seed=5)
    assert written and all(written)  # the steps' logits went into the last step's buffer
    # which keeps the size of the batch's first step, for the next batch
    assert ours._step_scores.numel() == len(lengths) * args.beam * len(DICT)
    monkeypatch.setattr(FastEnsembleModel, "_step_out", lambda self, feed: None)
    monkeypatch.setattr(ensemble, "plain_log_softmax", lambda m: False)
    written.clear()
    expected, _ = _generate(model, args, sample, seed=5)
    assert not written
    _same(expected, got)


def test_in_place_log_softmax_is_fairseqs():
    logits = torch.randn(7, 3, 50_000) * 4
    want = language_model(TASK, dtype=torch.float32).get_normalized_probs(
        (logits, None), log_probs=True, sample=None)
    got = logits.clone()
    torch.log_softmax(got, dim=-1, out=got)
    assert want.dtype == torch.float32 and torch.equal(got, want)


def test_only_fairseqs_plain_normaliser_is_taken_in_place():
    assert plain_log_softmax(_model()) and plain_log_softmax(language_model(TASK))

    class Calibrated(type(_model())):
        def get_normalized_probs(self, net_output, log_probs, sample=None):
            return super().get_normalized_probs(net_output, log_probs, sample) * 0.5

    model = _model()
    model.__class__ = Calibrated
    assert not plain_log_softmax(model)
    model = _model()
    model.decoder.get_normalized_probs = lambda *a, **k: None
    assert not plain_log_softmax(model)
    model = _model()
    model.decoder.adaptive_softmax = torch.nn.Identity()
    assert not plain_log_softmax(model)
