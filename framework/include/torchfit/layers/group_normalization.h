#pragma once
/// @file group_normalization.h
/// GroupNormalization — per-sample normalization within groups of channels, as keras.layers.GroupNormalization.
#include <torch/arg.h>
#include <torch/nn/pimpl.h>

#include <torchfit/layers/layer.h>

namespace torchfit {

/// Options of GroupNormalization, with Keras's defaults.
struct GroupNormalizationOptions : LayerOptions<GroupNormalizationOptions> {
  /// Groups the channels are split into (divides the channels; −1 = one group per channel, instance
  /// normalization). Default 32.
  TORCH_ARG(int64_t, groups) = 32;
  /// The channels axis (Keras's, over (N, H, W, C) / (N, ..., D); −1 = channels / last). Default −1.
  TORCH_ARG(int64_t, axis) = -1;
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
    a("groups", groups());
    a("axis", axis());
    a("epsilon", epsilon());
    a("center", center());
    a("scale", scale());
  }
};

/// Splits the C channels of `axis` into `groups` groups of C/groups and normalizes each group per sample
/// with its mean and (biased) variance over the group's channels and every other axis:
/// y = (x − mean) / sqrt(var + epsilon) · gamma + beta, gamma and beta per channel (Keras 3's
/// GroupNormalization.call). Any input shape (Keras (H, W, C), (L, D) or (D); tensors (N, C, H, W), (N, L, D),
/// (N, D)); output the same. Parameters `gamma` (ones, when scale) and `beta` (zeros, when center), each (C).
/// Float16/bfloat16 inputs are computed in float32.
/// Errors: ConfigError for epsilon ≤ 0 or groups 0 or below −1 (construction); an axis that is the batch
/// axis or outside the input, more groups than channels, or channels not a multiple of groups (build).
class GroupNormalizationImpl : public Layer {
  TORCHFIT_LAYER_CLASS(GroupNormalization);

 public:
  /// Passes a Keras mask on unchanged (Keras 3's supports_masking).
  bool supports_masking() const override { return true; }
  /// ONNX: Reshape to (N, groups, −1), InstanceNormalization, Reshape back, Mul/Add per channel (a Transpose
  /// around them when the channels are not the tensor's axis 1) (its source file writes it).
  std::string export_onnx(io::OnnxGraph& graph, const std::vector<std::string>& inputs) const override;
  explicit GroupNormalizationImpl(GroupNormalizationOptions options = {});
  at::Tensor forward(const at::Tensor& x) override;
  nlohmann::json config() const override { return base_config(options); }
  GroupNormalizationOptions options;
  /// Scale and offset (C); undefined before build or when switched off.
  at::Tensor gamma, beta;
  /// The groups in use (options.groups, or C for −1); 0 before build.
  int64_t group_count() const { return groups_; }

 protected:
  /// Keras weights: gamma (when scale), beta (when center), each (C).
  void set_keras_weights_impl(const std::vector<at::Tensor>& weights, const KerasWeightOptions& options) override;
  std::vector<at::Tensor> keras_weights_impl() const override;
  Shape build_impl(const Shape& input_shape) override;

 private:
  int64_t tensor_axis_ = 1;              // the channels' axis of the (N, C, H, W) / (N, ...) tensor
  int64_t groups_ = 0;                   // groups in use
  std::vector<int64_t> channels_first_;  // per-sample tensor shape with the channels moved first
};
TORCH_MODULE(GroupNormalization);

}  // namespace torchfit
