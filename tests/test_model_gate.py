"""Every fairseq model a user brings gets stock's output: on the fast path where model_gate.py
lists all of its decoder, on fairseq's own path (with one log line naming the reason) where not.

The property test draws decoder configurations over the options the gate must know — quant-noise,
adaptive input and softmax (tied or not), NormFormer's scales, layernorm_embedding, no
positions, project_in/out dims, cross_self_attention, layerdrop, activation checkpointing,
character inputs, GELU, pre-/post-norm, learned/sinusoidal positions — for translation and
language models, tiny, in float64. The plugin's default generator (beam search and sampling),
speculative and BiLD at rollback 0 are built by FairseqTask.build_generator, as the CLIs and the
hub build them, and must give exactly what stock gives, once as they are and once with every
--no-fast-* flag on. Configurations the gate refuses must log the reason and run stock's path;
all others must run on the fast path. No exception, ever.

The named tests run the configurations that once went wrong through the real command-line
tools (model_zoo.py trains them).
"""
import argparse
import hashlib
import logging
import os
import re
from contextlib import contextmanager
from unittest import mock

import pytest
import torch
from fairseq.models.transformer import TransformerModel, base_architecture
from fairseq.models.transformer_lm import TransformerLanguageModel, base_lm_architecture
from fairseq.tasks import FairseqTask
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fairseq_fast.speculative import draft_loading
from fairseq_fast.decoding import model_gate
from fairseq_fast.generators.bild import BiLDSequenceGenerator
from fairseq_fast.decoding.ensemble import FastEnsembleModel
from fairseq_fast.decoding.fused_layer import FusedEncoder
from fairseq_fast.generators.speculative import SpeculativeSequenceGenerator
from model_factory import make_dictionary, prompt_batch, source_batch
from test_cli import assert_same as assert_same_cli
from test_cli import hypotheses, run
from test_fast_defaults import Task, assert_same, gen_args

