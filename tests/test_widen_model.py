"""scripts/widen_model.py: a widened model decodes exactly as the original.

Tiny random fairseq Transformers (float64) widened x2 and x3 must give the original's greedy and
beam-5 hypotheses, every n-best entry, with scores within 1e-4, through fairseq's own
SequenceGenerator. Cases: post-norm and pre-norm, learned and sinusoidal positions (sinusoidal
ones become learned), untied, decoder-tied and all-shared embeddings (kept tied by scaling the
feature layer norm, or untied), no embedding scale with layernorm_embedding. Deliberately wrong
widenings must fail the same comparison, which proves it can fail. A checkpoint widened on disk
(a tiny pair trained with fairseq-train) loads with checkpoint_utils and with stock
fairseq-generate, and decodes as the original.
"""
import argparse
import os
import sys

import pytest
import torch
from fairseq import checkpoint_utils
from fairseq.models.transformer import TransformerModel, base_architecture
from fairseq.sequence_generator import SequenceGenerator

from model_factory import DummyTask, make_dictionary, source_batch
from test_cli import TOOLS

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "scripts"))

import widen_model  # noqa: E402

BIN = os.path.dirname(sys.executable)
LENGTHS = [3, 7, 5, 1, 9, 6]


def build(task, seed=0, **flags):
    """A tiny Transformer (2 + 2 layers, 16 dims, 2 heads, FFN 32) in float64, and its args."""
    torch.manual_seed(seed)
    args = argparse.Namespace(
        encoder_layers=2, decoder_layers=2, encoder_embed_dim=16, decoder_embed_dim=16,
        encoder_ffn_embed_dim=32, decoder_ffn_embed_dim=32, encoder_attention_heads=2,
        decoder_attention_heads=2, dropout=0.0, attention_dropout=0.0,
        max_source_positions=64, max_target_positions=64, **flags)
    base_architecture(args)
    model = TransformerModel.build_model(args, task)
    with torch.no_grad():  # peaked output distributions, as a trained model has
        model.decoder.embed_tokens.weight.mul_(3.0)
        if not args.share_all_embeddings:
            model.encoder.embed_tokens.weight.mul_(3.0)
        if model.decoder.output_projection.weight is not model.decoder.embed_tokens.weight:
            model.decoder.output_projection.weight.mul_(4.0)
    return model.double().eval(), args


def widen(model, args, task, factor, untie=False):
    state, wide_args, notes = widen_model.widen_state_dict(model.state_dict(), args, factor,
                                                           untie=untie,
                                                           padding_idx=task.source_dictionary.pad())
    wide = TransformerModel.build_model(wide_args, task).double().eval()
    wide.load_state_dict(state, strict=True)
    return wide, wide_args, state, notes


def decode(model, tgt_dict, sample, beam):
    gen = SequenceGenerator([model], tgt_dict, beam_size=beam, max_len_b=24)
    with torch.no_grad():
        return gen.generate([model], sample)


def mismatch(want, got, tol=1e-4):
    """First difference between two generate() outputs (every n-best entry), or None."""
    for i, (a_list, b_list) in enumerate(zip(want, got)):
        for k, (a, b) in enumerate(zip(a_list, b_list)):
            if not torch.equal(a["tokens"], b["tokens"]):
                return f"sentence {i} hypothesis {k}: tokens {a['tokens']} != {b['tokens']}"
            if abs(float(a["score"]) - float(b["score"])) > tol:
                return f"sentence {i} hypothesis {k}: score {a['score']} != {b['score']}"
            if (a["positional_scores"] - b["positional_scores"]).abs().max() > tol:
                return f"sentence {i} hypothesis {k}: positional scores differ"
    return None


def assert_same_decoding(model, wide, task):
    sample = source_batch(task.source_dictionary, LENGTHS, seed=1)
    for beam in (1, 5):
        want = decode(model, task.target_dictionary, sample, beam)
        got = decode(wide, task.target_dictionary, sample, beam)
        assert mismatch(want, got) is None, (beam, mismatch(want, got))
        assert any(len(h[0]["tokens"]) > 2 for h in want)  # not every sentence ends at once


def tasks(shared):
    src = make_dictionary(30)
    return DummyTask(src, src if shared else make_dictionary(26))


