#pragma once
/// @file depthwise_conv2d.h
/// DepthwiseConv2D — per-channel 2-D convolution as keras.layers.DepthwiseConv2D.
#include <torch/nn/pimpl.h>

#include <torchfit/layers/base_conv.h>

namespace torchfit {

/// Options of DepthwiseConv2D. Required: kernel_size; the window arguments and their Keras defaults
/// are ConvOptions's (base_conv.h).
struct DepthwiseConv2DOptions : ConvOptions<DepthwiseConv2DOptions> {
  explicit DepthwiseConv2DOptions(torch::ExpandingArray<2> kernel_size) : ConvOptions(kernel_size) {}
  /// For the registry only (layer_args.h): leaves kernel_size unset, to be read from a config.
  explicit DepthwiseConv2DOptions(FromConfig) : ConvOptions(0) {}
  /// Output channels per input channel (> 0). Default 1.
  TORCH_ARG(int64_t, depth_multiplier) = 1;

 public:
  /// The Keras arguments, each listed once (layer_args.h): config() writes them, the registry reads them.
  template <typename Args>
  void args(Args& a) {
    a("depth_multiplier", depth_multiplier());
    window_args(a);
  }
};

/// Depthwise convolution: each input channel is convolved with its own `depth_multiplier` kernels.
/// Output channels C·m (m = depth_multiplier); output channel c·m + j comes from input channel c
/// (TensorFlow's order); H', W', forward and window errors as BaseConv2DImpl. Parameters:
/// `depthwise_kernel` (C·m, 1, k_h, k_w), glorot_uniform with Keras's fans for a (k_h, k_w, C, m)
/// kernel; `bias` (C·m), zeros. Errors: ConfigError for a multiplier ≤ 0, and BaseConv2DImpl's.
class DepthwiseConv2DImpl : public BaseConv2DImpl<DepthwiseConv2DOptions> {
  TORCHFIT_LAYER_CLASS(DepthwiseConv2D);

 public:
  /// ONNX: Conv with group = C (+ activation) (its source file writes it).
  std::string export_onnx(io::OnnxGraph& graph, const std::vector<std::string>& inputs) const override;
  explicit DepthwiseConv2DImpl(DepthwiseConv2DOptions options);
  /// Keras's name for `kernel` in this layer (the parameter's name too): (C·m, 1, k_h, k_w).
  at::Tensor& depthwise_kernel = kernel;

 protected:
  /// Keras weights: depthwise_kernel (k_h, k_w, C, m), bias (C·m).
  void set_keras_weights_impl(const std::vector<at::Tensor>& weights, const KerasWeightOptions& options) override;
  std::vector<at::Tensor> keras_weights_impl() const override;
  Weights make_weights(int64_t in_channels) override;
};
TORCH_MODULE(DepthwiseConv2D);

}  // namespace torchfit
