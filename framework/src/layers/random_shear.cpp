#include <torchfit/layers/random_shear.h>

#include <torchfit/layers/registry.h>

namespace torchfit {

RandomShearImpl::RandomShearImpl(RandomShearOptions opts)
    : AffineAugmentation(keras_class_name, opts.name()), options(std::move(opts)) {
  set_declared_input_shape(options.input_shape());
  check_keras_factor(options.x_factor(), describe(), "x_factor", 0.0, 1.0);
  check_keras_factor(options.y_factor(), describe(), "y_factor", 0.0, 1.0);
  x_range_ = keras_factor_range(options.x_factor());
  y_range_ = keras_factor_range(options.y_factor());
  check_sampling();
}

at::Tensor RandomShearImpl::draw_shears(int64_t n, const at::Tensor& like) const {
  const at::Tensor u = uniform_draws(n, 0.0, 1.0, like);
  const at::Tensor sign = at::where(u > 0.5, -at::ones_like(u), at::ones_like(u));
  const at::Tensor sy = uniform_draws(n, y_range_.first, y_range_.second, like);
  const at::Tensor sx = uniform_draws(n, x_range_.first, x_range_.second, like);
  return at::stack({sx * sign, sy * sign}, 1);
}

at::Tensor RandomShearImpl::shear_transforms(const at::Tensor& sx, const at::Tensor& sy) {
  const at::Tensor zero = at::zeros_like(sx), one = at::ones_like(sx);
  return at::stack({one, sx, zero, sy, one, zero, zero, zero}, 1);
}

at::Tensor RandomShearImpl::random_transforms(const at::Tensor& x) {
  const at::Tensor s = draw_shears(x.size(0), x);
  return shear_transforms(s.select(1, 0), s.select(1, 1));
}

TORCHFIT_REGISTER_LAYER(RandomShear);

}  // namespace torchfit
