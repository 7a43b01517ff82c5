"""The watchdog that keeps a hanging child from hanging the suite (processes.py)."""
import subprocess
import sys

from processes import watchdog, with_stacks

SLEEPER = "import time\ndef waiting():\n    time.sleep(60)\nprint('started', flush=True)\nwaiting()\n"


def test_a_child_that_hangs_is_ended_with_its_stack_on_stderr(tmp_path):
    stderr = open(tmp_path / "stderr.txt", "w+")
    proc = subprocess.Popen([sys.executable, "-c", SLEEPER], stdout=subprocess.PIPE,
                            stderr=stderr, text=True, env=with_stacks({}),
                            start_new_session=True)
    with watchdog(proc, seconds=1) as fired:
        assert proc.stdout.readline() == "started\n"
        assert proc.stdout.read() == ""  # returns once the watchdog has ended the child
    assert fired.is_set()
    assert proc.wait(timeout=10) != 0
    stderr.seek(0)
    assert 'in waiting' in stderr.read()


def test_a_child_that_ends_in_time_is_left_alone():
    proc = subprocess.Popen([sys.executable, "-c", "print('done')"], stdout=subprocess.PIPE,
                            text=True, start_new_session=True)
    with watchdog(proc, seconds=30) as fired:
        assert proc.stdout.read() == "done\n"
        assert proc.wait(timeout=10) == 0
    assert not fired.is_set()
