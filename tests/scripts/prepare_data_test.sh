#!/usr/bin/env bash
# Script test (ctest script.prepare_data_test): apps/prepare_data on a small Fashion-MNIST subset —
# layout, counts, pred_labels.csv, idempotent re-run, a damaged file found by the quick check, option
# change removes stale files.
# Args: SOURCE_DIR BINARY_DIR. Skips (exit 0 with a message) without dataset-fashion-mnist.
set -euo pipefail
SRC=$1
BIN=$2
APP=$BIN/apps/prepare_data
if [ ! -f /usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz ]; then
  echo "SKIP: dataset-fashion-mnist not installed"; exit 0
fi
[ -x "$APP" ] || { echo "FAIL: $APP not built"; exit 1; }
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

"$APP" -o "$OUT/d" --images-per-class 7 --classes 3 --pred-count 5 | tee "$OUT/log1"
[ "$(ls "$OUT/d/train")" = "$(printf 'Pullover\nT-shirt_top\nTrouser')" ] || fail "train classes: $(ls "$OUT/d/train")"
[ "$(find "$OUT/d/train" -name '*.png' | wc -l)" -eq 21 ] || fail "train count"
[ "$(find "$OUT/d/test" -name '*.png' | wc -l)" -eq 21 ] || fail "test count"
[ "$(ls "$OUT/d/pred" | wc -l)" -eq 5 ] || fail "pred count"
[ "$(head -1 "$OUT/d/pred_labels.csv")" = "filename,class_index,class_name" ] || fail "csv header"
[ "$(wc -l < "$OUT/d/pred_labels.csv")" -eq 6 ] || fail "csv rows"
# The first training image of Fashion-MNIST is an ankle boot (class 9, not selected); the first
# T-shirt_top in IDX order is train index 1.
[ -f "$OUT/d/train/T-shirt_top/00001.png" ] || fail "train/T-shirt_top/00001.png missing"
# pred files are not in test/
for f in $(ls "$OUT/d/pred"); do [ -z "$(find "$OUT/d/test" -name "$f")" ] || fail "$f in both pred/ and test/"; done

"$APP" -o "$OUT/d" --images-per-class 7 --classes 3 --pred-count 5 | tee "$OUT/log2"
grep -q "up to date: 47 files present" "$OUT/log2" || fail "second run did not skip"
"$APP" -o "$OUT/d" --images-per-class 7 --classes 3 --pred-count 5 --verify | tee "$OUT/log3"
grep -q "47 files already up to date, 0 written" "$OUT/log3" || fail "--verify found differences"
# The quick check runs the loader's header check: a file of the right name and size whose bytes are
# not a PNG any more is found and rewritten.
f="$OUT/d/train/Trouser/$(ls "$OUT/d/train/Trouser" | head -1)"
head -c "$(stat -c %s "$f")" /dev/zero > "$f.tmp" && mv "$f.tmp" "$f"
"$APP" -o "$OUT/d" --images-per-class 7 --classes 3 --pred-count 5 2>&1 | tee "$OUT/log3b"
grep -q "fails the header check (not an image (unrecognised header)); rewriting" "$OUT/log3b" ||
  fail "zeroed PNG not found by the quick check"
grep -q "46 files already up to date, 1 written" "$OUT/log3b" || fail "zeroed PNG not rewritten"

rm "$OUT/d/train/Trouser/"*.png
"$APP" -o "$OUT/d" --images-per-class 4 --classes 2 --pred-count 5 | tee "$OUT/log4"
[ ! -d "$OUT/d/train/Pullover" ] || fail "class 3 folder not removed"
[ "$(find "$OUT/d/train" -name '*.png' | wc -l)" -eq 8 ] || fail "train count after change"
echo "PASS"
