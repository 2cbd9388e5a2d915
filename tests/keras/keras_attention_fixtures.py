#!/usr/bin/python3
"""Keras models of the attention layers, written with h5py in tf.keras 2's model.save layout and as Keras 3
.keras zips, and their outputs from the float64 NumPy forward pass of
tests/layers/reference/keras_attention_reference.py (written from Keras 3's source), for
tests/keras/keras_attention_test.cpp.

  keras_attention_fixtures.py OUT_DIR

Writes <stem>.h5, <stem>.keras, <stem>.input.npy, <stem>.expected.npy for:
  mha        a (5, 4) sequence: MultiHeadAttention(2 heads, key_dim 3) as self-attention mha(x, x,
             use_causal_mask=True) (biases), then a cross attention mha2(query=x, value=v, key=k) of two
             Dense branches (value_dim 2, output_shape 6, no biases), GlobalAveragePooling1D, Dense softmax.
             tf.keras 2's node [[x, 0, 0, {"value": [x, 0, 0], "use_causal_mask": true}]] and weight names
             mha/query/kernel:0 …; Keras 3's node {"args": [x], "kwargs": {"value": x, …}} and the weights in
             layers/multi_head_attention/query_dense/vars/0 … (Keras 3 saves the sublayers' variables).
  gqa        (Keras 3 only: .keras) a (5, 4) sequence: GroupQueryAttention(head_dim 3, 4 query heads on 2 key/value
             heads) as self-attention gqa(x, value=x, use_causal_mask=True) (biases), then gqa2(query=h, value=v,
             key=k) (head_dim 2, 3 query heads on 1: multi-query, no biases) with two Dense branches,
             GlobalAveragePooling1D, Dense softmax. Keras 3 writes the class as "GroupQueryAttention" (its export
             name) but keys its weights by its Python class GroupedQueryAttention: layers/grouped_query_attention/
             _query_dense/vars/0 …, _key_dense, _value_dense, _output_dense (private attributes; no public
             properties), with the empty _dropout_layer and _softmax groups; build_config's shapes_dict.
  dense_attention  a (5, 4) sequence: Attention(use_scale, concat, causal)([x, x]), Attention()([x, d]),
             AdditiveAttention()([x, d, k]), Concatenate, GlobalAveragePooling1D, Dense softmax.
"""
import io
import json
import os
import sys
import zipfile

import h5py
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "layers", "reference"))
from keras_attention_reference import run_attention  # noqa: E402
from keras_fixtures import save_outputs, snake_case, write_keras3_zip, write_layer_groups  # noqa: E402

rng = np.random.default_rng(7)
GLOROT, ZEROS = {"class_name": "GlorotUniform", "config": {"seed": None}}, {"class_name": "Zeros", "config": {}}
DTYPE = {"module": "keras", "class_name": "DTypePolicy", "config": {"name": "float32"}, "registered_name": None}
MHA_COMMON = dict(dropout=0.0, attention_axes=[1], kernel_initializer=GLOROT, bias_initializer=ZEROS,
                  kernel_regularizer=None, bias_regularizer=None, activity_regularizer=None, kernel_constraint=None,
                  bias_constraint=None)
GQA_COMMON = dict(kernel_initializer=GLOROT, bias_initializer=ZEROS, kernel_regularizer=None, bias_regularizer=None,
                  activity_regularizer=None, kernel_constraint=None, bias_constraint=None)
DENSE = dict(activation="linear", use_bias=True, kernel_initializer=GLOROT, bias_initializer=ZEROS,
             kernel_regularizer=None, bias_regularizer=None, activity_regularizer=None, kernel_constraint=None,
             bias_constraint=None)


def tf2_ref(name):
    return [name, 0, 0]


def keras3_ref(name):
    return {"class_name": "__keras_tensor__", "config": {"shape": None, "dtype": "float32",
                                                          "keras_history": [name, 0, 0]}}


def tf2_node(ins, kwargs):
    """tf.keras 2's node: the positional inputs [layer, 0, 0, kwargs], the kwargs' tensors as [layer, 0, 0]."""
    kw = {k: tf2_ref(v[1:]) if isinstance(v, str) and v.startswith("@") else v for k, v in kwargs.items()}
    return [[i, 0, 0, kw] for i in ins]


def keras3_node(ins, kwargs, list_call):
    kw = {k: keras3_ref(v[1:]) if isinstance(v, str) and v.startswith("@") else v for k, v in kwargs.items()}
    args = [[keras3_ref(i) for i in ins]] if list_call else [keras3_ref(i) for i in ins]
    return {"args": args, "kwargs": kw}


