#pragma once
/// @file normalization.h
/// Normalization — shifts and scales features by a mean and variance, given or adapted to data, as
/// keras.layers.Normalization (Keras 3's preprocessing layer).
#include <torch/arg.h>
#include <torch/nn/pimpl.h>

#include <torchfit/layers/keras_axes.h>
#include <torchfit/layers/layer.h>

namespace torchfit {

/// Options of Normalization (Keras 3's arguments and defaults).
struct NormalizationOptions : LayerOptions<NormalizationOptions> {
  /// The Keras axes (batch = 0) with their own mean and variance per index; −1 (default) the last
  /// (channels); an empty list (Keras's None) one mean and variance for every value.
  TORCH_ARG(KerasAxes, axis) = KerasAxes(-1);
  /// The mean and variance: a number or a (nested) list broadcasting to the kept axes' sizes; both
  /// or neither. Neither (null, the default): the layer holds them as weights, set by adapt() or from a
  /// Keras file.
  TORCH_ARG(nlohmann::json, mean) = nullptr;
  TORCH_ARG(nlohmann::json, variance) = nullptr;
  /// Undo the normalization instead: mean + x·max(√variance, 1e-7). Default false.
  TORCH_ARG(bool, invert) = false;

 public:
  template <typename Args>
  void args(Args& a) {
    a("axis", axis());
    a("mean", mean());
    a("variance", variance());
    a("invert", invert());
  }
};

/// y = (x − mean) / max(√variance, 1e-7) per index of the kept axes (Keras 3's Normalization.call, its
/// backend epsilon), any input rank; the same in training and inference. Input and output (N, C, H, W)
/// [Keras (H, W, C)] or Keras's order for other ranks. Without a given mean and variance the layer has three
/// non-trainable weights, Keras's `mean` and `variance` (the kept axes' sizes, Keras order; initially 0
/// and 1) and `count` (a scalar Keras keeps for old files). Errors: ConfigError naming the layer for only
/// one of mean and variance (construction), an axis that is the batch axis or outside the input, or values
/// that do not broadcast to the kept axes (build); adapt() on data of another shape.
class NormalizationImpl : public Layer {
  TORCHFIT_LAYER_CLASS(Normalization);

 public:
  /// Passes a Keras mask on unchanged (Keras 3's supports_masking).
  bool supports_masking() const override { return true; }
  explicit NormalizationImpl(NormalizationOptions options = {});
  at::Tensor forward(const at::Tensor& x) override;
  nlohmann::json config() const override { return base_config(options); }
  /// Sets the weights to `data`'s mean and (biased) variance over every axis but the kept ones, batch
  /// included, as Keras's adapt() of an array. `data` (N, …) in torchfit's layout of the built input.
  void adapt(const at::Tensor& data);
  /// ONNX: Mul and Add by the per-index scale 1/max(√variance, 1e-7) and shift (inverted: the reverse).
  std::string export_onnx(io::OnnxGraph& graph, const std::vector<std::string>& inputs) const override;
  NormalizationOptions options;
  at::Tensor mean, variance, count;  ///< the weights (undefined when mean and variance are given)

 protected:
  Shape build_impl(const Shape& input_shape) override;
  void set_keras_weights_impl(const std::vector<at::Tensor>& weights, const KerasWeightOptions& options) override;
  std::vector<at::Tensor> keras_weights_impl() const override;

 private:
  /// mean and max(√variance, 1e-7) broadcasting against the tensor (N, C, H, W) / (N, …).
  std::pair<at::Tensor, at::Tensor> mean_and_scale() const;
  std::vector<int64_t> param_shape_, param_view_, reduce_tensor_axes_;
  at::Tensor given_mean_, given_variance_;  ///< the given values in the weights' Keras shape
};
TORCH_MODULE(Normalization);

}  // namespace torchfit
