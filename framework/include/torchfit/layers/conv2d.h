#pragma once
/// @file conv2d.h
/// Conv2D — 2-D convolution as keras.layers.Conv2D (channels_last at the API, NCHW tensors inside).
#include <torch/arg.h>
#include <torch/expanding_array.h>
#include <torch/nn/modules/conv.h>

#include <torchfit/layers/layer.h>

namespace torchfit {

/// Options of Conv2D. Required: filters, kernel_size. Defaults as Keras.
struct Conv2DOptions {
  Conv2DOptions(int64_t filters, torch::ExpandingArray<2> kernel_size) : filters_(filters), kernel_size_(kernel_size) {}
  /// For the registry only (layer_args.h): leaves filters and kernel_size unset, to be read from a config.
  explicit Conv2DOptions(FromConfig) : filters_(0), kernel_size_(0) {}
  /// Number of output channels (> 0).
  TORCH_ARG(int64_t, filters);
  /// Kernel (height, width) in pixels; an int means square.
  TORCH_ARG(torch::ExpandingArray<2>, kernel_size);
  /// Strides (rows, cols) in pixels. Default 1.
  TORCH_ARG(torch::ExpandingArray<2>, strides) = 1;
  /// "valid" (no padding, default) or "same" (output = ceil(input / stride)).
  TORCH_ARG(std::string, padding) = "valid";
  /// Dilation rate (rows, cols). Default 1.
  TORCH_ARG(torch::ExpandingArray<2>, dilation_rate) = 1;
  /// A name from activation_names(): relu, sigmoid, tanh, softmax, elu, gelu, linear (default linear).
  TORCH_ARG(std::string, activation) = "linear";
  /// Add a bias per filter (default true; zero-initialised).
  TORCH_ARG(bool, use_bias) = true;
  /// Input shape (H, W, C) when this is the first layer of a Sequential.
  TORCH_ARG(std::optional<Shape>, input_shape) = std::nullopt;
  /// Layer name ("" ⇒ automatic: conv2d, conv2d_1, …).
  TORCH_ARG(std::string, name) = "";

 public:
  /// The Keras arguments, each listed once (layer_args.h): config() writes them, the registry reads them.
  template <typename Args>
  void args(Args& a) {
    a.required("filters", filters());
    a.required("kernel_size", kernel_size());
    a("strides", strides());
    a("padding", padding());
    a("dilation_rate", dilation_rate());
    a("activation", activation());
    a("use_bias", use_bias());
  }
};

/// 2-D convolution layer.
///
/// Input (N, C_in, H, W) tensor [Keras (H, W, C_in)]; output (N, filters, H', W') [Keras (H', W', filters)]
/// with, per axis, valid: H' = floor((H − d·(k−1) − 1) / s) + 1; same: H' = ceil(H / s).
/// Parameters: k_h·k_w·C_in·filters + filters (bias). Kernel glorot_uniform, bias zeros (Keras defaults).
/// "same" padding with stride > 1 pads like TensorFlow (extra pixel at the bottom/right).
/// Errors: ConfigError for filters ≤ 0, kernel ≤ 0, unknown padding/activation, a non-3-D input shape,
/// or a kernel larger than the (padded) input.
class Conv2DImpl : public Layer {
 public:
  explicit Conv2DImpl(Conv2DOptions options);
  at::Tensor forward(const at::Tensor& x) override;
  at::Tensor forward_without_activation(const at::Tensor& x) override;
  std::string output_activation() const override { return options.activation(); }
  nlohmann::json config() const override;
  int64_t flops_per_sample() const override;

  Conv2DOptions options;
  /// Weight (filters, C_in, k_h, k_w) and bias (filters); undefined before build.
  at::Tensor kernel, bias;

 protected:
  Shape build_impl(const Shape& input_shape) override;

 private:
  std::vector<int64_t> pad_;  // explicit (top, bottom, left, right) padding for "same"
};
TORCH_MODULE(Conv2D);

}  // namespace torchfit
