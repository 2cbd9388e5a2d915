#pragma once
/// @file custom_objects.h
/// A user's own losses and metrics, registered under a class name so that compile(), checkpoints, resumed
/// runs and Keras configs name them as they name Keras's own (Keras's custom_objects /
/// keras.saving.register_keras_serializable). Register before the first compile() or resume that names
/// them; an unregistered name is the usual "unknown loss/metric" ConfigError.
#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <ATen/core/Tensor.h>
#include <nlohmann/json.hpp>

namespace torchfit {

/// A user loss: Keras's `call(y_true, y_pred)` of a Loss subclass (or a loss function) — the values BEFORE
/// the reduction, one per sample (N) (or per entry, e.g. (N, T) or (N, H, W)), or a scalar. `y_true` is
/// the batch's target as the data gives it; `y_pred` the model's output as the model gives it (its
/// probabilities: a user loss is never fed logits), both on the model's device; `config` the
/// {"class_name", "config"} entry's config (Keras's get_config of the loss; {} for a bare name). The
/// compile options' reduction, sample weights, class weights, loss_weights and masks apply as for
/// Keras's losses (losses.h Loss::reduce). Must be differentiable with ATen ops and thread-safe (the
/// data-parallel ranks call it concurrently).
using LossFunction =
    std::function<at::Tensor(const at::Tensor& y_true, const at::Tensor& y_pred, const nlohmann::json& config)>;

/// Registers `function` as the loss `class_name` ("FocalTversky", "my_loss"): CompileOptions::loss,
/// output_losses and train_cnn/fit_arrays --loss then take the name or {"class_name": …, "config": {…}}
/// (any config keys; `reduction` is checked as for Keras's losses), and the checkpoint records it. The log
/// name of the loss is `class_name`. Errors: ConfigError for an empty name, a name Keras's catalogue
/// already has ("mse", "Huber"…), an empty function, or a name registered twice.
void register_loss(const std::string& class_name, LossFunction function);

/// A user metric: Keras's Metric subclass (update_state / result / reset_state) with its state held as a
/// vector of sums, as every torchfit metric — so batches, epochs and data-parallel ranks add up (the state
/// of several ranks is the element-wise sum of theirs), and reset_state is setting it to zeros.
class Metric {
 public:
  virtual ~Metric() = default;
  /// Number of statistics (≥ 1).
  virtual size_t state_size() const = 0;
  /// Adds one batch to state[0 .. state_size()): `y_true` the target as the data gives it, `y_pred` the
  /// model's probabilities (softmax/sigmoid applied when the trainer holds logits), `sample_weight`
  /// (N) or per entry when the metric is a weighted_metrics entry (undefined otherwise). On the model's
  /// device, without gradients. Called for each batch of training and of validation (separate states).
  virtual void update_state(const at::Tensor& y_true, const at::Tensor& y_pred, const at::Tensor& sample_weight,
                            double* state) const = 0;
  /// The value(s) from the sums: one number, or several (logged as name_0, name_1, …; the count must
  /// not depend on the state). Called with zeros before any update (return nan or 0 as Keras would).
  virtual std::vector<double> result(const double* state) const = 0;
};

/// Builds a user metric from its config (the {"class_name", "config"} entry's config; {} for a bare name).
/// Throw ConfigError for a bad config.
using MetricFactory = std::function<std::unique_ptr<Metric>(const nlohmann::json& config)>;

/// Registers the metric `class_name`: compile(metrics=…), weighted_metrics, per-output metrics and the
/// apps' --metrics then take the name or {"class_name": …, "config": {"name": …, …}}. Logged under the
/// config's "name", else `default_name` (empty: `class_name`). Errors: ConfigError for an empty name, a
/// name Keras's catalogue already has ("accuracy", "AUC"…), an empty factory, or a name registered twice.
void register_metric(const std::string& class_name, MetricFactory factory, const std::string& default_name = "");

namespace detail {
/// The registered loss `class_name` (nullptr when none).
const LossFunction* registered_loss(const std::string& class_name);
/// The registered metric `class_name` and its default log name (nullptr when none).
const MetricFactory* registered_metric(const std::string& class_name, std::string* default_name = nullptr);
/// Every registered loss / metric name (sorted).
std::vector<std::string> registered_loss_names();
std::vector<std::string> registered_metric_names();
}  // namespace detail

}  // namespace torchfit
