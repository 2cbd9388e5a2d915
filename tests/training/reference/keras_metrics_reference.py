#!/usr/bin/python3
"""Float64 NumPy references of Keras 3's metrics, written from Keras's own source (keras/src/metrics/*.py,
keras/src/losses/losses.py, metrics_utils.py — not from torchfit's code), with scikit-learn's values beside
them where scikit-learn has the metric, for tests/training/keras_metrics_test.cpp.

Usage: keras_metrics_reference.py REQUEST.json RESULT.json (or import it and call compute(REQUEST))
REQUEST: {"data": {NAME: {"y_true": [[...]], "y_pred": [[...]]}}, "cases": [{"class_name": ..., "config":
{...}, "data": NAME}]}; y_pred is the model's output (probabilities), y_true one-hot / 0-1 / values (N, K), or
class ids (N) for the sparse metrics; a data set may have "sample_weight" (N), which the cases with
"weighted": true read (Keras's weighted_metrics). RESULT: {"keras": [value per case], "sklearn": [value or null per case]};
a value is a number or a list (a vector-valued metric).

Sources of each rule:
- Means (MeanMetricWrapper): the per-sample value of keras.losses' function, averaged over the samples.
  mean_squared_error, mean_absolute_error, mean_absolute_percentage_error (100 |y - p| / max(|y|, eps)),
  mean_squared_logarithmic_error (log(max(x, eps) + 1)), log_cosh (x + softplus(-2x) - log 2), hinge and
  squared_hinge ({0, 1} labels to {-1, 1}), categorical_hinge, kl_divergence (both clipped to [eps, 1]),
  poisson (p - y log(p + eps)); the metric CosineSimilarity is +sum(l2-normalised y * p) (the loss's negative);
  RootMeanSquaredError the square root of the mean squared error.
- Cross-entropies on probabilities (ops.binary_crossentropy, categorical_crossentropy and
  sparse_categorical_crossentropy of Keras 3's backend): p normalised over the classes (categorical),
  clipped to [eps, 1 - eps]; label smoothing y(1 - s) + s/2 (binary) or s/K.
- Accuracies: argmax equality; binary: p > threshold; top-k: the target class among the k highest.
- R2Score: regression_metrics.R2Score.update_state/result (sums, 1 - SSres/SStot, -inf -> 0, aggregations,
  adjusted R2 with num_regressors).
- Confusion metrics: update_confusion_matrix_variables: y_true cast to bool, tp/fp/tn/fn of p > threshold
  over every entry (the class_id column; top_k keeps the k highest per row, the others -1e10); the
  evenly-distributed thresholds (AUC's default and the "at" metrics) clip p to [0, 1] first.
  AUC thresholds [-eps, 1/(n-1), ..., 1 + eps]; the "at" metrics [0, 1/(n-1), ..., 1] ([0.5] for n = 1).
  AUC.result (ROC / PR / PRGAIN, interpolation / minoring / majoring, interpolate_pr_auc for PR with
  interpolation; multi_label: per label, then the mean or the label_weights' weighted mean).
- FBetaScore: f_score_metrics.FBetaScore (threshold None: p >= the row's max and |p| > 1e-9; sums per class;
  micro over all entries; macro mean; weighted by the support).
- IoU metrics: iou_metrics._IoUBase/IoU (confusion matrix of ids in [0, K), ignore_class dropped; per target
  class tp / (row + column - tp + eps) where the denominator > 1e-9; the sum over (valid + eps)).
"""
import json
import sys

import numpy as np

EPS = 1e-7


def per_sample_mean(values, w=None):
    """Mean.update_state with reduce_to_samplewise_values: each sample's mean, weighted by its weight."""
    v = np.asarray(values, dtype=np.float64)
    v = v.reshape(v.shape[0], -1).mean(axis=1)
    return float(v.mean() if w is None else (v * w).sum() / w.sum())


