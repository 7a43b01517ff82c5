"""unpadded_encoder.py: long sources of different lengths are encoded without their padding, and
the result is fairseq's padded encoding (float64: the same numbers at every real position, the
same mask and lengths), for left and right padding, learned and sinusoidal positions, pre- and
post-norm; the generators built on it still equal stock; it stands aside wherever its reasoning
does not hold."""
import pytest
import torch
from fairseq.modules.layer_drop import LayerDropModuleList

from fairseq_fast.decoding import unpadded_encoder
from fairseq_fast.decoding.fused_layer import encode
from fairseq_fast.decoding.unpadded_encoder import MIN_TOKENS, encode_by_length
from model_factory import make_dictionary, source_batch, translation_model
from test_fast_defaults import Task, gen_args, run_both

DICT = make_dictionary(16)
TASK = Task(DICT)
LONG = [MIN_TOKENS + 60, MIN_TOKENS, 20, MIN_TOKENS + 7, MIN_TOKENS, 3]


def _model(**kw):
    return translation_model(TASK, max_pos=512, enc_layers=2, **kw)


def _right_padded(sample, pad):
    """The same sentences padded on the right."""
    src = sample["net_input"]["src_tokens"]
    right = torch.full_like(src, pad)
    for i, row in enumerate(src):
        body = row[row.ne(pad)]
        right[i, :body.numel()] = body
    return {**sample, "net_input": {**sample["net_input"], "src_tokens": right}}


@pytest.mark.parametrize("kw", [dict(), dict(learned_pos=True, layernorm_embedding=True),
                                dict(normalize_before=True)], ids=["sinusoidal", "bart", "pre"])
@pytest.mark.parametrize("side", ["left", "right"])
def test_encoding_by_length_is_fairseqs_padded_encoding(kw, side):
    model = _model(**kw)
    sample = source_batch(DICT, LONG, seed=3)
    if side == "right":
        sample = _right_padded(sample, DICT.pad())
    net_input = sample["net_input"]
    with torch.no_grad():
        want = model.encoder.forward_torchscript(net_input)
        have = encode_by_length(model.encoder, net_input)
    assert have is not None
    real = ~want["encoder_padding_mask"][0]
    assert torch.equal(have["encoder_padding_mask"][0], want["encoder_padding_mask"][0])
    assert torch.equal(have["src_lengths"][0], want["src_lengths"][0])
    out_have, out_want = (d["encoder_out"][0].transpose(0, 1) for d in (have, want))
    assert out_have.shape == out_want.shape
    assert torch.allclose(out_have[real], out_want[real], atol=1e-12, rtol=0)
    assert torch.isfinite(out_have).all()  # the padding is masked by its readers, never NaN
    emb_have, emb_want = have["encoder_embedding"][0], want["encoder_embedding"][0]
    assert torch.allclose(emb_have[real], emb_want[real], atol=1e-12, rtol=0)
    assert set(have) == set(want)


@pytest.mark.parametrize("search", [dict(beam=1), dict(beam=3), dict(beam=2, sampling=True)])
def test_generation_on_long_ragged_sources_equals_stock(monkeypatch, search):
    calls = []
    original = unpadded_encoder.encode_by_length

    def counted(encoder, net_input):
        out = original(encoder, net_input)
        calls.append(out is not None)
        return out

    monkeypatch.setattr("fairseq_fast.decoding.fused_layer.encode_by_length", counted)
    model = _model(learned_pos=True)
    sample = source_batch(DICT, LONG, seed=5)
    run_both([model], gen_args(max_len_b=6, **search), sample, seed=1)
    assert calls == [True]


def test_it_stands_aside_where_its_reasoning_does_not_hold(monkeypatch):
    model = _model()
    long = source_batch(DICT, LONG)["net_input"]
    with torch.no_grad():
        assert encode_by_length(model.encoder, long) is not None
        # short sentences, and long ones without padding
        assert encode_by_length(model.encoder, source_batch(DICT, [20, 3])["net_input"]) is None
        same = source_batch(DICT, [MIN_TOKENS] * 3)["net_input"]
        assert encode_by_length(model.encoder, same) is None
        # inputs it does not know how to split
        assert encode_by_length(model.encoder, {**long, "src_lang_id": torch.zeros(6)}) is None
        # a hook on a module: the model gate refuses
        handle = model.encoder.layers[0].register_forward_hook(lambda *a: None)
        assert encode_by_length(model.encoder, long) is None
        handle.remove()
        # switched off
        monkeypatch.setenv(unpadded_encoder.ENV, "0")
        assert encode_by_length(model.encoder, long) is None
        monkeypatch.delenv(unpadded_encoder.ENV)
        # layer drop draws random numbers per forward pass: one pass, as stock
        model.encoder.layers = LayerDropModuleList(p=0.1, modules=list(model.encoder.layers))
        assert encode_by_length(model.encoder, long) is None
        # and encode() then gives fairseq's own encoding
        torch.manual_seed(0)
        want = model.encoder.forward_torchscript(long)["encoder_out"][0]
        torch.manual_seed(0)
        assert torch.equal(encode(model, None, long)["encoder_out"][0], want)
