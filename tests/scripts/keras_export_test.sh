#!/usr/bin/env bash
# Keras files out from the command line (docs/keras_export.md): convert_model writes a checkpoint as a Keras 3
# .keras, Keras 3 .weights.h5, tf.keras 2 .h5 and a TensorFlow.js folder; an independent reader
# (tests/keras/reference/keras3_file_reference.py: zipfile, h5py and a float64 NumPy evaluation) and
# TensorFlow.js (tests/keras/reference/tfjs_predict.js, when installed) predict from them what torchfit
# predicted; each file converts back into a checkpoint. With ../shared present, the real Keras ResNet-8
# written back by torchfit predicts Keras's own outputs. Bad OUT paths are refused naming them.
# Skipped (exit 0 with SKIP) without /usr/bin/python3, numpy or h5py.
set -uo pipefail
TEST_NAME=keras_export source "$(dirname "$0")/common.sh"
PY=/usr/bin/python3
[ -x "$PY" ] || { echo "SKIP: /usr/bin/python3 not found"; exit 0; }
"$PY" -c "import h5py, numpy" 2>/dev/null || { echo "SKIP: python3-h5py / python3-numpy not importable"; exit 0; }
ZOO=$2/tests/onnx_zoo
[ -x "$ZOO" ] || fail "$ZOO not built (cmake --build build --target onnx_zoo)"
REF=$SRC/tests/keras/reference
"$ZOO" "$WORK" >/dev/null || fail "onnx_zoo failed"

# predicts MODEL_FILE_OR_DIR INPUT.npy (N, H, W, C) EXPECTED.npy LAYOUT: the reference's prediction
# (or TensorFlow.js's for a folder) within 1e-5 of EXPECTED, given in LAYOUT (nchw or nhwc).
predicts() {
  "$PY" - "$REF" "$@" <<'PYEOF'
import json, os, subprocess, sys, tempfile
import numpy as np
ref, model, xin, want, layout = sys.argv[1:6]
x = np.load(xin)
expected = np.load(want)
with tempfile.TemporaryDirectory() as d:
    req, out = os.path.join(d, "req.json"), os.path.join(d, "out.json")
    json.dump({"inputs": [{"shape": list(x.shape), "data": x.ravel().tolist()}]}, open(req, "w"))
    if os.path.isdir(model):
        rc = subprocess.call(["node", os.path.join(ref, "tfjs_predict.js"), model, req, out])
    else:
        rc = subprocess.call([sys.executable, os.path.join(ref, "keras3_file_reference.py"), "predict", model, req, out])
    if rc == 77:
        print("SKIP (TensorFlow.js not installed)")
        sys.exit(0)
    assert rc == 0, rc
    y = json.load(open(out))["outputs"][0]
    y = np.array(y["data"]).reshape(y["shape"])
if layout == "nchw" and y.ndim == 4:
    y = y.transpose(0, 3, 1, 2)
d = float(np.abs(y - expected).max())
print("%s: max |prediction - expected| = %.2e" % (os.path.basename(model.rstrip("/")), d))
sys.exit(0 if d <= 1e-5 else 1)
PYEOF
}

# The zoo's seed CNN checkpoint (random weights) and its torchfit output for an NCHW input.
"$PY" -c "import numpy as np, sys; np.save(sys.argv[2], np.load(sys.argv[1]).transpose(0, 2, 3, 1))" \
  "$WORK/seed_cnn.input.npy" "$WORK/seed_nhwc.npy" || fail "input layout"
for out in seed.keras seed.h5 web/; do
  "$BIN/convert_model" "$WORK/seed_cnn.ckpt" "$WORK/$out" >"$WORK/out" 2>&1 || { cat "$WORK/out"; fail "convert_model → $out"; }
  predicts "$WORK/$out" "$WORK/seed_nhwc.npy" "$WORK/seed_cnn.output.npy" nchw || fail "$out does not predict as torchfit"
