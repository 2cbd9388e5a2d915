#!/usr/bin/env bash
# fit_arrays end to end (docs/training.md, "Arrays"): scikit-learn's diabetes data as .npy files, a Dense
# regression fitted with Keras's validation_split; the validation MSE must beat predicting the training
# mean (the floor scripts/diabetes_arrays.py prints), and bad input exits with a message naming it.
set -uo pipefail
TEST_NAME=fit_arrays source "$(dirname "$0")/common.sh"
/usr/bin/python3 -c "import sklearn, numpy" 2>/dev/null || { echo "SKIP: python3-sklearn not importable"; exit 0; }
/usr/bin/python3 "$SRC/scripts/diabetes_arrays.py" "$WORK" >"$WORK/floor" || fail "diabetes_arrays.py failed"
cat "$WORK/floor"
mean_mse=$(sed -n 's/^predicting the training mean: val_mse \([0-9.]*\).*/\1/p' "$WORK/floor")
F=("$BIN/fit_arrays" --model-config dense_regression.json --y "$WORK/y.npy" --threads 1
   --validation-split 0.2 --loss mse --metrics mae --optimizer adam --lr 0.003 --epochs 40 --verbose 2)
"${F[@]}" --x "$WORK/x.npy" >"$WORK/out" 2>&1 || { cat "$WORK/out"; fail "fit_arrays exited $?"; }
grep -q "^12/12 - .* - loss: .* - mae: .* - val_loss: .* - val_mae: " "$WORK/out" || { cat "$WORK/out"; fail "no Keras progress line"; }
val=$(sed -n 's/^final:.* val_loss \([0-9.e+]*\).*/\1/p' "$WORK/out")
[ -n "$val" ] || { cat "$WORK/out"; fail "no final val_loss"; }
awk -v v="$val" -v m="$mean_mse" 'BEGIN { exit !(v < 0.7 * m) }' || fail "val_loss $val is not below 0.7 x the mean's $mean_mse"
# Sample weights of another length, a split outside (0, 1), an unreadable array file.
/usr/bin/python3 -c "import numpy as np; np.save('$WORK/w.npy', np.ones(100, dtype='<f4'))"
expect_exit 1 "x has 442 samples but sample_weight has 100" "${F[@]}" --x "$WORK/x.npy" --sample-weight "$WORK/w.npy"
expect_exit 2 "validation-split" "${F[@]}" --x "$WORK/x.npy" --validation-split 1.5
head -c 60 "$WORK/x.npy" >"$WORK/cut.npy"
expect_exit 1 "cut.npy" "${F[@]}" --x "$WORK/cut.npy"
# Two outputs (docs/training.md, "Several inputs and outputs"): Fashion-MNIST's class and footwear heads on
# 3,000 real training images, Keras 3's log names, both heads above their trivial floors on 1,000 test images.
FA="$WORK/fashion"
/usr/bin/python3 "$SRC/scripts/fashion_arrays.py" "$FA" --train 3000 --test 1000 || fail "fashion_arrays.py failed"
T=("$BIN/fit_arrays" --model-config fashion_two_heads.json --threads 2 --batch-size 32 --epochs 2 --verbose 2
   --x "$FA/x_train.npy" --y "$FA/cls_train.npy" --y "$FA/footwear_train.npy"
   --validation-x "$FA/x_test.npy" --validation-y "$FA/cls_test.npy" --validation-y "$FA/footwear_test.npy"
   --output-metrics '{"cls": "accuracy", "footwear": "accuracy"}')
"${T[@]}" --loss '["sparse_categorical_crossentropy", "binary_crossentropy"]' --loss-weights '[1.0, 0.5]' \
  --save "$WORK/two.ckpt" >"$WORK/two" 2>&1 || { cat "$WORK/two"; fail "fit_arrays with two outputs exited $?"; }
cat "$WORK/two"
grep -q "^94/94 - .* - loss: .* - cls_accuracy: .* - footwear_accuracy: .* - cls_loss: .* - footwear_loss: .* - val_loss: .* - val_cls_accuracy: .* - val_footwear_loss: " "$WORK/two" \
  || fail "no progress line with Keras 3's per-output names"
cls_acc=$(sed -n 's/^final:.* val_cls_accuracy \([0-9.e+-]*\).*/\1/p' "$WORK/two")
foot_acc=$(sed -n 's/^final:.* val_footwear_accuracy \([0-9.e+-]*\).*/\1/p' "$WORK/two")
awk -v c="$cls_acc" -v f="$foot_acc" 'BEGIN { exit !(c > 0.6 && f > 0.9) }' \
  || fail "val_cls_accuracy $cls_acc (10 classes: chance 0.1) or val_footwear_accuracy $foot_acc (floor 0.7) too low"
expect_exit 1 "output_losses has 1 entries but the model has 2 outputs ('cls', 'footwear')" "${T[@]}" --loss '["mse"]'
expect_exit 1 "names the output 'shoes', which the model does not have" "${T[@]}" --loss '{"shoes": "mse"}'
expect_exit 2 "--loss-weights: not valid JSON" "${T[@]}" --loss-weights '[1,'
expect_exit 1 "but the batch has 1 targets" "$BIN/fit_arrays" --model-config fashion_two_heads.json --epochs 1 \
  --x "$FA/x_test.npy" --y "$FA/cls_test.npy" --loss sparse_categorical_crossentropy
