#!/usr/bin/env bash
# scripts/gpu_check.sh and scripts/gpu_bundle.sh refuse bad arguments with exit 2 and a message naming
# the flag and value, before they download, unpack or build anything; a gpu_check run whose unpack
# fails skips the later steps and says why.
set -uo pipefail
TEST_NAME=gpu_scripts
source "$(dirname "$0")/common.sh"
C=$SRC/scripts/gpu_check.sh
B=$SRC/scripts/gpu_bundle.sh
expect_exit 2 "OUTDIR comes first" "$C" --jobs 2
expect_exit 2 "--jobs needs a value" "$C" "$WORK/o" --jobs
expect_exit 2 "--jobs must be a positive whole number, got 'abc'" "$C" "$WORK/o" --jobs abc
expect_exit 2 "--budget must be a positive whole number, got '1e3'" "$C" "$WORK/o" --budget 1e3
expect_exit 2 "--build-timeout must be a positive whole number, got '0'" "$C" "$WORK/o" --build-timeout 0
expect_exit 2 "--bundle '$WORK/none' is not a folder" "$C" "$WORK/o" --bundle "$WORK/none"
expect_exit 2 "unknown argument '--bogus'" "$C" "$WORK/o" --bogus
[ ! -e "$WORK/o" ] || fail "gpu_check.sh made OUTDIR although its arguments were refused"
# Folders gpu_check empties in part are never the current folder, the repository or someone's files.
mkdir -p "$WORK/cwd" && echo mine > "$WORK/cwd/mine.log"
(cd "$WORK/cwd" && expect_exit 2 "OUTDIR '$WORK/cwd' must be a new or empty folder" "$C" .) || exit 1
(cd "$WORK/cwd" && expect_exit 2 "must be a new or empty folder" "$C" "") || exit 1
expect_exit 2 "OUTDIR '$WORK/cwd' must be a new or empty folder" "$C" "$WORK/cwd"
expect_exit 2 "--work '$SRC' must be a new or empty folder" "$C" "$WORK/o2" --work "$SRC"
expect_exit 2 "--work '$WORK/cwd' must be a new or empty folder" "$C" "$WORK/o2" --work "$WORK/cwd"
[ "$(cat "$WORK/cwd/mine.log")" = mine ] || fail "gpu_check.sh removed a file in a folder it refused"
mkdir -p "$WORK/empty"
(cd "$WORK" && expect_exit 1 "unpack" "$C" rel --bundle empty --work "$WORK/w") || exit 1
[ -f "$WORK/rel/summary.md" ] || fail "a relative OUTDIR is not taken from the current folder"
grep -q "| build | skipped: the unpack step failed" "$WORK/rel/summary.md" || { cat "$WORK/rel/summary.md"; fail "build ran after a failed unpack"; }
expect_exit 2 "--train-per-class needs a value" "$B" --train-per-class
expect_exit 2 "--train-per-class must be a whole number >= 1, got '0'" "$B" --out "$WORK/b" --train-per-class 0
expect_exit 2 "--pred must be a whole number >= 0, got '-1'" "$B" --out "$WORK/b" --pred -1
[ ! -e "$WORK/b" ] || fail "gpu_bundle.sh touched --out although its arguments were refused"
expect_exit 0 "" "$B" --help
grep -q "set -euo" "$WORK/out" && fail "gpu_bundle.sh --help prints code"
echo "PASS: gpu_check.sh / gpu_bundle.sh argument errors"
