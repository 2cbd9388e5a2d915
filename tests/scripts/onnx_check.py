#!/usr/bin/python3
"""Checks torchfit's ONNX files with ONNX itself and an independent evaluator.

    onnx_check.py DIR

For every DIR/<model>.opset<N>.onnx (written by tests/support/onnx_zoo.cpp):
  1. onnx.checker.check_model(model, full_check=True) and strict shape inference (check_type, strict_mode);
     the inferred output shapes must equal the declared ones;
  2. the interface: one float32 input named as the model's input layer, shaped ("N", C, H, W) like the .input.npy, outputs
     with the batch dimension "N", the declared opset, no Dropout node, float32/int64 initializers only;
  3. a NumPy evaluation of the graph (float64), written here from the ONNX operator definitions
     (https://onnx.ai/onnx/operators/, opsets 13-17), must equal torchfit's forward (.output.npy) within 1e-5.
Prints one line per file; exits 1 when anything fails.
"""
import glob
import itertools
import math
import os
import sys

import numpy as np
import onnx
from onnx import numpy_helper

TOLERANCE = 1e-5


def attrs(node):
    return {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}


def window_slices(offsets, strides, lengths):
    """The strided slices (n, c, o...) of every spatial axis starting at `offsets`, `lengths` long."""
    return (slice(None), slice(None)) + tuple(
        slice(o, o + s * (n - 1) + 1, s) for o, s, n in zip(offsets, strides, lengths))


