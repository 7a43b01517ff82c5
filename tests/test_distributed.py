"""`python -m fairseq_fast.generate` over 1, 2 and 3 processes (torchrun, gloo's loopback store),
on the tiny pair: byte-identical output, kill-and-resume, and failures that end the job with one
line naming the rank.

The reference for each setting is one process, `python -m fairseq_fast.generate`, whose stdout
is itself byte for byte the plugin's `fairseq-generate --user-dir` stdout for greedy, beam 5 and
speculative decoding (the S-/T-/H-/D-/P- lines in batch order and the BLEU line). With sampling
the module reseeds each batch from (seed, its first sentence id), so the reference is its own
one-process run: stock fairseq-generate draws one random stream across batches.

The batches are small (--batch-size 2: 20 batches of the 40 test sentences) and so are the chunks
(--chunk-tokens 40: 7 chunks of 2 or more batches), so that every rank takes several chunks. Every
process runs one torch thread (--rank-threads 1): 2 cores shared by up to 3 ranks.
"""
import os
import re
import subprocess
import sys

import pytest

from test_cli import BIN, TOOLS, USER_DIR

TORCHRUN = os.path.join(BIN, "torchrun")
FAULTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "faults.py")
TIMEOUT = 240
SETTINGS = {
    "greedy": ["--beam", "1"],
    "beam5": ["--beam", "5"],
    "speculative": ["--beam", "1", "--generator", "speculative", "--draft-len", "3"],
    "sampling": ["--beam", "1", "--sampling", "--sampling-topk", "10", "--temperature", "1.5",
                 "--seed", "7"],
}
STOCK_CLI = ("greedy", "beam5", "speculative")  # settings whose reference is fairseq-generate's


def env(extra=None):
    e = dict(os.environ)
    for key in ("TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD", "WORLD_SIZE", "RANK", "MASTER_ADDR",
                "MASTER_PORT"):
        e.pop(key, None)
    e.update(extra or {})
    return e


def args_for(pair, setting, *extra, module=True):
    """The command line for `setting`; module: with the module's --rank-threads 1."""
    args = [os.path.join(pair, "data-bin"), "--path", os.path.join(pair, "target.pt"),
            "--gen-subset", "test", "--batch-size", "2", *SETTINGS[setting], *extra]
    if module:
        args += ["--rank-threads", "1"]
    if setting == "speculative":
        args += ["--draft-path", os.path.join(pair, "draft.pt")]
    return args


def launch(n, args, extra_env=None, timeout=TIMEOUT, fault=None):
    """One job: `python -m fairseq_fast.generate` for n = 1, torchrun with n processes else;
    fault: (name, spec) of tests/faults.py, which then runs the module."""
    program = ([FAULTS, *fault] if fault else ["-m", "fairseq_fast.generate"])
    if n == 1:
        return TOOLS.run([sys.executable, *program, *args], env=env(extra_env), timeout=timeout,
                         text=False)
    cmd = [TORCHRUN, "--standalone", "--nproc-per-node", str(n), *program, *args]
    return subprocess.run(cmd, capture_output=True, env=env(extra_env), timeout=timeout)


def ok(result):
    assert result.returncode == 0, result.stderr.decode()[-3000:]
    return result


def one_error_line(result, *needles):
    """Exactly one `fairseq_fast: error:` line (torchrun repeats it in its summary, as the
    failed rank's 'traceback'), no Python traceback of the ranks' own, a non-zero status."""
    assert result.returncode != 0
    err = result.stderr.decode()
    ours = [line for line in err.splitlines() if line.startswith("fairseq_fast: error:")]
    assert len(ours) == 1, err[-4000:]
    frames = re.findall(r'^  File "([^"]+)"', err, flags=re.M)
    assert all("/torch/distributed/" in f or f.endswith("/torchrun") for f in frames), err[-4000:]
    for needle in needles:
        assert needle in ours[0], ours[0]
    return ours[0]


