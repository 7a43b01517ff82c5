"""packed_linear.py and small_gemm.py: the small-matrix kernel and oneDNN on packed weights agree
with F.linear to float32 rounding, follow weight changes, keep F.linear where the rule says so,
and leave generation unchanged in float32 (the float64 equality tests cannot see these paths:
neither has float64 kernels)."""
import pytest
import torch
import torch.nn.functional as F
from fairseq.sequence_generator import SequenceGenerator

from fairseq_fast.kernels import loader, small_gemm
from fairseq_fast.generators.fast import FastDefaults, FastSequenceGenerator
from fairseq_fast.kernels.packed_linear import (KERNEL_MAX_ROWS, KERNEL_MIN_WEIGHT, MIN_WEIGHT, WIDE,
                                        PackedLinear, onednn_available)
from fairseq_fast.generators.speculative import SpeculativeSequenceGenerator
from model_factory import DummyTask, make_dictionary, source_batch, translation_model

needs_onednn = pytest.mark.skipif(not onednn_available(), reason="torch without oneDNN")
needs_kernel = pytest.mark.skipif(not small_gemm.available(),
                                  reason="small-matrix kernel not buildable here")


def _close(a, b):
    if b.numel() == 0:
        return a.shape == b.shape
    scale = b.abs().max().clamp(min=1.0)
    return bool(((a - b).abs().max() / scale) < 1e-5)


@needs_kernel
@pytest.mark.parametrize("rows,inp,out", [(1, 256, 256), (5, 256, 768), (7, 128, 1536),
                                          (1, 256, 4008), (13, 130, 200), (40, 1024, 256),
                                          (160, 256, 1024), (3, 2048, 16)])
@pytest.mark.parametrize("values", ["float16", "float32"])
@pytest.mark.parametrize("bias", [True, False])
def test_kernel_matches_f_linear(rows, inp, out, values, bias):
    """Any output count (partial last block), any input size, row counts across row groups, a
    missing bias; weights that are float16 numbers are stored as float16, others as float32."""
    g = torch.Generator().manual_seed(rows * out + inp)
    x = torch.randn(rows, inp, generator=g)
    w = torch.randn(out, inp, generator=g)
    if values == "float16":
        w = w.half().float()
    b = torch.randn(out, generator=g) if bias else None
    linear = PackedLinear()
    assert linear.route(x, w, b) == "kernel"
    with torch.no_grad():
        have = linear(x, w, b)
    want = F.linear(x, w, b)
    assert have.shape == want.shape and have.dtype == want.dtype
    assert _close(have, want)
    stored = "float32" if loader.level() == "generic" else values  # no F16C there
    assert linear.packed(w, "kernel").data.dtype == getattr(torch, stored)
    # [B, n, in] and a transposed (non-contiguous) view give the same
    x3 = x.view(1, rows, inp).transpose(0, 1).contiguous().transpose(0, 1)
    with torch.no_grad():
        assert torch.equal(linear(x3, w, b).view(rows, out), have)


@needs_kernel
@pytest.mark.parametrize("rows,out", [(5, 256), (13, 200), (1, 1024)])
@pytest.mark.parametrize("bias", [True, False])
def test_fused_residual_and_relu_are_the_bits_of_torch_ops_after_the_kernel(rows, out, bias):
    """linear(x, w, b, residual, relu) = relu(linear(x, w, b) + residual) bit for bit, on the
    kernel (full and partial output blocks) and on F.linear; a NaN stays NaN through relu."""
    g = torch.Generator().manual_seed(rows + out)
    x = torch.randn(2, rows, 256, generator=g)
    w = torch.randn(out, 256, generator=g)
    b = torch.randn(out, generator=g) if bias else None
    r = torch.randn(2, rows, out, generator=g)
    for linear in (PackedLinear(), PackedLinear(enabled=False)):
        with torch.no_grad():
            y = linear(x, w, b)
            assert torch.equal(linear(x, w, b, residual=r), y + r)
            assert torch.equal(linear(x, w, b, relu=True), F.relu(y))
            assert torch.equal(linear(x, w, b, r, relu=True), F.relu(y + r))
            assert bool((F.relu(y + r) == 0).any()) and bool((y + r < 0).any())
            nan = r.clone()
            nan[0, 0, 0] = float("nan")
            assert bool(linear(x, w, b, nan, relu=True)[0, 0, 0].isnan())


