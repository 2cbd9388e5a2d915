#pragma once
/// @file keras_optimizers.h
/// Keras 3's optimizers with Keras 3's update rules (keras/src/optimizers/<name>.py update_step), as
/// torch::optim::Optimizer subclasses sharing one base, KerasOptimizer.
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <ATen/core/Tensor.h>
#include <torch/optim/optimizer.h>
#include <torch/serialize/archive.h>

#include <torchfit/model/compile.h>

namespace torchfit {

/// The param-group options of a KerasOptimizer: the learning rate only (the update rule's settings are
/// the optimizer's, from OptimizerOptions).
struct KerasGroupOptions : public torch::optim::OptimizerCloneableOptions<KerasGroupOptions> {
  KerasGroupOptions(double lr = 1e-3) : lr_(lr) {}  // NOLINT: LibTorch's loader constructs it from a rate
  TORCH_ARG(double, lr) = 1e-3;

 public:
  void serialize(torch::serialize::InputArchive& archive) override;
  void serialize(torch::serialize::OutputArchive& archive) const override;
  double get_lr() const override { return lr(); }
  void set_lr(const double lr) override { this->lr(lr); }
};

/// One parameter's state: the updates applied to it (Keras `iterations` + 1 at the next one) and its
/// slot variables by name (Keras's add_optimizer_variables), serialized as "step" and one tensor per slot.
struct KerasSlotState : public torch::optim::OptimizerCloneableParamState<KerasSlotState> {
  TORCH_ARG(int64_t, step) = 0;

 public:
  std::map<std::string, at::Tensor> slots;
  void serialize(torch::serialize::InputArchive& archive) override;
  void serialize(torch::serialize::OutputArchive& archive) const override;
  at::Tensor& slot(const std::string& name);
};

/// A slot variable: its name and starting value (a tensor like the parameter, or a float64 scalar, or
/// one of `sizes` in the parameter's dtype when given).
struct KerasSlot {
  std::string name;
  double initial = 0.0;
  bool scalar = false;
  std::optional<std::vector<int64_t>> sizes = std::nullopt;
};

/// The per-parameter Keras update pattern: step() gives every parameter with a gradient its slots (created
/// at its first update, as Keras's build) and calls update() with the gradient, the slots, the group's
/// learning rate and t = its update count (1 at the first). Everything Keras's BaseOptimizer adds around
/// update_step (clipping, weight decay, EMA, accumulation, schedules) is OptimizerFeatures'. The math runs
/// in the parameter's dtype, as Keras's ops on the variable's dtype. State (step and slots per parameter,
/// keyed as LibTorch's own optimizers key it) is saved and loaded by save()/load(), so a checkpoint
/// resumes with identical following steps. Errors: ConfigError naming the option (check_options).
class KerasOptimizer : public torch::optim::Optimizer {
 public:
  /// `options`: resolved (OptimizerOptions::resolved()).
  KerasOptimizer(std::vector<at::Tensor> params, OptimizerOptions options);
  torch::Tensor step(LossClosure closure = nullptr) override;
  void save(torch::serialize::OutputArchive& archive) const override;
  void load(torch::serialize::InputArchive& archive) override;
  const OptimizerOptions& keras_options() const { return options_; }

 protected:
  /// The slots of parameter `p`.
  virtual std::vector<KerasSlot> slots(const at::Tensor& p) const = 0;
  /// One Keras update_step of `p` (in place) for gradient `g`.
  virtual void update(at::Tensor& p, const at::Tensor& g, KerasSlotState& state, double lr) = 0;
  OptimizerOptions options_;
};

/// keras.optimizers.Adam (amsgrad) and AdamW (Adam's rule; its weight decay is OptimizerFeatures'):
///   α = lr·√(1−β2ᵗ)/(1−β1ᵗ); m += (g−m)(1−β1); v += (g²−v)(1−β2); amsgrad: v̂ = max(v̂, v), v = v̂;
///   p −= α·m/(√v + ε).   (ε is added to √v un-corrected: torch's Adam adds it to √v/√(1−β2ᵗ).)
class KerasAdam : public KerasOptimizer {
 public:
  using KerasOptimizer::KerasOptimizer;

