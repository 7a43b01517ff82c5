"""The plugin on a CUDA GPU: the CPU suite's equalities, run with the models and batches there.

Skipped where torch sees no GPU (CI has none). Float64 models, as in the CPU tests, so that a
batched verify pass and stock's one-position steps cannot round a near-tie apart; float16 is
checked on a trained pair against stock's own float16 output. fairseq's n-gram blocker has a
CUDA kernel (ngram_repeat_block_cuda, built when fairseq is installed with CUDA_HOME set; it
reads float32 log-probs only): where it is built, the plugin's blocker and the reference rule
that the float64 tests give stock are compared against it directly.
"""
import os

import pytest
import torch
from fairseq import utils
from fairseq.ngram_repeat_block import NGramRepeatBlock, is_cuda_extension_usable
from fairseq.sequence_generator import SequenceGenerator
from fairseq.tasks import FairseqTask
from hypothesis import given, settings
from hypothesis import strategies as st

from fairseq_fast.decoding.ensemble import FastEnsembleModel
from fairseq_fast.generators.bild import BiLDSequenceGenerator
from fairseq_fast.generators.fast import VectorisedNGramBlock
from fairseq_fast.generators.speculative import SpeculativeSequenceGenerator
from model_factory import reference_banned, source_batch, translation_model
from test_fast_defaults import (TASK as FAST_TASK, assert_same, build_pair, gen_args,
                                length_options)
from test_speculative_equality import (DICT, SETTINGS, ReferenceNGramBlock, compare, generation,
                                       model_shapes, translation_case)

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA GPU")
CUDA = torch.device("cuda")
STOCK_KERNEL = torch.cuda.is_available() and is_cuda_extension_usable()


def on_gpu(*models):
    return [m.to(CUDA) for m in models]


def gpu_sample(sample):
    return utils.move_to_cuda(sample)


@settings(max_examples=40, **SETTINGS)
@given(shape=model_shapes(False), beam=st.sampled_from([1, 2, 5]), opts=length_options,
       lengths=st.lists(st.integers(1, 9), min_size=1, max_size=4))
def test_default_generator_equals_stock(shape, beam, opts, lengths):
    """Greedy and beam search, lengths, penalties, n-gram blocking, prefixes: the plugin's default
    generator on the GPU equals stock's, beam by beam."""
    model, = on_gpu(translation_model(FAST_TASK, eos_bias=opts["eos_bias"], **shape))
    args = gen_args(beam=beam, max_len_a=opts["max_len_a"], max_len_b=opts["max_len_b"],
                    min_len=min(opts["min_len"], opts["max_len_b"]), lenpen=opts["lenpen"],
                    unkpen=opts["unkpen"], no_repeat_ngram_size=opts["ngram"])
    args.nbest = min(opts["nbest"], beam)
    ours, stock = build_pair([model], args)  # stock blocks n-grams by the reference rule
    assert isinstance(ours.model, FastEnsembleModel)  # the fast path, not fairseq's kept
    sample = gpu_sample(source_batch(DICT, lengths, seed=shape["seed"]))
    prefix = None
    if opts["prefix_size"]:
        g = torch.Generator().manual_seed(shape["seed"] + 1)
        prefix = torch.randint(DICT.nspecial, len(DICT), (len(lengths), opts["prefix_size"]),
                               generator=g).to(CUDA)
    expected = stock.generate([model], sample, prefix_tokens=prefix)
    got = ours.generate([model], sample, prefix_tokens=prefix)
    assert got[0][0]["tokens"].device.type == "cuda"
    assert_same(expected, got, args.nbest)


@settings(max_examples=40, **SETTINGS)
@given(target=model_shapes(False), draft=model_shapes(True), gen=generation,
       lengths=st.lists(st.integers(1, 10), min_size=1, max_size=5),
       prefix_size=st.sampled_from([0, 0, 1, 2]))
def test_speculative_greedy_equals_stock(target, draft, gen, lengths, prefix_size):
    """Draft lengths, the measured (adaptive) window length with its GPU clock, shortlists,
    n-gram blocking, prefixes: speculative greedy on the GPU equals stock greedy."""
    tgt, drf, sample, prefix = translation_case(target, draft, gen, lengths, prefix_size)
    tgt, drf = on_gpu(tgt, drf)
    compare(tgt, drf, gpu_sample(sample), None if prefix is None else prefix.to(CUDA), gen)


