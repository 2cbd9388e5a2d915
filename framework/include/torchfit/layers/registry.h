#pragma once
/// @file registry.h
/// Layer registry keyed by Keras class name: rebuilds layers from their JSON config.
#include <functional>
#include <memory>
#include <set>
#include <string>
#include <type_traits>
#include <vector>

#include <nlohmann/json.hpp>
#include <torch/expanding_array.h>
#include <torchfit/layers/layer.h>

namespace torchfit {

/// Typed, checked access to a layer's JSON config inside a factory (see registry.h's examples and
/// docs/extending.md). Every error is a ConfigError naming the layer (name and class) and the field:
///   layer 'd9' (Dense): field 'units' must be an integer, got "many"
/// finish() rejects fields no accessor asked for (typos such as "unit"), as Keras rejects unknown
/// keyword arguments; "name" and "input_shape" are always allowed.
class LayerConfigReader {
 public:
  LayerConfigReader(const nlohmann::json& config, std::string class_name)
      : config_(config), class_name_(std::move(class_name)) {
    if (!config_.is_object()) throw ConfigError(who() + ": config must be a JSON object, got " + config_.dump());
  }

  /// The value of a field that must be present.
  template <typename T>
  T required(const std::string& field) {
    seen_.insert(field);
    if (!config_.contains(field)) throw ConfigError(who() + ": missing field '" + field + "'");
    return convert<T>(field);
  }
  /// The value of a field, or `fallback` when it is absent (null counts as absent).
  template <typename T>
  T optional(const std::string& field, T fallback) {
    seen_.insert(field);
    if (!config_.contains(field) || config_[field].is_null()) return fallback;
    return convert<T>(field);
  }
  /// An int or an [int, int] pair (kernel sizes, strides); `fallback` when absent.
  torch::ExpandingArray<2> pair(const std::string& field, int64_t fallback) {
    seen_.insert(field);
    if (!config_.contains(field) || config_[field].is_null()) return torch::ExpandingArray<2>(fallback);
    const auto& v = config_[field];
    if (v.is_number_integer()) return torch::ExpandingArray<2>(v.get<int64_t>());
    if (v.is_array() && v.size() == 2 && v[0].is_number_integer() && v[1].is_number_integer()) {
      return torch::ExpandingArray<2>({v[0].get<int64_t>(), v[1].get<int64_t>()});
    }
    throw ConfigError(who() + ": field '" + field + "' must be an integer or a pair of integers, got " + v.dump());
  }
  /// "name" ("" when absent).
  std::string name() { return optional<std::string>("name", ""); }
  /// "input_shape" (Keras order), if present.
  std::optional<Shape> input_shape() {
    seen_.insert("input_shape");
    if (!config_.contains("input_shape") || config_["input_shape"].is_null()) return std::nullopt;
    return convert<Shape>("input_shape");
  }
  /// Throws ConfigError naming the first field nobody read, with the fields this class accepts.
  void finish() const {
    for (const auto& [key, value] : config_.items()) {
      if (key == "name" || key == "input_shape" || seen_.count(key)) continue;
      std::string known;
      for (const auto& f : seen_) known += (known.empty() ? "" : ", ") + f;
      throw ConfigError(who() + ": unknown field '" + key + "' (known: " + known + ")");
    }
  }
  /// "layer 'conv2d_1' (Conv2D)".
  std::string who() const {
    const auto n = config_.is_object() ? config_.value("name", std::string()) : std::string();
    return "layer '" + (n.empty() ? keras_snake_case(class_name_) : n) + "' (" + class_name_ + ")";
  }

 private:
  template <typename T>
  T convert(const std::string& field) const {
    const auto& v = config_[field];
    const char* want = nullptr;
    if constexpr (std::is_same_v<T, bool>) {
      if (!v.is_boolean()) want = "true or false";
    } else if constexpr (std::is_integral_v<T>) {
      if (!v.is_number_integer()) want = "an integer";
    } else if constexpr (std::is_floating_point_v<T>) {
      if (!v.is_number()) want = "a number";
    } else if constexpr (std::is_same_v<T, std::string>) {
      if (!v.is_string()) want = "a string";
    } else if constexpr (std::is_same_v<T, Shape>) {
      bool ok = v.is_array();
      for (const auto& e : v) ok = ok && e.is_number_integer();
      if (!ok) want = "a list of integers";
    }
    if (want) throw ConfigError(who() + ": field '" + field + "' must be " + want + ", got " + v.dump());
    try {
      return v.get<T>();
    } catch (const std::exception& e) {
      throw ConfigError(who() + ": field '" + field + "' has a bad value " + v.dump() + ": " + e.what());
    }
  }

  const nlohmann::json& config_;
  std::string class_name_;
  std::set<std::string> seen_;
};

/// Factory building a layer from its config (as Layer::config() wrote it).
using LayerFactory = std::function<std::shared_ptr<Layer>(const nlohmann::json& config)>;

/// Registers a factory under a Keras class name (e.g. "Conv2D"). Re-registering replaces it. Thread-safe;
/// built-in layers are registered before the first lookup, user layers with TORCHFIT_REGISTER_LAYER.
void register_layer(const std::string& class_name, LayerFactory factory);

/// Builds a layer from {"class_name": ..., "config": {...}}.
/// Errors: ConfigError naming an unknown class (and listing the known ones) or the layer and field of a
/// bad argument.
std::shared_ptr<Layer> layer_from_json(const nlohmann::json& spec);

/// {"class_name": layer.class_name(), "config": layer.config()}.
nlohmann::json layer_to_json(const Layer& layer);

/// Registered class names, sorted.
std::vector<std::string> registered_layers();

/// Registers a layer class at static-initialisation time (write it in the layer's .cpp file):
///   TORCHFIT_REGISTER_LAYER(Swish, [](const nlohmann::json& c) -> std::shared_ptr<torchfit::Layer> {
///     torchfit::LayerConfigReader r(c, "Swish");
///     auto layer = std::make_shared<SwishImpl>(SwishOptions().beta(r.optional("beta", 1.0)).name(r.name()));
///     r.finish();
///     return layer;
///   });
/// The object file holding it must be linked into the program: put user layers in the executable's own
/// sources (or an OBJECT library), not in a static library the linker may drop as unreferenced.
#define TORCHFIT_REGISTER_LAYER(CLASS_NAME, FACTORY)                                  \
  static const bool torchfit_registered_##CLASS_NAME = [] {                          \
    ::torchfit::register_layer(#CLASS_NAME, FACTORY);                                 \
    return true;                                                                      \
  }()

}  // namespace torchfit
