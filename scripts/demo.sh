#!/usr/bin/env bash
# torchfit demo — the article's experiment, short: install + build, lay out the real Fashion-MNIST images
# as data/{train,test,pred}, train the article's CNN for 1 epoch of 100 steps (150×150 RGB, batch 32,
# Adam) on the best device available, then predict the unlabelled images in data/pred.
#   scripts/demo.sh [extra train_cnn flags, e.g. --epochs 5 --steps-per-epoch 1000 --device cuda]
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
BIN=build/apps
scripts/prepare_data.sh
RUN_DIR=runs/demo-$(date +%Y%m%d-%H%M%S)
# The demo's settings, unless the caller gives the same flag (train_cnn takes each flag once).
ARGS=()
given() { local f; for f in "${USER_ARGS[@]}"; do [ "$f" = "$1" ] || [[ "$f" == "$1="* ]] && return 0; done; return 1; }
USER_ARGS=("$@")
given --device || ARGS+=(--device auto)
given --epochs || ARGS+=(--epochs 1)
given --steps-per-epoch || ARGS+=(--steps-per-epoch 100)
given --data || ARGS+=(--data ./data)
given --run-dir || ARGS+=(--run-dir "$RUN_DIR")
given --run-dir && for ((i = 0; i < $#; i++)); do [ "${USER_ARGS[$i]}" = --run-dir ] && RUN_DIR=${USER_ARGS[$((i + 1))]}; done
"$BIN/train_cnn" "${ARGS[@]}" "$@"
"$BIN/predict_cnn" --model "$RUN_DIR/model.ckpt" --data ./data/pred --output "$RUN_DIR/predictions.csv"
echo "Demo done: run files in $RUN_DIR (steps.csv, epochs.csv, run.json, model.ckpt, predictions.csv)"
