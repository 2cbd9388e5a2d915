#pragma once
/// @file conv3d.h
/// Conv3D — 3-D convolution over volumes, as keras.layers.Conv3D (channels_last).
#include <torch/nn/pimpl.h>

#include <torchfit/layers/base_conv.h>

namespace torchfit {

/// Options of Conv3D. Required: filters, kernel_size (an int or (k_d, k_h, k_w)); the window arguments
/// (strides, padding, dilation_rate, activation, use_bias) and their Keras defaults are ConvOptions's
/// (base_conv.h).
struct Conv3DOptions : ConvFiltersOptions<Conv3DOptions, 3> {
  using ConvFiltersOptions::ConvFiltersOptions;
};

/// 3-D convolution: Keras (D, H, W, C_in) → (D', H', W', filters), held in Keras's order (N, D, H, W, C)
/// — the layer moves the channels first for LibTorch's conv3d and back. Per axis valid: n' = floor((n −
/// d·(k − 1) − 1) / s) + 1; same: n' = ceil(n / s) (TensorFlow's padding, the odd one at the end).
/// Parameters k_d·k_h·k_w·C_in·filters + filters: `kernel` (filters, C_in, k_d, k_h, k_w) [Keras
/// (k_d, k_h, k_w, C_in, filters)], glorot_uniform; `bias` (filters), zeros (Keras defaults). Errors:
/// ConfigError for filters, a kernel/stride/dilation ≤ 0, a padding other than valid/same, an unknown
/// activation (construction); an input that is not a volume (D, H, W, C) or smaller than a "valid" kernel (build).
class Conv3DImpl : public ConvNDImpl<Conv3DOptions, 3> {
  TORCHFIT_LAYER_CLASS(Conv3D);

 public:
  /// ONNX: Transpose to (N, C, D, H, W), Conv (+ explicit pads), Transpose back (+ activation).
  std::string export_onnx(io::OnnxGraph& graph, const std::vector<std::string>& inputs) const override;
  explicit Conv3DImpl(Conv3DOptions options);
};
TORCH_MODULE(Conv3D);

}  // namespace torchfit
