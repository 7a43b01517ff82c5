"""fused_layer.py (csrc/decoder_layer.c): a whole decoder layer step in one C call agrees with
the lean decoder's Python path (the reference, which the float64 tests compare with stock) to
float32 rounding, for every way the decoders are driven (verify windows, ragged rows, beams
sharing encoder K/V, source padding, language models, pre- and post-norm, ReLU and GELU), is
taken exactly where it should be, and follows weight changes."""
import pytest
import torch
import torch.nn.functional as F
from fairseq.modules import gelu_accurate

from fairseq_fast.kernels import loader, small_gemm
from fairseq_fast.decoding.backends import FusedBackend, TorchBackend, decoder_backend
from fairseq_fast.decoding.fused_layer import (DECODER_MAX_ROWS, KERNEL_MAX_ROWS, FusedLayers,
                                               layer_supported)
from fairseq_fast.decoding.lean_decoder import LeanDecoder
from fairseq_fast.decoding.step_rules import StepRules
from model_factory import (DummyTask, language_model, make_dictionary, source_batch,
                           translation_model)

needs_kernel = pytest.mark.skipif(not small_gemm.available(),
                                  reason="kernels not buildable here")
DICT = make_dictionary(40)
TASK = DummyTask(DICT, DICT)


def _close(a, b, tol=1e-5):
    assert a.shape == b.shape
    return bool(((a - b).abs().max() / b.abs().max().clamp(min=1.0)) < tol)


@needs_kernel
@pytest.mark.parametrize("level", loader.runnable_levels(loader.library() or object()))
def test_gelu_is_torchs_to_float32_rounding(level):
    """decoder_layer.c's GELU at every instruction set level, against F.gelu in float64: within
    the error of the erf it uses (Abramowitz and Stegun 7.1.26, 1.5e-7) and float32 rounding,
    over a dense sweep, tiny and huge inputs; NaN stays NaN; how the values are cut into rows
    and shared among threads changes no bit."""
    gelu = loader.variant("dl_gelu_f32", level)
    x = torch.cat([torch.linspace(-12, 12, 400_001), torch.randn(100_000) * 1e-3,
                   torch.tensor([0.0, -0.0, 1e-30, -1e-30, 1e-40, 87.0, -87.0, 1e6, -1e6])])
    y = x.clone()
    gelu(y.data_ptr(), 1, y.numel(), 1)
    want = F.gelu(x.double())
    error = (y.double() - want).abs()
    bound = 0.5 * x.double().abs() * 1.5e-7 + torch.finfo(torch.float32).eps * want.abs()
    assert bool((error <= 3 * bound + 1e-44).all())
    rows = x[:400_000].clone().view(400, 1000)  # rows shared among two threads
    gelu(rows.data_ptr(), 400, 1000, 2)
    assert torch.equal(rows.flatten(), y[:400_000])
    nan, one = torch.tensor([float("nan"), 1.0]), torch.tensor([1.0])
    gelu(nan.data_ptr(), 1, 2, 1)
    gelu(one.data_ptr(), 1, 1, 1)
    assert bool(nan[0].isnan()) and nan[1] == one[0]


def _drive(model, backend, sample, group=1):
    """Prefill 4 inputs, roll rows back to different lengths, verify a 3-token window, one
    single-token step, then a step after the batch kept only its last and first sentences (in
    that order) and one after the first one's beams swapped places: the logits of all five calls and
    the cache."""
    bsz = (sample["net_input"]["src_tokens"].size(0) if sample is not None else 3) * group
    enc = None
    if sample is not None:
        enc = model.encoder.forward_torchscript(sample["net_input"])
    state = backend.init_state(enc, bsz, 8)  # grows to 16
    tokens = torch.randint(4, 40, (bsz, 12), generator=torch.Generator().manual_seed(bsz))
    out = [backend.forward(state, tokens[:, :4])]
    backend.rollback(state, torch.arange(bsz) % 3 + 2)  # rows at 2, 3, 4, 2, ... inputs
    out.append(backend.forward(state, tokens[:, 4:7]))
    out.append(backend.forward(state, tokens[:, 7:8]))
    beams, last = torch.arange(group), bsz - group
    kept = torch.cat([last + beams, beams])  # last and first sentences: rows leave, K/V move
    state.select_rows(kept)
    out.append(backend.forward(state, tokens[kept, 8:9]))
    swapped = torch.cat([beams.flip(0), group + beams])  # same size: beams change places
    state.select_rows(swapped)
    out.append(backend.forward(state, tokens[kept[swapped], 9:10]))
    used = int(state.lengths.max())
    return out, state.self_k[:, :, :, :used], state.lengths


