#!/usr/bin/python3
"""An independent reader of Keras 3 files (Python's zipfile and json, h5py) for tests/keras/keras_save_test.cpp:
what Keras's own loader (keras/src/saving/saving_lib.py) reads, evaluated in float64 NumPy with the layer
definitions of tests/layers/reference/keras_layers_reference.py (written from TensorFlow's and Keras's
source, not from torchfit's code).

Usage:
  keras3_file_reference.py predict MODEL.keras REQUEST.json RESULT.json
      REQUEST {"inputs": [{"shape": [N, H, W, C], "data": [...]}, ...]} (Keras's channels-last order);
      RESULT {"outputs": [{"shape", "data"}, ...]}: the model of config.json with the weights of
      model.weights.h5, as Keras 3's Functional / Sequential call runs it in inference. MODEL may also be
      a tf.keras 2 HDF5 model (.h5: model_config, model_weights/<layer>/<weight_names>).
  keras3_file_reference.py structure A B RESULT.json
      RESULT {"config": [...], "weights": [...], "values": max |a - b|}: every difference between two
      .keras files' config.json (keys missing or extra, values that differ; shared_object_id ignored) and
      their model.weights.h5 (groups, attributes, dataset shapes and dtypes; "optimizer" groups ignored).
  keras3_file_reference.py compile A.keras B.keras RESULT.json
      RESULT {"config": [...]}: the differences between the two files' compile_config.
  keras3_file_reference.py h5structure A.h5 B.h5 RESULT.json
      The same for two tf.keras 2 HDF5 models (model.save("x.h5")): root attributes, model_config, and the
      model_weights groups, attributes (layer_names, weight_names), dataset shapes and dtypes.
  keras3_file_reference.py optimizer RULE A B RESULT.json
      A: a Keras-written model (.keras or tf.keras 2 .h5) with its optimizer's variables; B: the same
      architecture written after ONE update of RULE (adam | sgd, momentum) starting from A's weights. RESULT
      {"structure": [...] (differences of the optimizer groups: names, shapes, dtypes, attributes),
      "iterations", "learning_rate", "weights": n, "moment_err", "sign_agree", "momentum_err"}: Adam's first
      update leaves m = (1-b1) g and v = (1-b2) g^2 (so m^2 (1-b2) = v (1-b1)^2) and moves each weight by
      -lr g/(|g|+eps) (sign(dw) = -sign(m)); SGD's first Keras update is m = -lr g, dw = m.
  keras3_file_reference.py weights MODEL.weights.h5 RESULT.json
      RESULT {"paths": {path: [shape, dtype]}, "names": {vars group: name attribute}}.

Keras 3's rules used here: the weights of a layer are layers/<key>/vars/<i> (<key> the snake_case class
name, _1, _2, ... per class in model.layers order; a Sequential's layers omit its InputLayer; a recurrent
layer's under cell/vars), a Functional's inbound_nodes are {"args": [...], "kwargs": {}} with
__keras_tensor__ entries whose keras_history is [layer, node, tensor].
"""
import io
import json
import os
import re
import sys
import zipfile

import h5py
import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "layers", "reference"))
import keras_layers_reference as K  # noqa: E402


def snake(name):  # keras/src/utils/naming.py to_snake_case
    name = re.sub(r"\W+", "", name)
    name = re.sub("(.)([A-Z][a-z]+)", r"\1_\2", name)
    name = re.sub("([a-z])([A-Z])", r"\1_\2", name).lower()
    return name


def read_keras(path):
    z = zipfile.ZipFile(path)
    config = json.loads(z.read("config.json"))
    h5 = h5py.File(io.BytesIO(z.read("model.weights.h5")), "r")
    return config, h5


