"""--adaptive-draft-len (draft_length.MeasuredDraftLength): the window length follows measured
costs, and whatever lengths the timings pick, greedy output stays stock's token for token."""
import collections
import random

import torch

from fairseq_fast.generators.speculative import SpeculativeSequenceGenerator
from fairseq_fast.speculative.draft_length import (FixedDraftLength, MeasuredDraftLength,
                                                   RoundTimes, RunningSeconds)
from model_factory import source_batch, translation_model
from test_speculative_equality import DICT, TASK, compare


def test_unmeasured_keys_are_priced_optimistically():
    s = RunningSeconds()
    assert s.optimistic(4) is None and s.nearest(4) is None
    s.add(4, 2.0)
    s.add(12, 6.0)
    assert s.optimistic(4) == 2.0
    assert s.optimistic(8) == 4.0  # between two measured keys: on the line
    assert s.optimistic(20) == 6.0  # above all: as the largest (maybe it costs no more)
    assert s.optimistic(2) == 1.0  # below all: in proportion (maybe it costs that little)
    assert s.nearest(9) == 6.0 and s.nearest(7) == 2.0 and s.nearest(8) == 2.0


def test_a_pause_does_not_price_a_key_out():
    s = RunningSeconds(recent=5)
    for seconds in (1.0, 1.1, 50.0, 0.9, 1.0):
        s.add(3, seconds)
    assert s.seconds[3] == 1.0
    for _ in range(5):
        s.add(3, 2.0)
    assert s.seconds[3] == 2.0  # only the recent measurements count


def drive(schedule, batch, verify, rounds=300, alpha=0.75, seed=0):
    """Rounds of `batch` rows against a model machine: verify(rows) seconds for the target's
    pass, 0.1 ms a draft step plus 0.1 ms a call, 0.5 ms for the rest of a round; each draft
    kept with probability alpha; a plain step (length 0) as a pass of `batch` rows. Returns the
    window lengths the schedule chose."""
    rng = random.Random(seed)
    cap = schedule.start(batch, "cpu")
    chosen = []
    for _ in range(rounds):
        cap = schedule.window(cap)
        k = int(cap.max())
        chosen.append(k)
        if k == 0:
            steps = schedule.plain_steps(batch)
            seconds = steps * verify(batch)
            cap = schedule.update(cap, torch.zeros(batch), torch.zeros(batch), RoundTimes(
                rows=batch * steps, steps=0, draft=0.0, verify=seconds, total=seconds,
                plain=steps))
            continue
        accepted = []
        for _ in range(batch):
            a = 0
            while a < k and rng.random() < alpha:
                a += 1
            accepted.append(a)
        draft = 1e-4 * (k + 1)
        seconds = verify(batch * (k + 1))
        times = RoundTimes(rows=batch * (k + 1), steps=k, draft=draft, verify=seconds,
                           total=draft + seconds + 5e-4)
        cap = schedule.update(cap, torch.full((batch,), k), torch.tensor(accepted), times)
    return chosen


def test_long_windows_where_a_pass_costs_the_same_whatever_its_rows():
    """A large target at batch 1: reading the weights costs 10 ms whatever the rows."""
    schedule = MeasuredDraftLength(initial=4, maximum=8)
    chosen = drive(schedule, 1, lambda rows: 1e-2)
    late = collections.Counter(chosen[-150:])
    assert late.most_common(1)[0][0] == 8
    assert late[7] > 0  # next to the best, now and then: kept measured
    assert abs(schedule.alpha - 0.75) < 0.1


def test_short_windows_where_a_pass_costs_its_rows():
    """At batch 8 the pass is bound by arithmetic: 1 ms a row, and 6 ms a pass."""
    schedule = MeasuredDraftLength(initial=4, maximum=8)
    chosen = drive(schedule, 8, lambda rows: 6e-3 + 1e-3 * rows)
    assert chosen[0] == 4  # nothing measured yet
    late = collections.Counter(chosen[-150:])
    assert late.most_common(1)[0][0] == 1
    assert set(late) <= {0, 1, 2}


def test_plain_steps_where_drafting_cannot_pay():
    """A pass that costs exactly its rows: k drafts kept with alpha 0.75 cost k + 1 rows for
    fewer than k + 1 tokens, so plain steps (length 0) win."""
    schedule = MeasuredDraftLength(initial=4, maximum=8)
    chosen = drive(schedule, 8, lambda rows: 1e-3 * rows)
    late = collections.Counter(chosen[-150:])
    assert late.most_common(1)[0][0] == 0
    assert set(late) <= {0, 1}