def write_tf2(out, stem, specs, w):
    layers = []
    for cls, name, c, ins, kwargs, _ in specs:
        config = dict(c, name=name, trainable=True) if cls != "InputLayer" else dict(c, name=name)
        layers.append({"class_name": cls, "config": config, "name": name,
                       "inbound_nodes": [tf2_node(ins, kwargs)] if ins else []})
    config = {"class_name": "Functional", "config": {"name": stem, "layers": layers, "input_layers": [["x", 0, 0]],
                                                     "output_layers": [["dense", 0, 0]]},
              "keras_version": "2.11.0", "backend": "tensorflow"}
    with h5py.File(os.path.join(out, stem + ".h5"), "w") as f:
        f.attrs["model_config"] = json.dumps(config)
        f.attrs["keras_version"] = "2.11.0"
        f.attrs["backend"] = "tensorflow"
        write_layer_groups(f.create_group("model_weights"), layers, w)


# The sublayers holding a layer's variables in Keras 3 (attribute, weight prefix), and the Python class names
# that key model.weights.h5 where they differ from the exported class name.
CHILDREN = {"MultiHeadAttention": (("query_dense", "query"), ("key_dense", "key"), ("value_dense", "value"),
                                   ("output_dense", "attention_output")),
            "GroupQueryAttention": (("_query_dense", "query"), ("_key_dense", "key"), ("_value_dense", "value"),
                                    ("_output_dense", "attention_output"))}
PYTHON_CLASS = {"GroupQueryAttention": "GroupedQueryAttention"}


def write_keras3(out, stem, specs, w, build_shapes=None):
    layers, vars_of, children, seen = [], {}, {}, {}
    for cls, name, c, ins, kwargs, list_call in specs:
        if cls == "InputLayer":
            c = {"batch_shape": c["batch_input_shape"], "dtype": "float32", "sparse": False, "name": name}
        else:
            c = dict(c, name=name, dtype=DTYPE, trainable=True)
        if cls in CHILDREN:
            c.update(use_gate=False, sliding_window=None, seed=None)
        layers.append({"module": "keras.layers", "class_name": cls, "config": c, "registered_name": None,
                       "name": name, "inbound_nodes": [keras3_node(ins, kwargs, list_call)] if ins else []})
        if build_shapes and name in build_shapes:
            layers[-1]["build_config"] = {"shapes_dict": build_shapes[name]}
        if cls == "InputLayer":
            continue
        base = snake_case(PYTHON_CLASS.get(cls, cls))
        key = base if base not in seen else base + "_" + str(seen[base])
        seen[base] = seen.get(base, 0) + 1
        if cls in CHILDREN:  # Keras 3: the variables are the EinsumDense sublayers'
            vars_of[key] = []
            for attr, prefix in CHILDREN[cls]:
                children[key + "/" + attr] = [v for n, v in w.get(name, []) if n.startswith(prefix + "/")]
        else:
            vars_of[key] = [v for _, v in w.get(name, [])]
    config = {"module": "keras.src.models.functional", "class_name": "Functional", "registered_name": "Functional",
              "config": {"name": stem, "trainable": True, "layers": layers, "input_layers": [["x", 0, 0]],
                         "output_layers": [["dense", 0, 0]]}}
    path = os.path.join(out, stem + ".keras")
    write_keras3_zip(path, config, vars_of)
    add_children(path, children)


def add_children(path, children):
    """Adds layers/<key>/<attribute>/vars/<i> (a sublayer's variables) to the zip's model.weights.h5."""
    with zipfile.ZipFile(path) as z:
        files = {n: z.read(n) for n in z.namelist()}
    buf = io.BytesIO(files["model.weights.h5"])
    with h5py.File(buf, "a") as f:
        for group, values in children.items():
            g = f.create_group("layers/" + group + "/vars")
            for i, v in enumerate(values):
                g.create_dataset(str(i), data=np.asarray(v).astype(np.float32))
        for key in {k.split("/")[0] for k in children}:  # Keras 3's empty groups of the other sublayers
            for attr in ("_dropout_layer", "_softmax"):
                f.create_group("layers/" + key + "/" + attr + "/vars")
    files["model.weights.h5"] = buf.getvalue()
    with zipfile.ZipFile(path, "w") as z:
        for n, data in files.items():
            z.writestr(n, data)


def write_both(out, stem, specs, w, x, logits):
    write_tf2(out, stem, specs, w)
    write_keras3(out, stem, specs, w)
    save_outputs(out, stem, x, logits)


