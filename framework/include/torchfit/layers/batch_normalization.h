#pragma once
/// @file batch_normalization.h
/// BatchNormalization — as keras.layers.BatchNormalization (one axis, default −1: the channels/features).
#include <torch/arg.h>
#include <torch/nn/pimpl.h>

#include <torchfit/layers/keras_axes.h>
#include <torchfit/layers/layer.h>

namespace torchfit {

/// Options of BatchNormalization. Defaults as Keras: axis −1, momentum 0.99, epsilon 1e-3, center, scale.
struct BatchNormalizationOptions : LayerOptions<BatchNormalizationOptions> {
  /// The normalised axis, Keras's: an int or a list of one, over (N, H, W, C) / (N, D) / (N, T, D),
  /// negatives from the end, resolved against the input when the layer is built (as Keras): −1, 3 or [3]
  /// on an (H, W, C) input are the channels, −1, 1 or [1] on a (D) input the features (tf.keras 2.x
  /// writes [1] after a Dense). Default −1.
  TORCH_ARG(KerasAxes, axis) = KerasAxes(-1);
  /// How `axis` counts an image: "channels_last" (default, Keras 2+) or "channels_first" (a Keras 1 "th"
  /// model: axis 1 of (N, C, H, W) is the channels). Not a Keras argument: config() writes it only when set.
  TORCH_ARG(std::string, axis_order) = "channels_last";
  /// Moving-average momentum in [0, 1): moving = moving·momentum + batch·(1 − momentum). Default 0.99.
  /// (Note: LibTorch's own `momentum` is the complement, 1 − this.)
  TORCH_ARG(double, momentum) = 0.99;
  /// Added to the variance before the square root (> 0). Default 1e-3 (LibTorch's default is 1e-5).
  TORCH_ARG(double, epsilon) = 1e-3;
  /// Learn an offset `beta` (default true; initialised to 0).
  TORCH_ARG(bool, center) = true;
  /// Learn a scale `gamma` (default true; initialised to 1).
  TORCH_ARG(bool, scale) = true;

 public:
  /// The Keras arguments, each listed once (layer_args.h): config() writes them, the registry reads them.
  template <typename Args>
  void args(Args& a) {
    a("axis", axis());
    a("axis_order", axis_order());
    a("momentum", momentum());
    a("epsilon", epsilon());
    a("center", center());
    a("scale", scale());
  }
};

/// Normalises each index of the Keras `axis` (by default the channels, tensor dim 1 of (N, C, H, W), or the
/// features of (N, D)) with batch statistics over every other axis in training and with the moving
/// statistics in eval(): y = gamma · (x − mean) / sqrt(var + epsilon) + beta.
///
/// Input any rank: (N, C, H, W) [Keras (H, W, C)], (N, D) [Keras (D)], (N, T, D) [Keras (T, D)]; output
/// the same shape. With C the size of the axis, parameters (Keras names): gamma (C, trainable, ones),
/// beta (C, trainable, zeros), moving_mean (C, zeros) and moving_variance (C, ones). The moving statistics are
/// NON-trainable parameters (requires_grad = false), as Keras's non-trainable weights: the summary counts 4·C
/// parameters of which 2·C are non-trainable, and checkpoints, EarlyStopping's best weights and `load_weights` carry
/// them. A frozen layer (set_trainable(false), config "trainable": false) always normalises with the moving statistics
/// and leaves them unchanged, as tf.keras >= 2.0. Otherwise, in train() mode every forward updates them: moving =
/// moving·momentum + batch·(1 − momentum); the batch variance used for the update is the unbiased one (n/(n−1), as
/// TensorFlow's fused kernel and LibTorch's BatchNorm1d/2d; tf.keras's non-fused path, taken for inputs other than
/// images, and Keras 3 update with the biased one), the one used to normalise is the biased one (as Keras). Errors:
/// ConfigError for momentum outside [0, 1), epsilon ≤ 0, an axis_order other than channels_last or channels_first
/// (construction), an axis that is the batch axis or outside the input, or several axes (build); torchfit::Error when a
/// training batch holds a single value per channel (e.g. a batch of one sample of a (D) input): its variance is
/// undefined, use batch_size ≥ 2 or eval().
class BatchNormalizationImpl : public Layer {
  TORCHFIT_LAYER_CLASS(BatchNormalization);

 public:
  /// Passes a Keras mask on unchanged (Keras 3's supports_masking).
  bool supports_masking() const override { return true; }
  /// In training, a sequence's Keras mask (N, steps) keeps the masked steps out of the batch statistics
  /// (Keras 3's masked moments, biased variance); in inference the mask changes nothing. Errors: ConfigError
  /// naming the layer for a masked input that is not a sequence normalised over its features.
  at::Tensor forward_masked(const std::vector<at::Tensor>& inputs, const std::vector<at::Tensor>& masks) override;
  /// ONNX: BatchNormalization with the moving statistics (its source file writes it).
  std::string export_onnx(io::OnnxGraph& graph, const std::vector<std::string>& inputs) const override;
  explicit BatchNormalizationImpl(BatchNormalizationOptions options = {});
  at::Tensor forward(const at::Tensor& x) override;
  nlohmann::json config() const override;
  int64_t flops_per_sample() const override;
  /// The tensor dimension ((N, C, H, W) / (N, D) order) that is normalised; valid after build.
  int64_t tensor_axis() const { return tensor_axis_; }

  BatchNormalizationOptions options;
  /// (C) each; gamma/beta undefined when scale/center is false; all undefined before build.
  at::Tensor gamma, beta, moving_mean, moving_variance;

 protected:
  /// Keras weights: gamma (when scale), beta (when center), moving_mean, moving_variance, each (C).
  void set_keras_weights_impl(const std::vector<at::Tensor>& weights, const KerasWeightOptions& options) override;
  std::vector<at::Tensor> keras_weights_impl() const override;
  Shape build_impl(const Shape& input_shape) override;

 private:
  int64_t tensor_axis_ = 1;
};
TORCH_MODULE(BatchNormalization);

}  // namespace torchfit
