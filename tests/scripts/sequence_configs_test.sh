#!/usr/bin/env bash
# The shipped sequence models (apps/train_cnn/lstm_rows.json, bigru_rows.json, conv1d_gru.json,
# transformer_patches.json) trained a few steps by train_cnn on the real Fashion-MNIST rows (grayscale 28x28)
# and saved as Keras files predict, through predict_cnn, what independent readers compute from those files:
# tests/keras/reference/keras3_file_reference.py (zipfile/h5py and a float64 NumPy forward written from
# Keras's source: Reshape, LSTM, GRU with reset_after, Bidirectional, Dense), extended here with Keras's
# Conv1D and MaxPooling1D (keras_layers_reference.py's conv_nd/pool), Permute, LayerNormalization,
# GlobalAveragePooling1D and MultiHeadAttention (keras/src/layers/attention/multi_head_attention.py's einsums),
# and TensorFlow.js (tfjs_predict.js, when installed) for lstm_rows, the one TF.js reads: its GRU has no
# reset_after=True (Keras's default) and it has no MultiHeadAttention. Within 1e-5 on 10 real test images,
# from the saved file's config and from the shipped JSON itself (only the weights from the saved file).
# Skipped (exit 0 with SKIP) without dataset-fashion-mnist, /usr/bin/python3, numpy, h5py or PIL.
set -uo pipefail
TEST_NAME=sequence_configs source "$(dirname "$0")/common.sh"
PY=/usr/bin/python3
[ -f /usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz ] || { echo "SKIP: dataset-fashion-mnist not installed"; exit 0; }
[ -x "$PY" ] || { echo "SKIP: /usr/bin/python3 not found"; exit 0; }
"$PY" -c "import h5py, numpy, PIL" 2>/dev/null || { echo "SKIP: python3-h5py / numpy / PIL not importable"; exit 0; }
REF=$SRC/tests/keras/reference
"$BIN/prepare_data" --output "$WORK/data" --images-per-class 24 --classes 3 --pred-count 10 >/dev/null ||
  fail "prepare_data failed"
cd "$WORK" || fail "cd"

