#!/usr/bin/env bash
# train_cnn --model-config: the shipped seed_cnn.json (found next to the binary) gives the same model as the
# default, input and last Dense follow the data; a config with newer layers trains; the sequence models train
# on one channel (--color-mode grayscale) with Keras's parameter counts; bad configs fail naming the file,
# layer and field.
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
# convnext_block.json: DepthwiseConv2D 7x7, LayerNormalization, Dense over the channels, residual Add;
# conv1d_rows.json: each image row a step of a 1-D CNN (Reshape to (28, 84), Conv1D, GroupNormalization).
expect_exit 0 "Total params: 22,058" "$BIN/train_cnn" --data data10 --target-size 32 --model-config convnext_block.json \
  --dry-run
expect_exit 0 "Total params: 33,482" "$BIN/train_cnn" --data data10 --target-size 28 --model-config conv1d_rows.json \
  --dry-run
# The Keras 3 recipe (keras.io "Image classification from scratch"): augmentation and Rescaling inside the
# model; the Xception-style net by Keras's formulas (conv 3x3x3x128 + bias, BN 4 per channel, SeparableConv2D
# 9*in + in*out + out, strided 1x1 shortcuts, Dense 1024*10 + 10) has 2,740,290 parameters, 8,288 of them BN
# statistics; the seed CNN variant has the seed CNN's count (the augmentation layers have no weights).
expect_exit 0 "Total params: 2,740,290" "$BIN/train_cnn" --data data10 --target-size 32 --loader image_dataset \
  --model-config keras3_recipe.json --dry-run
grep -q "Non-trainable params: 8,288" out || { cat out; fail "keras3_recipe: BN statistics not 8,288"; }
expect_exit 0 "Total params: 1,233,034" "$BIN/train_cnn" --data data10 --target-size 32 --loader image_dataset \
  --model-config keras3_recipe_cnn.json --dry-run
