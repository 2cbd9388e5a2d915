#!/usr/bin/env bash
# Every training setting survives --resume: for each train_cnn option docs/reliability.md lists ("What a
# resume keeps") and for all of them together, 1 epoch + --resume (no option repeated) ends bit for bit
# where 2 epochs in one run end (the checkpoints' weights, EMA averages, accumulators and optimizer state,
# read by PyTorch; the epoch-2 rows of steps.csv). And a resume that changes a setting is decided before
# anything runs: applied and logged once, or refused with exit 2 naming the flag.
set -uo pipefail
TEST_NAME=resume_settings source "$(dirname "$0")/common.sh"

if [ ! -f /usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz ]; then
  echo "SKIP: dataset-fashion-mnist not installed"; exit 0
fi
/usr/bin/python3 -c "import torch" 2>/dev/null || { echo "SKIP: PyTorch (python3-torch) not importable"; exit 0; }
"$BIN/prepare_data" --output "$WORK/data" --images-per-class 12 --classes 3 --pred-count 3 >/dev/null \
  || fail "prepare_data failed"
C=(--data "$WORK/data" --target-size 16 --batch-size 8 --steps-per-epoch 3 --validation-steps 1 --seed 3
   --threads 1 --workers 1 --verbose 0)
echo '{"T-shirt_top": 3.0, "Trouser": 0.5, "Pullover": 1.25}' >"$WORK/weights.json"

# same_run NAME: the checkpoints of $WORK/NAME.whole and $WORK/NAME.part hold the same tensors, bit for bit.
same_run() {
  /usr/bin/python3 - "$WORK/$1.whole/model.ckpt" "$WORK/$1.part/model.ckpt" <<'PY'
import sys, torch
def tensors(path):
    m = torch.jit.load(path)
    out = {}
    for part in ("weights", "optimizer_slots"):
        if hasattr(m, part):
            for k, v in getattr(m, part).named_parameters():
                out[part + "/" + k] = v
            for k, v in getattr(m, part).named_buffers():
                out[part + "/" + k] = v
    # The optimizer's state, per parameter in order (its archive names them by address).
    group = getattr(m.optimizer.param_groups, "param_groups/0")._c
    for i in range(int(group.getattr("params/size"))):
        key = group.getattr(f"params/{i}")
        if not hasattr(m.optimizer, "state") or not hasattr(m.optimizer.state, key):
            out[f"optimizer/{i}"] = "no state"  # a parameter without gradients (frozen, or not reached)
            continue
        state = getattr(m.optimizer.state, key)._c
        for name in ("step", "exp_avg", "exp_avg_sq", "max_exp_avg_sq"):
            if state.hasattr(name):
                out[f"optimizer/{i}/{name}"] = state.getattr(name)
    return out
a, b = tensors(sys.argv[1]), tensors(sys.argv[2])
assert a.keys() == b.keys(), (sorted(a), sorted(b))
def same(x, y):
    return torch.equal(x, y) if isinstance(x, torch.Tensor) else x == y
def gap(x, y):
    return f"max {(x - y).abs().max().item():.3g}" if isinstance(x, torch.Tensor) else f"{x} vs {y}"
bad = [k for k in a if not same(a[k], b[k])]
assert not bad, "differ: " + ", ".join(f"{k} ({gap(a[k], b[k])})" for k in bad)
print(f"{len(a)} tensors equal")
PY
}

# check NAME FLAGS...: 2 epochs with FLAGS; 1 epoch with FLAGS, then --resume without them to epoch 2
# (with $REPEAT, the data-stream flags a resume must repeat: a different stream is refused).
REPEAT=()
check() {
  local name=$1; shift
  "$BIN/train_cnn" "${C[@]}" --epochs 2 "$@" --run-dir "$WORK/$name.whole" >"$WORK/$name.whole.log" 2>&1 \
    || { cat "$WORK/$name.whole.log"; fail "$name: 2 epochs failed"; }
  "$BIN/train_cnn" "${C[@]}" --epochs 1 "$@" --run-dir "$WORK/$name.part" >/dev/null 2>&1 || fail "$name: epoch 1 failed"
  "$BIN/train_cnn" "${C[@]}" --epochs 2 "${REPEAT[@]}" --run-dir "$WORK/$name.part" \
    --resume "$WORK/$name.part/model.ckpt" >"$WORK/$name.resume.log" 2>&1 || { cat "$WORK/$name.resume.log"; fail "$name: the resume failed"; }
  grep -E "optimizer settings|resume: class_weight|dtype policy .* → " "$WORK/$name.resume.log" \
    && fail "$name: the resume changed a setting it was not asked to"
  diff <(grep '^2,' "$WORK/$name.whole/steps.csv" | cut -d, -f1,2,7-) \
       <(grep '^2,' "$WORK/$name.part/steps.csv" | cut -d, -f1,2,7-) || fail "$name: epoch 2 losses differ"
  local result
  result=$(same_run "$name" 2>&1) || { echo "$result"; fail "$name: resumed != uninterrupted"; }
  echo "$name: resume == uninterrupted ($result)"
}

