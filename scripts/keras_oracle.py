#!/usr/bin/python3
"""Keras oracle: freezes keras-preprocessing's own results into tests/data/golden/.

The C++ tests (tests/data/image_data_generator_test.cpp) compare torchfit against these files and need
no Python at run time. Run this script with Debian's Python, which has the reference implementation
(packages python3-keras-preprocessing, python3-numpy, python3-scipy, python3-pil):

    /usr/bin/python3 scripts/keras_oracle.py            # rewrite tests/data/golden/
    /usr/bin/python3 scripts/keras_oracle.py --check    # regenerate into a temp dir, compare, change nothing
    /usr/bin/python3 scripts/keras_oracle.py --out DIR  # write somewhere else

What it writes (NumPy .npy, C order, little-endian):
  keras_oracle.json           manifest: library versions, every case's exact parameters and file names
  affine_input.npy            float32 (40, 48, 3): the gradient test image, values 0..255 (HWC)
  affine_ones_3x3.npy         float32 (3, 3, 1): ones (Keras's own rotation test)
  affine_ramp_8x4.npy         float32 (8, 4, 1): row r holds 10 r (the shift test)
  affine_noise_40x48.npy      float32 (40, 48, 3): uniform noise 0..255, NumPy RandomState(0)
  affine_ids_40x48.npy        float32 (40, 48, 1): class ids 0..4 drawn per pixel, RandomState(1) (a mask)
  affine_<case>.npy           apply_affine_transform(<case's input>, ...) then the flips, float32
  load_input.npy              uint8 (28, 28): the gray test image, pixel i = (i * 7919) % 251
  load_<interp>_150x150.npy   uint8 (150, 150, 3): load_img(PNG of it, "rgb", (150, 150), interp)
  resize_input.npy            uint8 (23, 37, 4): the resize test image (RGBA; L = channel 0, RGB = 0..2)
  resize_<c>ch_<h>x<w>.npy    uint8 (6, h, w, c): PIL Image.resize((w, h), filter) of the 1-, 3- or
                              4-channel image (mode L, RGB, RGBA) for the filters in RESIZE_FILTERS order

Exit status: 0 done (or --check found no difference), 1 --check found a difference, 77 the reference
implementation is not importable (nothing written).
"""
import argparse
import json
import os
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_OUT = os.path.join(ROOT, "tests", "data", "golden")
MANIFEST = "keras_oracle.json"
FLOAT_TOLERANCE = 1e-3  # --check: max |new - committed| allowed for float outputs (0..255 scale)

# Each case: TransformParams of the C++ test (degrees, pixels; tx = rows, ty = columns) + fill_mode.
AFFINE_CASES = [
    dict(name="rotation_20", theta=20.0),
    dict(name="combined", theta=20.0, tx=3.0, ty=-4.0, shear=10.0, zx=1.2, zy=0.9),
    dict(name="combined_flips", theta=20.0, tx=3.0, ty=-4.0, shear=10.0, zx=1.2, zy=0.9,
         flip_horizontal=True, flip_vertical=True),
    dict(name="combined_flips_reflect", theta=20.0, tx=3.0, ty=-4.0, shear=10.0, zx=1.2, zy=0.9,
         flip_horizontal=True, flip_vertical=True, fill_mode="reflect"),
    dict(name="horizontal_flip", flip_horizontal=True),
]
# Keras's fill modes at the borders: rotation + shift + shear + a zoom large enough that every border
# is sampled well beyond (rows -45..105 of 40, columns -53..86 of 48: more than a wrap period out),
# with cval != 0; integer shifts put sample points exactly on the borders.
FAR = dict(theta=30.0, tx=6.0, ty=-9.0, shear=8.0, zx=2.2, zy=2.6, cval=77.5)
for mode in ("nearest", "constant", "reflect", "wrap"):
    AFFINE_CASES.append(dict(name="far_" + mode, fill_mode=mode, **FAR))
for mode in ("constant", "reflect", "wrap"):
    AFFINE_CASES.append(dict(name="far_%s_flips" % mode, fill_mode=mode, flip_horizontal=True,
                             flip_vertical=True, **FAR))
for mode in ("nearest", "constant", "reflect", "wrap"):
    AFFINE_CASES.append(dict(name="shift_5_-7_" + mode, tx=5.0, ty=-7.0, fill_mode=mode, cval=77.5))
