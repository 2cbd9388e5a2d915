#include <torchfit/layers/random_grayscale.h>

#include <sstream>

#include <torchfit/layers/registry.h>

namespace torchfit {

RandomGrayscaleImpl::RandomGrayscaleImpl(RandomGrayscaleOptions opts)
    : ImageAugmentation(keras_class_name, opts.name()), options(std::move(opts)) {
  set_declared_input_shape(options.input_shape());
  if (!(options.factor() >= 0.0 && options.factor() <= 1.0)) {
    std::ostringstream os;
    os << options.factor();
    throw ConfigError(describe() + ": factor must be in [0, 1], got " + os.str());
  }
}

Shape RandomGrayscaleImpl::build_impl(const Shape& in) {
  const Shape out = ImageAugmentation::build_impl(in);
  if (in[2] != 1 && in[2] != 3)
    throw ConfigError(describe() + " expects 1 or 3 channels (RGB or grayscale), got " + format_shape(in));
  return out;
}

at::Tensor RandomGrayscaleImpl::draw_applies(int64_t n, const at::Tensor& like) const {
  return uniform_draws(n, 0.0, 1.0, like) < options.factor();
}

at::Tensor RandomGrayscaleImpl::apply(const at::Tensor& x, const at::Tensor& applies) const {
  if (x.size(1) == 1) return x;
  const at::Tensor weights = at::tensor({0.2989, 0.5870, 0.1140}, x.options()).view({1, 3, 1, 1});
  const at::Tensor gray = (x * weights).sum(1, true).expand_as(x);
  return at::where(applies.to(x.device()).view({-1, 1, 1, 1}), gray, x);
}

TORCHFIT_REGISTER_LAYER(RandomGrayscale);

}  // namespace torchfit
