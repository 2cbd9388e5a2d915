#!/usr/bin/env bash
# compare_cpu_gpu.sh — the articles' CPU-vs-GPU experiment in one command: train_cnn with the same
# seed, data, model and settings on the CPU and (when LibTorch can use one) on CUDA, a fresh model for
# each device, plus matmul_bench; then a report (table, matmul table, environments, a chart of ms/step).
#
#   scripts/compare_cpu_gpu.sh [--epochs N] [--steps-per-epoch N] [--devices "cpu cuda"]
#                              [--matmul-sizes "500 1024 2048"] [--matmul-naive-max N]
#                              [--matmul-min-time S] [--no-matmul] [--keep-runs]
#                              [-- train_cnn options, e.g. --batch-size 64 --target-size 150]
#
#   defaults: 1 epoch x 20 steps, batch 32, 150x150 RGB, train_cnn's other defaults (seed 42, Adam,
#             10 validation steps); the article: --epochs 5 --steps-per-epoch 1000.
#   --devices       what to run (default "cpu cuda"; cuda is skipped, with the reason, when
#                   `device_info --json` says CUDA is not available)
#   --no-matmul     skip matmul_bench; --matmul-* are passed to it (--sizes, --naive-max, --min-time)
#   --keep-runs     keep the run folders (checkpoints included) in <results>/runs/ instead of a
#                   temporary folder that is deleted at the end
# Options this script does not know are passed to train_cnn as well (so gpu_check.sh's
# `-- --batch-size 64` works); --device, --run-dir, --checkpoint and --resume are refused (the script
# sets them: one fresh model per device).
#
# Environment (the contract scripts/gpu_check.sh uses):
#   TORCHFIT_BUILD_DIR    build folder with apps/{train_cnn,matmul_bench,device_info} (default build)
#   TORCHFIT_DATA_DIR     folder with train/ and test/ (default ./data; when the default is missing,
#                         scripts/prepare_data.sh lays out Fashion-MNIST there first)
#   TORCHFIT_RESULTS_DIR  where the report goes (default docs/results/<YYYY-MM-DD>-<host>)
#   TORCHFIT_PYTHON       interpreter for the report (default: /usr/bin/python3 or python3, the first
#                         with matplotlib)
#
# Writes into the results folder: report.md, ms_per_step.png, <device>_{steps.csv,epochs.csv,run.json,
# train.log}, matmul.csv, matmul.log, device_info.json, meta.json. Exit status: 0 when every run and
# the report succeeded, 1 when one failed (the report is still written from what there is), 2 for bad
# arguments. See docs/cpu_vs_gpu.md.
set -uo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

