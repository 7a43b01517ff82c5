"""How many tokens the draft proposes per round (gamma): a schedule sets each row's window cap.

    FixedDraftLength      --draft-len K: every window K long
    MeasuredDraftLength   --adaptive-draft-len: before each round, the one length for the batch
                          that buys the most tokens per second, priced from this run's own
                          measurements; 0 (plain decoding steps) where drafting does not pay
    MeasuredRate          --adaptive-draft-len with n-gram lookup: the length whose own rounds
                          wrote the most tokens per second in this run
    NoDrafts              no proposer: plain greedy steps every round (the default generator's
                          greedy search with --inflight-batching)

The generator asks `window` for the caps of the rows about to draft, and reports each finished
round to `update`: what the rows were offered and kept, and what the round cost (RoundTimes).
With in-flight batching, rows join the draft when a round first drafts for them (proposer.py);
`joins` says whether rows without draft state should join now, and `window` is told the share
of rows that will have a draft state (the others are offered nothing).

MeasuredDraftLength prices a round of B rows drafting k tokens each as Leviathan et al. (2023) do,
with costs measured instead of assumed:

    tokens(B, k) = B ((1 - m) + m (1 - a^(k+1)) / (1 - a))     a: the acceptance rate
    seconds(B, k) = verify(B (1 + m k)) + draft(B, k) + rest(B)

m: the share of rows that have a draft when asked (1 for a draft model, which always has one;
an n-gram lookup finds one for some rows only), measured like a. verify(rows): the target's pass
over that many rows; draft(B, k): k draft steps at batch B (a call's fixed cost included: the
first step costs more than the next); rest(B): the round's other work (scores, acceptance,
bookkeeping). Each is the median of its recent measurements in this run.

Length 0 is plain decoding: the round runs plain_steps(B) greedy steps of the target and drafts
nothing (plain_steps.py), priced at B tokens per step for the seconds a step took in this run
(until one is measured, a verify pass of B rows without the rest: optimistic, so it is tried).
So a proposer that does not pay for the rows in flight, an n-gram lookup on a task that never
copies or a weak draft where a pass costs its rows, costs little more than the default generator.

Joining a row to the draft costs the draft's encoder and its encoder K/V for that sentence, once
(in-flight batching). Rows join only while the best length, priced with every row drafting and
each token also paying its share of a join (the seconds a row's join took, over the tokens a
sentence has had in this run), beats plain steps; rows that have joined draft on at the best
length for the share of rows that have (the join already paid). Where drafting breaks even on
the decoder, the draft's encoder then never runs for the rows that would not repay it.

Why measure: on a large target at batch 1 a verify pass costs about one decoder step whatever its
width (it is bound by reading the weights), so long windows pay; at batch 8 the pass is bound by
arithmetic, its cost grows with the rows it scores, and the best window is short; on a small
target the fixed costs of a call dominate. No constant fits all three, and the batch shrinks as
sentences finish.

A length the run has not measured yet is priced optimistically (RunningSeconds.optimistic: a row
count below every measured one at the smallest one's cost in proportion to the rows, one above
every measured one at the largest one's cost, one in between on the line between its
neighbours), so a length that looks best is tried, and from then on priced by its measurements.
Every EXPLORE-th round runs a length next to the best one instead, so that the lengths around it
stay measured as the text and the machine change (a length priced too high once would otherwise
never be tried again).

The generators of one target and draft pair at the same settings share one MeasuredDraftLength
(`measured`) for as long as both models live: the hub builds a generator per translate() call,
and a schedule starting over each call would never get past its first guess.

Greedy output is the target's whatever the lengths. Sampling keeps the target's distribution (a
length is chosen before the round's drafts exist), but its random draws follow the lengths, which
follow the timings: with this schedule a fixed seed no longer reproduces the same samples.
"""
import statistics
import time
from collections import deque
from dataclasses import dataclass
from typing import Callable, Deque, Dict, Hashable, Optional, Protocol

