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
#include <string>
#include <vector>

#include <torchfit/io/onnx_graph.h>
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
  /// The input preprocessing the model was trained with (CheckpointInfo::preprocessing: {"rescale": F,
  /// "samplewise_center": B, ...}), written to the metadata ("preprocessing", JSON) so a deployment feeds
  /// pixels as training did; null ⇒ none written.
  nlohmann::json preprocessing = nullptr;
  /// Dimension name of the batch axis (dynamic).
  std::string batch_dim = "N";
};

/// The graph builder and its attribute type live on the ground floor (io/onnx_graph.h), where every
/// layer's exporter reaches them; these names keep code written against saving/ compiling.
using OnnxAttribute = io::OnnxAttribute;
using OnnxGraph = io::OnnxGraph;

/// Appends `layer` (built, as called on `inputs`) to `graph` through its Layer::export_onnx (every built-in
/// layer has one; docs/extending.md for your own) and returns the output's name. A composite layer calls it
/// for its inner layers. Errors: ConfigError naming the layer and its class when it is not built or has no
/// exporter (with the reason the class declares, Layer::no_onnx_export_reason).
std::string export_layer(const Layer& layer, OnnxGraph& graph, const std::vector<std::string>& inputs);

/// The ONNX ModelProto bytes of `model` (see the file comment for the graph's interface).
/// Errors: ConfigError naming the layer and its class for a layer that cannot be exported (a user layer
/// without an export_onnx hook, a Keras option ONNX cannot express), and for an opset outside 13–17.
std::string onnx_model_bytes(const Model& model, const OnnxExportOptions& options = {});

/// Writes `model` as an ONNX file at `path` (atomically). Errors: as onnx_model_bytes; IoError naming
/// the path when it cannot be written.
void export_onnx(const Model& model, const std::string& path, const OnnxExportOptions& options = {});

}  // namespace torchfit::saving