def _backend(model, path: str):
    """The C backend on its whole-decoder call (fused_decoder.py) or on its fused layers only,
    or the torch backend (the Python layer path), counting the calls of the C path it is on;
    returns it and the list that grows by one per call."""
    backend = decoder_backend(model)
    assert isinstance(backend, FusedBackend) and backend.whole is not None
    calls = []
    if path == "whole":
        real_whole = backend.whole.forward
        backend.whole.forward = lambda *a, **k: calls.append(1) or real_whole(*a, **k)
    else:
        backend.whole = None
    if path == "layers":
        real = backend.layers.run
        backend.layers.run = lambda *a: calls.append(1) or real(*a)
    elif path == "python":
        backend = TorchBackend(model, backend.lean)
    return backend, calls


def _both_paths(model, sample, group=1):
    """_drive() with the fused layers, with the Python layer path and with the whole-decoder
    call (asserting each C path took all 5 forward calls): (layers, python, whole)."""
    results = {}
    with torch.no_grad():
        for path in ("layers", "python", "whole"):
            backend, calls = _backend(model, path)
            results[path] = _drive(model, backend, sample, group)
            assert len(calls) == (0 if path == "python" else 5)
    return results["layers"], results["python"], results["whole"]


@needs_kernel
@pytest.mark.parametrize("normalize_before", [False, True])
@pytest.mark.parametrize("dim,heads", [(64, 4), (48, 2), (32, 8)])
@pytest.mark.parametrize("group", [1, 3])
@pytest.mark.parametrize("activation", ["relu", "gelu"])
def test_translation_layers_in_one_call_match_the_python_path(normalize_before, dim, heads,
                                                              group, activation):
    """Head sizes 16, 24 (the attention kernel's scalar path), 4; beams: `group` rows per
    source sentence reading its encoder K/V; left-padded sources of different lengths; ReLU and
    GELU feed-forwards."""
    model = translation_model(TASK, layers=2, dim=dim, heads=heads, ffn=2 * dim,
                              normalize_before=normalize_before, seed=dim + group,
                              dtype=torch.float32, activation=activation)
    sample = source_batch(DICT, [7, 3, 9], seed=group)
    layers, (want, cache_ref, lengths_ref), whole = _both_paths(model, sample, group)
    for have, cache, lengths in (layers, whole):
        for a, b in zip(have, want):
            assert _close(a, b)
        assert torch.equal(lengths, lengths_ref)
        for b, n in enumerate(lengths.tolist()):  # valid slots only
            assert _close(cache[:, b, :, :n], cache_ref[:, b, :, :n])


@needs_kernel
@pytest.mark.parametrize("normalize_before", [False, True])
@pytest.mark.parametrize("activation", ["relu", "gelu"])
def test_language_model_layers_in_one_call_match_the_python_path(normalize_before, activation):
    """No encoder attention."""
    model = language_model(TASK, layers=2, dim=64, heads=4, ffn=128,
                           normalize_before=normalize_before, dtype=torch.float32,
                           activation=activation)
    layers, python, whole = _both_paths(model, None)
    for a, b, c in zip(layers[0], python[0], whole[0]):
        assert _close(a, b) and _close(c, b)


