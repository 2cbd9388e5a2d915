#include <torchfit/layers/separable_conv2d.h>

#include <torchfit/layers/registry.h>

#include "layers/init.h"
#include "layers/layer_export.h"

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

// Keras: depthwise_kernel (k_h, k_w, C, m) as DepthwiseConv2D's, pointwise_kernel (1, 1, C·m, F) →
// (F, C·m, 1, 1), bias (F).
void SeparableConv2DImpl::set_keras_weights_impl(const std::vector<at::Tensor>& weights, const KerasWeightOptions& o) {
  const std::string who = describe();
  detail::expect_keras_weight_count(who, weights, bias.defined() ? 3 : 2);
  detail::expect_keras_weight_dims(who, weights[1], 4, "pointwise kernel");
  detail::assign_keras_weight(who, depthwise_kernel, detail::depthwise_kernel_from_keras(who, weights[0], o),
                              "depthwise_kernel");
  detail::assign_keras_weight(who, pointwise_kernel, weights[1].permute({3, 2, 0, 1}), "pointwise_kernel");
  if (bias.defined()) detail::assign_keras_weight(who, bias, weights[2], "bias");
}

std::vector<at::Tensor> SeparableConv2DImpl::keras_weights_impl() const {
  std::vector<at::Tensor> out{detail::depthwise_kernel_to_keras(depthwise_kernel, input_shape()[2]),
                              detail::keras_weight_copy(pointwise_kernel.permute({2, 3, 1, 0}))};
  if (bias.defined()) out.push_back(detail::keras_weight_copy(bias));
  return out;
}

std::string SeparableConv2DImpl::export_onnx(io::OnnxGraph& g, const std::vector<std::string>& in) const {
  detail::OnnxConv depthwise = detail::onnx_conv_window(*this, input_shape()[2]);
  depthwise.bias = at::Tensor();
  const std::string d = detail::onnx_conv_node(*this, g, in[0], depthwise, "DepthwiseConv");
  const detail::OnnxConv pointwise{pointwise_kernel, bias, {1, 1}, {1, 1}, {0, 0, 0, 0}, 1};
  return g.add_activation(options.activation(), detail::onnx_conv_node(*this, g, d, pointwise, "PointwiseConv"),
                          name());
}

TORCHFIT_REGISTER_LAYER(SeparableConv2D);

}  // namespace torchfit
