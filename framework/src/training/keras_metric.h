#pragma once
// Internal to the library: the metric families behind MetricSet (training/metrics.h). Each family is one
// small class that adds a batch's statistics to a slice of the summed state and computes its value from
// the sums; the catalogue (metric_catalogue.cpp) maps Keras's names and options to them.
#include <ATen/ATen.h>
#include <initializer_list>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include <torchfit/error.h>

namespace torchfit::metric {

using Json = nlohmann::json;

/// What the metrics know of the model when they are built: the loss's family ("binary_crossentropy",
/// "sparse_categorical_crossentropy", or another Keras loss name) and the output units K.
struct Context {
  std::string family;
  int64_t outputs = 1;
};

/// One batch as the metrics read it. `output` as the trainer hands it (logits when `logits`), `target` as
/// the loader gives it. The derived views are computed on first use and kept for the other metrics.
/// "Rows" are (M, K) matrices with the class axis last: the held class axis is 1 for images (N, C, H, W)
/// and the last axis otherwise (Keras's axis −1), so M = N for (N, K) outputs and N·H·W for images.
/// `sample_weight` (weighted_metrics only; undefined = none): (N) per sample, or per entry of the target
/// without its class axis — (N, H, W) per pixel, (N, T) per step.
class Batch {
 public:
  Batch(const at::Tensor& output, const at::Tensor& target, bool logits, const Context& context,
        const at::Tensor& sample_weight = {});
  const at::Tensor& output() const { return output_; }
  const at::Tensor& target() const { return target_; }
  bool logits() const { return logits_; }
  const Context& context() const { return context_; }
  int64_t samples() const { return output_.size(0); }
  /// softmax (sigmoid for the binary family) of logits; the output itself otherwise. Float32.
  const at::Tensor& probabilities() const;
  /// The target in the output's shape: sparse class indices (one rank less, or a trailing 1) one-hot.
  const at::Tensor& dense_target() const;
  /// probabilities() and dense_target() as rows (M, K).
  const at::Tensor& probability_rows() const;
  const at::Tensor& target_rows() const;
  /// The class index of each row (M), int64: sparse targets as given, one-hot ones by their argmax.
  const at::Tensor& target_ids() const;
  /// `t` (the output's shape) as rows (M, K).
  at::Tensor rows(const at::Tensor& t) const;
  /// Whether the batch has sample weights.
  bool weighted() const { return sample_weight_.defined(); }
  /// The sample weights as given (float64; undefined when unweighted).
  const at::Tensor& sample_weight() const { return sample_weight_; }
  /// The sample weights for `m` entries in sample order (m a multiple of N; float64 (m)): a weight per
  /// sample repeats over its m/N entries, one per entry is taken as given, and one per group of m/N / P
  /// consecutive entries (P weights a sample, e.g. per pixel for rows of K classes) repeats over its group —
  /// Keras's broadcast of sample_weight to the values. Undefined when unweighted. Errors: ConfigError
  /// naming both shapes when the weights fit neither way.
  at::Tensor weights_for(int64_t m) const;

 private:
  bool sparse_target() const;
  at::Tensor output_, target_, sample_weight_;
  bool logits_;
  Context context_;
  mutable at::Tensor probabilities_, dense_, probability_rows_, target_rows_, ids_;
};

/// A metric family: the length of its statistics, how a batch adds to them, and the value(s) from them.
class KerasMetric {
 public:
  virtual ~KerasMetric() = default;
  virtual size_t state_size() const = 0;
  /// Adds the batch's statistics to s[0 .. state_size()).
  virtual void update(const Batch& batch, double* s) const = 0;
  /// The value from the sums: one number, or one per element (F1Score(average=None), R2Score(None),
  /// thresholds lists). An empty statistic gives Keras's value for it (0 for divide_no_nan, nan for 0/0).
  virtual std::vector<double> result(const double* s) const = 0;
};

/// A metric's config as given in {"class_name", "config"}, read with Keras's defaults; every error names
/// the metric ("metric Precision: thresholds must lie in [0, 1], got 1.5").
class Options {
 public:
  Options(std::string class_name, Json config);
  const std::string& class_name() const { return class_name_; }
  const Json& config() const { return config_; }
  bool has(const char* key) const { return config_.contains(key) && !config_[key].is_null(); }
  double number(const char* key, double fallback) const;
  /// A number in [lo, hi].
  double number_in(const char* key, double fallback, double lo, double hi) const;
  int64_t integer(const char* key, int64_t fallback) const;
  std::optional<int64_t> optional_integer(const char* key) const;
  bool boolean(const char* key, bool fallback) const;
  /// A string among `allowed` (null gives "null" when "null" is allowed).
  std::string choice(const char* key, const std::string& fallback, std::initializer_list<const char*> allowed) const;
  /// A number or a list of numbers, each in [0, 1] (Keras's thresholds); `fallback` when absent.
  std::vector<double> thresholds(const char* key, std::vector<double> fallback) const;
  /// A list of integers (IoU's target_class_ids).
  std::vector<int64_t> integers(const char* key, std::vector<int64_t> fallback) const;
  ConfigError error(const std::string& what) const;

 private:
  std::string class_name_;
  Json config_;
};

/// The families (each factory reads the options of the classes it serves):
/// accuracies, top-k, regression and loss-as-metric means, RootMeanSquaredError (mean_metrics.cpp);
std::unique_ptr<KerasMetric> make_mean_metric(const Options& o, const Context& c);
/// R2Score (mean_metrics.cpp);
std::unique_ptr<KerasMetric> make_r2_score(const Options& o, const Context& c);
/// TruePositives … FalseNegatives, Precision, Recall, AUC and the four "at" metrics (confusion_metrics.cpp);
std::unique_ptr<KerasMetric> make_confusion_metric(const Options& o, const Context& c);
/// FBetaScore and F1Score (confusion_metrics.cpp);
std::unique_ptr<KerasMetric> make_fbeta_score(const Options& o, const Context& c);
/// IoU, MeanIoU, BinaryIoU, OneHotIoU, OneHotMeanIoU (iou_metrics.cpp).
std::unique_ptr<KerasMetric> make_iou(const Options& o, const Context& c);

}  // namespace torchfit::metric

namespace torchfit::metric {

/// A metrics entry read: the Keras class, its config, the column name in the logs.
struct Spec {
  std::string class_name;
  Json config = Json::object();
  std::string log_name;
};

/// Reads a compile(metrics=…) entry: a Keras name (keras/src/metrics/__init__.py ALL_OBJECTS_DICT: the class
/// names, their snake_case and bce, mse, mae, mape, msle in both cases; "accuracy"/"acc" resolved by the loss
/// family as Keras's compile_utils.get_metric) logged under the name as given, or the JSON text of
/// {"class_name": …, "config": {…}} logged under the config's "name" (default Keras's name of the class).
/// Errors: ConfigError for an unknown name (listing the known ones), bad JSON, an argument the class does not
/// take.
Spec parse_metric(const std::string& entry, const Context& context);
/// The metric of a spec. Errors: ConfigError naming the metric for a bad option value.
std::unique_ptr<KerasMetric> build_metric(const Spec& spec, const Context& context);
/// Every name parse_metric takes (sorted).
std::vector<std::string> metric_names();

}  // namespace torchfit::metric
