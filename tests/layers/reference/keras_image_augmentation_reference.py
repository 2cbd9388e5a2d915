"""Float64 NumPy references of Keras 3's image augmentation layers at GIVEN random parameters, written from
Keras 3's source (not from torchfit's code); keras_layers_reference.py hands it the "augment_*" requests.

Sources:
- affine_transform: keras/src/backend/numpy/image.py affine_transform. The output pixel (row y, column x),
  integer pixel coordinates, samples the input at column a0*x + a1*y + a2 and row b0*x + b1*y + b2 (the
  transform's 8 numbers [a0, a1, a2, b0, b1, b2, c0, c1]); with c0 or c1 non-zero both are divided by
  k = c0*x + c1*y + 1, as tf.raw_ops.ImageProjectiveTransformV3 documents (Keras's NumPy backend drops that
  division; its layers always pass c0 = c1 = 0).
- map_coordinates: keras/src/backend/numpy/image.py map_coordinates: the image padded (np.pad: nearest ->
  "edge", reflect -> "symmetric" (d c b a | a b c d | d c b a), wrap -> periodic, constant -> fill_value) far
  enough that every sample lies inside, then scipy.ndimage.map_coordinates, order 0 (nearest: floor(c + 0.5))
  or 1 (bilinear). Wrap is padded by index % size (see map_coordinates: np.pad's wrap is not periodic for
  pads longer than the axis on both sides).
- Colour layers: RandomContrast._adjust_contrast (per image and channel, (x - mean) * factor + mean over the
  rows and columns) then np.clip to value_range; RandomBrightness (x + delta, clipped to the sorted
  value_range); RandomGrayscale (np.where(should_apply, rgb_to_grayscale, x), weights 0.2989, 0.5870, 0.1140).
  Requests "augment_contrast" ("factors", "value_range"), "augment_brightness" ("deltas", "value_range"),
  "augment_grayscale" ("applies"): the drawn parameters, one per image.
- HSV layers: the NumPy backend's rgb_to_hsv / hsv_to_rgb (keras/src/backend/numpy/image.py, float64 here, its
  epsilon that of float64). RandomHue.transform_images (request "augment_hue": "deltas" = invert * factor *
  0.5 per image, "value_range"): _transform_value_range to [0, 1], H + delta wrapped once, hsv_to_rgb, clip to
  [0, 1], back to value_range. RandomSaturation.transform_images ("augment_saturation": "factors" = the
  multipliers factor / (1 - factor + epsilon) per image, "value_range"): S * factor clipped to the sorted
  value_range, no rescaling of the image.
- RandomErasing ("augment_erasing": "areas" (N, 2) = the mix_weight draws before the sqrt, "starts" (N, 2) =
  the uniform draws of _compute_crop_bounds for x then y, "applies", "fill_value" (null, a number or three),
  "noise" (N, C, H, W) = the normal draws when fill_value is null, "value_range").
- MixUp ("augment_mixup": "weights" = mix_weight, "permutation") and CutMix ("augment_cutmix": "lambdas" =
  the Beta draws, "starts" (N, 2) as RandomErasing's, "permutation"): transform_images; with "labels" (N, K)
  the request gives transform_labels' mixed labels instead.
- RandomColorDegeneration ("augment_color_degeneration": "factors", "value_range"): x + f * (gray - x), gray
  rgb_to_grayscale's (a 1-channel image its own copy), np.clip to the sorted value_range.
- RandomSharpness ("augment_sharpness": "factors" before Keras's doubling, "value_range"): the depthwise 3x3
  kernel [[a, a, a], [a, b, a], [a, a, a]], a = 1/13, b = 5/13, padding "same" (zeros outside), then
  x + (1 - 2f) * (smoothed - x), np.clip.
- RandomPosterization ("augment_posterization": "bits", "value_range"): _transform_value_range to [0, 255],
  astype(uint8), >> (8 - bits) << (8 - bits), back to value_range.
- Solarization ("augment_solarization": "additions", "thresholds" on the [0, 255] scale, "value_range").
- AutoContrast ("augment_auto_contrast": "value_range"): min and max over rows and columns per image and
  channel, 255 / (high - low), np.clip, back to value_range, NaN results replaced by the input.
- Equalization ("augment_equalization": "value_range", "bins"): per channel over the whole batch, the float32
  histogram of _custom_histogram_fixed_width, _apply_equalization's lookup table (np.round: half to even).
- RandAugment ("augment_rand_augment": "ops", the operation indices in order; each operation's draws as the
  requests above name them, "shear_x"/"shear_y", "height_translate"/"width_translate", "angles", "deltas",
  "degeneration", "contrast", "sharpness", "bits", "additions"/"thresholds"; "value_range", "interpolation"):
  RandAugment.transform_images applying the operations in turn (the geometric ones with fill_mode "reflect").
- RandomCrop (request "augment_crop": "height", "width", "training", optional "top"/"left"): random_crop below.
- Transform matrices: RandomRotation via BaseImagePreprocessingLayer._compute_affine_matrix (angle in
  degrees, centre 0.5 of (width - 1) and (height - 1)); RandomZoom._get_zoom_matrix; RandomTranslation.
  _get_translation_matrix (translations = fraction * size); RandomShear._get_shear_matrix.

Requests: {"op": "augment_affine", "x", "transforms": [[8 numbers] per image], "interpolation", "fill_mode",
"fill_value"}; "augment_rotation" with "angles" (degrees); "augment_zoom" with "height_zoom", "width_zoom";
"augment_translation" with "height_translate", "width_translate" (fractions of the size); "augment_shear"
with "shear_x", "shear_y" (the drawn factors times the drawn sign). x as torchfit holds it, (N, C, H, W).
"""
import math

