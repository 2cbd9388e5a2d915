#include <torchfit/layers/random_hue.h>

#include <torchfit/layers/registry.h>

namespace torchfit {

RandomHueImpl::RandomHueImpl(RandomHueOptions opts)
    : ImageAugmentation(keras_class_name, opts.name()), options(std::move(opts)) {
  set_declared_input_shape(options.input_shape());
  range_ = keras_base_factor_range(options.factor(), describe(), 0.0, 1.0);  // _FACTOR_BOUNDS (0, 1)
  value_range_ = keras_value_range(options.value_range(), describe(), ValueRangeOrder::as_given);
}

Shape RandomHueImpl::build_impl(const Shape& in) {
  const Shape out = ImageAugmentation::build_impl(in);
  check_rgb_input(in, describe());
  return out;
}

at::Tensor RandomHueImpl::draw_deltas(int64_t n, const at::Tensor& like) const {
  const at::Tensor invert = uniform_draws(n, 0.0, 1.0, like);  // Keras draws the sign first, then the factor
  const at::Tensor sign = 1.0 - 2.0 * (invert > 0.5).to(invert.scalar_type());
  return sign * uniform_draws(n, range_.first, range_.second, like) * 0.5;
}

at::Tensor RandomHueImpl::adjust(const at::Tensor& x, const at::Tensor& deltas) const {
  const auto [low, high] = value_range_;
  const at::Tensor hsv = rgb_to_hsv((x - low) / (high - low));
  at::Tensor h = hsv.select(1, 0) + deltas.to(x.options()).view({-1, 1, 1});
  h = at::where(h > 1.0, h - 1.0, h);
  h = at::where(h < 0.0, h + 1.0, h);
  const at::Tensor rgb = hsv_to_rgb(at::stack({h, hsv.select(1, 1), hsv.select(1, 2)}, 1)).clamp(0.0, 1.0);
  return rgb * (high - low) + low;
}

TORCHFIT_REGISTER_LAYER(RandomHue);

}  // namespace torchfit
