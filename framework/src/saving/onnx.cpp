#include <torchfit/saving/onnx.h>

#include <cstring>
#include <map>

#include <torchfit/error.h>
#include <torchfit/io/atomic_file.h>
#include <torchfit/layers/shape.h>

#include "saving/onnx_layers.h"
#include "saving/onnx_proto.h"

namespace torchfit::saving {

namespace {

// ONNX enums (onnx.proto): TensorProto.DataType and AttributeProto.AttributeType.
constexpr int64_t kOnnxFloat = 1, kOnnxInt64 = 7;
constexpr int64_t kAttrFloat = 1, kAttrInt = 2, kAttrString = 3, kAttrFloats = 6, kAttrInts = 7;
// IR version 8 (ONNX 1.10–1.12) reads opsets up to 17.
constexpr int64_t kIrVersion = 8;

proto::Writer attribute_proto(const OnnxAttribute& a) {
  proto::Writer w;
  w.bytes(1, a.name);
  if (const auto* i = std::get_if<int64_t>(&a.value)) {
    w.varint(3, *i).varint(20, kAttrInt);
  } else if (const auto* f = std::get_if<float>(&a.value)) {
    w.float32(2, *f).varint(20, kAttrFloat);
  } else if (const auto* s = std::get_if<std::string>(&a.value)) {
    w.bytes(4, *s).varint(20, kAttrString);
  } else if (const auto* is = std::get_if<std::vector<int64_t>>(&a.value)) {
    w.varints(8, *is).varint(20, kAttrInts);
  } else {
    for (float v : std::get<std::vector<float>>(a.value)) w.float32(7, v);
    w.varint(20, kAttrFloats);
  }
  return w;
}

bool little_endian() {
  const uint32_t one = 1;
  unsigned char first = 0;
  std::memcpy(&first, &one, 1);
  return first == 1;
}

// ValueInfoProto of a float32 tensor (batch_dim, dims...); a non-empty params[i] names dims[i] (dynamic).
std::string value_info(const std::string& name, const std::string& batch_dim, const Shape& dims,
                       const std::vector<std::string>& params = {}) {
  proto::Writer shape;
  shape.message(1, proto::Writer().bytes(2, batch_dim));
  for (size_t i = 0; i < dims.size(); ++i) {
    if (i < params.size() && !params[i].empty()) {
      shape.message(1, proto::Writer().bytes(2, params[i]));
    } else {
      shape.message(1, proto::Writer().varint(1, dims[i]));
    }
  }
  proto::Writer tensor_type;
  tensor_type.varint(1, kOnnxFloat).message(2, shape);
  proto::Writer type;
  type.message(1, tensor_type);
  proto::Writer info;
  info.bytes(1, name).message(2, type);
  return info.data();
}

std::string layer_text(const Layer& layer) { return "layer '" + layer.name() + "' (" + layer.class_name() + ")"; }

// The ONNX name of each node's output, filled in topological order.
using ValueNames = std::map<const Node*, std::string>;

// A layer whose ONNX nodes hold sizes of the input it was built for: "same" padding with a stride > 1
// (TensorFlow's padding then depends on the size), AveragePooling2D "same" (its count of real pixels does),
// and the layers whose exporters write their built shapes (Flatten, Reshape, Cropping2D, Conv2DTranspose).
bool exports_built_size(const Layer& layer) {
  const std::string& cls = layer.class_name();
  if (cls == "Flatten" || cls == "Reshape" || cls == "Cropping2D" || cls == "Conv2DTranspose") return true;
  const nlohmann::json c = layer.config();
  if (c.value("padding", std::string()) != "same") return false;
  if (cls == "AveragePooling2D") return true;
  if (!c.contains("strides") || !c["strides"].is_array()) return false;
  for (const auto& s : c["strides"]) {
    if (s.is_number_integer() && s.get<int64_t>() > 1) return true;
  }
  return false;
}

std::string export_node(const Node& node, OnnxGraph& graph, const ValueNames& names) {
  std::vector<std::string> inputs;
  std::vector<Shape> shapes;
  for (const auto& x : node.inputs) {
    inputs.push_back(names.at(x.node().get()));
    shapes.push_back(x.shape());
  }
  if (shapes != node.layer->input_shapes() && exports_built_size(*node.layer)) {
    throw ConfigError("ONNX export: " + layer_text(*node.layer) + " is called on " + format_shape(shapes.at(0)) +
                      " and was built for " + format_shape(node.layer->input_shape()) +
                      "; its ONNX nodes hold sizes of the input it was built for");
  }
  return export_layer(*node.layer, graph, inputs);
}

std::string metadata(const std::string& key, const std::string& value) {
  return proto::Writer().bytes(1, key).bytes(2, value).data();
}

}  // namespace

std::string export_layer(const Layer& layer, OnnxGraph& graph, const std::vector<std::string>& inputs) {
  std::string out = layer.export_onnx(graph, inputs);  // a user layer's hook first
  if (out.empty()) out = detail::export_builtin_layer(layer, graph, inputs);
  if (out.empty()) {
    throw ConfigError("ONNX export: " + layer_text(layer) +
                      " has no ONNX exporter; a layer class of your own exports when it overrides "
                      "Layer::export_onnx (docs/extending.md)");
  }
  return out;
}

OnnxGraph::OnnxGraph(int opset) : opset_(opset) {}

std::string OnnxGraph::unique_name(const std::string& hint) {
  const std::string base = hint.empty() ? "t" : hint;
  std::string name = base;
  for (int i = 1; used_.count(name); ++i) name = base + "_" + std::to_string(i);
  used_.insert(name);
  return name;
}

std::string OnnxGraph::add_node(const std::string& op_type, const std::vector<std::string>& inputs,
                                const std::vector<OnnxAttribute>& attributes, const std::string& name_hint) {
  const std::string out = unique_name(name_hint);
  proto::Writer node;
  for (const auto& in : inputs) node.bytes(1, in);
  node.bytes(2, out).bytes(3, out).bytes(4, op_type);
  for (const auto& a : attributes) node.message(5, attribute_proto(a));
  nodes_.push_back(node.data());
  return out;
}

std::string OnnxGraph::add_initializer(const std::string& name_hint, const at::Tensor& value) {
  if (!value.defined()) throw ConfigError("ONNX export: initializer '" + name_hint + "' is an undefined tensor");
  if (!little_endian()) throw ConfigError("ONNX export: this writer needs a little-endian machine");
  const bool is_float = at::isFloatingType(value.scalar_type());
  if (!is_float && !at::isIntegralType(value.scalar_type(), /*includeBool=*/false)) {
    throw ConfigError("ONNX export: initializer '" + name_hint + "' has an unsupported dtype");
  }
  const auto key = std::make_pair(static_cast<const void*>(value.data_ptr()), value.sizes().vec());
  if (const auto it = written_.find(key); it != written_.end()) return it->second.second;
  const at::Tensor t = value.detach().to(at::kCPU, is_float ? at::kFloat : at::kLong).contiguous();
  const std::string name = unique_name(name_hint);
  written_[key] = {value, name};
  proto::Writer tensor;
  tensor.varints(1, t.sizes().vec()).varint(2, is_float ? kOnnxFloat : kOnnxInt64).bytes(8, name);
  tensor.bytes(9, std::string(static_cast<const char*>(t.data_ptr()), t.numel() * t.element_size()));
  initializers_.push_back(tensor.data());
  return name;
}

std::string OnnxGraph::add_int64s(const std::string& name_hint, const std::vector<int64_t>& values) {
  return add_initializer(name_hint, at::tensor(values, at::kLong));
}

std::string OnnxGraph::add_scalar(const std::string& name_hint, float value) {
  // Shape (1), not 0-D: the same broadcast, and OpenCV 4.6 reads 0-D constants wrongly in some operators.
  return add_initializer(name_hint, at::full({1}, value, at::kFloat));
}

std::string OnnxGraph::add_activation(const std::string& activation, const std::string& x,
                                      const std::string& name_hint) {
  if (activation == "linear") return x;
  static const std::map<std::string, std::string> ops = {
      {"relu", "Relu"}, {"sigmoid", "Sigmoid"}, {"tanh", "Tanh"}, {"softmax", "Softmax"}, {"elu", "Elu"}};
  if (activation == "gelu") {
    // 0.5·x·(1 + erf(x / √2)), Keras's gelu(approximate=False); ONNX has Gelu only from opset 20.
    const std::string scaled =
        add_node("Mul", {x, add_scalar(name_hint + "/inv_sqrt2", 0.70710678118654752f)}, {}, name_hint + "/scaled");
    const std::string erf = add_node("Erf", {scaled}, {}, name_hint + "/erf");
    const std::string one = add_node("Add", {erf, add_scalar(name_hint + "/one", 1.0f)}, {}, name_hint + "/erf1");
    const std::string half = add_node("Mul", {x, add_scalar(name_hint + "/half", 0.5f)}, {}, name_hint + "/half_x");
    return add_node("Mul", {half, one}, {}, name_hint + "/gelu");
  }
  const auto it = ops.find(activation);
  if (it == ops.end()) throw ConfigError("ONNX export: activation '" + activation + "' has no ONNX form here");
  std::vector<OnnxAttribute> attributes;
  if (activation == "softmax") attributes.emplace_back("axis", 1);  // torchfit's softmax(1) (activation_fn.cpp)
  if (activation == "elu") attributes.emplace_back("alpha", 1.0f);
  return add_node(it->second, {x}, attributes, name_hint + "/" + it->second);
}

std::string OnnxGraph::serialize(const std::string& graph_name, const std::vector<std::string>& inputs_proto,
                                 const std::vector<std::string>& outputs_proto) const {
  proto::Writer graph;
  for (const auto& n : nodes_) graph.bytes(1, n);
  graph.bytes(2, graph_name);
  for (const auto& t : initializers_) graph.bytes(5, t);
  for (const auto& i : inputs_proto) graph.bytes(11, i);
  for (const auto& o : outputs_proto) graph.bytes(12, o);
  return graph.data();
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
  const std::string fixed = "; export at a fixed size instead (convert_model --input-size)";
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
    if (in != n->layer->input_shapes() && exports_built_size(*n->layer)) {
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
  torch::NoGradGuard no_grad;
  const std::map<const Node*, Shape> probe = dynamic_shapes(model);
  auto probed = [&](const Node* n) { return probe.empty() ? Shape{} : probe.at(n); };
  OnnxGraph graph(options.opset);
  ValueNames names;
  std::vector<std::string> inputs, outputs;
  for (size_t i = 0; i < model->inputs().size(); ++i) {
    const KerasTensor& x = model->inputs()[i];
    const std::string& layer_name = x.layer() ? x.layer()->name() : std::string();
    const std::string name = graph.unique_name(layer_name.empty() ? "input_" + std::to_string(i + 1) : layer_name);
    names[x.node().get()] = name;
    inputs.push_back(value_info(name, options.batch_dim, to_tensor_shape(x.shape()),
                                dim_params(name, x.shape(), probed(x.node().get()))));
  }
  for (const auto& node : model->nodes()) names[node.get()] = export_node(*node, graph, names);
  for (const auto& y : model->outputs()) {
    // Each output is named as its layer ("dense_1"), through an Identity when the layer's last node has
    // another name (its internal "<layer>/<Op>" names, a Dropout passing its input through).
    std::string name = names.at(y.node().get());
    const std::string wanted = y.layer()->name();
    if (name != wanted) name = graph.add_node("Identity", {name}, {}, wanted);
    outputs.push_back(value_info(name, options.batch_dim, to_tensor_shape(y.shape()),
                                 dim_params(name, y.shape(), probed(y.node().get()))));
  }
  proto::Writer m;
  m.varint(1, kIrVersion).bytes(2, "torchfit").bytes(3, TORCHFIT_VERSION);
  m.bytes(6, "Exported by torchfit from model '" + model->model_name() +
                 "'. Inputs: float32 tensors (N, C, H, W) for images ((N, D) for vectors), preprocessed as for "
                 "training (RGB, pixel values times the training rescale, e.g. 1/255).");
  m.bytes(7, graph.serialize(model->model_name(), inputs, outputs));
  m.message(8, proto::Writer().bytes(1, "").varint(2, options.opset));
  m.bytes(14, metadata("torchfit.input_layout", "NCHW"));
  m.bytes(14, metadata("torchfit.keras_input_shape", format_shape(model->inputs()[0].shape())));
  if (!options.class_names.empty()) m.bytes(14, metadata("class_names", nlohmann::json(options.class_names).dump()));
  return m.data();
}

void export_onnx(const Model& model, const std::string& path, const OnnxExportOptions& options) {
  io::write_text_atomically(path, onnx_model_bytes(model, options));
}

}  // namespace torchfit::saving
