"""Every decoder backend (backends.py) computes the torch reference's function: the same logits
(to float32 rounding) and the same cache lengths for every way generators drive a decoder
(prefill, ragged verify windows, rollback, rows leaving, beams sharing a sentence's encoder K/V,
language models), the same greedy steps where it has them, and generators on it write the
reference's tokens. The reference is TorchBackend on a LeanDecoder without the plugin's kernels,
whose float64 path the exactness tests compare with stock fairseq.

The CUDA-graph backend runs here with its static functions eager (capture=False): the arithmetic
a graph records; test_cuda.py checks the captured graphs on a GPU."""
import pytest
import torch
from fairseq.modules import gelu_accurate

from fairseq_fast.decoding import backends
from fairseq_fast.decoding.backends import (FusedBackend, GraphBackend, TorchBackend, choose,
                                            decoder_backend)
from fairseq_fast.decoding.lean_decoder import LeanDecoder
from fairseq_fast.decoding.step_rules import StepRules, edit_scores
from fairseq_fast.generators.fast import FastSequenceGenerator
from fairseq_fast.generators.speculative import SpeculativeSequenceGenerator
from fairseq_fast.kernels import loader, small_gemm
from model_factory import DummyTask, language_model, make_dictionary, source_batch, translation_model

DICT = make_dictionary(40)
TASK = DummyTask(DICT, DICT)
needs_kernels = pytest.mark.skipif(
    not small_gemm.available() or loader.function("gd_greedy_f32") is None,
    reason="no C kernels here")


def _c(model):
    backend = choose(model, LeanDecoder(model.decoder), True)
    assert isinstance(backend, FusedBackend)
    return backend


def _c_layers(model):
    """The C backend with its whole-decoder call off: each layer one C call."""
    backend = _c(model)
    assert isinstance(backend, FusedBackend)
    backend.whole = None
    return backend


# name -> (builder, needs the C kernels)
BACKENDS = {
    "torch-kernel-ops": (lambda m: TorchBackend(m, LeanDecoder(m.decoder)), False),
    "c": (_c, True),
    "c-layers": (_c_layers, True),
    "cuda-graphs": (lambda m: GraphBackend(m, LeanDecoder(m.decoder), capture=False), False),
}


def reference(model):
    return TorchBackend(model, LeanDecoder(model.decoder, kernels=False))


def build(name, model):
    make, kernels = BACKENDS[name]
    if kernels and not small_gemm.available():
        pytest.skip("no C kernels here")
    return make(model)


def _drive(backend, encoder_out, rows, group=1):
    """Prefill 4 inputs; roll rows back to different lengths; a ragged verify window (row b
    reads its first counts[b] inputs); a step; rows leave (the last sentence's, then the
    first's beams, in that order); a step. Returns [(logits [B, n, V], inputs per row [B])]
    of every call and the final lengths."""
    state = backend.init_state(encoder_out, rows, 8)  # grows to 16
    tokens = torch.randint(4, len(DICT), (rows, 12), generator=torch.Generator().manual_seed(rows))
    every = torch.full((rows,), 4)
    out = [(backend.forward(state, tokens[:, :4]), every)]
    start = torch.arange(rows) % 3 + 1
    backend.rollback(state, start)
    counts = torch.arange(rows) % 3 + 1
    out.append((backend.forward(state, tokens[:, 4:7], counts=counts), counts))
    assert torch.equal(state.lengths, start + counts)
    out.append((backend.forward(state, tokens[:, 7:8]), torch.ones(rows, dtype=torch.long)))
    beams = torch.arange(group)
    kept = torch.cat([rows - group + beams, beams])
    state.select_rows(kept)
    out.append((backend.forward(state, tokens[kept, 8:10]), torch.full((2 * group,), 2)))
    return out, state.lengths


def _same(got, want):
    (got_calls, got_lengths), (want_calls, want_lengths) = got, want
    assert torch.equal(got_lengths, want_lengths)
    for (have, counts), (expected, _) in zip(got_calls, want_calls):
        assert have.shape == expected.shape
        for b, n in enumerate(counts.tolist()):  # each row's own inputs (fillers unspecified)
            a, e = have[b, :n], expected[b, :n]
            assert float((a - e).abs().max() / e.abs().max().clamp(min=1.0)) < 1e-5


@pytest.mark.parametrize("name", list(BACKENDS))
@pytest.mark.parametrize("normalize_before", [False, True])
@pytest.mark.parametrize("group", [1, 3])
@torch.no_grad()
def test_translation_calls_match_the_torch_reference(name, normalize_before, group):
    """Sources of different lengths (padding), `group` rows (beams) per sentence."""
    model = translation_model(TASK, layers=2, dim=32, heads=4, ffn=64,
                              normalize_before=normalize_before, seed=group, dtype=torch.float32)
    sample = source_batch(DICT, [7, 3, 9], seed=group)
    encoder_out = model.encoder.forward_torchscript(sample["net_input"])
    want = _drive(reference(model), encoder_out, 3 * group, group)
    _same(_drive(build(name, model), encoder_out, 3 * group, group), want)


@pytest.mark.parametrize("name", list(BACKENDS))
@torch.no_grad()
def test_language_model_calls_match_the_torch_reference(name):
    model = language_model(TASK, layers=2, dim=32, heads=4, ffn=64, dtype=torch.float32)
    want = _drive(reference(model), None, 3)
    _same(_drive(build(name, model), None, 3), want)


