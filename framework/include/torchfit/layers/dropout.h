#pragma once
/// @file dropout.h
/// Dropout — as keras.layers.Dropout (inverted dropout: kept units scaled by 1/(1−rate) in training).
#include <torch/arg.h>
#include <torch/nn/pimpl.h>

#include <torchfit/layers/layer.h>

namespace torchfit {

struct DropoutOptions {
  explicit DropoutOptions(double rate) : rate_(rate) {}
  /// Fraction of units zeroed in training, in [0, 1).
  TORCH_ARG(double, rate);
  TORCH_ARG(std::string, name) = "";
};

/// Dropout: in train() mode zeroes each element with probability `rate` and scales the rest by
/// 1/(1−rate); in eval() mode the identity. Any input shape; output shape = input shape. No parameters.
/// Errors: ConfigError for rate outside [0, 1).
class DropoutImpl : public Layer {
 public:
  explicit DropoutImpl(DropoutOptions options);
  at::Tensor forward(const at::Tensor& x) override;
  nlohmann::json config() const override;
  DropoutOptions options;

 protected:
  Shape build_impl(const Shape& input_shape) override;
};
TORCH_MODULE(Dropout);

}  // namespace torchfit