@settings(max_examples=20, **SETTINGS)
@given(target=model_shapes(False), gen=generation, method=st.sampled_from(["ngram", "layers"]),
       lengths=st.lists(st.integers(1, 10), min_size=1, max_size=5),
       prefix_size=st.sampled_from([0, 0, 1]))
def test_draft_free_greedy_equals_stock(target, gen, method, lengths, prefix_size):
    """--draft-method ngram (the lookup in tensor ops there) and layers on the GPU."""
    from test_draft_free import draft_free

    tgt, _, sample, prefix = translation_case(dict(target, layers=2), target, gen, lengths,
                                              prefix_size)
    tgt, = on_gpu(tgt)
    compare(tgt, None, gpu_sample(sample), None if prefix is None else prefix.to(CUDA), gen,
            build=draft_free(method))


@settings(max_examples=15, **SETTINGS)
@given(target=model_shapes(False), draft=model_shapes(True),
       fallback=st.floats(0.05, 0.95), rollback=st.floats(0.2, 4.0),
       max_small=st.integers(1, 6), lengths=st.lists(st.integers(1, 8), min_size=1, max_size=4))
def test_bild_on_gpu_equals_bild_on_cpu(target, draft, fallback, rollback, max_small, lengths):
    """BiLD's output is its own (not stock's): the GPU run must equal the CPU run, fallbacks and
    rollbacks included."""
    large = translation_model(FAST_TASK, **target)
    small = translation_model(FAST_TASK, **draft)
    sample = source_batch(DICT, lengths, seed=target["seed"])
    runs = []
    for device in (torch.device("cpu"), CUDA):
        large, small = large.to(device), small.to(device)
        gen = BiLDSequenceGenerator([large], DICT, small_model=small, fallback_threshold=fallback,
                                    rollback_threshold=rollback, max_small_steps=max_small,
                                    max_len_b=12)
        s = gpu_sample(sample) if device == CUDA else sample
        hyps = gen.generate([large], s)
        runs.append(([h[0]["tokens"].tolist() for h in hyps],
                     (gen.stats.fallbacks, gen.stats.rejected, gen.stats.target_calls)))
    assert runs[1] == runs[0]


@pytest.mark.parametrize("n", [1, 2, 3, 4])
def test_vectorised_blocker_bans_what_fairseqs_cuda_kernel_bans(n):
    """The plugin's blocker against fairseq's own GPU blocker (its CUDA kernel) and the plain rule,
    on random buffers with many repeats (a vocabulary of 6)."""
    if not STOCK_KERNEL:
        pytest.skip("fairseq's ngram_repeat_block_cuda is not built")
    g = torch.Generator().manual_seed(n)
    bsz, beam, vocab = 3, 4, 6
    ours, stock = VectorisedNGramBlock(n), NGramRepeatBlock(n)
    for step in range(n, 14):
        tokens = torch.randint(4, vocab, (bsz * beam, step + 1), generator=g).to(CUDA)
        lprobs = torch.randn(bsz * beam, vocab, generator=g).to(CUDA)
        want = stock(tokens, lprobs.clone(), bsz, beam, step)
        got = ours(tokens, lprobs.clone(), bsz, beam, step)
        assert torch.equal(got == -float("inf"), want == -float("inf")), step
        for row in range(bsz * beam):
            banned = set(reference_banned(tokens[row].tolist(), step, n))
            assert {t for t in range(vocab) if got[row, t] == -float("inf")} == banned


def test_stock_gpu_blocker_is_the_reference_rule():
    """ReferenceNGramBlock (the CPU tests' stand-in for stock's broken CPU blocker) bans what
    fairseq's CUDA kernel bans."""
    if not STOCK_KERNEL:
        pytest.skip("fairseq's ngram_repeat_block_cuda is not built")
    g = torch.Generator().manual_seed(0)
    tokens = torch.randint(4, 7, (6, 12), generator=g).to(CUDA)
    lprobs = torch.randn(6, 7, generator=g).to(CUDA)
    want = NGramRepeatBlock(3)(tokens, lprobs.clone(), 2, 3, 11)
    got = ReferenceNGramBlock(3)(tokens, lprobs.clone(), 2, 3, 11)
    assert torch.equal(got, want)