def layer_weights(h5, config):
    """{layer name: [arrays in vars order]} by Keras 3's keys."""
    layers = config["config"]["layers"]
    sequential = config["class_name"] == "Sequential"
    used, out = {}, {}
    for spec in layers:
        if sequential and spec["class_name"] == "InputLayer":
            continue
        base = snake(spec["class_name"])
        n = used.get(base, 0)
        used[base] = n + 1
        key = base if n == 0 else f"{base}_{n}"
        out[spec["config"]["name"]] = group_vars(h5["layers"][key])
    return out


def group_vars(group):
    """A layer's variables in Keras 3's .weights.h5, in its weights' order: its vars; a recurrent layer's
    cell/vars; a wrapper's layers' under their attribute names (Bidirectional's forward_layer then
    backward_layer, TimeDistributed's layer: keras/src/saving/saving_lib.py saves each attribute's object)."""
    vars_ = group["vars"]
    if len(vars_) == 0 and "cell" in group:
        vars_ = group["cell"]["vars"]
    if len(vars_) == 0:
        inner = [k for k in ("forward_layer", "backward_layer", "layer") if k in group]
        if inner:
            return [v for k in inner for v in group_vars(group[k])]
    return [np.array(vars_[str(i)], dtype=np.float64) for i in range(len(vars_))]


def recurrent(cls, c, x, w):
    """SimpleRNN, LSTM, GRU as keras_layers_reference.py's cells compute them (Keras 3's cells)."""
    u = c["units"]
    bias = w[2] if c.get("use_bias", True) else None
    flags = (c.get("return_sequences", False), c.get("go_backwards", False))
    if cls == "SimpleRNN":
        return K.simple_rnn(x, w[0], w[1], np.zeros(u) if bias is None else bias, c.get("activation", "tanh"),
                            *flags)
    act, gate = c.get("activation", "tanh"), c.get("recurrent_activation", "sigmoid")
    if cls == "LSTM":
        return K.lstm(x, w[0], w[1], bias, act, gate, *flags)
    return K.gru(x, w[0], w[1], bias, act, gate, c.get("reset_after", True), *flags)


def wrapper(cls, c, x, w):
    """Keras 3's Bidirectional.call (the backward layer's sequence flipped back in time, then merged) and
    TimeDistributed.call (the layer on each step x[:, i], stacked on axis 1)."""
    if cls == "TimeDistributed":
        inner = c["layer"]
        return np.stack([call(inner["class_name"], inner["config"], [x[:, i]], w) for i in range(x.shape[1])], 1)
    f = c["layer"]
    b = c.get("backward_layer") or {"class_name": f["class_name"],
                                    "config": dict(f["config"], go_backwards=not f["config"].get("go_backwards"))}
    half = len(w) // 2
    y = call(f["class_name"], f["config"], [x], w[:half])
    y_rev = call(b["class_name"], b["config"], [x], w[half:])
    if f["config"].get("return_sequences", False):
        y_rev = y_rev[:, ::-1]
    mode = c.get("merge_mode", "concat")
    if mode == "concat":
        return np.concatenate([y, y_rev], axis=-1)
    return {"sum": y + y_rev, "mul": y * y_rev, "ave": (y + y_rev) / 2}[mode]


def activation(x, name):
    if name in (None, "linear"):
        return x
    if name == "relu":
        return np.maximum(x, 0)
    if name == "sigmoid":
        return 1 / (1 + np.exp(-x))
    if name == "tanh":
        return np.tanh(x)
    if name == "softmax":
        e = np.exp(x - x.max(axis=-1, keepdims=True))
        return e / e.sum(axis=-1, keepdims=True)
    if name == "elu":
        return np.where(x > 0, x, np.exp(x) - 1)
    if name == "gelu":  # Keras 3 gelu(approximate=False): x * (1 + erf(x / sqrt(2))) / 2
        from math import erf, sqrt
        return x * (1 + np.vectorize(erf)(x / sqrt(2))) / 2
    if name in ("swish", "silu"):
        return x / (1 + np.exp(-x))
    raise SystemExit("unknown activation " + str(name))


