#include <torchfit/layers/max_pooling2d.h>

#include <limits>

#include <torchfit/layers/registry.h>

namespace torchfit {

at::Tensor MaxPooling2DImpl::forward(const at::Tensor& x) {
  if (!padded()) return at::max_pool2d(x, window(), strides());
  return at::max_pool2d(pad(x, -std::numeric_limits<float>::infinity()), window(), strides());
}

TORCHFIT_REGISTER_LAYER(MaxPooling2D);

}  // namespace torchfit
