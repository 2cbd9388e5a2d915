#!/usr/bin/env bash
# The deployment story end to end: train_cnn → convert_model model.ckpt model.onnx → examples/onnx_classify
# (OpenCV DNN alone) gives predict_cnn's class probabilities within 1e-5 on the same image folder, for the
# seed CNN (Sequential) and the functional apps/train_cnn/branches_cnn.json (Concatenate, Add, BN, global
# pooling), resnet8.json (stride-2 "same" convolutions: TensorFlow's asymmetric padding) and
# mobilenetv2_tiny.json (ReLU(6), ZeroPadding2D, DepthwiseConv2D), and with ../shared present for the
# imported Keras ResNet-8 (.h5, converted straight to ONNX). Skipped (exit 0 with SKIP)
# when onnx_classify was not built (no OpenCV DNN / imgcodecs), /usr/bin/python3 is missing or Debian's
# Fashion-MNIST (dataset-fashion-mnist) is not installed.
set -uo pipefail
TEST_NAME=onnx_deploy source "$(dirname "$0")/common.sh"
CLASSIFY=$2/examples/onnx_classify/onnx_classify
[ -x "$CLASSIFY" ] || { echo "SKIP: onnx_classify not built (needs libopencv-dnn-dev and imgcodecs)"; exit 0; }
[ -x /usr/bin/python3 ] || { echo "SKIP: /usr/bin/python3 not found"; exit 0; }
[ -f /usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz ] ||
  { echo "SKIP: dataset-fashion-mnist not installed (prepare_data's source)"; exit 0; }

"$BIN/prepare_data" -o "$WORK/data" --images-per-class 4 --pred-count 12 >/dev/null || fail "prepare_data"

# same_probabilities NAME MODEL: predict_cnn and onnx_classify on data/pred, compared.
same_probabilities() {
  local name=$1 model=$2 onnx=$WORK/$1.onnx
  "$BIN/predict_cnn" --model "$model" --data "$WORK/data/pred" --output "$WORK/$name.pred.csv" >"$WORK/out" 2>&1 ||
    { cat "$WORK/out"; fail "$name: predict_cnn"; }
  "$BIN/convert_model" "$model" "$onnx" >"$WORK/out" 2>&1 || { cat "$WORK/out"; fail "$name: convert_model"; }
  "$CLASSIFY" "$onnx" "$WORK/data/pred" --output "$WORK/$name.onnx.csv" >"$WORK/out" 2>&1 ||
    { cat "$WORK/out"; fail "$name: onnx_classify"; }
  /usr/bin/python3 - "$WORK/$name.pred.csv" "$WORK/$name.onnx.csv" "$name" <<'PYEOF' || fail "$name: probabilities differ"
import csv, sys
a, b = (list(csv.reader(open(p))) for p in sys.argv[1:3])
assert a[0] == b[0], ("headers", a[0], b[0])
assert [r[:2] for r in a] == [r[:2] for r in b], "files or classes differ"
assert len(a) > 1, "no predictions"
# predict_cnn writes 6 significant digits: its own rounding is below 5e-7.
d = max(abs(float(x) - float(y)) for ra, rb in zip(a[1:], b[1:]) for x, y in zip(ra[2:], rb[2:]))
print("%s: %d images, max |p_OpenCV - p_torchfit| = %.2e" % (sys.argv[3], len(a) - 1, d))
sys.exit(0 if d <= 1e-5 else 1)
PYEOF
}

train() {
  local name=$1; shift
  "$BIN/train_cnn" --data "$WORK/data" --batch-size 8 --epochs 1 --steps-per-epoch 2 --validation-steps 1 --seed 3 \
    --workers 1 --run-dir "$WORK/$name" --checkpoint "$WORK/$name/model.ckpt" "$@" >"$WORK/out" 2>&1 ||
    { cat "$WORK/out"; fail "$name: train_cnn"; }
}
train seed --target-size 40
same_probabilities seed "$WORK/seed/model.ckpt"
train branches --target-size 75 --model-config "$SRC/apps/train_cnn/branches_cnn.json"
same_probabilities branches "$WORK/branches/model.ckpt"
train resnet8 --target-size 32 --model-config "$SRC/apps/train_cnn/resnet8.json"
same_probabilities resnet8 "$WORK/resnet8/model.ckpt"
train mobilenetv2 --target-size 32 --model-config "$SRC/apps/train_cnn/mobilenetv2_tiny.json"
same_probabilities mobilenetv2 "$WORK/mobilenetv2/model.ckpt"

# A Keras model straight from its file: the MLCommons Tiny ResNet-8 (tf.keras 2.4.0 .h5), as
# `convert_model ../shared/keras_models/resnet8_cifar10_tfkeras240.h5 r8.onnx`.
KERAS=$SRC/../shared/keras_models/resnet8_cifar10_tfkeras240.h5
if [ -f "$KERAS" ]; then
  same_probabilities keras_resnet8 "$KERAS"
else
  echo "SKIP (the Keras ResNet-8 part): $KERAS absent"
fi

echo "PASS"
