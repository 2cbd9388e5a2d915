#!/usr/bin/env bash
# Robustness of the apps as a new user meets it (issue 26), on a small prepared Fashion-MNIST set:
#  1. SIGTERM and SIGHUP stop like Ctrl-C: checkpoint, run.json "interrupted" with the signal, exit 128+N.
#  2. A default run folder is never shared: a taken runs/<time>-cpu gives runs/<time>-cpu-2.
#  3. Every path flag of every app: a name over 255 bytes, a path over PATH_MAX and a symlink loop give
#     exit 2 and a message starting with the flag (never an escaped exception); a folder that cannot be
#     searched too when not root.
#  4. A checkpoint name of 250 bytes is written (the temporary's name always fits).
#  5. --resume into the run's own folder continues steps.csv, epochs.csv and run.json.
#  8. No temporary file is left by interrupted runs.
#  9. A labels file written by Python's csv module: names byte for byte; labels for missing files named.
# 10. A null layer in a model config: the error names the file and the layer by index.
set -uo pipefail
TEST_NAME=robustness source "$(dirname "$0")/common.sh"
if [ ! -f /usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz ]; then
  echo "SKIP: dataset-fashion-mnist not installed"; exit 0
fi
"$BIN/prepare_data" --output "$WORK/data" --images-per-class 16 --classes 2 --pred-count 4 >/dev/null || fail "prepare_data"
T=("$BIN/train_cnn" --data "$WORK/data" --device cpu --threads 1 --workers 1 --target-size 16 --batch-size 4
   --validation-steps 1 --verbose 2)
LONG=$(printf 'w%.0s' $(seq 256))  # one name of 256 bytes: ENAMETOOLONG
HUGE=$(printf "$WORK/%s" $(for i in $(seq 21); do printf 'd%.0s' $(seq 200); echo; done) | tr -d '\n')  # > PATH_MAX
ln -s loop_b "$WORK/loop_a"; ln -s loop_a "$WORK/loop_b"  # ELOOP


# A trained model for the apps that read one.
(cd "$WORK" && "${T[@]}" --epochs 1 --steps-per-epoch 4 --run-dir "$WORK/m" >"$WORK/m.log" 2>&1) || { cat "$WORK/m.log"; fail "first run"; }
MODEL="$WORK/m/model.ckpt"

# 1 + 8. SIGTERM and SIGHUP.
for sig in TERM HUP; do
  dir="$WORK/sig$sig"
  "${T[@]}" --epochs 500 --run-dir "$dir" --checkpoint-every 1 >"$WORK/sig$sig.log" 2>&1 &
  pid=$!
  wait_rows "$dir/steps.csv" 3 60 || { cat "$WORK/sig$sig.log"; fail "SIG$sig run did not start"; }
  kill -$sig "$pid"; wait "$pid"; rc=$?
  want=$((128 + $(kill -l $sig)))
  [ "$rc" -eq "$want" ] || { cat "$WORK/sig$sig.log"; fail "SIG$sig: exit $rc, expected $want"; }
  grep -q "Interrupted by SIG$sig at epoch .*checkpoint written to $dir/model.ckpt" "$WORK/sig$sig.log" ||
    { cat "$WORK/sig$sig.log"; fail "SIG$sig: no checkpoint message"; }
  grep -q '"status": "interrupted"' "$dir/run.json" || fail "SIG$sig: run.json status"
  grep -q "\"signal\": \"SIG$sig\"" "$dir/run.json" || fail "SIG$sig: run.json does not name the signal"
  "$BIN/train_cnn" --data "$WORK/data" --target-size 16 --resume "$dir/model.ckpt" --dry-run >/dev/null 2>&1 ||
    fail "SIG$sig: the checkpoint does not load"
  echo "SIG$sig: exit $rc, checkpoint written, run.json interrupted by SIG$sig"
