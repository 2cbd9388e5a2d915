#include <torchfit/layers/conv1d.h>

#include <torchfit/layers/registry.h>

#include "layers/layer_export.h"

namespace torchfit {

Conv1DImpl::Conv1DImpl(Conv1DOptions opts) : ConvNDImpl(keras_class_name, std::move(opts), /*causal=*/true) {}

std::string Conv1DImpl::export_onnx(io::OnnxGraph& g, const std::vector<std::string>& in) const {
  return detail::onnx_conv_layer(*this, g, in[0], 1, "Conv");
}

TORCHFIT_REGISTER_LAYER(Conv1D);

}  // namespace torchfit
