#include <torchfit/layers/random_color_degeneration.h>

#include <torchfit/layers/registry.h>

namespace torchfit {

RandomColorDegenerationImpl::RandomColorDegenerationImpl(RandomColorDegenerationOptions opts)
    : ImageAugmentation(keras_class_name, opts.name()), options(std::move(opts)) {
  set_declared_input_shape(options.input_shape());
  range_ = keras_base_factor_range(options.factor(), describe(), -1.0, 1.0);  // the base's _FACTOR_BOUNDS
  value_range_ = keras_value_range(options.value_range(), describe(), ValueRangeOrder::sorted);
}

Shape RandomColorDegenerationImpl::build_impl(const Shape& in) {
  const Shape out = ImageAugmentation::build_impl(in);
  if (in[2] != 1 && in[2] != 3)
    throw ConfigError(describe() + " expects 1 or 3 channels (RGB or grayscale), got " + format_shape(in));
  return out;
}

at::Tensor RandomColorDegenerationImpl::draw_factors(int64_t n, const at::Tensor& like) const {
  return uniform_draws(n, range_.first, range_.second, like);
}

at::Tensor RandomColorDegenerationImpl::degenerate(const at::Tensor& x, const at::Tensor& factors) const {
  at::Tensor gray = x;
  if (x.size(1) == 3) {
    gray = (x.select(1, 0) * 0.2989 + x.select(1, 1) * 0.587 + x.select(1, 2) * 0.114).unsqueeze(1);
  }
  const at::Tensor w = factors.to(x.options()).view({-1, 1, 1, 1});
  return (x + w * (gray - x)).clamp(value_range_.first, value_range_.second);
}

TORCHFIT_REGISTER_LAYER(RandomColorDegeneration);

}  // namespace torchfit
