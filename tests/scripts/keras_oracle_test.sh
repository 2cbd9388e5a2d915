#!/usr/bin/env bash
# The frozen Keras-oracle files (tests/data/golden/) against a fresh run of scripts/keras_oracle.py
# --check with Debian's keras-preprocessing. The C++ tests compare torchfit with those files and need
# no Python; this test says whether the files still are what the reference implementation gives.
# Skipped (exit 0 with SKIP) when /usr/bin/python3 or keras-preprocessing and its deps are missing.
set -uo pipefail
TEST_NAME=keras_oracle
source "$(dirname "$0")/common.sh"

if [ ! -x /usr/bin/python3 ]; then
  echo "SKIP: /usr/bin/python3 not found"; exit 0
fi
/usr/bin/python3 "$SRC/scripts/keras_oracle.py" --check --out "$SRC/tests/data/golden" >"$WORK/out" 2>&1
rc=$?
cat "$WORK/out"
if [ "$rc" -eq 77 ]; then
  echo "SKIP: keras-preprocessing (python3-keras-preprocessing, python3-scipy, python3-pil) not importable"; exit 0
fi
[ "$rc" -eq 0 ] || fail "the golden files differ from keras-preprocessing's output (rc $rc)"
# Every committed .npy file must have been compared, and every compared one must be ok.
n=$(sed -n 's/^compared \([0-9]*\) files$/\1/p' "$WORK/out")
expected=$(find "$SRC/tests/data/golden" -name '*.npy' | wc -l)
[ -n "$n" ] && [ "$n" -eq "$expected" ] ||
  fail "the script compared '${n:-nothing}' files, tests/data/golden holds $expected .npy files"
[ "$(grep -c '^ok ' "$WORK/out")" -eq "$n" ] || fail "not all $n compared files are ok"
git -C "$SRC" diff --quiet -- tests/data/golden 2>/dev/null || echo "note: tests/data/golden has uncommitted changes"
echo "PASS"
