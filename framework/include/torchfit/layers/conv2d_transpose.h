#pragma once
/// @file conv2d_transpose.h
/// Conv2DTranspose — transposed 2-D convolution ("deconvolution") as keras.layers.Conv2DTranspose
/// (channels_last at the API, NCHW tensors inside).
#include <optional>

#include <torch/nn/pimpl.h>

#include <torchfit/layers/base_conv.h>

namespace torchfit {

/// Options of Conv2DTranspose. Required: filters, kernel_size; the window arguments (strides, padding,
/// dilation_rate, activation, use_bias) and their Keras defaults are ConvOptions's (base_conv.h).
struct Conv2DTransposeOptions : ConvOptions<Conv2DTransposeOptions> {
  Conv2DTransposeOptions(int64_t filters, torch::ExpandingArray<2> kernel_size)
      : ConvOptions(kernel_size), filters_(filters) {}
  /// For the registry only (layer_args.h): leaves filters and kernel_size unset, to be read from a config.
  explicit Conv2DTransposeOptions(FromConfig) : Conv2DTransposeOptions(0, 0) {}
  /// Number of output channels (> 0).
  TORCH_ARG(int64_t, filters);
  /// Extra rows/columns at the end of the output (each ≥ 0 and < its stride), or unset (Keras's None,
  /// default): the output size is then Keras's deconv_output_length without it (see Conv2DTransposeImpl).
  TORCH_ARG(std::optional<torch::ExpandingArray<2>>, output_padding) = std::nullopt;

 public:
  /// The Keras arguments, each listed once (layer_args.h): config() writes them, the registry reads them.
  template <typename Args>
  void args(Args& a) {
    a.required("filters", filters());
    a("output_padding", output_padding());
    window_args(a);
  }
};

/// Transposed convolution: the gradient (adjoint) of a Conv2D with the same kernel size, strides,
/// dilation and padding, as TensorFlow's conv2d_transpose. Input (N, C_in, H, W) [Keras (H, W, C_in)],
/// output (N, filters, H', W') [Keras (H', W', filters)] with, per axis (k' = d·(k − 1) + 1, Keras's
/// conv_utils.deconv_output_length):
///   output_padding unset: valid H' = H·s + max(k' − s, 0); same H' = H·s;
///   output_padding p:     H' = (H − 1)·s + k' − 2·pad + p, pad = k' // 2 (same) or 0 (valid).
/// The full transposed convolution ((H − 1)·s + k' rows) is cropped to H' rows starting at row
/// pad_before = max((H − 1)·s + k' − H', 0) // 2 for "same" (TensorFlow's padding of the matching
/// Conv2D: the odd row is cut at the END), 0 for "valid"; rows past the full result are zeros (+ bias).
/// Parameters: `kernel` (C_in, filters, k_h, k_w) — LibTorch's conv_transpose2d layout; Keras stores
/// (k_h, k_w, filters, C_in), i.e. torchfit = keras.permute(3, 2, 0, 1) — glorot_uniform (Keras's fans
/// for that Keras shape); `bias` (filters), zeros. Errors: ConfigError for filters ≤ 0 or an
/// output_padding < 0 or ≥ its stride (as Keras), and BaseConv2DImpl's.
class Conv2DTransposeImpl : public BaseConv2DImpl<Conv2DTransposeOptions> {
  TORCHFIT_LAYER_CLASS(Conv2DTranspose);

 public:
  /// ONNX: ConvTranspose (+ Slice) (+ activation) (its source file writes it).
  std::string export_onnx(io::OnnxGraph& graph, const std::vector<std::string>& inputs) const override;
  explicit Conv2DTransposeImpl(Conv2DTransposeOptions options);
  at::Tensor forward_without_activation(const at::Tensor& x) override;
  /// 2·k_h·k_w·C_in·filters·H·W (each input pixel meets the whole kernel).
  int64_t flops_per_sample() const override;

 protected:
  /// Keras weights: kernel (k_h, k_w, F, C_in), bias (F).
  void set_keras_weights_impl(const std::vector<at::Tensor>& weights, const KerasWeightOptions& options) override;
  std::vector<at::Tensor> keras_weights_impl() const override;
  Weights make_weights(int64_t in_channels) override;
  std::array<int64_t, 2> output_hw(const Shape& in) override;

 private:
  std::array<int64_t, 2> full_{};  // rows and columns of the uncropped transposed convolution
};
TORCH_MODULE(Conv2DTranspose);

}  // namespace torchfit
