import hashlib
import os
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)

import fairseq_fast  # noqa: E402,F401  (the plugin, as --user-dir would load it)


@pytest.fixture(scope="session")
def tiny_pair():
    """A tiny target/draft pair trained with fairseq-train (cached by the builder's hash)."""
    import tiny_pair as builder

    digest = hashlib.sha1(open(builder.__file__, "rb").read()).hexdigest()[:10]
    out = os.path.join(ROOT, ".cache", f"tiny_pair-{digest}")
    return builder.build(out)
