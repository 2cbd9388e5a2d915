// torchfit model → Keras 3's config.json (keras_save.h keras3_model_config): the model's own JSON
// (ModelImpl::to_json) rewritten in Keras 3's serialization, each layer's config completed with the
// arguments Keras writes and torchfit leaves out.
#include <torchfit/error.h>
#include <torchfit/keras/keras_save.h>
#include <torchfit/layers/keras_call.h>
#include <torchfit/layers/layer.h>
#include <torchfit/layers/registry.h>
#include <torchfit/model/model.h>
#include <torchfit/model/sequential.h>

namespace torchfit::keras {

const char* const kKerasWriteVersion = "3.15.1";
const char* const kKeras2WriteVersion = "2.4.0";

namespace {

using Json = nlohmann::json;

// Which Keras writes the config: Keras 3 (module and registered_name on every object, DTypePolicy
// objects, inbound nodes as args/kwargs) or tf.keras 2 (model.to_json of TensorFlow 2.4–2.12).
enum class Flavour { keras2, keras3 };

Json keras_object(const std::string& module, const Json& spec, Flavour f = Flavour::keras3) {
  Json out = {{"class_name", spec.value("class_name", "")}, {"config", spec.value("config", Json::object())}};
  if (f == Flavour::keras2) return out;
  out["module"] = module;
  out["registered_name"] = nullptr;
  return out;
}

Json initializer(const std::string& cls, Json config = Json::object()) {
  return {{"class_name", cls}, {"config", std::move(config)}};  // modules: add_modules
}

// Per class, the arguments of Keras 3's get_config that torchfit's configs may leave out, with the
// values Keras writes by default (keras/src/layers/*: base_conv.py, core/dense.py, …). Arguments added
// after Keras 3.0 (quantization_config, lora_rank, rms_scaling, renorm, InputLayer's optional,
// initializers' input_axes) are not written: an older Keras 3 would refuse them as unknown.
const std::map<std::string, Json>& keras_defaults() {
  static const std::map<std::string, Json> table = [] {
    const Json glorot = initializer("GlorotUniform", {{"seed", nullptr}}), zeros = initializer("Zeros"),
               ones = initializer("Ones");
    const Json orthogonal = initializer("Orthogonal", {{"gain", 1.0}, {"seed", nullptr}});
    const Json embeddings = initializer("RandomUniform", {{"minval", -0.05}, {"maxval", 0.05}, {"seed", nullptr}});
    const auto weights = [](std::initializer_list<std::pair<const char*, Json>> inits, bool activity) {
      Json c = Json::object();
      for (const auto& [w, init] : inits) {
        c[std::string(w) + "_initializer"] = init;
        c[std::string(w) + "_regularizer"] = nullptr;
        c[std::string(w) + "_constraint"] = nullptr;
      }
      if (activity) c["activity_regularizer"] = nullptr;
      return c;
    };
    const Json channels = {{"data_format", "channels_last"}};
    Json conv = weights({{"kernel", glorot}, {"bias", zeros}}, true);
    conv.update(channels);
    Json depthwise = weights({{"depthwise", glorot}, {"bias", zeros}}, true);
    depthwise.update(channels);
    Json separable = weights({{"depthwise", glorot}, {"pointwise", glorot}, {"bias", zeros}}, true);
    separable.update(channels);
    Json grouped = conv;
    grouped["groups"] = 1;
    Json bn = weights({{"beta", zeros}, {"gamma", ones}}, false);
    bn.update({{"moving_mean_initializer", zeros}, {"moving_variance_initializer", ones}, {"synchronized", false}});
    Json global = channels;
    global["keepdims"] = false;
    Json recurrent = weights({{"kernel", glorot}, {"recurrent", orthogonal}, {"bias", zeros}}, true);
    Json embedding = weights({{"embeddings", embeddings}}, true);
    embedding["mask_zero"] = false;
    std::map<std::string, Json> t;
    for (const char* c : {"Conv1D", "Conv2D", "Conv3D"}) t[c] = grouped;
    for (const char* c : {"Conv1DTranspose", "Conv2DTranspose", "Conv3DTranspose"}) t[c] = conv;
    for (const char* c : {"DepthwiseConv1D", "DepthwiseConv2D"}) t[c] = depthwise;
    for (const char* c : {"SeparableConv1D", "SeparableConv2D"}) t[c] = separable;
    t["Dense"] = weights({{"kernel", glorot}, {"bias", zeros}}, false);
    t["BatchNormalization"] = bn;
    t["LayerNormalization"] = weights({{"beta", zeros}, {"gamma", ones}}, false);
    for (const char* c :
         {"MaxPooling1D", "MaxPooling2D", "MaxPooling3D", "AveragePooling1D", "AveragePooling2D", "AveragePooling3D",
          "Flatten", "ZeroPadding2D", "ZeroPadding3D", "Cropping2D", "Cropping3D", "UpSampling2D", "UpSampling3D"})
      t[c] = channels;
    for (const char* c : {"GlobalAveragePooling1D", "GlobalAveragePooling2D", "GlobalAveragePooling3D",
                          "GlobalMaxPooling1D", "GlobalMaxPooling2D", "GlobalMaxPooling3D"})
      t[c] = global;
    t["Dropout"] = {{"seed", nullptr}, {"noise_shape", nullptr}};
    for (const char* c : {"SimpleRNN", "LSTM", "GRU"}) t[c] = recurrent;
    t["Embedding"] = embedding;
    t["MultiHeadAttention"] = weights({{"kernel", glorot}, {"bias", zeros}}, true);
    t["MultiHeadAttention"]["seed"] = nullptr;
    t["GroupQueryAttention"] = t["MultiHeadAttention"];
    t["Attention"] = {{"seed", nullptr}};
    t["AdditiveAttention"] = {{"seed", nullptr}};
    return t;
  }();
  return table;
}

std::string who(const Layer& layer) { return "layer '" + layer.name() + "' (" + layer.class_name() + ")"; }

// Objects torchfit writes as {"class_name", "config"} get Keras 3's module and registered_name.
void add_modules(Json& c, Flavour f) {
  for (auto& [key, v] : c.items()) {
    if (!v.is_object() || !v.contains("class_name")) continue;
    const bool init = key.size() > 12 && key.compare(key.size() - 12, 12, "_initializer") == 0;
    const bool reg = key.size() > 12 && key.compare(key.size() - 12, 12, "_regularizer") == 0;
    if (init) v = keras_object("keras.initializers", v, f);
    if (reg) v = keras_object("keras.regularizers", v, f);
  }
}

Json dtype_policy(const std::string& policy, Flavour f) {
  if (f == Flavour::keras2) {  // tf.keras 2: a name, or a mixed_precision Policy object
    if (policy == "float32") return policy;
    return {{"class_name", "Policy"}, {"config", {{"name", policy}}}};
  }
  return keras_object("keras", {{"class_name", "DTypePolicy"}, {"config", {{"name", policy}}}});
}

// The keys tf.keras 2 does not write (Keras 3 added them), and the one it writes that Keras 3 dropped.
void to_keras2(const std::string& cls, Json& c) {
  if (c.value("keepdims", true) == false) c.erase("keepdims");  // tf.keras 2.6+ only, when set
  c.erase("synchronized");
  if (cls == "Dense" && !c.contains("activity_regularizer")) c["activity_regularizer"] = nullptr;
}

void wrapped_configs(Json& c, const std::string& policy, Flavour f);

// One layer's Keras 3 config: Keras's base arguments, then the layer's own, then Keras's defaults.
Json layer_config(const Layer& layer, Json own, const std::string& policy, Flavour f) {
  if (layer.name().find('/') != std::string::npos) {  // Keras 3 refuses it; in an .h5 it splits the weight paths
    throw ConfigError(who(layer) + ": Keras takes no '/' in a layer name");
  }
  for (const char* k : {"element_order", "axis_order"}) {
    if (own.contains(k)) {
      throw ConfigError(who(layer) + ": its " + std::string(k) + " " + own[k].dump() +
                        " (a Keras 1 \"th\" model's) has no Keras 3 argument");
    }
  }
  for (const char* k : {"input_shape", "batch_input_shape", "batch_shape", "name", "trainable", "dtype"}) own.erase(k);
  if (const auto* call = dynamic_cast<const KerasCallArguments*>(&layer)) {
    for (const auto& flag : call->keras_call_flags()) own.erase(flag);  // Keras has it in the call's kwargs
  }
  if (f == Flavour::keras3 && layer.class_name() == "LeakyReLU" && own.contains("alpha")) {
    own["negative_slope"] = own["alpha"];  // Keras 3's name
    own.erase("alpha");
  }
  Json c = {{"name", layer.name()}, {"trainable", layer.trainable()}, {"dtype", dtype_policy(policy, f)}};
  c.update(own);
  const auto it = keras_defaults().find(layer.class_name());
  if (it != keras_defaults().end()) {
    for (const auto& [k, v] : it->second.items()) {
      if (!c.contains(k)) c[k] = v;
    }
  }
  if (f == Flavour::keras2) to_keras2(layer.class_name(), c);
  add_modules(c, f);
  wrapped_configs(c, policy, f);
  return c;
}

// A wrapper's layers (Bidirectional's "layer" and "backward_layer", TimeDistributed's "layer"), each written as
// Keras serializes a layer: {module, class_name, config (completed as a layer's), registered_name}.
void wrapped_configs(Json& c, const std::string& policy, Flavour f) {
  for (const char* k : {"layer", "backward_layer"}) {
    if (!c.contains(k) || !c[k].is_object() || !c[k].contains("class_name")) continue;
    const std::shared_ptr<Layer> inner = layer_from_json(c[k]);  // its name, trainable and class
    c[k] = keras_object(
        "keras.layers",
        {{"class_name", inner->class_name()}, {"config", layer_config(*inner, c[k]["config"], policy, f)}}, f);
  }
}

Json batch_shape(const Shape& shape) {
  Json s = Json::array({nullptr});
  for (int64_t d : shape) s.push_back(d);
  return s;
}

Json layer_entry(const Layer& layer, const Json& own, const std::string& policy, const Json& input_shape, Flavour f) {
  Json e = keras_object("keras.layers",
                        {{"class_name", layer.class_name()}, {"config", layer_config(layer, own, policy, f)}}, f);
  if (f == Flavour::keras3 && layer.count_params() > 0 && !input_shape.is_null()) {
    e["build_config"] = {{"input_shape", input_shape}};
  }
  return e;
}

Json input_layer(const std::string& name, Json shape, Flavour f) {
  Json c = {{f == Flavour::keras3 ? "batch_shape" : "batch_input_shape", std::move(shape)},
            {"dtype", "float32"},
            {"sparse", false}};
  if (f == Flavour::keras2) c["ragged"] = false;
  c["name"] = name;
  return keras_object("keras.layers", {{"class_name", "InputLayer"}, {"config", c}}, f);
}

// The model's input i as Keras's batch shape: null batch, null for the sizes the model left unknown.
Json model_input_shape(const ModelImpl& model, size_t i, const Shape& shape) {
  Json s = batch_shape(shape);
  for (int64_t axis : model.unknown_input_axes(i)) s.at(static_cast<size_t>(axis) + 1) = nullptr;
  return s;
}

Json sequential_config(const ModelImpl& model, const Json& own, Flavour f) {
  const std::string policy = model.dtype_policy().name();
  const auto& layers = own["config"]["layers"];
  Json out_layers = Json::array();
  Json in_shape = model_input_shape(model, 0, model.input_shape());
  out_layers.push_back(input_layer(f == Flavour::keras3 ? "input_layer" : "input_1", in_shape, f));
  for (const auto& spec : layers) {
    const auto layer = model.get_layer(spec["config"].value("name", ""));
    out_layers.push_back(layer_entry(*layer, spec["config"], policy, batch_shape(layer->input_shape()), f));
  }
  Json config = {{"name", model.model_name()}, {"layers", out_layers}};
  if (f == Flavour::keras2) return {{"class_name", "Sequential"}, {"config", config}};
  config["trainable"] = true;
  config["dtype"] = dtype_policy(policy, f);
  config["build_input_shape"] = in_shape;
  return {{"module", "keras"},
          {"class_name", "Sequential"},
          {"config", config},
          {"registered_name", nullptr},
          {"build_config", {{"input_shape", in_shape}}}};
}

// A tensor reference [layer, node, tensor(, kwargs)] as Keras 3's serialized KerasTensor.
Json keras_tensor(const ModelImpl& model, const Json& ref) {
  const auto layer = model.get_layer(ref.at(0).get<std::string>());
  Json shape = batch_shape(layer->output_shape());
  const Json history = Json::array({ref.at(0), ref.at(1), ref.at(2)});
  return {{"class_name", "__keras_tensor__"},
          {"config", {{"shape", shape}, {"dtype", "float32"}, {"keras_history", history}}}};
}

// The call flags of a KerasCallArguments layer that are set (Keras writes the arguments a call passed).
Json call_flags(const Layer& layer, const KerasCallArguments& call) {
  Json flags = Json::object();
  const Json c = layer.config();
  for (const auto& f : call.keras_call_flags()) {
    if (c.value(f, false) == true) flags[f] = true;
  }
  return flags;
}

// One node of a KerasCallArguments layer: Keras 3's {"args": [query], "kwargs": {"value": …, "key": …, flags}}
// ({"args": [[q, v, k]], "kwargs": {flags}} without keywords); tf.keras 2's [[q, n, t, {"value": [v, n, t],
// …, flags}]] (without keywords: every entry with the flags as its kwargs).
Json call_node(const ModelImpl& model, const KerasCallArguments& call, const Json& node, Json kwargs, Flavour f) {
  const auto keywords = call.keras_call_keywords();
  auto tensor = [&](const Json& ref) {
    return f == Flavour::keras3 ? keras_tensor(model, ref) : Json::array({ref.at(0), ref.at(1), ref.at(2)});
  };
  for (size_t i = 1; i < node.size() && !keywords.empty(); ++i) kwargs[keywords.at(i)] = tensor(node[i]);
  if (f == Flavour::keras3) {
    Json tensors = Json::array();
    for (const auto& ref : node) tensors.push_back(tensor(ref));
    const Json args = keywords.empty() ? Json::array({tensors}) : Json::array({tensors[0]});
    return {{"args", args}, {"kwargs", kwargs}};
  }
  Json entries = Json::array();
  for (size_t i = 0; i < (keywords.empty() ? node.size() : 1); ++i) {
    entries.push_back(Json::array({node[i].at(0), node[i].at(1), node[i].at(2), kwargs}));
  }
  return entries;
}

Json inbound_nodes(const ModelImpl& model, const Layer& layer, const Json& nodes, Flavour f) {
  if (const auto* call = dynamic_cast<const KerasCallArguments*>(&layer)) {
    Json out = Json::array();
    for (const auto& node : nodes) out.push_back(call_node(model, *call, node, call_flags(layer, *call), f));
    return out;
  }
  if (f == Flavour::keras2) return nodes;  // torchfit's own form is tf.keras 2's: [[[layer, node, tensor, {}], …]]
  Json out = Json::array();
  for (const auto& node : nodes) {
    Json tensors = Json::array();
    for (const auto& ref : node) tensors.push_back(keras_tensor(model, ref));
    Json args = layer.takes_list() ? Json::array({tensors}) : tensors;
    out.push_back({{"args", args}, {"kwargs", Json::object()}});
  }
  return out;
}

Json functional_layer(const ModelImpl& model, const Json& spec, const std::string& policy, Flavour f) {
  const auto layer = model.get_layer(spec.value("name", ""));
  Json e;
  if (layer->class_name() == "InputLayer") {
    e = input_layer(layer->name(), spec["config"].value("batch_input_shape", Json()), f);
  } else {
    Json in = Json::array();
    for (const auto& ref : spec["inbound_nodes"].empty() ? Json::array() : spec["inbound_nodes"][0]) {
      in.push_back(keras_tensor(model, ref)["config"]["shape"]);
    }
    e = layer_entry(*layer, spec["config"], policy, in.size() == 1 ? in[0] : in, f);
    const auto* call = dynamic_cast<const KerasCallArguments*>(layer.get());
    if (call && !call->keras_call_keywords().empty() && e.contains("build_config")) {
      // Keras 3 builds such a layer from its call's shapes by argument name: build(query_shape, value_shape, …).
      Json shapes = Json::object();
      for (size_t i = 0; i < in.size(); ++i) shapes[call->keras_call_keywords().at(i) + "_shape"] = in[i];
      e["build_config"] = {{"shapes_dict", shapes}};
    }
  }
  e["name"] = layer->name();
  e["inbound_nodes"] = inbound_nodes(model, *layer, spec["inbound_nodes"], f);
  return e;
}

Json functional_config(const ModelImpl& model, const Json& own, Flavour f) {
  const std::string policy = model.dtype_policy().name();
  Json layers = Json::array();
  for (const auto& spec : own["config"]["layers"]) layers.push_back(functional_layer(model, spec, policy, f));
  Json config = {{"name", model.model_name()}, {"trainable", true}, {"layers", layers}};
  config["input_layers"] = own["config"]["input_layers"];
  config["output_layers"] = own["config"]["output_layers"];
  if (f == Flavour::keras2) {
    config.erase("trainable");
    return {{"class_name", "Functional"}, {"config", config}};
  }
  return {{"module", "keras.src.models.functional"},
          {"class_name", "Functional"},
          {"config", config},
          {"registered_name", "Functional"},
          {"build_config", {{"input_shape", nullptr}}}};
}

Json model_config(const ModelImpl& model, Flavour f) {
  const Json own = model.to_json();
  if (dynamic_cast<const SequentialImpl*>(&model) != nullptr) return sequential_config(model, own, f);
  return functional_config(model, own, f);
}

}  // namespace

namespace {

// A loss or metric as the user gave it: a name, or Keras object JSON text written as the object.
Json keras_spec(const Json& given) {
  if (given.is_string()) {
    const std::string text = given.get<std::string>();
    if (!text.empty() && text.front() == '{') {
      const Json parsed = Json::parse(text, nullptr, false);
      if (!parsed.is_discarded()) return parsed;
    }
  }
  return given;
}

// A loss or metric setting as Keras's compile config holds it: one entry, a list per output (or, for
// metrics, per output a list) or an object by output name, each entry keras_spec'd.
Json nested_spec(const Json& given) {
  if (given.is_array()) {
    Json out = Json::array();
    for (const auto& e : given) out.push_back(nested_spec(e));
    return out;
  }
  if (given.is_object() && !given.contains("class_name")) {
    Json out = Json::object();
    for (const auto& [k, v] : given.items()) out[k] = nested_spec(v);
    return out;
  }
  return keras_spec(given);
}

const std::map<std::string, std::string>& optimizer_classes() {
  static const std::map<std::string, std::string> m = {
      {"adam", "Adam"},       {"sgd", "SGD"},           {"rmsprop", "RMSprop"},    {"adamw", "AdamW"},
      {"adagrad", "Adagrad"}, {"adadelta", "Adadelta"}, {"adamax", "Adamax"},      {"nadam", "Nadam"},
      {"ftrl", "Ftrl"},       {"lion", "Lion"},         {"adafactor", "Adafactor"}};
  return m;
}

// An optimizer's Keras object of a checkpoint's optimizer settings (Keras's argument names already).
Json optimizer_object(const Json& settings, Flavour f) {
  const std::string name = settings.value("name", "adam");
  const auto it = optimizer_classes().find(name);
  if (it == optimizer_classes().end()) throw ConfigError("optimizer '" + name + "' has no Keras class");
  Json config = settings;
  for (const char* k : {"ema_overwrite_frequency", "loss_scale_factor"}) {  // Keras's, which torchfit has not
    if (f == Flavour::keras3 && !config.contains(k)) config[k] = nullptr;
  }
  if (f == Flavour::keras2) {  // tf.keras 2's optimizers refuse Keras 3's settings
    for (const char* k : {"use_ema", "ema_momentum", "ema_overwrite_frequency", "loss_scale_factor",
                          "gradient_accumulation_steps", "global_clipnorm", "weight_decay"}) {
      if (config.contains(k) && (config[k].is_null() || config[k] == false || k != std::string("weight_decay")))
        config.erase(k);
    }
    if (config.contains("learning_rate") && config["learning_rate"].is_object()) {
      config["learning_rate"] = {{"class_name", config["learning_rate"].value("class_name", "")},
                                 {"config", config["learning_rate"].value("config", Json::object())}};
    }
  }
  return keras_object("keras.optimizers", {{"class_name", it->second}, {"config", config}}, f);
}

}  // namespace

nlohmann::json keras_compile_config(const nlohmann::json& compile, bool keras2) {
  const Flavour f = keras2 ? Flavour::keras2 : Flavour::keras3;
  const Json metrics = nested_spec(compile.value("metrics", Json::array()));
  const Json optimizer = optimizer_object(compile.value("optimizer", Json::object()), f);
  const Json loss = nested_spec(compile.value("loss", Json()));
  const Json weights = compile.value("loss_weights", Json());
  const Json weighted = compile.contains("weighted_metrics") && !compile["weighted_metrics"].is_null()
                            ? nested_spec(compile["weighted_metrics"])
                            : Json();
  if (keras2) {
    return {{"loss", loss},
            {"metrics", metrics},
            {"weighted_metrics", weighted},
            {"loss_weights", weights},
            {"optimizer_config", optimizer}};
  }
  return {{"optimizer", optimizer},       {"loss", loss},         {"loss_weights", weights},  {"metrics", metrics},
          {"weighted_metrics", weighted}, {"run_eagerly", false}, {"steps_per_execution", 1}, {"jit_compile", false}};
}

nlohmann::json keras3_model_config(const ModelImpl& model) { return model_config(model, Flavour::keras3); }

nlohmann::json keras2_model_config(const ModelImpl& model) { return model_config(model, Flavour::keras2); }

}  // namespace torchfit::keras
