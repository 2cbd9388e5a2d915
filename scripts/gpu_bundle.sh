#!/usr/bin/env bash
# gpu_bundle.sh — gather, on this Debian machine, what a bare GPU machine lacks to build and check
# torchfit (see docs/gpu.md). That machine has a CUDA PyTorch (its LibTorch), CMake, ninja and a
# compiler, but no internet and no OpenCV/spdlog/CLI11/GoogleTest/nlohmann-json/stb/libcsv packages.
#
#   scripts/gpu_bundle.sh [--out DIR] [--train-per-class N] [--test-per-class N] [--pred N] [--no-debs]
#
# Writes (DIR defaults to gpu_bundle/, git-ignored):
#   DIR/debs/*.deb         Debian bookworm packages (apt-get download; no root needed), ≤ 60 MiB:
#                          OpenCV core+imgproc (images are decoded through stb_image, so no other
#                          OpenCV module), spdlog+fmt, CLI11, nlohmann-json, GoogleTest/GMock, stb, libcsv,
#                          TBB, plus the shared libraries OpenCV core loads (BLAS/LAPACK/GLX chain)
#                          which scripts/gpu_check.sh uses only where the GPU machine lacks them.
#   DIR/fashion-mnist-small.tar.gz
#                          a small real dataset: data/train/<class>/*.png, data/test/<class>/*.png,
#                          data/pred/*.png from Debian's Fashion-MNIST (28x28 gray PNGs, the first
#                          N images of each class in file order).
#   DIR/MANIFEST.txt       package versions, sizes, sha256 sums.
# Then hand the bundle to the GPU machine next to the repository (device tool: carry ["gpu_bundle"])
# and run scripts/gpu_check.sh there.
set -euo pipefail
CALLER=$PWD
cd "$(dirname "$0")/.."

OUT=gpu_bundle
TRAIN_PER_CLASS=30
TEST_PER_CLASS=10
PRED=20
DEBS=1
bad() { echo "gpu_bundle.sh: $*" >&2; exit 2; }
value() { [ $# -ge 2 ] || bad "$1 needs a value"; }
while [ $# -gt 0 ]; do
  case "$1" in
    --out) value "$@"; OUT="$2"; OUT_GIVEN=1; shift ;;
    --train-per-class) value "$@"; TRAIN_PER_CLASS="$2"; shift ;;
    --test-per-class) value "$@"; TEST_PER_CLASS="$2"; shift ;;
    --pred) value "$@"; PRED="$2"; shift ;;
    --no-debs) DEBS=0 ;;
    -h|--help) awk 'NR > 1 && /^#/ {sub(/^# ?/, ""); print; next} NR > 1 {exit}' "$0"; exit 0 ;;
    *) bad "unknown argument '$1' (see --help)" ;;
  esac
  shift
