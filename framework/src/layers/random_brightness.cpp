#include <torchfit/layers/random_brightness.h>

#include <torchfit/layers/registry.h>

namespace torchfit {

RandomBrightnessImpl::RandomBrightnessImpl(RandomBrightnessOptions opts)
    : ImageAugmentation(keras_class_name, opts.name()), options(std::move(opts)) {
  set_declared_input_shape(options.input_shape());
  range_ = keras_base_factor_range(options.factor(), describe(), -1.0, 1.0);  // _FACTOR_BOUNDS (-1, 1)
  value_range_ = keras_value_range(options.value_range(), describe(), ValueRangeOrder::sorted);
}

at::Tensor RandomBrightnessImpl::draw_deltas(int64_t n, const at::Tensor& like) const {
  return uniform_draws(n, range_.first, range_.second, like) * (value_range_.second - value_range_.first);
}

at::Tensor RandomBrightnessImpl::adjust(const at::Tensor& x, const at::Tensor& deltas) const {
  return (x + deltas.to(x.options()).view({-1, 1, 1, 1})).clamp(value_range_.first, value_range_.second);
}

TORCHFIT_REGISTER_LAYER(RandomBrightness);

}  // namespace torchfit
