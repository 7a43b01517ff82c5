"""The ranks of one `python -m fairseq_fast.generate` job: who they are, what they tell each
other, and how a failure anywhere ends the job with one line.

torchrun (or any launcher that sets RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE, MASTER_ADDR
and MASTER_PORT) starts the ranks. They exchange only small records, through torch.distributed's
key-value store: the TCPStore torchrun already runs for its rendezvous
(TORCHELASTIC_USE_AGENT_STORE), or one rank 0 hosts under another launcher. Text never crosses
between ranks: it goes through the work folder (chunks.py).

    who/R          "host pid" of rank R, set when it starts
    beat/R         a counter rank R's heartbeat thread raises every few seconds
    NAME/R         what rank R reports in round NAME (`gather`): its start-up status, ...
    NAME           what rank 0 announces (`publish`): the plan, "go"
    next           the work queue: add("next", 1) hands out the next chunk
    done/R         rank R has finished its share (it may exit)
    abort          the one line that ends the job: the rank that sets it first prints it

No rank ever waits inside a collective: every wait polls the store and watches heartbeats (rank 0
watches every rank, the others watch rank 0), so a rank that stops, here or on another machine, is
named within --rank-timeout seconds and nothing hangs. On one machine torchrun notices a dead rank
first and sends the others SIGTERM: their handler names the rank whose process is gone (the
processes of a machine's ranks are visible to each other).

With WORLD_SIZE 1 (a plain `python -m fairseq_fast.generate`, or torchrun with one process)
there is no store: `Ranks.solo()` has the same methods, and an abort is an ordinary one-line error.
"""
import json
import os
import signal
import socket
import sys
import threading
import time
from datetime import timedelta
from typing import Any, Callable, List, Optional

from fairseq_fast import errors

POLL_S = 0.05  # how often a wait looks at the store


