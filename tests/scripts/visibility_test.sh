#!/usr/bin/env bash
# train_cnn's Keras options end to end on real Fashion-MNIST images: --tensorboard with --metrics
# accuracy,precision,recall,auc writes event files whose values equal epochs.csv (independent reader);
# --class-weight, clipping, weight decay, EMA, accumulation and a schedule are recorded in run.json and
# survive --resume; bad values exit 2 naming the flag; predict_cnn's report.json equals scikit-learn's.
set -uo pipefail
TEST_NAME=visibility source "$(dirname "$0")/common.sh"

if [ ! -f /usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz ]; then
  echo "SKIP: dataset-fashion-mnist not installed"; exit 0
fi
"$BIN/prepare_data" --output "$WORK/data" --images-per-class 24 --classes 3 --pred-count 30 >/dev/null \
  || fail "prepare_data failed"
common=(--data "$WORK/data" --target-size 32 --batch-size 8 --steps-per-epoch 4 --validation-steps 0 --seed 3)

expect_exit 2 "--clipvalue" "$BIN/train_cnn" "${common[@]}" --clipnorm 1 --clipvalue 1 --dry-run
expect_exit 2 "--gradient-accumulation-steps" "$BIN/train_cnn" "${common[@]}" --gradient-accumulation-steps 1 --dry-run
expect_exit 2 "--lr-schedule" "$BIN/train_cnn" "${common[@]}" --lr-schedule linear --dry-run
expect_exit 2 "--ema-momentum" "$BIN/train_cnn" "${common[@]}" --ema-momentum 0.5 --dry-run
expect_exit 2 "^train_cnn: --gradient-accumulation-steps: 9 is more than the run's 8 batches" "$BIN/train_cnn" \
  "${common[@]}" --epochs 2 --gradient-accumulation-steps 9 --dry-run
expect_exit 0 "warmup_steps 8 reaches past the run's 8 weight updates" "$BIN/train_cnn" "${common[@]}" \
  --epochs 2 --lr-schedule cosine --lr-warmup-steps 8 --dry-run
# Schedule flags: each belongs to its schedule; boundaries are strict whole numbers.
expect_exit 2 "^train_cnn: --lr-warmup-steps: the exponential schedule has no such setting" "$BIN/train_cnn" \
  "${common[@]}" --lr-schedule exponential --lr-warmup-steps 3 --dry-run
expect_exit 2 "--decay-rate: the cosine schedule" "$BIN/train_cnn" "${common[@]}" --lr-schedule cosine \
  --decay-rate 0.5 --dry-run
expect_exit 2 "--alpha: the exponential schedule" "$BIN/train_cnn" "${common[@]}" --lr-schedule exponential \
  --alpha 0.1 --dry-run
expect_exit 2 "--lr-boundaries: the cosine schedule" "$BIN/train_cnn" "${common[@]}" --lr-schedule cosine \
  --lr-boundaries 2 --lr-values 1e-3,1e-4 --dry-run
for bad in 99999999999999999999 2.5 -2 "2," "2,,3" "3,2" 0; do
  expect_exit 2 "^train_cnn: --lr-boundaries: " "$BIN/train_cnn" "${common[@]}" --lr-schedule piecewise \
    --lr-boundaries "$bad" --lr-values 1e-3,1e-4 --dry-run
done
expect_exit 2 "^train_cnn: --lr-schedule piecewise: .*needs one more value than boundaries (got 2 boundaries, 2 values)" "$BIN/train_cnn" "${common[@]}" --lr-schedule piecewise \
  --lr-boundaries 2,4 --lr-values 1e-3,1e-4 --dry-run
expect_exit 2 "^--metrics: unknown metric 'precison'" "$BIN/train_cnn" "${common[@]}" --epochs 1 \
  --metrics precison --run-dir "$WORK/bad"
expect_exit 2 "^--metrics: metric 'accuracy' is named twice" "$BIN/train_cnn" "${common[@]}" \
  --metrics accuracy,accuracy --dry-run
expect_exit 0 "Total params" "$BIN/train_cnn" "${common[@]}" --metrics "accuracy, auc" --dry-run
for freq in 0 -1 foo; do
  expect_exit 2 "--update-freq" "$BIN/train_cnn" "${common[@]}" --tensorboard "$WORK/tbbad" --update-freq "$freq" \
    --dry-run
done
# --class-weight: every error exits 2 before training, starting with the flag.
echo '{"0": 1, "1": 1}' >"$WORK/missing_class.json"
echo 'not json' >"$WORK/not_json.json"
for bad in "" Balanced "$WORK/nope.json" "$WORK" "$WORK/missing_class.json" "$WORK/not_json.json"; do
  expect_exit 2 "^train_cnn: --class-weight: " "$BIN/train_cnn" "${common[@]}" --class-weight "$bad" --dry-run
