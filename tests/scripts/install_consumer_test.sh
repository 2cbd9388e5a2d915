#!/usr/bin/env bash
# cmake --install the build tree into a temporary prefix, then configure, build and run an outside
# project (tests/consumer) that does find_package(torchfit) and links torchfit::torchfit.
set -euo pipefail
SRC=$1
BUILD=$2
WORK=$(mktemp -d /tmp/torchfit_install.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
cmake --install "$BUILD" --prefix "$WORK/prefix" >/dev/null
gen=(); command -v ninja >/dev/null && gen=(-G Ninja)
launcher=(); command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
# A sanitizer build installs an instrumented library: the consumer must link the same runtimes.
san=(); grep -q '^TORCHFIT_SANITIZE:BOOL=ON' "$BUILD/CMakeCache.txt" && san=(-DCMAKE_EXE_LINKER_FLAGS=-fsanitize=address,undefined)
# The consumer finds torchfit's dependencies where the build found them (a LibTorch outside the system
# paths, or the GPU check's bundled spdlog/fmt/OpenCV), not whatever else the machine has.
deps=()
for var in Torch_DIR OpenCV_DIR spdlog_DIR fmt_DIR nlohmann_json_DIR LIBCSV_LIBRARY LIBCSV_INCLUDE_DIR CMAKE_EXE_LINKER_FLAGS CMAKE_CXX_FLAGS; do
  val=$(sed -n "s/^$var:[A-Z]*=//p" "$BUILD/CMakeCache.txt" | head -1)
  [ -n "$val" ] && deps+=("-D$var=$val")
done
prefix=$(sed -n 's/^CMAKE_PREFIX_PATH:[A-Z]*=//p' "$BUILD/CMakeCache.txt" | head -1)
cmake -S "$SRC/tests/consumer" -B "$WORK/build" "${gen[@]}" "${launcher[@]}" -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_PREFIX_PATH="$WORK/prefix${prefix:+;$prefix}" "${deps[@]}" "${san[@]}" >"$WORK/configure.log" 2>&1 || { cat "$WORK/configure.log"; exit 1; }
cmake --build "$WORK/build" >"$WORK/build.log" 2>&1 || { cat "$WORK/build.log"; exit 1; }
out=$("$WORK/build/consumer")
[ "$out" = "42520584" ] || { echo "FAIL: consumer printed '$out'"; exit 1; }
echo "PASS: installed torchfit::torchfit builds and links ($out parameters)"
