#!/usr/bin/env bash
# Data-pipeline benchmark (not a timed test): images/s of torchfit's DirectoryIterator with the seeds'
# augmentation (rescale 1/255, shear 0.2, zoom 0.2, rotation 20, horizontal flip) at 150x150, batch 32,
# with 1 worker and with all cores, against keras-preprocessing's ImageDataGenerator (Debian
# python3-keras-preprocessing, /usr/bin/python3, one process) on the same folder.
# Usage: scripts/bench_data.sh [DIR (default data/train)]
# Environment: BATCHES (torchfit, default 150), KERAS_BATCHES (default 15), BUILD_DIR (default ./build).
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=${BUILD_DIR:-$ROOT/build}
DIR=${1:-$ROOT/data/train}
BATCHES=${BATCHES:-150}
KERAS_BATCHES=${KERAS_BATCHES:-15}
CORES=$(nproc)
if [ ! -d "$DIR" ]; then
  echo "no image folder $DIR; run scripts/prepare_data.sh first" >&2
  exit 1
fi
if [ ! -f "$BUILD/CMakeCache.txt" ]; then
  gen=(); command -v ninja >/dev/null && gen=(-G Ninja)
  cmake -S "$ROOT" -B "$BUILD" "${gen[@]}" -DCMAKE_BUILD_TYPE=Release -DTORCHFIT_BUILD_APPS=ON >/dev/null
fi
cmake --build "$BUILD" --target prepare_data -j"$CORES" >/dev/null

rate() { sed -n 's/.* images_per_s=\([0-9.]*\).*/\1/p' <<<"$1"; }
cpurate() { sed -n 's/.* images_per_cpu_s=\([0-9.]*\).*/\1/p' <<<"$1"; }
echo "folder: $DIR, 150x150, batch 32, seeds' augmentation, $CORES cores ($(lscpu | sed -n 's/^Model name: *//p'))"
one=$("$BUILD/apps/prepare_data" bench --dir "$DIR" --workers 1 --batches "$BATCHES"); echo "$one"
all=$("$BUILD/apps/prepare_data" bench --dir "$DIR" --workers "$CORES" --batches "$BATCHES"); echo "$all"
if ! /usr/bin/python3 -c 'import keras_preprocessing, PIL, scipy' 2>/dev/null; then
  echo "keras-preprocessing not available for /usr/bin/python3 (apt install python3-keras-preprocessing python3-pil python3-scipy); no ratio"
  exit 0
fi
keras=$(/usr/bin/python3 "$ROOT/scripts/bench/bench_data_keras.py" "$DIR" --batches "$KERAS_BATCHES" | tail -1); echo "$keras"
/usr/bin/python3 - "$(rate "$one")" "$(rate "$all")" "$(rate "$keras")" "$CORES" "$(cpurate "$one")" "$(cpurate "$all")" "$(cpurate "$keras")" <<'PY'
import sys
one, allc, keras, cores, one_cpu, all_cpu, keras_cpu = map(float, sys.argv[1:])
print("wall clock : 1 worker %.0f img/s, %d workers %.0f img/s, keras %.0f img/s" % (one, cores, allc, keras))
print("ratio per core (wall)    : 1 worker / keras = %.1fx; %d workers / (%d x keras) = %.1fx"
      % (one / keras, cores, cores, allc / (cores * keras)))
print("ratio per core (CPU time): 1 worker / keras = %.1fx; %d workers / keras = %.1fx  (images per CPU-second: %.0f, %.0f vs %.0f)"
      % (one_cpu / keras_cpu, cores, all_cpu / keras_cpu, one_cpu, all_cpu, keras_cpu))
PY
