#!/usr/bin/python3
"""Debian's Fashion-MNIST (package dataset-fashion-mnist) as arrays for a model with two outputs (the
class and whether the garment is footwear) and for segmenting the garment from the background.

  /usr/bin/python3 scripts/fashion_arrays.py OUT_DIR [--train N] [--test N]

Writes, for the first N training and test images in the files' order:
  OUT_DIR/x_train.npy, x_test.npy               float32 (N, 28, 28, 1), pixels / 255 (Keras's (H, W, C))
  OUT_DIR/cls_train.npy, cls_test.npy           int64 (N): the class 0..9 (sparse targets)
  OUT_DIR/footwear_train.npy, footwear_test.npy float32 (N, 1): 1 for sandal (5), sneaker (7), ankle boot (9)
  OUT_DIR/mask_train.npy, mask_test.npy         int64 (N, 28, 28): the garment's silhouette, 1 on the garment
                                                 (pixels > 0.1 with their enclosed holes filled), 0 background
and prints the share of footwear in each part (the accuracy of always answering "not footwear"), the share
of garment pixels, and the floor a segmenter must beat: the mean IoU of the pixel threshold alone (pixels
> 0.1, holes left open) against the masks (scikit-learn's jaccard_score over both classes).
Needs NumPy and SciPy (binary_fill_holes), scikit-learn for the floor; reads the IDX files with gzip.
"""
import argparse
import gzip
import os

import numpy as np
from scipy.ndimage import binary_fill_holes

SOURCE = "/usr/share/datasets/fashion-mnist"
FOOTWEAR = (5, 7, 9)
THRESHOLD = 0.1  # of the pixel's 0..1 value: above is the garment's ink


def idx(path):
    with gzip.open(path, "rb") as f:
        data = f.read()
    dims = data[3]
    shape = [int.from_bytes(data[4 + 4 * i:8 + 4 * i], "big") for i in range(dims)]
    return np.frombuffer(data, dtype=np.uint8, offset=4 + 4 * dims).reshape(shape)


def silhouettes(x):
    """The masks of images x (N, 28, 28) in [0, 1]: ink above THRESHOLD, each image's enclosed holes filled."""
    ink = x > THRESHOLD
    return np.stack([binary_fill_holes(m) for m in ink]).astype(np.int64)


def threshold_floor(x, masks):
    """Mean IoU (both classes) of the bare pixel threshold against the masks."""
    from sklearn.metrics import jaccard_score
    return jaccard_score(masks.ravel(), (x > THRESHOLD).ravel().astype(np.int64), average="macro")


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
        x = images.astype(np.float32) / 255.0
        masks = silhouettes(x)
        save(os.path.join(a.out_dir, f"x_{part}.npy"), x[..., None])
        save(os.path.join(a.out_dir, f"cls_{part}.npy"), labels)
        save(os.path.join(a.out_dir, f"footwear_{part}.npy"), footwear)
        save(os.path.join(a.out_dir, f"mask_{part}.npy"), masks)
        print(f"{part}: {len(labels)} images, footwear {footwear.mean():.4f}, garment pixels {masks.mean():.4f}, "
              f"threshold-only mean IoU {threshold_floor(x, masks):.4f}")


if __name__ == "__main__":
    main()