import torch
from torch import Tensor

from fairseq_fast.decoding.greedy_steps import steps_per_call
from fairseq_fast.runtime import ModelRuntime


@dataclass
class RoundTimes:
    """What one round cost, in seconds: `steps` draft steps (drafting), the target's verify pass
    over `rows` rows, and the whole round (the two included)."""

    rows: int
    steps: int
    draft: float
    verify: float
    total: float
    plain: int = 0  # > 0: a round of that many plain greedy steps, chosen by the schedule
    tokens: int = 0  # the tokens the round committed, all rows together
    drafters: int = 0  # the rows that drafted (0: all of them)
    joined: int = 0  # rows that joined the draft this round (proposer.py), not in the times
    join: float = 0.0  # the seconds their joining took
    ended: int = 0  # rows that finished


class DraftLengthSchedule(Protocol):
    """Each row's window cap, within [0, maximum]: `start` for a new batch of rows, `window` for
    the rows about to draft (the batch shrinks as rows finish), `update` after each round with
    the caps it ran, the drafts offered and kept per row, and its times. A window of 0 for
    every row is a round of `plain_steps(batch)` plain greedy steps. `joins`: whether rows
    without draft state join the draft in the next round that drafts; `window`'s share: the
    rows that will draft (the others are offered nothing)."""

    maximum: int
    measures: bool  # whether `update` uses the times (the loop then waits for the device)

    def start(self, batch: int, device) -> Tensor: ...

    def window(self, cap: Tensor, share: float = 1.0) -> Tensor: ...

    def joins(self, batch: int) -> bool: ...

    def plain_steps(self, batch: int) -> int: ...

    def update(self, cap: Tensor, offered: Tensor, accepted: Tensor,
               times: RoundTimes) -> Tensor: ...


class FixedDraftLength:
    """Every window `length` drafts long."""

    measures = False

    def __init__(self, length: int):
        self.maximum = length

    def start(self, batch: int, device) -> Tensor:
        return torch.full((batch,), self.maximum, dtype=torch.long, device=device)

    def window(self, cap: Tensor, share: float = 1.0) -> Tensor:
        return cap

    def joins(self, batch: int) -> bool:
        return True

    def plain_steps(self, batch: int) -> int:
        return 1

    def update(self, cap: Tensor, offered: Tensor, accepted: Tensor,
               times: RoundTimes) -> Tensor:
        return cap


class NoDrafts:
    """Every round plain greedy steps (length 0): plain_steps(B) of them, as a measured schedule
    takes them. The speculative loop with no proposer is then greedy decoding (what the default
    generator's greedy search gives), in-flight batching included."""

    measures = False
    maximum = 0

    def start(self, batch: int, device) -> Tensor:
        return torch.zeros(batch, dtype=torch.long, device=device)

    def window(self, cap: Tensor, share: float = 1.0) -> Tensor:
        return cap

    def joins(self, batch: int) -> bool:
        return True

    def plain_steps(self, batch: int) -> int:
        return plain_steps(batch)

    def update(self, cap: Tensor, offered: Tensor, accepted: Tensor,
               times: RoundTimes) -> Tensor:
        return cap


def plain_steps(batch: int) -> int:
    """The plain greedy steps a measured schedule's round of `batch` rows takes: one C call's,
    as the default generator's look-ahead takes them."""
    return steps_per_call(batch)


def nearest_key(keys, key: int) -> int:
    """The key of `keys` (not empty) nearest to `key`, the smaller on a tie."""
    return min(keys, key=lambda k: (abs(k - key), k))


