#pragma once
/// @file depthwise_conv2d.h
/// DepthwiseConv2D — per-channel 2-D convolution as keras.layers.DepthwiseConv2D.
#include <torch/arg.h>
#include <torch/expanding_array.h>
#include <torch/nn/pimpl.h>

#include <torchfit/layers/layer.h>

namespace torchfit {

/// Options of DepthwiseConv2D. Required: kernel_size. Defaults as Keras.
struct DepthwiseConv2DOptions {
  explicit DepthwiseConv2DOptions(torch::ExpandingArray<2> kernel_size) : kernel_size_(kernel_size) {}
  /// For the registry only (layer_args.h): leaves kernel_size unset, to be read from a config.
  explicit DepthwiseConv2DOptions(FromConfig) : kernel_size_(0) {}
  /// Kernel (height, width) in pixels; an int means square.
  TORCH_ARG(torch::ExpandingArray<2>, kernel_size);
  /// Output channels per input channel (> 0). Default 1.
  TORCH_ARG(int64_t, depth_multiplier) = 1;
  /// Strides (rows, cols) in pixels. Default 1.
  TORCH_ARG(torch::ExpandingArray<2>, strides) = 1;
  /// "valid" (default) or "same" (output = ceil(input / stride), TensorFlow's padding).
  TORCH_ARG(std::string, padding) = "valid";
  /// Dilation rate (rows, cols). Default 1.
  TORCH_ARG(torch::ExpandingArray<2>, dilation_rate) = 1;
  /// A name from activation_names() (default linear).
  TORCH_ARG(std::string, activation) = "linear";
  /// Add a bias per output channel (default true; zero-initialised).
  TORCH_ARG(bool, use_bias) = true;
  /// Input shape (H, W, C) when this is the first layer.
  TORCH_ARG(std::optional<Shape>, input_shape) = std::nullopt;
  /// Layer name ("" ⇒ automatic: depthwise_conv2d, depthwise_conv2d_1, …).
  TORCH_ARG(std::string, name) = "";

 public:
  /// The Keras arguments, each listed once (layer_args.h): config() writes them, the registry reads them.
  template <typename Args>
  void args(Args& a) {
    a.required("kernel_size", kernel_size());
    a("depth_multiplier", depth_multiplier());
    a("strides", strides());
    a("padding", padding());
    a("dilation_rate", dilation_rate());
    a("activation", activation());
    a("use_bias", use_bias());
  }
};

/// Depthwise convolution: each input channel is convolved with its own `depth_multiplier` kernels.
///
/// Input (N, C, H, W) [Keras (H, W, C)]; output (N, C·m, H', W') [Keras (H', W', C·m)], m = depth_multiplier,
/// output channel c·m + j comes from input channel c (TensorFlow's order); H' as Conv2D (valid:
/// floor((H − d·(k−1) − 1) / s) + 1, same: ceil(H / s)).
/// Parameters: k_h·k_w·C·m (depthwise_kernel) + C·m (bias). Kernel glorot_uniform with Keras's fans for a
/// (k_h, k_w, C, m) kernel, bias zeros. Errors: ConfigError for a kernel/stride/dilation/multiplier ≤ 0,
/// unknown padding/activation, a non-3-D input or a kernel larger than a "valid" input.
class DepthwiseConv2DImpl : public Layer {
 public:
  explicit DepthwiseConv2DImpl(DepthwiseConv2DOptions options);
  at::Tensor forward(const at::Tensor& x) override;
  at::Tensor forward_without_activation(const at::Tensor& x) override;
  std::string output_activation() const override { return options.activation(); }
  nlohmann::json config() const override;
  int64_t flops_per_sample() const override;

  DepthwiseConv2DOptions options;
  /// Weight (C·m, 1, k_h, k_w) and bias (C·m); undefined before build.
  at::Tensor depthwise_kernel, bias;

 protected:
  Shape build_impl(const Shape& input_shape) override;

 private:
  std::vector<int64_t> pad_;  // (top, bottom, left, right) for "same"
  int64_t groups_ = 1;
};
TORCH_MODULE(DepthwiseConv2D);

}  // namespace torchfit