usage() { sed -n '2,33p' "$0" | sed 's/^# \{0,1\}//'; }
die() { echo "compare_cpu_gpu.sh: $*" >&2; exit 2; }
abspath() { case "$1" in /*) echo "$1" ;; *) echo "$PWD/$1" ;; esac; }

ORIG_ARGS=("$@")
EPOCHS=1
STEPS=20
DEVICES="cpu cuda"
MM_SIZES="500 1024 2048"
MM_NAIVE_MAX=1024
MM_MIN_TIME=0.3
MATMUL=1
KEEP_RUNS=0
TRAIN_ARGS=()
after_dashes=0
while [ $# -gt 0 ]; do
  a=$1
  case "$a" in
    --) after_dashes=1; shift; continue ;;
    --epochs|--steps-per-epoch|--devices|--matmul-sizes|--matmul-naive-max|--matmul-min-time)
      [ $# -ge 2 ] || die "$a needs a value"; v=$2; shift 2 ;;
    --epochs=*|--steps-per-epoch=*|--devices=*|--matmul-sizes=*|--matmul-naive-max=*|--matmul-min-time=*)
      v=${a#*=}; a=${a%%=*}; shift ;;
    -h|--help) if [ $after_dashes -eq 0 ]; then usage; exit 0; fi; TRAIN_ARGS+=("$a"); shift; continue ;;
    --no-matmul) if [ $after_dashes -eq 0 ]; then MATMUL=0; else TRAIN_ARGS+=("$a"); fi; shift; continue ;;
    --keep-runs) if [ $after_dashes -eq 0 ]; then KEEP_RUNS=1; else TRAIN_ARGS+=("$a"); fi; shift; continue ;;
    --device|--device=*|--run-dir|--run-dir=*|--checkpoint|--checkpoint=*|--resume|--resume=*)
      die "${a%%=*} is set by this script (one fresh run per device in its own folder); use --devices \"cpu cuda\"" ;;
    --data|--data=*)
      die "--data: set TORCHFIT_DATA_DIR instead (the same folder is used for every device)" ;;
    *) TRAIN_ARGS+=("$a"); shift; continue ;;
  esac
  case "$a" in
    --epochs) EPOCHS=$v ;;
    --steps-per-epoch) STEPS=$v ;;
    --devices) DEVICES=$v ;;
    --matmul-sizes) MM_SIZES=$v ;;
    --matmul-naive-max) MM_NAIVE_MAX=$v ;;
    --matmul-min-time) MM_MIN_TIME=$v ;;
  esac
done
[[ $EPOCHS =~ ^[1-9][0-9]*$ ]] || die "--epochs must be a positive integer, got '$EPOCHS'"
[[ $STEPS =~ ^[1-9][0-9]*$ ]] || die "--steps-per-epoch must be a positive integer, got '$STEPS'"
for d in $DEVICES; do
  [[ $d =~ ^(cpu|cuda(:[0-9]+)?)$ ]] || die "--devices: '$d' is not cpu, cuda or cuda:N"
done

BUILD=$(abspath "${TORCHFIT_BUILD_DIR:-$ROOT/build}")
DATA_DEFAULT=0
if [ -n "${TORCHFIT_DATA_DIR:-}" ]; then DATA=$(abspath "$TORCHFIT_DATA_DIR"); else DATA=$ROOT/data; DATA_DEFAULT=1; fi
HOST=$(hostname -s 2>/dev/null || hostname)
RESULTS=$(abspath "${TORCHFIT_RESULTS_DIR:-$ROOT/docs/results/$(date +%Y-%m-%d)-$HOST}")
# The first interpreter that has matplotlib (Debian's /usr/bin/python3 here; the venv's python3 on the
# GPU machine), else the first one there is (the report is then written without the chart).
PY=${TORCHFIT_PYTHON:-}
if [ -z "$PY" ]; then
  for cand in /usr/bin/python3 "$(command -v python3 || true)"; do
    [ -x "$cand" ] || continue
    [ -z "$PY" ] && PY=$cand
    if "$cand" -c 'import matplotlib' 2>/dev/null; then PY=$cand; break; fi
  done
fi
[ -n "$PY" ] || { echo "compare_cpu_gpu.sh: no python3 for the report" >&2; exit 1; }

log() { echo "[compare] $*"; }

# ---------------------------------------------------------------- apps and data
APPS=(train_cnn device_info)
[ $MATMUL -eq 1 ] && APPS+=(matmul_bench)
missing=()
for app in "${APPS[@]}"; do [ -x "$BUILD/apps/$app" ] || missing+=("$app"); done
if [ ${#missing[@]} -gt 0 ]; then
  [ -f "$BUILD/CMakeCache.txt" ] || { echo "compare_cpu_gpu.sh: $BUILD/apps lacks ${missing[*]} and $BUILD is not a configured build (run scripts/test.sh or set TORCHFIT_BUILD_DIR)" >&2; exit 1; }
  log "building ${missing[*]} in $BUILD"
  cmake --build "$BUILD" -j"$(nproc)" --target "${missing[@]}" || { echo "compare_cpu_gpu.sh: build of ${missing[*]} failed" >&2; exit 1; }
fi
if [ ! -d "$DATA/train" ] || [ ! -d "$DATA/test" ]; then
  if [ $DATA_DEFAULT -eq 1 ]; then
    log "no $DATA/{train,test}: preparing Fashion-MNIST with scripts/prepare_data.sh"
    BUILD_DIR=$BUILD "$ROOT/scripts/prepare_data.sh" || { echo "compare_cpu_gpu.sh: scripts/prepare_data.sh failed" >&2; exit 1; }
  else
    echo "compare_cpu_gpu.sh: TORCHFIT_DATA_DIR=$DATA has no train/ and test/ folders" >&2; exit 1
  fi
fi

mkdir -p "$RESULTS" || { echo "compare_cpu_gpu.sh: cannot create $RESULTS" >&2; exit 1; }
if [ $KEEP_RUNS -eq 1 ]; then
  RUNS=$RESULTS/runs; mkdir -p "$RUNS"
else
  RUNS=$(mktemp -d "${TMPDIR:-/tmp}/torchfit-compare.XXXXXX")
  trap 'rm -rf "$RUNS"' EXIT
fi
# Outputs of an earlier run in the same folder would mix into this report.
rm -f "$RESULTS"/{report.md,ms_per_step.png,meta.json,device_info.json,matmul.csv,matmul.log} \
      "$RESULTS"/*_{steps.csv,epochs.csv,run.json,train.log}

# ---------------------------------------------------------------- which devices
"$BUILD/apps/device_info" --json > "$RESULTS/device_info.json" 2> "$RUNS/device_info.err" \
  || { cat "$RUNS/device_info.err" >&2; echo "compare_cpu_gpu.sh: device_info --json failed" >&2; exit 1; }
read -r CUDA_AVAILABLE CUDA_COUNT CUDA_REASON < <("$PY" - "$RESULTS/device_info.json" <<'PY'
import json, sys
c = json.load(open(sys.argv[1])).get("cuda", {})
print("1" if c.get("available") else "0", c.get("device_count") or 0,
      (c.get("unavailable_reason") or "CUDA not available").replace("\n", " "))
PY
)
RUN_DEVICES=()
SKIPPED=()   # "device|reason"
for d in $DEVICES; do
  if [ "$d" = cpu ]; then RUN_DEVICES+=(cpu); continue; fi
  idx=${d#cuda}; idx=${idx#:}; idx=${idx:-0}
  if [ "$CUDA_AVAILABLE" != 1 ]; then SKIPPED+=("$d|$CUDA_REASON")
  elif [ "$idx" -ge "$CUDA_COUNT" ]; then SKIPPED+=("$d|only $CUDA_COUNT CUDA device(s) visible")
  else RUN_DEVICES+=("$d"); fi
done
for s in "${SKIPPED[@]}"; do log "${s%%|*}: not run — ${s#*|}"; done

# ---------------------------------------------------------------- training runs
FAILED=0
VERBOSE=(--verbose 2)  # one line per epoch; CLI11 refuses an option given twice
for a in "${TRAIN_ARGS[@]}"; do case "$a" in --verbose|--verbose=*) VERBOSE=() ;; esac; done
RUN_RECORDS=()  # "device|file prefix|exit status|start|end|load before|load after"
for d in "${RUN_DEVICES[@]}"; do
  tag=${d/:/}
  run_dir=$RUNS/$tag
  rm -rf "$run_dir"
  cmd=("$BUILD/apps/train_cnn" --data "$DATA" --device "$d" --epochs "$EPOCHS" --steps-per-epoch "$STEPS"
       --run-dir "$run_dir" "${VERBOSE[@]}" "${TRAIN_ARGS[@]}")
  log "$d: ${cmd[*]}"
  load0=$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo "?")
  t0=$(date -u +%Y-%m-%dT%H:%M:%SZ)
  "${cmd[@]}" > "$RESULTS/${tag}_train.log" 2>&1
  rc=$?
  t1=$(date -u +%Y-%m-%dT%H:%M:%SZ)
  load1=$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo "?")
  grep -E '^(Timing|[0-9]+/[0-9]+ )' "$RESULTS/${tag}_train.log" | sed "s/^/[compare] $d: /"
  if [ $rc -ne 0 ]; then
    FAILED=1
    log "$d: train_cnn exited $rc; last lines of ${tag}_train.log:"; tail -5 "$RESULTS/${tag}_train.log"
  fi
  for f in steps.csv epochs.csv run.json; do
    [ -f "$run_dir/$f" ] && cp "$run_dir/$f" "$RESULTS/${tag}_$f"
  done
  RUN_RECORDS+=("$d|$tag|$rc|$t0|$t1|$load0|$load1|$(printf '%q ' "${cmd[@]}")")
done

# ---------------------------------------------------------------- matmul
MM_CMD=""
if [ $MATMUL -eq 1 ]; then
  # shellcheck disable=SC2206  # the sizes are a word list
  mm=("$BUILD/apps/matmul_bench" --sizes $MM_SIZES --naive-max "$MM_NAIVE_MAX" --min-time "$MM_MIN_TIME"
      --cuda auto --csv "$RESULTS/matmul.csv")
  MM_CMD=$(printf '%q ' "${mm[@]}")
  log "matmul: ${mm[*]}"
  if ! "${mm[@]}" > "$RESULTS/matmul.log" 2>&1; then
    FAILED=1; log "matmul_bench failed:"; tail -5 "$RESULTS/matmul.log"
  fi
fi

# ---------------------------------------------------------------- meta + report
export CMP_RECORDS CMP_SKIPPED
CMP_RECORDS=$(printf '%s\n' "${RUN_RECORDS[@]}")
CMP_SKIPPED=$(printf '%s\n' "${SKIPPED[@]}")
CMP_ARGS=$(printf '%q ' "scripts/compare_cpu_gpu.sh" "${ORIG_ARGS[@]}")
export CMP_ARGS CMP_EPOCHS=$EPOCHS CMP_STEPS=$STEPS CMP_DATA=$DATA CMP_BUILD=$BUILD CMP_MM_CMD=$MM_CMD \
       CMP_TRAIN_ARGS="${TRAIN_ARGS[*]}" CMP_HOST=$HOST CMP_KEEP=$KEEP_RUNS CMP_ROOT=$ROOT
CMP_COMMIT="$(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown)$(git -C "$ROOT" diff --quiet HEAD -- . ':(exclude)docs/results' 2>/dev/null || echo ' (+ uncommitted changes)')"
export CMP_COMMIT
"$PY" - "$RESULTS/meta.json" <<'PY'
import json, os, sys, time
recs = []
for line in os.environ["CMP_RECORDS"].splitlines():
    if not line:
        continue
    dev, tag, rc, t0, t1, l0, l1, cmd = line.split("|", 7)
    recs.append({"device": dev, "prefix": tag, "exit_status": int(rc), "started": t0, "finished": t1,
                 "loadavg_before": l0, "loadavg_after": l1, "command": cmd.strip()})
skipped = [{"device": s.split("|", 1)[0], "reason": s.split("|", 1)[1]}
           for s in os.environ["CMP_SKIPPED"].splitlines() if "|" in s]
omp = {k: v for k, v in os.environ.items() if k.startswith(("OMP_", "GOMP_", "MKL_", "OPENBLAS_"))}
meta = {"generated": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "host": os.environ["CMP_HOST"],
        "commit": os.environ["CMP_COMMIT"], "command": os.environ["CMP_ARGS"].strip(),
        "epochs": int(os.environ["CMP_EPOCHS"]), "steps_per_epoch": int(os.environ["CMP_STEPS"]),
        "train_args": os.environ["CMP_TRAIN_ARGS"], "data": os.environ["CMP_DATA"],
        "build": os.environ["CMP_BUILD"], "runs": recs, "skipped": skipped,
        "matmul_command": os.environ["CMP_MM_CMD"].strip(), "thread_environment": omp,
        "runs_kept": os.environ["CMP_KEEP"] == "1", "repository": os.environ["CMP_ROOT"]}
json.dump(meta, open(sys.argv[1], "w"), indent=2)
PY
if ! "$PY" "$ROOT/scripts/report/compare_report.py" "$RESULTS"; then
  FAILED=1; echo "compare_cpu_gpu.sh: the report script failed" >&2
fi
[ -f "$RESULTS/report.md" ] && log "report: $RESULTS/report.md"
exit $FAILED
