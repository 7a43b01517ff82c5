"""Ctrl-C, a full disk and the thread count of the command-line tools: one line from the plugin,
a non-zero exit, nothing left half-written.

Ctrl-C is sent as a terminal sends it: SIGINT to the whole process group (the launcher, the
ranks, their data-loader workers), once the run has started writing. Under torchrun the agent
forwards SIGINT to the ranks a second time; torchrun itself then prints its own traceback
(SignalException) and exits 1, which the plugin does not control. No test here times the runs:
a run that does not end within HANG_S is a hang; the seconds each run took to end are printed
(`pytest -s`).
"""
import glob
import io
import os
import re
import signal
import subprocess
import sys
import threading
import time

import pytest

from fairseq_fast.cli import interactive_input
from fairseq_fast.cli.output import guarded
from processes import ctrl_c_reaches_python, watchdog, with_stacks
from test_cli import BIN, USER_DIR, assert_one_line_error
from test_distributed import TORCHRUN, env, launch, ok, one_error_line

HANG_S = 15  # a run still going this long after Ctrl-C hangs
TRIES = 4


def start(cmd, stderr, extra_env=None, **kwargs):
    return subprocess.Popen(cmd, stderr=stderr, env=with_stacks(env(extra_env)),
                            start_new_session=True, preexec_fn=ctrl_c_reaches_python, **kwargs)


def ctrl_c(proc):
    """SIGINT to the process group; the seconds until it ended (None: it hung and was killed)."""
    os.killpg(proc.pid, signal.SIGINT)
    start_s = time.monotonic()
    try:
        proc.wait(timeout=HANG_S)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        return None
    return time.monotonic() - start_s


# -- torchrun ----------------------------------------------------------------------------------
def torchrun_job(pair, work):
    """3,000 sentences in batches of 16 and chunks of about one batch: nearly 200 chunks, so that
    the job is still generating when its first chunks are recorded."""
    return [os.path.join(pair, "data-bin"), "--path", os.path.join(pair, "target.pt"),
            "--gen-subset", "train", "--beam", "1", "--batch-size", "16", "--chunk-tokens",
            "150", "--work-dir", str(work)]


def test_ctrl_c_under_torchrun_is_one_line_every_time_and_the_job_resumes(tiny_pair, tmp_path):
    """Ctrl-C reaches torchrun, both ranks and their data-loader workers (forks of the ranks,
    which inherit the ranks' signal handlers): one line, from one process, every time, and the
    work folder continues with --resume. The ranks run one torch thread each, as an explicit
    OMP_NUM_THREADS=1 asks."""
    seconds, lines = [], []
    for i in range(TRIES):
        work = tmp_path / f"work{i}"
        stderr = open(tmp_path / f"stderr{i}.txt", "w+b")
        proc = start([TORCHRUN, "--standalone", "--nproc-per-node", "2", "-m",
                      "fairseq_fast.generate", *torchrun_job(tiny_pair, work)], stderr,
                     {"OMP_NUM_THREADS": "1"}, stdout=subprocess.DEVNULL)
        recorded = 1 + i % 3  # chunks recorded before Ctrl-C: 1, 2 or 3
        while len(glob.glob(str(work / "chunk-*.json"))) < recorded and proc.poll() is None:
            time.sleep(0.02)
        assert proc.poll() is None, f"run {i} ended before Ctrl-C"
        took = ctrl_c(proc)
        stderr.seek(0)
        result = subprocess.CompletedProcess(proc.args, proc.returncode, b"", stderr.read())
        assert took is not None, f"run {i}: still running {HANG_S} s after Ctrl-C: " \
                                 + result.stderr.decode()[-3000:]
        seconds.append(took)
        lines.append(one_error_line(result, "interrupted (Ctrl-C)", "--resume", str(work)))
        if i == 0:
            assert "2 rank(s), 1 torch thread(s) each (OMP_NUM_THREADS)" in \
                result.stderr.decode()
    print(f"\nCtrl-C under torchrun, seconds to end: {', '.join(f'{s:.2f}' for s in seconds)}")

    recorded, total = map(int, re.search(r"(\d+) of (\d+) chunks are recorded",
                                         lines[0]).groups())
    assert 1 <= recorded < total
    resumed = ok(launch(1, torchrun_job(tiny_pair, tmp_path / "work0") + ["--resume",
                                                                          "--rank-threads", "1"]))
    assert f"{recorded} chunks were recorded before --resume" in resumed.stderr.decode()
    out = resumed.stdout.decode()
    assert sorted(int(i) for i in re.findall(r"^H-(\d+)\t", out, flags=re.M)) == \
        list(range(3000))
    assert out.splitlines()[-1].startswith("Generate train with beam=1: BLEU4 = ")
    assert not (tmp_path / "work0").exists()