done
# A second signal a while after the first exits at once; temporaries go with it.
"${T[@]}" --epochs 500 --run-dir "$WORK/twice" --checkpoint-every 1 >"$WORK/twice.log" 2>&1 &
pid=$!
wait_rows "$WORK/twice/steps.csv" 3 60 || fail "twice: run did not start"
kill -TERM "$pid"; sleep 1.3; kill -TERM "$pid" 2>/dev/null; wait "$pid"; rc=$?
[ "$rc" -eq 143 ] || { cat "$WORK/twice.log"; fail "two SIGTERMs: exit $rc"; }
left=$(find "$WORK" -name '.*.tmp*' | wc -l)
[ "$left" -eq 0 ] || fail "$left temporary file(s) left: $(find "$WORK" -name '.*.tmp*')"
echo "signals: no temporary file left"

# 1 under torchrun: ranks started as torchrun starts them; torchrun forwards SIGTERM to every worker, here
# only rank 1 gets it: the ranks stop at the same step, rank 0 writes the checkpoint, both exit 143.
port=$(/usr/bin/python3 -c "import socket; s=socket.socket(); s.bind(('127.0.0.1',0)); print(s.getsockname()[1])")
for r in 0 1; do
  MASTER_ADDR=127.0.0.1 MASTER_PORT=$port WORLD_SIZE=2 LOCAL_WORLD_SIZE=2 RANK=$r LOCAL_RANK=$r \
    "${T[@]}" --epochs 500 --run-dir "$WORK/dist" >"$WORK/dist$r.log" 2>&1 &
  eval "pid$r=$!"
done
if wait_rows "$WORK/dist/steps.csv" 3 90; then
  kill -TERM "$pid1"; wait "$pid0"; rc0=$?; wait "$pid1"; rc1=$?
  [ "$rc0" -eq 143 ] && [ "$rc1" -eq 143 ] || { cat "$WORK/dist0.log" "$WORK/dist1.log"; fail "ranks exited $rc0, $rc1 after SIGTERM"; }
  grep -q "Interrupted by SIGTERM at epoch .*checkpoint written to $WORK/dist/model.ckpt" "$WORK/dist0.log" || fail "rank 0 wrote no checkpoint"
  grep -q '"signal": "SIGTERM"' "$WORK/dist/run.json" || fail "data-parallel run.json does not name SIGTERM"
  echo "two ranks, SIGTERM to rank 1: both exit 143, rank 0 wrote the checkpoint"
elif grep -q "without distributed training" "$WORK/dist0.log"; then
  kill -9 "$pid0" "$pid1" 2>/dev/null; echo "two ranks: skipped (built without distributed training)"
else
  cat "$WORK/dist0.log" "$WORK/dist1.log"; fail "the data-parallel run did not start"
fi

# 2. A taken default run folder (this second and the next ones) gives the run another one.
mkdir -p "$WORK/cwd/runs"
for k in $(seq 0 30); do
  d="$WORK/cwd/runs/$(date -d "+$k sec" +%Y%m%d-%H%M%S)-cpu"; mkdir -p "$d"; echo other >"$d/marker"
done
(cd "$WORK/cwd" && "${T[@]}" --epochs 1 --steps-per-epoch 2 >"$WORK/default.log" 2>&1) || { cat "$WORK/default.log"; fail "default run dir"; }
grep -q "Run files: runs/[0-9-]*-cpu-2/" "$WORK/default.log" || { cat "$WORK/default.log"; fail "the run took a taken folder"; }
[ "$(find "$WORK/cwd/runs" -name steps.csv | wc -l)" -eq 1 ] && [ "$(find "$WORK/cwd/runs" -name marker | wc -l)" -eq 31 ] ||
  fail "another run's folder was written"
echo "default run folder: $(grep -o 'runs/[0-9-]*-cpu-2' "$WORK/default.log" | head -1) (the taken one left alone)"

