#!/usr/bin/python3
"""Float64 NumPy reference of tf.image.resize's methods beyond plain bilinear and nearest (Keras 3's
Resizing and image_dataset_from_directory call tf.image.resize on the TensorFlow backend), written from
TensorFlow's source, not from torchfit's code; driven through keras_layers_reference.py's "resizing" op.

Sources (tensorflow/python/ops/image_ops_impl.py resize_images_v2 and tensorflow/core/kernels/image/):
- resize_images_v2: "bilinear" with antialias -> ScaleAndTranslate "triangle"; "bicubic" -> ResizeBicubic
  (half_pixel_centers=True), with antialias ScaleAndTranslate "keyscubic"; "area" -> ResizeArea (antialias
  ignored); "nearest" ignores antialias; "lanczos3", "lanczos5", "gaussian", "mitchellcubic" ->
  ScaleAndTranslate(scale = new_size / old_size, translation 0, antialias).
- ResizeBicubic (resize_bicubic_op.cc GetWeightsAndIndices<HalfPixelScaler, use_keys_cubic=true>):
  in_loc_f = (o + 0.5) * scale - 0.5 with scale = in / out (float32), in_loc = floor, delta = in_loc_f - in_loc,
  offset = lrintf(delta * 1024); weights table[offset] far, table[offset] near, table[1024 - offset] near,
  table[1024 - offset] far of InitCoeffsTable(a = -0.5) for taps in_loc - 1 .. in_loc + 2; a tap outside the
  image gets weight 0 and the weights are divided by their sum (when |sum| >= 1000 * FLT_MIN).
- ResizeArea (resize_area_op.cc, align_corners false): scale = in / out (float32); output o spans
  [o * scale, (o + 1) * scale); cell i from floor(start) to ceil(end) - 1 weighs its covered length
  (scale, i + 1 - start, end - i or 1), cells past the edge read the edge cell (Bound); the sum is
  multiplied by 1 / scale.
- ScaleAndTranslate (scale_and_translate_op.cc ComputeSpansCore, sampling_kernels.h): inv_scale =
  1 / scale, kernel_scale = max(inv_scale, 1) with antialias else 1; sample = (o + 0.5) * inv_scale; no
  span when sample < 0 or > in; taps ceil(sample - r * ks - 0.5) .. floor(sample + r * ks - 0.5) clamped to
  the image, weight kernel(|tap + 0.5 - sample| / ks), divided by their sum (when |sum| >= 1000 * FLT_MIN).
  Kernels: triangle (r 1), keyscubic (r 2), mitchellcubic (r 2), lanczos3/5 (r 3/5, 1 at |x| <= 1e-3,
  pi = 3.14159265359), gaussian (r 1.5, sigma 0.5).
Positions use float32 arithmetic where TensorFlow's kernels do (the taps and table entries are then
TensorFlow's own); weights and sums are float64.
"""
import math

import numpy as np

F32 = np.float32
FLT_MIN = float(np.finfo(np.float32).tiny)


def _normalised(taps):
    """taps: list of (index, weight); divided by the sum, or all zero as TensorFlow leaves them."""
    total = sum(w for _, w in taps)
    if abs(total) < 1000.0 * FLT_MIN:
        return []
    return [(i, w / total) for i, w in taps]


def _keys_table(i, far):
    a = -0.5
    x = i / 1024.0
    if not far:
        return ((a + 2) * x - (a + 3)) * x * x + 1
    x += 1.0
    return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a


def bicubic_taps(n_in, n_out):
    scale = F32(n_in) / F32(n_out)
    out = []
    for o in range(n_out):
        in_loc_f = (F32(o) + F32(0.5)) * scale - F32(0.5)
        in_loc = int(math.floor(in_loc_f))
        delta = F32(in_loc_f - F32(in_loc))
        offset = int(np.rint(delta * F32(1024)))  # lrintf: to nearest, ties to even
        weights = [_keys_table(offset, True), _keys_table(offset, False), _keys_table(1024 - offset, False),
                   _keys_table(1024 - offset, True)]
        taps = [(in_loc - 1 + k, w) for k, w in enumerate(weights) if 0 <= in_loc - 1 + k < n_in]
        out.append(_normalised(taps))
    return out