AFFINE_CASES += [
    # keras-preprocessing's own test (test_affine_transformations.py): 45 degrees, constant, exact.
    dict(name="keras_test_rotation_45", input="affine_ones_3x3.npy", theta=45.0, fill_mode="constant"),
    dict(name="ramp_shift_2.5_constant", input="affine_ramp_8x4.npy", tx=2.5, fill_mode="constant"),
    dict(name="ramp_shift_-2.5_wrap", input="affine_ramp_8x4.npy", tx=-2.5, fill_mode="wrap"),
    # Uniform noise: neighbouring pixels differ by up to 255, so float32 blending differences show at
    # their largest (the precision figure of docs/data_pipeline.md).
    dict(name="noise_combined", input="affine_noise_40x48.npy", theta=20.0, tx=3.0, ty=-4.0, shear=10.0, zx=1.2,
         zy=0.9),
    dict(name="noise_far_reflect", input="affine_noise_40x48.npy", fill_mode="reflect", **FAR),
]
# interpolation_order 0 (Keras 2's ImageDataGenerator(interpolation_order=0), what a mask generator
# uses): the same geometry sampled at the nearest pixel. The ramp shifts put every point on a half pixel
# (scipy rounds halves up); the id mask and the noise change at every pixel, so any index off shows.
ORDER0_CASES = [
    dict(name="order0_combined_flips", input="affine_ids_40x48.npy", theta=20.0, tx=3.0, ty=-4.0, shear=10.0,
         zx=1.2, zy=0.9, flip_horizontal=True, flip_vertical=True),
    dict(name="order0_noise_combined", input="affine_noise_40x48.npy", theta=20.0, tx=3.0, ty=-4.0, shear=10.0,
         zx=1.2, zy=0.9),
    dict(name="order0_ramp_shift_2.5_constant", input="affine_ramp_8x4.npy", tx=2.5, fill_mode="constant"),
    dict(name="order0_ramp_shift_-2.5_reflect", input="affine_ramp_8x4.npy", tx=-2.5, fill_mode="reflect"),
    dict(name="order0_ramp_shift_-2.5_wrap", input="affine_ramp_8x4.npy", tx=-2.5, fill_mode="wrap"),
]
for mode in ("nearest", "constant", "reflect", "wrap"):
    ORDER0_CASES.append(dict(name="order0_far_" + mode, input="affine_ids_40x48.npy", fill_mode=mode, **FAR))
    ORDER0_CASES.append(dict(name="order0_shift_5_-7_" + mode, input="affine_ids_40x48.npy", tx=5.0, ty=-7.0,
                             fill_mode=mode, cval=77.5))
AFFINE_CASES += [dict(c, order=0) for c in ORDER0_CASES]
# What Keras's own test and the issue state; the script stops if the reference says otherwise.
EXPECTED = {"keras_test_rotation_45": [[0, 0, 1], [0, 1, 1], [0, 0, 1]],
            "ramp_shift_2.5_constant": [25, 35, 45, 55, 65, 0, 0, 0]}
NEUTRAL = dict(theta=0.0, tx=0.0, ty=0.0, shear=0.0, zx=1.0, zy=1.0, flip_horizontal=False,
               flip_vertical=False, fill_mode="nearest", cval=0.0, input="affine_input.npy", order=1)

# PIL resizes (Image.resize, what load_img calls): torchfit's interpolation names -> PIL filters.
# torchfit's "area" is an alias of "box".
RESIZE_FILTERS = ["nearest", "bilinear", "bicubic", "box", "hamming", "lanczos"]
RESIZE_SIZES = [(50, 81), (9, 14), (40, 20)]  # up, down, rows up + columns down (from 23 x 37)
LOAD_INTERPOLATIONS = ["nearest", "bilinear"]


def import_reference():
    try:
        import numpy
        import PIL
        import scipy
        import keras_preprocessing
        from keras_preprocessing.image import affine_transformations  # noqa: F401 (needs scipy)
    except Exception as e:  # noqa: BLE001 - any import failure means "no oracle here"
        print("keras_oracle: reference implementation unavailable:", e, file=sys.stderr)
        sys.exit(77)
    return {"keras_preprocessing": keras_preprocessing.__version__, "numpy": numpy.__version__,
            "scipy": scipy.__version__, "PIL": PIL.__version__}


def gradient_image(np):
    """The C++ test's gradient_image() as (H, W, C): 4y + 2x; 255 - 5x; 128 + 100 sin(y/6) cos(x/7)."""
    y, x = np.mgrid[0:40, 0:48].astype(np.float64)
    planes = [4.0 * y + 2.0 * x, 255.0 - 5.0 * x, 128.0 + 100.0 * np.sin(y / 6.0) * np.cos(x / 7.0)]
    return np.stack(planes, axis=-1).astype(np.float32)


