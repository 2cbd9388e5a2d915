// Keras layer configs (Keras 1.x, 2.x, 3.x) → torchfit layer configs (keras_import.h).
#include <map>
#include <optional>

#include <torchfit/error.h>
#include <torchfit/saving/keras_import.h>

namespace torchfit::saving {
namespace {

using nlohmann::json;

// One Keras layer being translated: its class, config and where it comes from (for errors).
struct KerasLayerSpec {
  std::string cls;
  const json& config;
  std::string file;
  bool channels_first;  // the model's data format (Keras 1 dim_ordering "th", Keras 2 data_format)

  std::string name() const { return config.value("name", std::string("?")); }
  [[noreturn]] void refuse(const std::string& why) const {
    throw ConfigError(file + ": layer '" + name() + "' (" + cls + "): " + why);
  }
  // The first of the Keras 2/3 name and its Keras 1 alias that is present and not null; null if neither.
  json get(const char* name, const char* keras1 = nullptr) const {
    if (config.contains(name) && !config[name].is_null()) return config[name];
    if (keras1 && config.contains(keras1) && !config[keras1].is_null()) return config[keras1];
    return nullptr;
  }
  json required(const char* name, const char* keras1 = nullptr) const {
    json v = get(name, keras1);
    if (v.is_null()) refuse(std::string("missing argument '") + name + "'");
    return v;
  }
  // Refuses an argument whose value changes inference and differs from the one torchfit computes.
  void expect(const char* name, const json& wanted, const std::string& why) const {
    const json v = get(name);
    if (!v.is_null() && v != wanted) refuse(std::string("argument ") + name + "=" + v.dump() + " " + why);
  }
};

std::string padding_of(const KerasLayerSpec& s) {
  const json p = s.get("padding", "border_mode");
  if (p.is_null()) return "valid";
  const std::string v = p.get<std::string>();
  if (v != "valid" && v != "same") s.refuse("padding \"" + v + "\" is not supported (valid, same)");
  return v;
}

std::string activation_of(const KerasLayerSpec& s) {
  const json a = s.get("activation");
  return a.is_null() ? "linear" : a.get<std::string>();
}

json pair_of(const json& v) { return v.is_number() ? json::array({v, v}) : v; }

void check_data_format(const KerasLayerSpec& s) {
  s.expect("groups", 1, "(grouped convolution) is not supported");
  s.expect("lora_rank", nullptr, "(LoRA) is not supported");
}

json conv_window(const KerasLayerSpec& s) {
  check_data_format(s);
  json c = {{"padding", padding_of(s)}, {"activation", activation_of(s)}};
  if (s.config.contains("nb_row")) {
    c["kernel_size"] = {s.required("nb_row"), s.required("nb_col")};
  } else {
    c["kernel_size"] = pair_of(s.required("kernel_size"));
  }
  const json strides = s.get("strides", "subsample");
  if (!strides.is_null()) c["strides"] = pair_of(strides);
  const json dilation = s.get("dilation_rate", "atrous_rate");
  if (!dilation.is_null()) c["dilation_rate"] = pair_of(dilation);
  const json bias = s.get("use_bias", "bias");
  c["use_bias"] = bias.is_null() ? true : bias.get<bool>();
  return c;
}

json conv2d(const KerasLayerSpec& s) {
  json c = conv_window(s);
  c["filters"] = s.required("filters", "nb_filter");
  return c;
}

json depthwise_conv2d(const KerasLayerSpec& s) {
  json c = conv_window(s);
  const json m = s.get("depth_multiplier");
  if (!m.is_null()) c["depth_multiplier"] = m;
  return c;
}

json dense(const KerasLayerSpec& s) {
  const json bias = s.get("use_bias", "bias");
  return {{"units", s.required("units", "output_dim")},
          {"activation", activation_of(s)},
          {"use_bias", bias.is_null() ? true : bias.get<bool>()}};
}

json pooling(const KerasLayerSpec& s) {
  json c = {{"pool_size", pair_of(s.required("pool_size"))}, {"padding", padding_of(s)}};
  const json strides = s.get("strides");
  if (!strides.is_null()) c["strides"] = pair_of(strides);
  return c;
}

json global_pooling(const KerasLayerSpec& s) {
  s.expect("keepdims", false, "is not supported (the output is (C))");
  return json::object();
}

json no_arguments(const KerasLayerSpec&) { return json::object(); }

json dropout(const KerasLayerSpec& s) { return {{"rate", s.required("rate", "p")}}; }

json activation(const KerasLayerSpec& s) { return {{"activation", s.required("activation")}}; }

json relu(const KerasLayerSpec& s) {
  s.expect("max_value", nullptr, "(a capped ReLU) is not supported");
  const json slope = s.get("negative_slope");
  if (!slope.is_null() && slope.get<double>() != 0.0) s.refuse("negative_slope != 0 is not supported (use LeakyReLU)");
  const json threshold = s.get("threshold");
  if (!threshold.is_null() && threshold.get<double>() != 0.0) s.refuse("threshold != 0 is not supported");
  return {{"activation", "relu"}};
}

json alpha_layer(const KerasLayerSpec& s) {
  const json a = s.get("alpha", "negative_slope");
  return a.is_null() ? json::object() : json{{"alpha", a}};
}

bool is_channel_axis(const json& axis, bool channels_first) {
  const json a = axis.is_array() && axis.size() == 1 ? axis[0] : axis;
  if (!a.is_number_integer()) return false;
  const int v = a.get<int>();
  return channels_first ? v == 1 : (v == -1 || v == 3);
}

json batch_normalization(const KerasLayerSpec& s) {
  const json axis = s.get("axis");
  if (!axis.is_null() && !is_channel_axis(axis, s.channels_first)) {
    s.refuse("axis " + axis.dump() + " is not the channel axis (only per-channel normalisation is supported)");
  }
  s.expect("mode", 0, "(Keras 1 sample-wise modes) is not supported");
  s.expect("renorm", false, "(batch renormalisation) is not supported");
  json c = json::object();
  for (const char* k : {"momentum", "epsilon"}) {
    if (!s.get(k).is_null()) c[k] = s.get(k);
  }
  for (const char* k : {"center", "scale"}) {  // DS-CNN stores "scale": 1
    const json v = s.get(k);
    if (!v.is_null()) c[k] = v.is_boolean() ? v.get<bool>() : v.get<double>() != 0.0;
  }
  return c;
}

json reshape(const KerasLayerSpec& s) {
  if (s.channels_first) s.refuse("Reshape in a channels_first model is not supported");
  return {{"target_shape", s.required("target_shape")}};
}

using Translator = json (*)(const KerasLayerSpec&);

// Keras class (every version's name) → torchfit class and the translation of its arguments.
const std::map<std::string, std::pair<std::string, Translator>>& translators() {
  static const std::map<std::string, std::pair<std::string, Translator>> table = {
      {"Conv2D", {"Conv2D", conv2d}},
      {"Convolution2D", {"Conv2D", conv2d}},
      {"DepthwiseConv2D", {"DepthwiseConv2D", depthwise_conv2d}},
      {"Dense", {"Dense", dense}},
      {"MaxPooling2D", {"MaxPooling2D", pooling}},
      {"MaxPool2D", {"MaxPooling2D", pooling}},
      {"AveragePooling2D", {"AveragePooling2D", pooling}},
      {"AvgPool2D", {"AveragePooling2D", pooling}},
      {"GlobalAveragePooling2D", {"GlobalAveragePooling2D", global_pooling}},
      {"GlobalAvgPool2D", {"GlobalAveragePooling2D", global_pooling}},
      {"GlobalMaxPooling2D", {"GlobalMaxPooling2D", global_pooling}},
      {"GlobalMaxPool2D", {"GlobalMaxPooling2D", global_pooling}},
      {"Flatten", {"Flatten", no_arguments}},
      {"Dropout", {"Dropout", dropout}},
      {"Activation", {"Activation", activation}},
      {"ReLU", {"Activation", relu}},
      {"LeakyReLU", {"LeakyReLU", alpha_layer}},
      {"ELU", {"ELU", alpha_layer}},
      {"BatchNormalization", {"BatchNormalization", batch_normalization}},
      {"Reshape", {"Reshape", reshape}},
  };
  return table;
}

// (H, W, C) from a Keras batch shape [null, …] (channels_first: [null, C, H, W]).
json input_shape_of(const json& batch_shape, bool channels_first) {
  json shape(batch_shape.begin() + 1, batch_shape.end());
  if (channels_first && shape.size() == 3) shape = {shape[1], shape[2], shape[0]};
  return shape;
}

std::optional<json> declared_input(const json& config, bool channels_first) {
  for (const char* k : {"batch_input_shape", "batch_shape"}) {
    if (config.contains(k) && config[k].is_array()) return input_shape_of(config[k], channels_first);
  }
  if (config.contains("input_dim") && config["input_dim"].is_number_integer())
    return json::array({config["input_dim"]});
  return std::nullopt;
}

}  // namespace

bool keras_model_is_channels_first(const json& keras_model_config) {
  for (const auto& spec : keras_config_layers(keras_model_config)) {
    const json& c = spec.value("config", json::object());
    if (c.value("dim_ordering", std::string()) == "th" || c.value("data_format", std::string()) == "channels_first") {
      return true;
    }
  }
  return false;
}

namespace {
// A functional model whose layers form one chain is a Sequential; otherwise the error names the first
// layer that branches or merges.
void check_chain(const json& keras_model_config, const std::string& file) {
  const std::string cls = keras_model_config.value("class_name", "");
  if (cls == "Sequential") return;
  const auto layers = keras_config_layers(keras_model_config);
  const json& top = keras_model_config["config"];
  auto refuse = [&](const std::string& why) {
    throw ConfigError(file + ": this " + (cls.empty() ? std::string("model") : cls) +
                      " model needs torchfit's functional Model (" + why +
                      "); only Sequential models and functional models that are a single chain are read for now");
  };
  if (cls != "Functional" && cls != "Model") refuse("class " + cls);
  if (top.value("input_layers", json::array()).size() != 1 || top.value("output_layers", json::array()).size() != 1) {
    refuse("several inputs or outputs");
  }
  for (size_t i = 1; i < layers.size(); ++i) {
    const auto in = keras_inbound_layers(layers[i]);
    const std::string prev = layers[i - 1]["config"].value("name", "");
    if (in.size() != 1 || in[0] != prev) {
      refuse("layer '" + layers[i]["config"].value("name", std::string("?")) + "' (" +
             layers[i].value("class_name", std::string("?")) + ") does not take only the previous layer's output");
    }
  }
  const std::string last = layers.empty() ? "" : layers.back()["config"].value("name", "");
  if (top["output_layers"][0][0] != last) refuse("the output is not the last layer");
}
}  // namespace

json keras_sequential_to_json(const json& keras_model_config, const std::string& file) {
  check_chain(keras_model_config, file);
  const bool channels_first = keras_model_is_channels_first(keras_model_config);
  const json& top = keras_model_config["config"];
  json layers = json::array();
  std::optional<json> pending_input;  // from an InputLayer, for the next layer
  for (const auto& spec : keras_config_layers(keras_model_config)) {
    const KerasLayerSpec s{spec.value("class_name", ""), spec.at("config"), file, channels_first};
    if (s.cls == "InputLayer") {
      pending_input = declared_input(s.config, channels_first);
      continue;
    }
    const auto it = translators().find(s.cls);
    if (it == translators().end()) s.refuse("this layer class is not supported by torchfit's Keras import");
    json c = it->second.second(s);
    c["name"] = s.name();
    if (layers.empty()) {
      const auto own = declared_input(s.config, channels_first);
      if (own || pending_input) c["input_shape"] = own ? *own : *pending_input;
    }
    layers.push_back({{"class_name", it->second.first}, {"config", c}});
  }
  if (layers.empty()) throw ConfigError(file + ": the Keras model has no layers");
  if (!layers[0]["config"].contains("input_shape")) {
    throw ConfigError(file + ": the Keras model does not declare its input shape (no InputLayer or batch_input_shape)");
  }
  const std::string name = top.is_object() ? top.value("name", std::string("sequential")) : "sequential";
  return {{"format_version", kModelFormatVersion},
          {"class_name", "Sequential"},
          {"config", {{"name", name}, {"layers", layers}, {"dtype_policy", "float32"}}}};
}

Sequential build_keras_sequential(const KerasFile& file) {
  const json j = keras_sequential_to_json(file.model_config, file.path);
  try {
    return Sequential(SequentialImpl::from_json(j));
  } catch (const ConfigError& e) {
    throw ConfigError(file.path + ": " + e.what());
  }
}

}  // namespace torchfit::saving
