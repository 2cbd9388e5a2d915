#!/usr/bin/python3
"""The article's CNN training step in PyTorch-Python, as people run it: nn.Sequential + Adam +
CrossEntropyLoss, torch.set_num_threads(cores), batch 32 of 150x150x3 random images, 8 classes.
Prints one JSON line: {"impl": "pytorch", "median_ms": ..., "steps_ms": [...], "final_loss": ...}.
Usage: pytorch_step.py [STEPS [WARMUP]] [--bf16] [--channels-last] [--device cpu|cuda]
  --bf16           forward and loss under torch.autocast(args.device, dtype=torch.bfloat16), as the PyTorch
                   mixed-precision recipe does (backward outside it; weights and Adam stay float32)
  --channels-last  model and input in torch.channels_last
  --device cuda    on the GPU (eager; autocast on "cuda"; each step ends with loss.item(), a synchronisation;
                   the input stays on the GPU, as bench_step's)
Run with /usr/bin/python3 (Debian's python3-torch). Process-level malloc settings come from the caller's
environment (GLIBC_TUNABLES), so the same script measures the default and the tuned process."""
import argparse
import contextlib
import json
import os
import time

import torch
import torch.nn as nn

parser = argparse.ArgumentParser()
parser.add_argument("steps", type=int, nargs="?", default=6)
parser.add_argument("warmup", type=int, nargs="?", default=2)
parser.add_argument("--bf16", action="store_true")
parser.add_argument("--channels-last", action="store_true")
parser.add_argument("--device", default="cpu", choices=["cpu", "cuda"])
args = parser.parse_args()
steps, warmup = args.steps, args.warmup
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
model = model.to(args.device)
x, y = x.to(args.device), y.to(args.device)
if args.device == "cuda":
    torch.backends.cudnn.benchmark = True
if args.channels_last:
    model = model.to(memory_format=torch.channels_last)
    x = x.contiguous(memory_format=torch.channels_last)
autocast = (lambda: torch.autocast(args.device, dtype=torch.bfloat16)) if args.bf16 else contextlib.nullcontext
times = []
for i in range(warmup + steps):
    t0 = time.perf_counter()
    opt.zero_grad()
    with autocast():
        loss = loss_fn(model(x), y)
    loss.backward()
    opt.step()
    value = loss.item()
    times.append((time.perf_counter() - t0) * 1000)
timed = sorted(times[warmup:])
impl = "pytorch" + ("-cuda" if args.device == "cuda" else "") + ("-bf16" if args.bf16 else "") + ("-channels-last" if args.channels_last else "")
print(json.dumps({"impl": impl, "threads": torch.get_num_threads(), "median_ms": timed[len(timed) // 2],
                  "steps_ms": times[warmup:], "final_loss": value}))
