// ONNX export: walks a model's graph and lets each layer write its own nodes (Layer::export_onnx); the
// graph builder and the protobuf writer are on the ground floor (io/onnx_graph.h).
#include <torchfit/saving/onnx.h>

#include <map>

#include <torchfit/error.h>
#include <torchfit/io/atomic_file.h>
#include <torchfit/layers/shape.h>

namespace torchfit::saving {

namespace {

std::string layer_text(const Layer& layer) { return "layer '" + layer.name() + "' (" + layer.class_name() + ")"; }

// The ONNX name of each node's output, filled in topological order.
using ValueNames = std::map<const Node*, std::string>;

std::string export_node(const Node& node, OnnxGraph& graph, const ValueNames& names) {
  std::vector<std::string> inputs;
  for (const auto& x : node.inputs) inputs.push_back(names.at(x.node().get()));
  return export_layer(*node.layer, graph, inputs);
}

io::OnnxModelInfo model_info(const Model& model, const OnnxExportOptions& options) {
  io::OnnxModelInfo info;
  info.producer_name = "torchfit";
  info.producer_version = TORCHFIT_VERSION;
  info.doc_string = "Exported by torchfit from model '" + model->model_name() +
                    "'. Inputs: float32 tensors (N, C, H, W) for images ((N, D) for vectors), preprocessed as for "
                    "training (RGB, pixel values times the training rescale, e.g. 1/255).";
  info.metadata = {{"torchfit.input_layout", "NCHW"},
                   {"torchfit.keras_input_shape", format_shape(model->inputs()[0].shape())}};
  if (!options.class_names.empty())
    info.metadata.emplace_back("class_names", nlohmann::json(options.class_names).dump());
  return info;
}

}  // namespace

std::string export_layer(const Layer& layer, OnnxGraph& graph, const std::vector<std::string>& inputs) {
  if (!layer.built()) throw ConfigError("ONNX export: " + layer_text(layer) + " is not built");
  const std::string out = layer.export_onnx(graph, inputs);
  if (!out.empty()) return out;
  const std::string reason = layer.no_onnx_export_reason();
  if (!reason.empty()) throw ConfigError("ONNX export: " + layer_text(layer) + " has no ONNX form: " + reason);
  throw ConfigError("ONNX export: " + layer_text(layer) +
                    " has no ONNX exporter; a layer class of your own exports when it overrides "
                    "Layer::export_onnx (docs/extending.md)");
}

std::string onnx_model_bytes(const Model& model, const OnnxExportOptions& options) {
  if (options.opset < 13 || options.opset > 17) {
    throw ConfigError("ONNX export: opset " + std::to_string(options.opset) + " is not supported (13 to 17)");
  }
  if (model.is_empty() || model->inputs().empty()) throw ConfigError("ONNX export: the model is empty");
  torch::NoGradGuard no_grad;
  OnnxGraph graph(options.opset);
  ValueNames names;
  std::vector<io::OnnxTensorInfo> inputs, outputs;
  for (size_t i = 0; i < model->inputs().size(); ++i) {
    const KerasTensor& x = model->inputs()[i];
    const std::string& layer_name = x.layer() ? x.layer()->name() : std::string();
    const std::string name = graph.unique_name(layer_name.empty() ? "input_" + std::to_string(i + 1) : layer_name);
    names[x.node().get()] = name;
    inputs.push_back({name, options.batch_dim, to_tensor_shape(x.shape())});
  }
  for (const auto& node : model->nodes()) names[node.get()] = export_node(*node, graph, names);
  for (const auto& y : model->outputs()) {
    // Each output is named as its layer ("dense_1"), through an Identity when the layer's last node has
    // another name (its internal "<layer>/<Op>" names, a Dropout passing its input through).
    std::string name = names.at(y.node().get());
    const std::string wanted = y.layer()->name();
    if (name != wanted) name = graph.add_node("Identity", {name}, {}, wanted);
    outputs.push_back({name, options.batch_dim, to_tensor_shape(y.shape())});
  }
  return graph.model_bytes(model->model_name(), inputs, outputs, model_info(model, options));
}

void export_onnx(const Model& model, const std::string& path, const OnnxExportOptions& options) {
  io::write_text_atomically(path, onnx_model_bytes(model, options));
}

}  // namespace torchfit::saving
