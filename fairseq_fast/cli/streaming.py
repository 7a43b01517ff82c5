"""Batches to hypotheses for the command-line tools: batch by batch, as fairseq does, or streamed
through the generator with --inflight-batching (generate_stream: finished rows are refilled from
the next batches, and each batch comes back, in order, once all its sentences are done).

fairseq-generate, fairseq-interactive and `python -m fairseq_fast.generate` each keep their own
metadata beside a batch (ids, chunks, constraints); `generated_batches` pairs it with the
batch's hypotheses and generation time.
"""
import collections
import time
from dataclasses import dataclass
from typing import Callable, Iterable, Iterator, Optional, Tuple

from torch import Tensor

from fairseq_fast.errors import UserError


@dataclass(frozen=True)
class Request:
    """What one batch asks of the generator: fairseq's sample, and what inference_step takes
    beside it."""
    sample: dict
    prefix_tokens: Optional[Tensor] = None
    constraints: Optional[Tensor] = None


def sample_request(sample: dict, prefix_size: int) -> Optional[Request]:
    """A fairseq-generate batch's Request: the first `prefix_size` target tokens forced
    (--prefix-size) and the sample's constraints; None for a sample with nothing to generate
    (no net_input)."""
    if "net_input" not in sample:
        return None
    prefix_tokens = sample["target"][:, :prefix_size] if prefix_size > 0 else None
    return Request(sample, prefix_tokens, sample.get("constraints"))


def inflight_rows(cfg, task, generator) -> int:
    """The sentences --inflight-batching keeps in flight (--batch-size); one line and exit for
    what it does not take."""
    from fairseq.tasks import FairseqTask

    if not hasattr(generator, "generate_stream"):
        raise UserError("--inflight-batching is for --generator speculative or bild, and "
                        "greedy search (--beam 1) on a model the plugin's decoder takes")
    if type(task).inference_step is not FairseqTask.inference_step:
        raise UserError(f"--inflight-batching does not support task {cfg.task._name} yet (it "
                        f"has its own inference step)")
    if not cfg.dataset.batch_size:
        raise UserError("--inflight-batching needs --batch-size: the sentences kept in flight")
    return int(cfg.dataset.batch_size)


def generated_batches(generator, task, models, items: Iterable,
                      request: Callable[[object], Optional[Request]], rows: int = 0,
                      before_batch: Optional[Callable[[object], None]] = None
                      ) -> Iterator[Tuple[object, Optional[list], float]]:
    """(item, hypotheses, seconds) for each of `items`, in their order. `request(item)` is the
    batch's Request, or None where it has nothing to generate (hypotheses None, 0 seconds).

    rows 0: batch by batch through task.inference_step, `before_batch(item)` called just before
    each (to seed it); seconds: the batch's own. rows > 0: streamed through
    generator.generate_stream with up to `rows` sentences in flight (constraints are not
    passed); seconds: those since the batch before it was done."""
    if not rows:
        for item in items:
            req = request(item)
            if req is None:
                yield item, None, 0.0
                continue
            if before_batch is not None:
                before_batch(item)
            start = time.perf_counter()
            hypos = task.inference_step(generator, models, req.sample,
                                        prefix_tokens=req.prefix_tokens,
                                        constraints=req.constraints)
            yield item, hypos, time.perf_counter() - start
        return
    pulled = collections.deque()  # (item, its sample or None): every item the stream took

    def stream():
        for item in items:
            req = request(item)
            pulled.append((item, None if req is None else req.sample))
            if req is not None:
                yield req.sample, req.prefix_tokens

    start = time.perf_counter()
    for sample, hypos in generator.generate_stream(stream(), rows):
        while pulled[0][1] is not sample:  # items with nothing to generate, before it
            yield pulled.popleft()[0], None, 0.0
        yield pulled.popleft()[0], hypos, time.perf_counter() - start
        start = time.perf_counter()
    while pulled:
        yield pulled.popleft()[0], None, 0.0
