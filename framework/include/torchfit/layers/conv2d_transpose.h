#pragma once
/// @file conv2d_transpose.h
/// Conv2DTranspose — transposed 2-D convolution ("deconvolution") as keras.layers.Conv2DTranspose
/// (channels_last at the API, NCHW tensors inside).
#include <torch/nn/pimpl.h>

#include <torchfit/layers/base_conv.h>

namespace torchfit {

/// Options of Conv2DTranspose. Required: filters, kernel_size; `output_padding` (unset) and the window
/// arguments (strides, padding, dilation_rate, activation, use_bias) with their Keras defaults are
/// ConvTransposeOptions's (base_conv.h).
struct Conv2DTransposeOptions : ConvTransposeOptions<Conv2DTransposeOptions, 2> {
  using ConvTransposeOptions::ConvTransposeOptions;
};

/// Transposed convolution, as TensorFlow's conv2d_transpose: input (N, C_in, H, W) [Keras (H, W, C_in)],
/// output (N, filters, H', W') [Keras (H', W', filters)], H' and W' as Keras's deconv_output_length
/// (ConvTransposeNDImpl: "same" crops the odd row at the end). Parameters: `kernel` (C_in, filters, k_h,
/// k_w) — LibTorch's conv_transpose2d layout; Keras stores (k_h, k_w, filters, C_in), i.e. torchfit =
/// keras.permute(3, 2, 0, 1); `bias` (filters). Errors: ConvTransposeNDImpl's.
class Conv2DTransposeImpl : public ConvTransposeNDImpl<Conv2DTransposeOptions, 2> {
  TORCHFIT_LAYER_CLASS(Conv2DTranspose);

 public:
  /// ONNX: ConvTranspose (+ Slice) (+ activation) (its source file writes it).
  std::string export_onnx(io::OnnxGraph& graph, const std::vector<std::string>& inputs) const override;
  explicit Conv2DTransposeImpl(Conv2DTransposeOptions options);
};
TORCH_MODULE(Conv2DTranspose);

}  // namespace torchfit
