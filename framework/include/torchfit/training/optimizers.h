#pragma once
/// @file optimizers.h
/// make_optimizer — the LibTorch optimizer for compile()'s optimizer settings.
#include <memory>
#include <string>
#include <vector>

#include <ATen/core/Tensor.h>
#include <torch/optim/optimizer.h>
#include <nlohmann/json.hpp>

#include <torchfit/model/compile.h>

namespace torchfit {

/// Builds the optimizer named by `options` over `params`, with options.resolved()'s Keras defaults:
/// "adam" is torchfit's FusedAdam with Keras's ε (fused_adam.h; with fused(false) every parameter through
/// torch::optim::Adam's kernels), Keras's Adam (keras_optimizers.h KerasAdam) with amsgrad; "sgd",
/// "rmsprop", "adamw", "adagrad", "adadelta", "adamax", "nadam", "lion", "ftrl", "adafactor" are
/// keras_optimizers.h's, with Keras 3's update rules.
/// Errors: ConfigError for an unknown name (listing the known ones), a learning rate that is 0, nan
/// or infinite, or an update-rule setting out of its range (check_optimizer_options, naming it).
std::unique_ptr<torch::optim::Optimizer> make_optimizer(const OptimizerOptions& options,
                                                        std::vector<at::Tensor> params);

/// The optimizer's settings (options.resolved()) with Keras's names, every argument
/// OptimizerOptions::args() lists for that optimizer (name, learning_rate, its update-rule settings, e.g.
/// Adam's beta_1, beta_2, epsilon, amsgrad; clipnorm, clipvalue, global_clipnorm, weight_decay, use_ema,
/// ema_momentum, gradient_accumulation_steps; options that are off null, as Keras's get_config) and "learning_rate" as
/// Keras's schedule config when there is a schedule; what run.json and checkpoints record, and what
/// OptimizerOptions::from_config reads back (the same options, `fused` apart). `learning_rate`: the resolved rate (a
/// schedule's initial one when it sets none).
nlohmann::json optimizer_config(const OptimizerOptions& options, double learning_rate);

/// What differs between two optimizer_config()s, setting by setting, nested keys joined by '.':
/// "clipnorm 1.0 → 2.0, learning_rate.config.warmup_target 0.01 → 0.5"; "" when they agree. A rate that
/// is a number on both sides is left out (a resumed optimizer takes the saved rate unless
/// FitOptions::resume_learning_rate replaces it, which says so itself); a side that is null reads
/// "(none saved)".
std::string optimizer_config_changes(const nlohmann::json& saved, const nlohmann::json& now);

/// The Keras default learning rate of an optimizer name when `options.learning_rate()` < 0 (sgd 1e-2,
/// every other 1e-3), else options.learning_rate(). Errors: ConfigError for an unknown name.
double resolved_learning_rate(const OptimizerOptions& options);

}  // namespace torchfit