def mha_weights(d_q, d_k, d_v, heads, key_dim, value_dim, out_dim, bias):
    w = []
    for prefix, d, size in (("query", d_q, key_dim), ("key", d_k, key_dim), ("value", d_v, value_dim)):
        w.append((prefix + "/kernel", rng.normal(0, 0.5, (d, heads, size))))
        if bias:
            w.append((prefix + "/bias", rng.normal(0, 0.2, (heads, size))))
    w.append(("attention_output/kernel", rng.normal(0, 0.5, (heads, value_dim, out_dim))))
    if bias:
        w.append(("attention_output/bias", rng.normal(0, 0.2, out_dim)))
    return w


def mha_request(x, value, key, weights, key_dim, causal):
    req = {"op": "attention_mha", "x": x, "value": value, "key": key, "key_dim": key_dim, "use_causal_mask": causal}
    names = {"query": "query", "key": "key", "value": "value", "attention_output": "output"}
    for n, v in weights:
        prefix, kind = n.split("/")
        req[names[prefix] + "_" + kind] = v
    return req


def gqa_weights(d_q, d_k, heads, kv_heads, head_dim, bias):
    """GroupQueryAttention's weights in Keras's order and shapes: query (d_q, u, h), key (d_k, g, h), value
    (d_q, g, h) (the value has the query's features), attention_output (u, h, d_q), biases (u, h), (g, h), (d_q)."""
    w = []
    for prefix, d, n in (("query", d_q, heads), ("key", d_k, kv_heads), ("value", d_q, kv_heads)):
        w.append((prefix + "/kernel", rng.normal(0, 0.5, (d, n, head_dim))))
        if bias:
            w.append((prefix + "/bias", rng.normal(0, 0.2, (n, head_dim))))
    w.append(("attention_output/kernel", rng.normal(0, 0.5, (heads, head_dim, d_q))))
    if bias:
        w.append(("attention_output/bias", rng.normal(0, 0.2, d_q)))
    return w


def gqa_request(x, value, key, weights, head_dim, heads, kv_heads, causal):
    req = mha_request(x, value, key, weights, head_dim, causal)
    req.update(op="attention_gqa", head_dim=head_dim, num_query_heads=heads, num_key_value_heads=kv_heads)
    return req


def gqa(out):
    x = rng.normal(0, 1, (2, 5, 4))
    w1 = gqa_weights(4, 4, 4, 2, 3, True)
    w2 = gqa_weights(4, 3, 3, 1, 2, False)
    wv = [("kernel", rng.normal(0, 0.5, (4, 4))), ("bias", rng.normal(0, 0.1, 4))]
    wk = [("kernel", rng.normal(0, 0.5, (4, 3))), ("bias", rng.normal(0, 0.1, 3))]
    wd = [("kernel", rng.normal(0, 0.5, (4, 3))), ("bias", rng.normal(0, 0.1, 3))]
    common = dict(GQA_COMMON, dropout=0.0)
    specs = [("InputLayer", "x", dict(batch_input_shape=[None, 5, 4], dtype="float32", sparse=False, ragged=False),
              [], {}, False),
             ("GroupQueryAttention", "gqa", dict(common, head_dim=3, num_query_heads=4, num_key_value_heads=2,
                                                 use_bias=True), ["x"],
              {"value": "@x", "use_causal_mask": True}, False),
             dense("v", 4, "gqa"),
             dense("k", 3, "gqa"),
             ("GroupQueryAttention", "gqa2", dict(common, head_dim=2, num_query_heads=3, num_key_value_heads=1,
                                                  use_bias=False), ["gqa"],
              {"value": "@v", "key": "@k", "training": False}, False),
             ("GlobalAveragePooling1D", "gap", dict(data_format="channels_last", keepdims=False), ["gqa2"], {}, False),
             ("Dense", "dense", dict(DENSE, units=3, activation="softmax"), ["gap"], {}, False)]
    shapes = {"gqa": {"query_shape": [None, 5, 4], "value_shape": [None, 5, 4]},
              "gqa2": {"query_shape": [None, 5, 4], "value_shape": [None, 5, 4], "key_shape": [None, 5, 3]}}
    h = run_attention(gqa_request(x, x, None, w1, 3, 4, 2, True))
    v = h @ wv[0][1] + wv[1][1]
    k = h @ wk[0][1] + wk[1][1]
    h2 = run_attention(gqa_request(h, v, k, w2, 2, 3, 1, False))
    logits = h2.mean(axis=1) @ wd[0][1] + wd[1][1]
    write_keras3(out, "gqa", specs, {"gqa": w1, "gqa2": w2, "v": wv, "k": wk, "dense": wd}, shapes)
    save_outputs(out, "gqa", x, logits)


def dense(name, units, src):
    return ("Dense", name, dict(DENSE, units=units), [src], {}, False)