expect_exit 2 "--metrics and --output-metrics are both given" "${T[@]}" --metrics accuracy,accuracy
grep -q "^target footwear <- $FA/footwear_train.npy" "$WORK/two" || fail "fit_arrays does not say which --y is which output"
# The two-head model saved (--save) and predicted by predict_cnn from PNG files of 40 test images: the class
# columns and then a "footwear" column, which must agree with the labels (sandal, sneaker, ankle boot).
grep -q "^saved $WORK/two.ckpt (torchfit checkpoint)" "$WORK/two" || fail "fit_arrays --save did not say it saved"
/usr/bin/python3 - "$FA" "$WORK/pred" <<'PY' || fail "writing the PNG test images failed"
import os, sys
import numpy as np
from PIL import Image
fa, out = sys.argv[1:]
os.makedirs(out, exist_ok=True)
x, cls = np.load(fa + "/x_test.npy"), np.load(fa + "/cls_test.npy")
with open(out + "_labels.txt", "w") as f:
    for i in range(40):
        Image.fromarray(np.round(x[i, :, :, 0] * 255).astype(np.uint8), "L").save(f"{out}/{i:03d}.png")
        f.write(f"{i:03d}.png {int(cls[i] in (5, 7, 9))}\n")
PY
"$BIN/predict_cnn" --model "$WORK/two.ckpt" --data "$WORK/pred" --rescale 0.00392156862745098 --output "$WORK/pred.csv" \
  >"$WORK/pred_out" 2>&1 || { cat "$WORK/pred_out"; fail "predict_cnn on the two-head checkpoint exited $?"; }
head -1 "$WORK/pred.csv" | grep -q "^file,class,probability,0,1,2,3,4,5,6,7,8,9,footwear$" \
  || { head -2 "$WORK/pred.csv"; fail "predictions.csv lacks the footwear column after the class columns"; }
agree=$(/usr/bin/python3 -c "
import csv
truth = dict(l.split() for l in open('$WORK/pred_labels.txt'))
rows = list(csv.DictReader(open('$WORK/pred.csv')))
print(sum((float(r['footwear']) > 0.5) == (truth[r['file']] == '1') for r in rows), len(rows))")
[ "$agree" = "$(echo "$agree" | awk '$1 >= 36 && $2 == 40 {print}')" ] && [ -n "$agree" ] \
  || fail "predict_cnn's footwear column agrees with the labels on only '$agree' of 40 images"
# Segmentation (docs/training.md, "Segmentation"): a U-Net (UpSampling2D, Conv2DTranspose, Concatenate) on the
# 3,000 images' garment masks, per-pixel sparse cross-entropy with MeanIoU; per-pixel sample weights (garment
# pixels count twice) and a weighted accuracy beside the plain one. Floor: val MeanIoU 0.9 (background alone
# gives about 0.27; the bare pixel threshold, which the masks extend, 0.977 — docs/training.md).
/usr/bin/python3 -c "import numpy as np; m = np.load('$FA/mask_train.npy'); np.save('$WORK/pw.npy', (1 + m).astype('<f4'))"
IOU='{"class_name": "MeanIoU", "config": {"num_classes": 2, "sparse_y_pred": false}}'
U=("$BIN/fit_arrays" --model-config fashion_unet.json --threads 2 --batch-size 32 --epochs 2 --verbose 2
   --x "$FA/x_train.npy" --y "$FA/mask_train.npy" --validation-x "$FA/x_test.npy" --validation-y "$FA/mask_test.npy"
   --loss sparse_categorical_crossentropy --metrics "accuracy,$IOU")
"${U[@]}" --sample-weight "$WORK/pw.npy" --weighted-metrics accuracy >"$WORK/unet" 2>&1 \
  || { cat "$WORK/unet"; fail "fit_arrays with the U-Net exited $?"; }
cat "$WORK/unet"
grep -q "^94/94 - .* - loss: .* - accuracy: .* - mean_io_u: .* - weighted_accuracy: .* - val_loss: .* - val_mean_io_u: " \
  "$WORK/unet" || fail "no Keras progress line with the weighted metric after the plain ones"
iou=$(sed -n 's/^final:.* val_mean_io_u \([0-9.e+-]*\).*/\1/p' "$WORK/unet")
awk -v v="$iou" 'BEGIN { exit !(v > 0.9) }' || fail "val_mean_io_u '$iou' is not above 0.9"
/usr/bin/python3 -c "import numpy as np; np.save('$WORK/pw_bad.npy', np.ones((3000, 27, 28), dtype='<f4'))"
expect_exit 1 "does not fit" "${U[@]}" --sample-weight "$WORK/pw_bad.npy"
# --save is checked before training; class ids beyond the output's classes name both.
expect_exit 2 "is a directory; give a file path" "${U[@]}" --save "$WORK"
/usr/bin/python3 -c "import numpy as np; m = np.load('$FA/mask_train.npy'); m[7, 3, 3] = 5; np.save('$WORK/mask5.npy', m)"
expect_exit 1 "a target class id is 5 but the output" "$BIN/fit_arrays" --model-config fashion_unet.json --epochs 1 \
  --x "$FA/x_train.npy" --y "$WORK/mask5.npy" --loss sparse_categorical_crossentropy --metrics accuracy
echo "PASS"
