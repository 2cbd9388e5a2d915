#include <torchfit/layers/separable_conv2d.h>

#include <torchfit/layers/registry.h>

#include "layers/layer_export.h"

namespace torchfit {

SeparableConv2DImpl::SeparableConv2DImpl(SeparableConv2DOptions opts)
    : SeparableConvNDImpl(keras_class_name, std::move(opts)) {}

std::string SeparableConv2DImpl::export_onnx(io::OnnxGraph& g, const std::vector<std::string>& in) const {
  return detail::onnx_separable_layer(*this, g, in[0]);
}

TORCHFIT_REGISTER_LAYER(SeparableConv2D);

}  // namespace torchfit