import numpy as np
import scipy.ndimage


def tensor(t):
    return np.array(t["data"], dtype=np.float64).reshape(t["shape"])


def map_coordinates(image, coordinates, order, fill_mode, fill_value):
    """keras/src/backend/numpy/image.py map_coordinates, in float64."""
    padding = [
        (max(-int(np.floor(c.min())) + 1, 0), max(int(np.ceil(c.max())) + 1 - size, 0))
        for c, size in zip(coordinates, image.shape)
    ]
    shifted = [c + p[0] for p, c in zip(padding, coordinates)]
    pad_mode = {"nearest": "edge", "mirror": "reflect", "reflect": "symmetric"}.get(fill_mode, fill_mode)
    if fill_mode == "constant":
        padded = np.pad(image, padding, mode=pad_mode, constant_values=fill_value)
    elif fill_mode == "wrap":
        # np.pad(mode="wrap") is not periodic when an axis is padded on both sides by more than its size
        # (NumPy 1.24: arange(5) padded (1, 6) ends 3 4 4, not 3 4 0); Keras documents wrap as periodic
        # (a b c d | a b c d | a b c d) and its JAX and torch backends compute index % size: the same padding
        # written as that index map.
        padded = image
        for axis, (before, after) in enumerate(padding):
            index = np.arange(-before, image.shape[axis] + after) % image.shape[axis]
            padded = np.take(padded, index, axis=axis)
    else:
        padded = np.pad(image, padding, mode=pad_mode)
    return scipy.ndimage.map_coordinates(padded, shifted, order=order, mode=fill_mode, cval=fill_value)


def affine_transform(images, transforms, interpolation, fill_mode, fill_value):
    """images (N, H, W, C) float64, transforms (N, 8): keras/src/backend/numpy/image.py affine_transform (its
    meshgrid of (row, column, channel) indices), with TensorFlow's projective division by k."""
    order = {"nearest": 0, "bilinear": 1}[interpolation]
    n, h, w, c = images.shape
    rows, cols, chans = np.meshgrid(np.arange(h), np.arange(w), np.arange(c), indexing="ij")
    out = []
    for i in range(n):
        a0, a1, a2, b0, b1, b2, c0, c1 = [float(v) for v in transforms[i]]
        k = c0 * cols + c1 * rows + 1.0
        src_col = (a0 * cols + a1 * rows + a2) / k
        src_row = (b0 * cols + b1 * rows + b2) / k
        coords = np.stack([src_row, src_col, chans.astype(np.float64)])
        out.append(map_coordinates(images[i], coords, order, fill_mode, fill_value))
    return np.stack(out)


