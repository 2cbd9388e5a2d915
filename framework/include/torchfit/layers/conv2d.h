#pragma once
/// @file conv2d.h
/// Conv2D — 2-D convolution as keras.layers.Conv2D (channels_last at the API, NCHW tensors inside).
#include <torch/nn/pimpl.h>

#include <torchfit/layers/base_conv.h>

namespace torchfit {

/// Options of Conv2D. Required: filters, kernel_size; the window arguments (strides, padding,
/// dilation_rate, activation, use_bias) and their Keras defaults are ConvOptions's (base_conv.h).
struct Conv2DOptions : ConvOptions<Conv2DOptions> {
  Conv2DOptions(int64_t filters, torch::ExpandingArray<2> kernel_size) : ConvOptions(kernel_size), filters_(filters) {}
  /// For the registry only (layer_args.h): leaves filters and kernel_size unset, to be read from a config.
  explicit Conv2DOptions(FromConfig) : Conv2DOptions(0, 0) {}
  /// Number of output channels (> 0).
  TORCH_ARG(int64_t, filters);

 public:
  /// The Keras arguments, each listed once (layer_args.h): config() writes them, the registry reads them.
  template <typename Args>
  void args(Args& a) {
    a.required("filters", filters());
    window_args(a);
  }
};

/// 2-D convolution: output channels = filters; shapes, "same" padding, forward and window errors as
/// BaseConv2DImpl. Parameters: `kernel` (filters, C_in, k_h, k_w), k_h·k_w·C_in·filters values,
/// glorot_uniform; `bias` (filters), zeros (Keras defaults). Errors: ConfigError for filters ≤ 0, and
/// BaseConv2DImpl's.
class Conv2DImpl : public BaseConv2DImpl<Conv2DOptions> {
  TORCHFIT_LAYER_CLASS(Conv2D);

 public:
  /// ONNX: Conv (+ activation) (its source file writes it).
  std::string export_onnx(io::OnnxGraph& graph, const std::vector<std::string>& inputs) const override;
  explicit Conv2DImpl(Conv2DOptions options);

 protected:
  /// Keras weights: kernel (k_h, k_w, C_in, F), bias (F).
  void set_keras_weights_impl(const std::vector<at::Tensor>& weights, const KerasWeightOptions& options) override;
  std::vector<at::Tensor> keras_weights_impl() const override;
  Weights make_weights(int64_t in_channels) override;
};
TORCH_MODULE(Conv2D);

}  // namespace torchfit
