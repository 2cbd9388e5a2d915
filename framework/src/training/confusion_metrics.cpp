// Keras's confusion-matrix metrics (keras/src/metrics/confusion_metrics.py over metrics_utils.py's
// update_confusion_matrix_variables) and F-scores (keras/src/metrics/f_score_metrics.py).
#include <algorithm>
#include <cmath>
#include <functional>
#include <numeric>

#include "training/keras_metric.h"

namespace torchfit::metric {
namespace {

constexpr double kEps = 1e-7;                                       // Keras backend epsilon
constexpr double kNegInf = -1e10;                                   // metrics_utils.NEG_INF
double no_nan(double a, double b) { return b == 0 ? 0.0 : a / b; }  // ops.divide_no_nan

// The summed counts of a confusion metric: tp, fp, tn, fn, each T thresholds × L labels.
struct Counts {
  const double* s;
  int64_t t, l;
  double at(int cond, int64_t j, int64_t label) const { return s[(cond * t + j) * l + label]; }
  double tp(int64_t j, int64_t k = 0) const { return at(0, j, k); }
  double fp(int64_t j, int64_t k = 0) const { return at(1, j, k); }
  double tn(int64_t j, int64_t k = 0) const { return at(2, j, k); }
  double fn(int64_t j, int64_t k = 0) const { return at(3, j, k); }
};

// Adds tp, fp, tn, fn of (p > t) at each threshold to `s` (layout of Counts). p (M, L) float32, y (M, L) bool,
// w (M, L) weights or undefined. One pass: a prediction exceeds the sorted thresholds below its searchsorted
// index; the histograms of those indices, summed from the top, are the counts.
void add_counts(const at::Tensor& p, const at::Tensor& y, const at::Tensor& w, const std::vector<double>& thr,
                double* s) {
  const int64_t t = static_cast<int64_t>(thr.size()), l = p.size(1);
  std::vector<int64_t> order(t);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return thr[a] < thr[b]; });
  std::vector<double> sorted;
  for (int64_t j : order) sorted.push_back(thr[j]);
  const at::Tensor boundaries = at::tensor(sorted, at::kDouble).to(at::kFloat).to(p.device());
  const at::Tensor idx = at::searchsorted(boundaries, p.to(at::kFloat).contiguous());  // # thresholds < p
  const at::Tensor key = (idx + at::arange(l, idx.options()).unsqueeze(0) * (t + 1)).reshape({-1});
  const at::Tensor weight =
      w.defined() ? w.to(at::kDouble).reshape({-1}) : at::ones({key.numel()}, p.options().dtype(at::kDouble));
  const at::Tensor pos = y.reshape({-1});
  auto above = [&](const at::Tensor& mask) {  // (L, T): weight of the entries of `mask` with p > sorted t_j
    const at::Tensor h = at::bincount(key, weight * mask.to(at::kDouble), l * (t + 1)).reshape({l, t + 1});
    return std::make_pair(h.flip(1).cumsum(1).flip(1).slice(1, 1).cpu().contiguous(), h.sum(1).cpu().contiguous());
  };
  const auto [tp, total_pos] = above(pos);
  const auto [fp, total_neg] = above(pos.logical_not());
  const double *a = tp.data_ptr<double>(), *b = fp.data_ptr<double>();
  const double *np = total_pos.data_ptr<double>(), *nn = total_neg.data_ptr<double>();
  for (int64_t r = 0; r < t; ++r) {
    const int64_t j = order[r];
    for (int64_t k = 0; k < l; ++k) {
      s[(0 * t + j) * l + k] += a[k * t + r];
      s[(1 * t + j) * l + k] += b[k * t + r];
      s[(2 * t + j) * l + k] += nn[k] - b[k * t + r];
      s[(3 * t + j) * l + k] += np[k] - a[k * t + r];
    }
  }
}

// How a confusion metric reads its batch (update_confusion_matrix_variables' arguments).
struct Reading {
  std::vector<double> thresholds;
  std::optional<int64_t> top_k, class_id;
  bool multi_label = false, clip = false, sigmoid = false;
  std::vector<double> label_weights;  // AUC without multi_label: weights of the entries per class
};

using Result = std::function<std::vector<double>(const Counts&)>;