@pytest.mark.parametrize("name", list(BACKENDS))
@torch.no_grad()
def test_encoder_attention_matches_the_torch_reference(name):
    """need_attn (fairseq's generator asks for the last layer's encoder attention)."""
    model = translation_model(TASK, layers=2, dim=32, heads=4, ffn=64, seed=3,
                              dtype=torch.float32)
    encoder_out = model.encoder.forward_torchscript(source_batch(DICT, [6, 2], seed=1)["net_input"])
    tokens = torch.randint(4, len(DICT), (2, 3), generator=torch.Generator().manual_seed(0))
    results = []
    for backend in (reference(model), build(name, model)):
        state = backend.init_state(encoder_out, 2, 8)
        results.append(backend.forward(state, tokens, need_attn=True))
    (logits, attn), (want_logits, want_attn) = results[1], results[0]
    assert torch.allclose(logits, want_logits, atol=1e-5)
    assert torch.allclose(attn, want_attn, atol=1e-6)


def _reference_steps(backend, state, feed, first, k, rules):
    """k greedy steps through forward and stock's edits in Python: the drafts [B, k]."""
    drafts, x = [], feed
    for j in range(k):
        logits = backend.forward(state, x)[:, -1]
        lprobs = backend.model.get_normalized_probs((logits, None), log_probs=True)
        step = first + j
        edit_scores(lprobs, rules.pad, rules.unk, rules.unk_penalty, rules.eos,
                    only_eos=step >= rules.max_len, no_eos=step < rules.min_len)
        drafts.append(lprobs.argmax(-1))
        x = drafts[-1][:, None]
    return torch.stack(drafts, dim=1)


@pytest.mark.parametrize("name", ["c", "cuda-graphs"])
@torch.no_grad()
def test_greedy_steps_match_steps_through_forward(name):
    """A backend's greedy steps in one call propose what k steps through the reference's
    forward and stock's edits choose, up to each row's first EOS (min_len and max_len bind)."""
    model = translation_model(TASK, layers=2, dim=32, heads=4, ffn=64, seed=5,
                              eos_bias=-1.0, dtype=torch.float32)
    encoder_out = model.encoder.forward_torchscript(source_batch(DICT, [5, 8, 3])["net_input"])
    rules = StepRules(pad=DICT.pad(), unk=DICT.unk(), eos=DICT.eos(), min_len=3, max_len=6,
                      unk_penalty=0.5)
    prefix = torch.randint(4, len(DICT), (3, 2), generator=torch.Generator().manual_seed(2))
    k = 6
    runs = []
    for backend in (reference(model), build(name, model)):
        state = backend.init_state(encoder_out, 3, 8)
        backend.forward(state, prefix[:, :1])
        first = torch.full((3,), 1)
        if backend.greedy_steps is None:
            runs.append(_reference_steps(backend, state, prefix[:, 1:], first, k, rules))
        else:
            assert backend.greedy_steps.usable(state, 3)
            runs.append(backend.greedy_steps.run(state, prefix[:, 1:], torch.ones(3,
                                                 dtype=torch.long), first, k, rules))
    want, got = runs
    assert (want == DICT.eos()).any()  # the edits decided something
    for b in range(3):
        ends = (want[b] == DICT.eos()).nonzero()
        n = int(ends[0]) + 1 if ends.numel() else k
        assert got[b, :n].tolist() == want[b, :n].tolist()


@pytest.mark.parametrize("name", list(BACKENDS))
@torch.no_grad()
def test_generators_on_every_backend_write_the_references_tokens(name, monkeypatch):
    """The default generator (greedy with its look-ahead, beam 4) and speculative greedy,
    float32, each with every model on this backend, against the same generators with every
    model on the torch reference."""
    build(name, GENERATED[0])  # skips where the backend cannot run here
    want = _generated(reference)
    assert any(len(tokens) > 3 for sentence in want for tokens in sentence)  # not all EOS
    assert _generated(BACKENDS[name][0]) == want


GENERATED = (translation_model(TASK, layers=2, dim=32, heads=4, ffn=64, seed=7, eos_bias=-2.0,
                               dtype=torch.float32),
             translation_model(TASK, layers=1, dim=16, heads=2, ffn=32, seed=8,
                               dtype=torch.float32),
             source_batch(DICT, [6, 9, 4], seed=3))
_REFERENCE_RUNS = {}


def _generated(make):
    """The tokens of every hypothesis of the default generator (beam 1 and 4) and of
    speculative greedy, with every decoder backend made by `make` (the reference's once)."""
    if make is reference and _REFERENCE_RUNS:
        return _REFERENCE_RUNS["tokens"]
    model, draft, sample = GENERATED
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(backends, "choose", lambda m, lean, kernels: make(m))
        got = [FastSequenceGenerator([model], DICT, beam_size=beam, max_len_b=16).generate(
                   [model], sample) for beam in (1, 4)]
        spec = SpeculativeSequenceGenerator([model], DICT, draft_model=draft, draft_len=3,
                                            max_len_b=16)
        got.append(spec.generate([model], sample))
    tokens = [[h["tokens"].tolist() for h in sentence] for run in got for sentence in run]
    if make is reference:
        _REFERENCE_RUNS["tokens"] = tokens
    return tokens


def test_the_backend_is_chosen_from_the_model_and_the_switch():
    """float32 on the CPU with plain layers: C; float64, --no-fast-linear, a layer the C code
    lacks: torch (a GPU model: test_cuda_graphs.py::test_switches)."""
    model = translation_model(TASK, layers=2, dim=32, heads=4, ffn=64, dtype=torch.float32)
    assert decoder_backend(model).name == ("c" if small_gemm.available() else "torch")
    assert decoder_backend(model, kernels=False).name == "torch"
    tanh = translation_model(TASK, layers=2, dim=32, heads=4, ffn=64, dtype=torch.float32)
    tanh.decoder.layers[1].activation_fn = gelu_accurate  # GELU's tanh approximation
    assert decoder_backend(tanh).name == "torch"
    assert choose(model.double(), LeanDecoder(model.decoder), True).name == "torch"
