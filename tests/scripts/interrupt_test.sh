#!/usr/bin/env bash
# Faults on a real training run (train_cnn on a small prepared Fashion-MNIST set):
#  1. SIGKILL ten times at varied moments while checkpoints are written every step: after each kill the
#     newest checkpoint loads (never a partial file), and the run resumes from it.
#  2. SIGINT: stops after the current step, writes a checkpoint, says where, exits 130; resuming continues
#     at that step.
#  3. Two SIGINTs at once are one graceful interrupt (a later second one exits at once: interrupt_test.cpp).
set -uo pipefail
TEST_NAME=interrupt source "$(dirname "$0")/common.sh"
if [ ! -f /usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz ]; then
  echo "SKIP: dataset-fashion-mnist not installed"; exit 0
fi
"$BIN/prepare_data" --output "$WORK/data" --images-per-class 40 --classes 2 --pred-count 4 >/dev/null || fail "prepare_data"
COMMON=("$BIN/train_cnn" --data "$WORK/data" --device cpu --steps-per-epoch 20 --batch-size 8
        --target-size 24 --validation-steps 1 --workers 1 --seed 3 --verbose 2)
TRAIN=("${COMMON[@]}" --epochs 50)

# 1. Hard kills.
ck="$WORK/kill/model.ckpt"
for i in 1 2 3 4 5 6 7 8 9 10; do
  resume=(); [ -f "$ck" ] && resume=(--resume "$ck")
  "${TRAIN[@]}" --run-dir "$WORK/kill/run$i" --checkpoint "$ck" --checkpoint-every 1 "${resume[@]}" \
    >"$WORK/kill$i.log" 2>&1 &
  pid=$!
  wait_rows "$WORK/kill/run$i/steps.csv" 2 60 || { cat "$WORK/kill$i.log"; fail "run $i did not start"; }
  sleep "0.$((RANDOM % 9 + 1))"
  kill -9 "$pid"; wait "$pid" 2>/dev/null
  [ -f "$ck" ] || fail "no checkpoint after kill $i"
  "$BIN/train_cnn" --data "$WORK/data" --target-size 24 --resume "$ck" --dry-run >"$WORK/load$i.log" 2>&1 \
    || { cat "$WORK/load$i.log"; fail "checkpoint unreadable after kill $i"; }
  left=$(ls -A "$WORK/kill" | grep -c tmp)
  [ "$left" -le 1 ] || fail "$left temporary files accumulate beside the checkpoint"
  echo "kill $i: checkpoint loads ($left temporary file of the killed writer left beside it)"
done

# 2. SIGINT: graceful stop with a checkpoint, exit 130, resume at that step.
"${TRAIN[@]}" --run-dir "$WORK/int/run" --checkpoint "$WORK/int/model.ckpt" >"$WORK/int.log" 2>&1 &
pid=$!
wait_rows "$WORK/int/run/steps.csv" 4 60 || { cat "$WORK/int.log"; fail "SIGINT run did not start"; }
kill -INT "$pid"; wait "$pid"; rc=$?
[ "$rc" -eq 130 ] || { cat "$WORK/int.log"; fail "SIGINT exit status $rc, expected 130"; }
grep -q "checkpoint written to $WORK/int/model.ckpt" "$WORK/int.log" || { cat "$WORK/int.log"; fail "no checkpoint message"; }
grep -q '"status": "interrupted"' "$WORK/int/run/run.json" || fail "run.json status"
rows=$(($(wc -l <"$WORK/int/run/steps.csv") - 1))
# On a busy machine the stop may come after the first epoch (20 steps): resume to the end of its epoch.
"${COMMON[@]}" --epochs $((rows / 20 + 1)) --run-dir "$WORK/int/run2" --resume "$WORK/int/model.ckpt" \
  >"$WORK/int2.log" 2>&1 || { cat "$WORK/int2.log"; fail "resume after SIGINT"; }
first=$(sed -n 2p "$WORK/int/run2/steps.csv" | cut -d, -f2)
[ "$first" -eq $((rows % 20 + 1)) ] || fail "resume started at step $first, expected $((rows % 20 + 1))"
echo "SIGINT after $rows steps: exit 130, checkpoint written, resumed at step $first"

# 3. Two SIGINTs at once (a terminal's Ctrl-C reaching torchrun and the worker, then forwarded again by
#    torchrun) are one interrupt: the graceful stop with its checkpoint, exit 130.
"${TRAIN[@]}" --run-dir "$WORK/int3/run" --checkpoint "$WORK/int3/model.ckpt" >"$WORK/int3.log" 2>&1 &
pid=$!
wait_rows "$WORK/int3/run/steps.csv" 2 60 || fail "third run did not start"
kill -INT "$pid"; kill -INT "$pid"; wait "$pid"; rc=$?
[ "$rc" -eq 130 ] || { cat "$WORK/int3.log"; fail "double SIGINT exit status $rc"; }
grep -q "checkpoint written to $WORK/int3/model.ckpt" "$WORK/int3.log" || { cat "$WORK/int3.log"; fail "two SIGINTs at once lost the checkpoint"; }
! grep -q "Second interrupt" "$WORK/int3.log" || { cat "$WORK/int3.log"; fail "two SIGINTs at once taken as two"; }
echo "PASS"
