#include <torchfit/layers/depthwise_conv2d.h>

#include <torchfit/layers/registry.h>

#include "layers/init.h"

namespace torchfit {

DepthwiseConv2DImpl::DepthwiseConv2DImpl(DepthwiseConv2DOptions opts)
    : BaseConv2DImpl(keras_class_name, std::move(opts)) {
  if (options.depth_multiplier() <= 0) {
    throw ConfigError(describe() + ": depth_multiplier must be > 0, got " + std::to_string(options.depth_multiplier()));
  }
}

DepthwiseConv2DImpl::Weights DepthwiseConv2DImpl::make_weights(int64_t c) {
  const auto k = *options.kernel_size();
  const int64_t m = options.depth_multiplier();
  Weights w;
  w.groups = c;
  // LibTorch 2.6's CPU convolution (Debian 13, oneDNN 3.7) gets a channels_last grouped convolution with
  // more than one output channel per group wrong on an AMD Zen 5 (errors of 0.3-4 on inputs in 0..1;
  // the contiguous path is exact; test DepthwiseConv2D.EachChannelHasItsOwnKernelsInTensorFlowOrder).
  w.contiguous_on_cpu = m > 1;
  // Keras fans for a (k_h, k_w, C, m) kernel: fan_in = k_h·k_w·C, fan_out = k_h·k_w·m.
  w.kernel = register_parameter("depthwise_kernel",
                                detail::glorot_uniform({c * m, 1, k[0], k[1]}, k[0] * k[1] * c, k[0] * k[1] * m));
  if (options.use_bias()) w.bias = register_parameter("bias", at::zeros({c * m}));
  return w;
}

TORCHFIT_REGISTER_LAYER(DepthwiseConv2D);

}  // namespace torchfit
