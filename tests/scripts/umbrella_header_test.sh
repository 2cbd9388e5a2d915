#!/usr/bin/env bash
# <torchfit/torchfit.h> includes every public header (all of include/torchfit except testing/).
set -uo pipefail
TEST_NAME=umbrella_header source "$(dirname "$0")/common.sh"
INC=$SRC/framework/include
UMB=$INC/torchfit/torchfit.h
[ -f "$UMB" ] || fail "no $UMB"
missing=0
while read -r h; do
  rel=${h#"$INC/"}
  [ "$rel" = torchfit/torchfit.h ] && continue
  grep -q "#include <$rel>" "$UMB" || { echo "not in torchfit.h: $rel"; missing=1; }
done < <(find "$INC/torchfit" -name '*.h' -not -path '*/testing/*' | sort)
[ $missing -eq 0 ] || fail "torchfit.h misses headers"
echo "PASS"
