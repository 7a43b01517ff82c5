"""Time spent in a generator's phases during a benchmark's timed runs, read from the clocks the
generators keep themselves: `SpecStats.seconds` of a speculative or BiLD generator (encoders,
the draft's start, drafting, verifying) and `FastEnsembleModel.seconds` of the plugin's default
generator (encoder, cross K/V, decoder). Each timed run adds what the clocks gained during it;
a warm-up run adds nothing. A stock generator gets the same clocks from `timed_ensemble`.
"""
import time
from collections import Counter
from dataclasses import dataclass

from benchmarks.harness import FunctionEngine


@dataclass
class Phase:
    """Wall seconds and calls of one phase, over the timed runs."""
    seconds: float = 0.0
    calls: int = 0


def _spec_readings(spec):
    """{phase: (seconds, calls)} of a speculative generator's clocks and counters now; calls:
    draft steps, target passes (verify passes, rounds of plain steps), sentences started."""
    st = spec.stats
    seconds = st.seconds
    return {"drafting": (seconds["drafting"], st.draft_calls),
            "verifying": (seconds["verifying"], st.target_calls + st.plain_rounds),
            "encoding": (seconds["encoders"], st.sentences),
            "draft_encoding": (seconds["draft_encoder"], st.sentences)}


def _accumulated(read, engine):
    """({phase: Phase} added up over engine's timed runs, the engine wrapped to add them; its
    warm-up adds nothing)."""
    phases = {name: Phase() for name in read()}

    def run(part):
        before = read()
        result = engine.run(part)
        for name, (seconds, calls) in read().items():
            phases[name].seconds += seconds - before[name][0]
            phases[name].calls += calls - before[name][1]
        return result
    return phases, FunctionEngine(engine.name, run, engine.warm_up,
                                  getattr(engine, "sliceable", False))


def speculation_timers(spec, engine):
    """A speculative generator's drafting, verify passes and encoders, and its draft steps,
    verified positions, the positions that decided and the tokens written, inside its engine's
    timed runs: ((drafting, verifying, encoding, [counts], the draft's part of encoding), the
    engine wrapped to count)."""
    phases, timed = _accumulated(lambda: _spec_readings(spec), engine)
    counts = [0, 0, 0, 0]  # draft steps, verified positions, those that decided, tokens

    def totals():
        st = spec.stats
        return (st.draft_calls, st.verified, st.decided, st.committed + st.plain_committed)

    def counted(part):
        before = totals()
        result = timed.run(part)
        for i, (a, b) in enumerate(zip(before, totals())):
            counts[i] += b - a
        return result
    return (phases["drafting"], phases["verifying"], phases["encoding"], counts,
            phases["draft_encoding"]), FunctionEngine(timed.name, counted, timed.warm_up,
                                                      timed.sliceable)


def encoder_timer(generator, engine):
    """The plugin's default generator's encoders and cross-attention K/V (its ensemble's
    "encoder" and "cross" seconds) inside its engine's timed runs: (Phase, the engine wrapped),
    or (None, engine) where the generator has no lean ensemble."""
    from fairseq_fast.decoding.ensemble import FastEnsembleModel

    model = getattr(generator, "model", None)
    if not isinstance(model, FastEnsembleModel):
        return None, engine
    phases, timed = _accumulated(
        lambda: {"encoders": (model.seconds["encoder"] + model.seconds["cross"], 0)}, engine)
    return phases["encoders"], timed


def in_model_seconds(generator) -> float:
    """The seconds the plugin's default generator has spent in its ensemble's encoder and
    decoder calls so far (0 where it has no lean ensemble)."""
    seconds = getattr(getattr(generator, "model", None), "seconds", None)
    return 0.0 if seconds is None else sum(seconds.values())


def timed_ensemble(models):
    """fairseq's own EnsembleModel of `models`, with the plugin's ensemble's clocks ("encoder",
    "decoder" in `seconds`): a stock generator built on it (SequenceGenerator takes an
    EnsembleModel in place of its models) counts its model calls as the plugin's does."""
    from fairseq.sequence_generator import EnsembleModel

    class TimedEnsembleModel(EnsembleModel):
        def __init__(self, models):
            super().__init__(models)
            self.seconds = Counter()

        def forward_encoder(self, net_input):
            start = time.perf_counter()
            try:
                return super().forward_encoder(net_input)
            finally:
                self.seconds["encoder"] += time.perf_counter() - start

        def forward_decoder(self, *args, **kwargs):
            start = time.perf_counter()
            try:
                return super().forward_decoder(*args, **kwargs)
            finally:
                self.seconds["decoder"] += time.perf_counter() - start

    return TimedEnsembleModel(models)
