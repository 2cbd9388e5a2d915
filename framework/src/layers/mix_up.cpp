#include <torchfit/layers/mix_up.h>

#include <cmath>
#include <sstream>

#include <torchfit/layers/registry.h>

namespace torchfit {

MixUpImpl::MixUpImpl(MixUpOptions opts) : ImageAugmentation(keras_class_name, opts.name()), options(std::move(opts)) {
  set_declared_input_shape(options.input_shape());
  if (!(std::isfinite(options.alpha()) && options.alpha() > 0.0)) {
    std::ostringstream os;
    os << options.alpha();
    throw ConfigError(describe() + ": alpha must be a number > 0, got " + os.str());
  }
}

MixUpDraws MixUpImpl::draw(const at::Tensor& images) const {
  const int64_t n = images.size(0);
  MixUpDraws d;  // Keras's order: the permutation, then the weights
  d.permutation = permutation_draws(n, images);
  d.weights = beta_draws(n, options.alpha(), options.alpha(), images);
  return d;
}

at::Tensor MixUpImpl::mix_images(const at::Tensor& images, const MixUpDraws& d) const {
  const at::Tensor w = d.weights.to(images.options()).view({-1, 1, 1, 1});
  return w * images + (1.0 - w) * images.index_select(0, d.permutation.to(images.device()));
}

std::pair<at::Tensor, at::Tensor> MixUpImpl::mix(const at::Tensor& images, const at::Tensor& labels,
                                                 const MixUpDraws& d) const {
  check_mix_labels(labels, images.size(0), describe());
  const at::Tensor w = d.weights.to(labels.options()).view({-1, 1});
  const at::Tensor mixed = w * labels + (1.0 - w) * labels.index_select(0, d.permutation.to(labels.device()));
  return {mix_images(images, d), mixed};
}

TORCHFIT_REGISTER_LAYER(MixUp);

}  // namespace torchfit
