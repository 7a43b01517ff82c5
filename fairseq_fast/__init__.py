"""fairseq_fast: faster generation for fairseq Transformer models, loaded with --user-dir.

    fairseq-generate DATA --user-dir $(fairseq-fast-user-dir) --path target.pt --beam 1 \
        --generator speculative --draft-path draft.pt --draft-len 4

Importing the package applies the overrides listed in overrides.py (once) and registers the
training criterion `draft_kd` (draft/criterion.py) that `fairseq-fast-draft` trains drafts with.
"""
from fairseq_fast import overrides as _overrides

_overrides.apply()

from fairseq_fast.draft import criterion as _criterion  # noqa: E402,F401  (registers draft_kd)

from fairseq_fast.generators.bild import BiLDSequenceGenerator  # noqa: E402
from fairseq_fast.generators.fast import FastSequenceGenerator  # noqa: E402
from fairseq_fast.generators.speculative import SpeculativeSequenceGenerator  # noqa: E402
from fairseq_fast.paths import user_dir  # noqa: E402

__all__ = ["BiLDSequenceGenerator", "FastSequenceGenerator", "SpeculativeSequenceGenerator", "user_dir"]
__version__ = "0.1.0"
