#include <torchfit/layers/cut_mix.h>

#include <torchfit/layers/registry.h>

namespace torchfit {

CutMixImpl::CutMixImpl(CutMixOptions opts)
    : ImageAugmentation(keras_class_name, opts.name()), options(std::move(opts)) {
  set_declared_input_shape(options.input_shape());
  range_ = keras_base_factor_range(options.factor(), describe(), 0.0, 1.0);  // _FACTOR_BOUNDS (0, 1)
  if (range_.first < 0.0) {  // Keras takes it: α = U[lower, upper) + 1e-6 can then be negative, Beta(α, α) NaN
    throw ConfigError(describe() + ": factor must have lower >= 0 (Beta(alpha, alpha) needs alpha > 0), got " +
                      format_factor(options.factor()));
  }
}

CutMixDraws CutMixImpl::draw(const at::Tensor& images) const {
  const int64_t n = images.size(0);
  CutMixDraws d;  // Keras's order: alpha, the weights, the x start, the y start, the permutation
  d.alpha = at::rand({1}, at::TensorOptions().dtype(at::kDouble)).item<double>() * (range_.second - range_.first) +
            range_.first + 1e-6;
  d.lambdas = beta_draws(n, d.alpha, d.alpha, images);
  const at::Tensor ux = uniform_draws(n, 0.0, 1.0, images), uy = uniform_draws(n, 0.0, 1.0, images);
  d.starts = at::stack({ux, uy}, 1);
  d.permutation = permutation_draws(n, images);
  return d;
}

std::pair<at::Tensor, at::Tensor> CutMixImpl::boxes(const CutMixDraws& d, const at::Tensor& images) const {
  const int64_t h = images.size(2), w = images.size(3);
  const double hd = static_cast<double>(h), wd = static_cast<double>(w);
  const at::Tensor ratio = (1.0 - d.lambdas.to(images.options())).sqrt();
  const at::Tensor start = d.starts.to(images.options());
  const at::Tensor cw = ratio * wd, ch = ratio * hd;
  const at::Tensor x0 = start.select(1, 0) * (wd - cw), y0 = start.select(1, 1) * (hd - ch);
  const at::Tensor x1 = x0 + cw, y1 = y0 + ch;
  return {box_masks(x0, x1, y0, y1, h, w), 1.0 - (x1 - x0) * (y1 - y0) / (wd * hd)};
}

at::Tensor CutMixImpl::mix_images(const at::Tensor& images, const CutMixDraws& d) const {
  const at::Tensor masks = boxes(d, images).first;
  return at::where(masks, images.index_select(0, d.permutation.to(images.device())), images);
}

std::pair<at::Tensor, at::Tensor> CutMixImpl::mix(const at::Tensor& images, const at::Tensor& labels,
                                                  const CutMixDraws& d) const {
  check_mix_labels(labels, images.size(0), describe());
  const at::Tensor v = boxes(d, images).second.to(labels.options()).view({-1, 1});
  const at::Tensor mixed = v * labels + (1.0 - v) * labels.index_select(0, d.permutation.to(labels.device()));
  return {mix_images(images, d), mixed};
}

TORCHFIT_REGISTER_LAYER(CutMix);

}  // namespace torchfit
