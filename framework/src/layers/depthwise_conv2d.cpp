#include <torchfit/layers/depthwise_conv2d.h>

#include <torchfit/layers/registry.h>

#include "layers/init.h"
#include "layers/layer_export.h"

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

// Keras: depthwise_kernel (k_h, k_w, C, m) → (C·m, 1, k_h, k_w), bias (C·m).
void DepthwiseConv2DImpl::set_keras_weights_impl(const std::vector<at::Tensor>& weights, const KerasWeightOptions& o) {
  const std::string who = describe();
  detail::set_kernel_and_bias(who, kernel, bias, weights,
                              [&](const at::Tensor& k) { return detail::depthwise_kernel_from_keras(who, k, o); });
}

std::vector<at::Tensor> DepthwiseConv2DImpl::keras_weights_impl() const {
  return detail::kernel_and_bias_to_keras(detail::depthwise_kernel_to_keras(kernel, input_shape()[2]), bias);
}

std::string DepthwiseConv2DImpl::export_onnx(io::OnnxGraph& g, const std::vector<std::string>& in) const {
  const std::string y =
      detail::onnx_conv_node(*this, g, in[0], detail::onnx_conv_window(*this, input_shape()[2]), "DepthwiseConv");
  return g.add_activation(options.activation(), y, name());
}

TORCHFIT_REGISTER_LAYER(DepthwiseConv2D);

}  // namespace torchfit
