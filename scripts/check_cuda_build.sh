#!/usr/bin/env bash
# check_cuda_build.sh — build torchfit against Debian 13's CUDA LibTorch 2.6 and run the whole test
# suite there, on a machine WITHOUT a GPU (CPU execution; tests ending in _CUDA skip themselves).
# Catches LibTorch-2.x and CUDA-only compile errors before the rare GPU machine is used.
#
#   scripts/check_cuda_build.sh [--root DIR] [--build-dir DIR] [--jobs N] [--no-tests]
#                               [--tests REGEX] [--rehearse-gpu-check] [-- extra cmake arguments]
#
#   --root DIR     the Debian 13 root (default /var/cache/torchfit/debian13-cuda-root), an absolute
#                  path. Made on the first run with mmdebstrap (~4 GB download, ~12 GB on disk,
#                  10-15 min) when DIR does not exist or is empty, and reused afterwards; a folder
#                  with other content is refused, never deleted. Delete the folder to start again.
#                  One run per root at a time (a lock beside it, DIR.lock).
#   --build-dir    build folder: build-<name> at the top of the repository (default build-cuda;
#                  git-ignored). Not used by --rehearse-gpu-check (build-cuda-rehearsal/).
#   --jobs N       parallel compile jobs (default: all cores)
#   --no-tests     build only
#   --tests REGEX  run only the ctest tests whose names match REGEX (ctest -R; e.g. 'OnnxOpenCv' after
#                  an ONNX change: minutes instead of the whole suite's 30-60); the closing line then
#                  counts those only, so a change is still checked once against the whole suite
#   --rehearse-gpu-check
#                  instead of the build above, run scripts/gpu_check.sh inside the root the way the
#                  GPU machine runs it (bundle packages from gpu_bundle/, the root's CUDA LibTorch in
#                  place of the pip one); its report goes to build-cuda-rehearsal/report/
#
# Ends with one line: "check_cuda_build: N passed, N failed (of T; K skipped themselves; LibTorch X ...)". Exit status 0 when
# everything built and passed, 1 otherwise, 2 for bad arguments. Needs root (chroot, mounts).
#
# Inside the root, libcudnn.so.9 is a GENERATED STUB: Debian's nvidia-cudnn package downloads cuDNN
# from NVIDIA when it is configured, which this machine cannot. The stub only lets programs link and
# run on the CPU; every cuDNN call in it fails. NEVER use this root, or anything built in it, for a
# GPU run or a GPU timing.
set -euo pipefail
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

ROOT=/var/cache/torchfit/debian13-cuda-root
BUILD_DIR=build-cuda
JOBS=$(nproc)
RUN_TESTS=1
TESTS_REGEX=""
REHEARSE=0
CMAKE_EXTRA=()
MIRROR=${TORCHFIT_DEBIAN_MIRROR:-http://deb.debian.org/debian}
value() { [ $# -ge 2 ] || { echo "check_cuda_build.sh: $1 needs a value" >&2; exit 2; }; }
while [ $# -gt 0 ]; do
  case "$1" in
    --root) value "$@"; ROOT=$2; shift ;;
    --build-dir) value "$@"; BUILD_DIR=$2; shift ;;
    --jobs) value "$@"; JOBS=$2; shift ;;
    --no-tests) RUN_TESTS=0 ;;
    --tests) value "$@"; TESTS_REGEX=$2; shift ;;
    --rehearse-gpu-check) REHEARSE=1 ;;
    --) shift; CMAKE_EXTRA=("$@"); break ;;
    -h|--help) awk 'NR > 1 && /^#/ {sub(/^# ?/, ""); print; next} NR > 1 {exit}' "$0"; exit 0 ;;
    *) echo "check_cuda_build.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
  shift
done
bad() { echo "check_cuda_build.sh: $*" >&2; exit 2; }
# A folder named build-<something> at the top of the repository (git-ignored by /build*/): never the
# sources, the repository itself or the host's build/.
BUILD_DIR=$(realpath -m --relative-to="$REPO" "$REPO/$BUILD_DIR" 2>/dev/null || echo "$BUILD_DIR")
[[ "$BUILD_DIR" =~ ^build[-_.A-Za-z0-9]+$ ]] ||
  bad "--build-dir must be a folder named build-<name> at the top of the repository (e.g. build-cuda), got '$BUILD_DIR'"
