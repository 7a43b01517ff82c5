"""In-flight batching (SpeculativeSequenceGenerator.generate_stream, fairseq-generate
--inflight-batching): a sentence that finishes leaves at once and a waiting one takes its row,
and every sentence's output is the same as generate() gives it in its own batch. Covered: the
speculative generator with every proposer, BiLD, and greedy search without drafts (the default
generator's, on the same loop).

float64 (the torch path) and float32 (the C kernels, whose rows and masked keys change no bit of
another row: test_cpu_attention.py) are compared hypothesis for hypothesis; float32 scores bit for
bit.
"""
from typing import List

import pytest
import torch

from fairseq_fast.decoding import lean_decoder
from fairseq_fast.decoding.lean_decoder import CrossSource, LeanDecoder
from fairseq_fast.errors import UserError
from fairseq_fast.generators.bild import BiLDSequenceGenerator
from fairseq_fast.generators.speculative import SpeculativeSequenceGenerator
from fairseq_fast.kernels import small_gemm
from fairseq_fast.speculative.draft_length import FixedDraftLength
from model_factory import (DummyTask, language_model, make_dictionary, prompt_batch,
                           source_batch, translation_model)

DICT = make_dictionary(16)
TASK = DummyTask(DICT, DICT)

# ragged lengths, more sentences than rows, one much longer than the rest, an empty line (a
# source of EOS alone)
BATCHES = ([9, 2, 6], [4, 7], [3, 5, 8, 2], [0], [21, 3], [1, 1, 1, 1, 1])


def _models(dtype):
    target = translation_model(TASK, layers=2, seed=5, eos_bias=0.5, dtype=dtype)
    draft = translation_model(TASK, layers=1, dim=8, heads=1, seed=6, dtype=dtype)
    return target, draft


def _build(kind, target, draft, **kw):
    if kind == "model":
        return SpeculativeSequenceGenerator([target], DICT, draft_model=draft, **kw)
    if kind == "ngram":
        return SpeculativeSequenceGenerator([target], DICT, draft_method="ngram", **kw)
    if kind == "none":  # greedy search: the default generator's, with --inflight-batching
        kw.pop("draft_len", None)
        return SpeculativeSequenceGenerator([target], DICT, draft_method="none", **kw)
    if kind == "layers":
        return SpeculativeSequenceGenerator([target], DICT, draft_method="layers",
                                            draft_layers=1, **kw)
    assert kind == "bild"
    kw.pop("draft_len", None)
    return BiLDSequenceGenerator([target], DICT, small_model=draft, fallback_threshold=0.5,
                                 rollback_threshold=1.0, max_small_steps=4, **kw)


def _assert_same(expected, got, exact):
    """The same hypotheses; scores (stored in float32, as stock stores them) bit for bit where
    `exact` (a float32 model: the C kernels), else to rounding: torch's matrix products (the
    float64 path) may round a row differently with other rows beside it."""
    assert len(expected) == len(got)
    for want, have in zip(expected, got):
        assert len(want) == len(have) == 1
        want, have = want[0], have[0]
        assert have["tokens"].tolist() == want["tokens"].tolist()
        if exact:
            assert torch.equal(have["positional_scores"], want["positional_scores"])
            assert torch.equal(have["score"], want["score"])
        else:
            assert torch.allclose(have["positional_scores"], want["positional_scores"],
                                  rtol=1e-6, atol=1e-6)
            assert abs(float(have["score"]) - float(want["score"])) < 1e-6


