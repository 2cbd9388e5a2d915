#pragma once
/// @file activation.h
/// Activation — applies a named activation, as keras.layers.Activation.
#include <torch/arg.h>
#include <torch/nn/pimpl.h>

#include <torchfit/layers/layer.h>

namespace torchfit {

/// Options of Activation. Required: activation.
struct ActivationOptions : LayerOptions<ActivationOptions> {
  explicit ActivationOptions(std::string activation) : activation_(std::move(activation)) {}
  /// For the registry only (layer_args.h): leaves activation unset, to be read from a config.
  explicit ActivationOptions(FromConfig) {}
  /// A name from activation_names() (layers/activation_fn.h: relu, gelu, silu, softmax, …).
  TORCH_ARG(std::string, activation);

 public:
  /// The Keras arguments, each listed once (layer_args.h): config() writes them, the registry reads them.
  template <typename Args>
  void args(Args& a) {
    a.required("activation", activation());
  }
};

/// Applies a named activation, Keras 3's definitions (layers/activation_fn.h: relu, relu6, leaky_relu, elu,
/// selu, gelu, silu/swish, hard_sigmoid, hard_silu/hard_swish, sigmoid, tanh, softplus, softsign, mish,
/// softmax, log_softmax, exponential, linear); softmax and log_softmax over the channel/feature axis
/// (Keras axis −1, tensor dim 1 of an image). Input (N, C, H, W) [Keras (H, W, C)] or (N, D); output shape
/// = input shape; no parameters. Errors: ConfigError for an unknown name, listing the known ones.
class ActivationImpl : public Layer {
  TORCHFIT_LAYER_CLASS(Activation);

 public:
  /// Passes a Keras mask on unchanged (Keras 3's supports_masking).
  bool supports_masking() const override { return true; }
  /// ONNX: the activation's operators (its source file writes it).
  std::string export_onnx(io::OnnxGraph& graph, const std::vector<std::string>& inputs) const override;
  explicit ActivationImpl(ActivationOptions options);
  /// Shorthand for ActivationOptions(activation).name(name).
  explicit ActivationImpl(std::string activation, std::string name = "");
  at::Tensor forward(const at::Tensor& x) override;
  at::Tensor forward_without_activation(const at::Tensor& x) override { return x; }
  std::string output_activation() const override { return options.activation(); }
  nlohmann::json config() const override;

  ActivationOptions options;

 protected:
  Shape build_impl(const Shape& input_shape) override;
};
TORCH_MODULE(Activation);

}  // namespace torchfit
