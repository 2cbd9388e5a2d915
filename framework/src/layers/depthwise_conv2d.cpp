#include <torchfit/layers/depthwise_conv2d.h>

#include <torchfit/layers/registry.h>

#include "layers/layer_export.h"

namespace torchfit {

DepthwiseConv2DImpl::DepthwiseConv2DImpl(DepthwiseConv2DOptions opts)
    : DepthwiseConvNDImpl(keras_class_name, std::move(opts)) {}

std::string DepthwiseConv2DImpl::export_onnx(io::OnnxGraph& g, const std::vector<std::string>& in) const {
  return detail::onnx_conv_layer(*this, g, in[0], input_shape()[2], "DepthwiseConv");
}

TORCHFIT_REGISTER_LAYER(DepthwiseConv2D);

}  // namespace torchfit