def _stream_equals_batches(build, batches, rows, prefixes=None):
    """build() -> a generator; its stream of `batches` (forced `prefixes`) against generate()
    of each batch by a generator of its own."""
    prefixes = prefixes or [None] * len(batches)
    expected = [build().generate([None], b, prefix_tokens=p) for b, p in zip(batches, prefixes)]
    streamed = list(build().generate_stream(zip(batches, prefixes), rows))
    assert [sample for sample, _ in streamed] == list(batches)  # in the order given
    exact = next(build().model.parameters()).dtype == torch.float32
    for want, (_, got) in zip(expected, streamed):
        _assert_same(want, got, exact)


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
@pytest.mark.parametrize("kind", ["model", "ngram", "layers", "bild", "none"])
@pytest.mark.parametrize("rows", [1, 3, 8])
def test_each_sentence_as_in_its_own_batch(dtype, kind, rows):
    target, draft = _models(dtype)
    batches = [source_batch(DICT, lengths, seed=i) for i, lengths in enumerate(BATCHES)]
    _stream_equals_batches(lambda: _build(kind, target, draft, draft_len=3, max_len_b=15),
                           batches, rows)


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
@pytest.mark.parametrize("positions", [1, 16, 32])
def test_encoder_keys_projected_as_sentences_join_are_the_batchs(monkeypatch, dtype, positions):
    """CrossSource projects a batch's encoder K/V a chunk of sentences at a time, as they join;
    any run of sentences, within a chunk or across chunks, gets the very numbers cross_state
    gives the whole batch (the same matmuls), and the same padding mask."""
    monkeypatch.setattr(lean_decoder, "CROSS_CHUNK_POSITIONS", positions)  # 1, 2, 4 sentences
    target, _ = _models(dtype)
    lean = LeanDecoder(target.decoder)
    sample = source_batch(DICT, [9, 2, 6, 4, 7, 3, 5], seed=3)
    encoder_out = target.encoder(**sample["net_input"])
    keys, values, mask = lean.cross_state(encoder_out)
    source = CrossSource(lean, encoder_out)
    for lo, hi in ((0, 1), (1, 4), (4, 5), (5, 7)):  # in order, as sentences join
        k, v, m = source.take(lo, hi)
        assert len(k) == len(v) == len(keys) == 2
        for got, want in zip((*k, *v), (*keys, *values)):
            assert torch.equal(got, want[lo:hi])
        assert torch.equal(m, mask[lo:hi])


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
@pytest.mark.parametrize("kind", ["model", "none"])
def test_each_sentence_as_in_its_own_batch_with_small_encoder_chunks(monkeypatch, dtype, kind):
    """Encoder K/V projected one or two sentences at a time (newcomers taking runs across
    chunks): every sentence's output is still the one generate() gives it."""
    monkeypatch.setattr(lean_decoder, "CROSS_CHUNK_POSITIONS", 16)
    target, draft = _models(dtype)
    batches = [source_batch(DICT, lengths, seed=i) for i, lengths in enumerate(BATCHES)]
    _stream_equals_batches(lambda: _build(kind, target, draft, draft_len=3, max_len_b=15),
                           batches, 3)


@pytest.mark.skipif(not small_gemm.available(), reason="kernels not buildable here")
@pytest.mark.parametrize("normalize_before", [False, True])
@pytest.mark.parametrize("rows", [3, 8, 12])
@pytest.mark.parametrize("kind", ["none", "model", "ngram", "layers"])
def test_in_flight_has_the_default_generators_bits(normalize_before, rows, kind):
    """float32 on the C kernels: the default generator batch by batch (its look-ahead calls up
    to 8 rows, one step at a time beyond, a lone step at the length limit) and greedy search
    in flight, with drafts or without (the speculative loop's plain steps), give the same
    hypotheses and scores bit for bit, a final norm (pre-norm) and an output projection too
    small for the kernel's route included."""
    from test_fast_defaults import Task, gen_args

    target = translation_model(TASK, layers=2, seed=7, eos_bias=0.5,
                               normalize_before=normalize_before, dtype=torch.float32)
    draft = translation_model(TASK, layers=1, dim=8, heads=1, seed=6, dtype=torch.float32)
    lengths = [9, 2, 6, 4, 7, 3, 5, 8, 2, 0, 21, 3, 1, 1, 6, 4, 10, 5, 2, 7, 3, 9, 1, 4]
    batches = [source_batch(DICT, lengths[i:i + rows], seed=i)
               for i in range(0, len(lengths), rows)]
    default = Task(DICT).build_generator([target], gen_args(beam=1, max_len_b=15))
    with torch.no_grad():
        expected = [default.generate([target], b) for b in batches]
    ours = _build(kind, target, draft, draft_len=3, max_len_b=15)
    streamed = list(ours.generate_stream(((b, None) for b in batches), rows))
    for want, (_, got) in zip(expected, streamed):
        _assert_same([[h[0]] for h in want], got, exact=True)


