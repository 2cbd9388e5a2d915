#pragma once
/// @file compile.h
/// Compile settings (keras Model.compile): loss, optimizer with Keras defaults, metrics.
#include <torch/arg.h>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace torchfit {

/// Optimizer settings with Keras defaults. `learning_rate` < 0 ⇒ the optimizer's Keras default
/// (adam 1e-3, sgd 1e-2, rmsprop 1e-3).
struct OptimizerOptions {
  /// adam | sgd | rmsprop.
  TORCH_ARG(std::string, name) = "adam";
  TORCH_ARG(double, learning_rate) = -1.0;
  /// adam: beta_1, beta_2 (Keras 0.9, 0.999).
  TORCH_ARG(double, beta_1) = 0.9;
  TORCH_ARG(double, beta_2) = 0.999;
  /// adam / rmsprop epsilon (Keras 1e-7).
  TORCH_ARG(double, epsilon) = 1e-7;
  /// sgd / rmsprop momentum (Keras 0).
  TORCH_ARG(double, momentum) = 0.0;
  /// sgd Nesterov momentum (Keras false).
  TORCH_ARG(bool, nesterov) = false;
  /// rmsprop decay rho (Keras 0.9).
  TORCH_ARG(double, rho) = 0.9;
  /// adam: the single-pass FusedAdam (same math as torch::optim::Adam, see training/fused_adam.h);
  /// false ⇒ torch::optim::Adam itself (for comparisons).
  TORCH_ARG(bool, fused) = true;
};

/// Loss-scaling settings, with Keras's LossScaleOptimizer defaults (training/loss_scale_optimizer.h).
struct LossScaleOptions {
  /// true: the scale adapts (halved on non-finite gradients, doubled after `dynamic_growth_steps` finite
  /// steps); false: `initial_scale` stays (non-finite steps are still skipped).
  TORCH_ARG(bool, dynamic) = true;
  /// Starting scale (Keras 2^15 = 32768). Must be a finite number ≥ 1.
  TORCH_ARG(double, initial_scale) = 32768.0;
  /// Finite steps in a row after which the scale doubles (Keras 2000). Must be ≥ 1.
  TORCH_ARG(int64_t, dynamic_growth_steps) = 2000;
};

/// Everything model.compile() takes.
struct CompileOptions {
  /// categorical_crossentropy | sparse_categorical_crossentropy | binary_crossentropy | mean_squared_error.
  TORCH_ARG(std::string, loss) = "categorical_crossentropy";
  TORCH_ARG(OptimizerOptions, optimizer) = {};
  /// accuracy | categorical_accuracy | sparse_categorical_accuracy | binary_accuracy |
  /// top_k_categorical_accuracy; printed under the name given ("accuracy" resolves by loss, as Keras).
  TORCH_ARG(std::vector<std::string>, metrics) = {};
  /// Dynamic loss scaling (LossScaleOptimizer). Unset ⇒ on with Keras's defaults when the model's dtype
  /// policy is mixed_float16 (as Keras's compile wraps the optimizer), off otherwise; set ⇒ on with these
  /// settings whatever the policy.
  TORCH_ARG(std::optional<LossScaleOptions>, loss_scale) = std::nullopt;
};

}  // namespace torchfit
