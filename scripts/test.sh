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
  # Any UBSan finding fails its test (by default UBSan reports and goes on); leaks fail at exit (LSan).
  export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1:suppressions=$PWD/tests/sanitizers/ubsan.supp}
  export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1}
  shift
fi
scripts/setup.sh "${ARGS[@]}"
cd "$BUILD_DIR"
# ctest runs tests in parallel: passive OpenMP waiting keeps oversubscribed cores from spinning (a tiny
# model's step went from ~25 ms to ~500 ms with two busy-waiting thread pools on two cores).
export OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-PASSIVE}
ctest --output-on-failure -j "$(nproc)" "$@"
