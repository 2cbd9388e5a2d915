#!/usr/bin/env bash
# Lays out Debian's Fashion-MNIST (package dataset-fashion-mnist) as ./data/train/<class>/NNNNN.png,
# ./data/test/<class>/NNNNN.png, ./data/pred/NNNNN.png and ./data/pred_labels.csv (see data/README.md).
# Builds apps/prepare_data first when needed. Idempotent: a second run checks and skips in ~2 s.
# Usage: scripts/prepare_data.sh [prepare_data options, e.g. --images-per-class 500 --classes 8 -o DIR]
# Environment: BUILD_DIR (default ./build).
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=${BUILD_DIR:-$ROOT/build}
if [ ! -f "$BUILD/CMakeCache.txt" ]; then
  gen=(); command -v ninja >/dev/null && gen=(-G Ninja)
  launcher=(); command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
  cmake -S "$ROOT" -B "$BUILD" "${gen[@]}" "${launcher[@]}" -DCMAKE_BUILD_TYPE=Release -DTORCHFIT_BUILD_APPS=ON
fi
if ! log=$(cmake --build "$BUILD" --target prepare_data -j"$(nproc)" 2>&1); then
  echo "$log" >&2
  exit 1
fi
cd "$ROOT"
out=(--output "$ROOT/data")
for a in "$@"; do case "$a" in -o|--output|--output=*) out=() ;; esac; done
exec "$BUILD/apps/prepare_data" "${out[@]}" "$@"
