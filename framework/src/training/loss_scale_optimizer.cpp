#include <torchfit/training/loss_scale_optimizer.h>

#include <cmath>

#include <ATen/ops/_amp_foreach_non_finite_check_and_unscale.h>
#include <ATen/ops/_amp_update_scale.h>

#include <torchfit/error.h>
#include <torchfit/runtime/logging.h>

#include "compat/autocast.h"

namespace torchfit {

LossScaleOptimizer::LossScaleOptimizer(torch::optim::Optimizer& optimizer, std::vector<at::Tensor> params,
                                       LossScaleOptions options, c10::Device device)
    : optimizer_(optimizer), params_(std::move(params)), options_(options) {
  if (!(options_.initial_scale() >= 1.0) || !std::isfinite(options_.initial_scale())) {
    throw ConfigError("loss scaling: initial_scale must be a finite number >= 1, got " +
                      std::to_string(options_.initial_scale()));
  }
  if (options_.dynamic_growth_steps() < 1) {
    throw ConfigError("loss scaling: dynamic_growth_steps must be >= 1, got " +
                      std::to_string(options_.dynamic_growth_steps()));
  }
  const auto f32 = at::TensorOptions().dtype(at::kFloat).device(device);
  scale_ = at::full({}, options_.initial_scale(), f32);
  growth_tracker_ = at::zeros({}, f32.dtype(at::kInt));
  found_inf_ = at::zeros({}, f32);
  amp_kernels_ = device.is_cuda() || compat::kAmpKernelsOnCpu;
}

at::Tensor LossScaleOptimizer::scale_loss(const at::Tensor& loss) const { return loss * scale_; }

void LossScaleOptimizer::unscale_and_check() {
  std::vector<at::Tensor> grads;
  for (const auto& p : params_)
    if (p.grad().defined()) grads.push_back(p.grad());
  found_inf_.zero_();
  const at::Tensor inv_scale = scale_.reciprocal();
  if (amp_kernels_) {
    at::_amp_foreach_non_finite_check_and_unscale_(grads, found_inf_, inv_scale);
    return;
  }
  // The same arithmetic as ATen's kernel: found_inf = 1 if any element is inf/nan; g *= 1/scale.
  for (auto& g : grads) {
    found_inf_.logical_or_(at::isfinite(g).all().logical_not());
    g.mul_(inv_scale);
  }
}

void LossScaleOptimizer::update_scale() {
  if (!options_.dynamic()) return;
  if (amp_kernels_) {
    at::_amp_update_scale_(scale_, growth_tracker_, found_inf_, 2.0, 0.5, options_.dynamic_growth_steps());
  } else if (found_inf_.item<float>() > 0) {  // ATen's rule: halve and restart the count
    scale_.mul_(0.5);
    growth_tracker_.zero_();
  } else if (growth_tracker_.item<int>() + 1 == options_.dynamic_growth_steps()) {
    scale_.mul_(2.0);
    growth_tracker_.zero_();
  } else {
    growth_tracker_.add_(1);
  }
  scale_.clamp_min_(1.0);  // Keras never lets the scale fall below 1
}

bool LossScaleOptimizer::step() {
  unscale_and_check();
  const bool finite = found_inf_.item<float>() == 0;
  const double scale = finite ? 0.0 : loss_scale();
  if (finite) {
    optimizer_.step();
  } else {
    ++skipped_;
  }
  update_scale();
  if (!finite) {
    torchfit::logger().info("loss scaling: non-finite gradients at loss scale {}: step skipped ({} so far), scale {}",
                            scale, skipped_, loss_scale());
  }
  return finite;
}

double LossScaleOptimizer::loss_scale() const { return scale_.item<double>(); }
int64_t LossScaleOptimizer::good_steps() const { return growth_tracker_.item<int64_t>(); }

nlohmann::json LossScaleOptimizer::state() const {
  return {{"loss_scale", loss_scale()}, {"good_steps", good_steps()}, {"skipped_steps", skipped_}};
}

void LossScaleOptimizer::load_state(const nlohmann::json& state) {
  auto number = [&](const char* key) {
    if (!state.is_object() || !state.contains(key) || !state[key].is_number()) {
      throw ConfigError(std::string("loss scaling state: missing or malformed '") + key + "' in " + state.dump());
    }
    return state[key].get<double>();
  };
  const double scale = number("loss_scale");
  if (!(scale >= 1.0) || !std::isfinite(scale)) {
    throw ConfigError("loss scaling state: loss_scale must be a finite number >= 1, got " + std::to_string(scale));
  }
  const double good = number("good_steps"), skipped = number("skipped_steps");
  if (good < 0 || skipped < 0 || good != std::floor(good) || skipped != std::floor(skipped)) {
    throw ConfigError("loss scaling state: good_steps and skipped_steps must be whole numbers >= 0, got " +
                      state.dump());
  }
  scale_.fill_(scale);
  growth_tracker_.fill_(static_cast<int64_t>(good));
  skipped_ = static_cast<int64_t>(skipped);
}

}  // namespace torchfit