class RunningSeconds:
    """Seconds by a whole number (a row count, a batch size): per key, the median of its last
    `recent` measurements (a median, so that a pause of the machine does not price a key out
    for good)."""

    def __init__(self, recent: int = 5):
        self.recent = recent
        self.samples: Dict[int, Deque[float]] = {}
        self.seconds: Dict[int, float] = {}

    def add(self, key: int, seconds: float) -> None:
        samples = self.samples.setdefault(key, deque(maxlen=self.recent))
        samples.append(seconds)
        self.seconds[key] = statistics.median(samples)

    def nearest(self, key: int) -> Optional[float]:
        """The value at `key`, else at the nearest key measured (None before any)."""
        if key in self.seconds or not self.seconds:
            return self.seconds.get(key)
        return self.seconds[nearest_key(self.seconds, key)]

    def optimistic(self, key: int) -> Optional[float]:
        """The value at `key`; between two measured keys, on the line between them; above every
        measured key, the largest one's value; below every one, the smallest one's value in
        proportion to the keys (None before any)."""
        known = self.seconds
        if key in known or not known:
            return known.get(key)
        below = max((k for k in known if k < key), default=None)
        above = min((k for k in known if k > key), default=None)
        if below is None:
            return known[above] * key / above
        if above is None:
            return known[below]
        return known[below] + (known[above] - known[below]) * (key - below) / (above - below)


