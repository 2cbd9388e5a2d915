#include <torchfit/layers/separable_conv2d.h>

#include <torchfit/layers/registry.h>

#include "layers/init.h"

namespace torchfit {

SeparableConv2DImpl::SeparableConv2DImpl(SeparableConv2DOptions opts)
    : BaseConv2DImpl(keras_class_name, std::move(opts)) {
  if (options.filters() <= 0) {
    throw ConfigError(describe() + ": filters must be > 0, got " + std::to_string(options.filters()));
  }
  if (options.depth_multiplier() <= 0) {
    throw ConfigError(describe() + ": depth_multiplier must be > 0, got " + std::to_string(options.depth_multiplier()));
  }
}

SeparableConv2DImpl::Weights SeparableConv2DImpl::make_weights(int64_t c) {
  const auto k = *options.kernel_size();
  const int64_t m = options.depth_multiplier(), f = options.filters();
  Weights w;
  w.groups = c;
  w.contiguous_on_cpu = m > 1;  // the LibTorch 2.6 channels_last grouped-convolution defect (DepthwiseConv2D)
  // Keras's fans: depthwise (k_h, k_w, C, m) → k_h·k_w·C, k_h·k_w·m; pointwise (1, 1, C·m, f) → C·m, f.
  w.kernel = register_parameter("depthwise_kernel",
                                detail::glorot_uniform({c * m, 1, k[0], k[1]}, k[0] * k[1] * c, k[0] * k[1] * m));
  pointwise_kernel = register_parameter("pointwise_kernel", detail::glorot_uniform({f, c * m, 1, 1}, c * m, f));
  if (options.use_bias()) w.bias = register_parameter("bias", at::zeros({f}));
  w.filters = f;
  return w;
}

at::Tensor SeparableConv2DImpl::forward_without_activation(const at::Tensor& x) {
  return at::conv2d(window_conv(x, {}), pointwise_kernel, bias);
}

int64_t SeparableConv2DImpl::flops_per_sample() const {
  if (!built()) return 0;
  const auto k = *options.kernel_size();
  const int64_t cm = input_shape()[2] * options.depth_multiplier();
  const auto& o = output_shape();
  return 2 * o[0] * o[1] * cm * (k[0] * k[1] + options.filters());
}

TORCHFIT_REGISTER_LAYER(SeparableConv2D);

}  // namespace torchfit
