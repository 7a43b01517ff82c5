"""A draft whose encoder is the target's (fairseq-fast-draft's drafts): shared_encoder.same_encoder
tells it from other drafts, and the speculative loop then runs the encoder once, for both models,
with output still stock greedy's (float64)."""
import copy
from unittest import mock

import pytest
import torch

from fairseq_fast.generators.bild import BiLDSequenceGenerator
from fairseq_fast.generators.speculative import SpeculativeSequenceGenerator
from fairseq_fast.speculative.shared_encoder import same_encoder
from model_factory import DummyTask, make_dictionary, source_batch, translation_model
from test_speculative_equality import compare

DICT = make_dictionary(16)
TASK = DummyTask(DICT, DICT)


def pair():
    """A target and a draft with the target's encoder (weights copied) and a decoder of its own."""
    target = translation_model(TASK, layers=3, enc_layers=2, seed=1)
    draft = translation_model(TASK, layers=1, enc_layers=2, seed=2)
    draft.encoder.load_state_dict(target.encoder.state_dict())
    return target, draft


def test_a_draft_with_the_targets_encoder_shares_it():
    target, draft = pair()
    assert same_encoder(target, draft)
    assert same_encoder(target, target)


def test_float16_rounding_of_the_drafts_copy_still_shares():
    target, draft = pair()
    with torch.no_grad():
        for p in draft.encoder.parameters():
            p.copy_(p.half().double())
    assert same_encoder(target, draft)


def test_dropout_rates_do_not_count():
    target, draft = pair()
    for module in draft.encoder.modules():
        if hasattr(module, "p") and hasattr(module, "apply_during_inference"):
            module.p = 0.3
    assert same_encoder(target, draft)


def test_one_different_weight_is_another_encoder():
    target, draft = pair()
    with torch.no_grad():
        next(draft.encoder.layers[1].parameters()).view(-1)[0] += 1e-3
    assert not same_encoder(target, draft)


@pytest.mark.parametrize("change", ["normalize_before", "activation_fn", "embed_scale"])
def test_the_same_weights_used_otherwise_are_another_encoder(change):
    from fairseq import utils

    target, draft = pair()
    if change == "normalize_before":  # pre-norm: the same weights, another order
        draft.encoder.layers[0].normalize_before = True
    elif change == "activation_fn":
        draft.encoder.layers[1].activation_fn = utils.get_activation_fn("gelu")
    else:
        draft.encoder.embed_scale = 1.0
    assert not same_encoder(target, draft)


def test_an_encoder_of_another_shape_or_none_is_not_shared():
    target, _ = pair()
    other = translation_model(TASK, layers=1, enc_layers=1, seed=2)
    assert not same_encoder(target, other)
    bare = copy.deepcopy(other)
    bare.encoder = None
    assert not same_encoder(target, bare)


@pytest.mark.parametrize("draft_len", [1, 4])
def test_speculative_output_with_a_shared_encoder_is_stock_greedy(draft_len):
    target, draft = pair()
    cls = type(draft.encoder)
    calls = []
    original = cls.forward

    def counted(self, *args, **kwargs):
        calls.append(self)
        return original(self, *args, **kwargs)

    gen = {"draft_len": draft_len, "adaptive": False, "max_len_b": 12, "min_len": 1,
           "unk_penalty": 0.0, "ngram": 0}
    sample = source_batch(DICT, [3, 7, 5, 9], seed=3)
    with mock.patch.object(cls, "forward", counted):
        stats = compare(target, draft, sample, None, gen)
        assert stats.accepted > 0
        assert target.encoder in calls and draft.encoder not in calls  # the draft's never ran
        built = SpeculativeSequenceGenerator([target], DICT, draft_model=draft)
        assert built.proposer.shared_encoder and built.proposer.encoder is None
        mine = SpeculativeSequenceGenerator([target], DICT, draft_model=draft,
                                            shared_encoder=False)
        mine.generate([target], sample)
        assert draft.encoder in calls  # told not to share, the draft runs its own


def test_bild_shares_the_encoder_too():
    target, draft = pair()
    bild = BiLDSequenceGenerator([target], DICT, small_model=draft, rollback_threshold=0.0)
    assert bild.proposer.shared_encoder
    sample = source_batch(DICT, [4, 6], seed=5)
    plain = SpeculativeSequenceGenerator([target], DICT, draft_model=draft)
    for want, got in zip(plain.generate([target], sample), bild.generate([target], sample)):
        assert torch.equal(want[0]["tokens"], got[0]["tokens"])  # rollback 0: the large model's
