#pragma once
// Shared checks of the convolution family's tests (tests/layers/*conv*_test.cpp): a layer's values against
// the float64 NumPy reference of TensorFlow's definitions, and a Keras 3 Sequential config of one layer.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include <torchfit/keras/keras_json.h>

#include "support/keras_reference.h"

namespace torchfit::testing {

/// `layer` (its bias drawn from U(−1, 1)) on a random batch of the Keras input `keras_in`, against the
/// reference's `op` given the layer's Keras weights (keras_weights(), named `weight_names` in order; the bias
/// is added by the reference) and the layer's arguments `args`.
template <typename LayerPtr>
void expect_conv_matches_reference(LayerPtr layer, const std::vector<int64_t>& keras_in, const std::string& op,
                                   const std::vector<std::string>& weight_names, nlohmann::json args) {
  auto [x, y0] = random_forward(layer, keras_in);
  {
    at::NoGradGuard g;
    if (layer->bias.defined()) layer->bias.uniform_(-1, 1);
  }
  const at::Tensor y = layer->forward(x).detach();
  args["op"] = op;
  args["x"] = tensor_json(x);
  const std::vector<at::Tensor> weights = layer->keras_weights();
  for (size_t i = 0; i < weight_names.size(); ++i) args[weight_names[i]] = tensor_json(weights[i]);
  if (layer->bias.defined()) args["bias"] = tensor_json(layer->bias);
  expect_matches_reference(y, keras_reference(args));
}

/// A Keras 3 `Sequential` config (model.to_json()): an InputLayer of batch_shape (None, `shape`…) and one
/// layer of `class_name` with `config` plus Keras 3's data_format channels_last and a kernel initializer object.
inline nlohmann::json keras3_sequential(const std::vector<int64_t>& shape, const std::string& class_name,
                                        nlohmann::json config) {
  nlohmann::json batch_shape = nlohmann::json::array({nullptr});
  for (int64_t v : shape) batch_shape.push_back(v);
  config["data_format"] = "channels_last";
  config["bias_initializer"] = {{"module", "keras.initializers"},
                                {"class_name", "Zeros"},
                                {"config", nlohmann::json::object()},
                                {"registered_name", nullptr}};
  const nlohmann::json input = {{"class_name", "InputLayer"},
                                {"config", {{"batch_shape", batch_shape}, {"dtype", "float32"}, {"name", "in"}}}};
  return {{"class_name", "Sequential"},
          {"config", {{"name", "s"}, {"layers", {input, {{"class_name", class_name}, {"config", config}}}}}}};
}

}  // namespace torchfit::testing
