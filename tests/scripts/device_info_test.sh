#!/usr/bin/env bash
# ctest script.device_info_test: device_info and matmul_bench end to end (CPU or CUDA build).
#   bash tests/scripts/device_info_test.sh SOURCE_DIR BINARY_DIR
set -euo pipefail
: "${1:?SOURCE_DIR}"  # unused: the apps are found in BINARY_DIR
BIN=$2
DI=$BIN/apps/device_info
MB=$BIN/apps/matmul_bench
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

# Header: LibTorch version line, device line, one thread count we asked for.
"$DI" --device cpu --threads 1 > "$TMP/header.txt"
grep -q "^  LibTorch   [0-9]" "$TMP/header.txt" || fail "no LibTorch line: $(cat "$TMP/header.txt")"
grep -q "^  Device     cpu$" "$TMP/header.txt" || fail "no 'Device cpu' line"
grep -q "^  Threads    1 intra-op" "$TMP/header.txt" || fail "--threads 1 not applied"

# --json is pure JSON with the documented keys.
"$DI" --json > "$TMP/info.json"
python3 - "$TMP/info.json" <<'PY'
import json, sys
info = json.load(open(sys.argv[1]))
for key in ["torchfit_version", "libtorch_version", "build", "cuda", "gpus", "cpu", "threads",
            "parallel_info", "blas_libraries", "opencv_version", "memory_retention", "device"]:
    assert key in info, key
assert info["threads"]["intra_op"] >= 1
assert info["cuda"]["available"] or info["gpus"] == []
PY

# Bad values: exit 2 and a message naming the value / flag.
set +e
"$DI" --device gpu > /dev/null 2> "$TMP/err.txt"; rc=$?
set -e
[ "$rc" -eq 2 ] || fail "--device gpu: exit $rc, expected 2"
grep -q "'gpu'" "$TMP/err.txt" || fail "--device gpu: message does not name the value: $(cat "$TMP/err.txt")"
if ! python3 -c "import json,sys; sys.exit(0 if json.load(open('$TMP/info.json'))['cuda']['available'] else 1)"; then
  set +e
  "$DI" --device cuda > /dev/null 2> "$TMP/err.txt"; rc=$?
  set -e
  [ "$rc" -eq 2 ] || fail "--device cuda without CUDA: exit $rc, expected 2"
  grep -q "CUDA cannot be used" "$TMP/err.txt" || fail "--device cuda: $(cat "$TMP/err.txt")"
fi
set +e
"$DI" --device cpu --gpu-memory-fraction 0.5 > /dev/null 2> "$TMP/err.txt"; rc=$?
set -e
[ "$rc" -eq 2 ] && grep -q -- "--gpu-memory-fraction" "$TMP/err.txt" || fail "--gpu-memory-fraction on cpu: exit $rc"

# matmul_bench: tiny sweep, CSV rows agree with the sizes, errors small.
"$MB" --sizes 32 80 --naive-max 32 --min-time 0.01 --max-repeats 3 --cuda off --csv "$TMP/mm.csv" > "$TMP/mm.txt"
grep -q "naive i-j-k loop" "$TMP/mm.txt" || fail "no naive row"
python3 - "$TMP/mm.csv" <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
assert [(r["n"], r["method"]) for r in rows] == [("32", "naive i-j-k loop"), ("32", "LibTorch at::mm"),
                                                 ("80", "LibTorch at::mm")], rows
for r in rows:
    assert float(r["ms"]) > 0 and float(r["gflops"]) > 0, r
    assert float(r["max_rel_error"]) < 1e-5, r
assert max(float(r["share_of_best"]) for r in rows) == 1.0
PY
echo "device_info_test: ok"
