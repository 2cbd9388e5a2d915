#pragma once
/// @file compile.h
/// Compile settings (keras Model.compile): loss, optimizer with Keras defaults, metrics.
#include <torch/arg.h>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace torchfit {

/// A learning-rate schedule of keras.optimizers.schedules, evaluated at `step` = the optimizer updates
/// applied so far (training/lr_schedules.h has the formulas).
struct LearningRateScheduleOptions {
  /// "cosine" (CosineDecay), "exponential" (ExponentialDecay) or "piecewise" (PiecewiseConstantDecay).
  TORCH_ARG(std::string, name) = "cosine";
  /// cosine, exponential: Keras `initial_learning_rate` (≥ 0; a warm-up often starts at 0); unset ⇒ the
  /// optimizer's learning_rate.
  TORCH_ARG(std::optional<double>, initial_learning_rate) = std::nullopt;
  /// cosine, exponential: steps over which the rate decays (Keras `decay_steps`, required, ≥ 1).
  TORCH_ARG(int64_t, decay_steps) = 0;
  /// cosine: the fraction of the (warm-up target) rate left at the end (Keras `alpha`, default 0).
  TORCH_ARG(double, alpha) = 0.0;
  /// cosine: linear warm-up steps before the decay (Keras `warmup_steps`, default 0).
  TORCH_ARG(int64_t, warmup_steps) = 0;
  /// cosine: the rate reached at the end of the warm-up (Keras `warmup_target`); unset ⇒ no warm-up.
  TORCH_ARG(std::optional<double>, warmup_target) = std::nullopt;
  /// exponential: the factor per `decay_steps` (Keras `decay_rate`, required, > 0).
  TORCH_ARG(double, decay_rate) = 0.0;
  /// exponential: decay in whole periods (Keras `staircase`, default false).
  TORCH_ARG(bool, staircase) = false;
  /// piecewise: increasing step boundaries and the len(boundaries) + 1 rates (Keras `boundaries`, `values`).
  TORCH_ARG(std::vector<int64_t>, boundaries) = {};
  TORCH_ARG(std::vector<double>, values) = {};

 public:
  /// The Keras config arguments of the schedule named by name(), listed once (layer_args.h's pattern):
  /// what OptimizerArgWriter writes into {"class_name": …, "config": …} and from_config reads back.
  template <typename Args>
  void args(Args& a) {
    if (name() == "piecewise") {
      a.required("boundaries", boundaries());
      a.required("values", values());
      return;
    }
    a("initial_learning_rate", initial_learning_rate());
    a.required("decay_steps", decay_steps());
    if (name() == "cosine") {
      a("alpha", alpha());
      a("warmup_target", warmup_target());
      a("warmup_steps", warmup_steps());
    } else {
      a.required("decay_rate", decay_rate());
      a("staircase", staircase());
    }
  }
  /// Keras's serialised schedule {"class_name": "CosineDecay" | "ExponentialDecay" |
  /// "PiecewiseConstantDecay", "config": {…}} (as training/lr_schedules.h schedule_config writes it).
  /// Values are checked where the schedule is used (check_schedule). Errors: ConfigError naming the
  /// class or the field (unknown, missing, wrong type).
  static LearningRateScheduleOptions from_config(const nlohmann::json& spec);
};

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
  /// Each gradient rescaled to norm ≤ clipnorm, per variable (Keras `clipnorm`; 0 = off).
  TORCH_ARG(double, clipnorm) = 0.0;
  /// Each gradient element clipped to [−clipvalue, clipvalue] (Keras `clipvalue`; 0 = off).
  TORCH_ARG(double, clipvalue) = 0.0;
  /// All gradients rescaled together to a global norm ≤ global_clipnorm (Keras `global_clipnorm`; 0 =
  /// off). At most one of the three clipping options may be set (as Keras).
  TORCH_ARG(double, global_clipnorm) = 0.0;
  /// Decoupled weight decay (Keras ≥ 2.11 `weight_decay`, AdamW's): before each update every weight
  /// w ← w − learning_rate · weight_decay · w (0 = off).
  TORCH_ARG(double, weight_decay) = 0.0;
  /// Exponential moving average of the weights (Keras `use_ema`), updated after each weight update:
  /// average ← m · average + (1 − m) · w, m = ema_momentum (0 for the first update, so it starts at w);
  /// the model takes the averages at the end of fit (Keras's finalize_variable_values).
  TORCH_ARG(bool, use_ema) = false;
  TORCH_ARG(double, ema_momentum) = 0.99;
  /// Keras 3 `gradient_accumulation_steps`: the weights are updated every N batches with the mean of the
  /// N batches' gradients (0 = off; otherwise ≥ 2).
  TORCH_ARG(int64_t, gradient_accumulation_steps) = 0;
  /// A learning-rate schedule (Keras: a LearningRateSchedule as `learning_rate`); unset ⇒ constant.
  TORCH_ARG(std::optional<LearningRateScheduleOptions>, learning_rate_schedule) = std::nullopt;

 public:
  /// The Keras arguments (Keras get_config names), listed once (layer_args.h's pattern): optimizer_config
  /// (training/optimizers.h) writes them and from_config reads them back. `a(key, field)`: an argument;
  /// `a.off_when_zero(key, field)`: one Keras writes as null when off (0 here); the schedule is visited
  /// under "learning_rate" too, as Keras serialises a schedule in place of the rate. `fused` is an
  /// implementation choice, not a Keras argument, and is not listed.
  template <typename Args>
  void args(Args& a) {
    a("name", name());
    a("learning_rate", learning_rate());
    a("beta_1", beta_1());
    a("beta_2", beta_2());
    a("epsilon", epsilon());
    a("momentum", momentum());
    a("nesterov", nesterov());
    a("rho", rho());
    a.off_when_zero("clipnorm", clipnorm());
    a.off_when_zero("clipvalue", clipvalue());
    a.off_when_zero("global_clipnorm", global_clipnorm());
    a.off_when_zero("weight_decay", weight_decay());
    a("use_ema", use_ema());
    a("ema_momentum", ema_momentum());
    a.off_when_zero("gradient_accumulation_steps", gradient_accumulation_steps());
    a("learning_rate", learning_rate_schedule());
  }
  /// The options of an optimizer config as optimizer_config wrote it (a checkpoint's
  /// `optimizer_features.config`, or its `compile.optimizer`, which has only the update-rule settings):
  /// an argument absent or null keeps its default; "learning_rate" is the rate or a Keras schedule
  /// (LearningRateScheduleOptions::from_config; the rate then stays unset). Values are checked where the
  /// options are used (make_optimizer, OptimizerFeatures). Errors: ConfigError naming the field (unknown,
  /// wrong type) or the schedule's.
  static OptimizerOptions from_config(const nlohmann::json& config);
};

