"""Speculative greedy == stock SequenceGenerator greedy, token for token, in float64.

Hypothesis draws model shapes (target and draft differing in depth, width, heads, learned vs
sinusoidal positions, pre/post-norm, shared embeddings), batch sizes, source-length mixes, draft
lengths, EOS biases (sentences ending at once, or running into max length), length limits,
unk penalty, forced prefixes, n-gram blocking and draft vocabulary shortlists. Stock is given
the correct n-gram rule (its CPU blocker bans nothing: fairseq issue #5206).
"""
import pytest
import torch
from fairseq.sequence_generator import SequenceGenerator
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fairseq_fast.speculative.draft_vocab import shortlist
from fairseq_fast.generators.speculative import SpeculativeSequenceGenerator
from model_factory import (DummyTask, language_model, make_dictionary, prompt_batch,
                           reference_banned, source_batch, translation_model)

DICT = make_dictionary(16)
TASK = DummyTask(DICT, DICT)
SETTINGS = dict(deadline=None, derandomize=True,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


class ReferenceNGramBlock(torch.nn.Module):
    """The n-gram rule (fairseq's CUDA kernel) as a stand-in for stock's broken CPU blocker."""

    def __init__(self, n):
        super().__init__()
        self.n = n

    def forward(self, tokens, lprobs, bsz, beam_size, step):
        for row in range(tokens.size(0)):
            for t in reference_banned(tokens[row, : step + 1].tolist(), step, self.n):
                lprobs[row, t] = -float("inf")
        return lprobs


def model_shapes(draft: bool):
    return st.fixed_dictionaries({
        "layers": st.integers(1, 2) if draft else st.integers(1, 3),
        "dim": st.sampled_from([8, 16]),
        "heads": st.sampled_from([1, 2]),
        "learned_pos": st.booleans(),
        "normalize_before": st.booleans(),
        "share": st.booleans(),
        "seed": st.integers(0, 10_000),
    })


generation = st.fixed_dictionaries({
    "draft_len": st.integers(1, 6),
    "adaptive": st.booleans(),
    "eos_bias": st.sampled_from([-4.0, 0.0, 1.5, 8.0]),  # long .. forced early EOS
    "max_len_b": st.integers(1, 14),
    "min_len": st.integers(1, 3),
    "unk_penalty": st.sampled_from([0.0, -2.0, 1.0]),
    "ngram": st.sampled_from([0, 0, 2, 3]),
    "draft_vocab": st.sampled_from([0, 0, 6, 10]),  # the draft scores only a shortlist
})


def speculative(target, draft, gen, kw):
    return SpeculativeSequenceGenerator([target], DICT, draft_model=draft,
                                        draft_len=gen["draft_len"],
                                        adaptive_draft_len=gen["adaptive"],
                                        draft_vocab=shortlist(DICT, gen.get("draft_vocab", 0)),
                                        **kw)


def compare(target, draft, sample, prefix, gen, build=speculative):
    """Stock greedy vs build(target, draft, gen, common options): same tokens and scores."""
    kw = dict(max_len_b=gen["max_len_b"], min_len=min(gen["min_len"], gen["max_len_b"]),
              unk_penalty=gen["unk_penalty"], no_repeat_ngram_size=gen["ngram"])
    stock = SequenceGenerator([target], DICT, beam_size=1, **kw)
    if gen["ngram"]:
        stock.repeat_ngram_blocker = ReferenceNGramBlock(gen["ngram"])
    spec = build(target, draft, gen, kw)
    expected = stock.generate([target], sample, prefix_tokens=prefix)
    got = spec.generate([target], sample, prefix_tokens=prefix)
    assert len(expected) == len(got)
    for want, have in zip(expected, got):
        assert len(have) == 1
        want, have = want[0], have[0]
        assert have["tokens"].tolist() == want["tokens"].tolist()
        assert torch.allclose(have["positional_scores"], want["positional_scores"], atol=1e-5)
        assert abs(float(have["score"]) - float(want["score"])) < 1e-5
    return spec.stats


@settings(max_examples=120, **SETTINGS)
@given(target=model_shapes(False), draft=model_shapes(True), gen=generation,
       lengths=st.lists(st.integers(1, 10), min_size=1, max_size=5),
       prefix_size=st.sampled_from([0, 0, 1, 2]))
def test_translation_greedy_equals_stock(target, draft, gen, lengths, prefix_size):
    compare(*translation_case(target, draft, gen, lengths, prefix_size), gen)


def translation_case(target, draft, gen, lengths, prefix_size):
    """(target model, draft model, batch, forced prefix | None) from drawn settings."""
    tgt = translation_model(TASK, eos_bias=gen["eos_bias"], **target)
    drf = translation_model(TASK, **draft)
    sample = source_batch(DICT, lengths, seed=target["seed"])
    prefix = None
    if prefix_size:
        g = torch.Generator().manual_seed(draft["seed"])
        prefix = torch.randint(DICT.nspecial, len(DICT), (len(lengths), prefix_size), generator=g)
    return tgt, drf, sample, prefix


@settings(max_examples=70, **SETTINGS)
@given(target=model_shapes(False), draft=model_shapes(True), gen=generation,
       prompts=st.lists(st.integers(0, 4), min_size=1, max_size=4))
def test_language_model_greedy_equals_stock(target, draft, gen, prompts):
    """Decoder-only models; prompts of different lengths are right-padded prefix tokens, as
    fairseq's language_modeling task passes them."""
    target = {k: v for k, v in target.items()}
    lm = language_model(TASK, eos_bias=gen["eos_bias"], **target)
    drf = language_model(TASK, **draft)
    sample, prefix = prompt_batch(DICT, prompts, seed=target["seed"])
    compare(lm, drf, sample, prefix, gen)


def test_identical_draft_accepts_everything():
    tgt = translation_model(TASK, layers=2, eos_bias=-4.0, seed=3)
    sample = source_batch(DICT, [5, 3], seed=1)
    gen = dict(draft_len=4, adaptive=False, eos_bias=0, max_len_b=12, min_len=1,
               unk_penalty=0.0, ngram=0)
    stats = compare(tgt, tgt, sample, None, gen)
    assert stats.alpha == 1.0
    # every pass keeps 4 drafts + 1 bonus token: ceil(longest / 5) passes, not one per token
    spec_longest = max(len(h[0]["tokens"]) for h in SpeculativeSequenceGenerator(
        [tgt], DICT, draft_model=tgt, draft_len=4, max_len_b=12).generate([tgt], sample))
    assert stats.target_calls == -(-spec_longest // 5)


def test_stats_count_the_verified_positions_and_those_that_decided():
    """A pass over 2 rows that computed both at the widest window, 3 drafts + 1 (8 positions):
    row 0 kept 1 of 3 (its last 2 positions lay after the rejection), row 1 drafted 1 (EOS) and
    kept it (2 positions past its window); then a pass of one row, 2 drafts + 1, that kept both;
    then plain steps, whose written tokens each decided themselves."""
    from fairseq_fast.speculative.stats import SpecStats

    s = SpecStats()
    s.record(offered=torch.tensor([3, 1]), accepted=torch.tensor([1, 1]),
             committed=torch.tensor([2, 2]), cap=torch.tensor([3, 3]),
             drafts=torch.tensor([[5, 6, 7], [2, 2, 2]]), draft_steps=3, verified=8)
    assert (s.verified, s.row_rounds, s.accepted) == (8, 2, 2)
    assert s.useful_share == 0.5
    s.record(offered=torch.tensor([2]), accepted=torch.tensor([2]), committed=torch.tensor([3]),
             cap=torch.tensor([2]), drafts=torch.tensor([[4, 5]]), draft_steps=2, verified=3)
    assert s.verified == 11 and s.useful_share == 7 / 11
    # a round of 3 plain steps over 2 rows; row 1 ended at its second step (EOS)
    s.record_plain(committed=torch.tensor([3, 2]), steps=3, verified=6)
    assert s.verified == 17 and s.useful_share == 12 / 17


def test_generators_count_the_seconds_of_each_phase():
    """The phase clocks the benchmarks read: every phase that ran has seconds, the draft's
    share of the encoders is less than the whole, and the next batch adds to them."""
    from fairseq_fast.generators.fast import FastSequenceGenerator

    tgt = translation_model(TASK, layers=2, seed=5, eos_bias=-1.0)
    drf = translation_model(TASK, layers=1, dim=8, heads=1, seed=6)
    sample = source_batch(DICT, [5, 3], seed=1)
    spec = SpeculativeSequenceGenerator([tgt], DICT, draft_model=drf, draft_len=3, max_len_b=12)
    spec.generate([tgt], sample)
    first = dict(spec.stats.seconds)
    assert set(first) == {"encoders", "draft_encoder", "drafting", "verifying"}
    assert min(first.values()) > 0 and first["draft_encoder"] < first["encoders"]
    spec.generate([tgt], sample)
    assert all(spec.stats.seconds[phase] > seconds for phase, seconds in first.items())
    fast = FastSequenceGenerator([tgt], DICT, beam_size=2, max_len_b=12)
    fast.generate([tgt], sample)
    assert set(fast.model.seconds) == {"encoder", "cross", "decoder"}
    assert min(fast.model.seconds.values()) > 0


def test_batch_rows_equal_rows_alone():
    """Ragged acceptance: each row of a batch decodes exactly as it does on its own."""
    tgt = translation_model(TASK, layers=2, seed=5, eos_bias=0.5)
    drf = translation_model(TASK, layers=1, dim=8, heads=1, seed=6)
    sample = source_batch(DICT, [9, 2, 6, 4, 1, 7], seed=2)
    spec = SpeculativeSequenceGenerator([tgt], DICT, draft_model=drf, draft_len=3, max_len_b=15)
    together = spec.generate([tgt], sample)
    src = sample["net_input"]["src_tokens"]
    for i in range(src.size(0)):
        row = src[i: i + 1]
        alone = spec.generate([tgt], {"net_input": {"src_tokens": row[:, (row != DICT.pad()).any(0)],
                                                   "src_lengths": sample["net_input"]["src_lengths"][i: i + 1]}})
        assert alone[0][0]["tokens"].tolist() == together[i][0]["tokens"].tolist()


def test_next_batches_reuse_zeroed_caches_and_still_equal_stock():
    """One generator, several batches: the target's and the draft's K/V buffers are the last
    batch's where they fit (no new memory), zeroed first, so stale values (poisoned with NaN
    here: a masked key's 0 x NaN would be NaN) change nothing; a larger batch allocates anew.
    Every batch equals stock."""
    tgt = translation_model(TASK, layers=2, seed=5, eos_bias=-1.0)
    drf = translation_model(TASK, layers=1, dim=8, heads=1, seed=6)
    spec = SpeculativeSequenceGenerator([tgt], DICT, draft_model=drf, draft_len=3, max_len_b=15)
    stock = SequenceGenerator([tgt], DICT, beam_size=1, max_len_b=15)
    seen = []
    for lengths, seed in (([9, 2, 6], 1), ([4, 7], 2), ([3, 5, 8, 2], 3)):
        if seen:
            for buffer in spec._cache + spec.proposer.state.buffers:
                buffer.fill_(float("nan"))
        sample = source_batch(DICT, lengths, seed=seed)
        for want, have in zip(stock.generate([tgt], sample), spec.generate([tgt], sample)):
            assert have[0]["tokens"].tolist() == want[0]["tokens"].tolist()
            assert abs(float(have[0]["score"]) - float(want[0]["score"])) < 1e-5
        seen.append((spec._cache[0].data_ptr(), spec.proposer.state.buffers[0].data_ptr()))
    assert seen[1] == seen[0]  # 2 rows in the 3-row buffers
    assert seen[2][0] != seen[0][0] and seen[2][1] != seen[0][1]  # 4 rows: new ones


def test_drafts_of_a_row_end_at_its_first_eos():
    """The proposer without a stop rule: row b offers its drafts up to and including its first
    EOS (all k if none), each row on its own, and drafting stops once every row has ended. EOS is
    forced by the length rule (min_len = max_len = 4: EOS nowhere before step 4, only EOS from
    there), so rows with 4, 3 and 1 committed tokens end after 2, 3 and (past k = 4) 4 drafts."""
    from fairseq_fast.speculative.proposer import DraftModelProposer
    from fairseq_fast.decoding.step_rules import StepRules

    model = translation_model(TASK, layers=1, seed=3)
    rules = StepRules(pad=DICT.pad(), unk=DICT.unk(), eos=DICT.eos(), max_len=4, min_len=4)
    proposer = DraftModelProposer(model, rules)
    sample = source_batch(DICT, [5, 3, 4], seed=1)
    with torch.no_grad():
        for committed, want in (([4, 3, 1], [2, 3, 4]), ([4, 4, 4], [2, 2, 2])):
            proposer.start(sample["net_input"], 3, 16)
            proposer.join()
            n_tokens = torch.tensor(committed)
            tokens = torch.full((3, 16), DICT.pad())
            tokens[:, 0] = DICT.eos()
            for b, n in enumerate(committed):
                tokens[b, 1:n] = DICT.nspecial  # any word
            drafts, _, drafted = proposer.propose(tokens, n_tokens, 4, None)
            assert drafted.tolist() == want
            assert drafts.size(1) == max(want)  # stopped early when every row had ended
            for b, n in enumerate(want):
                ends = (drafts[b, :n] == DICT.eos()).tolist()
                last_step = committed[b] - 1 + n - 1  # the step of row b's last draft
                assert ends == [False] * (n - 1) + [last_step >= 4]


@pytest.mark.parametrize("sampling", [False, True])
def test_rows_without_draft_state_are_offered_nothing(sampling):
    """Rows that joined the rows in flight after the draft's last join (in-flight batching)
    have no draft state: they are offered no draft (q zero), their token rows are left as they
    were, and the rows with state get the drafts and q they would get alone."""
    from fairseq_fast.decoding.step_rules import StepRules
    from fairseq_fast.speculative.acceptance import RejectionSampling
    from fairseq_fast.speculative.proposer import DraftModelProposer

    model = translation_model(TASK, layers=1, seed=3).double()
    rules = StepRules(pad=DICT.pad(), unk=DICT.unk(), eos=DICT.eos(), max_len=12)
    sampler = RejectionSampling() if sampling else None
    first, later = (source_batch(DICT, lengths, seed=i) for i, lengths in
                    enumerate(([5, 3, 4], [6, 2])))
    mixed, alone = DraftModelProposer(model, rules, sampler), DraftModelProposer(model, rules,
                                                                                 sampler)
    with torch.no_grad():
        for proposer in (mixed, alone):
            proposer.start(first["net_input"], 3, 16)
            proposer.join()
        mixed.admit(mixed.prepare(later["net_input"]), 0, 2, 16)
        assert mixed.pending == 2 and alone.pending == 0
        tokens = torch.full((5, 16), DICT.pad())
        tokens[:, 0] = DICT.eos()
        before = tokens.clone()
        n_tokens = torch.ones(5, dtype=torch.long)
        torch.manual_seed(0)
        drafts, q, drafted = mixed.propose(tokens, n_tokens, 3, None)
        torch.manual_seed(0)
        want, want_q, want_drafted = alone.propose(tokens[:3].clone(), n_tokens[:3], 3, None)
    assert mixed.last_rows == 3
    assert drafted[3:].tolist() == [0, 0] and torch.equal(drafted[:3], want_drafted)
    assert torch.equal(drafts[:3], want) and torch.equal(tokens[3:], before[3:])
    assert torch.equal(tokens[:3, 1:1 + want.size(1)], want)
    if sampling:
        assert torch.equal(q[:3], want_q) and not q[3:].any()
    else:
        assert q is None and want_q is None


def test_window_attention_sums_short_rows_as_stocks_step():
    """A verify window's queries attend over key slots padded with masked ones up to the
    longest row: each query's float32 softmax has the bits of stock's step, which softmaxes
    exactly the keys it sees (torch sums a row shorter than its vector width value by value,
    the same row padded past that width lane by lane)."""
    from fairseq_fast.decoding.lean_decoder import _attend

    g = torch.Generator().manual_seed(0)
    for total in (3, 5, 8, 9, 16, 17, 40):
        n = min(total, 6)
        q, k, v = (torch.randn(2, 2, t, 4, generator=g, dtype=torch.float64)
                   for t in (n, total, total))
        keys = torch.stack([torch.arange(n) + total - n + 1, torch.arange(n) + 1])  # ragged
        mask = (torch.arange(total)[None, None, :] >= keys[:, :, None])[:, None]
        _, probs = _attend(q, k, v, mask, keep_probs=True, keys=keys)
        scores = torch.matmul(q, k.transpose(-1, -2))
        for b in range(2):
            for j in range(n):
                c = int(keys[b, j])
                want = torch.softmax(scores[b, :, j, :c], dim=-1, dtype=torch.float32)
                assert torch.equal(probs[b, :, j, :c], want), (total, b, j)
                assert not probs[b, :, j, c:].any()
