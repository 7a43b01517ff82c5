"""The CLI tests' runner (cli_server.py) ends a served run as a real process ends, and serves only
what a fork can take on."""
import os
import subprocess
import sys

import pytest

from cli_server import Tools

SCRIPT = r'''
import atexit, os, sys, threading, time
print("argv", sys.argv[1:], "cwd", os.getcwd(), "env", os.environ.get("PROBE"))
print("stdin", sys.stdin.read().strip())
print("plugin loaded before the run:", "fairseq_fast" in sys.modules)
open(sys.argv[2], "w").write(str(os.getppid()))
atexit.register(lambda: print("atexit ran"))
threading.Thread(target=lambda: (time.sleep(0.2), print("thread joined"))).start()
how = sys.argv[1]
if how == "exit":
    sys.exit(3)
if how == "message":
    sys.exit("went wrong")
if how == "raise":
    raise KeyError("boom")
print("main done", file=sys.stderr)
'''


@pytest.fixture(scope="module")
def tools():
    t = Tools()
    yield t
    t.close()


@pytest.mark.parametrize("how", ["ok", "exit", "message", "raise"])
def test_a_served_run_ends_as_a_real_process_does(tools, tmp_path, how):
    script = tmp_path / "probe.py"
    script.write_text(SCRIPT)
    env = dict(os.environ, PROBE="seen")
    parent = tmp_path / "parent"
    cmd = [sys.executable, str(script), how, str(parent)]
    real = subprocess.run(cmd, input="some input", capture_output=True, text=True, env=env,
                          cwd=tmp_path, timeout=60)
    here = os.getcwd()
    os.chdir(tmp_path)
    try:
        served = tools.run(cmd, input="some input", env=env, timeout=60)
    finally:
        os.chdir(here)
    assert int(parent.read_text()) == tools.server.pid  # it was served
    assert served.returncode == real.returncode
    assert served.stdout == real.stdout
    # a traceback names the runner's frames too; its last line is the same
    assert served.stderr.splitlines()[-1:] == real.stderr.splitlines()[-1:]
    assert "plugin loaded before the run: False" in served.stdout
    assert "atexit ran" in served.stdout and "thread joined" in served.stdout


def test_a_run_past_its_timeout_is_killed(tools, tmp_path):
    script = tmp_path / "sleep.py"
    script.write_text("import time\ntime.sleep(60)\n")
    with pytest.raises(subprocess.TimeoutExpired):
        tools.run([sys.executable, str(script)], timeout=1)
    script.write_text("import os\nprint(os.getppid())\n")
    done = tools.run([sys.executable, str(script)], timeout=60)
    assert done.stdout == f"{tools.server.pid}\n"  # the server serves the next run


@pytest.mark.parametrize("name,value,served", [
    ("OMP_NUM_THREADS", "1", False), ("PYTHONIOENCODING", "utf-8:strict", False),
    ("ATEN_CPU_CAPABILITY", "default", False), ("TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD", "1", True),
    ("FAIRSEQ_FAST_OFF", "user_errors", True)])
def test_variables_read_at_start_up_get_a_real_process(tools, name, value, served):
    tools.base_env = dict(os.environ)
    tools.base_env.pop(name, None)
    assert tools.servable(dict(tools.base_env, **{name: value})) is served


def test_a_plugin_module_is_served_as_python_m_runs_it(tools, monkeypatch):
    cmd = [sys.executable, "-m", "fairseq_fast.draft", "--help"]
    real = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    monkeypatch.setattr(subprocess, "run", None)  # a real process would fail here
    served = tools.run(cmd, timeout=120)
    assert served.returncode == real.returncode == 0
    assert served.stdout == real.stdout and "--target" in served.stdout
