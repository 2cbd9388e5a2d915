#pragma once
/// @file separable_conv1d.h
/// SeparableConv1D — depthwise then pointwise 1-D convolution over the steps of a sequence, as
/// keras.layers.SeparableConv1D (channels_last).
#include <torch/nn/pimpl.h>

#include <torchfit/layers/base_conv.h>

namespace torchfit {

/// Options of SeparableConv1D. Required: filters, kernel_size (steps); `depth_multiplier` (1) and the
/// window arguments (strides, padding valid/same, dilation_rate, activation, use_bias) with their Keras
/// defaults are SeparableConvOptions's (base_conv.h); they apply to the depthwise step.
struct SeparableConv1DOptions : SeparableConvOptions<SeparableConv1DOptions, 1> {
  using SeparableConvOptions::SeparableConvOptions;
};

/// Separable convolution of a sequence (Keras 3's ops.separable_conv: TensorFlow's separable_conv2d over a
/// (1, steps) image): Keras (steps, C) → (steps', filters), held (N, steps, C). The depthwise step as
/// DepthwiseConv1D, then a width-1 convolution to `filters`, the bias and the activation. Parameters
/// k·C·m + C·m·filters + filters: `depthwise_kernel` (C·m, 1, k) [Keras (k, C, m)], `pointwise_kernel`
/// (filters, C·m, 1) [Keras (1, C·m, filters)], `bias` (filters). Errors: SeparableConvNDImpl's; an input
/// that is not a sequence (steps, C) or shorter than a "valid" window (build).
class SeparableConv1DImpl : public SeparableConvNDImpl<SeparableConv1DOptions, 1> {
  TORCHFIT_LAYER_CLASS(SeparableConv1D);

 public:
  /// ONNX: as Conv1D's, a 2-D Conv (group = C, no bias) → Conv 1×1 (+ activation).
  std::string export_onnx(io::OnnxGraph& graph, const std::vector<std::string>& inputs) const override;
  explicit SeparableConv1DImpl(SeparableConv1DOptions options);
};
TORCH_MODULE(SeparableConv1D);

}  // namespace torchfit
