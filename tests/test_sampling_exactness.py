"""Speculative sampling draws from exactly the target's distribution.

For a small-vocabulary target the probability of every (first token, second token) pair is
computed exactly (full forward passes, fairseq's sampling rules re-implemented plainly here). A
chi-square test then compares 20,000 samples against it: from stock fairseq sampling (which
validates the exact computation), from speculative sampling (which must pass), and from a
deliberately wrong acceptance rule that keeps every draft token (which must fail: the test has
power).
"""
import math
import random

import pytest
import torch
from fairseq import search
from fairseq.sequence_generator import SequenceGenerator
from scipy.stats import chisquare

from fairseq_fast.speculative.acceptance import RejectionSampling, Verdict, cumulate
from fairseq_fast.speculative.draft_vocab import shortlist
from fairseq_fast.generators.speculative import SpeculativeSequenceGenerator
from model_factory import DummyTask, make_dictionary, source_batch, translation_model

DICT = make_dictionary(8)
TASK = DummyTask(DICT, DICT)
N = 20_000


def plain_distribution(logits, temperature, topk, topp, ban_eos):
    """fairseq's sampling distribution for one step, written out plainly."""
    lp = torch.log_softmax((logits / temperature).float(), dim=-1)
    lp[DICT.pad()] = -math.inf
    if ban_eos:  # min_len = 1 bans EOS at step 0
        lp[DICT.eos()] = -math.inf
    p = lp.exp()
    if topp > 0:
        order = p.argsort(descending=True)
        mass, keep = 0.0, torch.zeros_like(p, dtype=torch.bool)
        for t in order.tolist():
            keep[t] = True
            mass += float(p[t])
            if mass >= topp:
                break
        p = p * keep
    elif topk > 0:
        keep = torch.zeros_like(p, dtype=torch.bool)
        keep[p.topk(topk).indices] = True
        p = p * keep
    return (p / p.sum()).double()


def exact_pairs(model, sample, temperature, topk, topp):
    """{(t1, t2): probability} over the first two tokens (t2 = None after an EOS)."""
    enc = model.encoder.forward_torchscript({k: v[:1] for k, v in sample["net_input"].items()})
    bos = torch.tensor([[DICT.eos()]])
    first = model.decoder(bos, encoder_out=enc)[0][0, -1]
    p1 = plain_distribution(first, temperature, topk, topp, ban_eos=True)
    table = {}
    for t1 in range(len(DICT)):
        if p1[t1] == 0:
            continue
        if t1 == DICT.eos():
            table[(t1, None)] = float(p1[t1])
            continue
        second = model.decoder(torch.tensor([[DICT.eos(), t1]]), encoder_out=enc)[0][0, -1]
        p2 = plain_distribution(second, temperature, topk, topp, ban_eos=False)
        for t2 in range(len(DICT)):
            if p2[t2] > 0:
                table[(t1, t2)] = float(p1[t1] * p2[t2])
    return table


def chi_square_p(hypos, table):
    """p-value of the samples under the exact table; 0.0 if any sample is impossible."""
    counts = {cell: 0 for cell in table}
    for h in hypos:
        toks = h[0]["tokens"].tolist()
        cell = (toks[0], None) if toks[0] == DICT.eos() else (toks[0], toks[1])
        if cell not in counts:
            return 0.0
        counts[cell] += 1
    big = [c for c in table if table[c] * N >= 5]
    small = [c for c in table if table[c] * N < 5]
    observed = [counts[c] for c in big] + ([sum(counts[c] for c in small)] if small else [])
    expected = [table[c] * N for c in big] + ([sum(table[c] for c in small) * N] if small else [])
    scale = sum(observed) / sum(expected)
    return chisquare(observed, [e * scale for e in expected]).pvalue


class AcceptEverything(RejectionSampling):
    """Wrong on purpose: keeps every draft token (the output follows the draft)."""

    def verify(self, lprobs, drafts, gamma, prev_score, q=None):
        bsz, k = drafts.shape
        accepted = gamma.clone()
        bonus = torch.multinomial(self.distribution(lprobs)[torch.arange(bsz), accepted], 1)
        tokens = torch.cat([drafts, bonus], dim=1)
        values = lprobs.gather(2, tokens[:, :, None]).squeeze(2)
        return Verdict(accepted, tokens, cumulate(prev_score, values))


@pytest.fixture(scope="module")
def pair():
    target = translation_model(TASK, layers=2, dim=16, seed=11)
    draft = translation_model(TASK, layers=1, dim=8, heads=1, seed=12)
    sample = source_batch(DICT, [4], seed=3)
    many = {"net_input": {k: v.expand(N, *v.shape[1:]).contiguous()
                          for k, v in sample["net_input"].items()}}
    return target, draft, sample, many


CASES = [(1.0, -1, -1.0), (0.7, 3, -1.0), (1.3, -1, 0.8)]


@pytest.mark.parametrize("temperature,topk,topp", CASES)
def test_speculative_sampling_matches_target_distribution(pair, temperature, topk, topp):
    target, draft, sample, many = pair
    table = exact_pairs(target, sample, temperature, topk, topp)
    common = dict(max_len_b=2, temperature=temperature)

    torch.manual_seed(0)
    stock = SequenceGenerator([target], DICT, beam_size=1, search_strategy=search.Sampling(
        DICT, topk, topp), **common).generate([target], many)
    assert chi_square_p(stock, table) > 1e-3  # the exact table is what stock samples from

    torch.manual_seed(1)
    spec = SpeculativeSequenceGenerator([target], DICT, draft_model=draft, draft_len=2,
                                        sampling=True, sampling_topk=topk, sampling_topp=topp,
                                        **common)
    got = spec.generate([target], many)
    assert 0.05 < spec.stats.alpha < 0.95  # both accept and reject paths were exercised
    assert chi_square_p(got, table) > 1e-3

    torch.manual_seed(2)
    wrong = SpeculativeSequenceGenerator([target], DICT, draft_model=draft, draft_len=2,
                                         sampling=True, sampling_topk=topk, sampling_topp=topp,
                                         **common)
    wrong.acceptance = AcceptEverything(topk, topp)
    assert chi_square_p(wrong.generate([target], many), table) < 1e-6