def conv_like(cls, c, x, w):
    s, d, p = c["strides"], c.get("dilation_rate", [1, 1]), c["padding"]
    if cls == "Conv2D":
        y = K.conv2d(x, w[0], s, d, p)
    elif cls == "DepthwiseConv2D":
        y = K.depthwise(x, w[0], s, d, p)
    elif cls == "SeparableConv2D":
        y = K.conv2d(K.depthwise(x, w[0], s, d, p), w[1], [1, 1], [1, 1], "valid")
        w = [w[0]] + w[2:]
    else:  # Conv2DTranspose
        y = K.conv2d_transpose(x, w[0], s, d, p, c.get("output_padding"))
    if c.get("use_bias", True):
        y = y + w[-1]
    return activation(y, c.get("activation"))


def batch_norm(c, x, w):
    i = 0
    gamma = beta = None
    if c.get("scale", True):
        gamma, i = w[i], i + 1
    if c.get("center", True):
        beta, i = w[i], i + 1
    mean, var = w[i], w[i + 1]
    y = (x - mean) / np.sqrt(var + c.get("epsilon", 1e-3))
    if gamma is not None:
        y = y * gamma
    return y + beta if beta is not None else y


def call(cls, c, xs, w):
    x = xs[0]
    if cls in ("Conv2D", "DepthwiseConv2D", "SeparableConv2D", "Conv2DTranspose"):
        return conv_like(cls, c, x, w)
    if cls == "Dense":
        y = np.matmul(x, w[0]) + (w[1] if c.get("use_bias", True) else 0)
        return activation(y, c.get("activation"))
    if cls in ("MaxPooling2D", "AveragePooling2D"):
        return K.pool(x, c["pool_size"], c["strides"] or c["pool_size"], c["padding"], cls[:3].lower())
    if cls in ("GlobalAveragePooling2D", "GlobalMaxPooling2D"):
        fn = np.mean if "Average" in cls else np.max
        return fn(x, axis=(1, 2), keepdims=c.get("keepdims", False))
    if cls == "Flatten":
        return x.reshape(x.shape[0], -1)
    if cls in ("Dropout", "SpatialDropout2D", "GaussianNoise", "GaussianDropout"):
        return x
    if cls == "BatchNormalization":
        return batch_norm(c, x, w)
    if cls == "Activation":
        return activation(x, c["activation"])
    if cls == "ReLU":
        return K.relu(x, c.get("max_value"), c.get("negative_slope", 0.0), c.get("threshold", 0.0))
    if cls == "LeakyReLU":
        return np.where(x >= 0, x, x * c.get("negative_slope", 0.3))
    if cls == "Softmax":
        return activation(x, "softmax")
    if cls == "Add":
        return sum(xs)
    if cls == "Multiply":
        return np.prod(xs, axis=0)
    if cls == "Subtract":
        return xs[0] - xs[1]
    if cls == "Average":
        return np.mean(xs, axis=0)
    if cls == "Maximum":
        return np.max(xs, axis=0)
    if cls == "Minimum":
        return np.min(xs, axis=0)
    if cls == "Cropping2D":
        (t, b), (l, r) = c["cropping"]
        return x[:, t:x.shape[1] - b, l:x.shape[2] - r, :]
    if cls == "Concatenate":
        return np.concatenate(xs, axis=c.get("axis", -1))
    if cls == "ZeroPadding2D":
        (t, b), (l, r) = c["padding"]
        return np.pad(x, ((0, 0), (t, b), (l, r), (0, 0)))
    if cls == "UpSampling2D":
        return K.upsample(x, c["size"], c.get("interpolation", "nearest"))
    if cls == "Rescaling":
        return x * c["scale"] + c.get("offset", 0.0)
    if cls == "Reshape":
        return x.reshape(x.shape[0], *c["target_shape"])
    if cls in ("SimpleRNN", "LSTM", "GRU"):
        return recurrent(cls, c, x, w)
    if cls in ("Bidirectional", "TimeDistributed"):
        return wrapper(cls, c, x, w)
    raise SystemExit("the reference has no " + cls)


