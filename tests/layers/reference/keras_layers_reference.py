#!/usr/bin/python3
"""Float64 NumPy references of Keras/TensorFlow layers, written from TensorFlow's and Keras's own
definitions (not from torchfit's code), for tests/layers/*_test.cpp.

Usage: keras_layers_reference.py REQUEST.json RESULT.json
With "vjp": R and "wrt": [weight names] in REQUEST, RESULT is {"grads": {"x": ..., <weight>: ...}}: the
gradients of sum(y * R) by central differences of the same float64 forward (numeric_vjp).
REQUEST: {"op": NAME, "x": {"shape": [N, C, H, W], "data": [...]}, <arguments>, <weights>}; tensors as
torchfit holds them (images (N, C, H, W); sequences (N, steps, C) and volumes (N, D, H, W, C) in Keras's order), weights in KERAS layouts (e.g. a Conv2D kernel
(kh, kw, C_in, filters)). The script moves x to Keras's (N, H, W, C), computes the layer as TensorFlow
does and writes {"y": {"shape": ..., "data": ...}} back in (N, C, H, W).

Sources of each rule:
- "same" padding (convolution, pooling): TensorFlow's GetWindowedOutputSize: out = ceil(in / s),
  total = max((out - 1) * s + (k - 1) * d + 1 - in, 0), pad_before = total // 2 (the odd pixel after).
- Conv2DTranspose: TensorFlow's conv2d_transpose is the gradient (adjoint) of conv2d for an input of the
  output's size, with that same padding; the output size is Keras's conv_utils.deconv_output_length.
- Pooling (1-D, 2-D, 3-D): TensorFlow's max_pool / avg_pool over the spatial axes of (N, spatial..., C);
  "same" padded values are never a maximum and are left out of the mean (tf.nn.avg_pool).
- UpSampling2D: Keras 2.x backend.resize_images -> tf.image.resize (v2): nearest repeats each pixel;
  bilinear uses half_pixel_centers: src = (dst + 0.5) / scale - 0.5, lower = max(floor(src), 0),
  upper = min(ceil(src), in - 1), weight = src - floor(src).
- ReLU: keras backend.relu (the formula of tf.keras 2.x and Keras 3's ReLU.static_call).
- Conv1D: TensorFlow's conv1d is conv2d over a (N, 1, steps, C) image with a (1, k, C, F) kernel; "causal"
  pads (k - 1) * dilation zeros before the steps, then "valid" (keras.layers.Conv1D).
- Conv3D, DepthwiseConv1D, SeparableConv1D, Conv1DTranspose, Conv3DTranspose ("*_nd" ops): the same rules
  on 1 or 3 axes (TensorFlow's conv1d/separable_conv over a (1, steps) image, conv3d, conv_transpose as the
  adjoint); sequences (N, steps, C) and volumes (N, D, H, W, C) are in Keras's order already.
- Dense: Keras 3's Dense.call, ops.matmul(inputs, kernel) + bias over the LAST axis of any rank.
- UnitNormalization (Keras 3): x * rsqrt(max(sum(x^2 over axis), 1e-12)).
- RMSNormalization (Keras 3, ops.rms_normalization): x * rsqrt(mean(x^2 over axis) + epsilon) * scale.
- GroupNormalization (Keras 3): the axis split into (groups, C // groups), mean and biased variance over
  every axis but the batch and the group one, (x - mean) / sqrt(var + epsilon) * gamma + beta per channel.
- LayerNormalization: mean and biased variance over `axis`, (x - mean) / sqrt(var + epsilon) * gamma + beta.
- GlobalAveragePooling/GlobalMaxPooling (Keras 3): ops.mean / ops.max over every spatial axis, keepdims.
- UpSampling1D/3D (Keras 3): ops.repeat(x, size, axis) along each spatial axis (nearest).
- ZeroPadding1D/3D (Keras 3): ops.pad with ((0, 0), *padding, (0, 0)); Cropping1D/3D: x[:, b:n - a, ..., :].
- Normalization (Keras 3): (x - mean) / max(sqrt(variance), 1e-7) per index of the kept axes (mean + x * that
  when inverted); adapt() of an array: np.mean and np.var over every other axis, batch included.
- RandomFlip (Keras 3 RandomFlip._flip_inputs): with a draw's flips, np.where(flips, np.flip(x, width axis))
  for "horizontal", the height axis for "vertical", both with the SAME flips for "horizontal_and_vertical".
- The augmentation layers' argument checks ("augment_arguments": 1 where Keras 3 accepts a case, 0 where it
  raises): keras_augmentation_arguments_reference.py (their constructors' checks).
- RandomRotation, RandomZoom, RandomTranslation, RandomShear ("augment_*" ops): keras_image_augmentation_reference.py
  (Keras 3's NumPy-backend affine_transform and map_coordinates, each layer's transform matrix).
- CenterCrop (Keras 3 CenterCrop.transform_images): rows from int((H - height) / 2), columns likewise, when
  the image is at least the window; otherwise image_utils.smart_resize, the Resizing crop box and bilinear.
- Resizing (Keras 3 ops.image.resize, TensorFlow's tf.image.resize): the aspect-ratio crop / pad box as
  Keras computes it, then half-pixel bilinear or nearest per axis; bicubic, area, lanczos3/5, gaussian,
  mitchellcubic and antialias from tf_resize_reference.py (TensorFlow's ResizeBicubic, ResizeArea and
  ScaleAndTranslate kernels).
- AdaptiveAveragePooling/AdaptiveMaxPooling 1D-3D (Keras 3 ops.adaptive_avg_pool / adaptive_max_pool, the
  NumPy backend's _compute_adaptive_pooling_gather_indices): bin i of an axis of length L pooled to `out`
  covers [floor(i * L / out), ceil((i + 1) * L / out)); the mean or maximum over the box of bins.
- Dot (Keras 3 keras/src/layers/merging/dot.py): axes an int (both inputs; negative counts from the end of
  each input's rank with the batch) or a pair; normalize = ops.normalize, x * min(rsqrt(sum(x^2)), 1 / 1e-7);
  batch_dot: per sample, the sum over the two dot axes, the first input's other axes then the second's; a
  result of rank 1 with the batch becomes (N, 1). The second input is "other".
- "activity_loss": the loss Keras 3's fit reports for Dense(relu) -> [ActivityRegularization] -> Dense
  (linear or softmax): the compiled loss (mse: mean of (y - t)^2; categorical_crossentropy: batch mean of
  -sum t * log p) plus sum(model.losses), each activity regularizer adding l1 * sum|a| + l2 * sum a^2 of its
  layer's (activated) output over the whole batch (Layer.__call__ -> add_loss; L1L2.__call__); "y" is
  [loss].
- Bidirectional, TimeDistributed (Keras 3 keras/src/layers/rnn/bidirectional.py, time_distributed.py): the
  wrapped op run forwards and with go_backwards flipped, the backward sequence flipped back, then merged
  (concat, sum, mul, ave); the wrapped op called on every time step and the results stacked on axis 1.
- Embedding (Keras 3 keras/src/layers/core/embedding.py): ops.cast(inputs, "int32") (truncation toward zero),
  then ops.take(embeddings, inputs, axis=0); "embedding_grad" is d(sum(grad_y * y))/d(embeddings): each
  index's rows of grad_y added into its row (np.add.at).
- EinsumDense (Keras 3 keras/src/layers/core/einsum_dense.py): ops.einsum(equation, inputs, kernel) + bias,
  the bias (Keras's shape from _analyze_einsum_string) broadcast against the output's last axes;
  "einsum_grad" gives d(sum(grad_y * y))/d(x) and /d(kernel) (einsum is linear in each: the equation's
  operands swapped with the output, an index in neither of the other two broadcast).
- SimpleRNN (Keras 3 keras/src/layers/rnn/simple_rnn.py, SimpleRNNCell.call): h = activation(x_t @ kernel
  + bias + h_prev @ recurrent_kernel), h_0 = 0, over the steps (reversed with go_backwards; the outputs in
  processing order); the last h or (return_sequences) the outputs stacked on axis 1. "simple_rnn_grad" gives
  d(sum(grad_y * y))/d(x, kernel, recurrent_kernel, bias), flattened and concatenated, by central differences.
- LSTM, GRU (Keras 3 keras/src/layers/rnn/lstm.py LSTMCell.call, gru.py GRUCell.call, implementation 2):
  "lstm" gates i, f, c, o of x_t @ kernel + h @ recurrent_kernel + bias; "gru" gates z, r, h with reset_after
  (bias (2, 3u): input and recurrent rows) or without (bias (3u)); no "bias" in the request = use_bias false.
  Both flags as SimpleRNN's plus recurrent_activation. Checked once against PyTorch-Python's torch.nn.LSTM /
  torch.nn.GRU (reset_after true; float64, Keras weights moved to PyTorch's layout: LSTM w_ih = kernel.T, GRU blocks r, z, n):
  max |difference| 1.1e-16 (LSTM) and 2.5e-16 (GRU) over (3, 6, 4) inputs, 5 units, return_sequences.
These ops return tensors in torchfit's layout whatever the rank change: an output of rank 4 with the batch
(an image) in (N, C, H, W), every other rank in Keras's order.
"""
import itertools
import json
import math
import sys

