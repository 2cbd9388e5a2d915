#!/usr/bin/env bash
# gpu_step_compare.sh — torchfit's training step vs PyTorch-Python's on one CUDA GPU, in one run:
# the article's CNN (batch 32, 150x150x3, Adam), eager PyTorch, float32 and bf16 autocast, each in the
# contiguous and the channels_last layout; REPS interleaved repetitions, medians quoted.
#
#   scripts/bench/gpu_step_compare.sh BUILD_DIR OUT.md [REPS]   (default 3; 20 timed steps per run)
#
# Needs BUILD_DIR/apps/bench_step built against a CUDA LibTorch, python3 with a CUDA torch (the peer),
# and a GPU. Writes a markdown table to OUT.md (and prints it): median ms per step for each
# implementation × policy × layout, torchfit / PyTorch per row, and which layout is faster for torchfit.
set -uo pipefail
[ $# -ge 2 ] || { sed -n '2,11p' "$0" | sed 's/^# \{0,1\}//'; exit 2; }
BUILD=$1; OUT=$2; REPS=${3:-3}
HERE=$(cd "$(dirname "$0")" && pwd)
PY=${TORCHFIT_PYTHON:-python3}
TMP=$(mktemp -d); trap 'rm -rf "$TMP"' EXIT
field() { $PY -c "import json,sys; print(json.loads(sys.stdin.read().strip().splitlines()[-1])['median_ms'])"; }
median() { sort -g | awk '{a[NR]=$1} END {if (NR == 0) print "nan"; else print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
for r in $(seq "$REPS"); do
  for layout in contiguous channels_last; do
    for policy in float32 mixed_bfloat16; do
      "$BUILD/apps/bench_step" --device cuda --steps 20 --warmup 5 --memory-format "$layout" \
        --mixed-precision "$policy" 2>>"$TMP/err" | field >>"$TMP/tf_${policy}_${layout}"
      flags=(); [ "$policy" = mixed_bfloat16 ] && flags+=(--bf16); [ "$layout" = channels_last ] && flags+=(--channels-last)
      $PY "$HERE/pytorch_step.py" 20 5 --device cuda "${flags[@]}" 2>>"$TMP/err" | field >>"$TMP/py_${policy}_${layout}"
    done
  done
  echo "rep $r done"
done
{
  echo "| policy | layout | torchfit ms/step | PyTorch eager ms/step | torchfit / PyTorch |"
  echo "|---|---|---|---|---|"
  for policy in float32 mixed_bfloat16; do
    for layout in contiguous channels_last; do
      tf=$(median <"$TMP/tf_${policy}_${layout}"); py=$(median <"$TMP/py_${policy}_${layout}")
      ratio=$($PY -c "import sys; a, b = map(float, sys.argv[1:]); print('%.2f' % (a / b) if a == a and b == b and b > 0 else 'n/a')" "$tf" "$py")
      echo "| $policy | $layout | $tf | $py | $ratio |"
    done
  done
  for policy in float32 mixed_bfloat16; do
    c=$(median <"$TMP/tf_${policy}_contiguous"); l=$(median <"$TMP/tf_${policy}_channels_last")
    echo
    echo "torchfit $policy: contiguous $c ms, channels_last $l ms → faster: $($PY -c "import sys; c, l = map(float, sys.argv[1:]); print('channels_last' if l < c else 'contiguous')" "$c" "$l")"
  done
  echo
  echo "$REPS interleaved repetitions, medians; batch 32, 150x150x3, Adam; warm-up (cuDNN benchmark search) excluded."
  [ -s "$TMP/err" ] && { echo; echo '```'; tail -20 "$TMP/err"; echo '```'; }
} | tee "$OUT"
