"""The benchmarks' shared parts: one harness that runs engines side by side and summarises their
runs (harness.py), the machine probes (probes.py: memory bandwidth, peak RSS; engine_rss.py: one
engine's peak RSS alone) and CTranslate2 in a process of its own (ctranslate2_worker.py); the
models and data (models.py), the engines (engines.py), the bytes a step reads (limits.py), one
decoder call's timings (steps.py) and the time inside a generator's calls (timers.py). The
scripts in scripts/ declare what to run (the engines, the work, the settings) and write their
JSON; these modules run and measure it, and render.py (scale_render.py for benchmark_scale.py)
writes docs/benchmarks.md from the JSONs.
"""
import os

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
