#include <torchfit/layers/max_pooling2d.h>

#include <torchfit/layers/registry.h>

#include "layers/max_pool_train.h"

namespace torchfit {

at::Tensor MaxPooling2DImpl::forward(const at::Tensor& x) {
  if (!padded(x)) return detail::max_pool2d_train(x, window(), strides());
  return PoolingLayer::forward(x);
}

at::Tensor MaxPooling2DImpl::forward_then_relu(const at::Tensor& x) {
  if (!padded(x)) return detail::max_pool2d_train(x, window(), strides(), /*relu=*/true);
  return forward(x).relu_();
}

TORCHFIT_REGISTER_LAYER(MaxPooling2D);

}  // namespace torchfit
