#!/usr/bin/python3
"""Keras models whose layers meet more than one input size (issue 37, items 1 and 2), written with h5py in
tf.keras 2.4's model.save layout, and their outputs from a float64 NumPy forward pass written from Keras's
layer definitions (tests/keras/keras_shapes_test.cpp, tests/scripts/shapes_test.sh).

  keras_shape_fixtures.py OUT_DIR

Writes into OUT_DIR:
  shared.h5, shared.json   the functional API guide's shared layer (keras#5108): one Conv2D 's' called on a
                           12x12x3 input and on its 6x6x3 max-pooled copy, GlobalAveragePooling2D of each,
                           Add, Dense softmax; shared.json is the same architecture as Keras's to_json
  shared_same.h5           a Conv2D 'same' with strides 2 shared by a 12x12 input and its 11x11 crop (TensorFlow
                           pads (0, 1) and (1, 1): the padding follows each call's size)
  shared_channels.json     the same Conv2D called on the image (3 channels) and on a 1x1 Conv2D's 5
                           channels: must be refused naming both shapes
  fcn.h5                   a fully convolutional model with input (None, None, 3): Conv2D -> GAP -> Dense
  fcn_flatten.h5           input (None, None, 3): Conv2D -> Flatten -> Dense (needs a fixed size)
  <stem>.input.npy, <stem>.expected.npy, <stem>.expected_logits.npy for shared, shared_same, fcn16 (16x16 input of fcn)
  and fcn12x20 (12x20 input of fcn); float32, NHWC.
"""
import json
import os
import sys

import h5py
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from keras_fixtures import conv2d, maxpool, relu, save_outputs, write_layer_groups  # noqa: E402

rng = np.random.default_rng(37)
CONV = dict(strides=[1, 1], padding="valid", data_format="channels_last", dilation_rate=[1, 1], groups=1,
            use_bias=True, kernel_initializer={"class_name": "GlorotUniform", "config": {"seed": None}},
            bias_initializer={"class_name": "Zeros", "config": {}})


def node(*sources):
    """One tf.keras 2.x inbound node: [[layer, node_index, tensor_index, kwargs], ...]."""
    return [[name, index, 0, {}] for name, index in sources]


def functional(name, specs, output):
    """tf.keras 2.4 Functional config from (class, name, config, inbound nodes)."""
    layers = [{"class_name": cls, "name": n, "inbound_nodes": nodes,
               "config": dict(c, name=n) if cls == "InputLayer" else dict(c, name=n, trainable=True)}
              for cls, n, c, nodes in specs]
    return {"class_name": "Functional", "keras_version": "2.4.0", "backend": "tensorflow",
            "config": {"name": name, "layers": layers, "input_layers": [["img", 0, 0]],
                       "output_layers": [[output, 0, 0]]}}


def save_h5(path, config, weights):
    with h5py.File(path, "w") as f:
        f.attrs["model_config"] = json.dumps(config)
        f.attrs["keras_version"] = "2.4.0"
        f.attrs["backend"] = "tensorflow"
        write_layer_groups(f.create_group("model_weights"), config["config"]["layers"], weights)


def input_layer(h, w):
    return ("InputLayer", "img", dict(batch_input_shape=[None, h, w, 3], dtype="float32", sparse=False,
                                      ragged=False), [])


def gap(x):
    return x.mean(axis=(1, 2))


def shared(out):
    k = lambda *shape: rng.normal(0, 0.5, shape)
    w = {"s": [("kernel", k(3, 3, 3, 4)), ("bias", k(4))], "out": [("kernel", k(4, 3)), ("bias", k(3))]}
    specs = [input_layer(12, 12),
             ("MaxPooling2D", "pool", dict(pool_size=[2, 2], strides=[2, 2], padding="valid",
                                           data_format="channels_last"), [node(("img", 0))]),
             ("Conv2D", "s", dict(CONV, filters=4, kernel_size=[3, 3], activation="relu"),
              [node(("img", 0)), node(("pool", 0))]),
             ("GlobalAveragePooling2D", "gap_a", dict(data_format="channels_last"), [node(("s", 0))]),
             ("GlobalAveragePooling2D", "gap_b", dict(data_format="channels_last"), [node(("s", 1))]),
             ("Add", "add", {}, [node(("gap_a", 0), ("gap_b", 0))]),
             ("Dense", "out", dict(units=3, activation="softmax", use_bias=True), [node(("add", 0))])]
    config = functional("shared", specs, "out")
    save_h5(os.path.join(out, "shared.h5"), config, w)
    with open(os.path.join(out, "shared.json"), "w") as f:
        json.dump(config, f)
    v = {n: [a for _, a in ws] for n, ws in w.items()}
    x = rng.uniform(0, 1, (3, 12, 12, 3))
    s = lambda t: relu(conv2d(t, v["s"][0]) + v["s"][1])
    logits = (gap(s(x)) + gap(s(maxpool(x)))) @ v["out"][0] + v["out"][1]
    save_outputs(out, "shared", x, logits)
    # The shared Conv2D on 3 and on 5 channels: its kernel fits only one of them.
    specs = [input_layer(12, 12),
             ("Conv2D", "wide", dict(CONV, filters=5, kernel_size=[1, 1], activation="linear"), [node(("img", 0))]),
             ("Conv2D", "s", dict(CONV, filters=4, kernel_size=[3, 3], activation="relu"),
              [node(("img", 0)), node(("wide", 0))]),
             ("GlobalAveragePooling2D", "gap_a", dict(data_format="channels_last"), [node(("s", 0))]),
             ("GlobalAveragePooling2D", "gap_b", dict(data_format="channels_last"), [node(("s", 1))]),
             ("Add", "add", {}, [node(("gap_a", 0), ("gap_b", 0))]),
             ("Dense", "out", dict(units=3, activation="softmax", use_bias=True), [node(("add", 0))])]
    with open(os.path.join(out, "shared_channels.json"), "w") as f:
        json.dump(functional("shared_channels", specs, "out"), f)


