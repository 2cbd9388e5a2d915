#include <torchfit/layers/max_pooling2d.h>

#include <limits>

#include <torchfit/layers/registry.h>

#include "layers/layer_export.h"
#include "layers/max_pool_train.h"

namespace torchfit {

at::Tensor MaxPooling2DImpl::forward(const at::Tensor& x) {
  if (!padded(x)) return detail::max_pool2d_train(x, window(), strides());
  return at::max_pool2d(pad(x, -std::numeric_limits<float>::infinity()), window(), strides());
}

at::Tensor MaxPooling2DImpl::forward_then_relu(const at::Tensor& x) {
  if (!padded(x)) return detail::max_pool2d_train(x, window(), strides(), /*relu=*/true);
  return forward(x).relu_();
}

std::string MaxPooling2DImpl::export_onnx(io::OnnxGraph& g, const std::vector<std::string>& in) const {
  return detail::onnx_pooling_node(*this, g, in[0], /*max=*/true);
}

TORCHFIT_REGISTER_LAYER(MaxPooling2D);

}  // namespace torchfit
