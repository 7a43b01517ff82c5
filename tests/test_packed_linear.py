"""packed_linear.py: oneDNN matmuls on packed weights agree with F.linear to float32 rounding,
follow weight changes, keep F.linear where the rule says so, and leave generation unchanged in
float32 (the float64 equality tests cannot see this path: oneDNN has no float64 kernels)."""
import pytest
import torch
import torch.nn.functional as F
from fairseq.sequence_generator import SequenceGenerator

from fairseq_fast.fast_generator import FastDefaults, FastSequenceGenerator
from fairseq_fast.packed_linear import MIN_WEIGHT, WIDE, PackedLinear, onednn_available
from fairseq_fast.speculative_generator import SpeculativeSequenceGenerator
from model_factory import DummyTask, make_dictionary, source_batch, translation_model

needs_onednn = pytest.mark.skipif(not onednn_available(), reason="torch without oneDNN")


def _close(a, b):
    if b.numel() == 0:
        return a.shape == b.shape
    scale = b.abs().max().clamp(min=1.0)
    return bool(((a - b).abs().max() / scale) < 1e-5)


@needs_onednn
@pytest.mark.parametrize("shape,out", [((1, 1, 64), 16), ((2, 64), 16), ((1, 256), 1024),
                                       ((5, 1, 256), 768), ((3, 7, 128), 1536), ((2, 512), 512),
                                       ((40, 256), 1024), ((1, 128), WIDE), ((0, 512), 512)])
@pytest.mark.parametrize("bias", [True, False])
def test_float32_matches_f_linear(shape, out, bias):
    g = torch.Generator().manual_seed(len(shape) * out)
    x = torch.randn(*shape, generator=g)
    w = torch.randn(out, shape[-1], generator=g)
    b = torch.randn(out, generator=g) if bias else None
    linear = PackedLinear()
    rows = x.numel() // x.size(-1)
    assert linear.uses_onednn(x, w) == (w.numel() >= MIN_WEIGHT and (rows >= 2 or out >= WIDE))
    with torch.no_grad():
        have = linear(x, w, b)
    want = F.linear(x, w, b)
    assert have.shape == want.shape and have.dtype == want.dtype
    assert _close(have, want)
    # a non-contiguous input (a transposed view) gives the same
    xt = x.transpose(0, -2).contiguous().transpose(0, -2) if x.dim() == 3 else x
    with torch.no_grad():
        assert _close(linear(xt, w, b), want)


@needs_onednn
def test_weight_changed_in_place_or_replaced_is_packed_again():
    layer = torch.nn.Linear(512, 384)
    x = torch.randn(4, 512)
    linear = PackedLinear()
    assert linear.uses_onednn(x, layer.weight.detach())
    with torch.no_grad():
        before = linear(x, layer.weight, layer.bias)
        layer.weight.mul_(-2.0)  # an optimiser step or a weight edit
        after = linear(x, layer.weight, layer.bias)
        assert _close(after, F.linear(x, layer.weight, layer.bias))
        assert not _close(after, before)
        layer.weight.data = torch.randn(384, 512)  # what .to() / loading does
        assert _close(linear(x, layer.weight, layer.bias), F.linear(x, layer.weight, layer.bias))


def test_f_linear_bit_for_bit_where_the_rule_says_so():
    g = torch.Generator().manual_seed(0)
    x, w, b = (torch.randn(6, 512, generator=g), torch.randn(384, 512, generator=g),
               torch.randn(384, generator=g))
    linear = PackedLinear()
    assert torch.equal(linear(x.double(), w.double(), b.double()),
                       F.linear(x.double(), w.double(), b.double()))  # no float64 on oneDNN
    assert torch.equal(linear(x[:1], w, b), F.linear(x[:1], w, b))  # one row, narrow output
    small = w[:128, :256]  # 32,768 elements: F.linear is faster at any row count
    assert torch.equal(linear(x[:, :256], small), F.linear(x[:, :256], small))
    assert torch.equal(PackedLinear(enabled=False)(x, w, b), F.linear(x, w, b))
    wg = w.clone().requires_grad_()
    y = linear(x, wg, b)  # recording gradients: F.linear, so backward works
    assert y.grad_fn is not None and torch.equal(y.detach(), F.linear(x, w, b))


