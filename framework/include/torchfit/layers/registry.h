#pragma once
/// @file registry.h
/// Layer registry keyed by Keras class name: rebuilds layers from their JSON config.
#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <type_traits>
#include <vector>

#include <torch/expanding_array.h>
#include <torchfit/layers/layer.h>
#include <nlohmann/json.hpp>

namespace torchfit {

/// Typed, checked access to a layer's JSON config (used by LayerArgReader, and by hand-written factories
/// passed to register_layer). Every error is a ConfigError naming the layer (name and class) and the field:
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
    require(field);
    return convert<T>(field);
  }
  /// The value of a field, or `fallback` when it is absent (null counts as absent).
  template <typename T>
  T optional(const std::string& field, T fallback) {
    seen_.insert(field);
    if (!config_.contains(field) || config_[field].is_null()) return fallback;
    return convert<T>(field);
  }
  /// An int (every axis) or a list of D ints — kernel sizes, strides, pool sizes of D spatial axes, as Keras
  /// writes a tuple ((3,), (2, 2), (2, 2, 2)); `fallback` when absent.
  template <size_t D>
  torch::ExpandingArray<D> ints(const std::string& field, torch::ExpandingArray<D> fallback) {
    seen_.insert(field);
    if (!config_.contains(field) || config_[field].is_null()) return fallback;
    const auto& v = config_[field];
    if (v.is_number_integer()) return torch::ExpandingArray<D>(v.get<int64_t>());
    bool ok = v.is_array() && v.size() == D;
    for (size_t i = 0; ok && i < D; ++i) ok = v[i].is_number_integer();
    if (ok) return torch::ExpandingArray<D>(v.get<std::vector<int64_t>>());
    const std::string list = D == 1   ? "a list of one integer"
                             : D == 2 ? "a pair of integers"
                                      : "a list of " + std::to_string(D) + " integers";
    throw ConfigError(who() + ": field '" + field + "' must be an integer or " + list + ", got " + v.dump());
  }
  /// Whether the field is present and not null (marks it as known).
  bool has(const std::string& field) {
    seen_.insert(field);
    return config_.contains(field) && !config_[field].is_null();
  }
  /// Throws ConfigError "missing field" unless the field is present (marks it as known).
  void require(const std::string& field) {
    seen_.insert(field);
    if (!config_.contains(field)) throw ConfigError(who() + ": missing field '" + field + "'");
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
    return "layer '" + (n.empty() ? keras_name_base(class_name_) : n) + "' (" + class_name_ + ")";
  }

 private:
  template <typename T>
  T convert(const std::string& field) const {
    const auto& v = config_[field];
    if constexpr (std::is_same_v<T, std::vector<int64_t>>) {
      // An integer for a list, as Keras's constructors take one (standardize_tuple): strides=2.
      if (v.is_number_integer()) return T{v.get<int64_t>()};
    }
    const char* want = detail::json_type_mismatch<T>(v);
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

/// The visitor that reads an options struct's arguments from a config (layer_args.h): `a(key, field)`
/// keeps the field's default when the key is absent or null, `a.required(key, field)` needs the key.
/// Errors: ConfigError from LayerConfigReader naming the layer and the field (wrong type, missing).
class LayerArgReader {
 public:
  explicit LayerArgReader(LayerConfigReader& reader) : reader_(reader) {}
  template <typename T>
  void operator()(const char* key, T& field) {
    if (reader_.has(key)) field = value<typename Unwrap<T>::type>(key);
  }
  template <typename T>
  void required(const char* key, T& field) {
    field = value<typename Unwrap<T>::type>(key);
  }

 private:
  template <typename T>
  struct Unwrap {
    using type = T;
  };
  template <typename T>
  struct Unwrap<std::optional<T>> {
    using type = T;
  };
  template <typename T>
  struct IsExpandingArray : std::false_type {};
  template <size_t D>
  struct IsExpandingArray<torch::ExpandingArray<D>> : std::true_type {
    static constexpr size_t size = D;
  };

  template <typename T>
  T value(const std::string& key) {
    if constexpr (IsExpandingArray<T>::value) {
      reader_.require(key);
      return reader_.ints<IsExpandingArray<T>::size>(key, 0);  // null → 0, refused by the layer's constructor
    } else {
      return reader_.required<T>(key);
    }
  }

  LayerConfigReader& reader_;
};

/// Factory building a layer from its config (as Layer::config() wrote it).
using LayerFactory = std::function<std::shared_ptr<Layer>(const nlohmann::json& config)>;

/// A Keras class name and its factory: what TORCHFIT_REGISTER_LAYER registers.
struct LayerRegistration {
  std::string class_name;
  LayerFactory factory;
};

namespace detail {
template <typename Options>
Options options_for_config() {
  if constexpr (std::is_constructible_v<Options, FromConfig>) {
    return Options(from_config);
  } else {
    return Options();
  }
}
}  // namespace detail

/// Builds an `Impl` (a Layer constructed from its public `options` member's type) from `config`: reads
/// every argument Options::args() lists (layer_args.h), "name" and "input_shape"; constructs the layer,
/// whose constructor validates the values; then rejects fields nobody read.
/// Errors: ConfigError naming the layer and the field (wrong type, missing, unknown) or the bad value.
template <typename Impl>
std::shared_ptr<Layer> layer_from_config(const nlohmann::json& config, const std::string& class_name) {
  using Options = std::decay_t<decltype(std::declval<Impl&>().options)>;
  LayerConfigReader reader(config, class_name);
  Options options = detail::options_for_config<Options>();
  LayerArgReader args(reader);
  options.args(args);
  options.name(reader.name());
  options.input_shape(reader.input_shape());
  auto layer = std::make_shared<Impl>(std::move(options));
  reader.finish();
  return layer;
}

/// The registration of `Impl` under `class_name`, its factory layer_from_config<Impl>.
template <typename Impl>
LayerRegistration layer_registration(const std::string& class_name) {
  return {class_name, [class_name](const nlohmann::json& config) -> std::shared_ptr<Layer> {
            return layer_from_config<Impl>(config, class_name);
          }};
}

/// Registers a factory under a Keras class name (e.g. "Conv2D"). Re-registering replaces it: to replace
/// a built-in, call this at run time (in main), after static initialisation. Thread-safe.
void register_layer(const std::string& class_name, LayerFactory factory);
/// The same for a LayerRegistration; returns true (TORCHFIT_REGISTER_LAYER keeps it in a static bool).
bool register_layer(const LayerRegistration& registration);

/// Builds a layer from {"class_name": ..., "config": {...}}.
/// Errors: ConfigError naming an unknown class (and listing the known ones) or the layer and field of a
/// bad argument.
std::shared_ptr<Layer> layer_from_json(const nlohmann::json& spec);

/// {"class_name": layer.class_name(), "config": layer.config()}.
nlohmann::json layer_to_json(const Layer& layer);

/// Registered class names, sorted (every built-in, plus the user layers registered so far).
std::vector<std::string> registered_layers();
/// The Keras class names of torchfit's own layers (registry.cpp's list of built-ins), sorted.
std::vector<std::string> builtin_layer_classes();

/// What to do instead, for a Keras class torchfit does not build ("" for other names): Lambda and
/// TensorFlow-op layers (Python code: write a C++ layer), and the recurrent, attention and preprocessing
/// classes torchfit lacks so far. The unknown-class errors of the registry and the Keras readers append it.
std::string unsupported_keras_class_hint(const std::string& class_name);

}  // namespace torchfit