# -- references and runs, shared by the tests -----------------------------------------------------
@pytest.fixture(scope="session")
def reference(tiny_pair, tmp_path_factory):
    """{setting: stdout bytes of one process}; for STOCK_CLI settings checked against the
    plugin's fairseq-generate, whose runs (real processes: OMP_NUM_THREADS is read as torch
    starts) go on while the module's runs are served."""
    folder = tmp_path_factory.mktemp("reference")
    clis = {}
    try:
        for setting in STOCK_CLI:
            streams = [open(folder / f"{setting}.{name}", "w+b") for name in ("out", "err")]
            clis[setting] = (subprocess.Popen(
                [os.path.join(BIN, "fairseq-generate"), "--user-dir", USER_DIR,
                 *args_for(tiny_pair, setting, module=False)], stdout=streams[0],
                stderr=streams[1], env=env({"OMP_NUM_THREADS": "1"})), *streams)
        out = {}
        for setting in SETTINGS:
            ours = ok(launch(1, args_for(tiny_pair, setting))).stdout
            assert ours.count(b"\nH-") + ours.startswith(b"H-") == 40
            out[setting] = ours
        for setting, (proc, stdout, stderr) in clis.items():
            proc.wait(timeout=TIMEOUT)
            stdout.seek(0)
            stderr.seek(0)
            cli = subprocess.CompletedProcess(proc.args, proc.returncode, stdout.read(),
                                              stderr.read())
            assert ok(cli).stdout == out[setting], setting
    finally:
        for proc, stdout, stderr in clis.values():
            if proc.poll() is None:
                proc.kill()
                proc.wait()
            stdout.close()
            stderr.close()
    return out


# every setting under one launch of several processes; 2 and 3 processes both
RUNS = [("greedy", 2), ("beam5", 3), ("speculative", 2), ("sampling", 3)]


@pytest.mark.parametrize("setting,n", RUNS, ids=[f"{s}-{n}" for s, n in RUNS])
def test_many_processes_write_one_process_bytes(tiny_pair, reference, setting, n):
    """Each chunk's bytes do not depend on the rank that generates it (sampling reseeds at each
    batch), and the merge that writes them in order is the same code for every setting: one
    process count above 1 per setting shows that setting's bytes survive the split, and the
    settings between them show the merge at 2 and at 3 processes (3: an odd share; the resume
    test runs 3 too)."""
    result = ok(launch(n, args_for(tiny_pair, setting, "--chunk-tokens", "40")))
    assert result.stdout == reference[setting]
    err = result.stderr.decode()
    shares = re.search(r"fairseq_fast: shares: (.*)", err).group(1)
    assert shares.count("rank ") == n
    assert "BLEU4 = " in result.stdout.decode().splitlines()[-1]


def test_inflight_batching_under_ranks_writes_the_same_bytes(tiny_pair, reference):
    """--inflight-batching inside each rank's chunks (batch 2: rows refilled across a chunk's
    batches) gives the bytes of one process without it (greedy search streams on the same
    loop: test_cli.py)."""
    result = ok(launch(2, args_for(tiny_pair, "speculative", "--chunk-tokens", "40",
                                   "--inflight-batching")))
    assert result.stdout == reference["speculative"]


def test_sampling_reference_samples(reference):
    assert reference["sampling"] != reference["greedy"]


def test_postprocess_workers_per_rank_and_results_file(tiny_pair, reference, tmp_path):
    result = ok(launch(2, args_for(tiny_pair, "greedy", "--chunk-tokens", "40",
                                   "--postprocess-workers", "2", "--results-path",
                                   str(tmp_path))))
    assert result.stdout == b""
    assert (tmp_path / "generate-test.txt").read_bytes() == reference["greedy"]
    assert sorted(os.listdir(tmp_path)) == ["generate-test.txt"]  # the work folder is gone


# -- kill and resume ------------------------------------------------------------------------------
def long_job(pair, *extra):
    """100 sentences one by one in chunks of about 3 batches: 30-odd chunks, so that each of 2
    ranks records some and is in the middle of another whatever the scheduling."""
    return [os.path.join(pair, "data-bin"), "--path", os.path.join(pair, "target.pt"),
            "--gen-subset", "valid", "--beam", "1", "--batch-size", "1", "--chunk-tokens", "30",
            "--rank-threads", "1", *extra]


