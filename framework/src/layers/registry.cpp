#include <torchfit/layers/registry.h>

#include <algorithm>
#include <map>
#include <mutex>
#include <set>

namespace torchfit {

// Every built-in layer, by Keras class name. Each one's TORCHFIT_REGISTER_LAYER (in its own .cpp) defines
// torchfit_layer_registration_<CLASS>(); referencing them here keeps every layer's object file in a
// program linked against the static library, whether or not the program names the layer.
// clang-format off
#define TORCHFIT_BUILTIN_LAYERS(X)                                                                     \
  X(Activation) X(AveragePooling2D) X(BatchNormalization) X(Conv2D) X(Dense) X(DepthwiseConv2D)       \
  X(Dropout) X(ELU) X(Flatten) X(GlobalAveragePooling2D) X(GlobalMaxPooling2D) X(LeakyReLU)           \
  X(MaxPooling2D) X(Permute) X(Reshape)                                                                      \
  X(Conv2DTranspose) X(SeparableConv2D)                                                               \
  X(Cropping2D) X(UpSampling2D) X(ZeroPadding2D)                                                      \
  X(LayerNormalization) X(ReLU) X(Rescaling) X(Softmax) X(PReLU) X(ThresholdedReLU)                    \
  X(GroupNormalization) X(RMSNormalization) X(UnitNormalization)                                      \
  X(GaussianNoise) X(GaussianDropout) X(AlphaDropout) X(SpatialDropout1D) X(SpatialDropout2D)         \
  X(RepeatVector) X(Identity) X(GlobalAveragePooling1D) X(GlobalMaxPooling1D) X(Conv1D)               \
  X(MaxPooling1D) X(AveragePooling1D) X(MaxPooling3D) X(AveragePooling3D)                             \
  X(GlobalAveragePooling3D) X(GlobalMaxPooling3D) X(SpatialDropout3D)                                 \
  X(ZeroPadding1D) X(ZeroPadding3D) X(Cropping1D) X(Cropping3D) X(UpSampling1D) X(UpSampling3D)       \
  X(Conv1DTranspose) X(SeparableConv1D) X(DepthwiseConv1D) X(Conv3D) X(Conv3DTranspose)                  \
  X(InputLayer) X(Add) X(Subtract) X(Multiply) X(Average) X(Maximum) X(Minimum) X(Concatenate)          \
  X(AdaptiveAveragePooling1D) X(AdaptiveMaxPooling1D) X(AdaptiveAveragePooling2D) X(AdaptiveMaxPooling2D)   \
  X(AdaptiveAveragePooling3D) X(AdaptiveMaxPooling3D) X(Dot) X(ActivityRegularization) X(Resizing) X(CenterCrop) X(RandomFlip) X(Normalization) \
  X(RandomRotation) X(RandomZoom) X(RandomTranslation) X(RandomShear) \
  X(RandomContrast) X(RandomBrightness) X(RandomGrayscale) X(RandomCrop) \
  X(RandomHue) X(RandomSaturation) X(RandomColorJitter) X(RandomErasing) X(MixUp) X(CutMix) \
  X(RandomColorDegeneration) X(RandomSharpness) X(RandomPosterization) X(Solarization) X(AutoContrast) \
  X(Equalization) X(RandAugment) \
  X(Embedding) X(EinsumDense) X(SimpleRNN) X(LSTM) X(GRU) X(Bidirectional) X(TimeDistributed) \
  X(MultiHeadAttention) X(GroupQueryAttention) X(Attention) X(AdditiveAttention) X(Masking)
// clang-format on
#define TORCHFIT_DECLARE_REGISTRATION(CLASS) LayerRegistration torchfit_layer_registration_##CLASS();
TORCHFIT_BUILTIN_LAYERS(TORCHFIT_DECLARE_REGISTRATION)
#undef TORCHFIT_DECLARE_REGISTRATION

namespace {

using Json = nlohmann::json;
using Table = std::map<std::string, LayerFactory>;

std::vector<LayerRegistration> builtin_layers() {
#define TORCHFIT_CALL_REGISTRATION(CLASS) torchfit_layer_registration_##CLASS(),
  return {TORCHFIT_BUILTIN_LAYERS(TORCHFIT_CALL_REGISTRATION)};
#undef TORCHFIT_CALL_REGISTRATION
}

// The built-ins are in the table from its first use, so a lookup never depends on the order in which
// static initialisation reaches the layers' own TORCHFIT_REGISTER_LAYER lines (which register the same
// factories again). Callers hold table_mutex().
Table& registry() {
  static Table table = [] {
    Table t;
    for (auto& r : builtin_layers()) t[r.class_name] = std::move(r.factory);
    return t;
  }();
  return table;
}
std::mutex& table_mutex() {
  static std::mutex m;
  return m;
}

std::optional<Shape> opt_shape(const Json& c) {
  if (!c.is_object() || !c.contains("input_shape") || c["input_shape"].is_null()) return std::nullopt;
  return c["input_shape"].get<Shape>();
}

}  // namespace

std::string unsupported_keras_class_hint(const std::string& cls) {
  static const std::set<std::string> code = {"Lambda", "TFOpLambda", "SlicingOpLambda"};
  static const std::set<std::string> sequence = {
      "RNN", "LSTMCell", "GRUCell", "SimpleRNNCell", "StackedRNNCells", "ConvLSTM1D", "ConvLSTM2D", "ConvLSTM3D"};
  static const std::set<std::string> preprocessing = {"CenterCrop",    "TextVectorization", "StringLookup",
                                                      "IntegerLookup", "CategoryEncoding",  "Hashing",
                                                      "Discretization"};
  const std::string own =
      "write it as a C++ layer registered under this class name (docs/extending.md, \"Worked example: "
      "examples/custom_layer/\")";
  if (cls == "GroupedQueryAttention") {  // Keras's Python class; Keras serializes it under its export name
    return "Keras writes class GroupedQueryAttention as \"GroupQueryAttention\" (keras.layers' name), which "
           "torchfit reads";
  }
  if (code.count(cls))
    return "a " + cls + " layer holds Python code or TensorFlow operations, which torchfit cannot run: " + own;
  if (sequence.count(cls)) return "torchfit has no " + cls + " yet (recurrent and attention layers are coming); " + own;
  if (preprocessing.count(cls)) {
    return "torchfit has no " + cls +
           " layer yet: preprocess with ImageDataGenerator / flow_from_directory "
           "(docs/data_pipeline.md), or " +
           own;
  }
  return "";
}

namespace {

LayerFactory find_factory(const std::string& cls) {
  std::lock_guard<std::mutex> lock(table_mutex());
  auto it = registry().find(cls);
  if (it != registry().end()) return it->second;
  std::string known;
  for (const auto& [k, v] : registry()) known += (known.empty() ? "" : ", ") + k;
  const std::string hint = unsupported_keras_class_hint(cls);
  throw ConfigError("unknown layer class '" + cls + "'" + (hint.empty() ? "" : ": " + hint) + " (known: " + known +
                    ")");
}

// "<weight>_regularizer" keys (Keras's L1, L2, L1L2 objects or "l1"/"l2" names; null = none) → per weight
// ("activity" for activity_regularizer, the layer's output), removed from the config. Other classes are
// errors naming the layer.
std::map<std::string, Layer::Regularizer> take_regularizers(Json& config, const std::string& who) {
  std::map<std::string, Layer::Regularizer> out;
  if (!config.is_object()) return out;
  std::vector<std::string> keys;
  for (const auto& item : config.items()) {
    const std::string& k = item.key();
    if (k.size() > 12 && k.compare(k.size() - 12, 12, "_regularizer") == 0) keys.push_back(k);
  }
  for (const auto& k : keys) {
    const Json v = config[k];
    config.erase(k);
    if (v.is_null()) continue;
    std::string cls = v.is_string() ? v.get<std::string>() : v.value("class_name", std::string());
    const Json args = v.is_object() ? v.value("config", Json::object()) : Json::object();
    Layer::Regularizer r;
    auto factor = [&](const char* name, double fallback) {
      if (!args.contains(name) || args[name].is_null()) return fallback;
      if (!args[name].is_number()) throw ConfigError(who + ": " + k + " " + name + " must be a number");
      return args[name].get<double>();
    };
    if (cls == "L2" || cls == "l2") {
      r.l2 = factor("l2", 0.01);
    } else if (cls == "L1" || cls == "l1") {
      r.l1 = factor("l1", 0.01);
    } else if (cls == "L1L2" || cls == "l1_l2") {
      r.l1 = factor("l1", 0.0);
      r.l2 = factor("l2", 0.0);
    } else {
      throw ConfigError(who + ": " + k + " " + (cls.empty() ? v.dump() : cls) + " is not supported (L1, L2, L1L2)");
    }
    // Keras's names of the depthwise and recurrent kernels' regularizers drop "_kernel".
    const std::string weight = k.substr(0, k.size() - 12);
    out[weight == "depthwise" || weight == "recurrent" ? weight + "_kernel" : weight] = r;
  }
  return out;
}

// "<weight>_initializer" keys (Keras initializer names or objects; null = the class's default) → per Keras
// weight name, removed from the config (Layer::set_initializer applies them at build).
std::map<std::string, Initializer> take_initializers(Json& config, const std::string& who) {
  std::map<std::string, Initializer> out;
  if (!config.is_object()) return out;
  const std::string suffix = "_initializer";
  std::vector<std::string> keys;
  for (const auto& item : config.items()) {
    const std::string& k = item.key();
    if (k.size() > suffix.size() && k.compare(k.size() - suffix.size(), suffix.size(), suffix) == 0) keys.push_back(k);
  }
  for (const auto& k : keys) {
    const Json v = config[k];
    config.erase(k);
    if (!v.is_null()) out[initializer_weight(k)] = Initializer::from_json(v, who + ": " + k);
  }
  return out;
}

}  // namespace

void register_layer(const std::string& class_name, LayerFactory factory) {
  std::lock_guard<std::mutex> lock(table_mutex());
  registry()[class_name] = std::move(factory);
}

bool register_layer(const LayerRegistration& registration) {
  register_layer(registration.class_name, registration.factory);
  return true;
}

std::vector<std::string> registered_layers() {
  std::lock_guard<std::mutex> lock(table_mutex());
  std::vector<std::string> names;
  for (const auto& [k, v] : registry()) names.push_back(k);
  return names;
}

std::vector<std::string> builtin_layer_classes() {
  std::vector<std::string> names;
  for (const auto& r : builtin_layers()) names.push_back(r.class_name);
  std::sort(names.begin(), names.end());
  return names;
}

std::shared_ptr<Layer> layer_from_json(const nlohmann::json& spec) {
  if (!spec.is_object() || !spec.contains("class_name") || !spec["class_name"].is_string()) {
    throw ConfigError("layer spec must be an object with a string \"class_name\": " + spec.dump());
  }
  const auto cls = spec["class_name"].get<std::string>();
  Json config = spec.value("config", Json::object());
  // trainable is a base Layer argument (Keras's layer.trainable): set for every class, user layers too.
  std::optional<bool> trainable;
  if (config.is_object() && config.contains("trainable")) {
    if (!config["trainable"].is_boolean()) {
      throw ConfigError("layer '" + config.value("name", std::string("?")) + "' (" + cls +
                        "): field 'trainable' must be true or false, got " + config["trainable"].dump());
    }
    trainable = config["trainable"].get<bool>();
    config.erase("trainable");
  }
  const std::string who = "layer '" + config.value("name", std::string("?")) + "' (" + cls + ")";
  const auto regularizers = take_regularizers(config, who);
  const auto initializers = take_initializers(config, who);
  const LayerFactory factory = find_factory(cls);
  try {
    auto layer = factory(config);
    // input_shape is a base Layer argument: restore it for every class, including user layers.
    if (auto shape = opt_shape(config)) layer->set_declared_input_shape(shape);
    if (trainable) layer->set_trainable(*trainable);
    for (const auto& [weight, r] : regularizers) {
      if (weight == "activity") {
        layer->set_activity_regularizer(r);
      } else {
        layer->set_regularizer(weight, r);
      }
    }
    for (const auto& [weight, init] : initializers) layer->set_initializer(weight, init);
    return layer;
  } catch (const ConfigError&) {
    throw;
  } catch (const Json::out_of_range& e) {
    throw ConfigError(who + ": missing field in config: " + e.what());
  } catch (const std::exception& e) {
    throw ConfigError(who + ": bad field in config " + config.dump() + ": " + e.what());
  }
}

nlohmann::json layer_to_json(const Layer& layer) {
  return {{"class_name", layer.class_name()}, {"config", layer.config()}};
}

}  // namespace torchfit