import numpy as np


def tensor(t):
    if isinstance(t, np.ndarray):
        return t
    return np.array(t["data"], dtype=np.float64).reshape(t["shape"])


def out(a):
    return {"shape": list(a.shape), "data": [float(v) for v in a.reshape(-1)]}


def nhwc(x):
    return x.transpose(0, 2, 3, 1)


def nchw(y):
    return y.transpose(0, 3, 1, 2)


def same_pad(n, k, s, d):
    o = -(-n // s)
    total = max((o - 1) * s + (k - 1) * d + 1 - n, 0)
    return o, total // 2


def window_geometry(n, k, s, d, padding):
    if padding == "same":
        return same_pad(n, k, s, d)
    return (n - (k - 1) * d - 1) // s + 1, 0


def taps(oh, ow, kh, kw, strides, dilation, pt, pl, h, w):
    """(i, j, a, b, r, q): window (i, j) of an (oh, ow) grid meets pixel (r, q) of an (h, w) image at
    kernel tap (a, b) -- r = i * s + a * d - pad_before -- for every (r, q) inside the image."""
    for i in range(oh):
        for j in range(ow):
            for a in range(kh):
                for b in range(kw):
                    r = i * strides[0] + a * dilation[0] - pt
                    q = j * strides[1] + b * dilation[1] - pl
                    if 0 <= r < h and 0 <= q < w:
                        yield i, j, a, b, r, q


def conv2d(x, kernel, strides, dilation, padding):
    """x (N, H, W, C), kernel (kh, kw, C, F) -> (N, H', W', F)."""
    n, h, w, c = x.shape
    kh, kw, _, f = kernel.shape
    oh, pt = window_geometry(h, kh, strides[0], dilation[0], padding)
    ow, pl = window_geometry(w, kw, strides[1], dilation[1], padding)
    y = np.zeros((n, oh, ow, f))
    for i, j, a, b, r, q in taps(oh, ow, kh, kw, strides, dilation, pt, pl, h, w):
        y[:, i, j, :] += x[:, r, q, :] @ kernel[a, b]
    return y


def depthwise(x, kernel, strides, dilation, padding):
    """kernel (kh, kw, C, m): output channel c * m + j (TensorFlow's order)."""
    kh, kw, c, m = kernel.shape
    full = np.zeros((kh, kw, c, c * m))
    for ch in range(c):
        full[:, :, ch, ch * m:(ch + 1) * m] = kernel[:, :, ch, :]
    return conv2d(x, full, strides, dilation, padding)


def deconv_length(n, k, s, d, padding, output_padding):
    k = k + (k - 1) * (d - 1)
    if output_padding is None:
        return n * s + max(k - s, 0) if padding == "valid" else n * s
    pad = k // 2 if padding == "same" else 0
    return (n - 1) * s + k - 2 * pad + output_padding


def conv2d_transpose(x, kernel, strides, dilation, padding, output_padding):
    """kernel (kh, kw, F, C): the adjoint of conv2d over an (L_h, L_w) input with that padding."""
    n, h, w, c = x.shape
    kh, kw, f, _ = kernel.shape
    op = output_padding or [None, None]
    lh = deconv_length(h, kh, strides[0], dilation[0], padding, op[0])
    lw = deconv_length(w, kw, strides[1], dilation[1], padding, op[1])
    pt = pl = 0
    if padding == "same":
        pt = max((h - 1) * strides[0] + (kh - 1) * dilation[0] + 1 - lh, 0) // 2
        pl = max((w - 1) * strides[1] + (kw - 1) * dilation[1] + 1 - lw, 0) // 2
    y = np.zeros((n, lh, lw, f))
    # The adjoint: input pixel (i, j) spreads over the output pixels the matching conv2d reads it from.
    for i, j, a, b, r, q in taps(h, w, kh, kw, strides, dilation, pt, pl, lh, lw):
        y[:, r, q, :] += x[:, i, j, :] @ kernel[a, b].T
    return y


def taps_nd(out, kernel, strides, dilation, before, size):
    """(o, a, r): output position o of an `out` grid meets input position r of a `size` grid at kernel tap a
    -- r = o * s + a * d - pad_before per axis -- for every r inside the input (any number of axes)."""
    for o in itertools.product(*[range(n) for n in out]):
        for a in itertools.product(*[range(k) for k in kernel]):
            r = tuple(o[i] * strides[i] + a[i] * dilation[i] - before[i] for i in range(len(out)))
            if all(0 <= r[i] < size[i] for i in range(len(out))):
                yield o, a, r


def conv_nd(x, kernel, strides, dilation, padding):
    """x (N, spatial..., C), kernel (k..., C, F) -> (N, spatial'..., F): TensorFlow's convolution over 1, 2
    or 3 axes (conv1d is conv2d over a (1, steps) image, conv3d the same rule on three axes)."""
    nd = kernel.ndim - 2
    size = x.shape[1:-1]
    geometry = [window_geometry(size[i], kernel.shape[i], strides[i], dilation[i], padding) for i in range(nd)]
    out = [g[0] for g in geometry]
    y = np.zeros((x.shape[0],) + tuple(out) + (kernel.shape[-1],))
    for o, a, r in taps_nd(out, kernel.shape[:nd], strides, dilation, [g[1] for g in geometry], size):
        y[(slice(None),) + o] += x[(slice(None),) + r] @ kernel[a]
    return y


def depthwise_nd(x, kernel, strides, dilation, padding):
    """kernel (k..., C, m): output channel c * m + j (TensorFlow's order), any number of axes."""
    c, m = kernel.shape[-2:]
    full = np.zeros(kernel.shape[:-2] + (c, c * m))
    for ch in range(c):
        full[..., ch, ch * m:(ch + 1) * m] = kernel[..., ch, :]
    return conv_nd(x, full, strides, dilation, padding)


def conv_transpose_nd(x, kernel, strides, dilation, padding, output_padding):
    """kernel (k..., F, C): the adjoint of conv_nd over an input of the output's size (Keras's
    deconv_output_length per axis) with that padding, any number of axes."""
    nd = kernel.ndim - 2
    size = x.shape[1:-1]
    op = output_padding or [None] * nd
    out = [deconv_length(size[i], kernel.shape[i], strides[i], dilation[i], padding, op[i]) for i in range(nd)]
    before = [0] * nd
    if padding == "same":
        before = [max((size[i] - 1) * strides[i] + (kernel.shape[i] - 1) * dilation[i] + 1 - out[i], 0) // 2
                  for i in range(nd)]
    y = np.zeros((x.shape[0],) + tuple(out) + (kernel.shape[-2],))
    for i, a, r in taps_nd(size, kernel.shape[:nd], strides, dilation, before, out):
        y[(slice(None),) + r] += x[(slice(None),) + i] @ kernel[a].T
    return y


def pool(x, size, strides, padding, kind):
    """x (N, spatial..., C) -- a sequence, an image or a volume -- pooled over every spatial axis as
    tf.nn.max_pool / tf.nn.avg_pool: windows clipped to the data, so padding never wins a maximum nor enters
    a mean."""
    spatial = x.shape[1:-1]
    geometry = [window_geometry(n, k, s, 1, padding) for n, k, s in zip(spatial, size, strides)]
    out_sizes = [o for o, _ in geometry]
    axes = tuple(range(1, len(spatial) + 1))
    y = np.zeros((x.shape[0], *out_sizes, x.shape[-1]))
    for idx in itertools.product(*[range(o) for o in out_sizes]):
        window = []
        for i, (_, before), k, s, n in zip(idx, geometry, size, strides, spatial):
            start = i * s - before
            window.append(slice(max(start, 0), min(start + k, n)))
        win = x[(slice(None), *window, slice(None))]
        y[(slice(None), *idx, slice(None))] = win.max(axis=axes) if kind == "max" else win.mean(axis=axes)
    return y


def bilinear_axis(n_in, scale):
    """(lower, upper, weight) per output index: TensorFlow's HalfPixelScaler + clamping."""
    res = []
    for o in range(n_in * scale):
        src = (o + 0.5) / scale - 0.5
        lo = math.floor(src)
        res.append((max(lo, 0), min(math.ceil(src), n_in - 1), src - lo))
    return res


def resize_axis_tf(x, axis, n_out, interpolation):
    """tf.image.resize along one axis of a (N, H, W, C) batch, antialias off: half-pixel centres; bilinear
    between the clamped floor and ceil of src = (o + 0.5) * n_in / n_out - 0.5, nearest at
    min(floor((o + 0.5) * n_in / n_out), n_in - 1) (TensorFlow's HalfPixelScaler, ResizeNearestNeighbor)."""
    n_in = x.shape[axis]
    scale = n_in / n_out
    if interpolation == "nearest":
        idx = [min(math.floor((o + 0.5) * scale), n_in - 1) for o in range(n_out)]
        return np.take(x, idx, axis=axis)
    rows = []
    for o in range(n_out):
        src = (o + 0.5) * scale - 0.5
        lo, frac = math.floor(src), src - math.floor(src)
        a = np.take(x, max(lo, 0), axis=axis)
        b = np.take(x, min(math.ceil(src), n_in - 1), axis=axis)
        rows.append(a + (b - a) * frac)
    return np.stack(rows, axis=axis)


def resizing(x, height, width, interpolation, crop, pad, fill_value, antialias=False):
    """Keras 3 Resizing (ops.image.resize): the aspect-ratio box first (crop_to_aspect_ratio: the centred
    min(H, int(W * height / width)) x min(W, int(H * width / height)), at least 1; pad_to_aspect_ratio: the
    image centred in max(H, ...) x max(W, ...) of fill_value), then the resize of each axis."""
    n, h, w, c = x.shape
    rows, cols = int(float(w * height) / width), int(float(h * width) / height)
    if crop:
        bh, bw = max(min(h, rows), 1), max(min(w, cols), 1)
        top, left = int(float(h - bh) / 2), int(float(w - bw) / 2)
        x = x[:, top:top + bh, left:left + bw, :]
    if pad:
        bh, bw = max(h, rows), max(w, cols)
        top, left = int(float(bh - h) / 2), int(float(bw - w) / 2)
        padded = np.full((n, bh, bw, c), float(fill_value))
        padded[:, top:top + h, left:left + w, :] = x
        x = padded
    if interpolation == "nearest" or (interpolation == "bilinear" and not antialias):
        return resize_axis_tf(resize_axis_tf(x, 1, height, interpolation), 2, width, interpolation)
    from tf_resize_reference import resize_axis  # bicubic, area, the ScaleAndTranslate kernels, antialias
    return resize_axis(resize_axis(x, 1, height, interpolation, antialias), 2, width, interpolation, antialias)


def upsample(x, size, interpolation):
    if interpolation == "nearest":
        return x.repeat(size[0], axis=1).repeat(size[1], axis=2)
    n, h, w, c = x.shape
    y = np.zeros((n, h * size[0], w * size[1], c))
    for i, (t, b, dy) in enumerate(bilinear_axis(h, size[0])):
        for j, (l, r, dx) in enumerate(bilinear_axis(w, size[1])):
            top = x[:, t, l] + (x[:, t, r] - x[:, t, l]) * dx
            bottom = x[:, b, l] + (x[:, b, r] - x[:, b, l]) * dx
            y[:, i, j] = top + (bottom - top) * dy
    return y


def relu(x, max_value, negative_slope, threshold):
    # keras.backend.relu (tf.keras 2.x), literally.
    if negative_slope != 0.0:
        if max_value is None and threshold == 0:
            return np.where(x > 0, x, x * negative_slope)
        negative_part = np.maximum(-x + threshold, 0) if threshold != 0 else np.maximum(-x, 0)
    clip_max = max_value is not None
    if threshold != 0:
        y = x * (x > threshold)
    else:
        y = np.maximum(x, 0)
    if clip_max:
        y = np.clip(y, 0, max_value)
    if negative_slope != 0.0:
        y = y - negative_slope * negative_part
    return y


def adaptive_pool(x, output_size, kind):
    """x (N, spatial..., C) channels last; one output value per combination of bins of the spatial axes."""
    spatial = x.shape[1:-1]
    bins = [[(math.floor(i * n / o), math.ceil((i + 1) * n / o)) for i in range(o)]
            for n, o in zip(spatial, output_size)]
    y = np.zeros((x.shape[0],) + tuple(output_size) + (x.shape[-1],))
    for index in itertools.product(*[range(o) for o in output_size]):
        box = (slice(None),) + tuple(slice(*bins[a][i]) for a, i in enumerate(index)) + (slice(None),)
        axes = tuple(range(1, x.ndim - 1))
        window = x[box]
        y[(slice(None),) + index + (slice(None),)] = window.max(axis=axes) if kind == "max" else window.mean(axis=axes)
    return y


def dot(x, other, axes, normalize):
    axes = [axes, axes] if isinstance(axes, int) else list(axes)
    axes = [a % v.ndim if a < 0 else a for a, v in zip(axes, (x, other))]
    if normalize:
        x = x * np.minimum(1 / np.sqrt((x ** 2).sum(axis=axes[0], keepdims=True)), 1e7)
        other = other * np.minimum(1 / np.sqrt((other ** 2).sum(axis=axes[1], keepdims=True)), 1e7)
    y = np.stack([np.tensordot(a, b, axes=(axes[0] - 1, axes[1] - 1)) for a, b in zip(x, other)])
    return y.reshape(-1, 1) if y.ndim == 1 else y


def activity_loss(req, x):
    h = np.maximum(x @ tensor(req["k1"]) + tensor(req["b1"]), 0)
    z = h @ tensor(req["k2"]) + tensor(req["b2"])
    if req["softmax"]:
        e = np.exp(z - z.max(axis=1, keepdims=True))
        z = e / e.sum(axis=1, keepdims=True)
    t = tensor(req["target"])
    if req["loss"] == "mse":
        loss = ((z - t) ** 2).mean()
    else:
        loss = -(t * np.log(z)).sum(axis=1).mean()
    outputs = {"hidden": h, "output": z}
    for where, l1, l2 in req["activity"]:
        a = outputs[where]
        loss += l1 * np.abs(a).sum() + l2 * (a ** 2).sum()
    return np.array([loss])


def to_torchfit(a):
    return nchw(a) if a.ndim == 4 else a


def from_torchfit(t):
    return nhwc(t) if t.ndim == 4 else t


def expand_ellipsis(equation, rank):
    """The equation with "..." written as letters (upper case, unused) for an input of `rank` axes."""
    if "..." not in equation:
        return equation
    spec = equation.split(",")[0]
    free = [c for c in "ABCDEFGHIJKLMNOPQRSTUVWXYZ" if c not in equation]
    return equation.replace("...", "".join(free[:rank - (len(spec) - 3)]))


def einsum_operand_grad(equation, wanted, g, other, shape):
    """d(sum(g * einsum(equation, x0, x1)))/d(x_wanted) of shape `shape` (no "..."): einsum(out, other ->
    wanted), an index of the wanted operand in neither g nor other broadcast (each entry gets the same sum)."""
    lhs, out_spec = equation.split("->")
    specs = lhs.split(",")
    target, other_spec = specs[wanted], specs[1 - wanted]
    present = "".join(c for c in target if c in out_spec or c in other_spec)
    grad = np.einsum(out_spec + "," + other_spec + "->" + present, g, other)
    index = tuple(slice(None) if c in present else None for c in target)
    return np.broadcast_to(grad[index], shape)


def index_ops(op, req):
    """Embedding and EinsumDense: their output ranks differ from the input's (see to_torchfit)."""
    x = from_torchfit(tensor(req["x"]))
    if op in ("embedding", "embedding_grad"):
        table = tensor(req["embeddings"])
        idx = x.astype(np.int64)  # truncation toward zero, as a cast to int32
        if op == "embedding":
            return to_torchfit(table[idx])
        grad = np.zeros_like(table)
        np.add.at(grad, idx, from_torchfit(tensor(req["grad_y"])))
        return grad
    kernel = tensor(req["kernel"])
    equation = expand_ellipsis(req["equation"], x.ndim)
    if op == "einsum":
        y = np.einsum(equation, x, kernel)
        if "bias" in req:
            y = y + tensor(req["bias"])
        return to_torchfit(y)
    g = from_torchfit(tensor(req["grad_y"]))
    gx = einsum_operand_grad(equation, 0, g, kernel, x.shape)
    gk = einsum_operand_grad(equation, 1, g, x, kernel.shape)
    return np.concatenate([to_torchfit(gx).reshape(-1), gk.reshape(-1)])


RNN_ACTIVATIONS = {"tanh": np.tanh, "relu": lambda v: np.maximum(v, 0), "sigmoid": lambda v: 1 / (1 + np.exp(-v)),
                   "linear": lambda v: v}


def simple_rnn(x, kernel, recurrent, bias, activation, return_sequences, go_backwards):
    f = RNN_ACTIVATIONS[activation]
    steps = x[:, ::-1] if go_backwards else x
    h = np.zeros((x.shape[0], kernel.shape[1]))
    outputs = []
    for t in range(steps.shape[1]):
        h = f(steps[:, t] @ kernel + bias + h @ recurrent)
        outputs.append(h)
    return np.stack(outputs, axis=1) if return_sequences else h


def rnn_ops(op, req):
    names = ["x", "kernel", "recurrent_kernel", "bias"]
    args = [tensor(req[n]) for n in names]
    flags = (req["activation"], req["return_sequences"], req["go_backwards"])
    if op == "simple_rnn":
        return simple_rnn(*args, *flags)
    g = tensor(req["grad_y"])
    grads = []
    for i, a in enumerate(args):
        d = np.zeros(a.size)
        for j in range(a.size):
            e = np.zeros(a.size)
            e[j] = 1e-6
            plus = [b + e.reshape(b.shape) if k == i else b for k, b in enumerate(args)]
            minus = [b - e.reshape(b.shape) if k == i else b for k, b in enumerate(args)]
            d[j] = ((simple_rnn(*plus, *flags) - simple_rnn(*minus, *flags)) * g).sum() / 2e-6
        grads.append(d)
    return np.concatenate(grads)


def lstm(x, kernel, recurrent, bias, activation="tanh", recurrent_activation="sigmoid", return_sequences=False,
         go_backwards=False):
    """Keras 3 LSTMCell.call (implementation 2) over the steps: z = x_t @ kernel + h @ recurrent + bias split
    i, f, c, o; c = f * c + i * act(z_c); h = o * act(c)."""
    f, g = RNN_ACTIVATIONS[activation], RNN_ACTIVATIONS[recurrent_activation]
    u = recurrent.shape[0]
    steps = x[:, ::-1] if go_backwards else x
    h = np.zeros((x.shape[0], u))
    c = np.zeros((x.shape[0], u))
    outputs = []
    for t in range(steps.shape[1]):
        z = steps[:, t] @ kernel + h @ recurrent + (0 if bias is None else bias)
        i, fg, cc, o = (z[:, k * u:(k + 1) * u] for k in range(4))
        c = g(fg) * c + g(i) * f(cc)
        h = g(o) * f(c)
        outputs.append(h)
    return np.stack(outputs, axis=1) if return_sequences else h


def gru(x, kernel, recurrent, bias, activation="tanh", recurrent_activation="sigmoid", reset_after=True,
        return_sequences=False, go_backwards=False):
    """Keras 3 GRUCell.call (implementation 2): blocks z, r, h; bias (2, 3u) = input, recurrent rows with
    reset_after (the reset gate times the recurrent projection), else (3u) and r * h before the kernel;
    h = z * h + (1 - z) * hh."""
    f, g = RNN_ACTIVATIONS[activation], RNN_ACTIVATIONS[recurrent_activation]
    u = recurrent.shape[0]
    if bias is None:
        b_in, b_rec = np.zeros(3 * u), np.zeros(3 * u)
    else:
        b_in, b_rec = (bias[0], bias[1]) if reset_after else (bias, np.zeros(3 * u))
    steps = x[:, ::-1] if go_backwards else x
    h = np.zeros((x.shape[0], u))
    outputs = []
    for t in range(steps.shape[1]):
        xz, xr, xh = np.split(steps[:, t] @ kernel + b_in, 3, axis=1)
        if reset_after:
            rz, rr, rh = np.split(h @ recurrent + b_rec, 3, axis=1)
        else:
            rz, rr = np.split(h @ recurrent[:, :2 * u], 2, axis=1)
        z, r = g(xz + rz), g(xr + rr)
        hh = f(xh + (r * rh if reset_after else (r * h) @ recurrent[:, 2 * u:]))
        h = z * h + (1 - z) * hh
        outputs.append(h)
    return np.stack(outputs, axis=1) if return_sequences else h


def gated_rnn_ops(op, req):
    args = [tensor(req[n]) for n in ("x", "kernel", "recurrent_kernel")]
    bias = tensor(req["bias"]) if "bias" in req else None
    flags = {k: req[k] for k in ("activation", "recurrent_activation", "return_sequences", "go_backwards") if k in req}
    if op == "gru" and "reset_after" in req:
        flags["reset_after"] = req["reset_after"]
    return (lstm if op == "lstm" else gru)(*args, bias, **flags)


def bidirectional(req):
    """Keras 3 Bidirectional.call (keras/src/layers/rnn/bidirectional.py): y = forward_layer(x) and
    y_rev = backward_layer(x), the backward layer being the layer's config with go_backwards flipped; with
    return_sequences y_rev = ops.flip(y_rev, axis=1); then concatenate on the last axis, y + y_rev,
    y * y_rev or (y + y_rev) / 2. req["layer"]: the wrapped layer's op ("simple_rnn", "lstm", "gru") and
    flags; the weights "forward_<name>", "backward_<name>"."""
    inner = dict(req["layer"])
    backwards = inner.get("go_backwards", False)
    outputs = []
    for prefix, go_backwards in (("forward_", backwards), ("backward_", not backwards)):
        r = dict(inner, x=req["x"], go_backwards=go_backwards)
        for w in ("kernel", "recurrent_kernel", "bias"):
            if prefix + w in req:
                r[w] = req[prefix + w]
        outputs.append(run(r))
    y, y_rev = outputs
    if inner.get("return_sequences", False):
        y_rev = y_rev[:, ::-1]
    mode = req["merge_mode"]
    if mode == "concat":
        return np.concatenate([y, y_rev], axis=-1)
    return {"sum": y + y_rev, "mul": y * y_rev, "ave": (y + y_rev) / 2}[mode]


def time_distributed(req):
    """Keras 3 TimeDistributed.call (keras/src/layers/rnn/time_distributed.py): the layer req["layer"] (an
    op and its arguments; weights given at the top level, "w_<name>") called on inputs[:, i] for every step i,
    the results stacked on axis 1. x and y as torchfit holds them: (N, T, ...) in Keras's order, except a
    Keras 3-axis (T, S, C), held (N, C, T, S); each step is handed to the op as torchfit holds it."""
    x = tensor(req["x"])
    k = x.transpose(0, 2, 3, 1) if x.ndim == 4 else x  # Keras's (N, T, ...)
    steps = []
    for i in range(k.shape[1]):
        s = k[:, i]
        r = dict(req["layer"], x=s.transpose(0, 3, 1, 2) if s.ndim == 4 else s)
        for name, v in req.items():
            if name.startswith("w_"):
                r[name[2:]] = v
        y = run(r)
        steps.append(y.transpose(0, 2, 3, 1) if y.ndim == 4 else y)
    y = np.stack(steps, axis=1)
    return y.transpose(0, 3, 1, 2) if y.ndim == 4 else y


def keras_axes(axis, rank):
    axes = axis if isinstance(axis, list) else [axis]
    return [a % rank for a in axes]


def run(req):
    op = req["op"]
    if op in ("embedding", "embedding_grad", "einsum", "einsum_grad"):
        return index_ops(op, req)
    if op in ("simple_rnn", "simple_rnn_grad"):
        return rnn_ops(op, req)
    if op in ("lstm", "gru"):
        return gated_rnn_ops(op, req)
    if op == "bidirectional":
        return bidirectional(req)
    if op == "time_distributed":
        return time_distributed(req)
    if op.startswith("attention_"):  # the attention layers (sibling script)
        from keras_attention_reference import run_attention
        return run_attention(req)
    if op == "augment_arguments":  # whether Keras 3's constructors accept the arguments (sibling script)
        from keras_augmentation_arguments_reference import run_arguments
        return np.array(run_arguments(req), dtype=np.float64)
    if op.startswith("augment_"):  # the image augmentation layers, at given parameters (sibling script)
        from keras_image_augmentation_reference import run_augmentation
        return run_augmentation(req)
    x = tensor(req["x"])
    image = x.ndim == 4
    xk = nhwc(x) if image else x
    if op == "conv2d":
        y = conv2d(xk, tensor(req["kernel"]), req["strides"], req["dilation_rate"], req["padding"])
    elif op == "depthwise_conv2d":
        y = depthwise(xk, tensor(req["depthwise_kernel"]), req["strides"], req["dilation_rate"], req["padding"])
    elif op == "separable_conv2d":
        d = depthwise(xk, tensor(req["depthwise_kernel"]), req["strides"], req["dilation_rate"], req["padding"])
        y = conv2d(d, tensor(req["pointwise_kernel"]), [1, 1], [1, 1], "valid")
    elif op == "conv2d_transpose":
        y = conv2d_transpose(xk, tensor(req["kernel"]), req["strides"], req["dilation_rate"], req["padding"],
                             req.get("output_padding"))
    elif op in ("max_pool", "avg_pool"):
        y = pool(xk, req["pool_size"], req["strides"], req["padding"], op[:3])
    elif op == "zero_padding2d":
        (t, b), (l, r) = req["padding"]
        y = np.pad(xk, ((0, 0), (t, b), (l, r), (0, 0)))
    elif op == "cropping2d":
        (t, b), (l, r) = req["cropping"]
        y = xk[:, t:xk.shape[1] - b, l:xk.shape[2] - r, :]
    elif op == "resizing":
        y = resizing(xk, req["height"], req["width"], req["interpolation"], req["crop"], req["pad"], req["fill_value"],
                     req.get("antialias", False))
    elif op == "normalization":  # Keras 3 Normalization.call; "adapt": the mean/var of data (np.mean/np.var)
        keep = sorted(a % xk.ndim for a in req["axis"])
        view = [xk.shape[d] if d in keep else 1 for d in range(xk.ndim)]
        if "adapt" in req:
            data = tensor(req["adapt"])
            data = nhwc(data) if data.ndim == 4 else data
            reduce = tuple(d for d in range(data.ndim) if d not in keep)
            mean, var = np.mean(data, axis=reduce), np.var(data, axis=reduce)
        else:
            mean, var = tensor(req["mean"]), tensor(req["variance"])
        mean, scale = np.reshape(mean, view), np.maximum(np.sqrt(np.reshape(var, view)), 1e-7)
        y = mean + xk * scale if req["invert"] else (xk - mean) / scale
    elif op == "random_flip":  # Keras 3 RandomFlip._flip_inputs given its draws: flips[i] = (u_i <= 0.5)
        flips = np.array(req["flips"], dtype=bool).reshape(-1, 1, 1, 1)
        y = xk
        if req["mode"] in ("horizontal", "horizontal_and_vertical"):
            y = np.where(flips, np.flip(y, axis=-2), y)
        if req["mode"] in ("vertical", "horizontal_and_vertical"):
            y = np.where(flips, np.flip(y, axis=-3), y)
    elif op == "center_crop":  # Keras 3 CenterCrop.transform_images: the window, else smart_resize
        h, w = req["height"], req["width"]
        if xk.shape[1] >= h and xk.shape[2] >= w:
            top, left = int((xk.shape[1] - h) / 2), int((xk.shape[2] - w) / 2)
            y = xk[:, top:top + h, left:left + w, :]
        else:
            y = resizing(xk, h, w, "bilinear", True, False, 0.0)
    elif op == "up_sampling2d":
        y = upsample(xk, req["size"], req["interpolation"])
    elif op == "relu":
        y = relu(xk, req.get("max_value"), req["negative_slope"], req["threshold"])
    elif op == "softmax":  # an int or a list (tf.keras: over several axes at once)
        axes = tuple(keras_axes(req["axis"], xk.ndim))
        e = np.exp(xk - xk.max(axis=axes, keepdims=True))
        y = e / e.sum(axis=axes, keepdims=True)
    elif op == "conv1d":  # x (N, steps, C) in Keras's order, kernel (k, C, F)
        k = tensor(req["kernel"])
        d = req["dilation_rate"]
        seq = xk
        padding = req["padding"]
        if padding == "causal":
            seq = np.pad(seq, ((0, 0), ((k.shape[0] - 1) * d, 0), (0, 0)))
            padding = "valid"
        y = conv2d(seq[:, None], k[None], [1, req["strides"]], [1, d], padding)[:, 0]
    elif op == "conv_nd":  # x in Keras's order (N, spatial..., C), kernel (k..., C, F)
        y = conv_nd(xk, tensor(req["kernel"]), req["strides"], req["dilation_rate"], req["padding"])
    elif op == "depthwise_conv_nd":
        y = depthwise_nd(xk, tensor(req["depthwise_kernel"]), req["strides"], req["dilation_rate"], req["padding"])
    elif op == "separable_conv_nd":
        d = depthwise_nd(xk, tensor(req["depthwise_kernel"]), req["strides"], req["dilation_rate"], req["padding"])
        pointwise = tensor(req["pointwise_kernel"])
        y = conv_nd(d, pointwise, [1] * (pointwise.ndim - 2), [1] * (pointwise.ndim - 2), "valid")
    elif op == "conv_transpose_nd":
        y = conv_transpose_nd(xk, tensor(req["kernel"]), req["strides"], req["dilation_rate"], req["padding"],
                              req.get("output_padding"))
    elif op == "dense":  # kernel (D, units), Keras layout; bias added below
        y = np.matmul(xk, tensor(req["kernel"]))
    elif op == "unit_normalization":
        axes = tuple(keras_axes(req["axis"], xk.ndim))
        y = xk / np.sqrt(np.maximum((xk ** 2).sum(axis=axes, keepdims=True), 1e-12))
    elif op == "rms_normalization":
        axes = tuple(keras_axes(req["axis"], xk.ndim))
        y = xk / np.sqrt((xk ** 2).mean(axis=axes, keepdims=True) + req["epsilon"]) * tensor(req["scale"])
    elif op == "group_normalization":
        a = req["axis"] % xk.ndim
        c = xk.shape[a]
        g = c if req["groups"] == -1 else req["groups"]
        grouped_shape = list(xk.shape)
        grouped_shape[a] = c // g
        grouped_shape.insert(a, g)
        r = xk.reshape(grouped_shape)
        red = tuple(i for i in range(1, r.ndim) if i != a)
        r = (r - r.mean(axis=red, keepdims=True)) / np.sqrt(r.var(axis=red, keepdims=True) + req["epsilon"])
        y = r.reshape(xk.shape)
        per_channel = [1] * xk.ndim
        per_channel[a] = c
        if "gamma" in req:
            y = y * tensor(req["gamma"]).reshape(per_channel)
        if "beta" in req:
            y = y + tensor(req["beta"]).reshape(per_channel)
    elif op == "rescaling":
        y = xk * req["scale"] + req["offset"]
    elif op == "layer_normalization":
        axes = tuple(keras_axes(req["axis"], xk.ndim))
        mean = xk.mean(axis=axes, keepdims=True)
        var = ((xk - mean) ** 2).mean(axis=axes, keepdims=True)
        y = (xk - mean) / np.sqrt(var + req["epsilon"])
        shape = [xk.shape[a] if a in axes else 1 for a in range(xk.ndim)]
        if "gamma" in req:
            y = y * tensor(req["gamma"]).reshape(shape)
        if "beta" in req:
            y = y + tensor(req["beta"]).reshape(shape)
    elif op in ("global_avg_pool", "global_max_pool"):  # Keras 3: ops.mean / ops.max over the spatial axes
        axes = tuple(range(1, xk.ndim - 1))
        fn = np.mean if op == "global_avg_pool" else np.max
        y = fn(xk, axis=axes, keepdims=req["keepdims"])
    elif op == "zero_padding":  # ZeroPadding1D/3D: ops.pad(x, ((0, 0), *padding, (0, 0)))
        y = np.pad(xk, [(0, 0)] + [tuple(p) for p in req["padding"]] + [(0, 0)])
    elif op == "cropping":  # Cropping1D/3D: x[:, b:n - a, ..., :] per spatial axis
        y = xk[(slice(None),) + tuple(slice(b, n - a) for (b, a), n in zip(req["cropping"], xk.shape[1:-1]))]
    elif op == "up_sampling_nearest":  # UpSampling1D/3D: ops.repeat(x, s, axis) along each spatial axis
        y = xk
        for i, s in enumerate(req["size"]):
            y = np.repeat(y, s, axis=1 + i)
    elif op in ("adaptive_max_pool", "adaptive_avg_pool"):
        y = adaptive_pool(xk, req["output_size"], op[9:12])
    elif op == "activity_loss":
        y = activity_loss(req, xk)
    elif op == "dot":
        y = dot(xk, tensor(req["other"]), req["axes"], req["normalize"])
    else:
        raise SystemExit("unknown op " + op)
    if "bias" in req:
        y = y + tensor(req["bias"])
    return nchw(y) if image else y


def numeric_vjp(req):
    """The gradients of sum(op(x, weights) * r), r = req["vjp"] (y's layout), with respect to x and each
    weight named in req["wrt"]: central differences of the float64 forward above, step 1e-6 (exact for the
    linear and piecewise-linear ops away from their kinks, O(1e-10) for the smooth ones)."""
    r = tensor(req.pop("vjp"))
    base = {k: tensor(v) if isinstance(v, dict) and "data" in v else v for k, v in req.items()}
    grads = {}
    for name in ["x"] + base.pop("wrt"):
        a = base[name] = base[name].copy()
        g = np.zeros_like(a)
        for i in range(a.size):
            keep = a.flat[i]
            a.flat[i] = keep + 1e-6
            up = (run(base) * r).sum()
            a.flat[i] = keep - 1e-6
            down = (run(base) * r).sum()
            a.flat[i] = keep
            g.flat[i] = (up - down) / 2e-6
        grads[name] = out(g)
    return grads


def main():
    with open(sys.argv[1]) as f:
        req = json.load(f)
    if "vjp" in req:
        result = {"grads": numeric_vjp(req)}
    else:
        result = {"y": out(run(req))}
    with open(sys.argv[2], "w") as f:
        json.dump(result, f)


if __name__ == "__main__":
    main()
