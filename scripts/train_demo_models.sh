#!/usr/bin/env bash
# Train the demo pair on the binarised Bible corpus (scripts/prepare_data.py --out work/data).
#   target: transformer, 4 encoder + 6 decoder layers, 256 dims, FFN 1024, pre-norm, shared embeddings
#   draft:  3 encoder layers x 192 dims, 1 decoder layer x 128 dims (FFN 512), tied decoder embeddings,
#           trained from scratch on the references
#   distill: `draft` fine-tuned on the target's greedy translations of the training set
#           (scripts/make_distill_data.py): sequence-level distillation, which is what raises the
#           acceptance rate most.
#   kd:     the committed draft: `distill` fine-tuned further on the same data with word-level
#           knowledge distillation (criterion draft_kd, fairseq_fast/draft/criterion.py, which
#           the plugin registers: KL to the target's full distribution plus cross-entropy on its
#           greedy labels); its teacher is the exported target, so run
#           `export_demo_models.py --target ...` first.
#   big:    a larger draft for the widened targets of scripts/benchmark_scale.py: the exported
#           target's encoder and first 3 decoder layers (fairseq_fast/draft/init.py), distilled
#           as `kd` is, 3,549 updates of 8,192 tokens (distill data from stage `distill`; a GPU
#           is advisable: ~6 minutes on one, hours on 2 CPU cores).
#   Run `target`, then `draft`, then `distill`, then `kd`; `big` after `distill`.
#   fairseq-fast-draft makes a draft of the same kind as `big` in one command (README).
# Usage: scripts/train_demo_models.sh target|draft|distill|kd|big [HOURS]
# All resume from work/ckpt/<name>/checkpoint_last.pt, so a run cut short can be continued.
set -euo pipefail
cd "$(dirname "$0")/.."
WHICH=$1
HOURS=${2:-1.5}
DATA=work/data/bin
SAVE=work/ckpt/$WHICH
mkdir -p "$SAVE"
# fairseq-train reloads its own checkpoints (resume, --finetune-from-model): files it wrote itself
export TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD=1
COMMON=(--task translation --source-lang es --target-lang en
  --optimizer adam --adam-betas '(0.9,0.98)' --clip-norm 0.0 --lr-scheduler inverse_sqrt
  --criterion label_smoothed_cross_entropy --label-smoothing 0.1 --weight-decay 0.0001
  --max-tokens 4096 --no-epoch-checkpoints --save-dir "$SAVE" --log-format simple --log-interval 50
  --stop-time-hours "$HOURS" --max-epoch 60 --num-workers 0 --seed 1 --skip-invalid-size-inputs-valid-test
  --max-source-positions 512 --max-target-positions 512)
DRAFT_ARCH=(--arch transformer --share-decoder-input-output-embed
  --encoder-layers 3 --decoder-layers 1 --encoder-embed-dim 192 --decoder-embed-dim 128
  --encoder-ffn-embed-dim 768 --decoder-ffn-embed-dim 512
  --encoder-attention-heads 4 --decoder-attention-heads 4
  --encoder-normalize-before --decoder-normalize-before --dropout 0.1 --attention-dropout 0.0)
# the target's shape but for its decoder's depth (the big draft keeps 3 of its 6 decoder layers)
TARGET_SHAPE=(--arch transformer --share-all-embeddings
  --encoder-layers 4 --encoder-embed-dim 256 --decoder-embed-dim 256
  --encoder-ffn-embed-dim 1024 --decoder-ffn-embed-dim 1024
  --encoder-attention-heads 4 --decoder-attention-heads 4
  --encoder-normalize-before --decoder-normalize-before)
# distillation from the exported target (stages kd and big)
KD=(--user-dir fairseq_fast --criterion draft_kd --kd-weight 0.75 --label-smoothing 0.0
  --teacher-path user_dir_examples/bible_es_en/target.pt)
case "$WHICH" in
  target)
    ARCH=("${TARGET_SHAPE[@]}" --decoder-layers 6
      --dropout 0.2 --attention-dropout 0.1 --lr 1e-3 --warmup-updates 400 --warmup-init-lr 1e-7) ;;
  draft)
    ARCH=("${DRAFT_ARCH[@]}" --lr 1e-3 --warmup-updates 400 --warmup-init-lr 1e-7) ;;
  distill)
    # fine-tune the reference-trained draft (stage `draft`) on the target's greedy outputs;
    # fairseq's --stop-time-hours counts the draft's earlier training time too, so this stage
    # also stops at a fixed number of updates
    TARGET=work/ckpt/target/checkpoint_best.pt
    [ -f work/distill/bin/dict.en.txt ] || .venv/bin/python scripts/make_distill_data.py --target "$TARGET"
    DATA=work/distill/bin
    ARCH=("${DRAFT_ARCH[@]}" --finetune-from-model work/ckpt/draft/checkpoint_best.pt --max-update 2400
      --lr 1e-3 --warmup-updates 200 --warmup-init-lr 1e-7) ;;
  kd)
    DATA=work/distill/bin
    ARCH=("${DRAFT_ARCH[@]}" --finetune-from-model work/ckpt/distill/checkpoint_best.pt
      --max-update ${KD_UPDATES:-1866} --lr 5e-4 --warmup-updates 200 --warmup-init-lr 1e-7
      "${KD[@]}") ;;
  big)
    DATA=work/distill/bin
    [ -f work/ckpt/big-init.pt ] || .venv/bin/python -c 'import sys
from fairseq import checkpoint_utils
from fairseq_fast.draft import init
state = checkpoint_utils.load_checkpoint_to_cpu(sys.argv[1])
init.write(init.layer_dropped(state, 3, train_encoder=True), sys.argv[2])' \
      user_dir_examples/bible_es_en/target.pt work/ckpt/big-init.pt
    ARCH=("${TARGET_SHAPE[@]}" --decoder-layers 3 --dropout 0.1 --attention-dropout 0.0
      --finetune-from-model work/ckpt/big-init.pt --max-update 3549 --max-tokens 8192
      --weight-decay 0.0 --lr 5e-4 --warmup-updates 200 --warmup-init-lr 1e-7 "${KD[@]}") ;;
  *) echo "usage: $0 target|draft|distill|kd|big [HOURS]" >&2; exit 2 ;;
esac
exec .venv/bin/fairseq-train "$DATA" "${COMMON[@]}" "${ARCH[@]}"
