"""The function CUDA graphs replay (LeanDecoder.static_forward, cuda_graphs.py), checked on the CPU
in float64: it must compute what LeanDecoder.forward computes, and a generator whose decoders run
it must write stock fairseq's tokens. StepGraphs(capture=False) runs that function eagerly with
the graphs' own inputs, padded encoder K/V and keys; test_cuda.py checks the captured graphs on
a GPU.

The arithmetic differs only where static_forward reads more: keys past a row's length and
padded source positions are masked to probability exactly 0, so the attention sums have the same
terms. fairseq computes the attention softmax in float32 whatever the model's dtype, and torch's
CPU softmax sums a longer row in another order, so here the logits agree to float32 rounding
(~1e-7), not to float64's; CUDA's softmax adds the zeros without reordering (test_cuda.py checks
the bits there).
"""
from types import SimpleNamespace

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from fairseq_fast.decoding import backends, cuda_graphs
from fairseq_fast.decoding.cuda_graphs import StepGraphs, source_bucket
from fairseq_fast.decoding.lean_decoder import LeanDecoder
from model_factory import source_batch, translation_model
from test_fast_defaults import TASK
from test_speculative_equality import (DICT, SETTINGS, compare, generation, model_shapes,
                                       translation_case)

def eager_graphs(monkeypatch):
    """Every decoder backend chosen from now on with the kernels on is the CUDA-graph backend,
    its static functions run eagerly (GraphBackend(capture=False))."""
    choose = backends.choose
    monkeypatch.setattr(backends, "choose", lambda model, lean, kernels: (
        backends.GraphBackend(model, lean, capture=False) if kernels
        else choose(model, lean, kernels)))


def encode(model, lengths, seed):
    sample = source_batch(DICT, lengths, seed=seed)
    return model.encoder.forward_torchscript(sample["net_input"])


def close(a, b):
    assert a.shape == b.shape
    # float32 softmax rounding (see the module's docstring); a wrong slot or mask is >= 1e-3
    assert torch.allclose(a, b, rtol=1e-6, atol=1e-6), (a - b).abs().max()


@pytest.mark.parametrize("shape", [
    dict(layers=2, dim=16, heads=2),
    dict(layers=3, dim=32, heads=4, normalize_before=True, learned_pos=True),
    dict(layers=1, dim=16, heads=1, layernorm_embedding=True, share=True),
])
@pytest.mark.parametrize("lengths,group", [([5], 1), ([3, 7, 1], 1), ([4, 9], 3)])
@torch.no_grad()
def test_static_forward_computes_forward(shape, lengths, group):
    """Prefill, single steps, a verify window and a rollback that leaves the rows at different
    lengths: the same logits, attention and cached K/V through the static function as through
    forward, padded sources and beams sharing a sentence's encoder K/V included."""
    model = translation_model(TASK, seed=len(lengths) + group, **shape)
    enc = encode(model, lengths, seed=group)
    rows = len(lengths) * group
    lean = LeanDecoder(model.decoder, kernels=False)
    graphs = StepGraphs(lean, capture=False)
    plain = lean.init_state(enc, rows, 32, torch.float64, torch.device("cpu"))
    static = lean.init_state(enc, rows, 32, torch.float64, torch.device("cpu"))
    g = torch.Generator().manual_seed(7)
    calls = [3, 1, 1, 5, "rollback", 1, 4, 1]
    for call in calls:
        if call == "rollback":  # row b drops 1 + b % 3 inputs
            for state in (plain, static):
                state.rollback_to(state.lengths - 1 - torch.arange(rows) % 3)
            continue
        tokens = torch.randint(DICT.nspecial, len(DICT), (rows, call), generator=g)
        want, want_attn = lean.forward(plain, tokens, need_attn=True)
        assert graphs.usable(static, tokens)
        got, got_attn = graphs.run(static, tokens, need_attn=True)
        static.lengths = static.lengths + call
        close(got, want)
        close(got_attn, want_attn)
        for b, used in enumerate(plain.lengths.tolist()):
            close(static.self_k[:, b, :, :used], plain.self_k[:, b, :, :used])
            close(static.self_v[:, b, :, :used], plain.self_v[:, b, :, :used])
    # one key per (inputs per row, need_attn): the lengths are not part of it
    assert len(graphs.graphs) == len({c for c in calls if c != "rollback"})


