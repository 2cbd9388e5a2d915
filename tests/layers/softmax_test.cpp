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

TEST(Softmax, ConfigAndErrors) {
  EXPECT_EQ(Softmax()->config()["axis"], -1);
  Sequential m;
  EXPECT_THROW(m->add(Softmax(SoftmaxOptions().axis(0).input_shape(Shape{4}))), ConfigError);
  Sequential m2;
  EXPECT_THROW(m2->add(Softmax(SoftmaxOptions().axis(-5).input_shape(Shape{2, 2, 2}))), ConfigError);
}
