#!/usr/bin/python3
"""Per-operator profile of the article's CNN training step as torchfit runs it, on the same LibTorch
(Debian's python3-torch): batch 32 of 150x150x3, channels_last activations, max-pooling before the ReLU,
Flatten as torchfit's (x.flatten(1): a copy of the channels_last tensor into (C, H, W) order), Dense
82944->512->64->8, Dropout 0.2, softmax cross-entropy, Adam.

torch.autograd.profiler over --steps steps after --warmup; every operator's self CPU time is charged to
the phase it ran in (forward, backward, optimizer) and printed in ms per step, largest first, with the
phase totals and the median wall time of a step. Run it with torchfit's process settings for a like
comparison (docs/benchmarks.md):

  GLIBC_TUNABLES=glibc.malloc.mmap_max=0:glibc.malloc.trim_threshold=2147483647 \\
  OPENBLAS_CORETYPE=SkylakeX /usr/bin/python3 scripts/bench/profile_step.py

and with the AVX2 paths forced: ONEDNN_MAX_CPU_ISA=AVX2 ATEN_CPU_CAPABILITY=avx2 OPENBLAS_CORETYPE=Haswell.
--json FILE also writes the table as JSON.
"""
import argparse
import collections
import os
import statistics
import sys
import time

import torch
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from op_table import op_table, print_table  # noqa: E402

p = argparse.ArgumentParser()
p.add_argument("--steps", type=int, default=6)
p.add_argument("--warmup", type=int, default=2)
p.add_argument("--threads", type=int, default=os.cpu_count())
p.add_argument("--top", type=int, default=14)
p.add_argument("--json", default="")
p.add_argument("--memory-format", choices=("channels_last", "contiguous"), default="channels_last",
               help="activation layout (torchfit's default on the CPU: channels_last)")
p.add_argument("--no-onednn", action="store_true", help="convolutions on ATen's own kernels (torch.backends.mkldnn off)")
args = p.parse_args()
if args.no_onednn:
    torch.backends.mkldnn.enabled = False
torch.set_num_threads(args.threads)
torch.manual_seed(0)


class PoolThenRelu(nn.Module):
    """Conv2D(relu) -> MaxPooling2D run as convolution -> pooling -> ReLU (torchfit's default)."""

    def __init__(self, cin, cout):
        super().__init__()
        self.conv = nn.Conv2d(cin, cout, 3)
        self.pool = nn.MaxPool2d(2)

    def forward(self, x):
        return torch.relu_(self.pool(self.conv(x)))


model = nn.Sequential(
    PoolThenRelu(3, 32), PoolThenRelu(32, 64), nn.Flatten(),
    nn.Linear(36 * 36 * 64, 512), nn.ReLU(inplace=True), nn.Dropout(0.2),
    nn.Linear(512, 64), nn.ReLU(inplace=True), nn.Dropout(0.2), nn.Linear(64, 8),
)
FORMAT = torch.channels_last if args.memory_format == "channels_last" else torch.contiguous_format
model = model.to(memory_format=FORMAT)
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
x = torch.rand(32, 3, 150, 150).contiguous(memory_format=FORMAT)
y = torch.randint(0, 8, (32,))
loss_fn = nn.CrossEntropyLoss()


def step(record):
    with record("forward"):
        loss = loss_fn(model(x), y)
    with record("backward"):
        opt.zero_grad(set_to_none=True)
        loss.backward()
    with record("optimizer"):
        opt.step()
    return loss.item()


class NoRecord:
    def __init__(self, _):
        pass

    def __enter__(self):
        return self

    def __exit__(self, *_):
        return False


for _ in range(args.warmup):
    step(NoRecord)
walls = []
with torch.autograd.profiler.profile() as prof:
    for _ in range(args.steps):
        t0 = time.perf_counter()
        step(torch.autograd.profiler.record_function)
        walls.append(1000 * (time.perf_counter() - t0))

PHASES = ("forward", "backward", "optimizer")
per_op = collections.defaultdict(float)  # (phase, op) -> self CPU us over all steps
for e in prof.function_events:
    if e.name in PHASES:
        continue
    parent, phase = e.cpu_parent, "other"
    while parent is not None:
        if parent.name in PHASES:
            phase = parent.name
            break
        parent = parent.cpu_parent
    per_op[(phase, e.name)] += e.self_cpu_time_total
rows, totals = op_table(per_op, args.steps)
wall = statistics.median(walls)
print(f"median step {wall:.1f} ms (profiled, {args.steps} steps, {args.threads} threads, {args.memory_format}); "
      + ", ".join(f"{ph} {totals.get(ph, 0.0):.1f} ms" for ph in PHASES) + " (self CPU time per step)")
print_table(rows, totals, args.top, args.json, median_ms=wall)