def _drive_beams(model, backend, sample, group, origins):
    """fairseq's generator's way (every row at one length, attention weights wanted): prefill
    3 inputs, steps after beams copy beams, after the first sentence finished (rows leave)
    and past the capacity (growth). Logits and attention of every call."""
    bsz = sample["net_input"]["src_tokens"].size(0) * group
    enc = model.encoder.forward_torchscript(sample["net_input"])
    state = backend.init_state(enc, bsz, 4, origins=origins)
    tokens = torch.randint(4, 40, (bsz, 8), generator=torch.Generator().manual_seed(bsz))
    out = [backend.forward(state, tokens[:, :3], need_attn=True)]
    order = torch.arange(bsz).view(-1, group)
    order = torch.cat([order[:, :1], order[:, :-1]], dim=1).flatten()  # beam 0 copied, shifted
    rows = torch.arange(bsz)
    for step, new in enumerate((order, torch.arange(group, bsz), None, None)):
        if new is not None:
            state.select_rows(new)
            rows = rows[new]
        out.append(backend.forward(state, tokens[rows, 3 + step:4 + step], need_attn=True))
    assert state.capacity == 8  # grown
    return out


@needs_kernel
@pytest.mark.parametrize("normalize_before,activation", [(False, "relu"), (True, "gelu")])
@pytest.mark.parametrize("group", [1, 3])
def test_beam_search_steps_in_one_call_match_the_python_path(normalize_before, activation,
                                                             group):
    """The fused layers read the cache through the state's origins (beams reordered and rows
    gone without copies) and return the last layer's encoder attention: logits and attention
    as the Python path's and the whole-decoder call's, with origins and with copies."""
    model = translation_model(TASK, layers=2, dim=64, heads=4, ffn=128,
                              normalize_before=normalize_before, seed=group,
                              dtype=torch.float32, activation=activation)
    sample = source_batch(DICT, [7, 3, 9], seed=group)
    runs = {}
    with torch.no_grad():
        for path, origins in (("layers", True), ("whole", True), ("whole", False),
                              ("python", True), ("python", False)):
            backend, calls = _backend(model, path)
            runs[path, origins] = _drive_beams(model, backend, sample, group, origins)
            assert len(calls) == (0 if path == "python" else 5)
    for other in (("whole", True), ("whole", False), ("python", True), ("python", False)):
        for (logits, attn), (logits_ref, attn_ref) in zip(runs["layers", True], runs[other]):
            assert _close(logits, logits_ref) and _close(attn, attn_ref)
            assert attn.shape == logits.shape[:2] + sample["net_input"]["src_tokens"].shape[1:]


@needs_kernel
@pytest.mark.parametrize("options", [{}, {"normalize_before": True},
                                     {"layernorm_embedding": True}])
def test_a_step_that_keeps_attention_has_the_bits_of_the_greedy_steps(options):
    """The default generator's one-step call (attention kept, as fairseq keeps it) and the
    greedy look-ahead's C call give the same logits and attention bit for bit, so a row's
    scores do not depend on how its steps are cut into calls (rows in flight, a lone last
    step). The models have the parts the layers-only path would compute with torch's ops: a
    final norm, an embedding norm, an output weight too small for the kernel."""
    model = translation_model(TASK, layers=2, dim=32, heads=4, ffn=64, seed=3,
                              dtype=torch.float32, **options)
    sample = source_batch(DICT, [7, 3, 9], seed=1)
    rules = StepRules(pad=DICT.pad(), unk=DICT.unk(), eos=DICT.eos(), max_len=20, min_len=3)
    with torch.no_grad():
        enc = model.encoder.forward_torchscript(sample["net_input"])
        steps = decoder_backend(model)
        state = steps.init_state(enc, 3, 8)
        feed = torch.full((3, 1), DICT.eos())  # fairseq's first input
        drafts, scores, attn = steps.greedy_steps.run_scored(state, feed, 0, 2, rules, True)
        one = decoder_backend(model)
        state = one.init_state(enc, 3, 8)
        for j, inputs in enumerate((feed, drafts[:, :1])):
            logits, have = one.forward(state, inputs, need_attn=True)
            assert torch.equal(logits[:, 0], steps.scores_to_logits(scores[:, j]))
            assert torch.equal(have[:, 0], attn[:, j])


