#pragma once
/// @file activity_regularization.h
/// ActivityRegularization — as keras.layers.ActivityRegularization (Keras 3).
#include <torch/arg.h>
#include <torch/nn/pimpl.h>

#include <torchfit/layers/layer.h>

namespace torchfit {

/// Options of ActivityRegularization, with Keras's defaults.
struct ActivityRegularizationOptions : LayerOptions<ActivityRegularizationOptions> {
  /// L1 factor (>= 0). Default 0.0.
  TORCH_ARG(double, l1) = 0.0;
  /// L2 factor (>= 0). Default 0.0.
  TORCH_ARG(double, l2) = 0.0;

 public:
  template <typename Args>
  void args(Args& a) {
    a("l1", l1());
    a("l2", l2());
  }
};

/// Passes its input through unchanged and adds l1·Σ|x| + l2·Σx² of it, summed over the whole batch (Keras
/// 3's L1L2 activity regularizer; tf.keras 2 divided by the batch size), to the loss of fit and evaluate
/// (Model::regularization_loss; Layer::set_activity_regularizer, which this layer sets from l1 and l2). Any
/// input shape; output the same. No parameters. Errors: ConfigError naming the layer for a negative factor.
class ActivityRegularizationImpl : public Layer {
  TORCHFIT_LAYER_CLASS(ActivityRegularization);

 public:
  /// Passes a Keras mask on unchanged (Keras 3's supports_masking).
  bool supports_masking() const override { return true; }
  explicit ActivityRegularizationImpl(ActivityRegularizationOptions options = {});
  at::Tensor forward(const at::Tensor& x) override { return x; }
  /// l1 and l2 as Keras writes them; no "activity_regularizer" (Keras's get_config pops it).
  nlohmann::json config() const override;
  /// ONNX: none, its input passes through (the term is a training loss).
  std::string export_onnx(io::OnnxGraph& graph, const std::vector<std::string>& inputs) const override;
  ActivityRegularizationOptions options;

 protected:
  Shape build_impl(const Shape& input_shape) override { return input_shape; }
};
TORCH_MODULE(ActivityRegularization);

}  // namespace torchfit