def test_speculative_sampling_keeps_the_target_distribution_on_gpu():
    """Rejection sampling on the GPU: 20,000 two-token samples against the exact table (as in
    test_sampling_exactness.py), and a wrong acceptance rule still fails."""
    from test_sampling_exactness import (N, TASK as SAMPLING_TASK, AcceptEverything,
                                         chi_square_p, exact_pairs)
    target = translation_model(SAMPLING_TASK, layers=2, dim=16, seed=11)
    draft = translation_model(SAMPLING_TASK, layers=1, dim=8, heads=1, seed=12)
    sample = source_batch(SAMPLING_TASK.target_dictionary, [4], seed=3)
    table = exact_pairs(target, sample, 0.7, 3, -1.0)
    target, draft = on_gpu(target, draft)
    many = {"net_input": {k: v.expand(N, *v.shape[1:]).contiguous().to(CUDA)
                          for k, v in sample["net_input"].items()}}
    dictionary = SAMPLING_TASK.target_dictionary
    common = dict(max_len_b=2, temperature=0.7, sampling=True, sampling_topk=3)
    torch.manual_seed(1)
    spec = SpeculativeSequenceGenerator([target], dictionary, draft_model=draft, draft_len=2,
                                        **common)
    assert chi_square_p(spec.generate([target], many), table) > 1e-3
    assert 0.05 < spec.stats.alpha < 0.95
    wrong = SpeculativeSequenceGenerator([target], dictionary, draft_model=draft, draft_len=2,
                                         **common)
    wrong.acceptance = AcceptEverything(3, -1.0)
    torch.manual_seed(2)
    assert chi_square_p(wrong.generate([target], many), table) < 1e-6


# -- float16 on a trained pair ------------------------------------------------------------------
@pytest.fixture(scope="module")
def trained_half(tiny_pair):
    """The tiny pair's target and draft in float16 on the GPU, its task, and its test batches."""
    from fairseq import checkpoint_utils

    models, cfg, task = checkpoint_utils.load_model_ensemble_and_task(
        [os.path.join(tiny_pair, "target.pt"), os.path.join(tiny_pair, "draft.pt")],
        arg_overrides={"data": os.path.join(tiny_pair, "data-bin")})
    target, draft = [m.eval().half().to(CUDA) for m in models]
    task.load_dataset("test")
    ds = task.dataset("test")
    order = sorted(range(len(ds)), key=lambda i: ds.src_sizes[i])
    batches = [gpu_sample(ds.collater([ds[i] for i in order[j:j + 16]]))
               for j in range(0, len(order), 16)]
    return target, draft, task, batches


def decode(generator, model, batches):
    out = {}
    for sample in batches:
        for i, hyp in zip(sample["id"].tolist(), generator.generate([model], sample)):
            out[i] = hyp[0]
    return out


@pytest.mark.parametrize("engine", ["default", "default beam 4", "speculative", "bild"])
def test_float16_agrees_with_stock_float16(trained_half, engine):
    """Every generator runs in float16 and writes the tokens stock's float16 greedy (beam) search
    writes for at least 90% of the 40 test sentences; each hypothesis ends with EOS and has
    finite scores of stock's type. (Exact agreement is a float64 property: float16 rounds a
    batched pass and a one-position step apart far more often than float32.)"""
    target, draft, task, batches = trained_half
    tgt_dict = task.target_dictionary
    beam = 4 if engine.endswith("beam 4") else 1
    args = gen_args(beam=beam, max_len_b=50)
    if engine.startswith("default"):
        ours = task.build_generator([target], args)
        stock = FairseqTask.build_generator.__wrapped__(task, [target], args)
    else:
        stock = SequenceGenerator([target], tgt_dict, beam_size=1, max_len_b=50)
        ours = (SpeculativeSequenceGenerator([target], tgt_dict, draft_model=draft, draft_len=4,
                                             max_len_b=50) if engine == "speculative" else
                BiLDSequenceGenerator([target], tgt_dict, small_model=draft,
                                      fallback_threshold=0.0, rollback_threshold=0.0,
                                      max_len_b=50))  # BiLD's exact setting
    want, got = decode(stock, target, batches), decode(ours, target, batches)
    assert want.keys() == got.keys()
    same = sum(got[i]["tokens"].tolist() == want[i]["tokens"].tolist() for i in want)
    assert same >= 0.9 * len(want), f"{same} of {len(want)} identical"
    for i, hyp in got.items():
        assert hyp["tokens"][-1] == tgt_dict.eos()
        assert hyp["positional_scores"].dtype == want[i]["positional_scores"].dtype
        assert torch.isfinite(hyp["positional_scores"]).all()