def h5_model(path):
    """tf.keras 2's HDF5 model: model_config, and per layer of layer_names its weight_names' datasets."""
    h5 = h5py.File(path, "r")
    config = json.loads(h5.attrs["model_config"])
    mw = h5["model_weights"]
    weights = {}
    for layer in mw.attrs["layer_names"]:
        layer = layer.decode()
        names = [n.decode() for n in mw[layer].attrs["weight_names"]]
        weights[layer] = [np.array(mw[layer][n], dtype=np.float64) for n in names]
    return config, weights


def node_refs(node):
    """The tensors a node reads: Keras 3's {"args": [...]} or tf.keras 2's [[layer, node, tensor, {}], ...]."""
    if isinstance(node, dict):
        return tensor_refs(node["args"])
    return [tuple(r[:3]) for r in node]


def tensor_refs(arg):
    if isinstance(arg, dict) and arg.get("class_name") == "__keras_tensor__":
        return [tuple(arg["config"]["keras_history"])]
    if isinstance(arg, list):
        return [r for a in arg for r in tensor_refs(a)]
    return []


def predict(path, inputs):
    if path.endswith(".h5"):
        config, weights = h5_model(path)
    else:
        config, h5 = read_keras(path)
        weights = layer_weights(h5, config)
    layers = config["config"]["layers"]
    if config["class_name"] == "Sequential":
        x = inputs[0]
        for spec in layers:
            if spec["class_name"] != "InputLayer":
                x = call(spec["class_name"], spec["config"], [x], weights[spec["config"]["name"]])
        return [x]
    values = {}
    given = [r[0] for r in config["config"]["input_layers"]]
    for name, x in zip(given, inputs):
        values[(name, 0, 0)] = x
    pending = [s for s in layers if s["class_name"] != "InputLayer"]
    while pending:  # each node once its inputs exist (Keras's functional deserialization order)
        progress = False
        for spec in list(pending):
            for n, node in enumerate(spec["inbound_nodes"]):
                refs = node_refs(node)
                if all(tuple(r) in values for r in refs) and (spec["name"], n, 0) not in values:
                    xs = [values[tuple(r)] for r in refs]
                    values[(spec["name"], n, 0)] = call(spec["class_name"], spec["config"], xs, weights[spec["name"]])
                    progress = True
            if all((spec["name"], n, 0) in values for n in range(len(spec["inbound_nodes"]))):
                pending.remove(spec)
        if not progress:
            raise SystemExit("cannot evaluate: " + ", ".join(s["name"] for s in pending))
    return [values[tuple(r)] for r in config["config"]["output_layers"]]


def diff_json(a, b, path, out):
    if isinstance(a, dict) and isinstance(b, dict):
        for k in sorted(set(a) | set(b)):
            if k == "shared_object_id":
                continue
            if k not in b:
                out.append("missing " + path + "/" + k)
            elif k not in a:
                out.append("extra " + path + "/" + k)
            else:
                diff_json(a[k], b[k], path + "/" + k, out)
    elif isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        for i, (x, y) in enumerate(zip(a, b)):
            diff_json(x, y, f"{path}[{i}]", out)
    elif a != b and not (isinstance(a, float) and isinstance(b, float) and abs(a - b) <= 1e-7 * max(1, abs(a))):
        out.append("differs " + path + ": " + json.dumps(a) + " vs " + json.dumps(b))


def h5_items(h5):
    items = {}

    def visit(name, obj):
        if name.startswith("optimizer"):
            return
        attrs = {k: (v.decode() if isinstance(v, bytes) else str(v)) for k, v in obj.attrs.items()}
        shape = list(obj.shape) if isinstance(obj, h5py.Dataset) else None
        dtype = str(obj.dtype) if isinstance(obj, h5py.Dataset) else None
        items[name] = {"attrs": attrs, "shape": shape, "dtype": dtype}

    h5.visititems(visit)
    items["/"] = {"attrs": {k: str(v) for k, v in h5.attrs.items()}, "shape": None, "dtype": None}
    return items


