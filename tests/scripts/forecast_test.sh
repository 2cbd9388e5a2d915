#!/usr/bin/env bash
# fit_arrays --sequence-length end to end (docs/training.md, "Forecasting a series"): the yearly sunspot
# numbers 1700-2008 (Debian's python3-statsmodels ships them as CSV), cut into 12-year windows by
# timeseries_dataset_from_array, an LSTM forecasting the next year. Asserts: the naive last-value error the
# app prints equals NumPy's on the same windows (Keras's Example 2 split, written here independently), the
# LSTM's validation MAE beats that naive forecast by at least 10 % (a persistence forecast ignores the
# ~11-year cycle, which 12 years of history show), and bad flags exit with a message naming them.
set -uo pipefail
TEST_NAME=forecast source "$(dirname "$0")/common.sh"
CSV=/usr/lib/python3/dist-packages/statsmodels/datasets/sunspots/sunspots.csv
[ -f "$CSV" ] || { echo "SKIP: $CSV is absent (install python3-statsmodels: scripts/setup.sh)"; exit 0; }
/usr/bin/python3 -c "import numpy" 2>/dev/null || { echo "SKIP: numpy not importable by /usr/bin/python3"; exit 0; }
cat >"$WORK/lstm.json" <<'EOF'
{"class_name": "Sequential", "config": {"name": "lstm_forecast", "layers": [
  {"class_name": "LSTM", "config": {"name": "lstm", "units": 32}},
  {"class_name": "Dense", "config": {"name": "dense", "units": 1}}]}}
EOF
F=("$BIN/fit_arrays" --model-config "$WORK/lstm.json" --x "$CSV" --column 1 --sequence-length 12
   --validation-split 0.2 --loss mse --metrics mae --optimizer adam --lr 0.005 --batch-size 16 --epochs 60
   --threads 1 --verbose 2 --seed 1)
"${F[@]}" >"$WORK/out" 2>&1 || { cat "$WORK/out"; fail "fit_arrays exited $?"; }
cat "$WORK/out" | grep -v "^Epoch" | tail -4
grep -q "^series: 309 steps; windows of 12 steps: 226 train, 49 validation" "$WORK/out" || fail "windows differ"
line=$(grep "^forecast: " "$WORK/out") || fail "no forecast line"
model=$(sed -n 's/^forecast: val_mae \([0-9.e+-]*\) (model) vs .*/\1/p' <<<"$line")
naive=$(sed -n 's/.* vs \([0-9.e+-]*\) (naive last value).*/\1/p' <<<"$line")
[ -n "$model" ] && [ -n "$naive" ] || fail "cannot read '$line'"
# NumPy: delay 12, inputs s[:-12], targets s[12:], split v = floor(297 * 0.8) = 237, validation windows start
# at v + p for p < 297 - 237 - 11; the naive forecast of window i is its last value s[v + p + 11].
ref=$(/usr/bin/python3 - "$CSV" <<'EOF'
import sys, numpy as np
s = np.loadtxt(sys.argv[1], delimiter=",", skiprows=1)[:, 1]
L = 12; d = L; inputs = len(s) - d; v = int(np.floor(inputs * 0.8))
p = np.arange(v, inputs - (L - 1))
print(np.abs(s[p + L - 1] - s[p + d]).mean())
EOF
) || fail "numpy reference failed"
awk -v a="$naive" -v b="$ref" 'BEGIN { exit !((a - b) ^ 2 < (1e-3 * b) ^ 2) }' || fail "naive MAE $naive != NumPy's $ref"
awk -v m="$model" -v n="$naive" 'BEGIN { exit !(m < 0.9 * n) }' || fail "model val_mae $model is not below 0.9 x naive $naive"
echo "model $model vs naive $naive (NumPy: $ref)"
# Bad input: a column the file lacks, a window longer than the series allows, --y with a series.
B=("$BIN/fit_arrays" --model-config "$WORK/lstm.json" --x "$CSV" --threads 1 --verbose 0)
expect_exit 1 "series column 2 is outside \[0, 2)" "${B[@]}" --column 2 --sequence-length 12
expect_exit 1 "too short" "${B[@]}" --column 1 --sequence-length 300
expect_exit 2 "are not used" "${B[@]}" --column 1 --sequence-length 12 --y "$CSV"
expect_exit 2 "sequence-length" "${B[@]}" --column 1 --sequence-length 0
expect_exit 2 "--y is required" "${B[@]}"
echo "PASS"