class MeasuredDraftLength:
    """Before each round, the one window length in [0, maximum] for the batch that maximises
    tokens(B, k) / seconds(B, k) (module docstring), worked out again every REFRESH rounds;
    `initial` until the first round is measured. `clock`: the time source (tests pass their
    own)."""

    measures = True
    REFRESH = 8  # rounds between two choices of the best length for a batch size
    EXPLORE = 16  # every this many rounds, a length next to the best one

    def __init__(self, initial: int, maximum: int,
                 clock: Callable[[], float] = time.perf_counter):
        self.initial, self.maximum = initial, maximum
        self.clock = clock
        self.verify = RunningSeconds()  # by rows scored
        self.draft: Dict[int, RunningSeconds] = {}  # by batch size, then by draft steps
        self.rest = RunningSeconds()  # the rest of a round, by batch size
        self.plain = RunningSeconds()  # a plain greedy step, by batch size
        # drafts kept, and kept + rejected (a round whose row kept fewer than it was offered
        # rejected one), decayed so that the rate follows the text; starting at a = 0.5
        self.kept, self.tried = 1.0, 2.0
        # rows that had a draft, and rows asked, decayed alike; starting at m = 1
        self.drafting, self.asked = 1.0, 1.0
        self.rounds = 0
        # (batch size, share) -> length, and (batch size, "joins") -> the length with joins
        # priced, until the next refresh
        self._best: Dict[tuple, int] = {}
        self._refreshed = -1  # the round _best was last cleared in
        # joining the draft (in-flight batching): rows joined and their seconds; tokens
        # committed and rows finished (a sentence's tokens), over the run
        self.joined, self.join_seconds = 0, 0.0
        self.tokens, self.ended = 0, 0

    @property
    def alpha(self) -> float:
        return min(self.kept / self.tried, 0.99)

    @property
    def match(self) -> float:
        """m: the share of rows asked for a draft that had one."""
        return self.drafting / self.asked

    def start(self, batch: int, device) -> Tensor:
        return torch.full((batch,), self.best(batch), dtype=torch.long, device=device)

    def window(self, cap: Tensor, share: float = 1.0) -> Tensor:
        batch = cap.numel()
        if share <= 0:  # no row can draft
            return cap.new_zeros(cap.shape)
        k = self._remembered((batch, round(share, 2)), lambda: self.best(batch, share))
        if self.rounds % self.EXPLORE == self.EXPLORE - 1:  # alternately one shorter, longer
            step = 1 if self.rounds // self.EXPLORE % 2 else -1
            k = min(max(k + step, 0), self.maximum)
        return cap.new_full(cap.shape, k)

    def plain_steps(self, batch: int) -> int:
        return plain_steps(batch)

    def best(self, batch: int, share: float = 1.0, join: float = 0.0) -> int:
        """The window length for `batch` rows that buys the most tokens per second (0: plain
        steps), where `share` of the rows draft and each drafted token also costs `join`
        seconds per row."""
        rest = self.rest.nearest(batch)
        if rest is None:
            return self.initial
        drafters = max(round(batch * share), 1)
        draft = self.draft[nearest_key(self.draft, drafters)]
        a, m = self.alpha, self.match * share
        step = self.plain.nearest(batch)
        if step is None:  # not measured yet: a pass of the batch's rows, nothing around it
            step = self.verify.optimistic(batch)
        best, best_rate = 0, 1 / max(step, 1e-9)  # per row
        for k in range(1, self.maximum + 1):
            seconds = (self.verify.optimistic(round(batch * (1 + m * k)))
                       + draft.optimistic(k) + rest)
            tokens = (1 - m) + m * (1 - a ** (k + 1)) / (1 - a)
            rate = tokens / max(seconds + tokens * batch * join, 1e-9)
            if rate > best_rate:
                best, best_rate = k, rate
        return best

    def joins(self, batch: int) -> bool:
        """Whether rows without draft state should join: drafting with every row, each token
        paying its share of a row's join, beats plain steps (yes until a join and a finished
        sentence are measured)."""
        if (not self.joined or not self.ended or not self.tokens
                or self.rest.nearest(batch) is None):
            return True
        per_token = (self.join_seconds / self.joined) / (self.tokens / self.ended)
        return self._remembered((batch, "joins"), lambda: self.best(batch, 1.0, per_token)) > 0

    def _remembered(self, key: tuple, choose: Callable[[], int]) -> int:
        """choose()'s length for `key`, kept until the next refresh (every REFRESH rounds)."""
        if self.rounds % self.REFRESH == 0 and self._refreshed != self.rounds:
            self._best.clear()
            self._refreshed = self.rounds
        if key not in self._best:
            self._best[key] = choose()
        return self._best[key]

    def update(self, cap: Tensor, offered: Tensor, accepted: Tensor,
               times: RoundTimes) -> Tensor:
        self.rounds += 1
        batch = cap.numel()
        if self.rounds > 1:  # (the first join runs the draft's encoder for the first time)
            self.joined += times.joined
            self.join_seconds += times.join
        self.tokens += times.tokens
        self.ended += times.ended
        if times.plain:
            if self.rounds > 1:
                self.plain.add(batch, times.total / times.plain)
            return cap
        kept, rejected = (float(n) for n in (accepted.sum(), (accepted < offered).sum()))
        self.kept = 0.95 * self.kept + kept
        self.tried = 0.95 * self.tried + kept + rejected
        drafters = times.drafters or batch  # rows without draft state were not asked
        self.drafting = 0.95 * self.drafting + float((offered > 0).sum())
        self.asked = 0.95 * self.asked + drafters
        if self.rounds > 1:  # the first round of a run pays for packing weights, warming caches
            self.verify.add(times.rows, times.verify)
            if drafters not in self.draft:
                self.draft[drafters] = RunningSeconds()
            self.draft[drafters].add(times.steps, times.draft)
            self.rest.add(batch, max(times.total - times.draft - times.verify, 0.0))
        return cap


