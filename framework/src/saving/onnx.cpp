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
  std::vector<Shape> shapes;
  for (const auto& x : node.inputs) {
    inputs.push_back(names.at(x.node().get()));
    shapes.push_back(x.shape());
  }
  if (shapes != node.layer->input_shapes() && node.layer->onnx_holds_built_size()) {
    throw ConfigError("ONNX export: " + layer_text(*node.layer) + " is called on " + format_shape(shapes.at(0)) +
                      " and was built for " + format_shape(node.layer->input_shape()) +
                      "; its ONNX nodes hold sizes of the input it was built for");
  }
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
  if (!options.preprocessing.is_null()) info.metadata.emplace_back("preprocessing", options.preprocessing.dump());
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

namespace {

// For a model with inputs of unknown size (InputLayerOptions::unknown_axes): each node's output shape at
// twice the built size, so the dims that follow the input size are written as dim_param. Empty for a model
// of fixed size. Errors: ConfigError naming a layer whose output cannot follow the size in the ONNX graph.
std::map<const Node*, Shape> dynamic_shapes(const Model& model) {
  std::vector<Shape> probe;
  bool dynamic = false;
  for (size_t i = 0; i < model->inputs().size(); ++i) {
    Shape s = model->inputs()[i].shape();
    for (int64_t a : model->unknown_input_axes(i)) s.at(static_cast<size_t>(a)) *= 2;
    dynamic = dynamic || s != model->inputs()[i].shape();
    probe.push_back(std::move(s));
  }
  if (!dynamic) return {};
  const std::string fixed =
      "; export the model built at a fixed input size instead (convert_model --input-size N, or an InputSize when it "
      "is loaded)";
  std::map<const Node*, Shape> shapes;
  try {
    Model shared = model;  // shapes_for remembers the shapes it checked
    shapes = shared->shapes_for(probe);
  } catch (const ConfigError& e) {
    throw ConfigError(std::string("ONNX export with a dynamic height and width: ") + e.what() + fixed);
  }
  for (const auto& n : model->nodes()) {
    const Shape& at_probe = shapes.at(n.get());
    if (at_probe.size() < 3 && at_probe != n->output_shapes[0]) {
      throw ConfigError("ONNX export with a dynamic height and width: " + layer_text(*n->layer) + "'s output " +
                        format_shape(n->output_shapes[0]) + " follows the image size" + fixed);
    }
    std::vector<Shape> in;
    for (const auto& x : n->inputs) in.push_back(shapes.at(x.node().get()));
    if (in != n->layer->input_shapes() && n->layer->onnx_holds_built_size()) {
      throw ConfigError("ONNX export with a dynamic height and width: " + layer_text(*n->layer) +
                        "'s ONNX nodes hold sizes of the input it was built for" + fixed);
    }
  }
  return shapes;
}

// dim_param names for the tensor dims (batch excluded, (C, H, W) order) where `probe` differs from `built`.
std::vector<std::string> dim_params(const std::string& tensor, const Shape& built, const Shape& probe) {
  std::vector<std::string> params;
  if (probe.empty()) return params;
  const Shape a = to_tensor_shape(built), b = to_tensor_shape(probe);
  static const char* const kImage[] = {"channels", "height", "width"};
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i] == b[i]) {
      params.emplace_back();
    } else {
      params.push_back(a.size() == 3 ? tensor + "_" + kImage[i] : tensor + "_d" + std::to_string(i + 1));
    }
  }
  return params;
}
}  // namespace

std::string onnx_model_bytes(const Model& model, const OnnxExportOptions& options) {
  if (options.opset < 13 || options.opset > 17) {
    throw ConfigError("ONNX export: opset " + std::to_string(options.opset) + " is not supported (13 to 17)");
  }
  if (model.is_empty() || model->inputs().empty()) throw ConfigError("ONNX export: the model is empty");
  if (const auto m = model->masked_consumers(); !m.empty()) {
    throw ConfigError("ONNX export: layer '" + m[0]->layer->name() + "' (" + m[0]->layer->class_name() +
                      ") computes with a Keras mask (Embedding mask_zero, Masking), which has no ONNX form here");
  }
  torch::NoGradGuard no_grad;
  const std::map<const Node*, Shape> probe = dynamic_shapes(model);
  auto probed = [&](const Node* n) { return probe.empty() ? Shape{} : probe.at(n); };
  OnnxGraph graph(options.opset);
  ValueNames names;
  std::vector<io::OnnxTensorInfo> inputs, outputs;
  for (size_t i = 0; i < model->inputs().size(); ++i) {
    const KerasTensor& x = model->inputs()[i];
    const std::string& layer_name = x.layer() ? x.layer()->name() : std::string();
    const std::string name = graph.unique_name(layer_name.empty() ? "input_" + std::to_string(i + 1) : layer_name);
    names[x.node().get()] = name;
    inputs.push_back(
        {name, options.batch_dim, to_tensor_shape(x.shape()), dim_params(name, x.shape(), probed(x.node().get()))});
  }
  for (const auto& node : model->nodes()) names[node.get()] = export_node(*node, graph, names);
  for (const auto& y : model->outputs()) {
    // Each output is named as its layer ("dense_1"), through an Identity when the layer's last node has
    // another name (its internal "<layer>/<Op>" names, a Dropout passing its input through).
    std::string name = names.at(y.node().get());
    const std::string wanted = y.layer()->name();
    if (name != wanted) name = graph.add_node("Identity", {name}, {}, wanted);
    outputs.push_back(
        {name, options.batch_dim, to_tensor_shape(y.shape()), dim_params(name, y.shape(), probed(y.node().get()))});
  }
  return graph.model_bytes(model->model_name(), inputs, outputs, model_info(model, options));
}

void export_onnx(const Model& model, const std::string& path, const OnnxExportOptions& options) {
  io::write_text_atomically(path, onnx_model_bytes(model, options));
}

}  // namespace torchfit::saving
