// Keras's mean metrics (keras/src/metrics/accuracy_metrics.py, regression_metrics.py, probabilistic_metrics.py,
// hinge_metrics.py: MeanMetricWrapper, the mean over the samples of a per-sample value) and R2Score.
#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>

#include <torchfit/training/losses.h>

#include "training/keras_metric.h"

namespace torchfit::metric {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// Per-sample values of a batch: (N) or (N, …) (then averaged per sample, as Keras's Mean reduces them).
using Values = std::function<at::Tensor(const Batch&)>;

// Keras's Mean over the per-sample values: statistics [Σ values, samples]; RootMeanSquaredError takes the
// square root of the mean (`root`). Weighted (reduce_to_samplewise_values): each sample adds the mean of
// w·v over its entries and counts the mean of its weights w (its weight, for one weight per sample).
class MeanMetric : public KerasMetric {
 public:
  MeanMetric(Values values, bool root) : values_(std::move(values)), root_(root) {}
  size_t state_size() const override { return 2; }
  void update(const Batch& b, double* s) const override {
    const int64_t n = b.samples();
    if (n == 0) return;
    const at::Tensor v = values_(b).to(at::kDouble).reshape({n, -1});
    if (!b.weighted()) {
      s[0] += v.mean(1).sum().item<double>();
      s[1] += static_cast<double>(n);
      return;
    }
    const at::Tensor w = b.weights_for(v.numel()).reshape(v.sizes());
    s[0] += (v * w).mean(1).sum().item<double>();
    s[1] += w.mean(1).sum().item<double>();
  }
  std::vector<double> result(const double* s) const override {
    if (s[1] <= 0) return {kNaN};
    return {root_ ? std::sqrt(s[0] / s[1]) : s[0] / s[1]};
  }

