"""cpu_attention.py (csrc/attention.c): one-call decoder attention agrees with torch's
matmul / masked_fill / softmax path (lean_decoder._attend) to float32 rounding for every mask the
decoder uses, and the lean decoder takes it exactly where it should (float32 on CPU, not with
--no-fast-linear, not when the last layer's attention weights are wanted). The float64 equality
tests cannot see this path (float32 only); test_packed_linear.py's float32 generation test runs
it end to end against stock."""
import pytest
import torch

from fairseq_fast.kernels import cpu_attention
from fairseq_fast.kernels import small_gemm
from fairseq_fast.decoding.lean_decoder import LeanDecoder, _attend
from model_factory import DummyTask, make_dictionary, source_batch, translation_model

needs_kernel = pytest.mark.skipif(not small_gemm.available(),
                                  reason="kernels not buildable here")


def _close(a, b, tol=1e-5):
    assert a.shape == b.shape
    return bool(((a - b).abs().max() / b.abs().max().clamp(min=1.0)) < tol)


def _qkv(rows, heads, n, dim, keys, group=1, spare=7, seed=0):
    """q as _heads() makes it (a transposed view), k/v as slices of a larger cache."""
    g = torch.Generator().manual_seed(seed)
    q = torch.randn(rows, n, heads, dim, generator=g).transpose(1, 2)
    k = torch.randn(rows // group, heads, keys + spare, dim, generator=g)[:, :, :keys]
    v = torch.randn(rows // group, heads, keys + spare, dim, generator=g)[:, :, :keys]
    return q, k, v


# head dims: vector paths (multiples of 16 / 8 lanes) and the scalar one (24, 20)
SHAPES = [(1, 4, 5, 64, 25), (8, 4, 5, 64, 51), (3, 2, 3, 32, 7), (2, 2, 3, 24, 9),
          (2, 1, 2, 128, 33), (5, 8, 1, 16, 3), (4, 3, 4, 20, 130), (6, 4, 1, 64, 1)]


@needs_kernel
@pytest.mark.parametrize("rows,heads,n,dim,keys", SHAPES)
def test_self_attention_with_ragged_starts_matches_torch(rows, heads, n, dim, keys):
    """Query j of row b sees keys t <= start[b] + j: rows at different lengths, a verify window
    of n queries, the longest row using every key."""
    q, k, v = _qkv(rows, heads, n, dim, keys, seed=rows * keys)
    start = torch.randint(0, max(keys - n, 0) + 1, (rows,), generator=torch.Generator()
                          .manual_seed(dim))
    start[0] = max(keys - n, 0)
    positions = start[:, None] + torch.arange(n)[None, :]
    mask = (torch.arange(keys)[None, None, :] > positions[:, :, None])[:, None]
    want = _attend(q, k, v, mask)
    assert _close(cpu_attention.attend(q, k, v, start=start), want)
    if n == 1 and bool((start == keys - 1).all()):
        assert _close(cpu_attention.attend(q, k, v), want)  # no mask: every key


@needs_kernel
@pytest.mark.parametrize("rows,heads,n,dim,keys", SHAPES)
@pytest.mark.parametrize("group", [1, 2])
def test_encoder_attention_with_padding_and_shared_beams_matches_torch(rows, heads, n, dim,
                                                                       keys, group):
    """Source padding (left-padded, as fairseq batches sources) and a sentence's keys shared by
    `group` consecutive rows (its beams), without copying them."""
    rows *= group
    q, k, v = _qkv(rows, heads, n, dim, keys, group, seed=keys + group)
    pad = torch.zeros(rows // group, keys, dtype=torch.bool)
    pad[0, :keys // 3] = True
    want = _attend(q, k, v, pad[:, None, None, :])
    assert _close(cpu_attention.attend(q, k, v, pad=pad[:, None, None, :]), want)
    assert _close(cpu_attention.attend(q, k, v), _attend(q, k, v, None))


@needs_kernel
@pytest.mark.parametrize("rows,heads,n,dim,keys", SHAPES)
def test_keys_read_through_origins_match_torch_on_gathered_keys(rows, heads, n, dim, keys):
    """origin [B, T]: row b's key t lies in cache row origin[b, t] (beam search histories
    recorded, not copied; more cache rows than query rows once rows have left). The same as
    torch on keys gathered row by row and slot by slot."""
    cache_rows = rows + 2
    q, k, v = _qkv(cache_rows, heads, n, dim, keys, seed=rows + keys)
    q = q[:rows]
    g = torch.Generator().manual_seed(dim + keys)
    origin = torch.randint(0, cache_rows, (rows, keys + 3), generator=g)  # wider than T
    start = torch.full((rows,), max(keys - n, 0))
    slots = torch.arange(keys)
    k_rows = k[origin[:, :keys], :, slots].transpose(1, 2)
    v_rows = v[origin[:, :keys], :, slots].transpose(1, 2)
    positions = start[:, None] + torch.arange(n)[None, :]
    mask = (torch.arange(keys)[None, None, :] > positions[:, :, None])[:, None]
    want = _attend(q, k_rows, v_rows, mask)
    assert _close(cpu_attention.attend(q, k, v, start=start, origin=origin), want)
    if keys > 1:  # the origins are read: rows' own keys give another answer
        assert not _close(cpu_attention.attend(q, k[:rows], v[:rows], start=start), want)


@needs_kernel
@pytest.mark.parametrize("group", [1, 3])
def test_sentences_read_the_key_rows_kv_rows_names(group):
    """kv_rows [B / group]: sentence s reads row kv_rows[s] of k, v and pad (encoder K/V left
    in place while sentences leave a beam search). The same as torch on the gathered rows."""
    heads, dim, keys = 2, 64, 7
    q, k, v = _qkv(5 * group, heads, 1, dim, keys, group, seed=group)
    q = q[:3 * group]
    pad = torch.zeros(5, keys, dtype=torch.bool)
    pad[4, :3] = True
    pad[1, 5:] = True
    rows = torch.tensor([4, 1, 3])
    want = _attend(q, k[rows], v[rows], pad[rows][:, None, None, :])
    got = cpu_attention.attend(q, k, v, pad=pad[:, None, None, :], kv_rows=rows)
    assert _close(got, want)
    assert not _close(cpu_attention.attend(q, k[:3], v[:3], pad=pad[:3, None, None, :]), want)
    with pytest.raises(ValueError, match="cannot share"):
        cpu_attention.attend(q, k, v, kv_rows=torch.tensor([4, 1]))


@needs_kernel
def test_masked_keys_get_no_weight_and_all_masked_gives_nan_as_torch():
    q, k, v = _qkv(2, 2, 1, 32, 6)
    v[:, :, :2] = 1e30  # masked values must not leak even at probability ~0
    pad = torch.zeros(2, 6, dtype=torch.bool)
    pad[:, :2] = True
    out = cpu_attention.attend(q, k, v, pad=pad)
    assert bool(out.abs().max() < 1e3)
    assert _close(out, _attend(q, k, v, pad[:, None, None, :]))
    pad[1] = True
    out = cpu_attention.attend(q, k, v, pad=pad)
    assert bool(out[1].isnan().all()) and bool(_attend(q, k, v, pad[:, None, None, :])[1]
                                               .isnan().all())
    assert not bool(out[0].isnan().any())


@needs_kernel
def _levels():
    from fairseq_fast.kernels import loader

    lib = loader.library() if small_gemm.available() else None
    return [] if lib is None else loader.runnable_levels(lib)


@needs_kernel
@pytest.mark.parametrize("level", _levels())
def test_masked_keys_appended_change_no_bit(monkeypatch, level):
    """In-flight batching pads a newcomer's encoder keys on the right to the longest source in
    flight: a row's attention over its own keys (its own left padding included) is the same
    bits with any number of masked keys after them, at every level and head size (the vector
    paths and the scalar one), for every key count (all tails of a group of four)."""
    from fairseq_fast.kernels import loader

    fn = loader.variant("fa_attend_f32", level)
    monkeypatch.setattr(loader, "function",
                        lambda name: fn if name == "fa_attend_f32" else None)
    for dim in (16, 64, 24):
        for keys in range(1, 14):
            q, k, v = _qkv(3, 2, 3, dim, keys, seed=keys)
            pad = torch.zeros(3, keys, dtype=torch.bool)
            pad[1, : min(2, keys - 1)] = True  # left padding of its own
            alone = cpu_attention.attend(q, k, v, pad=pad)
            for extra in (1, 2, 3, 5, 17):
                zeros = torch.zeros(3, 2, extra, dim)
                wide = cpu_attention.attend(
                    q, torch.cat([k, zeros], 2), torch.cat([v, zeros + 7.0], 2),
                    pad=torch.cat([pad, torch.ones(3, extra, dtype=torch.bool)], 1))
                assert torch.equal(alone, wide), (dim, keys, extra)


@needs_kernel
@pytest.mark.parametrize("level", _levels())
def test_a_sentences_beams_attended_together_have_the_bits_of_each_alone(monkeypatch, level):
    """Beams sharing their sentence's encoder keys are attended together, the keys read once
    for all of them: every beam's output and probabilities are the bits it gets with a copy of
    the keys of its own (attended alone), at every level and head size, for key counts around
    the tiles and groups of four, with several queries per beam, padding (a sentence all
    padding: NaN), and sentences reading other key rows (kv_rows)."""
    from fairseq_fast.kernels import loader

    fn = loader.variant("fa_attend_f32", level)
    monkeypatch.setattr(loader, "function",
                        lambda name: fn if name == "fa_attend_f32" else None)
    heads = 2
    for dim in (16, 64, 128, 24):
        for beams, n in ((4, 1), (5, 3), (2, 2), (9, 2)):  # 9 x 2: past the cap, each beam alone
            for keys in (1, 3, 4, 5, 63, 64, 65, 130):
                q, k, v = _qkv(3 * beams, heads, n, dim, keys, beams, seed=keys + dim)
                pad = torch.zeros(3, keys, dtype=torch.bool)
                pad[1, : keys // 2] = True
                pad[2] = True
                rows = torch.tensor([2, 0, 1])
                for kv_rows in (None, rows):
                    own = rows if kv_rows is not None else torch.arange(3)
                    mine = own.repeat_interleave(beams)
                    probs = torch.empty(3 * beams, heads, n, keys)
                    together = cpu_attention.attend(q, k, v, pad=pad, kv_rows=kv_rows,
                                                    probs=probs)
                    alone_probs = torch.empty_like(probs)
                    alone = cpu_attention.attend(q, k[mine], v[mine], pad=pad[mine],
                                                 probs=alone_probs)
                    case = (dim, beams, n, keys, kv_rows is not None)
                    assert torch.equal(together.nan_to_num(9.0), alone.nan_to_num(9.0)), case
                    assert torch.equal(probs.nan_to_num(9.0), alone_probs.nan_to_num(9.0)), case
                    fully_padded = (own == 2).repeat_interleave(beams)
                    assert bool(together[fully_padded].isnan().all()), case
                    assert not bool(together[~fully_padded].isnan().any()), case


def test_large_scores_are_stable():
    """Scores in the hundreds (softmax saturates): the max is subtracted before exp."""
    q, k, v = _qkv(1, 2, 2, 64, 20)
    q = q * 40
    assert _close(cpu_attention.attend(q, k, v), _attend(q, k, v, None))


def test_usable_only_for_float32_cpu_without_grad():
    q = torch.zeros(1, 1, 1, 16)
    assert cpu_attention.usable(q) == small_gemm.available()
    assert not cpu_attention.usable(q.double())
    with torch.enable_grad():
        assert not cpu_attention.usable(q.clone().requires_grad_())


DICT = make_dictionary(24)
TASK = DummyTask(DICT, DICT)


@needs_kernel
@pytest.mark.parametrize("need_attn", [False, True])
def test_lean_decoder_takes_the_kernel_in_float32_and_agrees(monkeypatch, need_attn):
    """Ragged rows (a verify window at different lengths) through a float32 decoder: the kernel
    is called for self- and encoder attention (not for the last layer's encoder attention when
    its weights are wanted), logits agree with the torch path, and kernels=False never calls it."""
    model = translation_model(TASK, layers=2, dim=64, heads=4, ffn=128, seed=3,
                              dtype=torch.float32)
    sample = source_batch(DICT, [7, 5, 9], seed=1)
    calls = []
    real = cpu_attention.attend
    monkeypatch.setattr(cpu_attention, "attend",
                        lambda *a, **kw: calls.append(1) or real(*a, **kw))
    results = {}
    for fused in (True, False):
        lean = LeanDecoder(model.decoder)  # the Python layer path (the C layers:
        lean.fused_attention = fused       # test_fused_layer.py)
        with torch.no_grad():
            enc = model.encoder.forward_torchscript(sample["net_input"])
            state = lean.init_state(enc, 3, 16, torch.float32, torch.device("cpu"))
            tokens = torch.randint(4, 24, (3, 8), generator=torch.Generator().manual_seed(0))
            lean.forward(state, tokens[:, :4])
            state.rollback_to(torch.tensor([4, 2, 3]))  # ragged: rows at 4, 2, 3 inputs
            results[fused] = lean.forward(state, tokens[:, 4:7], need_attn=need_attn)
        if fused:
            assert len(calls) == 2 * 2 * 2 - (1 if need_attn else 0)
            calls.clear()
    assert calls == []
    if need_attn:
        assert _close(results[True][1], results[False][1])
        results = {f: r[0] for f, r in results.items()}
    assert _close(results[True], results[False])
    assert LeanDecoder(model.decoder, kernels=False).fused_attention is False
