#!/usr/bin/python3
"""Keras model files written with h5py in Keras's own layouts, and their outputs from a float64 NumPy
forward pass written from Keras's layer definitions (tests/keras/keras_import_test.cpp).

  keras_fixtures.py OUT_DIR [REAL_KERAS3_FILE [REAL_MOBILENET_H5]]

Writes into OUT_DIR, for each fixture <stem>: the model file(s), <stem>.input.npy (float32, the
model's own layout: NHWC, NCHW for the Keras 1 "th" model), <stem>.expected.npy (probabilities) and
<stem>.expected_logits.npy (before the final softmax). With REAL_KERAS3_FILE (a Keras 3 .keras
Sequential CNN) also its reference output from the file's own weights (real_keras3.*), and with
REAL_MOBILENET_H5 (a tf.keras functional chain) that of the file (real_mobilenet.*).
Fixtures:
  tf2_full.h5            tf.keras 2.x model.save: root model_config, /model_weights, slash weight names,
                         variable-length strings; Conv2D 'same' stride 2 (odd input), BatchNormalization
                         axis [3], DepthwiseConv2D x2 without bias, ReLU layer, MaxPooling2D, Flatten,
                         Dropout, Dense softmax
  keras1_th_weights.h5   Keras 1 save_weights (Theano, dim_ordering th) + keras1_th_arch.json:
                         Convolution2D (kernels (out, in, kh, kw), convolved), fixed-length strings,
                         no keras_version; Flatten in (C, H, W) order
  keras3.keras           Keras 3 zip: config.json, metadata.json, model.weights.h5 (layers/<key>/vars/<i>)
  unsupported.h5         a full model with a LocallyConnected2D layer (must be refused, naming it)
  graph.h5, graph.keras  the same functional model as tf.keras 2.x model.save and as a Keras 3 zip:
                         Rescaling, Conv2D 'same' stride 2 on an even input (TF pads only after),
                         SeparableConv2D, Conv2DTranspose 'same' stride 2, ZeroPadding2D, Cropping2D,
                         UpSampling2D, Concatenate, LayerNormalization, ReLU (max_value, negative_slope),
                         Softmax (axis -1), Multiply, Add, Flatten -> Dropout -> Dense (Keras's (H, W, C)
                         order)
  flatten_paths.h5, .keras  issue 37's paths from an image to a Dense: Concatenate of Flattens, a
                         Flatten feeding two Denses, Concatenate on the channel and height axes, Reshape
                         (-1) and Reshape to rank 2 before Flatten, all summed into a softmax Dense
"""
import io
import json
import os
import re
import sys
import zipfile

import h5py
import numpy as np

rng = np.random.default_rng(29)
STR = h5py.string_dtype()


def conv2d(x, k, strides=(1, 1), padding="valid"):
    """NHWC float64 cross-correlation with a (kh, kw, in, out) kernel; TF 'same' puts the odd pad after."""
    kh, kw = k.shape[:2]
    if padding == "same":
        x = same_pad(x, kh, kw, strides)
    n, h, w, c = x.shape
    oh, ow = (h - kh) // strides[0] + 1, (w - kw) // strides[1] + 1
    out = np.zeros((n, oh, ow, k.shape[3]))
    for i in range(oh):
        for j in range(ow):
            patch = x[:, i * strides[0]:i * strides[0] + kh, j * strides[1]:j * strides[1] + kw, :]
            out[:, i, j, :] = np.tensordot(patch, k, axes=([1, 2, 3], [0, 1, 2]))
    return out


