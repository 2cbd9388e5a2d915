#pragma once
/// @file optimizer_features.h
/// OptimizerFeatures — what Keras's BaseOptimizer adds around every optimizer's update rule: gradient
/// accumulation, clipping (clipnorm, clipvalue, global_clipnorm), decoupled weight decay, learning-rate
/// schedules and the exponential moving average of the weights (use_ema).
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <ATen/core/Tensor.h>
#include <torch/optim/optimizer.h>
#include <nlohmann/json.hpp>

#include <torchfit/model/compile.h>

namespace torchfit {

/// Applies OptimizerOptions' Keras features around `optimizer`'s step. One training batch:
///   if (features.before_update()) { optimizer.step(); features.after_update(); }
/// before_update(), after backward: with gradient_accumulation_steps N it adds the gradients to the
/// accumulators and returns false on N − 1 batches out of N; on the N-th the gradients become the mean
/// of the N batches'. Then, on every update: clipping (clipnorm: g · c / max(‖g‖, c) per variable;
/// global_clipnorm: every g · c / max(‖(g_1, …, g_n)‖, c); clipvalue: clamp(g, −c, c)), the schedule's
/// rate for step = iterations() set on the optimizer, and weight decay w ← w − lr · weight_decay · w
/// (trainable weights only, as Keras: a frozen layer's weights are left alone).
/// after_update(): the EMA (average ← m · average + (1 − m) · w, m = 0 on the first update) and
/// iterations() + 1. finalize() copies the averages into the weights (end of fit, as Keras) and keeps
/// the trained ("raw") weights in the state, so that a checkpoint written then holds both and a resume
/// from it (load) continues from the raw weights, as the uninterrupted run would; the next update
/// drops them (a further fit() in the same process goes on from the weights as they are, as Keras).
/// Differences from Keras 3, which counts every batch in `iterations`: here iterations() counts weight
/// updates — the schedule's step, Adam's bias correction and the EMA advance once per update, so N
/// accumulated batches of b equal one batch of N·b.
/// Errors (constructor): ConfigError naming the option for a negative or non-finite value, more than one
/// clipping option, ema_momentum outside [0, 1], gradient_accumulation_steps 1 or < 0, or a bad schedule.
class OptimizerFeatures {
 public:
  OptimizerFeatures(const OptimizerOptions& options, torch::optim::Optimizer& optimizer, std::vector<at::Tensor> params,
                    double initial_learning_rate);

  /// True when any feature is on.
  bool enabled() const;
  /// Features that rewrite gradients or weights before the step (accumulation, clipping, weight decay).
  bool changes_gradients() const;
  bool has_schedule() const { return options_.learning_rate_schedule().has_value(); }
  /// See the class comment. Returns whether the optimizer steps on this batch.
  bool before_update();
  void after_update();
  /// The model's weights ← the EMA, the trained weights kept for state() and tensors() (no-op without
  /// use_ema or before the first update).
  void finalize();
  /// True between finalize() and the next update: the model's weights are the averages.
  bool finalized() const { return !raw_.empty(); }

  /// Weight updates applied (Keras `iterations`, counted in updates).
  int64_t iterations() const { return iterations_; }
  /// Batches accumulated since the last update (0 … N − 1).
  int64_t accumulated() const { return accumulated_; }
  /// The schedule's rate for the next update (the constant rate without a schedule).
  double current_learning_rate() const;
  /// The EMA of each parameter (empty without use_ema).
  const std::vector<at::Tensor>& averages() const { return averages_; }

  /// {"iterations", "accumulated", "config"} for a checkpoint, plus "weights": "averages" when
  /// finalized(); and the tensors ("ema_<i>", "accumulator_<i>", and when finalized the trained weights
  /// "raw_<i>").
  nlohmann::json state() const;
  std::map<std::string, at::Tensor> tensors() const;
  /// Restores state() and tensors(); a state saved finalized() puts the trained weights "raw_<i>" back
  /// into the model (its loaded weights were the averages). Errors: ConfigError naming a missing tensor
  /// or another shape.
  void load(const nlohmann::json& state, const std::map<std::string, at::Tensor>& tensors);

 private:
  void clip_gradients();
  void set_learning_rate(double lr);
  OptimizerOptions options_;
  torch::optim::Optimizer& optimizer_;
  std::vector<at::Tensor> params_;
  double initial_lr_;
  int64_t iterations_ = 0;
  int64_t accumulated_ = 0;
  std::vector<at::Tensor> accumulators_, averages_;
  std::vector<at::Tensor> raw_;  // the trained weights while the model holds the averages (finalize)
};

}  // namespace torchfit
