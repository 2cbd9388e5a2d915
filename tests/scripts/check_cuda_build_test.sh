#!/usr/bin/env bash
# scripts/check_cuda_build.sh refuses bad arguments with exit 2 and a message naming the argument,
# before it touches any root; --help names the stub cuDNN. (The build in the Debian 13 root itself is
# not run here: its first run downloads gigabytes. docs/gpu.md.)
set -uo pipefail
TEST_NAME=check_cuda_build
source "$(dirname "$0")/common.sh"
S=$SRC/scripts/check_cuda_build.sh
expect_exit 2 "unknown argument '--gpu'" "$S" --gpu
expect_exit 2 "--jobs must be a positive integer, got 'two'" "$S" --jobs two
expect_exit 2 "--jobs must be a positive integer, got '0'" "$S" --jobs 0
expect_exit 2 "--build-dir must be a folder inside the repository, got '/tmp/x'" "$S" --build-dir /tmp/x
expect_exit 2 "--build-dir must be a folder inside the repository, got '../x'" "$S" --build-dir ../x
expect_exit 0 "STUB" "$S" --help
expect_exit 0 "never for a GPU run\|NEVER use this root" "$S" --help
expect_exit 2 "--jobs needs a value" "$S" --jobs
echo "PASS: check_cuda_build.sh argument errors"
