#include <torchfit/training/optimizers.h>

#include <cmath>
#include <string>

#include <torch/optim/adam.h>

#include <torchfit/error.h>
#include <torchfit/training/fused_adam.h>
#include <torchfit/training/keras_optimizers.h>
#include <torchfit/training/lr_schedules.h>

namespace torchfit {

double resolved_learning_rate(const OptimizerOptions& o) { return o.resolved().learning_rate(); }

nlohmann::json optimizer_config(const OptimizerOptions& o, double lr) {
  OptimizerOptions resolved = o.resolved();  // args() visits the fields non-const
  resolved.learning_rate(lr);
  if (auto& s = resolved.learning_rate_schedule()) s->initial_learning_rate(s->initial_learning_rate().value_or(lr));
  nlohmann::json c = nlohmann::json::object();
  OptimizerArgWriter writer(c);
  resolved.args(writer);
  return c;
}

namespace {

void add_changes(const std::string& prefix, const nlohmann::json& saved, const nlohmann::json& now, std::string& out) {
  if (saved == now) return;
  if (saved.is_object() && now.is_object()) {
    nlohmann::json keys = saved;
    keys.update(now);  // every key of either side, in order
    for (const auto& [key, unused] : keys.items()) {
      const auto at = [&](const nlohmann::json& j) { return j.contains(key) ? j[key] : nlohmann::json(); };
      add_changes(prefix.empty() ? key : prefix + "." + key, at(saved), at(now), out);
    }
    return;
  }
  out += (out.empty() ? "" : ", ") + prefix + " " + saved.dump() + " → " + now.dump();
}

// A saved config as this version writes it (an older one listed beta_1 … rho for every optimizer), so
// that only real differences are named; as it is when it cannot be read.
nlohmann::json rewritten(const nlohmann::json& saved) {
  if (!saved.is_object() || !saved.contains("name")) return saved;
  try {
    const OptimizerOptions o = OptimizerOptions::from_config(saved);
    const nlohmann::json lr = saved.value("learning_rate", nlohmann::json());
    return optimizer_config(o, lr.is_number() ? lr.get<double>() : resolved_learning_rate(o));
  } catch (const ConfigError&) {
    return saved;
  }
}

}  // namespace

std::string optimizer_config_changes(const nlohmann::json& saved, const nlohmann::json& now) {
  if (saved.is_null()) return "(none saved) → " + now.dump();
  nlohmann::json a = rewritten(saved), b = now;
  if (a.is_object() && b.is_object() && a.value("learning_rate", nlohmann::json()).is_number() &&
      b.value("learning_rate", nlohmann::json()).is_number()) {
    a.erase("learning_rate");
    b.erase("learning_rate");
  }
  std::string out;
  add_changes("", a, b, out);
  return out;
}

std::unique_ptr<torch::optim::Optimizer> make_optimizer(const OptimizerOptions& options,
                                                        std::vector<at::Tensor> params) {
  const OptimizerOptions o = options.resolved();
  const double lr = o.learning_rate();
  if (!(lr > 0) || !std::isfinite(lr)) {
    throw ConfigError("learning rate must be > 0, got " + std::to_string(options.learning_rate()));
  }
  check_optimizer_options(o);
  if (auto keras = make_keras_optimizer(o, params)) return keras;
  if (o.name() == "adam") {
    auto adam = torch::optim::AdamOptions(lr).betas({o.beta_1(), o.beta_2()}).eps(o.epsilon());
    return std::make_unique<FusedAdam>(params, adam, AdamEpsilon::keras, o.fused());
  }
  throw ConfigError("optimizer '" + o.name() + "' has no implementation");  // check_optimizer_options lists them
}

}  // namespace torchfit
