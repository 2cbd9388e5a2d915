#pragma once
/// @file registry.h
/// Layer registry keyed by Keras class name: rebuilds layers from their JSON config.
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>
#include <torchfit/layers/layer.h>

namespace torchfit {

/// Factory building a layer from its config (as Layer::config() wrote it).
using LayerFactory = std::function<std::shared_ptr<Layer>(const nlohmann::json& config)>;

/// Registers a factory under a Keras class name (e.g. "Conv2D"). Re-registering replaces it.
void register_layer(const std::string& class_name, LayerFactory factory);

/// Builds a layer from {"class_name": ..., "config": {...}}.
/// Errors: ConfigError naming an unknown class (and listing the known ones) or the layer and field of a
/// bad argument.
std::shared_ptr<Layer> layer_from_json(const nlohmann::json& spec);

/// {"class_name": layer.class_name(), "config": layer.config()}.
nlohmann::json layer_to_json(const Layer& layer);

/// Registered class names, sorted.
std::vector<std::string> registered_layers();

/// Registers a layer class at static-initialisation time:
///   TORCHFIT_REGISTER_LAYER(Swish, [](const nlohmann::json& c) { return std::make_shared<SwishImpl>(...); });
#define TORCHFIT_REGISTER_LAYER(CLASS_NAME, FACTORY)                                  \
  static const bool torchfit_registered_##CLASS_NAME = [] {                          \
    ::torchfit::register_layer(#CLASS_NAME, FACTORY);                                 \
    return true;                                                                      \
  }()

}  // namespace torchfit
