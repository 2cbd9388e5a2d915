#!/usr/bin/env bash
# End-to-end CLI test of train_cnn and predict_cnn on real Fashion-MNIST images (a small prepared set):
# bad flags exit 2 naming the flag, --dry-run prints the summary, a tiny CPU run writes the run files,
# the checkpoint resumes, predict_cnn writes predictions and prints accuracy.
set -uo pipefail
TEST_NAME=train_cnn_cli source "$(dirname "$0")/common.sh"

if [ ! -f /usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz ]; then
  echo "SKIP: dataset-fashion-mnist not installed"; exit 0
fi
"$BIN/prepare_data" --output "$WORK/data" --images-per-class 24 --classes 2 --pred-count 10 >/dev/null \
  || fail "prepare_data failed"

# Bad input: CLI11 and our own checks exit 2 naming the flag or path.
expect_exit 2 "--epochs" "$BIN/train_cnn" --data "$WORK/data" --epochs -1
expect_exit 2 "--batch-size" "$BIN/train_cnn" --data "$WORK/data" --batch-size 0
expect_exit 2 "--target-size" "$BIN/train_cnn" --data "$WORK/data" --target-size 0
expect_exit 2 "does not exist" "$BIN/train_cnn" --data "$WORK/nope"
mkdir -p "$WORK/empty"
expect_exit 2 "no train/" "$BIN/train_cnn" --data "$WORK/empty"
expect_exit 2 "bogus" "$BIN/train_cnn" --bogus
expect_exit 2 "--epochs" "$BIN/train_cnn" --epochs five
expect_exit 2 "--seed: must be a whole number" "$BIN/train_cnn" --data "$WORK/data" --seed -1
expect_exit 2 "--grad-compression: int8 not in {none,bf16,fp16}" "$BIN/train_cnn" --data "$WORK/data" \
  --grad-compression int8
expect_exit 1 "cannot format filepath" "$BIN/train_cnn" --data "$WORK/data" --target-size 32 --epochs 1 \
  --steps-per-epoch 1 --run-dir "$WORK/badname" --checkpoint "$WORK/w.{val_acc:.2f}.ckpt"
expect_exit 1 "gives a file name of 266 bytes, above NAME_MAX" "$BIN/train_cnn" --data "$WORK/data" --target-size 32 \
  --epochs 1 --steps-per-epoch 1 --run-dir "$WORK/longname" --checkpoint "$WORK/x{epoch:0260d}.ckpt"
expect_exit 2 "is a directory, not a model config file" "$BIN/train_cnn" --data "$WORK/data" --model-config "$WORK" \
  --dry-run
expect_exit 1 "CPU-only" "$BIN/train_cnn" --data "$WORK/data" --device cuda --dry-run
expect_exit 2 "--resume" "$BIN/train_cnn" --data "$WORK/data" --resume "$WORK/missing.ckpt"

# Dry run: header, Found lines, summary; nothing trained.
expect_exit 0 "Total params: 1,232,514" "$BIN/train_cnn" --data "$WORK/data" --target-size 32 --dry-run
grep -q "Found 48 images belonging to 2 classes." "$WORK/out" || fail "no Found line"
grep -q "LibTorch" "$WORK/out" || fail "no version header"

# Pixel limit (Pillow's MAX_IMAGE_PIXELS): the 28 x 28 = 784-pixel files warn above 392, are skipped
# above twice the limit (here: all of them, so no images are left).
expect_exit 2 "--max-image-pixels" "$BIN/train_cnn" --data "$WORK/data" --max-image-pixels -1
expect_exit 0 "is large: 28 x 28 = 784 pixels, above max_image_pixels 392" \
  "$BIN/train_cnn" --data "$WORK/data" --target-size 32 --dry-run --max-image-pixels 392
expect_exit 1 "image too large: 28 x 28 = 784 pixels, limit 782" \
  "$BIN/train_cnn" --data "$WORK/data" --target-size 32 --dry-run --max-image-pixels 391

# 16-bit policy: the two names only; the data here is 8-bit, so both give the same run.
expect_exit 2 "--sixteen-bit" "$BIN/train_cnn" --data "$WORK/data" --sixteen-bit clip
expect_exit 0 "Found 48 images" "$BIN/train_cnn" --data "$WORK/data" --target-size 32 --dry-run --sixteen-bit pillow

