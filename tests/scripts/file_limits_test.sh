#!/usr/bin/env bash
# A run that meets a file-size limit or a full disk while writing its checkpoint (issue 37, item 9):
#  1. Under `ulimit -f` (RLIMIT_FSIZE, as batch systems set it) the write fails with EFBIG instead of
#     SIGXFSZ killing the process: exit 1, the error names the checkpoint, no temporary is left, run.json
#     says "failed".
#  2. On a full file system (a 1 MiB tmpfs; needs root, else skipped with the reason) the same.
#  3. No .torchfit.lock stays behind in the run folder or the checkpoint's own folder, after a completed
#     run, after those failures and after a run stopped by one SIGTERM or by two.
set -uo pipefail
TEST_NAME=file_limits source "$(dirname "$0")/common.sh"
if [ ! -f /usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz ]; then
  echo "SKIP: dataset-fashion-mnist not installed"; exit 0
fi
"$BIN/prepare_data" --output "$WORK/data" --images-per-class 16 --classes 2 --pred-count 4 >/dev/null || fail "prepare_data"
T=("$BIN/train_cnn" --data "$WORK/data" --device cpu --threads 1 --workers 1 --target-size 16 --batch-size 4
   --validation-steps 1 --verbose 2)

# no_locks DIR...: no .torchfit.lock in any of the folders.
no_locks() {
  local left
  left=$(find "$@" -maxdepth 1 -name .torchfit.lock 2>/dev/null)
  [ -z "$left" ] || fail "$CASE: lock file(s) left: $left"
}
# failed_cleanly LOG RUN_DIR CKPT_DIR REASON: exit 1 already checked; the error names the checkpoint and
# REASON, no temporary and no lock is left, run.json says "failed".
failed_cleanly() {
  grep -q "cannot write '$3/model.ckpt': $4" "$1" || { cat "$1"; fail "$CASE: no error naming the checkpoint and '$4'"; }
  local tmp
  tmp=$(find "$2" "$3" -name '.*.tmp*')
  [ -z "$tmp" ] || fail "$CASE: temporary left: $tmp"
  grep -q '"status": "failed"' "$2/run.json" || fail "$CASE: run.json status is not failed: $(grep '"status"' "$2/run.json")"
  no_locks "$2" "$3"
}

CASE="completed run"
"${T[@]}" --epochs 1 --steps-per-epoch 2 --run-dir "$WORK/ok" --checkpoint "$WORK/ok_ckpt/model.ckpt" >"$WORK/ok.log" 2>&1 ||
  { cat "$WORK/ok.log"; fail "$CASE"; }
[ "$(stat -c %s "$WORK/ok_ckpt/model.ckpt")" -gt $((1024 * 1024)) ] || fail "the checkpoint is under 1 MiB: the limits below test nothing"
no_locks "$WORK/ok" "$WORK/ok_ckpt"
echo "$CASE: no lock file left"

CASE="ulimit -f 512"
(ulimit -f 512; exec "${T[@]}" --epochs 1 --steps-per-epoch 2 --run-dir "$WORK/lim" --checkpoint "$WORK/lim_ckpt/model.ckpt") \
  >"$WORK/lim.log" 2>&1
rc=$?
[ "$rc" -eq 1 ] || { cat "$WORK/lim.log"; fail "$CASE: exit $rc, expected 1 (153 = killed by SIGXFSZ)"; }
failed_cleanly "$WORK/lim.log" "$WORK/lim" "$WORK/lim_ckpt" "File too large"
echo "$CASE: exit 1, the error names the checkpoint, no temporary or lock left, run.json failed"

CASE="full tmpfs"
mkdir -p "$WORK/small"
if mount -t tmpfs -o size=1m tmpfs "$WORK/small" 2>"$WORK/mount.err"; then
  trap 'umount -l "$WORK/small" 2>/dev/null; kill -9 $(jobs -p) 2>/dev/null; rm -rf "$WORK"' EXIT
  "${T[@]}" --epochs 1 --steps-per-epoch 2 --run-dir "$WORK/full" --checkpoint "$WORK/small/model.ckpt" >"$WORK/full.log" 2>&1
  rc=$?
  [ "$rc" -eq 1 ] || { cat "$WORK/full.log"; fail "$CASE: exit $rc, expected 1"; }
  failed_cleanly "$WORK/full.log" "$WORK/full" "$WORK/small" "No space left on device"
  echo "$CASE: exit 1, the error names the checkpoint, no temporary or lock left, run.json failed"
else
  echo "SKIP ($CASE): cannot mount a tmpfs: $(cat "$WORK/mount.err") (needs root)"
fi

for n in 1 2; do
  CASE="$n SIGTERM"
  dir="$WORK/sig$n"
  "${T[@]}" --epochs 500 --run-dir "$dir" --checkpoint "$dir-ckpt/model.ckpt" --checkpoint-every 1 >"$dir.log" 2>&1 &
  pid=$!
  wait_rows "$dir/steps.csv" 3 60 || { cat "$dir.log"; fail "$CASE: the run did not start"; }
  kill -TERM "$pid"
  [ "$n" -eq 2 ] && { sleep 1.3; kill -TERM "$pid" 2>/dev/null; }
  wait "$pid"; rc=$?
  [ "$rc" -eq 143 ] || { cat "$dir.log"; fail "$CASE: exit $rc, expected 143"; }
  no_locks "$dir" "$dir-ckpt"
  echo "$CASE: exit 143, no lock file left"
done
echo "PASS"