# -- CUDA graphs ----------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", [torch.float64, torch.float32, torch.float16])
@torch.no_grad()
def test_graph_replays_compute_the_static_function(dtype):
    """A replayed graph writes what the function it captured computes run eagerly (the same
    kernels: the same bits), over many lengths, a rollback and two batches; and that function is
    forward's arithmetic (float32 attention softmax: CUDA's adds the masked zeros without
    reordering, so in float64 and float32 it is forward's bits too, up to the matmuls' blocking)."""
    from fairseq_fast.decoding.backends import GraphBackend, decoder_backend
    from fairseq_fast.decoding.cuda_graphs import StepGraphs

    model = translation_model(FAST_TASK, layers=2, dim=32, heads=4, seed=5).to(CUDA, dtype)
    backend = decoder_backend(model)
    assert isinstance(backend, GraphBackend)
    lean, graphs = backend.lean, backend.graphs
    eager = StepGraphs(lean, capture=False)
    g = torch.Generator().manual_seed(0)
    worst = 0.0
    for lengths in ([6, 3], [11, 11]):
        sample = gpu_sample(source_batch(DICT, lengths, seed=len(lengths)))
        enc = model.encoder.forward_torchscript(sample["net_input"])
        states = [lean.init_state(enc, 2, 32, dtype, CUDA) for _ in range(3)]
        for call in (3, 1, 1, 5, -2, 1, 1, 4, 1):
            if call < 0:
                for s in states:
                    s.rollback_to(s.lengths + call)
                continue
            tokens = torch.randint(DICT.nspecial, len(DICT), (2, call), generator=g).to(CUDA)
            want = lean.forward(states[0], tokens)
            got = graphs.run(states[1], tokens)
            ref = eager.run(states[2], tokens)
            for s in states[1:]:
                s.lengths = s.lengths + call
            assert torch.equal(got, ref)
            worst = max(worst, float((got.double() - want.double()).abs().max()))
    tol = {torch.float64: 1e-6, torch.float32: 1e-4, torch.float16: 5e-2}[dtype]
    assert worst <= tol, worst
    assert graphs.replays > 0 and all(e.graph is not None for e in graphs.graphs.values())


def test_generators_replay_graphs():
    """The default generator (greedy, beam) and speculative decoding (the target's passes and
    the draft's whole propose()) on the GPU are served by graphs, and write stock's tokens;
    FAIRSEQ_FAST_CUDA_GRAPHS=0 turns them off."""
    model = translation_model(FAST_TASK, layers=2, dim=32, heads=4, seed=6).to(CUDA)
    draft = translation_model(FAST_TASK, layers=1, dim=16, heads=2, seed=7).to(CUDA)
    sample = gpu_sample(source_batch(DICT, [7, 4, 9], seed=1))
    for beam in (1, 4):
        ours, stock = build_pair([model], gen_args(beam=beam, max_len_b=20))
        assert_same(stock.generate([model], sample), ours.generate([model], sample), 1)
        assert ours.model.backends[0].graphs.replays > 0
    spec = SpeculativeSequenceGenerator([model], DICT, draft_model=draft, draft_len=3,
                                        max_len_b=20)
    one = gpu_sample(source_batch(DICT, [8], seed=2))
    stock = SequenceGenerator([model], DICT, beam_size=1, max_len_b=20)
    assert (spec.generate([model], one)[0][0]["tokens"].tolist()
            == stock.generate([model], one)[0][0]["tokens"].tolist())
    assert spec.target.graphs.replays > 0 and spec.proposer.backend.graphs.replays > 0
    assert any(key[0] == "draft" for key in spec.proposer.backend.graphs.graphs)  # graph_steps
    os.environ["FAIRSEQ_FAST_CUDA_GRAPHS"] = "0"
    try:
        ours, _ = build_pair([model], gen_args(beam=1, max_len_b=20))
        assert ours.model.backends[0].name == "torch"
    finally:
        del os.environ["FAIRSEQ_FAST_CUDA_GRAPHS"]
