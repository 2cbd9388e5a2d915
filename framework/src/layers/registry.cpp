#include <torchfit/layers/registry.h>

#include <map>
#include <mutex>

namespace torchfit {

// Every built-in layer, by Keras class name. Each one's TORCHFIT_REGISTER_LAYER (in its own .cpp) defines
// torchfit_layer_registration_<CLASS>(); referencing them here keeps every layer's object file in a
// program linked against the static library, whether or not the program names the layer.
// clang-format off
#define TORCHFIT_BUILTIN_LAYERS(X)                                                                     \
  X(Activation) X(AveragePooling2D) X(BatchNormalization) X(Conv2D) X(Dense) X(DepthwiseConv2D)       \
  X(Dropout) X(ELU) X(Flatten) X(GlobalAveragePooling2D) X(GlobalMaxPooling2D) X(LeakyReLU)           \
  X(MaxPooling2D) X(Reshape)                                                                          \
  X(Conv2DTranspose) X(SeparableConv2D)                                                               \
  X(Cropping2D) X(UpSampling2D) X(ZeroPadding2D)                                                      \
  X(LayerNormalization) X(ReLU) X(Rescaling) X(Softmax)
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

LayerFactory find_factory(const std::string& cls) {
  std::lock_guard<std::mutex> lock(table_mutex());
  auto it = registry().find(cls);
  if (it != registry().end()) return it->second;
  std::string known;
  for (const auto& [k, v] : registry()) known += (known.empty() ? "" : ", ") + k;
  throw ConfigError("unknown layer class '" + cls + "' (known: " + known + ")");
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

std::shared_ptr<Layer> layer_from_json(const nlohmann::json& spec) {
  if (!spec.is_object() || !spec.contains("class_name") || !spec["class_name"].is_string()) {
    throw ConfigError("layer spec must be an object with a string \"class_name\": " + spec.dump());
  }
  const auto cls = spec["class_name"].get<std::string>();
  const Json config = spec.value("config", Json::object());
  const LayerFactory factory = find_factory(cls);
  const std::string who = "layer '" + config.value("name", std::string("?")) + "' (" + cls + ")";
  try {
    auto layer = factory(config);
    // input_shape is a base Layer argument: restore it for every class, including user layers.
    if (auto shape = opt_shape(config)) layer->set_declared_input_shape(shape);
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