def normalise(x):
    return x / np.maximum(np.sqrt((x * x).sum(-1, keepdims=True)), EPS)


def hinge_labels(y):
    return 2 * y - 1 if np.all((y == 0) | (y == 1)) else y


def crossentropy(name, cfg, y, p):
    s = cfg.get("label_smoothing", 0) or 0
    if name == "BinaryCrossentropy":
        y = y * (1 - s) + 0.5 * s
        if cfg.get("from_logits"):
            return (np.maximum(p, 0) - p * y + np.log1p(np.exp(-np.abs(p)))).mean(-1)
        q = np.clip(p, EPS, 1 - EPS)
        return -(y * np.log(q) + (1 - y) * np.log(1 - q)).mean(-1)
    k = p.shape[-1]
    if cfg.get("from_logits"):
        logq = p - p.max(-1, keepdims=True)
        logq = logq - np.log(np.exp(logq).sum(-1, keepdims=True))
    else:
        logq = np.log(np.clip(p / p.sum(-1, keepdims=True), EPS, 1 - EPS))
    if name == "SparseCategoricalCrossentropy":
        ids = y.astype(int).reshape(-1)
        v = -logq[np.arange(len(ids)), ids]
        ignore = cfg.get("ignore_class")
        return np.where(ids == ignore, 0.0, v) if ignore is not None else v
    y = y * (1 - s) + s / k
    return -(y * logq).sum(-1)


def mean_metric(name, cfg, y, p, w=None):
    if name in ("BinaryCrossentropy", "CategoricalCrossentropy", "SparseCategoricalCrossentropy"):
        return per_sample_mean(crossentropy(name, cfg, y, p), w)
    if name == "CategoricalAccuracy":
        return per_sample_mean(p.argmax(-1) == y.argmax(-1), w)
    if name == "SparseCategoricalAccuracy":
        return per_sample_mean(p.argmax(-1) == y.reshape(-1), w)
    if name == "BinaryAccuracy":
        return per_sample_mean(((p > cfg.get("threshold", 0.5)) == y).mean(-1), w)
    if name in ("TopKCategoricalAccuracy", "SparseTopKCategoricalAccuracy"):
        k = cfg.get("k", 5)
        ids = y.argmax(-1) if name == "TopKCategoricalAccuracy" else y.reshape(-1).astype(int)
        top = np.argsort(-p, axis=-1, kind="stable")[:, :k]
        return per_sample_mean([ids[i] in top[i] for i in range(len(ids))], w)
    e = y - p
    values = {
        "MeanSquaredError": lambda: (e ** 2).mean(-1),
        "RootMeanSquaredError": lambda: (e ** 2).mean(-1),
        "MeanAbsoluteError": lambda: np.abs(e).mean(-1),
        "MeanAbsolutePercentageError": lambda: 100 * (np.abs(e) / np.maximum(np.abs(y), EPS)).mean(-1),
        "MeanSquaredLogarithmicError": lambda: (
            (np.log(np.maximum(p, EPS) + 1) - np.log(np.maximum(y, EPS) + 1)) ** 2).mean(-1),
        "LogCoshError": lambda: ((p - y) + np.logaddexp(0, -2 * (p - y)) - np.log(2)).mean(-1),
        "CosineSimilarity": lambda: (normalise(y) * normalise(p)).sum(-1),
        "Hinge": lambda: np.maximum(1 - hinge_labels(y) * p, 0).mean(-1),
        "SquaredHinge": lambda: (np.maximum(1 - hinge_labels(y) * p, 0) ** 2).mean(-1),
        "CategoricalHinge": lambda: np.maximum((((1 - y) * p).max(-1)) - (y * p).sum(-1) + 1, 0),
        "KLDivergence": lambda: (np.clip(y, EPS, 1) * np.log(np.clip(y, EPS, 1) / np.clip(p, EPS, 1))).sum(-1),
        "Poisson": lambda: (p - y * np.log(p + EPS)).mean(-1),
    }
    v = per_sample_mean(values[name](), w)
    return float(np.sqrt(v)) if name == "RootMeanSquaredError" else v


