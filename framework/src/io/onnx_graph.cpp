#include <torchfit/io/onnx_graph.h>

#include <ATen/ATen.h>

#include <functional>
#include <map>

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

namespace {

// The operators of one Keras activation, written into `g` for `x`; `h` is the name hint. Opsets 13..17,
// operators OpenCV 4.6 reads wherever one does (docs/deployment.md).
using ActivationWriter = std::function<std::string(OnnxGraph& g, const std::string& x, const std::string& h)>;

std::string onnx_op(OnnxGraph& g, const std::string& op, const std::string& x, const std::string& h,
                    const std::vector<OnnxAttribute>& attributes = {}) {
  return g.add_node(op, {x}, attributes, h + "/" + op);
}

// relu6: Relu, then min(y, 6) as 6 − relu(6 − y) (as the ReLU layer's max_value): OpenCV 4.6 reads neither
// Clip with min/max inputs (opset ≥ 11) nor Min with a constant; one rounding of 6 − y, |error| ≤ ulp(6).
std::string onnx_relu6(OnnxGraph& g, const std::string& x, const std::string& h) {
  const std::string y = g.add_node("Relu", {x}, {}, h + "/Relu");
  const std::string six = g.add_scalar(h + "/six", 6.0f), minus = g.add_scalar(h + "/minus_one", -1.0f);
  const std::string room = g.add_node("Add", {g.add_node("Mul", {y, minus}, {}, h + "/neg"), six}, {}, h + "/room");
  const std::string cut = g.add_node("Mul", {g.add_node("Relu", {room}, {}, h + "/room_relu"), minus}, {}, h + "/cut");
  return g.add_node("Add", {cut, six}, {}, h + "/relu6");
}

// 0.5·x·(1 + erf(x / √2)), Keras's gelu(approximate=False); ONNX has Gelu only from opset 20.
std::string onnx_gelu(OnnxGraph& g, const std::string& x, const std::string& h) {
  const std::string scaled =
      g.add_node("Mul", {x, g.add_scalar(h + "/inv_sqrt2", 0.70710678118654752f)}, {}, h + "/scaled");
  const std::string erf = g.add_node("Erf", {scaled}, {}, h + "/erf");
  const std::string one = g.add_node("Add", {erf, g.add_scalar(h + "/one", 1.0f)}, {}, h + "/erf1");
  const std::string half = g.add_node("Mul", {x, g.add_scalar(h + "/half", 0.5f)}, {}, h + "/half_x");
  return g.add_node("Mul", {half, one}, {}, h + "/gelu");
}

// x · gate(x): silu (Sigmoid), hard_silu (HardSigmoid; HardSwish is opset 14's), mish (Tanh of Softplus).
std::string onnx_gated(OnnxGraph& g, const std::string& x, const std::string& gate, const std::string& h) {
  return g.add_node("Mul", {x, gate}, {}, h + "/gated");
}

// keras.activations.hard_sigmoid (Keras 3): relu6(x + 3) / 6 = max(0, min(1, x/6 + 1/2)).
const std::vector<OnnxAttribute>& hard_sigmoid_attributes() {
  static const std::vector<OnnxAttribute> a = {{"alpha", 1.0f / 6.0f}, {"beta", 0.5f}};
  return a;
}

const std::map<std::string, ActivationWriter>& activation_writers() {
  using G = OnnxGraph;
  using S = std::string;
  static const std::map<std::string, ActivationWriter> m = {
      {"linear", [](G&, const S& x, const S&) { return x; }},
      {"relu", [](G& g, const S& x, const S& h) { return onnx_op(g, "Relu", x, h); }},
      {"relu6", onnx_relu6},
      {"leaky_relu",
       [](G& g, const S& x, const S& h) {
         return onnx_op(g, "LeakyRelu", x, h, {{"alpha", 0.2f}});
       }},
      {"elu",
       [](G& g, const S& x, const S& h) {
         return onnx_op(g, "Elu", x, h, {{"alpha", 1.0f}});
       }},
      {"selu",
       [](G& g, const S& x, const S& h) {
         return onnx_op(g, "Selu", x, h, {{"alpha", 1.67326324235437728482f}, {"gamma", 1.05070098735548049342f}});
       }},
      {"gelu", onnx_gelu},
      {"silu", [](G& g, const S& x, const S& h) { return onnx_gated(g, x, onnx_op(g, "Sigmoid", x, h), h); }},
      {"hard_sigmoid",
       [](G& g, const S& x, const S& h) { return onnx_op(g, "HardSigmoid", x, h, hard_sigmoid_attributes()); }},
      {"hard_silu",
       [](G& g, const S& x, const S& h) {
         return onnx_gated(g, x, onnx_op(g, "HardSigmoid", x, h, hard_sigmoid_attributes()), h);
       }},
      {"sigmoid", [](G& g, const S& x, const S& h) { return onnx_op(g, "Sigmoid", x, h); }},
      {"tanh", [](G& g, const S& x, const S& h) { return onnx_op(g, "Tanh", x, h); }},
      {"softplus", [](G& g, const S& x, const S& h) { return onnx_op(g, "Softplus", x, h); }},
      {"softsign", [](G& g, const S& x, const S& h) { return onnx_op(g, "Softsign", x, h); }},
      {"mish", [](G& g, const S& x,
                  const S& h) { return onnx_gated(g, x, onnx_op(g, "Tanh", onnx_op(g, "Softplus", x, h), h), h); }},
      // torchfit's softmax/log_softmax over tensor dim 1 (activation_fn.cpp)
      {"softmax",
       [](G& g, const S& x, const S& h) {
         return onnx_op(g, "Softmax", x, h, {{"axis", 1}});
       }},
      {"log_softmax",
       [](G& g, const S& x, const S& h) {
         return onnx_op(g, "LogSoftmax", x, h, {{"axis", 1}});
       }},
      {"exponential", [](G& g, const S& x, const S& h) { return onnx_op(g, "Exp", x, h); }},
  };
  return m;
}

// Keras's aliases (keras.activations.get: swish = silu, hard_swish = hard_silu).
std::string canonical_activation(const std::string& name) {
  if (name == "swish") return "silu";
  if (name == "hard_swish") return "hard_silu";
  return name;
}

}  // namespace

std::string OnnxGraph::add_activation(const std::string& activation, const std::string& x,
                                      const std::string& name_hint) {
  const auto& writers = activation_writers();
  const auto it = writers.find(canonical_activation(activation));
  if (it == writers.end()) throw ConfigError("ONNX export: activation '" + activation + "' has no ONNX form here");
  return it->second(*this, x, name_hint);
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
