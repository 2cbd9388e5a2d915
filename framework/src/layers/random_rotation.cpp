#include <torchfit/layers/random_rotation.h>

#include <cmath>

#include <torchfit/layers/registry.h>

namespace torchfit {

RandomRotationImpl::RandomRotationImpl(RandomRotationOptions opts)
    : AffineAugmentation(keras_class_name, opts.name()), options(std::move(opts)) {
  set_declared_input_shape(options.input_shape());
  range_ = keras_base_factor_range(options.factor(), describe(), -1.0, 1.0);  // _FACTOR_BOUNDS (-1, 1)
  check_sampling();
}

at::Tensor RandomRotationImpl::draw_angles(int64_t n, const at::Tensor& like) const {
  return uniform_draws(n, range_.first * 360.0, range_.second * 360.0, like);
}

at::Tensor RandomRotationImpl::rotation_transforms(const at::Tensor& angles, int64_t height, int64_t width) {
  const at::Tensor theta = angles * (M_PI / 180.0);
  const at::Tensor cos = at::cos(theta), sin = at::sin(theta);
  const double cx = 0.5 * static_cast<double>(width - 1), cy = 0.5 * static_cast<double>(height - 1);
  const at::Tensor zero = at::zeros_like(theta);
  return at::stack({cos, -sin, cx - cx * cos + cy * sin, sin, cos, cy - cx * sin - cy * cos, zero, zero}, 1);
}

at::Tensor RandomRotationImpl::random_transforms(const at::Tensor& x) {
  return rotation_transforms(draw_angles(x.size(0), x), x.size(2), x.size(3));
}

TORCHFIT_REGISTER_LAYER(RandomRotation);

}  // namespace torchfit