def rotation_matrix(angles, h, w):
    """BaseImagePreprocessingLayer._compute_affine_matrix with translate 0, scale 1, shear 0 (RandomRotation)."""
    rows = []
    cx, cy = 0.5 * (w - 1), 0.5 * (h - 1)
    for angle in angles:
        t = angle * math.pi / 180.0
        cos, sin, shx, shy, scale = math.cos(t), math.sin(t), math.tan(0.0), math.tan(0.0), 1.0
        a0 = scale * (cos + shx * sin)
        a1 = scale * (-sin + shx * cos)
        a2 = 0.0 + cx - cx * a0 - cy * a1
        b0 = scale * (shy * cos + sin)
        b1 = scale * (shy * -sin + cos)
        b2 = 0.0 + cy - cx * b0 - cy * b1
        rows.append([a0, a1, a2, b0, b1, b2, 0.0, 0.0])
    return np.array(rows)


def zoom_matrix(height_zoom, width_zoom, h, w):
    """RandomZoom._get_zoom_matrix: zooms = [width_zoom, height_zoom]."""
    return np.array([[zx, 0.0, (w - 1.0) / 2.0 * (1.0 - zx), 0.0, zy, (h - 1.0) / 2.0 * (1.0 - zy), 0.0, 0.0]
                     for zy, zx in zip(height_zoom, width_zoom)])


def translation_matrix(height_translate, width_translate, h, w):
    """RandomTranslation.get_random_transformation (fraction * size) and _get_translation_matrix."""
    return np.array([[1.0, 0.0, -(fx * w), 0.0, 1.0, -(fy * h), 0.0, 0.0]
                     for fy, fx in zip(height_translate, width_translate)])


def shear_matrix(shear_x, shear_y):
    """RandomShear._get_shear_matrix: [[1, s_x, 0], [s_y, 1, 0], [0, 0, 1]] (not centred)."""
    return np.array([[1.0, sx, 0.0, sy, 1.0, 0.0, 0.0, 0.0] for sx, sy in zip(shear_x, shear_y)])


def contrast(x, factors, value_range):
    """RandomContrast._adjust_contrast (mean over the height axis, then the width axis) and np.clip."""
    factor = np.array(factors, dtype=np.float64).reshape(-1, 1, 1, 1)
    mean = np.mean(np.mean(x, axis=-3, keepdims=True), axis=-2, keepdims=True)
    return np.clip((x - mean) * factor + mean, value_range[0], value_range[1])


def brightness(x, deltas, value_range):
    """RandomBrightness.transform_images: images + rgb_delta, clipped to the sorted value_range."""
    low, high = sorted(value_range)
    return np.clip(x + np.array(deltas, dtype=np.float64).reshape(-1, 1, 1, 1), low, high)


def grayscale(x, applies):
    """RandomGrayscale.transform_images: np.where(should_apply, rgb_to_grayscale(images), images), the NumPy
    backend's rgb_to_grayscale (tensordot with [0.2989, 0.5870, 0.1140]; a 1-channel image copied)."""
    if x.shape[-1] == 1:
        gray = x.copy()
    else:
        gray = np.expand_dims(np.tensordot(x, np.array([0.2989, 0.5870, 0.1140]), axes=(-1, -1)), axis=-1)
    return np.where(np.array(applies, dtype=bool).reshape(-1, 1, 1, 1), gray, x)


