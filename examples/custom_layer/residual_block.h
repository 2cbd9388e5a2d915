#pragma once
// ResidualBlock — a user-defined composite layer: y = act(x + conv_b(act(conv_a(x)))), both convolutions
// k×k, "same" padding, as many filters as input channels (so the sum is shape-compatible).
#include <torch/arg.h>
#include <torch/expanding_array.h>
#include <torch/nn/pimpl.h>

#include <torchfit/layers/conv2d.h>
#include <torchfit/layers/layer.h>

/// Options of ResidualBlock. Defaults: kernel 3, activation relu.
struct ResidualBlockOptions {
  /// Kernel size of both convolutions (odd keeps the block centred). Default 3.
  TORCH_ARG(int64_t, kernel_size) = 3;
  /// Activation after the first convolution and after the sum (a torchfit activation name). Default relu.
  TORCH_ARG(std::string, activation) = "relu";
  /// Input shape (H, W, C) when this is the first layer.
  TORCH_ARG(std::optional<torchfit::Shape>, input_shape) = std::nullopt;
  /// Layer name ("" ⇒ automatic: residual_block, residual_block_1, …).
  TORCH_ARG(std::string, name) = "";

 public:
  /// The arguments, each listed once (torchfit/layers/layer_args.h): config() and the registry use them.
  template <typename Args>
  void args(Args& a) {
    a("kernel_size", kernel_size());
    a("activation", activation());
  }
};

/// Input (N, C, H, W) [Keras (H, W, C)]; output the same shape.
/// Parameters 2·(k·k·C·C + C): two Conv2D layers with C filters (glorot_uniform kernels, zero biases).
/// Errors: ConfigError for kernel_size ≤ 0, an unknown activation, or a non-3-D input.
class ResidualBlockImpl : public torchfit::Layer {
  TORCHFIT_LAYER_CLASS(ResidualBlock);

 public:
  explicit ResidualBlockImpl(ResidualBlockOptions options = {});
  at::Tensor forward(const at::Tensor& x) override;
  nlohmann::json config() const override;
  int64_t flops_per_sample() const override;
  /// ONNX export (torchfit/saving/onnx.h): the inner convolutions' own exporters, Add, the activation.
  std::string export_onnx(torchfit::saving::OnnxGraph& graph, const std::vector<std::string>& inputs) const override;

  ResidualBlockOptions options;
  /// The two inner convolutions; null before build.
  torchfit::Conv2D conv_a{nullptr}, conv_b{nullptr};

 protected:
  torchfit::Shape build_impl(const torchfit::Shape& input_shape) override;
  /// Keras weights: its sub-layers' in order, as Keras lists a nested layer's (conv_a kernel, bias, conv_b
  /// kernel, bias).
  void set_keras_weights_impl(const std::vector<at::Tensor>& weights, const torchfit::KerasWeightOptions&) override;
  std::vector<at::Tensor> keras_weights_impl() const override;
};
TORCH_MODULE(ResidualBlock);