/// The visitor that writes OptimizerOptions::args() and LearningRateScheduleOptions::args() as Keras JSON:
/// each field as itself, std::optional as its value or null, off_when_zero fields as null at 0, a schedule
/// as {"class_name": "CosineDecay", "config": {…}} (its unset initial_learning_rate null). A null schedule
/// leaves the key as the rate wrote it. (optimizer_config and schedule_config fill in the resolved rates.)
class OptimizerArgWriter {
 public:
  explicit OptimizerArgWriter(nlohmann::json& config) : config_(config) {}
  template <typename T>
  void operator()(const char* key, const T& value) {
    config_[key] = value;
  }
  template <typename T>
  void operator()(const char* key, const std::optional<T>& value) {
    config_[key] = value ? nlohmann::json(*value) : nlohmann::json();
  }
  void operator()(const char* key, const std::optional<LearningRateScheduleOptions>& schedule);
  template <typename T>
  void required(const char* key, const T& value) {
    (*this)(key, value);
  }
  template <typename T>
  void off_when_zero(const char* key, const T& value) {
    config_[key] = value > 0 ? nlohmann::json(value) : nlohmann::json();
  }

 private:
  nlohmann::json& config_;
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

/// The optimizer's name, `learning_rate` and update-rule settings as JSON with Keras's names ("name",
/// "learning_rate", "beta_1", "beta_2", "epsilon", "momentum", "nesterov", "rho"); checkpoints record it
/// (training/optimizers.h optimizer_config adds the options of optimizer_features.h).
nlohmann::json optimizer_hyperparameters(const OptimizerOptions& options, double learning_rate);

/// Everything model.compile() takes.
struct CompileOptions {
  /// A Keras loss (training/losses.h Loss): a name — categorical_crossentropy, sparse_categorical_crossentropy,
  /// binary_crossentropy, mean_squared_error (mse), mae, mape, msle, huber, log_cosh, hinge, squared_hinge,
  /// categorical_hinge, kl_divergence, poisson, cosine_similarity, binary_focal_crossentropy,
  /// categorical_focal_crossentropy, dice, tversky, or a Keras class name — or a Keras loss object as JSON
  /// text, '{"class_name": "Huber", "config": {"delta": 2.0}}'. Checkpoints and run.json record it as given.
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
