#!/usr/bin/python3
"""Best float32 GEMM rate of this machine's BLAS through NumPy (OpenBLAS): n x n, median of repeats.
Prints one JSON line {"impl": "numpy-sgemm", "n": n, "gflops": ...}."""
import json
import sys
import time

import numpy as np

n = int(sys.argv[1]) if len(sys.argv) > 1 else 2048
reps = int(sys.argv[2]) if len(sys.argv) > 2 else 5
rng = np.random.default_rng(0)
a = rng.random((n, n), dtype=np.float32)
b = rng.random((n, n), dtype=np.float32)
a @ b
times = []
for _ in range(reps):
    t0 = time.perf_counter()
    a @ b
    times.append(time.perf_counter() - t0)
t = sorted(times)[len(times) // 2]
print(json.dumps({"impl": "numpy-sgemm", "n": n, "gflops": 2 * n ** 3 / t / 1e9}))
