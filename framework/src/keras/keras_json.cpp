// Keras model JSON → torchfit's own (keras_json.h): layer specs translated (keras_layer_config.h),
// inbound nodes and endpoints of Keras 1/2/3 rewritten as torchfit's [[layer, node, 0, {}], …], then
// model_from_config (model/model_json.h) builds the graph.
#include <torchfit/keras/keras_json.h>

#include <algorithm>

#include <torchfit/layers/keras_call.h>
#include <torchfit/layers/registry.h>
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

// A call argument that is a tensor: Keras 3's __keras_tensor__, or tf.keras 2's [name, node, tensor].
bool is_tensor_json(const Json& v) {
  if (v.is_object()) return v.value("class_name", Json()) == "__keras_tensor__";
  return v.is_array() && (v.size() == 3 || v.size() == 4) && v[0].is_string() && v[1].is_number_integer() &&
         v[2].is_number_integer();
}

// The kwargs of a layer whose Keras call names its tensors (KerasCallArguments): the keyword tensors, in the
// layer's order, appended to `refs`; its call flags set in `flags` (false when absent); the inputs' recorded
// masks skipped (Model derives them); attention_mask and return_attention_scores refused; other arguments
// (training) ignored.
void read_call_kwargs(const Json& kwargs, const KerasCallArguments& call, std::vector<TensorRef>& refs, Json& flags,
                      const std::string& who) {
  const auto keywords = call.keras_call_keywords(), names = call.keras_call_flags();
  for (const auto& f : names) flags[f] = false;
  if (!kwargs.is_object()) return;
  bool missing = false;
  for (size_t i = refs.size(); i < keywords.size(); ++i) {  // the positional ones fill the first names
    const std::string& k = keywords[i];
    if (!kwargs.contains(k) || kwargs[k].is_null()) {
      missing = true;
    } else if (missing || !is_tensor_json(kwargs[k])) {
      throw ConfigError(who + ": call argument '" + k + "' " + kwargs[k].dump() + " is not a tensor after the others");
    } else {
      refs.push_back(tensor_ref(kwargs[k], who));
    }
  }
  for (const auto& [k, v] : kwargs.items()) {
    const bool nulls = v.is_array() && std::all_of(v.begin(), v.end(), [](const Json& e) { return e.is_null(); });
    if (std::find(keywords.begin(), keywords.end(), k) != keywords.end() || v.is_null() || nulls) continue;
    const bool mask = k == "mask" || (k.size() > 5 && k.compare(k.size() - 5, 5, "_mask") == 0);
    // The inputs' Keras masks Keras 3 records in the call (query_mask, value_mask, key_mask, mask): the graph
    // derives them again from the layers that make them (Embedding mask_zero, Masking).
    const bool flag = std::find(names.begin(), names.end(), k) != names.end();
    if (mask && !flag && k != "attention_mask") continue;
    if (flag) {
      if (!v.is_boolean())
        throw ConfigError(who + ": call argument '" + k + "' must be true or false, got " + v.dump());
      flags[k] = v;
    } else if (k == "return_attention_scores" && v == true) {
      throw ConfigError(who +
                        ": return_attention_scores gives a second output, which torchfit's graph does not "
                        "carry (one output a layer); call forward_attention in C++ for the scores");
    } else if (mask || is_tensor_json(v)) {
      throw ConfigError(who + ": call argument '" + k + "' " + v.dump().substr(0, 120) +
                        " is not supported: torchfit's graph carries the masks that Embedding(mask_zero) and Masking "
                        "make, no mask tensors given in a call (use_causal_mask is supported)");
    }
  }
}

// One node of a KerasCallArguments layer: Keras 3's {"args": [q, …], "kwargs": {…}} (positional tensors, then
// the keyword ones) or tf.keras 2's [[q, n, t, kwargs], …] (its kwargs the same in every entry).
std::vector<TensorRef> call_inputs(const Json& node, const KerasCallArguments& call, Json& flags,
                                   const std::string& who) {
  if (!call.keras_call_keywords().empty() && node.is_object() && node.contains("args") && node["args"].is_array()) {
    std::vector<TensorRef> refs;
    for (const auto& a : node["args"]) {
      if (is_tensor_json(a)) refs.push_back(tensor_ref(a, who));
    }
    read_call_kwargs(node.value("kwargs", Json::object()), call, refs, flags, who);
    if (refs.empty()) throw ConfigError(who + ": inbound node without a tensor argument: " + node.dump());
    return refs;
  }
  std::vector<TensorRef> refs = node_inputs(node, who);
  if (node.is_object()) {
    read_call_kwargs(node.value("kwargs", Json::object()), call, refs, flags, who);
  } else if (node.is_array() && !node.empty() && node[0].is_array() && node[0].size() == 4) {
    read_call_kwargs(node[0][3], call, refs, flags, who);
  }
  return refs;
}

// A throwaway layer of the translated spec `own`, to read its call signature (null when it is no
// KerasCallArguments or does not construct: the graph's own build then reports the error).
std::shared_ptr<Layer> call_signature_layer(const Json& own) {
  try {
    auto layer = layer_from_json(own);
    return dynamic_cast<const KerasCallArguments*>(layer.get()) ? layer : nullptr;
  } catch (const std::exception&) {
    return nullptr;
  }
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
    const auto probe = spec["inbound_nodes"].empty() ? nullptr : call_signature_layer(own);
    const auto* call = dynamic_cast<const KerasCallArguments*>(probe.get());
    Json first_flags;
    for (const auto& node : spec["inbound_nodes"]) {
      Json refs = Json::array(), flags = Json::object();
      for (const auto& r : call ? call_inputs(node, *call, flags, who) : node_inputs(node, who)) {
        refs.push_back(own_ref(r));
      }
      inbound.push_back(refs);
      if (!call) continue;
      if (!first_flags.is_null() && flags != first_flags) {
        throw ConfigError(who + ": its calls pass " + first_flags.dump() + " and " + flags.dump() +
                          "; torchfit holds them in the layer, the same for every call");
      }
      first_flags = flags;
    }
    if (first_flags.is_object()) {
      for (const auto& [k, v] : first_flags.items()) {
        if (v == true) own["config"][k] = true;  // false: the config's own value (tf.keras 2's `causal`)
      }
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
