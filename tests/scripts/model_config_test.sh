#!/usr/bin/env bash
# train_cnn --model-config: the shipped seed_cnn.json (found next to the binary) gives the same model as the
# default, input and last Dense follow the data; a config with newer layers trains; bad configs fail
# naming the file, layer and field.
set -uo pipefail
TEST_NAME=model_config source "$(dirname "$0")/common.sh"
summary() { sed -n '/^Model: /,/^Non-trainable params/p' "$1"; }

if [ ! -f /usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz ]; then
  echo "SKIP: dataset-fashion-mnist not installed"; exit 0
fi
[ -f "$BIN/seed_cnn.json" ] || fail "seed_cnn.json was not copied next to train_cnn"
cmp -s "$BIN/seed_cnn.json" "$SRC/apps/train_cnn/seed_cnn.json" || fail "build copy of seed_cnn.json is stale"
"$BIN/prepare_data" --output "$WORK/data" --images-per-class 24 --classes 2 --pred-count 10 >/dev/null \
  || fail "prepare_data failed"
cd "$WORK" || fail "cd"

# The shipped file, by bare name from another directory: the article's CNN, 2 classes, 32x32 input.
expect_exit 0 "Total params: 1,232,514" "$BIN/train_cnn" --data data --target-size 32 --model-config seed_cnn.json --dry-run
grep -q "units 8 -> 2" out || { cat out; fail "no log of the last Dense following the classes"; }
summary out >with_config.txt
expect_exit 0 "Total params: 1,232,514" "$BIN/train_cnn" --data data --target-size 32 --dry-run
summary out >default.txt
diff default.txt with_config.txt || fail "seed_cnn.json summary differs from the built-in seed CNN"

# Another architecture, no recompiling: BatchNormalization, DepthwiseConv2D, GlobalAveragePooling2D…
cat >small.json <<'JSON'
{"format_version": 1, "class_name": "Sequential", "config": {"name": "small", "layers": [
  {"class_name": "Conv2D", "config": {"filters": 8, "kernel_size": 3, "strides": 2, "padding": "same"}},
  {"class_name": "BatchNormalization", "config": {}},
  {"class_name": "LeakyReLU", "config": {}},
  {"class_name": "DepthwiseConv2D", "config": {"kernel_size": 3, "depth_multiplier": 2, "activation": "gelu"}},
  {"class_name": "AveragePooling2D", "config": {"pool_size": 2}},
  {"class_name": "GlobalAveragePooling2D", "config": {}},
  {"class_name": "Dropout", "config": {"rate": 0.1}},
  {"class_name": "Dense", "config": {"units": 10, "activation": "softmax"}}]}}
JSON
"$BIN/train_cnn" --data data --model-config small.json --epochs 1 --steps-per-epoch 2 --batch-size 8 \
  --target-size 32 --validation-steps 1 --run-dir run --seed 1 >train.log 2>&1 || { cat train.log; fail "small.json did not train"; }
grep -q 'Model: "small"' train.log || { cat train.log; fail "not the small model"; }
grep -q "batch_normalization (BatchNo" train.log || { cat train.log; fail "no BatchNormalization row"; }
grep -q "Non-trainable params: 16" train.log || { cat train.log; fail "BN moving statistics not counted"; }
grep -q "^2/2 \[==============================\]" train.log || { cat train.log; fail "no final progress line"; }
grep -q '"model_config": "small.json"' run/run.json || fail "run.json lacks model_config"

# The shipped functional configs (tf.keras 2.x JSON): ResNet-8 has Keras's 78,666 parameters for
# 32x32x3 and 10 classes (MLCommons Tiny's model as Keras counts it); both train two steps.
"$BIN/prepare_data" --output "$WORK/data10" --images-per-class 4 --classes 10 --pred-count 0 >/dev/null \
  || fail "prepare_data (10 classes) failed"
expect_exit 0 "Total params: 78,666" "$BIN/train_cnn" --data data10 --target-size 32 --model-config resnet8.json --dry-run
grep -q "Non-trainable params: 480" out || { cat out; fail "ResNet-8: BN statistics not 480"; }
grep -q "Connected to" out || { cat out; fail "ResNet-8: no functional summary"; }
for config in resnet8.json mobilenetv2_tiny.json; do
  [ -f "$BIN/$config" ] || fail "$config was not copied next to train_cnn"
  "$BIN/train_cnn" --data data --model-config "$config" --epochs 1 --steps-per-epoch 2 --batch-size 8 \
    --target-size 32 --validation-steps 1 --run-dir "run-$config" --seed 1 >train.log 2>&1 \
    || { cat train.log; fail "$config did not train"; }
  grep -q "^2/2 \[==============================\]" train.log || { cat train.log; fail "$config: no final progress line"; }
done

# Errors: the file, the layer and the field.
sed 's/"Conv2D"/"Conv3D"/' small.json >unknown.json
expect_exit 1 "unknown layer class 'Conv3D' (known: " "$BIN/train_cnn" --data data --model-config unknown.json --dry-run
sed 's/"filters": 8/"filters": "eight"/' small.json >badfield.json
expect_exit 1 "field 'filters' must be an integer" "$BIN/train_cnn" --data data --model-config badfield.json --dry-run
grep -q "badfield.json" out || fail "error does not name the file"
echo '{"format_version": 1,' >broken.json
expect_exit 1 "not valid JSON" "$BIN/train_cnn" --data data --model-config broken.json --dry-run
sed 's/"units": 10, "activation": "softmax"/"units": 10/; s/"Dense"/"Activation"/; s/"units": 10/"activation": "softmax"/' small.json >nodense.json
expect_exit 1 "no Dense layer" "$BIN/train_cnn" --data data --model-config nodense.json --dry-run
expect_exit 2 "not found" "$BIN/train_cnn" --data data --model-config missing.json --dry-run
expect_exit 2 "excludes" "$BIN/train_cnn" --data data --model-config seed_cnn.json --dense2-units 32 --dry-run
echo "PASS"
