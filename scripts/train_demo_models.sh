#!/usr/bin/env bash
# Train the demo pair on the binarised Bible corpus (scripts/prepare_data.py --out work/data).
#   target: transformer, 4 encoder + 6 decoder layers, 256 dims, FFN 1024, pre-norm, shared embeddings
#   draft:  3 encoder layers x 192 dims, 1 decoder layer x 128 dims (FFN 512), tied decoder embeddings
# Usage: scripts/train_demo_models.sh target|draft [HOURS]
# Both resume from work/ckpt/<name>/checkpoint_last.pt, so a run cut short can be continued.
set -euo pipefail
cd "$(dirname "$0")/.."
WHICH=$1
HOURS=${2:-1.5}
DATA=work/data/bin
SAVE=work/ckpt/$WHICH
mkdir -p "$SAVE"
COMMON=(--task translation --source-lang es --target-lang en
  --optimizer adam --adam-betas '(0.9,0.98)' --clip-norm 0.0 --lr-scheduler inverse_sqrt
  --criterion label_smoothed_cross_entropy --label-smoothing 0.1 --weight-decay 0.0001
  --max-tokens 4096 --no-epoch-checkpoints --save-dir "$SAVE" --log-format simple --log-interval 50
  --stop-time-hours "$HOURS" --max-epoch 60 --num-workers 0 --seed 1 --skip-invalid-size-inputs-valid-test
  --max-source-positions 512 --max-target-positions 512)
case "$WHICH" in
  target)
    ARCH=(--arch transformer --share-all-embeddings
      --encoder-layers 4 --decoder-layers 6 --encoder-embed-dim 256 --decoder-embed-dim 256
      --encoder-ffn-embed-dim 1024 --decoder-ffn-embed-dim 1024
      --encoder-attention-heads 4 --decoder-attention-heads 4
      --encoder-normalize-before --decoder-normalize-before
      --dropout 0.2 --attention-dropout 0.1 --lr 1e-3 --warmup-updates 400 --warmup-init-lr 1e-7) ;;
  draft)
    ARCH=(--arch transformer --share-decoder-input-output-embed
      --encoder-layers 3 --decoder-layers 1 --encoder-embed-dim 192 --decoder-embed-dim 128
      --encoder-ffn-embed-dim 768 --decoder-ffn-embed-dim 512
      --encoder-attention-heads 4 --decoder-attention-heads 4
      --encoder-normalize-before --decoder-normalize-before
      --dropout 0.1 --attention-dropout 0.0 --lr 1e-3 --warmup-updates 400 --warmup-init-lr 1e-7) ;;
  *) echo "usage: $0 target|draft [HOURS]" >&2; exit 2 ;;
esac
exec .venv/bin/fairseq-train "$DATA" "${COMMON[@]}" "${ARCH[@]}"