# --loader image_dataset (Keras 3's image_dataset_from_directory): its Found line, a tiny run with
# validation, the cache and the 16-bit policy taken with it (the cached run's losses equal the uncached
# run's), and the generator's --rescale and --no-augment refused with the way Keras 3 does it.
expect_exit 2 "--loader" "$BIN/train_cnn" --data "$WORK/data" --loader tfdata --dry-run
expect_exit 2 "--rescale applies to --loader generator only: image_dataset gives the 0-255 values; put a Rescaling" \
  "$BIN/train_cnn" --data "$WORK/data" --loader image_dataset --rescale 1 --dry-run
expect_exit 2 "--no-augment applies to --loader generator only: image_dataset does no augmentation; augmentation" \
  "$BIN/train_cnn" --data "$WORK/data" --loader image_dataset --no-augment --dry-run
expect_exit 0 "Found 48 files belonging to 2 classes." "$BIN/train_cnn" --data "$WORK/data" \
  --loader image_dataset --target-size 32 --dry-run
# The loader's scaling against the model's own: each mismatch is said (the seed CNN has no Rescaling; the
# recipe CNN has one, which the generator's 1/255 would double). image_dataset's seed is NumPy's 32-bit one.
expect_exit 0 "trains on unscaled pixels" "$BIN/train_cnn" --data "$WORK/data" --loader image_dataset \
  --target-size 32 --dry-run
expect_exit 0 "multiplies the pixels by --rescale" "$BIN/train_cnn" --data "$WORK/data" --target-size 32 --dry-run \
  --model-config "$SRC/apps/train_cnn/keras3_recipe_cnn.json"
# --save-keras's refusals come before training: a TF.js folder for a model with augmentation layers.
expect_exit 1 "TensorFlow.js 4.22 has no such layer" "$BIN/train_cnn" --data "$WORK/data" --loader image_dataset \
  --target-size 32 --epochs 1 --steps-per-epoch 1 --run-dir "$WORK/tfjs_refused" \
  --model-config "$SRC/apps/train_cnn/keras3_recipe_cnn.json" --save-keras "$WORK/tfjs_refused_web/"
grep -q "Epoch 1/1" "$WORK/out" && fail "--save-keras was refused only after training"
expect_exit 2 "--loader image_dataset takes a seed in 0..4294967295" "$BIN/train_cnn" --data "$WORK/data" \
  --loader image_dataset --target-size 32 --seed 4294967297 --dry-run
expect_exit 0 "Found 48 files belonging to 2 classes." "$BIN/train_cnn" --data "$WORK/data" \
  --loader image_dataset --target-size 32 --dry-run --cache --cache-max-mib 1 --sixteen-bit pillow
expect_exit 2 "--sixteen-bit" "$BIN/train_cnn" --data "$WORK/data" --loader image_dataset --sixteen-bit clip --dry-run
expect_exit 2 "--cache-max-mib" "$BIN/train_cnn" --data "$WORK/data" --loader image_dataset --cache-max-mib 8 --dry-run
for cache in "" --cache; do
  expect_exit 0 "val_categorical_accuracy: " "$BIN/train_cnn" --data "$WORK/data" --loader image_dataset \
    --device cpu --epochs 2 --steps-per-epoch 6 --batch-size 8 --target-size 32 --validation-steps 2 \
    --run-dir "$WORK/run_dataset$cache" --seed 1 --no-checkpoint $cache
done
[ "$(cut -d, -f1-5 "$WORK/run_dataset/epochs.csv")" = "$(cut -d, -f1-5 "$WORK/run_dataset--cache/epochs.csv")" ] \
  || { cat "$WORK"/run_dataset*/epochs.csv; fail "--cache changed the image_dataset run's epochs"; }

# --loss: a Keras loss by name or object, recorded in run.json; unknown ones and sparse labels refused.
expect_exit 2 "--loss: unknown loss 'hubber'" "$BIN/train_cnn" --data "$WORK/data" --loss hubber --dry-run
expect_exit 2 "--loss: the loaders give one-hot labels" "$BIN/train_cnn" --data "$WORK/data" \
  --loss sparse_categorical_crossentropy --dry-run