 private:
  Values values_;
  bool root_;
};

at::Tensor matches(const at::Tensor& a, const at::Tensor& b) { return a.eq(b).to(at::kFloat); }

// Keras's BinaryAccuracy: mean over the last axis of (p > threshold) == y; on logits of a sigmoid the
// threshold is compared as a logit (exact where the sigmoid would round).
Values binary_accuracy(double threshold) {
  return [threshold](const Batch& b) {
    at::Tensor pred;
    if (b.logits() && b.context().family == "binary_crossentropy" && threshold > 0 && threshold < 1) {
      pred = b.output().gt(std::log(threshold / (1.0 - threshold)));
    } else {
      pred = b.probabilities().gt(threshold);
    }
    return matches(b.rows(pred.to(at::kFloat)), b.target_rows());
  };
}

// top_k_categorical_accuracy / sparse_top_k_categorical_accuracy: the target's class among the k highest.
Values top_k(int64_t k) {
  return [k](const Batch& b) {
    const at::Tensor out = b.rows(b.output());
    const at::Tensor idx = std::get<1>(out.topk(std::min<int64_t>(k, out.size(1)), 1));
    return idx.eq(b.target_ids().unsqueeze(1)).any(1).to(at::kFloat);
  };
}

Loss metric_loss(const Options& o, const std::string& loss_class) {
  try {
    return Loss::from_json(Json{{"class_name", loss_class}, {"config", o.config()}});
  } catch (const ConfigError& e) {
    throw o.error(e.what());
  }
}

// The cross-entropy metrics on what Keras's metric would see: the model's output (a config from_logits reads
// it as logits), or — equal values, more stable — the trainer's logits when they are the same activation's.
Values crossentropy(const Options& o) {
  const Loss l = metric_loss(o, o.class_name());
  const bool own_logits = l.from_logits();
  const bool binary = o.class_name() == "BinaryCrossentropy";
  return [l, own_logits, binary](const Batch& b) {
    const bool same_activation = (b.context().family == "binary_crossentropy") == binary;
    const bool raw = !own_logits && b.logits() && same_activation;
    const at::Tensor in = raw ? b.output() : b.probabilities();
    const bool logits = own_logits || raw;
    if (binary) return l.values(in, b.dense_target(), logits);
    if (l.class_name == "SparseCategoricalCrossentropy") return l.values(b.rows(in), b.target_ids(), logits);
    return l.values(b.rows(in), b.target_rows(), logits);
  };
}

// The regression, hinge, KL and Poisson metrics: their Keras loss function on the probabilities.
Values loss_values(const Options& o, const std::string& loss_class, double sign) {
  const Loss l = metric_loss(o, loss_class);
  return [l, sign](const Batch& b) { return sign * l.values(b.probabilities(), b.dense_target(), false); };
}

Values values_of(const Options& o) {
  const std::string& c = o.class_name();
  if (c == "CategoricalAccuracy") {
    return [](const Batch& b) { return matches(b.rows(b.output()).argmax(1), b.target_rows().argmax(1)); };
  }
  if (c == "SparseCategoricalAccuracy") {
    return [](const Batch& b) { return matches(b.rows(b.output()).argmax(1), b.target_ids()); };
  }
  if (c == "BinaryAccuracy") return binary_accuracy(o.number("threshold", 0.5));
  if (c == "TopKCategoricalAccuracy" || c == "SparseTopKCategoricalAccuracy") {
    if (o.boolean("from_sorted_ids", false))
      throw o.error("from_sorted_ids=true is not supported (outputs are scores)");
    const int64_t k = o.integer("k", 5);
    if (k < 1) throw o.error("k must be >= 1, got " + std::to_string(k));
    return top_k(k);
  }
  if (c == "BinaryCrossentropy" || c == "CategoricalCrossentropy" || c == "SparseCategoricalCrossentropy") {
    return crossentropy(o);
  }
  if (c == "LogCoshError") return loss_values(o, "LogCosh", 1.0);
  if (c == "CosineSimilarity") return loss_values(o, "CosineSimilarity", -1.0);  // the loss is its negative
  if (c == "RootMeanSquaredError") {
    return [](const Batch& b) { return (b.probabilities() - b.dense_target()).square(); };
  }
  return loss_values(o, c, 1.0);  // MeanSquaredError … Poisson: the loss class of the same name
}

// Keras's R2Score: per output column Σy, Σy², Σ(y − p)², count, and the samples; the coefficient per column
// 1 − SSres/SStot (−inf → 0), aggregated uniformly, by variance (SStot) or not at all; adjusted by
// num_regressors p when p < n − 1: 1 − (1 − r2)(n − 1)/(n − p − 1) (else Keras warns and gives r2).
class R2Score : public KerasMetric {
 public:
  R2Score(std::string aggregation, int64_t regressors, int64_t k)
      : aggregation_(std::move(aggregation)), regressors_(regressors), k_(k) {}
  size_t state_size() const override { return 4 * static_cast<size_t>(k_) + 1; }
  void update(const Batch& b, double* s) const override {
    if (b.output().dim() != 2 || b.output().size(1) != k_) {
      throw ConfigError("metric R2Score: expects outputs (batch_size, " + std::to_string(k_) + ")");
    }
    const at::Tensor y = b.dense_target().to(at::kDouble), p = b.probabilities().to(at::kDouble);
    // Keras: weights (N) weigh a sample's every column; each column counts the sum of its weights, and the
    // samples with a weight ≠ 0 in some column count for the adjustment.
    const at::Tensor w = b.weighted() ? b.weights_for(y.numel()).reshape(y.sizes()) : at::ones_like(y);
    const at::Tensor parts = at::cat({(w * y).sum(0), (w * y * y).sum(0), ((y - p).square() * w).sum(0), w.sum(0),
                                      w.ne(0).any(1).sum().to(at::kDouble).reshape({1})})
                                 .cpu()
                                 .contiguous();
    const double* v = parts.data_ptr<double>();
    for (int64_t i = 0; i < 4 * k_ + 1; ++i) s[i] += v[i];
  }
  std::vector<double> result(const double* s) const override {
    std::vector<double> raw(k_), total(k_);
    for (int64_t c = 0; c < k_; ++c) {
      const double sum = s[c], squares = s[k_ + c], residual = s[2 * k_ + c], count = s[3 * k_ + c];
      total[c] = squares - sum * (sum / count);
      raw[c] = 1.0 - residual / total[c];
      if (std::isinf(raw[c])) raw[c] = 0.0;
    }
    std::vector<double> r2 = raw;
    if (aggregation_ == "uniform_average") {
      double m = 0;
      for (double v : raw) m += v / static_cast<double>(k_);
      r2 = {m};
    } else if (aggregation_ == "variance_weighted_average") {
      double num = 0, den = 0;
      for (int64_t c = 0; c < k_; ++c) num += total[c] * raw[c], den += total[c];
      r2 = {num / den};
    }
    const double n = s[4 * k_], p = static_cast<double>(regressors_);
    if (regressors_ != 0 && p < n - 1) {
      for (double& v : r2) v = 1.0 - (1.0 - v) * (n - 1.0) / (n - p - 1.0);
    }
    return r2;
  }

 private:
  std::string aggregation_;
  int64_t regressors_, k_;
};

}  // namespace

std::unique_ptr<KerasMetric> make_mean_metric(const Options& o, const Context&) {
  return std::make_unique<MeanMetric>(values_of(o), o.class_name() == "RootMeanSquaredError");
}

std::unique_ptr<KerasMetric> make_r2_score(const Options& o, const Context& c) {
  const std::string agg =
      o.choice("class_aggregation", "uniform_average", {"uniform_average", "variance_weighted_average", "null"});
  const int64_t regressors = o.integer("num_regressors", 0);
  if (regressors < 0) throw o.error("num_regressors must be >= 0, got " + std::to_string(regressors));
  return std::make_unique<R2Score>(agg, regressors, c.outputs);
}

}  // namespace torchfit::metric
