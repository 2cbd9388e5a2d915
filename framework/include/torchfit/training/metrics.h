#pragma once
/// @file metrics.h
/// Keras metrics (compile(metrics=…)). Each metric keeps its statistics as a vector of sums (correct
/// predictions and samples; confusion counts at thresholds; a confusion matrix): the statistics of
/// batches, epochs and ranks add up, and the value is computed from the sums — a running value per batch
/// and the exact value per epoch, as Keras's stateful metrics.
#include <ATen/ATen.h>
#include <memory>
#include <string>
#include <vector>

#include <torchfit/training/logs.h>

namespace torchfit {

/// The metric a compile(metrics=…) entry names: "accuracy"/"acc" → categorical_accuracy,
/// sparse_categorical_accuracy or binary_accuracy depending on the loss (as Keras); another Keras name as
/// given; a Keras metric object's JSON text → its log name (the config's "name", else Keras's default name
/// of the class: "precision", "auc", "mean_io_u" …). Errors: ConfigError for an unknown metric (listing the
/// known names) or an argument its class does not take.
std::string resolve_metric(const std::string& name, const std::string& loss);

/// Every metric name MetricSet takes (sorted): Keras 3's keras.metrics.get names (class names, their
/// snake_case, bce/mse/mae/mape/msle and their upper case) and accuracy, acc.
std::vector<std::string> metric_names();

/// Sum over the batch of a per-sample accuracy metric (e.g. number of correct predictions). `output` may
/// be logits or probabilities (argmax and top-k are the same; binary uses 0 on logits / 0.5 on
/// probabilities, given by `from_logits`). top_k_categorical_accuracy uses k = 5 (Keras default).
/// Errors: ConfigError for a metric that is not one of the four accuracies.
double metric_sum(const std::string& resolved, const at::Tensor& output, const at::Tensor& target, bool from_logits);

/// Keras's thresholds of AUC(num_thresholds=200): −1e-7, 1/199, 2/199, …, 198/199, 1 + 1e-7.
std::vector<double> auc_thresholds();

namespace metric {
class KerasMetric;
}

/// The metrics of a compiled model: Keras 3's catalogue (keras/src/metrics/), each metric named by a Keras
/// string ("mse", "precision", "TopKCategoricalAccuracy") or by the JSON text of a Keras metric object
/// (`{"class_name": "Precision", "config": {"thresholds": 0.3}}`, Keras's arguments and defaults;
/// docs/training.md lists every class, its options and its source file).
///
/// Every metric keeps its statistics as sums, so batches, epochs and data-parallel ranks add up:
/// - means (accuracies, top-k, the regression, cross-entropy, hinge, KL and Poisson metrics — Keras's
///   MeanMetricWrapper): [Σ per-sample value, samples]; RootMeanSquaredError the square root of that mean;
/// - R2Score: per output Σy, Σy², Σ(y − p)², count, and the samples;
/// - thresholded counts (TruePositives … FalseNegatives, Precision, Recall, AUC, PrecisionAtRecall,
///   RecallAtPrecision, SensitivityAtSpecificity, SpecificityAtSensitivity): tp, fp, tn, fn of p > t at each
///   threshold (per label with AUC(multi_label=true)), over every (sample, class) entry unless class_id;
/// - F1Score/FBetaScore: per class tp, fp, fn, Σ y; IoU metrics: the K × K confusion matrix.
/// The value is computed from the sums: a running value per batch, the exact value per epoch.
/// Probabilities come from logits through softmax (categorical losses) or sigmoid (binary) when the trainer
/// hands logits. Targets: one-hot (N, K), sparse indices (N) (one-hot encoded for the metrics that read
/// one-hot targets; one-hot targets give their argmax to the sparse ones), or the output's shape.
/// A metric with a vector value (F1Score(average=None), R2Score(class_aggregation=None), a list of
/// thresholds) is logged as one column per element: name_0, name_1, … (Keras logs the array).
/// The name "f1_score" keeps torchfit's one number: F1Score(average="macro") (threshold 0.5 for one unit).
class MetricSet {
 public:
  /// `names` as the user wrote them; `outputs` = the model's output units (classes, Keras's last axis).
  /// Errors: ConfigError for an unknown name, a bad option (naming the metric and the option), or a log name
  /// given twice ("metric 'accuracy' is named twice").
  MetricSet(const std::vector<std::string>& names, const std::string& loss, bool from_logits, int64_t outputs);

  /// Length of the statistics vector of all metrics together.
  size_t state_size() const { return size_; }
  /// Adds the batch's statistics to `state` (size state_size()). `output`: (N, K) model output (logits when
  /// from_logits; images (N, C, H, W) have their classes on axis 1), `target`: the batch's labels.
  /// `sample_weight` (weighted_metrics; undefined = none): (N), or per entry of the target without its class
  /// axis ((N, H, W) per pixel) — Keras's weighted means (Σ w·v / Σ w), weighted confusion counts and IoU
  /// matrices, and R2Score's weighted sums. Errors: ConfigError naming the metric for a target or output it
  /// cannot read, or weights that fit neither way.
  void update(const at::Tensor& output, const at::Tensor& target, std::vector<double>& state,
              const at::Tensor& sample_weight = {}) const;
  /// Each metric's value under its log name (prefix + name, name_i for vector values): from the sums in
  /// `state`; nan when a mean holds no sample.
  Logs results(const std::vector<double>& state, const std::string& prefix = "") const;
  /// The log names results() gives, in order (what the progress line, CSV files and callbacks show).
  const std::vector<std::string>& names() const { return columns_; }

 private:
  struct Entry {
    std::string name;
    std::shared_ptr<const metric::KerasMetric> metric;
    size_t offset = 0, values = 1;
  };
  std::vector<Entry> entries_;
  std::vector<std::string> columns_;
  size_t size_ = 0;
  std::string loss_;
  bool from_logits_ = false;
  int64_t outputs_ = 1;
};

}  // namespace torchfit
