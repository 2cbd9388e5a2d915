#include <torchfit/io/onnx_graph.h>

#include <ATen/ATen.h>

#include <torchfit/error.h>

#include "io/protobuf.h"

namespace torchfit::io {

namespace {

// ONNX enums (onnx.proto): TensorProto.DataType and AttributeProto.AttributeType.
constexpr int64_t kOnnxFloat = 1, kOnnxInt64 = 7;
constexpr int64_t kAttrFloat = 1, kAttrInt = 2, kAttrString = 3, kAttrFloats = 6, kAttrInts = 7;
// IR version 8 (ONNX 1.10–1.12) reads opsets up to 17.
constexpr int64_t kIrVersion = 8;

ProtobufWriter attribute_proto(const OnnxAttribute& a) {
  ProtobufWriter w;
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

// ValueInfoProto of a float32 tensor (batch_dim, dims...); a non-empty dim_params[i] names dims[i] (dynamic).
std::string value_info(const OnnxTensorInfo& t) {
  ProtobufWriter shape;
  shape.message(1, ProtobufWriter().bytes(2, t.batch_dim));
  for (size_t i = 0; i < t.dims.size(); ++i) {
    if (i < t.dim_params.size() && !t.dim_params[i].empty()) {
      shape.message(1, ProtobufWriter().bytes(2, t.dim_params[i]));
    } else {
      shape.message(1, ProtobufWriter().varint(1, t.dims[i]));
    }
  }
  ProtobufWriter tensor_type;
  tensor_type.varint(1, kOnnxFloat).message(2, shape);
  ProtobufWriter type;
  type.message(1, tensor_type);
  ProtobufWriter info;
  info.bytes(1, t.name).message(2, type);
  return info.data();
}

}  // namespace

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
  ProtobufWriter node;
  for (const auto& in : inputs) node.bytes(1, in);
  node.bytes(2, out).bytes(3, out).bytes(4, op_type);
  for (const auto& a : attributes) node.message(5, attribute_proto(a));
  nodes_.push_back(node.data());
  return out;
}

std::string OnnxGraph::add_initializer(const std::string& name_hint, const at::Tensor& value) {
  if (!value.defined()) throw ConfigError("ONNX export: initializer '" + name_hint + "' is an undefined tensor");
  const bool is_float = at::isFloatingType(value.scalar_type());
  if (!is_float && !at::isIntegralType(value.scalar_type(), /*includeBool=*/false)) {
    throw ConfigError("ONNX export: initializer '" + name_hint + "' has an unsupported dtype");
  }
  const auto key = std::make_pair(static_cast<const void*>(value.data_ptr()), value.sizes().vec());
  if (const auto it = written_.find(key); it != written_.end()) return it->second.second;
  const at::Tensor t = value.detach().to(at::kCPU, is_float ? at::kFloat : at::kLong).contiguous();
  const std::string name = unique_name(name_hint);
  written_[key] = {value, name};
  std::string raw;
  append_little_endian(raw, t.data_ptr(), static_cast<size_t>(t.numel()), t.element_size());
  ProtobufWriter tensor;
  tensor.varints(1, t.sizes().vec()).varint(2, is_float ? kOnnxFloat : kOnnxInt64).bytes(8, name).bytes(9, raw);
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

std::string OnnxGraph::model_bytes(const std::string& graph_name, const std::vector<OnnxTensorInfo>& inputs,
                                   const std::vector<OnnxTensorInfo>& outputs, const OnnxModelInfo& info) const {
  ProtobufWriter graph;
  for (const auto& n : nodes_) graph.bytes(1, n);
  graph.bytes(2, graph_name);
  for (const auto& t : initializers_) graph.bytes(5, t);
  for (const auto& i : inputs) graph.bytes(11, value_info(i));
  for (const auto& o : outputs) graph.bytes(12, value_info(o));
  ProtobufWriter m;
  m.varint(1, kIrVersion).bytes(2, info.producer_name).bytes(3, info.producer_version);
  m.bytes(6, info.doc_string);
  m.message(7, graph);
  m.message(8, ProtobufWriter().bytes(1, "").varint(2, opset_));
  for (const auto& [key, value] : info.metadata) m.message(14, ProtobufWriter().bytes(1, key).bytes(2, value));
  return m.data();
}

}  // namespace torchfit::io