def test_where_the_fused_layers_are_not_taken():
    """Float64, gradients, more rows than the kernel takes, --no-fast-linear (kernels=False),
    layers of another kind: the torch backend, or the C backend's Python path."""
    model = translation_model(TASK, layers=2, dim=32, heads=4, ffn=64, dtype=torch.float32)
    backend = decoder_backend(model)
    assert isinstance(backend, FusedBackend)
    fused, lean = backend.layers, backend.lean
    with torch.no_grad():
        assert fused.ready(6) == small_gemm.available()
        assert fused.ready(161) == small_gemm.available()  # decoder calls past one matmul's
        assert not fused.ready(161, KERNEL_MAX_ROWS)  # limit; an encoder call's
        assert not fused.ready(DECODER_MAX_ROWS + 1)
        lean.linear.kernel = False  # matmuls kept off the kernel (benchmark_linear's oneDNN row)
        assert not fused.ready(6)
        lean.linear.kernel = True
    with torch.enable_grad():
        assert not fused.ready(6)
    assert decoder_backend(model, kernels=False).name == "torch"
    tanh = translation_model(TASK, layers=2, dim=32, heads=4, ffn=64, dtype=torch.float32)
    tanh.decoder.layers[1].activation_fn = gelu_accurate  # GELU's tanh approximation
    assert not layer_supported(tanh.decoder.layers[1])
    assert layer_supported(tanh.decoder.layers[0])
    assert FusedLayers.build(list(tanh.decoder.layers), lean.linear) is None
    assert decoder_backend(tanh).name == "torch"
    with torch.no_grad():
        sample = source_batch(DICT, [5, 4], seed=0)
        # a model turned float64 after its backend was chosen: the C layers are not taken,
        # and its float64 weights are never packed for the kernel
        backend.layers.refresh = lambda: pytest.fail("float64 weights packed for the kernel")
        model.double()
        state = backend.init_state(model.encoder.forward_torchscript(sample["net_input"]), 2, 8)
        assert backend.forward(state, torch.full((2, 2), 5)).dtype == torch.float64
        assert decoder_backend(model).name == "torch"


@needs_kernel
def test_where_the_whole_decoder_call_is_taken():
    """Taken for a plain float32 decoder's pass, with or without the attention weights, with
    beams reordered through origins or not; not for ragged rows that want the attention weights
    or read through origins, float64, --no-fast-linear, the fused layers switched off, or a
    decoder part it lacks (here an output dimension projection)."""
    model = translation_model(TASK, layers=2, dim=32, heads=4, ffn=64, dtype=torch.float32)
    sample = source_batch(DICT, [5, 4], seed=0)
    with torch.no_grad():
        enc = model.encoder.forward_torchscript(sample["net_input"])

        def calls(backend, origins=False, need_attn=False, counts=None):
            counted = []
            whole = getattr(backend, "whole", None)
            if whole is not None:
                real = whole.forward
                whole.forward = lambda *a, **k: counted.append(1) or real(*a, **k)
            state = backend.init_state(enc, 2, 8, origins=origins)
            backend.forward(state, torch.full((2, 3), 5), counts=counts, need_attn=need_attn)
            return len(counted)

        assert calls(decoder_backend(model)) == 1
        assert calls(decoder_backend(model), need_attn=True) == 1
        assert calls(decoder_backend(model), counts=torch.tensor([3, 1])) == 1
        assert calls(decoder_backend(model), need_attn=True, counts=torch.tensor([3, 1])) == 0
        assert calls(decoder_backend(model), origins=True) == 1
        assert calls(decoder_backend(model), origins=True, counts=torch.tensor([3, 1])) == 0
        assert decoder_backend(model, kernels=False).name == "torch"
        projected = translation_model(TASK, layers=2, dim=32, heads=4, ffn=64,
                                      dtype=torch.float32)
        projected.decoder.project_out_dim = torch.nn.Linear(32, 32, bias=False)
        assert decoder_backend(projected).whole is None
        double = translation_model(TASK, layers=2, dim=32, heads=4, ffn=64,
                                   dtype=torch.float64)
        enc = double.encoder.forward_torchscript(sample["net_input"])
        assert calls(decoder_backend(double)) == 0


