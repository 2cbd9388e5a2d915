#!/usr/bin/python3
"""Report of scripts/compare_cpu_gpu.sh: RESULTS/report.md and RESULTS/ms_per_step.png.

Usage: /usr/bin/python3 scripts/report/compare_report.py RESULTS_DIR

Reads what compare_cpu_gpu.sh put in RESULTS_DIR: meta.json (commands, devices run and skipped with
the reason, load averages), <dev>_run.json / <dev>_epochs.csv / <dev>_steps.csv per training run
(train_cnn's run files, see docs/training.md), matmul.csv (matmul_bench --csv) and device_info.json.
Figures are over the timed steps only: the warm-up steps listed in run.json ("warmup") are left out,
as train_cnn's epochs.csv does. The chart needs matplotlib (Debian python3-matplotlib, Agg backend);
without it the report says so and no PNG is written. Standard library otherwise. See
docs/cpu_vs_gpu.md for how to read the report.
"""
import csv
import json
import math
import os
import statistics
import sys

ARTICLE = {"cpu": "Intel i7-10750H", "gpu": "NVIDIA RTX 2060 (laptop)", "cpu_s": 413.0, "gpu_s": 43.0,
           "steps": 1000, "batch": 32, "size": 150}


def percentile(values, q):
    """Linear interpolation between closest ranks, as trainer.cpp's percentile()."""
    if not values:
        return float("nan")
    v = sorted(values)
    pos = q * (len(v) - 1)
    lo, hi = math.floor(pos), math.ceil(pos)
    return v[lo] + (v[hi] - v[lo]) * (pos - lo)


