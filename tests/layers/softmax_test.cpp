// Softmax: Keras axes mapped onto (N, C, H, W) tensors, values against the float64 NumPy reference,
// conformance, config, errors.
#include <gtest/gtest.h>

#include <torchfit/layers/advanced_activations.h>
#include <torchfit/model/sequential.h>
#include <torchfit/testing/layer_conformance.h>
#include "support/keras_reference.h"
#include "support/layer_checks.h"

using namespace torchfit;
using torchfit::testing::expect_layer_conformance;
using torchfit::testing::LayerConformance;

TEST(Softmax, Conformance) {
  expect_layer_conformance(Softmax().ptr(), LayerConformance({3, 4, 5}, {3, 4, 5}));
  expect_layer_conformance(Softmax(SoftmaxOptions().axis(1)).ptr(), LayerConformance({7}, {7}));
}

TEST(Softmax, MatchesNumPyAlongKerasAxis) {
  TORCHFIT_REQUIRE_KERAS_REFERENCE();
  for (const int64_t axis : {-1, 1, 2, 3, -3}) {
    SCOPED_TRACE("axis " + std::to_string(axis));
    auto [x, y] = torchfit::testing::random_forward(Softmax(SoftmaxOptions().axis(axis)).ptr(), {3, 4, 5});
    // The reference takes the axis over Keras's (N, H, W, C).
    torchfit::testing::expect_matches_reference(
        y, torchfit::testing::keras_reference(
               {{"op", "softmax"}, {"x", torchfit::testing::tensor_json(x)}, {"axis", axis}}));
  }
}

// tf.keras 2.x's list forms: [1] is axis 1, [1, 2] a softmax over both axes at once; written back as given.
TEST(Softmax, AxisListsMatchNumPy) {
  TORCHFIT_REQUIRE_KERAS_REFERENCE();
  const std::vector<std::pair<KerasAxes, std::vector<int64_t>>> cases = {{KerasAxes({-1}), {3, 4, 5}},
                                                                         {KerasAxes({1, 2}), {3, 4, 5}},
                                                                         {KerasAxes({1}), {6}},
                                                                         {KerasAxes({1, -1}), {2, 3}}};
  for (const auto& [axis, shape] : cases) {
    const nlohmann::json given = axis;
    SCOPED_TRACE("axis " + given.dump());
    auto layer = Softmax(SoftmaxOptions().axis(axis));
    EXPECT_EQ(layer->config()["axis"], given);
    auto [x, y] = torchfit::testing::random_forward(layer.ptr(), shape);
    torchfit::testing::expect_matches_reference(
        y, torchfit::testing::keras_reference(
               {{"op", "softmax"}, {"x", torchfit::testing::tensor_json(x)}, {"axis", given}}));
  }
  Sequential m;  // the same axis twice
  EXPECT_THROW(m->add(Softmax(SoftmaxOptions().axis(KerasAxes({1, -1})).input_shape(Shape{4}))), ConfigError);
}

TEST(Softmax, ConfigAndErrors) {
  EXPECT_EQ(Softmax()->config()["axis"], -1);
  Sequential m;
  EXPECT_THROW(m->add(Softmax(SoftmaxOptions().axis(0).input_shape(Shape{4}))), ConfigError);
  Sequential m2;
  EXPECT_THROW(m2->add(Softmax(SoftmaxOptions().axis(-5).input_shape(Shape{2, 2, 2}))), ConfigError);
}