@pytest.mark.skipif(not small_gemm.available(), reason="kernels not buildable here")
def test_long_windows_of_many_rows_change_no_bit():
    """float32: BiLD windows of 11 inputs on 24 rows in flight (passes of more inputs than a
    single matmul takes on the small-matrix kernel's route) give the bits of the same sentences
    batch by batch, whose last passes are small."""
    from fairseq_fast.decoding.fused_layer import DECODER_MAX_ROWS, KERNEL_MAX_ROWS

    assert 24 * 11 > KERNEL_MAX_ROWS and 24 * 11 <= DECODER_MAX_ROWS
    target = translation_model(TASK, layers=2, seed=7, eos_bias=-1.0, normalize_before=True,
                               dtype=torch.float32)
    draft = translation_model(TASK, layers=1, dim=8, heads=1, seed=6, dtype=torch.float32)
    lengths = [9, 2, 6, 4, 7, 3, 5, 8, 2, 0, 21, 3, 1, 1, 6, 4, 10, 5, 2, 7, 3, 9, 1, 4] * 2
    batches = [source_batch(DICT, lengths[i:i + 24], seed=i) for i in range(0, 48, 24)]
    _stream_equals_batches(
        lambda: BiLDSequenceGenerator([target], DICT, small_model=draft, fallback_threshold=0.0,
                                      rollback_threshold=10.0, max_small_steps=10, max_len_b=30),
        batches, 24)


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
def test_greedy_without_drafts_is_stock_greedy(dtype):
    """draft_method 'none' (the default generator's greedy search with --inflight-batching):
    stock fairseq's greedy hypotheses, with forced prefixes and n-gram blocking too (its rounds
    then verify one position per row), scores to float32 rounding."""
    from fairseq.sequence_generator import SequenceGenerator

    from test_speculative_equality import ReferenceNGramBlock

    target, _ = _models(dtype)
    for ngram, prefix_size in ((0, 0), (2, 0), (0, 2)):
        stock = SequenceGenerator([target], DICT, beam_size=1, max_len_b=15,
                                  no_repeat_ngram_size=ngram)
        if ngram:
            stock.repeat_ngram_blocker = ReferenceNGramBlock(ngram)
        ours = SpeculativeSequenceGenerator([target], DICT, draft_method="none", max_len_b=15,
                                            no_repeat_ngram_size=ngram)
        for i, lengths in enumerate(BATCHES):
            sample = source_batch(DICT, lengths, seed=i)
            prefix = (torch.randint(DICT.nspecial, len(DICT), (len(lengths), prefix_size),
                                    generator=torch.Generator().manual_seed(i))
                      if prefix_size else None)
            want = stock.generate([target], sample, prefix_tokens=prefix)
            got = ours.generate([target], sample, prefix_tokens=prefix)
            for w, h in zip(want, got):
                assert h[0]["tokens"].tolist() == w[0]["tokens"].tolist()
                assert torch.allclose(h[0]["positional_scores"], w[0]["positional_scores"],
                                      atol=1e-5)
        assert ours.stats.proposed == 0 and ours.stats.draft_calls == 0


