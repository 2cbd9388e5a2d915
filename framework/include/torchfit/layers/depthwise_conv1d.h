#pragma once
/// @file depthwise_conv1d.h
/// DepthwiseConv1D — per-channel 1-D convolution over the steps of a sequence, as
/// keras.layers.DepthwiseConv1D (channels_last).
#include <torch/nn/pimpl.h>

#include <torchfit/layers/base_conv.h>

namespace torchfit {

/// Options of DepthwiseConv1D. Required: kernel_size (steps); `depth_multiplier` (1) and the window
/// arguments (strides, padding valid/same, dilation_rate, activation, use_bias) with their Keras defaults
/// are DepthwiseConvOptions's (base_conv.h).
struct DepthwiseConv1DOptions : DepthwiseConvOptions<DepthwiseConv1DOptions, 1> {
  using DepthwiseConvOptions::DepthwiseConvOptions;
};

/// Depthwise convolution of a sequence: Keras (steps, C) → (steps', C·m) (m = depth_multiplier), held in
/// Keras's order (N, steps, C) — moved channels first for LibTorch's conv1d (groups = C) and back. Output
/// channel c·m + j from input channel c (TensorFlow's order); steps' as Conv1D's valid/same. Parameters
/// k·C·m + C·m: `depthwise_kernel` (C·m, 1, k) [Keras (k, C, m)], `bias` (C·m). Errors:
/// DepthwiseConvNDImpl's; an input that is not a sequence (steps, C) or shorter than a "valid" window (build).
class DepthwiseConv1DImpl : public DepthwiseConvNDImpl<DepthwiseConv1DOptions, 1> {
  TORCHFIT_LAYER_CLASS(DepthwiseConv1D);

 public:
  /// ONNX: as Conv1D's, the 2-D Conv with group = C (+ activation).
  std::string export_onnx(io::OnnxGraph& graph, const std::vector<std::string>& inputs) const override;
  explicit DepthwiseConv1DImpl(DepthwiseConv1DOptions options);
};
TORCH_MODULE(DepthwiseConv1D);

}  // namespace torchfit