def test_a_rank_still_waiting_for_go_already_names_the_work_folder(tmp_path):
    """Rank 0 starts generating as soon as it publishes "go", and may record chunks before a
    slower rank has read it; a Ctrl-C that this rank answers first must still say how to
    resume."""
    from types import SimpleNamespace

    from fairseq_fast import generate

    plan = {"work_dir": str(tmp_path), "chunks": [[0], [1], [2]], "output": None, "attempt": 1}
    seen = []

    class Rank1:
        rank = 1
        note = staticmethod(lambda: "")

        def receive(self, name):
            if name == "go":  # Ctrl-C here: the line this rank would print
                seen.append("interrupted (Ctrl-C)" + self.note())
                return 0.0
            return plan

        def load_who(self):
            pass

        def gather(self, name, value):
            return [True, value]

    job = SimpleNamespace(args=SimpleNamespace(work_dir=None))
    generate.agree(job, Rank1(), None)
    assert "the same command with --resume" in seen[0], seen
    assert f"0 of 3 chunks are recorded in {tmp_path}" in seen[0], seen


def test_a_ranks_forked_worker_leaves_the_signal_to_the_rank():
    """A data-loader worker is a fork of its rank and inherits the rank's signal handler (and its
    store connection): the handler does nothing there, where it would end the worker with the
    job's line (a second line, or a store connection used by two processes at once)."""
    import torch.distributed as dist

    from fairseq_fast.cli import distributed

    ranks = distributed.Ranks(0, 2, store_factory=dist.HashStore)
    pid = os.fork()
    if pid == 0:  # the worker: answering would end it here with the line and status 130
        try:
            ranks._on_signal(signal.SIGINT, None)
        except BaseException:  # noqa: BLE001
            os._exit(3)
        os._exit(0)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0


# -- fairseq-generate / fairseq-interactive, 0 post-processing workers (the default) -------------
SENTENCE_LINE = re.compile(r"^[STHDPW]-\d+\t")


def interrupted(proc, stdout, stderr) -> str:
    """Ctrl-C to a tool that has printed `stdout` so far: it ends with the plugin's one line and
    status 130; returns everything it printed."""
    os.killpg(proc.pid, signal.SIGINT)
    stdout += proc.stdout.read()
    proc.wait(timeout=HANG_S)
    stderr.seek(0)
    result = subprocess.CompletedProcess(proc.args, proc.returncode, stdout, stderr.read())
    assert_one_line_error(result, "interrupted (Ctrl-C)")
    assert result.returncode == 130
    assert "KeyboardInterrupt" not in result.stderr
    return stdout


def test_ctrl_c_in_fairseq_generate_without_workers(tiny_pair, tmp_path):
    """Ctrl-C while fairseq's own loop prints (no --postprocess-workers): one line and status 130,
    as with workers, and the output ends with the last complete line printed."""
    stderr = open(tmp_path / "stderr.txt", "w+")
    proc = start([os.path.join(BIN, "fairseq-generate"), "--user-dir", USER_DIR,
                  os.path.join(tiny_pair, "data-bin"), "--path",
                  os.path.join(tiny_pair, "target.pt"), "--gen-subset", "train", "--beam", "1",
                  "--batch-size", "1"], stderr, stdout=subprocess.PIPE, text=True)
    with watchdog(proc):
        first = proc.stdout.readline()
        assert first.startswith("S-"), first
        stdout = interrupted(proc, first, stderr)
    assert stdout.endswith("\n")
    assert all(SENTENCE_LINE.match(line) for line in stdout.splitlines()), stdout[-2000:]
    assert len(stdout.splitlines()) < 5 * 3000