@needs_kernel
@pytest.mark.parametrize("inputs", [256, 200])
def test_kernel_bits_do_not_depend_on_rows_threads_or_storage(inputs):
    """Each output is one accumulator over k in order: a row's result is the same bits alone
    or among others, on 1 or 2 threads, from float16 or float32 storage of the same values
    (60 rows: float16 weights widened chunk by chunk, the last chunk whole or partial; a row
    alone: widened in registers)."""
    g = torch.Generator().manual_seed(5)
    x = torch.randn(60, inputs, generator=g)
    w = torch.randn(300, inputs, generator=g).half().float()
    b = torch.randn(300, generator=g)
    packed = small_gemm.pack(w)
    assert packed.data.dtype == (torch.float32 if loader.level() == "generic" else torch.float16)
    as16 = small_gemm.Packed(packed.data.half(), 300, inputs)
    as32 = small_gemm.Packed(packed.data.float(), 300, inputs)
    full = small_gemm.linear(x, as16, b)
    assert torch.equal(small_gemm.linear(x, as32, b), full)
    assert all(torch.equal(small_gemm.linear(x[i:i + 1], as16, b), full[i:i + 1])
               for i in range(60))
    threads = torch.get_num_threads()
    try:
        torch.set_num_threads(1)
        assert torch.equal(small_gemm.linear(x, as16, b), full)
    finally:
        torch.set_num_threads(threads)
    assert small_gemm.linear(x[:0], as16, b).shape == (0, 300)


