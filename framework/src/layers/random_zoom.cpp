#include <torchfit/layers/random_zoom.h>

#include <torchfit/layers/registry.h>

namespace torchfit {

RandomZoomImpl::RandomZoomImpl(RandomZoomOptions opts)
    : AffineAugmentation(keras_class_name, opts.name()), options(std::move(opts)) {
  set_declared_input_shape(options.input_shape());
  check_keras_factor(options.height_factor(), describe(), "height_factor", -1.0, 1.0, true);
  height_range_ = keras_factor_range(options.height_factor());
  if (options.width_factor()) {
    check_keras_factor(*options.width_factor(), describe(), "width_factor", -1.0, 1.0, true);
    width_range_ = keras_factor_range(*options.width_factor());
  }
  check_sampling();
}

at::Tensor RandomZoomImpl::draw_zooms(int64_t n, const at::Tensor& like) const {
  const at::Tensor zy = uniform_draws(n, 1.0 + height_range_.first, 1.0 + height_range_.second, like);
  if (!options.width_factor()) return at::stack({zy, zy}, 1);
  const at::Tensor zx = uniform_draws(n, 1.0 + width_range_.first, 1.0 + width_range_.second, like);
  return at::stack({zy, zx}, 1);
}

at::Tensor RandomZoomImpl::zoom_transforms(const at::Tensor& zy, const at::Tensor& zx, int64_t height, int64_t width) {
  const at::Tensor zero = at::zeros_like(zx);
  const double half_w = (static_cast<double>(width) - 1.0) / 2.0, half_h = (static_cast<double>(height) - 1.0) / 2.0;
  return at::stack({zx, zero, half_w * (1.0 - zx), zero, zy, half_h * (1.0 - zy), zero, zero}, 1);
}

at::Tensor RandomZoomImpl::random_transforms(const at::Tensor& x) {
  const at::Tensor zooms = draw_zooms(x.size(0), x);
  return zoom_transforms(zooms.select(1, 0), zooms.select(1, 1), x.size(2), x.size(3));
}

TORCHFIT_REGISTER_LAYER(RandomZoom);

}  // namespace torchfit