expect_exit 0 "val_categorical_accuracy: " "$BIN/train_cnn" --data "$WORK/data" --device cpu --epochs 1 \
  --steps-per-epoch 2 --batch-size 8 --target-size 32 --validation-steps 1 --run-dir "$WORK/run_loss" --seed 1 \
  --loss '{"class_name": "CategoricalFocalCrossentropy", "config": {"gamma": 1.0}}'
grep -q 'CategoricalFocalCrossentropy' "$WORK/run_loss/run.json" || fail "run.json does not record --loss"
# A resume without --loss trains the checkpoint's loss.
expect_exit 0 "Epoch 2/2" "$BIN/train_cnn" --data "$WORK/data" --device cpu --epochs 2 --steps-per-epoch 2 \
  --batch-size 8 --target-size 32 --validation-steps 1 --run-dir "$WORK/run_loss2" --seed 1 \
  --resume "$WORK/run_loss/model.ckpt" --no-checkpoint
grep -q 'CategoricalFocalCrossentropy' "$WORK/run_loss2/run.json" || fail "the resumed run did not keep the loss"

# --save-keras: the trained model also as a Keras file, which reads back to the checkpoint's predictions;
# a path naming no Keras format is refused at parse.
expect_exit 2 "--save-keras: '$WORK/m.onnx' names no Keras format" "$BIN/train_cnn" --data "$WORK/data" \
  --save-keras "$WORK/m.onnx" --dry-run
expect_exit 0 "Keras file: $WORK/trained.keras (Keras 3 model)" "$BIN/train_cnn" --data "$WORK/data" --device cpu \
  --epochs 1 --steps-per-epoch 2 --batch-size 8 --target-size 32 --validation-steps 1 --run-dir "$WORK/run_keras" \
  --seed 1 --save-keras "$WORK/trained.keras"
# --save-keras refused before training: a TF.js folder that would replace the run folder (written whole), the
# checkpoint's own path, a file in a folder that does not exist.
SMALL=(--device cpu --epochs 1 --steps-per-epoch 1 --batch-size 8 --target-size 32 --validation-steps 1)
expect_exit 2 "would replace --run-dir" "$BIN/train_cnn" --data "$WORK/data" "${SMALL[@]}" --run-dir "$WORK/rk" \
  --save-keras "$WORK/rk/"
expect_exit 2 "is the --checkpoint file" "$BIN/train_cnn" --data "$WORK/data" "${SMALL[@]}" --run-dir "$WORK/rk2" \
  --checkpoint "$WORK/c.keras" --save-keras "$WORK/c.keras"
expect_exit 2 "does not exist" "$BIN/train_cnn" --data "$WORK/data" --save-keras "$WORK/nodir/m.keras" --dry-run
# With Adam's variables after the run's 2 updates: iterations, the rate, momentum and velocity of the seed CNN's
# 10 weights (read with h5py when the machine has it).
if /usr/bin/python3 -c "import h5py" 2>/dev/null; then
  /usr/bin/python3 - "$WORK/trained.keras" <<'PYEOF' || fail "the --save-keras file lacks Adam's variables"
import io, sys, zipfile
import h5py, numpy as np
g = h5py.File(io.BytesIO(zipfile.ZipFile(sys.argv[1]).read("model.weights.h5")), "r")["optimizer/vars"]
assert g.attrs["name"] == "adam" and len(g) == 2 + 2 * 10, (dict(g.attrs), len(g))
assert int(np.array(g["0"])) == 2 and g["0"].dtype == np.int64, np.array(g["0"])
PYEOF
fi
"$BIN/predict_cnn" --model "$WORK/run_keras/model.ckpt" --data "$WORK/data/pred" --output "$WORK/p_ckpt.csv" \
  --rescale 1/255 >/dev/null 2>&1 || fail "predict_cnn with the checkpoint"
"$BIN/predict_cnn" --model "$WORK/trained.keras" --data "$WORK/data/pred" --output "$WORK/p_keras.csv" \
  >/dev/null 2>&1 || fail "predict_cnn with the --save-keras file"
