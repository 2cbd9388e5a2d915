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
  /// "cosine" (CosineDecay), "exponential" (ExponentialDecay), "piecewise" (PiecewiseConstantDecay),
  /// "cosine_restarts" (CosineDecayRestarts), "inverse_time" (InverseTimeDecay) or "polynomial"
  /// (PolynomialDecay).
  TORCH_ARG(std::string, name) = "cosine";
  /// all but piecewise: Keras `initial_learning_rate` (≥ 0; a warm-up often starts at 0); unset ⇒ the
  /// optimizer's learning_rate.
  TORCH_ARG(std::optional<double>, initial_learning_rate) = std::nullopt;
  /// cosine, exponential, inverse_time, polynomial: steps over which the rate decays (Keras `decay_steps`,
  /// required, ≥ 1).
  TORCH_ARG(int64_t, decay_steps) = 0;
  /// cosine, cosine_restarts: the fraction of the (warm-up target) rate left at the end (Keras `alpha`,
  /// default 0).
  TORCH_ARG(double, alpha) = 0.0;
  /// cosine: linear warm-up steps before the decay (Keras `warmup_steps`, default 0).
  TORCH_ARG(int64_t, warmup_steps) = 0;
  /// cosine: the rate reached at the end of the warm-up (Keras `warmup_target`); unset ⇒ no warm-up.
  TORCH_ARG(std::optional<double>, warmup_target) = std::nullopt;
  /// exponential (> 0), inverse_time (≥ 0): Keras `decay_rate` (required).
  TORCH_ARG(double, decay_rate) = 0.0;
  /// exponential, inverse_time: decay in whole periods (Keras `staircase`, default false).
  TORCH_ARG(bool, staircase) = false;
  /// piecewise: increasing step boundaries and the len(boundaries) + 1 rates (Keras `boundaries`, `values`).
  TORCH_ARG(std::vector<int64_t>, boundaries) = {};
  TORCH_ARG(std::vector<double>, values) = {};
  /// cosine_restarts: the first period (Keras `first_decay_steps`, required, ≥ 1), each next period's
  /// length factor (`t_mul`, 2.0, > 0) and rate factor (`m_mul`, 1.0, ≥ 0).
  TORCH_ARG(int64_t, first_decay_steps) = 0;
  TORCH_ARG(double, t_mul) = 2.0;
  TORCH_ARG(double, m_mul) = 1.0;
  /// polynomial: the rate at decay_steps (Keras `end_learning_rate`, 1e-4, ≥ 0), the polynomial's `power`
  /// (1.0) and `cycle` (false: stay at the end rate; true: decay_steps · ceil(step / decay_steps)).
  TORCH_ARG(double, end_learning_rate) = 1e-4;
  TORCH_ARG(double, power) = 1.0;
  TORCH_ARG(bool, cycle) = false;

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
    if (name() == "cosine_restarts") {
      a.required("first_decay_steps", first_decay_steps());
      a("t_mul", t_mul());
      a("m_mul", m_mul());
      a("alpha", alpha());
      return;
    }
    a.required("decay_steps", decay_steps());
    if (name() == "cosine") {
      a("alpha", alpha());
      a("warmup_target", warmup_target());
      a("warmup_steps", warmup_steps());
    } else if (name() == "polynomial") {
      a("end_learning_rate", end_learning_rate());
      a("power", power());
      a("cycle", cycle());
    } else {  // exponential, inverse_time
      a.required("decay_rate", decay_rate());
      a("staircase", staircase());
    }
  }
  /// Keras's serialised schedule {"class_name": "CosineDecay" | "ExponentialDecay" |
  /// "PiecewiseConstantDecay" | "CosineDecayRestarts" | "InverseTimeDecay" | "PolynomialDecay", "config": {…}} (as
  /// training/lr_schedules.h schedule_config writes it). Values are checked where the schedule is used
  /// (check_schedule). Errors: ConfigError naming the class or the field (unknown, missing, wrong type).
  static LearningRateScheduleOptions from_config(const nlohmann::json& spec);
};