class ConfusionMetric : public KerasMetric {
 public:
  ConfusionMetric(std::string who, Reading r, int64_t labels, Result result)
      : who_(std::move(who)), r_(std::move(r)), labels_(labels), result_(std::move(result)) {}
  size_t state_size() const override { return 4 * r_.thresholds.size() * static_cast<size_t>(labels_); }
  std::vector<double> result(const double* s) const override {
    return result_(Counts{s, static_cast<int64_t>(r_.thresholds.size()), labels_});
  }
  void update(const Batch& b, double* s) const override {
    at::Tensor p = b.probability_rows(), y = b.target_rows().ne(0), w;
    if (r_.sigmoid) p = p.sigmoid();
    if (r_.top_k) {  // metrics_utils._filter_top_k: the others become NEG_INF
      const at::Tensor idx = std::get<1>(p.topk(std::min<int64_t>(*r_.top_k, p.size(1)), 1));
      const at::Tensor keep = at::zeros_like(p, at::kBool).scatter_(1, idx, true);
      p = at::where(keep, p, at::full_like(p, kNegInf));
    }
    if (!r_.label_weights.empty()) {
      w = at::tensor(r_.label_weights, at::kDouble).to(p.device()).unsqueeze(0).expand(p.sizes());
    }
    if (r_.class_id) {
      if (*r_.class_id < 0 || *r_.class_id >= p.size(1)) {
        throw ConfigError("metric " + who_ + ": class_id " + std::to_string(*r_.class_id) + " outside the " +
                          std::to_string(p.size(1)) + " outputs");
      }
      p = p.slice(1, *r_.class_id, *r_.class_id + 1), y = y.slice(1, *r_.class_id, *r_.class_id + 1);
    }
    if (r_.multi_label && p.size(1) != labels_) {
      throw ConfigError("metric " + who_ + ": " + std::to_string(labels_) + " labels, got outputs with " +
                        std::to_string(p.size(1)));
    }
    if (r_.multi_label) w = at::Tensor();  // AUC weighs the labels in its result then
    if (b.weighted()) {  // update_confusion_matrix_variables: the sample weights times the label weights
      const at::Tensor sw = b.weights_for(p.size(0)).unsqueeze(1).expand(p.sizes());
      w = w.defined() ? w * sw : sw;
    }
    if (!r_.multi_label) p = p.reshape({-1, 1}), y = y.reshape({-1, 1});
    if (w.defined() && !r_.multi_label) w = w.reshape({-1, 1});
    if (r_.clip) p = p.clamp(0.0, 1.0);
    add_counts(p, y, w, r_.thresholds, s);
  }

 private:
  std::string who_;
  Reading r_;
  int64_t labels_;
  Result result_;
};

// One value per threshold of f(tp, fp, tn, fn) (a single number for one threshold, as Keras).
Result per_threshold(std::function<double(double, double, double, double)> f) {
  return [f](const Counts& c) {
    std::vector<double> v;
    for (int64_t j = 0; j < c.t; ++j) v.push_back(f(c.tp(j), c.fp(j), c.tn(j), c.fn(j)));
    return v;
  };
}

// SensitivitySpecificityBase._find_max_under_constraint: the largest dependent value among the thresholds
// where the constrained one reaches `value` (0 when none does).
Result max_under_constraint(double value, std::function<std::pair<double, double>(const Counts&, int64_t)> f) {
  return [value, f](const Counts& c) {
    double best = 0;
    for (int64_t j = 0; j < c.t; ++j) {
      const auto [constrained, dependent] = f(c, j);
      if (constrained >= value) best = std::max(best, dependent);
    }
    return std::vector<double>{best};
  };
}

double recall_at(const Counts& c, int64_t j) { return no_nan(c.tp(j), c.tp(j) + c.fn(j)); }
double precision_at(const Counts& c, int64_t j) { return no_nan(c.tp(j), c.tp(j) + c.fp(j)); }
double specificity_at(const Counts& c, int64_t j) { return no_nan(c.tn(j), c.tn(j) + c.fp(j)); }

