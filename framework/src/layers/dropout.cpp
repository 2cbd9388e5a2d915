#include <torchfit/layers/dropout.h>

#include <torchfit/layers/registry.h>

#include <sstream>

#include "layers/layer_export.h"

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

// The identity at inference: the input's name.
std::string DropoutImpl::export_onnx(io::OnnxGraph&, const std::vector<std::string>& in) const { return in[0]; }

TORCHFIT_REGISTER_LAYER(Dropout);

}  // namespace torchfit