def r2_score(cfg, y, p, w=None):
    sw = np.ones_like(y) if w is None else np.broadcast_to(w[:, None], y.shape)
    s, sq, res, n = (sw * y).sum(0), (sw * y * y).sum(0), (((y - p) ** 2) * sw).sum(0), sw.sum(0)
    total = sq - s * (s / n)
    with np.errstate(divide="ignore", invalid="ignore"):
        raw = 1 - res / total
    raw = np.where(np.isinf(raw), 0.0, raw)
    agg = cfg.get("class_aggregation", "uniform_average")
    r2 = raw.mean() if agg == "uniform_average" else (
        (total * raw).sum() / total.sum() if agg == "variance_weighted_average" else raw)
    k, m = cfg.get("num_regressors", 0), int((sw != 0).any(-1).sum())
    if k != 0 and k < m - 1:
        r2 = 1 - (1 - r2) * (m - 1) / (m - k - 1)
    return r2


def divide_no_nan(a, b):
    a, b = np.broadcast_arrays(np.asarray(a, float), np.asarray(b, float))
    return np.where(b == 0, 0.0, a / np.where(b == 0, 1, b))


def counts(y, p, thresholds, top_k=None, class_id=None, multi_label=False, clip=False, weights=None, sw=None):
    """tp, fp, tn, fn (T) or (T, L): update_confusion_matrix_variables, written out by its definition."""
    y = y.astype(bool)
    if top_k is not None:
        idx = np.argsort(-p, axis=-1, kind="stable")[:, :top_k]
        keep = np.zeros_like(p, dtype=bool)
        np.put_along_axis(keep, idx, True, axis=-1)
        p = np.where(keep, p, -1e10)
    if class_id is not None:
        y, p = y[:, class_id:class_id + 1], p[:, class_id:class_id + 1]
    w = np.ones_like(p) if weights is None else np.broadcast_to(np.asarray(weights, float)[None, :], p.shape)
    if sw is not None:  # the sample weights broadcast to y_pred, times the label weights
        w = w * sw[:, None]
    if clip:
        p = np.clip(p, 0, 1)
    if not multi_label:
        y, p, w = y.reshape(-1, 1), p.reshape(-1, 1), w.reshape(-1, 1)
    t = np.asarray(thresholds, dtype=np.float32)[:, None, None]
    pred = p.astype(np.float32)[None] > t
    out = [((pred & c) * w[None]).sum(1) for c in (y[None], ~y[None])]
    tp, fp = out
    tn = (w * ~y).sum(0)[None] - fp
    fn = (w * y).sum(0)[None] - tp
    return [x if multi_label else x[:, 0] for x in (tp, fp, tn, fn)]


def even(n, lo, hi):
    return [lo] + [(i + 1) / (n - 1) for i in range(n - 2)] + [hi]


