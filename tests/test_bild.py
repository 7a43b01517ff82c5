"""BiLD: exact where its rules make it exact, the policies fire where the paper says, batched rows
decode as they do alone, and a plain step-by-step reference (no cache, no batching) agrees.

Float64 models, as in test_speculative_equality.py."""
import copy
import math

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from fairseq_fast.speculative.acceptance import BiLDRollback, GreedyAcceptance
from fairseq_fast.generators.bild import BiLDSequenceGenerator
from fairseq_fast.errors import UserError
from fairseq_fast.decoding.step_rules import StepRules
from fairseq_fast.kernels import small_gemm
from model_factory import language_model, prompt_batch, source_batch, translation_model
from test_speculative_equality import (DICT, SETTINGS, TASK, compare, generation, model_shapes,
                                        translation_case)


def bild(fallback, rollback, max_small):
    def build(target, draft, gen, kw):
        return BiLDSequenceGenerator([target], DICT, small_model=draft,
                                     fallback_threshold=fallback, rollback_threshold=rollback,
                                     max_small_steps=max_small, **kw)
    return build


exact_settings = st.one_of(
    # rollback 0: every disagreement is rolled back, whatever the fallback threshold
    st.tuples(st.floats(0.0, 1.0), st.just(0.0), st.integers(1, 12)),
    # fallback 1: the large model writes every token, whatever the rollback threshold
    st.tuples(st.just(1.0), st.floats(0.0, 50.0), st.integers(1, 12)),
)


@settings(max_examples=80, **SETTINGS)
@given(target=model_shapes(False), draft=model_shapes(True), gen=generation, exact=exact_settings,
       lengths=st.lists(st.integers(1, 10), min_size=1, max_size=5),
       prefix_size=st.sampled_from([0, 0, 1, 2]))
def test_exact_settings_equal_large_model_greedy(target, draft, gen, exact, lengths, prefix_size):
    case = translation_case(target, draft, gen, lengths, prefix_size)
    stats = compare(*case, gen, build=bild(*exact))
    if exact[0] == 1.0:
        assert stats.accepted == 0 and stats.rejected == 0  # the small model wrote nothing


@settings(max_examples=40, **SETTINGS)
@given(target=model_shapes(False), draft=model_shapes(True), gen=generation, exact=exact_settings,
       prompts=st.lists(st.integers(0, 4), min_size=1, max_size=4))
def test_exact_settings_language_model(target, draft, gen, exact, prompts):
    lm = language_model(TASK, eos_bias=gen["eos_bias"], **target)
    drf = language_model(TASK, **draft)
    sample, prefix = prompt_batch(DICT, prompts, seed=target["seed"])
    compare(lm, drf, sample, prefix, gen, build=bild(*exact))


# -- the rules on hand-made scores --------------------------------------------------------------
def verify(rule, rows, drafts, gamma=None):
    """rows: per position, {token: log-prob} (others -20); drafts [K]."""
    lprobs = torch.full((1, len(rows), 8), -20.0)
    for j, row in enumerate(rows):
        for t, v in row.items():
            lprobs[0, j, t] = v
    d = torch.tensor([drafts])
    g = torch.tensor([len(drafts) if gamma is None else gamma])
    v = rule.verify(lprobs, d, g, torch.zeros(1))
    a = int(v.accepted)
    return a, v.tokens[0, : a + 1].tolist(), v.cum_scores[0, : a + 1].tolist()


def test_rollback_at_first_token_above_threshold():
    rows = [{3: -0.1}, {6: -0.2, 4: -6.0}, {5: -0.1}, {7: -0.3}]
    a, tokens, cum = verify(BiLDRollback(5.0), rows, [3, 4, 5])
    assert (a, tokens) == (1, [3, 6]) and cum == pytest.approx([-0.1, -0.3])
    # 4's cross-entropy 6.0 is within a threshold of 6.5: the whole window is kept, plus a bonus
    a, tokens, cum = verify(BiLDRollback(6.5), rows, [3, 4, 5])
    assert (a, tokens) == (3, [3, 4, 5, 7])
    assert cum == pytest.approx([-0.1, -6.1, -6.2, -6.5])  # scores are the large model's


