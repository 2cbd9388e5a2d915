#pragma once
/// @file separable_conv2d.h
/// SeparableConv2D — depthwise then pointwise 2-D convolution as keras.layers.SeparableConv2D.
#include <torch/nn/pimpl.h>

#include <torchfit/layers/base_conv.h>

namespace torchfit {

/// Options of SeparableConv2D. Required: filters, kernel_size; `depth_multiplier` (1) and the window
/// arguments with their Keras defaults are SeparableConvOptions's (base_conv.h); they apply to the
/// depthwise step, the pointwise step is 1×1 with stride 1.
struct SeparableConv2DOptions : SeparableConvOptions<SeparableConv2DOptions, 2> {
  using SeparableConvOptions::SeparableConvOptions;
};

/// Separable convolution (TensorFlow's separable_conv2d): input (N, C, H, W) [Keras (H, W, C)], output
/// (N, filters, H', W') [Keras (H', W', filters)]; the depthwise step as DepthwiseConv2D, then 1×1.
/// Parameters: `depthwise_kernel` (C·m, 1, k_h, k_w) [Keras (k_h, k_w, C, m)], `pointwise_kernel`
/// (filters, C·m, 1, 1) [Keras (1, 1, C·m, filters)], `bias` (filters): k_h·k_w·C·m + C·m·filters + filters.
/// Errors: SeparableConvNDImpl's.
class SeparableConv2DImpl : public SeparableConvNDImpl<SeparableConv2DOptions, 2> {
  TORCHFIT_LAYER_CLASS(SeparableConv2D);

 public:
  /// ONNX: Conv (group = C, no bias) → Conv 1×1 (+ activation) (its source file writes it).
  std::string export_onnx(io::OnnxGraph& graph, const std::vector<std::string>& inputs) const override;
  explicit SeparableConv2DImpl(SeparableConv2DOptions options);
};
TORCH_MODULE(SeparableConv2D);

}  // namespace torchfit
