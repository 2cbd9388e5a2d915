#pragma once
// Keras layer configs → torchfit layer configs (model_from_json): Keras-only keys checked and dropped,
// Keras 1 argument names renamed. Private to model/.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace torchfit::keras_config {

/// What reading a model's layers found beyond the layers themselves.
struct Findings {
  std::string dtype_policy;               // a mixed policy named by the layers' "dtype", else ""
  std::vector<std::string> initializers;  // "layer: kernel_initializer HeNormal" not applied by torchfit
};

/// {"class_name", "config", …} as Keras writes it (2.x, 1.x, 3.x) → {"class_name", "config"} that
/// layer_from_json reads. Errors: ConfigError naming the layer and class (unsupported class, with the
/// supported ones; regularizer, constraint, custom object, data_format, dtype).
nlohmann::json layer_spec(const nlohmann::json& spec, Findings& findings);

}  // namespace torchfit::keras_config
