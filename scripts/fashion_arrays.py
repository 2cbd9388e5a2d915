#!/usr/bin/python3
"""Debian's Fashion-MNIST (package dataset-fashion-mnist) as arrays for a model with two outputs: the
class and whether the garment is footwear.

  /usr/bin/python3 scripts/fashion_arrays.py OUT_DIR [--train N] [--test N]

Writes, for the first N training and test images in the files' order:
  OUT_DIR/x_train.npy, x_test.npy               float32 (N, 28, 28, 1), pixels / 255 (Keras's (H, W, C))
  OUT_DIR/cls_train.npy, cls_test.npy           int64 (N): the class 0..9 (sparse targets)
  OUT_DIR/footwear_train.npy, footwear_test.npy float32 (N, 1): 1 for sandal (5), sneaker (7), ankle boot (9)
and prints the share of footwear in each part (the accuracy of always answering "not footwear").
Needs NumPy only; reads the IDX files with the standard library's gzip.
"""
import argparse
import gzip
import os

import numpy as np

SOURCE = "/usr/share/datasets/fashion-mnist"
FOOTWEAR = (5, 7, 9)


def idx(path):
    with gzip.open(path, "rb") as f:
        data = f.read()
    dims = data[3]
    shape = [int.from_bytes(data[4 + 4 * i:8 + 4 * i], "big") for i in range(dims)]
    return np.frombuffer(data, dtype=np.uint8, offset=4 + 4 * dims).reshape(shape)


def save(path, array):
    np.save(path + ".tmp.npy", array)
    os.replace(path + ".tmp.npy", path)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("out_dir")
    p.add_argument("--train", type=int, default=60000)
    p.add_argument("--test", type=int, default=10000)
    a = p.parse_args()
    os.makedirs(a.out_dir, exist_ok=True)
    for part, prefix, n in (("train", "train", a.train), ("test", "t10k", a.test)):
        images = idx(os.path.join(SOURCE, prefix + "-images-idx3-ubyte.gz"))[:n]
        labels = idx(os.path.join(SOURCE, prefix + "-labels-idx1-ubyte.gz"))[:n].astype(np.int64)
        footwear = np.isin(labels, FOOTWEAR).astype(np.float32).reshape(-1, 1)
        save(os.path.join(a.out_dir, f"x_{part}.npy"), (images.astype(np.float32) / 255.0)[..., None])
        save(os.path.join(a.out_dir, f"cls_{part}.npy"), labels)
        save(os.path.join(a.out_dir, f"footwear_{part}.npy"), footwear)
        print(f"{part}: {len(labels)} images, footwear {footwear.mean():.4f}")


if __name__ == "__main__":
    main()