def test_killed_rank_then_resume_gives_the_uninterrupted_bytes(tiny_pair, tmp_path):
    want = ok(launch(1, long_job(tiny_pair))).stdout
    out = tmp_path / "out"
    work = out / "generate-valid.work"
    args = long_job(tiny_pair, "--results-path", str(out))
    killed = launch(2, args, fault=("kill-rank", "1:1"))
    line = one_error_line(killed, "rank 1 (", "ended without a word", "--resume")
    recorded, total = map(int, re.search(r"(\d+) of (\d+) chunks are recorded", line).groups())
    assert 1 <= recorded < total
    names = os.listdir(work)
    assert len([n for n in names if n.endswith(".json") and n.startswith("chunk-")]) == recorded
    assert any(".tmp-1-" in n for n in names)  # rank 1 died mid-chunk
    assert not (out / "generate-valid.txt").exists()

    again = launch(1, args)  # no --resume: the stopped job is not overwritten
    one_error_line(again, "holds a stopped job", "add --resume")
    changed = launch(1, args + ["--resume", "--nbest", "1", "--beam", "2"])
    one_error_line(changed, "other settings", "--beam 1 -> 2")

    # --inflight-batching changes how a job runs, not what it writes: a resume may add it
    resumed = ok(launch(3, args + ["--resume", "--inflight-batching"]))
    assert f"{recorded} chunks were recorded before --resume" in resumed.stderr.decode()
    assert (out / "generate-valid.txt").read_bytes() == want
    assert not work.exists()


# -- failures -------------------------------------------------------------------------------------
def test_rank_failing_at_start_up_ends_the_job_with_one_line(tiny_pair):
    result = launch(2, args_for(tiny_pair, "greedy"), fault=("fail-rank", "1"))
    one_error_line(result, "rank 1 (", "failed while setting up", "RuntimeError")
    result = launch(2, args_for(tiny_pair, "greedy"), fault=("fail-rank", "1:exit"))
    one_error_line(result, "rank 1 (", "ended without a word")


def test_sigterm_line_survives_the_data_loader_worker_stopped_by_the_same_signal(monkeypatch):
    """torchrun's SIGTERM stops a rank's data-loader workers too, and torch's SIGCHLD handler
    then raises ("DataLoader worker ... is killed") in whatever the rank runs: here, the store
    calls of its own SIGTERM handler. The rank still ends with its line, not silently."""
    import signal

    import torch.distributed as dist

    from fairseq_fast.cli import distributed

    class Store:  # an in-process store; a worker's SIGCHLD arrives during every check
        def __init__(self):
            self.inner = dist.HashStore()

        def __getattr__(self, name):
            return getattr(self.inner, name)

        def check(self, keys):
            os.kill(os.getpid(), signal.SIGCHLD)
            return self.inner.check(keys)

    class Ended(Exception):
        pass

    def end(line, status, after_print=None):
        raise Ended(line, status)

    def worker_failed(signum, frame):  # what torch's DataLoader installs
        raise RuntimeError("DataLoader worker (pid 1) is killed by signal: Terminated.")

    monkeypatch.setattr(distributed, "_end", end)
    monkeypatch.setattr(distributed, "_write_error_file", lambda line: None)
    store = Store()
    ranks = distributed.Ranks(0, 2, store_factory=lambda: store)
    previous = signal.signal(signal.SIGCHLD, worker_failed)
    try:
        with pytest.raises(Ended) as ended:
            ranks._on_signal(signal.SIGTERM, None)
    finally:
        signal.signal(signal.SIGCHLD, previous)
    line, status = ended.value.args
    assert status == 143
    assert line == "fairseq_fast: error: stopped by the launcher (SIGTERM)"


def test_a_rank_answers_sigterm_before_it_registers():
    """Another rank may die as soon as this one is registered (`who/R`): torchrun then sends
    SIGTERM, and only a rank whose handler is already in place ends the job with its line."""
    import signal

    import torch.distributed as dist

    from fairseq_fast.cli import distributed

    seen = {}

    class Store:
        def __init__(self, inner):
            self.inner = inner

        def __getattr__(self, name):
            return getattr(self.inner, name)

        def set(self, key, value):
            if key.startswith("who/"):
                seen[key] = signal.getsignal(signal.SIGTERM)
            return self.inner.set(key, value)

    inner = dist.HashStore()
    ranks = distributed.Ranks(0, 2, store_factory=lambda: Store(inner))
    previous = {s: signal.getsignal(s) for s in (signal.SIGTERM, signal.SIGINT)}
    try:
        ranks.start()
    finally:
        ranks.close()
        for s, handler in previous.items():
            signal.signal(s, handler)
    assert seen == {"who/0": ranks._on_signal}


