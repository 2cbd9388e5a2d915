// Keras 3 files out (keras_save.h): model.weights.h5 in Keras 3's per-layer variable layout, and the
// .keras zip around it with config.json and metadata.json.
#include <torchfit/keras/keras_save.h>

#include <ctime>
#include <map>

#include <torchfit/error.h>
#include <torchfit/io/atomic_file.h>
#include <torchfit/layers/layer.h>
#include <torchfit/layers/shape.h>
#include <torchfit/model/model.h>
#include <torchfit/model/sequential.h>

#include <cctype>
#include <filesystem>
#include <regex>
#include <set>

#include <unistd.h>

#include <ATen/ATen.h>
#include <torch/csrc/autograd/grad_mode.h>

#include "keras/keras_variables.h"

#if TORCHFIT_HAVE_KERAS_IMPORT
#include <zip.h>

#include "keras/hdf5_writer.h"
#include "keras/keras_layer_config.h"
#endif

namespace torchfit::keras {

namespace {

// Every weight of `model` finite: else NumericError naming the file and the weight (a Keras file is never
// written with nan/inf, as a checkpoint is not).
void check_finite(const ModelImpl& model, const std::string& path) {
  for (const auto& p : model.named_parameters(true)) {
    if (!at::isfinite(p.value()).all().item<bool>()) {
      throw NumericError("'" + path + "': weight '" + p.key() +
                         "' holds non-finite values (nan/inf); a Keras file is never written with them");
    }
  }
}

}  // namespace

#if TORCHFIT_HAVE_KERAS_IMPORT
namespace {

using detail::Hdf5Writer;

using detail::weights_in_cell;
using detail::wrapped_layers;

// `layer`'s variables under `group` ("/layers/<key>"): its own vars (named after it), a recurrent layer's in
// cell/vars, a wrapper's in its layers' groups under their Keras 3 attribute names (forward_layer, …).
void write_layer(Hdf5Writer& h5, const Layer& layer, const std::string& group) {
  h5.group(group + "/vars");
  h5.text_attribute(group + "/vars", "name", layer.name());
  const auto inner = wrapped_layers(layer);
  if (!inner.empty()) {
    for (const auto& [attr, l] : inner) write_layer(h5, *l, group + "/" + attr);
    return;
  }
  std::vector<at::Tensor> weights;
  if (!layer.keras_weight_names().empty()) {
    weights = layer.keras_weights();  // ConfigError naming the layer when its class has no Keras layout
  }
  const auto& children = keras_config::keras3_weight_children(layer.class_name());
  if (!children.empty()) {  // the sublayers' vars (MultiHeadAttention's query_dense/vars, …)
    const auto names = layer.keras_weight_names();
    for (const auto& child : children) {
      const std::string vars = group + "/" + child.attribute + "/vars";
      h5.group(group + "/" + child.attribute);
      h5.group(vars);
      h5.text_attribute(vars, "name", child.prefix);
      int i = 0;
      for (size_t w = 0; w < names.size(); ++w) {
        if (names[w].rfind(child.prefix + "/", 0) == 0) h5.dataset(vars + "/" + std::to_string(i++), weights.at(w));
      }
    }
    return;
  }
  std::string vars = group + "/vars";
  if (weights_in_cell(layer)) {
    vars = group + "/cell/vars";
    h5.group(vars);
    h5.text_attribute(vars, "name", keras_snake_case(layer.class_name()) + "_cell");
  }
  for (size_t i = 0; i < weights.size(); ++i) h5.dataset(vars + "/" + std::to_string(i), weights[i]);
}

// A layer's parameters set to probe values, put back on destruction (the writers read slots through the
// layer's own Keras weight layout: a slot in a parameter's place comes out in its weight's layout).
class ParameterProbe {
 public:
  explicit ParameterProbe(const Layer& layer) : layer_(layer), params_(layer.parameters()) {
    for (const auto& p : params_) saved_.push_back(p.detach().clone());
  }
  ~ParameterProbe() {
    torch::NoGradGuard no_grad;
    for (size_t i = 0; i < params_.size(); ++i) params_[i].detach().copy_(saved_[i]);
  }
  ParameterProbe(const ParameterProbe&) = delete;
  ParameterProbe& operator=(const ParameterProbe&) = delete;
  // keras_weights() with every parameter zero except `p`, which holds `value`.
  std::vector<at::Tensor> keras_weights_with(const at::Tensor& p, const at::Tensor& value) {
    torch::NoGradGuard no_grad;
    for (auto& q : params_) q.detach().zero_();
    p.detach().copy_(value);
    return layer_.keras_weights();
  }
  const std::vector<at::Tensor>& parameters() const { return params_; }

