#pragma once
/// @file sequential.h
/// Sequential — a linear stack of layers, as keras.Sequential: a Model (model.h) whose graph is a chain.
#include <memory>
#include <string>
#include <vector>

#include <torchfit/model/model.h>

namespace torchfit {

/// A linear stack of layers: a Model whose graph is a chain from one input to one output.
///
/// The first layer must declare `input_shape` (Keras order (H, W, C), batch excluded), or be an
/// InputLayer; each add() builds the new layer from the previous output shape at once, so shape errors
/// surface at add() naming the layer. Automatic names follow Keras (conv2d, conv2d_1, …, counted per class
/// within this model); user-given names must be unique. forward() takes (N, C, H, W) tensors.
/// Everything of ModelImpl applies (forward, summary, memory format, dtype policy, …); summary() keeps
/// the Sequential layout and to_json() the Sequential format.
class SequentialImpl : public ModelImpl {
 public:
  explicit SequentialImpl(std::string name = "sequential");

  /// Appends a layer (any Layer subclass or its ModuleHolder). Errors: ConfigError when the first layer
  /// has no input_shape, a name is taken, or the layer cannot be built for the previous output shape.
  void add(std::shared_ptr<Layer> layer);
  template <typename Holder, typename = decltype(std::declval<Holder>().ptr())>
  void add(const Holder& holder) {
    add(std::static_pointer_cast<Layer>(holder.ptr()));
  }

  /// The Keras 2.6 Sequential summary text (layout in docs/keras_semantics.md), ending with a newline;
  /// line_length 0 = 65.
  std::string summary(int line_length = 0) const override;

  /// Architecture as JSON (Keras model.to_json analogue): {"format_version", "class_name": "Sequential",
  /// "config": {"name", "layers": [{"class_name", "config"}, …], "dtype_policy"}}.
  nlohmann::json to_json() const override;
  /// Rebuilds a model from torchfit's own Sequential JSON (to_json() output: layer specs in torchfit's
  /// form). Keras 1/2/3 configs (an InputLayer first, Keras 1's bare list, Keras 3's modules) go through
  /// model_from_json (model/keras_json.h), which translates them and then calls this. Errors:
  /// ConfigError naming an unknown layer class or a bad field.
  static std::shared_ptr<SequentialImpl> from_json(const nlohmann::json& json);

 private:
  KerasTensor input_, output_;
};
TORCH_MODULE(Sequential);

}  // namespace torchfit
