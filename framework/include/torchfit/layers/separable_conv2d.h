#pragma once
/// @file separable_conv2d.h
/// SeparableConv2D — depthwise then pointwise 2-D convolution as keras.layers.SeparableConv2D.
#include <torch/nn/pimpl.h>

#include <torchfit/layers/base_conv.h>

namespace torchfit {

/// Options of SeparableConv2D. Required: filters, kernel_size; the window arguments (strides, padding,
/// dilation_rate, activation, use_bias) and their Keras defaults are ConvOptions's (base_conv.h); they
/// apply to the depthwise step, the pointwise step is 1×1 with stride 1.
struct SeparableConv2DOptions : ConvOptions<SeparableConv2DOptions> {
  SeparableConv2DOptions(int64_t filters, torch::ExpandingArray<2> kernel_size)
      : ConvOptions(kernel_size), filters_(filters) {}
  /// For the registry only (layer_args.h): leaves filters and kernel_size unset, to be read from a config.
  explicit SeparableConv2DOptions(FromConfig) : SeparableConv2DOptions(0, 0) {}
  /// Number of output channels (> 0).
  TORCH_ARG(int64_t, filters);
  /// Depthwise output channels per input channel (> 0). Default 1.
  TORCH_ARG(int64_t, depth_multiplier) = 1;

 public:
  /// The Keras arguments, each listed once (layer_args.h): config() writes them, the registry reads them.
  template <typename Args>
  void args(Args& a) {
    a.required("filters", filters());
    a("depth_multiplier", depth_multiplier());
    window_args(a);
  }
};

/// Separable convolution (TensorFlow's separable_conv2d): a depthwise convolution (each input channel c
/// with its own m = depth_multiplier kernels, output channel c·m + j, with the layer's strides, dilation
/// and padding — H', W' as BaseConv2DImpl) followed by a 1×1 convolution to `filters` channels, then
/// the bias and the activation. Input (N, C, H, W) [Keras (H, W, C)], output (N, filters, H', W')
/// [Keras (H', W', filters)]. Parameters (Keras's names, registered in this order):
/// `depthwise_kernel` (C·m, 1, k_h, k_w) [Keras (k_h, k_w, C, m), as DepthwiseConv2D],
/// `pointwise_kernel` (filters, C·m, 1, 1) [Keras (1, 1, C·m, filters): torchfit = keras.permute(3, 2, 0, 1)],
/// both glorot_uniform with Keras's fans; `bias` (filters), zeros. k_h·k_w·C·m + C·m·filters + filters
/// parameters. Errors: ConfigError for filters or depth_multiplier ≤ 0, and BaseConv2DImpl's.
class SeparableConv2DImpl : public BaseConv2DImpl<SeparableConv2DOptions> {
  TORCHFIT_LAYER_CLASS(SeparableConv2D);

 public:
  /// ONNX: Conv (group = C, no bias) → Conv 1×1 (+ activation) (its source file writes it).
  std::string export_onnx(io::OnnxGraph& graph, const std::vector<std::string>& inputs) const override;
  explicit SeparableConv2DImpl(SeparableConv2DOptions options);
  at::Tensor forward_without_activation(const at::Tensor& x) override;
  /// The depthwise step's 2·k_h·k_w·C·m·H'·W' plus the pointwise step's 2·C·m·filters·H'·W'.
  int64_t flops_per_sample() const override;
  /// Keras's name for `kernel` in this layer (the parameter's name too): (C·m, 1, k_h, k_w).
  at::Tensor& depthwise_kernel = kernel;
  /// (filters, C·m, 1, 1); undefined before build.
  at::Tensor pointwise_kernel;

 protected:
  /// Keras weights: depthwise_kernel (k_h, k_w, C, m), pointwise_kernel (1, 1, C·m, F), bias (F).
  void set_keras_weights_impl(const std::vector<at::Tensor>& weights, const KerasWeightOptions& options) override;
  std::vector<at::Tensor> keras_weights_impl() const override;
  Weights make_weights(int64_t in_channels) override;
};
TORCH_MODULE(SeparableConv2D);

}  // namespace torchfit