# 3. Path flags: ENAMETOOLONG (a 256-byte name, a path over PATH_MAX), ELOOP, EACCES (not root).
check_path_flag() {  # flag reason app args...
  local flag=$1 reason=$2; shift 2
  "$@" >"$WORK/out" 2>&1
  local rc=$?
  { [ "$rc" -eq 2 ] && grep -q -- "^$flag: .*$reason" "$WORK/out" && ! grep -q "terminate called" "$WORK/out"; } ||
    { cat "$WORK/out"; fail "'$flag' ($reason): exit $rc"; }
}
for bad in "$WORK/$LONG" "$HUGE" "$WORK/loop_a"; do
  case "$bad" in "$WORK/loop_a") why="symbolic links" ;; *) why="too long" ;; esac
  check_path_flag --data "$why" "${T[@]}" --data "$bad"
  check_path_flag --run-dir "$why" "${T[@]}" --run-dir "$bad/run"
  check_path_flag --checkpoint "$why" "${T[@]}" --checkpoint "$bad/m.ckpt"
  check_path_flag --resume "$why" "${T[@]}" --resume "$bad"
  check_path_flag --model-config "$why" "${T[@]}" --model-config "$bad"
  check_path_flag --model "$why" "$BIN/predict_cnn" --model "$bad" --data "$WORK/data/pred"
  check_path_flag --data "$why" "$BIN/predict_cnn" --model "$MODEL" --data "$bad"
  check_path_flag --output "$why" "$BIN/predict_cnn" --model "$MODEL" --data "$WORK/data/pred" --output "$bad/p.csv"
  check_path_flag --labels "$why" "$BIN/predict_cnn" --model "$MODEL" --data "$WORK/data/pred" --labels "$bad"
  check_path_flag --source "$why" "$BIN/prepare_data" --source "$bad" --output "$WORK/x"
  check_path_flag --output "$why" "$BIN/prepare_data" --output "$bad/out"
  check_path_flag --csv "$why" "$BIN/matmul_bench" --csv "$bad/m.csv"
