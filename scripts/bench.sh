#!/usr/bin/env bash
# torchfit performance goals (issue 8), each a ratio measured in ONE run on this machine, the two sides
# interleaved A B A B and medians quoted (the machine is shared and noisy):
#   1. torchfit fit step / PyTorch-Python step (default process settings)          goal <= 0.40
#   2. torchfit fit step / PyTorch-Python step with torchfit's process settings     goal <= 0.85
#      (the malloc tunables below and, where init_process replaced OpenBLAS's kernel choice, the same
#      OPENBLAS_CORETYPE)
#   3. input pipeline images/s per core: torchfit / Keras ImageDataGenerator      goal >= 20
#      (also printed, not goals of their own: 2 workers / 1 worker, goal >= 1.8 (issue 17), and the
#      epoch-2 rate of 1 worker with the decoded-image cache, prepare_data bench --cache)
#   4. data wait share of the step while training on real data with augmentation  goal <= 2%
#   5. 2048x2048 sgemm through LibTorch / best sgemm rate measured here            goal >= 90%
#      (medians per method: LibTorch, NumPy, NumPy on torchfit's OpenBLAS core; the best method's median)
#   6. torchfit mixed_bfloat16 step / torchfit float32 step                       goal <= 0.65
#   7. torchfit mixed_bfloat16 step / PyTorch-Python bf16 autocast + channels_last step, with torchfit's
#      process settings                                                           goal <= 0.85
#      (6-7 are timed only where the CPU has AVX512-BF16 or AMX-BF16 and neither ONEDNN_MAX_CPU_ISA /
#      DNNL_MAX_CPU_ISA caps oneDNN below AVX512_CORE_BF16 nor ATEN_CPU_CAPABILITY caps ATen below avx512:
#      elsewhere bf16 is emulated, and the script prints one line saying why they are skipped)
#   8. torchfit float32 step / the time its FLOPs take at the best sgemm rate       goal <= 1.6
#      (the step's FLOPs from bench_step, counted from the model: 28.9 GFLOP for the article's CNN at batch
#      32; the rate: NumPy's 2048x2048 float32 product on the OpenBLAS core torchfit uses, run after each
#      step measurement, median of those runs)
# Usage: scripts/bench.sh [REPS]   (default 3; each rep runs 6 timed steps per side)
# Appends a dated row to docs/benchmarks.md.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
REPS=${1:-3}
BUILD=${BUILD_DIR:-build}
PY=/usr/bin/python3
cmake --build "$BUILD" -j"$(nproc)" --target bench_step train_cnn matmul_bench prepare_data >/dev/null
[ -d data/train ] || scripts/prepare_data.sh >/dev/null
OUT=$(mktemp -d /tmp/torchfit_bench.XXXXXX)
trap 'rm -rf "$OUT"' EXIT
# glibc tunables equivalent to torchfit's mallopt (keep freed memory in the process).
TUNED="glibc.malloc.mmap_max=0:glibc.malloc.trim_threshold=2147483647"
# The OpenBLAS core torchfit's init_process switched to (empty when it kept OpenBLAS's own choice).
CORE=$("$BUILD/apps/device_info" --json 2>/dev/null | $PY -c "import json,sys; b=json.load(sys.stdin).get('blas_kernels',{}); print(b['active'] if b.get('active') and b.get('active') != b.get('detected') else '')")
TUNED_ENV=(GLIBC_TUNABLES=$TUNED)
[ -n "$CORE" ] && TUNED_ENV+=(OPENBLAS_CORETYPE=$CORE)
echo "process settings given to the tuned peer: ${TUNED_ENV[*]}"