def test_the_first_round_is_not_measured():
    """It pays for packing weights and warming caches."""
    schedule = MeasuredDraftLength(initial=3, maximum=6)
    cap = schedule.start(2, "cpu")
    times = RoundTimes(rows=8, steps=3, draft=9.0, verify=9.0, total=20.0)
    schedule.update(cap, torch.tensor([3, 3]), torch.tensor([1, 3]), times)
    assert schedule.verify.seconds == {} and schedule.rest.seconds == {}
    assert schedule.alpha == (1 * 0.95 + 4) / (2 * 0.95 + 5)  # acceptance does count
    schedule.update(cap, torch.tensor([3, 3]), torch.tensor([1, 3]), times)
    assert schedule.verify.seconds == {8: 9.0} and schedule.rest.seconds == {2: 2.0}
    assert schedule.draft[2].seconds == {3: 9.0}


def test_fixed_length_ignores_times():
    schedule = FixedDraftLength(5)
    cap = schedule.start(3, "cpu")
    assert cap.tolist() == [5, 5, 5] and schedule.window(cap[:2]).tolist() == [5, 5]
    assert not schedule.measures


def random_clock(seed):
    """A clock whose every reading is a random time later: the schedule then picks lengths at
    random, round after round."""
    rng = random.Random(seed)
    now = [0.0]

    def clock():
        now[0] += rng.random()
        return now[0]
    return clock


def test_greedy_output_equals_stock_whatever_lengths_the_timings_pick():
    tgt = translation_model(TASK, layers=2, seed=11, eos_bias=-1.0)
    drf = translation_model(TASK, layers=1, dim=8, seed=12, dtype=torch.float32)
    lengths = collections.Counter()
    for seed in range(4):
        sample = source_batch(DICT, [7, 3, 9, 1, 5], seed=seed)
        gen = dict(draft_len=3, adaptive=True, max_len_b=14, min_len=1, unk_penalty=0.0,
                   ngram=0)

        def build(target, draft, gen, kw):
            spec = SpeculativeSequenceGenerator([target], DICT, draft_model=draft, draft_len=3,
                                                adaptive_draft_len=True, **kw)
            # a schedule of its own (the generators of one pair share theirs)
            spec.schedule = MeasuredDraftLength(3, 6, clock=random_clock(seed))
            spec.schedule.REFRESH, spec.schedule.EXPLORE = 1, 3  # a new pick every round
            window = spec.schedule.window
            spec.schedule.window = lambda cap, share=1.0: lengths.update(
                [int((c := window(cap, share)).max())]) or c
            return spec
        compare(tgt, drf, sample, None, gen, build=build)
    assert len(lengths) >= 4  # the timings did move the window between rounds


def test_generators_of_one_pair_share_what_they_measured():
    """The hub builds a generator per translate() call: the next generator of the same target
    and draft starts from the length the last one's measurements favour, not from --draft-len
    again; another setting (sampling) measures on its own."""
    tgt = translation_model(TASK, layers=2, seed=21, eos_bias=-1.0)
    drf = translation_model(TASK, layers=1, dim=8, seed=22)

    def build(**kw):
        return SpeculativeSequenceGenerator([tgt], DICT, draft_model=drf, draft_len=3,
                                            adaptive_draft_len=True, max_len_b=14, **kw)

    first = build()
    assert first.schedule.start(1, "cpu").tolist() == [3]  # nothing measured yet
    first.generate([tgt], source_batch(DICT, [7, 3, 9, 1, 5], seed=0))  # runs, measures
    drive(first.schedule, 1, lambda rows: 1e-2)  # then a large target's rounds at batch 1
    assert build().schedule.start(1, "cpu").tolist() == [6]  # the longest: it costs no more
    assert build(sampling=True).schedule.start(1, "cpu").tolist() == [3]


def test_rows_join_the_draft_only_where_the_join_is_repaid():
    """In-flight batching: a row's join (the draft's encoder for its sentence) is paid once.
    Where drafting gains about 8% on the decoder (batch 8, 1 ms a row, 6 ms a pass: a plain step
    1.75 ms a token, length 1 about 1.62), rows join while their join costs less than that gain
    over a sentence's tokens (30 here), and stop joining where it costs more. The rows that have
    joined still draft (the join is paid); with none, nothing is drafted."""
    cap = torch.full((8,), 1)
    for join, repaid in ((1e-4, True), (5e-2, False)):
        schedule = MeasuredDraftLength(initial=4, maximum=8)
        drive(schedule, 8, lambda rows: 6e-3 + 1e-3 * rows)
        assert schedule.best(8) == 1
        assert schedule.joins(8)  # no join measured yet: rows join
        for _ in range(2):  # a sentence of 30 tokens, its row's join
            schedule.update(cap, torch.ones(8), torch.ones(8), RoundTimes(
                rows=16, steps=1, draft=2e-4, verify=2.2e-2, total=2.27e-2, tokens=120,
                joined=8, join=8 * join, ended=8))
            schedule.update(cap, torch.ones(8), torch.ones(8), RoundTimes(
                rows=16, steps=1, draft=2e-4, verify=2.2e-2, total=2.27e-2, tokens=120,
                ended=0))
        assert schedule.joins(8) == repaid
        assert int(schedule.window(cap, share=0.5).max()) >= 1
        assert int(schedule.window(cap, share=0.0).max()) == 0