done

"$BIN/train_cnn" "${common[@]}" --epochs 3 --metrics accuracy,precision,recall,auc --tensorboard "$WORK/tb" \
  --update-freq 2 --run-dir "$WORK/run" >"$WORK/train.log" 2>&1 || { cat "$WORK/train.log"; fail "train_cnn failed"; }
grep -q "val_auc: " "$WORK/train.log" || { cat "$WORK/train.log"; fail "no val_auc in the progress line"; }
head -1 "$WORK/run/epochs.csv" | grep -q "precision,recall,auc" || fail "epochs.csv lacks the metric columns"
/usr/bin/python3 "$SRC/tests/scripts/visibility_check.py" tensorboard "$WORK/run" "$WORK/tb" >"$WORK/check" 2>&1
rc=$?
cat "$WORK/check"
[ "$rc" -eq 77 ] && { echo "SKIP: scikit-learn (python3-sklearn) not importable"; exit 0; }
[ "$rc" -eq 0 ] || fail "the TensorBoard files differ from epochs.csv"
ls "$WORK/tb/train/"events.out.tfevents.* >/dev/null || fail "no train event file"

# predict_cnn: report.json next to predictions.csv equals scikit-learn's report on the same predictions.
"$BIN/predict_cnn" --model "$WORK/run/model.ckpt" --data "$WORK/data/pred" --output "$WORK/predicted/predictions.csv" \
  >"$WORK/pred.log" 2>&1 || { cat "$WORK/pred.log"; fail "predict_cnn failed"; }
grep -q "weighted avg" "$WORK/pred.log" || { cat "$WORK/pred.log"; fail "no classification report printed"; }
/usr/bin/python3 "$SRC/tests/scripts/visibility_check.py" report "$WORK/predicted/predictions.csv" \
  "$WORK/data/pred_labels.csv" "$WORK/predicted/report.json" || fail "report.json differs from scikit-learn"

# The optimizer options: recorded, and a resumed run ends where one uninterrupted run does.
opts=(--class-weight balanced --clipnorm 1.0 --weight-decay 0.004 --ema --ema-momentum 0.9
      --gradient-accumulation-steps 3 --lr-schedule cosine --lr-warmup-steps 1 --decay-steps 4)
"$BIN/train_cnn" "${common[@]}" --epochs 2 "${opts[@]}" --run-dir "$WORK/whole" >"$WORK/whole.log" 2>&1 \
  || { cat "$WORK/whole.log"; fail "train_cnn with the optimizer options failed"; }
"$BIN/train_cnn" "${common[@]}" --epochs 1 "${opts[@]}" --run-dir "$WORK/part" >/dev/null 2>&1 || fail "part 1 failed"
# The resume repeats none of the optimizer flags: the checkpoint's options, schedule and EMA hold.
"$BIN/train_cnn" "${common[@]}" --epochs 2 --class-weight balanced --run-dir "$WORK/part" \
  --resume "$WORK/part/model.ckpt" >"$WORK/resume.log" 2>&1 || { cat "$WORK/resume.log"; fail "resume failed"; }
grep -q "optimizer settings" "$WORK/resume.log" && { cat "$WORK/resume.log"; fail "the resume changed the options"; }
expect_exit 2 "--gradient-accumulation-steps with --resume .*: the checkpoint is in the middle of an accumulation" \
  "$BIN/train_cnn" "${common[@]}" --epochs 2 --run-dir "$WORK/part2" --resume "$WORK/part/model.ckpt" \
  --gradient-accumulation-steps 2
/usr/bin/python3 - "$WORK/whole/run.json" "$WORK/part/run.json" <<'PY' || fail "run.json"
import json, sys
whole, part = (json.load(open(p)) for p in sys.argv[1:3])
c = whole["compile"]["optimizer_config"]
assert c["clipnorm"] == 1.0 and c["weight_decay"] == 0.004 and c["use_ema"] and c["ema_momentum"] == 0.9, c
assert c["gradient_accumulation_steps"] == 3 and c["learning_rate"]["class_name"] == "CosineDecay", c
assert c["learning_rate"]["config"]["warmup_steps"] == 1, c
assert len(whole["compile"]["class_weight"]) == 3, whole["compile"]
assert whole["arguments"]["class_weight"] == "balanced"
assert whole["optimizer_state"]["iterations"] == 2 and whole["optimizer_state"]["accumulated"] == 2, whole["optimizer_state"]
assert part["optimizer_state"] == whole["optimizer_state"], (part["optimizer_state"], whole["optimizer_state"])
w, p = whole["final_metrics"], part["final_metrics"]
assert w["val_loss"] == p["val_loss"] and w["loss"] == p["loss"], (w, p)
print("run.json: options recorded; resumed run ends with the uninterrupted run's values")
PY
echo "PASS"
