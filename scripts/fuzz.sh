#!/usr/bin/env bash
# Fuzzes the image header check + decode + resize path with libFuzzer (clang from Debian: clang,
# libclang-rt-14-dev), for a bounded time. Not part of CI.
#   scripts/fuzz.sh [SECONDS=60] [extra libFuzzer flags]
# Crashes land in build-fuzz/crashes/; each one becomes a regression input in tests/data/fuzz_regressions/
# (tests/data/fuzz_regression_test.cpp decodes every file there).
set -euo pipefail
cd "$(dirname "$0")/.."
SECONDS_TO_RUN=${1:-60}; shift || true
for p in clang libclang-rt-14-dev; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || { apt-get update -qq && apt-get install -y -qq "$p"; }
done
OUT=build-fuzz
mkdir -p "$OUT/corpus" "$OUT/crashes"
BIN=$OUT/image_decode_fuzz
if [ ! -x "$BIN" ] || [ tests/fuzz/image_decode_fuzz.cpp -nt "$BIN" ] || [ framework/src/data/image.cpp -nt "$BIN" ]; then
  echo "[fuzz] building $BIN (clang, libFuzzer + ASan + UBSan)"
  clang++ -std=c++17 -O1 -g -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
    -Iframework/include -isystem /usr/include/stb -isystem /usr/include/opencv4 \
    -D_GLIBCXX_USE_CXX11_ABI=1 \
    tests/fuzz/image_decode_fuzz.cpp framework/src/data/image.cpp \
    -lopencv_core -lopencv_imgproc -ltorch_cpu -lc10 -o "$BIN"
fi
# Seed corpus: a few real images (Fashion-MNIST PNGs when prepared) and the regression inputs.
ls data/train/*/0000*.png 2>/dev/null | head -4 | xargs -r -I{} cp {} "$OUT/corpus/" || true
cp tests/data/fuzz_regressions/* "$OUT/corpus/" 2>/dev/null || true
echo "[fuzz] running for ${SECONDS_TO_RUN}s"
"$BIN" "$OUT/corpus" -max_total_time="$SECONDS_TO_RUN" -max_len=4096 -timeout=10 -rss_limit_mb=2048 \
  -artifact_prefix="$OUT/crashes/" "$@" 2>&1 | tail -5
n=$(ls "$OUT/crashes" | wc -l)
echo "[fuzz] $n crash/timeout artifacts in $OUT/crashes"
[ "$n" -eq 0 ] || { echo "copy each into tests/data/fuzz_regressions/ and fix the decoder"; exit 1; }
