#pragma once
/// @file input_layer.h
/// InputLayer and Input() — the entry of a functional model, as keras.layers.InputLayer / keras.Input.
#include <array>

#include <torch/arg.h>
#include <torch/nn/pimpl.h>

#include <torchfit/layers/layer.h>

namespace torchfit {

/// Options of InputLayer.
struct InputLayerOptions {
  /// Per-sample shape, Keras order ((H, W, C) or (D)), batch excluded. Required.
  TORCH_ARG(std::optional<Shape>, input_shape) = std::nullopt;
  /// Layer name ("" ⇒ automatic: input_1, input_2, … as tf.keras).
  TORCH_ARG(std::string, name) = "";
  /// Axes of input_shape (0-based, batch excluded: 0 = H, 1 = W) that Keras declared None ("unknown
  /// size"): input_shape holds the size the model was built at, config() writes null there, the model
  /// takes inputs of any size there (ModelImpl::check_input_shapes) and the ONNX export can keep them
  /// dynamic. Default: none.
  TORCH_ARG(std::vector<int64_t>, unknown_axes) = {};

 public:
  template <typename Args>
  void args(Args&) {}
};

/// The layer behind Input(): no parameters, forward is the identity on (N, C, H, W) / (N, D) tensors.
/// Config (Keras's): {"name", "batch_input_shape": [null, H, W, C], "dtype": "float32", "sparse": false,
/// "ragged": false}; read also with Keras 3's "batch_shape" or torchfit's "input_shape".
/// Errors: ConfigError when no shape is given or a dimension is not positive.
class InputLayerImpl : public Layer {
  TORCHFIT_LAYER_CLASS(InputLayer);

 public:
  explicit InputLayerImpl(InputLayerOptions options);
  at::Tensor forward(const at::Tensor& x) override { return x; }
  nlohmann::json config() const override;
  /// No node of its own: a model's inputs are the ONNX graph's inputs (saving/onnx.h names them after it).
  std::string no_onnx_export_reason() const override {
    return "a model's inputs are the ONNX graph's inputs, named after their InputLayer";
  }
  InputLayerOptions options;

 protected:
  Shape build_impl(const Shape& input_shape) override;
};
TORCH_MODULE(InputLayer);

/// A symbolic input of per-sample shape `shape` (Keras order, batch excluded: {32, 32, 3} is a
/// (N, 3, 32, 32) tensor), as keras.Input(shape, name=name). Errors: ConfigError for an empty shape or a
/// dimension <= 0.
KerasTensor Input(const Shape& shape, const std::string& name = "");
/// The symbolic tensor an existing InputLayer produces (a new input node; model_from_json, Sequential).
KerasTensor input_tensor_of(const std::shared_ptr<InputLayerImpl>& layer);

/// (height, width) to build an input of unknown size (Keras `(None, None, C)`) at.
using InputSize = std::array<int64_t, 2>;

}  // namespace torchfit