// AUC.interpolate_pr_auc (Davis & Goadrich) for one label.
double interpolated_pr_auc(const Counts& c, int64_t k) {
  double area = 0;
  for (int64_t i = 0; i + 1 < c.t; ++i) {
    const double dtp = c.tp(i, k) - c.tp(i + 1, k);
    const double p0 = c.tp(i, k) + c.fp(i, k), p1 = c.tp(i + 1, k) + c.fp(i + 1, k);
    const double slope = no_nan(dtp, std::max(p0 - p1, 0.0));
    const double intercept = c.tp(i + 1, k) - slope * p1;
    const double ratio = p0 > 0 && p1 > 0 ? no_nan(p0, std::max(p1, 0.0)) : 1.0;
    area += no_nan(slope * (dtp + intercept * std::log(ratio)), std::max(c.tp(i + 1, k) + c.fn(i + 1, k), 0.0));
  }
  return area;
}

// AUC.result's Riemann sum for one label: x, y of the curve at each threshold, heights by summation method.
double riemann_auc(const Counts& c, int64_t k, const std::string& curve, const std::string& method) {
  std::vector<double> x(c.t), y(c.t);
  for (int64_t j = 0; j < c.t; ++j) {
    const double tp = c.tp(j, k), fp = c.fp(j, k), tn = c.tn(j, k), fn = c.fn(j, k);
    const double recall = no_nan(tp, tp + fn);
    if (curve == "ROC") {
      x[j] = no_nan(fp, fp + tn), y[j] = recall;
    } else if (curve == "PR") {
      x[j] = recall, y[j] = no_nan(tp, tp + fp);
    } else {  // PRGAIN
      const double scale = no_nan(tp + fn, tn + fp);
      x[j] = tp == 0 ? 0.0 : std::max(1.0 - scale * no_nan(fn, tp), 0.0);
      y[j] = tp == 0 ? 1.0 : 1.0 - scale * no_nan(fp, tp);
    }
  }
  double area = 0;
  for (int64_t i = 0; i + 1 < c.t; ++i) {
    const double h = method == "interpolation" ? (y[i] + y[i + 1]) / 2.0
                     : method == "minoring"    ? std::min(y[i], y[i + 1])
                                               : std::max(y[i], y[i + 1]);
    area += (x[i] - x[i + 1]) * h;
  }
  return area;
}

// metrics_utils.is_evenly_distributed_thresholds of [0] + t + [1].
bool evenly_distributed(const std::vector<double>& inner) {
  const size_t n = inner.size() + 2;
  for (size_t i = 0; i < inner.size(); ++i) {
    if (std::abs(inner[i] - static_cast<double>(i + 1) / static_cast<double>(n - 1)) > kEps) return false;
  }
  return true;
}

std::vector<double> even_thresholds(int64_t n, double below, double above) {
  std::vector<double> t = {below};
  for (int64_t i = 0; i < n - 2; ++i) t.push_back(static_cast<double>(i + 1) / static_cast<double>(n - 1));
  t.push_back(above);
  return t;
}

