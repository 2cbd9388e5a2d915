#include <torchfit/layers/average_pooling2d.h>

#include <torchfit/layers/registry.h>

#include "layers/layer_export.h"

namespace torchfit {

Shape AveragePooling2DImpl::build_impl(const Shape& in) {
  const Shape out = Pooling2DImpl::build_impl(in);
  const at::Tensor ones = at::ones({1, 1, in[0], in[1]});
  // Real pixels per window: pool a padded mask of ones (constant, depends on the shape only).
  if (padded(ones)) inv_count_ = at::avg_pool2d(pad(ones, 0), window(), strides()).reciprocal();
  return out;
}

at::Tensor AveragePooling2DImpl::forward(const at::Tensor& x) {
  if (!padded(x)) return at::avg_pool2d(x, window(), strides());
  at::Tensor inv_count = inv_count_;
  if (!inv_count.defined() || x.size(2) != input_shape()[0] || x.size(3) != input_shape()[1]) {
    // Another input size (a shared layer, an input of unknown size): its own count of real pixels.
    const at::Tensor ones = at::ones({1, 1, x.size(2), x.size(3)});
    inv_count = at::avg_pool2d(pad(ones, 0), window(), strides()).reciprocal();
  }
  // avg over the full window (padding counted as zeros) × window size / real pixels = mean of real pixels.
  return at::avg_pool2d(pad(x, 0), window(), strides()) * inv_count.to(x.device(), x.scalar_type());
}

std::string AveragePooling2DImpl::export_onnx(io::OnnxGraph& g, const std::vector<std::string>& in) const {
  return detail::onnx_pooling_node(*this, g, in[0], /*max=*/false);
}

TORCHFIT_REGISTER_LAYER(AveragePooling2D);

}  // namespace torchfit
