#pragma once
/// @file unit_normalization.h
/// UnitNormalization — each sample scaled to an L2 norm of 1 over chosen axes, as keras.layers.UnitNormalization.
#include <torch/arg.h>
#include <torch/nn/pimpl.h>

#include <torchfit/layers/keras_axes.h>
#include <torchfit/layers/layer.h>

namespace torchfit {

/// Options of UnitNormalization, with Keras's defaults.
struct UnitNormalizationOptions : LayerOptions<UnitNormalizationOptions> {
  /// Axes the norm is taken over (Keras's, over (N, H, W, C) / (N, ..., D); −1 = channels / last). Default −1.
  TORCH_ARG(KerasAxes, axis) = KerasAxes(-1);

 public:
  /// The Keras arguments, each listed once (layer_args.h): config() writes them, the registry reads them.
  template <typename Args>
  void args(Args& a) {
    a("axis", axis());
  }
};

/// y = x · rsqrt(max(Σ x², 1e-12)), the sum per sample over `axis` (Keras 3's UnitNormalization.call; an
/// all-zero slice stays 0). Any input shape (Keras (H, W, C), (L, D) or (D); tensors (N, C, H, W),
/// (N, L, D), (N, D)); output the same. No parameters. Float16/bfloat16 inputs are computed in float32.
/// Errors: ConfigError for an empty axis list (construction), an axis that is the batch axis, repeated or
/// outside the input (build).
class UnitNormalizationImpl : public Layer {
  TORCHFIT_LAYER_CLASS(UnitNormalization);

 public:
  /// Passes a Keras mask on unchanged (Keras 3's supports_masking).
  bool supports_masking() const override { return true; }
  /// ONNX: Mul, one ReduceMean per axis times the count, the 1e-12 floor (Add, Relu, Add), Sqrt, Div (its
  /// source file writes it).
  std::string export_onnx(io::OnnxGraph& graph, const std::vector<std::string>& inputs) const override;
  explicit UnitNormalizationImpl(UnitNormalizationOptions options = {});
  at::Tensor forward(const at::Tensor& x) override;
  nlohmann::json config() const override { return base_config(options); }
  UnitNormalizationOptions options;

 protected:
  Shape build_impl(const Shape& input_shape) override;

 private:
  std::vector<int64_t> tensor_axes_;  // the axes of the (N, C, H, W) / (N, ...) tensor the norm is over
  int64_t count_ = 1;                 // elements per sample under those axes
};
TORCH_MODULE(UnitNormalization);

}  // namespace torchfit