def shared_same(out):
    k = lambda *shape: rng.normal(0, 0.5, shape)
    w = {"ss": [("kernel", k(3, 3, 3, 4)), ("bias", k(4))], "out": [("kernel", k(4, 3)), ("bias", k(3))]}
    conv = dict(CONV, filters=4, kernel_size=[3, 3], strides=[2, 2], padding="same", activation="relu")
    specs = [input_layer(12, 12),
             ("Cropping2D", "crop", dict(cropping=[[1, 0], [1, 0]], data_format="channels_last"), [node(("img", 0))]),
             ("Conv2D", "ss", conv, [node(("img", 0)), node(("crop", 0))]),
             ("GlobalAveragePooling2D", "gap_a", dict(data_format="channels_last"), [node(("ss", 0))]),
             ("GlobalAveragePooling2D", "gap_b", dict(data_format="channels_last"), [node(("ss", 1))]),
             ("Add", "add", {}, [node(("gap_a", 0), ("gap_b", 0))]),
             ("Dense", "out", dict(units=3, activation="softmax", use_bias=True), [node(("add", 0))])]
    save_h5(os.path.join(out, "shared_same.h5"), functional("shared_same", specs, "out"), w)
    v = {n: [a for _, a in ws] for n, ws in w.items()}
    x = rng.uniform(0, 1, (2, 12, 12, 3))
    s = lambda t: relu(conv2d(t, v["ss"][0], (2, 2), "same") + v["ss"][1])
    logits = (gap(s(x)) + gap(s(x[:, 1:, 1:, :]))) @ v["out"][0] + v["out"][1]
    save_outputs(out, "shared_same", x, logits)


def fcn(out):
    k = lambda *shape: rng.normal(0, 0.5, shape)
    w = {"conv": [("kernel", k(3, 3, 3, 4)), ("bias", k(4))], "out": [("kernel", k(4, 3)), ("bias", k(3))]}
    specs = [input_layer(None, None),
             ("Conv2D", "conv", dict(CONV, filters=4, kernel_size=[3, 3], activation="relu"), [node(("img", 0))]),
             ("GlobalAveragePooling2D", "gap", dict(data_format="channels_last"), [node(("conv", 0))]),
             ("Dense", "out", dict(units=3, activation="softmax", use_bias=True), [node(("gap", 0))])]
    save_h5(os.path.join(out, "fcn.h5"), functional("fcn", specs, "out"), w)
    v = {n: [a for _, a in ws] for n, ws in w.items()}
    forward = lambda t: gap(relu(conv2d(t, v["conv"][0]) + v["conv"][1])) @ v["out"][0] + v["out"][1]
    for stem, (h, wd) in (("fcn16", (16, 16)), ("fcn12x20", (12, 20))):
        x = rng.uniform(0, 1, (2, h, wd, 3))
        save_outputs(out, stem, x, forward(x))
    w = {"conv": w["conv"], "out": [("kernel", k(4 * 14 * 14, 3)), ("bias", k(3))]}
    specs = [specs[0], specs[1], ("Flatten", "flat", dict(data_format="channels_last"), [node(("conv", 0))]),
             ("Dense", "out", dict(units=3, activation="softmax", use_bias=True), [node(("flat", 0))])]
    save_h5(os.path.join(out, "fcn_flatten.h5"), functional("fcn_flatten", specs, "out"), w)


if __name__ == "__main__":
    shared(sys.argv[1])
    shared_same(sys.argv[1])
    fcn(sys.argv[1])
