#include <torchfit/layers/noise.h>

#include <cmath>
#include <sstream>

#include <torchfit/layers/registry.h>

#include "layers/layer_export.h"

namespace torchfit {
namespace {

// SELU's constants (Keras's AlphaDropout and activations.selu).
constexpr double kSeluAlpha = 1.6732632423543772848170429916717;
constexpr double kSeluScale = 1.0507009873554804934193349852946;

std::string number(double v) {
  std::ostringstream os;
  os << v;
  return os.str();
}

// Whole-channel dropout: a keep mask of `mask_shape` (broadcast over the rest), kept values / (1 − rate).
at::Tensor channel_dropout(const at::Tensor& x, double rate, at::IntArrayRef mask_shape) {
  const at::Tensor keep = at::empty(mask_shape, x.options()).bernoulli_(1.0 - rate);
  return x * keep / (1.0 - rate);
}

}  // namespace

GaussianNoiseImpl::GaussianNoiseImpl(GaussianNoiseOptions opts)
    : Layer(keras_class_name, opts.name()), options(std::move(opts)) {
  set_declared_input_shape(options.input_shape());
  if (!(options.stddev() >= 0.0 && std::isfinite(options.stddev())))
    throw ConfigError(describe() + ": stddev must be a finite number >= 0, got " + number(options.stddev()));
}

at::Tensor GaussianNoiseImpl::forward(const at::Tensor& x) {
  if (!is_training() || options.stddev() == 0.0) return x;
  return x + at::randn_like(x) * options.stddev();
}

std::string GaussianNoiseImpl::export_onnx(io::OnnxGraph&, const std::vector<std::string>& in) const { return in[0]; }

NoiseDropout::NoiseDropout(const char* class_name, NoiseDropoutOptions opts)
    : Layer(class_name, opts.name()), options(std::move(opts)) {
  set_declared_input_shape(options.input_shape());
  if (!(options.rate() >= 0.0 && options.rate() < 1.0))
    throw ConfigError(describe() + ": rate must be in [0, 1), got " + number(options.rate()));
}

std::string NoiseDropout::export_onnx(io::OnnxGraph&, const std::vector<std::string>& in) const { return in[0]; }

at::Tensor GaussianDropoutImpl::forward(const at::Tensor& x) {
  if (!active()) return x;
  const double stddev = std::sqrt(options.rate() / (1.0 - options.rate()));
  return x * (at::randn_like(x) * stddev + 1.0);
}

at::Tensor AlphaDropoutImpl::forward(const at::Tensor& x) {
  if (!active()) return x;
  const double rate = options.rate(), alpha_p = -kSeluAlpha * kSeluScale;
  const at::Tensor kept = at::empty_like(x).bernoulli_(1.0 - rate);  // Keras: uniform >= rate
  const double a = std::pow((1.0 - rate) * (1.0 + rate * alpha_p * alpha_p), -0.5);
  const double b = -a * alpha_p * rate;
  return (x * kept + alpha_p * (1.0 - kept)) * a + b;
}

Shape SpatialDropout1DImpl::build_impl(const Shape& in) {
  if (in.size() != 2) {
    throw ConfigError(describe() + " expects a sequence (steps, channels), got " + format_shape(in));
  }
  return in;
}

at::Tensor SpatialDropout1DImpl::forward(const at::Tensor& x) {
  if (!active()) return x;
  return channel_dropout(x, options.rate(), {x.size(0), 1, x.size(2)});  // (N, steps, C): noise (N, 1, C)
}

Shape SpatialDropout2DImpl::build_impl(const Shape& in) {
  if (in.size() != 3) throw ConfigError(describe() + " expects an image (H, W, C), got " + format_shape(in));
  return in;
}

at::Tensor SpatialDropout2DImpl::forward(const at::Tensor& x) {
  if (!active()) return x;
  return channel_dropout(x, options.rate(), {x.size(0), x.size(1), 1, 1});  // (N, C, H, W): one draw per map
}

Shape SpatialDropout3DImpl::build_impl(const Shape& in) {
  if (in.size() != 4) throw ConfigError(describe() + " expects a volume (D, H, W, C), got " + format_shape(in));
  return in;
}

at::Tensor SpatialDropout3DImpl::forward(const at::Tensor& x) {
  if (!active()) return x;
  return channel_dropout(x, options.rate(), {x.size(0), 1, 1, 1, x.size(4)});  // (N, D, H, W, C): one per channel
}

TORCHFIT_REGISTER_LAYER(GaussianNoise);
TORCHFIT_REGISTER_LAYER(GaussianDropout);
TORCHFIT_REGISTER_LAYER(AlphaDropout);
TORCHFIT_REGISTER_LAYER(SpatialDropout1D);
TORCHFIT_REGISTER_LAYER(SpatialDropout2D);
TORCHFIT_REGISTER_LAYER(SpatialDropout3D);

}  // namespace torchfit