def test_threshold_is_exceeded_not_reached():
    rows = [{6: -0.2, 4: -5.0}, {7: -0.1}]
    assert verify(BiLDRollback(5.0), rows, [4])[:2] == (1, [4, 7])  # CE == threshold: kept
    assert verify(BiLDRollback(4.99), rows, [4])[:2] == (0, [6])


def test_large_models_own_choice_is_never_rolled_back():
    rows = [{2: -7.0}, {5: -9.0}, {1: -0.5}]  # argmax with cross-entropy 7 and 9
    assert verify(BiLDRollback(1.0), rows, [2, 5])[:2] == (2, [2, 5, 1])


def test_window_cap_and_threshold_zero_is_exact_greedy():
    rows = [{3: -0.1}, {4: -0.2}, {5: -0.1}, {7: -0.3}]
    assert verify(BiLDRollback(5.0), rows, [3, 4, 6], gamma=1)[:2] == (1, [3, 4])
    near = [{3: -0.1, 2: -0.15}, {4: -0.2}, {5: -0.1}, {7: -0.3}]
    for drafts in ([3, 4, 5], [2, 4, 5], [3, 1, 5]):
        assert verify(BiLDRollback(0.0), near, drafts) == verify(GreedyAcceptance(), near, drafts)


@pytest.mark.skipif(not small_gemm.available(), reason="kernels not buildable here")
def test_ragged_verify_windows_change_nothing_but_the_work(monkeypatch):
    """float32 on the C path: rows whose windows end at different points (fallbacks) are
    verified at their own widths (lean_decoder.forward's counts), with the hypotheses and
    scores, bit for bit, of verifying every row at the widest window's width, and fewer
    positions computed."""
    large = translation_model(TASK, layers=2, dim=32, heads=4, ffn=64, seed=5, eos_bias=0.5,
                              dtype=torch.float32)
    small = perturbed_copy(large, 0.1)
    sample = source_batch(DICT, [9, 2, 6, 4, 1, 7], seed=2)

    def run(ragged):
        gen = BiLDSequenceGenerator([large], DICT, small_model=small, fallback_threshold=0.3,
                                    rollback_threshold=1.5, max_small_steps=4, max_len_b=15)
        assert gen.target.whole is not None
        if not ragged:
            forward = gen.target.forward
            monkeypatch.setattr(gen.target, "forward",
                                lambda state, tokens, counts=None: forward(state, tokens))
        return gen.generate([large], sample), gen.stats

    (ragged, stats), (full, full_stats) = run(True), run(False)
    assert stats.fallbacks > 0 and stats.verified < full_stats.verified
    assert stats.useful_share > full_stats.useful_share
    for a, b in zip(ragged, full):
        assert a[0]["tokens"].tolist() == b[0]["tokens"].tolist()
        assert torch.equal(a[0]["positional_scores"], b[0]["positional_scores"])


# -- the policies in the loop, with models whose outputs are known -------------------------------
def constant_model(probs, seed=0, layers=1):
    """A translation model whose next-token distribution is `probs` {token: weight} at every
    step, whatever the input (output projection zeroed, biases set)."""
    model = translation_model(TASK, layers=layers, share=False, seed=seed)
    with torch.no_grad():
        model.decoder.output_projection.weight.zero_()
        bias = torch.full((len(DICT),), -30.0, dtype=torch.float64)
        total = sum(probs.values())
        for t, w in probs.items():
            bias[t] = math.log(w / total)
        model.decoder.output_projection.bias.copy_(bias)
    return model


T, U = DICT.nspecial + 1, DICT.nspecial + 2  # two ordinary tokens
EOS = DICT.eos()


def run_bild(large, small, fallback, rollback, max_small, max_len_b=10, lengths=(4,)):
    gen = BiLDSequenceGenerator([large], DICT, small_model=small, fallback_threshold=fallback,
                                rollback_threshold=rollback, max_small_steps=max_small,
                                max_len_b=max_len_b)
    out = gen.generate([large], source_batch(DICT, list(lengths), seed=1))
    return [h[0]["tokens"].tolist() for h in out], gen.stats