def compare_items(ga, gb):
    """Differences between two HDF5 groups' trees (h5_items) and the largest |a - b| of their datasets."""
    ia, ib = h5_items(ga), h5_items(gb)
    out = []
    for k in sorted(set(ia) | set(ib)):
        if k not in ib:
            out.append("missing " + k)
        elif k not in ia:
            out.append("extra " + k)
        elif ia[k] != ib[k]:
            out.append("differs " + k + ": " + json.dumps(ia[k]) + " vs " + json.dumps(ib[k]))
    biggest = 0.0
    for k, v in ia.items():
        if v["shape"] is not None and k in ib and ib[k]["shape"] == v["shape"]:
            d = np.abs(np.array(ga[k], np.float64) - np.array(gb[k], np.float64))
            biggest = max(biggest, float(np.max(d, initial=0.0)))
    return out, biggest


def structure(a, b):
    (ca, ha), (cb, hb) = read_keras(a), read_keras(b)
    ca.pop("compile_config", None)
    cb.pop("compile_config", None)
    config = []
    diff_json(ca, cb, "", config)
    weights, biggest = compare_items(ha, hb)
    names = [i.filename for i in zipfile.ZipFile(b).infolist()]
    stored = all(i.compress_type == zipfile.ZIP_STORED for i in zipfile.ZipFile(b).infolist())
    return {"config": config, "weights": weights, "values": biggest, "entries": names, "stored": stored}


def compile_structure(a, b):
    """Differences between two .keras files' compile_config, and tf.keras's training_config of an .h5."""
    ca, cb = read_keras(a)[0].get("compile_config"), read_keras(b)[0].get("compile_config")
    out = []
    diff_json(ca, cb, "", out)
    return {"config": out}


def h5_structure(a, b):
    """Differences between two tf.keras 2 HDF5 models: root attributes, model_config, model_weights."""
    ha, hb = h5py.File(a, "r"), h5py.File(b, "r")
    root = sorted(set(ha.attrs) ^ set(hb.attrs))
    config = []
    diff_json(json.loads(ha.attrs["model_config"]), json.loads(hb.attrs["model_config"]), "", config)
    weights, biggest = compare_items(ha["model_weights"], hb["model_weights"])
    kinds = {k: type(v).__name__ for k, v in hb.attrs.items()}
    return {"root": root, "config": config, "weights": weights, "values": biggest, "root_types": kinds}


def group_items(group):
    items = {}

    def visit(name, obj):
        attrs = {k: (v.decode() if isinstance(v, bytes) else str(v)) for k, v in obj.attrs.items()}
        if isinstance(obj, h5py.Dataset):
            items[name] = {"attrs": attrs, "shape": list(obj.shape), "dtype": str(obj.dtype)}
        else:
            items[name] = {"attrs": attrs}

    group.visititems(visit)
    items["."] = {"attrs": {k: (v.decode() if isinstance(v, bytes) else str(v)) for k, v in group.attrs.items()}}
    return items


def keras3_trainable(config, h5):
    """Keras 3's model.trainable_variables: each layer's vars in order (BatchNormalization: gamma, beta only)."""
    out = []
    for layer, ws in zip(config["config"]["layers"], layer_weights(h5, config).values()):
        c = layer["config"]
        if layer["class_name"] == "BatchNormalization":
            ws = ws[: int(c.get("scale", True)) + int(c.get("center", True))]
        out.extend(np.array(w, np.float64) for w in ws)
    return out


