#!/usr/bin/python3
"""scikit-learn's bundled diabetes data (442 patients, 10 features, a disease-progression target) as arrays
for fit_arrays, and scikit-learn's LinearRegression on Keras's validation_split as the sanity floor.

  /usr/bin/python3 scripts/diabetes_arrays.py OUT_DIR [--validation-split 0.2]

Writes OUT_DIR/x.npy (float32 (442, 10), each feature standardised with the mean and standard deviation
of the training part only), OUT_DIR/y.npy (float32 (442, 1), the raw target), and prints the linear
model's validation MSE and MAE. The split is Keras 3's (array_slicing.train_validation_split): the first
floor(N * (1 - split)) samples train, the rest validate, in the file's order. Needs python3-sklearn.
"""
import argparse
import math
import os

import numpy as np
from sklearn.datasets import load_diabetes
from sklearn.linear_model import LinearRegression


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("out_dir")
    p.add_argument("--validation-split", type=float, default=0.2)
    a = p.parse_args()
    x, y = load_diabetes(return_X_y=True, scaled=False)  # the raw CSV values, in the file's order
    n = x.shape[0]
    split_at = int(math.floor(n * (1.0 - a.validation_split)))
    mean, std = x[:split_at].mean(0), x[:split_at].std(0)
    xs = ((x - mean) / std).astype("<f4")
    os.makedirs(a.out_dir, exist_ok=True)
    np.save(os.path.join(a.out_dir, "x.npy"), xs)
    np.save(os.path.join(a.out_dir, "y.npy"), y.astype("<f4").reshape(-1, 1))
    lin = LinearRegression().fit(xs[:split_at], y[:split_at])
    err = lin.predict(xs[split_at:]) - y[split_at:]
    print(f"diabetes: {n} samples, {x.shape[1]} features; train {split_at}, validation {n - split_at}")
    print(f"LinearRegression (scikit-learn): val_mse {np.mean(err ** 2):.1f} val_mae {np.mean(np.abs(err)):.2f}")
    base = y[split_at:] - y[:split_at].mean()
    print(f"predicting the training mean: val_mse {np.mean(base ** 2):.1f} val_mae {np.mean(np.abs(base)):.2f}")


if __name__ == "__main__":
    main()
