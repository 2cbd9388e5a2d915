#include "keras_layer_config.h"

#include <algorithm>
#include <map>

#include <torchfit/error.h>
#include <torchfit/layers/registry.h>

namespace torchfit::keras_config {
namespace {

using Json = nlohmann::json;

// Keras 1 class names and Keras's aliases → the class names torchfit registers.
const std::map<std::string, std::string>& keras1_classes() {
  static const std::map<std::string, std::string> m = {{"Convolution2D", "Conv2D"},
                                                       {"MaxPool2D", "MaxPooling2D"},
                                                       {"AvgPool2D", "AveragePooling2D"},
                                                       {"GlobalAvgPool2D", "GlobalAveragePooling2D"},
                                                       {"GlobalMaxPool2D", "GlobalMaxPooling2D"},
                                                       {"Convolution2DTranspose", "Conv2DTranspose"},
                                                       {"SeparableConvolution2D", "SeparableConv2D"},
                                                       {"AtrousConvolution2D", "Conv2D"}};
  return m;
}

// Keras 1 argument names → Keras 2 names (the values need no conversion except where noted).
const std::map<std::string, std::string>& keras1_args() {
  static const std::map<std::string, std::string> m = {{"nb_filter", "filters"},
                                                       {"subsample", "strides"},
                                                       {"border_mode", "padding"},
                                                       {"atrous_rate", "dilation_rate"},
                                                       {"gamma_init", "gamma_initializer"},
                                                       {"beta_init", "beta_initializer"},
                                                       {"output_dim", "units"},
                                                       {"p", "rate"},
                                                       {"init", "kernel_initializer"},
                                                       {"bias", "use_bias"},
                                                       {"W_regularizer", "kernel_regularizer"},
                                                       {"b_regularizer", "bias_regularizer"},
                                                       {"W_constraint", "kernel_constraint"},
                                                       {"b_constraint", "bias_constraint"}};
  return m;
}

std::string object_name(const Json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_object() && v.contains("class_name") && v["class_name"].is_string())
    return v["class_name"].get<std::string>();
  return v.dump();
}

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

std::string supported_classes() {
  std::string s;
  for (const auto& c : registered_layers()) s += (s.empty() ? "" : ", ") + c;
  return s;
}

// dtype: "float32", a policy name, or {"class_name": "DTypePolicy"/"Policy", "config": {"name": …}}.
void read_dtype(const Json& v, const std::string& who, Findings& f) {
  std::string name = v.is_string() ? v.get<std::string>() : "";
  if (v.is_object()) name = v.value("config", Json::object()).value("name", std::string());
  if (name == "float32") return;
  if (name == "mixed_float16" || name == "mixed_bfloat16") {
    f.dtype_policy = name;
    return;
  }
  throw ConfigError(who + ": dtype " + v.dump() + " is not supported (float32, mixed_float16, mixed_bfloat16)");
}

// Shape from a Keras batch shape [null, d1, …]; Keras 1 "th" ordering (C, H, W) → (H, W, C).
Json per_sample(const Json& batch, bool channels_first) {
  Json s = Json::array();
  for (size_t i = 1; i < batch.size(); ++i) s.push_back(batch[i]);
  if (channels_first && s.size() == 3) s = Json::array({s[1], s[2], s[0]});
  return s;
}

// Drops `key` when its value is null or one of `harmless` (values that leave the computation as torchfit
// does it); any other value is refused, saying `why`.
void drop_if(Json& c, const char* key, const std::vector<Json>& harmless, const std::string& who, const char* why) {
  if (!c.contains(key)) return;
  const Json& v = c[key];
  if (!v.is_null() && std::find(harmless.begin(), harmless.end(), v) == harmless.end()) {
    throw ConfigError(who + ": " + key + " " + v.dump() + " is not supported (" + why + ")");
  }
  c.erase(key);
}

bool starts_with(const std::string& s, const std::string& prefix) { return s.rfind(prefix, 0) == 0; }

// An `activation` argument: a name ("relu"), or Keras 3's (and tf.keras 2.13+'s) serialized function
// {"module": "keras.activations", "class_name": "function", "config": "relu", "registered_name": …}, read
// as its name (the layer then checks it). Errors: ConfigError naming the layer for another object (a
// custom function, a layer as activation).
Json activation_name(const Json& v, const std::string& who) {
  if (!v.is_object()) return v;
  const std::string module = v.contains("module") && v["module"].is_string() ? v["module"].get<std::string>() : "";
  const bool keras_module =
      module.empty() ||
      ((starts_with(module, "keras") || starts_with(module, "tf_keras") || starts_with(module, "tensorflow.keras")) &&
       ends_with(module, "activations"));
  if (keras_module && v.contains("config") && v["config"].is_string() && v.value("class_name", Json()) == "function") {
    return v["config"];
  }
  throw ConfigError(who + ": activation " + v.dump() +
                    " is not supported (a keras.activations name or its serialized function; custom activations "
                    "and layers as activations are not)");
}

// Class-specific Keras arguments torchfit's layer does not have: dropped when they do not change the
// computation, refused when they do; Keras's other spellings read.
void convert_class_args(const std::string& cls, Json& c, const std::string& who, bool channels_first) {
  if (cls == "BatchNormalization" || cls == "LayerNormalization") {
    for (const char* k : {"center", "scale"}) {  // the DS-CNN file stores "scale": 1
      if (c.contains(k) && c[k].is_number()) c[k] = c[k].get<double>() != 0.0;
    }
  }
  if (cls == "BatchNormalization") {
    drop_if(c, "mode", {0}, who, "Keras 1 feature-wise mode 0 only");
    drop_if(c, "renorm", {false}, who, "batch renormalisation");
    if (!c.contains("renorm")) {
      c.erase("renorm_clipping");
      c.erase("renorm_momentum");
    }
    drop_if(c, "fused", {true, false}, who, "");
    drop_if(c, "synchronized", {false}, who, "synchronised batch statistics");
    drop_if(c, "virtual_batch_size", {}, who, "ghost batch normalisation");
    drop_if(c, "adjustment", {}, who, "a custom adjustment");
  }
  if (cls == "LeakyReLU" && c.contains("negative_slope")) {  // Keras 3's name of alpha
    c["alpha"] = c["negative_slope"];
    c.erase("negative_slope");
  }
  if (cls == "PReLU" && c.contains("shared_axes") && c["shared_axes"].is_number_integer()) {  // Keras: int → [int]
    c["shared_axes"] = Json::array({c["shared_axes"]});
  }
  if (cls == "ThresholdedReLU" && c.contains("theta") && c["theta"].is_null()) {  // Keras 2.15 raises too
    throw ConfigError(who + ": theta must be a number >= 0, got null");
  }
  if ((cls == "Attention" || cls == "AdditiveAttention") && c.contains("causal")) {  // tf.keras 2.0–2.9's name
    c["use_causal_mask"] = c["causal"];
    c.erase("causal");
  }
  if (cls == "MultiHeadAttention" || cls == "GroupQueryAttention") {  // Keras 3.10+'s gate and sliding window
    drop_if(c, "use_gate", {false}, who, "gated attention");
    drop_if(c, "sliding_window", {}, who, "a sliding-window mask");
    // Keras's own check (GroupedQueryAttention.__init__); flash attention changes only the kernel Keras runs.
    if (c.value("flash_attention", Json()) == true && c.value("dropout", Json(0.0)) != 0.0) {
      throw ConfigError(who + ": dropout " + c["dropout"].dump() +
                        " is not supported when flash attention is enabled (Keras refuses it too)");
    }
    drop_if(c, "flash_attention", {true, false}, who, "");  // the same values
  }
  if (cls == "Flatten" && channels_first) c["element_order"] = "channels_first";  // Keras 1 "th": no transpose
  if (cls == "Reshape" && channels_first) {
    throw ConfigError(who + ": Reshape in a Keras 1 \"th\" (channels-first) model is not supported");
  }
}

// A wrapper's layers (Bidirectional's "layer" and "backward_layer", TimeDistributed's "layer"), each Keras spec
// read as a layer of the model is; a null backward_layer (Keras 3 writes one always, tf.keras 2 when given)
// dropped.
void convert_wrapped_layers(const std::string& cls, Json& c, const std::string& who, Findings& f, bool channels_first) {
  if (cls != "Bidirectional" && cls != "TimeDistributed") return;
  for (const char* k : {"layer", "backward_layer"}) {
    if (!c.contains(k)) continue;
    if (c[k].is_null()) {
      c.erase(k);
      continue;
    }
    try {
      c[k] = layer_spec(c[k], f, channels_first);
    } catch (const ConfigError& e) {
      throw ConfigError(who + ": its " + k + ": " + e.what());
    }
  }
}

// The Keras-only keys of one config: checked, dropped or renamed. Returns the torchfit config.
Json convert_config(const std::string& cls, Json c, const std::string& who, Findings& f, bool channels_first) {
  for (const auto& [k1, k2] : keras1_args()) {
    if (cls == "Embedding" && k1 == std::string("output_dim")) continue;  // its own name (Keras 1–3), not Dense's
    if (c.contains(k1)) {
      c[k2] = c[k1];
      c.erase(k1);
    }
  }
  if (c.contains("dim_ordering")) {  // Keras 1: "th" = channels first (the model's, keras1_channels_first)
    if (c["dim_ordering"] != "th" && c["dim_ordering"] != "tf" && c["dim_ordering"] != "default") {
      throw ConfigError(who + ": dim_ordering " + c["dim_ordering"].dump() + " is not supported (th, tf, default)");
    }
    c.erase("dim_ordering");
  }
  convert_class_args(cls, c, who, channels_first);
  convert_wrapped_layers(cls, c, who, f, channels_first);
  if (c.contains("activation")) c["activation"] = activation_name(c["activation"], who);
  if (c.contains("nb_row") && c.contains("nb_col")) {
    c["kernel_size"] = Json::array({c["nb_row"], c["nb_col"]});
    c.erase("nb_row");
    c.erase("nb_col");
  }
  for (const char* k : {"input_dtype", "batch_size", "seed", "noise_shape", "module", "registered_name"}) {
    if (c.contains(k) && !c[k].is_null() && std::string(k) == "noise_shape") {
      throw ConfigError(who + ": noise_shape " + c[k].dump() + " is not supported");
    }
    c.erase(k);
  }
  for (const char* k : {"quantization_config", "lora_rank"}) {  // Keras 3, null unless quantized / LoRA
    if (c.contains(k) && !c[k].is_null()) throw ConfigError(who + ": " + k + " " + c[k].dump() + " is not supported");
    c.erase(k);
  }
  if (c.contains("dtype")) {
    read_dtype(c["dtype"], who, f);
    c.erase("dtype");
  }
  if (c.contains("data_format")) {
    if (c["data_format"] != "channels_last") {
      throw ConfigError(who + ": data_format " + c["data_format"].dump() + " is not supported (channels_last)");
    }
    c.erase("data_format");
  }
  if (c.contains("groups") && cls != "GroupNormalization") {  // a convolution's grouped channels
    if (c["groups"] != 1) throw ConfigError(who + ": groups " + c["groups"].dump() + " is not supported (1)");
    c.erase("groups");
  }
  // An axis is resolved by the layer against its input's rank when it is built, as Keras does
  // (tf.keras 2.x writes [1] after a Dense, [3] after a Conv2D); in a Keras 1 "th" model it counts over
  // (N, C, H, W), and the default axis -1 there too.
  if (cls == "BatchNormalization" && channels_first) c["axis_order"] = "channels_first";
  if (cls == "InputLayer" && channels_first) {
    for (const char* k : {"batch_input_shape", "batch_shape"}) {
      if (c.contains(k) && c[k].is_array() && c[k].size() == 4) {
        Json shape = per_sample(c[k], true);
        shape.insert(shape.begin(), nullptr);
        c[k] = shape;
      }
    }
  }
  if (cls != "InputLayer") {
    for (const char* k : {"batch_input_shape", "batch_shape"}) {
      if (c.contains(k)) {
        if (!c[k].is_null()) c["input_shape"] = per_sample(c[k], channels_first);
        c.erase(k);
      }
    }
    if (c.contains("input_dim") && cls != "Embedding") {  // Keras 1 Dense (Embedding's is its vocabulary)
      if (!c["input_dim"].is_null()) c["input_shape"] = Json::array({c["input_dim"]});
      c.erase("input_dim");
    }
  }
  std::vector<std::string> keys;
  for (const auto& item : c.items()) keys.push_back(item.key());
  for (const auto& k : keys) {
    const Json& v = c[k];
    if (ends_with(k, "_regularizer") && !v.is_null()) {  // weights' and the output's (activity_regularizer)
      const std::string cls = object_name(v);
      if (cls != "L1" && cls != "L2" && cls != "L1L2" && cls != "l1" && cls != "l2" && cls != "l1_l2") {
        throw ConfigError(who + ": " + k + " " + cls + " is not supported (L1, L2, L1L2)");
      }
    } else if (ends_with(k, "_regularizer") || ends_with(k, "_constraint")) {
      if (!v.is_null()) {
        throw ConfigError(who + ": " + k + " " + object_name(v) +
                          " is not supported (torchfit applies no constraints)");
      }
      c.erase(k);
    }
  }
  return c;
}

}  // namespace

