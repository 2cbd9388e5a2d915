#!/usr/bin/python3
"""Model files whose weights declare shapes far larger than the model needs, written with h5py in
Keras's layouts (tests/saving/shape_bomb_test.cpp, tests/scripts/robustness_test.sh).

  shape_bomb.py OUT_DIR
  shape_bomb.py --short-storage CHECKPOINT OUT   a torchfit checkpoint (a LibTorch zip) whose tensor
                                                 dense.kernel has a storage of one element, its shape kept

The model: Input (2, 2, 1) -> Flatten -> Dense 3 (softmax): its kernel is (4, 3), its bias (3,). Writes:
  ok.h5              the model as tf.keras 2 model.save writes it, with real weights
  bomb.h5            the same, the kernel dataset declaring (20000, 20000) float32 with nothing stored
                     (HDF5 allocates a dataset's storage late: the file stays a few KB)
  huge.h5            the kernel declaring (200000, 100000) float32 (80 GB)
  int_kernel.h5      the kernel stored as int32 (4, 3)
  ok.keras           the model as a Keras 3 .keras zip (stored entries, as Keras 3 writes them)
  bomb.keras         the zip with model.weights.h5's kernel declaring (20000, 20000)
  lying_size.keras   a deflated zip whose central directory declares model.weights.h5 as 3 GB
  inflating.keras    a deflated zip whose model.weights.h5 really inflates to 64 MiB (a zero-filled
                     dataset beside the weights): more than this 4x3 model can need
"""
import io
import json
import os
import pickletools
import struct
import sys
import zipfile

import h5py
import numpy as np

STR = h5py.string_dtype()
rng = np.random.default_rng(37)
KERNEL = rng.normal(0, 0.5, (4, 3)).astype(np.float32)
BIAS = rng.normal(0, 0.1, 3).astype(np.float32)


def layer(cls, **config):
    return {"class_name": cls, "config": config}


LAYERS = [
    layer("InputLayer", batch_input_shape=[None, 2, 2, 1], dtype="float32", name="img"),
    layer("Flatten", name="flatten", data_format="channels_last"),
    layer("Dense", name="dense", units=3, activation="softmax", use_bias=True),
]
CONFIG = {"class_name": "Sequential", "config": {"name": "seq", "layers": LAYERS}}


def write_h5(path, kernel_shape=None, kernel_dtype=np.float32):
    with h5py.File(path, "w") as f:
        f.attrs["model_config"] = json.dumps(CONFIG)
        f.attrs["keras_version"] = "2.4.0"
        f.attrs["backend"] = "tensorflow"
        mw = f.create_group("model_weights")
        mw.attrs["layer_names"] = np.array([l["config"]["name"] for l in LAYERS], dtype=STR)
        for name in ("img", "flatten"):
            mw.create_group(name).attrs["weight_names"] = np.array([], dtype=np.float64)
        g = mw.create_group("dense")
        g.attrs["weight_names"] = np.array(["dense/kernel:0", "dense/bias:0"], dtype=STR)
        if kernel_shape is None:
            g.create_dataset("dense/kernel:0", data=KERNEL.astype(kernel_dtype))
        else:
            g.create_dataset("dense/kernel:0", shape=kernel_shape, dtype=kernel_dtype)  # nothing stored
        g.create_dataset("dense/bias:0", data=BIAS)


def weights_h5(kernel_shape=None, padding=0):
    buf = io.BytesIO()
    with h5py.File(buf, "w") as f:
        f.create_group("layers/flatten/vars")  # Keras 3 writes a group for a weightless layer too
        g = f.create_group("layers/dense/vars")
        if kernel_shape is None:
            g.create_dataset("0", data=KERNEL)
        else:
            g.create_dataset("0", shape=kernel_shape, dtype=np.float32)
        g.create_dataset("1", data=BIAS)
        f.create_group("optimizer/vars")
        if padding:
            f.create_dataset("padding", data=np.zeros(padding, dtype=np.uint8))
    return buf.getvalue()


