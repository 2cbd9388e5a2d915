#include <torchfit/training/optimizer_features.h>

#include <cmath>

#include <torchfit/error.h>
#include <torchfit/training/lr_schedules.h>
#include <torchfit/training/optimizers.h>

namespace torchfit {
namespace {

void check_non_negative(const std::string& name, double v) {
  if (!(v >= 0) || !std::isfinite(v)) throw ConfigError("optimizer: " + name + " must be a finite number >= 0");
}

void check_options(const OptimizerOptions& o) {
  check_non_negative("clipnorm", o.clipnorm());
  check_non_negative("clipvalue", o.clipvalue());
  check_non_negative("global_clipnorm", o.global_clipnorm());
  check_non_negative("weight_decay", o.weight_decay());
  const int clips = (o.clipnorm() > 0) + (o.clipvalue() > 0) + (o.global_clipnorm() > 0);
  if (clips > 1) {
    throw ConfigError("optimizer: only one of clipnorm, clipvalue and global_clipnorm can be set (as Keras)");
  }
  if (o.use_ema() && !(o.ema_momentum() >= 0 && o.ema_momentum() <= 1)) {
    throw ConfigError("optimizer: ema_momentum must be in [0, 1], got " + std::to_string(o.ema_momentum()));
  }
  if (o.gradient_accumulation_steps() < 0 || o.gradient_accumulation_steps() == 1) {
    throw ConfigError("optimizer: gradient_accumulation_steps must be >= 2 (0 = off), got " +
                      std::to_string(o.gradient_accumulation_steps()));
  }
  if (o.learning_rate_schedule()) check_schedule(*o.learning_rate_schedule());
}

}  // namespace

OptimizerFeatures::OptimizerFeatures(const OptimizerOptions& options, torch::optim::Optimizer& optimizer,
                                     std::vector<at::Tensor> params, double initial_learning_rate)
    : options_(options.resolved()),
      optimizer_(optimizer),
      params_(std::move(params)),
      initial_lr_(initial_learning_rate) {
  check_options(options_);
  if (has_schedule()) initial_lr_ = options_.learning_rate_schedule()->initial_learning_rate().value_or(initial_lr_);
  at::NoGradGuard no_grad;
  if (options_.gradient_accumulation_steps() > 0)
    for (const auto& p : params_) accumulators_.push_back(at::zeros_like(p));
  if (options_.use_ema())
    for (const auto& p : params_) averages_.push_back(p.detach().clone());
  if (has_schedule()) set_learning_rate(current_learning_rate());
}

bool OptimizerFeatures::enabled() const { return changes_gradients() || options_.use_ema() || has_schedule(); }

bool OptimizerFeatures::changes_gradients() const {
  const auto& o = options_;
  return o.gradient_accumulation_steps() > 0 || o.clipnorm() > 0 || o.clipvalue() > 0 || o.global_clipnorm() > 0 ||
         o.weight_decay() > 0;
}

double OptimizerFeatures::current_learning_rate() const {
  if (!has_schedule()) return optimizer_.param_groups().at(0).options().get_lr();
  return schedule_learning_rate(*options_.learning_rate_schedule(), initial_lr_, iterations_);
}

void OptimizerFeatures::set_learning_rate(double lr) {
  for (auto& g : optimizer_.param_groups()) g.options().set_lr(lr);
}

void OptimizerFeatures::clip_gradients() {
  const auto& o = options_;
  if (o.clipnorm() > 0) {
    for (auto& p : params_) {
      at::Tensor g = p.mutable_grad();
      if (g.defined()) g.mul_(o.clipnorm() / std::max(g.norm().item<double>(), o.clipnorm()));
    }
  } else if (o.global_clipnorm() > 0) {
    double sq = 0;
    for (auto& p : params_)
      if (p.grad().defined()) sq += p.grad().to(at::kDouble).pow(2).sum().item<double>();
    const double scale = o.global_clipnorm() / std::max(std::sqrt(sq), o.global_clipnorm());
    for (auto& p : params_)
      if (p.grad().defined()) p.mutable_grad().mul_(scale);
  } else if (o.clipvalue() > 0) {
    for (auto& p : params_)
      if (p.grad().defined()) p.mutable_grad().clamp_(-o.clipvalue(), o.clipvalue());
  }
}

bool OptimizerFeatures::before_update() {
  at::NoGradGuard no_grad;
  raw_.clear();  // training goes on from the weights as they are now
  const int64_t n = options_.gradient_accumulation_steps();
  if (n > 0) {
    for (size_t i = 0; i < params_.size(); ++i)
      if (params_[i].grad().defined()) accumulators_[i].add_(params_[i].grad());
    if (++accumulated_ < n) return false;
    for (size_t i = 0; i < params_.size(); ++i) {
      at::Tensor& g = params_[i].mutable_grad();  // written in place: a data-parallel reducer's views stay
      if (g.defined()) {
        g.copy_(accumulators_[i]).div_(static_cast<double>(n));
      } else {
        g = accumulators_[i] / static_cast<double>(n);
      }
      accumulators_[i].zero_();
    }
    accumulated_ = 0;
  }
  clip_gradients();
  const double lr = current_learning_rate();
  if (has_schedule()) set_learning_rate(lr);
  if (options_.weight_decay() > 0)  // trainable weights only: frozen layers (Layer::set_trainable) keep theirs
    for (auto& p : params_)
      if (p.requires_grad()) p.mul_(1.0 - lr * options_.weight_decay());
  return true;
}

void OptimizerFeatures::after_update() {
  at::NoGradGuard no_grad;
  if (options_.use_ema()) {
    const double m = iterations_ == 0 ? 0.0 : options_.ema_momentum();
    for (size_t i = 0; i < params_.size(); ++i) averages_[i].mul_(m).add_(params_[i].detach(), 1.0 - m);
  }
  ++iterations_;
  if (has_schedule()) set_learning_rate(current_learning_rate());
}

void OptimizerFeatures::finalize() {
  if (!options_.use_ema() || iterations_ == 0) return;
  at::NoGradGuard no_grad;
  raw_.clear();
  for (size_t i = 0; i < params_.size(); ++i) {
    raw_.push_back(params_[i].detach().clone());
    params_[i].copy_(averages_[i]);
  }
}

nlohmann::json OptimizerFeatures::state() const {
  nlohmann::json s = {
      {"iterations", iterations_}, {"accumulated", accumulated_}, {"config", optimizer_config(options_, initial_lr_)}};
  if (!raw_.empty()) s["weights"] = "averages";  // the trained weights are the "raw_<i>" tensors
  return s;
}

std::map<std::string, at::Tensor> OptimizerFeatures::tensors() const {
  std::map<std::string, at::Tensor> t;
  for (size_t i = 0; i < averages_.size(); ++i) t["ema_" + std::to_string(i)] = averages_[i].detach().cpu();
  for (size_t i = 0; i < accumulators_.size(); ++i) t["accumulator_" + std::to_string(i)] = accumulators_[i].cpu();
  for (size_t i = 0; i < raw_.size(); ++i) t["raw_" + std::to_string(i)] = raw_[i].cpu();
  return t;
}

void OptimizerFeatures::load(const nlohmann::json& state, const std::map<std::string, at::Tensor>& tensors) {
  raw_.clear();
  // Saved after finalize(): the model's weights are the averages; training continues from the raw ones.
  if (state.value("weights", std::string()) == "averages") {
    at::NoGradGuard no_grad;
    for (size_t i = 0; i < params_.size(); ++i) {
      const auto it = tensors.find("raw_" + std::to_string(i));
      if (it == tensors.end() || it->second.sizes() != params_[i].sizes())
        throw ConfigError("optimizer state: the weights are the EMA averages, and the trained weight of parameter " +
                          std::to_string(i) + (it == tensors.end() ? " is missing" : " has another shape"));
      params_[i].copy_(it->second);
    }
  }
  auto restore = [&](const std::string& kind, std::vector<at::Tensor>& into) {
    at::NoGradGuard no_grad;
    if (!into.empty() && !tensors.count(kind + "_0")) {  // the saved run had no such state: it starts here
      for (size_t i = 0; i < into.size(); ++i) {
        if (kind == "ema")
          into[i].copy_(params_[i]);
        else
          into[i].zero_();
      }
      return;
    }
    for (size_t i = 0; i < into.size(); ++i) {
      const auto it = tensors.find(kind + "_" + std::to_string(i));
      if (it == tensors.end())
        throw ConfigError("optimizer state: no saved " + kind + " for parameter " + std::to_string(i));
      if (it->second.sizes() != into[i].sizes())
        throw ConfigError("optimizer state: the saved " + kind + " of parameter " + std::to_string(i) +
                          " has another shape");
      into[i].copy_(it->second);
    }
  };
  restore("ema", averages_);
  restore("accumulator", accumulators_);
  iterations_ = state.value("iterations", int64_t{0});
  accumulated_ = tensors.count("accumulator_0") ? state.value("accumulated", int64_t{0}) : 0;
  if (has_schedule()) set_learning_rate(current_learning_rate());
}

}  // namespace torchfit