def optimizer_slots(path):
    """(iterations, learning rate or None, [(weight, [slots])], optimizer group) of a .keras or .h5 file."""
    if path.endswith(".h5"):
        h5 = h5py.File(path, "r")
        g = h5["optimizer_weights"]
        names = [n.decode() if isinstance(n, bytes) else n for n in g.attrs["weight_names"]]
        weights, slots = {}, {}
        for n in names[1:]:
            base, slot = n[: n.rindex("/")], n[n.rindex("/") + 1:]
            layer = base[base.index("/") + 1:].split("/")[0]
            weight = h5["model_weights"][layer][base[base.index("/") + 1:] + ":0"]
            weights.setdefault(base, np.array(weight, np.float64))
            slots.setdefault(base, []).append(np.array(g[n], np.float64))
        return int(np.array(g[names[0]])), None, [(weights[k], slots[k]) for k in weights], g
    config, h5 = read_keras(path)
    g = h5["optimizer/vars"]
    values = [np.array(g[str(i)], np.float64) for i in range(len(g.keys()))]
    weights = keras3_trainable(config, h5)
    per = (len(values) - 2) // max(1, len(weights))
    pairs = [(w, values[2 + i * per: 2 + (i + 1) * per]) for i, w in enumerate(weights)]
    return int(values[0]), float(values[1]), pairs, g


def optimizer_check(rule, a, b):
    ia, _, before, ga = optimizer_slots(a)
    it, lr, after, gb = optimizer_slots(b)
    sa, sb = group_items(ga), group_items(gb)
    structure = []
    for k in sorted(set(sa) | set(sb)):
        if k not in sb:
            structure.append("missing " + k)
        elif k not in sa:
            structure.append("extra " + k)
        elif sa[k] != sb[k]:
            structure.append("differs " + k + ": " + json.dumps(sa[k]) + " vs " + json.dumps(sb[k]))
    out = {"structure": structure, "iterations": it, "learning_rate": lr, "weights": len(after)}
    moment_err, agree, count, momentum_err = 0.0, 0, 0, 0.0
    for (w0, _), (w1, slots) in zip(before, after):
        dw = w1 - w0
        if rule == "adam":
            m, v = slots[0], slots[1]
            moment_err = max(moment_err, float(np.max(np.abs(m * m * 0.001 / 0.01 - v), initial=0) / max(np.max(v), 1e-30)))
            big = np.abs(m) > 1e-3 * np.max(np.abs(m), initial=0)
            agree += int(np.sum(np.sign(dw[big]) == -np.sign(m[big])))
            count += int(np.sum(big))
        else:
            momentum_err = max(momentum_err, float(np.max(np.abs(dw - slots[0]), initial=0)))
    out.update({"moment_err": moment_err, "sign_agree": agree / max(count, 1), "momentum_err": momentum_err})
    return out


def weights_file(path):
    h5 = h5py.File(path, "r")
    paths, names = {}, {}

    def visit(name, obj):
        if isinstance(obj, h5py.Dataset):
            paths[name] = [list(obj.shape), str(obj.dtype)]
        elif "name" in obj.attrs:
            names[name] = obj.attrs["name"]

    h5.visititems(visit)
    return {"paths": paths, "names": names}


def main():
    mode = sys.argv[1]
    if mode == "predict":
        req = json.load(open(sys.argv[3]))
        xs = [np.array(t["data"], np.float64).reshape(t["shape"]) for t in req["inputs"]]
        ys = predict(sys.argv[2], xs)
        out = {"outputs": [{"shape": list(y.shape), "data": y.ravel().tolist()} for y in ys]}
        json.dump(out, open(sys.argv[4], "w"))
    elif mode == "structure":
        json.dump(structure(sys.argv[2], sys.argv[3]), open(sys.argv[4], "w"))
    elif mode == "compile":
        json.dump(compile_structure(sys.argv[2], sys.argv[3]), open(sys.argv[4], "w"))
    elif mode == "h5structure":
        json.dump(h5_structure(sys.argv[2], sys.argv[3]), open(sys.argv[4], "w"))
    elif mode == "optimizer":
        json.dump(optimizer_check(sys.argv[2], sys.argv[3], sys.argv[4]), open(sys.argv[5], "w"))
    elif mode == "weights":
        json.dump(weights_file(sys.argv[2]), open(sys.argv[3], "w"))
    else:
        raise SystemExit(__doc__)


if __name__ == "__main__":
    main()
