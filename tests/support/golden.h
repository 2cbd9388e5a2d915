#pragma once
// The Keras-oracle golden files under tests/data/golden/ (written by scripts/keras_oracle.py).
#include <fstream>
#include <stdexcept>
#include <string>

#include <nlohmann/json.hpp>

namespace torchfit::testing {

/// Path of a file under tests/data/golden/.
inline std::string golden_file(const std::string& name) {
  return std::string(TORCHFIT_SOURCE_DIR) + "/tests/data/golden/" + name;
}

/// The golden manifest (keras_oracle.json). Throws (the test fails) when it is missing or unparsable.
inline nlohmann::json read_golden_manifest() {
  std::ifstream f(golden_file("keras_oracle.json"));
  if (!f)
    throw std::runtime_error("missing " + golden_file("keras_oracle.json") +
                             " (regenerate: /usr/bin/python3 scripts/keras_oracle.py)");
  return nlohmann::json::parse(f);
}

}  // namespace torchfit::testing
