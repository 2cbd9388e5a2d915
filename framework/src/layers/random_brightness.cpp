#include <torchfit/layers/random_brightness.h>

#include <algorithm>

#include <torchfit/layers/registry.h>

namespace torchfit {

RandomBrightnessImpl::RandomBrightnessImpl(RandomBrightnessOptions opts)
    : ImageAugmentation(keras_class_name, opts.name()), options(std::move(opts)) {
  set_declared_input_shape(options.input_shape());
  range_ = keras_base_factor_range(options.factor(), describe(), -1.0, 1.0);  // _FACTOR_BOUNDS (-1, 1)
  const auto& v = options.value_range();
  if (v.size() != 2) {
    throw ConfigError(describe() + ": value_range must be two numbers [low, high], got " + std::to_string(v.size()));
  }
  low_ = std::min(v[0], v[1]);
  high_ = std::max(v[0], v[1]);
}

at::Tensor RandomBrightnessImpl::draw_deltas(int64_t n, const at::Tensor& like) const {
  return uniform_draws(n, range_.first, range_.second, like) * (high_ - low_);
}

at::Tensor RandomBrightnessImpl::adjust(const at::Tensor& x, const at::Tensor& deltas) const {
  return (x + deltas.to(x.options()).view({-1, 1, 1, 1})).clamp(low_, high_);
}

TORCHFIT_REGISTER_LAYER(RandomBrightness);

}  // namespace torchfit