def auc(cfg, y, p, w=None):
    n = cfg.get("num_thresholds", 200)
    if cfg.get("thresholds") is not None:
        inner = sorted(cfg["thresholds"]) if isinstance(cfg["thresholds"], list) else [cfg["thresholds"]]
        thr = [-EPS] + inner + [1 + EPS]
        clip = np.allclose([0.0] + inner + [1.0], np.arange(len(thr)) / (len(thr) - 1), atol=EPS)
    else:
        thr, clip = even(n, -EPS, 1 + EPS), True
    if cfg.get("from_logits"):
        p = 1 / (1 + np.exp(-p))
    multi = cfg.get("multi_label", False)
    lw = cfg.get("label_weights")
    tp, fp, tn, fn = counts(y, p, thr, multi_label=multi, clip=clip, weights=None if multi else lw, sw=w)
    curve = cfg.get("curve", "ROC").upper()
    method = cfg.get("summation_method", "interpolation").lower()
    if curve == "PR" and method == "interpolation":
        dtp = tp[:-1] - tp[1:]
        pp = tp + fp
        dp = pp[:-1] - pp[1:]
        slope = divide_no_nan(dtp, np.maximum(dp, 0))
        intercept = tp[1:] - slope * pp[1:]
        ratio = np.where((pp[:-1] > 0) & (pp[1:] > 0), divide_no_nan(pp[:-1], np.maximum(pp[1:], 0)), 1.0)
        terms = divide_no_nan(slope * (dtp + intercept * np.log(ratio)), np.maximum(tp[1:] + fn[1:], 0))
    else:
        recall = divide_no_nan(tp, tp + fn)
        if curve == "ROC":
            x, h = divide_no_nan(fp, fp + tn), recall
        elif curve == "PR":
            x, h = recall, divide_no_nan(tp, tp + fp)
        else:
            scale = divide_no_nan(tp + fn, tn + fp)
            x = np.maximum(np.where(tp == 0, 0.0, 1 - scale * divide_no_nan(fn, tp)), 0)
            h = np.where(tp == 0, 1.0, 1 - scale * divide_no_nan(fp, tp))
        heights = {"interpolation": (h[:-1] + h[1:]) / 2, "minoring": np.minimum(h[:-1], h[1:]),
                   "majoring": np.maximum(h[:-1], h[1:])}[method]
        terms = (x[:-1] - x[1:]) * heights
    by_label = terms.sum(0)
    if not multi:
        return float(by_label)
    return float(by_label.mean() if lw is None else (by_label * lw).sum() / np.sum(lw))


AT = {"PrecisionAtRecall": "recall", "RecallAtPrecision": "precision",
      "SensitivityAtSpecificity": "specificity", "SpecificityAtSensitivity": "sensitivity"}


def confusion_metric(name, cfg, y, p, w=None):
    if name == "AUC":
        return auc(cfg, y, p, w)
    if name in AT:
        n = cfg.get("num_thresholds", 200)
        thr = [0.5] if n == 1 else even(n, 0.0, 1.0)
        tp, fp, tn, fn = counts(y, p, thr, class_id=cfg.get("class_id"), clip=n > 1, sw=w)
        rec, prec, spec = divide_no_nan(tp, tp + fn), divide_no_nan(tp, tp + fp), divide_no_nan(tn, tn + fp)
        constrained, dependent = {"PrecisionAtRecall": (rec, prec), "RecallAtPrecision": (prec, rec),
                                  "SensitivityAtSpecificity": (spec, rec),
                                  "SpecificityAtSensitivity": (rec, spec)}[name]
        return float(max(0.0, np.max(np.where(constrained >= cfg[AT[name]], dependent, 0))))
    top_k = cfg.get("top_k")
    t = cfg.get("thresholds")
    thr = (t if isinstance(t, list) else [t]) if t is not None else [-1e10 if top_k else 0.5]
    tp, fp, tn, fn = counts(y, p, thr, top_k=top_k, class_id=cfg.get("class_id"), sw=w)
    v = {"Precision": lambda: divide_no_nan(tp, tp + fp), "Recall": lambda: divide_no_nan(tp, tp + fn),
         "TruePositives": lambda: tp, "FalsePositives": lambda: fp, "TrueNegatives": lambda: tn,
         "FalseNegatives": lambda: fn}[name]()
    return float(v[0]) if len(v) == 1 else [float(x) for x in v]


