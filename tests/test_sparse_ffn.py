"""The sparse-input matmul (csrc/small_gemm.c, sg_sparse_linear_*): fc2 of a ReLU feed-forward
skips the zeros of relu(fc1(x)) and gives the dense kernel's bits exactly, at every instruction
set level, in each of its modes, for any pattern of zeros; the decoder and encoder layers that
use it give the same bits as with it off; its cost model takes the lists where they save work
and the dense kernel where the rows' union is every k and the call is bound by memory."""
import ctypes

import pytest
import torch

from fairseq_fast.decoding import fused_layer
from fairseq_fast.decoding.fused_layer import FusedEncoder
from fairseq_fast.decoding.backends import decoder_backend
from fairseq_fast.generators.fast import FastSequenceGenerator
from fairseq_fast.generators.speculative import SpeculativeSequenceGenerator
from fairseq_fast.kernels import loader, small_gemm
from fairseq_fast.kernels import packed_linear
from model_factory import DummyTask, make_dictionary, source_batch, translation_model

needs_kernel = pytest.mark.skipif(not small_gemm.available(),
                                  reason="kernels not buildable here")
NEVER, CHEAPER, ALWAYS = (fused_layer.SPARSE_NEVER, fused_layer.SPARSE_CHEAPER,
                          fused_layer.SPARSE_ALWAYS)


def _sparse_rows(rows, inp, density, shared, g):
    """relu-like rows: nonnegative values, `density` of them nonzero, a `shared` part of the
    pattern common to every row (tokens of one sentence), some zeros negative (-0.0)."""
    common = torch.rand(inp, generator=g) < density
    own = torch.rand(rows, inp, generator=g) < density
    keep = torch.where(torch.rand(rows, inp, generator=g) < shared, common.expand(rows, inp), own)
    x = torch.randn(rows, inp, generator=g).abs() * keep
    x[torch.rand(rows, inp, generator=g) < 0.05] = -0.0
    return x.contiguous()


def _call(fn, x, packed, bias, res, relu, threads, *sparse):
    rows, inp = x.shape
    y = torch.full((rows, packed.out_features), float("nan"))
    fn(x.data_ptr(), rows, inp, packed.data.data_ptr(),
       None if bias is None else bias.data_ptr(), y.data_ptr(), packed.out_features,
       None if res is None else res.data_ptr(), int(relu), *sparse, threads)
    return y


@needs_kernel
@pytest.mark.parametrize("level", loader.runnable_levels(loader.library() or object()))
@pytest.mark.parametrize("values", ["float16", "float32"])
def test_sparse_input_kernel_gives_the_dense_kernels_bits(level, values):
    """Row counts from one to several row groups, inputs not a multiple of a chunk, a partial
    last output block, densities from none to all, NaN inputs, bias, residual and relu, one
    and two threads: every mode's output equals the dense kernel's bit for bit."""
    g = torch.Generator().manual_seed(len(level) + len(values))
    scratch = loader.variant("sg_sparse_scratch", level)
    suffix = "_f16" if values == "float16" and level != "generic" else "_f32"
    dense = loader.variant("sg_linear" + suffix, level)
    sparse = loader.variant("sg_sparse_linear" + suffix, level)
    cases = [(1, 300, 70, 0.25, 0.0), (2, 257, 64, 0.5, 0.6), (5, 1000, 200, 0.1, 0.6),
             (7, 130, 65, 0.0, 0.0), (13, 400, 100, 1.0, 0.0), (40, 520, 130, 0.3, 0.2)]
    for i, (rows, inp, out, density, shared) in enumerate(cases):
        w = torch.randn(out, inp, generator=g)
        if values == "float16":
            w = w.half().float()
        packed = small_gemm.pack(w, level)
        assert (packed.data.dtype == torch.float16) == (suffix == "_f16")
        x = _sparse_rows(rows, inp, density, shared, g)
        if i == 2:
            x[1, 7] = float("nan")
        bias = torch.randn(out, generator=g) if i % 2 else None
        res = torch.randn(rows, out, generator=g) if i % 3 == 0 else None
        relu = i % 2 == 0
        for threads in (1, 2):
            want = _call(dense, x, packed, bias, res, relu, threads)
            work = torch.empty(scratch(rows, inp), dtype=torch.int32)
            for mode in (NEVER, CHEAPER, ALWAYS):
                have = _call(sparse, x, packed, bias, res, relu, threads, work.data_ptr(), mode)
                assert torch.equal(have.nan_to_num(7.0), want.nan_to_num(7.0)), (
                    level, values, rows, inp, out, density, threads, mode)
                assert bool(have.isnan().any()) == (i == 2)


