#!/usr/bin/env bash
# scripts/check_cuda_build.sh refuses bad arguments with exit 2 and a message naming the argument,
# before it builds anything, and never deletes a folder it did not make; --help names the stub cuDNN. (The build in the Debian 13 root itself is
# not run here: its first run downloads gigabytes. docs/gpu.md.)
set -uo pipefail
TEST_NAME=check_cuda_build
source "$(dirname "$0")/common.sh"
S=$SRC/scripts/check_cuda_build.sh
expect_exit 2 "unknown argument '--gpu'" "$S" --gpu
expect_exit 2 "--jobs must be a positive integer, got 'two'" "$S" --jobs two
expect_exit 2 "--jobs must be a positive integer, got '0'" "$S" --jobs 0
expect_exit 2 "--build-dir must be a folder named build-<name> at the top of the repository" "$S" --build-dir /tmp/x
for dir in ../x build ./build build// "" . ./. framework .git "a'b" "build cuda"; do
  expect_exit 2 "--build-dir must be a folder named build-<name>" "$S" --build-dir "$dir"
done
expect_exit 2 "--root must be an absolute path, got 'rel'" "$S" --root rel
expect_exit 2 "--root must not be '/'" "$S" --root /
# A folder that is not a root this script made is refused and left as it was (never deleted).
mkdir -p "$WORK/mine" && echo keep > "$WORK/mine/important.txt"
expect_exit 2 "refusing to touch it" "$S" --root "$WORK/mine"
[ "$(cat "$WORK/mine/important.txt")" = keep ] || fail "--root deleted a folder it did not make"
[ ! -e "$WORK/mine.lock" ] || fail "a refused --root left its lock file behind"
echo theirs > "$WORK/mine.lock"   # a file of that name that is not ours: neither emptied nor removed
expect_exit 2 "refusing to touch it" "$S" --root "$WORK/mine"
[ "$(cat "$WORK/mine.lock")" = theirs ] || fail "a refused --root emptied or removed an existing DIR.lock"
expect_exit 2 "--root must not be '/'" "$S" --root ///
touch "$WORK/afile"
expect_exit 2 "exists and is not a folder" "$S" --root "$WORK/afile"
expect_exit 0 "STUB" "$S" --help
expect_exit 0 "never for a GPU run\|NEVER use this root" "$S" --help
expect_exit 2 "--jobs needs a value" "$S" --jobs
echo "PASS: check_cuda_build.sh argument errors"