 protected:
  std::vector<KerasSlot> slots(const at::Tensor& p) const override;
  void update(at::Tensor& p, const at::Tensor& g, KerasSlotState& s, double lr) override;
};

/// keras.optimizers.SGD: momentum > 0: m = momentum·m − lr·g (slot "momentum"), then p += m, or with nesterov
/// p += momentum·m − lr·g; momentum 0: p −= lr·g. (torch::optim::SGD keeps b = momentum·b + g and steps
/// p −= lr·b: the same at a constant rate, not under a schedule, where Keras's velocity keeps the earlier
/// rates.) A torch::optim::SGD checkpoint's momentum_buffer b is read as m = −lr·b at its first update.
class KerasSGD : public KerasOptimizer {
 public:
  using KerasOptimizer::KerasOptimizer;

 protected:
  std::vector<KerasSlot> slots(const at::Tensor& p) const override;
  void update(at::Tensor& p, const at::Tensor& g, KerasSlotState& s, double lr) override;
};

/// keras.optimizers.RMSprop: v = ρv + (1−ρ)g²; centered: ḡ = ρḡ + (1−ρ)g, d = v − ḡ² + ε, else d = v + ε;
/// Δ = lr·g/√d; momentum > 0: b = momentum·b + Δ, p −= b; else p −= Δ. (ε inside the square root; torch's
/// RMSprop divides by √v + ε and scales the momentum buffer by lr afterwards.) Slots keep torch's names
/// (square_avg, grad_avg, momentum_buffer), so checkpoints of torch::optim::RMSprop load.
class KerasRMSprop : public KerasOptimizer {
 public:
  using KerasOptimizer::KerasOptimizer;

 protected:
  std::vector<KerasSlot> slots(const at::Tensor& p) const override;
  void update(at::Tensor& p, const at::Tensor& g, KerasSlotState& s, double lr) override;
};

/// keras.optimizers.Adagrad: a += g² (a starts at initial_accumulator_value); p −= lr·g/√(a + ε).
class Adagrad : public KerasOptimizer {
 public:
  using KerasOptimizer::KerasOptimizer;

 protected:
  std::vector<KerasSlot> slots(const at::Tensor& p) const override;
  void update(at::Tensor& p, const at::Tensor& g, KerasSlotState& s, double lr) override;
};

/// keras.optimizers.Adadelta, rms(x) = √(x + ε): A = ρA + (1−ρ)g²; δ = −rms(D)·g/rms(A);
/// D = ρD + (1−ρ)δ²; p += lr·δ.
class Adadelta : public KerasOptimizer {
 public:
  using KerasOptimizer::KerasOptimizer;

 protected:
  std::vector<KerasSlot> slots(const at::Tensor& p) const override;
  void update(at::Tensor& p, const at::Tensor& g, KerasSlotState& s, double lr) override;
};

/// keras.optimizers.Adamax: m += (g−m)(1−β1); u = max(β2·u, |g|); p −= lr·m/((1−β1ᵗ)(u + ε)).
class Adamax : public KerasOptimizer {
 public:
  using KerasOptimizer::KerasOptimizer;

 protected:
  std::vector<KerasSlot> slots(const at::Tensor& p) const override;
  void update(at::Tensor& p, const at::Tensor& g, KerasSlotState& s, double lr) override;
};

/// keras.optimizers.Nadam (Keras 3: u_t = β1(1 − ½·0.96ᵗ); tf.keras 2 had 0.96^(0.004·t)):
///   Π_t = Π_{t−1}·u_t (slot u_product, from 1); m += (g−m)(1−β1); v += (g²−v)(1−β2);
///   m̂ = u_{t+1}·m/(1 − Π_t·u_{t+1}) + (1−u_t)·g/(1 − Π_t); v̂ = v/(1−β2ᵗ); p −= lr·m̂/(√v̂ + ε).
class Nadam : public KerasOptimizer {
 public:
  using KerasOptimizer::KerasOptimizer;