@needs_kernel
def test_cost_model_takes_lists_where_they_save_work():
    """One token's hidden units, a quarter nonzero: the lists (a quarter of the weight read).
    160 rows, a quarter each (beams, an encoder): the lists (a quarter of the arithmetic). 8
    different sentences' tokens, whose union is nearly every unit, on a call bound by memory:
    the dense kernel. All nonzero: the dense kernel, at any row count."""
    cheaper = loader.function("sg_sparse_cheaper")
    inp = 4096
    g = torch.Generator().manual_seed(0)

    def takes_lists(x):
        cnt = (x != 0).sum(1, dtype=torch.int32)
        anyk = (x != 0).any(0).to(torch.uint8)
        return bool(cheaper(cnt.data_ptr(), anyk.data_ptr(), x.size(0), inp))

    assert takes_lists(_sparse_rows(1, inp, 0.25, 0.0, g))
    assert takes_lists(_sparse_rows(160, inp, 0.25, 0.0, g))
    assert takes_lists(_sparse_rows(40, inp, 0.1, 0.0, g))
    assert not takes_lists(_sparse_rows(8, inp, 0.25, 0.0, g))
    for rows in (1, 8, 160):
        assert not takes_lists(_sparse_rows(rows, inp, 1.0, 0.0, g))


DICT = make_dictionary(40)
TASK = DummyTask(DICT, DICT)


def _model(normalize_before):
    model = translation_model(TASK, layers=2, enc_layers=2, dim=64, heads=4, ffn=256,
                              normalize_before=normalize_before, seed=3, dtype=torch.float32)
    for layer in list(model.encoder.layers) + list(model.decoder.layers):
        layer.fc1.bias.data -= 0.5  # a trained model's sparsity: most units below zero
    return model


def _outputs(model, sample):
    """The encoder's output, every hypothesis of beam search and of speculative greedy (the
    model as its own draft), and a lean decoder's logits over a verify window and a step."""
    enc = FusedEncoder.build(model.encoder, packed_linear.of(model.decoder)).forward(
        sample["net_input"])["encoder_out"][0]
    beam = FastSequenceGenerator([model], DICT, beam_size=4, max_len_b=12).generate(
        [model], sample)
    spec = SpeculativeSequenceGenerator([model], DICT, draft_model=model, draft_len=3,
                                        max_len_b=12).generate([model], sample)
    backend = decoder_backend(model)
    bsz = sample["net_input"]["src_tokens"].size(0)
    state = backend.init_state(model.encoder.forward_torchscript(sample["net_input"]), bsz, 16)
    tokens = torch.randint(4, 40, (bsz, 6), generator=torch.Generator().manual_seed(1))
    logits = [backend.forward(state, tokens[:, :5]), backend.forward(state, tokens[:, 5:6])]
    modes = {s.sparse_ffn for s in backend.layers._structs}
    hyps = [(h["tokens"], h["score"], h["positional_scores"])
            for out in (beam, spec) for sentence in out for h in sentence]
    return [enc, *logits, *[t for h in hyps for t in h]], modes


@needs_kernel
@pytest.mark.parametrize("normalize_before", [False, True])
def test_layers_give_the_same_bits_with_and_without_skipping(monkeypatch, normalize_before):
    """Encoder, beam search, speculative decoding and the lean decoder's calls: the same
    tensors bit for bit whether fc2 never skips its input's zeros, skips them where cheaper
    (the default) or always does; each layer's struct carries the mode."""
    model = _model(normalize_before)
    sample = source_batch(DICT, [9, 5, 7], seed=2)
    hidden = model.decoder.layers[0].fc1(torch.randn(20, 64)).relu()
    assert 0.5 < float((hidden == 0).float().mean()) < 0.95  # the skipping has zeros to skip
    results = {}
    with torch.no_grad():
        for mode in (NEVER, CHEAPER, ALWAYS):
            monkeypatch.setattr(fused_layer, "sparse_ffn", lambda mode=mode: mode)
            results[mode], modes = _outputs(model, sample)
            assert modes == {mode}
    for mode in (CHEAPER, ALWAYS):
        assert len(results[mode]) == len(results[NEVER])
        for have, want in zip(results[mode], results[NEVER]):
            assert torch.equal(have, want)


@needs_kernel
def test_environment_switch_and_a_weight_that_is_not_finite(monkeypatch):
    """FAIRSEQ_FAST_SPARSE_FFN=0 switches the skipping off (the structs are rebuilt when it
    changes); an fc2 weight with an infinity never skips (0 x inf is NaN, a skip would not
    be)."""
    model = _model(True)
    layers = decoder_backend(model).layers
    with torch.no_grad():
        monkeypatch.delenv(fused_layer.SPARSE_FFN_ENV, raising=False)
        layers.refresh()
        assert [s.sparse_ffn for s in layers._structs] == [CHEAPER, CHEAPER]
        monkeypatch.setenv(fused_layer.SPARSE_FFN_ENV, "0")
        layers.refresh()
        assert [s.sparse_ffn for s in layers._structs] == [NEVER, NEVER]
        monkeypatch.setenv(fused_layer.SPARSE_FFN_ENV, "1")
        model.decoder.layers[1].fc2.weight[0, 0] = float("inf")
        layers.refresh()
        assert [s.sparse_ffn for s in layers._structs] == [CHEAPER, NEVER]
