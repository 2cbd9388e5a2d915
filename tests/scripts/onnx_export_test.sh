#!/usr/bin/env bash
# ONNX export checked by ONNX itself (Debian's python3-onnx): every model of tests/support/onnx_models.h at
# opsets 13 and 17 passes onnx.checker.check_model(full_check=True) and strict shape inference, has the
# documented interface, and a NumPy evaluation of its graph (tests/scripts/onnx_check.py) equals torchfit's
# forward within 1e-5; convert_model writes the same from a checkpoint, with the class names, and refuses
# bad --opset values; with ../shared present, the imported Keras ResNet-8's graph equals Keras's outputs. Skipped (exit 0 with SKIP) without /usr/bin/python3, onnx or numpy.
set -uo pipefail
TEST_NAME=onnx_export source "$(dirname "$0")/common.sh"
PY=/usr/bin/python3
[ -x "$PY" ] || { echo "SKIP: /usr/bin/python3 not found"; exit 0; }
"$PY" -c "import onnx, numpy" 2>/dev/null || { echo "SKIP: python3-onnx / python3-numpy not importable (apt-get install python3-onnx)"; exit 0; }
ZOO=$2/tests/onnx_zoo
[ -x "$ZOO" ] || fail "$ZOO not built (cmake --build build --target onnx_zoo)"

"$ZOO" "$WORK" || fail "onnx_zoo failed"
"$PY" "$SRC/tests/scripts/onnx_check.py" "$WORK" || fail "onnx_check.py"

# convert_model: checkpoint → ONNX at opset 15, the class names in the metadata, the same graph values.
"$BIN/convert_model" "$WORK/seed_cnn.ckpt" "$WORK/cli.onnx" --opset 15 >"$WORK/out" 2>&1 || { cat "$WORK/out"; fail "convert_model to ONNX"; }
grep -q "opset 15" "$WORK/out" || { cat "$WORK/out"; fail "convert_model did not report the opset"; }
mkdir -p "$WORK/cli"
cp "$WORK/seed_cnn.input.npy" "$WORK/seed_cnn.output.npy" "$WORK/cli/" && cp "$WORK/cli.onnx" "$WORK/cli/seed_cnn.opset15.onnx"
"$PY" "$SRC/tests/scripts/onnx_check.py" "$WORK/cli" || fail "convert_model's ONNX"
"$PY" - "$WORK/cli.onnx" <<'PYEOF' || fail "class names"
import json, sys, onnx
meta = {p.key: p.value for p in onnx.load(sys.argv[1]).metadata_props}
assert json.loads(meta["class_names"]) == ["cat", "dog", "owl", "eel", "yak"], meta
assert meta["torchfit.input_layout"] == "NCHW", meta
PYEOF

# The imported Keras ResNet-8 (.h5): checker, strict shape inference, and the NumPy evaluation of the
# graph against Keras's own outputs for two images (written beside the file by Keras).
KERAS=$SRC/../shared/keras_models/resnet8_cifar10_tfkeras240
if [ -f "$KERAS.h5" ]; then
  "$BIN/convert_model" "$KERAS.h5" "$WORK/r8.onnx" --opset 13 >"$WORK/out" 2>&1 || { cat "$WORK/out"; fail "convert_model of the Keras ResNet-8"; }
  "$PY" - "$WORK/r8.onnx" "$KERAS" "$SRC/tests/scripts" <<'PYEOF' || fail "Keras ResNet-8 ONNX"
import sys, numpy as np, onnx
sys.path.insert(0, sys.argv[3])
import onnx_check
model = onnx.load(sys.argv[1])
onnx.checker.check_model(model, full_check=True)
onnx.shape_inference.infer_shapes(model, check_type=True, strict_mode=True)
x = np.load(sys.argv[2] + ".input.npy").transpose(0, 3, 1, 2)  # Keras (N, H, W, C) -> the file's (N, C, H, W)
d = float(np.abs(onnx_check.evaluate(model, x) - np.load(sys.argv[2] + ".expected.npy")).max())
print("Keras ResNet-8 opset 13: checker, strict shape inference OK; max |NumPy - Keras| = %.2e" % d)
sys.exit(0 if d <= 1e-5 else 1)
PYEOF
else
  echo "SKIP (the Keras ResNet-8 part): $KERAS.h5 absent"
fi

# A Keras 3 file whose input size is unknown (None, None, 1) and which lacks its weights: the missing file
# is named, not blamed on the size (convert_model tries 32 to 512 px first).
KERAS3=$SRC/../shared/keras_models/seq_cnn_mnist_keras3151.keras
if [ -f "$KERAS3" ]; then
  "$PY" - "$KERAS3" "$WORK/noweights.keras" <<'PYEOF' || fail "writing a .keras without weights"
import json, sys, zipfile
src = zipfile.ZipFile(sys.argv[1])
config = json.loads(src.read("config.json"))
def unknown_size(o):
    if isinstance(o, dict):
        for k, v in o.items():
            if k in ("batch_shape", "batch_input_shape") and isinstance(v, list) and len(v) == 4:
                o[k] = [None, None, None, v[3]]
            else:
                unknown_size(v)
    elif isinstance(o, list):
        for v in o:
            unknown_size(v)
unknown_size(config)
with zipfile.ZipFile(sys.argv[2], "w") as out:
    for name in src.namelist():
        if name != "model.weights.h5":
            out.writestr(name, json.dumps(config) if name == "config.json" else src.read(name))
PYEOF
  expect_exit 1 "has no model.weights.h5" "$BIN/convert_model" "$WORK/noweights.keras" "$WORK/nw.onnx"
  ! grep -q -- "--input-size" "$WORK/out" || { cat "$WORK/out"; fail "a missing weights file blamed on the input size"; }
else
  echo "SKIP (the Keras 3 part): $KERAS3 absent"
fi

expect_exit 2 "opset" "$BIN/convert_model" "$WORK/seed_cnn.ckpt" "$WORK/bad.onnx" --opset 12
expect_exit 2 "applies to an ONNX output" "$BIN/convert_model" "$WORK/seed_cnn.ckpt" "$WORK/arch.json" --opset 15
[ ! -e "$WORK/bad.onnx" ] || fail "a refused conversion left bad.onnx"
echo "PASS"