def conv(x, w, b=None, strides=None, dilations=None, pads=None, group=1, **_):
    """Conv over 1, 2 or 3 spatial axes: y[n, m, o...] = Σ_c,k... x_padded[n, g·C/g + c, o·s + k·d] · w[m, c, k...]
    + b[m]; pads = begins then ends."""
    nd = w.ndim - 2
    strides, dilations, pads = strides or [1] * nd, dilations or [1] * nd, pads or [0] * (2 * nd)
    xp = np.pad(x, [(0, 0), (0, 0)] + [(pads[i], pads[i + nd]) for i in range(nd)])
    m, cg = w.shape[:2]
    ks = w.shape[2:]
    out = [(xp.shape[2 + i] - ((ks[i] - 1) * dilations[i] + 1)) // strides[i] + 1 for i in range(nd)]
    y = np.zeros((x.shape[0], m) + tuple(out))
    mg = m // group
    for g in range(group):
        xs = xp[:, g * cg:(g + 1) * cg]
        for k in itertools.product(*[range(n) for n in ks]):
            patch = xs[window_slices([k[i] * dilations[i] for i in range(nd)], strides, out)]
            y[:, g * mg:(g + 1) * mg] += np.einsum("nc...,mc->nm...", patch, w[(slice(g * mg, (g + 1) * mg), slice(None)) + k])
    if b is not None:
        y += b.reshape(1, -1, *[1] * nd)
    return y


def conv_transpose(x, w, b=None, strides=None, dilations=None, pads=None, output_padding=None, **_):
    """ConvTranspose (group 1) over 1, 2 or 3 spatial axes: y_full[n, m, i·s + k·d] += x[n, c, i] · w[c, m, k];
    the full result extended by output_padding at the end, then pads (begins, ends) cropped from each side."""
    nd = w.ndim - 2
    strides, dilations = strides or [1] * nd, dilations or [1] * nd
    pads, output_padding = pads or [0] * (2 * nd), output_padding or [0] * nd
    ks, ins = w.shape[2:], x.shape[2:]
    full = [(ins[i] - 1) * strides[i] + (ks[i] - 1) * dilations[i] + 1 + output_padding[i] for i in range(nd)]
    y = np.zeros((x.shape[0], w.shape[1]) + tuple(full))
    for k in itertools.product(*[range(n) for n in ks]):
        contrib = np.einsum("nc...,cm->nm...", x, w[(slice(None), slice(None)) + k])
        y[window_slices([k[i] * dilations[i] for i in range(nd)], strides, ins)] += contrib
    y = y[(slice(None), slice(None)) + tuple(slice(pads[i], full[i] - pads[i + nd]) for i in range(nd))]
    if b is not None:
        y = y + b.reshape(1, -1, *[1] * nd)
    return y


def pool(x, kernel_shape, strides=None, pads=None, kind="max", count_include_pad=0, **_):
    """MaxPool / AveragePool over the last len(kernel_shape) axes of (N, C, spatial...) (ceil_mode 0; pads
    begins..., ends...). Average without count_include_pad divides by the real values of each window."""
    rank = len(kernel_shape)
    strides = [1] * rank if strides is None else list(strides)
    pads = [0] * (2 * rank) if pads is None else list(pads)
    fill = -np.inf if kind == "max" else 0.0
    widths = [(int(pads[i]), int(pads[i + rank])) for i in range(rank)]
    xp = np.pad(x, [(0, 0), (0, 0)] + widths, constant_values=fill)
    real = np.pad(np.ones(x.shape[2:]), widths)
    out = [(xp.shape[2 + i] - kernel_shape[i]) // strides[i] + 1 for i in range(rank)]
    y = np.zeros(x.shape[:2] + tuple(out))
    axes = tuple(range(2, 2 + rank))
    for idx in itertools.product(*[range(o) for o in out]):
        window = tuple(slice(i * s, i * s + k) for i, s, k in zip(idx, strides, kernel_shape))
        win = xp[(slice(None), slice(None)) + window]
        if kind == "max":
            y[(slice(None), slice(None)) + idx] = win.max(axis=axes)
        else:
            count = np.prod(kernel_shape) if count_include_pad else real[window].sum()
            y[(slice(None), slice(None)) + idx] = win.sum(axis=axes) / count
    return y


def resize_axis(x, axis, scale, mode, transform, nearest_mode):
    """One axis of Resize: source coordinate by coordinate_transformation_mode; nearest (floor) or linear
    with the neighbours clamped to the edge (the operator's reference pads with edge values)."""
    n_in = x.shape[axis]
    n_out = int(math.floor(n_in * scale))
    out = np.arange(n_out, dtype=np.float64)
    if transform == "half_pixel":
        src = (out + 0.5) / scale - 0.5
    elif transform == "tf_half_pixel_for_nn":
        src = (out + 0.5) / scale
    else:
        src = out / scale
    if mode == "nearest":
        assert nearest_mode in ("floor", "round_prefer_ceil"), nearest_mode
        idx = np.floor(src if nearest_mode == "floor" else src + 0.5).astype(int)
        idx = np.clip(idx, 0, n_in - 1)
        return np.take(x, idx, axis=axis)
    lo = np.floor(src).astype(int)
    frac = src - lo
    a = np.take(x, np.clip(lo, 0, n_in - 1), axis=axis)
    b = np.take(x, np.clip(lo + 1, 0, n_in - 1), axis=axis)
    shape = [1] * x.ndim
    shape[axis] = n_out
    frac = frac.reshape(shape)
    return a * (1 - frac) + b * frac


def resize(x, roi, scales, mode="nearest", coordinate_transformation_mode="half_pixel", nearest_mode="round_prefer_floor", **_):
    y = x
    for axis, s in enumerate(scales):
        if s != 1.0:
            y = resize_axis(y, axis, float(s), mode.decode() if isinstance(mode, bytes) else mode,
                            coordinate_transformation_mode.decode() if isinstance(coordinate_transformation_mode, bytes) else coordinate_transformation_mode,
                            nearest_mode.decode() if isinstance(nearest_mode, bytes) else nearest_mode)
    return y


def softmax(x, axis=-1, **_):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def layer_norm(x, scale, b=None, axis=-1, epsilon=1e-5, **_):
    axes = tuple(range(axis % x.ndim, x.ndim))
    mean = x.mean(axis=axes, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=axes, keepdims=True)
    y = (x - mean) / np.sqrt(var + epsilon) * scale
    return y + b if b is not None else y


def reshape(x, shape, **_):
    shape = [x.shape[i] if d == 0 else int(d) for i, d in enumerate(shape)]
    return x.reshape(shape)


def slice_(x, starts, ends, axes=None, steps=None, **_):
    index = [slice(None)] * x.ndim
    axes = range(len(starts)) if axes is None else axes
    for k, a in enumerate(axes):
        index[int(a)] = slice(int(starts[k]), int(ends[k]), 1 if steps is None else int(steps[k]))
    return x[tuple(index)]


def rnn(x, w, r, b=None, hidden_size=None, **_):
    """ONNX RNN, forward, Tanh: X (steps, N, C), W (1, H, C), R (1, H, H), B (1, 2H) -> Y (steps, 1, N, H)."""
    h = np.zeros((x.shape[1], w.shape[1]))
    bias = 0 if b is None else b[0, :w.shape[1]] + b[0, w.shape[1]:]
    ys = []
    for t in range(x.shape[0]):
        h = np.tanh(x[t] @ w[0].T + h @ r[0].T + bias)
        ys.append(h)
    return np.stack(ys)[:, None]


def sigmoid(v):
    return 1 / (1 + np.exp(-v))


def lstm(x, w, r, b=None, hidden_size=None, **_):
    """ONNX LSTM, forward, default activations (f = Sigmoid, g = h = Tanh), no peepholes: gates i, o, f, c of
    W (1, 4H, C), R (1, 4H, H), B (1, 8H) = [Wb, Rb]; Ct = ft * Ct-1 + it * g(c), Ht = ot * h(Ct)."""
    H = w.shape[1] // 4
    bias = 0 if b is None else b[0, :4 * H] + b[0, 4 * H:]
    h = np.zeros((x.shape[1], H))
    c = np.zeros((x.shape[1], H))
    ys = []
    for t in range(x.shape[0]):
        i, o, f, cc = np.split(x[t] @ w[0].T + h @ r[0].T + bias, 4, axis=1)
        c = sigmoid(f) * c + sigmoid(i) * np.tanh(cc)
        h = sigmoid(o) * np.tanh(c)
        ys.append(h)
    return np.stack(ys)[:, None]


def gru(x, w, r, b=None, hidden_size=None, linear_before_reset=0, **_):
    """ONNX GRU, forward, default activations: gates z, r, h of W (1, 3H, C), R (1, 3H, H), B (1, 6H) = [Wb, Rb];
    ht = tanh(Xt Wh + (rt * Ht-1) Rh + Rbh + Wbh), or with linear_before_reset tanh(Xt Wh + rt * (Ht-1 Rh + Rbh)
    + Wbh); Ht = (1 - zt) * ht + zt * Ht-1."""
    H = w.shape[1] // 3
    wz, wr, wh = np.split(w[0], 3)
    rz, rr, rh = np.split(r[0], 3)
    wbz, wbr, wbh, rbz, rbr, rbh = np.split(np.zeros(6 * H) if b is None else b[0], 6)
    h = np.zeros((x.shape[1], H))
    ys = []
    for t in range(x.shape[0]):
        z = sigmoid(x[t] @ wz.T + h @ rz.T + wbz + rbz)
        rt = sigmoid(x[t] @ wr.T + h @ rr.T + wbr + rbr)
        if linear_before_reset:
            hh = np.tanh(x[t] @ wh.T + rt * (h @ rh.T + rbh) + wbh)
        else:
            hh = np.tanh(x[t] @ wh.T + (rt * h) @ rh.T + rbh + wbh)
        h = (1 - z) * hh + z * h
        ys.append(h)
    return np.stack(ys)[:, None]


def directed(cell):
    """ONNX's `direction` of an RNN / LSTM / GRU node around `cell`, the forward pass of one direction's W, R, B
    (1, ...): "forward" as it is; "reverse" reads X from the last step to the first and writes each step's H at
    the step it read (Y in X's order); "bidirectional" the forward pass with W[0], R[0], B[0] and the reverse
    one with W[1], R[1], B[1], stacked on Y's axis 1 -> (steps, 2, N, H) (the ONNX operators' definitions)."""
    def run(x, w, r, b=None, direction=b"forward", **a):
        d = direction.decode() if isinstance(direction, bytes) else direction
        part = lambda i: (w[i:i + 1], r[i:i + 1], None if b is None else b[i:i + 1])
        if d == "forward":
            return cell(x, *part(0), **a)
        if d == "reverse":
            return cell(x[::-1], *part(0), **a)[::-1]
        assert d == "bidirectional", d
        return np.concatenate([cell(x, *part(0), **a), cell(x[::-1], *part(1), **a)[::-1]], axis=1)
    return run


def fold(fn):
    def run(*xs, **_):
        y = xs[0]
        for x in xs[1:]:
            y = fn(y, x)
        return y
    return run


OPS = {
    "Conv": conv,
    "ConvTranspose": conv_transpose,
    "Gemm": lambda a, b, c=None, transA=0, transB=0, alpha=1.0, beta=1.0, **_:
        alpha * ((a.T if transA else a) @ (b.T if transB else b)) + (beta * c if c is not None else 0),
    "MatMul": lambda a, b, **_: np.matmul(a, b),
    "InstanceNormalization": lambda x, s, b, epsilon=1e-5, **_:
        (x - x.mean(axis=tuple(range(2, x.ndim)), keepdims=True))
        / np.sqrt(x.var(axis=tuple(range(2, x.ndim)), keepdims=True) + epsilon)
        * s.reshape(1, -1, *[1] * (x.ndim - 2)) + b.reshape(1, -1, *[1] * (x.ndim - 2)),
    "BatchNormalization": lambda x, s, b, mean, var, epsilon=1e-5, **_:
        (x - mean.reshape(1, -1, *[1] * (x.ndim - 2))) / np.sqrt(var.reshape(1, -1, *[1] * (x.ndim - 2)) + epsilon)
        * s.reshape(1, -1, *[1] * (x.ndim - 2)) + b.reshape(1, -1, *[1] * (x.ndim - 2)),
    "MaxPool": lambda x, **a: pool(x, kind="max", **a),
    "AveragePool": lambda x, **a: pool(x, kind="avg", **a),
    "GlobalAveragePool": lambda x, **_: x.mean(axis=tuple(range(2, x.ndim)), keepdims=True),
    "GlobalMaxPool": lambda x, **_: x.max(axis=tuple(range(2, x.ndim)), keepdims=True),
    "Flatten": lambda x, axis=1, **_: x.reshape(int(np.prod(x.shape[:axis])), -1),
    "Reshape": reshape,
    "Transpose": lambda x, perm, **_: x.transpose(perm),
    "Relu": lambda x, **_: np.maximum(x, 0),
    "LeakyRelu": lambda x, alpha=0.01, **_: np.where(x >= 0, x, alpha * x),
    "Elu": lambda x, alpha=1.0, **_: np.where(x >= 0, x, alpha * (np.exp(x) - 1)),
    "Sigmoid": lambda x, **_: 1 / (1 + np.exp(-x)),
    "Tanh": lambda x, **_: np.tanh(x),
    "Softmax": softmax,
    "LogSoftmax": lambda x, axis=-1, **_: x - x.max(axis=axis, keepdims=True)
        - np.log(np.exp(x - x.max(axis=axis, keepdims=True)).sum(axis=axis, keepdims=True)),
    "Selu": lambda x, alpha=1.67326319217681884765625, gamma=1.05070102214813232421875, **_:
        gamma * np.where(x > 0, x, alpha * (np.exp(x) - 1)),
    "HardSigmoid": lambda x, alpha=0.2, beta=0.5, **_: np.maximum(0, np.minimum(1, alpha * x + beta)),
    "Softplus": lambda x, **_: np.logaddexp(0, x),
    "Softsign": lambda x, **_: x / (1 + np.abs(x)),
    "Exp": lambda x, **_: np.exp(x),
    "PRelu": lambda x, slope, **_: np.where(x < 0, slope * x, x),
    "ThresholdedRelu": lambda x, alpha=1.0, **_: np.where(x > alpha, x, 0.0),
    "Erf": lambda x, **_: np.vectorize(math.erf)(x),
    "Sqrt": lambda x, **_: np.sqrt(x),
    "Abs": lambda x, **_: np.abs(x),
    "Neg": lambda x, **_: -x,
    "IsNaN": lambda x, **_: np.isnan(x),
    "Where": lambda c, a, b, **_: np.where(c, a, b),
    "Floor": lambda x, **_: np.floor(x),
    "Add": fold(np.add), "Sub": fold(np.subtract), "Mul": fold(np.multiply), "Div": fold(np.divide),
    "Max": fold(np.maximum), "Min": fold(np.minimum),
    "Concat": lambda *xs, axis, **_: np.concatenate(xs, axis=axis),
    "Unsqueeze": lambda x, axes, **_: np.expand_dims(x, tuple(int(a) for a in axes)),
    "Squeeze": lambda x, axes, **_: np.squeeze(x, tuple(int(a) for a in axes)),
    "Pad": lambda x, pads, value=None, mode=b"constant", **_:
        np.pad(x, [(int(pads[i]), int(pads[i + x.ndim])) for i in range(x.ndim)],
               constant_values=0.0 if value is None else float(value)),
    "Slice": slice_,
    "RNN": directed(rnn),
    "LSTM": directed(lstm),
    "GRU": directed(gru),
    "Resize": resize,
    "Clip": lambda x, lo=None, hi=None, **_: np.clip(x, -np.inf if lo is None else lo, np.inf if hi is None else hi),
    "Greater": lambda a, b, **_: a > b,
    "Equal": lambda a, b, **_: a == b,
    "Not": lambda x, **_: np.logical_not(x),
    "Cast": lambda x, to, **_: x.astype(np.float64 if to == onnx.TensorProto.FLOAT else np.int64),
    "Identity": lambda x, **_: x,
    "Einsum": lambda *xs, equation, **_: np.einsum(equation.decode() if isinstance(equation, bytes) else equation, *xs),
    "Gather": lambda data, indices, axis=0, **_: np.take(data, indices.astype(np.int64), axis=int(axis)),
    "ReduceMean": lambda x, axes, keepdims=1, **_: x.mean(axis=tuple(axes), keepdims=bool(keepdims)),
    "ReduceMax": lambda x, axes, keepdims=1, **_: x.max(axis=tuple(axes), keepdims=bool(keepdims)),
    "LayerNormalization": layer_norm,
}


def evaluate(model, x):
    g = model.graph
    values = {t.name: numpy_helper.to_array(t).astype(np.float64 if t.data_type == onnx.TensorProto.FLOAT else np.int64)
              for t in g.initializer}
    values[g.input[0].name] = x.astype(np.float64)
    values[""] = None
    for node in g.node:
        if node.op_type not in OPS:
            raise RuntimeError("no NumPy evaluation of %s" % node.op_type)
        args = [values[i] for i in node.input]
        while args and args[-1] is None:
            args.pop()
        values[node.output[0]] = OPS[node.op_type](*args, **attrs(node))
    return values[g.output[0].name]


def dims(value_info):
    return [d.dim_param if d.dim_param else d.dim_value for d in value_info.type.tensor_type.shape.dim]


def check_interface(model, name, opset, x):
    g = model.graph
    # The functional models' Input is called "image"; a Sequential's implicit input is Keras's
    # "<first layer>_input".
    want = "conv2d_input" if name == "seed_cnn" else "image"
    assert len(g.input) == 1 and g.input[0].name == want, [i.name for i in g.input]
    assert g.input[0].type.tensor_type.elem_type == onnx.TensorProto.FLOAT
    assert dims(g.input[0]) == ["N"] + list(x.shape[1:]), (dims(g.input[0]), x.shape)
    for out in g.output:
        assert dims(out)[0] == "N", dims(out)
    assert [o.version for o in model.opset_import if o.domain == ""] == [opset]
    assert not any(n.op_type == "Dropout" for n in g.node)
    assert all(t.data_type in (onnx.TensorProto.FLOAT, onnx.TensorProto.INT64) for t in g.initializer)
    if name == "shared_layer":  # one Conv2D called twice: its kernel and bias written once
        assert len(g.initializer) == 2, [t.name for t in g.initializer]
    ops = {n.op_type for n in g.node}
    if "LayerNormalization" in ops:
        assert opset >= 17, "LayerNormalization below opset 17"


def check_file(path):
    name, opset_part = os.path.basename(path)[:-len(".onnx")].rsplit(".", 1)
    opset = int(opset_part[len("opset"):])
    folder = os.path.dirname(path)
    model = onnx.load(path)
    onnx.checker.check_model(model, full_check=True)
    inferred = onnx.shape_inference.infer_shapes(model, check_type=True, strict_mode=True)
    declared = {o.name: dims(o) for o in model.graph.output}
    for o in inferred.graph.output:
        assert dims(o) == declared[o.name], (o.name, dims(o), declared[o.name])
    x = np.load(os.path.join(folder, name + ".input.npy"))
    expected = np.load(os.path.join(folder, name + ".output.npy"))
    check_interface(model, name, opset, x)
    got = evaluate(model, x)
    assert got.shape == expected.shape, (got.shape, expected.shape)
    diff = float(np.abs(got - expected).max())
    assert diff <= TOLERANCE, "max |NumPy - torchfit| = %.3g" % diff
    return "%s opset %d: checker, strict shape inference OK; max |NumPy - torchfit| = %.2e (%d nodes)" % (
        name, opset, diff, len(model.graph.node))


def main():
    files = sorted(glob.glob(os.path.join(sys.argv[1], "*.opset*.onnx")))
    if not files:
        print("FAIL: no ONNX files in %s" % sys.argv[1])
        return 1
    failed = 0
    for path in files:
        try:
            print("ok   " + check_file(path))
        except Exception as e:  # report every file, then fail
            failed += 1
            print("FAIL %s: %s: %s" % (os.path.basename(path), type(e).__name__, e))
    print("onnx_check: %d files, %d failed (onnx %s, numpy %s)" % (len(files), failed, onnx.__version__, np.__version__))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