def affine_inputs(np):
    ramp = np.repeat((10.0 * np.arange(8, dtype=np.float32))[:, None, None], 4, axis=1)
    noise = np.random.RandomState(0).uniform(0.0, 255.0, (40, 48, 3)).astype(np.float32)
    ids = np.random.RandomState(1).randint(0, 5, (40, 48, 1)).astype(np.float32)
    return {"affine_input.npy": gradient_image(np), "affine_ones_3x3.npy": np.ones((3, 3, 1), np.float32),
            "affine_ramp_8x4.npy": ramp, "affine_noise_40x48.npy": noise, "affine_ids_40x48.npy": ids}


def affine_case(np, inputs, case):
    from keras_preprocessing.image.affine_transformations import apply_affine_transform, flip_axis
    p = dict(NEUTRAL, **case)
    out = apply_affine_transform(inputs[p["input"]], p["theta"], p["tx"], p["ty"], p["shear"], p["zx"],
                                 p["zy"], row_axis=0, col_axis=1, channel_axis=2, fill_mode=p["fill_mode"],
                                 cval=p["cval"], order=p["order"])
    if p["flip_horizontal"]:
        out = flip_axis(out, 1)
    if p["flip_vertical"]:
        out = flip_axis(out, 0)
    out = np.ascontiguousarray(out, dtype=np.float32)
    if p["name"] in EXPECTED:
        got = out[:, :, 0] if p["name"].startswith("keras") else out[:, 0, 0]
        if not np.allclose(got, EXPECTED[p["name"]], atol=1e-6):
            raise SystemExit("keras_oracle: %s gave %s, expected %s" % (p["name"], got.tolist(),
                                                                       EXPECTED[p["name"]]))
    return p, out


def load_cases(np, work):
    from PIL import Image
    from keras_preprocessing.image import img_to_array, load_img
    gray = (np.arange(28 * 28, dtype=np.int64) * 7919 % 251).astype(np.uint8).reshape(28, 28)
    png = os.path.join(work, "load_input.png")
    Image.fromarray(gray, mode="L").save(png)
    loaded = {}
    for interp in LOAD_INTERPOLATIONS:
        arr = img_to_array(load_img(png, color_mode="rgb", target_size=(150, 150), interpolation=interp))
        if not np.array_equal(arr, np.round(arr)):
            raise SystemExit("keras_oracle: load_img returned non-integer values")
        loaded[interp] = arr.astype(np.uint8)
    return gray, loaded


