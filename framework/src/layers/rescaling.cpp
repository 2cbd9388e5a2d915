#include <torchfit/layers/rescaling.h>

#include <cmath>
#include <sstream>

#include <torchfit/layers/registry.h>

namespace torchfit {

RescalingImpl::RescalingImpl(RescalingOptions opts) : Layer(keras_class_name, opts.name()), options(std::move(opts)) {
  set_declared_input_shape(options.input_shape());
  if (!std::isfinite(options.scale()) || !std::isfinite(options.offset())) {
    std::ostringstream os;
    os << describe() << ": scale and offset must be finite, got " << options.scale() << " and " << options.offset();
    throw ConfigError(os.str());
  }
}

at::Tensor RescalingImpl::forward(const at::Tensor& x) {
  return options.offset() == 0.0 ? x * options.scale() : x * options.scale() + options.offset();
}

TORCHFIT_REGISTER_LAYER(Rescaling);

}  // namespace torchfit