def test_fallback_fires_below_threshold_only():
    small = constant_model({T: 0.7, U: 0.2, EOS: 0.1})  # confident 0.7 in T, EOS 0.1
    large = constant_model({U: 0.9, T: 0.1}, seed=1)  # prefers U; T costs -log 0.1 = 2.3
    # 0.7 >= 0.6: no fallback; windows of 3 small tokens, each followed by the large model's U;
    # at max length (step 10) only EOS is allowed: the small model's EOS (0.1) falls back
    tokens, stats = run_bild(large, small, fallback=0.6, rollback=5.0, max_small=3)
    assert tokens == [[T, T, T, U, T, T, T, U, T, T, EOS]]
    assert (stats.target_calls, stats.fallbacks, stats.rejected) == (3, 1, 0)
    assert stats.accepted == 8 and stats.small_share == pytest.approx(8 / 11)
    # 0.7 < 0.75: every small token falls back, the large model writes everything
    tokens, stats = run_bild(large, small, fallback=0.75, rollback=5.0, max_small=3)
    assert tokens == [[U] * 10 + [EOS]]
    assert (stats.target_calls, stats.fallbacks, stats.accepted) == (11, 11, 0)


def test_rollback_fires_above_threshold_only():
    small = constant_model({T: 0.7, U: 0.2, EOS: 0.1})
    large = constant_model({U: 0.9, T: 0.1}, seed=1)  # cross-entropy of T: 2.303
    tokens, stats = run_bild(large, small, fallback=0.6, rollback=2.2, max_small=4)
    assert tokens == [[U] * 10 + [EOS]]  # each window's first small token rolled back
    assert stats.rejected == 10 and stats.accepted == 0
    tokens, stats = run_bild(large, small, fallback=0.6, rollback=2.4, max_small=4)
    assert tokens == [[T, T, T, T, U, T, T, T, T, U, EOS]] and stats.rejected == 0
    # the large model's own choice stays, however unlikely the large model finds it
    agreeing = constant_model({T: 0.05, **{t: 0.04 for t in range(DICT.nspecial + 3, 20)}})
    tokens, stats = run_bild(agreeing, small, fallback=0.6, rollback=1.0, max_small=4)
    assert stats.rejected == 0 and tokens[0][:4] == [T] * 4


def perturbed_copy(model, noise, seed=0):
    """A small model that agrees with `model` often, not always (random pairs rarely agree)."""
    small = copy.deepcopy(model)
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for p in small.parameters():
            p.add_(noise * torch.randn(p.shape, generator=g, dtype=p.dtype))
    return small


# -- a plain reference of the paper's algorithm ------------------------------------------------
@torch.no_grad()
def full_lprobs(model, rules, src, tokens, step):
    """Edited log-probs for the token after `tokens`, by a full forward pass (no cache)."""
    enc = model.encoder(src, src_lengths=torch.tensor([src.size(1)]))
    logits, _ = model.decoder(torch.tensor([tokens]), encoder_out=enc)
    steps = torch.tensor([[step]])
    buf = torch.tensor([tokens + [DICT.pad()]])
    return rules.log_probs(model, logits[:, -1:], steps, buf, None)[0, 0]


def reference_bild(large, small, src, fallback, rollback, max_small, max_len):
    """One sentence, one token at a time: returns (tokens, fallbacks, rollbacks, large calls)."""
    rules = StepRules(pad=DICT.pad(), unk=DICT.unk(), eos=EOS, max_len=max_len)
    out, score = [EOS], torch.zeros((), dtype=torch.float32)
    fallbacks = rollbacks = calls = 0
    while out[-1] != EOS or len(out) == 1:
        window = []
        while len(window) < max_small:  # the small model leads
            lp = full_lprobs(small, rules, src, out + window, len(out) + len(window) - 1)
            token = int(lp.argmax())
            if lp[token].exp() < fallback:
                fallbacks += 1
                break
            window.append(token)
            if token == EOS:
                break
        calls += 1  # the large model checks the window and writes the next position
        for j in range(len(window) + 1):
            lp = full_lprobs(large, rules, src, out, len(out) - 1)
            choice = int(torch.topk(lp + score, 2).indices[0])
            if j < len(window):
                d = window[j]
                if d != choice and -float(lp[d]) > rollback:
                    rollbacks += 1
                    d = choice
            else:
                d = choice
            score = lp[d] + score
            out.append(d)
            if d == EOS or (j < len(window) and d != window[j]):
                break
    return out[1:], fallbacks, rollbacks, calls