done
# EACCES: a folder this user may not search. Root may search any, so as root the checks run as nobody.
AS=()
[ "$(id -u)" -eq 0 ] && command -v runuser >/dev/null && AS=(runuser -u nobody --)
if [ "$(id -u)" -ne 0 ] || { [ ${#AS[@]} -gt 0 ] && "${AS[@]}" test -x "$BIN/train_cnn"; }; then
  chmod 711 "$WORK"; mkdir -p "$WORK/locked/inner" && chmod 700 "$WORK/locked"
  [ ${#AS[@]} -gt 0 ] || chmod 000 "$WORK/locked"
  check_path_flag --data "Permission denied" "${AS[@]}" "${T[@]}" --data "$WORK/locked/inner"
  check_path_flag --run-dir "Permission denied" "${AS[@]}" "${T[@]}" --run-dir "$WORK/locked/inner/run"
  check_path_flag --output "Permission denied" "${AS[@]}" "$BIN/predict_cnn" --model "$MODEL" --data "$WORK/data/pred" --output "$WORK/locked/p.csv"
  check_path_flag --output "Permission denied" "${AS[@]}" "$BIN/prepare_data" --output "$WORK/m/new"
  chmod 755 "$WORK/locked"
  echo "path flags: EACCES checked${AS:+ (as nobody)}"
else
  echo "path flags: EACCES not checked (root, and no runuser or nobody cannot run the build's binaries)"
fi
echo "path flags: exit 2 naming the flag for every path flag of train_cnn, predict_cnn, prepare_data, matmul_bench"

# 4. A legal checkpoint name of 250 bytes.
name=$(printf 'w%.0s' $(seq 245)).ckpt
"${T[@]}" --epochs 1 --steps-per-epoch 2 --run-dir "$WORK/long" --checkpoint "$WORK/long/$name" >"$WORK/long.log" 2>&1 ||
  { cat "$WORK/long.log"; fail "a 250-byte checkpoint name"; }
[ -f "$WORK/long/$name" ] && [ "$(ls -A "$WORK/long" | grep -c tmp)" -eq 0 ] || fail "250-byte checkpoint: file or temporary"
echo "checkpoint name of 250 bytes: written"

# 5. Resume into the run's own folder: earlier rows kept, run.json records both parts.
"${T[@]}" --epochs 1 --steps-per-epoch 3 --run-dir "$WORK/rh" >"$WORK/rh1.log" 2>&1 || fail "rh part 1"
head -4 "$WORK/rh/steps.csv" >"$WORK/rh_part1"
"${T[@]}" --epochs 3 --steps-per-epoch 3 --run-dir "$WORK/rh" --resume "$WORK/rh/model.ckpt" >"$WORK/rh2.log" 2>&1 ||
  { cat "$WORK/rh2.log"; fail "rh part 2"; }
[ "$(cut -d, -f1 "$WORK/rh/epochs.csv" | tr '\n' ' ')" = "epoch 1 2 3 " ] || { cat "$WORK/rh/epochs.csv"; fail "epochs.csv lost rows"; }
[ "$(wc -l <"$WORK/rh/steps.csv")" -eq 10 ] || fail "steps.csv: $(wc -l <"$WORK/rh/steps.csv") lines, expected 10"
cmp -s "$WORK/rh_part1" <(head -4 "$WORK/rh/steps.csv") || fail "the first part's step rows changed"
/usr/bin/python3 -c "
import json,sys; j=json.load(open('$WORK/rh/run.json')); p=j['parts']
assert len(p)==2 and p[0]['status']=='completed' and p[1]['initial_epoch']==1 and p[1]['status']=='completed', p
assert [e['epoch'] for e in j['epoch_summaries']]==[1,2,3], j['epoch_summaries']" || fail "run.json parts"
"${T[@]}" --epochs 4 --steps-per-epoch 3 --run-dir "$WORK/rh_other" --resume "$WORK/rh/model.ckpt" >/dev/null 2>&1
[ "$(cut -d, -f1 "$WORK/rh_other/epochs.csv" | tr '\n' ' ')" = "epoch 4 " ] || fail "resume into a new folder: fresh files expected"
echo "resume into its own folder: epochs 1 2 3, 9 step rows, run.json 2 parts"

# 9. Labels written by Python's csv module.
if [ -x /usr/bin/python3 ]; then
  mkdir -p "$WORK/p9"; src=$(ls "$WORK/data/pred" | head -1)
  for n in ' lead space.png' $'new\nline.png' 'q"uote.png' '-dash.png' 'trail .png'; do cp "$WORK/data/pred/$src" "$WORK/p9/$n"; done
  /usr/bin/python3 - "$WORK" <<'EOF'
import csv, sys
names = [' lead space.png', 'new\nline.png', 'q"uote.png', '-dash.png', 'trail .png', 'missing.png']
with open(sys.argv[1] + '/labels.csv', 'w', newline='') as f:
    w = csv.writer(f)
    w.writerow(['filename', 'class_name'])
    for n in names:
        w.writerow([n, 'Trouser'])
EOF
  "$BIN/predict_cnn" --model "$MODEL" --data "$WORK/p9" --output "$WORK/p9.csv" --labels "$WORK/labels.csv" >"$WORK/p9.log" 2>&1 ||
    { cat "$WORK/p9.log"; fail "predict with Python's labels"; }
  grep -q "Accuracy on 5 labelled images" "$WORK/p9.log" || { cat "$WORK/p9.log"; fail "a label was lost"; }
  grep -q "1 label(s) name files with no prediction.*'missing.png'" "$WORK/p9.log" || { cat "$WORK/p9.log"; fail "missing file not named"; }
  /usr/bin/python3 -c "
import csv,sys; rows=list(csv.reader(open('$WORK/p9.csv', newline='')))
names=sorted(r[0] for r in rows[1:]); assert names==sorted([' lead space.png','new\nline.png','q\"uote.png','-dash.png','trail .png']), names" ||
    fail "predictions.csv does not read back in Python"
  echo "labels from Python's csv: 5 of 5 labelled, missing.png named"
fi

# 10. A null layer in a model config.
/usr/bin/python3 -c "
import json; j=json.load(open('$BIN/seed_cnn.json')); j['config']['layers'].insert(2, None); json.dump(j, open('$WORK/null.json','w'))"
expect_exit 1 "model config '$WORK/null.json': config.layers\[2\] ('?', ?): model JSON: a layer must be an object" "${T[@]}" --epochs 1 --model-config "$WORK/null.json"
echo "null layer: named by file and index"
echo "PASS"
