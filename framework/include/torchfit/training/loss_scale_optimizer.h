#pragma once
/// @file loss_scale_optimizer.h
/// LossScaleOptimizer — dynamic loss scaling for mixed_float16 (keras.mixed_precision.LossScaleOptimizer).
#include <cstdint>
#include <vector>

#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>
#include <torch/arg.h>
#include <torch/optim/optimizer.h>
#include <nlohmann/json.hpp>

#include <torchfit/model/compile.h>

namespace torchfit {

/// Dynamic loss scaling around an optimizer, with Keras LossScaleOptimizer's semantics: the loss is
/// multiplied by the scale before backward (scale_loss), so small float16 gradients do not flush to zero;
/// step() divides the gradients by the scale and checks them: all finite ⇒ the wrapped optimizer steps;
/// any inf/nan ⇒ the step is skipped (weights and optimizer state unchanged), counted, logged, and the
/// scale halved (never below 1, as Keras). After `dynamic_growth_steps` finite steps in a row the scale
/// doubles. Uses ATen's AMP kernels (_amp_foreach_non_finite_check_and_unscale_, _amp_update_scale_) on
/// CUDA, and on the CPU where the LibTorch version has them (2.x); LibTorch 1.13's CPU gets the same
/// arithmetic from plain tensor operations. The scale lives on the gradients' device (no host round
/// trip except step()'s one read of "found inf").
class LossScaleOptimizer {
 public:
  /// `params`: the parameters whose gradients step() unscales (the optimizer's). Errors: ConfigError for
  /// an initial_scale that is not a finite number ≥ 1 or dynamic_growth_steps < 1, naming the value.
  LossScaleOptimizer(torch::optim::Optimizer& optimizer, std::vector<at::Tensor> params, LossScaleOptions options = {},
                     c10::Device device = c10::Device(c10::kCPU));

  /// `loss` × the current scale (call backward on this).
  at::Tensor scale_loss(const at::Tensor& loss) const;
  /// Unscales the gradients in place, steps the optimizer when they are all finite, updates the scale.
  /// Returns true when the step was applied, false when it was skipped.
  bool step();

  /// The current scale (reads it from the device).
  double loss_scale() const;
  /// Finite steps since the last change of the scale (Keras: the counter).
  int64_t good_steps() const;
  /// Steps skipped since construction (or since the state loaded by load_state).
  int64_t skipped_steps() const { return skipped_; }
  const LossScaleOptions& options() const { return options_; }

  /// {"loss_scale", "good_steps", "skipped_steps"}: what a checkpoint stores to resume exactly.
  nlohmann::json state() const;
  /// Restores state(). Errors: ConfigError naming a missing or malformed field.
  void load_state(const nlohmann::json& state);

 private:
  void unscale_and_check();
  void update_scale();
  torch::optim::Optimizer& optimizer_;
  std::vector<at::Tensor> params_;
  LossScaleOptions options_;
  at::Tensor scale_;           // () float32 on the device
  at::Tensor growth_tracker_;  // () int32 on the device: finite steps since the last change
  at::Tensor found_inf_;       // () float32 on the device: 1 when a gradient was not finite
  int64_t skipped_ = 0;
  bool amp_kernels_ = false;  // ATen's fused AMP kernels exist for this device
};

}  // namespace torchfit
