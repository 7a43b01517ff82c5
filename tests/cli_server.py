"""fairseq's command-line tools run in forks of one process that has imported torch and fairseq.

Importing torch and fairseq takes seconds, and the CLI tests start a tool about two hundred times.
`python tests/cli_server.py` imports them once (not the plugin: a run gets it only from its own
--user-dir, as a real run does), then serves requests: one JSON line each on its stdin, naming the
console script (or a module of the plugin, as `python -m` runs it), its arguments, the
environment, the working directory and files for the three standard streams. For each it forks a
child that takes on that environment and those streams and runs the script or module as
`__main__`, as the interpreter would. The child ends the way a real
tool's process ends: SystemExit, an uncaught exception through sys.excepthook, threads joined,
atexit handlers run. The server answers with the child's pid, then its exit status.

A command is a console script, `python SCRIPT` or `python -m fairseq_fast...`. Not served, so
run as real processes by `Tools.run` (test_cli.run): other `python -m` runs (the server has
imported fairseq's modules, which `-m` would run a second copy of), `python -c` runs, and runs
whose environment changes a variable that the interpreter, torch or OpenMP read as they start.
"""
import json
import os
import re
import runpy
import select
import subprocess
import sys
import tempfile
import time

# Read when the interpreter or a native library starts, so a fork cannot take them on.
STARTUP_VARIABLES = re.compile(r"(PYTHON|OMP_|GOMP_|KMP_|MKL_|OPENBLAS_|ATEN_|LD_|CUDA_|TORCH_)")
READ_LATER = {"TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD", "TORCH_FORCE_WEIGHTS_ONLY_LOAD"}


def _serve():
    """Answer requests until stdin closes; return the request in a child (never in the server)."""
    requests = os.fdopen(os.dup(0), "rb", buffering=0)
    answers = os.fdopen(os.dup(1), "wb", buffering=0)
    null = os.open(os.devnull, os.O_RDWR)
    os.dup2(null, 0)
    os.dup2(null, 1)
    for line in iter(requests.readline, b""):
        request = json.loads(line)
        pid = os.fork()
        if pid == 0:
            requests.close()
            answers.close()
            return request
        answers.write(json.dumps({"pid": pid}).encode() + b"\n")
        _, status = os.waitpid(pid, 0)
        answers.write(json.dumps({"code": os.waitstatus_to_exitcode(status)}).encode() + b"\n")
    sys.exit(0)


def _become(request):
    """Take on the request's environment, directory, streams and argv."""
    os.environ.clear()
    os.environ.update(request["env"])
    os.chdir(request["cwd"])
    for fd, (path, flags) in enumerate([(request["stdin"], os.O_RDONLY),
                                        (request["stdout"], os.O_WRONLY | os.O_TRUNC),
                                        (request["stderr"], os.O_WRONLY | os.O_TRUNC)]):
        opened = os.open(path, flags)
        os.dup2(opened, fd)
        os.close(opened)
    sys.argv = list(request["argv"])
    sys.path[0] = request["cwd"] if request.get("module") else os.path.dirname(sys.argv[0])


class Tools:
    """The pytest side: start the server once, send it runs, fall back to real processes."""

    def __init__(self):
        self.server = None
        self.base_env = None

    def _start(self):
        self.base_env = dict(os.environ)
        self.server = subprocess.Popen([sys.executable, os.path.abspath(__file__)],
                                       stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                       stderr=subprocess.DEVNULL)

    def servable(self, env):
        base = self.base_env if self.base_env is not None else os.environ
        changed = {k for k in set(env) | set(base) if env.get(k) != base.get(k)}
        return not any(STARTUP_VARIABLES.match(k) and k not in READ_LATER for k in changed)

    def run(self, cmd, input=None, env=None, timeout=None, text=True):
        """subprocess.run(cmd, input=input, capture_output=True, text=text, env=env,
        timeout=timeout)."""
        env = dict(os.environ if env is None else env)
        argv = list(cmd[1:] if cmd[0] == sys.executable else cmd)
        module = argv[1] if argv[0] == "-m" and len(argv) > 1 else None
        if module is not None and module.split(".")[0] != "fairseq_fast":
            module = None
        if not self.servable(env) or (argv[0].startswith("-") and module is None):
            return subprocess.run(cmd, input=input, capture_output=True, text=text, env=env,
                                  timeout=timeout)
        if module is not None:
            argv = argv[1:]  # [module, args]; run_module puts the module's file in argv[0]
        if self.server is None or self.server.poll() is not None:
            self._start()
        with tempfile.TemporaryDirectory(prefix="cli-run-") as tmp:
            paths = {name: os.path.join(tmp, name) for name in ("stdin", "stdout", "stderr")}
            for name, path in paths.items():
                with (open(path, "w", encoding="utf-8") if text else open(path, "wb")) as f:
                    f.write(input if name == "stdin" and input is not None else
                            "" if text else b"")
            request = dict(paths, argv=argv, env=env, cwd=os.getcwd(), module=module)
            self.server.stdin.write(json.dumps(request).encode() + b"\n")
            self.server.stdin.flush()
            pid = json.loads(self.server.stdout.readline())["pid"]
            code = self._wait(pid, timeout)
            if code is None:
                raise subprocess.TimeoutExpired(cmd, timeout)
            out, err = (open(paths[n], encoding="utf-8", errors="replace").read() if text
                        else open(paths[n], "rb").read() for n in ("stdout", "stderr"))
        return subprocess.CompletedProcess(cmd, code, out, err)

    def _wait(self, pid, timeout):
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            left = None if deadline is None else max(0.0, deadline - time.monotonic())
            ready, _, _ = select.select([self.server.stdout], [], [], left)
            if ready:
                return json.loads(self.server.stdout.readline())["code"]
            os.kill(pid, 9)
            self.server.stdout.readline()
            return None

    def close(self):
        if self.server is not None and self.server.poll() is None:
            self.server.stdin.close()
            self.server.wait(timeout=30)


if __name__ == "__main__":
    import torch  # noqa: F401
    import fairseq_cli.generate  # noqa: F401  (fairseq and everything it imports)

    request = _serve()
    _become(request)
    if request.get("module"):
        runpy.run_module(request["module"], run_name="__main__", alter_sys=True)
    else:
        runpy.run_path(sys.argv[0], run_name="__main__")