CASES = {
    "post-norm, sinusoidal, untied": dict(),
    "pre-norm, learned, untied": dict(encoder_normalize_before=True,
                                      decoder_normalize_before=True,
                                      encoder_learned_pos=True, decoder_learned_pos=True),
    "post-norm, learned, decoder tied": dict(share_decoder_input_output_embed=True,
                                             encoder_learned_pos=True, decoder_learned_pos=True),
    "pre-norm, sinusoidal, all shared": dict(share_all_embeddings=True,
                                             encoder_normalize_before=True,
                                             decoder_normalize_before=True),
    "pre-norm, no final norm, all shared": dict(share_all_embeddings=True,
                                                encoder_normalize_before=True,
                                                decoder_normalize_before=True,
                                                no_decoder_final_norm=True),
    "no embed scale, layernorm_embedding, tied": dict(no_scale_embedding=True,
                                                      layernorm_embedding=True,
                                                      share_decoder_input_output_embed=True),
}


@pytest.mark.parametrize("factor", [2, 3])
@pytest.mark.parametrize("case", list(CASES))
def test_widened_model_decodes_as_the_original(case, factor):
    flags = CASES[case]
    task = tasks(flags.get("share_all_embeddings", False))
    model, args = build(task, **flags)
    wide, wide_args, state, notes = widen(model, args, task, factor)
    assert wide_args.decoder_embed_dim == factor * 16
    assert wide_args.decoder_attention_heads == factor * 2
    assert wide_args.decoder_ffn_embed_dim == factor * 32
    assert wide.decoder.layers[0].self_attn.head_dim == 8  # head_dim and its scaling unchanged
    assert wide.decoder.layers[0].self_attn.scaling == model.decoder.layers[0].self_attn.scaling
    tied = flags.get("share_all_embeddings") or flags.get("share_decoder_input_output_embed")
    if tied and not flags.get("no_decoder_final_norm"):
        assert wide.decoder.output_projection.weight is wide.decoder.embed_tokens.weight
        if flags.get("share_all_embeddings"):
            assert wide.encoder.embed_tokens.weight is wide.decoder.embed_tokens.weight
    elif tied:  # no layer norm to fold the scale into: untied, and said so
        assert not wide_args.share_all_embeddings
        assert wide.decoder.output_projection.weight is not wide.decoder.embed_tokens.weight
        assert any("UNTIED" in note for note in notes)
    assert_same_decoding(model, wide, task)


def test_untie_on_request():
    task = tasks(shared=True)
    model, args = build(task, share_all_embeddings=True, decoder_normalize_before=True,
                        encoder_normalize_before=True)
    wide, wide_args, _, notes = widen(model, args, task, 2, untie=True)
    assert not wide_args.share_all_embeddings and not wide_args.share_decoder_input_output_embed
    assert wide.encoder.embed_tokens.weight is not wide.decoder.embed_tokens.weight
    assert any("UNTIED (--untie)" in note for note in notes)
    assert_same_decoding(model, wide, task)


def _forget_division(state, args, factor):
    key = "decoder.layers.1.fc2.weight"  # one weight matrix not divided by F
    state[key] = state[key] * factor


def _forget_embed_scale(state, args, factor):
    for side in ("encoder", "decoder"):
        key = f"{side}.embed_tokens.weight"
        state[key] = state[key] * factor ** 0.5


def _widened_sinusoids(state, args, factor):
    args.encoder_learned_pos = args.decoder_learned_pos = False  # sinusoids of the new width
    for side in ("encoder", "decoder"):
        del state[f"{side}.embed_positions.weight"]


def _interleaved_heads(state, args, factor):
    # one layer's q_proj laid out [x1 x1 x2 x2 ...] while the rest is [x, x]: heads mismatch
    key = "decoder.layers.0.self_attn.q_proj"
    for part in ("weight", "bias"):
        w = state[f"{key}.{part}"]
        n = w.size(0) // factor
        order = torch.arange(w.size(0)).view(factor, n).t().reshape(-1)
        state[f"{key}.{part}"] = w[order]


def _forget_fold(state, args, factor):
    key = "decoder.layer_norm"  # the tied table's output scale not folded into the feature norm
    for part in ("weight", "bias"):
        state[f"{key}.{part}"] = state[f"{key}.{part}"] * factor ** 0.5


TIED = dict(share_all_embeddings=True, encoder_normalize_before=True,
            decoder_normalize_before=True)


@pytest.mark.parametrize("sabotage,flags", [(_forget_division, {}), (_forget_embed_scale, {}),
                                            (_widened_sinusoids, {}), (_interleaved_heads, {}),
                                            (_forget_fold, TIED)])
def test_wrong_widening_fails(sabotage, flags):
    task = tasks(shared=bool(flags))
    model, args = build(task, **flags)
    state, wide_args, _ = widen_model.widen_state_dict(model.state_dict(), args, 2)
    sabotage(state, wide_args, 2)
    wide = TransformerModel.build_model(wide_args, task).double().eval()
    wide.load_state_dict(state, strict=True)
    sample = source_batch(task.source_dictionary, LENGTHS, seed=1)
    assert any(mismatch(decode(model, task.target_dictionary, sample, beam),
                        decode(wide, task.target_dictionary, sample, beam)) is not None
               for beam in (1, 5))


