"""`python -m fairseq_fast.generate`: fairseq-generate as one job over many processes and
machines, launched by torchrun, resumable.

    torchrun --nproc-per-node N -m fairseq_fast.generate DATA --path model.pt [flags]
    python -m fairseq_fast.generate DATA --path model.pt [flags]        # one process

Every fairseq-generate flag works, the plugin's included. Each rank sets up as fairseq-generate
does (task, models, dataset, `task.get_batch_iterator`'s batch list, `task.build_generator`,
the scorer; async_cli.py's pieces of fairseq_cli.generate._main), so every rank holds fairseq's
own batches. The batches are cut into chunks of equal token cost (chunks.py); the ranks take
chunks from one queue, longest sentences first, and record each finished chunk in the work
folder; rank 0 then writes the chunks in batch order and the scorer's line from the merged
statistics: the lines, order and format of one process. The ranks coordinate through
torch.distributed's store (distributed.py).

Each batch is generated after seeding from (--seed, 1 by default; the batch's first sentence
id), in every run, one process included: with --sampling a sample depends on its batch only, not
on the rank that drew it or on the batches before it (stock fairseq-generate draws one stream
across batches; its samples differ, their distribution is the same).
"""
import argparse
import collections
import contextlib
import io
import json
import logging
import os
import sys
import tempfile
import time
import traceback
import uuid
import warnings
from typing import Optional

import numpy as np
import torch
from fairseq import options, scoring, utils
from fairseq.dataclass.utils import convert_namespace_to_omegaconf

# importing this module imported the fairseq_fast package first: the overrides apply
from fairseq_fast.cli import chunks
from fairseq_fast.cli.async_cli import GenerationSetUp, _seed_and_device
from fairseq_fast.cli.distributed import Ranks
from fairseq_fast.errors import EXIT_CODE, UserError
from fairseq_fast.options import carry_into, postprocess_workers
from fairseq_fast.cli.output import describe
from fairseq_fast.cli.pipeline import Pipeline
from fairseq_fast.cli.postprocess import Packed, originals, pack_generated
from fairseq_fast.cli.streaming import generated_batches, inflight_rows, sample_request


def _process_start() -> float:
    """When this process started (the interpreter's start-up and the plugin's imports count
    in the job's start-up), from /proc; now where there is none."""
    try:
        with open("/proc/self/stat") as f:
            ticks = int(f.read().rsplit(")", 1)[1].split()[19])
        age = time.clock_gettime(time.CLOCK_BOOTTIME) - ticks / os.sysconf("SC_CLK_TCK")
        return time.time() - age
    except (OSError, ValueError, IndexError, AttributeError):
        return time.time()


STARTED = _process_start()

# flags that change how a job runs, not what it writes: a resumed job may change them
RUN_ONLY = {"resume", "work_dir", "chunk_tokens", "rank_threads", "rank_timeout",
            "postprocess_workers", "inflight_batching", "num_workers", "data_buffer_size",
            "results_path", "log_file",
            "log_format", "log_interval", "no_progress_bar", "tensorboard_logdir",
            "wandb_project", "azureml_logging", "aim_repo", "aim_run_hash", "user_dir",
            "device_id", "nprocs_per_node", "heartbeat_timeout", "suppress_crashes", "profile",
            "empty_cache_freq", "all_gather_list_size", "reset_logging"}


