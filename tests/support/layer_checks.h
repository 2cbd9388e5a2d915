#pragma once
// Shared layer checks: output shape, parameter count, gradients reach every parameter, config round-trip.
#include <gtest/gtest.h>

#include <torchfit/layers/registry.h>
#include <torchfit/model/sequential.h>

namespace torchfit::testing {

/// Builds Sequential(layer) for `input_shape` (Keras order) and checks the layer contract.
inline void check_layer(std::shared_ptr<Layer> layer, const Shape& input_shape, const Shape& expected_output,
                        int64_t expected_params) {
  layer->set_declared_input_shape(input_shape);
  Sequential model;
  model->add(layer);
  EXPECT_EQ(layer->output_shape(), expected_output);
  EXPECT_EQ(layer->count_params(), expected_params);

  at::manual_seed(0);
  Shape in_t = to_tensor_shape(input_shape);
  in_t.insert(in_t.begin(), 2);
  auto x = at::randn(in_t).requires_grad_(true);
  model->train();
  auto y = model->forward(x);
  Shape out_t = to_tensor_shape(expected_output);
  out_t.insert(out_t.begin(), 2);
  EXPECT_EQ(y.sizes().vec(), out_t);
  (y * at::randn_like(y)).sum().backward();
  for (const auto& p : layer->named_parameters()) {
    ASSERT_TRUE(p.value().grad().defined()) << "no gradient for " << p.key();
    EXPECT_GT(p.value().grad().abs().sum().item<double>(), 0.0) << "zero gradient for " << p.key();
  }
  ASSERT_TRUE(x.grad().defined());

  // Config round-trip: the registry rebuilds an identical config.
  auto json = layer_to_json(*layer);
  auto rebuilt = layer_from_json(json);
  EXPECT_EQ(layer_to_json(*rebuilt), json);
}

}  // namespace torchfit::testing