median() { sort -g | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
field() { $PY -c "import json,sys; print(json.loads(sys.stdin.read().strip().splitlines()[-1])['$1'])"; }

# Why the bf16 goals cannot apply here (empty when they can): bf16 products need AVX512-BF16 or AMX-BF16,
# and a cap on oneDNN's or ATen's instruction set makes LibTorch emulate them even where the CPU has them.
bf16_skip_reason() {
  grep -qwE 'avx512_bf16|amx_bf16' /proc/cpuinfo 2>/dev/null ||
    { echo "this CPU has no AVX512-BF16 or AMX-BF16 instructions (bf16 products are emulated)"; return; }
  local var isa
  for var in ONEDNN_MAX_CPU_ISA DNNL_MAX_CPU_ISA; do
    isa=$(printenv "$var" | tr '[:lower:]' '[:upper:]')
    case "$isa" in
      "" | ALL | AVX512_CORE_BF16 | AVX512_CORE_AMX* | AVX512_CORE_FP16 | AVX10*) ;;
      *) echo "$var=$isa caps oneDNN below AVX512_CORE_BF16 (bf16 products are emulated)"; return ;;
    esac
  done
  case "${ATEN_CPU_CAPABILITY:-}" in
    "" | avx512*) ;;
    *) echo "ATEN_CPU_CAPABILITY=$ATEN_CPU_CAPABILITY caps ATen below avx512 (bf16 kernels are emulated)" ;;
  esac
}
BF16_SKIP=$(bf16_skip_reason)
# NumPy's sgemm on the OpenBLAS core torchfit uses (goal 8's rate).
NP_ENV=(); [ -z "$CORE" ] || NP_ENV=(OPENBLAS_CORETYPE=$CORE)
# The machine's load at the start and the end goes into the row: on a shared host every figure moves with it
# (a 2-thread parallel region waits for a descheduled thread; see docs/benchmarks.md, "AVX2 paths").
LOAD0=$(cut -d' ' -f1 /proc/loadavg)
echo "load average at the start: $LOAD0 ($(nproc) cores)"
for var in OPENBLAS_CORETYPE OPENBLAS_L2_SIZE ONEDNN_MAX_CPU_ISA DNNL_MAX_CPU_ISA ATEN_CPU_CAPABILITY OMP_WAIT_POLICY; do
  [ -z "$(printenv $var)" ] || echo "environment: $var=$(printenv $var)"
done

echo "== goals 1-2, 6-8: the article's CNN training step (batch 32, 150x150x3, Adam), $REPS interleaved reps"
[ -z "$BF16_SKIP" ] || echo "  goals 6-7 (mixed_bfloat16) skipped: $BF16_SKIP"
for r in $(seq "$REPS"); do
  "$BUILD/apps/bench_step" --steps 6 >"$OUT/step.json"; field median_ms <"$OUT/step.json" >>"$OUT/tf"
  env "${NP_ENV[@]}" $PY scripts/bench/numpy_sgemm.py 2048 | field gflops >>"$OUT/np8"
  $PY scripts/bench/pytorch_step.py 6 | field median_ms >>"$OUT/py"
  if [ -z "$BF16_SKIP" ]; then
    "$BUILD/apps/bench_step" --steps 6 --mixed-precision mixed_bfloat16 | field median_ms >>"$OUT/tfb"
    env "${TUNED_ENV[@]}" $PY scripts/bench/pytorch_step.py 6 --bf16 --channels-last | field median_ms >>"$OUT/pyb"
  fi
  "$BUILD/apps/bench_step" --steps 6 | field median_ms >>"$OUT/tf"
  env "${NP_ENV[@]}" $PY scripts/bench/numpy_sgemm.py 2048 | field gflops >>"$OUT/np8"
  env "${TUNED_ENV[@]}" $PY scripts/bench/pytorch_step.py 6 | field median_ms >>"$OUT/pyt"
  echo "  rep $r: torchfit $(tail -2 "$OUT/tf" | tr '\n' ' ')ms, pytorch $(tail -1 "$OUT/py") ms, pytorch+settings $(tail -1 "$OUT/pyt") ms;" \
       "numpy sgemm $(tail -2 "$OUT/np8" | xargs printf '%.0f ')GFLOP/s;" \
       "${BF16_SKIP:+bf16 skipped}${BF16_SKIP:-bf16: torchfit $(tail -1 "$OUT/tfb" 2>/dev/null) ms, pytorch+settings autocast+channels_last $(tail -1 "$OUT/pyb" 2>/dev/null) ms}"
done
TF=$(median <"$OUT/tf"); PYD=$(median <"$OUT/py"); PYT=$(median <"$OUT/pyt")
TFB=nan; PYB=nan
[ -n "$BF16_SKIP" ] || { TFB=$(median <"$OUT/tfb"); PYB=$(median <"$OUT/pyb"); }
GFLOP=$(field train_gflop_per_step <"$OUT/step.json"); NP8=$(median <"$OUT/np8"); NP8MAX=$(sort -g "$OUT/np8" | tail -1)

