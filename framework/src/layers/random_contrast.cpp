#include <torchfit/layers/random_contrast.h>

#include <torchfit/layers/registry.h>

namespace torchfit {

RandomContrastImpl::RandomContrastImpl(RandomContrastOptions opts)
    : ImageAugmentation(keras_class_name, opts.name()), options(std::move(opts)) {
  set_declared_input_shape(options.input_shape());
  range_ = keras_base_factor_range(options.factor(), describe(), 0.0, 1.0);  // _FACTOR_BOUNDS (0, 1)
  value_range_ = keras_value_range(options.value_range(), describe(), ValueRangeOrder::as_given);
}

at::Tensor RandomContrastImpl::draw_factors(int64_t n, const at::Tensor& like) const {
  return uniform_draws(n, 1.0 - range_.first, 1.0 + range_.second, like);
}

at::Tensor RandomContrastImpl::adjust(const at::Tensor& x, const at::Tensor& factors) const {
  const at::Tensor mean = x.mean({2, 3}, true);
  const at::Tensor c = factors.to(x.options()).view({-1, 1, 1, 1});
  return ((x - mean) * c + mean).clamp(value_range_.first, value_range_.second);
}

TORCHFIT_REGISTER_LAYER(RandomContrast);

}  // namespace torchfit