case "$ROOT" in
  /*) ;;
  *) bad "--root must be an absolute path, got '$ROOT'" ;;
esac
ROOT=$(realpath -m "$ROOT")
[ "$ROOT" != "/" ] || bad "--root must not be '/'"
[ -e "$ROOT" ] && [ ! -d "$ROOT" ] && bad "--root '$ROOT' exists and is not a folder"
[[ "$JOBS" =~ ^[1-9][0-9]*$ ]] || { echo "check_cuda_build.sh: --jobs must be a positive integer, got '$JOBS'" >&2; exit 2; }
[ "$(id -u)" -eq 0 ] || { echo "check_cuda_build.sh: needs root (mmdebstrap, chroot, bind mounts)" >&2; exit 2; }

log() { echo "[check_cuda_build] $*"; }
READY=$ROOT/.torchfit-root-ready
STARTED=$ROOT/.torchfit-root-started   # mmdebstrap finished; the cuDNN repair may not have
T0=$(date +%s)

# One run per root at a time (runs share the mounts inside it); the lock sits beside the root.
mkdir -p "$(dirname "$ROOT")"
[ -e "$ROOT.lock" ] || MADE_LOCK=1
exec 9>>"$ROOT.lock"   # appended to, never emptied: the file may be someone else's
flock -n 9 || { log "another check_cuda_build.sh is using $ROOT; wait for it or pass another --root"; exit 1; }

# ---------------------------------------------------------------- the Debian 13 root (cached)
PKGS=build-essential,cmake,ninja-build,git,ccache,pkg-config,python3,zlib1g-dev,libopencv-dev,libstb-dev
PKGS=$PKGS,libspdlog-dev,libcli11-dev,nlohmann-json3-dev,libgtest-dev,libgmock-dev,libbenchmark-dev
# Distributed (issue 16): gloo headers as the CUDA LibTorch uses them (libgloo-cuda-dev; it conflicts with
# libgloo-dev, whose libgloo0 would replace the libgloo-cuda0 that libtorch-cuda needs) and nccl.h.
PKGS=$PKGS,libopenblas0-openmp,libtorch-cuda-dev,nvidia-cuda-toolkit,libcsv-dev,libjpeg-dev,libgloo-cuda-dev,libnccl-dev

make_root() {
  command -v mmdebstrap >/dev/null || { log "installing mmdebstrap"; apt-get update -qq; apt-get install -y -qq mmdebstrap >/dev/null; }
  log "creating the Debian 13 (stable) root in $ROOT from $MIRROR (first run: ~4 GB download, 10-15 min)"
  # nvidia-cudnn's post-install script downloads cuDNN and always fails offline; mmdebstrap then stops
  # with an error but leaves the root, and fix_cudnn configures the rest. Any other failure leaves no
  # dpkg in the root and ends here.
  mmdebstrap --variant=apt --components=main,contrib,non-free,non-free-firmware --include="$PKGS" \
    --skip=cleanup/reproducible stable "$ROOT" "$MIRROR" ||
    log "mmdebstrap exited with an error (nvidia-cudnn's download always fails offline); checking what is left"
  [ -x "$ROOT/usr/bin/dpkg" ] || { log "mmdebstrap failed: no usable root in $ROOT (see its messages above)"; exit 1; }
  touch "$STARTED"
  finish_root
}

# nvidia-cudnn is an installer (it fetches cuDNN from NVIDIA). Neutralise its post-install script,
# configure the rest, then put a stub libcudnn.so.9 in place (see the header: never for a GPU run).
fix_cudnn() {
  local postinst=$ROOT/var/lib/dpkg/info/nvidia-cudnn.postinst
  if [ -f "$postinst" ]; then
    printf '#!/bin/sh\n# neutralised by torchfit scripts/check_cuda_build.sh: no internet to fetch cuDNN\nexit 0\n' > "$postinst"
  fi
  chroot "$ROOT" dpkg --configure -a
  local lib; lib=$(ls "$ROOT"/usr/lib/x86_64-linux-gnu/libtorch_cuda.so* 2>/dev/null | head -1)
  [ -n "$lib" ] || { log "no libtorch_cuda.so in the root: libtorch-cuda-dev is not installed"; exit 1; }
  if [ -e "$ROOT/usr/lib/x86_64-linux-gnu/libcudnn.so.9" ] && ! grep -q torchfit-cudnn-stub "$ROOT/usr/lib/x86_64-linux-gnu/libcudnn.so.9"; then
    log "a real libcudnn.so.9 is present in the root; keeping it"
    return
  fi
  make_cudnn_stub "$lib"
}

finish_root() { fix_cudnn; touch "$READY"; }

make_cudnn_stub() {
  local lib=$1 dir; dir=$(mktemp -d)
  nm -D --undefined-only "$lib" | awk '$2 ~ /^cudnn/ {sub(/@.*/, "", $2); print $2}' | sort -u > "$dir/syms"
  {
    echo '/* torchfit-cudnn-stub: generated by scripts/check_cuda_build.sh. NOT cuDNN: every call fails. */'
    echo '#include <stddef.h>'
    echo 'static const char stub_msg[] = "torchfit-cudnn-stub: cuDNN is not installed in this build root";'
    while read -r s; do
      case "$s" in
        cudnnGetVersion|cudnnGetCudartVersion|cudnnGetMaxDeviceVersion) echo "size_t $s(void) { return 0; }" ;;
        cudnnGetErrorString) echo "const char* $s(int status) { (void)status; return stub_msg; }" ;;
        *) echo "int $s(void) { return 1; /* CUDNN_STATUS_NOT_INITIALIZED */ }" ;;
      esac
    done < "$dir/syms"
  } > "$dir/stub.c"
  echo 'libcudnn.so.9 { global: *; };' > "$dir/stub.map"
  cp "$dir/stub.c" "$dir/stub.map" "$ROOT/tmp/"
  chroot "$ROOT" gcc -shared -fPIC -o /usr/lib/x86_64-linux-gnu/libcudnn.so.9 /tmp/stub.c \
    -Wl,-soname,libcudnn.so.9 -Wl,--version-script=/tmp/stub.map
  rm -rf "$dir" "$ROOT/tmp/stub.c" "$ROOT/tmp/stub.map"
  chroot "$ROOT" ldconfig
  log "installed a STUB libcudnn.so.9 ($(nm -D --defined-only "$ROOT/usr/lib/x86_64-linux-gnu/libcudnn.so.9" | grep -c ' T cudnn') entry points): for building and CPU tests only"
}