 protected:
  std::vector<KerasSlot> slots(const at::Tensor& p) const override;
  void update(at::Tensor& p, const at::Tensor& g, KerasSlotState& s, double lr) override;
};

/// keras.optimizers.Lion: p −= lr·sign(β1·m + (1−β1)g); m = β2·m + (1−β2)g.
class Lion : public KerasOptimizer {
 public:
  using KerasOptimizer::KerasOptimizer;

 protected:
  std::vector<KerasSlot> slots(const at::Tensor& p) const override;
  void update(at::Tensor& p, const at::Tensor& g, KerasSlotState& s, double lr) override;
};

/// keras.optimizers.Ftrl, c = −learning_rate_power, l2' = l2 + beta/(2·lr): g' = g + 2·l2_shrinkage·p;
/// n' = n + g² (n starts at initial_accumulator_value); z += g' − (n'^c − n^c)/lr·p;
/// p = (clip(z, −l1, l1) − z)/(n'^c/lr + 2·l2'); n = n'.
class Ftrl : public KerasOptimizer {
 public:
  using KerasOptimizer::KerasOptimizer;

 protected:
  std::vector<KerasSlot> slots(const at::Tensor& p) const override;
  void update(at::Tensor& p, const at::Tensor& g, KerasSlotState& s, double lr) override;
};

/// keras.optimizers.Adafactor, t = step: ρ = min(lr, 1/√t); α = max(epsilon_2, RMS(p))·ρ; G = g² + epsilon_1;
/// β = 1 − t^beta_2_decay; rank ≥ 2: r = βr + (1−β)·mean(G, −1), c = βc + (1−β)·mean(G, −2),
/// v = (r / mean(r, −1))[…, None] · c[…, None, :]; rank < 2: v = βv + (1−β)G; u = g/√v;
/// p −= α · u / max(1, RMS(u)/clip_threshold). The factored axes are the last two of the parameter as
/// torchfit holds it: Keras's for rank ≤ 2 (a Dense kernel's transpose factors alike), not for a
/// convolution kernel ((out, in, kh, kw) here, (kh, kw, in, out) in Keras).
class Adafactor : public KerasOptimizer {
 public:
  using KerasOptimizer::KerasOptimizer;

 protected:
  std::vector<KerasSlot> slots(const at::Tensor& p) const override;
  void update(at::Tensor& p, const at::Tensor& g, KerasSlotState& s, double lr) override;
};

/// The update-rule settings' checks (Keras's and the formulas' domains), naming the option:
/// learning_rate > 0 and finite; beta_1, beta_2, rho in [0, 1) (lion: beta_1 in (0, 1], beta_2 in [0, 1]);
/// epsilon, momentum, initial_accumulator_value, l1/l2/l2_shrinkage strengths, beta ≥ 0 and finite;
/// learning_rate_power ≤ 0; momentum ≤ 1; adafactor: beta_2_decay ≤ 0, epsilon_1, epsilon_2 ≥ 0,
/// clip_threshold > 0. Errors: ConfigError "optimizer <name>: <option> …".
void check_optimizer_options(const OptimizerOptions& resolved);

/// The KerasOptimizer for `resolved.name()` (adamw, adagrad, adadelta, adamax, nadam, lion, ftrl, adafactor; adam with
/// amsgrad; rmsprop), or nullptr for the names make_optimizer builds otherwise.
std::unique_ptr<torch::optim::Optimizer> make_keras_optimizer(const OptimizerOptions& resolved,
                                                              std::vector<at::Tensor> params);

}  // namespace torchfit
