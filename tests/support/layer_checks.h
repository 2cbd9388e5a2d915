#pragma once
// Shared layer checks for the test suite: forwards to the public conformance helper
// (torchfit/testing/layer_conformance.h), which new tests should call directly.
#include <functional>
#include <string>

#include <nlohmann/json.hpp>

#include <torchfit/error.h>
#include <torchfit/layers/registry.h>
#include <torchfit/model/sequential.h>
#include <torchfit/testing/layer_conformance.h>

namespace torchfit::testing {

/// Builds Sequential(layer) for `input_shape` (Keras order) and runs every conformance check with
/// `expected_params` trainable parameters; train() and eval() must give the same output (layers where
/// they differ, such as Dropout, call expect_layer_conformance with training_changes_output(true)).
inline void check_layer(std::shared_ptr<Layer> layer, const Shape& input_shape, const Shape& expected_output,
                        int64_t expected_params) {
  expect_layer_conformance(std::move(layer),
                           LayerConformance(input_shape, expected_output).trainable_params(expected_params));
}

/// `layer` alone in a Sequential built for `keras_in` (H, W, C), in eval mode, applied to `x` (N, C, H, W).
inline at::Tensor run_layer(std::shared_ptr<Layer> layer, const Shape& keras_in, const at::Tensor& x) {
  layer->set_declared_input_shape(keras_in);
  Sequential m;
  m->add(layer);
  m->eval();
  return m->forward(x);
}

/// The ConfigError message `f` throws, or "no error".
inline std::string config_error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "no error";
}

/// The ConfigError message layer_from_json(spec) throws, or "(no error)".
inline std::string layer_config_error(const nlohmann::json& spec) {
  try {
    layer_from_json(spec);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace torchfit::testing