@pytest.mark.parametrize("kind", ["model", "ngram", "none"])
def test_adaptive_lengths_forced_prefixes_and_length_limits_by_source(kind):
    """With max_len_a the limit follows each batch's source length: rows of another limit wait
    for the rows in flight. Forced prefixes travel with their rows."""
    target, draft = _models(torch.float64)
    batches = [source_batch(DICT, lengths, seed=i) for i, lengths in enumerate(BATCHES)]
    g = torch.Generator().manual_seed(3)
    prefixes = [torch.randint(DICT.nspecial, len(DICT), (len(b), 2), generator=g)
                for b in BATCHES]
    _stream_equals_batches(lambda: _build(kind, target, draft, draft_len=2, max_len_a=1.0,
                                          max_len_b=3, adaptive_draft_len=True),
                           batches, 3, prefixes)


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
def test_language_model_prompts(dtype):
    """No encoder; prompts of one width per batch (prefix tokens), widths differing between
    batches (those wait, like other length limits)."""
    lm = language_model(TASK, seed=4, eos_bias=0.5, dtype=dtype)
    pairs = [prompt_batch(DICT, prompts, seed=i)
             for i, prompts in enumerate(([3, 1, 2], [2, 2], [4], [1, 3, 2, 1]))]
    _stream_equals_batches(
        lambda: SpeculativeSequenceGenerator([lm], DICT, draft_method="ngram", draft_len=3,
                                             max_len_b=12),
        [s for s, _ in pairs], 2, [p for _, p in pairs])


class _JoinWhen(FixedDraftLength):
    """Windows of 3; whether rows without draft state join, round by round as `answers`
    says, then never."""

    def __init__(self, answers):
        super().__init__(3)
        self.answers = list(answers)

    def joins(self, batch):
        return self.answers.pop(0) if self.answers else False


@pytest.mark.parametrize("dtype, kind", [(torch.float64, "model"), (torch.float32, "model"),
                                         (torch.float32, "layers")])
@pytest.mark.parametrize("answers", [(), (False, True, False, False, True)])
def test_rows_get_draft_state_only_in_rounds_where_they_join(dtype, kind, answers):
    """A row gets draft state (the draft's encoder runs for its batch) only in a round whose
    schedule says rows join; until then it is offered nothing while the rows with state draft.
    Every sentence's output is still what generate() gives it; with no join at all the draft's
    encoder never runs and nothing is drafted."""
    target, draft = _models(dtype)
    batches = [source_batch(DICT, lengths, seed=i) for i, lengths in enumerate(BATCHES)]
    expected = [_build(kind, target, draft, draft_len=3, max_len_b=15).generate([None], b)
                for b in batches]
    spec = _build(kind, target, draft, draft_len=3, max_len_b=15)
    spec.schedule = _JoinWhen(answers)
    proposer = spec.proposer
    encoded, drafting = [], []  # batches encoded by the draft; (rows drafting, rows) a round
    encode, propose = proposer.encode, proposer.propose
    proposer.encode = lambda sources: encoded.append(1) or encode(sources)

    def recording(tokens, *args):
        out = propose(tokens, *args)
        drafting.append((proposer.last_rows, tokens.size(0)))
        return out

    proposer.propose = recording
    streamed = list(spec.generate_stream(((b, None) for b in batches), 3))
    for want, (_, got) in zip(expected, streamed):
        _assert_same(want, got, exact=dtype == torch.float32)
    if not answers:
        assert not encoded and spec.stats.proposed == 0
        return
    assert encoded and spec.stats.proposed > 0
    if len(answers) > 1:  # rows that came after the last join waited beside rows drafting
        assert any(0 < n < rows for n, rows in drafting)


