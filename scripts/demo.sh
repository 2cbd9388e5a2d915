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
"$BIN/train_cnn" --device auto --epochs 1 --steps-per-epoch 100 --data ./data --run-dir "$RUN_DIR" "$@"
"$BIN/predict_cnn" --model "$RUN_DIR/model.ckpt" --data ./data/pred --output "$RUN_DIR/predictions.csv"
echo "Demo done: run files in $RUN_DIR (steps.csv, epochs.csv, run.json, model.ckpt, predictions.csv)"
