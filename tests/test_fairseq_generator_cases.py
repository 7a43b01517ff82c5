"""fairseq's own hand-made sequence-generator cases (its tests/test_sequence_generator.py, not
shipped by pip), rerun through the generator the plugin builds by default.

A scripted decoder gives, at each step, fixed probabilities per (sentence, beam) row; the expected
hypotheses and positional probabilities are fairseq's. The scripted decoder is not a Transformer,
so the plugin keeps fairseq's decoding path for it (logged once) while the rest of its generator
(FastSequenceGenerator, the n-gram blocker) is active: these cases check that nothing in the
plugin's generator changes fairseq's search, scoring, length penalty or finalisation.
"""

import pytest
import torch
from fairseq.data import Dictionary
from fairseq.models import FairseqEncoder, FairseqEncoderDecoderModel, FairseqIncrementalDecoder

import fairseq_fast  # noqa: F401
from fairseq_fast.generators.fast import FastSequenceGenerator
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
