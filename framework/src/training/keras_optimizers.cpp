// Keras 3's optimizers (keras_optimizers.h): one base for the per-parameter update pattern and the state
// serialization, and each optimizer's update_step as Keras writes it.
#include <torchfit/training/keras_optimizers.h>

#include <algorithm>
#include <cmath>
#include <utility>

#include <ATen/ATen.h>
#include <torch/optim/serialize.h>

#include <torchfit/error.h>

#include "compat/libtorch_version.h"

namespace torchfit {

void KerasGroupOptions::serialize(torch::serialize::InputArchive& archive) {
  c10::IValue v;
  archive.read("lr", v);
  lr(v.toDouble());
}

void KerasGroupOptions::serialize(torch::serialize::OutputArchive& archive) const {
  archive.write("lr", c10::IValue(lr()));
}

void KerasSlotState::serialize(torch::serialize::InputArchive& archive) {
  for (const std::string& key : archive.keys()) {
    c10::IValue v;
    archive.read(key, v);
    if (key == "step") {
      step(v.toInt());
    } else if (v.isTensor()) {
      slots[key] = v.toTensor();
    }
  }
}

void KerasSlotState::serialize(torch::serialize::OutputArchive& archive) const {
  archive.write("step", c10::IValue(step()));
  for (const auto& [name, t] : slots) archive.write(name, c10::IValue(t));
}

at::Tensor& KerasSlotState::slot(const std::string& name) {
  auto it = slots.find(name);
  if (it == slots.end()) throw ConfigError("optimizer state: no slot '" + name + "' (a state of another optimizer?)");
  return it->second;
}

KerasOptimizer::KerasOptimizer(std::vector<at::Tensor> params, OptimizerOptions options)
    : torch::optim::Optimizer(std::move(params), std::make_unique<KerasGroupOptions>(options.learning_rate())),
      options_(std::move(options)) {
  check_optimizer_options(options_);
}

torch::Tensor KerasOptimizer::step(LossClosure closure) {
  torch::NoGradGuard no_grad;
  torch::Tensor loss = {};
  if (closure != nullptr) {
    at::AutoGradMode enable_grad(true);
    loss = closure();
  }
  for (auto& group : param_groups_) {
    const double lr = group.options().get_lr();
    for (auto& p : group.params()) {
      if (!p.grad().defined()) continue;
      const auto key = compat::optimizer_state_key(p);
      auto it = state_.find(key);
      if (it == state_.end()) {
        auto s = std::make_unique<KerasSlotState>();
        for (const auto& slot : slots(p)) {
          at::Tensor t;
          if (slot.scalar) {
            t = at::full({}, slot.initial, at::TensorOptions().dtype(at::kDouble));
          } else if (slot.sizes) {
            t = at::full(*slot.sizes, slot.initial, p.options());
          } else {
            t = at::full_like(p, slot.initial, at::MemoryFormat::Preserve);
          }
          s->slots[slot.name] = t;
        }
        it = state_.emplace(key, std::move(s)).first;
      }
      auto& state = static_cast<KerasSlotState&>(*it->second);
      for (auto& [name, t] : state.slots)  // a state loaded on the CPU for a parameter elsewhere
        if (t.dim() > 0 && t.device() != p.device()) t = t.to(p.device());
      state.step(state.step() + 1);
      update(p, p.grad(), state, lr);
    }
  }
  return loss;
}

void KerasOptimizer::save(torch::serialize::OutputArchive& archive) const {
  torch::optim::serialize<KerasSlotState, KerasGroupOptions>(archive, *this);
}

void KerasOptimizer::load(torch::serialize::InputArchive& archive) {
  torch::optim::serialize<KerasSlotState, KerasGroupOptions>(archive, *this);
}

// ---- the update rules (keras/src/optimizers/<name>.py update_step) ----

std::vector<KerasSlot> KerasAdam::slots(const at::Tensor&) const {
  std::vector<KerasSlot> s = {{"momentum"}, {"velocity"}};
  if (options_.amsgrad()) s.push_back({"velocity_hat"});
  return s;
}

void KerasAdam::update(at::Tensor& p, const at::Tensor& g, KerasSlotState& s, double lr) {
  const double b1 = options_.beta_1(), b2 = options_.beta_2();
  const auto t = static_cast<double>(s.step());
  const double alpha = lr * std::sqrt(1 - std::pow(b2, t)) / (1 - std::pow(b1, t));
  at::Tensor& m = s.slot("momentum");
  at::Tensor& v = s.slot("velocity");
  m.add_((g - m) * (1 - b1));
  v.add_((g * g - v) * (1 - b2));
  at::Tensor denom_of = v;
  if (options_.amsgrad()) {
    at::Tensor& v_hat = s.slot("velocity_hat");
    v_hat.copy_(at::maximum(v_hat, v));
    denom_of = v_hat;
  }
  p.sub_((m * alpha) / (denom_of.sqrt() + options_.epsilon()));
}

std::vector<KerasSlot> KerasSGD::slots(const at::Tensor&) const {
  if (options_.momentum() > 0) return {{"momentum"}};
  return {};
}

void KerasSGD::update(at::Tensor& p, const at::Tensor& g, KerasSlotState& s, double lr) {
  if (options_.momentum() <= 0) {
    p.sub_(g * lr);
    return;
  }
  const auto torch_buffer = s.slots.find("momentum_buffer");  // a torch::optim::SGD checkpoint's b
  if (!s.slots.count("momentum") && torch_buffer != s.slots.end()) {
    s.slots["momentum"] = torch_buffer->second * (-lr);
    s.slots.erase(torch_buffer);
  }
  at::Tensor& m = s.slot("momentum");
  const double momentum = options_.momentum();
  m.copy_(m * momentum - g * lr);
  if (options_.nesterov()) {
    p.add_(m * momentum - g * lr);
  } else {
    p.add_(m);
  }
}

std::vector<KerasSlot> KerasRMSprop::slots(const at::Tensor&) const {
  std::vector<KerasSlot> s = {{"square_avg"}};
  if (options_.momentum() > 0) s.push_back({"momentum_buffer"});
  if (options_.centered()) s.push_back({"grad_avg"});
  return s;
}

void KerasRMSprop::update(at::Tensor& p, const at::Tensor& g, KerasSlotState& s, double lr) {
  const double rho = options_.rho();
  at::Tensor& velocity = s.slot("square_avg");
  velocity.copy_(velocity * rho + (g * g) * (1 - rho));
  at::Tensor denominator;
  if (options_.centered()) {
    at::Tensor& average_grad = s.slot("grad_avg");
    average_grad.copy_(average_grad * rho + g * (1 - rho));
    denominator = velocity - average_grad * average_grad + options_.epsilon();
  } else {
    denominator = velocity + options_.epsilon();
  }
  const at::Tensor increment = (g * lr) / denominator.sqrt();
  if (options_.momentum() > 0) {
    at::Tensor& momentum = s.slot("momentum_buffer");
    momentum.copy_(momentum * options_.momentum() + increment);
    p.sub_(momentum);
  } else {
    p.sub_(increment);
  }
}

std::vector<KerasSlot> Adagrad::slots(const at::Tensor&) const {
  return {{"accumulator", options_.initial_accumulator_value()}};
}

void Adagrad::update(at::Tensor& p, const at::Tensor& g, KerasSlotState& s, double lr) {
  at::Tensor& accumulator = s.slot("accumulator");
  accumulator.add_(g * g);
  p.sub_((g * lr) / (accumulator + options_.epsilon()).sqrt());
}

std::vector<KerasSlot> Adadelta::slots(const at::Tensor&) const {
  return {{"accumulated_grad"}, {"accumulated_delta_var"}};
}

void Adadelta::update(at::Tensor& p, const at::Tensor& g, KerasSlotState& s, double lr) {
  const double rho = options_.rho(), eps = options_.epsilon();
  at::Tensor& grad_acc = s.slot("accumulated_grad");
  at::Tensor& delta_acc = s.slot("accumulated_delta_var");
  grad_acc.copy_(grad_acc * rho + (g * g) * (1 - rho));
  const at::Tensor delta = -(((delta_acc + eps).sqrt() * g) / (grad_acc + eps).sqrt());
  delta_acc.copy_(delta_acc * rho + (delta * delta) * (1 - rho));
  p.add_(delta * lr);
}

std::vector<KerasSlot> Adamax::slots(const at::Tensor&) const { return {{"momentum"}, {"norm"}}; }

void Adamax::update(at::Tensor& p, const at::Tensor& g, KerasSlotState& s, double lr) {
  const double b1 = options_.beta_1();
  const double beta_1_power = std::pow(b1, static_cast<double>(s.step()));
  at::Tensor& m = s.slot("momentum");
  at::Tensor& u = s.slot("norm");
  m.add_((g - m) * (1 - b1));
  u.copy_(at::maximum(u * options_.beta_2(), g.abs()));
  p.sub_((m * lr) / ((u + options_.epsilon()) * (1 - beta_1_power)));
}

std::vector<KerasSlot> Nadam::slots(const at::Tensor&) const {
  return {{"momentum"}, {"velocity"}, {"u_product", 1.0, true}};
}

void Nadam::update(at::Tensor& p, const at::Tensor& g, KerasSlotState& s, double lr) {
  const double b1 = options_.beta_1(), b2 = options_.beta_2();
  const auto t = static_cast<double>(s.step());
  const double u_t = b1 * (1.0 - 0.5 * std::pow(0.96, t));
  const double u_t_1 = b1 * (1.0 - 0.5 * std::pow(0.96, t + 1));
  at::Tensor& u_product = s.slot("u_product");
  const double u_product_t = u_product.item<double>() * u_t;  // Keras updates it before update_step
  u_product.fill_(u_product_t);
  const double u_product_t_1 = u_product_t * u_t_1;
  const double beta_2_power = std::pow(b2, t);
  at::Tensor& m = s.slot("momentum");
  at::Tensor& v = s.slot("velocity");
  m.add_((g - m) * (1 - b1));
  v.add_((g * g - v) * (1 - b2));
  const at::Tensor m_hat = (m * u_t_1) / (1 - u_product_t_1) + (g * (1 - u_t)) / (1 - u_product_t);
  const at::Tensor v_hat = v / (1 - beta_2_power);
  p.sub_((m_hat * lr) / (v_hat.sqrt() + options_.epsilon()));
}

std::vector<KerasSlot> Lion::slots(const at::Tensor&) const { return {{"momentum"}}; }

void Lion::update(at::Tensor& p, const at::Tensor& g, KerasSlotState& s, double lr) {
  const double b1 = options_.beta_1(), b2 = options_.beta_2();
  at::Tensor& m = s.slot("momentum");
  p.sub_(at::sign(m * b1 + g * (1.0 - b1)) * lr);
  m.copy_(m * b2 + g * (1.0 - b2));
}

std::vector<KerasSlot> Ftrl::slots(const at::Tensor&) const {
  return {{"accumulator", options_.initial_accumulator_value()}, {"linear"}};
}

void Ftrl::update(at::Tensor& p, const at::Tensor& g, KerasSlotState& s, double lr) {
  const OptimizerOptions& o = options_;
  const double lr_power = o.learning_rate_power();
  const double l2_reg = o.l2_regularization_strength() + o.beta() / (2.0 * lr);
  at::Tensor& accum = s.slot("accumulator");
  at::Tensor& linear = s.slot("linear");
  const at::Tensor grad_to_use = g + p * (2 * o.l2_shrinkage_regularization_strength());
  const at::Tensor new_accum = accum + g * g;
  const at::Tensor new_accum_power = new_accum.pow(-lr_power);
  linear.add_(grad_to_use - ((new_accum_power - accum.pow(-lr_power)) / lr) * p);
  const at::Tensor quadratic = new_accum_power / lr + 2 * l2_reg;
  const double l1 = o.l1_regularization_strength();
  const at::Tensor linear_clipped = linear.clamp(-l1, l1);
  p.copy_((linear_clipped - linear) / quadratic);
  accum.copy_(new_accum);
}

std::vector<KerasSlot> Adafactor::slots(const at::Tensor& p) const {
  if (p.dim() < 2) return {{"velocity"}};
  std::vector<int64_t> r(p.sizes().begin(), p.sizes().end() - 1);
  std::vector<int64_t> c(p.sizes().begin(), p.sizes().end() - 2);
  c.push_back(p.size(-1));
  return {{"r", 0.0, false, r}, {"c", 0.0, false, c}, {"velocity"}};
}

void Adafactor::update(at::Tensor& p, const at::Tensor& g, KerasSlotState& s, double lr) {
  const OptimizerOptions& o = options_;
  const auto t = static_cast<double>(s.step());
  const auto rms = [](const at::Tensor& x) { return x.square().mean().sqrt(); };
  const double rho_t = std::min(lr, 1.0 / std::sqrt(t));  // relative_step's min(lr, 1/√t) is the same
  const at::Tensor alpha_t = at::clamp_min(rms(p), o.epsilon_2()) * rho_t;
  const at::Tensor regulated = g.square() + o.epsilon_1();
  const double beta_2_t = 1.0 - std::pow(t, o.beta_2_decay());
  at::Tensor& v = s.slot("velocity");
  if (p.dim() >= 2) {
    at::Tensor& r = s.slot("r");
    at::Tensor& c = s.slot("c");
    r.copy_(r * beta_2_t + regulated.mean(-1) * (1 - beta_2_t));
    c.copy_(c * beta_2_t + regulated.mean(-2) * (1 - beta_2_t));
    v.copy_((r / r.mean(-1, true)).unsqueeze(-1) * c.unsqueeze(-2));
  } else {
    v.copy_(v * beta_2_t + regulated * (1 - beta_2_t));
  }
  const at::Tensor u_t = g / v.sqrt();
  const at::Tensor u_t_hat = u_t / at::clamp_min(rms(u_t) / o.clip_threshold(), 1.0);
  p.sub_(alpha_t * u_t_hat);
}

// ---- checks and construction ----

namespace {

void check_range(const OptimizerOptions& o, const char* key, double v, double lo, double hi, bool lo_open,
                 bool hi_open) {
  const bool ok = std::isfinite(v) && (lo_open ? v > lo : v >= lo) && (hi_open ? v < hi : v <= hi);
  if (ok) return;
  const std::string range = std::string(lo_open ? "(" : "[") + std::to_string(lo) + ", " +
                            (std::isinf(hi) ? std::string("inf") : std::to_string(hi)) + (hi_open ? ")" : "]");
  throw ConfigError("optimizer " + o.name() + ": " + key + " must be in " + range + ", got " + std::to_string(v));
}

}  // namespace

void check_optimizer_options(const OptimizerOptions& o) {
  constexpr double inf = INFINITY;
  const std::string& n = o.name();
  check_range(o, "learning_rate", o.learning_rate(), 0, inf, true, true);
  if (n == "lion") {
    check_range(o, "beta_1", o.beta_1(), 0, 1, true, false);  // Keras: else it degenerates to SignSGD
    check_range(o, "beta_2", o.beta_2(), 0, 1, false, false);
  } else if (n == "adam" || n == "adamw" || n == "adamax" || n == "nadam") {
    check_range(o, "beta_1", o.beta_1(), 0, 1, false, true);
    check_range(o, "beta_2", o.beta_2(), 0, 1, false, true);
  }
  if (n == "rmsprop" || n == "adadelta") check_range(o, "rho", o.rho(), 0, 1, false, n == "rmsprop");
  if (n == "sgd" || n == "rmsprop") check_range(o, "momentum", o.momentum(), 0, 1, false, false);
  check_range(o, "epsilon", o.epsilon(), 0, inf, false, true);
  if (n == "adagrad" || n == "ftrl") {
    check_range(o, "initial_accumulator_value", o.initial_accumulator_value(), 0, inf, false, true);
  }
  if (n == "ftrl") {
    check_range(o, "learning_rate_power", o.learning_rate_power(), -inf, 0, false, false);
    check_range(o, "l1_regularization_strength", o.l1_regularization_strength(), 0, inf, false, true);
    check_range(o, "l2_regularization_strength", o.l2_regularization_strength(), 0, inf, false, true);
    check_range(o, "l2_shrinkage_regularization_strength", o.l2_shrinkage_regularization_strength(), 0, inf, false,
                true);
    check_range(o, "beta", o.beta(), 0, inf, false, true);
  }
  if (n == "adafactor") {
    check_range(o, "beta_2_decay", o.beta_2_decay(), -inf, 0, false, false);
    check_range(o, "epsilon_1", o.epsilon_1(), 0, inf, false, true);
    check_range(o, "epsilon_2", o.epsilon_2(), 0, inf, false, true);
    check_range(o, "clip_threshold", o.clip_threshold(), 0, inf, true, true);
  }
}

std::unique_ptr<torch::optim::Optimizer> make_keras_optimizer(const OptimizerOptions& o,
                                                              std::vector<at::Tensor> params) {
  const std::string& n = o.name();
  if (n == "adamw" || (n == "adam" && o.amsgrad())) return std::make_unique<KerasAdam>(std::move(params), o);
  if (n == "sgd") return std::make_unique<KerasSGD>(std::move(params), o);
  if (n == "rmsprop") return std::make_unique<KerasRMSprop>(std::move(params), o);
  if (n == "adagrad") return std::make_unique<Adagrad>(std::move(params), o);
  if (n == "adadelta") return std::make_unique<Adadelta>(std::move(params), o);
  if (n == "adamax") return std::make_unique<Adamax>(std::move(params), o);
  if (n == "nadam") return std::make_unique<Nadam>(std::move(params), o);
  if (n == "lion") return std::make_unique<Lion>(std::move(params), o);
  if (n == "ftrl") return std::make_unique<Ftrl>(std::move(params), o);
  if (n == "adafactor") return std::make_unique<Adafactor>(std::move(params), o);
  return nullptr;
}

}  // namespace torchfit
