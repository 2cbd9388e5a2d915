#!/usr/bin/env bash
# Every C++ file follows .clang-format (checked with clang-format 14, the version Debian 12 ships and
# scripts/setup.sh installs; other versions format some constructs differently, so they skip).
set -uo pipefail
TEST_NAME=format source "$(dirname "$0")/common.sh"
CF=$(command -v clang-format-14 || true)
if [ -z "$CF" ] && command -v clang-format >/dev/null && clang-format --version | grep -q " 14\."; then CF=clang-format; fi
[ -n "$CF" ] || { echo "SKIP: clang-format 14 not installed"; exit 0; }
# The check must be able to fail: a badly formatted file is reported.
printf 'int  main( ){return 0;}\n' >"$WORK/bad.cpp"
cp "$SRC/.clang-format" "$WORK/" || fail "no .clang-format in $SRC"
"$CF" --dry-run --Werror "$WORK/bad.cpp" >/dev/null 2>&1 && fail "clang-format accepted a badly formatted file"
"$SRC/scripts/format.sh" --check || fail "files above are not formatted: run scripts/format.sh"
echo "PASS"
