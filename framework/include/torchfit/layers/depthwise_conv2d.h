#pragma once
/// @file depthwise_conv2d.h
/// DepthwiseConv2D — per-channel 2-D convolution as keras.layers.DepthwiseConv2D.
#include <torch/nn/pimpl.h>

#include <torchfit/layers/base_conv.h>

namespace torchfit {

/// Options of DepthwiseConv2D. Required: kernel_size; `depth_multiplier` (1) and the window arguments with
/// their Keras defaults are DepthwiseConvOptions's (base_conv.h).
struct DepthwiseConv2DOptions : DepthwiseConvOptions<DepthwiseConv2DOptions, 2> {
  using DepthwiseConvOptions::DepthwiseConvOptions;
};

/// Depthwise convolution: input (N, C, H, W) [Keras (H, W, C)], output (N, C·m, H', W') [Keras
/// (H', W', C·m)], output channel c·m + j from input channel c (TensorFlow's order); H', W', forward and
/// window errors as BaseConvImpl. Parameters: `depthwise_kernel` (C·m, 1, k_h, k_w) [Keras (k_h, k_w, C,
/// m)]; `bias` (C·m). Errors: DepthwiseConvNDImpl's.
class DepthwiseConv2DImpl : public DepthwiseConvNDImpl<DepthwiseConv2DOptions, 2> {
  TORCHFIT_LAYER_CLASS(DepthwiseConv2D);

 public:
  /// ONNX: Conv with group = C (+ activation) (its source file writes it).
  std::string export_onnx(io::OnnxGraph& graph, const std::vector<std::string>& inputs) const override;
  explicit DepthwiseConv2DImpl(DepthwiseConv2DOptions options);
};
TORCH_MODULE(DepthwiseConv2D);

}  // namespace torchfit
