#include <torchfit/layers/random_translation.h>

#include <torchfit/layers/registry.h>

namespace torchfit {

RandomTranslationImpl::RandomTranslationImpl(RandomTranslationOptions opts)
    : AffineAugmentation(keras_class_name, opts.name()), options(std::move(opts)) {
  set_declared_input_shape(options.input_shape());
  check_keras_factor(options.height_factor(), describe(), "height_factor", -1.0, 1.0);
  check_keras_factor(options.width_factor(), describe(), "width_factor", -1.0, 1.0);
  height_range_ = keras_factor_range(options.height_factor());
  width_range_ = keras_factor_range(options.width_factor());
  check_sampling();
}

at::Tensor RandomTranslationImpl::draw_translations(int64_t n, const at::Tensor& like) const {
  const at::Tensor fy = uniform_draws(n, height_range_.first, height_range_.second, like);
  const at::Tensor fx = uniform_draws(n, width_range_.first, width_range_.second, like);
  return at::stack({fy, fx}, 1);
}

at::Tensor RandomTranslationImpl::translation_transforms(const at::Tensor& fy, const at::Tensor& fx, int64_t height,
                                                         int64_t width) {
  const at::Tensor zero = at::zeros_like(fx), one = at::ones_like(fx);
  const at::Tensor dx = fx * static_cast<double>(width), dy = fy * static_cast<double>(height);
  return at::stack({one, zero, -dx, zero, one, -dy, zero, zero}, 1);
}

at::Tensor RandomTranslationImpl::random_transforms(const at::Tensor& x) {
  const at::Tensor t = draw_translations(x.size(0), x);
  return translation_transforms(t.select(1, 0), t.select(1, 1), x.size(2), x.size(3));
}

TORCHFIT_REGISTER_LAYER(RandomTranslation);

}  // namespace torchfit
