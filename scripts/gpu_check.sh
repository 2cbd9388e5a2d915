#!/usr/bin/env bash
# gpu_check.sh — build and check torchfit on a bare GPU machine (CUDA PyTorch, CMake, ninja, a
# compiler; no internet) with the bundle scripts/gpu_bundle.sh made. Run from the repository root:
#
#   scripts/gpu_check.sh OUTDIR [--bundle DIR] [--work DIR] [--torch-prefix DIR] [--jobs N]
#                        [--budget SECONDS] [--sizes "500 1024 2048 4096"] [--targets "t1 t2"]
#                        [--skip-ctest] [--skip-compare] [--tar FILE] [--build-timeout SECONDS]
#                        [-- ARGS for compare_cpu_gpu.sh]
#
# Steps (each logged, timed and recorded in OUTDIR/summary.md; a failing step does not stop the
# later ones, except a failed unpack, after which everything is skipped; the exit status is 1 when any
# step failed). OUTDIR and --work must be new, empty, or left by an earlier run of this script.
#   1. unpack  — every bundle .deb into WORK/root with dpkg-deb -x (never into /); a library folder
#                WORK/lib links OpenCV, spdlog, fmt, TBB always and the other bundled libraries only
#                where this machine's ldconfig lacks them; a minimal OpenCVConfig.cmake for
#                core+imgproc; the small Fashion-MNIST set into WORK/data (exported to every later
#                step as TORCHFIT_DATA_DIR; the repository's data/ is left alone).
#   2. configure — cmake against this machine's CUDA LibTorch:
#                --torch-prefix, default $(python3 -c 'import torch;print(torch.utils.cmake_prefix_path)')
#   3. build   — all targets (or --targets), -j N (default: all cores), at most --build-timeout
#                seconds (default 420; the rehearsal on 2 cores, scripts/check_cuda_build.sh, needs more)
#   4. ctest   — the whole suite (tests ending in _CUDA run on the GPU)
#   5. device_info — header, --json, --device cuda, --gpu-memory-fraction 0.6
#   6. matmul_bench — --sizes (default "500 1024 2048 4096"), naive loop up to 1024, CUDA on when
#                a GPU is visible, CSV
#   7. compare — scripts/compare_cpu_gpu.sh when it exists (tiny settings by default; ARGS after --
#                are passed on; it also gets TORCHFIT_BUILD_DIR, TORCHFIT_DATA_DIR and
#                TORCHFIT_RESULTS_DIR=OUTDIR/results in its environment); then again with
#                --mixed-precision mixed_bfloat16 into OUTDIR/results-mixed_bfloat16 (compare_bf16)
#   8. step_compare — with a GPU: scripts/bench/gpu_step_compare.sh, torchfit's step vs eager
#                PyTorch-Python's (this machine's python3 torch) on the GPU, float32 and bf16 autocast,
#                contiguous and channels_last, interleaved (OUTDIR/step_compare.md)
# Everything written goes under OUTDIR (logs, summary.md, matmul.csv, device_info.json, results/),
# and with --tar FILE also into one .tar.gz. The whole run is kept inside --budget seconds
# (default 510, i.e. 8.5 minutes): each step's timeout is capped by the time left.
set -uo pipefail
CALLER=$PWD   # relative OUTDIR, --work, --bundle and --tar are taken from where the script was started
cd "$(dirname "$0")/.."
REPO=$(pwd)
abs() { case "$1" in /*) realpath -m "$1" ;; *) realpath -m "$CALLER/$1" ;; esac; }

usage() { awk 'NR > 1 && /^#/ {sub(/^# ?/, ""); print; next} NR > 1 {exit}' "$0"; }
[ $# -ge 1 ] || { usage; exit 2; }
case "$1" in -h|--help) usage; exit 0 ;; -*) echo "gpu_check.sh: OUTDIR comes first" >&2; exit 2 ;; esac
OUTDIR=$(abs "$1"); shift
BUNDLE=$REPO/gpu_bundle
WORK=${TMPDIR:-/tmp}/torchfit-gpu-check
TORCH_PREFIX=""
JOBS=$(nproc 2>/dev/null || echo 4)
BUDGET=510
SIZES="500 1024 2048 4096"
TARGETS=""
SKIP_CTEST=0
SKIP_COMPARE=0
TAR=""
BUILD_TIMEOUT=420
COMPARE_ARGS=()
bad() { echo "gpu_check.sh: $*" >&2; exit 2; }
value() { [ $# -ge 2 ] || bad "$1 needs a value"; }
while [ $# -gt 0 ]; do
  case "$1" in
    --bundle) value "$@"; [ -d "$(abs "$2")" ] || bad "--bundle '$2' is not a folder"; BUNDLE=$(cd "$(abs "$2")" && pwd); shift ;;
    --work) value "$@"; WORK=$(abs "$2"); shift ;;
    --torch-prefix) value "$@"; TORCH_PREFIX="$2"; shift ;;
    --jobs) value "$@"; JOBS="$2"; shift ;;
    --budget) value "$@"; BUDGET="$2"; shift ;;
    --sizes) value "$@"; SIZES="$2"; shift ;;
    --targets) value "$@"; TARGETS="$2"; shift ;;
    --skip-ctest) SKIP_CTEST=1 ;;
    --skip-compare) SKIP_COMPARE=1 ;;
    --tar) value "$@"; TAR=$(abs "$2"); shift ;;
    --build-timeout) value "$@"; BUILD_TIMEOUT="$2"; shift ;;
    --) shift; COMPARE_ARGS=("$@"); break ;;
    *) bad "unknown argument '$1'" ;;
  esac
  shift
done
for pair in "--jobs:$JOBS" "--budget:$BUDGET" "--build-timeout:$BUILD_TIMEOUT"; do
  [[ "${pair#*:}" =~ ^[1-9][0-9]*$ ]] || bad "${pair%%:*} must be a positive whole number, got '${pair#*:}'"
done
# OUTDIR and --work are emptied in part on every run: only folders that are new, empty or this
# script's own (OUTDIR with a summary.md, --work with its marker) are used, never the repository.
usable() {  # usable DIR MARKER
  local d; d=$(realpath -m "$1")
  [ "$d" != "$REPO" ] && [ "$d" != "/" ] && [ "$d" != "$(realpath -m "$CALLER")" ] || return 1
  [ ! -e "$d" ] || { [ -d "$d" ] && { [ -z "$(ls -A "$d")" ] || [ -e "$d/$2" ]; }; }
}
usable "$OUTDIR" summary.md || bad "OUTDIR '$OUTDIR' must be a new or empty folder (or an earlier gpu_check OUTDIR), not the repository or the current folder"
usable "$WORK" .torchfit-gpu-check || bad "--work '$WORK' must be a new or empty folder (or an earlier gpu_check work folder), not the repository or the current folder"
mkdir -p "$OUTDIR" "$WORK" || bad "cannot create OUTDIR '$OUTDIR' or --work '$WORK'"
touch "$WORK/.torchfit-gpu-check"
OUTDIR=$(cd "$OUTDIR" && pwd)
rm -f "$OUTDIR"/*.log "$OUTDIR/summary.md.notes"   # logs of an earlier run in the same OUTDIR
WORK=$(cd "$WORK" && pwd)
ROOT=$WORK/root
export TORCHFIT_DATA_DIR=$WORK/data
LIBDIR=$WORK/lib
BUILD=$WORK/build
START=$(date +%s)
export REPO BUNDLE WORK ROOT LIBDIR BUILD
SUMMARY=$OUTDIR/summary.md
FAILED=0

{
  echo "# torchfit gpu_check — $(date -u +%Y-%m-%dT%H:%MZ) on $(hostname)"
  echo
  echo "commit: $(git -C "$REPO" rev-parse --short HEAD 2>/dev/null || echo unknown)$(git -C "$REPO" diff --quiet 2>/dev/null || echo ' (+ uncommitted changes)')"
  echo
  echo "| step | status | seconds | log |"
  echo "| --- | --- | --- | --- |"
} > "$SUMMARY"

cfgdir() { dirname "$(find "$ROOT" -name "$1" | head -1)"; }
time_left() { echo $(( BUDGET - ($(date +%s) - START) )); }

# step NAME MAX_SECONDS CMD... : runs CMD with a timeout (capped by the budget left), output to
# OUTDIR/NAME.log (appended), status into the summary.
step() {
  local name=$1 max=$2; shift 2
  local left; left=$(time_left)
  local log=$OUTDIR/$name.log
  if [ -n "${ABORTED:-}" ]; then
    echo "| $name | skipped: $ABORTED | 0 | |" >> "$SUMMARY"
    echo "[gpu_check] $name: skipped ($ABORTED)"
    return 1
  fi
  if [ "$left" -le 5 ]; then
    echo "| $name | skipped: budget of ${BUDGET}s used up | 0 | |" >> "$SUMMARY"
    echo "[gpu_check] $name: skipped (budget used up)"
    FAILED=1
    return 1
  fi
  [ "$max" -gt "$left" ] && max=$left
  echo "[gpu_check] $name (timeout ${max}s) ..."
  local t0; t0=$(date +%s)
  { echo "\$ $*"; } >> "$log"
  if declare -F "$1" >/dev/null; then  # a function of this script: run it in a child bash
    timeout --kill-after=10 "$max" bash -c "$(declare -f "$1" cfgdir); $1" >> "$log" 2>&1
  else
    timeout --kill-after=10 "$max" "$@" >> "$log" 2>&1
  fi
  local rc=$?
  local dt=$(( $(date +%s) - t0 ))
  local status="ok"
  if [ $rc -eq 124 ] || [ $rc -eq 137 ]; then status="TIMEOUT after ${max}s"; FAILED=1
  elif [ $rc -ne 0 ]; then status="FAILED (exit $rc)"; FAILED=1; fi
  echo "| $name | $status | $dt | $(basename "$log") |" >> "$SUMMARY"
  echo "[gpu_check] $name: $status in ${dt}s"
  [ $rc -eq 0 ]
}

# ---------------------------------------------------------------- 0. what machine this is
{
  echo "## host"; uname -a; (. /etc/os-release 2>/dev/null && echo "$PRETTY_NAME")
  echo "cores: $(nproc)"; echo "## nvidia-smi"; nvidia-smi 2>&1 || echo "nvidia-smi not available"
  echo "## tools"; for t in cmake ninja c++ g++ nvcc python3 dpkg-deb; do printf '%s: ' "$t"; command -v "$t" || echo "missing"; done
  cmake --version 2>&1 | head -1; c++ --version 2>&1 | head -1; nvcc --version 2>&1 | tail -2
  echo "## python torch"
  python3 -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda, "cudnn", torch.backends.cudnn.version(), "available", torch.cuda.is_available(), "cxx11abi", torch._C._GLIBCXX_USE_CXX11_ABI); print("cmake_prefix_path", torch.utils.cmake_prefix_path)' 2>&1
} > "$OUTDIR/env.log" 2>&1
HAVE_GPU=0
nvidia-smi -L >/dev/null 2>&1 && HAVE_GPU=1
export HAVE_GPU
if ! command -v nvcc >/dev/null 2>&1 && [ -x /usr/local/cuda/bin/nvcc ]; then export PATH=/usr/local/cuda/bin:$PATH; fi

# ---------------------------------------------------------------- 1. unpack the bundle
unpack() {
  set -e
  [ -d "$BUNDLE/debs" ] || { echo "no $BUNDLE/debs: run scripts/gpu_bundle.sh on the Debian machine and bring gpu_bundle/"; return 1; }
  rm -rf "$ROOT" "$LIBDIR" "$WORK/cmake"
  mkdir -p "$ROOT" "$LIBDIR" "$WORK/cmake/opencv"
  for deb in "$BUNDLE"/debs/*.deb; do
    if command -v dpkg-deb >/dev/null 2>&1; then
      dpkg-deb -x "$deb" "$ROOT"
    else  # ar + tar: a .deb is an ar archive holding data.tar.{xz,zst,gz}
      local tmp; tmp=$(mktemp -d)
      (cd "$tmp" && ar x "$deb" && tar -xf data.tar.* -C "$ROOT")
      rm -rf "$tmp"
    fi
    echo "unpacked $(basename "$deb")"
  done
  # Library folder: OpenCV/spdlog/fmt/TBB always; anything else only where ldconfig lacks it.
  local known; known=$(ldconfig -p 2>/dev/null | awk 'NR>1 {print $1}' | sort -u)
  while IFS= read -r f; do
    local name; name=$(basename "$f")
    case "$name" in
      libopencv_*|libspdlog*|libfmt*|libtbb*) ln -sf "$f" "$LIBDIR/$name" ;;
      *) if ! grep -qx "$name" <<< "$known"; then ln -sf "$f" "$LIBDIR/$name"; echo "using bundled $name"; fi ;;
    esac
  done < <(find "$ROOT" \( -type f -o -type l \) -name 'lib*.so*' | sort)
  local arch=x86_64-linux-gnu
  local core; core=$(ls "$ROOT"/usr/lib/$arch/libopencv_core.so.4.*.* | head -1)
  local imgproc; imgproc=$(ls "$ROOT"/usr/lib/$arch/libopencv_imgproc.so.4.*.* | head -1)
  local ver; ver=${core##*.so.}
  cat > "$WORK/cmake/opencv/OpenCVConfig.cmake" <<CMAKE
# Minimal OpenCV config written by scripts/gpu_check.sh (core + imgproc from the bundle).
set(OpenCV_VERSION $ver)
set(OpenCV_INCLUDE_DIRS "$ROOT/usr/include/opencv4")
add_library(opencv_core SHARED IMPORTED)
set_target_properties(opencv_core PROPERTIES IMPORTED_LOCATION "$core"
  INTERFACE_INCLUDE_DIRECTORIES "$ROOT/usr/include/opencv4")
add_library(opencv_imgproc SHARED IMPORTED)
set_target_properties(opencv_imgproc PROPERTIES IMPORTED_LOCATION "$imgproc"
  INTERFACE_INCLUDE_DIRECTORIES "$ROOT/usr/include/opencv4" INTERFACE_LINK_LIBRARIES opencv_core)
set(OpenCV_LIBS opencv_core opencv_imgproc)
set(OpenCV_core_FOUND TRUE)
set(OpenCV_imgproc_FOUND TRUE)
set(OpenCV_FOUND TRUE)
CMAKE
  printf 'set(PACKAGE_VERSION %s)\nset(PACKAGE_VERSION_COMPATIBLE TRUE)\nif(PACKAGE_FIND_VERSION STREQUAL PACKAGE_VERSION)\n  set(PACKAGE_VERSION_EXACT TRUE)\nendif()\n' "$ver" \
    > "$WORK/cmake/opencv/OpenCVConfigVersion.cmake"
  echo "OpenCV $ver config: $WORK/cmake/opencv"
  rm -rf "$WORK/data"
  tar -xzf "$BUNDLE/fashion-mnist-small.tar.gz" -C "$WORK"
  echo "dataset: $(find "$WORK/data" -name '*.png' | wc -l) PNGs in $WORK/data (TORCHFIT_DATA_DIR)"
}
step unpack 120 unpack || ABORTED="the unpack step failed"

# ---------------------------------------------------------------- 2. configure against the CUDA LibTorch
if [ -z "$TORCH_PREFIX" ]; then
  TORCH_PREFIX=$(python3 -c 'import torch;print(torch.utils.cmake_prefix_path)' 2>/dev/null || true)
fi
export LD_LIBRARY_PATH=$LIBDIR${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export TORCH_CUDA_ARCH_LIST=${TORCH_CUDA_ARCH_LIST:-9.0}
GEN=Ninja; command -v ninja >/dev/null 2>&1 || GEN="Unix Makefiles"
export TORCH_PREFIX GEN JOBS
configure() {
  [ -n "$TORCH_PREFIX" ] && [ -d "$TORCH_PREFIX" ] || { echo "no LibTorch CMake prefix ('$TORCH_PREFIX'); pass --torch-prefix"; return 1; }
  rm -rf "$BUILD"
  local cuda_args=()
  [ "$HAVE_GPU" -eq 1 ] && cuda_args=(-DCMAKE_CUDA_ARCHITECTURES=native)
  # Unity batches of 16 keep 2 cores busy; with many cores smaller batches keep them all busy.
  local batch=16; [ "$JOBS" -ge 8 ] && batch=4
  cmake -S "$REPO" -B "$BUILD" -G "$GEN" -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_PREFIX_PATH="$TORCH_PREFIX;$ROOT/usr" \
    -DOpenCV_DIR="$WORK/cmake/opencv" \
    -Dspdlog_DIR="$(cfgdir spdlogConfig.cmake)" -Dfmt_DIR="$(cfgdir fmt-config.cmake)" \
    -DGTest_DIR="$(cfgdir GTestConfig.cmake)" -DCLI11_DIR="$(cfgdir CLI11Config.cmake)" \
    -Dnlohmann_json_DIR="$(cfgdir nlohmann_jsonConfig.cmake)" \
    -DLIBCSV_INCLUDE_DIR="$ROOT/usr/include" -DLIBCSV_LIBRARY="$ROOT/usr/lib/x86_64-linux-gnu/libcsv.so" \
    -DCMAKE_CXX_FLAGS="-isystem $ROOT/usr/include/stb" \
    -DCMAKE_EXE_LINKER_FLAGS="-Wl,-rpath-link,$LIBDIR -Wl,-rpath,$LIBDIR" \
    -DCMAKE_SHARED_LINKER_FLAGS="-Wl,-rpath-link,$LIBDIR -Wl,-rpath,$LIBDIR" \
    -DTORCHFIT_UNITY_BATCH_SIZE="$batch" "${cuda_args[@]}"
}
step configure 180 configure
grep -E "torchfit: (CUDA|CPU)" "$OUTDIR/configure.log" >> "$SUMMARY.notes" 2>/dev/null

# ---------------------------------------------------------------- 3. build
# shellcheck disable=SC2086
step build "$BUILD_TIMEOUT" cmake --build "$BUILD" -j "$JOBS" ${TARGETS:+--target $TARGETS}

# ---------------------------------------------------------------- 4. ctest
if [ "$SKIP_CTEST" -eq 0 ] && [ -z "$TARGETS" ]; then
    step ctest 300 bash -c "cd '$BUILD' && ctest --output-on-failure -j $(( JOBS < 8 ? JOBS : 8 )) --timeout 240"
fi

# ---------------------------------------------------------------- 5. device_info
not_built() { echo "| $1 | skipped: $2 was not built | 0 | |" >> "$SUMMARY"; FAILED=1; }
DI=$BUILD/apps/device_info
[ -x "$DI" ] || not_built device_info "$DI"
if [ -x "$DI" ]; then
  step device_info 60 "$DI" --device auto
  step device_info_json 60 bash -c "'$DI' --json > '$OUTDIR/device_info.json'"
  if [ "$HAVE_GPU" -eq 1 ]; then
    step device_info_cuda 60 "$DI" --device cuda --gpu-memory-fraction 0.6
  else
    # Without a GPU the expected outcome is the clear error (exit 2): record it, do not fail on it.
    step device_info_cuda 60 bash -c "'$DI' --device cuda; echo \"exit status \$? (expected 2 without CUDA)\""
  fi
fi

# ---------------------------------------------------------------- 6. matmul_bench
MB=$BUILD/apps/matmul_bench
[ -x "$MB" ] || not_built matmul_bench "$MB"
if [ -x "$MB" ]; then
  CUDA_MODE=auto; [ "$HAVE_GPU" -eq 1 ] && CUDA_MODE=on
  # shellcheck disable=SC2086
  step matmul_bench 180 "$MB" --sizes $SIZES --naive-max 1024 --cuda "$CUDA_MODE" --csv "$OUTDIR/matmul.csv"
fi

# ---------------------------------------------------------------- 7. compare_cpu_gpu.sh
if [ "$SKIP_COMPARE" -eq 0 ] && [ -z "$TARGETS" ]; then
  if [ -f "$REPO/scripts/compare_cpu_gpu.sh" ]; then
    export TORCHFIT_BUILD_DIR=$BUILD TORCHFIT_DATA_DIR=$WORK/data TORCHFIT_RESULTS_DIR=$OUTDIR/results
    step compare 240 bash "$REPO/scripts/compare_cpu_gpu.sh" "${COMPARE_ARGS[@]}"
  else
    echo "| compare | skipped: scripts/compare_cpu_gpu.sh does not exist yet | 0 | |" >> "$SUMMARY"
  fi
fi

if [ "$SKIP_COMPARE" -eq 0 ] && [ -z "$TARGETS" ] && [ -f "$REPO/scripts/compare_cpu_gpu.sh" ]; then
  export TORCHFIT_RESULTS_DIR=$OUTDIR/results-mixed_bfloat16
  step compare_bf16 200 bash "$REPO/scripts/compare_cpu_gpu.sh" --no-matmul "${COMPARE_ARGS[@]}" -- --mixed-precision mixed_bfloat16
fi

# ---------------------------------------------------------------- 8. step comparison with PyTorch on the GPU
if [ "$HAVE_GPU" -eq 1 ] && [ -x "$BUILD/apps/bench_step" ]; then
  step step_compare 240 bash "$REPO/scripts/bench/gpu_step_compare.sh" "$BUILD" "$OUTDIR/step_compare.md" 3
fi

{
  echo
  [ -f "$SUMMARY.notes" ] && cat "$SUMMARY.notes" && rm -f "$SUMMARY.notes"
  echo "total: $(( $(date +%s) - START )) s of a ${BUDGET} s budget; GPU visible: $([ $HAVE_GPU -eq 1 ] && echo yes || echo no)"
  echo "LibTorch prefix: ${TORCH_PREFIX:-none}; build dir: $BUILD; bundle: $BUNDLE"
  [ -f "$OUTDIR/matmul_bench.log" ] && { echo; echo '```'; grep -A40 -E '^ +n  method' "$OUTDIR/matmul_bench.log"; echo '```'; }
  [ -f "$OUTDIR/step_compare.md" ] && { echo; cat "$OUTDIR/step_compare.md"; }
} >> "$SUMMARY"
if [ -n "$TAR" ]; then
  tar -C "$(dirname "$OUTDIR")" -czf "$TAR" "$(basename "$OUTDIR")" && echo "[gpu_check] packed $OUTDIR into $TAR"
fi
echo "[gpu_check] done in $(( $(date +%s) - START )) s; summary: $SUMMARY"
cat "$SUMMARY"
exit $FAILED
