#!/usr/bin/python3
"""tf.keras 2.x model files (h5py, Keras's model.save layout) whose layers take an `axis` in the forms
tf.keras writes, and their outputs from a float64 NumPy forward written from Keras's formulas
(tests/keras/keras_axis_test.cpp, issue 37 item 7).

  keras_axis_fixtures.py OUT_DIR

Writes into OUT_DIR, for each fixture <stem>: <stem>.h5, <stem>.input.npy (float32, NHWC or (N, D)),
<stem>.expected.npy (the model's output) and <stem>.expected_logits.npy (before the final softmax).
Fixtures:
  bn_vector    Dense -> BatchNormalization "axis": [1] (what tf.keras 2.x writes for a vector input once
               built) -> Dense -> BatchNormalization axis -1 -> Dense -> Softmax "axis": [1]
  bn_image     Conv2D -> BatchNormalization "axis": [3] -> Flatten -> Dense -> BatchNormalization
               "axis": 1 (an int) -> Dense -> LayerNormalization "axis": [1] -> Softmax "axis": -1
  bn_rows      Reshape to (T, D) -> BatchNormalization "axis": [1] (per row: T statistics) ->
               BatchNormalization "axis": 2 (per feature) -> Flatten -> Dense softmax
  bad_axis     BatchNormalization "axis": [2] after a Dense (outside the (None, D) input: refused at build)
  bn_two_axes  BatchNormalization "axis": [1, 3] on an image (several axes: refused at build)
Keras's BatchNormalization in inference: y = gamma * (x - moving_mean) / sqrt(moving_variance + eps) + beta
along the axis, the others broadcast; Softmax over a list of one axis is the softmax on that axis.
"""
import json
import os
import sys

import h5py
import numpy as np

rng = np.random.default_rng(37)
STR = h5py.string_dtype()


def layer(cls, **config):
    return {"class_name": cls, "config": config}


