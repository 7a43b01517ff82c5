"""A greedy draft's steps in one C call (decoding/greedy_steps.py): the same proposals as the
Python steps, under the same edits (min/max length, unk penalty, pad), for ragged rows that catch
up 1 or 2 tokens; and speculative output with such a draft still equals stock."""
import pytest
import torch
from fairseq.sequence_generator import SequenceGenerator
from hypothesis import given, settings
from hypothesis import strategies as st

from fairseq_fast.decoding.step_rules import StepRules
from fairseq_fast.generators.speculative import SpeculativeSequenceGenerator
from fairseq_fast.kernels import loader, small_gemm
from fairseq_fast.decoding import greedy_steps
from fairseq_fast.speculative.draft_vocab import shortlist
from fairseq_fast.decoding.greedy_steps import GreedySteps
from fairseq_fast.speculative.proposer import DraftModelProposer
from model_factory import DummyTask, make_dictionary, source_batch, translation_model
from test_speculative_equality import SETTINGS, compare, generation, model_shapes

DICT = make_dictionary(16)
TASK = DummyTask(DICT, DICT)
pytestmark = pytest.mark.skipif(
    not small_gemm.available() or loader.function("gd_greedy_f32") is None,
    reason="no C kernels here")


def draft_model(shape, favoured=None, layernorm_embedding=False):
    """A float32 draft; `favoured` (a special token) gets a large output bias, so that the
    rules about it (never pad, unk penalty, EOS only from min_len) decide the argmax."""
    model = translation_model(TASK, dtype=torch.float32, layernorm_embedding=layernorm_embedding,
                              **shape)
    if favoured is not None:
        with torch.no_grad():
            model.decoder.output_projection.bias[favoured] += 30.0
    return model


def proposer_pair(model, rules, vocab):
    """The same draft proposing in one C call and step by step (lean_decoder.forward, then
    the edits and argmax in Python)."""
    c = DraftModelProposer(model, rules, vocab=vocab)
    python = DraftModelProposer(model, rules, vocab=vocab)
    python.steps = None
    assert c.steps is not None
    return c, python


@settings(max_examples=60, **SETTINGS)
@given(shape=model_shapes(True), lengths=st.lists(st.integers(1, 8), min_size=1, max_size=4),
       favoured=st.sampled_from([None, None, "pad", "unk", "eos"]),
       layernorm_embedding=st.booleans(), k=st.integers(1, 5), min_len=st.integers(1, 6),
       max_len=st.integers(2, 12), unk_penalty=st.sampled_from([0.0, 40.0, -3.0]),
       vocab=st.sampled_from([0, 10]), keeps=st.lists(st.integers(0, 6), min_size=6,
                                                       max_size=6))
def test_c_steps_propose_what_the_python_steps_propose(shape, lengths, favoured,
                                                       layernorm_embedding, k, min_len, max_len,
                                                       unk_penalty, vocab, keeps):
    """Rounds of propose / commit / rollback: rows keep different numbers of drafts (so the
    next round catches up 1 or 2 tokens, rows at different lengths), in both proposers alike."""
    favoured = None if favoured is None else getattr(DICT, favoured)()
    model = draft_model(shape, favoured, layernorm_embedding)
    rules = StepRules(pad=DICT.pad(), unk=DICT.unk(), eos=DICT.eos(), max_len=max_len,
                      min_len=min(min_len, max_len), unk_penalty=unk_penalty)
    c, python = proposer_pair(model, rules, shortlist(DICT, vocab))
    sample = source_batch(DICT, lengths, seed=shape["seed"])
    bsz = len(lengths)
    tokens = {p: torch.full((bsz, 64), DICT.pad()) for p in (c, python)}
    n_tokens = torch.ones(bsz, dtype=torch.long)
    with torch.no_grad():
        for p in (c, python):
            p.start(sample["net_input"], bsz, 8)
            p.join()  # draft state now, as the loop gives it before a round that drafts
            tokens[p][:, 0] = DICT.eos()
        for round_, keep in enumerate(keeps):
            got = [p.propose(tokens[p], n_tokens, k, None) for p in (c, python)]
            (drafts, q, drafted), (want, _, want_drafted) = got
            assert q is None
            assert drafts.tolist() == want.tolist(), f"round {round_}"
            assert drafted.tolist() == want_drafted.tolist()
            assert c.last_steps == python.last_steps
            assert c.state.lengths.tolist() == python.state.lengths.tolist()
            assert torch.equal(tokens[c], tokens[python])
            if favoured == DICT.pad():
                assert not (drafts == DICT.pad()).any()
            # row b keeps up to (keep + b) % (k + 1) drafts and one token of its own (a word):
            # rows that kept every draft feed 2 tokens next round, the others 1
            kept = torch.minimum(drafted, (keep + torch.arange(bsz)) % (k + 1))
            for b in range(bsz):
                n = int(n_tokens[b])
                for t in tokens.values():
                    t[b, n + int(kept[b])] = DICT.nspecial + round_
            n_tokens = n_tokens + kept + 1
            if int(n_tokens.max()) + 2 * k >= 64:
                break
            for p in (c, python):
                p.rollback(n_tokens)