namespace torchfit::detail {
/// The Keras class name a layer declares with TORCHFIT_LAYER_CLASS, else `fallback`.
template <typename Impl, typename = void>
struct DeclaredClassName {
  static const char* get(const char* fallback) { return fallback; }
};
template <typename Impl>
struct DeclaredClassName<Impl, std::void_t<decltype(Impl::keras_class_name)>> {
  static const char* get(const char*) { return Impl::keras_class_name; }
};
}  // namespace torchfit::detail

/// Registers layer class CLASS (the layer is CLASSImpl, as TORCH_MODULE(CLASS) names it) under its
/// Keras class name (TORCHFIT_LAYER_CLASS, layer.h; else "CLASS") with the factory
/// layer_from_config<CLASSImpl>. Write it once, in the layer's .cpp file, in
/// the namespace of the layer, after the layer's definition:
///   TORCHFIT_REGISTER_LAYER(Swish);
/// It defines `LayerRegistration torchfit_layer_registration_CLASS()` and calls it at static
/// initialisation. A static library's object file that nothing references is dropped by the linker, and
/// its registration with it: torchfit's registry.cpp references each built-in layer's function, so
/// built-ins are always there; put user layers in the program's own sources or an OBJECT library.
#define TORCHFIT_REGISTER_LAYER(CLASS)                                    \
  ::torchfit::LayerRegistration torchfit_layer_registration_##CLASS() {   \
    return ::torchfit::layer_registration<CLASS##Impl>(                   \
        ::torchfit::detail::DeclaredClassName<CLASS##Impl>::get(#CLASS)); \
  }                                                                       \
  [[maybe_unused]] static const bool torchfit_layer_registered_##CLASS =  \
      ::torchfit::register_layer(torchfit_layer_registration_##CLASS())
