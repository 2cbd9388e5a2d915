#!/usr/bin/env bash
# Small functions: no function in framework/ or apps/ is 100 lines or longer (Universal Ctags start/end
# lines, lambdas included), and no function of an app is over 80 lines. Prints the five longest.
set -uo pipefail
TEST_NAME=function_length source "$(dirname "$0")/common.sh"
command -v ctags >/dev/null && ctags --version 2>/dev/null | grep -q "Universal Ctags" \
  || { echo "SKIP: Universal Ctags not installed"; exit 0; }
cd "$SRC"
lengths() {
  ctags --c++-kinds=f --fields=+ne -o - -R "$@" | awk -F'\t' '{
    line=""; end="";
    for (i = 3; i <= NF; i++) { if ($i ~ /^line:/) line = substr($i, 6); if ($i ~ /^end:/) end = substr($i, 5) }
    if (line != "" && end != "") print end - line + 1, $2 ":" line, $1 }' | sort -rn
}
lengths framework apps >"$WORK/all"
[ -s "$WORK/all" ] || fail "ctags found no functions"
head -5 "$WORK/all"
awk '$1 >= 100' "$WORK/all" >"$WORK/long"
[ -s "$WORK/long" ] && { cat "$WORK/long"; fail "functions of 100 lines or more"; }
lengths apps | awk '$1 > 80' >"$WORK/long_apps"
[ -s "$WORK/long_apps" ] && { cat "$WORK/long_apps"; fail "app functions over 80 lines"; }
echo "PASS"
