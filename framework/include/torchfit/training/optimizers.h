#pragma once
/// @file optimizers.h
/// make_optimizer — the LibTorch optimizer for compile()'s optimizer settings.
#include <memory>
#include <vector>

#include <ATen/core/Tensor.h>
#include <torch/optim/optimizer.h>
#include <nlohmann/json.hpp>

#include <torchfit/model/compile.h>

namespace torchfit {

/// Builds "adam" (torchfit's FusedAdam unless fused(false), then torch::optim::Adam), "sgd" or "rmsprop"
/// over `params`; a learning rate < 0 means the Keras default (adam 1e-3, sgd 1e-2, rmsprop 1e-3).
/// Errors: ConfigError for an unknown name (listing the known ones) or a learning rate that is 0, nan
/// or infinite.
std::unique_ptr<torch::optim::Optimizer> make_optimizer(const OptimizerOptions& options,
                                                        std::vector<at::Tensor> params);

/// The optimizer's settings with Keras's names (name, learning_rate, beta_1, beta_2, epsilon, momentum,
/// nesterov, rho, clipnorm, clipvalue, global_clipnorm, weight_decay, use_ema, ema_momentum,
/// gradient_accumulation_steps; unset options null, as Keras's get_config) and "learning_rate" as Keras's
/// schedule config when there is a schedule; what run.json and checkpoints record. `learning_rate`: the
/// resolved rate (the schedule's initial one).
nlohmann::json optimizer_config(const OptimizerOptions& options, double learning_rate);

/// The Keras default learning rate of an optimizer name when `options.learning_rate()` < 0 (adam 1e-3,
/// sgd 1e-2, rmsprop 1e-3), else options.learning_rate(). Errors: ConfigError for an unknown name.
double resolved_learning_rate(const OptimizerOptions& options);

}  // namespace torchfit
