#!/usr/bin/env bash
# Formats every C++ file of the project with .clang-format (clang-format 14, Debian 12's `clang-format`).
#   scripts/format.sh          rewrite the files in place
#   scripts/format.sh --check  list the files that are not formatted; exit 1 if any
set -euo pipefail
cd "$(dirname "$0")/.."
CF=$(command -v clang-format-14 || command -v clang-format || true)
[ -n "$CF" ] || { echo "format.sh: clang-format is not installed (apt-get install clang-format)" >&2; exit 2; }
mapfile -t FILES < <(find framework apps tests examples -type f \( -name '*.h' -o -name '*.cpp' \) | sort)
if [ "${1:-}" = "--check" ]; then
  bad=()
  for f in "${FILES[@]}"; do "$CF" --dry-run --Werror "$f" >/dev/null 2>&1 || bad+=("$f"); done
  if [ ${#bad[@]} -gt 0 ]; then
    printf 'not formatted (run scripts/format.sh): %s\n' "${bad[@]}"
    exit 1
  fi
  echo "format.sh: ${#FILES[@]} files formatted"
  exit 0
fi
"$CF" -i "${FILES[@]}"
echo "format.sh: formatted ${#FILES[@]} files"
