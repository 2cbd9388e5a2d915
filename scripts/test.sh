#!/usr/bin/env bash
# torchfit tests: setup (install missing packages, build into build/), then ctest.
#   scripts/test.sh            Release build in build/
#   scripts/test.sh --sanitize ASan+UBSan build in build-sanitize/
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=build
ARGS=()
if [ "${1:-}" = "--sanitize" ]; then
  BUILD_DIR=build-sanitize
  ARGS=(--build-dir "$BUILD_DIR" --build-type RelWithDebInfo -DTORCHFIT_SANITIZE=ON)
  shift
fi
scripts/setup.sh "${ARGS[@]}"
cd "$BUILD_DIR"
ctest --output-on-failure -j "$(nproc)" "$@"