def test_confidence_stopped_windows_keep_the_target_distribution(pair):
    """A stop rule that ends drafting where the draft's own sampled token is unlikely (one
    decided after each draft step, as BiLD's fallback is): a window length chosen from the
    draft's samples must not bias what the target keeps."""
    target, draft, sample, many = pair
    table = exact_pairs(target, sample, 1.0, -1, -1.0)
    torch.manual_seed(3)
    class UnlikelyDraft:  # a stop rule that fires on some draws, not others
        discards_last = False

        def stop(self, prob):
            return prob < 0.2

    # windows of 2, shortened only by the stop rule
    spec = SpeculativeSequenceGenerator([target], DICT, draft_model=draft, draft_len=2,
                                        sampling=True, max_len_b=2, stop_rule=UnlikelyDraft())
    got = spec.generate([target], many)
    s = spec.stats
    assert s.proposed < 2 * s.row_rounds  # some windows were cut short by the stop rule ...
    assert s.accepted > 0 and s.proposed > s.row_rounds  # ... others were not
    assert chi_square_p(got, table) > 1e-3


def test_measured_window_lengths_keep_the_target_distribution(pair):
    """--adaptive-draft-len picks each round's length from timings (here a clock of random
    readings, so the lengths vary from round to round): sampling stays exact."""
    target, draft, sample, many = pair
    table = exact_pairs(target, sample, 1.0, -1, -1.0)
    torch.manual_seed(5)
    spec = SpeculativeSequenceGenerator([target], DICT, draft_model=draft, draft_len=2,
                                        sampling=True, max_len_b=2, adaptive_draft_len=True)
    rng = random.Random(5)
    now = [0.0]
    spec.schedule.clock = lambda: now.__setitem__(0, now[0] + rng.random()) or now[0]
    spec.schedule.REFRESH, spec.schedule.EXPLORE = 1, 3
    lengths = set()
    window = spec.schedule.window
    spec.schedule.window = lambda cap, share=1.0: lengths.add(
        int((c := window(cap, share)).max())) or c
    got = spec.generate([target], many)
    assert len(lengths) >= 2  # (the batch runs a few rounds: max_len_b=2)
    assert 0.05 < spec.stats.alpha < 0.95
    assert chi_square_p(got, table) > 1e-3


def test_shortlisted_draft_keeps_the_target_distribution(pair):
    """--draft-vocab: q is zero outside the shortlist; tokens there come only from the residual
    norm(max(0, p - q)) after a rejection (or a bonus), and must still appear as often as the
    target samples them."""
    target, draft, sample, many = pair
    table = exact_pairs(target, sample, 1.0, -1, -1.0)
    vocab = shortlist(DICT, DICT.nspecial + 4)  # half of the 8 ordinary words
    torch.manual_seed(4)
    spec = SpeculativeSequenceGenerator([target], DICT, draft_model=draft, draft_len=2,
                                        sampling=True, max_len_b=2, draft_vocab=vocab)
    got = spec.generate([target], many)
    outside = set(range(len(DICT))) - set(vocab.tolist())
    assert any(h[0]["tokens"][0].item() in outside for h in got)
    assert 0.05 < spec.stats.alpha < 0.95
    assert chi_square_p(got, table) > 1e-3


def copyable_source(target):
    """A one-sentence batch whose source holds the target's likeliest first token followed by
    a token the target gives 10-90% as the second: there the lookup drafts, and its drafts are
    kept some of the time."""
    for seed in range(200):
        sample = source_batch(DICT, [4], seed=seed)
        table = exact_pairs(target, sample, 1.0, -1, -1.0)
        first = {}
        for (t1, _), p in table.items():
            first[t1] = first.get(t1, 0.0) + p
        t1 = max(first, key=first.get)
        src = sample["net_input"]["src_tokens"][0].tolist()
        if t1 in src[:-2]:
            t2 = src[src.index(t1) + 1]
            if 0.1 < table.get((t1, t2), 0.0) / first[t1] < 0.9:
                return sample, table
    raise AssertionError("no source to copy from")


def test_ngram_lookup_drafts_keep_the_target_distribution(pair):
    """--draft-method ngram: a looked-up draft is certain (q one-hot on it; the rule then keeps
    it with probability p(d) and resamples from p without d). Here the second token is drafted
    from the source wherever the first occurs in it: the samples must still follow the target,
    and keeping every lookup must not."""
    target = pair[0]
    sample, table = copyable_source(target)
    many = {"net_input": {k: v.expand(N, *v.shape[1:]).contiguous()
                          for k, v in sample["net_input"].items()}}
    kw = dict(draft_method="ngram", draft_len=2, sampling=True, max_len_b=2)
    torch.manual_seed(6)
    spec = SpeculativeSequenceGenerator([target], DICT, **kw)
    got = spec.generate([target], many)
    assert spec.stats.proposed > 1000 and spec.stats.accepted > 1000
    assert chi_square_p(got, table) > 1e-3

    torch.manual_seed(7)
    wrong = SpeculativeSequenceGenerator([target], DICT, **kw)
    wrong.acceptance = AcceptEverything(-1, -1.0)
    assert chi_square_p(wrong.generate([target], many), table) < 1e-6
