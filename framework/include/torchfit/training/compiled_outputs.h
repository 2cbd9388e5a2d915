#pragma once
/// @file compiled_outputs.h
/// CompiledOutputs — compile()'s losses, loss weights and metrics resolved for each output of a model, as
/// Keras 3's CompileLoss and CompileMetrics (keras/src/trainers/compile_utils.py) resolve them.
#include <ATen/core/Tensor.h>
#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include <torchfit/model/compile.h>
#include <torchfit/training/logs.h>
#include <torchfit/training/metrics.h>

namespace torchfit {

class ModelImpl;

/// The training targets of a model with one or several outputs.
///
/// Per output i (in the model's output order, named by its layer as Keras's `model.output_names`):
/// - its loss: CompileOptions::output_losses[i] (a JSON list in output order, or an object output name →
///   loss; null = no loss for that output), else CompileOptions::loss for every output (Keras: one loss
///   given for several outputs applies to each);
/// - its weight: CompileOptions::loss_weights (null = 1 each; a number for one output; a list or an object
///   output name → weight);
/// - its metrics: CompileOptions::output_metrics (a list in output order whose entries are a metric, a list
///   of metrics or null; or an object output name → metric(s)), else CompileOptions::metrics — for one
///   output all of them, for several outputs one entry per output (Keras 3's flat-list rule);
/// - its weighted metrics: CompileOptions::weighted_metrics (one output: every entry; several: a list with
///   one entry per output, or an object by output name), updated with the batch's sample weights.
///
/// The total loss is Σ weight_i · loss_i (Keras 3's CompileLoss; the trainer adds the regularization
/// losses). One sample_weight weighs every output (Keras repeats it). Log names, as Keras 3: one output —
/// the metric names as MetricSet gives them; several — "<output>_<metric>" for each output's metrics;
/// then the weighted metrics under the same rule ("weighted_<metric>" where an unweighted metric already
/// has the name); then "<output>_loss" for each output with a loss when more than one output has one (the
/// unweighted loss, a mean over the batches weighted by their sizes).
/// The model runs for logits (Model::forward_multi(xs, true)) only when every output's loss can use the
/// logits of its activation (loss_uses_logits); otherwise every output gives probabilities.
/// Errors (ConfigError, naming the output and Keras's rule): a list of another length than the outputs, an
/// object naming an output the model does not have (listing its outputs), no loss at all, a weight that is not
/// a finite number, a flat metrics list of another length than the outputs, unknown loss or metric names.
class CompiledOutputs {
 public:
  CompiledOutputs(const CompileOptions& options, const ModelImpl& model);

  size_t outputs() const { return heads_.size(); }
  /// Output i's name (its layer's name).
  const std::string& output_name(size_t i) const { return heads_.at(i).name; }
  /// Output i's loss as CompileOptions holds one ("" = none).
  const std::string& loss(size_t i) const { return heads_.at(i).loss; }
  double loss_weight(size_t i) const { return heads_.at(i).weight; }
  /// Output i's metrics.
  const MetricSet& metrics(size_t i) const { return *heads_.at(i).metrics; }
  /// Whether the model is run for logits.
  bool logits() const { return logits_; }

  /// Length of the statistics vector: every output's metric statistics, then [Σ n·loss_i, Σ n] per
  /// output loss that is logged.
  size_t state_size() const { return size_; }
  /// The log names results() gives, in order (metrics, then the per-output losses).
  const std::vector<std::string>& names() const { return names_; }

  /// The total loss Σ weight_i · loss_i of a batch (a graph scalar); outputs' targets `ys` in output order;
  /// `sample_weight` (N) or undefined; `masks` the outputs' Keras masks (may be empty); `class_weight`
  /// (K, one output only) or undefined. When `state` is given, adds each logged per-output loss times the
  /// batch size n to it. Errors: ConfigError for a target count that is not the outputs' and compute_loss's.
  at::Tensor total_loss(const std::vector<at::Tensor>& outs, const std::vector<at::Tensor>& ys,
                        const at::Tensor& sample_weight, const std::vector<at::Tensor>& masks,
                        const at::Tensor& class_weight, std::vector<double>* state) const;
  /// Adds the batch's metric statistics of every output to `state`; the weighted metrics read
  /// `sample_weight` ((N) or per target entry; undefined = unweighted), or the class weights of the
  /// targets when `class_weight` (K) is given (fit's training data, one output).
  void update(const std::vector<at::Tensor>& outs, const std::vector<at::Tensor>& ys, std::vector<double>& state,
              const at::Tensor& sample_weight = {}, const at::Tensor& class_weight = {}) const;
  /// Every value under its log name (prefix + name).
  Logs results(const std::vector<double>& state, const std::string& prefix = "") const;

 private:
  struct Head {
    std::string name;
    std::string loss;  // "" = none
    double weight = 1.0;
    bool from_logits = false;
    std::shared_ptr<MetricSet> metrics;
    size_t metric_offset = 0;
    std::shared_ptr<MetricSet> weighted;      // weighted_metrics
    std::vector<std::string> weighted_names;  // their log names (without the output prefix)
    size_t weighted_offset = 0;
    size_t loss_offset = 0;  // into the statistics when the loss is logged
    bool logs_loss = false;
  };
  void resolve_losses(const CompileOptions& options);
  void resolve_weights(const nlohmann::json& weights);
  std::vector<std::vector<std::string>> resolve_metrics(const CompileOptions& options) const;
  std::vector<std::vector<std::string>> resolve_weighted_metrics(const nlohmann::json& spec) const;
  void add_metric_sets(const ModelImpl& model, const CompileOptions& options);
  void check_targets(size_t count) const;
  std::vector<Head> heads_;
  std::vector<std::string> names_;
  std::vector<std::string> output_names_;
  size_t size_ = 0;
  bool logits_ = false;
};

}  // namespace torchfit