# The same rows, class names included (the Keras file carries them in its torchfit metadata).
[ -s "$WORK/p_ckpt.csv" ] && cmp -s "$WORK/p_ckpt.csv" "$WORK/p_keras.csv" ||
  { diff "$WORK/p_ckpt.csv" "$WORK/p_keras.csv" | head; fail "the Keras file predicts otherwise than the checkpoint"; }

# --optimizer: a Keras optimizer by name or object, recorded in run.json and the checkpoint; unknown names,
# keys and values refused at parse (exit 2 naming --optimizer).
expect_exit 2 "--optimizer: unknown optimizer 'adamx'" "$BIN/train_cnn" --data "$WORK/data" --optimizer adamx --dry-run
expect_exit 2 "--optimizer: optimizer rmsprop: rho must be in" "$BIN/train_cnn" --data "$WORK/data" \
  --optimizer '{"class_name": "RMSprop", "config": {"rho": -0.5}}' --dry-run
expect_exit 2 "unknown field 'momentum'" "$BIN/train_cnn" --data "$WORK/data" \
  --optimizer '{"class_name": "Adagrad", "config": {"momentum": 0.5}}' --dry-run
expect_exit 0 "val_categorical_accuracy: " "$BIN/train_cnn" --data "$WORK/data" --device cpu --epochs 1 \
  --steps-per-epoch 2 --batch-size 8 --target-size 32 --validation-steps 1 --run-dir "$WORK/run_opt" --seed 1 \
  --optimizer '{"class_name": "Nadam", "config": {"learning_rate": 0.002, "beta_2": 0.99}}'
grep -q '"name": *"nadam"' "$WORK/run_opt/run.json" || fail "run.json does not record --optimizer"
grep -q '"beta_2": *0.99' "$WORK/run_opt/run.json" || fail "run.json does not record --optimizer's settings"
# A resume without --optimizer continues the checkpoint's.
expect_exit 0 "Epoch 2/2" "$BIN/train_cnn" --data "$WORK/data" --device cpu --epochs 2 --steps-per-epoch 2 \
  --batch-size 8 --target-size 32 --validation-steps 1 --run-dir "$WORK/run_opt2" --seed 1 \
  --resume "$WORK/run_opt/model.ckpt" --no-checkpoint
grep -q '"name": *"nadam"' "$WORK/run_opt2/run.json" || fail "the resumed run did not keep the optimizer"

# A tiny real run (non-terminal: one line per epoch, no carriage returns).
"$BIN/train_cnn" --data "$WORK/data" --device auto --epochs 2 --steps-per-epoch 3 --batch-size 8 \
  --target-size 32 --validation-steps 2 --run-dir "$WORK/run" --seed 1 >"$WORK/train.log" 2>&1 \
  || { cat "$WORK/train.log"; fail "train_cnn failed"; }
grep -q "^3/3 \[==============================\] - .* - val_categorical_accuracy: " "$WORK/train.log" \
  || { cat "$WORK/train.log"; fail "no final progress line"; }
grep -q $'\r' "$WORK/train.log" && fail "carriage returns in a non-terminal log"
[ "$(wc -l <"$WORK/run/steps.csv")" -eq 7 ] || fail "steps.csv should have 6 rows + header"
[ "$(wc -l <"$WORK/run/epochs.csv")" -eq 3 ] || fail "epochs.csv should have 2 rows + header"
grep -q '"status": "completed"' "$WORK/run/run.json" || fail "run.json not completed"
[ -f "$WORK/run/model.ckpt" ] || fail "no checkpoint"

# Keras checkpoint names: one file per epoch, and the closing line names the last file written.
"$BIN/train_cnn" --data "$WORK/data" --epochs 2 --steps-per-epoch 1 --batch-size 8 --target-size 32 \
  --validation-steps 1 --run-dir "$WORK/named" --checkpoint "$WORK/named/w.{epoch:02d}-{val_loss:.2f}.ckpt" \
  >"$WORK/named.log" 2>&1 || { cat "$WORK/named.log"; fail "train_cnn with a checkpoint pattern failed"; }
[ "$(ls "$WORK/named"/w.0[12]-*.ckpt | wc -l)" -eq 2 ] || { ls "$WORK/named"; fail "not one checkpoint per epoch"; }
last=$(sed -n 's/^Checkpoint: //p' "$WORK/named.log")
[ -f "$last" ] && [[ "$last" == "$WORK/named/w.02-"*.ckpt ]] || fail "Checkpoint: line names '$last'"