def test_rows_leave_and_join_within_the_limit():
    """The rows in flight never pass the limit, and a batch is yielded only once all its
    sentences have finished: the stream is consumed batch by batch."""
    target, draft = _models(torch.float64)
    spec = _build("model", target, draft, draft_len=3, max_len_b=15)
    seen = []
    original = spec._round

    def counting(state, flight, owners):
        seen.append(flight.ids.numel())
        return original(state, flight, owners)

    spec._round = counting
    batches = [source_batch(DICT, lengths, seed=i) for i, lengths in enumerate(BATCHES)]
    stream = spec.generate_stream(((b, None) for b in batches), 3)
    first, hypos = next(stream)
    assert first is batches[0] and all(len(h) == 1 for h in hypos)
    rest = list(stream)
    assert len(rest) == len(batches) - 1
    assert max(seen) == 3 and seen.count(3) > len(seen) // 2  # kept full while sentences wait
    assert spec.stats.sentences == sum(len(b) for b in BATCHES)


@pytest.mark.parametrize("kind", ["none", "ngram"])
def test_newcomers_take_the_places_of_finished_rows(kind):
    """Without a draft model's state, rows that finish are not compacted away while sentences
    wait: newcomers take their places and the other rows stay where they are. The n-gram
    proposer then looks up each row's own source, and the caller's tensors are not written."""
    target, draft = _models(torch.float64)
    spec = _build(kind, target, draft, draft_len=3, max_len_b=15)
    batches = [source_batch(DICT, lengths, seed=i) for i, lengths in enumerate(BATCHES)]
    sources = [b["net_input"]["src_tokens"].clone() for b in batches]
    pad, last = DICT.pad(), [False]
    rounds = {"total": 0, "moved": 0, "moved_while_waiting": 0}
    before: List[int] = []
    original = spec._round

    def checking(state, flight, owners):
        assert flight.holes is None  # filled or closed before every round
        ids = flight.ids.tolist()
        moved = any(i in ids and ids.index(i) != row for row, i in enumerate(before))
        rounds["total"] += 1
        rounds["moved"] += moved
        rounds["moved_while_waiting"] += moved and not last[0]
        if kind == "ngram":
            assert spec.proposer.source is not None  # one dictionary: source lookup
            for row, i in enumerate(ids):
                batch, index = owners[i]
                want = batch.sample["net_input"]["src_tokens"][index]
                got = spec.proposer.source[row]
                assert got[got.ne(pad)].tolist() == want[want.ne(pad)].tolist()
        original(state, flight, owners)
        before[:] = flight.ids.tolist()

    def source():
        for i, b in enumerate(batches):
            last[0] = i == len(batches) - 1
            yield b, None

    spec._round = checking
    streamed = list(spec.generate_stream(source(), 3))
    assert [s for s, _ in streamed] == batches
    assert rounds["moved_while_waiting"] == 0
    assert 0 < rounds["moved"] < rounds["total"]  # at the stream's end rows do leave
    assert all(torch.equal(b["net_input"]["src_tokens"], s) for b, s in zip(batches, sources))


@pytest.mark.parametrize("can_wait", [True, False])
def test_the_next_batch_is_not_waited_for_while_rows_are_in_flight(can_wait):
    """generate_stream(ready=...): while ready() says the next batch would have to be waited
    for, the rows in flight go on alone, and it is taken once they have finished; where it
    can be had, it joins them. The output is the same either way."""
    target, draft = _models(torch.float64)
    batches = [source_batch(DICT, lengths, seed=i) for i, lengths in enumerate(BATCHES)]
    spec = _build("model", target, draft, draft_len=3, max_len_b=15)
    left = []  # rows still in flight after each round
    pulled_with = []  # rows in flight when each batch was taken
    original = spec._round

    def counting(state, flight, owners):
        original(state, flight, owners)
        left.append(flight.live)

    def source():
        for b in batches:
            pulled_with.append(left[-1] if left else 0)
            yield b, None

    spec._round = counting
    streamed = list(spec.generate_stream(source(), 3, ready=lambda: can_wait))
    assert [s for s, _ in streamed] == batches
    expected = [_build("model", target, draft, draft_len=3, max_len_b=15).generate([None], b)
                for b in batches]
    for want, (_, got) in zip(expected, streamed):
        _assert_same(want, got, exact=False)
    if can_wait:
        assert max(pulled_with) > 0  # taken while rows were in flight
    else:
        assert max(pulled_with) == 0  # each once the rows before it had finished


