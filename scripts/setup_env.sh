#!/usr/bin/env bash
# Build .venv on a fresh machine: torch 2.13.0 (CPU), fairseq-fixed 0.12.3.1 and its real
# dependencies (no torchaudio: not needed for text and not installable for torch 2.13).
# The compiled fairseq wheel is cached in .cache/wheels (git-ignored) and in
# ~/.cache/fairseq_fast/wheels (shared by clones on the same machine, e.g. CI), so a second setup
# does not recompile it (~5 min on 2 cores).
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3.11}
command -v "$PY" >/dev/null || PY=python3
VENV=.venv
WHEELS=.cache/wheels
SHARED_WHEELS=${XDG_CACHE_HOME:-$HOME/.cache}/fairseq_fast/wheels
mkdir -p "$WHEELS" "$SHARED_WHEELS"
if ! ls "$WHEELS"/fairseq_fixed-0.12.3.1-*.whl >/dev/null 2>&1; then
  cp "$SHARED_WHEELS"/fairseq_fixed-0.12.3.1-*.whl "$WHEELS"/ 2>/dev/null || true
fi

if [ ! -x "$VENV/bin/python" ]; then
  "$PY" -m venv "$VENV"
fi
PIP="$VENV/bin/python -m pip"
$PIP install -q torch==2.13.0 "numpy<2" cython setuptools wheel

if ! ls "$WHEELS"/fairseq_fixed-0.12.3.1-*.whl >/dev/null 2>&1; then
  echo "[setup] building fairseq-fixed 0.12.3.1 (compiles C++/Cython extensions, ~5 min)"
  $PIP wheel -q --no-deps --no-build-isolation -w "$WHEELS" fairseq-fixed==0.12.3.1
  cp "$WHEELS"/fairseq_fixed-0.12.3.1-*.whl "$SHARED_WHEELS"/ 2>/dev/null || true
fi
$PIP install -q --no-deps "$WHEELS"/fairseq_fixed-0.12.3.1-*.whl
$PIP install -q hydra-core==1.3.2 omegaconf==2.3.0 regex sacrebleu tqdm bitarray cffi \
  scikit-learn packaging sentencepiece "numpy<2" hypothesis pytest scipy matplotlib \
  ctranslate2==4.8.5  # ctranslate2: the baseline in scripts/report.py only
$PIP install -q --no-deps --no-build-isolation -e .
touch "$VENV/.setup-done"
echo "[setup] done: $($VENV/bin/python -c 'import torch, fairseq; print("torch", torch.__version__, "fairseq", fairseq.__version__)')"