echo "== goal 3: input pipeline vs Keras ImageDataGenerator (1 worker vs one Python process, $REPS interleaved reps)"
rate() { sed -n 's/.* images_per_s=\([0-9.]*\).*/\1/p'; }
for r in $(seq "$REPS"); do
  "$BUILD/apps/prepare_data" bench --dir data/train --workers 1 --batches "${DATA_BATCHES:-150}" | rate >>"$OUT/d_tf"
  $PY scripts/bench/bench_data_keras.py data/train --batches "${KERAS_BATCHES:-15}" | tail -1 | rate >>"$OUT/d_k"
  "$BUILD/apps/prepare_data" bench --dir data/train --workers 2 --batches "$((2 * ${DATA_BATCHES:-150}))" | rate >>"$OUT/d_tf2"
  # Epoch 2 with the cache (an untimed first pass fills it: ~10-20 s on 60,000 images).
  "$BUILD/apps/prepare_data" bench --dir data/train --workers 1 --batches "${DATA_BATCHES:-150}" --cache | rate >>"$OUT/d_tfc"
  echo "  rep $r: torchfit $(tail -1 "$OUT/d_tf") img/s, keras $(tail -1 "$OUT/d_k") img/s, torchfit 2 workers $(tail -1 "$OUT/d_tf2") img/s, 1 worker cached epoch 2 $(tail -1 "$OUT/d_tfc") img/s"
done
G3=$($PY -c "import sys; print('%.1f' % (float(sys.argv[1]) / float(sys.argv[2])))" "$(median <"$OUT/d_tf")" "$(median <"$OUT/d_k")")
echo "  medians: torchfit $(median <"$OUT/d_tf") img/s, keras $(median <"$OUT/d_k") img/s = ${G3}x per core"
echo "  2 workers: $(median <"$OUT/d_tf2") img/s = $($PY -c "import sys; print('%.2f' % (float(sys.argv[1]) / float(sys.argv[2])))" "$(median <"$OUT/d_tf2")" "$(median <"$OUT/d_tf")")x 1 worker (goal >= 1.8); 1 worker with --cache, epoch 2: $(median <"$OUT/d_tfc") img/s"

echo "== goal 4: data wait while training on real data with augmentation (CPU, 150x150, batch 32)"
"$BUILD/apps/train_cnn" --data ./data --device cpu --epochs 1 --steps-per-epoch ${G4_STEPS:-20} \
  --validation-steps 1 --run-dir "$OUT/run" --verbose 2 >"$OUT/train.log" 2>&1
G4=$(awk -F, 'NR==2 {printf "%.2f", 100*$NF}' "$OUT/run/epochs.csv")
echo "  data wait share: $G4 %"

echo "== goal 5: 2048x2048 float32 product, LibTorch vs the best sgemm measured here ($REPS interleaved reps, medians per method)"
for r in $(seq "$REPS"); do
  "$BUILD/apps/matmul_bench" --sizes 2048 --naive-max 0 --cuda off --csv "$OUT/mm.csv" >/dev/null
  $PY -c "import csv; print(max(float(r['gflops']) for r in csv.DictReader(open('$OUT/mm.csv')) if r['device'] == 'cpu' and r['method'].startswith('LibTorch')))" >>"$OUT/lt"
  $PY scripts/bench/numpy_sgemm.py 2048 | field gflops >>"$OUT/np"
  # NumPy on the same OpenBLAS with the core torchfit chose, so "best" is the machine's best.
  [ -z "$CORE" ] || OPENBLAS_CORETYPE=$CORE $PY scripts/bench/numpy_sgemm.py 2048 | field gflops >>"$OUT/npc"
  echo "  rep $r: LibTorch $(tail -1 "$OUT/lt"), NumPy $(tail -1 "$OUT/np")${CORE:+, NumPy with $CORE $(tail -1 "$OUT/npc")} GFLOP/s"
done
# Each method's median; the best method's median is "the best sgemm rate measured here".
LT=$(median <"$OUT/lt"); BEST=$( (median <"$OUT/lt"; median <"$OUT/np"; [ ! -s "$OUT/npc" ] || median <"$OUT/npc") | sort -g | tail -1)