std::unique_ptr<KerasMetric> make_auc(const Options& o, const Context& ctx) {
  Reading r;
  r.multi_label = o.boolean("multi_label", false);
  r.sigmoid = o.boolean("from_logits", false);
  const std::string curve = o.choice("curve", "ROC", {"ROC", "roc", "PR", "pr", "PRGAIN", "prgain"});
  const std::string method =
      o.choice("summation_method", "interpolation",
               {"interpolation", "Interpolation", "majoring", "Majoring", "minoring", "Minoring"});
  std::string up_curve = curve, low_method = method;
  for (char& ch : up_curve) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
  for (char& ch : low_method) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  if (o.has("thresholds")) {
    std::vector<double> inner = o.thresholds("thresholds", {});
    std::sort(inner.begin(), inner.end());
    r.clip = evenly_distributed(inner);
    r.thresholds = {-kEps};
    r.thresholds.insert(r.thresholds.end(), inner.begin(), inner.end());
    r.thresholds.push_back(1.0 + kEps);
  } else {
    const int64_t n = o.integer("num_thresholds", 200);
    if (n <= 1) throw o.error("num_thresholds must be an integer > 1, got " + std::to_string(n));
    r.thresholds = even_thresholds(n, -kEps, 1.0 + kEps);
    r.clip = true;
  }
  const auto num_labels = o.optional_integer("num_labels");
  if (num_labels && !r.multi_label) throw o.error("num_labels is needed only when multi_label is true");
  if (num_labels && *num_labels != ctx.outputs) {
    throw o.error("num_labels " + std::to_string(*num_labels) + " but the model has " + std::to_string(ctx.outputs) +
                  " outputs");
  }
  std::vector<double> weights;
  if (o.has("label_weights")) {
    for (const Json& v : o.config()["label_weights"]) {
      if (!v.is_number()) throw o.error("label_weights must be a list of numbers");
      weights.push_back(v.get<double>());
    }
    if (static_cast<int64_t>(weights.size()) != ctx.outputs) throw o.error("label_weights needs one weight per output");
  }
  if (!r.multi_label) r.label_weights = weights;
  const int64_t labels = r.multi_label ? ctx.outputs : 1;
  Result result = [up_curve, low_method, weights, multi = r.multi_label](const Counts& c) {
    std::vector<double> by_label;
    for (int64_t k = 0; k < c.l; ++k) {
      by_label.push_back(up_curve == "PR" && low_method == "interpolation" ? interpolated_pr_auc(c, k)
                                                                           : riemann_auc(c, k, up_curve, low_method));
    }
    if (!multi) return by_label;
    double num = 0, den = 0;
    for (int64_t k = 0; k < c.l; ++k) {
      const double w = weights.empty() ? 1.0 : weights[k];
      num += w * by_label[k], den += w;
    }
    return std::vector<double>{no_nan(num, den)};
  };
  return std::make_unique<ConfusionMetric>(o.class_name(), r, labels, result);
}

// PrecisionAtRecall, RecallAtPrecision, SensitivityAtSpecificity, SpecificityAtSensitivity.
std::unique_ptr<KerasMetric> make_at_metric(const Options& o) {
  const std::string& c = o.class_name();
  const char* key = c == "PrecisionAtRecall"          ? "recall"
                    : c == "RecallAtPrecision"        ? "precision"
                    : c == "SensitivityAtSpecificity" ? "specificity"
                                                      : "sensitivity";
  if (!o.has(key)) throw o.error(std::string("needs its argument ") + key);
  const double value = o.number_in(key, 0.0, 0.0, 1.0);
  const int64_t n = o.integer("num_thresholds", 200);
  if (n <= 0) throw o.error("num_thresholds must be an integer > 0, got " + std::to_string(n));
  Reading r;
  r.thresholds = n == 1 ? std::vector<double>{0.5} : even_thresholds(n, 0.0, 1.0);
  r.clip = n > 1;
  r.class_id = o.optional_integer("class_id");
  std::function<std::pair<double, double>(const Counts&, int64_t)> f;
  if (c == "PrecisionAtRecall")
    f = [](const Counts& k, int64_t j) { return std::make_pair(recall_at(k, j), precision_at(k, j)); };
  if (c == "RecallAtPrecision")
    f = [](const Counts& k, int64_t j) { return std::make_pair(precision_at(k, j), recall_at(k, j)); };
  if (c == "SensitivityAtSpecificity") {
    f = [](const Counts& k, int64_t j) { return std::make_pair(specificity_at(k, j), recall_at(k, j)); };
  }
  if (c == "SpecificityAtSensitivity") {
    f = [](const Counts& k, int64_t j) { return std::make_pair(recall_at(k, j), specificity_at(k, j)); };
  }
  return std::make_unique<ConfusionMetric>(c, r, 1, max_under_constraint(value, f));
}

}  // namespace

std::unique_ptr<KerasMetric> make_confusion_metric(const Options& o, const Context& ctx) {
  const std::string& c = o.class_name();
  if (c == "AUC") return make_auc(o, ctx);
  if (c != "Precision" && c != "Recall" && c.find("Positives") == std::string::npos &&
      c.find("Negatives") == std::string::npos) {
    return make_at_metric(o);
  }
  Reading r;
  r.top_k = o.optional_integer("top_k");
  if (r.top_k && *r.top_k < 1) throw o.error("top_k must be >= 1, got " + std::to_string(*r.top_k));
  r.class_id = o.optional_integer("class_id");
  r.thresholds = o.thresholds("thresholds", {r.top_k ? kNegInf : 0.5});
  if (c == "Precision")
    return std::make_unique<ConfusionMetric>(
        c, r, 1, per_threshold([](double tp, double fp, double, double) { return no_nan(tp, tp + fp); }));
  if (c == "Recall")
    return std::make_unique<ConfusionMetric>(
        c, r, 1, per_threshold([](double tp, double, double, double fn) { return no_nan(tp, tp + fn); }));
  const int cond = c == "TruePositives" ? 0 : c == "FalsePositives" ? 1 : c == "TrueNegatives" ? 2 : 3;
  return std::make_unique<ConfusionMetric>(c, r, 1, [cond](const Counts& k) {
    std::vector<double> v;
    for (int64_t j = 0; j < k.t; ++j) v.push_back(k.at(cond, j, 0));
    return v;
  });
}