def test_the_guarded_output_drops_half_a_line_at_ctrl_c_and_writes_it_at_the_end():
    """print() writes a line's text, then its newline: a Ctrl-C between the two leaves half a
    line, which flush_lines (the Ctrl-C path) drops and flush (the normal end) writes."""
    out = io.StringIO()
    stream = guarded(out)
    print("S-1\tuno", file=stream)
    stream.write("H-1\t-0.5\tdo")  # print's first write; Ctrl-C before its "\n"
    stream.flush_lines()
    assert out.getvalue() == "S-1\tuno\n"
    out = io.StringIO()
    stream = guarded(out)
    stream.write("a\nb")
    stream.write("c")
    assert out.getvalue() == "a\n"
    stream.flush()
    assert out.getvalue() == "a\nbc"


def test_ctrl_c_in_fairseq_interactive_without_workers(tiny_pair, tmp_path):
    """Ctrl-C while fairseq-interactive waits for the next line: one line and status 130; the
    translations of the lines before it were written."""
    with open(os.path.join(tiny_pair, "raw", "test.src")) as f:
        sources = f.read().splitlines()[:3]
    stderr = open(tmp_path / "stderr.txt", "w+")
    proc = start([os.path.join(BIN, "fairseq-interactive"), "--user-dir", USER_DIR,
                  os.path.join(tiny_pair, "data-bin"), "--path",
                  os.path.join(tiny_pair, "target.pt"), "--beam", "1", "--source-lang", "src",
                  "--target-lang", "tgt"], stderr, stdin=subprocess.PIPE,
                 stdout=subprocess.PIPE, text=True)
    with watchdog(proc):
        proc.stdin.write("".join(s + "\n" for s in sources))
        proc.stdin.flush()
        stdout = ""
        while not re.search(r"^P-2\t", stdout, flags=re.M):
            line = proc.stdout.readline()
            if not line:
                stderr.seek(0)
                raise AssertionError(f"no answer to the third line: {stdout}{stderr.read()}")
            stdout += line
        stdout = interrupted(proc, stdout, stderr)  # the session waits for a 4th line
    assert re.findall(r"^H-(\d+)\t", stdout, flags=re.M) == ["0", "1", "2"]


def test_a_signal_that_reaches_another_thread_ends_the_wait_for_stdin():
    """The kernel hands Ctrl-C to any of the process's threads (torch's OpenMP workers, a data
    loader's): one that reaches another thread than the main one, which waits for the next line,
    still ends the wait, before the line that other thread writes HANG_S later."""
    class Stopped(Exception):
        pass

    def stop(signum, frame):
        raise Stopped

    previous = signal.signal(signal.SIGUSR1, stop)
    read_end, write_end = os.pipe()
    done, late = threading.Event(), threading.Event()

    def other_thread():
        time.sleep(0.2)
        signal.pthread_kill(threading.get_ident(), signal.SIGUSR1)
        if not done.wait(HANG_S):  # the wait goes on: a line ends it
            late.set()
            os.write(write_end, b"a line after the signal\n")

    thread = threading.Thread(target=other_thread, daemon=True)
    thread.start()
    try:
        with pytest.raises(Stopped):
            for line in interactive_input._stdin_lines("utf-8", fd=read_end):
                pytest.fail(f"read {line!r} before the signal's handler ran")
        assert not late.is_set(), "the signal did not end the wait for stdin"
    finally:
        done.set()
        thread.join()
        signal.signal(signal.SIGUSR1, previous)
        os.close(read_end)
        os.close(write_end)


def test_stdin_is_read_as_sys_stdin_reads_it():
    """Universal newlines (a \\r\\n split between two reads too), undecodable bytes kept as
    surrogate escapes, a last line without a newline, and reads that end inside a character."""
    data = "uno\r\ndos\rtr\u00e9s\n\ncuatro\r".encode() + b"\xffcinco\r\nseis"
    read_end, write_end = os.pipe()

    def writer():
        for i in range(len(data)):  # a byte at a time: every read ends somewhere else
            os.write(write_end, data[i:i + 1])
            time.sleep(0.001)
        os.close(write_end)

    thread = threading.Thread(target=writer)
    thread.start()
    try:
        lines = list(interactive_input._stdin_lines("utf-8", fd=read_end))
    finally:
        thread.join()
        os.close(read_end)
    expected = list(io.TextIOWrapper(io.BytesIO(data), encoding="utf-8",
                                     errors="surrogateescape"))
    assert lines == expected
    assert len(lines) == 7


