#!/usr/bin/env python3
"""Checks of tests/scripts/visibility_test.sh, each against an independent reference:
  tensorboard RUN_DIR TB_DIR   the event files (read by scripts/read_tfevents.py: own CRC-32C and protobuf
                               decoding) hold epochs.csv's values: epoch_<name> in train/, val_<name> as
                               epoch_<name> in validation/, epoch_learning_rate, at step = epoch
  report PRED_CSV LABELS_CSV REPORT_JSON
                               report.json equals scikit-learn's classification_report(output_dict=True)
                               and confusion_matrix on predictions.csv and the labels
Exit 77 when a module is missing (the caller skips), 1 with the reason on a mismatch."""
import csv
import json
import math
import os
import sys

try:
    from sklearn.metrics import classification_report, confusion_matrix
except ImportError as e:
    print(e)
    sys.exit(77)
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts"))
import read_tfevents  # noqa: E402


def fail(msg):
    print("FAIL:", msg)
    sys.exit(1)


def close(a, b):
    # epochs.csv holds 6 significant digits (half a unit: up to 5e-6 relative), the event files float32.
    return math.isclose(a, b, rel_tol=6e-6, abs_tol=1e-9)


def check_tensorboard(run_dir, tb_dir):
    events = read_tfevents.read_dir(tb_dir)
    rows = list(csv.DictReader(open(os.path.join(run_dir, "epochs.csv"))))
    skip = {"epoch", "seconds", "ms_per_step_median", "ms_per_step_p90", "images_per_s", "data_wait_share"}
    checked = 0
    for row in rows:
        epoch = int(row["epoch"]) - 1  # epochs.csv counts from 1, TensorBoard's step is Keras's 0-based epoch
        for key, text in row.items():
            if key in skip or text == "":
                continue
            folder, tag = ("validation", "epoch_" + key[4:]) if key.startswith("val_") else ("train", "epoch_" + key)
            series = dict((s, v) for s, v, _ in events.get(folder, {}).get(tag, []))
            if epoch not in series:
                fail("%s/%s has no value at step %d (have %s)" % (folder, tag, epoch, sorted(series)))
            if not close(series[epoch], float(text)):
                fail("%s/%s step %d: %r in the event file, %s in epochs.csv" % (folder, tag, epoch, series[epoch], text))
            checked += 1
    lr = events["train"].get("epoch_learning_rate", [])
    if [s for s, _, _ in lr] != list(range(len(rows))):
        fail("epoch_learning_rate steps %s" % [s for s, _, _ in lr])
    print("tensorboard: %d values equal epochs.csv" % checked)


def check_report(pred_csv, labels_csv, report_json):
    pred = dict((r["file"], r["class"]) for r in csv.DictReader(open(pred_csv)))
    truth = dict((r["filename"], r["class_name"]) for r in csv.DictReader(open(labels_csv)))
    files = [f for f in pred if f in truth]
    report = json.load(open(report_json))
    labels = report["labels"]
    y_true = [truth[f] for f in files]
    y_pred = [pred[f] for f in files]
    if labels != sorted(set(y_true) | set(y_pred)):
        fail("report.json labels %r are not the classes present in the labels or predictions" % labels)
    want = classification_report(y_true, y_pred, output_dict=True, zero_division=0)  # default labels
    want["confusion_matrix"] = confusion_matrix(y_true, y_pred).tolist()
    for key, value in want.items():
        got = report.get(key)
        if isinstance(value, dict):
            for k, v in value.items():
                if not math.isclose(got[k], v, rel_tol=1e-12, abs_tol=1e-12):
                    fail("report.json %s/%s = %r, scikit-learn %r" % (key, k, got[k], v))
        elif isinstance(value, list):
            if got != value:
                fail("report.json %s = %r, scikit-learn %r" % (key, got, value))
        elif not math.isclose(got, value, rel_tol=1e-12):
            fail("report.json %s = %r, scikit-learn %r" % (key, got, value))
    print("report: equals scikit-learn on %d labelled predictions" % len(files))


if __name__ == "__main__":
    if sys.argv[1] == "tensorboard":
        check_tensorboard(sys.argv[2], sys.argv[3])
    else:
        check_report(sys.argv[2], sys.argv[3], sys.argv[4])