def test_sampling_streams_the_same_sentences():
    """Sampling: each sentence gets a sample of the target's distribution (its random draws
    follow the rows in flight, so not the draws of generate()); every sentence is answered once,
    in order, with EOS at its end."""
    target, draft = _models(torch.float64)
    spec = SpeculativeSequenceGenerator([target], DICT, draft_model=draft, draft_len=3,
                                        max_len_b=15, sampling=True)
    batches = [source_batch(DICT, lengths, seed=i) for i, lengths in enumerate(BATCHES)]
    streamed = list(spec.generate_stream(((b, None) for b in batches), 2))
    assert [s for s, _ in streamed] == batches
    for (sample, hypos), lengths in zip(streamed, BATCHES):
        assert len(hypos) == len(lengths)
        for h in hypos:
            assert h[0]["tokens"][-1] == DICT.eos()


def test_not_a_hub_setting():
    """The hub's keywords are generation settings: inflight_batching is refused there, with
    the Python way named."""
    from test_fast_defaults import TASK as FAIRSEQ_TASK
    from test_fast_defaults import gen_args

    target, _ = _models(torch.float64)
    with pytest.raises(UserError, match="generate_stream"):
        FAIRSEQ_TASK.build_generator([target], gen_args(beam=1, generator="speculative",
                                                        draft_method="ngram",
                                                        inflight_batching=True))


def test_at_least_one_row():
    target, draft = _models(torch.float64)
    with pytest.raises(UserError, match="at least one row"):
        next(_build("model", target, draft).generate_stream(iter(()), 0))


def test_streamed_seconds_leave_out_the_time_taking_batches(monkeypatch):
    """The generation time fairseq-generate and fairseq-interactive report with
    --inflight-batching (cli.streaming.generated_batches): the time spent taking the next
    batch (loading it, waiting for input) is no batch's, as batch by batch it is not either.
    A fake clock: taking a batch costs 10, generating one 1."""
    from types import SimpleNamespace

    from fairseq_fast.cli import streaming

    clock = [0.0]
    monkeypatch.setattr(streaming, "time", SimpleNamespace(perf_counter=lambda: clock[0]))

    class Generator:
        def generate_stream(self, batches, rows, ready=None):
            for sample, _ in batches:
                clock[0] += 1.0
                yield sample, [[{}]]

    def items():
        for i in range(3):
            clock[0] += 10.0
            yield i

    samples = [{"id": i} for i in range(3)]
    got = streaming.generated_batches(
        Generator(), None, None, items(),
        lambda i: None if i == 1 else streaming.Request(samples[i]), rows=2)
    assert [(item, seconds) for item, _, seconds in got] == [(0, 1.0), (1, 0.0), (2, 1.0)]


def test_interactive_chunks_say_when_the_next_batch_needs_no_waiting():
    """fairseq-interactive's chunks as one stream (cli.streaming.Chunks): the next batch can
    be had without waiting while the chunk at hand has batches left, and always from a file;
    a chunk with nothing to translate still ends (its answers are printed in turn)."""
    from fairseq_fast.cli.streaming import Chunks

    batches = {("a", "b", "c"): [["a", "b"], ["c"]], ("d", "e"): [], ("f",): [["f"]]}
    for from_file in (False, True):
        chunks = Chunks(iter([list(lines) for lines in batches]),
                        lambda lines: batches[tuple(lines)], input_is_file=from_file)
        seen = []
        for item in chunks:
            seen.append((item.seq, item.first_id, item.entry, item.last, chunks.ready()))
        assert seen == [(0, 0, ["a", "b"], False, True),
                        (0, 0, ["c"], True, from_file),
                        (1, 3, None, True, from_file),
                        (2, 5, ["f"], True, from_file)]