# -- a rank's traceback file on a full disk -------------------------------------------------------
def test_traceback_file_that_cannot_be_written_is_not_left_behind(tmp_path):
    """A bug while generating: its traceback goes to rankR-traceback.txt in the work folder and
    the line names the file. Where writing it fails (a full disk: /dev/full opens, and every
    write fails with ENOSPC), no empty or partial file stays and the line names none."""
    from fairseq_fast.cli import chunks
    from fairseq_fast.cli.distributed import Ranks
    from fairseq_fast.generate import _rank_failure

    try:
        raise RuntimeError("boom")
    except RuntimeError as e:
        error = e
    folder = chunks.WorkFolder(str(tmp_path))
    path = tmp_path / "rank0-traceback.txt"
    line = _rank_failure(Ranks.solo(), error, folder)
    assert line == f"failed while generating: RuntimeError: boom (traceback in {path})"
    assert 'raise RuntimeError("boom")' in path.read_text()

    path.unlink()
    os.symlink("/dev/full", path)
    line = _rank_failure(Ranks.solo(), error, folder)
    assert line == "failed while generating: RuntimeError: boom"
    assert os.listdir(tmp_path) == []


# -- torch threads ----------------------------------------------------------------------------
def test_explicit_omp_num_threads_sets_the_threads(tiny_pair):
    """python -m fairseq_fast.generate without --rank-threads takes an explicit OMP_NUM_THREADS
    (rather than the CPUs it may use); --rank-threads still decides over it."""
    from fairseq_fast.generate import _cpus

    n = 1 if _cpus() != 1 else 2  # not what the CPUs would give
    args = [os.path.join(tiny_pair, "data-bin"), "--path", os.path.join(tiny_pair, "target.pt"),
            "--gen-subset", "test", "--beam", "1", "--batch-size", "8"]
    result = ok(launch(1, args, {"OMP_NUM_THREADS": str(n)}))
    assert f"1 rank(s), {n} torch thread(s) each (OMP_NUM_THREADS)" in result.stderr.decode()
    assert result.stdout.decode().count("\nH-") + result.stdout.startswith(b"H-") == 40


@pytest.mark.parametrize("launcher_had_it", [True, False])
def test_torchruns_default_omp_num_threads_is_not_explicit(monkeypatch, launcher_had_it):
    """torchrun sets OMP_NUM_THREADS=1 for its processes where it was not set: a rank tells that
    default from the user's by the launcher's environment as it was started."""
    from fairseq_fast.generate import omp_threads

    launcher_env = {k: v for k, v in os.environ.items() if k != "OMP_NUM_THREADS"}
    if launcher_had_it:
        launcher_env["OMP_NUM_THREADS"] = "1"
    launcher = subprocess.Popen([sys.executable, "-c", "import time; print(flush=True); "
                                 "time.sleep(60)"], env=launcher_env, stdout=subprocess.PIPE)
    try:
        launcher.stdout.readline()  # running: its /proc environ reads as it started
        monkeypatch.setenv("OMP_NUM_THREADS", "1")
        monkeypatch.setenv("TORCHELASTIC_RUN_ID", "test")
        assert omp_threads(launcher.pid) == (1 if launcher_had_it else 0)
        monkeypatch.delenv("TORCHELASTIC_RUN_ID")  # another launcher: the value is the user's
        assert omp_threads(launcher.pid) == 1
        monkeypatch.setenv("OMP_NUM_THREADS", "0")
        assert omp_threads(launcher.pid) == 0
    finally:
        launcher.kill()
        launcher.wait()


def test_a_launcher_environment_that_reads_empty_cannot_tell(monkeypatch):
    """/proc/PID/environ reads empty for a process still in exec: the value counts as the
    user's, as when the file cannot be read."""
    import io

    from fairseq_fast import generate

    monkeypatch.setenv("OMP_NUM_THREADS", "3")
    monkeypatch.setenv("TORCHELASTIC_RUN_ID", "test")
    monkeypatch.setattr(generate, "open", lambda *a, **k: io.BytesIO(b""), raising=False)
    assert generate.omp_threads(1) == 3
    monkeypatch.setattr(generate, "open", lambda *a, **k: io.BytesIO(b"PATH=/bin\0"),
                        raising=False)
    assert generate.omp_threads(1) == 0
