#pragma once
/// @file metrics.h
/// Keras metrics (compile(metrics=…)). Each metric keeps its statistics as a vector of sums (correct
/// predictions and samples; true/false positives; AUC's confusion counts at 200 thresholds): the
/// statistics of batches, epochs and ranks add up, and the value is computed from the sums — a running
/// value per batch and the exact value per epoch, as Keras's stateful metrics.
#include <ATen/ATen.h>
#include <string>
#include <vector>

#include <torchfit/training/logs.h>

namespace torchfit {

/// The metric a user name resolves to: "accuracy"/"acc" → categorical_accuracy,
/// sparse_categorical_accuracy or binary_accuracy depending on the loss (as Keras); other names as given
/// (precision, recall, auc, f1_score, top_k_categorical_accuracy, ...).
/// Errors: ConfigError for unknown metric names (listing the known ones).
std::string resolve_metric(const std::string& name, const std::string& loss);

/// Sum over the batch of a per-sample accuracy metric (e.g. number of correct predictions). `output` may
/// be logits or probabilities (argmax and top-k are the same; binary uses 0 on logits / 0.5 on
/// probabilities, given by `from_logits`). top_k_categorical_accuracy uses k = 5 (Keras default).
/// Errors: ConfigError for a metric that is not a per-sample mean (precision, recall, auc, f1_score).
double metric_sum(const std::string& resolved, const at::Tensor& output, const at::Tensor& target, bool from_logits);

/// Keras's thresholds of AUC(num_thresholds=200): −1e-7, 1/199, 2/199, …, 198/199, 1 + 1e-7.
std::vector<double> auc_thresholds();

/// The metrics of a compiled model. Statistics per metric (all sums):
/// - accuracies: [correct, samples] → correct / samples;
/// - precision: [tp, fp] at threshold 0.5 over every (sample, class) entry of the probabilities (Keras
///   Precision(): a one-hot or binary target, micro over the entries) → tp / (tp + fp), 0 when empty;
/// - recall: [tp, fn] likewise → tp / (tp + fn);
/// - auc: tp, fp, tn, fn at each of auc_thresholds() (prediction > threshold), Keras AUC()'s defaults
///   (ROC curve, 200 thresholds, "interpolation" = trapezoids): Σ (fpr_i − fpr_{i+1}) (tpr_i + tpr_{i+1}) / 2;
/// - f1_score: per class tp, fp, fn of the one-hot argmax prediction (threshold 0.5 for one sigmoid
///   output) → Keras F1Score(average="macro"): mean over classes of 2·p·r / (p + r + ε), p = tp /
///   (tp + fp + ε), r = tp / (tp + fn + ε), ε = 1e-7.
/// Probabilities come from logits through softmax (categorical losses) or sigmoid (binary) when the
/// trainer hands logits. Sparse targets (N) are one-hot encoded for precision/recall/auc/f1_score.
class MetricSet {
 public:
  /// `names` as the user wrote them; `outputs` = the model's output units (classes).
  /// Errors: ConfigError for an unknown name or a name given twice ("metric 'accuracy' is named twice").
  MetricSet(const std::vector<std::string>& names, const std::string& loss, bool from_logits, int64_t outputs);

  /// Length of the statistics vector of all metrics together.
  size_t state_size() const { return size_; }
  /// Adds the batch's statistics to `state` (size state_size()). `output`: (N, K) model output (logits when
  /// from_logits), `target`: the batch's labels.
  void update(const at::Tensor& output, const at::Tensor& target, std::vector<double>& state) const;
  /// Each metric's value under its given name (prefix + name): from the sums in `state`; nan when the
  /// statistics hold no sample.
  Logs results(const std::vector<double>& state, const std::string& prefix = "") const;
  const std::vector<std::string>& names() const { return names_; }

 private:
  at::Tensor probabilities(const at::Tensor& output) const;
  at::Tensor one_hot(const at::Tensor& target) const;
  std::vector<std::string> names_, resolved_;
  std::vector<size_t> offsets_;
  size_t size_ = 0;
  std::string loss_;
  bool from_logits_ = false;
  int64_t outputs_ = 1;
};

}  // namespace torchfit
