#!/usr/bin/python3
"""Per-operator table of a LibTorch profiler trace written by `bench_step --profile FILE`.

Every operator's self time (its duration less that of the operators it called, per thread) is charged
to the phase it ran in — the scopes torchfit::forward, torchfit::backward and torchfit::optimizer that
Trainer opens around each step's parts — and printed in ms per step, largest first, with the phase
totals. Time outside any operator inside a phase (e.g. torchfit's FusedAdam loop, which is no LibTorch
operator) is listed as "(own code)".

  build/apps/bench_step --steps 6 --profile /tmp/step.trace
  /usr/bin/python3 scripts/bench/profile_summary.py /tmp/step.trace --steps 6
"""
import argparse
import collections
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from op_table import op_table, print_table  # noqa: E402

PHASES = ("torchfit::forward", "torchfit::backward", "torchfit::optimizer")

p = argparse.ArgumentParser()
p.add_argument("trace")
p.add_argument("--steps", type=int, required=True, help="steps the trace covers (bench_step --steps)")
p.add_argument("--top", type=int, default=16)
p.add_argument("--json", default="", help="also write the table as JSON to this file")
args = p.parse_args()

with open(args.trace) as f:
    data = json.load(f)
events = data["traceEvents"] if isinstance(data, dict) else data
by_thread = collections.defaultdict(list)
for e in events:
    if e.get("ph") == "X" and "dur" in e:
        by_thread[e.get("tid")].append(e)

per_op = collections.defaultdict(float)  # (phase, name) -> self microseconds over all steps
for evs in by_thread.values():
    evs.sort(key=lambda e: (float(e["ts"]), -float(e["dur"])))
    stack = []  # [event, end, child time]
    def close(item):
        ev, _, children = item
        phase = next((s[0]["name"] for s in reversed(stack) if s[0]["name"] in PHASES), "other")
        name = "(own code)" if ev["name"] in PHASES else ev["name"]
        if ev["name"] in PHASES:
            phase = ev["name"]
        per_op[(phase.replace("torchfit::", ""), name)] += float(ev["dur"]) - children
    for ev in evs:
        start, end = float(ev["ts"]), float(ev["ts"]) + float(ev["dur"])
        while stack and stack[-1][1] <= start:
            close(stack.pop())
        if stack:
            stack[-1][2] += float(ev["dur"])
        stack.append([ev, end, 0.0])
    while stack:
        close(stack.pop())

rows, totals = op_table(per_op, args.steps)
print(", ".join(f"{ph} {totals[ph]:.1f} ms" for ph in ("forward", "backward", "optimizer", "other") if ph in totals)
      + f" per step ({args.steps} steps)")
print_table(rows, totals, args.top, args.json)