@needs_onednn
def test_stacked_weights_one_matmul_where_onednn_else_one_call_each():
    """q/k/v through one stacked 768x256 weight: float32 agreement with three F.linear calls;
    exactly the separate calls where the stacked matmul would not take oneDNN; restacked when a
    weight changes."""
    g = torch.Generator().manual_seed(3)
    ws = [torch.randn(256, 256, generator=g) for _ in range(3)]
    bs = [torch.randn(256, generator=g), None, torch.randn(256, generator=g)]  # a missing bias
    linear = PackedLinear()
    assert linear.uses_onednn(torch.zeros(5, 256), torch.cat(ws))  # 3 x 65,536 >= MIN_WEIGHT
    assert not linear.uses_onednn(torch.zeros(5, 256), ws[0])  # alone, each would not
    x = torch.randn(1, 5, 256, generator=g)
    with torch.no_grad():
        have = linear.stacked(x, ws, bs)
        assert [h.shape for h in have] == [(1, 5, 256)] * 3
        assert all(_close(h, F.linear(x, w, b)) for h, w, b in zip(have, ws, bs))
        other = PackedLinear()
        w64 = [w.double() for w in ws]
        other.stacked(x.double(), w64, [None] * 3)
        assert not other._stacked  # float64 (or GPU, half): no stacked copy is even built
        for x1 in (x[:, :1], x.double()):  # one row, float64: F.linear per weight, bit for bit
            w1 = [w.to(x1.dtype) for w in ws]
            b1 = [None if b is None else b.to(x1.dtype) for b in bs]
            assert all(torch.equal(h, F.linear(x1, w, b))
                       for h, w, b in zip(linear.stacked(x1, w1, b1), w1, b1))
    wg = [w.clone().requires_grad_() for w in ws]
    ys = linear.stacked(x, wg, bs)  # recording gradients: F.linear per weight, so backward works
    assert all(y.grad_fn is not None and torch.equal(y.detach(), F.linear(x, w, b))
               for y, w, b in zip(ys, ws, bs))
    with torch.no_grad():
        ws[1].mul_(-1.0)  # in place: the stacked weight is rebuilt
        assert _close(linear.stacked(x, ws, bs)[1], F.linear(x, ws[1]))
        bs[1] = torch.ones(256)  # a bias appears: another tensor, so restacked too
        assert _close(linear.stacked(x, ws, bs)[1], F.linear(x, ws[1], bs[1]))


DICT = make_dictionary(24)
TASK = DummyTask(DICT, DICT)


def _hypos(generator, model, sample):
    return [(h[0]["tokens"].tolist(), float(h[0]["score"]))
            for h in generator.generate([model], sample)]


def _same(have, want):
    assert [t for t, _ in have] == [t for t, _ in want]
    assert all(abs(a - b) < 1e-4 for (_, a), (_, b) in zip(have, want))


@needs_onednn
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_float32_generation_with_packed_linears_equals_stock(seed):
    """fp32 models whose feed-forward layers take oneDNN in verify passes and beam steps:
    speculative greedy and the default beam search give stock's tokens, scores within 1e-4."""
    target = translation_model(TASK, layers=2, dim=256, heads=4, ffn=1024, seed=seed,
                               dtype=torch.float32)
    draft = translation_model(TASK, layers=1, dim=128, heads=2, ffn=1024, seed=seed + 100,
                              dtype=torch.float32)
    fc1 = target.decoder.layers[0].fc1.weight
    assert PackedLinear().uses_onednn(torch.zeros(2, 256), fc1.detach())
    attn = target.decoder.layers[0].self_attn  # q/k/v stacked: 768 x 256 takes oneDNN too
    qkv = torch.cat([attn.q_proj.weight, attn.k_proj.weight, attn.v_proj.weight]).detach()
    assert PackedLinear().uses_onednn(torch.zeros(2, 256), qkv)
    sample = source_batch(DICT, [7, 5, 9, 3, 6, 8], seed=seed)
    stock = SequenceGenerator([target], DICT, beam_size=1, max_len_b=20)
    spec = SpeculativeSequenceGenerator([target], DICT, draft_model=draft, draft_len=4,
                                        max_len_b=20)
    assert spec.target.linear.enabled and spec.proposer.lean.linear.enabled
    _same(_hypos(spec, target, sample), _hypos(stock, target, sample))
    stock5 = SequenceGenerator([target], DICT, beam_size=5, max_len_b=20)
    fast5 = FastSequenceGenerator([target], DICT, fast=FastDefaults(), beam_size=5, max_len_b=20)
    assert fast5.model.lean[0].linear.enabled
    _same(_hypos(fast5, target, sample), _hypos(stock5, target, sample))
    off = FastSequenceGenerator([target], DICT, fast=FastDefaults(linear=False), beam_size=5,
                                max_len_b=20)
    assert not off.model.lean[0].linear.enabled
