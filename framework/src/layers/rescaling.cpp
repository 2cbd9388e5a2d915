#include <torchfit/layers/rescaling.h>

#include <cmath>
#include <sstream>

#include <torchfit/layers/registry.h>

#include "layers/layer_export.h"

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

std::string RescalingImpl::export_onnx(io::OnnxGraph& g, const std::vector<std::string>& in) const {
  using detail::onnx_name;
  std::string y =
      g.add_node("Mul", {in[0], g.add_scalar(onnx_name(*this, "scale"), options.scale())}, {}, onnx_name(*this, "Mul"));
  if (options.offset() != 0.0) {
    y = g.add_node("Add", {y, g.add_scalar(onnx_name(*this, "offset"), options.offset())}, {}, onnx_name(*this, "Add"));
  }
  return y;
}

TORCHFIT_REGISTER_LAYER(Rescaling);

}  // namespace torchfit