# agrees MODEL PREDICTIONS.csv READER [SHIPPED.json]: READER's (numpy | tfjs) class probabilities for
# data/pred's images (grayscale, 1/255, as predict_cnn loads them) within 1e-5 of predict_cnn's. With
# SHIPPED, the reader builds the shipped file's own architecture (its last Dense set to the 3 classes, as
# train_cnn sets it) and takes only the weights from MODEL: the shipped JSON read as Keras reads it.
agrees() {
  "$PY" - "$REF" "$@" <<'PYEOF'
import csv, json, math, os, shutil, subprocess, sys, tempfile
import numpy as np
from PIL import Image
ref, model, preds, reader = sys.argv[1:5]
shipped = None
if len(sys.argv) > 5:
    shipped = json.load(open(sys.argv[5]))
    dense = [l for l in shipped["config"]["layers"] if l["class_name"] == "Dense"][-1]
    dense["config"]["units"] = 3
sys.path.insert(0, ref)
import keras3_file_reference as R
if shipped is not None:
    saved_h5_model = R.h5_model
    R.h5_model = lambda path: (shipped, saved_h5_model(path)[1])

rows = list(csv.DictReader(open(preds)))
classes = [k for k in rows[0] if k not in ("file", "class", "probability")]
ours = np.array([[float(r[k]) for k in classes] for r in rows])
x = np.stack([np.asarray(Image.open(os.path.join("data", "pred", r["file"])).convert("L"), np.float64) / 255
              for r in rows])[..., None]

def layer_norm(c, x, w):  # keras/src/layers/normalization/layer_normalization.py, the last axis
    mean, var = x.mean(-1, keepdims=True), x.var(-1, keepdims=True)
    return (x - mean) / np.sqrt(var + c["epsilon"]) * w[0] + w[1]

def mha(c, xs, w):  # keras/src/layers/attention/multi_head_attention.py, query = value = key, no mask
    q_in, v_in = xs[0], xs[-1]
    q = np.einsum("abc,cde->abde", q_in, w[0]) + w[1]
    k = np.einsum("abc,cde->abde", v_in, w[2]) + w[3]
    v = np.einsum("abc,cde->abde", v_in, w[4]) + w[5]
    q = q / math.sqrt(c["key_dim"])
    s = np.einsum("aecd,abcd->acbe", k, q)
    s = np.exp(s - s.max(-1, keepdims=True))
    s = s / s.sum(-1, keepdims=True)
    o = np.einsum("acbe,aecd->abcd", s, v)
    return np.einsum("abcd,cde->abe", o, w[6]) + w[7]

base_call = R.call
def call(cls, c, xs, w):
    x = xs[0]
    if cls == "Conv1D":
        y = R.K.conv_nd(x, w[0], c["strides"], c["dilation_rate"], c["padding"]) + w[1]
        return R.activation(y, c["activation"])
    if cls == "MaxPooling1D":
        return R.K.pool(x, c["pool_size"], c["strides"] or c["pool_size"], c["padding"], "max")
    if cls == "Permute":
        return np.transpose(x, [0] + list(c["dims"]))
    if cls == "LayerNormalization":
        return layer_norm(c, x, w)
    if cls == "GlobalAveragePooling1D":
        return x.mean(axis=1)
    if cls == "MultiHeadAttention":
        return mha(c, xs, w)
    return base_call(cls, c, xs, w)
R.call = call

if reader == "numpy":
    theirs = R.predict(model, [x])[0]
else:
    with tempfile.TemporaryDirectory() as d:
        req, out = os.path.join(d, "req.json"), os.path.join(d, "out.json")
        json.dump({"inputs": [{"shape": list(x.shape), "data": x.ravel().tolist()}]}, open(req, "w"))
        if shipped is not None:  # the shipped topology with the exported folder's weights manifest and shard
            manifest = json.load(open(os.path.join(model, "model.json")))
            manifest["modelTopology"] = shipped
            web = os.path.join(d, "web")
            shutil.copytree(model, web)
            json.dump(manifest, open(os.path.join(web, "model.json"), "w"))
            model = web
        rc = subprocess.call(["node", os.path.join(ref, "tfjs_predict.js"), model, req, out])
        if rc == 77:
            print("SKIP (TensorFlow.js not installed)")
            sys.exit(0)
        assert rc == 0, rc
        y = json.load(open(out))["outputs"][0]
        theirs = np.array(y["data"]).reshape(y["shape"])
assert theirs.shape == ours.shape == (10, 3), (theirs.shape, ours.shape)
d = float(np.abs(theirs - ours).max())
top = float(ours.max(1).min())  # trained a few steps: no image is predicted with certainty
source = os.path.basename(sys.argv[5]) + " with the weights of " if shipped is not None else ""
print("%s%s (%s): max |p - reference| = %.2e over %d images" % (source, os.path.basename(sys.argv[2].rstrip("/")),
                                                                reader, d, len(rows)))
sys.exit(0 if d <= 1e-5 and top < 1 - 1e-3 else 1)
PYEOF
}

for config in lstm_rows bigru_rows conv1d_gru transformer_patches; do
  # 5 steps from a fixed seed: trained weights, not the initializers'; saved as a tf.keras 2 .h5.
  "$BIN/train_cnn" --data data --model-config "$config.json" --color-mode grayscale --target-size 28 --epochs 1 \
    --steps-per-epoch 5 --batch-size 8 --validation-steps 1 --run-dir "run-$config" --seed 3 --no-checkpoint \
    --save-keras "$config.h5" --verbose 0 >train.log 2>&1 || { cat train.log; fail "$config did not train"; }
  "$BIN/predict_cnn" --model "$config.h5" --data data/pred --output "$config.csv" >predict.log 2>&1 ||
    { cat predict.log; fail "predict_cnn $config.h5"; }
  agrees "$config.h5" "$config.csv" numpy || fail "$config.h5: predict_cnn differs from the NumPy reader"
  agrees "$config.h5" "$config.csv" numpy "$SRC/apps/train_cnn/$config.json" ||
    fail "$config.json: the NumPy reader of the shipped architecture differs from predict_cnn"
done
"$BIN/convert_model" lstm_rows.h5 web/ >convert.log 2>&1 || { cat convert.log; fail "convert_model lstm_rows.h5 web/"; }
agrees web lstm_rows.csv tfjs || fail "lstm_rows: predict_cnn differs from TensorFlow.js"
agrees web lstm_rows.csv tfjs "$SRC/apps/train_cnn/lstm_rows.json" ||
  fail "lstm_rows.json: TensorFlow.js's model of the shipped file differs from predict_cnn"
# The GRU's reset_after=True is refused by the TF.js writer with the reason.
expect_exit 1 "reset_after" "$BIN/convert_model" bigru_rows.h5 web_gru/
echo "PASS"
