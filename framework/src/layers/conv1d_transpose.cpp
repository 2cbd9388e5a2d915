#include <torchfit/layers/conv1d_transpose.h>

#include <torchfit/layers/registry.h>

#include "layers/layer_export.h"

namespace torchfit {

Conv1DTransposeImpl::Conv1DTransposeImpl(Conv1DTransposeOptions opts)
    : ConvTransposeNDImpl(keras_class_name, std::move(opts)) {}

std::string Conv1DTransposeImpl::export_onnx(io::OnnxGraph& g, const std::vector<std::string>& in) const {
  return detail::onnx_conv_transpose_layer(*this, g, in[0]);
}

TORCHFIT_REGISTER_LAYER(Conv1DTranspose);

}  // namespace torchfit
