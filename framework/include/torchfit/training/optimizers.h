#pragma once
/// @file optimizers.h
/// make_optimizer — the LibTorch optimizer for compile()'s optimizer settings.
#include <memory>
#include <vector>

#include <ATen/core/Tensor.h>
#include <torch/optim/optimizer.h>

#include <torchfit/model/compile.h>

namespace torchfit {

/// Builds "adam" (torchfit's FusedAdam unless fused(false), then torch::optim::Adam), "sgd" or "rmsprop"
/// over `params`; a learning rate < 0 means the Keras default (adam 1e-3, sgd 1e-2, rmsprop 1e-3).
/// Errors: ConfigError for an unknown name (listing the known ones) or a learning rate that is 0, nan
/// or infinite.
std::unique_ptr<torch::optim::Optimizer> make_optimizer(const OptimizerOptions& options,
                                                        std::vector<at::Tensor> params);

}  // namespace torchfit
