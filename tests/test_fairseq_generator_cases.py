"""fairseq's own hand-made sequence-generator cases (its tests/test_sequence_generator.py, not
shipped by pip), rerun through the generator the plugin builds by default.

All 17 of its cases outside the CUDA-only n-gram class:
    TestSequenceGenerator (7), TestDiverseBeamSearch, TestDiverseSiblingsSearch,
    TestTopPSamplingSearch (2): a scripted decoder gives, at each step, fixed probabilities per
        (sentence, beam) row; the expected hypotheses and positional probabilities are fairseq's.
        The scripted decoder is not a Transformer, so the plugin keeps fairseq's decoding path for
        it (logged once) while the rest of its generator (FastSequenceGenerator, the n-gram
        blocker) is active: these check that nothing in the plugin's generator changes fairseq's
        search, scoring, length penalty, sampling or finalisation.
    TestJitSequenceGenerator (3), TestExportSearch (3): torch.jit.script of a Transformer, of the
        plugin's generator and of its ensemble (each compiles fairseq's own, with the same
        models and settings), and of fairseq's search strategies, with the plugin loaded.
"""
import argparse

import pytest
import torch
from fairseq import search
from fairseq.data import Dictionary
from fairseq.models import FairseqEncoder, FairseqEncoderDecoderModel, FairseqIncrementalDecoder
from fairseq.models.transformer import TransformerModel
from fairseq.sequence_generator import SequenceGenerator

import fairseq_fast  # noqa: F401
from fairseq_fast.decoding.ensemble import FastEnsembleModel
from fairseq_fast.generators.fast import FastSequenceGenerator, VectorisedNGramBlock
from test_fast_defaults import Task, gen_args

EOS, W1, W2 = 2, 4, 5
U = 0.0  # unk


def dictionary():
    d = Dictionary()
    for w in ("w1", "w2"):
        d.add_symbol(w)
    return d


class ScriptedEncoder(FairseqEncoder):
    def forward(self, src_tokens, src_lengths=None):
        return {"encoder_out": [src_tokens.t().unsqueeze(-1).float()], "encoder_padding_mask": []}

    def reorder_encoder_out(self, encoder_out, new_order):
        return {"encoder_out": [encoder_out["encoder_out"][0].index_select(1, new_order)],
                "encoder_padding_mask": []}


class ScriptedDecoder(FairseqIncrementalDecoder):
    """Row r at step t gets probabilities table[t][r] over (eos, unk, w1, w2); EOS after it."""

    def __init__(self, d, table):
        super().__init__(d)
        self.table = table

    def forward(self, prev_output_tokens, encoder_out=None, incremental_state=None, **kwargs):
        rows, step = prev_output_tokens.size(0), prev_output_tokens.size(1) - 1
        probs = torch.zeros(rows, 1, len(self.dictionary))
        if step < len(self.table):
            probs[:, 0, EOS:] = torch.tensor(self.table[step])
        else:
            probs[:, 0, EOS] = 1.0
        src_len = encoder_out["encoder_out"][0].size(0)
        return probs, {"attn": [torch.full((rows, 1, src_len), 1.0 / src_len)]}

    def get_normalized_probs(self, net_output, log_probs, sample=None):
        return net_output[0].log() if log_probs else net_output[0]

    def reorder_incremental_state(self, incremental_state, new_order):
        pass

    def max_positions(self):
        return 100


def scripted_model(table):
    d = dictionary()
    return FairseqEncoderDecoderModel(ScriptedEncoder(d), ScriptedDecoder(d, table)), d


BEAM_TABLE = [  # fairseq's sequence_generator_setup()
    [[0.0, U, 0.9, 0.1], [0.0, U, 0.9, 0.1], [0.0, U, 0.7, 0.3], [0.0, U, 0.7, 0.3]],
    [[1.0, U, 0.0, 0.0], [0.0, U, 0.9, 0.1], [0.25, U, 0.35, 0.4], [0.0, U, 0.1, 0.9]],
    [[0.0, U, 0.1, 0.9], [0.6, U, 0.2, 0.2], [0.6, U, 0.4, 0.0], [0.01, U, 0.0, 0.99]],
    [[1.0, U, 0.0, 0.0], [1.0, U, 0.0, 0.0], [0.1, U, 0.5, 0.4], [1.0, U, 0.0, 0.0]],
]
DIVERSE_TABLE = [  # fairseq's TestDiverseBeamSearch
    [[0.0, U, 0.9, 0.1], [0.0, U, 0.9, 0.1], [0.0, U, 0.7, 0.3], [0.0, U, 0.7, 0.3]],
    [[0.0, U, 0.6, 0.4], [0.0, U, 0.6, 0.4], [0.25, U, 0.35, 0.4], [0.25, U, 0.35, 0.4]],
    [[1.0, U, 0.0, 0.0], [1.0, U, 0.0, 0.0], [0.9, U, 0.1, 0.0], [0.9, U, 0.1, 0.0]],
]