class MeasuredRate:
    """Before each round, the one window length in [0, maximum] for the batch whose own rounds
    wrote the most tokens per second in this run (0: plain steps), for proposers whose drafts
    the model above misprices: an n-gram lookup is right for a run of tokens or wrong from its
    first one, so its tokens per round do not follow (1 - a^(k+1)) / (1 - a), and its rounds
    may run as many rounds in one C call (ngram.LookaheadRounds), which that model does not
    price either. Per bucket of batch sizes (`bucket`; a length not measured in a bucket is
    priced as in the nearest bucket that measured it) and length: seconds and tokens summed
    over the rounds, decayed (DECAY per round of the schedule since that length's last one) so
    that they follow the text and the machine: a length measured only now and then, such as
    plain steps while drafting pays, is priced by its latest rounds, not by one slow round long
    ago that would keep the schedule off it. `initial` until a length is measured; every
    EXPLORE-th round the next length in turn from 0 to two above the best one, so that those
    stay measured: the rates of neighbouring lengths differ by less than their noise, so a walk
    between neighbours can stop short of the best one (a longer length costs more to try). A
    length is chosen over plain steps only where its rate beats theirs by MARGIN: rates of a
    few rounds are noisy, and a draft that only matches plain steps still costs its lookups and
    longer passes."""

    measures = True
    EXPLORE = 12
    DECAY = 0.9
    MARGIN = 0.05

    def __init__(self, initial: int, maximum: int,
                 clock: Callable[[], float] = time.perf_counter):
        self.initial, self.maximum = initial, maximum
        self.clock = clock
        # bucket -> length -> [seconds, tokens, the round they were last added to]
        self.spent: Dict[int, Dict[int, list]] = {}
        self.rounds = 0

    def start(self, batch: int, device) -> Tensor:
        return torch.full((batch,), self.best(batch), dtype=torch.long, device=device)

    def window(self, cap: Tensor, share: float = 1.0) -> Tensor:
        k = self.best(cap.numel())
        if self.rounds % self.EXPLORE == self.EXPLORE - 1:  # 0 .. best + 2 in turn
            k = self.rounds // self.EXPLORE % (min(k + 2, self.maximum) + 1)
        return cap.new_full(cap.shape, k)

    def plain_steps(self, batch: int) -> int:
        return plain_steps(batch)

    def joins(self, batch: int) -> bool:
        return True

    @staticmethod
    def bucket(batch: int) -> int:
        """Batch sizes priced together: 1, 2-3, 4-7, 8-15, ..."""
        return max(batch, 1).bit_length()

    def rate(self, batch: int, k: int) -> Optional[float]:
        """Tokens per second of length k at `batch` rows (its bucket's, else the nearest
        bucket's that measured k); None before a round of it."""
        buckets = [b for b, lengths in self.spent.items() if k in lengths]
        if not buckets:
            return None
        seconds, tokens, _ = self.spent[nearest_key(buckets, self.bucket(batch))][k]
        return tokens / seconds if seconds > 0 else None

    def best(self, batch: int) -> int:
        """The measured length with the most tokens per second (`initial` before any)."""
        rates = {k: self.rate(batch, k) for k in range(self.maximum + 1)}
        rates = {k: r for k, r in rates.items() if r is not None}
        if not rates:
            return self.initial
        best = max(rates, key=lambda k: (rates[k], -k))
        if best and 0 in rates and rates[best] < rates[0] * (1 + self.MARGIN):
            return 0
        return best

    def update(self, cap: Tensor, offered: Tensor, accepted: Tensor,
               times: RoundTimes) -> Tensor:
        self.rounds += 1
        if self.rounds > 1 and times.tokens > 0:  # the first round warms caches, packs weights
            k = 0 if times.plain else int(cap.max())
            lengths = self.spent.setdefault(self.bucket(cap.numel()), {})
            spent = lengths.setdefault(k, [0.0, 0.0, self.rounds])
            decay = self.DECAY ** (self.rounds - spent[2])
            spent[0] = decay * spent[0] + times.total
            spent[1] = decay * spent[1] + times.tokens
            spent[2] = self.rounds
        return cap


def measured(target, draft, initial: int, maximum: int, setting: Hashable = None,
             kind=MeasuredDraftLength):
    """The schedule of class `kind` (MeasuredDraftLength or MeasuredRate) that every generator
    of `target` with `draft` at these lengths and `setting` (whatever else changes the costs or
    the acceptance rate) shares, made on the first call; kept while both models live."""
    per_draft = ModelRuntime.of(target).draft_lengths.setdefault(draft, {})
    key = (initial, maximum, setting, kind)
    if key not in per_draft:
        per_draft[key] = kind(initial, maximum)
    return per_draft[key]