def resize_input(np):
    """uint8 (23, 37, 4): smooth gradients plus a hash pattern (every rounding path), alpha with 0, 255
    and values between (PIL premultiplies RGBA while resizing)."""
    y, x = np.mgrid[0:23, 0:37].astype(np.int64)
    noise = (y * 37 + x) * 7919 % 251
    r = (y * 11 + x * 5 + noise // 4) % 256
    g = np.where((x + y) % 5 == 0, 255, (x * 7 + noise) % 256)
    b = (255 - y * 9 - x * 2 + noise % 17) % 256
    a = np.select([x % 7 == 0, x % 7 == 3], [0, 255], (y * 13 + x * 3 + noise) % 256)
    return np.stack([r, g, b, a], axis=-1).astype(np.uint8)


def resize_cases(np, image):
    """{file name: uint8 (len(RESIZE_FILTERS), h, w, c)} for 1, 3 and 4 channels and RESIZE_SIZES."""
    from PIL import Image
    filters = {"nearest": Image.NEAREST, "bilinear": Image.BILINEAR, "bicubic": Image.BICUBIC,
               "box": Image.BOX, "hamming": Image.HAMMING, "lanczos": Image.LANCZOS}
    sources = {1: Image.fromarray(image[:, :, 0], "L"), 3: Image.fromarray(image[:, :, :3], "RGB"),
               4: Image.fromarray(image, "RGBA")}
    out = {}
    for c, src in sources.items():
        for h, w in RESIZE_SIZES:
            stack = [np.asarray(src.resize((w, h), filters[f])).reshape(h, w, c) for f in RESIZE_FILTERS]
            out["resize_%dch_%dx%d.npy" % (c, h, w)] = np.ascontiguousarray(np.stack(stack), dtype=np.uint8)
    return out


# Decoding cases: (file written by Pillow, how it is written, color_mode for load_img).
JPEG_CASES = [
    dict(name="jpeg_420", mode="RGB", save=dict(quality=75), color_modes=["rgb", "grayscale"]),
    dict(name="jpeg_444", mode="RGB", save=dict(quality=90, subsampling=0), color_modes=["rgb"]),
    dict(name="jpeg_progressive", mode="RGB", save=dict(quality=80, progressive=True), color_modes=["rgb"]),
    dict(name="jpeg_gray", mode="L", save=dict(quality=85), color_modes=["rgb", "grayscale"]),
    dict(name="jpeg_cmyk", mode="CMYK", save=dict(quality=90), color_modes=["rgb"]),
]


def colour_pattern(np, h, w, channels):
    """A deterministic image with edges and gradients, (h, w, channels) uint8."""
    y, x = np.mgrid[0:h, 0:w]
    planes = [(7 * x + 3 * y) % 256, (255 - 9 * y + x * x) % 256, ((x // 5 + y // 4) % 2) * 200 + 20,
              (x * y) % 256]
    return np.stack(planes[:channels], axis=-1).astype(np.uint8)


def write_png16(path, arr):
    """A 16-bit PNG (gray (h, w) or RGB (h, w, 3) uint16), written by hand: Pillow cannot write 16-bit RGB."""
    import struct
    import zlib
    h, w = arr.shape[:2]
    ctype = 0 if arr.ndim == 2 else 2
    raw = b"".join(b"\x00" + arr[y].astype(">u2").tobytes() for y in range(h))

    def chunk(tag, data):
        return struct.pack(">I", len(data)) + tag + data + struct.pack(">I", zlib.crc32(tag + data) & 0xFFFFFFFF)
    with open(path, "wb") as f:
        f.write(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 16, ctype, 0, 0, 0)) +
                chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b""))


def decode_cases(np, out_dir):
    """JPEGs written by Pillow and 16-bit PNGs, each with load_img's pixels (no resize): the decoders."""
    from PIL import Image
    from keras_preprocessing.image import img_to_array, load_img
    cases = []
    for case in JPEG_CASES:
        channels = {"L": 1, "RGB": 3, "CMYK": 4}[case["mode"]]
        pixels = colour_pattern(np, 29, 37, channels)
        image = Image.fromarray(pixels[..., 0] if channels == 1 else pixels, mode=case["mode"])
        files = [case["name"] + ".jpg"]
        image.save(os.path.join(out_dir, files[0]), "JPEG", **case["save"])
        cases.append(dict(case, input=files[0], outputs={}))
    ramp = (np.arange(8 * 40, dtype=np.int64).reshape(8, 40) * 211 % 65536).astype(np.uint16)
    ramp[0, :] = np.arange(40) * 7  # 0..273: Pillow clips a 16-bit gray image to 0..255
    write_png16(os.path.join(out_dir, "png16_gray.png"), ramp)
    cases.append(dict(name="png16_gray", input="png16_gray.png", color_modes=["rgb", "grayscale"], outputs={}))
    write_png16(os.path.join(out_dir, "png16_rgb.png"), np.stack([ramp, ramp[::-1], 65535 - ramp], axis=-1))
    cases.append(dict(name="png16_rgb", input="png16_rgb.png", color_modes=["rgb"], outputs={}))
    for case in cases:
        for color_mode in case["color_modes"]:
            arr = img_to_array(load_img(os.path.join(out_dir, case["input"]), color_mode=color_mode))
            case["outputs"][color_mode] = "%s_%s.npy" % (case["name"], color_mode)
            np.save(os.path.join(out_dir, case["outputs"][color_mode]), arr.astype(np.uint8))
    return cases