# (table, generation options, expected [(tokens, positional probs)] per sentence and beam)
CASES = {
    "with_normalization": (BEAM_TABLE, {}, [
        [([W1, EOS], [0.9, 1.0]), ([W2, W1, W2, EOS], [0.1, 0.9, 0.9, 1.0])],
        [([W1, W2, W1, EOS], [0.7, 0.4, 0.4, 1.0]), ([W1, W2, EOS], [0.7, 0.4, 0.6])]]),
    "without_normalization": (BEAM_TABLE, {"unnormalized": True}, [
        [([W1, EOS], [0.9, 1.0]), ([W2, W1, W2, EOS], [0.1, 0.9, 0.9, 1.0])],
        [([W1, W2, EOS], [0.7, 0.4, 0.6]), ([W1, W2, W1, EOS], [0.7, 0.4, 0.4, 1.0])]]),
    "lenpen_favoring_short": (BEAM_TABLE, {"lenpen": 0.6}, [
        [([W1, EOS], [0.9, 1.0]), ([W2, W1, W2, EOS], [0.1, 0.9, 0.9, 1.0])],
        [([W1, W2, EOS], [0.7, 0.4, 0.6]), ([W1, W2, W1, EOS], [0.7, 0.4, 0.4, 1.0])]]),
    "lenpen_favoring_long": (BEAM_TABLE, {"lenpen": 5.0}, [
        [([W2, W1, W2, EOS], [0.1, 0.9, 0.9, 1.0]), ([W1, EOS], [0.9, 1.0])],
        [([W1, W2, W1, EOS], [0.7, 0.4, 0.4, 1.0]), ([W1, W2, EOS], [0.7, 0.4, 0.6])]]),
    "maxlen": (BEAM_TABLE, {"max_len_b": 2}, [
        [([W1, EOS], [0.9, 1.0]), ([W2, W2, EOS], [0.1, 0.1, 0.6])],
        [([W1, W2, EOS], [0.7, 0.4, 0.6]), ([W2, W2, EOS], [0.3, 0.9, 0.01])]]),
    "diverse_beam_search": (DIVERSE_TABLE, {"diverse_beam_groups": 2,
                                            "diverse_beam_strength": 0.0}, [
        [([W1, W1, EOS], [0.9, 0.6, 1.0]), ([W1, W1, EOS], [0.9, 0.6, 1.0])],
        [([W1, W2, EOS], [0.7, 0.4, 0.9]), ([W1, W2, EOS], [0.7, 0.4, 0.9])]]),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_fairseq_case(name):
    table, opts, expected = CASES[name]
    model, d = scripted_model(table)
    task = Task(d)
    args = gen_args(beam=2, **opts)
    generator = task.build_generator([model], args)
    assert isinstance(generator, FastSequenceGenerator)
    src = torch.tensor([[W1, W2, EOS], [W1, W2, EOS]])
    hypos = generator.forward({"net_input": {"src_tokens": src,
                                             "src_lengths": torch.tensor([2, 2])}})
    lenpen = opts.get("lenpen", 1.0)
    for sentence, beams in zip(hypos, expected):
        for hypo, (tokens, probs) in zip(sentence, beams):
            assert hypo["tokens"].tolist() == tokens
            pos = torch.tensor(probs).log()
            assert torch.allclose(hypo["positional_scores"], pos, atol=1e-4)
            score = pos.sum() / (1 if opts.get("unnormalized") else len(probs) ** lenpen)
            assert abs(float(score) - float(hypo["score"])) < 1e-5


def test_diverse_siblings_search():
    """fairseq's TestDiverseSiblingsSearch: scores carry rank * diversity_rate penalties."""
    model, d = scripted_model(DIVERSE_TABLE)
    task = Task(d)
    generator = task.build_generator([model], gen_args(beam=2, diversity_rate=0.5))
    src = torch.tensor([[W1, W2, EOS], [W1, W2, EOS]])
    hypos = generator.forward({"net_input": {"src_tokens": src,
                                             "src_lengths": torch.tensor([2, 2])}})
    expected = [[([W1, W1, EOS], [0.9, 0.6, 1.0], [0, 1, 1]),
                 ([W1, W2, EOS], [0.9, 0.4, 1.0], [0, 2, 1])],
                [([W1, W2, EOS], [0.7, 0.4, 0.9], [0, 1, 1]),
                 ([W1, W1, EOS], [0.7, 0.35, 0.9], [0, 2, 1])]]
    for sentence, beams in zip(hypos, expected):
        for hypo, (tokens, probs, rank) in zip(sentence, beams):
            assert hypo["tokens"].tolist() == tokens
            pos = torch.tensor(probs).log() - torch.tensor(rank, dtype=torch.float) * 0.5
            assert torch.allclose(hypo["positional_scores"], pos, atol=1e-4)
            assert abs(float(pos.sum() / len(probs)) - float(hypo["score"])) < 1e-5


TOPP_TABLE = [  # fairseq's TestTopPSamplingSearch: top-1 probability 0.4, top-2 0.75
    [[0.0, U, 1.0, 0.0]] * 4,
    [[0.25, U, 0.4, 0.35]] * 4,
    [[1.0, U, 0.0, 0.0]] * 4,
]
SOURCE = {"net_input": {"src_tokens": torch.tensor([[W1, W2, EOS], [W1, W2, EOS]]),
                        "src_lengths": torch.tensor([2, 2])}}


def positional(probs):
    return torch.tensor(probs).log()


@pytest.mark.parametrize("topp, outcomes", [
    (0.2, [([W1, W1, EOS], [1.0, 0.4, 1.0])]),  # only the top token survives top-p
    (0.575, [([W1, W1, EOS], [1.0, 0.4, 1.0]), ([W1, W2, EOS], [1.0, 0.35, 1.0])])])
def test_topp_sampling_search(topp, outcomes):
    model, d = scripted_model(TOPP_TABLE)
    generator = Task(d).build_generator([model], gen_args(beam=2, sampling=True,
                                                          sampling_topp=topp))
    assert isinstance(generator, FastSequenceGenerator)
    torch.manual_seed(0)
    seen = set()
    for _ in range(8):
        for sentence in generator.forward(SOURCE):
            for hypo in sentence:
                tokens = hypo["tokens"].tolist()
                probs = dict((tuple(t), p) for t, p in outcomes)[tuple(tokens)]
                assert torch.allclose(hypo["positional_scores"], positional(probs), atol=1e-4)
                assert abs(float(positional(probs).sum() / 3) - float(hypo["score"])) < 1e-6
                seen.add(tuple(tokens))
    assert len(seen) == len(outcomes)  # at the higher top-p both continuations are drawn


class ReshapingEncoder(ScriptedEncoder):
    """fairseq's TestReshapingEncoder: the encoder output is half as long as the source."""

    def forward(self, src_tokens, src_lengths=None):
        out = super().forward(src_tokens, src_lengths)["encoder_out"][0]
        return {"encoder_out": [out[::2]], "encoder_padding_mask": []}


def test_encoder_with_different_output_len():
    d = dictionary()
    model = FairseqEncoderDecoderModel(ReshapingEncoder(d), ScriptedDecoder(d, BEAM_TABLE))
    generator = Task(d).build_generator([model], gen_args(beam=2, max_len_b=2))
    for sentence in generator.forward(SOURCE):
        for hypo in sentence:  # attention over the 2 encoder positions, per target token
            assert hypo["attention"].shape == (2, hypo["tokens"].numel())


class AdditionalInputEncoder(ScriptedEncoder):
    """fairseq's TestAdditionalInputEncoder: the encoder needs an input besides the tokens."""

    def forward(self, src_tokens, src_lengths=None, **kwargs):
        assert kwargs.get("fancy_other_input") is not None
        return super().forward(src_tokens, src_lengths)


def test_generation_with_additional_input():
    d = dictionary()
    model = FairseqEncoderDecoderModel(AdditionalInputEncoder(d), ScriptedDecoder(d, BEAM_TABLE))
    generator = Task(d).build_generator([model], gen_args(beam=2))
    net_input = dict(SOURCE["net_input"], fancy_other_input=SOURCE["net_input"]["src_tokens"])
    hypos = generator.forward({"net_input": net_input})
    assert hypos[0][0]["tokens"].tolist() == [W1, EOS]
    assert torch.allclose(hypos[0][0]["positional_scores"], positional([0.9, 1.0]), atol=1e-4)


# -- TorchScript (fairseq's TestJitSequenceGenerator and TestExportSearch) ---------------------
@pytest.fixture(scope="module")
def transformer():
    """fairseq's set-up: a Transformer of the default size with 2 encoder layers and 1 decoder
    layer over a 100-word dictionary, random weights, and a sample of 2 sentences."""
    d = Dictionary()
    for i in range(100):
        d.add_symbol(str(i), n=1000)
    parser = argparse.ArgumentParser(argument_default=argparse.SUPPRESS)
    TransformerModel.add_args(parser)
    args = parser.parse_args([])
    args.encoder_layers, args.decoder_layers = 2, 1
    torch.manual_seed(0)
    model = TransformerModel.build_model(args, Task(d)).eval()
    src = torch.cat([torch.randint(3, 50, (2, 10)), torch.full((2, 1), d.eos())], dim=1)
    sample = {"net_input": {"src_tokens": src, "src_lengths": torch.tensor([2, 10])}}
    return model, d, sample


def test_export_transformer(transformer):
    model, d, _ = transformer
    Task(d).build_generator([model], gen_args(beam=2))  # the fast path leaves the model alone
    torch.jit.script(model)


def test_ensemble_sequence_generator(transformer, tmp_path):
    """The plugin's generator, scripted: fairseq's generator with the same settings and models,
    which gives stock's output; the plugin's generator itself is unchanged."""
    model, d, sample = transformer
    ours = Task(d).build_generator([model], gen_args(beam=2, no_repeat_ngram_size=2,
                                                     max_len_b=10))
    assert isinstance(ours.model, FastEnsembleModel)
    assert isinstance(ours.repeat_ngram_blocker, VectorisedNGramBlock)
    scripted = torch.jit.script(ours)
    assert scripted.original_name == "SequenceGenerator"
    scripted.save(str(tmp_path / "generator.pt"))
    loaded = torch.jit.load(str(tmp_path / "generator.pt"))
    stock = SequenceGenerator([model], d, beam_size=2, no_repeat_ngram_size=2, max_len_b=10)
    want, got = stock.forward(sample), loaded.forward(sample)
    for want_beams, got_beams in zip(want, got):
        for w, g in zip(want_beams, got_beams):
            assert g["tokens"].tolist() == w["tokens"].tolist()
            assert torch.allclose(g["positional_scores"], w["positional_scores"], atol=1e-5)
    assert isinstance(ours.model, FastEnsembleModel)  # untouched by the scripting
    assert isinstance(ours.repeat_ngram_blocker, VectorisedNGramBlock)
    assert len(ours.forward(sample)) == 2


def test_scripted_diverse_generator_runs_fairseqs_search(transformer):
    """TorchScript compiles fairseq's own DiverseBeamSearch; the plugin's generator keeps its
    search by place."""
    from fairseq_fast.generators.fast import PlacedDiverseBeamSearch

    model, d, sample = transformer
    ours = Task(d).build_generator([model], gen_args(beam=4, diverse_beam_groups=2,
                                                     diverse_beam_strength=0.5, max_len_b=10))
    assert type(ours.search) is PlacedDiverseBeamSearch
    scripted = torch.jit.script(ours)
    assert scripted.search.original_name == "DiverseBeamSearch"
    assert type(ours.search) is PlacedDiverseBeamSearch
    want, got = ours.forward(sample), scripted.forward(sample)  # no ids: place = index
    for want_beams, got_beams in zip(want, got):
        assert [g["tokens"].tolist() for g in got_beams] == [w["tokens"].tolist()
                                                             for w in want_beams]


def test_export_ensemble_model(transformer):
    model, d, _ = transformer
    ours = Task(d).build_generator([model], gen_args(beam=2))
    assert isinstance(ours.model, FastEnsembleModel)
    assert torch.jit.script(ours.model).original_name == "EnsembleModel"


@pytest.mark.parametrize("make", [
    lambda d: search.DiverseBeamSearch(d, num_groups=2, diversity_strength=0.0),
    lambda d: search.Sampling(d, sampling_topp=0.2),
    lambda d: search.DiverseSiblingsSearch(d, diversity_rate=0.5)],
    ids=["diverse_bs", "sampling", "diverse_siblings_search"])
def test_export_search(make):
    torch.jit.script(make(dictionary()))
