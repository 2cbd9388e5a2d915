#pragma once
/// @file onnx.h
/// Export a torchfit model (Sequential or functional, trained here or imported from Keras) to ONNX: an
/// inference graph any ONNX runtime runs (checked with OpenCV DNN 4.6 and ONNX 1.12's checker,
/// docs/deployment.md).
///
/// The graph takes what torchfit's forward takes: one float32 tensor per model input, named as the
/// model's input layer ("input_1"), in (N, C, H, W) order for an image model ((N, D) for a vector model),
/// with a dynamic batch dimension "N", and preprocessed as for training (predict_cnn: RGB, pixels × 1/255
/// unless the model rescales itself). Outputs are named as the output layers, (N, classes) probabilities
/// for a softmax classifier. Dropout is left out, BatchNormalization uses its moving statistics,
/// weights are float32 whatever the dtype policy. The ONNX file is written by a small protobuf writer of
/// torchfit's own (no libprotobuf/libonnx link; docs/deployment.md says why).
#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <variant>
#include <vector>

#include <torchfit/model/model.h>

namespace torchfit::saving {

/// Options of export_onnx.
struct OnnxExportOptions {
  /// ONNX default-domain opset, 13 to 17 (ONNX 1.12 knows up to 17). 17 writes LayerNormalization as one
  /// node; below 17 it is decomposed. Errors: ConfigError for another value.
  int opset = 17;
  /// Class names in index order, written to the model's metadata ("class_names", a JSON list) so a
  /// deployment can name its predictions; empty ⇒ none written.
  std::vector<std::string> class_names;
  /// Dimension name of the batch axis (dynamic).
  std::string batch_dim = "N";
};

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

/// The ONNX graph being written; a layer's exporter (Layer::export_onnx, docs/extending.md) appends its
/// nodes and weights through it. Tensor names are made unique here: every add_* returns the name it used.
class OnnxGraph {
 public:
  explicit OnnxGraph(int opset);
  int opset() const { return opset_; }

  /// Appends a node `op_type` (ONNX default domain) reading `inputs` ("" = an omitted optional input)
  /// and returns its (single) output's name, `name_hint` made unique.
  std::string add_node(const std::string& op_type, const std::vector<std::string>& inputs,
                       const std::vector<OnnxAttribute>& attributes, const std::string& name_hint);
  /// A weight or constant (an initializer): float tensors are written as float32, integer ones as int64.
  /// Returns its unique name; the same tensor added again (a shared layer called twice) is written once
  /// and gets its first name. Errors: ConfigError for another dtype or an undefined tensor.
  std::string add_initializer(const std::string& name_hint, const at::Tensor& value);
  /// An int64 1-D constant (shapes, pads, axes).
  std::string add_int64s(const std::string& name_hint, const std::vector<int64_t>& values);
  /// A float32 scalar constant, shape (1) (broadcasts as a scalar).
  std::string add_scalar(const std::string& name_hint, float value);
  /// Appends Keras activation `activation` ("linear", "relu", "sigmoid", "tanh", "softmax" over tensor
  /// axis 1, "elu", "gelu") applied to `x`; returns the output name ("linear": x itself).
  /// Errors: ConfigError naming an activation it cannot write.
  std::string add_activation(const std::string& activation, const std::string& x, const std::string& name_hint);

  /// A name not used yet, from `hint` ("conv2d", "conv2d_1", …).
  std::string unique_name(const std::string& hint);
  /// The serialized GraphProto (inputs/outputs added by the exporter), for the ModelProto.
  std::string serialize(const std::string& graph_name, const std::vector<std::string>& inputs_proto,
                        const std::vector<std::string>& outputs_proto) const;
  /// Number of nodes so far.
  size_t node_count() const { return nodes_.size(); }

 private:
  int opset_;
  std::set<std::string> used_;
  std::vector<std::string> nodes_;         // serialized NodeProtos
  std::vector<std::string> initializers_;  // serialized TensorProtos
  // Tensors already written, by storage address and shape; the tensor is kept so the address stays its own.
  std::map<std::pair<const void*, std::vector<int64_t>>, std::pair<at::Tensor, std::string>> written_;
};

/// Appends `layer` (built, as called on `inputs`) to `graph`: its export_onnx hook when it has one, else
/// torchfit's exporter of its built-in class; returns the output's name. A composite layer of your own
/// calls it for its inner layers. Errors: ConfigError naming the layer and its class when neither exists.
std::string export_layer(const Layer& layer, OnnxGraph& graph, const std::vector<std::string>& inputs);

/// The ONNX ModelProto bytes of `model` (see the file comment for the graph's interface).
/// Errors: ConfigError naming the layer and its class for a layer that cannot be exported (a user layer
/// without an export_onnx hook, a Keras option ONNX cannot express), and for an opset outside 13–17.
std::string onnx_model_bytes(const Model& model, const OnnxExportOptions& options = {});

/// Writes `model` as an ONNX file at `path` (atomically). Errors: as onnx_model_bytes; IoError naming
/// the path when it cannot be written.
void export_onnx(const Model& model, const std::string& path, const OnnxExportOptions& options = {});

}  // namespace torchfit::saving
