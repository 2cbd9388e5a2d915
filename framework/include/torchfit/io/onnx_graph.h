#pragma once
/// @file onnx_graph.h
/// The ONNX graph being written (onnx/onnx.proto, ONNX 1.12, IR version 8): nodes of the default domain,
/// initializers (weights and constants), the graph's inputs and outputs, and the ModelProto around them,
/// serialized by torchfit's own protobuf writer (no libprotobuf/libonnx link; docs/deployment.md).
/// Each layer appends its own nodes (Layer::export_onnx, layers/layer.h; docs/extending.md);
/// saving::export_onnx (saving/onnx.h) walks a model's graph and writes the file.
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include <ATen/core/Tensor.h>

namespace torchfit::io {

/// One ONNX node attribute (name and value: int, float, string, ints or floats).
struct OnnxAttribute {
  using Value = std::variant<int64_t, float, std::string, std::vector<int64_t>, std::vector<float>>;
  std::string name;
  Value value;
  OnnxAttribute(std::string n, int64_t v) : name(std::move(n)), value(v) {}
  OnnxAttribute(std::string n, int v) : name(std::move(n)), value(static_cast<int64_t>(v)) {}
  OnnxAttribute(std::string n, float v) : name(std::move(n)), value(v) {}
  OnnxAttribute(std::string n, double v) : name(std::move(n)), value(static_cast<float>(v)) {}
  OnnxAttribute(std::string n, std::string v) : name(std::move(n)), value(std::move(v)) {}
  OnnxAttribute(std::string n, const char* v) : name(std::move(n)), value(std::string(v)) {}
  OnnxAttribute(std::string n, std::vector<int64_t> v) : name(std::move(n)), value(std::move(v)) {}
  OnnxAttribute(std::string n, std::vector<float> v) : name(std::move(n)), value(std::move(v)) {}
};

/// A float32 graph input or output: its name and shape, a dynamic first dimension named `batch_dim`
/// followed by `dims`; a non-empty `dim_params[i]` makes dims[i] dynamic under that name (an image of
/// unknown height and width).
struct OnnxTensorInfo {
  std::string name;
  std::string batch_dim;
  std::vector<int64_t> dims;
  std::vector<std::string> dim_params = {};
};

/// What a ModelProto holds besides its graph: producer, documentation and metadata_props (in order).
struct OnnxModelInfo {
  std::string producer_name;
  std::string producer_version;
  std::string doc_string;
  std::vector<std::pair<std::string, std::string>> metadata;
};

/// The ONNX graph being written; a layer's exporter (Layer::export_onnx) appends its nodes and weights
/// through it. Tensor names are made unique here: every add_* returns the name it used.
class OnnxGraph {
 public:
  /// `opset`: the default domain's opset the nodes are written for (saving::export_onnx takes 13 to 17).
  explicit OnnxGraph(int opset);
  int opset() const { return opset_; }

  /// Appends a node `op_type` (ONNX default domain) reading `inputs` ("" = an omitted optional input)
  /// and returns its (single) output's name, `name_hint` made unique.
  std::string add_node(const std::string& op_type, const std::vector<std::string>& inputs,
                       const std::vector<OnnxAttribute>& attributes, const std::string& name_hint);
  /// A weight or constant (an initializer): float tensors are written as float32, integer ones as int64
  /// (raw little-endian data). Returns its unique name; the same tensor added again (a shared layer called
  /// twice) is written once and gets its first name. Errors: ConfigError for another dtype or an
  /// undefined tensor.
  std::string add_initializer(const std::string& name_hint, const at::Tensor& value);
  /// An int64 1-D constant (shapes, pads, axes).
  std::string add_int64s(const std::string& name_hint, const std::vector<int64_t>& values);
  /// A float32 scalar constant, shape (1) (broadcasts as a scalar).
  std::string add_scalar(const std::string& name_hint, float value);
  /// Appends Keras activation `activation` (every name of layers/activation_fn.h; softmax and log_softmax
  /// over tensor axis 1) applied to `x`, in operators of opsets 13..17; returns the output name ("linear":
  /// x itself). Errors: ConfigError naming an activation it cannot write.
  std::string add_activation(const std::string& activation, const std::string& x, const std::string& name_hint);

  /// A name not used yet, from `hint` ("conv2d", "conv2d_1", …).
  std::string unique_name(const std::string& hint);
  /// Number of nodes so far.
  size_t node_count() const { return nodes_.size(); }

  /// The ModelProto bytes: IR version 8, `info`, this graph named `graph_name` with `inputs` and
  /// `outputs` (names already in the graph), and the default domain at opset().
  std::string model_bytes(const std::string& graph_name, const std::vector<OnnxTensorInfo>& inputs,
                          const std::vector<OnnxTensorInfo>& outputs, const OnnxModelInfo& info) const;

 private:
  int opset_;
  std::set<std::string> used_;
  std::vector<std::string> nodes_;         // serialized NodeProtos
  std::vector<std::string> initializers_;  // serialized TensorProtos
  // Tensors already written, by storage address and shape; the tensor is kept so the address stays its own.
  std::map<std::pair<const void*, std::vector<int64_t>>, std::pair<at::Tensor, std::string>> written_;
};

}  // namespace torchfit::io
