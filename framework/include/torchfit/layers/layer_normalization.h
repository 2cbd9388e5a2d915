#pragma once
/// @file layer_normalization.h
/// LayerNormalization — per-sample normalization over chosen axes, as keras.layers.LayerNormalization.
#include <optional>
#include <string>
#include <vector>

#include <torch/arg.h>
#include <torch/nn/pimpl.h>

#include <torchfit/layers/keras_axes.h>
#include <torchfit/layers/layer.h>

namespace torchfit {

/// Options of LayerNormalization, with Keras's defaults.
struct LayerNormalizationOptions : LayerOptions<LayerNormalizationOptions> {
  /// Axes normalized over (Keras's: over (N, H, W, C), −1 = channels). Default −1.
  TORCH_ARG(KerasAxes, axis) = KerasAxes(-1);
  /// Added to the variance (> 0). Default 1e-3.
  TORCH_ARG(double, epsilon) = 1e-3;
  /// Add the learned offset `beta`. Default true.
  TORCH_ARG(bool, center) = true;
  /// Multiply by the learned scale `gamma`. Default true.
  TORCH_ARG(bool, scale) = true;

 public:
  /// The Keras arguments, each listed once (layer_args.h): config() writes them, the registry reads them.
  template <typename Args>
  void args(Args& a) {
    a("axis", axis());
    a("epsilon", epsilon());
    a("center", center());
    a("scale", scale());
  }
};

/// y = (x − mean) / sqrt(var + epsilon) · gamma + beta, mean and (biased) variance per sample over
/// `axis`, as Keras (float16/bfloat16 inputs computed in float32, as Keras's float32 layer does). Any
/// input shape (Keras (H, W, C) or (D); tensors (N, C, H, W) / (N, D)); output the same. Parameters
/// (Keras's names and shapes): `gamma` (ones) and `beta` (zeros), each of the normalized axes' sizes in
/// KERAS order (axis −1 on (H, W, C): (C); axis [1, 2, 3]: (H, W, C)); gamma only with scale, beta only
/// with center. Errors: ConfigError for epsilon ≤ 0 or an empty axis list (construction), an axis that is
/// the batch axis, repeated or outside the input (build).
class LayerNormalizationImpl : public Layer {
  TORCHFIT_LAYER_CLASS(LayerNormalization);

 public:
  /// Passes a Keras mask on unchanged (Keras 3's supports_masking).
  bool supports_masking() const override { return true; }
  /// ONNX: LayerNormalization (opset 17) or its decomposition (its source file writes it).
  std::string export_onnx(io::OnnxGraph& graph, const std::vector<std::string>& inputs) const override;
  explicit LayerNormalizationImpl(LayerNormalizationOptions options = {});
  at::Tensor forward(const at::Tensor& x) override;
  nlohmann::json config() const override { return base_config(options); }
  LayerNormalizationOptions options;
  /// Scale and offset (see above); undefined before build or when switched off.
  at::Tensor gamma, beta;
  /// gamma/beta as a tensor of the input's Keras rank (1 on the axes not normalized), batch included.
  const std::vector<int64_t>& param_view() const { return param_view_; }

 protected:
  /// Keras weights: gamma (when scale), beta (when center), shaped as the normalized axes in Keras order.
  void set_keras_weights_impl(const std::vector<at::Tensor>& weights, const KerasWeightOptions& options) override;
  std::vector<at::Tensor> keras_weights_impl() const override;
  Shape build_impl(const Shape& input_shape) override;

 private:
  std::vector<int64_t> tensor_axes_;  // the normalized axes of the (N, C, H, W) / (N, D) tensor
  std::vector<int64_t> param_view_;   // gamma/beta as a tensor of the input's rank, in Keras order
};
TORCH_MODULE(LayerNormalization);

}  // namespace torchfit
