#pragma once
/// @file keras_tensor.h
/// Symbolic tensors of the functional API (as Keras's KerasTensor): what Input() returns and what calling
/// a layer on symbolic tensors (Layer::call) returns. They hold no data, only the per-sample shape (Keras
/// order, batch excluded) and where they come from (Keras's `_keras_history`: layer, node, tensor index).
#include <memory>
#include <string>
#include <vector>

#include <torchfit/layers/shape.h>

namespace torchfit {

class Layer;
struct Node;

/// A symbolic tensor: the output `tensor_index` of one call (`node`) of a layer. Copies share the node.
/// A default-constructed KerasTensor is empty (defined() false).
class KerasTensor {
 public:
  KerasTensor() = default;
  KerasTensor(std::shared_ptr<Node> node, int tensor_index, Shape shape)
      : node_(std::move(node)), tensor_index_(tensor_index), shape_(std::move(shape)) {}

  bool defined() const { return node_ != nullptr; }
  /// Per-sample shape, Keras order ((H, W, C) or (D)), batch excluded.
  const Shape& shape() const { return shape_; }
  /// The node (layer call) that produced this tensor.
  const std::shared_ptr<Node>& node() const { return node_; }
  /// The producing layer (an InputLayer for Input()).
  const std::shared_ptr<Layer>& layer() const;
  /// Index of the producing call among the layer's calls (0 for the first).
  int node_index() const;
  /// Index of this tensor among the node's outputs (0: torchfit's layers have one output).
  int tensor_index() const { return tensor_index_; }
  /// "<layer name>[node][tensor]", Keras's `Connected to` spelling.
  std::string describe() const;

 private:
  std::shared_ptr<Node> node_;
  int tensor_index_ = 0;
  Shape shape_;
};

/// One call of a layer on symbolic tensors (Keras's Node): the layer, its inputs (empty for an
/// InputLayer) and its output shapes. Nodes point only backwards (to their inputs), so a graph built
/// through the API has no cycle and no ownership loop.
struct Node {
  std::shared_ptr<Layer> layer;
  std::vector<KerasTensor> inputs;
  std::vector<Shape> output_shapes;
  /// Index of this call among the layer's calls.
  int node_index = 0;
};

}  // namespace torchfit
