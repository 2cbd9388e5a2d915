#include <torchfit/layers/advanced_activations.h>

#include <torchfit/layers/registry.h>

#include <sstream>

namespace torchfit {
namespace {
void check_alpha(double alpha, const std::string& who) {
  if (!(alpha >= 0.0)) {
    std::ostringstream os;
    os << who << ": alpha must be >= 0, got " << alpha;
    throw ConfigError(os.str());
  }
}
}  // namespace

LeakyReLUImpl::LeakyReLUImpl(LeakyReLUOptions opts) : Layer(keras_class_name, opts.name()), options(std::move(opts)) {
  set_declared_input_shape(options.input_shape());
  check_alpha(options.alpha(), describe());
}

at::Tensor LeakyReLUImpl::forward(const at::Tensor& x) { return at::leaky_relu(x, options.alpha()); }

nlohmann::json LeakyReLUImpl::config() const { return base_config(options); }

ELUImpl::ELUImpl(ELUOptions opts) : Layer(keras_class_name, opts.name()), options(std::move(opts)) {
  set_declared_input_shape(options.input_shape());
  check_alpha(options.alpha(), describe());
}

at::Tensor ELUImpl::forward(const at::Tensor& x) { return at::elu(x, options.alpha()); }

nlohmann::json ELUImpl::config() const { return base_config(options); }

ReLUImpl::ReLUImpl(ReLUOptions opts) : Layer(keras_class_name, opts.name()), options(std::move(opts)) {
  set_declared_input_shape(options.input_shape());
  auto check = [&](double v, const char* what) {
    if (!(v >= 0.0)) {
      std::ostringstream os;
      os << describe() << ": " << what << " must be >= 0, got " << v;
      throw ConfigError(os.str());
    }
  };
  if (options.max_value()) check(*options.max_value(), "max_value");
  check(options.negative_slope(), "negative_slope");
  check(options.threshold(), "threshold");
}

// keras.backend.relu, step by step.
at::Tensor ReLUImpl::forward(const at::Tensor& x) {
  const double slope = options.negative_slope(), threshold = options.threshold();
  const auto& max_value = options.max_value();
  if (slope != 0.0 && !max_value && threshold == 0.0) return at::leaky_relu(x, slope);
  at::Tensor y = threshold != 0.0 ? x * at::gt(x, threshold).to(x.scalar_type()) : at::relu(x);
  if (max_value) y = at::clamp(y, 0.0, *max_value);
  if (slope != 0.0) y = y - slope * at::relu(threshold - x);
  return y;
}

nlohmann::json ReLUImpl::config() const { return base_config(options); }

SoftmaxImpl::SoftmaxImpl(SoftmaxOptions opts) : Layer(keras_class_name, opts.name()), options(std::move(opts)) {
  set_declared_input_shape(options.input_shape());
}

Shape SoftmaxImpl::build_impl(const Shape& in) {
  tensor_axes_.clear();
  for (const int64_t k : resolve_keras_axes(options.axis(), in, describe())) {
    tensor_axes_.push_back(keras_to_tensor_axis(in, k));
  }
  return in;
}

at::Tensor SoftmaxImpl::forward(const at::Tensor& x) {
  if (tensor_axes_.size() == 1) return at::softmax(x, tensor_axes_[0]);
  return at::exp(x - at::logsumexp(x, tensor_axes_, /*keepdim=*/true));
}

nlohmann::json SoftmaxImpl::config() const { return base_config(options); }

TORCHFIT_REGISTER_LAYER(LeakyReLU);
TORCHFIT_REGISTER_LAYER(ReLU);
TORCHFIT_REGISTER_LAYER(Softmax);
TORCHFIT_REGISTER_LAYER(ELU);

}  // namespace torchfit