@needs_kernel
@pytest.mark.parametrize("path", ["whole", "python"])
def test_ragged_rows_score_their_own_inputs(path):
    """counts: row b reads only its first counts[b] inputs of a window and advances by them.
    In the whole-decoder call those are all it computes (last_inputs), with the bits of the
    same inputs in a full window; on the other paths the fillers are computed and dropped.
    Either way the next step sees exactly the rows' own inputs in the cache."""
    model = translation_model(TASK, layers=2, dim=32, heads=4, ffn=64, dtype=torch.float32)
    sample = source_batch(DICT, [6, 3, 8], seed=4)
    tokens = torch.randint(4, 40, (3, 9), generator=torch.Generator().manual_seed(0))
    counts = torch.tensor([3, 1, 2])
    with torch.no_grad():
        enc = model.encoder.forward_torchscript(sample["net_input"])

        def run(ragged):
            backend, _ = _backend(model, path)
            state = backend.init_state(enc, 3, 16)
            backend.forward(state, tokens[:, :4])
            backend.rollback(state, torch.tensor([4, 2, 3]))
            window = backend.forward(state, tokens[:, 4:7], counts=counts if ragged else None)
            inputs = backend.last_inputs
            lengths = state.lengths.clone()
            backend.rollback(state, torch.tensor([4, 2, 3]) + counts)
            nxt = backend.forward(state, tokens[:, 7:8])
            return window, inputs, lengths, nxt

        window, inputs, lengths, nxt = run(ragged=True)
        full, full_inputs, _, full_nxt = run(ragged=False)
    assert torch.equal(lengths, torch.tensor([4, 2, 3]) + counts)
    assert full_inputs == 9 and inputs == (6 if path == "whole" else 9)
    for b, n in enumerate(counts.tolist()):
        assert torch.equal(window[b, :n], full[b, :n])
        if path == "whole":
            assert not window[b, n:].any()
    assert torch.equal(nxt, full_nxt)


def _halve_in_place(layer):
    for p in layer.parameters():
        p.mul_(0.5)


def _reassign_fc1(layer):
    layer.fc1.weight = torch.nn.Parameter(layer.fc1.weight * 0.5)


@needs_kernel
@pytest.mark.parametrize("change", [_halve_in_place, _reassign_fc1],
                         ids=["in-place", "reassigned"])
def test_changed_weights_are_used(change):
    """The argument structs and packed weights follow a parameter changed in place or replaced
    by a new one (module.weight = Parameter(...))."""
    model = translation_model(TASK, layers=1, dim=64, heads=4, ffn=128, dtype=torch.float32)
    sample = source_batch(DICT, [6, 4], seed=0)
    backend = decoder_backend(model)
    ref = TorchBackend(model, LeanDecoder(model.decoder))
    with torch.no_grad():
        before = _drive(model, backend, sample)[0][0]
        change(model.decoder.layers[0])
        after = _drive(model, backend, sample)[0][0]
        assert not _close(after, before, 1e-3)
        assert _close(after, _drive(model, ref, sample)[0][0])


@needs_kernel
@pytest.mark.parametrize("normalize_before,activation",
                         [(False, "relu"), (True, "relu"), (False, "gelu")])
