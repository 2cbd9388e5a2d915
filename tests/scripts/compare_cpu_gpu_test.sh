#!/usr/bin/env bash
# ctest script.compare_cpu_gpu_test: scripts/compare_cpu_gpu.sh end to end with tiny settings (32x32,
# batch 8, 3 steps, one thread) into a temporary results folder; checks the report's table rows, that
# the CPU figures are numbers, the GPU column (numbers when CUDA is available, "not available" with the
# reason otherwise), the matmul table, the copied run files and the PNG chart.
#   bash tests/scripts/compare_cpu_gpu_test.sh SOURCE_DIR BINARY_DIR
# Data: a small Fashion-MNIST set made with prepare_data when Debian's dataset-fashion-mnist is
# installed, else TORCHFIT_DATA_DIR (gpu_check.sh exports its bundled set), else the test is skipped.
set -uo pipefail
SRC=$1
BIN=$2
WORK=$(mktemp -d "${TMPDIR:-/tmp}/torchfit_compare_test.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
# The report is written and checked by the same interpreter (it decides whether the chart is drawn).
PY=/usr/bin/python3; [ -x "$PY" ] || PY=$(command -v python3)

if [ -f /usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz ]; then
  "$BIN/apps/prepare_data" --output "$WORK/data" --images-per-class 20 --classes 2 --pred-count 4 >/dev/null \
    || fail "prepare_data failed"
  DATA=$WORK/data
elif [ -n "${TORCHFIT_DATA_DIR:-}" ] && [ -d "$TORCHFIT_DATA_DIR/train" ]; then
  DATA=$TORCHFIT_DATA_DIR
else
  echo "SKIP: no dataset-fashion-mnist and no TORCHFIT_DATA_DIR"; exit 0
fi

# Bad arguments: exit 2 naming the flag.
TORCHFIT_BUILD_DIR=$BIN TORCHFIT_DATA_DIR=$DATA TORCHFIT_RESULTS_DIR=$WORK/bad \
  bash "$SRC/scripts/compare_cpu_gpu.sh" --epochs zero >"$WORK/bad.log" 2>&1
rc=$?
if [ $rc -ne 2 ] || ! grep -q -- "--epochs" "$WORK/bad.log"; then cat "$WORK/bad.log"; fail "--epochs zero: exit $rc"; fi
TORCHFIT_BUILD_DIR=$BIN TORCHFIT_DATA_DIR=$DATA TORCHFIT_RESULTS_DIR=$WORK/bad \
  bash "$SRC/scripts/compare_cpu_gpu.sh" -- --device cpu >"$WORK/bad.log" 2>&1
rc=$?
if [ $rc -ne 2 ] || ! grep -q -- "--device" "$WORK/bad.log"; then cat "$WORK/bad.log"; fail "-- --device: exit $rc"; fi

# The tiny comparison. --threads 1: OpenMP threads that spin-wait make tiny steps very slow on a
# loaded 2-core machine.
RES=$WORK/results
start=$(date +%s)
TORCHFIT_PYTHON=$PY TORCHFIT_BUILD_DIR=$BIN TORCHFIT_DATA_DIR=$DATA TORCHFIT_RESULTS_DIR=$RES \
  bash "$SRC/scripts/compare_cpu_gpu.sh" --steps-per-epoch 3 --matmul-sizes "64 96" --matmul-naive-max 64 \
  --matmul-min-time 0.01 -- --target-size 32 --batch-size 8 --validation-steps 1 --threads 1 \
  >"$WORK/compare.log" 2>&1 || { cat "$WORK/compare.log"; fail "compare_cpu_gpu.sh exited $?"; }
echo "compare_cpu_gpu.sh took $(( $(date +%s) - start )) s"
REPORT=$RES/report.md
[ -f "$REPORT" ] || fail "no report.md"
for f in cpu_steps.csv cpu_epochs.csv cpu_run.json cpu_train.log matmul.csv device_info.json meta.json; do
  [ -s "$RES/$f" ] || fail "no $f beside the report"
done
[ -z "$(find "$RES" -name '*.ckpt')" ] || fail "a checkpoint was copied into the results folder"

"$PY" - "$RES" "$BIN/apps/device_info" <<'PY' || { cat "$REPORT"; fail "report check failed"; }
import json, os, re, subprocess, sys
res, device_info = sys.argv[1], sys.argv[2]
report = open(os.path.join(res, "report.md")).read()
cuda = json.loads(subprocess.run([device_info, "--json"], capture_output=True, text=True, check=True).stdout)["cuda"]

def row(label):
    m = [l for l in report.splitlines() if l.startswith("| " + label)]
    assert m, f"no table row '{label}'"
    return [c.strip() for c in m[0].strip("|").split("|")]

number = re.compile(r"^[0-9][0-9,]*(\.[0-9]+)?( %)?$")
for label in ["s/epoch", "s per 1000 steps", "ms/step median", "ms/step p90", "images/s",
              "data-wait share", "achieved GFLOP/s"]:
    cells = row(label)
    assert number.match(cells[1]), f"{label}: CPU cell '{cells[1]}' is not a number"
    if cuda["available"]:
        assert number.match(cells[2]), f"{label}: GPU cell '{cells[2]}' is not a number"
        if label != "data-wait share":
            assert re.match(r"^[0-9.]+×$", cells[3]), f"{label}: speedup '{cells[3]}'"
    else:
        assert cells[2] == "not available", f"{label}: GPU cell '{cells[2]}'"
assert "speedup ×" in report
if not cuda["available"]:
    assert "**GPU: not available** — " + cuda["unavailable_reason"] in report, "no reason for the missing GPU"
# The CPU figures agree with train_cnn's epochs.csv (one epoch: the same statistics).
import csv
e = list(csv.DictReader(open(os.path.join(res, "cpu_epochs.csv"))))[0]
median = float(row("ms/step median")[1].replace(",", ""))
assert abs(median - float(e["ms_per_step_median"])) < 0.06, (median, e["ms_per_step_median"])
assert row("timed steps")[1] == "1 (+2)", row("timed steps")
# Matmul table: one row per CSV row.
mm = list(csv.DictReader(open(os.path.join(res, "matmul.csv"))))
assert len(mm) >= 3, mm
for m in mm:
    assert f"| {m['n']} | {m['method']} |" in report, m
# Environment and the chart reference.
assert "## Environment of each run" in report and "load average before / after" in report
png = os.path.join(res, "ms_per_step.png")
try:
    import matplotlib  # noqa: F401
    have_mpl = True
except ImportError:
    have_mpl = False
if have_mpl:
    assert "![ms per step for each device](ms_per_step.png)" in report
    assert open(png, "rb").read(8) == b"\x89PNG\r\n\x1a\n", "ms_per_step.png is not a PNG"
    assert os.path.getsize(png) > 5000, "ms_per_step.png is suspiciously small"
else:
    assert "chart not drawn: matplotlib is not available" in report
print("report ok")
PY
echo "compare_cpu_gpu_test: ok"