@needs_kernel
@pytest.mark.parametrize("values", ["float16", "float32"])
def test_packed_layout_is_blocks_of_outputs_k_major_zero_padded(values):
    """pack(): p[block][k][j] = w[block * BLOCK + j][k], zeros past the last output (here 200
    outputs, not a multiple of the block), float16 exactly where every value is a float16
    number; the same for a weight that is a view."""
    g = torch.Generator().manual_seed(11)
    w = torch.randn(200, 96, generator=g)
    if values == "float16":
        w = w.half().float()
    else:
        w[7, 3] = 1.0 + 2.0 ** -20  # one value float16 cannot hold: all float32
    for weight in (w, torch.cat([torch.zeros(1, 96), w])[1:]):
        data = small_gemm.pack(weight).data
        block = data.size(2)
        assert data.shape == (-(-200 // block), 96, block)
        want16 = values == "float16" and loader.level() != "generic"
        assert data.dtype == (torch.float16 if want16 else torch.float32)
        rows = data.float().transpose(1, 2).reshape(-1, 96)
        assert torch.equal(rows[:200], w) and not rows[200:].any()


def _runnable_levels():
    lib = loader.library()
    return [] if lib is None else loader.runnable_levels(lib)


@needs_kernel
@pytest.mark.parametrize("level", _runnable_levels())
def test_packing_scans_and_lays_out_weights_alike_at_every_level(level):
    """The C packing at each level this CPU runs: the scan's flags (every value a float16
    number: zeros, infinities, subnormal float16 numbers, the largest one; not a NaN, a value
    between float16 numbers, one above the largest; every value finite) for lengths that are
    not a multiple of a vector, and the blocks it writes (float16 and float32, a last partial
    block) are the layout pack() documents."""
    scan = loader.variant("sg_scan", level)
    tiny, big = 2.0 ** -24, 65504.0
    for value, exact, finite in [(0.5, 1, 1), (-0.0, 1, 1), (3 * tiny, 1, 1), (big, 1, 1),
                                 (-big, 1, 1), (float("inf"), 1, 0), (float("-inf"), 1, 0),
                                 (tiny / 2, 0, 1), (1.0 + 2.0 ** -11, 0, 1), (65520.0, 0, 1),
                                 (1e-30, 0, 1), (float("nan"), 0, 0)]:
        for n, at in ((37, 36), (37, 0), (16, 5), (100000, 99999)):
            w = torch.full((n,), 0.25)
            w[at] = value
            assert scan(w.data_ptr(), n, 2) == exact | finite << 1, (value, n, at)
    block = loader.variant("sg_block", level)()
    g = torch.Generator().manual_seed(5)
    w = torch.randn(200, 96, generator=g).half().float()
    w[3, 4], w[150, 95], w[199, 0] = 3 * tiny, float("inf"), -big
    blocks = -(-200 // block)
    for name, dtype in (("sg_pack_f16", torch.float16), ("sg_pack_f32", torch.float32)):
        data = torch.full((blocks, 96, block), 7.0, dtype=dtype)
        loader.variant(name, level)(w.data_ptr(), 200, 96, data.data_ptr(), 2)
        rows = data.float().transpose(1, 2).reshape(-1, 96)
        assert torch.equal(rows[:200], w) and not rows[200:].any(), name


@pytest.mark.parametrize("kernel", [True, False])
def test_routes(kernel):
    """The rule, with and without the kernel: sizes and rows decide; float64, half, gradients
    and PackedLinear(enabled=False) stay on F.linear."""
    linear = PackedLinear(kernel=kernel)
    k = kernel and small_gemm.available()
    d = "onednn" if onednn_available() else "f_linear"
    w = torch.zeros(1024, 256)
    small = torch.zeros(128, 128)  # 16,384 elements: the kernel's smallest
    tiny = torch.zeros(64, 128)
    assert small.numel() == KERNEL_MIN_WEIGHT and w.numel() >= MIN_WEIGHT
    x = lambda rows, inp=256: torch.zeros(rows, inp)  # noqa: E731
    assert linear.route(x(1), w) == ("kernel" if k else "f_linear")  # 1 row, 1,024 outputs
    assert linear.route(x(5), w) == ("kernel" if k else d)
    assert linear.route(x(KERNEL_MAX_ROWS), w) == ("kernel" if k else d)
    assert linear.route(x(KERNEL_MAX_ROWS + 1), w) == d
    assert linear.route(x(5, 128), small) == ("kernel" if k else "f_linear")
    assert linear.route(x(5, 128), tiny) == "f_linear"
    assert linear.route(x(1), torch.zeros(WIDE, 256)) == ("kernel" if k else d)
    assert linear.route(x(5).double(), w.double()) == "f_linear"
    assert linear.route(x(5).half(), w.half()) == "f_linear"
    assert linear.route(x(5), w.clone().requires_grad_()) == "f_linear"
    with torch.no_grad():
        assert linear.route(x(5), w.clone().requires_grad_()) != "f_linear"
    assert PackedLinear(enabled=False).route(x(5), w) == "f_linear"


@needs_onednn
@pytest.mark.parametrize("shape,out", [((1, 1, 64), 16), ((2, 64), 16), ((1, 256), 1024),
                                       ((5, 1, 256), 768), ((3, 7, 128), 1536), ((2, 512), 512),
                                       ((40, 256), 1024), ((1, 128), WIDE), ((0, 512), 512)])
@pytest.mark.parametrize("bias", [True, False])
def test_onednn_float32_matches_f_linear(shape, out, bias):
    """Without the kernel (PackedLinear(kernel=False), or where it cannot be built)."""
    g = torch.Generator().manual_seed(len(shape) * out)
    x = torch.randn(*shape, generator=g)
    w = torch.randn(out, shape[-1], generator=g)
    b = torch.randn(out, generator=g) if bias else None
    linear = PackedLinear(kernel=False)
    rows = x.numel() // x.size(-1)
    assert (linear.route(x, w) == "onednn") == (w.numel() >= MIN_WEIGHT and (rows >= 2 or out >= WIDE))
    with torch.no_grad():
        have = linear(x, w, b)
    want = F.linear(x, w, b)
    assert have.shape == want.shape and have.dtype == want.dtype
    assert _close(have, want)
    # a non-contiguous input (a transposed view) gives the same
    xt = x.transpose(0, -2).contiguous().transpose(0, -2) if x.dim() == 3 else x
    with torch.no_grad():
        assert _close(linear(xt, w, b), want)


@pytest.mark.parametrize("kernel", [True, False])
def test_weight_changed_in_place_or_replaced_is_packed_again(kernel):
    layer = torch.nn.Linear(512, 384)
    x = torch.randn(4, 512)
    linear = PackedLinear(kernel=kernel)
    if linear.route(x, layer.weight.detach()) == "f_linear":
        pytest.skip("neither the kernel nor oneDNN here")
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
                       F.linear(x.double(), w.double(), b.double()))  # no float64 kernels
    assert torch.equal(PackedLinear(kernel=False)(x[:1], w, b), F.linear(x[:1], w, b))
    tiny = w[:64, :128]  # 8,192 elements: F.linear at any row count
    assert torch.equal(linear(x[:, :128], tiny), F.linear(x[:, :128], tiny))
    assert torch.equal(PackedLinear(enabled=False)(x, w, b), F.linear(x, w, b))
    wg = w.clone().requires_grad_()
    y = linear(x, wg, b)  # recording gradients: F.linear, so backward works
    assert y.grad_fn is not None and torch.equal(y.detach(), F.linear(x, w, b))


@pytest.mark.parametrize("kernel", [True, False])
def test_stacked_weights_one_matmul_where_packed_else_one_call_each(kernel):
    """q/k/v through one stacked 768x256 weight: float32 agreement with three F.linear calls;
    exactly the separate calls where the stacked matmul would stay on F.linear; restacked when
    a weight changes."""
    g = torch.Generator().manual_seed(3)
    ws = [torch.randn(256, 256, generator=g) for _ in range(3)]
    bs = [torch.randn(256, generator=g), None, torch.randn(256, generator=g)]  # a missing bias
    linear = PackedLinear(kernel=kernel)
    route = linear.route(torch.zeros(5, 256), torch.cat(ws))
    if route == "f_linear":
        pytest.skip("neither the kernel nor oneDNN here")
    if not kernel:  # 3 x 65,536 >= MIN_WEIGHT; alone, each would not take oneDNN
        assert linear.route(torch.zeros(5, 256), ws[0]) != "onednn"
    x = torch.randn(1, 5, 256, generator=g)
    with torch.no_grad():
        have = linear.stacked(x, ws, bs)
        assert [h.shape for h in have] == [(1, 5, 256)] * 3
        assert all(_close(h, F.linear(x, w, b)) for h, w, b in zip(have, ws, bs))
        assert len(linear._stacked) == 1
        other = PackedLinear(kernel=kernel)
        w64 = [w.double() for w in ws]
        other.stacked(x.double(), w64, [None] * 3)
        assert not other._stacked  # float64 (or GPU, half): no stacked copy is even built
        w1 = [w.double() for w in ws]
        b1 = [None if b is None else b.double() for b in bs]
        xd = x.double()  # F.linear per weight, bit for bit
        assert all(torch.equal(h, F.linear(xd, w, b))
                   for h, w, b in zip(linear.stacked(xd, w1, b1), w1, b1))
    wg = [w.clone().requires_grad_() for w in ws]
    ys = linear.stacked(x, wg, bs)  # recording gradients: F.linear per weight, so backward works
    assert all(y.grad_fn is not None and torch.equal(y.detach(), F.linear(x, w, b))
               for y, w, b in zip(ys, ws, bs))
    with torch.no_grad():
        ws[1].mul_(-1.0)  # in place: the stacked weight is rebuilt
        assert _close(linear.stacked(x, ws, bs)[1], F.linear(x, ws[1]))
        bs[1] = torch.ones(256)  # a bias appears: another tensor, so restacked too
        assert _close(linear.stacked(x, ws, bs)[1], F.linear(x, ws[1], bs[1]))


def test_stacked_weights_are_the_parts_storage_not_a_copy():
    """stack(): the parts (Parameters that own their storage) become views of the stacked
    weight, values and results unchanged, so the stack costs no memory of its own; built once.
    A weight in two stacks stays a view of the first, the second keeps a copy, and neither is
    rebuilt on later calls (no back and forth)."""
    g = torch.Generator().manual_seed(4)
    q, k, v, u = (torch.nn.Parameter(torch.randn(256, 256, generator=g), requires_grad=False)
                  for _ in range(4))
    want = [t.detach().clone() for t in (q, k, v, u)]
    linear = PackedLinear()
    x = torch.randn(3, 256, generator=g)
    with torch.no_grad():
        weight, _ = linear.stack([q, k, v], [None] * 3)
        base = weight.untyped_storage().data_ptr()
        assert [t.untyped_storage().data_ptr() for t in (q, k, v)] == [base] * 3
        assert [t.data_ptr() for t in (q, k, v)] == [weight[i * 256].data_ptr() for i in range(3)]
        assert all(torch.equal(t, c) for t, c in zip((q, k, v), want))
        assert isinstance(q, torch.nn.Parameter)
        assert linear.stack([q, k, v], [None] * 3)[0] is weight  # not rebuilt
        other, _ = linear.stack([k, u], [None] * 2)  # k is a view of the first stack now
        assert u.untyped_storage().data_ptr() != other.untyped_storage().data_ptr()
        assert k.untyped_storage().data_ptr() == base
        for _ in range(2):
            assert linear.stack([q, k, v], [None] * 3)[0] is weight
            assert linear.stack([k, u], [None] * 2)[0] is other
        have = linear.stacked(x, [q, k, v], [None] * 3)
        assert all(_close(h, F.linear(x, c)) for h, c in zip(have, want))
        q.mul_(2.0)  # in place, through the part: restacked from the new values
        assert _close(linear.stacked(x, [q, k, v], [None] * 3)[0], F.linear(x, 2 * want[0]))


def test_with_the_switch_off_the_parameters_keep_their_storage(monkeypatch):
    """FAIRSEQ_FAST_SHARE_WEIGHTS=0: the stack is a copy; the parts keep their own storage."""
    monkeypatch.setenv("FAIRSEQ_FAST_SHARE_WEIGHTS", "0")
    g = torch.Generator().manual_seed(5)
    parts = [torch.nn.Parameter(torch.randn(256, 256, generator=g), requires_grad=False)
             for _ in range(3)]
    where = [p.data_ptr() for p in parts]
    want = [p.detach().clone() for p in parts]
    linear = PackedLinear()
    x = torch.randn(3, 256, generator=g)
    with torch.no_grad():
        weight, _ = linear.stack(parts, [None] * 3)
        assert [p.data_ptr() for p in parts] == where
        assert all(p.untyped_storage().data_ptr() != weight.untyped_storage().data_ptr()
                   for p in parts)
        have = linear.stacked(x, parts, [None] * 3)
    assert all(torch.equal(p, c) for p, c in zip(parts, want))
    assert all(_close(h, F.linear(x, c)) for h, c in zip(have, want))


DICT = make_dictionary(24)
TASK = DummyTask(DICT, DICT)


def _hypos(generator, model, sample):
    return [(h[0]["tokens"].tolist(), float(h[0]["score"]))
            for h in generator.generate([model], sample)]


def _same(have, want):
    assert [t for t, _ in have] == [t for t, _ in want]
    assert all(abs(a - b) < 1e-4 for (_, a), (_, b) in zip(have, want))


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_float32_generation_with_packed_linears_equals_stock(seed):
    """fp32 models whose linears take the kernel (or oneDNN where it cannot be built) in verify
    passes, draft steps and beam steps: speculative greedy and the default beam search give
    stock's tokens, scores within 1e-4."""
    target = translation_model(TASK, layers=2, dim=256, heads=4, ffn=1024, seed=seed,
                               dtype=torch.float32)
    draft = translation_model(TASK, layers=1, dim=128, heads=2, ffn=1024, seed=seed + 100,
                              dtype=torch.float32)
    fc1 = target.decoder.layers[0].fc1.weight
    packed = "kernel" if small_gemm.available() else "onednn"
    if packed == "onednn" and not onednn_available():
        pytest.skip("neither the kernel nor oneDNN here")
    assert PackedLinear().route(torch.zeros(2, 256), fc1.detach()) == packed
    attn = target.decoder.layers[0].self_attn  # q/k/v stacked: 768 x 256
    qkv = torch.cat([attn.q_proj.weight, attn.k_proj.weight, attn.v_proj.weight]).detach()
    assert PackedLinear().route(torch.zeros(2, 256), qkv) == packed
    sample = source_batch(DICT, [7, 5, 9, 3, 6, 8], seed=seed)
    stock = SequenceGenerator([target], DICT, beam_size=1, max_len_b=20)
    spec = SpeculativeSequenceGenerator([target], DICT, draft_model=draft, draft_len=4,
                                        max_len_b=20)
    assert spec.target.lean.linear.enabled and spec.proposer.backend.lean.linear.enabled
    assert spec.target.lean.fused_attention and spec.proposer.backend.lean.fused_attention
    _same(_hypos(spec, target, sample), _hypos(stock, target, sample))
    stock5 = SequenceGenerator([target], DICT, beam_size=5, max_len_b=20)
    fast5 = FastSequenceGenerator([target], DICT, fast=FastDefaults(), beam_size=5, max_len_b=20)
    assert fast5.model.backends[0].lean.linear.enabled
    _same(_hypos(fast5, target, sample), _hypos(stock5, target, sample))
    off = FastSequenceGenerator([target], DICT, fast=FastDefaults(kernels=False), beam_size=5,
                                max_len_b=20)
    assert not off.model.backends[0].lean.linear.enabled


@needs_kernel
def test_generators_on_one_model_share_packed_weights(monkeypatch):
    """A generator built again on the same model (the hub builds one per translate() call)
    packs no weight again and decodes the same; a weight changed in place in between is packed
    again, so the next generator decodes the changed model, as stock does."""
    target = translation_model(TASK, layers=2, dim=256, heads=4, ffn=1024, seed=0,
                               dtype=torch.float32)
    draft = translation_model(TASK, layers=1, dim=128, heads=2, ffn=1024, seed=100,
                              dtype=torch.float32)
    sample = source_batch(DICT, [7, 5, 9, 3, 6, 8], seed=0)
    packs = []
    pack = small_gemm.pack
    monkeypatch.setattr(small_gemm, "pack", lambda w, *a, **k: packs.append(w) or pack(w, *a, **k))

    def spec():
        return SpeculativeSequenceGenerator([target], DICT, draft_model=draft, draft_len=4,
                                            max_len_b=20)

    def beam():
        return FastSequenceGenerator([target], DICT, fast=FastDefaults(), beam_size=5,
                                     max_len_b=20)

    first = [_hypos(make(), target, sample) for make in (spec, beam)]
    packed = len(packs)
    assert packed > 0
    assert [_hypos(make(), target, sample) for make in (spec, beam)] == first
    assert len(packs) == packed  # nothing packed again
    with torch.no_grad():
        target.decoder.layers[1].fc2.weight.mul_(-1.0)
    changed = _hypos(spec(), target, sample)
    assert len(packs) == packed + 1  # that weight alone
    assert changed != first[0]
    _same(changed, _hypos(SequenceGenerator([target], DICT, beam_size=1, max_len_b=20), target,
                          sample))


def test_kernel_that_cannot_be_built_is_a_warning_and_packed_linear_falls_back(tmp_path):
    """No C compiler: one warning, no kernel, calls take oneDNN / F.linear (and
    attention torch's ops)."""
    import subprocess
    import sys
    code = ("import logging, torch; logging.basicConfig(level=logging.INFO)\n"
            "from fairseq_fast.kernels import cpu_attention, loader, small_gemm\n"
            "from fairseq_fast.kernels.packed_linear import PackedLinear\n"
            "assert not small_gemm.available()\n"
            "r = PackedLinear().route(torch.zeros(5, 256), torch.zeros(1024, 256))\n"
            "assert r != 'kernel', r\n"
            "with torch.no_grad():\n"
            "    y = PackedLinear()(torch.ones(5, 256), torch.ones(1024, 256))\n"
            "assert float(y[0, 0]) == 256.0\n"
            "assert not cpu_attention.usable(torch.zeros(1, 1, 1, 16))\n"
            "assert loader.typed('bs_candidates', torch.zeros(2, 8)) is None\n"
            "assert loader.typed('ng_block', torch.zeros(2, 8)) is None\n")
    env = {**__import__("os").environ, "CC": str(tmp_path / "no-such-cc"),
           "FAIRSEQ_FAST_CACHE": str(tmp_path / "cache")}
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stderr.count("fairseq_fast: C kernels unavailable") == 1
    assert not list((tmp_path / "cache").glob("*.so"))

def test_changed_private_onednn_op_means_f_linear(monkeypatch):
    """torch's oneDNN linear ops are private: one that is gone or fails is never called."""
    import torch.nn.functional as F

    from fairseq_fast.kernels import packed_linear

    def changed(*args, **kwargs):
        raise RuntimeError("mkldnn::_linear_pointwise() expected 7 arguments")

    monkeypatch.setattr(packed_linear, "_ONEDNN", None)
    monkeypatch.setattr(torch.ops.mkldnn, "_linear_pointwise", changed, raising=False)
    assert not packed_linear.onednn_available()
    linear = PackedLinear(kernel=False)
    x, w = torch.randn(4, 512), torch.randn(1024, 512)
    assert linear.route(x, w) == "f_linear"
    with torch.no_grad():
        assert torch.equal(linear(x, w), F.linear(x, w))