check plain
check ema --ema --ema-momentum 0.5
check class_weight --class-weight "$WORK/weights.json"
check cosine --lr 0.01 --lr-schedule cosine --lr-warmup-steps 2 --decay-steps 4 --alpha 0.1
check exponential --lr 0.01 --lr-schedule exponential --decay-steps 2 --decay-rate 0.5
check piecewise --lr-schedule piecewise --lr-boundaries 2,4 --lr-values 0.01,0.005,0.001
check accumulation --gradient-accumulation-steps 2   # 3 batches an epoch: the resume is mid-accumulation
check clipnorm --clipnorm 0.05
check clipvalue --clipvalue 0.001
check global_clipnorm --global-clipnorm 0.05
check weight_decay --weight-decay 0.05
REPEAT=(--no-augment)
check no_augment --no-augment
REPEAT=()
expect_exit 1 "the training data differs (augmentation " "$BIN/train_cnn" "${C[@]}" --epochs 3 \
  --run-dir "$WORK/refused" --resume "$WORK/plain.part/model.ckpt" --no-augment
check functional --model-config "$SRC/apps/train_cnn/branches_cnn.json"
check frozen --load-model "$WORK/plain.whole/model.ckpt" --freeze-base
if "$BIN/train_cnn" "${C[@]}" --mixed-precision mixed_bfloat16 --dry-run >/dev/null 2>&1; then
  check bfloat16 --mixed-precision mixed_bfloat16
else
  echo "bfloat16: skipped (mixed_bfloat16 is not supported on this CPU)"
fi
check together --ema --ema-momentum 0.8 --class-weight "$WORK/weights.json" --clipnorm 0.5 --weight-decay 0.01 \
  --gradient-accumulation-steps 2 --lr 0.01 --lr-schedule cosine --lr-warmup-steps 1 --decay-steps 3

# The EMA run's final checkpoint: the averages for predict_cnn, the trained weights for --resume.
grep -q "holds the averaged weights (what predict_cnn loads); --resume continues from the trained weights" \
  "$WORK/ema.resume.log" || { cat "$WORK/ema.resume.log"; fail "the EMA line"; }

# A change on resume, decided before anything runs. --lr on a cosine schedule: the schedule's rate (its
# warm-up target), said once, and the run goes on.
R=(--epochs 3 --run-dir "$WORK/changed" --resume "$WORK/cosine.part/model.ckpt")
"$BIN/train_cnn" "${C[@]}" "${R[@]}" --lr 0.5 >"$WORK/lr.log" 2>&1 || { cat "$WORK/lr.log"; fail "--lr on a schedule"; }
[ "$(grep -c "0.01 → 0.5" "$WORK/lr.log")" -eq 1 ] || { cat "$WORK/lr.log"; fail "--lr: not said exactly once"; }
grep -q "optimizer settings learning_rate.config.warmup_target 0.01 → 0.5$" "$WORK/lr.log" \
  || { cat "$WORK/lr.log"; fail "--lr: the change is not named"; }
/usr/bin/python3 -c "
import json, sys
c = json.load(open('$WORK/changed/run.json'))['compile']['optimizer_config']['learning_rate']['config']
assert c['warmup_target'] == 0.5 and c['decay_steps'] == 4 and c['alpha'] == 0.1, c" || fail "--lr: run.json"
# --lr-schedule of the saved name changes only the settings given.
"$BIN/train_cnn" "${C[@]}" "${R[@]}" --lr-schedule cosine --decay-steps 8 >"$WORK/decay.log" 2>&1 \
  || { cat "$WORK/decay.log"; fail "--decay-steps on resume"; }
grep -q "optimizer settings learning_rate.config.decay_steps 4 → 8$" "$WORK/decay.log" \
  || { cat "$WORK/decay.log"; fail "--decay-steps: the change is not named"; }
# Refused with exit 2, the flag first, before the header or any Found line.
expect_exit 2 "^train_cnn: --lr with --resume '.*': the checkpoint follows a piecewise schedule" \
  "$BIN/train_cnn" "${C[@]}" "${R[@]/cosine.part/piecewise.part}" --lr 0.5
grep -q "Found\|torchfit " "$WORK/out" && { cat "$WORK/out"; fail "--lr on piecewise: refused after starting"; }
expect_exit 2 "^train_cnn: --lr-schedule piecewise with --resume '.*': " \
  "$BIN/train_cnn" "${C[@]}" "${R[@]/cosine.part/piecewise.part}" --lr-schedule piecewise --lr-values 0.1,0.2
expect_exit 2 "^train_cnn: --decay-rate: the cosine schedule has no such setting" \
  "$BIN/train_cnn" "${C[@]}" "${R[@]}" --lr-schedule cosine --decay-rate 0.5
expect_exit 2 "^train_cnn: --lr: the piecewise schedule has no such setting" \
  "$BIN/train_cnn" "${C[@]}" --epochs 1 --lr 0.1 --lr-schedule piecewise --lr-boundaries 2 --lr-values 0.1,0.01 \
  --dry-run
# Class weights given on resume replace the saved ones, said once.
"$BIN/train_cnn" "${C[@]}" --epochs 3 --run-dir "$WORK/cw" --resume "$WORK/class_weight.part/model.ckpt" \
  --class-weight balanced >"$WORK/cw.log" 2>&1 || { cat "$WORK/cw.log"; fail "--class-weight on resume"; }
[ "$(grep -c "class_weight \[1.25,3.0,0.5\] → \[1.0,1.0,1.0\]" "$WORK/cw.log")" -eq 1 ] \
  || { cat "$WORK/cw.log"; fail "--class-weight: the change is not said once"; }
echo "PASS"
