#include <torchfit/layers/depthwise_conv1d.h>

#include <torchfit/layers/registry.h>

#include "layers/layer_export.h"

namespace torchfit {

DepthwiseConv1DImpl::DepthwiseConv1DImpl(DepthwiseConv1DOptions opts)
    : DepthwiseConvNDImpl(keras_class_name, std::move(opts)) {}

std::string DepthwiseConv1DImpl::export_onnx(io::OnnxGraph& g, const std::vector<std::string>& in) const {
  return detail::onnx_conv_layer(*this, g, in[0], input_shape()[1], "DepthwiseConv");
}

TORCHFIT_REGISTER_LAYER(DepthwiseConv1D);

}  // namespace torchfit