# Packages the project needs that a root made by an older version of this script may lack.
add_missing_packages() {
  local missing=() p
  for p in ${PKGS//,/ }; do
    chroot "$ROOT" dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return
  log "installing into the root: ${missing[*]}"
  chroot "$ROOT" /usr/bin/env -i PATH=/usr/bin:/bin:/usr/sbin:/sbin DEBIAN_FRONTEND=noninteractive \
    bash -c "apt-get update -qq && apt-get install -y -qq ${missing[*]} >/dev/null"
}

if [ -f "$READY" ]; then
  log "reusing the Debian 13 root $ROOT"
  add_missing_packages
elif [ -f "$STARTED" ]; then
  log "$ROOT was made but never finished: configuring what is left"
  finish_root
  log "root ready in $(( $(date +%s) - T0 )) s"
elif [ -d "$ROOT" ] && [ -n "$(ls -A "$ROOT")" ]; then
  log "$ROOT exists, is not empty and is not a root this script made (no $(basename "$READY")); refusing to touch it: pass another --root, or delete it yourself if it is a root cut off while mmdebstrap ran" >&2
  [ -n "${MADE_LOCK:-}" ] && rm -f "$ROOT.lock"
  exit 2
else
  make_root
  log "root ready in $(( $(date +%s) - T0 )) s ($(du -shx "$ROOT" 2>/dev/null | cut -f1))"
fi

# ---------------------------------------------------------------- mounts (undone on exit)
MNT=$ROOT/work/torchfit
MOUNTS=()
cleanup() {
  local i
  for (( i=${#MOUNTS[@]}-1; i>=0; i-- )); do umount -l "${MOUNTS[$i]}" 2>/dev/null || true; done
}
trap cleanup EXIT
bind() {  # bind SRC DST (a mount left by an interrupted run is replaced), remember for cleanup
  mkdir -p "$2"
  mountpoint -q "$2" && umount -l "$2"
  mount --bind "$1" "$2"
  MOUNTS+=("$2")
}

bind /proc "$ROOT/proc"
bind /dev "$ROOT/dev"
bind "$REPO" "$MNT"
mkdir -p /var/cache/torchfit/ccache-debian13
bind /var/cache/torchfit/ccache-debian13 "$ROOT/root/.ccache"

# ccache refuses every file compiled with a precompiled header unless these are sloppy.
CCACHE_SLOPPY=pch_defines,time_macros,include_file_mtime,include_file_ctime
in_root() { chroot "$ROOT" /usr/bin/env -i HOME=/root PATH=/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin \
  LANG=C.UTF-8 OMP_WAIT_POLICY=PASSIVE CCACHE_DIR=/root/.ccache CCACHE_SLOPPINESS="$CCACHE_SLOPPY" \
  ${OPENBLAS_CORETYPE:+OPENBLAS_CORETYPE=$OPENBLAS_CORETYPE} ${OPENBLAS_L2_SIZE:+OPENBLAS_L2_SIZE=$OPENBLAS_L2_SIZE} \
  bash -c "cd /work/torchfit && $1"; }

VERSION_H=$ROOT/usr/include/torch/csrc/api/include/torch/version.h
TORCH_VER=$(awk '/define TORCH_VERSION_(MAJOR|MINOR|PATCH)/ {v = v (v == "" ? "" : ".") $3} END {print v}' "$VERSION_H" 2>/dev/null)
[ -n "$TORCH_VER" ] || TORCH_VER=unknown
CUDA_VER=$(chroot "$ROOT" dpkg-query -W -f='${Version}' nvidia-cuda-toolkit 2>/dev/null | sed 's/~.*//' || echo unknown)
DESC="LibTorch $TORCH_VER (CUDA build, toolkit $CUDA_VER; stub cuDNN), Debian 13 root, CPU execution"

# ---------------------------------------------------------------- rehearsal of the GPU machine's check
if [ "$REHEARSE" -eq 1 ]; then
  [ -d "$REPO/gpu_bundle/debs" ] || { log "no gpu_bundle/debs: run scripts/gpu_bundle.sh first"; exit 1; }
  in_root "rm -rf build-cuda-rehearsal && mkdir -p build-cuda-rehearsal && \
    TMPDIR=/work/torchfit/build-cuda-rehearsal scripts/gpu_check.sh build-cuda-rehearsal/report \
      --torch-prefix /usr/lib/x86_64-linux-gnu/cmake/Torch --jobs $JOBS --budget 3600 --build-timeout 3000" || true
  cat "$REPO/build-cuda-rehearsal/report/summary.md"
  log "rehearsal took $(( $(date +%s) - T0 )) s in all"
  grep -q "FAILED\|TIMEOUT\|skipped: budget" "$REPO/build-cuda-rehearsal/report/summary.md" && exit 1
  exit 0
fi

# ---------------------------------------------------------------- configure, build, test
log "configure + build in $BUILD_DIR against $DESC"
mkdir -p "$REPO/$BUILD_DIR"
LAUNCHER="-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache"
EXTRA_Q=""
if [ ${#CMAKE_EXTRA[@]} -gt 0 ]; then EXTRA_Q=$(printf '%q ' "${CMAKE_EXTRA[@]}"); fi
in_root "cmake -S . -B '$BUILD_DIR' -G Ninja -DCMAKE_BUILD_TYPE=Release $LAUNCHER $EXTRA_Q" \
  > "$REPO/$BUILD_DIR/configure.log" 2>&1 || { cat "$REPO/$BUILD_DIR/configure.log"; log "configure FAILED"; exit 1; }
grep -E '^-- (torchfit|Found Torch|Caffe2: CUDA)' "$REPO/$BUILD_DIR/configure.log" || true
grep -q 'torchfit: CUDA LibTorch found' "$REPO/$BUILD_DIR/configure.log" || {
  log "CMake did not find the CUDA LibTorch (no 'torchfit: CUDA LibTorch found'); see $BUILD_DIR/configure.log"; exit 1; }
TB=$(date +%s)
if ! in_root "cmake --build '$BUILD_DIR' -j $JOBS"; then
  log "build FAILED after $(( $(date +%s) - TB )) s"
  echo "check_cuda_build: 0 passed, build failed ($DESC)"
  exit 1
fi
log "built in $(( $(date +%s) - TB )) s"
[ "$RUN_TESTS" -eq 1 ] || { echo "check_cuda_build: built, tests not run ($DESC)"; exit 0; }

TT=$(date +%s)
set +e
CTEST_R=""
[ -z "$TESTS_REGEX" ] || { CTEST_R="-R $(printf '%q' "$TESTS_REGEX")"; DESC="$DESC; only tests matching '$TESTS_REGEX'"; }
in_root "cd '$BUILD_DIR' && ctest --output-on-failure -j $JOBS $CTEST_R" 2>&1 | tee "$REPO/$BUILD_DIR/ctest.log"
set -e
log "ctest took $(( $(date +%s) - TT )) s; whole check $(( $(date +%s) - T0 )) s"
SUMMARY=$(grep -E '^[0-9]+% tests passed, [0-9]+ tests failed out of [0-9]+' "$REPO/$BUILD_DIR/ctest.log" | tail -1)
[ -n "$SUMMARY" ] || { echo "check_cuda_build: ctest printed no summary ($DESC)"; exit 1; }
FAILED=$(sed -E 's/.* ([0-9]+) tests failed out of ([0-9]+)/\1/' <<< "$SUMMARY")
TOTAL=$(sed -E 's/.* ([0-9]+) tests failed out of ([0-9]+)/\2/' <<< "$SUMMARY")
SKIPPED=$(grep -c '\*\*\*Skipped\|Not Run' "$REPO/$BUILD_DIR/ctest.log" || true)
echo "check_cuda_build: $((TOTAL - FAILED)) passed, $FAILED failed (of $TOTAL; $SKIPPED skipped themselves; $DESC)"
[ "$FAILED" -eq 0 ]
