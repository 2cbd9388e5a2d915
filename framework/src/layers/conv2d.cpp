#include <torchfit/layers/conv2d.h>

#include <torchfit/layers/registry.h>

#include "layers/layer_export.h"

namespace torchfit {

Conv2DImpl::Conv2DImpl(Conv2DOptions opts) : ConvNDImpl(keras_class_name, std::move(opts)) {}

std::string Conv2DImpl::export_onnx(io::OnnxGraph& g, const std::vector<std::string>& in) const {
  return detail::onnx_conv_layer(*this, g, in[0], 1, "Conv");
}

TORCHFIT_REGISTER_LAYER(Conv2D);

}  // namespace torchfit
