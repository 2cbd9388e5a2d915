"""The per-operator table shared by profile_step.py and profile_summary.py."""
import json


def op_table(per_op_us, steps):
    """per_op_us: {(phase, operator): self microseconds over `steps` steps} -> (rows (ms per step, phase,
    operator) largest first, totals per phase)."""
    rows = sorted(((us / 1000 / steps, ph, op) for (ph, op), us in per_op_us.items()), reverse=True)
    totals = {}
    for ms, ph, _ in rows:
        totals[ph] = totals.get(ph, 0.0) + ms
    return rows, totals


def print_table(rows, totals, top, json_path="", **extra):
    """Prints the `top` rows as a markdown table; writes all rows, the totals and `extra` as JSON to
    `json_path` when given."""
    print("| phase | operator | ms per step |")
    print("|---|---|---|")
    for ms, ph, op in rows[:top]:
        print(f"| {ph} | {op} | {ms:.1f} |")
    if json_path:
        with open(json_path, "w") as f:
            json.dump(dict(extra, totals=totals, ops=[{"phase": ph, "op": op, "ms": ms} for ms, ph, op in rows]),
                      f, indent=1)
