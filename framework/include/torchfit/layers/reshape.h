#pragma once
/// @file reshape.h
/// Reshape — as keras.layers.Reshape (element order of Keras's channels-last layout).
#include <torch/arg.h>
#include <torch/nn/pimpl.h>

#include <torchfit/layers/layer.h>

namespace torchfit {

/// Options of Reshape. Required: target_shape (Keras order, batch excluded; at most one −1).
struct ReshapeOptions : LayerOptions<ReshapeOptions> {
  explicit ReshapeOptions(Shape target_shape) : target_shape_(std::move(target_shape)) {}
  /// For the registry only (layer_args.h): leaves target_shape unset, to be read from a config.
  explicit ReshapeOptions(FromConfig) {}
  /// Per-sample output shape in Keras order, e.g. (7, 7, 64) or (-1); one entry may be −1 (inferred).
  TORCH_ARG(Shape, target_shape);

 public:
  /// The Keras arguments, each listed once (layer_args.h): config() writes them, the registry reads them.
  template <typename Args>
  void args(Args& a) {
    a.required("target_shape", target_shape());
  }
};

/// Reshapes each sample to `target_shape`, keeping the element order Keras has: the order of the
/// channels-last layout. So a 3-D (H, W, C) input is read in (H, W, C) order and a 3-D target is
/// filled in (H, W, C) order; tensors stay (N, C, H, W) outside the layer (the layer permutes). Hence
/// Reshape((-1)) after an image equals Flatten (both in Keras's order).
/// Output shape: target_shape with −1 replaced by input elements / product of the others. No parameters.
/// Errors: ConfigError for an empty target, an entry 0 or < −1, two −1, or an element count that differs
/// from the input's (both shapes named).
class ReshapeImpl : public Layer {
  TORCHFIT_LAYER_CLASS(Reshape);

 public:
  /// ONNX: (Transpose to N, H, W, C) → Reshape → (Transpose back) (its source file writes it).
  std::string export_onnx(io::OnnxGraph& graph, const std::vector<std::string>& inputs) const override;
  /// True: its Reshape node holds the built target shape.
  bool onnx_holds_built_size() const override { return true; }
  explicit ReshapeImpl(ReshapeOptions options);
  at::Tensor forward(const at::Tensor& x) override;
  nlohmann::json config() const override;
  ReshapeOptions options;

 protected:
  Shape build_impl(const Shape& input_shape) override;

 private:
  std::vector<int64_t> channels_last_target_;  // (N, target...) with N = −1
};
TORCH_MODULE(Reshape);

}  // namespace torchfit