def random_crop(x, req):
    """RandomCrop (Keras 3): in training, _random_crop from the transformation's (h_start, w_start) — the given
    "top"/"left" (drawn when the image is larger on both axes), else get_random_transformation's fallback box
    start — then backend.image.resize (bilinear) when the slice is not (height, width). In inference
    ("training": false) smart_resize: the Resizing reference with crop_to_aspect_ratio."""
    from keras_layers_reference import resizing  # TensorFlow's bilinear resize (half-pixel centres)
    height, width = req["height"], req["width"]
    ih, iw = x.shape[1], x.shape[2]
    if not req["training"]:
        return resizing(x, height, width, "bilinear", True, False, 0.0)
    if "top" in req:
        h_start, w_start = req["top"], req["left"]
    else:
        crop_height = max(min(ih, int(float(iw * height) / width)), 1)
        crop_width = max(min(iw, int(float(ih * width) / height)), 1)
        h_start, w_start = int(float(ih - crop_height) / 2), int(float(iw - crop_width) / 2)
    y = x[:, h_start:h_start + height, w_start:w_start + width, :]
    if y.shape[1] != height or y.shape[2] != width:
        y = resizing(y, height, width, "bilinear", False, False, 0.0)
    return y


def rgb_to_hsv(images):
    """keras/src/backend/numpy/image.py rgb_to_hsv (channels_last)."""
    eps = np.finfo(images.dtype).eps
    images = np.where(np.abs(images) < eps, 0.0, images)
    red, green, blue = [np.squeeze(c, -1) for c in np.split(images, 3, -1)]
    value = np.maximum(np.maximum(red, green), blue)
    minimum = np.minimum(np.minimum(red, green), blue)
    range_ = value - minimum
    safe_value = np.where(value > 0, value, 1.0)
    safe_range = np.where(range_ > 0, range_, 1.0)
    saturation = np.where(value > 0, range_ / safe_value, 0.0)
    norm = 1.0 / (6.0 * safe_range)
    hue = np.where(value == green, norm * (blue - red) + 2.0 / 6.0, norm * (red - green) + 4.0 / 6.0)
    hue = np.where(value == red, norm * (green - blue), hue)
    hue = np.where(range_ > 0, hue, 0.0) + (hue < 0.0).astype(hue.dtype)
    return np.stack([hue, saturation, value], axis=-1)


def hsv_to_rgb(images):
    """keras/src/backend/numpy/image.py hsv_to_rgb (channels_last)."""
    hue, saturation, value = [np.squeeze(c, -1) for c in np.split(images, 3, -1)]
    dh = np.mod(hue, 1.0) * 6.0
    dr = np.clip(np.abs(dh - 3.0) - 1.0, 0.0, 1.0)
    dg = np.clip(2.0 - np.abs(dh - 2.0), 0.0, 1.0)
    db = np.clip(2.0 - np.abs(dh - 4.0), 0.0, 1.0)
    one_minus_s = 1.0 - saturation
    return np.stack([value * (one_minus_s + saturation * d) for d in (dr, dg, db)], axis=-1)


def transform_value_range(images, original, target):
    """BaseImagePreprocessingLayer._transform_value_range."""
    if original[0] == target[0] and original[1] == target[1]:
        return images
    images = (images - original[0]) / (original[1] - original[0])
    return images * (target[1] - target[0]) + target[0]


def hue(x, deltas, value_range):
    """RandomHue.transform_images (channels_last) at the given transformation["factor"]."""
    images = transform_value_range(x, value_range, (0, 1))
    factors = np.array(deltas, dtype=np.float64)[:, None, None]
    images = rgb_to_hsv(images)
    h = images[..., 0] + factors
    h = np.where(h > 1.0, h - 1.0, h)
    h = np.where(h < 0.0, h + 1.0, h)
    images = hsv_to_rgb(np.stack([h, images[..., 1], images[..., 2]], axis=-1))
    return transform_value_range(np.clip(images, 0, 1), (0, 1), value_range)


def saturation(x, factors, value_range):
    """RandomSaturation.transform_images (channels_last) at the given transformation["factor"]."""
    low, high = sorted(value_range)
    images = rgb_to_hsv(x)
    s = np.clip(images[..., 1] * np.array(factors, dtype=np.float64)[:, None, None], low, high)
    return hsv_to_rgb(np.stack([images[..., 0], s, images[..., 2]], axis=-1))


