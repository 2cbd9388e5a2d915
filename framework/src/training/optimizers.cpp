#include <torchfit/training/optimizers.h>

#include <cmath>
#include <string>

#include <torch/optim/adam.h>
#include <torch/optim/rmsprop.h>
#include <torch/optim/sgd.h>

#include <torchfit/error.h>
#include <torchfit/training/fused_adam.h>

namespace torchfit {

std::unique_ptr<torch::optim::Optimizer> make_optimizer(const OptimizerOptions& o, std::vector<at::Tensor> params) {
  double lr = o.learning_rate();
  if (o.name() == "adam") {
    if (lr < 0) lr = 1e-3;
  } else if (o.name() == "sgd") {
    if (lr < 0) lr = 1e-2;
  } else if (o.name() == "rmsprop") {
    if (lr < 0) lr = 1e-3;
  } else {
    throw ConfigError("unknown optimizer '" + o.name() + "' (known: adam, sgd, rmsprop)");
  }
  if (!(lr > 0) || !std::isfinite(lr)) {
    throw ConfigError("learning rate must be > 0, got " + std::to_string(o.learning_rate()));
  }
  if (o.name() == "adam") {
    auto adam = torch::optim::AdamOptions(lr).betas({o.beta_1(), o.beta_2()}).eps(o.epsilon());
    if (!o.fused()) return std::make_unique<torch::optim::Adam>(params, adam);
    return std::make_unique<FusedAdam>(params, adam);
  }
  if (o.name() == "sgd") {
    return std::make_unique<torch::optim::SGD>(
        params, torch::optim::SGDOptions(lr).momentum(o.momentum()).nesterov(o.nesterov()));
  }
  return std::make_unique<torch::optim::RMSprop>(
      params, torch::optim::RMSpropOptions(lr).alpha(o.rho()).eps(o.epsilon()).momentum(o.momentum()));
}

}  // namespace torchfit