def same_pad(x, kh, kw, strides):
    pads = []
    for size, k, s in ((x.shape[1], kh, strides[0]), (x.shape[2], kw, strides[1])):
        total = max((-(-size // s) - 1) * s + k - size, 0)
        pads.append((total // 2, total - total // 2))
    return np.pad(x, ((0, 0), pads[0], pads[1], (0, 0)))


def depthwise(x, k, padding="same"):
    kh, kw, c, m = k.shape
    if padding == "same":
        x = same_pad(x, kh, kw, (1, 1))
    n, h, w, _ = x.shape
    out = np.zeros((n, h - kh + 1, w - kw + 1, c * m))
    for i in range(out.shape[1]):
        for j in range(out.shape[2]):
            patch = x[:, i:i + kh, j:j + kw, :]  # (n, kh, kw, c)
            out[:, i, j, :] = np.einsum("nhwc,hwcm->ncm", patch, k).reshape(n, c * m)
    return out


def maxpool(x, p=2):
    n, h, w, c = x.shape
    oh, ow = h // p, w // p
    return x[:, :oh * p, :ow * p, :].reshape(n, oh, p, ow, p, c).max(axis=(2, 4))


def softmax(z):
    e = np.exp(z - z.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def relu(x):
    return np.maximum(x, 0)


def save_outputs(out, stem, x, logits):
    np.save(os.path.join(out, stem + ".input.npy"), x.astype(np.float32))
    np.save(os.path.join(out, stem + ".expected_logits.npy"), logits.astype(np.float32))
    np.save(os.path.join(out, stem + ".expected.npy"), softmax(logits).astype(np.float32))


def layer(cls, **config):
    return {"class_name": cls, "config": config}


def write_layer_groups(root, layers, weights, flat_names=False, fixed=False):
    """Keras's HDF5 weights layout: layer_names on `root`, each group's weight_names (slash names in
    2.x, flat in Keras 1), datasets where the names say; an empty float64 weight_names when none."""
    names = [l["config"]["name"] for l in layers]
    string = (lambda v: np.array([s.encode() for s in v])) if fixed else (lambda v: np.array(v, dtype=STR))
    root.attrs["layer_names"] = string(names)
    for name in names:
        g = root.create_group(name)
        ws = weights.get(name, [])
        if not ws:
            g.attrs["weight_names"] = np.array([], dtype=np.float64)
            continue
        wnames = [(name + "_" + w) if flat_names else (name + "/" + w + ":0") for w, _ in ws]
        g.attrs["weight_names"] = string(wnames)
        for wname, (_, value) in zip(wnames, ws):
            value = np.asarray(value)  # an integer (Normalization's count) as Keras writes it, int64
            g.create_dataset(wname, data=value if value.dtype.kind in "iu" else value.astype(np.float32))


def write_keras3_zip(path, config, vars_of):
    """A Keras 3 .keras zip: config.json, metadata.json and model.weights.h5 with layers/<key>/vars/<i>."""
    buf = io.BytesIO()
    with h5py.File(buf, "w") as f:
        for key, vs in vars_of.items():
            g = f.create_group("layers/" + key + "/vars")
            for i, v in enumerate(vs):
                v = np.asarray(v)  # an integer (Normalization's count) as Keras writes it, int64
                g.create_dataset(str(i), data=v if v.dtype.kind in "iu" else v.astype(np.float32))
        f.create_group("optimizer/vars")
    with zipfile.ZipFile(path, "w", zipfile.ZIP_STORED) as z:
        z.writestr("metadata.json", json.dumps({"keras_version": "3.5.0", "date_saved": "2026-01-01@00:00:00"}))
        z.writestr("config.json", json.dumps(config))
        z.writestr("model.weights.h5", buf.getvalue())


def tf2_full(out):
    x = rng.uniform(0, 1, (2, 11, 11, 3))
    k1, b1 = rng.normal(0, 0.4, (3, 3, 3, 4)), rng.normal(0, 0.1, 4)
    gamma, beta = rng.uniform(0.5, 1.5, 4), rng.normal(0, 0.2, 4)
    mean, var = rng.normal(0, 0.3, 4), rng.uniform(0.5, 2.0, 4)
    kd = rng.normal(0, 0.4, (3, 3, 4, 2))
    kf, bf = rng.normal(0, 0.3, (3 * 3 * 8, 5)), rng.normal(0, 0.1, 5)
    h = relu(conv2d(x, k1, (2, 2), "same") + b1)  # 11 -> 6
    h = (h - mean) / np.sqrt(var + 0.001) * gamma + beta
    h = relu(depthwise(h, kd))
    h = maxpool(h).reshape(2, -1)  # Keras flattens (H, W, C)
    logits = h @ kf + bf
    layers = [
        layer("InputLayer", batch_input_shape=[None, 11, 11, 3], dtype="float32", sparse=False, name="input_1"),
        layer("Conv2D", name="conv2d", trainable=True, dtype="float32", filters=4, kernel_size=[3, 3],
              strides=[2, 2], padding="same", data_format="channels_last", dilation_rate=[1, 1], groups=1,
              activation="relu", use_bias=True, kernel_initializer={"class_name": "GlorotUniform", "config": {}}),
        layer("BatchNormalization", name="bn", axis=[3], momentum=0.9, epsilon=0.001, center=True, scale=True),
        layer("DepthwiseConv2D", name="dw", kernel_size=[3, 3], strides=[1, 1], padding="same",
              depth_multiplier=2, activation="linear", use_bias=False, data_format="channels_last"),
        layer("ReLU", name="re_lu", max_value=None, negative_slope=0.0, threshold=0.0),
        layer("MaxPooling2D", name="pool", pool_size=[2, 2], padding="valid", strides=[2, 2]),
        layer("Flatten", name="flatten", data_format="channels_last"),
        layer("Dropout", name="dropout", rate=0.5),
        layer("Dense", name="dense", units=5, activation="softmax", use_bias=True),
    ]
    config = {"class_name": "Sequential", "config": {"name": "seq", "layers": layers}}
    weights = {"conv2d": [("kernel", k1), ("bias", b1)],
               "bn": [("gamma", gamma), ("beta", beta), ("moving_mean", mean), ("moving_variance", var)],
               "dw": [("depthwise_kernel", kd)], "dense": [("kernel", kf), ("bias", bf)]}
    with h5py.File(os.path.join(out, "tf2_full.h5"), "w") as f:
        f.attrs["model_config"] = json.dumps(config)
        f.attrs["keras_version"] = "2.4.0"
        f.attrs["backend"] = "tensorflow"
        # model.compile(optimizer=RMSprop(...)) as tf.keras 2.4 writes it (optimizer_v2's get_config).
        f.attrs["training_config"] = json.dumps({
            "loss": "categorical_crossentropy", "metrics": ["accuracy"], "weighted_metrics": None,
            "loss_weights": None, "optimizer_config": {"class_name": "RMSprop", "config": {
                "name": "RMSprop", "learning_rate": 0.0020000000949949026, "decay": 0.0, "rho": 0.8,
                "momentum": 0.5, "epsilon": 1e-07, "centered": True}}})
        mw = f.create_group("model_weights")
        mw.attrs["keras_version"] = "2.4.0"
        mw.attrs["backend"] = "tensorflow"
        write_layer_groups(mw, layers[1:], weights)
        mw.create_group("input_1").attrs["weight_names"] = np.array([], dtype=np.float64)
        mw.attrs["layer_names"] = np.array(["input_1"] + [l["config"]["name"] for l in layers[1:]], dtype=STR)
        f.create_group("optimizer_weights")
    save_outputs(out, "tf2_full", x, logits)
    # The same model with a layer torchfit lacks.
    bad = json.loads(json.dumps(config))
    bad["config"]["layers"].insert(1, layer("LocallyConnected2D", name="locally_connected2d", filters=2,
                                            kernel_size=[3, 3]))
    with h5py.File(os.path.join(out, "unsupported.h5"), "w") as f:
        f.attrs["model_config"] = json.dumps(bad)
        write_layer_groups(f.create_group("model_weights"), layers[1:], weights)


def conv2d_transpose(x, k, strides, padding):
    """TF conv2d_transpose: the adjoint of conv2d (k (kh, kw, out, in)); output H*s ('same') or
    H*s + max(k - s, 0) ('valid'); 'same' crops pad_before = total // 2 of the full result."""
    kh, kw, f, c = k.shape
    n, h, w, _ = x.shape
    full = np.zeros((n, (h - 1) * strides[0] + kh, (w - 1) * strides[1] + kw, f))
    for i in range(h):
        for j in range(w):
            full[:, i * strides[0]:i * strides[0] + kh, j * strides[1]:j * strides[1] + kw, :] += \
                np.einsum("nc,hwfc->nhwf", x[:, i, j, :], k)
    if padding == "valid":
        return full
    oh, ow = h * strides[0], w * strides[1]
    top, left = (full.shape[1] - oh) // 2, (full.shape[2] - ow) // 2
    return full[:, top:top + oh, left:left + ow, :]


def layer_norm(x, gamma, beta, eps):
    mean, var = x.mean(axis=-1, keepdims=True), x.var(axis=-1, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * gamma + beta


def keras_relu(x, max_value, negative_slope, threshold):
    """keras.backend.relu: min(x, max_value) above the threshold, negative_slope * (x - threshold) below."""
    return np.where(x > threshold, np.minimum(x, max_value), negative_slope * (x - threshold))


def graph_weights():
    return {"conv": [("kernel", rng.normal(0, 0.4, (3, 3, 3, 4))), ("bias", rng.normal(0, 0.1, 4))],
            "sep": [("depthwise_kernel", rng.normal(0, 0.4, (3, 3, 4, 2))),
                    ("pointwise_kernel", rng.normal(0, 0.4, (1, 1, 8, 4))), ("bias", rng.normal(0, 0.1, 4))],
            "deconv": [("kernel", rng.normal(0, 0.4, (3, 3, 3, 4))), ("bias", rng.normal(0, 0.1, 3))],
            "ln": [("gamma", rng.uniform(0.5, 1.5, 7)), ("beta", rng.normal(0, 0.2, 7))],
            "dense": [("kernel", rng.normal(0, 0.2, (8 * 8 * 7, 5))), ("bias", rng.normal(0, 0.1, 5))]}


def graph_forward(x, w):
    v = {k: [a for _, a in vs] for k, vs in w.items()}
    r = x * 0.5 - 0.1                                                    # Rescaling(0.5, offset=-0.1)
    a = conv2d(r, v["conv"][0], (2, 2), "same") + v["conv"][1]           # 8 -> 4, pad (0, 1)
    kd = v["sep"][0]
    b = np.concatenate([conv2d(a[..., c:c + 1], kd[:, :, c:c + 1, :], (1, 1), "same") for c in range(4)], axis=3)
    b = relu(conv2d(b, v["sep"][1]) + v["sep"][2])                       # SeparableConv2D relu
    c = conv2d_transpose(b, v["deconv"][0], (2, 2), "same") + v["deconv"][1]  # 4 -> 8
    c = np.pad(c, ((0, 0), (1, 0), (0, 2), (0, 0)))[:, 1:, :-2, :]       # ZeroPadding2D then Cropping2D
    u = a.repeat(2, axis=1).repeat(2, axis=2)                            # UpSampling2D nearest
    cat = np.concatenate([c, u], axis=3)                                 # (8, 8, 7)
    ln = layer_norm(cat, v["ln"][0], v["ln"][1], 1e-3)
    act = keras_relu(ln, 0.8, 0.1, 0.0)
    e = np.exp(cat - cat.max(axis=3, keepdims=True))
    m = act * (e / e.sum(axis=3, keepdims=True)) + ln                    # Multiply, then Add
    return m.reshape(m.shape[0], -1) @ v["dense"][0] + v["dense"][1]     # Flatten (H, W, C), Dense


def graph_layers():
    """(class, name, config, inbound layer names) in topological order, tf.keras 2.x argument names."""
    conv = dict(strides=[2, 2], padding="same", data_format="channels_last", dilation_rate=[1, 1],
                activation="linear", use_bias=True)
    return [
        ("InputLayer", "img", dict(batch_input_shape=[None, 8, 8, 3], dtype="float32", sparse=False, ragged=False), []),
        ("Rescaling", "rescale", dict(scale=0.5, offset=-0.1), ["img"]),
        ("Conv2D", "conv", dict(conv, filters=4, kernel_size=[3, 3], groups=1), ["rescale"]),
        ("SeparableConv2D", "sep", dict(conv, filters=4, kernel_size=[3, 3], strides=[1, 1], depth_multiplier=2,
                                        activation="relu"), ["conv"]),
        ("Conv2DTranspose", "deconv", dict(conv, filters=3, kernel_size=[3, 3], output_padding=None), ["sep"]),
        ("ZeroPadding2D", "pad", dict(padding=[[1, 0], [0, 2]], data_format="channels_last"), ["deconv"]),
        ("Cropping2D", "crop", dict(cropping=[[1, 0], [0, 2]], data_format="channels_last"), ["pad"]),
        ("UpSampling2D", "up", dict(size=[2, 2], data_format="channels_last", interpolation="nearest"), ["conv"]),
        ("Concatenate", "cat", dict(axis=-1), ["crop", "up"]),
        ("LayerNormalization", "ln", dict(axis=[3], epsilon=0.001, center=True, scale=True), ["cat"]),
        ("ReLU", "relu", dict(max_value=0.8, negative_slope=0.1, threshold=0.0), ["ln"]),
        ("Softmax", "soft", dict(axis=-1), ["cat"]),
        ("Multiply", "mul", dict(), ["relu", "soft"]),
        ("Add", "add", dict(), ["mul", "ln"]),
        ("Flatten", "flat", dict(data_format="channels_last"), ["add"]),
        ("Dropout", "drop", dict(rate=0.3, noise_shape=None, seed=None), ["flat"]),
        ("Dense", "dense", dict(units=5, activation="softmax", use_bias=True), ["drop"]),
    ]


def snake_case(name):
    """Keras 3's naming.to_snake_case: the key of a layer's weights in model.weights.h5 (PReLU -> p_re_lu)."""
    name = re.sub(r"(.)([A-Z][a-z]+)", r"\1_\2", name)
    return re.sub(r"([a-z])([A-Z])", r"\1_\2", name).lower()


def graph_tf2(out, w, stem="graph", specs=None, output="dense"):
    specs = specs or graph_layers()
    layers = []
    for cls, name, c, ins in specs:
        inbound = [[[i, 0, 0, {}] for i in ins]] if ins else []
        layers.append({"class_name": cls, "config": dict(c, name=name, trainable=True) if cls != "InputLayer"
                       else dict(c, name=name), "name": name, "inbound_nodes": inbound})
    config = {"class_name": "Functional", "config": {"name": stem, "layers": layers,
                                                     "input_layers": [["img", 0, 0]],
                                                     "output_layers": [[output, 0, 0]]},
              "keras_version": "2.4.0", "backend": "tensorflow"}
    with h5py.File(os.path.join(out, stem + ".h5"), "w") as f:
        f.attrs["model_config"] = json.dumps(config)
        f.attrs["keras_version"] = "2.4.0"
        f.attrs["backend"] = "tensorflow"
        write_layer_groups(f.create_group("model_weights"), [l for l in layers], w)


def graph_keras3(out, w, stem="graph", specs=None, output="dense"):
    specs = specs or graph_layers()
    dtype = {"module": "keras", "class_name": "DTypePolicy", "config": {"name": "float32"}, "registered_name": None}
    tensor = lambda n: {"class_name": "__keras_tensor__", "config": {"shape": None, "dtype": "float32",
                                                                     "keras_history": [n, 0, 0]}}
    layers = []
    for cls, name, c, ins in specs:
        c = dict(c, name=name)
        if cls == "InputLayer":
            c = {"batch_shape": c["batch_input_shape"], "dtype": "float32", "sparse": False, "name": name}
        else:
            c.update(dtype=dtype, trainable=True)
        if cls == "ReLU":
            c["negative_slope"] = 0.1
        args = [] if not ins else [[tensor(i) for i in ins] if len(ins) > 1 else tensor(ins[0])]
        layers.append({"module": "keras.layers", "class_name": cls, "config": c, "registered_name": None,
                       "name": name, "inbound_nodes": [{"args": args, "kwargs": {}}] if ins else []})
    config = {"module": "keras.src.models.functional", "class_name": "Functional", "registered_name": "Functional",
              "config": {"name": stem, "trainable": True, "layers": layers,
                         "input_layers": [["img", 0, 0]], "output_layers": [[output, 0, 0]]}}
    vars_of, seen = {}, {}
    for cls, name, _, _ in specs:  # keys: snake_case class name counted in layer order
        base = snake_case(cls)
        key = base if base not in seen else base + "_" + str(seen[base])
        seen[base] = seen.get(base, 0) + 1
        vars_of[key] = [value for _, value in w.get(name, [])]
    write_keras3_zip(os.path.join(out, stem + ".keras"), config, vars_of)


def graph(out):
    x = rng.uniform(0, 1, (2, 8, 8, 3))
    w = graph_weights()
    graph_tf2(out, w)
    graph_keras3(out, w)
    save_outputs(out, "graph", x, graph_forward(x, w))


def flatten_paths_layers():
    """Every path from an image to a Dense that issue 37 names: Flattens merged by Concatenate, one Flatten
    feeding two Denses, Concatenate on the channel and on the height axis, Reshape((-1,)) and Reshape to
    a rank-2 shape, each into a Dense; the Denses summed."""
    conv = dict(strides=[1, 1], padding="valid", data_format="channels_last", dilation_rate=[1, 1],
                activation="linear", use_bias=True, groups=1)
    dense = lambda units, act="linear": dict(units=units, activation=act, use_bias=True)
    pool = dict(pool_size=[2, 2], strides=[2, 2], padding="valid", data_format="channels_last")
    return [
        ("InputLayer", "img", dict(batch_input_shape=[None, 6, 5, 3], dtype="float32", sparse=False, ragged=False), []),
        ("Conv2D", "ca", dict(conv, filters=4, kernel_size=[3, 3]), ["img"]),         # (4, 3, 4)
        ("Conv2D", "cb", dict(conv, filters=2, kernel_size=[3, 3]), ["img"]),         # (4, 3, 2)
        ("Conv2D", "cc", dict(conv, filters=4, kernel_size=[5, 3]), ["img"]),         # (2, 3, 4)
        ("MaxPooling2D", "pool", pool, ["img"]),                                      # (3, 2, 3)
        ("Flatten", "fa", dict(data_format="channels_last"), ["ca"]),                 # 48
        ("Flatten", "fp", dict(data_format="channels_last"), ["pool"]),               # 18
        ("Concatenate", "cat_flat", dict(axis=-1), ["fa", "fp"]),                     # 66
        ("Dense", "d1", dense(6, "relu"), ["cat_flat"]),
        ("Dense", "d2", dense(6), ["fa"]),                                            # fa feeds two layers
        ("Concatenate", "cat_ch", dict(axis=-1), ["ca", "cb"]),                       # (4, 3, 6)
        ("Reshape", "rs", dict(target_shape=[-1]), ["cat_ch"]),                       # 72
        ("Dense", "d3", dense(6), ["rs"]),
        ("Concatenate", "cat_h", dict(axis=1), ["ca", "cc"]),                         # (6, 3, 4)
        ("Flatten", "fh", dict(data_format="channels_last"), ["cat_h"]),              # 72
        ("Dense", "d4", dense(6), ["fh"]),
        ("Reshape", "rs2", dict(target_shape=[12, 6]), ["cat_ch"]),                   # (12, 6)
        ("Flatten", "f2", dict(data_format="channels_last"), ["rs2"]),                # 72
        ("Dense", "d5", dense(6), ["f2"]),
        ("Add", "sum", dict(), ["d1", "d2", "d3", "d4", "d5"]),
        ("Dense", "out", dense(5, "softmax"), ["sum"]),
    ]


def flatten_paths(out):
    x = rng.uniform(0, 1, (3, 6, 5, 3))
    k = lambda *shape: rng.normal(0, 0.4, shape)
    w = {"ca": [("kernel", k(3, 3, 3, 4)), ("bias", k(4))], "cb": [("kernel", k(3, 3, 3, 2)), ("bias", k(2))],
         "cc": [("kernel", k(5, 3, 3, 4)), ("bias", k(4))], "d1": [("kernel", k(66, 6)), ("bias", k(6))],
         "d2": [("kernel", k(48, 6)), ("bias", k(6))], "d3": [("kernel", k(72, 6)), ("bias", k(6))],
         "d4": [("kernel", k(72, 6)), ("bias", k(6))], "d5": [("kernel", k(72, 6)), ("bias", k(6))],
         "out": [("kernel", k(6, 5)), ("bias", k(5))]}
    v = {name: [a for _, a in ws] for name, ws in w.items()}
    flat = lambda t: t.reshape(t.shape[0], -1)                       # Keras: C order of (N, H, W, C)
    ca, cb, cc = (conv2d(x, v[n][0]) + v[n][1] for n in ("ca", "cb", "cc"))
    fa = flat(ca)
    d1 = relu(np.concatenate([fa, flat(maxpool(x))], axis=1) @ v["d1"][0] + v["d1"][1])
    d2 = fa @ v["d2"][0] + v["d2"][1]
    cat_ch = np.concatenate([ca, cb], axis=3)
    d3 = flat(cat_ch) @ v["d3"][0] + v["d3"][1]
    d4 = flat(np.concatenate([ca, cc], axis=1)) @ v["d4"][0] + v["d4"][1]
    d5 = flat(cat_ch.reshape(cat_ch.shape[0], 12, 6)) @ v["d5"][0] + v["d5"][1]
    logits = (d1 + d2 + d3 + d4 + d5) @ v["out"][0] + v["out"][1]
    specs = flatten_paths_layers()
    graph_tf2(out, w, "flatten_paths", specs, "out")
    graph_keras3(out, w, "flatten_paths", specs, "out")
    save_outputs(out, "flatten_paths", x, logits)


def keras1_th(out):
    x = rng.uniform(0, 1, (2, 2, 6, 5))  # (N, C, H, W)
    w, b = rng.normal(0, 0.5, (3, 2, 3, 2)), rng.normal(0, 0.1, 3)  # Theano (out, in, kh, kw)
    wd, bd = rng.normal(0, 0.3, (3 * 2 * 2, 4)), rng.normal(0, 0.1, 4)
    # Theano convolves: the cross-correlation with the kernel flipped in both spatial axes.
    k = w[:, :, ::-1, ::-1].transpose(2, 3, 1, 0)  # (kh, kw, in, out)
    h = relu(conv2d(x.transpose(0, 2, 3, 1), k) + b)  # (2, 4, 4, 3)
    h = maxpool(h).transpose(0, 3, 1, 2).reshape(2, -1)  # Keras 1 "th" flattens (C, H, W)
    logits = h @ wd + bd
    layers = [
        layer("Convolution2D", name="convolution2d_1", nb_filter=3, nb_row=3, nb_col=2, subsample=[1, 1],
              border_mode="valid", dim_ordering="th", batch_input_shape=[None, 2, 6, 5], activation="linear",
              init="glorot_uniform", W_regularizer=None, bias=True, trainable=True),
        layer("Activation", name="activation_1", activation="relu", trainable=True),
        layer("MaxPooling2D", name="maxpooling2d_1", pool_size=[2, 2], strides=[2, 2], border_mode="valid",
              dim_ordering="th"),
        layer("Flatten", name="flatten_1"),
        layer("Dense", name="dense_1", output_dim=4, activation="softmax", bias=True, input_dim=None),
    ]
    with open(os.path.join(out, "keras1_th_arch.json"), "w") as f:
        json.dump({"class_name": "Sequential", "config": layers}, f)
    with h5py.File(os.path.join(out, "keras1_th_weights.h5"), "w") as f:
        write_layer_groups(f, layers, {"convolution2d_1": [("W", w), ("b", b)], "dense_1": [("W", wd), ("b", bd)]},
                           flat_names=True, fixed=True)
    save_outputs(out, "keras1_th", x, logits)


def keras3(out):
    x = rng.uniform(0, 1, (2, 7, 7, 2))
    k1 = rng.normal(0, 0.4, (3, 3, 2, 3))
    k2, b2 = rng.normal(0, 0.4, (1, 1, 3, 4)), rng.normal(0, 0.1, 4)
    gamma, mean, var = rng.uniform(0.5, 1.5, 4), rng.normal(0, 0.3, 4), rng.uniform(0.5, 2.0, 4)
    kd1, bd1 = rng.normal(0, 0.3, (5 * 5 * 4, 6)), rng.normal(0, 0.1, 6)
    kd2, bd2 = rng.normal(0, 0.3, (6, 3)), rng.normal(0, 0.1, 3)
    h = relu(conv2d(x, k1))
    h = conv2d(h, k2) + b2
    h = (h - mean) / np.sqrt(var + 1e-5) * gamma  # center=False: no beta
    h = relu(h.reshape(2, -1) @ kd1 + bd1)
    logits = h @ kd2 + bd2
    dtype = {"module": "keras", "class_name": "DTypePolicy", "config": {"name": "float32"}, "registered_name": None}
    L = lambda cls, **c: {"module": "keras.layers", "class_name": cls, "config": dict(c, dtype=dtype, trainable=True),
                          "registered_name": None}
    layers = [
        {"module": "keras.layers", "class_name": "InputLayer",
         "config": {"batch_shape": [None, 7, 7, 2], "dtype": "float32", "sparse": False, "name": "input_layer"}},
        L("Conv2D", name="conv_a", filters=3, kernel_size=[3, 3], strides=[1, 1], padding="valid",
          data_format="channels_last", dilation_rate=[1, 1], groups=1, activation="relu", use_bias=False),
        L("Conv2D", name="conv_b", filters=4, kernel_size=[1, 1], strides=[1, 1], padding="valid",
          data_format="channels_last", dilation_rate=[1, 1], groups=1, activation="linear", use_bias=True),
        L("BatchNormalization", name="bn", axis=-1, momentum=0.99, epsilon=1e-5, center=False, scale=True),
        L("Flatten", name="flat", data_format="channels_last"),
        L("Dense", name="hidden", units=6, activation="relu", use_bias=True),
        L("Dense", name="out", units=3, activation="softmax", use_bias=True),
    ]
    # model.compile(optimizer=keras.optimizers.Nadam(...)) as Keras 3's saving writes compile_config.
    optimizer = {"module": "keras.optimizers", "class_name": "Nadam", "registered_name": None, "config": {
        "name": "nadam", "learning_rate": 0.003, "weight_decay": None, "clipnorm": 1.0, "global_clipnorm": None,
        "clipvalue": None, "use_ema": False, "ema_momentum": 0.99, "ema_overwrite_frequency": None,
        "loss_scale_factor": None, "gradient_accumulation_steps": None, "beta_1": 0.85, "beta_2": 0.99,
        "epsilon": 1e-07}}
    config = {"module": "keras", "class_name": "Sequential",
              "config": {"name": "sequential", "trainable": True, "dtype": dtype, "layers": layers},
              "compile_config": {"optimizer": optimizer, "loss": "categorical_crossentropy", "loss_weights": None,
                                 "metrics": ["accuracy"], "weighted_metrics": None, "run_eagerly": False,
                                 "steps_per_execution": 1, "jit_compile": False}}
    vars_of = {"conv2d": [k1], "conv2d_1": [k2, b2], "batch_normalization": [gamma, mean, var],
               "flatten": [], "dense": [kd1, bd1], "dense_1": [kd2, bd2]}
    write_keras3_zip(os.path.join(out, "keras3.keras"), config, vars_of)
    save_outputs(out, "keras3", x, logits)


def real_keras3(out, path):
    """Reference output of a Keras 3 Sequential CNN file (Conv2D valid relu, MaxPooling2D, Flatten,
    Dropout, Dense) from its own weights, for inputs in [0, 1)."""
    with zipfile.ZipFile(path) as z:
        config = json.loads(z.read("config.json"))
        f = h5py.File(io.BytesIO(z.read("model.weights.h5")), "r")
    shape = config["config"]["layers"][0]["config"]["batch_shape"][1:]
    x = np.random.default_rng(3).uniform(0, 1, [2] + shape)
    counts, h, logits = {}, x.astype(np.float64), None
    layers = [l for l in config["config"]["layers"] if l["class_name"] != "InputLayer"]
    for i, l in enumerate(layers):
        cls, c = l["class_name"], l["config"]
        base = {"Conv2D": "conv2d", "MaxPooling2D": "max_pooling2d", "Flatten": "flatten",
                "Dropout": "dropout", "Dense": "dense"}[cls]
        n = counts.get(base, 0)
        counts[base] = n + 1
        key = base if n == 0 else base + "_" + str(n)
        v = [f["layers/" + key + "/vars/" + str(j)][()].astype(np.float64)
             for j in range(len(f["layers/" + key + "/vars"]))]
        if cls == "Conv2D":
            assert c["padding"] == "valid" and c["strides"] == [1, 1]
            h = conv2d(h, v[0]) + v[1]
        elif cls == "MaxPooling2D":
            h = maxpool(h, c["pool_size"][0])
        elif cls == "Flatten":
            h = h.reshape(h.shape[0], -1)
        elif cls == "Dense":
            h = h @ v[0] + v[1]
        act = c.get("activation", "linear")
        if act == "softmax" and i == len(layers) - 1:
            logits = h
        elif act == "relu":
            h = relu(h)
    save_outputs(out, "real_keras3", x, logits)


def h5_chain_reference(out, path, stem):
    """Reference output of a tf.keras full-model .h5 whose layers form one chain (Conv2D,
    DepthwiseConv2D, BatchNormalization, Activation, AveragePooling2D, Flatten, Dropout, Dense) from the
    file's own weights (found through weight_names), for inputs in [0, 1)."""
    f = h5py.File(path, "r")
    layers = json.loads(f.attrs["model_config"])["config"]["layers"]
    shape = layers[0]["config"]["batch_input_shape"][1:]
    x = np.random.default_rng(5).uniform(0, 1, [2] + shape)
    h, logits = x.astype(np.float64), None
    for i, l in enumerate(layers[1:]):
        cls, c = l["class_name"], l["config"]
        g = f["model_weights"][c["name"]]
        names = [n.decode() if isinstance(n, bytes) else n for n in g.attrs["weight_names"]]
        v = [g[n][()].astype(np.float64) for n in names]
        if cls in ("Conv2D", "DepthwiseConv2D"):
            s = tuple(c["strides"])
            if cls == "Conv2D":
                h = conv2d(h, v[0], s, c["padding"])
            else:  # depthwise: one (kh, kw, 1, m) convolution per channel
                k = v[0]
                h = np.concatenate([conv2d(h[..., ch:ch + 1], k[:, :, ch:ch + 1, :], s, c["padding"])
                                    for ch in range(h.shape[3])], axis=3)
            if c["use_bias"]:
                h = h + v[1]
        elif cls == "BatchNormalization":
            gamma = v.pop(0) if c["scale"] else 1.0
            beta = v.pop(0) if c["center"] else 0.0
            h = (h - v[0]) / np.sqrt(v[1] + c["epsilon"]) * gamma + beta
        elif cls == "AveragePooling2D":
            p = c["pool_size"][0]
            assert c["strides"] == c["pool_size"] and c["padding"] == "valid"
            n, hh, ww, ch = h.shape
            h = h[:, :hh // p * p, :ww // p * p].reshape(n, hh // p, p, ww // p, p, ch).mean(axis=(2, 4))
        elif cls == "Flatten":
            h = h.reshape(h.shape[0], -1)
        elif cls == "Dense":
            h = h @ v[0] + v[1]
        elif cls not in ("Activation", "Dropout"):
            raise ValueError("no reference for " + cls)
        act = c.get("activation", "linear")
        if act == "softmax" and i == len(layers) - 2:
            logits = h
        elif act == "relu":
            h = relu(h)
        elif act != "linear" and act != "softmax":
            raise ValueError("no reference for activation " + act)
    save_outputs(out, stem, x, logits)


if __name__ == "__main__":
    out = sys.argv[1]
    tf2_full(out)
    keras1_th(out)
    keras3(out)
    graph(out)
    flatten_paths(out)
    if len(sys.argv) > 2:
        real_keras3(out, sys.argv[2])
    if len(sys.argv) > 3:
        h5_chain_reference(out, sys.argv[3], "real_mobilenet")