def crop_bounds(image_length, crop_ratio, start):
    """_compute_crop_bounds of RandomErasing and CutMix, with the uniform draw `start` given."""
    crop_length = crop_ratio * image_length
    start_pos = np.array(start, dtype=np.float64) * (image_length - crop_length)
    return start_pos, start_pos + crop_length


def batch_masks(shape, x0, x1, y0, y1):
    """_generate_batch_mask (channels_last): (N, H, W, C) bool."""
    _, h, w, c = shape
    grid_y, grid_x = np.meshgrid(np.arange(h, dtype=np.float64), np.arange(w, dtype=np.float64), indexing="ij")
    grid_y, grid_x = grid_y[None, :, :, None], grid_x[None, :, :, None]
    x0, x1, y0, y1 = [v[:, None, None, None] for v in (x0, x1, y0, y1)]
    masks = (grid_x >= x0) & (grid_x < x1) & (grid_y >= y0) & (grid_y < y1)
    return np.repeat(masks, c, axis=-1)


def erasing(x, req):
    """RandomErasing.get_random_transformation (from the given draws) and transform_images."""
    n, h, w, c = x.shape
    mix_weight = np.sqrt(np.array(req["areas"], dtype=np.float64).reshape(n, 2))
    starts = np.array(req["starts"], dtype=np.float64).reshape(n, 2)
    x0, x1 = crop_bounds(w, mix_weight[:, 0], starts[:, 0])
    y0, y1 = crop_bounds(h, mix_weight[:, 1], starts[:, 1])
    masks = batch_masks(x.shape, x0, x1, y0, y1)
    value_range, fill_value = req["value_range"], req["fill_value"]
    if fill_value is None:
        fill = np.transpose(tensor(req["noise"]), (0, 2, 3, 1)) * value_range[1]
    elif isinstance(fill_value, (list, tuple)):
        fill = np.full_like(x, fill_value)
    else:
        fill = np.ones(x.shape) * fill_value
    fill = np.clip(fill, value_range[0], value_range[1])
    erased = np.where(masks, fill, x)
    return np.where(np.array(req["applies"], dtype=bool)[:, None, None, None], erased, x)


def mix_labels(labels, weights, permutation):
    """transform_labels of MixUp and CutMix."""
    weights = np.array(weights, dtype=np.float64).reshape(-1, 1)
    return weights * labels + (1.0 - weights) * np.take(labels, permutation, axis=0)


def mixup(x, req):
    """MixUp.transform_images / transform_labels at the given mix_weight and permutation_order."""
    weights, permutation = req["weights"], np.array(req["permutation"], dtype=np.int64)
    if "labels" in req:
        return mix_labels(tensor(req["labels"]), weights, permutation)
    mix_weight = np.array(weights, dtype=np.float64).reshape(-1, 1, 1, 1)
    return mix_weight * x + (1.0 - mix_weight) * np.take(x, permutation, axis=0)


def cutmix(x, req):
    """CutMix.get_random_transformation (from the given Beta and uniform draws and permutation) and
    transform_images / transform_labels."""
    n, h, w, _ = x.shape
    ratio = np.sqrt(1.0 - np.array(req["lambdas"], dtype=np.float64))
    starts = np.array(req["starts"], dtype=np.float64).reshape(n, 2)
    x0, x1 = crop_bounds(w, ratio, starts[:, 0])
    y0, y1 = crop_bounds(h, ratio, starts[:, 1])
    masks = batch_masks(x.shape, x0, x1, y0, y1)
    mix_weight = 1.0 - (x1 - x0) * (y1 - y0) / (w * h)
    permutation = np.array(req["permutation"], dtype=np.int64)
    if "labels" in req:
        return mix_labels(tensor(req["labels"]), mix_weight, permutation)
    return np.where(masks, np.take(x, permutation, axis=0), x)


def per_image(values):
    return np.array(values, dtype=np.float64).reshape(-1, 1, 1, 1)


def gray_of(x):
    """ops.image.rgb_to_grayscale, keeping a channel axis of 1."""
    if x.shape[-1] == 1:
        return x.copy()
    return np.expand_dims(np.tensordot(x, np.array([0.2989, 0.5870, 0.1140]), axes=(-1, -1)), axis=-1)


