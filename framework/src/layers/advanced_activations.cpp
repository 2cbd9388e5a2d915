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

TORCHFIT_REGISTER_LAYER(LeakyReLU);
TORCHFIT_REGISTER_LAYER(ELU);

}  // namespace torchfit
