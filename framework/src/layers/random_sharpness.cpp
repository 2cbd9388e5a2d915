#include <torchfit/layers/random_sharpness.h>

#include <torchfit/layers/registry.h>

namespace torchfit {

RandomSharpnessImpl::RandomSharpnessImpl(RandomSharpnessOptions opts)
    : ImageAugmentation(keras_class_name, opts.name()), options(std::move(opts)) {
  set_declared_input_shape(options.input_shape());
  range_ = keras_base_factor_range(options.factor(), describe(), 0.0, 1.0);  // _FACTOR_BOUNDS (0, 1)
  value_range_ = keras_value_range(options.value_range(), describe(), ValueRangeOrder::sorted);
}

at::Tensor RandomSharpnessImpl::draw_factors(int64_t n, const at::Tensor& like) const {
  return uniform_draws(n, range_.first, range_.second, like);
}

at::Tensor RandomSharpnessImpl::sharpen(const at::Tensor& x, const at::Tensor& factors) const {
  const int64_t channels = x.size(1);
  const double a = 1.0 / 13.0, b = 5.0 / 13.0;
  const at::Tensor kernel =
      at::tensor({a, a, a, a, b, a, a, a, a}, x.options()).view({1, 1, 3, 3}).repeat({channels, 1, 1, 1});
  const at::Tensor blurred = at::conv2d(x, kernel, {}, 1, 1, 1, channels);  // depthwise, "same" zero padding
  const at::Tensor s = (factors * 2).to(x.options()).view({-1, 1, 1, 1});
  return (x + (1.0 - s) * (blurred - x)).clamp(value_range_.first, value_range_.second);
}

TORCHFIT_REGISTER_LAYER(RandomSharpness);

}  // namespace torchfit
