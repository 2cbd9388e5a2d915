// torchfit's own model JSON (model_json.h): Sequential and functional graphs, no Keras translation.
#include <torchfit/model/model_json.h>

#include <algorithm>
#include <map>

#include <torchfit/layers/input_layer.h>
#include <torchfit/layers/registry.h>
#include <torchfit/model/sequential.h>

namespace torchfit {
namespace {

using Json = nlohmann::json;

using detail::tensor_ref;
using detail::TensorRef;

// The inputs of one inbound node: [[name, n, t, {}], …].
std::vector<TensorRef> node_inputs(const Json& node, const std::string& who) {
  if (!node.is_array() || node.empty()) throw ConfigError(who + ": bad inbound node " + node.dump());
  std::vector<TensorRef> refs;
  for (const auto& t : node) refs.push_back(tensor_ref(t, who));
  return refs;
}

// input_layers / output_layers: [[name, n, t], …].
std::vector<TensorRef> endpoint_refs(const Json& j, const std::string& what) {
  if (!j.is_array()) throw ConfigError("model JSON: config." + what + " must be a list");
  std::vector<TensorRef> refs;
  for (const auto& e : j) refs.push_back(tensor_ref(e, "model JSON " + what));
  return refs;
}

std::string spec_name(const Json& spec) {
  if (spec.contains("name") && spec["name"].is_string()) return spec["name"].get<std::string>();
  const Json config = spec.is_object() ? spec.value("config", Json::object()) : Json();
  return config.is_object() && config.contains("name") && config["name"].is_string() ? config["name"].get<std::string>()
                                                                                     : std::string();
}

// A layer's inbound_nodes: a list (none for an InputLayer).
const Json& inbound_nodes(const Json& spec, const std::string& who) {
  static const Json none = Json::array();
  if (!spec.contains("inbound_nodes")) return none;
  if (!spec["inbound_nodes"].is_array()) {
    throw ConfigError(who + ": inbound_nodes must be a list of nodes, got " + spec["inbound_nodes"].dump());
  }
  return spec["inbound_nodes"];
}

// Why a layer's next node cannot be made: the first of its references that names a missing layer or a
// node its layer never gets (a cycle or a wrong node index), for the error of a graph that does not close.
std::string first_unresolved(const std::vector<TensorRef>& refs,
                             const std::map<std::string, std::shared_ptr<Layer>>& layers,
                             const std::map<std::string, std::vector<KerasTensor>>& made) {
  for (const auto& r : refs) {
    if (!layers.count(r.layer)) return "reads layer '" + r.layer + "', which the model does not have";
    const auto it = made.find(r.layer);
    const size_t have = it == made.end() ? 0 : it->second.size();
    if (static_cast<size_t>(r.node) >= have) {
      return "reads node " + std::to_string(r.node) + " of layer '" + r.layer + "', which is never made (" +
             std::to_string(have) + " node(s) of it are: a wrong node index, or a cycle)";
    }
  }
  return "waits for an input that is never made";
}

Model functional_from_config(const Json& config) {
  const auto& specs = config.at("layers");
  if (!specs.is_array() || specs.empty()) throw ConfigError("model JSON: config.layers must be a non-empty list");
  std::map<std::string, std::shared_ptr<Layer>> layers;
  std::vector<std::string> order;
  std::map<std::string, std::vector<KerasTensor>> made;  // layer → its nodes' outputs, in order
  for (const auto& spec : specs) {
    auto layer = layer_from_json({{"class_name", spec.at("class_name")}, {"config", spec.at("config")}});
    const std::string name = spec_name(spec).empty() ? layer->name() : spec_name(spec);
    layer->set_name(name);
    if (!layers.emplace(name, layer).second) throw ConfigError("model JSON: two layers are named '" + name + "'");
    order.push_back(name);
    if (auto input = std::dynamic_pointer_cast<InputLayerImpl>(layer)) made[name].push_back(input_tensor_of(input));
  }
  // Create the nodes as their inputs become available (the file lists layers in any order).
  std::map<std::string, size_t> next;  // next inbound node per layer
  bool progress = true;
  while (progress) {
    progress = false;
    for (const auto& spec : specs) {
      const std::string name = spec_name(spec).empty() ? order[&spec - &specs[0]] : spec_name(spec);
      const std::string who = "layer '" + name + "' (" + spec.value("class_name", std::string()) + ")";
      const Json& inbound = inbound_nodes(spec, who);
      while (next[name] < inbound.size()) {
        std::vector<KerasTensor> xs;
        for (const auto& ref : node_inputs(inbound[next[name]], who)) {
          auto it = made.find(ref.layer);
          if (it == made.end() || ref.node >= static_cast<int>(it->second.size())) break;
          xs.push_back(it->second[static_cast<size_t>(ref.node)]);
        }
        if (xs.size() != node_inputs(inbound[next[name]], who).size()) break;
        auto& layer = layers.at(name);
        if (!layer->takes_list() && xs.size() != 1) {
          throw ConfigError(who + ": takes one input, but its inbound node " + inbound[next[name]].dump() + " gives " +
                            std::to_string(xs.size()));
        }
        made[name].push_back(layer->takes_list() ? layer->call(xs) : layer->call(xs.at(0)));
        ++next[name];
        progress = true;
      }
    }
  }
  std::string stuck, why;
  for (const auto& spec : specs) {
    const std::string name = spec_name(spec);
    const std::string who = "layer '" + name + "' (" + spec.value("class_name", std::string()) + ")";
    const Json& inbound = inbound_nodes(spec, who);
    if (next[name] >= inbound.size()) continue;
    stuck += (stuck.empty() ? "" : ", ") + name;
    if (why.empty()) why = who + " " + first_unresolved(node_inputs(inbound[next[name]], who), layers, made);
  }
  if (!stuck.empty()) {
    throw ConfigError("model JSON: the inputs of layer(s) " + stuck + " never become available: " + why);
  }
  for (const char* key : {"input_layers", "output_layers"}) {
    if (!config.contains(key)) throw ConfigError(std::string("model JSON: a functional config needs config.") + key);
  }
  auto resolve = [&](const std::vector<TensorRef>& refs, const std::string& what) {
    std::vector<KerasTensor> ts;
    for (const auto& r : refs) {
      auto it = made.find(r.layer);
      if (it == made.end() || r.node >= static_cast<int>(it->second.size())) {
        throw ConfigError("model JSON: " + what + " names layer '" + r.layer + "' node " + std::to_string(r.node) +
                          ", which does not exist");
      }
      ts.push_back(it->second[static_cast<size_t>(r.node)]);
    }
    return ts;
  };
  Model model(resolve(endpoint_refs(config.at("input_layers"), "input_layers"), "input_layers"),
              resolve(endpoint_refs(config.at("output_layers"), "output_layers"), "output_layers"),
              config.value("name", std::string("model")));
  model->reorder_layers(order);
  if (config.contains("dtype_policy")) {
    if (!config["dtype_policy"].is_string()) throw ConfigError("model JSON: config.dtype_policy must be a string");
    model->set_dtype_policy(config["dtype_policy"].get<std::string>());
  }
  return model;
}

}  // namespace

namespace {
Model build_from_config(const Json& json) {
  if (!json.is_object() || !json.contains("class_name") || !json["class_name"].is_string() ||
      !json.contains("config")) {
    throw ConfigError("model JSON: expected {\"class_name\": \"Functional\" | \"Sequential\", \"config\": ...}");
  }
  const auto cls = json["class_name"].get<std::string>();
  try {
    if (cls == "Sequential") return Model(SequentialImpl::from_json(json));
    if (cls == "Functional" || cls == "Model") return functional_from_config(json["config"]);
  } catch (const Json::exception& e) {  // a value of the wrong JSON type where the checks do not look
    throw ConfigError("model JSON (" + cls + "): a field has the wrong type or is missing: " + e.what());
  }
  throw ConfigError("model JSON: model class '" + cls + "' is not supported (Functional, Model, Sequential)");
}
}  // namespace

Model model_from_config(const Json& json, const std::optional<InputSize>& input_size) {
  return detail::build_with_input_size(json, input_size, build_from_config);
}

namespace detail {

Model build_with_input_size(const Json& json, const std::optional<InputSize>& size,
                            const std::function<Model(const Json&)>& build) {
  if (!json.is_object() || !json.contains("config")) return build(json);
  Json resolved = json;
  const auto unknown = fill_unknown_input_sizes(resolved, size);
  Model model = build(resolved);
  if (!unknown.empty()) mark_unknown_input_sizes(*model, unknown);
  return model;
}

// The shape fields of a layer config that may hold Keras's None for a spatial size.
namespace {
constexpr const char* kBatchShapeKeys[] = {"batch_input_shape", "batch_shape"};

}  // namespace

// Fills the unknown (null) height and width of every declared batch shape with `size`; returns the unknown
// axes (0-based, batch excluded) per layer name. Errors: ConfigError naming the layer (no size given, an
// unknown channel or vector size).
UnknownAxes fill_unknown_input_sizes(Json& json, const std::optional<InputSize>& size) {
  UnknownAxes unknown;
  Json& config = json["config"];
  Json& specs = config.is_array() ? config : config["layers"];
  if (!specs.is_array()) return unknown;
  for (auto& spec : specs) {
    if (!spec.is_object() || !spec.contains("config") || !spec["config"].is_object()) continue;
    Json& c = spec["config"];
    for (const char* key : kBatchShapeKeys) {
      if (!c.contains(key) || !c[key].is_array()) continue;
      Json& batch = c[key];
      const std::string who =
          "layer '" + c.value("name", std::string("?")) + "' (" + spec.value("class_name", std::string("?")) + ")";
      for (size_t i = 1; i < batch.size(); ++i) {
        if (!batch[i].is_null()) continue;
        if (batch.size() != 4 || i == 3) {
          throw ConfigError(who + ": field '" + key + "' " + batch.dump() +
                            " leaves a dimension unknown that is not an image's height or width; only those may "
                            "be None (a (None, None, C) image input)");
        }
        if (!size) {
          throw ConfigError(
              who + ": field '" + key + "' " + batch.dump() +
              " leaves the image's height and width unknown (None): give the size to build the "
              "model at (KerasImportOptions::input_size; in the apps --target-size, convert_model --input-size)");
        }
        batch[i] = (*size)[i - 1];
        unknown[c.value("name", std::string())].push_back(static_cast<int64_t>(i) - 1);
      }
    }
  }
  return unknown;
}

// Marks the model's inputs whose sizes the JSON left unknown (a Sequential's first layer stands for its input).
void mark_unknown_input_sizes(ModelImpl& model, const UnknownAxes& unknown) {
  for (const auto& x : model.inputs()) {
    auto input = std::dynamic_pointer_cast<InputLayerImpl>(x.layer());
    if (!input) continue;
    auto it = unknown.find(input->name());
    if (it == unknown.end() && model.inputs().size() == 1 && unknown.size() == 1) it = unknown.begin();
    if (it != unknown.end()) input->options.unknown_axes(it->second);
  }
}

}  // namespace detail

nlohmann::json ModelImpl::to_json() const {
  Json layers = Json::array();
  auto ref = [this](const KerasTensor& x) {
    return Json::array({x.layer()->name(), local_node_index(x.node().get()), x.tensor_index()});
  };
  std::map<const Layer*, std::vector<const Node*>> nodes_of;
  for (const auto& [node, index] : local_index_) nodes_of[node->layer.get()].push_back(node);
  for (const auto& l : layers_) {
    auto nodes = nodes_of[l.get()];
    std::sort(nodes.begin(), nodes.end(),
              [this](const Node* a, const Node* b) { return local_node_index(a) < local_node_index(b); });
    Json inbound = Json::array();
    for (const Node* n : nodes) {
      if (n->inputs.empty()) continue;
      Json args = Json::array();
      for (const auto& x : n->inputs) {
        Json r = ref(x);
        r.push_back(Json::object());
        args.push_back(r);
      }
      inbound.push_back(args);
    }
    layers.push_back(
        {{"class_name", l->class_name()}, {"config", l->config()}, {"name", l->name()}, {"inbound_nodes", inbound}});
  }
  Json ins = Json::array(), outs = Json::array();
  for (const auto& x : inputs()) ins.push_back(ref(x));
  for (const auto& y : outputs()) outs.push_back(ref(y));
  Json config = {{"name", name_},
                 {"layers", layers},
                 {"input_layers", ins},
                 {"output_layers", outs},
                 {"dtype_policy", dtype_policy().name()}};
  return {{"class_name", "Functional"},
          {"config", config},
          {"keras_version", "2.4.0"},
          {"backend", "tensorflow"},
          {"format_version", kModelFormatVersion}};
}

namespace detail {

TensorRef tensor_ref(const Json& j, const std::string& who) {
  auto index = [&](size_t i) {
    const Json& v = j[i];
    if (v.is_number_unsigned()) return v.get<uint64_t>() <= 1000000000;
    return v.is_number_integer() && v.get<int64_t>() >= 0 && v.get<int64_t>() <= 1000000000;
  };
  if (!j.is_array() || j.size() < 3 || !j[0].is_string() || !index(1) || !index(2)) {
    throw ConfigError(who + ": bad tensor reference " + j.dump() +
                      " (expected [layer name, node index >= 0, tensor index >= 0])");
  }
  TensorRef ref{j[0].get<std::string>(), j[1].get<int>(), j[2].get<int>()};
  if (ref.tensor != 0) {  // every torchfit layer call has one output tensor
    throw ConfigError(who + ": tensor reference " + j.dump() + " names output " + std::to_string(ref.tensor) +
                      " of layer '" + ref.layer + "', which has one output (index 0)");
  }
  return ref;
}

}  // namespace detail

}  // namespace torchfit