const std::vector<WeightChild>& keras3_weight_children(const std::string& cls) {
  static const std::vector<WeightChild> none;
  static const std::vector<WeightChild> attention = {
      {"query_dense", "query"}, {"key_dense", "key"}, {"value_dense", "value"}, {"output_dense", "attention_output"}};
  // GroupedQueryAttention has no public properties: its sublayers are saved under their private attributes.
  static const std::vector<WeightChild> grouped = {{"_query_dense", "query"},
                                                   {"_key_dense", "key"},
                                                   {"_value_dense", "value"},
                                                   {"_output_dense", "attention_output"}};
  if (cls == "GroupQueryAttention") return grouped;
  return cls == "MultiHeadAttention" ? attention : none;
}

bool keras1_channels_first(const Json& layer_specs) {
  if (!layer_specs.is_array()) return false;
  for (const auto& spec : layer_specs) {
    const Json c = spec.is_object() ? spec.value("config", Json::object()) : Json::object();
    if (c.is_object() && c.value("dim_ordering", std::string()) == "th") return true;
  }
  return false;
}

Json layer_spec(const Json& spec, Findings& f, bool channels_first) {
  if (!spec.is_object() || !spec.contains("class_name") || !spec["class_name"].is_string()) {
    throw ConfigError("model JSON: a layer must be an object with a string \"class_name\", got " + spec.dump());
  }
  std::string cls = spec["class_name"].get<std::string>();
  if (auto it = keras1_classes().find(cls); it != keras1_classes().end()) cls = it->second;
  const Json config = spec.value("config", Json::object());
  const std::string name = config.is_object() ? config.value("name", spec.value("name", std::string("?"))) : "?";
  const std::string who = "layer '" + name + "' (" + cls + ")";
  const auto known = registered_layers();
  if (std::find(known.begin(), known.end(), cls) == known.end()) {
    const std::string hint = unsupported_keras_class_hint(cls);
    throw ConfigError(who + ": unknown layer class '" + cls + "'" + (hint.empty() ? "" : ": " + hint) +
                      (spec.contains("module") && spec["module"].is_string() && spec["module"] != "keras.layers"
                           ? " (a custom object from module " + spec["module"].dump() + ")"
                           : "") +
                      " (known: " + supported_classes() + ")");
  }
  if (!config.is_object()) throw ConfigError(who + ": config must be an object");
  return {{"class_name", cls}, {"config", convert_config(cls, config, who, f, channels_first)}};
}

}  // namespace torchfit::keras_config
