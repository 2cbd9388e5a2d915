#!/usr/bin/python3
"""The article's CNN training step in PyTorch-Python, as people run it: nn.Sequential + Adam +
CrossEntropyLoss, torch.set_num_threads(cores), batch 32 of 150x150x3 random images, 8 classes.
Prints one JSON line: {"impl": "pytorch", "median_ms": ..., "steps_ms": [...], "final_loss": ...}.
Run with /usr/bin/python3 (Debian's python3-torch). Process-level malloc settings come from the caller's
environment (GLIBC_TUNABLES), so the same script measures the default and the tuned process."""
import json
import os
import sys
import time

import torch
import torch.nn as nn

steps = int(sys.argv[1]) if len(sys.argv) > 1 else 6
warmup = int(sys.argv[2]) if len(sys.argv) > 2 else 2
torch.set_num_threads(os.cpu_count())
torch.manual_seed(0)
model = nn.Sequential(
    nn.Conv2d(3, 32, 3), nn.ReLU(), nn.MaxPool2d(2),
    nn.Conv2d(32, 64, 3), nn.ReLU(), nn.MaxPool2d(2),
    nn.Flatten(),
    nn.Linear(82944, 512), nn.ReLU(), nn.Dropout(0.2),
    nn.Linear(512, 64), nn.ReLU(), nn.Dropout(0.2),
    nn.Linear(64, 8),
)
opt = torch.optim.Adam(model.parameters(), lr=1e-3, eps=1e-7)
loss_fn = nn.CrossEntropyLoss()
x = torch.rand(32, 3, 150, 150)
y = torch.randint(0, 8, (32,))
times = []
for i in range(warmup + steps):
    t0 = time.perf_counter()
    opt.zero_grad()
    loss = loss_fn(model(x), y)
    loss.backward()
    opt.step()
    value = loss.item()
    times.append((time.perf_counter() - t0) * 1000)
timed = sorted(times[warmup:])
print(json.dumps({"impl": "pytorch", "threads": torch.get_num_threads(), "median_ms": timed[len(timed) // 2],
                  "steps_ms": times[warmup:], "final_loss": value}))
