#pragma once
// Shared layer checks for the test suite: forwards to the public conformance helper
// (torchfit/testing/layer_conformance.h), which new tests should call directly.
#include <torchfit/testing/layer_conformance.h>

namespace torchfit::testing {

/// Builds Sequential(layer) for `input_shape` (Keras order) and runs the conformance checks with
/// `expected_params` trainable parameters, skipping the train-vs-eval comparison.
inline void check_layer(std::shared_ptr<Layer> layer, const Shape& input_shape, const Shape& expected_output,
                        int64_t expected_params) {
  expect_layer_conformance(std::move(layer), LayerConformance(input_shape, expected_output)
                                                 .trainable_params(expected_params)
                                                 .skip_train_eval(true));
}

}  // namespace torchfit::testing
