#pragma once
/// @file compile.h
/// Compile settings (keras Model.compile): loss, optimizer with Keras defaults, metrics.
#include <torch/arg.h>
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

/// Everything model.compile() takes.
struct CompileOptions {
  /// categorical_crossentropy | sparse_categorical_crossentropy | binary_crossentropy | mean_squared_error.
  TORCH_ARG(std::string, loss) = "categorical_crossentropy";
  TORCH_ARG(OptimizerOptions, optimizer) = {};
  /// accuracy | categorical_accuracy | sparse_categorical_accuracy | binary_accuracy |
  /// top_k_categorical_accuracy; printed under the name given ("accuracy" resolves by loss, as Keras).
  TORCH_ARG(std::vector<std::string>, metrics) = {};
};

}  // namespace torchfit
