#include <torchfit/layers/depthwise_conv2d.h>

#include <torchfit/layers/activation_fn.h>
#include <torchfit/layers/registry.h>

#include "layers/init.h"

namespace torchfit {

DepthwiseConv2DImpl::DepthwiseConv2DImpl(DepthwiseConv2DOptions opts)
    : Layer("DepthwiseConv2D", opts.name()), options(std::move(opts)) {
  set_declared_input_shape(options.input_shape());
  if (options.depth_multiplier() <= 0) {
    throw ConfigError(describe() + ": depth_multiplier must be > 0, got " + std::to_string(options.depth_multiplier()));
  }
  detail::check_window_options(describe(), *options.kernel_size(), *options.strides(), *options.dilation_rate(),
                               options.padding());
  check_activation(options.activation(), describe());
}

Shape DepthwiseConv2DImpl::build_impl(const Shape& in) {
  const auto k = *options.kernel_size();
  const auto hw = detail::window_output_2d(describe(), "kernel", in, k, *options.strides(), *options.dilation_rate(),
                                           options.padding(), pad_);
  const int64_t c = in[2], m = options.depth_multiplier();
  const Shape out = {hw[0], hw[1], c * m};
  groups_ = c;
  // Keras fans for a (k_h, k_w, C, m) kernel: fan_in = k_h·k_w·C, fan_out = k_h·k_w·m.
  depthwise_kernel = register_parameter(
      "depthwise_kernel", detail::glorot_uniform({c * m, 1, k[0], k[1]}, k[0] * k[1] * c, k[0] * k[1] * m));
  if (options.use_bias()) bias = register_parameter("bias", at::zeros({c * m}));
  return out;
}

at::Tensor DepthwiseConv2DImpl::forward_without_activation(const at::Tensor& x) {
  // LibTorch 2.6's CPU convolution (Debian 13, oneDNN 3.7) gets a channels_last grouped convolution with
  // more than one output channel per group wrong on an AMD Zen 5 (errors of 0.3-4 on inputs in 0..1;
  // the contiguous path is exact; test DepthwiseConv2D.EachChannelHasItsOwnKernelsInTensorFlowOrder).
  // With a depth multiplier above 1 the CPU convolution runs on contiguous copies; the output keeps the
  // input's layout.
  if (options.depth_multiplier() > 1 && x.is_cpu() && !x.is_contiguous() &&
      x.is_contiguous(at::MemoryFormat::ChannelsLast)) {
    return detail::conv2d_padded(x.contiguous(), depthwise_kernel.contiguous(), bias, *options.strides(),
                                 *options.dilation_rate(), pad_, groups_)
        .contiguous(at::MemoryFormat::ChannelsLast);
  }
  return detail::conv2d_padded(x, depthwise_kernel, bias, *options.strides(), *options.dilation_rate(), pad_, groups_);
}

at::Tensor DepthwiseConv2DImpl::forward(const at::Tensor& x) {
  return apply_activation(options.activation(), forward_without_activation(x), /*inplace=*/true);
}

nlohmann::json DepthwiseConv2DImpl::config() const { return base_config(options); }

int64_t DepthwiseConv2DImpl::flops_per_sample() const {
  if (!built()) return 0;
  const auto k = *options.kernel_size();
  const auto& o = output_shape();
  return 2 * k[0] * k[1] * o[0] * o[1] * o[2];
}

TORCHFIT_REGISTER_LAYER(DepthwiseConv2D);

}  // namespace torchfit