# Resume with another seed would not continue the same data stream: refused, naming the difference.
"$BIN/train_cnn" --data "$WORK/data" --epochs 3 --steps-per-epoch 3 --batch-size 8 --target-size 32 \
  --validation-steps 1 --run-dir "$WORK/run2" --resume "$WORK/run/model.ckpt" >"$WORK/reseed.log" 2>&1 \
  && fail "resume with another seed was accepted"
grep -q "seed 1 → 42" "$WORK/reseed.log" || { cat "$WORK/reseed.log"; fail "no seed difference named"; }

# Resume: continues at epoch 3 of 3; an explicit --lr replaces the saved learning rate.
"$BIN/train_cnn" --data "$WORK/data" --epochs 3 --steps-per-epoch 3 --batch-size 8 --target-size 32 --seed 1 \
  --lr 0.0005 --validation-steps 1 --run-dir "$WORK/run2" --resume "$WORK/run/model.ckpt" >"$WORK/resume.log" 2>&1 \
  || { cat "$WORK/resume.log"; fail "resume failed"; }
grep -q "learning rate 0.001 → 0.0005" "$WORK/resume.log" || { cat "$WORK/resume.log"; fail "--lr not applied"; }
grep -q "Epoch 3/3" "$WORK/resume.log" || fail "resume did not start at epoch 3"
grep -q "Epoch 1/3" "$WORK/resume.log" && fail "resume restarted at epoch 1"

# predict_cnn on the unlabelled pred/ folder; pred_labels.csv beside it gives the accuracy.
(cd "$WORK" && "$BIN/predict_cnn" --model run/model.ckpt --data data/pred >"$WORK/pred.log" 2>&1) \
  || { cat "$WORK/pred.log"; fail "predict_cnn failed"; }
