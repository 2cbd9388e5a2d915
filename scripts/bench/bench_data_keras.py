#!/usr/bin/python3
"""Keras baseline for scripts/bench_data.sh: images/s of keras_preprocessing's ImageDataGenerator +
flow_from_directory with the seeds' augmentation, single process (one core), on the same folder.

Usage: /usr/bin/python3 scripts/bench/bench_data_keras.py DIR [--batches N] [--target-size S] [--batch-size B]
Prints: keras ImageDataGenerator images=... seconds=... images_per_s=...
"""
import argparse
import os
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")  # one core, like one torchfit worker

from keras_preprocessing.image import ImageDataGenerator  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("dir")
    ap.add_argument("--batches", type=int, default=15)
    ap.add_argument("--target-size", type=int, default=150)
    ap.add_argument("--batch-size", type=int, default=32)
    ap.add_argument("--no-augment", action="store_true")
    a = ap.parse_args()
    kw = dict(rescale=1.0 / 255)
    if not a.no_augment:
        kw.update(shear_range=0.2, zoom_range=0.2, rotation_range=20, horizontal_flip=True)
    it = ImageDataGenerator(**kw).flow_from_directory(
        a.dir, target_size=(a.target_size, a.target_size), batch_size=a.batch_size, class_mode="categorical", seed=1)
    next(it)  # warm-up
    t0 = time.perf_counter()
    c0 = time.process_time()
    images = 0
    for _ in range(a.batches):
        x, _ = next(it)
        images += x.shape[0]
    s = time.perf_counter() - t0
    cpu = time.process_time() - c0
    print("keras ImageDataGenerator images=%d seconds=%.3f images_per_s=%.1f cpu_seconds=%.3f images_per_cpu_s=%.1f "
          "augment=%d size=%d batch=%d" % (images, s, images / s, cpu, images / cpu, 0 if a.no_augment else 1,
                                           a.target_size, a.batch_size))


if __name__ == "__main__":
    main()
