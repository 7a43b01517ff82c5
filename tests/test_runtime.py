"""ModelRuntime (runtime.py): one per model, shared by every generator on it, gone with it."""
import gc
import weakref

import torch

from fairseq_fast import runtime
from fairseq_fast.kernels import packed_linear
from fairseq_fast.runtime import ModelRuntime
from fairseq_fast.speculative import self_draft
from model_factory import DummyTask, make_dictionary, translation_model

DICT = make_dictionary(30)


def test_one_runtime_per_model_holding_what_generators_share():
    model = translation_model(DummyTask(DICT, DICT), layers=2, dtype=torch.float32)
    other = translation_model(DummyTask(DICT, DICT), layers=2, dtype=torch.float32)
    assert ModelRuntime.of(model) is ModelRuntime.of(model)
    assert ModelRuntime.of(model) is not ModelRuntime.of(other)
    linear = packed_linear.of(model.decoder)
    assert packed_linear.of(model.decoder) is linear
    assert packed_linear.of(model.decoder, kernels=False) is not linear
    assert ModelRuntime.of(model.decoder).packed == {True: linear, False:
                                                     packed_linear.of(model.decoder, False)}
    view = self_draft.early_layers(model, 1)  # its decoder packs into the target decoder's
    assert self_draft.early_layers(model, 1) is view
    assert packed_linear.of(view.decoder) is linear
    assert ModelRuntime.of(model).layer_views == {1: view}


def test_the_runtime_goes_with_its_model():
    model = translation_model(DummyTask(DICT, DICT), layers=2, dtype=torch.float32)
    packed_linear.of(model.decoder)
    self_draft.same_dictionary(model, DICT)
    gone = weakref.ref(ModelRuntime.of(model))
    before = len(runtime._RUNTIMES)
    del model
    gc.collect()
    assert gone() is None and len(runtime._RUNTIMES) < before
