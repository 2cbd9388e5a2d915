#pragma once
/// @file layer_args.h
/// A layer's Keras arguments, listed once in its options struct. The same list writes the layer's
/// config() (Layer::base_config(options)) and reads the options back from a config (the registry's
/// TORCHFIT_REGISTER_LAYER, registry.h):
///
///   struct SwishOptions {
///     TORCH_ARG(double, beta) = 1.0;
///     TORCH_ARG(bool, trainable) = true;
///     TORCH_ARG(std::optional<torchfit::Shape>, input_shape) = std::nullopt;   // every layer has these two;
///     TORCH_ARG(std::string, name) = "";                                        // the registry handles them
///    public:  // (TORCH_ARG leaves the struct in a private section)
///     template <typename Args>
///     void args(Args& a) {
///       a("beta", beta());
///       a("trainable", trainable());
///     }
///   };
///
/// An options struct shared by a layer family (base_conv.h's ConvOptions) declares its arguments with
/// TORCHFIT_ARG(Derived, T, name), whose chained setters return the layer's own options struct.
///
/// `a(key, field)` is an optional argument: a config without `key` (or with null) keeps the options'
/// default. `a.required(key, field)` must be in the config. An options struct with required arguments
/// also has a constructor taking `FromConfig` that leaves them unset (the registry fills them in).
///
/// JSON forms (the Keras ones): bool, integers, floating point and std::string as themselves; Shape
/// (std::vector<int64_t>) as a list of integers (read from an integer too, a list of one: Keras's
/// constructors take `strides=2`); torch::ExpandingArray<D> written [a, b, …] and read from an
/// integer or a list of D; std::optional<T> written as T or null, read as T unless absent or null.
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include <torch/expanding_array.h>
#include <nlohmann/json.hpp>

#include <torchfit/layers/shape.h>

/// TORCH_ARG for an options struct that a layer family shares as a base (CRTP): the setters return
/// `Derived&`, the layer's own options, so that chains keep its type and its own setters
/// (`Conv2DOptions(32, 3).activation("relu").filters(64)`).
#define TORCHFIT_ARG(Derived, T, name)               \
 public:                                             \
  Derived& name(const T& new_##name) {               \
    this->name##_ = new_##name;                      \
    return static_cast<Derived&>(*this);             \
  }                                                  \
  Derived& name(T&& new_##name) {                    \
    this->name##_ = std::move(new_##name);           \
    return static_cast<Derived&>(*this);             \
  }                                                  \
  const T& name() const noexcept { return name##_; } \
  T& name() noexcept { return name##_; }             \
                                                     \
 private:                                            \
  T name##_

namespace torchfit {

/// The two arguments every layer's options have, once: `struct DenseOptions : LayerOptions<DenseOptions>`
/// (a family base passes its Derived on: `struct ConvOptions : LayerOptions<Derived>`). The setters return
/// `Derived&`, so chains keep the layer's type: `DenseOptions(64).name("head").input_shape(Shape{128})`.
/// The registry reads and config() writes both for every layer (registry.h), so args() does not list them.
template <typename Derived>
struct LayerOptions {
  /// Per-sample input shape in Keras order ((H, W, C) for an image, (D) for a vector; batch excluded)
  /// when this is the first layer of a Sequential. Default: none (taken from the layer before).
  TORCHFIT_ARG(Derived, std::optional<Shape>, input_shape) = std::nullopt;
  /// Layer name ("" ⇒ automatic, as Keras: snake_case of the class, then _1, _2, …;
  /// automatic_layer_name in layer.h).
  TORCHFIT_ARG(Derived, std::string, name) = "";

 public:
};

/// Tag for an options constructor that leaves the required arguments unset, for the registry to read
/// them from a config: `explicit DenseOptions(FromConfig) : units_(0) {}`. Not for other uses. It has no
/// default constructor, so that `{}` never converts to it (`ReshapeOptions({})` stays an empty Shape).
struct FromConfig {
  struct Token {};
  constexpr explicit FromConfig(Token) {}
};
/// The FromConfig value the registry passes.
inline constexpr FromConfig from_config{FromConfig::Token{}};

namespace detail {
template <typename T>
nlohmann::json arg_to_json(const T& value) {
  return nlohmann::json(value);
}
template <size_t D>
nlohmann::json arg_to_json(const torch::ExpandingArray<D>& value) {
  return nlohmann::json(std::vector<int64_t>(value->begin(), value->end()));
}
template <typename T>
nlohmann::json arg_to_json(const std::optional<T>& value) {
  return value ? arg_to_json(*value) : nlohmann::json(nullptr);
}
}  // namespace detail

namespace detail {
/// What a JSON value must be to read a field of type T ("an integer", "a list of numbers", …), or nullptr
/// when `v` is one: the one type check of the layer and optimizer config readers.
template <typename T>
const char* json_type_mismatch(const nlohmann::json& v) {
  if constexpr (std::is_same_v<T, bool>) {
    return v.is_boolean() ? nullptr : "true or false";
  } else if constexpr (std::is_integral_v<T>) {
    return v.is_number_integer() ? nullptr : "an integer";
  } else if constexpr (std::is_floating_point_v<T>) {
    return v.is_number() ? nullptr : "a number";
  } else if constexpr (std::is_same_v<T, std::string>) {
    return v.is_string() ? nullptr : "a string";
  } else if constexpr (std::is_same_v<T, std::vector<int64_t>>) {
    bool ok = v.is_array();
    for (const auto& e : v) ok = ok && e.is_number_integer();
    return ok ? nullptr : "a list of integers";
  } else if constexpr (std::is_same_v<T, std::vector<double>>) {
    bool ok = v.is_array();
    for (const auto& e : v) ok = ok && e.is_number();
    return ok ? nullptr : "a list of numbers";
  } else {
    return nullptr;  // another type: its own from_json decides
  }
}
}  // namespace detail

/// The visitor that writes an options struct's arguments into a config (Layer::base_config(options)).
class LayerArgWriter {
 public:
  explicit LayerArgWriter(nlohmann::json& config) : config_(config) {}
  template <typename T>
  void operator()(const char* key, const T& value) {
    config_[key] = detail::arg_to_json(value);
  }
  template <typename T>
  void required(const char* key, const T& value) {
    (*this)(key, value);
  }

 private:
  nlohmann::json& config_;
};

}  // namespace torchfit