def mha(out):
    x = rng.normal(0, 1, (2, 5, 4))
    w1 = mha_weights(4, 4, 4, 2, 3, 3, 4, True)
    w2 = mha_weights(4, 3, 5, 2, 3, 2, 6, False)
    wv = [("kernel", rng.normal(0, 0.5, (4, 5))), ("bias", rng.normal(0, 0.1, 5))]
    wk = [("kernel", rng.normal(0, 0.5, (4, 3))), ("bias", rng.normal(0, 0.1, 3))]
    wd = [("kernel", rng.normal(0, 0.5, (6, 3))), ("bias", rng.normal(0, 0.1, 3))]
    specs = [("InputLayer", "x", dict(batch_input_shape=[None, 5, 4], dtype="float32", sparse=False, ragged=False),
              [], {}, False),
             ("MultiHeadAttention", "mha", dict(MHA_COMMON, num_heads=2, key_dim=3, value_dim=3, use_bias=True,
                                                output_shape=None), ["x"],
              {"value": "@x", "use_causal_mask": True}, False),
             dense("v", 5, "mha"),
             dense("k", 3, "mha"),
             ("MultiHeadAttention", "mha2", dict(MHA_COMMON, num_heads=2, key_dim=3, value_dim=2, use_bias=False,
                                                 output_shape=[6]), ["mha"],
              {"value": "@v", "key": "@k"}, False),
             ("GlobalAveragePooling1D", "gap", dict(data_format="channels_last", keepdims=False), ["mha2"], {}, False),
             ("Dense", "dense", dict(DENSE, units=3, activation="softmax"), ["gap"], {}, False)]
    h = run_attention(mha_request(x, x, None, w1, 3, True))
    v = h @ wv[0][1] + wv[1][1]
    k = h @ wk[0][1] + wk[1][1]
    h2 = run_attention(mha_request(h, v, k, w2, 3, False))
    logits = h2.mean(axis=1) @ wd[0][1] + wd[1][1]
    write_both(out, "mha", specs, {"mha": w1, "mha2": w2, "v": wv, "k": wk, "dense": wd}, x, logits)


def dense_attention(out):
    x = rng.normal(0, 1, (2, 5, 4))
    wd1 = [("kernel", rng.normal(0, 0.5, (4, 4))), ("bias", rng.normal(0, 0.1, 4))]
    wk = [("kernel", rng.normal(0, 0.5, (4, 4))), ("bias", rng.normal(0, 0.1, 4))]
    att1 = [("scale", np.array(0.7)), ("concat_score_weight", np.array(1.3))]
    add = [("scale", rng.normal(0, 0.5, 4))]
    wd = [("kernel", rng.normal(0, 0.5, (12, 3))), ("bias", rng.normal(0, 0.1, 3))]
    specs = [("InputLayer", "x", dict(batch_input_shape=[None, 5, 4], dtype="float32", sparse=False, ragged=False),
              [], {}, False),
             dense("d", 4, "x"),
             dense("kk", 4, "x"),
             ("Attention", "att1", dict(use_scale=True, score_mode="concat", dropout=0.0), ["x", "x"],
              {"use_causal_mask": True}, True),
             ("Attention", "att2", dict(use_scale=False, score_mode="dot", dropout=0.0), ["x", "d"], {}, True),
             ("AdditiveAttention", "add", dict(use_scale=True, dropout=0.0), ["x", "d", "kk"], {}, True),
             ("Concatenate", "cat", dict(axis=-1), ["att1", "att2", "add"], {}, True),
             ("GlobalAveragePooling1D", "gap", dict(data_format="channels_last", keepdims=False), ["cat"], {}, False),
             ("Dense", "dense", dict(DENSE, units=3, activation="softmax"), ["gap"], {}, False)]
    d = x @ wd1[0][1] + wd1[1][1]
    kk = x @ wk[0][1] + wk[1][1]
    a1 = run_attention({"op": "attention_concat", "x": x, "value": x, "scale": att1[0][1],
                        "concat_score_weight": att1[1][1], "use_causal_mask": True})
    a2 = run_attention({"op": "attention_dot", "x": x, "value": d})
    a3 = run_attention({"op": "attention_additive", "x": x, "value": d, "key": kk, "scale": add[0][1]})
    cat = np.concatenate([a1, a2, a3], axis=-1)
    logits = cat.mean(axis=1) @ wd[0][1] + wd[1][1]
    write_both(out, "dense_attention", specs, {"d": wd1, "kk": wk, "att1": att1, "add": add, "dense": wd}, x,
               logits)


if __name__ == "__main__":
    mha(sys.argv[1])
    dense_attention(sys.argv[1])
    gqa(sys.argv[1])