namespace {

// FBetaScore: per class tp, fp, fn and Σ y (the "weighted" average's weights) of the thresholded
// predictions (threshold None: each row's maximum, if not ~0); the score from the sums.
class FBetaScore : public KerasMetric {
 public:
  FBetaScore(std::string average, double beta, std::optional<double> threshold, int64_t k)
      : average_(std::move(average)), beta2_(beta * beta), threshold_(threshold), k_(k) {}
  size_t state_size() const override { return 4 * static_cast<size_t>(k_); }
  void update(const Batch& b, double* s) const override {
    const at::Tensor p = b.probability_rows(), y = b.target_rows();
    if (p.size(1) != k_) throw ConfigError("metric FBetaScore: expects " + std::to_string(k_) + " outputs");
    const at::Tensor pred =
        (threshold_ ? p.gt(*threshold_) : p.ge(std::get<0>(p.max(1, true))).logical_and(p.abs().gt(1e-9)))
            .to(at::kDouble);
    const at::Tensor t = y.to(at::kDouble);
    // Keras: sample weights (N, 1) multiply each row's counts.
    const at::Tensor w = b.weighted() ? b.weights_for(p.size(0)).unsqueeze(1) : at::ones({1, 1}, t.options());
    const at::Tensor parts =
        at::stack({(pred * t * w).sum(0), (pred * (1.0 - t) * w).sum(0), ((1.0 - pred) * t * w).sum(0), (t * w).sum(0)})
            .cpu()
            .contiguous();
    const double* v = parts.data_ptr<double>();
    for (int64_t i = 0; i < 4 * k_; ++i) s[i] += v[i];
  }
  double score(double tp, double fp, double fn) const {
    const double p = tp / (tp + fp + kEps), r = tp / (tp + fn + kEps);
    return p * r / (beta2_ * p + r + kEps) * (1 + beta2_);
  }
  std::vector<double> result(const double* s) const override {
    if (average_ == "micro") {
      double tp = 0, fp = 0, fn = 0;
      for (int64_t c = 0; c < k_; ++c) tp += s[c], fp += s[k_ + c], fn += s[2 * k_ + c];
      return {score(tp, fp, fn)};
    }
    std::vector<double> f;
    double weights = 0, mean = 0, weighted = 0;
    for (int64_t c = 0; c < k_; ++c) f.push_back(score(s[c], s[k_ + c], s[2 * k_ + c])), weights += s[3 * k_ + c];
    for (int64_t c = 0; c < k_; ++c)
      mean += f[c] / static_cast<double>(k_), weighted += f[c] * s[3 * k_ + c] / (weights + kEps);
    if (average_ == "macro") return {mean};
    if (average_ == "weighted") return {weighted};
    return f;
  }

 private:
  std::string average_;
  double beta2_;
  std::optional<double> threshold_;
  int64_t k_;
};

}  // namespace

std::unique_ptr<KerasMetric> make_fbeta_score(const Options& o, const Context& ctx) {
  const std::string average = o.choice("average", "null", {"null", "micro", "macro", "weighted"});
  const double beta = o.number("beta", 1.0);
  if (beta <= 0) throw o.error("beta must be > 0, got " + o.config()["beta"].dump());
  std::optional<double> threshold;
  if (o.has("threshold")) {
    threshold = o.number("threshold", 0.5);
    if (*threshold <= 0.0 || *threshold > 1.0)
      throw o.error("threshold must lie in (0, 1], got " + o.config()["threshold"].dump());
  }
  return std::make_unique<FBetaScore>(average, beta, threshold, ctx.outputs);
}

}  // namespace torchfit::metric
