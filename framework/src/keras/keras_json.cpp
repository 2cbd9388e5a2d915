// Keras model JSON → torchfit's own (keras_json.h): layer specs translated (keras_layer_config.h),
// inbound nodes and endpoints of Keras 1/2/3 rewritten as torchfit's [[layer, node, 0, {}], …], then
// model_from_config (model/model_json.h) builds the graph.
#include <torchfit/keras/keras_json.h>

#include <torchfit/model/model_json.h>
#include <torchfit/runtime/logging.h>

#include "keras_layer_config.h"

namespace torchfit {
namespace {

using Json = nlohmann::json;

using detail::TensorRef;

// A tf.keras 2.x entry ([name, n, t, kwargs]) or a Keras 3 __keras_tensor__ ({"config": {"keras_history":
// [name, n, t]}}) as a TensorRef (model_json.h).
TensorRef tensor_ref(const Json& j, const std::string& who) {
  if (j.is_object() && j.contains("config") && j["config"].contains("keras_history"))
    return detail::tensor_ref(j["config"]["keras_history"], who);
  return detail::tensor_ref(j, who);
}

// One tensor reference in torchfit's form [layer, node, tensor, {}].
Json own_ref(const TensorRef& r) { return Json::array({r.layer, r.node, r.tensor, Json::object()}); }

// The inputs of one inbound node, in the tf.keras 2.x form [[name, n, t, {}], …] or Keras 3's
// {"args": [tensor or [tensors…]], "kwargs": {}}.
std::vector<TensorRef> node_inputs(const Json& node, const std::string& who) {
  std::vector<TensorRef> refs;
  if (node.is_object() && node.contains("args")) {
    const Json& args = node["args"];
    if (!args.is_array() || args.empty()) throw ConfigError(who + ": inbound node without args: " + node.dump());
    const Json& first = args[0];
    if (first.is_array()) {
      for (const auto& t : first) refs.push_back(tensor_ref(t, who));
    } else {
      refs.push_back(tensor_ref(first, who));
    }
    return refs;
  }
  if (!node.is_array() || node.empty()) throw ConfigError(who + ": bad inbound node " + node.dump());
  if (!node.empty() && node[0].is_string()) return {tensor_ref(node, who)};  // Keras 1: one flat reference
  for (const auto& t : node) refs.push_back(tensor_ref(t, who));
  return refs;
}

// input_layers / output_layers: [[name, n, t], …] or (Keras 3, one tensor) [name, n, t].
std::vector<TensorRef> endpoint_refs(const Json& j, const std::string& what) {
  if (!j.is_array()) throw ConfigError("model JSON: config." + what + " must be a list");
  if (!j.empty() && j[0].is_string()) return {tensor_ref(j, "model JSON " + what)};
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

// After reading: a mixed policy named by the layers.
void apply_findings(ModelImpl& model, const keras_config::Findings& f, const Json& config) {
  if (!config.contains("dtype_policy") && !f.dtype_policy.empty()) model.set_dtype_policy(f.dtype_policy);
}

Model sequential_from_json(const Json& json) {
  const Json& config = json["config"];
  const Json& specs = config.is_array() ? config : config.value("layers", Json());
  if (!specs.is_array()) throw ConfigError("model JSON: Sequential config.layers must be an array");
  keras_config::Findings findings;
  const bool channels_first = keras_config::keras1_channels_first(specs);
  Json layers = Json::array();
  for (size_t i = 0; i < specs.size(); ++i) {
    try {
      layers.push_back(keras_config::layer_spec(specs[i], findings, channels_first));
    } catch (const ConfigError& e) {
      // As SequentialImpl::from_json names a layer: "config.layers[2] ('dense_1', Dense): …".
      const Json c = specs[i].is_object() ? specs[i].value("config", Json::object()) : Json::object();
      const std::string name = c.is_object() ? c.value("name", std::string("?")) : "?";
      const std::string cls = specs[i].is_object() ? specs[i].value("class_name", std::string("?")) : "?";
      std::string what = e.what();
      const std::string same = "layer '" + name + "' (" + cls + "): ";
      if (what.rfind(same, 0) == 0) what = what.substr(same.size());
      throw ConfigError("config.layers[" + std::to_string(i) + "] ('" + name + "', " + cls + "): " + what);
    }
  }
  Json own = {{"format_version", json.value("format_version", kModelFormatVersion)},
              {"class_name", "Sequential"},
              {"config",
               {{"name", config.is_object() ? config.value("name", std::string("sequential")) : "sequential"},
                {"layers", layers}}}};
  if (config.is_object() && config.contains("dtype_policy")) own["config"]["dtype_policy"] = config["dtype_policy"];
  Model model = model_from_config(own);
  apply_findings(*model, findings, config.is_object() ? config : Json::object());
  return model;
}

// One functional layer spec in torchfit's form: translated config, name, inbound nodes as lists.
Json functional_spec(const Json& spec, keras_config::Findings& findings, bool channels_first) {
  Json own = keras_config::layer_spec(spec, findings, channels_first);
  const std::string name = spec_name(spec).empty() ? own["config"].value("name", std::string()) : spec_name(spec);
  const std::string who = "layer '" + name + "' (" + spec.value("class_name", std::string()) + ")";
  Json inbound = Json::array();
  if (spec.contains("inbound_nodes")) {
    if (!spec["inbound_nodes"].is_array()) {
      throw ConfigError(who + ": inbound_nodes must be a list of nodes, got " + spec["inbound_nodes"].dump());
    }
    for (const auto& node : spec["inbound_nodes"]) {
      Json refs = Json::array();
      for (const auto& r : node_inputs(node, who)) refs.push_back(own_ref(r));
      inbound.push_back(refs);
    }
  }
  own["name"] = name;
  own["inbound_nodes"] = inbound;
  return own;
}

Model functional_from_json(const Json& config) {
  const auto& specs = config.at("layers");
  if (!specs.is_array() || specs.empty()) throw ConfigError("model JSON: config.layers must be a non-empty list");
  keras_config::Findings findings;
  const bool channels_first = keras_config::keras1_channels_first(specs);
  Json own = config;
  own["layers"] = Json::array();
  for (const auto& spec : specs) own["layers"].push_back(functional_spec(spec, findings, channels_first));
  for (const char* key : {"input_layers", "output_layers"}) {
    if (!config.contains(key)) continue;  // model_from_config names the missing one
    Json refs = Json::array();
    for (const auto& r : endpoint_refs(config[key], key)) refs.push_back(Json::array({r.layer, r.node, r.tensor}));
    own[key] = refs;
  }
  Model model = model_from_config({{"class_name", "Functional"}, {"config", own}});
  apply_findings(*model, findings, config);
  return model;
}

Model model_from_translated_json(const Json& json) {
  if (!json.is_object() || !json.contains("class_name") || !json["class_name"].is_string() ||
      !json.contains("config")) {
    throw ConfigError(
        "model JSON: expected {\"class_name\": \"Functional\" | \"Model\" | \"Sequential\", \"config\": ...}");
  }
  const auto cls = json["class_name"].get<std::string>();
  try {
    if (cls == "Sequential") return sequential_from_json(json);
    if (cls == "Functional" || cls == "Model") return functional_from_json(json["config"]);
  } catch (const Json::exception& e) {  // a value of the wrong JSON type where the checks above do not look
    throw ConfigError("model JSON (" + cls + "): a field has the wrong type or is missing: " + e.what());
  }
  throw ConfigError("model JSON: model class '" + cls + "' is not supported (Functional, Model, Sequential)");
}

}  // namespace

// Unknown input sizes are filled before the translation (a Keras batch shape with nulls) and marked on
// the built model (model_json.h).
Model model_from_json(const Json& json, const std::optional<InputSize>& input_size) {
  return detail::build_with_input_size(json, input_size, model_from_translated_json);
}

Model model_from_json_text(const std::string& text, const std::string& source,
                           const std::optional<InputSize>& input_size) {
  Json json;
  try {
    json = Json::parse(text);
  } catch (const Json::parse_error& e) {
    throw ConfigError((source.empty() ? std::string("model JSON") : "'" + source + "'") +
                      ": not valid JSON: " + e.what());
  }
  return model_from_json(json, input_size);
}

}  // namespace torchfit
