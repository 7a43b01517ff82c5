"""A run with a fault at a known point: the tests' stand-in for hooks the package does not carry.

    python tests/faults.py kill-worker K SCRIPT [ARG ...]
        runs the console script SCRIPT; the post-processing worker that receives batch K SIGKILLs
        itself, a real crash at a known point
    torchrun ... tests/faults.py kill-rank R:K[:hang] [ARG ...]
        runs `python -m fairseq_fast.generate ARG ...`; rank R SIGKILLs itself once it has
        recorded K chunks and generated a batch of the next one (with :hang it stops its
        heartbeat and sleeps instead, as a rank whose machine is gone)
    torchrun ... tests/faults.py fail-rank R[:exit] [ARG ...]
        the same; rank R fails while it sets up, once every rank has registered (with :exit it
        leaves with status 1 and no word)

The faults replace functions and classes of the plugin's modules before the run starts, as a
test's monkeypatch would in its own process.
"""
import collections
import os
import runpy
import signal
import sys
import time

HERE = os.path.abspath(__file__)


def kill_worker(batch: int):
    from fairseq_fast.cli import pipeline

    format_batch = pipeline._format

    def _format(packed):  # runs in the worker (forked after this replacement)
        if packed.seq == batch:
            os.kill(os.getpid(), signal.SIGKILL)
        return format_batch(packed)

    # the pool sends it by name: pipeline._format, now this function
    _format.__module__, _format.__qualname__ = pipeline.__name__, "_format"
    pipeline._format = _format


def kill_rank(spec: str):
    from fairseq_fast import generate
    from fairseq_fast.cli import chunks

    rank, after, *hang = spec.split(":")
    recorders = []

    class Recorder(chunks.Recorder):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            recorders.append(self)

    class Order(collections.deque):
        """The loop's (chunk, batch, last) queue: the loop takes an entry just before it
        generates that batch, which is where the rank dies."""

        def __init__(self, ranks):
            super().__init__()
            self.ranks, self.in_chunk = ranks, 0  # batches of the current chunk generated

        def popleft(self):
            entry = super().popleft()
            if (str(self.ranks.rank) == rank and self.in_chunk and recorders
                    and len(recorders[-1].recorded) >= int(after)):
                if hang == ["hang"]:
                    self.ranks.close()
                    time.sleep(3600)
                os.kill(os.getpid(), signal.SIGKILL)  # a real crash, mid-chunk
            self.in_chunk = 0 if entry[2] else self.in_chunk + 1
            return entry

    class ClaimedBatches(generate.ClaimedBatches):
        def __init__(self, ranks, *args, **kwargs):
            super().__init__(ranks, *args, **kwargs)
            self.order = Order(ranks)

    chunks.Recorder = Recorder
    generate.ClaimedBatches = ClaimedBatches


def fail_rank(spec: str):
    from fairseq_fast import generate

    rank, _, how = spec.partition(":")
    set_up = generate.set_up

    def failing_set_up(argv, ranks):
        if str(ranks.rank) == rank:
            ranks.wait_registered()  # the other ranks can tell what happened
            if how == "exit":
                os._exit(1)
            raise RuntimeError(f"rank {ranks.rank} made to fail while it sets up")
        return set_up(argv, ranks)

    generate.set_up = failing_set_up


def main(argv):
    fault, spec, *rest = argv
    if fault == "kill-worker":
        kill_worker(int(spec))
        sys.argv = rest
        runpy.run_path(rest[0], run_name="__main__")
    elif fault in ("kill-rank", "fail-rank"):
        (kill_rank if fault == "kill-rank" else fail_rank)(spec)
        from fairseq_fast import generate

        sys.argv = [generate.__file__, *rest]
        generate.main()
    else:
        sys.exit(f"faults.py: unknown fault {fault!r}")


if __name__ == "__main__":
    main(sys.argv[1:])