grep -q "Predicted 10 images" "$WORK/pred.log" || { cat "$WORK/pred.log"; fail "predict count"; }
grep -q "Accuracy on 10 labelled images" "$WORK/pred.log" || { cat "$WORK/pred.log"; fail "no accuracy"; }
[ "$(wc -l <"$WORK/predictions.csv")" -eq 11 ] || fail "predictions.csv rows"
expect_exit 2 "does not exist" "$BIN/predict_cnn" --model "$WORK/none.ckpt" --data "$WORK/data/pred"
# A file that fails to decode while predicting gets no row (it is never stood in for by another image).
mkdir -p "$WORK/predbad/pred" && cp "$WORK"/data/pred/*.png "$WORK/predbad/pred/"
bad=$(ls "$WORK/predbad/pred" | head -1)
dd if=/dev/zero of="$WORK/predbad/pred/$bad" bs=1 seek=41 count=12 conv=notrunc 2>/dev/null  # the zlib stream
"$BIN/predict_cnn" --model "$WORK/run/model.ckpt" --data "$WORK/predbad/pred" --output "$WORK/predbad.csv" \
  >"$WORK/predbad.log" 2>&1 || { cat "$WORK/predbad.log"; fail "predict_cnn with an undecodable file failed"; }
grep -q "no prediction for .*$bad" "$WORK/predbad.log" || { cat "$WORK/predbad.log"; fail "no warning for $bad"; }
grep -q "^$bad," "$WORK/predbad.csv" && fail "a row for the undecodable $bad"
[ "$(wc -l <"$WORK/predbad.csv")" -eq 10 ] || fail "predbad.csv should hold the 9 decodable images + header"

# Outputs never replace inputs: the checkpoint, an image, a training image.
cp "$WORK/run/model.ckpt" "$WORK/keep.ckpt"
expect_exit 2 "is the --model file: it would be overwritten" "$BIN/predict_cnn" --model "$WORK/keep.ckpt" \
  --data "$WORK/data/pred" --output "$WORK/keep.ckpt"
cmp -s "$WORK/run/model.ckpt" "$WORK/keep.ckpt" || fail "predict_cnn overwrote its --model"
# A checkpoint saved under a Keras-style .h5 name is read as the checkpoint it is; it is not overwritten
# as --load-model's file by --checkpoint, nor an --architecture JSON by --output.
cp "$WORK/run/model.ckpt" "$WORK/keep.h5"
"$BIN/predict_cnn" --model "$WORK/keep.h5" --data "$WORK/data/pred" --output "$WORK/h5.csv" >"$WORK/h5.log" 2>&1 \
  || { cat "$WORK/h5.log"; fail "a checkpoint named .h5 was not read"; }
expect_exit 2 "is the --load-model file: it would be overwritten" "$BIN/train_cnn" --data "$WORK/data" \
  --target-size 32 --load-model "$WORK/keep.h5" --checkpoint "$WORK/keep.h5" --epochs 1 --steps-per-epoch 1
cmp -s "$WORK/run/model.ckpt" "$WORK/keep.h5" || fail "train_cnn overwrote its --load-model"
echo '{}' >"$WORK/arch.json"
expect_exit 2 "is the --architecture file: it would be overwritten" "$BIN/predict_cnn" --model "$WORK/keep.h5" \
  --architecture "$WORK/arch.json" --data "$WORK/data/pred" --output "$WORK/arch.json"
# predict_cnn feeds pixels as the checkpoint's training run did (train_cnn --rescale 1 → 1 by default).
"$BIN/train_cnn" --data "$WORK/data" --target-size 32 --rescale 1 --epochs 1 --steps-per-epoch 1 --validation-steps 1 \
  --batch-size 4 --run-dir "$WORK/raw" >"$WORK/raw.log" 2>&1 || { cat "$WORK/raw.log"; fail "--rescale 1 run failed"; }
expect_exit 0 "rescale=1 (the training run's" "$BIN/predict_cnn" --model "$WORK/raw/model.ckpt" --data "$WORK/data/pred" \
  --output "$WORK/raw_default.csv"
"$BIN/predict_cnn" --model "$WORK/raw/model.ckpt" --data "$WORK/data/pred" --output "$WORK/raw_given.csv" --rescale 1 \
  >/dev/null 2>&1 || fail "predict_cnn --rescale 1 failed"
cmp -s "$WORK/raw_default.csv" "$WORK/raw_given.csv" || fail "the default rescale is not the training run's"
# The checkpoint's preprocessing survives convert_model: a checkpoint copy predicts the same, and the ONNX
# file's metadata carries it; run.json records the factor used, not the help's "1/255".
"$BIN/convert_model" "$WORK/raw/model.ckpt" "$WORK/raw_copy.ckpt" >/dev/null 2>&1 || fail "convert_model copy failed"
expect_exit 0 "rescale=1 (the training run's" "$BIN/predict_cnn" --model "$WORK/raw_copy.ckpt" --data "$WORK/data/pred" \
  --output "$WORK/raw_copy.csv"
cmp -s "$WORK/raw_default.csv" "$WORK/raw_copy.csv" || fail "the converted checkpoint lost the training rescale"
# … and so do the Keras files written from it (.keras, .h5, TF.js): their torchfit metadata holds it.
for out in raw.keras raw.h5 raw_web/; do
  "$BIN/convert_model" "$WORK/raw/model.ckpt" "$WORK/$out" >/dev/null 2>&1 || fail "convert_model $out failed"
  expect_exit 0 "rescale=1 (the training run's" "$BIN/predict_cnn" --model "$WORK/$out" --data "$WORK/data/pred" \
    --output "$WORK/raw_$out.csv"
  cmp -s "$WORK/raw_default.csv" "$WORK/raw_$out.csv" || fail "the Keras file $out lost the training rescale"
done
# An image_dataset run (0-255 values, a Rescaling layer in the model): its Keras file predicts as its
# checkpoint; so does the same file without torchfit's metadata (as Keras writes it), the model scaling
# its own input; before, predict_cnn's 1/255 went on top of the model's Rescaling.
"$BIN/train_cnn" --data "$WORK/data" --loader image_dataset --model-config "$SRC/apps/train_cnn/keras3_recipe_cnn.json" \
  --target-size 32 --epochs 1 --steps-per-epoch 2 --validation-steps 1 --batch-size 4 --run-dir "$WORK/ds" --seed 1 \
  --save-keras "$WORK/ds.keras" >"$WORK/ds.log" 2>&1 || { cat "$WORK/ds.log"; fail "the image_dataset recipe run failed"; }
"$BIN/predict_cnn" --model "$WORK/ds/model.ckpt" --data "$WORK/data/pred" --output "$WORK/ds_ckpt.csv" >/dev/null 2>&1 ||
  fail "predict_cnn with the image_dataset checkpoint"
"$BIN/predict_cnn" --model "$WORK/ds.keras" --data "$WORK/data/pred" --output "$WORK/ds_keras.csv" >/dev/null 2>&1 ||
  fail "predict_cnn with the image_dataset run's Keras file"
cmp -s "$WORK/ds_ckpt.csv" "$WORK/ds_keras.csv" || fail "the image_dataset run's Keras file predicts otherwise"
/usr/bin/python3 - "$WORK/ds.keras" "$WORK/ds_bare.keras" <<'PYEOF' || fail "cannot strip the metadata"
import json, sys, zipfile
src, dst = zipfile.ZipFile(sys.argv[1]), zipfile.ZipFile(sys.argv[2], "w")
for name in src.namelist():
    data = src.read(name)
    if name == "metadata.json":
        meta = json.loads(data)
        assert "torchfit" in meta, meta
        del meta["torchfit"]
        data = json.dumps(meta).encode()
    dst.writestr(name, data)
dst.close()
PYEOF
expect_exit 0 "scales its own input" "$BIN/predict_cnn" --model "$WORK/ds_bare.keras" --data "$WORK/data/pred" \
  --output "$WORK/ds_bare.csv"
tail -n +2 "$WORK/ds_ckpt.csv" | cut -d, -f3- >"$WORK/ds_ckpt.values"
tail -n +2 "$WORK/ds_bare.csv" | cut -d, -f3- >"$WORK/ds_bare.values"  # no class names: columns by index
[ -s "$WORK/ds_ckpt.values" ] && cmp -s "$WORK/ds_ckpt.values" "$WORK/ds_bare.values" ||
  fail "a Keras file whose model scales its own input got predict_cnn's 1/255 on top"
"$BIN/convert_model" "$WORK/raw/model.ckpt" "$WORK/raw.onnx" >/dev/null 2>&1 || fail "convert_model onnx failed"
grep -aq '"rescale":1.0' "$WORK/raw.onnx" || fail "the ONNX metadata lacks the training rescale"
"$BIN/train_cnn" --data "$WORK/data" --target-size 32 --rescale 1/255 --epochs 1 --steps-per-epoch 1 \
  --validation-steps 1 --batch-size 4 --run-dir "$WORK/frac" --no-checkpoint >"$WORK/frac.log" 2>&1 \
  || { cat "$WORK/frac.log"; fail "--rescale 1/255 refused"; }
grep -q '"rescale": 0.00392156862745098' "$WORK/frac/run.json" || fail "run.json does not record the rescale used"
for bad in 0 -1 nan inf 1/0 abc; do
  expect_exit 2 "--rescale: must be a finite number > 0" "$BIN/train_cnn" --data "$WORK/data" --rescale "$bad" --dry-run
  expect_exit 2 "--rescale: must be a finite number > 0" "$BIN/predict_cnn" --model "$WORK/raw/model.ckpt" \
    --data "$WORK/data/pred" --output "$WORK/bad.csv" --rescale "$bad"
done
expect_exit 1 "is a model file (HDF5 or zip" "$BIN/train_cnn" --data "$WORK/data" --model-config "$WORK/keep.h5" --dry-run
# The implicit labels file (<data>_labels.csv) is an input as well: refused, left as it was.
cp "$WORK/data/pred_labels.csv" "$WORK/labels_before.csv"
expect_exit 2 "--output '$WORK/data/pred_labels.csv' is the labels (<data>_labels.csv" "$BIN/predict_cnn" \
  --model "$WORK/keep.ckpt" --data "$WORK/data/pred" --output "$WORK/data/pred_labels.csv"
cmp -s "$WORK/data/pred_labels.csv" "$WORK/labels_before.csv" || fail "predict_cnn overwrote the labels file"
first_image=$(ls "$WORK/data/pred" | head -1)
expect_exit 2 "is a file inside --data" "$BIN/predict_cnn" --model "$WORK/keep.ckpt" --data "$WORK/data/pred" \
  --output "$WORK/data/pred/$first_image"
train_image=$(find "$WORK/data/train" -name '*.png' | head -1)
expect_exit 2 "is a file inside --data" "$BIN/train_cnn" --data "$WORK/data" --target-size 32 --epochs 1 \
  --steps-per-epoch 1 --run-dir "$WORK/overwrite" --checkpoint "$train_image"
expect_exit 2 "is inside --data" "$BIN/train_cnn" --data "$WORK/data" --target-size 32 --epochs 1 \
  --steps-per-epoch 1 --run-dir "$WORK/overwrite" --checkpoint "$(dirname "$train_image")/new.ckpt"
[ -e "$(dirname "$train_image")/new.ckpt" ] && fail "a checkpoint was written among the training images"
expect_exit 2 "--max-image-pixels" "$BIN/predict_cnn" --model "$WORK/run/model.ckpt" --data "$WORK/data/pred" \
  --max-image-pixels -1
expect_exit 1 "image too large: 28 x 28 = 784 pixels" "$BIN/predict_cnn" --model "$WORK/run/model.ckpt" \
  --data "$WORK/data/pred" --max-image-pixels 100
expect_exit 2 "--sixteen-bit" "$BIN/predict_cnn" --model "$WORK/run/model.ckpt" --data "$WORK/data/pred" \
  --sixteen-bit 16
echo "hello" >"$WORK/bad.ckpt"
expect_exit 1 "bad.ckpt" "$BIN/predict_cnn" --model "$WORK/bad.ckpt" --data "$WORK/data/pred"

# Mixed precision: mixed_float16 is refused on the CPU naming the flag; a bf16 run's checkpoint resumes
# under mixed_bfloat16 without the flag, and a flag that changes it is logged.
expect_exit 2 "--mixed-precision" "$BIN/train_cnn" --data "$WORK/data" --mixed-precision bf16
expect_exit 1 "--mixed-precision: dtype policy mixed_float16 on cpu" "$BIN/train_cnn" --data "$WORK/data" \
  --target-size 32 --epochs 1 --steps-per-epoch 1 --mixed-precision mixed_float16 --run-dir "$WORK/f16"
"$BIN/train_cnn" --data "$WORK/data" --target-size 32 --epochs 1 --steps-per-epoch 2 --warmup-steps 0 --validation-steps 1 \
  --mixed-precision mixed_bfloat16 --run-dir "$WORK/bf" >"$WORK/bf.log" 2>&1 || { cat "$WORK/bf.log"; fail "bf16 run failed"; }
grep -q "Dtype policy: mixed_bfloat16" "$WORK/bf.log" || fail "the summary does not show the policy"
grep -q "Timing on cpu (mixed_bfloat16)" "$WORK/bf.log" || fail "the timing line does not name the policy"
grep -q '"compute_dtype": "bfloat16"' "$WORK/bf/run.json" || fail "run.json does not record bfloat16"
"$BIN/train_cnn" --data "$WORK/data" --target-size 32 --epochs 2 --steps-per-epoch 2 --warmup-steps 0 --validation-steps 1 \
  --run-dir "$WORK/bf2" --resume "$WORK/bf/model.ckpt" >"$WORK/bf2.log" 2>&1 || { cat "$WORK/bf2.log"; fail "bf16 resume failed"; }
grep -q "Timing on cpu (mixed_bfloat16)" "$WORK/bf2.log" || { cat "$WORK/bf2.log"; fail "the resume lost the saved policy"; }
"$BIN/train_cnn" --data "$WORK/data" --target-size 32 --epochs 2 --steps-per-epoch 2 --warmup-steps 0 --validation-steps 1 \
  --run-dir "$WORK/bf3" --resume "$WORK/bf/model.ckpt" --mixed-precision float32 >"$WORK/bf3.log" 2>&1 \
  || { cat "$WORK/bf3.log"; fail "resume with --mixed-precision float32 failed"; }
grep -q "dtype policy mixed_bfloat16 (from the checkpoint" "$WORK/bf3.log" || { cat "$WORK/bf3.log"; fail "the policy change was not logged"; }
grep -q "Timing on cpu (float32)" "$WORK/bf3.log" || fail "--mixed-precision float32 was not applied"
echo "PASS"
