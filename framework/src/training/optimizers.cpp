#include <torchfit/training/optimizers.h>

#include <cmath>
#include <string>

#include <torch/optim/adam.h>
#include <torch/optim/rmsprop.h>
#include <torch/optim/sgd.h>

#include <torchfit/error.h>
#include <torchfit/training/fused_adam.h>
#include <torchfit/training/lr_schedules.h>

namespace torchfit {

double resolved_learning_rate(const OptimizerOptions& o) {
  if (o.name() != "adam" && o.name() != "sgd" && o.name() != "rmsprop") {
    throw ConfigError("unknown optimizer '" + o.name() + "' (known: adam, sgd, rmsprop)");
  }
  if (o.learning_rate() >= 0) return o.learning_rate();
  return o.name() == "sgd" ? 1e-2 : 1e-3;
}

nlohmann::json optimizer_config(const OptimizerOptions& o, double lr) {
  auto off_if_zero = [](double v) { return v > 0 ? nlohmann::json(v) : nlohmann::json(); };
  nlohmann::json c = optimizer_hyperparameters(o, lr);
  c.update(
      {{"clipnorm", off_if_zero(o.clipnorm())},
       {"clipvalue", off_if_zero(o.clipvalue())},
       {"global_clipnorm", off_if_zero(o.global_clipnorm())},
       {"weight_decay", off_if_zero(o.weight_decay())},
       {"use_ema", o.use_ema()},
       {"ema_momentum", o.ema_momentum()},
       {"gradient_accumulation_steps",
        o.gradient_accumulation_steps() > 0 ? nlohmann::json(o.gradient_accumulation_steps()) : nlohmann::json()}});
  if (o.learning_rate_schedule()) c["learning_rate"] = schedule_config(*o.learning_rate_schedule(), lr);
  return c;
}

std::unique_ptr<torch::optim::Optimizer> make_optimizer(const OptimizerOptions& o, std::vector<at::Tensor> params) {
  const double lr = resolved_learning_rate(o);
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
