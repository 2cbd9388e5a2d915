#pragma once
/// @file conv3d_transpose.h
/// Conv3DTranspose — transposed 3-D convolution over volumes, as keras.layers.Conv3DTranspose (channels_last).
#include <torch/nn/pimpl.h>

#include <torchfit/layers/base_conv.h>

namespace torchfit {

/// Options of Conv3DTranspose. Required: filters, kernel_size (an int or (k_d, k_h, k_w)); `output_padding`
/// (unset) and the window arguments (strides, padding valid/same, dilation_rate, activation, use_bias)
/// with their Keras defaults are ConvTransposeOptions's (base_conv.h).
struct Conv3DTransposeOptions : ConvTransposeOptions<Conv3DTransposeOptions, 3> {
  using ConvTransposeOptions::ConvTransposeOptions;
};

/// Transposed convolution of a volume, as TensorFlow's conv3d_transpose (the adjoint of Conv3D): Keras
/// (D, H, W, C_in) → (D', H', W', filters), held in Keras's order (N, D, H, W, C) — the layer moves the
/// channels first for LibTorch's conv_transpose3d and back. Sizes per axis as Keras's
/// deconv_output_length (ConvTransposeNDImpl; "same" crops the odd one at the end). Parameters
/// k_d·k_h·k_w·C_in·filters + filters: `kernel` (C_in, filters, k_d, k_h, k_w) [Keras (k_d, k_h, k_w,
/// filters, C_in)], `bias` (filters). Errors: ConvTransposeNDImpl's; an input that is not a volume (build).
class Conv3DTransposeImpl : public ConvTransposeNDImpl<Conv3DTransposeOptions, 3> {
  TORCHFIT_LAYER_CLASS(Conv3DTranspose);

 public:
  /// ONNX: Transpose to (N, C, D, H, W), ConvTranspose (+ Slice), Transpose back (+ activation).
  std::string export_onnx(io::OnnxGraph& graph, const std::vector<std::string>& inputs) const override;
  explicit Conv3DTransposeImpl(Conv3DTransposeOptions options);
};
TORCH_MODULE(Conv3DTranspose);

}  // namespace torchfit