/// Optimizer settings with Keras 3's names and defaults (keras/src/optimizers/*.py). A number < 0 in
/// learning_rate, and kKerasDefault (−1) in beta_2, rho or weight_decay, mean the named optimizer's Keras
/// default (resolved()); another negative value there is refused where the options are used.
struct OptimizerOptions {
  static constexpr double kKerasDefault = -1.0;
  /// adam | adamw | sgd | rmsprop | adagrad | adadelta | adamax | nadam | lion | ftrl | adafactor (Keras's class names,
  /// lower case; training/keras_optimizers.h has the update rules).
  TORCH_ARG(std::string, name) = "adam";
  /// < 0 ⇒ Keras's default: sgd 1e-2, every other 1e-3.
  TORCH_ARG(double, learning_rate) = -1.0;
  /// adam, adamw, adamax, nadam, lion: beta_1 (Keras 0.9).
  TORCH_ARG(double, beta_1) = 0.9;
  /// adam, adamw, adamax, nadam: beta_2 (Keras 0.999); lion 0.99. −1 ⇒ that default.
  TORCH_ARG(double, beta_2) = -1.0;
  /// adam, adamw, rmsprop, adagrad, adadelta, adamax, nadam: epsilon (Keras 1e-7).
  TORCH_ARG(double, epsilon) = 1e-7;
  /// sgd / rmsprop momentum (Keras 0).
  TORCH_ARG(double, momentum) = 0.0;
  /// sgd Nesterov momentum (Keras false).
  TORCH_ARG(bool, nesterov) = false;
  /// rmsprop decay rho (Keras 0.9); adadelta 0.95. −1 ⇒ that default.
  TORCH_ARG(double, rho) = -1.0;
  /// adam, adamw: keep the maximum of the second moments (Keras `amsgrad`, false).
  TORCH_ARG(bool, amsgrad) = false;
  /// rmsprop: divide by the centred second moment v − (mean g)² (Keras `centered`, false).
  TORCH_ARG(bool, centered) = false;
  /// adagrad, ftrl: the accumulators' starting value (Keras 0.1, ≥ 0).
  TORCH_ARG(double, initial_accumulator_value) = 0.1;
  /// ftrl: Keras `learning_rate_power` (−0.5, ≤ 0), `l1_regularization_strength`,
  /// `l2_regularization_strength`, `l2_shrinkage_regularization_strength` and `beta` (all 0, ≥ 0).
  TORCH_ARG(double, learning_rate_power) = -0.5;
  TORCH_ARG(double, l1_regularization_strength) = 0.0;
  TORCH_ARG(double, l2_regularization_strength) = 0.0;
  TORCH_ARG(double, l2_shrinkage_regularization_strength) = 0.0;
  TORCH_ARG(double, beta) = 0.0;
  /// adafactor: Keras `beta_2_decay` (−0.8: β2ᵗ = 1 − t^beta_2_decay), `epsilon_1` (1e-30, added to g²),
  /// `epsilon_2` (1e-3, the least RMS of a weight), `clip_threshold` (1.0) and `relative_step` (true).
  TORCH_ARG(double, beta_2_decay) = -0.8;
  TORCH_ARG(double, epsilon_1) = 1e-30;
  TORCH_ARG(double, epsilon_2) = 1e-3;
  TORCH_ARG(double, clip_threshold) = 1.0;
  TORCH_ARG(bool, relative_step) = true;
  /// adam: the single-pass FusedAdam (Keras's update, see training/fused_adam.h); false ⇒ the same update
  /// through torch::optim::Adam's kernels (for comparisons). Not used with amsgrad (Keras's Adam then).
  TORCH_ARG(bool, fused) = true;
  /// Each gradient rescaled to norm ≤ clipnorm, per variable (Keras `clipnorm`; 0 = off).
  TORCH_ARG(double, clipnorm) = 0.0;
  /// Each gradient element clipped to [−clipvalue, clipvalue] (Keras `clipvalue`; 0 = off).
  TORCH_ARG(double, clipvalue) = 0.0;
  /// All gradients rescaled together to a global norm ≤ global_clipnorm (Keras `global_clipnorm`; 0 =
  /// off). At most one of the three clipping options may be set (as Keras).
  TORCH_ARG(double, global_clipnorm) = 0.0;
  /// Decoupled weight decay (Keras ≥ 2.11 `weight_decay`, AdamW's): before each update every weight
  /// w ← w − learning_rate · weight_decay · w (0 = off; −1 ⇒ Keras's default: adamw 0.004, else off).
  TORCH_ARG(double, weight_decay) = -1.0;
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
  /// under "learning_rate" too, as Keras serialises a schedule in place of the rate. Only the update-rule
  /// arguments the named optimizer's Keras get_config() has are listed (Adagrad: no beta_1). `fused` is
  /// an implementation choice, not a Keras argument, and is not listed.
  template <typename Args>
  void args(Args& a) {
    a("name", name());  // first: a reader has the name before the arguments that depend on it
    a("learning_rate", learning_rate());
    const std::string& n = name();
    const bool adam_like = n == "adam" || n == "adamw" || n == "adamax" || n == "nadam";
    if (adam_like || n == "lion") {
      a("beta_1", beta_1());
      a("beta_2", beta_2());
    }
    if (adam_like || n == "rmsprop" || n == "adagrad" || n == "adadelta") a("epsilon", epsilon());
    if (n == "sgd" || n == "rmsprop") a("momentum", momentum());
    if (n == "sgd") a("nesterov", nesterov());
    if (n == "rmsprop" || n == "adadelta") a("rho", rho());
    if (n == "adam" || n == "adamw") a("amsgrad", amsgrad());
    if (n == "rmsprop") a("centered", centered());
    if (n == "adagrad" || n == "ftrl") a("initial_accumulator_value", initial_accumulator_value());
    if (n == "ftrl") {
      a("learning_rate_power", learning_rate_power());
      a("l1_regularization_strength", l1_regularization_strength());
      a("l2_regularization_strength", l2_regularization_strength());
      a("l2_shrinkage_regularization_strength", l2_shrinkage_regularization_strength());
      a("beta", beta());
    }
    if (n == "adafactor") {
      a("beta_2_decay", beta_2_decay());
      a("epsilon_1", epsilon_1());
      a("epsilon_2", epsilon_2());
      a("clip_threshold", clip_threshold());
      a("relative_step", relative_step());
    }
    a.off_when_zero("clipnorm", clipnorm());
    a.off_when_zero("clipvalue", clipvalue());
    a.off_when_zero("global_clipnorm", global_clipnorm());
    if (n == "adamw")
      a("weight_decay", weight_decay());  // 0 written as 0: null would read back as AdamW's default 0.004
    else
      a.off_when_zero("weight_decay", weight_decay());
    a("use_ema", use_ema());
    a("ema_momentum", ema_momentum());
    a.off_when_zero("gradient_accumulation_steps", gradient_accumulation_steps());
    a("learning_rate", learning_rate_schedule());
  }
  /// These options with every "Keras default" (learning_rate < 0, the others −1) replaced by the named optimizer's
  /// value: learning_rate (sgd 1e-2, else 1e-3), beta_2 (lion 0.99, else 0.999), rho (adadelta 0.95, else 0.9),
  /// weight_decay (adamw 0.004, else 0). Errors: ConfigError for an unknown name (listing the known ones).
  OptimizerOptions resolved() const;
  /// The names make_optimizer knows, in Keras's order.
  static const std::vector<std::string>& known_names();
  /// The options of an optimizer config as optimizer_config wrote it (a checkpoint's
  /// `optimizer_features.config`, or its `compile.optimizer`, which has only the update-rule settings) or
  /// as Keras's get_config() writes it: an argument absent or null keeps its default; "learning_rate" is
  /// the rate or a Keras schedule (LearningRateScheduleOptions::from_config; the rate then stays unset).
  /// Keras's ema_overwrite_frequency and loss_scale_factor are accepted when null, tf.keras 2's
  /// jit_compile and is_legacy_optimizer ignored, its `decay` accepted when 0. Configs written before
  /// the arguments were per optimizer listed beta_1, beta_2, epsilon, momentum, nesterov and rho for every
  /// optimizer: those are accepted where the optimizer has no such argument only at the values then
  /// written (0.9, 0.999, 1e-7, 0, false, 0.9). Values are checked where the options are used
  /// (make_optimizer, OptimizerFeatures). Errors: ConfigError naming the field (unknown to that
  /// optimizer, wrong type) or the schedule's.
  static OptimizerOptions from_config(const nlohmann::json& config);
  /// A Keras optimizer as compile(optimizer=…) or a compile_config names it: a name ("adam", "Adam",
  /// "adagrad", …) or a serialised object {"class_name": "Adagrad", "config": {…}} (Keras's "module" and
  /// "registered_name" ignored; the config's "name" is the instance's name in Keras and is not read), or
  /// that JSON as text. Errors: ConfigError naming the class, the field or the text at fault.
  static OptimizerOptions from_keras(const nlohmann::json& spec);
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

/// The optimizer's name, `learning_rate` and update-rule settings (options.resolved()'s) as JSON with
/// Keras's names: the arguments of OptimizerOptions::args() without the BaseOptimizer ones (clipping,
/// weight_decay, EMA, accumulation, schedule); checkpoints record it
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
  /// A model with several outputs (Keras's compile(loss=[…]) or compile(loss={…})): one loss per output, a
  /// JSON list in the model's output order or an object output name → loss (each entry a loss name, a Keras
  /// loss object, or null: no loss for that output). Null (default): `loss` for every output.
  /// training/compiled_outputs.h resolves it; checkpoints and run.json record it.
  TORCH_ARG(nlohmann::json, output_losses) = nullptr;
  /// Keras's loss_weights: null (1 each, default), a number (one output), a JSON list in output order or an
  /// object output name → weight. The total loss is Σ weight · loss of each output.
  TORCH_ARG(nlohmann::json, loss_weights) = nullptr;
  /// A model with several outputs: each output's metrics, a JSON list in output order (an entry: a metric
  /// name or object, a list of them, or null) or an object output name → metric(s); logged as
  /// "<output>_<metric>". Null (default): `metrics`, which for several outputs gives one metric per output.
  TORCH_ARG(nlohmann::json, output_metrics) = nullptr;
  /// Keras's weighted_metrics: metrics that the sample weights weigh (fit's sample_weight, or class_weight
  /// turned into sample weights; validation_data's own weights) — a JSON list of metric names or objects
  /// (one output: all of them; several: one entry per output, an entry a metric, a list or null) or an
  /// object output name → metric(s). Logged after the unweighted metrics under the metric's name, or
  /// "weighted_<name>" when `metrics` already logs that name (Keras 3's CompileMetrics). Null (default): none.
  TORCH_ARG(nlohmann::json, weighted_metrics) = nullptr;
  /// Dynamic loss scaling (LossScaleOptimizer). Unset ⇒ on with Keras's defaults when the model's dtype
  /// policy is mixed_float16 (as Keras's compile wraps the optimizer), off otherwise; set ⇒ on with these
  /// settings whatever the policy.
  TORCH_ARG(std::optional<LossScaleOptions>, loss_scale) = std::nullopt;
};

}  // namespace torchfit