def color_degeneration(x, factors, value_range):
    """RandomColorDegeneration.transform_images."""
    low, high = sorted(value_range)
    return np.clip(x + per_image(factors) * (gray_of(x) - x), low, high)


def sharpness(x, factors, value_range):
    """RandomSharpness.transform_images: depthwise_conv "same" (zero padding) with the 3x3 kernel."""
    low, high = sorted(value_range)
    a, b = 1.0 / 13.0, 5.0 / 13.0
    kernel = np.array([[a, a, a], [a, b, a], [a, a, a]])
    n, h, w, c = x.shape
    padded = np.zeros((n, h + 2, w + 2, c))
    padded[:, 1:h + 1, 1:w + 1, :] = x
    smoothed = np.zeros_like(x)
    for dy in range(3):
        for dx in range(3):
            smoothed += kernel[dy, dx] * padded[:, dy:dy + h, dx:dx + w, :]
    s = per_image(factors) * 2
    return np.clip(x + (1.0 - s) * (smoothed - x), low, high)


def posterization(x, bits, value_range):
    """RandomPosterization.transform_images."""
    vr = sorted(value_range)
    shift = (8 - np.array(bits, dtype=np.int64)).reshape(-1, 1, 1, 1)
    v = transform_value_range(x, vr, (0, 255)).astype(np.uint8).astype(np.int64)
    v = np.left_shift(np.right_shift(v, shift), shift).astype(np.uint8).astype(np.float64)
    return transform_value_range(v, (0, 255), vr)


def solarization(x, additions, thresholds, value_range):
    """Solarization.transform_images."""
    vr = sorted(value_range)
    r = np.clip(transform_value_range(x, vr, (0, 255)) + per_image(additions), 0, 255)
    r = np.where(r < per_image(thresholds), r, 255 - r)
    return transform_value_range(r, (0, 255), vr)


def auto_contrast(x, value_range):
    """AutoContrast.transform_images (min and max over axes (1, 2) of (N, H, W, C))."""
    vr = sorted(value_range)
    v = transform_value_range(x, vr, (0, 255))
    low = np.min(v, axis=(1, 2), keepdims=True)
    high = np.max(v, axis=(1, 2), keepdims=True)
    with np.errstate(divide="ignore", invalid="ignore"):
        scale = 255.0 / (high - low)
        offset = -low * scale
        y = np.clip(v * scale + offset, 0.0, 255.0)
    y = transform_value_range(y, (0, 255), vr)
    return np.where(np.isnan(y), x, y)


def equalize_channel(channel, bins):
    """Equalization._custom_histogram_fixed_width and _apply_equalization on a [0, 255] channel (N, H, W)."""
    values = channel.astype(np.float32)
    scaled = (values - np.float32(0)) * (bins - 1) / (np.float32(255) - np.float32(0))
    indices = np.clip(scaled.astype(np.int32), 0, bins - 1)
    hist = np.bincount(indices.reshape(-1), minlength=bins)
    if np.count_nonzero(hist) <= 1:
        return channel
    cdf = np.cumsum(hist)
    cdf_min = cdf[np.nonzero(cdf)[0][0]]
    denominator = cdf[-1] - cdf_min
    if denominator == 0:
        denominator = 1
    lookup_table = np.clip(np.round(((cdf - cdf_min) * 255) / denominator), 0, 255)
    scaled_channel = (channel / 255.0) * (bins - 1)
    return lookup_table[np.clip(scaled_channel, 0, bins - 1).astype(np.int32)]


def equalization(x, value_range, bins):
    """Equalization.transform_images (channels_last: images[..., i], the whole batch); _scale_values always
    runs (Keras compares the sorted list with the tuple (0, 255))."""
    vr = sorted(value_range)

    def scale_values(v, source, target):
        scale = (target[1] - target[0]) / (source[1] - source[0])
        return v * scale + (target[0] - source[0] * scale)

    channels = [scale_values(equalize_channel(scale_values(x[..., i], vr, (0, 255)), bins), (0, 255), vr)
                for i in range(x.shape[-1])]
    return np.stack(channels, axis=-1)