def test_refuses_what_it_cannot_widen():
    task = tasks(shared=False)
    model, args = build(task)
    state = dict(model.state_dict(), **{"decoder.layers.0.c_attn": torch.ones(2)})
    with pytest.raises(widen_model.WidenError, match="c_attn"):
        widen_model.widen_state_dict(state, args, 2)
    with pytest.raises(widen_model.WidenError, match="positive integer"):
        widen_model.widen_state_dict(model.state_dict(), args, 0)


def _generate_stock(data, path, beam):
    env = dict(os.environ, TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD="1")
    result = TOOLS.run(
        [os.path.join(BIN, "fairseq-generate"), data, "--path", path, "--gen-subset", "test",
         "--beam", str(beam), "--batch-size", "16", "--required-batch-size-multiple", "1"],
        env=env, timeout=300)
    assert result.returncode == 0, result.stderr[-2000:]
    hyps = {}
    for line in result.stdout.splitlines():
        if line.startswith("H-"):
            ident, score, text = line.split("\t")
            hyps[ident] = (float(score), text)
    return hyps


def test_widened_checkpoint_loads_and_decodes_as_the_original(tiny_pair, tmp_path):
    data = os.path.join(tiny_pair, "data-bin")
    original = os.path.join(tiny_pair, "target.pt")
    widened = str(tmp_path / "target_x2.pt")
    notes = widen_model.widen_checkpoint(original, widened, 2)
    assert any("learned positions" in note for note in notes)
    assert widen_model.compare(original, widened, data) < 1e-4
    # stock fairseq-generate (no plugin), beam 5: same hypotheses, scores within 1e-4
    want, got = _generate_stock(data, original, 5), _generate_stock(data, widened, 5)
    assert want and want.keys() == got.keys()
    for k in want:
        assert got[k][1] == want[k][1], k
        assert abs(got[k][0] - want[k][0]) <= 1e-4, k
    # checkpoint_utils, untied, x3: what the benchmark loads
    untied = str(tmp_path / "target_x3.pt")
    widen_model.widen_checkpoint(original, untied, 3, untie=True)
    models, cfg, task = checkpoint_utils.load_model_ensemble_and_task(
        [untied], arg_overrides={"data": data})
    assert cfg.model.decoder_embed_dim == 3 * 32 and not cfg.model.share_decoder_input_output_embed
    base, _, _ = checkpoint_utils.load_model_ensemble_and_task([original],
                                                               arg_overrides={"data": data})
    task.load_dataset("test")
    ds = task.dataset("test")
    sample = ds.collater([ds[i] for i in range(12)])
    for beam in (1, 5):
        want = decode(base[0].eval(), task.target_dictionary, sample, beam)
        got = decode(models[0].eval(), task.target_dictionary, sample, beam)
        assert mismatch(want, got) is None, mismatch(want, got)


@pytest.mark.parametrize("shared", [False, True])
def test_a_draft_of_the_targets_first_layers_widened_with_it_shares_its_encoder(shared):
    """fairseq-fast-draft's drafts keep the target's encoder (frozen); widened as the target is,
    the draft still shares the widened target's encoder and computes the widened function of
    the original draft (benchmark_draft.py's widened draft)."""
    from fairseq_fast.draft import init
    from fairseq_fast.speculative.shared_encoder import same_encoder

    dictionary = make_dictionary(20)
    task = DummyTask(dictionary, dictionary)
    flags = ({"share_all_embeddings": True, "encoder_normalize_before": True,
              "decoder_normalize_before": True} if shared else {})
    target, args = build(task, seed=3, **flags)
    with torch.no_grad():  # float16 values, as in the checkpoints the tool reads
        for p in target.parameters():
            p.copy_(p.half().double())
    start = init.layer_dropped({"cfg": {"model": args}, "model": target.state_dict()}, 1,
                               train_encoder=False)
    draft_args = start["cfg"]["model"]
    draft = TransformerModel.build_model(draft_args, task).double().eval()
    draft.load_state_dict(start["model"], strict=True)
    wide_target, *_ = widen(target, args, task, 2)
    wide_draft, *_ = widen(draft, draft_args, task, 2)
    assert same_encoder(target, draft) and same_encoder(wide_target, wide_draft)
    sample = source_batch(dictionary, LENGTHS, seed=3)
    assert mismatch(decode(draft, dictionary, sample, 1),
                    decode(wide_draft, dictionary, sample, 1)) is None
