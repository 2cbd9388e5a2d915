# Sourced by the script tests: `source "$(dirname "$0")/common.sh" NAME` after `set -uo pipefail`, with
# $1 = source dir and $2 = binary dir. Sets SRC, BIN (the apps), WORK (a temp dir removed at exit),
# and the helpers fail, expect_exit and wait_rows.
SRC=$1
BIN=$2/apps
WORK=$(mktemp -d "/tmp/torchfit_${TEST_NAME:-script}.XXXXXX")
trap 'kill -9 $(jobs -p) 2>/dev/null; rm -rf "$WORK"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

# expect_exit RC PATTERN COMMAND...: the command exits with RC and its output contains PATTERN.
expect_exit() {
  local want=$1 pattern=$2; shift 2
  "$@" >"$WORK/out" 2>&1
  local rc=$?
  [ "$rc" -eq "$want" ] || { cat "$WORK/out"; fail "'$*' exited $rc, expected $want"; }
  grep -q -- "$pattern" "$WORK/out" || { cat "$WORK/out"; fail "'$*' output lacks '$pattern'"; }
}

# wait_rows FILE ROWS TIMEOUT_S: waits until FILE has at least ROWS lines; fails (returns 1) after TIMEOUT_S.
wait_rows() {
  local i=0
  while [ "$i" -lt $(($3 * 10)) ]; do
    [ -f "$1" ] && [ "$(wc -l <"$1")" -ge "$2" ] && return 0
    sleep 0.1; i=$((i + 1))
  done
  return 1
}