def rand_augment(x, req):
    """RandAugment.transform_images: each picked operation (RandAugment._AUGMENT_LAYERS order) in turn."""
    vr, interpolation = req["value_range"], req["interpolation"]
    n, h, w, _ = x.shape

    def geometric(images, transforms):
        return affine_transform(images, transforms, interpolation, "reflect", 0.0)

    ops = [
        lambda y: geometric(y, shear_matrix(req["shear_x"], req["shear_y"])),
        lambda y: geometric(y, translation_matrix(req["height_translate"], req["width_translate"], h, w)),
        lambda y: geometric(y, rotation_matrix(req["angles"], h, w)),
        lambda y: brightness(y, req["deltas"], vr),
        lambda y: color_degeneration(y, req["degeneration"], vr),
        lambda y: contrast(y, req["contrast"], vr),
        lambda y: sharpness(y, req["sharpness"], vr),
        lambda y: posterization(y, req["bits"], vr),
        lambda y: solarization(y, req["additions"], req["thresholds"], vr),
        lambda y: auto_contrast(y, vr),
        lambda y: equalization(y, vr, 256),
    ]
    for index in req["ops"]:
        x = ops[index](x)
    return x


COLOR_OPS = {
    "augment_hue": lambda x, req: hue(x, req["deltas"], req["value_range"]),
    "augment_saturation": lambda x, req: saturation(x, req["factors"], req["value_range"]),
    "augment_erasing": erasing,
    "augment_color_degeneration": lambda x, req: color_degeneration(x, req["factors"], req["value_range"]),
    "augment_sharpness": lambda x, req: sharpness(x, req["factors"], req["value_range"]),
    "augment_posterization": lambda x, req: posterization(x, req["bits"], req["value_range"]),
    "augment_solarization": lambda x, req: solarization(x, req["additions"], req["thresholds"],
                                                        req["value_range"]),
    "augment_auto_contrast": lambda x, req: auto_contrast(x, req["value_range"]),
    "augment_equalization": lambda x, req: equalization(x, req["value_range"], req["bins"]),
    "augment_rand_augment": rand_augment,
    "augment_crop": random_crop,
    "augment_contrast": lambda x, req: contrast(x, req["factors"], req["value_range"]),
    "augment_brightness": lambda x, req: brightness(x, req["deltas"], req["value_range"]),
    "augment_grayscale": lambda x, req: grayscale(x, req["applies"]),
}

MIX_OPS = {"augment_mixup": mixup, "augment_cutmix": cutmix}


def run_augmentation(req):
    """The reference's output for an "augment_*" request, (N, C, H, W)."""
    op = req["op"]
    x = np.transpose(tensor(req["x"]), (0, 2, 3, 1))  # (N, H, W, C), Keras's layout
    n, h, w, _ = x.shape
    if op in MIX_OPS:
        y = MIX_OPS[op](x, req)
        return y if "labels" in req else np.transpose(y, (0, 3, 1, 2))
    if op in COLOR_OPS:
        return np.transpose(COLOR_OPS[op](x, req), (0, 3, 1, 2))
    if op == "augment_affine":
        transforms = np.array(req["transforms"], dtype=np.float64).reshape(n, 8)
    elif op == "augment_rotation":
        transforms = rotation_matrix(req["angles"], h, w)
    elif op == "augment_zoom":
        transforms = zoom_matrix(req["height_zoom"], req["width_zoom"], h, w)
    elif op == "augment_translation":
        transforms = translation_matrix(req["height_translate"], req["width_translate"], h, w)
    elif op == "augment_shear":
        transforms = shear_matrix(req["shear_x"], req["shear_y"])
    else:
        raise ValueError("unknown op " + op)
    y = affine_transform(x, transforms, req["interpolation"], req["fill_mode"], req["fill_value"])
    return np.transpose(y, (0, 3, 1, 2))