grep -q "random_rotation (RandomRotat" out || { cat out; fail "keras3_recipe_cnn: no RandomRotation row"; }
for config in resnet8.json:32 mobilenetv2_tiny.json:32 convnext_block.json:32 conv1d_rows.json:28; do
  size=${config#*:}
  config=${config%:*}
  [ -f "$BIN/$config" ] || fail "$config was not copied next to train_cnn"
  "$BIN/train_cnn" --data data --model-config "$config" --epochs 1 --steps-per-epoch 2 --batch-size 8 \
    --target-size "$size" --validation-steps 1 --run-dir "run-$config" --seed 1 >train.log 2>&1 \
    || { cat train.log; fail "$config did not train"; }
  grep -q "^2/2 \[==============================\]" train.log || { cat train.log; fail "$config: no final progress line"; }
done
# The recipe trains from image_dataset_from_directory (raw 0-255 pixels; the model rescales).
"$BIN/train_cnn" --data data --loader image_dataset --model-config keras3_recipe_cnn.json --epochs 1 --steps-per-epoch 2 \
  --batch-size 8 --target-size 32 --validation-steps 1 --run-dir run-recipe --seed 1 >train.log 2>&1 \
  || { cat train.log; fail "keras3_recipe_cnn.json did not train"; }
grep -q "^2/2 \[==============================\]" train.log || { cat train.log; fail "recipe: no final progress line"; }

# The shipped sequence models read Keras's classic 28x28 grayscale input (--color-mode grayscale: one channel),
# each image row a time step of 28 values. Parameters by Keras's formulas, 10 classes (d = input features,
# u = units): LSTM 4·(u·(d + u) + u); GRU with reset_after 3·(u·(d + u) + 2·u); Conv1D k·d·f + f;
# Dense d·u + u; LayerNormalization 2·d; MultiHeadAttention (h heads, key_dim k, model width m) 3·(m·h·k + h·k)
# for query/key/value plus h·k·m + m for the output.
seq_model() {  # seq_model CONFIG TOTAL ROW...: the dry-run summary has Total params TOTAL and each ROW
  local config=$1 total=$2; shift 2
  expect_exit 0 "Total params: $total" "$BIN/train_cnn" --data data10 --target-size 28 --color-mode grayscale \
    --model-config "$config" --dry-run
  for row in "$@"; do
    grep -Eq "$row" out || { cat out; fail "$config: no summary row matching '$row'"; }
  done
}
# lstm_rows: LSTM 4·(128·(28 + 128) + 128) = 80,384; Dense 128·10 + 10 = 1,290.
seq_model lstm_rows.json 81,674 'input_1 \(InputLayer\) +\[\(None, 28, 28, 1\)\]' \
  'reshape \(Reshape\) +\(None, 28, 28\) +0 ' 'lstm \(LSTM\) +\(None, 128\) +80384 ' 'dense \(Dense\) +\(None, 10\) +1290 '
# bigru_rows: two GRU(64) 2·3·(64·(28 + 64) + 2·64) = 36,096, concatenated to 128; Dense 1,290.
seq_model bigru_rows.json 37,386 'bidirectional \(Bidirectional\) +\(None, 128\) +36096 ' \
  'dense \(Dense\) +\(None, 10\) +1290 '
# conv1d_gru: Conv1D 3·28·64 + 64 = 5,440 (same: 28 steps), MaxPooling1D 2 → 14 steps,
# GRU 3·(64·(64 + 64) + 2·64) = 24,960, Dense 64·10 + 10 = 650.
seq_model conv1d_gru.json 31,050 'conv1d \(Conv1D\) +\(None, 28, 64\) +5440 ' \
  'max_pooling1d \(MaxPooling1D\) +\(None, 14, 64\) +0 ' 'gru \(GRU\) +\(None, 64\) +24960 ' 'dense \(Dense\) +\(None, 10\) +650 '
# transformer_patches: 49 patches of 4x4 (Reshape (7, 4, 7, 4), Permute (1, 3, 2, 4), Reshape (49, 16)),
# Dense 16·64 + 64 = 1,088; MultiHeadAttention 4 heads of 16: 3·(64·64 + 64) + 64·64 + 64 = 16,640;
# two LayerNormalization 2·64 = 128; FFN Dense 64·128 + 128 = 8,320 and 128·64 + 64 = 8,256; Dense 650.
seq_model transformer_patches.json 35,210 'permute \(Permute\) +\(None, 7, 7, 4, 4\) +0 ' \
  'reshape_1 \(Reshape\) +\(None, 49, 16\) +0 ' 'dense \(Dense\) +\(None, 49, 64\) +1088 ' \
  'multi_head_attention \(MultiHead +\(None, 49, 64\) +16640 ' 'layer_normalization \(LayerNorma +\(None, 49, 64\) +128 ' \
  'dense_1 \(Dense\) +\(None, 49, 128\) +8320 ' 'dense_2 \(Dense\) +\(None, 49, 64\) +8256 ' \
  'global_average_pooling1d \(Globa +\(None, 64\) +0 ' 'dense_3 \(Dense\) +\(None, 10\) +650 '
# Each trains two steps on 2 classes (the last Dense follows them) and its .keras file (--save-keras) has the
# same summary when loaded back.
for config in lstm_rows bigru_rows conv1d_gru transformer_patches; do
  [ -f "$BIN/$config.json" ] || fail "$config.json was not copied next to train_cnn"
  "$BIN/train_cnn" --data data --model-config "$config.json" --color-mode grayscale --target-size 28 --epochs 1 \
    --steps-per-epoch 2 --batch-size 8 --validation-steps 1 --run-dir "run-$config" --seed 1 --save-keras "$config.keras" \
    >train.log 2>&1 || { cat train.log; fail "$config did not train"; }
  grep -q "^2/2 \[==============================\]" train.log || { cat train.log; fail "$config: no final progress line"; }
  grep -q "units 10 -> 2" train.log || { cat train.log; fail "$config: the last Dense did not follow the classes"; }
  summary train.log >trained.txt
  expect_exit 0 "Total params" "$BIN/train_cnn" --data data --target-size 28 --color-mode grayscale \
    --load-model "$config.keras" --dry-run
  summary out >loaded.txt
  diff trained.txt loaded.txt || fail "$config: the saved .keras loads as another model"
done
grep -q '"color_mode": "grayscale"' run-lstm_rows/run.json || fail "run.json lacks color_mode"
# Keras 3's image_dataset_from_directory loader gives the one channel too (values 0-255, as Keras).
"$BIN/train_cnn" --data data --model-config lstm_rows.json --color-mode grayscale --target-size 28 --loader image_dataset \
  --epochs 1 --steps-per-epoch 2 --batch-size 8 --validation-steps 1 --run-dir run-dataset --seed 1 --no-checkpoint \
  >train.log 2>&1 || { cat train.log; fail "lstm_rows.json did not train from --loader image_dataset"; }
grep -q "^2/2 \[==============================\]" train.log || { cat train.log; fail "image_dataset: no final progress line"; }
# --color-mode: the built-in seed CNN at 28x28x1, 2 classes: conv 3·3·1·32 + 32 = 320, conv 18,496,
# Dense 5·5·64·512 + 512 = 819,712, Dense 32,832, Dense 64·2 + 2 = 130.
expect_exit 0 "Total params: 871,490" "$BIN/train_cnn" --data data --target-size 28 --color-mode grayscale --dry-run
# An RGB model on one channel: the layer that cannot take it is named; a mode Keras does not have is refused.
expect_exit 1 "layer 'rows' (Reshape): cannot reshape input (None, 28, 28, 1)" "$BIN/train_cnn" --data data --target-size 28 --color-mode grayscale \
  --model-config conv1d_rows.json --dry-run
expect_exit 2 "--color-mode" "$BIN/train_cnn" --data data --color-mode gray --dry-run
expect_exit 2 "set --target-size and --color-mode to its input" "$BIN/train_cnn" --data data --target-size 28 \
  --load-model lstm_rows.keras --dry-run

# Keras 1 / Keras 2.0 Sequential JSON (config a bare list, batch_input_shape on the first layer, Keras 1
# names, "th" ordering): train_cnn sets the data's input and classes on it as on any other format.
cat >k1.json <<'JSON'
{"class_name": "Sequential", "keras_version": "1.2.2", "config": [
  {"class_name": "Convolution2D", "config": {"name": "c1", "nb_filter": 4, "nb_row": 3, "nb_col": 3,
   "border_mode": "valid", "subsample": [1, 1], "dim_ordering": "th", "activation": "relu", "bias": true,
   "batch_input_shape": [null, 1, 28, 28]}},
  {"class_name": "Flatten", "config": {"name": "f"}},
  {"class_name": "Dense", "config": {"name": "out", "output_dim": 10, "activation": "softmax"}}]}
JSON
# 16x16x3 and 2 classes by hand: conv 4·(3·3·3) + 4 = 112, Dense 14·14·4·2 + 2 = 1,570.
expect_exit 0 "Total params: 1,682" "$BIN/train_cnn" --data data --target-size 16 --model-config k1.json --dry-run
grep -q "units 10 -> 2" out || { cat out; fail "Keras 1: the last Dense did not follow the classes"; }

# A functional file listing its layers out of order: the class-score Dense is found through the graph
# (Dense → Activation output), not by file position.
cat >reversed.json <<'JSON'
{"class_name": "Functional", "config": {"name": "rev", "layers": [
  {"class_name": "Activation", "name": "probs", "config": {"name": "probs", "activation": "softmax"},
   "inbound_nodes": [[["scores", 0, 0, {}]]]},
  {"class_name": "Dense", "name": "scores", "config": {"name": "scores", "units": 7},
   "inbound_nodes": [[["gap", 0, 0, {}]]]},
  {"class_name": "GlobalAveragePooling2D", "name": "gap", "config": {"name": "gap"},
   "inbound_nodes": [[["img", 0, 0, {}]]]},
  {"class_name": "InputLayer", "name": "img", "config": {"name": "img", "batch_input_shape": [null, 9, 9, 3]},
   "inbound_nodes": []}],
 "input_layers": [["img", 0, 0]], "output_layers": [["probs", 0, 0]]}}
JSON
expect_exit 0 "Total params: 8" "$BIN/train_cnn" --data data --target-size 48 --model-config reversed.json --dry-run
grep -q "units 7 -> 2" out || { cat out; fail "reversed file: the class-score Dense not resized"; }

# Two inputs: refused before training, naming the reason.
cat >two_inputs.json <<'JSON'
{"class_name": "Functional", "config": {"name": "two", "layers": [
  {"class_name": "InputLayer", "name": "a", "config": {"name": "a", "batch_input_shape": [null, 8, 8, 3]}, "inbound_nodes": []},
  {"class_name": "InputLayer", "name": "b", "config": {"name": "b", "batch_input_shape": [null, 8, 8, 3]}, "inbound_nodes": []},
  {"class_name": "Add", "name": "sum", "config": {"name": "sum"}, "inbound_nodes": [[["a", 0, 0, {}], ["b", 0, 0, {}]]]},
  {"class_name": "Flatten", "name": "f", "config": {"name": "f"}, "inbound_nodes": [[["sum", 0, 0, {}]]]},
  {"class_name": "Dense", "name": "d", "config": {"name": "d", "units": 2}, "inbound_nodes": [[["f", 0, 0, {}]]]}],
 "input_layers": [["a", 0, 0], ["b", 0, 0]], "output_layers": [["d", 0, 0]]}}
JSON
expect_exit 1 "has 2 inputs and 1 outputs; adapting a classifier to an image folder needs one input" \
  "$BIN/train_cnn" --data data --model-config two_inputs.json --dry-run

# Errors: the file, the layer and the field.
sed 's/"Conv2D"/"ConvLSTM2D"/' small.json >unknown.json
expect_exit 1 "unknown layer class 'ConvLSTM2D': torchfit has no ConvLSTM2D yet" "$BIN/train_cnn" --data data --model-config unknown.json --dry-run
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