@torch.no_grad()
def test_encoder_buffers_follow_the_batch():
    """A second batch with another source (shorter, unpadded) reuses the padded K/V buffers: the
    new sentence's K/V are copied in and the old tail is masked."""
    model = translation_model(TASK, layers=2, dim=16, heads=2, seed=3)
    lean = LeanDecoder(model.decoder, kernels=False)
    graphs = StepGraphs(lean, capture=False)
    for lengths in ([9], [4], [6]):
        enc = encode(model, lengths, seed=lengths[0])
        plain = lean.init_state(enc, 1, 32, torch.float64, torch.device("cpu"))
        static = lean.init_state(enc, 1, 32, torch.float64, torch.device("cpu"))
        tokens = torch.full((1, 1), DICT.eos())
        for _ in range(4):
            want = lean.forward(plain, tokens)
            got = graphs.run(static, tokens)
            static.lengths = static.lengths + 1
            close(got, want)
            tokens = want[:, -1:].argmax(-1)
    assert len(graphs.cross) == 1 and source_bucket(10) == 16


@pytest.mark.parametrize("length,bucket", [(0, 16), (1, 16), (16, 16), (17, 32), (100, 128)])
def test_source_bucket(length, bucket):
    assert source_bucket(length) == bucket


@settings(max_examples=25, **SETTINGS)
@given(target=model_shapes(False), draft=model_shapes(True), gen=generation,
       lengths=st.lists(st.integers(1, 10), min_size=1, max_size=3),
       prefix_size=st.sampled_from([0, 0, 1, 2]))
@torch.no_grad()
def test_speculative_through_static_calls_equals_stock(target, draft, gen, lengths, prefix_size):
    """Speculative greedy (rows at different lengths too; the draft's whole propose() as one
    static function where it has no stop rule, prefix or n-gram blocking, graph_steps.py):
    stock's tokens, and the static functions did serve the target and the draft."""
    served = []
    replay = StepGraphs.replay

    def counting(self, key, *a, **k):
        served.append((id(self), key[0]))
        return replay(self, key, *a, **k)
    with pytest.MonkeyPatch.context() as patch:
        eager_graphs(patch)
        patch.setattr(StepGraphs, "replay", counting)
        tgt, drf, sample, prefix = translation_case(target, draft, gen, lengths, prefix_size)
        compare(tgt, drf, sample, prefix, gen)
    assert len({runner for runner, _ in served}) == 2  # the target's and the draft's
    whole = prefix is None and gen["ngram"] == 0  # the draft's propose() as one function
    assert ("draft" in {kind for _, kind in served}) == whole


def test_switches(monkeypatch):
    """A CUDA model gets the graph backend; FAIRSEQ_FAST_CUDA_GRAPHS=0 and --no-fast-linear
    (kernels=False) do not, and without a GPU nothing does."""
    model = translation_model(TASK, layers=1, dim=16, heads=2)
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    weight = SimpleNamespace(device=torch.device("cuda", 0), dtype=torch.float32)
    on_gpu = SimpleNamespace(decoder=model.decoder, parameters=lambda: iter([weight]))

    def kind(kernels=True):
        return backends.choose(on_gpu, LeanDecoder(model.decoder, kernels=kernels),
                               kernels).name
    assert kind() == "cuda-graphs"
    assert kind(kernels=False) == "torch"
    monkeypatch.setenv("FAIRSEQ_FAST_CUDA_GRAPHS", "0")
    assert kind() == "torch"
    monkeypatch.setenv("FAIRSEQ_FAST_CUDA_GRAPHS", "1")
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    assert kind() == "torch"
    assert cuda_graphs.enabled()


@torch.no_grad()
def test_weight_change_drops_graphs():
    """A graph reads the weights it was captured on: a new batch after a weight changed in
    place drops every graph."""
    model = translation_model(TASK, layers=1, dim=16, heads=2)
    backend = backends.GraphBackend(model.double(), LeanDecoder(model.decoder),
                                    capture=False)
    graphs = backend.graphs
    enc = encode(model, [4], seed=0)
    state = backend.init_state(enc, 1, 32)
    backend.forward(state, torch.full((1, 1), DICT.eos()))
    backend.init_state(enc, 1, 32)
    assert len(graphs.graphs) == 1  # same weights: kept
    model.decoder.layers[0].fc1.weight.mul_(2)  # in place, as load_state_dict copies
    backend.init_state(enc, 1, 32)
    assert len(graphs.graphs) == 0


