#include <torchfit/layers/dropout.h>

#include <torchfit/layers/registry.h>

#include <sstream>

namespace torchfit {

DropoutImpl::DropoutImpl(DropoutOptions opts) : Layer(keras_class_name, opts.name()), options(std::move(opts)) {
  set_declared_input_shape(options.input_shape());
  if (!(options.rate() >= 0.0 && options.rate() < 1.0)) {
    std::ostringstream os;
    os << describe() << ": rate must be in [0, 1), got " << options.rate();
    throw ConfigError(os.str());
  }
}

Shape DropoutImpl::build_impl(const Shape& in) { return in; }

at::Tensor DropoutImpl::forward(const at::Tensor& x) {
  if (!is_training() || options.rate() == 0.0) return x;
  return at::dropout(x, options.rate(), /*train=*/true);
}

nlohmann::json DropoutImpl::config() const { return base_config(options); }

TORCHFIT_REGISTER_LAYER(Dropout);

}  // namespace torchfit
