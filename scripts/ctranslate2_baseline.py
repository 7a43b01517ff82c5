#!/usr/bin/env python3
"""CTranslate2 baseline for the demo target model: benchmarks/ctranslate2_worker.py as a script.

    python scripts/ctranslate2_baseline.py --sentences 200 --beam 5 --batch-size 32

runs `python -m benchmarks.ctranslate2_worker` with the same flags; its docstring says what it
converts, translates and compares. The names the scripts use (thread_counts, fastest, ...) are
the worker's.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from benchmarks.ctranslate2_worker import (EXAMPLE, MODEL, WORK, convert,  # noqa: E402
                                           fairseq_reference, fastest, fold_thread_counts,
                                           load_translator, main, thread_counts,
                                           threads_label, timed_translation,
                                           translate_tokens)

__all__ = ["EXAMPLE", "MODEL", "WORK", "convert", "fairseq_reference", "fastest",
           "fold_thread_counts", "load_translator", "main", "thread_counts", "threads_label",
           "timed_translation", "translate_tokens"]

if __name__ == "__main__":
    main()
