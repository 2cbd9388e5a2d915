#pragma once
// Where Keras's files keep a layer's variables, shared by the writers (keras_save.cpp) and the Keras 3
// reader (keras_file.cpp). Private to keras/.
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <torchfit/layers/layer.h>

namespace torchfit::keras::detail {

/// Keras 3 keeps a recurrent layer's variables in its cell (saved as the child `cell`), tf.keras 2 names them
/// "<layer>/<class>_cell/<weight>:0".
inline bool weights_in_cell(const Layer& layer) {
  const std::string& c = layer.class_name();
  return c == "SimpleRNN" || c == "LSTM" || c == "GRU";
}

/// A wrapper's layers under Keras 3's attribute names, in its Keras weight order: the children of `layer`
/// that are layers (Bidirectional's forward_layer and backward_layer, TimeDistributed's layer); none for
/// other layers.
inline std::vector<std::pair<std::string, std::shared_ptr<Layer>>> wrapped_layers(const Layer& layer) {
  std::vector<std::pair<std::string, std::shared_ptr<Layer>>> out;
  // The wrappers only: a layer built of sublayers (MultiHeadAttention's projections) keeps its own weight names.
  if (layer.class_name() != "Bidirectional" && layer.class_name() != "TimeDistributed") return out;
  for (const auto& item : layer.named_children()) {
    if (auto l = std::dynamic_pointer_cast<Layer>(item.value())) out.emplace_back(item.key(), std::move(l));
  }
  return out;
}

/// The folders of `layer`'s variables below its own group in a Keras 3 .weights.h5, in Keras's weight
/// order: "vars", a recurrent layer's "cell/vars", a wrapper's its layers' under their attribute names
/// ("forward_layer/cell/vars", "backward_layer/cell/vars"; "layer/vars").
inline std::vector<std::string> keras3_variable_folders(const Layer& layer, const std::string& prefix = "") {
  const auto inner = wrapped_layers(layer);
  if (inner.empty()) return {prefix + (weights_in_cell(layer) ? "cell/vars" : "vars")};
  std::vector<std::string> out;
  for (const auto& [attr, l] : inner) {
    for (auto& f : keras3_variable_folders(*l, prefix + attr + "/")) out.push_back(std::move(f));
  }
  return out;
}

}  // namespace torchfit::keras::detail