def add_args(parser) -> None:
    group = parser.add_argument_group("fairseq_fast.generate (many processes, resumable)")
    group.add_argument("--resume", action="store_true",
                       help="continue the job recorded in the work folder: its finished chunks "
                            "are kept, the others generated (any number of ranks)")
    group.add_argument("--work-dir", metavar="DIR",
                       help="where the job records its manifest and finished chunks; every rank "
                            "must see it (on many machines: a shared filesystem). Default: "
                            "RESULTS_PATH/generate-SUBSET.work with --results-path, else a new "
                            "temporary folder (named in the error line of a stopped job). "
                            "Removed when the job has written its output")
    group.add_argument("--chunk-tokens", type=int, default=0, metavar="N",
                       help="a chunk (the unit of work and of --resume) ends after the batch "
                            "that brings it to N tokens as --max-tokens counts them (rows x "
                            "longest sentence). 0: about 16 chunks per rank, at most 50000")
    group.add_argument("--rank-threads", type=int, default=0, metavar="N",
                       help="torch threads per rank (0: OMP_NUM_THREADS where it is set, "
                            "else the CPUs this process may use divided by the ranks on its "
                            "machine, so that they do not oversubscribe; torchrun's own "
                            "OMP_NUM_THREADS=1 default does not count as set)")
    group.add_argument("--rank-timeout", type=float, default=120.0, metavar="S",
                       help="a rank whose heartbeat stops for S seconds ends the job with one "
                            "line naming it")


def build_parser():
    parser = options.get_generation_parser()
    # as fairseq_cli.generate.cli_main does (for tasks that read model arguments)
    parser.add_argument("--arch", "-a", metavar="ARCH", default="wav2vec2",
                        help="Model architecture. For constructing tasks that rely on model args "
                             "(e.g. `AudioPretraining`)")
    add_args(parser)
    return parser


def _early_args(argv):
    """--rank-timeout, before fairseq is imported (the store connection needs it)."""
    parser = argparse.ArgumentParser(add_help=False)
    parser.add_argument("--rank-timeout", type=float, default=120.0)
    try:
        with contextlib.redirect_stderr(io.StringIO()):
            return parser.parse_known_args(argv)[0]
    except SystemExit:  # fairseq's parser says what is wrong with it
        return argparse.Namespace(rank_timeout=120.0)


# -- set-up (every rank) ----------------------------------------------------------------------
class Job:
    """What a rank holds after setting up: fairseq's objects and the batch list."""


def _parse(argv):
    captured = io.StringIO()
    try:
        with contextlib.redirect_stderr(captured):
            args = options.parse_args_and_arch(build_parser(), argv)
    except SystemExit as e:
        if e.code in (0, None):
            raise
        lines = [line for line in captured.getvalue().splitlines() if line.strip()]
        message = lines[-1] if lines else f"bad command line (status {e.code})"
        raise UserError(message.split(": error: ", 1)[-1]) from None
    sys.stderr.write(captured.getvalue())
    cfg = carry_into(convert_namespace_to_omegaconf(args), args)
    if cfg.common_eval.path is None:
        raise UserError("--path required for generation")
    if cfg.generation.sampling and cfg.generation.nbest != cfg.generation.beam:
        raise UserError("--sampling requires --nbest to be equal to --beam")
    if cfg.generation.replace_unk is not None and cfg.dataset.dataset_impl != "raw":
        raise UserError("--replace-unk requires a raw text dataset (--dataset-impl=raw)")
    if cfg.dataset.num_shards > 1:
        raise UserError("--num-shards: the ranks share the work among themselves; launch them "
                        "with torchrun --nproc-per-node N (and --nnodes M)")
    if args.chunk_tokens < 0 or args.rank_threads < 0 or args.rank_timeout <= 0:
        raise UserError("--chunk-tokens and --rank-threads must be >= 0, --rank-timeout > 0")
    for data in str(cfg.task.data).split(os.pathsep):
        if "://" not in data and not os.path.isdir(data):
            raise UserError(f"data folder {data}: " + ("is not a folder" if os.path.exists(data)
                                                        else "no such folder"))
    results = cfg.common_eval.results_path
    if results is not None and os.path.exists(results) and not os.path.isdir(results):
        raise UserError(f"--results-path {results}: is a file, not a folder")
    return args, cfg