def softmax(z, axis=-1):
    e = np.exp(z - z.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def bn_weights(c):
    return [("gamma", rng.uniform(0.5, 1.5, c)), ("beta", rng.normal(0, 0.3, c)),
            ("moving_mean", rng.normal(0, 0.5, c)), ("moving_variance", rng.uniform(0.3, 2.0, c))]


def batch_norm(x, w, axis, eps):
    """Keras BatchNormalization in inference along Keras axis `axis` (batch = 0)."""
    gamma, beta, mean, var = (v for _, v in w)
    shape = [1] * x.ndim
    shape[axis] = x.shape[axis]
    r = lambda v: v.reshape(shape)
    return (x - r(mean)) / np.sqrt(r(var) + eps) * r(gamma) + r(beta)


def dense_weights(d_in, d_out):
    return [("kernel", rng.normal(0, 0.5, (d_in, d_out))), ("bias", rng.normal(0, 0.1, d_out))]


def dense(x, w):
    return x @ w[0][1] + w[1][1]


def conv_valid(x, k, b):
    kh, kw = k.shape[:2]
    n, h, wd, _ = x.shape
    out = np.zeros((n, h - kh + 1, wd - kw + 1, k.shape[3]))
    for i in range(out.shape[1]):
        for j in range(out.shape[2]):
            out[:, i, j, :] = np.tensordot(x[:, i:i + kh, j:j + kw, :], k, axes=([1, 2, 3], [0, 1, 2]))
    return out + b


def write_h5(path, input_shape, layers, weights):
    """tf.keras 2.x model.save: model_config on the root, /model_weights with slash weight names."""
    specs = [layer("InputLayer", batch_input_shape=[None] + list(input_shape), dtype="float32", sparse=False,
                   name="input_1")] + layers
    config = {"class_name": "Sequential", "config": {"name": "sequential", "layers": specs}}
    with h5py.File(path, "w") as f:
        f.attrs["model_config"] = json.dumps(config)
        f.attrs["keras_version"] = "2.4.0"
        f.attrs["backend"] = "tensorflow"
        mw = f.create_group("model_weights")
        names = ["input_1"] + [l["config"]["name"] for l in layers]
        mw.attrs["layer_names"] = np.array(names, dtype=STR)
        mw.attrs["keras_version"] = "2.4.0"
        mw.attrs["backend"] = "tensorflow"
        for name in names:
            g = mw.create_group(name)
            ws = weights.get(name, [])
            if not ws:
                g.attrs["weight_names"] = np.array([], dtype=np.float64)
                continue
            wnames = [name + "/" + w + ":0" for w, _ in ws]
            g.attrs["weight_names"] = np.array(wnames, dtype=STR)
            for wname, (_, value) in zip(wnames, ws):
                g.create_dataset(wname, data=value.astype(np.float32))


def save(out, stem, x, logits, probs):
    np.save(os.path.join(out, stem + ".input.npy"), x.astype(np.float32))
    np.save(os.path.join(out, stem + ".expected_logits.npy"), logits.astype(np.float32))
    np.save(os.path.join(out, stem + ".expected.npy"), probs.astype(np.float32))


def bn(name, axis, eps=0.001):
    return layer("BatchNormalization", name=name, trainable=True, dtype="float32", axis=axis, momentum=0.99,
                 epsilon=eps, center=True, scale=True, beta_initializer={"class_name": "Zeros", "config": {}})


def bn_vector(out):
    w = {"d1": dense_weights(6, 5), "bn1": bn_weights(5), "d2": dense_weights(5, 4), "bn2": bn_weights(4),
         "d3": dense_weights(4, 3)}
    layers = [layer("Dense", name="d1", units=5, activation="relu", use_bias=True),
              bn("bn1", [1]),
              layer("Dense", name="d2", units=4, activation="linear", use_bias=True),
              bn("bn2", -1, eps=0.01),
              layer("Dense", name="d3", units=3, activation="linear", use_bias=True),
              layer("Softmax", name="softmax", axis=[1])]
    write_h5(os.path.join(out, "bn_vector.h5"), [6], layers, w)
    x = rng.normal(0, 1, (4, 6))
    h = batch_norm(np.maximum(dense(x, w["d1"]), 0), w["bn1"], 1, 0.001)
    h = batch_norm(dense(h, w["d2"]), w["bn2"], 1, 0.01)
    logits = dense(h, w["d3"])
    save(out, "bn_vector", x, logits, softmax(logits, 1))


def bn_image(out):
    w = {"conv": [("kernel", rng.normal(0, 0.4, (3, 3, 3, 3))), ("bias", rng.normal(0, 0.1, 3))],
         "bn1": bn_weights(3), "d1": dense_weights(4 * 4 * 3, 4), "bn2": bn_weights(4), "d2": dense_weights(4, 3),
         "ln": [("gamma", rng.uniform(0.5, 1.5, 3)), ("beta", rng.normal(0, 0.2, 3))]}
    layers = [layer("Conv2D", name="conv", filters=3, kernel_size=[3, 3], strides=[1, 1], padding="valid",
                    data_format="channels_last", dilation_rate=[1, 1], groups=1, activation="linear", use_bias=True),
              bn("bn1", [3]),
              layer("Flatten", name="flatten", data_format="channels_last"),
              layer("Dense", name="d1", units=4, activation="linear", use_bias=True),
              bn("bn2", 1),
              layer("Dense", name="d2", units=3, activation="linear", use_bias=True),
              layer("LayerNormalization", name="ln", axis=[1], epsilon=0.001, center=True, scale=True),
              layer("Softmax", name="softmax", axis=-1)]
    write_h5(os.path.join(out, "bn_image.h5"), [6, 6, 3], layers, w)
    x = rng.uniform(0, 1, (3, 6, 6, 3))
    h = batch_norm(conv_valid(x, w["conv"][0][1], w["conv"][1][1]), w["bn1"], 3, 0.001)
    h = batch_norm(dense(h.reshape(3, -1), w["d1"]), w["bn2"], 1, 0.001)
    h = dense(h, w["d2"])
    mean, var = h.mean(axis=1, keepdims=True), h.var(axis=1, keepdims=True)
    logits = (h - mean) / np.sqrt(var + 0.001) * w["ln"][0][1] + w["ln"][1][1]
    save(out, "bn_image", x, logits, softmax(logits, 1))


def bn_rows(out):
    w = {"bn_t": bn_weights(3), "bn_d": bn_weights(4), "d": dense_weights(12, 3)}
    layers = [layer("Reshape", name="rows", target_shape=[3, 4]),
              bn("bn_t", [1]),
              bn("bn_d", 2),
              layer("Flatten", name="flatten", data_format="channels_last"),
              layer("Dense", name="d", units=3, activation="softmax", use_bias=True)]
    write_h5(os.path.join(out, "bn_rows.h5"), [12], layers, w)
    x = rng.normal(0, 1, (2, 12))
    h = batch_norm(x.reshape(2, 3, 4), w["bn_t"], 1, 0.001)
    h = batch_norm(h, w["bn_d"], 2, 0.001)
    logits = dense(h.reshape(2, -1), w["d"])
    save(out, "bn_rows", x, logits, softmax(logits, 1))


def refused(out):
    w = {"d": dense_weights(6, 5), "bn": bn_weights(5)}
    write_h5(os.path.join(out, "bad_axis.h5"), [6],
             [layer("Dense", name="d", units=5, activation="linear", use_bias=True), bn("bn", [2])], w)
    w2 = {"bn": bn_weights(3)}
    write_h5(os.path.join(out, "bn_two_axes.h5"), [4, 4, 3], [bn("bn", [1, 3])], w2)


if __name__ == "__main__":
    out_dir = sys.argv[1]
    os.makedirs(out_dir, exist_ok=True)
    bn_vector(out_dir)
    bn_image(out_dir)
    bn_rows(out_dir)
    refused(out_dir)