done
# Checked before anything in OUT is replaced.
[[ "$TRAIN_PER_CLASS" =~ ^[1-9][0-9]*$ ]] || bad "--train-per-class must be a whole number >= 1, got '$TRAIN_PER_CLASS'"
[[ "$TEST_PER_CLASS" =~ ^[1-9][0-9]*$ ]] || bad "--test-per-class must be a whole number >= 1, got '$TEST_PER_CLASS'"
[[ "$PRED" =~ ^[0-9]+$ ]] || bad "--pred must be a whole number >= 0, got '$PRED'"
[ -n "$OUT" ] || bad "--out must not be empty"
# A relative --out is taken from where the script was started; the default is the repository's gpu_bundle/.
case "$OUT" in /*) ;; *) [ -n "${OUT_GIVEN:-}" ] && OUT=$CALLER/$OUT ;; esac
FMNIST=${FMNIST_DIR:-/usr/share/datasets/fashion-mnist}
[ -f "$FMNIST/train-images-idx3-ubyte.gz" ] ||
  { echo "gpu_bundle.sh: $FMNIST/train-images-idx3-ubyte.gz not found (apt-get install dataset-fashion-mnist)" >&2; exit 1; }

# Packages the build needs (headers, CMake configs, libraries) ...
PKGS_BUILD=(
  libopencv-core406 libopencv-imgproc406 libopencv-core-dev libopencv-imgproc-dev libtbb12
  libspdlog1.10 libspdlog-dev libfmt9 libfmt-dev
  libcli11-dev nlohmann-json3-dev libgtest-dev libgmock-dev libstb-dev libcsv-dev libcsv3
  libjpeg62-turbo libjpeg62-turbo-dev libjpeg-dev
)
# ... and what libopencv_core.so.406 loads (NEEDED: libGLX, liblapack, libblas, libtbb, libz),
# used on the GPU machine only for sonames its ldconfig does not know.
PKGS_RUNTIME=(
  libblas3 liblapack3 libgfortran5 libquadmath0
  libglx0 libglvnd0 libx11-6 libx11-data libxcb1 libxau6 libxdmcp6 libbsd0 libmd0 zlib1g
)
MAX_BYTES=$((60 * 1024 * 1024))

mkdir -p "$OUT"
if [ "$DEBS" -eq 1 ]; then
  rm -rf "$OUT/debs"
  mkdir -p "$OUT/debs"
  echo "[gpu_bundle] apt-get download ${#PKGS_BUILD[@]} + ${#PKGS_RUNTIME[@]} packages into $OUT/debs"
  (cd "$OUT/debs" && apt-get download -q "${PKGS_BUILD[@]}" "${PKGS_RUNTIME[@]}") || {
    echo "[gpu_bundle] apt-get download failed; if the package lists are stale run: sudo apt-get update" >&2
    exit 1
  }
  # Plain file names ("libspdlog-dev_1%3a1.10.0..." -> "libspdlog-dev_1-1.10.0...").
  for d in "$OUT"/debs/*%3a*.deb; do [ -e "$d" ] && mv "$d" "${d//%3a/-}"; done
  total=$(du -cb "$OUT"/debs/*.deb | tail -1 | cut -f1)
  echo "[gpu_bundle] $(ls "$OUT"/debs/*.deb | wc -l) .deb files, $((total / 1024)) KiB"
  if [ "$total" -gt "$MAX_BYTES" ]; then
    echo "[gpu_bundle] the .deb files take $total bytes, over the 60 MiB budget" >&2
    exit 1
  fi
fi

# A small real dataset from Debian's Fashion-MNIST (IDX .gz), PNG-encoded with the Python standard
# library only (no PIL needed).
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
python3 - "$FMNIST" "$TMP/data" "$TRAIN_PER_CLASS" "$TEST_PER_CLASS" "$PRED" <<'PY'
import gzip, os, struct, sys, zlib
src, dst, n_train, n_test, n_pred = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
CLASSES = ["T-shirt_top", "Trouser", "Pullover", "Dress", "Coat", "Sandal", "Shirt", "Sneaker", "Bag", "Ankle_boot"]

def idx(path):
    with gzip.open(path, "rb") as f:
        data = f.read()
    magic, n = struct.unpack(">II", data[:8])
    if magic == 2051:
        rows, cols = struct.unpack(">II", data[8:16])
        return [data[16 + i * rows * cols:16 + (i + 1) * rows * cols] for i in range(n)], rows, cols
    if magic == 2049:
        return list(data[8:8 + n]), 0, 0
    raise SystemExit(f"{path}: not an IDX image/label file (magic {magic})")

def png(path, pixels, rows, cols):
    raw = b"".join(b"\x00" + pixels[r * cols:(r + 1) * cols] for r in range(rows))
    def chunk(tag, body):
        return struct.pack(">I", len(body)) + tag + body + struct.pack(">I", zlib.crc32(tag + body) & 0xFFFFFFFF)
    with open(path, "wb") as f:
        f.write(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", cols, rows, 8, 0, 0, 0, 0))
                + chunk(b"IDAT", zlib.compress(raw, 9)) + chunk(b"IEND", b""))

def split(prefix, subset, per_class, pred=0):
    images, rows, cols = idx(os.path.join(src, f"{prefix}-images-idx3-ubyte.gz"))
    labels, _, _ = idx(os.path.join(src, f"{prefix}-labels-idx1-ubyte.gz"))
    count = [0] * len(CLASSES)
    written = 0
    for i, (img, lab) in enumerate(zip(images, labels)):
        if count[lab] < per_class:
            d = os.path.join(dst, subset, CLASSES[lab])
            os.makedirs(d, exist_ok=True)
            png(os.path.join(d, f"{prefix}_{i:05d}.png"), img, rows, cols)
            count[lab] += 1
            written += 1
        elif pred > 0 and i >= len(images) - pred:  # unlabelled images for predict_cnn
            os.makedirs(os.path.join(dst, "pred"), exist_ok=True)
            png(os.path.join(dst, "pred", f"{prefix}_{i:05d}.png"), img, rows, cols)
            written += 1
    return written

w = split("train", "train", n_train) + split("t10k", "test", n_test, n_pred)
print(f"[gpu_bundle] wrote {w} PNGs ({n_train}/class train, {n_test}/class test, {n_pred} pred)")
PY
tar -C "$TMP" -czf "$OUT/fashion-mnist-small.tar.gz" data

{
  echo "# torchfit GPU bundle, made $(date -u +%Y-%m-%dT%H:%MZ) on $(hostname) ($(. /etc/os-release; echo "$PRETTY_NAME"))"
  echo "# packages (name version bytes)"
  for d in "$OUT"/debs/*.deb; do
    [ -f "$d" ] || continue
    echo "$(dpkg-deb -f "$d" Package) $(dpkg-deb -f "$d" Version) $(stat -c %s "$d")"
  done
  echo "# sha256"
  (cd "$OUT" && sha256sum debs/*.deb fashion-mnist-small.tar.gz 2>/dev/null || true)
} > "$OUT/MANIFEST.txt"
echo "[gpu_bundle] done: $(du -sh "$OUT" | cut -f1) in $OUT (MANIFEST.txt lists it)"
