#pragma once
/// @file advanced_activations.h
/// LeakyReLU and ELU layers with a configurable alpha, as keras.layers.LeakyReLU / keras.layers.ELU.
/// (GELU is the activation name "gelu": Activation("gelu") or `.activation("gelu")` on Dense/Conv2D.)
#include <torch/arg.h>
#include <torch/nn/pimpl.h>

#include <torchfit/layers/layer.h>

namespace torchfit {

/// Options of LeakyReLU. Keras default alpha 0.3 (LibTorch's default slope is 0.01).
struct LeakyReLUOptions {
  /// Slope for x < 0 (≥ 0). Default 0.3.
  TORCH_ARG(double, alpha) = 0.3;
  /// Input shape (Keras order) when this is the first layer.
  TORCH_ARG(std::optional<Shape>, input_shape) = std::nullopt;
  /// Layer name ("" ⇒ automatic: leaky_re_lu, leaky_re_lu_1, … — Keras's snake_case of "LeakyReLU").
  TORCH_ARG(std::string, name) = "";

 public:
  /// The Keras arguments, each listed once (layer_args.h): config() writes them, the registry reads them.
  template <typename Args>
  void args(Args& a) {
    a("alpha", alpha());
  }
};

/// f(x) = x for x ≥ 0, alpha·x otherwise. Any input shape; output the same. No parameters.
/// Errors: ConfigError for alpha < 0.
class LeakyReLUImpl : public Layer {
  TORCHFIT_LAYER_CLASS(LeakyReLU);

 public:
  explicit LeakyReLUImpl(LeakyReLUOptions options = {});
  at::Tensor forward(const at::Tensor& x) override;
  nlohmann::json config() const override;
  LeakyReLUOptions options;

 protected:
  Shape build_impl(const Shape& input_shape) override { return input_shape; }
};
TORCH_MODULE(LeakyReLU);

/// Options of ELU. Keras default alpha 1.0.
struct ELUOptions {
  /// Scale of the negative part (≥ 0). Default 1.0.
  TORCH_ARG(double, alpha) = 1.0;
  /// Input shape (Keras order) when this is the first layer.
  TORCH_ARG(std::optional<Shape>, input_shape) = std::nullopt;
  /// Layer name ("" ⇒ automatic: elu, elu_1, …).
  TORCH_ARG(std::string, name) = "";

 public:
  /// The Keras arguments, each listed once (layer_args.h): config() writes them, the registry reads them.
  template <typename Args>
  void args(Args& a) {
    a("alpha", alpha());
  }
};

/// f(x) = x for x > 0, alpha·(exp(x) − 1) otherwise. Any input shape; output the same. No parameters.
/// Errors: ConfigError for alpha < 0.
class ELUImpl : public Layer {
  TORCHFIT_LAYER_CLASS(ELU);

 public:
  explicit ELUImpl(ELUOptions options = {});
  at::Tensor forward(const at::Tensor& x) override;
  nlohmann::json config() const override;
  ELUOptions options;

 protected:
  Shape build_impl(const Shape& input_shape) override { return input_shape; }
};
TORCH_MODULE(ELU);

}  // namespace torchfit