@pytest.mark.parametrize("lengths", [[9], [7, 3, 9]])
def test_encoder_layers_in_one_call_match_fairseqs_encoder(normalize_before, activation,
                                                           lengths):
    """FusedEncoder: fairseq's encoder-output dict, encoder_out within float32 rounding (source
    padding masked, padded positions zeroed as fairseq does), the other entries equal."""
    from fairseq_fast.decoding.fused_layer import FusedEncoder, encode
    model = translation_model(TASK, layers=1, enc_layers=2, dim=64, heads=4, ffn=128,
                              normalize_before=normalize_before, seed=len(lengths),
                              dtype=torch.float32, activation=activation)
    sample = source_batch(DICT, lengths, seed=2)
    fused = FusedEncoder.build(model.encoder, LeanDecoder(model.decoder).linear)
    assert fused is not None
    with torch.no_grad():
        want = model.encoder.forward_torchscript(sample["net_input"])
        have = encode(model, fused, sample["net_input"])
    assert fused.usable(sample["net_input"]["src_tokens"]) is False  # grad mode is on here
    with torch.no_grad():
        assert fused.usable(sample["net_input"]["src_tokens"])
        have = encode(model, fused, sample["net_input"])
    assert set(have) == set(want)
    assert _close(have["encoder_out"][0], want["encoder_out"][0])
    for key in ("encoder_padding_mask", "encoder_embedding", "src_lengths"):
        assert torch.equal(have[key][0], want[key][0])
    assert bool(want["encoder_padding_mask"][0].any()) == (len(lengths) > 1)


@needs_kernel
def test_encoder_batches_larger_than_one_call_run_in_calls_of_whole_sentences(monkeypatch):
    """A batch of more tokens than one call takes (KERNEL_MAX_ROWS) runs in calls of whole
    sentences: the same bits as one call over the whole batch, close to fairseq's encoder; a
    sentence longer than a call takes none (packed_encoder.py runs it)."""
    from fairseq_fast.decoding import fused_layer
    from fairseq_fast.decoding.fused_layer import FusedEncoder, encode
    model = translation_model(TASK, layers=1, enc_layers=2, dim=64, heads=4, ffn=128,
                              normalize_before=True, seed=4, dtype=torch.float32)
    lengths = [9, 4, 7, 9, 2, 8] * 6  # 36 sentences x 10 positions: 360 rows, 16 per call
    sample = source_batch(DICT, lengths, seed=5)
    fused = FusedEncoder.build(model.encoder, LeanDecoder(model.decoder).linear)
    calls = []
    real = fused.layers._call
    fused.layers._call = lambda x, *a: calls.append(x.size(0)) or real(x, *a)
    with torch.no_grad():
        want = model.encoder.forward_torchscript(sample["net_input"])["encoder_out"][0]
        chunked = encode(model, fused, sample["net_input"])["encoder_out"][0]
        assert calls == [16, 16, 4]
        monkeypatch.setattr(fused_layer, "KERNEL_MAX_ROWS", 10 ** 6)
        whole = encode(model, fused, sample["net_input"])["encoder_out"][0]
        assert calls[3:] == [36]
        monkeypatch.undo()
        assert torch.equal(chunked, whole)
        assert _close(chunked, want)
        long = source_batch(DICT, [fused_layer.KERNEL_MAX_ROWS + 1], seed=6)["net_input"]
        assert not fused.usable(long["src_tokens"])
        assert _close(encode(model, fused, long)["encoder_out"][0],
                      model.encoder.forward_torchscript(long)["encoder_out"][0])
        assert len(calls) == 4


def test_encoder_falls_back_where_not_usable():
    """float64 (the equality tests' dtype), no encoder (language models), unsupported layers."""
    from fairseq_fast.decoding.fused_layer import FusedEncoder, encode
    model = translation_model(TASK, layers=1, dim=32, heads=4, ffn=64)  # float64
    linear = LeanDecoder(model.decoder).linear
    fused = FusedEncoder.build(model.encoder, linear)
    sample = source_batch(DICT, [5, 3], seed=0)
    with torch.no_grad():
        assert fused is None or not fused.usable(sample["net_input"]["src_tokens"])
        assert torch.equal(encode(model, fused, sample["net_input"])["encoder_out"][0],
                           model.encoder.forward_torchscript(sample["net_input"])
                           ["encoder_out"][0])
    assert encode(language_model(TASK), None, {}) is None
    model = translation_model(TASK, layers=1, dim=32, heads=4, ffn=64, dtype=torch.float32)
    assert FusedEncoder.build(model.encoder, linear) is not None

    class Custom(type(model.encoder)):  # a subclass with its own forward pass: left alone
        def forward_embedding(self, src_tokens, token_embedding=None):
            return super().forward_embedding(src_tokens, token_embedding)

    model.encoder.__class__ = Custom
    assert FusedEncoder.build(model.encoder, linear) is None
    model.encoder.__class__ = Custom.__mro__[1]
    model.encoder.layers[0].activation_fn = gelu_accurate
    assert FusedEncoder.build(model.encoder, linear) is None