 private:
  const Layer& layer_;
  std::vector<at::Tensor> params_, saved_;
};

// One trainable weight: its layer, its index in keras_weights() and its Keras name.
struct TrainableWeight {
  const Layer* layer;
  size_t index;
  at::Tensor parameter;
};

// The layer's trainable weights in Keras's order: each trainable parameter and the one Keras weight it fills
// (found by setting it alone to ones). Errors: ConfigError naming the layer when a parameter fills none or
// several Keras weights, or two parameters one.
std::vector<TrainableWeight> trainable_weights(const Layer& layer) {
  ParameterProbe probe(layer);
  std::map<size_t, TrainableWeight> by_index;
  for (const auto& p : probe.parameters()) {
    if (!p.requires_grad() || p.numel() == 0) continue;
    const auto w = probe.keras_weights_with(p, at::ones_like(p));
    std::vector<size_t> filled;
    for (size_t i = 0; i < w.size(); ++i)
      if (w[i].numel() > 0 && w[i].ne(0).any().item<bool>()) filled.push_back(i);
    if (filled.size() != 1 || by_index.count(filled[0])) {
      throw ConfigError("layer '" + layer.name() + "' (" + layer.class_name() + ")" + ": a parameter of shape " +
                        format_shape(p.sizes().vec()) +
                        " does not fill exactly one Keras weight, so its optimizer slots have no Keras layout");
    }
    by_index.emplace(filled[0], TrainableWeight{&layer, filled[0], p});
  }
  std::vector<TrainableWeight> out;
  for (auto& [i, w] : by_index) out.push_back(w);
  return out;
}

// Keras's model.trainable_variables: model.layers' trainable weights in turn.
std::vector<TrainableWeight> model_trainable_weights(const ModelImpl& model) {
  std::vector<TrainableWeight> out;
  for (const auto& layer : model.layers()) {
    if (layer->keras_weight_names().empty()) continue;
    for (auto& w : trainable_weights(*layer)) out.push_back(w);
  }
  return out;
}

// The slot `name` of `w`, in its Keras weight's layout. Errors: ConfigError naming the layer without it.
at::Tensor keras_slot(const KerasOptimizerState& state, const TrainableWeight& w, const std::string& name) {
  const auto it = state.slots.find(w.parameter.unsafeGetTensorImpl());
  if (it == state.slots.end() || !it->second.count(name)) {
    throw ConfigError("layer '" + w.layer->name() + "' (" + w.layer->class_name() + ")" + ": the optimizer holds no '" +
                      name + "' slot for its weight '" + w.layer->keras_weight_names()[w.index] +
                      "' (a parameter the optimizer does not train)");
  }
  ParameterProbe probe(*w.layer);
  return probe.keras_weights_with(w.parameter, it->second.at(name).to(w.parameter.options()))[w.index];
}

// Keras 3's optimizer.variables (KerasOptimizerState): iterations, the rate, then the slot groups.
std::vector<at::Tensor> keras3_optimizer_variables(const ModelImpl& model, const KerasOptimizerState& state) {
  std::vector<at::Tensor> vars = {at::scalar_tensor(state.iterations, at::kLong)};
  if (state.learning_rate) vars.push_back(at::scalar_tensor(*state.learning_rate, at::kFloat));
  const auto weights = model_trainable_weights(model);
  for (const auto& group : state.groups)
    for (const auto& w : weights)
      for (const auto& name : group) vars.push_back(keras_slot(state, w, name));
  return vars;
}

void write_optimizer(Hdf5Writer& h5, const ModelImpl& model, const KerasOptimizerState& state) {
  h5.group("/optimizer/vars");
  h5.text_attribute("/optimizer/vars", "name", keras_snake_case(state.class_name));
  const auto vars = keras3_optimizer_variables(model, state);
  for (size_t i = 0; i < vars.size(); ++i) h5.dataset("/optimizer/vars/" + std::to_string(i), vars[i]);
}

// model.weights.h5: the model's own (empty) vars, then each layer under its Keras 3 key.
std::string weights_file(const ModelImpl& model, const std::string& name,
                         const std::optional<KerasOptimizerState>& optimizer = std::nullopt) {
  Hdf5Writer h5(name);
  h5.group("/vars");
  h5.text_attribute("/vars", "name", model.model_name());
  h5.group("/layers");
  const bool sequential = dynamic_cast<const SequentialImpl*>(&model) != nullptr;
  std::map<std::string, int> seen;
  for (const auto& layer : model.layers()) {
    if (sequential && layer->class_name() == "InputLayer") continue;  // Sequential.layers omits it
    const std::string base = keras_name_base(layer->class_name());
    const int n = seen[base]++;
    write_layer(h5, *layer, "/layers/" + (n == 0 ? base : base + "_" + std::to_string(n)));
  }
  if (optimizer) write_optimizer(h5, model, *optimizer);
  return h5.bytes();
}

// tf.keras 2's weight names below `scope`: "<scope><weight>:0", a recurrent layer's "<scope><cell>/<weight>:0",
// a Bidirectional's layers' under their names (its build's name scopes: "bidirectional/forward_lstm/lstm_cell/
// kernel:0"), a TimeDistributed's layer's under the wrapper's alone ("time_distributed/kernel:0").
void keras2_weight_names(const Layer& layer, const std::string& scope, std::vector<std::string>& names) {
  const auto inner = wrapped_layers(layer);
  for (const auto& [attr, l] : inner) {
    keras2_weight_names(*l, scope + (layer.class_name() == "Bidirectional" ? l->name() + "/" : ""), names);
  }
  if (!inner.empty()) return;
  const std::string prefix = scope + (weights_in_cell(layer) ? keras_snake_case(layer.class_name()) + "_cell/" : "");
  for (const auto& w : layer.keras_weight_names()) names.push_back(prefix + w + ":0");
}

std::vector<std::string> keras2_weight_names(const Layer& layer) {
  std::vector<std::string> names;
  keras2_weight_names(layer, layer.name() + "/", names);
  return names;
}

// tf.keras 2's /optimizer_weights (hdf5_format.save_optimizer_weights_to_hdf5_group): "<Class>/iter:0", then
// each slot kind of every weight in turn, named "<Class>/<weight name without :0>/<slot>:0".
void write_keras2_optimizer(Hdf5Writer& h5, const ModelImpl& model, const KerasOptimizerState& state) {
  const std::string root = "/optimizer_weights/", prefix = state.class_name + "/";
  std::vector<std::pair<std::string, at::Tensor>> vars = {
      {prefix + "iter:0", at::scalar_tensor(state.iterations, at::kLong)}};
  const auto weights = model_trainable_weights(model);
  for (const auto& group : state.groups) {
    for (const auto& slot : group) {
      const auto name = state.keras2_names.find(slot);
      if (name == state.keras2_names.end()) continue;
      for (const auto& w : weights) {
        const std::string weight = keras2_weight_names(*w.layer)[w.index];
        vars.emplace_back(prefix + weight.substr(0, weight.size() - 2) + "/" + name->second + ":0",
                          keras_slot(state, w, slot));
      }
    }
  }
  std::vector<std::string> names;
  for (const auto& [name, value] : vars) {
    const std::string path = root + name;
    h5.group(path.substr(0, path.rfind('/')));
    h5.dataset(path, value);
    names.push_back(name);
  }
  h5.bytes_list_attribute("/optimizer_weights", "weight_names", names);
}

// tf.keras 2's full-model HDF5 (hdf5_format.save_model_to_hdf5): the root's keras_version, backend and
// model_config; /model_weights with layer_names, and per layer its weight_names and their datasets.
std::string keras2_h5_file(const ModelImpl& model, const std::string& name, const KerasSaveOptions& options) {
  Hdf5Writer h5(name);
  h5.text_attribute("/", "backend", "tensorflow");
  h5.text_attribute("/", "keras_version", kKeras2WriteVersion);
  h5.text_attribute("/", "model_config", keras2_model_config(model).dump());
  if (!options.compile.is_null())
    h5.text_attribute("/", "training_config", keras_compile_config(options.compile, true).dump());
  if (!options.torchfit.empty()) h5.text_attribute("/", "torchfit", options.torchfit.to_json().dump());
  h5.group("/model_weights");
  const bool sequential = dynamic_cast<const SequentialImpl*>(&model) != nullptr;
  std::vector<std::string> layer_names;
  for (const auto& layer : model.layers()) {
    if (sequential && layer->class_name() == "InputLayer") continue;  // Sequential.layers omits it
    layer_names.push_back(layer->name());
    const std::string group = "/model_weights/" + layer->name();
    h5.group(group);
    const auto names = keras2_weight_names(*layer);
    h5.bytes_list_attribute(group, "weight_names", names);
    if (names.empty()) continue;
    const std::vector<at::Tensor> weights = layer->keras_weights();
    for (size_t i = 0; i < names.size(); ++i) {
      const std::string path = group + "/" + names[i];
      h5.group(path.substr(0, path.rfind('/')));
      h5.dataset(path, weights[i]);
    }
  }
  h5.text_attribute("/model_weights", "backend", "tensorflow");
  h5.text_attribute("/model_weights", "keras_version", kKeras2WriteVersion);
  h5.bytes_list_attribute("/model_weights", "layer_names", layer_names);
  if (options.optimizer) write_keras2_optimizer(h5, model, *options.optimizer);
  return h5.bytes();
}

std::string date_saved() {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  localtime_r(&now, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%d@%H:%M:%S", &tm);
  return buf;
}

// A zip of `entries` (name, bytes) stored uncompressed, as Python's zipfile writes a .keras file.
void write_zip(const std::string& path, const std::vector<std::pair<std::string, std::string>>& entries) {
  int err = 0;
  zip_t* z = zip_open(path.c_str(), ZIP_CREATE | ZIP_TRUNCATE, &err);
  if (!z) throw IoError("cannot write '" + path + "': libzip error " + std::to_string(err));
  for (const auto& [name, bytes] : entries) {
    zip_source_t* src = zip_source_buffer(z, bytes.data(), bytes.size(), 0);
    const zip_int64_t i = src ? zip_file_add(z, name.c_str(), src, ZIP_FL_OVERWRITE | ZIP_FL_ENC_UTF_8) : -1;
    if (i < 0 || zip_set_file_compression(z, static_cast<zip_uint64_t>(i), ZIP_CM_STORE, 0) < 0) {
      if (src && i < 0) zip_source_free(src);
      const std::string why = zip_strerror(z);
      zip_discard(z);
      throw IoError("cannot write '" + path + "': " + name + ": " + why);
    }
  }
  if (zip_close(z) < 0) {
    const std::string why = zip_strerror(z);
    zip_discard(z);
    throw IoError("cannot write '" + path + "': " + why);
  }
}

}  // namespace

void save_keras_model(const ModelImpl& model, const std::string& path, const KerasSaveOptions& options) {
  check_finite(model, path);
  nlohmann::json config = keras3_model_config(model);
  if (!options.compile.is_null()) config["compile_config"] = keras_compile_config(options.compile);
  nlohmann::json metadata = {{"keras_version", kKerasWriteVersion}, {"date_saved", date_saved()}};
  if (!options.torchfit.empty()) metadata["torchfit"] = options.torchfit.to_json();
  const std::vector<std::pair<std::string, std::string>> entries = {
      {"metadata.json", metadata.dump()},
      {"config.json", config.dump()},
      {"model.weights.h5", weights_file(model, path + " (model.weights.h5)", options.optimizer)}};
  io::write_atomically(path, [&](const std::string& tmp) { write_zip(tmp, entries); });
}

void save_keras_weights(const ModelImpl& model, const std::string& path) {
  check_finite(model, path);
  io::write_text_atomically(path, weights_file(model, path));
}

void save_keras_h5(const ModelImpl& model, const std::string& path, const KerasSaveOptions& options) {
  check_finite(model, path);
  io::write_text_atomically(path, keras2_h5_file(model, path, options));
}

#else

void save_keras_model(const ModelImpl&, const std::string& path, const KerasSaveOptions&) {
  throw ConfigError(path +
                    ": torchfit was built without the Keras file support (HDF5 and libzip): install "
                    "libhdf5-dev and libzip-dev, then reconfigure");
}
void save_keras_weights(const ModelImpl& model, const std::string& path) { save_keras_model(model, path); }
void save_keras_h5(const ModelImpl& model, const std::string& path, const KerasSaveOptions&) {
  save_keras_model(model, path);
}

#endif

namespace {

bool ends_with(std::string s, const std::string& suffix) {  // case-insensitive, as the readers' extensions
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

}  // namespace

std::string keras_output_kind(const std::string& path) {
  if (!path.empty() && path.back() == '/') return "TensorFlow.js Layers model";
  if (ends_with(path, ".keras")) return "Keras 3 model";
  if (ends_with(path, ".weights.h5")) return "Keras 3 weights";
  if (ends_with(path, ".h5") || ends_with(path, ".hdf5")) return "tf.keras 2 HDF5 model";
  return "";
}

std::string save_keras_file(const ModelImpl& model, const std::string& path, const KerasSaveOptions& options) {
  const std::string kind = keras_output_kind(path);
  if (kind.empty()) {
    throw ConfigError("'" + path + "' names no Keras format (.keras, .weights.h5, .h5, or a TF.js folder ending in /)");
  }
  if (kind == "Keras 3 model") save_keras_model(model, path, options);
  if (kind == "Keras 3 weights") save_keras_weights(model, path);
  if (kind == "tf.keras 2 HDF5 model") save_keras_h5(model, path, options);
  if (kind == "TensorFlow.js Layers model") save_tfjs_model(model, path.substr(0, path.size() - 1), options);
  return kind;
}

namespace {

constexpr size_t kShardBytes = size_t{4} << 20;  // tensorflowjs_converter's default shard size

// Every layer's weights as float32 (TF.js's default dtype), each named "<layer>/<weight>" as TF.js names
// a layer's variables (a recurrent layer's too: no cell in the name).
std::pair<nlohmann::json, std::string> tfjs_weights(const ModelImpl& model) {
  nlohmann::json specs = nlohmann::json::array();
  std::string data;
  for (const auto& layer : model.layers()) {
    const auto names = layer->keras_weight_names();
    if (names.empty()) continue;
    const std::vector<at::Tensor> weights = layer->keras_weights();
    for (size_t i = 0; i < names.size(); ++i) {
      const at::Tensor w = weights[i].detach().to(at::kCPU, at::kFloat).contiguous();
      specs.push_back({{"name", layer->name() + "/" + names[i]}, {"shape", w.sizes().vec()}, {"dtype", "float32"}});
      data.append(static_cast<const char*>(w.data_ptr()), static_cast<size_t>(w.numel()) * sizeof(float));
    }
  }
  return {specs, data};
}

// TensorFlow.js knows Keras's L1L2 regularizer class, not its L1 and L2 shorthands: each becomes an L1L2.
void tfjs_regularizers(nlohmann::json& j) {
  if (j.is_array()) {
    for (auto& v : j) tfjs_regularizers(v);
    return;
  }
  if (!j.is_object()) return;
  const std::string cls = j.value("class_name", "");
  if ((cls == "L1" || cls == "L2") && j.contains("config") && j["config"].is_object()) {
    const std::string key = cls == "L1" ? "l1" : "l2";
    nlohmann::json c = {{"l1", 0.0}, {"l2", 0.0}};
    c[key] = j["config"].value(key, 0.0);
    j = {{"class_name", "L1L2"}, {"config", c}};
    return;
  }
  for (auto& [k, v] : j.items()) tfjs_regularizers(v);
}

}  // namespace

namespace {

// What TensorFlow.js 4.22's layers can load as Keras computes it: its registered layer classes, its
// activations, and the settings it lacks or computes otherwise (read from tfjs-layers' serialization
// map and its ValueErrors).
void check_tfjs_layer(const Layer& layer) {
  static const std::set<std::string> classes = {"Activation",
                                                "Add",
                                                "AlphaDropout",
                                                "Average",
                                                "AveragePooling1D",
                                                "AveragePooling2D",
                                                "AveragePooling3D",
                                                "BatchNormalization",
                                                "Bidirectional",
                                                "CenterCrop",
                                                "Concatenate",
                                                "Conv1D",
                                                "Conv2D",
                                                "Conv2DTranspose",
                                                "Conv3D",
                                                "Conv3DTranspose",
                                                "Cropping2D",
                                                "Dense",
                                                "DepthwiseConv2D",
                                                "Dot",
                                                "Dropout",
                                                "ELU",
                                                "Embedding",
                                                "Flatten",
                                                "GRU",
                                                "GaussianDropout",
                                                "GaussianNoise",
                                                "GlobalAveragePooling1D",
                                                "GlobalAveragePooling2D",
                                                "GlobalMaxPooling1D",
                                                "GlobalMaxPooling2D",
                                                "InputLayer",
                                                "LSTM",
                                                "LayerNormalization",
                                                "LeakyReLU",
                                                "Masking",
                                                "MaxPooling1D",
                                                "MaxPooling2D",
                                                "MaxPooling3D",
                                                "Maximum",
                                                "Minimum",
                                                "Multiply",
                                                "PReLU",
                                                "Permute",
                                                "ReLU",
                                                "RepeatVector",
                                                "Rescaling",
                                                "Reshape",
                                                "Resizing",
                                                "SeparableConv2D",
                                                "SimpleRNN",
                                                "Softmax",
                                                "SpatialDropout1D",
                                                "ThresholdedReLU",
                                                "TimeDistributed",
                                                "UpSampling2D",
                                                "ZeroPadding2D"};
  static const std::set<std::string> activations = {"elu",   "gelu",    "linear",  "relu",     "relu6",
                                                    "selu",  "sigmoid", "softmax", "softplus", "softsign",
                                                    "swish", "tanh",    "mish"};
  const std::string who = "layer '" + layer.name() + "' (" + layer.class_name() + "): ";
  const std::string instead = "; write a .keras, .h5 or ONNX file instead";
  if (!classes.count(layer.class_name())) throw ConfigError(who + "TensorFlow.js 4.22 has no such layer" + instead);
  const nlohmann::json c = layer.config();
  const auto is = [&](const char* key, const nlohmann::json& v) { return c.contains(key) && c[key] == v; };
  std::string why;
  if (c.contains("activation") && c["activation"].is_string() && !activations.count(c["activation"].get<std::string>()))
    why = "TensorFlow.js has no activation " + c["activation"].dump();
  if (layer.class_name() == "GRU" && !is("reset_after", false))
    why = "TensorFlow.js's GRU has no reset_after=True (Keras 3's default)";
  if (layer.class_name() == "ReLU" && ((c.contains("negative_slope") && !is("negative_slope", 0.0)) ||
                                       (c.contains("threshold") && !is("threshold", 0.0))))
    why = "TensorFlow.js's ReLU ignores negative_slope and threshold";
  if (layer.class_name() == "UpSampling2D" && is("interpolation", "bilinear"))
    why = "TensorFlow.js resizes bilinearly without Keras's half-pixel centres";
  if (layer.activity_regularizer()) why = "TensorFlow.js has no activity regularizer";
  if (layer.class_name() == "Bidirectional") {
    nlohmann::json f = c.at("layer").at("config"), b = c.at("backward_layer").at("config");
    for (auto* j : {&f, &b}) {
      j->erase("name");
      j->erase("go_backwards");
    }
    if (f != b || f.value("go_backwards", false))
      why =
          "TensorFlow.js derives the backward layer from the forward one (go_backwards flipped): a backward_layer "
          "that is not the forward layer's mirror, or a forward layer going backwards, is not read as written";
  }
  if (!why.empty()) throw ConfigError(who + why + instead);
  for (const auto& [attr, inner] : detail::wrapped_layers(layer)) check_tfjs_layer(*inner);
}

// TensorFlow.js's Bidirectional reads "layer" only, names its forward layer "forward_" + that layer's name and
// derives the backward one: the forward layer's config under its wrapped name, without backward_layer.
void tfjs_wrappers(nlohmann::json& model_config) {
  for (auto& spec : model_config.at("config").at("layers")) {
    if (spec.value("class_name", "") != "Bidirectional") continue;
    nlohmann::json& c = spec.at("config");
    std::string name = c.at("layer").at("config").value("name", "");
    if (name.rfind("forward_", 0) == 0) name = name.substr(8);
    c["layer"]["config"]["name"] = name;
    c.erase("backward_layer");
  }
}

// TensorFlow.js's tensor names: [A-Za-z0-9][-A-Za-z0-9_.]* for a layer name (its weights add "/<weight>").
void check_tfjs_name(const Layer& layer) {
  const std::string& n = layer.name();
  bool ok = !n.empty() && std::isalnum(static_cast<unsigned char>(n[0]));
  for (char ch : n) ok = ok && (std::isalnum(static_cast<unsigned char>(ch)) || ch == '-' || ch == '_' || ch == '.');
  if (!ok) {
    throw ConfigError("layer '" + n + "' (" + layer.class_name() +
                      "): TensorFlow.js takes layer names of letters, digits, '-', '_' and '.' only");
  }
}

// An existing `target` folder holds a TF.js model only (model.json and its groupN-shardMofK.bin shards): the
// export replaces the whole folder, so anything else there would go with it. Errors: ConfigError naming the
// folder and the first other entry.
void check_replaceable(const std::filesystem::path& target, const std::string& dir) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::is_directory(target, ec)) return;
  static const std::regex shard("group[0-9]+-shard[0-9]+of[0-9]+\\.bin");
  for (const auto& entry : fs::directory_iterator(target, ec)) {
    const std::string name = entry.path().filename().string();
    if (name == "model.json" || (entry.is_regular_file(ec) && std::regex_match(name, shard))) continue;
    throw ConfigError("the TF.js model folder '" + dir + "' holds '" + name +
                      "', which is not part of a TF.js model: the export replaces the whole folder, so write it "
                      "to a new or empty folder, or to one that holds a TF.js model only");
  }
}

// The shards and model.json in `dir`, model.json last: each named shard is written before it is named.
void write_tfjs_folder(const std::string& dir, const nlohmann::json& topology, const nlohmann::json& specs,
                       const std::string& data, const TorchfitMetadata& torchfit) {
  const size_t shards = std::max<size_t>(1, (data.size() + kShardBytes - 1) / kShardBytes);
  nlohmann::json paths = nlohmann::json::array();
  for (size_t i = 0; i < shards; ++i) {
    const std::string name = "group1-shard" + std::to_string(i + 1) + "of" + std::to_string(shards) + ".bin";
    const size_t begin = i * kShardBytes;
    io::write_text_atomically(dir + "/" + name, data.substr(begin, std::min(kShardBytes, data.size() - begin)));
    paths.push_back(name);
  }
  nlohmann::json manifest = {{"format", "layers-model"},
                             {"generatedBy", std::string("torchfit ") + TORCHFIT_VERSION},
                             {"convertedBy", nullptr},
                             {"modelTopology", topology},
                             {"weightsManifest", {{{"paths", paths}, {"weights", specs}}}}};
  if (!torchfit.empty()) manifest["userDefinedMetadata"] = {{"torchfit", torchfit.to_json()}};
  io::write_text_atomically(dir + "/model.json", manifest.dump());
}

// What TensorFlow.js cannot load or computes otherwise, refused naming the layer.
void check_tfjs_model(const ModelImpl& model) {
  for (const auto& layer : model.layers()) {
    check_tfjs_layer(*layer);
    check_tfjs_name(*layer);
  }
  for (const auto& n : model.masked_consumers()) {
    if (n->layer->class_name() == "GlobalAveragePooling1D") {
      throw ConfigError("layer '" + n->layer->name() +
                        "' (GlobalAveragePooling1D): TensorFlow.js averages every "
                        "step, Keras only the steps its mask keeps; write a .keras, .h5 file instead");
    }
  }
}

}  // namespace

void save_tfjs_model(const ModelImpl& model, const std::string& dir, const KerasSaveOptions& options) {
  check_finite(model, dir);
  check_tfjs_model(model);
  nlohmann::json config = keras2_model_config(model);
  tfjs_regularizers(config);
  tfjs_wrappers(config);
  const nlohmann::json topology = {
      {"keras_version", kKeras2WriteVersion}, {"backend", "tensorflow"}, {"model_config", config}};
  auto [specs, data] = tfjs_weights(model);
  // A new folder beside the target, swapped in whole: a reader never sees shards of two models, and an
  // old folder's extra shards go with it.
  namespace fs = std::filesystem;
  const fs::path target = fs::path(dir).lexically_normal();
  const fs::path parent = target.has_parent_path() ? target.parent_path() : fs::path(".");
  check_replaceable(target, dir);
  std::error_code ec;
  fs::create_directories(parent, ec);
  if (ec) throw IoError("cannot create the folder '" + parent.string() + "' of the TF.js model: " + ec.message());
  const std::string stem = "." + target.filename().string() + ".tmp" + std::to_string(::getpid());
  const fs::path fresh = parent / stem, old = parent / (stem + ".old");
  fs::remove_all(fresh, ec);
  if (!fs::create_directory(fresh, ec) || ec)
    throw IoError("cannot write the TF.js model folder '" + dir + "': " + (ec ? ec.message() : "exists"));
  try {
    write_tfjs_folder(fresh.string(), topology, specs, data, options.torchfit);
    if (fs::exists(target)) fs::rename(target, old);
    fs::rename(fresh, target);
  } catch (const std::exception& e) {
    fs::remove_all(fresh, ec);
    throw IoError("cannot write the TF.js model folder '" + dir + "': " + e.what());
  }
  fs::remove_all(old, ec);
}

void check_keras_file(const ModelImpl& model, const std::string& path) {
  const std::string kind = keras_output_kind(path);
  if (kind.empty()) {
    throw ConfigError("'" + path + "' names no Keras format (.keras, .weights.h5, .h5, or a TF.js folder ending in /)");
  }
  if (kind == "TensorFlow.js Layers model") check_tfjs_model(model);
  if (kind == "Keras 3 model") keras3_model_config(model);
  if (kind == "tf.keras 2 HDF5 model" || kind == "TensorFlow.js Layers model") keras2_model_config(model);
}

}  // namespace torchfit::keras
