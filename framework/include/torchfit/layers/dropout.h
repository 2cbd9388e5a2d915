#pragma once
/// @file dropout.h
/// Dropout — as keras.layers.Dropout (inverted dropout: kept units scaled by 1/(1−rate) in training).
#include <torch/arg.h>
#include <torch/nn/pimpl.h>

#include <torchfit/layers/layer.h>

namespace torchfit {

/// Options of Dropout. Required: rate.
struct DropoutOptions : LayerOptions<DropoutOptions> {
  explicit DropoutOptions(double rate) : rate_(rate) {}
  /// For the registry only (layer_args.h): leaves rate unset, to be read from a config.
  explicit DropoutOptions(FromConfig) : rate_(0.0) {}
  /// Fraction of units zeroed in training, in [0, 1).
  TORCH_ARG(double, rate);

 public:
  /// The Keras arguments, each listed once (layer_args.h): config() writes them, the registry reads them.
  template <typename Args>
  void args(Args& a) {
    a.required("rate", rate());
  }
};

/// Dropout: in train() mode zeroes each element with probability `rate` and scales the rest by
/// 1/(1−rate); in eval() mode the identity. Any input shape ((N, C, H, W) [Keras (H, W, C)] or (N, D));
/// output shape = input shape. No parameters.
/// Errors: ConfigError for rate outside [0, 1).
class DropoutImpl : public Layer {
  TORCHFIT_LAYER_CLASS(Dropout);

 public:
  /// Passes a Keras mask on unchanged (Keras 3's supports_masking).
  bool supports_masking() const override { return true; }
  /// ONNX: none, its input passes through (inference) (its source file writes it).
  std::string export_onnx(io::OnnxGraph& graph, const std::vector<std::string>& inputs) const override;
  explicit DropoutImpl(DropoutOptions options);
  at::Tensor forward(const at::Tensor& x) override;
  nlohmann::json config() const override;
  DropoutOptions options;

 protected:
  Shape build_impl(const Shape& input_shape) override;
};
TORCH_MODULE(Dropout);

}  // namespace torchfit
