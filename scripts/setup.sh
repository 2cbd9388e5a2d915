#!/usr/bin/env bash
# torchfit setup: install the missing Debian packages (idempotent), then configure and build into build/.
#   scripts/setup.sh [--no-build] [--build-dir DIR] [--build-type Release|Debug] [extra cmake args...]
# apt-get update runs only when something is missing.
set -euo pipefail
cd "$(dirname "$0")/.."

BUILD_DIR=build
BUILD_TYPE=Release
DO_BUILD=1
EXTRA=()
while [ $# -gt 0 ]; do
  case "$1" in
    --no-build) DO_BUILD=0 ;;
    --build-dir) BUILD_DIR="$2"; shift ;;
    --build-type) BUILD_TYPE="$2"; shift ;;
    *) EXTRA+=("$1") ;;
  esac
  shift
done

# Build dependencies (CMakeLists.txt's find_package calls) + packages the scripts use (peer baselines,
# charts, real data, the Keras oracle).
PKGS=(
  build-essential cmake ninja-build ccache pkg-config clang-format universal-ctags
  libtorch-dev libopenblas0-openmp
  libopencv-dev libopencv-imgcodecs-dev libstb-dev libspdlog-dev libgtest-dev libgmock-dev libcli11-dev nlohmann-json3-dev libbenchmark-dev zlib1g-dev libcsv-dev libjpeg-dev
  libgloo-dev
  libhdf5-dev libzip-dev
  libopencv-dnn-dev
  dataset-fashion-mnist
  python3-torch python3-keras-preprocessing python3-pil python3-scipy python3-matplotlib python3-numpy python3-sklearn python3-h5py python3-onnx python3-statsmodels
)
# Node.js and npm (TensorFlow.js below), from Debian only where no node/npm is installed: a machine may have
# them from elsewhere, with which Debian's npm conflicts.
if ! command -v node >/dev/null 2>&1; then PKGS+=(nodejs); fi
if ! command -v npm >/dev/null 2>&1; then PKGS+=(npm); fi

missing=()
for p in "${PKGS[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -gt 0 ]; then
  echo "[setup] installing missing Debian packages: ${missing[*]}"
  SUDO=""
  [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  echo "[setup] installed: ${missing[*]}"
else
  echo "[setup] all Debian packages present"
fi

# TensorFlow.js (pure JavaScript, from the npm registry): the independent reader of the TF.js export in the
# tests (tests/keras/reference/tfjs_predict.js), which skip with the reason when it is absent.
TFJS_DIR=/var/cache/torchfit/tfjs
TFJS_VERSION=4.22.0
if [ ! -f "$TFJS_DIR/node_modules/@tensorflow/tfjs/package.json" ] && command -v npm >/dev/null 2>&1; then
  echo "[setup] installing @tensorflow/tfjs@$TFJS_VERSION into $TFJS_DIR (npm)"
  if ! { mkdir -p "$TFJS_DIR" && (cd "$TFJS_DIR" && npm install --no-audit --no-fund --silent \
      "@tensorflow/tfjs@$TFJS_VERSION" >/dev/null); }; then
    echo "[setup] warning: npm could not install @tensorflow/tfjs; the TF.js tests will skip"
  fi
fi

[ "$DO_BUILD" -eq 1 ] || exit 0

LAUNCHER=()
if command -v ccache >/dev/null 2>&1; then
  LAUNCHER=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
  # Without these ccache refuses every file compiled with the precompiled header ("Could not use
  # precompiled header"), i.e. all of them.
  export CCACHE_SLOPPINESS=${CCACHE_SLOPPINESS:-pch_defines,time_macros,include_file_mtime,include_file_ctime}
  # Paths below the checkout are hashed relative to it, so another clone reuses the cache.
  export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$PWD}
fi

cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE="$BUILD_TYPE" "${LAUNCHER[@]}" "${EXTRA[@]}"
cmake --build "$BUILD_DIR" -j "$(nproc)"
echo "[setup] built into $BUILD_DIR/ — binaries: $BUILD_DIR/apps/ (train_cnn, predict_cnn, prepare_data, device_info, matmul_bench, bench_step)"
