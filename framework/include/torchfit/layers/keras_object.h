#pragma once
/// @file keras_object.h
/// A Keras serialized object as configs name initializers, losses and the like.
#include <nlohmann/json.hpp>
#include <string>
#include <utility>

#include <torchfit/error.h>

namespace torchfit {

/// Reads a Keras object spec: a name ("he_normal") or {"class_name": …, "config": {…}} (Keras 3 adds
/// "module" and "registered_name", not needed). Returns {class name, config} (config {} when absent or
/// null). Errors: ConfigError "<what> is a name or {"class_name": ..., "config": {...}}, got <spec>".
inline std::pair<std::string, nlohmann::json> keras_object(const nlohmann::json& spec, const std::string& what) {
  if (spec.is_string()) return {spec.get<std::string>(), nlohmann::json::object()};
  if (spec.is_object() && spec.contains("class_name") && spec["class_name"].is_string()) {
    nlohmann::json config =
        spec.contains("config") && !spec["config"].is_null() ? spec["config"] : nlohmann::json::object();
    return {spec["class_name"].get<std::string>(), config};
  }
  throw ConfigError(what + " is a name or {\"class_name\": ..., \"config\": {...}}, got " + spec.dump());
}

}  // namespace torchfit