DICT = make_dictionary(16)
TASK = Task(DICT)
SETTINGS = dict(deadline=None, derandomize=True,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
NO_FAST = dict(no_fast_cache=True, no_fast_prefill=True, no_fast_linear=True,
               no_fast_ngram=True, no_fast_beam=True, no_fast_diverse=True)
# what the gate must refuse, and the words its reason holds
REFUSED = {"cross_self_attention": "cross_self_attention",
           "character_inputs": "CharacterTokenEmbedder"}

configs = st.fixed_dictionaries({
    "lm": st.booleans(),
    "layers": st.integers(1, 2),
    "heads": st.sampled_from([1, 2]),
    "normalize_before": st.booleans(),
    "learned_pos": st.booleans(),
    "no_positions": st.sampled_from([False, False, True]),
    "layernorm_embedding": st.booleans(),
    "no_scale_embedding": st.booleans(),
    "quant_noise": st.booleans(),
    "adaptive": st.sampled_from(["no", "no", "softmax", "input", "both", "tied"]),
    "project_dims": st.booleans(),
    "normformer": st.booleans(),
    "layerdrop": st.booleans(),
    "checkpoint_activations": st.booleans(),
    "gelu": st.booleans(),
    "share": st.booleans(),
    "cross_self_attention": st.sampled_from([False, False, False, True]),
    "character_inputs": st.sampled_from([False, False, False, True]),
    "seed": st.integers(0, 10_000),
})


def model_args(c: dict) -> argparse.Namespace:
    """fairseq options for config c (combinations fairseq cannot build are left out)."""
    adaptive = c["adaptive"] if c["lm"] else ("softmax" if c["adaptive"] != "no" else "no")
    a = dict(decoder_layers=c["layers"], decoder_embed_dim=16, decoder_ffn_embed_dim=32,
             decoder_attention_heads=c["heads"], decoder_learned_pos=c["learned_pos"],
             decoder_normalize_before=c["normalize_before"], dropout=0.0,
             attention_dropout=0.0, max_target_positions=64,
             no_token_positional_embeddings=c["no_positions"],
             layernorm_embedding=c["layernorm_embedding"],
             no_scale_embedding=c["no_scale_embedding"],
             activation_fn="gelu" if c["gelu"] else "relu",
             cross_self_attention=c["cross_self_attention"] and not c["lm"],
             checkpoint_activations=c["checkpoint_activations"],
             decoder_layerdrop=0.3 if c["layerdrop"] else 0.0,
             scale_attn=c["normformer"], scale_fc=c["normformer"],
             scale_heads=c["normformer"], scale_resids=c["normformer"])
    if c["quant_noise"]:
        # block size 1: adaptive input's and softmax's narrow bands are no multiple of more
        a.update(quant_noise_pq=0.1, quant_noise_pq_block_size=1)
    if adaptive in ("softmax", "both", "tied"):
        a.update(adaptive_softmax_cutoff="6,10")
    if adaptive in ("input", "both", "tied"):
        a.update(adaptive_input=True, adaptive_input_cutoff="6,10")
    if adaptive == "tied":
        a.update(tie_adaptive_weights=True, tie_adaptive_proj=True)
    # fairseq cannot build a tied adaptive softmax, or run quant-noise's projection, on inputs of
    # another width than the layers'
    dims = 24 if c["project_dims"] and adaptive != "tied" and not c["quant_noise"] else 16
    if c["lm"]:
        a.update(decoder_input_dim=dims, decoder_output_dim=dims, tokens_per_sample=64,
                 add_bos_token=False,
                 share_decoder_input_output_embed=c["share"] and adaptive != "input")
        if c["character_inputs"] and adaptive in ("no", "softmax"):
            a.update(character_embeddings=True, share_decoder_input_output_embed=False, character_filters="[(1, 8), (2, 8)]",
                     character_embedding_dim=4, char_embedder_highway_layers=1)
    else:
        a.update(encoder_layers=1, encoder_embed_dim=16, encoder_ffn_embed_dim=32,
                 encoder_attention_heads=c["heads"], encoder_learned_pos=c["learned_pos"],
                 encoder_normalize_before=c["normalize_before"], max_source_positions=64,
                 encoder_layerdrop=0.3 if c["layerdrop"] else 0.0,
                 decoder_output_dim=dims, share_decoder_input_output_embed=(
                     c["share"] and not c["project_dims"]))
    return argparse.Namespace(**a)


def expected_refusal(args: argparse.Namespace):
    if getattr(args, "cross_self_attention", False):
        return REFUSED["cross_self_attention"]
    if getattr(args, "character_embeddings", False):
        return REFUSED["character_inputs"]
    return None


def build(c: dict, args: argparse.Namespace, seed: int, layers=None):
    torch.manual_seed(seed)
    args = argparse.Namespace(**vars(args))
    if layers is not None:
        args.decoder_layers = layers
    if c["lm"]:
        base_lm_architecture(args)
        model = TransformerLanguageModel.build_model(args, TASK)
    else:
        base_architecture(args)
        model = TransformerModel.build_model(args, TASK)
    with torch.no_grad():  # decisive outputs; scales and norms away from their identity init
        for name, p in model.named_parameters():
            if name.endswith(("c_attn", "w_resid")) or "norm" in name or "_ln" in name:
                p.add_(0.3 * torch.randn_like(p))
        for m in model.modules():
            if isinstance(m, torch.nn.Linear) and m.out_features == len(DICT):
                m.weight.mul_(4.0)
    return model.double().eval()


@contextmanager
def gate_log():
    """The gate's log lines during the block (its once-per-process memory cleared)."""
    model_gate._logged.clear()
    records = []
    handler = logging.Handler(logging.WARNING)
    handler.emit = lambda record: records.append(record.getMessage())
    logger = logging.getLogger("fairseq_fast")
    logger.addHandler(handler)
    try:
        yield records
    finally:
        logger.removeHandler(handler)


def build_pair(models, args):
    ours = TASK.build_generator(models, args)
    stock = FairseqTask.build_generator.__wrapped__(TASK, models, args)
    return ours, stock


def compare(ours, stock, models, sample, prefix, seed=0):
    """Hypotheses, scores, positional scores and (but from the draft-model generators, which
    keep none) attention equal stock's."""
    torch.manual_seed(seed)
    want = stock.generate(models, sample, prefix_tokens=prefix)
    torch.manual_seed(seed)
    got = ours.generate(models, sample, prefix_tokens=prefix)
    if isinstance(ours, SpeculativeSequenceGenerator):
        want = [[dict(h, attention=None) for h in beams] for beams in want]
    assert_same(want, got, 1)


def plain_config(**changes) -> dict:
    """A configuration of the kind the fast path takes (1 layer, 2 heads, no extras), changed."""
    c = dict(lm=False, layers=1, heads=2, normalize_before=False, learned_pos=False,
             no_positions=False, layernorm_embedding=False, no_scale_embedding=False,
             quant_noise=False, adaptive="no", project_dims=False, normformer=False,
             layerdrop=False, checkpoint_activations=False, gelu=False, share=False,
             cross_self_attention=False, character_inputs=False, seed=1)
    c.update(changes)
    return c


def batch(c: dict, seed: int):
    if c["lm"]:
        return prompt_batch(DICT, [2, 0, 3], seed=seed)
    return source_batch(DICT, [4, 2, 6], seed=seed), None


@settings(max_examples=28, **SETTINGS)
@given(c=configs, beam=st.sampled_from([1, 3]))
def test_every_configuration_gets_stocks_output(c, beam):
    args = model_args(c)
    refused = expected_refusal(args)
    target = build(c, args, c["seed"])
    draft = build(c, args, c["seed"] + 1, layers=1)
    sample, prefix = batch(c, c["seed"])
    path = os.path.abspath(__file__)  # any existing file: load_draft is stood in for below
    runs = [("default", dict(beam=beam)),
            ("sampling", dict(beam=2, sampling=True, sampling_topk=4)),
            ("speculative", dict(beam=1, generator="speculative", draft_path=path,
                                 draft_len=3)),
            ("bild", dict(beam=1, generator="bild", draft_path=path,
                          bild_rollback_threshold=0.0))]
    with mock.patch.object(draft_loading, "load_draft", return_value=draft):
        for flags in ({}, NO_FAST):
            for name, options in runs:
                args_gen = gen_args(max_len_b=8, **options, **flags)
                stock_args = gen_args(max_len_b=8, **{**options, "generator": "default"},
                                      **flags)
                with gate_log() as log:
                    ours = TASK.build_generator([target], args_gen)
                stock = FairseqTask.build_generator.__wrapped__(TASK, [target], stock_args)
                compare(ours, stock, [target], sample, prefix, seed=c["seed"])
                fast = (isinstance(ours, SpeculativeSequenceGenerator)
                        or isinstance(getattr(ours, "model", None), FastEnsembleModel))
                if name in ("default", "sampling") and flags.get("no_fast_cache"):
                    assert not fast and not log  # stock's decoding path was asked for
                elif refused:
                    assert not fast
                    assert len(log) == 1 and refused in log[0], log
                else:
                    assert fast and not log, log
                    assert (name == "bild") == isinstance(ours, BiLDSequenceGenerator)


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
def test_layerdrop_sampling_reads_stocks_random_stream(dtype):
    """A LayerDrop decoder and encoder draw random numbers at every forward pass, also in eval;
    the fast path draws the same ones at the same points (in float32 the encoder runs on the C
    layers), so sampling with a seed gives stock's samples; without the draws it does not."""
    from fairseq_fast.decoding import ensemble as fast_ensemble
    from fairseq_fast.decoding import fused_layer

    c = plain_config(layers=2, layerdrop=True, seed=3)
    model = build(c, model_args(c), 3).to(dtype)
    sample = source_batch(DICT, [5, 3, 6, 2], seed=3)
    ours, stock = build_pair([model], gen_args(beam=3, sampling=True, temperature=3.0,
                                               max_len_b=10))
    assert isinstance(ours.model, FastEnsembleModel)

    def same():
        torch.manual_seed(11)
        want = stock.generate([model], sample)
        torch.manual_seed(11)
        got = ours.generate([model], sample)
        return all(w["tokens"].tolist() == g["tokens"].tolist()
                   and abs(float(w["score"]) - float(g["score"])) < 1e-4
                   for ws, gs in zip(want, got) for w, g in zip(ws, gs))

    assert same()
    for module in (fast_ensemble, fused_layer):
        if module is fused_layer and dtype == torch.float64:
            continue  # the C encoder runs float32 only
        with mock.patch.object(module, "layerdrop_draws"):  # the draws left out
            assert not same()


@pytest.mark.parametrize("full_context", [False, True])
def test_alignment_model_with_alignment_layer_and_heads(full_context):
    """transformer_align with --alignment-layer 0 and --alignment-heads 1: in incremental
    decoding fairseq's decoder returns the last layer's attention over all heads (what the fast
    path keeps); the layer and heads apply to forward_align (fairseq's own code, run after the
    search with full_context_alignment). Hypotheses, attention and alignments equal stock's."""
    from fairseq.models.transformer_align import TransformerAlignModel, transformer_align

    torch.manual_seed(4)
    args = argparse.Namespace(
        encoder_layers=1, decoder_layers=2, encoder_embed_dim=16, decoder_embed_dim=16,
        encoder_ffn_embed_dim=32, decoder_ffn_embed_dim=32, encoder_attention_heads=2,
        decoder_attention_heads=2, dropout=0.0, max_source_positions=64,
        max_target_positions=64, alignment_layer=0, alignment_heads=1,
        full_context_alignment=full_context)
    transformer_align(args)
    model = TransformerAlignModel.build_model(args, TASK).double().eval()
    for options in (dict(beam=3), dict(beam=1, no_fast_beam=True)):
        ours, stock = build_pair([model], gen_args(max_len_b=8, print_alignment="hard",
                                                   **options))
        assert isinstance(ours.model, FastEnsembleModel)
        compare(ours, stock, [model], source_batch(DICT, [4, 6, 3], seed=2), None)


def test_an_ensemble_of_two_configurations_runs_fast():
    base = plain_config(layers=2, learned_pos=True, share=True)
    other = dict(base, quant_noise=True, normalize_before=True, normformer=True, share=False)
    models = [build(base, model_args(base), 1), build(other, model_args(other), 2)]
    ours, stock = build_pair(models, gen_args(beam=3, max_len_b=10))
    assert isinstance(ours.model, FastEnsembleModel)
    compare(ours, stock, models, source_batch(DICT, [4, 7, 2], seed=5), None)


def test_an_ensemble_with_different_dictionaries_keeps_stocks_path():
    c = plain_config()
    first = build(c, model_args(c), 1)
    second = build(c, model_args(c), 2)
    other = make_dictionary(16)
    other.symbols[5], other.symbols[6] = other.symbols[6], other.symbols[5]
    second.decoder.dictionary = other
    with gate_log() as log:
        ours = TASK.build_generator([first, second], gen_args(beam=2))
    assert not isinstance(ours.model, FastEnsembleModel)
    assert len(log) == 1 and "different target dictionaries" in log[0]


@pytest.mark.parametrize("change,reason", [
    (lambda d: d.layers[0].fc1.register_forward_hook(lambda *a: None), "forward hook"),
    (lambda d: setattr(d.layers[0].self_attn, "forward", lambda *a, **k: None), "replaced"),
    (lambda d: d.layers[0].add_module("extra", torch.nn.Linear(2, 2)), "layers.0.extra"),
    (lambda d: (setattr(d.dropout_module, "apply_during_inference", True),
                setattr(d.dropout_module, "p", 0.1)), "--retain-dropout"),
    (lambda d: setattr(d.layers[0].self_attn, "add_zero_attn", True), "add_zero_attn"),
    (lambda d: setattr(d, "embed_positions", torch.nn.Identity()), "Identity positions"),
])
def test_gate_refuses_what_it_does_not_list(change, reason):
    c = plain_config()
    model = build(c, model_args(c), 1)
    assert model_gate.decoder_refusal(model.decoder) is None
    change(model.decoder)
    refusal = model_gate.decoder_refusal(model.decoder)
    assert refusal is not None and reason in refusal


def test_encoder_the_gate_refuses_runs_on_fairseqs_code():
    c = plain_config()
    model = build(c, model_args(c), 1).float()
    linear = mock.MagicMock()
    assert model_gate.encoder_refusal(model.encoder) is None
    model.encoder.layers[0].final_layer_norm.register_forward_pre_hook(lambda *a: None)
    with gate_log() as log:
        assert FusedEncoder.build(model.encoder, linear) is None
    assert len(log) == 1 and "encoder.layers.0.final_layer_norm" in log[0]


# -- through the real command-line tools ---------------------------------------------------------
@pytest.fixture(scope="session")
def zoo(tiny_pair):
    import model_zoo

    digest = hashlib.sha1(open(model_zoo.__file__, "rb").read()).hexdigest()[:10]
    return model_zoo.build(tiny_pair, os.path.join(os.path.dirname(tiny_pair),
                                                   f"model_zoo-{digest}"))


_stock_runs = {}


def run_stock(tool, args, stdin=None):
    """Stock's run of `args`, once per session (several tests compare against the same one)."""
    key = (tool, tuple(args), stdin)
    if key not in _stock_runs:
        _stock_runs[key] = run(tool, args, plugin=False, stdin=stdin)
    return _stock_runs[key]


def _generate(tiny_pair, zoo, name, *extra):
    return [os.path.join(tiny_pair, "data-bin"), "--path", os.path.join(zoo, f"{name}.pt"),
            "--gen-subset", "test", "--batch-size", "8", *extra]


@pytest.mark.parametrize("name", ["quant_noise", "prenorm_nopos"])
@pytest.mark.parametrize("extra,ours", [
    (["--beam", "1"], []),
    (["--beam", "5"], []),
    (["--beam", "5"], ["--no-fast-linear", "--no-fast-beam", "--no-fast-prefill"]),
    (["--beam", "1"], ["--generator", "speculative", "--draft-path", "{draft}"]),
    (["--beam", "1"], ["--generator", "bild", "--draft-path", "{draft}",
                       "--bild-rollback-threshold", "0"]),
])
def test_translation_models_through_fairseq_generate(tiny_pair, zoo, name, extra, ours):
    """The quant-noise model (its decoder projects the embeddings once more) and pre-norm with
    no positions and layernorm_embedding: stock's hypotheses, on the fast path (no fallback
    line), speculative and BiLD too."""
    ours = [a.format(draft=os.path.join(tiny_pair, "draft.pt")) for a in ours]
    stock = run_stock("fairseq-generate", _generate(tiny_pair, zoo, name, *extra))
    plugin = run("fairseq-generate", _generate(tiny_pair, zoo, name, *extra, *ours))
    assert_same_cli(stock, plugin)
    tells_sources_apart(hypotheses(stock.stdout).values())
    assert "keeping fairseq's" not in plugin.stderr and "instead" not in plugin.stderr
    if "--generator" not in ours:
        assert "FastSequenceGenerator with fast cache" in plugin.stderr


def tells_sources_apart(hyps):
    """(score, text) of each hypothesis: not every text empty, not every score one (outputs that
    depend on the input, which a comparison with stock needs to mean anything)."""
    hyps = list(hyps)
    assert any(text for _, text in hyps), hyps
    assert len({score for score, _ in hyps}) > 1, hyps


def _lm_lines(result):
    assert result.returncode == 0, result.stderr[-2000:]
    return [line for line in result.stdout.splitlines() if line.startswith(("H-", "P-"))]


@pytest.mark.parametrize("extra,ours", [
    (["--beam", "1"], []),
    (["--beam", "4", "--nbest", "2"], []),
    (["--beam", "1"], ["--generator", "speculative", "--draft-path", "{lm}"]),
    (["--beam", "1"], ["--generator", "speculative", "--draft-method", "ngram"]),
])
def test_adaptive_input_language_model_through_fairseq_interactive(tiny_pair, zoo, extra, ours):
    """transformer_lm with adaptive input, adaptive softmax and tied adaptive weights (the
    wiki103 configuration): prompts answered as stock answers them, on the fast path."""
    lm = os.path.join(zoo, "adaptive_lm.pt")
    ours = [a.format(lm=lm) for a in ours]
    prompts = "".join(" ".join(line.split()[:2]) + "\n" for line in open(
        os.path.join(tiny_pair, "raw", "test.tgt")).read().splitlines()[:10])
    common = [os.path.join(zoo, "lm-bin"), "--task", "language_modeling", "--path", lm,
              "--max-len-b", "12", "--min-len", "6", "--buffer-size", "4", "--batch-size", "4"]
    stock = run_stock("fairseq-interactive", common + extra, stdin=prompts)
    plugin = run("fairseq-interactive", common + extra + ours, stdin=prompts)
    want, got = _lm_lines(stock), _lm_lines(plugin)
    assert len(want) == len(got) == 20 * (2 if "--nbest" in extra else 1)
    tells_sources_apart((float(line.split("\t")[1]), line.split("\t")[2])
                        for line in want if line.startswith("H-"))
    for a, b in zip(want, got):  # H-i score text / P-i positional scores
        a, b = a.split("\t"), b.split("\t")
        assert a[0] == b[0] and a[2:] == b[2:]
        scores = [(float(x), float(y)) for x, y in zip(a[1].split(), b[1].split())]
        assert len(scores) == len(a[1].split()) == len(b[1].split())
        # P- lines print 4 decimals: float32's last-digit differences can round to one unit
        # of the 4th apart, which the subtraction of the printed values makes 1e-4 and a hair
        assert max(abs(x - y) for x, y in scores) <= 1e-4 + 1e-12
    assert "keeping fairseq's" not in plugin.stderr
    assert re.search(r"FastSequenceGenerator with fast cache|speculative decoding: 10 sentences",
                     plugin.stderr)
