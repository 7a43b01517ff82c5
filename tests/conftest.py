import faulthandler
import hashlib
import os
import shutil
import sys

import pytest
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)

# every typed kernel call checks its arguments first (kernels/calls.py), here and in the tools the
# tests run
os.environ.setdefault("FAIRSEQ_FAST_STRICT", "1")

import fairseq_fast  # noqa: E402,F401  (the plugin, as --user-dir would load it)

HANG_S = 900  # a test still running this long hangs: the suite stops with every thread's stack
_STDERR = []  # the terminal's stderr, which pytest's capture does not redirect


def pytest_configure(config):
    _STDERR.append(os.fdopen(os.dup(2), "w"))


@pytest.fixture(autouse=True)
def _hang_guard():
    """A hanging test ends the run (exit status 1) with the stacks of the suite's threads on
    stderr, instead of running into CI's time limit with nothing to show."""
    faulthandler.dump_traceback_later(HANG_S, exit=True, file=_STDERR[0])
    yield
    faulthandler.cancel_dump_traceback_later()


@pytest.fixture(autouse=True)
def _one_command_line_per_process(monkeypatch):
    """A command line parsed in this process (in-process CLI tests) lets loads skip the random
    initialisation (init_skip.allow), as it does for the tool it starts; it must not carry over
    into the next test, which may be a program (the hub) that loads the stock way."""
    from fairseq_fast import init_skip

    monkeypatch.setattr(init_skip, "_allowed", [False])


@pytest.fixture(scope="session")
def tiny_pair():
    """A tiny target/draft pair trained with fairseq-train (cached by the builder's hash)."""
    import tiny_pair as builder

    digest = hashlib.sha1(open(builder.__file__, "rb").read()).hexdigest()[:10]
    out = os.path.join(ROOT, ".cache", f"tiny_pair-{digest}")
    return builder.build(out)


@pytest.fixture(scope="session")
def bad_drafts(tiny_pair, tmp_path_factory):
    """Drafts that must be refused: other dictionary contents, other vocabulary size, garbage."""
    root = tmp_path_factory.mktemp("bad")
    data = os.path.join(tiny_pair, "data-bin")
    # same size, different symbols (as if trained on another corpus)
    other = root / "other_dict"
    other.mkdir()
    shutil.copy(os.path.join(tiny_pair, "draft.pt"), other / "draft.pt")
    lines = open(os.path.join(data, "dict.tgt.txt")).read().splitlines()
    lines[0], lines[1] = lines[1], lines[0]
    (other / "dict.tgt.txt").write_text("\n".join(lines) + "\n")
    # different vocabulary size, no dictionary file beside it
    state = torch.load(os.path.join(tiny_pair, "draft.pt"), weights_only=False)
    for key in list(state["model"]):
        if key.endswith("embed_tokens.weight") and key.startswith("decoder"):
            w = state["model"][key]
            state["model"][key] = torch.cat([w, w[:3]])
    state["cfg"]["task"]["data"] = str(root / "nowhere")
    torch.save(state, root / "bigger_vocab.pt")
    (root / "garbage.pt").write_bytes(b"this is not a checkpoint")
    return root