@settings(max_examples=25, **SETTINGS)
@given(target=model_shapes(False), draft=model_shapes(True),
       fallback=st.floats(0.05, 0.95), rollback=st.floats(0.2, 4.0),
       max_small=st.integers(1, 6), eos_bias=st.sampled_from([-4.0, 0.0, 1.5]),
       lengths=st.lists(st.integers(1, 8), min_size=1, max_size=4), perturbed=st.booleans())
def test_matches_reference_row_by_row(target, draft, fallback, rollback, max_small, eos_bias,
                                      lengths, perturbed):
    large = translation_model(TASK, eos_bias=eos_bias, **target)
    small = perturbed_copy(large, 0.1) if perturbed else translation_model(TASK, **draft)
    sample = source_batch(DICT, lengths, seed=target["seed"])
    gen = BiLDSequenceGenerator([large], DICT, small_model=small, fallback_threshold=fallback,
                                rollback_threshold=rollback, max_small_steps=max_small,
                                max_len_b=12)
    got = gen.generate([large], sample)
    src = sample["net_input"]["src_tokens"]
    want_fb = want_rb = 0
    for i in range(len(lengths)):
        row = src[i: i + 1, src.size(1) - lengths[i] - 1:]  # strip left padding
        tokens, fb, rb, calls = reference_bild(large, small, row, fallback, rollback, max_small,
                                               max_len=12)
        assert got[i][0]["tokens"].tolist() == tokens
        want_fb, want_rb = want_fb + fb, want_rb + rb
        if len(lengths) == 1:
            assert gen.stats.target_calls == calls
    assert (gen.stats.fallbacks, gen.stats.rejected) == (want_fb, want_rb)


@pytest.mark.parametrize("kw,needle", [
    (dict(fallback_threshold=1.5), "--bild-fallback-threshold must be in [0, 1]"),
    (dict(fallback_threshold=-0.1), "--bild-fallback-threshold must be in [0, 1]"),
    (dict(rollback_threshold=-1.0), "--bild-rollback-threshold must be >= 0"),
    (dict(max_small_steps=0), "--bild-max-small-steps must be an integer >= 1"),
    (dict(beam_size=5), "BiLD needs --beam 1"),
    (dict(sampling=True), "greedy only"),
])
def test_bad_settings_are_user_errors(kw, needle):
    model = translation_model(TASK, seed=1)
    with pytest.raises(UserError) as e:
        BiLDSequenceGenerator([model], DICT, small_model=model, **kw)
    assert needle in str(e.value)


def test_batch_rows_equal_rows_alone():
    """Per-row windows, fallbacks and rollbacks: a row decodes in a batch as it does alone."""
    large = translation_model(TASK, layers=2, seed=5, eos_bias=0.5)
    small = perturbed_copy(large, 0.1)
    sample = source_batch(DICT, [9, 2, 6, 4, 1, 7], seed=2)
    gen = BiLDSequenceGenerator([large], DICT, small_model=small, fallback_threshold=0.3,
                                rollback_threshold=1.5, max_small_steps=4, max_len_b=15)
    together = gen.generate([large], sample)
    assert gen.stats.fallbacks > 0 and gen.stats.rejected > 0 and gen.stats.accepted > 0
    src, lengths = sample["net_input"]["src_tokens"], sample["net_input"]["src_lengths"]
    for i in range(src.size(0)):
        row = src[i: i + 1, src.size(1) - int(lengths[i]):]
        alone = gen.generate([large], {"net_input": {"src_tokens": row,
                                                     "src_lengths": lengths[i: i + 1]}})
        assert alone[0][0]["tokens"].tolist() == together[i][0]["tokens"].tolist()
        assert torch.allclose(alone[0][0]["positional_scores"],
                              together[i][0]["positional_scores"], atol=1e-6)