def read_csv(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def fnum(x, digits=1):
    if x is None or (isinstance(x, float) and (math.isnan(x) or math.isinf(x))):
        return "—"
    return f"{x:,.{digits}f}"


def ratio(a, b):
    if a is None or b is None or not b or math.isnan(a) or math.isnan(b):
        return None
    return a / b


class Run:
    """One train_cnn run: its files and the figures over its timed steps."""

    def __init__(self, results, rec):
        self.device = rec["device"]
        self.prefix = rec["prefix"]
        self.rec = rec
        self.error = None
        p = lambda name: os.path.join(results, f"{self.prefix}_{name}")
        try:
            self.info = json.load(open(p("run.json")))
            self.epochs = read_csv(p("epochs.csv"))
            self.steps = read_csv(p("steps.csv"))
        except (OSError, ValueError) as e:
            self.error = f"run files missing or unreadable ({e.__class__.__name__}: {e})"
            return
        if rec["exit_status"] != 0:
            self.error = f"train_cnn exited {rec['exit_status']}"
        elif self.info.get("status") != "completed":
            self.error = f"run status '{self.info.get('status')}'"
        if not self.epochs:
            self.error = self.error or "epochs.csv has no rows"
            return
        warm = {(int(w["epoch"]), int(w["step"])) for w in self.info.get("warmup", [])}
        self.warm_keys = warm
        self.timed = [s for s in self.steps if (int(s["epoch"]), int(s["step"])) not in warm]
        step_ms = [float(s["step_ms"]) for s in self.timed]
        self.n_timed, self.n_warm = len(step_ms), len(self.steps) - len(step_ms)
        self.median = percentile(step_ms, 0.5)
        self.p90 = percentile(step_ms, 0.9)
        self.compute_median = percentile([float(s["compute_ms"]) for s in self.timed], 0.5)
        total = sum(step_ms)
        data = sum(float(s["data_ms"]) for s in self.timed)
        self.data_share = data / total if total > 0 else float("nan")
        # images/s over all epochs: each epoch's images/s (epochs.csv, real batch sizes) times its
        # timed milliseconds gives its images; steps.csv has no batch size column.
        images = 0.0
        for e in self.epochs:
            ems = sum(float(s["step_ms"]) for s in self.timed if s["epoch"] == e["epoch"])
            images += float(e["images_per_s"]) * ems / 1000.0
        self.images_per_s = images / (total / 1000.0) if total > 0 else float("nan")
        secs = [float(e["seconds"]) for e in self.epochs]
        self.s_per_epoch = statistics.mean(secs)
        gf = [s.get("gflops_per_s") for s in self.info.get("epoch_summaries", [])]
        gf = [g for g in gf if g]
        self.gflops = statistics.mean(gf) if gf else float("nan")
        self.final = self.info.get("final_metrics", {})

    @property
    def ok(self):
        return self.error is None


def device_label(dev):
    return "CPU" if dev == "cpu" else f"GPU ({dev})"


def env_of(run):
    env = run.info.get("environment", {})
    args = run.info.get("arguments", {})
    cuda = env.get("cuda", {})
    gpus = env.get("gpus", [])
    gpu_txt = "; ".join(f"cuda:{g.get('index')} {g.get('name')} (cc {g.get('compute_capability')}, "
                        f"{g.get('memory_gib', 0):.1f} GiB)" for g in gpus) or "none"
    thr = env.get("threads", {})
    blas = ", ".join(os.path.basename(b) for b in env.get("blas_libraries", [])) or env.get("blas_info", "?")
    return [
        ("device", run.info.get("device", run.device)),
        ("host", env.get("host", "?")),
        ("CPU", f"{env.get('cpu', {}).get('model', '?')}, {env.get('cpu', {}).get('cores_available', '?')} cores available"),
        ("LibTorch threads", f"{thr.get('intra_op', '?')} intra-op, {thr.get('inter_op', '?')} inter-op; "
                             f"loader workers {args.get('workers', '?')} (0 = cores)"),
        ("torchfit / LibTorch", f"{env.get('torchfit_version', '?')} / {env.get('libtorch_version', '?')} "
                                f"({env.get('build', '?')})"),
        ("CUDA runtime / cuDNN", f"{cuda.get('runtime_version') or '—'} / {cuda.get('cudnn_version') or '—'}"
                                 + ("" if cuda.get("available") else f" (not available: {cuda.get('unavailable_reason', '?').split(' (')[0]})")),
        ("GPU(s)", gpu_txt),
        ("BLAS", blas),
        ("parallel backend", env.get("parallel_backend", "?")),
        ("OpenCV", env.get("opencv_version", "?")),
        ("memory", env.get("memory_retention", {}).get("method", "?")),
        ("started / finished (UTC)", f"{run.rec['started']} / {run.rec['finished']}"),
        ("load average before / after", f"{run.rec['loadavg_before']} / {run.rec['loadavg_after']}"),
        ("exit status", str(run.rec["exit_status"])),
    ]


def settings_line(run):
    a = run.info.get("arguments", {})
    size = a.get("target_size", "?")
    return (f"{a.get('epochs', '?')} epoch(s) × {a.get('steps_per_epoch', '?')} steps, batch {a.get('batch_size', '?')}, "
            f"{size}×{size} RGB, seed {a.get('seed', '?')}, Adam lr {a.get('lr', '?')}, "
            f"augmentation {'on' if a.get('augment', not a.get('no_augment', False)) else 'off'}, {a.get('validation_steps', '?')} validation steps "
            f"after each epoch; data `{a.get('data', '?')}` ({a.get('train_images', '?')} training / "
            f"{a.get('test_images', '?')} test images, {len(a.get('classes', {}))} classes); "
            f"{run.info.get('parameters', 0):,} parameters, "
            f"{run.info.get('flops_per_step', 0) / 1e9:.2f} GFLOP per training step; "
            f"{run.info.get('warmup_steps', '?')} warm-up step(s) excluded from the timings")


def compare_settings(runs):
    """Arguments that differ between runs other than the device (there should be none)."""
    if len(runs) < 2:
        return []
    ignore = {"device", "checkpoint", "run_dir"}
    base = runs[0].info.get("arguments", {})
    diffs = []
    for r in runs[1:]:
        a = r.info.get("arguments", {})
        for k in sorted(set(base) | set(a)):
            if k not in ignore and base.get(k) != a.get(k):
                diffs.append(f"`{k}`: {runs[0].device} {base.get(k)!r} vs {r.device} {a.get(k)!r}")
    return diffs


def draw_chart(results, runs, path, skipped):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        import matplotlib.ticker
    except ImportError as e:
        return f"chart not drawn: matplotlib is not available ({e}); install python3-matplotlib"
    colors = {"cpu": "tab:blue"}
    fig, ax = plt.subplots(figsize=(9, 4.8), dpi=110)
    all_ms = []
    for i, r in enumerate(runs):
        if not getattr(r, "steps", None):
            continue
        c = colors.get(r.device, ["tab:orange", "tab:green", "tab:red", "tab:purple"][i % 4])
        spe = int(r.info.get("steps_per_epoch", 0)) or max(int(s["step"]) for s in r.steps)
        xs = [(int(s["epoch"]) - 1) * spe + int(s["step"]) for s in r.steps]
        ys = [float(s["step_ms"]) for s in r.steps]
        all_ms += ys
        warm = [(int(s["epoch"]), int(s["step"])) in r.warm_keys for s in r.steps]
        ax.plot(xs, ys, "-", color=c, lw=1.2, alpha=0.8)
        tx = [x for x, w in zip(xs, warm) if not w]
        ty = [y for y, w in zip(ys, warm) if not w]
        ax.plot(tx, ty, "o", color=c, ms=3.5,
                label=f"{device_label(r.device)}: median {fnum(r.median)} ms, p90 {fnum(r.p90)} ms")
        wx = [x for x, w in zip(xs, warm) if w]
        wy = [y for y, w in zip(ys, warm) if w]
        if wx:
            ax.plot(wx, wy, "o", mfc="none", mec=c, ms=6, label=f"{device_label(r.device)}: warm-up (excluded)")
        if r.ok and not math.isnan(r.median):
            ax.axhline(r.median, color=c, ls="--", lw=0.8)
        epochs = int(r.info.get("epochs", 1))
        for e in range(1, epochs):
            ax.axvline(e * spe + 0.5, color="0.8", lw=0.8)
    for j, (dev, why) in enumerate(sorted(skipped.items())):
        short = why.split(" (")[0] if len(why) > 70 else why
        short = short if len(short) <= 90 else short[:87] + "..."
        ax.text(0.01, 0.03 + 0.06 * j, f"{dev}: not available — {short}", transform=ax.transAxes,
                fontsize=8, color="0.35")
    if all_ms and min(all_ms) > 0 and max(all_ms) / min(all_ms) > 20:
        ax.set_yscale("log")
        if all_ms:
            ax.set_ylim(min(all_ms) / 1.5, max(all_ms) * 4)  # room for the legend above the data
    else:
        ax.set_ylim(0, (max(all_ms) if all_ms else 1) * 1.3)  # room for the legend above the data
    a = runs[0].info.get("arguments", {}) if runs and getattr(runs[0], "info", None) else {}
    ax.set_title(f"torchfit train_cnn: time per training step — batch {a.get('batch_size', '?')}, "
                 f"{a.get('target_size', '?')}×{a.get('target_size', '?')} RGB", fontsize=11)
    ax.xaxis.set_major_locator(matplotlib.ticker.MaxNLocator(integer=True))
    ax.set_xlabel("training step (all epochs; grey lines = epoch boundaries)")
    ax.set_ylabel("ms per step (data + host→device + compute)")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8, loc="upper right")
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return None


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    results = sys.argv[1]
    meta = json.load(open(os.path.join(results, "meta.json")))
    root = meta.get("repository", "")
    if root:  # paths inside the repository are shown relative to it (the report is committed)
        for rec in meta["runs"]:
            rec["command"] = rec["command"].replace(root + "/", "")
        meta["matmul_command"] = meta.get("matmul_command", "").replace(root + "/", "")
    runs = [Run(results, rec) for rec in meta["runs"]]
    skipped = {s["device"]: s["reason"] for s in meta.get("skipped", [])}
    cpu = next((r for r in runs if r.device == "cpu"), None)
    gpus = [r for r in runs if r.device != "cpu"]
    chart_note = draw_chart(results, [r for r in runs if getattr(r, "steps", None)],
                            os.path.join(results, "ms_per_step.png"), skipped)

    out = []
    w = out.append
    w(f"# CPU vs GPU — the article's CNN on torchfit ({meta['host']}, {meta['generated'][:10]})")
    w("")
    w(f"Generated {meta['generated']} by `scripts/compare_cpu_gpu.sh` (commit {meta['commit']}); "
      "how to read it: [docs/cpu_vs_gpu.md](../../cpu_vs_gpu.md).")
    w("")
    w("```sh")
    w(meta["command"])
    w("```")
    w("")
    first_ok = next((r for r in runs if getattr(r, "info", None)), None)
    if first_ok:
        w(f"**Settings (the same for every device):** {settings_line(first_ok)}. "
          "Each device trains a fresh model from the same seed (same initial weights, same shuffling and augmentation).")
        w("")
    diffs = compare_settings([r for r in runs if getattr(r, "info", None)])
    if diffs:
        w("**Warning — the runs' settings differ:** " + "; ".join(diffs))
        w("")
    gpu_cols = [(device_label(r.device), r) for r in gpus]
    if not gpu_cols:
        reason = next(iter(skipped.values()), "not requested (--devices)")
        gpu_cols = [("GPU (cuda)", None)]
        w(f"**GPU: not available** — {reason}. Only the CPU was run; the GPU column and the speedup stay empty.")
        w("")
    for dev, why in skipped.items():
        if any(r.device == dev for r in gpus):
            continue
        if gpus:
            w(f"**{dev}: not run** — {why}.")
            w("")
    for r in runs:
        if not r.ok:
            w(f"**{device_label(r.device)}: failed** — {r.error}; see `{r.prefix}_train.log`.")
            w("")

    # ---- the article's table
    w("## Training time (the article's table)")
    w("")
    def cell(r, attr, digits=1, fmt=None):
        if r is None:
            return "not available"
        if not getattr(r, "epochs", None):
            return "failed"
        v = getattr(r, attr)
        return fmt(v) if fmt else fnum(v, digits)
    pct = lambda v: "—" if v is None or math.isnan(v) else f"{100 * v:.1f} %"
    def final(r, key, digits=4):
        if r is None:
            return "not available"
        if not getattr(r, "epochs", None):
            return "failed"
        v = r.final.get(key)
        return "—" if v is None else f"{v:.{digits}f}"
    main_gpu = gpu_cols[0][1]
    rows = [
        ("s/epoch (wall time of an epoch: its steps + validation; mean over epochs)", "s_per_epoch", 2, None, "time"),
        ("s per 1000 steps (median ms/step × 1000; the article's epoch length, without validation)",
         "median", 1, None, "time"),  # ms per step = s per 1000 steps
        ("ms/step median", "median", 1, None, "time"),
        ("ms/step p90", "p90", 1, None, "time"),
        ("compute ms/step median (forward + backward + optimizer; synchronised on CUDA)", "compute_median", 1, None, "time"),
        ("images/s (timed steps)", "images_per_s", 1, None, "rate"),
        ("achieved GFLOP/s (FLOPs per step ÷ median step time)", "gflops", 1, None, "rate"),
        ("data-wait share (Σ data_ms ÷ Σ step_ms)", "data_share", 1, pct, None),
    ]
    header = "| figure | CPU | " + " | ".join(c for c, _ in gpu_cols) + " | speedup × (GPU vs CPU) |"
    w(header)
    w("|" + " --- |" * (3 + len(gpu_cols)))
    for label, attr, digits, fmt, kind in rows:
        cells = [cell(cpu, attr, digits, fmt)] + [cell(r, attr, digits, fmt) for _, r in gpu_cols]
        sp = "—"
        if kind and cpu is not None and main_gpu is not None and cpu.ok and main_gpu.ok:
            a, b = getattr(cpu, attr), getattr(main_gpu, attr)
            x = ratio(a, b) if kind == "time" else ratio(b, a)
            sp = f"{x:.1f}×" if x else "—"
        elif kind and main_gpu is None:
            sp = "not available"
        w(f"| {label} | " + " | ".join(cells) + f" | {sp} |")
    w("| timed steps (+ warm-up steps excluded) | "
      + " | ".join("not available" if r is None else ("failed" if not getattr(r, "epochs", None) else f"{r.n_timed} (+{r.n_warm})")
                   for r in [cpu] + [r for _, r in gpu_cols]) + " | |")
    w("| final loss / val_loss | "
      + " | ".join(f"{final(r, 'loss')} / {final(r, 'val_loss')}" if r is not None and getattr(r, 'epochs', None)
                   else final(r, 'loss') for r in [cpu] + [r for _, r in gpu_cols]) + " | |")
    w("")
    w("Step times are wall-clock per training step (next batch from the loader, host→device copy, forward, "
      "backward, optimizer step); on CUDA the clock is read only after `synchronize`, so they are the real GPU "
      "time, not the launch time. Warm-up steps (first steps of the run: CUDA context, cuDNN/cuBLAS handles, "
      "kernel selection, first allocations) are left out of every figure except s/epoch, which is the epoch's "
      "wall time as Keras prints it. Speedup × = CPU time ÷ GPU time (or GPU rate ÷ CPU rate).")
    w("")
    article = (f"**The article** ({ARTICLE['cpu']} vs {ARTICLE['gpu']}, TensorFlow/Keras, batch {ARTICLE['batch']}, "
               f"{ARTICLE['size']}×{ARTICLE['size']} RGB): {ARTICLE['cpu_s']:.0f} s vs {ARTICLE['gpu_s']:.0f} s per "
               f"epoch of {ARTICLE['steps']} steps, **{ARTICLE['cpu_s'] / ARTICLE['gpu_s']:.1f}×**. ")
    a = first_ok.info.get("arguments", {}) if first_ok else {}
    same = a.get("batch_size") == ARTICLE["batch"] and a.get("target_size") == ARTICLE["size"]
    if cpu is not None and cpu.ok and same:
        est = cpu.median * ARTICLE["steps"] / 1000.0
        article += (f"Here 1000 steps at the CPU's median step time would take ≈ {est:,.0f} s "
                    f"({est / ARTICLE['cpu_s']:.2f}× the article's CPU time)"
                    + (f", and ≈ {main_gpu.median:,.0f} s on {main_gpu.device}."
                       if main_gpu is not None and main_gpu.ok else "; no GPU here."))
    elif not same:
        article += (f"This run used batch {a.get('batch_size', '?')} at {a.get('target_size', '?')}×"
                    f"{a.get('target_size', '?')}, so its times are not comparable with the article's.")
    w(article + " The article trained the model on the GPU first and then *continued training that same "
      "model* on the CPU; here each device trains a fresh model from the same seed, so both runs do the "
      "same work from the same initial weights.")
    w("")

    # ---- per epoch
    w("## Per epoch (each run's epochs.csv)")
    w("")
    w("| device | epoch | seconds | ms/step median | ms/step p90 | images/s | data-wait share | loss | val_loss |")
    w("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for r in runs:
        for e in getattr(r, "epochs", []) or []:
            w(f"| {r.device} | {e['epoch']} | {fnum(float(e['seconds']), 2)} | {fnum(float(e['ms_per_step_median']))} "
              f"| {fnum(float(e['ms_per_step_p90']))} | {fnum(float(e['images_per_s']))} "
              f"| {pct(float(e['data_wait_share']))} | {float(e['loss']):.4f} "
              f"| {float(e['val_loss']):.4f} |" if e.get("val_loss") else
              f"| {r.device} | {e['epoch']} | {fnum(float(e['seconds']), 2)} | {fnum(float(e['ms_per_step_median']))} "
              f"| {fnum(float(e['ms_per_step_p90']))} | {fnum(float(e['images_per_s']))} "
              f"| {pct(float(e['data_wait_share']))} | {float(e['loss']):.4f} | — |")
    w("")
    w("Epoch 1's seconds include the warm-up steps; the per-step figures never do.")
    w("")

    # ---- chart
    w("## ms/step over the steps")
    w("")
    if chart_note:
        w(f"*{chart_note}.*")
    else:
        w("![ms per step for each device](ms_per_step.png)")
        w("")
        w("Filled dots: timed steps; hollow dots: warm-up steps (excluded); dashed lines: medians. "
          "The y axis turns logarithmic when the devices differ by more than 20×.")
    w("")

    # ---- matmul
    w("## Matrix multiply (matmul_bench)")
    w("")
    mm_path = os.path.join(results, "matmul.csv")
    if meta.get("matmul_command") and os.path.exists(mm_path):
        w("```sh")
        w(meta["matmul_command"])
        w("```")
        w("")
        rows = read_csv(mm_path)
        w("| n | method | device | threads | runs | ms (median) | GFLOP/s | × naive | share of best | max rel err |")
        w("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
        for m in rows:
            sp = float(m["speedup_vs_naive"])
            share = f"{100 * float(m['share_of_best']):.1f} %"
            if m.get("valid", "1") != "1":
                share = f"({share})"
            w(f"| {m['n']} | {m['method']} | {m['device']} | {m['threads']} | {m['repeats']} "
              f"| {float(m['ms']):.4f} | {float(m['gflops']):.2f} | {f'{sp:.1f}' if sp > 0 else '—'} "
              f"| {share} | {float(m['max_rel_error']):.2e} |")
        w("")
        if not any(m["device"].startswith("cuda") for m in rows):
            why = next(iter(skipped.values()), None)
            w(f"CUDA rows: not available — {why}." if why else
              "CUDA rows: none in matmul.csv (see matmul.log: matmul_bench ran with --cuda auto).")
            w("")
        w("Naive = the article's i-j-k triple loop on one thread; LibTorch CPU = `at::mm` with all cores; "
          "CUDA = warm-up products first, synchronised before each clock read. A row marked unsynchronised "
          "(share in parentheses) is the launch time the article reported as the GPU's 28.8 µs for n = 500.")
    else:
        w("*matmul_bench was not run (--no-matmul) or wrote no CSV.*")
    w("")

    # ---- environment
    w("## Environment of each run")
    w("")
    envs = [(r, env_of(r)) for r in runs if getattr(r, "info", None)]
    if envs:
        w("| | " + " | ".join(device_label(r.device) for r, _ in envs) + " |")
        w("|" + " --- |" * (1 + len(envs)))
        for i, (key, _) in enumerate(envs[0][1]):
            w(f"| {key} | " + " | ".join(e[i][1].replace("|", "/") for _, e in envs) + " |")
        w("")
    for r in runs:
        w(f"- {r.device}: `{r.rec['command']}`")
    te = meta.get("thread_environment") or {}
    w(f"- thread environment variables: {', '.join(f'{k}={v}' for k, v in sorted(te.items())) or 'none set'}")
    w("")
    w("Load averages are the machine's (all processes): a load above the core count means other work "
      "shared the CPU during the run and CPU figures are slower than on an idle machine.")
    w("")

    # ---- files
    w("## Files")
    w("")
    files = sorted(f for f in os.listdir(results) if f.endswith((".csv", ".json", ".log", ".png")))
    w(", ".join(f"[{f}]({f})" for f in files))
    w("")
    open(os.path.join(results, "report.md"), "w").write("\n".join(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
