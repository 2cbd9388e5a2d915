#pragma once
/// @file activation.h
/// Activation — applies a named activation, as keras.layers.Activation.
#include <torch/nn/pimpl.h>

#include <torchfit/layers/layer.h>

namespace torchfit {

/// Applies relu | sigmoid | tanh | softmax | elu | gelu | linear element-wise (softmax over the
/// channel/feature axis, tensor dim 1; elu alpha 1.0; gelu exact 0.5·x·(1 + erf(x/√2)), Keras
/// approximate=False). Output shape = input shape; no parameters. Errors: ConfigError for an unknown name.
class ActivationImpl : public Layer {
 public:
  explicit ActivationImpl(std::string activation, std::string name = "");
  at::Tensor forward(const at::Tensor& x) override;
  at::Tensor forward_without_activation(const at::Tensor& x) override { return x; }
  std::string output_activation() const override { return activation_; }
  nlohmann::json config() const override;

 protected:
  Shape build_impl(const Shape& input_shape) override;

 private:
  std::string activation_;
};
TORCH_MODULE(Activation);

}  // namespace torchfit