done
[ -f "$WORK/web/model.json" ] && [ -f "$WORK/web/group1-shard1of1.bin" ] || fail "the TF.js folder lacks model.json or its shard"
# The checkpoint's compile settings become Keras 3's compile_config (Keras then loads the model compiled).
"$PY" - "$WORK/seed.keras" <<'PYEOF' || fail "the .keras lacks the checkpoint's compile_config"
import json, sys, zipfile
c = json.loads(zipfile.ZipFile(sys.argv[1]).read("config.json"))["compile_config"]
assert c["optimizer"]["module"] == "keras.optimizers" and c["optimizer"]["class_name"] == "Adam", c
assert "learning_rate" in c["optimizer"]["config"] and c["loss"], c
import h5py, io
z = zipfile.ZipFile(sys.argv[1]).read("model.weights.h5")
g = h5py.File(io.BytesIO(z), "r")["optimizer/vars"]  # Adam's variables from the checkpoint's optimizer state
assert g.attrs["name"] == "adam" and len(g) == 2 + 2 * 10, (dict(g.attrs), len(g))
PYEOF
"$BIN/convert_model" "$WORK/seed_cnn.ckpt" "$WORK/seed.weights.h5" >"$WORK/out" 2>&1 || { cat "$WORK/out"; fail "→ .weights.h5"; }
"$BIN/convert_model" "$WORK/seed_cnn.ckpt" "$WORK/seed_arch.json" >/dev/null 2>&1 || fail "→ architecture JSON"
for back in seed.keras seed.h5 web web/model.json; do
  "$BIN/convert_model" "$WORK/$back" "$WORK/${back//\//_}.ckpt" >"$WORK/out" 2>&1 || { cat "$WORK/out"; fail "$back → checkpoint"; }
done
"$BIN/convert_model" "$WORK/seed.weights.h5" "$WORK/w.ckpt" --architecture "$WORK/seed_arch.json" >"$WORK/out" 2>&1 ||
  { cat "$WORK/out"; fail ".weights.h5 + architecture → checkpoint"; }
# Every pair through the formats torchfit reads: .keras → .h5 → TF.js → .keras, and checkpoint → .keras again.
"$BIN/convert_model" "$WORK/seed.keras.ckpt" "$WORK/again.keras" >/dev/null 2>&1 || fail "checkpoint of a .keras → .keras"
"$BIN/convert_model" "$WORK/seed.keras" "$WORK/k2.h5" >/dev/null 2>&1 || fail ".keras → .h5"
"$BIN/convert_model" "$WORK/k2.h5" "$WORK/web2/" >/dev/null 2>&1 || fail ".h5 → TF.js"
"$BIN/convert_model" "$WORK/web2" "$WORK/round.keras" >/dev/null 2>&1 || fail "TF.js → .keras"
"$BIN/convert_model" "$WORK/web2" "$WORK/round.onnx" >/dev/null 2>&1 || fail "TF.js → ONNX"
for f in again.keras round.keras web2/; do
  predicts "$WORK/$f" "$WORK/seed_nhwc.npy" "$WORK/seed_cnn.output.npy" nchw || fail "$f after the round trip"
done

# Bad OUT paths: a folder that is a file (exit 2), a file in a missing folder (exit 1, naming it).
touch "$WORK/afile"
expect_exit 2 "afile" "$BIN/convert_model" "$WORK/seed_cnn.ckpt" "$WORK/afile/"
expect_exit 1 "nowhere" "$BIN/convert_model" "$WORK/seed_cnn.ckpt" "$WORK/nowhere/m.keras"

# The real Keras ResNet-8, read and written back by torchfit in every Keras format: Keras's own outputs.
KERAS=$SRC/../shared/keras_models/resnet8_cifar10_tfkeras240
if [ -f "$KERAS.h5" ]; then
  for out in r8.keras r8.h5 r8web/; do
    "$BIN/convert_model" "$KERAS.h5" "$WORK/$out" >"$WORK/out" 2>&1 || { cat "$WORK/out"; fail "ResNet-8 → $out"; }
    predicts "$WORK/$out" "$KERAS.input.npy" "$KERAS.expected.npy" nhwc || fail "ResNet-8 $out: not Keras's outputs"
  done
else
  echo "SKIP (the Keras ResNet-8 part): $KERAS.h5 absent"
fi
echo "PASS"