def area_taps(n_in, n_out):
    scale = F32(n_in) / F32(n_out)
    out = []
    for o in range(n_out):
        start, end = F32(o) * scale, F32(o + 1) * scale
        taps = []
        for i in range(int(math.floor(start)), int(math.ceil(end))):
            fi = F32(i)
            if fi < start:
                cover = scale if fi + 1 > end else fi + 1 - start
            else:
                cover = end - fi if fi + 1 > end else F32(1.0)
            taps.append((min(n_in - 1, max(0, i)), float(cover) / float(scale)))
        out.append(taps)
    return out


def _lanczos(r):
    def k(x):
        if x > r:
            return 0.0
        if x <= 1e-3:
            return 1.0
        pi = 3.14159265359
        return r * math.sin(pi * x) * math.sin(pi * x / r) / (pi * pi * x * x)
    return k


def _keyscubic(x):
    if x >= 2.0:
        return 0.0
    if x >= 1.0:
        return ((-0.5 * x + 2.5) * x - 4.0) * x + 2.0
    return ((1.5 * x - 2.5) * x) * x + 1.0


def _mitchell(x):
    if x >= 2.0:
        return 0.0
    if x >= 1.0:
        return (((-7.0 / 18.0) * x + 2.0) * x - 10.0 / 3.0) * x + 16.0 / 9.0
    return (((7.0 / 6.0) * x - 2.0) * x) * x + 8.0 / 9.0


KERNELS = {
    "triangle": (1.0, lambda x: 1.0 - x if x < 1.0 else 0.0),
    "keyscubic": (2.0, _keyscubic),
    "mitchellcubic": (2.0, _mitchell),
    "lanczos3": (3.0, _lanczos(3.0)),
    "lanczos5": (5.0, _lanczos(5.0)),
    "gaussian": (1.5, lambda x: 0.0 if x >= 1.5 else math.exp(-x * x / (2.0 * 0.5 * 0.5))),
}


def scale_translate_taps(n_in, n_out, kernel, antialias):
    radius, fn = KERNELS[kernel]
    scale = F32(n_out) / F32(n_in)
    inv_scale = F32(1.0 / float(scale))
    ks = max(inv_scale, F32(1.0)) if antialias else F32(1.0)
    reach = F32(radius) * ks
    out = []
    for o in range(n_out):
        sample = (F32(o) + F32(0.5)) * inv_scale
        if sample < 0 or sample > n_in:
            out.append([])
            continue
        first = min(max(int(math.ceil(sample - reach - F32(0.5))), 0), n_in - 1)
        last = min(max(int(math.floor(sample + reach - F32(0.5))), 0), n_in - 1)
        taps = [(s, fn(abs(float(F32(s) + F32(0.5) - sample) / float(ks)))) for s in range(first, last + 1)]
        out.append(_normalised(taps))
    return out


def taps_of(n_in, n_out, method, antialias):
    if method == "area":
        return area_taps(n_in, n_out)
    if method == "bicubic":
        return scale_translate_taps(n_in, n_out, "keyscubic", True) if antialias else bicubic_taps(n_in, n_out)
    if method == "bilinear":
        return scale_translate_taps(n_in, n_out, "triangle", True)
    if method in ("lanczos3", "lanczos5", "gaussian", "mitchellcubic"):
        return scale_translate_taps(n_in, n_out, method, antialias)
    raise SystemExit("tf_resize_reference: no method " + method)


def resize_axis(x, axis, n_out, method, antialias):
    """tf.image.resize(method, antialias) along one axis of a float64 array: each output the weighted sum
    of its taps."""
    rows = []
    for taps in taps_of(x.shape[axis], n_out, method, antialias):
        acc = np.zeros(np.take(x, 0, axis=axis).shape)
        for i, w in taps:
            acc = acc + w * np.take(x, i, axis=axis)
        rows.append(acc)
    return np.stack(rows, axis=axis)