@needs_kernel
def test_encoder_layers_with_different_head_counts():
    """Each layer's scratch K/V has that layer's own head layout."""
    from fairseq.modules import MultiheadAttention
    from fairseq_fast.decoding.fused_layer import FusedEncoder, encode
    model = translation_model(TASK, layers=1, enc_layers=2, dim=64, heads=4, ffn=128,
                              dtype=torch.float32)
    torch.manual_seed(5)
    model.encoder.layers[1].self_attn = MultiheadAttention(64, 8, self_attention=True).eval()
    sample = source_batch(DICT, [7, 4], seed=3)
    fused = FusedEncoder.build(model.encoder, LeanDecoder(model.decoder).linear)
    with torch.no_grad():
        want = model.encoder.forward_torchscript(sample["net_input"])["encoder_out"][0]
        assert _close(encode(model, fused, sample["net_input"])["encoder_out"][0], want)


@needs_kernel
def test_strict_mode_refuses_fused_calls_that_would_go_out_of_bounds():
    """The suite runs with FAIRSEQ_FAST_STRICT=1 (kernels/fused.py): a token past the
    embedding, a cache slot past the capacity or a wrong scratch size raises
    KernelArgumentError before the C call; the same calls within bounds run."""
    from fairseq_fast.kernels import calls, fused

    assert calls.STRICT
    model = translation_model(TASK, layers=2, dim=32, heads=2, ffn=64, dtype=torch.float32)
    backend = decoder_backend(model)
    sample = source_batch(DICT, [5, 3])
    enc = model.encoder.forward_torchscript(sample["net_input"])
    state = backend.init_state(enc, 2, 8)
    whole = backend.whole
    tokens = torch.tensor([[4, 5], [6, 7]])
    assert whole.forward(state, tokens, 2).shape == (2, 2, len(DICT))
    with pytest.raises(calls.KernelArgumentError, match="gd_forward_f32: tokens holds"):
        whole.forward(state, torch.tensor([[4, len(DICT)], [6, 7]]), 2)
    with pytest.raises(calls.KernelArgumentError, match="lengths \\+ inputs"):
        state.lengths = torch.tensor([7, 0])  # 7 + 2 inputs past a capacity of 8
        whole.forward(state, tokens, 9)
    state.lengths = torch.tensor([0, 0])
    layers = backend.layers
    caches, crosses, pad = layers._state_args(state, 2)
    x = torch.randn(2, 1, 32)
    layers.refresh()
    work = x.new_empty(fused.layer_work_floats(2, 32, 64))
    fused.run_layers(layers._structs, x, caches, crosses, start=torch.tensor([0, 3]), total=4,
                     self_pad=None, origin=None, pad=pad, probs=None, work=work)
    with pytest.raises(calls.KernelArgumentError, match="dl_layer_f32: start holds"):
        fused.run_layers(layers._structs, x, caches, crosses, start=torch.tensor([0, 8]),
                         total=8, self_pad=None, origin=None, pad=pad, probs=None, work=work)
    with pytest.raises(calls.KernelArgumentError, match="work of 1 floats"):
        fused.run_layers(layers._structs, x, caches, crosses, start=torch.tensor([0, 3]),
                         total=4, self_pad=None, origin=None, pad=pad, probs=None,
                         work=x.new_empty(1))