def set_up(argv, ranks) -> Job:
    job = Job()
    job.args, cfg = _parse(argv)
    job.cfg = cfg
    utils.import_user_module(cfg.common)
    if cfg.dataset.max_tokens is None and cfg.dataset.batch_size is None:
        cfg.dataset.max_tokens = 12000
    threads, source = rank_threads(job.args.rank_threads, ranks.local_world)
    torch.set_num_threads(threads)
    if torch.cuda.is_available() and not cfg.common.cpu:
        torch.cuda.set_device(ranks.local_rank % torch.cuda.device_count())
    logger = logging.getLogger("fairseq_cli.generate")
    logger.info(cfg)
    logger.info(f"fairseq_fast: {ranks.world} rank(s), {torch.get_num_threads()} torch "
                f"thread(s) each ({source})")
    job.use_cuda = _seed_and_device(cfg)
    setup = GenerationSetUp(cfg, logger, job.use_cuda)
    job.task, job.models, job.generator = setup.task, setup.models, setup.generator
    job.align_dict, job.dataset = setup.align_dict, setup.dataset
    job.batches = setup.batch_iterator(cfg, num_shards=1, shard_id=0).frozen_batches
    job.costs = chunks.batch_tokens(job.batches, _num_tokens(job.dataset))
    job.new_scorer = lambda: scoring.build_scorer(cfg.scoring, setup.tgt_dict)
    job.lines = setup.lines(cfg, string_scorer=hasattr(job.new_scorer(), "add_string"))
    return job


