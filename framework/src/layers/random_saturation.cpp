#include <torchfit/layers/random_saturation.h>

#include <torchfit/layers/registry.h>

namespace torchfit {

RandomSaturationImpl::RandomSaturationImpl(RandomSaturationOptions opts)
    : ImageAugmentation(keras_class_name, opts.name()), options(std::move(opts)) {
  set_declared_input_shape(options.input_shape());
  range_ = keras_base_factor_range(options.factor(), describe(), -1.0, 1.0);  // the base _FACTOR_BOUNDS (-1, 1)
  value_range_ = keras_value_range(options.value_range(), describe(), ValueRangeOrder::sorted);
}

Shape RandomSaturationImpl::build_impl(const Shape& in) {
  const Shape out = ImageAugmentation::build_impl(in);
  check_rgb_input(in, describe());
  return out;
}

at::Tensor RandomSaturationImpl::draw_factors(int64_t n, const at::Tensor& like) const {
  const at::Tensor u = uniform_draws(n, range_.first, range_.second, like);
  return u / (1.0 - u + 1e-7);  // keras.backend.epsilon()
}

at::Tensor RandomSaturationImpl::adjust(const at::Tensor& x, const at::Tensor& factors) const {
  const at::Tensor hsv = rgb_to_hsv(x);
  const at::Tensor s =
      (hsv.select(1, 1) * factors.to(x.options()).view({-1, 1, 1})).clamp(value_range_.first, value_range_.second);
  return hsv_to_rgb(at::stack({hsv.select(1, 0), s, hsv.select(1, 2)}, 1));
}

TORCHFIT_REGISTER_LAYER(RandomSaturation);

}  // namespace torchfit