def write_zip(path, weights, compression=zipfile.ZIP_STORED):
    config = json.loads(json.dumps(CONFIG))
    config["config"]["layers"][0] = layer("InputLayer", batch_shape=[None, 2, 2, 1], dtype="float32", name="img")
    with zipfile.ZipFile(path, "w", compression) as z:
        z.writestr("metadata.json", json.dumps({"keras_version": "3.5.0", "date_saved": "2026-01-01@00:00:00"}))
        z.writestr("config.json", json.dumps(config))
        z.writestr("model.weights.h5", weights)


def lie_about_size(path, entry, size):
    """Rewrites the central-directory record of `entry` to declare `size` bytes uncompressed (zip64)."""
    data = bytearray(open(path, "rb").read())
    name = entry.encode()
    at = 0
    while True:
        at = data.find(b"PK\x01\x02", at)
        n = struct.unpack_from("<H", data, at + 28)[0]
        if data[at + 46:at + 46 + n] == name:
            break
        at += 4
    struct.pack_into("<I", data, at + 24, size & 0xFFFFFFFF)
    if size > 0xFFFFFFFF:
        raise ValueError("keep the lie under 4 GiB (no zip64 record is written)")
    open(path, "wb").write(bytes(data))


def main(out):
    os.makedirs(out, exist_ok=True)
    write_h5(os.path.join(out, "ok.h5"))
    write_h5(os.path.join(out, "bomb.h5"), (20000, 20000))
    write_h5(os.path.join(out, "huge.h5"), (200000, 100000))
    write_h5(os.path.join(out, "int_kernel.h5"), kernel_dtype=np.int32)
    write_zip(os.path.join(out, "ok.keras"), weights_h5())
    write_zip(os.path.join(out, "bomb.keras"), weights_h5((20000, 20000)))
    lying = os.path.join(out, "lying_size.keras")
    write_zip(lying, weights_h5(), zipfile.ZIP_DEFLATED)
    lie_about_size(lying, "model.weights.h5", 3_000_000_000)
    write_zip(os.path.join(out, "inflating.keras"), weights_h5(padding=64 << 20), zipfile.ZIP_DEFLATED)
    np.save(os.path.join(out, "input.npy"), rng.uniform(0, 1, (2, 2, 2, 1)).astype(np.float32))
    x = np.load(os.path.join(out, "input.npy")).reshape(2, -1).astype(np.float64)
    z = x @ KERNEL.astype(np.float64) + BIAS
    e = np.exp(z - z.max(axis=1, keepdims=True))
    np.save(os.path.join(out, "expected.npy"), (e / e.sum(axis=1, keepdims=True)).astype(np.float32))


def short_storage(checkpoint, out, name="dense.kernel"):
    """The checkpoint with the storage of tensor `name` declared and stored as one element (its shape and
    strides kept): a consistent file whose tensor reaches past its storage."""
    with zipfile.ZipFile(checkpoint) as src:
        pkl_name = next(n for n in src.namelist() if n.endswith("/data.pkl"))
        pkl = bytearray(src.read(pkl_name))
        seen_name, key = False, None
        for op, arg, pos in pickletools.genops(bytes(pkl)):
            if op.name == "BINUNICODE" and arg == name:
                seen_name = True
            elif seen_name and key is None and op.name == "BINUNICODE":
                key = arg  # the storage's record: <archive>/data/<key>
            elif key is not None and op.name in ("BININT1", "BININT2", "BININT"):
                size = {"BININT1": 1, "BININT2": 2, "BININT": 4}[op.name]
                pkl[pos + 1:pos + 1 + size] = (1).to_bytes(size, "little")  # numel 1
                break
        record = pkl_name.rsplit("/", 1)[0] + "/data/" + key
        with zipfile.ZipFile(out, "w", zipfile.ZIP_STORED) as z:
            for info in src.infolist():
                data = bytes(pkl) if info.filename == pkl_name else src.read(info.filename)
                z.writestr(info.filename, data[:4] if info.filename == record else data)


if __name__ == "__main__":
    if sys.argv[1] == "--short-storage":
        short_storage(sys.argv[2], sys.argv[3])
    else:
        main(sys.argv[1])
