#pragma once
/// @file conv2d.h
/// Conv2D — 2-D convolution as keras.layers.Conv2D (channels_last at the API, NCHW tensors inside).
#include <torch/nn/pimpl.h>

#include <torchfit/layers/base_conv.h>

namespace torchfit {

/// Options of Conv2D. Required: filters, kernel_size; the window arguments (strides, padding,
/// dilation_rate, activation, use_bias) and their Keras defaults are ConvOptions's (base_conv.h).
struct Conv2DOptions : ConvFiltersOptions<Conv2DOptions, 2> {
  using ConvFiltersOptions::ConvFiltersOptions;
};

/// 2-D convolution: input (N, C_in, H, W) [Keras (H, W, C_in)], output (N, filters, H', W') [Keras
/// (H', W', filters)]; shapes, "same" padding, forward and window errors as BaseConvImpl. Parameters:
/// `kernel` (filters, C_in, k_h, k_w) [Keras (k_h, k_w, C_in, filters)], k_h·k_w·C_in·filters values,
/// glorot_uniform; `bias` (filters), zeros (Keras defaults). Errors: ConfigError for filters ≤ 0, and
/// BaseConvImpl's.
class Conv2DImpl : public ConvNDImpl<Conv2DOptions, 2> {
  TORCHFIT_LAYER_CLASS(Conv2D);

 public:
  /// ONNX: Conv (+ activation) (its source file writes it).
  std::string export_onnx(io::OnnxGraph& graph, const std::vector<std::string>& inputs) const override;
  explicit Conv2DImpl(Conv2DOptions options);
};
TORCH_MODULE(Conv2D);

}  // namespace torchfit