def test_rank_that_stops_answering_is_named_within_the_timeout(tiny_pair, tmp_path):
    """A rank whose heartbeat stops and which does not exit (its machine gone): torchrun sees
    nothing wrong, rank 0 ends the job after --rank-timeout. Without --results-path the job
    works in the --work-dir given, which the line names for --resume."""
    work = tmp_path / "work"
    result = launch(2, long_job(tiny_pair, "--rank-timeout", "3", "--work-dir", str(work)),
                    fault=("kill-rank", "1:1:hang"), timeout=120)
    one_error_line(result, "rank 1 (", "stopped answering within --rank-timeout 3 s",
                   f"recorded in {work}: the same command with --resume continues")


@pytest.mark.parametrize("case,needle", [
    (["--path", "/nonexistent/target.pt"], "--path /nonexistent/target.pt: no such file"),
    (["--gen-subset", "nonexistent"], "Dataset not found: nonexistent"),
    (["--results-path", "FILE"], "is a file, not a folder"),
    (["--work-dir", "/proc/nonexistent"], "work folder /proc/nonexistent"),
])
def test_wrong_paths_fail_before_generating(tiny_pair, tmp_path, case, needle):
    case = [str(tmp_path / "file") if c == "FILE" else c for c in case]
    (tmp_path / "file").write_text("")
    result = launch(1, args_for(tiny_pair, "greedy") + case)
    assert result.returncode == 2
    one_error_line(result, needle)
    assert b"H-" not in result.stdout


def test_wrong_data_folder_with_many_ranks_is_one_line(tiny_pair):
    args = args_for(tiny_pair, "greedy")
    args[0] = "/nonexistent/data-bin"
    one_error_line(launch(2, args), "data folder /nonexistent/data-bin: no such folder")


# -- pieces ---------------------------------------------------------------------------------------
def test_plan_cuts_whole_batches_by_tokens_and_queues_longest_first():
    import numpy as np

    from fairseq_fast.cli import chunks

    batches = [np.arange(i * 4, i * 4 + 4) for i in range(6)]
    lengths = np.repeat([2, 3, 5, 8, 13, 21], 4)  # sorted by length, as fairseq's batches are
    costs = chunks.batch_tokens(batches, lambda idx: lengths[idx])
    assert costs.tolist() == [8, 12, 20, 32, 52, 84]
    plan = chunks.plan(batches, costs, 30)
    assert [(c.first, c.end, c.tokens) for c in plan] == [(0, 3, 40), (3, 4, 32), (4, 5, 52),
                                                         (5, 6, 84)]
    assert sum(c.sentences for c in plan) == 24
    assert chunks.queue(plan) == [3, 2, 1, 0]
    assert chunks.queue(plan, done=[2]) == [3, 1, 0]
    assert chunks.automatic_chunk_tokens(costs, 2) == 208 // 32


def test_merged_bleu_statistics_equal_one_scorer():
    """Chunks' BLEU counts, added up, give one scorer's result over all sentences; the chunks
    of a string scorer (sacrebleu) carry their pairs."""
    import numpy as np
    from fairseq.scoring import bleu

    from fairseq_fast.cli import chunks

    rng = np.random.default_rng(0)
    pairs = []
    for _ in range(50):
        ref = rng.integers(4, 30, rng.integers(3, 12)).astype(np.int32)
        hyp = ref.copy()
        hyp[rng.integers(0, len(hyp))] = 4  # one word wrong
        pairs.append((ref, hyp[: len(hyp) - rng.integers(0, 2)]))
    new = lambda: bleu.Scorer(bleu.BleuConfig(pad=1, eos=2, unk=3))  # noqa: E731
    whole, merged = chunks.ScoreStats(new), new()
    whole.add(pairs)
    for part in (pairs[:7], pairs[7:30], pairs[30:]):
        stats = chunks.ScoreStats(new)
        stats.add(part)
        chunks.add_state(merged, stats.state())
    assert merged.result_string() == whole.scorer.result_string()
    assert merged.score() > 0

    strings = chunks.ScoreStats(lambda: bleu.SacrebleuScorer(bleu.SacrebleuConfig()))
    strings.add([("a b c", "a b d")])
    assert strings.state() == {"pairs": [["a b c", "a b d"]]}