@torch.no_grad()
def test_least_recently_used_graph_goes(monkeypatch):
    """At MAX_GRAPHS keys a new one replaces the least recently used, and calls stay exact."""
    monkeypatch.setattr(cuda_graphs, "MAX_GRAPHS", 2)
    model = translation_model(TASK, layers=1, dim=16, heads=2, seed=4)
    lean = LeanDecoder(model.decoder, kernels=False)
    graphs = StepGraphs(lean, capture=False)
    enc = encode(model, [5], seed=2)
    plain = lean.init_state(enc, 1, 32, torch.float64, torch.device("cpu"))
    static = lean.init_state(enc, 1, 32, torch.float64, torch.device("cpu"))
    g = torch.Generator().manual_seed(3)
    for n in (1, 2, 1, 3, 1):
        tokens = torch.randint(DICT.nspecial, len(DICT), (1, n), generator=g)
        close(graphs.run(static, tokens), lean.forward(plain, tokens))
        static.lengths = static.lengths + n
    assert [key[1] for key in graphs.graphs] == [(1, 3), (1, 1)]


@torch.no_grad()
def test_a_graph_drafted_window_ends_at_its_eos(monkeypatch):
    """A graph drafts all k tokens even past EOS; the proposer offers a single row's drafts up to
    its first EOS only, as the step-by-step loop and the C steps do (what is verified and
    counted: alpha, the adaptive window's prices)."""
    from fairseq_fast.generators.speculative import SpeculativeSequenceGenerator

    eager_graphs(monkeypatch)
    target = translation_model(TASK, layers=1, dim=16, heads=2, seed=8)
    draft = translation_model(TASK, layers=1, dim=16, heads=2, seed=9, eos_bias=30.0)
    spec = SpeculativeSequenceGenerator([target], DICT, draft_model=draft, draft_len=4,
                                        max_len_b=6)
    spec.generate([target], source_batch(DICT, [5], seed=1))
    assert any(key[0] == "draft" for key in spec.proposer.backend.graphs.graphs)
    # EOS first, or second where min_len bans it at the first step: not all four a round
    assert spec.stats.proposed <= 2 * spec.stats.row_rounds


@torch.no_grad()
def test_a_draft_graph_serves_every_max_len(monkeypatch):
    """The length limits are a draft graph's inputs, not part of its key: batches whose max_len
    differs (max_len_a with other source lengths) replay the same graphs, and each writes stock's
    tokens for its own max_len."""
    from fairseq_fast.generators.speculative import SpeculativeSequenceGenerator

    eager_graphs(monkeypatch)
    target = translation_model(TASK, layers=1, dim=16, heads=2, seed=3)
    draft = translation_model(TASK, layers=1, dim=16, heads=2, seed=4)
    spec = SpeculativeSequenceGenerator([target], DICT, draft_model=draft, draft_len=3)
    sample = source_batch(DICT, [6], seed=2)
    for max_len_b in (40, 39, 3):  # each binds (this model never ends a sentence sooner)
        spec.max_len_b = max_len_b
        got = spec.generate([target], sample)[0][0]["tokens"]
        assert torch.equal(got, stock_greedy(target, sample, max_len_b=max_len_b))
        assert len(got) == max_len_b + 1
    drafts = [key for key in spec.proposer.backend.graphs.graphs if key[0] == "draft"]
    # no two graphs differ in their edits alone (the cache grows within the first sentence:
    # that is a new buffer, so a new key)
    assert drafts and len(drafts) == len({key[:3] + key[4:] for key in drafts})


def stock_greedy(model, sample, **options):
    """fairseq's own greedy hypothesis of the batch's first sentence"""
    from fairseq.sequence_generator import SequenceGenerator

    gen = SequenceGenerator([model], DICT, beam_size=1, **options)
    return gen.generate([model], sample)[0][0]["tokens"]
