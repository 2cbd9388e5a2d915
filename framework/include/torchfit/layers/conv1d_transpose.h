#pragma once
/// @file conv1d_transpose.h
/// Conv1DTranspose — transposed 1-D convolution over the steps of a sequence, as
/// keras.layers.Conv1DTranspose (channels_last).
#include <torch/nn/pimpl.h>

#include <torchfit/layers/base_conv.h>

namespace torchfit {

/// Options of Conv1DTranspose. Required: filters, kernel_size (steps); `output_padding` (unset) and the
/// window arguments (strides, padding valid/same, dilation_rate, activation, use_bias) with their Keras
/// defaults are ConvTransposeOptions's (base_conv.h).
struct Conv1DTransposeOptions : ConvTransposeOptions<Conv1DTransposeOptions, 1> {
  using ConvTransposeOptions::ConvTransposeOptions;
};

/// Transposed convolution of a sequence, as TensorFlow's conv1d_transpose (the adjoint of Conv1D):
/// Keras (steps, C_in) → (steps', filters), held in Keras's order (N, steps, C) — the layer moves the
/// channels first for LibTorch's conv_transpose1d and back. steps' as Keras's deconv_output_length
/// (ConvTransposeNDImpl: valid steps·s + max(k' − s, 0), same steps·s, with output_padding p
/// (steps − 1)·s + k' − 2·pad + p; "same" crops the odd step at the end). Parameters k·C_in·filters +
/// filters: `kernel` (C_in, filters, k) [Keras (k, filters, C_in)], `bias` (filters). Errors:
/// ConvTransposeNDImpl's; an input that is not a sequence (steps, C) (build).
class Conv1DTransposeImpl : public ConvTransposeNDImpl<Conv1DTransposeOptions, 1> {
  TORCHFIT_LAYER_CLASS(Conv1DTranspose);

 public:
  /// ONNX: Transpose and Reshape to (N, C, 1, steps), a 2-D ConvTranspose (+ Slice), Reshape and Transpose
  /// back (+ activation).
  std::string export_onnx(io::OnnxGraph& graph, const std::vector<std::string>& inputs) const override;
  explicit Conv1DTransposeImpl(Conv1DTransposeOptions options);
};
TORCH_MODULE(Conv1DTranspose);

}  // namespace torchfit
