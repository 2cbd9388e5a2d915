#pragma once
/// @file flatten.h
/// Flatten — collapses each sample to a vector, as keras.layers.Flatten (channels-last element order).
#include <torch/arg.h>
#include <torch/nn/pimpl.h>

#include <torchfit/layers/layer.h>

namespace torchfit {

struct FlattenOptions : LayerOptions<FlattenOptions> {
  /// Element order of an image input's vector:
  /// - "channels_last" (default): Keras's order. Keras flattens its (H, W, C) tensor, so element
  ///   (h, w, c) lands at (h·W + w)·C + c — whatever the Keras data_format (Keras's Flatten transposes
  ///   a channels-first input to channels-last first). Keras weights of a following Dense apply as they
  ///   are, through merges and any other path.
  /// - "channels_first": (C, H, W) order, the tensor's own. Only for Keras 1 models with Theano
  ///   ordering (dim_ordering "th", whose Flatten had no transpose) and torchfit checkpoints of format 1
  ///   (written before torchfit flattened in Keras's order). Not a Keras argument: config() writes it
  ///   (as "element_order") only when set, and Keras refuses such a config by name.
  /// Inputs that are not images ((D) or (T, D)) are already in Keras's order; both settings leave them so.
  TORCH_ARG(std::string, element_order) = "channels_last";

 public:
  /// The arguments, each listed once (layer_args.h): config() writes them, the registry reads them.
  template <typename Args>
  void args(Args& a) {
    a("element_order", element_order());
  }
};

/// Flatten: an image (N, C, H, W) [Keras (H, W, C)] → (N, H·W·C) in Keras's (H, W, C) element order
/// (the layer transposes to channels-last, then flattens; one copy of the input); any other input
/// (N, d1, …) → (N, d1·…) in its own order. See FlattenOptions::element_order for the Keras 1 "th"
/// order. Output shape (H·W·C) [or (d1·…)]. No parameters.
/// Errors: ConfigError for an element_order other than "channels_last" or "channels_first".
class FlattenImpl : public Layer {
  TORCHFIT_LAYER_CLASS(Flatten);

 public:
  /// ONNX: (Transpose to N, H, W, C) → Flatten (its source file writes it).
  std::string export_onnx(io::OnnxGraph& graph, const std::vector<std::string>& inputs) const override;
  /// True: the output's length follows the input's size.
  bool onnx_holds_built_size() const override { return true; }
  explicit FlattenImpl(FlattenOptions options = {});
  at::Tensor forward(const at::Tensor& x) override;
  nlohmann::json config() const override;
  /// Whether an image input is transposed to Keras's channels-last order before flattening.
  bool flattens_channels_last() const { return options.element_order() == "channels_last"; }
  FlattenOptions options;

 protected:
  Shape build_impl(const Shape& input_shape) override;
};
TORCH_MODULE(Flatten);

}  // namespace torchfit