def generate(out_dir, versions):
    import numpy as np
    os.makedirs(out_dir, exist_ok=True)
    inputs = affine_inputs(np)
    for name, image in inputs.items():
        np.save(os.path.join(out_dir, name), image)
    cases = []
    for case in AFFINE_CASES:
        params, result = affine_case(np, inputs, case)
        params["output"] = "affine_%s.npy" % case["name"]
        np.save(os.path.join(out_dir, params["output"]), result)
        cases.append(params)
    decode = decode_cases(np, out_dir)
    with tempfile.TemporaryDirectory() as work:
        gray, loaded = load_cases(np, work)
    np.save(os.path.join(out_dir, "load_input.npy"), gray)
    for interp, arr in loaded.items():
        np.save(os.path.join(out_dir, "load_%s_150x150.npy" % interp), arr)
    image = resize_input(np)
    np.save(os.path.join(out_dir, "resize_input.npy"), image)
    resized = resize_cases(np, image)
    for name, arr in resized.items():
        np.save(os.path.join(out_dir, name), arr)
    manifest = {
        "generator": "scripts/keras_oracle.py (run with /usr/bin/python3)",
        "versions": versions,
        "affine": {"function": "keras_preprocessing.image.affine_transformations.apply_affine_transform "
                               "(row_axis=0, col_axis=1, channel_axis=2, order=the case's order), then flip_axis "
                               "(columns for flip_horizontal, rows for flip_vertical)",
                   "inputs": sorted(inputs), "cases": cases},
        "load_img": {"function": "keras_preprocessing.image.load_img + img_to_array",
                     "input": "load_input.npy", "color_mode": "rgb", "target_size": [150, 150],
                     "outputs": {i: "load_%s_150x150.npy" % i for i in LOAD_INTERPOLATIONS}},
        "resize": {"function": "PIL.Image.resize((w, h), filter) of Image.fromarray(input[:, :, :c]) in mode "
                               "L (c = 1), RGB (c = 3) or RGBA (c = 4); outputs stacked in filter order",
                   "input": "resize_input.npy", "filters": RESIZE_FILTERS,
                   "sizes": [list(s) for s in RESIZE_SIZES],
                   "outputs": sorted(resized)},
        "decode": {"function": "keras_preprocessing.image.load_img (no target_size) + img_to_array, as uint8",
                   "cases": decode},
    }
    with open(os.path.join(out_dir, MANIFEST), "w") as f:
        json.dump(manifest, f, indent=1, sort_keys=True)
        f.write("\n")
    return manifest


def check(committed_dir, versions):
    """Regenerates into a temp dir and compares with the committed files; returns the exit status."""
    import numpy as np
    with tempfile.TemporaryDirectory() as fresh:
        manifest = generate(fresh, versions)
        try:
            with open(os.path.join(committed_dir, MANIFEST)) as f:
                old = json.load(f)
        except OSError as e:
            print("keras_oracle: no committed manifest:", e)
            return 1
        if old.get("versions") != versions:
            print("note: committed files come from %s, this Python has %s" % (old.get("versions"), versions))
        status = 0
        for key in ("affine", "load_img", "resize", "decode"):
            if old.get(key) != manifest[key]:
                print("DIFF %s: parameters differ from the committed manifest" % key)
                status = 1
        names = manifest["affine"]["inputs"] + [c["output"] for c in manifest["affine"]["cases"]]
        names += ["load_input.npy"] + sorted(manifest["load_img"]["outputs"].values())
        names += ["resize_input.npy"] + manifest["resize"]["outputs"]
        names += [name for c in manifest["decode"]["cases"] for name in c["outputs"].values()]
        for name in names:
            new = np.load(os.path.join(fresh, name))
            try:
                ref = np.load(os.path.join(committed_dir, name))
            except OSError as e:
                print("DIFF %s: %s" % (name, e))
                status = 1
                continue
            if new.dtype != ref.dtype or new.shape != ref.shape:
                print("DIFF %s: %s%s vs committed %s%s" % (name, new.dtype, new.shape, ref.dtype, ref.shape))
                status = 1
                continue
            diff = float(np.max(np.abs(new.astype(np.float64) - ref.astype(np.float64))))
            limit = FLOAT_TOLERANCE if new.dtype.kind == "f" else 0.0
            print("%s %-34s max |new - committed| = %g" % ("ok  " if diff <= limit else "DIFF", name, diff))
            status |= diff > limit
        print("compared %d files" % len(names))
        return int(status)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=DEFAULT_OUT, help="output folder (default tests/data/golden)")
    ap.add_argument("--check", action="store_true", help="compare a fresh run with --out; write nothing")
    args = ap.parse_args()
    versions = import_reference()
    if args.check:
        sys.exit(check(args.out, versions))
    manifest = generate(args.out, versions)
    print("wrote %d affine cases, %d load_img cases, %d resize files and %d decode cases to %s (%s)" %
          (len(manifest["affine"]["cases"]), len(manifest["load_img"]["outputs"]), len(manifest["resize"]["outputs"]),
           len(manifest["decode"]["cases"]), args.out, ", ".join("%s %s" % kv for kv in sorted(versions.items()))))


if __name__ == "__main__":
    main()