@settings(max_examples=60, **SETTINGS)
@given(target=model_shapes(False), draft=model_shapes(True), gen=generation,
       lengths=st.lists(st.integers(1, 10), min_size=1, max_size=5))
def test_speculative_output_with_a_c_drafted_float32_draft_equals_stock(target, draft, gen,
                                                                         lengths):
    """The target in float64 (its output equals stock's token for token); the draft in
    float32, proposing through C wherever a greedy round allows it."""
    calls = []
    run = GreedySteps.run

    def counted(self, *args):
        calls.append(1)
        return run(self, *args)

    tgt = translation_model(TASK, eos_bias=gen["eos_bias"], **target)
    drf = translation_model(TASK, dtype=torch.float32, **draft)
    sample = source_batch(DICT, lengths, seed=target["seed"])
    GreedySteps.run = counted
    try:
        compare(tgt, drf, sample, None, gen)
    finally:
        GreedySteps.run = run
    assert calls or gen["ngram"]  # n-gram blocking needs Python to see each step


def test_rounds_python_must_see_take_the_python_steps():
    """A stop rule, a forced prefix or n-gram blocking: each step goes through Python."""
    model = draft_model(dict(layers=1, dim=16, heads=2, seed=1))
    sample = source_batch(DICT, [4, 6], seed=1)
    rules = StepRules(pad=DICT.pad(), unk=DICT.unk(), eos=DICT.eos(), max_len=20)
    proposer = DraftModelProposer(model, rules)
    ran = []
    proposer.steps.run = lambda *args: ran.append(1)  # would fail the call if reached

    class Never:
        discards_last = False

        def stop(self, prob):
            return torch.zeros_like(prob, dtype=torch.bool)

    with torch.no_grad():
        for prefix, stop, ngram in ((torch.full((2, 1), 5), None, 0), (None, Never(), 0),
                                    (None, None, 2)):
            rules.no_repeat_ngram_size = ngram
            proposer.start(sample["net_input"], 2, 8)
            proposer.join()
            tokens = torch.full((2, 16), DICT.pad())
            tokens[:, 0] = DICT.eos()
            drafts, _, _ = proposer.propose(tokens, torch.ones(2, dtype=torch.long), 3, prefix,
                                            stop)
            assert drafts.size(1) > 0
    assert not ran


def test_drafts_that_c_cannot_take_are_refused_up_front():
    """Only decoders whose whole step the C call computes as Python does: a model whose
    log-probs are not fairseq's log_softmax (the argmax could differ) or a layer norm without
    an affine part keeps the Python steps."""
    plain = draft_model(dict(layers=1, dim=16, heads=2, seed=1))
    assert isinstance(DraftModelProposer(plain, None).steps, GreedySteps)

    class Tempered(type(plain)):
        def get_normalized_probs(self, net_output, log_probs, sample=None):
            return super().get_normalized_probs(net_output, log_probs, sample)

    tempered = draft_model(dict(layers=1, dim=16, heads=2, seed=1))
    tempered.__class__ = Tempered
    assert not greedy_steps.stock_normalization(tempered)
    assert DraftModelProposer(tempered, None).steps is None
    bare = draft_model(dict(layers=1, dim=16, heads=2, seed=1))
    bare.decoder.layer_norm = torch.nn.LayerNorm(16, elementwise_affine=False)
    assert DraftModelProposer(bare, None).steps is None
    assert DraftModelProposer(plain, None, kernels=False).steps is None  # --no-fast-linear


def test_float32_draft_through_c_keeps_stock_output_on_a_longer_batch():
    """Several sentences of a batch, one float64 target, a float32 draft of another shape:
    stock's tokens, and the C steps ran."""
    tgt = translation_model(TASK, layers=2, seed=5, eos_bias=-1.0)
    drf = translation_model(TASK, layers=1, dim=8, heads=1, seed=6, dtype=torch.float32)
    sample = source_batch(DICT, [9, 2, 6, 4, 1, 7], seed=2)
    spec = SpeculativeSequenceGenerator([tgt], DICT, draft_model=drf, draft_len=4, max_len_b=15)
    stock = SequenceGenerator([tgt], DICT, beam_size=1, max_len_b=15)
    assert spec.proposer.steps is not None
    for want, have in zip(stock.generate([tgt], sample), spec.generate([tgt], sample)):
        assert have[0]["tokens"].tolist() == want[0]["tokens"].tolist()
    assert spec.stats.draft_calls > 0 and spec.stats.accepted > 0