def rank_threads(flag: int, local_world: int):
    """This rank's torch threads and where the number comes from: --rank-threads, else the
    user's OMP_NUM_THREADS, else the CPUs this process may use divided by the ranks on its
    machine."""
    if flag:
        return flag, "--rank-threads"
    omp = omp_threads()
    if omp:
        return omp, "OMP_NUM_THREADS"
    return max(1, _cpus() // local_world), f"{_cpus()} CPUs / {local_world} rank(s)"


def omp_threads(launcher_pid: Optional[int] = None) -> int:
    """OMP_NUM_THREADS where the user set it (its first number), else 0. torchrun sets it to 1
    for the processes it starts where it was not set: then the launcher's own environment, as it
    was started (/proc/PID/environ of the parent process), lacks it, and the value is torchrun's
    default, not the user's."""
    value = os.environ.get("OMP_NUM_THREADS", "").split(",")[0].strip()
    if not value.isdigit() or int(value) < 1:
        return 0
    if "TORCHELASTIC_RUN_ID" in os.environ:
        pid = os.getppid() if launcher_pid is None else launcher_pid
        try:
            with open(f"/proc/{pid}/environ", "rb") as f:
                environ = f.read()
            # empty: a process still in exec (cannot tell, as for an error)
            if environ and not any(v.startswith(b"OMP_NUM_THREADS=")
                                   for v in environ.split(b"\0")):
                return 0
        except OSError:  # cannot tell: the value counts as the user's
            pass
    return int(value)


def _cpus() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()


def _num_tokens(dataset):
    """The dataset's tokens per sentence as --max-tokens counts them, for many indices."""

    if hasattr(dataset, "num_tokens_vec"):
        try:
            dataset.num_tokens_vec(np.zeros(1, dtype=np.int64))
            return dataset.num_tokens_vec
        except (NotImplementedError, IndexError):
            pass
    return lambda indices: [dataset.num_tokens(i) for i in indices]


def _describe_error(e: BaseException) -> str:

    if isinstance(e, (UserError, FileNotFoundError)):  # fairseq's "Dataset not found: ..."
        return str(e)
    return f"{type(e).__name__}: {e}".rstrip(": ")


# -- the job's folder and plan (rank 0) ----------------------------------------------------------
def _settings(args) -> dict:

    return {k: json.loads(json.dumps(v, default=str)) for k, v in sorted(vars(args).items())
            if k not in RUN_ONLY and not k.startswith("distributed_")}


def prepare(job, ranks, statuses) -> dict:
    """Rank 0, all ranks set up: check that they agree, prepare the work folder and the output,
    and return the plan every rank follows."""

    digests = {s["digest"] for s in statuses}
    if len(digests) > 1:
        other = next(r for r, s in enumerate(statuses) if s["digest"] != statuses[0]["digest"])
        raise UserError(f"{ranks.describe(other)} builds other batches than rank 0 (other data "
                        "or options on its machine)")
    cfg, args = job.cfg, job.args
    output = None
    if cfg.common_eval.results_path is not None:
        try:
            os.makedirs(cfg.common_eval.results_path, exist_ok=True)
        except OSError as e:
            raise UserError(f"--results-path {cfg.common_eval.results_path}: "
                            f"{e.strerror or e}") from None
        output = os.path.join(cfg.common_eval.results_path,
                              f"generate-{cfg.dataset.gen_subset}.txt")
        if os.path.isdir(output):
            raise UserError(f"{output} is a folder")
    work_dir = args.work_dir
    if work_dir is None and output is not None:
        work_dir = os.path.join(cfg.common_eval.results_path,
                                f"generate-{cfg.dataset.gen_subset}.work")
    if work_dir is None:
        if args.resume:
            raise UserError("--resume needs the work folder of the stopped job: --work-dir DIR "
                            "(or the --results-path it wrote to)")
        work_dir = tempfile.mkdtemp(prefix="fairseq_fast-generate-")
    folder = chunks.WorkFolder(os.path.abspath(work_dir))
    folder.create()
    if output is not None:
        _check_writable(output)
    manifest = folder.read_manifest()
    settings = _settings(args)
    digest = statuses[0]["digest"]
    if manifest is not None and not args.resume:
        raise UserError(f"{folder.path} holds a stopped job ({len(folder.done())} of "
                        f"{len(manifest['chunks'])} chunks recorded): add --resume to continue "
                        "it, or remove the folder")
    if manifest is None and args.resume:
        raise UserError(f"--resume: {folder.path} holds no job (no {chunks.MANIFEST}; a job "
                        "that wrote its output has removed its folder)")
    if manifest is not None:
        _check_same_job(manifest, settings, digest, folder)
        plan = [chunks.Chunk(i, *c) for i, c in enumerate(manifest["chunks"])]
        folder.clear_partial()
    else:
        size = args.chunk_tokens or chunks.automatic_chunk_tokens(job.costs, ranks.world)
        plan = chunks.plan(job.batches, job.costs, size)
    done = folder.done()
    attempt = uuid.uuid4().hex
    folder.write_manifest({
        "version": chunks.VERSION, "attempt": attempt, "settings": settings, "digest": digest,
        "batches": len(job.batches), "sentences": int(sum(len(b) for b in job.batches)),
        "chunks": [[c.first, c.end, c.sentences, c.tokens] for c in plan]})
    logging.getLogger("fairseq_fast").info(
        f"fairseq_fast: {len(job.batches)} batches in {len(plan)} chunks, work folder "
        f"{folder.path}" + (f", {len(done)} chunks recorded before" if args.resume else ""))
    return {"attempt": attempt, "work_dir": folder.path, "output": output,
            "chunks": [[c.first, c.end, c.sentences, c.tokens] for c in plan],
            "queue": chunks.queue(plan, done), "done_before": len(done)}


def _check_writable(path):

    probe = f"{path}.probe-{os.getpid()}"
    try:
        with open(probe, "w"):
            pass
        os.remove(probe)
    except OSError as e:
        raise UserError(f"cannot write {path}: {e.strerror or e}") from None


def _check_same_job(manifest, settings, digest, folder):

    if manifest.get("version") != 1:
        raise UserError(f"{folder.manifest}: unknown version {manifest.get('version')}")
    before = manifest["settings"]
    changed = sorted(k for k in set(before) | set(settings) if before.get(k) != settings.get(k))
    if changed:
        shown = ", ".join(f"--{k.replace('_', '-')} {before.get(k)!r} -> {settings.get(k)!r}"
                          for k in changed[:3])
        raise UserError(f"--resume: the job in {folder.path} ran with other settings ({shown}"
                        + (", ..." if len(changed) > 3 else "") + "); resume it with its own "
                        "or remove the folder")
    if manifest["digest"] != digest:
        raise UserError(f"--resume: the data gives other batches than the job in {folder.path} "
                        "had (the data or the batching changed); remove the folder to start again")


# -- generation (every rank) ------------------------------------------------------------------
def batch_seed(seed: int, first_id: int) -> int:
    """The seed of a batch whose first sentence (in fairseq's batch list) is `first_id`."""
    return (seed * 1_000_003 + first_id) % (2 ** 32)


def generate_share(job, ranks, plan, folder) -> dict:
    """Take chunks from the queue until it is empty; record each. Returns this rank's figures."""
    cfg, task = job.cfg, job.task
    plan_chunks = [chunks.Chunk(i, *c) for i, c in enumerate(plan["chunks"])]
    recorder = chunks.Recorder(folder, ranks.rank, job.new_scorer)
    lines = ChunkLines(job.lines)
    workers = postprocess_workers(job.cfg)
    pipeline = (Pipeline(workers, lines, _NoOutput(), recorder.on_item) if workers else None)
    emit = pipeline.put if pipeline else (lambda packed: recorder.on_item(lines(packed)[1]))
    sampler = ClaimedBatches(ranks, plan["queue"], plan_chunks, job.batches, job.dataset)
    loader = torch.utils.data.DataLoader(job.dataset, collate_fn=job.dataset.collater,
                                         batch_sampler=sampler,
                                         num_workers=cfg.dataset.num_workers,
                                         pin_memory=job.use_cuda)
    figures = {"chunks": 0, "sentences": 0, "tokens": 0, "gen_seconds": 0.0}

    for seq, chunk, batch, last, sample, hypos, seconds in _generated(job, loader, sampler):
        stats = {"sentences": 0, "tokens": 0, "seconds": 0.0, "has_target": None}
        payload = None
        if hypos is not None:
            ids = sample["id"].tolist()
            raw = (originals(task, cfg.dataset.gen_subset, ids)
                   if job.align_dict is not None else None)
            payload = pack_generated(seq, sample, hypos, cfg.generation.nbest, raw).payload
            stats = {"sentences": len(ids), "tokens": sum(len(h[0]["tokens"]) for h in hypos),
                     "seconds": seconds, "has_target": sample["target"] is not None}
            for key, value in (("sentences", len(ids)), ("tokens", stats["tokens"]),
                               ("gen_seconds", seconds)):
                figures[key] += value
        emit(Packed(seq, stats["sentences"], ("batch", chunk, stats, payload)))
        if last:
            emit(Packed(seq, 0, ("end", chunk, None, None)))
            figures["chunks"] += 1
        if pipeline is not None and pipeline.problem is not None:
            break
    if pipeline is not None:
        pipeline.close()
        if pipeline.problem is not None:
            raise UserError(pipeline.problem[0])
    return figures


def _generated(job, loader, sampler):
    """(seq, chunk, batch, last batch of its chunk, sample, hypotheses or None for a sample
    with nothing to generate, generation seconds) for each batch the loader yields, in its
    order: batch by batch (each seeded as its batch), or with --inflight-batching streamed
    through the generator (streaming.generated_batches)."""
    cfg, task = job.cfg, job.task
    seeded = cfg.common.seed is not None and not cfg.generation.no_seed_provided
    inflight = getattr(cfg.generation, "inflight_batching", False)
    rows = inflight_rows(cfg, task, job.generator) if inflight else 0

    def loaded():
        for seq, sample in enumerate(loader):
            chunk, batch, last = sampler.order.popleft()
            sample = utils.move_to_cuda(sample) if job.use_cuda else sample
            yield seq, chunk, batch, last, sample

    def seed(entry):
        value = batch_seed(cfg.common.seed, int(np.asarray(job.batches[entry[2]])[0]))
        np.random.seed(value)
        utils.set_torch_seed(value)

    def request(entry):
        return sample_request(entry[4], cfg.generation.prefix_size)

    for entry, hypos, seconds in generated_batches(job.generator, task, job.models, loaded(),
                                                   request, rows, seed if seeded else None):
        yield (*entry, hypos, seconds)


class ClaimedBatches:
    """The data loader's batch sampler: the batches of the chunks this rank takes from the
    queue, one chunk at a time. The loader reads a batch or two ahead, so a rank takes its next
    chunk shortly before it finishes the current one. `order` tells the loop, for each batch
    the loader yields, (chunk, batch position, last batch of its chunk)."""

    def __init__(self, ranks, queue, plan_chunks, batches, dataset):

        self.ranks, self.queue, self.chunks = ranks, queue, plan_chunks
        self.batches, self.dataset = batches, dataset
        self.order = collections.deque()

    def __iter__(self):
        while True:
            position = self.ranks.claim()
            if position >= len(self.queue):
                return
            chunk = self.chunks[self.queue[position]]
            if getattr(self.dataset, "supports_prefetch", False):
                self.dataset.prefetch([i for b in self.batches[chunk.first:chunk.end]
                                       for i in b])
            for b in range(chunk.first, chunk.end):
                self.order.append((chunk.index, b, b == chunk.end - 1))
                yield self.batches[b]


class ChunkLines:
    """The formatter the pipeline (or the serial loop) runs on each item: a batch's text and
    scorer inputs for its chunk, or a chunk's end; what it returns goes to Recorder.on_item (the
    pipeline writes nothing itself: its output is _NoOutput)."""

    def __init__(self, lines):
        self.lines = lines

    def __call__(self, packed):

        kind, chunk, stats, payload = packed.payload
        if kind == "end":
            return [], ("end", chunk)
        if payload is None:  # a batch fairseq's loop skips (no net_input)
            return [], ("batch", chunk, "", [], stats)
        text, scored = self.lines(Packed(packed.seq, packed.sentences, payload))
        return [], ("batch", chunk, "".join(text), scored, stats)


class _NoOutput:
    def write(self, text):
        pass

    def flush(self):
        pass


# -- the merge (rank 0) ---------------------------------------------------------------------------
def write_output(job, plan, folder) -> dict:
    """Rank 0: the chunks in batch order, then the scorer's line, to --results-path's file
    (written under a temporary name, then renamed) or stdout. Returns the totals."""

    plan_chunks = [chunks.Chunk(i, *c) for i, c in enumerate(plan["chunks"])]
    scorer = job.new_scorer()
    output = plan["output"]
    try:
        if output is not None:
            tmp = f"{output}.tmp-{os.getpid()}"
            with open(tmp, "wb") as out:
                totals = chunks.merge(folder, plan_chunks, out, scorer)
                _scorer_line(job, scorer, totals, out)
                out.flush()
                os.fsync(out.fileno())
            os.replace(tmp, output)
        else:
            sys.stdout.flush()
            out = sys.stdout.buffer
            totals = chunks.merge(folder, plan_chunks, out, scorer)
            _scorer_line(job, scorer, totals, out)
            out.flush()
    except OSError as e:
        raise UserError(f"{describe(e)}; the finished chunks stay in {folder.path}: run again "
                        "with --resume to write the output") from None
    return totals


def _scorer_line(job, scorer, totals, out):
    cfg = job.cfg
    if not totals["has_target"]:
        return
    logger = logging.getLogger("fairseq_cli.generate")
    if cfg.bpe and not cfg.generation.sacrebleu:
        if cfg.common_eval.post_process:
            logger.warning("BLEU score is being computed by splitting detokenized string on "
                           "spaces, this is probably not what you want. Use --sacrebleu for "
                           "standard 13a BLEU tokenization")
        else:
            logger.warning("If you are using BPE on the target side, the BLEU score is computed "
                           "on BPE tokens, not on proper words.  Use --sacrebleu for standard "
                           "13a BLEU tokenization")
    out.write("Generate {} with beam={}: {}\n".format(
        cfg.dataset.gen_subset, cfg.generation.beam, scorer.result_string()).encode("utf-8"))


# -- main ---------------------------------------------------------------------------------------
def _logging(ranks):
    prefix = f"rank {ranks.rank} | " if ranks.world > 1 else ""
    logging.basicConfig(format=f"%(asctime)s | %(levelname)s | %(name)s | {prefix}%(message)s",
                        datefmt="%Y-%m-%d %H:%M:%S", stream=sys.stderr, force=True,
                        level=os.environ.get("LOGLEVEL", "INFO").upper() if ranks.rank == 0
                        else logging.WARNING)


def main(argv=None) -> None:
    argv = sys.argv[1:] if argv is None else list(argv)

    ranks = Ranks.from_env(_early_args(argv).rank_timeout)
    if "-h" in argv or "--help" in argv:
        if ranks.rank == 0:
            build_parser().parse_args(argv)
        return
    ranks.start()
    _logging(ranks)
    if ranks.rank != 0:  # rank 0 shows the warnings every rank would repeat

        warnings.simplefilter("ignore")
    job, statuses = set_up_all(argv, ranks)
    plan, folder, go = agree(job, ranks, statuses)
    try:
        figures = generate_share(job, ranks, plan, folder)
    except KeyboardInterrupt:
        ranks.abort("interrupted (Ctrl-C)" + ranks.note(), 130)
    except (Exception, SystemExit) as e:  # noqa: BLE001 (one line, whatever it is)
        ranks.abort(_rank_failure(ranks, e, folder) + ranks.note(), _status(e))
    figures.update(rank=ranks.rank, setup_s=go - STARTED, busy_s=time.time() - go)
    ranks.finish(figures)
    if ranks.rank == 0:
        records = ranks.wait_done()
        generated = time.time()
        try:
            totals = write_output(job, plan, folder)
        except (Exception, SystemExit) as e:  # noqa: BLE001
            ranks.abort(_describe_error(e), _status(e))
        merged = time.time()
        folder.remove()
        ranks.close()
        _log_summary(ranks, plan, records, totals, go, generated, merged)


def set_up_all(argv, ranks):
    """Every rank sets up; rank 0 ends the job with one line if any could not. Returns this
    rank's Job and, at rank 0, every rank's start-up status."""
    try:
        job = set_up(argv, ranks)
        status = {"digest": _digest(job), "error": None}
    except KeyboardInterrupt:
        ranks.abort("interrupted (Ctrl-C) while setting up", 130)
    except (Exception, SystemExit) as e:  # noqa: BLE001 (reported in one line by rank 0)
        job, status = None, {"digest": None, "error": _describe_error(e), "status": _status(e)}
    statuses = ranks.gather("setup", status)
    if ranks.rank == 0:
        ranks.load_who()
        _verdict(ranks, statuses)
    return job, statuses


def agree(job, ranks, statuses):
    """Rank 0 prepares the work folder and the plan; every rank checks it sees the folder; then
    generation starts ("go", its time)."""

    if ranks.rank == 0:
        try:
            ranks.publish("plan", prepare(job, ranks, statuses))
        except (Exception, SystemExit) as e:  # noqa: BLE001
            ranks.abort(_describe_error(e), _status(e))
    plan = ranks.receive("plan")
    ranks.load_who()
    folder = chunks.WorkFolder(plan["work_dir"])
    # set before "go": rank 0 may record chunks before a slower rank has read "go", and a Ctrl-C
    # then may reach that rank first
    total = len(plan["chunks"])
    resume = "" if plan["output"] or job.args.work_dir else f" --work-dir {folder.path}"
    ranks.note = lambda: (f"; {len(folder.done())} of {total} chunks are recorded in "
                          f"{folder.path}: the same command with --resume{resume} continues")
    try:
        seen = (folder.read_manifest() or {}).get("attempt") if ranks.rank else plan["attempt"]
    except Exception:  # noqa: BLE001 (an unreadable manifest is a folder this rank cannot see)
        seen = None
    ready = ranks.gather("ready", seen == plan["attempt"])
    if ranks.rank == 0:
        blind = [r for r, ok in enumerate(ready) if not ok]
        if blind:
            ranks.abort(f"{ranks.describe(blind[0])} does not see the job's work folder "
                        f"{folder.path}: every rank must (on many machines: --work-dir on a "
                        "shared filesystem)", 2)
        ranks.publish("go", time.time())
    go = ranks.receive("go")
    return plan, folder, go


def _digest(job):
    return chunks.digest(job.batches)


def _status(e) -> int:
    """2 for a user's mistake (as the plugin's one-line errors), 1 for a failure."""

    if isinstance(e, (UserError, SystemExit, FileNotFoundError)):
        return getattr(e, "exit_code", EXIT_CODE)
    return 1


def _verdict(ranks, statuses) -> None:
    """Rank 0: end the job if a rank could not set up (one line, whichever ranks failed)."""
    failed = [(r, s) for r, s in enumerate(statuses) if s["error"] is not None]
    if not failed:
        return
    rank, status = failed[0]
    code = status["status"]
    if len(failed) == len(statuses) and len({s["error"] for _, s in failed}) == 1:
        ranks.abort(status["error"], code)  # the same mistake everywhere: no rank to name
    ranks.abort(f"{ranks.describe(rank)} failed while setting up: {status['error']}"
                + (f" (and {len(failed) - 1} other rank(s))" if len(failed) > 1 else ""), code)


def _rank_failure(ranks, e, folder) -> str:
    """One line for an error while generating; a bug's traceback goes to a file."""

    where = f"{ranks.describe()} failed while generating" if ranks.world > 1 else \
        "failed while generating"
    if isinstance(e, UserError):
        return f"{where}: {e}"
    path = os.path.join(folder.path, f"rank{ranks.rank}-traceback.txt")
    try:
        with open(path, "w") as f:
            traceback.print_exception(type(e), e, e.__traceback__, file=f)
    except OSError:  # a full disk: no empty or partial file is left behind
        with contextlib.suppress(OSError):
            os.remove(path)
        path = None
    return f"{where}: {_describe_error(e)}" + (f" (traceback in {path})" if path else "")


def _log_summary(ranks, plan, records, totals, go, generated, merged):
    logger = logging.getLogger("fairseq_cli.generate")
    sentences = sum(r["sentences"] for r in records)
    tokens = sum(r["tokens"] for r in records)
    wall = max(generated - go, 1e-9)
    logger.info("NOTE: hypothesis and token scores are output in base 2")
    logger.info(f"Translated {sentences:,} sentences ({tokens:,} tokens) in {wall:.1f}s "
                f"({sentences / wall:.2f} sentences/s, {tokens / wall:.2f} tokens/s) with "
                f"{ranks.world} rank(s)" + (f"; {plan['done_before']} chunks were recorded "
                                            "before --resume" if plan["done_before"] else ""))
    shares = ", ".join(f"rank {r['rank']}: {r['chunks']} chunks, {r['tokens']} tokens, "
                       f"{r['gen_seconds']:.1f}s generating" for r in records)
    logger.info(f"fairseq_fast: shares: {shares}")
    logger.info(f"fairseq_fast: timing: start-up {go - STARTED:.4f}s, generation "
                f"{generated - go:.4f}s, merge {merged - generated:.4f}s, output "
                f"{totals['sentences']} sentences")


if __name__ == "__main__":
    main()
