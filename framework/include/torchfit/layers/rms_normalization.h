#pragma once
/// @file rms_normalization.h
/// RMSNormalization — each sample divided by its root mean square over the last axes, times a learned
/// scale, as keras.layers.RMSNormalization (Keras 3).
#include <torch/arg.h>
#include <torch/nn/pimpl.h>

#include <torchfit/layers/keras_axes.h>
#include <torchfit/layers/layer.h>

namespace torchfit {

/// Options of RMSNormalization, with Keras's defaults.
struct RMSNormalizationOptions : LayerOptions<RMSNormalizationOptions> {
  /// Axes the mean square is taken over (Keras's; −1 = channels / the last axis). Default −1.
  TORCH_ARG(KerasAxes, axis) = KerasAxes(-1);
  /// Added to the mean square (> 0). Default 1e-6.
  TORCH_ARG(double, epsilon) = 1e-6;

 public:
  /// The Keras arguments, each listed once (layer_args.h): config() writes them, the registry reads them.
  template <typename Args>
  void args(Args& a) {
    a("axis", axis());
    a("epsilon", epsilon());
  }
};

/// y = x · rsqrt(mean(x²) + epsilon) · scale, the mean per sample over `axis` (Keras 3's
/// ops.rms_normalization). Any input shape (Keras (H, W, C), (L, D) or (D); tensors (N, C, H, W), (N, L, D),
/// (N, D)); output the same. Parameter `scale` (ones) of the normalized axes' sizes in Keras order (axis −1:
/// (C) or (D)). The axes must be the last ones in Keras's order (the scale broadcasts over them, as in
/// Keras). Float16/bfloat16 inputs are computed in float32.
/// Errors: ConfigError for epsilon ≤ 0 or an empty axis list (construction); an axis that is the batch axis,
/// repeated or outside the input, or axes that are not the last ones in increasing order (build).
class RMSNormalizationImpl : public Layer {
  TORCHFIT_LAYER_CLASS(RMSNormalization);

 public:
  /// ONNX: Mul, ReduceMean per axis, Add, Sqrt, Div, Mul (its source file writes it).
  std::string export_onnx(io::OnnxGraph& graph, const std::vector<std::string>& inputs) const override;
  explicit RMSNormalizationImpl(RMSNormalizationOptions options = {});
  at::Tensor forward(const at::Tensor& x) override;
  nlohmann::json config() const override { return base_config(options); }
  RMSNormalizationOptions options;
  /// The learned scale (see above); undefined before build.
  at::Tensor scale;

 protected:
  /// Keras weights: [scale], shaped as the normalized axes in Keras order.
  void set_keras_weights_impl(const std::vector<at::Tensor>& weights, const KerasWeightOptions& options) override;
  std::vector<at::Tensor> keras_weights_impl() const override;
  Shape build_impl(const Shape& input_shape) override;

 private:
  std::vector<int64_t> tensor_axes_;  // the normalized axes of the (N, C, H, W) / (N, ...) tensor
  std::vector<int64_t> param_view_;   // scale as a tensor of the input's Keras rank, batch included
};
TORCH_MODULE(RMSNormalization);

}  // namespace torchfit