class Ranks:
    def __init__(self, rank: int = 0, world: int = 1, local_rank: int = 0, local_world: int = 1,
                 store_factory: Optional[Callable[[], Any]] = None, timeout_s: float = 120.0):
        self.rank, self.world = rank, world
        self.local_rank, self.local_world = local_rank, local_world
        self.host = socket.gethostname()
        self.timeout_s = timeout_s
        self.note: Callable[[], str] = lambda: ""  # appended to an abort's line (the job's state)
        self._factory = store_factory
        self.store = store_factory() if store_factory is not None else None
        self._local = {}  # solo: what publish/gather/claim keep
        self._seen = {}  # rank -> (beat value, when it last changed)
        self._who = {}  # rank -> (host, pid)
        self._aborting = False
        self._signalled = False  # a signal handler runs: a second signal leaves the end to it
        self._pid = os.getpid()  # the process whose handlers these are (a fork inherits them)
        self._stopped = threading.Event()
        self._beating: Optional[threading.Thread] = None

    # -- construction ---------------------------------------------------------------------------
    @classmethod
    def solo(cls) -> "Ranks":
        return cls()

    @classmethod
    def from_env(cls, timeout_s: float) -> "Ranks":
        """The ranks torchrun describes in the environment; solo without it or with one rank."""
        world = int(os.environ.get("WORLD_SIZE", "1"))
        if world <= 1:
            return cls.solo()
        rank = int(os.environ["RANK"])
        addr, port = os.environ["MASTER_ADDR"], int(os.environ["MASTER_PORT"])
        # torchrun's agent hosts the store; under another launcher rank 0 does
        hosted = rank == 0 and os.environ.get("TORCHELASTIC_USE_AGENT_STORE") != "True"
        prefix = "fairseq_fast/{}/{}".format(os.environ.get("TORCHELASTIC_RUN_ID", "job"),
                                             os.environ.get("TORCHELASTIC_RESTART_COUNT", "0"))
        server = []

        def connect():
            import torch.distributed as dist

            wait = timedelta(seconds=timeout_s)
            if hosted and not server:
                server.append(dist.TCPStore(addr, port, world, True, wait,
                                            wait_for_workers=False))
                return dist.PrefixStore(prefix, server[0])
            return dist.PrefixStore(prefix, dist.TCPStore(addr, port, None, False, wait))

        try:
            return cls(rank, world, int(os.environ.get("LOCAL_RANK", "0")),
                       int(os.environ.get("LOCAL_WORLD_SIZE", "1")), connect, timeout_s)
        except Exception as e:  # noqa: BLE001 (no store: nothing to coordinate through)
            if int(os.environ.get("LOCAL_RANK", "0")) == 0:
                sys.stderr.write(f"fairseq_fast: error: rank {rank} cannot reach the job's store "
                                 f"at {addr}:{port}: {e}\n")
            os._exit(1)

    @property
    def solo_run(self) -> bool:
        return self.store is None

    def describe(self, rank: Optional[int] = None) -> str:
        """'rank R (host, pid P)' for messages ('rank R' while its record is unknown)."""
        rank = self.rank if rank is None else rank
        if rank == self.rank:
            return f"rank {rank} ({self.host}, pid {os.getpid()})"
        if rank in self._who:
            host, pid = self._who[rank]
            return f"rank {rank} ({host}, pid {pid})"
        return f"rank {rank}"

    def load_who(self) -> None:
        """Every rank's host and pid (each registered before it reported its start-up)."""
        if not self.solo_run:
            for r, value in enumerate(self.store.multi_get([f"who/{r}"
                                                            for r in range(self.world)])):
                host, pid = value.decode().rsplit(" ", 1)
                self._who[r] = (host, int(pid))

    # -- start and stop -------------------------------------------------------------------------
    def start(self) -> None:
        """Register, start the heartbeat, take over SIGTERM and Ctrl-C (several ranks only)."""
        if self.solo_run:
            return
        signal.signal(signal.SIGTERM, self._on_signal)  # before `who`: see wait_registered
        signal.signal(signal.SIGINT, self._on_signal)
        self.store.set(f"who/{self.rank}", f"{self.host} {os.getpid()}")
        self.store.add(f"beat/{self.rank}", 1)
        beat_store = self._factory()  # its own connection: the main thread uses the other
        self._beating = threading.Thread(target=self._heartbeat, args=(beat_store,),
                                         daemon=True, name="fairseq_fast-heartbeat")
        self._beating.start()

    def wait_registered(self) -> None:
        """Until every rank has registered, and so answers torchrun's SIGTERM with its line (a
        rank still importing when another dies is stopped by SIGTERM's default action)."""
        if not self.solo_run:
            self._wait([f"who/{r}" for r in range(self.world)], watch=[])

    def close(self) -> None:
        """Stop the heartbeat (before the interpreter finalises: a daemon thread inside a
        store call then could abort the process)."""
        self._stopped.set()
        if self._beating is not None and self._beating is not threading.current_thread():
            self._beating.join(10)

    def finish(self, record: dict) -> None:
        """This rank's share is done: `record` goes to rank 0; it no longer needs watching."""
        if self.solo_run:
            self._local["done/0"] = record
            return
        self.store.set(f"done/{self.rank}", json.dumps(record))
        if self.rank != 0:
            self.close()

    # -- rounds ---------------------------------------------------------------------------------
    def gather(self, name: str, value) -> Optional[List]:
        """Every rank reports `value`; rank 0 gets them all (in rank order), the others None."""
        if self.solo_run:
            return [value]
        self.store.set(f"{name}/{self.rank}", json.dumps(value))
        if self.rank != 0:
            return None
        keys = [f"{name}/{r}" for r in range(self.world)]
        self._wait(keys, watch=range(1, self.world))
        return [json.loads(v) for v in self.store.multi_get(keys)]

    def publish(self, name: str, value) -> None:
        """Rank 0 announces `value` to every rank (`receive`)."""
        if self.solo_run:
            self._local[name] = value
        else:
            self.store.set(name, json.dumps(value))

    def receive(self, name: str):
        if self.solo_run:
            return self._local[name]
        self._wait([name], watch=[0])
        return json.loads(self.store.get(name))

    def claim(self) -> int:
        """The next position in the work queue (shared by every rank)."""
        if self.solo_run:
            self._local["next"] = self._local.get("next", 0) + 1
            return self._local["next"] - 1
        return self.store.add("next", 1) - 1

    def wait_done(self) -> List[dict]:
        """Rank 0: every rank's `finish` record, once all have finished."""
        if self.solo_run:
            return [self._local["done/0"]]
        keys = [f"done/{r}" for r in range(self.world)]
        self._wait(keys, watch=range(1, self.world))
        return [json.loads(v) for v in self.store.multi_get(keys)]

    # -- ending the job ---------------------------------------------------------------------------
    def abort(self, message: str, status: int = 1, store=None) -> None:
        """End the job with one line. The first rank to call this prints it (and puts it in
        torchrun's error file); every other rank exits without a word. Never returns. `store`:
        the connection of the calling thread (the heartbeat thread has its own)."""
        if self._aborting:  # a signal arrived while this rank was already ending the job
            return
        self._aborting = True
        self._stopped.set()
        line = f"fairseq_fast: error: {message}"
        if self.solo_run:
            _end(line, status)
        store = store or self.store
        try:
            record = json.dumps({"rank": self.rank, "line": line, "status": status})
            current = json.loads(store.compare_set("abort", "", record))
        except Exception:  # noqa: BLE001 (the store is gone: speak for the local ranks only)
            _end(line if self.local_rank == 0 else None, status)
        if current["rank"] != self.rank:
            self._quiet_exit(current, store)
        _write_error_file(line)
        _end(line, status, after_print=lambda: store.set("abort_printed", "1"))

    def _quiet_exit(self, current, store=None) -> None:
        """Another rank ends the job: let it print first (the launcher stops the job as soon
        as a rank exits), then leave."""
        store = store or self.store
        self._aborting = True
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline:
            try:
                if store.check(["abort_printed"]):
                    break
            except Exception:  # noqa: BLE001
                break
            time.sleep(POLL_S)
        _end(None, current.get("status", 1))

    def _aborted(self, store=None):
        """Another rank's abort record, or None."""
        store = store or self.store
        if store.check(["abort"]):
            current = json.loads(store.get("abort"))
            if current["rank"] != self.rank:
                return current
        return None

    def _on_signal(self, signum, frame) -> None:
        """SIGTERM: torchrun stops the job because a rank failed (or torchrun itself was
        stopped); Ctrl-C reaches every rank of a terminal's job, and torchrun then sends the
        ranks SIGINT again. Only the rank's own process answers: its data-loader workers are
        forks that inherit this handler, and the rank ends them."""
        if os.getpid() != self._pid or self._aborting or self._signalled:
            return
        self._signalled = True
        if hasattr(signal, "SIGCHLD"):
            # the launcher's signal stops this rank's data-loader workers too, and torch's
            # SIGCHLD handler would raise "DataLoader worker ... is killed" inside the store
            # calls below; this process is ending, its workers with it
            signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        try:
            current = self._aborted()
            if current is not None:
                self._quiet_exit(current)
            self.store.set(f"term/{self.rank}", "1")
            dead = self._gone_here()
        except Exception:  # noqa: BLE001 (the store is gone with the launcher)
            _end(None, 128 + signum)
        if signum == signal.SIGINT:
            self.abort("interrupted (Ctrl-C)" + self.note(), 130)
        if dead:
            self.abort(f"{self.describe(dead[0])} ended without a word (killed, out of memory "
                       f"or crashed); torchrun stopped the other ranks" + self.note(), 1)
        self.abort("stopped by the launcher (SIGTERM)" + self.note(), 143)

    def _gone_here(self) -> List[int]:
        """Ranks on the local host whose process has ended without finishing its share or being
        told to stop."""
        gone = []
        for r in range(self.world):
            if r == self.rank:
                continue
            host, pid = self._whois(r)
            if host != self.host or pid is None:
                continue
            if self.store.check([f"term/{r}"]) or \
                    (r != 0 and self.store.check([f"done/{r}"])):  # rank 0 exits last
                continue
            if not _alive(pid):
                gone.append(r)
        return gone

    def _whois(self, rank):
        if rank not in self._who:
            if not self.store.check([f"who/{rank}"]):
                return None, None
            host, pid = self.store.get(f"who/{rank}").decode().rsplit(" ", 1)
            self._who[rank] = (host, int(pid))
        return self._who[rank]

    # -- liveness ---------------------------------------------------------------------------------
    def _wait(self, keys, watch) -> None:
        """Until every key exists; ends the job when a watched rank stops or another aborts."""
        while not self.store.check(keys):
            current = self._aborted()
            if current is not None:
                self._quiet_exit(current)
            self._check_alive(self.store, watch)
            time.sleep(POLL_S)

    def _check_alive(self, store, ranks) -> None:
        now = time.monotonic()
        for r in ranks:
            if r == self.rank or store.check([f"done/{r}"]):
                continue
            beat = int(store.get(f"beat/{r}")) if store.check([f"beat/{r}"]) else 0
            last, since = self._seen.get(r, (None, now))
            if beat != last:
                self._seen[r] = (beat, now)
            elif now - since > self.timeout_s:
                what = ("did not start" if beat == 0 else "stopped answering")
                self.abort(f"{self.describe(r)} {what} within --rank-timeout "
                           f"{self.timeout_s:g} s (killed, hung, or its machine is gone)"
                           + self.note(), 1, store)

    def _heartbeat(self, store) -> None:
        interval = max(0.2, min(2.0, self.timeout_s / 10))
        watch = range(self.world) if self.rank == 0 else [0]
        while not self._stopped.wait(interval):
            try:
                store.add(f"beat/{self.rank}", 1)
                current = self._aborted(store)
                if current is not None:
                    self._quiet_exit(current, store)
                self._check_alive(store, watch)
            except Exception as e:  # noqa: BLE001 (the store went away with its launcher)
                if self._aborting or self._stopped.is_set():
                    return
                self._aborting = True
                _end(f"fairseq_fast: error: {self.describe()} lost the job's store "
                     f"({type(e).__name__}: {e}); the launcher that hosts it has stopped"
                     if self.local_rank == 0 else None, 1)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"  # a zombie has ended
    except OSError:
        return True


def _write_error_file(line: str) -> None:
    """torchrun's summary of a failed job shows a rank's error file as its 'traceback'."""
    path = os.environ.get("TORCHELASTIC_ERROR_FILE")
    if not path:
        return
    try:
        with open(path, "w") as f:
            json.dump({"message": line, "timestamp": int(time.time())}, f)
    except OSError:
        pass


def _end(line: Optional[str], status: int, after_print: Optional[Callable] = None) -> None:
    """Print `line` (if any) and leave now, quietly: child processes (data-loader and
    post-processing workers) killed, nothing finalised (errors.py says why)."""
    errors._quiet_the_process()
    if line is not None:
        sys.stderr.write(line + "\n")
        sys.stderr.flush()
    if after_print is not None:
        try:
            after_print()
        except Exception:  # noqa: BLE001
            pass
    errors._exit_now(status)
