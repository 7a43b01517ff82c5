"""packed_encoder.py: long sources encoded with each layer's matmuls over the batch's real tokens
packed together and attention sentence by sentence. Its steps are fairseq's encoder (float64 on
F.linear: the same numbers at every real position, for left and right padding, learned and
sinusoidal positions, pre- and post-norm, ReLU and GELU); on the kernel a sentence's encoding has
the same bits whatever its batch-mates; encode() takes it exactly where it should, and the
generators built on it give stock's tokens."""
import pytest
import torch

from fairseq_fast.decoding import fused_layer, packed_encoder, unpadded_encoder
from fairseq_fast.decoding.fused_layer import KERNEL_MAX_ROWS, FusedEncoder, encode
from fairseq_fast.decoding.lean_decoder import LeanDecoder
from fairseq_fast.decoding.packed_encoder import encode_packed
from fairseq_fast.kernels import small_gemm
from model_factory import make_dictionary, source_batch, translation_model
from test_fast_defaults import Task, build_pair, gen_args
from test_unpadded_encoder import _right_padded

needs_kernel = pytest.mark.skipif(not small_gemm.available(),
                                  reason="kernels not buildable here")
DICT = make_dictionary(16)
TASK = Task(DICT)
LONG = [KERNEL_MAX_ROWS + 40, 12, KERNEL_MAX_ROWS, 1, 75]  # tokens before each source's EOS
SMALL = dict(enc_layers=2, dim=32, heads=4, ffn=64, max_pos=512)


def _outputs(have, want):
    """The encoder-output dicts' entries agree but for encoder_out, returned at real positions."""
    assert set(have) == set(want)
    for key in ("encoder_padding_mask", "src_lengths"):
        assert torch.equal(have[key][0], want[key][0])
    real = ~want["encoder_padding_mask"][0]
    assert torch.equal(have["encoder_embedding"][0][real], want["encoder_embedding"][0][real])
    out_have, out_want = (d["encoder_out"][0].transpose(0, 1) for d in (have, want))
    assert out_have.shape == out_want.shape
    assert not out_have[~real].any()  # padding positions hold zeros
    return out_have[real], out_want[real]


@pytest.mark.parametrize("kw", [dict(), dict(learned_pos=True, layernorm_embedding=True),
                                dict(normalize_before=True), dict(activation="gelu")],
                         ids=["sinusoidal", "bart", "pre", "gelu"])
@pytest.mark.parametrize("side", ["left", "right"])
def test_its_steps_are_fairseqs_encoder(kw, side):
    model = translation_model(TASK, **SMALL, **kw)  # float64
    sample = source_batch(DICT, [30, 12, 1, 25], seed=3)
    if side == "right":
        sample = _right_padded(sample, DICT.pad())
    net_input = sample["net_input"]
    with torch.no_grad():
        want = model.encoder.forward_torchscript(net_input)
        have = encode_packed(model.encoder, list(model.encoder.layers), None, net_input)
    out_have, out_want = _outputs(have, want)
    assert torch.allclose(out_have, out_want, atol=1e-12, rtol=0)
    assert out_want.abs().max() > 0.1


def _float32(**kw):
    model = translation_model(TASK, dtype=torch.float32, seed=2, **{**SMALL, **kw})
    fused = FusedEncoder.build(model.encoder, LeanDecoder(model.decoder).linear)
    assert fused is not None
    return model, fused


@needs_kernel
@pytest.mark.parametrize("kw", [dict(learned_pos=True, layernorm_embedding=True),
                                dict(normalize_before=True, activation="gelu")],
                         ids=["bart", "pre-gelu"])
def test_a_sentence_has_the_same_bits_whatever_its_batch_mates(kw):
    model, fused = _float32(**kw)
    batch = source_batch(DICT, LONG, seed=4)["net_input"]
    with torch.no_grad():
        assert fused.packable(batch["src_tokens"]) and not fused.usable(batch["src_tokens"])
        together = encode(model, fused, batch)
        want = model.encoder.forward_torchscript(batch)
        for i, n in enumerate(LONG):
            src = batch["src_tokens"][i:i + 1, -(n + 1):]
            alone = encode_packed(model.encoder, fused.layers.layers, fused.layers.linear,
                                  {"src_tokens": src, "src_lengths": torch.tensor([n + 1])})
            assert torch.equal(alone["encoder_out"][0][:, 0],
                               together["encoder_out"][0][-(n + 1):, i])
    out_have, out_want = _outputs(together, want)
    assert (out_have - out_want).abs().max() < 1e-4
    assert not torch.equal(out_have, out_want)  # the kernel's own float32 rounding, not stock's


@needs_kernel
def test_encode_takes_it_for_sources_too_long_for_one_fused_call(monkeypatch):
    """Sources longer than a fused call: packed; short ones: one fused call each; and it stands
    aside with FAIRSEQ_FAST_UNPADDED_ENCODER=0, the matmul kernel off, or autograd on."""
    model, fused = _float32()
    taken = []
    original = packed_encoder.encode_packed
    monkeypatch.setattr(fused_layer, "encode_packed",
                        lambda *a: taken.append(True) or original(*a))
    long = source_batch(DICT, LONG, seed=5)["net_input"]
    short = source_batch(DICT, [20, 7], seed=5)["net_input"]
    with torch.no_grad():
        stock = model.encoder.forward_torchscript(long)["encoder_out"][0]
        packed = encode(model, fused, long)["encoder_out"][0]
        assert taken == [True]
        assert not torch.equal(packed, stock)
        encode(model, fused, short)
        assert taken == [True]
        monkeypatch.setenv(unpadded_encoder.ENV, "0")
        assert torch.equal(encode(model, fused, long)["encoder_out"][0], stock)
        monkeypatch.delenv(unpadded_encoder.ENV)
        fused.layers.linear.kernel = False
        assert not fused.packable(long["src_tokens"])
        fused.layers.linear.kernel = True
        assert encode(model, fused, long) is not None and len(taken) == 2
    assert not fused.packable(long["src_tokens"])  # autograd on: fairseq's own encoder


@needs_kernel
@pytest.mark.parametrize("search", [dict(beam=1), dict(beam=3, lenpen=2.0,
                                                        no_repeat_ngram_size=3)],
                         ids=["greedy", "beam"])
def test_generation_on_long_sources_gives_stocks_tokens(monkeypatch, search):
    taken = []
    original = packed_encoder.encode_packed
    monkeypatch.setattr(fused_layer, "encode_packed",
                        lambda *a: taken.append(True) or original(*a))
    model = translation_model(TASK, dtype=torch.float32, seed=6, learned_pos=True,
                              layernorm_embedding=True, **SMALL)
    sample = source_batch(DICT, LONG, seed=7)
    args = gen_args(max_len_b=12, **search)
    ours, stock = build_pair([model], args)
    with torch.no_grad():
        want = stock.generate([model], sample)
        have = ours.generate([model], sample)
    assert taken == [True]
    for want_beams, have_beams in zip(want, have):
        for w, h in zip(want_beams, have_beams):
            assert h["tokens"].tolist() == w["tokens"].tolist()
            assert torch.allclose(h["positional_scores"], w["positional_scores"], atol=1e-4)
