"""The benchmarks' shared parts: one harness that runs engines side by side and summarises their
runs (harness.py), the machine probes (probes.py: memory bandwidth, peak RSS) and CTranslate2 in
a process of its own (ctranslate2_worker.py). The scripts in scripts/ declare what to run (the
engines, the work, the settings) and write their JSON; these modules run and measure it.
"""
import os

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
