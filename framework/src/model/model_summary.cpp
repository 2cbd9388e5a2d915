// Keras's functional summary layout (tf.keras 2.4–2.10 print_summary with print_layer_summary_with_connections).
#include <torchfit/model/model.h>

#include <sstream>

#include "summary_text.h"

namespace torchfit {

std::string ModelImpl::functional_summary(int line_length) const {
  using summary_text::row;
  using summary_text::thousands;
  // Keras: positions [.33, .55, .67, 1.] of line_length → 32, 53, 65, 98 for 98.
  const std::vector<int> pos = {static_cast<int>(line_length * 0.33), static_cast<int>(line_length * 0.55),
                                static_cast<int>(line_length * 0.67), line_length};
  // Each layer's nodes in this model, in order.
  std::map<const Layer*, std::vector<const Node*>> nodes_of;
  for (const auto& x : inputs()) nodes_of[x.layer().get()].push_back(x.node().get());
  for (const auto& [node, index] : local_index_) {
    if (!node->inputs.empty()) nodes_of[node->layer.get()].push_back(node);
  }
  for (auto& [layer, list] : nodes_of) {
    std::sort(list.begin(), list.end(),
              [this](const Node* a, const Node* b) { return local_node_index(a) < local_node_index(b); });
  }
  const std::string rule(static_cast<size_t>(line_length), '_');
  std::ostringstream os;
  os << "Model: \"" << name_ << "\"\n" << rule << "\n";
  os << row({"Layer (type)", "Output Shape", "Param #", "Connected to"}, pos) << "\n";
  os << std::string(static_cast<size_t>(line_length), '=') << "\n";
  for (size_t i = 0; i < layers_.size(); ++i) {
    const auto& l = layers_[i];
    const auto& nodes = nodes_of[l.get()];
    std::vector<std::string> connections;
    for (const Node* n : nodes) {
      for (const auto& x : n->inputs) {
        connections.push_back(x.layer()->name() + "[" + std::to_string(local_node_index(x.node().get())) + "][" +
                              std::to_string(x.tensor_index()) + "]");
      }
    }
    // Keras prints an InputLayer's output shape as a list, and "multiple" for a layer called twice.
    std::string shape = nodes.size() > 1 ? "multiple" : format_shape(l->output_shape());
    if (l->class_name() == "InputLayer") shape = "[" + shape + "]";
    os << row({l->name() + " (" + l->class_name() + ")", shape, std::to_string(l->count_params()),
               connections.empty() ? "" : connections[0]},
              pos)
       << "\n";
    for (size_t c = 1; c < connections.size(); ++c) os << row({"", "", "", connections[c]}, pos) << "\n";
    os << std::string(static_cast<size_t>(line_length), i + 1 == layers_.size() ? '=' : '_') << "\n";
  }
  os << "Total params: " << thousands(count_params()) << "\n";
  os << "Trainable params: " << thousands(trainable_params()) << "\n";
  os << "Non-trainable params: " << thousands(non_trainable_params()) << "\n";
  if (dtype_policy().is_mixed()) os << "Dtype policy: " << dtype_policy().name() << "\n";
  os << rule << "\n";
  return os.str();
}

}  // namespace torchfit