$PY - "$TF" "$PYD" "$PYT" "${G3:-nan}" "$G4" "$LT" "$BEST" "$TFB" "$PYB" "$GFLOP" "$NP8" "$NP8MAX" "$BF16_SKIP" <<'PY' | tee "$OUT/summary"
import math, sys
tf, pyd, pyt, g3, g4, lt, best, tfb, pyb, gflop, np8, np8max = map(float, sys.argv[1:13])
bf16_skip = sys.argv[13]
def mark(ok): return "met" if ok else "NOT met"
print(f"1. step ratio vs PyTorch (default):     {tf:.0f} / {pyd:.0f} ms = {tf/pyd:.2f}  (goal <= 0.40: {mark(tf/pyd <= 0.40)})")
print(f"2. step ratio vs PyTorch (+settings):   {tf:.0f} / {pyt:.0f} ms = {tf/pyt:.2f}  (goal <= 0.85: {mark(tf/pyt <= 0.85)})")
print(f"3. pipeline per core vs Keras:          {g3:.1f}x  (goal >= 20: {mark(g3 >= 20)})")
print(f"4. data wait share (real data, CPU):    {g4:.2f} %  (goal <= 2 %: {mark(g4 <= 2)})")
print(f"5. LibTorch sgemm 2048 / best measured: {lt:.1f} / {best:.1f} GFLOP/s = {100*lt/best:.0f} %  (goal >= 90 %: {mark(lt/best >= 0.9)})")
if bf16_skip:
    print(f"6. bf16 step / float32 step (torchfit):  skipped: {bf16_skip}")
    print(f"7. bf16 step vs PyTorch bf16 (+settings): skipped (as 6)")
else:
    print(f"6. bf16 step / float32 step (torchfit):  {tfb:.0f} / {tf:.0f} ms = {tfb/tf:.2f}  (goal <= 0.65: {mark(tfb/tf <= 0.65)})")
    print(f"7. bf16 step vs PyTorch bf16 (+settings): {tfb:.0f} / {pyb:.0f} ms = {tfb/pyb:.2f}  (goal <= 0.85: {mark(tfb/pyb <= 0.85)})")
floor = gflop / np8 * 1000  # ms the step's FLOPs take at the median NumPy sgemm rate
print(f"8. float32 step / its FLOP time:        {tf:.0f} / {floor:.0f} ms = {tf/floor:.2f}  (goal <= 1.6: {mark(tf/floor <= 1.6)};"
      f" {gflop:.1f} GFLOP at NumPy's median {np8:.0f} GFLOP/s; at its best sample {np8max:.0f}: {tf/(gflop/np8max*1000):.2f})")
PY
if [ -n "$BF16_SKIP" ]; then BF16_CELLS="skipped (${BF16_SKIP%% (*}) | – | –"
else BF16_CELLS="$(printf %.0f "$TFB") / $(printf %.0f "$PYB") ms | $(sed -n 6p "$OUT/summary" | sed 's/.*= \([0-9.]*\) .*/\1/') | $(sed -n 7p "$OUT/summary" | sed 's/.*= \([0-9.]*\) .*/\1/')"; fi
row="| $(date +%F) | $(hostname) (load $LOAD0 → $(cut -d' ' -f1 /proc/loadavg)) | $(git rev-parse --short HEAD) | $(printf %.0f "$TF") / $(printf %.0f "$PYD") / $(printf %.0f "$PYT") ms | $(sed -n 1p "$OUT/summary" | sed 's/.*= \([0-9.]*\) .*/\1/') | $(sed -n 2p "$OUT/summary" | sed 's/.*= \([0-9.]*\) .*/\1/') | ${G3:-n/a}x | $G4 % | $(sed -n 5p "$OUT/summary" | sed 's/.*GFLOP\/s = \([0-9]*\) %.*/\1/') % | $BF16_CELLS | $(sed -n 8p "$OUT/summary" | sed 's/.*= \([0-9.]*\) .*/\1/') |"
if ! grep -q "^## Goals (scripts/bench.sh)" docs/benchmarks.md 2>/dev/null; then
  cat >>docs/benchmarks.md <<'MD'

## Goals (scripts/bench.sh)
Each row is one run of `scripts/bench.sh` (medians of interleaved repetitions). Step times: torchfit /
PyTorch-Python default / PyTorch-Python with torchfit's process settings (malloc tunables; from commit 5866deb on also the OPENBLAS_CORETYPE that torchfit's init_process chose). Goals: 1 ≤ 0.40, 2 ≤ 0.85, 3 ≥ 20×, 4 ≤ 2 %, 5 ≥ 90 %, 6 ≤ 0.65, 7 ≤ 0.85, 8 ≤ 1.6.

| date | host | commit | step ms | 1. ratio | 2. ratio | 3. pipeline/core | 4. data wait | 5. sgemm share | bf16 step ms | 6. bf16/f32 | 7. bf16 ratio | 8. step / FLOP time |
|---|---|---|---|---|---|---|---|---|---|---|---|---|
MD
fi
echo "$row" >>docs/benchmarks.md
echo "appended to docs/benchmarks.md: $row"