def fbeta(cfg, y, p, w=None):
    beta2 = cfg.get("beta", 1.0) ** 2
    thr = cfg.get("threshold")
    pred = ((p >= p.max(-1, keepdims=True)) & (np.abs(p) > 1e-9)) if thr is None else p > thr
    pred = pred.astype(float)
    avg = cfg.get("average")
    axis = None if avg == "micro" else 0
    sw = np.ones((len(y), 1)) if w is None else w[:, None]
    tp, fp, fn = (pred * y * sw).sum(axis), (pred * (1 - y) * sw).sum(axis), ((1 - pred) * y * sw).sum(axis)
    support = (y * sw).sum(axis)
    prec, rec = tp / (tp + fp + EPS), tp / (tp + fn + EPS)
    f = prec * rec / (beta2 * prec + rec + EPS) * (1 + beta2)
    if avg == "weighted":
        return float((f * support / (support.sum() + EPS)).sum())
    if avg in ("micro", "macro"):
        return float(np.mean(f))
    return [float(x) for x in f]


def iou(name, cfg, y, p, w=None):
    if name == "BinaryIoU":
        k, targets = 2, cfg.get("target_class_ids", [0, 1])
        yt, yp = y.reshape(-1).astype(int), (p >= cfg.get("threshold", 0.5)).reshape(-1).astype(int)
    else:
        k = cfg["num_classes"]
        targets = cfg["target_class_ids"] if name in ("IoU", "OneHotIoU") else list(range(k))
        sparse_true = cfg.get("sparse_y_true", True) and name not in ("OneHotIoU", "OneHotMeanIoU")
        sparse_pred = cfg.get("sparse_y_pred", name not in ("OneHotIoU", "OneHotMeanIoU"))
        yt = y.reshape(-1).astype(int) if sparse_true else y.argmax(-1)
        yp = p.reshape(-1).astype(int) if sparse_pred else p.argmax(-1)
    ww = np.ones(len(yt)) if w is None else np.repeat(w, len(yt) // len(w))  # weights broadcast to the ids
    keep = (yt >= 0) & (yt < k) & (yp >= 0) & (yp < k)
    if cfg.get("ignore_class") is not None:
        keep &= yt != cfg["ignore_class"]
    cm = np.zeros((k, k))
    np.add.at(cm, (yt[keep], yp[keep]), ww[keep])
    tp = np.diag(cm)
    den = cm.sum(0) + cm.sum(1) - tp
    tp, den = tp[targets], den[targets]
    valid = den > 1e-9
    return float(np.where(valid, tp / (den + EPS), 0).sum() / (valid.sum() + EPS))


def keras_value(case, y, p, w=None):
    """The metric's value; `w` (N) the sample weights (weighted_metrics), None for unweighted."""
    name, cfg = case["class_name"], case.get("config", {})
    if name == "R2Score":
        v = r2_score(cfg, y, p, w)
        return float(v) if np.ndim(v) == 0 else [float(x) for x in v]
    if name in ("FBetaScore", "F1Score"):
        return fbeta(cfg, y, p, w)
    if "IoU" in name:
        return iou(name, cfg, y, p, w)
    if name in ("AUC", "Precision", "Recall", "TruePositives", "FalsePositives", "TrueNegatives",
                "FalseNegatives") or name in AT:
        return confusion_metric(name, cfg, y, p, w)
    return mean_metric(name, cfg, y, p, w)


def sklearn_value(case, y, p, w=None):
    """scikit-learn's value of the same metric where it has one (None otherwise); `w` its sample_weight."""
    from sklearn import metrics as m
    name, cfg = case["class_name"], case.get("config", {})
    # w per entry of a flattened (N, K) array: each sample's weight over its K entries.
    flat_w = None if w is None else np.repeat(w, y.size // len(w))
    if name in ("Precision", "Recall") and cfg.get("top_k") is None and not isinstance(cfg.get("thresholds"), list):
        c = cfg.get("class_id")
        yt, yp, sw = (y[:, c], p[:, c], w) if c is not None else (y.ravel(), p.ravel(), flat_w)
        f = m.precision_score if name == "Precision" else m.recall_score
        return float(f(yt > 0, yp > (cfg.get("thresholds") or 0.5), zero_division=0, sample_weight=sw))
    exact_auc = (name == "AUC" and not cfg.get("from_logits") and cfg.get("thresholds") is None
                 and cfg.get("num_thresholds", 200) >= 200 and cfg.get("label_weights") is None
                 and cfg.get("summation_method", "interpolation").lower() == "interpolation")
    if exact_auc and cfg.get("curve", "ROC").upper() == "ROC":
        if cfg.get("multi_label"):
            return float(m.roc_auc_score(y, p, average="macro", sample_weight=w))
        return float(m.roc_auc_score(y.ravel() > 0, p.ravel(), sample_weight=flat_w))
    if exact_auc and cfg.get("curve", "ROC").upper() == "PR" and not cfg.get("multi_label"):
        return float(m.average_precision_score(y.ravel() > 0, p.ravel(), sample_weight=flat_w))
    if name in ("FBetaScore", "F1Score") and cfg.get("threshold") is not None:
        pred = (p > cfg["threshold"]).astype(int)
        v = m.fbeta_score(y.astype(int), pred, beta=cfg.get("beta", 1.0), average=cfg.get("average"), zero_division=0,
                          sample_weight=w)
        return float(v) if np.ndim(v) == 0 else [float(x) for x in v]
    if name == "R2Score" and cfg.get("num_regressors", 0) == 0:
        agg = cfg.get("class_aggregation", "uniform_average")
        v = m.r2_score(y, p, sample_weight=w, multioutput="raw_values" if agg is None else (
            "variance_weighted" if agg == "variance_weighted_average" else "uniform_average"))
        return float(v) if np.ndim(v) == 0 else [float(x) for x in v]
    one_hot = name.startswith("OneHot")
    if (name in ("MeanIoU", "OneHotMeanIoU", "IoU", "OneHotIoU") and cfg.get("ignore_class") is None
            and not cfg.get("sparse_y_pred", not one_hot)):
        yt = y.argmax(-1) if y.ndim == 2 and y.shape[1] > 1 else y.reshape(-1).astype(int)
        yp = p.argmax(-1)
        k = cfg["num_classes"]
        targets = cfg.get("target_class_ids", list(range(k)))
        j = m.jaccard_score(yt, yp, labels=list(range(k)), average=None, zero_division=0, sample_weight=w)
        present = [t for t in targets if (yt == t).any() or (yp == t).any()]
        return float(np.mean(j[present])) if present else 0.0
    if name == "MeanSquaredError":
        return float(m.mean_squared_error(y, p, sample_weight=w))
    if name == "MeanAbsoluteError":
        return float(m.mean_absolute_error(y, p, sample_weight=w))
    if name == "MeanAbsolutePercentageError":
        return float(100 * m.mean_absolute_percentage_error(y, p, sample_weight=w))
    if name == "CategoricalCrossentropy" and not cfg:
        return float(m.log_loss(y.argmax(-1), p, labels=list(range(p.shape[1])), sample_weight=w))
    if name in ("CategoricalAccuracy", "SparseCategoricalAccuracy") and w is not None:
        yt = y.argmax(-1) if name == "CategoricalAccuracy" else y.reshape(-1)
        return float(m.accuracy_score(yt, p.argmax(-1), sample_weight=w))
    return None


def compute(request):
    """The values of every case; a case with "weighted": true reads its data's "sample_weight" (N)."""
    data = {k: (np.array(v["y_true"], dtype=np.float64), np.array(v["y_pred"], dtype=np.float64),
                np.array(v["sample_weight"], dtype=np.float64) if "sample_weight" in v else None)
            for k, v in request["data"].items()}
    out = {"keras": [], "sklearn": []}
    for case in request["cases"]:
        y, p, sw = data[case["data"]]
        w = sw if case.get("weighted") else None
        out["keras"].append(keras_value(case, y, p, w))
        try:
            out["sklearn"].append(sklearn_value(case, y, p, w))
        except ImportError:
            out["sklearn"].append(None)
    return out


def main():
    json.dump(compute(json.load(open(sys.argv[1]))), open(sys.argv[2], "w"))


if __name__ == "__main__":
    main()
