#!/usr/bin/python3
"""Writes tests/data/golden/merge_reference.json: NumPy outputs of Keras's merge layers on fixed inputs.

The definitions are TensorFlow/Keras's (keras/layers/merge.py): Add = sum, Subtract = a - b,
Multiply = product, Average = sum / n, Maximum / Minimum element-wise, Concatenate(axis) = np.concatenate
over the channels-last (N, H, W, C) arrays, with NumPy broadcasting for (1, 1, C) inputs.
Run: /usr/bin/python3 scripts/merge_reference.py
"""
import json
import os

import numpy as np


def data(shape, scale, phase):
    n = int(np.prod(shape))
    return (np.sin(np.arange(n, dtype=np.float64) * scale + phase)).reshape(shape).astype(np.float32)


def main():
    a = data((2, 3, 4, 5), 0.37, 0.1)
    b = data((2, 3, 4, 5), 0.21, 1.3)
    c = data((2, 3, 4, 5), 0.53, 2.0)
    row = data((2, 1, 1, 5), 0.77, 0.4)   # broadcast over H and W
    ch2 = data((2, 3, 4, 2), 0.11, 0.9)   # for Concatenate on channels
    h2 = data((2, 1, 4, 5), 0.29, 0.5)    # for Concatenate on H
    out = {
        "inputs": {k: {"shape": list(v.shape), "values": v.ravel().tolist()}
                   for k, v in dict(a=a, b=b, c=c, row=row, ch2=ch2, h2=h2).items()},
        "cases": [
            {"layer": "Add", "inputs": ["a", "b", "c"], "expected": a + b + c},
            {"layer": "Add", "inputs": ["a", "row"], "expected": a + row},
            {"layer": "Subtract", "inputs": ["a", "b"], "expected": a - b},
            {"layer": "Multiply", "inputs": ["a", "b", "c"], "expected": a * b * c},
            {"layer": "Average", "inputs": ["a", "b", "c"], "expected": (a + b + c) / 3},
            {"layer": "Maximum", "inputs": ["a", "b", "c"], "expected": np.maximum(np.maximum(a, b), c)},
            {"layer": "Minimum", "inputs": ["a", "b", "row"], "expected": np.minimum(np.minimum(a, b), row)},
            {"layer": "Concatenate", "axis": -1, "inputs": ["a", "ch2"], "expected": np.concatenate([a, ch2], -1)},
            {"layer": "Concatenate", "axis": 3, "inputs": ["ch2", "a"], "expected": np.concatenate([ch2, a], 3)},
            {"layer": "Concatenate", "axis": 1, "inputs": ["a", "h2"], "expected": np.concatenate([a, h2], 1)},
            {"layer": "Concatenate", "axis": 2, "inputs": ["a", "b"], "expected": np.concatenate([a, b], 2)},
        ],
    }
    for case in out["cases"]:
        e = case["expected"]
        case["expected"] = {"shape": list(e.shape), "values": e.astype(np.float32).ravel().tolist()}
    path = os.path.join(os.path.dirname(__file__), "..", "tests", "data", "golden", "merge_reference.json")
    with open(path, "w") as f:
        json.dump(out, f)
        f.write("\n")


if __name__ == "__main__":
    main()
