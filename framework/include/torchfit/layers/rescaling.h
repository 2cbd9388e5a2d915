#pragma once
/// @file rescaling.h
/// Rescaling — y = x · scale + offset, as keras.layers.Rescaling (e.g. 1/255 for 8-bit images).
#include <optional>
#include <string>

#include <torch/arg.h>
#include <torch/nn/pimpl.h>

#include <torchfit/layers/layer.h>

namespace torchfit {

/// Options of Rescaling. Required: scale (Keras has no default); offset 0.
struct RescalingOptions : LayerOptions<RescalingOptions> {
  explicit RescalingOptions(double scale) : scale_(scale) {}
  /// For the registry only (layer_args.h): leaves scale unset, to be read from a config.
  explicit RescalingOptions(FromConfig) : scale_(0.0) {}
  /// Factor applied to every value (any finite number).
  TORCH_ARG(double, scale);
  /// Added after scaling (any finite number). Default 0.
  TORCH_ARG(double, offset) = 0.0;

 public:
  /// The Keras arguments, each listed once (layer_args.h): config() writes them, the registry reads them.
  template <typename Args>
  void args(Args& a) {
    a.required("scale", scale());
    a("offset", offset());
  }
};

/// y = x · scale + offset, elementwise. Any input shape; output the same. No parameters.
/// Errors: ConfigError for a non-finite scale or offset.
class RescalingImpl : public Layer {
  TORCHFIT_LAYER_CLASS(Rescaling);

 public:
  /// Passes a Keras mask on unchanged (Keras 3's supports_masking).
  bool supports_masking() const override { return true; }
  /// ONNX: Mul (+ Add) (its source file writes it).
  std::string export_onnx(io::OnnxGraph& graph, const std::vector<std::string>& inputs) const override;
  explicit RescalingImpl(RescalingOptions options);
  at::Tensor forward(const at::Tensor& x) override;
  nlohmann::json config() const override { return base_config(options); }
  RescalingOptions options;

 protected:
  Shape build_impl(const Shape& input_shape) override { return input_shape; }
};
TORCH_MODULE(Rescaling);

}  // namespace torchfit
